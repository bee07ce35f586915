/* SPDX-License-Identifier: MIT */
/*
 * bench/pipeline_demo.c: the baton demo. A producer process hands numbered
 * 64-byte buffers to a consumer process (fork; the child opens the ring by
 * name) through an SPSC ring with the blocking baton_spsc_push/pop (spin,
 * then park), and then moves the same messages through a pipe in the same
 * run. It asks:
 *
 *  - does every message arrive, in order, intact? Each message carries its
 *    sequence number and seven words derived from it; the consumer checks
 *    both, and both sides fold every word into an FNV-1a checksum that
 *    the producer compares with the consumer's at the end (over a result
 *    pipe). Any mismatch: a FAILED line and exit status 1.
 *  - how many messages per second through the ring, and through a pipe
 *    (one write(2) per message, the reader read(2)s up to 64 KiB), and
 *    their ratio? One run each: spsc_xproc gives runs and spread.
 *  - what did the slow path do? The ring's counters (baton_ring_stats) of
 *    both handles: indices, parks, wakes, re-arms, poll arms, deaths, the
 *    library's syscalls; and checks wakes <= parks + re-arms + poll arms
 *    on each side (one wake call per arm).
 *
 * Works with either backend: BATON_BACKEND=kmod|memfd, else kmod when
 * /dev/baton exists. `make run` runs it in the VM on the kernel backend.
 */
#define _GNU_SOURCE	/* sched_setaffinity, sched_getcpu */
#include "bench.h"

#include <baton.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MSG_WORDS	8
#define PIPE_CHUNK	65536
#define DEFAULT_COUNT	2000000
#define PROBE_COUNT	5000
#define QUICK_COUNT	200000
#define PIPE_BUDGET_S	8
#define WAIT_NS		(60ll * 1000000000ll)	/* a stall becomes a failure */
#define FNV_OFFSET	0xcbf29ce484222325ull
#define FNV_PRIME	0x100000001b3ull

struct msg {
	uint64_t seq;
	uint64_t payload[MSG_WORDS - 1];
};

/* What the consumer sends back over the result pipe. */
struct verdict {
	uint64_t count;		/* messages received */
	uint64_t fnv;		/* FNV-1a over every word received */
	uint64_t order_errors;	/* seq != expected */
	uint64_t payload_errors;	/* payload not derived from seq */
	uint64_t first_bad;	/* first expected seq that failed, or ~0 */
	uint64_t t_end;		/* CLOCK_MONOTONIC after the last message */
	int rc;			/* 0, or the negative errno that stopped it */
	int cpu;
	struct baton_ring_stats stats;	/* consumer handle, ring pass only */
};

enum transport { T_RING, T_PIPE };

static struct {
	uint64_t n;
	uint32_t slots;
	int cpu[2];
	int backend;
} g = {
	.slots = 1024,
	.cpu = { 0, 1 },
};

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static void msg_make(struct msg *m, uint64_t seq)
{
	int k;

	m->seq = seq;
	for (k = 0; k < MSG_WORDS - 1; k++)
		m->payload[k] = splitmix64(seq * MSG_WORDS + (uint64_t)k);
}

static int payload_ok(const struct msg *m)
{
	int k;

	for (k = 0; k < MSG_WORDS - 1; k++)
		if (m->payload[k] != splitmix64(m->seq * MSG_WORDS + (uint64_t)k))
			return 0;
	return 1;
}

/* FNV-1a over 64-bit words (not bytes): same on both sides, cheaper. */
static uint64_t fnv_msg(uint64_t h, const struct msg *m)
{
	const uint64_t *w = (const uint64_t *)m;
	int k;

	for (k = 0; k < MSG_WORDS; k++)
		h = (h ^ w[k]) * FNV_PRIME;
	return h;
}

/* The consumer's check of one message, in arrival order. */
static void verdict_take(struct verdict *v, const struct msg *m)
{
	int in_order = m->seq == v->count;
	int intact = payload_ok(m);

	v->order_errors += !in_order;
	v->payload_errors += in_order && !intact;
	if ((!in_order || !intact) && v->first_bad == ~0ull)
		v->first_bad = v->count;
	v->fnv = fnv_msg(v->fnv, m);
	v->count++;
}

static void die(const char *what, int err)
{
	printf("pipeline: FAILED: %s: %s\n", what, strerror(err));
	exit(1);
}

/* ---- the ring pass */

static struct baton_ring *ring_create(const char *name)
{
	struct baton_ring_params p = {
		.kind = BATON_RING_SPSC,
		.slot_count = g.slots,
		.slot_size = sizeof(struct msg),
		.mode = 0600,
		.backend = BATON_BACKEND_AUTO,
	};
	struct baton_ring *r;
	int rc = baton_ring_create(name, &p, BATON_ROLE_PRODUCER, &r);

	if (rc < 0)
		die("baton_ring_create", -rc);
	g.backend = r->backend;
	return r;
}

static int ring_consume(const char *name, int ready_fd, struct verdict *v)
{
	struct baton_ring *r;
	struct msg m;
	char c = 1;
	int rc = baton_ring_open(name, BATON_ROLE_CONSUMER, BATON_BACKEND_AUTO,
				 &r);

	if (rc < 0)
		return rc;
	if (bench_write_full(ready_fd, &c, 1))
		return -EPIPE;
	while (v->count < g.n) {
		rc = baton_spsc_pop(r, &m, sizeof(m), WAIT_NS);
		if (rc < 0)
			break;
		verdict_take(v, &m);
	}
	v->t_end = bench_now_ns();
	baton_ring_stats(r, &v->stats);
	baton_ring_close(r);
	return rc < 0 ? rc : 0;
}

static uint64_t ring_produce(struct baton_ring *r)
{
	uint64_t seq, h = FNV_OFFSET;
	struct msg m;
	int rc;

	for (seq = 0; seq < g.n; seq++) {
		msg_make(&m, seq);
		h = fnv_msg(h, &m);
		rc = baton_spsc_push(r, &m, sizeof(m), WAIT_NS);
		if (rc < 0)
			die("baton_spsc_push", -rc);
	}
	return h;
}

/* ---- the pipe pass: one write(2) per message, reads of up to 64 KiB */

static int pipe_consume(int fd, struct verdict *v)
{
	static uint64_t buf[PIPE_CHUNK / 8];
	size_t have = 0, off;
	ssize_t got;

	while (v->count < g.n) {
		got = read(fd, (char *)buf + have, sizeof(buf) - have);
		if (got <= 0)
			return got < 0 ? -errno : -EPIPE;
		have += (size_t)got;
		for (off = 0; off + sizeof(struct msg) <= have;
		     off += sizeof(struct msg))
			verdict_take(v, (const struct msg *)((char *)buf + off));
		memmove(buf, (char *)buf + off, have - off);
		have -= off;
	}
	v->t_end = bench_now_ns();
	return 0;
}

static uint64_t pipe_produce(int fd)
{
	uint64_t seq, h = FNV_OFFSET;
	struct msg m;
	int rc;

	for (seq = 0; seq < g.n; seq++) {
		msg_make(&m, seq);
		h = fnv_msg(h, &m);
		rc = bench_write_full(fd, &m, sizeof(m));
		if (rc < 0)
			die("pipe write", -rc);
	}
	return h;
}

/* ---- one pass: fork the consumer, hand it the messages, collect */

struct pass {
	enum transport t;
	char name[BATON_NAME_MAX];
	int data[2];		/* pipe pass: the data pipe */
	int created[2];		/* parent -> child: the ring exists */
	int ready[2];		/* child -> parent: attached */
	int result[2];		/* child -> parent: struct verdict */
	uint64_t fnv;		/* producer's checksum */
	uint64_t t0;
	struct verdict v;
	struct baton_ring_stats prod;	/* producer handle, after the child */
	pid_t pid;
};

static void child_run(struct pass *p, pid_t parent)
{
	struct verdict v = { .fnv = FNV_OFFSET, .first_bad = ~0ull };
	char c = 1;

	bench_die_with_parent(parent);
	if (g.cpu[1] >= 0)
		bench_pin(g.cpu[1]);
	v.cpu = sched_getcpu();
	if (p->t == T_RING) {
		if (bench_read_full(p->created[0], &c, 1))
			_exit(1);
		v.rc = ring_consume(p->name, p->ready[1], &v);
	} else {
		v.rc = pipe_consume(p->data[0], &v);
	}
	if (bench_write_full(p->result[1], &v, sizeof(v)))
		_exit(1);
	_exit(v.rc || v.order_errors || v.payload_errors ? 2 : 0);
}

static void pass_open(struct pass *p, enum transport t)
{
	memset(p, 0, sizeof(*p));
	p->t = t;
	snprintf(p->name, sizeof(p->name), "pipeline_demo.%d", (int)getpid());
	if (pipe(p->data) || pipe(p->created) || pipe(p->ready) ||
	    pipe(p->result))
		die("pipe", errno);
}

static void pass_close(struct pass *p)
{
	close(p->data[0]);
	close(p->data[1]);
	close(p->created[0]);
	close(p->created[1]);
	close(p->ready[0]);
	close(p->ready[1]);
	close(p->result[0]);
	close(p->result[1]);
}

static void pass_collect(struct pass *p)
{
	int status;

	if (bench_read_full(p->result[0], &p->v, sizeof(p->v)))
		die("consumer died without a verdict", EPIPE);
	if (waitpid(p->pid, &status, 0) < 0)
		die("waitpid", errno);
}

static pid_t pass_fork(struct pass *p)
{
	pid_t parent = getpid();

	fflush(NULL);
	p->pid = fork();
	if (p->pid < 0)
		die("fork", errno);
	if (p->pid == 0)
		child_run(p, parent);
	/* Close the child's ends so its death reads as EOF here. */
	close(p->created[0]);
	close(p->ready[1]);
	close(p->result[1]);
	close(p->data[0]);
	p->created[0] = p->ready[1] = p->result[1] = p->data[0] = -1;
	return p->pid;
}

/*
 * Ring pass. The child is forked first and opens the ring by name after
 * the parent created it, so it inherits no producer mapping (which would
 * keep the producer "alive" on the kmod backend).
 */
static void run_ring(struct pass *p)
{
	struct baton_ring *r;
	char c = 1;

	pass_open(p, T_RING);
	pass_fork(p);
	r = ring_create(p->name);
	if (bench_write_full(p->created[1], &c, 1))
		die("handshake", EPIPE);
	if (bench_read_full(p->ready[0], &c, 1)) {
		pass_collect(p);
		die("consumer could not open the ring", -p->v.rc);
	}
	/* Both ends are attached; the name is no longer needed. */
	baton_ring_unlink(p->name, r->backend);
	p->t0 = bench_now_ns();
	p->fnv = ring_produce(r);
	pass_collect(p);
	baton_ring_stats(r, &p->prod);
	baton_ring_close(r);
	pass_close(p);
}

static void run_pipe(struct pass *p)
{
	pass_open(p, T_PIPE);
	pass_fork(p);
	p->t0 = bench_now_ns();
	p->fnv = pipe_produce(p->data[1]);
	pass_collect(p);
	pass_close(p);
}

/* ---- report */

static double rate(const struct pass *p)
{
	uint64_t ns = p->v.t_end > p->t0 ? p->v.t_end - p->t0 : 1;

	return (double)p->v.count * 1e9 / (double)ns;
}

static void print_rate(const char *label, const struct pass *p,
		       const char *how)
{
	double s = (double)(p->v.t_end - p->t0) / 1e9;

	printf("%s %llu msgs in %.3f s = %.3f M msgs/s%s\n", label,
	       (unsigned long long)p->v.count, s, rate(p) / 1e6, how);
}

static void print_stats(const char *label, const struct baton_ring_stats *s)
{
	printf("%s head=%llu tail=%llu parks_full=%llu parks_empty=%llu wakes_of_producer=%llu wakes_of_consumer=%llu rearms_of_producer=%llu rearms_of_consumer=%llu poll_arms_of_producer=%llu poll_arms_of_consumer=%llu producer_deaths=%llu consumer_deaths=%llu wake_calls=%llu park_calls=%llu\n",
	       label, (unsigned long long)s->head, (unsigned long long)s->tail,
	       (unsigned long long)s->parks_full,
	       (unsigned long long)s->parks_empty,
	       (unsigned long long)s->wakes_of_producer,
	       (unsigned long long)s->wakes_of_consumer,
	       (unsigned long long)s->rearms_of_producer,
	       (unsigned long long)s->rearms_of_consumer,
	       (unsigned long long)s->poll_arms_of_producer,
	       (unsigned long long)s->poll_arms_of_consumer,
	       (unsigned long long)s->producer_deaths,
	       (unsigned long long)s->consumer_deaths,
	       (unsigned long long)s->wake_calls,
	       (unsigned long long)s->park_calls);
}

/* Every reason a pass can fail, in one place; 0 if it passed. */
static int pass_check(const char *label, const struct pass *p)
{
	const struct verdict *v = &p->v;

	if (v->rc)
		printf("pipeline: FAILED (%s): consumer stopped: %s\n", label,
		       strerror(-v->rc));
	else if (v->count != g.n)
		printf("pipeline: FAILED (%s): %llu of %llu messages arrived\n",
		       label, (unsigned long long)v->count,
		       (unsigned long long)g.n);
	else if (v->order_errors || v->payload_errors)
		printf("pipeline: FAILED (%s): %llu out of order, %llu corrupt, first at %llu\n",
		       label, (unsigned long long)v->order_errors,
		       (unsigned long long)v->payload_errors,
		       (unsigned long long)v->first_bad);
	else if (v->fnv != p->fnv)
		printf("pipeline: FAILED (%s): checksum producer 0x%016llx consumer 0x%016llx\n",
		       label, (unsigned long long)p->fnv,
		       (unsigned long long)v->fnv);
	else
		return 0;
	return 1;
}

/*
 * One wake call per arm (issue 13): each side's wakes are at most its
 * parks, re-arms and poll arms, since the kernel takes the flag down in
 * the first wake and only an arm raises it again.
 */
static int wake_bound_side(const char *side, uint64_t wakes, uint64_t parks,
			   uint64_t rearms, uint64_t arms)
{
	int ok = wakes <= parks + rearms + arms;

	printf("wakes of the %s: %llu %s parks %llu + re-arms %llu + poll arms %llu\n",
	       side, (unsigned long long)wakes, ok ? "<=" : "> (FAILED)",
	       (unsigned long long)parks, (unsigned long long)rearms,
	       (unsigned long long)arms);
	return !ok;
}

static int wake_bound_check(const struct baton_ring_stats *s)
{
	return wake_bound_side("consumer", s->wakes_of_consumer, s->parks_empty,
			       s->rearms_of_consumer,
			       s->poll_arms_of_consumer) |
	       wake_bound_side("producer", s->wakes_of_producer, s->parks_full,
			       s->rearms_of_producer,
			       s->poll_arms_of_producer);
}

static int ring_indices_check(const struct pass *p)
{
	if (p->prod.head == g.n && p->prod.tail == g.n)
		return 0;
	printf("pipeline: FAILED (ring): producer sees head=%llu tail=%llu, expected %llu\n",
	       (unsigned long long)p->prod.head,
	       (unsigned long long)p->prod.tail, (unsigned long long)g.n);
	return 1;
}

/*
 * The default count: DEFAULT_COUNT, or what a pipe moves in PIPE_BUDGET_S
 * as a short pipe pass measures it, whichever is smaller. Under TCG a
 * pipe is ~100x slower than natively; this keeps the demo ~5-20 s there
 * without the VM runner passing -n. Returns a note for the header line.
 */
static const char *size_default(void)
{
	static char note[96];
	struct pass probe;
	uint64_t fit;

	g.n = PROBE_COUNT;
	run_pipe(&probe);
	if (pass_check("pipe probe", &probe))
		exit(1);
	fit = (uint64_t)(rate(&probe) * PIPE_BUDGET_S);
	g.n = fit < DEFAULT_COUNT ? fit : DEFAULT_COUNT;
	if (g.n < PROBE_COUNT)
		g.n = PROBE_COUNT;
	if (g.n == DEFAULT_COUNT)
		return "default";
	snprintf(note, sizeof(note),
		 "default capped: a pipe probe moved %.0f msgs/s, %d s budget",
		 rate(&probe), PIPE_BUDGET_S);
	return note;
}

static void usage(int code)
{
	fprintf(code ? stderr : stdout,
		"usage: pipeline_demo [-n COUNT] [-q] [-s SLOTS] [-C CPU0,CPU1]\n"
		"  -n COUNT  messages per pass (accepts 2e6, 500k); default 2000000, or\n"
		"            fewer if a short pipe probe says the pipe pass would\n"
		"            take more than %d s (so it stays short under TCG)\n"
		"  -q        quick: 200000 messages\n"
		"  -s SLOTS  ring slots, a power of two (default 1024)\n"
		"  -C A,B    CPUs for producer and consumer (default 0,1)\n"
		"backend: BATON_BACKEND=kmod|memfd, else kmod if /dev/baton exists\n",
		PIPE_BUDGET_S);
	exit(code);
}

static void parse_args(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "n:qs:C:h")) != -1) {
		switch (c) {
		case 'n':
			g.n = bench_parse_count(optarg);
			if (!g.n)
				usage(2);
			break;
		case 'q':
			g.n = QUICK_COUNT;
			break;
		case 's':
			g.slots = (uint32_t)bench_parse_count(optarg);
			if (g.slots < 2 || (g.slots & (g.slots - 1)))
				usage(2);
			break;
		case 'C':
			if (bench_parse_cpus(optarg, g.cpu))
				usage(2);
			break;
		case 'h':
			usage(0);
			break;
		default:
			usage(2);
		}
	}
}

int main(int argc, char **argv)
{
	struct pass ring, pipe_pass;
	const char *count_note = "-n";
	int bad, rc;

	parse_args(argc, argv);
	bench_check_cpus("pipeline_demo", g.cpu);
	if (g.cpu[0] >= 0 && (rc = bench_pin(g.cpu[0])))
		die("sched_setaffinity", -rc);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!g.n)
		count_note = size_default();

	run_ring(&ring);
	printf("pipeline: backend %s; producer pid %d on CPU %d -> consumer on CPU %d; %llu messages (%s) x %zu B; ring %u slots, blocking push/pop (spin, then park)\n",
	       baton_backend_name(g.backend), (int)getpid(), sched_getcpu(),
	       ring.v.cpu, (unsigned long long)g.n, count_note,
	       sizeof(struct msg), g.slots);
	print_rate("ring:", &ring, "");
	run_pipe(&pipe_pass);
	print_rate("pipe:", &pipe_pass,
		   "  (one write(2) per message; reader read(2)s up to 64 KiB)");
	printf("ratio ring/pipe: %.1fx (one run each; spsc_xproc reports runs and spread)\n",
	       rate(&ring) / rate(&pipe_pass));
	print_stats("ring counters, producer handle (consumer gone):", &ring.prod);
	print_stats("ring counters, consumer handle (at its end):    ",
		    &ring.v.stats);

	bad = pass_check("ring", &ring) | ring_indices_check(&ring) |
	      pass_check("pipe", &pipe_pass) | wake_bound_check(&ring.prod);
	if (bad)
		return 1;
	printf("pipeline: verified %llu messages in order, checksum OK (ring and pipe, fnv1a 0x%016llx)\n",
	       (unsigned long long)g.n, (unsigned long long)ring.fnv);
	return 0;
}

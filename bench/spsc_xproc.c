/* SPDX-License-Identifier: MIT */
/*
 * bench/spsc_xproc.c: the cross-process SPSC benchmark. Two processes
 * (fork; the child opens the rings by name), the parent pinned to one CPU
 * and the child to another. Every figure is R runs (fresh process pair per
 * run, calibrated so a run lasts >= 0.25 s natively) reported as median and
 * min..max. One question per measurement:
 *
 *  cache-line RT   What does one round trip of a counter between the two
 *                  CPUs cost with nothing else in the way (each side owns
 *                  one 64-byte line of a MAP_SHARED page; release store,
 *                  acquire load)? The floor for any cross-core handoff.
 *                  Measured before and after everything else (the vCPUs
 *                  here move between near and far placement) and once per
 *                  round next to the ring round trips, for paired ratios.
 *  2-line RT       The same when each hop writes a data line and then the
 *                  flag line (what a ring does: slot, then tail), the
 *                  reader reading both: the floor for a handoff that
 *                  moves a payload line and an index line.
 *  pipe RT         What does a 1-byte write/read ping-pong over two pipes
 *                  cost per round trip?
 *  ring RT         What does a round trip through two baton SPSC rings
 *                  cost (baton_spsc_try_push/try_pop, busy polling)?
 *  pipe stream     How many messages/s does a pipe move when each message
 *                  is its own write(2) and the reader read(2)s up to 64 KiB?
 *  ring stream     How many messages/s does the ring fast path move with
 *                  reserve/submit and peek/release of up to `batch` slots,
 *                  busy polling, no parking?
 *  ring stream blk The same at batch 1 with the blocking forms (spin, then
 *                  park): what parking costs in syscalls.
 *  syscalls/msg    How many syscalls did the two ring handles make per
 *                  message? The library's own counters (wake_calls +
 *                  park_calls of both handles); pipes count their own
 *                  read/write calls. --strace-check verifies this
 *                  independently: strace -f -c over a run of N and of 2N
 *                  messages, the difference divided by the extra messages,
 *                  so setup syscalls cancel out.
 *
 * Ratios are computed per round from figures measured back to back in that
 * round, then summarised. Each side reads its own runqueue wait
 * (/proc/self/schedstat run_delay) around the timed window: a run that
 * lost more than 5% of its window to other work on these CPUs is redone
 * (-x times) and, if still disturbed, kept and counted; ratios use the
 * undisturbed rounds. Every message carries its sequence number and is
 * checked by the receiver; a mismatch makes the program exit non-zero. No
 * timing is ever asserted: targets are printed next to what was measured.
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

#define RUNS_MAX	99
#define MSG_MAX		64
#define PIPE_CHUNK	65536
#define WATCHDOG_S	120
#define GOLDEN		0x9e3779b97f4a7c15ull

/*
 * Redo a run whose two processes together sat runnable but not running for
 * more than this fraction of its window: a busy-polling figure is off by
 * about that fraction. A lone pinned spinner on this shared 2-CPU host
 * loses 0.2-4% of a second to other tasks, so 1% would reject most runs.
 */
#define STOLEN_MAX	0.05

enum kind {
	K_CL_RT, K_CL2_RT, K_PIPE_RT, K_RING_RT, K_PIPE_STREAM, K_RING_STREAM
};

/* One measurement: what to move, how. */
struct spec {
	const char *name;
	enum kind kind;
	uint32_t size;		/* message and slot bytes */
	uint32_t batch;		/* ring streaming: slots per reserve/peek */
	int block;		/* ring streaming: blocking forms (may park) */
};

/* One run of one measurement. */
struct result {
	uint64_t t0;		/* parent's stamp at the window start */
	uint64_t ns;		/* the timed window */
	uint64_t msgs;		/* messages (or round trips) in the window */
	uint64_t total;		/* the same with warm-up: what syscalls cover */
	uint64_t syscalls;	/* pipes: our read/write calls; rings: library */
	uint64_t errors;	/* messages that failed verification */
	uint64_t stolen;	/* ns both processes sat runnable, not running */
};

/* Shared between parent and child; each word the two race on owns a line. */
struct ctl {
	_Alignas(64) uint64_t ping;	/* written by the parent only */
	_Alignas(64) uint64_t pong;	/* written by the child only */
	_Alignas(64) uint64_t ping_data;	/* parent: the 2-line RT's data */
	_Alignas(64) uint64_t pong_data;	/* child: the 2-line RT's data */
	_Alignas(64) uint32_t warm_done;	/* child: warm-up consumed */
	int child_cpu;
	uint64_t t_end;			/* child: last message consumed */
	uint64_t syscalls;		/* child's share of result.syscalls */
	uint64_t errors;		/* child's share of result.errors */
	uint64_t stolen;		/* child's share of result.stolen */
};

/* The per-run process pair. */
struct pair {
	const struct spec *s;
	uint64_t n, warm;
	int sync[2];		/* parent -> child: the rings exist */
	int ready[2];		/* child -> parent: opened and prefaulted */
	int p2c[2], c2p[2];	/* pipe measurements */
	char name_a[BATON_NAME_MAX];	/* parent produces, child consumes */
	char name_b[BATON_NAME_MAX];	/* child produces, parent consumes */
	struct baton_ring *a, *b;	/* this process's handles */
};

static struct {
	int cpu[2];
	uint32_t slots;
	int runs;
	int quick;
	int retries;
	uint64_t target_ns;
	const char *csv;
	struct ctl *ctl;
	unsigned int seq;
	int backend;
	int child_cpu;
	uint64_t errors;
} g = {
	.cpu = { 0, 1 },
	.slots = 4096,
	.runs = 7,
	.retries = 3,
	.target_ns = 250000000ull,
	.child_cpu = -1,
};

static void die(const char *what, int err)
{
	fprintf(stderr, "spsc_xproc: %s: %s\n", what, strerror(err));
	exit(1);
}

static int is_rt(const struct spec *s)
{
	return s->kind == K_CL_RT || s->kind == K_CL2_RT ||
	       s->kind == K_PIPE_RT ||
	       s->kind == K_RING_RT;
}

static int uses_rings(const struct spec *s)
{
	return s->kind == K_RING_RT || s->kind == K_RING_STREAM;
}

/* ---- messages: word 0 is the sequence number, the rest derive from it */

static void msg_fill(void *p, uint32_t size, uint64_t seq)
{
	uint64_t *w = p;
	uint32_t i;

	w[0] = seq;
	for (i = 1; i < size / 8; i++)
		w[i] = seq ^ (i * GOLDEN);
}

static int msg_ok(const void *p, uint32_t size, uint64_t seq)
{
	const uint64_t *w = p;
	uint32_t last = size / 8 - 1;

	return w[0] == seq && (!last || w[last] == (seq ^ (last * GOLDEN)));
}

/* ---- rings */

static struct baton_ring *ring_make(const char *name, uint32_t size, int role)
{
	struct baton_ring_params p = {
		.kind = BATON_RING_SPSC,
		.slot_count = g.slots,
		.slot_size = size,
		.mode = 0600,
		.backend = BATON_BACKEND_AUTO,
	};
	struct baton_ring *r;
	int rc = baton_ring_create(name, &p, role, &r);

	if (rc < 0)
		die("baton_ring_create", -rc);
	g.backend = r->backend;
	return r;
}

static struct baton_ring *ring_join(const char *name, int role)
{
	struct baton_ring *r;
	int rc = baton_ring_open(name, role, BATON_BACKEND_AUTO, &r);

	if (rc < 0)
		die("baton_ring_open", -rc);
	return r;
}

static void ring_prefault(struct baton_ring *r)
{
	if (r)
		bench_prefault(r->slots, (size_t)r->slot_count * r->slot_size,
			       r->role == BATON_ROLE_PRODUCER);
}

/* Syscalls this handle made, by the library's own count. */
static uint64_t ring_syscalls(const struct baton_ring *r)
{
	struct baton_ring_stats st;

	if (!r || baton_ring_stats(r, &st) < 0)
		return 0;
	return st.wake_calls + st.park_calls;
}

static void push_spin(struct baton_ring *r, const void *m, uint32_t size)
{
	unsigned int spins = 0;
	int rc;

	while ((rc = baton_spsc_try_push(r, m, size)) == -EAGAIN)
		bench_relax(&spins);
	if (rc < 0)
		die("baton_spsc_try_push", -rc);
}

static void pop_spin(struct baton_ring *r, void *m, uint32_t size)
{
	unsigned int spins = 0;
	int rc;

	while ((rc = baton_spsc_try_pop(r, m, size)) == -EAGAIN)
		bench_relax(&spins);
	if (rc < 0)
		die("baton_spsc_try_pop", -rc);
}

/* ---- the timed window: each side reads its runqueue wait (schedstat
 * run_delay) just outside it, so a run that shared its CPU with other
 * work says how much of the window it lost.
 */

static double stolen_frac(const struct result *r)
{
	return (double)r->stolen / (double)(r->ns ? r->ns : 1);
}

static void child_window_end(uint64_t w0)
{
	g.ctl->stolen = bench_run_delay_ns() - w0;
}

/* ---- cache-line round trip: one line per hop, or (two) a data line
 * written before the flag line, as a ring's slot is written before its tail
 */

static uint64_t cl_parent_rounds(uint64_t from, uint64_t to, int two)
{
	struct ctl *c = g.ctl;
	unsigned int spins = 0;
	uint64_t i, bad = 0;

	for (i = from; i <= to; i++) {
		if (two)
			__atomic_store_n(&c->ping_data, i, __ATOMIC_RELAXED);
		__atomic_store_n(&c->ping, i, __ATOMIC_RELEASE);
		while (__atomic_load_n(&c->pong, __ATOMIC_ACQUIRE) != i)
			bench_relax(&spins);
		if (two)
			bad += __atomic_load_n(&c->pong_data,
					       __ATOMIC_RELAXED) != i;
	}
	return bad;
}

static void cl_parent(struct pair *p, struct result *r)
{
	int two = p->s->kind == K_CL2_RT;
	uint64_t w0;

	r->errors += cl_parent_rounds(1, p->warm, two);
	w0 = bench_run_delay_ns();
	r->t0 = bench_now_ns();
	r->errors += cl_parent_rounds(p->warm + 1, p->warm + p->n, two);
	r->ns = bench_now_ns() - r->t0;
	r->stolen = bench_run_delay_ns() - w0;
}

static uint64_t cl_child_rounds(uint64_t from, uint64_t to, int two)
{
	struct ctl *c = g.ctl;
	unsigned int spins = 0;
	uint64_t i, bad = 0;

	for (i = from; i <= to; i++) {
		while (__atomic_load_n(&c->ping, __ATOMIC_ACQUIRE) != i)
			bench_relax(&spins);
		if (two) {
			bad += __atomic_load_n(&c->ping_data,
					       __ATOMIC_RELAXED) != i;
			__atomic_store_n(&c->pong_data, i, __ATOMIC_RELAXED);
		}
		__atomic_store_n(&c->pong, i, __ATOMIC_RELEASE);
	}
	return bad;
}

static void cl_child(struct pair *p)
{
	int two = p->s->kind == K_CL2_RT;
	uint64_t w0, bad;

	bad = cl_child_rounds(1, p->warm, two);
	w0 = bench_run_delay_ns();
	bad += cl_child_rounds(p->warm + 1, p->warm + p->n, two);
	child_window_end(w0);
	g.ctl->errors = bad;
}

/* ---- pipe round trip: one byte each way */

static void pipe_rt_rounds(int wfd, int rfd, uint64_t count, int first)
{
	uint64_t i;
	char c = 'x';

	for (i = 0; i < count; i++) {
		if (first && bench_write_full(wfd, &c, 1))
			die("pipe write", EPIPE);
		if (bench_read_full(rfd, &c, 1))
			die("pipe read", EPIPE);
		if (!first && bench_write_full(wfd, &c, 1))
			die("pipe write", EPIPE);
	}
}

static void pipe_rt_parent(struct pair *p, struct result *r)
{
	uint64_t w0;

	pipe_rt_rounds(p->p2c[1], p->c2p[0], p->warm, 1);
	w0 = bench_run_delay_ns();
	r->t0 = bench_now_ns();
	pipe_rt_rounds(p->p2c[1], p->c2p[0], p->n, 1);
	r->ns = bench_now_ns() - r->t0;
	r->stolen = bench_run_delay_ns() - w0;
	r->syscalls = 2 * (p->warm + p->n);
}

static void pipe_rt_child(struct pair *p)
{
	uint64_t w0;

	pipe_rt_rounds(p->c2p[1], p->p2c[0], p->warm, 0);
	w0 = bench_run_delay_ns();
	pipe_rt_rounds(p->c2p[1], p->p2c[0], p->n, 0);
	child_window_end(w0);
	g.ctl->syscalls = 2 * (p->warm + p->n);
}

/* ---- ring round trip: ring a carries the ping, ring b the pong */

static uint64_t ring_rt_parent_rounds(struct pair *p, uint64_t from,
				      uint64_t to)
{
	uint64_t out[MSG_MAX / 8], in[MSG_MAX / 8], i, bad = 0;
	uint32_t size = p->s->size;

	for (i = from; i <= to; i++) {
		msg_fill(out, size, i);
		push_spin(p->a, out, size);
		pop_spin(p->b, in, size);
		bad += !msg_ok(in, size, i);
	}
	return bad;
}

static void ring_rt_parent(struct pair *p, struct result *r)
{
	uint64_t w0;

	r->errors += ring_rt_parent_rounds(p, 1, p->warm);
	w0 = bench_run_delay_ns();
	r->t0 = bench_now_ns();
	r->errors += ring_rt_parent_rounds(p, p->warm + 1, p->warm + p->n);
	r->ns = bench_now_ns() - r->t0;
	r->stolen = bench_run_delay_ns() - w0;
}

static uint64_t ring_rt_child_rounds(struct pair *p, uint64_t from,
				     uint64_t to)
{
	uint64_t m[MSG_MAX / 8], i, bad = 0;
	uint32_t size = p->s->size;

	for (i = from; i <= to; i++) {
		pop_spin(p->a, m, size);
		bad += !msg_ok(m, size, i);
		push_spin(p->b, m, size);
	}
	return bad;
}

static void ring_rt_child(struct pair *p)
{
	uint64_t bad;
	uint64_t w0;

	bad = ring_rt_child_rounds(p, 1, p->warm);
	w0 = bench_run_delay_ns();
	bad += ring_rt_child_rounds(p, p->warm + 1, p->warm + p->n);
	child_window_end(w0);
	g.ctl->errors = bad;
}

/* ---- streaming: the parent sends warm-up, waits until it is consumed,
 * then times n messages until the child has consumed the last one.
 */

static void wait_warm_done(void)
{
	unsigned int spins = 0;

	while (!__atomic_load_n(&g.ctl->warm_done, __ATOMIC_ACQUIRE))
		bench_relax(&spins);
}

static void mark_warm_done(void)
{
	__atomic_store_n(&g.ctl->warm_done, 1, __ATOMIC_RELEASE);
}

static void pipe_send(int fd, uint32_t size, uint64_t seq, uint64_t count)
{
	uint64_t m[MSG_MAX / 8], end = seq + count;

	for (; seq < end; seq++) {
		msg_fill(m, size, seq);
		/* <= PIPE_BUF bytes: one atomic write(2) per message */
		if (bench_write_full(fd, m, size))
			die("pipe write", EPIPE);
	}
}

/* Read messages [seq, seq + count) in chunks of up to 64 KiB. */
static uint64_t pipe_recv(int fd, uint32_t size, uint64_t seq, uint64_t count,
			  uint64_t *bad)
{
	static uint64_t buf[PIPE_CHUNK / 8];
	uint64_t end = seq + count, reads = 0;
	size_t have = 0, off;

	while (seq < end) {
		size_t want = (size_t)(end - seq) * size - have;
		ssize_t got;

		if (want > sizeof(buf) - have)
			want = sizeof(buf) - have;
		got = read(fd, (char *)buf + have, want);
		reads++;
		if (got <= 0)
			die("pipe read", got < 0 ? errno : EPIPE);
		have += (size_t)got;
		for (off = 0; off + size <= have; off += size, seq++)
			*bad += !msg_ok((char *)buf + off, size, seq);
		memmove(buf, (char *)buf + off, have - off);
		have -= off;
	}
	return reads;
}

static void pipe_stream_parent(struct pair *p, struct result *r)
{
	uint64_t w0;

	pipe_send(p->p2c[1], p->s->size, 0, p->warm);
	wait_warm_done();
	w0 = bench_run_delay_ns();
	r->t0 = bench_now_ns();	/* the window ends at the child */
	pipe_send(p->p2c[1], p->s->size, p->warm, p->n);
	r->stolen = bench_run_delay_ns() - w0;
	r->syscalls = p->warm + p->n;
}

static void pipe_stream_child(struct pair *p)
{
	uint64_t bad = 0, reads;
	uint64_t w0;

	reads = pipe_recv(p->p2c[0], p->s->size, 0, p->warm, &bad);
	w0 = bench_run_delay_ns();
	mark_warm_done();
	reads += pipe_recv(p->p2c[0], p->s->size, p->warm, p->n, &bad);
	g.ctl->t_end = bench_now_ns();
	child_window_end(w0);
	g.ctl->syscalls = reads;
	g.ctl->errors = bad;
}

/* Reserve up to want slots: busy polling, or the blocking form. */
static uint32_t prod_reserve(struct baton_ring *r, uint32_t want, int block,
			     uint64_t *idx)
{
	unsigned int spins = 0;
	uint32_t got;
	int rc;

	if (block) {
		rc = baton_spsc_prod_reserve_wait(r, want, idx, -1);
		if (rc <= 0)
			die("baton_spsc_prod_reserve_wait", rc ? -rc : EPROTO);
		return (uint32_t)rc;
	}
	while (!(got = baton_spsc_prod_reserve(r, want, idx)))
		bench_relax(&spins);
	return got;
}

static uint32_t cons_peek(struct baton_ring *r, uint32_t want, int block,
			  uint64_t *idx)
{
	unsigned int spins = 0;
	uint32_t got;
	int rc;

	if (block) {
		rc = baton_spsc_cons_peek_wait(r, want, idx, -1);
		if (rc <= 0)
			die("baton_spsc_cons_peek_wait", rc ? -rc : EPROTO);
		return (uint32_t)rc;
	}
	while (!(got = baton_spsc_cons_peek(r, want, idx)))
		bench_relax(&spins);
	return got;
}

static void ring_send(struct pair *p, uint64_t seq, uint64_t count)
{
	const struct spec *s = p->s;
	uint64_t end = seq + count, idx;
	uint32_t got, j;

	while (seq < end) {
		uint32_t want = end - seq < s->batch ? (uint32_t)(end - seq) :
						       s->batch;

		got = prod_reserve(p->a, want, s->block, &idx);
		for (j = 0; j < got; j++)
			msg_fill(baton_ring_slot(p->a, idx + j), s->size,
				 seq + j);
		baton_spsc_prod_submit(p->a, got);
		seq += got;
	}
}

static uint64_t ring_recv(struct pair *p, uint64_t seq, uint64_t count)
{
	const struct spec *s = p->s;
	uint64_t end = seq + count, idx, m[MSG_MAX / 8], bad = 0;
	uint32_t got, j;

	while (seq < end) {
		uint32_t want = end - seq < s->batch ? (uint32_t)(end - seq) :
						       s->batch;

		got = cons_peek(p->a, want, s->block, &idx);
		for (j = 0; j < got; j++) {
			memcpy(m, baton_ring_slot(p->a, idx + j), s->size);
			bad += !msg_ok(m, s->size, seq + j);
		}
		baton_spsc_cons_release(p->a, got);
		seq += got;
	}
	return bad;
}

static void ring_stream_parent(struct pair *p, struct result *r)
{
	uint64_t w0;

	ring_send(p, 0, p->warm);
	wait_warm_done();
	w0 = bench_run_delay_ns();
	r->t0 = bench_now_ns();	/* the window ends at the child */
	ring_send(p, p->warm, p->n);
	r->stolen = bench_run_delay_ns() - w0;
}

static void ring_stream_child(struct pair *p)
{
	uint64_t bad;
	uint64_t w0;

	bad = ring_recv(p, 0, p->warm);
	w0 = bench_run_delay_ns();
	mark_warm_done();
	bad += ring_recv(p, p->warm, p->n);
	g.ctl->t_end = bench_now_ns();
	child_window_end(w0);
	g.ctl->errors = bad;
}

/* ---- one run: fork a fresh pair, set up, run both roles, collect */

static void pair_init(struct pair *p, const struct spec *s, uint64_t n)
{
	memset(p, 0, sizeof(*p));
	p->s = s;
	p->n = n;
	p->warm = n / 16 + (is_rt(s) ? 100 : 1000);
	if (pipe(p->sync) || pipe(p->ready) || pipe(p->p2c) || pipe(p->c2p))
		die("pipe", errno);
	g.seq++;
	snprintf(p->name_a, sizeof(p->name_a), "spsc_xproc.%d.%u.a",
		 (int)getpid(), g.seq);
	snprintf(p->name_b, sizeof(p->name_b), "spsc_xproc.%d.%u.b",
		 (int)getpid(), g.seq);
}

static void pair_fini(struct pair *p)
{
	int i;
	int *fds[] = { p->sync, p->ready, p->p2c, p->c2p };

	if (p->a)
		baton_ring_close(p->a);
	if (p->b)
		baton_ring_close(p->b);
	for (i = 0; i < 4; i++) {
		close(fds[i][0]);
		close(fds[i][1]);
	}
}

/*
 * After fork each side closes the pipe ends it does not use, so a peer's
 * death reads as EOF instead of a hang.
 */
static void pair_keep_ends(struct pair *p, int parent)
{
	int *mine[] = { p->sync, p->ready, p->p2c, p->c2p };
	int w[] = { 1, 0, 1, 0 };	/* which end the parent keeps */
	int i, drop;

	for (i = 0; i < 4; i++) {
		drop = parent ? !w[i] : w[i];
		close(mine[i][drop]);
		mine[i][drop] = -1;
	}
}

static void handshake_send(int fd)
{
	char c = 1;

	if (bench_write_full(fd, &c, 1))
		die("handshake write", EPIPE);
}

static void handshake_wait(int fd)
{
	char c;

	if (bench_read_full(fd, &c, 1))
		die("handshake read (peer died during setup)", EPIPE);
}

static void parent_setup(struct pair *p)
{
	uint32_t size = p->s->size;

	if (uses_rings(p->s)) {
		p->a = ring_make(p->name_a, size, BATON_ROLE_PRODUCER);
		if (p->s->kind == K_RING_RT)
			p->b = ring_make(p->name_b, size, BATON_ROLE_CONSUMER);
	}
	handshake_send(p->sync[1]);
	ring_prefault(p->a);
	ring_prefault(p->b);
	handshake_wait(p->ready[0]);
	/* Both sides hold the rings now; the names are no longer needed. */
	if (p->a)
		baton_ring_unlink(p->name_a, p->a->backend);
	if (p->b)
		baton_ring_unlink(p->name_b, p->b->backend);
}

static void child_setup(struct pair *p)
{
	handshake_wait(p->sync[0]);
	if (uses_rings(p->s)) {
		p->a = ring_join(p->name_a, BATON_ROLE_CONSUMER);
		if (p->s->kind == K_RING_RT)
			p->b = ring_join(p->name_b, BATON_ROLE_PRODUCER);
	}
	ring_prefault(p->a);
	ring_prefault(p->b);
	handshake_send(p->ready[1]);
}

static void child_main(struct pair *p, pid_t parent)
{
	bench_die_with_parent(parent);
	pair_keep_ends(p, 0);
	if (g.cpu[1] >= 0)
		bench_pin(g.cpu[1]);
	g.ctl->child_cpu = sched_getcpu();
	child_setup(p);
	switch (p->s->kind) {
	case K_CL_RT:
	case K_CL2_RT:
		cl_child(p);
		break;
	case K_PIPE_RT:
		pipe_rt_child(p);
		break;
	case K_RING_RT:
		ring_rt_child(p);
		break;
	case K_PIPE_STREAM:
		pipe_stream_child(p);
		break;
	case K_RING_STREAM:
		ring_stream_child(p);
		break;
	}
	g.ctl->syscalls += ring_syscalls(p->a) + ring_syscalls(p->b);
	_exit(0);
}

static void parent_role(struct pair *p, struct result *r)
{
	switch (p->s->kind) {
	case K_CL_RT:
	case K_CL2_RT:
		cl_parent(p, r);
		break;
	case K_PIPE_RT:
		pipe_rt_parent(p, r);
		break;
	case K_RING_RT:
		ring_rt_parent(p, r);
		break;
	case K_PIPE_STREAM:
		pipe_stream_parent(p, r);
		break;
	case K_RING_STREAM:
		ring_stream_parent(p, r);
		break;
	}
}

static void wait_child(pid_t pid, const char *what)
{
	int status;

	if (waitpid(pid, &status, 0) < 0)
		die("waitpid", errno);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "spsc_xproc: %s: child failed (status 0x%x)\n",
			what, status);
		exit(1);
	}
}

static void run_pair(const struct spec *s, uint64_t n, struct result *r)
{
	struct pair p;
	pid_t pid, parent = getpid();

	pair_init(&p, s, n);
	memset(g.ctl, 0, sizeof(*g.ctl));
	memset(r, 0, sizeof(*r));
	fflush(NULL);
	bench_watchdog(WATCHDOG_S, s->name);
	pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (pid == 0)
		child_main(&p, parent);
	pair_keep_ends(&p, 1);
	parent_setup(&p);
	parent_role(&p, r);
	wait_child(pid, s->name);
	alarm(0);
	if (!is_rt(s))	/* streaming: the window ends at the child */
		r->ns = g.ctl->t_end > r->t0 ? g.ctl->t_end - r->t0 : 1;
	r->ns = r->ns ? r->ns : 1;
	r->msgs = n;
	r->total = p.warm + n;
	r->syscalls += g.ctl->syscalls + ring_syscalls(p.a) +
		       ring_syscalls(p.b);
	r->errors += g.ctl->errors;
	r->stolen += g.ctl->stolen;
	g.errors += r->errors;
	g.child_cpu = g.ctl->child_cpu;
	pair_fini(&p);
}

/* ---- series: calibrate once, then R runs */

struct series {
	struct spec s;
	uint64_t n;
	int runs;
	double val[RUNS_MAX];	/* ns per round trip, or messages per s */
	double sys[RUNS_MAX];	/* syscalls per message */
	double stolen[RUNS_MAX];	/* runqueue wait / window */
	int retried;		/* runs redone because too much was stolen */
};

static double value_of(const struct spec *s, const struct result *r)
{
	if (is_rt(s))
		return (double)r->ns / (double)r->msgs;
	return (double)r->msgs * 1e9 / (double)r->ns;
}

/* Grow n until a run takes a quarter of the target, then scale to it. */
static uint64_t calibrate(const struct spec *s)
{
	uint64_t n = is_rt(s) ? 1000 : 20000;
	struct result r;
	double scale;
	int redo = 0;

	for (;;) {
		run_pair(s, n, &r);
		if (stolen_frac(&r) > STOLEN_MAX && redo++ < g.retries)
			continue;	/* its rate says little */
		redo = 0;
		if (r.ns >= g.target_ns / 4 || n >= (1ull << 34))
			break;
		scale = (double)g.target_ns / 2 / (double)r.ns;
		n = (uint64_t)((double)n * (scale > 16 ? 16 : scale)) + 1;
	}
	n = (uint64_t)((double)n * (double)g.target_ns / (double)r.ns);
	return n < 100 ? 100 : n;
}

/*
 * One run. A run in which the two processes spent more than STOLEN_MAX of
 * the window runnable but not running (other work held their CPUs)
 * measured the scheduler, not the handoff: redo it up to g.retries times
 * (counted and printed); if every attempt was disturbed, keep the last.
 * The wait is the kernel's own count (/proc/self/schedstat run_delay).
 */
static void series_run(struct series *se)
{
	struct result r;
	int attempt;

	for (attempt = 0;; attempt++) {
		run_pair(&se->s, se->n, &r);
		if (stolen_frac(&r) <= STOLEN_MAX || attempt == g.retries)
			break;
		se->retried++;
	}
	se->val[se->runs] = value_of(&se->s, &r);
	se->sys[se->runs] = (double)r.syscalls / (double)r.total;
	se->stolen[se->runs] = stolen_frac(&r);
	se->runs++;
}

/* ---- report */

static const char *unit_of(const struct spec *s)
{
	return is_rt(s) ? "ns/RT" : "Mmsg/s";
}

static double shown(const struct spec *s, double v)
{
	return is_rt(s) ? v : v / 1e6;
}

static void fmt_count(char *buf, size_t len, uint64_t n)
{
	if (n >= 10000000)
		snprintf(buf, len, "%.0fM", (double)n / 1e6);
	else if (n >= 10000)
		snprintf(buf, len, "%.0fk", (double)n / 1e3);
	else
		snprintf(buf, len, "%llu", (unsigned long long)n);
}

static void csv_values(FILE *f, const double *v, int n, double mult)
{
	int i;

	for (i = 0; i < n; i++)
		fprintf(f, "%s%.6g", i ? ";" : "", v[i] * mult);
	fputc('\n', f);
}

/* Kept runs that lost more than STOLEN_MAX of their window. */
static int disturbed_runs(const struct series *se)
{
	int i, k = 0;

	for (i = 0; i < se->runs; i++)
		k += se->stolen[i] > STOLEN_MAX;
	return k;
}

static void print_series(const struct series *se, FILE *csv)
{
	struct bench_summary v, sy, st;
	char n[16];
	double m = is_rt(&se->s) ? 1 : 1e-6;

	bench_summarize(se->val, se->runs, &v);
	bench_summarize(se->sys, se->runs, &sy);
	bench_summarize(se->stolen, se->runs, &st);
	fmt_count(n, sizeof(n), se->n);
	printf("%-34s %10.2f  %10.2f .. %-10.2f %-7s %6s  %8.4f  %5.2f%% %6.2f%% %3d %3d\n",
	       se->s.name, shown(&se->s, v.median), shown(&se->s, v.min),
	       shown(&se->s, v.max), unit_of(&se->s), n, sy.median,
	       st.median * 100, st.max * 100, se->retried,
	       disturbed_runs(se));
	if (!csv)
		return;
	fprintf(csv, "%s,%s,%.6g,%.6g,%.6g,%d,%llu,%.6g,%.6g,%.6g,%d,%d,",
		se->s.name, unit_of(&se->s), v.median * m, v.min * m,
		v.max * m, se->runs, (unsigned long long)se->n, sy.median,
		st.median, st.max, se->retried, disturbed_runs(se));
	csv_values(csv, se->val, se->runs, m);
}

static int round_ratios(const struct series *num, const struct series *den,
			int n, int clean_only, double *q)
{
	int i, k = 0;

	for (i = 0; i < n; i++)
		if (!clean_only || (num->stolen[i] <= STOLEN_MAX &&
				    den->stolen[i] <= STOLEN_MAX))
			q[k++] = num->val[i] / den->val[i];
	return k;
}

/*
 * Per-round ratio num/den, summarised over the rounds in which neither
 * run lost more than STOLEN_MAX of its window (all rounds if none did).
 * A round measures its figures back to back, so a placement change
 * between rounds moves both sides of it.
 */
static void print_ratio(const char *name, const struct series *num,
			const struct series *den, const char *target,
			double target_v, FILE *csv)
{
	double q[RUNS_MAX] = { 0 };
	struct bench_summary s;
	int n = num->runs < den->runs ? num->runs : den->runs;
	int clean_only = 1, met, k;

	k = round_ratios(num, den, n, 1, q);
	if (!k) {
		clean_only = 0;
		k = round_ratios(num, den, n, 0, q);
	}
	bench_summarize(q, k, &s);
	printf("%-44s %8.2f  (%.2f .. %.2f) %d/%d %-5s", name, s.median, s.min,
	       s.max, k, n, clean_only ? "clean" : "ALL");
	if (target) {
		met = *target == '<' ? s.median <= target_v :
				       s.median >= target_v;
		printf("  target %s: %s", target, met ? "met" : "NOT met");
	}
	printf("\n");
	if (!csv)
		return;
	fprintf(csv, "%s,ratio,%.6g,%.6g,%.6g,%d,,,,,,%d,", name, s.median,
		s.min, s.max, k, clean_only ? 0 : k);
	csv_values(csv, q, k, 1);
}

static void print_placement(const struct series *before,
			    const struct series *after, FILE *csv)
{
	struct bench_summary b, a;
	double apart;

	bench_summarize(before->val, before->runs, &b);
	bench_summarize(after->val, after->runs, &a);
	apart = a.median > b.median ? a.median / b.median :
				      b.median / a.median;
	printf("cache-line RT before %.1f ns, after %.1f ns: %.2fx apart%s\n",
	       b.median, a.median, apart,
	       apart > 1.5 ? "  FLAG: > 1.5x, CPU placement changed during the run; ratios are per round" :
			     " (<= 1.5x: placement stable)");
	if (csv)
		fprintf(csv, "cache-line RT after/before,ratio,%.6g,,,1,,,,,,,\n",
			a.median / b.median);
}

/* ---- the full benchmark */

enum {
	S_CL_BEFORE, S_CL_PAIRED, S_CL2_PAIRED, S_PIPE_RT, S_RING_RT8, S_RING_RT64,
	S_PIPE_ST8, S_PIPE_ST64, S_RING_ST8_1, S_RING_ST8_32, S_RING_ST64_1,
	S_RING_ST64_32, S_RING_BLK8_1, S_CL_AFTER, S_COUNT
};

static struct series all[S_COUNT] = {
	[S_CL_BEFORE] = { { "cache-line RT (before)", K_CL_RT, 8, 1, 0 } },
	[S_CL_PAIRED] = { { "cache-line RT (paired per round)", K_CL_RT, 8, 1, 0 } },
	[S_CL2_PAIRED] = { { "2-line RT (data + flag line)", K_CL2_RT, 8, 1, 0 } },
	[S_PIPE_RT] = { { "pipe RT 1B", K_PIPE_RT, 1, 1, 0 } },
	[S_RING_RT8] = { { "ring RT 8B", K_RING_RT, 8, 1, 0 } },
	[S_RING_RT64] = { { "ring RT 64B", K_RING_RT, 64, 1, 0 } },
	[S_PIPE_ST8] = { { "pipe stream 8B", K_PIPE_STREAM, 8, 1, 0 } },
	[S_PIPE_ST64] = { { "pipe stream 64B", K_PIPE_STREAM, 64, 1, 0 } },
	[S_RING_ST8_1] = { { "ring stream 8B batch 1", K_RING_STREAM, 8, 1, 0 } },
	[S_RING_ST8_32] = { { "ring stream 8B batch 32", K_RING_STREAM, 8, 32, 0 } },
	[S_RING_ST64_1] = { { "ring stream 64B batch 1", K_RING_STREAM, 64, 1, 0 } },
	[S_RING_ST64_32] = { { "ring stream 64B batch 32", K_RING_STREAM, 64, 32, 0 } },
	[S_RING_BLK8_1] = { { "ring stream 8B b1 blocking(park)", K_RING_STREAM, 8, 1, 1 } },
	[S_CL_AFTER] = { { "cache-line RT (after)", K_CL_RT, 8, 1, 0 } },
};

static const int rt_round[] = { S_CL_PAIRED, S_CL2_PAIRED, S_PIPE_RT,
				S_RING_RT8, S_RING_RT64 };
static const int st_round[] = { S_PIPE_ST8, S_PIPE_ST64, S_RING_ST8_1,
				S_RING_ST8_32, S_RING_ST64_1, S_RING_ST64_32,
				S_RING_BLK8_1 };

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void calibrate_all(void)
{
	int i;

	fprintf(stderr, "spsc_xproc: calibrating (also the warm-up)...\n");
	for (i = 0; i < S_COUNT; i++) {
		if (i == S_CL_PAIRED || i == S_CL_AFTER)
			all[i].n = all[S_CL_BEFORE].n;
		else
			all[i].n = calibrate(&all[i].s);
	}
}

static void run_rounds(const int *ids, size_t count)
{
	size_t i;
	int r;

	for (r = 0; r < g.runs; r++)
		for (i = 0; i < count; i++)
			series_run(&all[ids[i]]);
}

/* The 1-minute load average: other work on these CPUs skews every figure. */
static double loadavg1(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

static void print_header(double load0, double load1)
{
	const char *env = getenv("BATON_BACKEND");

	printf("spsc_xproc: baton cross-process SPSC benchmark\n");
	printf("backend: %s (BATON_BACKEND=%s)\n", baton_backend_name(g.backend),
	       env ? env : "unset");
	printf("cores: parent (initiator/producer) pinned to CPU %d, child (responder/consumer) pinned to CPU %d; sched_getcpu: %d, %d%s\n",
	       g.cpu[0], g.cpu[1], sched_getcpu(), g.child_cpu,
	       bench_single_cpu ? " [SINGLE CPU: spin-waits yield]" : "");
	printf("runs: %d per figure (fresh process pair each), median and min..max;%s target %.2f s per run; ring %u slots\n",
	       g.runs, g.quick ? " QUICK mode," : "", (double)g.target_ns / 1e9,
	       g.slots);
	printf("load average (1 min) at start %.2f, at end %.2f (the benchmark itself adds ~2)\n",
	       load0, load1);
	printf("pipe: one write(2) per message, reader read(2)s up to 64 KiB; ring: busy polling unless marked blocking\n");
	printf("sys/msg: pipes count their own read/write calls; rings: libbaton wake_calls+park_calls of both handles\n");
	printf("stolen: time both processes sat runnable but not running (/proc/self/schedstat run_delay), as %% of the\n"
	       "        timed window, median and max over kept runs; redo: runs measured again because > %.0f%% was stolen\n"
	       "        (up to %d times each, -x); bad: kept runs still above %.0f%%\n\n",
	       STOLEN_MAX * 100, g.retries, STOLEN_MAX * 100);
	printf("%-34s %10s  %24s %-7s %6s  %8s  %15s %3s %3s\n", "figure",
	       "median", "min .. max", "unit", "n/run", "sys/msg",
	       "stolen med max", "redo", "bad");
}

static void print_disturbance(void)
{
	int i, k = 0, runs = 0, redone = 0;

	for (i = 0; i < S_COUNT; i++) {
		k += disturbed_runs(&all[i]);
		runs += all[i].runs;
		redone += all[i].retried;
	}
	printf("disturbance: %d runs redone; %d of %d kept runs lost > %.0f%% of their window to other work\n",
	       redone, k, runs, STOLEN_MAX * 100);
	if (k)
		printf("WARNING: other work shared these CPUs during %d kept runs; busy-polling figures there are inflated\n",
		       k);
}

static int run_all(void)
{
	FILE *csv = NULL;
	size_t i;
	double load0 = loadavg1();

	calibrate_all();
	fprintf(stderr, "spsc_xproc: measuring %d runs per figure...\n",
		g.runs);
	run_rounds((const int[]){ S_CL_BEFORE }, 1);
	run_rounds(rt_round, ARRAY_SIZE(rt_round));
	run_rounds(st_round, ARRAY_SIZE(st_round));
	run_rounds((const int[]){ S_CL_AFTER }, 1);

	if (g.csv) {
		csv = fopen(g.csv, "w");
		if (!csv)
			die(g.csv, errno);
		fprintf(csv, "figure,unit,median,min,max,runs,n_per_run,syscalls_per_msg,stolen_median,stolen_max,redone_runs,disturbed_runs,values\n");
	}
	print_header(load0, loadavg1());
	for (i = 0; i < S_COUNT; i++)
		print_series(&all[i], csv);
	printf("\nratios per round (figures measured back to back), median (min .. max) over the rounds in which\n"
	       "neither run lost > %.0f%% of its window (\"clean\"; \"ALL\" if there were none)\n",
	       STOLEN_MAX * 100);
	print_ratio("ring RT 8B / cache-line RT", &all[S_RING_RT8],
		    &all[S_CL_PAIRED], "<= 1.3", 1.3, csv);
	print_ratio("ring RT 8B / 2-line RT", &all[S_RING_RT8],
		    &all[S_CL2_PAIRED], NULL, 0, csv);
	print_ratio("ring RT 64B / cache-line RT", &all[S_RING_RT64],
		    &all[S_CL_PAIRED], NULL, 0, csv);
	print_ratio("pipe RT / cache-line RT", &all[S_PIPE_RT],
		    &all[S_CL_PAIRED], NULL, 0, csv);
	print_ratio("ring stream 8B@32 / pipe stream 8B (msgs/s)",
		    &all[S_RING_ST8_32], &all[S_PIPE_ST8], ">= 100", 100, csv);
	print_ratio("ring stream 64B@32 / pipe stream 64B",
		    &all[S_RING_ST64_32], &all[S_PIPE_ST64], NULL, 0, csv);
	print_ratio("ring stream 8B@1 / pipe stream 8B",
		    &all[S_RING_ST8_1], &all[S_PIPE_ST8], NULL, 0, csv);
	print_placement(&all[S_CL_BEFORE], &all[S_CL_AFTER], csv);
	print_disturbance();
	if (csv)
		fclose(csv);
	if (g.errors) {
		printf("spsc_xproc: FAILED: %llu messages failed verification\n",
		       (unsigned long long)g.errors);
		return 1;
	}
	printf("spsc_xproc: every message verified (sequence and payload)\n");
	return 0;
}

/* ---- --one: a single run, for strace-check to run under strace */

static const struct spec *one_spec(const char *kind, uint32_t size,
				   uint32_t batch)
{
	static struct spec s;

	s.name = kind;
	s.size = size;
	s.batch = batch ? batch : 1;
	s.block = 0;
	if (!strcmp(kind, "ring-stream")) {
		s.kind = K_RING_STREAM;
	} else if (!strcmp(kind, "ring-stream-block")) {
		s.kind = K_RING_STREAM;
		s.block = 1;
	} else if (!strcmp(kind, "pipe-stream")) {
		s.kind = K_PIPE_STREAM;
	} else {
		return NULL;
	}
	if (size < 8 || size > MSG_MAX || size % 8)
		return NULL;
	return &s;
}

static int run_one(const struct spec *s, uint64_t n)
{
	struct result r;

	run_pair(s, n, &r);
	printf("one: backend=%s total=%llu syscalls=%llu errors=%llu ns=%llu\n",
	       uses_rings(s) ? baton_backend_name(g.backend) : "none",
	       (unsigned long long)r.total, (unsigned long long)r.syscalls,
	       (unsigned long long)r.errors, (unsigned long long)r.ns);
	return r.errors ? 1 : 0;
}

/* ---- --strace-check: count syscalls with strace, independently */

#define TRACE_NAMES 64

struct traced {
	uint64_t total, lib, errors;
	int nnames;
	char name[TRACE_NAMES][32];
	uint64_t calls[TRACE_NAMES];
	uint64_t all;
};

/* One line of `strace -c`: "% time seconds usecs/call calls [errors] name" */
static void trace_parse_line(struct traced *t, char *line)
{
	char *tok[8], *save = NULL, *w;
	int n = 0;

	for (w = strtok_r(line, " \t\n", &save); w && n < 8;
	     w = strtok_r(NULL, " \t\n", &save))
		tok[n++] = w;
	if (n < 5 || *tok[0] == '%' || *tok[0] == '-')
		return;
	if (!strcmp(tok[n - 1], "total")) {
		t->all = strtoull(tok[3], NULL, 10);
		return;
	}
	if (t->nnames == TRACE_NAMES)
		return;
	snprintf(t->name[t->nnames], sizeof(t->name[0]), "%s", tok[n - 1]);
	t->calls[t->nnames++] = strtoull(tok[3], NULL, 10);
}

static int trace_parse_file(struct traced *t, const char *path)
{
	char line[256];
	FILE *f = fopen(path, "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		trace_parse_line(t, line);
	fclose(f);
	return 0;
}

static void trace_argv(char **argv, char bufs[][64], const char *exe,
		       const char *out, const char *kind, uint32_t size,
		       uint32_t batch, uint64_t n)
{
	int i = 0;

	snprintf(bufs[0], 64, "%u", size);
	snprintf(bufs[1], 64, "%u", batch);
	snprintf(bufs[2], 64, "%llu", (unsigned long long)n);
	snprintf(bufs[3], 64, "%u", g.slots);
	snprintf(bufs[4], 64, "%d,%d", g.cpu[0], g.cpu[1]);
	argv[i++] = "strace";
	argv[i++] = "-f";
	argv[i++] = "-c";
	argv[i++] = "-o";
	argv[i++] = (char *)out;
	argv[i++] = (char *)exe;
	argv[i++] = "--one";
	argv[i++] = (char *)kind;
	argv[i++] = "-z";
	argv[i++] = bufs[0];
	argv[i++] = "-b";
	argv[i++] = bufs[1];
	argv[i++] = "-n";
	argv[i++] = bufs[2];
	argv[i++] = "-s";
	argv[i++] = bufs[3];
	argv[i++] = "-C";
	argv[i++] = bufs[4];
	argv[i] = NULL;
}

/* Run `strace -f -c -o tmp self --one ...`, read its line and strace's table. */
static int trace_one(const char *exe, const char *kind, uint32_t size,
		     uint32_t batch, uint64_t n, struct traced *t)
{
	char out[] = "/tmp/spsc_xproc.strace.XXXXXX", bufs[5][64], line[256];
	char *argv[24];
	int fd[2], status, tmp;
	FILE *f;
	pid_t pid;

	memset(t, 0, sizeof(*t));
	tmp = mkstemp(out);
	if (tmp < 0 || pipe(fd))
		return -errno;
	close(tmp);
	trace_argv(argv, bufs, exe, out, kind, size, batch, n);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execvp("strace", argv);
		_exit(127);
	}
	close(fd[1]);
	f = fdopen(fd[0], "r");
	while (f && fgets(line, sizeof(line), f))
		sscanf(line, "one: backend=%*s total=%llu syscalls=%llu errors=%llu",
		       (unsigned long long *)&t->total,
		       (unsigned long long *)&t->lib,
		       (unsigned long long *)&t->errors);
	if (f)
		fclose(f);
	waitpid(pid, &status, 0);
	trace_parse_file(t, out);
	unlink(out);
	if (!WIFEXITED(status) || WEXITSTATUS(status) || !t->total)
		return WIFEXITED(status) && WEXITSTATUS(status) == 127 ?
		       -ENOENT : -EIO;
	return 0;
}

static uint64_t trace_calls(const struct traced *t, const char *name)
{
	int i;

	for (i = 0; i < t->nnames; i++)
		if (!strcmp(t->name[i], name))
			return t->calls[i];
	return 0;
}

/*
 * Two views of the same pair of runs. Delta: strace's and the counters'
 * growth from the N run to the 2N run, per extra message (setup cancels;
 * nondeterministic parking or read batching makes it noisy). Uncounted:
 * what strace saw that the counters did not, in each run; if it does not
 * grow from N to 2N it is setup only, and the counters catch every
 * syscall of the transfer.
 */
static void trace_report(const char *label, const struct traced *a,
			 const struct traced *b)
{
	uint64_t dm = b->total - a->total;
	long long ds = (long long)b->all - (long long)a->all;
	long long dl = (long long)b->lib - (long long)a->lib;
	long long ua = (long long)a->all - (long long)a->lib;
	long long ub = (long long)b->all - (long long)b->lib;
	int i;

	printf("%s\n  delta: +%llu msgs, strace %+lld = %.5f syscalls/msg, counters %+lld = %.5f/msg; by name:",
	       label, (unsigned long long)dm, ds, (double)ds / (double)dm, dl,
	       (double)dl / (double)dm);
	for (i = 0; i < b->nnames; i++) {
		long long d = (long long)b->calls[i] -
			      (long long)trace_calls(a, b->name[i]);

		if (d)
			printf(" %s%+lld", b->name[i], d);
	}
	printf("\n  per run: counters %.5f/msg (N), %.5f/msg (2N); uncounted by the counters: %lld (N), %lld (2N): %s\n",
	       (double)a->lib / (double)a->total,
	       (double)b->lib / (double)b->total, ua, ub,
	       ua == ub ? "setup only, counters complete" :
			  "CHANGES between runs: the counters miss some transfer syscalls (see by name)");
}

static int strace_check(void)
{
	static const struct {
		const char *label, *kind;
		uint32_t size, batch, div;
	} cases[] = {
		{ "ring stream 8B@1 busy", "ring-stream", 8, 1, 1 },
		{ "ring stream 8B@32 busy", "ring-stream", 8, 32, 1 },
		{ "ring stream 8B@1 blocking", "ring-stream-block", 8, 1, 1 },
		{ "ring stream 8B@32 blocking", "ring-stream-block", 8, 32, 1 },
		/* every pipe syscall stops under strace: fewer messages */
		{ "pipe stream 8B (control)", "pipe-stream", 8, 1, 10 },
	};
	uint64_t n = g.quick ? 200000 : 2000000, m;
	char exe[4096];
	struct traced a, b;
	ssize_t len;
	size_t i;
	int rc, bad = 0;

	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len < 0)
		die("readlink /proc/self/exe", errno);
	exe[len] = 0;
	printf("strace-check: strace -f -c over one run of N=%llu (pipe: N/10) and one of 2N messages (warm-up included).\n"
	       "  counters = libbaton wake_calls+park_calls of both ring handles, or the pipe case's own read/write\n"
	       "  count, in the same traced runs.\n",
	       (unsigned long long)n);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		m = n / cases[i].div;
		rc = trace_one(exe, cases[i].kind, cases[i].size,
			       cases[i].batch, m, &a);
		if (!rc)
			rc = trace_one(exe, cases[i].kind, cases[i].size,
				       cases[i].batch, 2 * m, &b);
		if (rc == -ENOENT) {
			printf("strace-check: strace not found; skipped\n");
			return 0;
		}
		if (rc || a.errors || b.errors) {
			printf("strace-check: %s: run failed (%d)\n",
			       cases[i].label, rc);
			bad = 1;
			continue;
		}
		trace_report(cases[i].label, &a, &b);
	}
	return bad;
}

/* ---- main */

static void usage(int code)
{
	fprintf(code ? stderr : stdout,
		"usage: spsc_xproc [-r RUNS] [-q] [-c CSV] [-C CPU0,CPU1] [-s SLOTS] [-x N]\n"
		"       spsc_xproc --strace-check [-q] [-C CPU0,CPU1] [-s SLOTS]\n"
		"  -r RUNS   runs per figure (default 7, max %d)\n"
		"  -q        quick: runs ~10x shorter (for the VM under TCG)\n"
		"  -c FILE   also write the figures as CSV\n"
		"  -C A,B    CPUs for parent and child (default 0,1)\n"
		"  -s SLOTS  ring slot count, a power of two (default 4096)\n"
		"  -x N      redo a preempted run up to N times (default 3)\n"		"  --strace-check  count syscalls/msg with strace -f -c\n"
		"backend: BATON_BACKEND=kmod|memfd, else kmod if /dev/baton exists\n",
		RUNS_MAX);
	exit(code);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "strace-check", no_argument, NULL, 'S' },
		{ "one", required_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *one = NULL;
	uint32_t size = 8, batch = 1;
	uint64_t n = 0;
	int c, check = 0;

	while ((c = getopt_long(argc, argv, "r:qc:C:s:n:z:b:x:h", lo, NULL)) != -1) {
		switch (c) {
		case 'r':
			g.runs = atoi(optarg);
			if (g.runs < 1 || g.runs > RUNS_MAX)
				usage(2);
			break;
		case 'q':
			g.quick = 1;
			g.target_ns /= 10;
			break;
		case 'c':
			g.csv = optarg;
			break;
		case 'C':
			if (bench_parse_cpus(optarg, g.cpu))
				usage(2);
			break;
		case 's':
			g.slots = (uint32_t)bench_parse_count(optarg);
			if (g.slots < 2 || (g.slots & (g.slots - 1)))
				usage(2);
			break;
		case 'n':
			n = bench_parse_count(optarg);
			break;
		case 'z':
			size = (uint32_t)atoi(optarg);
			break;
		case 'b':
			batch = (uint32_t)atoi(optarg);
			break;
		case 'x':
			g.retries = atoi(optarg);
			if (g.retries < 0)
				usage(2);
			break;
		case 'S':
			check = 1;
			break;
		case 'O':
			one = optarg;
			break;
		case 'h':
			usage(0);
			break;
		default:
			usage(2);
		}
	}
	/* Before pinning: the traced runs pin themselves. */
	if (check)
		return strace_check();
	g.ctl = bench_shared_alloc(sizeof(*g.ctl));
	bench_check_cpus("spsc_xproc", g.cpu);
	if (g.cpu[0] >= 0 && (c = bench_pin(g.cpu[0])))
		die("sched_setaffinity", -c);
	if (one) {
		const struct spec *s = one_spec(one, size, batch);

		if (!s || !n)
			usage(2);
		return run_one(s, n);
	}
	return run_all();
}

/* SPDX-License-Identifier: MIT */
/*
 * bench/rate.c: baton as users run it (issue 13 item 9). A producer process
 * publishes at a fixed rate into a consumer process that blocks, sits in an
 * event loop or in a waitset, and the run reports what that costs:
 * CPU ns per message (getrusage of both processes over the window / the
 * messages), system calls per message (every call each side entered, as
 * the kernel counts them: bench_syscalls_open(), clock reads and the
 * producer's pacing sleeps left out; where the kernel will not count, as
 * the code counts them where it makes them), and
 * the latency of each message (the producer's timestamp in it, read by the
 * consumer on arrival): p50, p99, p99.9, max. One run per invocation;
 * bench/rate-sweep.sh repeats runs over rates and consumers and keeps the
 * spread.
 *
 *   -p PEER   baton-block  baton_spsc_pop() with a timeout (spin, then park)
 *             baton-epoll  the consumer's ring fd in epoll (EPOLLIN, level);
 *                          drains with try_pop, then epoll_wait. kmod only:
 *                          on memfd poll always reports ready, so the run
 *                          is skipped (exit 4, a "skip" line)
 *             baton-waitset  8 rings in one baton_waitset: the producer
 *                          publishes round robin over them, the consumer
 *                          waits on the set and drains the rings it says
 *                          are ready (syscalls: see recv_baton_waitset)
 *             futex        a minimal shared SPSC ring, the consumer spins
 *                          a fixed 2000 polls (-S; baton's default spin
 *                          limit, the ceiling its adaptive budget moves
 *                          under, down to 16: lib/park.c) then FUTEX_WAITs
 *                          with a waiter flag; the producer FUTEX_WAKEs if
 *                          it is set
 *             efd          the same ring, parked in read(2) of an eventfd
 *             pipe         write(2) / blocking read(2) of 16-byte records
 *   -r RATE   messages/s; 0: as fast as the producer can (report the rate)
 *   -T NS     window (default 1e9); the run sends RATE * NS / 1e9 messages
 *   -n MAX    message cap (default 1M); RATE 0 sends exactly MAX
 *   -c A,B    CPUs (producer, consumer; default 0,1)
 *   -h        print the CSV header and exit
 *
 * Pacing: message i is due at t0 + i / RATE. The producer sends everything
 * due, then sleeps until the next is due (clock_nanosleep, absolute), so at
 * high rates the timer slack (50 us by default) makes small bursts, as a
 * timer-driven producer does. The pacing sleeps are the producer's own and
 * are the same for every peer; they are reported apart (pace_calls), not in
 * syscalls per message.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <baton.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SLOTS		4096u		/* ring slots, every peer */
#define SPIN_DEFAULT	2000u		/* lib/ring.c BATON_SPIN_DEFAULT */
#define EXIT_SKIP	4
#define POP_TIMEOUT_NS	(5LL * 1000000000)
#define WS_RINGS	8u		/* rings of the baton-waitset peer */

/*
 * 16 bytes, as before the wait column: seq fits 32 bits (at most
 * 2^32 - 1 messages per run), and wait_ns is how long the message was in
 * the producer's hands before its send began (see produce()).
 */
struct msg {
	uint32_t seq;
	uint32_t wait_ns;
	uint64_t sent_ns;
};

/* The minimal futex / eventfd ring: one producer, one consumer. */
struct fring {
	uint64_t tail __attribute__((aligned(64)));
	uint32_t tail32;			/* futex word: low bits of tail */
	uint64_t head __attribute__((aligned(64)));
	uint32_t cons_waiting __attribute__((aligned(64)));
	struct msg slots[SLOTS] __attribute__((aligned(64)));
};

/* What the two processes share: the ring and the results. */
struct shared {
	struct fring ring;
	volatile int ready;
	volatile int go;
	uint64_t t0;
	uint64_t n;			/* messages the producer will send */
	uint64_t cons_cpu_ns;
	uint64_t cons_syscalls;		/* what the code counted */
	uint64_t cons_syscalls_entered;	/* what the kernel counted */
	int cons_counted;		/* ... if it would count */
	uint64_t cons_got;
	uint64_t bad;
	uint64_t lat_n;
	uint32_t *lat_ready;		/* ns from ready, per message: lat + n */
	uint32_t lat[];			/* ns from send, per message, capped */
};

static struct {
	const char *peer;
	double rate;
	uint64_t window_ns;
	uint64_t max_n;
	int cpu[2];
	uint32_t spin;
	int ring_id;			/* rings are named rate.ID[.i] */
	unsigned int rings;		/* baton rings: 1, or WS_RINGS */
	int efd;
	int pfd[2];
} cfg = {
	.rate = 100000,
	.window_ns = 1000000000ull,
	.max_n = 1000000,
	.cpu = { 0, 1 },
	.spin = SPIN_DEFAULT,
	.rings = 1,
};

static void die(const char *what, int err)
{
	fprintf(stderr, "rate: %s: %s\n", what, strerror(err));
	exit(1);
}

static uint64_t cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
}

static long futex(uint32_t *w, int op, uint32_t val)
{
	return syscall(SYS_futex, w, op, val, NULL, NULL, 0);
}

static int is_baton(void)
{
	return !strncmp(cfg.peer, "baton", 5);
}

static int is_waitset(void)
{
	return !strcmp(cfg.peer, "baton-waitset");
}

/* Ring @i's name: "rate.ID" for one ring, "rate.ID.i" for the set's. */
static void ring_name(unsigned int i, char *buf)
{
	if (cfg.rings == 1)
		snprintf(buf, BATON_NAME_MAX, "rate.%d", cfg.ring_id);
	else
		snprintf(buf, BATON_NAME_MAX, "rate.%d.%u", cfg.ring_id, i);
}

/* The syscalls the library counted on @n handles (park and wake calls). */
static uint64_t handle_syscalls(struct baton_ring **br, unsigned int n)
{
	struct baton_ring_stats st;
	uint64_t sum = 0;

	for (unsigned int i = 0; i < n; i++) {
		baton_ring_stats(br[i], &st);
		sum += st.park_calls + st.wake_calls;
	}
	return sum;
}

/* ---- the consumer: one receive per peer, each counts its syscalls ---- */

struct consumer {
	struct shared *s;
	struct baton_ring *br[WS_RINGS];	/* [0] for one ring */
	struct baton_waitset *ws;
	uint64_t next[WS_RINGS];	/* waitset: next seq due per ring */
	int epfd;
	uint64_t syscalls;	/* made here, outside the library */
};

/* Record a message that arrived at @now; @want is the seq due here. */
static void on_msg_want(struct consumer *c, const struct msg *m, uint64_t now,
			uint64_t want)
{
	struct shared *s = c->s;
	uint64_t lat = now - m->sent_ns, ready = lat + m->wait_ns;

	if (m->seq != (uint32_t)want)
		s->bad++;
	s->lat_ready[s->lat_n] = ready > UINT32_MAX ? UINT32_MAX :
						      (uint32_t)ready;
	s->lat[s->lat_n++] = lat > UINT32_MAX ? UINT32_MAX : (uint32_t)lat;
	s->cons_got++;
}

/* One channel: messages arrive in order. */
static void on_msg(struct consumer *c, const struct msg *m, uint64_t now)
{
	on_msg_want(c, m, now, c->s->cons_got);
}

static void recv_baton_block(struct consumer *c)
{
	struct msg m;
	int rc = baton_spsc_pop(c->br[0], &m, sizeof(m), POP_TIMEOUT_NS);

	if (rc < 0)
		die("baton_spsc_pop", -rc);
	on_msg(c, &m, bench_now_ns());
}

static void recv_baton_epoll(struct consumer *c)
{
	struct epoll_event ev;
	struct msg m;
	int n = 0;

	while (baton_spsc_try_pop(c->br[0], &m, sizeof(m)) == 0) {
		on_msg(c, &m, bench_now_ns());
		n++;
	}
	if (n)
		return;
	c->syscalls++;
	if (epoll_wait(c->epfd, &ev, 1, 5000) < 0 && errno != EINTR)
		die("epoll_wait", errno);
}

/* Take what ring @i holds; each ring carries seqs i, i + 8, i + 16... */
static int drain_ring(struct consumer *c, unsigned int i)
{
	struct msg m;
	int n = 0;

	while (baton_spsc_try_pop(c->br[i], &m, sizeof(m)) == 0) {
		on_msg_want(c, &m, bench_now_ns(), c->next[i]);
		c->next[i] += WS_RINGS;
		n++;
	}
	return n;
}

/*
 * The waitset consumer: one look over the 8 rings, and when all were
 * empty a wait on the set, then drain the rings it reported. Each ring is
 * in order; the rings between them are not (the set reports by ring).
 *
 * Syscalls: the set sleeps inside the library, so they are counted from
 * what it leaves behind. kmod: one poll(2) per wait that found nothing
 * ready at its first look; counted here per wait after an empty look
 * (a message landing in between makes that one count too many). memfd:
 * every sleep arms all 8 rings' waiting words (park_calls + 1 each, in
 * the handles' stats) and makes one membarrier and one futex_waitv (the
 * waitv is skipped if the look after arming finds a message): 2 per 8
 * park_calls, counted in consumer_main; the role-lock fcntl the set
 * makes when a 5 ms slice runs out is not counted.
 */
static void recv_baton_waitset(struct consumer *c)
{
	struct baton_waitset_event ev[WS_RINGS];
	unsigned int i;
	int n = 0;

	for (i = 0; i < WS_RINGS; i++)
		n += drain_ring(c, i);
	if (n)
		return;
	if (c->br[0]->backend == BATON_BACKEND_KMOD)
		c->syscalls++;
	n = baton_waitset_wait(c->ws, ev, WS_RINGS, POP_TIMEOUT_NS);
	if (n < 0)
		die("baton_waitset_wait", -n);
	for (int k = 0; k < n; k++) {
		if (ev[k].events != BATON_WS_READY)
			die("baton_waitset_wait: ring gone or corrupt", EPIPE);
		drain_ring(c, (unsigned int)ev[k].cookie);
	}
}

/* The consumer's syscalls on its baton handles, waits of a set included. */
static uint64_t consumer_handle_syscalls(struct consumer *c)
{
	struct baton_ring_stats st;
	uint64_t sum = 0, parks = 0;
	unsigned int i;

	if (!c->ws || c->br[0]->backend != BATON_BACKEND_MEMFD)
		return handle_syscalls(c->br, cfg.rings);
	for (i = 0; i < cfg.rings; i++) {
		baton_ring_stats(c->br[i], &st);
		sum += st.wake_calls;
		parks += st.park_calls;
	}
	/* memfd: a set's sleep = 8 arms, 1 membarrier + 1 futex_waitv. */
	return sum + 2 * (parks / WS_RINGS);
}

/* Open the consumer's baton rings and, for the waitset peer, the set. */
static void consumer_open(struct consumer *c)
{
	char name[BATON_NAME_MAX];
	unsigned int i;
	int rc;

	for (i = 0; i < cfg.rings; i++) {
		ring_name(i, name);
		rc = baton_ring_open(name, BATON_ROLE_CONSUMER,
				     BATON_BACKEND_AUTO, &c->br[i]);
		if (rc < 0)
			die("baton_ring_open", -rc);
		c->next[i] = i;
	}
	if (!is_waitset())
		return;
	rc = baton_waitset_create(&c->ws);
	for (i = 0; i < cfg.rings && !rc; i++)
		rc = baton_waitset_add_ring(c->ws, c->br[i], i);
	if (rc < 0)
		die("baton_waitset", -rc);
}

static void recv_fring(struct consumer *c)
{
	struct fring *r = &c->s->ring;
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
	uint64_t tail;
	uint32_t spins;

	for (spins = 0;; spins++) {
		tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
		if (tail != head)
			break;
		if (spins < cfg.spin) {
			__builtin_ia32_pause();
			continue;
		}
		/* Park: flag, full fence, re-check, sleep; the flag is ours. */
		__atomic_store_n(&r->cons_waiting, 1, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (__atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) == head) {
			uint64_t v;

			c->syscalls++;
			if (!strcmp(cfg.peer, "futex"))
				futex(&r->tail32, FUTEX_WAIT, (uint32_t)head);
			else if (read(cfg.efd, &v, sizeof(v)) < 0 && errno != EINTR)
				die("read eventfd", errno);
		}
		__atomic_store_n(&r->cons_waiting, 0, __ATOMIC_RELAXED);
		spins = 0;
	}
	for (; head != tail; head++)
		on_msg(c, &r->slots[head & (SLOTS - 1)], bench_now_ns());
	__atomic_store_n(&r->head, head, __ATOMIC_RELEASE);
}

static void recv_pipe(struct consumer *c)
{
	struct msg m[64];
	ssize_t n;
	uint64_t now;

	c->syscalls++;
	n = read(cfg.pfd[0], m, sizeof(m));
	if (n < 0)
		die("read pipe", errno);
	now = bench_now_ns();
	/* Records are 16 bytes and pipe writes of <= PIPE_BUF are atomic. */
	for (ssize_t i = 0; i < n / (ssize_t)sizeof(m[0]); i++)
		on_msg(c, &m[i], now);
}

static void consumer_main(struct shared *s)
{
	struct consumer c = { .s = s, .epfd = -1 };
	uint64_t c0, v0;
	int scfd;

	bench_pin(cfg.cpu[1]);
	if (is_baton())
		consumer_open(&c);
	if (!strcmp(cfg.peer, "baton-epoll")) {
		struct epoll_event ev = { .events = EPOLLIN };

		c.epfd = epoll_create1(EPOLL_CLOEXEC);
		if (c.epfd < 0 ||
		    epoll_ctl(c.epfd, EPOLL_CTL_ADD, baton_ring_fd(c.br[0]), &ev))
			die("epoll", errno);
	}
	if (!strcmp(cfg.peer, "pipe"))
		close(cfg.pfd[1]);
	scfd = bench_syscalls_open();
	s->cons_counted = scfd >= 0;
	s->ready = 1;
	while (!s->go)
		__builtin_ia32_pause();
	c0 = cpu_ns();
	v0 = bench_syscalls_read(scfd);
	while (s->cons_got < s->n) {
		if (!strcmp(cfg.peer, "baton-block"))
			recv_baton_block(&c);
		else if (!strcmp(cfg.peer, "baton-epoll"))
			recv_baton_epoll(&c);
		else if (is_waitset())
			recv_baton_waitset(&c);
		else if (!strcmp(cfg.peer, "pipe"))
			recv_pipe(&c);
		else
			recv_fring(&c);
	}
	s->cons_syscalls_entered =
		bench_syscalls_between(v0, bench_syscalls_read(scfd));
	s->cons_cpu_ns = cpu_ns() - c0;
	s->cons_syscalls = c.syscalls;
	if (is_baton()) {
		s->cons_syscalls += consumer_handle_syscalls(&c);
		baton_waitset_destroy(c.ws);
		for (unsigned int i = 0; i < cfg.rings; i++)
			baton_ring_close(c.br[i]);
	}
	exit(0);
}

/* ---- the producer ---- */

struct producer {
	struct shared *s;
	struct baton_ring *br[WS_RINGS];	/* [0] for one ring */
	uint64_t syscalls;
	uint64_t pace_calls;
};

static void send_one(struct producer *p, uint64_t seq, uint64_t ready_ns)
{
	struct msg m = { .seq = (uint32_t)seq, .sent_ns = bench_now_ns() };
	struct fring *r = &p->s->ring;
	int rc;

	m.wait_ns = m.sent_ns - ready_ns > UINT32_MAX ? UINT32_MAX :
		    (uint32_t)(m.sent_ns - ready_ns);
	if (is_baton()) {
		/* Round robin: one ring, or message seq into ring seq % 8. */
		rc = baton_spsc_push(p->br[seq % cfg.rings], &m, sizeof(m),
				     POP_TIMEOUT_NS);
		if (rc < 0)
			die("baton_spsc_push", -rc);
		return;
	}
	if (!strcmp(cfg.peer, "pipe")) {
		p->syscalls++;
		if (bench_write_full(cfg.pfd[1], &m, sizeof(m)))
			die("write pipe", errno);
		return;
	}
	/* The fring: a full ring spins (the consumer never parks then). */
	while (seq - __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) >= SLOTS)
		__builtin_ia32_pause();
	r->slots[seq & (SLOTS - 1)] = m;
	__atomic_store_n(&r->tail, seq + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&r->tail32, (uint32_t)(seq + 1), __ATOMIC_RELEASE);
	/* Dekker with the parker: full fence, then its flag. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&r->cons_waiting, __ATOMIC_RELAXED)) {
		uint64_t one = 1;

		p->syscalls++;
		if (!strcmp(cfg.peer, "futex"))
			futex(&r->tail32, FUTEX_WAKE, 1);
		else if (write(cfg.efd, &one, sizeof(one)) != sizeof(one))
			die("write eventfd", errno);
	}
}

static void sleep_until(struct producer *p, uint64_t t)
{
	struct timespec ts = {
		.tv_sec = (time_t)(t / 1000000000ull),
		.tv_nsec = (long)(t % 1000000000ull),
	};

	p->pace_calls++;
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

/*
 * Send s->n messages, message i due at t0 + i / rate (rate 0: now).
 * Message i is ready at its due time, or when the producer woke from the
 * pacing sleep it was due during, whichever is later: what the transport
 * makes it wait from then on (the sends of the messages before it in the
 * burst: their fences, their wake calls) is its latency from ready; the
 * timer slack of the sleep is the pacing's and is not. Rate 0: ready is
 * the send.
 */
static void produce(struct producer *p)
{
	struct shared *s = p->s;
	double gap = cfg.rate > 0 ? 1e9 / cfg.rate : 0;
	uint64_t i = 0, due, woke = s->t0, at;

	while (i < s->n) {
		due = s->n;
		if (gap > 0) {
			due = (uint64_t)((double)(bench_now_ns() - s->t0) / gap) + 1;
			if (due > s->n)
				due = s->n;
			if (due <= i) {
				sleep_until(p, s->t0 + (uint64_t)((double)i * gap));
				woke = bench_now_ns();
				continue;
			}
		}
		for (; i < due; i++) {
			at = s->t0 + (uint64_t)((double)i * gap);
			send_one(p, i, gap > 0 ? (at > woke ? at : woke) :
					       bench_now_ns());
		}
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static double pct(const uint32_t *v, uint64_t n, double q)
{
	uint64_t k = (uint64_t)(q * (double)(n - 1) + 0.5);

	return n ? v[k] : 0;
}

static void print_header(void)
{
	printf("peer,backend,rate_target,rate_achieved,n,secs,cpu_ns_per_msg,"
	       "cpu_prod_ns_per_msg,cpu_cons_ns_per_msg,syscalls_per_msg,"
	       "prod_syscalls,cons_syscalls,pace_calls,p50_ns,p99_ns,p999_ns,"
	       "max_ns,ready_p50_ns,ready_p99_ns,ready_p999_ns\n");
}

static void skip(const char *why)
{
	printf("skip,%s,%s,%.0f\n", cfg.peer, why, cfg.rate);
	exit(EXIT_SKIP);
}

static void setup_channel(struct producer *p, const char **backend)
{
	struct baton_ring_params rp = {
		.kind = BATON_RING_SPSC, .slot_count = SLOTS,
		.slot_size = sizeof(struct msg), .mode = 0600,
		.backend = BATON_BACKEND_AUTO,
	};
	int rc;

	*backend = "-";
	if (is_baton()) {
		char name[BATON_NAME_MAX];

		cfg.ring_id = getpid();
		cfg.rings = is_waitset() ? WS_RINGS : 1;
		for (unsigned int i = 0; i < cfg.rings; i++) {
			ring_name(i, name);
			baton_ring_unlink(name, BATON_BACKEND_AUTO);
			rc = baton_ring_create(name, &rp, BATON_ROLE_PRODUCER,
					       &p->br[i]);
			if (rc < 0)
				die("baton_ring_create", -rc);
		}
		*backend = baton_backend_name(p->br[0]->backend);
		if (!strcmp(cfg.peer, "baton-epoll") &&
		    p->br[0]->backend != BATON_BACKEND_KMOD)
			skip("memfd: poll always reports ready");
	} else if (!strcmp(cfg.peer, "efd")) {
		cfg.efd = eventfd(0, 0);
		if (cfg.efd < 0)
			die("eventfd", errno);
	} else if (!strcmp(cfg.peer, "pipe")) {
		if (pipe(cfg.pfd))
			die("pipe", errno);
	} else if (strcmp(cfg.peer, "futex")) {
		fprintf(stderr, "rate: unknown peer %s\n", cfg.peer);
		exit(2);
	}
}

static void run(void)
{
	struct producer p = { 0 };
	char name[BATON_NAME_MAX];
	struct shared *s;
	size_t len;
	const char *backend;
	uint64_t c0, v0, cpu_prod, secs_ns, n, ln, entered, prod_sys, cons_sys;
	pid_t pid;
	int status, scfd;

	if (cfg.rate > 0) {
		n = (uint64_t)(cfg.rate * (double)cfg.window_ns / 1e9);
		if (n > cfg.max_n)
			n = cfg.max_n;
	} else {
		n = cfg.max_n;
	}
	if (n > UINT32_MAX)
		n = UINT32_MAX;
	len = sizeof(*s) + 2 * n * sizeof(uint32_t);
	s = bench_shared_alloc(len);
	bench_prefault(s, len, 1);
	s->n = n;
	s->lat_ready = s->lat + n;
	p.s = s;
	setup_channel(&p, &backend);

	pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (pid == 0) {
		bench_die_with_parent(getppid());
		consumer_main(s);
	}
	if (!strcmp(cfg.peer, "pipe"))
		close(cfg.pfd[0]);
	bench_pin(cfg.cpu[0]);
	scfd = bench_syscalls_open();
	while (!s->ready)
		__builtin_ia32_pause();
	s->t0 = bench_now_ns();
	c0 = cpu_ns();
	v0 = bench_syscalls_read(scfd);
	s->go = 1;
	produce(&p);
	entered = bench_syscalls_between(v0, bench_syscalls_read(scfd));
	cpu_prod = cpu_ns() - c0;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		die("consumer", EIO);
	secs_ns = bench_now_ns() - s->t0;
	if (is_baton()) {
		p.syscalls += handle_syscalls(p.br, cfg.rings);
		for (unsigned int i = 0; i < cfg.rings; i++) {
			baton_ring_close(p.br[i]);
			ring_name(i, name);
			baton_ring_unlink(name, BATON_BACKEND_AUTO);
		}
	}
	n = s->cons_got;
	ln = s->lat_n;
	if (s->bad || !n || !ln) {
		fprintf(stderr, "rate: %llu messages out of order, %llu got\n",
			(unsigned long long)s->bad, (unsigned long long)n);
		exit(1);
	}
	/*
	 * Syscalls: what the kernel saw each side enter, clock reads and
	 * the pacing sleeps left out, when it would count (both sides); else
	 * what the code counted where it makes them, which is only as
	 * complete as that code (the library's park made a membarrier
	 * beside each futex wait that its park_calls did not show).
	 */
	prod_sys = p.syscalls;
	cons_sys = s->cons_syscalls;
	if (scfd >= 0 && s->cons_counted) {
		prod_sys = entered;
		cons_sys = s->cons_syscalls_entered;
	}
	fprintf(stderr, "rate: syscalls %s; entered (kernel, clock calls "
		"left out): producer %llu, consumer %llu; counted by the code: "
		"producer %llu, consumer %llu\n",
		scfd >= 0 && s->cons_counted ? "as the kernel counted them" :
		"as the code counted them (the kernel would not count)",
		(unsigned long long)entered,
		(unsigned long long)s->cons_syscalls_entered,
		(unsigned long long)p.syscalls,
		(unsigned long long)s->cons_syscalls);
	qsort(s->lat, ln, sizeof(s->lat[0]), cmp_u32);
	qsort(s->lat_ready, ln, sizeof(s->lat[0]), cmp_u32);
	printf("%s,%s,%.0f,%.0f,%llu,%.3f,%.1f,%.1f,%.1f,%.4f,%llu,%llu,%llu,"
	       "%.0f,%.0f,%.0f,%u,%.0f,%.0f,%.0f\n",
	       cfg.peer, backend, cfg.rate, (double)n * 1e9 / (double)secs_ns,
	       (unsigned long long)n, (double)secs_ns / 1e9,
	       (double)(cpu_prod + s->cons_cpu_ns) / (double)n,
	       (double)cpu_prod / (double)n, (double)s->cons_cpu_ns / (double)n,
	       (double)(prod_sys + cons_sys) / (double)n,
	       (unsigned long long)prod_sys, (unsigned long long)cons_sys,
	       (unsigned long long)p.pace_calls, pct(s->lat, ln, 0.50),
	       pct(s->lat, ln, 0.99), pct(s->lat, ln, 0.999), s->lat[ln - 1],
	       pct(s->lat_ready, ln, 0.50), pct(s->lat_ready, ln, 0.99),
	       pct(s->lat_ready, ln, 0.999));
}

int main(int argc, char **argv)
{
	int o;

	cfg.peer = "baton-block";
	while ((o = getopt(argc, argv, "p:r:T:n:c:S:h")) != -1) {
		switch (o) {
		case 'p': cfg.peer = optarg; break;
		case 'r': cfg.rate = strtod(optarg, NULL); break;
		case 'T': cfg.window_ns = bench_parse_count(optarg); break;
		case 'n': cfg.max_n = bench_parse_count(optarg); break;
		case 'S': cfg.spin = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'c':
			if (bench_parse_cpus(optarg, cfg.cpu))
				return 2;
			break;
		case 'h': print_header(); return 0;
		default:
			fprintf(stderr, "usage: rate [-p PEER] [-r RATE] [-T NS] [-n MAX] [-c A,B] [-S SPINS] [-h]\n");
			return 2;
		}
	}
	if (!cfg.max_n || !cfg.window_ns)
		return 2;
	bench_check_cpus("rate", cfg.cpu);
	bench_watchdog(120, "rate: a side stalled");
	run();
	return 0;
}

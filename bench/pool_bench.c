/* SPDX-License-Identifier: MIT */
/*
 * bench/pool_bench.c: baton's buffer pool (Documentation/pool.rst) beside
 * its peers, one measurement per invocation; bench/pool-suite.sh repeats
 * each RUNS times, counts syscalls with strace and writes
 * bench/results/pool.md. Three questions:
 *
 *  -q alloc     what does an allocation and a free cost on a warm pool?
 *               ns per alloc+free of one buffer. Patterns: pair (alloc,
 *               write one word, free), burst (32 allocs, each writing its
 *               buffer's first word, then 32 frees; baton's allocations
 *               are baton_pool_alloc_buf(), the handle and the address
 *               in one, as rte_mempool_get() and malloc() give a
 *               pointer), burst-spread (the
 *               same, the k-th allocation writing a word of its buffer
 *               in L1 set k: see burst_word()),
 *               xproc (process A allocates, writes its sequence number and
 *               hands the buffer over, process B checks and frees it:
 *               baton_pool_send/recv through an SPSC ring of 16-byte
 *               slots; rte_mempool: the object pointer through an SP/SC
 *               rte_ring; both sides busy-poll, neither parks). Peers: pool (baton), rte (DPDK rte_mempool, a
 *               cache of 32 per process as baton's magazine, EAL with
 *               --no-huge: its memory is a shared memfd, so a child
 *               forked after rte_eal_init() shares the mempool; each
 *               process uses its own rte_mempool_cache), malloc (glibc,
 *               one process only), iox (iceoryx 2.0's C binding: a loan
 *               and a release of one publisher, pair only; RouDi must
 *               run). The pools hold 1024 buffers and the
 *               xproc runs move many more, so a pool that was not
 *               really shared would run dry (exit 1). 4096 untimed
 *               operations first, a fixed number so that strace over N
 *               and 2N operations cancels them.
 *  -q pipeline  what does it cost to move a frame from a producer process
 *               to a consumer process? The producer writes every byte (the
 *               words seq * GOLDEN + i, summed as it goes), the consumer
 *               reads every byte (the same sum, and word 0 checks the
 *               order). Transports: handle (the frame lives in a pool
 *               buffer, 16 bytes go through the ring), inline (the
 *               producer writes a private frame and baton_spsc_push()es it
 *               in slots of min(frame, 64 KiB), the largest slot a ring
 *               takes, so a 1 MiB frame is 16 messages; the consumer pops
 *               into a private frame), pipe (write(2)/read(2) of the whole
 *               frame, pipe size 1 MiB). The two rings hold as many frames
 *               in flight: 2 MiB of them, at least 16 frames by handle
 *               (4 KiB: 512, 64 KiB: 32, 1 MiB: 16 by handle, 2 inline);
 *               the pool has twice that plus four magazines. Prints ns
 *               per frame and MB/s, timed by the consumer after as many
 *               untimed frames as the pool has buffers (its FIFO free
 *               queue cycles frames through every buffer, and each must
 *               have been faulted in once). -R SLOTS: the handle ring
 *               with SLOTS instead (the pool sized to match), reported
 *               as handle-rSLOTS: FIFO reuse makes the whole pool the
 *               working set, so ring depth moves the cache footprint.
 *  -q rss       what memory does each allocator hold over time? Burst (take
 *               and touch B MiB of 64 KiB buffers), hold, free all, idle,
 *               burst again, hold, free, idle; a thread samples RssAnon +
 *               RssShmem of /proc/self/status every 2 ms (pool buffers
 *               count as RssShmem once touched, and leave it when the pool
 *               gives their pages back). Series: pool (decay_ms -d),
 *               static (a pool with decay_ms 0), malloc (glibc, or
 *               jemalloc when the suite preloads it; -l names the series).
 *               -W: idle in baton_pool_recv() on an SPSC ring nobody
 *               sends to, with the idle window as its timeout, as a
 *               pipeline stage waits for its input (pool series only).
 *               -T MS: while idle, every MS ms allocate, touch and free 64
 *               buffers (a process that is not quite idle: the memfd
 *               backend and jemalloc without its thread decay only from
 *               their allocators' slow paths).
 *               Prints the idle baseline, the peak, and per burst the time
 *               from its last free until RSS <= 1.05 x baseline and until
 *               95% of the burst's height is given back (-1: not within
 *               the idle window), and how long each burst's allocations
 *               and first touches took (a burst soon after a decay
 *               faults its pages in again). -o FILE gets the samples.
 *               Exact: the Rss line of /proc/self/smaps_rollup (a walk of
 *               the page tables, every kind of page) just before the
 *               first burst and 2 x decay_ms (-d, default 100, whether
 *               the series decays or not) after each burst's last free,
 *               with how late the read came (a trickle's). The sampled
 *               counters are the kernel's cheap ones, which lag: 6.1
 *               adds a thread's page faults to them only every 64 faults,
 *               so in the VM the baseline misses the program's own text
 *               (tmpfs pages there: RssShmem) until the burst's faults
 *               flush it, and the curve ends ~1 MiB above a baseline of
 *               4 KiB with the pool's mapping empty.
 *
 * Nothing here asserts a timing. A verification failure exits 1, a setup
 * failure 2, a combination this build or backend cannot run 4 (skip).
 *
 *   pool_bench -q alloc -p pool|rte|malloc -P pair|burst|burst-spread|xproc
 *              -s SIZE [-n N]
 *              [-d DECAY_MS] (baton's pool; default 0, no decay)
 *   pool_bench -q pipeline -t handle|inline|pipe -s SIZE [-n FRAMES]
 *              [-R SLOTS] (handle: a ring of SLOTS instead, "handle-rSLOTS")
 *   pool_bench -q rss -p pool|static|malloc [-d DECAY_MS] [-B MIB]
 *              [-i IDLE_MS] [-T TRICKLE_MS | -W] [-l LABEL] [-o SAMPLES]
 *   common: [-c A,B] CPUs (default 0,1)
 */
#define _GNU_SOURCE
#include "bench.h"

#include <baton.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_ICEORYX
#include <iceoryx_binding_c/publisher.h>
#include <iceoryx_binding_c/runtime.h>
#include <sys/stat.h>
#endif
#ifdef HAVE_DPDK
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#endif

#define GOLDEN		0x9e3779b97f4a7c15ull
#define BURST		32u
#define POOL_COUNT	1024u		/* buffers per class, alloc question */
#define CACHE_SIZE	32u		/* rte_mempool cache = baton's magazine */
#define XRING_SLOTS	64u		/* handle ring, alloc question */
#define PIPE_RING_MIN	16u		/* handle ring, pipeline question */
#define INFLIGHT_BYTES	(2u << 20)	/* either ring's frames in flight */
#define PIPE_BYTES	(1 << 20)
#define WARM_OPS	4096u		/* fixed, so strace's N and 2N cancel it */
#define WAIT_NS		(30ll * 1000000000ll)
#define WATCHDOG_S	300
#define SAMPLE_MS	2
#define RSS_BUF		(64u << 10)
#define TRICKLE		64u		/* rss -T: buffers per trickle */
#define EXIT_SKIP	4
#define SLOW_NS		100000ull	/* a gap the diagnostics count */

enum question { Q_ALLOC, Q_PIPELINE, Q_RSS };
enum peer { P_POOL, P_RTE, P_MALLOC, P_STATIC, P_IOX };
enum pattern { PAT_PAIR, PAT_BURST, PAT_XPROC, PAT_SPREAD };
enum transport { T_HANDLE, T_INLINE, T_PIPE };

static const char *const peer_names[] = { "pool", "rte", "malloc", "static",
					    "iox" };
static const char *const pattern_names[] = { "pair", "burst", "xproc",
						"burst-spread" };
static const char *const transport_names[] = { "handle", "inline", "pipe" };

static struct {
	enum question q;
	enum peer peer;
	enum pattern pattern;
	enum transport transport;
	size_t size;
	uint64_t n;
	int cpu[2];
	uint32_t decay_ms;
	int decay_given;	/* -d: the malloc series prints it (jemalloc) */
	uint32_t burst_mib;
	uint32_t idle_ms;
	uint32_t trickle_ms;	/* rss: 0, or a trickle of allocations while idle */
	int recv_idle;		/* rss -W: idle in baton_pool_recv(), not asleep */
	uint32_t ring_frames;	/* pipeline -R: the handle ring's slots */
	const char *label;
	const char *samples;
} g = {
	.size = 4096,
	.cpu = { 0, 1 },
	.decay_ms = 100,
	.burst_mib = 256,
};

/* Shared by the two processes of a run (MAP_SHARED before fork). */
struct ctl {
	_Alignas(64) uint32_t ready;
	_Alignas(64) uint32_t go;
	_Alignas(64) uint64_t t_start;	/* consumer: after the warm-up */
	uint64_t t_end;			/* consumer: after the last one */
	uint64_t sum;			/* consumer's checksum */
	uint64_t errors;		/* order or content mismatches */
	int rc;				/* consumer: 0 or -errno */
	uint64_t slow;			/* consumer: gaps > SLOW_NS between two */
	uint64_t max_gap_ns;		/* consumer: the longest such gap */
	struct baton_ring_stats cons;	/* consumer's ring handle, at the end */
};

static void die(const char *what, int err)
{
	fprintf(stderr, "pool_bench: %s: %s\n", what, strerror(err));
	exit(err == EOPNOTSUPP ? EXIT_SKIP : 2);
}

static void fail(const char *what)
{
	fprintf(stderr, "pool_bench: FAILED: %s\n", what);
	exit(1);
}

static void name_of(char *buf, size_t len, const char *what)
{
	snprintf(buf, len, "pb%d-%s", (int)getpid(), what);
}

static void spin_until(const uint32_t *flag)
{
	unsigned int spins = 0;

	while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE))
		bench_relax(&spins);
}

static void set_flag(uint32_t *flag)
{
	__atomic_store_n(flag, 1, __ATOMIC_RELEASE);
}

/* ---- the pool's geometry */

static int shift_of(size_t size)
{
	int s = 12;

	while (((size_t)1 << s) < size)
		s++;
	return s;
}

/*
 * -q alloc's pools: no decay unless -d says (the pool series of the
 * suite run both: with decay the allocation also stores OWNED and loads
 * the reap word, Documentation/pool.rst "Idle magazines").
 */
static uint32_t alloc_decay_ms(void)
{
	return g.decay_given ? g.decay_ms : 0;
}

static struct baton_pool *pool_make(const char *name, size_t size,
				    uint32_t count, uint32_t decay_ms)
{
	struct baton_pool_params p = {
		.nr_classes = 1,
		.decay_ms = decay_ms,
		.classes = { { .buf_shift = (uint32_t)shift_of(size),
			       .count = count } },
	};
	struct baton_pool *pool;
	int rc = baton_pool_create(name, &p, &pool);

	if (rc < 0)
		die("baton_pool_create", -rc);
	return pool;
}

static struct baton_ring *ring_make(const char *name, uint32_t slots,
				    uint32_t slot_size)
{
	struct baton_ring_params p = {
		.kind = BATON_RING_SPSC,
		.slot_count = slots,
		.slot_size = slot_size,
		.mode = 0600,
		.backend = BATON_BACKEND_AUTO,
	};
	struct baton_ring *r;
	int rc = baton_ring_create(name, &p, BATON_ROLE_PRODUCER, &r);

	if (rc < 0)
		die("baton_ring_create", -rc);
	return r;
}

/* ---- question 1: alloc + free, one process */

/* One word written per buffer, so no compiler can drop a malloc/free pair. */
static inline void touch_word(void *buf, uint64_t v)
{
	*(volatile uint64_t *)buf = v;
}

/*
 * The word the k-th allocation of a burst writes: the buffer's first, or
 * for burst-spread the first in its first 4 KiB that lies in L1 set k
 * (address bits 6..11 equal to k). Buffers that start at multiples of
 * 4 KiB (baton's, and any page-aligned pool's) have their first lines in
 * one set, which 32 of them overflow; rte_mempool's 64-byte object
 * headers stagger its objects, in whatever order its cache hands them
 * out. Spread, the 32 words fall in 32 sets whatever the layout, so the
 * figure is the allocator's own.
 */
#define L1_SET_BITS	4032u	/* address bits 6..11: 64 sets of 64 bytes */

static inline __attribute__((always_inline)) void *
burst_word(void *buf, uint32_t k, bool spread)
{
	uintptr_t at = (uintptr_t)buf & L1_SET_BITS, want = (uintptr_t)k << 6;

	if (!spread)
		return buf;
	return (uint8_t *)buf + ((want - at) & L1_SET_BITS);
}

/* Inlined, as the library's fast paths are: the loop is what is timed. */
static inline __attribute__((always_inline)) uint64_t
pool_alloc_one(struct baton_pool *p)
{
	uint64_t h;
	int rc = baton_pool_alloc(p, g.size, &h);

	if (rc < 0)
		die("baton_pool_alloc", -rc);
	return h;
}

/* As pool_alloc_one(), and the buffer's address in *@buf. */
static inline __attribute__((always_inline)) uint64_t
pool_alloc_buf_one(struct baton_pool *p, void **buf)
{
	uint64_t h;
	int rc = baton_pool_alloc_buf(p, g.size, &h, buf);

	if (rc < 0)
		die("baton_pool_alloc_buf", -rc);
	return h;
}

static inline __attribute__((always_inline)) void
pool_free_one(struct baton_pool *p, uint64_t h)
{
	int rc = baton_pool_free(p, h);

	if (rc < 0)
		die("baton_pool_free", -rc);
}

static void pool_pairs(struct baton_pool *p, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		void *buf;
		uint64_t h = pool_alloc_buf_one(p, &buf);

		touch_word(buf, i);
		pool_free_one(p, h);
	}
}

static inline __attribute__((always_inline)) void
pool_bursts_at(struct baton_pool *p, uint64_t n, bool spread)
{
	uint64_t h[BURST];

	for (uint64_t i = 0; i < n; i += BURST) {
		for (uint32_t k = 0; k < BURST; k++) {
			void *buf;

			h[k] = pool_alloc_buf_one(p, &buf);
			touch_word(burst_word(buf, k, spread), i + k);
		}
		for (uint32_t k = 0; k < BURST; k++)
			pool_free_one(p, h[k]);
	}
}

/*
 * Each peer's burst loop is written once (*_bursts_at) and inlined twice:
 * burst's copy has no trace of the spread, so its figure is what it was
 * before burst-spread existed.
 */
static void pool_bursts(struct baton_pool *p, uint64_t n)
{
	pool_bursts_at(p, n, false);
}

static void pool_bursts_spread(struct baton_pool *p, uint64_t n)
{
	pool_bursts_at(p, n, true);
}

static double pool_local(void)
{
	char name[BATON_NAME_MAX];
	struct baton_pool *p;
	void (*run)(struct baton_pool *, uint64_t) =
		g.pattern == PAT_SPREAD ? pool_bursts_spread :
		g.pattern == PAT_BURST	? pool_bursts :
					  pool_pairs;
	uint64_t t0, t1;

	name_of(name, sizeof(name), "pool");
	p = pool_make(name, g.size, POOL_COUNT, alloc_decay_ms());
	baton_pool_unlink(name);
	run(p, WARM_OPS);
	t0 = bench_now_ns();
	run(p, g.n);
	t1 = bench_now_ns();
	baton_pool_close(p);
	return (double)(t1 - t0) / (double)g.n;
}

static void *malloc_one(void)
{
	void *b = malloc(g.size);

	if (!b)
		die("malloc", ENOMEM);
	return b;
}

static void malloc_pairs(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		void *b = malloc_one();

		touch_word(b, i);
		free(b);
	}
}

static inline __attribute__((always_inline)) void
malloc_bursts_at(uint64_t n, bool spread)
{
	void *b[BURST];

	for (uint64_t i = 0; i < n; i += BURST) {
		for (uint32_t k = 0; k < BURST; k++) {
			b[k] = malloc_one();
			touch_word(burst_word(b[k], k, spread), i + k);
		}
		for (uint32_t k = 0; k < BURST; k++)
			free(b[k]);
	}
}

static void malloc_bursts(uint64_t n)
{
	malloc_bursts_at(n, false);
}

static void malloc_bursts_spread(uint64_t n)
{
	malloc_bursts_at(n, true);
}

static double malloc_local(void)
{
	void (*run)(uint64_t) =
		g.pattern == PAT_SPREAD ? malloc_bursts_spread :
		g.pattern == PAT_BURST	? malloc_bursts :
					  malloc_pairs;
	uint64_t t0, t1;

	run(WARM_OPS);
	t0 = bench_now_ns();
	run(g.n);
	t1 = bench_now_ns();
	return (double)(t1 - t0) / (double)g.n;
}

/* ---- question 1: two processes, baton */

static struct ctl *ctl_make(void)
{
	struct ctl *c = bench_shared_alloc(sizeof(*c));

	memset(c, 0, sizeof(*c));
	return c;
}

/* fork() a consumer pinned to cpu[1]; the parent pins itself to cpu[0]. */
static pid_t fork_consumer(struct ctl *c, void (*child)(struct ctl *, void *),
			   void *arg)
{
	pid_t parent = getpid(), pid = fork();

	if (pid < 0)
		die("fork", errno);
	if (pid == 0) {
		bench_die_with_parent(parent);
		bench_pin(g.cpu[1]);
		child(c, arg);
		_exit(0);
	}
	bench_pin(g.cpu[0]);
	spin_until(&c->ready);
	return pid;
}

static void reap(pid_t pid, struct ctl *c)
{
	int st;

	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		fail("the consumer process did not exit cleanly");
	if (c->rc < 0)
		die("consumer", -c->rc);
	if (c->errors)
		fail("the consumer saw wrong buffers");
}

/* The consumer's diagnostics: how often, and how long, it waited. */
static void gap_note(struct ctl *c, uint64_t *last)
{
	uint64_t now = bench_now_ns();

	if (*last && now - *last > SLOW_NS) {
		c->slow++;
		if (now - *last > c->max_gap_ns)
			c->max_gap_ns = now - *last;
	}
	*last = now;
}

struct xnames {
	char pool[BATON_NAME_MAX];
	char ring[BATON_NAME_MAX];
};

/*
 * The xproc consumers note gaps once every XGAP_EVERY buffers, both
 * peers alike: a clock read per buffer would cost about as much as the
 * hand-off it watches.
 */
#define XGAP_EVERY	64u

/*
 * The xproc hand-off busy-polls on both sides, as the rte_ring peer
 * does: a look that finds no message (or no room) relaxes and looks
 * again, never parking. The blocking forms' spinning and parking is a
 * question of its own (bench/rate.c), and here it would be asked of
 * baton alone.
 */
static int pool_recv_polling(struct baton_ring *r, struct baton_pool *p,
			     uint64_t *h, uint64_t *len)
{
	unsigned int spins = 0;
	int rc;

	while ((rc = baton_pool_recv(r, p, h, len, 0)) == -ETIMEDOUT)
		bench_relax(&spins);
	return rc;
}

static int pool_send_polling(struct baton_ring *r, struct baton_pool *p,
			     uint64_t h)
{
	unsigned int spins = 0;
	int rc;

	while ((rc = baton_pool_send(r, p, h, g.size, 0)) == -ETIMEDOUT)
		bench_relax(&spins);
	return rc;
}

static void pool_xproc_child(struct ctl *c, void *arg)
{
	const struct xnames *nm = arg;
	struct baton_pool *p;
	struct baton_ring *r;
	uint64_t h, len, last = 0;

	c->rc = baton_pool_open(nm->pool, &p);
	if (!c->rc)
		c->rc = baton_ring_open(nm->ring, BATON_ROLE_CONSUMER,
					BATON_BACKEND_AUTO, &r);
	set_flag(&c->ready);
	if (c->rc)
		return;
	for (uint64_t i = 0; i < WARM_OPS + g.n; i++) {
		if (i == WARM_OPS)
			c->t_start = bench_now_ns();
		if (i >= WARM_OPS && !(i % XGAP_EVERY))
			gap_note(c, &last);
		c->rc = pool_recv_polling(r, p, &h, &len);
		if (c->rc)
			return;
		c->errors += *(volatile uint64_t *)baton_pool_ptr(p, h) != i;
		c->rc = baton_pool_free(p, h);
		if (c->rc)
			return;
	}
	c->t_end = bench_now_ns();
	baton_ring_stats(r, &c->cons);
	baton_ring_close(r);
	baton_pool_close(p);
}

/* Allocations that found the class empty (diagnostics). */
static uint64_t alloc_empty;

/*
 * A bounded wait for a pool that stays empty. The clock is read only once
 * an allocation has failed: a clock read per allocation would cost more
 * than the allocation.
 */
static void empty_wait(uint64_t *deadline, unsigned int *spins,
		       const char *what)
{
	if (!*deadline)
		*deadline = bench_now_ns() + (uint64_t)WAIT_NS;
	else if (bench_now_ns() > *deadline)
		fail(what);
	bench_relax(spins);
}

/* An empty class while the consumer still holds buffers: wait, bounded. */
static uint64_t pool_alloc_wait(struct baton_pool *p)
{
	uint64_t h, deadline = 0;
	unsigned int spins = 0;
	int rc;

	while ((rc = baton_pool_alloc(p, g.size, &h)) == -ENOMEM) {
		if (!deadline)
			alloc_empty++;
		empty_wait(&deadline, &spins,
			   "the pool stayed empty: buffers freed by the other process never came back");
	}
	if (rc < 0)
		die("baton_pool_alloc", -rc);
	return h;
}

/*
 * What the slow paths did, on stderr: the suite keeps it beside the run.
 * Parks and wakes are the ring's syscalls (the pool makes none on a warm
 * pool), so strace's count can be told apart.
 */
static void diag(const char *what, const struct ctl *c, struct baton_ring *r)
{
	struct baton_ring_stats prod = { 0 };

	if (r)
		baton_ring_stats(r, &prod);
	fprintf(stderr,
		"# %s %zu: consumer waits > %llu us: %llu (longest %.0f us); producer: empty pool %llu, parks %llu, wakes %llu; consumer: parks %llu, wakes %llu\n",
		what, g.size, SLOW_NS / 1000,
		(unsigned long long)c->slow, (double)c->max_gap_ns / 1e3,
		(unsigned long long)alloc_empty,
		(unsigned long long)prod.park_calls,
		(unsigned long long)prod.wake_calls,
		(unsigned long long)c->cons.park_calls,
		(unsigned long long)c->cons.wake_calls);
}

static double pool_xproc(void)
{
	struct ctl *c = ctl_make();
	struct xnames nm;
	struct baton_pool *p;
	struct baton_ring *r;
	pid_t pid;
	int rc;

	name_of(nm.pool, sizeof(nm.pool), "xpool");
	name_of(nm.ring, sizeof(nm.ring), "xring");
	p = pool_make(nm.pool, g.size, POOL_COUNT, alloc_decay_ms());
	r = ring_make(nm.ring, XRING_SLOTS, 16);
	pid = fork_consumer(c, pool_xproc_child, &nm);
	baton_pool_unlink(nm.pool);
	baton_ring_unlink(nm.ring, BATON_BACKEND_AUTO);
	for (uint64_t i = 0; i < WARM_OPS + g.n; i++) {
		uint64_t h = pool_alloc_wait(p);

		touch_word(baton_pool_ptr(p, h), i);
		rc = pool_send_polling(r, p, h);
		if (rc < 0)
			die("baton_pool_send", -rc);
	}
	reap(pid, c);
	diag("xproc", c, r);
	baton_ring_close(r);
	baton_pool_close(p);
	return (double)(c->t_end - c->t_start) / (double)g.n;
}

/* ---- question 1: DPDK rte_mempool */

#ifdef HAVE_DPDK
static void rte_up(void)
{
	char *argv[] = { "pool_bench", "--no-huge", "--no-pci", "--no-shconf",
			 "--no-telemetry", "--log-level=2", "-l", "0", "-m", "256",
			 NULL };

	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) < 0)
		die("rte_eal_init", rte_errno);
}

static struct rte_mempool *rte_pool(void)
{
	struct rte_mempool *mp = rte_mempool_create("pb-mempool", POOL_COUNT,
						    (unsigned int)g.size,
						    CACHE_SIZE, 0, NULL, NULL,
						    NULL, NULL, SOCKET_ID_ANY, 0);

	if (!mp)
		die("rte_mempool_create", rte_errno);
	return mp;
}

static void *rte_get_wait(struct rte_mempool *mp, struct rte_mempool_cache *cache)
{
	uint64_t deadline = 0;
	unsigned int spins = 0;
	void *obj;

	while (rte_mempool_generic_get(mp, &obj, 1, cache) < 0)
		empty_wait(&deadline, &spins,
			   "the mempool stayed empty: objects freed by the other process never came back");
	return obj;
}

static void rte_pairs(struct rte_mempool *mp, struct rte_mempool_cache *cache,
		      uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		void *obj = rte_get_wait(mp, cache);

		touch_word(obj, i);
		rte_mempool_generic_put(mp, &obj, 1, cache);
	}
}

static inline __attribute__((always_inline)) void
rte_bursts_at(struct rte_mempool *mp, struct rte_mempool_cache *cache,
	      uint64_t n, bool spread)
{
	void *obj[BURST];

	for (uint64_t i = 0; i < n; i += BURST) {
		for (uint32_t k = 0; k < BURST; k++) {
			obj[k] = rte_get_wait(mp, cache);
			touch_word(burst_word(obj[k], k, spread), i + k);
		}
		/* One at a time, as baton's frees: no bulk advantage. */
		for (uint32_t k = 0; k < BURST; k++)
			rte_mempool_generic_put(mp, &obj[k], 1, cache);
	}
}

static void rte_bursts(struct rte_mempool *mp, struct rte_mempool_cache *cache,
		       uint64_t n)
{
	rte_bursts_at(mp, cache, n, false);
}

static void rte_bursts_spread(struct rte_mempool *mp,
			      struct rte_mempool_cache *cache, uint64_t n)
{
	rte_bursts_at(mp, cache, n, true);
}

static double rte_local(void)
{
	struct rte_mempool *mp = rte_pool();
	struct rte_mempool_cache *cache =
		rte_mempool_default_cache(mp, rte_lcore_id());
	void (*run)(struct rte_mempool *, struct rte_mempool_cache *, uint64_t) =
		g.pattern == PAT_SPREAD ? rte_bursts_spread :
		g.pattern == PAT_BURST	? rte_bursts :
					  rte_pairs;
	uint64_t t0, t1;

	if (!cache)
		die("rte_mempool_default_cache", EINVAL);
	bench_pin(g.cpu[0]);
	run(mp, cache, WARM_OPS);
	t0 = bench_now_ns();
	run(mp, cache, g.n);
	t1 = bench_now_ns();
	rte_mempool_free(mp);
	return (double)(t1 - t0) / (double)g.n;
}

struct rte_x {
	struct rte_mempool *mp;
	struct rte_ring *ring;
	struct rte_mempool_cache *cache;	/* the consumer's */
};

static void rte_xproc_child(struct ctl *c, void *arg)
{
	const struct rte_x *x = arg;
	unsigned int spins = 0;
	uint64_t last = 0;
	void *obj;

	set_flag(&c->ready);
	for (uint64_t i = 0; i < WARM_OPS + g.n; i++) {
		if (i == WARM_OPS)
			c->t_start = bench_now_ns();
		if (i >= WARM_OPS && !(i % XGAP_EVERY))
			gap_note(c, &last);
		while (rte_ring_sc_dequeue(x->ring, &obj) < 0)
			bench_relax(&spins);
		c->errors += *(volatile uint64_t *)obj != i;
		rte_mempool_generic_put(x->mp, &obj, 1, x->cache);
	}
	c->t_end = bench_now_ns();
}

static double rte_xproc(void)
{
	struct ctl *c = ctl_make();
	struct rte_x x = { .mp = rte_pool() };
	struct rte_mempool_cache *mine;
	unsigned int spins = 0;
	pid_t pid;

	/*
	 * The per-lcore caches belong to lcore 0 in both processes (the
	 * child inherits the parent's lcore id), so each process takes a
	 * cache of its own, as two lcores would have.
	 */
	mine = rte_mempool_cache_create(CACHE_SIZE, SOCKET_ID_ANY);
	x.cache = rte_mempool_cache_create(CACHE_SIZE, SOCKET_ID_ANY);
	x.ring = rte_ring_create("pb-ring", XRING_SLOTS, SOCKET_ID_ANY,
				 RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (!mine || !x.cache || !x.ring)
		die("rte_mempool_cache_create/rte_ring_create", rte_errno);
	pid = fork_consumer(c, rte_xproc_child, &x);
	for (uint64_t i = 0; i < WARM_OPS + g.n; i++) {
		void *obj = rte_get_wait(x.mp, mine);

		touch_word(obj, i);
		while (rte_ring_sp_enqueue(x.ring, obj) < 0)
			bench_relax(&spins);
	}
	reap(pid, c);
	rte_mempool_cache_free(mine);
	rte_mempool_cache_free(x.cache);
	rte_ring_free(x.ring);
	rte_mempool_free(x.mp);
	return (double)(c->t_end - c->t_start) / (double)g.n;
}
#endif /* HAVE_DPDK */

#ifdef HAVE_ICEORYX
/*
 * iceoryx 2.0: a loan of a chunk from RouDi's shared mempools and its
 * release, unpublished, through one publisher (its C binding). 16 KiB
 * chunks serve 4 KiB loans and 128 KiB ones 64 KiB, in RouDi's default
 * configuration. A publisher may hold 8 loans at once, so no burst.
 */
static void iox_pairs(iox_pub_t pub, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		void *chunk;

		if (iox_pub_loan_chunk(pub, &chunk, (uint32_t)g.size) !=
		    AllocationResult_SUCCESS)
			die("iox_pub_loan_chunk", ENOMEM);
		touch_word(chunk, i);
		iox_pub_release_chunk(pub, chunk);
	}
}

static double iox_local(void)
{
	iox_pub_options_t o;
	iox_pub_storage_t st;
	char rt[64];
	iox_pub_t pub;
	uint64_t t0, t1;

	snprintf(rt, sizeof(rt), "baton-pool-bench-%d", (int)getpid());
	iox_runtime_init(rt);
	iox_pub_options_init(&o);
	o.historyCapacity = 0;
	pub = iox_pub_init(&st, "baton-pool-bench", rt, "alloc", &o);
	iox_pairs(pub, WARM_OPS);
	t0 = bench_now_ns();
	iox_pairs(pub, g.n);
	t1 = bench_now_ns();
	iox_pub_deinit(pub);
	iox_runtime_shutdown();
	return (double)(t1 - t0) / (double)g.n;
}
#endif

static int q_alloc_iox(double *ns)
{
#ifdef HAVE_ICEORYX
	struct stat st;

	if (g.pattern != PAT_PAIR) {
		fprintf(stderr, "pool_bench: iceoryx: pair only (8 loans per publisher; skip)\n");
		return EXIT_SKIP;
	}
	/* Without its daemon iox_runtime_init() waits, then aborts. */
	if (stat("/dev/shm/iceoryx_mgmt", &st)) {
		fprintf(stderr, "pool_bench: iceoryx: RouDi is not running (skip)\n");
		return EXIT_SKIP;
	}
	bench_pin(g.cpu[0]);
	*ns = iox_local();
	return 0;
#else
	(void)ns;
	fprintf(stderr, "pool_bench: built without iceoryx (skip)\n");
	return EXIT_SKIP;
#endif
}

static int q_alloc(void)
{
	double ns;

	if (!g.n)
		g.n = 2000000;
	g.n = (g.n + BURST - 1) / BURST * BURST;
	if (g.peer == P_MALLOC && g.pattern == PAT_XPROC) {
		fprintf(stderr, "pool_bench: malloc has no cross-process form (skip)\n");
		return EXIT_SKIP;
	}
	if (g.peer == P_IOX) {
		int rc = q_alloc_iox(&ns);

		if (rc)
			return rc;
	} else if (g.peer == P_RTE) {
#ifdef HAVE_DPDK
		rte_up();
		ns = g.pattern == PAT_XPROC ? rte_xproc() : rte_local();
		rte_eal_cleanup();
#else
		fprintf(stderr, "pool_bench: built without DPDK (skip)\n");
		return EXIT_SKIP;
#endif
	} else {
		bench_pin(g.cpu[0]);
		if (g.peer == P_MALLOC)
			ns = malloc_local();
		else
			ns = g.pattern == PAT_XPROC ? pool_xproc() : pool_local();
	}
	printf("alloc,%s,%s,%zu,%llu,%.2f\n", peer_names[g.peer],
	       pattern_names[g.pattern], g.size, (unsigned long long)g.n, ns);
	return 0;
}

/* ---- question 2: the pipeline */

/* Every word written, summed as it goes: the producer's side. */
static uint64_t frame_fill(uint64_t *w, size_t size, uint64_t seq)
{
	uint64_t sum = 0, base = seq * GOLDEN;

	for (size_t i = 0; i < size / 8; i++) {
		w[i] = base + i;
		sum += base + i;
	}
	return sum;
}

/* Every word read: the consumer's side; word 0 says the order. */
static uint64_t frame_sum(const uint64_t *w, size_t size, uint64_t seq,
			  uint64_t *errors)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < size / 8; i++)
		sum += w[i];
	*errors += w[0] != seq * GOLDEN;
	return sum;
}

struct pipe_run {
	char pool[BATON_NAME_MAX];
	char ring[BATON_NAME_MAX];
	int fd[2];
	uint64_t warm;
	uint32_t part;		/* inline: bytes per message */
};

static void handle_consumer(struct ctl *c, const struct pipe_run *pr)
{
	struct baton_pool *p;
	struct baton_ring *r;
	uint64_t h, len, s;

	uint64_t last = 0;

	c->rc = baton_pool_open(pr->pool, &p);
	if (!c->rc)
		c->rc = baton_ring_open(pr->ring, BATON_ROLE_CONSUMER,
					BATON_BACKEND_AUTO, &r);
	set_flag(&c->ready);
	if (c->rc)
		return;
	for (uint64_t i = 0; i < pr->warm + g.n; i++) {
		if (i == pr->warm)
			c->t_start = bench_now_ns();
		if (i >= pr->warm)
			gap_note(c, &last);
		c->rc = baton_pool_recv(r, p, &h, &len, WAIT_NS);
		if (c->rc)
			return;
		s = frame_sum(baton_pool_ptr(p, h), len, i, &c->errors);
		c->sum += i >= pr->warm ? s : 0;
		c->rc = baton_pool_free(p, h);
		if (c->rc)
			return;
	}
	c->t_end = bench_now_ns();
	baton_ring_stats(r, &c->cons);
	baton_ring_close(r);
	baton_pool_close(p);
}

static void inline_consumer(struct ctl *c, const struct pipe_run *pr)
{
	uint64_t *frame = malloc(g.size), s, last = 0;
	struct baton_ring *r;

	if (!frame)
		c->rc = -ENOMEM;
	else
		c->rc = baton_ring_open(pr->ring, BATON_ROLE_CONSUMER,
					BATON_BACKEND_AUTO, &r);
	set_flag(&c->ready);
	if (c->rc)
		return;
	for (uint64_t i = 0; i < pr->warm + g.n; i++) {
		if (i == pr->warm)
			c->t_start = bench_now_ns();
		if (i >= pr->warm)
			gap_note(c, &last);
		for (size_t off = 0; off < g.size; off += pr->part) {
			c->rc = baton_spsc_pop(r, (char *)frame + off, pr->part,
					       WAIT_NS);
			if (c->rc)
				return;
		}
		s = frame_sum(frame, g.size, i, &c->errors);
		c->sum += i >= pr->warm ? s : 0;
	}
	c->t_end = bench_now_ns();
	baton_ring_stats(r, &c->cons);
	baton_ring_close(r);
	free(frame);
}

static void pipe_consumer(struct ctl *c, const struct pipe_run *pr)
{
	uint64_t *frame = malloc(g.size), s, last = 0;

	close(pr->fd[1]);
	c->rc = frame ? 0 : -ENOMEM;
	set_flag(&c->ready);
	if (c->rc)
		return;
	for (uint64_t i = 0; i < pr->warm + g.n; i++) {
		if (i == pr->warm)
			c->t_start = bench_now_ns();
		if (i >= pr->warm)
			gap_note(c, &last);
		c->rc = bench_read_full(pr->fd[0], frame, g.size);
		if (c->rc)
			return;
		s = frame_sum(frame, g.size, i, &c->errors);
		c->sum += i >= pr->warm ? s : 0;
	}
	c->t_end = bench_now_ns();
	free(frame);
}

static void pipeline_child(struct ctl *c, void *arg)
{
	const struct pipe_run *pr = arg;

	if (g.transport == T_HANDLE)
		handle_consumer(c, pr);
	else if (g.transport == T_INLINE)
		inline_consumer(c, pr);
	else
		pipe_consumer(c, pr);
}

/* The producer's frames; returns the sum of the frames after the warm-up. */
static uint64_t handle_produce(const struct pipe_run *pr, struct baton_pool *p,
			       struct baton_ring *r)
{
	uint64_t sum = 0, s;
	int rc;

	for (uint64_t i = 0; i < pr->warm + g.n; i++) {
		uint64_t h = pool_alloc_wait(p);

		s = frame_fill(baton_pool_ptr(p, h), g.size, i);
		sum += i >= pr->warm ? s : 0;
		rc = baton_pool_send(r, p, h, g.size, WAIT_NS);
		if (rc < 0)
			die("baton_pool_send", -rc);
	}
	return sum;
}

static uint64_t copy_produce(const struct pipe_run *pr, struct baton_ring *r)
{
	uint64_t *frame = malloc(g.size), sum = 0, s;
	int rc = 0;

	if (!frame)
		die("malloc", ENOMEM);
	for (uint64_t i = 0; i < pr->warm + g.n; i++) {
		s = frame_fill(frame, g.size, i);
		sum += i >= pr->warm ? s : 0;
		if (!r) {
			rc = bench_write_full(pr->fd[1], frame, g.size);
			if (rc)
				die("pipe write", -rc);
			continue;
		}
		for (size_t off = 0; off < g.size; off += pr->part) {
			rc = baton_spsc_push(r, (char *)frame + off, pr->part,
					     WAIT_NS);
			if (rc)
				die("baton_spsc_push", -rc);
		}
	}
	free(frame);
	return sum;
}

static uint32_t pow2_floor(uint64_t v)
{
	uint32_t p = 1;

	while ((uint64_t)p * 2 <= v)
		p *= 2;
	return p;
}

static int q_pipeline(void)
{
	struct ctl *c = ctl_make();
	struct pipe_run pr = { .part = (uint32_t)(g.size < 65536 ? g.size : 65536) };
	struct baton_pool *p = NULL;
	struct baton_ring *r = NULL;
	uint32_t frames, count, slots;
	char what[32];
	uint64_t sum;
	double ns;
	pid_t pid;

	if (!g.n)
		g.n = (512ull << 20) / g.size;
	/*
	 * The ring, the consumer's magazine and a flush in flight, the
	 * producer's magazine and a refill: twice the ring, four magazines.
	 * The free queue is FIFO, so frames by handle cycle through every
	 * buffer of the pool: warm up with that many frames, so each buffer
	 * has had its pages faulted in before the clock starts.
	 */
	frames = pow2_floor(INFLIGHT_BYTES / g.size);
	frames = frames < PIPE_RING_MIN ? PIPE_RING_MIN : frames;
	if (g.ring_frames && g.transport == T_HANDLE)
		frames = pow2_floor(g.ring_frames) < 2 ? 2 : pow2_floor(g.ring_frames);
	count = 2 * frames + 4 * CACHE_SIZE;
	pr.warm = count;
	name_of(pr.pool, sizeof(pr.pool), "ppool");
	name_of(pr.ring, sizeof(pr.ring), "pring");
	if (g.transport == T_HANDLE) {
		p = pool_make(pr.pool, g.size, count, 0);
		r = ring_make(pr.ring, frames, 16);
	} else if (g.transport == T_INLINE) {
		slots = pow2_floor(INFLIGHT_BYTES / pr.part);
		r = ring_make(pr.ring, slots < 2 ? 2 : slots, pr.part);
	} else {
		if (pipe(pr.fd))
			die("pipe", errno);
		if (fcntl(pr.fd[1], F_SETPIPE_SZ, PIPE_BYTES) < 0)
			fprintf(stderr, "pool_bench: F_SETPIPE_SZ: %s (default size)\n",
				strerror(errno));
	}
	pid = fork_consumer(c, pipeline_child, &pr);
	if (p)
		baton_pool_unlink(pr.pool);
	if (r)
		baton_ring_unlink(pr.ring, BATON_BACKEND_AUTO);
	if (g.transport == T_PIPE)
		close(pr.fd[0]);
	if (g.transport == T_HANDLE)
		sum = handle_produce(&pr, p, r);
	else
		sum = copy_produce(&pr, g.transport == T_INLINE ? r : NULL);
	reap(pid, c);
	if (c->sum != sum)
		fail("checksum mismatch between producer and consumer");
	if (g.ring_frames && g.transport == T_HANDLE)
		snprintf(what, sizeof(what), "handle-r%u", frames);
	else
		snprintf(what, sizeof(what), "%s", transport_names[g.transport]);
	diag(what, c, r);
	if (r)
		baton_ring_close(r);
	baton_pool_close(p);
	ns = (double)(c->t_end - c->t_start) / (double)g.n;
	printf("pipeline,%s,%zu,%llu,%.1f,%.1f,%zu\n", what,
	       g.size, (unsigned long long)g.n, ns, (double)g.size * 1e3 / ns,
	       g.transport == T_INLINE ? g.size / pr.part : 1);
	return 0;
}

/* ---- question 3: resident memory over time */

struct sampler {
	uint64_t t0;
	uint64_t *t_ns;
	uint32_t *kib;
	uint32_t n, cap;
	uint32_t stop;
};

/* RssAnon + RssShmem of this process, in KiB; 0 if unreadable. */
static uint32_t rss_kib(void)
{
	static char buf[4096];
	uint32_t total = 0;
	ssize_t got;
	char *s;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (got <= 0)
		return 0;
	buf[got] = '\0';
	s = strstr(buf, "RssAnon:");
	if (s)
		total += (uint32_t)strtoul(s + 8, NULL, 10);
	s = strstr(buf, "RssShmem:");
	if (s)
		total += (uint32_t)strtoul(s + 9, NULL, 10);
	return total;
}

/*
 * The exact RSS in KiB: smaps_rollup's Rss, summed over the page tables
 * when read (anonymous, file and shmem pages alike); 0 if unreadable.
 */
static uint32_t exact_rss_kib(void)
{
	char line[256];
	uint32_t kib = 0;
	FILE *f = fopen("/proc/self/smaps_rollup", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Rss:", 4)) {
			kib = (uint32_t)strtoul(line + 4, NULL, 10);
			break;
		}
	fclose(f);
	return kib;
}

/* The exact RSS read at a given time after a burst's last free. */
struct rss_probe {
	uint64_t at_ns;		/* when to read, bench_now_ns() */
	uint64_t late_ns;	/* how late it was read */
	uint32_t kib;		/* 0: not read */
};

static void probe_if_due(struct rss_probe *pr)
{
	uint64_t now = bench_now_ns();

	if (pr->kib || now < pr->at_ns)
		return;
	pr->kib = exact_rss_kib();
	pr->late_ns = now - pr->at_ns;
}

static void *sampler_main(void *arg)
{
	struct sampler *sp = arg;
	struct timespec ts = { 0, SAMPLE_MS * 1000000L };

	while (!__atomic_load_n(&sp->stop, __ATOMIC_ACQUIRE) && sp->n < sp->cap) {
		sp->t_ns[sp->n] = bench_now_ns() - sp->t0;
		sp->kib[sp->n] = rss_kib();
		__atomic_store_n(&sp->n, sp->n + 1, __ATOMIC_RELEASE);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* What the series allocates: handles in a pool, or malloc'd blocks. */
struct rss_heap {
	struct baton_pool *pool;
	struct baton_ring *input;	/* -W: the ring idle() waits on */
	uint64_t *h;
	void **blk;
	uint32_t count;
};

static void burst(struct rss_heap *hp)
{
	for (uint32_t i = 0; i < hp->count; i++) {
		char *b;

		if (hp->pool) {
			hp->h[i] = pool_alloc_one(hp->pool);
			b = baton_pool_ptr(hp->pool, hp->h[i]);
		} else {
			b = hp->blk[i] = malloc(RSS_BUF);
			if (!b)
				die("malloc", ENOMEM);
		}
		for (uint32_t off = 0; off < RSS_BUF; off += 4096)
			b[off] = (char)i;
	}
}

static void unburst(struct rss_heap *hp)
{
	for (uint32_t i = 0; i < hp->count; i++) {
		if (hp->pool)
			pool_free_one(hp->pool, hp->h[i]);
		else
			free(hp->blk[i]);
	}
}

static void sleep_ms(uint32_t ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * The idle phase: asleep, or with -T a trickle of TRICKLE allocations and
 * frees every trickle_ms, enough to pass through the pool's slow paths
 * (refill and flush, where the memfd backend decays) and jemalloc's
 * (which decays on allocator activity without its background thread).
 */
/* -W: wait in baton_pool_recv() until @until (bench_now_ns()); none comes. */
static void recv_until(struct rss_heap *hp, uint64_t until)
{
	uint64_t h, len, now;
	int rc;

	while ((now = bench_now_ns()) < until) {
		rc = baton_pool_recv(hp->input, hp->pool, &h, &len,
				     (int64_t)(until - now));
		if (rc != -ETIMEDOUT)
			die("baton_pool_recv", rc < 0 ? -rc : EPROTO);
	}
}

static void idle(struct rss_heap *hp, uint32_t ms, struct rss_probe *pr)
{
	uint64_t end = bench_now_ns() + (uint64_t)ms * 1000000ull;
	struct rss_heap t = *hp;

	if (hp->input) {
		recv_until(hp, pr->at_ns);
		probe_if_due(pr);
		recv_until(hp, end);
		return;
	}
	if (!g.trickle_ms) {
		while (bench_now_ns() < pr->at_ns)
			sleep_ms(1);
		probe_if_due(pr);
		while (bench_now_ns() < end)
			sleep_ms(1);
		return;
	}
	t.count = TRICKLE;
	while (bench_now_ns() + (uint64_t)g.trickle_ms * 1000000ull < end) {
		sleep_ms(g.trickle_ms);
		probe_if_due(pr);
		burst(&t);
		unburst(&t);
	}
	while (bench_now_ns() < end)
		sleep_ms(1);
	probe_if_due(pr);
}

/* ms from t_end until the first sample at or under limit; -1: never. */
static double settle_ms(const struct sampler *sp, uint64_t t_end,
			uint64_t t_stop, double limit)
{
	for (uint32_t i = 0; i < sp->n; i++)
		if (sp->t_ns[i] >= t_end && sp->t_ns[i] <= t_stop &&
		    sp->kib[i] <= limit)
			return (double)(sp->t_ns[i] - t_end) / 1e6;
	return -1;
}

static void samples_write(const struct sampler *sp, const char *label)
{
	FILE *f;

	if (!g.samples)
		return;
	f = fopen(g.samples, "w");
	if (!f)
		die(g.samples, errno);
	fprintf(f, "# %s: t_ms rss_kib (RssAnon + RssShmem)\n", label);
	for (uint32_t i = 0; i < sp->n; i++)
		fprintf(f, "%.1f %u\n", (double)sp->t_ns[i] / 1e6, sp->kib[i]);
	fclose(f);
}

static int q_rss(void)
{
	struct baton_ring *input_prod = NULL;
	struct sampler sp = { 0 };
	struct rss_heap hp = { .count = (uint32_t)(((uint64_t)g.burst_mib << 20) / RSS_BUF) };
	const char *label = g.label ? g.label : peer_names[g.peer];
	uint64_t mark[5];	/* burst 1 start, burst 1 freed, 2 start, 2 freed, end */
	uint64_t took[2];	/* each burst's allocations and first touches */
	struct rss_probe probe[2] = { { 0 } };
	uint32_t exact_base, probe_ms = 2 * g.decay_ms;
	uint32_t pre_ms = 100, hold_ms = 50, base = 0, peak = 0, nbase = 0;
	char name[BATON_NAME_MAX];
	pthread_t th;

	if (!g.idle_ms)
		g.idle_ms = g.decay_ms * 6 > 600 ? g.decay_ms * 6 : 600;
	sp.cap = (pre_ms + 2 * hold_ms + 2 * g.idle_ms) / SAMPLE_MS + 20000;
	sp.t_ns = calloc(sp.cap, sizeof(*sp.t_ns));
	sp.kib = calloc(sp.cap, sizeof(*sp.kib));
	hp.h = calloc(hp.count, sizeof(*hp.h));
	hp.blk = calloc(hp.count, sizeof(*hp.blk));
	if (!sp.t_ns || !sp.kib || !hp.h || !hp.blk)
		die("calloc", ENOMEM);
	/* Touched now, so the sampler's own arrays are in the baseline. */
	memset(sp.t_ns, 0, sp.cap * sizeof(*sp.t_ns));
	memset(sp.kib, 0, sp.cap * sizeof(*sp.kib));
	memset(hp.h, 0, hp.count * sizeof(*hp.h));
	memset(hp.blk, 0, hp.count * sizeof(*hp.blk));
	if (g.peer == P_POOL || g.peer == P_STATIC) {
		name_of(name, sizeof(name), "rss");
		hp.pool = pool_make(name, RSS_BUF, hp.count,
				    g.peer == P_POOL ? g.decay_ms : 0);
		baton_pool_unlink(name);
	}
	if (g.recv_idle) {
		int rc;

		if (!hp.pool)
			die("-W: a pool series only", EINVAL);
		name_of(name, sizeof(name), "rss-in");
		input_prod = ring_make(name, 16, 16);
		rc = baton_ring_open(name, BATON_ROLE_CONSUMER,
				     BATON_BACKEND_AUTO, &hp.input);
		if (rc < 0)
			die("baton_ring_open", -rc);
		baton_ring_unlink(name, BATON_BACKEND_AUTO);
	}
	sp.t0 = bench_now_ns();
	if (pthread_create(&th, NULL, sampler_main, &sp))
		die("pthread_create", EAGAIN);
	sleep_ms(pre_ms);
	exact_base = exact_rss_kib();
	for (int b = 0; b < 2; b++) {
		mark[2 * b] = bench_now_ns() - sp.t0;
		burst(&hp);
		took[b] = bench_now_ns() - sp.t0 - mark[2 * b];
		sleep_ms(hold_ms);
		unburst(&hp);
		mark[2 * b + 1] = bench_now_ns() - sp.t0;
		probe[b].at_ns = sp.t0 + mark[2 * b + 1] +
				 (uint64_t)probe_ms * 1000000ull;
		idle(&hp, g.idle_ms, &probe[b]);
	}
	mark[4] = bench_now_ns() - sp.t0;
	__atomic_store_n(&sp.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	for (uint32_t i = 0; i < sp.n; i++) {
		if (sp.t_ns[i] < mark[0]) {	/* the idle baseline: mean */
			base += sp.kib[i];
			nbase++;
		}
		peak = sp.kib[i] > peak ? sp.kib[i] : peak;
	}
	base = nbase ? base / nbase : 0;
	samples_write(&sp, label);
	printf("rss,%s,%u,%u,%u,%u,%u", label,
	       g.peer == P_POOL || (g.peer == P_MALLOC && g.decay_given) ?
	       g.decay_ms : 0, g.burst_mib, base, peak,
	       sp.n ? sp.kib[sp.n - 1] : 0);
	for (int b = 0; b < 2; b++) {
		uint64_t stop = mark[2 * b + 2];

		printf(",%.1f,%.1f", settle_ms(&sp, mark[2 * b + 1], stop, base * 1.05),
		       settle_ms(&sp, mark[2 * b + 1], stop,
				 base + 0.05 * (double)(peak - base)));
	}
	printf(",%u,%.1f,%.1f,%.1f,%.1f", g.idle_ms, (double)mark[1] / 1e6,
	       (double)mark[3] / 1e6, (double)took[0] / 1e6,
	       (double)took[1] / 1e6);
	printf(",%u,%u,%u,%u,%.1f,%.1f\n", probe_ms, exact_base, probe[0].kib,
	       probe[1].kib, (double)probe[0].late_ns / 1e6,
	       (double)probe[1].late_ns / 1e6);
	if (hp.input) {
		baton_ring_close(hp.input);
		baton_ring_close(input_prod);
	}
	baton_pool_close(hp.pool);
	return 0;
}

/* ---- options */

static int pick(const char *s, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	fprintf(stderr, "pool_bench: unknown value '%s'\n", s);
	exit(2);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: pool_bench -q alloc -p pool|rte|malloc -P pair|burst|burst-spread|xproc -s SIZE [-n N] [-d DECAY_MS]\n"
		"       pool_bench -q pipeline -t handle|inline|pipe -s SIZE [-n FRAMES] [-R SLOTS]\n"
		"       pool_bench -q rss -p pool|static|malloc [-d DECAY_MS] [-B MIB] [-i IDLE_MS] [-T MS | -W]\n"
		"                  [-l LABEL] [-o SAMPLES]\n"
		"       common: [-c A,B]; -h prints the CSV headers\n");
	exit(2);
}

static void headers(void)
{
	printf("alloc,peer,pattern,size,n,ns_per_op\n"
	       "pipeline,transport,size,frames,ns_per_frame,mb_per_s,msgs_per_frame\n"
	       "rss,series,decay_ms,burst_mib,base_kib,peak_kib,last_kib,"
	       "settle1_ms,settle95_1_ms,settle2_ms,settle95_2_ms,idle_ms,"
	       "burst1_end_ms,burst2_end_ms,burst1_ms,burst2_ms,probe_ms,"
	       "exact_base_kib,exact_1_kib,exact_2_kib,probe_late_1_ms,"
	       "probe_late_2_ms\n");
	exit(0);
}

static void parse(int argc, char **argv)
{
	static const char *const qs[] = { "alloc", "pipeline", "rss" };
	int o;

	while ((o = getopt(argc, argv, "q:p:P:t:s:n:c:d:B:i:T:WR:l:o:h")) != -1) {
		switch (o) {
		case 'q': g.q = (enum question)pick(optarg, qs, 3); break;
		case 'p': g.peer = (enum peer)pick(optarg, peer_names, 5); break;
		case 'P': g.pattern = (enum pattern)pick(optarg, pattern_names, 4); break;
		case 't': g.transport = (enum transport)pick(optarg, transport_names, 3); break;
		case 's': g.size = (size_t)bench_parse_count(optarg); break;
		case 'n': g.n = bench_parse_count(optarg); break;
		case 'c':
			if (bench_parse_cpus(optarg, g.cpu))
				usage();
			break;
		case 'd':
			g.decay_ms = (uint32_t)strtoul(optarg, NULL, 10);
			g.decay_given = 1;
			break;
		case 'B': g.burst_mib = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'i': g.idle_ms = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'l': g.label = optarg; break;
		case 'o': g.samples = optarg; break;
		case 'T': g.trickle_ms = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'W': g.recv_idle = 1; break;
		case 'R': g.ring_frames = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'h': headers(); break;
		default: usage();
		}
	}
	if (g.size < 8 || g.size > (4u << 20) || g.size % 8)
		usage();
	/* burst-spread writes anywhere in the buffer's first 4 KiB. */
	if (g.pattern == PAT_SPREAD && g.size < 4096)
		usage();
}

int main(int argc, char **argv)
{
	parse(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	bench_check_cpus("pool_bench", g.cpu);
	bench_watchdog(WATCHDOG_S, "pool_bench: stalled");
	signal(SIGPIPE, SIG_IGN);
	if (g.q == Q_ALLOC)
		return q_alloc();
	if (g.q == Q_PIPELINE)
		return q_pipeline();
	return q_rss();
}

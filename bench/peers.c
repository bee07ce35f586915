/* SPDX-License-Identifier: MIT */
/*
 * bench/peers.c: baton against its peers, cross-process, one measurement
 * per invocation (bench/run-suite.sh repeats it and keeps the spread).
 * Two processes (fork), the parent pinned to one CPU and the child to the
 * other. Every peer moves the same messages the same way: the producer
 * copies a message in, the consumer copies it out and checks it (word 0 is
 * the sequence number, the last word derives from it); a mismatch makes the
 * program exit 1.
 *
 *   -p PEER     clpp (bare cache-line ping-pong, rt only), baton (busy
 *               polling), baton-park (blocking forms, parks at once when
 *               empty/full: the wake path), baton-mpsc (the ticket ring, one
 *               producer, bulk calls for BATCH > 1; when the tree has
 *               it), bare (a
 *               hand-written shared SPSC ring, busy polling), efd (the same
 *               ring, a side that finds it empty/full parks in read(2) of an
 *               eventfd), futex (parks in FUTEX_WAIT), pipe, unix
 *               (socketpair, SOCK_STREAM), mq (POSIX message queue), ck
 *               (Concurrency Kit ck_ring SPSC), rte-spsc / rte-mpsc (DPDK
 *               rte_ring, SP/SC or MP/SC, rte_ring_init on MAP_SHARED
 *               memory, no EAL), iceoryx (publisher/subscriber through
 *               RouDi, which must be running; polling)
 *   -m MODE     stream (producer -> consumer, messages/s) or rt (round trip:
 *               a batch out on one channel, echoed back on another)
 *   -s SIZE     message bytes (8, 64, 1024; multiple of 8)
 *   -H          as a handle: the channel carries an 8-byte index into a
 *               shared arena that holds the SIZE-byte payload
 *   -b BATCH    messages per send/receive call (1, 32); a peer without a
 *               batch call (mq, ck, iceoryx) makes BATCH single calls
 *   -n N        stream: messages (0: calibrate to about -T ns);
 *               rt: round trips sampled (after 1000 warm-up round trips)
 *   -T NS       calibration target (default 300 ms)
 *   -c A,B      CPUs (default 0,1)
 *   -h          print the CSV header and exit
 *
 * Output: one CSV line (see -h). cpu_ns_per_msg is user+system time of
 * both processes over the timed window (getrusage) per message: a busy
 * poller costs its whole CPU. Syscalls per message are counted from the
 * outside (run-suite.sh: strace -f -c over N and 2N messages).
 */
#define _GNU_SOURCE
#include "bench.h"

#include <baton.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/futex.h>
#include <mqueue.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef HAVE_CK
#include <ck_ring.h>
#endif
#ifdef HAVE_DPDK
#include <rte_ring.h>
#include <rte_ring_elem.h>
#endif
#ifdef HAVE_ICEORYX
#include "iceoryx_binding_c/publisher.h"
#include "iceoryx_binding_c/runtime.h"
#include "iceoryx_binding_c/subscriber.h"
#endif

#define GOLDEN		0x9e3779b97f4a7c15ull
#define RING_SLOTS	4096u
#define ARENA_SLOTS	32768u
#define BATCH_MAX	32u
#define WARM_RT		1000u
#define WATCHDOG_S	300

enum { ROLE_PROD, ROLE_CONS };

/* ---- the hand-written ring (bare, efd, futex) */

/* The same layout as a baton ring: each index and each flag its own line. */
struct sring {
	_Alignas(64) uint64_t tail;
	_Alignas(64) uint32_t cons_waiting;
	_Alignas(64) uint64_t head;
	_Alignas(64) uint32_t prod_waiting;
	_Alignas(64) uint8_t slots[];
};

enum park { PARK_NONE, PARK_EFD, PARK_FUTEX };

/* One direction of one peer: shared parts set up before fork. */
struct chan {
	uint32_t wsize;		/* bytes on the wire per message */
	int role;
	char name[64];
	/* pipe, unix */
	int fd[2];
	/* mq */
	mqd_t mq;
	/* sring */
	struct sring *sr;
	enum park park;
	int efd_c, efd_p;	/* consumer's / producer's eventfd */
	uint64_t local, cached;
	/* baton */
	struct baton_ring *br;
#ifdef HAVE_CK
	struct ck_ring *ck;
	void *ckbuf;
#endif
#ifdef HAVE_DPDK
	struct rte_ring *rte;
	int rte_mp;
#endif
#ifdef HAVE_ICEORYX
	iox_pub_storage_t pub_st;
	iox_sub_storage_t sub_st;
	iox_pub_t pub;
	iox_sub_t sub;
#endif
};

struct peer {
	const char *name;
	int (*setup)(struct chan *c);
	void (*attach)(struct chan *c);
	void (*send)(struct chan *c, const uint8_t *buf, uint32_t n);
	uint32_t (*recv)(struct chan *c, uint8_t *buf, uint32_t max);
	void (*cleanup)(struct chan *c);
};

/* Shared between the two processes of a run. */
struct ctl {
	_Alignas(64) uint32_t child_ready;
	_Alignas(64) uint32_t go;
	_Alignas(64) uint64_t ping;
	_Alignas(64) uint64_t pong;
	_Alignas(64) uint64_t t_end;
	uint64_t child_cpu_ns;
	uint64_t errors;
};

static struct {
	const struct peer *peer;
	int rt;
	uint32_t size;
	int handle;
	uint32_t batch;
	uint64_t n;
	uint64_t target_ns;
	int cpu[2];
	struct ctl *ctl;
	uint8_t *arena;
} g = {
	.size = 8,
	.batch = 1,
	.target_ns = 300000000ull,
	.cpu = { 0, 1 },
};

static void die(const char *what, int err)
{
	fprintf(stderr, "peers: %s: %s\n", what, strerror(err));
	exit(2);
}

static uint64_t cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
}

/* ---- messages */

static void fill(uint8_t *p, uint32_t size, uint64_t seq)
{
	uint64_t *w = (uint64_t *)p;

	w[0] = seq;
	if (size > 8)
		w[size / 8 - 1] = seq ^ ((size / 8 - 1) * GOLDEN);
	if (size >= 64)	/* touch every line, as a real producer would */
		for (uint32_t i = 8; i < size / 8 - 1; i += 8)
			w[i] = seq;
}

static int check(const uint8_t *p, uint32_t size, uint64_t seq)
{
	const uint64_t *w = (const uint64_t *)p;
	uint64_t x = 0;

	if (size >= 64)	/* read every line, as a real consumer would */
		for (uint32_t i = 8; i < size / 8 - 1; i += 8)
			x |= w[i] ^ seq;
	return w[0] == seq && !x &&
	       (size == 8 || w[size / 8 - 1] == (seq ^ ((size / 8 - 1) * GOLDEN)));
}

/* Build n wire messages for seq.. into buf (payload into the arena if -H). */
static void make_wire(uint8_t *buf, uint32_t n, uint64_t seq)
{
	for (uint32_t i = 0; i < n; i++, seq++) {
		if (g.handle) {
			uint64_t slot = seq % ARENA_SLOTS;

			fill(g.arena + slot * g.size, g.size, seq);
			memcpy(buf + (size_t)i * 8, &slot, 8);
		} else {
			fill(buf + (size_t)i * g.size, g.size, seq);
		}
	}
}

/* Check n wire messages from seq..; returns the number that failed. */
static uint64_t check_wire(const uint8_t *buf, uint32_t n, uint64_t seq)
{
	uint64_t bad = 0;

	for (uint32_t i = 0; i < n; i++, seq++) {
		if (g.handle) {
			uint64_t slot;

			memcpy(&slot, buf + (size_t)i * 8, 8);
			bad += slot != seq % ARENA_SLOTS ||
			       !check(g.arena + slot * g.size, g.size, seq);
		} else {
			bad += !check(buf + (size_t)i * g.size, g.size, seq);
		}
	}
	return bad;
}

/* ---- pipe and unix socket: one write/read of the whole batch */

static int pipe_setup(struct chan *c)
{
	return pipe(c->fd) ? -errno : 0;
}

static int unix_setup(struct chan *c)
{
	return socketpair(AF_UNIX, SOCK_STREAM, 0, c->fd) ? -errno : 0;
}

static void fd_attach(struct chan *c)
{
	close(c->fd[c->role == ROLE_PROD ? 0 : 1]);
}

static void fd_send(struct chan *c, const uint8_t *buf, uint32_t n)
{
	int rc = bench_write_full(c->fd[1], buf, (size_t)n * c->wsize);

	if (rc)
		die("write", -rc);
}

/* The producer writes whole batches, so a whole batch can be waited for. */
static uint32_t fd_recv(struct chan *c, uint8_t *buf, uint32_t max)
{
	int rc = bench_read_full(c->fd[0], buf, (size_t)max * c->wsize);

	if (rc)
		die("read", -rc);
	return max;
}

static void fd_cleanup(struct chan *c)
{
	close(c->fd[0]);
	close(c->fd[1]);
}

/* ---- POSIX mq: no batch call */

static int mq_setup(struct chan *c)
{
	struct mq_attr a = { .mq_maxmsg = 256, .mq_msgsize = c->wsize };

	mq_unlink(c->name);
	c->mq = mq_open(c->name, O_CREAT | O_RDWR, 0600, &a);
	if (c->mq == (mqd_t)-1 && errno == EINVAL) {
		a.mq_maxmsg = 10;	/* fs.mqueue.msg_max without privilege */
		c->mq = mq_open(c->name, O_CREAT | O_RDWR, 0600, &a);
	}
	return c->mq == (mqd_t)-1 ? -errno : 0;
}

static void mq_attach(struct chan *c)
{
	(void)c;
}

static void mq_send1(struct chan *c, const uint8_t *buf, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (mq_send(c->mq, (const char *)buf + (size_t)i * c->wsize,
			    c->wsize, 0))
			die("mq_send", errno);
}

static uint32_t mq_recv1(struct chan *c, uint8_t *buf, uint32_t max)
{
	for (uint32_t i = 0; i < max; i++)
		if (mq_receive(c->mq, (char *)buf + (size_t)i * c->wsize,
			       c->wsize, NULL) != (ssize_t)c->wsize)
			die("mq_receive", errno);
	return max;
}

static void mq_cleanup(struct chan *c)
{
	mq_close(c->mq);
	mq_unlink(c->name);
}

/* ---- the hand-written ring */

static int sring_setup_park(struct chan *c, enum park park)
{
	c->sr = bench_shared_alloc(sizeof(*c->sr) + (size_t)RING_SLOTS * c->wsize);
	c->park = park;
	if (park == PARK_EFD) {
		c->efd_c = eventfd(0, 0);
		c->efd_p = eventfd(0, 0);
		if (c->efd_c < 0 || c->efd_p < 0)
			return -errno;
	}
	return 0;
}

static int bare_setup(struct chan *c) { return sring_setup_park(c, PARK_NONE); }
static int efd_setup(struct chan *c) { return sring_setup_park(c, PARK_EFD); }
static int futex_setup(struct chan *c) { return sring_setup_park(c, PARK_FUTEX); }

static void sring_attach(struct chan *c)
{
	c->local = 0;
	c->cached = c->role == ROLE_PROD ? RING_SLOTS : 0;
	bench_prefault(c->sr, sizeof(*c->sr) + (size_t)RING_SLOTS * c->wsize, 1);
}

static long futex(uint32_t *w, int op, uint32_t val)
{
	return syscall(SYS_futex, w, op, val, NULL, NULL, 0);
}

/*
 * Park until *idx (low 32 bits) moves away from stuck. The usual Dekker
 * handshake: flag, full fence, re-check, sleep; the waker stores its index,
 * full fence, reads the flag. (baton moves the waker's fence to the parker
 * with membarrier/IPI; these peers pay it on every publication.)
 */
static void sring_park(struct chan *c, uint32_t *flag, uint64_t *idx,
		       uint64_t stuck, int efd)
{
	unsigned int spins = 0;
	uint64_t v;

	if (c->park == PARK_NONE) {
		bench_relax(&spins);
		return;
	}
	__atomic_store_n(flag, 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(idx, __ATOMIC_ACQUIRE) == stuck) {
		if (c->park == PARK_FUTEX)
			futex((uint32_t *)idx, FUTEX_WAIT, (uint32_t)stuck);
		else if (read(efd, &v, 8) < 0 && errno != EINTR)
			die("read eventfd", errno);
	}
	__atomic_store_n(flag, 0, __ATOMIC_RELAXED);
}

static void sring_wake(struct chan *c, uint32_t *flag, uint64_t *idx, int efd)
{
	uint64_t one = 1;

	if (c->park == PARK_NONE)
		return;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/*
	 * The waker never clears the flag: a clear could eat the flag of the
	 * parker's next park, whose wait then misses this wake and the next
	 * publication sees no flag (models/park.pml VARIANT 1). The parker
	 * clears its own flag when it returns.
	 */
	if (!__atomic_load_n(flag, __ATOMIC_RELAXED))
		return;
	if (c->park == PARK_FUTEX)
		futex((uint32_t *)idx, FUTEX_WAKE, 1);
	else if (write(efd, &one, 8) != 8)
		die("write eventfd", errno);
}

static void sring_send(struct chan *c, const uint8_t *buf, uint32_t n)
{
	struct sring *r = c->sr;

	while (n) {
		uint64_t room = c->cached - c->local;
		uint32_t k;

		/* As baton: refresh the cached head only when it falls short. */
		if (room < n) {
			c->cached = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) +
				    RING_SLOTS;
			room = c->cached - c->local;
			if (!room) {
				sring_park(c, &r->prod_waiting, &r->head,
					   c->local - RING_SLOTS, c->efd_p);
				continue;
			}
		}
		k = room < n ? (uint32_t)room : n;
		for (uint32_t i = 0; i < k; i++)
			memcpy(r->slots + ((c->local + i) & (RING_SLOTS - 1)) * c->wsize,
			       buf + (size_t)i * c->wsize, c->wsize);
		c->local += k;
		__atomic_store_n(&r->tail, c->local, __ATOMIC_RELEASE);
		sring_wake(c, &r->cons_waiting, &r->tail, c->efd_c);
		buf += (size_t)k * c->wsize;
		n -= k;
	}
}

static uint32_t sring_recv(struct chan *c, uint8_t *buf, uint32_t max)
{
	struct sring *r = c->sr;
	uint64_t avail;
	uint32_t k;

	for (;;) {
		avail = c->cached - c->local;
		if (avail >= max)
			break;
		c->cached = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
		avail = c->cached - c->local;
		if (avail)
			break;
		sring_park(c, &r->cons_waiting, &r->tail, c->local, c->efd_c);
	}
	k = avail < max ? (uint32_t)avail : max;
	for (uint32_t i = 0; i < k; i++)
		memcpy(buf + (size_t)i * c->wsize,
		       r->slots + ((c->local + i) & (RING_SLOTS - 1)) * c->wsize,
		       c->wsize);
	c->local += k;
	__atomic_store_n(&r->head, c->local, __ATOMIC_RELEASE);
	sring_wake(c, &r->prod_waiting, &r->head, c->efd_p);
	return k;
}

static void sring_cleanup(struct chan *c)
{
	if (c->park == PARK_EFD) {
		close(c->efd_c);
		close(c->efd_p);
	}
	bench_shared_free(c->sr, sizeof(*c->sr) + (size_t)RING_SLOTS * c->wsize);
}

/* ---- baton: the inline fast path, busy polling (as spsc_xproc) */

static int baton_role(int role)
{
	return role == ROLE_PROD ? BATON_ROLE_PRODUCER : BATON_ROLE_CONSUMER;
}

static int baton_setup_kind(struct chan *c, uint32_t kind)
{
	struct baton_ring_params p = {
		.kind = kind,
		.slot_count = RING_SLOTS,
		.slot_size = c->wsize,
		.mode = 0600,
		.backend = BATON_BACKEND_AUTO,
	};

#ifdef BATON_RING_MPSC
	if (kind == BATON_RING_MPSC)
		p.max_producers = 1;
#endif
	baton_ring_unlink(c->name, BATON_BACKEND_AUTO);
	/* The parent creates the ring in the role it plays, the child opens. */
	return baton_ring_create(c->name, &p, baton_role(c->role), &c->br);
}

static int baton_setup(struct chan *c)
{
	return baton_setup_kind(c, BATON_RING_SPSC);
}

static void baton_attach(struct chan *c)
{
	int rc;

	if (c->br)
		return;		/* the parent's handle from setup */
	rc = baton_ring_open(c->name, baton_role(c->role), BATON_BACKEND_AUTO,
			    &c->br);
	if (rc < 0)
		die("baton_ring_open", -rc);
}

/*
 * The bulk copy forms (Documentation/bulk.rst): one reservation, one
 * publication and at most two copies a batch; 8 and 64 bytes take the
 * sized forms, whose size is a compile-time constant, as an application
 * that knows its message type would.
 */
static int baton_push_some(struct chan *c, const uint8_t *buf, uint32_t n)
{
	switch (c->wsize) {
	case 8:
		return baton_spsc_try_push_bulk8(c->br, buf, n);
	case 64:
		return baton_spsc_try_push_bulk64(c->br, buf, n);
	default:
		return baton_spsc_try_push_bulk(c->br, buf, c->wsize, n);
	}
}

static int baton_pop_some(struct chan *c, uint8_t *buf, uint32_t max)
{
	switch (c->wsize) {
	case 8:
		return baton_spsc_try_pop_bulk8(c->br, buf, max);
	case 64:
		return baton_spsc_try_pop_bulk64(c->br, buf, max);
	default:
		return baton_spsc_try_pop_bulk(c->br, buf, c->wsize, max);
	}
}

static void baton_send(struct chan *c, const uint8_t *buf, uint32_t n)
{
	unsigned int spins = 0;

	while (n) {
		int k = baton_push_some(c, buf, n);

		if (k < 0)
			die("baton_spsc_try_push_bulk", -k);
		if (!k) {
			bench_relax(&spins);
			continue;
		}
		buf += (size_t)k * c->wsize;
		n -= (uint32_t)k;
	}
}

static uint32_t baton_recv(struct chan *c, uint8_t *buf, uint32_t max)
{
	unsigned int spins = 0;
	int k;

	while (!(k = baton_pop_some(c, buf, max)))
		bench_relax(&spins);
	if (k < 0)
		die("baton_spsc_try_pop_bulk", -k);
	return (uint32_t)k;
}

/*
 * baton-park: the blocking forms with no spinning (spin_limit 0), so a side
 * that finds the ring empty parks at once, as the futex and eventfd peers
 * do: their round trips compare the wake paths.
 */
static void baton_park_attach(struct chan *c)
{
	baton_attach(c);
	c->br->spin_limit = 0;
}

static void baton_park_send(struct chan *c, const uint8_t *buf, uint32_t n)
{
	uint64_t idx;

	while (n) {
		int k = baton_spsc_prod_reserve_wait(c->br, n, &idx, -1);

		if (k < 0)
			die("baton_spsc_prod_reserve_wait", -k);
		for (int i = 0; i < k; i++)
			memcpy(baton_ring_slot(c->br, idx + (uint64_t)i),
			       buf + (size_t)i * c->wsize, c->wsize);
		baton_spsc_prod_submit(c->br, (uint32_t)k);
		buf += (size_t)k * c->wsize;
		n -= (uint32_t)k;
	}
}

static uint32_t baton_park_recv(struct chan *c, uint8_t *buf, uint32_t max)
{
	uint64_t idx;
	int k = baton_spsc_cons_peek_wait(c->br, max, &idx, -1);

	if (k < 0)
		die("baton_spsc_cons_peek_wait", -k);
	for (int i = 0; i < k; i++)
		memcpy(buf + (size_t)i * c->wsize,
		       baton_ring_slot(c->br, idx + (uint64_t)i), c->wsize);
	baton_spsc_cons_release(c->br, (uint32_t)k);
	return (uint32_t)k;
}

#ifdef BATON_RING_MPSC
/*
 * baton-mpsc: the ticket ring with one producer. A batch goes out with
 * baton_mpsc_push_bulk (one fetch_add, one or two copies) and comes back
 * with baton_mpsc_try_pop_bulk (one pass over the sequence words), as
 * rte-mpsc uses rte_ring's bulk calls; a batch of 1 uses the single
 * forms. Slots are wsize bytes, so the bulk copies are contiguous.
 */
static int baton_mpsc_setup(struct chan *c)
{
	return baton_setup_kind(c, BATON_RING_MPSC);
}

static void baton_mpsc_send(struct chan *c, const uint8_t *buf, uint32_t n)
{
	int rc;

	if (n == 1)
		rc = baton_mpsc_push(c->br, buf, c->wsize);
	else
		rc = baton_mpsc_push_bulk(c->br, buf, c->wsize, n, NULL);
	if (rc < 0)
		die("baton_mpsc_push", -rc);
}

static uint32_t baton_mpsc_recv(struct chan *c, uint8_t *buf, uint32_t max)
{
	unsigned int spins = 0;
	int rc;

	for (;;) {
		if (max == 1) {
			rc = baton_mpsc_try_pop(c->br, buf, c->wsize, NULL);
			if (rc == 0)
				return 1;
			if (rc == -EAGAIN)
				rc = 0;
		} else {
			/* 0: nothing published yet */
			rc = baton_mpsc_try_pop_bulk(c->br, buf, c->wsize, max,
						     NULL);
		}
		if (rc > 0)
			return (uint32_t)rc;
		/* BATON_MPSC_LOST: a tombstone, skipped */
		if (rc < 0 && rc != BATON_MPSC_LOST)
			die("baton_mpsc_try_pop", -rc);
		bench_relax(&spins);
	}
}
#endif

static void baton_cleanup(struct chan *c)
{
	if (c->br)
		baton_ring_close(c->br);
	c->br = NULL;
	baton_ring_unlink(c->name, BATON_BACKEND_AUTO);
}

/* ---- Concurrency Kit ck_ring (SPSC; no batch call) */

#ifdef HAVE_CK
static int ck_setup(struct chan *c)
{
	c->ck = bench_shared_alloc(sizeof(*c->ck));
	c->ckbuf = bench_shared_alloc((size_t)RING_SLOTS * c->wsize);
	ck_ring_init(c->ck, RING_SLOTS);
	return 0;
}

static void ck_attach(struct chan *c)
{
	bench_prefault(c->ckbuf, (size_t)RING_SLOTS * c->wsize, 1);
}

static void ck_send(struct chan *c, const uint8_t *buf, uint32_t n)
{
	unsigned int spins = 0;

	for (uint32_t i = 0; i < n; i++)
		while (!_ck_ring_enqueue_sp(c->ck, c->ckbuf,
					    buf + (size_t)i * c->wsize, c->wsize,
					    NULL))
			bench_relax(&spins);
}

static uint32_t ck_recv(struct chan *c, uint8_t *buf, uint32_t max)
{
	unsigned int spins = 0;
	uint32_t k = 0;

	/* Wait for one, then take what is there, up to max. */
	while (!_ck_ring_dequeue_sc(c->ck, c->ckbuf, buf, c->wsize))
		bench_relax(&spins);
	for (k = 1; k < max; k++)
		if (!_ck_ring_dequeue_sc(c->ck, c->ckbuf,
					 buf + (size_t)k * c->wsize, c->wsize))
			break;
	return k;
}

static void ck_cleanup(struct chan *c)
{
	bench_shared_free(c->ckbuf, (size_t)RING_SLOTS * c->wsize);
	bench_shared_free(c->ck, sizeof(*c->ck));
}
#endif

/* ---- DPDK rte_ring: rte_ring_init on MAP_SHARED memory, no EAL */

#ifdef HAVE_DPDK
static int rte_setup_flags(struct chan *c, int mp)
{
	ssize_t sz = rte_ring_get_memsize_elem(c->wsize, RING_SLOTS);
	unsigned int flags = RING_F_SC_DEQ | (mp ? 0 : RING_F_SP_ENQ);

	if (sz < 0)
		return (int)sz;
	c->rte = bench_shared_alloc((size_t)sz);
	c->rte_mp = mp;
	/* rte_ring_init sets up the header only; elements are wsize bytes. */
	return rte_ring_init(c->rte, "baton-bench", RING_SLOTS, flags);
}

static int rte_sp_setup(struct chan *c) { return rte_setup_flags(c, 0); }
static int rte_mp_setup(struct chan *c) { return rte_setup_flags(c, 1); }

static void rte_attach(struct chan *c)
{
	bench_prefault(c->rte, (size_t)rte_ring_get_memsize_elem(c->wsize, RING_SLOTS), 1);
}

static void rte_send(struct chan *c, const uint8_t *buf, uint32_t n)
{
	unsigned int spins = 0;

	while (n) {
		uint32_t k = c->rte_mp ?
			rte_ring_mp_enqueue_burst_elem(c->rte, buf, c->wsize, n, NULL) :
			rte_ring_sp_enqueue_burst_elem(c->rte, buf, c->wsize, n, NULL);

		if (!k) {
			bench_relax(&spins);
			continue;
		}
		buf += (size_t)k * c->wsize;
		n -= k;
	}
}

static uint32_t rte_recv(struct chan *c, uint8_t *buf, uint32_t max)
{
	unsigned int spins = 0;
	uint32_t k;

	while (!(k = rte_ring_sc_dequeue_burst_elem(c->rte, buf, c->wsize, max,
						    NULL)))
		bench_relax(&spins);
	return k;
}

static void rte_cleanup(struct chan *c)
{
	bench_shared_free(c->rte, (size_t)rte_ring_get_memsize_elem(c->wsize, RING_SLOTS));
}
#endif

/* ---- iceoryx: loan/publish, take/release; polling; RouDi must run */

#ifdef HAVE_ICEORYX
static int iox_setup(struct chan *c)
{
	(void)c;
	return 0;
}

static void iox_attach(struct chan *c)
{
	static int runtime_up;
	char rt[64];
	unsigned int spins = 0;
	char *event = strrchr(c->name, '-') + 1;
	char *inst = c->name + 1;

	if (!runtime_up) {
		snprintf(rt, sizeof(rt), "baton-bench-%d", (int)getpid());
		iox_runtime_init(rt);
		runtime_up = 1;
	}
	if (c->role == ROLE_PROD) {
		iox_pub_options_t o;

		iox_pub_options_init(&o);
		o.historyCapacity = 0;
		o.subscriberTooSlowPolicy = ConsumerTooSlowPolicy_WAIT_FOR_CONSUMER;
		c->pub = iox_pub_init(&c->pub_st, "baton-bench", inst, event, &o);
		/* Wait for the subscriber: nothing published may be lost. */
		while (!iox_pub_has_subscribers(c->pub)) {
			bench_relax(&spins);
			usleep(1000);
		}
	} else {
		iox_sub_options_t o;

		iox_sub_options_init(&o);
		o.queueCapacity = 256;
		o.historyRequest = 0;
		o.queueFullPolicy = QueueFullPolicy_BLOCK_PRODUCER;
		c->sub = iox_sub_init(&c->sub_st, "baton-bench", inst, event, &o);
	}
}

static void iox_send(struct chan *c, const uint8_t *buf, uint32_t n)
{
	unsigned int spins = 0;
	void *p;

	for (uint32_t i = 0; i < n; i++) {
		while (iox_pub_loan_chunk(c->pub, &p, c->wsize) !=
		       AllocationResult_SUCCESS)
			bench_relax(&spins);
		memcpy(p, buf + (size_t)i * c->wsize, c->wsize);
		iox_pub_publish_chunk(c->pub, p);
	}
}

static uint32_t iox_recv(struct chan *c, uint8_t *buf, uint32_t max)
{
	unsigned int spins = 0;
	const void *p;
	uint32_t k;

	while (iox_sub_take_chunk(c->sub, &p) != ChunkReceiveResult_SUCCESS)
		bench_relax(&spins);
	memcpy(buf, p, c->wsize);
	iox_sub_release_chunk(c->sub, p);
	for (k = 1; k < max; k++) {
		if (iox_sub_take_chunk(c->sub, &p) != ChunkReceiveResult_SUCCESS)
			break;
		memcpy(buf + (size_t)k * c->wsize, p, c->wsize);
		iox_sub_release_chunk(c->sub, p);
	}
	return k;
}

static void iox_cleanup(struct chan *c)
{
	/* The runtime stays up for the next run of this process (calibration). */
	if (c->role == ROLE_PROD)
		iox_pub_deinit(c->pub);
	else
		iox_sub_deinit(c->sub);
}
#endif

static const struct peer peers[] = {
	{ "baton", baton_setup, baton_attach, baton_send, baton_recv, baton_cleanup },
	{ "baton-park", baton_setup, baton_park_attach, baton_park_send, baton_park_recv,
	  baton_cleanup },
#ifdef BATON_RING_MPSC
	{ "baton-mpsc", baton_mpsc_setup, baton_attach, baton_mpsc_send, baton_mpsc_recv,
	  baton_cleanup },
#endif
	{ "bare", bare_setup, sring_attach, sring_send, sring_recv, sring_cleanup },
	{ "efd", efd_setup, sring_attach, sring_send, sring_recv, sring_cleanup },
	{ "futex", futex_setup, sring_attach, sring_send, sring_recv, sring_cleanup },
	{ "pipe", pipe_setup, fd_attach, fd_send, fd_recv, fd_cleanup },
	{ "unix", unix_setup, fd_attach, fd_send, fd_recv, fd_cleanup },
	{ "mq", mq_setup, mq_attach, mq_send1, mq_recv1, mq_cleanup },
#ifdef HAVE_CK
	{ "ck", ck_setup, ck_attach, ck_send, ck_recv, ck_cleanup },
#endif
#ifdef HAVE_DPDK
	{ "rte-spsc", rte_sp_setup, rte_attach, rte_send, rte_recv, rte_cleanup },
	{ "rte-mpsc", rte_mp_setup, rte_attach, rte_send, rte_recv, rte_cleanup },
#endif
#ifdef HAVE_ICEORYX
	{ "iceoryx", iox_setup, iox_attach, iox_send, iox_recv, iox_cleanup },
#endif
};

/* ---- one run: fork, attach, go, measure */

struct run {
	double secs;		/* timed window */
	uint64_t msgs;		/* messages (stream) or round trips (rt) */
	double p50, p99, p999;	/* rt: ns */
	double cpu_ns_per_msg;
	uint64_t errors;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double pct(const uint64_t *v, uint64_t n, double p)
{
	uint64_t i = (uint64_t)(p * (double)(n - 1) + 0.5);

	return (double)v[i < n ? i : n - 1];
}

/* The bare cache-line ping-pong: the floor for any cross-core handoff. */
static void clpp_side(int parent, uint64_t n, uint64_t *samples)
{
	struct ctl *ctl = g.ctl;
	unsigned int spins = 0;

	for (uint64_t i = 1; i <= n + WARM_RT; i++) {
		uint64_t t = bench_now_ns();

		if (parent) {
			__atomic_store_n(&ctl->ping, i, __ATOMIC_RELEASE);
			while (__atomic_load_n(&ctl->pong, __ATOMIC_ACQUIRE) != i)
				bench_relax(&spins);
			if (i > WARM_RT)
				samples[i - WARM_RT - 1] = bench_now_ns() - t;
		} else {
			while (__atomic_load_n(&ctl->ping, __ATOMIC_ACQUIRE) != i)
				bench_relax(&spins);
			__atomic_store_n(&ctl->pong, i, __ATOMIC_RELEASE);
		}
	}
}

static void child_main(pid_t parent, struct chan *a, struct chan *b)
{
	struct ctl *ctl = g.ctl;
	uint8_t *buf = malloc((size_t)BATCH_MAX * (g.handle ? 8 : g.size));
	uint64_t seq = 0, errors = 0, c0, total;
	unsigned int spins = 0;

	bench_die_with_parent(parent);
	if (g.cpu[1] >= 0 && bench_pin(g.cpu[1]) < 0)
		fprintf(stderr, "peers: cannot pin child to CPU %d\n", g.cpu[1]);
	if (g.peer) {
		/* The parent's baton handles came through fork; open our own. */
		a->br = NULL;
		if (b)
			b->br = NULL;
		a->role = ROLE_CONS;
		g.peer->attach(a);
		if (b) {
			b->role = ROLE_PROD;
			g.peer->attach(b);
		}
	}
	__atomic_store_n(&ctl->child_ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&ctl->go, __ATOMIC_ACQUIRE))
		bench_relax(&spins);
	c0 = cpu_ns();
	if (!g.peer) {
		clpp_side(0, g.n, NULL);
	} else if (g.rt) {
		/* Echo: receive a whole batch on a, send it back on b. */
		total = (g.n + WARM_RT) * g.batch;
		while (seq < total) {
			uint32_t got = 0;

			/* As the parent: CPU from the first timed round trip. */
			if (seq == (uint64_t)WARM_RT * g.batch)
				c0 = cpu_ns();
			while (got < g.batch)
				got += g.peer->recv(a, buf + (size_t)got * a->wsize,
						    g.batch - got);
			g.peer->send(b, buf, g.batch);
			seq += g.batch;
		}
	} else {
		while (seq < g.n) {
			uint32_t want = g.n - seq < g.batch ? (uint32_t)(g.n - seq) : g.batch;
			uint32_t got = g.peer->recv(a, buf, want);

			errors += check_wire(buf, got, seq);
			seq += got;
		}
		__atomic_store_n(&ctl->t_end, bench_now_ns(), __ATOMIC_RELEASE);
	}
	ctl->child_cpu_ns = cpu_ns() - c0;
	ctl->errors = errors;
#ifdef HAVE_ICEORYX
	if (g.peer && !strcmp(g.peer->name, "iceoryx")) {
		/* Keep the subscriber until the parent has all its echoes. */
		if (g.rt)
			usleep(100000);
		iox_runtime_shutdown();
	}
#endif
	_exit(0);
}

static void run_once(uint64_t n, struct run *out)
{
	/*
	 * Names unique per run, not only per process: iceoryx keeps a dead
	 * subscriber of the calibration run registered until RouDi notices.
	 */
	static unsigned int run_no;
	uint32_t wsize = g.handle ? 8 : g.size;
	struct chan ca, cb, *a = &ca, *b = g.rt ? &cb : NULL;
	struct ctl *ctl = g.ctl;
	uint64_t *samples = NULL, t0, c0, seq = 0, errors = 0;
	uint8_t *buf = malloc((size_t)BATCH_MAX * wsize);
	unsigned int spins = 0;
	pid_t pid, me = getpid();
	int st, rc;

	run_no++;
	memset(ctl, 0, sizeof(*ctl));
	memset(&ca, 0, sizeof(ca));
	memset(&cb, 0, sizeof(cb));
	g.n = n;
	ca.wsize = cb.wsize = wsize;
	snprintf(ca.name, sizeof(ca.name), "/bb%d.%u-a", (int)me, run_no);
	snprintf(cb.name, sizeof(cb.name), "/bb%d.%u-b", (int)me, run_no);
	ca.role = ROLE_PROD;
	cb.role = ROLE_CONS;
	if (g.peer) {
		/* baton names may not hold '/'. */
		if (!strncmp(g.peer->name, "baton", 5)) {
			snprintf(ca.name, sizeof(ca.name), "bb%d.%u-a", (int)me, run_no);
			snprintf(cb.name, sizeof(cb.name), "bb%d.%u-b", (int)me, run_no);
		}
		rc = g.peer->setup(a);
		if (!rc && b)
			rc = g.peer->setup(b);
		if (rc < 0)
			die("setup", -rc);
	}
	if (g.rt)
		samples = malloc(n * sizeof(*samples));
	pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (!pid)
		child_main(me, a, b);
	if (g.peer) {
		g.peer->attach(a);
		if (b)
			g.peer->attach(b);
	}
	while (!__atomic_load_n(&ctl->child_ready, __ATOMIC_ACQUIRE))
		bench_relax(&spins);
	c0 = cpu_ns();
	t0 = bench_now_ns();
	__atomic_store_n(&ctl->go, 1, __ATOMIC_RELEASE);
	if (!g.peer) {
		clpp_side(1, n, samples);
	} else if (g.rt) {
		uint8_t *in = malloc((size_t)BATCH_MAX * wsize);

		for (uint64_t i = 0; i < n + WARM_RT; i++) {
			uint64_t t = bench_now_ns();
			uint32_t got = 0;

			/* Rate and CPU count the timed round trips alone. */
			if (i == WARM_RT) {
				c0 = cpu_ns();
				t0 = t;
			}
			make_wire(buf, g.batch, seq);
			g.peer->send(a, buf, g.batch);
			while (got < g.batch)
				got += g.peer->recv(b, in + (size_t)got * wsize,
						    g.batch - got);
			if (i >= WARM_RT)
				samples[i - WARM_RT] = bench_now_ns() - t;
			errors += check_wire(in, g.batch, seq);
			seq += g.batch;
		}
		free(in);
	} else {
		while (seq < n) {
			uint32_t k = n - seq < g.batch ? (uint32_t)(n - seq) : g.batch;

			make_wire(buf, k, seq);
			g.peer->send(a, buf, k);
			seq += k;
		}
	}
	out->cpu_ns_per_msg = (double)(cpu_ns() - c0);
	if (g.rt || !g.peer)
		__atomic_store_n(&ctl->t_end, bench_now_ns(), __ATOMIC_RELEASE);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		die("child", ECHILD);
	out->secs = (double)(ctl->t_end - t0) / 1e9;
	out->msgs = n;
	out->cpu_ns_per_msg = (out->cpu_ns_per_msg + (double)ctl->child_cpu_ns) /
			      (double)(n * (g.rt ? g.batch : 1));
	out->errors = errors + ctl->errors;
	out->p50 = out->p99 = out->p999 = 0;
	if (samples) {
		qsort(samples, n, sizeof(*samples), cmp_u64);
		out->p50 = pct(samples, n, 0.50);
		out->p99 = pct(samples, n, 0.99);
		out->p999 = pct(samples, n, 0.999);
		free(samples);
	}
	if (g.peer) {
		g.peer->cleanup(a);
		if (b)
			g.peer->cleanup(b);
	}
	free(buf);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: peers -p PEER -m stream|rt [-s 8|64|1024] [-H] [-b 1|32] [-n N] [-T ns] [-c A,B] | -h\n"
		"peers: clpp");
	for (size_t i = 0; i < sizeof(peers) / sizeof(peers[0]); i++)
		fprintf(stderr, " %s", peers[i].name);
	fprintf(stderr, "\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *pname = NULL;
	struct run r;
	int opt;

	while ((opt = getopt(argc, argv, "p:m:s:Hb:n:T:c:hl")) != -1) {
		switch (opt) {
		case 'p': pname = optarg; break;
		case 'm': g.rt = !strcmp(optarg, "rt"); break;
		case 's': g.size = (uint32_t)atoi(optarg); break;
		case 'H': g.handle = 1; break;
		case 'b': g.batch = (uint32_t)atoi(optarg); break;
		case 'n': g.n = bench_parse_count(optarg); break;
		case 'T': g.target_ns = bench_parse_count(optarg); break;
		case 'c':
			if (bench_parse_cpus(optarg, g.cpu))
				usage();
			break;
		case 'h':
			printf("peer,mode,size,handle,batch,n,secs,rate,p50_ns,p99_ns,p999_ns,cpu_ns_per_msg,cpu_parent,cpu_child\n");
			return 0;
		case 'l':
			printf("clpp");
			for (size_t i = 0; i < sizeof(peers) / sizeof(peers[0]); i++)
				printf(" %s", peers[i].name);
			printf("\n");
			return 0;
		default:
			usage();
		}
	}
	if (!pname || g.size < 8 || g.size % 8 || !g.batch || g.batch > BATCH_MAX)
		usage();
	if (!strcmp(pname, "clpp")) {
		g.rt = 1;
		g.batch = 1;
	} else {
		for (size_t i = 0; i < sizeof(peers) / sizeof(peers[0]); i++)
			if (!strcmp(peers[i].name, pname))
				g.peer = &peers[i];
		if (!g.peer) {
			fprintf(stderr, "peers: unknown or not built in: %s\n", pname);
			return 2;
		}
	}
	bench_check_cpus("peers", g.cpu);
	if (g.cpu[0] >= 0 && bench_pin(g.cpu[0]) < 0)
		fprintf(stderr, "peers: cannot pin to CPU %d\n", g.cpu[0]);
	bench_watchdog(WATCHDOG_S, pname);
	g.ctl = bench_shared_alloc(sizeof(*g.ctl));
	if (g.handle) {
		g.arena = bench_shared_alloc((size_t)ARENA_SLOTS * g.size);
		bench_prefault(g.arena, (size_t)ARENA_SLOTS * g.size, 1);
	}
	if (!g.n) {
		/* Calibrate: a short run, then scale to the target window. */
		uint64_t n0 = g.rt ? 2000 : 20000;

		run_once(n0, &r);
		g.n = (uint64_t)((double)n0 * (double)g.target_ns / 1e9 / r.secs);
		if (g.n < n0)
			g.n = n0;
		if (g.rt && g.n > 2000000)
			g.n = 2000000;
		g.n = (g.n + g.batch - 1) / g.batch * g.batch;
	}
	run_once(g.n, &r);
	printf("%s,%s,%u,%d,%u,%llu,%.6f,%.1f,%.0f,%.0f,%.0f,%.1f,%d,%d\n",
	       pname, g.rt ? "rt" : "stream", g.size, g.handle, g.batch,
	       (unsigned long long)r.msgs, r.secs,
	       (double)r.msgs / r.secs, r.p50, r.p99, r.p999,
	       r.cpu_ns_per_msg, g.cpu[0], g.cpu[1]);
#ifdef HAVE_ICEORYX
	if (g.peer && !strcmp(g.peer->name, "iceoryx"))
		iox_runtime_shutdown();
#endif
	if (r.errors) {
		fprintf(stderr, "peers: %llu messages failed verification\n",
			(unsigned long long)r.errors);
		return 1;
	}
	return 0;
}

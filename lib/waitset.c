// SPDX-License-Identifier: MIT
/*
 * libbaton waitsets: one thread waits on up to BATON_WAITSET_MAX rings
 * (either role, SPSC or MPSC) and epoch domains at once, with a timeout
 * (Documentation/waitset.rst).
 *
 * Readiness is always decided from shared memory, never from the wake:
 * a ring is ready when the consumer has a message (or a tombstone) or the
 * producer has room; an epoch entry when its target epoch is quiescent
 * (baton_epoch_poll()); gone when the ring's peer has gone (the consumer:
 * and nothing is left to read); error when the ring is corrupt. A wait
 * looks first, then looks again up to the set's adaptive spin budget
 * (lib/park.c's rule; the limit is the smallest spin_limit of its rings),
 * and sleeps only when nothing is ready:
 *
 *  - kmod: poll(2) on the ring fds (POLLIN for a consumer, POLLOUT for a
 *    producer): the module arms each ring with the park barriers, and
 *    POLLHUP/POLLERR say the peer went. The epoch fd has no poll, so a
 *    set with epoch entries sleeps in slices of EPOCH_SLICE_NS and polls
 *    the domains between them.
 *  - memfd: the same steps as a park (backend_memfd.c), on every object
 *    at once: arm each ring's own waiting word with a new generation,
 *    raise sync_waiters on each domain (its readers then kick wake_seq),
 *    one membarrier (F and G for all of them), look again, then one
 *    futex_waitv(2) over all the words. A waker that takes an episode
 *    changes the word, so the vector's compare fails or the wake arrives.
 *    Sleeps are slices of at most DEATH_SLICE_NS. A peer's death wakes
 *    nobody: the set asks the peers' role locks at most once a
 *    DEATH_SLICE_NS, at whichever look falls due (deaths_due()), and at
 *    the last look before a timeout; an MPSC consumer stalled on a dead
 *    producer's ticket has it tombstoned then, as the module's poll
 *    does. On kernels without futex_waitv (before 5.16,
 *    ENOSYS) the set sleeps on the first word alone in slices of
 *    FALLBACK_SLICE_NS.
 *
 * Wake calls: each sleep arms every ring, and each arm admits one wake
 * call from that ring's peer (the compare-and-swap that takes the episode
 * on memfd, the kernel's POLL bit on kmod), so a sleep costs the peers
 * at most one wake call per ring, and in practice as many as rings get a
 * message before the woken set disarms them: the rings share no word a
 * peer could take down for all (the peers of different rings need not
 * share any memory). The spin is what keeps a streaming set from
 * sleeping, and so from arming, at all.
 *
 * A waitset is used by one thread at a time, and an object must not be
 * waited on elsewhere (blocking pop, park, another set) while it is in
 * a set that waits: both would arm the same waiting word.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "epoch_internal.h"

#define DEATH_SLICE_NS		(5ULL * 1000 * 1000)
#define EPOCH_SLICE_NS		(1ULL * 1000 * 1000)
#define FALLBACK_SLICE_NS	(1ULL * 1000 * 1000)

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif

struct ws_entry {
	struct baton_ring *ring;	/* or NULL */
	struct baton_epoch *epoch;	/* or NULL */
	uint64_t target;		/* epoch: the epoch to be quiescent */
	uint64_t cookie;
	uint32_t *word;			/* memfd, while armed: the word */
	uint32_t armed;			/* and its value */
};

struct baton_waitset {
	uint32_t magic;			/* BATON__MAGIC_WAITSET, or the poison */
	int backend;			/* of the first object; 0 while empty */
	uint32_t count;
	uint32_t spin_budget;		/* looks before arming (lib/park.c) */
	int no_waitv;			/* futex_waitv said ENOSYS */
	uint32_t next;			/* where the next look starts */
	uint64_t deaths_due;		/* memfd: when to ask the locks next */
	struct ws_entry e[BATON_WAITSET_MAX];
};

int baton_waitset_create(struct baton_waitset **out)
{
	struct baton_waitset *ws;

	if (!out)
		return -EINVAL;
	ws = calloc(1, sizeof(*ws));
	if (!ws)
		return -ENOMEM;
	ws->magic = BATON__MAGIC_WAITSET;
	*out = ws;
	return 0;
}

/* -EINVAL for NULL, -EBADF for a destroyed set (best effort, ring.c). */
static int ws_check(const struct baton_waitset *ws)
{
	if (!ws)
		return -EINVAL;
	return ws->magic == BATON__MAGIC_WAITSET ? 0 : -EBADF;
}

int baton_waitset_destroy(struct baton_waitset *ws)
{
	int ret;

	if (!ws)
		return 0;	/* baton.h: NULL is a no-op */
	ret = ws_check(ws);
	if (ret)
		return ret;
	ws->magic = BATON__MAGIC_DEAD;
	baton__quarantine(ws);
	return 0;
}

static int add_entry(struct baton_waitset *ws, int backend,
		     const struct ws_entry *e)
{
	uint32_t i;

	for (i = 0; i < ws->count; i++) {
		if (ws->e[i].cookie == e->cookie)
			return -EEXIST;
		if ((e->ring && ws->e[i].ring == e->ring) ||
		    (e->epoch && ws->e[i].epoch == e->epoch))
			return -EEXIST;
	}
	if (ws->count == BATON_WAITSET_MAX)
		return -ENOSPC;
	if (ws->count && ws->backend != backend)
		return -EXDEV;
	ws->backend = backend;
	ws->e[ws->count++] = *e;
	return 0;
}

int baton_waitset_add_ring(struct baton_waitset *ws, struct baton_ring *r,
			   uint64_t cookie)
{
	struct ws_entry e = { .ring = r, .cookie = cookie };
	int ret = ws_check(ws);

	if (!ret)
		ret = __baton_ring_check(r, 0, 0);
	if (ret)
		return ret;
	return add_entry(ws, r->backend, &e);
}

int baton_waitset_add_epoch(struct baton_waitset *ws, struct baton_epoch *d,
			    uint64_t epoch, uint64_t cookie)
{
	struct ws_entry e = { .epoch = d, .target = epoch, .cookie = cookie };
	int ret = ws_check(ws);

	if (!ret)
		ret = __baton_epoch_check(d, 0);
	if (ret)
		return ret;
	if (epoch > baton_epoch_global(d))
		return -EINVAL;
	return add_entry(ws, d->backend, &e);
}

int baton_waitset_remove(struct baton_waitset *ws, uint64_t cookie)
{
	uint32_t i;
	int ret = ws_check(ws);

	if (ret)
		return ret;
	for (i = 0; i < ws->count; i++) {
		if (ws->e[i].cookie != cookie)
			continue;
		memmove(&ws->e[i], &ws->e[i + 1],
			(ws->count - i - 1) * sizeof(ws->e[0]));
		ws->count--;
		if (!ws->count)
			ws->backend = 0;
		return 0;
	}
	return -ENOENT;
}

/*
 * An SPSC ring with nothing to do: are its indices corrupt? The reserve
 * and peek steps say only "none" then (the blocking forms learn EPROTO
 * from their park), so the set asks as the park does (spsc_still() in
 * backend_memfd.c, the module's poll): the peer's index more than the
 * slot count from our own, which only we write.
 */
static int spsc_corrupt(const struct baton_ring *r)
{
	int consumer = r->role == BATON_ROLE_CONSUMER;
	uint64_t peer = __atomic_load_n(consumer ? r->tail : r->head,
					__ATOMIC_RELAXED);

	return (consumer ? peer - r->local : r->local - peer) > r->slot_count;
}

/* A ring's state from shared memory alone: BATON_WS_* bits or 0. */
static uint32_t ring_ready(struct baton_ring *r)
{
	uint64_t idx;
	int ret;

	if (r->kind == BATON_RING_MPSC) {
		if (r->role == BATON_ROLE_PRODUCER)
			return baton_mpsc_prod_room(r, &idx) ? BATON_WS_READY : 0;
		ret = baton_mpsc_cons_peek(r, &idx);
		/* A message or a tombstone to take: both are ready. */
		if (ret == 0 || ret == BATON_MPSC_LOST)
			return BATON_WS_READY;
		return ret == -EAGAIN ? 0 : BATON_WS_ERROR;
	}
	if (r->role == BATON_ROLE_PRODUCER)
		return baton_spsc_prod_reserve(r, 1, &idx) ? BATON_WS_READY :
		       spsc_corrupt(r) ? BATON_WS_ERROR : 0;
	return baton_spsc_cons_peek(r, 1, &idx) ? BATON_WS_READY :
	       spsc_corrupt(r) ? BATON_WS_ERROR : 0;
}

/*
 * Whether the peer has gone, for a ring that is not ready: memfd asks
 * the role locks (one fcntl), kmod reads the header's state bits.
 */
static int ring_gone(struct baton_ring *r)
{
	if (r->backend == BATON_BACKEND_MEMFD)
		return baton__memfd_peer_gone(r) == 1;
	return baton_ring_peer_gone(r);
}

/*
 * kmod, an MPSC consumer whose producers have all gone with a ticket
 * handed out and unpublished: only the module tombstones it, in its poll
 * or a park, and a wait with timeout 0 makes neither. Ask its poll once
 * (no sleep), then take the arm down again. 1 when asked.
 */
static int kmod_tombstone(struct baton_ring *r)
{
	struct pollfd pfd = { .fd = r->fd, .events = POLLIN };

	if (r->backend != BATON_BACKEND_KMOD)
		return 0;
	(void)poll(&pfd, 1, 0);
	baton_ring_poll_disarm(r);
	return 1;
}

/*
 * A ring that is not ready, when deaths are due: what a death left.
 * On memfd an MPSC consumer's next ticket may be a dead producer's,
 * which nobody will publish; the module's poll tombstones it, and here
 * the set does (the pop then returns BATON_MPSC_LOST), once before the
 * peers are asked and once after, since the holder may have died in
 * between. Gone means drained: an SPSC ring that is not ready is empty;
 * an MPSC consumer is drained only when no ticket past its own was
 * handed out (a published one may wait behind a ticket still held).
 */
static uint32_t ring_after_deaths(struct baton_ring *r)
{
	uint32_t what;

	if (baton__memfd_mpsc_reap(r))
		return ring_ready(r);
	if (!ring_gone(r))
		return 0;
	what = ring_ready(r);		/* gone, then look again */
	if (what)
		return what;
	if (baton__memfd_mpsc_reap(r))
		return ring_ready(r);
	/*
	 * A ticket out past our own: signed, as the module's
	 * baton_mpsc_check_consumer() and the memfd tombstoner compare, so
	 * a tail scribbled behind the head is no ticket (the pop says
	 * EPIPE there, and so does the set).
	 */
	if (r->kind == BATON_RING_MPSC && r->role == BATON_ROLE_CONSUMER &&
	    (int64_t)(__atomic_load_n(r->tail, __ATOMIC_ACQUIRE) -
		      r->local) > 0)
		return kmod_tombstone(r) ? ring_ready(r) : 0;
	return BATON_WS_GONE;
}

/*
 * A producer with room, when deaths are due: GONE instead of READY once
 * its consumer has gone, since nothing it pushes will be read (the
 * module's poll says EPOLLERR then). Room is what a producer has most of
 * the time, so waiting for it to fill before asking would hide the death
 * for as long as it does not push.
 */
static uint32_t producer_after_deaths(struct baton_ring *r, uint32_t what)
{
	if (what == BATON_WS_READY && r->role == BATON_ROLE_PRODUCER &&
	    ring_gone(r))
		return BATON_WS_GONE;
	return what;
}

/* collect()'s @how: what a look may cost beyond reading shared memory. */
#define LOOK_DEATHS	1	/* ask about the rings' peers */
#define LOOK_FULL	2	/* epoch entries: run a collection cycle */

/*
 * An epoch entry's state. A full look asks baton_epoch_poll(), which may
 * run a collection cycle (on memfd a membarrier: an IPI to every CPU
 * running a baton process, the peers this set waits on among them); the
 * spin's looks read the published frontier alone, so spinning costs
 * nobody else anything. A cycle runs at the first look, after arming and
 * after each sleep.
 */
static uint32_t epoch_ready(const struct ws_entry *e, int full)
{
	int ret;

	if (!full)
		return e->target <= __atomic_load_n(&e->epoch->hdr->frontier,
						    __ATOMIC_ACQUIRE) ?
		       BATON_WS_READY : 0;
	ret = baton_epoch_poll(e->epoch, e->target);
	return ret == 0 ? BATON_WS_READY : ret == -EAGAIN ? 0 : BATON_WS_ERROR;
}

/*
 * Look at every entry; fill @ev (up to @max) with the ready ones. With
 * LOOK_DEATHS, rings that are not ready are asked about their peer too (a
 * syscall each on memfd, so at most once a DEATH_SLICE_NS, deaths_due()).
 * A look starts where the last full one stopped, so that objects that
 * stay ready cannot hide the others from a caller taking fewer events
 * than are ready. A ring closed while in the set is an error event, not
 * a crash (its handle is poisoned, not freed: ring.c).
 */
static int collect(struct baton_waitset *ws, struct baton_waitset_event *ev,
		   uint32_t max, int how)
{
	uint32_t i, k, n = 0;

	for (k = 0; k < ws->count && n < max; k++) {
		struct ws_entry *e;
		uint32_t what = 0;

		i = (ws->next + k) % ws->count;
		e = &ws->e[i];
		if (e->ring && __baton_ring_check(e->ring, 0, 0)) {
			what = BATON_WS_ERROR;
		} else if (e->ring) {
			what = ring_ready(e->ring);
			if (!what && (how & LOOK_DEATHS))
				what = ring_after_deaths(e->ring);
			else if (how & LOOK_DEATHS)
				what = producer_after_deaths(e->ring, what);
		} else {
			what = epoch_ready(e, how & LOOK_FULL);
		}
		if (!what)
			continue;
		ev[n].cookie = e->cookie;
		ev[n].events = what;
		ev[n].index = i;
		if (++n == max)
			ws->next = (i + 1) % ws->count;
	}
	/*
	 * A death look that stopped at @max has not asked the rest: still
	 * due, so the next look (which starts where this one stopped) asks
	 * them, whenever it comes.
	 */
	if ((how & LOOK_DEATHS) && k < ws->count)
		ws->deaths_due = 0;
	return (int)n;
}

/*
 * memfd: whether the role locks are due to be asked (a death wakes
 * nobody, and asking costs a syscall per ring that is not ready): at
 * most once a DEATH_SLICE_NS, whatever ends the sleeps or whether the
 * caller sleeps at all. kmod reads the GONE bits: always.
 */
static int deaths_due(struct baton_waitset *ws)
{
	uint64_t now;

	if (ws->backend != BATON_BACKEND_MEMFD)
		return LOOK_DEATHS;
	now = baton__now_ns();
	if (now < ws->deaths_due)
		return 0;
	ws->deaths_due = now + DEATH_SLICE_NS;
	return LOOK_DEATHS;
}

/* timeout_ns < 0: none. Saturates. */
static uint64_t deadline_of(int64_t timeout_ns)
{
	uint64_t now = baton__now_ns();

	if (timeout_ns < 0 || now + (uint64_t)timeout_ns < now)
		return UINT64_MAX;
	return now + (uint64_t)timeout_ns;
}

/* ---- kmod: poll(2) ---- */

static int wait_kmod(struct baton_waitset *ws, uint64_t deadline)
{
	struct pollfd pfd[BATON_WAITSET_MAX];
	uint64_t now = baton__now_ns(), left;
	uint32_t i, n = 0;
	int epochs = 0, ms, ret;

	for (i = 0; i < ws->count; i++) {
		struct baton_ring *r = ws->e[i].ring;

		if (!r) {
			epochs = 1;
			continue;
		}
		pfd[n].fd = r->fd;
		pfd[n].events = r->role == BATON_ROLE_PRODUCER ? POLLOUT :
								  POLLIN;
		pfd[n].revents = 0;
		n++;
	}
	left = deadline > now ? deadline - now : 0;
	if (epochs && left > EPOCH_SLICE_NS)
		left = EPOCH_SLICE_NS;
	/* Round up: a deadline must not come back early as a busy loop. */
	ms = deadline == UINT64_MAX && !epochs ? -1 :
	     left / 1000000 >= INT_MAX ? INT_MAX :
	     (int)((left + 999999) / 1000000);
	ret = poll(pfd, n, ms) < 0 ? -errno : 0;
	/*
	 * Readiness is read from memory next; no flag left raised, on an
	 * error (EINTR) too: an arm left up costs each peer a WAKE call
	 * per publication for as long as the set stays idle.
	 */
	for (i = 0; i < ws->count; i++)
		if (ws->e[i].ring)
			baton_ring_poll_disarm(ws->e[i].ring);
	return ret;
}

/* ---- memfd: armed words and futex_waitv(2) ---- */

static void disarm_all(struct baton_waitset *ws)
{
	uint32_t i;

	for (i = 0; i < ws->count; i++) {
		struct ws_entry *e = &ws->e[i];

		if (!e->word)
			continue;
		if (e->ring)
			baton__memfd_ws_disarm(e->ring);
		else
			__atomic_fetch_sub(
				(uint32_t *)&e->epoch->hdr->sync_waiters, 1,
				__ATOMIC_RELAXED);
		e->word = NULL;
	}
}

/*
 * Arm every entry without a barrier each, then one membarrier for all:
 * F and G, as a park does for one word. A domain is armed by raising
 * sync_waiters (its readers' exits then kick wake_seq) and sleeping on
 * wake_seq as read after the raise.
 */
static int arm_all(struct baton_waitset *ws)
{
	uint32_t i;

	for (i = 0; i < ws->count; i++) {
		struct ws_entry *e = &ws->e[i];

		if (e->ring) {
			e->word = baton__memfd_ws_arm(e->ring, &e->armed);
			continue;
		}
		/*
		 * As a synchronizer: sync_epoch first, or the readers'
		 * exits (T) would not kick for this target.
		 */
		baton__epoch_memfd_raise_sync(e->epoch, e->target);
		__atomic_fetch_add((uint32_t *)&e->epoch->hdr->sync_waiters, 1,
				   __ATOMIC_SEQ_CST);
		e->word = (uint32_t *)&e->epoch->hdr->wake_seq;
		e->armed = __atomic_load_n(e->word, __ATOMIC_ACQUIRE);
	}
	return baton__memfd_barrier();
}

/* 0 woken (or a word changed), 1 the slice ran out, or -errno. */
static int sleep_words(struct baton_waitset *ws, uint64_t until)
{
	struct futex_waitv wv[BATON_WAITSET_MAX];
	struct timespec ts = {
		.tv_sec = (time_t)(until / 1000000000ULL),
		.tv_nsec = (long)(until % 1000000000ULL),
	};
	uint32_t i;

	if (!ws->no_waitv) {
		memset(wv, 0, sizeof(wv));
		for (i = 0; i < ws->count; i++) {
			wv[i].uaddr = (uintptr_t)ws->e[i].word;
			wv[i].val = ws->e[i].armed;
			wv[i].flags = FUTEX_32;
		}
		if (syscall(SYS_futex_waitv, wv, ws->count, 0, &ts,
			    CLOCK_MONOTONIC) >= 0)
			return 0;
		if (errno != ENOSYS)
			return errno == ETIMEDOUT ? 1 :
			       errno == EAGAIN ? 0 : -errno;
		ws->no_waitv = 1;
	}
	/* Before 5.16: the first word now, the rest within a short slice. */
	if (until > baton__now_ns() + FALLBACK_SLICE_NS) {
		until = baton__now_ns() + FALLBACK_SLICE_NS;
		ts.tv_sec = (time_t)(until / 1000000000ULL);
		ts.tv_nsec = (long)(until % 1000000000ULL);
	}
	if (!syscall(SYS_futex, ws->e[0].word, FUTEX_WAIT_BITSET,
		     ws->e[0].armed, &ts, NULL, FUTEX_BITSET_MATCH_ANY) ||
	    errno == EAGAIN)
		return 0;
	return errno == ETIMEDOUT ? 1 : -errno;
}

/*
 * One armed sleep: events found after arming (> 0 with @ev filled), or
 * 0 / -errno from sleep_words() (a slice that ran out is 0 too).
 */
static int wait_memfd(struct baton_waitset *ws, struct baton_waitset_event *ev,
		      uint32_t max, uint64_t deadline)
{
	uint64_t until = baton__now_ns() + DEATH_SLICE_NS;
	int n, ret;

	if (until > deadline)
		until = deadline;
	ret = arm_all(ws);
	if (!ret) {
		n = collect(ws, ev, max, LOOK_FULL);
		if (n) {
			disarm_all(ws);
			return n;
		}
		ret = sleep_words(ws, until);
	}
	disarm_all(ws);
	return ret == 1 ? 0 : ret;
}

/*
 * The set's spin limit: the smallest of its rings' (a handle that says
 * "never spin" is obeyed); a set of epoch entries alone does not spin.
 */
static uint32_t spin_limit(const struct baton_waitset *ws)
{
	uint32_t i, limit = UINT32_MAX;

	for (i = 0; i < ws->count; i++)
		if (ws->e[i].ring && ws->e[i].ring->spin_limit < limit)
			limit = ws->e[i].ring->spin_limit;
	return limit == UINT32_MAX ? 0 : limit;
}

/*
 * Look again up to the set's budget, a pause between looks, before
 * arming anything: a peer that is streaming answers within a few
 * microseconds, and a look that finds work costs no arm, no barrier, no
 * sleep, and the peers no wake call (each armed ring can cost one). The
 * budget adapts as a blocking call's does (lib/park.c, the same rule):
 * *polls says how many looks were made.
 */
static int spin(struct baton_waitset *ws, struct baton_waitset_event *ev,
		uint32_t max, uint32_t limit, uint64_t deadline,
		uint32_t *polls)
{
	uint32_t budget = !ws->spin_budget || ws->spin_budget > limit ?
			  limit : ws->spin_budget;
	uint64_t until = baton__spin_until(1, deadline);
	int n;

	for (*polls = 1; *polls <= budget; ++*polls) {
		baton__cpu_relax();
		n = collect(ws, ev, max, 0);	/* no syscall, no IPI */
		if (n)
			return n;
		if (baton__spin_expired(*polls, until))
			break;	/* the deadline, or long enough: wait */
	}
	*polls = budget;
	return 0;
}

/*
 * memfd asks the peers' role locks (a syscall per ring) when they are
 * due (deaths_due()), and once more before it answers -ETIMEDOUT: a death
 * wakes nobody, and the due time bounds the delay. kmod reads the GONE
 * bits from the header: every time.
 */
int baton_waitset_wait(struct baton_waitset *ws,
		       struct baton_waitset_event *ev, uint32_t max_events,
		       int64_t timeout_ns)
{
	uint32_t limit, polls = 0;
	uint64_t deadline, t0;
	int memfd, n = ws_check(ws);

	if (n)
		return n;
	if (!ev || !max_events || !ws->count)
		return -EINVAL;
	memfd = ws->backend == BATON_BACKEND_MEMFD;
	n = collect(ws, ev, max_events, LOOK_FULL | deaths_due(ws));
	if (n || timeout_ns == 0)
		return n ? n : -ETIMEDOUT;
	deadline = deadline_of(timeout_ns);
	limit = spin_limit(ws);
	t0 = baton__now_ns();
	n = limit ? spin(ws, ev, max_events, limit, deadline, &polls) : 0;
	if (n) {
		ws->spin_budget = baton__spin_next(ws->spin_budget, limit,
						   polls, 0);
		return n;
	}
	for (;;) {
		int last;

		n = memfd ? wait_memfd(ws, ev, max_events, deadline) :
			    wait_kmod(ws, deadline);
		last = baton__now_ns() >= deadline;
		if (!n)
			n = collect(ws, ev, max_events,
				    LOOK_FULL | (last ? LOOK_DEATHS :
						 deaths_due(ws)));
		if (n > 0 && limit)
			ws->spin_budget = baton__spin_next(ws->spin_budget,
							   limit, polls,
							   baton__now_ns() - t0 + 1);
		if (n)
			return n;
		if (last)
			return -ETIMEDOUT;
	}
}

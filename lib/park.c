// SPDX-License-Identifier: MIT
/*
 * libbaton parking: baton_ring_park(), the out-of-line wake call the
 * inline fast path makes, the blocking forms built on both, and the
 * adaptive spin budget they share with the MPSC pop.
 *
 * A blocking call first polls the ring up to r->spin_budget times with a
 * CPU pause between polls (a peer that is running will usually answer
 * within a few microseconds, far less than a park and wake round trip),
 * then parks in a loop: park, re-check, until there is work, the deadline
 * passes, or the backend reports the peer gone (-EPIPE; on memfd from the
 * peer's role lock, Documentation/memfd-backend.rst).
 *
 * Adaptive spinning (Documentation/memfd-backend.rst, "Spinning"): the
 * budget follows the handle's observed waits, as adaptive mutexes do.
 * After each wait that did not find work at once, the library works out
 * how many polls would have covered it: the polls it took, or for a wait
 * that parked, its duration less the park's own wake-up latency (which a
 * spin does not pay), over the cost of one poll; both figures are
 * measured once per process. If the limit would have covered that, the
 * budget moves a quarter of the way towards twice it plus SPIN_FLOOR, at
 * most the limit; if not (spinning the whole limit would only have been
 * paid on top of the park), towards SPIN_FLOOR. baton__spin_policy() is
 * that rule alone, with no clock in it.
 * So a streaming peer, whose gaps are short, earns a budget that rides
 * them out without parking, and a peer whose gaps outlast the limit
 * decays the budget in a few dozen waits, so it costs no long spin each
 * time. The budget stays in
 * [min(SPIN_FLOOR, spin_limit), spin_limit]: r->spin_limit (default
 * BATON_SPIN_DEFAULT, $BATON_SPIN_LIMIT, or set on the handle) is the
 * upper bound and the knob; 0 disables spinning. A new handle starts at
 * the limit.
 *
 * The ordering argument lives with the backends (F, G, H) and the inline
 * fast path (A..E); nothing here adds a barrier. A park returning 0 says
 * only "look again": spurious returns are allowed, so every park is
 * followed by a fresh look at the ring.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define BATON__RING_OUTLINE	/* baton.h: we define the exported forms */
#include "internal.h"

/*
 * The absolute deadline of a call given @timeout_ns (< 0: none, and 0 is
 * returned), saturating instead of wrapping; 1 when there is one. Shared
 * by every timed call (park.c, mpsc.c, names.c).
 */
int baton__deadline_from(int64_t timeout_ns, uint64_t *deadline)
{
	if (timeout_ns < 0)
		return 0;
	return baton__deadline_at(baton__now_ns(), timeout_ns, deadline);
}

/*
 * The same from a clock reading @now the caller has: a wait that reads
 * the clock for its own start too then reads it once, not two or three
 * times, before its first poll.
 */
int baton__deadline_at(uint64_t now, int64_t timeout_ns, uint64_t *deadline)
{
	if (timeout_ns < 0)
		return 0;
	*deadline = now + (uint64_t)timeout_ns < now ? UINT64_MAX :
						       now + (uint64_t)timeout_ns;
	return 1;
}

/* Polls every budget keeps, unless spin_limit itself is smaller. */
#define SPIN_FLOOR	16
/* Timed runs behind each once-per-process figure: the fastest counts. */
#define MEASURE_RUNS	4

uint32_t baton__spin_budget(const struct baton_ring *r)
{
	uint32_t b = r->spin_budget;

	return !b || b > r->spin_limit ? r->spin_limit : b;
}

/*
 * What one poll of a spin costs here, in ns (at least 1): the fastest of
 * a few timed runs of 256 pauses, measured once per process. Timing each
 * spin instead would let a preempted spin look slow and the budget grow
 * for an idle peer.
 */
static uint32_t poll_ns(void)
{
	static uint32_t cached;
	uint32_t ns = __atomic_load_n(&cached, __ATOMIC_RELAXED);
	uint64_t best = UINT64_MAX, t;
	int run, i;

	if (ns)
		return ns;
	for (run = 0; run < MEASURE_RUNS; run++) {
		t = baton__now_ns();
		for (i = 0; i < 256; i++)
			baton__cpu_relax();
		t = baton__now_ns() - t;
		if (t < best)
			best = t;
	}
	ns = best / 256 ? (uint32_t)(best / 256) : 1;
	/* Racing first calls store similar values; any of them will do. */
	__atomic_store_n(&cached, ns, __ATOMIC_RELAXED);
	return ns;
}

/*
 * A park's own wake-up latency here, in ns (at least 1): how late a
 * futex sleep of 1 us returns past its deadline, the fastest of a few
 * runs with the timer slack at 1 ns, measured once per process. That is
 * the path a woken parker takes (out of the futex, often out of an idle
 * CPU, back on it), without a second thread to do the waking; a wake
 * from another CPU adds an IPI, so the figure errs short, and a short
 * figure only makes the budget decay sooner.
 */
static uint32_t wake_ns(void)
{
	static uint32_t cached;
	uint32_t ns = __atomic_load_n(&cached, __ATOMIC_RELAXED), word = 0;
	uint64_t best = UINT64_MAX, t, late;
	struct timespec ts;
	int slack, run;

	if (ns)
		return ns;
	slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	if (slack > 0)
		prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0);
	for (run = 0; run < MEASURE_RUNS; run++) {
		t = baton__now_ns() + 1000;
		ts.tv_sec = (time_t)(t / 1000000000ULL);
		ts.tv_nsec = (long)(t % 1000000000ULL);
		syscall(SYS_futex, &word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG,
			0, &ts, NULL, FUTEX_BITSET_MATCH_ANY);
		late = baton__now_ns() - t;
		if (late < best)
			best = late;
	}
	if (slack > 0)
		prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
	ns = best > UINT32_MAX ? UINT32_MAX : best ? (uint32_t)best : 1;
	__atomic_store_n(&cached, ns, __ATOMIC_RELAXED);
	return ns;
}

/*
 * The polls a parked wait of @wait_ns in all would have needed had the
 * spin gone on: the wait less the park's own wake-up latency @wake,
 * which a spin does not pay, over the cost of one poll @poll.
 */
uint64_t baton__spin_need(uint64_t wait_ns, uint32_t wake, uint32_t poll)
{
	return wait_ns > wake ? (wait_ns - wake) / (poll ? poll : 1) : 0;
}

/*
 * The policy (file comment), deterministic: the budget after a wait that
 * needed @need polls, from @budget (0: the limit) under @limit. A wait
 * the limit covers moves the budget a quarter of the way towards twice
 * its need plus the floor, at most the limit; any longer one (spinning
 * the whole limit would not have spared the park) towards the floor.
 */
uint32_t baton__spin_policy(uint32_t budget, uint32_t limit, uint64_t need)
{
	uint32_t floor = limit < SPIN_FLOOR ? limit : SPIN_FLOOR;
	uint64_t b = !budget || budget > limit ? limit : budget, target;

	if (!limit)
		return 0;
	target = need <= limit ? 2 * need + floor : floor;
	if (target > limit)
		target = limit;
	if (target > b)
		b += (target - b + 3) / 4;
	else
		b -= (b - target + 3) / 4;
	return b < floor ? floor : (uint32_t)b;
}

/*
 * The budget after one wait, from @budget under @limit: the wait ended
 * after @polls polls (spinning), or it spun @polls, parked, and took
 * @wait_ns in all. For the blocking calls and the waitsets alike.
 */
uint32_t baton__spin_next(uint32_t budget, uint32_t limit, uint32_t polls,
			  uint64_t wait_ns)
{
	uint64_t need = polls;

	if (!limit)
		return 0;
	if (wait_ns) {
		/* It spun @polls in vain: it needed more than that. */
		need = baton__spin_need(wait_ns, wake_ns(), poll_ns());
		if (need <= polls)
			need = (uint64_t)polls + 1;
	}
	return baton__spin_policy(budget, limit, need);
}

void baton__spin_learn(struct baton_ring *r, uint32_t polls,
		       uint64_t wait_ns)
{
	if (r->spin_limit)
		r->spin_budget = baton__spin_next(r->spin_budget, r->spin_limit,
						  polls, wait_ns);
}

static int park_once(struct baton_ring *r, int has_deadline,
		     uint64_t deadline)
{
	r->park_calls++;
	return baton__ops(r->backend)->park(r, r->local, has_deadline,
					    deadline);
}

/*
 * An MPSC handle parks through the MPSC operation, on what the blocking
 * MPSC calls wait for: the consumer on the ticket at its head (a ticket
 * taken but not yet published is no message), a producer on the next
 * ticket, read now, whose slot's release is the room
 * baton_mpsc_prod_room() looks for. The SPSC park would compare the
 * ticket counter with the head and, on memfd, arm the producers' shared
 * summary word and zero it on the way out, uncounting a producer parked
 * in a push.
 */
static int park_mpsc(struct baton_ring *r, int has_deadline,
		     uint64_t deadline)
{
	uint64_t at = r->local;
	int ret;

	if (r->role == BATON_ROLE_PRODUCER)
		at = __atomic_load_n(r->tail, __ATOMIC_RELAXED);
	r->park_calls++;
	ret = baton__ops(r->backend)->mpsc_park(r, at, has_deadline, deadline);
	/* Other producers lapped the ticket read: there was room since. */
	if (ret == -EPROTO && r->role == BATON_ROLE_PRODUCER &&
	    __atomic_load_n(r->tail, __ATOMIC_RELAXED) != at)
		ret = 0;
	return ret == -EAGAIN ? 0 : ret;
}

int baton_ring_park(struct baton_ring *r, int64_t timeout_ns)
{
	uint64_t deadline = 0;
	int has, ret = __baton_ring_check(r, 0, 0);

	if (ret)
		return ret;
	has = baton__deadline_from(timeout_ns, &deadline);
	if (r->kind == BATON_RING_MPSC)
		return park_mpsc(r, has, deadline);
	return park_once(r, has, deadline);
}

/*
 * Called from baton_spsc_prod_submit()/cons_release() when they saw the
 * peer's waiting flag (E). Errors are not reported: the only useful
 * reaction would be to retry, and a parked peer re-checks on its own
 * deadline anyway.
 */
void __baton_ring_wake_peer(struct baton_ring *r)
{
	/* Count only the calls made (memfd: 1 = the episode was taken). */
	if (baton__ops(r->backend)->wake(r) != 1)
		r->wake_calls++;
}

/* One poll of whichever side this handle is. */
static inline uint32_t poll_ring(struct baton_ring *r, uint32_t n,
				 uint64_t *idx)
{
	return r->role == BATON_ROLE_PRODUCER ?
	       baton_spsc_prod_reserve(r, n, idx) :
	       baton_spsc_cons_peek(r, n, idx);
}

static int wait_ring(struct baton_ring *r, uint32_t n, uint64_t *idx,
		     int64_t timeout_ns)
{
	uint64_t deadline = 0, t0, until;
	uint32_t got, polls, budget;
	int has, ret, final = 0;

	if (!n)
		return -EINVAL;
	got = poll_ring(r, n, idx);
	if (got)
		return (int)got;
	if (timeout_ns == 0)
		return -ETIMEDOUT;
	budget = baton__spin_budget(r);
	t0 = baton__now_ns();
	has = baton__deadline_at(t0, timeout_ns, &deadline);
	until = baton__spin_until_at(t0, has, deadline);
	for (polls = 1; polls <= budget; polls++) {
		baton__cpu_relax();
		got = poll_ring(r, n, idx);
		if (got) {
			baton__spin_learn(r, polls, 0);
			return (int)got;
		}
		if (baton__spin_expired(polls, until))
			break;	/* the park: -ETIMEDOUT, -EPIPE or a wait */
	}
	for (;;) {
		ret = park_once(r, has, deadline);
		/* Work that raced with a timeout or EPIPE still counts. */
		got = poll_ring(r, n, idx);
		if (got) {
			baton__spin_learn(r, budget,
					  baton__now_ns() - t0 + 1);
			return (int)got;
		}
		if (ret < 0)
			return ret;
		/*
		 * Woken, or the word moved, with nothing to do, and past the
		 * deadline: one more park, which sees the deadline gone and
		 * makes its last checks (a dead peer: -EPIPE), then give up.
		 */
		if (baton__past(has, deadline) && final++)
			return -ETIMEDOUT;
	}
}

int baton_spsc_prod_reserve_wait(struct baton_ring *r, uint32_t n,
				 uint64_t *idx, int64_t timeout_ns)
{
	int ret = baton__ring_ok(r, BATON_RING_SPSC, BATON_ROLE_PRODUCER);

	if (ret)
		return ret;
	if (!idx)
		return -EINVAL;
	return wait_ring(r, n, idx, timeout_ns);
}

int baton_spsc_cons_peek_wait(struct baton_ring *r, uint32_t n, uint64_t *idx,
			      int64_t timeout_ns)
{
	int ret = baton__ring_ok(r, BATON_RING_SPSC, BATON_ROLE_CONSUMER);

	if (ret)
		return ret;
	if (!idx)
		return -EINVAL;
	return wait_ring(r, n, idx, timeout_ns);
}

/*
 * baton_spsc_push() after its inline look found no room (or a handle or
 * length to refuse): 0 (one message pushed) or a negative errno.
 */
int __baton_spsc_push_slow(struct baton_ring *r, const void *msg, size_t len,
			   int64_t timeout_ns)
{
	uint64_t idx;
	int ret = baton__ring_ok(r, BATON_RING_SPSC, BATON_ROLE_PRODUCER);

	if (ret)
		return ret;
	if (len > r->slot_size)
		return -EINVAL;
	ret = wait_ring(r, 1, &idx, timeout_ns);
	if (ret < 0)
		return ret;
	memcpy(baton_ring_slot(r, idx), msg, len);
	baton_spsc_prod_submit(r, 1);
	return 0;
}

/* baton_spsc_pop()'s wait: copies min(len, slot_size) bytes; 0 or -errno. */
int __baton_spsc_pop_slow(struct baton_ring *r, void *msg, size_t len,
			  int64_t timeout_ns)
{
	uint64_t idx;
	int ret = baton__ring_ok(r, BATON_RING_SPSC, BATON_ROLE_CONSUMER);

	if (ret)
		return ret;
	if (len > r->slot_size)
		len = r->slot_size;
	ret = wait_ring(r, 1, &idx, timeout_ns);
	if (ret < 0)
		return ret;
	memcpy(msg, baton_ring_slot(r, idx), len);
	baton_spsc_cons_release(r, 1);
	return 0;
}

/* The exported forms (libbaton 2.0): what the inline ones in baton.h do. */
int baton_spsc_push(struct baton_ring *r, const void *msg, size_t len,
		    int64_t timeout_ns)
{
	return baton__spsc_push_inline(r, msg, len, timeout_ns);
}

int baton_spsc_pop(struct baton_ring *r, void *msg, size_t len,
		   int64_t timeout_ns)
{
	return baton__spsc_pop_inline(r, msg, len, timeout_ns);
}

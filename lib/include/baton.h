/* SPDX-License-Identifier: MIT */
/*
 * libbaton: the public API.
 *
 * Setup, parking and everything else that makes a syscall is out of line in
 * the lib/ sources. The SPSC fast path is inline here and makes no syscall and uses
 * no locked instruction and no fence: plain loads and stores, with acquire
 * and release ordering, which x86 gives for free. Every ordering below is
 * tagged with its letter in the barrier-pair table of <linux/baton.h>
 * (Documentation/memory-ordering.rst).
 *
 * Names go object, role, step: baton_spsc_prod_reserve/submit for the
 * producer, baton_spsc_cons_peek/release for the consumer. Functions that
 * can fail return a negative errno. A __ prefix marks a symbol exported
 * only because an inline function calls it.
 */
#ifndef BATON_H
#define BATON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <linux/baton.h>	/* installed as <prefix>/include/baton/linux/baton.h */

#ifdef __cplusplus
extern "C" {
#endif

/* Which implementation stands behind a ring. */
enum baton_backend {
	BATON_BACKEND_AUTO = 0,	/* $BATON_BACKEND, else kmod if /dev/baton exists */
	BATON_BACKEND_KMOD = 1,	/* /dev/baton */
	BATON_BACKEND_MEMFD = 2,	/* shared memory file + futex + membarrier */
};

/**
 * struct baton_ring - one process's handle on one role of a ring
 *
 * The fields are public only so the fast path can be inline; treat them as
 * private. @local is this side's own index and @cached this side's copy of
 * the other side's index (for the producer: the head plus the slot count,
 * i.e. the first index it may not fill), so the shared lines are touched
 * once per batch, not once per slot.
 */
struct baton_ring {
	/* fast-path state, touched on every call */
	uint64_t local;
	uint64_t cached;
	uint64_t mask;
	uint8_t *slots;
	uint32_t slot_size;
	uint32_t slot_count;
	uint64_t *tail;			/* producer index, shared */
	uint64_t *head;			/* consumer index, shared */
	uint32_t *prod_waiting;		/* producer parked, shared */
	uint32_t *cons_waiting;		/* consumer parked, shared */

	/* slow-path state */
	const struct baton_ring_hdr *hdr;
	int fd;
	int role;
	int backend;
	uint32_t kind;
	uint64_t wake_calls;		/* wake syscalls this handle made */
	uint64_t park_calls;		/* park syscalls this handle made */
	uint32_t spin_limit;		/* polls before a blocking call parks */
	uint32_t reserved0;
	struct {
		void *addr;
		size_t len;
	} map[4];
	char name[BATON_NAME_MAX];
};

/**
 * struct baton_ring_params - geometry and permission of a new ring
 * @kind: BATON_RING_SPSC
 * @slot_count: power of two
 * @slot_size: multiple of 8
 * @mode: permission bits, e.g. 0600
 * @backend: enum baton_backend
 */
struct baton_ring_params {
	uint32_t kind;
	uint32_t slot_count;
	uint32_t slot_size;
	uint32_t mode;
	int backend;
};

/**
 * struct baton_ring_stats - what the slow path and the indices tell
 * @head: consumer index (messages consumed so far)
 * @tail: producer index (messages published so far)
 * @parks_full: producer parks on a full ring (kernel-counted; memfd: 0)
 * @parks_empty: consumer parks on an empty ring (kernel-counted; memfd: 0)
 * @wakes_of_producer: wake calls aimed at the producer side
 * @wakes_of_consumer: wake calls aimed at the consumer side
 * @producer_deaths: producer files released
 * @consumer_deaths: consumer files released
 * @wake_calls: wake syscalls made by this handle
 * @park_calls: park syscalls made by this handle
 */
struct baton_ring_stats {
	uint64_t head;
	uint64_t tail;
	uint64_t parks_full;
	uint64_t parks_empty;
	uint64_t wakes_of_producer;
	uint64_t wakes_of_consumer;
	uint64_t producer_deaths;
	uint64_t consumer_deaths;
	uint64_t wake_calls;
	uint64_t park_calls;
};

/* Setup and teardown (lib/ring.c and the backends). */
int baton_ring_create(const char *name, const struct baton_ring_params *p,
		      int role, struct baton_ring **out);
int baton_ring_open(const char *name, int role, int backend,
		    struct baton_ring **out);
void baton_ring_close(struct baton_ring *r);
int baton_ring_unlink(const char *name, int backend);
int baton_ring_fd(const struct baton_ring *r);
int baton_ring_stats(const struct baton_ring *r, struct baton_ring_stats *st);
const char *baton_backend_name(int backend);
int baton_backend_resolve(int backend);
int baton_version(uint32_t *abi_version, uint64_t *features);

/* Nonzero once the other role has gone (kmod backend only). */
static inline int baton_ring_peer_gone(const struct baton_ring *r)
{
	uint32_t st = __atomic_load_n(&r->hdr->state, __ATOMIC_ACQUIRE);

	return r->role == BATON_ROLE_PRODUCER ?
	       !!(st & BATON_STATE_CONSUMER_GONE) :
	       !!(st & BATON_STATE_PRODUCER_GONE);
}

/*
 * poll()/epoll on baton_ring_fd(): a poll that finds the ring not ready
 * raises this handle's waiting flag (with the kernel's barriers), and the
 * flag stays up after the fd turns ready, because edge-triggered epoll
 * never asks again. While it is up the peer makes a wake call per
 * publication. Call this when the handle stops waiting through poll; do
 * not call it while a poll or epoll_wait on the fd may still sleep.
 */
static inline void baton_ring_poll_disarm(struct baton_ring *r)
{
	uint32_t *own = r->role == BATON_ROLE_PRODUCER ? r->prod_waiting :
							 r->cons_waiting;

	/* No barrier: nobody of ours waits through poll any more. */
	__atomic_store_n(own, 0, __ATOMIC_RELAXED);
}

/*
 * Parking (lib/park.c). Blocks until the ring is not full (producer) or not
 * empty (consumer). timeout_ns < 0 waits forever. Returns 0 (re-check the
 * ring), -ETIMEDOUT, -EPIPE (peer gone; for the consumer: drained and the
 * producer gone, i.e. end of stream), -EINTR, -EPROTO (corrupt indices).
 */
int baton_ring_park(struct baton_ring *r, int64_t timeout_ns);
/* Out of line so the fast path stays small: the wake syscall. */
void __baton_ring_wake_peer(struct baton_ring *r);

/* Address of the slot with free-running index idx. */
static inline void *baton_ring_slot(const struct baton_ring *r, uint64_t idx)
{
	return r->slots + (size_t)(idx & r->mask) * r->slot_size;
}

/*
 * SPSC producer: exactly one thread of one process calls these.
 *
 * baton_spsc_prod_reserve() reports how many slots, up to n, are free
 * starting at *idx. It does not advance anything: calling it again before
 * baton_spsc_prod_submit() returns the same *idx.
 */
static inline uint32_t baton_spsc_prod_reserve(struct baton_ring *r,
					       uint32_t n, uint64_t *idx)
{
	uint64_t free_slots = r->cached - r->local;

	if (free_slots < n) {
		/* D, matches C: the consumer finished reading these slots. */
		r->cached = __atomic_load_n(r->head, __ATOMIC_ACQUIRE) +
			    r->slot_count;
		free_slots = r->cached - r->local;
		/*
		 * A scribbled head can claim more than the ring holds:
		 * believe none of it, and reload on the next call.
		 */
		if (free_slots > r->slot_count) {
			r->cached = r->local;
			free_slots = 0;
		}
		if (free_slots < n)
			n = (uint32_t)free_slots;
	}
	*idx = r->local;
	return n;
}

/* Publish n reserved slots, then wake the consumer only if it parked. */
static inline void baton_spsc_prod_submit(struct baton_ring *r, uint32_t n)
{
	r->local += n;
	/* A, matches B: slot writes before the tail that covers them. */
	__atomic_store_n(r->tail, r->local, __ATOMIC_RELEASE);
	/*
	 * E: store tail, then load the flag. StoreLoad without a fence here:
	 * the parking consumer pays for it with F and G in the kernel (or
	 * membarrier on the memfd backend), so this load cannot miss a
	 * consumer that then sleeps.
	 */
	if (__atomic_load_n(r->cons_waiting, __ATOMIC_RELAXED))
		__baton_ring_wake_peer(r);
}

/*
 * SPSC consumer: exactly one thread of one process calls these.
 *
 * baton_spsc_cons_peek() reports how many slots, up to n, hold published
 * messages starting at *idx. It does not consume them.
 */
static inline uint32_t baton_spsc_cons_peek(struct baton_ring *r, uint32_t n,
					    uint64_t *idx)
{
	uint64_t avail = r->cached - r->local;

	if (avail < n) {
		/* B, matches A: the slots are written before we read them. */
		r->cached = __atomic_load_n(r->tail, __ATOMIC_ACQUIRE);
		avail = r->cached - r->local;
		/* As in baton_spsc_prod_reserve(): a scribbled tail. */
		if (avail > r->slot_count) {
			r->cached = r->local;
			avail = 0;
		}
		if (avail < n)
			n = (uint32_t)avail;
	}
	*idx = r->local;
	return n;
}

/* Give n peeked slots back, then wake the producer only if it parked. */
static inline void baton_spsc_cons_release(struct baton_ring *r, uint32_t n)
{
	r->local += n;
	/* C, matches D: slot reads done before the producer may reuse them. */
	__atomic_store_n(r->head, r->local, __ATOMIC_RELEASE);
	/* E: as in baton_spsc_prod_submit(); the parked producer paid. */
	if (__atomic_load_n(r->prod_waiting, __ATOMIC_RELAXED))
		__baton_ring_wake_peer(r);
}

/* Single-message forms: copy len bytes (at most slot_size) in or out. */
static inline int baton_spsc_try_push(struct baton_ring *r, const void *msg,
				      size_t len)
{
	uint64_t idx;

	if (len > r->slot_size)
		return -22; /* -EINVAL, without pulling in <errno.h> */
	if (!baton_spsc_prod_reserve(r, 1, &idx))
		return -11; /* -EAGAIN */
	memcpy(baton_ring_slot(r, idx), msg, len);
	baton_spsc_prod_submit(r, 1);
	return 0;
}

static inline int baton_spsc_try_pop(struct baton_ring *r, void *msg,
				     size_t len)
{
	uint64_t idx;

	if (len > r->slot_size)
		len = r->slot_size;
	if (!baton_spsc_cons_peek(r, 1, &idx))
		return -11; /* -EAGAIN */
	memcpy(msg, baton_ring_slot(r, idx), len);
	baton_spsc_cons_release(r, 1);
	return 0;
}

/*
 * Blocking forms (lib/park.c): spin r->spin_limit polls, then park.
 * Return the number of slots (>= 1) or a negative errno as for
 * baton_ring_park(); timeout_ns < 0 waits forever.
 */
int baton_spsc_prod_reserve_wait(struct baton_ring *r, uint32_t n,
				 uint64_t *idx, int64_t timeout_ns);
int baton_spsc_cons_peek_wait(struct baton_ring *r, uint32_t n, uint64_t *idx,
			      int64_t timeout_ns);
int baton_spsc_push(struct baton_ring *r, const void *msg, size_t len,
		    int64_t timeout_ns);
int baton_spsc_pop(struct baton_ring *r, void *msg, size_t len,
		   int64_t timeout_ns);

#ifdef __cplusplus
}
#endif

#endif /* BATON_H */

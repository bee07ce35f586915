// SPDX-License-Identifier: MIT
/*
 * libbaton MPSC rings: the out-of-line half of the ticket ring whose fast
 * path is inline in <baton.h> (the MPSC section): mapping the sequence and
 * claim regions, the producer's wait on its reserved slot, the consumer's
 * blocking pop, batch pushes, the wake call, and the stats.
 *
 * Both backends come through here; each supplies mpsc_park/mpsc_wake. On
 * kmod the kernel parks producers on their slot and the consumer on its
 * ticket, and tombstones the tickets of producers that died. On memfd
 * the parked consumer does that itself (lib/backend_memfd.c,
 * mpsc_tombstone_dead()).
 *
 * Nothing here adds a barrier to the protocol (I..N, E in <linux/baton.h>);
 * a park returning 0 means only "look again".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define BATON__RING_OUTLINE	/* baton.h: we define the exported forms */
#include "internal.h"

/*
 * The sequence region holds slot_count u64 words, the claim region one
 * page per producer index; both page aligned, inside the file when its
 * size is known, and clear of the four SPSC regions (checked by
 * baton__offsets_valid() already) and of each other.
 */
int baton__mpsc_offsets_valid(const struct baton_ring_offsets *off,
			      uint32_t slot_count, uint32_t max_producers,
			      uint64_t file_size)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	const uint64_t start[4] = { off->hdr_mmap, off->prod_mmap,
				    off->cons_mmap, off->slots_mmap };
	const uint64_t len[4] = { off->hdr_size, off->prod_size,
				  off->cons_size, off->slots_size };
	uint64_t claims = (uint64_t)max_producers * off->claim_size;
	int i;

	if (!max_producers || max_producers > BATON_MPSC_PRODUCERS_MAX)
		return -EPROTO;
	if (off->seq_mmap % page || off->seq_size % page ||
	    off->claim_mmap % page || off->claim_size != page)
		return -EPROTO;
	if (off->seq_size < (uint64_t)slot_count * sizeof(uint64_t))
		return -EPROTO;
	if (off->seq_mmap > (1ULL << 48) || off->claim_mmap > (1ULL << 48))
		return -EPROTO;
	if (off->mpsc_hdr % 8 ||
	    off->mpsc_hdr < sizeof(struct baton_ring_hdr) ||
	    off->mpsc_hdr + sizeof(struct baton_mpsc_hdr) > off->hdr_size)
		return -EPROTO;
	if (file_size && (off->seq_mmap + off->seq_size > file_size ||
			  off->claim_mmap + claims > file_size))
		return -EPROTO;
	if (off->seq_mmap < off->claim_mmap + claims &&
	    off->claim_mmap < off->seq_mmap + off->seq_size)
		return -EPROTO;
	for (i = 0; i < 4; i++) {
		if (off->seq_mmap < start[i] + len[i] &&
		    start[i] < off->seq_mmap + off->seq_size)
			return -EPROTO;
		if (off->claim_mmap < start[i] + len[i] &&
		    start[i] < off->claim_mmap + claims)
			return -EPROTO;
	}
	return 0;
}

void baton__mpsc_unmap(struct baton_ring *r)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (r->mpsc_map[i].addr)
			munmap(r->mpsc_map[i].addr, r->mpsc_map[i].len);
		r->mpsc_map[i].addr = NULL;
		r->mpsc_map[i].len = 0;
	}
	r->seq = NULL;
	r->claim = NULL;
}

/*
 * Slot c belongs to the next lap: free for ticket c + N, or published or
 * tombstoned by it. Read as a ticket-c state that would be EPROTO.
 */
static int next_lap(const struct baton_ring *r, uint64_t c)
{
	uint64_t n = r->slot_count;
	/* L, matches K and M: as in baton_mpsc_cons_peek(). */
	uint64_t s = __atomic_load_n(&r->seq[c & r->mask], __ATOMIC_ACQUIRE);

	return s == c + n || s == c + n + 1 ||
	       s == ((c + n + 1) | BATON_MPSC_TOMB);
}

/*
 * A consumer frees slots with their sequence stores, seq[c] = c + N (M),
 * then moves the head past them (C): baton_mpsc_cons_release() one slot,
 * baton_mpsc_cons_release_n() a batch with one head store. One that died
 * between them left the head at c with slots c.. already handed to the
 * next lap, which may even have published (or, its producer dead,
 * tombstoned) tickets there. Those slots were consumed: resume behind
 * them, else every later consumer would read EPROTO at c and the ring
 * would be stuck. They are a prefix (M goes in ticket order), at most a
 * lap of them, and only the consumer writes head.
 */
static void resume_consumer(struct baton_ring *r)
{
	uint64_t c = r->local, end = c + r->slot_count;

	while (c != end && next_lap(r, c))
		c++;
	if (c == r->local)
		return;
	r->local = c;
	r->cached = c;
	/* C: as in baton_mpsc_cons_release(). */
	__atomic_store_n(r->head, c, __ATOMIC_RELEASE);
}

/*
 * Map the sequence words (both roles write them) and, for a producer, its
 * claim page; reset the claim (the kernel did too on kmod); resume the
 * consumer from the shared head (past a slot its predecessor freed).
 */
int baton__mpsc_attach(struct baton_ring *r, const struct baton_ring_desc *d,
		       int role)
{
	const struct baton_ring_offsets *off = &d->off;
	uint32_t maxp = d->max_producers;
	void *p;
	int ret;

	/* kmod open: the kernel's read-only header says how many. */
	if (!maxp && off->mpsc_hdr % 8 == 0 &&
	    off->mpsc_hdr >= sizeof(struct baton_ring_hdr) &&
	    off->mpsc_hdr + sizeof(struct baton_mpsc_hdr) <= off->hdr_size)
		maxp = ((const struct baton_mpsc_hdr *)((const uint8_t *)r->hdr +
			off->mpsc_hdr))->max_producers;
	ret = baton__mpsc_offsets_valid(off, d->slot_count, maxp,
					d->file_size);
	if (ret)
		return ret;
	/* Populated for the reason attach() in ring.c gives. */
	p = mmap(NULL, off->seq_size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_POPULATE, d->fd, (off_t)off->seq_mmap);
	if (p == MAP_FAILED)
		return -errno;
	r->mpsc_map[0].addr = p;
	r->mpsc_map[0].len = off->seq_size;
	r->seq = p;
	r->max_producers = maxp;
	r->mpsc_hdr = off->mpsc_hdr;
	/*
	 * kmod: the producers' waiting word is the kernel's, in the read-only
	 * header, so no producer can take down another's flag (E loads it).
	 * memfd keeps the producer page's word.
	 */
	if (r->backend == BATON_BACKEND_KMOD)
		r->prod_waiting = &((struct baton_mpsc_hdr *)
				    ((uintptr_t)r->hdr + off->mpsc_hdr))->prod_waiting;

	if (role == BATON_ROLE_PRODUCER) {
		p = mmap(NULL, off->claim_size, PROT_READ | PROT_WRITE,
			 MAP_SHARED, d->fd, (off_t)d->claim_off);
		if (p == MAP_FAILED) {
			ret = -errno;
			baton__mpsc_unmap(r);
			return ret;
		}
		r->mpsc_map[1].addr = p;
		r->mpsc_map[1].len = off->claim_size;
		r->claim = p;
		/* Ours alone: no push in progress. */
		__atomic_store_n(&r->claim->count, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&r->claim->floor, BATON_MPSC_NONE,
				 __ATOMIC_RELEASE);
		if (r->backend == BATON_BACKEND_MEMFD)
			baton__memfd_producer_attach(r);
	} else {
		/*
		 * memfd: the consumer wakes parked producers through the
		 * waiting word in each one's claim page: map them all.
		 */
		if (r->backend == BATON_BACKEND_MEMFD) {
			size_t len = (size_t)maxp * off->claim_size;

			p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
				 d->fd, (off_t)off->claim_mmap);
			if (p == MAP_FAILED) {
				ret = -errno;
				baton__mpsc_unmap(r);
				return ret;
			}
			r->mpsc_map[1].addr = p;
			r->mpsc_map[1].len = len;
			r->claim = p;
		}
		/* The last consumer's position; nobody else moves it. */
		r->local = __atomic_load_n(r->head, __ATOMIC_RELAXED);
		r->cached = r->local;
		resume_consumer(r);
	}
	return 0;
}

/*
 * Where the slot of @ticket stands, for the producer holding it, from one
 * read of its sequence word: 0 free, -EAGAIN still held by an earlier lap
 * (free for, or published or tombstoned by, ticket - k * slot_count),
 * -EPROTO anything else. The kernel's check is the same (kmod/mpsc.c).
 */
int baton__mpsc_slot_state(uint64_t seq, uint64_t ticket, uint64_t mask)
{
	uint64_t d;

	if (seq == ticket)
		return 0;
	d = ticket - (seq & ~BATON_MPSC_TOMB);
	if ((int64_t)d <= 0 || d > (1ULL << 62))
		return -EPROTO;
	if (seq & BATON_MPSC_TOMB)
		return ((d + 1) & mask) ? -EPROTO : -EAGAIN;
	if (!(d & mask) || !((d + 1) & mask))
		return -EAGAIN;
	return -EPROTO;
}

/* The header spells these without <errno.h>. */
_Static_assert(BATON_MPSC_LOST == -EOWNERDEAD, "BATON_MPSC_LOST");
_Static_assert(EAGAIN == 11 && EINVAL == 22 && EPROTO == 71, "errno values");

void __baton_mpsc_wake(struct baton_ring *r, uint64_t idx)
{
	/* As __baton_ring_wake_peer(): a parked peer re-checks anyway. */
	if (baton__ops(r->backend)->mpsc_wake(r, idx) != 1)
		r->wake_calls++;
}

/*
 * One poll of a producer's spin phase. Every 64th poll yields the CPU:
 * with more runnable processes than CPUs (the sweep's oversubscribed
 * points), the process that would free the slot may be waiting for this
 * very CPU, and a pure spin would burn the rest of the time slice.
 */
static void prod_poll_pause(uint32_t polls)
{
	if (polls % 64 == 0)
		sched_yield();
	else
		baton__cpu_relax();
}

/*
 * The next ticket's slot looked occupied (baton_mpsc_prod_room()): poll
 * for room for at most r->spin_limit polls before taking a ticket; 1 with
 * *tail a tail value whose slot was seen free, 0 with *tail the last tail
 * read. Then the caller takes a ticket anyway: a ring that stays full is
 * baton_mpsc_prod_wait()'s to park on, with the kernel's wakeup protocol,
 * which a producer holding no ticket has no slot to park on. Bounded, so a
 * scribbled tail or sequence costs at most one spin phase per push.
 */
static int prod_wait_room(struct baton_ring *r, uint64_t *tail)
{
	uint64_t until = baton__spin_until(0, 0);
	uint32_t polls;

	for (polls = 1; polls <= r->spin_limit; polls++) {
		prod_poll_pause(polls);
		if (baton_mpsc_prod_room(r, tail))
			return 1;
		if (baton__spin_expired(polls, until))
			break;
	}
	return 0;
}

/*
 * The producer holds @ticket and its slot is not free yet: spin, then
 * park on the slot until the consumer frees it. No timeout: the ticket
 * cannot be handed back (see baton_mpsc_prod_reserve()). On -EPIPE or
 * -EPROTO the ticket is abandoned with the claim still naming it, and
 * the handle refuses further pushes; closing it lets the kernel
 * tombstone the ticket.
 */
int baton_mpsc_prod_wait(struct baton_ring *r, uint64_t ticket)
{
	const struct baton_backend_ops *ops;
	uint64_t until;
	uint32_t polls;
	int ret = baton__ring_ok(r, BATON_RING_MPSC, BATON_ROLE_PRODUCER);

	if (ret)
		return ret;
	until = baton__spin_until(0, 0);
	for (polls = 1; polls <= r->spin_limit; polls++) {
		if (baton_mpsc_prod_slot_free(r, ticket))
			return 0;
		prod_poll_pause(polls);
		if (baton__spin_expired(polls, until))
			break;	/* the park looks at the consumer's life */
	}
	ops = baton__ops(r->backend);
	for (;;) {
		uint64_t s = __atomic_load_n(&r->seq[ticket & r->mask],
					     __ATOMIC_ACQUIRE);

		ret = baton__mpsc_slot_state(s, ticket, r->mask);
		if (ret != -EAGAIN)
			break;
		r->park_calls++;
		ret = ops->mpsc_park(r, ticket, 0, 0);
		if (ret && ret != -EINTR && ret != -EAGAIN) {
			/* Work that raced with EPIPE still counts. */
			if (baton_mpsc_prod_slot_free(r, ticket))
				ret = 0;
			break;
		}
	}
	if (ret)
		r->mpsc_error = ret;
	return ret;
}

/*
 * baton_mpsc_push() found the next ticket's slot occupied: the ring looks
 * full. Wait for room (bounded), then take a ticket and wait on its slot
 * as the inline push does. Out of line so the inline push keeps a single
 * fetch_add and no waiting loop.
 */
int baton_mpsc_push_full(struct baton_ring *r, const void *msg, size_t len)
{
	uint64_t t, tail;
	int room, ret = baton__ring_ok(r, BATON_RING_MPSC, BATON_ROLE_PRODUCER);

	if (ret)
		return ret;
	if (len > r->slot_size || (!msg && len))
		return -EINVAL;
	if (r->mpsc_error)
		return r->mpsc_error;
	room = prod_wait_room(r, &tail);
	t = baton_mpsc_prod_reserve_from(r, 1, tail);
	if (!(room && t == tail) && !baton_mpsc_prod_slot_free(r, t)) {
		ret = baton_mpsc_prod_wait(r, t);
		if (ret)
			return ret;
	}
	memcpy(baton_ring_slot(r, t), msg, len);
	baton_mpsc_prod_publish(r, t);
	baton_mpsc_prod_done(r);
	return 0;
}

/*
 * The batch publishes ticket by ticket, so an error (-EPIPE: the consumer
 * went away; -EPROTO) can come after some of it is out. *published says
 * how many, always: a caller that retries the whole batch would duplicate
 * those, one that drops it would lose the rest (the soak found both).
 *
 * __baton_mpsc_fill(): tickets [t, t + n) are this handle's (reserved and
 * in its claim); wait for each slot, copy, publish, then clear the claim:
 * n, or a negative errno. The slow half of baton_mpsc_push_bulk(), and the
 * body of the batch push.
 */
int __baton_mpsc_fill(struct baton_ring *r, uint64_t t, const void *msgs,
		      size_t len, uint32_t n, uint32_t *published)
{
	const uint8_t *m = msgs;
	uint32_t i;
	int ret;

	*published = 0;
	for (i = 0; i < n; i++) {
		if (!baton_mpsc_prod_slot_free(r, t + i)) {
			ret = baton_mpsc_prod_wait(r, t + i);
			if (ret)
				return ret;
		}
		memcpy(baton_ring_slot(r, t + i), m + (size_t)i * len, len);
		baton_mpsc_prod_publish(r, t + i);
		*published = i + 1;
	}
	baton_mpsc_prod_done(r);
	return (int)n;
}

int baton_mpsc_push_batch_n(struct baton_ring *r, const void *msgs,
			    size_t len, uint32_t n, uint32_t *published)
{
	uint32_t dummy;
	uint64_t t;
	int ret;

	if (!published)
		published = &dummy;
	*published = 0;
	ret = baton__ring_ok(r, BATON_RING_MPSC, BATON_ROLE_PRODUCER);
	if (ret)
		return ret;
	if (len > r->slot_size || !n || n > r->slot_count || (!msgs && len))
		return -EINVAL;
	if (r->mpsc_error)
		return r->mpsc_error;
	if (!baton_mpsc_prod_room(r, &t))
		prod_wait_room(r, &t);
	t = baton_mpsc_prod_reserve_from(r, n, t);
	return __baton_mpsc_fill(r, t, msgs, len, n, published);
}

/*
 * baton_mpsc_cons_release_n() freed tickets [idx, idx + n) and saw a
 * producer parked. kmod wakes every parked producer with one call; memfd
 * wakes the producers whose claim waits for one of these slots, so ask
 * for each, until the summary word says nobody is parked any more.
 */
void __baton_mpsc_wake_n(struct baton_ring *r, uint64_t idx, uint32_t n)
{
	__baton_mpsc_release_wake(r, idx, n);
}

/*
 * The same, for a release_n() that stores the head once per batch (2.6):
 * its own symbol, so that a binary built with that inline release binds
 * to LIBBATON_2.6 and never runs with a library whose consumer restart
 * walks past only one freed slot (Documentation/mpsc.rst, "Consumer
 * restart").
 */
void __baton_mpsc_release_wake(struct baton_ring *r, uint64_t idx, uint32_t n)
{
	uint32_t i;

	if (r->backend != BATON_BACKEND_MEMFD) {
		__baton_mpsc_wake(r, idx + n - 1);
		return;
	}
	for (i = 0; i < n; i++) {
		if (i && !baton__wait_armed(__atomic_load_n(r->prod_waiting,
							    __ATOMIC_RELAXED)))
			return;
		__baton_mpsc_wake(r, idx + i);
	}
}

int baton_mpsc_push_batch(struct baton_ring *r, const void *msgs, size_t len,
			  uint32_t n)
{
	return baton_mpsc_push_batch_n(r, msgs, len, n, NULL);
}

/*
 * Wait until the next ticket is settled: 0 (a message, peeked, not
 * released), BATON_MPSC_LOST (a tombstone, peeked), -EPROTO, or the
 * park's error (-ETIMEDOUT, -EPIPE ...). Spins its budget, then parks.
 * The caller releases what it peeked: baton_mpsc_pop() at once, the pool's
 * receive only once it has taken the buffer the message names.
 */
int baton__mpsc_peek_wait(struct baton_ring *r, uint64_t *idx,
			  int64_t timeout_ns)
{
	const struct baton_backend_ops *ops;
	uint64_t deadline = 0, t0, until;
	uint32_t polls, budget;
	int has, final = 0, ret = baton_mpsc_cons_peek(r, idx);

	if (ret != -EAGAIN || timeout_ns == 0)
		return ret == -EAGAIN ? -ETIMEDOUT : ret;
	budget = baton__spin_budget(r);
	t0 = baton__now_ns();
	has = baton__deadline_at(t0, timeout_ns, &deadline);
	until = baton__spin_until_at(t0, has, deadline);
	for (polls = 1; polls <= budget; polls++) {
		baton__cpu_relax();
		ret = baton_mpsc_cons_peek(r, idx);
		if (ret != -EAGAIN) {
			baton__spin_learn(r, polls, 0);
			return ret;
		}
		if (baton__spin_expired(polls, until))
			break;	/* the park: -ETIMEDOUT, -EPIPE or a wait */
	}
	ops = baton__ops(r->backend);
	for (;;) {
		int pk;

		r->park_calls++;
		pk = ops->mpsc_park(r, r->local, has, deadline);
		/* Work that raced with a timeout or EPIPE still counts. */
		ret = baton_mpsc_cons_peek(r, idx);
		if (ret != -EAGAIN) {
			baton__spin_learn(r, budget,
					  baton__now_ns() - t0 + 1);
			return ret;
		}
		if (pk < 0 && pk != -EAGAIN)
			return pk;
		/* As in park.c: one more park past the deadline, then stop. */
		if (baton__past(has, deadline) && final++)
			return -ETIMEDOUT;
	}
}

int __baton_mpsc_pop_slow(struct baton_ring *r, void *msg, size_t len,
			  int64_t timeout_ns, struct baton_mpsc_loss *loss)
{
	uint64_t idx;
	int ret = baton__ring_ok(r, BATON_RING_MPSC, BATON_ROLE_CONSUMER);

	if (ret)
		return ret;
	/*
	 * Look once more before waiting: the inline look did not run for a
	 * length over the slot size, and a message may have come since.
	 */
	ret = baton_mpsc_try_pop(r, msg, len, loss);
	if (ret != -EAGAIN || timeout_ns == 0)
		return ret == -EAGAIN ? -ETIMEDOUT : ret;
	ret = baton__mpsc_peek_wait(r, &idx, timeout_ns);
	if (ret == BATON_MPSC_LOST) {
		if (loss)
			baton_mpsc_cons_loss(r, idx, loss);
		r->tombstones_skipped++;
	} else if (ret < 0) {
		return ret;
	} else {
		memcpy(msg, baton_ring_slot(r, idx),
		       len > r->slot_size ? r->slot_size : len);
	}
	baton_mpsc_cons_release(r);
	return ret;
}

/* The exported form (libbaton 2.0): what the inline one in baton.h does. */
int baton_mpsc_pop(struct baton_ring *r, void *msg, size_t len,
		   int64_t timeout_ns, struct baton_mpsc_loss *loss)
{
	return baton__mpsc_pop_inline(r, msg, len, timeout_ns, loss);
}

/*
 * A push with a deadline. A ticket cannot be handed back, so the deadline
 * covers the wait for room and no ticket is taken until there is some:
 * baton_mpsc_try_push() takes the free slot's ticket with a
 * compare-and-swap or none. Between tries the producer spins its spin
 * limit, then parks holding no ticket, at the tail it read: its claim
 * names nothing (count 0), so on memfd the consumer's release of any slot
 * wakes it, and on kmod the module's WAKE re-checks the slot of that tail.
 * A park at a tail that another producer has since taken and published
 * says -EPROTO (that ticket's slot is a lap ahead of it); the tail having
 * moved tells that race from a corrupt ring, and the push looks again.
 */
int baton_mpsc_push_timeout(struct baton_ring *r, const void *msg, size_t len,
			    int64_t timeout_ns)
{
	const struct baton_backend_ops *ops;
	uint64_t deadline = 0, tail, until, now;
	uint32_t polls;
	int has, pk, final = 0, ret = baton__ring_ok(r, BATON_RING_MPSC,
					  BATON_ROLE_PRODUCER);

	if (ret)
		return ret;
	if (len > r->slot_size || (!msg && len))
		return -EINVAL;
	ret = baton_mpsc_try_push(r, msg, len);
	if (ret != -EAGAIN || timeout_ns == 0)
		return ret == -EAGAIN ? -ETIMEDOUT : ret;
	now = baton__now_ns();
	has = baton__deadline_at(now, timeout_ns, &deadline);
	until = baton__spin_until_at(now, has, deadline);
	for (polls = 1; polls <= r->spin_limit; polls++) {
		prod_poll_pause(polls);
		ret = baton_mpsc_try_push(r, msg, len);
		if (ret != -EAGAIN)
			return ret;
		if (baton__spin_expired(polls, until))
			break;	/* the park: -ETIMEDOUT, -EPIPE or a wait */
	}
	ops = baton__ops(r->backend);
	for (;;) {
		pk = 0;
		if (!baton_mpsc_prod_room(r, &tail)) {
			r->park_calls++;
			pk = ops->mpsc_park(r, tail, has, deadline);
			if (pk == -EPROTO &&
			    __atomic_load_n(r->tail, __ATOMIC_RELAXED) != tail)
				pk = 0;
		}
		/* Room that raced with a timeout or EPIPE still counts. */
		ret = baton_mpsc_try_push(r, msg, len);
		if (ret != -EAGAIN)
			return ret;
		if (pk < 0 && pk != -EAGAIN)
			return pk;
		if (baton__past(has, deadline) && final++)
			return -ETIMEDOUT;
	}
}

int baton_mpsc_stats(const struct baton_ring *r, struct baton_mpsc_stats *st)
{
	const struct baton_ring_hdr *h;
	const struct baton_mpsc_hdr *m;
	int ret = __baton_ring_check(r, BATON_RING_MPSC, 0);

	if (ret)
		return ret;
	if (!st)
		return -EINVAL;
	h = r->hdr;
	/* The offset as validated at attach, not as the header says now. */
	m = (const struct baton_mpsc_hdr *)((const uint8_t *)h + r->mpsc_hdr);
	memset(st, 0, sizeof(*st));
	/* Samples only; no ordering between them is promised. */
	st->head = __atomic_load_n(r->head, __ATOMIC_RELAXED);
	st->tail = __atomic_load_n(r->tail, __ATOMIC_RELAXED);
	st->parks_full = __atomic_load_n(&h->parks_full, __ATOMIC_RELAXED);
	st->parks_empty = __atomic_load_n(&h->parks_empty, __ATOMIC_RELAXED);
	st->wakes_of_producer = __atomic_load_n(&h->wakes_of_producer,
						__ATOMIC_RELAXED);
	st->wakes_of_consumer = __atomic_load_n(&h->wakes_of_consumer,
						__ATOMIC_RELAXED);
	st->producer_deaths = __atomic_load_n(&h->producer_deaths,
					      __ATOMIC_RELAXED);
	st->tombstones_written = __atomic_load_n(&m->tombstones_written,
						 __ATOMIC_RELAXED);
	st->tombstones_unattributed =
		__atomic_load_n(&m->tombstones_unattributed, __ATOMIC_RELAXED);
	st->producers = __atomic_load_n(&m->producers, __ATOMIC_RELAXED);
	st->max_producers = r->max_producers;
	st->tombstones_skipped = r->tombstones_skipped;
	st->wake_calls = r->wake_calls;
	st->park_calls = r->park_calls;
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * baton: the MPSC protocol's kernel side.
 *
 * Owns struct baton_mpsc, the part of a BATON_RING_MPSC ring that ring.c
 * does not: producer indices (one claim page each), the records of dead
 * producers, the decision whether an unpublished ticket can only belong to
 * a dead producer, and the tombstone that then replaces it. ring.c owns
 * the memory, the layout, the fds, park and wake; it calls in here for the
 * MPSC park conditions and at producer attach and release.
 *
 * Why a dead producer's ticket can be told apart from a live one's (the
 * argument Documentation/mpsc.rst spells out): a producer stores a floor
 * (a tail value it read, so at most its ticket) before its fetch_add (I),
 * then its [first, first + count) (J), publishes, and clears count, then
 * floor (J). Every ticket below the tail the kernel reads (acquire) was
 * handed out by a fetch_add the kernel has synchronised with, so for a live
 * holder of ticket c the kernel's later claim reads see either count
 * covering c, or count 0 with floor <= c (between fetch_add and J), or a
 * state after its publication of c, which the re-read of seq then sees.
 * A ticket below the tail that no live claim covers, with no live floor at
 * or below it, therefore belongs to a producer that has died, and only
 * then (the ticket is also below the dead-tickets horizon) is it
 * tombstoned. A live floor at or below c means "maybe mid-reserve": the
 * consumer re-checks after a short sleep instead of deciding.
 *
 * Locking: m->lock (spinlock) guards the producer table, the dead records
 * and the MPSC header counters. ring.c calls attach and detach with its
 * ring->lock held, so m->lock nests inside ring->lock; nothing here takes
 * any other lock. The consumer's check takes m->lock only once a producer
 * has died and only for tickets below the horizon.
 *
 * Events (netlink.c): each tombstone is reported with the dead producer's
 * pid, from under m->lock, so with GFP_ATOMIC; netlink.c merges
 * consecutive ones into one event (count, first ticket).
 *
 * Shared words (seq, tail, claims, slots) are writable by user space at
 * any time: each is read once, validated, and only the copy is used.
 */
#include <linux/bits.h>
#include <linux/compiler.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include <linux/baton.h>

#include "baton_kmod.h"

/* Dead producers remembered for attribution; older ones are forgotten. */
#define BATON_MPSC_DEAD_MAX	16

/*
 * A dead producer that may have held tickets: those it may have held are
 * in [lo, hi), exactly its claim's when @exact (its claim was complete),
 * else [floor, horizon) (it died with only its floor stored: one batch in
 * there, or nothing). Producers that died idle hold nothing and get none.
 */
struct baton_mpsc_dead {
	struct pid *pid;	/* the producer's opener; NULL: slot unused */
	u64 lo;
	u64 hi;
	bool exact;
};

struct baton_mpsc {
	spinlock_t lock;	/* everything below that is not const */
	u64 *tail;		/* shared */
	u64 *seq;		/* shared, slot_count words */
	u8 *slots;		/* shared */
	u8 *claims;		/* shared, one page per producer index */
	struct baton_mpsc_hdr *mhdr;	/* read-only to users */
	const struct baton_named *named;	/* the ring, for events */
	u64 mask;
	u32 slot_count;
	u32 slot_size;
	u32 max_producers;
	u64 live;		/* bit k: index k is attached */
	struct pid *pids[BATON_MPSC_PRODUCERS_MAX];
	/*
	 * The attached consumer's opener, or NULL: tombstones name pids as
	 * its pid namespace sees them, whichever task writes them (a
	 * kworker's ->poll for aio, a poller holding a passed fd).
	 */
	struct pid *consumer;
	/* Tickets of dead producers are all below this; 0: nobody died. */
	u64 horizon;
	bool dead_any;
	unsigned int dead_next;	/* next record to overwrite */
	struct baton_mpsc_dead dead[BATON_MPSC_DEAD_MAX];
	/* Every ticket a forgotten record may have held is in [lo, hi). */
	bool forgot_any;
	u64 forgot_lo;
	u64 forgot_hi;
};

static struct baton_mpsc_claim *baton_mpsc_claim(struct baton_mpsc *m,
						 unsigned int k)
{
	return (struct baton_mpsc_claim *)(m->claims + (size_t)k * PAGE_SIZE);
}

static void baton_mpsc_claim_reset(struct baton_mpsc_claim *cl)
{
	WRITE_ONCE(cl->first, 0);
	WRITE_ONCE(cl->count, 0);
	WRITE_ONCE(cl->floor, BATON_MPSC_NONE);
}

struct baton_mpsc *baton_mpsc_new(const struct baton_mpsc_layout *l)
{
	struct baton_mpsc *m;
	u32 i;

	m = kzalloc(sizeof(*m), GFP_KERNEL_ACCOUNT);
	if (!m)
		return NULL;
	spin_lock_init(&m->lock);
	m->tail = l->tail;
	m->seq = l->seq;
	m->slots = l->slots;
	m->claims = l->claims;
	m->mhdr = l->mhdr;
	m->named = l->named;
	m->slot_count = l->slot_count;
	m->slot_size = l->slot_size;
	m->mask = l->slot_count - 1;
	m->max_producers = l->max_producers;

	/* Nobody can map the ring yet: plain stores. */
	for (i = 0; i < l->slot_count; i++)
		m->seq[i] = i;
	for (i = 0; i < l->max_producers; i++)
		baton_mpsc_claim_reset(baton_mpsc_claim(m, i));
	m->mhdr->max_producers = l->max_producers;
	return m;
}

void baton_mpsc_free(struct baton_mpsc *m)
{
	unsigned int i;

	if (!m)
		return;
	for (i = 0; i < BATON_MPSC_PRODUCERS_MAX; i++)
		put_pid(m->pids[i]);
	for (i = 0; i < BATON_MPSC_DEAD_MAX; i++)
		put_pid(m->dead[i].pid);
	put_pid(m->consumer);
	kfree(m);
}

/* The consumer's opener attached (@pid) or gone (NULL). */
void baton_mpsc_set_consumer(struct baton_mpsc *m, struct pid *pid)
{
	struct pid *old;

	spin_lock(&m->lock);
	old = m->consumer;
	m->consumer = get_pid(pid);
	spin_unlock(&m->lock);
	put_pid(old);
}

/* The lowest free producer index, or -EBUSY at max_producers. */
int baton_mpsc_attach(struct baton_mpsc *m)
{
	unsigned int k;
	int ret = -EBUSY;

	spin_lock(&m->lock);
	for (k = 0; k < m->max_producers; k++) {
		if (m->live & BIT_ULL(k))
			continue;
		/* A fresh claim: the previous holder's words mean nothing. */
		baton_mpsc_claim_reset(baton_mpsc_claim(m, k));
		m->pids[k] = get_task_pid(current, PIDTYPE_TGID);
		m->live |= BIT_ULL(k);
		WRITE_ONCE(m->mhdr->producers, hweight64(m->live));
		ret = k;
		break;
	}
	spin_unlock(&m->lock);
	return ret;
}

/* @c in [lo, hi), in the ring's own (wrapping) order. */
static bool baton_mpsc_span_has(u64 lo, u64 hi, u64 c)
{
	return (s64)(c - lo) >= 0 && (s64)(hi - c) > 0;
}

/*
 * The tickets a producer that died with this claim may have held, all
 * below @horizon (its fetch_add was complete): false if none. A complete
 * claim (count != 0) is exactly its push's tickets, since first is stored
 * before count and count is cleared only after every one was published;
 * with count 0 and a floor, it may be between its fetch_add and its claim,
 * holding one batch at or above the floor.
 */
static bool baton_mpsc_dead_span(struct baton_mpsc_dead *d, u64 floor,
				 u64 first, u64 count, u64 horizon)
{
	u64 lo = count ? first : floor;

	if ((!count && floor == BATON_MPSC_NONE) || (s64)(horizon - lo) <= 0)
		return false;
	d->lo = lo;
	d->hi = count ? lo + min(count, horizon - lo) : horizon;
	d->exact = count;
	return true;
}

/* Record @d is about to be overwritten: what it spoke for stays unsure. */
static void baton_mpsc_forget(struct baton_mpsc *m, struct baton_mpsc_dead *d)
{
	lockdep_assert_held(&m->lock);
	if (!d->pid)
		return;
	if (!m->forgot_any) {
		m->forgot_lo = d->lo;
		m->forgot_hi = d->hi;
		m->forgot_any = true;
	} else {
		if ((s64)(d->lo - m->forgot_lo) < 0)
			m->forgot_lo = d->lo;
		if ((s64)(d->hi - m->forgot_hi) > 0)
			m->forgot_hi = d->hi;
	}
	put_pid(d->pid);
	d->pid = NULL;
}

/* Remember a dead producer that may hold tickets, forgetting the oldest. */
static void baton_mpsc_remember(struct baton_mpsc *m, struct pid *pid,
				u64 floor, u64 first, u64 count, u64 horizon)
{
	struct baton_mpsc_dead rec = { .pid = pid };
	struct baton_mpsc_dead *d;

	lockdep_assert_held(&m->lock);
	if (!baton_mpsc_dead_span(&rec, floor, first, count, horizon)) {
		put_pid(pid);	/* died idle: it held nothing */
		return;
	}
	d = &m->dead[m->dead_next];
	m->dead_next = (m->dead_next + 1) % BATON_MPSC_DEAD_MAX;
	baton_mpsc_forget(m, d);
	*d = rec;
}

/*
 * Producer file k released (closed, or its process died): it will never
 * store again. Remember its claim and the tail for attribution, then free
 * the index at once: its unpublished tickets are below the tail read here
 * (its fetch_add is complete), and a new holder of k starts from a reset
 * claim, so the record, not the page, speaks for the dead one.
 */
void baton_mpsc_detach(struct baton_mpsc *m, int k)
{
	struct baton_mpsc_claim *cl = baton_mpsc_claim(m, k);
	u64 tail, floor, first, count;

	spin_lock(&m->lock);
	floor = READ_ONCE(cl->floor);
	first = READ_ONCE(cl->first);
	count = READ_ONCE(cl->count);
	tail = READ_ONCE(*m->tail);
	baton_mpsc_remember(m, m->pids[k], floor, first, count, tail);
	m->pids[k] = NULL;
	/* Monotonic in the ring's own (wrapping) order. */
	if (!m->dead_any || (s64)(tail - m->horizon) > 0)
		WRITE_ONCE(m->horizon, tail);
	/* After the horizon: baton_mpsc_check_consumer() reads it lockless. */
	smp_store_release(&m->dead_any, true);
	baton_mpsc_claim_reset(cl);
	m->live &= ~BIT_ULL(k);
	WRITE_ONCE(m->mhdr->producers, hweight64(m->live));
	spin_unlock(&m->lock);
}

/*
 * The dead producer that held ticket @c, or NULL when the records cannot
 * say for certain (Documentation/mpsc.rst, "Who lost the ticket"). Only
 * dead producers can hold @c here (the caller ruled out every live one),
 * and each that may have is in a record or among the forgotten. A complete
 * claim that covers @c is certain: tickets are handed out once. Failing
 * that, an incomplete record is named only if it is the one record, kept
 * or forgotten, that may have held @c; a complete claim that does not
 * cover @c excludes its producer, whatever its floor.
 */
static struct baton_mpsc_dead *baton_mpsc_blame(struct baton_mpsc *m, u64 c)
{
	struct baton_mpsc_dead *maybe = NULL;
	unsigned int i, n = 0;

	lockdep_assert_held(&m->lock);
	for (i = 0; i < BATON_MPSC_DEAD_MAX; i++) {
		struct baton_mpsc_dead *d = &m->dead[i];

		if (!d->pid || !baton_mpsc_span_has(d->lo, d->hi, c))
			continue;
		if (d->exact)
			return d;
		maybe = d;
		n++;
	}
	if (m->forgot_any && baton_mpsc_span_has(m->forgot_lo, m->forgot_hi, c))
		return NULL;
	return n == 1 ? maybe : NULL;
}

static void baton_mpsc_tombstone_event(struct baton_mpsc *m, u64 c,
				       struct pid *pid)
{
	struct baton_event ev = {
		.type = BATON_EVENT_TOMBSTONES,
		.obj = m->named,
		.pid = pid,
		.index = -1,
		.count = 1,
		.ticket = c,
	};

	lockdep_assert_held(&m->lock);
	baton_event(&ev, GFP_ATOMIC);
}

/*
 * Ticket @c (below the tail, unpublished when last read) after a death:
 * -EAGAIN while a live claim covers it, BATON_MPSC_RECHECK while a live
 * producer may be between its fetch_add and J, else the tombstone.
 */
static int baton_mpsc_attribute(struct baton_mpsc *m, u64 c)
{
	u64 *sp = &m->seq[c & m->mask];
	struct baton_mpsc_dead *d;
	bool maybe = false;
	unsigned int k;
	pid_t pid = 0;
	int ret = 0;
	u64 s;

	spin_lock(&m->lock);
	for (k = 0; k < m->max_producers; k++) {
		struct baton_mpsc_claim *cl = baton_mpsc_claim(m, k);
		u64 count, first, floor;

		if (!(m->live & BIT_ULL(k)))
			continue;

		/* J: acquire, so a publication made before these is seen. */
		count = smp_load_acquire(&cl->count);
		/* J, as above */
		first = smp_load_acquire(&cl->first);
		/* J, as above */
		floor = smp_load_acquire(&cl->floor);

		if (count) {
			/* Complete bookkeeping: exactly these tickets. */
			if (c - first < count) {
				ret = -EAGAIN;
				goto out;
			}
			continue;
		}
		if (floor != BATON_MPSC_NONE && (s64)(c - floor) >= 0)
			maybe = true;
	}
	if (maybe) {
		ret = BATON_MPSC_RECHECK;
		goto out;
	}

	/* Ordered after the acquires above: see the file comment. */
	s = READ_ONCE(*sp);
	if (s != c) {
		ret = (s == c + 1 || s == ((c + 1) | BATON_MPSC_TOMB)) ?
		      0 : -EPROTO;
		goto out;
	}

	d = baton_mpsc_blame(m, c);
	if (d && m->consumer)
		pid = pid_nr_ns(d->pid, ns_of_pid(m->consumer));
	/* The pid first: the consumer reads it after seq (L). */
	WRITE_ONCE(*(u64 *)(m->slots + (size_t)(c & m->mask) * m->slot_size),
		   (u64)pid);
	/* K-style, matches L: the pid is visible before the tombstone. */
	smp_store_release(sp, (c + 1) | BATON_MPSC_TOMB);
	WRITE_ONCE(m->mhdr->tombstones_written,
		   m->mhdr->tombstones_written + 1);
	if (!pid)
		WRITE_ONCE(m->mhdr->tombstones_unattributed,
			   m->mhdr->tombstones_unattributed + 1);
	baton_mpsc_tombstone_event(m, c, d ? d->pid : NULL);
out:
	spin_unlock(&m->lock);
	return ret;
}

/*
 * The consumer at @c: 0 when seq[c] holds a message or a tombstone (or it
 * just wrote one), -EAGAIN to sleep, BATON_MPSC_RECHECK to sleep briefly,
 * -EPIPE at end of stream (@gone: no producer attached, read before the
 * shared words), -EPROTO for a sequence word in no valid state.
 */
int baton_mpsc_check_consumer(struct baton_mpsc *m, u64 c, bool gone)
{
	u64 s = READ_ONCE(m->seq[c & m->mask]);
	u64 tail;

	if (s == c + 1 || s == ((c + 1) | BATON_MPSC_TOMB))
		return 0;
	if (s != c)
		return -EPROTO;
	/* I: acquire, so the floor of whoever took a ticket below is seen. */
	tail = smp_load_acquire(m->tail);
	if ((s64)(tail - c) <= 0)
		return gone ? -EPIPE : -EAGAIN;	/* nobody holds ticket c */
	/* Nobody died holding anything at or above c. */
	if (!smp_load_acquire(&m->dead_any) ||
	    (s64)(READ_ONCE(m->horizon) - c) <= 0)
		return -EAGAIN;
	return baton_mpsc_attribute(m, c);
}

/*
 * Whether seq[@c] is a lap on from ticket @c: freed by a consumer whose
 * batch release has not stored the head yet (the library's
 * baton_mpsc_cons_release_n() makes all the slot stores of a batch, then
 * one head store), or already published for that next lap. poll(), which
 * reads the shared head, sees this for the length of a release.
 */
bool baton_mpsc_released_ahead(struct baton_mpsc *m, u64 c)
{
	u64 s = READ_ONCE(m->seq[c & m->mask]) & ~BATON_MPSC_TOMB;
	u64 lap = (u64)m->mask + 1;

	return s == c + lap || s == c + lap + 1;
}

/*
 * A producer holding ticket @i: 0 once seq[i] == i, -EAGAIN while the
 * slot still belongs to an earlier lap (free for, or published by, ticket
 * i - n * slot_count), -EPROTO for anything else.
 */
int baton_mpsc_check_producer(struct baton_mpsc *m, u64 i)
{
	u64 s = READ_ONCE(m->seq[i & m->mask]);
	u64 d;

	if (s == i)
		return 0;
	d = i - (s & ~BATON_MPSC_TOMB);
	/* An earlier lap: d > 0 and not absurdly far (2^62 tickets). */
	if ((s64)d <= 0 || d > (1ULL << 62))
		return -EPROTO;
	if (s & BATON_MPSC_TOMB)
		return ((d + 1) & m->mask) ? -EPROTO : -EAGAIN;
	if (!(d & m->mask) || !((d + 1) & m->mask))
		return -EAGAIN;
	return -EPROTO;
}

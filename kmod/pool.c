// SPDX-License-Identifier: GPL-2.0
/*
 * baton: buffer pools: named sets of buffer classes that processes
 * allocate from and free to in user space (Documentation/pool.rst).
 *
 * Owns struct baton_pool, its registry (baton_pools), pool fds (each one
 * a holder), their mappings, the reclaim of a released holder's buffers
 * and the decay timer. The protocol words (free queues, descriptors,
 * claim pages) are in the control pages, which every holder maps
 * read-write: the kernel reads each such word once, checks it against its
 * own copy of the geometry, and acts only on that copy. A scribbled word
 * is counted (hdr->bad_words) and never makes the kernel free a buffer
 * twice, touch memory outside the pool or wait on user space for long.
 *
 * Memory: the header and control pages are the module's (pages.c:
 * special PTEs, charged to the creator's memory cgroup); the data region
 * is a shmem file of the pool's own, so a buffer's pages are allocated on
 * first touch (charged to the toucher's cgroup) and the decay gives them
 * back as fallocate(FALLOC_FL_PUNCH_HOLE) does (baton_pool_punch()):
 * unmapped from every holder, then truncated.
 *
 * Locking: pool->lock (mutex) serialises holder indices, reclaim and the
 * decay pass against each other. Users never take it: the shared words
 * are changed by user space with atomics, and by the kernel with the same
 * atomics (a descriptor leaves FREE or OWNED only by a cmpxchg from the
 * exact value read, so the kernel and an allocator cannot both take it).
 * The one exception is IDLE, which a holder's allocation leaves with a
 * plain store: the kernel never takes an IDLE buffer, and gives its pages
 * back only under the reap word's asymmetric barrier (Y13, "idle
 * magazines" below).
 */
#include <linux/anon_inodes.h>
#include <linux/atomic.h>
#include <linux/bitmap.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/nospec.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>

#include <linux/baton.h>

#include "baton_kmod.h"
#include "compat.h"

/* Decay ticks in the window whose smallest free count is the reserve. */
#define BATON_POOL_WINDOW	4
/*
 * The largest data region (256 GiB; the geometry allows about 548). The
 * per-user byte cap says no long before, except to CAP_SYS_RESOURCE.
 */
#define BATON_POOL_DATA_MAX	BIT_ULL(38)

/*
 * Tickets a dead holder's refill may have taken without saying so: it
 * died after its compare-and-swap on the head and before it stored the
 * ticket. Kept until no live holder may hold them (baton_pool_resolve()).
 */
#define BATON_POOL_SUSPECTS	16
struct baton_pool_suspect {
	u32 cls;
	u32 n;
	u64 first;
};

/* The kernel's copy of one class, with its shared words' addresses. */
struct baton_pool_cls {
	struct baton_pool_class_layout lay;	/* trusted copy */
	u64 *head;
	u64 *tail;
	struct baton_pool_waiting *waiting;
	struct baton_pool_cold *cold;		/* the decay's hints */
	struct baton_pool_qent *q;
	struct baton_pool_desc *desc;
	u32 min_free[BATON_POOL_WINDOW];	/* free counts, last ticks */
	unsigned long *pending;		/* KERNEL, to queue (pool->lock) */
	u64 *idle_seen;			/* per buffer: its IDLE state last tick */
	u8 *idle_ticks;			/* ticks seen so, or IDLE_GONE */
};

struct baton_pool {
	struct baton_named named;	/* name, owner, reference, registry */
	u32 nr_classes;
	u32 decay_ms;
	u32 keep;
	u32 max_holders;
	u64 ctl_pages;
	u64 data_size;
	struct baton_pool_cls cls[BATON_POOL_CLASSES_MAX];

	struct baton_pages mem;		/* header, class blocks, claim pages */
	struct baton_pool_hdr *hdr;
	struct baton_mm_set mms;	/* the holders' mms: the reap's IPIs */
	struct file *shm;		/* the data region */

	struct mutex lock;		/* holders, reclaim, decay */
	struct pid **holder;		/* per index: its opener, or NULL */
	unsigned long *blind;		/* indices opened without TAKES_COLD */
	unsigned long ticks;		/* decay passes run */
	bool warm_later;		/* COLD left for a later pass (decay work) */
	u64 next_full_ms;		/* a quicker pass before it only warms */
	struct baton_later decay;	/* baton_pool_decay_work() */
	struct baton_pool_suspect suspect[BATON_POOL_SUSPECTS];
	u32 nr_suspects;		/* pool->lock */
	struct baton_later repair;	/* retries what a live holder held */
	u32 repair_ms;			/* its next delay (pool->lock) */
	u32 repair_left;		/* what its last run left (U32_MAX: none) */
	wait_queue_head_t waitq;	/* BATON_POOL_IOC_WAIT */
};

/* One pool fd: a reference on the pool and a holder index. */
struct baton_pool_file {
	struct baton_pool *pool;
	u32 holder;
};

static void baton_pool_free(struct kref *ref);
static const struct file_operations baton_pool_fops;

struct baton_names baton_pools = {
	.lock = __MUTEX_INITIALIZER(baton_pools.lock),
	.list = LIST_HEAD_INIT(baton_pools.list),
	.live = LIST_HEAD_INIT(baton_pools.live),
	.added_wq = __WAIT_QUEUE_HEAD_INITIALIZER(baton_pools.added_wq),
	.release = baton_pool_free,
	.created_event = BATON_EVENT_POOL_CREATED,
	.unlinked_event = BATON_EVENT_POOL_UNLINKED,
};

static void baton_pool_put(struct baton_pool *pool)
{
	kref_put(&pool->named.ref, baton_pool_free);
}

/* Counters live in the read-only header; only the kernel writes them. */
static void baton_pool_count(__u64 *ctr, u64 n)
{
	WRITE_ONCE(*ctr, *ctr + n);
}

static u64 baton_pool_now_ms(void)
{
	return ktime_to_ms(ktime_get());
}

/* ---- geometry ---- */

/* The queue entries of a class: a power of two, >= 2 * count, >= 4. */
static u32 baton_pool_qcap(u32 count)
{
	return max_t(u32, 4, roundup_pow_of_two(2 * count));
}

static u64 baton_pool_block_size(u32 qcap, u32 count)
{
	return PAGE_ALIGN(BATON_POOL_Q_ENTRIES +
			  (u64)qcap * sizeof(struct baton_pool_qent) +
			  (u64)count * sizeof(struct baton_pool_desc));
}

/*
 * Every rule of struct baton_pool_create's geometry: EINVAL for a bound,
 * an order or a reserved word, E2BIG when the data region is too large.
 */
static int baton_pool_check(const struct baton_pool_create *k)
{
	u64 data = 0;
	u32 i;

	if ((k->flags & ~BATON_POOL_F_TAKES_COLD) || k->reserved0 ||
	    k->reserved[0] || k->reserved[1])
		return -EINVAL;
	if (k->mode & ~0777)
		return -EINVAL;
	if (!k->nr_classes || k->nr_classes > BATON_POOL_CLASSES_MAX)
		return -EINVAL;
	if (k->decay_ms && (k->decay_ms < BATON_POOL_DECAY_MIN_MS ||
			    k->decay_ms > BATON_POOL_DECAY_MAX_MS))
		return -EINVAL;
	if (!k->max_holders || k->max_holders > BATON_POOL_HOLDERS_MAX)
		return -EINVAL;
	for (i = 0; i < BATON_POOL_CLASSES_MAX; i++) {
		const struct baton_pool_class *c = &k->classes[i];

		if (i >= k->nr_classes) {
			if (c->buf_shift || c->count)
				return -EINVAL;
			continue;
		}
		if (c->buf_shift < BATON_POOL_SHIFT_MIN ||
		    c->buf_shift > BATON_POOL_SHIFT_MAX ||
		    !c->count || c->count > BATON_POOL_COUNT_MAX ||
		    k->keep > c->count)
			return -EINVAL;
		if (i && c->buf_shift <= k->classes[i - 1].buf_shift)
			return -EINVAL;
		data += (u64)c->count << c->buf_shift;
	}
	return data > BATON_POOL_DATA_MAX ? -E2BIG : 0;
}

/* Class layouts and region sizes from the checked geometry. */
static void baton_pool_plan(struct baton_pool *pool,
			    const struct baton_pool_create *k)
{
	u64 ctl = 0, data = 0;
	u32 i;

	for (i = 0; i < k->nr_classes; i++) {
		struct baton_pool_class_layout *lay = &pool->cls[i].lay;

		lay->buf_shift = k->classes[i].buf_shift;
		lay->count = k->classes[i].count;
		lay->qcap = baton_pool_qcap(lay->count);
		lay->ctl_off = ctl;
		lay->data_off = data;
		ctl += baton_pool_block_size(lay->qcap, lay->count);
		data += (u64)lay->count << lay->buf_shift;
	}
	pool->nr_classes = k->nr_classes;
	pool->decay_ms = k->decay_ms;
	pool->keep = k->keep;
	pool->max_holders = k->max_holders;
	/* The claim pages follow the class blocks, one per holder index. */
	pool->ctl_pages = (ctl >> PAGE_SHIFT) + k->max_holders;
	pool->data_size = data;
}

static u8 *baton_pool_ctl(struct baton_pool *pool)
{
	return (u8 *)pool->mem.base + PAGE_SIZE;
}

static struct baton_pool_claim *baton_pool_claim(struct baton_pool *pool,
						 u32 holder)
{
	return (struct baton_pool_claim *)(baton_pool_ctl(pool) +
					   pool->hdr->claim_off +
					   ((u64)holder << PAGE_SHIFT));
}

/*
 * The index's life word (uapi: BATON_POOL_CLAIM_LIFE): the next odd value
 * when a holder takes the index; even when its release begins, then a
 * full barrier before the release walks the descriptors (Y8: against a
 * sharer's share, full barrier, then load of the word). Under pool->lock.
 */
static void baton_pool_life_begin(struct baton_pool *pool, u32 holder)
{
	u64 *w = (u64 *)((u8 *)baton_pool_claim(pool, holder) +
			 BATON_POOL_CLAIM_LIFE);

	BUILD_BUG_ON(sizeof(struct baton_pool_claim) + 8 > BATON_POOL_CLAIM_LIFE);
	WRITE_ONCE(*w, (READ_ONCE(*w) | 1) + 2);
}

static void baton_pool_life_end(struct baton_pool *pool, u32 holder)
{
	u64 *w = (u64 *)((u8 *)baton_pool_claim(pool, holder) +
			 BATON_POOL_CLAIM_LIFE);
	u64 v = READ_ONCE(*w);

	if (v & 1)
		WRITE_ONCE(*w, v + 1);
	/* Y8: the word before the walk's loads; pairs with send_shared. */
	smp_mb();
}

/* Nobody can map the pool yet: plain stores. Every buffer FREE, queued. */
static void baton_pool_init_layout(struct baton_pool *pool)
{
	struct baton_pool_hdr *hdr = pool->mem.base;
	u8 *ctl = baton_pool_ctl(pool);
	u32 i, j;

	pool->hdr = hdr;
	hdr->magic = BATON_POOL_MAGIC;
	hdr->abi_version = BATON_ABI_VERSION;
	hdr->nr_classes = pool->nr_classes;
	hdr->decay_ms = pool->decay_ms;
	hdr->keep = pool->keep;
	hdr->max_holders = pool->max_holders;
	hdr->ctl_mmap = PAGE_SIZE;
	hdr->ctl_size = pool->ctl_pages << PAGE_SHIFT;
	hdr->data_mmap = (1 + pool->ctl_pages) << PAGE_SHIFT;
	hdr->data_size = pool->data_size;
	hdr->claim_off = hdr->ctl_size - ((u64)pool->max_holders << PAGE_SHIFT);

	for (i = 0; i < pool->max_holders; i++) {
		struct baton_pool_claim *cl = baton_pool_claim(pool, i);

		cl->floor = BATON_POOL_NO_TICKET;
		cl->ticket = BATON_POOL_NO_TICKET;
	}
	for (i = 0; i < pool->nr_classes; i++) {
		struct baton_pool_cls *c = &pool->cls[i];
		u8 *blk = ctl + c->lay.ctl_off;

		hdr->classes[i] = c->lay;
		c->head = (u64 *)(blk + BATON_POOL_Q_HEAD);
		c->tail = (u64 *)(blk + BATON_POOL_Q_TAIL);
		c->waiting = (struct baton_pool_waiting *)
			     (blk + BATON_POOL_Q_WAIT);
		c->cold = (struct baton_pool_cold *)(blk + BATON_POOL_Q_COLD);
		c->cold->low_water = c->lay.count;
		c->q = (struct baton_pool_qent *)(blk + BATON_POOL_Q_ENTRIES);
		c->desc = (struct baton_pool_desc *)(c->q + c->lay.qcap);
		for (j = 0; j < c->lay.qcap; j++)
			c->q[j].seq = j < c->lay.count ? j + 1 : j;
		for (j = 0; j < c->lay.count; j++) {
			c->q[j].value = BATON_POOL_ENTRY(1, j);
			c->desc[j].state = BATON_POOL_STATE(1, BATON_POOL_FREE,
							    0);
		}
		*c->tail = c->lay.count;
		for (j = 0; j < BATON_POOL_WINDOW; j++)
			c->min_free[j] = c->lay.count;
	}
}

/* ---- the kernel on the free queues ---- */

static u64 baton_pool_entry_index(u64 v)
{
	return v & 0xffffffffULL;
}

static u32 baton_pool_entry_gen(u64 v)
{
	return v >> 32;
}

/*
 * Queue buffer @index, which the kernel holds (KERNEL, its generation
 * @gen, aux @aux already stored), if the entry at the tail is free for
 * its ticket now: the ticket is taken with a cmpxchg of the tail only
 * then, so the kernel never holds a ticket it cannot publish at once and
 * never waits on user space. False if it is not: the buffer stays KERNEL
 * and pending, and the repair work tries again.
 */
static bool baton_pool_try_push(struct baton_pool_cls *c, u32 index, u32 gen)
{
	struct baton_pool_desc *d = &c->desc[index];
	int tries;

	for (tries = 0; tries < 16; tries++) {
		u64 t = atomic64_read_acquire((atomic64_t *)c->tail);
		struct baton_pool_qent *e = &c->q[t & (c->lay.qcap - 1)];

		/* Y3: the previous lap's taker has read the entry. */
		if (smp_load_acquire(&e->seq) != t)
			return false;
		if (atomic64_cmpxchg((atomic64_t *)c->tail, t, t + 1) != t)
			continue;	/* a user freer took it first */
		/* aux is already there: FREE says the buffer may be taken. */
		smp_store_release(&d->state,
				  BATON_POOL_STATE(gen, BATON_POOL_FREE, 0));
		WRITE_ONCE(e->value, BATON_POOL_ENTRY(gen, index));
		/* Y1: the descriptor and the value before the publication. */
		smp_store_release(&e->seq, t + 1);
		return true;
	}
	return false;
}

/*
 * The repair work's schedule (baton_pool_repair_work()): every REPAIR_MS
 * while it makes progress, backing off to REPAIR_MAX_MS while it makes
 * none. New work (a dead holder's) brings it back to REPAIR_MS at once:
 * a backoff earned by older, stuck work must not delay it.
 */
#define REPAIR_MS	5
#define REPAIR_MAX_MS	40

static void baton_pool_repair_soon(struct baton_pool *pool)
{
	lockdep_assert_held(&pool->lock);
	pool->repair_ms = REPAIR_MS;
	pool->repair_left = U32_MAX;
	baton_later_arm(&pool->repair, REPAIR_MS);
}

/*
 * Queue buffer @index (the kernel's: KERNEL) as FREE(@gen), now or, if
 * the tail's entry is still held by a slow taker of the previous lap,
 * from the repair work. pool->lock keeps UNSTICK away meanwhile.
 */
static void baton_pool_push(struct baton_pool *pool, struct baton_pool_cls *c,
			    u32 index, u32 gen, u64 aux)
{
	struct baton_pool_desc *d = &c->desc[index];

	lockdep_assert_held(&pool->lock);
	WRITE_ONCE(d->aux, aux);
	WRITE_ONCE(d->state, BATON_POOL_STATE(gen, BATON_POOL_KERNEL, 0));
	if (baton_pool_try_push(c, index, gen))
		return;
	set_bit(index, c->pending);
	baton_pool_repair_soon(pool);
}

/*
 * The pending buffers of every class, again. A descriptor that no longer
 * says KERNEL was scribbled: it is dropped (counted), never queued twice.
 * Returns how many are still pending. A class holds up to 2^16 buffers:
 * the walk yields the CPU as it goes (pool->lock is a mutex).
 */
static u32 baton_pool_push_pending(struct baton_pool *pool)
{
	u32 i, j, left = 0, seen = 0;

	for (i = 0; i < pool->nr_classes; i++) {
		struct baton_pool_cls *c = &pool->cls[i];

		for_each_set_bit(j, c->pending, c->lay.count) {
			u64 s = READ_ONCE(c->desc[j].state);

			if (!(++seen % 1024))
				cond_resched();

			if (BATON_POOL_S_KIND(s) != BATON_POOL_KERNEL) {
				clear_bit(j, c->pending);
				baton_pool_count(&pool->hdr->bad_words, 1);
			} else if (baton_pool_try_push(c, j,
						       BATON_POOL_S_GEN(s))) {
				clear_bit(j, c->pending);
			} else {
				left++;
			}
		}
	}
	return left;
}

static u32 baton_pool_next_gen(u32 gen)
{
	return gen + 1 ? gen + 1 : 1;
}

/*
 * Queue again a buffer a dead taker removed from the queue but never
 * took: it is FREE with the generation its entry carried, and on no
 * queue. Anything else (taken, freed since, scribbled) is left alone.
 */
static void baton_pool_requeue(struct baton_pool *pool,
			       struct baton_pool_cls *c, u64 v)
{
	u64 index = baton_pool_entry_index(v);
	u32 gen = baton_pool_entry_gen(v);
	struct baton_pool_desc *d;
	u64 s;

	if (v == BATON_POOL_NO_INDEX || index >= c->lay.count || !gen)
		return;
	/* @v is a holder's word: no speculative load past the array. */
	index = array_index_nospec(index, c->lay.count);
	d = &c->desc[index];
	s = BATON_POOL_STATE(gen, BATON_POOL_FREE, 0);
	if (cmpxchg(&d->state, s,
		    BATON_POOL_STATE(gen, BATON_POOL_KERNEL, 0)) != s)
		return;
	baton_pool_push(pool, c, index, gen, READ_ONCE(d->aux));
	baton_pool_count(&pool->hdr->repaired, 1);
}

/*
 * OWNED by @holder, or IDLE in its magazine (BATON_FEAT_POOL_IDLE): the
 * holder's either way, for its death as for its flush.
 */
static bool baton_pool_holders(u64 s, u32 holder)
{
	return (BATON_POOL_S_KIND(s) == BATON_POOL_OWNED ||
		BATON_POOL_S_KIND(s) == BATON_POOL_IDLE) &&
	       BATON_POOL_S_HOLDER(s) == holder + 1;
}

/*
 * Publish @v at ticket @t if the entry is still unpublished for it. Only
 * a value whose buffer is FREE with that generation, or the dead
 * @holder's (OWNED or IDLE; made FREE here, so the reclaim walk does not
 * take it too), is published; otherwise the entry becomes a hole
 * (BATON_POOL_NO_INDEX).
 */
static void baton_pool_fill(struct baton_pool *pool, struct baton_pool_cls *c,
			    u64 t, u64 v, u32 holder)
{
	struct baton_pool_qent *e = &c->q[t & (c->lay.qcap - 1)];
	u64 index = baton_pool_entry_index(v);
	u32 gen = baton_pool_entry_gen(v);

	/* Y1: nothing published there yet (and nothing to read). */
	if (smp_load_acquire(&e->seq) != t)
		return;
	if (index < c->lay.count && gen) {
		struct baton_pool_desc *d;
		u64 free = BATON_POOL_STATE(gen, BATON_POOL_FREE, 0);
		u64 s;

		/* @v is a holder's word: no speculative load past the array. */
		index = array_index_nospec(index, c->lay.count);
		d = &c->desc[index];
		s = READ_ONCE(d->state);

		/*
		 * Take it first (KERNEL keeps everyone else off), then aux,
		 * then FREE (release: Y1): aux is never written on a buffer
		 * a scribble moved on between the read and the take, where
		 * it may say a SENT buffer's ring or a SHARED one's readers.
		 */
		if ((s == BATON_POOL_STATE(gen, BATON_POOL_OWNED, holder + 1) ||
		     s == BATON_POOL_STATE(gen, BATON_POOL_IDLE, holder + 1)) &&
		    cmpxchg(&d->state, s,
			    BATON_POOL_STATE(gen, BATON_POOL_KERNEL, 0)) == s) {
			WRITE_ONCE(d->aux, baton_pool_now_ms());
			/* Y1: aux before FREE, as every freer orders them. */
			smp_store_release(&d->state, free);
			s = free;
		}
		if (s != free)
			v = BATON_POOL_NO_INDEX;
	} else {
		v = BATON_POOL_NO_INDEX;
	}
	WRITE_ONCE(e->value, v);
	/* Y1: the descriptor and the value before the publication. */
	smp_store_release(&e->seq, t + 1);
	baton_pool_count(&pool->hdr->repaired, 1);
}

/* A dead holder's push with a known ticket: finish it. */
static void baton_pool_finish_push(struct baton_pool *pool,
				   struct baton_pool_cls *c,
				   const struct baton_pool_claim *cl,
				   u32 n, u64 t, u32 holder)
{
	u32 i;

	for (i = 0; i < n; i++)
		baton_pool_fill(pool, c, t + i, READ_ONCE(cl->entry[i]),
				holder);
}

/*
 * A dead holder's pop with a known ticket: release what it had not
 * released, and queue again what it read but never took.
 */
static void baton_pool_finish_pop(struct baton_pool *pool,
				  struct baton_pool_cls *c,
				  const struct baton_pool_claim *cl,
				  u32 n, u64 h)
{
	u32 i;

	for (i = 0; i < n; i++) {
		struct baton_pool_qent *e = &c->q[(h + i) & (c->lay.qcap - 1)];
		u64 v;

		/* Y1: the value is read only after its seq. */
		if (smp_load_acquire(&e->seq) == h + i + 1) {
			v = READ_ONCE(e->value);
			/* Y3: read before the entry is the next lap's. */
			smp_store_release(&e->seq, h + i + c->lay.qcap);
		} else {
			v = READ_ONCE(cl->entry[i]);
		}
		baton_pool_requeue(pool, c, v);
	}
}

/*
 * A refill that may have moved the head from @floor by @n without saying
 * so: remembered, and settled by baton_pool_resolve().
 */
static void baton_pool_suspect(struct baton_pool *pool, u32 cls, u32 n,
			       u64 floor)
{
	struct baton_pool_suspect *sp;

	if (floor == BATON_POOL_NO_TICKET)
		return;		/* it had not read the head yet: nothing moved */
	if (pool->nr_suspects == BATON_POOL_SUSPECTS) {
		baton_pool_count(&pool->hdr->bad_words, 1);
		return;
	}
	sp = &pool->suspect[pool->nr_suspects++];
	sp->cls = cls;
	sp->n = n;
	sp->first = floor;
}

/*
 * What the dead @holder's claim says it was doing, read once. Without a
 * ticket, a push left its buffers OWNED (the reclaim walk frees them) and
 * maybe a hole, a pop maybe entries it never released: both are for
 * BATON_POOL_IOC_UNSTICK, once a live holder runs into them.
 */
static void baton_pool_finish_claim(struct baton_pool *pool, u32 holder)
{
	struct baton_pool_claim *cl = baton_pool_claim(pool, holder);
	u32 op = READ_ONCE(cl->op), cls = READ_ONCE(cl->cls);
	u32 n = READ_ONCE(cl->n);
	u64 t = READ_ONCE(cl->ticket), floor = READ_ONCE(cl->floor);

	/* Idle, or begun but with nothing reserved yet (n may be stale). */
	if (!op || (t == BATON_POOL_NO_TICKET && floor == BATON_POOL_NO_TICKET))
		return;
	if (cls >= pool->nr_classes || !n || n > BATON_POOL_CLAIM_MAX) {
		baton_pool_count(&pool->hdr->bad_words, 1);
		return;
	}
	if (t == BATON_POOL_NO_TICKET) {
		if (op == BATON_POOL_CLAIM_POP)
			baton_pool_suspect(pool, cls, n, floor);
		return;
	}
	/* Checked above; no speculation past the check either. */
	cls = array_index_nospec(cls, pool->nr_classes);
	if (op == BATON_POOL_CLAIM_PUSH)
		baton_pool_finish_push(pool, &pool->cls[cls], cl, n, t, holder);
	else if (op == BATON_POOL_CLAIM_POP)
		baton_pool_finish_pop(pool, &pool->cls[cls], cl, n, t);
	else
		baton_pool_count(&pool->hdr->bad_words, 1);
}

/*
 * A SHARED buffer (uapi: the readers' mask in aux) seen by the release of
 * @holder: clear its bit, if it is a reader. True when no reader is left
 * (the mask is, or just became, empty): the caller frees the buffer. An
 * empty mask with the state still SHARED is a last reader that died, or
 * one about to make it its own: the state's cmpxchg decides (Y8). A mask
 * of another generation is a buffer reused since (or a scribble): left
 * alone. The loop retries only when a reader's put landed in between;
 * bounded against a scribbler rewriting the word.
 */
static bool baton_pool_unshare(struct baton_pool *pool,
			       struct baton_pool_desc *d, u64 s, u32 holder)
{
	u64 bit = holder < BATON_POOL_SHARE_MAX ? BIT_ULL(holder) : 0;
	u64 a, old;
	int tries;

	/* Y8: the state we read (SHARED) before the mask stored ahead of it. */
	smp_rmb();
	a = READ_ONCE(d->aux);
	for (tries = 0; tries < 64; tries++) {
		/* Freed and reused since we read the state, or scribbled. */
		if ((u32)(a >> 32) != BATON_POOL_S_GEN(s))
			return false;
		if (!(a & bit))
			return !(u32)a;
		old = cmpxchg(&d->aux, a, a & ~bit);
		if (old == a)
			return !(u32)(a & ~bit);
		a = old;
	}
	baton_pool_count(&pool->hdr->bad_words, 1);
	return false;
}

/*
 * Every buffer of @pool whose state @wants (read once, with @arg) goes
 * to KERNEL by a cmpxchg from that very value, so nobody else frees it
 * (Y4), and back on its free queue under the next generation. pool->lock
 * held. How many went.
 */
static u64 baton_pool_take_back(struct baton_pool *pool,
				bool (*wants)(struct baton_pool *pool,
					      struct baton_pool_desc *d, u64 s,
					      u64 arg),
				u64 arg)
{
	u64 now = baton_pool_now_ms(), n = 0;
	u32 i, j;

	for (i = 0; i < pool->nr_classes; i++) {
		struct baton_pool_cls *c = &pool->cls[i];

		for (j = 0; j < c->lay.count; j++) {
			struct baton_pool_desc *d = &c->desc[j];
			u64 s = READ_ONCE(d->state);
			u32 gen = BATON_POOL_S_GEN(s);

			if (!(j & 255))
				cond_resched();
			if (!wants(pool, d, s, arg) ||
			    cmpxchg(&d->state, s,
				    BATON_POOL_STATE(gen, BATON_POOL_KERNEL,
						     0)) != s)
				continue;
			baton_pool_push(pool, c, j, baton_pool_next_gen(gen),
					now);
			n++;
			cond_resched();
		}
	}
	return n;
}

/*
 * A released holder's: OWNED or IDLE by it (its magazines), or SHARED
 * with it as the last reader (its part is given up here either way).
 */
static bool baton_pool_holder_had(struct baton_pool *pool,
				  struct baton_pool_desc *d, u64 s, u64 holder)
{
	if (BATON_POOL_S_KIND(s) == BATON_POOL_SHARED)
		return baton_pool_unshare(pool, d, s, (u32)holder);
	return baton_pool_holders(s, holder);
}

/*
 * Every buffer @holder owned (its magazines included) back to FREE, and
 * its part of every SHARED one given up.
 */
static u64 baton_pool_reclaim(struct baton_pool *pool, u32 holder)
{
	return baton_pool_take_back(pool, baton_pool_holder_had, holder);
}

static bool baton_pool_resolve(struct baton_pool *pool);

static void baton_pool_event(struct baton_pool *pool, u32 type,
			     struct pid *pid, s32 index, u64 count)
{
	struct baton_event ev = {
		.type = type,
		.obj = &pool->named,
		.pid = pid,
		.index = index,
		.count = count,
	};

	baton_event(&ev, GFP_KERNEL);
}

static void baton_pool_claim_reset(struct baton_pool *pool, u32 holder)
{
	struct baton_pool_claim *cl = baton_pool_claim(pool, holder);

	memset(cl, 0, sizeof(*cl));
	cl->floor = BATON_POOL_NO_TICKET;
	cl->ticket = BATON_POOL_NO_TICKET;
}

/*
 * The kernel queued buffers (a dead holder's, pending ones, an UNSTICK's
 * requeue): allocators parked on an empty class look again. The full
 * barrier orders the publications before the loads of the waiter counts,
 * against a parker's atomic add before its last look (uapi: struct
 * baton_pool_waiting). A scribbled count only costs a wake, or a parker
 * its deadline.
 */
static void baton_pool_kick(struct baton_pool *pool)
{
	bool any = false;
	u32 i;

	/* Y7: our publications before the counts; pairs with the parker's add. */
	smp_mb();
	for (i = 0; i < pool->nr_classes; i++) {
		struct baton_pool_waiting *w = pool->cls[i].waiting;

		if (!READ_ONCE(w->waiters))
			continue;
		atomic_inc((atomic_t *)&w->wakes);
		any = true;
	}
	if (any)
		wake_up_all(&pool->waitq);
}

/*
 * A holder that died parked (its claim names the class) leaves its count
 * in the class's waiters: take it back, so that freers stop waking
 * nobody. One that died between its increment and naming the class, or
 * between clearing it and its decrement, leaves 1 there: a wake call per
 * flush of that class, never a lost wake.
 */
static void baton_pool_unpark(struct baton_pool *pool, u32 holder)
{
	u32 parked = READ_ONCE(baton_pool_claim(pool, holder)->parked);
	atomic_t *w;

	if (!parked || parked > pool->nr_classes)
		return;
	parked = array_index_nospec(parked - 1, pool->nr_classes);
	w = (atomic_t *)&pool->cls[parked].waiting->waiters;
	atomic_add_unless(w, -1, 0);
}

static void baton_pool_holder_release(struct baton_pool *pool, u32 holder)
{
	struct pid *pid;
	u64 n;

	mutex_lock(&pool->lock);
	baton_pool_life_end(pool, holder);
	baton_pool_unpark(pool, holder);
	/* The holder is dead from here: UNSTICK no longer counts its claim. */
	pid = pool->holder[holder];
	pool->holder[holder] = NULL;
	clear_bit(holder, pool->blind);
	baton_pool_finish_claim(pool, holder);
	if (pool->nr_suspects && baton_pool_resolve(pool))
		baton_pool_repair_soon(pool);
	n = baton_pool_reclaim(pool, holder);
	baton_pool_claim_reset(pool, holder);
	baton_pool_count(&pool->hdr->reclaimed, n);
	baton_pool_count(&pool->hdr->holder_releases, 1);
	WRITE_ONCE(pool->hdr->holders, pool->hdr->holders - 1);
	mutex_unlock(&pool->lock);
	baton_pool_kick(pool);
	if (n)
		baton_pool_event(pool, BATON_EVENT_POOL_RECLAIMED, pid, holder,
				 n);
	put_pid(pid);
}

/* ---- rings bound to a pool (ring.c) ---- */

/* SENT through ring @ring_id: its id is in aux. */
static bool baton_pool_sent_through(struct baton_pool *pool,
				    struct baton_pool_desc *d, u64 s,
				    u64 ring_id)
{
	if (BATON_POOL_S_KIND(s) != BATON_POOL_SENT)
		return false;
	/* Y9: SENT read, then the ring id stored before it. */
	smp_rmb();
	return READ_ONCE(d->aux) == ring_id;
}

/*
 * Ring @ring_id is being freed: nobody can receive from it any more.
 * Every buffer SENT through it (its aux says so: the sender stored it
 * before the SENT store, with release, so the smp_rmb() after our read
 * of SENT shows it) goes back, counted and reported as one
 * POOL_RECLAIMED event. Only a take moves such a buffer: by that ring's
 * consumer (none is left), or by a holder that takes it without its
 * message, a misuse the cmpxchg from the value read (Y4) keeps from
 * giving the buffer to both of us. Process context.
 */
void baton_pool_return_sent(struct baton_pool *pool, u64 ring_id)
{
	u64 n;

	mutex_lock(&pool->lock);
	n = baton_pool_take_back(pool, baton_pool_sent_through, ring_id);
	baton_pool_count(&pool->hdr->reclaimed, n);
	mutex_unlock(&pool->lock);
	if (!n)
		return;
	baton_pool_kick(pool);
	baton_pool_event(pool, BATON_EVENT_POOL_RECLAIMED, NULL, -1, n);
}

/* The pool of pool fd @fd, with a reference, or ERR_PTR(-EBADF). */
struct baton_pool *baton_pool_fget(int fd)
{
	struct file *file = fget(fd);
	struct baton_pool *pool = ERR_PTR(-EBADF);

	if (!file)
		return pool;
	if (file->f_op == &baton_pool_fops) {
		struct baton_pool_file *pf = file->private_data;

		pool = pf->pool;
		kref_get(&pool->named.ref);
	}
	fput(file);
	return pool;
}

/* Drop baton_pool_fget()'s reference. */
void baton_pool_unref(struct baton_pool *pool)
{
	baton_pool_put(pool);
}

/* ---- BATON_POOL_IOC_UNSTICK ---- */

/*
 * May a live holder hold ticket @c of class @cls for @op? Its claim
 * covers @c, or it has a floor at or below @c and no ticket yet (it may
 * be between its fetch_add or compare-and-swap and its ticket store).
 * The argument is mpsc.rst's: the holder's floor store is ordered before
 * its atomic on the tail or head, which the caller's acquire load of
 * that index saw.
 */
static bool baton_pool_live_may_hold(struct baton_pool *pool, u32 op, u32 cls,
				     u64 c)
{
	u32 i;

	for (i = 0; i < pool->max_holders; i++) {
		struct baton_pool_claim *cl;
		u64 t, floor;
		u32 n;

		if (!pool->holder[i])
			continue;
		cl = baton_pool_claim(pool, i);
		/* Y5: after the caller's acquire load of the tail or head. */
		if (smp_load_acquire(&cl->op) != op ||
		    READ_ONCE(cl->cls) != cls)
			continue;
		/* Y5: the ticket is stored after the floor, with release. */
		t = smp_load_acquire(&cl->ticket);
		n = READ_ONCE(cl->n);
		floor = READ_ONCE(cl->floor);
		if (t != BATON_POOL_NO_TICKET && c >= t && c - t < n)
			return true;
		if (t == BATON_POOL_NO_TICKET && floor <= c)
			return true;
	}
	return false;
}

/*
 * Entry of ticket @c: unpublished below the tail (a freer's hole), or
 * still holding the previous lap below the head (a taker that never
 * released it). Repaired only when no live holder may hold the ticket.
 */
static int baton_pool_unstick(struct baton_pool *pool, u32 cls, u64 c,
			      bool *moved)
{
	struct baton_pool_cls *k = &pool->cls[cls];
	struct baton_pool_qent *e = &k->q[c & (k->lay.qcap - 1)];
	u64 qcap = k->lay.qcap, seq, prev;
	int ret = 0;

	mutex_lock(&pool->lock);
	/* Y1, Y3: the entry's value is read only after its seq. */
	seq = smp_load_acquire(&e->seq);
	if (seq == c && c < (u64)atomic64_read_acquire((atomic64_t *)k->tail)) {
		/* Unpublished: whose is ticket c? */
		if (baton_pool_live_may_hold(pool, BATON_POOL_CLAIM_PUSH, cls,
					     c))
			ret = -EAGAIN;
		/* Y5: a holder that finished meanwhile published it. */
		else if (smp_load_acquire(&e->seq) == c) {
			baton_pool_fill(pool, k, c, BATON_POOL_NO_INDEX, 0);
			*moved = true;
		}
	} else if (c >= qcap && seq == c - qcap + 1) {
		/* Not released by the taker of ticket c - qcap. */
		prev = c - qcap;
		if (prev >= (u64)atomic64_read_acquire((atomic64_t *)k->head))
			ret = -EAGAIN;	/* not taken yet: nothing stuck */
		else if (baton_pool_live_may_hold(pool, BATON_POOL_CLAIM_POP,
						  cls, prev))
			ret = -EAGAIN;
		/* Y3: the value is read after the seq says it is there... */
		else if (smp_load_acquire(&e->seq) == prev + 1) {
			u64 v = READ_ONCE(e->value);

			/* ...and before the entry is the next lap's (Y3). */
			smp_store_release(&e->seq, c);
			baton_pool_count(&pool->hdr->repaired, 1);
			baton_pool_requeue(pool, k, v);
			*moved = true;
		}
	}
	mutex_unlock(&pool->lock);
	return ret;
}

static long baton_pool_unstick_ioc(struct baton_pool *pool, void __user *uarg)
{
	struct baton_pool_unstick k;
	bool moved = false;
	u32 usize;
	int ret;

	ret = baton_copy_in(&k, sizeof(k), BATON_POOL_UNSTICK_SIZE_VER0, uarg,
			    &usize);
	if (ret)
		return ret;
	if (k.flags || k.reserved || k.cls >= pool->nr_classes)
		return -EINVAL;
	k.cls = array_index_nospec(k.cls, pool->nr_classes);
	ret = baton_pool_unstick(pool, k.cls, k.ticket, &moved);
	/* Only a hole filled or an entry requeued can end a parker's wait. */
	if (moved)
		baton_pool_kick(pool);
	return ret;
}

/* ---- BATON_POOL_IOC_WAIT and _WAKE ---- */

static bool baton_pool_woken(struct baton_pool_cls *c, u32 seen)
{
	return READ_ONCE(c->waiting->wakes) != seen;
}

/*
 * Sleep until the class's wakes word moves from what the caller saw
 * before its last look at the queue (its freer, or our kick, moved it
 * after publishing), the deadline, or a signal: the call restarts then,
 * its deadline being absolute.
 */
static long baton_pool_wait_ioc(struct baton_pool *pool, void __user *uarg)
{
	struct baton_pool_wait k;
	struct baton_pool_cls *c;
	ktime_t deadline, left;
	u32 usize;
	long ret;

	ret = baton_copy_in(&k, sizeof(k), BATON_POOL_WAIT_SIZE_VER0, uarg,
			    &usize);
	if (ret)
		return ret;
	if ((k.flags & ~BATON_POOL_WAIT_DEADLINE) || k.reserved ||
	    k.cls >= pool->nr_classes ||
	    (!(k.flags & BATON_POOL_WAIT_DEADLINE) && k.deadline_ns))
		return -EINVAL;
	c = &pool->cls[array_index_nospec(k.cls, pool->nr_classes)];
	if (!(k.flags & BATON_POOL_WAIT_DEADLINE))
		return wait_event_interruptible(pool->waitq,
						baton_pool_woken(c, k.wakes));
	deadline = baton_user_deadline(k.deadline_ns);
	left = ktime_sub(deadline, ktime_get());
	/* A relative hrtimer never fires for a time already past. */
	if (left <= 0)
		return baton_pool_woken(c, k.wakes) ? 0 : -ETIMEDOUT;
	ret = wait_event_interruptible_hrtimeout(pool->waitq,
						 baton_pool_woken(c, k.wakes),
						 left);
	return ret == -ETIME ? -ETIMEDOUT : ret;
}

static long baton_pool_wake_ioc(struct baton_pool *pool, void __user *uarg)
{
	struct baton_pool_wait k;
	u32 usize;
	long ret;

	ret = baton_copy_in(&k, sizeof(k), BATON_POOL_WAIT_SIZE_VER0, uarg,
			    &usize);
	if (ret)
		return ret;
	if (k.flags || k.reserved || k.wakes || k.deadline_ns ||
	    k.cls >= pool->nr_classes)
		return -EINVAL;
	wake_up_all(&pool->waitq);
	return 0;
}

/*
 * Suspect tickets of dead refills (baton_pool_suspect()). If the head
 * never passed the range, the refill's compare-and-swap failed: nothing
 * is stranded. Else each entry still published for its ticket (never
 * released) and held by no live holder (baton_pool_live_may_hold(), the
 * UNSTICK rule) is released and its buffer queued again. True while some
 * entry may still be a live holder's: try again later.
 */
static bool baton_pool_resolve_one(struct baton_pool *pool,
				   const struct baton_pool_suspect *sp)
{
	struct baton_pool_cls *c = &pool->cls[sp->cls];
	u64 head = atomic64_read_acquire((atomic64_t *)c->head);
	bool pending = false;
	u32 i;

	if (head < sp->first + sp->n)
		return false;
	for (i = 0; i < sp->n; i++) {
		u64 t = sp->first + i;
		struct baton_pool_qent *e = &c->q[t & (c->lay.qcap - 1)];
		u64 v;

		/* Y3: released already, by whoever took it. */
		if (smp_load_acquire(&e->seq) != t + 1)
			continue;
		if (baton_pool_live_may_hold(pool, BATON_POOL_CLAIM_POP,
					     sp->cls, t)) {
			pending = true;
			continue;
		}
		/* Y3: re-read, then the value before the release. */
		if (smp_load_acquire(&e->seq) != t + 1)
			continue;
		v = READ_ONCE(e->value);
		/* Y3: the value is read before the entry is the next lap's. */
		smp_store_release(&e->seq, t + c->lay.qcap);
		baton_pool_count(&pool->hdr->repaired, 1);
		baton_pool_requeue(pool, c, v);
	}
	return pending;
}

static bool baton_pool_resolve(struct baton_pool *pool)
{
	u32 i = 0;

	lockdep_assert_held(&pool->lock);
	while (i < pool->nr_suspects) {
		/* Each may scan every holder's claim (a mutex is held). */
		cond_resched();
		if (baton_pool_resolve_one(pool, &pool->suspect[i]))
			i++;
		else
			pool->suspect[i] = pool->suspect[--pool->nr_suspects];
	}
	return pool->nr_suspects;
}

/*
 * The repair retries every REPAIR_MS while it makes progress (fewer
 * suspects and pending buffers than the run before), and backs off to
 * REPAIR_MAX_MS while it makes none: a holder that scribbled the queue
 * so that nothing can ever be pushed, or that keeps a claim that "may
 * hold" every suspect ticket, costs the pool's lock a run every
 * REPAIR_MAX_MS, not every REPAIR_MS, for as long as it lasts. The cap
 * is the most a legitimate retry (a live holder that moved on) waits.
 */

static void baton_pool_repair_work(struct work_struct *work)
{
	struct baton_pool *pool = container_of(work, struct baton_pool,
					       repair.work);
	u32 left;

	mutex_lock(&pool->lock);
	left = baton_pool_resolve(pool) ? pool->nr_suspects : 0;
	left += baton_pool_push_pending(pool);
	if (!left || left < pool->repair_left)
		pool->repair_ms = REPAIR_MS;
	else
		pool->repair_ms = min_t(u32, 2 * pool->repair_ms, REPAIR_MAX_MS);
	pool->repair_left = left ? left : U32_MAX;
	/*
	 * Armed under the lock, so a baton_pool_repair_soon() after it
	 * (new work) has the last word: REPAIR_MS, not this backoff.
	 */
	if (left)
		baton_later_arm(&pool->repair, pool->repair_ms);
	mutex_unlock(&pool->lock);
	baton_pool_kick(pool);
}

/* ---- decay ---- */

struct baton_pool_cand {
	u64 aux;			/* as read: the take checks it */
	u64 age;			/* the order: aux, or now if ahead */
	u64 state;			/* as taken */
	u32 index;
};

static int baton_pool_cand_cmp(const void *a, const void *b)
{
	const struct baton_pool_cand *x = a, *y = b;

	return x->age < y->age ? -1 : x->age > y->age;
}

/*
 * The reserve: the fewest free buffers the class had over the window
 * (about decay_ms), at the ticks (@free, counted in the descriptors) and
 * between them as takers left the queue (low_water), so what a burst used
 * lately, even between two ticks, stays.
 */
static u32 baton_pool_reserve(struct baton_pool *pool, struct baton_pool_cls *c,
			      u32 free)
{
	u32 low = READ_ONCE(c->cold->low_water);
	u32 i, reserve = free;

	c->min_free[pool->ticks % BATON_POOL_WINDOW] = min(free, low);
	/*
	 * No dip seen yet in the next interval: its start is this record,
	 * and without a taker the free count only grows until the next.
	 */
	WRITE_ONCE(c->cold->low_water, c->lay.count);
	for (i = 0; i < BATON_POOL_WINDOW; i++)
		reserve = min(reserve, c->min_free[i]);
	return reserve;
}

/*
 * Take buffer @cand for the decay (FREE to KERNEL, under pool->lock);
 * false if it is not the free episode the scan saw. Its generation is
 * unchanged, so an allocator that popped it waits (a library of 2.6 or
 * later: up to 20 ms), then finds it COLD, or drops the entry at once.
 */
static bool baton_pool_decay_take(struct baton_pool_cls *c,
				  struct baton_pool_cand *cand)
{
	struct baton_pool_desc *d = &c->desc[cand->index];
	u64 s = READ_ONCE(d->state);

	if (BATON_POOL_S_KIND(s) != BATON_POOL_FREE ||
	    READ_ONCE(d->aux) != cand->aux)
		return false;
	/* Y4: from the exact value read. */
	if (cmpxchg(&d->state, s, BATON_POOL_STATE(BATON_POOL_S_GEN(s),
						   BATON_POOL_KERNEL, 0)) != s)
		return false;
	cand->state = s;
	return true;
}

/*
 * Giving pages back is fallocate(FALLOC_FL_PUNCH_HOLE)'s two steps: unmap
 * the range from every holder, one walk of each mapping and one TLB flush
 * for all of it, then free the pages. shmem_truncate_range() alone unmaps
 * each page it finds mapped by itself (unmap_mapping_folio(): a walk and
 * a TLB flush, with its shootdown IPIs, per page). A holder that touches a
 * page between the two has no business there (its buffer is KERNEL, or
 * IDLE under the reap word): the truncation unmaps that page too.
 */
static void baton_pool_unmap(struct baton_pool *pool, loff_t start,
			     loff_t len)
{
	unmap_mapping_range(pool->shm->f_mapping, start, len, 0);
}

static void baton_pool_truncate(struct baton_pool *pool, loff_t start,
				loff_t len)
{
	shmem_truncate_range(file_inode(pool->shm), start, start + len - 1);
}

static void baton_pool_punch(struct baton_pool *pool, loff_t start,
			     loff_t len)
{
	baton_pool_unmap(pool, start, len);
	baton_pool_truncate(pool, start, len);
}

/*
 * Neighbouring buffers are given back as one range: a decay after a burst
 * gives back long runs of them, and one range costs about what one
 * buffer does, whatever its length.
 */
struct baton_pool_run {
	void (*give)(struct baton_pool *pool, loff_t start, loff_t len);
	loff_t start;
	loff_t len;			/* 0: none pending */
};

static void baton_pool_run_flush(struct baton_pool *pool,
				 struct baton_pool_run *run)
{
	if (run->len)
		run->give(pool, run->start, run->len);
	run->len = 0;
	cond_resched();
}

/* Buffer @index of class @c joins the pending run, or starts the next. */
static void baton_pool_run_add(struct baton_pool *pool,
			       struct baton_pool_run *run,
			       const struct baton_pool_cls *c, u32 index)
{
	loff_t start = c->lay.data_off + ((loff_t)index << c->lay.buf_shift);
	loff_t len = 1LL << c->lay.buf_shift;

	if (run->len && run->start + run->len == start) {
		run->len += len;
		return;
	}
	baton_pool_run_flush(pool, run);
	run->start = start;
	run->len = len;
}

static int baton_pool_cand_index_cmp(const void *a, const void *b)
{
	const struct baton_pool_cand *x = a, *y = b;

	return x->index < y->index ? -1 : x->index > y->index;
}

/* @give each run of the taken buffers in @cand that ever had pages. */
static u64 baton_pool_decay_runs(struct baton_pool *pool,
				 const struct baton_pool_cls *c,
				 const struct baton_pool_cand *cand, u32 n,
				 void (*give)(struct baton_pool *, loff_t, loff_t))
{
	struct baton_pool_run run = { .give = give };
	u64 paged = 0;
	u32 j;

	for (j = 0; j < n; j++) {
		if (!cand[j].aux)	/* its free time: 0 if never used */
			continue;
		baton_pool_run_add(pool, &run, c, cand[j].index);
		paged++;
	}
	baton_pool_run_flush(pool, &run);
	return paged;
}

/*
 * The pages of the @n taken buffers in @cand, in runs of neighbours
 * (@cand is sorted by index for it): every run unmapped first, so the
 * holders' RSS falls at the start of the pass, then every run freed,
 * which is most of its time (64 MiB: some 80 ms under TCG). With no lock
 * held: KERNEL keeps every user and every other kernel path off them.
 * Returns how many had pages.
 */
static u64 baton_pool_decay_punch(struct baton_pool *pool,
				  const struct baton_pool_cls *c,
				  struct baton_pool_cand *cand, u32 n)
{
	sort(cand, n, sizeof(*cand), baton_pool_cand_index_cmp, NULL);
	baton_pool_decay_runs(pool, c, cand, n, baton_pool_unmap);
	return baton_pool_decay_runs(pool, c, cand, n, baton_pool_truncate);
}

/*
 * A taken buffer whose pages went (baton_pool_decay_punch()) becomes COLD,
 * with no lock held. Its queue entry is stale now (a taker drops it); aux
 * gets the tail, past that entry, so that a taker takes the buffer only
 * once the queue's head has passed it too (Y10).
 */
static void baton_pool_decay_give(struct baton_pool_cls *c,
				  const struct baton_pool_cand *cand, u32 *bad)
{
	struct baton_pool_desc *d = &c->desc[cand->index];
	u32 gen = BATON_POOL_S_GEN(cand->state);
	u64 kernel = BATON_POOL_STATE(gen, BATON_POOL_KERNEL, 0);

	WRITE_ONCE(d->aux, atomic64_read((atomic64_t *)c->tail));
	/*
	 * Y10: the pages are gone and aux is the tail before it is COLD
	 * (cmpxchg: a full barrier). From the KERNEL we stored: a holder
	 * that rewrote the word meanwhile keeps what it wrote, counted (by
	 * the caller, under pool->lock, where every counter is written).
	 */
	if (cmpxchg(&d->state, kernel,
		    BATON_POOL_STATE(gen, BATON_POOL_COLD, 0)) != kernel)
		(*bad)++;
	else
		/*
		 * Counted in the takers' hint at once, not at the tick's
		 * end: a taker that dropped this buffer's entry while it was
		 * KERNEL looks for it next, and a hint still 0 would make it
		 * say ENOMEM with the buffer right there.
		 */
		atomic_inc((atomic_t *)&c->cold->cold);
}

/*
 * The end of a give while a library without COLD is attached, under
 * pool->lock: the buffer back on the queue under the next generation,
 * aux 0 (no pages), by a cmpxchg from the KERNEL the pick stored. Not
 * FREE in place on the strength of its entry still being queued: a taker
 * that popped the entry may have died waiting on KERNEL, and its release
 * leaves a KERNEL buffer alone, so the buffer would be FREE on no queue,
 * lost. The old entry, if still queued, is stale; the buffer had no other
 * (its earlier ones left the queue before the entry it was last taken
 * by), so the queue holds at most one stale entry per buffer beyond the
 * valid one. A taker waiting on KERNEL drops the stale entry and looks
 * again. The pages went before (the cmpxchg is a full barrier).
 */
static void baton_pool_decay_requeue(struct baton_pool *pool,
				     struct baton_pool_cls *c,
				     const struct baton_pool_cand *cand)
{
	struct baton_pool_desc *d = &c->desc[cand->index];
	u32 gen = BATON_POOL_S_GEN(cand->state);
	u64 kernel = BATON_POOL_STATE(gen, BATON_POOL_KERNEL, 0);

	lockdep_assert_held(&pool->lock);
	if (cmpxchg(&d->state, kernel,
		    BATON_POOL_STATE(baton_pool_next_gen(gen),
				     BATON_POOL_KERNEL, 0)) != kernel) {
		baton_pool_count(&pool->hdr->bad_words, 1);
		return;
	}
	baton_pool_push(pool, c, cand->index, baton_pool_next_gen(gen), 0);
}

/*
 * A library without COLD is attached (pool->blind): it would never take a
 * COLD buffer, so each goes back on the free queue, under pool->lock, by
 * a cmpxchg from the COLD read (a COLD taker may win it) and a push
 * under the next generation. Only those whose aux (the tail when they
 * went COLD) is at or below the head, as a COLD taker's (Y10): their
 * stale entries have left the queue, so the queue never holds more than
 * one entry per buffer beyond its valid one, and never more than qcap;
 * the others wait for the takers to pass their entries and a later pass,
 * which comes within 5 ms then (pool->warm_later): a library without COLD
 * that dropped their stale entries and found the queue empty answers
 * ENOMEM until then. Returns how many went back.
 */
static u32 baton_pool_decay_warm(struct baton_pool *pool,
				 struct baton_pool_cls *c)
{
	u64 head = atomic64_read_acquire((atomic64_t *)c->head);
	u32 j, n = 0;

	lockdep_assert_held(&pool->lock);
	for (j = 0; j < c->lay.count; j++) {
		struct baton_pool_desc *d = &c->desc[j];
		u64 s = READ_ONCE(d->state);
		u32 gen = BATON_POOL_S_GEN(s);

		if (!(j % 1024))
			cond_resched();
		if (s != BATON_POOL_STATE(gen, BATON_POOL_COLD, 0) || !gen)
			continue;
		/* Y10: aux read after the COLD it came with. */
		smp_rmb();
		if (READ_ONCE(d->aux) > head) {
			pool->warm_later = true;
			continue;
		}
		if (cmpxchg(&d->state, s,
			    BATON_POOL_STATE(gen, BATON_POOL_KERNEL, 0)) != s)
			continue;
		baton_pool_push(pool, c, j, baton_pool_next_gen(gen), 0);
		n++;
	}
	return n;
}

/*
 * Fill @cand with the class's FREE buffers, never used first (aux 0),
 * then oldest first, and take as many as were free all window long
 * (@reserve) beyond @keep, which stay on the queue: the most recently
 * freed. @blind (a library without COLD attached): buffers with no pages
 * (aux 0) are not taken, since they cannot go COLD and have nothing to
 * give back, and they count as given back already. Returns how many it
 * took (moved to the front of @cand); *@cold gets how many the scan found
 * COLD already.
 */
static u32 baton_pool_decay_pick(struct baton_pool *pool,
				 struct baton_pool_cls *c, u64 now,
				 struct baton_pool_cand *cand, u32 *cold,
				 bool blind)
{
	u32 j, n = 0, taken = 0, free = 0, empty = 0, reserve, quota;

	*cold = 0;
	for (j = 0; j < c->lay.count; j++) {
		u64 s = READ_ONCE(c->desc[j].state);
		u64 aux = READ_ONCE(c->desc[j].aux);

		/* Up to 65536 a class, under a mutex: sleeping is allowed. */
		if (!(j % 1024))
			cond_resched();
		if (BATON_POOL_S_KIND(s) == BATON_POOL_COLD)
			(*cold)++;
		if (BATON_POOL_S_KIND(s) != BATON_POOL_FREE)
			continue;
		free++;
		/*
		 * Blind: no pages to give back, and it cannot go COLD; one
		 * just requeued (aux 0) may have a stale entry still queued,
		 * and a second requeue would be its third entry.
		 */
		if (blind && !aux) {
			empty++;
			continue;
		}
		/*
		 * The free time orders the candidates, nothing more: which
		 * and how many go is @reserve's. A time ahead of ours is a
		 * holder's in a time namespace ahead of the kernel's (or a
		 * scribble): sorted as freed now, the newest, so a clock
		 * ahead never keeps a buffer from decaying.
		 */
		cand[n].aux = aux;
		cand[n].age = min(aux, now);
		cand[n++].index = j;
	}
	reserve = baton_pool_reserve(pool, c, free);
	if (reserve <= pool->keep + empty)
		return 0;
	quota = reserve - pool->keep - empty;
	sort(cand, n, sizeof(*cand), baton_pool_cand_cmp, NULL);
	for (j = 0; j < n && taken < quota; j++)
		if (baton_pool_decay_take(c, &cand[j]))
			cand[taken++] = cand[j];
	return taken;
}

/*
 * One class: pick and take under the lock, give the pages back outside;
 * then the takers' hint of COLD buffers. While a library without COLD is
 * attached (pool->blind), COLD buffers go back on the queue first and
 * the decay leaves what it takes FREE and queued. Returns the buffers
 * whose pages went; adds to *@made those it made COLD or queued again
 * (the tick then kicks the parkers).
 */
static u64 baton_pool_decay_class(struct baton_pool *pool,
				  struct baton_pool_cls *c, u64 now, u32 *made,
				  bool full)
{
	struct baton_pool_cand *cand;
	u32 j, n, cold, bad = 0;
	bool blind;
	u64 paged;

	cand = kvmalloc_array(c->lay.count, sizeof(*cand), GFP_KERNEL);
	if (!cand)
		return 0;
	mutex_lock(&pool->lock);
	blind = !bitmap_empty(pool->blind, pool->max_holders);
	if (blind)
		*made += baton_pool_decay_warm(pool, c);
	/* A quick pass only warms: the reserve's window stays decay_ms. */
	n = full ? baton_pool_decay_pick(pool, c, now, cand, &cold, blind) : 0;
	mutex_unlock(&pool->lock);
	if (!full) {
		kvfree(cand);
		return 0;
	}
	paged = baton_pool_decay_punch(pool, c, cand, n);
	/* Blind: their way back on the queue is baton_pool_decay_requeue(). */
	for (j = 0; j < n && !blind; j++)
		baton_pool_decay_give(c, &cand[j], &bad);
	if (bad) {
		mutex_lock(&pool->lock);
		baton_pool_count(&pool->hdr->bad_words, bad);
		mutex_unlock(&pool->lock);
	}
	if (blind && n) {
		mutex_lock(&pool->lock);
		for (j = 0; j < n; j++)
			baton_pool_decay_requeue(pool, c, &cand[j]);
		mutex_unlock(&pool->lock);
		*made += n;
	}
	WRITE_ONCE(c->cold->cold, blind ? cold : cold + n);
	if (!blind)
		*made += n;
	kvfree(cand);
	return paged;
}

/*
 * ---- idle magazines (Documentation/pool.rst "Idle magazines", Y13) ----
 *
 * A holder's free leaves the buffer IDLE in its magazine, which lives in
 * the holder's own memory: the decay sees only the descriptor. A buffer
 * whose descriptor holds the same IDLE word (holder, generation) on
 * BATON_POOL_WINDOW full ticks in a row, the ticks whose records make the
 * free queue's reserve (about decay_ms), has not been allocated since:
 * its pages go back, at the tick a buffer freed to the queue beside it
 * does (one tick later, as it was, kept a burst's last 2 MiB past
 * 2 x decay_ms under TCG). The
 * holder's allocation stores OWNED with no fence and then loads the reap
 * word, so the give-back is the ring park's asymmetric pattern: the word,
 * a barrier on every CPU of the holders' mms, a second read of each
 * descriptor, the truncation of those still as seen, the word cleared.
 * All under pool->lock, which the reclaim of a released holder takes too:
 * it cannot queue a buffer, for another holder to write, while it is
 * being truncated. The state stays IDLE: the holder's next allocation of
 * it faults zeroed pages in, as a COLD buffer's.
 */
#define BATON_POOL_IDLE_DUE	BATON_POOL_WINDOW
#define BATON_POOL_IDLE_GONE	U8_MAX	/* its pages went this episode */

static u64 *baton_pool_reap_word(struct baton_pool *pool)
{
	return (u64 *)((u8 *)pool->hdr + BATON_POOL_HDR_REAP);
}

/* Age class @c's IDLE buffers by one tick: how many are now due. */
static u32 baton_pool_idle_age(struct baton_pool_cls *c)
{
	u32 j, due = 0;

	for (j = 0; j < c->lay.count; j++) {
		u64 s = READ_ONCE(c->desc[j].state);

		if (!(j % 1024))
			cond_resched();
		if (BATON_POOL_S_KIND(s) != BATON_POOL_IDLE) {
			c->idle_ticks[j] = 0;
			continue;
		}
		if (s != c->idle_seen[j] || !c->idle_ticks[j]) {
			c->idle_seen[j] = s;
			c->idle_ticks[j] = 1;
			continue;
		}
		if (c->idle_ticks[j] < BATON_POOL_IDLE_DUE)
			c->idle_ticks[j]++;
		due += c->idle_ticks[j] == BATON_POOL_IDLE_DUE;
	}
	return due;
}

/* Give back the pages of class @c's due buffers still as seen (Y13). */
static u64 baton_pool_idle_give(struct baton_pool *pool,
				struct baton_pool_cls *c)
{
	struct baton_pool_run run = { .give = baton_pool_punch };
	u64 n = 0;
	u32 j;

	for (j = 0; j < c->lay.count; j++) {
		if (c->idle_ticks[j] != BATON_POOL_IDLE_DUE)
			continue;
		/*
		 * Y13: read again, after the barrier on the holders' CPUs. Its
		 * punch may come with its run, later: a holder that takes it
		 * after this read sees the reap word set and waits.
		 */
		if (READ_ONCE(c->desc[j].state) != c->idle_seen[j])
			continue;
		baton_pool_run_add(pool, &run, c, j);
		c->idle_ticks[j] = BATON_POOL_IDLE_GONE;
		n++;
	}
	baton_pool_run_flush(pool, &run);
	return n;
}

/*
 * One full tick over every class's IDLE buffers: the buffers whose pages
 * went, and their bytes added to *@bytes.
 */
static u64 baton_pool_idle_reap(struct baton_pool *pool, u64 *bytes)
{
	u64 *reap = baton_pool_reap_word(pool);
	u32 i, due = 0;
	u64 n, bufs = 0;

	mutex_lock(&pool->lock);
	for (i = 0; i < pool->nr_classes; i++)
		due += baton_pool_idle_age(&pool->cls[i]);
	if (due) {
		WRITE_ONCE(*reap, 1);
		/*
		 * Y13: the word before the barrier on the holders' CPUs,
		 * after which every holder's OWNED stores so far are visible
		 * to the second read, and its later loads of the word see 1.
		 */
		smp_mb();
		baton_barrier_peers(&pool->mms);
		for (i = 0; i < pool->nr_classes; i++) {
			n = baton_pool_idle_give(pool, &pool->cls[i]);
			bufs += n;
			*bytes += n << pool->cls[i].lay.buf_shift;
		}
		/* Y13: the truncations before a waiting holder goes on. */
		smp_store_release(reap, 0);
	}
	mutex_unlock(&pool->lock);
	return bufs;
}

static void baton_pool_decay_work(struct work_struct *work)
{
	struct baton_pool *pool = container_of(work, struct baton_pool,
					       decay.work);
	u64 now = baton_pool_now_ms(), bufs = 0, bytes = 0;
	u32 i, made = 0, period = max(pool->decay_ms / 4, 5U);
	/* Within half a period of due: timer slack moves the run both ways. */
	bool full = now + period / 2 >= pool->next_full_ms;

	if (full)
		pool->next_full_ms = now + period;
	pool->warm_later = false;
	/*
	 * The idle magazines first: a few buffers a holder (at most 32 a
	 * class), given back in a moment, where the free queue's share of a
	 * burst takes a while (64 MiB: some 80 ms under TCG), which the last
	 * of the burst, in the magazines, need not wait for.
	 */
	if (full)
		bufs += baton_pool_idle_reap(pool, &bytes);
	for (i = 0; i < pool->nr_classes; i++) {
		struct baton_pool_cls *c = &pool->cls[i];
		u64 n = baton_pool_decay_class(pool, c, now, &made, full);

		bufs += n;
		bytes += n << c->lay.buf_shift;
	}
	/*
	 * An allocator that popped the entry of a buffer the decay took, and
	 * one that parked after it, find it COLD only when they look again:
	 * now, not at the end of the parker's slice.
	 */
	if (made)
		baton_pool_kick(pool);
	mutex_lock(&pool->lock);
	pool->ticks += full;
	baton_pool_count(&pool->hdr->decay_ticks, full);
	baton_pool_count(&pool->hdr->decayed, bufs);
	baton_pool_count(&pool->hdr->decayed_bytes, bytes);
	mutex_unlock(&pool->lock);
	if (bufs)
		baton_pool_event(pool, BATON_EVENT_POOL_DECAYED, NULL, -1,
				 bytes);
	baton_later_arm(&pool->decay, pool->warm_later ? 5U : period);
}

/* ---- memory and lifetime ---- */

static void baton_pool_pending_free(struct baton_pool *pool)
{
	u32 i;

	for (i = 0; i < pool->nr_classes; i++) {
		bitmap_free(pool->cls[i].pending);
		kvfree(pool->cls[i].idle_seen);
		kvfree(pool->cls[i].idle_ticks);
	}
}

static int baton_pool_pending_alloc(struct baton_pool *pool)
{
	u32 i;

	for (i = 0; i < pool->nr_classes; i++) {
		struct baton_pool_cls *c = &pool->cls[i];

		c->pending = bitmap_zalloc(c->lay.count, GFP_KERNEL_ACCOUNT);
		if (!c->pending)
			return -ENOMEM;
		if (!pool->decay_ms)
			continue;	/* no decay: no idle magazine reaped */
		c->idle_seen = kvcalloc(c->lay.count, sizeof(*c->idle_seen),
					GFP_KERNEL_ACCOUNT);
		c->idle_ticks = kvcalloc(c->lay.count, sizeof(*c->idle_ticks),
					 GFP_KERNEL_ACCOUNT);
		if (!c->idle_seen || !c->idle_ticks)
			return -ENOMEM;
	}
	return 0;
}

static void baton_pool_free(struct kref *ref)
{
	struct baton_pool *pool = container_of(ref, struct baton_pool,
					       named.ref);

	baton_later_stop(&pool->decay);
	baton_later_stop(&pool->repair);
	baton_named_forget(&baton_pools, &pool->named);
	if (pool->named.published)
		baton_pool_event(pool, BATON_EVENT_POOL_DESTROYED, NULL, -1, 0);
	if (pool->shm)
		fput(pool->shm);
	baton_pages_free(&pool->mem);
	baton_pool_pending_free(pool);
	kfree(pool->holder);
	bitmap_free(pool->blind);
	baton_mm_set_destroy(&pool->mms);
	mutex_destroy(&pool->lock);
	baton_named_destroy(&pool->named);
	kfree(pool);
}

static struct baton_pool *baton_pool_alloc(const struct baton_pool_create *k)
{
	struct baton_pool *pool;
	int ret;

	pool = kzalloc(sizeof(*pool), GFP_KERNEL_ACCOUNT);
	if (!pool)
		return ERR_PTR(-ENOMEM);
	baton_pool_plan(pool, k);
	if (1 + pool->ctl_pages > UINT_MAX) {
		ret = -E2BIG;
		goto free_pool;
	}
	/* The whole pool: what it may hold, not what is resident. */
	/* Every holder allocates and frees: read and write bits both. */
	ret = baton_named_init(&pool->named, k->name, k->mode,
			       MAY_READ | MAY_WRITE,
			       ((1 + pool->ctl_pages) << PAGE_SHIFT) +
			       pool->data_size);
	if (ret)
		goto free_pool;
	ret = -ENOMEM;
	pool->holder = kcalloc(pool->max_holders, sizeof(*pool->holder),
			       GFP_KERNEL_ACCOUNT);
	pool->blind = bitmap_zalloc(pool->max_holders, GFP_KERNEL_ACCOUNT);
	if (!pool->holder || !pool->blind)
		goto free_holders;
	ret = baton_pool_pending_alloc(pool);
	if (ret)
		goto free_holders;
	ret = baton_mm_set_init(&pool->mms);
	if (ret)
		goto free_holders;
	ret = baton_pages_alloc(&pool->mem, 1 + pool->ctl_pages);
	if (ret)
		goto free_mms;
	pool->shm = baton_shmem_file_setup_noreserve("baton-pool",
						     pool->data_size);
	if (IS_ERR(pool->shm)) {
		/*
		 * On the kernel's internal shmem mount (no size or inode
		 * limit) ENOSPC only means the inode allocation failed:
		 * out of memory, which the ABI calls ENOMEM.
		 */
		ret = PTR_ERR(pool->shm) == -ENOSPC ? -ENOMEM :
						      PTR_ERR(pool->shm);
		pool->shm = NULL;
		goto free_pages;
	}
	mutex_init(&pool->lock);
	init_waitqueue_head(&pool->waitq);
	baton_later_init(&pool->decay, baton_pool_decay_work);
	baton_later_init(&pool->repair, baton_pool_repair_work);
	pool->repair_ms = REPAIR_MS;
	pool->repair_left = U32_MAX;
	baton_pool_init_layout(pool);
	return pool;

free_pages:
	baton_pages_free(&pool->mem);
free_mms:
	baton_mm_set_destroy(&pool->mms);
free_holders:
	baton_pool_pending_free(pool);
	kfree(pool->holder);
	bitmap_free(pool->blind);
	baton_named_destroy(&pool->named);
free_pool:
	kfree(pool);
	return ERR_PTR(ret);
}

/* ---- mmap ---- */

/*
 * The data region: the pool's shmem file, mapped whole and shared. Left
 * out of core dumps, as the other regions are: a dump reads every page,
 * and reading a buffer's hole allocates it, so one crashing holder would
 * fill the whole pool, charged to its own memory cgroup.
 */
static int baton_pool_mmap_data(struct baton_pool *pool,
				struct vm_area_struct *vma)
{
	if (vma_pages(vma) != pool->data_size >> PAGE_SHIFT)
		return -EINVAL;
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	baton_vm_flags_set(vma, VM_DONTDUMP);
	vma_set_file(vma, pool->shm);
	vma->vm_pgoff = 0;
	return baton_vfs_mmap(pool->shm, vma);
}

/*
 * One region per mmap() call, at its exact offset: the header read-only,
 * the control region read-write (both special PTEs: no GUP), the data
 * region read-write (shmem pages: GUP allowed, for I/O into buffers).
 * None is inherited across fork() (VM_DONTCOPY): a child would share the
 * holder's claim page, and its mapping would keep the holder's file, and
 * so the holder, alive after the holder's death (Documentation/pool.rst).
 */
static int baton_pool_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct baton_pool *pool = ((struct baton_pool_file *)
				   file->private_data)->pool;
	struct baton_region r = { .data = false };

	baton_vm_flags_set(vma, VM_DONTCOPY);

	if (vma->vm_pgoff == 0) {
		r.first = 0;
		r.pages = 1;
	} else if (vma->vm_pgoff == 1) {
		r.first = 1;
		r.pages = pool->ctl_pages;
		r.writable = true;
	} else if (vma->vm_pgoff == 1 + pool->ctl_pages) {
		return baton_pool_mmap_data(pool, vma);
	} else {
		return -EINVAL;
	}
	return baton_pages_mmap(&pool->mem, vma, &r, &pool->mms);
}

/* ---- pool fds ---- */

static int baton_pool_release(struct inode *inode, struct file *file)
{
	struct baton_pool_file *pf = file->private_data;

	baton_pool_holder_release(pf->pool, pf->holder);
	baton_pool_put(pf->pool);
	kfree(pf);
	return 0;
}

static long baton_pool_ioctl(struct file *file, unsigned int cmd,
			     unsigned long arg)
{
	struct baton_pool_file *pf = file->private_data;

	if (cmd == BATON_POOL_IOC_UNSTICK)
		return baton_pool_unstick_ioc(pf->pool, (void __user *)arg);
	if (cmd == BATON_POOL_IOC_WAIT)
		return baton_pool_wait_ioc(pf->pool, (void __user *)arg);
	if (cmd == BATON_POOL_IOC_WAKE)
		return baton_pool_wake_ioc(pf->pool, (void __user *)arg);
	return -ENOTTY;
}

static const struct file_operations baton_pool_fops = {
	.owner		= THIS_MODULE,
	.release	= baton_pool_release,
	.unlocked_ioctl	= baton_pool_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.mmap		= baton_pool_mmap,
	.llseek		= noop_llseek,
};

/* A free holder index for the caller, or -EMFILE. */
static int baton_pool_holder_take(struct baton_pool *pool, bool blind)
{
	bool first_blind = false;
	int ret = -EMFILE;
	u32 i;

	mutex_lock(&pool->lock);
	for (i = 0; i < pool->max_holders; i++) {
		if (pool->holder[i])
			continue;
		pool->holder[i] = get_pid(task_tgid(current));
		/* Before the fd exists: the next decay pass sees it. */
		if (blind) {
			first_blind = bitmap_empty(pool->blind,
						   pool->max_holders);
			set_bit(i, pool->blind);
		}
		baton_pool_life_begin(pool, i);
		WRITE_ONCE(pool->hdr->holders, pool->hdr->holders + 1);
		ret = i;
		break;
	}
	mutex_unlock(&pool->lock);
	/*
	 * The first holder without COLD: a pass now, not up to decay_ms / 4
	 * from now, puts the COLD buffers it could not take back on the
	 * queue (and one that a pass in flight made COLD after the open).
	 */
	if (first_blind && pool->decay_ms)
		baton_later_arm(&pool->decay, 0);
	return ret;
}

static void baton_pool_holder_drop(struct baton_pool *pool, u32 holder)
{
	mutex_lock(&pool->lock);
	baton_pool_life_end(pool, holder);
	put_pid(pool->holder[holder]);
	pool->holder[holder] = NULL;
	clear_bit(holder, pool->blind);
	WRITE_ONCE(pool->hdr->holders, pool->hdr->holders - 1);
	mutex_unlock(&pool->lock);
}

/*
 * Reserve an fd, a holder index and a pool file; installed by the caller.
 * The file takes over the caller's reference on @pool. @flags: the
 * create's or open's, BATON_POOL_F_TAKES_COLD or 0.
 */
static int baton_pool_file_new(struct baton_pool *pool, struct file **filep,
			       u32 *holder, u32 flags)
{
	struct baton_pool_file *pf;
	struct file *file;
	int fd, h;

	h = baton_pool_holder_take(pool, !(flags & BATON_POOL_F_TAKES_COLD));
	if (h < 0)
		return h;
	pf = kzalloc(sizeof(*pf), GFP_KERNEL_ACCOUNT);
	if (!pf) {
		fd = -ENOMEM;
		goto drop;
	}
	pf->pool = pool;
	pf->holder = h;
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		goto free_pf;
	file = anon_inode_getfile("[baton_pool]", &baton_pool_fops, pf,
				  O_RDWR);
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		fd = PTR_ERR(file);
		goto free_pf;
	}
	*filep = file;
	*holder = h;
	return fd;

free_pf:
	kfree(pf);
drop:
	baton_pool_holder_drop(pool, h);
	return fd;
}

static struct baton_pool *baton_pool_get(const char *name)
{
	struct baton_named *n = baton_names_get(&baton_pools, name);

	return n ? container_of(n, struct baton_pool, named) : NULL;
}

static void baton_pool_put_named(struct baton_named *n)
{
	baton_pool_put(container_of(n, struct baton_pool, named));
}

/* ---- /dev/baton ioctls ---- */

int baton_pool_create(struct baton_pool_create *k, void __user *uarg,
		      u32 usize)
{
	struct baton_pool *pool;
	struct file *file;
	u32 holder;
	int fd, ret;

	BUILD_BUG_ON(sizeof(struct baton_pool_hdr) > PAGE_SIZE);
	BUILD_BUG_ON(sizeof(struct baton_pool_claim) > PAGE_SIZE);

	ret = baton_pool_check(k);
	if (ret)
		return ret;
	ret = baton_check_name(k->name);
	if (ret)
		return ret;
	/* Early and racy, to spare the allocation; names_add() decides. */
	pool = baton_pool_get(k->name);
	if (pool) {
		baton_pool_put(pool);
		return -EEXIST;
	}

	pool = baton_pool_alloc(k);
	if (IS_ERR(pool))
		return PTR_ERR(pool);
	fd = baton_pool_file_new(pool, &file, &holder, k->flags);
	if (fd < 0) {
		baton_pool_put(pool);
		return fd;
	}
	k->out_fd = fd;
	k->out_holder = holder;
	/* The decay is scheduled before the fd exists: the pool is ours. */
	if (pool->decay_ms)
		baton_later_arm(&pool->decay, max(pool->decay_ms / 4, 5U));
	return baton_copy_out_fd(uarg, usize, k, sizeof(*k), fd, file,
				 &baton_pools, &pool->named);
}

int baton_pool_open(struct baton_pool_open *k, void __user *uarg, u32 usize)
{
	struct baton_pool *pool;
	struct file *file;
	u32 holder;
	int fd, ret;

	if ((k->flags & ~BATON_POOL_F_TAKES_COLD) || k->reserved[0] ||
	    k->reserved[1])
		return -EINVAL;
	ret = baton_check_name(k->name);
	if (ret)
		return ret;
	pool = baton_pool_get(k->name);
	if (!pool)
		return -ENOENT;
	ret = baton_owner_permission(&pool->named.owner,
				     pool->named.owner.open_may);
	if (ret)
		goto put;
	fd = baton_pool_file_new(pool, &file, &holder, k->flags);
	if (fd < 0) {
		ret = fd;
		goto put;
	}
	k->out_fd = fd;
	k->out_holder = holder;
	return baton_copy_out_fd(uarg, usize, k, sizeof(*k), fd, file, NULL,
				 NULL);

put:
	baton_pool_put(pool);
	return ret;
}

int baton_pool_unlink(const struct baton_unlink *k)
{
	return baton_names_remove(&baton_pools, k);
}

/* Module exit: only the registry's references are left. */
void baton_pool_registry_drain(void)
{
	baton_names_drain(&baton_pools, baton_pool_put_named);
}

/* ---- statistics (netlink.c) ---- */

/*
 * Buffers on the free queue of @c: tail - head. The head is read first:
 * both only grow and a refill never takes past the tail, so a tail behind
 * the head was scribbled. So was one further ahead than the queue holds,
 * unless the head moved since we read it: a reader interrupted or
 * preempted between the two reads (any kernel with PREEMPT_RT) may see a
 * stale head and a tail the holders moved on by more than a lap
 * meanwhile, so the pair is read again while the head keeps moving.
 * Counted only for a head that held still (as lib/pool.c's refill()).
 * Holes and reserved tickets may count a little above the buffers:
 * clamped.
 */
static u32 baton_pool_sample_free(struct baton_pool *pool,
				  struct baton_pool_cls *c)
{
	int tries;

	for (tries = 0; tries < 8; tries++) {
		u64 head = atomic64_read_acquire((atomic64_t *)c->head);
		u64 tail = READ_ONCE(*c->tail);

		if (tail >= head && tail - head <= c->lay.qcap)
			return min_t(u64, tail - head, c->lay.count);
		if (tail < head ||
		    atomic64_read_acquire((atomic64_t *)c->head) == head)
			break;
	}
	if (tries < 8)
		baton_pool_count(&pool->hdr->bad_words, 1);
	return 0;
}

/* The class's COLD buffers, counted in the descriptors (a stats read). */
static u32 baton_pool_count_cold(const struct baton_pool_cls *c)
{
	u32 j, n = 0;

	for (j = 0; j < c->lay.count; j++)
		n += BATON_POOL_S_KIND(READ_ONCE(c->desc[j].state)) ==
		     BATON_POOL_COLD;
	return n;
}

int baton_pool_stats(const struct baton_named *n, struct baton_pool_stats *st)
{
	struct baton_pool *pool = container_of(n, struct baton_pool, named);
	const struct baton_pool_hdr *hdr = pool->hdr;
	u32 i;

	memset(st, 0, sizeof(*st));
	st->peers = kvcalloc(pool->max_holders, sizeof(*st->peers),
			     GFP_KERNEL);
	if (!st->peers)
		return -ENOMEM;
	st->nr_classes = pool->nr_classes;
	st->decay_ms = pool->decay_ms;
	st->keep = pool->keep;
	st->max_holders = pool->max_holders;
	st->data_size = pool->data_size;

	mutex_lock(&pool->lock);
	for (i = 0; i < pool->nr_classes; i++) {
		st->cls[i].buf_shift = pool->cls[i].lay.buf_shift;
		st->cls[i].count = pool->cls[i].lay.count;
		st->cls[i].free = baton_pool_sample_free(pool, &pool->cls[i]);
		st->cls[i].cold = baton_pool_count_cold(&pool->cls[i]);
	}
	/* The kernel's counters (a read-only header): written under lock. */
	st->holders = hdr->holders;
	st->holder_releases = hdr->holder_releases;
	st->reclaimed = hdr->reclaimed;
	st->repaired = hdr->repaired;
	st->decayed = hdr->decayed;
	st->decayed_bytes = hdr->decayed_bytes;
	st->decay_ticks = hdr->decay_ticks;
	st->bad_words = hdr->bad_words;
	for (i = 0; i < pool->max_holders; i++) {
		struct baton_peer_stat *p = &st->peers[st->nr_peers];

		if (!pool->holder[i])
			continue;
		p->pid = get_pid(pool->holder[i]);
		p->index = i;
		p->holder = true;
		st->nr_peers++;
	}
	mutex_unlock(&pool->lock);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * baton: epoch domains.
 *
 * Owns struct baton_epoch: its memory (a header page, then one region per
 * participant index), its name in the domain registry, its lifetime, the
 * domain fds, participant registration, the collection cycle, synchronous
 * destroy (SYNCHRONIZE), POLL and KICK, and the retirements that released
 * participants leave behind.
 *
 * Why reclaiming at the proven frontier is safe (the ck_epoch.c habit:
 * the argument lives next to the code). A cycle of the collector:
 *
 *   1. drain: every queued entry whose epoch is <= the frontier that the
 *      PREVIOUS cycle proved is complete; move each queue's head past it;
 *   2. publish global = G + 1 (P: smp_mb()), force smp_mb() on every CPU
 *      that may run a participant (Q: the IPI barrier of barrier.c);
 *   3. scan every live announcement once (R); new frontier =
 *      min(announced epochs of active participants, G + 1) - 1, never
 *      below the previous one.
 *
 * Claim: after step 3 no reader, present or future, can reach an object
 * retired at an epoch r <= frontier.
 *  - A reader enters with: e = global; ann = e<<1|1; re-check global == e
 *    (O, no fence). If its ann store came before the IPI reached its CPU,
 *    the IPI's barrier drained it and the scan (R) sees it. If it came
 *    after, its re-check load ran after that barrier, hence after P and
 *    the publish, so it reads G + 1: either e was already G + 1 (which
 *    does not hold back r <= G), or the re-check fails and it retries.
 *  - The retirer unlinks the object, then a full fence (U), then reads
 *    r = global. A reader that can still reach the object read its own
 *    e before the unlink was visible, so e <= r (global only grows).
 *    Such a reader is active with e <= r <= frontier < min(active e):
 *    impossible. So every reader that could reach it has left.
 *  - Future readers announce at least G + 1 > frontier >= r and read the
 *    table after the unlink.
 * A stale announcement (a reader between its store and a failing
 * re-check) can only pull the minimum down, so clamping the frontier to
 * the previous one is safe: that reader will retry and holds nothing.
 *
 * Why three-bucket aliasing cannot happen (a design that drains the
 * bucket of G - 3 after advancing to G drains the bucket G now fills,
 * since both are the same modulo 3): entries are not kept in per-epoch
 * buckets. Each entry carries its own epoch, and step 1
 * consumes only entries whose epoch the previous cycle proved, before
 * this cycle publishes anything. A retirement racing step 2 reads either
 * G (not yet proven: at least one more cycle) or G + 1; neither can be
 * <= the frontier being drained, which is at most G - 1.
 *
 * Lifetime: a kref. The registry holds one reference until unlink, each
 * domain file one; a mapping holds its vm_file. The fops pin the module.
 *
 * Locking:
 *  - baton_domains.lock (mutex, owner.c): the registry list.
 *  - d->lock (mutex): the participant table, the trusted global and
 *    frontier, and the header counters they drive. Held
 *    across a whole cycle, IPI round included (it may sleep there).
 *  - d->stat_lock (spinlock): sync_waiters, sync_epoch and the counters
 *    touched without d->lock (kicks, waits, timeouts). Innermost.
 *  - d->wake_seq (atomic) and d->wq: a KICK or a release bumps the
 *    sequence and wakes the queue; a synchronizer snapshots the sequence
 *    before its cycle and sleeps only while it is unchanged, so no kick
 *    that follows its scan is lost.
 *
 * Statistics and events (netlink.c): baton_epoch_stats() fills a
 * snapshot under d->lock; hooks emit events on create, unlink, free, the
 * release of a dying participant, and a synchronizer held up past
 * straggler_ms by one reader (once per call).
 *
 * Shared words: a participant may scribble on its own region at any time.
 * The kernel reads each announcement, tail and entry epoch once with
 * READ_ONCE(), validates it and uses only that copy; what it must trust
 * (queue head, global, frontier) it keeps here and only mirrors out.
 */
#include <linux/anon_inodes.h>
#include <linux/atomic.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uidgid.h>
#include <linux/wait.h>

#include <linux/baton.h>

#include "baton_kmod.h"

/* mmap region ids (vm_pgoff of each region's mmap offset). */
#define BATON_EPOCH_HDR_PGOFF	0
#define BATON_EPOCH_SELF_PGOFF	1
#define BATON_EPOCH_TABLE_PGOFF	2

/* Participant region layout: each word on its own cache line. */
#define BATON_EPOCH_ANN_OFF	0
#define BATON_EPOCH_TAIL_OFF	64
#define BATON_EPOCH_HEAD_OFF	128
#define BATON_EPOCH_ENTRY_OFF	192

/* A synchronizer re-scans at least this often even without a kick. */
#define BATON_EPOCH_BACKSTOP_NS	(10 * NSEC_PER_MSEC)

/*
 * A participant index is FREE, RESERVED (a REGISTER holds it while it
 * copies its answer out, see baton_epoch_reserve()), LIVE (a registered
 * file holds it) or ORPHAN: its file was released with retirements
 * pending. No mapping of the region can outlive the file (a vma holds
 * it), nor any pin of its pages (they refuse GUP, pages.c), so an
 * orphan's region is the kernel's alone: its entries are drained in place
 * under the same rule, and the index is FREE again once they are.
 */
enum {
	BATON_PART_FREE,
	BATON_PART_RESERVED,	/* a REGISTER is copying its answer out */
	BATON_PART_LIVE,
	BATON_PART_ORPHAN,
};

struct baton_epoch_part {
	u8 state;
	struct pid *pid;		/* registering process (tgid) */
	u64 head;			/* trusted copy of the queue head */
	u64 orphan_tail;		/* ORPHAN: the tail, read at release */
	u64 *ann;			/* shared, participant-writable */
	u64 *tail;			/* ditto */
	u64 *head_shared;		/* mirror of @head */
	struct baton_epoch_entry *entries;
};

struct baton_epoch {
	struct baton_named named;	/* name, owner, reference, registry */
	u32 max_parts;
	u32 queue_len;
	u32 part_pages;
	struct baton_epoch_offsets off;	/* trusted copy of hdr->off */

	struct baton_pages mem;		/* every page of the domain (pages.c) */
	struct baton_epoch_hdr *hdr;

	struct mutex lock;		/* see the file comment */
	u64 global;
	u64 frontier;
	u32 holder;			/* oldest active index, last scan */
	u64 holder_epoch;		/* its announced epoch */
	struct baton_epoch_part *parts;

	spinlock_t stat_lock;		/* sync_waiters, kick/wait counters */
	u32 sync_waiters;
	u64 sync_epoch;			/* newest epoch parked on, ever */
	atomic_t wake_seq;
	wait_queue_head_t wq;		/* synchronizers */
	struct baton_mm_set mms;	/* mms mapping the domain, for (Q) */
};

/* One domain fd: a reference on the domain and maybe a participant. */
struct baton_epoch_file {
	struct baton_epoch *d;
	int index;			/* participant index, or -1 */
	bool registering;		/* a REGISTER is under way (d->lock) */
};

static void baton_epoch_free(struct kref *ref);

struct baton_names baton_domains = {
	.lock = __MUTEX_INITIALIZER(baton_domains.lock),
	.list = LIST_HEAD_INIT(baton_domains.list),
	.live = LIST_HEAD_INIT(baton_domains.live),
	.added_wq = __WAIT_QUEUE_HEAD_INITIALIZER(baton_domains.added_wq),
	.release = baton_epoch_free,
	.created_event = BATON_EVENT_EPOCH_CREATED,
	.unlinked_event = BATON_EVENT_EPOCH_UNLINKED,
};

static const struct file_operations baton_epoch_fops;

/* ---- events (netlink.c) ---- */

static void baton_epoch_event(struct baton_epoch *d, u32 type)
{
	struct baton_event ev = {
		.type = type,
		.obj = &d->named,
		.index = -1,
	};

	baton_event(&ev, GFP_KERNEL);
}

/* ---- memory and lifetime ---- */

static void baton_epoch_free(struct kref *ref)
{
	struct baton_epoch *d = container_of(ref, struct baton_epoch, named.ref);

	baton_named_forget(&baton_domains, &d->named);
	/* A domain that never had a name was never announced either. */
	if (d->named.published)
		baton_epoch_event(d, BATON_EVENT_EPOCH_DESTROYED);

	baton_pages_free(&d->mem);
	kfree(d->parts);
	baton_mm_set_destroy(&d->mms);
	mutex_destroy(&d->lock);
	baton_named_destroy(&d->named);	/* the charge, the namespace */
	kfree(d);
}

static void baton_epoch_put(struct baton_epoch *d)
{
	kref_put(&d->named.ref, baton_epoch_free);
}

static u8 *baton_epoch_part_base(struct baton_epoch *d, u32 index)
{
	return (u8 *)d->mem.base + ((1 + (size_t)index * d->part_pages) <<
				    PAGE_SHIFT);
}

static void baton_epoch_init_layout(struct baton_epoch *d)
{
	struct baton_epoch_offsets *off = &d->off;
	u32 i;

	off->hdr_mmap = BATON_EPOCH_HDR_PGOFF << PAGE_SHIFT;
	off->self_mmap = BATON_EPOCH_SELF_PGOFF << PAGE_SHIFT;
	off->table_mmap = BATON_EPOCH_TABLE_PGOFF << PAGE_SHIFT;
	off->hdr_size = PAGE_SIZE;
	off->self_size = d->part_pages << PAGE_SHIFT;
	off->table_size = (u64)d->max_parts * off->self_size;
	off->part_stride = off->self_size;
	off->ann = BATON_EPOCH_ANN_OFF;
	off->q_tail = BATON_EPOCH_TAIL_OFF;
	off->q_head = BATON_EPOCH_HEAD_OFF;
	off->q_entries = BATON_EPOCH_ENTRY_OFF;
	off->queue_len = d->queue_len;

	for (i = 0; i < d->max_parts; i++) {
		struct baton_epoch_part *p = &d->parts[i];
		u8 *pb = baton_epoch_part_base(d, i);

		p->ann = (u64 *)(pb + off->ann);
		p->tail = (u64 *)(pb + off->q_tail);
		p->head_shared = (u64 *)(pb + off->q_head);
		p->entries = (struct baton_epoch_entry *)(pb + off->q_entries);
	}

	/* Nobody can map the domain yet: plain stores. */
	d->global = 1;
	d->frontier = 0;
	d->holder = U32_MAX;
	d->hdr = d->mem.base;
	d->hdr->magic = BATON_EPOCH_MAGIC;
	d->hdr->abi_version = BATON_ABI_VERSION;
	d->hdr->max_participants = d->max_parts;
	d->hdr->queue_len = d->queue_len;
	d->hdr->global = d->global;
	d->hdr->frontier = d->frontier;
	d->hdr->off = *off;
}

static struct baton_epoch *baton_epoch_alloc(const struct baton_epoch_create *k)
{
	struct baton_epoch *d;
	unsigned int nr_pages;
	size_t part_bytes;
	int ret;

	d = kzalloc(sizeof(*d), GFP_KERNEL_ACCOUNT);
	if (!d)
		return ERR_PTR(-ENOMEM);
	d->max_parts = k->max_participants;
	d->queue_len = k->queue_len;
	part_bytes = BATON_EPOCH_ENTRY_OFF +
		     (size_t)k->queue_len * sizeof(struct baton_epoch_entry);
	d->part_pages = PAGE_ALIGN(part_bytes) >> PAGE_SHIFT;
	nr_pages = 1 + d->max_parts * d->part_pages;

	/* Charged before the pages exist: over a cap, none are allocated. */
	/* Any opener may become a participant: read and write bits both. */
	ret = baton_named_init(&d->named, k->name, k->mode,
			       MAY_READ | MAY_WRITE,
			       (unsigned long)nr_pages << PAGE_SHIFT);
	if (ret)
		goto free_d;
	ret = -ENOMEM;
	d->parts = kcalloc(d->max_parts, sizeof(*d->parts),
			   GFP_KERNEL_ACCOUNT);
	if (!d->parts)
		goto destroy_named;
	ret = baton_mm_set_init(&d->mms);
	if (ret)
		goto free_parts;
	ret = baton_pages_alloc(&d->mem, nr_pages);
	if (ret)
		goto free_mms;

	mutex_init(&d->lock);
	spin_lock_init(&d->stat_lock);
	atomic_set(&d->wake_seq, 0);
	init_waitqueue_head(&d->wq);
	baton_epoch_init_layout(d);
	return d;

free_mms:
	baton_mm_set_destroy(&d->mms);
free_parts:
	kfree(d->parts);
destroy_named:
	baton_named_destroy(&d->named);
free_d:
	kfree(d);
	return ERR_PTR(ret);
}

/* Counters live in the read-only header; only the kernel writes them. */
static void baton_epoch_add(__u64 *ctr, u64 n)
{
	WRITE_ONCE(*ctr, *ctr + n);
}

/* ---- the collection cycle (d->lock) ---- */

/* Step 1 for one participant: consume what @proven covers. */
static u64 baton_epoch_drain_part(struct baton_epoch *d,
				  struct baton_epoch_part *p, u64 proven)
{
	u64 tail, epoch, n = 0;

	if (p->state == BATON_PART_ORPHAN)
		tail = p->orphan_tail;	/* validated at release */
	else
		/* W, matches the library's release store of the tail. */
		tail = smp_load_acquire(p->tail);
	if (tail - p->head > d->queue_len) {
		/* Scribbled: take nothing, and never move head backwards. */
		baton_epoch_add(&d->hdr->bad_words, 1);
		return 0;
	}
	while (p->head != tail) {
		struct baton_epoch_entry *ent =
			&p->entries[p->head & (d->queue_len - 1)];

		epoch = READ_ONCE(ent->epoch);
		if (epoch > d->global) {
			/* Not an epoch anyone read: stop here, counted. */
			baton_epoch_add(&d->hdr->bad_words, 1);
			break;
		}
		if (epoch > proven)
			break;
		p->head++;
		n++;
	}
	if (n)
		/* X, matches the library's acquire load of head: our entry
		 * reads are done before the slots may be reused.
		 */
		smp_store_release(p->head_shared, p->head);
	return n;
}

struct baton_epoch_cycle {
	u64 completed;
	u32 active;
};

static void baton_epoch_cycle(struct baton_epoch *d,
			      struct baton_epoch_cycle *res)
{
	u64 proven = d->frontier, g = d->global + 1, min = g, n = 0;
	u64 orphans = 0, frontier;
	u32 i, active = 0, holder = U32_MAX;

	lockdep_assert_held(&d->lock);

	/* 1. Drain what the previous cycle proved, before publishing. */
	for (i = 0; i < d->max_parts; i++) {
		struct baton_epoch_part *p = &d->parts[i];

		if (p->state == BATON_PART_LIVE) {
			n += baton_epoch_drain_part(d, p, proven);
		} else if (p->state == BATON_PART_ORPHAN) {
			orphans += baton_epoch_drain_part(d, p, proven);
			if (p->head == p->orphan_tail)
				p->state = BATON_PART_FREE;
		}
	}

	/* 2. Publish G + 1. */
	d->global = g;
	WRITE_ONCE(d->hdr->global, g);
	/* P, matches O: the new global is visible before the IPIs. */
	smp_mb();
	/* Q, matches O and T: see baton_barrier_peers(). */
	baton_barrier_peers(&d->mms);

	/* 3. Scan: each announcement read once (R). */
	for (i = 0; i < d->max_parts; i++) {
		struct baton_epoch_part *p = &d->parts[i];
		u64 ann, e;

		if (p->state != BATON_PART_LIVE)
			continue;
		ann = READ_ONCE(*p->ann);
		if (!(ann & BATON_EPOCH_ANN_ACTIVE))
			continue;
		e = ann >> 1;
		if (!e || e > g) {
			/*
			 * No reader ever read this epoch (the global starts
			 * at 1 and only grows): a scribbled word. Treat it as
			 * the oldest possible announcement, so it holds the
			 * frontier where it is and never lets anything go
			 * early. Epoch 0 must not reach min below: min - 1
			 * would wrap to U64_MAX, a frontier that frees all.
			 */
			baton_epoch_add(&d->hdr->bad_words, 1);
			e = proven + 1;
		}
		active++;
		if (e < min) {
			min = e;
			holder = i;
		}
	}
	frontier = max(min - 1, proven);
	d->frontier = frontier;
	d->holder = holder;
	d->holder_epoch = min;
	WRITE_ONCE(d->hdr->frontier, frontier);
	baton_epoch_add(&d->hdr->collections, 1);
	baton_epoch_add(&d->hdr->completed, n);
	baton_epoch_add(&d->hdr->orphans_completed, orphans);
	if (res) {
		res->completed = n + orphans;
		res->active = active;
	}
}

/* ---- participants ---- */

/*
 * REGISTER in three steps, so that the copy-out, which may wait for ever
 * on the caller's page (userfaultfd, FUSE), holds no lock: reserve a FREE
 * index under d->lock (RESERVED: taken, but nobody's yet, so the cycle,
 * the stats and other registrations skip it), copy the answer out with no
 * lock held, then make it LIVE, or FREE again if the answer could not be
 * delivered: a caller who never learns its index must not keep it. Until
 * then @ef->index stays -1, so this fd cannot map the region, and
 * @ef->registering makes a second REGISTER of the same fd EBUSY.
 */
static int baton_epoch_reserve(struct baton_epoch_file *ef, u32 *index)
{
	struct baton_epoch *d = ef->d;
	int ret = 0;
	u32 i;

	mutex_lock(&d->lock);
	if (ef->index >= 0 || ef->registering) {
		ret = -EBUSY;
		goto unlock;
	}
	for (i = 0; i < d->max_parts; i++)
		if (d->parts[i].state == BATON_PART_FREE)
			break;
	if (i == d->max_parts) {
		ret = -ENOSPC;
		goto unlock;
	}
	d->parts[i].state = BATON_PART_RESERVED;
	ef->registering = true;
	*index = i;
unlock:
	mutex_unlock(&d->lock);
	return ret;
}

static void baton_epoch_commit(struct baton_epoch_file *ef, u32 i,
			       bool delivered)
{
	struct baton_epoch *d = ef->d;
	struct baton_epoch_part *p = &d->parts[i];

	mutex_lock(&d->lock);
	ef->registering = false;
	if (!delivered) {
		p->state = BATON_PART_FREE;
		goto unlock;
	}
	/*
	 * The previous owner of this index has been released, so nothing
	 * maps the region writable: start it clean.
	 */
	memset(baton_epoch_part_base(d, i), 0, d->part_pages << PAGE_SHIFT);
	p->head = 0;
	p->pid = get_pid(task_tgid(current));
	p->state = BATON_PART_LIVE;
	WRITE_ONCE(ef->index, i);	/* read by mmap without d->lock */
	baton_epoch_add(&d->hdr->participants, 1);
unlock:
	mutex_unlock(&d->lock);
}

static long baton_epoch_register(struct baton_epoch_file *ef,
				 void __user *uarg)
{
	struct baton_epoch_register k;
	u32 usize, i;
	int ret;

	ret = baton_copy_in(&k, sizeof(k), BATON_EPOCH_REGISTER_SIZE_VER0,
			    uarg, &usize);
	if (ret)
		return ret;
	if (k.flags || k.reserved[0] || k.reserved[1])
		return -EINVAL;

	ret = baton_epoch_reserve(ef, &i);
	if (ret)
		return ret;
	k.out_index = i;
	k.out_reserved = 0;
	/* No lock held: this may wait on the caller's page for ever. */
	ret = baton_copy_out(uarg, usize, &k, sizeof(k));
	baton_epoch_commit(ef, i, !ret);
	return ret;
}

/* Events: participant @index released by a dying process. */
static void baton_epoch_part_died(struct baton_epoch *d, int index)
{
	struct baton_event ev = {
		.type = BATON_EVENT_PEER_DIED,
		.obj = &d->named,
		.pid = d->parts[index].pid,
		.index = index,
	};

	if (baton_peer_died(ev.pid))
		baton_event(&ev, GFP_KERNEL);
}

/*
 * The file of participant @ef->index is gone: its announcement stops
 * counting now, even if it died inside a read section. Its pending
 * retirements stay where they are, in a region nobody can map writable
 * any more: validated once here, then drained by later cycles under the
 * same rule as everyone's (ORPHAN), never lost and never early.
 */
static void baton_epoch_unregister(struct baton_epoch_file *ef)
{
	struct baton_epoch *d = ef->d;
	struct baton_epoch_part *p = &d->parts[ef->index];
	u64 tail, nr, j;

	mutex_lock(&d->lock);
	tail = READ_ONCE(*p->tail);
	nr = tail - p->head;
	if (nr > d->queue_len) {
		/* A scribbled tail: nothing of that queue can be trusted. */
		baton_epoch_add(&d->hdr->bad_words, 1);
		nr = 0;
	}
	for (j = 0; j < nr; j++) {
		struct baton_epoch_entry *ent =
			&p->entries[(p->head + j) & (d->queue_len - 1)];

		/* A scribbled epoch waits for the current one. */
		if (READ_ONCE(ent->epoch) > d->global) {
			baton_epoch_add(&d->hdr->bad_words, 1);
			WRITE_ONCE(ent->epoch, d->global);
		}
	}
	WRITE_ONCE(*p->ann, 0);
	p->orphan_tail = p->head + nr;
	p->state = nr ? BATON_PART_ORPHAN : BATON_PART_FREE;
	baton_epoch_part_died(d, ef->index);
	put_pid(p->pid);
	p->pid = NULL;
	baton_epoch_add(&d->hdr->orphaned, nr);
	WRITE_ONCE(d->hdr->participants, d->hdr->participants - 1);
	baton_epoch_add(&d->hdr->participant_releases, 1);
	mutex_unlock(&d->lock);

	/* A synchronizer waiting on this participant may now proceed. */
	atomic_inc(&d->wake_seq);
	wake_up_all(&d->wq);
}

/* ---- synchronize, poll, collect, kick ---- */

/*
 * Count a synchronizer in (@delta 1, parking on @epoch) or out (-1).
 *
 * Parking publishes @epoch in hdr->sync_epoch, the word readers test on
 * exit: only a reader that announced an epoch <= it can be holding this
 * synchronizer up, so only such a reader kicks. Readers that enter while
 * we wait read a global our cycles have already moved past @epoch, so a
 * busy reader costs no kick however often it exits. The word only grows
 * (the newest epoch anyone parked on): with several synchronizers a
 * reader kicks if it holds up any of them, and leaving needs no rescan.
 * Readers still inside at or below it once everyone has left are the
 * stragglers that held them up: each kicks once, in vain.
 */
static void baton_epoch_waiters(struct baton_epoch *d, int delta, u64 epoch)
{
	spin_lock(&d->stat_lock);
	d->sync_waiters += delta;
	WRITE_ONCE(d->hdr->sync_waiters, d->sync_waiters);
	if (delta > 0) {
		if (epoch > d->sync_epoch) {
			d->sync_epoch = epoch;
			WRITE_ONCE(d->hdr->sync_epoch, epoch);
		}
		baton_epoch_add(&d->hdr->sync_waits, 1);
	}
	spin_unlock(&d->stat_lock);
}

static bool baton_epoch_kicked(struct baton_epoch *d, int seq)
{
	return atomic_read(&d->wake_seq) != seq;
}

/*
 * Events: one synchronize call, held up by one reader (the same index and
 * announcement, scan after scan) for straggler_ms, reports it once.
 */
struct baton_epoch_straggler {
	ktime_t since;			/* when @index began holding us up */
	u32 index;			/* U32_MAX: nobody yet */
	u64 epoch;
	bool reported;
};

static void baton_epoch_straggler_check(struct baton_epoch *d,
					struct baton_epoch_straggler *s)
{
	struct baton_event ev = {
		.type = BATON_EVENT_STRAGGLER,
		.obj = &d->named,
	};
	ktime_t now = ktime_get();
	s64 waited;

	lockdep_assert_held(&d->lock);
	if (s->reported)
		return;
	if (d->holder == U32_MAX || d->holder != s->index ||
	    d->holder_epoch != s->epoch) {
		s->index = d->holder;
		s->epoch = d->holder_epoch;
		s->since = now;
		return;
	}
	waited = ktime_ms_delta(now, s->since);
	if (waited < baton_straggler_ms())
		return;
	s->reported = true;
	ev.pid = d->parts[s->index].pid;
	ev.index = s->index;
	ev.epoch = s->epoch;
	ev.waited_ms = waited;
	baton_event(&ev, GFP_KERNEL);
}

/*
 * Run cycles until @epoch is proven, the deadline passes or a signal
 * comes: 0, -ETIMEDOUT or -ERESTARTSYS. On -ETIMEDOUT *@holder and
 * *@holder_pid name the oldest active participant of the last scan.
 */
static int baton_epoch_sync_wait(struct baton_epoch *d, u64 epoch,
				 bool has_deadline, ktime_t deadline,
				 u32 *holder, pid_t *holder_pid)
{
	struct baton_epoch_straggler straggler = { .index = U32_MAX };

	for (;;) {
		int seq = atomic_read(&d->wake_seq);
		ktime_t wait = BATON_EPOCH_BACKSTOP_NS;
		bool done;
		int ret;

		mutex_lock(&d->lock);
		baton_epoch_cycle(d, NULL);
		done = epoch <= d->frontier;
		*holder = d->holder;
		*holder_pid = 0;
		if (*holder != U32_MAX)
			*holder_pid = pid_vnr(d->parts[*holder].pid);
		if (!done)
			baton_epoch_straggler_check(d, &straggler);
		mutex_unlock(&d->lock);
		if (done)
			return 0;
		/*
		 * Here, not only in the wait below: that wait looks for a
		 * signal only when it sleeps, and a stream of kicks (any
		 * opener may kick) keeps its condition true, pass after pass.
		 */
		if (signal_pending(current))
			return -ERESTARTSYS;

		if (has_deadline) {
			ktime_t left = ktime_sub(deadline, ktime_get());

			if (left <= 0)
				return -ETIMEDOUT;
			wait = min(wait, left);
		}
		/*
		 * Sleep until a kick (a reader that announced <= sync_epoch
		 * left) or a release bumps wake_seq past the value
		 * read before this cycle's scan; the backstop bounds the
		 * damage of a participant that leaves without kicking.
		 */
		ret = wait_event_interruptible_hrtimeout(d->wq,
							 baton_epoch_kicked(d, seq),
							 wait);
		if (ret == -ERESTARTSYS)
			return ret;
	}
}

static long baton_epoch_synchronize(struct baton_epoch_file *ef,
				    void __user *uarg)
{
	struct baton_epoch *d = ef->d;
	struct baton_epoch_sync k;
	u32 usize, holder = U32_MAX;
	pid_t holder_pid = 0;
	ktime_t deadline;
	bool done;
	int ret, err;

	ret = baton_copy_in(&k, sizeof(k), BATON_EPOCH_SYNC_SIZE_VER0, uarg,
			    &usize);
	if (ret)
		return ret;
	if ((k.flags & ~BATON_EPOCH_SYNC_DEADLINE) || k.reserved[0] ||
	    k.reserved[1])
		return -EINVAL;
	deadline = baton_user_deadline(k.deadline_ns);

	mutex_lock(&d->lock);
	ret = k.epoch > d->global ? -EINVAL : 0;
	/*
	 * The first cycle runs without raising sync_epoch: when nobody
	 * is inside a section it proves @epoch at once and readers never
	 * see a waiter (no kicks).
	 */
	if (!ret && k.epoch > d->frontier)
		baton_epoch_cycle(d, NULL);
	done = k.epoch <= d->frontier;
	mutex_unlock(&d->lock);
	if (ret)
		return ret;

	if (!done) {
		baton_epoch_waiters(d, 1, k.epoch);
		/*
		 * V, matches T: sync_epoch >= k.epoch is visible before the
		 * next cycles' IPIs, so a reader whose exit load missed it
		 * made that load before the next IPI (Q), which drained its
		 * ann = 0 store: the scan after that IPI sees it gone. A
		 * reader whose load saw it kicks if it announced <= k.epoch;
		 * one that announced more holds nothing we wait for.
		 */
		smp_mb();
		ret = baton_epoch_sync_wait(d, k.epoch,
					    k.flags & BATON_EPOCH_SYNC_DEADLINE,
					    deadline, &holder, &holder_pid);
		baton_epoch_waiters(d, -1, 0);
		if (ret == -ERESTARTSYS)
			return ret;
		if (ret == -ETIMEDOUT) {
			spin_lock(&d->stat_lock);
			baton_epoch_add(&d->hdr->sync_timeouts, 1);
			spin_unlock(&d->stat_lock);
		}
	}

	k.out_frontier = READ_ONCE(d->frontier);
	k.out_holder_pid = ret ? holder_pid : 0;
	k.out_holder_index = ret ? holder : U32_MAX;
	/* Copied back on ETIMEDOUT too: the holder is the answer. */
	err = baton_copy_out(uarg, usize, &k, sizeof(k));
	return err ? err : ret;
}

static long baton_epoch_poll_ioc(struct baton_epoch_file *ef,
				 void __user *uarg)
{
	struct baton_epoch *d = ef->d;
	struct baton_epoch_poll k;
	u32 usize;
	int ret;

	ret = baton_copy_in(&k, sizeof(k), BATON_EPOCH_POLL_SIZE_VER0, uarg,
			    &usize);
	if (ret)
		return ret;
	if (k.flags || k.reserved[0] || k.reserved[1])
		return -EINVAL;

	mutex_lock(&d->lock);
	if (k.epoch > d->global) {
		ret = -EINVAL;
	} else {
		/* One cycle at most, and only when the answer is not yet. */
		if (k.epoch > d->frontier)
			baton_epoch_cycle(d, NULL);
		k.out_frontier = d->frontier;
		k.out_quiescent = k.epoch <= d->frontier;
		k.out_reserved = 0;
	}
	mutex_unlock(&d->lock);
	if (ret)
		return ret;
	return baton_copy_out(uarg, usize, &k, sizeof(k));
}

static long baton_epoch_collect(struct baton_epoch_file *ef,
				void __user *uarg)
{
	struct baton_epoch *d = ef->d;
	struct baton_epoch_collect k;
	struct baton_epoch_cycle res;
	u32 usize;
	int ret;

	ret = baton_copy_in(&k, sizeof(k), BATON_EPOCH_COLLECT_SIZE_VER0,
			    uarg, &usize);
	if (ret)
		return ret;
	if (k.flags || k.reserved[0] || k.reserved[1])
		return -EINVAL;

	mutex_lock(&d->lock);
	baton_epoch_cycle(d, &res);
	k.out_global = d->global;
	k.out_frontier = d->frontier;
	mutex_unlock(&d->lock);
	k.out_completed = res.completed;
	k.out_active = res.active;
	k.out_reserved = 0;
	return baton_copy_out(uarg, usize, &k, sizeof(k));
}

static long baton_epoch_kick(struct baton_epoch_file *ef, unsigned long arg)
{
	struct baton_epoch *d = ef->d;

	if (arg)
		return -EINVAL;
	/*
	 * The caller's ann = 0 store was made before this call; the wake
	 * below takes the wait-queue lock, and the woken synchronizer runs
	 * a full cycle (P, Q) before it looks at announcements again.
	 */
	atomic_inc(&d->wake_seq);
	spin_lock(&d->stat_lock);
	WRITE_ONCE(d->hdr->wake_seq, atomic_read(&d->wake_seq));
	baton_epoch_add(&d->hdr->kicks, 1);
	spin_unlock(&d->stat_lock);
	wake_up_all(&d->wq);
	return 0;
}

static long baton_epoch_ioctl(struct file *file, unsigned int cmd,
			      unsigned long arg)
{
	struct baton_epoch_file *ef = file->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case BATON_EPOCH_IOC_REGISTER:
		return baton_epoch_register(ef, uarg);
	case BATON_EPOCH_IOC_COLLECT:
		return baton_epoch_collect(ef, uarg);
	case BATON_EPOCH_IOC_SYNCHRONIZE:
		return baton_epoch_synchronize(ef, uarg);
	case BATON_EPOCH_IOC_POLL:
		return baton_epoch_poll_ioc(ef, uarg);
	case BATON_EPOCH_IOC_KICK:
		return baton_epoch_kick(ef, arg);
	default:
		return -ENOTTY;
	}
}

/* ---- mmap ---- */

/*
 * The region at mmap offset @pgoff: the header and the table read-only for
 * every domain fd, the self region read-write for the fd that registered
 * it (the kernel picks the pages from the file, so no fd can map another
 * participant's region writable). All control pages (pages.c): a region
 * passes to the next participant of its index, the kernel reads the rest.
 */
static int baton_epoch_region(struct baton_epoch_file *ef, unsigned long pgoff,
			      struct baton_region *r)
{
	struct baton_epoch *d = ef->d;
	int index = READ_ONCE(ef->index);

	r->data = false;
	r->writable = false;
	switch (pgoff) {
	case BATON_EPOCH_HDR_PGOFF:
		r->first = 0;
		r->pages = 1;
		return 0;
	case BATON_EPOCH_SELF_PGOFF:
		if (index < 0)
			return -EINVAL;
		r->first = 1 + (unsigned long)index * d->part_pages;
		r->pages = d->part_pages;
		r->writable = true;
		return 0;
	case BATON_EPOCH_TABLE_PGOFF:
		r->first = 1;
		r->pages = (unsigned long)d->max_parts * d->part_pages;
		return 0;
	default:
		return -EINVAL;
	}
}

/* One region per mmap() call, at its exact offset (pages.c does the rest). */
static int baton_epoch_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct baton_epoch_file *ef = file->private_data;
	struct baton_region r;
	int ret;

	ret = baton_epoch_region(ef, vma->vm_pgoff, &r);
	if (ret)
		return ret;
	return baton_pages_mmap(&ef->d->mem, vma, &r, &ef->d->mms);
}

/* ---- domain fds ---- */

static int baton_epoch_release(struct inode *inode, struct file *file)
{
	struct baton_epoch_file *ef = file->private_data;

	if (ef->index >= 0)
		baton_epoch_unregister(ef);
	baton_epoch_put(ef->d);
	kfree(ef);
	return 0;
}

static const struct file_operations baton_epoch_fops = {
	.owner		= THIS_MODULE,
	.release	= baton_epoch_release,
	.unlocked_ioctl	= baton_epoch_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.mmap		= baton_epoch_mmap,
	.llseek		= noop_llseek,
};

/* Reserve an fd and make a domain file; installed by the caller. */
static int baton_epoch_file_new(struct baton_epoch *d, struct file **filep)
{
	struct baton_epoch_file *ef;
	struct file *file;
	int fd;

	ef = kzalloc(sizeof(*ef), GFP_KERNEL_ACCOUNT);
	if (!ef)
		return -ENOMEM;
	ef->d = d;
	ef->index = -1;

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		goto free_ef;
	file = anon_inode_getfile("[baton_epoch]", &baton_epoch_fops, ef,
				  O_RDWR);
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		fd = PTR_ERR(file);
		goto free_ef;
	}
	*filep = file;
	return fd;

free_ef:
	kfree(ef);
	return fd;
}

/* ---- names, permissions and the registry (the ring rules) ---- */

/* The epoch named @name, with a reference for the caller, or NULL. */
static struct baton_epoch *baton_epoch_get(const char *name)
{
	struct baton_named *n = baton_names_get(&baton_domains, name);

	return n ? container_of(n, struct baton_epoch, named) : NULL;
}

static void baton_epoch_put_named(struct baton_named *n)
{
	baton_epoch_put(container_of(n, struct baton_epoch, named));
}

/* ---- statistics (netlink.c) ---- */

/* Queued retirements of one participant: tail sampled, clamped. */
static u64 baton_epoch_part_pending(struct baton_epoch *d,
				    struct baton_epoch_part *p)
{
	u64 n;

	if (p->state == BATON_PART_ORPHAN)
		return p->orphan_tail - p->head;	/* validated */
	n = READ_ONCE(*p->tail) - p->head;
	return min_t(u64, n, d->queue_len);
}

/* One live participant into @st; @oldest: index of the oldest reader. */
static void baton_epoch_stat_part(struct baton_epoch *d, u32 i,
				  struct baton_epoch_stats *st, u32 *oldest)
{
	struct baton_epoch_part *p = &d->parts[i];
	struct baton_peer_stat *ps = &st->peers[st->nr_peers++];
	u64 ann = READ_ONCE(*p->ann);

	ps->pid = get_pid(p->pid);
	ps->index = i;
	ps->pending = baton_epoch_part_pending(d, p);
	st->pending += ps->pending;
	st->participants++;
	if (!(ann & BATON_EPOCH_ANN_ACTIVE))
		return;
	ps->active = true;
	ps->announced = ann >> 1;
	st->active_readers++;
	/* A scribbled epoch (above global) is nobody's oldest. */
	if (ps->announced <= d->global &&
	    (*oldest == U32_MAX || ps->announced < st->oldest)) {
		st->oldest = ps->announced;
		*oldest = i;
	}
}

int baton_epoch_stats(const struct baton_named *n,
		      struct baton_epoch_stats *st)
{
	struct baton_epoch *d = container_of(n, struct baton_epoch, named);
	u32 i, oldest = U32_MAX;

	memset(st, 0, sizeof(*st));
	st->peers = kcalloc(d->max_parts, sizeof(*st->peers), GFP_KERNEL);
	if (!st->peers)
		return -ENOMEM;
	st->max_participants = d->max_parts;
	st->queue_len = d->queue_len;

	mutex_lock(&d->lock);
	st->global = d->global;
	st->frontier = d->frontier;
	for (i = 0; i < d->max_parts; i++) {
		struct baton_epoch_part *p = &d->parts[i];

		if (p->state == BATON_PART_LIVE) {
			baton_epoch_stat_part(d, i, st, &oldest);
		} else if (p->state == BATON_PART_ORPHAN) {
			st->orphans++;
			st->pending += baton_epoch_part_pending(d, p);
		}
	}
	if (oldest != U32_MAX)
		st->oldest_pid = get_pid(d->parts[oldest].pid);
	mutex_unlock(&d->lock);

	/* Kernel-written counters of the read-only header (stat_lock). */
	spin_lock(&d->stat_lock);
	st->sync_waiters = d->sync_waiters;
	st->sync_waits = d->hdr->sync_waits;
	st->sync_timeouts = d->hdr->sync_timeouts;
	spin_unlock(&d->stat_lock);
	return 0;
}

/* ---- /dev/baton ioctls ---- */

int baton_epoch_create(struct baton_epoch_create *k, void __user *uarg,
		       u32 usize)
{
	struct baton_epoch *d;
	struct file *file;
	int fd, ret;

	BUILD_BUG_ON(sizeof(struct baton_epoch_offsets) != 96);
	BUILD_BUG_ON(sizeof(struct baton_epoch_entry) != 24);
	BUILD_BUG_ON(sizeof(struct baton_epoch_hdr) > PAGE_SIZE);

	if (k->flags || k->reserved0 || k->reserved[0] || k->reserved[1])
		return -EINVAL;
	if (!k->max_participants ||
	    k->max_participants > BATON_EPOCH_PARTICIPANTS_MAX)
		return -EINVAL;
	if (k->queue_len < BATON_EPOCH_QUEUE_MIN ||
	    k->queue_len > BATON_EPOCH_QUEUE_MAX ||
	    !is_power_of_2(k->queue_len))
		return -EINVAL;
	if (k->mode & ~0777)
		return -EINVAL;
	ret = baton_check_name(k->name);
	if (ret)
		return ret;

	/* Early and racy, to spare the allocation; registry_add() decides. */
	d = baton_epoch_get(k->name);
	if (d) {
		baton_epoch_put(d);
		return -EEXIST;
	}

	d = baton_epoch_alloc(k);
	if (IS_ERR(d))
		return PTR_ERR(d);
	fd = baton_epoch_file_new(d, &file);
	if (fd < 0) {
		baton_epoch_put(d);
		return fd;
	}

	k->out_fd = fd;
	k->out_reserved = 0;
	k->out_off = d->off;
	return baton_copy_out_fd(uarg, usize, k, sizeof(*k), fd, file,
				 &baton_domains, &d->named);
}

int baton_epoch_open(struct baton_epoch_open *k, void __user *uarg,
		     u32 usize)
{
	struct baton_epoch *d;
	struct file *file;
	int fd, ret;

	if (k->flags || k->reserved[0] || k->reserved[1])
		return -EINVAL;
	ret = baton_check_name(k->name);
	if (ret)
		return ret;

	d = baton_epoch_get(k->name);
	if (!d)
		return -ENOENT;
	ret = baton_owner_permission(&d->named.owner, d->named.owner.open_may);
	if (ret)
		goto put;
	fd = baton_epoch_file_new(d, &file);
	if (fd < 0) {
		ret = fd;
		goto put;
	}

	k->out_fd = fd;
	k->out_max_participants = d->max_parts;
	k->out_queue_len = d->queue_len;
	k->out_reserved = 0;
	k->out_off = d->off;
	return baton_copy_out_fd(uarg, usize, k, sizeof(*k), fd, file, NULL,
				 NULL);

put:
	baton_epoch_put(d);
	return ret;
}

int baton_epoch_unlink(const struct baton_unlink *k)
{
	return baton_names_remove(&baton_domains, k);
}

/* Module exit: only the registry's references are left. */
void baton_epoch_registry_drain(void)
{
	baton_names_drain(&baton_domains, baton_epoch_put_named);
}

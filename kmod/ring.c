// SPDX-License-Identifier: GPL-2.0
/*
 * baton: ring objects.
 *
 * Owns struct baton_ring: its memory and layout, its name in the registry,
 * its lifetime, and the ring fds, each carrying one role: mmap with
 * role-scoped protections, park, wake, info, poll and release.
 *
 * Lifetime: a kref. The registry holds one reference from create until
 * unlink, each ring file holds one, and a mapping holds its vm_file, so
 * the pages outlive close() of the fd until the last munmap(). The ring
 * fops pin the module while any ring file or mapping exists.
 *
 * A ring bound to pools (BATON_RING_IOC_BIND_POOL) holds a reference on
 * each, and its free gives back the buffers in flight in it (pool.c:
 * baton_pool_return_sent()): nobody can receive them any more.
 *
 * MPSC rings (BATON_RING_MPSC) add a sequence region and one claim page
 * per producer index after the slots; mpsc.c owns what those words mean
 * (producer indices, dead producers, tombstones), this file where they
 * are and who may map them.
 *
 * Locking:
 *  - baton_rings.lock (mutex, owner.c) guards the registry list; a lookup
 *    takes its reference under it.
 *  - ring->lock (spinlock) guards the role counts, ->state and the
 *    counters in the shared header. Slow paths only; the only lock
 *    taken while it is held is mpsc.c's (producer attach and release).
 *    The mm set in barrier.c has its own.
 *  - each side's wait queue lock (struct baton_waiters) guards that
 *    side's waiting word and its arms; WAKE and the park loop's
 *    prepare_to_wait_event() meet there, which is what makes the re-check
 *    and the sleep atomic with respect to BATON_RING_IOC_WAKE. Taken with
 *    interrupts off, inside nothing of ours; ring->lock is never taken
 *    while it is held.
 *
 * Statistics and events (netlink.c): baton_ring_stats() fills a snapshot
 * under ring->lock from the kernel's own counters and one READ_ONCE() of
 * each shared index; the hooks below emit events on create, unlink,
 * free and the release of a dying peer's file. None of it touches the
 * fast path: the per-file pid and parked flag are written at attach,
 * release and park only.
 *
 * Shared words: a process may scribble on any page it maps writable (the
 * producer: its control page and the slots; the consumer: its control
 * page) at any time. The kernel reads an index once with READ_ONCE(),
 * validates the local copy and uses only that. What it must trust
 * (geometry, layout, state) it keeps here and only mirrors into the
 * header page, which no one can map writable.
 */
#include <linux/anon_inodes.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uidgid.h>
#include <linux/wait.h>

#include <linux/baton.h>

#include "baton_kmod.h"
#include "compat.h"

/* Layout: one page each for hdr, producer and consumer, then the slots. */
#define BATON_HDR_PGOFF		0
#define BATON_PROD_PGOFF	1
#define BATON_CONS_PGOFF	2
#define BATON_SLOTS_PGOFF	3
/* The waiting flags sit a cache line away from the index they go with. */
#define BATON_WAITING_OFF	64

/*
 * One side of a ring (its producers, or its consumer): who waits there,
 * and the waiting word the peer's fast path loads (E). The kernel keeps
 * the bits and only mirrors them into @word, so a scribbled word misleads
 * no one but the side that owns it. Arms are counted per generation: a
 * WAKE that takes BATON_WAIT_PARKED down starts a new one, and a parker
 * armed in an older one must re-arm (store, F, G) before it sleeps.
 */
struct baton_waiters {
	wait_queue_head_t wq;	/* parkers and pollers; its lock: the rest */
	u32 bits;		/* BATON_WAIT_*, as mirrored into @word */
	unsigned int armed;	/* parkers armed in generation @gen */
	u64 gen;
	bool waking;		/* inside a WAKE that started a generation */
	u64 poll_raised;	/* POLL arms raised by ->poll */
	u64 poll_covered;	/* of those, the last whose F and G are done */
	u32 *word;		/* what the peer loads (E) */
	u32 *old_word;		/* MPSC producers: the producer page's word */
};

struct baton_ring {
	struct baton_named named;	/* name, owner, reference, registry */
	u32 kind;
	u32 slot_count;
	u32 slot_size;
	struct baton_ring_offsets off;	/* trusted copy of hdr->off */
	u32 max_producers;		/* 1 for SPSC */
	unsigned long seq_pgoff;	/* MPSC regions; 0 for SPSC */
	unsigned long seq_pages;
	unsigned long claim_pgoff;
	struct baton_mpsc *mpsc;	/* MPSC protocol state, or NULL */

	struct baton_pages mem;		/* every page of the ring (pages.c) */
	struct baton_ring_hdr *hdr;
	u64 *tail;			/* shared, producer-writable */
	u32 *prod_waiting;		/* ditto */
	u64 *head;			/* shared, consumer-writable */
	u32 *cons_waiting;		/* ditto */

	spinlock_t lock;		/* the next three, hdr counters */
	unsigned int producers;		/* attached producer files */
	unsigned int consumers;		/* attached consumer files */
	u32 state;			/* BATON_STATE_*, trusted copy */
	struct list_head files;		/* attached baton_ring_files */
	u64 scribbles;			/* inconsistent index pairs seen */

	struct baton_waiters prod_w;	/* producers parked or polling */
	struct baton_waiters cons_w;	/* consumers parked or polling */
	struct baton_later recheck;	/* MPSC: wakes a consumer's pollers */
	struct baton_mm_set mms;	/* mms mapping the ring, for (G) */
	/* bound pools (ring->lock; set once each), their SENT aux: @id */
	struct baton_pool *pools[BATON_RING_POOLS_MAX];
	u64 id;
};

/* One ring fd: a reference on the ring and a role. */
struct baton_ring_file {
	struct baton_ring *ring;
	u32 role;
	bool attached;			/* counted in producers/consumers */
	bool parked;			/* inside BATON_RING_IOC_PARK (stats) */
	int index;			/* MPSC producer: its claim page */
	struct list_head node;		/* in ring->files while attached */
	struct pid *pid;		/* the attaching process (tgid) */
};

static void baton_ring_free(struct kref *ref);

struct baton_names baton_rings = {
	.lock = __MUTEX_INITIALIZER(baton_rings.lock),
	.list = LIST_HEAD_INIT(baton_rings.list),
	.live = LIST_HEAD_INIT(baton_rings.live),
	.added_wq = __WAIT_QUEUE_HEAD_INITIALIZER(baton_rings.added_wq),
	.release = baton_ring_free,
	.created_event = BATON_EVENT_RING_CREATED,
	.unlinked_event = BATON_EVENT_RING_UNLINKED,
};

static const struct file_operations baton_ring_fops;

/* ---- events (netlink.c) ---- */

static void baton_ring_event(struct baton_ring *ring, u32 type)
{
	struct baton_event ev = {
		.type = type,
		.obj = &ring->named,
		.index = -1,
	};

	baton_event(&ev, GFP_KERNEL);
}

/* ---- memory and lifetime ---- */

/* Ring ids for bound pools (struct baton_ring_bind): never 0. */
static atomic64_t baton_ring_ids = ATOMIC64_INIT(0);

static void baton_ring_free(struct kref *ref)
{
	struct baton_ring *ring = container_of(ref, struct baton_ring, named.ref);
	unsigned int i;

	/* No file is left, so no poll can start it again. */
	baton_later_stop(&ring->recheck);
	baton_named_forget(&baton_rings, &ring->named);
	/* A ring that never had a name was never announced either. */
	if (ring->named.published)
		baton_ring_event(ring, BATON_EVENT_RING_DESTROYED);
	/* Nobody can receive from the ring now: what it carried goes back. */
	for (i = 0; i < BATON_RING_POOLS_MAX && ring->pools[i]; i++) {
		baton_pool_return_sent(ring->pools[i], ring->id);
		baton_pool_unref(ring->pools[i]);
	}
	baton_mpsc_free(ring->mpsc);
	baton_pages_free(&ring->mem);
	baton_mm_set_destroy(&ring->mms);
	baton_named_destroy(&ring->named);	/* the charge, the namespace */
	kfree(ring);
}

static void baton_ring_put(struct baton_ring *ring)
{
	kref_put(&ring->named.ref, baton_ring_free);
}

/* MPSC: the sequence words and one claim page per index, after the slots. */
static size_t baton_ring_mpsc_bytes(u32 kind, u32 slot_count, u32 producers)
{
	if (kind != BATON_RING_MPSC)
		return 0;
	return PAGE_ALIGN((size_t)slot_count * sizeof(u64)) +
	       ((size_t)producers << PAGE_SHIFT);
}

/* Where struct baton_mpsc_hdr sits in the header page. */
#define BATON_MPSC_HDR_OFF	1024

static int baton_ring_init_mpsc(struct baton_ring *ring)
{
	struct baton_ring_offsets *off = &ring->off;
	struct baton_mpsc_layout l;
	u8 *base = ring->mem.base;

	BUILD_BUG_ON(sizeof(struct baton_ring_hdr) > BATON_MPSC_HDR_OFF);
	BUILD_BUG_ON(BATON_MPSC_HDR_OFF + sizeof(struct baton_mpsc_hdr) >
		     PAGE_SIZE);
	ring->seq_pgoff = BATON_SLOTS_PGOFF + (off->slots_size >> PAGE_SHIFT);
	ring->seq_pages = PAGE_ALIGN((size_t)ring->slot_count * sizeof(u64)) >>
			  PAGE_SHIFT;
	ring->claim_pgoff = ring->seq_pgoff + ring->seq_pages;
	off->seq_mmap = (u64)ring->seq_pgoff << PAGE_SHIFT;
	off->seq_size = ring->seq_pages << PAGE_SHIFT;
	off->claim_mmap = (u64)ring->claim_pgoff << PAGE_SHIFT;
	off->claim_size = PAGE_SIZE;
	off->mpsc_hdr = BATON_MPSC_HDR_OFF;

	l.tail = ring->tail;
	l.seq = (u64 *)(base + off->seq_mmap);
	l.slots = base + off->slots_mmap;
	l.claims = base + off->claim_mmap;
	l.mhdr = (struct baton_mpsc_hdr *)(base + off->hdr_mmap +
					   off->mpsc_hdr);
	l.slot_count = ring->slot_count;
	l.slot_size = ring->slot_size;
	l.max_producers = ring->max_producers;
	l.named = &ring->named;
	ring->mpsc = baton_mpsc_new(&l);
	return ring->mpsc ? 0 : -ENOMEM;
}

static int baton_ring_init_layout(struct baton_ring *ring, size_t slots_bytes)
{
	struct baton_ring_offsets *off = &ring->off;
	u8 *base = ring->mem.base;
	int ret;

	off->hdr_mmap = BATON_HDR_PGOFF << PAGE_SHIFT;
	off->prod_mmap = BATON_PROD_PGOFF << PAGE_SHIFT;
	off->cons_mmap = BATON_CONS_PGOFF << PAGE_SHIFT;
	off->slots_mmap = BATON_SLOTS_PGOFF << PAGE_SHIFT;
	off->hdr_size = PAGE_SIZE;
	off->prod_size = PAGE_SIZE;
	off->cons_size = PAGE_SIZE;
	off->slots_size = slots_bytes;
	off->prod_tail = 0;
	off->prod_waiting = BATON_WAITING_OFF;
	off->cons_head = 0;
	off->cons_waiting = BATON_WAITING_OFF;

	ring->hdr = (struct baton_ring_hdr *)(base + off->hdr_mmap);
	ring->tail = (u64 *)(base + off->prod_mmap + off->prod_tail);
	ring->prod_waiting = (u32 *)(base + off->prod_mmap + off->prod_waiting);
	ring->head = (u64 *)(base + off->cons_mmap + off->cons_head);
	ring->cons_waiting = (u32 *)(base + off->cons_mmap + off->cons_waiting);
	ring->cons_w.word = ring->cons_waiting;
	ring->prod_w.word = ring->prod_waiting;
	if (ring->kind == BATON_RING_MPSC) {
		ret = baton_ring_init_mpsc(ring);
		if (ret)
			return ret;
		/* The producers' word: in the header, where none can write. */
		ring->prod_w.old_word = ring->prod_waiting;
		ring->prod_w.word = &((struct baton_mpsc_hdr *)
				      (base + off->hdr_mmap + off->mpsc_hdr))->prod_waiting;
	}

	/* Nobody can map the ring yet: plain stores. */
	ring->hdr->magic = BATON_RING_MAGIC;
	ring->hdr->abi_version = BATON_ABI_VERSION;
	ring->hdr->kind = ring->kind;
	ring->hdr->slot_count = ring->slot_count;
	ring->hdr->slot_size = ring->slot_size;
	ring->hdr->off = *off;
	return 0;
}

/*
 * How soon an MPSC consumer at a ticket a live producer may still be
 * reserving looks again, parked or polling (BATON_MPSC_RECHECK).
 */
#define BATON_RECHECK_MS	1

/*
 * A work item, not the timer's callback: the wait-queue lock is a
 * sleeping lock on PREEMPT_RT, so a wake needs a soft timer there, and
 * a soft timer (like a timer-wheel one) expires in the softirq of the
 * CPU that armed it, which a SCHED_FIFO task there starves wherever
 * ksoftirqd runs it (threadirqs, RT): the poller then slept until the
 * task ended (later.c; selftests/mpsc_death.c,
 * epoll_recheck_not_held_by_an_rt_task).
 */
static void baton_recheck_work(struct work_struct *work)
{
	struct baton_ring *ring = container_of(work, struct baton_ring,
					       recheck.work);

	/*
	 * No key: this wake means "look again", not "readable". io_uring's
	 * and aio's poll take a key as their result without calling ->poll
	 * again (selftests/mpsc_death.c,
	 * uring_poll_not_told_readable_by_the_recheck); with none, every
	 * kind of waiter looks, parkers included.
	 */
	wake_up(&ring->cons_w.wq);
}

static struct baton_ring *baton_ring_alloc(const struct baton_ring_create *k)
{
	size_t slots_bytes = PAGE_ALIGN((size_t)k->slot_count * k->slot_size);
	size_t bytes = (BATON_SLOTS_PGOFF << PAGE_SHIFT) + slots_bytes +
		       baton_ring_mpsc_bytes(k->kind, k->slot_count,
					     k->max_producers);
	struct baton_ring *ring;
	int ret;

	ring = kzalloc(sizeof(*ring), GFP_KERNEL_ACCOUNT);
	if (!ring)
		return ERR_PTR(-ENOMEM);
	ring->id = atomic64_inc_return(&baton_ring_ids);
	/* Charged before the pages exist: over a cap, none are allocated. */
	/* Opened for one role: its bit alone (0: either will do). */
	ret = baton_named_init(&ring->named, k->name, k->mode, 0, bytes);
	if (ret)
		goto free_ring;
	ret = baton_mm_set_init(&ring->mms);
	if (ret)
		goto destroy_named;
	ret = baton_pages_alloc(&ring->mem, bytes >> PAGE_SHIFT);
	if (ret)
		goto free_mms;

	ring->kind = k->kind;
	ring->slot_count = k->slot_count;
	ring->slot_size = k->slot_size;
	ring->max_producers = k->kind == BATON_RING_MPSC ? k->max_producers : 1;
	spin_lock_init(&ring->lock);
	INIT_LIST_HEAD(&ring->files);
	init_waitqueue_head(&ring->prod_w.wq);
	init_waitqueue_head(&ring->cons_w.wq);
	baton_later_init(&ring->recheck, baton_recheck_work);
	ret = baton_ring_init_layout(ring, slots_bytes);
	if (ret) {
		/* The ring's own free: pages, mm set and all. */
		baton_ring_put(ring);
		return ERR_PTR(ret);
	}
	return ring;

free_mms:
	baton_mm_set_destroy(&ring->mms);
destroy_named:
	baton_named_destroy(&ring->named);
free_ring:
	kfree(ring);
	return ERR_PTR(ret);
}

/* ---- waiting words (each side's wait-queue lock) ---- */

/* Mirror the kernel's bits into the word the peer loads (E). */
static void baton_waiters_publish(struct baton_waiters *w)
{
	lockdep_assert_held(&w->wq.lock);
	WRITE_ONCE(*w->word, w->bits);
	if (w->old_word)
		WRITE_ONCE(*w->old_word, w->bits);
}

/*
 * The last file of a side has gone: take its arms down, so the peer makes
 * no WAKE for nobody. Woken all the same: the count was read under
 * ring->lock, dropped before this, and a newcomer of the side may have
 * attached and armed in between; taking its arm down without a wake
 * would leave it asleep with its flag down, which no publication wakes
 * (models/park_wake.pml, VARIANT 9). Woken, it finds its arm gone and
 * re-arms with F and G, as after any WAKE; an epoll registration is
 * re-polled and re-armed by ->poll.
 */
static void baton_waiters_reset(struct baton_waiters *w)
{
	spin_lock_irq(&w->wq.lock);
	w->bits = 0;
	w->armed = 0;
	w->gen++;
	baton_waiters_publish(w);
	__wake_up_locked_key(&w->wq, TASK_NORMAL, NULL);
	spin_unlock_irq(&w->wq.lock);
}

/* Which side a file of @role waits on, and which side it wakes. */
static struct baton_waiters *baton_own_waiters(struct baton_ring *ring,
					       u32 role)
{
	return role == BATON_ROLE_CONSUMER ? &ring->cons_w : &ring->prod_w;
}

static struct baton_waiters *baton_peer_waiters(struct baton_ring *ring,
						u32 role)
{
	return role == BATON_ROLE_CONSUMER ? &ring->prod_w : &ring->cons_w;
}

/* ---- roles, state and counters (ring->lock) ---- */

static bool baton_role_valid(u32 role)
{
	return role == BATON_ROLE_PRODUCER || role == BATON_ROLE_CONSUMER;
}

static u32 baton_gone_bit(u32 role)
{
	return role == BATON_ROLE_PRODUCER ? BATON_STATE_PRODUCER_GONE :
					     BATON_STATE_CONSUMER_GONE;
}

static void baton_ring_set_state(struct baton_ring *ring, u32 state)
{
	lockdep_assert_held(&ring->lock);
	/*
	 * Release, pairing with the acquire loads in baton_park_check(),
	 * baton_ring_ready() and the library's baton_ring_peer_gone(): the
	 * gone role's last index store is visible before its GONE bit, so a
	 * consumer that sees PRODUCER_GONE and then an empty ring is drained.
	 */
	smp_store_release(&ring->state, state);
	/* The same, for the library's view in the header. */
	smp_store_release(&ring->hdr->state, state);
}

/* Counters live in the read-only header; only the kernel writes them. */
static void baton_hdr_inc(struct baton_ring *ring, __u64 *ctr)
{
	lockdep_assert_held(&ring->lock);
	WRITE_ONCE(*ctr, *ctr + 1);
}

static int baton_ring_attach(struct baton_ring_file *rf)
{
	struct baton_ring *ring = rf->ring;
	struct pid *pid = get_task_pid(current, PIDTYPE_TGID);
	unsigned int *count;
	int ret = 0;

	spin_lock(&ring->lock);
	count = rf->role == BATON_ROLE_PRODUCER ? &ring->producers :
						  &ring->consumers;
	if (*count >= (rf->role == BATON_ROLE_PRODUCER ?
		       ring->max_producers : 1)) {
		/* SPSC: one file per role; MPSC: max_producers producers. */
		ret = -EBUSY;
	} else {
		if (ring->mpsc && rf->role == BATON_ROLE_PRODUCER) {
			/* Cannot fail below max_producers. */
			rf->index = baton_mpsc_attach(ring->mpsc);
			if (WARN_ON_ONCE(rf->index < 0)) {
				spin_unlock(&ring->lock);
				put_pid(pid);
				return rf->index;
			}
		}
		if (ring->mpsc && rf->role == BATON_ROLE_CONSUMER)
			baton_mpsc_set_consumer(ring->mpsc, pid);
		(*count)++;
		baton_ring_set_state(ring,
				     ring->state & ~baton_gone_bit(rf->role));
		rf->attached = true;
		/* For the peer list of the statistics. */
		rf->pid = pid;
		pid = NULL;
		list_add_tail(&rf->node, &ring->files);
	}
	spin_unlock(&ring->lock);
	put_pid(pid);
	return ret;
}

/* Statistics and events: a released file of a dying process. */
static void baton_ring_peer_died(struct baton_ring_file *rf)
{
	struct baton_event ev = {
		.type = BATON_EVENT_PEER_DIED,
		.obj = &rf->ring->named,
		.pid = rf->pid,
		.role = rf->role,
		.index = rf->ring->mpsc && rf->role == BATON_ROLE_PRODUCER ?
			 rf->index : -1,
	};

	if (baton_peer_died(rf->pid))
		baton_event(&ev, GFP_KERNEL);
}

static void baton_ring_detach(struct baton_ring_file *rf)
{
	struct baton_ring *ring = rf->ring;
	bool producer = rf->role == BATON_ROLE_PRODUCER;
	unsigned int *count = producer ? &ring->producers : &ring->consumers;
	bool last;

	spin_lock(&ring->lock);
	list_del_init(&rf->node);
	baton_hdr_inc(ring, producer ? &ring->hdr->producer_deaths :
				       &ring->hdr->consumer_deaths);
	if (ring->mpsc && producer) {
		/* Its unpublished tickets become the kernel's to tombstone. */
		baton_mpsc_detach(ring->mpsc, rf->index);
	} else if (ring->mpsc) {
		baton_mpsc_set_consumer(ring->mpsc, NULL);
	}
	last = !--(*count);
	if (last)
		baton_ring_set_state(ring,
				     ring->state | baton_gone_bit(rf->role));
	spin_unlock(&ring->lock);

	/* Nobody of this role is left to be woken: spare the peer. */
	if (last)
		baton_waiters_reset(producer ? &ring->prod_w : &ring->cons_w);

	/* Parked peers return EPIPE, pollers see EPOLLHUP / EPOLLERR. */
	wake_up_all(producer ? &ring->cons_w.wq : &ring->prod_w.wq);
	baton_ring_peer_died(rf);
}

/* ---- ring fds ---- */

static int baton_ring_release(struct inode *inode, struct file *file)
{
	struct baton_ring_file *rf = file->private_data;

	if (rf->attached)
		baton_ring_detach(rf);
	put_pid(rf->pid);
	baton_ring_put(rf->ring);
	kfree(rf);
	return 0;
}

/*
 * Reserve an fd and make the file for @role on @ring. The file takes over
 * the caller's reference only on success. The fd is installed later, by
 * the caller, once nothing else can fail.
 */
static int baton_ring_file_new(struct baton_ring *ring, u32 role,
			       struct file **filep)
{
	struct baton_ring_file *rf;
	struct file *file;
	int fd;

	rf = kzalloc(sizeof(*rf), GFP_KERNEL_ACCOUNT);
	if (!rf)
		return -ENOMEM;
	rf->ring = ring;
	rf->role = role;

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		goto free_rf;
	file = anon_inode_getfile("[baton_ring]", &baton_ring_fops, rf,
				  O_RDWR);
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		fd = PTR_ERR(file);
		goto free_rf;
	}
	*filep = file;
	return fd;

free_rf:
	kfree(rf);
	return fd;
}

/* Undo baton_ring_file_new(); release drops the ring reference. */
static void baton_ring_file_abort(int fd, struct file *file)
{
	fput(file);
	put_unused_fd(fd);
}

/* ---- mmap ---- */

/*
 * The region at mmap offset @pgoff as @rf's role may map it. Producer
 * fds write the producer page and the slots, consumer fds the consumer
 * page; the header is read-only to both. MPSC: both roles write the
 * sequence words; a producer fd maps its own claim page (the kernel picks
 * it from the fd), a consumer fd none (EACCES). Only the slots are data
 * (pages.c): every other page passes between holders or steers the kernel.
 */
static int baton_ring_region(struct baton_ring_file *rf, unsigned long pgoff,
			     struct baton_region *r)
{
	struct baton_ring *ring = rf->ring;
	u32 writer;

	r->first = pgoff;
	r->pages = 1;
	r->data = false;
	switch (pgoff) {
	case BATON_HDR_PGOFF:
		writer = 0;
		break;
	case BATON_PROD_PGOFF:
		writer = BATON_ROLE_PRODUCER;
		break;
	case BATON_CONS_PGOFF:
		writer = BATON_ROLE_CONSUMER;
		break;
	case BATON_SLOTS_PGOFF:
		r->pages = ring->off.slots_size >> PAGE_SHIFT;
		r->data = true;
		writer = BATON_ROLE_PRODUCER;
		break;
	default:
		if (!ring->mpsc)
			return -EINVAL;
		if (pgoff == ring->seq_pgoff) {
			r->pages = ring->seq_pages;
			writer = rf->role;
		} else if (pgoff == ring->claim_pgoff) {
			if (rf->role != BATON_ROLE_PRODUCER)
				return -EACCES;
			r->first = ring->claim_pgoff + rf->index;
			writer = BATON_ROLE_PRODUCER;
		} else {
			return -EINVAL;
		}
	}
	r->writable = writer == rf->role;
	return 0;
}

/* One region per mmap() call, at its exact offset (pages.c does the rest). */
static int baton_ring_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct baton_ring_file *rf = file->private_data;
	struct baton_region r;
	int ret;

	ret = baton_ring_region(rf, vma->vm_pgoff, &r);
	if (ret)
		return ret;
	return baton_pages_mmap(&rf->ring->mem, vma, &r, &rf->ring->mms);
}

/* ---- park and wake ---- */

/*
 * One look at the indices for a parker at @expected: 0 when it need not
 * sleep, -EAGAIN when it must, or why it must return instead.
 */
static int baton_park_check(struct baton_ring *ring, u32 role, u64 expected)
{
	/* Before the index: see baton_ring_set_state(). */
	u32 state = smp_load_acquire(&ring->state);
	u64 tail, head, used;

	if (ring->mpsc) {
		if (role == BATON_ROLE_CONSUMER)
			return baton_mpsc_check_consumer(ring->mpsc, expected,
					state & BATON_STATE_PRODUCER_GONE);
		if (state & BATON_STATE_CONSUMER_GONE)
			return -EPIPE;
		return baton_mpsc_check_producer(ring->mpsc, expected);
	}

	if (role == BATON_ROLE_CONSUMER) {
		tail = READ_ONCE(*ring->tail);
		if (tail - expected > ring->slot_count)
			return -EPROTO;
		if (tail != expected)
			return 0;
		/* Drained and no producer: end of stream. */
		if (state & BATON_STATE_PRODUCER_GONE)
			return -EPIPE;
		return -EAGAIN;
	}

	/* Gone first: nobody reads the indices again, whatever they say. */
	if (state & BATON_STATE_CONSUMER_GONE)
		return -EPIPE;
	head = READ_ONCE(*ring->head);
	used = expected - head;
	if (used > ring->slot_count)
		return -EPROTO;
	if (used < ring->slot_count)
		return 0;
	return -EAGAIN;
}

/* Statistics: a park found the shared indices inconsistent. */
static void baton_ring_count_scribble(struct baton_ring *ring)
{
	spin_lock(&ring->lock);
	ring->scribbles++;
	spin_unlock(&ring->lock);
}

static void baton_ring_count(struct baton_ring *ring, __u64 *ctr)
{
	spin_lock(&ring->lock);
	baton_hdr_inc(ring, ctr);
	spin_unlock(&ring->lock);
}

/*
 * One park in progress (on the parker's stack): its entry on the side's
 * wait queue, and its arm. It is armed while @armed and @gen is the
 * side's generation; both change only under the side's wait-queue lock.
 */
struct baton_parker {
	struct wait_queue_entry wait;
	struct baton_ring *ring;
	struct baton_waiters *w;
	u32 role;
	bool armed;
	u64 gen;
	u64 expected;
};

/* Under the lock: is @p's arm still the one the word shows? */
static bool baton_parker_armed_locked(const struct baton_parker *p)
{
	return p->armed && p->gen == p->w->gen;
}

/*
 * Raise BATON_WAIT_PARKED for @p and make it visible to every peer before
 * the caller looks at the index again. The store is made under the
 * wait-queue lock, so no WAKE can take the flag down while it is in
 * flight; F and G then pair with the peer's E (models/park_wake.pml).
 */
static void baton_parker_arm(struct baton_parker *p)
{
	struct baton_waiters *w = p->w;

	spin_lock_irq(&w->wq.lock);
	if (!baton_parker_armed_locked(p)) {
		p->armed = true;
		p->gen = w->gen;
		w->armed++;
	}
	w->bits |= BATON_WAIT_PARKED;
	baton_waiters_publish(w);
	spin_unlock_irq(&w->wq.lock);
	/* F, matches E: the flag is globally visible before the IPIs. */
	smp_mb();
	/* G, matches E: see baton_barrier_peers(). */
	baton_barrier_peers(&p->ring->mms);
}

/* On the way out: our arm, if a WAKE has not taken it, goes. */
static void baton_parker_disarm(struct baton_parker *p)
{
	struct baton_waiters *w = p->w;

	spin_lock_irq(&w->wq.lock);
	if (baton_parker_armed_locked(p) && !--w->armed) {
		w->bits &= ~BATON_WAIT_PARKED;
		baton_waiters_publish(w);
	}
	p->armed = false;
	spin_unlock_irq(&w->wq.lock);
}

static bool baton_parker_still_armed(struct baton_parker *p)
{
	bool armed;

	spin_lock_irq(&p->w->wq.lock);
	armed = baton_parker_armed_locked(p);
	spin_unlock_irq(&p->w->wq.lock);
	return armed;
}

/*
 * The park entry's wake function, under the wait-queue lock. A WAKE
 * (@key set) that started a new generation leaves a parked MPSC producer
 * whose slot is still taken asleep and armed: its flag never went down
 * (the word is written once, at the end of the WAKE), so F and G still
 * cover it, and waking it would only make it re-arm with an IPI round.
 * Everyone else is dequeued and woken; its arm, if any, went with the
 * generation.
 */
static int baton_park_wake(struct wait_queue_entry *wait, unsigned int mode,
			   int sync, void *key)
{
	struct baton_parker *p = container_of(wait, struct baton_parker, wait);
	struct baton_waiters *w = p->w;
	int woke;

	if (key && w->waking && p->armed && p->gen + 1 == w->gen &&
	    p->ring->mpsc && p->role == BATON_ROLE_PRODUCER &&
	    baton_park_check(p->ring, p->role, p->expected) == -EAGAIN) {
		p->gen = w->gen;
		w->armed++;
		return 0;
	}
	woke = default_wake_function(wait, mode, sync, key);
	/*
	 * Last: once the parker's finish_wait() sees its entry off the queue
	 * it skips the lock and may leave the frame @p lives in
	 * (autoremove_wake_function()'s order). Today its disarm still takes
	 * this lock first; nothing here should depend on that.
	 */
	list_del_init_careful(&wait->entry);
	return woke;
}

/*
 * WAKE's work on the side it wakes, all under that side's wait-queue lock:
 * BATON_WAIT_PARKED goes down (a new generation; parkers that stay asleep
 * re-arm in baton_park_wake()), BATON_WAIT_POLL goes down, the parkers and
 * pollers are woken, and the word is written once. So the peer's next
 * publication sees the flag down and makes no WAKE until someone re-arms:
 * one WAKE per arm, not one per publication.
 */
static void baton_waiters_wake(struct baton_waiters *w, __poll_t events)
{
	unsigned long flags;

	spin_lock_irqsave(&w->wq.lock, flags);
	if (w->bits & BATON_WAIT_PARKED) {
		w->gen++;
		w->armed = 0;
		w->waking = true;
	}
	w->bits &= ~BATON_WAIT_POLL;
	__wake_up_locked_key(&w->wq, TASK_NORMAL, poll_to_key(events));
	w->waking = false;
	if (!w->armed)
		w->bits &= ~BATON_WAIT_PARKED;
	baton_waiters_publish(w);
	spin_unlock_irqrestore(&w->wq.lock, flags);
}

/*
 * Sleep until the check says otherwise: queue, re-check, and sleep only
 * while armed. A parker that a WAKE dequeued (its flag taken down) but
 * that must sleep on (another producer's ticket, a spurious wake) leaves
 * the queue, re-arms with F and G, and goes round again, so it never
 * sleeps with its flag down (models/park_wake.pml, VARIANT 1).
 */
static long baton_park_loop(struct baton_parker *p, u32 flags,
			    ktime_t deadline)
{
	struct baton_waiters *w = p->w;
	struct baton_ring *ring = p->ring;
	bool timed_out = false;
	long ret;

	for (;;) {
		long intr = prepare_to_wait_event(&w->wq, &p->wait,
						  TASK_INTERRUPTIBLE);
		bool has = flags & BATON_PARK_DEADLINE;
		bool brief = false;
		ktime_t until = deadline;

		/*
		 * Re-check after queueing: a WAKE that comes later finds us
		 * on the queue, one that came earlier stored its index before
		 * its H and its wait-queue lock, so this read sees it.
		 */
		ret = baton_park_check(ring, p->role, p->expected);
		if (ret != -EAGAIN && ret != BATON_MPSC_RECHECK)
			break;
		if (intr)
			return intr;
		if (timed_out)
			return -ETIMEDOUT;
		if (!baton_parker_still_armed(p)) {
			finish_wait(&w->wq, &p->wait);
			/*
			 * A peer's WAKEs can dequeue us faster than we get
			 * to sleep, and only a sleep that runs out noticed
			 * the deadline: the check above has run after it.
			 */
			if ((flags & BATON_PARK_DEADLINE) &&
			    ktime_compare(ktime_get(), deadline) >= 0)
				return -ETIMEDOUT;
			baton_parker_arm(p);
			baton_ring_count(ring, p->role == BATON_ROLE_CONSUMER ?
					 &ring->hdr->rearms_of_consumer :
					 &ring->hdr->rearms_of_producer);
			continue;
		}
		/*
		 * MPSC consumer: a live producer may be between its fetch_add
		 * and its claim (mpsc.c); nothing wakes us when it gets
		 * there, so look again soon.
		 */
		if (ret == BATON_MPSC_RECHECK) {
			ktime_t soon = ktime_add_ms(ktime_get(),
						    BATON_RECHECK_MS);

			if (!has || ktime_before(soon, deadline)) {
				until = soon;
				has = true;
				brief = true;
			}
		}
		/* 0: the deadline passed; check once more, then give up. */
		if (!schedule_hrtimeout_range(has ? &until : NULL,
					      current->timer_slack_ns,
					      HRTIMER_MODE_ABS) && !brief)
			timed_out = true;
	}
	return ret;
}

static long baton_ring_park(struct baton_ring_file *rf, void __user *uarg)
{
	struct baton_ring *ring = rf->ring;
	bool consumer = rf->role == BATON_ROLE_CONSUMER;
	struct baton_parker p = {
		.ring = ring,
		.w = baton_own_waiters(ring, rf->role),
		.role = rf->role,
	};
	struct baton_park k;
	ktime_t deadline;
	u32 usize;
	long ret;

	ret = baton_copy_in(&k, sizeof(k), BATON_PARK_SIZE_VER0, uarg, &usize);
	if (ret)
		return ret;
	if ((k.flags & ~BATON_PARK_DEADLINE) || k.reserved[0] || k.reserved[1])
		return -EINVAL;
	deadline = baton_user_deadline(k.deadline_ns);
	p.expected = k.expected;

	/* Nothing to wait for: spare the peers the IPI. */
	ret = baton_park_check(ring, rf->role, k.expected);
	if (ret == -EPROTO)
		baton_ring_count_scribble(ring);
	if (ret != -EAGAIN && ret != BATON_MPSC_RECHECK)
		return ret;

	/* A park: the ring was empty (full) when the call looked. */
	WRITE_ONCE(rf->parked, true);
	baton_ring_count(ring, consumer ? &ring->hdr->parks_empty :
					  &ring->hdr->parks_full);

	init_wait_entry(&p.wait, 0);
	p.wait.func = baton_park_wake;
	baton_parker_arm(&p);
	ret = baton_park_loop(&p, k.flags, deadline);
	finish_wait(&p.w->wq, &p.wait);
	/*
	 * No barrier: a stale flag seen by the peer only costs it a WAKE
	 * call; a peer that misses the clear is no worse off.
	 */
	baton_parker_disarm(&p);
	WRITE_ONCE(rf->parked, false);
	if (ret == -EPROTO)
		baton_ring_count_scribble(ring);
	return ret;
}

static long baton_ring_wake(struct baton_ring_file *rf, unsigned long arg)
{
	struct baton_ring *ring = rf->ring;
	bool producer = rf->role == BATON_ROLE_PRODUCER;

	if (arg)
		return -EINVAL;

	/*
	 * Counted before the wake-up: a woken parker that reads the counter
	 * at once must find this wake in it (ring_park saw 0 when a slow
	 * waker had woken it but not yet counted).
	 */
	baton_ring_count(ring, producer ? &ring->hdr->wakes_of_consumer :
					  &ring->hdr->wakes_of_producer);

	/*
	 * H, matches F and G: the caller's index store, made in user space
	 * before this call, is ordered before the wait-queue lock below, so
	 * a parker re-checking under that lock after us sees the new index,
	 * and one queued before us is woken. The kernel, not the caller,
	 * takes the flag down, under that lock (models/park_wake.pml: a
	 * user-space clear loses wakeups, VARIANT 2).
	 */
	smp_mb();
	baton_waiters_wake(baton_peer_waiters(ring, rf->role),
			   producer ? EPOLLIN | EPOLLRDNORM :
				      EPOLLOUT | EPOLLWRNORM);
	return 0;
}

static long baton_ring_info(struct baton_ring_file *rf, void __user *uarg)
{
	struct baton_ring *ring = rf->ring;
	struct baton_ring_info k;
	u32 usize;
	int ret;

	ret = baton_copy_in(&k, sizeof(k), BATON_RING_INFO_SIZE_VER0, uarg,
			    &usize);
	if (ret)
		return ret;
	if (k.flags)
		return -EINVAL;

	k.out_kind = ring->kind;
	k.out_role = rf->role;
	k.out_slot_count = ring->slot_count;
	k.out_slot_size = ring->slot_size;
	spin_lock(&ring->lock);
	k.out_producers = ring->producers;
	k.out_consumers = ring->consumers;
	spin_unlock(&ring->lock);
	/* Samples, reported as read: nothing here relies on them. */
	k.out_head = READ_ONCE(*ring->head);
	k.out_tail = READ_ONCE(*ring->tail);
	k.out_off = ring->off;
	return baton_copy_out(uarg, usize, &k, sizeof(k));
}

/*
 * Bind @pool (a reference the caller passes on) to @ring: 0 if it is
 * bound now or was already (the reference is then dropped), -ENOSPC when
 * BATON_RING_POOLS_MAX others are. Slots fill in order, once each, under
 * ring->lock; the free reads them without it.
 */
static int baton_ring_add_pool(struct baton_ring *ring,
			       struct baton_pool *pool)
{
	struct baton_pool *drop = pool;
	int ret = -ENOSPC;
	unsigned int i;

	spin_lock(&ring->lock);
	for (i = 0; i < BATON_RING_POOLS_MAX; i++) {
		if (ring->pools[i] == pool) {
			ret = 0;
			break;
		}
		if (!ring->pools[i]) {
			ring->pools[i] = pool;
			drop = NULL;
			ret = 0;
			break;
		}
	}
	spin_unlock(&ring->lock);
	/* Outside the spinlock: the last reference's free sleeps. */
	if (drop)
		baton_pool_unref(drop);
	return ret;
}

/*
 * BATON_RING_IOC_BIND_POOL, producers only: buffers of the pool behind
 * @k.pool_fd are sent through the ring, marked with its id. A consumer
 * cannot bind, so it cannot fill the slots against its producers.
 */
static long baton_ring_bind_pool(struct baton_ring_file *rf,
				 void __user *uarg)
{
	struct baton_ring *ring = rf->ring;
	struct baton_pool *pool;
	struct baton_ring_bind k;
	u32 usize;
	long ret;

	ret = baton_copy_in(&k, sizeof(k), BATON_RING_BIND_SIZE_VER0, uarg,
			    &usize);
	if (ret)
		return ret;
	if (k.flags || k.reserved)
		return -EINVAL;
	if (rf->role != BATON_ROLE_PRODUCER)
		return -EACCES;
	pool = baton_pool_fget(k.pool_fd);
	if (IS_ERR(pool))
		return PTR_ERR(pool);
	ret = baton_ring_add_pool(ring, pool);
	if (ret)
		return ret;
	k.out_ring_id = ring->id;
	return baton_copy_out(uarg, usize, &k, sizeof(k));
}

static long baton_ring_ioctl(struct file *file, unsigned int cmd,
			     unsigned long arg)
{
	struct baton_ring_file *rf = file->private_data;

	switch (cmd) {
	case BATON_RING_IOC_PARK:
		return baton_ring_park(rf, (void __user *)arg);
	case BATON_RING_IOC_WAKE:
		return baton_ring_wake(rf, arg);
	case BATON_RING_IOC_INFO:
		return baton_ring_info(rf, (void __user *)arg);
	case BATON_RING_IOC_BIND_POOL:
		return baton_ring_bind_pool(rf, (void __user *)arg);
	default:
		return -ENOTTY;
	}
}

/* ---- poll ---- */

/*
 * How many times poll reads a ring's indices that look inconsistent
 * before it says EPOLLERR: a moving ring gives a consistent pair at the
 * next read but for a thread preempted between two loads again and
 * again; a scribbled one never does.
 */
#define BATON_POLL_SAMPLES	8

/*
 * MPSC: the consumer is ready when the slot at its published head holds a
 * message or a tombstone (a dead producer's ticket is tombstoned here as
 * in park), a producer when the slot of the next ticket is free. Samples:
 * a producer's own ticket is only known once taken.
 *
 * A ticket a live producer may still be reserving (BATON_MPSC_RECHECK) is
 * decided once that producer writes its claim, and nothing wakes the
 * poller then: the producer may go on to wait for room, publishing
 * nothing, for as long as this consumer sleeps. So the kernel wakes the
 * consumer's pollers itself a moment later, and their next ->poll looks
 * again, as a park's brief sleep does (baton_park_loop()).
 */
static __poll_t baton_mpsc_ready(struct baton_ring *ring, u32 role, u32 state)
{
	int ret, tries;

	if (role == BATON_ROLE_CONSUMER) {
		bool gone = state & BATON_STATE_PRODUCER_GONE;
		u64 head = READ_ONCE(*ring->head);

		ret = baton_mpsc_check_consumer(ring->mpsc, head, gone);
		if (!ret)
			return EPOLLIN | EPOLLRDNORM;
		if (ret == -EPIPE)
			return EPOLLHUP;
		if (ret == BATON_MPSC_RECHECK)
			baton_later_arm(&ring->recheck, BATON_RECHECK_MS);
		/*
		 * The consumer is past this head, mid-release: readable, so
		 * that it looks from where it really is (a spurious EPOLLIN
		 * costs a look; a 0 here could cost the wake it waits for).
		 */
		if (ret == -EPROTO &&
		    baton_mpsc_released_ahead(ring->mpsc, head))
			return EPOLLIN | EPOLLRDNORM;
		return ret == -EPROTO ? EPOLLERR : 0;
	}
	if (state & BATON_STATE_CONSUMER_GONE)
		return EPOLLERR;
	/*
	 * Other producers may take tickets and the consumer free their
	 * slots between the tail read and its slot's: a slot a lap ahead
	 * says "-EPROTO" only while the tail stayed where it was read.
	 */
	for (tries = 1;; tries++) {
		u64 tail = READ_ONCE(*ring->tail);

		ret = baton_mpsc_check_producer(ring->mpsc, tail);
		if (ret != -EPROTO || tries == BATON_POLL_SAMPLES ||
		    READ_ONCE(*ring->tail) == tail)
			break;
	}
	if (!ret)
		return EPOLLOUT | EPOLLWRNORM;
	return ret == -EPROTO ? EPOLLERR : 0;
}

/*
 * An SPSC ring's fill as poll reports it: tail - head of a pair that
 * existed. The tail is read first, so the pair can be wrong only one
 * way: another thread of either side moved its index in between, the
 * producer publishing past the tail read and the consumer taking those
 * messages, so the head read is past the tail read. That ring is
 * moving, not scribbled: read again. A scribbled pair stays wrong.
 */
static u64 baton_ring_used(struct baton_ring *ring)
{
	int tries = 0;
	u64 tail, head;

	do {
		tail = READ_ONCE(*ring->tail);
		smp_rmb();	/* the head after the tail */
		head = READ_ONCE(*ring->head);
	} while ((s64)(tail - head) < 0 && ++tries < BATON_POLL_SAMPLES);
	return tail - head;
}

static __poll_t baton_ring_ready(struct baton_ring *ring, u32 role)
{
	/* Before the indices: see baton_ring_set_state(). */
	u32 state = smp_load_acquire(&ring->state);
	__poll_t mask = 0;
	u64 used;

	if (ring->mpsc)
		return baton_mpsc_ready(ring, role, state);
	used = baton_ring_used(ring);

	if (used > ring->slot_count)
		return EPOLLERR;	/* scribbled indices */

	if (role == BATON_ROLE_CONSUMER) {
		if (used)
			mask |= EPOLLIN | EPOLLRDNORM;
		else if (state & BATON_STATE_PRODUCER_GONE)
			mask |= EPOLLHUP;
		return mask;
	}
	if (used < ring->slot_count)
		mask |= EPOLLOUT | EPOLLWRNORM;
	if (state & BATON_STATE_CONSUMER_GONE)
		mask |= EPOLLERR;
	return mask;
}

/* An arm's F and G are done: pollers that find it need not pay them. */
static void baton_poll_covered(struct baton_waiters *w, u64 seq)
{
	spin_lock_irq(&w->wq.lock);
	if (w->poll_covered < seq)
		w->poll_covered = seq;
	spin_unlock_irq(&w->wq.lock);
}

/*
 * Raise BATON_WAIT_POLL for a side if it is down (in the kernel's copy or,
 * after baton_ring_poll_disarm(), in the word), then F and G as a park
 * does. Whatever the readiness: epoll (edge-triggered above all) calls
 * ->poll for the last time before it sleeps while the fd is still ready,
 * right after the WAKE that took the arm down, so an arm made only on a
 * not-ready poll would be missing for the next publication.
 *
 * A poller that finds the flag up is covered by it only once the arm that
 * raised it has paid its own F and G: until then the flag may still be in
 * that poller's store buffer, a publication may have missed it (E), and
 * this poller, reading the index now, would miss the publication too
 * (two MPSC producers polling for EPOLLOUT). So it pays F and G itself;
 * its G reaches the other poller's CPU as well, which drains that flag
 * (models/poll_pair_tso.pml).
 */
static void baton_poll_arm(struct baton_ring *ring, u32 role)
{
	struct baton_waiters *w = baton_own_waiters(ring, role);
	bool arm, fence;
	u64 seq;

	spin_lock_irq(&w->wq.lock);
	arm = !(w->bits & BATON_WAIT_POLL) ||
	      !(READ_ONCE(*w->word) & BATON_WAIT_POLL);
	if (arm) {
		w->bits |= BATON_WAIT_POLL;
		baton_waiters_publish(w);
		seq = ++w->poll_raised;
	} else {
		seq = w->poll_raised;
	}
	fence = arm || w->poll_covered < seq;
	spin_unlock_irq(&w->wq.lock);
	if (!fence)
		return;
	if (arm)
		baton_ring_count(ring, role == BATON_ROLE_CONSUMER ?
				 &ring->hdr->poll_arms_of_consumer :
				 &ring->hdr->poll_arms_of_producer);
	smp_mb();	/* F, matches E */
	baton_barrier_peers(&ring->mms);	/* G, matches E */
	if (arm)
		baton_poll_covered(w, seq);
}

/*
 * Wake once per arm: WAKE takes BATON_WAIT_POLL down when it wakes the
 * pollers (baton_waiters_wake()), and the ->poll that epoll (or poll(2))
 * makes after that wake, to learn the events, raises it again, paying F
 * and G then, before readiness is computed: a peer that moves its index
 * afterwards sees the flag. A poller that keeps up, draining between two
 * waits, so costs the peer one WAKE per wait, not one per publication.
 * The arm is separate from a park's (BATON_WAIT_PARKED), so a blocking
 * call that parks and returns never takes an epoll arm down.
 */
static __poll_t baton_ring_poll(struct file *file, poll_table *pt)
{
	struct baton_ring_file *rf = file->private_data;
	struct baton_ring *ring = rf->ring;

	poll_wait(file, &baton_own_waiters(ring, rf->role)->wq, pt);
	baton_poll_arm(ring, rf->role);
	return baton_ring_ready(ring, rf->role);
}

static const struct file_operations baton_ring_fops = {
	.owner		= THIS_MODULE,
	.release	= baton_ring_release,
	.unlocked_ioctl	= baton_ring_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.mmap		= baton_ring_mmap,
	.poll		= baton_ring_poll,
	.llseek		= noop_llseek,
};

/* ---- names, permissions and the registry ---- */

static int baton_check_geometry(u32 slot_count, u32 slot_size)
{
	if (slot_count < BATON_SLOTS_MIN || slot_count > BATON_SLOTS_MAX ||
	    !is_power_of_2(slot_count))
		return -EINVAL;
	if (slot_size < BATON_SLOT_SIZE_MIN ||
	    slot_size > BATON_SLOT_SIZE_MAX || !IS_ALIGNED(slot_size, 8))
		return -EINVAL;
	/* u32 * u32 cannot overflow u64. */
	if ((u64)slot_count * slot_size > BATON_RING_BYTES_MAX)
		return -EINVAL;
	return 0;
}

/* The ring named @name, with a reference for the caller, or NULL. */
static struct baton_ring *baton_ring_get(const char *name)
{
	struct baton_named *n = baton_names_get(&baton_rings, name);

	return n ? container_of(n, struct baton_ring, named) : NULL;
}

static void baton_ring_put_named(struct baton_named *n)
{
	baton_ring_put(container_of(n, struct baton_ring, named));
}

/* ---- statistics (netlink.c) ---- */

/*
 * Sampled, never trusted: the indices are read once each and only
 * reported. An SPSC ring never holds more than slot_count messages, so a
 * larger (or negative) difference is a scribble: counted, and occupancy
 * clamped. MPSC tickets may run ahead of the consumer by more than a lap
 * (producers wait on their slot), so only a tail behind the head counts.
 */
static u64 baton_ring_sample(struct baton_ring *ring, u64 head, u64 tail)
{
	u64 used = tail - head;

	lockdep_assert_held(&ring->lock);
	if ((s64)used < 0 || (!ring->mpsc && used > ring->slot_count)) {
		ring->scribbles++;
		return (s64)used < 0 ? 0 : ring->slot_count;
	}
	return min_t(u64, used, ring->slot_count);
}

static void baton_ring_stat_peer(struct baton_ring *ring,
				 struct baton_ring_file *rf,
				 struct baton_peer_stat *p)
{
	p->pid = get_pid(rf->pid);
	p->role = rf->role;
	p->index = ring->mpsc && rf->role == BATON_ROLE_PRODUCER ?
		   rf->index : -1;
	p->parked = READ_ONCE(rf->parked);
}

int baton_ring_stats(const struct baton_named *n, struct baton_ring_stats *st)
{
	struct baton_ring *ring = container_of(n, struct baton_ring, named);
	const struct baton_ring_hdr *hdr = ring->hdr;
	u32 max_peers = ring->max_producers + 1;
	struct baton_ring_file *rf;

	memset(st, 0, sizeof(*st));
	st->peers = kcalloc(max_peers, sizeof(*st->peers), GFP_KERNEL);
	if (!st->peers)
		return -ENOMEM;
	st->kind = ring->kind;
	st->slot_count = ring->slot_count;
	st->slot_size = ring->slot_size;
	st->max_producers = ring->max_producers;

	spin_lock(&ring->lock);
	st->state = ring->state;
	st->producers = ring->producers;
	st->consumers = ring->consumers;
	/* The kernel's own counters: written only under ring->lock. */
	st->parks_full = hdr->parks_full;
	st->parks_empty = hdr->parks_empty;
	st->wakes_of_producer = hdr->wakes_of_producer;
	st->wakes_of_consumer = hdr->wakes_of_consumer;
	st->producer_deaths = hdr->producer_deaths;
	st->consumer_deaths = hdr->consumer_deaths;
	/* At most max_producers + 1 files attach (EBUSY beyond). */
	list_for_each_entry(rf, &ring->files, node) {
		struct baton_peer_stat *p = &st->peers[st->nr_peers];

		if (WARN_ON_ONCE(st->nr_peers == max_peers))
			break;
		baton_ring_stat_peer(ring, rf, p);
		if (p->parked && rf->role == BATON_ROLE_PRODUCER)
			st->parked_producers++;
		else if (p->parked)
			st->parked_consumers++;
		st->nr_peers++;
	}
	st->head = READ_ONCE(*ring->head);
	st->tail = READ_ONCE(*ring->tail);
	st->occupancy = baton_ring_sample(ring, st->head, st->tail);
	st->scribbles = ring->scribbles;
	spin_unlock(&ring->lock);

	if (ring->mpsc) {
		const struct baton_mpsc_hdr *mh = (const void *)hdr +
						  ring->off.mpsc_hdr;

		/* Kernel-written (mpsc.c, under its lock), user read-only. */
		st->tombstones = READ_ONCE(mh->tombstones_written);
	}
	return 0;
}

/* ---- /dev/baton ioctls ---- */

int baton_ring_create(struct baton_ring_create *k, void __user *uarg,
		      u32 usize)
{
	struct baton_ring *ring;
	struct file *file;
	int fd, ret;

	if (k->flags || k->reserved[0] || k->reserved[1])
		return -EINVAL;
	if ((k->kind != BATON_RING_SPSC && k->kind != BATON_RING_MPSC) ||
	    !baton_role_valid(k->role))
		return -EINVAL;
	if (k->kind == BATON_RING_SPSC && k->max_producers > 1)
		return -EINVAL;
	if (k->kind == BATON_RING_MPSC &&
	    (!k->max_producers ||
	     k->max_producers > BATON_MPSC_PRODUCERS_MAX))
		return -EINVAL;
	if (k->mode & ~0777)
		return -EINVAL;
	ret = baton_check_name(k->name);
	if (ret)
		return ret;
	ret = baton_check_geometry(k->slot_count, k->slot_size);
	if (ret)
		return ret;

	/* Early and racy, to spare the allocation; registry_add() decides. */
	ring = baton_ring_get(k->name);
	if (ring) {
		baton_ring_put(ring);
		return -EEXIST;
	}

	ring = baton_ring_alloc(k);
	if (IS_ERR(ring))
		return PTR_ERR(ring);
	fd = baton_ring_file_new(ring, k->role, &file);
	if (fd < 0) {
		baton_ring_put(ring);
		return fd;
	}
	/* Cannot fail: no one else can reach the ring yet. */
	baton_ring_attach(file->private_data);

	k->out_fd = fd;
	k->out_reserved = 0;
	k->out_off = ring->off;
	ret = baton_copy_out(uarg, usize, k, sizeof(*k));
	/* Publish the name last: a failed create leaves nothing behind. */
	if (!ret)
		ret = baton_names_add(&baton_rings, &ring->named);
	if (ret) {
		baton_ring_file_abort(fd, file);
		return ret;
	}
	fd_install(fd, file);
	return 0;
}

int baton_ring_open(struct baton_ring_open *k, void __user *uarg, u32 usize)
{
	struct baton_ring *ring;
	struct file *file;
	int fd, ret;

	if (k->flags || k->reserved0 || k->reserved[0] || k->reserved[1])
		return -EINVAL;
	if (!baton_role_valid(k->role))
		return -EINVAL;
	ret = baton_check_name(k->name);
	if (ret)
		return ret;

	ring = baton_ring_get(k->name);
	if (!ring)
		return -ENOENT;
	ret = baton_owner_permission(&ring->named.owner,
				     k->role == BATON_ROLE_PRODUCER ?
				     MAY_WRITE : MAY_READ);
	if (ret)
		goto put_ring;
	fd = baton_ring_file_new(ring, k->role, &file);
	if (fd < 0) {
		ret = fd;
		goto put_ring;
	}

	k->out_fd = fd;
	k->out_kind = ring->kind;
	k->out_slot_count = ring->slot_count;
	k->out_slot_size = ring->slot_size;
	k->out_off = ring->off;
	ret = baton_copy_out(uarg, usize, k, sizeof(*k));
	/*
	 * Attach last, so a failed open neither clears nor sets the role's
	 * GONE bit that the peer may be watching.
	 */
	if (!ret)
		ret = baton_ring_attach(file->private_data);
	if (ret) {
		baton_ring_file_abort(fd, file);
		return ret;
	}
	fd_install(fd, file);
	return 0;

put_ring:
	baton_ring_put(ring);
	return ret;
}

int baton_ring_unlink(const struct baton_unlink *k)
{
	return baton_names_remove(&baton_rings, k);
}

/* Module exit: only the registry's references are left. */
void baton_registry_drain(void)
{
	baton_names_drain(&baton_rings, baton_ring_put_named);
}

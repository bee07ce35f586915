// SPDX-License-Identifier: MIT
/*
 * libbaton memfd backend of buffer pools: the pool file in /dev/shm, its
 * holder locks, and what the module does for kmod pools done here by the
 * holders themselves: repair after a dead holder, and decay.
 *
 * The file /dev/shm/baton-pool.<name> has the kmod pool's mmap layout as
 * file offsets (header page at 0, control region at hdr->ctl_mmap, data
 * at hdr->data_mmap), so pool.c maps and runs both the same way. Create
 * builds it unnamed (O_TMPFILE) and links the name last, as rings do.
 * Only the header and control pages are reserved at create; a buffer's
 * pages come on first touch and go back at decay. Openers read the header
 * once, check it against the layout its own classes give (pool_plan())
 * and the file size, and trust only that copy.
 *
 * Holders: holder k holds an OFD write lock on byte LOCK_HOLDER(k) of the
 * file, for as long as its fd lives (process death included), and marks
 * its claim page "attached" (MEMFD_ATTACHED). An attached index whose lock
 * nobody holds is a dead holder. Openers take the lowest free lock
 * (EMFILE when none), and move to another when that index is a dead
 * holder's that nobody can repair now (baton__pool_memfd_attach()).
 *
 * One repairer at a time: an OFD write lock on byte LOCK_REPAIR, taken
 * where the module takes pool->lock. Under it a holder:
 *  - repairs dead holders (repair_dead()): their claims are finished as
 *    the module finishes them at release (fill a push's entries whose
 *    ticket is known, release and requeue a pop's), and every buffer
 *    OWNED by one of them, or IDLE in its magazine, becomes ours and
 *    goes back to the free queue
 *    through our own magazine (baton__pool_drain(), after the lock);
 *    a buffer a dead holder held for decay (KERNEL with its index) is
 *    COLD, as the decay would have left it. SENT buffers stay for their
 *    receiver, as on kmod.
 *  - answers UNSTICK (baton__pool_memfd_unstick()) with the module's rule,
 *    "live" meaning "its holder lock is held", once it has repaired the
 *    dead (the module has finished their claims by then too);
 *  - decays (decay_class()), every decay_ms / 4 at most: the module's
 *    oldest-first pick and reserve window, with
 *    fallocate(FALLOC_FL_PUNCH_HOLE), which unmaps the range from every
 *    holder's mapping and frees its pages; the buffer is KERNEL (with our
 *    index + 1) meanwhile, so an allocator that popped it waits;
 *  - reaps idle magazines (idle_reap()): the pages of buffers IDLE in a
 *    holder's magazine, unchanged for about decay_ms, with the reap word
 *    set and membarrier() as the module's IPI (Y13).
 * Nobody waits for a holder stopped with the lock held (SIGSTOP, a
 * debugger, a frozen cgroup) past LOCK_STUCK_MS: allocations and UNSTICK
 * only try it, an opener takes an index no dead holder left unrepaired,
 * and a closer leaves as a death does, for the next repair.
 * A repair (and an UNSTICK) wakes allocators parked on an empty class,
 * which sleep on a futex on the class's wakes word, in slices of 5 ms
 * whose ends look again (and so repair), as the module's kick does
 * after a release (pool.c: baton_pool_alloc_wait()).
 * A repair runs at open (when the lock is free), when an allocation
 * finds its class empty (at most once a millisecond), while a wait for a
 * queue entry or a decaying buffer lasts, and from the slow paths of
 * allocation and free (refill and flush) every decay_ms / 4 (100 ms
 * without decay). The difference from kmod: nothing runs while every
 * holder sleeps. A dead holder's buffers come
 * back when another holder next reaches a slow path, and an idle pool's
 * pages stay until a holder next allocates or frees past its magazine
 * (Documentation/pool.rst).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pool_internal.h"

#define SHM_DIR		"/dev/shm"
#define SHM_PREFIX	"baton-pool."
#define PAGE		4096ULL

#define LOCK_REPAIR	0
#define LOCK_HOLDER(k)	(16 + (off_t)(k))

/*
 * In each claim page, past struct baton_pool_claim and the life word
 * (BATON_POOL_CLAIM_LIFE, 8 bytes at 2048): this index is in use. It
 * shared the life word's bytes before, so every holder of an index had
 * the same life, which the fan-out's check relies on to differ.
 */
#define MEMFD_ATTACHED	(BATON_POOL_CLAIM_LIFE + 8)

#define DATA_MAX	(1ULL << 38)	/* kmod's bound: E2BIG past it */
#define WINDOW		4		/* decay ticks a reserve spans */
#define IDLE_REPAIR_MS	100		/* repair period without decay */
#define LOCK_STUCK_MS	10		/* a repair lock held longer: stopped */
#define SETTLE_TRIES	2000		/* yields to let a live taker finish */
#define WATCH_MS	100		/* a handle looks at its rings' files */

/* The backend's shared words, in the header page after the header. */
struct pool_words {
	uint64_t next_ms;		/* when the next maintenance is due */
	uint64_t ticks;
	uint32_t min_free[BATON_POOL_CLASSES_MAX][WINDOW];
	/*
	 * Y13: non-zero while a holder's decay gives back pages of IDLE
	 * buffers (idle_reap()); the value is that reap's own, from
	 * reap_seq, so that a holder clearing the word of a dead reaper
	 * (baton__pool_memfd_reap_check()) never clears a later one's.
	 */
	uint64_t reap;
	uint64_t reap_seq;
};

_Static_assert(sizeof(struct baton_pool_hdr) <= BATON__POOL_MEMFD_WORDS,
	       "header words");
_Static_assert(BATON__POOL_MEMFD_WORDS + sizeof(struct pool_words) <= PAGE,
	       "pool words");
_Static_assert(sizeof(struct baton_pool_claim) <= BATON_POOL_CLAIM_LIFE,
	       "claim");

static struct pool_words *words(const struct baton_pool *p)
{
	return (struct pool_words *)((uint8_t *)p->hdr +
				     BATON__POOL_MEMFD_WORDS);
}

/* The counters live in the header page, read-write on memfd. */
static void count(const __u64 *ctr, uint64_t n)
{
	__atomic_fetch_add((__u64 *)ctr, n, __ATOMIC_RELAXED);
}

static int path_of(char *buf, size_t len, const char *name)
{
	int ret = baton__name_valid(name);

	if (ret)
		return ret;
	snprintf(buf, len, "%s/%s%s", SHM_DIR, SHM_PREFIX, name);
	return 0;
}

/* ---- the layout: the module's rules, so both backends agree ---- */

static uint64_t page_align(uint64_t n)
{
	return (n + PAGE - 1) & ~(PAGE - 1);
}

static uint32_t qcap_of(uint32_t count)
{
	uint32_t q = 4;

	while (q < 2 * count)
		q <<= 1;
	return q;
}

/* struct baton_pool_create's rules: EINVAL, E2BIG (kmod: baton_pool_check). */
static int create_check(const struct baton_pool_create *k)
{
	uint64_t data = 0;
	uint32_t i;

	if (k->flags || k->reserved0 || k->reserved[0] || k->reserved[1] ||
	    (k->mode & ~0777U) || !k->nr_classes ||
	    k->nr_classes > BATON_POOL_CLASSES_MAX || !k->max_holders ||
	    k->max_holders > BATON_POOL_HOLDERS_MAX)
		return -EINVAL;
	if (k->decay_ms && (k->decay_ms < BATON_POOL_DECAY_MIN_MS ||
			    k->decay_ms > BATON_POOL_DECAY_MAX_MS))
		return -EINVAL;
	for (i = k->nr_classes; i < BATON_POOL_CLASSES_MAX; i++)
		if (k->classes[i].buf_shift || k->classes[i].count)
			return -EINVAL;
	for (i = 0; i < k->nr_classes; i++) {
		const struct baton_pool_class *c = &k->classes[i];

		if (c->buf_shift < BATON_POOL_SHIFT_MIN ||
		    c->buf_shift > BATON_POOL_SHIFT_MAX || !c->count ||
		    c->count > BATON_POOL_COUNT_MAX || k->keep > c->count ||
		    (i && c->buf_shift <= k->classes[i - 1].buf_shift))
			return -EINVAL;
		data += (uint64_t)c->count << c->buf_shift;
	}
	return data > DATA_MAX ? -E2BIG : 0;
}

/* The header a pool of these classes has (kmod: baton_pool_plan()). */
static void pool_plan(struct baton_pool_hdr *h, uint32_t nr_classes,
		      const struct baton_pool_class *classes,
		      uint32_t max_holders)
{
	uint64_t ctl = 0, data = 0;
	uint32_t i;

	for (i = 0; i < nr_classes; i++) {
		struct baton_pool_class_layout *l = &h->classes[i];

		l->buf_shift = classes[i].buf_shift;
		l->count = classes[i].count;
		l->qcap = qcap_of(l->count);
		l->ctl_off = ctl;
		l->data_off = data;
		ctl += page_align(BATON_POOL_Q_ENTRIES + (uint64_t)l->qcap * 16 +
				  (uint64_t)l->count * 16);
		data += (uint64_t)l->count << l->buf_shift;
	}
	h->magic = BATON__POOL_MEMFD_MAGIC;
	h->abi_version = BATON_ABI_VERSION;
	h->nr_classes = nr_classes;
	h->max_holders = max_holders;
	h->ctl_mmap = PAGE;
	h->ctl_size = ctl + (uint64_t)max_holders * PAGE;
	h->claim_off = ctl;
	h->data_mmap = PAGE + h->ctl_size;
	h->data_size = data;
}

/* Does header @h describe exactly the layout its classes give? */
static int plan_matches(const struct baton_pool_hdr *h)
{
	struct baton_pool_class cl[BATON_POOL_CLASSES_MAX];
	struct baton_pool_hdr want;
	uint32_t i;

	if (!baton__pool_geometry_valid(h, BATON__POOL_MEMFD_MAGIC, 0))
		return 0;
	memset(&want, 0, sizeof(want));
	for (i = 0; i < h->nr_classes; i++) {
		cl[i].buf_shift = h->classes[i].buf_shift;
		cl[i].count = h->classes[i].count;
		if (h->keep > cl[i].count)
			return 0;
	}
	pool_plan(&want, h->nr_classes, cl, h->max_holders);
	return !memcmp(want.classes, h->classes, sizeof(want.classes)) &&
	       want.ctl_size == h->ctl_size && want.data_size == h->data_size &&
	       want.claim_off == h->claim_off &&
	       (!h->decay_ms || (h->decay_ms >= BATON_POOL_DECAY_MIN_MS &&
				 h->decay_ms <= BATON_POOL_DECAY_MAX_MS));
}

/* Nobody can see the file yet: plain stores. Every buffer FREE, queued. */
static void init_control(uint8_t *map, const struct baton_pool_hdr *h)
{
	struct pool_words *w = (struct pool_words *)(map +
						     BATON__POOL_MEMFD_WORDS);
	uint8_t *ctl = map + PAGE;
	uint32_t i, j;

	memcpy(map, h, sizeof(*h));
	for (i = 0; i < h->max_holders; i++) {
		struct baton_pool_claim *cl =
			(struct baton_pool_claim *)(ctl + h->claim_off + i * PAGE);

		cl->floor = BATON_POOL_NO_TICKET;
		cl->ticket = BATON_POOL_NO_TICKET;
	}
	for (i = 0; i < h->nr_classes; i++) {
		const struct baton_pool_class_layout *l = &h->classes[i];
		uint8_t *blk = ctl + l->ctl_off;
		struct baton_pool_qent *q =
			(struct baton_pool_qent *)(blk + BATON_POOL_Q_ENTRIES);
		struct baton_pool_desc *d =
			(struct baton_pool_desc *)(q + l->qcap);

		for (j = 0; j < l->qcap; j++)
			q[j].seq = j < l->count ? j + 1 : j;
		for (j = 0; j < l->count; j++) {
			q[j].value = BATON_POOL_ENTRY(1, j);
			d[j].state = BATON_POOL_STATE(1, BATON_POOL_FREE, 0);
		}
		*(uint64_t *)(blk + BATON_POOL_Q_TAIL) = l->count;
		((struct baton_pool_cold *)(blk + BATON_POOL_Q_COLD))->low_water =
			l->count;
		for (j = 0; j < WINDOW; j++)
			w->min_free[i][j] = l->count;
	}
}

/* ---- locks ---- */

static int lock_byte(int fd, off_t at, int cmd, short type)
{
	struct flock fl = {
		.l_type = type,
		.l_whence = SEEK_SET,
		.l_start = at,
		.l_len = 1,
	};

	while (fcntl(fd, cmd, &fl))
		if (errno != EINTR)
			return -errno;
	return 0;
}

static int try_lock(int fd, off_t at)
{
	return lock_byte(fd, at, F_OFD_SETLK, F_WRLCK);
}

static void unlock(int fd, off_t at)
{
	lock_byte(fd, at, F_OFD_SETLK, F_UNLCK);
}

/* Is @at locked by another open file description than ours? */
static int held_by_other(int fd, off_t at)
{
	struct flock fl = {
		.l_type = F_WRLCK,
		.l_whence = SEEK_SET,
		.l_start = at,
		.l_len = 1,
	};

	if (fcntl(fd, F_OFD_GETLK, &fl))
		return 1;	/* cannot tell: count it live */
	return fl.l_type != F_UNLCK;
}

/*
 * The repair lock, tried once (since 2.10.1 nobody waits on it for good:
 * attach and detach try again for up to LOCK_STUCK_MS, not past a holder
 * stopped with it), with thread cancellation off while it is held: a
 * thread cancelled at a cancellation point inside the section would leave
 * the byte locked by an open file description that lives on with the
 * handle, and every other holder's repair waiting for good. 0 with *@cs
 * the state repair_unlock() restores, or -errno (-EAGAIN or -EACCES:
 * held).
 */
static int repair_lock(struct baton_pool *p, int *cs)
{
	int ret;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, cs);
	ret = lock_byte(p->fd, LOCK_REPAIR, F_OFD_SETLK, F_WRLCK);
	if (ret)
		pthread_setcancelstate(*cs, NULL);
	return ret;
}

static void repair_unlock(struct baton_pool *p, int cs)
{
	unlock(p->fd, LOCK_REPAIR);
	pthread_setcancelstate(cs, NULL);
}

/* ---- create, open, unlink ---- */

/* No room for the whole pool in /dev/shm now: ENOSPC at create, not a
 * SIGBUS at the first touch of a buffer. Room can still run out later. */
static int room_for(uint64_t bytes)
{
	struct statvfs sv;

	if (statvfs(SHM_DIR, &sv))
		return -errno;
	return bytes > (uint64_t)sv.f_bavail * sv.f_frsize ? -ENOSPC : 0;
}

static int build_file(int fd, const struct baton_pool_create *k,
		      const struct baton_pool_hdr *h)
{
	uint64_t ctl_end = PAGE + h->ctl_size;
	void *map;
	int ret;

	if (fchmod(fd, k->mode))
		return -errno;
	if (ftruncate(fd, (off_t)(ctl_end + h->data_size)))
		return -errno;
	ret = baton__shm_reserve(fd, ctl_end);
	if (ret)
		return ret;
	map = mmap(NULL, ctl_end, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	init_control(map, h);
	munmap(map, ctl_end);
	/* Holder 0 is ours before the name exists. */
	return try_lock(fd, LOCK_HOLDER(0));
}

int baton__pool_memfd_create(struct baton_pool_create *k)
{
	char path[sizeof(SHM_DIR) + sizeof(SHM_PREFIX) + BATON_NAME_MAX];
	struct baton_pool_hdr h;
	int fd, ret;

	ret = create_check(k);
	if (ret)
		return ret;
	ret = path_of(path, sizeof(path), k->name);
	if (ret)
		return ret;
	memset(&h, 0, sizeof(h));
	pool_plan(&h, k->nr_classes, k->classes, k->max_holders);
	h.decay_ms = k->decay_ms;
	h.keep = k->keep;
	ret = room_for(PAGE + h.ctl_size + h.data_size);
	if (ret)
		return ret;
	fd = open(SHM_DIR, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno == ENOENT ? -ENODEV : -errno;
	ret = build_file(fd, k, &h);
	if (!ret)
		ret = baton__shm_link(fd, path);
	if (ret) {
		close(fd);
		return ret;
	}
	k->out_fd = fd;
	k->out_holder = 0;
	return 0;
}

/* Read the header once and check it against its own classes and the file. */
/*
 * A header copy: exactly the layout its classes give, in a file that long.
 * Asked of check_file()'s read and of the copy pool_map() takes from the
 * mapping, the one every pointer is computed from: any holder can rewrite
 * the header between the two reads, so the first only picks a holder
 * index.
 */
int baton__pool_memfd_geometry_ok(int fd, const struct baton_pool_hdr *g)
{
	struct stat st;

	return !fstat(fd, &st) && plan_matches(g) &&
	       (uint64_t)st.st_size >= g->data_mmap + g->data_size;
}

static int check_file(int fd, uint32_t *max_holders)
{
	struct baton_pool_hdr h;
	struct stat st;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    !baton__pool_memfd_geometry_ok(fd, &h))
		return -EPROTO;
	*max_holders = h.max_holders;
	return 0;
}

int baton__pool_memfd_open(const char *name, int *fd, uint32_t *holder)
{
	char path[sizeof(SHM_DIR) + sizeof(SHM_PREFIX) + BATON_NAME_MAX];
	uint32_t max, k;
	int ret;

	ret = path_of(path, sizeof(path), name);
	if (ret)
		return ret;
	*fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (*fd < 0)
		return -errno;
	ret = check_file(*fd, &max);
	for (k = 0; !ret && k < max; k++)
		if (!try_lock(*fd, LOCK_HOLDER(k)))
			break;
	if (!ret && k == max)
		ret = -EMFILE;
	if (ret) {
		close(*fd);
		return ret;
	}
	*holder = k;
	return 0;
}

int baton__pool_memfd_unlink(const char *name)
{
	char path[sizeof(SHM_DIR) + sizeof(SHM_PREFIX) + BATON_NAME_MAX];
	int ret = path_of(path, sizeof(path), name);

	if (ret)
		return ret;
	if (unlink(path))
		return errno == EPERM ? -EACCES : -errno;
	return 0;
}

/* ---- the claims of dead holders (the module's rules, kmod/pool.c) ---- */

static struct baton_pool_claim *claim_of(const struct baton_pool *p, uint32_t k)
{
	return (struct baton_pool_claim *)(p->ctl + p->geo.claim_off +
					   (uint64_t)k * PAGE);
}

static uint32_t *attached_word(const struct baton_pool *p, uint32_t k)
{
	return (uint32_t *)((uint8_t *)claim_of(p, k) + MEMFD_ATTACHED);
}

/*
 * Index @k's life word (uapi: BATON_POOL_CLAIM_LIFE; kmod:
 * baton_pool_life_begin/_end()). Written by the holder of the index's
 * lock: its holder at attach (with or without the repair lock), or a
 * repairer of its dead holder. The end is followed by a full barrier,
 * before the walk of the descriptors (Y8).
 */
static uint64_t *life_word(const struct baton_pool *p, uint32_t k)
{
	return (uint64_t *)((uint8_t *)claim_of(p, k) + BATON_POOL_CLAIM_LIFE);
}

static void life_begin(const struct baton_pool *p, uint32_t k)
{
	uint64_t *w = life_word(p, k);

	__atomic_store_n(w, (__atomic_load_n(w, __ATOMIC_RELAXED) | 1) + 2,
			 __ATOMIC_RELEASE);
}

static void life_end(const struct baton_pool *p, uint32_t k)
{
	uint64_t *w = life_word(p, k), v = __atomic_load_n(w, __ATOMIC_RELAXED);

	if (v & 1)
		__atomic_store_n(w, v + 1, __ATOMIC_RELAXED);
	baton__full_fence();
}

static void claim_reset(const struct baton_pool *p, uint32_t k)
{
	struct baton_pool_claim *cl = claim_of(p, k);

	__atomic_store_n(&cl->op, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&cl->n, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&cl->ticket, BATON_POOL_NO_TICKET, __ATOMIC_RELEASE);
	__atomic_store_n(&cl->floor, BATON_POOL_NO_TICKET, __ATOMIC_RELEASE);
}

/* A live holder: ourselves, or an attached index whose lock is held. */
static int holder_live(const struct baton_pool *p, uint32_t k)
{
	if (k == p->f.holder)
		return 1;
	if (!__atomic_load_n(attached_word(p, k), __ATOMIC_ACQUIRE))
		return 0;
	return held_by_other(p->fd, LOCK_HOLDER(k));
}

/* Holder @k is in @dead (bit k), a repair's set; NULL: none is. */
static int in_dead(const uint64_t *dead, uint32_t k)
{
	return dead && dead[k / 64] >> (k % 64) & 1;
}

/*
 * May a live holder hold ticket @c of class @cls for @op? (kmod:
 * baton_pool_live_may_hold(); Y5: the caller loaded the tail or head
 * with acquire before.) The holders a repair is finishing (@dead) are
 * not live, ours included when we repair the index we just took: its
 * claim is the dead holder's (the module drops a dead holder from its
 * table before it resolves the claim).
 */
static int live_may_hold(const struct baton_pool *p, uint32_t op, uint32_t cls,
			 uint64_t c, const uint64_t *dead)
{
	uint32_t i;

	for (i = 0; i < p->geo.max_holders; i++) {
		struct baton_pool_claim *cl = claim_of(p, i);
		uint64_t t, floor;
		uint32_t n;

		if (in_dead(dead, i) ||
		    __atomic_load_n(&cl->op, __ATOMIC_ACQUIRE) != op ||
		    __atomic_load_n(&cl->cls, __ATOMIC_RELAXED) != cls ||
		    !holder_live(p, i))
			continue;
		t = __atomic_load_n(&cl->ticket, __ATOMIC_ACQUIRE);
		n = __atomic_load_n(&cl->n, __ATOMIC_RELAXED);
		floor = __atomic_load_n(&cl->floor, __ATOMIC_RELAXED);
		if (t != BATON_POOL_NO_TICKET && c >= t && c - t < n)
			return 1;
		if (t == BATON_POOL_NO_TICKET && floor <= c)
			return 1;
	}
	return 0;
}

/*
 * Make a buffer a dead taker removed from the queue but never took ours
 * (FREE with the entry's generation, on no queue), to be freed again.
 */
static void requeue(struct baton_pool *p, uint32_t cls, uint64_t v)
{
	struct baton_pool_cls *c = &p->f.cls[cls];
	uint64_t index = v & 0xffffffffu, s;
	uint32_t gen = (uint32_t)(v >> 32);

	if (v == BATON_POOL_NO_INDEX || index >= c->count || !gen)
		return;
	s = BATON_POOL_STATE(gen, BATON_POOL_FREE, 0);
	/* Y4: from the exact value. */
	if (!__atomic_compare_exchange_n(
		    &c->desc[index].state, &s,
		    BATON_POOL_STATE(baton__pool_next_gen(gen), BATON_POOL_OWNED,
				     p->f.holder + 1), 0,
		    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	baton__pool_adopt_later(p, cls, (uint32_t)index);
	count(&p->hdr->repaired, 1);
}

/*
 * Release entry of ticket @t (taken, never released) and requeue it.
 * The buffer is taken first, the entry released after: a repairer that
 * dies between the two leaves either the entry unreleased with the
 * buffer FREE (the next repair does both again) or the buffer OWNED by
 * itself (its own repair's walk returns it; the entry's second release
 * finds the buffer taken and only releases). The other order left, for a
 * repairer killed between them, a FREE buffer on no queue whose entry no
 * repair looks at again: lost until the pool went away.
 */
static void release_entry(struct baton_pool *p, uint32_t cls, uint64_t t)
{
	struct baton_pool_cls *c = &p->f.cls[cls];
	struct baton_pool_qent *e = &c->q[t & (c->qcap - 1)];
	uint64_t v;

	/* Y3: the value is read after the seq says it is there... */
	if (__atomic_load_n(&e->seq, __ATOMIC_ACQUIRE) != t + 1)
		return;
	v = __atomic_load_n(&e->value, __ATOMIC_RELAXED);
	requeue(p, cls, v);
	/* ...and before the entry is the next lap's (after the take). */
	__atomic_store_n(&e->seq, t + c->qcap, __ATOMIC_RELEASE);
	count(&p->hdr->repaired, 1);
}

/*
 * Publish @v at ticket @t if its entry is still unpublished: only a value
 * whose buffer is FREE with that generation, or OWNED by the dead @dead
 * (+1; made FREE here so the walk does not take it too); else a hole.
 */
static void fill(struct baton_pool *p, uint32_t cls, uint64_t t, uint64_t v,
		 uint32_t dead)
{
	struct baton_pool_cls *c = &p->f.cls[cls];
	struct baton_pool_qent *e = &c->q[t & (c->qcap - 1)];
	uint64_t index = v & 0xffffffffu;
	uint32_t gen = (uint32_t)(v >> 32);

	if (__atomic_load_n(&e->seq, __ATOMIC_ACQUIRE) != t)
		return;
	if (v != BATON_POOL_NO_INDEX && index < c->count && gen) {
		struct baton_pool_desc *d = &c->desc[index];
		uint64_t free = BATON_POOL_STATE(gen, BATON_POOL_FREE, 0);
		uint64_t s = __atomic_load_n(&d->state, __ATOMIC_ACQUIRE);

		/*
		 * OWNED or IDLE (its magazine's) by the dead flusher, as the
		 * module's fill. Not being punched: a reap holds the repair
		 * lock too (Y13).
		 */
		if (dead && (s == BATON_POOL_STATE(gen, BATON_POOL_OWNED, dead) ||
			     s == BATON_POOL_STATE(gen, BATON_POOL_IDLE, dead))) {
			__atomic_store_n(&d->aux, baton__pool_coarse_ms(),
					 __ATOMIC_RELAXED);
			if (__atomic_compare_exchange_n(&d->state, &s, free, 0,
							__ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE))
				s = free;
		}
		if (s != free)
			v = BATON_POOL_NO_INDEX;
	} else {
		v = BATON_POOL_NO_INDEX;
	}
	__atomic_store_n(&e->value, v, __ATOMIC_RELAXED);
	/* Y1: the descriptor and the value before the publication. */
	__atomic_store_n(&e->seq, t + 1, __ATOMIC_RELEASE);
	count(&p->hdr->repaired, 1);
}

/*
 * A dead refill that may have moved the head from @floor by @n without
 * saying so (kmod: baton_pool_resolve_one()). 1 while an entry may
 * still be a live holder's.
 */
static int resolve_pop(struct baton_pool *p, uint32_t cls, uint64_t floor,
		       uint32_t n, const uint64_t *dead)
{
	struct baton_pool_cls *c = &p->f.cls[cls];
	uint64_t head = __atomic_load_n(c->head, __ATOMIC_ACQUIRE);
	int pending = 0;
	uint32_t i;

	if (head < floor + n)
		return 0;	/* its compare-and-swap failed */
	for (i = 0; i < n; i++) {
		struct baton_pool_qent *e = &c->q[(floor + i) & (c->qcap - 1)];

		if (__atomic_load_n(&e->seq, __ATOMIC_ACQUIRE) != floor + i + 1)
			continue;
		if (live_may_hold(p, BATON_POOL_CLAIM_POP, cls, floor + i, dead))
			pending = 1;
		else
			release_entry(p, cls, floor + i);
	}
	return pending;
}

/*
 * Finish what dead holder @k's claim says it was doing (@dead: every
 * holder this repair finishes). 1 if a refill's entries may still be a
 * live taker's after a while: the claim stays, and the next repair tries
 * again.
 */
static int finish_claim(struct baton_pool *p, uint32_t k, const uint64_t *dead)
{
	struct baton_pool_claim *cl = claim_of(p, k);
	uint32_t op = __atomic_load_n(&cl->op, __ATOMIC_ACQUIRE);
	uint32_t cls = __atomic_load_n(&cl->cls, __ATOMIC_RELAXED);
	uint32_t n = __atomic_load_n(&cl->n, __ATOMIC_RELAXED), i, tries;
	uint64_t t = __atomic_load_n(&cl->ticket, __ATOMIC_ACQUIRE);
	uint64_t floor = __atomic_load_n(&cl->floor, __ATOMIC_RELAXED);

	if (!op || (t == BATON_POOL_NO_TICKET && floor == BATON_POOL_NO_TICKET))
		return 0;
	if (cls >= p->geo.nr_classes || !n || n > BATON_POOL_CLAIM_MAX ||
	    (op != BATON_POOL_CLAIM_PUSH && op != BATON_POOL_CLAIM_POP)) {
		count(&p->hdr->bad_words, 1);
		return 0;
	}
	if (t == BATON_POOL_NO_TICKET) {
		/* A push's hole is UNSTICK's; its buffers are still its own. */
		if (op == BATON_POOL_CLAIM_PUSH)
			return 0;
		for (tries = 0; tries < SETTLE_TRIES; tries++) {
			if (!resolve_pop(p, cls, floor, n, dead))
				return 0;
			sched_yield();
		}
		return 1;
	}
	for (i = 0; i < n; i++) {
		uint64_t v = __atomic_load_n(&cl->entry[i], __ATOMIC_RELAXED);

		if (op == BATON_POOL_CLAIM_PUSH)
			fill(p, cls, t + i, v, k + 1);
		else if (__atomic_load_n(&p->f.cls[cls].q[(t + i) &
						       (p->f.cls[cls].qcap - 1)].seq,
					 __ATOMIC_ACQUIRE) == t + i + 1)
			release_entry(p, cls, t + i);
		else
			requeue(p, cls, v);
	}
	return 0;
}

/*
 * A SHARED buffer seen by a repair of the holders in @dead (bit k: holder
 * k): clear their bits in its readers' mask. True when no reader is left
 * (kmod: baton_pool_unshare(), which has the argument).
 */
static int drop_dead_readers(struct baton_pool_desc *d, uint64_t s, const uint64_t *dead)
{
	uint64_t bits = (uint32_t)dead[0], a;
	int tries;

	/* Y8: acquire, after the acquire load of SHARED. */
	a = __atomic_load_n(&d->aux, __ATOMIC_ACQUIRE);
	for (tries = 0; tries < 64; tries++) {
		if ((uint32_t)(a >> 32) != BATON_POOL_S_GEN(s))
			return 0;	/* reused since, or scribbled */
		if (!(a & bits))
			return !(uint32_t)a;
		if (__atomic_compare_exchange_n(&d->aux, &a, a & ~bits, 0,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return !(uint32_t)(a & ~bits);
	}
	return 0;
}

/*
 * A buffer a dead holder held for decay (KERNEL with its index): COLD,
 * as the decay would have left it, whether or not its pages went. Not
 * FREE: its queue entry may be gone with a taker that popped it and died
 * too (finish_claim() leaves a KERNEL buffer alone), and a FREE buffer
 * with no entry is reachable by nobody. COLD needs none: aux = the tail
 * now, past any entry it still has (Y10), then COLD from the exact value
 * read (Y4), and the takers' hint counts it.
 */
static uint32_t cold_from_dead_decay(struct baton_pool_cls *c,
				     struct baton_pool_desc *d, uint64_t s)
{
	__atomic_store_n(&d->aux, __atomic_load_n(c->tail, __ATOMIC_ACQUIRE),
			 __ATOMIC_RELAXED);
	if (!__atomic_compare_exchange_n(
		    &d->state, &s,
		    BATON_POOL_STATE(BATON_POOL_S_GEN(s), BATON_POOL_COLD, 0),
		    0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return 0;
	__atomic_fetch_add(&baton__pool_cold_of(c)->cold, 1, __ATOMIC_RELAXED);
	return 1;
}

/*
 * Buffer @index of class @cls, read as @s: ours under the next generation
 * if it still is @s (Y4: the compare-and-swap from the value read, so
 * exactly once), for baton__pool_drain(). 1 if it is on the adopt list.
 */
static uint64_t take_to_adopt(struct baton_pool *p, uint32_t cls,
			      uint32_t index, uint64_t s)
{
	struct baton_pool_desc *d = &p->f.cls[cls].desc[index];

	if (!__atomic_compare_exchange_n(
		    &d->state, &s,
		    BATON_POOL_STATE(baton__pool_next_gen(BATON_POOL_S_GEN(s)),
				     BATON_POOL_OWNED, p->f.holder + 1),
		    0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return 0;
	return !baton__pool_adopt_later(p, cls, index);
}

/*
 * Every buffer a holder in @dead (bit k: holder k) owned becomes ours for
 * baton__pool_drain(), every one it held for decay is COLD, and its
 * part of every SHARED one is given up (a buffer no reader is left on
 * becomes ours too). Returns how many became ours; *@cold counts those
 * made COLD.
 */
static uint64_t reclaim_walk(struct baton_pool *p, const uint64_t *dead,
			     uint64_t *cold)
{
	uint64_t n = 0;
	uint32_t i, j;

	for (i = 0; i < p->geo.nr_classes; i++) {
		struct baton_pool_cls *c = &p->f.cls[i];

		for (j = 0; j < c->count; j++) {
			struct baton_pool_desc *d = &c->desc[j];
			uint64_t s = __atomic_load_n(&d->state, __ATOMIC_ACQUIRE);
			uint32_t h = BATON_POOL_S_HOLDER(s), kind;

			kind = BATON_POOL_S_KIND(s);
			if (kind == BATON_POOL_SHARED) {
				if (!drop_dead_readers(d, s, dead))
					continue;
			} else if (!h || h > p->geo.max_holders ||
				   !(dead[(h - 1) / 64] >> ((h - 1) % 64) & 1)) {
				continue;
			} else if (kind == BATON_POOL_KERNEL) {
				*cold += cold_from_dead_decay(c, d, s);
				continue;
			} else if (kind != BATON_POOL_OWNED &&
				   kind != BATON_POOL_IDLE) {
				continue;	/* FREE, COLD, SENT: not its */
			}
			/* OWNED, or IDLE in its magazine: ours now. */
			n += take_to_adopt(p, i, j, s);
		}
	}
	return n;
}

/*
 * A repair published entries (finished claims) or is about to free what
 * it took back: parkers look again. Only then: a parker's own look at an
 * empty class runs a repair, which must not wake it, or everyone.
 */
static void wake_all_parked(struct baton_pool *p)
{
	uint32_t i;

	for (i = 0; i < p->geo.nr_classes; i++)
		baton__pool_wake_parked(p, i);
}

/* A dead holder parked on a class: its count goes (kmod: baton_pool_unpark()). */
static void unpark(struct baton_pool *p, uint32_t k)
{
	struct baton_pool_claim *cl = claim_of(p, k);
	uint32_t parked = __atomic_exchange_n(&cl->parked, 0, __ATOMIC_ACQ_REL);
	uint32_t *w, n;

	if (!parked || parked > p->geo.nr_classes)
		return;
	w = &((struct baton_pool_waiting *)((uint8_t *)p->f.cls[parked - 1].head +
					    BATON_POOL_Q_WAIT))->waiters;
	n = __atomic_load_n(w, __ATOMIC_RELAXED);
	while (n && !__atomic_compare_exchange_n(w, &n, n - 1, 0,
						 __ATOMIC_ACQ_REL,
						 __ATOMIC_RELAXED))
		;
}

/*
 * Repair every dead holder (and with @self, the dead holder whose index
 * we just took), under the repair lock. A dead index is locked by us
 * while it is repaired, so nobody takes it meanwhile. Returns how many
 * buffers became ours or COLD: worth another look at the queue.
 */
static uint64_t repair_dead(struct baton_pool *p, int self, int *self_unsettled)
{
	uint64_t dead[BATON_POOL_HOLDERS_MAX / 64] = { 0 }, n, cold = 0;
	uint32_t k, found = 0, unsettled[BATON_POOL_HOLDERS_MAX / 32] = { 0 };

	for (k = 0; k < p->geo.max_holders; k++) {
		if (!__atomic_load_n(attached_word(p, k), __ATOMIC_ACQUIRE))
			continue;
		if (k == p->f.holder ? !self : try_lock(p->fd, LOCK_HOLDER(k)))
			continue;
		dead[k / 64] |= 1ULL << (k % 64);
		found++;
	}
	if (self_unsettled)
		*self_unsettled = 0;
	if (!found)
		return 0;
	for (k = 0; k < p->geo.max_holders; k++)
		if (dead[k / 64] >> (k % 64) & 1)
			life_end(p, k);
	/*
	 * With @self our own index is in @dead, and the walk would take
	 * again what finishing the claims just made ours (OWNED by our
	 * index): a buffer on our adopt list twice, handed out twice. So
	 * then the walk goes first; a push it overtakes publishes holes.
	 */
	n = self ? reclaim_walk(p, dead, &cold) : 0;
	for (k = 0; k < p->geo.max_holders; k++)
		if (dead[k / 64] >> (k % 64) & 1 && finish_claim(p, k, dead))
			unsettled[k / 32] |= 1U << (k % 32);
	if (!self)
		n = reclaim_walk(p, dead, &cold);
	count(&p->hdr->reclaimed, n);
	if (self_unsettled && self)
		*self_unsettled = unsettled[p->f.holder / 32] >>
				  (p->f.holder % 32) & 1;
	for (k = 0; k < p->geo.max_holders; k++) {
		if (!(dead[k / 64] >> (k % 64) & 1))
			continue;
		if (!(unsettled[k / 32] >> (k % 32) & 1)) {
			unpark(p, k);
			claim_reset(p, k);
			if (k != p->f.holder) {
				__atomic_store_n(attached_word(p, k), 0,
						 __ATOMIC_RELEASE);
				count(&p->hdr->holder_releases, 1);
				__atomic_fetch_sub((uint64_t *)&p->hdr->holders,
						   1, __ATOMIC_RELAXED);
			}
		}
		if (k != p->f.holder)
			unlock(p->fd, LOCK_HOLDER(k));
	}
	wake_all_parked(p);
	return n + cold;
}

/*
 * Repair, at most once a millisecond per handle (its callers spin).
 * Returns how many buffers became ours (for baton__pool_drain()) or COLD.
 * Only tried: its callers allocate or receive, which answer at once or
 * by their timeouts, so a holder stopped (or hostile) with the lock held
 * must not hold them; the next millisecond tries again.
 */
int baton__pool_memfd_repair(struct baton_pool *p)
{
	uint64_t now = baton__pool_now_ms(), n;
	int cs;

	if (now == p->repaired_ms)
		return 0;
	p->repaired_ms = now;
	if (repair_lock(p, &cs))
		return 0;
	n = repair_dead(p, 0, NULL);
	repair_unlock(p, cs);
	return n > 0x7fffffff ? 0x7fffffff : (int)n;
}

/* ---- a ring nobody reads again (kmod: baton_pool_return_sent()) ---- */

/*
 * The module gives back the buffers SENT through a ring when it destroys
 * the ring; on memfd nothing sees a ring file go. So the handle that sends
 * through a ring watches the ring's file instead (Documentation/pool.rst,
 * "A ring nobody reads again"): baton_pool_send() stamps each buffer it
 * sends with the ring's id (its inode number), and once the file has no
 * name and no consumer lock, nobody can read it again: the buffers still
 * SENT with that id come back, as at a holder's death.
 */

/*
 * Watch @r's file, once per ring: its id, or 0 when it cannot be watched
 * (all BATON__POOL_WATCH_MAX in use, no /proc): then its buffers are
 * stamped with no ring, as before. Under the open lock (pool.c).
 */
uint64_t baton__pool_memfd_watch(struct baton_pool *p,
				 const struct baton_ring *r)
{
	uint64_t id = baton__memfd_ring_id(r);
	uint32_t i;
	int fd;

	for (i = 0; i < p->nr_watch; i++)
		if (p->watch[i].id == id)
			return id;	/* another handle of the same ring */
	if (p->nr_watch == BATON__POOL_WATCH_MAX)
		return 0;
	fd = id ? baton__memfd_watch_open(r) : -EBADF;
	if (fd < 0) {
		/* No /proc, or no access to it: not worth a try per send. */
		p->watch_broken = 1;
		return 0;
	}
	p->watch[p->nr_watch].fd = fd;
	p->watch[p->nr_watch++].id = id;
	return id;
}

/*
 * Every buffer SENT through ring @id becomes ours, for baton__pool_drain(),
 * by a compare-and-swap from the state read (Y4) to a new generation, so
 * a message that still names it is stale. The aux is read after the SENT
 * it belongs to (mark_sent() stores it before, the state with release).
 * A SHARED buffer's aux is its readers' mask, not a ring: not taken.
 */
static uint64_t reclaim_sent(struct baton_pool *p, uint64_t id)
{
	uint64_t n = 0;
	uint32_t i, j;

	for (i = 0; i < p->geo.nr_classes; i++) {
		struct baton_pool_cls *c = &p->f.cls[i];

		for (j = 0; j < c->count; j++) {
			struct baton_pool_desc *d = &c->desc[j];
			uint64_t s = __atomic_load_n(&d->state, __ATOMIC_ACQUIRE);

			if (BATON_POOL_S_KIND(s) != BATON_POOL_SENT ||
			    __atomic_load_n(&d->aux, __ATOMIC_RELAXED) != id)
				continue;
			n += take_to_adopt(p, i, j, s);
		}
	}
	return n;
}

/*
 * Look at every watched ring: one that nobody can read again gives its
 * buffers back. A watch is dropped after a look that found its ring
 * unreadable and nothing left in it: a sender still holding the ring that
 * pushes more after that watches it again at the send (bind_ring(), which
 * the drop's baton__pool_rebind() sends it to), and
 * the next look takes those. Under the open lock (the fork comment).
 */
static void watch_check(struct baton_pool *p)
{
	uint64_t n = 0, got;
	uint32_t i = 0;

	while (i < p->nr_watch) {
		if (baton__memfd_watch_readable(p->watch[i].fd)) {
			i++;
			continue;
		}
		got = reclaim_sent(p, p->watch[i].id);
		n += got;
		if (got) {
			i++;
			continue;
		}
		close(p->watch[i].fd);
		p->watch[i] = p->watch[--p->nr_watch];
		/*
		 * Every ring bound to this handle binds again at its next
		 * send: this one is watched again, and one that got no watch
		 * while all were in use may get the slot that just came free.
		 */
		baton__pool_rebind(p);
	}
	if (n)	/* a shared word: not written every look for nothing */
		count(&p->hdr->reclaimed, n);
}

void baton__pool_memfd_unwatch_all(struct baton_pool *p)
{
	while (p->nr_watch)
		close(p->watch[--p->nr_watch].fd);
}

/* ---- attach and detach ---- */

/* How attach and detach wait for what a stopped holder may hold up. */
static void nap_1ms(void)
{
	static const struct timespec nap = { .tv_nsec = 1000 * 1000 };

	nanosleep(&nap, NULL);
}

/*
 * The repair lock within LOCK_STUCK_MS: 0, or -EBUSY when it is held
 * past that (-errno for another failure). A repairer that keeps the lock
 * so long is taken as stopped (SIGSTOP, a debugger, a frozen cgroup): a
 * repair walks the descriptors and a decay punches a few holes, well
 * under that. Called under pool.c's open_lock, cancellation off.
 */
static int repair_lock_bounded(struct baton_pool *p, int *cs)
{
	uint64_t t0 = baton__pool_now_ms();
	int ret;

	for (;;) {
		ret = repair_lock(p, cs);
		if (ret != -EAGAIN && ret != -EACCES)
			return ret;
		if (baton__pool_now_ms() - t0 >= LOCK_STUCK_MS)
			return -EBUSY;
		nap_1ms();
	}
}

/*
 * Index @k is a dead holder's that nobody has repaired yet: attached,
 * while we (who hold its lock) are not. Reusing it before the repair
 * would make the dead holder's buffers ours unseen and reset a claim the
 * repair must finish.
 */
static int index_dirty(const struct baton_pool *p, uint32_t k)
{
	return __atomic_load_n(attached_word(p, k), __ATOMIC_ACQUIRE) != 0;
}

/* Become holder @k: the states our descriptors carry, our claim page. */
static void take_index(struct baton_pool *p, uint32_t k)
{
	int idle = p->f.idle != p->f.owned;

	p->f.holder = k;
	p->f.owned = BATON_POOL_STATE(0, BATON_POOL_OWNED, k + 1);
	p->f.idle = idle ? BATON_POOL_STATE(0, BATON_POOL_IDLE, k + 1) :
			   p->f.owned;
	p->claim = claim_of(p, k);
}

/*
 * Past a stopped repairer, with our index dirty: move to a free index
 * nobody left dirty (its lock first, then its attached word: a repairer
 * of it would hold the lock), and let ours go to whoever repairs it.
 * 0, or -EMFILE when every free index is dirty.
 */
static int take_clean_index(struct baton_pool *p)
{
	uint32_t k;

	for (k = 0; k < p->geo.max_holders; k++) {
		if (k == p->f.holder || try_lock(p->fd, LOCK_HOLDER(k)))
			continue;
		if (index_dirty(p, k)) {
			unlock(p->fd, LOCK_HOLDER(k));
			continue;
		}
		unlock(p->fd, LOCK_HOLDER(p->f.holder));
		take_index(p, k);
		return 0;
	}
	return -EMFILE;
}

/*
 * Start our index's life. Needs no repair lock on a clean index: only
 * the holder of an index's lock writes its claim, life and attached
 * words, and a repairer finds it live (locked) from here on.
 */
static void attach_begin(struct baton_pool *p)
{
	claim_reset(p, p->f.holder);
	life_begin(p, p->f.holder);
	/* A dead holder of our index was counted: it is released now. */
	if (__atomic_exchange_n(attached_word(p, p->f.holder), 1,
				__ATOMIC_ACQ_REL))
		count(&p->hdr->holder_releases, 1);
	else
		count(&p->hdr->holders, 1);
}

/* Holder @k's claim says it was doing something (finish_claim()'s test). */
static int claim_open(const struct baton_pool *p, uint32_t k)
{
	struct baton_pool_claim *cl = claim_of(p, k);

	return __atomic_load_n(&cl->op, __ATOMIC_ACQUIRE) &&
	       (__atomic_load_n(&cl->ticket, __ATOMIC_ACQUIRE) != BATON_POOL_NO_TICKET ||
		__atomic_load_n(&cl->floor, __ATOMIC_RELAXED) != BATON_POOL_NO_TICKET);
}

/*
 * Under the repair lock: whatever a dead holder of our index left, first.
 * attach_begin() resets our index's claim, so a dead holder's claim that
 * a repair cannot settle yet (a refill's entries that a live taker,
 * stopped, may hold) must not be on it: when our index's dead holder was
 * in the middle of one, we take a clean index and repair the old one as
 * another's, which keeps an unsettled claim for a later repair. With no
 * clean index, we repair it as ours; should its claim stay unsettled, the
 * open answers EMFILE and leaves the index to a later repair, as when
 * every index is held.
 */
static int attach_repaired(struct baton_pool *p, int cs)
{
	int unsettled = 0;

	if (claim_open(p, p->f.holder) && !take_clean_index(p))
		repair_dead(p, 0, NULL);
	else
		repair_dead(p, 1, &unsettled);
	if (!unsettled)
		attach_begin(p);
	repair_unlock(p, cs);
	return unsettled ? -EMFILE : 0;
}

/*
 * Attach repairs the dead when the repair lock is free. Held, it waits
 * for it only as long as our index is dirty and the holder may be a
 * live repairer at work (LOCK_STUCK_MS); past that, it takes a clean
 * index, and when every free index is dirty answers EMFILE, as when
 * every index is held: each is, by a dead holder nobody can repair now.
 * A clean index needs no repair: the dead are repaired at the next slow
 * path. 0, or -errno.
 */
int baton__pool_memfd_attach(struct baton_pool *p)
{
	int cs, ret;

	if (!repair_lock(p, &cs))
		return attach_repaired(p, cs);
	if (index_dirty(p, p->f.holder)) {
		ret = repair_lock_bounded(p, &cs);
		if (!ret)
			return attach_repaired(p, cs);
		if (ret != -EBUSY)
			return ret;
		ret = take_clean_index(p);
		if (ret)
			return ret;
	}
	attach_begin(p);
	return 0;
}

/*
 * Everything we own, in use or cached, back to the free queues. A
 * repairer that keeps the lock past LOCK_STUCK_MS (stopped) is not
 * waited for: we leave as a death does, our index attached with its
 * lock about to go with our file, and the next repair (that repairer's,
 * once it runs, or any holder's slow path) takes back what we own.
 */
void baton__pool_memfd_detach(struct baton_pool *p)
{
	uint64_t dead[BATON_POOL_HOLDERS_MAX / 64] = { 0 }, n, cold = 0, t0;
	uint32_t i;
	int cs;

	/* A ring we sent through that nobody reads: its buffers, then. */
	watch_check(p);
	baton__pool_memfd_unwatch_all(p);
	baton__pool_drain(p);
	for (i = 0; i < p->geo.nr_classes; i++)
		p->f.cls[i].mag.n = 0;	/* ours (OWNED, IDLE): the walk finds them */
	/*
	 * So are the buffers a stopped reap kept on the adopt list: the walk
	 * below, after that reaper let go of the lock, takes them once, and
	 * the list must not name them a second time.
	 */
	p->adopt_n = 0;
	p->aside_word = 0;
	dead[p->f.holder / 64] = 1ULL << (p->f.holder % 64);
	if (repair_lock_bounded(p, &cs))
		return;
	life_end(p, p->f.holder);
	n = reclaim_walk(p, dead, &cold);
	repair_unlock(p, cs);
	/*
	 * A flush is a slow path: its maintenance may repair a dead holder
	 * and its waits may UNSTICK, and both adopt. What they adopt is
	 * ours to free too, or nobody's once we are gone: until none is left.
	 * A flush past a stopped reap sets buffers aside on the same list
	 * (pool.c): OWNED by us, they wait for that reaper up to
	 * LOCK_STUCK_MS (counted from here, our own flushes included), then
	 * for the repair of our index as a dead one, which counts them
	 * again: not here, then (approximately: the list may also hold
	 * buffers a repair during our flushes took from another dead
	 * holder, counted by it already).
	 */
	t0 = baton__pool_now_ms();
	for (;;) {
		baton__pool_drain(p);
		baton__pool_flush_all(p);
		if (!p->adopt_n)
			break;
		if (baton__pool_now_ms() - t0 >= LOCK_STUCK_MS) {
			count(&p->hdr->reclaimed,
			      n > p->adopt_n ? n - p->adopt_n : 0);
			return;
		}
		nap_1ms();
	}
	count(&p->hdr->reclaimed, n);
	claim_reset(p, p->f.holder);
	__atomic_store_n(attached_word(p, p->f.holder), 0, __ATOMIC_RELEASE);
	count(&p->hdr->holder_releases, 1);
	__atomic_fetch_sub((uint64_t *)&p->hdr->holders, 1, __ATOMIC_RELAXED);
}

/* ---- UNSTICK (kmod: baton_pool_unstick()) ---- */

int baton__pool_memfd_unstick(struct baton_pool *p, uint32_t cls, uint64_t c)
{
	struct baton_pool_cls *k = &p->f.cls[cls];
	struct baton_pool_qent *e = &k->q[c & (k->qcap - 1)];
	uint64_t seq, prev;
	int ret = 0, filled = 0, cs;

	/* Tried, as a repair: busy is "ask again", as a live holder is. */
	if (repair_lock(p, &cs))
		return -EAGAIN;
	/*
	 * The module finishes a dead holder's claims at its release, before
	 * an UNSTICK can find it gone; here a death is found only by
	 * looking. So dead holders are repaired first: a freer that died
	 * after making its buffer FREE and before publishing it has that
	 * entry filled with the buffer its claim names. A hole in its place
	 * would leave a FREE buffer on no queue, lost for good.
	 */
	repair_dead(p, 0, NULL);
	/* Y1, Y3: the entry's value is read only after its seq. */
	seq = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
	if (seq == c && c < __atomic_load_n(k->tail, __ATOMIC_ACQUIRE)) {
		if (live_may_hold(p, BATON_POOL_CLAIM_PUSH, cls, c, NULL)) {
			ret = -EAGAIN;
		} else {
			fill(p, cls, c, BATON_POOL_NO_INDEX, 0);
			filled = 1;
		}
	} else if (c >= k->qcap && seq == c - k->qcap + 1) {
		prev = c - k->qcap;
		if (prev >= __atomic_load_n(k->head, __ATOMIC_ACQUIRE) ||
		    live_may_hold(p, BATON_POOL_CLAIM_POP, cls, prev, NULL))
			ret = -EAGAIN;
		else
			release_entry(p, cls, prev);
	}
	repair_unlock(p, cs);
	/* Entries behind a hole are takeable now. */
	if (filled)
		wake_all_parked(p);
	return ret;
}

/* ---- parking (pool.c: baton_pool_alloc_wait()) ---- */

void baton__pool_memfd_wake(uint32_t *wakes)
{
	syscall(SYS_futex, wakes, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* Sleep while *@wakes is @seen, until @until: 0, or -EINTR. */
int baton__pool_memfd_sleep(uint32_t *wakes, uint32_t seen, uint64_t until)
{
	struct timespec ts = {
		.tv_sec = (time_t)(until / 1000000000ULL),
		.tv_nsec = (long)(until % 1000000000ULL),
	};

	if (syscall(SYS_futex, wakes, FUTEX_WAIT_BITSET, seen, &ts, NULL,
		    FUTEX_BITSET_MATCH_ANY) && errno == EINTR)
		return -EINTR;
	return 0;
}

/* ---- decay (kmod: baton_pool_decay_*()) ---- */

struct cand {
	uint64_t aux;			/* as read: decay_one() checks it again */
	uint64_t age;			/* the order: aux, or now if ahead */
	uint32_t index;
};

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return x->age < y->age ? -1 : x->age > y->age;
}

/*
 * The fewest free buffers of the class over the window: at the ticks
 * (@free) and between them as takers left the queue (kmod's rule).
 */
static uint32_t reserve_of(struct baton_pool *p, uint32_t cls, uint64_t tick,
			   uint32_t free)
{
	struct baton_pool_cls *c = &p->f.cls[cls];
	struct baton_pool_cold *w = baton__pool_cold_of(c);
	uint32_t *mf = words(p)->min_free[cls], low, reserve = free, i;

	low = __atomic_load_n(&w->low_water, __ATOMIC_RELAXED);
	mf[tick % WINDOW] = low < free ? low : free;
	/* No dip seen yet in the next interval (kmod's comment). */
	__atomic_store_n(&w->low_water, c->count, __ATOMIC_RELAXED);
	for (i = 0; i < WINDOW; i++)
		if (mf[i] < reserve)
			reserve = mf[i];
	return reserve;
}

/*
 * The FREE buffers, never used first, then oldest first: how many are
 * candidates, sorted in @cand; *@quota gets how many to take, those free
 * all window long beyond keep (kmod's rule), and *@cold how many the scan
 * found COLD.
 */
static uint32_t decay_pick(struct baton_pool *p, uint32_t cls, uint64_t tick,
			   uint64_t now, struct cand *cand, uint32_t *quota,
			   uint32_t *cold)
{
	struct baton_pool_cls *c = &p->f.cls[cls];
	uint32_t j, n = 0, free = 0, reserve;

	*cold = 0;
	for (j = 0; j < c->count; j++) {
		uint64_t s = __atomic_load_n(&c->desc[j].state, __ATOMIC_RELAXED);
		uint64_t aux = __atomic_load_n(&c->desc[j].aux, __ATOMIC_RELAXED);

		if (BATON_POOL_S_KIND(s) == BATON_POOL_COLD)
			(*cold)++;
		if (BATON_POOL_S_KIND(s) != BATON_POOL_FREE)
			continue;
		free++;
		/*
		 * A free time ahead of ours orders as freed now, the newest
		 * (kmod: baton_pool_decay_pick()): a holder in a time
		 * namespace ahead, or a scribble, never keeps a buffer from
		 * decaying. What goes is the reserve's to say, not its age.
		 */
		cand[n].aux = aux;
		cand[n].age = aux < now ? aux : now;
		cand[n++].index = j;
	}
	reserve = reserve_of(p, cls, tick, free);
	*quota = reserve > p->geo.keep ? reserve - p->geo.keep : 0;
	if (!*quota)
		return 0;
	qsort(cand, n, sizeof(*cand), cand_cmp);
	return n;
}

/*
 * Give back the pages of buffer @index of class @cls: the hole unmaps the
 * range from every holder and frees its pages. 0 or -1 (errno).
 */
static int punch(struct baton_pool *p, uint32_t cls, uint32_t index)
{
	uint32_t shift = p->f.cls[cls].shift;
	uint64_t off = p->geo.data_mmap + p->geo.classes[cls].data_off +
		       ((uint64_t)index << shift);

	return fallocate(p->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			 (off_t)off, (off_t)(1ULL << shift));
}

/*
 * Take one buffer, punch its pages out if it has any, and make it COLD
 * (kmod: baton_pool_decay_give()); 1 if it was taken, with *@paged 1 if
 * pages went.
 */
static int decay_one(struct baton_pool *p, uint32_t cls, const struct cand *cd,
		     int *paged)
{
	struct baton_pool_cls *c = &p->f.cls[cls];
	struct baton_pool_desc *d = &c->desc[cd->index];
	uint64_t s = __atomic_load_n(&d->state, __ATOMIC_ACQUIRE);
	uint64_t kernel;

	*paged = 0;
	if (BATON_POOL_S_KIND(s) != BATON_POOL_FREE ||
	    __atomic_load_n(&d->aux, __ATOMIC_RELAXED) != cd->aux)
		return 0;
	/* Y4: from the exact value; an allocator that popped it waits. */
	if (!__atomic_compare_exchange_n(
		    &d->state, &s,
		    BATON_POOL_STATE(BATON_POOL_S_GEN(s), BATON_POOL_KERNEL,
				     p->f.holder + 1),
		    0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return 0;
	if (cd->aux)
		*paged = !punch(p, cls, cd->index);
	/* Past the buffer's own entry, now stale (Y10). */
	__atomic_store_n(&d->aux, __atomic_load_n(c->tail, __ATOMIC_ACQUIRE),
			 __ATOMIC_RELAXED);
	/*
	 * Y10: pages gone and aux the tail before it is COLD. From the
	 * KERNEL we stored: a word rewritten meanwhile stays as written,
	 * counted (kmod: baton_pool_decay_give()).
	 */
	kernel = BATON_POOL_STATE(BATON_POOL_S_GEN(s), BATON_POOL_KERNEL,
				  p->f.holder + 1);
	if (!__atomic_compare_exchange_n(
		    &d->state, &kernel,
		    BATON_POOL_STATE(BATON_POOL_S_GEN(s), BATON_POOL_COLD, 0),
		    0, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		count(&p->hdr->bad_words, 1);
	else
		/*
		 * In the takers' hint at once, not at the pass's end: a
		 * taker that dropped this buffer's entry while it was KERNEL
		 * looks for it next (kmod: baton_pool_decay_give()).
		 */
		__atomic_fetch_add(&baton__pool_cold_of(c)->cold, 1,
				   __ATOMIC_RELAXED);
	return 1;
}

/*
 * ---- idle magazines (Documentation/pool.rst "Idle magazines", Y13) ----
 *
 * The module's reap (kmod/pool.c, baton_pool_idle_reap()) done by the
 * holder that decays: a buffer whose descriptor holds the same IDLE word
 * on IDLE_DUE of this process's decay ticks in a row has not been
 * allocated since, and its pages go back. The history is this handle's
 * own (nobody else can scribble it); a tick another holder ran is one
 * this one does not count, so a buffer only waits longer. The barrier on
 * the holders' CPUs is membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED): a
 * handle gets IDLE magazines only once its process registered for it
 * (pool.c, pool_attach()). Under the repair lock, which a dead holder's
 * repair takes too: it cannot queue a buffer, for another holder to
 * write, while that buffer is being punched.
 */
#define IDLE_DUE	WINDOW	/* the reserve's ticks, as the module's */
#define IDLE_GONE	UINT8_MAX	/* its pages went this episode */

const uint64_t *baton__pool_memfd_reap_word(const struct baton_pool *p)
{
	return &words(p)->reap;
}

/*
 * The reap word read as @seen for a while: if no holder holds the repair
 * lock, no reap is under way (a reaper sets and clears the word with the
 * lock held), so the word is a dead reaper's or scribbled: cleared, from
 * @seen only, since a reaper that took the lock since has stored its own.
 */
void baton__pool_memfd_reap_check(const struct baton_pool *p, uint64_t seen)
{
	if (held_by_other(p->fd, LOCK_REPAIR))
		return;
	__atomic_compare_exchange_n(&words(p)->reap, &seen, 0, 0,
				    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

void baton__pool_memfd_forget(struct baton_pool *p)
{
	uint32_t i;

	for (i = 0; i < BATON_POOL_CLASSES_MAX; i++) {
		free(p->idle_seen[i]);
		free(p->idle_ticks[i]);
		p->idle_seen[i] = NULL;
		p->idle_ticks[i] = NULL;
	}
}

static int idle_history(struct baton_pool *p, uint32_t cls)
{
	uint32_t n = p->f.cls[cls].count;

	if (p->idle_seen[cls])
		return 0;
	p->idle_seen[cls] = calloc(n, sizeof(*p->idle_seen[cls]));
	p->idle_ticks[cls] = calloc(n, sizeof(*p->idle_ticks[cls]));
	if (p->idle_seen[cls] && p->idle_ticks[cls])
		return 0;
	free(p->idle_seen[cls]);
	free(p->idle_ticks[cls]);
	p->idle_seen[cls] = NULL;
	p->idle_ticks[cls] = NULL;
	return -ENOMEM;
}

/* Age class @cls's IDLE buffers by one tick: how many are now due. */
static uint32_t idle_age(struct baton_pool *p, uint32_t cls)
{
	const struct baton_pool_cls *c = &p->f.cls[cls];
	uint64_t *seen = p->idle_seen[cls];
	uint8_t *ticks = p->idle_ticks[cls];
	uint32_t j, due = 0;

	for (j = 0; j < c->count; j++) {
		uint64_t s = __atomic_load_n(&c->desc[j].state,
					     __ATOMIC_RELAXED);

		if (BATON_POOL_S_KIND(s) != BATON_POOL_IDLE) {
			ticks[j] = 0;
			continue;
		}
		if (s != seen[j] || !ticks[j]) {
			seen[j] = s;
			ticks[j] = 1;
			continue;
		}
		if (ticks[j] < IDLE_DUE)
			ticks[j]++;
		due += ticks[j] == IDLE_DUE;
	}
	return due;
}

/* Punch the pages of class @cls's due buffers still as seen (Y13). */
static uint64_t idle_give(struct baton_pool *p, uint32_t cls)
{
	const struct baton_pool_cls *c = &p->f.cls[cls];
	uint64_t n = 0;
	uint32_t j;

	for (j = 0; j < c->count; j++) {
		if (p->idle_ticks[cls][j] != IDLE_DUE)
			continue;
		/* Y13: read again, after the barrier on the holders' CPUs. */
		if (__atomic_load_n(&c->desc[j].state, __ATOMIC_ACQUIRE) !=
		    p->idle_seen[cls][j])
			continue;
		if (!punch(p, cls, j))
			n++;
		p->idle_ticks[cls][j] = IDLE_GONE;
	}
	return n;
}

/*
 * One tick over every class's IDLE buffers: the buffers whose pages went,
 * and their bytes added to *@bytes. Under the repair lock.
 */
static uint64_t idle_reap(struct baton_pool *p, uint64_t *bytes)
{
	struct pool_words *w = words(p);
	uint64_t bufs = 0, n, mine;
	uint32_t i, due = 0;

	/*
	 * Only a handle with idle magazines reaps: its process registered
	 * for the barrier, and a pool with IDLE buffers has such a handle,
	 * whose own slow paths run the decay. Another handle keeps no
	 * history, and never sets the word for a barrier it may not get.
	 */
	if (!p->idle_mags)
		return 0;
	for (i = 0; i < p->geo.nr_classes; i++) {
		if (idle_history(p, i))
			return 0;	/* no memory for it: not this tick */
		due += idle_age(p, i);
	}
	if (!due)
		return 0;
	/* Odd, so never 0, and not a dead reaper's (reap_check()). */
	mine = __atomic_add_fetch(&w->reap_seq, 2, __ATOMIC_RELAXED) | 1;
	/*
	 * Y13: the word before the barrier on the holders' CPUs, after
	 * which every holder's OWNED stores so far are visible to the
	 * second read, and its later loads of the word see it set.
	 */
	__atomic_store_n(&w->reap, mine, __ATOMIC_SEQ_CST);
	if (!baton__memfd_barrier()) {
		for (i = 0; i < p->geo.nr_classes; i++) {
			n = idle_give(p, i);
			bufs += n;
			*bytes += n << p->f.cls[i].shift;
		}
	}
	/* Y13: the punches before a waiting holder goes on. */
	__atomic_store_n(&w->reap, 0, __ATOMIC_RELEASE);
	return bufs;
}

static void decay(struct baton_pool *p, uint64_t now)
{
	uint64_t tick = words(p)->ticks++, bufs = 0, bytes = 0;
	uint32_t i, j, n, cold, made, quota;
	int paged;

	for (i = 0; i < p->geo.nr_classes; i++) {
		struct cand *cand = malloc(p->f.cls[i].count * sizeof(*cand));

		if (!cand)
			continue;
		n = decay_pick(p, i, tick, now, cand, &quota, &cold);
		/* One an allocator took meanwhile: the next oldest instead. */
		for (j = 0, made = 0; j < n && made < quota; j++) {
			made += (uint32_t)decay_one(p, i, &cand[j], &paged);
			if (paged) {
				bufs++;
				bytes += 1ULL << p->f.cls[i].shift;
			}
		}
		__atomic_store_n(&baton__pool_cold_of(&p->f.cls[i])->cold,
				 cold + made, __ATOMIC_RELAXED);
		free(cand);
		/* As the module's tick: a parker looks again at once. */
		if (made)
			baton__pool_wake_parked(p, i);
	}
	bufs += idle_reap(p, &bytes);
	count(&p->hdr->decay_ticks, 1);
	count(&p->hdr->decayed, bufs);
	count(&p->hdr->decayed_bytes, bytes);
}

/*
 * From refill and flush: when due, and nobody else is at it, repair dead
 * holders and decay. @now is the caller's baton__pool_coarse_ms(), also
 * the clock of every free time the decay compares it with.
 */
void baton__pool_memfd_maintain(struct baton_pool *p, uint64_t now)
{
	struct pool_words *w = words(p);
	uint64_t period;
	int cs;

	/*
	 * Our own rings: whoever does the pool's maintenance below. Under
	 * the open lock, as every change of the watch fds: a fork() in
	 * another thread must not see an fd closed and still listed (its
	 * child would close that number again, by then another file).
	 * Never reached with the lock held: close empties the list first.
	 */
	if (p->nr_watch && now >= p->watch_next_ms) {
		p->watch_next_ms = now + WATCH_MS;
		cs = baton__pool_open_lock();
		watch_check(p);
		baton__pool_open_unlock(cs);
	}
	if (now < __atomic_load_n(&w->next_ms, __ATOMIC_RELAXED))
		return;
	if (repair_lock(p, &cs))
		return;		/* another holder is at it */
	period = p->geo.decay_ms ? p->geo.decay_ms / 4 : IDLE_REPAIR_MS;
	if (now >= w->next_ms) {
		__atomic_store_n(&w->next_ms, now + (period < 5 ? 5 : period),
				 __ATOMIC_RELAXED);
		repair_dead(p, 0, NULL);
		if (p->geo.decay_ms)
			decay(p, now);
	}
	repair_unlock(p, cs);
}

// SPDX-License-Identifier: MIT
/*
 * libbaton: buffer pools (Documentation/pool.rst): allocate and free
 * buffers of a pool in user space and name them by 64-bit handles.
 *
 * Owns struct baton_pool: the three mappings of a pool fd, the library's
 * checked copy of the geometry (the only one it trusts), and the
 * per-class magazines. A magazine keeps buffers this holder owns but
 * nobody uses: allocation pops one and free pushes one, no atomic
 * instruction either way; only an empty or an overfull magazine touches
 * the shared free queue, for half a magazine at a time. A magazine holds
 * at most an eighth of its class (and at most BATON_POOL_MAG), so that a
 * holder that only frees (a consumer stage) cannot keep a small class
 * from the others: a class of fewer than 16 buffers has no magazine. It
 * also holds at most BATON_POOL_MAG_BYTES where the decay cannot reach a
 * magazine (an old module, a process membarrier refuses, a handle of the
 * 2.1 create/open), so there 1 MiB frames and larger get none. Buffers in
 * a magazine are this holder's in their descriptors, IDLE where the
 * decay reaps magazines ("Idle magazines", Documentation/pool.rst), else
 * OWNED, so the kernel (or on memfd the repair) returns them with the
 * rest when the holder's file is released.
 *
 * The free queue's protocol and the claim page are in the uapi header;
 * the argument is in Documentation/pool.rst. Ordering, as lettered in
 * memory-ordering.rst:
 * Y1 a freer's descriptor stores (aux, then state FREE) happen before its
 *    entry's seq store (release), which a taker's seq load (acquire)
 *    pairs with: a taker that reads the entry sees the descriptor FREE;
 * Y2 a taker counts published entries (acquire loads of seq) before its
 *    compare-and-swap on the head; head only grows, so a successful one
 *    means nobody took those entries in between;
 * Y3 a taker's seq store (h + qcap, release) frees the entry for the next
 *    lap only after it read the value and recorded it in its claim;
 * Y4 the kernel takes a descriptor (decay, reclaim) only by a cmpxchg
 *    from the exact value it read, and a taker takes one from FREE only by
 *    a cmpxchg too, so exactly one of them wins;
 * Y5 a holder's floor store (release) comes before its fetch_add on the
 *    tail or compare-and-swap on the head (acq_rel), and its ticket store
 *    after: the kernel's UNSTICK, having loaded that index with acquire,
 *    sees the floor of any live holder that may hold a ticket it asks
 *    about (mpsc.rst's I and J, for pools).
 * Y6 a sender's buffer writes, the ring push, then its SENT store
 *    (release); a receiver's acquire load of SENT before it reads the
 *    buffer, and its take before its slot release (baton_pool_send/recv).
 * Y7 a parked allocator's add to its class's waiters (seq_cst RMW) before
 *    its last look at the queue; a freer's publications, a full barrier,
 *    then its load of waiters (baton_pool_alloc_wait(), flush()).
 * Y8 a sharer's buffer writes, the ring pushes, the mask (aux), then
 *    SHARED (release); a reader's acquire load of SHARED before it loads
 *    the mask and reads the buffer; each reader's put clears its bit by an
 *    acq_rel compare-and-swap (its reads before; the last one's acquire
 *    sees every other reader's), and only the last makes the buffer
 *    OWNED (a compare-and-swap from SHARED, which the module's or a
 *    repair's free of an emptied mask races and one of them wins).
 *
 * Both backends run this code on the same layout; on memfd the module's
 * part (repair after deaths, UNSTICK, decay) is lib/pool_memfd.c, called
 * from the slow paths here.
 */
#define _GNU_SOURCE
#define BATON__POOL_OUTLINE	/* baton.h: we define the exported forms */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "pool_internal.h"

/* baton.h's inline paths return these as numbers, without <errno.h>. */
_Static_assert(EINVAL == 22 && ESTALE == 116, "errno values baton.h hardcodes");

uint64_t baton__pool_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * The time a flush stamps on the buffers it frees and the memfd upkeep is
 * scheduled by: the coarse clock, which the vDSO reads without the TSC
 * (7 ns against 30 ns for CLOCK_MONOTONIC in this project's VM, where a
 * burst of 64 KiB frames read the precise one 9 times per 32 buffers). It
 * lags CLOCK_MONOTONIC by at most a tick and never leads it. That is
 * harmless here: a free time only orders the decay's candidates (which
 * and how many go is the reserve's), and the upkeep is due every 5 ms or
 * more. Deadlines and the repair's once a millisecond keep the precise
 * clock.
 */
uint64_t baton__pool_coarse_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static inline void cpu_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/*
 * Wait politely for a word another process (or the module's decay) is
 * about to store: a pause, and every 1024th time the CPU given up. By
 * sched_yield() at first; but that gives it only to tasks of the caller's
 * priority or higher, so a SCHED_FIFO caller would keep a lower-priority
 * storer on the same CPU (a CFS peer between two steps, the decay's
 * worker in its reap) from running for good. From the 8th time on (some
 * 200 us of waiting), a 50 us sleep instead, which lets anyone run.
 */
void baton__pool_relax(unsigned int *spins)
{
	static const struct timespec nap = { .tv_nsec = 50 * 1000 };

	cpu_pause();
	if ((++*spins & 1023) != 0)
		return;
	if (*spins < 8 * 1024)
		sched_yield();
	else
		nanosleep(&nap, NULL);
}

/* ---- the geometry: copied once, checked, then the only one used ---- */

static int class_valid(const struct baton_pool_hdr *g, uint32_t i)
{
	const struct baton_pool_class_layout *c = &g->classes[i];
	uint64_t blk, bytes;

	if (c->buf_shift < BATON_POOL_SHIFT_MIN ||
	    c->buf_shift > BATON_POOL_SHIFT_MAX || !c->count ||
	    c->count > BATON_POOL_COUNT_MAX || c->qcap < 4 ||
	    (c->qcap & (c->qcap - 1)) || c->qcap < 2 * (uint64_t)c->count)
		return 0;
	if (i && c->buf_shift <= g->classes[i - 1].buf_shift)
		return 0;
	blk = BATON_POOL_Q_ENTRIES + (uint64_t)c->qcap * 16 +
	      (uint64_t)c->count * 16;
	bytes = (uint64_t)c->count << c->buf_shift;
	/* Each sum written as a difference: a scribbled offset cannot wrap. */
	return c->ctl_off % 4096 == 0 && c->ctl_off <= g->claim_off &&
	       blk <= g->claim_off - c->ctl_off && bytes <= g->data_size &&
	       c->data_off <= g->data_size - bytes;
}

int baton__pool_geometry_valid(const struct baton_pool_hdr *g, uint64_t magic,
			       uint32_t holder)
{
	uint32_t i;

	if (g->magic != magic || g->abi_version != BATON_ABI_VERSION)
		return 0;
	if (!g->nr_classes || g->nr_classes > BATON_POOL_CLASSES_MAX ||
	    !g->max_holders || g->max_holders > BATON_POOL_HOLDERS_MAX ||
	    holder >= g->max_holders)
		return 0;
	if (g->ctl_mmap != 4096 || g->ctl_size % 4096 || g->data_size % 4096 ||
	    g->claim_off > g->ctl_size ||
	    g->ctl_size - g->claim_off != (uint64_t)g->max_holders * 4096 ||
	    g->ctl_size > UINT64_MAX - g->ctl_mmap ||
	    g->data_mmap != g->ctl_mmap + g->ctl_size)
		return 0;
	for (i = 0; i < g->nr_classes; i++)
		if (!class_valid(g, i))
			return 0;
	return 1;
}

/*
 * A magazine's size: an eighth of the class, at most BATON_POOL_MAG
 * buffers, none below 2; and at most BATON_POOL_MAG_BYTES of them unless
 * the module's decay reaches magazines (@idle: Documentation/pool.rst,
 * "Idle magazines"), since a stage that freed a burst of large frames
 * must not keep them resident.
 */
static uint32_t mag_cap_of(uint32_t count, uint32_t shift, int idle)
{
	uint32_t cap = count / 8;

	if (cap > BATON_POOL_MAG)
		cap = BATON_POOL_MAG;
	if (!idle && cap > (BATON_POOL_MAG_BYTES >> shift))
		cap = BATON_POOL_MAG_BYTES >> shift;
	return cap < 2 ? 0 : cap;
}

static void pool_unmap(struct baton_pool *p)
{
	if (p->hdr)
		munmap((void *)p->hdr, 4096);
	if (p->ctl)
		munmap(p->ctl, p->geo.ctl_size);
	if (p->data)
		munmap(p->data, p->geo.data_size);
}

static int pool_map(struct baton_pool *p)
{
	void *m;
	uint32_t i;

	/* Read-only from the module; memfd keeps its counters there. */
	m = mmap(NULL, 4096,
		 p->backend == BATON_BACKEND_MEMFD ? PROT_READ | PROT_WRITE :
						     PROT_READ,
		 MAP_SHARED, p->fd, BATON_POOL_HDR_MMAP);
	if (m == MAP_FAILED)
		return -errno;
	p->hdr = m;
	/* Read once, checked, then only the copy (memfd: any holder writes). */
	memcpy(&p->geo, p->hdr, sizeof(p->geo));
	if (!baton__pool_geometry_valid(&p->geo,
					p->backend == BATON_BACKEND_MEMFD ?
					BATON__POOL_MEMFD_MAGIC :
					BATON_POOL_MAGIC,
					p->f.holder))
		return -EPROTO;
	if (p->backend == BATON_BACKEND_MEMFD &&
	    !baton__pool_memfd_geometry_ok(p->fd, &p->geo))
		return -EPROTO;
	m = mmap(NULL, p->geo.ctl_size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_POPULATE, p->fd, (off_t)p->geo.ctl_mmap);
	if (m == MAP_FAILED)
		return -errno;
	p->ctl = m;
	/* Not populated: a buffer's pages come on first touch (decay). */
	m = mmap(NULL, p->geo.data_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 p->fd, (off_t)p->geo.data_mmap);
	if (m == MAP_FAILED)
		return -errno;
	p->data = m;
	/* Not for a child (fork() above); kmod sets VM_DONTCOPY itself. */
	if (p->backend == BATON_BACKEND_MEMFD &&
	    (madvise((void *)p->hdr, 4096, MADV_DONTFORK) ||
	     madvise(p->ctl, p->geo.ctl_size, MADV_DONTFORK) ||
	     madvise(p->data, p->geo.data_size, MADV_DONTFORK)))
		return -errno;
	p->claim = (struct baton_pool_claim *)(p->ctl + p->geo.claim_off +
					       (uint64_t)p->f.holder * 4096);
	/*
	 * No decay, nothing reaps: frees leave OWNED, so the allocation
	 * skips its store and the reap word; the magazines stay uncapped
	 * (idle_mags), since nothing would be given back anyway. Leaving
	 * OWNED is always safe: the module reaps IDLE words only.
	 */
	if (!p->geo.decay_ms)
		p->f.idle = p->f.owned;
	for (i = 0; i < p->geo.nr_classes; i++) {
		const struct baton_pool_class_layout *l = &p->geo.classes[i];
		struct baton_pool_cls *c = &p->f.cls[i];
		uint8_t *blk = p->ctl + l->ctl_off;

		c->head = (uint64_t *)(blk + BATON_POOL_Q_HEAD);
		c->tail = (uint64_t *)(blk + BATON_POOL_Q_TAIL);
		c->q = (struct baton_pool_qent *)(blk + BATON_POOL_Q_ENTRIES);
		c->desc = (struct baton_pool_desc *)(c->q + l->qcap);
		c->base = p->data + l->data_off;
		c->shift = l->buf_shift;
		c->count = l->count;
		c->qcap = l->qcap;
		c->mag_cap = mag_cap_of(l->count, l->buf_shift, p->idle_mags);
	}
	/*
	 * Y13: what the inline allocation loads after its OWNED store: the
	 * module's word in its read-only header, or on memfd the holders'
	 * word in the backend's part of the header page.
	 */
	if (p->idle_mags && p->backend == BATON_BACKEND_KMOD)
		p->f.reap = (const uint64_t *)((const uint8_t *)p->hdr +
					       BATON_POOL_HDR_REAP);
	else if (p->idle_mags)
		p->f.reap = baton__pool_memfd_reap_word(p);
	p->f.nr_classes = p->geo.nr_classes;
	return 0;
}

/*
 * fork(): a pool handle is its process's holder, and the child of a
 * fork() would share the parent's magazines and claim page (both
 * processes handing out the same buffers) and keep the parent's holder
 * alive after the parent's death (its fd, and on memfd its mappings,
 * hold the file). So no pool mapping is inherited (MADV_DONTFORK here;
 * the module sets VM_DONTCOPY on its own), and in the child every
 * handle open at the fork loses its fd and becomes usable for nothing
 * but baton_pool_close(): its calls return -EBADF. The open handles are
 * on a list for that, under a lock that fork() takes in the parent.
 */
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static struct baton_pool *open_pools;

static void fork_prepare(void)
{
	pthread_mutex_lock(&open_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&open_lock);
}

/* The reap word of a handle with none: never a reap. */
static const uint64_t no_reap;

/*
 * A handle that is good for nothing but close (inherited across fork()),
 * or for nothing at all (closed): every call on it says EBADF, the
 * inline ones through the library's checks, and nothing it pointed at
 * is touched again.
 */
static void pool_neutralize(struct baton_pool *p)
{
	uint32_t i;

	p->forked = 1;
	/* The inline paths fall through to the checks that say EBADF. */
	p->f.nr_classes = 0;
	p->geo.nr_classes = 0;
	for (i = 0; i < BATON_POOL_CLASSES_MAX; i++) {
		p->f.cls[i].mag.n = 0;
		p->f.cls[i].mag_cap = 0;
	}
	p->adopt_n = 0;
	baton__pool_memfd_unwatch_all(p);
	/* Not inherited: the addresses may be another mapping's. */
	p->f.reap = &no_reap;
	p->hdr = NULL;
	p->ctl = NULL;
	p->data = NULL;
}

/* In the child: what is not ours is let go, never touched again. */
static void fork_child(void)
{
	struct baton_pool *p;

	for (p = open_pools; p; p = p->next_open) {
		pool_neutralize(p);
		close(p->fd);
		p->fd = -1;
	}
	pthread_mutex_unlock(&open_lock);
}

static void atfork_register(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/*
 * A handle's fd comes and goes under open_lock, with the handle's place
 * on the list: a fork() in another thread between the two would give the
 * child an fd the child handler does not know of.
 *
 * Thread cancellation is off while open_lock is held: the memfd attach
 * and detach wait for another holder's repair under it (up to 10 ms in
 * naps, a cancellation point), and a thread cancelled there would leave
 * it held for good, every later open, close and fork() of the process
 * hung on it. A cancel requested meanwhile acts at the thread's next
 * cancellation point after the call. Returns the state to restore.
 */
static int open_lock_take(void)
{
	int cs;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
	pthread_once(&atfork_once, atfork_register);
	pthread_mutex_lock(&open_lock);
	return cs;
}

static void open_lock_give(int cs)
{
	pthread_mutex_unlock(&open_lock);
	pthread_setcancelstate(cs, NULL);
}

/* For pool_memfd.c: its watch fds come and go under the same lock. */
int baton__pool_open_lock(void)
{
	return open_lock_take();
}

void baton__pool_open_unlock(int cs)
{
	open_lock_give(cs);
}

static void open_add(struct baton_pool *p)
{
	p->next_open = open_pools;
	if (open_pools)
		open_pools->prev_open = p;
	open_pools = p;
}

static void open_remove(struct baton_pool *p)
{
	if (p->prev_open)
		p->prev_open->next_open = p->next_open;
	else if (open_pools == p)
		open_pools = p->next_open;
	if (p->next_open)
		p->next_open->prev_open = p->prev_open;
	p->prev_open = NULL;
	p->next_open = NULL;
}

/* Serials of the pool handles this process opened (bind_ring()). */
static uint64_t pool_serials;

/* Under open_lock (the fork() comment above). */
static uint64_t module_features(void);

/* The reap word of a handle whose magazines no decay reaches. */

/*
 * @idle: the caller's inline forms store OWNED on allocation (2.7's
 * baton.h), so its frees may leave buffers IDLE, if the module reaps
 * idle magazines.
 */
static int pool_attach(int fd, uint32_t holder, int backend, int idle,
		       struct baton_pool **out)
{
	struct baton_pool *p = calloc(1, sizeof(*p));
	int ret;

	if (!p) {
		close(fd);
		return -ENOMEM;
	}
	p->fd = fd;
	p->serial = __atomic_add_fetch(&pool_serials, 1, __ATOMIC_RELAXED);
	p->f.holder = holder;
	p->f.owned = BATON_POOL_STATE(0, BATON_POOL_OWNED, holder + 1);
	p->f.idle = p->f.owned;
	p->f.reap = &no_reap;
	p->backend = backend;
	/*
	 * Magazines the decay reaches: the module's, since it says so; on
	 * memfd, the holders' decay, whose barrier on the other holders'
	 * CPUs is membarrier() (pool_memfd.c, idle_reap()).
	 */
	p->idle_mags = idle &&
		       (backend == BATON_BACKEND_KMOD ?
				!!(module_features() & BATON_FEAT_POOL_IDLE) :
				!baton__memfd_membarrier_try());
	if (p->idle_mags)
		p->f.idle = BATON_POOL_STATE(0, BATON_POOL_IDLE, holder + 1);
	p->decay_ends_cold = backend == BATON_BACKEND_KMOD &&
			     (module_features() & BATON_FEAT_POOL_COLD);
	ret = pool_map(p);
	if (ret) {
		pool_unmap(p);
		close(fd);
		free(p);
		return ret;
	}
	if (backend == BATON_BACKEND_MEMFD) {
		ret = baton__pool_memfd_attach(p);
		if (ret) {
			/*
			 * What a repair on the way adopted stays OWNED by our
			 * index, which a later repair takes back: only the
			 * list goes.
			 */
			pool_unmap(p);
			close(p->fd);
			baton__pool_memfd_forget(p);
			free(p->adopt);
			free(p);
			return ret;
		}
		baton__pool_drain(p);
	}
	open_add(p);
	*out = p;
	return 0;
}

/* The backend pools use: the one BATON_BACKEND_AUTO resolves to. */
static int pool_backend(void)
{
	/* -EINVAL for a $BATON_BACKEND that names no backend. */
	return baton_backend_resolve(BATON_BACKEND_AUTO);
}

/* The module's BATON_FEAT_* bits, asked once per process (0: none). */
static uint64_t module_features(void)
{
	static int known;
	static uint64_t feat;
	uint32_t abi = 0;
	uint64_t f = 0;

	if (__atomic_load_n(&known, __ATOMIC_ACQUIRE))
		return __atomic_load_n(&feat, __ATOMIC_RELAXED);
	if (baton__ops(BATON_BACKEND_KMOD)->version(&abi, &f))
		f = 0;
	/* Racing first calls store the same answer. */
	__atomic_store_n(&feat, f, __ATOMIC_RELAXED);
	__atomic_store_n(&known, 1, __ATOMIC_RELEASE);
	return f;
}

/*
 * The create's and open's flags on the module: BATON_POOL_F_TAKES_COLD
 * when it takes them (BATON_FEAT_POOL_COLD_OPTIN; an older module
 * refuses any flag), since this library takes COLD buffers (take_cold()).
 */
static uint32_t kmod_open_flags(void)
{
	return (module_features() & BATON_FEAT_POOL_COLD_OPTIN) ?
	       BATON_POOL_F_TAKES_COLD : 0;
}

/* One class of a create: its size and count, and what keep asks of it. */
static int pool_class_check(const struct baton__what *w,
			    const struct baton_pool_create *k, uint32_t i)
{
	const struct baton_pool_class *c = &k->classes[i];

	if (c->buf_shift < BATON_POOL_SHIFT_MIN ||
	    c->buf_shift > BATON_POOL_SHIFT_MAX)
		return baton__reject(w, -EINVAL,
				     "classes[%u].buf_shift %u: must be %d to %d (4 KiB to 4 MiB buffers)",
				     i, c->buf_shift, BATON_POOL_SHIFT_MIN,
				     BATON_POOL_SHIFT_MAX);
	if (i && c->buf_shift <= k->classes[i - 1].buf_shift)
		return baton__reject(w, -EINVAL,
				     "classes[%u].buf_shift %u: must be larger than classes[%u]'s (%u): sizes strictly increase",
				     i, c->buf_shift, i - 1,
				     k->classes[i - 1].buf_shift);
	if (!c->count || c->count > BATON_POOL_COUNT_MAX)
		return baton__reject(w, -EINVAL,
				     "classes[%u].count %u: must be 1 to %d",
				     i, c->count, BATON_POOL_COUNT_MAX);
	if (k->keep > c->count)
		return baton__reject(w, -EINVAL,
				     "keep %u: must be at most each class's count (classes[%u].count is %u)",
				     k->keep, i, c->count);
	return 0;
}

/*
 * The rules of struct baton_pool_params, each refusal named (the
 * backends check them again: kmod/pool.c, pool_memfd.c create_check()).
 */
static int pool_params_check(const struct baton__what *w,
			     const struct baton_pool_create *k)
{
	uint32_t i;
	int ret;

	if (!k->nr_classes || k->nr_classes > BATON_POOL_CLASSES_MAX)
		return baton__reject(w, -EINVAL,
				     "nr_classes %u: must be 1 to %d",
				     k->nr_classes, BATON_POOL_CLASSES_MAX);
	for (i = 0; i < k->nr_classes; i++) {
		ret = pool_class_check(w, k, i);
		if (ret)
			return ret;
	}
	if (k->decay_ms && (k->decay_ms < BATON_POOL_DECAY_MIN_MS ||
			    k->decay_ms > BATON_POOL_DECAY_MAX_MS))
		return baton__reject(w, -EINVAL,
				     "decay_ms %u: must be 0 (never) or %d to %d",
				     k->decay_ms, BATON_POOL_DECAY_MIN_MS,
				     BATON_POOL_DECAY_MAX_MS);
	if (k->max_holders > BATON_POOL_HOLDERS_MAX)
		return baton__reject(w, -EINVAL,
				     "max_holders %u: must be 0 (64) or 1 to %d",
				     k->max_holders, BATON_POOL_HOLDERS_MAX);
	if (k->mode & ~0777U)
		return baton__reject(w, -EINVAL,
				     "mode 0%o: must be permission bits only, within 0777 (no setuid, setgid or sticky bit)",
				     k->mode);
	return 0;
}

static int pool_create(const char *name,
		       const struct baton_pool_params *params, int idle,
		       struct baton_pool **out)
{
	struct baton_pool_create k;
	struct baton__what w;
	uint32_t i;
	int ret, be, cs;

	baton__what(&w, "baton_pool_create", name);
	ret = baton__name_check(&w, name);
	if (ret)
		return ret;
	if (!params)
		return baton__reject(&w, -EINVAL, "params: NULL");
	if (!out)
		return baton__reject(&w, -EINVAL, "out: NULL");
	if (params->nr_classes > BATON_POOL_CLASSES_MAX)
		return baton__reject(&w, -EINVAL, "nr_classes %u: must be 1 to %d",
				     params->nr_classes,
				     BATON_POOL_CLASSES_MAX);
	memset(&k, 0, sizeof(k));
	k.size = sizeof(k);
	k.mode = params->mode ? params->mode : 0600;
	k.nr_classes = params->nr_classes;
	k.decay_ms = params->decay_ms;
	k.keep = params->keep;
	k.max_holders = params->max_holders ? params->max_holders : 64;
	for (i = 0; i < params->nr_classes; i++) {
		k.classes[i].buf_shift = params->classes[i].buf_shift;
		k.classes[i].count = params->classes[i].count;
	}
	ret = pool_params_check(&w, &k);
	if (ret)
		return ret;
	ret = baton__copy_name(k.name, name);
	if (ret)
		return ret;
	be = baton__backend_check(&w, BATON_BACKEND_AUTO);
	if (be < 0)
		return be;
	cs = open_lock_take();
	if (be == BATON_BACKEND_MEMFD)
		ret = baton__pool_memfd_create(&k);
	else if (be == BATON_BACKEND_KMOD) {
		k.flags = kmod_open_flags();
		ret = baton__dev_ioctl(BATON_IOC_POOL_CREATE, &k);
	}
	else
		ret = be;
	if (!ret) {
		ret = pool_attach(k.out_fd, k.out_holder, be, idle, out);
		/*
		 * A create that fails leaves nothing: the name goes too, so a
		 * retry does not meet EEXIST from a pool nobody holds. An
		 * unlink and create of the same name by another process in
		 * the window (one mmap long) would lose theirs instead.
		 */
		if (ret)
			baton_pool_unlink(k.name);
	}
	open_lock_give(cs);
	return baton__fail(&w, ret == -ENODEV ? -EOPNOTSUPP : ret);
}

static int pool_open(const char *name, int idle, struct baton_pool **out)
{
	struct baton_pool_open k;
	struct baton__what w;
	int ret, be, cs;

	baton__what(&w, "baton_pool_open", name);
	ret = baton__name_check(&w, name);
	if (ret)
		return ret;
	if (!out)
		return baton__reject(&w, -EINVAL, "out: NULL");
	memset(&k, 0, sizeof(k));
	k.size = sizeof(k);
	ret = baton__copy_name(k.name, name);
	if (ret)
		return ret;
	be = baton__backend_check(&w, BATON_BACKEND_AUTO);
	if (be < 0)
		return be;
	cs = open_lock_take();
	if (be == BATON_BACKEND_MEMFD)
		ret = baton__pool_memfd_open(k.name, &k.out_fd, &k.out_holder);
	else if (be == BATON_BACKEND_KMOD) {
		k.flags = kmod_open_flags();
		ret = baton__dev_ioctl(BATON_IOC_POOL_OPEN, &k);
	}
	else
		ret = be;
	if (!ret)
		ret = pool_attach(k.out_fd, k.out_holder, be, idle, out);
	open_lock_give(cs);
	return baton__fail(&w, ret == -ENODEV ? -EOPNOTSUPP : ret);
}

/*
 * Code compiled against 2.8's baton.h stores OWNED on each inline
 * allocation and checks the reap word, and its baton.h names
 * __baton_pool_create_idle/_open_idle for create and open; code compiled
 * before does neither and calls baton_pool_create/_open, whose handles
 * keep magazines the decay never reaches (and capped in bytes). So the
 * header decides, not the library an object ends up linked with: the
 * default versions of the plain names are 2.1's again. 2.7 made them
 * the idle ones, which gave an object compiled against 2.6 linked with
 * 2.7 IDLE handles its inline allocation never claimed back
 * (baton_pool_create@LIBBATON_2.7 stays, for what 2.7 linked).
 */
int baton__pool_create_2_1(const char *name,
			   const struct baton_pool_params *params,
			   struct baton_pool **out);
int baton__pool_open_2_1(const char *name, struct baton_pool **out);
int __baton_pool_create_idle(const char *name,
			     const struct baton_pool_params *params,
			     struct baton_pool **out);
int __baton_pool_open_idle(const char *name, struct baton_pool **out);
/* One function each for the idle forms: 2.8's names, and 2.7's versions. */
__asm__(".symver __baton_pool_create_idle, baton_pool_create@LIBBATON_2.7");
__asm__(".symver baton__pool_create_2_1, baton_pool_create@@LIBBATON_2.1");
__asm__(".symver __baton_pool_open_idle, baton_pool_open@LIBBATON_2.7");
__asm__(".symver baton__pool_open_2_1, baton_pool_open@@LIBBATON_2.1");

int baton__pool_create_2_1(const char *name,
			   const struct baton_pool_params *params,
			   struct baton_pool **out)
{
	return pool_create(name, params, 0, out);
}

int baton__pool_open_2_1(const char *name, struct baton_pool **out)
{
	return pool_open(name, 0, out);
}

int __baton_pool_create_idle(const char *name,
			     const struct baton_pool_params *params,
			     struct baton_pool **out)
{
	return pool_create(name, params, 1, out);
}

int __baton_pool_open_idle(const char *name, struct baton_pool **out)
{
	return pool_open(name, 1, out);
}

int baton_pool_unlink(const char *name)
{
	struct baton_unlink k;
	int ret, be;

	memset(&k, 0, sizeof(k));
	k.size = sizeof(k);
	ret = baton__copy_name(k.name, name);
	if (ret)
		return ret;
	be = pool_backend();
	if (be == BATON_BACKEND_MEMFD)
		return baton__pool_memfd_unlink(k.name);
	ret = be == BATON_BACKEND_KMOD ?
		      baton__dev_ioctl(BATON_IOC_POOL_UNLINK, &k) : be;
	return ret == -ENODEV ? -EOPNOTSUPP : ret;
}

/*
 * Closing the fd is what returns this holder's buffers (its magazines
 * included) to the free queues: the kernel does it at release, as for a
 * holder that died. On memfd the library returns them here, before the
 * holder lock goes with the fd; a holder that died instead is repaired by
 * the next one that looks (pool_memfd.c), and so is one whose close found
 * the repair lock held by a stopped holder.
 */
void baton_pool_close(struct baton_pool *p)
{
	int cs;

	if (!p || p->closed)
		return;
	cs = open_lock_take();
	/* Two threads closing one handle: the second does nothing. */
	if (p->closed) {
		open_lock_give(cs);
		return;
	}
	if (!p->forked) {
		if (p->backend == BATON_BACKEND_MEMFD)
			baton__pool_memfd_detach(p);
		pool_unmap(p);
		close(p->fd);
	}
	p->fd = -1;
	open_remove(p);
	pool_neutralize(p);
	p->closed = 1;
	open_lock_give(cs);
	baton__pool_memfd_forget(p);
	free(p->adopt);
	p->adopt = NULL;
	/* Poisoned, not freed: a later call or close reads it (ring.c). */
	baton__quarantine(p);
}

/* ---- handles ---- */

/* The class of a well-formed handle, or NULL (forged: EINVAL). */
static struct baton_pool_cls *handle_class(const struct baton_pool *p,
					   uint64_t h)
{
	uint32_t cls = BATON_POOL_H_CLASS(h);

	if (!p || (h & BATON_POOL_H_RESERVED) || !BATON_POOL_H_GEN(h) ||
	    cls >= p->geo.nr_classes ||
	    BATON_POOL_H_INDEX(h) >= p->f.cls[cls].count)
		return NULL;
	return (struct baton_pool_cls *)&p->f.cls[cls];
}

void *baton_pool_ptr(const struct baton_pool *p, uint64_t h)
{
	return baton__pool_ptr_inline(p, h);
}

size_t baton_pool_buf_size(const struct baton_pool *p, uint64_t h)
{
	const struct baton_pool_cls *c = handle_class(p, h);

	return c ? (size_t)1 << c->shift : 0;
}

int baton_pool_check(const struct baton_pool *p, uint64_t h)
{
	const struct baton_pool_cls *c = handle_class(p, h);
	uint64_t s;

	if (p && p->forked)
		return -EBADF;
	if (!c)
		return -EINVAL;
	s = __atomic_load_n(&c->desc[BATON_POOL_H_INDEX(h)].state,
			    __ATOMIC_ACQUIRE);
	if (BATON_POOL_S_GEN(s) != BATON_POOL_H_GEN(h) ||
	    (BATON_POOL_S_KIND(s) != BATON_POOL_OWNED &&
	     BATON_POOL_S_KIND(s) != BATON_POOL_SHARED))
		return -ESTALE;
	return 0;
}

/* ---- the free queue ---- */

/*
 * A shared word in no state any holder, live or dead, leaves: counted on
 * memfd, whose header the holders keep. On kmod the header is the
 * module's and read-only here, and the module never sees these words:
 * not counted.
 */
static void note_bad_word(struct baton_pool *p)
{
	if (p->backend == BATON_BACKEND_MEMFD)
		__atomic_fetch_add((uint64_t *)&p->hdr->bad_words, 1,
				   __ATOMIC_RELAXED);
}

/*
 * Ask the kernel about the entry of ticket @t, which has not moved for a
 * while: 0 when it has moved or was repaired, -EAGAIN while a live holder
 * may still hold the ticket (uapi: BATON_POOL_IOC_UNSTICK).
 */
static int unstick(struct baton_pool *p, uint32_t cls, uint64_t t)
{
	struct baton_pool_unstick u;

	if (p->backend == BATON_BACKEND_MEMFD)
		return baton__pool_memfd_unstick(p, cls, t);
	memset(&u, 0, sizeof(u));
	u.size = sizeof(u);
	u.cls = cls;
	u.ticket = t;
	return ioctl(p->fd, BATON_POOL_IOC_UNSTICK, &u) ? -errno : 0;
}

/*
 * Whether a freer of ticket @t may find entry seq @s there: free for its
 * lap (t), or still the lap before's, published and not yet released
 * (t - qcap + 1) or not yet published (t - qcap), which a slow or dead
 * holder of that earlier ticket leaves until UNSTICK or it moves on.
 * Every entry of the class shows only values of its own index mod qcap,
 * one lap at a time; anything else no holder, live or dead, writes.
 */
static int freer_may_find(uint64_t s, uint64_t t, uint64_t qcap)
{
	return s == t || (t >= qcap && (s == t - qcap + 1 || s == t - qcap));
}

/*
 * Whether entry @e, found at @s by the freer of ticket @t, holds a seq
 * no holder leaves there: one of no lap, or t - qcap (the lap before's,
 * unpublished) once the head has passed t - qcap. A taker moves the head
 * past an entry only after its publication (Y1, Y2; UNSTICK publishes a
 * hole first), so a head read past it (acquire, which makes that
 * publication visible) and then the entry still at t - qcap is a value
 * written since: nobody will publish it, and UNSTICK finds nothing to do.
 */
static int freer_entry_scribbled(const struct baton_pool_cls *c,
				 const struct baton_pool_qent *e, uint64_t s,
				 uint64_t t)
{
	if (!freer_may_find(s, t, c->qcap))
		return 1;
	return s == t - c->qcap &&
	       __atomic_load_n(c->head, __ATOMIC_ACQUIRE) > t - c->qcap &&
	       __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE) == s;
}

/*
 * Wait for entry @e of ticket @t to be free for it; after about a
 * millisecond of it, ask the kernel every millisecond (a holder may have
 * died between two of its steps). A seq no holder leaves there (a
 * scribble) ends the wait, counted: the ticket is ours alone, so
 * publishing over the word loses only what the scribble already lost,
 * where waiting would lose the freer.
 */
static void wait_seq(struct baton_pool *p, uint32_t cls,
		     struct baton_pool_qent *e, uint64_t t)
{
	uint64_t asked = 0, s;
	unsigned int spins = 0;

	while ((s = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE)) != t) {
		baton__pool_relax(&spins);
		if (spins < 4096 || baton__pool_now_ms() == asked)
			continue;
		if (freer_entry_scribbled(&p->f.cls[cls], e, s, t)) {
			note_bad_word(p);
			return;
		}
		asked = baton__pool_now_ms();
		unstick(p, cls, t);
	}
}

/*
 * How long a taker on the module waits for a KERNEL buffer its entry
 * names (the module's decay truncating its pages, with no lock held)
 * before it drops the entry. Since BATON_FEAT_POOL_COLD the decay ends in
 * COLD, or in a push under the next generation, so the entry is stale
 * either way and dropping it early loses nothing: the wait only spares a
 * taker an ENOMEM while the decay finishes. (The module's other KERNEL
 * words with an entry's generation, a requeue's or a fill's, name
 * entries no live taker holds: UNSTICK and the fill act only on those.)
 * The bound is what a word scribbled KERNEL costs a taker. An older
 * module's decay makes the buffer FREE again in place, counting on the
 * taker that popped its entry: there the taker waits as long as it takes.
 */
#define KERNEL_WAIT_MS	20

/*
 * Take buffer @v's index from FREE to OWNED by us (Y4). The decay may
 * hold it (KERNEL) for the moment it takes to give its pages back; a
 * generation other than the entry's, or any other state, is a stale or
 * scribbled entry: the index is dropped, never used twice. On memfd the
 * decay is a holder's and ends in COLD, so a KERNEL entry is dropped at
 * once (the COLD buffer is found by its own search, refill_or_cold()).
 */
static int take_entry_slow(struct baton_pool *p, struct baton_pool_cls *c,
			   uint64_t v)
{
	uint64_t index = v & 0xffffffffu, since = 0;
	uint32_t gen = (uint32_t)(v >> 32);
	struct baton_pool_desc *d;
	unsigned int spins = 0;

	if (v == BATON_POOL_NO_INDEX || index >= c->count || !gen)
		return 0;
	d = &c->desc[index];
	for (;;) {
		uint64_t s = __atomic_load_n(&d->state, __ATOMIC_ACQUIRE);
		uint32_t by = BATON_POOL_S_HOLDER(s);

		if (BATON_POOL_S_KIND(s) == BATON_POOL_KERNEL &&
		    BATON_POOL_S_GEN(s) == gen) {
			/*
			 * memfd: a holder's decay (KERNEL with its index + 1),
			 * which only ever ends in COLD, never FREE again: the
			 * entry is stale already, so drop it now rather than
			 * wait for the COLD that drops it anyway. No KERNEL
			 * word, a decayer's that is slow or dead or one
			 * scribbled, then stalls a taker. kmod: the module's
			 * decay, whose COLD we may then take: wait, at most
			 * KERNEL_WAIT_MS (without a bound on a module whose
			 * decay ends FREE in place).
			 */
			if (p->backend == BATON_BACKEND_MEMFD) {
				if (!by || by > p->geo.max_holders)
					note_bad_word(p);
				return 0;
			}
			baton__pool_relax(&spins);
			if (spins < 4096 || !p->decay_ends_cold)
				continue;
			if (!since)
				since = baton__pool_now_ms();
			else if (baton__pool_now_ms() - since > KERNEL_WAIT_MS)
				return 0;
			continue;
		}
		if (s != BATON_POOL_STATE(gen, BATON_POOL_FREE, 0))
			return 0;
		if (__atomic_compare_exchange_n(
			    &d->state, &s,
			    BATON_POOL_STATE(gen, BATON_POOL_OWNED,
					     p->f.holder + 1),
			    0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return 1;
	}
}

/*
 * The usual take, one compare-and-swap from FREE under the entry's
 * generation (a value past the class, BATON_POOL_NO_INDEX included, and
 * generation 0 never match); anything else is take_entry_slow()'s, which
 * reads the state again. The same single step as the slow path's: only
 * the first load is gone (a failed compare-and-swap reads the word too).
 */
static inline int take_entry(struct baton_pool *p, struct baton_pool_cls *c,
			     uint64_t v)
{
	uint64_t gen_bits = v & 0xffffffff00000000ULL;
	uint64_t s = gen_bits | BATON_POOL_STATE(0, BATON_POOL_FREE, 0);
	uint32_t index = (uint32_t)v;

	if (index < c->count && gen_bits &&
	    __atomic_compare_exchange_n(&c->desc[index].state, &s,
					gen_bits | p->f.owned, 0,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return 1;
	return take_entry_slow(p, c, v);
}

/*
 * Tell the decay how few entries we left on the queue (struct
 * baton_pool_cold): a burst between two of its ticks then counts in its
 * reserve. A plain store when lower: two takers racing lose a sample,
 * never a buffer.
 */
static void note_low_water(struct baton_pool_cls *c, uint64_t head)
{
	struct baton_pool_cold *w = baton__pool_cold_of(c);
	uint64_t left = __atomic_load_n(c->tail, __ATOMIC_RELAXED) - head;

	if (left < __atomic_load_n(&w->low_water, __ATOMIC_RELAXED))
		__atomic_store_n(&w->low_water, (uint32_t)left,
				 __ATOMIC_RELAXED);
}

static void claim_idle(struct baton_pool_claim *cl)
{
	__atomic_store_n(&cl->op, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&cl->ticket, BATON_POOL_NO_TICKET, __ATOMIC_RELEASE);
	__atomic_store_n(&cl->floor, BATON_POOL_NO_TICKET, __ATOMIC_RELEASE);
}

/* How many entries from ticket @h on are published, up to @want. */
static uint32_t published(const struct baton_pool_cls *c, uint64_t h,
			  uint32_t want)
{
	uint32_t k;

	for (k = 0; k < want; k++) {
		struct baton_pool_qent *e = &c->q[(h + k) & (c->qcap - 1)];

		if (__atomic_load_n(&e->seq, __ATOMIC_ACQUIRE) != h + k + 1)
			break;
	}
	return k;
}

/*
 * The head entry is unpublished although its ticket was taken (h below
 * the tail): a freer between its fetch_add and its publication, or one
 * that died there. Wait while the head stays at h, asking the kernel
 * every millisecond after the first. 0: look again. While the head is
 * at h the entry can only be free for ticket h (its freer pending) or
 * still the last lap's (its taker between the head and Y3). A lap on
 * says the head was written back past an entry already taken: it moves
 * forward again. Anything else is a scribbled word no freer will ever
 * fix: -EPROTO, and the class answers as empty rather than spin for ever.
 * A live freer that holds the ticket for HEAD_WAIT_MS (stopped by a
 * signal or a debugger, or frozen) gets -EAGAIN: as empty too, so a
 * plain allocation says ENOMEM and a waiting one parks, keeping its
 * deadline and its signals; the freer's publication wakes it.
 */
#define HEAD_WAIT_MS	20

static int wait_head(struct baton_pool *p, uint32_t cls, uint64_t h)
{
	struct baton_pool_cls *c = &p->f.cls[cls];
	struct baton_pool_qent *e = &c->q[h & (c->qcap - 1)];
	unsigned int spins = 0;
	uint64_t asked = 0, held_since = 0, s;

	for (;;) {
		s = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
		if (s == h + 1 || __atomic_load_n(c->head, __ATOMIC_ACQUIRE) != h)
			return 0;
		if (s == h + c->qcap || s == h + c->qcap + 1) {
			note_bad_word(p);
			__atomic_compare_exchange_n(c->head, &h, h + 1, 0,
						    __ATOMIC_ACQ_REL,
						    __ATOMIC_ACQUIRE);
			return 0;
		}
		/* The lap before's, unreleased: only if there was one. */
		if (s != h && (h < c->qcap || s != h - c->qcap + 1)) {
			note_bad_word(p);
			return -EPROTO;
		}
		baton__pool_relax(&spins);
		if (spins < 4096 || baton__pool_now_ms() == asked)
			continue;
		asked = baton__pool_now_ms();
		if (unstick(p, cls, h) != -EAGAIN)
			held_since = 0;
		else if (!held_since)
			held_since = asked;
		else if (asked - held_since >= HEAD_WAIT_MS)
			return -EAGAIN;
	}
}

/*
 * Fill the magazine with up to @want buffers from the queue:
 * count the published entries from the head, announce the floor, move the
 * head past them with one compare-and-swap (a failed one means another
 * holder took them: count again), then read each, record it in the claim
 * and release the entry (Y3) before taking its buffer.
 */
static void refill(struct baton_pool *p, uint32_t cls, uint32_t want)
{
	struct baton_pool_cls *c = &p->f.cls[cls];
	struct baton_pool_claim *cl = p->claim;
	uint64_t h, i;
	uint32_t k;

	if (p->backend == BATON_BACKEND_MEMFD)
		baton__pool_memfd_maintain(p, baton__pool_coarse_ms());
	__atomic_store_n(&cl->cls, cls, __ATOMIC_RELAXED);
	__atomic_store_n(&cl->op, BATON_POOL_CLAIM_POP, __ATOMIC_RELEASE);
again:
	for (;;) {
		uint64_t t;

		h = __atomic_load_n(c->head, __ATOMIC_ACQUIRE);
		k = published(c, h, want);
		t = __atomic_load_n(c->tail, __ATOMIC_ACQUIRE);
		/*
		 * Tickets past a lap from the head: no freer took them (a
		 * freer's ticket waits for its entry's lap), so nobody will
		 * publish them, and filling each as a hole would take years.
		 * A scribbled tail: as empty. Unless the head moved since we
		 * read it: a taker preempted between the two reads sees a
		 * stale head and a fresh tail, which other holders may have
		 * moved on by more than a lap meanwhile. The tail only grows,
		 * so with the head unmoved the distance is at least that.
		 */
		if (!k && t - h > c->qcap) {
			if (__atomic_load_n(c->head, __ATOMIC_ACQUIRE) != h)
				continue;
			note_bad_word(p);
			break;
		}
		if (!k && t > h) {
			if (wait_head(p, cls, h))
				break;	/* a scribbled entry: as empty */
			continue;
		}
		if (!k) {
			note_low_water(c, h);
			break;
		}
		__atomic_store_n(&cl->n, k, __ATOMIC_RELAXED);
		for (i = 0; i < k; i++)
			__atomic_store_n(&cl->entry[i], BATON_POOL_NO_INDEX,
					 __ATOMIC_RELAXED);
		/* The floor before the head moves (Y5). */
		__atomic_store_n(&cl->floor, h, __ATOMIC_RELEASE);
		if (__atomic_compare_exchange_n(c->head, &h, h + k, 0,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			break;
		/* Another taker went first: we hold no ticket. */
		__atomic_store_n(&cl->floor, BATON_POOL_NO_TICKET,
				 __ATOMIC_RELEASE);
	}
	if (k) {
		__atomic_store_n(&cl->ticket, h, __ATOMIC_RELEASE);
		note_low_water(c, h + k);
		for (i = 0; i < k; i++) {
			struct baton_pool_qent *e = &c->q[(h + i) & (c->qcap - 1)];
			uint64_t v = __atomic_load_n(&e->value, __ATOMIC_RELAXED);

			__atomic_store_n(&cl->entry[i], v, __ATOMIC_RELEASE);
			/* Y3: the next lap's once read (and recorded). */
			__atomic_store_n(&e->seq, h + i + c->qcap,
					 __ATOMIC_RELEASE);
			if (take_entry(p, c, v))
				c->mag.handle[c->mag.n++] = BATON_POOL_HANDLE(
					cls, (uint32_t)v, (uint32_t)(v >> 32));
		}
		/*
		 * Only holes or stale values: buffers may still wait behind
		 * them. The claim's ticket goes first (those entries are done).
		 */
		if (!c->mag.n) {
			__atomic_store_n(&cl->ticket, BATON_POOL_NO_TICKET,
					 __ATOMIC_RELEASE);
			__atomic_store_n(&cl->floor, BATON_POOL_NO_TICKET,
					 __ATOMIC_RELEASE);
			goto again;
		}
	}
	claim_idle(cl);
}

/*
 * Take up to @n units of the class's cold hint before looking for COLD
 * buffers; the caller gives back what it did not use. Taking first is
 * what keeps the hint from reading 0 while COLD buffers remain: the decay
 * stores a fresh count each tick, and a count taken while a taker is
 * between its compare-and-swap and its decrement would otherwise be
 * decremented for a buffer it never counted. Taken first, the hint can
 * only err high (a search that finds less) until the next tick's count.
 */
static uint32_t claim_cold_hint(struct baton_pool_cold *w, uint32_t n)
{
	uint32_t have = __atomic_load_n(&w->cold, __ATOMIC_RELAXED), grab;

	do {
		if (!have)
			return 0;
		grab = have < n ? have : n;
	} while (!__atomic_compare_exchange_n(&w->cold, &have, have - grab, 0,
					      __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return grab;
}

/*
 * The queue is empty: take up to @want COLD buffers (the decay gave their
 * pages back and took them off the queue) into the magazine, each by a
 * compare-and-swap from the exact value read (Y4), searching from the
 * class's cursor, if the decay's hint says there are any. Only a buffer
 * whose aux (the tail when it went COLD) is at or below the head we saw
 * empty: its stale entry is behind that head, so no queue ever holds two
 * entries of one buffer (Y10). Its pages come back zeroed on first touch.
 */
static void take_cold(struct baton_pool *p, uint32_t cls, uint32_t want)
{
	struct baton_pool_cls *c = &p->f.cls[cls];
	struct baton_pool_cold *w = baton__pool_cold_of(c);
	uint64_t h = __atomic_load_n(c->head, __ATOMIC_ACQUIRE);
	uint32_t j, seen, took = 0, grab;

	if (c->mag.n >= want || __atomic_load_n(c->tail, __ATOMIC_ACQUIRE) != h)
		return;
	grab = claim_cold_hint(w, want - c->mag.n);
	if (!grab)
		return;
	j = __atomic_load_n(&w->cursor, __ATOMIC_RELAXED);
	for (seen = 0; seen < c->count && took < grab; seen++, j++) {
		struct baton_pool_desc *d;
		uint64_t s;
		uint32_t gen;

		if (j >= c->count)
			j = 0;
		d = &c->desc[j];
		s = __atomic_load_n(&d->state, __ATOMIC_ACQUIRE);
		gen = BATON_POOL_S_GEN(s);
		/* Y10: aux is read after the COLD it came with. */
		if (!gen || s != BATON_POOL_STATE(gen, BATON_POOL_COLD, 0) ||
		    __atomic_load_n(&d->aux, __ATOMIC_RELAXED) > h)
			continue;
		if (!__atomic_compare_exchange_n(
			    &d->state, &s,
			    BATON_POOL_STATE(gen, BATON_POOL_OWNED,
					     p->f.holder + 1),
			    0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			continue;
		c->mag.handle[c->mag.n++] = BATON_POOL_HANDLE(cls, j, gen);
		took++;
	}
	__atomic_store_n(&w->cursor, j, __ATOMIC_RELAXED);
	if (took < grab)
		__atomic_fetch_add(&w->cold, grab - took, __ATOMIC_RELAXED);
}

/* The queue first, then the buffers the decay took off it. */
static void refill_or_cold(struct baton_pool *p, uint32_t cls, uint32_t want)
{
	refill(p, cls, want);
	if (!p->f.cls[cls].mag.n)
		take_cold(p, cls, want);
}

/* ---- parking on an empty class (uapi: struct baton_pool_waiting) ---- */

static struct baton_pool_waiting *waiting_of(const struct baton_pool *p,
					     uint32_t cls)
{
	return (struct baton_pool_waiting *)((uint8_t *)p->f.cls[cls].head +
					     BATON_POOL_Q_WAIT);
}

/*
 * Entries of class @cls were just published: wake its parked allocators,
 * if any (Y7: the publications, a full barrier, then the load of the
 * count; the parker's atomic add is its barrier before its last look).
 */
void baton__pool_wake_parked(struct baton_pool *p, uint32_t cls)
{
	struct baton_pool_waiting *w = waiting_of(p, cls);
	struct baton_pool_wait k;

	baton__full_fence();
	if (!__atomic_load_n(&w->waiters, __ATOMIC_RELAXED))
		return;
	__atomic_fetch_add(&w->wakes, 1, __ATOMIC_RELEASE);
	if (p->backend == BATON_BACKEND_MEMFD) {
		baton__pool_memfd_wake(&w->wakes);
		return;
	}
	memset(&k, 0, sizeof(k));
	k.size = sizeof(k);
	k.cls = cls;
	ioctl(p->fd, BATON_POOL_IOC_WAKE, &k);
}

/*
 * Sleep while class @cls's wakes word is @seen, until @until at the
 * latest: 0 (woken, or the slice ended: look again), or -EINTR.
 */
static int park_on_class(struct baton_pool *p, uint32_t cls, uint32_t seen,
			 uint64_t until)
{
	struct baton_pool_wait k;

	if (p->backend == BATON_BACKEND_MEMFD)
		return baton__pool_memfd_sleep(&waiting_of(p, cls)->wakes, seen,
					       until);
	memset(&k, 0, sizeof(k));
	k.size = sizeof(k);
	k.flags = BATON_POOL_WAIT_DEADLINE;
	k.cls = cls;
	k.wakes = seen;
	k.deadline_ns = until;
	if (!ioctl(p->fd, BATON_POOL_IOC_WAIT, &k) || errno == ETIMEDOUT)
		return 0;
	if (errno == EINTR)
		return -EINTR;
	usleep(1000);	/* ENOTTY: a module without it; poll */
	return 0;
}

/* ---- a reap that stops (Y13; pool.rst, "Idle magazines") ---- */

/*
 * A memfd reap is a holder's, and takes a membarrier() and a punch per
 * buffer: milliseconds. One that holds the word this long has most
 * likely stopped (SIGSTOP, a debugger, a frozen cgroup), and the buffer
 * its waiter holds goes aside rather than the waiter stopping too.
 */
#define REAP_STUCK_MS	10

/*
 * Wait for the reap word to clear after an OWNED or FREE store (Y13):
 * 0 once it has, or at once if it says the reap that our magazines were
 * set aside for (every buffer in them came after the set-aside, so none
 * is that reaper's to punch). On memfd, a dead reaper's word is cleared
 * every 4096th look; and with @bounded, a reap that has held the word
 * REAP_STUCK_MS answers its value: the caller's buffer goes aside.
 */
static uint64_t reap_wait(const struct baton_pool *p, int bounded)
{
	unsigned int spins = 0;
	uint64_t seen, last = 0, since = 0, now;

	while ((seen = __atomic_load_n(p->f.reap, __ATOMIC_ACQUIRE))) {
		if (seen == p->aside_word)
			return 0;
		if (seen != last) {	/* another reap: its own 10 ms */
			last = seen;
			since = 0;
		}
		baton__pool_relax(&spins);
		if (p->backend != BATON_BACKEND_MEMFD)
			continue;
		if (!(spins % 4096))
			baton__pool_memfd_reap_check(p, seen);
		if (!bounded || spins % 256)
			continue;
		now = baton__pool_coarse_ms();
		if (!since) {
			since = now;
			continue;
		}
		if (now - since < REAP_STUCK_MS)
			continue;
		/* A dead reaper's word is cleared, not waited out. */
		baton__pool_memfd_reap_check(p, seen);
		if (__atomic_load_n(p->f.reap, __ATOMIC_ACQUIRE) == seen)
			return seen;
	}
	return 0;
}

/*
 * True while the reap that set our magazines aside goes on: the adopt
 * list waits. Its word cleared (acquire: the punches before our use of
 * the pages), or a dead reaper's word cleared here, ends it.
 */
static int reap_holds_aside(struct baton_pool *p)
{
	uint64_t w;

	if (!p->aside_word)
		return 0;
	w = __atomic_load_n(p->f.reap, __ATOMIC_ACQUIRE);
	if (w == p->aside_word) {
		baton__pool_memfd_reap_check(p, w);
		w = __atomic_load_n(p->f.reap, __ATOMIC_ACQUIRE);
	}
	if (w == p->aside_word)
		return 1;
	p->aside_word = 0;
	return 0;
}

/* Buffer @index of class @cls, OWNED by us with @gen, onto the adopt list. */
static void keep_owned(struct baton_pool *p, uint32_t cls, uint32_t index,
		       uint32_t gen)
{
	__atomic_store_n(&p->f.cls[cls].desc[index].state,
			 BATON_POOL_STATE(gen, BATON_POOL_OWNED, p->f.holder + 1),
			 __ATOMIC_RELAXED);
	/*
	 * No room on the list: ours until our close walks it back, or the
	 * repair of our index does (a close past a stopped repairer).
	 */
	baton__pool_adopt_later(p, cls, index);
}

/*
 * The reap with word @reap has stopped: every buffer in our magazines may
 * be one its second read saw IDLE, to be punched when it runs again. All
 * of them go to the adopt list, OWNED (the reaper writes no descriptor;
 * a repair, which would, waits for its lock), until the word changes
 * (baton__pool_drain()). Whatever a magazine gets from here on came from
 * the queue or a free after it, never that reaper's to punch.
 */
static void set_aside(struct baton_pool *p, uint64_t reap)
{
	uint32_t i;

	for (i = 0; i < p->geo.nr_classes; i++) {
		struct baton_pool_cls *c = &p->f.cls[i];

		while (c->mag.n) {
			uint64_t h = c->mag.handle[--c->mag.n];

			keep_owned(p, i, BATON_POOL_H_INDEX(h),
				   BATON_POOL_H_GEN(h));
		}
	}
	p->aside_word = reap;
}

/*
 * A flush found a stopped reap after making buffer @v of class @cls FREE:
 * ours again (the claim still names it, so a death from here is the
 * repair's fill(), as before the FREE store), for a hole in its entry.
 * False if something took it meanwhile (the decay, before the reap set
 * its word: so not a buffer that reap punches): the entry gets it.
 */
static int keep_from_flush(struct baton_pool *p, uint32_t cls, uint64_t v)
{
	struct baton_pool_desc *d = &p->f.cls[cls].desc[(uint32_t)v];
	uint32_t gen = (uint32_t)(v >> 32);
	uint64_t s = BATON_POOL_STATE(gen, BATON_POOL_FREE, 0);

	if (!__atomic_compare_exchange_n(&d->state, &s,
					 BATON_POOL_STATE(gen, BATON_POOL_OWNED,
							  p->f.holder + 1),
					 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return 0;
	baton__pool_adopt_later(p, cls, (uint32_t)v);
	return 1;
}

/*
 * Push the top @n buffers of the magazine to the queue:
 * record them and the floor in the claim, take the tickets with one
 * fetch_add, store the ticket, make each descriptor FREE (Y1), then
 * publish each entry.
 */
static void flush(struct baton_pool *p, uint32_t cls, uint32_t n)
{
	struct baton_pool_cls *c = &p->f.cls[cls];
	uint64_t *mh = &c->mag.handle[c->mag.n - n];
	struct baton_pool_claim *cl = p->claim;
	uint64_t t, now = baton__pool_coarse_ms(), v[BATON_POOL_MAG + 1];
	uint64_t stuck = 0;
	uint32_t i;

	if (p->backend == BATON_BACKEND_MEMFD)
		baton__pool_memfd_maintain(p, now);
	for (i = 0; i < n; i++) {
		uint32_t x = BATON_POOL_H_INDEX(mh[i]);
		uint64_t s = __atomic_load_n(&c->desc[x].state,
					     __ATOMIC_RELAXED);

		v[i] = BATON_POOL_ENTRY(BATON_POOL_S_GEN(s), x);
		__atomic_store_n(&cl->entry[i], v[i], __ATOMIC_RELAXED);
	}
	__atomic_store_n(&cl->cls, cls, __ATOMIC_RELAXED);
	__atomic_store_n(&cl->n, n, __ATOMIC_RELAXED);
	__atomic_store_n(&cl->op, BATON_POOL_CLAIM_PUSH, __ATOMIC_RELEASE);
	/* The floor before the tickets are taken (Y5). */
	__atomic_store_n(&cl->floor, __atomic_load_n(c->tail, __ATOMIC_RELAXED),
			 __ATOMIC_RELEASE);
	t = __atomic_fetch_add(c->tail, n, __ATOMIC_ACQ_REL);
	__atomic_store_n(&cl->ticket, t, __ATOMIC_RELEASE);
	for (i = 0; i < n; i++) {
		struct baton_pool_qent *e = &c->q[(t + i) & (c->qcap - 1)];
		struct baton_pool_desc *d = &c->desc[BATON_POOL_H_INDEX(mh[i])];

		/*
		 * Free for our lap: at once unless a taker is slow or dead
		 * (or the word was scribbled: wait_seq()).
		 */
		wait_seq(p, cls, e, t + i);
		/*
		 * FREE only now, entry by entry: a buffer whose entry we never
		 * reach stays ours (OWNED or IDLE), and the kernel's reclaim
		 * walk returns it if we die waiting.
		 */
		__atomic_store_n(&d->aux, now, __ATOMIC_RELAXED);
		__atomic_store_n(&d->state,
				 BATON_POOL_STATE(v[i] >> 32, BATON_POOL_FREE, 0),
				 __ATOMIC_RELEASE);
		/*
		 * Y13: an IDLE buffer the decay may be giving back is
		 * published, for another holder to write, only after; past
		 * a stopped reap, this and the rest of the flush are kept,
		 * holes in their entries.
		 */
		baton__store_then_load();
		if (!stuck && __atomic_load_n(p->f.reap, __ATOMIC_RELAXED))
			stuck = reap_wait(p, 1);
		if (stuck && keep_from_flush(p, cls, v[i]))
			v[i] = BATON_POOL_NO_INDEX;
		__atomic_store_n(&e->value, v[i], __ATOMIC_RELAXED);
		/* Y1: the descriptors before the publication. */
		__atomic_store_n(&e->seq, t + i + 1, __ATOMIC_RELEASE);
	}
	claim_idle(cl);
	c->mag.n -= n;
	if (stuck)
		set_aside(p, stuck);
	baton__pool_wake_parked(p, cls);
}

/* ---- allocate and free ---- */

static int size_class(const struct baton_pool *p, size_t size)
{
	uint32_t i;

	for (i = 0; i < p->geo.nr_classes; i++)
		if (size <= (size_t)1 << p->f.cls[i].shift)
			return (int)i;
	return -1;
}

/*
 * The magazine of @cls is empty: buffers a repair made ours first, then
 * the queue, then on memfd a repair (a dead holder's buffers come back
 * when someone looks) before the caller says ENOMEM. What a repair on
 * the way adopted is freed before we return, so that it is nobody's
 * hoard.
 */
static void magazine_fill(struct baton_pool *p, uint32_t cls)
{
	struct baton_pool_cls *c = &p->f.cls[cls];
	uint32_t want = c->mag_cap > 2 ? c->mag_cap / 2 : 1;

	if (p->adopt_n)
		baton__pool_drain(p);
	if (!c->mag.n)
		refill_or_cold(p, cls, want);
	if (!c->mag.n && p->backend == BATON_BACKEND_MEMFD &&
	    baton__pool_memfd_repair(p) > 0) {
		baton__pool_drain(p);
		if (!c->mag.n)
			refill_or_cold(p, cls, want);
	}
	if (p->adopt_n)
		baton__pool_drain(p);
}

/* The inline allocation found the magazine empty (baton.h). */
int __baton_pool_alloc_slow(struct baton_pool *p, size_t size,
			    uint64_t *handle)
{
	struct baton_pool_cls *c;
	uint64_t h;
	int cls;

	if (!p || !handle)
		return -EINVAL;
	if (p->forked)
		return -EBADF;
	cls = size_class(p, size);
	if (cls < 0)
		return -E2BIG;
	c = &p->f.cls[cls];
	if (!c->mag.n)
		magazine_fill(p, (uint32_t)cls);
	if (!c->mag.n)
		return -ENOMEM;
	h = c->mag.handle[--c->mag.n];
	*handle = h;
	/* Y13, as the inline allocation. */
	__atomic_store_n(&c->desc[BATON_POOL_H_INDEX(h)].state,
			 (h & 0xffffffff00000000ULL) | p->f.owned,
			 __ATOMIC_RELAXED);
	baton__store_then_load();
	if (__atomic_load_n(p->f.reap, __ATOMIC_RELAXED))
		return __baton_pool_alloc_during_reap(p, handle);
	return 0;
}

/*
 * The inline allocation found the reap word set after its OWNED store:
 * the decay may be giving back the buffer's pages (Y13). Touch nothing
 * until it is done: then the buffer is ours, its pages old or new and
 * zeroed. The module clears the word within one reap (the word is in its
 * read-only header: nobody else writes it). On memfd the reaper is a
 * holder, which may die with the word set (reap_wait() clears a dead
 * one's), or stop: after REAP_STUCK_MS the buffer, and every magazine,
 * go aside until the word changes, and the caller gets one from the
 * free queue instead (ENOMEM if it has none).
 */
int __baton_pool_alloc_during_reap(struct baton_pool *p, uint64_t *handle)
{
	uint64_t stuck, h;
	uint32_t cls;
	size_t size;

	if (!p || !handle)
		return -EINVAL;
	if (p->forked)
		return -EBADF;	/* inherited or closed: no reap word left */
	stuck = reap_wait(p, 1);
	if (!stuck)
		return 0;
	h = *handle;
	cls = BATON_POOL_H_CLASS(h);
	if (cls >= p->geo.nr_classes)
		return -EINVAL;		/* not one the inline form popped */
	size = (size_t)1 << p->f.cls[cls].shift;
	keep_owned(p, cls, BATON_POOL_H_INDEX(h), BATON_POOL_H_GEN(h));
	set_aside(p, stuck);
	*handle = 0;
	/*
	 * ENOMEM if the queue is empty: what we keep aside comes back at the
	 * first slow path after the word moves (baton_pool_alloc_wait()
	 * parks in slices and looks again), and an allocation never waits
	 * for a reaper that may not run again.
	 */
	return __baton_pool_alloc_slow(p, size, handle);
}

/* The 2.7 form, for binaries built before 2.10: only waits. */
int __baton_pool_alloc_reaped(const struct baton_pool *p)
{
	reap_wait(p, 0);
	return 0;
}

/*
 * The inline free found the magazine full, or the handle not plainly
 * well-formed: every check again, then push and flush (baton.h).
 */
int __baton_pool_free_slow(struct baton_pool *p, uint64_t handle)
{
	struct baton_pool_cls *c = handle_class(p, handle);
	struct baton_pool_desc *d;
	uint32_t gen = BATON_POOL_H_GEN(handle);
	uint64_t s;

	if (p && p->forked)
		return -EBADF;
	if (!c)
		return -EINVAL;
	d = &c->desc[BATON_POOL_H_INDEX(handle)];
	s = __atomic_load_n(&d->state, __ATOMIC_ACQUIRE);
	if (s != BATON_POOL_STATE(gen, BATON_POOL_OWNED, p->f.holder + 1))
		return -ESTALE;
	/* Still ours, in the magazine; the old handle is stale from here. */
	__atomic_store_n(&d->state,
			 ((uint64_t)baton__pool_next_gen(gen) << 32) | p->f.idle,
			 __ATOMIC_RELEASE);
	c->mag.handle[c->mag.n++] =
		BATON_POOL_HANDLE(BATON_POOL_H_CLASS(handle),
				  BATON_POOL_H_INDEX(handle),
				  baton__pool_next_gen(gen));
	/* Overfull: back to half (none, for a class without magazines). */
	if (c->mag.n > c->mag_cap) {
		flush(p, BATON_POOL_H_CLASS(handle), c->mag.n - c->mag_cap / 2);
		/* memfd: what a repair in the flush adopted, freed too. */
		if (p->adopt_n)
			baton__pool_drain(p);
	}
	return 0;
}

/* The exported forms, for binaries built against 2.1 (baton.h inlines). */
int baton_pool_alloc(struct baton_pool *p, size_t size, uint64_t *handle)
{
	return baton__pool_alloc_inline(p, size, handle);
}

int baton_pool_free(struct baton_pool *p, uint64_t handle)
{
	return baton__pool_free_inline(p, handle);
}

/*
 * A parked allocator sleeps in slices: a wake is what makes it quick, the
 * slice what makes it certain (a count a dead parker left, a repair on
 * memfd that only a look performs). The module also wakes parkers when it
 * queues a dead holder's buffers.
 */
#define PARK_SLICE_KMOD_NS	(100ULL * 1000 * 1000)
#define PARK_SLICE_MEMFD_NS	(5ULL * 1000 * 1000)

/*
 * Not a cancellation point: a thread cancelled in its park would leave
 * the class's waiter count one high for good, a wake call on every later
 * flush of every holder. Cancellation is off for the call (a cancel
 * requested meanwhile acts at the next cancellation point after it);
 * a timeout, or a signal (-EINTR), ends it.
 */
static int alloc_wait(struct baton_pool *p, size_t size, uint64_t *handle,
		      int64_t timeout_ns)
{
	struct baton_pool_waiting *w;
	uint64_t deadline = 0, slice;
	int has, ret, cls;

	has = baton__deadline_from(timeout_ns, &deadline);
	cls = size_class(p, size);
	w = waiting_of(p, (uint32_t)cls);
	slice = p->backend == BATON_BACKEND_MEMFD ? PARK_SLICE_MEMFD_NS :
						    PARK_SLICE_KMOD_NS;
	for (;;) {
		uint64_t now = baton__now_ns(), until = now + slice;
		uint32_t seen;
		int slept = 0;

		if (has && now >= deadline)
			return -ETIMEDOUT;
		if (has && deadline < until)
			until = deadline;
		/* Y7: counted (a full barrier) before the last look. */
		__atomic_fetch_add(&w->waiters, 1, __ATOMIC_SEQ_CST);
		__atomic_store_n(&p->claim->parked, (uint32_t)cls + 1,
				 __ATOMIC_RELEASE);
		seen = __atomic_load_n(&w->wakes, __ATOMIC_ACQUIRE);
		ret = __baton_pool_alloc_slow(p, size, handle);
		if (ret == -ENOMEM)
			slept = park_on_class(p, (uint32_t)cls, seen, until);
		__atomic_store_n(&p->claim->parked, 0, __ATOMIC_RELEASE);
		__atomic_fetch_sub(&w->waiters, 1, __ATOMIC_SEQ_CST);
		if (ret != -ENOMEM)
			return ret;
		if (slept)
			return slept;
	}
}

int baton_pool_alloc_wait(struct baton_pool *p, size_t size, uint64_t *handle,
			  int64_t timeout_ns)
{
	int ret = baton__pool_alloc_inline(p, size, handle), cs;

	if (ret != -ENOMEM)
		return ret;
	if (!timeout_ns)
		return -ETIMEDOUT;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
	ret = alloc_wait(p, size, handle, timeout_ns);
	pthread_setcancelstate(cs, NULL);
	return ret;
}

/*
 * Remember buffer @index of class @cls, which a repair made OWNED by us
 * (a dead holder's, or our own at close), for baton__pool_drain(). If
 * the list cannot grow the buffer stays ours until our own close: our
 * detach walks every descriptor we own. 0, or -ENOMEM.
 */
int baton__pool_adopt_later(struct baton_pool *p, uint32_t cls, uint32_t index)
{
	if (p->adopt_n == p->adopt_cap) {
		uint32_t cap = p->adopt_cap ? 2 * p->adopt_cap : 64;
		uint64_t *a = realloc(p->adopt, cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		p->adopt = a;
		p->adopt_cap = cap;
	}
	p->adopt[p->adopt_n++] = (uint64_t)cls << 32 | index;
	return 0;
}

/*
 * Free every adopted buffer through our magazine. Its generation moved
 * when it was adopted (pool_memfd.c), so its old owner's handles, and a
 * receiver waiting on a message that names it, see it stale at once, not
 * only once we get here. Called only where no claim of ours is under way:
 * a flush uses the claim page. Nothing while a stopped reap holds the
 * list aside (set_aside()).
 */
void baton__pool_drain(struct baton_pool *p)
{
	while (p->adopt_n && !reap_holds_aside(p)) {
		uint64_t a = p->adopt[--p->adopt_n];
		uint32_t cls = (uint32_t)(a >> 32), index = (uint32_t)a;
		struct baton_pool_cls *c = &p->f.cls[cls];
		uint64_t s = __atomic_load_n(&c->desc[index].state,
					     __ATOMIC_RELAXED);

		if (s != BATON_POOL_STATE(BATON_POOL_S_GEN(s), BATON_POOL_OWNED,
					  p->f.holder + 1))
			continue;	/* scribbled since: never queued twice */
		c->mag.handle[c->mag.n++] =
			BATON_POOL_HANDLE(cls, index, BATON_POOL_S_GEN(s));
		if (c->mag.n > c->mag_cap)
			flush(p, cls, c->mag.n - c->mag_cap / 2);
	}
}

/* Every magazine to the free queues. */
void baton__pool_flush_all(struct baton_pool *p)
{
	uint32_t i;

	for (i = 0; i < p->geo.nr_classes; i++)
		while (p->f.cls[i].mag.n)
			flush(p, i, p->f.cls[i].mag.n);
}

/*
 * A class's COLD buffers now, counted in its descriptors, as the module's
 * netlink stats count them (no fast path calls this).
 */
static uint64_t count_cold(const struct baton_pool_cls *c)
{
	uint64_t n = 0;
	uint32_t k;

	for (k = 0; k < c->count; k++)
		n += BATON_POOL_S_KIND(__atomic_load_n(&c->desc[k].state,
						       __ATOMIC_RELAXED)) ==
		     BATON_POOL_COLD;
	return n;
}

static int pool_info(const struct baton_pool *p, struct baton_pool_info *info)
{
	uint32_t i;

	if (!p || !info)
		return -EINVAL;
	if (p->forked)
		return -EBADF;
	memset(info, 0, sizeof(*info));
	info->holder = p->f.holder;
	info->nr_classes = p->geo.nr_classes;
	info->decay_ms = p->geo.decay_ms;
	for (i = 0; i < p->geo.nr_classes; i++) {
		const struct baton_pool_cls *c = &p->f.cls[i];
		uint64_t q = __atomic_load_n(c->tail, __ATOMIC_RELAXED) -
			     __atomic_load_n(c->head, __ATOMIC_RELAXED);

		info->classes[i].buf_size = (uint64_t)1 << c->shift;
		info->classes[i].count = c->count;
		info->classes[i].free = q > c->count ? c->count : q;
		info->classes[i].cached = c->mag.n;
		info->cold[i] = count_cold(c);
	}
	info->reclaimed = __atomic_load_n(&p->hdr->reclaimed, __ATOMIC_RELAXED);
	info->repaired = __atomic_load_n(&p->hdr->repaired, __ATOMIC_RELAXED);
	info->decayed = __atomic_load_n(&p->hdr->decayed, __ATOMIC_RELAXED);
	info->decayed_bytes = __atomic_load_n(&p->hdr->decayed_bytes,
					      __ATOMIC_RELAXED);
	info->bad_words = __atomic_load_n(&p->hdr->bad_words, __ATOMIC_RELAXED);
	return 0;
}

/*
 * baton_pool_info() has two versions (libbaton.map): 2.5's struct ends
 * with cold[], and binaries built against 2.1..2.4 pass the struct as it
 * was, which is 2.5's up to cold[]. Each gets exactly its own size
 * written. A static link sees only the default (@@) version.
 */
#define POOL_INFO_SIZE_2_1	offsetof(struct baton_pool_info, cold)
/*
 * The size 2.1 shipped with on x86-64: 16 + 8 classes of 32 + 5 counters.
 * Other ABIs lay the same fields out their own way (i386 aligns uint64_t
 * to 4 in structs: 308), which the offset above follows.
 */
#if defined(__x86_64__) && defined(__LP64__)
_Static_assert(POOL_INFO_SIZE_2_1 == 312,
	       "struct baton_pool_info: 2.1's fields moved");
#endif

int baton__pool_info_2_5(const struct baton_pool *p,
			 struct baton_pool_info *info);
int baton__pool_info_2_1(const struct baton_pool *p, void *info);
__asm__(".symver baton__pool_info_2_5, baton_pool_info@@LIBBATON_2.5");
__asm__(".symver baton__pool_info_2_1, baton_pool_info@LIBBATON_2.1");

int baton__pool_info_2_5(const struct baton_pool *p,
			 struct baton_pool_info *info)
{
	return pool_info(p, info);
}

int baton__pool_info_2_1(const struct baton_pool *p, void *info)
{
	struct baton_pool_info full;
	int ret;

	if (!info)
		return -EINVAL;
	ret = pool_info(p, &full);
	if (!ret)
		memcpy(info, &full, POOL_INFO_SIZE_2_1);
	return ret;
}

/* ---- handing buffers over ---- */

/*
 * OWNED -> SENT by its owner, in flight in ring @ring_id (0: none known).
 * aux first: a buffer that came through a bound ring still carries that
 * ring's id, or a FREE time, and a stale id would let the module take a
 * buffer given on elsewhere when that ring goes (Y9). The release orders
 * the buffer's contents and aux before the state, and the state before
 * the publication that carries the handle.
 */
static void mark_sent(struct baton_pool *p, struct baton_pool_desc *d,
		      uint32_t gen, uint64_t ring_id)
{
	__atomic_store_n(&d->aux, ring_id, __ATOMIC_RELAXED);
	__atomic_store_n(&d->state,
			 BATON_POOL_STATE(gen, BATON_POOL_SENT, p->f.holder + 1),
			 __ATOMIC_RELEASE);
}

int baton_pool_give(struct baton_pool *p, uint64_t handle)
{
	struct baton_pool_cls *c = handle_class(p, handle);
	uint32_t gen = BATON_POOL_H_GEN(handle);
	struct baton_pool_desc *d;

	if (p && p->forked)
		return -EBADF;
	if (!c)
		return -EINVAL;
	d = &c->desc[BATON_POOL_H_INDEX(handle)];
	if (__atomic_load_n(&d->state, __ATOMIC_ACQUIRE) !=
	    BATON_POOL_STATE(gen, BATON_POOL_OWNED, p->f.holder + 1))
		return -ESTALE;
	mark_sent(p, d, gen, 0);
	return 0;
}

/*
 * SENT under @gen, as @s was read (acquire), to OWNED by us: 0, or
 * -ESTALE. A compare-and-swap: a sender that gives and takes back, or a
 * reclaim of a destroyed ring's buffers, races us, and whoever moves the
 * word first has the buffer.
 */
static int take_from(struct baton_pool *p, struct baton_pool_desc *d,
		     uint32_t gen, uint64_t s)
{
	if (BATON_POOL_S_KIND(s) != BATON_POOL_SENT ||
	    BATON_POOL_S_GEN(s) != gen)
		return -ESTALE;
	if (!__atomic_compare_exchange_n(
		    &d->state, &s,
		    BATON_POOL_STATE(gen, BATON_POOL_OWNED, p->f.holder + 1), 0,
		    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return -ESTALE;
	return 0;
}

int baton_pool_take(struct baton_pool *p, uint64_t handle)
{
	struct baton_pool_cls *c = handle_class(p, handle);
	uint32_t gen = BATON_POOL_H_GEN(handle);
	struct baton_pool_desc *d;

	if (p && p->forked)
		return -EBADF;
	if (!c)
		return -EINVAL;
	d = &c->desc[BATON_POOL_H_INDEX(handle)];
	return take_from(p, d, gen,
			 __atomic_load_n(&d->state, __ATOMIC_ACQUIRE));
}

struct pool_msg {
	uint64_t handle;
	uint64_t len;
};

/*
 * Tell the module, once per ring handle and pool (again when a handle
 * alternates pools), that buffers of @p are sent
 * through @r (BATON_RING_IOC_BIND_POOL), and learn the ring's id, which
 * baton_pool_send() leaves in a SENT buffer's aux word: a ring destroyed
 * with buffers still in flight in it gives those back. 0, or -ENOSPC: the
 * ring is bound to BATON_RING_POOLS_MAX other pools. On memfd the pool
 * handle watches the ring's file instead (pool_memfd.c); when it drops a
 * watch it takes a new serial (baton__pool_rebind()), so every ring binds
 * again and is watched again. A module without BATON_FEAT_RING_BIND
 * (ENOTTY), mixed backends, or a memfd handle that cannot watch (every
 * watch in use, or no /proc) leave the id 0: no ring known.
 */
static int bind_ring(struct baton_ring *r, struct baton_pool *p)
{
	uint64_t id = 0;
	int cs;

	if (r->pool_bound == p->serial)
		return 0;
	if (r->backend == BATON_BACKEND_KMOD &&
	    p->backend == BATON_BACKEND_KMOD) {
		struct baton_ring_bind b = { .size = sizeof(b),
					     .pool_fd = p->fd };

		if (!ioctl(r->fd, BATON_RING_IOC_BIND_POOL, &b))
			id = b.out_ring_id;
		else if (errno != ENOTTY)
			return -errno;
	} else if (r->backend == BATON_BACKEND_MEMFD &&
		   p->backend == BATON_BACKEND_MEMFD) {
		/* The watch's fd comes and goes under the open lock (fork). */
		cs = open_lock_take();
		id = baton__pool_memfd_watch(p, r);
		open_lock_give(cs);
	}
	r->pool_bound = p->serial;
	r->pool_ring_id = id;
	return 0;
}

void baton__pool_rebind(struct baton_pool *p)
{
	p->serial = __atomic_add_fetch(&pool_serials, 1, __ATOMIC_RELAXED);
}

/*
 * Send: the message first, the buffer SENT after (release: its contents,
 * then the state), so that the commit point of a hand-off is a word the
 * kernel sees. A sender that dies before the give leaves the buffer OWNED
 * by it: the module (memfd: the next repair) takes it back under a new
 * generation, and the receiver, which waits for SENT, gets -ESTALE. One
 * that dies after it has handed the buffer over. Never both, never
 * neither.
 */
static __attribute__((noinline)) int
send_common(struct baton_ring *r, struct baton_pool *p, uint64_t handle,
	    uint64_t len, int64_t timeout_ns)
{
	struct pool_msg m = { handle, len };
	struct baton_pool_cls *c = handle_class(p, handle);
	struct baton_pool_desc *d;
	uint32_t gen = BATON_POOL_H_GEN(handle);
	int ret;

	/* A handle inherited across fork() has no classes left. */
	if (!c)
		return p && p->forked ? -EBADF : -EINVAL;
	if (!r || r->slot_size < sizeof(m))
		return -EINVAL;
	d = &c->desc[BATON_POOL_H_INDEX(handle)];
	if (__atomic_load_n(&d->state, __ATOMIC_ACQUIRE) !=
	    BATON_POOL_STATE(gen, BATON_POOL_OWNED, p->f.holder + 1))
		return -ESTALE;
	ret = bind_ring(r, p);
	if (ret)
		return ret;
	if (r->kind == BATON_RING_MPSC)
		ret = baton_mpsc_push_timeout(r, &m, sizeof(m), timeout_ns);
	else
		ret = baton_spsc_push(r, &m, sizeof(m), timeout_ns);
	if (ret < 0)
		return ret;	/* not published: still ours */
	mark_sent(p, d, gen, r->pool_ring_id);
	return 0;
}

/*
 * What both short sends check first: a handle of ours, well-formed, whose
 * buffer we own, and a ring of @kind bound to this pool already with
 * slots that hold a message. 1 with the buffer's descriptor in *@dp; 0
 * when the full path decides (send_common(), which checks it all again
 * and says which errno).
 */
static inline int send_ready(struct baton_ring *r, struct baton_pool *p,
			     uint64_t handle, uint32_t kind,
			     struct baton_pool_desc **dp)
{
	struct baton_pool_cls *c = handle_class(p, handle);
	struct baton_pool_desc *d;

	if (!c || !baton__ring_is(r, kind, BATON_ROLE_PRODUCER) ||
	    r->slot_size < sizeof(struct pool_msg) ||
	    r->pool_bound != p->serial)
		return 0;
	d = &c->desc[BATON_POOL_H_INDEX(handle)];
	if (__atomic_load_n(&d->state, __ATOMIC_ACQUIRE) !=
	    BATON_POOL_STATE(BATON_POOL_H_GEN(handle), BATON_POOL_OWNED,
			     p->f.holder + 1))
		return 0;
	*dp = d;
	return 1;
}

/*
 * The usual send on an SPSC ring, in few instructions: send_ready(), and
 * room. Anything else is send_common()'s: nothing here has been changed
 * by then. 1 when it did the send.
 */
static inline int send_spsc_fast(struct baton_ring *r, struct baton_pool *p,
				 uint64_t handle, uint64_t len)
{
	struct baton_pool_desc *d;
	uint64_t idx, *slot;

	if (!send_ready(r, p, handle, BATON_RING_SPSC, &d) ||
	    !baton_spsc_prod_reserve(r, 1, &idx))
		return 0;
	/* Slots are 8-byte aligned: their size is a multiple of 8. */
	slot = baton_ring_slot(r, idx);
	slot[0] = handle;
	slot[1] = len;
	baton_spsc_prod_submit(r, 1);
	mark_sent(p, d, BATON_POOL_H_GEN(handle), r->pool_ring_id);
	return 1;
}

/*
 * The same on an MPSC ring: baton_mpsc_try_push() takes the next ticket
 * only when its slot is free, so a full ring leaves nothing taken for
 * send_common() to undo.
 */
static inline int
send_mpsc_fast(struct baton_ring *r, struct baton_pool *p, uint64_t handle,
	       uint64_t len)
{
	struct pool_msg m = { handle, len };
	struct baton_pool_desc *d;

	if (!send_ready(r, p, handle, BATON_RING_MPSC, &d) ||
	    baton_mpsc_try_push(r, &m, sizeof(m)))
		return 0;
	mark_sent(p, d, BATON_POOL_H_GEN(handle), r->pool_ring_id);
	return 1;
}

/* Everything but the SPSC short path: out of line, a tail call. */
static __attribute__((noinline)) int
send_other(struct baton_ring *r, struct baton_pool *p, uint64_t handle,
	   uint64_t len, int64_t timeout_ns)
{
	if (send_mpsc_fast(r, p, handle, len))
		return 0;
	return send_common(r, p, handle, len, timeout_ns);
}

int baton_pool_send(struct baton_ring *r, struct baton_pool *p,
		    uint64_t handle, uint64_t len, int64_t timeout_ns)
{
	if (send_spsc_fast(r, p, handle, len))
		return 0;
	return send_other(r, p, handle, len, timeout_ns);
}

/*
 * A receive's deadline, read from the clock only when a wait first needs
 * it: a receive whose message is there and committed reads no clock (a
 * clock read costs more than the rest of such a receive). The timeout
 * then runs from the first wait, not from the call, which differs by one
 * look at the ring.
 */
struct recv_deadline {
	int64_t timeout_ns;	/* the call's: < 0 for ever, 0 only looks */
	int armed;
	int has;
	uint64_t at;
};

/* Whether there is a deadline; the first call reads the clock. */
static int recv_deadline_arm(struct recv_deadline *dl)
{
	if (!dl->armed) {
		dl->has = baton__deadline_from(dl->timeout_ns, &dl->at);
		dl->armed = 1;
	}
	return dl->has;
}

/* A relative timeout for what is left of it (-1: none). */
static int64_t recv_deadline_left(struct recv_deadline *dl)
{
	uint64_t now;

	if (!recv_deadline_arm(dl))
		return -1;
	now = baton__now_ns();
	if (now >= dl->at)
		return 0;
	return dl->at - now > INT64_MAX ? INT64_MAX : (int64_t)(dl->at - now);
}

/*
 * Wait while the buffer of a message we peeked is OWNED by another holder
 * under @gen (its sender is between its push and its commit: give or
 * share), until @dl; on memfd ask for a repair now and then, since that
 * sender may be dead. 0 with *@state the state it left (acquire: the
 * buffer's contents are visible), -ESTALE (another generation, or ours:
 * the message is spent), or -ETIMEDOUT.
 */
static int await_commit_slow(struct baton_pool *p,
			     const struct baton_pool_desc *d, uint32_t gen,
			     struct recv_deadline *dl, uint64_t *state)
{
	unsigned int spins = 0;

	/* The wait begins here: its spins count against the timeout. */
	recv_deadline_arm(dl);
	for (;;) {
		uint64_t s = __atomic_load_n(&d->state, __ATOMIC_ACQUIRE);
		uint32_t holder = BATON_POOL_S_HOLDER(s);

		if (BATON_POOL_S_GEN(s) != gen)
			return -ESTALE;
		if (BATON_POOL_S_KIND(s) != BATON_POOL_OWNED) {
			*state = s;
			return 0;
		}
		/* ours, nobody's, or an index no holder has: none commits */
		if (!holder || holder == p->f.holder + 1 ||
		    holder > p->geo.max_holders)
			return -ESTALE;
		baton__pool_relax(&spins);
		if (spins < 4096)
			continue;
		if (p->backend == BATON_BACKEND_MEMFD)
			baton__pool_memfd_repair(p);
		if (!recv_deadline_left(dl))
			return -ETIMEDOUT;
	}
}

/* The usual case, a commit that came before we looked, without a call. */
static inline int await_commit(struct baton_pool *p,
			       const struct baton_pool_desc *d, uint32_t gen,
			       struct recv_deadline *dl, uint64_t *state)
{
	uint64_t s = __atomic_load_n(&d->state, __ATOMIC_ACQUIRE);

	if (BATON_POOL_S_GEN(s) == gen &&
	    BATON_POOL_S_KIND(s) != BATON_POOL_OWNED) {
		*state = s;
		return 0;
	}
	return await_commit_slow(p, d, gen, dl, state);
}

/*
 * Take a peeked message's buffer: 0, -ESTALE (spent), -ETIMEDOUT; from
 * the state await_commit() saw, without looking the handle up again.
 */
static int take_sent(struct baton_pool *p, uint64_t handle,
		     struct recv_deadline *dl)
{
	struct baton_pool_cls *c = handle_class(p, handle);
	uint32_t gen = BATON_POOL_H_GEN(handle);
	struct baton_pool_desc *d;
	uint64_t s;
	int ret;

	if (!c)
		return -ESTALE;
	d = &c->desc[BATON_POOL_H_INDEX(handle)];
	ret = await_commit(p, d, gen, dl, &s);
	return ret ? ret : take_from(p, d, gen, s);
}

/*
 * Whether a peeked message's buffer is shared with us: 0 (read it, then
 * baton_pool_put()), -ESTALE (not, or no longer: spent), -ETIMEDOUT.
 */
static int await_shared(struct baton_pool *p, uint64_t handle,
			struct recv_deadline *dl)
{
	struct baton_pool_cls *c = handle_class(p, handle);
	uint32_t gen = BATON_POOL_H_GEN(handle);
	const struct baton_pool_desc *d;
	uint64_t s, a;
	int ret;

	if (!c || p->f.holder >= BATON_POOL_SHARE_MAX)
		return -ESTALE;
	d = &c->desc[BATON_POOL_H_INDEX(handle)];
	ret = await_commit(p, d, gen, dl, &s);
	if (ret)
		return ret;
	if (s != BATON_POOL_STATE(gen, BATON_POOL_SHARED, 0))
		return -ESTALE;
	/* Y8: the mask was stored before the state we acquired. */
	a = __atomic_load_n(&d->aux, __ATOMIC_ACQUIRE);
	if ((uint32_t)(a >> 32) != gen || !((uint32_t)a >> p->f.holder & 1))
		return -ESTALE;
	return 0;
}

/*
 * memfd: a pool decays only from its holders' slow paths, and a stage
 * idle in baton_pool_recv() takes none (Documentation/pool.rst, "Decay
 * while receiving"). So such a wait comes out once a decay period (a
 * quarter of decay_ms, plus RECV_SLACK_MS: the ticks are timed by the
 * coarse clock, a jiffy behind, and a slice that ends before the tick
 * is due does nothing) to do the pool's maintenance, RECV_SLICES times:
 * twice the five ticks the decay needs to give back what was freed
 * before the wait began (a window of four records, the first of which
 * saw those buffers allocated). After that nothing this holder freed is
 * left for it, and the rest of the wait is one park; whatever others
 * free later, their own slow paths decay. The next wait's length in *@t:
 * the slice, or what is left. True if it is a slice (its timeout is not
 * the caller's).
 */
#define RECV_SLICES	10
#define RECV_SLACK_MS	5

static int recv_slice(const struct baton_pool *p, struct recv_deadline *dl,
		      int *slices, int64_t *t)
{
	int64_t period;

	*t = dl->timeout_ns ? recv_deadline_left(dl) : 0;
	if (!p || p->backend != BATON_BACKEND_MEMFD || !p->geo.decay_ms ||
	    !*slices || !*t)
		return 0;
	period = (int64_t)((p->geo.decay_ms / 4 < 5 ? 5 : p->geo.decay_ms / 4) +
			   RECV_SLACK_MS) * 1000000;
	if (*t > 0 && *t <= period)
		return 0;
	(*slices)--;
	*t = period;
	return 1;
}

/* The SPSC wait of peek_one(), in recv_slice()'s slices. */
static int peek_spsc_wait(struct baton_ring *r, struct baton_pool *p,
			  uint64_t *idx, struct recv_deadline *dl)
{
	int slices = RECV_SLICES, ret;
	int64_t t;

	for (;;) {
		int sliced = recv_slice(p, dl, &slices, &t);

		ret = baton_spsc_cons_peek_wait(r, 1, idx, t);
		if (ret != -ETIMEDOUT || !sliced)
			return ret;
		baton__pool_memfd_maintain(p, baton__pool_coarse_ms());
	}
}

/*
 * One message to peek at: 1, or a negative errno (-ETIMEDOUT: none came
 * by the deadline). A lost slot of an MPSC ring (a dead producer's
 * tombstone) carries nothing: pass it and wait on. The first look waits
 * for nothing, so a ready message costs no clock read. A long wait on
 * @p's behalf comes out now and then to maintain it (recv_slice()).
 */
static int peek_one(struct baton_ring *r, struct baton_pool *p,
		    uint64_t *idx, struct recv_deadline *dl)
{
	int slices = RECV_SLICES, sliced = 0;
	int64_t t = 0;
	int ret;

	if (r->kind != BATON_RING_MPSC) {
		/*
		 * The inline look first, and a timeout of 0 ends there (one
		 * look at the producer's index, not two); a handle it cannot
		 * use goes to the call, which says why.
		 */
		if (baton__ring_is(r, BATON_RING_SPSC, BATON_ROLE_CONSUMER)) {
			if (baton_spsc_cons_peek(r, 1, idx))
				return 1;
			if (!dl->timeout_ns)
				return -ETIMEDOUT;
		}
		return peek_spsc_wait(r, p, idx, dl);
	}
	ret = baton__ring_ok(r, BATON_RING_MPSC, BATON_ROLE_CONSUMER);
	while (!ret) {
		ret = baton__mpsc_peek_wait(r, idx, t);
		if (ret == -ETIMEDOUT && dl->timeout_ns &&
		    (!dl->armed || sliced)) {
			if (sliced)
				baton__pool_memfd_maintain(p, baton__pool_coarse_ms());
			sliced = recv_slice(p, dl, &slices, &t);
			ret = 0;
			continue;
		}
		if (ret != BATON_MPSC_LOST)
			break;
		r->tombstones_skipped++;
		baton_mpsc_cons_release(r);
		ret = 0;
		if (dl->armed)
			sliced = recv_slice(p, dl, &slices, &t);
	}
	return ret < 0 ? ret : 1;
}

/*
 * Receive: peek the message, take its buffer (or, @shared, see it shared
 * with us), and only then release the slot, so that a receiver that dies
 * before its take leaves the message (and the SENT buffer) for the ring's
 * next consumer, and one that dies after it leaves the buffer OWNED by
 * it, for the module to take back (shared: its bit, for the module to
 * clear).
 */
static __attribute__((noinline)) int
recv_common(struct baton_ring *r, struct baton_pool *p, uint64_t *handle,
	    uint64_t *len, int64_t timeout_ns, int shared)
{
	struct recv_deadline dl = { .timeout_ns = timeout_ns };
	struct pool_msg m;
	uint64_t idx;
	int ret;

	if (!r || !p || !handle || !len || r->slot_size < sizeof(m))
		return -EINVAL;
	if (p->forked)
		return -EBADF;
	ret = peek_one(r, p, &idx, &dl);
	if (ret < 0)
		return ret;
	memcpy(&m, baton_ring_slot(r, idx), sizeof(m));
	*handle = m.handle;
	*len = m.len;
	if (shared)
		ret = await_shared(p, m.handle, &dl);
	else
		ret = take_sent(p, m.handle, &dl);
	/* memfd: what a repair in the wait took back, for everyone again. */
	if (p->adopt_n)
		baton__pool_drain(p);
	if (ret == -ETIMEDOUT)
		return ret;
	if (r->kind == BATON_RING_MPSC)
		baton_mpsc_cons_release(r);
	else
		baton_spsc_cons_release(r, 1);
	return ret;
}

/*
 * What both short receives do once a message is there, in slot @idx:
 * take its buffer if it is committed (SENT under the handle's
 * generation; the compare-and-swap of take_from()). 1 when taken, with
 * *@handle and *@len set; 0 when anything else (a forged handle, a sender
 * between its push and its give, a lost race, a forked handle) is for
 * recv_common(), which looks at the same message again: nothing here has
 * been changed by then. The caller releases the slot.
 */
static inline int take_peeked(struct baton_ring *r, struct baton_pool *p,
			      uint64_t idx, uint64_t *handle, uint64_t *len)
{
	struct baton_pool_cls *c;
	struct baton_pool_desc *d;
	struct pool_msg m;

	memcpy(&m, baton_ring_slot(r, idx), sizeof(m));
	c = handle_class(p, m.handle);
	if (!c)
		return 0;
	d = &c->desc[BATON_POOL_H_INDEX(m.handle)];
	/* Acquire: the buffer's contents, which the sender's give released. */
	if (take_from(p, d, BATON_POOL_H_GEN(m.handle),
		      __atomic_load_n(&d->state, __ATOMIC_ACQUIRE)))
		return 0;
	*handle = m.handle;
	*len = m.len;
	if (p->adopt_n)
		baton__pool_drain(p);
	return 1;
}

/* Whether the arguments suit a short receive on a ring of @kind. */
static inline int recv_ready(const struct baton_ring *r,
			     const struct baton_pool *p, const uint64_t *handle,
			     const uint64_t *len, uint32_t kind)
{
	return baton__ring_is(r, kind, BATON_ROLE_CONSUMER) && p && handle &&
	       len && r->slot_size >= sizeof(struct pool_msg);
}

/*
 * The usual receive on an SPSC ring, in few instructions: a message is
 * there and take_peeked() takes it. 1 when it did the receive, 0 to go on
 * (recv_other()), or -ETIMEDOUT: no message, and the caller only looks.
 */
static inline int recv_spsc_fast(struct baton_ring *r, struct baton_pool *p,
				 uint64_t *handle, uint64_t *len,
				 int64_t timeout_ns)
{
	uint64_t idx;

	if (!recv_ready(r, p, handle, len, BATON_RING_SPSC))
		return 0;
	if (!baton_spsc_cons_peek(r, 1, &idx))
		return !timeout_ns && !p->forked ? -ETIMEDOUT : 0;
	if (!take_peeked(r, p, idx, handle, len))
		return 0;
	baton_spsc_cons_release(r, 1);
	return 1;
}

/*
 * The same on an MPSC ring, for a message that is there: no message, or
 * a tombstone next, is recv_common()'s.
 */
static inline int
recv_mpsc_fast(struct baton_ring *r, struct baton_pool *p, uint64_t *handle,
	       uint64_t *len)
{
	uint64_t idx;

	if (!recv_ready(r, p, handle, len, BATON_RING_MPSC) ||
	    baton_mpsc_cons_peek(r, &idx) ||
	    !take_peeked(r, p, idx, handle, len))
		return 0;
	baton_mpsc_cons_release(r);
	return 1;
}

/* Everything but the SPSC short path: out of line, a tail call. */
static __attribute__((noinline)) int
recv_other(struct baton_ring *r, struct baton_pool *p, uint64_t *handle,
	   uint64_t *len, int64_t timeout_ns)
{
	if (recv_mpsc_fast(r, p, handle, len))
		return 0;
	return recv_common(r, p, handle, len, timeout_ns, 0);
}

int baton_pool_recv(struct baton_ring *r, struct baton_pool *p,
		    uint64_t *handle, uint64_t *len, int64_t timeout_ns)
{
	int ret = recv_spsc_fast(r, p, handle, len, timeout_ns);

	if (ret)
		return ret < 0 ? ret : 0;
	return recv_other(r, p, handle, len, timeout_ns);
}

/* ---- fan-out: one buffer, several readers (Documentation/pool.rst) ---- */

/*
 * Whether the module clears a dead reader's bit (BATON_FEAT_POOL_SHARE);
 * without it a reader's death would keep a shared buffer for ever.
 * memfd pools need nothing: their repair does it.
 */
static int module_clears_readers(void)
{
	return !!(module_features() & BATON_FEAT_POOL_SHARE);
}

/* The checks of a share; 0, or the errno to return. */
static int share_check(struct baton_pool *p, uint64_t handle,
		       const struct baton_pool_desc **dp)
{
	struct baton_pool_cls *c = handle_class(p, handle);
	const struct baton_pool_desc *d;

	if (p && p->forked)
		return -EBADF;
	if (!c)
		return -EINVAL;
	if (p->backend == BATON_BACKEND_KMOD && !module_clears_readers())
		return -EOPNOTSUPP;
	d = &c->desc[BATON_POOL_H_INDEX(handle)];
	if (__atomic_load_n(&d->state, __ATOMIC_ACQUIRE) !=
	    BATON_POOL_STATE(BATON_POOL_H_GEN(handle), BATON_POOL_OWNED,
			     p->f.holder + 1))
		return -ESTALE;
	*dp = d;
	return 0;
}

/*
 * The commit point of a fan-out (Y8): the mask, then SHARED (release: the
 * buffer's contents and the mask before the state a reader acquires).
 */
static void share_commit(struct baton_pool_desc *d, uint64_t handle,
			 uint32_t readers)
{
	uint32_t gen = BATON_POOL_H_GEN(handle);

	__atomic_store_n(&d->aux, BATON_POOL_SHARE_AUX(gen, readers),
			 __ATOMIC_RELAXED);
	__atomic_store_n(&d->state,
			 BATON_POOL_STATE(gen, BATON_POOL_SHARED, 0),
			 __ATOMIC_RELEASE);
}

int baton_pool_share(struct baton_pool *p, uint64_t handle, uint64_t readers)
{
	const struct baton_pool_desc *d;
	int ret;

	if (!p || !readers || readers >> BATON_POOL_SHARE_MAX ||
	    (p->geo.max_holders < BATON_POOL_SHARE_MAX &&
	     readers >> p->geo.max_holders))
		return -EINVAL;
	ret = share_check(p, handle, &d);
	if (ret)
		return ret;
	share_commit((struct baton_pool_desc *)d, handle, (uint32_t)readers);
	return 0;
}

/*
 * Clear @bits in the readers' mask of a SHARED descriptor under @gen (Y8:
 * a compare-and-swap that also checks the generation in the same word,
 * so a stale caller never clears a bit of a later share; acq_rel). It
 * retries only when another reader's put (or a clear) landed first: at
 * most once per reader of the share. 0 with *@left the bits still set,
 * or -ESTALE when the word is another generation's or has none of @bits.
 */
static int clear_readers(struct baton_pool_desc *d, uint32_t gen, uint32_t bits,
			 uint32_t *left)
{
	uint64_t a = __atomic_load_n(&d->aux, __ATOMIC_ACQUIRE);

	do {
		if ((uint32_t)(a >> 32) != gen || !((uint32_t)a & bits))
			return -ESTALE;
	} while (!__atomic_compare_exchange_n(&d->aux, &a, a & ~(uint64_t)bits,
					      0, __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
	*left = (uint32_t)a & ~bits;
	return 0;
}

/*
 * The readers' mask of a SHARED buffer became empty by our hand (acquire:
 * every reader's reads are done): the buffer becomes ours to free, unless
 * the module or a repair, finding the mask empty, freed it first; then it
 * is gone already, and so is our part. 0, or baton_pool_free()'s error.
 */
static int free_emptied(struct baton_pool *p, struct baton_pool_desc *d,
			uint64_t handle)
{
	uint32_t gen = BATON_POOL_H_GEN(handle);
	uint64_t s = BATON_POOL_STATE(gen, BATON_POOL_SHARED, 0);

	if (!__atomic_compare_exchange_n(
		    &d->state, &s,
		    BATON_POOL_STATE(gen, BATON_POOL_OWNED, p->f.holder + 1), 0,
		    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return 0;
	return baton_pool_free(p, handle);
}

int baton_pool_put(struct baton_pool *p, uint64_t handle)
{
	struct baton_pool_cls *c = handle_class(p, handle);
	uint32_t gen = BATON_POOL_H_GEN(handle), left;
	struct baton_pool_desc *d;

	if (p && p->forked)
		return -EBADF;
	if (!c)
		return -EINVAL;
	if (p->f.holder >= BATON_POOL_SHARE_MAX)
		return -ESTALE;
	d = &c->desc[BATON_POOL_H_INDEX(handle)];
	if (__atomic_load_n(&d->state, __ATOMIC_ACQUIRE) !=
	    BATON_POOL_STATE(gen, BATON_POOL_SHARED, 0))
		return -ESTALE;
	if (clear_readers(d, gen, 1U << p->f.holder, &left))
		return -ESTALE;
	return left ? 0 : free_emptied(p, d, handle);
}

/* Index @k's life word (uapi: BATON_POOL_CLAIM_LIFE). */
static const uint64_t *life_word(const struct baton_pool *p, uint32_t k)
{
	return (const uint64_t *)(p->ctl + p->geo.claim_off +
				  (uint64_t)k * 4096 + BATON_POOL_CLAIM_LIFE);
}

/*
 * After a share: a reader whose index was released (or taken by another
 * holder) since @life0 was read may have been walked before the share,
 * and then nobody gives up its part. Y8: the share, a full barrier, then
 * the loads of the life words, against the release's store, full
 * barrier, walk: one of the two sees the other. Clearing is idempotent,
 * so both may. Then, if the mask is empty, the buffer is ours to free.
 */
static void settle_released(struct baton_pool *p, struct baton_pool_desc *d,
			    uint64_t handle,
			    const struct baton_pool_reader *readers,
			    uint32_t got, const uint64_t *life0)
{
	uint32_t i, gone = 0, left;

	baton__full_fence();
	for (i = 0; i < BATON_POOL_SHARE_MAX; i++) {
		uint64_t v;

		if (!(got >> i & 1))
			continue;
		v = __atomic_load_n(life_word(p, readers[i].holder),
				    __ATOMIC_ACQUIRE);
		if (v != life0[i] || !(v & 1))
			gone |= 1U << readers[i].holder;
	}
	if (gone && !clear_readers(d, BATON_POOL_H_GEN(handle), gone, &left) &&
	    !left)
		free_emptied(p, d, handle);
}

int baton_pool_send_shared(struct baton_pool *p, uint64_t handle, uint64_t len,
			   const struct baton_pool_reader *readers, uint32_t n,
			   int64_t timeout_ns, uint32_t *got)
{
	uint64_t life0[BATON_POOL_SHARE_MAX];
	struct pool_msg m = { handle, len };
	const struct baton_pool_desc *d;
	uint32_t i, mask = 0, ok = 0;
	int ret, first = 0;

	if (got)
		*got = 0;
	if (!p || !readers || !n || n > BATON_POOL_SHARE_MAX)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		/* A ring for each, slots for a message, distinct holders. */
		if (!readers[i].ring || readers[i].ring->slot_size < sizeof(m) ||
		    readers[i].reserved ||
		    readers[i].holder >= BATON_POOL_SHARE_MAX ||
		    readers[i].holder >= p->geo.max_holders ||
		    mask >> readers[i].holder & 1)
			return -EINVAL;
		mask |= 1U << readers[i].holder;
	}
	ret = share_check(p, handle, &d);
	if (ret)
		return ret;
	/* Whose index is whose now, before any of them can learn of it. */
	for (i = 0; i < n; i++)
		life0[i] = __atomic_load_n(life_word(p, readers[i].holder),
					   __ATOMIC_ACQUIRE);
	/* The messages first, the share after: see baton_pool_send(). */
	mask = 0;
	for (i = 0; i < n; i++) {
		struct baton_ring *r = readers[i].ring;

		if (r->kind == BATON_RING_MPSC)
			ret = baton_mpsc_push_timeout(r, &m, sizeof(m),
						      timeout_ns);
		else
			ret = baton_spsc_push(r, &m, sizeof(m), timeout_ns);
		if (ret < 0) {
			first = first ? first : ret;
			continue;	/* one slow or dead reader: not the rest */
		}
		ok |= 1U << i;
		mask |= 1U << readers[i].holder;
	}
	if (got)
		*got = ok;
	if (!mask)
		return first;	/* nobody got it: still ours */
	share_commit((struct baton_pool_desc *)d, handle, mask);
	settle_released(p, (struct baton_pool_desc *)d, handle, readers, ok,
			life0);
	return first;
}

int baton_pool_recv_shared(struct baton_ring *r, struct baton_pool *p,
			   uint64_t *handle, uint64_t *len, int64_t timeout_ns)
{
	return recv_common(r, p, handle, len, timeout_ns, 1);
}

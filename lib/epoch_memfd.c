// SPDX-License-Identifier: MIT
/*
 * libbaton epoch domains on the memfd backend: the same layout in the
 * tmpfs file /dev/shm/baton-epoch.<name>, with the library as collector.
 *
 * The file is the header page, then max_participants regions of
 * part_stride bytes (announcement, queue tail, queue head, the pid of
 * the registrant, entries), exactly the kmod layout. Every process maps
 * all of it read-write: the collector, whoever runs it, writes the
 * header and the queue heads.
 *
 * Participant slots: an OFD write lock on byte BATON_EPOCH_LOCK_BASE + i
 * (far beyond the end of the file; locks need no data) is participant
 * i's registration. It goes with the open file description, so with
 * process death too: a collector that finds the byte unlocked treats the
 * announcement as gone (it still drains the slot's queue, and a new
 * registrant skips slots with pending entries, so nothing is lost).
 * The collector's lock, an OFD write lock on BATON_EPOCH_LOCK_BASE - 1,
 * keeps the cycles of different open file descriptions apart, not those
 * of one (threads sharing a handle, a parent and its child): cycles may
 * overlap, and each is safe beside the others (collect()).
 * Every handle, registered or not, holds an OFD read lock on
 * BATON_EPOCH_LOCK_BASE - 2 (HANDLE_LOCK) from create or open until it
 * closes: what tells batonctl that a domain nobody holds is stale.
 *
 * A cycle is the kernel's (kmod/epoch.c has the proof): drain what the
 * previous cycle proved, publish global + 1, then
 * membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) as P and Q (every process
 * that opens a domain registers for it), then scan.
 *
 * Synchronize raises hdr->sync_epoch to the epoch it waits on (readers
 * that announced at or below it kick on exit, no others: see
 * kmod/epoch.c, baton_epoch_waiters()), counts itself in sync_waiters,
 * runs cycles and sleeps on a futex on hdr->wake_seq between them (at
 * most 10 ms: a backstop); the kick bumps wake_seq and wakes it.
 *
 * What this backend cannot do (Documentation/epoch.rst): no
 * role-scoped mappings (any opener can scribble on everything, the
 * header included), no kernel-checked permissions beyond the file mode,
 * holder pids as the registrant wrote them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "epoch_internal.h"

#define SHM_DIR			"/dev/shm"
#define SHM_PREFIX		"baton-epoch."
#define BATON_EPOCH_LOCK_BASE	(1LL << 40)
#define BACKSTOP_NS		(10ULL * 1000 * 1000)
/* Shared by every open handle (file comment); batonctl tests it. */
#define HANDLE_LOCK		(BATON_EPOCH_LOCK_BASE - 2)

static int path_of(char *buf, size_t len, const char *name)
{
	int ret = baton__name_valid(name);

	if (ret)
		return ret;
	snprintf(buf, len, "%s/%s%s", SHM_DIR, SHM_PREFIX, name);
	return 0;
}

static void layout(uint32_t max, uint32_t qlen, struct baton_epoch_offsets *o,
		   uint64_t *total)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t part = BATON_EPOCH_L_ENTRIES +
			(uint64_t)qlen * sizeof(struct baton_epoch_entry);

	part = (part + page - 1) / page * page;
	memset(o, 0, sizeof(*o));
	o->hdr_mmap = 0;
	o->self_mmap = page;	/* unused here: the whole file is mapped */
	o->table_mmap = page;
	o->hdr_size = (uint32_t)page;
	o->self_size = (uint32_t)part;
	o->table_size = (uint64_t)max * part;
	o->part_stride = (uint32_t)part;
	o->ann = BATON_EPOCH_L_ANN;
	o->q_tail = BATON_EPOCH_L_TAIL;
	o->q_head = BATON_EPOCH_L_HEAD;
	o->q_entries = BATON_EPOCH_L_ENTRIES;
	o->queue_len = qlen;
	*total = page + o->table_size;
}

static int lock_byte(int fd, long long at, int wait, int type)
{
	struct flock fl = {
		.l_type = (short)type,
		.l_whence = SEEK_SET,
		.l_start = (off_t)at,
		.l_len = 1,
	};

	while (fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl))
		if (errno != EINTR)
			return errno == EAGAIN || errno == EACCES ? -EBUSY :
								    -errno;
	return 0;
}

/* Is participant @i registered by some other open file description? */
static int slot_held(int fd, int i)
{
	struct flock fl = {
		.l_type = F_WRLCK,
		.l_whence = SEEK_SET,
		.l_start = (off_t)(BATON_EPOCH_LOCK_BASE + i),
		.l_len = 1,
	};

	if (fcntl(fd, F_OFD_GETLK, &fl))
		return 1;	/* cannot tell: keep counting it */
	return fl.l_type != F_UNLCK;
}

static int map_file(struct baton_epoch *d, uint64_t total)
{
	void *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, d->fd,
		       0);

	if (p == MAP_FAILED)
		return -errno;
	d->map[0].addr = p;
	d->map[0].len = total;
	d->hdr = p;
	d->global = (const uint64_t *)&d->hdr->global;
	d->sync_epoch = (const uint64_t *)&d->hdr->sync_epoch;
	return 0;
}

static uint8_t *part_region(struct baton_epoch *d, uint32_t i)
{
	return (uint8_t *)d->map[0].addr + d->off.table_mmap +
	       (uint64_t)i * d->off.part_stride;
}

int baton__epoch_memfd_create(const char *name,
			      const struct baton_epoch_params *p,
			      struct baton_epoch *d)
{
	char path[sizeof(SHM_DIR) + sizeof(SHM_PREFIX) + BATON_NAME_MAX];
	struct baton_epoch_hdr hdr;
	uint64_t total;
	int ret;

	ret = path_of(path, sizeof(path), name);
	if (ret)
		return ret;
	ret = baton__memfd_membarrier_register();
	if (ret)
		return ret;
	d->fd = open(SHM_DIR, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (d->fd < 0)
		return errno == ENOENT ? -ENODEV : -errno;
	if (fchmod(d->fd, p->mode))
		return -errno;
	layout(p->max_participants, p->queue_len, &d->off, &total);
	if (ftruncate(d->fd, (off_t)total))
		return -errno;
	ret = baton__shm_reserve(d->fd, total);
	if (ret)
		return ret;
	memset(&hdr, 0, sizeof(hdr));
	hdr.magic = BATON_EPOCH_MAGIC;
	hdr.abi_version = BATON_ABI_VERSION;
	hdr.max_participants = p->max_participants;
	hdr.queue_len = p->queue_len;
	hdr.global = 1;
	hdr.frontier = 0;
	hdr.off = d->off;
	/* Still unnamed: nobody sees a partial header. */
	if (pwrite(d->fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr))
		return -EIO;
	/* Held before the name exists: never seen stale while we live. */
	ret = lock_byte(d->fd, HANDLE_LOCK, 0, F_RDLCK);
	if (ret)
		return ret;
	ret = baton__shm_link(d->fd, path);
	if (ret)
		return ret;
	d->max_participants = p->max_participants;
	return map_file(d, total);
}

int baton__epoch_memfd_open(const char *name, struct baton_epoch *d)
{
	char path[sizeof(SHM_DIR) + sizeof(SHM_PREFIX) + BATON_NAME_MAX];
	struct baton_epoch_hdr hdr;
	struct stat st;
	int ret;

	ret = path_of(path, sizeof(path), name);
	if (ret)
		return ret;
	ret = baton__memfd_membarrier_register();
	if (ret)
		return ret;
	d->fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (d->fd < 0)
		return -errno;
	/* Read once, check, keep our copy: any opener may have written it. */
	if (fstat(d->fd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_size < (off_t)sizeof(hdr) ||
	    pread(d->fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr))
		return -EPROTO;
	if (hdr.magic != BATON_EPOCH_MAGIC ||
	    hdr.abi_version != BATON_ABI_VERSION ||
	    baton__epoch_params_valid(hdr.max_participants, hdr.queue_len) ||
	    baton__epoch_offsets_valid(&hdr.off, hdr.max_participants,
				       hdr.queue_len, (uint64_t)st.st_size))
		return -EPROTO;
	d->off = hdr.off;
	d->max_participants = hdr.max_participants;
	ret = lock_byte(d->fd, HANDLE_LOCK, 0, F_RDLCK);
	if (ret)
		return ret;
	return map_file(d, d->off.table_mmap + d->off.table_size);
}

int baton__epoch_memfd_unlink(const char *name)
{
	char path[sizeof(SHM_DIR) + sizeof(SHM_PREFIX) + BATON_NAME_MAX];
	int ret = path_of(path, sizeof(path), name);

	if (ret)
		return ret;
	if (unlink(path))
		return errno == EPERM ? -EACCES : -errno;
	return 0;
}

int baton__epoch_memfd_register(struct baton_epoch *d)
{
	uint32_t i;

	for (i = 0; i < d->max_participants; i++) {
		uint8_t *r = part_region(d, i);
		uint64_t *tail = (uint64_t *)(r + d->off.q_tail);
		uint64_t *head = (uint64_t *)(r + d->off.q_head);

		if (lock_byte(d->fd, BATON_EPOCH_LOCK_BASE + i, 0, F_WRLCK))
			continue;
		/* A dead participant's pending entries are still honoured. */
		if (__atomic_load_n(tail, __ATOMIC_ACQUIRE) !=
		    __atomic_load_n(head, __ATOMIC_ACQUIRE)) {
			lock_byte(d->fd, BATON_EPOCH_LOCK_BASE + i, 0, F_UNLCK);
			continue;
		}
		__atomic_store_n((uint64_t *)(r + d->off.ann), 0,
				 __ATOMIC_RELAXED);
		__atomic_store_n((uint32_t *)(r + BATON_EPOCH_L_PID),
				 (uint32_t)getpid(), __ATOMIC_RELAXED);
		baton__epoch_bind(d, r, (int)i);
		return (int)i;
	}
	return -ENOSPC;
}

static uint64_t drain_part(struct baton_epoch *d, uint8_t *r, uint64_t proven)
{
	uint64_t *head_p = (uint64_t *)(r + d->off.q_head);
	struct baton_epoch_entry *ents =
		(struct baton_epoch_entry *)(r + d->off.q_entries);
	uint64_t head0 = __atomic_load_n(head_p, __ATOMIC_RELAXED), head = head0;
	/* W, matches the retirer's release of tail. */
	uint64_t tail = __atomic_load_n((uint64_t *)(r + d->off.q_tail),
					__ATOMIC_ACQUIRE);
	uint64_t n = 0, g = __atomic_load_n(&d->hdr->global, __ATOMIC_RELAXED);

	if (tail - head > d->off.queue_len)
		return 0;
	while (head != tail) {
		uint64_t e = __atomic_load_n(&ents[head & (d->off.queue_len - 1)].epoch,
					     __ATOMIC_RELAXED);

		if (e > g || e > proven)
			break;
		head++;
		n++;
	}
	/*
	 * X: entry reads done before the slots may be reused. From the value
	 * read only: a cycle beside ours (collect()) may have drained these
	 * entries and moved the head further; it counts them, and a plain
	 * store would move the head back.
	 */
	if (n && !__atomic_compare_exchange_n(head_p, &head0, head, 0,
					      __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED))
		n = 0;
	return n;
}

/* Bump wake_seq and wake whoever sleeps on it (a kick, or a cycle's end). */
static void wake_waiters(struct baton_epoch_hdr *h)
{
	__atomic_fetch_add(&h->wake_seq, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &h->wake_seq, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/*
 * frontier = max(frontier, @f), the frontier it leaves. A locked RMW, a
 * full barrier: the store half of collect()'s store then load.
 */
static uint64_t frontier_raise(struct baton_epoch_hdr *h, uint64_t f)
{
	uint64_t cur = __atomic_load_n(&h->frontier, __ATOMIC_RELAXED);

	while (cur < f &&
	       !__atomic_compare_exchange_n(&h->frontier, &cur, f, 1,
					    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		;
	return cur < f ? f : cur;
}

/*
 * One collection cycle under the collector's lock: drain, publish, the
 * barrier, the scan. A cycle that moved the frontier wakes the waiters
 * (synchronizers, waitsets): one that polled while this cycle held the
 * lock answered from the old frontier and may be asleep already, with
 * the reader's kick spent on us. Store then load on both sides: the
 * frontier's compare-and-swap and the sync_waiters load are seq_cst (a
 * locked RMW), the waiter's increment is a locked RMW followed by its
 * membarrier before it looks; a slow path either way. @wait: wait for
 * the lock, or -EBUSY if another open file description holds it.
 *
 * The lock keeps other open file descriptions out, not threads that
 * share our handle (nor a parent and the child that inherited it): OFD
 * locks of one description never conflict. So a cycle is safe beside
 * another: it publishes global + 1 only over the value it read (else it
 * starts again: the other cycle got there first), and the frontier and
 * the queue heads only move forward, each by a compare-and-swap from the
 * value read. A cycle's proof needs only its own epoch: a reader that
 * entered after its barrier announces that epoch or a later one, and one
 * that entered before it is in its scan.
 */
static int collect(struct baton_epoch *d, int wait, uint64_t *frontier,
		   uint64_t *completed, int *holder)
{
	struct baton_epoch_hdr *h = (struct baton_epoch_hdr *)d->hdr;
	uint64_t proven, g, min, n = 0, f;
	int ret, who = -1;
	uint32_t i;

	ret = lock_byte(d->fd, BATON_EPOCH_LOCK_BASE - 1, wait, F_WRLCK);
	if (ret)
		return ret;
again:
	proven = __atomic_load_n(&h->frontier, __ATOMIC_ACQUIRE);
	g = __atomic_load_n(&h->global, __ATOMIC_RELAXED);
	/* 1. Drain what a cycle before proved. */
	for (i = 0; i < d->max_participants; i++)
		n += drain_part(d, part_region(d, i), proven);
	/* 2. Publish, then P and Q: membarrier on every CPU. */
	if (!__atomic_compare_exchange_n(&h->global, &g, g + 1, 0,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		goto again;
	min = ++g;
	ret = baton__memfd_barrier();
	if (ret)
		goto out;
	/* 3. Scan (R): live participants only, each word read once. */
	for (i = 0; i < d->max_participants; i++) {
		uint8_t *r = part_region(d, i);
		uint64_t ann = __atomic_load_n((uint64_t *)(r + d->off.ann),
					       __ATOMIC_RELAXED);
		uint64_t e;

		if (!(ann & BATON_EPOCH_ANN_ACTIVE))
			continue;
		if ((int)i != d->index && !slot_held(d->fd, (int)i))
			continue;	/* its owner is gone */
		e = ann >> 1;
		/*
		 * Epoch 0 is as impossible as one above the global (read
		 * after the word: a cycle beside ours may have published
		 * past g, and a reader entered under it): min - 1 wraps.
		 */
		if (!e || e > __atomic_load_n(&h->global, __ATOMIC_RELAXED)) {
			__atomic_fetch_add(&h->bad_words, 1, __ATOMIC_RELAXED);
			e = proven + 1;
		}
		if (e < min) {
			min = e;
			who = (int)i;
		}
	}
	f = frontier_raise(h, min - 1 > proven ? min - 1 : proven);
	__atomic_fetch_add(&h->collections, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&h->completed, n, __ATOMIC_RELAXED);
	if (f > proven && __atomic_load_n(&h->sync_waiters, __ATOMIC_SEQ_CST))
		wake_waiters(h);
	if (frontier)
		*frontier = f;
	if (completed)
		*completed = n;
	if (holder)
		*holder = who;
out:
	lock_byte(d->fd, BATON_EPOCH_LOCK_BASE - 1, 0, F_UNLCK);
	return ret;
}

int baton__epoch_memfd_collect(struct baton_epoch *d, uint64_t *frontier,
			       uint64_t *completed, int *holder)
{
	return collect(d, 1, frontier, completed, holder);
}

/*
 * baton_epoch_poll()'s cycle, which never blocks: -EBUSY when another
 * opener holds the collector's lock (a cycle under way, or an opener
 * stopped in one), and the caller answers from the frontier alone.
 */
int baton__epoch_memfd_try_collect(struct baton_epoch *d, uint64_t *frontier)
{
	return collect(d, 0, frontier, NULL, NULL);
}

/*
 * hdr->sync_epoch = max(it, @epoch): the word only grows, so racing
 * synchronizers need no lock and none can lower another's.
 */
static void raise_sync_epoch(struct baton_epoch_hdr *h, uint64_t epoch)
{
	uint64_t cur = __atomic_load_n(&h->sync_epoch, __ATOMIC_RELAXED);

	while (cur < epoch &&
	       !__atomic_compare_exchange_n(&h->sync_epoch, &cur, epoch, 1,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/*
 * A waitset's arm (lib/waitset.c), as a synchronizer's: raised before
 * the cycles whose IPIs (Q) order it for the readers' exits (T), so a
 * reader that held @epoch or older kicks wake_seq when it leaves.
 */
void baton__epoch_memfd_raise_sync(struct baton_epoch *d, uint64_t epoch)
{
	raise_sync_epoch((struct baton_epoch_hdr *)d->hdr, epoch);
}

/*
 * A synchronizer's cycle, only tried: another opener holding the lock
 * (a cycle under way, or one stopped or hostile in it) must not hold the
 * caller past its deadline or a signal. Then the frontier, read after
 * the caller's wake_seq, is the answer; that cycle wakes the waiters if
 * it moves it, and the backstop looks again.
 */
static int sync_cycle(struct baton_epoch *d, uint64_t *frontier, int *who)
{
	struct baton_epoch_hdr *h = (struct baton_epoch_hdr *)d->hdr;
	int ret = collect(d, 0, frontier, NULL, who);

	if (ret != -EBUSY)
		return ret;
	*frontier = __atomic_load_n(&h->frontier, __ATOMIC_ACQUIRE);
	return 0;
}

int baton__epoch_memfd_synchronize(struct baton_epoch *d, uint64_t epoch,
				   int has_deadline, uint64_t deadline_ns,
				   pid_t *holder)
{
	struct baton_epoch_hdr *h = (struct baton_epoch_hdr *)d->hdr;
	uint64_t f;
	int ret = 0, who = -1;

	if (epoch > baton_epoch_global(d))
		return -EINVAL;
	if (epoch <= __atomic_load_n(&h->frontier, __ATOMIC_ACQUIRE))
		return 0;
	/* One cycle first, without sync_waiters: the quiescent case. */
	ret = sync_cycle(d, &f, &who);
	if (ret || epoch <= f)
		return ret;
	raise_sync_epoch(h, epoch);
	/* V: a locked RMW, a full barrier; Q follows in every cycle. */
	__atomic_fetch_add(&h->sync_waiters, 1, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&h->sync_waits, 1, __ATOMIC_RELAXED);
	for (;;) {
		uint32_t seq = __atomic_load_n(&h->wake_seq, __ATOMIC_ACQUIRE);
		uint64_t now, wait = BACKSTOP_NS;
		struct timespec ts;

		ret = sync_cycle(d, &f, &who);
		if (ret || epoch <= f)
			break;
		now = baton__now_ns();
		if (has_deadline) {
			if (now >= deadline_ns) {
				ret = -ETIMEDOUT;
				__atomic_fetch_add(&h->sync_timeouts, 1,
						   __ATOMIC_RELAXED);
				if (holder && who >= 0)
					*holder = (pid_t)__atomic_load_n(
						(uint32_t *)(part_region(d, (uint32_t)who) +
							     BATON_EPOCH_L_PID),
						__ATOMIC_RELAXED);
				break;
			}
			if (deadline_ns - now < wait)
				wait = deadline_ns - now;
		}
		ts.tv_sec = (time_t)(wait / 1000000000ULL);
		ts.tv_nsec = (long)(wait % 1000000000ULL);
		/* Relative timeout: FUTEX_WAIT; a changed wake_seq returns. */
		if (syscall(SYS_futex, &h->wake_seq, FUTEX_WAIT, seq, &ts,
			    NULL, 0) && errno == EINTR) {
			ret = -EINTR;
			break;
		}
	}
	__atomic_fetch_sub(&h->sync_waiters, 1, __ATOMIC_RELAXED);
	return ret;
}

void baton__epoch_memfd_kick(struct baton_epoch *d)
{
	struct baton_epoch_hdr *h = (struct baton_epoch_hdr *)d->hdr;

	__atomic_fetch_add(&h->kicks, 1, __ATOMIC_RELAXED);
	wake_waiters(h);
}

// SPDX-License-Identifier: MIT
/*
 * libbaton memfd backend: rings in POSIX shared memory, parked with futex
 * and made safe to park with membarrier, for hosts without /dev/baton.
 *
 * A ring is the tmpfs file /dev/shm/baton.<name> (the object
 * shm_open("/baton.<name>") names; tmpfs is what memfd_create() uses too)
 * with the kernel backend's layout: header page, producer page (tail at
 * byte 0, prod_waiting at byte 64), consumer page (head at 0,
 * cons_waiting at 64), then the slots. Create builds the file unnamed
 * (O_TMPFILE), sizes it, writes the header, and only then links the name
 * in, so an opener never sees a half-made ring. Openers read the header
 * with pread() and validate magic, version, geometry and hdr->off against
 * the file size before mapping anything.
 *
 * Role exclusivity: an OFD write lock on byte 0 (producer) or byte 1
 * (consumer) of the file. OFD locks belong to the open file description,
 * so they conflict even inside one process and go away when the last fd
 * of that description is closed (process death included) -> -EBUSY.
 *
 * Parking emulates what the kernel's BATON_RING_IOC_PARK does, with a
 * generation in the waiting word where the kernel has its wait-queue lock
 * (bit 0 PARKED, bit 1 POLL, bits 2..31 the generation):
 *   1. arm: store a new generation | PARKED in our own waiting word;
 *   2. membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED): a full barrier here
 *      (F) and on every CPU running a registered process (G), which
 *      drains a peer's index store that its fast-path flag load (E) may
 *      have overtaken; every process attached to a ring registers for
 *      it at create/open, and fork() inherits the registration;
 *   3. re-check the ring;
 *   4. FUTEX_WAIT_BITSET on the waiting word, expecting the armed value,
 *      in slices of DEATH_SLICE_NS whose ends (and the deadline's) check
 *      the ring and the peer's role lock (death);
 *   5. disarm: store 0.
 * A waker takes the episode with a compare-and-swap that clears PARKED
 * from the value it loaded, and only then FUTEX_WAKEs the word: one wake
 * per park (wake_word() has the argument; the model is
 * selftests/models/park_memfd_gen.pml).
 *
 * Deaths: each role holds an OFD lock on its byte and sets a "seen" byte
 * (MEMFD_SEEN) when it first attaches; a seen role whose lock nobody
 * holds has gone, and the parked survivor returns -EPIPE (a consumer
 * once drained) and sets BATON_STATE_*_GONE.
 *
 * MPSC rings (BATON_RING_MPSC) add, after the slots, the sequence words
 * and one claim page per producer index, and struct baton_mpsc_hdr at
 * byte 1024 of the header page. A producer takes the lowest index k whose
 * OFD lock (byte 16 + k) it can get, so indices come back when a
 * producer's file goes; the consumer locks byte 1 as for SPSC. A parked
 * producer arms its own word (byte CLAIM_WAITING of its claim page) and
 * counts itself in prod_waiting, the summary the consumer's fast path
 * loads; the consumer wakes the producers whose claim names the slot it
 * freed. The parked consumer arms cons_waiting and waits for its ticket's
 * sequence word to change. A producer that dies holding a ticket has it
 * tombstoned by the parked consumer when a sleep slice ends
 * (mpsc_tombstone_dead(), pid 0: memfd cannot name it), and by a waitset
 * that holds the consumer (baton__memfd_mpsc_reap()); -EPIPE comes only
 * once every producer has gone and nothing is left.
 *
 * What this backend cannot do, compared with /dev/baton:
 *  - no role-scoped mappings: the file is opened read-write by both roles
 *    (the consumer must store head), so either side can scribble on all
 *    of it; the library maps read-only what the role does not own, but
 *    that protects only against our own bugs;
 *  - deaths are found by the waiting side, within DEATH_SLICE_NS, not
 *    announced: a side that is not waiting is not told;
 *  - no kernel-checked names or permissions across users beyond the file
 *    mode, and no kernel counters (hdr counters stay 0; the handle's own
 *    park_calls and wake_calls still count).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define SHM_DIR		"/dev/shm"
#define SHM_PREFIX	"baton."

/* Byte offsets inside the producer and consumer pages. */
#define WORD_INDEX	0
#define WORD_WAITING	64	/* its own cache line */
/* MPSC: where struct baton_mpsc_hdr sits in the header page. */
#define MPSC_HDR	1024
/* MPSC: OFD lock byte of producer index k. */
#define LOCK_PRODUCER0	16
/* Header page: one byte per role, set when that role first attaches. */
#define MEMFD_SEEN	3072
/* MPSC: a producer's own waiting word, in its claim page. */
#define CLAIM_WAITING	64
/* A parked side looks at its peer's lock at least this often. */
#define DEATH_SLICE_NS	(5ULL * 1000 * 1000)

static long sys_membarrier(int cmd)
{
	return syscall(SYS_membarrier, cmd, 0, 0);
}

static long sys_futex(uint32_t *uaddr, int op, uint32_t val,
		      const struct timespec *ts, uint32_t val3)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, val3);
}

/* Idempotent, and cheap once the process is registered. */
/*
 * The memfd backend's barriers (F and G here, P and Q of the epoch
 * domains) are membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED), which needs
 * this registration first. Without it (a kernel built without
 * membarrier, a seccomp filter that refuses it) the backend cannot keep
 * its ordering promise: a missing backend, -ENODEV, the cause logged.
 */
/*
 * The same registration, silent: for what can do without it (a pool's
 * idle magazines, pool.c), which falls back rather than fails.
 */
int baton__memfd_membarrier_try(void)
{
	return sys_membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) ?
		       -errno : 0;
}

int baton__memfd_membarrier_register(void)
{
	if (!sys_membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED))
		return 0;
	baton__log(BATON_LOG_WARN,
		   "libbaton: the memfd backend needs membarrier(2) (MEMBARRIER_CMD_GLOBAL_EXPEDITED), and registering for it failed (%s)\n",
		   strerror(errno));
	return -ENODEV;
}

static int shm_path(char *buf, size_t len, const char *name)
{
	int ret = baton__name_valid(name);

	if (ret)
		return ret;
	snprintf(buf, len, "%s/%s%s", SHM_DIR, SHM_PREFIX, name);
	return 0;
}

static void layout(const struct baton_ring_params *p,
		   struct baton_ring_offsets *off, uint64_t *total)
{
	uint32_t slot_count = p->slot_count, slot_size = p->slot_size;
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t slots = (uint64_t)slot_count * slot_size;

	memset(off, 0, sizeof(*off));
	off->hdr_mmap = 0;
	off->prod_mmap = page;
	off->cons_mmap = 2 * page;
	off->slots_mmap = 3 * page;
	off->hdr_size = (uint32_t)page;
	off->prod_size = (uint32_t)page;
	off->cons_size = (uint32_t)page;
	off->slots_size = (slots + page - 1) / page * page;
	off->prod_tail = WORD_INDEX;
	off->prod_waiting = WORD_WAITING;
	off->cons_head = WORD_INDEX;
	off->cons_waiting = WORD_WAITING;
	*total = off->slots_mmap + off->slots_size;
	if (p->kind != BATON_RING_MPSC)
		return;
	off->seq_mmap = *total;
	off->seq_size = ((uint64_t)slot_count * 8 + page - 1) / page * page;
	off->claim_mmap = off->seq_mmap + off->seq_size;
	off->claim_size = (uint32_t)page;
	off->mpsc_hdr = MPSC_HDR;
	*total = off->claim_mmap + (uint64_t)p->max_producers * page;
}

/*
 * The layout in a ring file's header must be the one layout() gives for
 * its geometry, to the byte, not merely a usable one: an opener maps every
 * region with MAP_POPULATE (ring.c, attach()), so a region that a writer
 * grew, in a file it grew sparse to match, would be allocated in tmpfs by
 * the opener, charged to the opener's memory cgroup, with open blocking
 * meanwhile. Called once the geometry and max_producers are checked.
 */
static int layout_exact(const struct baton_ring_hdr *hdr,
			uint32_t max_producers)
{
	const struct baton_ring_params p = {
		.kind = hdr->kind,
		.slot_count = hdr->slot_count,
		.slot_size = hdr->slot_size,
		.max_producers = max_producers,
	};
	struct baton_ring_offsets want;
	uint64_t total;

	layout(&p, &want, &total);
	return memcmp(&want, &hdr->off, sizeof(want)) ? -EPROTO : 0;
}

static int lock_role(int fd, int role);

/*
 * MPSC producer: the lowest free index, held by an OFD lock on its byte.
 * The lock goes with the file description, so a dead producer's index is
 * free again; its claim page is reset by the next holder.
 */
static int lock_producer_index(int fd, uint32_t max_producers,
			       uint32_t *index)
{
	uint32_t k;

	for (k = 0; k < max_producers; k++) {
		struct flock fl = {
			.l_type = F_WRLCK,
			.l_whence = SEEK_SET,
			.l_start = LOCK_PRODUCER0 + k,
			.l_len = 1,
		};

		if (fcntl(fd, F_OFD_SETLK, &fl) == 0) {
			*index = k;
			return 0;
		}
		if (errno != EAGAIN && errno != EACCES)
			return -errno;
	}
	return -EBUSY;
}

/*
 * The role holds its lock now: say it attached once (the peer's death
 * check needs it: a lock nobody holds yet is not a death) and that it is
 * not gone. The seen byte is only ever set.
 */
static void mark_attached(int fd, int role)
{
	uint32_t bit = role == BATON_ROLE_PRODUCER ? BATON_STATE_PRODUCER_GONE :
						     BATON_STATE_CONSUMER_GONE;
	off_t st_off = offsetof(struct baton_ring_hdr, state);
	uint8_t one = 1;
	uint32_t st;

	(void)!pwrite(fd, &one, 1, MEMFD_SEEN +
		      (role == BATON_ROLE_PRODUCER ? 0 : 1));
	if (pread(fd, &st, sizeof(st), st_off) == (ssize_t)sizeof(st) &&
	    (st & bit)) {
		st &= ~bit;
		(void)!pwrite(fd, &st, sizeof(st), st_off);
	}
}

/* Lock the role; an MPSC producer also learns its claim page. */
static int lock_role_desc(int fd, int role, struct baton_ring_desc *d)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint32_t k = 0;
	int ret;

	if (d->kind != BATON_RING_MPSC || role != BATON_ROLE_PRODUCER) {
		ret = lock_role(fd, role);
	} else {
		ret = lock_producer_index(fd, d->max_producers, &k);
		d->claim_off = d->off.claim_mmap + (uint64_t)k * page;
	}
	if (!ret)
		mark_attached(fd, role);
	return ret;
}

/* A new MPSC ring: header counters and seq[i] = i (slot i free for i). */
static int init_mpsc(int fd, const struct baton_ring_params *p,
		     const struct baton_ring_offsets *off)
{
	struct baton_mpsc_hdr mh;
	uint64_t buf[512];
	uint32_t i, j, n;

	memset(&mh, 0, sizeof(mh));
	mh.max_producers = p->max_producers;
	if (pwrite(fd, &mh, sizeof(mh), MPSC_HDR) != (ssize_t)sizeof(mh))
		return -EIO;
	for (i = 0; i < p->slot_count; i += n) {
		n = p->slot_count - i < 512 ? p->slot_count - i : 512;
		for (j = 0; j < n; j++)
			buf[j] = (uint64_t)i + j;
		if (pwrite(fd, buf, n * sizeof(uint64_t),
			   (off_t)(off->seq_mmap + (uint64_t)i * 8)) !=
		    (ssize_t)(n * sizeof(uint64_t)))
			return -EIO;
	}
	return 0;
}

static int lock_role(int fd, int role)
{
	struct flock fl = {
		.l_type = F_WRLCK,
		.l_whence = SEEK_SET,
		.l_start = role == BATON_ROLE_PRODUCER ? 0 : 1,
		.l_len = 1,
	};

	if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
		return 0;
	if (errno == EAGAIN || errno == EACCES)
		return -EBUSY;
	return -errno;
}

/*
 * Give the unnamed file its name. AT_EMPTY_PATH needs
 * CAP_DAC_READ_SEARCH; the /proc/self/fd form works for everyone when
 * /proc is mounted. EEXIST from either is the answer for a taken name.
 */
int baton__shm_link(int fd, const char *path)
{
	char proc[64];

	if (linkat(fd, "", AT_FDCWD, path, AT_EMPTY_PATH) == 0)
		return 0;
	if (errno != ENOENT && errno != EPERM)
		return -errno;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0)
		return 0;
	return -errno;
}

/*
 * Back every page of a new object now. tmpfs allocates a page on first
 * touch, and with /dev/shm full (16 MiB is not rare, Docker's default is
 * 64 MiB) that touch is a SIGBUS in whichever process comes first, long
 * after create returned 0. posix_fallocate() turns "no room" into
 * create's -ENOSPC while the file is still unnamed, so nothing is left
 * behind. The pages would all be used anyway: a ring cycles through every
 * slot, a domain's queues fill before they wrap.
 */
int baton__shm_reserve(int fd, uint64_t size)
{
	int err = posix_fallocate(fd, 0, (off_t)size);

	return err ? -err : 0;
}

static int memfd_create_ring(const char *name,
			     const struct baton_ring_params *p, int role,
			     struct baton_ring_desc *d)
{
	struct baton_ring_hdr hdr;
	char path[sizeof(SHM_DIR) + sizeof(SHM_PREFIX) + BATON_NAME_MAX];
	uint64_t total;
	int fd, ret;

	ret = shm_path(path, sizeof(path), name);
	if (ret)
		return ret;
	/* The parameters: ring.c, the same rules for both backends. */
	ret = baton__memfd_membarrier_register();
	if (ret)
		return ret;

	fd = open(SHM_DIR, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		/* No tmpfs at /dev/shm is a missing backend, not a name. */
		return errno == ENOENT ? -ENODEV : -errno;
	/* O_TMPFILE's mode went through the umask; the kernel's does not. */
	if (fchmod(fd, p->mode)) {
		ret = -errno;
		goto err;
	}

	layout(p, &d->off, &total);
	if (ftruncate(fd, (off_t)total)) {
		ret = -errno;
		goto err;
	}
	ret = baton__shm_reserve(fd, total);
	if (ret)
		goto err;
	memset(&hdr, 0, sizeof(hdr));
	hdr.magic = BATON_RING_MAGIC;
	hdr.abi_version = BATON_ABI_VERSION;
	hdr.kind = p->kind;
	hdr.slot_count = p->slot_count;
	hdr.slot_size = p->slot_size;
	hdr.off = d->off;
	/* The file is still unnamed: nobody can see a partial header. */
	if (pwrite(fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr)) {
		ret = -EIO;
		goto err;
	}
	d->kind = p->kind;
	d->max_producers = p->kind == BATON_RING_MPSC ? p->max_producers : 0;
	if (p->kind == BATON_RING_MPSC) {
		ret = init_mpsc(fd, p, &d->off);
		if (ret)
			goto err;
	}
	ret = lock_role_desc(fd, role, d);
	if (ret)
		goto err;
	ret = baton__shm_link(fd, path);
	if (ret)
		goto err;

	d->fd = fd;
	d->kind = p->kind;
	d->slot_count = p->slot_count;
	d->slot_size = p->slot_size;
	d->file_size = total;
	return 0;

err:
	close(fd);
	return ret;
}

static int memfd_open_ring(const char *name, int role,
			   struct baton_ring_desc *d)
{
	struct baton_ring_hdr hdr;
	char path[sizeof(SHM_DIR) + sizeof(SHM_PREFIX) + BATON_NAME_MAX];
	struct stat st;
	int fd, ret;

	ret = shm_path(path, sizeof(path), name);
	if (ret)
		return ret;
	ret = baton__memfd_membarrier_register();
	if (ret)
		return ret;

	fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		ret = -errno;
		goto err;
	}
	/*
	 * Everything below comes from a file any process with write access
	 * may have written: read it once, check it, and keep only our copy.
	 */
	if (!S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(hdr) ||
	    pread(fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr)) {
		ret = -EPROTO;
		goto err;
	}
	if (hdr.magic != BATON_RING_MAGIC ||
	    hdr.abi_version != BATON_ABI_VERSION ||
	    baton__geometry_valid(hdr.kind, hdr.slot_count, hdr.slot_size)) {
		ret = -EPROTO;
		goto err;
	}
	ret = baton__offsets_valid(&hdr.off, hdr.slot_count, hdr.slot_size,
				   (uint64_t)st.st_size);
	if (ret)
		goto err;
	d->kind = hdr.kind;
	d->off = hdr.off;
	d->max_producers = 0;
	if (hdr.kind == BATON_RING_MPSC) {
		struct baton_mpsc_hdr mh;

		/* Bounds first; baton__mpsc_attach() checks the rest. */
		if (hdr.off.mpsc_hdr % 8 ||
		    hdr.off.mpsc_hdr + sizeof(mh) > hdr.off.hdr_size ||
		    pread(fd, &mh, sizeof(mh), hdr.off.mpsc_hdr) !=
		    (ssize_t)sizeof(mh) ||
		    baton__mpsc_offsets_valid(&hdr.off, hdr.slot_count,
					      mh.max_producers,
					      (uint64_t)st.st_size)) {
			ret = -EPROTO;
			goto err;
		}
		d->max_producers = mh.max_producers;
	}
	ret = layout_exact(&hdr, d->max_producers);
	if (ret)
		goto err;
	ret = lock_role_desc(fd, role, d);
	if (ret)
		goto err;

	d->fd = fd;
	d->kind = hdr.kind;
	d->slot_count = hdr.slot_count;
	d->slot_size = hdr.slot_size;
	d->file_size = (uint64_t)st.st_size;
	d->off = hdr.off;
	return 0;

err:
	close(fd);
	return ret;
}

static int memfd_unlink_ring(const char *name)
{
	char path[sizeof(SHM_DIR) + sizeof(SHM_PREFIX) + BATON_NAME_MAX];
	int ret = shm_path(path, sizeof(path), name);

	if (ret)
		return ret;
	/*
	 * /dev/shm is sticky: only the owner (or root) may remove the name,
	 * and unlink(2) says EPERM; the module says EACCES for the same rule.
	 */
	if (unlink(path))
		return errno == EPERM ? -EACCES : -errno;
	return 0;
}

/* ---- waiting words: arm, sleep, wake (file comment, "Parking") ---- */

/*
 * The value that arms a park episode: PARKED and a generation that
 * differs from the last episode's. park_calls counts this handle's
 * parks; its low 30 bits are the generation, so it wraps after 2^30
 * episodes (harmless: the futex waits on the word, see wake_word()).
 */
static uint32_t episode_value(const struct baton_ring *r)
{
	return (uint32_t)r->park_calls << BATON__WAIT_GEN_SHIFT |
	       BATON_WAIT_PARKED;
}

/*
 * Arm: the store the peer's fast path loads after publishing (E), then F
 * and G: a full barrier here and on every CPU running a registered
 * process. Afterwards either the peer's index store is visible to our
 * next load, or its flag load comes after our store and it will wake us.
 * The release orders an MPSC producer's claim before its arm, for the
 * consumer that reads the claim to decide whom to wake.
 */
int baton__memfd_arm(uint32_t *word, uint32_t val)
{
	__atomic_store_n(word, val, __ATOMIC_RELEASE);
	if (sys_membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED))
		return -errno;
	return 0;
}

/*
 * End of the episode. A plain store: a waker that saw this episode's
 * value fails its compare-and-swap, one that took it already woke us.
 * No ordering needed: a flag seen late costs the peer at most one
 * function call (no wake: PARKED is gone), and we re-check the ring.
 */
void baton__memfd_disarm(uint32_t *word)
{
	__atomic_store_n(word, 0, __ATOMIC_RELAXED);
}

/*
 * Take the episode the word holds and wake its parker: 0 if we did, 1 if
 * there was none to take. The compare-and-swap succeeds only on the very
 * value we loaded, so only one waker per episode issues FUTEX_WAKE (one
 * wake per park), and a waker that saw an earlier episode cannot take a
 * later one. Failing is safe: the word changed because another waker took
 * the episode (it wakes), the parker left, or the parker armed a new
 * episode after our load, whose barrier (G) makes our index store
 * visible to its re-check.
 *
 * The parker sleeps on this word, not on the index: whoever clears
 * PARKED then wakes, and a parker that reaches FUTEX_WAIT after the
 * clear finds the word changed and returns. So a clear can never leave
 * a sleeper behind, whichever index the parker waits for (MPSC: another
 * producer's ticket wakes the consumer, who looks and parks again).
 * H: the locked compare-and-swap is a full barrier after our index
 * store, and futex_wake() has its own.
 */
static inline int wake_word(uint32_t *word)
{
	uint32_t w = __atomic_load_n(word, __ATOMIC_ACQUIRE);

	if (!(w & BATON_WAIT_PARKED))
		return 1;
	if (!__atomic_compare_exchange_n(word, &w, w & ~BATON_WAIT_PARKED, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return 1;
	if (sys_futex(word, FUTEX_WAKE, INT_MAX, NULL, 0) < 0)
		return -errno;
	return 0;
}

static int held_by_other(int fd, off_t start, off_t len)
{
	struct flock fl;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = start;
	fl.l_len = len;
	if (fcntl(fd, F_OFD_GETLK, &fl))
		return -errno;
	return fl.l_type != F_UNLCK;
}

/* The "seen" byte of @role, in the header page, or NULL if too small. */
static const uint8_t *seen_byte(const struct baton_ring *r, int role)
{
	if (r->map[BATON_MAP_HDR].len < MEMFD_SEEN + 2)
		return NULL;
	return (const uint8_t *)r->hdr + MEMFD_SEEN +
	       (role == BATON_ROLE_PRODUCER ? 0 : 1);
}

/*
 * Tell the kmod-compatible header bit, so baton_ring_peer_gone() answers
 * on memfd too. The header is mapped read-only: pwrite the word. Only
 * the survivor of a death sets the bit and only an attaching role
 * clears its own; the survivor looks again after its write, so a
 * clear that raced with it is not undone for good
 * (baton__memfd_peer_gone()).
 */
static void set_gone_bit(const struct baton_ring *r, uint32_t bit, int set)
{
	uint32_t st = __atomic_load_n(&r->hdr->state, __ATOMIC_ACQUIRE);
	uint32_t nst = set ? st | bit : st & ~bit;

	if (nst != st)
		(void)!pwrite(r->fd, &nst, sizeof(nst),
			      offsetof(struct baton_ring_hdr, state));
}

/* Whether a live open file description holds the other role's lock. */
static int peer_held(const struct baton_ring *r, int consumer)
{
	if (consumer && r->kind == BATON_RING_MPSC)
		return held_by_other(r->fd, LOCK_PRODUCER0, r->max_producers);
	return held_by_other(r->fd, consumer ? 0 : 1, 1);
}

/*
 * Whether the other role has gone: it attached once (its seen byte) and
 * no open file description holds its role lock any more (the kernel drops
 * OFD locks when the last fd closes, death included). An MPSC consumer
 * asks for any producer index at all: the stream ends when every producer
 * has gone. One fcntl; called when parking and when a bounded sleep ends.
 */
int baton__memfd_peer_gone(struct baton_ring *r)
{
	int consumer = r->role == BATON_ROLE_CONSUMER;
	uint32_t bit = consumer ? BATON_STATE_PRODUCER_GONE :
				  BATON_STATE_CONSUMER_GONE;
	const uint8_t *seen = seen_byte(r, consumer ? BATON_ROLE_PRODUCER :
						      BATON_ROLE_CONSUMER);

	if (!seen || !__atomic_load_n(seen, __ATOMIC_ACQUIRE))
		return 0;
	if (peer_held(r, consumer))
		return 0;	/* held, or cannot tell: alive */
	set_gone_bit(r, bit, 1);
	/*
	 * A new holder may have taken the role and cleared the bit
	 * (mark_attached(): lock first, then clear) between the look and
	 * the write, which then says "gone" of it for as long as it lives.
	 * It holds the lock before its clear, so a second look sees it:
	 * take the bit back.
	 */
	if (peer_held(r, consumer)) {
		set_gone_bit(r, bit, 0);
		return 0;
	}
	return 1;
}

/*
 * A ring's id on memfd, for the pool's SENT stamps (lib/pool_memfd.c, "a
 * ring nobody reads again"): its file's inode number, which no other
 * live file of /dev/shm has. 0 if fstat fails.
 */
uint64_t baton__memfd_ring_id(const struct baton_ring *r)
{
	struct stat st;

	if (fstat(r->fd, &st))
		return 0;
	return st.st_ino ? (uint64_t)st.st_ino : 1;
}

/*
 * A watch on @r's file: a new open file description of it, opened
 * through /proc/self/fd so that it shares none of @r's locks (a dup
 * would keep @r's role lock alive after @r is closed, and its peer would
 * never see it go). The fd, or -errno (no /proc: no watch).
 */
int baton__memfd_watch_open(const struct baton_ring *r)
{
	char proc[64];
	int fd;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", r->fd);
	/* Read-only: F_OFD_GETLK and fstat need no more. */
	fd = open(proc, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * Whether the watched ring can still be read: 1 while it has a name
 * (a consumer may open it) or an open file description holds its
 * consumer lock, or we cannot tell; 0 when it has neither. Roles are
 * taken at open, so without a name nobody becomes its consumer again.
 */
int baton__memfd_watch_readable(int fd)
{
	struct stat st;

	if (fstat(fd, &st) || st.st_nlink)
		return 1;
	return held_by_other(fd, 1, 1) != 0;
}

static struct timespec abs_ts(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / 1000000000ULL),
		.tv_nsec = (long)(ns % 1000000000ULL),
	};

	return ts;
}

/*
 * What a parked side re-checks: 1 still nothing to do, 0 the condition is
 * gone (look again), negative errno (EPROTO).
 */
typedef int (*still_fn)(struct baton_ring *r, uint64_t expected);

/*
 * Whether a live producer may hold ticket @c: producer k is live while an
 * open file description holds its lock byte (or we cannot tell), and may
 * hold @c while its claim covers it, or while it has no claim yet but a
 * floor at or below @c (between its fetch_add and J). A dead producer's
 * claim is ignored, whatever it says.
 */
static int live_holder_possible(const struct baton_ring *r, uint64_t c)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint32_t k;

	for (k = 0; k < r->max_producers; k++) {
		const struct baton_mpsc_claim *cl = (const void *)
			((const uint8_t *)r->claim + (uint64_t)k * page);
		uint64_t count, first, floor;

		if (!held_by_other(r->fd, LOCK_PRODUCER0 + k, 1))
			continue;
		/* J: acquire, so a publication made before these is seen. */
		count = __atomic_load_n(&cl->count, __ATOMIC_ACQUIRE);
		first = __atomic_load_n(&cl->first, __ATOMIC_ACQUIRE);
		floor = __atomic_load_n(&cl->floor, __ATOMIC_ACQUIRE);
		if (count ? c - first < count :
			    floor != BATON_MPSC_NONE && (int64_t)(c - floor) >= 0)
			return 1;
	}
	return 0;
}

/* Add 1 to a counter of the read-only MPSC header; only the consumer does. */
static void mpsc_hdr_count(const struct baton_ring *r, size_t field)
{
	uint64_t v;

	if (pread(r->fd, &v, sizeof(v), (off_t)(r->mpsc_hdr + field)) ==
	    (ssize_t)sizeof(v)) {
		v++;
		(void)!pwrite(r->fd, &v, sizeof(v),
			      (off_t)(r->mpsc_hdr + field));
	}
}

/*
 * The MPSC consumer has waited a slice at ticket @c: if @c was handed out
 * (below the tail) and no live producer can hold it, its producer died
 * mid-push; tombstone it, as the module does (kmod/mpsc.c,
 * baton_mpsc_attribute(); Documentation/mpsc.rst has the argument). The
 * tail first, with acquire: every ticket below it was handed out by a
 * fetch_add (acq_rel) after its holder took its lock byte and stored its
 * floor (I), so that holder is seen live, with a floor or claim covering
 * @c, unless it has died. Then seq again: a holder that published and
 * cleared its claim between our reads is seen there. The compare-and-swap
 * leaves a publication racing with us intact. memfd cannot name the dead
 * producer: the tombstone's pid is 0. 1 when tombstoned.
 */
static int mpsc_tombstone_dead(struct baton_ring *r, uint64_t c)
{
	uint64_t tail = __atomic_load_n(r->tail, __ATOMIC_ACQUIRE);
	uint64_t *sp = &r->seq[c & r->mask];
	uint64_t expect = c, zero = 0;
	off_t slot;

	if ((int64_t)(tail - c) <= 0 || live_holder_possible(r, c))
		return 0;
	if (__atomic_load_n(sp, __ATOMIC_ACQUIRE) != c)
		return 0;
	/*
	 * The pid word first (read after seq by the consumer, L), at the
	 * offset checked at attach: the header's copy is anyone's to write.
	 */
	slot = (off_t)(r->slots_off + (c & r->mask) * r->slot_size);
	if (pwrite(r->fd, &zero, sizeof(zero), slot) != (ssize_t)sizeof(zero))
		return 0;
	if (!__atomic_compare_exchange_n(sp, &expect, (c + 1) | BATON_MPSC_TOMB,
					 0, __ATOMIC_RELEASE,
					 __ATOMIC_RELAXED))
		return 0;
	mpsc_hdr_count(r, offsetof(struct baton_mpsc_hdr, tombstones_written));
	mpsc_hdr_count(r, offsetof(struct baton_mpsc_hdr,
				   tombstones_unattributed));
	return 1;
}

/*
 * After a slice (or the deadline) at @expected: a dead holder's ticket?
 * A producer that dies holding a batch (push_batch, prod_reserve(n), a
 * death mid-publication) leaves a run of them: each is tombstoned on the
 * same look, on its own evidence (the tail past it, no live claim or
 * floor covering it), so the consumer does not wait a slice per ticket.
 */
static int stalled_on_dead_ticket(struct baton_ring *r, uint64_t expected)
{
	uint64_t n = 0;

	if (r->kind != BATON_RING_MPSC || r->role != BATON_ROLE_CONSUMER ||
	    !r->claim)
		return 0;
	while (n < r->slot_count && mpsc_tombstone_dead(r, expected + n))
		n++;
	return n > 0;
}

/*
 * Where and since when this thread's MPSC consumer has waited at its
 * ticket (one consumer thread per handle). Publications of later tickets
 * wake the parked consumer while its own ticket's holder may be dead: a
 * look for that on slice ends only would wait for a pause in the other
 * producers' traffic, which may never come before the ring is full.
 */
static __thread struct {
	const struct baton_ring *r;
	uint64_t ticket;
	uint64_t since;
} consumer_stall;

/* Woken with @expected still unpublished: a dead holder, once a slice? */
static int woken_on_dead_ticket(struct baton_ring *r, uint64_t expected)
{
	uint64_t now;

	if (r->kind != BATON_RING_MPSC || r->role != BATON_ROLE_CONSUMER)
		return 0;
	now = baton__now_ns();
	if (consumer_stall.r != r || consumer_stall.ticket != expected) {
		consumer_stall.r = r;
		consumer_stall.ticket = expected;
		consumer_stall.since = now;
		return 0;
	}
	if (now - consumer_stall.since < DEATH_SLICE_NS)
		return 0;
	consumer_stall.since = now;	/* at most one look a slice */
	return stalled_on_dead_ticket(r, expected);
}

/* The waitset's form (lib/waitset.c): at the consumer's next ticket. */
int baton__memfd_mpsc_reap(struct baton_ring *r)
{
	return r->backend == BATON_BACKEND_MEMFD &&
	       stalled_on_dead_ticket(r, r->local);
}

/*
 * Every peer has gone (baton__memfd_peer_gone() said 1): -EPIPE if
 * nothing is left at @expected, else 0 (look again) or @otherwise. An
 * MPSC consumer asks once more about a dead holder's ticket first: the
 * ask before the lock check may have seen that holder still alive (it
 * died in between), and tickets past its own may be published; ending
 * the stream there would lose them.
 */
static int gone_verdict(struct baton_ring *r, still_fn still,
			uint64_t expected, int otherwise)
{
	if (stalled_on_dead_ticket(r, expected))
		return 0;
	return still(r, expected) > 0 ? -EPIPE : otherwise;
}

/*
 * Sleep on the armed word in slices of at most DEATH_SLICE_NS: the
 * backstop that notices a peer dying (nothing wakes us then) within one
 * slice. Each slice that ends on its own re-checks the peer and the ring;
 * the episode stays armed throughout. 0 when woken or the condition went,
 * -EPIPE, -ETIMEDOUT, -EINTR, -EPROTO.
 */
static int sleep_armed(struct baton_ring *r, uint32_t *word, uint32_t val,
		       int has_deadline, uint64_t deadline_ns, still_fn still,
		       uint64_t expected)
{
	for (;;) {
		uint64_t until = baton__now_ns() + DEATH_SLICE_NS;
		int last = has_deadline && deadline_ns <= until;
		struct timespec ts = abs_ts(last ? deadline_ns : until);
		int ret;

		if (!sys_futex(word, FUTEX_WAIT_BITSET, val, &ts,
			       FUTEX_BITSET_MATCH_ANY) || errno == EAGAIN) {
			/* Tombstoned or not, the caller looks again. */
			(void)woken_on_dead_ticket(r, expected);
			return 0;
		}
		if (errno != ETIMEDOUT)
			return -errno;	/* EINTR */
		if (last) {	/* a short deadline still learns of a death */
			if (stalled_on_dead_ticket(r, expected))
				return 0;
			return baton__memfd_peer_gone(r) ?
			       gone_verdict(r, still, expected, -ETIMEDOUT) :
			       -ETIMEDOUT;
		}
		ret = still(r, expected);
		if (ret <= 0)
			return ret;
		if (stalled_on_dead_ticket(r, expected))
			return 0;
		if (baton__memfd_peer_gone(r))
			return gone_verdict(r, still, expected, 0);
	}
}

/*
 * SPSC: the consumer waits while tail == expected (its head), the
 * producer while head == expected - slot_count (full from its tail).
 * A distance of more than the slot count is EPROTO, as in the kernel.
 */
static int spsc_still(struct baton_ring *r, uint64_t expected)
{
	int consumer = r->role == BATON_ROLE_CONSUMER;
	uint64_t cur = __atomic_load_n(consumer ? r->tail : r->head,
				       __ATOMIC_RELAXED);

	if (consumer ? cur - expected > r->slot_count :
		       expected - cur > r->slot_count)
		return -EPROTO;
	return cur == (consumer ? expected : expected - r->slot_count);
}

/*
 * As the kernel: a producer whose consumer has gone hears EPIPE, whatever
 * the indices nobody will read again say. The lock is asked only on this
 * error path.
 */
static int gone_before_eproto(struct baton_ring *r, int ret)
{
	if (ret == -EPROTO && r->role == BATON_ROLE_PRODUCER &&
	    baton__memfd_peer_gone(r))
		return -EPIPE;
	return ret;
}

/*
 * Arm, re-check, sleep, disarm: the file comment's steps. The peer's lock
 * is asked only when a sleep slice or the deadline ends (no syscall per
 * park for it), and after the ring, so a consumer whose producer died
 * drains first (its stores precede the lock's release at exit).
 */
static int park_on(struct baton_ring *r, uint32_t *word, uint64_t expected,
		   int has_deadline, uint64_t deadline_ns, still_fn still)
{
	uint32_t val = episode_value(r);
	int ret;

	ret = baton__memfd_arm(word, val);
	if (ret)
		goto out;
	ret = still(r, expected);
	if (ret <= 0)
		goto out;
	ret = sleep_armed(r, word, val, has_deadline, deadline_ns, still,
			  expected);
out:
	baton__memfd_disarm(word);
	return gone_before_eproto(r, ret);
}

static int memfd_park(struct baton_ring *r, uint64_t expected,
		      int has_deadline, uint64_t deadline_ns)
{
	return park_on(r, baton__own_waiting(r), expected, has_deadline,
		       deadline_ns, spsc_still);
}

static int memfd_wake(struct baton_ring *r)
{
	return wake_word(r->role == BATON_ROLE_PRODUCER ?
				      r->cons_waiting : r->prod_waiting);
}

/* MPSC: producer k's own waiting word, in its claim page. */
static uint32_t *producer_word(const struct baton_ring *r, uint32_t k)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	return (uint32_t *)((uint8_t *)r->claim + (uint64_t)k * page +
			    CLAIM_WAITING);
}

/*
 * MPSC consumer at ticket : still unpublished while its sequence
 * word says "free for it". Producer holding ticket : its slot
 * is still held by an earlier lap.
 */
static int mpsc_still(struct baton_ring *r, uint64_t expected)
{
	uint64_t s = __atomic_load_n(&r->seq[expected & r->mask],
				     __ATOMIC_ACQUIRE);
	int ret;

	if (r->role == BATON_ROLE_CONSUMER) {
		if (s == expected)
			return 1;
		if (s != expected + 1 && s != ((expected + 1) | BATON_MPSC_TOMB))
			return -EPROTO;
		return 0;
	}
	ret = baton__mpsc_slot_state(s, expected, r->mask);
	return ret == -EAGAIN ? 1 : ret;
}

/*
 * The producers' summary word (prod_waiting): PARKED while any producer
 * is parked, and their number in the generation bits. Each producer only
 * adds or removes itself with a compare-and-swap, so none can silence
 * another; the consumer never writes it.
 */
static void summary_update(uint32_t *summary, int delta)
{
	uint32_t old = __atomic_load_n(summary, __ATOMIC_RELAXED), nw, n;

	do {
		n = (old >> BATON__WAIT_GEN_SHIFT) + (uint32_t)delta;
		if (delta < 0 && !(old >> BATON__WAIT_GEN_SHIFT))
			n = 0;	/* never below zero, whatever was scribbled */
		nw = n << BATON__WAIT_GEN_SHIFT | (n ? BATON_WAIT_PARKED : 0);
	} while (!__atomic_compare_exchange_n(summary, &old, nw, 0,
					      __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
}

/*
 * A new holder of producer index k: a predecessor that died parked left
 * its word armed and its count in the summary; take both back.
 *
 * One killed between its count and its arm (or its disarm and its
 * uncount) left only the count, which no index says is its own: a count
 * with nobody parked makes every consumer release scan the producers'
 * words. So a producer that attaches with no other producer attached
 * takes the whole count back. The word is read before the look at the
 * others' locks and written by a compare-and-swap from what was read: a
 * producer that counts itself after the read changed the word (the swap
 * fails), and one that counted itself before it held its lock before
 * the look (the look sees it).
 */
void baton__memfd_producer_attach(struct baton_ring *r)
{
	uint32_t *own = producer_word(r, 0);
	uint32_t left;

	if (__atomic_exchange_n(own, 0, __ATOMIC_RELAXED))
		summary_update(r->prod_waiting, -1);
	left = __atomic_load_n(r->prod_waiting, __ATOMIC_ACQUIRE);
	if (!(left >> BATON__WAIT_GEN_SHIFT) ||
	    held_by_other(r->fd, LOCK_PRODUCER0, r->max_producers))
		return;
	__atomic_compare_exchange_n(r->prod_waiting, &left, 0, 0,
				    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

/*
 * The MPSC park. The consumer arms cons_waiting and sleeps on it; a
 * producer counts itself in the summary (the consumer's fast path looks
 * only there), arms its own word and sleeps on that, so it is woken only
 * by the release of the slot it waits for (memfd_mpsc_wake()).
 */
static int memfd_mpsc_park(struct baton_ring *r, uint64_t expected,
			   int has_deadline, uint64_t deadline_ns)
{
	uint32_t *own;
	int ret;

	if (r->role == BATON_ROLE_CONSUMER)
		return park_on(r, r->cons_waiting, expected, has_deadline,
			       deadline_ns, mpsc_still);
	own = producer_word(r, 0);
	summary_update(r->prod_waiting, 1);
	ret = park_on(r, own, expected, has_deadline, deadline_ns,
		      mpsc_still);
	summary_update(r->prod_waiting, -1);
	return ret;
}

/*
 * Whether producer k waits for the slot the consumer just freed (ticket
 * @idx; the next lap's ticket is idx + slot_count): its claim names that
 * ticket, or it holds none (a waitset waiting for room). A claim read
 * stale or scribbled only costs a wake or delays one until the
 * producer's slice (DEATH_SLICE_NS) re-checks.
 */
static int claim_waits_for(const struct baton_ring *r, uint32_t k,
			   uint64_t idx)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	const struct baton_mpsc_claim *cl =
		(const void *)((const uint8_t *)r->claim + (uint64_t)k * page);
	uint64_t t = idx + r->slot_count;
	uint64_t first = __atomic_load_n(&cl->first, __ATOMIC_ACQUIRE);
	uint64_t count = __atomic_load_n(&cl->count, __ATOMIC_ACQUIRE);

	/* No push in progress: a waitset waiting for room; any slot will do. */
	return !count || t - first < count;
}

/*
 * Producer: take the consumer's episode. Consumer: the summary said some
 * producer is parked; take the episode of each producer whose claim
 * names the next lap of the slot just freed.
 */
static int memfd_mpsc_wake(struct baton_ring *r, uint64_t idx)
{
	uint32_t k;
	int ret = 1, one;

	if (r->role == BATON_ROLE_PRODUCER)
		return wake_word(r->cons_waiting);
	if (!r->claim)
		return 1;
	for (k = 0; k < r->max_producers; k++) {
		uint32_t *w = producer_word(r, k);

		if (!(__atomic_load_n(w, __ATOMIC_ACQUIRE) & BATON_WAIT_PARKED) ||
		    !claim_waits_for(r, k, idx))
			continue;
		one = wake_word(w);
		if (one <= 0)
			ret = one;
	}
	return ret;
}

/* ---- the waitset's side (lib/waitset.c) ---- */

/* F and G for words armed without a barrier each. */
int baton__memfd_barrier(void)
{
	return sys_membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) ? -errno : 0;
}

/*
 * Arm @r's own waiting word for a waitset (a park episode without the
 * barrier: the set issues one for all its words) and say which word and
 * value to sleep on.
 */
uint32_t *baton__memfd_ws_arm(struct baton_ring *r, uint32_t *val)
{
	uint32_t *word = baton__own_waiting(r);

	r->park_calls++;
	if (r->kind == BATON_RING_MPSC && r->role == BATON_ROLE_PRODUCER) {
		word = producer_word(r, 0);
		summary_update(r->prod_waiting, 1);
	}
	*val = episode_value(r);
	__atomic_store_n(word, *val, __ATOMIC_RELEASE);
	return word;
}

void baton__memfd_ws_disarm(struct baton_ring *r)
{
	if (r->kind == BATON_RING_MPSC && r->role == BATON_ROLE_PRODUCER) {
		baton__memfd_disarm(producer_word(r, 0));
		summary_update(r->prod_waiting, -1);
		return;
	}
	baton__memfd_disarm(baton__own_waiting(r));
}

static int memfd_version(uint32_t *abi_version, uint64_t *features)
{
	*abi_version = BATON_ABI_VERSION;
	*features = BATON_FEAT_RING_SPSC | BATON_FEAT_PARK |
		    BATON_FEAT_RING_MPSC;
	return 0;
}

const struct baton_backend_ops baton__memfd_ops = {
	.name = "memfd",
	.create = memfd_create_ring,
	.open = memfd_open_ring,
	.unlink = memfd_unlink_ring,
	.park = memfd_park,
	.wake = memfd_wake,
	.mpsc_park = memfd_mpsc_park,
	.mpsc_wake = memfd_mpsc_wake,
	.version = memfd_version,
};

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
 * Parking emulates what the kernel's BATON_RING_IOC_PARK does:
 *   1. store our own waiting flag;
 *   2. membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED): a full barrier here
 *      (F) and on every CPU running a registered process (G), which
 *      drains a peer's index store that its fast-path flag load (E) may
 *      have overtaken; every process attached to a ring registers for
 *      it at create/open, and fork() inherits the registration;
 *   3. FUTEX_WAIT_BITSET on the low 32 bits of the index we wait for,
 *      comparing against the value that means "still empty/full": the
 *      futex's own compare-and-sleep under its hash-bucket lock is the
 *      kernel's re-check under the wait-queue lock;
 *   4. clear our flag.
 * A waker FUTEX_WAKEs on the low 32 bits of the index it just stored.
 * 32 bits suffice: the indices never drift more than slot_count
 * (<= 2^20) apart, so the low halves equal only when the full values do.
 *
 * MPSC rings (BATON_RING_MPSC) add, after the slots, the sequence words
 * and one claim page per producer index, and struct baton_mpsc_hdr at
 * byte 1024 of the header page. A producer takes the lowest index k whose
 * OFD lock (byte 16 + k) it can get, so indices come back when a
 * producer's file goes; the consumer locks byte 1 as for SPSC. A parked
 * producer counts itself in prod_waiting (an atomic add, slow path only)
 * and waits on the low half of the consumer's head, which moves with
 * every slot freed; the parked consumer waits on the low half of its
 * ticket's sequence word, which the publication changes. There is no
 * death detection: a producer that dies holding a ticket stalls the
 * consumer at that ticket until its timeout, and nothing is tombstoned.
 *
 * What this backend cannot do, compared with /dev/baton:
 *  - no role-scoped mappings: the file is opened read-write by both roles
 *    (the consumer must store head), so either side can scribble on all
 *    of it; the library maps read-only what the role does not own, but
 *    that protects only against our own bugs;
 *  - no death notices: nothing sets BATON_STATE_*_GONE, so park never
 *    returns -EPIPE and a consumer cannot detect end of stream; a peer
 *    that dies leaves the other side parked until its timeout;
 *  - no kernel-checked names or permissions across users beyond the file
 *    mode, and no kernel counters (hdr counters stay 0; the handle's own
 *    park_calls and wake_calls still count).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
static int register_membarrier(void)
{
	if (sys_membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED))
		return -errno;
	return 0;
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

/* Lock the role; an MPSC producer also learns its claim page. */
static int lock_role_desc(int fd, int role, struct baton_ring_desc *d)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint32_t k = 0;
	int ret;

	if (d->kind != BATON_RING_MPSC || role != BATON_ROLE_PRODUCER)
		return lock_role(fd, role);
	ret = lock_producer_index(fd, d->max_producers, &k);
	if (ret)
		return ret;
	d->claim_off = d->off.claim_mmap + (uint64_t)k * page;
	return 0;
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
static int link_name(int fd, const char *path)
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
	ret = baton__geometry_valid(p->kind, p->slot_count, p->slot_size);
	if (ret)
		return ret;
	if (p->kind == BATON_RING_MPSC ?
	    !p->max_producers || p->max_producers > BATON_MPSC_PRODUCERS_MAX :
	    p->max_producers > 1)
		return -EINVAL;
	ret = register_membarrier();
	if (ret)
		return ret;

	fd = open(SHM_DIR, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		/* No tmpfs at /dev/shm is a missing backend, not a name. */
		return errno == ENOENT ? -ENODEV : -errno;
	/* O_TMPFILE's mode went through the umask; the kernel's does not. */
	if (fchmod(fd, p->mode & 0777)) {
		ret = -errno;
		goto err;
	}

	layout(p, &d->off, &total);
	if (ftruncate(fd, (off_t)total)) {
		ret = -errno;
		goto err;
	}
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
	ret = link_name(fd, path);
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
	ret = register_membarrier();
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

/*
 * See the file comment for the protocol. The consumer sleeps while tail ==
 * expected (its head); the producer while head == expected - slot_count
 * (the ring is full from its tail).
 */
static int memfd_park(struct baton_ring *r, uint64_t expected,
		      int has_deadline, uint64_t deadline_ns)
{
	int consumer = r->role == BATON_ROLE_CONSUMER;
	uint32_t *flag = baton__own_waiting(r);
	uint64_t *idx = consumer ? r->tail : r->head;
	uint64_t sleep_val = consumer ? expected : expected - r->slot_count;
	struct timespec ts, *tsp = NULL;
	uint64_t cur;
	int ret = 0;

	if (has_deadline) {
		ts.tv_sec = (time_t)(deadline_ns / 1000000000ULL);
		ts.tv_nsec = (long)(deadline_ns % 1000000000ULL);
		tsp = &ts;
	}

	/* The flag tells the peer's fast path (E) to make the wake call. */
	__atomic_store_n(flag, 1, __ATOMIC_RELAXED);
	/*
	 * F and G: full barrier here and on every CPU running the peer.
	 * Afterwards either the peer's index store is visible to the load
	 * below, or the peer's flag load comes after our flag store and it
	 * will call FUTEX_WAKE.
	 */
	if (sys_membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED)) {
		ret = -errno;
		goto out;
	}

	/* Validate before sleeping, as the kernel does (EPROTO). */
	cur = __atomic_load_n(idx, __ATOMIC_RELAXED);
	if (consumer ? cur - expected > r->slot_count :
		       expected - cur > r->slot_count) {
		ret = -EPROTO;
		goto out;
	}
	if (cur != sleep_val)
		goto out;	/* the condition is already gone */

	/*
	 * The futex counts us as a waiter, then compares the low half of the
	 * index with sleep_val under its bucket lock; FUTEX_WAKE looks for
	 * waiters only after a full barrier (H) that follows the waker's
	 * index store. A store landing between our load above and the sleep
	 * either fails the compare (EAGAIN) or finds us queued.
	 */
	if (sys_futex(baton__lo32(idx), FUTEX_WAIT_BITSET, (uint32_t)sleep_val,
		      tsp, FUTEX_BITSET_MATCH_ANY) && errno != EAGAIN)
		ret = -errno;	/* ETIMEDOUT, EINTR */
out:
	/*
	 * No ordering needed: a flag seen late only costs the peer a wake
	 * call, and we re-check the ring ourselves after returning.
	 */
	__atomic_store_n(flag, 0, __ATOMIC_RELAXED);
	return ret;
}

static int memfd_wake(struct baton_ring *r)
{
	uint64_t *idx = r->role == BATON_ROLE_PRODUCER ? r->tail : r->head;

	/*
	 * H: futex_wake() issues a full barrier before it looks for waiters,
	 * ordering our index store before that check.
	 */
	if (sys_futex(baton__lo32(idx), FUTEX_WAKE, INT_MAX, NULL, 0) < 0)
		return -errno;
	return 0;
}

/*
 * MPSC park, the same four steps as memfd_park(). Consumer at ticket
 * : sleep while its sequence word still says "free for it"
 * (unpublished). Producer holding ticket : sleep while its slot
 * is held by an earlier lap, on the consumer's head, which every freed
 * slot moves: a head read (acquire) before the slot's sequence means a
 * free made before that head store is seen, and one made after changes
 * the head under the futex's compare.
 */
static int memfd_mpsc_park(struct baton_ring *r, uint64_t expected,
			   int has_deadline, uint64_t deadline_ns)
{
	int consumer = r->role == BATON_ROLE_CONSUMER;
	uint64_t *sp = &r->seq[expected & r->mask];
	struct timespec ts, *tsp = NULL;
	uint64_t s, h = 0;
	int ret = 0;

	if (has_deadline) {
		ts.tv_sec = (time_t)(deadline_ns / 1000000000ULL);
		ts.tv_nsec = (long)(deadline_ns % 1000000000ULL);
		tsp = &ts;
	}

	/* The flag (a count for producers) tells the peer to wake us (E). */
	if (consumer)
		__atomic_store_n(r->cons_waiting, 1, __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(r->prod_waiting, 1, __ATOMIC_RELAXED);
	/* F and G, as in memfd_park(). */
	if (sys_membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED)) {
		ret = -errno;
		goto out;
	}

	if (consumer) {
		s = __atomic_load_n(sp, __ATOMIC_RELAXED);
		if (s != expected) {
			if (s != expected + 1 &&
			    s != ((expected + 1) | BATON_MPSC_TOMB))
				ret = -EPROTO;
			goto out;
		}
		if (sys_futex(baton__lo32(sp), FUTEX_WAIT_BITSET,
			      (uint32_t)expected, tsp,
			      FUTEX_BITSET_MATCH_ANY) && errno != EAGAIN)
			ret = -errno;
		goto out;
	}

	h = __atomic_load_n(r->head, __ATOMIC_ACQUIRE);
	s = __atomic_load_n(sp, __ATOMIC_ACQUIRE);
	ret = baton__mpsc_slot_state(s, expected, r->mask);
	if (ret != -EAGAIN)
		goto out;
	ret = 0;
	if (sys_futex(baton__lo32(r->head), FUTEX_WAIT_BITSET, (uint32_t)h,
		      tsp, FUTEX_BITSET_MATCH_ANY) && errno != EAGAIN)
		ret = -errno;
out:
	/* No ordering needed, as in memfd_park(). */
	if (consumer)
		__atomic_store_n(r->cons_waiting, 0, __ATOMIC_RELAXED);
	else
		__atomic_fetch_sub(r->prod_waiting, 1, __ATOMIC_RELAXED);
	return ret;
}

/* H: futex_wake()'s own full barrier, as in memfd_wake(). */
static int memfd_mpsc_wake(struct baton_ring *r, uint64_t idx)
{
	uint64_t *word = r->role == BATON_ROLE_PRODUCER ?
			 &r->seq[idx & r->mask] : r->head;

	if (sys_futex(baton__lo32(word), FUTEX_WAKE, INT_MAX, NULL, 0) < 0)
		return -errno;
	return 0;
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

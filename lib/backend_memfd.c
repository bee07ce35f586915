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

static void layout(uint32_t slot_count, uint32_t slot_size,
		   struct baton_ring_offsets *off, uint64_t *total)
{
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

	layout(p->slot_count, p->slot_size, &d->off, &total);
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
	ret = lock_role(fd, role);
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
	ret = lock_role(fd, role);
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

static int memfd_version(uint32_t *abi_version, uint64_t *features)
{
	*abi_version = BATON_ABI_VERSION;
	*features = BATON_FEAT_RING_SPSC | BATON_FEAT_PARK;
	return 0;
}

const struct baton_backend_ops baton__memfd_ops = {
	.name = "memfd",
	.create = memfd_create_ring,
	.open = memfd_open_ring,
	.unlink = memfd_unlink_ring,
	.park = memfd_park,
	.wake = memfd_wake,
	.version = memfd_version,
};

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * selftests/common.h: helpers shared by the baton kselftests.
 *
 * Owns: unique ring names, the raw-ioctl helper pairs (_test_x() returns 0
 * or a positive errno, test_x() asserts success, as in the iommufd
 * selftests), region mapping by the offsets struct, child-process plumbing
 * (fork, pipes, exit codes, CPU pinning, RT throttling) and the clock. Tests that move data use the
 * library; tests of the ABI use these raw helpers so that a library bug
 * cannot hide a kernel one.
 *
 * Children forked inside a test never use ASSERT_*: the harness longjmps
 * inside the process that fails, so a child would run the parent's
 * teardown. Children report through their exit code (0 = fine, anything
 * else names the step that failed) and the test asserts on it.
 */
#ifndef BATON_SELFTEST_COMMON_H
#define BATON_SELFTEST_COMMON_H

/* pipe2, setresuid, mremap, ...; every test includes this file first */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/baton.h>
#include "baton.h"
#ifndef BT_NO_HARNESS
#include "kselftest_harness.h"
#endif

#define BT_PAGE		((size_t)sysconf(_SC_PAGESIZE))
#define BT_NSEC		1000000000LL
#define BT_MSEC		1000000LL

/* A SKIP that also works in FIXTURE_SETUP: the 6.1 harness would run the
 * test body after a SKIP;return in setup, so leave the test process with
 * the harness's skip code instead. */
#define BT_REQUIRE_DEV() do {						\
	if (access(BATON_DEVICE, F_OK))					\
		SKIP(_exit(255), "%s absent: baton.ko not loaded",	\
		     BATON_DEVICE);					\
} while (0)

static inline int64_t bt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * BT_NSEC + ts.tv_nsec;
}

static inline void bt_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Unique per test process: the harness forks every test, so pid+counter. */
static inline void bt_make_name(char *buf, size_t len, const char *tag)
{
	static unsigned int seq;

	snprintf(buf, len, "st.%s.%d.%u", tag, (int)getpid(), seq++);
}

static inline int bt_dev_open(void)
{
	return open(BATON_DEVICE, O_RDWR | O_CLOEXEC);
}

/* 0 or the positive errno of a raw ioctl. */
static inline int bt_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? errno : 0;
}

static inline void bt_create_init(struct baton_ring_create *c,
				  const char *name, uint32_t role,
				  uint32_t slots, uint32_t slot_size,
				  uint32_t mode)
{
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->kind = BATON_RING_SPSC;
	c->role = role;
	c->slot_count = slots;
	c->slot_size = slot_size;
	c->mode = mode;
	snprintf(c->name, sizeof(c->name), "%s", name);
}

static inline int _test_ring_create(int dev, const char *name, uint32_t role,
				    uint32_t slots, uint32_t slot_size,
				    uint32_t mode,
				    struct baton_ring_create *out)
{
	struct baton_ring_create c;
	int rc;

	bt_create_init(&c, name, role, slots, slot_size, mode);
	rc = bt_ioctl(dev, BATON_IOC_RING_CREATE, &c);
	if (out)
		*out = c;
	else if (!rc)
		close(c.out_fd);
	return rc;
}

/* Asserts and yields the new ring fd. */
#define test_ring_create(dev, name, role, slots, slot_size, mode, out) ({ \
	struct baton_ring_create __c;					\
	ASSERT_EQ(0, _test_ring_create(dev, name, role, slots,		\
				       slot_size, mode, &__c));		\
	ASSERT_LE(0, __c.out_fd);					\
	if ((out) != NULL)						\
		*(struct baton_ring_create *)(out) = __c;		\
	__c.out_fd;							\
})

static inline int _test_ring_open(int dev, const char *name, uint32_t role,
				  struct baton_ring_open *out)
{
	struct baton_ring_open o;
	int rc;

	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.role = role;
	snprintf(o.name, sizeof(o.name), "%s", name);
	rc = bt_ioctl(dev, BATON_IOC_RING_OPEN, &o);
	if (out)
		*out = o;
	else if (!rc)
		close(o.out_fd);
	return rc;
}

#define test_ring_open(dev, name, role, out) ({				\
	struct baton_ring_open __o;					\
	ASSERT_EQ(0, _test_ring_open(dev, name, role, &__o));		\
	ASSERT_LE(0, __o.out_fd);					\
	if ((out) != NULL)						\
		*(struct baton_ring_open *)(out) = __o;			\
	__o.out_fd;							\
})

static inline int _test_unlink(int dev, const char *name)
{
	struct baton_unlink u;

	memset(&u, 0, sizeof(u));
	u.size = sizeof(u);
	snprintf(u.name, sizeof(u.name), "%s", name);
	return bt_ioctl(dev, BATON_IOC_UNLINK, &u);
}

#define test_unlink(dev, name) ASSERT_EQ(0, _test_unlink(dev, name))

/*
 * BATON_IOC_EPOCH_CREATE with the usual fields: 0 and the answer in *out,
 * or the errno; with @out NULL the domain fd is closed.
 */
static inline int _test_epoch_create(int dev, const char *name, uint32_t maxp,
				     uint32_t qlen, uint32_t mode,
				     struct baton_epoch_create *out)
{
	struct baton_epoch_create c;
	int rc;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.max_participants = maxp;
	c.queue_len = qlen;
	c.mode = mode;
	snprintf(c.name, sizeof(c.name), "%s", name);
	rc = bt_ioctl(dev, BATON_IOC_EPOCH_CREATE, &c);
	if (out)
		*out = c;
	else if (!rc)
		close(c.out_fd);
	return rc;
}

/*
 * BATON_IOC_EPOCH_OPEN of @name: 0 and the answer in *out, or the errno;
 * with @out NULL the domain fd is closed.
 */
static inline int _test_epoch_open(int dev, const char *name,
				   struct baton_epoch_open *out)
{
	struct baton_epoch_open o;
	int rc;

	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	snprintf(o.name, sizeof(o.name), "%s", name);
	rc = bt_ioctl(dev, BATON_IOC_EPOCH_OPEN, &o);
	if (out)
		*out = o;
	else if (!rc)
		close(o.out_fd);
	return rc;
}

static inline int _test_epoch_unlink(int dev, const char *name)
{
	struct baton_unlink u;

	memset(&u, 0, sizeof(u));
	u.size = sizeof(u);
	snprintf(u.name, sizeof(u.name), "%s", name);
	return bt_ioctl(dev, BATON_IOC_EPOCH_UNLINK, &u);
}

/* A raw fd (a holder) of pool @name, or a positive errno. */
static inline int bt_pool_fd(const char *name)
{
	struct baton_pool_open op;
	int dev = bt_dev_open(), rc;

	if (dev < 0)
		return dev;
	memset(&op, 0, sizeof(op));
	op.size = sizeof(op);
	snprintf(op.name, sizeof(op.name), "%s", name);
	rc = bt_ioctl(dev, BATON_IOC_POOL_OPEN, &op);
	close(dev);
	return rc ? rc : (int)op.out_fd;
}

/*
 * A pool create of @name: one class of @count buffers of 1 << @shift
 * bytes, @max_holders holders, mode 0600, everything else 0.
 */
static inline void bt_pool_create_init(struct baton_pool_create *k,
				       const char *name, uint32_t shift,
				       uint32_t count, uint32_t max_holders)
{
	memset(k, 0, sizeof(*k));
	k->size = sizeof(*k);
	k->mode = 0600;
	k->nr_classes = 1;
	k->max_holders = max_holders;
	k->classes[0].buf_shift = shift;
	k->classes[0].count = count;
	snprintf(k->name, sizeof(k->name), "%s", name);
}

/* Write @text to /proc/@pid/@file (uid_map, gid_map, setgroups): 0 or -1. */
static inline int bt_write_proc(pid_t pid, const char *file, const char *text)
{
	char path[64];
	int fd, ok;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok ? 0 : -1;
}

/* Best effort, for teardowns: the ring may already be gone. */
static inline void bt_unlink_quiet(const char *name)
{
	int dev = bt_dev_open();

	if (dev >= 0) {
		_test_unlink(dev, name);
		close(dev);
	}
}

static inline int _test_park(int fd, uint32_t flags, uint64_t expected,
			     uint64_t deadline_ns)
{
	struct baton_park p;

	memset(&p, 0, sizeof(p));
	p.size = sizeof(p);
	p.flags = flags;
	p.expected = expected;
	p.deadline_ns = deadline_ns;
	return bt_ioctl(fd, BATON_RING_IOC_PARK, &p);
}

static inline int _test_info(int fd, struct baton_ring_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return bt_ioctl(fd, BATON_RING_IOC_INFO, info);
}

#define test_info(fd, info) ASSERT_EQ(0, _test_info(fd, info))

static inline int _test_wake(int fd)
{
	return ioctl(fd, BATON_RING_IOC_WAKE, 0UL) ? errno : 0;
}

/* Regions of a ring, in the order of struct baton_ring_offsets. */
enum bt_region { BT_HDR, BT_PROD, BT_CONS, BT_SLOTS, BT_NR_REGIONS };

static inline const char *bt_region_name(enum bt_region r)
{
	static const char *const n[BT_NR_REGIONS] = {
		"hdr", "prod", "cons", "slots",
	};

	return n[r];
}

static inline uint64_t bt_region_off(const struct baton_ring_offsets *o,
				     enum bt_region r)
{
	switch (r) {
	case BT_HDR:	return o->hdr_mmap;
	case BT_PROD:	return o->prod_mmap;
	case BT_CONS:	return o->cons_mmap;
	default:	return o->slots_mmap;
	}
}

static inline uint64_t bt_region_size(const struct baton_ring_offsets *o,
				      enum bt_region r)
{
	switch (r) {
	case BT_HDR:	return o->hdr_size;
	case BT_PROD:	return o->prod_size;
	case BT_CONS:	return o->cons_size;
	default:	return o->slots_size;
	}
}

/* Which regions a role may map writable (uapi table). */
static inline bool bt_role_writes(uint32_t role, enum bt_region r)
{
	if (role == BATON_ROLE_PRODUCER)
		return r == BT_PROD || r == BT_SLOTS;
	return r == BT_CONS;
}

/* Whole region, MAP_SHARED; MAP_FAILED with errno on failure. */
static inline void *bt_map(int fd, const struct baton_ring_offsets *o,
			   enum bt_region r, int prot)
{
	return mmap(NULL, bt_region_size(o, r), prot, MAP_SHARED, fd,
		    (off_t)bt_region_off(o, r));
}

static inline void bt_unmap(const struct baton_ring_offsets *o,
			    enum bt_region r, void *p)
{
	if (p && p != MAP_FAILED)
		munmap(p, bt_region_size(o, r));
}

/* Shared words inside their regions. */
#define BT_WORD(base, off, type) \
	((volatile type *)((volatile uint8_t *)(base) + (off)))

/* Map the region holding a flag/index of a ring fd read-only. */
static inline volatile uint8_t *bt_map_ro_by_fd(int fd, enum bt_region r,
						struct baton_ring_offsets *o)
{
	struct baton_ring_info info;
	void *p;

	if (_test_info(fd, &info))
		return NULL;
	*o = info.out_off;
	p = bt_map(fd, o, r, PROT_READ);
	return p == MAP_FAILED ? NULL : p;
}

/* Library parameters for a kmod-backed SPSC ring. */
static inline struct baton_ring_params bt_params(uint32_t slots,
						 uint32_t slot_size)
{
	struct baton_ring_params p = {
		.kind = BATON_RING_SPSC,
		.slot_count = slots,
		.slot_size = slot_size,
		.mode = 0600,
		.backend = BATON_BACKEND_KMOD,
	};
	return p;
}

/*
 * Wait for a child; the exit code if it exited, 128 + signal if it was
 * killed, -1 if it did not finish within timeout_ms (it is then killed).
 */
static inline int bt_wait_timeout(pid_t pid, long timeout_ms)
{
	int64_t end = bt_now_ns() + timeout_ms * BT_MSEC;
	int st;

	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return -2;
		if (bt_now_ns() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		bt_sleep_ms(5);
	}
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + WTERMSIG(st);
}

static inline int bt_wait(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -2;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + WTERMSIG(st);
}

/* One-byte pipe handshakes between a test and its children. */
struct bt_sync {
	int fd[2];
};

static inline int bt_sync_init(struct bt_sync *s)
{
	return pipe2(s->fd, O_CLOEXEC);
}

static inline int bt_sync_post(struct bt_sync *s)
{
	char c = 1;

	return write(s->fd[1], &c, 1) == 1 ? 0 : -1;
}

/* 0 when a byte arrived within timeout_ms, -1 otherwise (EOF, timeout). */
static inline int bt_sync_wait(struct bt_sync *s, int timeout_ms)
{
	struct pollfd pfd = { .fd = s->fd[0], .events = POLLIN };
	char c;

	if (poll(&pfd, 1, timeout_ms) != 1)
		return -1;
	return read(s->fd[0], &c, 1) == 1 ? 0 : -1;
}

static inline void bt_sync_close(struct bt_sync *s)
{
	close(s->fd[0]);
	close(s->fd[1]);
}

/* Spin (with short sleeps) until a shared u32 becomes non-zero. */
static inline int bt_wait_flag(volatile uint32_t *flag, long timeout_ms)
{
	int64_t end = bt_now_ns() + timeout_ms * BT_MSEC;

	while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE)) {
		if (bt_now_ns() > end)
			return -1;
		bt_sleep_ms(1);
	}
	return 0;
}

/* The state letter of /proc/<pid>/stat ('R', 'S', ...), 0 if unreadable. */
static inline char bt_proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/*
 * Wait until pid sleeps interruptibly. With its waiting flag already seen
 * set, that means it got past the announce and the re-check and is really
 * asleep in the park (or poll): the announce's IPI round is a busy wait,
 * so a peer acting on the flag alone would often race the re-check, and
 * the kernel rightly neither sleeps nor counts a park then.
 */
static inline int bt_wait_sleeping(pid_t pid, long timeout_ms)
{
	int64_t end = bt_now_ns() + timeout_ms * BT_MSEC;

	while (bt_proc_state(pid) != 'S') {
		if (bt_now_ns() > end)
			return -1;
		bt_sleep_ms(1);
	}
	return 0;
}

/* Deterministic message contents: a mix of the sequence number. */
static inline uint64_t bt_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Order-sensitive running checksum (FNV-1a over 64-bit words). */
static inline uint64_t bt_csum(uint64_t h, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++) {
		h ^= (v >> (8 * i)) & 0xff;
		h *= 0x100000001b3ULL;
	}
	return h;
}

#define BT_CSUM_INIT	0xcbf29ce484222325ULL

/* Fill / check a whole slot for message seq. */
static inline void bt_fill(void *slot, size_t len, uint64_t seq)
{
	uint64_t *w = slot;
	size_t i;

	for (i = 0; i < len / 8; i++)
		w[i] = bt_mix(seq * 8191 + i);
}

static inline bool bt_check(const void *slot, size_t len, uint64_t seq)
{
	const uint64_t *w = slot;
	size_t i;

	for (i = 0; i < len / 8; i++)
		if (w[i] != bt_mix(seq * 8191 + i))
			return false;
	return true;
}

/* Path of a helper program: <dir of this binary>/helpers/<name>. */
static inline int bt_helper_path(char *buf, size_t len, const char *name)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		return -1;
	self[n] = 0;
	slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = 0;
	if ((size_t)snprintf(buf, len, "%s/helpers/%s", self, name) >= len)
		return -1;
	return access(buf, X_OK);
}

/* Pin the caller to @cpu; 0 or -1. */
static inline int bt_pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/*
 * RT throttling (sched_rt_runtime_us): with @get, read it into *@get;
 * else write @set (-1: off, as RT deployments run, so that a SCHED_FIFO
 * loop holds its CPU for good). 0 or -1.
 */
static inline int bt_rt_runtime(long *get, long set)
{
	FILE *f = fopen("/proc/sys/kernel/sched_rt_runtime_us",
			get ? "r" : "w");
	int ok;

	if (!f)
		return -1;
	ok = get ? fscanf(f, "%ld", get) == 1 : fprintf(f, "%ld\n", set) > 0;
	return fclose(f) || !ok ? -1 : 0;
}

/*
 * For a test that holds CPU 1 with a SCHED_FIFO loop: two CPUs and RT
 * throttling off (*@saved: the value to put back with bt_rt_runtime()).
 * NULL, or why the test must skip.
 */
static inline const char *bt_rt_prepare(long *saved)
{
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return "needs two CPUs";
	if (bt_rt_runtime(saved, 0) || bt_rt_runtime(NULL, -1))
		return "cannot turn RT throttling off";
	return NULL;
}

/* A zeroed page shared with the children forked after: MAP_FAILED or it. */
static inline volatile uint32_t *bt_shared_words(void)
{
	return mmap(NULL, BT_PAGE, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
}

#endif /* BATON_SELFTEST_COMMON_H */

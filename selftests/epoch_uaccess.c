// SPDX-License-Identifier: GPL-2.0
/*
 * User memory that never comes in must not stop anyone but its owner.
 *
 * A REGISTER whose argument sits on a write-protected userfaultfd page
 * stays inside copy_to_user() until the test resolves the fault. Meanwhile
 * the other users of the same domain must go on: another participant's
 * SYNCHRONIZE with a 100 ms deadline returns ETIMEDOUT (a reader holds the
 * epoch), its close completes, and netlink's EPOCH_GET answers. Before the
 * fix REGISTER held the domain mutex across its copy-out and all three
 * hung in mutex_lock() (uninterruptible) until the fault was resolved.
 * Every wait here is bounded, and the fault is resolved whatever happened,
 * so a regression fails instead of hanging the suite.
 *
 * Then the fault is resolved and REGISTER must complete with a slot of
 * its own; a REGISTER whose result cannot be delivered (a read-only page)
 * must fail with EFAULT and leave its slot free.
 */
#include "common.h"
#include "netlink_util.h"

#include <linux/userfaultfd.h>
#include <pthread.h>

/* How long a call may take before the test calls it hung (not a timing
 * assertion: a 100 ms call that has not returned after 10 s is stuck). */
#define EU_HANG_MS	10000

/* What the children report, in a shared page. */
struct eu_report {
	uint32_t ready_reader, ready_sync;
	uint32_t sync_done, close_done, nl_done;
	int32_t sync_rc, nl_rc;
	uint32_t nl_participants;
	int64_t sync_ns, close_ns, nl_ns;
};

struct eu_register {
	int fd;
	struct baton_epoch_register *arg;
	int rc, err;
	volatile uint32_t done;
};

static void *eu_register_thread(void *p)
{
	struct eu_register *r = p;

	r->rc = ioctl(r->fd, BATON_EPOCH_IOC_REGISTER, r->arg);
	r->err = r->rc ? errno : 0;
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int eu_open(int dev, const char *name, struct baton_epoch_open *o)
{
	memset(o, 0, sizeof(*o));
	o->size = sizeof(*o);
	snprintf(o->name, sizeof(o->name), "%s", name);
	return ioctl(dev, BATON_IOC_EPOCH_OPEN, o) ? errno : 0;
}

static int eu_register(int fd, struct baton_epoch_register *r)
{
	memset(r, 0, sizeof(*r));
	r->size = sizeof(*r);
	return ioctl(fd, BATON_EPOCH_IOC_REGISTER, r) ? errno : 0;
}

/* A reader inside its section until told to leave (@leave). */
static void eu_reader(const char *name, struct eu_report *rep,
		      struct bt_sync *leave)
{
	struct baton_epoch *d;

	if (baton_epoch_open(name, BATON_BACKEND_KMOD, &d))
		_exit(2);
	if (baton_epoch_register(d) < 0)
		_exit(3);
	baton_epoch_enter(d);
	__atomic_store_n(&rep->ready_reader, 1, __ATOMIC_RELEASE);
	bt_sync_wait(leave, 60000);
	baton_epoch_exit(d);
	baton_epoch_close(d);
	_exit(0);
}

/* A participant that synchronizes on the reader's epoch, then closes. */
static void eu_synchronizer(const char *name, struct eu_report *rep,
			    struct bt_sync *go)
{
	struct baton_epoch *d;
	int64_t t0;
	int rc;

	if (baton_epoch_open(name, BATON_BACKEND_KMOD, &d))
		_exit(2);
	if (baton_epoch_register(d) < 0)
		_exit(3);
	__atomic_store_n(&rep->ready_sync, 1, __ATOMIC_RELEASE);
	if (bt_sync_wait(go, 60000))
		_exit(4);
	t0 = bt_now_ns();
	rc = baton_epoch_synchronize(d, baton_epoch_global(d),
				     100 * BT_MSEC, NULL);
	rep->sync_ns = bt_now_ns() - t0;
	rep->sync_rc = rc;
	__atomic_store_n(&rep->sync_done, 1, __ATOMIC_RELEASE);
	t0 = bt_now_ns();
	baton_epoch_close(d);
	rep->close_ns = bt_now_ns() - t0;
	__atomic_store_n(&rep->close_done, 1, __ATOMIC_RELEASE);
	_exit(0);
}

/* netlink EPOCH_GET of the domain (it takes the domain's mutex). */
static void eu_netlink(const char *name, struct eu_report *rep,
		       struct bt_sync *go)
{
	static struct nlt_obj o;
	struct nlt s;
	int64_t t0;

	if (nlt_open(&s))
		_exit(2);
	if (bt_sync_wait(go, 60000))
		_exit(4);
	t0 = bt_now_ns();
	rep->nl_rc = nlt_get(&s, BATON_CMD_EPOCH_GET, name, &o, NULL);
	rep->nl_ns = bt_now_ns() - t0;
	rep->nl_participants = (uint32_t)o.a.v[BATON_A_EPOCH_PARTICIPANTS];
	__atomic_store_n(&rep->nl_done, 1, __ATOMIC_RELEASE);
	nlt_close(&s);
	_exit(0);
}

static int eu_uffd_open(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	int fd = (int)syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return -errno;
	if (ioctl(fd, UFFDIO_API, &api)) {
		close(fd);
		return -errno;
	}
	return fd;
}

/* Register @page for write-protect faults and protect it. */
static int eu_uffd_protect(int uffd, void *page, size_t len, bool on)
{
	struct uffdio_writeprotect wp = {
		.range = { .start = (uintptr_t)page, .len = len },
		.mode = on ? UFFDIO_WRITEPROTECT_MODE_WP : 0,
	};

	return ioctl(uffd, UFFDIO_WRITEPROTECT, &wp) ? -errno : 0;
}

static int eu_uffd_register(int uffd, void *page, size_t len)
{
	struct uffdio_register reg = {
		.range = { .start = (uintptr_t)page, .len = len },
		.mode = UFFDIO_REGISTER_MODE_WP,
	};

	return ioctl(uffd, UFFDIO_REGISTER, &reg) ? -errno : 0;
}

/* The kernel's write to @page is waiting on @uffd: 0, or -1. */
static int eu_uffd_wait_fault(int uffd, void *page, int timeout_ms)
{
	struct pollfd pfd = { .fd = uffd, .events = POLLIN };
	struct uffd_msg msg;

	if (poll(&pfd, 1, timeout_ms) != 1)
		return -1;
	if (read(uffd, &msg, sizeof(msg)) != sizeof(msg))
		return -1;
	if (msg.event != UFFD_EVENT_PAGEFAULT ||
	    !(msg.arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP) ||
	    (msg.arg.pagefault.address & ~(BT_PAGE - 1)) != (uintptr_t)page)
		return -1;
	return 0;
}

static pid_t eu_fork(void (*fn)(const char *, struct eu_report *,
				struct bt_sync *),
		     const char *name, struct eu_report *rep, struct bt_sync *s)
{
	pid_t pid = fork();

	if (!pid)
		fn(name, rep, s);
	return pid;
}

TEST(register_fault_blocks_only_the_registrar)
{
	char name[BATON_NAME_MAX];
	struct baton_epoch_create c;
	struct baton_epoch_open o;
	struct baton_epoch_register again;
	struct bt_sync leave, go_sync, go_nl;
	struct eu_register r = { .fd = -1 };
	struct eu_report *rep;
	pid_t reader, syncer, nl;
	pthread_t thr;
	bool hung;
	void *page, *self;
	int dev, uffd;

	BT_REQUIRE_DEV();
	uffd = eu_uffd_open();
	if (uffd == -ENOSYS || uffd == -EPERM)
		SKIP(return, "no userfaultfd here (%d)", uffd);
	ASSERT_LE(0, uffd);

	page = mmap(NULL, BT_PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, page);
	rep = mmap(NULL, BT_PAGE, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, rep);
	memset(rep, 0, sizeof(*rep));
	r.arg = page;
	memset(r.arg, 0, sizeof(*r.arg));
	r.arg->size = sizeof(*r.arg);
	r.arg->out_index = 0xdeadbeef;
	ASSERT_EQ(0, eu_uffd_register(uffd, page, BT_PAGE));
	ASSERT_EQ(0, eu_uffd_protect(uffd, page, BT_PAGE, true));

	bt_make_name(name, sizeof(name), "eu");
	dev = bt_dev_open();
	ASSERT_LE(0, dev);
	ASSERT_EQ(0, _test_epoch_create(dev, name, 4, 8, 0600, &c));
	ASSERT_EQ(0, bt_sync_init(&leave));
	ASSERT_EQ(0, bt_sync_init(&go_sync));
	ASSERT_EQ(0, bt_sync_init(&go_nl));

	reader = eu_fork(eu_reader, name, rep, &leave);
	ASSERT_LT(0, reader);
	ASSERT_EQ(0, bt_wait_flag(&rep->ready_reader, 20000));
	syncer = eu_fork(eu_synchronizer, name, rep, &go_sync);
	ASSERT_LT(0, syncer);
	ASSERT_EQ(0, bt_wait_flag(&rep->ready_sync, 20000));
	nl = eu_fork(eu_netlink, name, rep, &go_nl);
	ASSERT_LT(0, nl);

	/* The registrar: its copy-out waits on the protected page. */
	ASSERT_EQ(0, eu_open(dev, name, &o));
	r.fd = o.out_fd;
	ASSERT_EQ(0, pthread_create(&thr, NULL, eu_register_thread, &r));
	ASSERT_EQ(0, eu_uffd_wait_fault(uffd, page, 10000));

	/* From here on nothing may block for good: bounded waits only. */
	bt_sync_post(&go_sync);
	hung = bt_wait_flag(&rep->sync_done, EU_HANG_MS) ||
	       bt_wait_flag(&rep->close_done, EU_HANG_MS);
	bt_sync_post(&go_nl);
	hung = bt_wait_flag(&rep->nl_done, EU_HANG_MS) || hung;
	EXPECT_TRUE(rep->sync_done);
	EXPECT_EQ(-ETIMEDOUT, rep->sync_rc);
	EXPECT_TRUE(rep->close_done);
	EXPECT_TRUE(rep->nl_done);
	EXPECT_EQ(0, rep->nl_rc);
	/* The reader only; the registrar is not a participant yet. */
	EXPECT_EQ(1, rep->nl_participants);
	TH_LOG("while REGISTER waits on its fault: synchronize(100 ms) %s after %.1f ms, close %.1f ms, EPOCH_GET %.1f ms",
	       rep->sync_done ? strerror(-rep->sync_rc) : "never returned",
	       rep->sync_ns / 1e6, rep->close_ns / 1e6, rep->nl_ns / 1e6);
	/* A second REGISTER of the same fd is refused, without waiting. */
	if (!hung)
		EXPECT_EQ(EBUSY, eu_register(r.fd, &again));
	EXPECT_FALSE(__atomic_load_n(&r.done, __ATOMIC_ACQUIRE));

	/* Resolve the fault (whatever happened above, so nothing hangs). */
	EXPECT_EQ(0, eu_uffd_protect(uffd, page, BT_PAGE, false));
	pthread_join(thr, NULL);
	EXPECT_EQ(0, r.rc);
	EXPECT_EQ(0, r.err);
	EXPECT_GT(4u, r.arg->out_index);

	/* The registrar is a participant: its region maps writable. */
	self = mmap(NULL, c.out_off.self_size, PROT_READ | PROT_WRITE,
		    MAP_SHARED, r.fd, (off_t)c.out_off.self_mmap);
	EXPECT_NE(MAP_FAILED, self);
	if (self != MAP_FAILED)
		munmap(self, c.out_off.self_size);

	bt_sync_post(&leave);
	EXPECT_EQ(0, bt_wait_timeout(reader, EU_HANG_MS));
	EXPECT_EQ(0, bt_wait_timeout(syncer, EU_HANG_MS));
	EXPECT_EQ(0, bt_wait_timeout(nl, EU_HANG_MS));
	close(r.fd);
	close(c.out_fd);
	EXPECT_EQ(0, _test_epoch_unlink(dev, name));
	close(dev);
	close(uffd);
	bt_sync_close(&leave);
	bt_sync_close(&go_sync);
	bt_sync_close(&go_nl);
	munmap(page, BT_PAGE);
	munmap(rep, BT_PAGE);
}

/* A REGISTER whose result cannot be copied out takes no slot. */
TEST(register_undeliverable_leaves_slot_free)
{
	char name[BATON_NAME_MAX];
	struct baton_epoch_create c;
	struct baton_epoch_open o;
	struct baton_epoch_register *ro, ok;
	int dev;

	BT_REQUIRE_DEV();
	bt_make_name(name, sizeof(name), "eu");
	dev = bt_dev_open();
	ASSERT_LE(0, dev);
	/* One index only: a leaked one would make the next ENOSPC. */
	ASSERT_EQ(0, _test_epoch_create(dev, name, 1, 8, 0600, &c));
	ASSERT_EQ(0, eu_open(dev, name, &o));

	ro = mmap(NULL, BT_PAGE, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	memset(ro, 0, sizeof(*ro));
	ro->size = sizeof(*ro);
	ASSERT_EQ(0, mprotect(ro, BT_PAGE, PROT_READ));
	EXPECT_EQ(-1, ioctl(c.out_fd, BATON_EPOCH_IOC_REGISTER, ro));
	EXPECT_EQ(EFAULT, errno);
	/* Not a participant: no self region for that fd. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, c.out_off.self_size,
				   PROT_READ | PROT_WRITE, MAP_SHARED,
				   c.out_fd, (off_t)c.out_off.self_mmap));

	EXPECT_EQ(0, eu_register(o.out_fd, &ok));
	EXPECT_EQ(0u, ok.out_index);
	/* And the failed fd may try again once the slot is free. */
	close(o.out_fd);
	EXPECT_EQ(0, eu_register(c.out_fd, &ok));
	EXPECT_EQ(0u, ok.out_index);

	munmap(ro, BT_PAGE);
	close(c.out_fd);
	EXPECT_EQ(0, _test_epoch_unlink(dev, name));
	close(dev);
}

TEST_HARNESS_MAIN

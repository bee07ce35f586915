// SPDX-License-Identifier: GPL-2.0
/*
 * zz_module_unload: the module's lifetime against its users (runs last:
 * the VM job runs programs in name order).
 *
 * Owns: delete_module("baton", O_NONBLOCK) must fail while anything can
 * still reach module code (an open /dev/baton, a ring fd, or only a
 * mapping of a ring whose fd is closed: fops.owner pins the module through
 * every struct file, and a vma holds its file), and must succeed once all
 * of them are gone. The last test unloads for real, checks that the device
 * and the registry went with it, and loads /baton.ko again (busybox insmod,
 * where the VM's /init put it) so the job's final rmmod still has a module.
 */
#include "common.h"

#define MODULE_KO	"/baton.ko"

static bool module_loaded(void)
{
	char line[256];
	bool found = false;
	FILE *f = fopen("/proc/modules", "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, "baton ", 6);
	fclose(f);
	return found;
}

/* 0 or the errno of a non-blocking delete_module. */
static int try_unload(void)
{
	return syscall(SYS_delete_module, "baton", O_NONBLOCK) ? errno : 0;
}

static int reload(void)
{
	int rc = system("insmod " MODULE_KO " >/dev/null 2>&1");

	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* A refused unload: busy (EWOULDBLOCK) is the only right reason. */
#define EXPECT_UNLOAD_REFUSED() do {					\
	int __rc = try_unload();					\
									\
	EXPECT_TRUE(__rc == EWOULDBLOCK || __rc == EBUSY)		\
		TH_LOG("delete_module: %s", __rc ? strerror(__rc) :	\
		       "succeeded while in use");			\
	if (!__rc)							\
		reload();						\
	EXPECT_TRUE(module_loaded());					\
} while (0)

FIXTURE(unload) {
	char name[BATON_NAME_MAX];
};

FIXTURE_SETUP(unload)
{
	BT_REQUIRE_DEV();
	if (geteuid() != 0)
		SKIP(_exit(255), "needs CAP_SYS_MODULE");
	if (!module_loaded())
		SKIP(_exit(255), "baton is built in, not a module");
	bt_make_name(self->name, sizeof(self->name), "unload");
}

FIXTURE_TEARDOWN(unload)
{
	bt_unlink_quiet(self->name);
}

TEST_F(unload, busy_while_device_open)
{
	int dev = bt_dev_open();

	ASSERT_LE(0, dev);
	EXPECT_UNLOAD_REFUSED();
	close(dev);
}

TEST_F(unload, busy_while_ring_fd_open)
{
	int dev = bt_dev_open(), fd;

	ASSERT_LE(0, dev);
	fd = test_ring_create(dev, self->name, BATON_ROLE_PRODUCER, 4, 8, 0600,
			      NULL);
	close(dev);
	EXPECT_UNLOAD_REFUSED();
	close(fd);
}

TEST_F(unload, busy_while_only_mapped)
{
	const volatile uint64_t *seen;
	struct baton_ring_create c;
	struct baton_ring_open o;
	volatile uint64_t *slots;
	int dev = bt_dev_open();

	ASSERT_LE(0, dev);
	ASSERT_EQ(0, _test_ring_create(dev, self->name, BATON_ROLE_PRODUCER,
				       4, 8, 0600, &c));
	slots = bt_map(c.out_fd, &c.out_off, BT_SLOTS, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, slots);
	close(c.out_fd);
	close(dev);
	EXPECT_UNLOAD_REFUSED();
	/*
	 * The pages are still the ring's: a write through the orphaned
	 * mapping is what the ring's consumer sees through its own.
	 */
	slots[0] = 0xabcdef;
	dev = bt_dev_open();
	ASSERT_LE(0, dev);
	ASSERT_EQ(0, _test_ring_open(dev, self->name, BATON_ROLE_CONSUMER, &o));
	seen = bt_map(o.out_fd, &o.out_off, BT_SLOTS, PROT_READ);
	ASSERT_NE(MAP_FAILED, seen);
	EXPECT_EQ(0xabcdef, seen[0]);
	munmap((void *)seen, o.out_off.slots_size);
	close(o.out_fd);
	close(dev);
	munmap((void *)slots, c.out_off.slots_size);
}

/*
 * Must stay the last test. Everything is closed: unload must work, take
 * /dev/baton and every registered ring with it, and a fresh load starts
 * from an empty registry.
 */
TEST_F_TIMEOUT(unload, unload_when_idle_then_reload, 60)
{
	struct baton_version v = { .size = sizeof(v) };
	struct stat st;
	int dev, rc, i;

	if (access(MODULE_KO, R_OK))
		SKIP(return, "%s not present: could not load it again",
		     MODULE_KO);
	ASSERT_EQ(0, stat(BATON_DEVICE, &st));

	/* a ring that is registered but has no fd or mapping left */
	dev = bt_dev_open();
	ASSERT_LE(0, dev);
	ASSERT_EQ(0, _test_ring_create(dev, self->name, BATON_ROLE_PRODUCER,
				       4, 8, 0600, NULL));
	close(dev);

	/* earlier tests' children may still be exiting: a little patience */
	for (i = 0; i < 100; i++) {
		rc = try_unload();
		if (rc != EWOULDBLOCK && rc != EBUSY)
			break;
		bt_sleep_ms(100);
	}
	ASSERT_EQ(0, rc) TH_LOG("delete_module: %s", strerror(rc));
	EXPECT_FALSE(module_loaded());
	for (i = 0; i < 50 && !access(BATON_DEVICE, F_OK); i++)
		bt_sleep_ms(100);
	EXPECT_NE(0, access(BATON_DEVICE, F_OK)) TH_LOG("device node stayed");

	ASSERT_EQ(0, reload()) TH_LOG("insmod %s failed", MODULE_KO);
	for (i = 0; i < 50 && access(BATON_DEVICE, F_OK); i++)
		bt_sleep_ms(100);
	ASSERT_EQ(0, access(BATON_DEVICE, F_OK));
	/* what /init did to the node (udev rule) is ours to redo */
	EXPECT_EQ(0, chown(BATON_DEVICE, st.st_uid, st.st_gid));
	EXPECT_EQ(0, chmod(BATON_DEVICE, st.st_mode & 07777));

	dev = bt_dev_open();
	ASSERT_LE(0, dev);
	ASSERT_EQ(0, bt_ioctl(dev, BATON_IOC_VERSION, &v));
	EXPECT_EQ(BATON_ABI_VERSION, v.out_abi_version);
	/* the registry did not survive the unload */
	EXPECT_EQ(ENOENT, _test_ring_open(dev, self->name,
					  BATON_ROLE_CONSUMER, NULL));
	EXPECT_EQ(0, _test_ring_create(dev, self->name, BATON_ROLE_CONSUMER,
				       4, 8, 0600, NULL));
	test_unlink(dev, self->name);
	close(dev);
}

TEST_HARNESS_MAIN

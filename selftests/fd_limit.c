// SPDX-License-Identifier: GPL-2.0
/*
 * fd_limit: creates and opens that cannot have their fd (RLIMIT_NOFILE).
 *
 * Owns the EMFILE row of Documentation/abi.rst's errno table: ring, domain
 * and pool create and open, each made with no fd left under the caller's
 * RLIMIT_NOFILE, fail with EMFILE and leave nothing behind: no name (the
 * name can be created again), no role or holder index taken (the open
 * succeeds once the limit is back, and a pool of two holders still has
 * its second), and nothing in the module's totals (objects_in_use,
 * bytes_in_use). Each test lowers the soft limit to the lowest free fd
 * in its own process (the harness forks one per test) and puts it back.
 */
#include "common.h"

#include <sys/resource.h>

#define TOTALS	"/sys/module/baton/parameters/"

FIXTURE(fd_limit) {
	int dev;
	char name[BATON_NAME_MAX];
	struct rlimit saved;
	unsigned long objects, bytes;
};

static unsigned long module_total(const char *which)
{
	char path[128];
	unsigned long v = ~0UL;
	FILE *f;

	snprintf(path, sizeof(path), TOTALS "%s", which);
	f = fopen(path, "re");
	if (!f)
		return ~0UL;
	if (fscanf(f, "%lu", &v) != 1)
		v = ~0UL;
	fclose(f);
	return v;
}

/* No new fd from here until fd_room(): the soft limit is the lowest free fd. */
static void fd_none(struct __test_metadata *_metadata,
		    FIXTURE_DATA(fd_limit) *self)
{
	struct rlimit none = self->saved;
	int lowest = open("/dev/null", O_RDONLY | O_CLOEXEC);

	ASSERT_LE(0, lowest);
	close(lowest);
	none.rlim_cur = (rlim_t)lowest;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &none));
	/* The limit holds: not even /dev/null opens now. */
	ASSERT_EQ(-1, open("/dev/null", O_RDONLY | O_CLOEXEC));
	ASSERT_EQ(EMFILE, errno);
}

static void fd_room(struct __test_metadata *_metadata,
		    FIXTURE_DATA(fd_limit) *self)
{
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &self->saved));
}

/* The module's totals are what they were before the refused call. */
static void totals_unchanged(struct __test_metadata *_metadata,
			     FIXTURE_DATA(fd_limit) *self)
{
	EXPECT_EQ(self->objects, module_total("objects_in_use"));
	EXPECT_EQ(self->bytes, module_total("bytes_in_use"));
}

static void totals_now(struct __test_metadata *_metadata,
		       FIXTURE_DATA(fd_limit) *self)
{
	self->objects = module_total("objects_in_use");
	self->bytes = module_total("bytes_in_use");
	ASSERT_NE(~0UL, self->objects);
	ASSERT_NE(~0UL, self->bytes);
}

FIXTURE_SETUP(fd_limit)
{
	BT_REQUIRE_DEV();
	self->dev = bt_dev_open();
	ASSERT_LE(0, self->dev);
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &self->saved));
	bt_make_name(self->name, sizeof(self->name), "fdlim");
}

FIXTURE_TEARDOWN(fd_limit)
{
	setrlimit(RLIMIT_NOFILE, &self->saved);
	if (self->dev >= 0) {
		_test_unlink(self->dev, self->name);
		_test_epoch_unlink(self->dev, self->name);
		baton_pool_unlink(self->name);
		close(self->dev);
	}
}

/* A pool @name of 4 buffers of 4 KiB and two holders; 0 or the errno. */
static int pool_create(int dev, const char *name, int *fd)
{
	struct baton_pool_create k;
	int rc;

	bt_pool_create_init(&k, name, 12, 4, 2);
	rc = bt_ioctl(dev, BATON_IOC_POOL_CREATE, &k);
	if (!rc)
		*fd = k.out_fd;
	return rc;
}

static int pool_open(int dev, const char *name, int *fd)
{
	struct baton_pool_open k;
	int rc;

	memset(&k, 0, sizeof(k));
	k.size = sizeof(k);
	snprintf(k.name, sizeof(k.name), "%s", name);
	rc = bt_ioctl(dev, BATON_IOC_POOL_OPEN, &k);
	if (!rc)
		*fd = k.out_fd;
	return rc;
}

TEST_F(fd_limit, ring_create_is_emfile_and_leaves_no_name)
{
	totals_now(_metadata, self);
	fd_none(_metadata, self);
	EXPECT_EQ(EMFILE, _test_ring_create(self->dev, self->name,
					    BATON_ROLE_PRODUCER, 4, 64, 0600,
					    NULL));
	fd_room(_metadata, self);
	totals_unchanged(_metadata, self);
	EXPECT_EQ(ENOENT, _test_ring_open(self->dev, self->name,
					  BATON_ROLE_CONSUMER, NULL));
	EXPECT_EQ(0, _test_ring_create(self->dev, self->name,
				       BATON_ROLE_PRODUCER, 4, 64, 0600, NULL));
}

TEST_F(fd_limit, ring_open_is_emfile_and_leaves_the_role_free)
{
	int prod = test_ring_create(self->dev, self->name, BATON_ROLE_PRODUCER,
				    4, 64, 0600, NULL);

	totals_now(_metadata, self);
	fd_none(_metadata, self);
	EXPECT_EQ(EMFILE, _test_ring_open(self->dev, self->name,
					  BATON_ROLE_CONSUMER, NULL));
	fd_room(_metadata, self);
	totals_unchanged(_metadata, self);
	/* SPSC: a consumer role left taken would make this EBUSY. */
	EXPECT_EQ(0, _test_ring_open(self->dev, self->name,
				     BATON_ROLE_CONSUMER, NULL));
	close(prod);
}

TEST_F(fd_limit, epoch_create_is_emfile_and_leaves_no_name)
{
	totals_now(_metadata, self);
	fd_none(_metadata, self);
	EXPECT_EQ(EMFILE, _test_epoch_create(self->dev, self->name, 4, 16,
					     0600, NULL));
	fd_room(_metadata, self);
	totals_unchanged(_metadata, self);
	EXPECT_EQ(ENOENT, _test_epoch_open(self->dev, self->name, NULL));
	EXPECT_EQ(0, _test_epoch_create(self->dev, self->name, 4, 16, 0600,
					NULL));
}

TEST_F(fd_limit, epoch_open_is_emfile_and_the_domain_opens_after)
{
	struct baton_epoch_create c;

	ASSERT_EQ(0, _test_epoch_create(self->dev, self->name, 4, 16, 0600, &c));
	totals_now(_metadata, self);
	fd_none(_metadata, self);
	EXPECT_EQ(EMFILE, _test_epoch_open(self->dev, self->name, NULL));
	fd_room(_metadata, self);
	totals_unchanged(_metadata, self);
	EXPECT_EQ(0, _test_epoch_open(self->dev, self->name, NULL));
	close(c.out_fd);
}

TEST_F(fd_limit, pool_create_is_emfile_and_leaves_no_name)
{
	int fd = -1;

	totals_now(_metadata, self);
	fd_none(_metadata, self);
	EXPECT_EQ(EMFILE, pool_create(self->dev, self->name, &fd));
	fd_room(_metadata, self);
	totals_unchanged(_metadata, self);
	EXPECT_EQ(ENOENT, pool_open(self->dev, self->name, &fd));
	ASSERT_EQ(0, pool_create(self->dev, self->name, &fd));
	close(fd);
}

TEST_F(fd_limit, pool_open_is_emfile_and_takes_no_holder_index)
{
	int creator = -1, second = -1, third = -1;

	ASSERT_EQ(0, pool_create(self->dev, self->name, &creator));
	totals_now(_metadata, self);
	fd_none(_metadata, self);
	EXPECT_EQ(EMFILE, pool_open(self->dev, self->name, &second));
	fd_room(_metadata, self);
	totals_unchanged(_metadata, self);
	/* Two holders: an index kept by the refused open leaves none here. */
	EXPECT_EQ(0, pool_open(self->dev, self->name, &second));
	/* And the limit is still max_holders: this is the index error. */
	EXPECT_EQ(EMFILE, pool_open(self->dev, self->name, &third));
	close(second);
	close(creator);
}

TEST_HARNESS_MAIN

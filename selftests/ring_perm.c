// SPDX-License-Identifier: GPL-2.0
/*
 * ring_perm: who may attach to and unlink a ring.
 *
 * Owns the permission model of the brief: a ring has an owner (creator's
 * fsuid), a group (fsgid) and mode bits used like a file's: owner bits if
 * fsuid matches, else group bits if in_group_p(), else other bits; the
 * producer role needs the write bit, the consumer role the read bit;
 * CAP_DAC_OVERRIDE bypasses. Unlink: owner or CAP_SYS_ADMIN.
 *
 * Each check forks a child that drops to nobody (65534) with setres[ug]id,
 * which also drops every capability. The child keeps a /dev/baton fd it
 * opened as root, so what is tested is the ring's mode, never the device
 * node's. Results come back through a pipe as errno values.
 */
#include "common.h"

#include <grp.h>
#include <sys/fsuid.h>

#define NOBODY		65534
#define MAX_RESULTS	8

FIXTURE(perm) {
	int dev;
	char name[BATON_NAME_MAX];
	char name2[BATON_NAME_MAX];
};

FIXTURE_SETUP(perm)
{
	BT_REQUIRE_DEV();
	if (geteuid() != 0)
		SKIP(_exit(255), "needs root to switch to nobody");
	self->dev = bt_dev_open();
	ASSERT_LE(0, self->dev);
	bt_make_name(self->name, sizeof(self->name), "perm");
	bt_make_name(self->name2, sizeof(self->name2), "perm");
}

FIXTURE_TEARDOWN(perm)
{
	if (self->dev > 0) {
		_test_unlink(self->dev, self->name);
		_test_unlink(self->dev, self->name2);
		close(self->dev);
	}
}

struct as_nobody {
	int dev;
	const char *name;
	const char *name2;
	int ngroups;
	gid_t groups[2];
	int res[MAX_RESULTS];
};

typedef void (*nobody_fn)(struct as_nobody *a);

/*
 * Run fn as nobody in a child; 0 when the child ran to the end and
 * a->res holds its results.
 */
static int run_as_nobody(struct as_nobody *a, nobody_fn fn)
{
	int pfd[2];
	ssize_t n;
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(pfd[0]);
		if (setgroups(a->ngroups, a->groups) ||
		    setresgid(NOBODY, NOBODY, NOBODY) ||
		    setresuid(NOBODY, NOBODY, NOBODY))
			_exit(10);
		/* no capability may survive, or the test proves nothing */
		if (setresuid(0, 0, 0) == 0)
			_exit(11);
		fn(a);
		if (write(pfd[1], a->res, sizeof(a->res)) != sizeof(a->res))
			_exit(12);
		_exit(0);
	}
	close(pfd[1]);
	n = read(pfd[0], a->res, sizeof(a->res));
	close(pfd[0]);
	if (bt_wait_timeout(pid, 20000) != 0 || n != sizeof(a->res))
		return -1;
	return 0;
}

static void open_both(struct as_nobody *a)
{
	a->res[0] = _test_ring_open(a->dev, a->name, BATON_ROLE_PRODUCER, NULL);
	a->res[1] = _test_ring_open(a->dev, a->name, BATON_ROLE_CONSUMER, NULL);
}

static void open_both_and_unlink(struct as_nobody *a)
{
	open_both(a);
	a->res[2] = _test_unlink(a->dev, a->name);
}

/* Root creates a ring with @mode; nobody tries both roles. */
static void check_mode(struct __test_metadata *_metadata,
		       FIXTURE_DATA(perm) *self, uint32_t mode,
		       const gid_t *groups, int ngroups,
		       int want_prod, int want_cons)
{
	struct as_nobody a = { .dev = self->dev, .name = self->name };
	int fd;

	_test_unlink(self->dev, self->name);
	/* the creator takes neither role we test, so both are free */
	fd = test_ring_create(self->dev, self->name, BATON_ROLE_PRODUCER, 4,
			      8, mode, NULL);
	close(fd);
	a.ngroups = ngroups;
	if (ngroups)
		memcpy(a.groups, groups, ngroups * sizeof(gid_t));
	ASSERT_EQ(0, run_as_nobody(&a, open_both));
	EXPECT_EQ(want_prod, a.res[0]) TH_LOG("mode 0%o producer", mode);
	EXPECT_EQ(want_cons, a.res[1]) TH_LOG("mode 0%o consumer", mode);
}

TEST_F(perm, mode_0600_other_gets_eacces)
{
	check_mode(_metadata, self, 0600, NULL, 0, EACCES, EACCES);
}

TEST_F(perm, mode_0644_other_consumer_only)
{
	check_mode(_metadata, self, 0644, NULL, 0, EACCES, 0);
}

TEST_F(perm, mode_0666_other_both)
{
	check_mode(_metadata, self, 0666, NULL, 0, 0, 0);
}

TEST_F(perm, mode_0622_other_producer_only)
{
	check_mode(_metadata, self, 0622, NULL, 0, 0, EACCES);
}

/* Group class: a member gets the group bits, and only them. */
TEST_F(perm, group_bits_for_members)
{
	const gid_t root_grp[] = { 0 };

	check_mode(_metadata, self, 0060, root_grp, 1, 0, 0);
	check_mode(_metadata, self, 0040, root_grp, 1, EACCES, 0);
	check_mode(_metadata, self, 0606, root_grp, 1, EACCES, EACCES);
	/* the same ring, a non-member: other bits */
	check_mode(_metadata, self, 0606, NULL, 0, 0, 0);
	check_mode(_metadata, self, 0060, NULL, 0, EACCES, EACCES);
}

static void create_0266_then_open_consumer(struct as_nobody *a)
{
	struct baton_ring_create c;

	a->res[0] = _test_ring_create(a->dev, a->name, BATON_ROLE_PRODUCER, 4,
				      8, 0266, &c);
	/* owner bits (-w-) win over the other bits (rw-) */
	a->res[1] = _test_ring_open(a->dev, a->name, BATON_ROLE_CONSUMER,
				    NULL);
	if (!a->res[0])
		close(c.out_fd);
	a->res[2] = _test_ring_open(a->dev, a->name, BATON_ROLE_PRODUCER,
				    NULL);
}

TEST_F(perm, owner_gets_owner_bits_only)
{
	struct as_nobody a = { .dev = self->dev, .name = self->name };

	ASSERT_EQ(0, run_as_nobody(&a, create_0266_then_open_consumer));
	ASSERT_EQ(0, a.res[0]);
	EXPECT_EQ(EACCES, a.res[1]);
	EXPECT_EQ(0, a.res[2]);
	/* root bypasses the bits with CAP_DAC_OVERRIDE */
	EXPECT_EQ(0, _test_ring_open(self->dev, self->name,
				     BATON_ROLE_CONSUMER, NULL));
}

TEST_F(perm, other_cannot_unlink)
{
	struct as_nobody a = { .dev = self->dev, .name = self->name };

	/* even with every mode bit set, unlink is the owner's */
	ASSERT_EQ(0, _test_ring_create(self->dev, self->name,
				       BATON_ROLE_PRODUCER, 4, 8, 0777,
				       NULL));
	ASSERT_EQ(0, run_as_nobody(&a, open_both_and_unlink));
	EXPECT_EQ(0, a.res[0]);
	EXPECT_EQ(0, a.res[1]);
	EXPECT_EQ(EACCES, a.res[2]);
	/* still registered */
	EXPECT_EQ(0, _test_ring_open(self->dev, self->name,
				     BATON_ROLE_CONSUMER, NULL));
	EXPECT_EQ(EEXIST, _test_ring_create(self->dev, self->name,
					    BATON_ROLE_PRODUCER, 4, 8, 0600,
					    NULL));
}

static void create_two_unlink_one(struct as_nobody *a)
{
	a->res[0] = _test_ring_create(a->dev, a->name, BATON_ROLE_PRODUCER, 4,
				      8, 0600, NULL);
	a->res[1] = _test_ring_create(a->dev, a->name2, BATON_ROLE_PRODUCER,
				      4, 8, 0600, NULL);
	a->res[2] = _test_unlink(a->dev, a->name);
}

TEST_F(perm, owner_and_admin_can_unlink)
{
	struct as_nobody a = {
		.dev = self->dev, .name = self->name, .name2 = self->name2,
	};

	ASSERT_EQ(0, run_as_nobody(&a, create_two_unlink_one));
	ASSERT_EQ(0, a.res[0]);
	ASSERT_EQ(0, a.res[1]);
	EXPECT_EQ(0, a.res[2]);
	EXPECT_EQ(ENOENT, _test_ring_open(self->dev, self->name,
					  BATON_ROLE_CONSUMER, NULL));
	/* nobody's 0600 ring: root opens it (DAC override), unlinks it */
	EXPECT_EQ(0, _test_ring_open(self->dev, self->name2,
				     BATON_ROLE_CONSUMER, NULL));
	EXPECT_EQ(0, _test_unlink(self->dev, self->name2));
	EXPECT_EQ(ENOENT, _test_ring_open(self->dev, self->name2,
					  BATON_ROLE_CONSUMER, NULL));
}

static void fsuid_child(FIXTURE_DATA(perm) *self)
{
	int rc;

	setfsgid(NOBODY);
	setfsuid(NOBODY);
	rc = _test_ring_create(self->dev, self->name, BATON_ROLE_PRODUCER, 4,
			       8, 0600, NULL);
	_exit(rc);
}

/* The owner is the creator's fsuid, not its uid. */
TEST_F(perm, owner_is_creator_fsuid)
{
	struct as_nobody a = { .dev = self->dev, .name = self->name };
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		fsuid_child(self);
	ASSERT_EQ(0, bt_wait_timeout(pid, 20000));
	/* nobody owns it: owner bits rw- give both roles and unlink */
	ASSERT_EQ(0, run_as_nobody(&a, open_both_and_unlink));
	EXPECT_EQ(0, a.res[0]);
	EXPECT_EQ(0, a.res[1]);
	EXPECT_EQ(0, a.res[2]);
}

/* Permission is checked at attach; a denied open leaves no trace. */
TEST_F(perm, denied_open_takes_no_role)
{
	struct as_nobody a = { .dev = self->dev, .name = self->name };
	struct baton_ring_info info;
	int fd;

	fd = test_ring_create(self->dev, self->name, BATON_ROLE_CONSUMER, 4, 8,
			      0600, NULL);
	ASSERT_EQ(0, run_as_nobody(&a, open_both));
	EXPECT_EQ(EACCES, a.res[0]);
	EXPECT_EQ(EACCES, a.res[1]);
	test_info(fd, &info);
	EXPECT_EQ(0, info.out_producers);
	EXPECT_EQ(1, info.out_consumers);
	EXPECT_EQ(0, _test_ring_open(self->dev, self->name,
				     BATON_ROLE_PRODUCER, NULL));
	close(fd);
}

TEST_HARNESS_MAIN

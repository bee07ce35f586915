// SPDX-License-Identifier: GPL-2.0
/*
 * ring_create: the ring registry.
 *
 * Owns create/open/unlink semantics: geometry, kind, role and name
 * validation (EINVAL), EEXIST, ENOENT, O_CLOEXEC ring fds (also across
 * exec), SPSC role exclusivity (EBUSY) and its release on close, unlink
 * keeping open rings alive, and the errno the library passes through.
 */
#include "common.h"

FIXTURE(ring_create) {
	int dev;
	char name[BATON_NAME_MAX];
	char name2[BATON_NAME_MAX];
};

FIXTURE_SETUP(ring_create)
{
	BT_REQUIRE_DEV();
	self->dev = bt_dev_open();
	ASSERT_LE(0, self->dev);
	bt_make_name(self->name, sizeof(self->name), "reg");
	bt_make_name(self->name2, sizeof(self->name2), "reg");
}

FIXTURE_TEARDOWN(ring_create)
{
	if (self->dev > 0) {
		_test_unlink(self->dev, self->name);
		_test_unlink(self->dev, self->name2);
		close(self->dev);
	}
}

TEST_F(ring_create, create_reports_geometry)
{
	struct baton_ring_create c;
	struct baton_ring_info info;
	int fd;

	fd = test_ring_create(self->dev, self->name, BATON_ROLE_PRODUCER, 8,
			      64, 0600, &c);
	EXPECT_EQ(0, c.out_reserved);
	test_info(fd, &info);
	EXPECT_EQ(BATON_RING_SPSC, info.out_kind);
	EXPECT_EQ(BATON_ROLE_PRODUCER, info.out_role);
	EXPECT_EQ(8, info.out_slot_count);
	EXPECT_EQ(64, info.out_slot_size);
	EXPECT_EQ(1, info.out_producers);
	EXPECT_EQ(0, info.out_consumers);
	EXPECT_EQ(0, info.out_head);
	EXPECT_EQ(0, info.out_tail);
	EXPECT_EQ(0, memcmp(&c.out_off, &info.out_off, sizeof(c.out_off)));
	EXPECT_LE(8 * 64, info.out_off.slots_size);
	close(fd);
}

struct geom {
	uint32_t slots, slot_size;
};

TEST_F(ring_create, bad_geometry_einval)
{
	const struct geom bad[] = {
		{ 0, 64 }, { 1, 64 }, { 3, 64 }, { 6, 64 }, { 1000, 64 },
		{ BATON_SLOTS_MAX * 2, 8 }, { 0x80000000U, 8 },
		{ 0xffffffffU, 8 },
		{ 8, 0 }, { 8, 4 }, { 8, 12 }, { 8, 100 }, { 8, 65 },
		{ 8, BATON_SLOT_SIZE_MAX + 8 }, { 8, BATON_SLOT_SIZE_MAX * 2 },
		{ 8, 0xfffffff8U },
		/* each factor within its limits, the product above */
		{ BATON_SLOTS_MAX, 512 },
		{ 1U << 16, 8192 },
		{ 1U << 13, BATON_SLOT_SIZE_MAX },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(EINVAL, _test_ring_create(self->dev, self->name,
						    BATON_ROLE_PRODUCER,
						    bad[i].slots,
						    bad[i].slot_size, 0600,
						    NULL))
			TH_LOG("slots %u slot_size %u", bad[i].slots,
			       bad[i].slot_size);
		/* and nothing was registered */
		EXPECT_EQ(ENOENT, _test_ring_open(self->dev, self->name,
						  BATON_ROLE_CONSUMER, NULL));
	}
}

TEST_F(ring_create, geometry_limits_accepted)
{
	const struct geom good[] = {
		{ BATON_SLOTS_MIN, BATON_SLOT_SIZE_MIN },
		{ BATON_SLOTS_MIN, BATON_SLOT_SIZE_MAX },
		{ BATON_SLOTS_MAX, BATON_SLOT_SIZE_MIN },
		/* the product exactly at the limit: 256 MiB */
		{ BATON_SLOTS_MAX, BATON_RING_BYTES_MAX / BATON_SLOTS_MAX },
		{ 4, 24 },
	};
	struct baton_ring_create c;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(good); i++) {
		ASSERT_EQ(0, _test_ring_create(self->dev, self->name,
					       BATON_ROLE_CONSUMER,
					       good[i].slots,
					       good[i].slot_size, 0600, &c))
			TH_LOG("slots %u slot_size %u", good[i].slots,
			       good[i].slot_size);
		EXPECT_LE((uint64_t)good[i].slots * good[i].slot_size,
			  c.out_off.slots_size);
		close(c.out_fd);
		test_unlink(self->dev, self->name);
	}
}

TEST_F(ring_create, bad_kind_role_producers_einval)
{
	const uint32_t kinds[] = { 0, 2, 0x100, 0xffffffffU };
	const uint32_t roles[] = { 0, 3, 4, 0xffffffffU };
	struct baton_ring_create c;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kinds); i++) {
		bt_create_init(&c, self->name, BATON_ROLE_PRODUCER, 4, 8, 0600);
		c.kind = kinds[i];
		EXPECT_EQ(EINVAL, bt_ioctl(self->dev, BATON_IOC_RING_CREATE,
					   &c)) TH_LOG("kind %u", kinds[i]);
	}
	for (i = 0; i < ARRAY_SIZE(roles); i++) {
		bt_create_init(&c, self->name, roles[i], 4, 8, 0600);
		EXPECT_EQ(EINVAL, bt_ioctl(self->dev, BATON_IOC_RING_CREATE,
					   &c)) TH_LOG("role %u", roles[i]);
	}
	bt_create_init(&c, self->name, BATON_ROLE_PRODUCER, 4, 8, 0600);
	c.max_producers = 2;
	EXPECT_EQ(EINVAL, bt_ioctl(self->dev, BATON_IOC_RING_CREATE, &c));
	c.max_producers = 0xffffffffU;
	EXPECT_EQ(EINVAL, bt_ioctl(self->dev, BATON_IOC_RING_CREATE, &c));
	EXPECT_EQ(ENOENT, _test_ring_open(self->dev, self->name,
					  BATON_ROLE_CONSUMER, NULL));

	/* 0 and 1 are the two valid SPSC values. */
	c.max_producers = 1;
	ASSERT_EQ(0, bt_ioctl(self->dev, BATON_IOC_RING_CREATE, &c));
	close(c.out_fd);
	bt_create_init(&c, self->name2, BATON_ROLE_PRODUCER, 4, 8, 0600);
	c.max_producers = 0;
	ASSERT_EQ(0, bt_ioctl(self->dev, BATON_IOC_RING_CREATE, &c));
	close(c.out_fd);

	/* open checks the role too */
	for (i = 0; i < ARRAY_SIZE(roles); i++) {
		EXPECT_EQ(EINVAL, _test_ring_open(self->dev, self->name,
						  roles[i], NULL))
			TH_LOG("open role %u", roles[i]);
	}
}

TEST_F(ring_create, bad_names_einval)
{
	static const char *const bad[] = {
		"", "a/b", "/", "a b", " ", "tab\there", "nl\n", "x*y",
		"q?", "semi;colon", "\xc3\xa9t\xc3\xa9", "\x7f", "a\\b",
	};
	struct baton_ring_create c;
	struct baton_ring_open o;
	struct baton_unlink u;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(EINVAL, _test_ring_create(self->dev, bad[i],
						    BATON_ROLE_PRODUCER, 4, 8,
						    0600, NULL))
			TH_LOG("create name \"%s\"", bad[i]);
		EXPECT_EQ(EINVAL, _test_ring_open(self->dev, bad[i],
						  BATON_ROLE_PRODUCER, NULL))
			TH_LOG("open name \"%s\"", bad[i]);
		EXPECT_EQ(EINVAL, _test_unlink(self->dev, bad[i]))
			TH_LOG("unlink name \"%s\"", bad[i]);
	}

	/* 64 name bytes and no NUL among them */
	bt_create_init(&c, "", BATON_ROLE_PRODUCER, 4, 8, 0600);
	memset(c.name, 'a', sizeof(c.name));
	EXPECT_EQ(EINVAL, bt_ioctl(self->dev, BATON_IOC_RING_CREATE, &c));
	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.role = BATON_ROLE_CONSUMER;
	memset(o.name, 'a', sizeof(o.name));
	EXPECT_EQ(EINVAL, bt_ioctl(self->dev, BATON_IOC_RING_OPEN, &o));
	memset(&u, 0, sizeof(u));
	u.size = sizeof(u);
	memset(u.name, 'a', sizeof(u.name));
	EXPECT_EQ(EINVAL, bt_ioctl(self->dev, BATON_IOC_UNLINK, &u));
}

TEST_F(ring_create, name_charset_and_length_accepted)
{
	char name[BATON_NAME_MAX];
	int fd;

	/* 63 characters from every allowed class, NUL in the last byte */
	memset(name, 0, sizeof(name));
	snprintf(name, sizeof(name), "Az09._-%d", (int)getpid());
	memset(name + strlen(name), 'z', 63 - strlen(name));
	ASSERT_EQ(63, strlen(name));
	fd = test_ring_create(self->dev, name, BATON_ROLE_PRODUCER, 4, 8, 0600,
			      NULL);
	close(fd);
	/* the 63-char name is the ring's name, not a prefix of it */
	name[62] = 'y';
	EXPECT_EQ(ENOENT, _test_ring_open(self->dev, name,
					  BATON_ROLE_CONSUMER, NULL));
	name[62] = 'z';
	fd = test_ring_open(self->dev, name, BATON_ROLE_CONSUMER, NULL);
	close(fd);
	test_unlink(self->dev, name);
}

TEST_F(ring_create, eexist_until_unlink)
{
	int fd, fd2;

	fd = test_ring_create(self->dev, self->name, BATON_ROLE_PRODUCER, 4, 8,
			      0600, NULL);
	EXPECT_EQ(EEXIST, _test_ring_create(self->dev, self->name,
					    BATON_ROLE_PRODUCER, 4, 8, 0600,
					    NULL));
	EXPECT_EQ(EEXIST, _test_ring_create(self->dev, self->name,
					    BATON_ROLE_CONSUMER, 16, 64, 0666,
					    NULL));
	/* the name belongs to the registry, not to the fd */
	close(fd);
	EXPECT_EQ(EEXIST, _test_ring_create(self->dev, self->name,
					    BATON_ROLE_CONSUMER, 4, 8, 0600,
					    NULL));
	test_unlink(self->dev, self->name);
	fd2 = test_ring_create(self->dev, self->name, BATON_ROLE_CONSUMER, 8,
			       16, 0600, NULL);
	close(fd2);
}

TEST_F(ring_create, unknown_name_enoent)
{
	EXPECT_EQ(ENOENT, _test_ring_open(self->dev, self->name,
					  BATON_ROLE_PRODUCER, NULL));
	EXPECT_EQ(ENOENT, _test_ring_open(self->dev, self->name,
					  BATON_ROLE_CONSUMER, NULL));
	EXPECT_EQ(ENOENT, _test_unlink(self->dev, self->name));

	ASSERT_EQ(0, _test_ring_create(self->dev, self->name,
				       BATON_ROLE_PRODUCER, 4, 8, 0600, NULL));
	test_unlink(self->dev, self->name);
	EXPECT_EQ(ENOENT, _test_unlink(self->dev, self->name));
	EXPECT_EQ(ENOENT, _test_ring_open(self->dev, self->name,
					  BATON_ROLE_CONSUMER, NULL));
}

TEST_F(ring_create, ring_fds_are_cloexec)
{
	struct baton_ring_create c;
	struct baton_ring_open o;
	int flags;

	ASSERT_EQ(0, _test_ring_create(self->dev, self->name,
				       BATON_ROLE_PRODUCER, 4, 8, 0600, &c));
	flags = fcntl(c.out_fd, F_GETFD);
	ASSERT_LE(0, flags);
	EXPECT_TRUE(flags & FD_CLOEXEC);
	ASSERT_EQ(0, _test_ring_open(self->dev, self->name,
				     BATON_ROLE_CONSUMER, &o));
	flags = fcntl(o.out_fd, F_GETFD);
	ASSERT_LE(0, flags);
	EXPECT_TRUE(flags & FD_CLOEXEC);
	close(o.out_fd);
	close(c.out_fd);
}

/* The flag is not just reported: an exec'd program must not get the fd. */
TEST_F(ring_create, ring_fd_closed_across_exec)
{
	char path[PATH_MAX], arg[16];
	int fd, hold;
	pid_t pid;

	if (bt_helper_path(path, sizeof(path), "ring_peer"))
		SKIP(return, "helpers/ring_peer not found");
	fd = test_ring_create(self->dev, self->name, BATON_ROLE_PRODUCER, 4, 8,
			      0600, NULL);
	/* a non-CLOEXEC duplicate must survive, proving the check works */
	hold = fcntl(fd, F_DUPFD, 100);
	ASSERT_LE(100, hold);
	snprintf(arg, sizeof(arg), "%d", fd);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		execl(path, path, "fd-closed", arg, NULL);
		_exit(99);
	}
	EXPECT_EQ(0, bt_wait_timeout(pid, 20000));

	snprintf(arg, sizeof(arg), "%d", hold);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		execl(path, path, "fd-open", arg, NULL);
		_exit(99);
	}
	EXPECT_EQ(0, bt_wait_timeout(pid, 20000));
	close(hold);
	close(fd);
}

TEST_F(ring_create, second_role_ebusy_until_close)
{
	struct baton_ring_info info;
	int prod, cons, prod2, cons2;

	prod = test_ring_create(self->dev, self->name, BATON_ROLE_PRODUCER, 4,
				8, 0600, NULL);
	EXPECT_EQ(EBUSY, _test_ring_open(self->dev, self->name,
					 BATON_ROLE_PRODUCER, NULL));
	cons = test_ring_open(self->dev, self->name, BATON_ROLE_CONSUMER,
			      NULL);
	EXPECT_EQ(EBUSY, _test_ring_open(self->dev, self->name,
					 BATON_ROLE_CONSUMER, NULL));
	EXPECT_EQ(EBUSY, _test_ring_open(self->dev, self->name,
					 BATON_ROLE_PRODUCER, NULL));
	test_info(cons, &info);
	EXPECT_EQ(1, info.out_producers);
	EXPECT_EQ(1, info.out_consumers);
	EXPECT_EQ(BATON_ROLE_CONSUMER, info.out_role);

	/* closing a role frees it for a new attach */
	close(prod);
	test_info(cons, &info);
	EXPECT_EQ(0, info.out_producers);
	prod2 = test_ring_open(self->dev, self->name, BATON_ROLE_PRODUCER,
			       NULL);
	EXPECT_EQ(EBUSY, _test_ring_open(self->dev, self->name,
					 BATON_ROLE_PRODUCER, NULL));
	close(cons);
	test_info(prod2, &info);
	EXPECT_EQ(0, info.out_consumers);
	EXPECT_EQ(1, info.out_producers);
	cons2 = test_ring_open(self->dev, self->name, BATON_ROLE_CONSUMER,
			       NULL);
	test_info(prod2, &info);
	EXPECT_EQ(1, info.out_consumers);
	close(cons2);
	close(prod2);
}

/* A dup'd or inherited fd is the same attachment, not a second one. */
TEST_F(ring_create, dup_and_fork_share_one_role)
{
	struct baton_ring_info info;
	int prod, cons, dupfd;
	struct bt_sync s;
	pid_t pid;

	prod = test_ring_create(self->dev, self->name, BATON_ROLE_PRODUCER, 4,
				8, 0600, NULL);
	cons = test_ring_open(self->dev, self->name, BATON_ROLE_CONSUMER,
			      NULL);
	dupfd = dup(prod);
	ASSERT_LE(0, dupfd);
	close(prod);
	test_info(cons, &info);
	EXPECT_EQ(1, info.out_producers);
	EXPECT_EQ(EBUSY, _test_ring_open(self->dev, self->name,
					 BATON_ROLE_PRODUCER, NULL));

	ASSERT_EQ(0, bt_sync_init(&s));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* holds the inherited producer fd until told to go */
		_exit(bt_sync_wait(&s, 20000) ? 1 : 0);
	}
	close(dupfd);
	test_info(cons, &info);
	EXPECT_EQ(1, info.out_producers);
	EXPECT_EQ(EBUSY, _test_ring_open(self->dev, self->name,
					 BATON_ROLE_PRODUCER, NULL));
	bt_sync_post(&s);
	EXPECT_EQ(0, bt_wait_timeout(pid, 20000));
	test_info(cons, &info);
	EXPECT_EQ(0, info.out_producers);
	prod = test_ring_open(self->dev, self->name, BATON_ROLE_PRODUCER,
			      NULL);
	close(prod);
	close(cons);
	bt_sync_close(&s);
}

TEST_F(ring_create, unlink_keeps_open_ring_working)
{
	struct baton_ring_params p = bt_params(8, 16);
	struct baton_ring *prod = NULL, *cons = NULL, *other = NULL;
	struct baton_ring_info info;
	uint64_t v, i;

	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_PRODUCER,
				       &prod));
	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_CONSUMER,
				     BATON_BACKEND_KMOD, &cons));
	ASSERT_EQ(0, baton_ring_unlink(self->name, BATON_BACKEND_KMOD));
	EXPECT_EQ(ENOENT, _test_ring_open(self->dev, self->name,
					  BATON_ROLE_CONSUMER, NULL));

	/* the name is free: a new, unrelated ring can take it */
	p.slot_count = 2;
	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_PRODUCER,
				       &other));

	for (i = 0; i < 20; i++) {
		v = bt_mix(i);
		ASSERT_EQ(0, baton_spsc_try_push(prod, &v, sizeof(v)));
		v = 0;
		ASSERT_EQ(0, baton_spsc_try_pop(cons, &v, sizeof(v)));
		ASSERT_EQ(bt_mix(i), v);
	}
	test_info(baton_ring_fd(cons), &info);
	EXPECT_EQ(20, info.out_head);
	EXPECT_EQ(20, info.out_tail);
	EXPECT_EQ(8, info.out_slot_count);
	test_info(baton_ring_fd(other), &info);
	EXPECT_EQ(0, info.out_tail);
	EXPECT_EQ(2, info.out_slot_count);

	baton_ring_close(other);
	baton_ring_close(cons);
	baton_ring_close(prod);
}

TEST_F(ring_create, library_returns_negative_errno)
{
	struct baton_ring_params p = bt_params(4, 8);
	struct baton_ring *r = NULL, *r2 = NULL;

	EXPECT_EQ(-ENOENT, baton_ring_open(self->name, BATON_ROLE_CONSUMER,
					   BATON_BACKEND_KMOD, &r));
	EXPECT_EQ(-ENOENT, baton_ring_unlink(self->name, BATON_BACKEND_KMOD));
	p.slot_count = 3;
	EXPECT_EQ(-EINVAL, baton_ring_create(self->name, &p,
					     BATON_ROLE_PRODUCER, &r));
	p.slot_count = 4;
	EXPECT_EQ(-EINVAL, baton_ring_create("bad name", &p,
					     BATON_ROLE_PRODUCER, &r));
	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_PRODUCER,
				       &r));
	EXPECT_EQ(BATON_BACKEND_KMOD, r->backend);
	EXPECT_EQ(-EEXIST, baton_ring_create(self->name, &p,
					     BATON_ROLE_CONSUMER, &r2));
	EXPECT_EQ(-EBUSY, baton_ring_open(self->name, BATON_ROLE_PRODUCER,
					  BATON_BACKEND_KMOD, &r2));
	baton_ring_close(r);
	ASSERT_EQ(0, baton_ring_unlink(self->name, BATON_BACKEND_KMOD));
}

/* Lowest free fd number: an fd leaked by a failed ioctl would shift it. */
static int lowest_free_fd(void)
{
	int fd = dup(0), ret = fd;

	if (fd >= 0)
		close(fd);
	return ret;
}

/* A struct the kernel can read but not write back into. */
static void *readonly_copy(const void *src, size_t len)
{
	void *p = mmap(NULL, BT_PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memcpy(p, src, len);
	if (mprotect(p, BT_PAGE, PROT_READ)) {
		munmap(p, BT_PAGE);
		return NULL;
	}
	return p;
}

/* Output copy fails: EFAULT, and no name, no fd, no role left behind. */
TEST_F(ring_create, failed_copy_out_leaves_nothing)
{
	const struct baton_ring_hdr *hdr;
	struct baton_ring_create c;
	struct baton_ring_open o;
	struct baton_ring_info info;
	int before, prod;
	void *ro;

	bt_create_init(&c, self->name, BATON_ROLE_PRODUCER, 4, 8, 0600);
	ro = readonly_copy(&c, sizeof(c));
	ASSERT_NE(NULL, ro);
	before = lowest_free_fd();
	EXPECT_EQ(EFAULT, bt_ioctl(self->dev, BATON_IOC_RING_CREATE, ro));
	EXPECT_EQ(before, lowest_free_fd()) TH_LOG("create leaked an fd");
	EXPECT_EQ(ENOENT, _test_ring_open(self->dev, self->name,
					  BATON_ROLE_CONSUMER, NULL));
	munmap(ro, BT_PAGE);

	prod = test_ring_create(self->dev, self->name, BATON_ROLE_PRODUCER, 4,
				8, 0600, &c);
	hdr = bt_map(prod, &c.out_off, BT_HDR, PROT_READ);
	ASSERT_NE(MAP_FAILED, hdr);
	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.role = BATON_ROLE_CONSUMER;
	strcpy(o.name, self->name);
	ro = readonly_copy(&o, sizeof(o));
	ASSERT_NE(NULL, ro);
	before = lowest_free_fd();
	EXPECT_EQ(EFAULT, bt_ioctl(self->dev, BATON_IOC_RING_OPEN, ro));
	EXPECT_EQ(before, lowest_free_fd()) TH_LOG("open leaked an fd");
	munmap(ro, BT_PAGE);
	/* the consumer role was never taken, so never given back */
	test_info(prod, &info);
	EXPECT_EQ(0, info.out_consumers);
	EXPECT_EQ(0, hdr->state);
	EXPECT_EQ(0, hdr->consumer_deaths);
	EXPECT_EQ(0, _test_ring_open(self->dev, self->name,
				     BATON_ROLE_CONSUMER, NULL));
	munmap((void *)hdr, c.out_off.hdr_size);
	close(prod);
}

#define RACERS	6

/*
 * RACERS processes released at once by closing a pipe: each reports the
 * errno of its attempt on @res, then holds what it got until @hold closes.
 */
static void race(struct __test_metadata *_metadata,
		 FIXTURE_DATA(ring_create) *self, bool create, int *results)
{
	int start[2], res[2], hold[2], i, n;
	pid_t pids[RACERS];
	char c;

	ASSERT_EQ(0, pipe(start));
	ASSERT_EQ(0, pipe(res));
	ASSERT_EQ(0, pipe(hold));
	for (i = 0; i < RACERS; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i]) {
			struct baton_ring_open o;
			int rc;

			close(start[1]);
			close(hold[1]);
			if (read(start[0], &c, 1) != 0)
				_exit(2);
			/* the winner of an open keeps its fd until the end */
			rc = create ?
			     _test_ring_create(self->dev, self->name,
					       BATON_ROLE_CONSUMER, 4, 8, 0600,
					       NULL) :
			     _test_ring_open(self->dev, self->name,
					     BATON_ROLE_CONSUMER, &o);
			if (write(res[1], &rc, sizeof(rc)) != sizeof(rc))
				_exit(3);
			(void)!read(hold[0], &c, 1);
			_exit(0);
		}
	}
	close(start[0]);
	close(start[1]);	/* go */
	for (n = 0; n < RACERS; n++) {
		ASSERT_EQ(sizeof(int), read(res[0], &results[n], sizeof(int)));
	}
	close(hold[1]);		/* let them go */
	for (i = 0; i < RACERS; i++)
		EXPECT_EQ(0, bt_wait_timeout(pids[i], 20000));
	close(hold[0]);
	close(res[0]);
	close(res[1]);
}

static int count_rc(const int *results, int rc)
{
	int i, n = 0;

	for (i = 0; i < RACERS; i++)
		n += results[i] == rc;
	return n;
}

TEST_F(ring_create, create_race_has_one_winner)
{
	int results[RACERS], round;

	for (round = 0; round < 5; round++) {
		bt_make_name(self->name, sizeof(self->name), "race");
		race(_metadata, self, true, results);
		EXPECT_EQ(1, count_rc(results, 0)) TH_LOG("round %d", round);
		EXPECT_EQ(RACERS - 1, count_rc(results, EEXIST));
		test_unlink(self->dev, self->name);
	}
}

TEST_F(ring_create, open_race_has_one_winner)
{
	int results[RACERS], round, fd;

	for (round = 0; round < 5; round++) {
		bt_make_name(self->name, sizeof(self->name), "race");
		fd = test_ring_create(self->dev, self->name,
				      BATON_ROLE_PRODUCER, 4, 8, 0600, NULL);
		race(_metadata, self, false, results);
		EXPECT_EQ(1, count_rc(results, 0)) TH_LOG("round %d", round);
		EXPECT_EQ(RACERS - 1, count_rc(results, EBUSY));
		close(fd);
		test_unlink(self->dev, self->name);
	}
}

TEST_HARNESS_MAIN

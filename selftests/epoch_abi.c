// SPDX-License-Identifier: GPL-2.0
/*
 * Epoch domain ABI on the real module, raw ioctls only: the size rules of
 * every new struct (size - 1 -> EINVAL, a non-zero tail -> E2BIG, a zero
 * tail accepted, above a page -> E2BIG), flags and reserved fields,
 * geometry, names, EEXIST / ENOENT / EACCES / EBUSY / ENOSPC, ENOTTY,
 * KICK's argument, the mmap rules of the three regions, and that a ring
 * and a domain may share a name.
 */
#include "common.h"

#include <stddef.h>

static int ep_register(int fd, uint32_t *index)
{
	struct baton_epoch_register r;
	int rc;

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	rc = bt_ioctl(fd, BATON_EPOCH_IOC_REGISTER, &r);
	if (index)
		*index = r.out_index;
	return rc;
}

/*
 * Size rules for one ioctl: @buf holds a valid struct of @ver0 bytes
 * followed by room for a page and more. Returns a bitmask of failures.
 */
static int size_rules(int fd, unsigned long cmd, void *buf, uint32_t ver0,
		      void (*reset)(void *, const void *), const void *ctx,
		      size_t fd_off, int *created_fd)
{
	uint8_t *b = buf;
	int bad = 0, rc;

	reset(buf, ctx);
	*(uint32_t *)b = ver0 - 1;
	if (bt_ioctl(fd, cmd, b) != EINVAL)
		bad |= 1;
	reset(buf, ctx);
	*(uint32_t *)b = ver0 + 8;
	b[ver0 + 3] = 1;
	if (bt_ioctl(fd, cmd, b) != E2BIG)
		bad |= 2;
	reset(buf, ctx);
	*(uint32_t *)b = 4097;
	if (bt_ioctl(fd, cmd, b) != E2BIG)
		bad |= 4;
	reset(buf, ctx);
	*(uint32_t *)b = ver0 + 8;
	rc = bt_ioctl(fd, cmd, b);
	if (rc)
		bad |= 8;
	if (created_fd)
		*created_fd = rc ? -1 : *(int32_t *)(b + fd_off);
	return bad;
}

struct name_ctx {
	const char *name;
};

static void reset_create(void *buf, const void *ctx)
{
	struct baton_epoch_create *c = buf;

	memset(buf, 0, 8192);
	c->size = sizeof(*c);
	c->max_participants = 4;
	c->queue_len = 8;
	c->mode = 0600;
	snprintf(c->name, sizeof(c->name), "%s",
		 ((const struct name_ctx *)ctx)->name);
}

static void reset_open(void *buf, const void *ctx)
{
	struct baton_epoch_open *o = buf;

	memset(buf, 0, 8192);
	o->size = sizeof(*o);
	snprintf(o->name, sizeof(o->name), "%s",
		 ((const struct name_ctx *)ctx)->name);
}

static void reset_zero(void *buf, const void *ctx)
{
	(void)ctx;
	memset(buf, 0, 8192);
}

FIXTURE(epoch_abi) {
	int dev;
	char name[BATON_NAME_MAX];
	struct baton_epoch_create c;
	int fd;
};

FIXTURE_SETUP(epoch_abi)
{
	BT_REQUIRE_DEV();
	self->dev = bt_dev_open();
	ASSERT_LE(0, self->dev);
	bt_make_name(self->name, sizeof(self->name), "eabi");
	ASSERT_EQ(0, _test_epoch_create(self->dev, self->name, 4, 8, 0600, &self->c));
	self->fd = self->c.out_fd;
}

FIXTURE_TEARDOWN(epoch_abi)
{
	if (self->fd >= 0)
		close(self->fd);
	_test_epoch_unlink(self->dev, self->name);
	close(self->dev);
}

TEST_F(epoch_abi, feature_bit_and_layout)
{
	struct baton_version v = { .size = sizeof(v) };
	struct baton_epoch_offsets *o = &self->c.out_off;
	struct baton_epoch_hdr *h;

	ASSERT_EQ(0, bt_ioctl(self->dev, BATON_IOC_VERSION, &v));
	EXPECT_TRUE(v.out_features & BATON_FEAT_EPOCH);
	EXPECT_EQ(BT_PAGE, o->hdr_size);
	EXPECT_EQ(8U, o->queue_len);
	EXPECT_EQ(4ULL * o->part_stride, o->table_size);
	EXPECT_LE(o->q_entries + 8 * sizeof(struct baton_epoch_entry),
		  o->self_size);
	h = mmap(NULL, o->hdr_size, PROT_READ, MAP_SHARED, self->fd,
		 (off_t)o->hdr_mmap);
	ASSERT_NE(MAP_FAILED, h);
	EXPECT_EQ(BATON_EPOCH_MAGIC, h->magic);
	EXPECT_EQ((uint32_t)BATON_ABI_VERSION, h->abi_version);
	EXPECT_EQ(4U, h->max_participants);
	EXPECT_EQ(8U, h->queue_len);
	EXPECT_EQ(1U, h->global);
	EXPECT_EQ(0U, h->frontier);
	EXPECT_EQ(0, memcmp(o, &h->off, sizeof(*o)));
	munmap(h, o->hdr_size);
}

TEST_F(epoch_abi, size_rules_dev_ioctls)
{
	static uint8_t buf[8192];
	struct name_ctx ctx = { self->name };
	char other[BATON_NAME_MAX];
	int fd = -1;

	/* create: the zero-tail success makes a new domain. */
	bt_make_name(other, sizeof(other), "eabi.sz");
	ctx.name = other;
	EXPECT_EQ(0, size_rules(self->dev, BATON_IOC_EPOCH_CREATE, buf,
				BATON_EPOCH_CREATE_SIZE_VER0, reset_create,
				&ctx, offsetof(struct baton_epoch_create,
					       out_fd), &fd));
	if (fd >= 0)
		close(fd);
	/* open */
	EXPECT_EQ(0, size_rules(self->dev, BATON_IOC_EPOCH_OPEN, buf,
				BATON_EPOCH_OPEN_SIZE_VER0, reset_open, &ctx,
				offsetof(struct baton_epoch_open, out_fd),
				&fd));
	if (fd >= 0)
		close(fd);
	/* unlink, with the struct baton_unlink rules */
	reset_open(buf, &ctx);
	*(uint32_t *)buf = BATON_UNLINK_SIZE_VER0 - 1;
	EXPECT_EQ(EINVAL, bt_ioctl(self->dev, BATON_IOC_EPOCH_UNLINK, buf));
	*(uint32_t *)buf = BATON_UNLINK_SIZE_VER0 + 8;
	buf[BATON_UNLINK_SIZE_VER0 + 1] = 1;
	EXPECT_EQ(E2BIG, bt_ioctl(self->dev, BATON_IOC_EPOCH_UNLINK, buf));
	buf[BATON_UNLINK_SIZE_VER0 + 1] = 0;
	EXPECT_EQ(0, bt_ioctl(self->dev, BATON_IOC_EPOCH_UNLINK, buf));
	EXPECT_EQ(ENOENT, _test_epoch_unlink(self->dev, other));
}

TEST_F(epoch_abi, size_rules_domain_ioctls)
{
	static uint8_t buf[8192];
	struct {
		unsigned long cmd;
		uint32_t ver0;
	} t[] = {
		{ BATON_EPOCH_IOC_COLLECT, BATON_EPOCH_COLLECT_SIZE_VER0 },
		{ BATON_EPOCH_IOC_SYNCHRONIZE, BATON_EPOCH_SYNC_SIZE_VER0 },
		{ BATON_EPOCH_IOC_POLL, BATON_EPOCH_POLL_SIZE_VER0 },
		{ BATON_EPOCH_IOC_REGISTER, BATON_EPOCH_REGISTER_SIZE_VER0 },
	};
	size_t i;

	/* REGISTER last: its zero-tail success registers the fd. */
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		EXPECT_EQ(0, size_rules(self->fd, t[i].cmd, buf, t[i].ver0,
					reset_zero, NULL, 0, NULL)) {
			TH_LOG("ioctl %zu", i);
		}
	EXPECT_EQ(EBUSY, ep_register(self->fd, NULL));
}

TEST_F(epoch_abi, flags_reserved_params)
{
	struct baton_epoch_create c;
	struct baton_epoch_sync s;
	struct baton_epoch_poll p;
	struct baton_epoch_collect k;
	struct baton_epoch_register r;
	char n[BATON_NAME_MAX];

	bt_make_name(n, sizeof(n), "eabi.p");
	EXPECT_EQ(EINVAL, _test_epoch_create(self->dev, n, 0, 8, 0600, NULL));
	EXPECT_EQ(EINVAL, _test_epoch_create(self->dev, n,
				    BATON_EPOCH_PARTICIPANTS_MAX + 1, 8, 0600,
				    NULL));
	EXPECT_EQ(EINVAL, _test_epoch_create(self->dev, n, 4, 1, 0600, NULL));
	EXPECT_EQ(EINVAL, _test_epoch_create(self->dev, n, 4, 6, 0600, NULL));
	EXPECT_EQ(EINVAL, _test_epoch_create(self->dev, n, 4,
				    BATON_EPOCH_QUEUE_MAX * 2, 0600, NULL));
	EXPECT_EQ(EINVAL, _test_epoch_create(self->dev, n, 4, 8, 01600, NULL));
	EXPECT_EQ(EINVAL, _test_epoch_create(self->dev, "", 4, 8, 0600, NULL));
	EXPECT_EQ(EINVAL, _test_epoch_create(self->dev, "a/b", 4, 8, 0600, NULL));
	EXPECT_EQ(EEXIST, _test_epoch_create(self->dev, self->name, 4, 8, 0600, NULL));
	EXPECT_EQ(ENOENT, _test_epoch_open(self->dev, n, NULL));
	EXPECT_EQ(ENOENT, _test_epoch_unlink(self->dev, n));

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.max_participants = 4;
	c.queue_len = 8;
	snprintf(c.name, sizeof(c.name), "%s", n);
	c.flags = 1;
	EXPECT_EQ(EINVAL, bt_ioctl(self->dev, BATON_IOC_EPOCH_CREATE, &c));
	c.flags = 0;
	c.reserved0 = 1;
	EXPECT_EQ(EINVAL, bt_ioctl(self->dev, BATON_IOC_EPOCH_CREATE, &c));
	c.reserved0 = 0;
	c.reserved[1] = 1;
	EXPECT_EQ(EINVAL, bt_ioctl(self->dev, BATON_IOC_EPOCH_CREATE, &c));

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.flags = 1;
	EXPECT_EQ(EINVAL, bt_ioctl(self->fd, BATON_EPOCH_IOC_REGISTER, &r));
	memset(&k, 0, sizeof(k));
	k.size = sizeof(k);
	k.reserved[0] = 1;
	EXPECT_EQ(EINVAL, bt_ioctl(self->fd, BATON_EPOCH_IOC_COLLECT, &k));
	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.flags = 2;
	EXPECT_EQ(EINVAL, bt_ioctl(self->fd, BATON_EPOCH_IOC_SYNCHRONIZE, &s));
	s.flags = 0;
	s.epoch = 1000;		/* in the future */
	EXPECT_EQ(EINVAL, bt_ioctl(self->fd, BATON_EPOCH_IOC_SYNCHRONIZE, &s));
	memset(&p, 0, sizeof(p));
	p.size = sizeof(p);
	p.epoch = 1000;
	EXPECT_EQ(EINVAL, bt_ioctl(self->fd, BATON_EPOCH_IOC_POLL, &p));
	p.epoch = 0;
	p.flags = 1;
	EXPECT_EQ(EINVAL, bt_ioctl(self->fd, BATON_EPOCH_IOC_POLL, &p));

	EXPECT_EQ(EINVAL, ioctl(self->fd, BATON_EPOCH_IOC_KICK, 1UL) ? errno : 0);
	EXPECT_EQ(0, ioctl(self->fd, BATON_EPOCH_IOC_KICK, 0UL) ? errno : 0);
	EXPECT_EQ(ENOTTY, bt_ioctl(self->fd, BATON_RING_IOC_PARK, &s));
	EXPECT_EQ(ENOTTY, bt_ioctl(self->fd, _IO(BATON_IOC_MAGIC, 0x8f), &s));
}

TEST_F(epoch_abi, register_busy_and_table_full)
{
	int fds[4], i;
	uint32_t idx;

	ASSERT_EQ(0, ep_register(self->fd, &idx));
	EXPECT_EQ(0U, idx);
	EXPECT_EQ(EBUSY, ep_register(self->fd, NULL));
	for (i = 0; i < 3; i++) {
		struct baton_epoch_open o;

		ASSERT_EQ(0, _test_epoch_open(self->dev, self->name, &o));
		fds[i] = o.out_fd;
		ASSERT_EQ(0, ep_register(fds[i], &idx));
		EXPECT_EQ((uint32_t)i + 1, idx);
	}
	{
		struct baton_epoch_open o;

		ASSERT_EQ(0, _test_epoch_open(self->dev, self->name, &o));
		fds[3] = o.out_fd;
	}
	EXPECT_EQ(ENOSPC, ep_register(fds[3], NULL));
	/* A released participant frees its index. */
	close(fds[1]);
	EXPECT_EQ(0, ep_register(fds[3], &idx));
	EXPECT_EQ(2U, idx);
	close(fds[0]);
	close(fds[2]);
	close(fds[3]);
}

TEST_F(epoch_abi, mmap_rules)
{
	struct baton_epoch_offsets *o = &self->c.out_off;
	void *p;

	/* self before REGISTER */
	p = mmap(NULL, o->self_size, PROT_READ, MAP_SHARED, self->fd,
		 (off_t)o->self_mmap);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	/* hdr and table: read-only, shared, exact offsets, bounded */
	p = mmap(NULL, o->hdr_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 self->fd, (off_t)o->hdr_mmap);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EACCES, errno);
	p = mmap(NULL, o->table_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 self->fd, (off_t)o->table_mmap);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EACCES, errno);
	p = mmap(NULL, o->hdr_size, PROT_READ, MAP_PRIVATE, self->fd,
		 (off_t)o->hdr_mmap);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, o->hdr_size * 2, PROT_READ, MAP_SHARED, self->fd,
		 (off_t)o->hdr_mmap);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, BT_PAGE, PROT_READ, MAP_SHARED, self->fd,
		 (off_t)(16 * BT_PAGE));
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, o->table_size, PROT_READ, MAP_SHARED, self->fd,
		 (off_t)o->table_mmap);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-1, mprotect(p, BT_PAGE, PROT_READ | PROT_WRITE));
	munmap(p, o->table_size);

	/* self after REGISTER: read-write, and it is the table's slot 0 */
	ASSERT_EQ(0, ep_register(self->fd, NULL));
	p = mmap(NULL, o->self_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 self->fd, (off_t)o->self_mmap);
	ASSERT_NE(MAP_FAILED, p);
	{
		volatile uint64_t *ann = BT_WORD(p, o->ann, uint64_t);
		const volatile uint64_t *t;
		void *tab = mmap(NULL, o->table_size, PROT_READ, MAP_SHARED,
				 self->fd, (off_t)o->table_mmap);

		ASSERT_NE(MAP_FAILED, tab);
		t = BT_WORD(tab, o->ann, uint64_t);
		*ann = BATON_EPOCH_ANN(1);
		EXPECT_EQ(BATON_EPOCH_ANN(1), *t);
		*ann = 0;
		munmap(tab, o->table_size);
	}
	munmap(p, o->self_size);
}

/* A participant needs read and write permission; unlink needs the owner. */
TEST_F(epoch_abi, permissions)
{
	char n[BATON_NAME_MAX];
	pid_t pid;

	bt_make_name(n, sizeof(n), "eabi.perm");
	ASSERT_EQ(0, _test_epoch_create(self->dev, n, 2, 2, 0644, NULL));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int dev = bt_dev_open();

		if (dev < 0 || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(1);
		if (_test_epoch_open(dev, n, NULL) != EACCES)		/* 0644: r only */
			_exit(2);
		if (_test_epoch_open(dev, self->name, NULL) != EACCES)	/* 0600 */
			_exit(3);
		if (_test_epoch_unlink(dev, n) != EACCES)
			_exit(4);
		_exit(0);
	}
	EXPECT_EQ(0, bt_wait(pid));
	EXPECT_EQ(0, _test_epoch_unlink(self->dev, n));

	ASSERT_EQ(0, _test_epoch_create(self->dev, n, 2, 2, 0666, NULL));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int dev = bt_dev_open();

		if (dev < 0 || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(1);
		if (_test_epoch_open(dev, n, NULL) != 0)
			_exit(2);
		_exit(0);
	}
	EXPECT_EQ(0, bt_wait(pid));
	EXPECT_EQ(0, _test_epoch_unlink(self->dev, n));
}

/* Domains have their own registry: a ring of the same name is another. */
TEST_F(epoch_abi, ring_and_domain_share_a_name)
{
	EXPECT_EQ(0, _test_ring_create(self->dev, self->name,
				       BATON_ROLE_PRODUCER, 4, 64, 0600, NULL));
	EXPECT_EQ(0, _test_epoch_open(self->dev, self->name, NULL));
	EXPECT_EQ(0, _test_unlink(self->dev, self->name));
	EXPECT_EQ(0, _test_epoch_open(self->dev, self->name, NULL));
	EXPECT_EQ(0, _test_epoch_unlink(self->dev, self->name));
	EXPECT_EQ(ENOENT, _test_epoch_open(self->dev, self->name, NULL));
	/* The fd keeps the unlinked domain alive. */
	EXPECT_EQ(0, ioctl(self->fd, BATON_EPOCH_IOC_KICK, 0UL) ? errno : 0);
}

TEST_HARNESS_MAIN

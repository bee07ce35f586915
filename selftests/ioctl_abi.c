// SPDX-License-Identifier: GPL-2.0
/*
 * ioctl_abi: the size-versioned ioctl contract of <linux/baton.h>.
 *
 * Owns the rules every ioctl struct obeys (uapi header, "Conventions"):
 * size below *_SIZE_VER0 or 0 -> EINVAL, a larger size with a zero tail is
 * accepted and the tail is left alone, a non-zero tail -> E2BIG, non-zero
 * reserved -> EINVAL, unknown flag bits -> EINVAL, a bad pointer -> EFAULT;
 * plus the version query, unknown commands (ENOTTY) and WAKE's argument.
 * One FIXTURE_VARIANT per struct runs the same rules over all six, the way
 * the iommufd selftests do.
 */
#include "common.h"

#include <stddef.h>

_Static_assert(sizeof(struct baton_version) == BATON_VERSION_SIZE_VER0, "");
_Static_assert(sizeof(struct baton_ring_create) ==
	       BATON_RING_CREATE_SIZE_VER0, "");
_Static_assert(sizeof(struct baton_ring_open) == BATON_RING_OPEN_SIZE_VER0, "");
_Static_assert(sizeof(struct baton_unlink) == BATON_UNLINK_SIZE_VER0, "");
_Static_assert(sizeof(struct baton_park) == BATON_PARK_SIZE_VER0, "");
_Static_assert(sizeof(struct baton_ring_info) == BATON_RING_INFO_SIZE_VER0, "");
_Static_assert(sizeof(struct baton_name_wait) == BATON_NAME_WAIT_SIZE_VER0, "");
_Static_assert(sizeof(struct baton_ring_bind) == BATON_RING_BIND_SIZE_VER0, "");

#define ABI_SLOTS	4
#define ABI_SLOT_SIZE	64

FIXTURE(ioctl_abi) {
	int dev;
	int prod;			/* producer fd of @name */
	char name[BATON_NAME_MAX];
	char victim[BATON_NAME_MAX];	/* what the unlink variant removes */
	char pool[BATON_NAME_MAX];	/* ring_bind_pool: the one pool */
	int pool_fd;
	uint8_t buf[8192] __attribute__((aligned(8)));
};

FIXTURE_VARIANT(ioctl_abi) {
	unsigned long cmd;
	bool on_ring;		/* issued on a ring fd, not /dev/baton */
	size_t size;		/* this program's sizeof */
	size_t ver0;
	int nr_resv;		/* input fields named reserved* */
	size_t resv[3];
	size_t resv_len[3];
	uint32_t valid_flags;
};

FIXTURE_VARIANT_ADD(ioctl_abi, version) {
	.cmd = BATON_IOC_VERSION,
	.size = sizeof(struct baton_version),
	.ver0 = BATON_VERSION_SIZE_VER0,
};

FIXTURE_VARIANT_ADD(ioctl_abi, ring_create) {
	.cmd = BATON_IOC_RING_CREATE,
	.size = sizeof(struct baton_ring_create),
	.ver0 = BATON_RING_CREATE_SIZE_VER0,
	.nr_resv = 2,
	.resv = { offsetof(struct baton_ring_create, reserved[0]),
		  offsetof(struct baton_ring_create, reserved[1]) },
	.resv_len = { 8, 8 },
};

FIXTURE_VARIANT_ADD(ioctl_abi, ring_open) {
	.cmd = BATON_IOC_RING_OPEN,
	.size = sizeof(struct baton_ring_open),
	.ver0 = BATON_RING_OPEN_SIZE_VER0,
	.nr_resv = 3,
	.resv = { offsetof(struct baton_ring_open, reserved0),
		  offsetof(struct baton_ring_open, reserved[0]),
		  offsetof(struct baton_ring_open, reserved[1]) },
	.resv_len = { 4, 8, 8 },
};

FIXTURE_VARIANT_ADD(ioctl_abi, unlink) {
	.cmd = BATON_IOC_UNLINK,
	.size = sizeof(struct baton_unlink),
	.ver0 = BATON_UNLINK_SIZE_VER0,
	.nr_resv = 2,
	/* ipc_ns must be 0 without BATON_UNLINK_IPC_NS */
	.resv = { offsetof(struct baton_unlink, ipc_ns),
		  offsetof(struct baton_unlink, reserved) },
	.resv_len = { 8, 8 },
};

FIXTURE_VARIANT_ADD(ioctl_abi, park) {
	.cmd = BATON_RING_IOC_PARK,
	.on_ring = true,
	.size = sizeof(struct baton_park),
	.ver0 = BATON_PARK_SIZE_VER0,
	.nr_resv = 2,
	.resv = { offsetof(struct baton_park, reserved[0]),
		  offsetof(struct baton_park, reserved[1]) },
	.resv_len = { 8, 8 },
	.valid_flags = BATON_PARK_DEADLINE,
};

/* The fixture's ring exists: the wait returns at once. */
FIXTURE_VARIANT_ADD(ioctl_abi, name_wait) {
	.cmd = BATON_IOC_NAME_WAIT,
	.size = sizeof(struct baton_name_wait),
	.ver0 = BATON_NAME_WAIT_SIZE_VER0,
	.nr_resv = 3,
	.resv = { offsetof(struct baton_name_wait, reserved0),
		  offsetof(struct baton_name_wait, reserved[0]),
		  offsetof(struct baton_name_wait, reserved[1]) },
	.resv_len = { 4, 8, 8 },
	.valid_flags = BATON_NAME_WAIT_DEADLINE,
};

FIXTURE_VARIANT_ADD(ioctl_abi, pool_create) {
	.cmd = BATON_IOC_POOL_CREATE,
	.size = sizeof(struct baton_pool_create),
	.valid_flags = BATON_POOL_F_TAKES_COLD,
	.ver0 = BATON_POOL_CREATE_SIZE_VER0,
	.nr_resv = 3,
	.resv = { offsetof(struct baton_pool_create, reserved0),
		  offsetof(struct baton_pool_create, reserved[0]),
		  offsetof(struct baton_pool_create, reserved[1]) },
	.resv_len = { 4, 8, 8 },
};

FIXTURE_VARIANT_ADD(ioctl_abi, pool_open) {
	.cmd = BATON_IOC_POOL_OPEN,
	.size = sizeof(struct baton_pool_open),
	.valid_flags = BATON_POOL_F_TAKES_COLD,
	.ver0 = BATON_POOL_OPEN_SIZE_VER0,
	.nr_resv = 2,
	.resv = { offsetof(struct baton_pool_open, reserved[0]),
		  offsetof(struct baton_pool_open, reserved[1]) },
	.resv_len = { 8, 8 },
};

FIXTURE_VARIANT_ADD(ioctl_abi, ring_info) {
	.cmd = BATON_RING_IOC_INFO,
	.on_ring = true,
	.size = sizeof(struct baton_ring_info),
	.ver0 = BATON_RING_INFO_SIZE_VER0,
};

/* Every call binds the fixture's ring to the same pool: 0 each time. */
FIXTURE_VARIANT_ADD(ioctl_abi, ring_bind_pool) {
	.cmd = BATON_RING_IOC_BIND_POOL,
	.on_ring = true,
	.size = sizeof(struct baton_ring_bind),
	.ver0 = BATON_RING_BIND_SIZE_VER0,
	.nr_resv = 1,
	.resv = { offsetof(struct baton_ring_bind, reserved) },
	.resv_len = { 4 },
};

FIXTURE_SETUP(ioctl_abi)
{
	BT_REQUIRE_DEV();
	self->dev = bt_dev_open();
	ASSERT_LE(0, self->dev);
	bt_make_name(self->name, sizeof(self->name), "abi");
	self->prod = test_ring_create(self->dev, self->name,
				      BATON_ROLE_PRODUCER, ABI_SLOTS,
				      ABI_SLOT_SIZE, 0600, NULL);
}

FIXTURE_TEARDOWN(ioctl_abi)
{
	if (self->prod > 0)
		close(self->prod);
	if (self->victim[0])
		bt_unlink_quiet(self->victim);
	if (self->pool[0]) {
		close(self->pool_fd);
		baton_pool_unlink(self->pool);
	}
	if (self->dev > 0) {
		_test_unlink(self->dev, self->name);
		close(self->dev);
	}
}

/*
 * Fill self->buf with a well-formed struct of the variant's kind whose
 * size field says @size; bytes past sizeof stay zero. Every call that a
 * check expects to succeed must really succeed, so each call gets fresh
 * state (a new name to create, a new ring to unlink).
 */
static void abi_prep(struct __test_metadata *_metadata,
		     FIXTURE_DATA(ioctl_abi) *self,
		     const FIXTURE_VARIANT(ioctl_abi) *variant, uint32_t size)
{
	memset(self->buf, 0, sizeof(self->buf));

	switch (variant->cmd) {
	case BATON_IOC_RING_CREATE: {
		struct baton_ring_create *c = (void *)self->buf;

		c->kind = BATON_RING_SPSC;
		c->role = BATON_ROLE_CONSUMER;
		c->slot_count = 2;
		c->slot_size = 8;
		c->mode = 0600;
		bt_make_name(self->victim, sizeof(self->victim), "abic");
		strcpy(c->name, self->victim);
		break;
	}
	case BATON_IOC_RING_OPEN: {
		struct baton_ring_open *o = (void *)self->buf;

		o->role = BATON_ROLE_CONSUMER;
		strcpy(o->name, self->name);
		break;
	}
	case BATON_IOC_UNLINK: {
		struct baton_unlink *u = (void *)self->buf;

		bt_make_name(self->victim, sizeof(self->victim), "abiu");
		ASSERT_EQ(0, _test_ring_create(self->dev, self->victim,
					       BATON_ROLE_PRODUCER, 2, 8,
					       0600, NULL));
		strcpy(u->name, self->victim);
		break;
	}
	case BATON_IOC_NAME_WAIT: {
		struct baton_name_wait *w = (void *)self->buf;

		w->kind = BATON_NAME_RING;
		strcpy(w->name, self->name);
		break;
	}
	case BATON_RING_IOC_BIND_POOL: {
		struct baton_pool_params pp = {
			.nr_classes = 1,
			.classes = { { .buf_shift = 12, .count = 4 } },
		};
		struct baton_pool *pool;

		if (!self->pool[0]) {
			bt_make_name(self->pool, sizeof(self->pool), "abib");
			ASSERT_EQ(0, baton_pool_create(self->pool, &pp, &pool));
			baton_pool_close(pool);
			self->pool_fd = bt_pool_fd(self->pool);
			ASSERT_LE(0, self->pool_fd);
		}
		((struct baton_ring_bind *)self->buf)->pool_fd = self->pool_fd;
		break;
	}
	case BATON_RING_IOC_PARK: {
		struct baton_park *p = (void *)self->buf;

		/* Producer at tail 0 of an empty ring: not full, returns. */
		p->expected = 0;
		break;
	}
	case BATON_IOC_POOL_CREATE:
	case BATON_IOC_POOL_OPEN: {
		struct baton_pool_params pp = {
			.nr_classes = 1,
			.classes = { { .buf_shift = 12, .count = 4 } },
		};
		struct baton_pool_create *c = (void *)self->buf;
		struct baton_pool_open *o = (void *)self->buf;
		struct baton_pool *pool;

		bt_make_name(self->victim, sizeof(self->victim), "abip");
		if (variant->cmd == BATON_IOC_POOL_OPEN) {
			/* Its fd closes; the name stays until post. */
			ASSERT_EQ(0, baton_pool_create(self->victim, &pp, &pool));
			baton_pool_close(pool);
			strcpy(o->name, self->victim);
			break;
		}
		c->mode = 0600;
		c->nr_classes = 1;
		c->max_holders = 2;
		c->classes[0].buf_shift = 12;
		c->classes[0].count = 4;
		strcpy(c->name, self->victim);
		break;
	}
	default:
		break;
	}
	*(uint32_t *)self->buf = size;
}

static int abi_call(FIXTURE_DATA(ioctl_abi) *self,
		    const FIXTURE_VARIANT(ioctl_abi) *variant)
{
	return bt_ioctl(variant->on_ring ? self->prod : self->dev,
			variant->cmd, self->buf);
}

/* Undo what an accepted call did; report whether it had its effect. */
static bool abi_post(FIXTURE_DATA(ioctl_abi) *self,
		     const FIXTURE_VARIANT(ioctl_abi) *variant, int rc)
{
	bool effect = true;

	switch (variant->cmd) {
	case BATON_IOC_RING_CREATE: {
		struct baton_ring_create *c = (void *)self->buf;

		if (!rc) {
			effect = fcntl(c->out_fd, F_GETFD) >= 0;
			close(c->out_fd);
		} else {
			/* A rejected create must not leave a ring behind. */
			effect = _test_ring_open(self->dev, self->victim,
						 BATON_ROLE_PRODUCER,
						 NULL) == ENOENT;
		}
		_test_unlink(self->dev, self->victim);
		self->victim[0] = 0;
		break;
	}
	case BATON_IOC_RING_OPEN: {
		struct baton_ring_open *o = (void *)self->buf;

		if (!rc) {
			effect = fcntl(o->out_fd, F_GETFD) >= 0 &&
				 o->out_slot_count == ABI_SLOTS &&
				 o->out_slot_size == ABI_SLOT_SIZE &&
				 o->out_kind == BATON_RING_SPSC;
			close(o->out_fd);
		}
		break;
	}
	case BATON_IOC_UNLINK:
		if (!rc) {
			effect = _test_ring_open(self->dev, self->victim,
						 BATON_ROLE_CONSUMER,
						 NULL) == ENOENT;
		} else {
			/* A rejected unlink must leave the name in place. */
			effect = _test_unlink(self->dev, self->victim) == 0;
		}
		self->victim[0] = 0;
		break;
	case BATON_IOC_VERSION: {
		struct baton_version *v = (void *)self->buf;

		if (!rc)
			effect = v->out_abi_version == BATON_ABI_VERSION &&
				 v->out_reserved == 0;
		break;
	}
	case BATON_IOC_POOL_CREATE:
	case BATON_IOC_POOL_OPEN: {
		/* out_fd sits at the same place relative to the end in both. */
		int fd = variant->cmd == BATON_IOC_POOL_CREATE ?
			 ((struct baton_pool_create *)self->buf)->out_fd :
			 ((struct baton_pool_open *)self->buf)->out_fd;
		struct baton_pool *pool;

		if (!rc) {
			effect = fcntl(fd, F_GETFD) >= 0;
			close(fd);
		} else if (variant->cmd == BATON_IOC_POOL_CREATE) {
			/* A rejected create must not leave a pool behind. */
			effect = baton_pool_open(self->victim, &pool) == -ENOENT;
		}
		effect &= baton_pool_unlink(self->victim) == 0 ||
			  (rc && variant->cmd == BATON_IOC_POOL_CREATE);
		self->victim[0] = 0;
		break;
	}
	case BATON_RING_IOC_INFO: {
		struct baton_ring_info *i = (void *)self->buf;

		if (!rc)
			effect = i->out_role == BATON_ROLE_PRODUCER &&
				 i->out_kind == BATON_RING_SPSC &&
				 i->out_slot_count == ABI_SLOTS &&
				 i->out_slot_size == ABI_SLOT_SIZE &&
				 i->out_producers == 1 &&
				 i->out_consumers == 0;
		break;
	}
	default:
		break;
	}
	return effect;
}

static bool tail_is_zero(const uint8_t *p, size_t from, size_t to)
{
	for (; from < to; from++)
		if (p[from])
			return false;
	return true;
}

TEST_F(ioctl_abi, size_ver0_accepted)
{
	int rc;

	abi_prep(_metadata, self, variant, variant->ver0);
	rc = abi_call(self, variant);
	ASSERT_EQ(0, rc);
	ASSERT_TRUE(abi_post(self, variant, rc));
}

TEST_F(ioctl_abi, size_below_ver0_einval)
{
	const uint32_t sizes[] = { variant->ver0 - 1, variant->ver0 - 8, 8, 4 };
	size_t i;
	int rc;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		abi_prep(_metadata, self, variant, sizes[i]);
		rc = abi_call(self, variant);
		EXPECT_EQ(EINVAL, rc) TH_LOG("size %u", sizes[i]);
		EXPECT_TRUE(abi_post(self, variant, rc));
	}
}

TEST_F(ioctl_abi, size_zero_einval)
{
	int rc;

	abi_prep(_metadata, self, variant, 0);
	rc = abi_call(self, variant);
	ASSERT_EQ(EINVAL, rc);
	ASSERT_TRUE(abi_post(self, variant, rc));
}

/* A newer userspace with a zero tail: accepted, tail not written. */
TEST_F(ioctl_abi, size_larger_zero_tail_accepted)
{
	/* up to a whole page, the most any kernel copy_struct user takes */
	const size_t extra[] = { 8, 256, BT_PAGE - variant->size };
	size_t i;
	int rc;

	for (i = 0; i < ARRAY_SIZE(extra); i++) {
		abi_prep(_metadata, self, variant, variant->size + extra[i]);
		rc = abi_call(self, variant);
		EXPECT_EQ(0, rc) TH_LOG("size %zu", variant->size + extra[i]);
		EXPECT_TRUE(abi_post(self, variant, rc));
		EXPECT_TRUE(tail_is_zero(self->buf, variant->size,
					 variant->size + extra[i]))
			TH_LOG("kernel wrote past its struct");
	}
}

TEST_F(ioctl_abi, size_larger_nonzero_tail_e2big)
{
	const size_t where[] = { 0, 7, 255 };
	size_t i;
	int rc;

	for (i = 0; i < ARRAY_SIZE(where); i++) {
		abi_prep(_metadata, self, variant, variant->size + 256);
		self->buf[variant->size + where[i]] = 0x5a;
		rc = abi_call(self, variant);
		EXPECT_EQ(E2BIG, rc) TH_LOG("non-zero byte at tail+%zu",
					     where[i]);
		EXPECT_TRUE(abi_post(self, variant, rc));
	}
}

/*
 * Every input field named reserved must be 0, checked over its whole
 * width. Structs without one (version, ring_info) instead must ignore
 * what the caller left in their out_* fields and overwrite it.
 */
TEST_F(ioctl_abi, reserved_nonzero_einval)
{
	int i, b, rc;

	if (!variant->nr_resv) {
		abi_prep(_metadata, self, variant, variant->size);
		memset(self->buf + 8, 0xa5, variant->size - 8);
		rc = abi_call(self, variant);
		ASSERT_EQ(0, rc);
		ASSERT_TRUE(abi_post(self, variant, rc));
		return;
	}
	for (i = 0; i < variant->nr_resv; i++) {
		for (b = 0; b < 2; b++) {
			size_t at = variant->resv[i] +
				    (b ? variant->resv_len[i] - 1 : 0);

			abi_prep(_metadata, self, variant, variant->size);
			self->buf[at] = b ? 0x80 : 0x01;
			rc = abi_call(self, variant);
			EXPECT_EQ(EINVAL, rc)
				TH_LOG("reserved byte at offset %zu", at);
			EXPECT_TRUE(abi_post(self, variant, rc));
		}
	}
}

TEST_F(ioctl_abi, unknown_flags_einval)
{
	int bit, rc;

	for (bit = 0; bit < 32; bit++) {
		uint32_t flag = 1U << bit;

		if (variant->valid_flags & flag)
			continue;
		abi_prep(_metadata, self, variant, variant->size);
		((uint32_t *)self->buf)[1] = flag;
		rc = abi_call(self, variant);
		EXPECT_EQ(EINVAL, rc) TH_LOG("flags 0x%x", flag);
		EXPECT_TRUE(abi_post(self, variant, rc));
	}
}

TEST_F(ioctl_abi, bad_pointer_efault)
{
	int fd = variant->on_ring ? self->prod : self->dev;

	ASSERT_EQ(EFAULT, bt_ioctl(fd, variant->cmd, NULL));
	ASSERT_EQ(EFAULT, bt_ioctl(fd, variant->cmd, (void *)8));
}

TEST(version_reports_abi_and_features)
{
	const uint64_t want = BATON_FEAT_RING_SPSC | BATON_FEAT_PARK |
			      BATON_FEAT_POLL | BATON_FEAT_PEER_DEATH |
			      BATON_FEAT_ROLE_MMAP;
	struct baton_version v;
	int dev;

	BT_REQUIRE_DEV();
	dev = bt_dev_open();
	ASSERT_LE(0, dev);
	memset(&v, 0xff, sizeof(v));
	v.size = sizeof(v);
	v.flags = 0;
	ASSERT_EQ(0, bt_ioctl(dev, BATON_IOC_VERSION, &v));
	EXPECT_EQ(BATON_ABI_VERSION, v.out_abi_version);
	EXPECT_EQ(0, v.out_reserved);
	EXPECT_EQ(want, v.out_features & want);
	/* No bit the header does not define. */
	EXPECT_EQ(0, v.out_features &
		     ~((uint64_t)(BATON_FEAT_ROLE_MMAP * 2 - 1) |
		       BATON_FEAT_RING_MPSC | BATON_FEAT_EPOCH |
		       BATON_FEAT_NAME_WAIT | BATON_FEAT_POOL |
		       BATON_FEAT_POOL_WAIT | BATON_FEAT_POOL_SHARE |
		       BATON_FEAT_RING_BIND | BATON_FEAT_POOL_COLD |
		       BATON_FEAT_POOL_COLD_OPTIN | BATON_FEAT_POOL_IDLE));
	close(dev);
}

TEST(library_version_matches_ioctl)
{
	struct baton_version v = { .size = sizeof(v) };
	uint32_t abi = 0;
	uint64_t feat = 0;
	int dev;

	BT_REQUIRE_DEV();
	dev = bt_dev_open();
	ASSERT_LE(0, dev);
	ASSERT_EQ(0, bt_ioctl(dev, BATON_IOC_VERSION, &v));
	close(dev);
	ASSERT_EQ(0, baton_abi_version(&abi, &feat));
	EXPECT_EQ(v.out_abi_version, abi);
	EXPECT_EQ(v.out_features, feat);
}

TEST(unknown_cmd_on_dev_enotty)
{
	uint8_t buf[512] = { 0 };
	const unsigned long cmds[] = {
		_IO(BATON_IOC_MAGIC, 0x05),	/* 0x04: BATON_IOC_NAME_WAIT */
		_IO(BATON_IOC_MAGIC, 0x3f),
		_IO(BATON_IOC_MAGIC, 0xff),
		/* Same nr, other direction/size encoding: another command. */
		_IOWR(BATON_IOC_MAGIC, 0x00, struct baton_version),
		_IOW(BATON_IOC_MAGIC, 0x01, struct baton_ring_create),
		_IO(0xBB, 0x00),
		/* Ring-fd commands mean nothing on the device. */
		BATON_RING_IOC_PARK,
		BATON_RING_IOC_WAKE,
		BATON_RING_IOC_INFO,
		BATON_RING_IOC_BIND_POOL,
	};
	size_t i;
	int dev;

	BT_REQUIRE_DEV();
	dev = bt_dev_open();
	ASSERT_LE(0, dev);
	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		memset(buf, 0, sizeof(buf));
		*(uint32_t *)buf = 256;
		EXPECT_EQ(ENOTTY, bt_ioctl(dev, cmds[i], buf))
			TH_LOG("cmd 0x%lx", cmds[i]);
	}
	close(dev);
}

TEST(unknown_cmd_on_ring_enotty)
{
	uint8_t buf[512] = { 0 };
	const unsigned long cmds[] = {
		_IO(BATON_IOC_MAGIC, 0x44),	/* 0x43: _BIND_POOL */
		_IO(BATON_IOC_MAGIC, 0x3f),
		_IOWR(BATON_IOC_MAGIC, 0x40, struct baton_park),
		_IO(0xBB, 0x40),
		/* Device commands mean nothing on a ring fd. */
		BATON_IOC_VERSION,
		BATON_IOC_RING_CREATE,
		BATON_IOC_RING_OPEN,
		BATON_IOC_UNLINK,
	};
	char name[BATON_NAME_MAX];
	size_t i;
	int dev, fd;

	BT_REQUIRE_DEV();
	dev = bt_dev_open();
	ASSERT_LE(0, dev);
	bt_make_name(name, sizeof(name), "enotty");
	fd = test_ring_create(dev, name, BATON_ROLE_CONSUMER, 2, 8, 0600,
			      NULL);
	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		memset(buf, 0, sizeof(buf));
		*(uint32_t *)buf = 256;
		EXPECT_EQ(ENOTTY, bt_ioctl(fd, cmds[i], buf))
			TH_LOG("cmd 0x%lx", cmds[i]);
	}
	close(fd);
	test_unlink(dev, name);
	close(dev);
}

TEST(wake_arg_must_be_zero)
{
	struct baton_ring_offsets off;
	const struct baton_ring_hdr *hdr;
	char name[BATON_NAME_MAX];
	int dev, fd;

	BT_REQUIRE_DEV();
	dev = bt_dev_open();
	ASSERT_LE(0, dev);
	bt_make_name(name, sizeof(name), "wake");
	fd = test_ring_create(dev, name, BATON_ROLE_PRODUCER, 2, 8, 0600,
			      NULL);
	hdr = (const void *)bt_map_ro_by_fd(fd, BT_HDR, &off);
	ASSERT_NE(NULL, hdr);

	ASSERT_EQ(EINVAL, ioctl(fd, BATON_RING_IOC_WAKE, 1UL) ? errno : 0);
	ASSERT_EQ(EINVAL, ioctl(fd, BATON_RING_IOC_WAKE, (unsigned long)&off) ?
			  errno : 0);
	/* A rejected wake is not counted. */
	EXPECT_EQ(0, hdr->wakes_of_consumer);
	ASSERT_EQ(0, _test_wake(fd));
	EXPECT_EQ(1, hdr->wakes_of_consumer);
	EXPECT_EQ(0, hdr->wakes_of_producer);

	bt_unmap(&off, BT_HDR, (void *)hdr);
	close(fd);
	test_unlink(dev, name);
	close(dev);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0
/*
 * limits_caps: the per-user caps on objects and bytes (kmod/limits.c).
 *
 * Owns the checks of Documentation/limits.rst, "Per-user caps": a uid at
 * max_objects_per_user or max_bytes_per_user gets EDQUOT from ring and
 * domain create, a refused create leaves no trace, the objects it already
 * owns keep working (a message is pushed and popped through one), the
 * charge ends when the object is freed (last fd closed), not at unlink,
 * each uid has its own count, lowering a cap disturbs nothing that
 * exists, CAP_SYS_RESOURCE (and only it, not uid 0) bypasses the caps,
 * and the totals objects_in_use / bytes_in_use follow every object to the
 * byte, the bytes being those of the regions the create returned (MPSC
 * rings: their sequence words and claim pages too).
 *
 * The caps are module parameters: the fixture saves them and puts them
 * back. The checks run in children that drop to uid LIM_UID (and so lose
 * every capability); a child reports the step that failed as its exit
 * code, and prints why. The VM runs one test at a time, so the totals
 * move only by what the test does.
 */
#include "common.h"

#include <grp.h>
#include <sched.h>
#include <linux/capability.h>

#define LIM_UID		4242
#define LIM_UID2	4243
#define PARAMS		"/sys/module/baton/parameters/"

/* ---- module parameters ---- */

static int param_read(const char *name, unsigned long *v)
{
	char path[128], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	*v = strtoul(buf, NULL, 10);
	return 0;
}

static int param_write(const char *name, unsigned long v)
{
	char path[128], buf[64];
	int fd, len, ok;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = snprintf(buf, sizeof(buf), "%lu\n", v);
	ok = write(fd, buf, len) == len;
	close(fd);
	return ok ? 0 : -1;
}

/* A total, or ULONG_MAX if unreadable (never a plausible value). */
static unsigned long in_use(const char *name)
{
	unsigned long v;

	return param_read(name, &v) ? ULONG_MAX : v;
}

static unsigned long objects_in_use(void)
{
	return in_use("objects_in_use");
}

static unsigned long bytes_in_use(void)
{
	return in_use("bytes_in_use");
}

/* What an SPSC ring owns: every region its create returned. */
static unsigned long ring_bytes(const struct baton_ring_offsets *o)
{
	return (unsigned long)o->hdr_size + o->prod_size + o->cons_size +
	       o->slots_size;
}

/* ---- raw domain ioctls ---- */

static int ep_create(int dev, const char *name, uint32_t maxp, uint32_t qlen,
		     struct baton_epoch_create *out)
{
	return _test_epoch_create(dev, name, maxp, qlen, 0600, out);
}

/* What a domain owns: its header and every participant region. */
static unsigned long domain_bytes(const struct baton_epoch_offsets *o)
{
	return (unsigned long)o->hdr_size + o->table_size;
}

/* ---- children ---- */

#define NAMES	6

struct lim_ctx {
	char name[NAMES][BATON_NAME_MAX];
	unsigned long big;		/* bytes of a "big" ring */
	struct bt_sync ready, go;	/* child -> parent, parent -> child */
};

/* In a child: say which step failed and why, and return its number. */
#define STEP(n, cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "# child uid %d: step %d failed: %s "	\
			"(errno %d)\n", (int)getuid(), n, #cond, errno);\
		return n;						\
	}								\
} while (0)

typedef int (*child_fn)(struct lim_ctx *c);

/*
 * Become @uid, keeping the group of /dev/baton (the library opens the
 * device for each create, and udev may have made it 0660). Every
 * capability goes with uid 0; 0 on success.
 */
static int become(uid_t uid)
{
	struct stat st;
	gid_t dev_gid;

	if (stat(BATON_DEVICE, &st))
		return -1;
	dev_gid = st.st_gid;
	if (setgroups(1, &dev_gid) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid))
		return -1;
	return setresuid(0, 0, 0) == 0 ? -1 : 0;
}

/*
 * Run @fn in a child as @uid, or as root without CAP_SYS_RESOURCE when
 * @uid is 0. Its exit code, or 100+ if it could not become what it was
 * asked to be.
 */
static int run_as(uid_t uid, child_fn fn, struct lim_ctx *c)
{
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		if (uid) {
			if (become(uid))
				_exit(100);
		} else {
			struct __user_cap_header_struct h = {
				.version = _LINUX_CAPABILITY_VERSION_3,
			};
			struct __user_cap_data_struct d[2];

			if (syscall(SYS_capget, &h, d))
				_exit(102);
			d[0].effective &= ~(1U << CAP_SYS_RESOURCE);
			d[0].permitted &= ~(1U << CAP_SYS_RESOURCE);
			if (syscall(SYS_capset, &h, d))
				_exit(103);
		}
		_exit(fn(c));
	}
	return bt_wait_timeout(pid, 60000);
}

/* A message through a ring a child owns: the lib handle @p produces. */
static int push_pop(const char *name, struct baton_ring *p)
{
	struct baton_ring *cons;
	uint64_t in = bt_mix(getpid()), out = 0;
	int ok;

	if (baton_ring_open(name, BATON_ROLE_CONSUMER, BATON_BACKEND_KMOD,
			    &cons))
		return -1;
	ok = !baton_spsc_try_push(p, &in, sizeof(in)) &&
	     !baton_spsc_try_pop(cons, &out, sizeof(out)) && in == out;
	baton_ring_close(cons);
	return ok ? 0 : -1;
}

static int ring_new(int dev, const char *name, uint32_t slots,
		    uint32_t slot_size, struct baton_ring_create *out)
{
	return _test_ring_create(dev, name, BATON_ROLE_CONSUMER, slots,
				 slot_size, 0600, out);
}

/* ---- fixture ---- */

FIXTURE(caps) {
	int dev;
	unsigned long max_objects, max_bytes;
	struct lim_ctx ctx;
};

FIXTURE_SETUP(caps)
{
	int i;

	BT_REQUIRE_DEV();
	if (geteuid() != 0)
		SKIP(_exit(255), "needs root to set the caps and change uid");
	self->dev = bt_dev_open();
	ASSERT_LE(0, self->dev);
	ASSERT_EQ(0, param_read("max_objects_per_user", &self->max_objects));
	ASSERT_EQ(0, param_read("max_bytes_per_user", &self->max_bytes));
	for (i = 0; i < NAMES; i++)
		bt_make_name(self->ctx.name[i], BATON_NAME_MAX, "lim");
	ASSERT_EQ(0, bt_sync_init(&self->ctx.ready));
	ASSERT_EQ(0, bt_sync_init(&self->ctx.go));
}

FIXTURE_TEARDOWN(caps)
{
	int i;

	param_write("max_objects_per_user", self->max_objects);
	param_write("max_bytes_per_user", self->max_bytes);
	for (i = 0; i < NAMES; i++) {
		_test_unlink(self->dev, self->ctx.name[i]);
		_test_epoch_unlink(self->dev, self->ctx.name[i]);
	}
	bt_sync_close(&self->ctx.ready);
	bt_sync_close(&self->ctx.go);
	close(self->dev);
}

/*
 * At 3 objects: ring A (lib), domain D, ring B. Then a ring and a domain
 * are both EDQUOT; A still moves a message; B unlinked but open still
 * counts; once closed, a new ring fits.
 */
static int objects_child(struct lim_ctx *c)
{
	unsigned long base = objects_in_use();
	struct baton_ring_params p = bt_params(8, 64);
	struct baton_ring_create b;
	struct baton_epoch_create d;
	struct baton_ring *a, *x = NULL;
	int dev = bt_dev_open();

	STEP(1, dev >= 0 && base != ULONG_MAX);
	STEP(2, !baton_ring_create(c->name[0], &p, BATON_ROLE_PRODUCER, &a));
	STEP(3, !ep_create(dev, c->name[1], 2, 8, &d));
	STEP(4, !ring_new(dev, c->name[2], 8, 64, &b));
	STEP(5, objects_in_use() == base + 3);

	STEP(6, ring_new(dev, c->name[3], 8, 64, NULL) == EDQUOT);
	STEP(7, ep_create(dev, c->name[3], 2, 8, NULL) == EDQUOT);
	STEP(8, baton_ring_create(c->name[3], &p, BATON_ROLE_PRODUCER, &x) ==
		-EDQUOT && !x);
	STEP(9, objects_in_use() == base + 3);
	STEP(10, !push_pop(c->name[0], a));

	/* Unlinked but open: the ring exists, so it still counts. */
	STEP(11, !_test_unlink(dev, c->name[2]));
	STEP(12, ring_new(dev, c->name[3], 8, 64, NULL) == EDQUOT);
	STEP(13, objects_in_use() == base + 3);
	close(b.out_fd);
	STEP(14, objects_in_use() == base + 2);
	STEP(15, !ring_new(dev, c->name[3], 8, 64, NULL));

	baton_ring_close(a);
	close(d.out_fd);
	STEP(16, !_test_unlink(dev, c->name[0]) &&
		 !_test_unlink(dev, c->name[3]) &&
		 !_test_epoch_unlink(dev, c->name[1]));
	STEP(17, objects_in_use() == base);
	close(dev);
	return 0;
}

TEST_F(caps, object_cap)
{
	ASSERT_EQ(0, param_write("max_objects_per_user", 3));
	ASSERT_EQ(0, run_as(LIM_UID, objects_child, &self->ctx));
}

/*
 * The cap is 2.5 big rings: two fit, a third is EDQUOT, a small ring and
 * a small domain fit in the rest, a large domain does not; big ring 1
 * still moves a message; freeing big ring 2 makes room for the third.
 */
static int bytes_child(struct lim_ctx *c)
{
	unsigned long base = bytes_in_use(), small;
	struct baton_ring_params p = bt_params(64, 4096);
	struct baton_ring_create r2, rs;
	struct baton_epoch_create d;
	struct baton_ring *r1;
	int dev = bt_dev_open();

	STEP(1, dev >= 0 && base != ULONG_MAX);
	STEP(2, !baton_ring_create(c->name[0], &p, BATON_ROLE_PRODUCER, &r1));
	STEP(3, !ring_new(dev, c->name[1], 64, 4096, &r2));
	STEP(4, bytes_in_use() == base + 2 * c->big);
	STEP(5, ring_new(dev, c->name[2], 64, 4096, NULL) == EDQUOT);
	STEP(6, bytes_in_use() == base + 2 * c->big);

	STEP(7, !ring_new(dev, c->name[3], 8, 64, &rs));
	STEP(8, !ep_create(dev, c->name[4], 1, 2, &d));
	small = ring_bytes(&rs.out_off) + domain_bytes(&d.out_off);
	STEP(9, small < c->big / 2);
	STEP(10, bytes_in_use() == base + 2 * c->big + small);
	/* 64 participants of 4096 entries: far more than what is left. */
	STEP(11, ep_create(dev, c->name[5], 64, 4096, NULL) == EDQUOT);
	STEP(12, !push_pop(c->name[0], r1));

	STEP(13, !_test_unlink(dev, c->name[1]));
	STEP(14, ring_new(dev, c->name[2], 64, 4096, NULL) == EDQUOT);
	close(r2.out_fd);
	STEP(15, !ring_new(dev, c->name[2], 64, 4096, NULL));
	STEP(16, bytes_in_use() == base + 2 * c->big + small);

	baton_ring_close(r1);
	close(rs.out_fd);
	close(d.out_fd);
	STEP(17, !_test_unlink(dev, c->name[0]) &&
		 !_test_unlink(dev, c->name[2]) &&
		 !_test_unlink(dev, c->name[3]) &&
		 !_test_epoch_unlink(dev, c->name[4]));
	STEP(18, bytes_in_use() == base);
	close(dev);
	return 0;
}

TEST_F(caps, byte_cap)
{
	struct baton_ring_create big;
	unsigned long base = bytes_in_use();

	/* What one big ring costs, measured as root (no cap applies). */
	ASSERT_NE(ULONG_MAX, base);
	ASSERT_EQ(0, ring_new(self->dev, self->ctx.name[0], 64, 4096, &big));
	self->ctx.big = ring_bytes(&big.out_off);
	EXPECT_EQ(base + self->ctx.big, bytes_in_use());
	close(big.out_fd);
	EXPECT_EQ(base + self->ctx.big, bytes_in_use()) {
		TH_LOG("the registry's reference keeps the ring");
	}
	ASSERT_EQ(0, _test_unlink(self->dev, self->ctx.name[0]));
	ASSERT_EQ(base, bytes_in_use());

	ASSERT_EQ(0, param_write("max_bytes_per_user",
				 2 * self->ctx.big + self->ctx.big / 2));
	ASSERT_EQ(0, run_as(LIM_UID, bytes_child, &self->ctx));
}

/* Leave one ring behind in the registry (the fd is closed on exit). */
static int leave_one(struct lim_ctx *c)
{
	int dev = bt_dev_open();

	STEP(1, dev >= 0);
	STEP(2, !ring_new(dev, c->name[getuid() == LIM_UID ? 0 : 1], 8, 64,
			  NULL));
	return 0;
}

static int refused(struct lim_ctx *c)
{
	int dev = bt_dev_open();

	STEP(1, dev >= 0);
	STEP(2, ring_new(dev, c->name[2], 8, 64, NULL) == EDQUOT);
	STEP(3, ep_create(dev, c->name[2], 2, 8, NULL) == EDQUOT);
	return 0;
}

/* Each uid has its own count; the owner of a registered ring pays. */
TEST_F(caps, per_uid)
{
	unsigned long base = objects_in_use();

	ASSERT_EQ(0, param_write("max_objects_per_user", 1));
	ASSERT_EQ(0, run_as(LIM_UID, leave_one, &self->ctx));
	ASSERT_EQ(0, run_as(LIM_UID2, leave_one, &self->ctx));
	ASSERT_EQ(base + 2, objects_in_use());
	ASSERT_EQ(0, run_as(LIM_UID, refused, &self->ctx));
	ASSERT_EQ(0, run_as(LIM_UID2, refused, &self->ctx));
	/* Root unlinks LIM_UID's ring: its charge goes, it may create again. */
	ASSERT_EQ(0, _test_unlink(self->dev, self->ctx.name[0]));
	ASSERT_EQ(base + 1, objects_in_use());
	ASSERT_EQ(0, run_as(LIM_UID, leave_one, &self->ctx));
	ASSERT_EQ(base + 2, objects_in_use());
}

/* CAP_SYS_RESOURCE bypasses, uid 0 without it does not; both counted. */
TEST_F(caps, cap_sys_resource_bypasses)
{
	unsigned long objs = objects_in_use(), bytes = bytes_in_use();
	struct baton_ring_create r;

	ASSERT_EQ(0, param_write("max_objects_per_user", 0));
	ASSERT_EQ(0, param_write("max_bytes_per_user", 0));
	ASSERT_EQ(0, ring_new(self->dev, self->ctx.name[0], 8, 64, &r));
	close(r.out_fd);
	EXPECT_EQ(objs + 1, objects_in_use());
	EXPECT_EQ(bytes + ring_bytes(&r.out_off), bytes_in_use());
	EXPECT_EQ(0, run_as(0, refused, &self->ctx));
	EXPECT_EQ(0, run_as(LIM_UID, refused, &self->ctx));
	EXPECT_EQ(objs + 1, objects_in_use());
}

/* Two rings, then the parent lowers the cap to 1 under the child's feet. */
static int lowered_child(struct lim_ctx *c)
{
	struct baton_ring_params p = bt_params(8, 64);
	struct baton_ring *a;
	struct baton_ring_create b;
	int dev = bt_dev_open();

	STEP(1, dev >= 0);
	STEP(2, !baton_ring_create(c->name[0], &p, BATON_ROLE_PRODUCER, &a));
	STEP(3, !ring_new(dev, c->name[1], 8, 64, &b));
	STEP(4, !bt_sync_post(&c->ready) && !bt_sync_wait(&c->go, 20000));

	/* Over the new cap: both rings work, nothing new is allowed. */
	STEP(5, !push_pop(c->name[0], a));
	STEP(6, !_test_ring_open(dev, c->name[1], BATON_ROLE_PRODUCER, NULL));
	STEP(7, ring_new(dev, c->name[2], 8, 64, NULL) == EDQUOT);
	STEP(8, !_test_unlink(dev, c->name[1]));
	close(b.out_fd);
	STEP(9, ring_new(dev, c->name[2], 8, 64, NULL) == EDQUOT);
	baton_ring_close(a);
	STEP(10, !_test_unlink(dev, c->name[0]));
	STEP(11, !ring_new(dev, c->name[2], 8, 64, NULL));
	return 0;
}

TEST_F(caps, lowering_disturbs_nothing)
{
	pid_t pid;

	ASSERT_EQ(0, param_write("max_objects_per_user", 4));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (become(LIM_UID))
			_exit(100);
		_exit(lowered_child(&self->ctx));
	}
	EXPECT_EQ(0, bt_sync_wait(&self->ctx.ready, 20000));
	EXPECT_EQ(0, param_write("max_objects_per_user", 1));
	EXPECT_EQ(0, bt_sync_post(&self->ctx.go));
	ASSERT_EQ(0, bt_wait_timeout(pid, 60000));
}

/* An MPSC ring also owns its sequence words and one claim page each. */
TEST_F(caps, mpsc_bytes_counted)
{
	unsigned long bytes = bytes_in_use();
	struct baton_ring_create c;
	const struct baton_ring_offsets *o = &c.out_off;

	ASSERT_NE(ULONG_MAX, bytes);
	bt_create_init(&c, self->ctx.name[0], BATON_ROLE_CONSUMER, 1024, 64,
		       0600);
	c.kind = BATON_RING_MPSC;
	c.max_producers = 4;
	ASSERT_EQ(0, bt_ioctl(self->dev, BATON_IOC_RING_CREATE, &c));
	EXPECT_LT(0, o->seq_size);
	EXPECT_EQ(bytes + ring_bytes(o) + o->seq_size + 4UL * o->claim_size,
		  bytes_in_use());
	close(c.out_fd);
	ASSERT_EQ(0, _test_unlink(self->dev, self->ctx.name[0]));
	EXPECT_EQ(bytes, bytes_in_use());
}

/* The caps are root's to change; the totals are nobody's. */
TEST_F(caps, parameter_modes)
{
	static const char *const caps[] = {
		"max_objects_per_user", "max_bytes_per_user",
	};
	static const char *const totals[] = {
		"objects_in_use", "bytes_in_use",
	};
	char path[128];
	struct stat st;
	unsigned int i;

	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), PARAMS "%s", caps[i]);
		ASSERT_EQ(0, stat(path, &st));
		EXPECT_EQ(0644, st.st_mode & 07777) TH_LOG("%s", path);
		snprintf(path, sizeof(path), PARAMS "%s", totals[i]);
		ASSERT_EQ(0, stat(path, &st));
		EXPECT_EQ(0444, st.st_mode & 07777) TH_LOG("%s", path);
		EXPECT_EQ(-1, open(path, O_WRONLY | O_CLOEXEC));
		EXPECT_EQ(EACCES, errno) TH_LOG("%s", path);
	}
}

/*
 * A user namespace owned by LIM_UID, its uids 0..USERNS_UIDS-1 mapped (by
 * root, from outside: the job of newuidmap and /etc/subuid) to host uids
 * from USERNS_BASE: every uid inside counts against LIM_UID's cap, as well
 * as against its own. The child makes one ring as LIM_UID, enters the
 * namespace, and forks one creator per inside uid; with a cap of 3 only
 * two of them fit. The parent writes the map between ready and go.
 */
#define USERNS_BASE	300000
#define USERNS_UIDS	8

static int userns_create_as(int dev, uid_t inside, const char *name)
{
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		if (setresuid(inside, inside, inside))
			_exit(100);
		_exit(ring_new(dev, name, 8, 64, NULL));
	}
	return bt_wait_timeout(pid, 30000);
}

static int userns_child(struct lim_ctx *c)
{
	int dev = bt_dev_open();
	uid_t i;

	STEP(1, dev >= 0);
	STEP(2, !ring_new(dev, c->name[0], 8, 64, NULL));
	STEP(3, !unshare(CLONE_NEWUSER));
	STEP(4, !bt_sync_post(&c->ready));
	STEP(5, !bt_sync_wait(&c->go, 30000));
	/* Inside uid i is host uid USERNS_BASE + i; LIM_UID is unmapped. */
	STEP(6, userns_create_as(dev, 0, c->name[1]) == 0);
	STEP(7, userns_create_as(dev, 1, c->name[2]) == 0);
	/* LIM_UID's three objects are made: no other inside uid may add. */
	for (i = 2; i < 5; i++)
		STEP(8 + (int)i, userns_create_as(dev, i, c->name[3]) ==
			EDQUOT);
	close(dev);
	return 0;
}

TEST_F(caps, userns_counts_against_its_owner)
{
	unsigned long base = objects_in_use();
	char map[64];
	pid_t pid;
	int fd;

	/* Debian's switch for unprivileged user namespaces, if present. */
	fd = open("/proc/sys/kernel/unprivileged_userns_clone", O_WRONLY);
	if (fd >= 0) {
		ASSERT_EQ(1, write(fd, "1", 1));
		close(fd);
	}
	ASSERT_EQ(0, param_write("max_objects_per_user", 3));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (become(LIM_UID))
			_exit(100);
		_exit(userns_child(&self->ctx));
	}
	if (bt_sync_wait(&self->ctx.ready, 30000)) {
		kill(pid, SIGKILL);
		ASSERT_EQ(0, bt_wait_timeout(pid, 1000));
	}
	snprintf(map, sizeof(map), "0 %d %d\n", USERNS_BASE, USERNS_UIDS);
	ASSERT_EQ(0, bt_write_proc(pid, "uid_map", map));
	ASSERT_EQ(0, bt_sync_post(&self->ctx.go));
	EXPECT_EQ(0, bt_wait_timeout(pid, 60000));
	EXPECT_EQ(base + 3, objects_in_use());
}

TEST_HARNESS_MAIN

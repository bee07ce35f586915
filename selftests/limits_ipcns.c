// SPDX-License-Identifier: GPL-2.0
/*
 * limits_ipcns: names are scoped to the IPC namespace of their creator,
 * as POSIX message queues are (Documentation/limits.rst, "IPC
 * namespaces").
 *
 * Owns the checks: the same name created in two namespaces made with
 * unshare(CLONE_NEWIPC) gives two objects (no EEXIST), each side opens
 * only its own (told apart by geometry), and open and unlink of the other
 * side's name are ENOENT, for rings and epoch domains alike; unlink in one
 * namespace leaves the other's object alone; an object outlives its
 * creator's exit in a namespace nobody runs in any more, and a process
 * that joins that namespace with setns() finds it there.
 *
 * Each namespace is a child process; children report the step that
 * failed as their exit code and talk to the test over pipes.
 */
#include "common.h"
#include "netlink_util.h"

#include <grp.h>
#include <sched.h>

#define PARAMS		"/sys/module/baton/parameters/"

static unsigned long objects_in_use(void)
{
	char buf[64];
	ssize_t n;
	int fd = open(PARAMS "objects_in_use", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return ULONG_MAX;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return ULONG_MAX;
	buf[n] = 0;
	return strtoul(buf, NULL, 10);
}

/* ---- raw domain ioctls ---- */

static int ep_create(int dev, const char *name, uint32_t maxp)
{
	return _test_epoch_create(dev, name, maxp, 8, 0600, NULL);
}

/* 0 and the domain's table size in *maxp, or the errno. */
static int ep_open(int dev, const char *name, uint32_t *maxp)
{
	struct baton_epoch_open o;
	int rc = _test_epoch_open(dev, name, &o);

	if (!rc) {
		*maxp = o.out_max_participants;
		close(o.out_fd);
	}
	return rc;
}

/* 0 and the ring's slot count in *slots, or the errno. */
static int ring_open(int dev, const char *name, uint32_t *slots)
{
	struct baton_ring_open o;
	int rc = _test_ring_open(dev, name, BATON_ROLE_CONSUMER, &o);

	if (!rc) {
		*slots = o.out_slot_count;
		close(o.out_fd);
	}
	return rc;
}

/* ---- a namespace: one child ---- */

#define STEP(n, cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "# ns child %d: step %d failed: %s "	\
			"(errno %d)\n", (int)getpid(), n, #cond, errno);\
		return n;						\
	}								\
} while (0)

/* A fresh IPC namespace; a user namespace too if we lack the right. */
static int new_ipc_ns(void)
{
	if (!unshare(CLONE_NEWIPC))
		return 0;
	if (errno != EPERM)
		return -1;
	return unshare(CLONE_NEWUSER | CLONE_NEWIPC);
}

struct ns_side {
	const char *name;
	uint32_t mine;			/* slot count and table size here */
	struct bt_sync created;		/* this side -> the test */
	struct bt_sync go;		/* the test -> this side */
};

/* Nothing of that name is reachable from here: open and unlink fail. */
static int side_sees_nothing(int dev, struct ns_side *s)
{
	uint32_t v = 0;

	STEP(1, ring_open(dev, s->name, &v) == ENOENT);
	STEP(2, ep_open(dev, s->name, &v) == ENOENT);
	STEP(3, _test_unlink(dev, s->name) == ENOENT);
	STEP(4, _test_epoch_unlink(dev, s->name) == ENOENT);
	return 0;
}

/*
 * Create @name (ring and domain) sized @mine, whatever another namespace
 * holds under that name, and find only these.
 */
static int side_create(int dev, struct ns_side *s)
{
	uint32_t v = 0;

	STEP(10, !_test_ring_create(dev, s->name, BATON_ROLE_PRODUCER,
				    s->mine, 64, 0600, NULL));
	STEP(11, !ep_create(dev, s->name, s->mine));
	STEP(12, !ring_open(dev, s->name, &v) && v == s->mine);
	STEP(13, !ep_open(dev, s->name, &v) && v == s->mine);
	/* Taken here, whatever the other namespace holds. */
	STEP(14, _test_ring_create(dev, s->name, BATON_ROLE_PRODUCER, 8, 64,
				   0600, NULL) == EEXIST);
	STEP(15, ep_create(dev, s->name, 3) == EEXIST);
	return 0;
}

/*
 * While the other side's objects of the same name exist: ours are still
 * ours; once unlinked, theirs are neither opened nor unlinked from here.
 */
static int side_finish(int dev, struct ns_side *s)
{
	uint32_t v = 0;

	STEP(20, !ring_open(dev, s->name, &v) && v == s->mine);
	STEP(21, !ep_open(dev, s->name, &v) && v == s->mine);
	STEP(22, !_test_unlink(dev, s->name) && !_test_epoch_unlink(dev, s->name));
	return side_sees_nothing(dev, s);
}

/*
 * One namespace (a new one if @fresh): checked empty although the other
 * side may already hold the name, our objects made, then, once the test
 * says go, checked and removed.
 */
static int side_run(struct ns_side *s, bool fresh)
{
	int dev, ret;

	STEP(30, !fresh || !new_ipc_ns());
	dev = bt_dev_open();
	STEP(31, dev >= 0);
	ret = side_sees_nothing(dev, s);
	if (!ret)
		ret = side_create(dev, s);
	if (!ret && bt_sync_post(&s->created))
		ret = 32;
	if (!ret && bt_sync_wait(&s->go, 30000))
		ret = 33;
	if (!ret)
		ret = side_finish(dev, s);
	close(dev);
	return ret;
}

FIXTURE(ipcns) {
	char name[BATON_NAME_MAX];
	struct ns_side a, b;
};

FIXTURE_SETUP(ipcns)
{
	struct ns_side *sides[] = { &self->a, &self->b };
	int i;

	BT_REQUIRE_DEV();
	bt_make_name(self->name, sizeof(self->name), "ipcns");
	self->a.mine = 8;
	self->b.mine = 16;
	for (i = 0; i < 2; i++) {
		sides[i]->name = self->name;
		ASSERT_EQ(0, bt_sync_init(&sides[i]->created));
		ASSERT_EQ(0, bt_sync_init(&sides[i]->go));
	}
}

FIXTURE_TEARDOWN(ipcns)
{
	struct ns_side *sides[] = { &self->a, &self->b };
	int i;

	bt_unlink_quiet(self->name);
	for (i = 0; i < 2; i++) {
		bt_sync_close(&sides[i]->created);
		bt_sync_close(&sides[i]->go);
	}
}

static pid_t side_start(struct ns_side *s, bool fresh)
{
	pid_t pid = fork();

	if (!pid)
		_exit(side_run(s, fresh));
	return pid;
}

/*
 * A and B, each in a namespace of its own: B finds nothing of A's name
 * and creates its own; A finds its own, unlinks it, and then cannot reach
 * B's; B finds its own intact.
 */
TEST_F(ipcns, same_name_in_two_namespaces)
{
	unsigned long base = objects_in_use();
	pid_t a, b;
	int dev;

	ASSERT_NE(ULONG_MAX, base);
	a = side_start(&self->a, true);
	ASSERT_LE(0, a);
	ASSERT_EQ(0, bt_sync_wait(&self->a.created, 30000));
	b = side_start(&self->b, true);
	ASSERT_LE(0, b);
	EXPECT_EQ(0, bt_sync_wait(&self->b.created, 30000));
	/* The test's own namespace sees neither. */
	dev = bt_dev_open();
	EXPECT_EQ(ENOENT, _test_ring_open(dev, self->name,
					  BATON_ROLE_CONSUMER, NULL));
	close(dev);
	EXPECT_EQ(base + 4, objects_in_use());

	EXPECT_EQ(0, bt_sync_post(&self->a.go));
	EXPECT_EQ(0, bt_wait_timeout(a, 30000));
	EXPECT_EQ(base + 2, objects_in_use());
	EXPECT_EQ(0, bt_sync_post(&self->b.go));
	EXPECT_EQ(0, bt_wait_timeout(b, 30000));
	EXPECT_EQ(base, objects_in_use());
}

/* The test's own namespace (A, no unshare) against a new one (B). */
TEST_F(ipcns, outer_and_inner)
{
	unsigned long base = objects_in_use();
	pid_t a, b;

	ASSERT_NE(ULONG_MAX, base);
	a = side_start(&self->a, false);
	ASSERT_LE(0, a);
	ASSERT_EQ(0, bt_sync_wait(&self->a.created, 30000));
	b = side_start(&self->b, true);
	ASSERT_LE(0, b);
	EXPECT_EQ(0, bt_sync_wait(&self->b.created, 30000));
	EXPECT_EQ(base + 4, objects_in_use());

	/* B first this time: the outer namespace cannot reach B's after. */
	EXPECT_EQ(0, bt_sync_post(&self->b.go));
	EXPECT_EQ(0, bt_wait_timeout(b, 30000));
	EXPECT_EQ(0, bt_sync_post(&self->a.go));
	EXPECT_EQ(0, bt_wait_timeout(a, 30000));
	EXPECT_EQ(base, objects_in_use());
}

/* Create in a new namespace, keep a handle on it, and exit. */
static int leave_behind(struct ns_side *s)
{
	int dev;

	STEP(60, !new_ipc_ns());
	dev = bt_dev_open();
	STEP(61, dev >= 0);
	STEP(62, !_test_ring_create(dev, s->name, BATON_ROLE_PRODUCER, s->mine,
				    64, 0600, NULL));
	STEP(63, !bt_sync_post(&s->created));
	STEP(64, !bt_sync_wait(&s->go, 30000));
	return 0;
}

/* Join the namespace behind @nsfd and find what was left there. */
static int rejoin(int nsfd, struct ns_side *s)
{
	uint32_t v = 0;
	int dev;

	STEP(70, !setns(nsfd, CLONE_NEWIPC));
	dev = bt_dev_open();
	STEP(71, dev >= 0);
	STEP(72, !ring_open(dev, s->name, &v) && v == s->mine);
	STEP(73, !_test_unlink(dev, s->name));
	return 0;
}

/*
 * The object keeps its namespace: after its creator exits, the name is
 * still there for a process that joins the namespace (setns through a
 * /proc/<pid>/ns/ipc fd taken while the creator ran), and nowhere else.
 */
TEST_F(ipcns, object_outlives_creator)
{
	unsigned long base = objects_in_use();
	char path[64];
	uint32_t v;
	pid_t pid;
	int nsfd, dev;

	if (geteuid() != 0)
		SKIP(return, "setns(CLONE_NEWIPC) needs CAP_SYS_ADMIN");
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(leave_behind(&self->a));
	ASSERT_EQ(0, bt_sync_wait(&self->a.created, 30000));
	snprintf(path, sizeof(path), "/proc/%d/ns/ipc", (int)pid);
	nsfd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, nsfd);
	ASSERT_EQ(0, bt_sync_post(&self->a.go));
	ASSERT_EQ(0, bt_wait_timeout(pid, 30000));
	EXPECT_EQ(base + 1, objects_in_use());
	dev = bt_dev_open();
	EXPECT_EQ(ENOENT, ring_open(dev, self->name, &v));
	close(dev);

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(rejoin(nsfd, &self->a));
	EXPECT_EQ(0, bt_wait_timeout(pid, 30000));
	close(nsfd);
	EXPECT_EQ(base, objects_in_use());
}

/* ---- what an administrator sees of abandoned namespaces ---- */

#define NOBODY	65534

struct all_ns_find {
	const char *name;
	int name_attr, ns_attr;
	uint64_t ns;			/* its IPC_NS, 0 if not listed */
	int listed;
};

static void all_ns_one(const struct nlmsghdr *h, void *arg)
{
	struct all_ns_find *f = arg;
	static struct nlt_obj o;

	nlt_parse_obj(h, f->name_attr, f->ns_attr == BATON_A_RING_IPC_NS ?
		      BATON_A_RING_PEERS : BATON_A_EPOCH_PEERS, &o);
	if (strcmp(o.a.name, f->name))
		return;
	f->listed++;
	if (nlt_has(&o.a, f->ns_attr))
		f->ns = o.a.v[f->ns_attr];
}

/*
 * Dump @cmd (with ALL_NS if @all) looking for @name: 0 and what was found
 * in *@f, or the kernel's negative errno.
 */
static int all_ns_dump(struct nlt *s, int cmd, bool all, const char *name,
		       struct all_ns_find *f)
{
	struct nlt_msg m;
	int ret;

	memset(f, 0, sizeof(*f));
	f->name = name;
	f->name_attr = nlt_name_attr(cmd);
	f->ns_attr = cmd == BATON_CMD_RING_GET ? BATON_A_RING_IPC_NS :
						 BATON_A_EPOCH_IPC_NS;
	nlt_msg_init(&m, s->family, NLM_F_DUMP, (uint8_t)cmd);
	if (all)
		nlt_put(&m, cmd == BATON_CMD_RING_GET ? BATON_A_RING_ALL_NS :
			BATON_A_EPOCH_ALL_NS, NULL, 0);
	ret = nlt_send(s, &m);
	return ret ? ret : nlt_collect(s, NULL, all_ns_one, f);
}

/* BATON_IOC_UNLINK / _EPOCH_UNLINK of (@ns, @name): 0 or the errno. */
static int unlink_in(int dev, unsigned long cmd, uint64_t ns,
		     const char *name)
{
	struct baton_unlink u;

	memset(&u, 0, sizeof(u));
	u.size = sizeof(u);
	u.flags = BATON_UNLINK_IPC_NS;
	u.ipc_ns = ns;
	snprintf(u.name, sizeof(u.name), "%s", name);
	return bt_ioctl(dev, cmd, &u);
}

/* Create a ring and a domain in a new namespace, then exit. */
static int abandon(struct ns_side *s)
{
	int dev;

	STEP(80, !new_ipc_ns());
	dev = bt_dev_open();
	STEP(81, dev >= 0);
	STEP(82, !_test_ring_create(dev, s->name, BATON_ROLE_PRODUCER, s->mine,
				    64, 0666, NULL));
	STEP(83, !ep_create(dev, s->name, s->mine));
	STEP(84, !bt_sync_post(&s->created));
	STEP(85, !bt_sync_wait(&s->go, 30000));
	return 0;
}

/* Nobody, with no capability: sees nothing, may unlink nothing. */
static int others_see_nothing(struct ns_side *s, uint64_t ns)
{
	struct all_ns_find f;
	struct nlt nl;
	int dev = bt_dev_open();

	STEP(90, dev >= 0);
	STEP(91, !setgroups(0, NULL) && !setresgid(NOBODY, NOBODY, NOBODY) &&
		 !setresuid(NOBODY, NOBODY, NOBODY));
	STEP(92, !nlt_open(&nl));
	STEP(93, all_ns_dump(&nl, BATON_CMD_RING_GET, true, s->name, &f) ==
		 -EPERM);
	STEP(94, all_ns_dump(&nl, BATON_CMD_EPOCH_GET, true, s->name, &f) ==
		 -EPERM);
	STEP(95, !all_ns_dump(&nl, BATON_CMD_RING_GET, false, s->name, &f) &&
		 !f.listed);
	STEP(96, unlink_in(dev, BATON_IOC_UNLINK, ns, s->name) == EPERM);
	STEP(97, unlink_in(dev, BATON_IOC_EPOCH_UNLINK, ns, s->name) ==
		 EPERM);
	nlt_close(&nl);
	close(dev);
	return 0;
}

/*
 * Objects left in an IPC namespace whose processes are all gone: root in
 * the initial user namespace lists them with ALL_NS (with the namespace's
 * inode number) and unlinks them by (namespace, name); nobody else sees
 * or touches them; an ordinary dump lists them for no one.
 */
TEST_F(ipcns, abandoned_listed_and_unlinked_by_root)
{
	unsigned long base = objects_in_use();
	struct all_ns_find f;
	struct stat st;
	struct nlt nl;
	char path[64];
	pid_t pid;
	int dev;

	if (geteuid() != 0)
		SKIP(return, "needs root (CAP_SYS_ADMIN)");
	ASSERT_EQ(0, nlt_open(&nl));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(abandon(&self->a));
	ASSERT_EQ(0, bt_sync_wait(&self->a.created, 30000));
	snprintf(path, sizeof(path), "/proc/%d/ns/ipc", (int)pid);
	ASSERT_EQ(0, stat(path, &st));
	ASSERT_EQ(0, bt_sync_post(&self->a.go));
	ASSERT_EQ(0, bt_wait_timeout(pid, 30000));
	ASSERT_EQ(base + 2, objects_in_use());

	/* An ordinary dump, even root's, shows only its own namespace. */
	ASSERT_EQ(0, all_ns_dump(&nl, BATON_CMD_RING_GET, false, self->name,
				 &f));
	EXPECT_EQ(0, f.listed);
	EXPECT_EQ(0, all_ns_dump(&nl, BATON_CMD_RING_GET, true, self->name,
				 &f));
	EXPECT_EQ(1, f.listed);
	EXPECT_EQ((uint64_t)st.st_ino, f.ns);
	EXPECT_EQ(0, all_ns_dump(&nl, BATON_CMD_EPOCH_GET, true, self->name,
				 &f));
	EXPECT_EQ(1, f.listed);
	EXPECT_EQ((uint64_t)st.st_ino, f.ns);

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(others_see_nothing(&self->a, st.st_ino));
	EXPECT_EQ(0, bt_wait_timeout(pid, 30000));
	EXPECT_EQ(base + 2, objects_in_use());

	dev = bt_dev_open();
	ASSERT_LE(0, dev);
	EXPECT_EQ(EINVAL, unlink_in(dev, BATON_IOC_UNLINK, 0, self->name));
	/* Not in the caller's namespace: the plain unlink does not reach. */
	EXPECT_EQ(ENOENT, _test_unlink(dev, self->name));
	EXPECT_EQ(0, unlink_in(dev, BATON_IOC_UNLINK, st.st_ino, self->name));
	EXPECT_EQ(0, unlink_in(dev, BATON_IOC_EPOCH_UNLINK, st.st_ino,
			       self->name));
	EXPECT_EQ(base, objects_in_use());
	EXPECT_EQ(ENOENT, unlink_in(dev, BATON_IOC_UNLINK, st.st_ino,
				    self->name));
	EXPECT_EQ(0, all_ns_dump(&nl, BATON_CMD_RING_GET, true, self->name,
				 &f));
	EXPECT_EQ(0, f.listed);
	close(dev);
	nlt_close(&nl);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0
/*
 * batonctl_admin: what batonctl gives an administrator over every IPC
 * namespace (Documentation/batonctl.rst, "Every IPC namespace").
 *
 * Owns the checks: `batonctl -a list` (and `-a epoch`, `-a pool`) run by
 * root lists the rings, domains and pools of two IPC namespaces, a name
 * held in both twice, each with its namespace's number (ipc_ns, as /proc/PID/ns/ipc
 * shows it), in JSON and in text, while a plain list shows only the
 * caller's own; run by nobody it fails with EPERM and exit 1;
 * `batonctl -n NS unlink [epoch|pool] NAME` removes a ring, a domain and
 * a pool left in a namespace whose processes are gone, for root only (nobody, even
 * allowed to open /dev/baton, gets EPERM and the objects stay), a plain
 * unlink does not reach into another namespace, and a second unlink is
 * ENOENT.
 *
 * The other namespace is a child that made its objects there and exited:
 * the names keep them alive (limits.rst, "Lifetime"). batonctl runs as a
 * separate process, as an administrator would run it.
 */
#include "common.h"
#include "netlink_util.h"

#include <grp.h>
#include <sched.h>
#include <sys/stat.h>

#define ADMIN_WAIT_MS	30000
#define NOBODY		65534
#define BATON_GID	900	/* the VM's group baton: may open /dev/baton */

/* ---- a strict-enough reading of batonctl's JSON: what the test needs ---- */

/*
 * The value of "@key": after the object's "name":"@name", within that
 * object (batonctl prints flat objects before their "peers" array).
 * Counts the objects of kind @obj named @name in *@count; the ipc_ns of
 * the @nth in *@ns (0 if it had none).
 */
static void find_objects(const char *json, const char *obj, const char *name,
			 int nth, int *count, uint64_t *ns)
{
	char pat[BATON_NAME_MAX + 64];
	const char *p = json;

	*count = 0;
	*ns = 0;
	snprintf(pat, sizeof(pat), "{\"object\":\"%s\",", obj);
	while ((p = strstr(p, pat))) {
		const char *end = strchr(p + 1, '{');	/* next object */
		const char *n = strstr(p, "\"name\":\"");
		const char *v;

		p += strlen(pat);
		if (!n || (end && n > end) ||
		    strncmp(n + 8, name, strlen(name)) ||
		    n[8 + strlen(name)] != '"')
			continue;
		if ((*count)++ != nth)
			continue;
		v = strstr(n, "\"ipc_ns\":");
		if (v && (!end || v < end))
			*ns = strtoull(v + 9, NULL, 10);
	}
}

/* The IPC namespace number of @pid (0 for self). */
static uint64_t ipc_ns_of(pid_t pid)
{
	char path[64];
	struct stat st;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/ns/ipc", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/ns/ipc");
	return stat(path, &st) ? 0 : (uint64_t)st.st_ino;
}

/* A pool @name of 4 buffers of 4 KiB on @dev; 0 or the ioctl's errno. */
static int make_pool(int dev, const char *name)
{
	struct baton_pool_create k;

	bt_pool_create_init(&k, name, 12, 4, 2);
	if (bt_ioctl(dev, BATON_IOC_POOL_CREATE, &k))
		return errno;
	close(k.out_fd);
	return 0;
}

/* ---- the other namespace ---- */

struct left_behind {
	struct bt_sync made;		/* child -> test: objects created */
	struct bt_sync go;		/* test -> child: exit now */
};

/* In a new IPC namespace: ring, domain and pool @name, wait and exit. */
static int make_and_leave(const char *name, struct left_behind *lb)
{
	int dev;

	if (unshare(CLONE_NEWIPC))
		return 10;
	dev = bt_dev_open();
	if (dev < 0)
		return 11;
	if (_test_ring_create(dev, name, BATON_ROLE_PRODUCER, 16, 64, 0600,
			      NULL))
		return 12;
	if (_test_epoch_create(dev, name, 3, 8, 0600, NULL))
		return 13;
	if (make_pool(dev, name))
		return 16;
	close(dev);
	if (bt_sync_post(&lb->made))
		return 14;
	return bt_sync_wait(&lb->go, ADMIN_WAIT_MS) ? 15 : 0;
}

/* Leaves @name in a namespace nobody runs in; its number, 0 on failure. */
static uint64_t leave_in_other_ns(struct __test_metadata *_metadata,
				  const char *name)
{
	struct left_behind lb;
	uint64_t ns;
	pid_t pid;

	EXPECT_EQ(0, bt_sync_init(&lb.made));
	EXPECT_EQ(0, bt_sync_init(&lb.go));
	pid = fork();
	EXPECT_LE(0, pid);
	if (pid < 0)
		return 0;
	if (!pid)
		_exit(make_and_leave(name, &lb));
	EXPECT_EQ(0, bt_sync_wait(&lb.made, ADMIN_WAIT_MS));
	ns = ipc_ns_of(pid);
	EXPECT_EQ(0, bt_sync_post(&lb.go));
	EXPECT_EQ(0, bt_wait_timeout(pid, ADMIN_WAIT_MS));
	bt_sync_close(&lb.made);
	bt_sync_close(&lb.go);
	return ns;
}

/* ---- batonctl as nobody ---- */

/*
 * As nobody (in group baton, so /dev/baton opens and the module itself
 * refuses): run batonctl @argv; 0 if it exits 1 with @want on stderr,
 * else a step number.
 */
static int nobody_refused(char *const argv[], const char *want)
{
	gid_t baton = BATON_GID;
	char *o = NULL, *e = NULL;
	int st;

	if (setgroups(1, &baton) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		return 20;
	st = nlt_batonctl(argv, &o, &e);
	if (st != 1)
		return 21;
	if (!e || !strstr(e, want)) {
		fprintf(stderr, "# stderr of %s %s: %s\n", argv[1], argv[2],
			e ? e : "(none)");
		return 22;
	}
	free(o);
	free(e);
	return 0;
}

static int run_as_nobody(char *const argv[], const char *want)
{
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid)
		_exit(nobody_refused(argv, want));
	return bt_wait_timeout(pid, ADMIN_WAIT_MS);
}

/* ---- the tests ---- */

FIXTURE(batonctl_admin) {
	char name[BATON_NAME_MAX];
	uint64_t other_ns;
};

FIXTURE_SETUP(batonctl_admin)
{
	char path[PATH_MAX];

	BT_REQUIRE_DEV();
	if (geteuid() != 0)
		SKIP(_exit(255), "needs root (CAP_SYS_ADMIN)");
	if (nlt_batonctl_path(path, sizeof(path)))
		SKIP(_exit(255), "helpers/batonctl missing (make lib selftests)");
	bt_make_name(self->name, sizeof(self->name), "admin");
	self->other_ns = leave_in_other_ns(_metadata, self->name);
	ASSERT_NE(0, self->other_ns);
	ASSERT_NE(ipc_ns_of(0), self->other_ns);
}

FIXTURE_TEARDOWN(batonctl_admin)
{
	char ns[24];
	char *ring[] = { "batonctl", "-n", ns, "unlink", self->name, NULL };
	char *dom[] = { "batonctl", "-n", ns, "unlink", "epoch", self->name,
			NULL };
	char *pool[] = { "batonctl", "-n", ns, "unlink", "pool", self->name,
			 NULL };
	char *o = NULL, *e = NULL;

	if (!self->other_ns)
		return;
	snprintf(ns, sizeof(ns), "%llu", (unsigned long long)self->other_ns);
	nlt_batonctl(ring, &o, &e);	/* gone already if the test passed */
	free(o);
	free(e);
	o = e = NULL;
	nlt_batonctl(dom, &o, &e);
	free(o);
	free(e);
	o = e = NULL;
	nlt_batonctl(pool, &o, &e);
	free(o);
	free(e);
}

/*
 * Root, with the same name held in its own namespace and in the other:
 * -a lists both rings and both domains, each with its namespace.
 */
TEST_F_TIMEOUT(batonctl_admin, all_ns_list_shows_both_namespaces, 90)
{
	char *all[] = { "batonctl", "-j", "--all-ns", "list", NULL };
	char *mine[] = { "batonctl", "-j", "list", NULL };
	char *text[] = { "batonctl", "list", "-a", NULL };
	char *epochs[] = { "batonctl", "-j", "-a", "epoch", NULL };
	char *pools[] = { "batonctl", "-j", "-a", "pool", NULL };
	uint64_t own = ipc_ns_of(0), a = 0, b = 0;
	char *o = NULL, *e = NULL, line[160];
	const char *obj[] = { "ring", "epoch", "pool" };
	int dev, n, i;

	dev = bt_dev_open();
	ASSERT_LE(0, dev);
	ASSERT_EQ(0, _test_ring_create(dev, self->name, BATON_ROLE_PRODUCER,
				       16, 64, 0600, NULL));
	ASSERT_EQ(0, _test_epoch_create(dev, self->name, 3, 8, 0600, NULL));
	ASSERT_EQ(0, make_pool(dev, self->name));

	ASSERT_EQ(0, nlt_batonctl(all, &o, &e)) TH_LOG("stderr: %s", e);
	for (i = 0; i < 3; i++) {
		find_objects(o, obj[i], self->name, 0, &n, &a);
		EXPECT_EQ(2, n) TH_LOG("%s %s: %s", obj[i], self->name, o);
		find_objects(o, obj[i], self->name, 1, &n, &b);
		/* sorted by namespace number within a name */
		EXPECT_EQ(own < self->other_ns ? own : self->other_ns, a);
		EXPECT_EQ(own < self->other_ns ? self->other_ns : own, b);
	}
	free(o);
	free(e);

	ASSERT_EQ(0, nlt_batonctl(epochs, &o, &e)) TH_LOG("stderr: %s", e);
	find_objects(o, "epoch", self->name, 0, &n, &a);
	EXPECT_EQ(2, n);
	free(o);
	free(e);

	ASSERT_EQ(0, nlt_batonctl(pools, &o, &e)) TH_LOG("stderr: %s", e);
	find_objects(o, "pool", self->name, 0, &n, &a);
	EXPECT_EQ(2, n);
	find_objects(o, "pool", self->name, 1, &n, &b);
	EXPECT_EQ(own < self->other_ns ? own : self->other_ns, a);
	EXPECT_EQ(own < self->other_ns ? self->other_ns : own, b);
	free(o);
	free(e);

	/* Without -a: only this namespace's, and no ipc_ns. */
	ASSERT_EQ(0, nlt_batonctl(mine, &o, &e)) TH_LOG("stderr: %s", e);
	find_objects(o, "ring", self->name, 0, &n, &a);
	EXPECT_EQ(1, n);
	EXPECT_EQ(0, a);
	free(o);
	free(e);

	/* Text: the IpcNs column, one line per namespace and kind. */
	ASSERT_EQ(0, nlt_batonctl(text, &o, &e)) TH_LOG("stderr: %s", e);
	EXPECT_TRUE(strstr(o, "IpcNs") == o) TH_LOG("%s", o);
	for (i = 0; i < 6; i++) {
		/* rings have a Kind column, domains and pools do not */
		snprintf(line, sizeof(line), "%-10llu %-5s %-5s %s%s ",
			 (unsigned long long)(i & 1 ? own : self->other_ns),
			 obj[i / 2], "kmod", i / 2 ? "" : "spsc ", self->name);
		EXPECT_NE(NULL, strstr(o, line)) TH_LOG("no '%s' in:\n%s",
							line, o);
	}
	free(o);
	free(e);

	EXPECT_EQ(0, _test_unlink(dev, self->name));
	EXPECT_EQ(0, _test_epoch_unlink(dev, self->name));
	EXPECT_EQ(0, baton_pool_unlink(self->name));
	close(dev);
}

/* Nobody: -a is refused by the module, with its errno and exit 1. */
TEST_F_TIMEOUT(batonctl_admin, all_ns_list_refused_to_others, 90)
{
	char *list[] = { "batonctl", "-a", "list", NULL };
	char *epochs[] = { "batonctl", "-j", "-a", "epoch", NULL };
	char *pools[] = { "batonctl", "-a", "pool", NULL };

	EXPECT_EQ(0, run_as_nobody(list, "Operation not permitted"));
	EXPECT_EQ(0, run_as_nobody(epochs, "Operation not permitted"));
	EXPECT_EQ(0, run_as_nobody(pools, "Operation not permitted"));
}

/*
 * The ring and the domain left in the other namespace: nobody may not
 * unlink them there, a plain unlink does not reach them, root with -n
 * does, once.
 */
TEST_F_TIMEOUT(batonctl_admin, unlink_in_another_namespace, 90)
{
	char ns[24], *o = NULL, *e = NULL;
	char *ring[] = { "batonctl", "-n", ns, "unlink", self->name, NULL };
	char *dom[] = { "batonctl", "unlink", "--ns", ns, "epoch", self->name,
			NULL };
	char *pool[] = { "batonctl", "-n", ns, "unlink", "pool", self->name,
			 NULL };
	char *here[] = { "batonctl", "unlink", "ring", self->name, NULL };
	char *here_pool[] = { "batonctl", "unlink", "pool", self->name, NULL };
	char *all[] = { "batonctl", "-j", "-a", "list", NULL };
	char *zero[] = { "batonctl", "-n", "0", "unlink", self->name, NULL };
	uint64_t at;
	int n;

	snprintf(ns, sizeof(ns), "%llu", (unsigned long long)self->other_ns);
	EXPECT_EQ(0, run_as_nobody(ring, "Operation not permitted"));
	EXPECT_EQ(0, run_as_nobody(dom, "Operation not permitted"));
	EXPECT_EQ(0, run_as_nobody(pool, "Operation not permitted"));

	EXPECT_EQ(1, nlt_batonctl(here, &o, &e));
	EXPECT_NE(NULL, strstr(e, "No such file or directory"))
		TH_LOG("stderr: %s", e);
	free(o);
	free(e);
	EXPECT_EQ(1, nlt_batonctl(here_pool, &o, &e));
	EXPECT_NE(NULL, strstr(e, "No such file or directory"))
		TH_LOG("stderr: %s", e);
	free(o);
	free(e);
	EXPECT_EQ(1, nlt_batonctl(zero, &o, &e));
	free(o);
	free(e);

	/* All still there, in the other namespace. */
	ASSERT_EQ(0, nlt_batonctl(all, &o, &e)) TH_LOG("stderr: %s", e);
	find_objects(o, "ring", self->name, 0, &n, &at);
	EXPECT_EQ(1, n);
	EXPECT_EQ(self->other_ns, at);
	find_objects(o, "epoch", self->name, 0, &n, &at);
	EXPECT_EQ(1, n);
	find_objects(o, "pool", self->name, 0, &n, &at);
	EXPECT_EQ(1, n);
	EXPECT_EQ(self->other_ns, at);
	free(o);
	free(e);

	EXPECT_EQ(0, nlt_batonctl(ring, &o, &e)) TH_LOG("stderr: %s", e);
	free(o);
	free(e);
	EXPECT_EQ(0, nlt_batonctl(dom, &o, &e)) TH_LOG("stderr: %s", e);
	free(o);
	free(e);
	EXPECT_EQ(0, nlt_batonctl(pool, &o, &e)) TH_LOG("stderr: %s", e);
	free(o);
	free(e);

	ASSERT_EQ(0, nlt_batonctl(all, &o, &e)) TH_LOG("stderr: %s", e);
	find_objects(o, "ring", self->name, 0, &n, &at);
	EXPECT_EQ(0, n);
	find_objects(o, "epoch", self->name, 0, &n, &at);
	EXPECT_EQ(0, n);
	find_objects(o, "pool", self->name, 0, &n, &at);
	EXPECT_EQ(0, n);
	free(o);
	free(e);

	EXPECT_EQ(1, nlt_batonctl(pool, &o, &e));
	free(o);
	free(e);
	EXPECT_EQ(1, nlt_batonctl(ring, &o, &e));
	EXPECT_NE(NULL, strstr(e, "No such file or directory"))
		TH_LOG("stderr: %s", e);
	free(o);
	free(e);
}

TEST_HARNESS_MAIN

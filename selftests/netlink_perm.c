// SPDX-License-Identifier: GPL-2.0
/*
 * netlink_perm: who may learn what through the "baton" family.
 *
 * Owns the visibility rule of statistics and events: a caller without
 * CAP_SYS_ADMIN (here: a child that drops to nobody with setres[ug]id,
 * which clears every capability) sees in dumps only the rings and epoch
 * domains it could open -- its own, and others' whose mode lets it in --
 * gets ENOENT for another user's ring or domain by name, exactly as for
 * one that does not exist, and as a watcher receives no event about
 * another user's objects. batonctl, run as nobody, shows the same.
 * Root (the parent) sees everything of its IPC namespace; root in another
 * IPC namespace sees nothing of it, in dumps, by name or as a watcher.
 *
 * The watcher's check needs no timing: events are delivered in order, so
 * once the child sees the event of its own ring created after root's
 * activity, any event about root's objects would have come before it.
 */
#include "netlink_util.h"

#include <grp.h>
#include <sched.h>

#define NOBODY		65534
#define NP_WAIT_MS	20000

/* Child exit codes: which step failed. */
enum {
	NP_OK = 0,
	NP_SETUP = 10,		/* open, drop, socket */
	NP_CAPS,		/* still privileged after the drop */
	NP_CREATE,
	NP_DUMP_RINGS,
	NP_DUMP_DOMAINS,
	NP_GET_OTHER,
	NP_GET_OWN,
	NP_WATCH,
	NP_EVENT_LEAK,
	NP_EVENT_OWN,
	NP_GET_OPEN_MODE,
	NP_BATONCTL,
	NP_OPENED,		/* opened a domain it should not */
	NP_SHOWN,		/* saw a domain it cannot open */
};

FIXTURE(visibility) {
	int dev;
	char root_ring[BATON_NAME_MAX];
	char root_dom[BATON_NAME_MAX];
	char open_ring[BATON_NAME_MAX];	/* root's, mode 0666 */
	char own_ring[BATON_NAME_MAX];	/* nobody's */
	char own_dom[BATON_NAME_MAX];
	char late_ring[BATON_NAME_MAX];	/* root's, made while watched */
	char prefix[32];
};

static int np_epoch_create(int dev, const char *name, uint32_t mode)
{
	return _test_epoch_create(dev, name, 2, 2, mode, NULL);
}

FIXTURE_SETUP(visibility)
{
	BT_REQUIRE_DEV();
	if (getuid() != 0)
		SKIP(_exit(255), "needs root to drop to another user");
	self->dev = bt_dev_open();
	ASSERT_LE(0, self->dev);
	snprintf(self->prefix, sizeof(self->prefix), "np.%d.", (int)getpid());
	snprintf(self->root_ring, sizeof(self->root_ring), "%sroot",
		 self->prefix);
	snprintf(self->root_dom, sizeof(self->root_dom), "%sroot",
		 self->prefix);
	snprintf(self->open_ring, sizeof(self->open_ring), "%sopen",
		 self->prefix);
	snprintf(self->own_ring, sizeof(self->own_ring), "%sown",
		 self->prefix);
	snprintf(self->own_dom, sizeof(self->own_dom), "%sown", self->prefix);
	snprintf(self->late_ring, sizeof(self->late_ring), "%slate",
		 self->prefix);
	ASSERT_EQ(0, _test_ring_create(self->dev, self->root_ring,
				       BATON_ROLE_PRODUCER, 4, 8, 0600, NULL));
	ASSERT_EQ(0, _test_ring_create(self->dev, self->open_ring,
				       BATON_ROLE_PRODUCER, 4, 8, 0666, NULL));
	ASSERT_EQ(0, np_epoch_create(self->dev, self->root_dom, 0600));
}

FIXTURE_TEARDOWN(visibility)
{
	if (self->dev <= 0)
		return;
	_test_unlink(self->dev, self->root_ring);
	_test_unlink(self->dev, self->open_ring);
	_test_unlink(self->dev, self->own_ring);
	_test_unlink(self->dev, self->late_ring);
	_test_epoch_unlink(self->dev, self->root_dom);
	_test_epoch_unlink(self->dev, self->own_dom);
	close(self->dev);
}

/* Open /dev/baton as root, then become nobody with no capabilities. */
static int np_drop(int *dev)
{
	*dev = bt_dev_open();
	if (*dev < 0 || setgroups(0, NULL) ||
	    setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		return NP_SETUP;
	/* all uids non-zero: the kernel cleared the capability sets */
	if (setresuid(0, 0, 0) == 0)
		return NP_CAPS;
	return NP_OK;
}

static bool np_in(const char *name, const struct nlt_obj *objs, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(objs[i].a.name, name))
			return true;
	return false;
}

/* Is "NAME" (quoted, as JSON has it) in @s? */
static bool np_quoted(const char *s, const char *name)
{
	char q[BATON_NAME_MAX + 2];

	snprintf(q, sizeof(q), "\"%s\"", name);
	return s && strstr(s, q);
}

/* The same through batonctl, which only passes the kernel's answer on. */
static int np_batonctl_as_nobody(FIXTURE_DATA(visibility) *self)
{
	char *list[] = { "batonctl", "-j", "list", NULL };
	char *show[] = { "batonctl", "show", self->root_ring, NULL };
	char *o = NULL, *e = NULL;
	int st, ok;

	st = nlt_batonctl(list, &o, &e);
	ok = st == 0 && np_quoted(o, self->own_ring) &&
	     np_quoted(o, self->open_ring) && np_quoted(o, self->own_dom) &&
	     !np_quoted(o, self->root_ring);
	free(o);
	free(e);
	if (!ok)
		return NP_BATONCTL;
	/* root's ring: as if it did not exist */
	st = nlt_batonctl(show, &o, &e);
	ok = st == 1 && e && strstr(e, "No such file or directory");
	free(o);
	free(e);
	return ok ? NP_OK : NP_BATONCTL;
}

/* Child: dumps and doits as nobody. */
static int np_dumps_as_nobody(FIXTURE_DATA(visibility) *self)
{
	static struct nlt_obj objs[8], o;
	struct nlt_err e;
	struct nlt nl;
	int dev, n, ret = np_drop(&dev);

	if (ret)
		return ret;
	if (_test_ring_create(dev, self->own_ring, BATON_ROLE_PRODUCER, 4, 8,
			      0600, NULL) ||
	    np_epoch_create(dev, self->own_dom, 0600))
		return NP_CREATE;
	if (nlt_open(&nl))
		return NP_SETUP;
	/* rings: its own and root's 0666 one, not root's 0600 one */
	n = nlt_dump(&nl, BATON_CMD_RING_GET, self->prefix, objs, 8);
	if (n != 2 || !np_in(self->own_ring, objs, n) ||
	    !np_in(self->open_ring, objs, n))
		return NP_DUMP_RINGS;
	n = nlt_dump(&nl, BATON_CMD_EPOCH_GET, self->prefix, objs, 8);
	if (n != 1 || !np_in(self->own_dom, objs, n))
		return NP_DUMP_DOMAINS;
	/* by name: root's 0600 objects do not exist for nobody */
	if (nlt_get(&nl, BATON_CMD_RING_GET, self->root_ring, &o, &e) !=
	    -ENOENT ||
	    nlt_get(&nl, BATON_CMD_EPOCH_GET, self->root_dom, &o, &e) !=
	    -ENOENT)
		return NP_GET_OTHER;
	if (nlt_get(&nl, BATON_CMD_RING_GET, self->own_ring, &o, &e) ||
	    o.a.v[BATON_A_RING_UID] != NOBODY ||
	    nlt_get(&nl, BATON_CMD_EPOCH_GET, self->own_dom, &o, &e))
		return NP_GET_OWN;
	if (nlt_get(&nl, BATON_CMD_RING_GET, self->open_ring, &o, &e) ||
	    o.a.v[BATON_A_RING_UID] != 0)
		return NP_GET_OPEN_MODE;
	nlt_close(&nl);
	return np_batonctl_as_nobody(self);
}

TEST_F_TIMEOUT(visibility, unprivileged_dump_and_doit, 60)
{
	static struct nlt_obj objs[8];
	struct nlt nl;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(np_dumps_as_nobody(self));
	EXPECT_EQ(NP_OK, bt_wait_timeout(pid, NP_WAIT_MS));

	/* root sees all three rings and both domains */
	ASSERT_EQ(0, nlt_open(&nl));
	EXPECT_EQ(3, nlt_dump(&nl, BATON_CMD_RING_GET, self->prefix, objs, 8));
	EXPECT_EQ(2, nlt_dump(&nl, BATON_CMD_EPOCH_GET, self->prefix, objs, 8));
	nlt_close(&nl);
}

struct np_leak {
	const char *prefix;
	const char *own;
	int leaks;
};

/* Any event about a name of this test but not nobody's own is a leak. */
static void np_other_event(const struct nlt_obj *ev, void *arg)
{
	struct np_leak *l = arg;

	if (!strncmp(ev->a.name, l->prefix, strlen(l->prefix)) &&
	    strcmp(ev->a.name, l->own))
		l->leaks++;
}

/* Child: watch as nobody; root works on its objects; then our own. */
static int np_watch_as_nobody(FIXTURE_DATA(visibility) *self, struct bt_sync *up,
			      struct bt_sync *down)
{
	struct np_leak leak = { self->prefix, self->own_ring, 0 };
	static struct nlt_obj ev;
	struct nlt_err e;
	struct nlt nl;
	int dev, ret = np_drop(&dev);

	if (ret)
		return ret;
	if (nlt_open(&nl) || nlt_watch(&nl, &e))
		return NP_WATCH;
	bt_sync_post(up);		/* subscribed: root, go */
	if (bt_sync_wait(down, NP_WAIT_MS))
		return NP_SETUP;	/* root is done */
	if (_test_ring_create(dev, self->own_ring, BATON_ROLE_PRODUCER, 4, 8,
			      0600, NULL))
		return NP_CREATE;
	if (nlt_wait_event(&nl, BATON_EVENT_RING_CREATED, self->own_ring,
			   NP_WAIT_MS, &ev, np_other_event, &leak))
		return NP_EVENT_OWN;
	return leak.leaks ? NP_EVENT_LEAK : NP_OK;
}

TEST_F_TIMEOUT(visibility, unprivileged_watcher_sees_no_other_users_events, 60)
{
	struct bt_sync up, down;
	struct baton_ring_params p = bt_params(4, 8);
	struct baton_ring *pr;
	pid_t pid, victim;

	ASSERT_EQ(0, bt_sync_init(&up));
	ASSERT_EQ(0, bt_sync_init(&down));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(np_watch_as_nobody(self, &up, &down));
	ASSERT_EQ(0, bt_sync_wait(&up, NP_WAIT_MS));

	/* root: create, attach a peer that dies, unlink, destroy */
	ASSERT_EQ(0, baton_ring_create(self->late_ring, &p,
				       BATON_ROLE_CONSUMER, &pr));
	victim = fork();
	ASSERT_LE(0, victim);
	if (victim == 0) {
		struct baton_ring *v;

		if (baton_ring_open(self->late_ring, BATON_ROLE_PRODUCER,
				    BATON_BACKEND_KMOD, &v))
			_exit(3);
		raise(SIGKILL);
		_exit(4);
	}
	EXPECT_EQ(128 + SIGKILL, bt_wait_timeout(victim, NP_WAIT_MS));
	ASSERT_EQ(0, baton_ring_unlink(self->late_ring, BATON_BACKEND_KMOD));
	baton_ring_close(pr);
	ASSERT_EQ(0, bt_sync_post(&down));

	EXPECT_EQ(NP_OK, bt_wait_timeout(pid, NP_WAIT_MS));
	bt_sync_close(&up);
	bt_sync_close(&down);
}

/*
 * IPC namespaces: root in a new IPC namespace (so no credential hides
 * anything) sees none of the first namespace's objects in dumps, gets
 * ENOENT by name, and as a watcher gets no event about them; its own
 * ring there is invisible from the first namespace.
 */
static int np_watch_in_new_ipcns(FIXTURE_DATA(visibility) *self, struct bt_sync *up,
				 struct bt_sync *down)
{
	struct np_leak leak = { self->prefix, self->own_ring, 0 };
	static struct nlt_obj objs[8], o, ev;
	struct nlt_err e;
	struct nlt nl;
	int dev, ret = NP_OK;

	if (unshare(CLONE_NEWIPC))
		return NP_SETUP;
	dev = bt_dev_open();
	if (dev < 0 || nlt_open(&nl))
		return NP_SETUP;
	if (nlt_dump(&nl, BATON_CMD_RING_GET, self->prefix, objs, 8) != 0)
		return NP_DUMP_RINGS;
	if (nlt_dump(&nl, BATON_CMD_EPOCH_GET, self->prefix, objs, 8) != 0)
		return NP_DUMP_DOMAINS;
	if (nlt_get(&nl, BATON_CMD_RING_GET, self->open_ring, &o, &e) !=
	    -ENOENT)
		return NP_GET_OTHER;
	if (nlt_watch(&nl, &e))
		return NP_WATCH;
	bt_sync_post(up);
	if (bt_sync_wait(down, NP_WAIT_MS))
		return NP_SETUP;
	if (_test_ring_create(dev, self->own_ring, BATON_ROLE_PRODUCER, 4, 8,
			      0600, NULL))
		return NP_CREATE;
	if (nlt_wait_event(&nl, BATON_EVENT_RING_CREATED, self->own_ring,
			   NP_WAIT_MS, &ev, np_other_event, &leak))
		ret = NP_EVENT_OWN;
	else if (leak.leaks)
		ret = NP_EVENT_LEAK;
	bt_sync_post(up);		/* root: look for it from outside */
	if (bt_sync_wait(down, NP_WAIT_MS))
		ret = ret ? ret : NP_SETUP;
	/* our namespace dies with us; its ring must not outlive the test */
	_test_unlink(dev, self->own_ring);
	return ret;
}

TEST_F_TIMEOUT(visibility, other_ipc_namespace_sees_nothing, 60)
{
	static struct nlt_obj objs[8], o;
	struct baton_ring_params p = bt_params(4, 8);
	struct bt_sync up, down;
	struct baton_ring *pr;
	struct nlt_err e;
	struct nlt nl;
	pid_t pid;

	ASSERT_EQ(0, bt_sync_init(&up));
	ASSERT_EQ(0, bt_sync_init(&down));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(np_watch_in_new_ipcns(self, &up, &down));
	ASSERT_EQ(0, bt_sync_wait(&up, NP_WAIT_MS));
	/* events in the first namespace, while the other one watches */
	ASSERT_EQ(0, baton_ring_create(self->late_ring, &p,
				       BATON_ROLE_CONSUMER, &pr));
	ASSERT_EQ(0, baton_ring_unlink(self->late_ring, BATON_BACKEND_KMOD));
	baton_ring_close(pr);
	ASSERT_EQ(0, bt_sync_post(&down));
	/* its ring exists now, in its namespace only */
	ASSERT_EQ(0, bt_sync_wait(&up, NP_WAIT_MS));
	ASSERT_EQ(0, nlt_open(&nl));
	EXPECT_EQ(2, nlt_dump(&nl, BATON_CMD_RING_GET, self->prefix, objs, 8));
	EXPECT_EQ(-ENOENT, nlt_get(&nl, BATON_CMD_RING_GET, self->own_ring,
				   &o, &e));
	nlt_close(&nl);
	ASSERT_EQ(0, bt_sync_post(&down));
	EXPECT_EQ(NP_OK, bt_wait_timeout(pid, NP_WAIT_MS));
	bt_sync_close(&up);
	bt_sync_close(&down);
}

/*
 * The CVE-2014-0181 class: a socket opened by nobody, written by root (a
 * setuid program handed it as its stdout would do just that). The
 * request must be answered as nobody would be: root's 0600 objects do not
 * exist, a dump lists only what nobody may open, and a WATCH sent by
 * root over it carries no event nobody may not see.
 */
static int np_open_as_nobody_and_pass(int via)
{
	struct nlt nl;
	int dev, ret = np_drop(&dev);

	if (ret)
		return ret;
	if (nlt_open(&nl))
		return NP_SETUP;
	return nlt_send_fd(via, nl.fd) ? NP_SETUP : NP_OK;
}

/* A RING_GET dump with ALL_NS on @s, sent with @how: 0 or -errno. */
static int np_all_ns_dump(struct nlt *s, int by_write)
{
	struct nlt_msg m;
	int ret;

	nlt_msg_init(&m, s->family, NLM_F_DUMP, BATON_CMD_RING_GET);
	nlt_put(&m, BATON_A_RING_ALL_NS, NULL, 0);
	if (by_write) {
		m.nh.nlmsg_seq = ++s->seq;
		m.nh.nlmsg_len = (uint32_t)m.len;
		ret = write(s->fd, m.b, m.len) == (ssize_t)m.len ? 0 : -errno;
	} else {
		ret = nlt_send(s, &m);	/* sendto(), an explicit address */
	}
	return ret ? ret : nlt_collect(s, NULL, NULL, NULL);
}

TEST_F_TIMEOUT(visibility, root_writing_nobodys_socket_gets_nobodys_answer, 60)
{
	static struct nlt_obj objs[8], o, ev;
	struct np_leak leak = { self->prefix, self->open_ring, 0 };
	struct baton_ring_params p = bt_params(4, 8);
	struct baton_ring *late;
	struct nlt mine, theirs;
	struct nlt_err e;
	int sv[2], fd;
	pid_t pid;

	ASSERT_EQ(0, nlt_open(&mine));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(np_open_as_nobody_and_pass(sv[1]));
	fd = nlt_recv_fd(sv[0]);
	ASSERT_LE(0, fd);
	EXPECT_EQ(NP_OK, bt_wait_timeout(pid, NP_WAIT_MS));
	theirs = mine;
	theirs.fd = fd;

	/* root (this process) sends; nobody opened */
	EXPECT_EQ(-ENOENT, nlt_get(&theirs, BATON_CMD_RING_GET,
				   self->root_ring, &o, &e));
	EXPECT_EQ(-ENOENT, nlt_get(&theirs, BATON_CMD_EPOCH_GET,
				   self->root_dom, &o, &e));
	EXPECT_EQ(0, nlt_get(&theirs, BATON_CMD_RING_GET, self->open_ring, &o,
			     &e));
	EXPECT_EQ(1, nlt_dump(&theirs, BATON_CMD_RING_GET, self->prefix, objs,
			      8));
	EXPECT_TRUE(np_in(self->open_ring, objs, 1));
	EXPECT_EQ(0, nlt_dump(&theirs, BATON_CMD_EPOCH_GET, self->prefix, objs,
			      8));
	/*
	 * ALL_NS needs the opener's CAP_SYS_ADMIN too, however root sends:
	 * netlink_ns_capable() skips the opener when the request carried a
	 * destination address (sendto, as libnl sends), which let this dump
	 * list every namespace's objects into nobody's socket.
	 */
	EXPECT_EQ(-EPERM, np_all_ns_dump(&theirs, 0));
	EXPECT_EQ(-EPERM, np_all_ns_dump(&theirs, 1));
	EXPECT_EQ(0, np_all_ns_dump(&mine, 0));
	/* the same requests on root's own socket see everything */
	EXPECT_EQ(0, nlt_get(&mine, BATON_CMD_RING_GET, self->root_ring, &o,
			     &e));
	EXPECT_EQ(2, nlt_dump(&mine, BATON_CMD_RING_GET, self->prefix, objs,
			      8));

	/* events: root's 0600 ring must not reach it; a 0666 one does */
	ASSERT_EQ(0, nlt_watch(&theirs, &e));
	ASSERT_EQ(0, baton_ring_create(self->late_ring, &p,
				       BATON_ROLE_CONSUMER, &late));
	baton_ring_close(late);
	ASSERT_EQ(0, baton_ring_unlink(self->late_ring, BATON_BACKEND_KMOD));
	/* the open ring's unlink comes after: everything before it is in */
	ASSERT_EQ(0, _test_unlink(self->dev, self->open_ring));
	EXPECT_EQ(0, nlt_wait_event(&theirs, BATON_EVENT_RING_UNLINKED,
				    self->open_ring, NP_WAIT_MS, &ev,
				    np_other_event, &leak));
	EXPECT_EQ(0, leak.leaks);
	close(fd);
	nlt_close(&mine);
	close(sv[0]);
	close(sv[1]);
}

/* BATON_IOC_EPOCH_OPEN on @dev: the fd, or -errno. */
static int np_epoch_open(int dev, const char *name)
{
	struct baton_epoch_open k;

	memset(&k, 0, sizeof(k));
	k.size = sizeof(k);
	snprintf(k.name, sizeof(k.name), "%s", name);
	return ioctl(dev, BATON_IOC_EPOCH_OPEN, &k) ? -errno : k.out_fd;
}

/*
 * Child, as nobody: mode 0644 gives it read, not write. A ring opens
 * with either bit (its role picks one), so the 0644 ring is shown; a
 * domain needs both, so the 0644 domain is as hidden as a 0600 one.
 */
static int np_read_only_as_nobody(const char *ro, const char *prefix)
{
	static struct nlt_obj objs[8], o;
	struct nlt_err e;
	struct nlt nl;
	int dev, ret = np_drop(&dev);

	if (ret)
		return ret;
	if (np_epoch_open(dev, ro) != -EACCES)
		return NP_OPENED;
	if (nlt_open(&nl))
		return NP_SETUP;
	if (nlt_get(&nl, BATON_CMD_RING_GET, ro, &o, &e))
		return NP_GET_OPEN_MODE;
	if (nlt_get(&nl, BATON_CMD_EPOCH_GET, ro, &o, &e) != -ENOENT ||
	    nlt_dump(&nl, BATON_CMD_EPOCH_GET, prefix, objs, 8) != 0)
		return NP_SHOWN;
	nlt_close(&nl);
	return NP_OK;
}

TEST_F_TIMEOUT(visibility, a_domain_nobody_may_only_read_stays_hidden, 60)
{
	char ro[BATON_NAME_MAX];
	pid_t pid;

	snprintf(ro, sizeof(ro), "%sro", self->prefix);
	ASSERT_EQ(0, _test_ring_create(self->dev, ro, BATON_ROLE_PRODUCER, 4,
				       8, 0644, NULL));
	ASSERT_EQ(0, np_epoch_create(self->dev, ro, 0644));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(np_read_only_as_nobody(ro, self->prefix));
	EXPECT_EQ(NP_OK, bt_wait_timeout(pid, NP_WAIT_MS));
	_test_unlink(self->dev, ro);
	_test_epoch_unlink(self->dev, ro);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0
/*
 * netlink_watchers: that one user cannot take the event channel from
 * another, and that an event reaches only the socket that asked for it.
 *
 * Owns: watcher slots are counted per user (nobody filling its own does
 * not keep root from watching, nor does a user of a user namespace that
 * root made); the queue of pending events is bounded per
 * user (nobody flooding events does not make root lose its own), and loses
 * nothing while it has room (events queued as the work item takes a
 * batch are all delivered, and no watcher is told of a drop); tombstone
 * events of two rings with the same name in two IPC namespaces are never
 * merged into one; a watcher belongs to its socket, not to its port id (a
 * new socket that binds the port id of one being closed receives nothing
 * it did not WATCH, and its own WATCH is not undone by the old socket's
 * release).
 *
 * Waits are bounded by generous timeouts, never measured; the flood and
 * the churn report how much they did.
 */
#include "mpsc_common.h"
#include "netlink_util.h"

#include <grp.h>
#include <pthread.h>
#include <sched.h>

#define NOBODY		65534
#define NW_WAIT_MS	60000

/* Child exit codes: which step failed. */
enum {
	NW_OK = 0,
	NW_SETUP = 10,
	NW_NO_ENOSPC,		/* never ran out of watcher slots */
	NW_CREATE,
};

static int nw_drop_to_nobody(void)
{
	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		return NW_SETUP;
	return NW_OK;
}

/* Subscribe sockets until the kernel says ENOSPC; how many, or -errno. */
static int nw_take_every_slot(struct nlt *socks, int max)
{
	struct nlt_err e;
	int n, ret;

	for (n = 0; n < max; n++) {
		if (nlt_open(&socks[n]))
			return -EMFILE;
		ret = nlt_watch(&socks[n], &e);
		if (ret == -ENOSPC) {
			nlt_close(&socks[n]);
			return n;
		}
		if (ret)
			return ret;
	}
	return -ENOSPC;		/* no limit met: not what we test */
}

#define NW_MAX_SOCKS	512

struct nw_shared {
	volatile uint32_t stop;
	volatile uint32_t slots;	/* watchers nobody got */
	volatile uint64_t flooded;	/* events nobody caused */
};

static struct nw_shared *nw_shared_map(void)
{
	void *p = mmap(NULL, sizeof(struct nw_shared), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * Child as nobody: take every watcher slot it can (sockets that never
 * read, so every delivery to them is wasted work), say so, then (with
 * @flood) create, unlink and close rings until told to stop.
 */
static int nw_nobody_hog(struct nw_shared *sh, struct bt_sync *up, bool flood)
{
	static struct nlt socks[NW_MAX_SOCKS];
	char name[BATON_NAME_MAX];
	int dev, n, i = 0;

	dev = bt_dev_open();
	if (dev < 0 || nw_drop_to_nobody())
		return NW_SETUP;
	n = nw_take_every_slot(socks, NW_MAX_SOCKS);
	if (n < 0)
		return NW_NO_ENOSPC;
	sh->slots = (uint32_t)n;
	bt_sync_post(up);
	while (flood && !sh->stop) {
		snprintf(name, sizeof(name), "st.nw.flood.%d.%d", (int)getpid(),
			 i++);
		if (_test_ring_create(dev, name, BATON_ROLE_PRODUCER, 2, 8,
				      0600, NULL))
			return NW_CREATE;
		_test_unlink(dev, name);
		sh->flooded += 3;	/* created, unlinked, destroyed */
	}
	while (!flood && !sh->stop)
		bt_sleep_ms(10);
	return NW_OK;
}

/* One user against another: nothing here but the name on the TAP line. */
FIXTURE(per_user_limits) {
	int unused;
};

FIXTURE_SETUP(per_user_limits)
{
	self->unused = 0;
}

FIXTURE_TEARDOWN(per_user_limits)
{
}

TEST_F_TIMEOUT(per_user_limits, taking_every_watcher_slot_leaves_root_its_own,
	       120)
{
	struct baton_ring_params p = bt_params(4, 8);
	static struct nlt_obj ev;
	struct nw_shared *sh;
	struct baton_ring *r;
	char name[BATON_NAME_MAX];
	struct bt_sync up;
	struct nlt_err e;
	struct nlt root;
	pid_t pid;

	BT_REQUIRE_DEV();
	if (getuid() != 0)
		SKIP(return, "needs root to drop to nobody");
	sh = nw_shared_map();
	ASSERT_NE(NULL, sh);
	ASSERT_EQ(0, bt_sync_init(&up));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(nw_nobody_hog(sh, &up, false));
	ASSERT_EQ(0, bt_sync_wait(&up, NW_WAIT_MS)) {
		sh->stop = 1;
		TH_LOG("nobody: exit %d", bt_wait_timeout(pid, NW_WAIT_MS));
	}
	TH_LOG("nobody got %u watcher slots before ENOSPC", sh->slots);

	/* root's watch still registers, and gets its events */
	ASSERT_EQ(0, nlt_open(&root));
	EXPECT_EQ(0, nlt_watch(&root, &e)) {
		TH_LOG("root's WATCH: %d %s", e.error, e.msg);
	}
	bt_make_name(name, sizeof(name), "nw.slots");
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_PRODUCER, &r));
	EXPECT_EQ(0, nlt_wait_event(&root, BATON_EVENT_RING_CREATED, name,
				    NW_WAIT_MS, &ev, NULL, NULL));
	baton_ring_close(r);
	baton_ring_unlink(name, BATON_BACKEND_KMOD);

	sh->stop = 1;
	EXPECT_EQ(NW_OK, bt_wait_timeout(pid, NW_WAIT_MS));
	nlt_close(&root);
	bt_sync_close(&up);
	munmap(sh, sizeof(*sh));
}

/*
 * Child: in a user namespace of its own, which root (the test) creates,
 * so root owns it, as with system containers (LXC, userns-remap); mapped
 * by the parent, it becomes its uid 0, host uid nobody, and takes every
 * watcher slot it can.
 */
static int nw_userns_hog(struct nw_shared *sh, struct bt_sync *made,
			 struct bt_sync *mapped, struct bt_sync *up)
{
	static struct nlt socks[NW_MAX_SOCKS];
	int n;

	if (unshare(CLONE_NEWUSER))
		return NW_SETUP;
	bt_sync_post(made);
	if (bt_sync_wait(mapped, NW_WAIT_MS) || setresgid(0, 0, 0) ||
	    setresuid(0, 0, 0) || geteuid() != 0)
		return NW_SETUP;
	n = nw_take_every_slot(socks, NW_MAX_SOCKS);
	if (n < 0)
		return NW_NO_ENOSPC;
	sh->slots = (uint32_t)n;
	bt_sync_post(up);
	while (!sh->stop)
		bt_sleep_ms(10);
	return NW_OK;
}

/*
 * The users of a namespace that root created are not root: taking every
 * watcher slot from inside one leaves root its own. Before, every
 * credential of a user namespace was charged to the owner of its
 * outermost namespace, which for a root-made one is root, so a
 * container's user could spend host root's slots (and its share of the
 * pending queue) and root's WATCH answered ENOSPC.
 */
TEST_F_TIMEOUT(per_user_limits,
	       a_root_made_user_namespace_spends_its_own_slots, 120)
{
	struct bt_sync made, mapped, up;
	struct nw_shared *sh;
	struct nlt_err e;
	struct nlt root;
	pid_t pid;

	BT_REQUIRE_DEV();
	if (getuid() != 0)
		SKIP(return, "needs root to make and map a user namespace");
	sh = nw_shared_map();
	ASSERT_NE(NULL, sh);
	ASSERT_EQ(0, bt_sync_init(&made));
	ASSERT_EQ(0, bt_sync_init(&mapped));
	ASSERT_EQ(0, bt_sync_init(&up));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(nw_userns_hog(sh, &made, &mapped, &up));
	ASSERT_EQ(0, bt_sync_wait(&made, NW_WAIT_MS));
	ASSERT_EQ(0, bt_write_proc(pid, "setgroups", "deny"));
	ASSERT_EQ(0, bt_write_proc(pid, "uid_map", "0 65534 1"));
	ASSERT_EQ(0, bt_write_proc(pid, "gid_map", "0 65534 1"));
	ASSERT_EQ(0, bt_sync_post(&mapped));
	ASSERT_EQ(0, bt_sync_wait(&up, NW_WAIT_MS)) {
		sh->stop = 1;
		TH_LOG("child: exit %d", bt_wait_timeout(pid, NW_WAIT_MS));
	}
	TH_LOG("the namespace's user got %u watcher slots before ENOSPC",
	       sh->slots);

	ASSERT_EQ(0, nlt_open(&root));
	EXPECT_EQ(0, nlt_watch(&root, &e)) {
		TH_LOG("root's WATCH: %d %s", e.error, e.msg);
	}
	nlt_close(&root);
	sh->stop = 1;
	EXPECT_EQ(NW_OK, bt_wait_timeout(pid, NW_WAIT_MS));
	bt_sync_close(&made);
	bt_sync_close(&mapped);
	bt_sync_close(&up);
	munmap(sh, sizeof(*sh));
}

/* ---- the pending queue ---- */

#define NW_ROOT_RINGS	200

/* What root's watcher collected, by a reader thread. */
struct nw_tally {
	struct nlt *s;
	const char *prefix;
	volatile int stop;
	int got[BATON_EVENT_STRAGGLER + 1];	/* root's own, by type */
	uint64_t max_drops;			/* largest DROPS seen */
	uint64_t others;			/* events about other names */
};

static void nw_tally_one(const struct nlmsghdr *h, void *arg)
{
	static struct nlt_obj ev;
	struct nw_tally *t = arg;
	uint64_t type;

	nlt_parse_obj(h, BATON_A_EVENT_NAME, -1, &ev);
	type = ev.a.v[BATON_A_EVENT_TYPE];
	if (ev.a.v[BATON_A_EVENT_DROPS] > t->max_drops)
		t->max_drops = ev.a.v[BATON_A_EVENT_DROPS];
	if (strncmp(ev.a.name, t->prefix, strlen(t->prefix)) ||
	    type > BATON_EVENT_STRAGGLER)
		t->others++;
	else
		t->got[type]++;
}

static void *nw_reader(void *arg)
{
	struct nw_tally *t = arg;

	while (!t->stop)
		nlt_read_events(t->s, 100, nw_tally_one, t);
	return NULL;
}

/*
 * Root's watcher with a receive buffer of @rcvbuf bytes, its events about
 * the names "st.nw.@tag.<pid>." tallied into @t by a thread.
 */
static int nw_tally_start(struct nw_tally *t, struct nlt *root, int rcvbuf,
			  char *prefix, size_t len, const char *tag,
			  pthread_t *th)
{
	struct nlt_err e;

	snprintf(prefix, len, "st.nw.%s.%d.", tag, (int)getpid());
	t->s = root;
	t->prefix = prefix;
	if (nlt_open(root) ||
	    setsockopt(root->fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
		       sizeof(rcvbuf)) ||
	    nlt_watch(root, &e))
		return -1;
	return pthread_create(th, NULL, nw_reader, t) ? -1 : 0;
}

static bool nw_all_in(const struct nw_tally *t)
{
	return t->got[BATON_EVENT_RING_CREATED] == NW_ROOT_RINGS &&
	       t->got[BATON_EVENT_RING_UNLINKED] == NW_ROOT_RINGS &&
	       t->got[BATON_EVENT_RING_DESTROYED] == NW_ROOT_RINGS;
}

/*
 * nobody floods events (and makes each delivery expensive with every
 * watcher slot it may hold) until the kernel's queue overflows; root,
 * meanwhile, makes NW_ROOT_RINGS rings: its watcher must get every one of
 * their events. Before the queue was per user, nobody's flood took the
 * whole queue and root's events were lost with nobody's.
 */
TEST_F_TIMEOUT(per_user_limits, flooding_the_event_queue_drops_none_of_roots,
	       300)
{
	struct nw_tally t = { 0 };
	struct nw_shared *sh;
	char prefix[32], name[BATON_NAME_MAX];
	struct bt_sync up;
	struct nlt root;
	pthread_t th;
	int64_t end;
	int dev, i;
	pid_t pid;

	BT_REQUIRE_DEV();
	if (getuid() != 0)
		SKIP(return, "needs root to drop to nobody");
	dev = bt_dev_open();
	ASSERT_LE(0, dev);
	sh = nw_shared_map();
	ASSERT_NE(NULL, sh);
	ASSERT_EQ(0, bt_sync_init(&up));
	/* root reads as fast as it can: its own socket never overflows */
	ASSERT_EQ(0, nw_tally_start(&t, &root, 64 << 20, prefix,
				    sizeof(prefix), "root", &th));

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(nw_nobody_hog(sh, &up, true));
	ASSERT_EQ(0, bt_sync_wait(&up, NW_WAIT_MS));
	/* the flood is on; wait (bounded) until the queue overflows */
	end = bt_now_ns() + 30 * BT_NSEC;
	while (!t.max_drops && bt_now_ns() < end)
		bt_sleep_ms(50);
	TH_LOG("nobody: %u watchers, %llu events before root starts; drops seen %llu",
	       sh->slots, (unsigned long long)sh->flooded,
	       (unsigned long long)t.max_drops);
	if (!t.max_drops) {
		sh->stop = 1;
		t.stop = 1;
		pthread_join(th, NULL);
		bt_wait_timeout(pid, NW_WAIT_MS);
		SKIP(return, "the flood never outran delivery: nothing to test");
	}

	for (i = 0; i < NW_ROOT_RINGS; i++) {
		snprintf(name, sizeof(name), "%s%d", prefix, i);
		ASSERT_EQ(0, _test_ring_create(dev, name, BATON_ROLE_PRODUCER,
					       2, 8, 0600, NULL));
		ASSERT_EQ(0, _test_unlink(dev, name));
	}
	sh->stop = 1;
	EXPECT_EQ(NW_OK, bt_wait_timeout(pid, NW_WAIT_MS));
	end = bt_now_ns() + 120 * BT_NSEC;
	while (!nw_all_in(&t) && bt_now_ns() < end)
		bt_sleep_ms(100);
	t.stop = 1;
	pthread_join(th, NULL);
	TH_LOG("nobody flooded %llu events; root got %d created, %d unlinked, %d destroyed of %d; %llu others; drops %llu",
	       (unsigned long long)sh->flooded,
	       t.got[BATON_EVENT_RING_CREATED],
	       t.got[BATON_EVENT_RING_UNLINKED],
	       t.got[BATON_EVENT_RING_DESTROYED], NW_ROOT_RINGS,
	       (unsigned long long)t.others,
	       (unsigned long long)t.max_drops);
	EXPECT_TRUE(nw_all_in(&t));
	nlt_close(&root);
	close(dev);
	bt_sync_close(&up);
	munmap(sh, sizeof(*sh));
}

/* ---- no loss while the queue has room ---- */

#define NW_RACE_EMITTERS	2
#define NW_RACE_RINGS		600	/* each emitter's: 3 events a ring */
#define NW_RACE_AHEAD		50	/* rings one may be ahead of the reader */

struct nw_emitter {
	struct nw_tally *t;
	int id;
	int dev;
	int ret;
};

/*
 * Create and unlink rings as fast as the reader keeps up: the work item
 * takes one small batch after another while new events are queued, and
 * the queue (BATON_NL_PENDING_MAX a user) never comes near full.
 */
static void *nw_emit(void *arg)
{
	struct nw_emitter *em = arg;
	char name[BATON_NAME_MAX];
	int i;

	for (i = 0; i < NW_RACE_RINGS; i++) {
		int64_t end = bt_now_ns() + NW_WAIT_MS * BT_MSEC;

		while (i - __atomic_load_n(&em->t->got[BATON_EVENT_RING_DESTROYED],
					   __ATOMIC_RELAXED) / NW_RACE_EMITTERS >
		       NW_RACE_AHEAD && bt_now_ns() < end)
			bt_sleep_ms(1);
		snprintf(name, sizeof(name), "%s%d.%d", em->t->prefix, em->id,
			 i);
		em->ret = _test_ring_create(em->dev, name, BATON_ROLE_PRODUCER,
					    2, 8, 0600, NULL);
		if (em->ret)
			break;
		em->ret = _test_unlink(em->dev, name);
		if (em->ret)
			break;
	}
	return NULL;
}

/*
 * Events emitted by two threads while the work item delivers: every one
 * arrives, and no watcher is told of a drop. The queue's per-user entry
 * is freed each time the work item takes a batch; an event that had seen
 * the entry before, and queued after, was dropped as if the queue were
 * full (the flake of 2026-12-01 in the 6.12 debug kernel's run).
 */
TEST_F_TIMEOUT(per_user_limits, events_while_the_queue_has_room_are_never_lost,
	       300)
{
	struct nw_emitter em[NW_RACE_EMITTERS];
	pthread_t th[NW_RACE_EMITTERS], reader;
	struct nw_tally t = { 0 };
	int64_t end;
	char prefix[32];
	struct nlt root;
	int i, want = NW_RACE_EMITTERS * NW_RACE_RINGS;

	BT_REQUIRE_DEV();
	ASSERT_EQ(0, nw_tally_start(&t, &root, 16 << 20, prefix,
				    sizeof(prefix), "race", &reader));
	for (i = 0; i < NW_RACE_EMITTERS; i++) {
		em[i] = (struct nw_emitter){ .t = &t, .id = i,
					     .dev = bt_dev_open() };
		ASSERT_LE(0, em[i].dev);
		ASSERT_EQ(0, pthread_create(&th[i], NULL, nw_emit, &em[i]));
	}
	for (i = 0; i < NW_RACE_EMITTERS; i++) {
		pthread_join(th[i], NULL);
		EXPECT_EQ(0, em[i].ret);
		close(em[i].dev);
	}
	end = bt_now_ns() + NW_WAIT_MS * BT_MSEC;
	while (__atomic_load_n(&t.got[BATON_EVENT_RING_DESTROYED],
			       __ATOMIC_RELAXED) < want && bt_now_ns() < end)
		bt_sleep_ms(10);
	bt_sleep_ms(200);	/* a late DROPS, or a duplicate, would show */
	t.stop = 1;
	pthread_join(reader, NULL);
	TH_LOG("%d rings: %d created, %d unlinked, %d destroyed; drops %llu",
	       want, t.got[BATON_EVENT_RING_CREATED],
	       t.got[BATON_EVENT_RING_UNLINKED],
	       t.got[BATON_EVENT_RING_DESTROYED],
	       (unsigned long long)t.max_drops);
	EXPECT_EQ(0, t.max_drops);
	EXPECT_EQ(want, t.got[BATON_EVENT_RING_CREATED]);
	EXPECT_EQ(want, t.got[BATON_EVENT_RING_UNLINKED]);
	EXPECT_EQ(want, t.got[BATON_EVENT_RING_DESTROYED]);
	nlt_close(&root);
}

/* ---- tombstones of two rings with one name ---- */

/* Sum of TOMBSTONES counts about @name seen within @ms, and the tickets. */
struct nw_tombs {
	uint64_t count;
	uint64_t first_ticket;
	int events;
	int end;		/* why the wait ended: -ETIMEDOUT, or an error */
};

static void nw_collect_tombs(struct nlt *s, const char *name, long ms,
			     struct nw_tombs *out)
{
	static struct nlt_obj ev;

	memset(out, 0, sizeof(*out));
	while (!(out->end = nlt_wait_event(s, BATON_EVENT_TOMBSTONES, name, ms,
					   &ev, NULL, NULL))) {
		if (!out->events++)
			out->first_ticket = ev.a.v[BATON_A_EVENT_TICKET];
		out->count += ev.a.v[BATON_A_EVENT_COUNT];
		ms = 500;	/* more of the same only comes right after */
	}
}

/*
 * Producer: attached to "q" of both namespaces. Ring B: ticket 0
 * published, ticket 1 held; ring A: ticket 0 held. Then it waits to die:
 * A's tombstone is (ticket 0, count 1), B's is (ticket 1, count 1), the
 * very shape that continues A's if only names and tickets are compared.
 */
static pid_t nw_two_ns_producer(const char *name, int ns1, struct bt_sync *s)
{
	uint64_t m[2] = { 1, 1 };
	struct baton_ring *pa, *pb;
	pid_t pid = fork();

	if (pid)
		return pid;
	if (baton_ring_open(name, BATON_ROLE_PRODUCER, BATON_BACKEND_KMOD, &pb))
		_exit(3);
	if (setns(ns1, CLONE_NEWIPC) ||
	    baton_ring_open(name, BATON_ROLE_PRODUCER, BATON_BACKEND_KMOD, &pa))
		_exit(4);
	if (baton_mpsc_push(pb, m, sizeof(m)))
		_exit(5);
	baton_mpsc_prod_reserve(pb, 1);
	baton_mpsc_prod_reserve(pa, 1);
	bt_sync_post(s);
	pause();
	_exit(6);
}

/* Root's watcher sockets that never read: each delivery costs them all. */
#define NW_BUSY_WATCHERS	32

/* Make the delivery work item busy: a burst of events before ours. */
static void nw_burst(int dev, const char *tag, int n)
{
	char name[BATON_NAME_MAX];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "st.nw.%s.%d.%d", tag,
			 (int)getpid(), i);
		if (_test_ring_create(dev, name, BATON_ROLE_PRODUCER, 2, 8,
				      0600, NULL) == 0)
			_test_unlink(dev, name);
	}
}

/* Room for every event of a burst: a full socket would drop ours. */
static int nw_roomy(struct nlt *s)
{
	int big = 16 << 20;

	return setsockopt(s->fd, SOL_SOCKET, SO_RCVBUFFORCE, &big,
			  sizeof(big));
}

/* Say which step of a round failed: the exit code alone reaches nobody. */
static int nw_step_failed(int code, const char *step)
{
	fprintf(stderr, "# round failed at %s (exit %d): %s\n", step, code,
		strerror(errno));
	return code;
}

/* One round, in a child so that the IPC namespace goes with it. */
static int nw_two_namespaces_round(int round)
{
	struct baton_ring_params p = mp_params(8, 2);
	static struct nlt busy[NW_BUSY_WATCHERS];
	struct baton_ring *ca, *cb;
	struct baton_mpsc_loss loss;
	char name[BATON_NAME_MAX];
	struct nw_tombs ta, tb;
	struct nlt w1, w2;
	struct nlt_err e;
	struct bt_sync s;
	uint64_t m[2];
	int ns1, dev, i, tiny = 1, ret[3];
	pid_t prod;

	bt_make_name(name, sizeof(name), "nw.q");
	dev = bt_dev_open();
	ns1 = open("/proc/self/ns/ipc", O_RDONLY | O_CLOEXEC);
	if (dev < 0 || ns1 < 0 || bt_sync_init(&s))
		return nw_step_failed(10, "device, namespace or sync");
	/*
	 * The WATCH first, then the tiny buffer: an event delivered between
	 * the subscription and its ack would fill a tiny buffer, and the ack
	 * would then be dropped (ENOBUFS), failing the setup.
	 */
	for (i = 0; i < NW_BUSY_WATCHERS; i++)
		if (nlt_open(&busy[i]) || nlt_watch(&busy[i], &e) ||
		    setsockopt(busy[i].fd, SOL_SOCKET, SO_RCVBUF, &tiny,
			       sizeof(tiny)))
			return nw_step_failed(11, "busy watcher");
	/* ring A and its watcher in the first namespace */
	if (nlt_open(&w1) || nw_roomy(&w1) || nlt_watch(&w1, &e) ||
	    baton_ring_create(name, &p, BATON_ROLE_CONSUMER, &ca))
		return nw_step_failed(12, "first namespace's watcher or ring");
	/* ring B, the same name, and its watcher in a second one */
	if (unshare(CLONE_NEWIPC) || nlt_open(&w2) || nw_roomy(&w2) ||
	    nlt_watch(&w2, &e) ||
	    baton_ring_create(name, &p, BATON_ROLE_CONSUMER, &cb))
		return nw_step_failed(13, "second namespace's watcher or ring");
	prod = nw_two_ns_producer(name, ns1, &s);
	if (prod < 0 || bt_sync_wait(&s, NW_WAIT_MS)) {
		fprintf(stderr, "# producer: exit %d\n",
			prod < 0 ? prod : bt_wait_timeout(prod, 1000));
		return nw_step_failed(14, "producer setup");
	}
	kill(prod, SIGKILL);
	if (bt_wait_timeout(prod, NW_WAIT_MS) != 128 + SIGKILL)
		return nw_step_failed(15, "producer's death");
	/* the work item is busy with the burst while both tombstones queue */
	nw_burst(dev, "burst", 150);
	ret[0] = baton_mpsc_pop(ca, m, sizeof(m), 10 * BT_NSEC, &loss);
	ret[1] = baton_mpsc_pop(cb, m, sizeof(m), 10 * BT_NSEC, &loss);
	ret[2] = baton_mpsc_pop(cb, m, sizeof(m), 10 * BT_NSEC, &loss);
	if (ret[0] != BATON_MPSC_LOST || ret[1] != 0 ||
	    ret[2] != BATON_MPSC_LOST) {
		fprintf(stderr, "# pops: %d %d %d\n", ret[0], ret[1], ret[2]);
		return 16;
	}
	nw_collect_tombs(&w1, name, NW_WAIT_MS, &ta);
	nw_collect_tombs(&w2, name, NW_WAIT_MS, &tb);
	fprintf(stderr,
		"# round %d: first namespace: %d events, ticket %llu, count %llu (%s); second: %d events, ticket %llu, count %llu (%s)\n",
		round, ta.events, (unsigned long long)ta.first_ticket,
		(unsigned long long)ta.count, strerror(-ta.end), tb.events,
		(unsigned long long)tb.first_ticket,
		(unsigned long long)tb.count, strerror(-tb.end));
	baton_ring_close(cb);
	baton_ring_unlink(name, BATON_BACKEND_KMOD);
	baton_ring_close(ca);
	if (setns(ns1, CLONE_NEWIPC) == 0)
		baton_ring_unlink(name, BATON_BACKEND_KMOD);
	if (ta.count != 1 || ta.first_ticket != 0)
		return 1;	/* A's event took B's ticket */
	if (tb.count != 1 || tb.first_ticket != 1)
		return 2;	/* B's event went into A's */
	return 0;
}

FIXTURE(tombstone_events) {
	int unused;
};

FIXTURE_SETUP(tombstone_events)
{
	self->unused = 0;
}

FIXTURE_TEARDOWN(tombstone_events)
{
}

TEST_F_TIMEOUT(tombstone_events, same_name_in_two_ipc_namespaces_never_merge,
	       300)
{
	int round;
	pid_t pid;

	BT_REQUIRE_DEV();
	if (getuid() != 0)
		SKIP(return, "needs root for a new IPC namespace");
	for (round = 0; round < 5; round++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0)
			_exit(nw_two_namespaces_round(round));
		ASSERT_EQ(0, bt_wait_timeout(pid, 2 * NW_WAIT_MS));
	}
}

/* ---- port id reuse ---- */

#define NW_CHURN	100

static void *nw_close_fd(void *arg)
{
	close((int)(intptr_t)arg);
	return NULL;
}

/*
 * Child: events until told to stop, one ring at a time, each made only
 * once the last one's events have been delivered (its own watcher saw
 * it destroyed): a steady stream that never overflows the queue, so the
 * sentinel below is not lost to a backlog.
 */
static int nw_event_source(struct nw_shared *sh)
{
	char name[BATON_NAME_MAX];
	static struct nlt_obj ev;
	struct nlt_err e;
	struct nlt w;
	int dev = bt_dev_open(), i = 0;

	if (dev < 0 || nlt_open(&w) || nw_roomy(&w) || nlt_watch(&w, &e))
		return NW_SETUP;
	while (!sh->stop) {
		snprintf(name, sizeof(name), "st.nw.churn.%d.%d", (int)getpid(),
			 i++);
		if (_test_ring_create(dev, name, BATON_ROLE_PRODUCER, 2, 8,
				      0600, NULL))
			return NW_CREATE;
		_test_unlink(dev, name);
		nlt_wait_event(&w, BATON_EVENT_RING_DESTROYED, name,
			       NW_WAIT_MS / 6, &ev, NULL, NULL);
		sh->flooded += 3;
	}
	return NW_OK;
}

/*
 * Watch on @s and wait until an event made now reaches it: every event
 * queued before has been delivered then (the queue is delivered in
 * order). A sentinel lost to a full queue is made again.
 */
static int nw_sentinel(struct nlt *s)
{
	struct baton_ring_params p = bt_params(2, 8);
	static struct nlt_obj ev;
	char name[BATON_NAME_MAX];
	struct baton_ring *r;
	struct nlt_err e;
	int big = 8 << 20, tries, ret = -ETIMEDOUT;

	setsockopt(s->fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	if (nlt_watch(s, &e))
		return -EPROTO;
	for (tries = 0; tries < 10 && ret; tries++) {
		bt_make_name(name, sizeof(name), "nw.sentinel");
		if (baton_ring_create(name, &p, BATON_ROLE_PRODUCER, &r))
			return -EPROTO;
		ret = nlt_wait_event(s, BATON_EVENT_RING_CREATED, name,
				     NW_WAIT_MS / 6, &ev, NULL, NULL);
		baton_ring_close(r);
		baton_ring_unlink(name, BATON_BACKEND_KMOD);
	}
	return ret;
}

/* Any event in @s's queue now? (Acks and errors do not count.) */
static int nw_queued_events(struct nlt *s)
{
	static char buf[NLT_BUF];
	int events = 0;
	ssize_t n;

	while ((n = recv(s->fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0 ||
	       (n < 0 && errno == ENOBUFS)) {
		struct nlmsghdr *h;

		if (n < 0) {
			events++;	/* it overflowed: with events */
			continue;
		}
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, n);
		     h = NLMSG_NEXT(h, n))
			if (h->nlmsg_type == s->family)
				events++;
	}
	return events;
}

/*
 * Churn: socket A binds port id P, WATCHes, and is closed by another
 * thread while this one binds a new socket B to P as soon as the kernel
 * lets it (right after A's netlink_remove(), before A's release is
 * over), with events flowing all the time. A B that never WATCHed must
 * receive no event; a B that WATCHed at once must still be watching at
 * the end (its UNWATCH is acked, not ENOENT).
 */
FIXTURE(watcher_is_its_socket) {
	int unused;
};

FIXTURE_SETUP(watcher_is_its_socket)
{
	self->unused = 0;
}

FIXTURE_TEARDOWN(watcher_is_its_socket)
{
}

TEST_F_TIMEOUT(watcher_is_its_socket, reused_port_id_gets_only_what_it_watched,
	       300)
{
	static struct nlt reused[NW_CHURN];
	int stray = 0, unwatched = 0, spins = 0;
	struct nw_shared *sh;
	struct nlt first, a;
	struct nlt_err e;
	uint32_t base;
	pthread_t th;
	pid_t pid;
	int i, ret;

	BT_REQUIRE_DEV();
	sh = nw_shared_map();
	ASSERT_NE(NULL, sh);
	ASSERT_EQ(0, nlt_open(&first));		/* the family id */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(nw_event_source(sh));
	base = 0x40000000u | (((uint32_t)getpid() & 0x3fff) << 12);
	for (i = 0; i < NW_CHURN; i++) {
		ASSERT_EQ(0, nlt_socket_at(&a, base + i, first.family));
		ASSERT_EQ(0, nlt_watch(&a, &e));
		ASSERT_EQ(0, pthread_create(&th, NULL, nw_close_fd,
					    (void *)(intptr_t)a.fd));
		while ((ret = nlt_socket_at(&reused[i], base + i,
					    first.family)) == -EADDRINUSE) {
			close(reused[i].fd);
			spins++;
		}
		ASSERT_EQ(0, ret);
		if (i & 1)
			EXPECT_EQ(0, nlt_watch(&reused[i], &e));
		pthread_join(th, NULL);
	}
	sh->stop = 1;
	EXPECT_EQ(NW_OK, bt_wait_timeout(pid, NW_WAIT_MS));
	/* every event the source made has been delivered once this is */
	ASSERT_EQ(0, nw_sentinel(&first));
	for (i = 0; i < NW_CHURN; i++) {
		if (i & 1) {
			nw_queued_events(&reused[i]);
			if (nlt_simple(&reused[i], BATON_CMD_UNWATCH, &e))
				unwatched++;
		} else if (nw_queued_events(&reused[i])) {
			stray++;
		}
		nlt_close(&reused[i]);
	}
	TH_LOG("%d sockets, %llu events meanwhile, %d binds refused first; %d never-watching sockets got events, %d watching ones had lost their WATCH",
	       NW_CHURN, (unsigned long long)sh->flooded, spins, stray,
	       unwatched);
	EXPECT_EQ(0, stray);
	EXPECT_EQ(0, unwatched);
	nlt_close(&first);
	munmap(sh, sizeof(*sh));
}

TEST_HARNESS_MAIN

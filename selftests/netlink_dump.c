// SPDX-License-Identifier: GPL-2.0
/*
 * netlink_dump: what BATON_CMD_RING_GET and BATON_CMD_EPOCH_GET report,
 * checked against what the test did, over a raw generic netlink socket.
 *
 * Owns: dumps of 0, 1 and 100 rings and of 0, 1 and 100 epoch domains
 * list exactly those (counting only this test's name prefix; other tests
 * run before and after us), each once, with the geometry, owner and mode
 * they were created with; a doit by name returns the same object; a
 * ring unlinked while still open is no longer found by name but is still
 * dumped, flagged UNLINKED, until its last fd goes; after 1000 messages pushed
 * by a producer process and popped by the consumer, head, tail and the
 * message counters say 1000 and the producer's release is counted; a
 * forced park on each side is counted once, and a consumer parked right
 * now shows up as parked, with its pid, among the ring's peers.
 */
#include "netlink_util.h"

#define ND_MANY		100

FIXTURE(dump) {
	int dev;
	struct nlt nl;
	char prefix[32];
};

FIXTURE_SETUP(dump)
{
	BT_REQUIRE_DEV();
	self->dev = bt_dev_open();
	ASSERT_LE(0, self->dev);
	ASSERT_EQ(0, nlt_open(&self->nl)) {
		TH_LOG("no generic netlink family \"%s\" with the module loaded",
		       BATON_FAMILY_NAME);
	}
	snprintf(self->prefix, sizeof(self->prefix), "nd.%d.", (int)getpid());
}

FIXTURE_TEARDOWN(dump)
{
	char name[BATON_NAME_MAX];
	struct baton_unlink u;
	int i;

	if (self->dev <= 0)
		return;
	/* best effort: whatever a failed test left behind */
	for (i = 0; i < ND_MANY; i++) {
		snprintf(name, sizeof(name), "%s%d", self->prefix, i);
		_test_unlink(self->dev, name);
		memset(&u, 0, sizeof(u));
		u.size = sizeof(u);
		snprintf(u.name, sizeof(u.name), "%s", name);
		bt_ioctl(self->dev, BATON_IOC_EPOCH_UNLINK, &u);
	}
	nlt_close(&self->nl);
	close(self->dev);
}

static int nd_epoch_create(int dev, const char *name, uint32_t maxp,
			   uint32_t qlen, uint32_t mode)
{
	return _test_epoch_create(dev, name, maxp, qlen, mode, NULL);
}

/* Every name prefix0 .. prefix(n-1) appears exactly once in @objs. */
static bool nd_each_once(const char *prefix, const struct nlt_obj *objs,
			 int n)
{
	char name[BATON_NAME_MAX];
	int i, j, seen;

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s%d", prefix, i);
		for (seen = 0, j = 0; j < n; j++)
			seen += !strcmp(objs[j].a.name, name);
		if (seen != 1)
			return false;
	}
	return true;
}

TEST_F_TIMEOUT(dump, lists_0_1_and_100_rings, 120)
{
	struct nlt_obj *objs = calloc(ND_MANY + 1, sizeof(*objs));
	char name[BATON_NAME_MAX];
	const struct nlt_rec *a;
	struct nlt_obj one;
	struct nlt_err e;
	int i;

	ASSERT_NE(NULL, objs);
	EXPECT_EQ(0, nlt_dump(&self->nl, BATON_CMD_RING_GET, self->prefix,
			      NULL, 0));

	snprintf(name, sizeof(name), "%s0", self->prefix);
	ASSERT_EQ(0, _test_ring_create(self->dev, name, BATON_ROLE_PRODUCER,
				       256, 64, 0640, NULL));
	ASSERT_EQ(1, nlt_dump(&self->nl, BATON_CMD_RING_GET, self->prefix,
			      objs, ND_MANY + 1));
	a = &objs[0].a;
	EXPECT_STREQ(name, a->name);
	EXPECT_EQ(BATON_RING_SPSC, a->v[BATON_A_RING_KIND]);
	EXPECT_EQ(256, a->v[BATON_A_RING_SLOT_COUNT]);
	EXPECT_EQ(64, a->v[BATON_A_RING_SLOT_SIZE]);
	EXPECT_EQ(getuid(), a->v[BATON_A_RING_UID]);
	EXPECT_EQ(getgid(), a->v[BATON_A_RING_GID]);
	EXPECT_EQ(0640, a->v[BATON_A_RING_MODE]);
	EXPECT_TRUE(nlt_has(a, BATON_A_RING_HEAD));
	EXPECT_EQ(0, a->v[BATON_A_RING_HEAD]);
	EXPECT_EQ(0, a->v[BATON_A_RING_TAIL]);
	EXPECT_EQ(0, a->v[BATON_A_RING_OCCUPANCY]);
	/* the create's fd was closed: nobody is attached */
	EXPECT_EQ(0, a->v[BATON_A_RING_PRODUCERS]);
	EXPECT_EQ(0, a->v[BATON_A_RING_CONSUMERS]);
	EXPECT_FALSE(nlt_has(a, BATON_A_RING_UNLINKED));

	/* the doit says the same */
	ASSERT_EQ(0, nlt_get(&self->nl, BATON_CMD_RING_GET, name, &one, &e));
	EXPECT_STREQ(name, one.a.name);
	EXPECT_EQ(256, one.a.v[BATON_A_RING_SLOT_COUNT]);
	EXPECT_EQ(0640, one.a.v[BATON_A_RING_MODE]);

	for (i = 1; i < ND_MANY; i++) {
		snprintf(name, sizeof(name), "%s%d", self->prefix, i);
		ASSERT_EQ(0, _test_ring_create(self->dev, name,
					       BATON_ROLE_CONSUMER, 2, 8, 0600,
					       NULL));
	}
	/* 100 rings take several dump messages: the cursor must hold */
	ASSERT_EQ(ND_MANY, nlt_dump(&self->nl, BATON_CMD_RING_GET,
				    self->prefix, objs, ND_MANY + 1));
	EXPECT_TRUE(nd_each_once(self->prefix, objs, ND_MANY));

	for (i = 0; i < ND_MANY; i++) {
		snprintf(name, sizeof(name), "%s%d", self->prefix, i);
		ASSERT_EQ(0, _test_unlink(self->dev, name));
	}
	EXPECT_EQ(0, nlt_dump(&self->nl, BATON_CMD_RING_GET, self->prefix,
			      NULL, 0));
	free(objs);
}

TEST_F_TIMEOUT(dump, lists_0_1_and_100_domains, 120)
{
	struct nlt_obj *objs = calloc(ND_MANY + 1, sizeof(*objs));
	char name[BATON_NAME_MAX];
	const struct nlt_rec *a;
	struct nlt_obj one;
	struct nlt_err e;
	int i;

	ASSERT_NE(NULL, objs);
	EXPECT_EQ(0, nlt_dump(&self->nl, BATON_CMD_EPOCH_GET, self->prefix,
			      NULL, 0));

	snprintf(name, sizeof(name), "%s0", self->prefix);
	ASSERT_EQ(0, nd_epoch_create(self->dev, name, 8, 16, 0660));
	ASSERT_EQ(1, nlt_dump(&self->nl, BATON_CMD_EPOCH_GET, self->prefix,
			      objs, ND_MANY + 1));
	a = &objs[0].a;
	EXPECT_STREQ(name, a->name);
	EXPECT_EQ(8, a->v[BATON_A_EPOCH_MAX_PARTICIPANTS]);
	EXPECT_EQ(16, a->v[BATON_A_EPOCH_QUEUE_LEN]);
	EXPECT_EQ(getuid(), a->v[BATON_A_EPOCH_UID]);
	EXPECT_EQ(0660, a->v[BATON_A_EPOCH_MODE]);
	/* a new domain: global 1, nobody registered, nothing pending */
	EXPECT_EQ(1, a->v[BATON_A_EPOCH_GLOBAL]);
	EXPECT_EQ(0, a->v[BATON_A_EPOCH_PARTICIPANTS]);
	EXPECT_EQ(0, a->v[BATON_A_EPOCH_ACTIVE_READERS]);
	EXPECT_EQ(0, a->v[BATON_A_EPOCH_PENDING]);
	EXPECT_EQ(0, objs[0].npeers);

	ASSERT_EQ(0, nlt_get(&self->nl, BATON_CMD_EPOCH_GET, name, &one, &e));
	EXPECT_STREQ(name, one.a.name);
	EXPECT_EQ(8, one.a.v[BATON_A_EPOCH_MAX_PARTICIPANTS]);

	for (i = 1; i < ND_MANY; i++) {
		snprintf(name, sizeof(name), "%s%d", self->prefix, i);
		ASSERT_EQ(0, nd_epoch_create(self->dev, name, 1, 2, 0600));
	}
	ASSERT_EQ(ND_MANY, nlt_dump(&self->nl, BATON_CMD_EPOCH_GET,
				    self->prefix, objs, ND_MANY + 1));
	EXPECT_TRUE(nd_each_once(self->prefix, objs, ND_MANY));

	for (i = 0; i < ND_MANY; i++) {
		snprintf(name, sizeof(name), "%s%d", self->prefix, i);
		ASSERT_EQ(0, _test_epoch_unlink(self->dev, name));
	}
	EXPECT_EQ(0, nlt_dump(&self->nl, BATON_CMD_EPOCH_GET, self->prefix,
			      NULL, 0));
	free(objs);
}

/*
 * Unlinked but still open: no longer found by name, still in a dump that
 * counts flagged objects, flagged UNLINKED; gone once the last fd goes.
 */
TEST_F(dump, unlinked_ring_kept_open_is_flagged)
{
	struct nlt_dump_ctx c = { BATON_CMD_RING_GET, self->prefix, NULL, 0,
				  0, 0, true };
	char name[BATON_NAME_MAX];
	static struct nlt_obj obj;
	struct nlt_msg m;
	struct nlt_err e;
	int fd;

	snprintf(name, sizeof(name), "%s0", self->prefix);
	fd = test_ring_create(self->dev, name, BATON_ROLE_PRODUCER, 4, 8, 0600,
			      NULL);
	ASSERT_EQ(0, nlt_get(&self->nl, BATON_CMD_RING_GET, name, &obj, &e));
	EXPECT_FALSE(nlt_has(&obj.a, BATON_A_RING_UNLINKED));
	test_unlink(self->dev, name);
	EXPECT_EQ(-ENOENT, nlt_get(&self->nl, BATON_CMD_RING_GET, name, &obj,
				   &e));
	EXPECT_NE(0, e.msg[0]);
	/* linked names only: none */
	EXPECT_EQ(0, nlt_dump(&self->nl, BATON_CMD_RING_GET, self->prefix,
			      NULL, 0));
	/* every live ring: the open one, flagged */
	c.objs = &obj;
	c.max = 1;
	nlt_msg_init(&m, self->nl.family, NLM_F_DUMP, BATON_CMD_RING_GET);
	ASSERT_EQ(0, nlt_send(&self->nl, &m));
	ASSERT_EQ(0, nlt_collect(&self->nl, NULL, nlt_dump_one, &c));
	ASSERT_EQ(1, c.n);
	EXPECT_TRUE(nlt_has(&obj.a, BATON_A_RING_UNLINKED));
	EXPECT_EQ(1, obj.a.v[BATON_A_RING_PRODUCERS]);
	/* the last fd goes: so does the ring */
	close(fd);
	c.n = 0;
	nlt_msg_init(&m, self->nl.family, NLM_F_DUMP, BATON_CMD_RING_GET);
	ASSERT_EQ(0, nlt_send(&self->nl, &m));
	ASSERT_EQ(0, nlt_collect(&self->nl, NULL, nlt_dump_one, &c));
	EXPECT_EQ(0, c.n);
}

#define ND_MSGS		1000
#define ND_SLOTS	64

/* Child: open the producer side, push @n sequence numbers, close. */
static int nd_producer(const char *name, int n)
{
	struct baton_ring *p;
	uint64_t i;

	if (baton_ring_open(name, BATON_ROLE_PRODUCER, BATON_BACKEND_KMOD, &p))
		return 3;
	for (i = 0; i < (uint64_t)n; i++)
		if (baton_spsc_push(p, &i, sizeof(i), 20 * BT_NSEC) != 0)
			return 4;
	baton_ring_close(p);
	return 0;
}

TEST_F_TIMEOUT(dump, counters_after_1000_messages, 120)
{
	struct baton_ring_params p = bt_params(ND_SLOTS, 64);
	char name[BATON_NAME_MAX];
	struct baton_ring *c;
	static struct nlt_obj o;
	struct nlt_err e;
	uint64_t i, v;
	pid_t pid;

	snprintf(name, sizeof(name), "%s0", self->prefix);
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_CONSUMER, &c));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(nd_producer(name, ND_MSGS));
	for (i = 0; i < ND_MSGS; i++) {
		ASSERT_EQ(0, baton_spsc_pop(c, &v, sizeof(v), 20 * BT_NSEC));
		ASSERT_EQ(i, v);
	}
	ASSERT_EQ(0, bt_wait_timeout(pid, 20000));

	ASSERT_EQ(0, nlt_get(&self->nl, BATON_CMD_RING_GET, name, &o, &e));
	EXPECT_EQ(ND_MSGS, o.a.v[BATON_A_RING_HEAD]);
	EXPECT_EQ(ND_MSGS, o.a.v[BATON_A_RING_TAIL]);
	EXPECT_EQ(0, o.a.v[BATON_A_RING_OCCUPANCY]);
	EXPECT_EQ(ND_MSGS, o.a.v[BATON_A_RING_MSGS_CONSUMED]);
	EXPECT_EQ(ND_MSGS, o.a.v[BATON_A_RING_MSGS_RESERVED]);
	/* the producer closed and exited; we are still the consumer */
	EXPECT_EQ(0, o.a.v[BATON_A_RING_PRODUCERS]);
	EXPECT_EQ(1, o.a.v[BATON_A_RING_CONSUMERS]);
	EXPECT_EQ(1, o.a.v[BATON_A_RING_PRODUCER_DEATHS]);
	EXPECT_EQ(0, o.a.v[BATON_A_RING_CONSUMER_DEATHS]);
	EXPECT_EQ(0, o.a.v[BATON_A_RING_TOMBSTONES]);
	EXPECT_EQ(BATON_STATE_PRODUCER_GONE, o.a.v[BATON_A_RING_STATE]);
	ASSERT_EQ(1, o.npeers);
	EXPECT_EQ(getpid(), o.peers[0].v[BATON_A_PEER_PID]);
	EXPECT_EQ(BATON_ROLE_CONSUMER, o.peers[0].v[BATON_A_PEER_ROLE]);
	baton_ring_close(c);
	baton_ring_unlink(name, BATON_BACKEND_KMOD);
}

/*
 * Child: park the consumer on the empty ring until woken, then stay
 * attached until told to go; 0 if all went so.
 */
static int nd_parked_consumer(const char *name, struct bt_sync *s,
			      struct bt_sync *go)
{
	struct baton_ring *c;

	if (baton_ring_open(name, BATON_ROLE_CONSUMER, BATON_BACKEND_KMOD, &c))
		return 3;
	bt_sync_post(s);
	if (_test_park(baton_ring_fd(c), 0, 0, 0))
		return 4;
	bt_sync_post(s);
	return bt_sync_wait(go, 20000) ? 5 : 0;
}

TEST_F_TIMEOUT(dump, parks_counted_and_parked_peer_shown, 60)
{
	struct baton_ring_params p = bt_params(4, 8);
	char name[BATON_NAME_MAX];
	struct baton_ring *pr;
	static struct nlt_obj o;
	struct nlt_err e;
	struct bt_sync s, go;
	uint64_t i;
	pid_t pid;
	int k, found = 0;

	snprintf(name, sizeof(name), "%s0", self->prefix);
	ASSERT_EQ(0, bt_sync_init(&s));
	ASSERT_EQ(0, bt_sync_init(&go));
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_PRODUCER, &pr));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(nd_parked_consumer(name, &s, &go));
	ASSERT_EQ(0, bt_sync_wait(&s, 20000));
	ASSERT_EQ(0, bt_wait_sleeping(pid, 20000));

	ASSERT_EQ(0, nlt_get(&self->nl, BATON_CMD_RING_GET, name, &o, &e));
	EXPECT_EQ(1, o.a.v[BATON_A_RING_PARKED_CONSUMERS]);
	EXPECT_EQ(0, o.a.v[BATON_A_RING_PARKED_PRODUCERS]);
	EXPECT_EQ(1, o.a.v[BATON_A_RING_PARKS_EMPTY]);
	EXPECT_EQ(2, o.npeers);
	for (k = 0; k < o.npeers; k++) {
		const struct nlt_rec *r = &o.peers[k];

		if (r->v[BATON_A_PEER_PID] == (uint64_t)pid) {
			found++;
			EXPECT_EQ(BATON_ROLE_CONSUMER, r->v[BATON_A_PEER_ROLE]);
			EXPECT_TRUE(nlt_has(r, BATON_A_PEER_PARKED));
		} else {
			EXPECT_EQ(getpid(), r->v[BATON_A_PEER_PID]);
			EXPECT_EQ(BATON_ROLE_PRODUCER, r->v[BATON_A_PEER_ROLE]);
			EXPECT_FALSE(nlt_has(r, BATON_A_PEER_PARKED));
		}
	}
	EXPECT_EQ(1, found);

	/* one message wakes it: the push sees its flag and calls WAKE */
	i = 1;
	ASSERT_EQ(0, baton_spsc_push(pr, &i, sizeof(i), BT_NSEC));
	ASSERT_EQ(0, bt_sync_wait(&s, 20000));

	/* fill the ring, then one forced producer park with a deadline */
	for (i = 2; i <= 4; i++)
		ASSERT_EQ(0, baton_spsc_try_push(pr, &i, sizeof(i)));
	EXPECT_EQ(ETIMEDOUT, _test_park(baton_ring_fd(pr), BATON_PARK_DEADLINE,
					4, bt_now_ns() + 50 * BT_MSEC));
	/* the consumer goes: its release is counted */
	ASSERT_EQ(0, bt_sync_post(&go));
	EXPECT_EQ(0, bt_wait_timeout(pid, 20000));
	ASSERT_EQ(0, nlt_get(&self->nl, BATON_CMD_RING_GET, name, &o, &e));
	EXPECT_EQ(1, o.a.v[BATON_A_RING_PARKS_FULL]);
	EXPECT_EQ(1, o.a.v[BATON_A_RING_PARKS_EMPTY]);
	EXPECT_LE(1, o.a.v[BATON_A_RING_WAKES_OF_CONSUMER]);
	EXPECT_EQ(0, o.a.v[BATON_A_RING_PARKED_CONSUMERS]);
	EXPECT_EQ(4, o.a.v[BATON_A_RING_OCCUPANCY]);
	EXPECT_EQ(1, o.a.v[BATON_A_RING_CONSUMER_DEATHS]);
	baton_ring_close(pr);
	baton_ring_unlink(name, BATON_BACKEND_KMOD);
	bt_sync_close(&s);
	bt_sync_close(&go);
}

TEST_HARNESS_MAIN

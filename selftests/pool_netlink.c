// SPDX-License-Identifier: GPL-2.0
/*
 * pool_netlink: what BATON_CMD_POOL_GET and the pool events report,
 * checked against what the test did, over a raw generic netlink socket.
 *
 * Owns: a created pool is dumped once and got by name with the geometry,
 * owner, mode, decay and holder limit it was made with, every class with
 * its buffer size, count and free-queue depth, every holder as a peer
 * (pid, index), and zero counters; allocation moves the free depth by
 * what the holder took (its magazine included); opening and closing
 * holders moves holders and holder_releases. kill -9 of a process that
 * owned buffers: the reclaimed counter and a POOL_RECLAIMED event both
 * say how many, the event with the dead holder's pid and index, and the
 * free queues are full again. A pool with decay_ms 50 whose buffers
 * were touched and freed: the decayed and decayed_bytes counters and the
 * POOL_DECAYED events (added up) agree on every byte. A scribbled head
 * or tail gives a clamped free depth, and nonsense is counted in
 * bad_words once per sample, never trusted. An unlinked pool
 * still open is dumped flagged UNLINKED and gone with its last fd, with
 * its CREATED, UNLINKED and DESTROYED events. A reader without
 * CAP_SYS_ADMIN sees its own pools and those whose mode lets it in, and
 * another user's 0600 pool neither in a dump, nor by name (ENOENT, as a
 * missing one), nor in its events, nor through batonctl.
 */
#include "netlink_util.h"

#include <grp.h>

#define PN_WAIT_MS	20000
#define NOBODY		65534

FIXTURE(pool_stats) {
	int dev;
	struct nlt nl;
	char prefix[32];
	char name[BATON_NAME_MAX];
};

FIXTURE_SETUP(pool_stats)
{
	BT_REQUIRE_DEV();
	self->dev = bt_dev_open();
	ASSERT_LE(0, self->dev);
	ASSERT_EQ(0, nlt_open(&self->nl)) {
		TH_LOG("no generic netlink family \"%s\" with the module loaded",
		       BATON_FAMILY_NAME);
	}
	snprintf(self->prefix, sizeof(self->prefix), "pn.%d.", (int)getpid());
	snprintf(self->name, sizeof(self->name), "%s0", self->prefix);
}

/* The names a test may have made: prefix + 0..3, "root", "open", "own". */
static void pn_unlink_all(int dev, const char *prefix)
{
	static const char *const tails[] = {
		"0", "1", "2", "3", "root", "open", "own", "late",
	};
	char name[BATON_NAME_MAX];
	struct baton_unlink u;
	size_t i;

	for (i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
		snprintf(name, sizeof(name), "%s%s", prefix, tails[i]);
		memset(&u, 0, sizeof(u));
		u.size = sizeof(u);
		snprintf(u.name, sizeof(u.name), "%s", name);
		bt_ioctl(dev, BATON_IOC_POOL_UNLINK, &u);
	}
}

FIXTURE_TEARDOWN(pool_stats)
{
	if (self->dev <= 0)
		return;
	pn_unlink_all(self->dev, self->prefix);
	nlt_close(&self->nl);
	close(self->dev);
}

/* Two classes: 64 buffers of 4 KiB, 8 of 64 KiB. */
static struct baton_pool_params pn_params(uint32_t decay_ms, uint32_t keep,
					  uint32_t mode)
{
	struct baton_pool_params p;

	memset(&p, 0, sizeof(p));
	p.nr_classes = 2;
	p.decay_ms = decay_ms;
	p.keep = keep;
	p.max_holders = 8;
	p.mode = mode;
	p.classes[0].buf_shift = 12;
	p.classes[0].count = 64;
	p.classes[1].buf_shift = 16;
	p.classes[1].count = 8;
	return p;
}

#define PN_DATA_SIZE	(64 * 4096 + 8 * 65536)

/* The class record of index @i in @o, or NULL. */
static const struct nlt_rec *pn_class(const struct nlt_obj *o, uint32_t i)
{
	int k;

	for (k = 0; k < o->nclasses; k++)
		if (nlt_has(&o->classes[k], BATON_A_CLASS_INDEX) &&
		    o->classes[k].v[BATON_A_CLASS_INDEX] == i)
			return &o->classes[k];
	return NULL;
}

static uint64_t pn_free(const struct nlt_obj *o, uint32_t i)
{
	const struct nlt_rec *c = pn_class(o, i);

	return c && nlt_has(c, BATON_A_CLASS_FREE) ?
	       c->v[BATON_A_CLASS_FREE] : ~0ULL;
}

static uint64_t pn_cold(const struct nlt_obj *o, uint32_t i)
{
	const struct nlt_rec *c = pn_class(o, i);

	return c && nlt_has(c, BATON_A_CLASS_COLD) ?
	       c->v[BATON_A_CLASS_COLD] : ~0ULL;
}

/* The peer (holder) of pid @pid in @o, or NULL. */
static const struct nlt_rec *pn_peer(const struct nlt_obj *o, pid_t pid)
{
	int k;

	for (k = 0; k < o->npeers; k++)
		if (o->peers[k].v[BATON_A_PEER_PID] == (uint64_t)pid)
			return &o->peers[k];
	return NULL;
}

static int pn_get(struct nlt *nl, const char *name, struct nlt_obj *o)
{
	struct nlt_err e;

	return nlt_get(nl, BATON_CMD_POOL_GET, name, o, &e);
}

TEST_F_TIMEOUT(pool_stats, dumped_with_geometry_counters_and_holders, 60)
{
	struct baton_pool_params p = pn_params(BATON_POOL_DECAY_MAX_MS, 4,
					       0640);
	static struct nlt_obj objs[4], o;
	struct baton_pool *pool, *second;
	struct baton_pool_info info;
	const struct nlt_rec *a, *c, *peer;
	uint64_t h[20];
	int i;

	EXPECT_EQ(0, nlt_dump(&self->nl, BATON_CMD_POOL_GET, self->prefix,
			      NULL, 0));
	ASSERT_EQ(0, baton_pool_create(self->name, &p, &pool));
	ASSERT_EQ(0, baton_pool_info(pool, &info));

	ASSERT_EQ(1, nlt_dump(&self->nl, BATON_CMD_POOL_GET, self->prefix,
			      objs, 4));
	a = &objs[0].a;
	EXPECT_STREQ(self->name, a->name);
	EXPECT_EQ(getuid(), a->v[BATON_A_POOL_UID]);
	EXPECT_EQ(getgid(), a->v[BATON_A_POOL_GID]);
	EXPECT_EQ(0640, a->v[BATON_A_POOL_MODE]);
	EXPECT_FALSE(nlt_has(a, BATON_A_POOL_UNLINKED));
	EXPECT_EQ(2, a->v[BATON_A_POOL_NR_CLASSES]);
	EXPECT_EQ(BATON_POOL_DECAY_MAX_MS, a->v[BATON_A_POOL_DECAY_MS]);
	EXPECT_EQ(4, a->v[BATON_A_POOL_KEEP]);
	EXPECT_EQ(8, a->v[BATON_A_POOL_MAX_HOLDERS]);
	EXPECT_EQ(PN_DATA_SIZE, a->v[BATON_A_POOL_DATA_SIZE]);
	EXPECT_EQ(1, a->v[BATON_A_POOL_HOLDERS]);
	/* every counter is there, and zero on a new pool */
	for (i = BATON_A_POOL_HOLDER_RELEASES; i <= BATON_A_POOL_BAD_WORDS;
	     i++) {
		EXPECT_TRUE(nlt_has(a, i)) TH_LOG("attribute %d missing", i);
		EXPECT_EQ(0, a->v[i]) TH_LOG("attribute %d", i);
	}
	ASSERT_EQ(2, objs[0].nclasses);
	c = pn_class(&objs[0], 0);
	ASSERT_NE(NULL, c);
	EXPECT_EQ(4096, c->v[BATON_A_CLASS_BUF_SIZE]);
	EXPECT_EQ(64, c->v[BATON_A_CLASS_COUNT]);
	EXPECT_EQ(64, c->v[BATON_A_CLASS_FREE]);
	EXPECT_EQ(0, pn_cold(&objs[0], 0));
	c = pn_class(&objs[0], 1);
	ASSERT_NE(NULL, c);
	EXPECT_EQ(65536, c->v[BATON_A_CLASS_BUF_SIZE]);
	EXPECT_EQ(8, c->v[BATON_A_CLASS_COUNT]);
	EXPECT_EQ(8, c->v[BATON_A_CLASS_FREE]);
	/* the creator's handle is the one holder */
	ASSERT_EQ(1, objs[0].npeers);
	EXPECT_EQ(getpid(), objs[0].peers[0].v[BATON_A_PEER_PID]);
	EXPECT_EQ(info.holder, objs[0].peers[0].v[BATON_A_PEER_INDEX]);
	EXPECT_FALSE(nlt_has(&objs[0].peers[0], BATON_A_PEER_ROLE));
	EXPECT_FALSE(nlt_has(&objs[0].peers[0], BATON_A_PEER_PENDING));

	/* 20 buffers taken: the queue lost them and the magazine's rest */
	for (i = 0; i < 20; i++)
		ASSERT_EQ(0, baton_pool_alloc(pool, 4096, &h[i]));
	ASSERT_EQ(0, baton_pool_info(pool, &info));
	ASSERT_EQ(0, pn_get(&self->nl, self->name, &o));
	EXPECT_STREQ(self->name, o.a.name);
	EXPECT_EQ(64 - 20 - info.classes[0].cached, pn_free(&o, 0));
	EXPECT_EQ(info.classes[0].free, pn_free(&o, 0));
	EXPECT_EQ(8, pn_free(&o, 1));

	/* a second holder, then its release */
	ASSERT_EQ(0, baton_pool_open(self->name, &second));
	ASSERT_EQ(0, pn_get(&self->nl, self->name, &o));
	EXPECT_EQ(2, o.a.v[BATON_A_POOL_HOLDERS]);
	EXPECT_EQ(2, o.npeers);
	baton_pool_close(second);
	ASSERT_EQ(0, pn_get(&self->nl, self->name, &o));
	EXPECT_EQ(1, o.a.v[BATON_A_POOL_HOLDERS]);
	EXPECT_EQ(1, o.a.v[BATON_A_POOL_HOLDER_RELEASES]);
	EXPECT_EQ(0, o.a.v[BATON_A_POOL_RECLAIMED]);
	peer = pn_peer(&o, getpid());
	ASSERT_NE(NULL, peer);
	EXPECT_EQ(info.holder, peer->v[BATON_A_PEER_INDEX]);

	/* given back: the queue is whole again once the handle closes */
	for (i = 0; i < 20; i++)
		ASSERT_EQ(0, baton_pool_free(pool, h[i]));
	baton_pool_close(pool);
	ASSERT_EQ(0, pn_get(&self->nl, self->name, &o));
	EXPECT_EQ(0, o.a.v[BATON_A_POOL_HOLDERS]);
	EXPECT_EQ(2, o.a.v[BATON_A_POOL_HOLDER_RELEASES]);
	EXPECT_EQ(0, o.npeers);
	EXPECT_EQ(64, pn_free(&o, 0));
	EXPECT_EQ(0, o.a.v[BATON_A_POOL_BAD_WORDS]);
	ASSERT_EQ(0, baton_pool_unlink(self->name));
	EXPECT_EQ(0, nlt_dump(&self->nl, BATON_CMD_POOL_GET, self->prefix,
			      NULL, 0));
	EXPECT_EQ(-ENOENT, pn_get(&self->nl, self->name, &o));
}

/* Dump with unlinked pools too; how many of this test's. */
static int pn_dump_all(struct nlt *nl, const char *prefix, struct nlt_obj *o)
{
	struct nlt_dump_ctx c = { BATON_CMD_POOL_GET, prefix, o, 1, 0, 0,
				  true };
	struct nlt_msg m;
	int ret;

	nlt_msg_init(&m, nl->family, NLM_F_DUMP, BATON_CMD_POOL_GET);
	ret = nlt_send(nl, &m);
	if (!ret)
		ret = nlt_collect(nl, NULL, nlt_dump_one, &c);
	return ret ? ret : c.n;
}

TEST_F_TIMEOUT(pool_stats, unlinked_pool_kept_open_is_flagged, 60)
{
	struct baton_pool_params p = pn_params(0, 0, 0600);
	static struct nlt_obj o, ev;
	struct baton_pool *pool;
	struct nlt w;
	struct nlt_err e;

	ASSERT_EQ(0, nlt_open(&w));
	ASSERT_EQ(0, nlt_watch(&w, &e));
	ASSERT_EQ(0, baton_pool_create(self->name, &p, &pool));
	EXPECT_EQ(0, nlt_wait_event(&w, BATON_EVENT_POOL_CREATED, self->name,
				    PN_WAIT_MS, &ev, NULL, NULL));
	ASSERT_EQ(0, baton_pool_unlink(self->name));
	EXPECT_EQ(0, nlt_wait_event(&w, BATON_EVENT_POOL_UNLINKED, self->name,
				    PN_WAIT_MS, &ev, NULL, NULL));
	EXPECT_EQ(-ENOENT, pn_get(&self->nl, self->name, &o));
	EXPECT_EQ(0, nlt_dump(&self->nl, BATON_CMD_POOL_GET, self->prefix,
			      NULL, 0));
	ASSERT_EQ(1, pn_dump_all(&self->nl, self->prefix, &o));
	EXPECT_TRUE(nlt_has(&o.a, BATON_A_POOL_UNLINKED));
	EXPECT_EQ(1, o.a.v[BATON_A_POOL_HOLDERS]);
	baton_pool_close(pool);
	EXPECT_EQ(0, nlt_wait_event(&w, BATON_EVENT_POOL_DESTROYED,
				    self->name, PN_WAIT_MS, &ev, NULL, NULL));
	EXPECT_EQ(0, pn_dump_all(&self->nl, self->prefix, &o));
	nlt_close(&w);
}

/* What a holder child tells the test before it is killed. */
struct pn_owned {
	uint32_t holder;
	uint32_t owned;			/* buffers its handle owns */
};

/*
 * Child: open the pool, take 20 small and 3 large buffers, write into
 * them, tell the parent its holder index and how many buffers it owns
 * (those handed out and those its magazines keep), then wait to be
 * killed.
 */
static int pn_holder(const char *name, int out)
{
	struct baton_pool_info info;
	struct baton_pool *pool;
	struct pn_owned msg;
	uint64_t h;
	int i;

	if (baton_pool_open(name, &pool))
		return 3;
	for (i = 0; i < 23; i++) {
		if (baton_pool_alloc(pool, i < 20 ? 4096 : 65536, &h))
			return 4;
		memset(baton_pool_ptr(pool, h), i, 4096);
	}
	if (baton_pool_info(pool, &info))
		return 5;
	msg.holder = info.holder;
	msg.owned = 23 + (uint32_t)(info.classes[0].cached +
				    info.classes[1].cached);
	if (write(out, &msg, sizeof(msg)) != sizeof(msg))
		return 6;
	for (;;)
		pause();
}

TEST_F_TIMEOUT(pool_stats, kill9_of_a_holder_counted_and_reported, 60)
{
	struct baton_pool_params p = pn_params(0, 0, 0600);
	static struct nlt_obj o, ev;
	struct baton_pool *pool;
	struct pn_owned got;
	const struct nlt_rec *peer;
	struct nlt w;
	struct nlt_err e;
	int fds[2];
	pid_t pid;

	ASSERT_EQ(0, nlt_open(&w));
	ASSERT_EQ(0, nlt_watch(&w, &e));
	ASSERT_EQ(0, baton_pool_create(self->name, &p, &pool));
	ASSERT_EQ(0, pipe2(fds, O_CLOEXEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(pn_holder(self->name, fds[1]));
	close(fds[1]);
	ASSERT_EQ(sizeof(got), read(fds[0], &got, sizeof(got)));
	close(fds[0]);
	/* more than it took: a magazine refill takes several at once */
	EXPECT_LE(23, got.owned);

	ASSERT_EQ(0, pn_get(&self->nl, self->name, &o));
	EXPECT_EQ(2, o.a.v[BATON_A_POOL_HOLDERS]);
	peer = pn_peer(&o, pid);
	ASSERT_NE(NULL, peer);
	EXPECT_EQ(got.holder, peer->v[BATON_A_PEER_INDEX]);
	EXPECT_EQ(64 + 8 - got.owned, pn_free(&o, 0) + pn_free(&o, 1));

	ASSERT_EQ(0, kill(pid, SIGKILL));
	EXPECT_EQ(128 + SIGKILL, bt_wait_timeout(pid, PN_WAIT_MS));
	ASSERT_EQ(0, nlt_wait_event(&w, BATON_EVENT_POOL_RECLAIMED,
				    self->name, PN_WAIT_MS, &ev, NULL, NULL));
	EXPECT_EQ(got.owned, ev.a.v[BATON_A_EVENT_COUNT]);
	EXPECT_EQ(pid, ev.a.v[BATON_A_EVENT_PID]);
	EXPECT_EQ(got.holder, ev.a.v[BATON_A_EVENT_INDEX]);

	/* the counter says the same, and every buffer is free again */
	ASSERT_EQ(0, pn_get(&self->nl, self->name, &o));
	EXPECT_EQ(got.owned, o.a.v[BATON_A_POOL_RECLAIMED]);
	EXPECT_EQ(1, o.a.v[BATON_A_POOL_HOLDER_RELEASES]);
	EXPECT_EQ(1, o.a.v[BATON_A_POOL_HOLDERS]);
	EXPECT_EQ(NULL, pn_peer(&o, pid));
	EXPECT_EQ(64, pn_free(&o, 0));
	EXPECT_EQ(8, pn_free(&o, 1));
	EXPECT_EQ(0, o.a.v[BATON_A_POOL_BAD_WORDS]);
	baton_pool_close(pool);
	nlt_close(&w);
}

TEST_F_TIMEOUT(pool_stats, decay_counted_and_reported_in_bytes, 90)
{
	struct baton_pool_params p = pn_params(50, 0, 0600);
	struct baton_pool *pool, *burst;
	static struct nlt_obj o, ev;
	uint64_t h[64], bytes = 0, events = 0;
	int64_t end;
	struct nlt w;
	struct nlt_err e;
	int i;

	ASSERT_EQ(0, nlt_open(&w));
	ASSERT_EQ(0, nlt_watch(&w, &e));
	ASSERT_EQ(0, baton_pool_create(self->name, &p, &pool));
	/* a burst of every small buffer, touched, freed; its holder goes */
	ASSERT_EQ(0, baton_pool_open(self->name, &burst));
	for (i = 0; i < 64; i++) {
		ASSERT_EQ(0, baton_pool_alloc(burst, 4096, &h[i]));
		memset(baton_pool_ptr(burst, h[i]), 0x5a, 4096);
	}
	for (i = 0; i < 64; i++)
		ASSERT_EQ(0, baton_pool_free(burst, h[i]));
	baton_pool_close(burst);

	/* the timer gives the pages back in one or more passes: add up */
	end = bt_now_ns() + PN_WAIT_MS * BT_MSEC;
	while (bytes < 64 * 4096 && bt_now_ns() < end) {
		int64_t left = (end - bt_now_ns()) / BT_MSEC;

		if (nlt_wait_event(&w, BATON_EVENT_POOL_DECAYED, self->name,
				   left > 0 ? left : 1, &ev, NULL, NULL))
			break;
		events++;
		EXPECT_LT(0, ev.a.v[BATON_A_EVENT_COUNT]);
		EXPECT_EQ(0, ev.a.v[BATON_A_EVENT_COUNT] % 4096);
		bytes += ev.a.v[BATON_A_EVENT_COUNT];
	}
	ksft_print_msg("%llu bytes decayed in %llu events\n",
		       (unsigned long long)bytes, (unsigned long long)events);
	EXPECT_EQ(64 * 4096, bytes);
	ASSERT_EQ(0, pn_get(&self->nl, self->name, &o));
	EXPECT_EQ(64, o.a.v[BATON_A_POOL_DECAYED]);
	EXPECT_EQ(64 * 4096, o.a.v[BATON_A_POOL_DECAYED_BYTES]);
	EXPECT_LE(1, o.a.v[BATON_A_POOL_DECAY_TICKS]);
	/*
	 * Decayed buffers are COLD, their pages gone; their entries stay on
	 * the queue (stale) until a taker passes them.
	 */
	EXPECT_EQ(64, pn_cold(&o, 0));
	EXPECT_EQ(64, pn_free(&o, 0));
	baton_pool_close(pool);
	nlt_close(&w);
}

/* ---- the free depth of a scribbled queue ---- */

/*
 * The class's head and tail are words every holder may write. A sample
 * with the tail behind the head, or more than the queue's length ahead,
 * is nonsense: reported as 0 free and counted in bad_words, once per
 * sample; a tail a little past the count (a legitimate reading while
 * frees are in progress) is clamped to the count, not counted. Put back,
 * the depth is right again.
 */
TEST_F_TIMEOUT(pool_stats, scribbled_head_and_tail_clamped_and_counted, 60)
{
	struct baton_pool_create k;
	const struct baton_pool_hdr *hdr;
	static struct nlt_obj o;
	uint64_t *head, *tail, h0, t0, qcap;
	uint8_t *ctl;

	bt_pool_create_init(&k, self->name, 12, 16, 2);
	ASSERT_EQ(0, bt_ioctl(self->dev, BATON_IOC_POOL_CREATE, &k));
	hdr = mmap(NULL, 4096, PROT_READ, MAP_SHARED, k.out_fd,
		   BATON_POOL_HDR_MMAP);
	ASSERT_NE(MAP_FAILED, hdr);
	ctl = mmap(NULL, hdr->ctl_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   k.out_fd, (off_t)hdr->ctl_mmap);
	ASSERT_NE(MAP_FAILED, ctl);
	head = (uint64_t *)(ctl + hdr->classes[0].ctl_off + BATON_POOL_Q_HEAD);
	tail = (uint64_t *)(ctl + hdr->classes[0].ctl_off + BATON_POOL_Q_TAIL);
	qcap = hdr->classes[0].qcap;
	h0 = *head;
	t0 = *tail;
	ASSERT_EQ(16, t0 - h0);

	ASSERT_EQ(0, pn_get(&self->nl, self->name, &o));
	EXPECT_EQ(16, pn_free(&o, 0));
	EXPECT_EQ(0, o.a.v[BATON_A_POOL_BAD_WORDS]);

	/* the tail behind the head: 0 free, one bad word per sample */
	*head = t0 + 5;
	ASSERT_EQ(0, pn_get(&self->nl, self->name, &o));
	EXPECT_EQ(0, pn_free(&o, 0));
	EXPECT_EQ(1, o.a.v[BATON_A_POOL_BAD_WORDS]);
	ASSERT_EQ(0, pn_get(&self->nl, self->name, &o));
	EXPECT_EQ(2, o.a.v[BATON_A_POOL_BAD_WORDS]);

	/* more than a lap ahead */
	*head = h0;
	*tail = h0 + qcap + 1;
	ASSERT_EQ(0, pn_get(&self->nl, self->name, &o));
	EXPECT_EQ(0, pn_free(&o, 0));
	EXPECT_EQ(3, o.a.v[BATON_A_POOL_BAD_WORDS]);

	/* within a lap but past the count: clamped, not counted */
	*tail = h0 + 16 + 3;
	ASSERT_EQ(0, pn_get(&self->nl, self->name, &o));
	EXPECT_EQ(16, pn_free(&o, 0));
	EXPECT_EQ(3, o.a.v[BATON_A_POOL_BAD_WORDS]);

	/* put back: right again; the dump samples the same way */
	*tail = t0;
	ASSERT_EQ(0, pn_get(&self->nl, self->name, &o));
	EXPECT_EQ(16, pn_free(&o, 0));
	EXPECT_EQ(3, o.a.v[BATON_A_POOL_BAD_WORDS]);
	*head = t0 + 1;
	ASSERT_EQ(1, nlt_dump(&self->nl, BATON_CMD_POOL_GET, self->prefix,
			      &o, 1));
	EXPECT_EQ(0, pn_free(&o, 0));
	EXPECT_EQ(4, o.a.v[BATON_A_POOL_BAD_WORDS]);
	*head = h0;

	munmap(ctl, hdr->ctl_size);
	munmap((void *)hdr, 4096);
	close(k.out_fd);
}

/* ---- who sees what ---- */

/* Child exit codes: which step failed. */
enum {
	PN_OK = 0,
	PN_SETUP = 10,
	PN_CAPS,
	PN_CREATE,
	PN_DUMP,
	PN_GET_OTHER,
	PN_GET_OWN,
	PN_GET_OPEN,
	PN_WATCH,
	PN_EVENT_OWN,
	PN_EVENT_LEAK,
	PN_BATONCTL_LIST,
	PN_BATONCTL_SHOW,
	PN_OPENED,		/* opened a pool it should not */
	PN_SHOWN,		/* saw a pool it cannot open */
};

/* A pool by raw ioctl on @dev (opened before a drop); its fd or -errno. */
static int pn_raw_create(int dev, const char *name, uint32_t mode)
{
	struct baton_pool_create k;

	memset(&k, 0, sizeof(k));
	k.size = sizeof(k);
	k.mode = mode;
	k.nr_classes = 1;
	k.max_holders = 2;
	k.classes[0].buf_shift = 12;
	k.classes[0].count = 4;
	snprintf(k.name, sizeof(k.name), "%s", name);
	return ioctl(dev, BATON_IOC_POOL_CREATE, &k) ? -errno : k.out_fd;
}

/* Open /dev/baton as root, then become nobody with no capabilities. */
static int pn_drop(int *dev)
{
	*dev = bt_dev_open();
	if (*dev < 0 || setgroups(0, NULL) ||
	    setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		return PN_SETUP;
	if (setresuid(0, 0, 0) == 0)
		return PN_CAPS;
	return PN_OK;
}

static bool pn_in(const char *name, const struct nlt_obj *objs, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(objs[i].a.name, name))
			return true;
	return false;
}

static bool pn_quoted(const char *s, const char *name)
{
	char q[BATON_NAME_MAX + 2];

	snprintf(q, sizeof(q), "\"%s\"", name);
	return s && strstr(s, q);
}

struct pn_names {
	char root[BATON_NAME_MAX];	/* root's, 0600 */
	char open[BATON_NAME_MAX];	/* root's, 0666 */
	char own[BATON_NAME_MAX];	/* nobody's, 0600 */
	char late[BATON_NAME_MAX];	/* root's, 0600, made while watched */
	const char *prefix;
};

static int pn_batonctl_as_nobody(const struct pn_names *nm)
{
	char *list[] = { "batonctl", "-j", "list", NULL };
	char *show[] = { "batonctl", "pool", (char *)nm->root, NULL };
	char *o = NULL, *e = NULL;
	int st, ok;

	st = nlt_batonctl(list, &o, &e);
	ok = st == 0 && pn_quoted(o, nm->own) && pn_quoted(o, nm->open) &&
	     !pn_quoted(o, nm->root);
	free(o);
	free(e);
	if (!ok)
		return PN_BATONCTL_LIST;
	st = nlt_batonctl(show, &o, &e);
	ok = st == 1 && e && strstr(e, "No such file or directory");
	free(o);
	free(e);
	return ok ? PN_OK : PN_BATONCTL_SHOW;
}

struct pn_leak {
	const char *prefix;
	const char *own;
	int leaks;
};

static void pn_other_event(const struct nlt_obj *ev, void *arg)
{
	struct pn_leak *l = arg;

	if (!strncmp(ev->a.name, l->prefix, strlen(l->prefix)) &&
	    strcmp(ev->a.name, l->own))
		l->leaks++;
}

/*
 * As nobody, on /dev/baton fd @dev: watch on @nl, let root act (post @up,
 * wait @down), then make its own 0600 pool. Events come in order, so
 * once its own pool's CREATED arrives, any event of root's pools would
 * have come before it: none may have. The own pool's fd in *@fd.
 */
static int pn_watch_root_then_own(const struct pn_names *nm, int dev,
				  struct nlt *nl, int *fd, struct bt_sync *up,
				  struct bt_sync *down)
{
	struct pn_leak leak = { nm->prefix, nm->own, 0 };
	static struct nlt_obj ev;
	struct nlt_err e;

	if (nlt_open(nl) || nlt_watch(nl, &e))
		return PN_WATCH;
	bt_sync_post(up);
	if (bt_sync_wait(down, PN_WAIT_MS))
		return PN_SETUP;
	*fd = pn_raw_create(dev, nm->own, 0600);
	if (*fd < 0)
		return PN_CREATE;
	if (nlt_wait_event(nl, BATON_EVENT_POOL_CREATED, nm->own, PN_WAIT_MS,
			   &ev, pn_other_event, &leak))
		return PN_EVENT_OWN;
	return leak.leaks ? PN_EVENT_LEAK : PN_OK;
}

/*
 * Child, as nobody: watch while root makes, uses and removes a 0600
 * pool, with no event of it reaching us (pn_watch_root_then_own()); then
 * dumps and lookups by name, then batonctl.
 */
static int pn_as_nobody(const struct pn_names *nm, struct bt_sync *up,
			struct bt_sync *down)
{
	static struct nlt_obj objs[8], o;
	struct nlt_err e;
	struct nlt nl;
	int dev, fd, n, ret = pn_drop(&dev);

	if (ret)
		return ret;
	ret = pn_watch_root_then_own(nm, dev, &nl, &fd, up, down);
	if (ret)
		return ret;
	/* its own and root's 0666 pool, not root's 0600 one */
	n = nlt_dump(&nl, BATON_CMD_POOL_GET, nm->prefix, objs, 8);
	if (n != 2 || !pn_in(nm->own, objs, n) || !pn_in(nm->open, objs, n))
		return PN_DUMP;
	if (nlt_get(&nl, BATON_CMD_POOL_GET, nm->root, &o, &e) != -ENOENT)
		return PN_GET_OTHER;
	if (nlt_get(&nl, BATON_CMD_POOL_GET, nm->own, &o, &e) ||
	    o.a.v[BATON_A_POOL_UID] != NOBODY || o.nclasses != 1 ||
	    o.npeers != 1 || o.peers[0].v[BATON_A_PEER_PID] != (uint64_t)getpid())
		return PN_GET_OWN;
	if (nlt_get(&nl, BATON_CMD_POOL_GET, nm->open, &o, &e) ||
	    o.a.v[BATON_A_POOL_UID] != 0)
		return PN_GET_OPEN;
	nlt_close(&nl);
	ret = pn_batonctl_as_nobody(nm);
	close(fd);
	return ret;
}

TEST_F_TIMEOUT(pool_stats, other_users_pool_invisible_to_nobody, 90)
{
	struct baton_pool_params p = pn_params(0, 0, 0600);
	struct baton_pool *root, *open, *late;
	static struct nlt_obj objs[8];
	struct bt_sync up, down;
	struct pn_names nm;
	pid_t pid;

	if (getuid() != 0)
		SKIP(return, "needs root to drop to another user");
	snprintf(nm.root, sizeof(nm.root), "%sroot", self->prefix);
	snprintf(nm.open, sizeof(nm.open), "%sopen", self->prefix);
	snprintf(nm.own, sizeof(nm.own), "%sown", self->prefix);
	snprintf(nm.late, sizeof(nm.late), "%slate", self->prefix);
	nm.prefix = self->prefix;
	ASSERT_EQ(0, baton_pool_create(nm.root, &p, &root));
	p.mode = 0666;
	ASSERT_EQ(0, baton_pool_create(nm.open, &p, &open));
	p.mode = 0600;
	ASSERT_EQ(0, bt_sync_init(&up));
	ASSERT_EQ(0, bt_sync_init(&down));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(pn_as_nobody(&nm, &up, &down));
	ASSERT_EQ(0, bt_sync_wait(&up, PN_WAIT_MS));
	/* root's 0600 pool: created, unlinked, destroyed while watched */
	ASSERT_EQ(0, baton_pool_create(nm.late, &p, &late));
	ASSERT_EQ(0, baton_pool_unlink(nm.late));
	baton_pool_close(late);
	ASSERT_EQ(0, bt_sync_post(&down));
	EXPECT_EQ(PN_OK, bt_wait_timeout(pid, 3 * PN_WAIT_MS));

	/* root sees all three of this namespace's */
	EXPECT_EQ(3, nlt_dump(&self->nl, BATON_CMD_POOL_GET, self->prefix,
			      objs, 8));
	baton_pool_close(root);
	baton_pool_close(open);
	bt_sync_close(&up);
	bt_sync_close(&down);
}

/* A pool by raw ioctl on @dev; its fd or -errno. */
static int pn_raw_open(int dev, const char *name)
{
	struct baton_pool_open k;

	memset(&k, 0, sizeof(k));
	k.size = sizeof(k);
	snprintf(k.name, sizeof(k.name), "%s", name);
	return ioctl(dev, BATON_IOC_POOL_OPEN, &k) ? -errno : k.out_fd;
}

/*
 * Child, as nobody: root's 0644 pool grants it read but not write, and a
 * holder needs both, so the pool is as hidden from it as a 0600 one:
 * EACCES on open, ENOENT by name, absent from the dump, and no event of
 * root's use of it (a holder's death, here) reaches its watcher.
 */
static int pn_read_only_as_nobody(const struct pn_names *nm,
				  struct bt_sync *up, struct bt_sync *down)
{
	static struct nlt_obj objs[8], o;
	struct nlt_err e;
	struct nlt nl;
	int dev, fd, ret = pn_drop(&dev);

	if (ret)
		return ret;
	fd = pn_raw_open(dev, nm->root);
	if (fd != -EACCES)
		return PN_OPENED;
	ret = pn_watch_root_then_own(nm, dev, &nl, &fd, up, down);
	if (ret)
		return ret;
	if (nlt_dump(&nl, BATON_CMD_POOL_GET, nm->prefix, objs, 8) != 1 ||
	    !pn_in(nm->own, objs, 1))
		return PN_SHOWN;
	if (nlt_get(&nl, BATON_CMD_POOL_GET, nm->root, &o, &e) != -ENOENT)
		return PN_SHOWN;
	nlt_close(&nl);
	close(fd);
	return PN_OK;
}

TEST_F_TIMEOUT(pool_stats, a_pool_nobody_may_only_read_stays_hidden, 90)
{
	struct baton_pool_params p = pn_params(0, 0, 0644);
	struct baton_pool *root, *holder;
	struct bt_sync up, down;
	struct pn_names nm;
	pid_t pid, dying;

	if (getuid() != 0)
		SKIP(return, "needs root to drop to another user");
	snprintf(nm.root, sizeof(nm.root), "%sroot", self->prefix);
	snprintf(nm.own, sizeof(nm.own), "%sown", self->prefix);
	nm.prefix = self->prefix;
	ASSERT_EQ(0, baton_pool_create(nm.root, &p, &root));
	ASSERT_EQ(0, bt_sync_init(&up));
	ASSERT_EQ(0, bt_sync_init(&down));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(pn_read_only_as_nobody(&nm, &up, &down));
	ASSERT_EQ(0, bt_sync_wait(&up, PN_WAIT_MS));
	/* a holder of root's pool dies holding a buffer: POOL_RECLAIMED */
	dying = fork();
	ASSERT_LE(0, dying);
	if (dying == 0) {
		uint64_t h;

		if (baton_pool_open(nm.root, &holder) ||
		    baton_pool_alloc(holder, 4096, &h))
			_exit(1);
		raise(SIGKILL);
	}
	EXPECT_EQ(128 + SIGKILL, bt_wait_timeout(dying, PN_WAIT_MS));
	ASSERT_EQ(0, bt_sync_post(&down));
	EXPECT_EQ(PN_OK, bt_wait_timeout(pid, 3 * PN_WAIT_MS));
	baton_pool_close(root);
	bt_sync_close(&up);
	bt_sync_close(&down);
}

TEST_HARNESS_MAIN

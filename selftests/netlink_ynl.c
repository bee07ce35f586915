// SPDX-License-Identifier: GPL-2.0
/*
 * selftests/netlink_ynl.c: the "baton" generic netlink family through its
 * spec alone (issue 15, item 4).
 *
 * The client code here is generated: ynl-gen-c.py --mode user turns
 * Documentation/netlink/specs/baton.yaml into build/ynl/gen/baton-user.[ch]
 * (.ci/ynl.sh user), linked statically with the kernel's YNL library
 * (tools/net/ynl/lib of linux-source-6.12); selftests/Makefile builds it.
 * No baton header describes the messages to this program: if the spec and
 * the module disagree on an attribute's number, type or nesting, the
 * generated parser misreads or rejects what the real module sends, and
 * these tests fail. They dump rings and domains, get one by name, dump
 * and get a pool with its nested classes and holders, and receive the
 * events of a watching socket.
 */
#include "common.h"

#include <sched.h>
#include <sys/prctl.h>

/* ynl_dump_foreach() uses the GNU spelling, absent from -std=c11 */
#define typeof __typeof__
#include <ynl.h>
#include "baton-user.h"

FIXTURE(ynl)
{
	int dev;
	struct ynl_sock *ys;
	struct ynl_error yerr;
	char ring[BATON_NAME_MAX];
	char domain[BATON_NAME_MAX];
};

FIXTURE_SETUP(ynl)
{
	struct baton_ring_create c;
	struct baton_epoch_create e;

	BT_REQUIRE_DEV();
	self->dev = bt_dev_open();
	ASSERT_LE(0, self->dev);
	self->ys = ynl_sock_create(&ynl_baton_family, &self->yerr);
	ASSERT_NE(NULL, self->ys) TH_LOG("ynl_sock_create: %s", self->yerr.msg);
	bt_make_name(self->ring, sizeof(self->ring), "ynl.ring");
	bt_make_name(self->domain, sizeof(self->domain), "ynl.dom");
	ASSERT_EQ(0, _test_ring_create(self->dev, self->ring,
				       BATON_ROLE_PRODUCER, 128, 32, 0600, &c));
	close(c.out_fd);
	ASSERT_EQ(0, _test_epoch_create(self->dev, self->domain, 8, 16, 0600,
					&e));
	close(e.out_fd);
}

FIXTURE_TEARDOWN(ynl)
{
	_test_unlink(self->dev, self->ring);
	_test_epoch_unlink(self->dev, self->domain);
	if (self->ys)
		ynl_sock_destroy(self->ys);
	close(self->dev);
}

TEST_F(ynl, dump_rings_and_domains)
{
	struct baton_epoch_get_req_dump *dreq = baton_epoch_get_req_dump_alloc();
	struct baton_ring_get_req_dump *rreq = baton_ring_get_req_dump_alloc();
	struct baton_epoch_get_list *domains;
	struct baton_ring_get_list *rings;
	int found = 0;

	ASSERT_NE(NULL, rreq);
	ASSERT_NE(NULL, dreq);
	rings = baton_ring_get_dump(self->ys, rreq);
	baton_ring_get_req_dump_free(rreq);
	ASSERT_NE(NULL, rings) TH_LOG("ring dump: %s", self->ys->err.msg);
	ynl_dump_foreach(rings, r) {
		if (!r->_present.name_len || strcmp(r->name, self->ring))
			continue;
		found++;
		ASSERT_TRUE(!!r->_present.slot_count);
		EXPECT_EQ(128, r->slot_count);
		ASSERT_TRUE(!!r->_present.slot_size);
		EXPECT_EQ(32, r->slot_size);
		ASSERT_TRUE(!!r->_present.kind);
		EXPECT_EQ(BATON_RING_SPSC, r->kind);
		ASSERT_TRUE(!!r->_present.mode);
		EXPECT_EQ(0600, r->mode);
	}
	baton_ring_get_list_free(rings);
	EXPECT_EQ(1, found);

	found = 0;
	domains = baton_epoch_get_dump(self->ys, dreq);
	baton_epoch_get_req_dump_free(dreq);
	ASSERT_NE(NULL, domains) TH_LOG("epoch dump: %s", self->ys->err.msg);
	ynl_dump_foreach(domains, d) {
		if (!d->_present.name_len || strcmp(d->name, self->domain))
			continue;
		found++;
		ASSERT_TRUE(!!d->_present.max_participants);
		EXPECT_EQ(8, d->max_participants);
		ASSERT_TRUE(!!d->_present.queue_len);
		EXPECT_EQ(16, d->queue_len);
	}
	baton_epoch_get_list_free(domains);
	EXPECT_EQ(1, found);
}

TEST_F(ynl, get_one_ring_by_name)
{
	struct baton_ring_get_req *req = baton_ring_get_req_alloc();
	struct baton_ring_get_rsp *rsp;

	ASSERT_NE(NULL, req);
	baton_ring_get_req_set_name(req, self->ring);
	rsp = baton_ring_get(self->ys, req);
	baton_ring_get_req_free(req);
	ASSERT_NE(NULL, rsp) TH_LOG("ring get: %s", self->ys->err.msg);
	ASSERT_TRUE(!!rsp->_present.name_len);
	EXPECT_STREQ(self->ring, rsp->name);
	EXPECT_EQ(128, rsp->slot_count);
	baton_ring_get_rsp_free(rsp);

	/* An unknown name: the module's ENOENT, through the library. */
	req = baton_ring_get_req_alloc();
	ASSERT_NE(NULL, req);
	baton_ring_get_req_set_name(req, "st.ynl.nosuchring");
	rsp = baton_ring_get(self->ys, req);
	baton_ring_get_req_free(req);
	EXPECT_EQ(NULL, rsp);
	EXPECT_EQ(ENOENT, errno);
}

/* One pool's classes and holder, as the generated parser read them. */
static void ynl_check_pool(struct __test_metadata *_metadata,
			   const struct baton_pool_get_rsp *p)
{
	ASSERT_TRUE(!!p->_present.nr_classes);
	EXPECT_EQ(2, p->nr_classes);
	ASSERT_TRUE(!!p->_present.data_size);
	EXPECT_EQ(16 * 4096 + 2 * 1048576, p->data_size);
	ASSERT_TRUE(!!p->_present.holders);
	EXPECT_EQ(1, p->holders);
	ASSERT_TRUE(!!p->_present.classes);
	ASSERT_EQ(2, p->classes.n_class);
	EXPECT_EQ(0, p->classes.class[0].index);
	EXPECT_EQ(4096, p->classes.class[0].buf_size);
	EXPECT_EQ(16, p->classes.class[0].count);
	EXPECT_EQ(16, p->classes.class[0].free);
	EXPECT_EQ(1, p->classes.class[1].index);
	EXPECT_EQ(1048576, p->classes.class[1].buf_size);
	EXPECT_EQ(2, p->classes.class[1].count);
	ASSERT_TRUE(!!p->_present.peers);
	ASSERT_EQ(1, p->peers.n_peer);
	EXPECT_EQ(getpid(), p->peers.peer[0].pid);
	ASSERT_TRUE(!!p->_present.bad_words);
	EXPECT_EQ(0, p->bad_words);
}

TEST_F(ynl, pool_dump_and_get)
{
	struct baton_pool_get_req_dump *dreq = baton_pool_get_req_dump_alloc();
	struct baton_pool_get_req *req = baton_pool_get_req_alloc();
	struct baton_pool_params p;
	struct baton_pool_get_list *pools;
	struct baton_pool_get_rsp *rsp;
	struct baton_pool *pool;
	char name[BATON_NAME_MAX];
	int found = 0;

	ASSERT_NE(NULL, dreq);
	ASSERT_NE(NULL, req);
	memset(&p, 0, sizeof(p));
	p.nr_classes = 2;
	p.max_holders = 2;
	p.classes[0].buf_shift = 12;
	p.classes[0].count = 16;
	p.classes[1].buf_shift = 20;
	p.classes[1].count = 2;
	bt_make_name(name, sizeof(name), "ynl.pool");
	ASSERT_EQ(0, baton_pool_create(name, &p, &pool));

	pools = baton_pool_get_dump(self->ys, dreq);
	baton_pool_get_req_dump_free(dreq);
	ASSERT_NE(NULL, pools) TH_LOG("pool dump: %s", self->ys->err.msg);
	ynl_dump_foreach(pools, d) {
		if (!d->_present.name_len || strcmp(d->name, name))
			continue;
		found++;
		ynl_check_pool(_metadata, d);
	}
	baton_pool_get_list_free(pools);
	EXPECT_EQ(1, found);

	baton_pool_get_req_set_name(req, name);
	rsp = baton_pool_get(self->ys, req);
	baton_pool_get_req_free(req);
	ASSERT_NE(NULL, rsp) TH_LOG("pool get: %s", self->ys->err.msg);
	EXPECT_STREQ(name, rsp->name);
	ynl_check_pool(_metadata, rsp);
	baton_pool_get_rsp_free(rsp);
	baton_pool_close(pool);
	EXPECT_EQ(0, baton_pool_unlink(name));
}

/*
 * A holder that moves a small pool's free queue on as fast as it can:
 * bursts of 17 allocations and frees, one refill and one flush each,
 * until killed, by the test or, should the test end early on a failed
 * assertion, with it (PR_SET_PDEATHSIG): never left spinning.
 */
static void ynl_cycle_pool(const char *name, int cpu)
{
	struct baton_pool *pool;
	cpu_set_t set;
	uint64_t h[17];
	int i;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL))
		_exit(4);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	if (baton_pool_open(name, &pool))
		_exit(1);
	for (;;) {
		for (i = 0; i < 17; i++)
			if (baton_pool_alloc(pool, 4096, &h[i]))
				_exit(2);
		for (i = 0; i < 17; i++)
			if (baton_pool_free(pool, h[i]))
				_exit(3);
	}
}

/*
 * Stats read while two holders on the other CPU move the free queue:
 * the module reads a class's head, then its tail, and a reader
 * interrupted (or, on PREEMPT_RT, preempted) between the two saw a stale
 * head and a tail a lap further on, which it counted as a scribbled word
 * (kmod/pool.c, baton_pool_sample_free()). Nothing is scribbled here, so
 * every get must say bad_words 0 and no more free than the pool holds.
 */
TEST_F(ynl, pool_stats_under_traffic_count_no_bad_word)
{
	struct baton_pool_params p;
	struct baton_pool *pool;
	char name[BATON_NAME_MAX];
	int64_t end;
	cpu_set_t set;
	pid_t pid[2];
	int i, gets = 0, bad = 0, over = 0;

	memset(&p, 0, sizeof(p));
	p.nr_classes = 1;
	p.max_holders = 4;
	p.classes[0].buf_shift = 12;
	p.classes[0].count = 128;
	bt_make_name(name, sizeof(name), "ynl.traffic");
	ASSERT_EQ(0, baton_pool_create(name, &p, &pool));
	for (i = 0; i < 2; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i])
			ynl_cycle_pool(name, 1);
	}
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	end = bt_now_ns() + 1500 * BT_MSEC;
	while (bt_now_ns() < end) {
		struct baton_pool_get_req *req = baton_pool_get_req_alloc();
		struct baton_pool_get_rsp *rsp;

		ASSERT_NE(NULL, req);
		baton_pool_get_req_set_name(req, name);
		rsp = baton_pool_get(self->ys, req);
		baton_pool_get_req_free(req);
		ASSERT_NE(NULL, rsp) TH_LOG("pool get: %s", self->ys->err.msg);
		gets++;
		if (rsp->_present.bad_words && rsp->bad_words)
			bad++;
		if (rsp->_present.classes && rsp->classes.n_class == 1 &&
		    rsp->classes.class[0].free > 128)
			over++;
		baton_pool_get_rsp_free(rsp);
	}
	for (i = 0; i < 2; i++) {
		int st;

		kill(pid[i], SIGKILL);
		waitpid(pid[i], &st, 0);
		EXPECT_TRUE(WIFSIGNALED(st)) TH_LOG("cycler %d exit %d", i,
						    WEXITSTATUS(st));
	}
	TH_LOG("%d gets, %d with bad words", gets, bad);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, over);
	baton_pool_close(pool);
	EXPECT_EQ(0, baton_pool_unlink(name));
}

/* The next event of @type naming @name, within @ms; 0 or -1. */
static int ynl_wait_event(struct ynl_sock *ys, uint32_t type,
			  const char *name, int ms)
{
	int64_t end = bt_now_ns() + ms * BT_MSEC;
	struct pollfd pfd = { .fd = ynl_socket_get_fd(ys), .events = POLLIN };

	while (bt_now_ns() < end) {
		struct ynl_ntf_base_type *ntf;

		if (ynl_ntf_check(ys) < 0)
			return -1;
		while ((ntf = ynl_ntf_dequeue(ys))) {
			struct baton_event *ev = (struct baton_event *)ntf;
			bool hit = ntf->cmd == BATON_CMD_EVENT &&
				   ev->obj._present.type &&
				   ev->obj.type == type &&
				   ev->obj._present.name_len &&
				   !strcmp(ev->obj.name, name);

			ynl_ntf_free(ntf);
			if (hit)
				return 0;
		}
		poll(&pfd, 1, 100);
	}
	return -1;
}

TEST_F(ynl, watch_receives_events)
{
	char name[BATON_NAME_MAX];
	struct baton_ring_create c;

	ASSERT_EQ(0, baton_watch(self->ys)) TH_LOG("watch: %s",
						  self->ys->err.msg);
	bt_make_name(name, sizeof(name), "ynl.ev");
	ASSERT_EQ(0, _test_ring_create(self->dev, name, BATON_ROLE_CONSUMER,
				       16, 16, 0600, &c));
	EXPECT_EQ(0, ynl_wait_event(self->ys, BATON_EVENT_RING_CREATED, name,
				    10000));
	ASSERT_EQ(0, _test_unlink(self->dev, name));
	EXPECT_EQ(0, ynl_wait_event(self->ys, BATON_EVENT_RING_UNLINKED, name,
				    10000));
	close(c.out_fd);
	EXPECT_EQ(0, ynl_wait_event(self->ys, BATON_EVENT_RING_DESTROYED,
				    name, 10000));
	EXPECT_EQ(0, baton_unwatch(self->ys));
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0
/*
 * netlink_events: the events a BATON_CMD_WATCH socket receives, and the
 * counters that go with them, from separate processes on the real module.
 *
 * Owns: a ring's life (created, unlinked, destroyed, in that order); kill
 * -9 of a producer gives PEER_DIED (its pid, role producer) and
 * producer_deaths 1; an MPSC producer killed holding a ticket gives a
 * TOMBSTONES event (count and first ticket) once the consumer reaches the
 * ticket, and the tombstones counter matches; an epoch reader inside its
 * read section is an active reader and the oldest announcement, with its
 * pid, and a synchronize that waits on it past straggler_ms gives a
 * STRAGGLER event naming it; UNWATCH stops the events; one name created
 * and unlinked by two threads at once has its events in that order.
 *
 * Events are delivered from a work item, so every wait for one is
 * bounded by a generous timeout and never measured.
 */
#include "mpsc_common.h"
#include "netlink_util.h"

#include <pthread.h>

#define NE_WAIT_MS	20000
#define STRAGGLER_PARAM	"/sys/module/baton/parameters/straggler_ms"

FIXTURE(watch_events) {
	struct nlt req;			/* requests */
	struct nlt ev;			/* subscribed: events only */
	char name[BATON_NAME_MAX];
	long old_straggler_ms;		/* to restore; -1 if untouched */
};

static int ne_write_param(const char *path, unsigned long v);

FIXTURE_SETUP(watch_events)
{
	struct nlt_err e;

	BT_REQUIRE_DEV();
	ASSERT_EQ(0, nlt_open(&self->req));
	ASSERT_EQ(0, nlt_open(&self->ev));
	ASSERT_EQ(0, nlt_watch(&self->ev, &e)) {
		TH_LOG("WATCH: %d %s", e.error, e.msg);
	}
	bt_make_name(self->name, sizeof(self->name), "ne");
	self->old_straggler_ms = -1;
}

FIXTURE_TEARDOWN(watch_events)
{
	if (self->old_straggler_ms >= 0)
		ne_write_param(STRAGGLER_PARAM,
			       (unsigned long)self->old_straggler_ms);
	bt_unlink_quiet(self->name);
	baton_epoch_unlink(self->name, BATON_BACKEND_KMOD);
	nlt_close(&self->req);
	nlt_close(&self->ev);
}

TEST_F(watch_events, ring_created_unlinked_destroyed)
{
	struct baton_ring_params p = bt_params(4, 8);
	struct baton_ring *r;
	static struct nlt_obj ev;

	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_PRODUCER,
				       &r));
	ASSERT_EQ(0, nlt_wait_event(&self->ev, BATON_EVENT_RING_CREATED,
				    self->name, NE_WAIT_MS, &ev, NULL, NULL));
	ASSERT_EQ(0, baton_ring_unlink(self->name, BATON_BACKEND_KMOD));
	ASSERT_EQ(0, nlt_wait_event(&self->ev, BATON_EVENT_RING_UNLINKED,
				    self->name, NE_WAIT_MS, &ev, NULL, NULL));
	/* the open fd keeps it: destroyed only once we close */
	baton_ring_close(r);
	ASSERT_EQ(0, nlt_wait_event(&self->ev, BATON_EVENT_RING_DESTROYED,
				    self->name, NE_WAIT_MS, &ev, NULL, NULL));
}

TEST_F(watch_events, epoch_created_unlinked_destroyed)
{
	struct baton_epoch_params p = { 4, 4, 0600, BATON_BACKEND_KMOD };
	struct baton_epoch *d;
	static struct nlt_obj ev;

	ASSERT_EQ(0, baton_epoch_create(self->name, &p, &d));
	ASSERT_EQ(0, nlt_wait_event(&self->ev, BATON_EVENT_EPOCH_CREATED,
				    self->name, NE_WAIT_MS, &ev, NULL, NULL));
	ASSERT_EQ(0, baton_epoch_unlink(self->name, BATON_BACKEND_KMOD));
	ASSERT_EQ(0, nlt_wait_event(&self->ev, BATON_EVENT_EPOCH_UNLINKED,
				    self->name, NE_WAIT_MS, &ev, NULL, NULL));
	baton_epoch_close(d);
	ASSERT_EQ(0, nlt_wait_event(&self->ev, BATON_EVENT_EPOCH_DESTROYED,
				    self->name, NE_WAIT_MS, &ev, NULL, NULL));
}

/* Child: attach as producer, say so, wait to be killed. */
static pid_t ne_idle_producer(const char *name, struct bt_sync *s)
{
	pid_t pid = fork();
	struct baton_ring *pr;

	if (pid)
		return pid;
	if (baton_ring_open(name, BATON_ROLE_PRODUCER, BATON_BACKEND_KMOD, &pr))
		_exit(3);
	bt_sync_post(s);
	pause();
	_exit(4);
}

TEST_F_TIMEOUT(watch_events, kill9_producer_peer_died, 60)
{
	struct baton_ring_params p = bt_params(8, 8);
	struct baton_ring *c;
	static struct nlt_obj ev, o;
	struct nlt_err e;
	struct bt_sync s;
	pid_t pid;

	ASSERT_EQ(0, bt_sync_init(&s));
	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_CONSUMER,
				       &c));
	pid = ne_idle_producer(self->name, &s);
	ASSERT_LE(0, pid);
	ASSERT_EQ(0, bt_sync_wait(&s, NE_WAIT_MS));
	ASSERT_EQ(0, nlt_get(&self->req, BATON_CMD_RING_GET, self->name, &o,
			     &e));
	EXPECT_EQ(1, o.a.v[BATON_A_RING_PRODUCERS]);
	EXPECT_EQ(0, o.a.v[BATON_A_RING_PRODUCER_DEATHS]);

	kill(pid, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, bt_wait_timeout(pid, NE_WAIT_MS));
	ASSERT_EQ(0, nlt_wait_event(&self->ev, BATON_EVENT_PEER_DIED,
				    self->name, NE_WAIT_MS, &ev, NULL, NULL));
	EXPECT_EQ(pid, ev.a.v[BATON_A_EVENT_PID]);
	EXPECT_EQ(BATON_ROLE_PRODUCER, ev.a.v[BATON_A_EVENT_ROLE]);

	ASSERT_EQ(0, nlt_get(&self->req, BATON_CMD_RING_GET, self->name, &o,
			     &e));
	EXPECT_EQ(1, o.a.v[BATON_A_RING_PRODUCER_DEATHS]);
	EXPECT_EQ(0, o.a.v[BATON_A_RING_PRODUCERS]);
	EXPECT_EQ(BATON_STATE_PRODUCER_GONE,
		  o.a.v[BATON_A_RING_STATE] & BATON_STATE_PRODUCER_GONE);
	baton_ring_close(c);
	bt_sync_close(&s);
}

/* Child: attach an MPSC producer, take @n tickets, wait to be killed. */
static pid_t ne_ticket_holder(const char *name, uint32_t n, struct bt_sync *s)
{
	pid_t pid = fork();
	struct baton_ring *pr;

	if (pid)
		return pid;
	if (baton_ring_open(name, BATON_ROLE_PRODUCER, BATON_BACKEND_KMOD, &pr))
		_exit(3);
	baton_mpsc_prod_reserve(pr, n);
	bt_sync_post(s);
	pause();
	_exit(4);
}

TEST_F_TIMEOUT(watch_events, mpsc_kill_mid_reservation_tombstones, 60)
{
	struct baton_ring_params p = mp_params(8, 2);
	struct baton_mpsc_loss loss;
	struct baton_ring *c;
	static struct nlt_obj ev, o;
	struct nlt_err e;
	struct bt_sync s;
	uint64_t m[2], lost = 0;
	pid_t pid;
	int ret;

	ASSERT_EQ(0, bt_sync_init(&s));
	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_CONSUMER,
				       &c));
	pid = ne_ticket_holder(self->name, 2, &s);
	ASSERT_LE(0, pid);
	ASSERT_EQ(0, bt_sync_wait(&s, NE_WAIT_MS));
	kill(pid, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, bt_wait_timeout(pid, NE_WAIT_MS));
	/* the consumer reaches the dead tickets: the kernel tombstones them */
	while ((ret = baton_mpsc_pop(c, m, sizeof(m), 10 * BT_NSEC, &loss)) ==
	       BATON_MPSC_LOST)
		lost++;
	EXPECT_EQ(-EPIPE, ret);
	EXPECT_EQ(2, lost);

	ASSERT_EQ(0, nlt_wait_event(&self->ev, BATON_EVENT_TOMBSTONES,
				    self->name, NE_WAIT_MS, &ev, NULL, NULL));
	EXPECT_EQ(0, ev.a.v[BATON_A_EVENT_TICKET]);
	EXPECT_LE(1, ev.a.v[BATON_A_EVENT_COUNT]);
	lost = ev.a.v[BATON_A_EVENT_COUNT];
	/* the kernel may tombstone the two tickets in one go or in two */
	if (lost < 2) {
		ASSERT_EQ(0, nlt_wait_event(&self->ev, BATON_EVENT_TOMBSTONES,
					    self->name, NE_WAIT_MS, &ev, NULL,
					    NULL));
		EXPECT_EQ(lost, ev.a.v[BATON_A_EVENT_TICKET]);
		lost += ev.a.v[BATON_A_EVENT_COUNT];
	}
	EXPECT_EQ(2, lost);
	ASSERT_EQ(0, nlt_get(&self->req, BATON_CMD_RING_GET, self->name, &o,
			     &e));
	EXPECT_EQ(2, o.a.v[BATON_A_RING_TOMBSTONES]);
	EXPECT_EQ(1, o.a.v[BATON_A_RING_PRODUCER_DEATHS]);
	EXPECT_EQ(2, o.a.v[BATON_A_RING_MSGS_RESERVED]);
	EXPECT_EQ(2, o.a.v[BATON_A_RING_MSGS_CONSUMED]);
	baton_ring_close(c);
	bt_sync_close(&s);
}

struct ne_shared {
	uint64_t epoch;			/* what the reader announced */
};

/* Child: register, enter a read section, publish the epoch, hold on. */
static pid_t ne_reader(const char *name, struct ne_shared *sh,
		       struct bt_sync *s)
{
	pid_t pid = fork();
	struct baton_epoch *d;

	if (pid)
		return pid;
	if (baton_epoch_open(name, BATON_BACKEND_KMOD, &d))
		_exit(3);
	if (baton_epoch_register(d) < 0)
		_exit(4);
	sh->epoch = baton_epoch_enter(d);
	bt_sync_post(s);
	pause();
	_exit(5);
}

TEST_F_TIMEOUT(watch_events, epoch_active_reader_and_oldest_pid, 60)
{
	struct baton_epoch_params p = { 4, 8, 0600, BATON_BACKEND_KMOD };
	struct ne_shared *sh;
	struct baton_epoch *d;
	static struct nlt_obj o;
	struct nlt_err e;
	struct bt_sync s;
	pid_t pid;
	int k, found = 0;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	ASSERT_EQ(0, bt_sync_init(&s));
	ASSERT_EQ(0, baton_epoch_create(self->name, &p, &d));
	ASSERT_LE(0, baton_epoch_register(d));
	pid = ne_reader(self->name, sh, &s);
	ASSERT_LE(0, pid);
	ASSERT_EQ(0, bt_sync_wait(&s, NE_WAIT_MS));

	ASSERT_EQ(0, nlt_get(&self->req, BATON_CMD_EPOCH_GET, self->name, &o,
			     &e));
	EXPECT_EQ(2, o.a.v[BATON_A_EPOCH_PARTICIPANTS]);
	EXPECT_EQ(1, o.a.v[BATON_A_EPOCH_ACTIVE_READERS]);
	EXPECT_EQ(sh->epoch, o.a.v[BATON_A_EPOCH_OLDEST]);
	EXPECT_EQ(pid, o.a.v[BATON_A_EPOCH_OLDEST_PID]);
	EXPECT_EQ(4, o.a.v[BATON_A_EPOCH_MAX_PARTICIPANTS]);
	EXPECT_EQ(2, o.npeers);
	for (k = 0; k < o.npeers; k++) {
		const struct nlt_rec *r = &o.peers[k];

		if (r->v[BATON_A_PEER_PID] != (uint64_t)pid)
			continue;
		found++;
		EXPECT_EQ(sh->epoch, r->v[BATON_A_PEER_ANNOUNCED]);
	}
	EXPECT_EQ(1, found);

	kill(pid, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, bt_wait_timeout(pid, NE_WAIT_MS));
	baton_epoch_close(d);
	bt_sync_close(&s);
	munmap(sh, sizeof(*sh));
}

static int ne_read_param(const char *path, unsigned long *v)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%lu", v) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

static int ne_write_param(const char *path, unsigned long v)
{
	FILE *f = fopen(path, "w");
	int ok;

	if (!f)
		return -errno;
	ok = fprintf(f, "%lu\n", v) > 0;
	return fclose(f) == 0 && ok ? 0 : -EIO;
}

TEST_F_TIMEOUT(watch_events, straggler_event_names_the_reader, 60)
{
	struct baton_epoch_params p = { 4, 8, 0600, BATON_BACKEND_KMOD };
	unsigned long old_ms, want_ms = 50;
	static struct nlt_obj ev, o;
	struct ne_shared *sh;
	struct baton_epoch *d;
	struct nlt_err e;
	struct bt_sync s;
	pid_t pid, holder = 0;
	uint64_t epoch;

	if (ne_read_param(STRAGGLER_PARAM, &old_ms) ||
	    ne_write_param(STRAGGLER_PARAM, want_ms))
		SKIP(return, "%s is not writable", STRAGGLER_PARAM);
	self->old_straggler_ms = (long)old_ms;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	ASSERT_EQ(0, bt_sync_init(&s));
	ASSERT_EQ(0, baton_epoch_create(self->name, &p, &d));
	ASSERT_LE(0, baton_epoch_register(d));
	pid = ne_reader(self->name, sh, &s);
	ASSERT_LE(0, pid);
	ASSERT_EQ(0, bt_sync_wait(&s, NE_WAIT_MS));

	ASSERT_EQ(0, baton_epoch_retire(d, 1, 0, &epoch));
	/* the reader never leaves: the deadline ends it, naming the holder */
	EXPECT_EQ(-ETIMEDOUT, baton_epoch_synchronize(d, epoch,
						      (int64_t)(want_ms * 10) *
						      BT_MSEC, &holder));
	EXPECT_EQ(pid, holder);
	ASSERT_EQ(0, nlt_wait_event(&self->ev, BATON_EVENT_STRAGGLER,
				    self->name, NE_WAIT_MS, &ev, NULL, NULL));
	EXPECT_EQ(pid, ev.a.v[BATON_A_EVENT_PID]);
	EXPECT_EQ(sh->epoch, ev.a.v[BATON_A_EVENT_EPOCH]);
	EXPECT_LE(want_ms, ev.a.v[BATON_A_EVENT_WAITED_MS]);
	ASSERT_EQ(0, nlt_get(&self->req, BATON_CMD_EPOCH_GET, self->name, &o,
			     &e));
	EXPECT_EQ(1, o.a.v[BATON_A_EPOCH_SYNC_TIMEOUTS]);
	EXPECT_LE(1, o.a.v[BATON_A_EPOCH_SYNC_WAITS]);
	EXPECT_EQ(1, o.a.v[BATON_A_EPOCH_PENDING]);

	kill(pid, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, bt_wait_timeout(pid, NE_WAIT_MS));
	baton_epoch_close(d);
	bt_sync_close(&s);
	munmap(sh, sizeof(*sh));
}

/* After UNWATCH, a ring's creation reaches the other watcher only. */
TEST_F(watch_events, unwatch_stops_events)
{
	struct baton_ring_params p = bt_params(4, 8);
	static struct nlt_obj ev;
	struct baton_ring *r;
	struct nlt quiet;
	struct nlt_msg m;
	struct nlt_err e;
	char buf[4096];

	ASSERT_EQ(0, nlt_open(&quiet));
	ASSERT_EQ(0, nlt_watch(&quiet, &e));
	nlt_msg_init(&m, quiet.family, NLM_F_ACK, BATON_CMD_UNWATCH);
	ASSERT_EQ(0, nlt_send(&quiet, &m));
	ASSERT_EQ(0, nlt_collect(&quiet, &e, NULL, NULL));

	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_PRODUCER,
				       &r));
	/* the subscribed socket gets it: delivery has happened by then */
	ASSERT_EQ(0, nlt_wait_event(&self->ev, BATON_EVENT_RING_CREATED,
				    self->name, NE_WAIT_MS, &ev, NULL, NULL));
	EXPECT_EQ(-ETIMEDOUT, nlt_recv(&quiet, buf, sizeof(buf), 0));
	baton_ring_close(r);
	nlt_close(&quiet);
}

/* ---- one name, two threads ---- */

#define NE_ROUNDS	1500	/* each thread's create-and-unlink rounds */
#define NE_AHEAD	40	/* successes the reader may be behind by */

/* The watcher's view of one name: its events in order, checked. */
struct ne_order {
	struct nlt *s;
	const char *name;
	volatile int stop;
	int created, unlinked;		/* events seen */
	int out_of_order;		/* CREATED twice, or UNLINKED first */
	int last;			/* the last CREATED or UNLINKED */
	uint64_t drops;
};

static void ne_order_one(const struct nlmsghdr *h, void *arg)
{
	static struct nlt_obj ev;
	struct ne_order *o = arg;
	int type;

	nlt_parse_obj(h, BATON_A_EVENT_NAME, -1, &ev);
	if (ev.a.v[BATON_A_EVENT_DROPS] > o->drops)
		o->drops = ev.a.v[BATON_A_EVENT_DROPS];
	type = (int)ev.a.v[BATON_A_EVENT_TYPE];
	if (strcmp(ev.a.name, o->name) ||
	    (type != BATON_EVENT_RING_CREATED &&
	     type != BATON_EVENT_RING_UNLINKED))
		return;
	if (type == (o->last ?: BATON_EVENT_RING_UNLINKED))
		o->out_of_order++;
	o->last = type;
	if (type == BATON_EVENT_RING_CREATED)
		__atomic_add_fetch(&o->created, 1, __ATOMIC_RELAXED);
	else
		o->unlinked++;
}

static void *ne_order_reader(void *arg)
{
	struct ne_order *o = arg;

	while (!o->stop)
		nlt_read_events(o->s, 100, ne_order_one, o);
	return NULL;
}

struct ne_churner {
	struct ne_order *o;
	const char *name;
	int dev;
	int created, unlinked;		/* ioctls that succeeded */
	int *total_created;		/* both threads' */
};

/* Create and unlink the one name, racing the other thread for it. */
static void *ne_churn(void *arg)
{
	struct ne_churner *c = arg;
	int i;

	for (i = 0; i < NE_ROUNDS; i++) {
		int64_t end = bt_now_ns() + NE_WAIT_MS * BT_MSEC;

		/* a queue that never fills: the test is order, not room */
		while (__atomic_load_n(c->total_created, __ATOMIC_RELAXED) -
		       __atomic_load_n(&c->o->created, __ATOMIC_RELAXED) >
		       NE_AHEAD && bt_now_ns() < end)
			bt_sleep_ms(1);
		if (!_test_ring_create(c->dev, c->name, BATON_ROLE_PRODUCER, 2,
				       8, 0600, NULL)) {
			c->created++;
			__atomic_add_fetch(c->total_created, 1,
					   __ATOMIC_RELAXED);
		}
		if (!_test_unlink(c->dev, c->name))
			c->unlinked++;
	}
	return NULL;
}

/*
 * Two threads create and unlink one name as fast as they can. A name is
 * created, then unlinked, then created again: its events must say so in
 * that order. When they were queued after the registry's lock was
 * dropped, a create could publish the name, another thread unlink it and
 * queue UNLINKED, and only then CREATED be queued: the watcher would
 * believe a name gone that was there, or there that was gone.
 */
TEST_F_TIMEOUT(watch_events, one_name_created_and_unlinked_in_order, 300)
{
	struct ne_churner c[2];
	struct ne_order o = { .s = &self->ev, .name = self->name };
	int i, big = 16 << 20, total_created = 0, want_c = 0, want_u = 0;
	pthread_t th[2], reader;
	int64_t end;

	ASSERT_EQ(0, setsockopt(self->ev.fd, SOL_SOCKET, SO_RCVBUFFORCE, &big,
				sizeof(big)));
	ASSERT_EQ(0, pthread_create(&reader, NULL, ne_order_reader, &o));
	for (i = 0; i < 2; i++) {
		c[i] = (struct ne_churner){ .o = &o, .name = self->name,
					    .dev = bt_dev_open(),
					    .total_created = &total_created };
		ASSERT_LE(0, c[i].dev);
		ASSERT_EQ(0, pthread_create(&th[i], NULL, ne_churn, &c[i]));
	}
	for (i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		close(c[i].dev);
		want_c += c[i].created;
		want_u += c[i].unlinked;
	}
	end = bt_now_ns() + NE_WAIT_MS * BT_MSEC;
	while ((__atomic_load_n(&o.created, __ATOMIC_RELAXED) < want_c ||
		o.unlinked < want_u) && bt_now_ns() < end)
		bt_sleep_ms(10);
	o.stop = 1;
	pthread_join(reader, NULL);
	TH_LOG("%d creates and %d unlinks succeeded; events: %d created, %d unlinked, %d out of order, drops %llu",
	       want_c, want_u, o.created, o.unlinked, o.out_of_order,
	       (unsigned long long)o.drops);
	EXPECT_EQ(0, o.drops);
	EXPECT_EQ(want_c, o.created);
	EXPECT_EQ(want_u, o.unlinked);
	EXPECT_EQ(0, o.out_of_order);
}

TEST_HARNESS_MAIN

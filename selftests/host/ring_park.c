// SPDX-License-Identifier: MIT
/*
 * Parking on the memfd backend: the blocking forms and baton_ring_park().
 * Timeouts come back as -ETIMEDOUT without losing the caller's flag
 * hygiene; a parked side is woken by the peer's next index store; tiny
 * rings with spinning disabled force a park on nearly every message,
 * in ping-pong (each message waits for the answer to the previous one,
 * so a lost wakeup is a deadlock the per-call timeout turns into a
 * failure) and in streams, between threads and between processes, and
 * across the 2^32 boundary of the low half of the index. Tests that
 * force parks check park_calls > 0.
 */
#include "kselftest_harness.h"
#include "common.h"

#define MS (1000LL * 1000)

FIXTURE(park) {
	char name[BATON_NAME_MAX];
	char name2[BATON_NAME_MAX];
	struct baton_ring_params p;
	struct baton_ring *prod, *cons;
};

FIXTURE_SETUP(park)
{
	force_memfd();
	ring_name(self->name, sizeof(self->name), "park");
	ring_name(self->name2, sizeof(self->name2), "park");
	self->p.kind = BATON_RING_SPSC;
	self->p.slot_count = 4;
	self->p.slot_size = 8;
	self->p.mode = 0600;
	self->p.backend = BATON_BACKEND_AUTO;
	ASSERT_EQ(0, baton_ring_create(self->name, &self->p,
				       BATON_ROLE_PRODUCER, &self->prod));
	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_CONSUMER,
				     BATON_BACKEND_AUTO, &self->cons));
}

FIXTURE_TEARDOWN(park)
{
	baton_ring_close(self->prod);
	baton_ring_close(self->cons);
	baton_ring_unlink(self->name, BATON_BACKEND_AUTO);
	baton_ring_unlink(self->name2, BATON_BACKEND_AUTO);
}

static uint32_t flag_of(uint32_t *flag)
{
	return __atomic_load_n(flag, __ATOMIC_RELAXED);
}

/* Spin until the peer has raised its waiting flag (it is about to sleep). */
static int wait_flag(uint32_t *flag, int64_t timeout_ns)
{
	uint64_t end = now_ns() + (uint64_t)timeout_ns;

	while (!flag_of(flag)) {
		if (now_ns() > end)
			return -ETIMEDOUT;
		usleep(100);
	}
	return 0;
}

TEST_F(park, pop_timeout_on_empty)
{
	uint64_t v, t0, dt;

	t0 = now_ns();
	EXPECT_EQ(-ETIMEDOUT, baton_spsc_pop(self->cons, &v, sizeof(v),
					     20 * MS));
	dt = now_ns() - t0;
	EXPECT_LE(20 * MS, (int64_t)dt);
	EXPECT_GT(2000 * MS, (int64_t)dt);
	EXPECT_LE(1U, self->cons->park_calls);
	EXPECT_EQ(0U, flag_of(self->cons->cons_waiting));
}

TEST_F(park, push_timeout_on_full)
{
	uint64_t v = 0, t0, dt;

	for (v = 0; v < 4; v++)
		ASSERT_EQ(0, baton_spsc_try_push(self->prod, &v, sizeof(v)));
	t0 = now_ns();
	EXPECT_EQ(-ETIMEDOUT, baton_spsc_push(self->prod, &v, sizeof(v),
					      20 * MS));
	dt = now_ns() - t0;
	EXPECT_LE(20 * MS, (int64_t)dt);
	EXPECT_GT(2000 * MS, (int64_t)dt);
	EXPECT_LE(1U, self->prod->park_calls);
	EXPECT_EQ(0U, flag_of(self->prod->prod_waiting));
	EXPECT_EQ(4U, __atomic_load_n(self->prod->tail, __ATOMIC_RELAXED));
}

/* A zero timeout is a try: no spin, no park. */
TEST_F(park, zero_timeout_is_a_try)
{
	uint64_t v = 0, idx;

	EXPECT_EQ(-ETIMEDOUT, baton_spsc_pop(self->cons, &v, sizeof(v), 0));
	EXPECT_EQ(-ETIMEDOUT, baton_spsc_cons_peek_wait(self->cons, 2, &idx,
							0));
	for (v = 0; v < 4; v++)
		ASSERT_EQ(0, baton_spsc_push(self->prod, &v, sizeof(v), 0));
	EXPECT_EQ(-ETIMEDOUT, baton_spsc_push(self->prod, &v, sizeof(v), 0));
	EXPECT_EQ(0U, self->prod->park_calls);
	EXPECT_EQ(0U, self->cons->park_calls);
	EXPECT_EQ(4, baton_spsc_cons_peek_wait(self->cons, 8, &idx, 0));
}

/* Park returns at once when there is nothing to wait for. */
TEST_F(park, park_when_ready_returns_now)
{
	uint64_t v = 1, t0;

	ASSERT_EQ(0, baton_spsc_try_push(self->prod, &v, sizeof(v)));
	t0 = now_ns();
	EXPECT_EQ(0, baton_ring_park(self->cons, 1000 * MS));
	EXPECT_EQ(0, baton_ring_park(self->prod, 1000 * MS));
	EXPECT_GT(500 * MS, (int64_t)(now_ns() - t0));
	EXPECT_EQ(0U, flag_of(self->cons->cons_waiting));
	EXPECT_EQ(0U, flag_of(self->prod->prod_waiting));
	/* and times out when there is */
	ASSERT_EQ(0, baton_spsc_try_pop(self->cons, &v, sizeof(v)));
	EXPECT_EQ(-ETIMEDOUT, baton_ring_park(self->cons, 5 * MS));
}

struct blocked {
	struct baton_ring *r;
	int64_t timeout_ns;
	uint64_t val;
	int ret;
	int signals;	/* keep signalling until the call returns */
	int done;
};

static void *pop_blocked(void *arg)
{
	struct blocked *b = arg;

	b->ret = baton_spsc_pop(b->r, &b->val, sizeof(b->val), b->timeout_ns);
	__atomic_store_n(&b->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *push_blocked(void *arg)
{
	struct blocked *b = arg;

	b->ret = baton_spsc_push(b->r, &b->val, sizeof(b->val), b->timeout_ns);
	__atomic_store_n(&b->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * One parked pop, one push: 1 if the push took the parker's episode (it
 * parked once and the producer made a wake call), 0 if the parker found
 * the message by itself, -1 on failure.
 */
static int park_then_push(struct __test_metadata *_metadata,
			  FIXTURE_DATA(park) *self, uint64_t v)
{
	struct blocked b = { .r = self->cons, .timeout_ns = 5000 * MS };
	uint64_t parks = self->cons->park_calls;
	uint64_t wakes = self->prod->wake_calls;
	uint64_t t0;
	pthread_t t;

	if (pthread_create(&t, NULL, pop_blocked, &b) ||
	    wait_flag(self->cons->cons_waiting, 5000 * MS))
		return -1;
	usleep(20000);	/* most likely asleep in the futex by now */
	t0 = now_ns();
	if (baton_spsc_try_push(self->prod, &v, sizeof(v)) ||
	    pthread_join(t, NULL))
		return -1;
	/* Woken by the push or a slice's re-check, not by its deadline. */
	EXPECT_GT(2000 * MS, (int64_t)(now_ns() - t0));
	EXPECT_EQ(0, b.ret);
	EXPECT_EQ(v, b.val);
	EXPECT_LE(parks + 1, self->cons->park_calls);
	EXPECT_EQ(0U, flag_of(self->cons->cons_waiting));
	return self->cons->park_calls == parks + 1 &&
	       self->prod->wake_calls > wakes;
}

/*
 * A parked consumer is woken by the push. Not every try can show it: a
 * parker that came out early (a spurious return, under TSan in
 * particular) or whose sleep slice ended as the push landed (the slice
 * re-checks the ring, backend_memfd.c) finds the message by itself, and
 * the producer then finds no episode to take. So up to five tries, and at
 * least one must be a wake.
 */
TEST_F(park, wake_parked_consumer)
{
	int tries, woken = 0, ret;

	self->cons->spin_limit = 0;
	for (tries = 0; tries < 5 && !woken; tries++) {
		ret = park_then_push(_metadata, self, 77 + tries);
		ASSERT_LE(0, ret);
		woken = ret;
	}
	EXPECT_EQ(1, woken) TH_LOG("no push woke the parker in %d tries", tries);
}

/*
 * A full ring (values @v0 .. @v0 + 3), one parked push of @v0 + 4, one
 * pop: 1 if the pop took the parker's episode, 0 if the parker found the
 * room by itself, -1 on failure. Leaves the ring empty.
 */
static int park_then_pop(struct __test_metadata *_metadata,
			 FIXTURE_DATA(park) *self, uint64_t v0)
{
	struct blocked b = { .r = self->prod, .timeout_ns = 5000 * MS,
			     .val = v0 + 4 };
	uint64_t parks = self->prod->park_calls;
	uint64_t wakes = self->cons->wake_calls;
	uint64_t v, t0;
	int woken;
	pthread_t t;

	for (v = v0; v < v0 + 4; v++)
		if (baton_spsc_try_push(self->prod, &v, sizeof(v)))
			return -1;
	if (pthread_create(&t, NULL, push_blocked, &b) ||
	    wait_flag(self->prod->prod_waiting, 5000 * MS))
		return -1;
	usleep(20000);
	t0 = now_ns();
	if (baton_spsc_try_pop(self->cons, &v, sizeof(v)) ||
	    pthread_join(t, NULL))
		return -1;
	EXPECT_EQ(v0, v);
	EXPECT_GT(2000 * MS, (int64_t)(now_ns() - t0));
	EXPECT_EQ(0, b.ret);
	EXPECT_LE(parks + 1, self->prod->park_calls);
	EXPECT_EQ(0U, flag_of(self->prod->prod_waiting));
	woken = self->prod->park_calls == parks + 1 &&
		self->cons->wake_calls > wakes;
	for (v = v0 + 1; v < v0 + 5; v++) {
		uint64_t got = 0;

		if (baton_spsc_try_pop(self->cons, &got, sizeof(got)))
			return -1;
		EXPECT_EQ(v, got);
	}
	return woken;
}

/* A parked producer is woken by the pop; tries as for the consumer. */
TEST_F(park, wake_parked_producer)
{
	int tries, woken = 0, ret;

	self->prod->spin_limit = 0;
	for (tries = 0; tries < 5 && !woken; tries++) {
		ret = park_then_pop(_metadata, self, 10 * tries);
		ASSERT_LE(0, ret);
		woken = ret;
	}
	EXPECT_EQ(1, woken) TH_LOG("no pop woke the parker in %d tries", tries);
}

static void on_signal(int sig)
{
	(void)sig;
}

/* Without SA_RESTART a signal ends the park with -EINTR. */
TEST_F(park, signal_interrupts_park)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct blocked b = { .r = self->cons, .timeout_ns = 5000 * MS };
	pthread_t t;
	int i;

	sigemptyset(&sa.sa_mask);
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	self->cons->spin_limit = 0;
	ASSERT_EQ(0, pthread_create(&t, NULL, pop_blocked, &b));
	ASSERT_EQ(0, wait_flag(self->cons->cons_waiting, 5000 * MS));
	/* A signal that lands before the futex sleep is absorbed; repeat. */
	for (i = 0; i < 400 && !__atomic_load_n(&b.done, __ATOMIC_ACQUIRE);
	     i++) {
		pthread_kill(t, SIGUSR1);
		usleep(10000);
	}
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(-EINTR, b.ret);
	EXPECT_EQ(0U, flag_of(self->cons->cons_waiting));
}

/*
 * End of stream on memfd: a consumer whose producer is gone drains what
 * it published, then sees -EPIPE (the producer's role lock is free), and
 * baton_ring_peer_gone() says so. Before: -ETIMEDOUT and peer_gone 0.
 */
TEST_F(park, memfd_end_of_stream)
{
	uint64_t v = 5;

	ASSERT_EQ(0, baton_spsc_try_push(self->prod, &v, sizeof(v)));
	baton_ring_close(self->prod);
	self->prod = NULL;
	EXPECT_EQ(0, baton_spsc_pop(self->cons, &v, sizeof(v), 10 * MS));
	EXPECT_EQ(-EPIPE, baton_spsc_pop(self->cons, &v, sizeof(v),
					 10 * MS));
	EXPECT_EQ(1, baton_ring_peer_gone(self->cons));
	EXPECT_EQ(BATON_STATE_PRODUCER_GONE, self->cons->hdr->state);
}

/* Ping-pong: each side waits for the other's answer, so it parks. */
struct pp {
	struct baton_ring *in, *out;
	uint64_t rounds;
	uint64_t bad;
	int err;
};

static void pong(struct pp *pp)
{
	uint64_t i, v;
	int ret;

	for (i = 0; i < pp->rounds; i++) {
		ret = baton_spsc_pop(pp->in, &v, sizeof(v), OP_TIMEOUT_NS);
		if (ret != 0 || v != i) {
			pp->err = ret < 0 ? ret : -EBADMSG;
			pp->bad = i;
			return;
		}
		ret = baton_spsc_push(pp->out, &v, sizeof(v), OP_TIMEOUT_NS);
		if (ret != 0) {
			pp->err = ret;
			pp->bad = i;
			return;
		}
	}
}

static void ping(struct pp *pp)
{
	uint64_t i, v;
	int ret;

	for (i = 0; i < pp->rounds; i++) {
		ret = baton_spsc_push(pp->out, &i, sizeof(i), OP_TIMEOUT_NS);
		if (ret != 0) {
			pp->err = ret;
			pp->bad = i;
			return;
		}
		ret = baton_spsc_pop(pp->in, &v, sizeof(v), OP_TIMEOUT_NS);
		if (ret != 0 || v != i) {
			pp->err = ret < 0 ? ret : -EBADMSG;
			pp->bad = i;
			return;
		}
	}
}

static void *pong_thread(void *arg)
{
	pong(arg);
	return NULL;
}

#define ROUNDS SCALE(10000ULL)

TEST_F(park, pingpong_threads)
{
	struct baton_ring *back_prod, *back_cons;
	struct pp me, peer;
	pthread_t t;

	self->p.slot_count = 2;
	ASSERT_EQ(0, baton_ring_create(self->name2, &self->p,
				       BATON_ROLE_PRODUCER, &back_prod));
	ASSERT_EQ(0, baton_ring_open(self->name2, BATON_ROLE_CONSUMER,
				     BATON_BACKEND_AUTO, &back_cons));
	self->prod->spin_limit = self->cons->spin_limit = 0;
	back_prod->spin_limit = back_cons->spin_limit = 0;

	memset(&me, 0, sizeof(me));
	memset(&peer, 0, sizeof(peer));
	me.out = self->prod;
	me.in = back_cons;
	peer.in = self->cons;
	peer.out = back_prod;
	me.rounds = peer.rounds = ROUNDS;
	ASSERT_EQ(0, pthread_create(&t, NULL, pong_thread, &peer));
	ping(&me);
	ASSERT_EQ(0, pthread_join(t, NULL));

	EXPECT_EQ(0, me.err) TH_LOG("ping stopped at %llu",
				    (unsigned long long)me.bad);
	EXPECT_EQ(0, peer.err) TH_LOG("pong stopped at %llu",
				      (unsigned long long)peer.bad);
	/* Both receivers wait for every answer: they must have parked. */
	EXPECT_LT(0U, back_cons->park_calls);
	EXPECT_LT(0U, self->cons->park_calls);
	TH_LOG("%llu rounds: ping parks %llu, pong parks %llu",
	       (unsigned long long)ROUNDS,
	       (unsigned long long)back_cons->park_calls,
	       (unsigned long long)self->cons->park_calls);
	baton_ring_close(back_prod);
	baton_ring_close(back_cons);
}

TEST_F(park, pingpong_processes)
{
	struct child_report *rep = report_page();
	struct baton_ring *back_cons;
	struct pp me;
	pid_t pid;

	if (UNDER_TSAN)
		SKIP(return, "TSan cannot follow memory across processes");
	ASSERT_NE(NULL, rep);
	/* The child's handles pick this up at open. */
	setenv("BATON_SPIN_LIMIT", "0", 1);
	self->p.slot_count = 2;
	ASSERT_EQ(0, baton_ring_create(self->name2, &self->p,
				       BATON_ROLE_CONSUMER, &back_cons));
	baton_ring_close(self->cons);
	self->cons = NULL;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct pp peer = { .rounds = ROUNDS };

		if (baton_ring_open(self->name, BATON_ROLE_CONSUMER,
				    BATON_BACKEND_AUTO, &peer.in) ||
		    baton_ring_open(self->name2, BATON_ROLE_PRODUCER,
				    BATON_BACKEND_AUTO, &peer.out))
			_exit(2);
		if (peer.in->spin_limit || peer.out->spin_limit)
			_exit(3);
		pong(&peer);
		rep->err = peer.err;
		rep->bad_seq = peer.bad;
		rep->park_calls = peer.in->park_calls;
		rep->done = 1;
		baton_ring_close(peer.in);
		baton_ring_close(peer.out);
		_exit(peer.err ? 1 : 0);
	}
	memset(&me, 0, sizeof(me));
	self->prod->spin_limit = 0;
	me.out = self->prod;
	me.in = back_cons;
	me.rounds = ROUNDS;
	ping(&me);
	EXPECT_EQ(0, wait_child(pid));
	EXPECT_EQ(0, me.err) TH_LOG("ping stopped at %llu",
				    (unsigned long long)me.bad);
	EXPECT_EQ(1, rep->done);
	EXPECT_EQ(0, rep->err) TH_LOG("pong stopped at %llu",
				      (unsigned long long)rep->bad_seq);
	EXPECT_LT(0U, back_cons->park_calls);
	EXPECT_LT(0U, rep->park_calls);
	TH_LOG("%llu rounds: ping parks %llu, pong parks %llu",
	       (unsigned long long)ROUNDS,
	       (unsigned long long)back_cons->park_calls,
	       (unsigned long long)rep->park_calls);
	baton_ring_close(back_cons);
	munmap(rep, 4096);
}

/*
 * Streams through the smallest ring with spinning off: the producer
 * parks on full, the consumer on empty, over and over.
 */
FIXTURE(stream) {
	char name[BATON_NAME_MAX];
	struct baton_ring_params p;
};

FIXTURE_VARIANT(stream) {
	uint64_t start;		/* both indices start here */
	uint32_t slot_count;
	uint32_t batch;
};

FIXTURE_VARIANT_ADD(stream, from_zero) {
	.start = 0, .slot_count = 2, .batch = 0,
};

/* Cross the wrap of the index's low half (once the futex word). */
FIXTURE_VARIANT_ADD(stream, across_2e32) {
	.start = (1ULL << 32) - 3000, .slot_count = 2, .batch = 0,
};

FIXTURE_VARIANT_ADD(stream, across_2e64_batch) {
	.start = ~0ULL - 3000, .slot_count = 8, .batch = 5,
};

FIXTURE_SETUP(stream)
{
	force_memfd();
	ring_name(self->name, sizeof(self->name), "stream");
	self->p.kind = BATON_RING_SPSC;
	self->p.slot_count = variant->slot_count;
	self->p.slot_size = 16;
	self->p.mode = 0600;
	self->p.backend = BATON_BACKEND_AUTO;
}

FIXTURE_TEARDOWN(stream)
{
	baton_ring_unlink(self->name, BATON_BACKEND_AUTO);
}

/* Move both indices of a fresh, detached ring, as a long history would. */
static int set_indices(const char *name, uint64_t v)
{
	struct baton_ring_hdr h;
	char path[128];
	int fd, ret = -1;

	shm_path_of(path, sizeof(path), name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
	    pwrite(fd, &v, sizeof(v), (off_t)(h.off.prod_mmap +
					      h.off.prod_tail)) == 8 &&
	    pwrite(fd, &v, sizeof(v), (off_t)(h.off.cons_mmap +
					      h.off.cons_head)) == 8)
		ret = 0;
	close(fd);
	return ret;
}

#define STREAM_MSGS SCALE(20000ULL)

static void stream_attach(struct __test_metadata *_metadata,
			 FIXTURE_DATA(stream) *self,
			 const FIXTURE_VARIANT(stream) *variant,
			 struct baton_ring **prod, struct baton_ring **cons)
{
	ASSERT_EQ(0, baton_ring_create(self->name, &self->p,
				       BATON_ROLE_PRODUCER, prod));
	baton_ring_close(*prod);
	ASSERT_EQ(0, set_indices(self->name, variant->start));
	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_AUTO, prod));
	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_CONSUMER,
				     BATON_BACKEND_AUTO, cons));
	ASSERT_EQ(variant->start, (*prod)->local);
	ASSERT_EQ(variant->start, (*cons)->local);
	(*prod)->spin_limit = 0;
	(*cons)->spin_limit = 0;
}

TEST_F(stream, threads)
{
	struct baton_ring *prod, *cons;
	struct xfer px, cx;
	pthread_t pt, ct;

	stream_attach(_metadata, self, variant, &prod, &cons);
	memset(&px, 0, sizeof(px));
	memset(&cx, 0, sizeof(cx));
	px.r = prod;
	cx.r = cons;
	px.count = cx.count = STREAM_MSGS;
	px.batch = cx.batch = variant->batch;
	px.timeout_ns = cx.timeout_ns = OP_TIMEOUT_NS;
	ASSERT_EQ(0, pthread_create(&ct, NULL, consume_thread, &cx));
	ASSERT_EQ(0, pthread_create(&pt, NULL, produce_thread, &px));
	ASSERT_EQ(0, pthread_join(pt, NULL));
	ASSERT_EQ(0, pthread_join(ct, NULL));
	EXPECT_EQ(0, px.err) TH_LOG("producer stopped at %llu",
				    (unsigned long long)px.bad_seq);
	EXPECT_EQ(0, cx.err) TH_LOG("consumer stopped at %llu",
				    (unsigned long long)cx.bad_seq);
	EXPECT_EQ(px.sum, cx.sum);
	EXPECT_EQ(variant->start + STREAM_MSGS,
		  __atomic_load_n(cons->head, __ATOMIC_ACQUIRE));
	EXPECT_LT(0U, prod->park_calls + cons->park_calls);
	TH_LOG("producer parks %llu, consumer parks %llu",
	       (unsigned long long)prod->park_calls,
	       (unsigned long long)cons->park_calls);
	baton_ring_close(prod);
	baton_ring_close(cons);
}

TEST_F(stream, processes)
{
	struct child_report *rep = report_page();
	struct baton_ring *prod, *cons;
	struct xfer px;
	pid_t pid;

	if (UNDER_TSAN)
		SKIP(return, "TSan cannot follow memory across processes");
	ASSERT_NE(NULL, rep);
	stream_attach(_metadata, self, variant, &prod, &cons);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct xfer cx;

		memset(&cx, 0, sizeof(cx));
		cx.r = cons;
		cx.count = STREAM_MSGS;
		cx.batch = variant->batch;
		cx.timeout_ns = OP_TIMEOUT_NS;
		consume(&cx);
		rep->sum = cx.sum;
		rep->err = cx.err;
		rep->bad_seq = cx.bad_seq;
		rep->park_calls = cons->park_calls;
		rep->done = 1;
		_exit(cx.err ? 1 : 0);
	}
	baton_ring_close(cons);
	memset(&px, 0, sizeof(px));
	px.r = prod;
	px.count = STREAM_MSGS;
	px.batch = variant->batch;
	px.timeout_ns = OP_TIMEOUT_NS;
	produce(&px);
	EXPECT_EQ(0, wait_child(pid));
	EXPECT_EQ(0, px.err);
	EXPECT_EQ(1, rep->done);
	EXPECT_EQ(0, rep->err) TH_LOG("consumer stopped at %llu",
				      (unsigned long long)rep->bad_seq);
	EXPECT_EQ(px.sum, rep->sum);
	EXPECT_EQ(variant->start + STREAM_MSGS,
		  __atomic_load_n(prod->head, __ATOMIC_ACQUIRE));
	EXPECT_LT(0U, prod->park_calls + rep->park_calls);
	TH_LOG("producer parks %llu, consumer parks %llu",
	       (unsigned long long)prod->park_calls,
	       (unsigned long long)rep->park_calls);
	baton_ring_close(prod);
	munmap(rep, 4096);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0
/*
 * mpsc_attribution: which pid a tombstone names, through the raw ABI.
 *
 * Owns the attribution rule of Documentation/mpsc.rst ("Who lost the
 * ticket"): a tombstone names the dead producer that held the ticket, or
 * pid 0 (counted in tombstones_unattributed) when the kernel's records
 * cannot say for certain; it never names a producer that did not hold
 * the ticket. Every test here drives producers through uapi/ and the
 * documented protocol only (selftests/mpsc_common.h, struct mp_raw), one
 * step at a time, each producer in its own process so that it can be
 * killed between any two steps:
 *
 *  - the cases of issue 17: a producer killed after a complete claim is
 *    not blamed for a ticket outside it; a ticket whose holder's record
 *    was forgotten gets pid 0, not a guess from another record's floor;
 *    two producers killed mid-reserve whose floors both reach a ticket
 *    leave it unattributed rather than blamed on the wrong one;
 *  - random kills: producers killed at random microsecond delays and
 *    replaced, a ledger in shared memory saying who took which ticket;
 *    every tombstone's pid must be the ledger's holder or 0, nothing
 *    published may be lost, duplicated or reordered, and the counters
 *    must match what the consumer saw. The time from each kill to the
 *    consumer's passing every ticket taken before it is printed (worst
 *    and mean), never asserted.
 */
#include "mpsc_common.h"

#include <linux/aio_abi.h>

#define MA_WAIT		(5 * BT_NSEC)	/* bound of every wait for progress */

FIXTURE(mpsc_attribution) {
	int dev;
	char name[BATON_NAME_MAX];
	struct mp_raw c;		/* the consumer, the test itself */
};

FIXTURE_SETUP(mpsc_attribution)
{
	BT_REQUIRE_DEV();
	self->dev = bt_dev_open();
	ASSERT_LE(0, self->dev);
	self->c.fd = -1;
	bt_make_name(self->name, sizeof(self->name), "ma");
}

FIXTURE_TEARDOWN(mpsc_attribution)
{
	if (self->c.fd >= 0)
		mp_raw_unmap(&self->c);
	if (self->dev > 0) {
		_test_unlink(self->dev, self->name);
		close(self->dev);
	}
}

/* Create the ring with the consumer role and map it the raw way. */
static int ma_create(int dev, const char *name, uint32_t slots,
		     uint32_t maxp, struct mp_raw *c)
{
	struct baton_ring_create cr;
	int rc = _mp_create(dev, name, BATON_ROLE_CONSUMER, slots, maxp, &cr);

	if (rc)
		return rc;
	return mp_raw_map(c, cr.out_fd, BATON_ROLE_CONSUMER, slots, MP_MSG,
			  &cr.out_off) ? EFAULT : 0;
}

/* ---- producers stepped one protocol step at a time ---- */

enum agent_op {
	AG_FLOOR = 'f',		/* step 1; replies the floor */
	AG_TAKE = 't',		/* step 2, one ticket; replies it */
	AG_CLAIM = 'c',		/* step 3 for that ticket */
	AG_PUBLISH = 'p',	/* step 4: wait for the slot, fill, publish */
	AG_DONE = 'd',		/* step 5 */
};

#define AG_FAIL		(~0ULL)

struct agent {
	pid_t pid;
	int cmd;		/* test -> agent: one op byte */
	int reply;		/* agent -> test: one u64 */
};

static void agent_reply(int fd, uint64_t v)
{
	if (write(fd, &v, sizeof(v)) != sizeof(v))
		_exit(6);
}

static void agent_main(const char *name, uint32_t id, int cmd, int reply)
{
	struct mp_raw r;
	uint64_t t = 0, v, m[2];
	char op;

	if (mp_raw_open(name, BATON_ROLE_PRODUCER, &r)) {
		agent_reply(reply, AG_FAIL);
		_exit(3);
	}
	agent_reply(reply, 0);	/* attached */
	while (read(cmd, &op, 1) == 1) {
		v = 0;
		switch (op) {
		case AG_FLOOR:
			v = mp_raw_floor(&r);
			break;
		case AG_TAKE:
			v = t = mp_raw_take(&r, 1);
			break;
		case AG_CLAIM:
			mp_raw_claim(&r, t, 1);
			break;
		case AG_PUBLISH:
			mp_msg(m, id, t);
			if (mp_raw_wait_free(&r, t, bt_now_ns() + MA_WAIT))
				v = AG_FAIL;
			else
				mp_raw_fill(&r, t, m);
			break;
		case AG_DONE:
			mp_raw_done(&r);
			break;
		default:
			_exit(5);
		}
		agent_reply(reply, v);
	}
	_exit(0);
}

/* Fork a producer that attaches and waits for steps; 0 or -1. */
static int agent_start(struct agent *a, const char *name, uint32_t id)
{
	int to[2], from[2];
	uint64_t v;

	if (pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC))
		return -1;
	a->pid = fork();
	if (a->pid < 0)
		return -1;
	if (!a->pid) {
		close(to[1]);
		close(from[0]);
		agent_main(name, id, to[0], from[1]);
	}
	close(to[0]);
	close(from[1]);
	a->cmd = to[1];
	a->reply = from[0];
	{
		struct pollfd pfd = { .fd = a->reply, .events = POLLIN };

		if (poll(&pfd, 1, 20000) != 1 ||
		    read(a->reply, &v, sizeof(v)) != sizeof(v) || v)
			return -1;
	}
	return 0;
}

/* One step; its reply, or AG_FAIL. */
static uint64_t agent_do(struct agent *a, char op)
{
	struct pollfd pfd = { .fd = a->reply, .events = POLLIN };
	uint64_t v;

	if (write(a->cmd, &op, 1) != 1)
		return AG_FAIL;
	if (poll(&pfd, 1, 20000) != 1 ||
	    read(a->reply, &v, sizeof(v)) != sizeof(v))
		return AG_FAIL;
	return v;
}

/* kill -9 and reap: the kernel has released its file when this returns. */
static int agent_kill(struct agent *a)
{
	int rc;

	kill(a->pid, SIGKILL);
	rc = bt_wait_timeout(a->pid, 20000);
	close(a->cmd);
	close(a->reply);
	return rc;
}

/* A whole push of one message: steps 1 to 5; the ticket, or AG_FAIL. */
static uint64_t agent_push(struct agent *a)
{
	uint64_t t;

	if (agent_do(a, AG_FLOOR) == AG_FAIL)
		return AG_FAIL;
	t = agent_do(a, AG_TAKE);
	if (t == AG_FAIL || agent_do(a, AG_CLAIM) == AG_FAIL ||
	    agent_do(a, AG_PUBLISH) == AG_FAIL ||
	    agent_do(a, AG_DONE) == AG_FAIL)
		return AG_FAIL;
	return t;
}

#define START(a, id) ASSERT_EQ(0, agent_start(a, self->name, id))
#define STEP(a, op, want) ASSERT_EQ((uint64_t)(want), agent_do(a, op))
#define KILL(a) ASSERT_EQ(128 + SIGKILL, agent_kill(a))

/* The next ticket is message (id, ticket). */
#define EXPECT_MSG(id, ticket) do {					\
	uint64_t __w[2];						\
	ASSERT_EQ(MP_RAW_MSG, mp_raw_pop(&self->c,			\
					 bt_now_ns() + MA_WAIT, __w));	\
	EXPECT_EQ((uint64_t)(id) << 48 | (ticket), __w[0]);		\
} while (0)

/* The next ticket is a tombstone naming @pid (0: unattributed). */
#define EXPECT_TOMB(pid) do {						\
	uint64_t __w[2];						\
	ASSERT_EQ(MP_RAW_TOMB, mp_raw_pop(&self->c,			\
					  bt_now_ns() + MA_WAIT, __w));	\
	EXPECT_EQ((uint64_t)(pid), __w[0])				\
		TH_LOG("ticket %llu", (unsigned long long)self->c.pos - 1); \
} while (0)

/* The next ticket is a tombstone naming @pid or, failing certainty, 0. */
static uint64_t ma_tomb(struct __test_metadata *_metadata, struct mp_raw *c)
{
	uint64_t w[2] = { AG_FAIL, 0 };

	EXPECT_EQ(MP_RAW_TOMB, mp_raw_pop(c, bt_now_ns() + MA_WAIT, w));
	return w[0];
}

/*
 * Issue 17, first case. Q writes floor 0; H pushes tickets 0 and 1; P
 * writes floor 2; Q takes ticket 2 and dies before its claim; P takes 3,
 * claims {3, 1} and dies. P held exactly ticket 3: ticket 2 is Q's.
 */
TEST_F(mpsc_attribution, complete_claim_is_not_matched_by_its_floor)
{
	struct agent h, q, p;

	ASSERT_EQ(0, ma_create(self->dev, self->name, 8, 4, &self->c));
	START(&h, 1);
	START(&q, 2);
	START(&p, 3);
	STEP(&q, AG_FLOOR, 0);
	ASSERT_EQ(0, agent_push(&h));
	ASSERT_EQ(1, agent_push(&h));
	STEP(&p, AG_FLOOR, 2);
	STEP(&q, AG_TAKE, 2);
	STEP(&p, AG_TAKE, 3);
	STEP(&p, AG_CLAIM, 0);
	KILL(&q);
	KILL(&p);

	EXPECT_MSG(1, 0);
	EXPECT_MSG(1, 1);
	EXPECT_TOMB(q.pid);
	EXPECT_TOMB(p.pid);
	EXPECT_EQ(2, self->c.mh->tombstones_written);
	EXPECT_EQ(0, self->c.mh->tombstones_unattributed);
	agent_kill(&h);
}

/*
 * The same, then 15 more producers die holding one ticket each with a
 * complete claim: 17 deaths, so Q's record (the oldest) is forgotten.
 * No remembered record can account for ticket 2: pid 0, counted.
 */
TEST_F(mpsc_attribution, forgotten_holder_gives_pid_0)
{
	struct agent h, q, p, o[15];
	unsigned int i;

	ASSERT_EQ(0, ma_create(self->dev, self->name, 32, 8, &self->c));
	START(&h, 1);
	START(&q, 2);
	START(&p, 3);
	STEP(&q, AG_FLOOR, 0);
	ASSERT_EQ(0, agent_push(&h));
	ASSERT_EQ(1, agent_push(&h));
	STEP(&p, AG_FLOOR, 2);
	STEP(&q, AG_TAKE, 2);
	STEP(&p, AG_TAKE, 3);
	STEP(&p, AG_CLAIM, 0);
	KILL(&q);
	KILL(&p);
	for (i = 0; i < 15; i++) {
		START(&o[i], 4 + i);
		STEP(&o[i], AG_FLOOR, 4 + i);
		STEP(&o[i], AG_TAKE, 4 + i);
		STEP(&o[i], AG_CLAIM, 0);
		KILL(&o[i]);
	}

	EXPECT_MSG(1, 0);
	EXPECT_MSG(1, 1);
	EXPECT_TOMB(0);
	EXPECT_TOMB(p.pid);
	for (i = 0; i < 15; i++)
		EXPECT_TOMB(o[i].pid);
	EXPECT_EQ(17, self->c.mh->tombstones_written);
	EXPECT_EQ(1, self->c.mh->tombstones_unattributed);
	agent_kill(&h);
}

/*
 * Q's record is forgotten, and a remembered record R whose floor (0) is
 * at or below Q's ticket died holding nothing: R's floor must not stand
 * in for the record the kernel no longer has. Ticket 2: pid 0.
 */
TEST_F(mpsc_attribution, forgotten_holder_is_not_replaced_by_a_floor)
{
	struct agent h, q, r, o[15];
	unsigned int i;

	ASSERT_EQ(0, ma_create(self->dev, self->name, 32, 8, &self->c));
	START(&h, 1);
	START(&q, 2);
	START(&r, 3);
	STEP(&r, AG_FLOOR, 0);
	STEP(&q, AG_FLOOR, 0);
	ASSERT_EQ(0, agent_push(&h));
	ASSERT_EQ(1, agent_push(&h));
	STEP(&q, AG_TAKE, 2);
	KILL(&q);
	for (i = 0; i < 15; i++) {
		START(&o[i], 4 + i);
		STEP(&o[i], AG_FLOOR, 3 + i);
		STEP(&o[i], AG_TAKE, 3 + i);
		STEP(&o[i], AG_CLAIM, 0);
		KILL(&o[i]);
	}
	KILL(&r);	/* the 17th death: Q's record goes */

	EXPECT_MSG(1, 0);
	EXPECT_MSG(1, 1);
	EXPECT_TOMB(0);
	for (i = 0; i < 15; i++)
		EXPECT_TOMB(o[i].pid);
	EXPECT_EQ(16, self->c.mh->tombstones_written);
	EXPECT_EQ(1, self->c.mh->tombstones_unattributed);
	agent_kill(&h);
}

/*
 * Two producers die between their fetch_add and their claim, both floors
 * at or below both tickets: A (floor 0) holds ticket 2, B (floor 1) holds
 * ticket 1. The records cannot tell which holds which; the highest floor
 * would blame B for both. Each tombstone names its holder or 0.
 */
TEST_F(mpsc_attribution, two_floors_reaching_one_ticket_blame_nobody_wrongly)
{
	struct agent h, a, b;
	uint64_t pid1, pid2;

	ASSERT_EQ(0, ma_create(self->dev, self->name, 8, 4, &self->c));
	START(&h, 1);
	START(&a, 2);
	START(&b, 3);
	STEP(&a, AG_FLOOR, 0);
	ASSERT_EQ(0, agent_push(&h));
	STEP(&b, AG_FLOOR, 1);
	STEP(&b, AG_TAKE, 1);
	STEP(&a, AG_TAKE, 2);
	KILL(&a);
	KILL(&b);

	EXPECT_MSG(1, 0);
	pid1 = ma_tomb(_metadata, &self->c);
	pid2 = ma_tomb(_metadata, &self->c);
	EXPECT_TRUE(pid1 == (uint64_t)b.pid || pid1 == 0)
		TH_LOG("ticket 1 (B's, pid %d) blamed on %llu", (int)b.pid,
		       (unsigned long long)pid1);
	EXPECT_TRUE(pid2 == (uint64_t)a.pid || pid2 == 0)
		TH_LOG("ticket 2 (A's, pid %d) blamed on %llu", (int)a.pid,
		       (unsigned long long)pid2);
	EXPECT_EQ(2, self->c.mh->tombstones_written);
	EXPECT_EQ((pid1 == 0) + (pid2 == 0),
		  self->c.mh->tombstones_unattributed);
	agent_kill(&h);
}

/* ---- the consumer's pid namespace ---- */

/* What the consumer in its own pid namespace saw (pid_ns_consumer()). */
struct ns_seen {
	int64_t holder;		/* the dead producer's pid, as fork() said */
	int64_t named;		/* the pid its tombstone named */
};

/* The consumer's steps (its exit code: the one that failed). */
enum { NS_OK, NS_CREATE, NS_AGENT, NS_STEP, NS_AIO, NS_EARLY, NS_KILL,
       NS_EVENT, NS_POP, NS_NO_AIO };

/*
 * In a new pid namespace: create the ring as its consumer, let producer P
 * take ticket 0 and claim it, wait for readability with an aio poll, and
 * kill P. The release wakes the poll without a key, so aio runs ->poll
 * again from a kworker, and that ->poll writes the tombstone.
 */
static int pid_ns_consumer(const char *name, struct ns_seen *seen)
{
	struct iocb cb = { 0 }, *cbs[1] = { &cb };
	struct timespec ts = { .tv_sec = 20 };
	struct io_event ev;
	aio_context_t ctx = 0;
	struct mp_raw c;
	struct agent a;
	uint64_t w[2];
	int dev = bt_dev_open();

	if (dev < 0 || ma_create(dev, name, 4, 2, &c))
		return NS_CREATE;
	if (agent_start(&a, name, 1))
		return NS_AGENT;
	seen->holder = a.pid;
	if (agent_do(&a, AG_FLOOR) != 0 || agent_do(&a, AG_TAKE) != 0 ||
	    agent_do(&a, AG_CLAIM) == AG_FAIL)
		return NS_STEP;
	cb.aio_lio_opcode = IOCB_CMD_POLL;
	cb.aio_fildes = c.fd;
	cb.aio_buf = POLLIN;
	if (syscall(__NR_io_setup, 1, &ctx))
		return errno == ENOSYS ? NS_NO_AIO : NS_AIO;
	if (syscall(__NR_io_submit, ctx, 1, cbs) != 1)
		return NS_AIO;
	if (syscall(__NR_io_getevents, ctx, 0, 1, &ev,
		    &(struct timespec){ 0 }) != 0)
		return NS_EARLY;	/* a live claim holds ticket 0 */
	if (agent_kill(&a) != 128 + SIGKILL)
		return NS_KILL;
	if (syscall(__NR_io_getevents, ctx, 1, 1, &ev, &ts) != 1 ||
	    !(ev.res & POLLIN))
		return NS_EVENT;
	if (mp_raw_pop(&c, bt_now_ns() + MA_WAIT, w) != MP_RAW_TOMB)
		return NS_POP;
	seen->named = (int64_t)w[0];
	syscall(__NR_io_destroy, ctx);
	mp_raw_unmap(&c);
	_test_unlink(dev, name);
	return NS_OK;
}

/*
 * A tombstone names its holder as the consumer's pid namespace sees it
 * (Documentation/mpsc.rst), whichever task's ->poll writes it: here a
 * kworker's (aio), whose pid namespace is the initial one. The consumer
 * runs as pid 1 of a new namespace; the holder is its child.
 */
TEST_F(mpsc_attribution, aio_poll_names_the_holder_in_the_consumers_pid_ns)
{
	struct ns_seen *seen = (struct ns_seen *)bt_shared_words();
	pid_t outer;
	int st;

	ASSERT_NE(MAP_FAILED, (void *)seen);
	seen->holder = seen->named = -1;
	outer = fork();
	ASSERT_LE(0, outer);
	if (!outer) {
		pid_t inner;

		if (unshare(CLONE_NEWPID))
			_exit(100);
		inner = fork();
		if (inner < 0)
			_exit(101);
		if (!inner)
			_exit(pid_ns_consumer(self->name, seen));
		_exit(bt_wait_timeout(inner, 60000));
	}
	ASSERT_EQ(0, waitpid(outer, &st, 0) == outer ? 0 : -1);
	ASSERT_TRUE(WIFEXITED(st));
	if (WEXITSTATUS(st) == 100)
		SKIP(return, "cannot make a pid namespace (needs root)");
	if (WEXITSTATUS(st) == NS_NO_AIO)
		SKIP(return, "no aio in this kernel (CONFIG_AIO)");
	ASSERT_EQ(NS_OK, WEXITSTATUS(st));
	EXPECT_LT(0, seen->holder);
	EXPECT_EQ(seen->holder, seen->named)
		TH_LOG("the holder is pid %lld in the consumer's namespace",
		       (long long)seen->holder);
	munmap(seen, BT_PAGE);
}

/*
 * One producer dead mid-reserve next to a dead one with a complete claim,
 * both remembered: both are named (the rule is not "always 0").
 */
TEST_F(mpsc_attribution, each_dead_holder_named)
{
	struct agent h, q, p;

	ASSERT_EQ(0, ma_create(self->dev, self->name, 8, 4, &self->c));
	START(&h, 1);
	START(&q, 2);
	START(&p, 3);
	ASSERT_EQ(0, agent_push(&h));
	STEP(&p, AG_FLOOR, 1);
	STEP(&p, AG_TAKE, 1);
	STEP(&p, AG_CLAIM, 0);
	STEP(&q, AG_FLOOR, 2);
	STEP(&q, AG_TAKE, 2);
	KILL(&p);
	KILL(&q);
	ASSERT_EQ(3, agent_push(&h));

	EXPECT_MSG(1, 0);
	EXPECT_TOMB(p.pid);
	EXPECT_TOMB(q.pid);
	EXPECT_MSG(1, 3);
	EXPECT_EQ(2, self->c.mh->tombstones_written);
	EXPECT_EQ(0, self->c.mh->tombstones_unattributed);
	agent_kill(&h);
}

/* ---- random kills against a ledger ---- */

#define RK_PRODS	3		/* producers alive at any time */
#define RK_SLOTS	8
#define RK_GENS		4096		/* producer generations, at most */
#define RK_TICKETS	(1u << 18)	/* ledger size; producers stop short */
#define RK_MARGIN	64		/* tickets left when they stop */
#define RK_KILLS	300		/* default; $BATON_ATTR_KILLS */
#define RK_SECS		30		/* and at most this long */

struct rk_gen {
	int32_t pid;
	uint32_t pending;	/* 1 from its floor until its ledger entries */
	uint64_t floor;		/* the floor of the push in progress */
	uint64_t published;	/* messages published */
	uint64_t tail_at_death;	/* the tail once it was reaped */
	int64_t kill_ns;	/* just before the SIGKILL */
	int64_t reaped_ns;	/* waitpid returned: its file is released */
	uint32_t killed;
	uint32_t opened;	/* its producer fd is open (attached) */
};

struct rk_shared {
	uint32_t stop;		/* producers: finish the push and leave */
	uint32_t gens;		/* generations started */
	uint32_t kills;
	uint32_t pad;
	struct rk_gen gen[RK_GENS];
	uint32_t ledger[RK_TICKETS];	/* ticket -> generation + 1 */
	int64_t passed_ns[RK_TICKETS];	/* when the consumer passed it */
};

static void rk_sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * A producer whose slot stayed taken past its bound: what the shared
 * words say, so that a failure tells a lost wake (the slot free, the
 * word down or up) from a consumer that really stood still.
 */
static void rk_stuck(struct mp_raw *r, uint32_t g, uint64_t t, int rc,
		     int64_t ns)
{
	fprintf(stderr,
		"# producer generation %u: waiting for ticket %llu's slot failed (%d) after %.3f s: seq %#llx, tail %llu, head %llu, waiting words prod page %#x, header %#x\n",
		g, (unsigned long long)t, rc, ns / 1e9,
		(unsigned long long)__atomic_load_n(mp_raw_seq(r, t),
						    __ATOMIC_ACQUIRE),
		(unsigned long long)*r->tail,
		(unsigned long long)(r->head ? *r->head : ~0ULL),
		r->prod_waiting ? *r->prod_waiting : ~0U,
		r->mh ? r->mh->prod_waiting : ~0U);
}

/*
 * Generation @g: pushes of one or two messages through the raw protocol
 * until told to stop. The ledger entries are written right after the
 * fetch_add; a kill before them leaves the generation "pending", with the
 * floor it stored, so the test still knows the tickets it may hold.
 */
static int rk_producer(const char *name, struct rk_shared *sh, uint32_t g,
		       unsigned int seed)
{
	struct rk_gen *me = &sh->gen[g];
	uint64_t seq = 0, t, n, i, f, m[2];
	struct mp_raw r;

	__atomic_store_n(&me->pid, (int32_t)getpid(), __ATOMIC_RELAXED);
	if (mp_raw_open(name, BATON_ROLE_PRODUCER, &r))
		return 3;
	__atomic_store_n(&me->opened, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE)) {
		n = 1 + (rand_r(&seed) % 4 == 0);
		__atomic_store_n(&me->pending, 1, __ATOMIC_RELAXED);
		f = __atomic_load_n(r.tail, __ATOMIC_RELAXED);
		if (f + RK_MARGIN > RK_TICKETS) {
			__atomic_store_n(&me->pending, 0, __ATOMIC_RELAXED);
			break;
		}
		me->floor = f;
		__atomic_store_n(&r.claim->floor, f, __ATOMIC_RELAXED);
		t = mp_raw_take(&r, n);
		for (i = 0; i < n; i++)
			sh->ledger[t + i] = g + 1;
		__atomic_store_n(&me->pending, 0, __ATOMIC_RELAXED);
		mp_raw_claim(&r, t, n);
		for (i = 0; i < n; i++) {
			int64_t w0 = bt_now_ns();
			int rc = mp_raw_wait_free(&r, t + i, w0 + 2 * MA_WAIT);

			if (rc) {
				rk_stuck(&r, g, t + i, rc, bt_now_ns() - w0);
				return 4;
			}
			mp_msg(m, g, seq++);
			mp_raw_fill(&r, t + i, m);
			__atomic_store_n(&me->published, seq, __ATOMIC_RELEASE);
		}
		mp_raw_done(&r);
		if (!(rand_r(&seed) % 8))
			sched_yield();
	}
	mp_raw_unmap(&r);
	return 0;
}

static pid_t rk_spawn(const char *name, struct rk_shared *sh,
		      unsigned int seed)
{
	uint32_t g = sh->gens++;
	pid_t pid = fork();

	if (!pid)
		_exit(rk_producer(name, sh, g, seed));
	if (pid > 0)
		sh->gen[g].pid = pid;
	return pid;
}

/*
 * Wait (5 s at most) until every live producer has its fd open. A ring
 * none of whose producers is attached, drained, is at end of stream: the
 * consumer's pop says EPIPE and it stops reading, so the killer must
 * never kill the last attached producer while the replacements are
 * still starting. 0, or 12.
 */
static int rk_all_attached(const struct rk_shared *sh, const pid_t *live,
			   const uint32_t *gen_of)
{
	int64_t end = bt_now_ns() + MA_WAIT;
	uint32_t i;

	for (i = 0; i < RK_PRODS; i++)
		while (live[i] &&
		       !__atomic_load_n(&sh->gen[gen_of[i]].opened,
					__ATOMIC_ACQUIRE)) {
			if (bt_now_ns() > end)
				return 12;
			rk_sleep_us(100);
		}
	return 0;
}

/*
 * The killer, a process of its own: keeps RK_PRODS producers alive and
 * kills one at random every 0-3 ms, replacing it, @kills times, for
 * RK_SECS, or until a producer reaches the end of the ledger (a fast
 * machine gets there first); then tells the rest to stop. 0, or what
 * went wrong.
 */
static int rk_killer(const char *name, struct rk_shared *sh,
		     uint32_t kills, unsigned int seed,
		     volatile uint64_t *tail)
{
	int64_t end = bt_now_ns() + RK_SECS * BT_NSEC;
	uint32_t gen_of[RK_PRODS], v, i;
	pid_t live[RK_PRODS];
	int rc;

	for (i = 0; i < RK_PRODS; i++) {
		gen_of[i] = sh->gens;
		live[i] = rk_spawn(name, sh, rand_r(&seed));
		if (live[i] < 0)
			return 10;
	}
	while (sh->kills < kills && bt_now_ns() < end &&
	       sh->gens < RK_GENS && !sh->stop) {
		rk_sleep_us(rand_r(&seed) % 3000);
		if (rk_all_attached(sh, live, gen_of))
			return 12;
		v = rand_r(&seed) % RK_PRODS;
		sh->gen[gen_of[v]].kill_ns = bt_now_ns();
		kill(live[v], SIGKILL);
		rc = bt_wait(live[v]);
		sh->gen[gen_of[v]].reaped_ns = bt_now_ns();
		if (rc == 0) {
			/* it reached the end of the ledger; already reaped */
			live[v] = 0;
			break;
		}
		if (rc != 128 + SIGKILL)
			return 20 + (rc & 63);
		/* reaped: every ticket it took is below this tail */
		sh->gen[gen_of[v]].tail_at_death =
			__atomic_load_n(tail, __ATOMIC_ACQUIRE);
		sh->gen[gen_of[v]].killed = 1;
		sh->kills++;
		gen_of[v] = sh->gens;
		live[v] = rk_spawn(name, sh, rand_r(&seed));
		if (live[v] < 0)
			return 11;
	}
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < RK_PRODS; i++) {
		if (!live[i])
			continue;
		rc = bt_wait_timeout(live[i], 30000);
		if (rc && !(rc == 128 + SIGKILL && sh->gen[gen_of[i]].killed))
			return 30 + (rc & 63);
	}
	return 0;
}

struct rk_tomb {
	uint64_t ticket;
	uint64_t pid;
};

/* Generations that died before their ledger entries and may hold @t. */
static uint32_t rk_pending_holders(const struct rk_shared *sh, uint64_t t,
				   uint64_t pid, bool *pid_among)
{
	uint32_t g, n = 0;

	*pid_among = false;
	for (g = 0; g < sh->gens; g++) {
		const struct rk_gen *x = &sh->gen[g];

		if (!x->killed || !x->pending || x->floor > t ||
		    t >= x->tail_at_death)
			continue;
		n++;
		if ((uint64_t)x->pid == pid)
			*pid_among = true;
	}
	return n;
}

/*
 * The stall a death causes: from the kill to the consumer passing the last
 * ticket the victim left behind (its last tombstone), which every ticket
 * a survivor took after it waited for. Printed, never asserted.
 */
static void rk_stalls(struct __test_metadata *_metadata,
		      const struct rk_shared *sh, const struct rk_tomb *tombs,
		      size_t ntombs)
{
	int64_t *last = calloc(sh->gens, sizeof(*last));
	int64_t worst = 0, sum = 0, rworst = 0, rsum = 0, d, r;
	uint32_t g, n = 0;
	size_t i;

	if (!last)
		return;
	for (i = 0; i < ntombs; i++) {
		g = sh->ledger[tombs[i].ticket];
		if (g)
			last[g - 1] = sh->passed_ns[tombs[i].ticket];
	}
	for (g = 0; g < sh->gens; g++) {
		if (!last[g])
			continue;
		d = last[g] - sh->gen[g].kill_ns;
		r = sh->gen[g].reaped_ns - sh->gen[g].kill_ns;
		worst = d > worst ? d : worst;
		rworst = r > rworst ? r : rworst;
		sum += d;
		rsum += r;
		n++;
	}
	TH_LOG("stall after a death (kill -> consumer past the victim's last tombstone), %u kills that left tickets: worst %.2f ms, mean %.2f ms; of which kill -> victim reaped (exit, file released): worst %.2f ms, mean %.2f ms",
	       n, worst / 1e6, n ? sum / 1e6 / n : 0.0, rworst / 1e6,
	       n ? rsum / 1e6 / n : 0.0);
	free(last);
}

/*
 * A pop that took over a second: which ticket, whose it was by the ledger
 * (0: nobody's yet), and that generation's fate. Printed, never asserted:
 * it says what a stall waited on.
 */
static void rk_log_stall(struct __test_metadata *_metadata,
			 const struct rk_shared *sh, uint64_t c, int64_t ns,
			 int rc, uint64_t tail)
{
	uint32_t g = sh->ledger[c];
	const struct rk_gen *x = g ? &sh->gen[g - 1] : NULL;

	TH_LOG("pop of ticket %llu took %.1f s (rc %d, tail %llu): ledger generation %u, pid %d, killed %u, pending %u, published %llu",
	       (unsigned long long)c, ns / 1e9, rc, (unsigned long long)tail,
	       g, x ? x->pid : 0, x ? x->killed : 0, x ? x->pending : 0,
	       (unsigned long long)(x ? x->published : 0));
}

TEST_F_TIMEOUT(mpsc_attribution, random_kills_blame_only_holders, 600)
{
	const char *env = getenv("BATON_ATTR_KILLS");
	uint32_t kills = env ? (uint32_t)strtoul(env, NULL, 0) : RK_KILLS;
	unsigned int seed = (unsigned int)getpid() * 2654435761u;
	uint64_t *next, w[2], exact = 0, zero = 0, unledgered = 0;
	struct rk_tomb *tombs;
	size_t ntombs = 0, i;
	struct rk_shared *sh;
	pid_t killer;
	int64_t t0 = bt_now_ns();
	int rc;

	TH_LOG("seed %u, %u kills at most", seed, kills);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	next = calloc(RK_GENS, sizeof(*next));
	tombs = calloc(RK_TICKETS, sizeof(*tombs));
	ASSERT_TRUE(next && tombs);
	ASSERT_EQ(0, ma_create(self->dev, self->name, RK_SLOTS, RK_PRODS + 1,
			       &self->c));
	killer = fork();
	ASSERT_LE(0, killer);
	if (!killer)
		_exit(rk_killer(self->name, sh, kills, seed, self->c.tail));

	for (;;) {
		uint64_t c = self->c.pos;
		int64_t popped = bt_now_ns();

		rc = mp_raw_pop(&self->c, popped + 2 * MA_WAIT, w);
		popped = bt_now_ns() - popped;
		if (popped > BT_NSEC && c < RK_TICKETS)
			rk_log_stall(_metadata, sh, c, popped, rc,
				     *self->c.tail);
		if (rc == MP_RAW_TOMB) {
			tombs[ntombs].ticket = c;
			tombs[ntombs++].pid = w[0];
		} else if (rc == MP_RAW_MSG) {
			uint32_t g = mp_prod(w);

			ASSERT_TRUE(mp_ok(w)) TH_LOG("ticket %llu",
						     (unsigned long long)c);
			ASSERT_GT(RK_GENS, g);
			ASSERT_EQ(next[g], mp_seq(w))
				TH_LOG("generation %u: duplicate or gap", g);
			next[g]++;
		} else {
			break;
		}
		ASSERT_GT(RK_TICKETS, c);
		sh->passed_ns[c] = bt_now_ns();
	}
	/* every producer gone, everything taken passed: end of stream */
	ASSERT_EQ(-EPIPE, rc) TH_LOG("at ticket %llu",
				     (unsigned long long)self->c.pos);
	ASSERT_EQ(0, bt_wait_timeout(killer, 60000));
	ASSERT_EQ(self->c.pos, *self->c.tail);

	/* nothing published is lost: at most the one in flight is extra */
	for (i = 0; i < sh->gens; i++) {
		const struct rk_gen *x = &sh->gen[i];

		ASSERT_LE(x->published, next[i]) TH_LOG("generation %zu", i);
		ASSERT_GE(x->published + 1, next[i]) TH_LOG("generation %zu", i);
		if (!x->killed)
			ASSERT_EQ(x->published, next[i]);
	}
	/* each tombstone names the ledger's holder, or nobody */
	for (i = 0; i < ntombs; i++) {
		uint64_t t = tombs[i].ticket, pid = tombs[i].pid;
		uint32_t g1 = sh->ledger[t];
		bool among;

		zero += !pid;
		if (g1) {
			const struct rk_gen *x = &sh->gen[g1 - 1];

			ASSERT_TRUE(x->killed) TH_LOG("ticket %llu of a live producer tombstoned",
						      (unsigned long long)t);
			EXPECT_TRUE(pid == 0 || pid == (uint64_t)x->pid)
				TH_LOG("ticket %llu of pid %d blamed on %llu",
				       (unsigned long long)t, x->pid,
				       (unsigned long long)pid);
			exact += pid != 0;
			continue;
		}
		unledgered++;
		ASSERT_LT(0, rk_pending_holders(sh, t, pid, &among))
			TH_LOG("ticket %llu: no dead producer can hold it",
			       (unsigned long long)t);
		EXPECT_TRUE(pid == 0 || among)
			TH_LOG("ticket %llu blamed on %llu, not a possible holder",
			       (unsigned long long)t, (unsigned long long)pid);
	}
	EXPECT_EQ(ntombs, self->c.mh->tombstones_written);
	EXPECT_EQ(zero, self->c.mh->tombstones_unattributed);
	TH_LOG("%.1f s: %u kills, %u generations, %llu tickets, %zu tombstones: %llu named by the ledger's holder, %llu pid 0, %llu taken before the ledger entry",
	       (bt_now_ns() - t0) / 1e9, sh->kills, sh->gens,
	       (unsigned long long)self->c.pos, ntombs,
	       (unsigned long long)exact, (unsigned long long)zero,
	       (unsigned long long)unledgered);
	rk_stalls(_metadata, sh, tombs, ntombs);
	EXPECT_LT(0, ntombs) TH_LOG("no kill ever left a ticket behind");
	free(tombs);
	free(next);
	munmap(sh, sizeof(*sh));
}

TEST_HARNESS_MAIN

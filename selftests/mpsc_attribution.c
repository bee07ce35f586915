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

#define MA_WAIT		(5 * BT_NSEC)	/* bound of every wait for progress */

FIXTURE(ma) {
	int dev;
	char name[BATON_NAME_MAX];
	struct mp_raw c;		/* the consumer, the test itself */
};

FIXTURE_SETUP(ma)
{
	BT_REQUIRE_DEV();
	self->dev = bt_dev_open();
	ASSERT_LE(0, self->dev);
	self->c.fd = -1;
	bt_make_name(self->name, sizeof(self->name), "ma");
}

FIXTURE_TEARDOWN(ma)
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
TEST_F(ma, complete_claim_is_not_matched_by_its_floor)
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
TEST_F(ma, forgotten_holder_gives_pid_0)
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
TEST_F(ma, forgotten_holder_is_not_replaced_by_a_floor)
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
TEST_F(ma, two_floors_reaching_one_ticket_blame_nobody_wrongly)
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

/*
 * One producer dead mid-reserve next to a dead one with a complete claim,
 * both remembered: both are named (the rule is not "always 0").
 */
TEST_F(ma, each_dead_holder_named)
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

TEST_HARNESS_MAIN

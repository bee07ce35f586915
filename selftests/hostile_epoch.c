// SPDX-License-Identifier: GPL-2.0
/*
 * hostile_epoch: one registered participant of an epoch domain writes
 * garbage into every word of its own participant region (announcement,
 * queue tail, queue head, retirement entries) while honest participants
 * read, retire and synchronize.
 *
 * Owns the epoch half of the threat model
 * (Documentation/threat-model.rst). What must hold:
 *  - safety: a victim reader sits in one read section at epoch e0 for the
 *    whole attack; no SYNCHRONIZE, POLL or COLLECT may report e0 (or
 *    anything retired after it) quiescent meanwhile, and the frontier in
 *    the header stays below e0. A scribbled announcement may stall
 *    reclamation; it may never advance it;
 *  - liveness: every victim call is bounded (synchronize with a deadline,
 *    poll, collect) and returns a documented errno within its timeout
 *    (plus HX_HANG_NS of slack); once the attacker is gone, a
 *    synchronize on the newest retirement succeeds;
 *  - the kernel side (register, collect, synchronize, poll, kick) called
 *    by the attacker with garbage in place returns documented errnos;
 *  - the attacker's exit with a scribbled queue leaves no participant
 *    index stuck: afterwards every index can be registered again.
 * Each run prints its seed; BATON_HOSTILE_SEED=<seed> replays it.
 */
#include "common.h"
#include "helpers/hostile.h"

#define ATTACK_MS	2500
#define AFTER_MS	300
#define VICTIM_TO_NS	(20 * BT_MSEC)
#define PARTS		4
#define QLEN		8

struct he_shared {
	uint32_t stop;		/* the attack is over */
	uint32_t done;		/* the victims stop */
	uint32_t ready;
	uint32_t holding;	/* the reader is inside its section at e0 */
	uint64_t e0;
	uint64_t writes;
	uint64_t violations;	/* quiescence reported while e0 held */
	uint64_t first_bad_frontier;
	struct hx_counts c[3];	/* attacker, reader, destroyer */
};

enum { EX_OK = 0, EX_SETUP = 1, EX_BAD = 2, EX_HUNG = 3, EX_UNSAFE = 4,
       EX_STUCK = 5 };
enum { C_REGISTER = 1, C_COLLECT, C_SYNC, C_POLL, C_KICK, C_RETIRE };

static const char *const call_names[] = {
	"?", "register", "collect", "synchronize", "poll", "kick", "retire",
};

static bool he_flag(const uint32_t *f)
{
	return __atomic_load_n(f, __ATOMIC_ACQUIRE);
}

static int he_exit(const struct hx_counts *c)
{
	if (c->bad)
		return EX_BAD;
	return c->hung ? EX_HUNG : EX_OK;
}

static int _he_sync(int fd, uint64_t epoch, int64_t timeout_ns,
		    struct baton_epoch_sync *s)
{
	memset(s, 0, sizeof(*s));
	s->size = sizeof(*s);
	s->flags = BATON_EPOCH_SYNC_DEADLINE;
	s->epoch = epoch;
	s->deadline_ns = bt_now_ns() + timeout_ns;
	return bt_ioctl(fd, BATON_EPOCH_IOC_SYNCHRONIZE, s);
}

static int _he_poll(int fd, uint64_t epoch, struct baton_epoch_poll *p)
{
	memset(p, 0, sizeof(*p));
	p->size = sizeof(*p);
	p->epoch = epoch;
	return bt_ioctl(fd, BATON_EPOCH_IOC_POLL, p);
}

static int _he_collect(int fd, struct baton_epoch_collect *c)
{
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	return bt_ioctl(fd, BATON_EPOCH_IOC_COLLECT, c);
}

/* ---- the attacker ---- */

static int he_attacker(const char *name, struct he_shared *sh, uint64_t seed)
{
	struct hx_counts *c = &sh->c[0];
	struct baton_epoch_register reg;
	struct baton_epoch_collect col;
	struct baton_epoch_sync sy;
	struct baton_epoch_poll po;
	struct hx_target t = { 0 };
	struct baton_epoch *d;
	struct hx_rng rng;
	uint8_t *self;
	uint64_t g;
	int64_t t0;
	int fd, i;

	hx_seed(&rng, seed);
	if (baton_epoch_open(name, BATON_BACKEND_KMOD, &d) ||
	    baton_epoch_register(d) < 0)
		return EX_SETUP;
	fd = baton_epoch_fd(d);
	/* The whole region, writable: it is ours. */
	self = mmap(NULL, d->off.self_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		    fd, (off_t)d->off.self_mmap);
	if (self == MAP_FAILED)
		return EX_SETUP;
	hx_add_word(&t, "ann", self + d->off.ann, 8, 2);
	hx_add_word(&t, "q_tail", self + d->off.q_tail, 8, QLEN);
	hx_add_word(&t, "q_head", self + d->off.q_head, 8, QLEN);
	for (i = 0; i < 3; i++) {
		uint8_t *ent = self + d->off.q_entries +
			       (size_t)i * sizeof(struct baton_epoch_entry);

		hx_add_word(&t, "entry.epoch", ent + 8, 8, 2);
		hx_add_word(&t, "entry.handle", ent, 8, 0);
	}
	hx_add_region(&t, "self", self, d->off.self_size);
	__atomic_add_fetch(&sh->ready, 1, __ATOMIC_ACQ_REL);

	while (!he_flag(&sh->stop)) {
		g = baton_epoch_global(d);
		for (i = 0; i < 16; i++)
			hx_scribble(&t, &rng);
		/* Announcements near the global, active or not, and epoch 0. */
		switch (hx_below(&rng, 4)) {
		case 0:
			hx_store(&t, &t.words[0],
				 BATON_EPOCH_ANN(hx_garbage(&rng, g, 2)));
			break;
		case 1:
			hx_store(&t, &t.words[0], BATON_EPOCH_ANN(0));
			break;
		default:
			break;
		}
		t0 = bt_now_ns();
		switch (hx_below(&rng, 7)) {
		case 0:
			memset(&reg, 0, sizeof(reg));
			reg.size = sizeof(reg);
			HX_COUNT(c, C_REGISTER,
				 bt_ioctl(fd, BATON_EPOCH_IOC_REGISTER, &reg),
				 EBUSY);
			break;
		case 1:
			HX_COUNT(c, C_COLLECT, _he_collect(fd, &col), 0);
			break;
		case 2:
			HX_COUNT(c, C_SYNC,
				 _he_sync(fd, hx_garbage(&rng, g, 2),
					  2 * BT_MSEC, &sy),
				 ETIMEDOUT, EINVAL, EINTR);
			hx_timed(c, t0, 2 * BT_MSEC);
			break;
		case 3:
			HX_COUNT(c, C_POLL,
				 _he_poll(fd, hx_garbage(&rng, g, 2), &po),
				 EINVAL);
			break;
		case 4:
			HX_COUNT(c, C_KICK,
				 ioctl(fd, BATON_EPOCH_IOC_KICK, 0UL) ? errno : 0,
				 0);
			break;
		case 5:
			HX_COUNT(c, C_KICK,
				 ioctl(fd, BATON_EPOCH_IOC_KICK,
				       (unsigned long)hx_next(&rng) | 1) ?
				 errno : 0, EINVAL);
			break;
		default:
			break;
		}
	}
	__atomic_store_n(&sh->writes, t.writes, __ATOMIC_RELEASE);
	/* Exit with the garbage in place: the release must validate it. */
	return he_exit(c);
}

/* ---- the victims ---- */

/* Holds one section at e0 for the whole attack, then short sections. */
static int he_reader(const char *name, struct he_shared *sh)
{
	struct hx_counts *c = &sh->c[1];
	struct baton_epoch *d;

	if (baton_epoch_open(name, BATON_BACKEND_KMOD, &d) ||
	    baton_epoch_register(d) < 0)
		return EX_SETUP;
	__atomic_store_n(&sh->e0, baton_epoch_enter(d), __ATOMIC_RELAXED);
	__atomic_store_n(&sh->holding, 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&sh->ready, 1, __ATOMIC_ACQ_REL);
	while (!he_flag(&sh->stop))
		bt_sleep_ms(5);
	/* Before the exit store: see he_quiescent_while_held(). */
	__atomic_store_n(&sh->holding, 0, __ATOMIC_SEQ_CST);
	baton_epoch_exit(d);
	while (!he_flag(&sh->done)) {
		baton_epoch_enter(d);
		c->calls++;
		c->ok++;
		baton_epoch_exit(d);
		bt_sleep_ms(1);
	}
	baton_epoch_close(d);
	return EX_OK;
}

/*
 * Record a violation if something said "quiescent at @epoch" although
 * the reader held e0 <= @epoch from before the call until after it. The
 * reader clears @holding before its exit store, so a legitimate answer
 * that saw the exit also lets the second read see @holding clear.
 */
static void he_check_safe(struct he_shared *sh, bool held_before,
			  uint64_t epoch, bool quiescent, uint64_t frontier)
{
	bool held_after = __atomic_load_n(&sh->holding, __ATOMIC_SEQ_CST);

	if (!held_before || !held_after || epoch < sh->e0)
		return;
	if (quiescent || frontier >= sh->e0) {
		if (!__atomic_fetch_add(&sh->violations, 1, __ATOMIC_RELAXED))
			sh->first_bad_frontier = frontier;
	}
}

static int he_destroyer(const char *name, struct he_shared *sh,
			uint64_t seed)
{
	struct hx_counts *c = &sh->c[2];
	struct baton_epoch_collect col;
	struct baton_epoch_sync sy;
	struct baton_epoch_poll po;
	struct baton_epoch *d;
	struct hx_rng rng;
	uint64_t handle = 0, last = 1;
	int fd, e, ret;

	hx_seed(&rng, seed);
	if (baton_epoch_open(name, BATON_BACKEND_KMOD, &d) ||
	    baton_epoch_register(d) < 0)
		return EX_SETUP;
	fd = baton_epoch_fd(d);
	__atomic_add_fetch(&sh->ready, 1, __ATOMIC_ACQ_REL);
	while (!he_flag(&sh->done)) {
		bool held = __atomic_load_n(&sh->holding, __ATOMIC_SEQ_CST);
		int64_t t0 = bt_now_ns();
		uint64_t r;

		switch (hx_below(&rng, 4)) {
		case 0:
			ret = baton_epoch_retire(d, ++handle, 0, &r);
			HX_COUNT(c, C_RETIRE, -ret, ENOSPC);
			if (!ret)
				last = r;
			break;
		case 1:
			e = _he_sync(fd, last, VICTIM_TO_NS, &sy);
			HX_COUNT(c, C_SYNC, e, ETIMEDOUT, EINTR);
			hx_timed(c, t0, VICTIM_TO_NS);
			he_check_safe(sh, held, last, !e, sy.out_frontier);
			break;
		case 2:
			e = _he_poll(fd, sh->e0, &po);
			HX_COUNT(c, C_POLL, e, 0);
			he_check_safe(sh, held, sh->e0, !e && po.out_quiescent,
				      po.out_frontier);
			break;
		default:
			e = _he_collect(fd, &col);
			HX_COUNT(c, C_COLLECT, e, 0);
			he_check_safe(sh, held, sh->e0, false,
				      e ? 0 : col.out_frontier);
			break;
		}
		he_check_safe(sh, held, sh->e0, false,
			      __atomic_load_n(&d->hdr->frontier,
					      __ATOMIC_ACQUIRE));
	}
	/* The attacker is gone and the reader's sections are short. */
	ret = baton_epoch_retire(d, ++handle, 0, &last);
	if (ret == -ENOSPC) {
		baton_epoch_collect(d, NULL, NULL);
		baton_epoch_collect(d, NULL, NULL);
		ret = baton_epoch_retire(d, ++handle, 0, &last);
	}
	if (ret || baton_epoch_synchronize(d, last, 20 * BT_NSEC, NULL))
		return EX_STUCK;
	baton_epoch_close(d);
	if (__atomic_load_n(&sh->violations, __ATOMIC_RELAXED))
		return EX_UNSAFE;
	return he_exit(c);
}

/* ---- the test ---- */

FIXTURE(hostile_epoch) {
	char name[64];
	int dev;
	uint64_t seed;
	struct he_shared *sh;
};

FIXTURE_SETUP(hostile_epoch)
{
	BT_REQUIRE_DEV();
	bt_make_name(self->name, sizeof(self->name), "he");
	self->dev = bt_dev_open();
	ASSERT_LE(0, self->dev);
	self->sh = mmap(NULL, sizeof(*self->sh), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
	memset(self->sh, 0, sizeof(*self->sh));
	self->seed = hx_run_seed();
	TH_LOG("seed %llu (BATON_HOSTILE_SEED replays it)",
	       (unsigned long long)self->seed);
}

FIXTURE_TEARDOWN(hostile_epoch)
{
	struct baton_unlink u;

	memset(&u, 0, sizeof(u));
	u.size = sizeof(u);
	snprintf(u.name, sizeof(u.name), "%s", self->name);
	if (self->dev >= 0) {
		bt_ioctl(self->dev, BATON_IOC_EPOCH_UNLINK, &u);
		close(self->dev);
	}
	munmap(self->sh, sizeof(*self->sh));
}

static void he_log(struct __test_metadata *_metadata, const char *who,
		   const struct hx_counts *c)
{
	TH_LOG("%s: %llu calls: %llu ok, %llu timeout/again, "
	       "%llu other documented, %llu undocumented (first: errno %d "
	       "from %s), %llu hung",
	       who, (unsigned long long)c->calls, (unsigned long long)c->ok,
	       (unsigned long long)c->again, (unsigned long long)c->other_ok,
	       (unsigned long long)c->bad, c->bad_errno,
	       call_names[c->bad_call], (unsigned long long)c->hung);
}

TEST_F_TIMEOUT(hostile_epoch, participant_scribbles, 120)
{
	struct he_shared *sh = self->sh;
	struct baton_epoch *fresh[PARTS];
	struct baton_epoch_create cr;
	struct baton_epoch_stats st;
	pid_t reader, destroyer, attacker;
	int i, rc;

	memset(&cr, 0, sizeof(cr));
	cr.size = sizeof(cr);
	cr.max_participants = PARTS;
	cr.queue_len = QLEN;
	cr.mode = 0600;
	snprintf(cr.name, sizeof(cr.name), "%s", self->name);
	ASSERT_EQ(0, bt_ioctl(self->dev, BATON_IOC_EPOCH_CREATE, &cr));
	close(cr.out_fd);

	reader = fork();
	if (!reader)
		_exit(he_reader(self->name, sh));
	ASSERT_LE(0, reader);
	for (i = 0; i < 2000 && !he_flag(&sh->holding); i++)
		bt_sleep_ms(5);
	ASSERT_TRUE(he_flag(&sh->holding));
	destroyer = fork();
	if (!destroyer)
		_exit(he_destroyer(self->name, sh, self->seed + 1));
	ASSERT_LE(0, destroyer);
	attacker = fork();
	if (!attacker)
		_exit(he_attacker(self->name, sh, self->seed));
	ASSERT_LE(0, attacker);
	for (i = 0; i < 2000 && __atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE) < 3; i++)
		bt_sleep_ms(5);

	bt_sleep_ms(ATTACK_MS);
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	rc = bt_wait_timeout(attacker, 30000);
	he_log(_metadata, "attacker", &sh->c[0]);
	TH_LOG("attacker wrote %llu hostile values",
	       (unsigned long long)sh->writes);
	EXPECT_EQ(EX_OK, rc);
	/* An attack that wrote nothing would prove nothing. */
	EXPECT_LT(0U, sh->writes);

	bt_sleep_ms(AFTER_MS);
	__atomic_store_n(&sh->done, 1, __ATOMIC_RELEASE);
	rc = bt_wait_timeout(destroyer, 60000);
	he_log(_metadata, "destroyer", &sh->c[2]);
	TH_LOG("e0 %llu: %llu reports of quiescence while it was held "
	       "(first frontier %llu)", (unsigned long long)sh->e0,
	       (unsigned long long)sh->violations,
	       (unsigned long long)sh->first_bad_frontier);
	EXPECT_EQ(0U, sh->violations);
	EXPECT_EQ(EX_OK, rc);
	EXPECT_LT(0U, sh->c[2].calls);
	EXPECT_EQ(EX_OK, bt_wait_timeout(reader, 30000));

	/* No index is stuck: every one can be registered again. */
	for (i = 0; i < PARTS; i++) {
		ASSERT_EQ(0, baton_epoch_open(self->name, BATON_BACKEND_KMOD,
					      &fresh[i]));
		EXPECT_LE(0, baton_epoch_collect(fresh[i], NULL, NULL));
		EXPECT_LE(0, baton_epoch_collect(fresh[i], NULL, NULL));
		EXPECT_LE(0, baton_epoch_register(fresh[i]));
	}
	ASSERT_EQ(0, baton_epoch_stats(fresh[0], &st));
	TH_LOG("domain: global %llu frontier %llu bad_words %llu orphaned "
	       "%llu orphans_completed %llu", (unsigned long long)st.global,
	       (unsigned long long)st.frontier,
	       (unsigned long long)st.bad_words,
	       (unsigned long long)st.orphaned,
	       (unsigned long long)st.orphans_completed);
	EXPECT_LE(st.frontier, st.global);
	EXPECT_EQ((uint64_t)PARTS, st.participants);
	for (i = 0; i < PARTS; i++)
		baton_epoch_close(fresh[i]);
}

TEST_HARNESS_MAIN

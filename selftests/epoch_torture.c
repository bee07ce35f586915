// SPDX-License-Identifier: GPL-2.0
/*
 * Epoch torture on the real module (rcutorture / ck_epoch style, bounded
 * for CI): reader processes check, inside every read section, that no
 * object they can reach is poisoned, while writer processes replace
 * objects, destroy them synchronously (retire + SYNCHRONIZE) and then
 * poison them. Then the same with readers killed by SIGKILL at random
 * points, sections included. 0 violations, and the domain ends clean.
 * The core is selftests/epoch_torture.h, shared with the host test.
 */
#include "common.h"
#include "epoch_torture.h"

/* BATON_EPOCH_TORTURE_MS overrides the run length (default 8 s). */
static long torture_ms(void)
{
	const char *e = getenv("BATON_EPOCH_TORTURE_MS");

	return e && *e ? atol(e) : 8000;
}

FIXTURE(epoch_torture) {
	char name[BATON_NAME_MAX];
	struct baton_epoch *d;
	struct et_shared *s;
};

FIXTURE_SETUP(epoch_torture)
{
	struct baton_epoch_params p = { 16, 16, 0600, BATON_BACKEND_KMOD };

	BT_REQUIRE_DEV();
	bt_make_name(self->name, sizeof(self->name), "et");
	ASSERT_EQ(0, baton_epoch_create(self->name, &p, &self->d));
	self->s = et_setup();
	ASSERT_NE(NULL, self->s);
}

FIXTURE_TEARDOWN(epoch_torture)
{
	baton_epoch_close(self->d);
	baton_epoch_unlink(self->name, BATON_BACKEND_KMOD);
	munmap(self->s, sizeof(*self->s));
}

TEST_F_TIMEOUT(epoch_torture, readers_writers, 120)
{
	struct baton_epoch_stats st;

	EXPECT_EQ(0, et_run(self->s, self->name, BATON_BACKEND_KMOD, 2,
			    torture_ms()));
	baton_epoch_stats(self->d, &st);
	TH_LOG("sections %llu destroys %llu violations %llu; collections %llu sync_waits %llu kicks %llu",
	       (unsigned long long)self->s->sections,
	       (unsigned long long)self->s->destroys,
	       (unsigned long long)self->s->violations,
	       (unsigned long long)st.collections,
	       (unsigned long long)st.sync_waits,
	       (unsigned long long)st.kicks);
	EXPECT_EQ(0U, self->s->violations);
	EXPECT_LT(100U, self->s->destroys);
	EXPECT_LT(100U, self->s->sections);
	EXPECT_EQ(0U, self->s->timeouts);
	EXPECT_EQ(0U, st.participants);
	EXPECT_EQ(0U, self->d->hdr->sync_waiters);
	EXPECT_EQ(0U, st.bad_words);
}

/*
 * Readers that die at random points (inside sections most of the time):
 * writers must keep making progress, with no violation among the
 * readers that live long enough to report.
 */
TEST_F_TIMEOUT(epoch_torture, kill9_readers, 120)
{
	struct et_shared *s = self->s;
	struct baton_epoch_stats st;
	long ms = torture_ms() / 2, rounds = 0;
	pid_t w[ET_WRITERS];
	int i, rc;
	int64_t end;

	for (i = 0; i < ET_WRITERS; i++) {
		w[i] = fork();
		ASSERT_LE(0, w[i]);
		if (w[i] == 0)
			_exit(et_writer(s, self->name, BATON_BACKEND_KMOD, i));
	}
	end = bt_now_ns() + ms * BT_MSEC;
	while (bt_now_ns() < end) {
		pid_t r = fork();

		ASSERT_LE(0, r);
		if (r == 0)
			_exit(et_reader(s, self->name, BATON_BACKEND_KMOD));
		bt_sleep_ms(20 + (int)(bt_mix((uint64_t)rounds) % 60));
		kill(r, SIGKILL);
		rc = bt_wait(r);
		EXPECT_TRUE(rc == 128 + SIGKILL || rc == 0);
		rounds++;
	}
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < ET_WRITERS; i++)
		EXPECT_EQ(0, bt_wait_timeout(w[i], 30000));
	baton_epoch_stats(self->d, &st);
	TH_LOG("%ld readers killed; destroys %llu; releases %llu",
	       rounds, (unsigned long long)s->destroys,
	       (unsigned long long)st.participant_releases);
	EXPECT_LT(0U, s->destroys);
	EXPECT_EQ(0U, s->timeouts);
	EXPECT_EQ(0U, s->violations);
	EXPECT_EQ(0U, st.participants);
	EXPECT_GE((uint64_t)rounds + ET_WRITERS, st.participant_releases);
	EXPECT_LE((uint64_t)ET_WRITERS, st.participant_releases);
}

TEST_HARNESS_MAIN

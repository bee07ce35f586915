// SPDX-License-Identifier: MIT
/*
 * Epoch domains on the memfd backend, under ASan/UBSan and TSan: the
 * lifecycle and its errnos, enter/exit/retire/synchronize, the full queue
 * (-ENOSPC, nothing consumed early), the aliasing check (a retirement that
 * races the epoch advance is never consumed while a reader holds its
 * epoch), a dead participant, the synchronize deadline with the holder's
 * pid, busy readers that do not kick for a straggler, and the torture (threads here; processes in the fork case, which
 * TSan cannot follow and skips).
 */
#include "kselftest_harness.h"
#include "common.h"
#include "../epoch_torture.h"

#include <pthread.h>

FIXTURE(epoch_basic) {
	char name[BATON_NAME_MAX];
	struct baton_epoch_params p;
	struct baton_epoch *d;
};

FIXTURE_SETUP(epoch_basic)
{
	force_memfd();
	ring_name(self->name, sizeof(self->name), "ep");
	baton_epoch_unlink(self->name, BATON_BACKEND_AUTO);
	self->p.max_participants = 8;
	self->p.queue_len = 4;
	self->p.mode = 0600;
	self->p.backend = BATON_BACKEND_AUTO;
	ASSERT_EQ(0, baton_epoch_create(self->name, &self->p, &self->d));
}

FIXTURE_TEARDOWN(epoch_basic)
{
	baton_epoch_close(self->d);
	baton_epoch_unlink(self->name, BATON_BACKEND_AUTO);
}

TEST_F(epoch_basic, lifecycle_and_errnos)
{
	struct baton_epoch *o, *x;
	struct baton_epoch_params bad = self->p;

	EXPECT_EQ(BATON_BACKEND_MEMFD, self->d->backend);
	EXPECT_EQ(BATON_EPOCH_MAGIC, self->d->hdr->magic);
	EXPECT_EQ(1U, baton_epoch_global(self->d));
	EXPECT_EQ(-EEXIST, baton_epoch_create(self->name, &self->p, &x));
	EXPECT_EQ(-ENOENT, baton_epoch_open("t.no.such", BATON_BACKEND_AUTO,
					    &x));
	EXPECT_EQ(-EINVAL, baton_epoch_open("bad/name", BATON_BACKEND_AUTO,
					    &x));
	bad.queue_len = 3;
	EXPECT_EQ(-EINVAL, baton_epoch_create("t.bad", &bad, &x));
	bad.queue_len = 4;
	bad.max_participants = 0;
	EXPECT_EQ(-EINVAL, baton_epoch_create("t.bad", &bad, &x));
	bad.max_participants = BATON_EPOCH_PARTICIPANTS_MAX + 1;
	EXPECT_EQ(-EINVAL, baton_epoch_create("t.bad", &bad, &x));

	/* Not a participant yet: no retirement. */
	EXPECT_EQ(-EINVAL, baton_epoch_retire(self->d, 1, 0, NULL));
	ASSERT_EQ(0, baton_epoch_open(self->name, BATON_BACKEND_AUTO, &o));
	EXPECT_LE(0, baton_epoch_register(o));
	EXPECT_EQ(-EBUSY, baton_epoch_register(o));
	EXPECT_EQ(1U, baton_epoch_enter(o));
	baton_epoch_exit(o);
	EXPECT_EQ(0, baton_epoch_poll(o, 0) < 0);
	baton_epoch_close(o);
}

/* As for rings: mode bits beyond 0777 are the module's EINVAL here too. */
TEST_F(epoch_basic, mode_beyond_0777_einval)
{
	struct baton_epoch_params p = self->p;
	char name[BATON_NAME_MAX];
	struct baton_epoch *d;

	ring_name(name, sizeof(name), "ep.mode");
	p.mode = 01777;
	EXPECT_EQ(-EINVAL, baton_epoch_create(name, &p, &d));
	p.mode = 04600;
	EXPECT_EQ(-EINVAL, baton_epoch_create(name, &p, &d));
	EXPECT_EQ(-ENOENT, baton_epoch_open(name, BATON_BACKEND_AUTO, &d));
}

TEST_F(epoch_basic, table_full)
{
	struct baton_epoch *h[8];
	int i;

	for (i = 0; i < 8; i++) {
		ASSERT_EQ(0, baton_epoch_open(self->name, BATON_BACKEND_AUTO,
					      &h[i]));
		ASSERT_EQ(0, baton_epoch_register(h[i]));
		ASSERT_EQ(i, baton_epoch_index(h[i]));
	}
	EXPECT_EQ(-ENOSPC, baton_epoch_register(self->d));
	/* A released slot is free again. */
	baton_epoch_close(h[3]);
	EXPECT_EQ(0, baton_epoch_register(self->d));
	EXPECT_EQ(3, baton_epoch_index(self->d));
	for (i = 0; i < 8; i++)
		if (i != 3)
			baton_epoch_close(h[i]);
}

TEST_F(epoch_basic, synchronize_quiescent_and_reader_held)
{
	struct baton_epoch *r;
	uint64_t e, held;
	pid_t holder = -1;

	ASSERT_LE(0, baton_epoch_register(self->d));
	ASSERT_EQ(0, baton_epoch_open(self->name, BATON_BACKEND_AUTO, &r));
	ASSERT_LE(0, baton_epoch_register(r));

	/* Nobody inside: one cycle proves it. */
	ASSERT_EQ(0, baton_epoch_retire(self->d, 1, 0, &e));
	EXPECT_EQ(0, baton_epoch_synchronize(self->d, e, -1, NULL));
	EXPECT_LE(e, self->d->hdr->frontier);

	/* A reader inside at epoch held: anything retired now waits. */
	held = baton_epoch_enter(r);
	ASSERT_EQ(0, baton_epoch_retire(self->d, 2, 0, &e));
	EXPECT_GE(e, held);
	EXPECT_EQ(-ETIMEDOUT, baton_epoch_synchronize(self->d, e, 30000000,
						      &holder));
	EXPECT_EQ(getpid(), holder);
	EXPECT_EQ(-EAGAIN, baton_epoch_poll(self->d, e));
	EXPECT_GT(held, self->d->hdr->frontier);
	baton_epoch_exit(r);
	EXPECT_EQ(0, baton_epoch_poll(self->d, e));
	EXPECT_EQ(-EINVAL, baton_epoch_synchronize(self->d,
						   baton_epoch_global(self->d) + 5,
						   0, NULL));
	baton_epoch_close(r);
}

/*
 * Busy readers do not kick for a straggler (issue 13 item 5, memfd): one
 * thread holds an old epoch while the main thread is parked in
 * synchronize; KS_READERS threads enter and exit KS_ITERS times each
 * meanwhile. Their epochs are newer than the one parked on, so none of
 * their exits may kick; the straggler's exit kicks once.
 */
#define KS_READERS	2
#define KS_ITERS	20000

struct ks_shared {
	const char *name;
	const volatile struct baton_epoch_hdr *hdr;
	int inside;		/* the straggler has entered */
	int readers_done;
	uint64_t kicks[KS_READERS + 1];
	int rc[KS_READERS + 1];
};

/* Wait up to 30 s for *@w >= @want. */
static int ks_wait_int(const int *w, int want)
{
	int n;

	for (n = 0; __atomic_load_n(w, __ATOMIC_ACQUIRE) < want; n++) {
		if (n == 300000)
			return -1;
		usleep(100);
	}
	return 0;
}

static void *ks_straggler(void *p)
{
	struct ks_shared *s = p;
	struct baton_epoch *r;

	if (et_open(s->name, BATON_BACKEND_MEMFD, &r)) {
		s->rc[KS_READERS] = 1;
		return NULL;
	}
	baton_epoch_enter(r);
	__atomic_store_n(&s->inside, 1, __ATOMIC_RELEASE);
	if (ks_wait_int(&s->readers_done, KS_READERS))
		s->rc[KS_READERS] = 2;
	baton_epoch_exit(r);
	s->kicks[KS_READERS] = r->kick_calls;
	baton_epoch_close(r);
	return NULL;
}

struct ks_reader {
	struct ks_shared *s;
	int i;
};

static void *ks_reader(void *p)
{
	struct ks_reader *a = p;
	struct ks_shared *s = a->s;
	struct baton_epoch *r;
	int k;

	if (et_open(s->name, BATON_BACKEND_MEMFD, &r)) {
		s->rc[a->i] = 1;
		return NULL;
	}
	/* Wait for the synchronizer to park on the straggler's epoch. */
	while (!__atomic_load_n(&s->hdr->sync_waiters, __ATOMIC_ACQUIRE))
		usleep(100);
	for (k = 0; k < KS_ITERS; k++) {
		baton_epoch_enter(r);
		baton_epoch_exit(r);
	}
	s->kicks[a->i] = r->kick_calls;
	__atomic_fetch_add(&s->readers_done, 1, __ATOMIC_RELEASE);
	baton_epoch_close(r);
	return NULL;
}

TEST_F(epoch_basic, busy_readers_do_not_kick_for_a_straggler)
{
	struct ks_shared s = { .name = self->name, .hdr = self->d->hdr };
	struct ks_reader ra[KS_READERS];
	pthread_t st, rt[KS_READERS];
	struct baton_epoch_stats s0, s1;
	uint64_t e, kicks;
	int i;

	ASSERT_LE(0, baton_epoch_register(self->d));
	ASSERT_EQ(0, pthread_create(&st, NULL, ks_straggler, &s));
	ASSERT_EQ(0, ks_wait_int(&s.inside, 1));
	for (i = 0; i < KS_READERS; i++) {
		ra[i].s = &s;
		ra[i].i = i;
		ASSERT_EQ(0, pthread_create(&rt[i], NULL, ks_reader, &ra[i]));
	}
	baton_epoch_stats(self->d, &s0);
	ASSERT_EQ(0, baton_epoch_retire(self->d, 1, 0, &e));
	EXPECT_EQ(0, baton_epoch_synchronize(self->d, e, 60000000000LL,
					     NULL));
	for (i = 0; i < KS_READERS; i++)
		pthread_join(rt[i], NULL);
	pthread_join(st, NULL);
	baton_epoch_stats(self->d, &s1);
	kicks = s1.kicks - s0.kicks;
	TH_LOG("%d reader exits while parked: %llu kicks, %llu cycles",
	       KS_READERS * KS_ITERS, (unsigned long long)kicks,
	       (unsigned long long)(s1.collections - s0.collections));
	for (i = 0; i <= KS_READERS; i++)
		EXPECT_EQ(0, s.rc[i]);
	for (i = 0; i < KS_READERS; i++)
		EXPECT_EQ(0U, s.kicks[i]);
	EXPECT_EQ(1U, s.kicks[KS_READERS]);
	EXPECT_EQ(1U, kicks);
}

/* The queue never frees early: a full one says -ENOSPC and keeps all. */
TEST_F(epoch_basic, full_queue_enospc)
{
	struct baton_epoch *r;
	uint64_t e, done;
	int i;

	ASSERT_LE(0, baton_epoch_register(self->d));
	ASSERT_EQ(0, baton_epoch_open(self->name, BATON_BACKEND_AUTO, &r));
	ASSERT_LE(0, baton_epoch_register(r));
	baton_epoch_enter(r);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, baton_epoch_retire(self->d, (uint64_t)i, 0, &e));
	EXPECT_EQ(-ENOSPC, baton_epoch_retire(self->d, 9, 0, &e));
	for (i = 0; i < 5; i++) {
		ASSERT_EQ(0, baton_epoch_collect(self->d, NULL, &done));
		EXPECT_EQ(0U, done);
	}
	EXPECT_EQ(-ENOSPC, baton_epoch_retire(self->d, 9, 0, &e));
	baton_epoch_exit(r);
	/* One cycle proves, the next consumes. */
	ASSERT_EQ(0, baton_epoch_collect(self->d, NULL, &done));
	ASSERT_EQ(0, baton_epoch_collect(self->d, NULL, &done));
	EXPECT_EQ(4U, done);
	EXPECT_EQ(0, baton_epoch_retire(self->d, 9, 0, &e));
	baton_epoch_close(r);
}

/*
 * A three-bucket epoch design drains a bucket that retirements racing
 * the advance are still landing in (Documentation/epoch.rst, "Why bucket
 * aliasing cannot happen"). Here a collector thread cycles as fast
 * as it can while this thread retires; a reader holds epoch `held` the
 * whole time, so no entry with epoch >= held may ever be consumed.
 */
struct alias_arg {
	struct baton_epoch *c;
	int stop;
	uint64_t cycles;
};

static void *alias_collector(void *p)
{
	struct alias_arg *a = p;

	while (!__atomic_load_n(&a->stop, __ATOMIC_RELAXED)) {
		baton_epoch_collect(a->c, NULL, NULL);
		a->cycles++;
	}
	return NULL;
}

TEST(aliasing_memfd)
{
	char name[BATON_NAME_MAX];
	struct baton_epoch_params p = { 4, 64, 0600, BATON_BACKEND_MEMFD };
	struct baton_epoch *w, *r, *c;
	struct alias_arg a = { 0 };
	uint64_t epochs[64], held, head, e;
	pthread_t t;
	int n = 0, i;

	ring_name(name, sizeof(name), "alias");
	ASSERT_EQ(0, baton_epoch_create(name, &p, &w));
	ASSERT_EQ(0, baton_epoch_open(name, BATON_BACKEND_MEMFD, &r));
	ASSERT_EQ(0, baton_epoch_open(name, BATON_BACKEND_MEMFD, &c));
	ASSERT_LE(0, baton_epoch_register(w));
	ASSERT_LE(0, baton_epoch_register(r));
	/* Some entries from before the reader: these may go. */
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(0, baton_epoch_retire(w, 100 + i, 0, &epochs[n]));
		n++;
		baton_epoch_collect(c, NULL, NULL);
	}
	held = baton_epoch_enter(r);
	a.c = c;
	ASSERT_EQ(0, pthread_create(&t, NULL, alias_collector, &a));
	while (n < 64) {
		if (baton_epoch_retire(w, (uint64_t)n, 0, &e) == 0)
			epochs[n++] = e;
		usleep(100);
	}
	/*
	 * Until the collector has moved the global epoch well past the
	 * reader's (10 s at most): a fixed 20 ms was too short for a thread
	 * starved on a loaded host or slowed by TSan.
	 */
	for (i = 0; i < 10000 && baton_epoch_global(w) - held <= 10; i++)
		usleep(1000);
	__atomic_store_n(&a.stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	head = __atomic_load_n(w->q_head, __ATOMIC_ACQUIRE);
	TH_LOG("%llu cycles, head %llu, held %llu, global %llu",
	       (unsigned long long)a.cycles, (unsigned long long)head,
	       (unsigned long long)held,
	       (unsigned long long)baton_epoch_global(w));
	EXPECT_LT(10U, baton_epoch_global(w) - held);
	for (i = 0; i < (int)head; i++)
		EXPECT_LT(epochs[i], held);
	for (i = (int)head; i < n; i++)
		EXPECT_GE(epochs[i], held);
	baton_epoch_exit(r);
	baton_epoch_collect(c, NULL, NULL);
	baton_epoch_collect(c, NULL, NULL);
	EXPECT_EQ((uint64_t)n, __atomic_load_n(w->q_head, __ATOMIC_ACQUIRE));
	baton_epoch_close(c);
	baton_epoch_close(r);
	baton_epoch_close(w);
	baton_epoch_unlink(name, BATON_BACKEND_MEMFD);
}

/*
 * Threads that share one handle collect at the same time: the collector's
 * lock is an OFD lock, and requests from one open file description never
 * conflict, so it does not keep them apart (nor a parent and the child
 * that inherited its handle). Each cycle must then be safe beside
 * another: before, a cycle that had read the global epoch stored it + 1
 * after another thread's cycles had moved it further, and the global went
 * back; a reader that had entered under the higher epoch then counted as
 * entered after a retirement it predates. Global and frontier only grow.
 */
struct shared_collect {
	struct baton_epoch *d;
	int stop;
};

static void *shared_collector(void *p)
{
	struct shared_collect *a = p;

	while (!__atomic_load_n(&a->stop, __ATOMIC_RELAXED))
		baton_epoch_collect(a->d, NULL, NULL);
	return NULL;
}

TEST(collectors_sharing_a_handle_never_move_epochs_back)
{
	char name[BATON_NAME_MAX];
	struct baton_epoch_params p = { 8, 16, 0600, BATON_BACKEND_MEMFD };
	struct shared_collect a = { 0 };
	uint64_t g, f, last_g = 0, last_f = 0, g_back = 0, f_back = 0;
	uint64_t looks = 0, until;
	pthread_t t[4];
	int i;

	ring_name(name, sizeof(name), "shc");
	ASSERT_EQ(0, baton_epoch_create(name, &p, &a.d));
	baton_epoch_unlink(name, BATON_BACKEND_MEMFD);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, shared_collector, &a));
	until = now_ns() + (UNDER_TSAN ? 500 : 1000) * 1000000ULL;
	while (now_ns() < until) {
		g = __atomic_load_n(a.d->global, __ATOMIC_ACQUIRE);
		f = __atomic_load_n(&a.d->hdr->frontier, __ATOMIC_ACQUIRE);
		g_back += g < last_g;
		f_back += f < last_f;
		last_g = g;
		last_f = f;
		looks++;
	}
	__atomic_store_n(&a.stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	TH_LOG("%llu looks, global %llu: it moved back %llu times, the frontier %llu",
	       (unsigned long long)looks, (unsigned long long)last_g,
	       (unsigned long long)g_back, (unsigned long long)f_back);
	EXPECT_EQ(0U, g_back);
	EXPECT_EQ(0U, f_back);
	EXPECT_LT(100U, last_g);
	baton_epoch_close(a.d);
}

/* A participant that dies inside a read section stops holding anything. */
TEST(dead_reader_memfd)
{
	char name[BATON_NAME_MAX];
	struct baton_epoch_params p = { 4, 8, 0600, BATON_BACKEND_MEMFD };
	struct baton_epoch *w;
	int pfd[2];
	uint64_t e;
	pid_t pid;
	char c;

	if (UNDER_TSAN)
		SKIP(return, "fork: TSan cannot follow processes");
	ring_name(name, sizeof(name), "dead");
	ASSERT_EQ(0, baton_epoch_create(name, &p, &w));
	ASSERT_LE(0, baton_epoch_register(w));
	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct baton_epoch *r;

		if (et_open(name, BATON_BACKEND_MEMFD, &r))
			_exit(1);
		baton_epoch_enter(r);
		if (write(pfd[1], "x", 1) != 1)
			_exit(2);
		pause();
		_exit(0);
	}
	ASSERT_EQ(1, read(pfd[0], &c, 1));
	ASSERT_EQ(0, baton_epoch_retire(w, 1, 0, &e));
	pid_t holder = 0;
	EXPECT_EQ(-ETIMEDOUT, baton_epoch_synchronize(w, e, 20000000, &holder));
	EXPECT_EQ(pid, holder);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	EXPECT_EQ(0, baton_epoch_synchronize(w, e, 2000000000LL, NULL));
	close(pfd[0]);
	close(pfd[1]);
	baton_epoch_close(w);
	baton_epoch_unlink(name, BATON_BACKEND_MEMFD);
}

/* Torture in threads: each thread its own handle, for TSan too. */
struct tt_arg {
	struct et_shared *s;
	const char *name;
	int role;	/* -1 reader, else writer index */
	int rc;
};

static void *tt_thread(void *p)
{
	struct tt_arg *a = p;

	a->rc = a->role < 0 ? et_reader(a->s, a->name, BATON_BACKEND_MEMFD) :
			      et_writer(a->s, a->name, BATON_BACKEND_MEMFD,
					a->role);
	return NULL;
}

TEST(torture_threads_memfd)
{
	char name[BATON_NAME_MAX];
	struct baton_epoch_params p = { 8, 16, 0600, BATON_BACKEND_MEMFD };
	struct tt_arg args[2 + ET_WRITERS];
	pthread_t t[2 + ET_WRITERS];
	struct baton_epoch *d;
	struct et_shared *s = et_setup();
	int i;

	ASSERT_NE(NULL, s);
	ring_name(name, sizeof(name), "tt");
	ASSERT_EQ(0, baton_epoch_create(name, &p, &d));
	for (i = 0; i < 2 + ET_WRITERS; i++) {
		args[i] = (struct tt_arg){ s, name, i < 2 ? -1 : i - 2, -1 };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, tt_thread, &args[i]));
	}
	usleep(UNDER_TSAN ? 500000 : 1000000);
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < 2 + ET_WRITERS; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(0, args[i].rc);
	}
	TH_LOG("sections %llu destroys %llu violations %llu",
	       (unsigned long long)s->sections,
	       (unsigned long long)s->destroys,
	       (unsigned long long)s->violations);
	EXPECT_EQ(0U, s->violations);
	EXPECT_LT(0U, s->destroys);
	EXPECT_LT(0U, s->sections);
	baton_epoch_close(d);
	baton_epoch_unlink(name, BATON_BACKEND_MEMFD);
	munmap(s, sizeof(*s));
}

TEST(torture_procs_memfd)
{
	char name[BATON_NAME_MAX];
	struct baton_epoch_params p = { 8, 16, 0600, BATON_BACKEND_MEMFD };
	struct baton_epoch *d;
	struct et_shared *s;

	if (UNDER_TSAN)
		SKIP(return, "fork: TSan cannot follow processes");
	s = et_setup();
	ASSERT_NE(NULL, s);
	ring_name(name, sizeof(name), "tp");
	ASSERT_EQ(0, baton_epoch_create(name, &p, &d));
	EXPECT_EQ(0, et_run(s, name, BATON_BACKEND_MEMFD, 2, 1500));
	TH_LOG("sections %llu destroys %llu violations %llu",
	       (unsigned long long)s->sections,
	       (unsigned long long)s->destroys,
	       (unsigned long long)s->violations);
	EXPECT_EQ(0U, s->violations);
	EXPECT_LT(0U, s->destroys);
	baton_epoch_close(d);
	baton_epoch_unlink(name, BATON_BACKEND_MEMFD);
	munmap(s, sizeof(*s));
}

TEST_HARNESS_MAIN

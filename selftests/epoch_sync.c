// SPDX-License-Identifier: GPL-2.0
/*
 * Epoch domains through the library on the real module: synchronous
 * destroy (quiescent, held by a reader that kicks on exit, busy readers
 * that must not kick for a straggler), the deadline
 * naming the holder's pid, kill -9 of a reader inside its section and of a
 * destroyer parked in SYNCHRONIZE (the frontier advances, the orphaned
 * retirements are consumed only once proven, nothing is left behind),
 * the full queue, the aliasing check against the kernel collector, POLL,
 * and the ring pattern: a consumer snapshot reads buffers that the
 * producer process destroys.
 */
#include "common.h"

#define EP_SEC	1000000000LL

static void ep_params(struct baton_epoch_params *p, uint32_t maxp,
		      uint32_t qlen)
{
	p->max_participants = maxp;
	p->queue_len = qlen;
	p->mode = 0600;
	p->backend = BATON_BACKEND_KMOD;
}

/* Child: open, register, or exit with @code. */
static struct baton_epoch *ep_child_open(const char *name, int code)
{
	struct baton_epoch *d;

	if (baton_epoch_open(name, BATON_BACKEND_KMOD, &d))
		_exit(code);
	if (baton_epoch_register(d) < 0)
		_exit(code + 1);
	return d;
}

static int wait_u32(const volatile uint32_t *w, uint32_t want, long ms)
{
	int64_t end = bt_now_ns() + ms * BT_MSEC;

	while (*w != want) {
		if (bt_now_ns() > end)
			return -1;
		bt_sleep_ms(1);
	}
	return 0;
}

FIXTURE(epoch_sync) {
	char name[BATON_NAME_MAX];
	struct baton_epoch *d;
};

FIXTURE_SETUP(epoch_sync)
{
	struct baton_epoch_params p;

	BT_REQUIRE_DEV();
	bt_make_name(self->name, sizeof(self->name), "es");
	ep_params(&p, 8, 8);
	ASSERT_EQ(0, baton_epoch_create(self->name, &p, &self->d));
	ASSERT_LE(0, baton_epoch_register(self->d));
}

FIXTURE_TEARDOWN(epoch_sync)
{
	baton_epoch_close(self->d);
	baton_epoch_unlink(self->name, BATON_BACKEND_KMOD);
}

TEST_F(epoch_sync, quiescent_destroy_is_one_cycle)
{
	struct baton_epoch_stats st0, st;
	uint64_t e;

	baton_epoch_stats(self->d, &st0);
	ASSERT_EQ(0, baton_epoch_retire(self->d, 1, 2, &e));
	ASSERT_EQ(0, baton_epoch_synchronize(self->d, e, EP_SEC, NULL));
	baton_epoch_stats(self->d, &st);
	EXPECT_EQ(st0.collections + 1, st.collections);
	EXPECT_LE(e, st.frontier);
	EXPECT_EQ(0U, st.sync_waits);
	/* Enter and exit with nobody parked: no syscall at all. */
	baton_epoch_enter(self->d);
	baton_epoch_exit(self->d);
	EXPECT_EQ(0U, self->d->kick_calls);
	EXPECT_EQ(0, baton_epoch_poll(self->d, e));
	EXPECT_EQ(0, baton_epoch_destroy_sync(self->d, 3, 4, EP_SEC, NULL));
}

/* The process's mapped address space in bytes (VmSize), 0 if unknown. */
static uint64_t ep_vm_bytes(void)
{
	char line[128];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSize: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib > 0 ? (uint64_t)kib * 1024 : 0;
}

/*
 * The child of register_after_a_failed_mapping: its exit status says
 * which step went wrong (0: none).
 */
static int ep_register_past_a_full_address_space(const char *name)
{
	struct baton_epoch_params p;
	struct baton_epoch *d;
	struct rlimit old, rl;
	int first, second;

	ep_params(&p, 2, 8);
	if (baton_epoch_create(name, &p, &d))
		return 10;
	baton_epoch_unlink(name, BATON_BACKEND_KMOD);
	baton_set_print(NULL);
	if (getrlimit(RLIMIT_AS, &old))
		return 11;
	/* No room for one more mapping: REGISTER works, the mmap fails. */
	rl.rlim_cur = ep_vm_bytes();
	rl.rlim_max = old.rlim_max;
	if (!rl.rlim_cur || setrlimit(RLIMIT_AS, &rl))
		return 12;
	first = baton_epoch_register(d);
	if (setrlimit(RLIMIT_AS, &old))
		return 13;
	if (first != -ENOMEM)
		return 14;
	second = baton_epoch_register(d);
	if (second)
		return second == -EBUSY ? 15 : 16;
	if (baton_epoch_index(d) != 0)
		return 17;
	baton_epoch_enter(d);
	baton_epoch_exit(d);
	return baton_epoch_close(d) ? 18 : 0;
}

/*
 * A handle whose REGISTER worked and whose mapping of its own region
 * failed (the address space full) is registered with the module, which
 * has no unregister. The library keeps the index and its next register
 * maps it: before, that register answered EBUSY ("already registered")
 * and the handle could never take part, while holding a slot.
 */
TEST(register_after_a_failed_mapping_maps_the_same_index)
{
	char name[BATON_NAME_MAX];
	int status;
	pid_t pid;

	BT_REQUIRE_DEV();
	bt_make_name(name, sizeof(name), "esmap");
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(ep_register_past_a_full_address_space(name));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("step %d failed (14: the first register was not ENOMEM, 15: the second was EBUSY)",
		       WEXITSTATUS(status));
}

/* The destroyer parks; the reader's exit sees sync_waiters and kicks. */
TEST_F(epoch_sync, reader_exit_kicks_parked_destroyer)
{
	const volatile struct baton_epoch_hdr *h = self->d->hdr;
	struct baton_epoch_stats st;
	struct bt_sync in;
	uint64_t e;
	int64_t t0;
	pid_t pid;

	ASSERT_EQ(0, bt_sync_init(&in));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct baton_epoch *r = ep_child_open(self->name, 10);

		baton_epoch_enter(r);
		bt_sync_post(&in);
		/* Stay inside until the destroyer is parked, then leave. */
		if (wait_u32(&r->hdr->sync_waiters, 1, 10000))
			_exit(12);
		bt_sleep_ms(100);
		baton_epoch_exit(r);
		_exit(r->kick_calls == 1 ? 0 : 13);
	}
	ASSERT_EQ(0, bt_sync_wait(&in, 10000));
	ASSERT_EQ(0, baton_epoch_retire(self->d, 7, 0, &e));
	t0 = bt_now_ns();
	EXPECT_EQ(0, baton_epoch_synchronize(self->d, e, 10 * EP_SEC, NULL));
	EXPECT_LE(100 * BT_MSEC, bt_now_ns() - t0);
	EXPECT_EQ(0, bt_wait(pid));
	baton_epoch_stats(self->d, &st);
	EXPECT_EQ(1U, st.sync_waits);
	EXPECT_LE(1U, st.kicks);
	EXPECT_EQ(0U, h->sync_waiters);
	bt_sync_close(&in);
}

/*
 * Issue 13 item 5: one straggler holds an old epoch while a destroyer is
 * parked on it (with a deadline); busy readers enter and exit KS_ITERS
 * times each meanwhile. Their announcements are newer than the parked
 * epoch, so their exits cannot help: they must not kick. Before the
 * change every one of their exits saw sync_waiters != 0 and kicked, and
 * each kick ran the destroyer through a full cycle with an IPI round.
 */
#define KS_READERS	2
#define KS_ITERS	20000

static int ks_busy_reader(const char *name,
			  const volatile struct baton_epoch_hdr *wh,
			  struct bt_sync *done)
{
	struct baton_epoch *r = ep_child_open(name, 20);
	int i;

	/* Wait for the destroyer to park on the straggler's epoch. */
	if (wait_u32(&wh->sync_waiters, 1, 10000))
		return 22;
	for (i = 0; i < KS_ITERS; i++) {
		baton_epoch_enter(r);
		baton_epoch_exit(r);
	}
	bt_sync_post(done);
	printf("# busy reader %d: %d exits, %llu kicks\n", getpid(),
	       KS_ITERS, (unsigned long long)r->kick_calls);
	return r->kick_calls ? 23 : 0;
}

TEST_F(epoch_sync, busy_readers_do_not_kick_for_a_straggler)
{
	const volatile struct baton_epoch_hdr *h = self->d->hdr;
	struct baton_epoch_stats st0, st;
	struct bt_sync in, done;
	pid_t straggler, readers[KS_READERS];
	uint64_t e, kicks, cycles;
	int i;

	ASSERT_EQ(0, bt_sync_init(&in));
	ASSERT_EQ(0, bt_sync_init(&done));
	straggler = fork();
	ASSERT_LE(0, straggler);
	if (straggler == 0) {
		struct baton_epoch *r = ep_child_open(self->name, 10);

		baton_epoch_enter(r);
		bt_sync_post(&in);
		/* Inside until every busy reader has done its exits. */
		for (i = 0; i < KS_READERS; i++)
			if (bt_sync_wait(&done, 60000))
				_exit(12);
		baton_epoch_exit(r);
		/* The one exit that helps: it must kick. */
		_exit(r->kick_calls == 1 ? 0 : 13);
	}
	ASSERT_EQ(0, bt_sync_wait(&in, 10000));
	for (i = 0; i < KS_READERS; i++) {
		readers[i] = fork();
		ASSERT_LE(0, readers[i]);
		if (readers[i] == 0)
			_exit(ks_busy_reader(self->name, h, &done));
	}
	baton_epoch_stats(self->d, &st0);
	ASSERT_EQ(0, baton_epoch_retire(self->d, 7, 0, &e));
	EXPECT_EQ(0, baton_epoch_synchronize(self->d, e, 60 * EP_SEC, NULL));
	for (i = 0; i < KS_READERS; i++)
		EXPECT_EQ(0, bt_wait(readers[i]));
	EXPECT_EQ(0, bt_wait(straggler));
	baton_epoch_stats(self->d, &st);
	kicks = st.kicks - st0.kicks;
	cycles = st.collections - st0.collections;
	TH_LOG("%d reader exits while parked: %llu kicks, %llu cycles",
	       KS_READERS * KS_ITERS, (unsigned long long)kicks,
	       (unsigned long long)cycles);
	/* The straggler's exit, nothing else. */
	EXPECT_EQ(1U, kicks);
	EXPECT_EQ(1U, st.sync_waits - st0.sync_waits);
	EXPECT_EQ(0U, h->sync_waiters);
	bt_sync_close(&in);
	bt_sync_close(&done);
}

/*
 * kill -9 inside a read section: the deadline names the holder, then its
 * death releases the frontier.
 */
static void ks_on_usr1(int sig)
{
	(void)sig;
}

/* Child: a synchronizer with no deadline; exit 0 on EINTR. */
static pid_t ks_synchronizer(const char *name, uint64_t e)
{
	struct sigaction sa = { .sa_handler = ks_on_usr1 };	/* no restart */
	pid_t pid = fork();
	struct baton_epoch *d;

	if (pid)
		return pid;
	sigaction(SIGUSR1, &sa, NULL);
	d = ep_child_open(name, 20);
	_exit(baton_epoch_synchronize(d, e, -1, NULL) == -EINTR ? 0 : 22);
}

/*
 * A synchronizer whose wait is cut short by KICKs, one after another
 * (any opener may kick): its loop found the wake condition true each
 * time, so the sleep that would have seen the signal never came, and the
 * signal waited for a gap in the flood (up to 0.4 s seen under TCG),
 * while the synchronizer ran cycles back to back, each with an IPI
 * round. It must look for signals on every pass: after the signal, EINTR
 * within the cycle under way and at most one more, KS_SIGNALS times
 * (counted in cycles, not time; the kicker never runs one).
 */
#define KS_SIGNALS	5

TEST_F(epoch_sync, signal_reaches_a_synchronizer_under_a_kick_flood)
{
	const volatile struct baton_epoch_hdr *h = self->d->hdr;
	uint64_t e, c0, most = 0;
	pid_t kicker, sync;
	int i;

	baton_epoch_enter(self->d);	/* the straggler: us */
	ASSERT_EQ(0, baton_epoch_retire(self->d, 9, 0, &e));
	kicker = fork();
	ASSERT_LE(0, kicker);
	if (!kicker) {
		struct baton_epoch *k = ep_child_open(self->name, 30);

		for (;;)
			ioctl(baton_epoch_fd(k), BATON_EPOCH_IOC_KICK, 0);
	}
	for (i = 0; i < KS_SIGNALS; i++) {
		sync = ks_synchronizer(self->name, e);
		ASSERT_LE(0, sync);
		/* Inside SYNCHRONIZE (setup is slow on a KCSAN kernel)... */
		ASSERT_EQ(0, wait_u32(&h->sync_waiters, 1, 20000));
		bt_sleep_ms(20);	/* ...and kicked, pass after pass */
		kill(sync, SIGUSR1);
		/*
		 * Counted from here, not from before kill(): the flag is set
		 * once kill() returns, but we may lose the CPU between a read
		 * before it and the call, while the synchronizer runs on.
		 */
		c0 = h->collections;
		EXPECT_EQ(0, bt_wait_timeout(sync, 20000));
		if (h->collections - c0 > most)
			most = h->collections - c0;
	}
	kill(kicker, SIGKILL);
	bt_wait_timeout(kicker, 20000);
	TH_LOG("most cycles run after a signal: %llu",
	       (unsigned long long)most);
	EXPECT_GE(2U, most);
	baton_epoch_exit(self->d);
}

TEST_F(epoch_sync, deadline_names_holder_then_kill9_releases)
{
	struct baton_epoch_stats st;
	struct bt_sync in;
	pid_t pid, holder = 0;
	uint64_t e;

	ASSERT_EQ(0, bt_sync_init(&in));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct baton_epoch *r = ep_child_open(self->name, 10);

		baton_epoch_enter(r);
		bt_sync_post(&in);
		for (;;)
			pause();
	}
	ASSERT_EQ(0, bt_sync_wait(&in, 10000));
	ASSERT_EQ(0, baton_epoch_retire(self->d, 1, 0, &e));
	EXPECT_EQ(-ETIMEDOUT, baton_epoch_synchronize(self->d, e,
						      100 * BT_MSEC, &holder));
	EXPECT_EQ(pid, holder);
	EXPECT_EQ(-EAGAIN, baton_epoch_poll(self->d, e));
	baton_epoch_stats(self->d, &st);
	EXPECT_EQ(1U, st.sync_timeouts);
	EXPECT_EQ(2U, st.participants);

	kill(pid, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, bt_wait(pid));
	EXPECT_EQ(0, baton_epoch_synchronize(self->d, e, 5 * EP_SEC, NULL));
	baton_epoch_stats(self->d, &st);
	EXPECT_EQ(1U, st.participants);
	EXPECT_EQ(1U, st.participant_releases);
	EXPECT_LE(e, st.frontier);
	bt_sync_close(&in);
}

/*
 * A destroyer killed while parked: its retirements become the kernel's,
 * stay pending while a reader holds their epoch, and are consumed once
 * it is gone. Nothing early, nothing lost.
 */
TEST_F(epoch_sync, kill9_parked_destroyer_orphans)
{
	const volatile struct baton_epoch_hdr *h = self->d->hdr;
	struct baton_epoch_stats st;
	struct bt_sync in;
	pid_t reader, destroyer;
	uint64_t done;
	int i;

	ASSERT_EQ(0, bt_sync_init(&in));
	reader = fork();
	ASSERT_LE(0, reader);
	if (reader == 0) {
		struct baton_epoch *r = ep_child_open(self->name, 10);

		baton_epoch_enter(r);
		bt_sync_post(&in);
		for (;;)
			pause();
	}
	ASSERT_EQ(0, bt_sync_wait(&in, 10000));
	destroyer = fork();
	ASSERT_LE(0, destroyer);
	if (destroyer == 0) {
		struct baton_epoch *w = ep_child_open(self->name, 20);
		uint64_t e = 0;

		for (i = 0; i < 3; i++)
			if (baton_epoch_retire(w, (uint64_t)i, 0, &e))
				_exit(22);
		baton_epoch_synchronize(w, e, -1, NULL);
		_exit(23);	/* must not get here: the reader holds e */
	}
	ASSERT_EQ(0, wait_u32(&h->sync_waiters, 1, 10000));
	ASSERT_EQ(0, bt_wait_sleeping(destroyer, 10000));
	kill(destroyer, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, bt_wait(destroyer));
	EXPECT_EQ(0U, h->sync_waiters);
	baton_epoch_stats(self->d, &st);
	EXPECT_EQ(3U, st.orphaned);
	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, baton_epoch_collect(self->d, NULL, &done));
	baton_epoch_stats(self->d, &st);
	EXPECT_EQ(0U, st.orphans_completed);	/* the reader still holds */

	kill(reader, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, bt_wait(reader));
	ASSERT_EQ(0, baton_epoch_collect(self->d, NULL, NULL));
	ASSERT_EQ(0, baton_epoch_collect(self->d, NULL, &done));
	EXPECT_EQ(3U, done);
	baton_epoch_stats(self->d, &st);
	EXPECT_EQ(3U, st.orphans_completed);
	EXPECT_EQ(1U, st.participants);
	EXPECT_EQ(2U, st.participant_releases);
	EXPECT_EQ(0U, st.bad_words);
	bt_sync_close(&in);
}

TEST_F(epoch_sync, full_queue_enospc_nothing_early)
{
	struct baton_epoch *r;
	uint64_t e, done;
	int i;

	ASSERT_EQ(0, baton_epoch_open(self->name, BATON_BACKEND_KMOD, &r));
	ASSERT_LE(0, baton_epoch_register(r));
	baton_epoch_enter(r);
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, baton_epoch_retire(self->d, (uint64_t)i, 0, &e));
	EXPECT_EQ(-ENOSPC, baton_epoch_retire(self->d, 99, 0, &e));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, baton_epoch_collect(self->d, NULL, &done));
		EXPECT_EQ(0U, done);
	}
	EXPECT_EQ(0U, *self->d->q_head);
	EXPECT_EQ(-ENOSPC, baton_epoch_retire(self->d, 99, 0, &e));
	baton_epoch_exit(r);
	ASSERT_EQ(0, baton_epoch_collect(self->d, NULL, &done));
	ASSERT_EQ(0, baton_epoch_collect(self->d, NULL, &done));
	EXPECT_EQ(8U, done);
	EXPECT_EQ(0, baton_epoch_retire(self->d, 99, 0, &e));
	baton_epoch_close(r);
}

/*
 * A participant scribbling on its own region: an announcement above the
 * global holds the frontier (never lets anything go), a tail beyond the
 * queue is ignored; both are counted, and the domain recovers once the
 * words are sane again.
 */
TEST_F(epoch_sync, scribbled_words_never_free_early)
{
	struct baton_epoch_stats st0, st;
	struct baton_epoch *r;
	uint64_t e, f0, f, done;
	int i;

	ASSERT_EQ(0, baton_epoch_open(self->name, BATON_BACKEND_KMOD, &r));
	ASSERT_LE(0, baton_epoch_register(r));
	baton_epoch_stats(self->d, &st0);
	ASSERT_EQ(0, baton_epoch_collect(self->d, &f0, NULL));
	ASSERT_EQ(0, baton_epoch_retire(self->d, 1, 0, &e));
	__atomic_store_n(r->ann, BATON_EPOCH_ANN(baton_epoch_global(r) + 1000),
			 __ATOMIC_RELAXED);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, baton_epoch_collect(self->d, &f, &done));
		EXPECT_EQ(f0, f);
		EXPECT_EQ(0U, done);
	}
	EXPECT_EQ(-EAGAIN, baton_epoch_poll(self->d, e));
	baton_epoch_stats(self->d, &st);
	EXPECT_LE(st0.bad_words + 4, st.bad_words);

	__atomic_store_n(r->ann, 0, __ATOMIC_RELAXED);
	EXPECT_EQ(0, baton_epoch_synchronize(self->d, e, EP_SEC, NULL));

	/* A tail far past the head: that queue is skipped, counted. */
	__atomic_store_n(r->q_tail, 1000000, __ATOMIC_RELEASE);
	baton_epoch_stats(self->d, &st0);
	ASSERT_EQ(0, baton_epoch_collect(self->d, NULL, NULL));
	baton_epoch_stats(self->d, &st);
	EXPECT_LT(st0.bad_words, st.bad_words);
	EXPECT_EQ(0U, *r->q_head);
	/* Released with it: nothing of that queue is taken over. */
	baton_epoch_close(r);
	baton_epoch_stats(self->d, &st0);
	EXPECT_EQ(st.orphaned, st0.orphaned);
	EXPECT_LT(st.bad_words, st0.bad_words);
}

/* Wait (bounded) until the domain's global epoch is past @e. */
static void es_wait_global_past(struct baton_epoch *d, uint64_t e,
				int64_t timeout_ns)
{
	int64_t end = bt_now_ns() + timeout_ns;

	while (baton_epoch_global(d) <= e && bt_now_ns() < end)
		bt_sleep_ms(1);
}

/*
 * Aliasing: a child collects in a tight loop while this process retires
 * and a reader holds epoch `held`. No entry with an epoch >= held may be
 * consumed, however the retirements interleave with the advances (a
 * three-bucket design drains entries retired during the advance:
 * Documentation/epoch.rst, "Why bucket aliasing cannot happen").
 */
TEST_F_TIMEOUT(epoch_sync, retire_racing_advance_never_drained_early, 120)
{
	struct baton_epoch *r;
	uint64_t epochs[8], held, head, e;
	int n = 0, i, spins = 0;
	pid_t pid;

	ASSERT_EQ(0, baton_epoch_open(self->name, BATON_BACKEND_KMOD, &r));
	ASSERT_LE(0, baton_epoch_register(r));
	held = baton_epoch_enter(r);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct baton_epoch *c;

		if (baton_epoch_open(self->name, BATON_BACKEND_KMOD, &c))
			_exit(10);
		for (;;)
			baton_epoch_collect(c, NULL, NULL);
	}
	/*
	 * Spread the retirements over many advances: after each, wait for
	 * the collector to move the global epoch on (not a fixed sleep: a
	 * loaded debug kernel may not run the child for many milliseconds),
	 * and at the end until it is past held + 2.
	 */
	while (n < 8 && spins++ < 100000) {
		if (baton_epoch_retire(self->d, (uint64_t)n, 0, &e) == 0) {
			epochs[n++] = e;
			es_wait_global_past(self->d, e, 5 * BT_NSEC);
		}
	}
	es_wait_global_past(self->d, held + 2, 30 * BT_NSEC);
	kill(pid, SIGKILL);
	bt_wait(pid);
	head = __atomic_load_n(self->d->q_head, __ATOMIC_ACQUIRE);
	TH_LOG("held %llu global %llu head %llu n %d",
	       (unsigned long long)held,
	       (unsigned long long)baton_epoch_global(self->d),
	       (unsigned long long)head, n);
	EXPECT_EQ(0U, head);
	EXPECT_EQ(8, n);
	EXPECT_LT(epochs[0], epochs[n - 1]);
	EXPECT_LT(held + 2, baton_epoch_global(self->d));
	for (i = 0; i < n; i++)
		EXPECT_GE(epochs[i], held);
	baton_epoch_exit(r);
	ASSERT_EQ(0, baton_epoch_collect(self->d, NULL, NULL));
	ASSERT_EQ(0, baton_epoch_collect(self->d, NULL, NULL));
	EXPECT_EQ((uint64_t)n, __atomic_load_n(self->d->q_head,
					       __ATOMIC_ACQUIRE));
	baton_epoch_close(r);
}

/*
 * The ring pattern: the producer process owns a pool of buffers and
 * sends their indices over an SPSC ring; the consumer looks each up in
 * the shared buffer table inside one epoch section (its snapshot) and
 * checks it. The producer destroys buffers at any time: unlink from the
 * table, baton_epoch_destroy_sync(), poison, reuse.
 */
#define RP_BUFS	32
#define RP_MSGS	3000

struct rp_shared {
	uint64_t table[RP_BUFS];	/* 0 or 1 + buffer index */
	uint64_t buf[2 * RP_BUFS][8];	/* word 0: poison */
	uint64_t bad;
	uint64_t seen;
	uint64_t missing;
};

TEST_F(epoch_sync, ring_consumer_snapshot_of_destroyed_buffers)
{
	struct rp_shared *s;
	struct baton_ring_params rp = bt_params(16, 8);
	struct baton_ring *prod;
	char ring[BATON_NAME_MAX];
	uint64_t i, destroys = 0, fifo[RP_BUFS], fh = 0, ft = RP_BUFS;
	pid_t pid;

	s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, s);
	memset(s, 0, sizeof(*s));
	bt_make_name(ring, sizeof(ring), "es.rp");
	ASSERT_EQ(0, baton_ring_create(ring, &rp, BATON_ROLE_PRODUCER, &prod));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct baton_epoch *r = ep_child_open(self->name, 10);
		struct baton_ring *cons;
		uint64_t k;
		int ret;

		/* The producer's file must go with the parent's close. */
		baton_ring_close(prod);

		if (baton_ring_open(ring, BATON_ROLE_CONSUMER,
				    BATON_BACKEND_KMOD, &cons))
			_exit(12);
		for (;;) {
			uint64_t msg, b, j;

			ret = baton_spsc_pop(cons, &msg, sizeof(msg),
					     10 * EP_SEC);
			if (ret == -EPIPE)
				break;
			if (ret < 0)
				_exit(13);
			baton_epoch_enter(r);
			b = __atomic_load_n(&s->table[msg % RP_BUFS],
					    __ATOMIC_ACQUIRE);
			if (!b) {
				s->missing++;	/* destroyed before we looked */
			} else {
				for (k = 0; k < 200; k++)
					for (j = 0; j < 8; j++)
						if (__atomic_load_n(&s->buf[b - 1][0],
								    __ATOMIC_RELAXED))
							s->bad++;
				s->seen++;
			}
			baton_epoch_exit(r);
		}
		_exit(0);
	}
	for (i = 0; i < RP_BUFS; i++) {
		s->table[i] = i + 1;
		fifo[i] = RP_BUFS + i;
	}
	for (i = 0; i < RP_MSGS; i++) {
		uint64_t slot = i % RP_BUFS, old, nb;

		ASSERT_EQ(0, baton_spsc_push(prod, &slot, sizeof(slot),
					     10 * EP_SEC));
		if (i % 3)
			continue;
		/*
		 * Replace the buffer just announced while the consumer may be
		 * reading it, destroy the old one, and keep it poisoned
		 * while RP_BUFS others are recycled before it.
		 */
		nb = fifo[fh++ % RP_BUFS];
		__atomic_store_n(&s->buf[nb][0], 0, __ATOMIC_RELAXED);
		old = __atomic_exchange_n(&s->table[slot], nb + 1,
					  __ATOMIC_ACQ_REL);
		ASSERT_EQ(0, baton_epoch_destroy_sync(self->d, old, slot,
						      10 * EP_SEC, NULL));
		__atomic_store_n(&s->buf[old - 1][0], 1, __ATOMIC_RELAXED);
		fifo[ft++ % RP_BUFS] = old - 1;
		destroys++;
	}
	baton_ring_close(prod);
	EXPECT_EQ(0, bt_wait_timeout(pid, 60000));
	TH_LOG("destroys %llu seen %llu missing %llu bad %llu",
	       (unsigned long long)destroys, (unsigned long long)s->seen,
	       (unsigned long long)s->missing, (unsigned long long)s->bad);
	EXPECT_EQ(0U, s->bad);
	EXPECT_EQ((uint64_t)RP_MSGS, s->seen + s->missing);
	baton_ring_unlink(ring, BATON_BACKEND_KMOD);
	munmap(s, sizeof(*s));
}

TEST_HARNESS_MAIN

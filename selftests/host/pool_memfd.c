// SPDX-License-Identifier: MIT
/*
 * Buffer pools on the memfd backend (lib/pool_memfd.c), between real
 * processes on this host: the pool file and its geometry rules, every
 * buffer once then ENOMEM then recovery, forged and stale handles, buffers
 * through a ring between processes, a scribbled header, and what the
 * holders do for each other without a module: a holder killed at random
 * points of its alloc/fill/free loop loses and duplicates nothing (its
 * buffers come back when a survivor next looks), a sent buffer survives
 * its sender, a ring nobody can read again gives back the buffers still
 * in it (its sender's watch on the ring's file), hand-offs cut by kill -9
 * at any step lose nothing, and idle
 * pages go back from the slow paths (decay). The cases both backends run
 * are in ../pool_cases.h (pool.c runs them on kmod in the VM).
 */
#include "kselftest_harness.h"
#include "common.h"
#include "../pool_cases.h"

#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>

static void pool_file(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "/dev/shm/baton-pool.%s", name);
}

/*
 * Map pool @pname's control region read-write, as any holder can, with
 * its header in *@h: the region, or NULL. The children that act a step
 * of the protocol by hand, and the scribblers, go through it.
 */
static uint8_t *map_ctl(const char *pname, struct baton_pool_hdr *h)
{
	char path[128];
	uint8_t *ctl;
	int fd;

	pool_file(path, sizeof(path), pname);
	fd = open(path, O_RDWR);
	if (fd < 0)
		return NULL;
	if (pread(fd, h, sizeof(*h), 0) != sizeof(*h)) {
		close(fd);
		return NULL;
	}
	ctl = mmap(NULL, h->ctl_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   (off_t)h->ctl_mmap);
	close(fd);
	return ctl == MAP_FAILED ? NULL : ctl;
}

/* A page of words shared with forked children, or MAP_FAILED. */
static volatile uint32_t *shared_words(void)
{
	return mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
}

TEST(null_handles_are_einval)
{
	uint64_t h = 0;
	struct baton_pool_info info;

	EXPECT_EQ(-EINVAL, baton_pool_alloc(NULL, 64, &h));
	EXPECT_EQ(-EINVAL, baton_pool_free(NULL, BATON_POOL_HANDLE(0, 0, 1)));
	EXPECT_EQ(-EINVAL, baton_pool_give(NULL, BATON_POOL_HANDLE(0, 0, 1)));
	EXPECT_EQ(-EINVAL, baton_pool_take(NULL, BATON_POOL_HANDLE(0, 0, 1)));
	EXPECT_EQ(-EINVAL, baton_pool_info(NULL, &info));
	EXPECT_EQ(-EINVAL, baton_pool_check(NULL, BATON_POOL_HANDLE(0, 0, 1)));
	EXPECT_EQ(NULL, baton_pool_ptr(NULL, BATON_POOL_HANDLE(0, 0, 1)));
	EXPECT_EQ((size_t)0, baton_pool_buf_size(NULL, BATON_POOL_HANDLE(0, 0, 1)));
	baton_pool_close(NULL);
}

/* The module's geometry rules, the same errno on memfd. */
TEST(create_rejects_bad_geometry_and_names)
{
	struct baton_pool_params p = pc_params(16, 0);
	struct baton_pool *pool = NULL;
	char name[64];

	force_memfd();
	ring_name(name, sizeof(name), "geo");
	p.classes[1].buf_shift = 12;			/* not increasing */
	EXPECT_EQ(-EINVAL, baton_pool_create(name, &p, &pool));
	p = pc_params(16, 0);
	p.classes[0].buf_shift = 11;			/* below 4 KiB */
	EXPECT_EQ(-EINVAL, baton_pool_create(name, &p, &pool));
	p = pc_params(16, 0);
	p.classes[1].buf_shift = 23;			/* above 4 MiB */
	EXPECT_EQ(-EINVAL, baton_pool_create(name, &p, &pool));
	p = pc_params(0, 0);				/* empty class */
	EXPECT_EQ(-EINVAL, baton_pool_create(name, &p, &pool));
	p = pc_params(BATON_POOL_COUNT_MAX + 1, 0);
	EXPECT_EQ(-EINVAL, baton_pool_create(name, &p, &pool));
	p = pc_params(16, 5);				/* decay too short */
	EXPECT_EQ(-EINVAL, baton_pool_create(name, &p, &pool));
	p = pc_params(16, 0);
	p.keep = 9;					/* class 1 has 8 */
	EXPECT_EQ(-EINVAL, baton_pool_create(name, &p, &pool));
	p = pc_params(16, 0);
	p.max_holders = BATON_POOL_HOLDERS_MAX + 1;
	EXPECT_EQ(-EINVAL, baton_pool_create(name, &p, &pool));
	p = pc_params(16, 0);
	p.mode = 01777;
	EXPECT_EQ(-EINVAL, baton_pool_create(name, &p, &pool));
	p = pc_params(BATON_POOL_COUNT_MAX, 0);	/* 128 + 256 GiB */
	p.classes[0].buf_shift = 21;
	p.classes[1].buf_shift = 22;
	p.classes[1].count = BATON_POOL_COUNT_MAX;
	EXPECT_EQ(-E2BIG, baton_pool_create(name, &p, &pool));
	p.classes[1].count = 1;			/* fits the rules, not /dev/shm */
	EXPECT_EQ(-ENOSPC, baton_pool_create(name, &p, &pool));
	p = pc_params(16, 0);
	EXPECT_EQ(-EINVAL, baton_pool_create("a/b", &p, &pool));
	EXPECT_EQ(-EINVAL, baton_pool_create("", &p, &pool));
	EXPECT_EQ(NULL, pool);
	EXPECT_EQ(-ENOENT, baton_pool_open(name, &pool));
	EXPECT_EQ(-ENOENT, baton_pool_unlink(name));
}

TEST(names_modes_and_holders)
{
	struct baton_pool_params p = pc_params(16, 0);
	struct baton_pool *pool, *more[4];
	struct baton_pool_info info;
	char name[64], path[128];
	struct stat st;
	int i;

	force_memfd();
	ring_name(name, sizeof(name), "names");
	p.mode = 0640;
	p.max_holders = 3;
	ASSERT_EQ(0, baton_pool_create(name, &p, &pool));
	EXPECT_EQ(-EEXIST, baton_pool_create(name, &p, &more[0]));
	pool_file(path, sizeof(path), name);
	ASSERT_EQ(0, stat(path, &st));
	EXPECT_EQ(0640U, st.st_mode & 0777);
	/* Three holder indices: the fourth open is EMFILE. */
	ASSERT_EQ(0, baton_pool_open(name, &more[0]));
	ASSERT_EQ(0, baton_pool_open(name, &more[1]));
	EXPECT_EQ(-EMFILE, baton_pool_open(name, &more[2]));
	ASSERT_EQ(0, baton_pool_info(more[1], &info));
	EXPECT_EQ(2U, info.holder);
	/* A closed holder's index is free again. */
	baton_pool_close(more[0]);
	ASSERT_EQ(0, baton_pool_open(name, &more[0]));
	ASSERT_EQ(0, baton_pool_info(more[0], &info));
	EXPECT_EQ(1U, info.holder);
	/* Unlinked: open handles keep working, the name is gone. */
	ASSERT_EQ(0, baton_pool_unlink(name));
	EXPECT_EQ(-ENOENT, baton_pool_open(name, &more[2]));
	for (i = 0; i < 2; i++) {
		uint64_t h;

		ASSERT_EQ(0, baton_pool_alloc(more[i], 4096, &h));
		EXPECT_EQ(0, baton_pool_free(more[i], h));
		baton_pool_close(more[i]);
	}
	baton_pool_close(pool);
}

/* A scribbled or truncated header: EPROTO at open, nothing mapped. */
TEST(scribbled_header_is_eproto)
{
	struct baton_pool_params p = pc_params(16, 0);
	struct baton_pool *pool, *other = NULL;
	uint64_t old_magic = BATON_POOL_MAGIC, magic = 0;
	char name[64], path[128];
	uint32_t bad = 12345;
	int fd;

	force_memfd();
	ring_name(name, sizeof(name), "scrib");
	ASSERT_EQ(0, baton_pool_create(name, &p, &pool));
	/*
	 * Closed first: a file cut short under a live holder's mappings is
	 * SIGBUS for it, as for any shared file (memfd-backend.rst).
	 */
	baton_pool_close(pool);
	pool_file(path, sizeof(path), name);
	fd = open(path, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(8, pread(fd, &magic, 8,
			   offsetof(struct baton_pool_hdr, magic)));
	/* The magic of an older library's file: another layout. */
	ASSERT_EQ(8, pwrite(fd, &old_magic, 8,
			    offsetof(struct baton_pool_hdr, magic)));
	EXPECT_EQ(-EPROTO, baton_pool_open(name, &other));
	ASSERT_EQ(8, pwrite(fd, &magic, 8,
			    offsetof(struct baton_pool_hdr, magic)));
	ASSERT_EQ(0, baton_pool_open(name, &other));
	baton_pool_close(other);
	other = NULL;
	/* classes[0].qcap: no longer the layout the classes give. */
	ASSERT_EQ(4, pwrite(fd, &bad, 4, offsetof(struct baton_pool_hdr, classes) +
			    offsetof(struct baton_pool_class_layout, qcap)));
	EXPECT_EQ(-EPROTO, baton_pool_open(name, &other));
	ASSERT_EQ(0, ftruncate(fd, 4096));
	EXPECT_EQ(-EPROTO, baton_pool_open(name, &other));
	EXPECT_EQ(NULL, other);
	close(fd);
	baton_pool_unlink(name);
}

/*
 * Queue words another holder scribbled, none of which a live or dead
 * holder ever leaves (pool_cases.h, "queue words no holder leaves
 * there"): a head written back past taken entries moves forward again,
 * losing nothing; an entry in no state at the head makes the class answer
 * ENOMEM; a buffer left KERNEL by no holder is dropped; a freer's entry
 * in no state is published over. Each is counted in bad_words, and none
 * spins for ever (before: every one of them did). A KERNEL buffer of a
 * live holder's decay is dropped too, not waited on (before: it was).
 */

/* A pool of pc_params(64, 0) on memfd, its name gone already: class 0. */
static struct baton_pool_cls *scribble_pool(struct baton_pool **pool)
{
	char name[64];

	force_memfd();
	ring_name(name, sizeof(name), "scq");
	return pc_scribble_pool(name, pool);
}

static uint64_t bad_words_of(struct baton_pool *pool)
{
	struct baton_pool_info info;

	return baton_pool_info(pool, &info) ? 0 : info.bad_words;
}

TEST(scribbled_head_written_back_moves_forward)
{
	struct baton_pool_cls *c;
	struct baton_pool *pool;
	uint64_t h[80];
	int n, dups;

	c = scribble_pool(&pool);
	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, baton_pool_alloc(pool, 4096, &h[0]));
	ASSERT_LT(0U, *c->head);
	(*c->head)--;
	/* All 64, each once. */
	n = pc_alloc_all(pool, h + 1, 79, &dups);
	EXPECT_EQ(63, n);
	EXPECT_EQ(0, dups);
	EXPECT_LE(1U, bad_words_of(pool));
	for (int i = 0; i <= n; i++)
		ASSERT_EQ(0, baton_pool_free(pool, h[i]));
	baton_pool_close(pool);
}

TEST(scribbled_head_entry_answers_enomem)
{
	struct baton_pool_cls *c;
	struct baton_pool *pool;
	uint64_t h[80];
	int n, dups;

	c = scribble_pool(&pool);
	ASSERT_NE(NULL, c);
	c->q[*c->head & (c->qcap - 1)].seq = 12345;
	n = pc_alloc_all(pool, h, 79, &dups);
	EXPECT_EQ(0, dups);
	EXPECT_GT(64, n);
	EXPECT_EQ(-ENOMEM, baton_pool_alloc(pool, 4096, &h[79]));
	EXPECT_LE(1U, bad_words_of(pool));
	baton_pool_close(pool);
}

TEST(kernel_buffer_of_no_holder_is_dropped_and_counted)
{
	struct baton_pool_cls *c;
	struct baton_pool *pool;
	uint64_t h[80];
	int dups;

	c = scribble_pool(&pool);
	ASSERT_NE(NULL, c);
	pc_head_buffer_kernel(c, 0);
	EXPECT_EQ(63, pc_alloc_all(pool, h, 79, &dups));
	EXPECT_EQ(0, dups);
	EXPECT_LE(1U, bad_words_of(pool));
	baton_pool_close(pool);
}

/*
 * KERNEL for a live holder (here the test's own next one, the index the
 * case's pool gets), as a decayer leaves it mid-punch: on memfd that only
 * ever ends in COLD, so the entry is dropped at once rather than waited
 * on. Not counted: it is legal.
 */
TEST(kernel_buffer_of_a_live_decayer_is_not_waited_on)
{
	struct baton_pool_cls *c;
	struct baton_pool *pool;
	uint64_t h[80];
	int dups;

	c = scribble_pool(&pool);
	ASSERT_NE(NULL, c);
	pc_head_buffer_kernel(c, baton__pool_fast(pool)->holder + 1);
	EXPECT_EQ(63, pc_alloc_all(pool, h, 79, &dups));
	EXPECT_EQ(0, dups);
	EXPECT_EQ(0U, bad_words_of(pool));
	baton_pool_close(pool);
}

TEST(scribbled_entry_of_a_freers_ticket_is_published_over)
{
	uint64_t bad = 0;
	char name[64];

	force_memfd();
	ring_name(name, sizeof(name), "fw0");
	EXPECT_EQ(0, pc_scribbled_freer_entry(name, &bad));
	EXPECT_LE(1U, bad);
}

TEST(scribbled_entry_of_a_freers_ticket_a_lap_back_is_published_over)
{
	uint64_t bad = 0;
	char name[64];

	force_memfd();
	ring_name(name, sizeof(name), "fw1");
	EXPECT_EQ(0, pc_scribbled_freer_entry_a_lap_back(name, &bad));
	EXPECT_LE(1U, bad);
}

TEST(scribbled_head_entry_on_the_first_lap_answers_enomem)
{
	uint64_t bad = 0;
	char name[64];

	force_memfd();
	ring_name(name, sizeof(name), "hd1");
	EXPECT_EQ(0, pc_scribbled_head_entry_first_lap(name, &bad));
	EXPECT_LE(1U, bad);
}

/*
 * A message whose buffer is OWNED, under the message's generation, by a
 * holder index no holder can have (past max_holders): no sender will
 * ever commit it, so the receive consumes it as spent (-ESTALE). It used
 * to wait for that sender: until the timeout (-ETIMEDOUT, the message
 * left in the ring), and for ever without one.
 */
TEST(recv_of_a_buffer_owned_by_no_possible_holder_is_stale)
{
	struct baton_pool_params prm = pc_params(64, 0);
	struct baton_ring_params rp = {
		.kind = BATON_RING_SPSC, .slot_count = 16, .slot_size = 16,
		.mode = 0600, .backend = BATON_BACKEND_MEMFD,
	};
	struct baton_ring *prod, *cons;
	struct baton_pool_cls *c;
	struct baton_pool *pool;
	char pname[64], rname[64];
	uint64_t h, got, len;

	force_memfd();
	ring_name(pname, sizeof(pname), "nobodyp");
	ring_name(rname, sizeof(rname), "nobodyr");
	ASSERT_EQ(0, baton_pool_create(pname, &prm, &pool));
	ASSERT_EQ(0, baton_ring_create(rname, &rp, BATON_ROLE_PRODUCER,
				       &prod));
	ASSERT_EQ(0, baton_ring_open(rname, BATON_ROLE_CONSUMER,
				     BATON_BACKEND_MEMFD, &cons));
	ASSERT_EQ(0, baton_pool_alloc(pool, 4096, &h));
	ASSERT_EQ(0, baton_pool_send(prod, pool, h, 4096, 0));
	c = &baton__pool_fast(pool)->cls[0];
	__atomic_store_n(&c->desc[BATON_POOL_H_INDEX(h)].state,
			 BATON_POOL_STATE(BATON_POOL_H_GEN(h), BATON_POOL_OWNED,
					  prm.max_holders + 3),
			 __ATOMIC_RELEASE);
	EXPECT_EQ(-ESTALE, baton_pool_recv(cons, pool, &got, &len,
					   200 * 1000000LL));
	baton_ring_close(cons);
	baton_ring_close(prod);
	baton_ring_unlink(rname, BATON_BACKEND_MEMFD);
	baton_pool_close(pool);
	baton_pool_unlink(pname);
}

TEST(scribbled_tail_answers_as_empty)
{
	uint64_t bad = 0;
	char name[64];

	force_memfd();
	ring_name(name, sizeof(name), "tl0");
	EXPECT_EQ(0, pc_scribbled_tail(name, &bad));
	EXPECT_LE(1U, bad);
}

TEST(every_buffer_once_then_enomem_then_recovery)
{
	char name[64];

	force_memfd();
	ring_name(name, sizeof(name), "all");
	EXPECT_EQ(0, pc_every_buffer_once(name));
}

TEST(alloc_buf_gives_each_buffer_its_own_address)
{
	char name[64];

	force_memfd();
	ring_name(name, sizeof(name), "allocbuf");
	EXPECT_EQ(0, pc_alloc_buf(name, 0));
	ring_name(name, sizeof(name), "allocbufidle");
	EXPECT_EQ(0, pc_alloc_buf(name, 100));
}

TEST(forged_and_stale_handles_touch_nothing)
{
	char name[64];

	force_memfd();
	ring_name(name, sizeof(name), "forged");
	EXPECT_EQ(0, pc_forged_and_stale(name));
}

/* What send and receive refuse, and that they change nothing then. */
TEST(send_and_recv_refuse_bad_input_and_change_nothing)
{
	char pname[64], rname[64];

	force_memfd();
	ring_name(pname, sizeof(pname), "refuse");
	ring_name(rname, sizeof(rname), "refuser");
	EXPECT_EQ(0, pc_send_recv_refusals(pname, rname, BATON_RING_SPSC,
						   BATON_BACKEND_MEMFD));
}

TEST(mpsc_send_and_recv_refuse_bad_input_and_change_nothing)
{
	char pname[64], rname[64];

	force_memfd();
	ring_name(pname, sizeof(pname), "refusem");
	ring_name(rname, sizeof(rname), "refusemr");
	EXPECT_EQ(0, pc_send_recv_refusals(pname, rname, BATON_RING_MPSC,
						   BATON_BACKEND_MEMFD));
}

/*
 * Refills preempted between their head and tail reads: no ENOMEM while
 * half the pool is free, no bad word counted (pool_cases.h).
 */
TEST(a_refill_preempted_mid_read_sees_no_scribble)
{
	uint64_t bad_words = 0;
	char pname[64];

	if (UNDER_TSAN)
		SKIP(return, "fork: not under TSan");
	force_memfd();
	ring_name(pname, sizeof(pname), "preempt");
	EXPECT_EQ(0, pc_refill_survives_preemption(pname, &bad_words));
	EXPECT_EQ(0U, bad_words);
}

TEST(buffers_cross_processes_through_a_ring)
{
	char pname[64], rname[64];

	if (UNDER_TSAN)
		SKIP(return, "fork: not under TSan");
	force_memfd();
	ring_name(pname, sizeof(pname), "xp");
	ring_name(rname, sizeof(rname), "xr");
	EXPECT_EQ(0, pc_cross_processes(pname, rname, BATON_BACKEND_MEMFD));
}

/* The survivors find a dead holder's buffers (pool_cases.h). */
TEST(kill9_at_any_point_loses_and_duplicates_nothing)
{
	struct baton_pool_params p = pc_params(64, 0);
	struct pc_kill_report rep;
	struct baton_pool_info info;
	struct baton_pool *pool;
	char pname[64];

	if (UNDER_TSAN)
		SKIP(return, "fork and kill: not under TSan");
	force_memfd();
	ring_name(pname, sizeof(pname), "kill");
	ASSERT_EQ(0, baton_pool_create(pname, &p, &pool));
	EXPECT_EQ(0, pc_kill_loop(pool, pname, PC_KILL_ROUNDS, &rep))
		TH_LOG("round %d: %d of 64 buffers", rep.round, rep.buffers);
	ASSERT_EQ(0, baton_pool_info(pool, &info));
	EXPECT_LT(0U, info.reclaimed);
	EXPECT_EQ(0U, info.bad_words);
	ksft_print_msg("%d kills: %llu buffers reclaimed, %llu queue entries repaired; every buffer back within %d ms at worst\n",
		       PC_KILL_ROUNDS, (unsigned long long)info.reclaimed,
		       (unsigned long long)info.repaired, rep.worst_ms);
	fflush(stdout);		/* the harness's child ends with _exit() */
	baton_pool_close(pool);
	baton_pool_unlink(pname);
}

TEST(sent_buffer_survives_its_senders_death)
{
	char pname[64], rname[64];

	if (UNDER_TSAN)
		SKIP(return, "fork and kill: not under TSan");
	force_memfd();
	ring_name(pname, sizeof(pname), "sent");
	ring_name(rname, sizeof(rname), "sentr");
	EXPECT_EQ(0, pc_sent_survives(pname, rname, BATON_BACKEND_MEMFD));
}

/* A receive waits out its timeout for a message or its commit. */
TEST(recv_waits_its_timeout_for_a_message_and_for_its_commit)
{
	char pname[64], rname[64];

	force_memfd();
	ring_name(pname, sizeof(pname), "rdl");
	ring_name(rname, sizeof(rname), "rdlr");
	EXPECT_EQ(0, pc_recv_deadlines(pname, rname, BATON_BACKEND_MEMFD));
}

/* A dead producer's tombstone carries no buffer (pool_cases.h). */
TEST(recv_passes_tombstones_within_its_deadline)
{
	char pname[64], rname[64];

	if (UNDER_TSAN)
		SKIP(return, "fork: not under TSan");
	force_memfd();
	ring_name(pname, sizeof(pname), "tomb");
	ring_name(rname, sizeof(rname), "tombr");
	EXPECT_EQ(0, pc_recv_passes_tombstones(pname, rname,
					       BATON_BACKEND_MEMFD));
}

/*
 * A holder stopped (or hostile) while it holds the repair lock: an
 * allocation from an empty class says ENOMEM at once and alloc_wait ends
 * at its timeout; neither waits for the lock. The alarm turns a hang
 * into a failure.
 */
TEST(a_held_repair_lock_never_blocks_an_allocation)
{
	struct flock fl = {
		.l_type = F_WRLCK, .l_whence = SEEK_SET,
		.l_start = 0, .l_len = 1,	/* the repair lock */
	};
	struct baton_pool_params p = pc_params(8, 0);
	char name[64], path[128];
	struct baton_pool *pool;
	uint64_t h[16], extra;
	int fd, dups;

	force_memfd();
	ring_name(name, sizeof(name), "rlock");
	ASSERT_EQ(0, baton_pool_create(name, &p, &pool));
	ASSERT_EQ(8, pc_alloc_all(pool, h, 16, &dups));
	pool_file(path, sizeof(path), name);
	fd = open(path, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fcntl(fd, F_OFD_SETLK, &fl));
	alarm(5);
	EXPECT_EQ(-ENOMEM, baton_pool_alloc(pool, 100, &extra));
	EXPECT_EQ(-ETIMEDOUT, baton_pool_alloc_wait(pool, 100, &extra,
						    10LL * 1000000));
	alarm(0);
	close(fd);
	pc_free_all(pool, h, 8);
	EXPECT_EQ(8, pc_alloc_all(pool, h, 16, &dups));
	EXPECT_EQ(0, dups);
	baton_pool_close(pool);
	baton_pool_unlink(name);
}

TEST(unread_spsc_ring_returns_its_buffers_when_destroyed)
{
	char pname[64], rname[64];

	if (UNDER_TSAN)
		SKIP(return, "fork and kill: not under TSan");
	force_memfd();
	ring_name(pname, sizeof(pname), "unread");
	ring_name(rname, sizeof(rname), "unreadr");
	EXPECT_EQ(0, pc_unread_ring_returns(pname, rname, BATON_RING_SPSC,
					    BATON_BACKEND_MEMFD));
}

TEST(unread_mpsc_ring_returns_its_buffers_when_destroyed)
{
	char pname[64], rname[64];

	if (UNDER_TSAN)
		SKIP(return, "fork and kill: not under TSan");
	force_memfd();
	ring_name(pname, sizeof(pname), "unreadm");
	ring_name(rname, sizeof(rname), "unreadmr");
	EXPECT_EQ(0, pc_unread_ring_returns(pname, rname, BATON_RING_MPSC,
					    BATON_BACKEND_MEMFD));
}

TEST(sends_into_an_unread_ring_come_back)
{
	char pname[64], rname[64];

	force_memfd();
	ring_name(pname, sizeof(pname), "unreads");
	ring_name(rname, sizeof(rname), "unreadsr");
	EXPECT_EQ(0, pc_sends_into_unread_ring_return(pname, rname,
						      BATON_BACKEND_MEMFD));
}

/* Parking on an empty class (pool_cases.h). */
TEST(alloc_waits_for_a_free_and_for_a_death)
{
	char pname[64];
	int ms[2] = { 0, 0 };

	if (UNDER_TSAN)
		SKIP(return, "fork and kill: not under TSan");
	force_memfd();
	ring_name(pname, sizeof(pname), "park");
	EXPECT_EQ(0, pc_alloc_waits(pname, ms));
	ksft_print_msg("parked allocators got a buffer %d ms after the free, %d ms after the death\n",
		       ms[0] - 50, ms[1] - 50);
	fflush(stdout);
}

/* A pool handle inherited across fork() is nothing (pool_cases.h). */
TEST(fork_inherits_nothing_of_a_pool_handle)
{
	char pname[64];

	if (UNDER_TSAN)
		SKIP(return, "fork and kill: not under TSan");
	force_memfd();
	ring_name(pname, sizeof(pname), "fork");
	EXPECT_EQ(0, pc_fork_inherits_nothing(pname));
}

/*
 * A thread opens and closes handles of a pool while the main thread
 * forks: no child may hold the pool's file (fstat of each of its fds
 * against the file's device and inode). An open takes its fd and puts
 * the handle on the list fork()'s child handler closes under one lock;
 * with the two apart, a fork() between them gave the child an fd nobody
 * closes, which kept the holder's lock, so the holder looked alive after
 * its process died (pool.c, the fork() comment).
 */
struct fork_race {
	const char *pname;
	volatile int stop;
	int opens;
};

static void *open_close_loop(void *arg)
{
	struct fork_race *fr = arg;
	struct baton_pool *h;

	while (!fr->stop) {
		if (!baton_pool_open(fr->pname, &h)) {
			baton_pool_close(h);
			fr->opens++;
		}
	}
	return NULL;
}

/* In the child: 1 if any fd is the pool's file. fstat only (fork-safe). */
static int child_holds(dev_t dev, ino_t ino)
{
	struct stat st;
	int fd;

	for (fd = 0; fd < 1024; fd++)
		if (!fstat(fd, &st) && st.st_dev == dev && st.st_ino == ino)
			return 1;
	return 0;
}

TEST(fork_while_another_thread_opens_inherits_no_pool_fd)
{
	struct baton_pool_params p = pc_params(16, 0);
	struct fork_race fr = { 0 };
	struct baton_pool *pool;
	char pname[64], path[128];
	int forks = 0, leaks = 0, status;
	uint64_t end;
	struct stat st;
	pthread_t t;
	pid_t pid;

	if (UNDER_TSAN)
		SKIP(return, "fork: not under TSan");
	force_memfd();
	ring_name(pname, sizeof(pname), "forkrace");
	ASSERT_EQ(0, baton_pool_create(pname, &p, &pool));
	pool_file(path, sizeof(path), pname);
	ASSERT_EQ(0, stat(path, &st));
	fr.pname = pname;
	ASSERT_EQ(0, pthread_create(&t, NULL, open_close_loop, &fr));
	for (end = ph_now_ns() + 1000000000ULL; ph_now_ns() < end; forks++) {
		pid = fork();
		if (!pid)
			_exit(child_holds(st.st_dev, st.st_ino));
		ASSERT_LT(0, pid);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		leaks += !WIFEXITED(status) || WEXITSTATUS(status);
	}
	fr.stop = 1;
	pthread_join(t, NULL);
	EXPECT_EQ(0, leaks)
		TH_LOG("%d of %d children held the pool's file", leaks, forks);
	EXPECT_LT(0, fr.opens);
	ksft_print_msg("%d forks beside %d opens: %d children held the pool's file\n",
		       forks, fr.opens, leaks);
	fflush(stdout);
	baton_pool_close(pool);
	baton_pool_unlink(pname);
}

/* Fan-out: share, put, the last put frees (pool_cases.h). */
/*
 * A thread cancelled while its open waits for another holder's repair
 * lock (F_OFD_SETLKW, a cancellation point, reached under the library's
 * open lock) must not leave that lock held: before, the cancel left it
 * locked, and every later open, close and fork() of the process hung.
 * The test holds the repair byte (0) itself, through its own open file
 * description of the pool file.
 */
static void *open_and_close(void *arg)
{
	struct baton_pool *p;

	if (!baton_pool_open(arg, &p))
		baton_pool_close(p);
	return NULL;
}

/* Join @t within 5 s: 0, or ETIMEDOUT while it is still stuck. */
static int join_within_5s(pthread_t t)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 5;
	return pthread_timedjoin_np(t, NULL, &ts);
}

TEST(cancelled_opener_leaves_the_open_lock_free)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_start = 0, .l_len = 1 };
	struct baton_pool_params prm = pc_params(16, 0);
	struct baton_pool *owner;
	char name[64], path[128];
	pthread_t t;
	int fd;

	force_memfd();
	ring_name(name, sizeof(name), "cancel");
	ASSERT_EQ(0, baton_pool_create(name, &prm, &owner));
	pool_file(path, sizeof(path), name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fcntl(fd, F_OFD_SETLK, &fl));
	ASSERT_EQ(0, pthread_create(&t, NULL, open_and_close, name));
	usleep(100 * 1000);	/* it waits for byte 0 now */
	ASSERT_EQ(0, pthread_cancel(t));
	usleep(50 * 1000);
	fl.l_type = F_UNLCK;
	ASSERT_EQ(0, fcntl(fd, F_OFD_SETLK, &fl));
	ASSERT_EQ(0, join_within_5s(t));
	/* The open lock is free: another open and close finish. */
	ASSERT_EQ(0, pthread_create(&t, NULL, open_and_close, name));
	ASSERT_EQ(0, join_within_5s(t)) TH_LOG("the open lock is still held");
	close(fd);
	baton_pool_close(owner);
	baton_pool_unlink(name);
}

TEST(shared_buffer_returns_after_the_last_put)
{
	char pname[64];

	if (UNDER_TSAN)
		SKIP(return, "fork and kill: not under TSan");
	force_memfd();
	ring_name(pname, sizeof(pname), "share");
	EXPECT_EQ(0, pc_share_and_put(pname, BATON_BACKEND_MEMFD));
}

/* Fan-out: a reader released while the sender pushes (pool_cases.h). */
TEST(reader_released_while_sending_shared_gives_up_its_part)
{
	char pname[64], rbase[64];

	if (UNDER_TSAN)
		SKIP(return, "fork and kill: not under TSan");
	force_memfd();
	ring_name(pname, sizeof(pname), "shsend");
	ring_name(rbase, sizeof(rbase), "shsendr");
	EXPECT_EQ(0, pc_share_while_sending(pname, rbase, BATON_BACKEND_MEMFD));
}

/*
 * Fan-out to three reader processes, one killed each round: nothing
 * lost, nothing twice; the repair clears a dead reader's bits
 * (pool_cases.h).
 */
TEST(fan_out_survives_reader_deaths)
{
	char pname[64], rbase[64];
	struct ph_report rep;
	int rc;

	if (UNDER_TSAN)
		SKIP(return, "fork and kill: not under TSan");
	force_memfd();
	ring_name(pname, sizeof(pname), "fan");
	ring_name(rbase, sizeof(rbase), "fanr");
	rc = pf_run(pname, rbase, BATON_BACKEND_MEMFD, &rep);
	ksft_print_msg("%d fan-out rounds, a reader killed in each: %llu buffers read, %llu messages stale\n",
		       PF_ROUNDS, (unsigned long long)rep.received,
		       (unsigned long long)rep.stale);
	fflush(stdout);
	EXPECT_EQ(0, rc) TH_LOG("round %d: %s (code %d, %d buffers)", rep.round,
				rep.what, rep.code, rep.buffers);
	EXPECT_LT(0U, rep.received);
}

/*
 * kill -9 of a sender or a receiver at any point of a hand-off: nothing
 * lost, nothing twice (selftests/pool_cases.h).
 */
TEST(kill9_in_send_and_receive_loses_nothing)
{
	struct baton_pool_params p = pc_params(PH_BUFFERS, 0);
	struct baton_ring_params rp = pc_ring_params(BATON_BACKEND_MEMFD);
	char pname[64], rname[64];
	struct ph_report rep;
	struct baton_pool *pool;
	struct baton_ring *r;
	int rc;

	if (UNDER_TSAN)
		SKIP(return, "fork and kill: not under TSan");
	force_memfd();
	ring_name(pname, sizeof(pname), "hand");
	ring_name(rname, sizeof(rname), "handr");
	ASSERT_EQ(0, baton_pool_create(pname, &p, &pool));
	ASSERT_EQ(0, baton_ring_create(rname, &rp, BATON_ROLE_PRODUCER, &r));
	baton_ring_close(r);
	rc = ph_run(pool, pname, rname, BATON_BACKEND_MEMFD, 200, &rep);
	ksft_print_msg("200 kills in hand-offs: %llu buffers received, %llu messages stale (sender died before its give)\n",
		       (unsigned long long)rep.received,
		       (unsigned long long)rep.stale);
	fflush(stdout);
	EXPECT_EQ(0, rc) TH_LOG("round %d: %s (code %d, %d buffers)", rep.round,
				rep.what, rep.code, rep.buffers);
	EXPECT_LT(0U, rep.received);
	baton_ring_unlink(rname, BATON_BACKEND_MEMFD);
	baton_pool_close(pool);
	baton_pool_unlink(pname);
}

/*
 * Child: push a message naming a buffer it owns but never give the buffer
 * (a sender between its push and its give), post @pushed, then sleep
 * until killed.
 */
static void push_without_give(const char *pname, const char *rname,
			      volatile uint32_t *pushed)
{
	struct { uint64_t handle, len; } m;
	struct baton_pool *pool;
	struct baton_ring *r;

	if (baton_pool_open(pname, &pool) ||
	    baton_ring_open(rname, BATON_ROLE_PRODUCER, BATON_BACKEND_MEMFD, &r) ||
	    baton_pool_alloc(pool, 4096, &m.handle))
		_exit(50);
	m.len = 4096;
	if (baton_spsc_push(r, &m, sizeof(m), OP_TIMEOUT_NS))
		_exit(51);
	__atomic_store_n(pushed, 1, __ATOMIC_RELEASE);
	pause();
	_exit(52);
}

/* Child: one receive on @rname, its result in *@rc. */
static void receive_once(const char *pname, const char *rname,
			 volatile int32_t *rc, volatile uint32_t *started)
{
	struct baton_pool *pool;
	struct baton_ring *r;
	uint64_t h, len;

	if (baton_pool_open(pname, &pool) ||
	    baton_ring_open(rname, BATON_ROLE_CONSUMER, BATON_BACKEND_MEMFD, &r))
		_exit(60);
	__atomic_store_n(started, 1, __ATOMIC_RELEASE);
	*rc = baton_pool_recv(r, pool, &h, &len, OP_TIMEOUT_NS);
	_exit(0);
}

static pid_t fork_call(void (*fn)(const char *, const char *,
				  volatile uint32_t *),
		       const char *pname, const char *rname,
		       volatile uint32_t *flag)
{
	pid_t pid = fork();

	if (!pid)
		fn(pname, rname, flag);
	while (pid > 0 && !__atomic_load_n(flag, __ATOMIC_ACQUIRE))
		usleep(100);
	return pid;
}

/*
 * Two stages share a pool. Stage 1's receiver waits in a receive whose
 * sender is between its push and its give, and repairs meanwhile; stage
 * 2's sender dies between its push and its give. Whoever repairs it, the
 * dead sender's buffer changes generation when it is taken back, so stage
 * 2's receiver sees its message stale at once: it is not left waiting on
 * a buffer stage 1's receiver adopted and will free only on its next slow
 * path.
 */
TEST(a_dead_senders_buffer_is_stale_to_its_receiver_whoever_repairs)
{
	struct baton_pool_params p = pc_params(16, 0);
	struct baton_ring_params rp = pc_ring_params(BATON_BACKEND_MEMFD);
	volatile uint32_t *sh;
	struct baton_pool *pool;
	struct baton_ring *r1, *r2;
	char pname[64], r1name[64], r2name[64];
	pid_t s1, rcv1, s2;
	struct baton_pool *cp;
	struct baton_ring *cr;
	uint64_t h, len;
	uint64_t t0;
	int rc;

	if (UNDER_TSAN)
		SKIP(return, "fork and kill: not under TSan");
	force_memfd();
	sh = shared_words();
	ASSERT_NE(MAP_FAILED, sh);
	ring_name(pname, sizeof(pname), "stale");
	ring_name(r1name, sizeof(r1name), "stale1");
	ring_name(r2name, sizeof(r2name), "stale2");
	ASSERT_EQ(0, baton_pool_create(pname, &p, &pool));
	ASSERT_EQ(0, baton_ring_create(r1name, &rp, BATON_ROLE_PRODUCER, &r1));
	ASSERT_EQ(0, baton_ring_create(r2name, &rp, BATON_ROLE_PRODUCER, &r2));
	baton_ring_close(r1);
	baton_ring_close(r2);
	/* Stage 1: a live sender that has pushed, its receiver waiting. */
	s1 = fork_call(push_without_give, pname, r1name, &sh[0]);
	ASSERT_LT(0, s1);
	rcv1 = fork();
	ASSERT_LE(0, rcv1);
	if (!rcv1)
		receive_once(pname, r1name, (volatile int32_t *)&sh[4], &sh[1]);
	while (!__atomic_load_n(&sh[1], __ATOMIC_ACQUIRE))
		usleep(100);
	/* Stage 2: a sender killed between its push and its give. */
	s2 = fork_call(push_without_give, pname, r2name, &sh[2]);
	ASSERT_LT(0, s2);
	kill(s2, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, wait_child(s2));
	/* Stage 1's receiver repairs it (once a millisecond) meanwhile. */
	usleep(100 * 1000);
	ASSERT_EQ(0, baton_pool_open(pname, &cp));
	ASSERT_EQ(0, baton_ring_open(r2name, BATON_ROLE_CONSUMER,
				     BATON_BACKEND_MEMFD, &cr));
	t0 = now_ns();
	rc = baton_pool_recv(cr, cp, &h, &len, 500LL * 1000000);
	EXPECT_EQ(-ESTALE, rc)
		TH_LOG("stage 2's receive: %d after %llu ms", rc,
		       (unsigned long long)((now_ns() - t0) / 1000000));
	kill(s1, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, wait_child(s1));
	EXPECT_EQ(0, wait_child(rcv1));
	EXPECT_EQ(-ESTALE, (int32_t)sh[4]);	/* its sender died too */
	baton_ring_close(cr);
	baton_pool_close(cp);
	baton_ring_unlink(r1name, BATON_BACKEND_MEMFD);
	baton_ring_unlink(r2name, BATON_BACKEND_MEMFD);
	baton_pool_close(pool);
	baton_pool_unlink(pname);
	munmap((void *)sh, 4096);
}

/*
 * Child: hold @n buffers of class 0, post @ready, and with @go wait for
 * it, then close the pool and exit 0; without, sleep until killed.
 */
static void hold_then(const char *pname, int n, volatile uint32_t *ready,
		      volatile uint32_t *go)
{
	struct baton_pool *pool;
	uint64_t h;

	if (baton_pool_open(pname, &pool))
		_exit(70);
	while (n--)
		if (baton_pool_alloc(pool, 4096, &h))
			_exit(71);
	__atomic_store_n(ready, 1, __ATOMIC_RELEASE);
	if (!go)
		pause();
	while (!__atomic_load_n(go, __ATOMIC_ACQUIRE))
		usleep(100);
	baton_pool_close(pool);
	_exit(0);
}

static pid_t start_holder(const char *pname, int n, volatile uint32_t *ready,
			  volatile uint32_t *go)
{
	pid_t pid = fork();

	if (!pid)
		hold_then(pname, n, ready, go);
	while (pid > 0 && !__atomic_load_n(ready, __ATOMIC_ACQUIRE))
		usleep(100);
	return pid;
}

/*
 * A holder's close gives back everything it owns, including what the
 * repair its own close runs took back from a dead holder: closing holder
 * B's last flush is a slow path, due for maintenance, and finds holder A
 * dead. Every buffer must then be allocatable again, each once, with
 * nobody left to repair A (B released it).
 */
TEST(a_closing_holder_frees_what_its_last_repair_took_back)
{
	struct baton_pool_params p = pc_params(16, 0);
	volatile uint32_t *sh;
	struct baton_pool *pool;
	uint64_t hs[20];
	char pname[64];
	pid_t a, b;
	int dups;

	if (UNDER_TSAN)
		SKIP(return, "fork and kill: not under TSan");
	force_memfd();
	sh = shared_words();
	ASSERT_NE(MAP_FAILED, sh);
	ring_name(pname, sizeof(pname), "lastrep");
	ASSERT_EQ(0, baton_pool_create(pname, &p, &pool));
	a = start_holder(pname, 4, &sh[0], NULL);
	ASSERT_LT(0, a);
	b = start_holder(pname, 1, &sh[1], &sh[2]);
	ASSERT_LT(0, b);
	kill(a, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, wait_child(a));
	/* Past the repair period, so B's close is due to maintain. */
	usleep(150 * 1000);
	__atomic_store_n(&sh[2], 1, __ATOMIC_RELEASE);
	EXPECT_EQ(0, wait_child(b));
	EXPECT_EQ(16, pc_alloc_all(pool, hs, 20, &dups));
	EXPECT_EQ(0, dups);
	baton_pool_close(pool);
	baton_pool_unlink(pname);
	munmap((void *)sh, 4096);
}

/*
 * Child: allocate one buffer, then do what baton_pool_free()'s flush
 * does with it, through the pool file, up to the step a flusher may die
 * after: take its ticket and record it in our claim, make the buffer
 * FREE, and stop before publishing the entry. Posts @ready, then sleeps
 * until killed.
 */
static void die_before_publishing(const char *pname, volatile uint32_t *ready)
{
	struct baton_pool_class_layout *l;
	struct baton_pool_claim *cl;
	struct baton_pool_desc *d;
	struct baton_pool_hdr h;
	struct baton_pool *pool;
	uint64_t hd, t, s, *tail;
	uint8_t *ctl;

	if (baton_pool_open(pname, &pool) || baton_pool_alloc(pool, 4096, &hd))
		_exit(80);
	ctl = map_ctl(pname, &h);
	if (!ctl)
		_exit(81);
	l = &h.classes[0];
	d = (struct baton_pool_desc *)(ctl + l->ctl_off + BATON_POOL_Q_ENTRIES +
				       (uint64_t)l->qcap * 16) +
	    BATON_POOL_H_INDEX(hd);
	s = __atomic_load_n(&d->state, __ATOMIC_ACQUIRE);
	cl = (struct baton_pool_claim *)(ctl + h.claim_off +
					 (BATON_POOL_S_HOLDER(s) - 1) * 4096ULL);
	tail = (uint64_t *)(ctl + l->ctl_off + BATON_POOL_Q_TAIL);
	cl->entry[0] = BATON_POOL_ENTRY(BATON_POOL_S_GEN(s),
					BATON_POOL_H_INDEX(hd));
	cl->cls = 0;
	cl->n = 1;
	__atomic_store_n(&cl->op, BATON_POOL_CLAIM_PUSH, __ATOMIC_RELEASE);
	__atomic_store_n(&cl->floor, *tail, __ATOMIC_RELEASE);
	t = __atomic_fetch_add(tail, 1, __ATOMIC_ACQ_REL);
	__atomic_store_n(&cl->ticket, t, __ATOMIC_RELEASE);
	__atomic_store_n(&d->state,
			 BATON_POOL_STATE(BATON_POOL_S_GEN(s), BATON_POOL_FREE, 0),
			 __ATOMIC_RELEASE);
	__atomic_store_n(ready, 1, __ATOMIC_RELEASE);
	pause();
	_exit(83);
}

/*
 * What a refill does, through the pool file, up to the step a refiller
 * may die after: its claim (POP, a floor, 16 entries to come) and the
 * compare-and-swap that moves the head past all 16 entries, then stop
 * before recording its ticket. Posts @ready, then sleeps until killed.
 */
static void die_before_its_ticket(const char *pname, volatile uint32_t *ready)
{
	struct baton_pool_class_layout *l;
	struct baton_pool_claim *cl;
	struct baton_pool_info info;
	struct baton_pool_hdr h;
	struct baton_pool *pool;
	uint64_t *head;
	uint8_t *ctl;
	uint32_t i;

	if (baton_pool_open(pname, &pool) || baton_pool_info(pool, &info))
		_exit(80);
	ctl = map_ctl(pname, &h);
	if (!ctl)
		_exit(81);
	l = &h.classes[0];
	cl = (struct baton_pool_claim *)(ctl + h.claim_off +
					 info.holder * 4096ULL);
	head = (uint64_t *)(ctl + l->ctl_off + BATON_POOL_Q_HEAD);
	cl->cls = 0;
	cl->n = 16;
	for (i = 0; i < 16; i++)
		cl->entry[i] = BATON_POOL_NO_INDEX;
	__atomic_store_n(&cl->op, BATON_POOL_CLAIM_POP, __ATOMIC_RELEASE);
	__atomic_store_n(&cl->floor, __atomic_load_n(head, __ATOMIC_ACQUIRE),
			 __ATOMIC_RELEASE);
	__atomic_fetch_add(head, 16, __ATOMIC_ACQ_REL);
	__atomic_store_n(ready, 1, __ATOMIC_RELEASE);
	pause();
	_exit(83);
}

/*
 * A refiller killed between the compare-and-swap that took all 16
 * entries and its ticket; then an open takes its index (the lowest free
 * one) and repairs it as its own. That repair used to count the dead
 * refiller's own claim as a live holder's (the index is the opener's
 * now), never settle it, and let the opener reset the claim: 16 entries
 * past the head that nobody would release, every buffer lost.
 */
TEST(an_open_onto_a_dead_refillers_index_loses_nothing)
{
	struct baton_pool_params p = pc_params(16, 0);
	struct baton_pool *pool, *second;
	volatile uint32_t *sh;
	uint64_t hs[20];
	char pname[64];
	int dups;
	pid_t pid;

	if (UNDER_TSAN)
		SKIP(return, "fork and kill: not under TSan");
	force_memfd();
	sh = shared_words();
	ASSERT_NE(MAP_FAILED, sh);
	ring_name(pname, sizeof(pname), "refd");
	ASSERT_EQ(0, baton_pool_create(pname, &p, &pool));
	pid = fork();
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		die_before_its_ticket(pname, &sh[0]);
	}
	ASSERT_LT(0, pid);
	while (!__atomic_load_n(&sh[0], __ATOMIC_ACQUIRE))
		usleep(100);
	kill(pid, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, wait_child(pid));
	ASSERT_EQ(0, baton_pool_open(pname, &second));
	/* What its repair released went through its magazine: back now. */
	baton_pool_close(second);
	EXPECT_EQ(16, pc_alloc_all(pool, hs, 20, &dups));
	EXPECT_EQ(0, dups);
	baton_pool_close(pool);
	baton_pool_unlink(pname);
	munmap((void *)sh, 4096);
}

/*
 * Create pool @pname (16 buffers) and fork a freer that stops before
 * publishing (die_before_publishing(), killed with this process if it
 * outlives it); return once it stands there. Its pid, or -1.
 */
static pid_t start_unpublished_freer(const char *pname, struct baton_pool **pool,
				     volatile uint32_t *ready)
{
	struct baton_pool_params p = pc_params(16, 0);
	pid_t pid;

	if (baton_pool_create(pname, &p, pool))
		return -1;
	pid = fork();
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		die_before_publishing(pname, ready);
	}
	while (pid > 0 && !__atomic_load_n(ready, __ATOMIC_ACQUIRE))
		usleep(100);
	return pid;
}

/*
 * A freer killed after making its buffer FREE and before publishing its
 * entry. The next allocator waits on that entry and asks for UNSTICK;
 * the freer is dead, but its claim still names the buffer: UNSTICK must
 * finish the claim (publish the buffer), not fill the entry with a hole,
 * which would leave a FREE buffer on no queue, lost for good.
 */
TEST(unstick_publishes_what_a_dead_freers_claim_names)
{
	volatile uint32_t *sh;
	struct baton_pool *pool;
	uint64_t hs[20];
	char pname[64];
	int dups;
	pid_t pid;

	if (UNDER_TSAN)
		SKIP(return, "fork and kill: not under TSan");
	force_memfd();
	sh = shared_words();
	ASSERT_NE(MAP_FAILED, sh);
	ring_name(pname, sizeof(pname), "unpub");
	pid = start_unpublished_freer(pname, &pool, &sh[0]);
	ASSERT_LT(0, pid);
	kill(pid, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, wait_child(pid));
	EXPECT_EQ(16, pc_alloc_all(pool, hs, 20, &dups));
	EXPECT_EQ(0, dups);
	baton_pool_close(pool);
	baton_pool_unlink(pname);
	munmap((void *)sh, 4096);
}

/*
 * The same freer, stopped there instead of killed (SIGSTOP, a debugger, a
 * frozen cgroup): alive, so UNSTICK answers EAGAIN for its ticket for as
 * long as it stays. The allocators behind that ticket answer as for an
 * empty class, ENOMEM, and a wait ETIMEDOUT at its deadline; they used to
 * spin on the ticket with no deadline (the alarm ended them). Once the
 * freer dies, its buffer comes out too: 16 in all, none twice.
 */
TEST(a_stopped_freer_never_holds_an_allocation_past_its_timeout)
{
	volatile uint32_t *sh;
	struct baton_pool *pool;
	uint64_t hs[20], x;
	char pname[64];
	int n, more, dups;
	pid_t pid;

	if (UNDER_TSAN)
		SKIP(return, "fork and kill: not under TSan");
	force_memfd();
	sh = shared_words();
	ASSERT_NE(MAP_FAILED, sh);
	ring_name(pname, sizeof(pname), "stopf");
	pid = start_unpublished_freer(pname, &pool, &sh[0]);
	ASSERT_LT(0, pid);
	alarm(20);
	n = pc_alloc_all(pool, hs, 20, &dups);
	EXPECT_EQ(15, n);
	EXPECT_EQ(-ETIMEDOUT,
		  baton_pool_alloc_wait(pool, 4096, &x, 10 * 1000000LL));
	alarm(0);
	kill(pid, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, wait_child(pid));
	more = pc_alloc_all(pool, hs + n, 20 - n, &dups);
	EXPECT_EQ(16, n + more);
	for (int i = 0; i < n + more; i++)
		for (int j = 0; j < i; j++)
			EXPECT_NE(BATON_POOL_H_INDEX(hs[i]),
				  BATON_POOL_H_INDEX(hs[j]));
	baton_pool_close(pool);
	baton_pool_unlink(pname);
	munmap((void *)sh, 4096);
}

/*
 * Child of a_buffer_held_for_decay_by_the_dead_comes_back: does through
 * the pool file what two holders dying at once can leave, as one holder:
 * pops the head entry of class 0 as a taker does (the head's CAS, the
 * entry released for the next lap) and, as its decay would, takes that
 * entry's buffer FREE -> KERNEL with its own index. Posts @ready, then
 * sleeps until killed: a decaying holder dead with the buffer KERNEL, and
 * its queue entry gone with the taker.
 */
static void die_decaying_a_popped_buffer(const char *pname,
					 volatile uint32_t *ready)
{
	struct baton_pool_class_layout *l;
	struct baton_pool_info info;
	struct baton_pool_desc *d;
	struct baton_pool_qent *e;
	struct baton_pool_hdr h;
	struct baton_pool *pool;
	uint64_t hd, v, s, *head;
	uint8_t *ctl;

	if (baton_pool_open(pname, &pool) || baton_pool_info(pool, &info))
		_exit(80);
	ctl = map_ctl(pname, &h);
	if (!ctl)
		_exit(81);
	l = &h.classes[0];
	head = (uint64_t *)(ctl + l->ctl_off + BATON_POOL_Q_HEAD);
	hd = __atomic_load_n(head, __ATOMIC_ACQUIRE);
	e = (struct baton_pool_qent *)(ctl + l->ctl_off + BATON_POOL_Q_ENTRIES) +
	    (hd & (l->qcap - 1));
	if (__atomic_load_n(&e->seq, __ATOMIC_ACQUIRE) != hd + 1)
		_exit(83);
	v = e->value;
	d = (struct baton_pool_desc *)(ctl + l->ctl_off + BATON_POOL_Q_ENTRIES +
				       (uint64_t)l->qcap * 16) +
	    (v & 0xffffffffu);
	s = BATON_POOL_STATE((uint32_t)(v >> 32), BATON_POOL_FREE, 0);
	if (!__atomic_compare_exchange_n(
		    &d->state, &s,
		    BATON_POOL_STATE((uint32_t)(v >> 32), BATON_POOL_KERNEL,
				     info.holder + 1),
		    0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ||
	    !__atomic_compare_exchange_n(head, &hd, hd + 1, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		_exit(84);
	__atomic_store_n(&e->seq, hd + l->qcap, __ATOMIC_RELEASE);
	ready[1] = (uint32_t)(v & 0xffffffffu);
	__atomic_store_n(ready, 1, __ATOMIC_RELEASE);
	pause();
	_exit(85);
}

/*
 * A holder that dies while its decay holds a buffer (KERNEL with its
 * index), and a taker that had popped that buffer's entry dies too: the
 * repair must not make the buffer FREE (it is on no queue: nobody could
 * reach it again) but COLD, which takers find once the queue is empty.
 * Every buffer of the class is then allocatable, once.
 */
TEST(a_buffer_held_for_decay_by_the_dead_comes_back)
{
	struct baton_pool_params p = pc_params(16, 10000);
	volatile uint32_t *sh;
	struct baton_pool *pool;
	uint64_t hs[20];
	char pname[64];
	int dups;
	pid_t pid;

	if (UNDER_TSAN)
		SKIP(return, "fork and kill: not under TSan");
	force_memfd();
	/* A decay that takes nothing itself, so that only the repair can. */
	p.nr_classes = 1;
	p.classes[1].buf_shift = 0;
	p.classes[1].count = 0;
	p.keep = 16;
	sh = shared_words();
	ASSERT_NE(MAP_FAILED, sh);
	ring_name(pname, sizeof(pname), "deadcold");
	ASSERT_EQ(0, baton_pool_create(pname, &p, &pool));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		die_decaying_a_popped_buffer(pname, &sh[0]);
	while (!__atomic_load_n(&sh[0], __ATOMIC_ACQUIRE))
		usleep(100);
	kill(pid, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, wait_child(pid));
	EXPECT_EQ(16, pc_alloc_all(pool, hs, 20, &dups))
		TH_LOG("buffer %u, held for decay by the dead, is lost",
		       sh[1]);
	EXPECT_EQ(0, dups);
	baton_pool_close(pool);
	baton_pool_unlink(pname);
	munmap((void *)sh, 4096);
}

/* Index @k's life word (BATON_POOL_CLAIM_LIFE), read from the pool file. */
static uint64_t life_of(const char *pname, uint32_t k)
{
	struct baton_pool_hdr h;
	char path[128];
	uint64_t v = 0;
	int fd;

	pool_file(path, sizeof(path), pname);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	if (pread(fd, &h, sizeof(h), 0) != sizeof(h) ||
	    pread(fd, &v, sizeof(v),
		  (off_t)(h.ctl_mmap + h.claim_off + k * 4096ULL +
			  BATON_POOL_CLAIM_LIFE)) != sizeof(v))
		v = 0;
	close(fd);
	return v;
}

/*
 * Each holder of an index takes the next odd life (uapi: the fan-out's
 * check that a reader is the one it shared with), and a closed index's is
 * even: a word of the backend's own that shares those bytes would make
 * two holders of one index look alike.
 */
TEST(each_holder_of_an_index_gets_a_new_life)
{
	struct baton_pool_params p = pc_params(16, 0);
	struct baton_pool_info info;
	struct baton_pool *pool, *b;
	uint64_t first, closed, second;
	char pname[64];

	force_memfd();
	ring_name(pname, sizeof(pname), "life");
	ASSERT_EQ(0, baton_pool_create(pname, &p, &pool));
	ASSERT_EQ(0, baton_pool_open(pname, &b));
	ASSERT_EQ(0, baton_pool_info(b, &info));
	first = life_of(pname, info.holder);
	baton_pool_close(b);
	closed = life_of(pname, info.holder);
	ASSERT_EQ(0, baton_pool_open(pname, &b));
	ASSERT_EQ(0, baton_pool_info(b, &info));
	second = life_of(pname, info.holder);
	EXPECT_EQ(1U, first & 1);
	EXPECT_EQ(0U, closed & 1);
	EXPECT_EQ(1U, second & 1);
	EXPECT_LT(first, second)
		TH_LOG("lives %llu, %llu (closed: %llu)",
		       (unsigned long long)first, (unsigned long long)second,
		       (unsigned long long)closed);
	baton_pool_close(b);
	baton_pool_close(pool);
	baton_pool_unlink(pname);
}

/* Bytes the pool file holds in memory now. */
static uint64_t file_bytes(const char *name)
{
	char path[128];
	struct stat st;

	pool_file(path, sizeof(path), name);
	return stat(path, &st) ? 0 : (uint64_t)st.st_blocks * 512;
}

/*
 * Decay from the slow paths: after a burst of class 0 and an idle spell,
 * a holder that keeps freeing class 1 (no magazine: every free is a slow
 * path) has class 0's pages given back, oldest first, except @keep of
 * them, while a live buffer keeps its contents; the decayed ones come
 * back zeroed.
 */
TEST(decay_from_the_slow_paths_keeps_live_and_kept_buffers)
{
	struct baton_pool_params p = pc_params(64, 20);
	struct baton_pool *pool;
	struct baton_pool_info info;
	uint64_t h[80], live, tick, before, after;
	int n, dups, i, rounds = 0;
	char name[64];
	uint8_t *lp;

	force_memfd();
	p.keep = 8;
	ring_name(name, sizeof(name), "decay");
	ASSERT_EQ(0, baton_pool_create(name, &p, &pool));
	ASSERT_EQ(0, baton_pool_alloc(pool, 65536, &live));
	lp = baton_pool_ptr(pool, live);
	memset(lp, 0xab, 65536);
	ASSERT_EQ(64, pc_burst(name, &dups));
	before = file_bytes(name);
	/* Idle: nothing runs on memfd while every holder sleeps. */
	usleep(100 * 1000);
	ASSERT_EQ(0, baton_pool_info(pool, &info));
	EXPECT_EQ(0U, info.decayed);
	/* Slow paths from now on: decay runs every decay_ms / 4. */
	do {
		ASSERT_EQ(0, baton_pool_alloc(pool, 65536, &tick));
		ASSERT_EQ(0, baton_pool_free(pool, tick));
		usleep(2000);
		ASSERT_EQ(0, baton_pool_info(pool, &info));
	} while (info.decayed < 56 && ++rounds < 5000);
	EXPECT_EQ(56U, info.decayed);
	usleep(100 * 1000);
	ASSERT_EQ(0, baton_pool_alloc(pool, 65536, &tick));
	ASSERT_EQ(0, baton_pool_free(pool, tick));
	ASSERT_EQ(0, baton_pool_info(pool, &info));
	EXPECT_EQ(56U, info.decayed);		/* the other 8 are kept */
	EXPECT_EQ(56U * 4096, info.decayed_bytes);
	EXPECT_EQ(56U, info.cold[0]);		/* COLD, off the queue */
	after = file_bytes(name);
	EXPECT_EQ(56U * 4096, before - after);
	for (i = 0; i < 65536; i++)
		ASSERT_EQ(0xab, lp[i]);
	n = pc_alloc_all(pool, h, 80, &dups);
	EXPECT_EQ(64, n);
	for (i = 0, dups = 0; i < n; i++)
		dups += ((uint8_t *)baton_pool_ptr(pool, h[i]))[100] == 0;
	EXPECT_EQ(56, dups);			/* zeroed: the decayed ones */
	ASSERT_EQ(0, baton_pool_info(pool, &info));
	EXPECT_EQ(0U, info.cold[0]);		/* every one taken back */
	pc_free_all(pool, h, n);
	baton_pool_free(pool, live);
	baton_pool_close(pool);
	baton_pool_unlink(name);
}

/*
 * Move the free time of every FREE buffer of class 0 of pool @pname an
 * hour ahead, as a holder in a time namespace ahead of ours (or a
 * scribble) leaves it. 0, or -1.
 */
static int free_times_ahead(const char *pname)
{
	struct baton_pool_class_layout *l;
	struct baton_pool_desc *d;
	struct baton_pool_hdr h;
	uint8_t *ctl;
	uint32_t j;

	ctl = map_ctl(pname, &h);
	if (!ctl)
		return -1;
	l = &h.classes[0];
	d = (struct baton_pool_desc *)(ctl + l->ctl_off + BATON_POOL_Q_ENTRIES +
				       (uint64_t)l->qcap * 16);
	for (j = 0; j < l->count; j++)
		if (BATON_POOL_S_KIND(__atomic_load_n(&d[j].state,
						      __ATOMIC_ACQUIRE)) ==
		    BATON_POOL_FREE)
			__atomic_fetch_add(&d[j].aux, 3600 * 1000, __ATOMIC_RELAXED);
	munmap(ctl, h.ctl_size);
	return 0;
}

/*
 * Free times an hour ahead of the decaying holder's clock: sorted as
 * freed now, they decay as any (the module's rule). The memfd decay used
 * to skip them, so a holder in a time namespace ahead of the others
 * kept every buffer it freed resident for good.
 */
TEST(free_times_ahead_of_the_clock_still_decay)
{
	struct baton_pool_params p = pc_params(64, 20);
	struct baton_pool_info info;
	struct baton_pool *pool;
	uint64_t tick;
	int dups, rounds = 0;
	char name[64];

	force_memfd();
	p.keep = 8;
	ring_name(name, sizeof(name), "ahead");
	ASSERT_EQ(0, baton_pool_create(name, &p, &pool));
	ASSERT_EQ(64, pc_burst(name, &dups));
	ASSERT_EQ(0, free_times_ahead(name));
	do {
		ASSERT_EQ(0, baton_pool_alloc(pool, 65536, &tick));
		ASSERT_EQ(0, baton_pool_free(pool, tick));
		usleep(2000);
		ASSERT_EQ(0, baton_pool_info(pool, &info));
	} while (info.decayed < 56 && ++rounds < 500);
	TH_LOG("%d rounds of 2 ms, %llu decayed", rounds,
	       (unsigned long long)info.decayed);
	EXPECT_EQ(56U, info.decayed);
	baton_pool_close(pool);
	baton_pool_unlink(name);
}

/* Decay under steady traffic, from the slow paths (pool_cases.h). */
TEST(decay_under_steady_traffic_keeps_only_the_working_set)
{
	long rounds = 0, resident = 0;
	char pname[64];

	force_memfd();
	ring_name(pname, sizeof(pname), "traffic");
	EXPECT_EQ(0, pc_decay_under_traffic(pname, &rounds, &resident));
	ksft_print_msg("%ld rounds of traffic, %ld pages of 4096 resident\n",
		       rounds, resident);
	fflush(stdout);
	baton_pool_unlink(pname);
}

/* ---- idle magazines on memfd (pool.rst, "Idle magazines") ---- */

/* One class of @count buffers of 1 << @shift, decay_ms @decay_ms, and
 * keep = count, so that the free queue's decay takes nothing: whatever is
 * decayed was reaped from a magazine. */
static struct baton_pool_params idle_params(uint32_t shift, uint32_t count,
					    uint32_t decay_ms)
{
	struct baton_pool_params p;

	memset(&p, 0, sizeof(p));
	p.nr_classes = 1;
	p.decay_ms = decay_ms;
	p.keep = count;
	p.max_holders = 8;
	p.classes[0].buf_shift = shift;
	p.classes[0].count = count;
	return p;
}

/* Pages of [@addr, @addr + @len) in memory, or -1. */
static long pages_in_core(void *addr, size_t len)
{
	unsigned char vec[64];
	size_t i, n = len / 4096;
	long in = 0;

	if (n > sizeof(vec) || mincore(addr, len, vec))
		return -1;
	for (i = 0; i < n; i++)
		in += vec[i] & 1;
	return in;
}

/*
 * The memfd decay's driver, another holder: allocates and frees @n
 * buffers of @size (more than its magazine holds, so that it passes the
 * slow paths, where the decay runs) every millisecond until *@stop.
 * Exits 0, or the step that failed.
 */
static void drive_decay(const char *pname, size_t size, int n,
			const volatile uint32_t *stop)
{
	struct baton_pool *pool;
	uint64_t h[64];
	int i;

	if (n > 64 || baton_pool_open(pname, &pool))
		_exit(2);
	while (!__atomic_load_n(stop, __ATOMIC_ACQUIRE)) {
		for (i = 0; i < n; i++)
			if (baton_pool_alloc(pool, size, &h[i]))
				_exit(3);
		for (i = 0; i < n; i++)
			if (baton_pool_free(pool, h[i]))
				_exit(4);
		usleep(1000);
	}
	baton_pool_close(pool);
	_exit(0);
}

/*
 * A holder that freed 16 buffers of 64 KiB into its magazine and then
 * makes no call at all gets their pages given back by another holder's
 * decay (IDLE words, the reap word and membarrier, Y13), and its next
 * allocations fault zeroed pages in and keep what they write. Before,
 * memfd magazines left buffers OWNED, which no decay takes: they stayed
 * resident for as long as the holder lived (and the magazine was capped
 * at 1 MiB for that reason).
 */
TEST(an_idle_magazine_gives_its_pages_back_to_another_holders_decay)
{
	struct baton_pool_params p = idle_params(16, 256, 20);
	struct baton_pool_info info;
	struct baton_pool *pool;
	volatile uint32_t *stop;
	uint64_t h[PC_REAPED_BUFS];
	int i, tries = 0;
	char pname[64];
	pid_t pid;

	if (UNDER_TSAN)
		SKIP(return, "fork: not under TSan");
	force_memfd();
	stop = shared_words();
	ASSERT_NE(MAP_FAILED, stop);
	ring_name(pname, sizeof(pname), "idlemag");
	ASSERT_EQ(0, baton_pool_create(pname, &p, &pool));
	ASSERT_EQ(0, pc_magazine_of_written(pool, h));
	for (i = 0; i < PC_REAPED_BUFS; i++)
		ASSERT_EQ(16, pages_in_core(baton_pool_ptr(pool, h[i]), 65536));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		drive_decay(pname, 65536, 48, stop);
	/* A bound (10 s), not a timing: due after four ticks of 5 ms. */
	do {
		usleep(5000);
		ASSERT_EQ(0, baton_pool_info(pool, &info));
	} while (info.decayed < 16 && ++tries < 2000);
	__atomic_store_n(stop, 1, __ATOMIC_RELEASE);
	EXPECT_EQ(0, wait_child(pid));
	EXPECT_EQ(16U, info.decayed);
	EXPECT_EQ(16ULL << 16, info.decayed_bytes);
	EXPECT_EQ(0, pc_reaped_magazine_comes_back(pool, h));
	baton_pool_close(pool);
	baton_pool_unlink(pname);
	munmap((void *)stop, 4096);
}

/*
 * A stage idle in baton_pool_recv() on a ring of @kind gives back what it
 * freed before the wait: 0, or the step that failed.
 */
static int recv_wait_decays(uint32_t kind)
{
	struct baton_ring_params rp = pc_ring_params(BATON_BACKEND_MEMFD);
	struct baton_pool_params p = idle_params(16, 64, 40);
	struct baton_ring *prod = NULL, *cons = NULL;
	struct baton_pool_info info;
	struct baton_pool *pool;
	uint64_t h[48], got, len;
	char pname[64], rname[64];
	long resident = 0;
	int i, step = 0;

	p.keep = 0;
	rp.kind = kind;
	rp.max_producers = kind == BATON_RING_MPSC ? 2 : 0;
	ring_name(pname, sizeof(pname), "recvdecay");
	ring_name(rname, sizeof(rname), "recvdecayr");
	if (baton_pool_create(pname, &p, &pool))
		return 1;
	if (baton_ring_create(rname, &rp, BATON_ROLE_PRODUCER, &prod) ||
	    baton_ring_open(rname, BATON_ROLE_CONSUMER, BATON_BACKEND_MEMFD,
			    &cons))
		step = 2;
	for (i = 0; !step && i < 48; i++) {
		if (baton_pool_alloc(pool, 65536, &h[i]))
			step = 3;
		else
			memset(baton_pool_ptr(pool, h[i]), i, 65536);
	}
	for (i = 0; !step && i < 48; i++)
		if (baton_pool_free(pool, h[i]))
			step = 4;
	/* Nobody sends: the whole wait is idle (10 decay periods sliced). */
	if (!step && baton_pool_recv(cons, pool, &got, &len,
				     1000000000LL) != -ETIMEDOUT)
		step = 5;
	if (!step && baton_pool_info(pool, &info))
		step = 6;
	for (i = 0; !step && i < 48; i++)
		resident += pages_in_core(baton_pool_ptr(pool, h[i]), 65536);
	if (!step && (info.decayed != 48 || resident))
		step = 7;
	if (cons)
		baton_ring_close(cons);
	if (prod)
		baton_ring_close(prod);
	baton_ring_unlink(rname, BATON_BACKEND_MEMFD);
	baton_pool_close(pool);
	baton_pool_unlink(pname);
	return step;
}

/*
 * The wait comes out every decay period to maintain the pool (lib/pool.c,
 * recv_slice()). Before, a memfd holder blocked in its receive never
 * decayed (nothing ran its slow paths): a burst it freed stayed resident
 * for as long as it waited (step 7: 0 of 48 decayed, 768 pages in core).
 */
TEST(a_holder_waiting_in_recv_decays_what_it_freed)
{
	force_memfd();
	EXPECT_EQ(0, recv_wait_decays(BATON_RING_SPSC));
	EXPECT_EQ(0, recv_wait_decays(BATON_RING_MPSC));
}

/*
 * Another holder's reap never gives back a page under a buffer in use
 * (Y13 with membarrier): for three seconds this holder allocates a few
 * buffers, tags every page of each, sleeps up to 25 ms (decay_ms 10: the
 * bottom of its magazine ages and is reaped meanwhile, while it pops from
 * the top), checks the tags and frees them, while a second process drives
 * the decay from its slow paths. A page given back under a live buffer
 * reads zero. keep = count, so every buffer decayed was reaped from a
 * magazine, and some must have been, or the test proved nothing.
 */
TEST(another_holders_reap_never_takes_a_buffer_in_use)
{
	struct baton_pool_params p = idle_params(14, 512,
						 BATON_POOL_DECAY_MIN_MS);
	struct baton_pool_info info;
	struct baton_pool *pool;
	volatile uint32_t *stop;
	uint64_t rounds;
	char pname[64];
	long lost;
	pid_t pid;

	if (UNDER_TSAN)
		SKIP(return, "fork: not under TSan");
	force_memfd();
	stop = shared_words();
	ASSERT_NE(MAP_FAILED, stop);
	ring_name(pname, sizeof(pname), "idlerace");
	ASSERT_EQ(0, baton_pool_create(pname, &p, &pool));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		drive_decay(pname, 16384, 48, stop);
	lost = pc_tagged_rounds(pool, 3000000000ULL, &rounds);
	__atomic_store_n(stop, 1, __ATOMIC_RELEASE);
	EXPECT_EQ(0, wait_child(pid));
	ASSERT_LE(0, lost);
	ASSERT_EQ(0, baton_pool_info(pool, &info));
	ksft_print_msg("%llu rounds, %llu buffers reaped from magazines\n",
		       (unsigned long long)rounds,
		       (unsigned long long)info.decayed);
	fflush(stdout);
	EXPECT_EQ(0, lost);
	EXPECT_LT(0U, info.decayed);
	baton_pool_close(pool);
	baton_pool_unlink(pname);
	munmap((void *)stop, 4096);
}

/*
 * The reap word is the holders' (the header page is theirs to write): a
 * reaper killed with it set, or a holder that scribbles it, must not stop
 * an allocation for good. Every byte of the backend's words (header page,
 * 2048 on) is scribbled; the allocations from the magazine find the word
 * set, see that nobody holds the repair lock, clear it and go on. The
 * harness's timeout is the bound.
 */
TEST(a_reap_word_nobody_clears_never_stops_an_allocation)
{
	struct baton_pool_params p = idle_params(14, 64, 1000);
	struct baton_pool *pool;
	uint8_t junk[2048];
	char pname[64], path[128];
	uint64_t h[8];
	int i, fd, zeros;

	force_memfd();
	ring_name(pname, sizeof(pname), "reapword");
	ASSERT_EQ(0, baton_pool_create(pname, &p, &pool));
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(0, baton_pool_alloc(pool, 16384, &h[i]));
		memset(baton_pool_ptr(pool, h[i]), i + 1, 16384);
	}
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, baton_pool_free(pool, h[i]));
	pool_file(path, sizeof(path), pname);
	fd = open(path, O_RDWR);
	ASSERT_LE(0, fd);
	memset(junk, 0xa5, sizeof(junk));
	ASSERT_EQ((ssize_t)sizeof(junk), pwrite(fd, junk, sizeof(junk), 2048));
	close(fd);
	for (i = 0; i < 8; i++) {
		const uint8_t *b;

		ASSERT_EQ(0, baton_pool_alloc(pool, 16384, &h[i]));
		b = baton_pool_ptr(pool, h[i]);
		/* Not reaped (no decay ran): what was written stays. */
		EXPECT_NE(0, b[0]);
		EXPECT_EQ(b[0], b[16383]);
	}
	/*
	 * The allocations did look at the word and clear it: 8 bytes of
	 * the scribble are 0 now (nothing else writes there: no upkeep is
	 * due, its schedule word being scribbled far ahead).
	 */
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)sizeof(junk), pread(fd, junk, sizeof(junk), 2048));
	close(fd);
	for (i = 0, zeros = 0; i < (int)sizeof(junk); i += 8)
		zeros += !memcmp(junk + i, "\0\0\0\0\0\0\0\0", 8);
	EXPECT_EQ(1, zeros);
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, baton_pool_free(pool, h[i]));
	baton_pool_close(pool);
	baton_pool_unlink(pname);
}

/*
 * A reaper stopped inside its reap (SIGSTOP, a debugger, a frozen cgroup),
 * as the other holders see one: the reap word set, the repair lock held
 * by a live file. Here a second file of this process holds the lock and
 * the word is scribbled odd. Its second read may have seen every buffer
 * that was IDLE in a magazine then (@cand), to punch when it runs again;
 * so none of those may be handed out while it is stopped, and nobody may
 * wait on it. Before 2.10 the allocation below waited until the word
 * cleared (here: for ever).
 */
struct stopped_reap {
	char pname[64], path[128];
	struct baton_pool *pool;
	struct baton_pool *other;
	int lock_fd;
	void *cand[32];
	uint32_t cand_index[32];
	int nr_cand;
};

static int stop_a_reap(struct stopped_reap *r)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_start = 0, .l_len = 1 };
	uint8_t junk[2048];
	int fd, ret;

	/*
	 * Opened first, before the lock: so that this handle's open does
	 * not depend on the index it finds (an open past a held repair
	 * lock on a dead holder's index waits 10 ms, then moves on).
	 */
	if (baton_pool_open(r->pname, &r->other))
		return -1;
	pool_file(r->path, sizeof(r->path), r->pname);
	r->lock_fd = open(r->path, O_RDWR);
	if (r->lock_fd < 0 || fcntl(r->lock_fd, F_OFD_SETLK, &fl))
		return -1;
	/* The backend's words: no upkeep due (its schedule far ahead), reap odd. */
	memset(junk, 0xa5, sizeof(junk));
	fd = open(r->path, O_RDWR);
	if (fd < 0)
		return -1;
	ret = pwrite(fd, junk, sizeof(junk), 2048) == (ssize_t)sizeof(junk) ? 0 : -1;
	close(fd);
	return ret;
}

/* Free @h into the magazine, where the reap about to stop will see it IDLE. */
static int free_a_candidate(struct stopped_reap *r, uint64_t h)
{
	r->cand[r->nr_cand] = baton_pool_ptr(r->pool, h);
	r->cand_index[r->nr_cand++] = BATON_POOL_H_INDEX(h);
	return baton_pool_free(r->pool, h);
}

static int is_candidate(const struct stopped_reap *r, uint64_t h)
{
	int i;

	for (i = 0; i < r->nr_cand; i++)
		if (r->cand_index[i] == BATON_POOL_H_INDEX(h))
			return 1;
	return 0;
}

/*
 * Another holder takes every buffer the queue has while the reaper is
 * stopped: none may be a candidate (a flush that published one, or a
 * set-aside that queued the magazine, would show here). Frees them all
 * again; how many it took, or -1.
 */
static int another_holder_finds_no_candidate(struct stopped_reap *r,
					     size_t size)
{
	uint64_t h[256];
	int n = 0, i, bad = 0;

	while (n < 256 && !baton_pool_alloc(r->other, size, &h[n]))
		bad += is_candidate(r, h[n++]);
	for (i = 0; i < n; i++)
		baton_pool_free(r->other, h[i]);
	return bad ? -1 : n;
}

/* The stopped reaper runs again: it punches what its second read saw. */
static void resume_the_reap(struct stopped_reap *r, size_t size)
{
	int i;

	for (i = 0; i < r->nr_cand; i++)
		madvise(r->cand[i], size, MADV_REMOVE);
}

/*
 * The reaper dies (its lock goes with its file): every buffer of the pool
 * comes back to us, none twice, the ones set aside included.
 */
static int all_buffers_come_back(struct baton_pool *pool, size_t size,
				 uint32_t count, uint64_t *held, int nr_held)
{
	uint8_t seen[4096] = { 0 };
	uint64_t h[4096];
	uint32_t n = 0, i;

	for (i = 0; i < (uint32_t)nr_held; i++)
		if (baton_pool_free(pool, held[i]))
			return -1;
	while (n < count && !baton_pool_alloc_wait(pool, size, &h[n],
						   1000 * 1000 * 1000)) {
		if (seen[BATON_POOL_H_INDEX(h[n])]++)
			return -2;
		n++;
	}
	for (i = 0; i < n; i++)
		baton_pool_free(pool, h[i]);
	return n == count ? 0 : -3;
}

/*
 * While the reaper is stopped, @n allocations: none a candidate, none
 * on another holder's queue either; each keeps what it was given when
 * the reaper runs again. 0, or the step that failed.
 */
static int allocs_stay_clear_of_the_reap(struct stopped_reap *r, uint64_t *h,
					 int n)
{
	uint64_t t0 = now_ns();
	int i, j;

	for (i = 0; i < n; i++) {
		if (baton_pool_alloc(r->pool, 16384, &h[i]))
			return 1;
		if (!i) {	/* reported, not asserted: how long it held us */
			printf("# the first allocation past the stopped reap: %.1f ms\n",
			       (now_ns() - t0) / 1e6);
			fflush(stdout);
		}
		if (is_candidate(r, h[i]))
			return 2;
		memset(baton_pool_ptr(r->pool, h[i]), 0x40 + i, 16384);
	}
	if (another_holder_finds_no_candidate(r, 16384) <= 0)
		return 3;
	resume_the_reap(r, 16384);
	for (i = 0; i < n; i++) {
		const uint8_t *b = baton_pool_ptr(r->pool, h[i]);

		for (j = 0; j < 16384; j += 4096)
			if (b[j] != 0x40 + i)
				return 4;
	}
	return 0;
}

/* The reaper dies; the @n buffers in @h are freed. 0, or the step. */
static int the_reaper_lets_go(struct stopped_reap *r, uint64_t *h, int n)
{
	int ret;

	close(r->lock_fd);
	baton_pool_close(r->other);
	ret = all_buffers_come_back(r->pool, 16384, 256, h, n);
	baton_pool_close(r->pool);
	baton_pool_unlink(r->pname);
	return ret ? 10 - ret : 0;
}

TEST(a_stopped_reaper_never_holds_an_allocation)
{
	struct baton_pool_params p = idle_params(14, 256, 1000);
	struct stopped_reap r = { 0 };
	uint64_t h[16];
	int i;

	force_memfd();
	ring_name(r.pname, sizeof(r.pname), "stopreap");
	ASSERT_EQ(0, baton_pool_create(r.pname, &p, &r.pool));
	for (i = 0; i < 16; i++)
		ASSERT_EQ(0, baton_pool_alloc(r.pool, 16384, &h[i]));
	for (i = 0; i < 16; i++)
		ASSERT_EQ(0, free_a_candidate(&r, h[i]));
	ASSERT_EQ(0, stop_a_reap(&r));
	/* Each from the magazine (of 32), which holds the reap's candidates. */
	EXPECT_EQ(0, allocs_stay_clear_of_the_reap(&r, h, 16));
	EXPECT_EQ(0, the_reaper_lets_go(&r, h, 16));
}

/*
 * The same reap found by a flush, past its tickets: the rest of that
 * flush becomes holes in the queue and stays ours, with the magazine's
 * candidates; nobody takes one while the reaper is stopped.
 */
TEST(a_stopped_reaper_never_holds_a_flush)
{
	struct baton_pool_params p = idle_params(14, 256, 1000);
	struct stopped_reap r = { 0 };
	uint64_t h[40];
	int i;

	force_memfd();
	ring_name(r.pname, sizeof(r.pname), "stopflush");
	ASSERT_EQ(0, baton_pool_create(r.pname, &p, &r.pool));
	for (i = 0; i < 40; i++)
		ASSERT_EQ(0, baton_pool_alloc(r.pool, 16384, &h[i]));
	for (i = 0; i < 16; i++)
		ASSERT_EQ(0, free_a_candidate(&r, h[i]));
	ASSERT_EQ(0, stop_a_reap(&r));
	/*
	 * 8 left from the last refill and the 16 candidates: the 9th of
	 * these frees overflows the magazine of 32, a flush past the word.
	 */
	for (i = 16; i < 40; i++)
		ASSERT_EQ(0, baton_pool_free(r.pool, h[i]));
	EXPECT_EQ(0, allocs_stay_clear_of_the_reap(&r, h, 24));
	EXPECT_EQ(0, the_reaper_lets_go(&r, h, 24));
}

/*
 * A holder closes after a reap it met has stopped and made it set its
 * magazines aside; with @let_go_first the reaper lets go of the lock
 * just before the close (the word still says that reap), else only
 * after it. The close's own walk gives the buffers back (the pool's
 * reclaimed count moves at the close), or, with the lock still held,
 * nothing does until the next repair. Then another holder must be able
 * to take every buffer, twice over. 0, or the step that failed.
 */
static int close_past_a_stopped_reap(const char *tag, int let_go_first)
{
	struct baton_pool_params p = idle_params(14, 256, 1000);
	struct baton_pool_info before, after;
	struct stopped_reap r = { 0 };
	uint64_t h[16];
	int i, round;

	force_memfd();
	ring_name(r.pname, sizeof(r.pname), tag);
	if (baton_pool_create(r.pname, &p, &r.pool))
		return 1;
	for (i = 0; i < 16; i++)
		if (baton_pool_alloc(r.pool, 16384, &h[i]))
			return 2;
	for (i = 0; i < 16; i++)
		if (baton_pool_free(r.pool, h[i]))
			return 3;
	if (stop_a_reap(&r))
		return 4;
	if (baton_pool_alloc(r.pool, 16384, &h[0]))	/* sets aside */
		return 5;
	if (let_go_first)
		close(r.lock_fd);
	if (baton_pool_info(r.other, &before))
		return 6;
	alarm(5);
	baton_pool_close(r.pool);
	alarm(0);
	if (baton_pool_info(r.other, &after))
		return 7;
	if (let_go_first ? after.reclaimed <= before.reclaimed :
			   after.reclaimed != before.reclaimed)
		return 8;
	if (!let_go_first)
		close(r.lock_fd);
	for (round = 0; round < 2; round++)
		if (all_buffers_come_back(r.other, 16384, 256, h, 0))
			return 9 + round;
	baton_pool_close(r.other);
	baton_pool_unlink(r.pname);
	return 0;
}

/*
 * The reaper is still stopped when the holder closes: the close waits
 * 10 ms for its lock, then leaves what it kept to the repair of its
 * index, as a death does (before 2.10.1 it waited for the lock).
 */
TEST(a_holder_closing_past_a_stopped_reap_loses_nothing)
{
	EXPECT_EQ(0, close_past_a_stopped_reap("stopclose", 0));
}

/*
 * The reaper let go of the lock first: the close's own walk gives back
 * what it kept aside, once. (A buffer queued twice, which the walk and
 * the aside list together once did, shows in no public counter: the
 * second entry is stale to every taker.)
 */
TEST(a_holder_closing_after_a_stopped_reap_lets_go_loses_nothing)
{
	EXPECT_EQ(0, close_past_a_stopped_reap("stopgone", 1));
}

/* A second file of this process holds the repair lock: a stopped holder. */
static int stop_a_repairer(const char *pname)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_start = 0, .l_len = 1 };
	char path[128];
	int fd;

	pool_file(path, sizeof(path), pname);
	fd = open(path, O_RDWR);
	if (fd >= 0 && fcntl(fd, F_OFD_SETLK, &fl)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Open, take @n buffers of 4 KiB and keep them, close: the close must
 * give them back, or leave them to the next repair as a death does.
 * The holder index the handle had, or -1.
 */
static int open_hold_close(const char *pname, int n)
{
	struct baton_pool_info info;
	struct baton_pool *late;
	uint64_t h;

	if (baton_pool_open(pname, &late))
		return -1;
	if (baton_pool_info(late, &info))
		return -1;
	while (n--) {
		if (baton_pool_alloc(late, 4096, &h))
			return -1;
		memset(baton_pool_ptr(late, h), 0x5a, 4096);
	}
	baton_pool_close(late);
	return (int)info.holder;
}

/*
 * A holder stopped (SIGSTOP, a debugger, a frozen cgroup) while it holds
 * the repair lock: another handle's open and close go on without it past
 * about 10 ms, the close leaving what it held to the next repair, as a
 * death does, and its index dirty; once every free index is, an open
 * answers EMFILE. Once the lock goes, every buffer comes back, none
 * twice. Before 2.10.1 both waited for the lock (here for ever: the
 * alarm fails the test).
 */
TEST(a_stopped_repairer_never_holds_an_open_or_a_close)
{
	struct baton_pool_params p = pc_params(64, 0);
	struct baton_pool *pool, *late;
	char pname[64];
	uint64_t t0;
	int lock_fd, round;

	force_memfd();
	ring_name(pname, sizeof(pname), "stoprep");
	ASSERT_EQ(0, baton_pool_create(pname, &p, &pool));
	lock_fd = stop_a_repairer(pname);
	ASSERT_LE(0, lock_fd);
	alarm(5);
	/* Indices 1..7 of 8: each round's is the last one's, now dirty. */
	for (round = 0; round < 7; round++) {
		t0 = now_ns();
		EXPECT_EQ(round + 1, open_hold_close(pname, 8));
		printf("# open and close past the stopped repairer: %.1f ms\n",
		       (now_ns() - t0) / 1e6);
		fflush(stdout);
	}
	/* Every free index a dead holder's that nobody can repair now. */
	EXPECT_EQ(-EMFILE, baton_pool_open(pname, &late));
	alarm(0);
	close(lock_fd);
	/* The repairer lets go: an open repairs them all, 56 buffers. */
	ASSERT_EQ(0, baton_pool_open(pname, &late));
	baton_pool_close(late);
	EXPECT_EQ(0, all_buffers_come_back(pool, 4096, 64, NULL, 0));
	baton_pool_close(pool);
	baton_pool_unlink(pname);
}

/*
 * The lowest free index is a dead holder's that nobody has repaired, and
 * the repair lock is held by a stopped holder: an open must not take that
 * index (reusing it unrepaired would lose the dead holder's buffers and
 * claims) and must not wait either; it takes an index nobody left dirty.
 * The dead holder's buffers come back once the lock goes.
 */
TEST(an_open_past_a_stopped_repairer_skips_a_dead_holders_index)
{
	struct baton_pool_params p = pc_params(64, 0);
	volatile uint32_t *sh;
	struct baton_pool *pool;
	char pname[64];
	int lock_fd;
	pid_t dead;

	if (UNDER_TSAN)
		SKIP(return, "fork and kill: not under TSan");
	force_memfd();
	sh = shared_words();
	ASSERT_NE(MAP_FAILED, sh);
	ring_name(pname, sizeof(pname), "stopdirty");
	ASSERT_EQ(0, baton_pool_create(pname, &p, &pool));
	dead = start_holder(pname, 8, &sh[0], NULL);	/* index 1 */
	ASSERT_LT(0, dead);
	kill(dead, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, wait_child(dead));
	lock_fd = stop_a_repairer(pname);
	ASSERT_LE(0, lock_fd);
	alarm(5);
	EXPECT_EQ(2, open_hold_close(pname, 4));
	alarm(0);
	close(lock_fd);
	EXPECT_EQ(0, all_buffers_come_back(pool, 4096, 64, NULL, 0));
	baton_pool_close(pool);
	baton_pool_unlink(pname);
	munmap((void *)sh, 4096);
}

TEST_HARNESS_MAIN

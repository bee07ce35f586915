// SPDX-License-Identifier: GPL-2.0
/*
 * pool: buffer pools against the real module (Documentation/pool.rst).
 *
 * The ioctls: every geometry rule of BATON_IOC_POOL_CREATE (EINVAL,
 * E2BIG), names (EEXIST, ENOENT after unlink), the holder limit (EMFILE),
 * the feature bit. The library: every buffer of a class once, then
 * ENOMEM, then recovery; forged and stale handles touch nothing; buffers
 * handed from process to process through a ring, contents intact. Deaths:
 * kill -9 of a holder at random points of an allocate/fill/free loop, and
 * of a sender or a receiver in the middle of hand-offs, 200 times each;
 * every 25 every buffer must be allocatable exactly once. Fan-out: the
 * last reader's put frees a shared buffer, and a killed reader's part is
 * given up at its release. A ring nobody reads again (bound to the pool
 * by its first send) gives its unread SENT buffers back when destroyed,
 * and only those: not while a consumer may still attach, not a held or
 * elsewhere-sent buffer a scribbled slot names; the bind's refusals.
 * Decay: idle
 * buffers' pages go back (the data region's resident size falls) while a
 * live buffer's contents stay, keep is kept, and large frames a live
 * holder freed are not hoarded in its magazine. The cases both backends
 * run are in pool_cases.h (host/pool_memfd.c runs them on memfd).
 */
#include "common.h"
#include "pool_cases.h"

#include <sched.h>

static void raw_create_init(struct baton_pool_create *k, const char *name)
{
	memset(k, 0, sizeof(*k));
	k->size = sizeof(*k);
	k->mode = 0600;
	k->nr_classes = 1;
	k->max_holders = 4;
	k->classes[0].buf_shift = 12;
	k->classes[0].count = 16;
	snprintf(k->name, sizeof(k->name), "%s", name);
}

/* 0 or the errno of BATON_IOC_POOL_CREATE; closes the fd it gets. */
static int raw_create(const struct baton_pool_create *in)
{
	struct baton_pool_create k = *in;
	int dev = bt_dev_open(), ret;

	if (dev < 0)
		return errno;
	ret = ioctl(dev, BATON_IOC_POOL_CREATE, &k) ? errno : 0;
	if (!ret)
		close(k.out_fd);
	close(dev);
	return ret;
}

/* A raw pool fd of pool @pname (BATON_IOC_POOL_OPEN): fd, or -errno. */
static int raw_pool_open(const char *pname, uint32_t flags)
{
	struct baton_pool_open k;
	int dev = bt_dev_open(), ret;

	if (dev < 0)
		return -errno;
	memset(&k, 0, sizeof(k));
	k.size = sizeof(k);
	k.flags = flags;
	snprintf(k.name, sizeof(k.name), "%s", pname);
	ret = ioctl(dev, BATON_IOC_POOL_OPEN, &k) ? -errno : k.out_fd;
	close(dev);
	return ret;
}

TEST(create_rejects_bad_geometry)
{
	struct baton_pool_create k;
	char name[64];

	BT_REQUIRE_DEV();
	bt_make_name(name, sizeof(name), "geo");
#define BAD(field_change, err) do {					\
		raw_create_init(&k, name);				\
		field_change;						\
		EXPECT_EQ(err, raw_create(&k));				\
	} while (0)
	BAD(k.flags = BATON_POOL_F_TAKES_COLD << 1, EINVAL);
	BAD(k.reserved0 = 1, EINVAL);
	BAD(k.reserved[1] = 1, EINVAL);
	BAD(k.mode = 01000, EINVAL);
	BAD(k.nr_classes = 0, EINVAL);
	BAD(k.nr_classes = BATON_POOL_CLASSES_MAX + 1, EINVAL);
	BAD(k.classes[0].buf_shift = 11, EINVAL);
	BAD(k.classes[0].buf_shift = 23, EINVAL);
	BAD(k.classes[0].count = 0, EINVAL);
	BAD(k.classes[0].count = BATON_POOL_COUNT_MAX + 1, EINVAL);
	BAD(k.classes[1].count = 1, EINVAL);	/* past nr_classes */
	BAD((k.nr_classes = 2, k.classes[1].buf_shift = 12,
	     k.classes[1].count = 1), EINVAL);	/* same size twice */
	BAD((k.nr_classes = 2, k.classes[0].buf_shift = 13,
	     k.classes[1].buf_shift = 12, k.classes[1].count = 1), EINVAL);
	BAD(k.decay_ms = BATON_POOL_DECAY_MIN_MS - 1, EINVAL);
	BAD(k.decay_ms = BATON_POOL_DECAY_MAX_MS + 1, EINVAL);
	BAD(k.keep = 17, EINVAL);
	BAD(k.max_holders = 0, EINVAL);
	BAD(k.max_holders = BATON_POOL_HOLDERS_MAX + 1, EINVAL);
	BAD(k.name[0] = 0, EINVAL);
	BAD(k.name[0] = '/', EINVAL);
	/* 65536 buffers of each size from 128 KiB to 4 MiB: 504 GiB */
	BAD(({
		uint32_t i;

		k.nr_classes = 6;
		for (i = 0; i < 6; i++) {
			k.classes[i].buf_shift = 17 + i;
			k.classes[i].count = BATON_POOL_COUNT_MAX;
		}
	}), E2BIG);
#undef BAD
	raw_create_init(&k, name);
	k.flags = BATON_POOL_F_TAKES_COLD;
	ASSERT_EQ(0, raw_create(&k));
	/* Its only fd was closed; the name stays until unlinked. */
	EXPECT_EQ(EEXIST, raw_create(&k));
	EXPECT_EQ(-EINVAL, raw_pool_open(name, BATON_POOL_F_TAKES_COLD << 1));
	EXPECT_EQ(0, baton_pool_unlink(name));
}

TEST(names_holders_and_feature_bit)
{
	struct baton_pool_params p = pc_params(16, 0);
	struct baton_pool *pool, *other[8];
	struct baton_version v = { .size = sizeof(v) };
	char name[64];
	int dev, i;

	BT_REQUIRE_DEV();
	dev = bt_dev_open();
	ASSERT_GE(dev, 0);
	ASSERT_EQ(0, ioctl(dev, BATON_IOC_VERSION, &v));
	EXPECT_TRUE(v.out_features & BATON_FEAT_POOL);
	EXPECT_TRUE(v.out_features & BATON_FEAT_RING_BIND);
	EXPECT_TRUE(v.out_features & BATON_FEAT_POOL_COLD);
	EXPECT_TRUE(v.out_features & BATON_FEAT_POOL_COLD_OPTIN);
	EXPECT_TRUE(v.out_features & BATON_FEAT_POOL_IDLE);
	close(dev);

	bt_make_name(name, sizeof(name), "names");
	p.max_holders = 3;
	ASSERT_EQ(0, baton_pool_create(name, &p, &pool));
	EXPECT_EQ(-EEXIST, baton_pool_create(name, &p, &other[0]));
	ASSERT_EQ(0, baton_pool_open(name, &other[0]));
	ASSERT_EQ(0, baton_pool_open(name, &other[1]));
	EXPECT_EQ(-EMFILE, baton_pool_open(name, &other[2]));
	baton_pool_close(other[1]);
	ASSERT_EQ(0, baton_pool_open(name, &other[1]));
	for (i = 0; i < 2; i++)
		baton_pool_close(other[i]);
	EXPECT_EQ(0, baton_pool_unlink(name));
	EXPECT_EQ(-ENOENT, baton_pool_open(name, &other[0]));
	EXPECT_EQ(-ENOENT, baton_pool_unlink(name));
	/* Unlinked but open: still usable. */
	{
		uint64_t h;

		ASSERT_EQ(0, baton_pool_alloc(pool, 100, &h));
		EXPECT_EQ(0, baton_pool_free(pool, h));
	}
	baton_pool_close(pool);
}

/*
 * Does the mapping that holds @addr carry VmFlags token @flag (smaps)?
 * -1 if no mapping holds it.
 */
static int vma_flag(const void *addr, const char *flag)
{
	unsigned long a = (unsigned long)addr, lo, hi;
	char line[512], tok[8];
	int in = 0, found = -1;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	snprintf(tok, sizeof(tok), " %s", flag);
	while (fgets(line, sizeof(line), f)) {
		/* A field ("Rss:") never parses as two numbers. */
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in = a >= lo && a < hi;
		else if (in && !strncmp(line, "VmFlags:", 8)) {
			line[strcspn(line, "\n")] = ' ';
			found = strstr(line, tok) && strstr(line, tok)[3] == ' ';
			break;
		}
	}
	fclose(f);
	return found;
}

/*
 * A core dump reads every page of every dumped mapping; a read of a
 * pool buffer's never-touched pages allocates them (the data region is a
 * shmem file), so one crashing holder would fill the whole pool, charged
 * to its memory cgroup. The data region is left out of dumps, as the
 * header and control regions are.
 */
TEST(data_region_is_left_out_of_core_dumps)
{
	struct baton_pool_params p = pc_params(16, 0);
	struct baton_pool *pool;
	char name[64];
	uint64_t h;

	BT_REQUIRE_DEV();
	bt_make_name(name, sizeof(name), "dump");
	ASSERT_EQ(0, baton_pool_create(name, &p, &pool));
	ASSERT_EQ(0, baton_pool_alloc(pool, 100, &h));
	EXPECT_EQ(1, vma_flag(baton_pool_ptr(pool, h), "dd"));
	EXPECT_EQ(0, baton_pool_free(pool, h));
	baton_pool_close(pool);
	EXPECT_EQ(0, baton_pool_unlink(name));
}

TEST(every_buffer_once_then_enomem_then_recovery)
{
	char name[64];

	BT_REQUIRE_DEV();
	bt_make_name(name, sizeof(name), "all");
	EXPECT_EQ(0, pc_every_buffer_once(name));
}

TEST(alloc_buf_gives_each_buffer_its_own_address)
{
	char name[64];

	BT_REQUIRE_DEV();
	bt_make_name(name, sizeof(name), "allocbuf");
	EXPECT_EQ(0, pc_alloc_buf(name, 0));
	bt_make_name(name, sizeof(name), "allocbufidle");
	EXPECT_EQ(0, pc_alloc_buf(name, 100));
}

TEST(forged_and_stale_handles_touch_nothing)
{
	char name[64];

	BT_REQUIRE_DEV();
	bt_make_name(name, sizeof(name), "forged");
	EXPECT_EQ(0, pc_forged_and_stale(name));
}

/* What send and receive refuse, and that they change nothing then. */
TEST(send_and_recv_refuse_bad_input_and_change_nothing)
{
	char pname[64], rname[64];

	BT_REQUIRE_DEV();
	bt_make_name(pname, sizeof(pname), "refuse");
	bt_make_name(rname, sizeof(rname), "refuser");
	EXPECT_EQ(0, pc_send_recv_refusals(pname, rname, BATON_RING_SPSC,
						   BATON_BACKEND_KMOD));
}

TEST(mpsc_send_and_recv_refuse_bad_input_and_change_nothing)
{
	char pname[64], rname[64];

	BT_REQUIRE_DEV();
	bt_make_name(pname, sizeof(pname), "refusem");
	bt_make_name(rname, sizeof(rname), "refusemr");
	EXPECT_EQ(0, pc_send_recv_refusals(pname, rname, BATON_RING_MPSC,
						   BATON_BACKEND_KMOD));
}

/*
 * Refills preempted between their head and tail reads: no ENOMEM while
 * half the pool is free, no bad word counted (pool_cases.h).
 */
TEST(a_refill_preempted_mid_read_sees_no_scribble)
{
	uint64_t bad_words = 0;
	char pname[64];

	BT_REQUIRE_DEV();
	bt_make_name(pname, sizeof(pname), "preempt");
	EXPECT_EQ(0, pc_refill_survives_preemption(pname, &bad_words));
	EXPECT_EQ(0U, bad_words);
}

/*
 * Queue words no holder leaves there (pool_cases.h): no taker or freer
 * spins on one for ever. On the module a KERNEL word is its decay's, so a
 * taker waits a little before it drops the entry.
 */
TEST(kernel_word_no_decay_ends_is_dropped)
{
	char name[64];

	BT_REQUIRE_DEV();
	bt_make_name(name, sizeof(name), "kword");
	EXPECT_EQ(0, pc_kernel_word_at_head(name, 0));
}

TEST(scribbled_entry_of_a_freers_ticket_is_published_over)
{
	char name[64];
	uint64_t bad;

	BT_REQUIRE_DEV();
	bt_make_name(name, sizeof(name), "fword");
	EXPECT_EQ(0, pc_scribbled_freer_entry(name, &bad));
}

TEST(scribbled_entry_of_a_freers_ticket_a_lap_back_is_published_over)
{
	char name[64];
	uint64_t bad;

	BT_REQUIRE_DEV();
	bt_make_name(name, sizeof(name), "fword1");
	EXPECT_EQ(0, pc_scribbled_freer_entry_a_lap_back(name, &bad));
}

TEST(scribbled_head_entry_on_the_first_lap_answers_enomem)
{
	char name[64];
	uint64_t bad;

	BT_REQUIRE_DEV();
	bt_make_name(name, sizeof(name), "hword1");
	EXPECT_EQ(0, pc_scribbled_head_entry_first_lap(name, &bad));
}

TEST(scribbled_tail_answers_as_empty)
{
	char name[64];
	uint64_t bad;

	BT_REQUIRE_DEV();
	bt_make_name(name, sizeof(name), "tail");
	EXPECT_EQ(0, pc_scribbled_tail(name, &bad));
}

TEST(buffers_cross_processes_through_a_ring)
{
	char pname[64], rname[64];

	BT_REQUIRE_DEV();
	bt_make_name(pname, sizeof(pname), "xp");
	bt_make_name(rname, sizeof(rname), "xr");
	EXPECT_EQ(0, pc_cross_processes(pname, rname, BATON_BACKEND_KMOD));
}

/* A fixture only for its timeout: 200 rounds of forks on a debug kernel. */
FIXTURE(deaths) {
	int unused;
};

FIXTURE_SETUP(deaths)
{
}

FIXTURE_TEARDOWN(deaths)
{
}

/* The module returns a dead holder's buffers at its release (pool_cases.h). */
TEST_F_TIMEOUT(deaths, kill9_at_any_point_loses_and_duplicates_nothing, 600)
{
	struct baton_pool_params p = pc_params(64, 0);
	struct pc_kill_report rep;
	struct baton_pool_info info;
	struct baton_pool *pool;
	char pname[64];

	BT_REQUIRE_DEV();
	bt_make_name(pname, sizeof(pname), "kill");
	ASSERT_EQ(0, baton_pool_create(pname, &p, &pool));
	EXPECT_EQ(0, pc_kill_loop(pool, pname, PC_KILL_ROUNDS, &rep))
		TH_LOG("round %d: %d of 64 buffers", rep.round, rep.buffers);
	ASSERT_EQ(0, baton_pool_info(pool, &info));
	EXPECT_LT(0U, info.reclaimed);
	EXPECT_EQ(0U, info.bad_words);
	ksft_print_msg("%d kills: %llu buffers reclaimed, %llu queue entries repaired; every buffer back within %d ms at worst\n",
		       PC_KILL_ROUNDS, (unsigned long long)info.reclaimed,
		       (unsigned long long)info.repaired, rep.worst_ms);
	baton_pool_close(pool);
	baton_pool_unlink(pname);
}

/*
 * kill -9 of a sender or a receiver at any point of a hand-off: nothing
 * lost, nothing twice (pool_cases.h). The fixture is for the timeout.
 */
TEST_F_TIMEOUT(deaths, kill9_in_send_and_receive_loses_nothing, 600)
{
	struct baton_pool_params p = pc_params(PH_BUFFERS, 0);
	struct baton_ring_params rp = bt_params(PH_SLOTS, 16);
	char pname[64], rname[64];
	struct ph_report rep;
	struct baton_pool *pool;
	struct baton_ring *r;
	int rc;

	BT_REQUIRE_DEV();
	bt_make_name(pname, sizeof(pname), "hand");
	bt_make_name(rname, sizeof(rname), "handr");
	ASSERT_EQ(0, baton_pool_create(pname, &p, &pool));
	ASSERT_EQ(0, baton_ring_create(rname, &rp, BATON_ROLE_PRODUCER, &r));
	baton_ring_close(r);
	rc = ph_run(pool, pname, rname, BATON_BACKEND_KMOD, PC_KILL_ROUNDS, &rep);
	ksft_print_msg("%d kills in hand-offs: %llu buffers received, %llu messages stale (sender died before its give)\n",
		       PC_KILL_ROUNDS, (unsigned long long)rep.received,
		       (unsigned long long)rep.stale);
	EXPECT_EQ(0, rc) TH_LOG("round %d: %s (code %d, %d buffers)", rep.round,
				rep.what, rep.code, rep.buffers);
	EXPECT_LT(0U, rep.received);
	baton_ring_unlink(rname, BATON_BACKEND_KMOD);
	baton_pool_close(pool);
	baton_pool_unlink(pname);
}

/* A sender that dies after sending: its buffer is the receiver's. */
TEST(sent_buffer_survives_its_senders_death)
{
	char pname[64], rname[64];

	BT_REQUIRE_DEV();
	bt_make_name(pname, sizeof(pname), "sent");
	bt_make_name(rname, sizeof(rname), "sentr");
	EXPECT_EQ(0, pc_sent_survives(pname, rname, BATON_BACKEND_KMOD));
}

/* A receive waits out its timeout for a message or its commit. */
TEST(recv_waits_its_timeout_for_a_message_and_for_its_commit)
{
	char pname[64], rname[64];

	BT_REQUIRE_DEV();
	bt_make_name(pname, sizeof(pname), "rdl");
	bt_make_name(rname, sizeof(rname), "rdlr");
	EXPECT_EQ(0, pc_recv_deadlines(pname, rname, BATON_BACKEND_KMOD));
}

/* A dead producer's tombstone carries no buffer (pool_cases.h). */
TEST(recv_passes_tombstones_within_its_deadline)
{
	char pname[64], rname[64];

	BT_REQUIRE_DEV();
	bt_make_name(pname, sizeof(pname), "tomb");
	bt_make_name(rname, sizeof(rname), "tombr");
	EXPECT_EQ(0, pc_recv_passes_tombstones(pname, rname,
					       BATON_BACKEND_KMOD));
}

TEST(unread_spsc_ring_returns_its_buffers_when_destroyed)
{
	char pname[64], rname[64];

	BT_REQUIRE_DEV();
	bt_make_name(pname, sizeof(pname), "unread");
	bt_make_name(rname, sizeof(rname), "unreadr");
	EXPECT_EQ(0, pc_unread_ring_returns(pname, rname, BATON_RING_SPSC,
					    BATON_BACKEND_KMOD));
}

TEST(unread_mpsc_ring_returns_its_buffers_when_destroyed)
{
	char pname[64], rname[64];

	BT_REQUIRE_DEV();
	bt_make_name(pname, sizeof(pname), "unreadm");
	bt_make_name(rname, sizeof(rname), "unreadmr");
	EXPECT_EQ(0, pc_unread_ring_returns(pname, rname, BATON_RING_MPSC,
					    BATON_BACKEND_KMOD));
}

TEST(sends_into_an_unread_ring_come_back)
{
	char pname[64], rname[64];

	BT_REQUIRE_DEV();
	bt_make_name(pname, sizeof(pname), "unreads");
	bt_make_name(rname, sizeof(rname), "unreadsr");
	EXPECT_EQ(0, pc_sends_into_unread_ring_return(pname, rname,
						      BATON_BACKEND_KMOD));
}

/* One raw (handle, len) message, as a scribbling producer writes it. */
static int push_raw(struct baton_ring *r, uint64_t handle)
{
	uint64_t m[2] = { handle, 4096 };

	return baton_spsc_push(r, m, sizeof(m), PC_OP_NS);
}

/*
 * A bound ring's slots and indices are its producer's to scribble; the
 * kernel reads neither. When the ring goes, it takes back exactly the
 * buffers SENT through that ring: not one its holder owns or one in
 * flight in another ring, though a slot names them, and it finds one
 * whose ring's tail was scribbled a lap past the head all the same.
 */
TEST(scribbled_bound_ring_returns_only_its_sent_buffers)
{
	struct baton_ring_params rp = pc_ring_params(BATON_BACKEND_KMOD);
	struct baton_pool_params p = pc_params(16, 0);
	char pname[64], ra[64], rb[64], rc[64];
	uint64_t own, flying, hidden, mine, got, len;
	struct baton_ring *a, *b, *c, *bc;
	struct baton_pool *pool;

	BT_REQUIRE_DEV();
	bt_make_name(pname, sizeof(pname), "scrib");
	bt_make_name(ra, sizeof(ra), "scriba");
	bt_make_name(rb, sizeof(rb), "scribb");
	bt_make_name(rc, sizeof(rc), "scribc");
	ASSERT_EQ(0, baton_pool_create(pname, &p, &pool));
	ASSERT_EQ(0, baton_ring_create(ra, &rp, BATON_ROLE_PRODUCER, &a));
	ASSERT_EQ(0, baton_ring_create(rb, &rp, BATON_ROLE_PRODUCER, &b));
	ASSERT_EQ(0, baton_ring_create(rc, &rp, BATON_ROLE_PRODUCER, &c));
	ASSERT_EQ(0, baton_pool_alloc(pool, 4096, &own));
	ASSERT_EQ(0, baton_pool_alloc(pool, 4096, &flying));
	ASSERT_EQ(0, baton_pool_alloc(pool, 4096, &hidden));
	ASSERT_EQ(0, baton_pool_alloc(pool, 4096, &mine));
	memset(baton_pool_ptr(pool, flying), 0x5f, 4096);
	ASSERT_EQ(0, baton_pool_send(b, pool, flying, 4096, PC_OP_NS));
	ASSERT_EQ(0, baton_pool_send(a, pool, mine, 4096, PC_OP_NS));
	ASSERT_EQ(0, push_raw(a, own));
	ASSERT_EQ(0, push_raw(a, flying));
	ASSERT_EQ(0, push_raw(a, own | BATON_POOL_H_RESERVED));
	ASSERT_EQ(0, push_raw(a, BATON_POOL_HANDLE(7, 0, 1)));
	ASSERT_EQ(0, push_raw(a, ~0ULL));
	/* C: one sent, then its tail a lap and more past its head. */
	ASSERT_EQ(0, baton_pool_send(c, pool, hidden, 4096, PC_OP_NS));
	__atomic_store_n(c->tail, *c->tail + 1000, __ATOMIC_RELEASE);

	baton_ring_close(a);
	baton_ring_unlink(ra, BATON_BACKEND_KMOD);
	baton_ring_close(c);
	baton_ring_unlink(rc, BATON_BACKEND_KMOD);
	/* mine and hidden came back; own and flying did not. */
	EXPECT_EQ(14, pc_class0_free_count(pool, 14));
	EXPECT_EQ(-ESTALE, baton_pool_check(pool, mine));
	EXPECT_EQ(-ESTALE, baton_pool_check(pool, hidden));
	EXPECT_EQ(0, baton_pool_check(pool, own));
	EXPECT_EQ(0, baton_pool_free(pool, own));
	ASSERT_EQ(0, baton_ring_open(rb, BATON_ROLE_CONSUMER,
				     BATON_BACKEND_KMOD, &bc));
	ASSERT_EQ(0, baton_pool_recv(bc, pool, &got, &len, PC_OP_NS));
	EXPECT_EQ(flying, got);
	EXPECT_EQ(0x5f, ((uint8_t *)baton_pool_ptr(pool, got))[4095]);
	EXPECT_EQ(0, baton_pool_free(pool, got));
	EXPECT_EQ(16, pc_class0_free_count(pool, 16));
	baton_ring_close(bc);
	baton_ring_close(b);
	baton_ring_unlink(rb, BATON_BACKEND_KMOD);
	baton_pool_close(pool);
	baton_pool_unlink(pname);
}

/* BIND_POOL on @fd: 0 or a positive errno; the ring's id in *@id. */
static int bind_pool(int fd, int pool_fd, uint64_t *id)
{
	struct baton_ring_bind k;
	int rc;

	memset(&k, 0, sizeof(k));
	k.size = sizeof(k);
	k.pool_fd = pool_fd;
	rc = bt_ioctl(fd, BATON_RING_IOC_BIND_POOL, &k);
	*id = k.out_ring_id;
	return rc;
}

#define BIND_POOLS	(BATON_RING_POOLS_MAX + 1)

/*
 * BATON_RING_IOC_BIND_POOL: a consumer fd (EACCES), an fd that is not a
 * pool's (EBADF); BATON_RING_POOLS_MAX pools bind, each again with the
 * same id (which no other ring has), one more is ENOSPC, also through
 * baton_pool_send(), which leaves the buffer its sender's.
 */
TEST(bind_pool_takes_producers_and_up_to_four_pools)
{
	struct baton_ring_params rp = pc_ring_params(BATON_BACKEND_KMOD);
	struct baton_pool_params p = pc_params(8, 0);
	char pn[BIND_POOLS][64], rn[64], rn2[64];
	struct baton_pool *pool[BIND_POOLS];
	int fd[BIND_POOLS], i;
	struct baton_ring *r, *r2, *c;
	uint64_t h, id, id_again, id2;

	BT_REQUIRE_DEV();
	for (i = 0; i < BIND_POOLS; i++) {
		bt_make_name(pn[i], sizeof(pn[i]), "bindp");
		ASSERT_EQ(0, baton_pool_create(pn[i], &p, &pool[i]));
		fd[i] = bt_pool_fd(pn[i]);
		ASSERT_LE(0, fd[i]);
	}
	bt_make_name(rn, sizeof(rn), "bindr");
	bt_make_name(rn2, sizeof(rn2), "bindr2");
	ASSERT_EQ(0, baton_ring_create(rn, &rp, BATON_ROLE_PRODUCER, &r));
	ASSERT_EQ(0, baton_ring_create(rn2, &rp, BATON_ROLE_PRODUCER, &r2));
	ASSERT_EQ(0, baton_ring_open(rn, BATON_ROLE_CONSUMER,
				     BATON_BACKEND_KMOD, &c));

	EXPECT_EQ(EACCES, bind_pool(baton_ring_fd(c), fd[0], &id));
	EXPECT_EQ(EBADF, bind_pool(baton_ring_fd(r), baton_ring_fd(r2), &id));
	EXPECT_EQ(EBADF, bind_pool(baton_ring_fd(r), -1, &id));
	EXPECT_EQ(0, bind_pool(baton_ring_fd(r), fd[0], &id));
	EXPECT_NE(0, id);
	for (i = 0; i < BATON_RING_POOLS_MAX; i++) {
		EXPECT_EQ(0, bind_pool(baton_ring_fd(r), fd[i], &id_again));
		EXPECT_EQ(id, id_again);
	}
	EXPECT_EQ(0, bind_pool(baton_ring_fd(r), fd[0], &id_again));
	EXPECT_EQ(ENOSPC, bind_pool(baton_ring_fd(r), fd[BIND_POOLS - 1],
				    &id_again));
	EXPECT_EQ(0, bind_pool(baton_ring_fd(r2), fd[BIND_POOLS - 1], &id2));
	EXPECT_NE(0, id2);
	EXPECT_NE(id, id2);

	ASSERT_EQ(0, baton_pool_alloc(pool[BIND_POOLS - 1], 4096, &h));
	EXPECT_EQ(-ENOSPC, baton_pool_send(r, pool[BIND_POOLS - 1], h, 4096,
					   PC_OP_NS));
	EXPECT_EQ(0, baton_pool_free(pool[BIND_POOLS - 1], h));
	EXPECT_EQ(0, baton_pool_alloc(pool[1], 4096, &h));
	EXPECT_EQ(0, baton_pool_send(r, pool[1], h, 4096, PC_OP_NS));

	baton_ring_close(c);
	baton_ring_close(r2);
	baton_ring_unlink(rn2, BATON_BACKEND_KMOD);
	baton_ring_close(r);
	baton_ring_unlink(rn, BATON_BACKEND_KMOD);
	/* The ring went with pool 1's buffer in it: back, a new generation. */
	EXPECT_EQ(-ESTALE, baton_pool_check(pool[1], h));
	for (i = 0; i < BIND_POOLS; i++) {
		close(fd[i]);
		baton_pool_close(pool[i]);
		baton_pool_unlink(pn[i]);
	}
}

/* Fan-out: share, put, the last put frees (pool_cases.h). */
TEST(shared_buffer_returns_after_the_last_put)
{
	char pname[64];

	BT_REQUIRE_DEV();
	bt_make_name(pname, sizeof(pname), "share");
	EXPECT_EQ(0, pc_share_and_put(pname, BATON_BACKEND_KMOD));
}

/* Fan-out: a reader released while the sender pushes (pool_cases.h). */
TEST(reader_released_while_sending_shared_gives_up_its_part)
{
	char pname[64], rbase[64];

	BT_REQUIRE_DEV();
	bt_make_name(pname, sizeof(pname), "shsend");
	bt_make_name(rbase, sizeof(rbase), "shsendr");
	EXPECT_EQ(0, pc_share_while_sending(pname, rbase, BATON_BACKEND_KMOD));
}

/*
 * Fan-out to three reader processes, one killed each round: nothing
 * lost, nothing twice (pool_cases.h). The fixture is for the timeout.
 */
TEST_F_TIMEOUT(deaths, fan_out_survives_reader_deaths, 600)
{
	char pname[64], rbase[64];
	struct ph_report rep;
	int rc;

	BT_REQUIRE_DEV();
	bt_make_name(pname, sizeof(pname), "fan");
	bt_make_name(rbase, sizeof(rbase), "fanr");
	rc = pf_run(pname, rbase, BATON_BACKEND_KMOD, &rep);
	ksft_print_msg("%d fan-out rounds, a reader killed in each: %llu buffers read, %llu messages stale\n",
		       PF_ROUNDS, (unsigned long long)rep.received,
		       (unsigned long long)rep.stale);
	EXPECT_EQ(0, rc) TH_LOG("round %d: %s (code %d, %d buffers)", rep.round,
				rep.what, rep.code, rep.buffers);
	EXPECT_LT(0U, rep.received);
}

/* A pool handle inherited across fork() is nothing (pool_cases.h). */
TEST(fork_inherits_nothing_of_a_pool_handle)
{
	char pname[64];

	BT_REQUIRE_DEV();
	bt_make_name(pname, sizeof(pname), "fork");
	EXPECT_EQ(0, pc_fork_inherits_nothing(pname));
}

/* Parking on an empty class (pool_cases.h). */
TEST(alloc_waits_for_a_free_and_for_a_death)
{
	char pname[64];
	int ms[2] = { 0, 0 };

	BT_REQUIRE_DEV();
	bt_make_name(pname, sizeof(pname), "park");
	EXPECT_EQ(0, pc_alloc_waits(pname, ms));
	ksft_print_msg("parked allocators got a buffer %d ms after the free, %d ms after the death\n",
		       ms[0] - 50, ms[1] - 50);
}

/* Decay under steady traffic (pool_cases.h). */
TEST(decay_under_steady_traffic_keeps_only_the_working_set)
{
	long rounds = 0, resident = 0;
	char pname[64];

	BT_REQUIRE_DEV();
	bt_make_name(pname, sizeof(pname), "traffic");
	EXPECT_EQ(0, pc_decay_under_traffic(pname, &rounds, &resident));
	ksft_print_msg("%ld rounds of traffic, %ld pages of 4096 resident\n",
		       rounds, resident);
	fflush(stdout);
	baton_pool_unlink(pname);
}

/* BATON_POOL_IOC_WAIT and _WAKE: sizes, flags, reserved words, classes. */
TEST(wait_and_wake_reject_bad_fields)
{
	struct baton_pool_params p = pc_params(8, 0);
	struct baton_pool_wait k;
	struct {
		struct baton_pool_wait w;
		uint64_t tail;
	} big;
	struct baton_pool *pool;
	char pname[64];
	int fd;

	BT_REQUIRE_DEV();
	bt_make_name(pname, sizeof(pname), "pwio");
	ASSERT_EQ(0, baton_pool_create(pname, &p, &pool));
	fd = bt_pool_fd(pname);
	ASSERT_LE(0, fd);
#define WAIT_EINVAL(cmd, field, val) do {				\
		memset(&k, 0, sizeof(k));				\
		k.size = sizeof(k);					\
		k.field = val;						\
		EXPECT_EQ(-1, ioctl(fd, cmd, &k));			\
		EXPECT_EQ(EINVAL, errno);				\
	} while (0)
	WAIT_EINVAL(BATON_POOL_IOC_WAIT, size, BATON_POOL_WAIT_SIZE_VER0 - 8);
	WAIT_EINVAL(BATON_POOL_IOC_WAIT, flags, 2);
	WAIT_EINVAL(BATON_POOL_IOC_WAIT, cls, 2);
	WAIT_EINVAL(BATON_POOL_IOC_WAIT, reserved, 1);
	WAIT_EINVAL(BATON_POOL_IOC_WAIT, deadline_ns, 1);	/* no flag */
	WAIT_EINVAL(BATON_POOL_IOC_WAKE, flags, 1);
	WAIT_EINVAL(BATON_POOL_IOC_WAKE, cls, 2);
	WAIT_EINVAL(BATON_POOL_IOC_WAKE, wakes, 1);
	WAIT_EINVAL(BATON_POOL_IOC_WAKE, deadline_ns, 1);
	WAIT_EINVAL(BATON_POOL_IOC_WAKE, reserved, 1);
#undef WAIT_EINVAL
	/* A longer struct with a non-zero tail: E2BIG. */
	memset(&big, 0, sizeof(big));
	big.w.size = sizeof(big);
	big.tail = 1;
	EXPECT_EQ(-1, ioctl(fd, BATON_POOL_IOC_WAKE, &big));
	EXPECT_EQ(E2BIG, errno);
	/* Well formed: a wake of nobody; a wait whose word already moved. */
	memset(&k, 0, sizeof(k));
	k.size = sizeof(k);
	EXPECT_EQ(0, ioctl(fd, BATON_POOL_IOC_WAKE, &k));
	k.wakes = 12345;	/* not the word: returns at once */
	EXPECT_EQ(0, ioctl(fd, BATON_POOL_IOC_WAIT, &k));
	/* A deadline in the past, the word unmoved: ETIMEDOUT. */
	k.wakes = 0;
	k.flags = BATON_POOL_WAIT_DEADLINE;
	k.deadline_ns = 1;
	EXPECT_EQ(-1, ioctl(fd, BATON_POOL_IOC_WAIT, &k));
	EXPECT_EQ(ETIMEDOUT, errno);
	close(fd);
	baton_pool_close(pool);
	baton_pool_unlink(pname);
}

/*
 * An UNSTICK that repairs nothing (the ticket's entry is published) must
 * not wake parked allocators: it moved nothing they could take. A parker
 * is faked by raising class 0's waiters count in the shared block.
 */
TEST(unstick_that_repairs_nothing_wakes_nobody)
{
	struct baton_pool_params p = pc_params(8, 0);
	const struct baton_pool_class_layout *l;
	volatile struct baton_pool_waiting *w;
	struct baton_pool_unstick u;
	const struct baton_pool_hdr *h;
	struct baton_pool *pool;
	uint32_t before;
	char pname[64];
	uint8_t *ctl;
	int fd;

	BT_REQUIRE_DEV();
	bt_make_name(pname, sizeof(pname), "punw");
	ASSERT_EQ(0, baton_pool_create(pname, &p, &pool));
	fd = bt_pool_fd(pname);
	ASSERT_LE(0, fd);
	h = mmap(NULL, BT_PAGE, PROT_READ, MAP_SHARED, fd, BATON_POOL_HDR_MMAP);
	ASSERT_NE(MAP_FAILED, h);
	ctl = mmap(NULL, h->ctl_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   (off_t)h->ctl_mmap);
	ASSERT_NE(MAP_FAILED, ctl);
	l = &h->classes[0];
	w = (volatile struct baton_pool_waiting *)(ctl + l->ctl_off +
						    BATON_POOL_Q_WAIT);
	w->waiters = 1;
	before = w->wakes;
	memset(&u, 0, sizeof(u));
	u.size = sizeof(u);
	u.ticket = 0;		/* published at create: nothing stuck */
	EXPECT_EQ(0, bt_ioctl(fd, BATON_POOL_IOC_UNSTICK, &u));
	EXPECT_EQ(before, w->wakes) TH_LOG("a wake for a repair of nothing");
	w->waiters = 0;
	munmap(ctl, h->ctl_size);
	munmap((void *)h, BT_PAGE);
	close(fd);
	baton_pool_close(pool);
	baton_pool_unlink(pname);
}

/*
 * One region per mmap() at its exact offset (Documentation/pool.rst, "The
 * mapping"): the control region may be mapped shorter, the data region
 * only whole and shared; anything else is EINVAL and maps nothing.
 */
TEST(data_region_maps_only_whole_and_shared)
{
	struct baton_pool_params p = pc_params(8, 0);
	const struct baton_pool_hdr *h;
	struct baton_pool *pool;
	char pname[64];
	void *m;
	int fd;

	BT_REQUIRE_DEV();
	bt_make_name(pname, sizeof(pname), "pmap");
	ASSERT_EQ(0, baton_pool_create(pname, &p, &pool));
	fd = bt_pool_fd(pname);
	ASSERT_LE(0, fd);
	h = mmap(NULL, BT_PAGE, PROT_READ, MAP_SHARED, fd, BATON_POOL_HDR_MMAP);
	ASSERT_NE(MAP_FAILED, h);
	ASSERT_LT(BT_PAGE, h->data_size);
	m = mmap(NULL, BT_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)h->ctl_mmap);
	EXPECT_NE(MAP_FAILED, m) TH_LOG("a shorter control mapping");
	if (m != MAP_FAILED)
		munmap(m, BT_PAGE);
	errno = 0;
	EXPECT_EQ(MAP_FAILED, mmap(NULL, h->data_size - BT_PAGE,
				   PROT_READ | PROT_WRITE, MAP_SHARED, fd,
				   (off_t)h->data_mmap));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(MAP_FAILED, mmap(NULL, h->data_size + BT_PAGE,
				   PROT_READ | PROT_WRITE, MAP_SHARED, fd,
				   (off_t)h->data_mmap));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(MAP_FAILED, mmap(NULL, h->data_size, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE, fd, (off_t)h->data_mmap));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(MAP_FAILED, mmap(NULL, BT_PAGE, PROT_READ, MAP_SHARED, fd,
				   (off_t)h->data_mmap + BT_PAGE));
	EXPECT_EQ(EINVAL, errno) TH_LOG("an offset inside the data region");
	m = mmap(NULL, h->data_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)h->data_mmap);
	EXPECT_NE(MAP_FAILED, m);
	if (m != MAP_FAILED)
		munmap(m, h->data_size);
	munmap((void *)h, BT_PAGE);
	close(fd);
	baton_pool_close(pool);
	baton_pool_unlink(pname);
}

/* Resident pages of [addr, addr + len) in this process. */
static size_t resident_pages(void *addr, size_t len)
{
	size_t pages = len / BT_PAGE, i, n = 0;
	unsigned char *vec = malloc(pages);

	if (!vec || mincore(addr, len, vec)) {
		free(vec);
		return (size_t)-1;
	}
	for (i = 0; i < pages; i++)
		n += vec[i] & 1;
	free(vec);
	return n;
}

/*
 * Poll the pool's decay counter until it reaches @want or @ns pass
 * (wait_decayed(): 10 s, a generous bound: the test is about what decays,
 * not when); the count.
 */
static uint64_t wait_decayed_for(struct baton_pool *pool, uint64_t want,
				 struct baton_pool_info *info, int64_t ns)
{
	int64_t end = bt_now_ns() + ns;

	do {
		bt_sleep_ms(10);
		if (baton_pool_info(pool, info))
			return 0;
	} while (info->decayed < want && bt_now_ns() < end);
	return info->decayed;
}

static uint64_t wait_decayed(struct baton_pool *pool, uint64_t want,
			     struct baton_pool_info *info)
{
	return wait_decayed_for(pool, want, info, 10 * BT_NSEC);
}

/* Class 0's COLD descriptors, as this holder's mapping shows them. */
static uint32_t cold_count(struct baton_pool *pool)
{
	const struct baton_pool_cls *c = &baton__pool_fast(pool)->cls[0];
	uint32_t i, n = 0;

	for (i = 0; i < c->count; i++)
		n += BATON_POOL_S_KIND(__atomic_load_n(&c->desc[i].state,
						       __ATOMIC_ACQUIRE)) ==
		     BATON_POOL_COLD;
	return n;
}

/* Poll (10 s at most) until class 0 has @want COLD buffers, or more. */
static uint32_t wait_cold(struct baton_pool *pool, uint32_t want, bool more)
{
	int64_t end = bt_now_ns() + 10 * BT_NSEC;
	uint32_t n;

	do {
		bt_sleep_ms(10);
		n = cold_count(pool);
	} while ((more ? n < want : n != want) && bt_now_ns() < end);
	return n;
}

/*
 * What a library without COLD does when it allocates from a class whose
 * queue holds only stale entries: pops each (the head's CAS, the entry
 * released for the next lap) and drops it, its buffer not FREE with the
 * entry's generation. Through @pool's mapping of class 0; the test's one
 * thread is the only taker. How many it dropped.
 */
static int drop_stale_entries(struct baton_pool *pool)
{
	const struct baton_pool_cls *c = &baton__pool_fast(pool)->cls[0];
	int n = 0;

	for (;;) {
		uint64_t h = __atomic_load_n(c->head, __ATOMIC_ACQUIRE), v, s;
		struct baton_pool_qent *e = &c->q[h & (c->qcap - 1)];

		if (h == __atomic_load_n(c->tail, __ATOMIC_ACQUIRE) ||
		    __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE) != h + 1)
			return n;
		v = e->value;
		s = __atomic_load_n(&c->desc[v & 0xffffffffu].state,
				    __ATOMIC_ACQUIRE);
		if (s == BATON_POOL_STATE(v >> 32, BATON_POOL_FREE, 0))
			return n;	/* a live entry: not ours to drop */
		if (!__atomic_compare_exchange_n(c->head, &h, h + 1, 0,
						 __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			return n;
		__atomic_store_n(&e->seq, h + c->qcap, __ATOMIC_RELEASE);
		n++;
	}
}

/*
 * A holder whose library does not take COLD buffers (opened without
 * BATON_POOL_F_TAKES_COLD, as every library before 2.4 opens) would see
 * its class shrink to what the queue holds. While one is attached the
 * decay makes nothing COLD and puts what is COLD back on the queue, and
 * still gives idle pages back; once it is gone, COLD again.
 */
TEST(a_holder_without_cold_keeps_every_buffer_on_the_queue)
{
	struct baton_pool_params p = pc_params(64, 20);
	struct baton_pool *pool;
	struct baton_pool_info info;
	uint64_t decayed;
	char name[64];
	int dups, old;

	BT_REQUIRE_DEV();
	bt_make_name(name, sizeof(name), "blind");
	/* @pool never allocates: no magazine keeps a buffer OWNED. */
	ASSERT_EQ(0, baton_pool_create(name, &p, &pool));
	ASSERT_EQ(64, pc_burst(name, &dups));
	/* Idle: the decay makes class 0 COLD, every buffer of it. */
	ASSERT_EQ(64U, wait_cold(pool, 64, true));

	old = raw_pool_open(name, 0);
	ASSERT_LE(0, old);
	/*
	 * Their stale entries are still queued: they go back once a taker
	 * has passed those (Y10), as that library's first allocation does.
	 */
	EXPECT_EQ(64, drop_stale_entries(pool));
	EXPECT_EQ(0U, wait_cold(pool, 0, false))
		TH_LOG("COLD buffers stay while a holder without COLD is attached");
	/* All on the queue again: an allocation takes each from there. */
	EXPECT_EQ(64, pc_burst(name, &dups));
	EXPECT_EQ(0, dups);
	/* The pages still go back, the buffers FREE on the queue. */
	ASSERT_EQ(0, baton_pool_info(pool, &info));
	decayed = info.decayed;
	EXPECT_LE(decayed + 64, wait_decayed(pool, decayed + 64, &info));
	EXPECT_EQ(0U, cold_count(pool));
	/* Gone: COLD again. */
	close(old);
	EXPECT_EQ(64U, wait_cold(pool, 64, true));
	baton_pool_close(pool);
	baton_pool_unlink(name);
}

/*
 * Child of a_free_never_waits_on_a_queue_the_decay_overfilled: holder H
 * takes one buffer, says so in @sh[0], frees it once @sh[1] says so (a
 * flush: the class is too small for a magazine), and exits 0.
 */
static void hold_then_free(const char *name, volatile uint32_t *sh)
{
	struct baton_pool *pool;
	uint64_t h;

	if (baton_pool_open(name, &pool) || baton_pool_alloc(pool, 4096, &h))
		_exit(2);
	memset(baton_pool_ptr(pool, h), 0xcd, 4096);
	__atomic_store_n(&sh[0], 1, __ATOMIC_RELEASE);
	if (bt_wait_flag(&sh[1], 60000))
		_exit(3);
	if (baton_pool_free(pool, h))
		_exit(4);
	baton_pool_close(pool);
	_exit(0);
}

/*
 * A holder without COLD opening and closing, again and again, on an idle
 * class: each open puts COLD buffers back on the queue, each close lets
 * the decay make them COLD again. Putting one back while its stale entry
 * is still queued adds an entry: after two rounds a class of 4 (qcap 8)
 * held more entries than its queue, and a free (which takes its ticket
 * and waits for the slot) waited for an allocation nobody made. Only
 * buffers whose stale entry has left the queue go back (Y10).
 */
TEST(a_free_never_waits_on_a_queue_the_decay_overfilled)
{
	struct baton_pool_params p = pc_params(4, 10);
	volatile uint32_t *sh;
	struct baton_pool *pool;
	uint64_t h[8];
	char name[64];
	int i, old, dups;
	pid_t pid;

	BT_REQUIRE_DEV();
	p.nr_classes = 1;
	p.classes[1].buf_shift = 0;
	p.classes[1].count = 0;
	bt_make_name(name, sizeof(name), "overfill");
	ASSERT_EQ(0, baton_pool_create(name, &p, &pool));
	sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		hold_then_free(name, sh);
	ASSERT_EQ(0, bt_wait_flag(&sh[0], 10000));
	ASSERT_EQ(3U, wait_cold(pool, 3, true));
	for (i = 0; i < 3; i++) {
		old = raw_pool_open(name, 0);
		ASSERT_LE(0, old);
		bt_sleep_ms(100);	/* ten ticks */
		close(old);
		ASSERT_EQ(3U, wait_cold(pool, 3, true));
	}
	__atomic_store_n(&sh[1], 1, __ATOMIC_RELEASE);
	EXPECT_EQ(0, bt_wait_timeout(pid, 5000))
		TH_LOG("the holder's free waited on a full queue");
	EXPECT_EQ(4, pc_alloc_all(pool, h, 8, &dups));
	EXPECT_EQ(0, dups);
	baton_pool_close(pool);
	baton_pool_unlink(name);
	munmap((void *)sh, 4096);
}

/* keep: that many buffers of each class stay resident however idle. */
TEST(decay_leaves_keep_buffers_resident)
{
	struct baton_pool_params p = pc_params(64, 20);
	struct baton_pool_info info;
	struct baton_pool *pool;
	char name[64];
	int dups;

	BT_REQUIRE_DEV();
	p.keep = 8;	/* at most every class's count (class 1 has 8) */
	bt_make_name(name, sizeof(name), "keep");
	ASSERT_EQ(0, baton_pool_create(name, &p, &pool));
	ASSERT_EQ(64, pc_burst(name, &dups));
	ASSERT_EQ(56, wait_decayed(pool, 56, &info));
	/* Several more windows: still 56, the other 8 are kept. */
	bt_sleep_ms(200);
	ASSERT_EQ(0, baton_pool_info(pool, &info));
	EXPECT_EQ(56, info.decayed);
	EXPECT_EQ(56, info.cold[0] + info.cold[1]);
	baton_pool_close(pool);
	baton_pool_unlink(name);
}

TEST(decay_gives_idle_pages_back_and_keeps_live_ones)
{
	struct baton_pool_params p = pc_params(64, 50);
	struct baton_pool *pool;
	struct baton_pool_info info;
	uint64_t h[80], live;
	int64_t burst_end;
	size_t before, after;
	uint8_t *lp, *base;
	int n, dups, i;
	char name[64];

	BT_REQUIRE_DEV();
	bt_make_name(name, sizeof(name), "decay");
	ASSERT_EQ(0, baton_pool_create(name, &p, &pool));
	/* The live buffer: class 1 (64 KiB), in use all along. */
	ASSERT_EQ(0, baton_pool_alloc(pool, 65536, &live));
	lp = baton_pool_ptr(pool, live);
	memset(lp, 0xab, 65536);
	/*
	 * A burst of class 0 from a second holder, which then closes: its
	 * magazine goes back too, so all of class 0 is on the queue.
	 */
	ASSERT_EQ(64, pc_burst(name, &dups));
	burst_end = bt_now_ns();
	/* mincore() of a shared file mapping: the pool's page cache. */
	base = baton_pool_ptr(pool, BATON_POOL_HANDLE(0, 0, 1));
	before = resident_pages(base, 64 * 4096);
	EXPECT_EQ(64, before);
	/* Idle: the timer gives them back (decay_ms 50, window ~50 ms). */
	ASSERT_EQ(64, wait_decayed(pool, 64, &info));
	ksft_print_msg("64 idle buffers decayed %lld ms after the burst\n",
		       (long long)((bt_now_ns() - burst_end) / BT_MSEC));
	EXPECT_EQ(64 * 4096, info.decayed_bytes);
	EXPECT_EQ(64, info.cold[0]);	/* COLD, off the queue */
	after = resident_pages(base, 64 * 4096);
	EXPECT_EQ(0, after);
	EXPECT_EQ(16, resident_pages(lp, 65536));
	for (i = 0; i < 65536; i++)
		ASSERT_EQ(0xab, lp[i]);
	/* Decayed buffers come back zeroed, on first touch, no syscall. */
	n = pc_alloc_all(pool, h, 80, &dups);
	EXPECT_EQ(64, n);
	for (i = 0; i < n; i++)
		EXPECT_EQ(0, ((uint8_t *)baton_pool_ptr(pool, h[i]))[100]);
	ASSERT_EQ(0, baton_pool_info(pool, &info));
	EXPECT_EQ(0, info.cold[0]);	/* every one taken back */
	pc_free_all(pool, h, n);
	baton_pool_free(pool, live);
	baton_pool_close(pool);
	baton_pool_unlink(name);
}

/*
 * Large buffers a holder freed are not hoarded where the decay cannot
 * reach them: of 16 frames of 1 MiB a stage freed, all 16 decay while it
 * keeps its handle open, those in its magazine (IDLE: Documentation/
 * pool.rst, "Idle magazines") as those it flushed to the queue.
 */
TEST(decay_reaches_large_buffers_a_live_holder_freed)
{
	struct baton_pool_params p;
	struct baton_pool_info info;
	struct baton_pool *pool;
	uint64_t h[16];
	char name[64];
	int i;

	BT_REQUIRE_DEV();
	memset(&p, 0, sizeof(p));
	p.nr_classes = 1;
	p.decay_ms = 20;
	p.classes[0].buf_shift = 20;
	p.classes[0].count = 64;
	bt_make_name(name, sizeof(name), "big");
	ASSERT_EQ(0, baton_pool_create(name, &p, &pool));
	for (i = 0; i < 16; i++) {
		ASSERT_EQ(0, baton_pool_alloc(pool, 1 << 20, &h[i]));
		memset(baton_pool_ptr(pool, h[i]), 0xee, 1 << 20);
	}
	for (i = 0; i < 16; i++)
		ASSERT_EQ(0, baton_pool_free(pool, h[i]));
	ASSERT_EQ(0, baton_pool_info(pool, &info));
	/* An eighth of the class: 8 at most, 4 after a flush to half. */
	EXPECT_LE(4U, info.classes[0].cached);
	EXPECT_EQ(16U, wait_decayed(pool, 16, &info));
	EXPECT_EQ(16ULL << 20, info.decayed_bytes);
	for (i = 0; i < 16; i++)
		EXPECT_EQ(0, resident_pages(baton_pool_ptr(pool, h[i]),
					    1 << 20));
	baton_pool_close(pool);
	baton_pool_unlink(name);
}

/*
 * A magazine's buffers decay as the queue's do (Y13): 16 buffers of
 * 64 KiB a holder wrote and freed stay in its magazine, and their pages
 * go back while it keeps its handle open and makes no call; its next
 * allocations get them back zeroed and keep what they write.
 */
/*
 * A pool without decay (decay_ms 0) has nothing that reaps a magazine:
 * its frees leave buffers OWNED, so the inline allocation skips the
 * store and the reap word, and its magazines are not capped in bytes
 * either (nothing is ever given back). It left them IDLE, paying both.
 */
TEST(no_decay_no_idle_magazine)
{
	struct baton_pool_params p;
	struct baton_pool_info info;
	struct baton_pool_fast *f;
	struct baton_pool *pool;
	uint64_t h[16], st;
	char name[64];
	int i;

	BT_REQUIRE_DEV();
	memset(&p, 0, sizeof(p));
	p.nr_classes = 1;
	p.classes[0].buf_shift = 20;
	p.classes[0].count = 128;
	bt_make_name(name, sizeof(name), "nodecay");
	ASSERT_EQ(0, baton_pool_create(name, &p, &pool));
	for (i = 0; i < 16; i++)
		ASSERT_EQ(0, baton_pool_alloc(pool, 1 << 20, &h[i]));
	for (i = 0; i < 16; i++)
		ASSERT_EQ(0, baton_pool_free(pool, h[i]));
	ASSERT_EQ(0, baton_pool_info(pool, &info));
	EXPECT_EQ(16U, info.classes[0].cached);
	f = baton__pool_fast(pool);
	st = __atomic_load_n(&f->cls[0].desc[BATON_POOL_H_INDEX(h[0])].state,
			     __ATOMIC_ACQUIRE);
	EXPECT_EQ(BATON_POOL_OWNED, BATON_POOL_S_KIND(st));
	baton_pool_close(pool);
	baton_pool_unlink(name);
}

TEST(idle_magazine_gives_its_pages_back)
{
	struct baton_pool_params p;
	struct baton_pool_info info;
	struct baton_pool *pool;
	uint64_t h[PC_REAPED_BUFS];
	char name[64];

	BT_REQUIRE_DEV();
	memset(&p, 0, sizeof(p));
	p.nr_classes = 1;
	p.decay_ms = 20;
	p.classes[0].buf_shift = 16;
	p.classes[0].count = 256;
	bt_make_name(name, sizeof(name), "idlemag");
	ASSERT_EQ(0, baton_pool_create(name, &p, &pool));
	ASSERT_EQ(0, pc_magazine_of_written(pool, h));
	EXPECT_EQ(16U, wait_decayed(pool, 16, &info));
	EXPECT_EQ(16ULL << 16, info.decayed_bytes);
	EXPECT_EQ(0, pc_reaped_magazine_comes_back(pool, h));
	baton_pool_close(pool);
	baton_pool_unlink(name);
}

/*
 * A CPU held by a real-time task does not hold the decay: a SCHED_FIFO
 * loop pinned to CPU 1 (RT throttling off, as RT deployments run) for up
 * to 20 s, and the pool was created on CPU 1. Two ways this failed:
 *  - a per-CPU workqueue keeps the decay work on CPU 1 for good (an
 *    unbound one runs it on CPU 0);
 *  - a delayed_work's timer waits in CPU 1's timer wheel, which the timer
 *    softirq runs. Where ksoftirqd runs that softirq (with "threadirqs",
 *    always; on 6.1, once one interrupt's softirqs took over 2 ms; on
 *    PREEMPT_RT, the ktimers thread, FIFO 1) the loop starves it: failed
 *    every run on 6.1 with threadirqs, and once in CI on plain 6.1. The
 *    decay's timer is an hrtimer that expires in hard irq context
 *    (kmod/later.c); make check boots 6.1 with threadirqs for this.
 * The buffers become IDLE only once the loop runs, so none can have
 * decayed before it. (The same holds for the repair of a dead holder,
 * on the same workqueue and timer.)
 */
TEST(decay_runs_while_an_rt_task_holds_a_cpu)
{
	struct baton_pool_params p;
	struct baton_pool_info info;
	struct baton_pool *pool;
	volatile uint32_t *go;
	uint64_t h[16], got;
	const char *why;
	long saved;
	char name[64];
	pid_t pid;
	int i, st;

	BT_REQUIRE_DEV();
	why = bt_rt_prepare(&saved);
	if (why)
		SKIP(return, "%s", why);
	go = bt_shared_words();
	ASSERT_NE(MAP_FAILED, go);
	memset(&p, 0, sizeof(p));
	p.nr_classes = 1;
	p.decay_ms = 20;
	p.classes[0].buf_shift = 16;
	p.classes[0].count = 64;
	bt_make_name(name, sizeof(name), "rtdecay");
	/* Created on CPU 1: a per-CPU workqueue's decay work stays there. */
	ASSERT_EQ(0, bt_pin_to(1));
	ASSERT_EQ(0, baton_pool_create(name, &p, &pool));
	ASSERT_EQ(0, bt_pin_to(0));
	for (i = 0; i < 16; i++) {
		ASSERT_EQ(0, baton_pool_alloc(pool, 65536, &h[i]));
		memset(baton_pool_ptr(pool, h[i]), 0x5a, 65536);
	}
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct sched_param sp = { .sched_priority = 1 };
		int64_t end;

		if (bt_pin_to(1) || sched_setscheduler(0, SCHED_FIFO, &sp))
			_exit(2);
		/* Until told, or 20 s: a debug kernel under TCG is slow. */
		end = bt_now_ns() + 20 * BT_NSEC;
		*go = 1;
		while (!go[1] && bt_now_ns() < end)
			;
		_exit(0);
	}
	while (!*go && waitpid(pid, &st, WNOHANG) == 0)
		bt_sleep_ms(1);
	for (i = 0; i < 16; i++)
		ASSERT_EQ(0, baton_pool_free(pool, h[i]));
	got = wait_decayed_for(pool, 16, &info, 15 * BT_NSEC);
	go[1] = 1;
	waitpid(pid, &st, 0);
	bt_rt_runtime(NULL, saved);
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st));
	EXPECT_EQ(16U, got);
	baton_pool_close(pool);
	baton_pool_unlink(name);
	munmap((void *)go, BT_PAGE);
}

/*
 * The decay never gives back a page under a buffer in use (Y13): for
 * three seconds a holder allocates a few buffers, tags every page of
 * each, sleeps up to 25 ms (decay_ms 10: the bottom of its magazine ages
 * and is reaped meanwhile, while it pops from the top), checks the tags
 * and frees them. A page given back under a live buffer reads zero. The
 * decay must have reaped some magazine buffers during the run, or the
 * test proved nothing: with at most 32 in use and a magazine of 32, no
 * buffer it wrote ever reaches the queue, so every buffer decayed with
 * pages (info.decayed) was reaped from the magazine.
 */
TEST(idle_reap_never_takes_a_buffer_in_use)
{
	struct baton_pool_params p;
	struct baton_pool_info info;
	struct baton_pool *pool;
	uint64_t rounds;
	char name[64];
	long lost;

	BT_REQUIRE_DEV();
	memset(&p, 0, sizeof(p));
	p.nr_classes = 1;
	p.decay_ms = BATON_POOL_DECAY_MIN_MS;
	p.classes[0].buf_shift = 14;
	p.classes[0].count = 512;
	bt_make_name(name, sizeof(name), "idlerace");
	ASSERT_EQ(0, baton_pool_create(name, &p, &pool));
	lost = pc_tagged_rounds(pool, 3 * BT_NSEC, &rounds);
	ASSERT_LE(0, lost);
	ASSERT_EQ(0, baton_pool_info(pool, &info));
	ksft_print_msg("%llu rounds, %llu buffers decayed\n",
		       (unsigned long long)rounds,
		       (unsigned long long)info.decayed);
	EXPECT_EQ(0, lost);
	EXPECT_LT(0U, info.decayed);
	baton_pool_close(pool);
	baton_pool_unlink(name);
}

TEST_HARNESS_MAIN

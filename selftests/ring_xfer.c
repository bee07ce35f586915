// SPDX-License-Identifier: GPL-2.0
/*
 * ring_xfer: moving data through a kmod ring between processes.
 *
 * Owns end-to-end correctness of the library fast path over the module's
 * shared pages: every message arrives once, in order, byte for byte
 * (sequence-derived contents plus an order-sensitive checksum compared
 * across processes), for 8/64/4096-byte slots across fork(), for the
 * batch forms at batch 32 with wrap-around on a small ring, and between
 * separately exec'd programs (helpers/ring_peer) that share nothing but
 * the ring's name. Each transfer ends with end of stream (-EPIPE).
 */
#include "common.h"

#define OP_TIMEOUT_NS	(30 * BT_NSEC)

FIXTURE(xfer) {
	char name[BATON_NAME_MAX];
};

FIXTURE_VARIANT(xfer) {
	uint32_t slots;
	uint32_t slot_size;
	uint64_t count;
};

/* Sized for TCG: a few seconds each under emulation. */
FIXTURE_VARIANT_ADD(xfer, slot8_1m) {
	.slots = 1024, .slot_size = 8, .count = 1000000,
};

FIXTURE_VARIANT_ADD(xfer, slot64) {
	.slots = 256, .slot_size = 64, .count = 200000,
};

FIXTURE_VARIANT_ADD(xfer, slot4096) {
	.slots = 64, .slot_size = 4096, .count = 20000,
};

FIXTURE_SETUP(xfer)
{
	BT_REQUIRE_DEV();
	bt_make_name(self->name, sizeof(self->name), "xfer");
}

FIXTURE_TEARDOWN(xfer)
{
	baton_ring_unlink(self->name, BATON_BACKEND_KMOD);
}

struct prod_report {
	uint64_t csum;
	uint64_t crossings;	/* batches that wrapped past the last slot */
};

/* Wait (up to about 20 s) until the consumer has taken n messages. */
static int wait_consumed(const struct baton_ring *r, uint64_t n)
{
	struct baton_ring_stats st;
	int tries;

	for (tries = 0; tries < 20000; tries++) {
		if (baton_ring_stats(r, &st))
			return -1;
		if (st.head >= n)
			return 0;
		usleep(1000);
	}
	return -1;
}

/* Child side: attach by name and push count messages; never returns. */
static void producer_child(const char *name, uint64_t count, bool batch,
			   struct bt_sync *go, int report_fd)
{
	struct prod_report rep = { .csum = BT_CSUM_INIT };
	struct baton_ring *r;
	uint64_t seq = 0, idx, batches = 0;
	uint8_t *msg;
	int rc, k;

	if (bt_sync_wait(go, 20000))
		_exit(2);
	if (baton_ring_open(name, BATON_ROLE_PRODUCER, BATON_BACKEND_KMOD,
			    &r))
		_exit(3);
	msg = malloc(r->slot_size);
	if (!msg)
		_exit(4);
	/* a few singles first so 32-batches straddle the ring's end */
	while (seq < count && (!batch || seq < 5)) {
		bt_fill(msg, r->slot_size, seq);
		rc = baton_spsc_push(r, msg, r->slot_size, OP_TIMEOUT_NS);
		if (rc != 0) {
			fprintf(stderr, "push %llu: %d\n",
				(unsigned long long)seq, rc);
			_exit(5);
		}
		rep.csum = bt_csum(rep.csum, *(uint64_t *)msg);
		seq++;
	}
	/*
	 * The batches start once the consumer has taken the singles, so the
	 * second one finds 32 free slots and straddles the ring's end. If the
	 * consumer starts late (6.12's EEVDF runs the forked producer first),
	 * that batch finds only the slots up to the end, stops there, and both
	 * sides then move in lockstep batches that never cross it.
	 */
	if (batch && wait_consumed(r, seq))
		_exit(8);
	while (seq < count) {
		/* mostly 32; every fifth batch 29 so boundaries drift */
		uint32_t want = ++batches % 5 ? 32 : 29;

		if (want > count - seq)
			want = count - seq;

		rc = baton_spsc_prod_reserve_wait(r, want, &idx,
						  OP_TIMEOUT_NS);
		if (rc < 1 || (uint32_t)rc > want || idx != seq) {
			fprintf(stderr, "reserve at %llu: %d\n",
				(unsigned long long)seq, rc);
			_exit(6);
		}
		if ((idx & (r->slot_count - 1)) + rc > r->slot_count)
			rep.crossings++;
		for (k = 0; k < rc; k++) {
			void *slot = baton_ring_slot(r, idx + k);

			bt_fill(slot, r->slot_size, seq + k);
			rep.csum = bt_csum(rep.csum, *(uint64_t *)slot);
		}
		baton_spsc_prod_submit(r, rc);
		seq += rc;
	}
	if (write(report_fd, &rep, sizeof(rep)) != sizeof(rep))
		_exit(7);
	baton_ring_close(r);
	_exit(0);
}

/*
 * Parent side: create the consumer, start the producer, drain, compare.
 * Returns the consumer's batch wrap count through *crossings.
 */
static void run_transfer(struct __test_metadata *_metadata, const char *name,
			 uint32_t slots, uint32_t slot_size, uint64_t count,
			 bool batch, uint64_t *crossings)
{
	struct baton_ring_params p = bt_params(slots, slot_size);
	struct baton_ring_stats st;
	struct prod_report rep;
	uint64_t seq = 0, idx, csum = BT_CSUM_INIT, cross = 0, batches = 0;
	struct baton_ring *r;
	struct bt_sync go;
	uint8_t *msg;
	int pfd[2], rc, k;
	pid_t pid;

	ASSERT_EQ(0, bt_sync_init(&go));
	ASSERT_EQ(0, pipe(pfd));
	/* fork first: the producer child inherits no consumer handle */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(pfd[0]);
		producer_child(name, count, batch, &go, pfd[1]);
	}
	close(pfd[1]);
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_CONSUMER, &r));
	ASSERT_EQ(0, bt_sync_post(&go));
	msg = malloc(slot_size);
	ASSERT_NE(NULL, msg);

	while (seq < count) {
		if (!batch) {
			rc = baton_spsc_pop(r, msg, slot_size, OP_TIMEOUT_NS);
			ASSERT_EQ(0, rc) TH_LOG("pop %llu: %d",
						(unsigned long long)seq, rc);
			ASSERT_TRUE(bt_check(msg, slot_size, seq))
				TH_LOG("message %llu corrupt or out of order",
				       (unsigned long long)seq);
			csum = bt_csum(csum, *(uint64_t *)msg);
			seq++;
			continue;
		}
		/* 32, and every third batch 31: without the drift both sides
		 * settle on 32-aligned batches that never straddle the end */
		rc = baton_spsc_cons_peek_wait(r, ++batches % 3 ? 32 : 31, &idx,
					       OP_TIMEOUT_NS);
		ASSERT_LE(1, rc) TH_LOG("peek at %llu: %d",
					(unsigned long long)seq, rc);
		ASSERT_GE(32, rc);
		ASSERT_EQ(seq, idx);
		ASSERT_GE(count - seq, (uint64_t)rc) TH_LOG("more than sent");
		if ((idx & (slots - 1)) + rc > slots)
			cross++;
		for (k = 0; k < rc; k++) {
			const void *slot = baton_ring_slot(r, idx + k);

			ASSERT_TRUE(bt_check(slot, slot_size, seq + k))
				TH_LOG("message %llu corrupt or out of order",
				       (unsigned long long)(seq + k));
			csum = bt_csum(csum, *(const uint64_t *)slot);
		}
		baton_spsc_cons_release(r, rc);
		seq += rc;
	}
	/* the producer closes: end of stream, nothing extra */
	rc = baton_spsc_pop(r, msg, slot_size, OP_TIMEOUT_NS);
	EXPECT_EQ(-EPIPE, rc);
	EXPECT_EQ(0, bt_wait_timeout(pid, 30000));
	ASSERT_EQ(sizeof(rep), read(pfd[0], &rep, sizeof(rep)));
	EXPECT_EQ(rep.csum, csum);
	ASSERT_EQ(0, baton_ring_stats(r, &st));
	EXPECT_EQ(count, st.head);
	EXPECT_EQ(count, st.tail);
	if (batch) {
		EXPECT_LT(0, rep.crossings) TH_LOG("producer never wrapped");
	}
	if (crossings)
		*crossings = cross;
	baton_ring_close(r);
	close(pfd[0]);
	bt_sync_close(&go);
	free(msg);
}

TEST_F_TIMEOUT(xfer, fork_push_pop, 240)
{
	run_transfer(_metadata, self->name, variant->slots, variant->slot_size,
		     variant->count, false, NULL);
}

TEST_F_TIMEOUT(xfer, fork_batch32, 240)
{
	uint64_t cross = 0;

	/* batch forms on a small ring: many laps, batches straddling */
	run_transfer(_metadata, self->name, 64, variant->slot_size,
		     variant->count / 4, true, &cross);
	EXPECT_LT(0, cross) TH_LOG("consumer batches never wrapped");
}

/* Run the helper with its stdout on a pipe; returns pid, *out_fd. */
static pid_t spawn_peer(const char *path, const char *mode, const char *name,
			uint64_t count, int *out_fd)
{
	char cnt[32];
	int pfd[2];
	pid_t pid;

	if (pipe(pfd))
		return -1;
	snprintf(cnt, sizeof(cnt), "%llu", (unsigned long long)count);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		execl(path, path, mode, name, cnt, NULL);
		_exit(127);
	}
	close(pfd[1]);
	*out_fd = pfd[0];
	return pid;
}

/* One line, byte by byte so nothing after it is consumed. */
static int read_first_line(int fd, char *buf, size_t len, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	size_t got = 0;

	while (got < len - 1) {
		if (poll(&pfd, 1, timeout_ms) != 1 ||
		    read(fd, buf + got, 1) != 1)
			break;
		if (buf[got++] == '\n')
			break;
	}
	buf[got] = 0;
	return got && buf[got - 1] == '\n' ? 0 : -1;
}

/* Everything until EOF; closes fd. */
static int read_rest(int fd, char *buf, size_t len)
{
	ssize_t n, got = 0;

	while ((size_t)got < len - 1) {
		n = read(fd, buf + got, len - 1 - got);
		if (n <= 0)
			break;
		got += n;
	}
	buf[got] = 0;
	close(fd);
	return (int)got;
}

static uint64_t stream_csum(uint32_t slot_size, uint64_t count)
{
	uint64_t seq, csum = BT_CSUM_INIT, w;

	for (seq = 0; seq < count; seq++) {
		bt_fill(&w, 8, seq);
		csum = bt_csum(csum, w);
	}
	(void)slot_size;
	return csum;
}

FIXTURE(peer) {
	char name[BATON_NAME_MAX];
	char path[PATH_MAX];
};

FIXTURE_SETUP(peer)
{
	BT_REQUIRE_DEV();
	if (bt_helper_path(self->path, sizeof(self->path), "ring_peer"))
		SKIP(_exit(255), "helpers/ring_peer not found");
	bt_make_name(self->name, sizeof(self->name), "peer");
}

FIXTURE_TEARDOWN(peer)
{
	baton_ring_unlink(self->name, BATON_BACKEND_KMOD);
}

#define PEER_COUNT	50000
#define PEER_SLOTS	128
#define PEER_SLOT_SIZE	64

/* exec'd producer, this test consumes */
TEST_F_TIMEOUT(peer, exec_producer, 120)
{
	struct baton_ring_params p = bt_params(PEER_SLOTS, PEER_SLOT_SIZE);
	uint8_t msg[PEER_SLOT_SIZE];
	char out[128], want[128];
	struct baton_ring *r;
	uint64_t seq;
	int ofd, rc;
	pid_t pid;

	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_CONSUMER,
				       &r));
	pid = spawn_peer(self->path, "produce", self->name, PEER_COUNT, &ofd);
	ASSERT_LT(0, pid);
	for (seq = 0; seq < PEER_COUNT; seq++) {
		rc = baton_spsc_pop(r, msg, sizeof(msg), OP_TIMEOUT_NS);
		ASSERT_EQ(0, rc) TH_LOG("pop %llu: %d",
					(unsigned long long)seq, rc);
		ASSERT_TRUE(bt_check(msg, sizeof(msg), seq))
			TH_LOG("message %llu", (unsigned long long)seq);
	}
	EXPECT_EQ(-EPIPE, baton_spsc_pop(r, msg, sizeof(msg), OP_TIMEOUT_NS));
	EXPECT_EQ(0, bt_wait_timeout(pid, 60000));
	read_rest(ofd, out, sizeof(out));
	snprintf(want, sizeof(want), "attached producer\nsent %u %016llx\n",
		 PEER_COUNT,
		 (unsigned long long)stream_csum(PEER_SLOT_SIZE, PEER_COUNT));
	EXPECT_STREQ(want, out);
	baton_ring_close(r);
}

/* this test produces, exec'd consumer */
TEST_F_TIMEOUT(peer, exec_consumer, 120)
{
	struct baton_ring_params p = bt_params(PEER_SLOTS, PEER_SLOT_SIZE);
	uint8_t msg[PEER_SLOT_SIZE];
	char out[128], want[128];
	struct baton_ring *r;
	uint64_t seq;
	int ofd, rc;
	pid_t pid;

	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_PRODUCER,
				       &r));
	pid = spawn_peer(self->path, "consume", self->name, PEER_COUNT, &ofd);
	ASSERT_LT(0, pid);
	for (seq = 0; seq < PEER_COUNT; seq++) {
		bt_fill(msg, sizeof(msg), seq);
		rc = baton_spsc_push(r, msg, sizeof(msg), OP_TIMEOUT_NS);
		ASSERT_EQ(0, rc) TH_LOG("push %llu: %d",
					(unsigned long long)seq, rc);
	}
	/* closing the producer is the end of stream the helper waits for */
	baton_ring_close(r);
	EXPECT_EQ(0, bt_wait_timeout(pid, 60000));
	read_rest(ofd, out, sizeof(out));
	snprintf(want, sizeof(want), "attached consumer\nrecv %u %016llx\n",
		 PEER_COUNT,
		 (unsigned long long)stream_csum(PEER_SLOT_SIZE, PEER_COUNT));
	EXPECT_STREQ(want, out);
}

/* two exec'd programs; the test only creates the ring and judges */
TEST_F_TIMEOUT(peer, exec_both_ends, 120)
{
	char pout[128], cout[128], line[64];
	const struct baton_ring_hdr *hdr;
	struct baton_ring_create c;
	const char *sent;
	int dev, fd, pofd, cofd;
	pid_t ppid, cpid;

	dev = bt_dev_open();
	ASSERT_LE(0, dev);
	/* created as consumer, and that role handed over to the helper */
	ASSERT_EQ(0, _test_ring_create(dev, self->name, BATON_ROLE_CONSUMER,
				       PEER_SLOTS, PEER_SLOT_SIZE, 0600, &c));
	close(c.out_fd);

	cpid = spawn_peer(self->path, "consume", self->name, PEER_COUNT,
			  &cofd);
	ASSERT_LT(0, cpid);
	/*
	 * The producer may start only once the consumer is attached: until
	 * then CONSUMER_GONE (from the creator's close) would make its park
	 * on the full ring return EPIPE, as it should.
	 */
	ASSERT_EQ(0, read_first_line(cofd, line, sizeof(line), 20000));
	ASSERT_STREQ("attached consumer\n", line);
	ppid = spawn_peer(self->path, "produce", self->name, PEER_COUNT,
			  &pofd);
	ASSERT_LT(0, ppid);
	EXPECT_EQ(0, bt_wait_timeout(ppid, 90000));
	EXPECT_EQ(0, bt_wait_timeout(cpid, 90000));
	read_rest(pofd, pout, sizeof(pout));
	read_rest(cofd, cout, sizeof(cout));
	sent = strstr(pout, "sent ");
	ASSERT_NE(NULL, sent) TH_LOG("producer: %s", pout);
	ASSERT_EQ(0, strncmp(cout, "recv ", 5)) TH_LOG("consumer: %s", cout);
	EXPECT_STREQ(sent + 5, cout + 5);

	/* both helpers gone: look at the counters through a new attach */
	fd = test_ring_open(dev, self->name, BATON_ROLE_PRODUCER, NULL);
	hdr = bt_map(fd, &c.out_off, BT_HDR, PROT_READ);
	ASSERT_NE(MAP_FAILED, hdr);
	EXPECT_EQ(1, hdr->producer_deaths);
	EXPECT_EQ(2, hdr->consumer_deaths);
	EXPECT_EQ(BATON_STATE_CONSUMER_GONE, hdr->state);
	bt_unmap(&c.out_off, BT_HDR, (void *)hdr);
	close(fd);
	close(dev);
}

TEST_HARNESS_MAIN

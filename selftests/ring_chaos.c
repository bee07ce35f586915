// SPDX-License-Identifier: GPL-2.0
/*
 * ring_chaos: every ring-fd operation at once, from several processes,
 * while the name is unlinked and re-created under them.
 *
 * Owns the lifetime and locking of the module under churn: attach and
 * release racing each other, mmap/munmap/fork (the mm set behind barrier
 * G), parks with short deadlines and arbitrary @expected, wakes, polls,
 * scribbled indices, and rings that lose their name while in use. Each
 * operation may only fail with an errno the uapi documents for it; the
 * kernel must stay clean (slub_debug, no WARNING: the VM runner fails the
 * run otherwise); and once every process is gone no role may be left
 * attached.
 */
#include "common.h"

#define WORKERS		4
#define CHAOS_MS	3000
#define MAX_FDS		2
#define MAX_MAPS	6

struct held_fd {
	int fd;
	uint32_t role;
	struct baton_ring_offsets off;
};

struct held_map {
	uint8_t *p;
	size_t len;
	bool rw;
};

static uint64_t rnd_state;

static uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)rnd_state;
}

/* Exit codes name the operation that saw an undocumented result. */
enum { OP_OPEN = 10, OP_MMAP, OP_PARK, OP_WAKE, OP_POLL, OP_FORK, OP_INFO };

static void worker(int dev, const char *name, unsigned int seed)
{
	struct held_fd fds[MAX_FDS];
	struct held_map maps[MAX_MAPS];
	int64_t end = bt_now_ns() + CHAOS_MS * BT_MSEC;
	int nfds = 0, nmaps = 0, rc, i;
	unsigned int done[10] = { 0 }, attached = 0;

	rnd_state = 0x9e3779b97f4a7c15ULL * (seed + 1);
	while (bt_now_ns() < end) {
		uint32_t op = rnd() % 10;

		switch (op) {
		case 0: {	/* attach a role */
			struct baton_ring_open o;
			uint32_t role = 1 + rnd() % 2;

			rc = _test_ring_open(dev, name, role, &o);
			if (rc && rc != EBUSY && rc != ENOENT)
				_exit(OP_OPEN);
			if (rc)
				break;
			attached++;
			if (nfds == MAX_FDS) {
				close(o.out_fd);
				break;
			}
			fds[nfds].fd = o.out_fd;
			fds[nfds].role = role;
			fds[nfds].off = o.out_off;
			nfds++;
			break;
		}
		case 1:		/* release one */
			if (!nfds)
				break;
			i = rnd() % nfds;
			close(fds[i].fd);
			fds[i] = fds[--nfds];
			break;
		case 2: {	/* map a region, writable when the role owns it */
			struct held_fd *h;
			enum bt_region r = rnd() % BT_NR_REGIONS;
			bool rw;
			void *p;

			if (!nfds || nmaps == MAX_MAPS)
				break;
			h = &fds[rnd() % nfds];
			rw = bt_role_writes(h->role, r) && rnd() % 2;
			p = bt_map(h->fd, &h->off, r,
				   PROT_READ | (rw ? PROT_WRITE : 0));
			if (p == MAP_FAILED)
				_exit(OP_MMAP);
			maps[nmaps].p = p;
			maps[nmaps].len = bt_region_size(&h->off, r);
			maps[nmaps].rw = rw;
			nmaps++;
			break;
		}
		case 3:		/* unmap one */
			if (!nmaps)
				break;
			i = rnd() % nmaps;
			munmap(maps[i].p, maps[i].len);
			maps[i] = maps[--nmaps];
			break;
		case 4: {	/* park briefly at a plausible or silly index */
			struct baton_ring_info info;
			uint64_t exp;

			if (!nfds)
				break;
			i = rnd() % nfds;
			if (_test_info(fds[i].fd, &info))
				_exit(OP_INFO);
			switch (rnd() % 4) {
			case 0:	exp = info.out_head; break;
			case 1:	exp = info.out_tail; break;
			case 2:	exp = info.out_tail + 1; break;
			default: exp = ((uint64_t)rnd() << 32) | rnd(); break;
			}
			rc = _test_park(fds[i].fd, BATON_PARK_DEADLINE, exp,
					bt_now_ns() + (rnd() % 2000) * 1000);
			if (rc && rc != ETIMEDOUT && rc != EPIPE && rc != EPROTO)
				_exit(OP_PARK);
			break;
		}
		case 5:
			if (nfds && _test_wake(fds[rnd() % nfds].fd))
				_exit(OP_WAKE);
			break;
		case 6: {
			struct pollfd pfd;

			if (!nfds)
				break;
			pfd.fd = fds[rnd() % nfds].fd;
			pfd.events = POLLIN | POLLOUT;
			if (poll(&pfd, 1, rnd() % 2) < 0 ||
			    (pfd.revents & POLLNVAL))
				_exit(OP_POLL);
			break;
		}
		case 7: {	/* a short-lived child sharing every mapping */
			pid_t pid = fork();

			if (pid < 0)
				_exit(OP_FORK);
			if (!pid) {
				for (i = 0; i < nmaps; i++)
					if (maps[i].rw)
						maps[i].p[rnd() % maps[i].len] ^= 1;
				_exit(0);
			}
			if (bt_wait_timeout(pid, 20000))
				_exit(OP_FORK);
			break;
		}
		case 8: {
			struct baton_ring_info info;

			if (!nfds)
				break;
			if (_test_info(fds[rnd() % nfds].fd, &info) ||
			    info.out_producers > 1 || info.out_consumers > 1)
				_exit(OP_INFO);
			break;
		}
		default:	/* scribble on whatever we may write */
			for (i = 0; i < nmaps; i++) {
				if (maps[i].rw) {
					uint64_t *w = (uint64_t *)maps[i].p;

					w[rnd() % (maps[i].len / 8)] =
						rnd() % 3 ? rnd() % 64 :
						((uint64_t)rnd() << 32);
				}
			}
			break;
		}
		done[op]++;
	}
	fprintf(stderr, "# worker %u: %u attaches, ops", seed, attached);
	for (i = 0; i < 10; i++)
		fprintf(stderr, " %u", done[i]);
	fprintf(stderr, "\n");
	_exit(0);
}

TEST(churn)
{
	struct baton_ring_info info;
	char name[BATON_NAME_MAX];
	pid_t pids[WORKERS];
	int dev, i, prod, cons, renames = 0;
	int64_t end;

	BT_REQUIRE_DEV();
	dev = bt_dev_open();
	ASSERT_LE(0, dev);
	bt_make_name(name, sizeof(name), "chaos");
	ASSERT_EQ(0, _test_ring_create(dev, name, BATON_ROLE_PRODUCER, 8, 64,
				       0600, NULL));
	for (i = 0; i < WORKERS; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i])
			worker(dev, name, i);
	}
	/* meanwhile the name moves to a fresh ring every so often */
	end = bt_now_ns() + CHAOS_MS * BT_MSEC;
	while (bt_now_ns() < end) {
		bt_sleep_ms(40);
		ASSERT_EQ(0, _test_unlink(dev, name));
		ASSERT_EQ(0, _test_ring_create(dev, name,
					       renames % 2 ? BATON_ROLE_PRODUCER :
							     BATON_ROLE_CONSUMER,
					       8 << (renames % 3), 64, 0600,
					       NULL));
		renames++;
	}
	for (i = 0; i < WORKERS; i++) {
		EXPECT_EQ(0, bt_wait_timeout(pids[i], 30000))
			TH_LOG("worker %d", i);
	}
	TH_LOG("%d renames", renames);

	/* everyone is gone: both roles of the last ring are free */
	prod = test_ring_open(dev, name, BATON_ROLE_PRODUCER, NULL);
	cons = test_ring_open(dev, name, BATON_ROLE_CONSUMER, NULL);
	test_info(cons, &info);
	EXPECT_EQ(1, info.out_producers);
	EXPECT_EQ(1, info.out_consumers);
	close(prod);
	close(cons);
	test_unlink(dev, name);
	close(dev);
}

TEST_HARNESS_MAIN

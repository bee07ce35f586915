// SPDX-License-Identifier: MIT
/*
 * An MPSC producer that dies in the window between the parked consumer's
 * two looks at the producers (memfd backend): the look for a dead
 * ticket's holder, which still sees it alive, and the look for any
 * producer at all, which finds none. Messages published past its ticket
 * must still be read: the consumer tombstones the ticket and goes on, it
 * does not end the stream with -EPIPE.
 *
 * The window is one system call wide, so this test places the death in
 * it: the binary is linked with -Wl,--wrap=fcntl, and the wrapper kills
 * the holder just before the consumer asks about every producer index at
 * once (the F_OFD_GETLK over bytes LOCK_PRODUCER0.. of
 * lib/backend_memfd.c, baton__memfd_peer_gone()).
 */
#include <stdarg.h>

#include "kselftest_harness.h"
#include "common.h"

#define MS (1000LL * 1000)
#define PRODUCERS 4
#define LOCK_PRODUCER0 16	/* lib/backend_memfd.c */

static pid_t victim;

int __real_fcntl(int fd, int cmd, ...);

int __wrap_fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (cmd == F_OFD_GETLK && victim) {
		const struct flock *fl = arg;

		if (fl->l_start == LOCK_PRODUCER0 && fl->l_len == PRODUCERS) {
			kill(victim, SIGKILL);
			waitpid(victim, NULL, 0);
			victim = 0;
		}
	}
	return __real_fcntl(fd, cmd, arg);
}

TEST(producer_dying_between_the_consumers_looks_loses_nothing)
{
	struct baton_ring_params p = {
		.kind = BATON_RING_MPSC, .slot_count = 8, .slot_size = 8,
		.mode = 0600, .backend = BATON_BACKEND_AUTO,
		.max_producers = PRODUCERS,
	};
	struct baton_ring *cons, *b;
	char name[BATON_NAME_MAX];
	uint64_t v, want;
	pid_t a;

	force_memfd();
	ring_name(name, sizeof(name), "mdw");
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_CONSUMER, &cons));
	/* Ticket 0, taken and never published. */
	a = fork_ticket0_holder(name);
	ASSERT_LT(0, a);
	ASSERT_EQ(0, baton_ring_open(name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_AUTO, &b));
	for (v = 1; v <= 3; v++)
		ASSERT_EQ(0, baton_mpsc_push(b, &v, sizeof(v)));
	baton_ring_close(b);
	/* A is alive: the pop parks at ticket 0 until a slice ends. */
	victim = a;
	EXPECT_EQ(BATON_MPSC_LOST,
		  baton_mpsc_pop(cons, &v, sizeof(v), 1000 * MS, NULL));
	EXPECT_EQ(0, victim);	/* the window was reached */
	for (want = 1; want <= 3; want++) {
		ASSERT_EQ(0, baton_mpsc_pop(cons, &v, sizeof(v), 1000 * MS,
					    NULL));
		EXPECT_EQ(want, v);
	}
	/* Now the stream has ended: every producer gone, nothing left. */
	EXPECT_EQ(-EPIPE, baton_mpsc_pop(cons, &v, sizeof(v), 1000 * MS,
					 NULL));
	if (victim) {
		kill(victim, SIGKILL);
		waitpid(victim, NULL, 0);
	}
	baton_ring_close(cons);
	baton_ring_unlink(name, BATON_BACKEND_AUTO);
}

TEST_HARNESS_MAIN

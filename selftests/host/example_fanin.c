// SPDX-License-Identifier: MIT
/*
 * Documentation/examples/mpsc_fanin.c, run with two of its three
 * producers late: they open the ring only once the consumer has seen
 * the stream end (-EPIPE) or three seconds have passed.
 *
 * End of stream on an MPSC ring means "no producer attached now, and the
 * ring drained". An example whose consumer pops before every producer has
 * attached ends early when its first producer sends everything and
 * leaves before the others open the ring: seen in CI on the kmod backend
 * under TCG (a slow fork), as "baton_mpsc_pop: Broken pipe". This test
 * makes that schedule certain, on the memfd backend: the example must
 * wait for its producers, and then it passes after the three seconds.
 *
 * The example is included whole, its main() renamed; the binary is
 * linked with -Wl,--wrap=baton_ring_open,--wrap=baton_mpsc_pop so the
 * wrappers below see the example's calls. Its <baton/baton.h> is
 * lib/include/baton.h through a link the Makefile makes in build/host/.
 */
#define main example_main
#include "../../Documentation/examples/mpsc_fanin.c"
#undef main

#include <sys/mman.h>

#include "kselftest_harness.h"

#define LATE_WAIT_MS	3000

/* Shared by the example's processes (fork keeps the mapping). */
struct schedule {
	unsigned int producer_opens;
	unsigned int consumer_saw_epipe;
};

static struct schedule *sched;

int __real_baton_ring_open(const char *name, int role, int backend,
			   struct baton_ring **ring);
int __real_baton_mpsc_pop(struct baton_ring *r, void *msg, size_t len,
			  int64_t timeout_ns, struct baton_mpsc_loss *loss);

/* Every producer but the first waits for the stream's end, or the time. */
int __wrap_baton_ring_open(const char *name, int role, int backend,
			   struct baton_ring **ring)
{
	int ms;

	if (sched && role == BATON_ROLE_PRODUCER &&
	    __atomic_fetch_add(&sched->producer_opens, 1, __ATOMIC_RELAXED))
		for (ms = 0; ms < LATE_WAIT_MS &&
		     !__atomic_load_n(&sched->consumer_saw_epipe,
				      __ATOMIC_ACQUIRE); ms++)
			usleep(1000);
	return __real_baton_ring_open(name, role, backend, ring);
}

int __wrap_baton_mpsc_pop(struct baton_ring *r, void *msg, size_t len,
			  int64_t timeout_ns, struct baton_mpsc_loss *loss)
{
	int ret = __real_baton_mpsc_pop(r, msg, len, timeout_ns, loss);

	if (ret == -EPIPE && sched)
		__atomic_store_n(&sched->consumer_saw_epipe, 1,
				 __ATOMIC_RELEASE);
	return ret;
}

TEST(fanin_example_waits_for_late_producers)
{
	sched = mmap(NULL, sizeof(*sched), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sched);
	ASSERT_EQ(0, setenv("BATON_BACKEND", "memfd", 1));
	EXPECT_EQ(0, example_main());
	EXPECT_EQ(3U, sched->producer_opens);
	EXPECT_EQ(0U, sched->consumer_saw_epipe);
	munmap(sched, sizeof(*sched));
}

TEST_HARNESS_MAIN

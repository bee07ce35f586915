/* SPDX-License-Identifier: MIT */
/*
 * spsc_pipeline.c: a first baton program. One process produces numbered
 * messages, another consumes them, through a single-producer
 * single-consumer (SPSC) ring: no syscall per message, only when one
 * side has to wait for the other.
 *
 *   cc spsc_pipeline.c $(pkg-config --cflags --libs baton) -o spsc_pipeline
 *   ./spsc_pipeline                      # /dev/baton if loaded, else memfd
 *   BATON_BACKEND=memfd ./spsc_pipeline  # pure userspace, no module
 *
 * Return convention of libbaton: a negative errno on failure, so every
 * call below is checked with `r < 0`.
 */
#define _DEFAULT_SOURCE	/* fork() and the like under -std=c11 too */
#include <baton/baton.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define COUNT	100000
#define WAIT_NS	(30LL * 1000000000LL)	/* give up after 30 s, never hang */

/* What travels: a sequence number and something derived from it. */
struct msg {
	uint64_t seq;
	uint64_t square;
};

static int fail(const char *what, int r)
{
	fprintf(stderr, "spsc_pipeline: %s: %s\n", what, strerror(-r));
	return 1;
}

/* The consumer: its own process, so it opens the ring by name. */
static int consume(const char *name)
{
	struct baton_ring *r;
	struct msg m;
	uint64_t expect;
	int ret = baton_ring_open(name, BATON_ROLE_CONSUMER, BATON_BACKEND_AUTO, &r);

	if (ret < 0)
		return fail("baton_ring_open", ret);
	for (expect = 0; expect < COUNT; expect++) {
		/* Spins a little, then sleeps in the kernel until a message. */
		ret = baton_spsc_pop(r, &m, sizeof(m), WAIT_NS);
		if (ret < 0)
			return fail("baton_spsc_pop", ret);
		if (m.seq != expect || m.square != expect * expect) {
			fprintf(stderr, "spsc_pipeline: got %llu, expected %llu\n",
				(unsigned long long)m.seq, (unsigned long long)expect);
			return 1;
		}
	}
	baton_ring_close(r);
	return 0;
}

int main(void)
{
	struct baton_ring_params p = {
		.kind = BATON_RING_SPSC,
		.slot_count = 256,		/* a power of two */
		.slot_size = sizeof(struct msg),	/* a multiple of 8 */
		.mode = 0600,			/* who may open it, as for a file */
		.backend = BATON_BACKEND_AUTO,
	};
	struct baton_ring *r;
	char name[BATON_NAME_MAX];
	uint64_t seq;
	int ret, status;
	pid_t child;

	/* A name per run, so two runs never meet. */
	snprintf(name, sizeof(name), "example-spsc-%d", (int)getpid());
	/* Create the ring and hold its producer role. */
	ret = baton_ring_create(name, &p, BATON_ROLE_PRODUCER, &r);
	if (ret < 0)
		return fail("baton_ring_create", ret);

	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (child == 0)
		_exit(consume(name));

	for (seq = 0; seq < COUNT; seq++) {
		struct msg m = { .seq = seq, .square = seq * seq };

		/* Waits (spin, then sleep) while the ring is full. */
		ret = baton_spsc_push(r, &m, sizeof(m), WAIT_NS);
		if (ret < 0)
			return fail("baton_spsc_push", ret);
	}

	if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		fprintf(stderr, "spsc_pipeline: the consumer failed\n");
		return 1;
	}
	/*
	 * A name stays until unlinked, like a file's; the ring itself goes
	 * when the name and the last handle have.
	 */
	ret = baton_ring_unlink(name, BATON_BACKEND_AUTO);
	if (ret < 0)
		return fail("baton_ring_unlink", ret);
	baton_ring_close(r);
	printf("spsc_pipeline: %d messages in order on %s\n", COUNT,
	       baton_backend_name(baton_backend_resolve(BATON_BACKEND_AUTO)));
	return 0;
}

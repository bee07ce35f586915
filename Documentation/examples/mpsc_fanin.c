/* SPDX-License-Identifier: MIT */
/*
 * mpsc_fanin.c: three producer processes, one consumer, one
 * multi-producer (MPSC) ring. Each producer sends its own numbered
 * messages; the consumer checks that, producer by producer, they arrive
 * in the order they were sent and that none is missing or repeated.
 * (Between producers there is no order: the ring interleaves them.)
 *
 * End of stream on an MPSC ring is "no producer attached now, and the
 * ring drained": a pop says -EPIPE once the last attached producer has
 * gone, whether or not more will come. So the consumer here waits until
 * all three have attached before its first pop; without that, a first
 * producer that sent everything and left before the others had opened
 * the ring (a slow fork) would end the stream early.
 *
 *   cc mpsc_fanin.c $(pkg-config --cflags --libs baton) -o mpsc_fanin
 *   BATON_BACKEND=memfd ./mpsc_fanin
 *
 * Errors are a negative errno: checked with `r < 0`.
 */
#define _DEFAULT_SOURCE	/* fork() and the like under -std=c11 too */
#include <baton/baton.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PRODUCERS	3
#define PER_PRODUCER	50000
#define WAIT_NS		(30LL * 1000000000LL)	/* never hang a test */

struct msg {
	uint32_t producer;	/* 0 .. PRODUCERS - 1 */
	uint32_t pad;
	uint64_t seq;		/* 0 .. PER_PRODUCER - 1, per producer */
};

static int fail(const char *who, const char *what, int r)
{
	fprintf(stderr, "mpsc_fanin: %s: %s: %s\n", who, what, strerror(-r));
	return 1;
}

/*
 * One producer process: opens its own producer handle by name, then says
 * so with a byte on @attached.
 */
static int produce(const char *name, uint32_t id, int attached)
{
	struct baton_ring *r;
	struct msg m = { .producer = id };
	int ret = baton_ring_open(name, BATON_ROLE_PRODUCER, BATON_BACKEND_AUTO, &r);
	char c = 1;

	if (ret < 0)
		return fail("producer", "baton_ring_open", ret);
	if (write(attached, &c, 1) != 1)
		return fail("producer", "write", -errno);
	close(attached);
	for (m.seq = 0; m.seq < PER_PRODUCER; m.seq++) {
		/*
		 * One atomic ticket per message; waits while the ring is
		 * full. After an error the handle refuses more pushes.
		 */
		ret = baton_mpsc_push(r, &m, sizeof(m));
		if (ret < 0)
			return fail("producer", "baton_mpsc_push", ret);
	}
	baton_ring_close(r);
	return 0;
}

int main(void)
{
	struct baton_ring_params p = {
		.kind = BATON_RING_MPSC,
		.slot_count = 1024,
		.slot_size = sizeof(struct msg),
		.mode = 0600,
		.backend = BATON_BACKEND_AUTO,
		.max_producers = PRODUCERS,	/* producer handles it admits */
	};
	uint64_t next[PRODUCERS] = { 0 };	/* the seq expected from each */
	struct baton_mpsc_loss loss;
	struct baton_ring *r;
	char name[BATON_NAME_MAX];
	uint64_t got;
	uint32_t i;
	int ret, status, failed = 0, attached[2];
	char c;

	snprintf(name, sizeof(name), "example-mpsc-%d", (int)getpid());
	/* The consumer creates the ring, so it exists before any producer. */
	ret = baton_ring_create(name, &p, BATON_ROLE_CONSUMER, &r);
	if (ret < 0)
		return fail("consumer", "baton_ring_create", ret);

	if (pipe(attached)) {
		perror("pipe");
		return 1;
	}
	for (i = 0; i < PRODUCERS; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			close(attached[0]);
			_exit(produce(name, i, attached[1]));
		}
	}
	/* Every producer attached (EOF first: one failed to open). */
	close(attached[1]);
	for (i = 0; i < PRODUCERS; i++)
		if (read(attached[0], &c, 1) != 1) {
			fprintf(stderr, "mpsc_fanin: a producer did not attach\n");
			return 1;
		}
	close(attached[0]);

	for (got = 0; got < (uint64_t)PRODUCERS * PER_PRODUCER; got++) {
		struct msg m;

		ret = baton_mpsc_pop(r, &m, sizeof(m), WAIT_NS, &loss);
		/*
		 * A producer that died holding a ticket leaves a tombstone:
		 * BATON_MPSC_LOST, negative like an error but not one (the
		 * next pop goes on behind it), so test it first.
		 */
		if (ret == BATON_MPSC_LOST) {
			fprintf(stderr, "mpsc_fanin: ticket %llu lost by pid %llu\n",
				(unsigned long long)loss.ticket,
				(unsigned long long)loss.pid);
			return 1;
		}
		if (ret < 0)
			return fail("consumer", "baton_mpsc_pop", ret);
		if (m.producer >= PRODUCERS || m.seq != next[m.producer]) {
			fprintf(stderr, "mpsc_fanin: producer %u sent %llu, expected %llu\n",
				m.producer, (unsigned long long)m.seq,
				(unsigned long long)next[m.producer % PRODUCERS]);
			return 1;
		}
		next[m.producer]++;
	}

	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failed = 1;
	ret = baton_ring_unlink(name, BATON_BACKEND_AUTO);
	baton_ring_close(r);
	if (failed || ret < 0) {
		fprintf(stderr, "mpsc_fanin: a producer or the unlink failed\n");
		return 1;
	}
	printf("mpsc_fanin: %d producers x %d messages, each in order, on %s\n",
	       PRODUCERS, PER_PRODUCER,
	       baton_backend_name(baton_backend_resolve(BATON_BACKEND_AUTO)));
	return 0;
}

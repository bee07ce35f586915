/* SPDX-License-Identifier: MIT */
/*
 * pool_frames.c: large buffers by handle. A producer stage fills 1 MiB
 * frames in place in a shared pool and hands each to a consumer stage
 * (another process) as 16 bytes through an SPSC ring; the consumer reads
 * the frame where it lies and gives it back. No copy of the frame, no
 * syscall per frame on a warm pool, and if either process is killed its
 * buffers come back (from the module at once; on the memfd backend when
 * the other next looks).
 *
 *   cc pool_frames.c $(pkg-config --cflags --libs baton) -o pool_frames
 *   ./pool_frames          # the module if /dev/baton exists, else memfd
 */
#define _DEFAULT_SOURCE	/* fork() and the like under -std=c11 too */
#include <baton/baton.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define FRAMES		200
#define FRAME_SIZE	(1u << 20)
#define WAIT_NS		(30LL * 1000000000LL)	/* never hang */

/* Named after the producer's pid, so runs do not meet. */
static char pool_name[64], ring_name[64];

static int fail(const char *what, int r)
{
	fprintf(stderr, "pool_frames: %s: %s\n", what, strerror(-r));
	return 1;
}

/* The consumer stage: its own handles on the pool and the ring. */
static int consume(void)
{
	struct baton_pool *pool;
	struct baton_ring *r;
	uint64_t h, len;
	int i, ret;

	ret = baton_pool_open(pool_name, &pool);
	if (ret < 0)
		return fail("baton_pool_open", ret);
	ret = baton_ring_open_timeout(ring_name, BATON_ROLE_CONSUMER,
				      BATON_BACKEND_AUTO, WAIT_NS, &r);
	if (ret < 0)
		return fail("baton_ring_open_timeout", ret);
	for (i = 0; i < FRAMES; i++) {
		const uint8_t *frame;

		/* Pops (handle, length) and makes the buffer ours. */
		ret = baton_pool_recv(r, pool, &h, &len, WAIT_NS);
		if (ret < 0)
			return fail("baton_pool_recv", ret);
		frame = baton_pool_ptr(pool, h);
		if (len != FRAME_SIZE || frame[0] != (uint8_t)i ||
		    frame[FRAME_SIZE - 1] != (uint8_t)~i) {
			fprintf(stderr, "pool_frames: frame %d is wrong\n", i);
			return 1;
		}
		baton_pool_free(pool, h);	/* back to the pool */
	}
	baton_ring_close(r);
	baton_pool_close(pool);
	return 0;
}

int main(void)
{
	struct baton_pool_params pp = {
		.nr_classes = 1,
		.classes = { { .buf_shift = 20, .count = 16 } },	/* 16 x 1 MiB */
		.decay_ms = 1000,	/* idle frames' pages go back after 1 s */
	};
	struct baton_ring_params rp = {
		.kind = BATON_RING_SPSC, .slot_count = 64, .slot_size = 16,
		.mode = 0600, .backend = BATON_BACKEND_AUTO,
	};
	struct baton_pool *pool;
	struct baton_ring *r;
	int i, ret, status;
	pid_t pid;

	snprintf(pool_name, sizeof(pool_name), "frames-pool-%d", (int)getpid());
	snprintf(ring_name, sizeof(ring_name), "frames-ring-%d", (int)getpid());
	ret = baton_pool_create(pool_name, &pp, &pool);
	if (ret < 0)
		return fail("baton_pool_create", ret);
	ret = baton_ring_create(ring_name, &rp, BATON_ROLE_PRODUCER, &r);
	if (ret < 0)
		return fail("baton_ring_create", ret);
	pid = fork();
	if (pid < 0)
		return fail("fork", -1);
	if (pid == 0)
		_exit(consume());

	for (i = 0; i < FRAMES; i++) {
		uint64_t h;
		uint8_t *frame;

		/* All 16 in flight: sleep until the consumer frees one. */
		ret = baton_pool_alloc_wait(pool, FRAME_SIZE, &h, WAIT_NS);
		if (ret < 0)
			return fail("baton_pool_alloc_wait", ret);
		frame = baton_pool_ptr(pool, h);
		memset(frame, i, FRAME_SIZE - 1);	/* written in place */
		frame[FRAME_SIZE - 1] = (uint8_t)~i;
		ret = baton_pool_send(r, pool, h, FRAME_SIZE, WAIT_NS);
		if (ret < 0)
			return fail("baton_pool_send", ret);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return 1;
	baton_ring_close(r);
	baton_pool_close(pool);
	baton_ring_unlink(ring_name, BATON_BACKEND_AUTO);
	baton_pool_unlink(pool_name);
	printf("pool_frames: %d frames of 1 MiB handed over by handle\n", FRAMES);
	return 0;
}

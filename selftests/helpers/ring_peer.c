// SPDX-License-Identifier: GPL-2.0
/*
 * helpers/ring_peer: the other end of a ring, as a separately exec'd
 * program (no inherited fds or mappings: it attaches by name only).
 *
 *   ring_peer produce NAME COUNT   open NAME as producer, print
 *                                  "attached producer", push COUNT
 *                                  messages, print "sent COUNT CSUM"
 *   ring_peer consume NAME COUNT   open NAME as consumer, print
 *                                  "attached consumer", pop COUNT
 *                                  messages, verify every byte, then
 *                                  expect end of stream (-EPIPE), print
 *                                  "recv COUNT CSUM"
 *   ring_peer fd-closed N          exit 0 iff fd N is not open
 *   ring_peer fd-open N            exit 0 iff fd N is open
 *   ring_peer sleep MS             sleep, exit 0 (a process that
 *                                  exec'd away its ring fds and maps)
 *
 * Message seq fills its slot with bt_fill(); CSUM is bt_csum() over the
 * first word of every message in order, so equal sums on both sides mean
 * same messages, same order. Exit codes: 0 ok, 2 usage, 3 open failed,
 * 4 push/pop failed, 5 data mismatch, 6 no end of stream.
 */
#define BT_NO_HARNESS
#include "../common.h"

#define PEER_TIMEOUT_NS	(60 * BT_NSEC)

static int produce(const char *name, uint64_t count)
{
	struct baton_ring *r;
	uint64_t seq, csum = BT_CSUM_INIT;
	uint8_t *msg;
	int rc;

	rc = baton_ring_open(name, BATON_ROLE_PRODUCER, BATON_BACKEND_KMOD,
			     &r);
	if (rc) {
		fprintf(stderr, "ring_peer: open %s producer: %d\n", name, rc);
		return 3;
	}
	printf("attached producer\n");
	fflush(stdout);
	msg = malloc(r->slot_size);
	if (!msg)
		return 4;
	for (seq = 0; seq < count; seq++) {
		bt_fill(msg, r->slot_size, seq);
		rc = baton_spsc_push(r, msg, r->slot_size, PEER_TIMEOUT_NS);
		if (rc != 0) {
			fprintf(stderr, "ring_peer: push %llu: %d\n",
				(unsigned long long)seq, rc);
			return 4;
		}
		csum = bt_csum(csum, *(uint64_t *)msg);
	}
	printf("sent %llu %016llx\n", (unsigned long long)count,
	       (unsigned long long)csum);
	fflush(stdout);
	baton_ring_close(r);
	free(msg);
	return 0;
}

static int consume(const char *name, uint64_t count)
{
	struct baton_ring *r;
	uint64_t seq, csum = BT_CSUM_INIT;
	uint8_t *msg;
	int rc;

	rc = baton_ring_open(name, BATON_ROLE_CONSUMER, BATON_BACKEND_KMOD,
			     &r);
	if (rc) {
		fprintf(stderr, "ring_peer: open %s consumer: %d\n", name, rc);
		return 3;
	}
	printf("attached consumer\n");
	fflush(stdout);
	msg = malloc(r->slot_size);
	if (!msg)
		return 4;
	for (seq = 0; seq < count; seq++) {
		rc = baton_spsc_pop(r, msg, r->slot_size, PEER_TIMEOUT_NS);
		if (rc != 0) {
			fprintf(stderr, "ring_peer: pop %llu: %d\n",
				(unsigned long long)seq, rc);
			return 4;
		}
		if (!bt_check(msg, r->slot_size, seq)) {
			fprintf(stderr, "ring_peer: message %llu corrupt\n",
				(unsigned long long)seq);
			return 5;
		}
		csum = bt_csum(csum, *(uint64_t *)msg);
	}
	rc = baton_spsc_pop(r, msg, r->slot_size, PEER_TIMEOUT_NS);
	if (rc != -EPIPE) {
		fprintf(stderr, "ring_peer: after %llu: %d, not -EPIPE\n",
			(unsigned long long)count, rc);
		return 6;
	}
	printf("recv %llu %016llx\n", (unsigned long long)count,
	       (unsigned long long)csum);
	fflush(stdout);
	baton_ring_close(r);
	free(msg);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "fd-closed"))
		return fcntl(atoi(argv[2]), F_GETFD) == -1 && errno == EBADF ?
		       0 : 1;
	if (argc == 3 && !strcmp(argv[1], "fd-open"))
		return fcntl(atoi(argv[2]), F_GETFD) >= 0 ? 0 : 1;
	if (argc == 3 && !strcmp(argv[1], "sleep")) {
		bt_sleep_ms(atol(argv[2]));
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "produce"))
		return produce(argv[2], strtoull(argv[3], NULL, 0));
	if (argc == 4 && !strcmp(argv[1], "consume"))
		return consume(argv[2], strtoull(argv[3], NULL, 0));
	fprintf(stderr, "usage: %s produce|consume NAME COUNT | "
		"fd-closed|fd-open N | sleep MS\n", argv[0]);
	return 2;
}

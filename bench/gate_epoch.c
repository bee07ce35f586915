/* SPDX-License-Identifier: MIT */
/*
 * bench/gate_epoch.c: the perf gate's harness for the epoch read side
 * (bench/perf-gate.sh runs it under callgrind; see gate_spsc.c for how
 * the count is taken). One process, one memfd-backend epoch domain, one
 * registered participant; nobody collects or synchronizes, so enter takes
 * its loop once and exit finds no parked destroyer. Paths:
 *
 *   epoch_enter   baton_epoch_enter(): announce, re-check
 *   epoch_exit    baton_epoch_exit(): the release store and the kick
 *                 decision
 *
 * GATE_INJECT(): bench/gate.h.
 *
 * gate-paths: epoch_enter epoch_exit
 */
#define _GNU_SOURCE
#include <baton.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate.h"

GATE_NOINLINE uint64_t gate_op_epoch_enter(struct baton_epoch *d)
{
	GATE_INJECT();
	return baton_epoch_enter(d);
}

GATE_NOINLINE void gate_op_epoch_exit(struct baton_epoch *d)
{
	GATE_INJECT();
	baton_epoch_exit(d);
}

static void die(const char *what, int rc)
{
	fprintf(stderr, "gate_epoch: %s: %s\n", what, strerror(-rc));
	exit(2);
}

int main(int argc, char **argv)
{
	struct baton_epoch_params prm = {
		.max_participants = 4,
		.queue_len = 64,
		.mode = 0600,
		.backend = BATON_BACKEND_MEMFD,
	};
	struct baton_epoch *d;
	char name[BATON_NAME_MAX];
	uint64_t n, i, sum = 0;
	int rc;

	if (argc != 3 || (strcmp(argv[1], "epoch_enter") && strcmp(argv[1], "epoch_exit"))) {
		fprintf(stderr, "usage: gate_epoch epoch_enter|epoch_exit N\n");
		return 2;
	}
	n = strtoull(argv[2], NULL, 0);
	snprintf(name, sizeof(name), "gate-epoch-%d", (int)getpid());
	rc = baton_epoch_create(name, &prm, &d);
	if (rc < 0)
		die("baton_epoch_create", rc);
	baton_epoch_unlink(name, BATON_BACKEND_MEMFD);
	rc = baton_epoch_register(d);
	if (rc < 0)
		die("baton_epoch_register", rc);
	for (i = 0; i < n; i++) {
		sum += gate_op_epoch_enter(d);
		gate_op_epoch_exit(d);
	}
	baton_epoch_close(d);
	printf("gate: path=%s calls=%llu\n", argv[1], (unsigned long long)n);
	return sum == ~0ull;	/* keep sum live */
}

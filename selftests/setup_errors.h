/* SPDX-License-Identifier: MIT */
/*
 * Every rule a create, open or register can break, one case each, with
 * the errno it must return and the words its message must contain (the
 * field, its value, the rule). Shared by the host test
 * (selftests/host/setup_errors.c, memfd) and the VM test
 * (selftests/setup_errors.c, kmod): the same mistakes must be told the
 * same way on both backends. Include after kselftest_harness.h.
 */
#ifndef BATON_SETUP_ERRORS_H
#define BATON_SETUP_ERRORS_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "baton.h"
#include "baton_epoch.h"

struct setup_case {
	const char *label;
	int err;		/* negative errno */
	const char *says[3];	/* each must be in the message */
};

/* The order of run_setup_case()'s switch. */
static const struct setup_case setup_cases[] = {
	{ "create: name NULL", -EINVAL, { "baton_ring_create(NULL)", "name: NULL" } },
	{ "create: name empty", -EINVAL, { "name: empty", "1 to 63" } },
	{ "create: name 64 bytes", -EINVAL, { "name: 64 bytes or more", "1 to 63" } },
	{ "create: name with '/'", -EINVAL, { "name: byte 1 is '/'", "[A-Za-z0-9._-]" } },
	{ "create: name with newline", -EINVAL, { "name: byte 2 is 0x0a", "\\x0a" } },
	{ "create: role 0", -EINVAL, { "role 0:", "BATON_ROLE_PRODUCER" } },
	{ "create: role 3", -EINVAL, { "role 3:", "BATON_ROLE_CONSUMER" } },
	{ "create: out NULL", -EINVAL, { "out: NULL" } },
	{ "create: params NULL", -EINVAL, { "params: NULL" } },
	{ "create: kind 0", -EINVAL, { "kind 0:", "BATON_RING_SPSC" } },
	{ "create: kind 7", -EINVAL, { "kind 7:", "BATON_RING_MPSC" } },
	{ "create: slot_count 3", -EINVAL, { "slot_count 3:", "power of two from 2 to 1048576" } },
	{ "create: slot_count 1", -EINVAL, { "slot_count 1:", "power of two" } },
	{ "create: slot_count 2^21", -EINVAL, { "slot_count 2097152:", "power of two" } },
	{ "create: slot_size 12", -EINVAL, { "slot_size 12:", "multiple of 8 from 8 to 65536" } },
	{ "create: slot_size 4", -EINVAL, { "slot_size 4:", "multiple of 8" } },
	{ "create: slot_size 65544", -EINVAL, { "slot_size 65544:", "multiple of 8" } },
	{ "create: 512 MiB of slots", -EINVAL, { "slot_count 1048576 * slot_size 512", "at most 268435456" } },
	{ "create: mode 01777", -EINVAL, { "mode 01777:", "0777" } },
	{ "create: SPSC max_producers 2", -EINVAL, { "max_producers 2:", "SPSC" } },
	{ "create: MPSC max_producers 0", -EINVAL, { "max_producers 0:", "MPSC ring takes 1 to 64" } },
	{ "create: MPSC max_producers 65", -EINVAL, { "max_producers 65:", "1 to 64" } },
	{ "create: backend 7", -EINVAL, { "backend 7:", "BATON_BACKEND_AUTO" } },
	{ "create: $BATON_BACKEND=nosuch", -EINVAL, { "$BATON_BACKEND \"nosuch\"", "\"kmod\"" } },
	{ "open: name with ' '", -EINVAL, { "baton_ring_open(\"a b\")", "name: byte 1 is 0x20" } },
	{ "open: role 5", -EINVAL, { "baton_ring_open(", "role 5:" } },
	{ "open: out NULL", -EINVAL, { "baton_ring_open(", "out: NULL" } },
	{ "open: backend -1", -EINVAL, { "baton_ring_open(", "backend -1:" } },
	{ "epoch create: max_participants 0", -EINVAL, { "baton_epoch_create(", "max_participants 0:", "1 to 256" } },
	{ "epoch create: max_participants 257", -EINVAL, { "max_participants 257:", "1 to 256" } },
	{ "epoch create: queue_len 3", -EINVAL, { "queue_len 3:", "power of two from 2 to 4096" } },
	{ "epoch create: queue_len 8192", -EINVAL, { "queue_len 8192:", "power of two" } },
	{ "epoch create: mode 04600", -EINVAL, { "baton_epoch_create(", "mode 04600:" } },
	{ "epoch create: params NULL", -EINVAL, { "baton_epoch_create(", "params: NULL" } },
	{ "epoch create: name '..*'", -EINVAL, { "baton_epoch_create(", "name: byte 2 is '*'" } },
	{ "epoch open: name empty", -EINVAL, { "baton_epoch_open(\"\")", "name: empty" } },
	{ "epoch open: out NULL", -EINVAL, { "baton_epoch_open(", "out: NULL" } },
	{ "epoch register: twice", -EBUSY, { "baton_epoch_register(", "already participant 0" } },
	{ "open_or_create: slot_size 12", -EINVAL, { "baton_ring_open_or_create(", "slot_size 12:" } },
	{ "open_or_create: other geometry", -EEXIST, { "baton_ring_open_or_create(", "slot_size 128: the existing ring of that name has slot_size 64" } },
	{ "epoch open_or_create: other queue_len", -EEXIST, { "baton_epoch_open_or_create(", "the existing domain of that name has" } },
	{ "pool create: name with '/'", -EINVAL, { "baton_pool_create(\"a/b\")", "name: byte 1 is '/'" } },
	{ "pool create: params NULL", -EINVAL, { "baton_pool_create(", "params: NULL" } },
	{ "pool create: nr_classes 0", -EINVAL, { "nr_classes 0:", "1 to 8" } },
	{ "pool create: buf_shift 11", -EINVAL, { "classes[0].buf_shift 11:", "12 to 22" } },
	{ "pool create: sizes not increasing", -EINVAL, { "classes[1].buf_shift 12:", "strictly increase" } },
	{ "pool create: count 0", -EINVAL, { "classes[0].count 0:", "1 to 65536" } },
	{ "pool create: keep past count", -EINVAL, { "keep 9:", "at most each class's count" } },
	{ "pool create: decay_ms 5", -EINVAL, { "decay_ms 5:", "0 (never) or 10 to 600000" } },
	{ "pool create: max_holders 1025", -EINVAL, { "max_holders 1025:", "1 to 1024" } },
	{ "pool create: mode 02600", -EINVAL, { "baton_pool_create(", "mode 02600:" } },
	{ "pool open: name empty", -EINVAL, { "baton_pool_open(\"\")", "name: empty" } },
	{ "pool open: out NULL", -EINVAL, { "baton_pool_open(", "out: NULL" } },
};

#define SETUP_CASES	(sizeof(setup_cases) / sizeof(setup_cases[0]))

/* The messages the library printed, and their levels. */
static char setup_log[SETUP_CASES][512];
static int setup_log_level[SETUP_CASES];
static int setup_log_n;		/* messages of the current case */
static size_t setup_log_at;	/* the case being run */

static int setup_capture(enum baton_log_level level, const char *fmt,
			 va_list ap)
{
	/* Only WARN and INFO count: DEBUG is what the calls did inside. */
	if (level == BATON_LOG_DEBUG)
		return 0;
	if (setup_log_n++ == 0) {
		vsnprintf(setup_log[setup_log_at],
			  sizeof(setup_log[setup_log_at]), fmt, ap);
		setup_log_level[setup_log_at] = level;
	}
	return 0;
}

static const struct baton_ring_params setup_good = {
	.kind = BATON_RING_SPSC,
	.slot_count = 16,
	.slot_size = 64,
	.mode = 0600,
	.backend = BATON_BACKEND_AUTO,
};

static const struct baton_epoch_params setup_good_epoch = {
	.max_participants = 4,
	.queue_len = 8,
	.mode = 0600,
	.backend = BATON_BACKEND_AUTO,
};

static int setup_create(const char *name, struct baton_ring_params p)
{
	struct baton_ring *r = NULL;
	int ret = baton_ring_create(name, &p, BATON_ROLE_PRODUCER, &r);

	if (!ret)
		baton_ring_close(r);
	return ret;
}

static const struct baton_pool_params setup_good_pool = {
	.nr_classes = 1,
	.mode = 0600,
	.classes = { { .buf_shift = 12, .count = 8 } },
};

static int setup_pool_create(const char *name, struct baton_pool_params p)
{
	struct baton_pool *pool = NULL;
	int ret = baton_pool_create(name, &p, &pool);

	if (!ret) {
		baton_pool_close(pool);
		baton_pool_unlink(name);
	}
	return ret;
}

static int setup_epoch_create(const char *name, struct baton_epoch_params p)
{
	struct baton_epoch *d = NULL;
	int ret = baton_epoch_create(name, &p, &d);

	if (!ret)
		baton_epoch_close(d);
	return ret;
}

/*
 * Case @i with unique names built from @tag; every object it creates on
 * the way is removed again. Returns what the call under test returned.
 */
static int run_setup_case(size_t i, const char *tag)
{
	struct baton_ring_params p = setup_good;
	struct baton_epoch_params e = setup_good_epoch;
	struct baton_pool_params pp = setup_good_pool;
	struct baton_pool *pool = NULL;
	char name[BATON_NAME_MAX], longname[BATON_NAME_MAX + 1];
	struct baton_ring *r = NULL, *r2 = NULL;
	struct baton_epoch *d = NULL, *d2 = NULL;
	const char *env = getenv("BATON_BACKEND");
	char saved_env[16] = "";
	int ret;

	snprintf(name, sizeof(name), "%s.%zu", tag, i);
	switch (i) {
	case 0: return baton_ring_create(NULL, &p, BATON_ROLE_PRODUCER, &r);
	case 1: return baton_ring_create("", &p, BATON_ROLE_PRODUCER, &r);
	case 2:
		memset(longname, 'x', BATON_NAME_MAX);
		longname[BATON_NAME_MAX] = 0;
		return baton_ring_create(longname, &p, BATON_ROLE_PRODUCER, &r);
	case 3: return baton_ring_create("a/b", &p, BATON_ROLE_PRODUCER, &r);
	case 4: return baton_ring_create("ab\n", &p, BATON_ROLE_PRODUCER, &r);
	case 5: return baton_ring_create(name, &p, 0, &r);
	case 6: return baton_ring_create(name, &p, 3, &r);
	case 7: return baton_ring_create(name, &p, BATON_ROLE_PRODUCER, NULL);
	case 8: return baton_ring_create(name, NULL, BATON_ROLE_PRODUCER, &r);
	case 9: p.kind = 0; return setup_create(name, p);
	case 10: p.kind = 7; return setup_create(name, p);
	case 11: p.slot_count = 3; return setup_create(name, p);
	case 12: p.slot_count = 1; return setup_create(name, p);
	case 13: p.slot_count = 1U << 21; return setup_create(name, p);
	case 14: p.slot_size = 12; return setup_create(name, p);
	case 15: p.slot_size = 4; return setup_create(name, p);
	case 16: p.slot_size = 65544; return setup_create(name, p);
	case 17:
		p.slot_count = 1U << 20;
		p.slot_size = 512;
		return setup_create(name, p);
	case 18: p.mode = 01777; return setup_create(name, p);
	case 19: p.max_producers = 2; return setup_create(name, p);
	case 20: p.kind = BATON_RING_MPSC; return setup_create(name, p);
	case 21:
		p.kind = BATON_RING_MPSC;
		p.max_producers = 65;
		return setup_create(name, p);
	case 22: p.backend = 7; return setup_create(name, p);
	case 23:
		if (env)
			snprintf(saved_env, sizeof(saved_env), "%s", env);
		setenv("BATON_BACKEND", "nosuch", 1);
		ret = setup_create(name, p);
		if (env)
			setenv("BATON_BACKEND", saved_env, 1);
		else
			unsetenv("BATON_BACKEND");
		return ret;
	case 24: return baton_ring_open("a b", BATON_ROLE_CONSUMER,
					BATON_BACKEND_AUTO, &r);
	case 25: return baton_ring_open(name, 5, BATON_BACKEND_AUTO, &r);
	case 26: return baton_ring_open(name, BATON_ROLE_CONSUMER,
					BATON_BACKEND_AUTO, NULL);
	case 27: return baton_ring_open(name, BATON_ROLE_CONSUMER, -1, &r);
	case 28: e.max_participants = 0; return setup_epoch_create(name, e);
	case 29: e.max_participants = 257; return setup_epoch_create(name, e);
	case 30: e.queue_len = 3; return setup_epoch_create(name, e);
	case 31: e.queue_len = 8192; return setup_epoch_create(name, e);
	case 32: e.mode = 04600; return setup_epoch_create(name, e);
	case 33: return baton_epoch_create(name, NULL, &d);
	case 34: return setup_epoch_create("..*", e);
	case 35: return baton_epoch_open("", BATON_BACKEND_AUTO, &d);
	case 36: return baton_epoch_open(name, BATON_BACKEND_AUTO, NULL);
	case 37:
		ret = baton_epoch_create(name, &e, &d);
		if (ret)
			return ret == -EBUSY ? -EIO : ret;
		ret = baton_epoch_register(d);
		if (ret >= 0)
			ret = baton_epoch_register(d);
		baton_epoch_close(d);
		baton_epoch_unlink(name, BATON_BACKEND_AUTO);
		return ret;
	case 38:
		p.slot_size = 12;
		return baton_ring_open_or_create(name, &p, BATON_ROLE_CONSUMER,
						 &r, NULL);
	case 39:
		ret = baton_ring_create(name, &p, BATON_ROLE_PRODUCER, &r);
		if (ret)
			return ret == -EEXIST ? -EIO : ret;
		p.slot_size = 128;
		ret = baton_ring_open_or_create(name, &p, BATON_ROLE_CONSUMER,
						&r2, NULL);
		if (!ret)
			baton_ring_close(r2);
		baton_ring_close(r);
		baton_ring_unlink(name, BATON_BACKEND_AUTO);
		return ret;
	case 40:
		ret = baton_epoch_create(name, &e, &d);
		if (ret)
			return ret == -EEXIST ? -EIO : ret;
		e.queue_len = 16;
		ret = baton_epoch_open_or_create(name, &e, &d2, NULL);
		if (!ret)
			baton_epoch_close(d2);
		baton_epoch_close(d);
		baton_epoch_unlink(name, BATON_BACKEND_AUTO);
		return ret;
	case 41: return baton_pool_create("a/b", &pp, &pool);
	case 42: return baton_pool_create(name, NULL, &pool);
	case 43: pp.nr_classes = 0; return setup_pool_create(name, pp);
	case 44: pp.classes[0].buf_shift = 11; return setup_pool_create(name, pp);
	case 45:
		pp.nr_classes = 2;
		pp.classes[1] = pp.classes[0];
		return setup_pool_create(name, pp);
	case 46: pp.classes[0].count = 0; return setup_pool_create(name, pp);
	case 47: pp.keep = 9; return setup_pool_create(name, pp);
	case 48: pp.decay_ms = 5; return setup_pool_create(name, pp);
	case 49: pp.max_holders = 1025; return setup_pool_create(name, pp);
	case 50: pp.mode = 02600; return setup_pool_create(name, pp);
	case 51: return baton_pool_open("", &pool);
	case 52: return baton_pool_open(name, NULL);
	}
	return -ENOSYS;
}

/*
 * Run every case; each must return its errno and print exactly one
 * WARN/INFO message with its words, and no two messages may be equal.
 * Returns the number of failures (each logged with TH_LOG by the caller
 * through @fail).
 */
static int check_setup_cases(const char *tag,
			     void (*fail)(const char *what, size_t i,
					  int got, const char *msg))
{
	baton_print_fn old = baton_set_print(setup_capture);
	int failures = 0;
	size_t i, j, k;

	for (i = 0; i < SETUP_CASES; i++) {
		int got;

		setup_log_at = i;
		setup_log_n = 0;
		setup_log[i][0] = 0;
		got = run_setup_case(i, tag);
		if (got != setup_cases[i].err) {
			fail("errno", i, got, setup_log[i]);
			failures++;
			continue;
		}
		if (setup_log_n != 1) {
			fail(setup_log_n ? "more than one message" :
					   "no message", i, got, setup_log[i]);
			failures++;
			continue;
		}
		if (setup_cases[i].err == -EINVAL &&
		    setup_log_level[i] != BATON_LOG_WARN) {
			fail("level is not BATON_LOG_WARN", i, got,
			     setup_log[i]);
			failures++;
		}
		if (strncmp(setup_log[i], "libbaton: ", 10) ||
		    !strchr(setup_log[i], '\n')) {
			fail("not one \"libbaton: \" line", i, got,
			     setup_log[i]);
			failures++;
		}
		for (k = 0; k < 3 && setup_cases[i].says[k]; k++) {
			if (!strstr(setup_log[i], setup_cases[i].says[k])) {
				fail(setup_cases[i].says[k], i, got,
				     setup_log[i]);
				failures++;
			}
		}
		for (j = 0; j < i; j++) {
			if (!strcmp(setup_log[i], setup_log[j])) {
				fail("same message as an earlier case", i,
				     got, setup_log[i]);
				failures++;
			}
		}
	}
	baton_set_print(old);
	return failures;
}

/* ---- a create whose mapping fails leaves nothing behind ---- */

#define SETUP_BIG_MIB		32	/* what the failing create maps */
#define SETUP_HEADROOM_MIB	8	/* the address space left to it */

/* The process's mapped address space in KiB (VmSize), -1 if unknown. */
static long setup_vm_kib(void)
{
	char line[128];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSize: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* A ring of SETUP_BIG_MIB (@pool 0) or a pool of as much (@pool 1). */
static int setup_big_create(const char *name, int backend, int pool)
{
	struct baton_ring_params rp = setup_good;
	struct baton_pool_params pp;
	struct baton_ring *r;
	struct baton_pool *p;
	int ret;

	if (pool) {
		memset(&pp, 0, sizeof(pp));
		pp.nr_classes = 1;
		pp.max_holders = 4;
		pp.classes[0].buf_shift = 20;
		pp.classes[0].count = SETUP_BIG_MIB;
		ret = baton_pool_create(name, &pp, &p);
		if (!ret)
			baton_pool_close(p);
		return ret;
	}
	rp.backend = backend;
	rp.slot_count = 1u << 15;
	rp.slot_size = SETUP_BIG_MIB * 32;
	ret = baton_ring_create(name, &rp, BATON_ROLE_PRODUCER, &r);
	if (!ret)
		baton_ring_close(r);
	return ret;
}

/*
 * In a child, with the address space capped SETUP_HEADROOM_MIB above what
 * it maps already (the cap cannot be lifted again), a create of a big
 * ring or pool: the create itself succeeds and its mapping fails. The
 * call must fail (exit 0) and leave no name: an open then says ENOENT and
 * a create without the cap succeeds (before: EEXIST for ever, from an
 * object nobody held). Returns 0 or the step that failed.
 */
static int setup_failed_create_leaves_no_name(const char *name, int backend,
					      int pool)
{
	struct baton_ring *r;
	struct baton_pool *p;
	int status, ret;
	pid_t pid = fork();

	if (pid < 0)
		return 1;
	if (!pid) {
		long kib = setup_vm_kib();
		struct rlimit rl;

		baton_set_print(NULL);
		rl.rlim_cur = (rlim_t)(kib + SETUP_HEADROOM_MIB * 1024) * 1024;
		rl.rlim_max = rl.rlim_cur;
		if (kib < 0 || setrlimit(RLIMIT_AS, &rl))
			_exit(2);
		/* ENOMEM: the address space, as meant; anything else is not. */
		_exit(setup_big_create(name, backend, pool) == -ENOMEM ? 0 : 3);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 4;
	if (WEXITSTATUS(status))
		return WEXITSTATUS(status);
	if (pool)
		ret = baton_pool_open(name, &p);
	else
		ret = baton_ring_open(name, BATON_ROLE_CONSUMER, backend, &r);
	if (ret != -ENOENT)
		return 5;
	if (setup_big_create(name, backend, pool))
		return 6;
	if (pool)
		baton_pool_unlink(name);
	else
		baton_ring_unlink(name, backend);
	return 0;
}

#endif /* BATON_SETUP_ERRORS_H */

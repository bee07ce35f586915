// SPDX-License-Identifier: MIT
/*
 * Why a setup call failed, on the memfd backend: every create, open and
 * register mistake of selftests/setup_errors.h returns its errno and
 * prints one message naming the field, its value and the rule, distinct
 * from every other; the default printer writes warnings to stderr and
 * obeys $BATON_LOG; baton_set_print(NULL) silences; baton_strerror()
 * gives the baton meaning of each errno the library returns.
 */
#include "kselftest_harness.h"
#include "common.h"
#include "../setup_errors.h"

static void report(const char *what, size_t i, int got, const char *msg)
{
	fprintf(stderr, "# case %zu (%s): %s; returned %d, message: %s%s",
		i, setup_cases[i].label, what, got, msg[0] ? msg : "(none)",
		msg[0] && strchr(msg, '\n') ? "" : "\n");
}

TEST(every_mistake_is_named)
{
	char tag[32];

	force_memfd();
	snprintf(tag, sizeof(tag), "t.%d.err", (int)getpid());
	EXPECT_EQ(0, check_setup_cases(tag, report));
}

/* setup_errors.h: the mapping fails, and no name stays behind. */
TEST(failed_ring_create_leaves_no_name)
{
	char name[64];

	force_memfd();
	ring_name(name, sizeof(name), "bigr");
	EXPECT_EQ(0, setup_failed_create_leaves_no_name(name,
							BATON_BACKEND_MEMFD, 0));
}

TEST(failed_pool_create_leaves_no_name)
{
	char name[64];

	force_memfd();
	ring_name(name, sizeof(name), "bigp");
	EXPECT_EQ(0, setup_failed_create_leaves_no_name(name,
							BATON_BACKEND_MEMFD, 1));
}

/* Run @fn in a child whose stderr is a pipe; return what it wrote. */
static void child_stderr(void (*fn)(void), char *out, size_t len)
{
	int pfd[2], status;
	ssize_t n, got = 0;
	pid_t pid;

	out[0] = 0;
	if (pipe(pfd))
		return;
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 2);
		close(pfd[0]);
		fn();
		_exit(0);
	}
	close(pfd[1]);
	while ((n = read(pfd[0], out + got, len - 1 - (size_t)got)) > 0)
		got += n;
	out[got] = 0;
	close(pfd[0]);
	waitpid(pid, &status, 0);
}

static void bad_slot_size(void)
{
	struct baton_ring_params p = setup_good;
	struct baton_ring *r;

	p.slot_size = 12;
	baton_ring_create("t.default.print", &p, BATON_ROLE_PRODUCER, &r);
}

static void missing_ring(void)
{
	struct baton_ring *r;

	baton_ring_open("t.no.such.ring", BATON_ROLE_CONSUMER,
			BATON_BACKEND_AUTO, &r);
}

TEST(default_printer_writes_warnings_to_stderr)
{
	char out[1024];

	force_memfd();
	unsetenv("BATON_LOG");
	child_stderr(bad_slot_size, out, sizeof(out));
	EXPECT_STREQ("libbaton: baton_ring_create(\"t.default.print\"): slot_size 12: must be a multiple of 8 from 8 to 65536\n",
		     out);
	/* ENOENT is an answer, not a warning: DEBUG, not printed. */
	child_stderr(missing_ring, out, sizeof(out));
	EXPECT_STREQ("", out);

	setenv("BATON_LOG", "debug", 1);
	child_stderr(missing_ring, out, sizeof(out));
	EXPECT_NE(NULL, strstr(out, "no ring or domain of that name"));
	EXPECT_NE(NULL, strstr(out, "(ENOENT)"));

	setenv("BATON_LOG", "none", 1);
	child_stderr(bad_slot_size, out, sizeof(out));
	EXPECT_STREQ("", out);
	unsetenv("BATON_LOG");
}

static void silenced(void)
{
	baton_set_print(NULL);
	bad_slot_size();
}

TEST(set_print_null_silences_and_returns_previous)
{
	char out[256];
	baton_print_fn old;

	force_memfd();
	unsetenv("BATON_LOG");
	child_stderr(silenced, out, sizeof(out));
	EXPECT_STREQ("", out);
	old = baton_set_print(setup_capture);
	EXPECT_TRUE(old != NULL);
	EXPECT_TRUE(baton_set_print(old) == setup_capture);
}

TEST(strerror_baton_meanings)
{
	static const struct { int err; const char *says; } m[] = {
		{ EPIPE, "peer has gone" },
		{ EPROTO, "shared pages are inconsistent" },
		{ ENOENT, "no ring or domain of that name" },
		{ EEXIST, "name is taken" },
		{ EBUSY, "role is taken" },
		{ ENODEV, "no /dev/baton" },
		{ EDQUOT, "per-user cap" },
		{ EINVAL, "baton_set_print()" },
		{ ETIMEDOUT, "timeout" },
		{ EPROTONOSUPPORT, "ABI version" },
	};
	size_t i;

	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		EXPECT_NE(NULL, strstr(baton_strerror(-m[i].err), m[i].says))
			TH_LOG("errno %d: %s", m[i].err,
			       baton_strerror(-m[i].err));
		EXPECT_STREQ(baton_strerror(-m[i].err),
			     baton_strerror(m[i].err));
	}
	/* Anything else is strerror()'s. */
	EXPECT_STREQ(strerror(ENOTDIR), baton_strerror(-ENOTDIR));
}

TEST_HARNESS_MAIN

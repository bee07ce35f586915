// SPDX-License-Identifier: MIT
/*
 * Why a setup call failed, on the memfd backend: every create, open and
 * register mistake of selftests/setup_errors.h returns its errno and
 * prints one message naming the field, its value and the rule, distinct
 * from every other; the default printer writes warnings to stderr and
 * obeys $BATON_LOG; baton_set_print(NULL) silences; baton_strerror()
 * gives the baton meaning of each errno the library returns; and a
 * missing membarrier(2) is a missing memfd backend (-ENODEV).
 */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

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

/*
 * No membarrier(2) (a kernel without it, or a sandbox's seccomp filter
 * that refuses it, as some container runtimes' did): the memfd backend
 * cannot work, and says so as a missing backend, -ENODEV with a warning
 * naming membarrier, for rings and epoch domains alike; it returned the
 * raw errno of the registration (ENOSYS, EPERM), which no <baton.h>
 * comment lists. The filter refuses membarrier with @err in a child.
 */
static int without_membarrier(int err, int epoch, char *msg, size_t len)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_membarrier, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (uint32_t)err),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = 4, .filter = insns };
	struct baton_ring_params p = setup_good;
	struct baton_epoch_params ep = setup_good_epoch;
	struct baton_epoch *d;
	struct baton_ring *r;
	int pfd[2], status, ret;
	char name[64];
	ssize_t n;
	pid_t pid;

	if (pipe(pfd))
		return 1000;
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 2);
		close(pfd[0]);
		setenv("BATON_LOG", "warn", 1);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
			_exit(101);
		ring_name(name, sizeof(name), "nomb");
		if (epoch)
			ret = baton_epoch_create(name, &ep, &d);
		else
			ret = baton_ring_create(name, &p, BATON_ROLE_CONSUMER,
						&r);
		_exit(ret < 0 && ret > -100 ? -ret : 100);
	}
	close(pfd[1]);
	n = read(pfd[0], msg, len - 1);
	msg[n > 0 ? n : 0] = 0;
	close(pfd[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 1001;
	return -WEXITSTATUS(status);
}

TEST(no_membarrier_is_a_missing_backend)
{
	const int errs[] = { ENOSYS, EPERM, EINVAL };
	char msg[512];
	size_t i;

	force_memfd();
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(-ENODEV, without_membarrier(errs[i], 0, msg,
						      sizeof(msg)));
		EXPECT_NE(NULL, strstr(msg, "membarrier")) TH_LOG("%s", msg);
		EXPECT_EQ(-ENODEV, without_membarrier(errs[i], 1, msg,
						      sizeof(msg)));
		EXPECT_NE(NULL, strstr(msg, "membarrier")) TH_LOG("%s", msg);
	}
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

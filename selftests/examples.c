// SPDX-License-Identifier: GPL-2.0
/*
 * examples.c: the programs of Documentation/examples/ on the
 * kernel backend. selftests/Makefile builds them against a staged install
 * with pkg-config (static) into helpers/examples/; each runs here as its
 * own process tree with BATON_BACKEND=kmod (so a missing module is an
 * error, not a fallback to memfd) and must exit 0. make pkg-check runs the
 * same programs but pool_frames on memfd (pools need the module).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

/* Run helpers/examples/NAME with BATON_BACKEND=kmod: its exit status. */
static int run_example(struct __test_metadata *_metadata, const char *name)
{
	char path[256];
	int status;
	pid_t pid;

	/* cwd /selftests in the selftests job; /tmp under run-vm.sh exec. */
	snprintf(path, sizeof(path), "helpers/examples/%s", name);
	if (access(path, X_OK))
		snprintf(path, sizeof(path), "/selftests/helpers/examples/%s", name);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		setenv("BATON_BACKEND", "kmod", 1);
		execl(path, name, (char *)NULL);
		fprintf(stderr, "examples: exec %s: %s\n", path, strerror(errno));
		_exit(127);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (!WIFEXITED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

TEST(spsc_pipeline)
{
	EXPECT_EQ(0, run_example(_metadata, "spsc_pipeline"));
}

TEST(mpsc_fanin)
{
	EXPECT_EQ(0, run_example(_metadata, "mpsc_fanin"));
}

TEST(epoch_config)
{
	EXPECT_EQ(0, run_example(_metadata, "epoch_config"));
}

/* On the module here; on memfd, selftests/pkg/check-install.sh runs it. */
TEST(pool_frames)
{
	EXPECT_EQ(0, run_example(_metadata, "pool_frames"));
}

TEST_HARNESS_MAIN

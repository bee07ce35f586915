// SPDX-License-Identifier: MIT
/*
 * Pools without the module: the host has no /dev/baton, and pools have
 * no memfd backend yet (Documentation/pool.rst), so every call that needs
 * the module says -EOPNOTSUPP at once, and the calls on a pool handle
 * reject a NULL one with -EINVAL rather than crash. The pool itself is
 * tested in the VM (selftests/pool.c).
 */
#include "kselftest_harness.h"
#include "common.h"

#include <unistd.h>

TEST(without_dev_baton_every_call_says_eopnotsupp)
{
	struct baton_pool_params p = {
		.nr_classes = 1,
		.classes = { { .buf_shift = 12, .count = 4 } },
	};
	struct baton_pool *pool = NULL;

	if (!access(BATON_DEVICE, F_OK))
		SKIP(return, "%s exists: the VM tests cover this host", BATON_DEVICE);
	EXPECT_EQ(-EOPNOTSUPP, baton_pool_create("h-pool", &p, &pool));
	EXPECT_EQ(NULL, pool);
	EXPECT_EQ(-EOPNOTSUPP, baton_pool_open("h-pool", &pool));
	EXPECT_EQ(-EOPNOTSUPP, baton_pool_unlink("h-pool"));
	/* Argument checks come before the device is looked for. */
	EXPECT_EQ(-EINVAL, baton_pool_create("", &p, &pool));
	EXPECT_EQ(-EINVAL, baton_pool_create("h-pool", NULL, &pool));
	EXPECT_EQ(-EINVAL, baton_pool_open("h-pool", NULL));
}

TEST(null_handles_are_einval)
{
	uint64_t h = 0;
	struct baton_pool_info info;

	EXPECT_EQ(-EINVAL, baton_pool_alloc(NULL, 64, &h));
	EXPECT_EQ(-EINVAL, baton_pool_free(NULL, BATON_POOL_HANDLE(0, 0, 1)));
	EXPECT_EQ(-EINVAL, baton_pool_give(NULL, BATON_POOL_HANDLE(0, 0, 1)));
	EXPECT_EQ(-EINVAL, baton_pool_take(NULL, BATON_POOL_HANDLE(0, 0, 1)));
	EXPECT_EQ(-EINVAL, baton_pool_info(NULL, &info));
	EXPECT_EQ(-EINVAL, baton_pool_check(NULL, BATON_POOL_HANDLE(0, 0, 1)));
	EXPECT_EQ(NULL, baton_pool_ptr(NULL, BATON_POOL_HANDLE(0, 0, 1)));
	EXPECT_EQ((size_t)0, baton_pool_buf_size(NULL, BATON_POOL_HANDLE(0, 0, 1)));
	baton_pool_close(NULL);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0
/*
 * setup_errors: on the kmod backend, every create/open/register mistake
 * of setup_errors.h returns its errno and one message naming the field
 * and the rule, as on memfd (selftests/host/setup_errors.c). The library
 * checks every rule the module enforces before the ioctl, so no message
 * may be the "refused by the backend" one that an EINVAL the library did
 * not foresee would print.
 */
#include "common.h"
#include "setup_errors.h"

static void report(const char *what, size_t i, int got, const char *msg)
{
	fprintf(stderr, "# case %zu (%s): %s; returned %d, message: %s%s",
		i, setup_cases[i].label, what, got, msg[0] ? msg : "(none)",
		msg[0] && strchr(msg, '\n') ? "" : "\n");
}

TEST(every_mistake_is_named_on_kmod)
{
	char tag[32];
	size_t i;

	BT_REQUIRE_DEV();
	setenv("BATON_BACKEND", "kmod", 1);
	snprintf(tag, sizeof(tag), "st.err.%d", (int)getpid());
	EXPECT_EQ(0, check_setup_cases(tag, report));
	for (i = 0; i < SETUP_CASES; i++)
		EXPECT_EQ(NULL, strstr(setup_log[i], "refused by the backend"))
			TH_LOG("%s", setup_log[i]);
}

/* setup_errors.h: the mapping fails, and no name stays behind. */
TEST(failed_ring_create_leaves_no_name_on_kmod)
{
	char name[64];

	BT_REQUIRE_DEV();
	bt_make_name(name, sizeof(name), "bigr");
	EXPECT_EQ(0, setup_failed_create_leaves_no_name(name,
							BATON_BACKEND_KMOD, 0));
}

TEST(failed_pool_create_leaves_no_name_on_kmod)
{
	char name[64];

	BT_REQUIRE_DEV();
	setenv("BATON_BACKEND", "kmod", 1);
	bt_make_name(name, sizeof(name), "bigp");
	EXPECT_EQ(0, setup_failed_create_leaves_no_name(name,
							BATON_BACKEND_KMOD, 1));
}

TEST_HARNESS_MAIN

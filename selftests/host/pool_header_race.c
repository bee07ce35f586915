// SPDX-License-Identifier: MIT
/*
 * A memfd pool's header rewritten by another holder while a new holder
 * opens the pool. The opener reads the header twice: once with pread(2)
 * to pick a holder index, once from its mapping to compute every pointer.
 * Any holder can write the header page, so the second copy must pass the
 * same checks as the first (the layout its classes give, a file that
 * long), or the open fails with -EPROTO. Before, the second copy got
 * only the geometry's own checks, and a class whose control offset wraps
 * past 2^64 passed them: the opener's queue pointers landed before its
 * control mapping, and its first allocation wrote there.
 *
 * The window is between two system calls, so the binary is linked with
 * -Wl,--wrap=pread and the wrapper rewrites the header right after the
 * library's read of it.
 */
#include <stddef.h>

#include "kselftest_harness.h"
#include "common.h"

static int scribble_fd = -1;	/* armed: the next header pread scribbles */

ssize_t __real_pread(int fd, void *buf, size_t n, off_t off);

/* Class 0's control block at 2^64 - 4096: ctl_off + its size wraps. */
static void scribble_header(int fd)
{
	uint64_t off = offsetof(struct baton_pool_hdr, classes) +
		       offsetof(struct baton_pool_class_layout, ctl_off);
	uint64_t bad = 0ULL - 4096;

	if (pwrite(fd, &bad, sizeof(bad), (off_t)off) != sizeof(bad))
		abort();
}

ssize_t __wrap_pread(int fd, void *buf, size_t n, off_t off)
{
	ssize_t ret = __real_pread(fd, buf, n, off);

	if (scribble_fd >= 0 && off == 0 &&
	    n == sizeof(struct baton_pool_hdr)) {
		scribble_header(scribble_fd);
		scribble_fd = -1;
	}
	return ret;
}

TEST(header_rewritten_between_the_openers_reads)
{
	struct baton_pool_params prm = {
		.nr_classes = 1, .max_holders = 4, .mode = 0600,
		.classes = { { .buf_shift = 12, .count = 128 } },
	};
	char name[BATON_NAME_MAX], path[128];
	struct baton_pool *owner, *late = NULL;
	uint64_t h;
	int fd, ret;

	force_memfd();
	ring_name(name, sizeof(name), "phr");
	ASSERT_EQ(0, baton_pool_create(name, &prm, &owner));
	snprintf(path, sizeof(path), "/dev/shm/baton-pool.%s", name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	scribble_fd = fd;
	ret = baton_pool_open(name, &late);
	EXPECT_EQ(-1, scribble_fd);	/* the window was reached */
	EXPECT_EQ(-EPROTO, ret);
	if (!ret) {
		/* Before the fix: this wrote outside the control mapping. */
		EXPECT_EQ(0, baton_pool_alloc(late, 4096, &h));
		baton_pool_close(late);
	}
	close(fd);
	baton_pool_close(owner);
	baton_pool_unlink(name);
}

TEST_HARNESS_MAIN

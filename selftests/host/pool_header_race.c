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
static size_t scribble_at;	/* where in the header, and what */
static uint64_t scribble_value;

ssize_t __real_pread(int fd, void *buf, size_t n, off_t off);

ssize_t __wrap_pread(int fd, void *buf, size_t n, off_t off)
{
	ssize_t ret = __real_pread(fd, buf, n, off);

	if (scribble_fd >= 0 && off == 0 &&
	    n == sizeof(struct baton_pool_hdr)) {
		if (pwrite(scribble_fd, &scribble_value, sizeof(scribble_value),
			   (off_t)scribble_at) != sizeof(scribble_value))
			abort();
		scribble_fd = -1;
	}
	return ret;
}

/* Open pool @name with class 0's layout word @field rewritten to @v. */
static int open_during_scribble(struct __test_metadata *_metadata,
				const char *name, size_t field, uint64_t v)
{
	struct baton_pool *late = NULL;
	char path[128];
	uint64_t h, was;
	int fd, ret;

	snprintf(path, sizeof(path), "/dev/shm/baton-pool.%s", name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	scribble_at = offsetof(struct baton_pool_hdr, classes) + field;
	scribble_value = v;
	if (__real_pread(fd, &was, sizeof(was), (off_t)scribble_at) !=
	    sizeof(was)) {
		close(fd);
		return -EIO;
	}
	scribble_fd = fd;
	ret = baton_pool_open(name, &late);
	EXPECT_EQ(-1, scribble_fd);	/* the window was reached */
	/* Put it back before anyone else looks (the owner never re-reads). */
	EXPECT_EQ((ssize_t)sizeof(was),
		  pwrite(fd, &was, sizeof(was), (off_t)scribble_at));
	if (!ret) {
		/* Before the fix: out of its mapping, or onto another's. */
		EXPECT_EQ(0, baton_pool_alloc(late, 4096, &h));
		baton_pool_close(late);
	}
	close(fd);
	return ret;
}

TEST(header_rewritten_between_the_openers_reads)
{
	struct baton_pool_params prm = {
		.nr_classes = 2, .max_holders = 4, .mode = 0600,
		.classes = { { .buf_shift = 12, .count = 128 },
			     { .buf_shift = 16, .count = 8 } },
	};
	char name[BATON_NAME_MAX];
	struct baton_pool *owner;

	force_memfd();
	ring_name(name, sizeof(name), "phr");
	ASSERT_EQ(0, baton_pool_create(name, &prm, &owner));
	/* Class 0's control block at 2^64 - 4096: its end wraps. */
	EXPECT_EQ(-EPROTO, open_during_scribble(
		_metadata, name,
		offsetof(struct baton_pool_class_layout, ctl_off),
		0ULL - 4096));
	/*
	 * Class 0's buffers one page on, inside the data region: a valid
	 * geometry, but not the layout the classes give, and every index
	 * would name the next buffer of the other holders.
	 */
	EXPECT_EQ(-EPROTO, open_during_scribble(
		_metadata, name,
		offsetof(struct baton_pool_class_layout, data_off), 4096));
	baton_pool_close(owner);
	baton_pool_unlink(name);
}

TEST_HARNESS_MAIN

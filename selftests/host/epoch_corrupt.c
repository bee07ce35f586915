// SPDX-License-Identifier: MIT
/*
 * What the library does with an epoch domain file it cannot trust. On
 * the memfd backend any opener can rewrite the header, the layout
 * included, and so can one that died half-way through writing it. An
 * opener must refuse a layout that does not describe the file it sits in
 * (-EPROTO) before it maps or touches anything: offsets whose end wraps
 * (32 or 64 bits), a participant table over the header or past the end
 * of the file, participants at offsets that would make their 8-byte
 * atomics misaligned. Each case opens, registers, enters, exits and
 * collects in a child, so a layout that gets through shows as a signal
 * rather than ending the harness.
 */
#include "kselftest_harness.h"
#include "common.h"

#include <sys/wait.h>

FIXTURE(epoch_corrupt) {
	char name[BATON_NAME_MAX];
	char path[128];
	struct baton_epoch_hdr hdr;
	long page;
	int fd;
};

FIXTURE_SETUP(epoch_corrupt)
{
	struct baton_epoch_params p = {
		.max_participants = 2, .queue_len = 16, .mode = 0600,
		.backend = BATON_BACKEND_MEMFD,
	};
	struct baton_epoch *d;

	self->page = sysconf(_SC_PAGESIZE);
	ring_name(self->name, sizeof(self->name), "epcorrupt");
	snprintf(self->path, sizeof(self->path), "/dev/shm/baton-epoch.%s",
		 self->name);
	ASSERT_EQ(0, baton_epoch_create(self->name, &p, &d));
	baton_epoch_close(d);
	self->fd = open(self->path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ((ssize_t)sizeof(self->hdr),
		  pread(self->fd, &self->hdr, sizeof(self->hdr), 0));
}

FIXTURE_TEARDOWN(epoch_corrupt)
{
	close(self->fd);
	baton_epoch_unlink(self->name, BATON_BACKEND_MEMFD);
}

static int write_hdr(int fd, const struct baton_epoch_hdr *h)
{
	return pwrite(fd, h, sizeof(*h), 0) == (ssize_t)sizeof(*h) ? 0 : -1;
}

/* What a child's use of the domain ended with. */
#define USED_FULLY	0	/* opened, registered, entered, collected */
#define CRASHED		-10000	/* a signal, or ASan's exit status 1 */
#define OPEN_FAILED	100	/* child's status: this + open's errno */

/*
 * Open the domain in a child and, if that works, use it as a reader and
 * a collector would. Return: open's errno (negative), USED_FULLY, or
 * CRASHED.
 */
static int use_in_child(const char *name)
{
	struct baton_epoch *d;
	pid_t pid = fork();
	int st, ret;

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		ret = baton_epoch_open(name, BATON_BACKEND_MEMFD, &d);
		if (ret)
			_exit(OPEN_FAILED - ret);
		if (baton_epoch_register(d) >= 0) {
			baton_epoch_enter(d);
			baton_epoch_exit(d);
		}
		baton_epoch_collect(d, NULL, NULL);
		baton_epoch_close(d);
		_exit(USED_FULLY);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -errno;
	if (WIFEXITED(st) && WEXITSTATUS(st) == USED_FULLY)
		return USED_FULLY;
	if (WIFEXITED(st) && WEXITSTATUS(st) > OPEN_FAILED)
		return OPEN_FAILED - WEXITSTATUS(st);
	return CRASHED;
}

/* The layout the library writes, and that it can use. */
TEST_F(epoch_corrupt, layout_as_created)
{
	const struct baton_epoch_offsets *o = &self->hdr.off;

	EXPECT_EQ(BATON_EPOCH_MAGIC, self->hdr.magic);
	EXPECT_EQ(0U, o->hdr_mmap);
	EXPECT_EQ((uint64_t)self->page, o->table_mmap);
	EXPECT_EQ(0U, o->part_stride % self->page);
	EXPECT_EQ(2ULL * o->part_stride, o->table_size);
	EXPECT_EQ(USED_FULLY, use_in_child(self->name));
}

/* ann + 8 computed in 32 bits wraps to 0 and passed "ann + 8 <= q_entries". */
TEST_F(epoch_corrupt, announcement_offset_wraps_32_bits)
{
	self->hdr.off.ann = 0xfffffff8U;
	ASSERT_EQ(0, write_hdr(self->fd, &self->hdr));
	EXPECT_EQ(-EPROTO, use_in_child(self->name));
}

TEST_F(epoch_corrupt, queue_tail_offset_wraps_32_bits)
{
	self->hdr.off.q_tail = 0xfffffff8U;
	ASSERT_EQ(0, write_hdr(self->fd, &self->hdr));
	EXPECT_EQ(-EPROTO, use_in_child(self->name));
}

TEST_F(epoch_corrupt, queue_head_offset_wraps_32_bits)
{
	self->hdr.off.q_head = 0xfffffff8U;
	ASSERT_EQ(0, write_hdr(self->fd, &self->hdr));
	EXPECT_EQ(-EPROTO, use_in_child(self->name));
}

/* table_mmap + table_size wraps past 2^64 to one page: "fits the file". */
TEST_F(epoch_corrupt, table_end_wraps_64_bits)
{
	self->hdr.off.table_mmap = (uint64_t)self->page -
				   self->hdr.off.table_size;
	ASSERT_EQ(0, write_hdr(self->fd, &self->hdr));
	EXPECT_EQ(-EPROTO, use_in_child(self->name));
}

TEST_F(epoch_corrupt, table_past_the_end_of_the_file)
{
	self->hdr.off.table_mmap += (uint64_t)self->page;
	ASSERT_EQ(0, write_hdr(self->fd, &self->hdr));
	EXPECT_EQ(-EPROTO, use_in_child(self->name));
}

/* Participant 0 over the header: its queue words would be the header's. */
TEST_F(epoch_corrupt, table_over_the_header)
{
	self->hdr.off.table_mmap = 0;
	ASSERT_EQ(0, write_hdr(self->fd, &self->hdr));
	EXPECT_EQ(-EPROTO, use_in_child(self->name));
}

TEST_F(epoch_corrupt, table_not_at_a_page)
{
	self->hdr.off.table_mmap = (uint64_t)self->page - 8;
	ASSERT_EQ(0, write_hdr(self->fd, &self->hdr));
	EXPECT_EQ(-EPROTO, use_in_child(self->name));
}

/*
 * A stride of 4 bytes more: participant 1's 8-byte atomics misaligned
 * (undefined behaviour; a fault on CPUs that trap on it). The table size
 * is made to match, and the file grows so that it still fits.
 */
TEST_F(epoch_corrupt, participant_stride_not_at_a_page)
{
	struct baton_epoch_offsets *o = &self->hdr.off;

	o->part_stride += 4;
	o->table_size = 2ULL * o->part_stride;
	ASSERT_EQ(0, ftruncate(self->fd, (off_t)(o->table_mmap +
						 o->table_size)));
	ASSERT_EQ(0, write_hdr(self->fd, &self->hdr));
	EXPECT_EQ(-EPROTO, use_in_child(self->name));
}

TEST_HARNESS_MAIN

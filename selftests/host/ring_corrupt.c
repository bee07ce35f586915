// SPDX-License-Identifier: MIT
/*
 * What the library does with a ring file it cannot trust. On the memfd
 * backend any process with write access can rewrite the header or the
 * indices; an opener must validate the header (magic, version, geometry,
 * offsets against the file size) before mapping anything (-EPROTO), and
 * the fast path and park must not believe an index that claims more than
 * the ring holds (clamp to 0 slots; park returns -EPROTO).
 */
#include "kselftest_harness.h"
#include "common.h"

FIXTURE(corrupt) {
	char name[BATON_NAME_MAX];
	char path[128];
	struct baton_ring_hdr hdr;
	int fd;
};

FIXTURE_SETUP(corrupt)
{
	struct baton_ring_params p = {
		.kind = BATON_RING_SPSC, .slot_count = 16, .slot_size = 64,
		.mode = 0600, .backend = BATON_BACKEND_AUTO,
	};
	struct baton_ring *r;

	force_memfd();
	ring_name(self->name, sizeof(self->name), "corrupt");
	shm_path_of(self->path, sizeof(self->path), self->name);
	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_PRODUCER,
				       &r));
	baton_ring_close(r);
	self->fd = open(self->path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ((ssize_t)sizeof(self->hdr),
		  pread(self->fd, &self->hdr, sizeof(self->hdr), 0));
}

FIXTURE_TEARDOWN(corrupt)
{
	close(self->fd);
	baton_ring_unlink(self->name, BATON_BACKEND_AUTO);
}

static int write_hdr(int fd, const struct baton_ring_hdr *h)
{
	return pwrite(fd, h, sizeof(*h), 0) == (ssize_t)sizeof(*h) ? 0 : -1;
}

static int open_both(const char *name)
{
	struct baton_ring *r;
	int a, b;

	a = baton_ring_open(name, BATON_ROLE_PRODUCER, BATON_BACKEND_AUTO, &r);
	if (!a)
		baton_ring_close(r);
	b = baton_ring_open(name, BATON_ROLE_CONSUMER, BATON_BACKEND_AUTO, &r);
	if (!b)
		baton_ring_close(r);
	return a == b ? a : -9999;
}

/* The header the library writes: the kernel's layout, page by page. */
TEST_F(corrupt, header_as_created)
{
	long page = sysconf(_SC_PAGESIZE);
	struct stat st;

	EXPECT_EQ(BATON_RING_MAGIC, self->hdr.magic);
	EXPECT_EQ((uint32_t)BATON_ABI_VERSION, self->hdr.abi_version);
	EXPECT_EQ((uint32_t)BATON_RING_SPSC, self->hdr.kind);
	EXPECT_EQ(16U, self->hdr.slot_count);
	EXPECT_EQ(64U, self->hdr.slot_size);
	EXPECT_EQ(0U, self->hdr.state);
	EXPECT_EQ(0U, self->hdr.off.hdr_mmap);
	EXPECT_EQ((uint64_t)page, self->hdr.off.prod_mmap);
	EXPECT_EQ((uint64_t)page * 2, self->hdr.off.cons_mmap);
	EXPECT_EQ((uint64_t)page * 3, self->hdr.off.slots_mmap);
	EXPECT_EQ((uint64_t)page, self->hdr.off.slots_size);
	EXPECT_EQ(0U, self->hdr.off.prod_tail);
	EXPECT_EQ(64U, self->hdr.off.prod_waiting);
	EXPECT_EQ(0U, self->hdr.off.cons_head);
	EXPECT_EQ(64U, self->hdr.off.cons_waiting);
	ASSERT_EQ(0, fstat(self->fd, &st));
	EXPECT_EQ(page * 4, (long)st.st_size);
	EXPECT_EQ(0, open_both(self->name));
}

TEST_F(corrupt, bad_magic)
{
	self->hdr.magic ^= 1;
	ASSERT_EQ(0, write_hdr(self->fd, &self->hdr));
	EXPECT_EQ(-EPROTO, open_both(self->name));
}

TEST_F(corrupt, bad_abi_version)
{
	self->hdr.abi_version = BATON_ABI_VERSION + 1;
	ASSERT_EQ(0, write_hdr(self->fd, &self->hdr));
	EXPECT_EQ(-EPROTO, open_both(self->name));
}

TEST_F(corrupt, bad_geometry)
{
	struct baton_ring_hdr h = self->hdr;

	h.slot_count = 17;
	ASSERT_EQ(0, write_hdr(self->fd, &h));
	EXPECT_EQ(-EPROTO, open_both(self->name));
	h = self->hdr;
	h.slot_size = 60;
	ASSERT_EQ(0, write_hdr(self->fd, &h));
	EXPECT_EQ(-EPROTO, open_both(self->name));
	h = self->hdr;
	h.kind = 7;
	ASSERT_EQ(0, write_hdr(self->fd, &h));
	EXPECT_EQ(-EPROTO, open_both(self->name));
	/* More slots than the slot region holds. */
	h = self->hdr;
	h.slot_count = 1024;
	ASSERT_EQ(0, write_hdr(self->fd, &h));
	EXPECT_EQ(-EPROTO, open_both(self->name));
}

TEST_F(corrupt, bad_offsets)
{
	long page = sysconf(_SC_PAGESIZE);
	struct baton_ring_hdr h;

	/* beyond the end of the file */
	h = self->hdr;
	h.off.slots_size = (uint64_t)page * 64;
	ASSERT_EQ(0, write_hdr(self->fd, &h));
	EXPECT_EQ(-EPROTO, open_both(self->name));
	/* overlapping the header */
	h = self->hdr;
	h.off.prod_mmap = 0;
	ASSERT_EQ(0, write_hdr(self->fd, &h));
	EXPECT_EQ(-EPROTO, open_both(self->name));
	/* not page aligned */
	h = self->hdr;
	h.off.cons_mmap += 8;
	ASSERT_EQ(0, write_hdr(self->fd, &h));
	EXPECT_EQ(-EPROTO, open_both(self->name));
	/* empty region */
	h = self->hdr;
	h.off.cons_size = 0;
	ASSERT_EQ(0, write_hdr(self->fd, &h));
	EXPECT_EQ(-EPROTO, open_both(self->name));
	/* index misaligned, outside its page, or on top of the flag */
	h = self->hdr;
	h.off.prod_tail = 4;
	ASSERT_EQ(0, write_hdr(self->fd, &h));
	EXPECT_EQ(-EPROTO, open_both(self->name));
	h = self->hdr;
	h.off.cons_head = (uint32_t)page;
	ASSERT_EQ(0, write_hdr(self->fd, &h));
	EXPECT_EQ(-EPROTO, open_both(self->name));
	h = self->hdr;
	h.off.cons_waiting = h.off.cons_head + 4;
	ASSERT_EQ(0, write_hdr(self->fd, &h));
	EXPECT_EQ(-EPROTO, open_both(self->name));
	h = self->hdr;
	h.off.prod_waiting = 2;
	ASSERT_EQ(0, write_hdr(self->fd, &h));
	EXPECT_EQ(-EPROTO, open_both(self->name));
	/* a wrapping start + len */
	h = self->hdr;
	h.off.slots_mmap = ~0ULL - (uint64_t)page + 1;
	ASSERT_EQ(0, write_hdr(self->fd, &h));
	EXPECT_EQ(-EPROTO, open_both(self->name));

	/* and the original still opens */
	ASSERT_EQ(0, write_hdr(self->fd, &self->hdr));
	EXPECT_EQ(0, open_both(self->name));
}

/*
 * Regions larger than the geometry needs, in a file grown (sparse) to
 * hold them: every opener maps its regions with MAP_POPULATE, so had it
 * believed these sizes it would have allocated them all in tmpfs, charged
 * to its own memory cgroup. The layout must be the one the geometry
 * gives, exactly, and the file must stay as sparse as it was.
 */
static void oversized(struct __test_metadata *_metadata, int fd,
		      const char *name, const struct baton_ring_hdr *h,
		      uint64_t file_size)
{
	struct stat st;

	ASSERT_EQ(0, write_hdr(fd, h));
	ASSERT_EQ(0, ftruncate(fd, (off_t)file_size));
	EXPECT_EQ(-EPROTO, open_both(name));
	ASSERT_EQ(0, fstat(fd, &st));
	EXPECT_GT(1LL << 20, (long long)st.st_blocks * 512);
}

TEST_F(corrupt, oversized_regions_are_refused_unpopulated)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t big = 64ULL << 20;
	struct baton_ring_hdr h;
	struct stat st;

	ASSERT_EQ(0, fstat(self->fd, &st));
	h = self->hdr;
	h.off.slots_size = big;
	oversized(_metadata, self->fd, self->name, &h, h.off.slots_mmap + big);
	/* A control region grown, the slots moved past it. */
	h = self->hdr;
	h.off.cons_size = (uint32_t)(big - (uint64_t)page);
	h.off.slots_mmap = h.off.cons_mmap + h.off.cons_size;
	oversized(_metadata, self->fd, self->name, &h,
		  h.off.slots_mmap + h.off.slots_size);
	/* The header region past its page. */
	h = self->hdr;
	h.off.hdr_size = 2 * (uint32_t)page;
	h.off.prod_mmap += page;
	h.off.cons_mmap += page;
	h.off.slots_mmap += page;
	oversized(_metadata, self->fd, self->name, &h,
		  h.off.slots_mmap + h.off.slots_size);

	/* and the original still opens */
	ASSERT_EQ(0, write_hdr(self->fd, &self->hdr));
	ASSERT_EQ(0, ftruncate(self->fd, st.st_size));
	EXPECT_EQ(0, open_both(self->name));
}

TEST_F(corrupt, truncated_file)
{
	ASSERT_EQ(0, ftruncate(self->fd, sysconf(_SC_PAGESIZE)));
	EXPECT_EQ(-EPROTO, open_both(self->name));
	ASSERT_EQ(0, ftruncate(self->fd, 16));
	EXPECT_EQ(-EPROTO, open_both(self->name));
	ASSERT_EQ(0, ftruncate(self->fd, 0));
	EXPECT_EQ(-EPROTO, open_both(self->name));
}

/* Not a regular file, or a symlink planted at the name: refused. */
TEST_F(corrupt, not_a_ring_file)
{
	char target[160];

	snprintf(target, sizeof(target), "%s.real", self->path);
	ASSERT_EQ(0, link(self->path, target));
	ASSERT_EQ(0, unlink(self->path));
	ASSERT_EQ(0, mkdir(self->path, 0700));
	EXPECT_NE(0, open_both(self->name));
	ASSERT_EQ(0, rmdir(self->path));

	ASSERT_EQ(0, symlink(target, self->path));
	EXPECT_EQ(-ELOOP, open_both(self->name));
	unlink(target);
}

/* Indices that claim more than the ring holds are not believed. */
TEST_F(corrupt, scribbled_indices)
{
	struct baton_ring *prod, *cons;
	uint64_t idx, v = 7;

	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_AUTO, &prod));
	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_CONSUMER,
				     BATON_BACKEND_AUTO, &cons));

	/* A tail far beyond head: the consumer sees nothing, park refuses. */
	__atomic_store_n(prod->tail, 1000, __ATOMIC_RELEASE);
	EXPECT_EQ(0U, baton_spsc_cons_peek(cons, 1, &idx));
	EXPECT_EQ(-EPROTO, baton_ring_park(cons, 1000000));
	EXPECT_EQ(-EPROTO, baton_spsc_cons_peek_wait(cons, 1, &idx, 1000000));
	EXPECT_EQ(0U, *cons->cons_waiting);

	/* A head ahead of the tail: the producer sees no room, park refuses. */
	__atomic_store_n(prod->tail, 0, __ATOMIC_RELEASE);
	__atomic_store_n(cons->head, 5, __ATOMIC_RELEASE);
	prod->local = 0;
	prod->cached = 0;
	EXPECT_EQ(0U, baton_spsc_prod_reserve(prod, 1, &idx));
	EXPECT_EQ(-EPROTO, baton_spsc_push(prod, &v, sizeof(v), 1000000));
	EXPECT_EQ(0U, *prod->prod_waiting);

	baton_ring_close(prod);
	baton_ring_close(cons);

	/* A ring left inconsistent cannot be attached at all. */
	EXPECT_EQ(-EPROTO, open_both(self->name));
}

TEST_HARNESS_MAIN

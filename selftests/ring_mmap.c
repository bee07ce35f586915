// SPDX-License-Identifier: GPL-2.0
/*
 * ring_mmap: role-scoped mappings of a ring fd.
 *
 * Owns the mmap contract: one region per mmap() call at the offsets the
 * kernel reports, PROT_WRITE only on the regions the role owns (EACCES),
 * no mprotect() upgrade of a read-only mapping, a store to one kills the
 * process with SIGSEGV, offsets that are not a region start / lengths past
 * a region / MAP_PRIVATE are EINVAL, no growing (VM_DONTEXPAND), and pages
 * that stay valid after close() and unlink (the lifetime rule whose
 * violation was io_uring's CVE-2024-0582).
 *
 * The fixture is run once per role (FIXTURE_VARIANT).
 */
#include "common.h"

#define MM_SLOTS	16
#define MM_SLOT_SIZE	512	/* 8 KiB of slots: a region of two pages */

FIXTURE(ring_mmap) {
	int dev;
	int fd;		/* the role under test */
	int peer;	/* the other role */
	char name[BATON_NAME_MAX];
	struct baton_ring_offsets off;
	struct baton_ring_create c;
};

FIXTURE_VARIANT(ring_mmap) {
	uint32_t role;
};

FIXTURE_VARIANT_ADD(ring_mmap, producer) {
	.role = BATON_ROLE_PRODUCER,
};

FIXTURE_VARIANT_ADD(ring_mmap, consumer) {
	.role = BATON_ROLE_CONSUMER,
};

FIXTURE_SETUP(ring_mmap)
{
	int prod, cons;

	BT_REQUIRE_DEV();
	self->dev = bt_dev_open();
	ASSERT_LE(0, self->dev);
	bt_make_name(self->name, sizeof(self->name), "mm");
	prod = test_ring_create(self->dev, self->name, BATON_ROLE_PRODUCER,
				MM_SLOTS, MM_SLOT_SIZE, 0600, &self->c);
	cons = test_ring_open(self->dev, self->name, BATON_ROLE_CONSUMER,
			      NULL);
	self->off = self->c.out_off;
	if (variant->role == BATON_ROLE_PRODUCER) {
		self->fd = prod;
		self->peer = cons;
	} else {
		self->fd = cons;
		self->peer = prod;
	}
}

FIXTURE_TEARDOWN(ring_mmap)
{
	if (self->fd > 0)
		close(self->fd);
	if (self->peer > 0)
		close(self->peer);
	if (self->dev > 0) {
		_test_unlink(self->dev, self->name);
		close(self->dev);
	}
}

static bool no_overlap(const struct baton_ring_offsets *o)
{
	int i, j;

	for (i = 0; i < BT_NR_REGIONS; i++) {
		for (j = i + 1; j < BT_NR_REGIONS; j++) {
			uint64_t a = bt_region_off(o, i);
			uint64_t ae = a + bt_region_size(o, i);
			uint64_t b = bt_region_off(o, j);
			uint64_t be = b + bt_region_size(o, j);

			if (a < be && b < ae)
				return false;
		}
	}
	return true;
}

TEST_F(ring_mmap, offsets_are_consistent)
{
	const struct baton_ring_offsets *o = &self->off;
	struct baton_ring_open op;
	struct baton_ring_info info;
	const struct baton_ring_hdr *hdr;
	size_t pg = BT_PAGE;
	int i, fd;

	for (i = 0; i < BT_NR_REGIONS; i++) {
		EXPECT_EQ(0, bt_region_off(o, i) % pg)
			TH_LOG("%s offset", bt_region_name(i));
		EXPECT_EQ(0, bt_region_size(o, i) % pg)
			TH_LOG("%s size", bt_region_name(i));
		EXPECT_LT(0, bt_region_size(o, i))
			TH_LOG("%s size", bt_region_name(i));
	}
	EXPECT_TRUE(no_overlap(o));
	EXPECT_LE(sizeof(struct baton_ring_hdr), o->hdr_size);
	EXPECT_LE((uint64_t)MM_SLOTS * MM_SLOT_SIZE, o->slots_size);
	/* words: aligned, inside their page, tail and flag on own lines */
	EXPECT_EQ(0, o->prod_tail % 8);
	EXPECT_EQ(0, o->cons_head % 8);
	EXPECT_EQ(0, o->prod_waiting % 4);
	EXPECT_EQ(0, o->cons_waiting % 4);
	EXPECT_LE(o->prod_tail + 8, o->prod_size);
	EXPECT_LE(o->prod_waiting + 4, o->prod_size);
	EXPECT_LE(o->cons_head + 8, o->cons_size);
	EXPECT_LE(o->cons_waiting + 4, o->cons_size);
	EXPECT_LE(64, o->prod_waiting > o->prod_tail ?
		  o->prod_waiting - o->prod_tail :
		  o->prod_tail - o->prod_waiting);
	EXPECT_LE(64, o->cons_waiting > o->cons_head ?
		  o->cons_waiting - o->cons_head :
		  o->cons_head - o->cons_waiting);
	EXPECT_EQ(0, o->reserved0);
	/* the former reserved[4]: MPSC-only fields, all 0 on an SPSC ring */
	EXPECT_EQ(0, o->seq_mmap);
	EXPECT_EQ(0, o->claim_mmap);
	EXPECT_EQ(0, o->seq_size);
	EXPECT_EQ(0, o->claim_size);
	EXPECT_EQ(0, o->mpsc_hdr);
	EXPECT_EQ(0, o->reserved1);

	/* create, open, info and the header all tell the same layout */
	fd = -1;
	test_info(self->fd, &info);
	EXPECT_EQ(0, memcmp(o, &info.out_off, sizeof(*o)));
	EXPECT_EQ(variant->role, info.out_role);
	close(self->peer);
	self->peer = -1;
	fd = test_ring_open(self->dev, self->name,
			    variant->role == BATON_ROLE_PRODUCER ?
			    BATON_ROLE_CONSUMER : BATON_ROLE_PRODUCER, &op);
	EXPECT_EQ(0, memcmp(o, &op.out_off, sizeof(*o)));
	close(fd);
	hdr = bt_map(self->fd, o, BT_HDR, PROT_READ);
	ASSERT_NE(MAP_FAILED, hdr);
	EXPECT_EQ(0, memcmp(o, &hdr->off, sizeof(*o)));
	bt_unmap(o, BT_HDR, (void *)hdr);
}

TEST_F(ring_mmap, header_contents)
{
	const struct baton_ring_hdr *hdr;

	hdr = bt_map(self->fd, &self->off, BT_HDR, PROT_READ);
	ASSERT_NE(MAP_FAILED, hdr);
	EXPECT_EQ(BATON_RING_MAGIC, hdr->magic);
	EXPECT_EQ(BATON_ABI_VERSION, hdr->abi_version);
	EXPECT_EQ(BATON_RING_SPSC, hdr->kind);
	EXPECT_EQ(MM_SLOTS, hdr->slot_count);
	EXPECT_EQ(MM_SLOT_SIZE, hdr->slot_size);
	/* both roles attached, never released */
	EXPECT_EQ(0, hdr->state);
	EXPECT_EQ(0, hdr->parks_full);
	EXPECT_EQ(0, hdr->parks_empty);
	EXPECT_EQ(0, hdr->producer_deaths);
	EXPECT_EQ(0, hdr->consumer_deaths);
	bt_unmap(&self->off, BT_HDR, (void *)hdr);
}

TEST_F(ring_mmap, region_prot_by_role)
{
	int r;

	for (r = 0; r < BT_NR_REGIONS; r++) {
		bool w = bt_role_writes(variant->role, r);
		void *p;

		p = bt_map(self->fd, &self->off, r, PROT_READ);
		EXPECT_NE(MAP_FAILED, p) TH_LOG("read map of %s: %s",
						bt_region_name(r),
						strerror(errno));
		bt_unmap(&self->off, r, p);

		errno = 0;
		p = bt_map(self->fd, &self->off, r, PROT_READ | PROT_WRITE);
		if (w) {
			EXPECT_NE(MAP_FAILED, p)
				TH_LOG("rw map of own %s: %s",
				       bt_region_name(r), strerror(errno));
			if (p != MAP_FAILED) {
				/* and the page really is writable */
				((volatile uint8_t *)p)
					[bt_region_size(&self->off, r) - 1] = 0;
			}
		} else {
			EXPECT_EQ(MAP_FAILED, p)
				TH_LOG("rw map of foreign %s allowed",
				       bt_region_name(r));
			EXPECT_EQ(EACCES, errno);
		}
		bt_unmap(&self->off, r, p);

		if (!w) {
			errno = 0;
			p = bt_map(self->fd, &self->off, r, PROT_WRITE);
			EXPECT_EQ(MAP_FAILED, p);
			EXPECT_EQ(EACCES, errno);
			bt_unmap(&self->off, r, p);
		}
	}
}

TEST_F(ring_mmap, mprotect_cannot_upgrade)
{
	int r;

	for (r = 0; r < BT_NR_REGIONS; r++) {
		size_t len = bt_region_size(&self->off, r);
		void *p = bt_map(self->fd, &self->off, r, PROT_READ);
		int rc;

		ASSERT_NE(MAP_FAILED, p);
		errno = 0;
		rc = mprotect(p, len, PROT_READ | PROT_WRITE);
		if (bt_role_writes(variant->role, r)) {
			/* an owned region mapped read-only may be upgraded */
			EXPECT_EQ(0, rc) TH_LOG("own %s: %s",
						bt_region_name(r),
						strerror(errno));
		} else {
			EXPECT_EQ(-1, rc) TH_LOG("foreign %s upgraded",
						 bt_region_name(r));
			EXPECT_EQ(EACCES, errno);
			/* nor a part of it */
			EXPECT_EQ(-1, mprotect(p, BT_PAGE, PROT_WRITE));
		}
		munmap(p, len);
	}
}

TEST_F(ring_mmap, store_to_readonly_region_segfaults)
{
	int r;

	for (r = 0; r < BT_NR_REGIONS; r++) {
		volatile uint64_t *p;
		uint64_t before;
		pid_t pid;

		if (bt_role_writes(variant->role, r))
			continue;
		p = bt_map(self->fd, &self->off, r, PROT_READ);
		ASSERT_NE(MAP_FAILED, p);
		before = p[0];
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			struct rlimit rl = { 0, 0 };

			setrlimit(RLIMIT_CORE, &rl);
			p[0] = ~before;
			_exit(0);
		}
		EXPECT_EQ(128 + SIGSEGV, bt_wait_timeout(pid, 20000))
			TH_LOG("store to %s", bt_region_name(r));
		EXPECT_EQ(before, p[0]);
		bt_unmap(&self->off, r, (void *)p);
	}
}

/*
 * Not even a FOLL_FORCE write (/proc/self/mem, the ptrace path) may
 * store into a region the role maps read-only: a shared mapping without
 * VM_MAYWRITE has no private copy to write to.
 */
TEST_F(ring_mmap, proc_mem_cannot_write_readonly_region)
{
	int memfd, r;

	memfd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	if (memfd < 0)
		SKIP(return, "/proc/self/mem: %s", strerror(errno));
	for (r = 0; r < BT_NR_REGIONS; r++) {
		volatile uint64_t *p;
		uint64_t before, evil;
		ssize_t n;

		if (bt_role_writes(variant->role, r))
			continue;
		p = bt_map(self->fd, &self->off, r, PROT_READ);
		ASSERT_NE(MAP_FAILED, p);
		before = p[0];
		evil = ~before;
		n = pwrite(memfd, &evil, sizeof(evil), (off_t)(uintptr_t)p);
		EXPECT_EQ(-1, n) TH_LOG("forced write into %s went through",
					bt_region_name(r));
		EXPECT_EQ(before, p[0]);
		bt_unmap(&self->off, r, (void *)p);
	}
	close(memfd);
}

static bool is_region_start(const struct baton_ring_offsets *o, uint64_t x)
{
	int r;

	for (r = 0; r < BT_NR_REGIONS; r++)
		if (bt_region_off(o, r) == x)
			return true;
	return false;
}

TEST_F(ring_mmap, offset_not_region_start_einval)
{
	const struct baton_ring_offsets *o = &self->off;
	uint64_t end = 0, x;
	int r, tried = 0;
	void *p;

	for (r = 0; r < BT_NR_REGIONS; r++)
		if (bt_region_off(o, r) + bt_region_size(o, r) > end)
			end = bt_region_off(o, r) + bt_region_size(o, r);
	/* every page offset up to 4 pages past the end that starts none */
	for (x = 0; x < end + 4 * BT_PAGE; x += BT_PAGE) {
		if (is_region_start(o, x))
			continue;
		errno = 0;
		p = mmap(NULL, BT_PAGE, PROT_READ, MAP_SHARED, self->fd, x);
		EXPECT_EQ(MAP_FAILED, p) TH_LOG("offset 0x%llx mapped",
						(unsigned long long)x);
		EXPECT_EQ(EINVAL, errno);
		if (p != MAP_FAILED)
			munmap(p, BT_PAGE);
		tried++;
	}
	/* the 8 KiB slot region guarantees a page inside a region */
	EXPECT_LT(0, tried);
	errno = 0;
	p = mmap(NULL, BT_PAGE, PROT_READ, MAP_SHARED, self->fd,
		 (off_t)1 << 40);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(ring_mmap, length_past_region_einval)
{
	int r;

	for (r = 0; r < BT_NR_REGIONS; r++) {
		size_t len = bt_region_size(&self->off, r) + BT_PAGE;
		void *p;

		errno = 0;
		p = mmap(NULL, len, PROT_READ, MAP_SHARED, self->fd,
			 (off_t)bt_region_off(&self->off, r));
		EXPECT_EQ(MAP_FAILED, p) TH_LOG("%s + 1 page mapped",
						bt_region_name(r));
		EXPECT_EQ(EINVAL, errno);
		if (p != MAP_FAILED)
			munmap(p, len);
	}
}

TEST_F(ring_mmap, shorter_length_accepted)
{
	volatile uint8_t *p;

	/* the first page of the two-page slot region */
	p = mmap(NULL, BT_PAGE, PROT_READ, MAP_SHARED, self->fd,
		 (off_t)self->off.slots_mmap);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(0, p[0]);
	munmap((void *)p, BT_PAGE);
}

TEST_F(ring_mmap, map_private_einval)
{
	int r;

	for (r = 0; r < BT_NR_REGIONS; r++) {
		void *p;

		errno = 0;
		p = mmap(NULL, bt_region_size(&self->off, r), PROT_READ,
			 MAP_PRIVATE, self->fd,
			 (off_t)bt_region_off(&self->off, r));
		EXPECT_EQ(MAP_FAILED, p) TH_LOG("MAP_PRIVATE %s mapped",
						bt_region_name(r));
		EXPECT_EQ(EINVAL, errno);
		if (p != MAP_FAILED)
			munmap(p, bt_region_size(&self->off, r));
	}
}

TEST_F(ring_mmap, mremap_cannot_grow)
{
	size_t len = self->off.hdr_size;
	void *p, *q;

	p = bt_map(self->fd, &self->off, BT_HDR, PROT_READ);
	ASSERT_NE(MAP_FAILED, p);
	q = mremap(p, len, len + BT_PAGE, MREMAP_MAYMOVE);
	EXPECT_EQ(MAP_FAILED, q);
	if (q != MAP_FAILED)
		munmap(q, len + BT_PAGE);
	else
		munmap(p, len);
}

/*
 * The mapping pins the ring: close both fds, unlink the name, and the
 * pages written by one process are still what the other sees.
 */
/*
 * madvise(MADV_DONTNEED) accepts a slot mapping (VM_MIXEDMAP) and drops
 * its PTEs. The next touch must fault the ring's own page back in, with
 * what the producer wrote, not SIGBUS (there was no fault handler). In a
 * child, so that a SIGBUS is a result, not the end of the run.
 */
TEST_F(ring_mmap, slots_come_back_after_madvise_dontneed)
{
	int writer = variant->role == BATON_ROLE_PRODUCER ? self->fd :
							    self->peer;
	size_t len = bt_region_size(&self->off, BT_SLOTS);
	volatile uint8_t *w;
	pid_t pid;

	/* The debug kernel's config leaves madvise() out. */
	if (madvise(NULL, 0, MADV_DONTNEED) && errno == ENOSYS)
		SKIP(return, "madvise(2) is not built into this kernel");
	w = bt_map(writer, &self->off, BT_SLOTS, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, w);
	w[0] = 0x5a;
	w[len - 1] = 0xa5;
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int prot = bt_role_writes(variant->role, BT_SLOTS) ?
			   PROT_READ | PROT_WRITE : PROT_READ;
		volatile uint8_t *m = bt_map(self->fd, &self->off, BT_SLOTS,
					     prot);

		if (m == MAP_FAILED || m[0] != 0x5a)
			_exit(2);
		if (madvise((void *)m, len, MADV_DONTNEED))
			_exit(3);
		if (m[0] != 0x5a || m[len - 1] != 0xa5)
			_exit(4);
		if (prot & PROT_WRITE)
			m[1] = 0x3c;	/* the same page as the writer's */
		_exit(0);
	}
	EXPECT_EQ(0, bt_wait_timeout(pid, 20000));
	if (variant->role == BATON_ROLE_PRODUCER)
		EXPECT_EQ(0x3c, w[1]);
	bt_unmap(&self->off, BT_SLOTS, (void *)w);
}

TEST(pages_outlive_close_and_unlink)
{
	struct baton_ring_create c;
	struct baton_ring_offsets off;
	volatile uint64_t *pslots, *cslots, *ptail;
	const volatile uint64_t *ctail;
	const struct baton_ring_hdr *hdr;
	char name[BATON_NAME_MAX];
	size_t i, n;
	int dev, prod, cons;
	pid_t pid;

	BT_REQUIRE_DEV();
	dev = bt_dev_open();
	ASSERT_LE(0, dev);
	bt_make_name(name, sizeof(name), "mmlife");
	prod = test_ring_create(dev, name, BATON_ROLE_PRODUCER, 64, 256, 0600,
				&c);
	cons = test_ring_open(dev, name, BATON_ROLE_CONSUMER, NULL);
	off = c.out_off;
	pslots = bt_map(prod, &off, BT_SLOTS, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, pslots);
	ptail = bt_map(prod, &off, BT_PROD, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, ptail);
	cslots = bt_map(cons, &off, BT_SLOTS, PROT_READ);
	ASSERT_NE(MAP_FAILED, cslots);
	ctail = bt_map(cons, &off, BT_PROD, PROT_READ);
	ASSERT_NE(MAP_FAILED, ctail);
	hdr = bt_map(cons, &off, BT_HDR, PROT_READ);
	ASSERT_NE(MAP_FAILED, hdr);

	close(prod);
	close(cons);
	test_unlink(dev, name);
	EXPECT_EQ(ENOENT, _test_ring_open(dev, name, BATON_ROLE_CONSUMER,
					  NULL));

	n = off.slots_size / 8;
	for (i = 0; i < n; i++)
		pslots[i] = bt_mix(i);
	*BT_WORD(ptail, off.prod_tail, uint64_t) = 0x1234;
	for (i = 0; i < n; i++) {
		ASSERT_EQ(bt_mix(i), pslots[i]);
		ASSERT_EQ(bt_mix(i), cslots[i]);
	}
	EXPECT_EQ(0x1234, *BT_WORD(ctail, off.prod_tail, uint64_t));
	EXPECT_EQ(BATON_RING_MAGIC, hdr->magic);

	/* a forked child writes through its inherited copy */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		for (i = 0; i < n; i++)
			pslots[i] = ~bt_mix(i);
		_exit(0);
	}
	ASSERT_EQ(0, bt_wait_timeout(pid, 20000));
	for (i = 0; i < n; i++) {
		ASSERT_EQ(~bt_mix(i), cslots[i]);
	}

	/* drop the producer's mappings first: the consumer's still work */
	munmap((void *)pslots, off.slots_size);
	munmap((void *)ptail, off.prod_size);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(~bt_mix(i), cslots[i]);
	}
	EXPECT_EQ(0x1234, *BT_WORD(ctail, off.prod_tail, uint64_t));
	munmap((void *)cslots, off.slots_size);
	munmap((void *)ctail, off.prod_size);
	munmap((void *)hdr, off.hdr_size);
	close(dev);
}

/*
 * Move, split, partly protect and fork a mapping whose fd is closed: the
 * role stays attached exactly until the last page of the last piece goes,
 * and parks (whose barrier walks the set of mms mapping the ring) keep
 * working throughout. Bad vma accounting shows as a kernel WARNING, which
 * fails the VM run.
 */
TEST(mapping_moved_and_split)
{
	struct baton_ring_create c;
	struct baton_ring_info info;
	const struct baton_ring_hdr *hdr;
	size_t pg = BT_PAGE, len;
	char name[BATON_NAME_MAX];
	uint8_t *m, *target;
	int dev, prod, cons, i;
	pid_t pid;

	BT_REQUIRE_DEV();
	dev = bt_dev_open();
	ASSERT_LE(0, dev);
	bt_make_name(name, sizeof(name), "mmsplit");
	prod = test_ring_create(dev, name, BATON_ROLE_PRODUCER, 16, 1024, 0600,
				&c);
	cons = test_ring_open(dev, name, BATON_ROLE_CONSUMER, NULL);
	hdr = bt_map(cons, &c.out_off, BT_HDR, PROT_READ);
	ASSERT_NE(MAP_FAILED, hdr);
	len = c.out_off.slots_size;
	ASSERT_LE(4 * pg, len);
	m = bt_map(prod, &c.out_off, BT_SLOTS, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, m);
	close(prod);
	for (i = 0; i < 4; i++)
		m[i * pg] = (uint8_t)(0x10 + i);

	/* move it */
	target = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, target);
	m = mremap(m, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, target);
	ASSERT_EQ(target, m);
	EXPECT_EQ(0x12, m[2 * pg]);
	/* split it three ways */
	ASSERT_EQ(0, mprotect(m + pg, pg, PROT_READ));
	ASSERT_EQ(0, munmap(m, pg));
	/* a child inherits the pieces, uses them, exits */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		m[2 * pg] = 0x22;
		_exit(m[pg] == 0x11 ? 0 : 1);
	}
	EXPECT_EQ(0, bt_wait_timeout(pid, 20000));
	EXPECT_EQ(0x22, m[2 * pg]);
	EXPECT_EQ(ETIMEDOUT, _test_park(cons, BATON_PARK_DEADLINE, 0,
					bt_now_ns() + 10 * BT_MSEC));

	test_info(cons, &info);
	EXPECT_EQ(1, info.out_producers);
	EXPECT_EQ(0, hdr->state);
	/* unmap piece by piece: only the last one releases the role */
	ASSERT_EQ(0, munmap(m + pg, pg));
	ASSERT_EQ(0, munmap(m + 3 * pg, len - 3 * pg));
	test_info(cons, &info);
	EXPECT_EQ(1, info.out_producers);
	EXPECT_EQ(0, hdr->producer_deaths);
	EXPECT_EQ(ETIMEDOUT, _test_park(cons, BATON_PARK_DEADLINE, 0,
					bt_now_ns() + 10 * BT_MSEC));
	ASSERT_EQ(0, munmap(m + 2 * pg, pg));
	test_info(cons, &info);
	EXPECT_EQ(0, info.out_producers);
	EXPECT_EQ(BATON_STATE_PRODUCER_GONE, hdr->state);
	EXPECT_EQ(1, hdr->producer_deaths);
	EXPECT_EQ(EPIPE, _test_park(cons, BATON_PARK_DEADLINE, 0,
				    bt_now_ns() + 10 * BT_MSEC));

	munmap((void *)hdr, c.out_off.hdr_size);
	close(cons);
	test_unlink(dev, name);
	close(dev);
}

TEST_HARNESS_MAIN

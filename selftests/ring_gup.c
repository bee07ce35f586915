// SPDX-License-Identifier: GPL-2.0
/*
 * ring_gup: no page of a baton object can be written by someone who no
 * longer holds it.
 *
 * Owns the pinning contract of every mapping /dev/baton hands out
 * (Documentation/threat-model.rst, "Pages and pins"): the 22 regions a
 * role can map (SPSC and MPSC rings per role, epoch domains) are tried
 * with every way user space has to make the kernel take a reference on a
 * mapped page and use it later: vmsplice() into a pipe, process_vm_readv()
 * and process_vm_writev() from another process, O_DIRECT reads and writes
 * on a block device. A control page (headers, index pages, sequence words,
 * claim pages, epoch regions) refuses every one with EFAULT; a slot page
 * (data) accepts them, within the role's protections.
 *
 * Then the attack itself, end to end: a participant (an MPSC producer, an
 * SPSC producer) starts an O_DIRECT read into its epoch region (its claim
 * page, its index page) whose data arrives only when it says so, releases,
 * a victim takes the same index (role), and the read completes. The
 * victim's words must be its own.
 *
 * The delayed read: null_blk's poll queue. A polled request (io_uring with
 * IORING_SETUP_IOPOLL) is queued by null_blk at submission, with its pages
 * already pinned, and its data copied only when the submitter reaps
 * (null_poll()), so the test decides when the write lands: no timing
 * involved. null_blk's completion_nsec would not do: it delays the
 * completion, but the data is copied at dispatch. The modules come from
 * /modules in the VM image (selftests/vm/mkinitramfs.sh); without them (the
 * debug kernel has no block layer) the block tests are skipped.
 */
#include "common.h"

#include "uring.h"
#include <sys/uio.h>

#define GUP_SLOTS	16
#define GUP_SLOT_SIZE	512
#define GUP_NULLB	"/dev/nullb0"
#define GUP_NULLB_PARAMS "memory_backed=1 bs=4096 gb=1 nr_devices=1 poll_queues=1"
#define GUP_FILL	0xa5	/* what the block device holds */

enum gup_kind { GUP_SPSC, GUP_MPSC, GUP_EPOCH };
enum gup_region {
	GUP_R_HDR, GUP_R_PROD, GUP_R_CONS, GUP_R_SLOTS, GUP_R_SEQ, GUP_R_CLAIM,
	GUP_E_HDR, GUP_E_SELF, GUP_E_TABLE,
};

/* ---- objects ---- */

/* The participant index, or -1. */
static int gup_epoch_register(int fd)
{
	struct baton_epoch_register r;

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	return bt_ioctl(fd, BATON_EPOCH_IOC_REGISTER, &r) ? -1 :
							   (int)r.out_index;
}

static int gup_ring_create(int dev, const char *name, enum gup_kind kind,
			   uint32_t role, uint32_t maxp,
			   struct baton_ring_create *c)
{
	bt_create_init(c, name, role, GUP_SLOTS, GUP_SLOT_SIZE, 0600);
	if (kind == GUP_MPSC) {
		c->kind = BATON_RING_MPSC;
		c->max_producers = maxp;
	}
	return bt_ioctl(dev, BATON_IOC_RING_CREATE, c) ? -1 : (int)c->out_fd;
}

/* ---- the block device ---- */

static int gup_load_module(const char *path, const char *params)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -1;
	rc = syscall(__NR_finit_module, fd, params, 0);
	close(fd);
	return rc && errno != EEXIST ? -1 : 0;
}

/*
 * /dev/nullb0, memory-backed, 4 KiB blocks, one poll queue, holding
 * GUP_FILL in its first block: NULL, or why it is not available.
 */
static const char *gup_nullb(void)
{
	static uint8_t buf[4096] __attribute__((aligned(4096)));
	int fd, i;

	if (access(GUP_NULLB, F_OK)) {
		if (access("/modules/null_blk.ko", R_OK))
			return "no null_blk.ko in /modules (no block layer?)";
		if (gup_load_module("/modules/configfs.ko", "") &&
		    access("/sys/kernel/config", F_OK))
			return "configfs.ko would not load";
		if (gup_load_module("/modules/null_blk.ko", GUP_NULLB_PARAMS))
			return "null_blk.ko would not load";
	}
	for (i = 0; i < 500 && access(GUP_NULLB, F_OK); i++)
		bt_sleep_ms(10);
	fd = open(GUP_NULLB, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (fd < 0)
		return GUP_NULLB " would not open";
	memset(buf, GUP_FILL, sizeof(buf));
	i = pwrite(fd, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf);
	close(fd);
	return i ? NULL : "cannot write " GUP_NULLB;
}

#define GUP_REQUIRE_NULLB() do {					\
	const char *__why = gup_nullb();				\
	if (__why)							\
		SKIP(return, "%s", __why);				\
} while (0)

/* ---- io_uring (uring.h): one IOPOLL ring, one read in flight ---- */

/* Queue one read and submit it without reaping: 0 or -1. */
static int gup_uring_read(struct bt_uring *u, int fd, void *buf,
			  uint32_t len)
{
	struct io_uring_sqe *sqe = bt_uring_sqe(u);

	sqe->opcode = IORING_OP_READ;
	sqe->fd = fd;
	sqe->addr = (uintptr_t)buf;
	sqe->len = len;
	sqe->off = 0;
	return bt_uring_submit(u);
}

/* ---- every region of every role ---- */

FIXTURE(gup) {
	int dev;
	int fd;
	int peer;
	char name[BATON_NAME_MAX];
	uint8_t *map;
	size_t len;
	bool writable;
};

FIXTURE_VARIANT(gup) {
	enum gup_kind kind;
	uint32_t role;		/* rings */
	enum gup_region region;
	bool data;		/* documented as GUP-able */
};

#define GUP_RING(n, k, r, reg, d)					\
	FIXTURE_VARIANT_ADD(gup, n) {					\
		.kind = GUP_##k, .role = BATON_ROLE_##r,		\
		.region = GUP_R_##reg, .data = d,			\
	}
#define GUP_DOMAIN(n, reg)						\
	FIXTURE_VARIANT_ADD(gup, n) {					\
		.kind = GUP_EPOCH, .region = GUP_E_##reg,		\
	}

GUP_RING(spsc_producer_hdr, SPSC, PRODUCER, HDR, false);
GUP_RING(spsc_producer_prod, SPSC, PRODUCER, PROD, false);
GUP_RING(spsc_producer_cons, SPSC, PRODUCER, CONS, false);
GUP_RING(spsc_producer_slots, SPSC, PRODUCER, SLOTS, true);
GUP_RING(spsc_consumer_hdr, SPSC, CONSUMER, HDR, false);
GUP_RING(spsc_consumer_prod, SPSC, CONSUMER, PROD, false);
GUP_RING(spsc_consumer_cons, SPSC, CONSUMER, CONS, false);
GUP_RING(spsc_consumer_slots, SPSC, CONSUMER, SLOTS, true);
GUP_RING(mpsc_producer_hdr, MPSC, PRODUCER, HDR, false);
GUP_RING(mpsc_producer_prod, MPSC, PRODUCER, PROD, false);
GUP_RING(mpsc_producer_cons, MPSC, PRODUCER, CONS, false);
GUP_RING(mpsc_producer_slots, MPSC, PRODUCER, SLOTS, true);
GUP_RING(mpsc_producer_seq, MPSC, PRODUCER, SEQ, false);
GUP_RING(mpsc_producer_claim, MPSC, PRODUCER, CLAIM, false);
GUP_RING(mpsc_consumer_hdr, MPSC, CONSUMER, HDR, false);
GUP_RING(mpsc_consumer_prod, MPSC, CONSUMER, PROD, false);
GUP_RING(mpsc_consumer_cons, MPSC, CONSUMER, CONS, false);
GUP_RING(mpsc_consumer_slots, MPSC, CONSUMER, SLOTS, true);
GUP_RING(mpsc_consumer_seq, MPSC, CONSUMER, SEQ, false);
GUP_DOMAIN(epoch_hdr, HDR);
GUP_DOMAIN(epoch_self, SELF);
GUP_DOMAIN(epoch_table, TABLE);

/* Where the variant's region is, and whether its role writes it. */
static void gup_ring_region(const FIXTURE_VARIANT(gup) *v,
			    const struct baton_ring_offsets *o,
			    uint64_t *off, uint64_t *len, bool *w)
{
	bool prod = v->role == BATON_ROLE_PRODUCER;

	switch (v->region) {
	case GUP_R_HDR:
		*off = o->hdr_mmap, *len = o->hdr_size, *w = false;
		break;
	case GUP_R_PROD:
		*off = o->prod_mmap, *len = o->prod_size, *w = prod;
		break;
	case GUP_R_CONS:
		*off = o->cons_mmap, *len = o->cons_size, *w = !prod;
		break;
	case GUP_R_SLOTS:
		*off = o->slots_mmap, *len = o->slots_size, *w = prod;
		break;
	case GUP_R_SEQ:
		*off = o->seq_mmap, *len = o->seq_size, *w = true;
		break;
	default:
		*off = o->claim_mmap, *len = o->claim_size, *w = prod;
		break;
	}
}

static void gup_domain_region(const FIXTURE_VARIANT(gup) *v,
			      const struct baton_epoch_offsets *o,
			      uint64_t *off, uint64_t *len, bool *w)
{
	switch (v->region) {
	case GUP_E_HDR:
		*off = o->hdr_mmap, *len = o->hdr_size, *w = false;
		break;
	case GUP_E_SELF:
		*off = o->self_mmap, *len = o->self_size, *w = true;
		break;
	default:
		*off = o->table_mmap, *len = o->table_size, *w = false;
		break;
	}
}

FIXTURE_SETUP(gup)
{
	uint64_t off = 0, len = 0;

	BT_REQUIRE_DEV();
	self->dev = bt_dev_open();
	ASSERT_LE(0, self->dev);
	bt_make_name(self->name, sizeof(self->name), "gup");
	if (variant->kind == GUP_EPOCH) {
		struct baton_epoch_create c;

		ASSERT_EQ(0, _test_epoch_create(self->dev, self->name, 2, 16,
						0600, &c));
		self->fd = c.out_fd;
		self->peer = -1;
		ASSERT_LE(0, gup_epoch_register(self->fd));
		gup_domain_region(variant, &c.out_off, &off, &len,
				  &self->writable);
	} else {
		struct baton_ring_create c;
		uint32_t other = variant->role == BATON_ROLE_PRODUCER ?
				 BATON_ROLE_CONSUMER : BATON_ROLE_PRODUCER;

		self->fd = gup_ring_create(self->dev, self->name, variant->kind,
					   variant->role, 2, &c);
		ASSERT_LE(0, self->fd);
		self->peer = test_ring_open(self->dev, self->name, other, NULL);
		gup_ring_region(variant, &c.out_off, &off, &len,
				&self->writable);
	}
	self->len = len;
	self->map = mmap(NULL, len, PROT_READ |
			 (self->writable ? PROT_WRITE : 0), MAP_SHARED,
			 self->fd, (off_t)off);
	ASSERT_NE(MAP_FAILED, self->map) TH_LOG("mmap: %s", strerror(errno));
}

FIXTURE_TEARDOWN(gup)
{
	if (self->map && self->map != MAP_FAILED)
		munmap(self->map, self->len);
	if (self->fd > 0)
		close(self->fd);
	if (self->peer > 0)
		close(self->peer);
	if (self->dev > 0) {
		if (variant->kind == GUP_EPOCH)
			_test_epoch_unlink(self->dev, self->name);
		else
			_test_unlink(self->dev, self->name);
		close(self->dev);
	}
}

/*
 * The result a pinning call must give on this region: the byte count when
 * the page is data (and, for a write into it, the role writes it),
 * EFAULT otherwise. @got: the call's return value, with errno.
 */
static bool gup_expect(const FIXTURE_VARIANT(gup) *v, bool into,
		       bool writable, ssize_t got, int err, size_t want)
{
	if (v->data && (!into || writable))
		return got == (ssize_t)want;
	return got == -1 && err == EFAULT;
}

/* vmsplice() takes references to the pages and keeps them in the pipe. */
TEST_F(gup, vmsplice)
{
	struct iovec iov = { self->map, BT_PAGE };
	int pfd[2];
	ssize_t n;

	ASSERT_EQ(0, pipe2(pfd, O_CLOEXEC));
	errno = 0;
	n = vmsplice(pfd[1], &iov, 1, SPLICE_F_NONBLOCK);
	EXPECT_TRUE(gup_expect(variant, false, self->writable, n, errno,
			       BT_PAGE))
		TH_LOG("vmsplice: %zd (%s)", n, n < 0 ? strerror(errno) : "");
	close(pfd[0]);
	close(pfd[1]);
}

/*
 * process_vm_readv() and process_vm_writev() from the parent into a
 * forked child's copy of the mapping (the same pages): the remote side is
 * pinned with pin_user_pages_remote().
 */
static void gup_remote(struct __test_metadata *_metadata,
		       const FIXTURE_VARIANT(gup) *v, uint8_t *map,
		       bool writable, bool write)
{
	static uint8_t buf[4096];
	struct iovec local = { buf, sizeof(buf) };
	struct iovec remote = { map, sizeof(buf) };
	struct bt_sync done;
	ssize_t n;
	int err;
	pid_t pid;

	ASSERT_EQ(4096, BT_PAGE);
	ASSERT_EQ(0, bt_sync_init(&done));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(bt_sync_wait(&done, 20000) ? 1 : 0);
	memset(buf, 0x3c, sizeof(buf));
	errno = 0;
	if (write)
		n = process_vm_writev(pid, &local, 1, &remote, 1, 0);
	else
		n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	err = errno;
	bt_sync_post(&done);
	EXPECT_EQ(0, bt_wait_timeout(pid, 20000));
	bt_sync_close(&done);
	/* A SKIP after a failed EXPECT would report the test as skipped. */
	if (!_metadata->passed)
		return;
	if (n < 0 && err == ENOSYS)
		SKIP(return, "process_vm_%sv: ENOSYS", write ? "write" : "read");
	EXPECT_TRUE(gup_expect(v, write, writable, n, err, sizeof(buf)))
		TH_LOG("process_vm_%sv: %zd (%s)", write ? "write" : "read",
		       n, n < 0 ? strerror(err) : "");
	if (write && n == (ssize_t)sizeof(buf))
		EXPECT_EQ(0x3c, map[sizeof(buf) - 1]);
}

TEST_F(gup, process_vm_readv)
{
	gup_remote(_metadata, variant, self->map, self->writable, false);
}

TEST_F(gup, process_vm_writev)
{
	gup_remote(_metadata, variant, self->map, self->writable, true);
}

/* An O_DIRECT read lands in the pages (FOLL_WRITE): a write into them. */
TEST_F(gup, odirect_read_into)
{
	ssize_t n;
	int fd;

	GUP_REQUIRE_NULLB();
	fd = open(GUP_NULLB, O_RDONLY | O_DIRECT | O_CLOEXEC);
	ASSERT_LE(0, fd);
	errno = 0;
	n = pread(fd, self->map, BT_PAGE, 0);
	EXPECT_TRUE(gup_expect(variant, true, self->writable, n, errno,
			       BT_PAGE))
		TH_LOG("O_DIRECT read: %zd (%s)", n,
		       n < 0 ? strerror(errno) : "");
	if (n == (ssize_t)BT_PAGE)
		EXPECT_EQ(GUP_FILL, self->map[BT_PAGE - 1]);
	close(fd);
}

/* An O_DIRECT write reads the pages (a read-only pin). */
TEST_F(gup, odirect_write_from)
{
	ssize_t n;
	int fd;

	GUP_REQUIRE_NULLB();
	fd = open(GUP_NULLB, O_WRONLY | O_DIRECT | O_CLOEXEC);
	ASSERT_LE(0, fd);
	errno = 0;
	/* Block 1: block 0 keeps GUP_FILL for the other tests. */
	n = pwrite(fd, self->map, BT_PAGE, BT_PAGE);
	EXPECT_TRUE(gup_expect(variant, false, self->writable, n, errno,
			       BT_PAGE))
		TH_LOG("O_DIRECT write: %zd (%s)", n,
		       n < 0 ? strerror(errno) : "");
	close(fd);
}

/*
 * madvise(@advice) on a control mapping is EINVAL (VM_PFNMAP, VM_IO). A
 * kernel without madvise(2) (the debug kernel: tinyconfig has no
 * ADVISE_SYSCALLS) has nothing to refuse: ENOSYS passes too.
 */
static bool gup_madvise_refused(void *m, size_t len, int advice)
{
	errno = 0;
	return madvise(m, len, advice) == -1 &&
	       (errno == EINVAL || errno == ENOSYS);
}

/*
 * The mm's own operations on a control mapping: a fork shares it, a move
 * and a split keep its words, it cannot grow, MADV_DONTNEED cannot drop
 * its pages (EINVAL: VM_PFNMAP), and the last piece unmapped releases it.
 */
TEST_F(gup, vma_ops)
{
	volatile uint64_t *w = (volatile uint64_t *)self->map;
	uint8_t *target, *m = self->map;
	size_t len = self->len;
	pid_t pid;

	if (variant->data || !self->writable)
		SKIP(return, "writable control regions only");
	w[0] = 0x1122334455667788ULL;
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (w[0] != 0x1122334455667788ULL)
			_exit(1);
		w[1] = 0x99;
		_exit(0);
	}
	EXPECT_EQ(0, bt_wait_timeout(pid, 20000));
	EXPECT_EQ(0x99, w[1]);

	EXPECT_TRUE(gup_madvise_refused(m, len, MADV_DONTNEED));
	EXPECT_EQ(0x1122334455667788ULL, w[0]);
	EXPECT_TRUE(gup_madvise_refused(m, len, MADV_DOFORK));
	EXPECT_EQ(MAP_FAILED, mremap(m, len, len + BT_PAGE, MREMAP_MAYMOVE));

	target = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		      0);
	ASSERT_NE(MAP_FAILED, target);
	m = mremap(m, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, target);
	ASSERT_EQ(target, m);
	self->map = m;
	w = (volatile uint64_t *)m;
	EXPECT_EQ(0x1122334455667788ULL, w[0]);
	ASSERT_EQ(0, mprotect(m, len, PROT_READ));
	EXPECT_EQ(0x99, w[1]);
	ASSERT_EQ(0, mprotect(m, len, PROT_READ | PROT_WRITE));
	w[1] = 0x77;
	EXPECT_EQ(0x77, w[1]);
}

/* ---- the attack, end to end ---- */

/*
 * What the attacker leaves behind and the victim must not see: one
 * O_DIRECT read of GUP_FILL into @len bytes at @map, held in null_blk's
 * poll queue until bt_uring_reap().
 */
static int gup_start_stale_read(struct bt_uring *u, void *map)
{
	int fd = open(GUP_NULLB, O_RDONLY | O_DIRECT | O_CLOEXEC);

	if (fd < 0 || bt_uring_init(u, IORING_SETUP_IOPOLL))
		return -1;
	return gup_uring_read(u, fd, map, 4096);
}

/* The victim's words: distinct, and none equal to the device's bytes. */
static void gup_victim_fill(volatile uint64_t *w, size_t words)
{
	size_t i;

	for (i = 0; i < words; i++)
		w[i] = bt_mix(i) | 1;
}

static size_t gup_victim_changed(const volatile uint64_t *w, size_t words)
{
	size_t i, changed = 0;

	for (i = 0; i < words; i++)
		if (w[i] != (bt_mix(i) | 1))
			changed++;
	return changed;
}

/*
 * The story, in separate processes: the attacker holds the region and
 * starts the read (@attack), releases it (munmap and close) and waits;
 * the victim takes the same index (@victim: maps its region and fills
 * it); the attacker reaps its read; the victim counts its changed words.
 * The attacker's result goes to *res (-EFAULT: refused at submission).
 */
struct gup_story {
	const char *name;
	int dev;
	/* Map the region the role gets: its base and length, or NULL. */
	void *(*take)(struct gup_story *s, int *fd, size_t *len);
	int32_t res;
	size_t changed;
	size_t words;
};

/* Exit codes of the story's children. */
enum { GUP_OK, GUP_TAKE, GUP_READ, GUP_SYNC, GUP_REAP, GUP_CHANGED };

static int gup_attacker(struct gup_story *s, struct bt_sync *released,
			struct bt_sync *reap, int report)
{
	struct bt_uring u;
	size_t len;
	void *map;
	int fd;

	map = s->take(s, &fd, &len);
	if (!map)
		return GUP_TAKE;
	if (gup_start_stale_read(&u, map))
		return GUP_READ;
	munmap(map, len);
	close(fd);
	if (bt_sync_post(released) || bt_sync_wait(reap, 60000))
		return GUP_SYNC;
	if (bt_uring_reap(&u, 1, &s->res))
		return GUP_REAP;
	return write(report, &s->res, sizeof(s->res)) == sizeof(s->res) ?
	       GUP_OK : GUP_SYNC;
}

static int gup_victim(struct gup_story *s, struct bt_sync *ready,
		      struct bt_sync *check)
{
	size_t len, changed;
	void *map;
	int fd;

	map = s->take(s, &fd, &len);
	if (!map)
		return GUP_TAKE;
	gup_victim_fill(map, s->words);
	if (bt_sync_post(ready) || bt_sync_wait(check, 60000))
		return GUP_SYNC;
	changed = gup_victim_changed(map, s->words);
	if (changed)
		fprintf(stderr, "# %s: %zu of the victim's %zu words changed\n",
			s->name, changed, s->words);
	return changed ? GUP_CHANGED : GUP_OK;
}

static void gup_story_run(struct __test_metadata *_metadata,
			  struct gup_story *s)
{
	struct bt_sync released, reap, ready, check;
	pid_t attacker, victim;
	int report[2];

	ASSERT_EQ(0, bt_sync_init(&released));
	ASSERT_EQ(0, bt_sync_init(&reap));
	ASSERT_EQ(0, bt_sync_init(&ready));
	ASSERT_EQ(0, bt_sync_init(&check));
	ASSERT_EQ(0, pipe2(report, O_CLOEXEC));

	attacker = fork();
	ASSERT_LE(0, attacker);
	if (!attacker)
		_exit(gup_attacker(s, &released, &reap, report[1]));
	ASSERT_EQ(0, bt_sync_wait(&released, 60000));

	victim = fork();
	ASSERT_LE(0, victim);
	if (!victim)
		_exit(gup_victim(s, &ready, &check));
	EXPECT_EQ(0, bt_sync_wait(&ready, 60000));

	bt_sync_post(&reap);
	EXPECT_EQ(GUP_OK, bt_wait_timeout(attacker, 60000));
	EXPECT_EQ(sizeof(s->res), read(report[0], &s->res, sizeof(s->res)));
	bt_sync_post(&check);
	EXPECT_EQ(GUP_OK, bt_wait_timeout(victim, 60000))
		TH_LOG("the victim's words changed (exit %d = GUP_CHANGED): "
		       "the released holder's read landed in them",
		       GUP_CHANGED);
	/* Refused when it was submitted: the pages could not be pinned. */
	EXPECT_EQ(-EFAULT, s->res) TH_LOG("the stale read returned %d",
					  s->res);
	close(report[0]);
	close(report[1]);
	bt_sync_close(&released);
	bt_sync_close(&reap);
	bt_sync_close(&ready);
	bt_sync_close(&check);
}

/* An epoch participant: register (index 0, the only one), map self. */
static void *gup_take_participant(struct gup_story *s, int *fd, size_t *len)
{
	struct baton_epoch_open o;
	void *m;

	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	snprintf(o.name, sizeof(o.name), "%s", s->name);
	if (bt_ioctl(s->dev, BATON_IOC_EPOCH_OPEN, &o))
		return NULL;
	*fd = o.out_fd;
	if (gup_epoch_register(*fd) != 0)
		return NULL;
	*len = o.out_off.self_size;
	m = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, *fd,
		 (off_t)o.out_off.self_mmap);
	return m == MAP_FAILED ? NULL : m;
}

TEST(stale_read_into_epoch_region)
{
	struct gup_story s = { .take = gup_take_participant, .words = 64 };
	struct baton_epoch_create c;
	char name[BATON_NAME_MAX];

	BT_REQUIRE_DEV();
	GUP_REQUIRE_NULLB();
	s.dev = bt_dev_open();
	ASSERT_LE(0, s.dev);
	bt_make_name(name, sizeof(name), "gupe");
	s.name = name;
	/* One participant index: the victim gets the attacker's. */
	ASSERT_EQ(0, _test_epoch_create(s.dev, name, 1, 16, 0600, &c));
	gup_story_run(_metadata, &s);
	close(c.out_fd);
	_test_epoch_unlink(s.dev, name);
	close(s.dev);
}

/* An MPSC producer (index 0, the only one): its claim page. */
static void *gup_take_producer(struct gup_story *s, int *fd, size_t *len)
{
	struct baton_ring_open o;
	void *m;

	if (_test_ring_open(s->dev, s->name, BATON_ROLE_PRODUCER, &o))
		return NULL;
	*fd = o.out_fd;
	*len = o.out_off.claim_size;
	m = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, *fd,
		 (off_t)o.out_off.claim_mmap);
	return m == MAP_FAILED ? NULL : m;
}

TEST(stale_read_into_mpsc_claim)
{
	struct gup_story s = { .take = gup_take_producer, .words = 64 };
	struct baton_ring_create c;
	char name[BATON_NAME_MAX];
	int cons;

	BT_REQUIRE_DEV();
	GUP_REQUIRE_NULLB();
	s.dev = bt_dev_open();
	ASSERT_LE(0, s.dev);
	bt_make_name(name, sizeof(name), "gupm");
	s.name = name;
	cons = gup_ring_create(s.dev, name, GUP_MPSC, BATON_ROLE_CONSUMER, 1,
			       &c);
	ASSERT_LE(0, cons);
	gup_story_run(_metadata, &s);
	close(cons);
	_test_unlink(s.dev, name);
	close(s.dev);
}

/* An SPSC producer: its index page (the next one resumes from it). */
static void *gup_take_spsc_producer(struct gup_story *s, int *fd,
				    size_t *len)
{
	struct baton_ring_open o;
	void *m;

	if (_test_ring_open(s->dev, s->name, BATON_ROLE_PRODUCER, &o))
		return NULL;
	*fd = o.out_fd;
	*len = o.out_off.prod_size;
	m = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, *fd,
		 (off_t)o.out_off.prod_mmap);
	return m == MAP_FAILED ? NULL : m;
}

TEST(stale_read_into_spsc_index_page)
{
	struct gup_story s = { .take = gup_take_spsc_producer, .words = 64 };
	struct baton_ring_create c;
	char name[BATON_NAME_MAX];
	int cons;

	BT_REQUIRE_DEV();
	GUP_REQUIRE_NULLB();
	s.dev = bt_dev_open();
	ASSERT_LE(0, s.dev);
	bt_make_name(name, sizeof(name), "gups");
	s.name = name;
	cons = gup_ring_create(s.dev, name, GUP_SPSC, BATON_ROLE_CONSUMER, 1,
			       &c);
	ASSERT_LE(0, cons);
	gup_story_run(_metadata, &s);
	close(cons);
	_test_unlink(s.dev, name);
	close(s.dev);
}

TEST_HARNESS_MAIN

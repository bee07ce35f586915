// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz: several processes at once throw random ioctls, mmaps and
 * lifetime races at /dev/baton, its ring fds and its domain fds, for a
 * bounded time; then everything must be gone.
 *
 * Owns the module's answer to arbitrary input. Each worker is a seeded
 * loop of random operations:
 *  - ioctls on /dev/baton, ring fds, domain fds and pool fds: every baton
 *    command
 *    and commands around them (other numbers, _IOC direction and size
 *    bits, other types), with argument structs of random size (0, 1,
 *    ver0 - 1, exact, larger with a zero or a non-zero tail, a page, more
 *    than a page), random flags and reserved words, names from a small
 *    shared pool (so processes meet on the same objects) or broken ones
 *    (too long, bad bytes, unterminated, empty), random geometry, and bad
 *    pointers (NULL, unmapped, a struct running into an unmapped page);
 *  - mmap of the held fds with region offsets or random ones, random
 *    lengths, protections and MAP_SHARED/MAP_PRIVATE; then touching the
 *    mapping, mprotect, mremap, partial and whole munmap;
 *  - close, unlink and re-create of pool objects other workers use;
 *  - fork with fds and mappings held (the child runs a short burst of its
 *    own, and is sometimes killed);
 *  - delete_module("baton", O_NONBLOCK), which must fail (EWOULDBLOCK or
 *    EBUSY; EINTR when the alarm below interrupts its wait for the module
 *    mutex) because this program holds /dev/baton open throughout.
 * A periodic SIGALRM without SA_RESTART bounds every blocking call (a
 * park, synchronize or name wait without a deadline ends in EINTR).
 *
 * Every result must be success or an errno documented for that call
 * (uapi/linux/baton.h, Documentation/abi.rst; EFAULT for a bad pointer).
 * "Distinct ioctl paths" counts distinct (fd kind, command, errno)
 * triples seen, where the fd kind is /dev/baton, ring producer/consumer
 * (SPSC or MPSC) or domain (registered or not); mmap, mprotect and
 * mremap count as commands of their own. Executions are operations
 * performed, all processes together.
 *
 * Leak check, after every worker has exited and the pool names are
 * unlinked: the number of vmalloc areas the module allocated (one per
 * live ring or domain, /proc/vmallocinfo) and the module's reference
 * count (/sys/module/baton/refcnt: one per open baton file or mapping)
 * must both return to their values at the start. Slab usage
 * (/proc/meminfo) is printed, not judged: other kernel activity moves it.
 *
 * Usage: fuzz [-s SECONDS] [-S SEED] [-w WORKERS] [-u]
 *   -s  run time (default $BATON_FUZZ_SECONDS, else 60)
 *   -S  seed (default $BATON_FUZZ_SEED, else from the clock); printed
 *   -w  worker processes (default 4)
 *   -u  at the end, unload the module (delete_module must then succeed):
 *       `make fuzz` does this; the VM suite leaves it to zz_module_unload
 * Output is TAP.
 */
#define BT_NO_HARNESS
#include "common.h"

#include <stdarg.h>
#include <sys/time.h>

#define NAME_POOL	8
#define MAX_FDS		8
#define MAX_MAPS	16
#define MAX_KIDS	2
#define MAX_WORKERS	16
#define PATHS		4096	/* hash table of (fd kind, cmd, errno) */
#define ERRNOS		256
#define ARGBUF		(3 * 4096)

/* ---- PRNG ---- */

static uint64_t rng_s;

static uint64_t rnd64(void)
{
	rng_s ^= rng_s >> 12;
	rng_s ^= rng_s << 25;
	rng_s ^= rng_s >> 27;
	return rng_s * 0x2545f4914f6cdd1dULL;
}

static uint32_t rnd(uint32_t n)
{
	return n ? (uint32_t)(rnd64() % n) : 0;
}

static bool chance(uint32_t pct)
{
	return rnd(100) < pct;
}

static void rng_seed(uint64_t seed)
{
	rng_s = bt_mix(seed) | 1;
}

/* ---- shared statistics ---- */

struct fz_path {
	uint64_t key;		/* fd kind << 48 | cmd << 16 | errno; 0 empty */
	uint64_t hits;
};

struct fz_shared {
	uint64_t execs;
	uint64_t unload_attempts;
	uint64_t forks;
	uint64_t errnos[ERRNOS];	/* [0]: success */
	uint64_t bad;			/* undocumented results */
	char first_bad[256];
	char last_bad[256];
	uint32_t bad_lock;
	uint32_t unloaded;		/* delete_module succeeded: fatal */
	struct fz_path paths[PATHS];
};

static struct fz_shared *sh;

/* fd kinds */
enum { K_DEV = 1, K_SPSC_P, K_SPSC_C, K_MPSC_P, K_MPSC_C, K_DOM, K_DOM_REG,
       K_POOL, K_NONE };
/* pseudo commands for the memory operations */
#define OP_MMAP		0xf0000001u
#define OP_MPROTECT	0xf0000002u
#define OP_MREMAP	0xf0000003u
#define OP_MUNMAP	0xf0000004u
#define OP_POLL		0xf0000005u
#define OP_UNLOAD	0xf0000006u
#define OP_FIRST	0xf0000000u

static void fz_path_hit(uint32_t kind, uint32_t cmd, int err)
{
	uint64_t key = ((uint64_t)kind << 48) | ((uint64_t)cmd << 16) |
		       (uint64_t)(err & 0xffff);
	uint32_t h = (uint32_t)(bt_mix(key) % PATHS), i;

	for (i = 0; i < PATHS; i++) {
		struct fz_path *p = &sh->paths[(h + i) % PATHS];
		uint64_t cur = __atomic_load_n(&p->key, __ATOMIC_ACQUIRE);

		if (!cur && __atomic_compare_exchange_n(&p->key, &cur, key, false,
							__ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE))
			cur = key;
		if (cur == key) {
			__atomic_add_fetch(&p->hits, 1, __ATOMIC_RELAXED);
			return;
		}
	}
}

static void fz_bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fz_bad(const char *fmt, ...)
{
	va_list ap;

	bool first = !__atomic_fetch_add(&sh->bad, 1, __ATOMIC_ACQ_REL);

	/* The last one may be torn by a concurrent writer: a hint only. */
	va_start(ap, fmt);
	vsnprintf(first ? sh->first_bad : sh->last_bad,
		  sizeof(sh->first_bad), fmt, ap);
	va_end(ap);
}

/*
 * Count one result. @allowed lists the errnos documented for the call,
 * 0-terminated; success is always allowed.
 */
static void fz_result(uint32_t kind, uint32_t cmd, int err,
		      const int *allowed, const char *what, uint32_t size)
{
	const int *a;

	__atomic_add_fetch(&sh->execs, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&sh->errnos[err >= 0 && err < ERRNOS ? err : 0],
			   1, __ATOMIC_RELAXED);
	fz_path_hit(kind, cmd, err);
	if (!err)
		return;
	for (a = allowed; *a; a++)
		if (*a == err)
			return;
	fz_bad("%s: cmd %#x on fd kind %u, size %u: errno %d (%s)", what, cmd,
	       kind, size, err, strerror(err));
}

static const int E_DEV[] = { EINVAL, E2BIG, EFAULT, EEXIST, ENOENT, EACCES,
			     EBUSY, ENOMEM, EMFILE, 0 };
static const int E_PARK[] = { EINVAL, E2BIG, EFAULT, EPIPE, ETIMEDOUT,
			      EPROTO, EINTR, 0 };
static const int E_STRUCT[] = { EINVAL, E2BIG, EFAULT, 0 };
static const int E_ARG0[] = { EINVAL, 0 };
static const int E_REGISTER[] = { EINVAL, E2BIG, EFAULT, EBUSY, ENOSPC, 0 };
static const int E_SYNC[] = { EINVAL, E2BIG, EFAULT, ETIMEDOUT, EINTR, 0 };
static const int E_NOTTY[] = { ENOTTY, 0 };
static const int E_NAME_WAIT[] = { EINVAL, E2BIG, EFAULT, ETIMEDOUT, EINTR,
				   0 };
static const int E_MMAP[] = { EINVAL, EACCES, ENOMEM, 0 };
/* 6.16 made anon-inode files noexec: the kernel says EPERM before us. */
static const int E_MMAP_EXEC[] = { EINVAL, EACCES, ENOMEM, EPERM, 0 };
static const int E_MPROTECT[] = { EACCES, ENOMEM, EINVAL, 0 };
static const int E_MREMAP[] = { EFAULT, EINVAL, ENOMEM, 0 };
/* EINTR: the module mutex is taken interruptibly, and our alarm ticks. */
static const int E_UNLOAD[] = { EWOULDBLOCK, EBUSY, EINTR, 0 };
static const int E_POLL[] = { EINTR, 0 };
static const int E_UNSTICK[] = { EINVAL, E2BIG, EFAULT, EAGAIN, 0 };
static const int E_POOL_WAIT[] = { EINVAL, E2BIG, EFAULT, ETIMEDOUT, EINTR,
				   0 };
static const int E_POOL_WAKE[] = { EINVAL, E2BIG, EFAULT, 0 };
static const int E_BIND[] = { EINVAL, E2BIG, EFAULT, EACCES, EBADF, ENOSPC,
			       0 };

/* ---- what a worker holds ---- */

struct fz_fd {
	int fd;
	uint32_t kind;
	uint64_t region[6];	/* mmap offsets worth trying */
	uint64_t rsize[6];
	uint32_t nregions;
};

struct fz_map {
	uint8_t *p;
	size_t len;
	int prot;
};

static struct fz_fd fds[MAX_FDS];
static int nfds;
static struct fz_map maps[MAX_MAPS];
static int nmaps;
static pid_t kids[MAX_KIDS];
static bool in_child;		/* a forked burst: no grandchildren */
static int dev = -1;
static int bind_pool = -1;	/* a pool fd fds[] never drops: BIND_POOL's */
static uint8_t *argbuf;		/* ARGBUF bytes, last page unmapped */

/* ---- building arguments ---- */

static void fz_name(char *name)
{
	uint32_t i, n;

	memset(name, 0, BATON_NAME_MAX);
	switch (rnd(10)) {
	case 0:		/* too long: 64 bytes, no NUL */
		memset(name, 'a', BATON_NAME_MAX);
		break;
	case 1:		/* exactly 63: valid (unlinked at the end too) */
		memset(name, 'z', BATON_NAME_MAX - 1);
		break;
	case 2:		/* bad characters: the slash stays */
		snprintf(name, BATON_NAME_MAX, "fz/%u", rnd(NAME_POOL));
		name[rnd(2)] = (char)(1 + rnd(255));
		break;
	case 3:		/* empty */
		break;
	case 4:		/* random bytes after a bad first one: never valid */
		n = 1 + rnd(BATON_NAME_MAX);
		for (i = 0; i < n && i < BATON_NAME_MAX; i++)
			name[i] = (char)rnd64();
		name[0] = (char)(0x80 | rnd64());
		break;
	default:	/* the shared pool */
		snprintf(name, BATON_NAME_MAX, "fz.%u", rnd(NAME_POOL));
	}
}

static uint32_t fz_pick_u32(const uint32_t *v, uint32_t n)
{
	return chance(10) ? (uint32_t)rnd64() : v[rnd(n)];
}

#define PICK(arr) fz_pick_u32(arr, sizeof(arr) / sizeof(arr[0]))

/* Geometry: edges and random, but nothing valid above 1 MiB (VM memory). */
static void fz_ring_geometry(struct baton_ring_create *c)
{
	static const uint32_t counts[] = { 0, 1, 2, 3, 4, 8, 64, 1024,
					   BATON_SLOTS_MAX, BATON_SLOTS_MAX + 1,
					   BATON_SLOTS_MAX << 1, 16, 8, 2 };
	static const uint32_t sizes[] = { 0, 7, 8, 9, 16, 64, 4096,
					  BATON_SLOT_SIZE_MAX,
					  BATON_SLOT_SIZE_MAX + 8, 24, 8, 64 };
	uint64_t bytes;

	c->slot_count = PICK(counts);
	c->slot_size = PICK(sizes);
	bytes = (uint64_t)c->slot_count * c->slot_size;
	while (bytes > (1u << 20) && bytes <= BATON_RING_BYTES_MAX &&
	       c->slot_count > 2) {
		c->slot_count >>= 1;
		bytes >>= 1;
	}
}

/*
 * A pool geometry: mostly small and valid (up to 3 classes of up to 64
 * buffers of 4..16 KiB: a few hundred KiB at most, as rings here), else
 * one rule broken.
 */
static void fz_pool_geometry(struct baton_pool_create *c)
{
	uint32_t i;

	c->nr_classes = 1 + rnd(3);
	c->max_holders = 1 + rnd(8);
	c->decay_ms = chance(50) ? 0 : 10 + rnd(100);
	for (i = 0; i < c->nr_classes; i++) {
		c->classes[i].buf_shift = 12 + i;
		c->classes[i].count = 1 + rnd(64);
	}
	c->keep = chance(80) ? 0 : rnd(2);
	if (chance(80))
		return;
	switch (rnd(6)) {
	case 0: c->nr_classes = chance(50) ? 0 : 9; break;
	case 1: c->classes[0].buf_shift = chance(50) ? 11 : 23; break;
	case 2: c->classes[0].count = chance(50) ? 0 : 65537; break;
	case 3: c->decay_ms = 1 + rnd(9); break;
	case 4: c->max_holders = chance(50) ? 0 : 1025; break;
	default: c->keep = 65; break;
	}
}

/* Fill @k (the struct for @cmd) with mostly valid, sometimes hostile values. */
static void fz_fill(unsigned int cmd, void *k)
{
	static const uint32_t kinds[] = { BATON_RING_SPSC, BATON_RING_MPSC,
					  BATON_RING_SPSC, BATON_RING_MPSC, 0,
					  3 };
	static const uint32_t roles[] = { BATON_ROLE_PRODUCER,
					  BATON_ROLE_CONSUMER, 0, 3 };
	static const uint32_t modes[] = { 0600, 0666, 0, 0777, 01000, 0400 };
	static const uint32_t prods[] = { 0, 1, 2, 4, 64, 65 };
	static const uint32_t parts[] = { 0, 1, 2, 4, 256, 257 };
	static const uint32_t qlens[] = { 0, 1, 2, 3, 8, 64, 4096, 8192 };

	switch (cmd) {
	case BATON_IOC_RING_CREATE: {
		struct baton_ring_create *c = k;

		c->kind = PICK(kinds);
		c->role = PICK(roles);
		fz_ring_geometry(c);
		c->mode = PICK(modes);
		if (chance(80))
			c->max_producers = c->kind == BATON_RING_MPSC ?
					   1 + rnd(4) : rnd(2);
		else
			c->max_producers = PICK(prods);
		fz_name(c->name);
		if (chance(40)) {	/* a ring that will exist */
			c->kind = 1 + rnd(2);
			c->role = 1 + rnd(2);
			c->slot_count = 2u << rnd(6);
			c->slot_size = 8u << rnd(4);
			c->mode = 0600;
			c->max_producers = c->kind == BATON_RING_MPSC ?
					   1 + rnd(4) : rnd(2);
			snprintf(c->name, BATON_NAME_MAX, "fz.%u",
				 rnd(NAME_POOL));
		}
		break;
	}
	case BATON_IOC_RING_OPEN: {
		struct baton_ring_open *o = k;

		o->role = chance(70) ? 1 + rnd(2) : PICK(roles);
		fz_name(o->name);
		break;
	}
	case BATON_IOC_UNLINK:
	case BATON_IOC_EPOCH_UNLINK:
		fz_name(((struct baton_unlink *)k)->name);
		break;
	case BATON_IOC_EPOCH_CREATE: {
		struct baton_epoch_create *c = k;

		c->max_participants = PICK(parts);
		c->queue_len = PICK(qlens);
		/* 1 MiB at most: participants * queue stay small together */
		if (c->max_participants > 8 && c->queue_len > 64)
			c->queue_len = 64;
		c->mode = PICK(modes);
		fz_name(c->name);
		break;
	}
	case BATON_IOC_EPOCH_OPEN:
		fz_name(((struct baton_epoch_open *)k)->name);
		break;
	case BATON_IOC_POOL_CREATE:
		fz_pool_geometry(k);
		((struct baton_pool_create *)k)->mode = PICK(modes);
		fz_name(((struct baton_pool_create *)k)->name);
		break;
	case BATON_IOC_POOL_OPEN:
		fz_name(((struct baton_pool_open *)k)->name);
		break;
	case BATON_IOC_POOL_UNLINK:
		fz_name(((struct baton_unlink *)k)->name);
		break;
	case BATON_POOL_IOC_UNSTICK: {
		struct baton_pool_unstick *u = k;

		u->cls = chance(90) ? rnd(3) : (uint32_t)rnd64();
		u->ticket = chance(70) ? rnd(256) : rnd64();
		break;
	}
	case BATON_IOC_NAME_WAIT: {
		struct baton_name_wait *w = k;

		w->kind = chance(90) ? 1 + rnd(2) : rnd(4);
		fz_name(w->name);
		w->flags = chance(70) ? BATON_NAME_WAIT_DEADLINE : 0;
		if (w->flags || chance(10))
			w->deadline_ns = chance(80) ? (uint64_t)bt_now_ns() +
				rnd(3) * BT_MSEC : rnd64();
		break;
	}
	case BATON_POOL_IOC_WAIT:
	case BATON_POOL_IOC_WAKE: {
		struct baton_pool_wait *w = k;

		w->cls = chance(90) ? rnd(3) : (uint32_t)rnd64();
		w->wakes = chance(50) ? 0 : (uint32_t)rnd64();
		/* A wait never without a near deadline: the worker goes on. */
		w->flags = chance(90) ? BATON_POOL_WAIT_DEADLINE :
					(uint32_t)rnd64() | 2;
		w->deadline_ns = (uint64_t)bt_now_ns() + rnd(3) * BT_MSEC;
		break;
	}
	case BATON_RING_IOC_BIND_POOL: {
		struct baton_ring_bind *b = k;

		/* The worker's own pool, one of the fds held, or any number. */
		if (bind_pool >= 0 && chance(50))
			b->pool_fd = bind_pool;
		else
			b->pool_fd = nfds && chance(70) ? fds[rnd(nfds)].fd :
							  (int)rnd64();
		break;
	}
	case BATON_RING_IOC_PARK: {
		struct baton_park *p = k;

		p->flags = chance(70) ? BATON_PARK_DEADLINE : 0;
		p->expected = chance(50) ? rnd(16) : rnd64();
		p->deadline_ns = chance(80) ? (uint64_t)bt_now_ns() +
			rnd(3) * BT_MSEC : rnd64();
		break;
	}
	case BATON_EPOCH_IOC_SYNCHRONIZE: {
		struct baton_epoch_sync *s = k;

		s->flags = chance(70) ? BATON_EPOCH_SYNC_DEADLINE : 0;
		s->epoch = chance(70) ? rnd(8) : rnd64();
		s->deadline_ns = chance(80) ? (uint64_t)bt_now_ns() +
			rnd(3) * BT_MSEC : rnd64();
		break;
	}
	case BATON_EPOCH_IOC_POLL:
		((struct baton_epoch_poll *)k)->epoch = chance(70) ? rnd(8) :
							rnd64();
		break;
	default:
		break;
	}
}

/* The struct size the kernel knows for @cmd, 0 for none. */
static uint32_t fz_ksize(unsigned int cmd)
{
	switch (cmd) {
	case BATON_IOC_VERSION:		return sizeof(struct baton_version);
	case BATON_IOC_RING_CREATE:	return sizeof(struct baton_ring_create);
	case BATON_IOC_RING_OPEN:	return sizeof(struct baton_ring_open);
	case BATON_IOC_UNLINK:
	case BATON_IOC_EPOCH_UNLINK:	return sizeof(struct baton_unlink);
	case BATON_IOC_EPOCH_CREATE:	return sizeof(struct baton_epoch_create);
	case BATON_IOC_EPOCH_OPEN:	return sizeof(struct baton_epoch_open);
	case BATON_IOC_NAME_WAIT:	return sizeof(struct baton_name_wait);
	case BATON_IOC_POOL_CREATE:	return sizeof(struct baton_pool_create);
	case BATON_IOC_POOL_OPEN:	return sizeof(struct baton_pool_open);
	case BATON_IOC_POOL_UNLINK:	return sizeof(struct baton_unlink);
	case BATON_POOL_IOC_UNSTICK:	return sizeof(struct baton_pool_unstick);
	case BATON_POOL_IOC_WAIT:
	case BATON_POOL_IOC_WAKE:	return sizeof(struct baton_pool_wait);
	case BATON_RING_IOC_PARK:	return sizeof(struct baton_park);
	case BATON_RING_IOC_INFO:	return sizeof(struct baton_ring_info);
	case BATON_RING_IOC_BIND_POOL:	return sizeof(struct baton_ring_bind);
	case BATON_EPOCH_IOC_REGISTER:
		return sizeof(struct baton_epoch_register);
	case BATON_EPOCH_IOC_COLLECT:	return sizeof(struct baton_epoch_collect);
	case BATON_EPOCH_IOC_SYNCHRONIZE:
		return sizeof(struct baton_epoch_sync);
	case BATON_EPOCH_IOC_POLL:	return sizeof(struct baton_epoch_poll);
	default:			return 0;
	}
}

/*
 * The argument of one ioctl: a struct in argbuf (or a bad pointer), its
 * size field one of the interesting sizes, flags and reserved words
 * usually zero. Returns the pointer to pass; *size is what it claims.
 */
static void *fz_arg(unsigned int cmd, uint32_t *size)
{
	uint32_t ks = fz_ksize(cmd), page = (uint32_t)BT_PAGE, sz;
	uint8_t *k;

	switch (rnd(20)) {
	case 0:		sz = 0; break;
	case 1:		sz = 1; break;
	case 2:		sz = ks ? ks - 1 : 7; break;
	case 3:		sz = ks + 8; break;		/* zero tail */
	case 4:		sz = ks + 8 + rnd(64); break;	/* maybe non-zero */
	case 5:		sz = page; break;
	case 6:		sz = page + 1 + rnd(page); break;
	case 7:		sz = (uint32_t)rnd64(); break;
	default:	sz = ks ? ks : 24; break;		/* exact */
	}
	*size = sz;
	switch (rnd(24)) {
	case 0:
		return NULL;
	case 1:
		return (void *)(uintptr_t)(1 + rnd(4096));
	case 2:		/* the struct runs into the unmapped page */
		k = argbuf + 2 * page - 4 - rnd(ks ? ks : 8);
		memset(k, 0, (size_t)(argbuf + 2 * page - k));
		memcpy(k, &sz, sizeof(sz));
		return k;
	default:
		break;
	}
	k = argbuf;
	memset(k, 0, 2 * page);
	if (sz > 4 && sz <= 2 * page && chance(50))
		for (uint32_t i = ks; i < sz; i++)	/* a non-zero tail */
			if (chance(5))
				k[i] = (uint8_t)rnd64();
	memcpy(k, &sz, sizeof(sz));
	fz_fill(cmd, k);
	if (chance(8))		/* flags */
		((uint32_t *)k)[1] = 1u << rnd(32);
	/*
	 * A reserved or random word. The high bit keeps a hit on a name
	 * invalid: no name outside the pool can be made, so all can go.
	 */
	if (chance(8) && ks > 16)
		k[8 + rnd(ks - 8)] = (uint8_t)(0x80 | rnd64());
	return k;
}

/* ---- commands ---- */

static const unsigned int dev_cmds[] = {
	BATON_IOC_VERSION, BATON_IOC_RING_CREATE, BATON_IOC_RING_OPEN,
	BATON_IOC_UNLINK, BATON_IOC_EPOCH_CREATE, BATON_IOC_EPOCH_OPEN,
	BATON_IOC_EPOCH_UNLINK, BATON_IOC_NAME_WAIT, BATON_IOC_POOL_CREATE,
	BATON_IOC_POOL_OPEN, BATON_IOC_POOL_UNLINK,
};
static const unsigned int ring_cmds[] = {
	BATON_RING_IOC_PARK, BATON_RING_IOC_WAKE, BATON_RING_IOC_INFO,
	BATON_RING_IOC_BIND_POOL,
};
static const unsigned int pool_cmds[] = {
	BATON_POOL_IOC_UNSTICK, BATON_POOL_IOC_WAIT, BATON_POOL_IOC_WAKE,
};
static const unsigned int dom_cmds[] = {
	BATON_EPOCH_IOC_REGISTER, BATON_EPOCH_IOC_COLLECT,
	BATON_EPOCH_IOC_SYNCHRONIZE, BATON_EPOCH_IOC_POLL,
	BATON_EPOCH_IOC_KICK,
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/*
 * A command: one of the fd's own (most often), another fd's, or a
 * neighbour: other numbers, _IOC direction and size bits, other types
 * (none that the VFS handles itself: those are not the module's).
 */
static unsigned int fz_cmd(const unsigned int *own, uint32_t n)
{
	static const unsigned int types[] = { BATON_IOC_MAGIC,
					      BATON_IOC_MAGIC + 1,
					      BATON_IOC_MAGIC - 1, 0x41 };
	unsigned int c;

	switch (rnd(8)) {
	case 0:
		return dev_cmds[rnd(NELEM(dev_cmds))];
	case 1:
		return rnd(2) ? ring_cmds[rnd(NELEM(ring_cmds))] :
				dom_cmds[rnd(NELEM(dom_cmds))];
	case 2:		/* any number of ours */
		return _IO(BATON_IOC_MAGIC, rnd(256));
	case 3:		/* an own command with direction and size bits */
		c = own[rnd(n)];
		return _IOC(rnd(4), _IOC_TYPE(c), _IOC_NR(c),
			    rnd(2) ? rnd(1u << _IOC_SIZEBITS) :
				     fz_ksize(c));
	case 4:
		return _IOC(rnd(4), types[rnd(NELEM(types))], rnd(256),
			    rnd(1u << _IOC_SIZEBITS));
	default:
		return own[rnd(n)];
	}
}

static bool fz_known(unsigned int cmd)
{
	size_t i;

	for (i = 0; i < NELEM(dev_cmds); i++)
		if (cmd == dev_cmds[i])
			return true;
	for (i = 0; i < NELEM(ring_cmds); i++)
		if (cmd == ring_cmds[i])
			return true;
	for (i = 0; i < NELEM(dom_cmds); i++)
		if (cmd == dom_cmds[i])
			return true;
	return cmd == BATON_POOL_IOC_UNSTICK;
}

static const int *fz_allowed(uint32_t kind, unsigned int cmd)
{
	bool ring = kind >= K_SPSC_P && kind <= K_MPSC_C;
	bool dom = kind == K_DOM || kind == K_DOM_REG;
	size_t i;

	if (kind == K_DEV) {
		if (cmd == BATON_IOC_NAME_WAIT)
			return E_NAME_WAIT;
		for (i = 0; i < NELEM(dev_cmds); i++)
			if (cmd == dev_cmds[i])
				return E_DEV;
		return E_NOTTY;
	}
	if (ring) {
		switch (cmd) {
		case BATON_RING_IOC_PARK:	return E_PARK;
		case BATON_RING_IOC_WAKE:	return E_ARG0;
		case BATON_RING_IOC_INFO:	return E_STRUCT;
		case BATON_RING_IOC_BIND_POOL:	return E_BIND;
		default:			return E_NOTTY;
		}
	}
	if (kind == K_POOL) {
		switch (cmd) {
		case BATON_POOL_IOC_UNSTICK:	return E_UNSTICK;
		case BATON_POOL_IOC_WAIT:	return E_POOL_WAIT;
		case BATON_POOL_IOC_WAKE:	return E_POOL_WAKE;
		default:			return E_NOTTY;
		}
	}
	if (dom) {
		switch (cmd) {
		case BATON_EPOCH_IOC_REGISTER:	return E_REGISTER;
		case BATON_EPOCH_IOC_COLLECT:	return E_STRUCT;
		case BATON_EPOCH_IOC_SYNCHRONIZE: return E_SYNC;
		case BATON_EPOCH_IOC_POLL:	return E_STRUCT;
		case BATON_EPOCH_IOC_KICK:	return E_ARG0;
		default:			return E_NOTTY;
		}
	}
	return E_NOTTY;
}

/* ---- holding fds ---- */

static void fz_hold(int fd, uint32_t kind, const uint64_t *off,
		    const uint64_t *len, uint32_t n)
{
	struct fz_fd *f;
	uint32_t i;

	if (fd < 0)
		return;
	if (nfds == MAX_FDS) {
		/* Full: drop a random one (its mappings stay). */
		i = rnd(MAX_FDS);
		close(fds[i].fd);
		fds[i] = fds[--nfds];
	}
	f = &fds[nfds++];
	memset(f, 0, sizeof(*f));
	f->fd = fd;
	f->kind = kind;
	for (i = 0; i < n && i < NELEM(f->region); i++) {
		f->region[i] = off[i];
		f->rsize[i] = len[i];
	}
	f->nregions = i;
}

static uint32_t fz_ring_kind(uint32_t kind, uint32_t role)
{
	if (kind == BATON_RING_MPSC)
		return role == BATON_ROLE_PRODUCER ? K_MPSC_P : K_MPSC_C;
	return role == BATON_ROLE_PRODUCER ? K_SPSC_P : K_SPSC_C;
}

static void fz_hold_ring(int fd, uint32_t kind, uint32_t role,
			 const struct baton_ring_offsets *o)
{
	const uint64_t off[6] = { o->hdr_mmap, o->prod_mmap, o->cons_mmap,
				  o->slots_mmap, o->seq_mmap, o->claim_mmap };
	const uint64_t len[6] = { o->hdr_size, o->prod_size, o->cons_size,
				  o->slots_size, o->seq_size, o->claim_size };

	fz_hold(fd, fz_ring_kind(kind, role), off, len,
		kind == BATON_RING_MPSC ? 6 : 4);
}

static void fz_hold_dom(int fd, const struct baton_epoch_offsets *o)
{
	const uint64_t off[3] = { o->hdr_mmap, o->self_mmap, o->table_mmap };
	const uint64_t len[3] = { o->hdr_size, o->self_size, o->table_size };

	fz_hold(fd, K_DOM, off, len, 3);
}

/*
 * A pool fd: its header says where the control and data regions are;
 * read once here (a worker may scribble the control region, not this).
 */
static void fz_hold_pool(int fd)
{
	uint64_t off[3] = { 0 }, len[3] = { BT_PAGE, BT_PAGE, BT_PAGE };
	const struct baton_pool_hdr *h;

	h = mmap(NULL, BT_PAGE, PROT_READ, MAP_SHARED, fd, 0);
	if (h != MAP_FAILED) {
		off[1] = h->ctl_mmap;
		len[1] = h->ctl_size;
		off[2] = h->data_mmap;
		len[2] = h->data_size;
		munmap((void *)h, BT_PAGE);
	}
	fz_hold(fd, K_POOL, off, len, 3);
}

/* Keep what a successful create or open returned. */
static void fz_keep(unsigned int cmd, void *k, uint32_t size)
{
	if (size < fz_ksize(cmd))
		return;		/* the outputs were not all copied back */
	switch (cmd) {
	case BATON_IOC_RING_CREATE: {
		struct baton_ring_create *c = k;

		fz_hold_ring(c->out_fd, c->kind, c->role, &c->out_off);
		break;
	}
	case BATON_IOC_RING_OPEN: {
		struct baton_ring_open *o = k;

		fz_hold_ring(o->out_fd, o->out_kind, o->role, &o->out_off);
		break;
	}
	case BATON_IOC_EPOCH_CREATE:
		fz_hold_dom(((struct baton_epoch_create *)k)->out_fd,
			    &((struct baton_epoch_create *)k)->out_off);
		break;
	case BATON_IOC_EPOCH_OPEN:
		fz_hold_dom(((struct baton_epoch_open *)k)->out_fd,
			    &((struct baton_epoch_open *)k)->out_off);
		break;
	case BATON_IOC_POOL_CREATE:
		fz_hold_pool(((struct baton_pool_create *)k)->out_fd);
		break;
	case BATON_IOC_POOL_OPEN:
		fz_hold_pool(((struct baton_pool_open *)k)->out_fd);
		break;
	default:
		break;
	}
}

/*
 * A create or open that succeeded but whose output we cannot trust
 * (short size: out_fd not copied back) still made an fd: it is closed
 * at exit with everything else, and counted by the leak check then.
 */

/* ---- operations ---- */

static void op_ioctl(void)
{
	struct fz_fd *f = nfds && chance(60) ? &fds[rnd(nfds)] : NULL;
	uint32_t kind = f ? f->kind : K_DEV, size = 0;
	int fd = f ? f->fd : dev;
	unsigned int cmd;
	unsigned long arg;
	void *k;
	int err;

	if (kind == K_DEV)
		cmd = fz_cmd(dev_cmds, NELEM(dev_cmds));
	else if (kind == K_DOM || kind == K_DOM_REG)
		cmd = fz_cmd(dom_cmds, NELEM(dom_cmds));
	else if (kind == K_POOL)
		cmd = fz_cmd(pool_cmds, NELEM(pool_cmds));
	else
		cmd = fz_cmd(ring_cmds, NELEM(ring_cmds));

	if (cmd == BATON_RING_IOC_WAKE || cmd == BATON_EPOCH_IOC_KICK) {
		arg = chance(70) ? 0 : (unsigned long)rnd64();
		k = NULL;
	} else {
		k = fz_arg(cmd, &size);
		arg = (unsigned long)k;
	}
	err = ioctl(fd, cmd, arg) ? errno : 0;
	fz_result(kind, cmd, err, fz_allowed(kind, cmd), "ioctl", size);
	if (err || !k || (uint8_t *)k != argbuf)
		return;
	if (kind == K_DEV)
		fz_keep(cmd, k, size);
	else if (cmd == BATON_EPOCH_IOC_REGISTER)
		f->kind = K_DOM_REG;
}

static void op_mmap(void)
{
	static const int prots[] = { PROT_READ, PROT_READ | PROT_WRITE,
				     PROT_WRITE, PROT_NONE,
				     PROT_READ | PROT_EXEC };
	struct fz_fd *f;
	uint64_t off, len;
	int prot, flags, err;
	uint8_t *p;
	size_t i;

	if (!nfds)
		return;
	f = &fds[rnd(nfds)];
	if (f->nregions && chance(75)) {
		i = rnd(f->nregions);
		off = f->region[i];
		len = f->rsize[i];
		if (chance(20))
			len = BT_PAGE * (1 + rnd(4));
		if (chance(10))
			len += BT_PAGE;
		if (chance(10))
			off += BT_PAGE;
	} else {
		off = BT_PAGE * rnd(64);
		len = BT_PAGE * rnd(8);
		if (chance(10))
			off += 1 + rnd(4095);	/* unaligned: mmap's EINVAL */
	}
	if (len > (64u << 20))
		len = 64u << 20;
	prot = prots[rnd(NELEM(prots))];
	flags = chance(85) ? MAP_SHARED : MAP_PRIVATE;
	p = mmap(NULL, len, prot, flags, f->fd, (off_t)off);
	err = p == MAP_FAILED ? errno : 0;
	fz_result(f->kind, OP_MMAP, err, prot & PROT_EXEC ? E_MMAP_EXEC : E_MMAP,
		  "mmap", (uint32_t)len);
	if (err)
		return;
	/* Touch it: reads always, writes where allowed (hostile values). */
	for (i = 0; i < len; i += BT_PAGE) {
		if (prot & PROT_READ)
			(void)*(volatile uint8_t *)(p + i);
		if ((prot & PROT_WRITE) && chance(30))
			*(volatile uint64_t *)(p + i + 8 * rnd(BT_PAGE / 8)) =
				rnd64();
	}
	if (nmaps == MAX_MAPS) {
		i = rnd(MAX_MAPS);
		munmap(maps[i].p, maps[i].len);
		maps[i] = maps[--nmaps];
	}
	maps[nmaps++] = (struct fz_map){ p, len, prot };
}

static void op_mem(void)
{
	static const int prots[] = { PROT_READ, PROT_READ | PROT_WRITE,
				     PROT_NONE, PROT_READ | PROT_EXEC };
	struct fz_map *m;
	int prot, err, i;
	size_t len;
	void *q;

	if (!nmaps)
		return;
	i = rnd(nmaps);
	m = &maps[i];
	switch (rnd(4)) {
	case 0:		/* mprotect, maybe an upgrade the role may not have */
		prot = prots[rnd(NELEM(prots))];
		err = mprotect(m->p, m->len, prot) ? errno : 0;
		fz_result(K_NONE, OP_MPROTECT, err, E_MPROTECT, "mprotect",
			  (uint32_t)prot);
		if (!err)
			m->prot = prot;
		break;
	case 1:		/* mremap: grow (VM_DONTEXPAND), shrink, move */
		len = rnd(2) ? m->len + BT_PAGE :
			       (m->len > BT_PAGE ? m->len - BT_PAGE : m->len);
		q = mremap(m->p, m->len, len, rnd(2) ? MREMAP_MAYMOVE : 0);
		err = q == MAP_FAILED ? errno : 0;
		fz_result(K_NONE, OP_MREMAP, err, E_MREMAP, "mremap",
			  (uint32_t)m->len);
		if (!err) {
			m->p = q;
			m->len = len;
		}
		break;
	case 2:		/* split: unmap the first page only */
		if (m->len > BT_PAGE) {
			err = munmap(m->p, BT_PAGE) ? errno : 0;
			fz_result(K_NONE, OP_MUNMAP, err, E_ARG0, "munmap", 1);
			if (!err) {
				m->p += BT_PAGE;
				m->len -= BT_PAGE;
			}
			break;
		}
		/* fall through */
	default:
		err = munmap(m->p, m->len) ? errno : 0;
		fz_result(K_NONE, OP_MUNMAP, err, E_ARG0, "munmap", 0);
		*m = maps[--nmaps];
		break;
	}
}

static void op_close(void)
{
	int i;

	if (!nfds)
		return;
	i = rnd(nfds);
	close(fds[i].fd);
	fds[i] = fds[--nfds];
	__atomic_add_fetch(&sh->execs, 1, __ATOMIC_RELAXED);
}

static void op_poll(void)
{
	struct pollfd pfd;
	int n;

	if (!nfds)
		return;
	pfd.fd = fds[rnd(nfds)].fd;
	pfd.events = (short)(chance(50) ? POLLIN : POLLOUT | POLLIN);
	n = poll(&pfd, 1, rnd(3));
	fz_result(K_NONE, OP_POLL, n < 0 ? errno : 0, E_POLL, "poll", 0);
}

static void op_unload(void)
{
	int err = syscall(SYS_delete_module, "baton", O_NONBLOCK) ? errno : 0;

	__atomic_add_fetch(&sh->unload_attempts, 1, __ATOMIC_RELAXED);
	if (!err) {
		__atomic_store_n(&sh->unloaded, 1, __ATOMIC_RELEASE);
		fz_bad("delete_module(baton) succeeded while /dev/baton was open");
	}
	fz_result(K_NONE, OP_UNLOAD, err, E_UNLOAD, "delete_module", 0);
}

static void fz_step(void);
static void fz_alarm(void);

/* A child with every fd and mapping of its parent: a short burst, exit. */
static void op_fork(void)
{
	int64_t end;
	int i, slot = -1;
	pid_t pid;

	for (i = 0; i < MAX_KIDS; i++) {
		if (kids[i] > 0 && waitpid(kids[i], NULL, WNOHANG) == kids[i])
			kids[i] = 0;
		if (!kids[i])
			slot = i;
	}
	if (slot < 0) {		/* both busy: kill one instead */
		i = rnd(MAX_KIDS);
		kill(kids[i], SIGKILL);
		return;
	}
	pid = fork();
	if (pid < 0)
		return;
	if (!pid) {
		in_child = true;
		fz_alarm();	/* timers are not inherited */
		rng_seed(rnd64() ^ (uint64_t)getpid());
		end = bt_now_ns() + (int64_t)(1 + rnd(30)) * BT_MSEC;
		while (bt_now_ns() < end)
			fz_step();
		/* Mappings and fds go with the process. */
		_exit(0);
	}
	kids[slot] = pid;
	__atomic_add_fetch(&sh->forks, 1, __ATOMIC_RELAXED);
}

static void fz_step(void)
{
	uint32_t r = rnd(100);

	if (r < 45)
		op_ioctl();
	else if (r < 60)
		op_mmap();
	else if (r < 72)
		op_mem();
	else if (r < 82)
		op_close();
	else if (r < 90)
		op_poll();
	else if (r < 93)
		op_unload();
	else if (!in_child)
		op_fork();
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* The ticking alarm: any blocking call ends within ~20 ms (EINTR). */
static void fz_alarm(void)
{
	struct sigaction sa;
	struct itimerval it = { { 0, 20000 }, { 0, 20000 } };

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;	/* no SA_RESTART */
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

/*
 * A small pool of the worker's own, its name unlinked at once: the pool a
 * BIND_POOL names half the time (the worker rarely holds a pool fd and a
 * ring fd together), so binds succeed and destroyed rings walk a pool.
 */
static int fz_bind_pool(void)
{
	struct baton_pool_create c;
	struct baton_unlink u;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.nr_classes = 1;
	c.max_holders = 4;
	c.classes[0].buf_shift = 12;
	c.classes[0].count = 8;
	c.mode = 0600;
	snprintf(c.name, sizeof(c.name), "fzbind.%d", (int)getpid());
	if (bt_ioctl(dev, BATON_IOC_POOL_CREATE, &c))
		return -1;
	memset(&u, 0, sizeof(u));
	u.size = sizeof(u);
	memcpy(u.name, c.name, sizeof(u.name));
	bt_ioctl(dev, BATON_IOC_POOL_UNLINK, &u);
	return c.out_fd;
}

static int fz_worker(uint64_t seed, int64_t end)
{
	int i;

	rng_seed(seed);
	dev = bt_dev_open();
	if (dev < 0)
		return 1;
	argbuf = mmap(NULL, ARGBUF, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (argbuf == MAP_FAILED)
		return 1;
	munmap(argbuf + 2 * BT_PAGE, ARGBUF - 2 * BT_PAGE);
	bind_pool = fz_bind_pool();
	fz_alarm();
	while (bt_now_ns() < end && !__atomic_load_n(&sh->unloaded,
						     __ATOMIC_ACQUIRE))
		fz_step();
	for (i = 0; i < MAX_KIDS; i++) {
		if (kids[i] > 0) {
			kill(kids[i], SIGKILL);
			while (waitpid(kids[i], NULL, 0) < 0 && errno == EINTR)
				;
		}
	}
	return 0;
}

/* ---- the leak check ---- */

/* vmalloc areas allocated by the module: one per live ring or domain. */
static long fz_vmalloc_areas(bool show, const char *what)
{
	FILE *f = fopen("/proc/vmallocinfo", "r");
	char line[512];
	long n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, what))
			continue;
		n++;
		if (show)
			printf("# left: %s", line);
	}
	fclose(f);
	return n;
}

static long fz_read_long(const char *path, const char *key)
{
	FILE *f = fopen(path, "r");
	char line[256];
	long v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!key) {
			v = strtol(line, NULL, 10);
			break;
		}
		if (!strncmp(line, key, strlen(key))) {
			v = strtol(line + strlen(key), NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

static long fz_refcnt(void)
{
	return fz_read_long("/sys/module/baton/refcnt", NULL);
}

static void fz_unlink_pool(int d)
{
	struct baton_unlink u;
	unsigned int i;

	for (i = 0; i <= NAME_POOL; i++) {
		memset(&u, 0, sizeof(u));
		u.size = sizeof(u);
		if (i == NAME_POOL)	/* fz_name()'s valid 63-byte name */
			memset(u.name, 'z', BATON_NAME_MAX - 1);
		else
			snprintf(u.name, sizeof(u.name), "fz.%u", i);
		bt_ioctl(d, BATON_IOC_UNLINK, &u);
		bt_ioctl(d, BATON_IOC_EPOCH_UNLINK, &u);
		bt_ioctl(d, BATON_IOC_POOL_UNLINK, &u);
	}
}

/* ---- main ---- */

static const char *const errnames[ERRNOS] = {
	[0] = "ok", [EPERM] = "EPERM", [ENOENT] = "ENOENT",
	[EINTR] = "EINTR", [EBADF] = "EBADF", [EAGAIN] = "EAGAIN",
	[ENOMEM] = "ENOMEM", [EACCES] = "EACCES", [EFAULT] = "EFAULT",
	[EBUSY] = "EBUSY", [EEXIST] = "EEXIST", [EINVAL] = "EINVAL",
	[EMFILE] = "EMFILE", [ENOTTY] = "ENOTTY", [ENOSPC] = "ENOSPC",
	[EPIPE] = "EPIPE", [EPROTO] = "EPROTO", [ETIMEDOUT] = "ETIMEDOUT",
	[E2BIG] = "E2BIG", [ENODEV] = "ENODEV",
};

static const char *fz_cmd_name(uint32_t cmd)
{
	static const struct { uint32_t cmd; const char *name; } n[] = {
		{ BATON_IOC_VERSION, "VERSION" },
		{ BATON_IOC_RING_CREATE, "RING_CREATE" },
		{ BATON_IOC_RING_OPEN, "RING_OPEN" },
		{ BATON_IOC_UNLINK, "UNLINK" },
		{ BATON_IOC_EPOCH_CREATE, "EPOCH_CREATE" },
		{ BATON_IOC_EPOCH_OPEN, "EPOCH_OPEN" },
		{ BATON_IOC_EPOCH_UNLINK, "EPOCH_UNLINK" },
		{ BATON_IOC_NAME_WAIT, "NAME_WAIT" },
		{ BATON_IOC_POOL_CREATE, "POOL_CREATE" },
		{ BATON_IOC_POOL_OPEN, "POOL_OPEN" },
		{ BATON_IOC_POOL_UNLINK, "POOL_UNLINK" },
		{ BATON_POOL_IOC_UNSTICK, "POOL_UNSTICK" },
		{ BATON_POOL_IOC_WAIT, "POOL_WAIT" },
		{ BATON_POOL_IOC_WAKE, "POOL_WAKE" },
		{ BATON_RING_IOC_PARK, "PARK" },
		{ BATON_RING_IOC_WAKE, "WAKE" },
		{ BATON_RING_IOC_INFO, "INFO" },
		{ BATON_RING_IOC_BIND_POOL, "BIND_POOL" },
		{ BATON_EPOCH_IOC_REGISTER, "REGISTER" },
		{ BATON_EPOCH_IOC_COLLECT, "COLLECT" },
		{ BATON_EPOCH_IOC_SYNCHRONIZE, "SYNCHRONIZE" },
		{ BATON_EPOCH_IOC_POLL, "POLL" },
		{ BATON_EPOCH_IOC_KICK, "KICK" },
		{ OP_MMAP, "mmap" }, { OP_MPROTECT, "mprotect" },
		{ OP_MREMAP, "mremap" }, { OP_MUNMAP, "munmap" },
		{ OP_POLL, "poll" }, { OP_UNLOAD, "delete_module" },
	};
	size_t i;

	for (i = 0; i < NELEM(n); i++)
		if (n[i].cmd == cmd)
			return n[i].name;
	return NULL;
}

/* Per known command, on its own kind of fd: the results seen. */
static void fz_report_known(void)
{
	static const uint32_t order[] = {
		BATON_IOC_VERSION, BATON_IOC_RING_CREATE, BATON_IOC_RING_OPEN,
		BATON_IOC_UNLINK, BATON_IOC_EPOCH_CREATE, BATON_IOC_EPOCH_OPEN,
		BATON_IOC_EPOCH_UNLINK, BATON_RING_IOC_PARK,
		BATON_RING_IOC_WAKE, BATON_RING_IOC_INFO,
		BATON_RING_IOC_BIND_POOL,
		BATON_EPOCH_IOC_REGISTER, BATON_EPOCH_IOC_COLLECT,
		BATON_EPOCH_IOC_SYNCHRONIZE, BATON_EPOCH_IOC_POLL,
		BATON_EPOCH_IOC_KICK, BATON_IOC_POOL_CREATE, BATON_IOC_POOL_OPEN,
		BATON_IOC_POOL_UNLINK, BATON_POOL_IOC_UNSTICK,
		BATON_POOL_IOC_WAIT, BATON_POOL_IOC_WAKE, OP_MMAP,
		OP_MPROTECT, OP_MREMAP,
		OP_MUNMAP, OP_POLL, OP_UNLOAD,
	};
	char buf[512];
	size_t o, at;
	unsigned int i;

	for (o = 0; o < NELEM(order); o++) {
		uint64_t seen[ERRNOS] = { 0 };
		int e;

		for (i = 0; i < PATHS; i++) {
			uint64_t key = sh->paths[i].key;

			if (key && (uint32_t)(key >> 16) == order[o])
				seen[(key & 0xffff) % ERRNOS] += sh->paths[i].hits;
		}
		at = 0;
		for (e = 0; e < ERRNOS && at < sizeof(buf); e++)
			if (seen[e])
				at += (size_t)snprintf(buf + at,
						       sizeof(buf) - at,
						       " %s=%llu",
						       errnames[e] ? errnames[e] :
						       "errno",
						       (unsigned long long)seen[e]);
		printf("#   %-13s%s\n", fz_cmd_name(order[o]),
		       at ? buf : " never reached");
	}
}

static void fz_report(double secs)
{
	unsigned int paths = 0, own = 0, mem = 0, i;
	char buf[1024];
	size_t at = 0;

	for (i = 0; i < PATHS; i++) {
		uint64_t key = sh->paths[i].key;
		uint32_t cmd = (uint32_t)(key >> 16);

		if (!key)
			continue;
		if (cmd >= OP_FIRST) {
			mem++;
			continue;
		}
		paths++;
		if (fz_known(cmd))
			own++;
	}
	printf("# executions: %llu in %.1f s (%.0f/s), forks %llu, "
	       "delete_module attempts %llu\n",
	       (unsigned long long)sh->execs, secs, sh->execs / secs,
	       (unsigned long long)sh->forks,
	       (unsigned long long)sh->unload_attempts);
	printf("# distinct ioctl paths, (fd kind, command, errno) triples: %u "
	       "(%u with a command the module knows); other syscall paths "
	       "(mmap, mprotect, mremap, munmap, poll, delete_module): %u\n",
	       paths, own, mem);
	for (i = 0; i < ERRNOS; i++) {
		if (!sh->errnos[i])
			continue;
		at += (size_t)snprintf(buf + at, sizeof(buf) - at, " %s=%llu",
				       errnames[i] ? errnames[i] : "errno",
				       (unsigned long long)sh->errnos[i]);
		if (at >= sizeof(buf))
			break;
	}
	printf("# results:%s\n", buf);
	fz_report_known();
}

int main(int argc, char **argv)
{
	const char *env_s = getenv("BATON_FUZZ_SECONDS");
	const char *env_seed = getenv("BATON_FUZZ_SEED");
	long secs = env_s && *env_s ? strtol(env_s, NULL, 0) : 60;
	uint64_t seed = env_seed && *env_seed ? strtoull(env_seed, NULL, 0) :
			(uint64_t)bt_now_ns() ^ ((uint64_t)getpid() << 40);
	long areas0, ref0, slab0, areas, ref, user0, user;
	int workers = 4, unload = 0, opt, i, rc, failed = 0, hold;
	pid_t pids[MAX_WORKERS];
	int64_t t0, end, until;

	while ((opt = getopt(argc, argv, "s:S:w:u")) != -1) {
		switch (opt) {
		case 's': secs = strtol(optarg, NULL, 0); break;
		case 'S': seed = strtoull(optarg, NULL, 0); break;
		case 'w': workers = atoi(optarg); break;
		case 'u': unload = 1; break;
		default:
			fprintf(stderr, "usage: fuzz [-s SECONDS] [-S SEED] "
				"[-w WORKERS] [-u]\n");
			return 2;
		}
	}
	if (workers < 1 || workers > MAX_WORKERS)
		workers = 4;
	if (secs < 1)
		secs = 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n1..4\n");
	printf("# fuzz: %d workers, %ld s, seed %llu "
	       "(BATON_FUZZ_SEED=%llu or -S %llu replays it)\n", workers, secs,
	       (unsigned long long)seed, (unsigned long long)seed,
	       (unsigned long long)seed);
	hold = bt_dev_open();
	if (hold < 0) {
		printf("ok 1 # SKIP %s absent\nok 2 # SKIP\nok 3 # SKIP\n"
		       "ok 4 # SKIP\n", BATON_DEVICE);
		return 4;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	memset(sh, 0, sizeof(*sh));
	areas0 = fz_vmalloc_areas(false, "[baton]");
	user0 = fz_vmalloc_areas(false, "vmap user");
	ref0 = fz_refcnt();
	slab0 = fz_read_long("/proc/meminfo", "Slab:");
	printf("# start: %ld baton vmalloc areas, module refcnt %ld, "
	       "Slab %ld kB\n", areas0, ref0, slab0);

	t0 = bt_now_ns();
	end = t0 + secs * BT_NSEC;
	for (i = 0; i < workers; i++) {
		pids[i] = fork();
		if (!pids[i])
			_exit(fz_worker(seed + (uint64_t)i * 0x1000193ULL, end));
	}
	for (i = 0; i < workers; i++) {
		if (pids[i] < 0) {
			failed = 1;
			continue;
		}
		rc = bt_wait_timeout(pids[i], (secs + 30) * 1000L);
		if (rc) {
			printf("# worker %d: exit %d\n", i, rc);
			failed = 1;
		}
	}
	fz_report((double)(bt_now_ns() - t0) / BT_NSEC);
	if (sh->bad)
		printf("# %llu undocumented results; first: %s; last: %s\n",
		       (unsigned long long)sh->bad, sh->first_bad,
		       sh->last_bad);
	printf("%sok 1 - fuzz: %d workers for %ld s, only documented results\n",
	       failed || sh->bad ? "not " : "", workers, secs);

	rc = syscall(SYS_delete_module, "baton", O_NONBLOCK) ? errno : 0;
	printf("%sok 2 - fuzz: delete_module refused while /dev/baton is "
	       "open (%s)\n", !rc || sh->unloaded ? "not " : "",
	       rc ? strerror(rc) : "it succeeded");

	/* Everything is closed; the names go, so every object must. */
	fz_unlink_pool(hold);
	until = bt_now_ns() + 10 * BT_NSEC;
	do {
		areas = fz_vmalloc_areas(false, "[baton]");
		ref = fz_refcnt();
		if (areas == areas0 && ref == ref0)
			break;
		bt_sleep_ms(50);
	} while (bt_now_ns() < until);
	printf("# end: %ld baton vmalloc areas, module refcnt %ld, Slab %ld kB\n",
	       areas, ref, fz_read_long("/proc/meminfo", "Slab:"));
	printf("%sok 3 - fuzz: no leak (vmalloc areas %ld -> %ld, refcnt "
	       "%ld -> %ld)\n", areas == areas0 && ref == ref0 ? "" : "not ",
	       areas0, areas, ref0, ref);
	if (areas != areas0 || ref != ref0) {
		fz_vmalloc_areas(true, "[baton]");
		failed = 1;
	}

	close(hold);
	if (!unload) {
		printf("ok 4 - fuzz: module unload # SKIP without -u "
		       "(zz_module_unload does it in the suite)\n");
	} else {
		rc = syscall(SYS_delete_module, "baton", O_NONBLOCK) ? errno : 0;
		/*
		 * Unload drains the registries: anything still registered
		 * under a name we did not know is freed now, and what is
		 * left of the module's areas ("vmap user": baton's ring and
		 * domain memory) can only be a leak.
		 */
		user = fz_vmalloc_areas(false, "vmap user");
		printf("%sok 4 - fuzz: module unloads once everything is "
		       "closed (%s), and its areas go with it (vmap user "
		       "areas %ld -> %ld, %ld of them baton's at the start)\n",
		       rc || user != user0 - areas0 ? "not " : "",
		       rc ? strerror(rc) : "unloaded", user0, user, areas0);
		if (rc || user != user0 - areas0) {
			fz_vmalloc_areas(true, "vmap user");
			failed = 1;
		}
	}
	return failed || sh->bad || sh->unloaded ? 1 : 0;
}

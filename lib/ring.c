// SPDX-License-Identifier: MIT
/*
 * libbaton ring handles: backend selection, create/open/close/unlink, the
 * mapping of a ring's four regions, stats and version. Both backends come
 * through here, so a handle looks the same whichever one stands behind it.
 *
 * A backend returns an fd and a layout (struct baton_ring_offsets). This
 * file trusts neither blindly: it checks the layout against the geometry
 * before mapping, maps each region once with write permission only where
 * the role owns it, and takes the handle's geometry from the values the
 * backend validated (the kernel's ioctl output, or the memfd header read
 * and checked once), never again from the shared header, which another
 * process could rewrite.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* Polls before a blocking call parks; ~1-4 us of pause loops on x86. */
#define BATON_SPIN_DEFAULT	2000
#define BATON_SPIN_MAX		(1U << 24)

const struct baton_backend_ops *baton__ops(int backend)
{
	switch (backend) {
	case BATON_BACKEND_KMOD:
		return &baton__kmod_ops;
	case BATON_BACKEND_MEMFD:
		return &baton__memfd_ops;
	default:
		return NULL;
	}
}

const char *baton_backend_name(int backend)
{
	switch (backend) {
	case BATON_BACKEND_AUTO:
		return "auto";
	case BATON_BACKEND_KMOD:
		return "kmod";
	case BATON_BACKEND_MEMFD:
		return "memfd";
	default:
		return "unknown";
	}
}

/*
 * AUTO means: $BATON_BACKEND if set ("kmod" or "memfd"; anything else is
 * an error rather than a silent fallback), else kmod when /dev/baton
 * exists, else memfd.
 */
int baton_backend_resolve(int backend)
{
	const char *env;

	if (backend == BATON_BACKEND_KMOD || backend == BATON_BACKEND_MEMFD)
		return backend;
	if (backend != BATON_BACKEND_AUTO)
		return -EINVAL;
	env = getenv("BATON_BACKEND");
	if (env && *env) {
		if (!strcmp(env, "kmod"))
			return BATON_BACKEND_KMOD;
		if (!strcmp(env, "memfd"))
			return BATON_BACKEND_MEMFD;
		return -EINVAL;
	}
	if (access(BATON_DEVICE, F_OK) == 0)
		return BATON_BACKEND_KMOD;
	return BATON_BACKEND_MEMFD;
}

/*
 * 1..63 bytes of [A-Za-z0-9._-]: the kernel's rule (kmod/owner.c,
 * baton_check_name()), checked up front on both backends.
 */
int baton__name_check(const struct baton__what *w, const char *name)
{
	size_t i, len;

	if (!name)
		return baton__reject(w, -EINVAL, "name: NULL");
	len = strnlen(name, BATON_NAME_MAX);
	if (len == 0)
		return baton__reject(w, -EINVAL,
				     "name: empty: must be 1 to %d bytes of [A-Za-z0-9._-]",
				     BATON_NAME_MAX - 1);
	if (len >= BATON_NAME_MAX)
		return baton__reject(w, -EINVAL,
				     "name: %d bytes or more: must be 1 to %d bytes",
				     BATON_NAME_MAX, BATON_NAME_MAX - 1);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-')
			continue;
		if (c > 0x20 && c < 0x7f)
			return baton__reject(w, -EINVAL,
					     "name: byte %zu is '%c': must be one of [A-Za-z0-9._-]",
					     i, c);
		return baton__reject(w, -EINVAL,
				     "name: byte %zu is 0x%02x: must be one of [A-Za-z0-9._-]",
				     i, c);
	}
	return 0;
}

int baton__name_valid(const char *name)
{
	return baton__name_check(NULL, name);
}

/* The backend a caller asked for, and $BATON_BACKEND under AUTO. */
int baton__backend_check(const struct baton__what *w, int backend)
{
	const char *env = getenv("BATON_BACKEND");
	int ret = baton_backend_resolve(backend);

	if (ret >= 0)
		return ret;
	if (backend != BATON_BACKEND_AUTO)
		return baton__reject(w, ret,
				     "backend %d: must be BATON_BACKEND_AUTO (0), _KMOD (1) or _MEMFD (2)",
				     backend);
	return baton__reject(w, ret,
			     "$BATON_BACKEND \"%.32s\": must be \"kmod\", \"memfd\" or unset",
			     env ? env : "");
}

int baton__geometry_check(const struct baton__what *w, uint32_t kind,
			  uint32_t slot_count, uint32_t slot_size)
{
	if (kind != BATON_RING_SPSC && kind != BATON_RING_MPSC)
		return baton__reject(w, -EINVAL,
				     "kind %u: must be BATON_RING_SPSC (%d) or BATON_RING_MPSC (%d)",
				     kind, BATON_RING_SPSC, BATON_RING_MPSC);
	if (slot_count < BATON_SLOTS_MIN || slot_count > BATON_SLOTS_MAX ||
	    (slot_count & (slot_count - 1)))
		return baton__reject(w, -EINVAL,
				     "slot_count %u: must be a power of two from %u to %u",
				     slot_count, BATON_SLOTS_MIN,
				     BATON_SLOTS_MAX);
	if (slot_size < BATON_SLOT_SIZE_MIN ||
	    slot_size > BATON_SLOT_SIZE_MAX || (slot_size & 7))
		return baton__reject(w, -EINVAL,
				     "slot_size %u: must be a multiple of 8 from %u to %u",
				     slot_size, BATON_SLOT_SIZE_MIN,
				     BATON_SLOT_SIZE_MAX);
	if ((uint64_t)slot_count * slot_size > BATON_RING_BYTES_MAX)
		return baton__reject(w, -EINVAL,
				     "slot_count %u * slot_size %u = %llu bytes: must be at most %u (256 MiB)",
				     slot_count, slot_size,
				     (unsigned long long)slot_count * slot_size,
				     BATON_RING_BYTES_MAX);
	return 0;
}

int baton__geometry_valid(uint32_t kind, uint32_t slot_count,
			  uint32_t slot_size)
{
	return baton__geometry_check(NULL, kind, slot_count, slot_size);
}

/*
 * Everything a new ring's parameters must satisfy, on either backend, as
 * the module checks it (kmod/ring.c, baton_ring_create()): checked here
 * before the backend is chosen, so code tested on memfd is refused the
 * same way under kmod, and every refusal names its field and rule (the
 * module's EINVAL cannot say which). Keep the two lists of rules equal.
 */
int baton__ring_params_check(const struct baton__what *w,
			     const struct baton_ring_params *p)
{
	int ret = baton__geometry_check(w, p->kind, p->slot_count,
					p->slot_size);

	if (ret)
		return ret;
	if (p->mode & ~0777U)
		return baton__reject(w, -EINVAL,
				     "mode 0%o: must be permission bits only, within 0777 (no setuid, setgid or sticky bit)",
				     p->mode);
	if (p->kind == BATON_RING_MPSC &&
	    (!p->max_producers || p->max_producers > BATON_MPSC_PRODUCERS_MAX))
		return baton__reject(w, -EINVAL,
				     "max_producers %u: an MPSC ring takes 1 to %d",
				     p->max_producers,
				     BATON_MPSC_PRODUCERS_MAX);
	if (p->kind == BATON_RING_SPSC && p->max_producers > 1)
		return baton__reject(w, -EINVAL,
				     "max_producers %u: an SPSC ring has one producer (0 or 1)",
				     p->max_producers);
	return 0;
}

/* The arguments every create and open takes besides the parameters. */
static int call_check(const struct baton__what *w, const char *name,
		      int role, const void *out)
{
	int ret = baton__name_check(w, name);

	if (ret)
		return ret;
	if (role != BATON_ROLE_PRODUCER && role != BATON_ROLE_CONSUMER)
		return baton__reject(w, -EINVAL,
				     "role %d: must be BATON_ROLE_PRODUCER (%d) or BATON_ROLE_CONSUMER (%d)",
				     role, BATON_ROLE_PRODUCER,
				     BATON_ROLE_CONSUMER);
	if (!out)
		return baton__reject(w, -EINVAL, "out: NULL");
	return 0;
}

struct span {
	uint64_t start;
	uint64_t len;
};

static int spans_overlap(const struct span *a, const struct span *b)
{
	return a->start < b->start + b->len && b->start < a->start + a->len;
}

/*
 * A layout is usable when every region is page aligned and non-empty, no
 * two regions overlap, each index and flag lies inside its own region
 * (naturally aligned, apart from each other), the slot region holds the
 * slots, and, when the backing size is known, everything lies inside it
 * (a mapping past EOF would SIGBUS on first touch).
 */
int baton__offsets_valid(const struct baton_ring_offsets *off,
			 uint32_t slot_count, uint32_t slot_size,
			 uint64_t file_size)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	struct span reg[4] = {
		{ off->hdr_mmap, off->hdr_size },
		{ off->prod_mmap, off->prod_size },
		{ off->cons_mmap, off->cons_size },
		{ off->slots_mmap, off->slots_size },
	};
	struct span tail = { off->prod_tail, 8 }, pwait = { off->prod_waiting, 4 };
	struct span head = { off->cons_head, 8 }, cwait = { off->cons_waiting, 4 };
	int i, j;

	for (i = 0; i < 4; i++) {
		if (!reg[i].len || reg[i].start % page || reg[i].len % page)
			return -EPROTO;
		/* Keeps start + len from wrapping below. */
		if (reg[i].start > (1ULL << 48) || reg[i].len > (1ULL << 40))
			return -EPROTO;
		if (file_size && reg[i].start + reg[i].len > file_size)
			return -EPROTO;
		for (j = 0; j < i; j++)
			if (spans_overlap(&reg[i], &reg[j]))
				return -EPROTO;
	}
	if (off->hdr_size < sizeof(struct baton_ring_hdr))
		return -EPROTO;
	if (off->slots_size < (uint64_t)slot_count * slot_size)
		return -EPROTO;
	if (tail.start % 8 || tail.start + 8 > off->prod_size ||
	    pwait.start % 4 || pwait.start + 4 > off->prod_size ||
	    spans_overlap(&tail, &pwait))
		return -EPROTO;
	if (head.start % 8 || head.start + 8 > off->cons_size ||
	    cwait.start % 4 || cwait.start + 4 > off->cons_size ||
	    spans_overlap(&head, &cwait))
		return -EPROTO;
	return 0;
}

uint64_t baton__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void unmap_all(struct baton_ring *r)
{
	int i;

	for (i = 0; i < 4; i++) {
		if (r->map[i].addr)
			munmap(r->map[i].addr, r->map[i].len);
		r->map[i].addr = NULL;
		r->map[i].len = 0;
	}
	baton__mpsc_unmap(r);
}

static uint32_t spin_limit_default(void)
{
	const char *env = getenv("BATON_SPIN_LIMIT");
	char *end;
	unsigned long v;

	if (!env || !*env)
		return BATON_SPIN_DEFAULT;
	errno = 0;
	v = strtoul(env, &end, 10);
	if (errno || *end || v > BATON_SPIN_MAX)
		return BATON_SPIN_DEFAULT;
	return (uint32_t)v;
}

/*
 * Map the four regions, one mmap each, PROT_WRITE only on what this role
 * owns (producer: prod and slots; consumer: cons; nobody: hdr; memfd:
 * both index pages, for the peer's waiting word). The kmod
 * backend enforces that; on memfd it is self-protection against our own
 * stray writes. Then set up the fast-path state from the validated desc.
 *
 * MAP_POPULATE: the memfd backend's pages are allocated at create
 * (posix_fallocate) but their page-table entries are not, so without it
 * the first lap of the ring takes a minor fault per slot page, inside
 * whichever push or pop first touches it: that was the busy-polling
 * round trip's p99.9 (12 us against a 220 ns p50 here). The kmod backend
 * inserts its pages at mmap, so there it changes nothing.
 */
static int attach(struct baton_ring *r, const struct baton_ring_desc *d,
		  int role)
{
	const struct baton_ring_offsets *off = &d->off;
	const uint64_t start[4] = { off->hdr_mmap, off->prod_mmap,
				    off->cons_mmap, off->slots_mmap };
	const uint64_t len[4] = { off->hdr_size, off->prod_size,
				  off->cons_size, off->slots_size };
	/*
	 * memfd: a waker clears the PARKED bit of its peer's waiting word
	 * itself (backend_memfd.c), so both index pages are writable there.
	 */
	int memfd = r->backend == BATON_BACKEND_MEMFD;
	const int owned[4] = { 0, role == BATON_ROLE_PRODUCER || memfd,
			       role == BATON_ROLE_CONSUMER || memfd,
			       role == BATON_ROLE_PRODUCER };
	const struct baton_ring_hdr *hdr;
	uint64_t head, tail;
	int i, ret;

	ret = baton__offsets_valid(off, d->slot_count, d->slot_size,
				   d->file_size);
	if (ret)
		return ret;
	for (i = 0; i < 4; i++) {
		int prot = PROT_READ | (owned[i] ? PROT_WRITE : 0);
		void *p = mmap(NULL, (size_t)len[i], prot,
			       MAP_SHARED | MAP_POPULATE, d->fd,
			       (off_t)start[i]);

		if (p == MAP_FAILED) {
			ret = -errno;
			unmap_all(r);
			return ret;
		}
		r->map[i].addr = p;
		r->map[i].len = (size_t)len[i];
	}

	hdr = r->map[BATON_MAP_HDR].addr;
	/* The header must agree with what the backend told us; past this
	 * point only our own copy of the geometry is used.
	 */
	if (hdr->magic != BATON_RING_MAGIC || hdr->kind != d->kind ||
	    hdr->slot_count != d->slot_count ||
	    hdr->slot_size != d->slot_size) {
		unmap_all(r);
		return -EPROTO;
	}

	r->hdr = hdr;
	r->fd = d->fd;
	r->role = role;
	r->kind = d->kind;
	r->slot_count = d->slot_count;
	r->slot_size = d->slot_size;
	r->mask = d->slot_count - 1;
	r->slots = r->map[BATON_MAP_SLOTS].addr;
	r->slots_off = off->slots_mmap;
	r->tail = (uint64_t *)((uint8_t *)r->map[BATON_MAP_PROD].addr +
			       off->prod_tail);
	r->prod_waiting = (uint32_t *)((uint8_t *)r->map[BATON_MAP_PROD].addr +
				       off->prod_waiting);
	r->head = (uint64_t *)((uint8_t *)r->map[BATON_MAP_CONS].addr +
			       off->cons_head);
	r->cons_waiting = (uint32_t *)((uint8_t *)r->map[BATON_MAP_CONS].addr +
				       off->cons_waiting);
	r->spin_limit = spin_limit_default();

	/* MPSC: its own regions and its own idea of consistent indices. */
	if (d->kind == BATON_RING_MPSC) {
		ret = baton__mpsc_attach(r, d, role);
		if (ret)
			unmap_all(r);
		return ret;
	}

	/*
	 * Resume from the shared indices: a ring may outlive the process that
	 * last held this role. Our own index first (nobody else moves it
	 * while we hold the role), then the peer's, which only moves towards
	 * ours, so a consistent ring has 0 <= tail - head <= slot_count.
	 */
	if (role == BATON_ROLE_PRODUCER) {
		/* No ordering needed: we are the only writer of tail. */
		tail = __atomic_load_n(r->tail, __ATOMIC_RELAXED);
		/* D, matches C: as in baton_spsc_prod_reserve(). */
		head = __atomic_load_n(r->head, __ATOMIC_ACQUIRE);
		r->local = tail;
		r->cached = head + r->slot_count;
	} else {
		head = __atomic_load_n(r->head, __ATOMIC_RELAXED);
		/* B, matches A: as in baton_spsc_cons_peek(). */
		tail = __atomic_load_n(r->tail, __ATOMIC_ACQUIRE);
		r->local = head;
		r->cached = tail;
	}
	if (tail - head > r->slot_count) {
		unmap_all(r);
		return -EPROTO;
	}
	return 0;
}

static int new_handle(struct baton_ring **out)
{
	struct baton_ring *r;

	/* The fast-path fields share one cache line with nothing else. */
	r = aligned_alloc(64, (sizeof(*r) + 63) & ~(size_t)63);
	if (!r)
		return -ENOMEM;
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	*out = r;
	return 0;
}

int baton_ring_create(const char *name, const struct baton_ring_params *p,
		      int role, struct baton_ring **out)
{
	const struct baton_backend_ops *ops;
	struct baton__what w;
	struct baton_ring_desc d;
	struct baton_ring *r;
	int backend, ret;

	baton__what(&w, "baton_ring_create", name);
	ret = call_check(&w, name, role, out);
	if (ret)
		return ret;
	if (!p)
		return baton__reject(&w, -EINVAL, "params: NULL");
	ret = baton__ring_params_check(&w, p);
	if (ret)
		return ret;
	backend = baton__backend_check(&w, p->backend);
	if (backend < 0)
		return backend;
	ops = baton__ops(backend);
	ret = new_handle(&r);
	if (ret)
		return baton__fail(&w, ret);
	memset(&d, 0, sizeof(d));
	d.fd = -1;
	ret = ops->create(name, p, role, &d);
	if (ret)
		goto err_free;
	r->backend = backend;
	ret = attach(r, &d, role);
	if (ret)
		goto err_close;
	strncpy(r->name, name, sizeof(r->name) - 1);
	r->magic = BATON__MAGIC_RING(r->kind, r->role);
	*out = r;
	return 0;

err_close:
	/*
	 * A create that fails leaves nothing: the name goes too, so a retry
	 * does not meet EEXIST from a ring nobody holds. An unlink and create
	 * of the same name by another process in the window (one mmap long)
	 * would lose theirs instead.
	 */
	close(d.fd);
	ops->unlink(name);
err_free:
	free(r);
	return baton__fail(&w, ret);
}

int baton_ring_open(const char *name, int role, int backend,
		    struct baton_ring **out)
{
	const struct baton_backend_ops *ops;
	struct baton__what w;
	struct baton_ring_desc d;
	struct baton_ring *r;
	int ret;

	baton__what(&w, "baton_ring_open", name);
	ret = call_check(&w, name, role, out);
	if (ret)
		return ret;
	backend = baton__backend_check(&w, backend);
	if (backend < 0)
		return backend;
	ops = baton__ops(backend);
	ret = new_handle(&r);
	if (ret)
		return baton__fail(&w, ret);
	memset(&d, 0, sizeof(d));
	d.fd = -1;
	ret = ops->open(name, role, &d);
	if (ret)
		goto err_free;
	r->backend = backend;
	ret = attach(r, &d, role);
	if (ret)
		goto err_close;
	strncpy(r->name, name, sizeof(r->name) - 1);
	r->magic = BATON__MAGIC_RING(r->kind, r->role);
	*out = r;
	return 0;

err_close:
	close(d.fd);
err_free:
	free(r);
	return baton__fail(&w, ret);
}

/*
 * The quarantine of closed handles: the last BATON_CLOSED_KEPT of them
 * (rings, epoch handles, waitsets, pools), poisoned by their close and kept
 * allocated, so a call on one, or a second close, reads the poison and
 * returns -EBADF instead of reading freed (maybe reused) memory. Older
 * ones are freed here. Closing is the slow path: a mutex is fine.
 */
static pthread_mutex_t quarantine_lock = PTHREAD_MUTEX_INITIALIZER;
static void *quarantine[BATON_CLOSED_KEPT];
static unsigned int quarantine_next;

void baton__quarantine(void *h)
{
	void *old;

	pthread_mutex_lock(&quarantine_lock);
	old = quarantine[quarantine_next];
	quarantine[quarantine_next] = h;
	quarantine_next = (quarantine_next + 1) % BATON_CLOSED_KEPT;
	pthread_mutex_unlock(&quarantine_lock);
	free(old);
}

int __baton_ring_check(const struct baton_ring *r, uint32_t kind, int role)
{
	uint32_t m;

	if (!r)
		return -EINVAL;
	m = r->magic;
	if ((m & ~0xffu) != BATON__MAGIC_RING_BASE)
		return -EBADF;	/* closed, or not a ring handle */
	if (kind && (m >> 4 & 0xf) != kind)
		return -EBADF;	/* an SPSC ring to an MPSC call or back */
	if (role && (m & 0xf) != (uint32_t)role)
		return -EINVAL;
	return 0;
}

/*
 * Unmap, then close. With the kmod backend the role is released (and the
 * peer told) only when both the fd and every mapping are gone. The
 * handle is poisoned, not freed (baton__quarantine()).
 */
int baton_ring_close(struct baton_ring *r)
{
	int ret = __baton_ring_check(r, 0, 0);

	if (ret)
		return ret;
	r->magic = BATON__MAGIC_DEAD;
	unmap_all(r);
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	baton__quarantine(r);
	return 0;
}

int baton_ring_unlink(const char *name, int backend)
{
	struct baton__what w;
	int ret;

	baton__what(&w, "baton_ring_unlink", name);
	ret = baton__name_check(&w, name);
	if (ret)
		return ret;
	backend = baton__backend_check(&w, backend);
	if (backend < 0)
		return backend;
	return baton__fail(&w, baton__ops(backend)->unlink(name));
}

int baton_ring_fd(const struct baton_ring *r)
{
	int ret = __baton_ring_check(r, 0, 0);

	if (ret)
		return ret;
	return r->fd;
}

int baton_ring_stats(const struct baton_ring *r, struct baton_ring_stats *st)
{
	const struct baton_ring_hdr *h;
	int ret = __baton_ring_check(r, 0, 0);

	if (ret)
		return ret;
	if (!st)
		return -EINVAL;
	h = r->hdr;
	memset(st, 0, sizeof(*st));
	/* Samples only; no ordering between them is promised. */
	st->head = __atomic_load_n(r->head, __ATOMIC_RELAXED);
	st->tail = __atomic_load_n(r->tail, __ATOMIC_RELAXED);
	st->parks_full = __atomic_load_n(&h->parks_full, __ATOMIC_RELAXED);
	st->parks_empty = __atomic_load_n(&h->parks_empty, __ATOMIC_RELAXED);
	st->wakes_of_producer = __atomic_load_n(&h->wakes_of_producer,
						__ATOMIC_RELAXED);
	st->wakes_of_consumer = __atomic_load_n(&h->wakes_of_consumer,
						__ATOMIC_RELAXED);
	st->producer_deaths = __atomic_load_n(&h->producer_deaths,
					      __ATOMIC_RELAXED);
	st->consumer_deaths = __atomic_load_n(&h->consumer_deaths,
					      __ATOMIC_RELAXED);
	st->wake_calls = r->wake_calls;
	st->park_calls = r->park_calls;
	st->poll_arms_of_producer = __atomic_load_n(&h->poll_arms_of_producer,
						    __ATOMIC_RELAXED);
	st->poll_arms_of_consumer = __atomic_load_n(&h->poll_arms_of_consumer,
						    __ATOMIC_RELAXED);
	st->rearms_of_producer = __atomic_load_n(&h->rearms_of_producer,
						 __ATOMIC_RELAXED);
	st->rearms_of_consumer = __atomic_load_n(&h->rearms_of_consumer,
						 __ATOMIC_RELAXED);
	return 0;
}

/* The package version this library was built as (baton_version.h). */
uint32_t baton_version(void)
{
	return BATON_VERSION_NUMBER;
}

/*
 * The ABI version of whatever AUTO resolves to: the module's answer on
 * kmod, the library's own ABI version and what the memfd backend can do
 * otherwise.
 */
int baton_abi_version(uint32_t *abi_version, uint64_t *features)
{
	int backend = baton_backend_resolve(BATON_BACKEND_AUTO);
	uint32_t abi = 0;
	uint64_t feat = 0;
	int ret;

	if (backend < 0)
		return backend;
	ret = baton__ops(backend)->version(&abi, &feat);
	if (ret)
		return ret;
	if (abi_version)
		*abi_version = abi;
	if (features)
		*features = feat;
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * libbaton epoch domains: the API and the kmod backend.
 *
 * This file owns the epoch handle: create, open, register, the mapping of
 * the header and of the participant's own region (kmod: one mmap each,
 * the header read-only; memfd: lib/epoch_memfd.c maps the file), retire,
 * synchronize, poll, collect and the kick the inline exit calls. The
 * read side itself is inline in <baton_epoch.h>.
 *
 * On the kmod backend the kernel is the collector: COLLECT, POLL and
 * SYNCHRONIZE run cycles in the kernel (drain, publish, IPI barrier,
 * scan), and it alone writes the header and the queue heads. Everything
 * the library reads from the shared pages it validates before use.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "epoch_internal.h"

_Static_assert(sizeof(struct baton_epoch_create) >= BATON_EPOCH_CREATE_SIZE_VER0,
	       "baton_epoch_create");
_Static_assert(sizeof(struct baton_epoch_open) >= BATON_EPOCH_OPEN_SIZE_VER0,
	       "baton_epoch_open");
_Static_assert(sizeof(struct baton_epoch_sync) >= BATON_EPOCH_SYNC_SIZE_VER0,
	       "baton_epoch_sync");

int baton__epoch_params_check(const struct baton__what *w,
			      uint32_t max_participants, uint32_t queue_len)
{
	if (!max_participants ||
	    max_participants > BATON_EPOCH_PARTICIPANTS_MAX)
		return baton__reject(w, -EINVAL,
				     "max_participants %u: must be 1 to %d",
				     max_participants,
				     BATON_EPOCH_PARTICIPANTS_MAX);
	if (queue_len < BATON_EPOCH_QUEUE_MIN ||
	    queue_len > BATON_EPOCH_QUEUE_MAX ||
	    (queue_len & (queue_len - 1)))
		return baton__reject(w, -EINVAL,
				     "queue_len %u: must be a power of two from %d to %d",
				     queue_len, BATON_EPOCH_QUEUE_MIN,
				     BATON_EPOCH_QUEUE_MAX);
	return 0;
}

int baton__epoch_params_valid(uint32_t max_participants, uint32_t queue_len)
{
	return baton__epoch_params_check(NULL, max_participants, queue_len);
}

/*
 * The layout a backend handed us must fit what it claims to describe.
 * On memfd any opener may have written it (@file_size: the file's, 0 for
 * the module's layout), so every sum is taken in 64 bits and compared as
 * a difference: no end may wrap to pass. Participants sit a whole number
 * of pages apart, as both backends lay them out, so their 8-byte words
 * stay aligned; on memfd the table lies past the header and inside the
 * file (the offsets there are file offsets).
 */
int baton__epoch_offsets_valid(const struct baton_epoch_offsets *o,
			       uint32_t max_participants, uint32_t queue_len,
			       uint64_t file_size)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t need = (uint64_t)o->q_entries +
			(uint64_t)queue_len * sizeof(struct baton_epoch_entry);

	if (o->queue_len != queue_len || o->hdr_size < page ||
	    o->hdr_size % page || o->self_size % page ||
	    o->part_stride < o->self_size || o->part_stride % page ||
	    need > o->self_size)
		return -EPROTO;
	if ((o->ann | o->q_tail | o->q_head | o->q_entries) & 7 ||
	    (uint64_t)o->ann + 8 > o->q_entries ||
	    (uint64_t)o->q_tail + 8 > o->q_entries ||
	    (uint64_t)o->q_head + 8 > o->q_entries)
		return -EPROTO;
	if (o->table_size != (uint64_t)max_participants * o->part_stride ||
	    o->table_mmap % page)
		return -EPROTO;
	if (file_size && (o->table_mmap < o->hdr_size ||
			  o->table_size > file_size ||
			  o->table_mmap > file_size - o->table_size))
		return -EPROTO;
	return 0;
}

void baton__epoch_bind(struct baton_epoch *d, uint8_t *region, int index)
{
	d->ann = (uint64_t *)(region + d->off.ann);
	d->q_tail = (uint64_t *)(region + d->off.q_tail);
	d->q_head = (const uint64_t *)(region + d->off.q_head);
	d->q_entries = (struct baton_epoch_entry *)(region + d->off.q_entries);
	d->queue_len = d->off.queue_len;
	/* Continue from where the queue stands (memfd may reuse a slot). */
	d->q_local = __atomic_load_n(d->q_tail, __ATOMIC_RELAXED);
	d->q_cached_head = __atomic_load_n(d->q_head, __ATOMIC_ACQUIRE);
	d->index = index;
}

/* ---- kmod backend ---- */

static int copy_name(char dst[BATON_NAME_MAX], const char *name)
{
	int ret = baton__name_valid(name);

	if (ret)
		return ret;
	memset(dst, 0, BATON_NAME_MAX);
	memcpy(dst, name, strlen(name));
	return 0;
}

static int kmod_map_hdr(struct baton_epoch *d)
{
	void *p = mmap(NULL, d->off.hdr_size, PROT_READ, MAP_SHARED, d->fd,
		       (off_t)d->off.hdr_mmap);

	if (p == MAP_FAILED)
		return -errno;
	d->map[0].addr = p;
	d->map[0].len = d->off.hdr_size;
	d->hdr = p;
	if (d->hdr->magic != BATON_EPOCH_MAGIC)
		return -EPROTO;
	d->global = (const uint64_t *)&d->hdr->global;
	d->sync_epoch = (const uint64_t *)&d->hdr->sync_epoch;
	return 0;
}

static int kmod_create(const char *name, const struct baton_epoch_params *p,
		       struct baton_epoch *d)
{
	struct baton_epoch_create c;
	int ret;

	memset(&c, 0, sizeof(c));
	ret = copy_name(c.name, name);
	if (ret)
		return ret;
	c.size = sizeof(c);
	c.max_participants = p->max_participants;
	c.queue_len = p->queue_len;
	c.mode = p->mode;
	ret = baton__dev_ioctl(BATON_IOC_EPOCH_CREATE, &c);
	if (ret)
		return ret;
	d->fd = c.out_fd;
	d->off = c.out_off;
	d->max_participants = p->max_participants;
	return 0;
}

static int kmod_open(const char *name, struct baton_epoch *d)
{
	struct baton_epoch_open o;
	int ret;

	memset(&o, 0, sizeof(o));
	ret = copy_name(o.name, name);
	if (ret)
		return ret;
	o.size = sizeof(o);
	ret = baton__dev_ioctl(BATON_IOC_EPOCH_OPEN, &o);
	if (ret)
		return ret;
	d->fd = o.out_fd;
	d->off = o.out_off;
	d->max_participants = o.out_max_participants;
	return 0;
}

/*
 * REGISTER, then map our region. A mapping that fails (the address space
 * full) leaves the handle registered with the module, which has no
 * unregister: the index is kept, and the next register maps it instead
 * of asking again (EBUSY: this file is registered already).
 */
static int kmod_register(struct baton_epoch *d)
{
	struct baton_epoch_register r;
	void *p;

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	if (d->unmapped_index >= 0)
		r.out_index = (uint32_t)d->unmapped_index;
	else if (ioctl(d->fd, BATON_EPOCH_IOC_REGISTER, &r))
		return -errno;
	p = mmap(NULL, d->off.self_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 d->fd, (off_t)d->off.self_mmap);
	if (p == MAP_FAILED) {
		d->unmapped_index = (int32_t)r.out_index;
		return -errno;
	}
	d->unmapped_index = -1;
	d->map[1].addr = p;
	d->map[1].len = d->off.self_size;
	baton__epoch_bind(d, p, (int)r.out_index);
	return (int)r.out_index;
}

/* ---- the API ---- */

static struct baton_epoch *new_handle(void)
{
	struct baton_epoch *d = calloc(1, sizeof(*d));

	if (d) {
		d->fd = -1;
		d->index = -1;
		d->unmapped_index = -1;
	}
	return d;
}

static void unmap_all(struct baton_epoch *d)
{
	int i;

	for (i = 0; i < 2; i++)
		if (d->map[i].addr)
			munmap(d->map[i].addr, d->map[i].len);
}

static int finish_setup(struct baton_epoch *d, int ret,
			struct baton_epoch **out)
{
	if (!ret && d->backend == BATON_BACKEND_KMOD) {
		ret = baton__epoch_offsets_valid(&d->off, d->max_participants,
						 d->off.queue_len, 0);
		if (!ret)
			ret = baton__epoch_params_valid(d->max_participants,
							d->off.queue_len);
		if (!ret)
			ret = kmod_map_hdr(d);
	}
	if (ret) {
		unmap_all(d);
		if (d->fd >= 0)
			close(d->fd);
		free(d);
		return ret;
	}
	d->magic = BATON__MAGIC_EPOCH;
	*out = d;
	return 0;
}

/*
 * A new domain's parameters, on either backend, as the module checks them
 * (kmod/epoch.c, baton_epoch_create()): every refusal names its field.
 */
static int epoch_create_check(const struct baton__what *w, const char *name,
			      const struct baton_epoch_params *p,
			      struct baton_epoch **out)
{
	int ret = baton__name_check(w, name);

	if (ret)
		return ret;
	if (!p)
		return baton__reject(w, -EINVAL, "params: NULL");
	if (!out)
		return baton__reject(w, -EINVAL, "out: NULL");
	ret = baton__epoch_params_check(w, p->max_participants, p->queue_len);
	if (ret)
		return ret;
	if (p->mode & ~0777U)
		return baton__reject(w, -EINVAL,
				     "mode 0%o: must be permission bits only, within 0777 (no setuid, setgid or sticky bit)",
				     p->mode);
	return 0;
}

int baton_epoch_create(const char *name, const struct baton_epoch_params *p,
		       struct baton_epoch **out)
{
	struct baton__what w;
	struct baton_epoch *d;
	int backend, ret;

	baton__what(&w, "baton_epoch_create", name);
	ret = epoch_create_check(&w, name, p, out);
	if (ret)
		return ret;
	backend = baton__backend_check(&w, p->backend);
	if (backend < 0)
		return backend;
	d = new_handle();
	if (!d)
		return baton__fail(&w, -ENOMEM);
	d->backend = backend;
	snprintf(d->name, sizeof(d->name), "%s", name);
	if (backend == BATON_BACKEND_KMOD)
		ret = kmod_create(name, p, d);
	else
		ret = baton__epoch_memfd_create(name, p, d);
	return baton__fail(&w, finish_setup(d, ret, out));
}

int baton_epoch_open(const char *name, int backend, struct baton_epoch **out)
{
	struct baton__what w;
	struct baton_epoch *d;
	int ret;

	baton__what(&w, "baton_epoch_open", name);
	ret = baton__name_check(&w, name);
	if (ret)
		return ret;
	if (!out)
		return baton__reject(&w, -EINVAL, "out: NULL");
	backend = baton__backend_check(&w, backend);
	if (backend < 0)
		return backend;
	d = new_handle();
	if (!d)
		return baton__fail(&w, -ENOMEM);
	d->backend = backend;
	snprintf(d->name, sizeof(d->name), "%s", name);
	if (backend == BATON_BACKEND_KMOD)
		ret = kmod_open(name, d);
	else
		ret = baton__epoch_memfd_open(name, d);
	return baton__fail(&w, finish_setup(d, ret, out));
}

/* -EBADF: closed (or not an epoch handle); -EINVAL: NULL, not registered. */
int __baton_epoch_check(const struct baton_epoch *d, int participant)
{
	if (!d)
		return -EINVAL;
	if (d->magic != BATON__MAGIC_EPOCH)
		return -EBADF;
	if (participant && d->index < 0)
		return -EINVAL;
	return 0;
}

/*
 * Closing ends the registration (kmod: with the file; memfd: the lock).
 * The handle is poisoned and quarantined, as a ring's (lib/ring.c).
 */
int baton_epoch_close(struct baton_epoch *d)
{
	int ret = __baton_epoch_check(d, 0);

	if (ret)
		return ret;
	d->magic = BATON__MAGIC_DEAD;
	unmap_all(d);
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
	baton__quarantine(d);
	return 0;
}

int baton_epoch_unlink(const char *name, int backend)
{
	struct baton_unlink u;
	int ret;

	backend = baton_backend_resolve(backend);
	if (backend < 0)
		return backend;
	if (backend == BATON_BACKEND_MEMFD)
		return baton__epoch_memfd_unlink(name);
	memset(&u, 0, sizeof(u));
	ret = copy_name(u.name, name);
	if (ret)
		return ret;
	u.size = sizeof(u);
	return baton__dev_ioctl(BATON_IOC_EPOCH_UNLINK, &u);
}

int baton_epoch_fd(const struct baton_epoch *d)
{
	int ret = __baton_epoch_check(d, 0);

	return ret ? ret : d->fd;
}

int baton_epoch_stats(const struct baton_epoch *d,
		      struct baton_epoch_stats *st)
{
	const struct baton_epoch_hdr *h;
	int ret = __baton_epoch_check(d, 0);

	if (ret)
		return ret;
	if (!st)
		return -EINVAL;
	h = d->hdr;

#define LD(f) __atomic_load_n(&h->f, __ATOMIC_RELAXED)
	st->global = LD(global);
	st->frontier = LD(frontier);
	st->collections = LD(collections);
	st->sync_waits = LD(sync_waits);
	st->sync_timeouts = LD(sync_timeouts);
	st->kicks = LD(kicks);
	st->participants = LD(participants);
	st->participant_releases = LD(participant_releases);
	st->completed = LD(completed);
	st->orphaned = LD(orphaned);
	st->orphans_completed = LD(orphans_completed);
	st->bad_words = LD(bad_words);
#undef LD
	st->kick_calls = d->kick_calls;
	return 0;
}

int baton_epoch_register(struct baton_epoch *d)
{
	struct baton__what w;
	int ret = __baton_epoch_check(d, 0);

	if (ret) {
		baton__what(&w, "baton_epoch_register", NULL);
		return baton__reject(&w, ret, d ?
				     "domain: not an open epoch handle" :
				     "domain: NULL handle");
	}
	baton__what(&w, "baton_epoch_register", d->name);
	if (d->index >= 0)
		return baton__reject(&w, -EBUSY,
				     "this handle is already participant %d: one registration per handle (open the domain again for another)",
				     d->index);
	if (d->backend == BATON_BACKEND_KMOD)
		ret = kmod_register(d);
	else
		ret = baton__epoch_memfd_register(d);
	/* Both return the index: baton_epoch_index() tells it from now on. */
	ret = baton__fail(&w, ret);
	return ret < 0 ? ret : 0;
}

int baton_epoch_retire(struct baton_epoch *d, uint64_t handle, uint64_t tag,
		       uint64_t *epoch)
{
	struct baton_epoch_entry *ent;
	uint64_t e;
	int ret = __baton_epoch_check(d, 1);

	if (ret)
		return ret;
	if (d->q_local - d->q_cached_head >= d->queue_len) {
		/* X, matches the collector's release of head. */
		d->q_cached_head = __atomic_load_n(d->q_head, __ATOMIC_ACQUIRE);
		/* A head beyond our tail is not one the collector wrote. */
		if (d->q_local - d->q_cached_head > d->queue_len)
			return -EPROTO;
		if (d->q_local - d->q_cached_head >= d->queue_len)
			return -ENOSPC;	/* never free early: the caller keeps it */
	}
	/*
	 * U: the caller's unlink is visible before we read the epoch, so a
	 * reader that can still reach the object announced no later epoch.
	 * Retire is the slow side; the fence is paid here, not by readers.
	 */
	baton__full_fence();
	e = __atomic_load_n(d->global, __ATOMIC_RELAXED);
	ent = &d->q_entries[d->q_local & (d->queue_len - 1)];
	ent->handle = handle;
	ent->epoch = e;
	ent->tag = tag;
	d->q_local++;
	/* W, matches the collector's acquire of tail: entry before tail. */
	__atomic_store_n(d->q_tail, d->q_local, __ATOMIC_RELEASE);
	if (epoch)
		*epoch = e;
	return 0;
}

int baton_epoch_synchronize(struct baton_epoch *d, uint64_t epoch,
			    int64_t timeout_ns, pid_t *holder)
{
	struct baton_epoch_sync s;
	uint64_t deadline = 0;
	int ret = __baton_epoch_check(d, 0);

	if (ret)
		return ret;
	if (timeout_ns >= 0)
		deadline = baton__now_ns() + (uint64_t)timeout_ns;
	if (holder)
		*holder = 0;
	if (d->backend == BATON_BACKEND_MEMFD)
		return baton__epoch_memfd_synchronize(d, epoch, timeout_ns >= 0,
						      deadline, holder);
	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.flags = timeout_ns >= 0 ? BATON_EPOCH_SYNC_DEADLINE : 0;
	s.epoch = epoch;
	s.deadline_ns = deadline;
	ret = ioctl(d->fd, BATON_EPOCH_IOC_SYNCHRONIZE, &s) ? -errno : 0;
	if (ret == -ETIMEDOUT && holder)
		*holder = s.out_holder_pid;
	return ret;
}

int baton_epoch_destroy_sync(struct baton_epoch *d, uint64_t handle,
			     uint64_t tag, int64_t timeout_ns, pid_t *holder)
{
	uint64_t e;
	int ret;

	ret = baton_epoch_retire(d, handle, tag, &e);
	if (ret)
		return ret;
	return baton_epoch_synchronize(d, e, timeout_ns, holder);
}

int baton_epoch_poll(struct baton_epoch *d, uint64_t epoch)
{
	struct baton_epoch_poll p;
	uint64_t f;
	int ret = __baton_epoch_check(d, 0);

	if (ret)
		return ret;
	if (d->backend == BATON_BACKEND_MEMFD) {
		if (epoch > baton_epoch_global(d))
			return -EINVAL;
		f = __atomic_load_n(&d->hdr->frontier, __ATOMIC_ACQUIRE);
		if (epoch <= f)
			return 0;
		/* Never blocks: a cycle under way elsewhere, the frontier. */
		ret = baton__epoch_memfd_try_collect(d, &f);
		if (ret == -EBUSY)
			f = __atomic_load_n(&d->hdr->frontier,
					    __ATOMIC_ACQUIRE);
		else if (ret)
			return ret;
		return epoch <= f ? 0 : -EAGAIN;
	}
	memset(&p, 0, sizeof(p));
	p.size = sizeof(p);
	p.epoch = epoch;
	if (ioctl(d->fd, BATON_EPOCH_IOC_POLL, &p))
		return -errno;
	return p.out_quiescent ? 0 : -EAGAIN;
}

int baton_epoch_collect(struct baton_epoch *d, uint64_t *frontier,
			uint64_t *completed)
{
	struct baton_epoch_collect c;
	int ret = __baton_epoch_check(d, 0);

	if (ret)
		return ret;
	if (d->backend == BATON_BACKEND_MEMFD)
		return baton__epoch_memfd_collect(d, frontier, completed, NULL);
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	if (ioctl(d->fd, BATON_EPOCH_IOC_COLLECT, &c))
		return -errno;
	if (frontier)
		*frontier = c.out_frontier;
	if (completed)
		*completed = c.out_completed;
	return 0;
}

void __baton_epoch_kick(struct baton_epoch *d)
{
	d->kick_calls++;
	if (d->backend == BATON_BACKEND_MEMFD)
		baton__epoch_memfd_kick(d);
	else
		ioctl(d->fd, BATON_EPOCH_IOC_KICK, 0);
}

/*
 * The retry of baton_epoch_enter() after its re-check failed. The word
 * announced @stale, an epoch a scan may have seen: a synchronizer that
 * parked on it would wait for this reader's exit, and the re-announcement
 * below is that exit. So, as in baton_epoch_exit(): store (O, the new
 * announcement replaces @stale), then load sync_epoch (T) and kick if
 * @stale is at or below it. A load that misses the raise ran before the
 * next cycle's IPI, which drained the store: its scan sees the new epoch.
 * Out of line: taken only when an epoch is published during an enter.
 */
uint64_t __baton_epoch_reenter(struct baton_epoch *d, uint64_t stale)
{
	uint64_t e;

	for (;;) {
		e = __atomic_load_n(d->global, __ATOMIC_RELAXED);
		__atomic_store_n(d->ann, BATON_EPOCH_ANN(e), __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (stale <= __atomic_load_n(d->sync_epoch, __ATOMIC_RELAXED))
			__baton_epoch_kick(d);
		if (__atomic_load_n(d->global, __ATOMIC_ACQUIRE) == e)
			return e;
		stale = e;
	}
}

// SPDX-License-Identifier: MIT
/*
 * lib/ctl/memfd.c: batonctl's view of memfd-backend objects, the files
 * /dev/shm/baton.NAME, /dev/shm/baton-epoch.NAME and
 * /dev/shm/baton-pool.NAME: headers, indices, waiting words, participant
 * slots, free-queue indices, and the OFD locks that say who is attached,
 * all read-only; and unlink, the one thing batonctl changes.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batonctl.h"
#include "../internal.h"

/* memfd backend naming and lock bytes: lib/backend_memfd.c, epoch_memfd.c */
#define SHM_DIR			"/dev/shm"
#define SHM_RING_PREFIX		"baton."
#define SHM_EPOCH_PREFIX	"baton-epoch."
#define SHM_POOL_PREFIX		"baton-pool."
#define MEMFD_LOCK_PRODUCER	0	/* SPSC producer's OFD lock byte */
#define MEMFD_LOCK_CONSUMER	1
#define MEMFD_LOCK_PRODUCER0	16	/* MPSC producer k: byte 16 + k */
/* pool holder k's OFD lock byte (lib/pool_memfd.c, LOCK_HOLDER) */
#define MEMFD_POOL_LOCK_HOLDER0	16
/* a pool file's magic (lib/pool_internal.h, BATON__POOL_MEMFD_MAGIC) */
#define MEMFD_POOL_MAGIC	0x334c4f4f5042ULL
/* participant i's OFD lock byte: base + i */
#define MEMFD_EPOCH_LOCK_BASE	(1LL << 40)
/* read-locked by every open domain handle */
#define MEMFD_EPOCH_HANDLE_LOCK	(MEMFD_EPOCH_LOCK_BASE - 2)
/* Participant region words (lib/epoch_internal.h, the same on kmod). */
#define MEMFD_EPOCH_L_ANN	0
#define MEMFD_EPOCH_L_TAIL	64
#define MEMFD_EPOCH_L_HEAD	128
#define MEMFD_EPOCH_L_PID	176

/* state: nothing on this backend sets the *_GONE bits */
static const char *const memfd_ring_unavailable[] = {
	"state", "peers", "parks_full", "parks_empty", "wakes_of_producer",
	"wakes_of_consumer", "producer_deaths", "consumer_deaths",
	"tombstones", "scribbles", "events", NULL,
};

static const char *const memfd_epoch_unavailable[] = {
	"events", NULL,
};

/* a holder lock says who holds, never which process */
static const char *const memfd_pool_unavailable[] = {
	"peers", "events", NULL,
};

/* The file name prefix of @obj's memfd objects in /dev/shm. */
static const char *memfd_prefix(enum obj_kind obj)
{
	switch (obj) {
	case OBJ_RING:
		return SHM_RING_PREFIX;
	case OBJ_EPOCH:
		return SHM_EPOCH_PREFIX;
	default:
		return SHM_POOL_PREFIX;
	}
}

bool name_valid(const char *s)
{
	size_t n = strlen(s), i;

	if (n < 1 || n >= BATON_NAME_MAX)
		return false;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-'))
			return false;
	}
	return true;
}

/*
 * Read-only access: O_RDONLY and pread(), never a writable mapping, and
 * never a mapping at all, so a file truncated under us is a short read
 * instead of SIGBUS. Every word is copied once and checked before use.
 */
static bool pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	return pread(fd, buf, len, (off_t)off) == (ssize_t)len;
}

static bool in_file(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/* Is byte @at of the file OFD-locked by anyone (a role or a slot held)? */
static bool memfd_locked(int fd, long long at)
{
	struct flock fl = {
		.l_type = F_WRLCK,
		.l_whence = SEEK_SET,
		.l_start = (off_t)at,
		.l_len = 1,
	};

	if (fcntl(fd, F_OFD_GETLK, &fl))
		return false;
	return fl.l_type != F_UNLCK;
}

static void memfd_owner(struct rec *r, const struct stat *st, int a_uid,
			int a_gid, int a_mode)
{
	rec_set(r, a_uid, st->st_uid);
	rec_set(r, a_gid, st->st_gid);
	rec_set(r, a_mode, st->st_mode & 0777);
}

static int memfd_ring_read(int fd, const struct stat *st, struct rec *r)
{
	uint64_t size = (uint64_t)st->st_size, head, tail, k;
	struct baton_ring_hdr h;
	struct baton_mpsc_hdr mh;
	uint32_t pw = 0, cw = 0, producers = 0;
	const struct baton_ring_offsets *o = &h.off;

	if (!pread_full(fd, &h, sizeof(h), 0) || h.magic != BATON_RING_MAGIC ||
	    h.abi_version != BATON_ABI_VERSION ||
	    (h.kind != BATON_RING_SPSC && h.kind != BATON_RING_MPSC) ||
	    h.slot_count < BATON_SLOTS_MIN || h.slot_count > BATON_SLOTS_MAX ||
	    (h.slot_count & (h.slot_count - 1)) ||
	    !in_file(o->prod_mmap, o->prod_size, size) ||
	    !in_file(o->cons_mmap, o->cons_size, size) ||
	    (uint64_t)o->prod_tail + 8 > o->prod_size ||
	    (uint64_t)o->cons_head + 8 > o->cons_size ||
	    (uint64_t)o->prod_waiting + 4 > o->prod_size ||
	    (uint64_t)o->cons_waiting + 4 > o->cons_size)
		return -EPROTO;
	if (!pread_full(fd, &tail, 8, o->prod_mmap + o->prod_tail) ||
	    !pread_full(fd, &head, 8, o->cons_mmap + o->cons_head) ||
	    !pread_full(fd, &pw, 4, o->prod_mmap + o->prod_waiting) ||
	    !pread_full(fd, &cw, 4, o->cons_mmap + o->cons_waiting))
		return -EPROTO;
	rec_set(r, BATON_A_RING_KIND, h.kind);
	rec_set(r, BATON_A_RING_SLOT_COUNT, h.slot_count);
	rec_set(r, BATON_A_RING_SLOT_SIZE, h.slot_size);
	rec_set(r, BATON_A_RING_HEAD, head);
	rec_set(r, BATON_A_RING_TAIL, tail);
	/* clamped, as the kernel does: a scribbled index is not a size */
	rec_set(r, BATON_A_RING_OCCUPANCY, tail - head <= h.slot_count ?
		tail - head : (tail > head ? h.slot_count : 0));
	rec_set(r, BATON_A_RING_MSGS_CONSUMED, head);
	rec_set(r, BATON_A_RING_MSGS_RESERVED, tail);
	/*
	 * The waiting words (lib/internal.h): BATON_WAIT_PARKED while a
	 * parker is armed, the park generation above it, which stays when
	 * a wake takes the bit down or a parker dies.
	 */
	rec_set(r, BATON_A_RING_PARKED_CONSUMERS,
		cw & BATON_WAIT_PARKED ? 1 : 0);
	if (h.kind == BATON_RING_MPSC) {
		if (o->mpsc_hdr % 8 ||
		    (uint64_t)o->mpsc_hdr + sizeof(mh) > o->hdr_size ||
		    !pread_full(fd, &mh, sizeof(mh), o->mpsc_hdr) ||
		    !mh.max_producers ||
		    mh.max_producers > BATON_MPSC_PRODUCERS_MAX)
			return -EPROTO;
		rec_set(r, BATON_A_RING_MAX_PRODUCERS, mh.max_producers);
		/* the producers' summary: their number above the bit */
		pw = pw & BATON_WAIT_PARKED ? pw >> BATON__WAIT_GEN_SHIFT : 0;
		rec_set(r, BATON_A_RING_PARKED_PRODUCERS,
			pw <= mh.max_producers ? pw : mh.max_producers);
		for (k = 0; k < mh.max_producers; k++)
			producers += memfd_locked(fd, MEMFD_LOCK_PRODUCER0 +
						      (long long)k);
	} else {
		rec_set(r, BATON_A_RING_MAX_PRODUCERS, 1);
		rec_set(r, BATON_A_RING_PARKED_PRODUCERS,
			pw & BATON_WAIT_PARKED ? 1 : 0);
		producers = memfd_locked(fd, MEMFD_LOCK_PRODUCER);
	}
	rec_set(r, BATON_A_RING_PRODUCERS, producers);
	rec_set(r, BATON_A_RING_CONSUMERS,
		memfd_locked(fd, MEMFD_LOCK_CONSUMER));
	memfd_owner(r, st, BATON_A_RING_UID, BATON_A_RING_GID,
		    BATON_A_RING_MODE);
	r->unavailable = memfd_ring_unavailable;
	return 0;
}

/* One participant region: announcement, queue, registration, pid. */
static int memfd_participant(int fd, const struct baton_epoch_hdr *h,
			     uint64_t size, uint32_t i, struct rec *r,
			     uint64_t *oldest, uint32_t *oldest_pid)
{
	const struct baton_epoch_offsets *o = &h->off;
	uint64_t base = o->table_mmap + (uint64_t)i * o->part_stride;
	uint64_t ann, tail, qhead, pending;
	uint32_t pid;
	bool held = memfd_locked(fd, MEMFD_EPOCH_LOCK_BASE + i);
	struct rec *p;

	if (!in_file(base, MEMFD_EPOCH_L_PID + 4, size) ||
	    !pread_full(fd, &ann, 8, base + MEMFD_EPOCH_L_ANN) ||
	    !pread_full(fd, &tail, 8, base + MEMFD_EPOCH_L_TAIL) ||
	    !pread_full(fd, &qhead, 8, base + MEMFD_EPOCH_L_HEAD) ||
	    !pread_full(fd, &pid, 4, base + MEMFD_EPOCH_L_PID))
		return -EPROTO;
	/* a scribbled queue counts as full, never as negative */
	pending = tail - qhead <= h->queue_len ? tail - qhead : h->queue_len;
	if (!held) {
		if (pending) {
			rec_set(r, BATON_A_EPOCH_ORPHANS,
				rec_get(r, BATON_A_EPOCH_ORPHANS) + 1);
			rec_set(r, BATON_A_EPOCH_PENDING,
				rec_get(r, BATON_A_EPOCH_PENDING) + pending);
		}
		return 0;
	}
	rec_set(r, BATON_A_EPOCH_PARTICIPANTS,
		rec_get(r, BATON_A_EPOCH_PARTICIPANTS) + 1);
	rec_set(r, BATON_A_EPOCH_PENDING,
		rec_get(r, BATON_A_EPOCH_PENDING) + pending);
	p = rec_add_peer(r);
	if (!p)
		return -ENOMEM;
	rec_set(p, BATON_A_PEER_PID, pid);
	rec_set(p, BATON_A_PEER_INDEX, i);
	rec_set(p, BATON_A_PEER_PENDING, pending);
	if (ann & BATON_EPOCH_ANN_ACTIVE) {
		rec_set(p, BATON_A_PEER_ANNOUNCED, ann >> 1);
		rec_set(r, BATON_A_EPOCH_ACTIVE_READERS,
			rec_get(r, BATON_A_EPOCH_ACTIVE_READERS) + 1);
		if (ann >> 1 < *oldest) {
			*oldest = ann >> 1;
			*oldest_pid = pid;
		}
	}
	return 0;
}

static int memfd_epoch_read(int fd, const struct stat *st, struct rec *r)
{
	uint64_t size = (uint64_t)st->st_size, oldest = UINT64_MAX;
	const struct baton_epoch_offsets *o;
	struct baton_epoch_hdr h;
	uint32_t i, oldest_pid = 0;
	int ret;

	if (!pread_full(fd, &h, sizeof(h), 0) ||
	    h.magic != BATON_EPOCH_MAGIC ||
	    h.abi_version != BATON_ABI_VERSION || !h.max_participants ||
	    h.max_participants > BATON_EPOCH_PARTICIPANTS_MAX ||
	    h.queue_len < BATON_EPOCH_QUEUE_MIN ||
	    h.queue_len > BATON_EPOCH_QUEUE_MAX)
		return -EPROTO;
	o = &h.off;
	if (o->part_stride < MEMFD_EPOCH_L_PID + 4 ||
	    !in_file(o->table_mmap,
		     (uint64_t)h.max_participants * o->part_stride, size))
		return -EPROTO;
	memfd_owner(r, st, BATON_A_EPOCH_UID, BATON_A_EPOCH_GID,
		    BATON_A_EPOCH_MODE);
	rec_set(r, BATON_A_EPOCH_MAX_PARTICIPANTS, h.max_participants);
	rec_set(r, BATON_A_EPOCH_QUEUE_LEN, h.queue_len);
	rec_set(r, BATON_A_EPOCH_GLOBAL, h.global);
	rec_set(r, BATON_A_EPOCH_FRONTIER, h.frontier);
	rec_set(r, BATON_A_EPOCH_SYNC_WAITERS, h.sync_waiters);
	rec_set(r, BATON_A_EPOCH_SYNC_WAITS, h.sync_waits);
	rec_set(r, BATON_A_EPOCH_SYNC_TIMEOUTS, h.sync_timeouts);
	rec_set(r, BATON_A_EPOCH_PARTICIPANTS, 0);
	rec_set(r, BATON_A_EPOCH_ACTIVE_READERS, 0);
	rec_set(r, BATON_A_EPOCH_PENDING, 0);
	rec_set(r, BATON_A_EPOCH_ORPHANS, 0);
	for (i = 0; i < h.max_participants; i++) {
		ret = memfd_participant(fd, &h, size, i, r, &oldest,
					&oldest_pid);
		if (ret)
			return ret;
	}
	r->held = memfd_locked(fd, MEMFD_EPOCH_HANDLE_LOCK);
	if (oldest != UINT64_MAX) {
		rec_set(r, BATON_A_EPOCH_OLDEST, oldest);
		rec_set(r, BATON_A_EPOCH_OLDEST_PID, oldest_pid);
	}
	r->unavailable = memfd_epoch_unavailable;
	return 0;
}

/*
 * The COLD buffers of a class of a pool file, its descriptors read in
 * chunks (netlink.rst, "Pool attributes"); -1 if they are not all there.
 */
static int64_t memfd_pool_cold(int fd, const struct baton_pool_hdr *h,
			       const struct baton_pool_class_layout *l)
{
	struct baton_pool_desc d[256];
	uint64_t at = h->ctl_mmap + l->ctl_off + BATON_POOL_Q_ENTRIES +
		      (uint64_t)l->qcap * sizeof(struct baton_pool_qent);
	uint32_t j, k, n;
	int64_t cold = 0;

	if (h->ctl_size - l->ctl_off < BATON_POOL_Q_ENTRIES +
	    ((uint64_t)l->qcap + l->count) * sizeof(d[0]))
		return -1;
	for (j = 0; j < l->count; j += n) {
		n = l->count - j < 256 ? l->count - j : 256;
		if (!pread_full(fd, d, n * sizeof(d[0]), at + j * sizeof(d[0])))
			return -1;
		for (k = 0; k < n; k++)
			cold += BATON_POOL_S_KIND(d[k].state) == BATON_POOL_COLD;
	}
	return cold;
}

/*
 * One class of a pool file: its layout from the header copy, checked
 * against the control region, and its free depth from the head and tail
 * (read once each, head first, and clamped as the module clamps them:
 * netlink.rst, "Pool attributes"). False if the layout is not one the
 * library could have written.
 */
static bool memfd_pool_class(int fd, const struct baton_pool_hdr *h,
			     uint32_t i, struct rec *r)
{
	const struct baton_pool_class_layout *l = &h->classes[i];
	uint64_t head, tail, blk = h->ctl_mmap + l->ctl_off;
	struct rec *c;
	int64_t cold;

	if (l->buf_shift < BATON_POOL_SHIFT_MIN ||
	    l->buf_shift > BATON_POOL_SHIFT_MAX || !l->count ||
	    l->count > BATON_POOL_COUNT_MAX || l->qcap < 2 * l->count ||
	    (l->qcap & (l->qcap - 1)) ||
	    l->ctl_off > h->ctl_size ||
	    h->ctl_size - l->ctl_off < BATON_POOL_Q_ENTRIES)
		return false;
	if (!pread_full(fd, &head, sizeof(head), blk + BATON_POOL_Q_HEAD) ||
	    !pread_full(fd, &tail, sizeof(tail), blk + BATON_POOL_Q_TAIL))
		return false;
	c = rec_add_class(r);
	if (!c)
		return false;
	rec_set(c, BATON_A_CLASS_INDEX, i);
	rec_set(c, BATON_A_CLASS_BUF_SIZE, 1ULL << l->buf_shift);
	rec_set(c, BATON_A_CLASS_COUNT, l->count);
	rec_set(c, BATON_A_CLASS_FREE,
		tail < head || tail - head > l->qcap ? 0 :
		tail - head < l->count ? tail - head : l->count);
	cold = memfd_pool_cold(fd, h, l);
	if (cold >= 0)
		rec_set(c, BATON_A_CLASS_COLD, (uint64_t)cold);
	return true;
}

/*
 * A pool file: the header (the module's layout, kept by the holders),
 * each class, and who holds it (the holder locks of lib/pool_memfd.c).
 */
static int memfd_pool_read(int fd, const struct stat *st, struct rec *r)
{
	struct baton_pool_hdr h;
	uint32_t i, holders = 0;

	if (!pread_full(fd, &h, sizeof(h), 0))
		return -EPROTO;
	if (h.magic != MEMFD_POOL_MAGIC || !h.nr_classes ||
	    h.nr_classes > BATON_POOL_CLASSES_MAX || !h.max_holders ||
	    h.max_holders > BATON_POOL_HOLDERS_MAX ||
	    !in_file(h.ctl_mmap, h.ctl_size, (uint64_t)st->st_size))
		return -EPROTO;
	memfd_owner(r, st, BATON_A_POOL_UID, BATON_A_POOL_GID,
		    BATON_A_POOL_MODE);
	rec_set(r, BATON_A_POOL_NR_CLASSES, h.nr_classes);
	rec_set(r, BATON_A_POOL_DECAY_MS, h.decay_ms);
	rec_set(r, BATON_A_POOL_KEEP, h.keep);
	rec_set(r, BATON_A_POOL_MAX_HOLDERS, h.max_holders);
	rec_set(r, BATON_A_POOL_DATA_SIZE, h.data_size);
	rec_set(r, BATON_A_POOL_HOLDER_RELEASES, h.holder_releases);
	rec_set(r, BATON_A_POOL_RECLAIMED, h.reclaimed);
	rec_set(r, BATON_A_POOL_REPAIRED, h.repaired);
	rec_set(r, BATON_A_POOL_DECAYED, h.decayed);
	rec_set(r, BATON_A_POOL_DECAYED_BYTES, h.decayed_bytes);
	rec_set(r, BATON_A_POOL_DECAY_TICKS, h.decay_ticks);
	rec_set(r, BATON_A_POOL_BAD_WORDS, h.bad_words);
	for (i = 0; i < h.nr_classes; i++)
		if (!memfd_pool_class(fd, &h, i, r))
			return -EPROTO;
	/* the locks, not the header's count: a dead holder's lock is gone */
	for (i = 0; i < h.max_holders; i++)
		holders += memfd_locked(fd, MEMFD_POOL_LOCK_HOLDER0 + i);
	rec_set(r, BATON_A_POOL_HOLDERS, holders);
	r->unavailable = memfd_pool_unavailable;
	return 0;
}

static int name_attr_of(enum obj_kind obj)
{
	switch (obj) {
	case OBJ_RING:
		return BATON_A_RING_NAME;
	case OBJ_EPOCH:
		return BATON_A_EPOCH_NAME;
	default:
		return BATON_A_POOL_NAME;
	}
}

/* Open /dev/shm/<prefix><name> read-only and fill @r; negative errno. */
int memfd_read(enum obj_kind obj, const char *name, struct rec *r)
{
	const char *prefix = memfd_prefix(obj);
	char path[sizeof(SHM_DIR) + sizeof(SHM_EPOCH_PREFIX) + BATON_NAME_MAX];
	struct stat st;
	int fd, ret;

	if (!name_valid(name))
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/%s%s", SHM_DIR, prefix, name);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	memset(r, 0, sizeof(*r));
	r->obj = obj;
	r->backend = BE_MEMFD;
	snprintf(r->name, sizeof(r->name), "%s", name);
	rec_set(r, name_attr_of(obj), 1);
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		ret = -EPROTO;
	else if (obj == OBJ_RING)
		ret = memfd_ring_read(fd, &st, r);
	else if (obj == OBJ_EPOCH)
		ret = memfd_epoch_read(fd, &st, r);
	else
		ret = memfd_pool_read(fd, &st, r);
	close(fd);
	if (ret)
		rec_free(r);
	return ret;
}

/*
 * Remove the name of a memfd object, as baton_ring_unlink() and
 * baton_epoch_unlink() do: holders keep the file until they close it.
 * /dev/shm is sticky, so only the file's owner or root may; unlink(2)
 * says EPERM for that and the module EACCES, which is what we say too.
 */
int memfd_unlink(enum obj_kind obj, const char *name)
{
	const char *prefix = memfd_prefix(obj);
	char path[sizeof(SHM_DIR) + sizeof(SHM_EPOCH_PREFIX) + BATON_NAME_MAX];

	if (!name_valid(name))
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/%s%s", SHM_DIR, prefix, name);
	if (unlink(path))
		return errno == EPERM ? -EACCES : -errno;
	return 0;
}

/* What list and show say of a file of @obj's kind that failed its checks. */
void memfd_say_unreadable(enum obj_kind obj, const char *name, int err)
{
	fprintf(stderr, "batonctl: %s/%s%s: not a readable baton object: %s\n",
		SHM_DIR, memfd_prefix(obj), name, strerror(-err));
}

/* Append every memfd object of kind @obj to @rp (unreadable ones warn). */
void memfd_scan(enum obj_kind obj, struct reply *rp)
{
	const char *prefix = memfd_prefix(obj);
	size_t plen = strlen(prefix);
	struct dirent *de;
	struct rec r, *grown;
	DIR *dir;
	int ret;

	dir = opendir(SHM_DIR);
	if (!dir)
		return;
	while ((de = readdir(dir))) {
		if (strncmp(de->d_name, prefix, plen) ||
		    !name_valid(de->d_name + plen))
			continue;
		ret = memfd_read(obj, de->d_name + plen, &r);
		if (ret) {
			if (ret != -ENOENT)
				memfd_say_unreadable(obj, de->d_name + plen, ret);
			continue;
		}
		grown = realloc(rp->recs, (rp->nrecs + 1) * sizeof(*grown));
		if (!grown) {
			rec_free(&r);
			break;
		}
		rp->recs = grown;
		rp->recs[rp->nrecs++] = r;
	}
	closedir(dir);
}

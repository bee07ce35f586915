// SPDX-License-Identifier: MIT
/*
 * libbaton names over time: open-or-create, and open with a timeout that
 * waits for the name to be created, for rings and epoch domains, on both
 * backends.
 *
 * Open-or-create needs no lock of its own: create is already atomic on
 * both backends (kmod: the registry's mutex; memfd: linkat() of a fully
 * built file, which fails with EEXIST on a taken name), so of two callers
 * that both found the name missing exactly one creates and the other's
 * create says EEXIST, after which it opens. A name unlinked in between
 * sends a caller round again.
 *
 * Waiting for a name without polling:
 *  - kmod: BATON_IOC_NAME_WAIT sleeps in the module on the registry's
 *    wait queue, woken by every create (kmod/owner.c). The module looks
 *    the name up under the registry lock before it sleeps, so a create
 *    between our failed open and the ioctl is not missed. (The netlink
 *    "created" event would do too, but needs a socket, a multicast group
 *    and credentials for visibility; one ioctl needs none of that.)
 *  - memfd: inotify on /dev/shm, IN_CREATE and IN_MOVED_TO (linkat() of
 *    the finished file is a create). The watch is added before the open
 *    is tried, so a name that appears after the try is an event in the
 *    queue, and one that appeared before it is found by the open.
 * Either way: try to open; only ENOENT sends us to wait; after a wake
 * try again (the name may have been unlinked since, or be another one).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "internal.h"
#include "epoch_internal.h"

/* Rounds of open-then-create before giving up on a name others churn. */
#define OPEN_OR_CREATE_TRIES	64

#define SHM_DIR		"/dev/shm"

_Static_assert(sizeof(struct baton_name_wait) >= BATON_NAME_WAIT_SIZE_VER0,
	       "baton_name_wait");

/* One kind of named object: how to open it and where it lives. */
struct named_kind {
	uint32_t nl_kind;		/* BATON_NAME_RING or _EPOCH */
	const char *shm_prefix;		/* memfd: file name prefix */
	int (*open)(const char *name, void *arg);	/* 0 or -errno */
};


/* kmod: sleep in the module until the name exists (or not any more). */
static int kmod_wait_name(const struct named_kind *k, const char *name,
			  int has_deadline, uint64_t deadline)
{
	struct baton_name_wait nw;
	int ret;

	memset(&nw, 0, sizeof(nw));
	nw.size = sizeof(nw);
	nw.kind = k->nl_kind;
	nw.flags = has_deadline ? BATON_NAME_WAIT_DEADLINE : 0;
	nw.deadline_ns = has_deadline ? deadline : 0;
	memcpy(nw.name, name, strlen(name));	/* checked: < BATON_NAME_MAX */
	ret = baton__dev_ioctl(BATON_IOC_NAME_WAIT, &nw);
	/* A module from before BATON_FEAT_NAME_WAIT. */
	return ret == -ENOTTY ? -EOPNOTSUPP : ret;
}

static int open_kmod(const struct named_kind *k, const char *name,
		     int has_deadline, uint64_t deadline, void *arg)
{
	int ret;

	for (;;) {
		ret = k->open(name, arg);
		if (ret != -ENOENT)
			return ret;
		if (has_deadline && baton__now_ns() >= deadline)
			return -ETIMEDOUT;
		ret = kmod_wait_name(k, name, has_deadline, deadline);
		if (ret)
			return ret;
	}
}

/*
 * memfd: whether the inotify events in @buf (@len bytes) may concern
 * @file: its name, or an overflow that lost events.
 */
static int events_name(const char *buf, ssize_t len, const char *file)
{
	const struct inotify_event *ev;
	ssize_t off;

	for (off = 0; off < len;
	     off += (ssize_t)(sizeof(*ev) + ev->len)) {
		ev = (const struct inotify_event *)(const void *)(buf + off);
		if (ev->mask & IN_Q_OVERFLOW)
			return 1;
		if (ev->len && !strcmp(ev->name, file))
			return 1;
	}
	return 0;
}

/* Milliseconds left until @deadline for poll(), rounded up; -1: none. */
static int poll_ms(int has_deadline, uint64_t deadline)
{
	uint64_t now, left;

	if (!has_deadline)
		return -1;
	now = baton__now_ns();
	if (now >= deadline)
		return 0;
	left = (deadline - now + 999999) / 1000000;
	return left > INT_MAX ? INT_MAX : (int)left;
}

/* Sleep until an event about @file arrives: 0, -ETIMEDOUT, -EINTR. */
static int inotify_wait_file(int ifd, const char *file, int has_deadline,
			     uint64_t deadline)
{
	char buf[4096] __attribute__((aligned(8)));

	for (;;) {
		struct pollfd pfd = { .fd = ifd, .events = POLLIN };
		int ms = poll_ms(has_deadline, deadline);
		ssize_t n;
		int ret = poll(&pfd, 1, ms);

		if (ret < 0)
			return -errno;
		if (ret == 0)
			return -ETIMEDOUT;
		n = read(ifd, buf, sizeof(buf));
		if (n < 0 && errno != EAGAIN)
			return -errno;
		if (n > 0 && events_name(buf, n, file))
			return 0;
	}
}

static int open_memfd(const struct named_kind *k, const char *name,
		      int has_deadline, uint64_t deadline, void *arg)
{
	char file[BATON_NAME_MAX + 32];
	int ifd, ret;

	ret = k->open(name, arg);
	if (ret != -ENOENT || (has_deadline && baton__now_ns() >= deadline))
		return ret == -ENOENT ? -ETIMEDOUT : ret;
	snprintf(file, sizeof(file), "%s%s", k->shm_prefix, name);
	ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (ifd < 0)
		return -errno;
	/* The watch first, then the open: nothing falls between them. */
	if (inotify_add_watch(ifd, SHM_DIR, IN_CREATE | IN_MOVED_TO) < 0) {
		ret = errno == ENOENT ? -ENODEV : -errno;
		goto out;
	}
	for (;;) {
		ret = k->open(name, arg);
		if (ret != -ENOENT)
			break;
		ret = inotify_wait_file(ifd, file, has_deadline, deadline);
		if (ret)
			break;
	}
out:
	close(ifd);
	return ret;
}

static int open_waiting(const struct baton__what *w,
			const struct named_kind *k, const char *name,
			int backend, int64_t timeout_ns, void *arg)
{
	uint64_t deadline = 0;
	int has = baton__deadline_from(timeout_ns, &deadline);
	int ret;

	if (backend == BATON_BACKEND_KMOD)
		ret = open_kmod(k, name, has, deadline, arg);
	else
		ret = open_memfd(k, name, has, deadline, arg);
	if (ret == -EOPNOTSUPP)
		baton__log(BATON_LOG_WARN,
			   "libbaton: %s: the module cannot wait for a name (no BATON_IOC_NAME_WAIT: older than this library)\n",
			   w->buf);
	else if (ret == -ETIMEDOUT)
		baton__log(BATON_LOG_DEBUG,
			   "libbaton: %s: no such name within %lld ns\n",
			   w->buf, (long long)timeout_ns);
	return ret;
}

/* ---- rings ---- */

struct ring_open_arg {
	int role;
	int backend;
	struct baton_ring **out;
};

static int ring_open(const char *name, void *arg)
{
	struct ring_open_arg *a = arg;

	return baton_ring_open(name, a->role, a->backend, a->out);
}

static const struct named_kind ring_kind = {
	.nl_kind = BATON_NAME_RING,
	.shm_prefix = "baton.",
	.open = ring_open,
};

int baton_ring_open_timeout(const char *name, int role, int backend,
			    int64_t timeout_ns, struct baton_ring **out)
{
	struct ring_open_arg a = { .role = role, .out = out };
	struct baton__what w;
	int ret;

	baton__what(&w, "baton_ring_open_timeout", name);
	ret = baton__name_check(&w, name);
	if (ret)
		return ret;
	/* Role and out: baton_ring_open() names them, before any wait. */
	if (role != BATON_ROLE_PRODUCER && role != BATON_ROLE_CONSUMER)
		return baton_ring_open(name, role, backend, out);
	a.backend = baton__backend_check(&w, backend);
	if (a.backend < 0)
		return a.backend;
	return open_waiting(&w, &ring_kind, name, a.backend, timeout_ns, &a);
}

/* An existing ring must be the one @p describes; -EEXIST names the field. */
static int ring_matches(const struct baton__what *w,
			const struct baton_ring *r,
			const struct baton_ring_params *p)
{
	const char *field = NULL;
	uint32_t want = 0, have = 0;

	if (r->kind != p->kind)
		field = "kind", want = p->kind, have = r->kind;
	else if (r->slot_count != p->slot_count)
		field = "slot_count", want = p->slot_count,
		have = r->slot_count;
	else if (r->slot_size != p->slot_size)
		field = "slot_size", want = p->slot_size, have = r->slot_size;
	else if (p->kind == BATON_RING_MPSC &&
		 r->max_producers != p->max_producers)
		field = "max_producers", want = p->max_producers,
		have = r->max_producers;
	if (!field)
		return 0;
	baton__log(BATON_LOG_WARN,
		   "libbaton: %s: %s %u: the existing ring of that name has %s %u\n",
		   w->buf, field, want, field, have);
	return -EEXIST;
}

int baton_ring_open_or_create(const char *name,
			      const struct baton_ring_params *p, int role,
			      struct baton_ring **out, int *created)
{
	struct baton__what w;
	int i, ret;

	baton__what(&w, "baton_ring_open_or_create", name);
	if (created)
		*created = 0;
	/* The rules first, whether or not the ring exists. */
	ret = baton__name_check(&w, name);
	if (ret)
		return ret;
	if (!p)
		return baton__reject(&w, -EINVAL, "params: NULL");
	ret = baton__ring_params_check(&w, p);
	if (ret)
		return ret;
	for (i = 0; i < OPEN_OR_CREATE_TRIES; i++) {
		ret = baton_ring_open(name, role, p->backend, out);
		if (!ret) {
			ret = ring_matches(&w, *out, p);
			if (ret) {
				baton_ring_close(*out);
				*out = NULL;
			}
			return ret;
		}
		if (ret != -ENOENT)
			return ret;
		ret = baton_ring_create(name, p, role, out);
		if (ret != -EEXIST) {
			if (!ret && created)
				*created = 1;
			return ret;
		}
		/* Another caller created it after our open: open it. */
	}
	return baton__fail(&w, ret);
}

/* ---- epoch domains ---- */

struct epoch_open_arg {
	int backend;
	struct baton_epoch **out;
};

static int epoch_open_arg(const char *name, void *arg)
{
	struct epoch_open_arg *a = arg;

	return baton_epoch_open(name, a->backend, a->out);
}

static const struct named_kind epoch_kind = {
	.nl_kind = BATON_NAME_EPOCH,
	.shm_prefix = "baton-epoch.",
	.open = epoch_open_arg,
};

int baton_epoch_open_timeout(const char *name, int backend,
			     int64_t timeout_ns, struct baton_epoch **out)
{
	struct epoch_open_arg a = { .out = out };
	struct baton__what w;
	int ret;

	baton__what(&w, "baton_epoch_open_timeout", name);
	ret = baton__name_check(&w, name);
	if (ret)
		return ret;
	if (!out)
		return baton__reject(&w, -EINVAL, "out: NULL");
	a.backend = baton__backend_check(&w, backend);
	if (a.backend < 0)
		return a.backend;
	return open_waiting(&w, &epoch_kind, name, a.backend, timeout_ns, &a);
}

int baton_epoch_open_or_create(const char *name,
			       const struct baton_epoch_params *p,
			       struct baton_epoch **out, int *created)
{
	struct baton__what w;
	int i, ret;

	baton__what(&w, "baton_epoch_open_or_create", name);
	if (created)
		*created = 0;
	ret = baton__name_check(&w, name);
	if (ret)
		return ret;
	if (!p)
		return baton__reject(&w, -EINVAL, "params: NULL");
	ret = baton__epoch_params_check(&w, p->max_participants, p->queue_len);
	if (ret)
		return ret;
	for (i = 0; i < OPEN_OR_CREATE_TRIES; i++) {
		ret = baton_epoch_open(name, p->backend, out);
		if (!ret) {
			if ((*out)->max_participants == p->max_participants &&
			    (*out)->off.queue_len == p->queue_len)
				return 0;
			baton__log(BATON_LOG_WARN,
				   "libbaton: %s: max_participants %u, queue_len %u: the existing domain of that name has %u, %u\n",
				   w.buf, p->max_participants, p->queue_len,
				   (*out)->max_participants,
				   (*out)->off.queue_len);
			baton_epoch_close(*out);
			*out = NULL;
			return -EEXIST;
		}
		if (ret != -ENOENT)
			return ret;
		ret = baton_epoch_create(name, p, out);
		if (ret != -EEXIST) {
			if (!ret && created)
				*created = 1;
			return ret;
		}
	}
	return baton__fail(&w, ret);
}

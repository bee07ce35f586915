// SPDX-License-Identifier: MIT
/*
 * libbaton kmod backend: rings behind /dev/baton.
 *
 * This file owns the ioctls: it fills the size-versioned structs of
 * <linux/baton.h> (size = our sizeof, flags and reserved 0) and turns the
 * kernel's answers into a struct baton_ring_desc. ring.c then maps the
 * four regions one mmap per region at the offsets the kernel returned,
 * MAP_SHARED, with PROT_WRITE only where the role owns the region (the
 * kernel refuses anything else with EACCES).
 *
 * Park and wake are one ioctl each; the kernel sets and clears our
 * waiting flag and supplies the barriers F, G (park) and H (wake), so
 * nothing here needs a fence.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "internal.h"

/* We always send our full sizeof; it can never be below the first version. */
_Static_assert(sizeof(struct baton_version) >= BATON_VERSION_SIZE_VER0,
	       "baton_version");
_Static_assert(sizeof(struct baton_ring_create) >= BATON_RING_CREATE_SIZE_VER0,
	       "baton_ring_create");
_Static_assert(sizeof(struct baton_ring_open) >= BATON_RING_OPEN_SIZE_VER0,
	       "baton_ring_open");
_Static_assert(sizeof(struct baton_unlink) >= BATON_UNLINK_SIZE_VER0,
	       "baton_unlink");
_Static_assert(sizeof(struct baton_park) >= BATON_PARK_SIZE_VER0,
	       "baton_park");

/* /dev/baton missing is a missing backend, not a missing ring name. */
static int dev_open(void)
{
	int fd = open(BATON_DEVICE, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT ? -ENODEV : -errno;
	return fd;
}

/*
 * One ioctl on a /dev/baton of its own, for the calls that act on the
 * device rather than on an object's fd (create, open, unlink of rings
 * and epoch domains): 0 or -errno, -ENODEV when there is no device.
 */
int baton__dev_ioctl(unsigned long cmd, void *arg)
{
	int dev = dev_open();
	int ret;

	if (dev < 0)
		return dev;
	ret = ioctl(dev, cmd, arg) ? -errno : 0;
	close(dev);
	return ret;
}

static int dev_version(int dev, uint32_t *abi, uint64_t *features)
{
	struct baton_version v;

	memset(&v, 0, sizeof(v));
	v.size = sizeof(v);
	if (ioctl(dev, BATON_IOC_VERSION, &v))
		return -errno;
	*abi = v.out_abi_version;
	*features = v.out_features;
	return 0;
}

/* Refuse a module that speaks another ABI before trusting its structs. */
static int dev_open_checked(void)
{
	uint32_t abi = 0;
	uint64_t feat = 0;
	int dev, ret;

	dev = dev_open();
	if (dev < 0)
		return dev;
	ret = dev_version(dev, &abi, &feat);
	if (!ret && abi != BATON_ABI_VERSION)
		ret = -EPROTONOSUPPORT;
	if (!ret && !(feat & BATON_FEAT_RING_SPSC))
		ret = -EOPNOTSUPP;
	if (ret) {
		close(dev);
		return ret;
	}
	return dev;
}

/*
 * Only the length is checked here (it must fit the array, NUL included);
 * the character rules are the kernel's to enforce.
 */
int baton__copy_name(char dst[BATON_NAME_MAX], const char *name)
{
	size_t len = name ? strnlen(name, BATON_NAME_MAX) : 0;

	if (len == 0 || len >= BATON_NAME_MAX)
		return -EINVAL;
	memset(dst, 0, BATON_NAME_MAX);
	memcpy(dst, name, len);
	return 0;
}

static int kmod_create(const char *name, const struct baton_ring_params *p,
		       int role, struct baton_ring_desc *d)
{
	struct baton_ring_create c;
	int dev, ret;

	memset(&c, 0, sizeof(c));
	ret = baton__copy_name(c.name, name);
	if (ret)
		return ret;
	c.size = sizeof(c);
	c.kind = p->kind;
	c.role = (uint32_t)role;
	c.slot_count = p->slot_count;
	c.slot_size = p->slot_size;
	c.mode = p->mode;
	c.max_producers = p->kind == BATON_RING_MPSC ? p->max_producers : 1;

	dev = dev_open_checked();
	if (dev < 0)
		return dev;
	ret = ioctl(dev, BATON_IOC_RING_CREATE, &c) ? -errno : 0;
	close(dev);
	if (ret)
		return ret;

	d->fd = c.out_fd;
	d->kind = c.kind;
	d->slot_count = c.slot_count;
	d->slot_size = c.slot_size;
	d->file_size = 0;	/* the kernel bounds each mmap itself */
	d->off = c.out_off;
	d->max_producers = c.max_producers;
	/* The kernel maps this fd's own claim page at the region's start. */
	d->claim_off = c.out_off.claim_mmap;
	return 0;
}

static int kmod_open(const char *name, int role, struct baton_ring_desc *d)
{
	struct baton_ring_open o;
	int dev, ret;

	memset(&o, 0, sizeof(o));
	ret = baton__copy_name(o.name, name);
	if (ret)
		return ret;
	o.size = sizeof(o);
	o.role = (uint32_t)role;

	dev = dev_open_checked();
	if (dev < 0)
		return dev;
	ret = ioctl(dev, BATON_IOC_RING_OPEN, &o) ? -errno : 0;
	close(dev);
	if (ret)
		return ret;

	d->fd = o.out_fd;
	d->kind = o.out_kind;
	d->slot_count = o.out_slot_count;
	d->slot_size = o.out_slot_size;
	d->file_size = 0;
	d->off = o.out_off;
	d->max_producers = 0;	/* MPSC: read from the kernel's header */
	d->claim_off = o.out_off.claim_mmap;
	/* A module bug must not become an out-of-bounds slot index here. */
	if (baton__geometry_valid(d->kind, d->slot_count, d->slot_size)) {
		close(d->fd);
		d->fd = -1;
		return -EPROTO;
	}
	return 0;
}

static int kmod_unlink(const char *name)
{
	struct baton_unlink u;
	int ret;

	memset(&u, 0, sizeof(u));
	ret = baton__copy_name(u.name, name);
	if (ret)
		return ret;
	u.size = sizeof(u);
	return baton__dev_ioctl(BATON_IOC_UNLINK, &u);
}

/*
 * The kernel sets our waiting flag, issues F and G, re-checks @expected
 * under its wait-queue lock, sleeps, and clears the flag on the way out.
 */
static int kmod_park(struct baton_ring *r, uint64_t expected,
		     int has_deadline, uint64_t deadline_ns)
{
	struct baton_park pk;

	memset(&pk, 0, sizeof(pk));
	pk.size = sizeof(pk);
	pk.flags = has_deadline ? BATON_PARK_DEADLINE : 0;
	pk.expected = expected;
	pk.deadline_ns = has_deadline ? deadline_ns : 0;
	if (ioctl(r->fd, BATON_RING_IOC_PARK, &pk))
		return -errno;
	return 0;
}

/* H is the kernel's smp_mb() at the top of the wake ioctl. */
static int kmod_wake(struct baton_ring *r)
{
	if (ioctl(r->fd, BATON_RING_IOC_WAKE, 0))
		return -errno;
	return 0;
}

static int kmod_version(uint32_t *abi_version, uint64_t *features)
{
	int dev = dev_open();
	int ret;

	if (dev < 0)
		return dev;
	ret = dev_version(dev, abi_version, features);
	close(dev);
	return ret;
}

/*
 * MPSC: the same two ioctls. The kernel knows the ring's kind: it parks a
 * producer on its ticket's slot and the consumer on its ticket, and the
 * wake reaches every parked producer (each re-checks its own slot).
 */
static int kmod_mpsc_wake(struct baton_ring *r, uint64_t idx)
{
	(void)idx;
	return kmod_wake(r);
}

const struct baton_backend_ops baton__kmod_ops = {
	.name = "kmod",
	.create = kmod_create,
	.open = kmod_open,
	.unlink = kmod_unlink,
	.park = kmod_park,
	.wake = kmod_wake,
	.mpsc_park = kmod_park,
	.mpsc_wake = kmod_mpsc_wake,
	.version = kmod_version,
};

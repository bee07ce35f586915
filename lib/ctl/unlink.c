// SPDX-License-Identifier: MIT
/*
 * lib/ctl/unlink.c: batonctl unlink: removes the name of a ring, an epoch
 * domain or a buffer pool of the module (BATON_IOC_UNLINK,
 * BATON_IOC_EPOCH_UNLINK, BATON_IOC_POOL_UNLINK on /dev/baton), in the
 * caller's IPC namespace or, with --ns, in the one
 * whose inode number `list --all-ns` showed: how an administrator cleans
 * up objects left in a namespace whose processes are gone. The module
 * decides who may (uapi/linux/baton.h, struct baton_unlink); batonctl
 * only asks and says what it answered.
 *
 * A name the module does not have (or no module at all) is looked for on
 * the memfd backend next, as `show` does: its file in /dev/shm, which the
 * sticky directory lets only its owner or root remove (memfd_unlink()).
 * That is how a stale memfd object (`list` marks it) is cleaned up.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "batonctl.h"

_Static_assert(sizeof(struct baton_unlink) >= BATON_UNLINK_SIZE_VER0,
	       "baton_unlink");

/* What the errno means here, beyond strerror(). */
static const char *unlink_hint(int err)
{
	switch (err) {
	case EPERM:
		return " (--ns needs CAP_SYS_ADMIN in the initial user namespace)";
	case EACCES:
		return " (only the owner or CAP_SYS_ADMIN may unlink)";
	case ENOENT:
		return opt.have_ns ? " (no such name in that IPC namespace)" :
				     " (no such name in this IPC namespace, nor on the memfd backend)";
	default:
		return "";
	}
}

/* The memfd backend's name, after the module had none; exit status. */
static int unlink_memfd(const char *what, const char *name, int kmod_err)
{
	int ret = memfd_unlink(opt.unlink_obj, name);

	if (!ret)
		return 0;
	/* neither backend has it: the module's answer names the rule */
	if (ret == -ENOENT && kmod_err)
		ret = -kmod_err;
	fprintf(stderr, "batonctl: unlinking %s %s: %s%s\n", what, name,
		strerror(-ret), ret == -EACCES ?
		" (only the file's owner or root may remove it from /dev/shm)" :
		unlink_hint(-ret));
	return 1;
}

/* The module's name: 0, or the errno of the ioctl (or of the open). */
static int unlink_kmod(const char *name, unsigned long cmd)
{
	struct baton_unlink u;
	int dev, ret;

	memset(&u, 0, sizeof(u));
	u.size = sizeof(u);
	snprintf(u.name, sizeof(u.name), "%s", name);
	if (opt.have_ns) {
		u.flags = BATON_UNLINK_IPC_NS;
		u.ipc_ns = opt.ns;
	}
	dev = open(BATON_DEVICE, O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -errno;	/* negative: the device, not the name */
	ret = ioctl(dev, cmd, &u) ? errno : 0;
	close(dev);
	return ret;
}

int cmd_unlink(const char *name)
{
	static const char *const whats[] = {
		[OBJ_RING] = "ring", [OBJ_EPOCH] = "epoch domain",
		[OBJ_POOL] = "pool",
	};
	static const unsigned long cmds[] = {
		[OBJ_RING] = BATON_IOC_UNLINK,
		[OBJ_EPOCH] = BATON_IOC_EPOCH_UNLINK,
		[OBJ_POOL] = BATON_IOC_POOL_UNLINK,
	};
	const char *what = whats[opt.unlink_obj];
	unsigned long cmd = cmds[opt.unlink_obj];
	int ret;

	if (!name_valid(name)) {
		fprintf(stderr, "batonctl: %s: not a valid name\n", name);
		return 1;
	}
	ret = unlink_kmod(name, cmd);
	if (ret == -ENOENT && opt.have_ns) {
		fprintf(stderr,
			"batonctl: the baton module is not loaded (no %s); --ns is for the module's objects\n",
			BATON_DEVICE);
		return EXIT_NOMODULE;
	}
	if (ret == -ENOENT)
		return unlink_memfd(what, name, 0);
	if (ret < 0) {
		fprintf(stderr, "batonctl: %s: %s\n", BATON_DEVICE,
			strerror(-ret));
		return 1;
	}
	if (ret == ENOENT && !opt.have_ns)
		return unlink_memfd(what, name, ENOENT);
	if (ret) {
		fprintf(stderr, "batonctl: unlinking %s %s: %s%s\n", what,
			name, strerror(ret), unlink_hint(ret));
		return 1;
	}
	return 0;
}

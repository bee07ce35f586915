// SPDX-License-Identifier: GPL-2.0
/*
 * baton: who owns a named object and who may use it.
 *
 * Rings (ring.c) and epoch domains (epoch.c) both live by name behind
 * /dev/baton and follow one set of rules, kept here so they cannot drift
 * apart: a name is 1..63 bytes of [A-Za-z0-9._-]; an object has an owner
 * (the creator's fsuid), a group (its fsgid) and mode bits checked like a
 * file's; CAP_DAC_OVERRIDE bypasses the mode, and only the owner or
 * CAP_SYS_ADMIN may unlink. Both capabilities count only when the owner
 * and group are mapped in the caller's user namespace, as for inodes.
 *
 * Locking: none. A struct baton_owner is written once at create, before
 * the object is published, and only read afterwards.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/string.h>
#include <linux/uidgid.h>

#include <linux/baton.h>

#include "baton_kmod.h"

void baton_owner_init(struct baton_owner *o, u32 mode)
{
	o->uid = current_fsuid();
	o->gid = current_fsgid();
	o->mode = mode;
}

int baton_check_name(const char *name)
{
	size_t len = strnlen(name, BATON_NAME_MAX);
	size_t i;

	if (!len || len == BATON_NAME_MAX)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		char c = name[i];

		/* Not isalnum(): the kernel's ctype counts Latin-1 letters. */
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-'))
			return -EINVAL;
	}
	return 0;
}

/* As capable_wrt_inode_uidgid(): the owner must be mapped in our userns. */
static bool baton_owner_capable(const struct baton_owner *o, int cap)
{
	struct user_namespace *ns = current_user_ns();

	return ns_capable(ns, cap) && kuid_has_mapping(ns, o->uid) &&
	       kgid_has_mapping(ns, o->gid);
}

/* @may: MAY_READ and/or MAY_WRITE. Owner, group or other bits, as a file. */
int baton_owner_permission(const struct baton_owner *o, int may)
{
	umode_t mode = o->mode;

	if (uid_eq(current_fsuid(), o->uid))
		mode >>= 6;
	else if (in_group_p(o->gid))
		mode >>= 3;
	if (!(may & ~mode & (MAY_READ | MAY_WRITE)))
		return 0;
	if (baton_owner_capable(o, CAP_DAC_OVERRIDE))
		return 0;
	return -EACCES;
}

bool baton_owner_may_unlink(const struct baton_owner *o)
{
	return uid_eq(current_fsuid(), o->uid) ||
	       baton_owner_capable(o, CAP_SYS_ADMIN);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * baton: per-user caps on what /dev/baton lets one uid own.
 *
 * Owns the module parameters that bound one uid (max_objects_per_user,
 * max_bytes_per_user: 0644, root may change them at run time), the
 * read-only totals beside them (objects_in_use, bytes_in_use), and the
 * accounting behind both: one struct baton_user per (user namespace, uid)
 * that pays for at least one object, in a small hash.
 *
 * Who pays: the owner of an object (the creator's fsuid, the uid that
 * may unlink it) in the creator's user namespace, and, level by level up
 * to the initial namespace, the owner of each namespace in its parent, as
 * ucounts charges mqueue bytes: a user who maps 65536 subordinate uids
 * into a namespace of its own shares one cap with all of them, and every
 * level must stay under the caps. From create until the object is freed
 * at its last reference. Unlink does not end the charge: the pages live on while an
 * fd or a mapping holds them, and the cap is about memory that exists.
 * What is counted: one object, and the bytes of its pages (every page a
 * ring or domain fd can map). The small per-object and per-open structs
 * are left to the memory cgroup (Documentation/limits.rst).
 *
 * Going over either cap is EDQUOT unless the creator has CAP_SYS_RESOURCE
 * in the initial user namespace: a capability in a user namespace of its
 * own must not lift a limit that protects the whole machine. A bypassed
 * create is still counted, so the totals stay exact. Lowering a cap below
 * what a uid owns only stops its next creates; nothing is taken away.
 *
 * Locking: baton_users_lock (mutex) guards the hash, every struct
 * baton_user and the totals. Charges happen at create and uncharges at
 * the last put of an object, both in process context, never under a
 * spinlock. The parameters are read once per charge with READ_ONCE():
 * a concurrent write by root takes effect at the next create.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/uidgid.h>
#include <linux/user_namespace.h>

#include "baton_kmod.h"

/* As POSIX message queues' queues_max: enough for any sane application. */
static unsigned int max_objects_per_user = 256;
module_param(max_objects_per_user, uint, 0644);
MODULE_PARM_DESC(max_objects_per_user,
		 "rings + epoch domains + pools one uid may own (EDQUOT beyond)");

/* Four rings of the largest geometry (BATON_RING_BYTES_MAX each). */
static unsigned long max_bytes_per_user = 1UL << 30;
module_param(max_bytes_per_user, ulong, 0644);
MODULE_PARM_DESC(max_bytes_per_user,
		 "bytes of ring, domain and pool pages one uid may own (EDQUOT beyond)");

/*
 * What one uid owns at one level of the user-namespace tree. @parent is
 * the level above: (ns->parent, ns->owner), NULL at the initial namespace.
 * Every object counted here is counted in @parent too, so a record with
 * objects keeps its ancestors busy, and an idle one has no busy children.
 */
struct baton_user {
	struct hlist_node node;		/* in baton_users */
	struct user_namespace *ns;	/* a reference: its address is a key */
	kuid_t uid;
	struct baton_user *parent;
	unsigned int objects;
	unsigned long bytes;
};

#define BATON_USERS_BITS	6

static DEFINE_HASHTABLE(baton_users, BATON_USERS_BITS);
static DEFINE_MUTEX(baton_users_lock);
static unsigned long baton_objects_total;
static unsigned long baton_bytes_total;

/* ---- the read-only totals ---- */

static int baton_param_get_total(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%lu\n",
			 READ_ONCE(*(unsigned long *)kp->arg));
}

/* Only reachable as insmod baton objects_in_use=...: a total is not set. */
static int baton_param_set_total(const char *val,
				 const struct kernel_param *kp)
{
	return -EPERM;
}

static const struct kernel_param_ops baton_total_ops = {
	.set	= baton_param_set_total,
	.get	= baton_param_get_total,
};

module_param_cb(objects_in_use, &baton_total_ops, &baton_objects_total,
		0444);
MODULE_PARM_DESC(objects_in_use, "rings + epoch domains + pools that exist now");
module_param_cb(bytes_in_use, &baton_total_ops, &baton_bytes_total, 0444);
MODULE_PARM_DESC(bytes_in_use, "bytes of ring, domain and pool pages that exist now");

/* ---- per-uid accounting (baton_users_lock) ---- */

static unsigned long baton_user_key(const struct user_namespace *ns,
				    kuid_t uid)
{
	return (unsigned long)ns ^ __kuid_val(uid);
}

static struct baton_user *baton_user_find(struct user_namespace *ns,
					  kuid_t uid)
{
	struct baton_user *u;

	lockdep_assert_held(&baton_users_lock);
	hash_for_each_possible(baton_users, u, node, baton_user_key(ns, uid))
		if (u->ns == ns && uid_eq(u->uid, uid))
			return u;
	return NULL;
}

static struct baton_user *baton_user_get(struct user_namespace *ns,
					 kuid_t uid)
{
	struct baton_user *u = baton_user_find(ns, uid);

	if (u)
		return u;
	/* Charged like the object that needs it; freed with its last one. */
	u = kzalloc(sizeof(*u), GFP_KERNEL_ACCOUNT);
	if (!u)
		return NULL;
	/*
	 * Pinned, so the address cannot come back as another namespace
	 * while the record holds it (it also pins the ancestors).
	 */
	u->ns = get_user_ns(ns);
	u->uid = uid;
	hash_add(baton_users, &u->node, baton_user_key(ns, uid));
	return u;
}

/* Free @u and the idle levels above it; stops at the first busy one. */
static void baton_user_put_if_idle(struct baton_user *u)
{
	while (u && !u->objects) {
		struct baton_user *parent = u->parent;

		hash_del(&u->node);
		put_user_ns(u->ns);
		kfree(u);
		u = parent;
	}
}

/* Would one more object of @bytes take @u past a cap? */
static bool baton_user_over(const struct baton_user *u, unsigned long bytes)
{
	/* u->bytes is bounded by memory, bytes by the geometry limits. */
	return u->objects >= READ_ONCE(max_objects_per_user) ||
	       u->bytes + bytes > READ_ONCE(max_bytes_per_user);
}

/*
 * The record of every level that pays for an object owned by @uid and
 * created from user namespace @ns: (ns, uid) first, then the owner of
 * each namespace in the one above it, up to the initial namespace (the
 * walk of ucounts, kernel/ucount.c, which modules cannot call). Linked
 * through ->parent; NULL if one could not be allocated (nothing left
 * behind). *@over: some level is at a cap.
 */
static struct baton_user *baton_user_chain(struct user_namespace *ns,
					   kuid_t uid, unsigned long bytes,
					   bool *over)
{
	struct baton_user *bottom = NULL, *below = NULL, *u;

	*over = false;
	for (;;) {
		u = baton_user_get(ns, uid);
		if (!u) {
			baton_user_put_if_idle(bottom);
			return NULL;
		}
		if (below)
			below->parent = u;
		else
			bottom = u;
		*over |= baton_user_over(u, bytes);
		if (ns == &init_user_ns)
			return bottom;
		uid = ns->owner;
		ns = ns->parent;
		below = u;
	}
}

/*
 * Charge one object of @bytes to @uid as seen from the caller's user
 * namespace, and to the owner of that namespace and of each one above
 * it: a user with a range of subordinate uids shares its own cap with all
 * of them. Recorded in @c for baton_uncharge(). 0, -EDQUOT when any level
 * is at a cap, or -ENOMEM.
 */
int baton_charge(struct baton_charge *c, kuid_t uid, unsigned long bytes)
{
	struct baton_user *bottom, *u;
	bool over;
	int ret = 0;

	mutex_lock(&baton_users_lock);
	bottom = baton_user_chain(current_user_ns(), uid, bytes, &over);
	if (!bottom) {
		ret = -ENOMEM;
		goto unlock;
	}
	/* capable() last: it marks the task as having used the privilege. */
	if (over && !capable(CAP_SYS_RESOURCE)) {
		baton_user_put_if_idle(bottom);
		ret = -EDQUOT;
		goto unlock;
	}
	for (u = bottom; u; u = u->parent) {
		u->objects++;
		u->bytes += bytes;
	}
	/* WRITE_ONCE: the parameter getters read the totals unlocked. */
	WRITE_ONCE(baton_objects_total, baton_objects_total + 1);
	WRITE_ONCE(baton_bytes_total, baton_bytes_total + bytes);
	c->user = bottom;
	c->bytes = bytes;
unlock:
	mutex_unlock(&baton_users_lock);
	return ret;
}

/* Release what baton_charge() recorded in @c; nothing if it recorded none. */
void baton_uncharge(struct baton_charge *c)
{
	struct baton_user *u;

	if (!c->user)
		return;
	mutex_lock(&baton_users_lock);
	for (u = c->user; u; u = u->parent) {
		u->objects--;
		u->bytes -= c->bytes;
	}
	WRITE_ONCE(baton_objects_total, baton_objects_total - 1);
	WRITE_ONCE(baton_bytes_total, baton_bytes_total - c->bytes);
	baton_user_put_if_idle(c->user);
	mutex_unlock(&baton_users_lock);
	c->user = NULL;
}

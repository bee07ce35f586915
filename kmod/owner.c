// SPDX-License-Identifier: GPL-2.0
/*
 * baton: named objects: who owns one, who may use it, and where it is
 * found by name.
 *
 * Rings (ring.c) and epoch domains (epoch.c) both live by name behind
 * /dev/baton and follow one set of rules, kept here so they cannot drift
 * apart: a name is 1..63 bytes of [A-Za-z0-9._-]; an object has an owner
 * (the creator's fsuid), a group (its fsgid) and mode bits checked like a
 * file's; CAP_DAC_OVERRIDE bypasses the mode, and only the owner or
 * CAP_SYS_ADMIN may unlink. Both capabilities count only when the owner
 * and group are mapped in the caller's user namespace, as for inodes.
 *
 * A registry (struct baton_names) lists one kind of object by name and
 * holds a reference on each until unlink or module exit; lookups hand out
 * a reference of their own. It also keeps every published object until
 * its free (names->live, no reference held), so statistics can list a
 * ring that was unlinked but is still in use; the kind's free calls
 * baton_named_forget() first. Publication and unlink queue the kind's
 * CREATED and UNLINKED events under the registry's lock, so that their
 * order is the registry's.
 *
 * Names are scoped to the creator's IPC namespace, as POSIX message
 * queues are: create, open and unlink only see the objects of the
 * caller's namespace, so one name may exist once per namespace, and
 * anything that lists objects (netlink) asks baton_named_same_ns(). An
 * object pins its namespace (a reference, not an identity: a freed
 * namespace's address or inode number can come back as a new one's) until
 * it is freed. 6.1 exports neither put_ipc_ns() nor a per-namespace exit
 * hook, so the reference is taken with the inline get_ipc_ns() and dropped
 * through the namespace's own proc_ns_operations ->put (ipcns_put(), which
 * is put_ipc_ns()). The cost: a namespace whose processes are gone lives
 * on while one of its objects is neither unlinked nor closed; an
 * administrator of the initial user namespace can unlink such objects by
 * (namespace inode number, name): BATON_UNLINK_IPC_NS.
 *
 * Creating an object also charges its owner (limits.c); the charge and
 * the namespace reference both end in baton_named_destroy(), called when
 * the object is freed.
 *
 * Visibility (baton_named_visible()): an object of the caller's IPC
 * namespace that the caller could open (a ring for reading or for
 * writing, a domain or a pool for both: owner.open_may) may be seen in
 * statistics and events; so may any object by CAP_SYS_ADMIN in the
 * initial user namespace. Every such decision goes through that one
 * function.
 *
 * Locking: names->lock (mutex) guards a registry's lists, the ids, the
 * published flags and the count of publications that BATON_IOC_NAME_WAIT
 * sleepers watch (woken through names->added_wq, outside the mutex).
 * A struct baton_named's name, owner and namespace are written once,
 * before the object is published, and only read afterwards.
 */
#include <linux/atomic.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/ipc_namespace.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/nsproxy.h>
#include <linux/proc_ns.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/string.h>
#include <linux/uidgid.h>

#include <linux/baton.h>

#include "baton_kmod.h"

static void baton_owner_init(struct baton_owner *o, u32 mode, int open_may)
{
	o->uid = current_fsuid();
	o->gid = current_fsgid();
	o->mode = mode;
	o->open_may = open_may;
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

/*
 * As capable_wrt_inode_uidgid(): the owner must be mapped in our userns.
 * @audit false: a question, not an access attempt (listings ask it about
 * every object).
 */
static bool baton_owner_capable(const struct baton_owner *o, int cap,
				bool audit)
{
	struct user_namespace *ns = current_user_ns();

	if (audit ? !ns_capable(ns, cap) : !ns_capable_noaudit(ns, cap))
		return false;
	return kuid_has_mapping(ns, o->uid) && kgid_has_mapping(ns, o->gid);
}

/* The caller's rwx bits of @o: owner, group or other ones, as a file's. */
static umode_t baton_owner_bits(const struct baton_owner *o)
{
	if (uid_eq(current_fsuid(), o->uid))
		return o->mode >> 6;
	if (in_group_p(o->gid))
		return o->mode >> 3;
	return o->mode;
}

/* @may: MAY_READ and/or MAY_WRITE. Owner, group or other bits, as a file. */
int baton_owner_permission(const struct baton_owner *o, int may)
{
	if (!(may & ~baton_owner_bits(o) & (MAY_READ | MAY_WRITE)))
		return 0;
	if (baton_owner_capable(o, CAP_DAC_OVERRIDE, true))
		return 0;
	return -EACCES;
}

/*
 * Would the open the object's kind makes pass baton_owner_permission()?
 * Not audited. A ring opens with the read or the write bit (its role's),
 * a domain or a pool with both.
 */
static bool baton_owner_may_open(const struct baton_owner *o)
{
	int bits = baton_owner_bits(o), need = o->open_may;

	if (need ? (bits & need) == need : bits & (MAY_READ | MAY_WRITE))
		return true;
	return baton_owner_capable(o, CAP_DAC_OVERRIDE, false);
}

/*
 * Statistics and events name objects and pids: show them only to whoever
 * could open the object, or to CAP_SYS_ADMIN in the initial user
 * namespace (objects are global, so a namespace's own root does not see
 * other users' objects). Uses the current credentials: event delivery
 * runs it under a watcher's saved ones (override_creds()).
 */
bool baton_named_visible(const struct baton_named *n,
			 const struct ipc_namespace *ns)
{
	/* Names are per IPC namespace, for everyone (as for open). */
	if (n->ipc_ns != ns)
		return false;
	if (ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN))
		return true;
	return baton_owner_may_open(&n->owner);
}

static bool baton_owner_may_unlink(const struct baton_owner *o)
{
	return uid_eq(current_fsuid(), o->uid) ||
	       baton_owner_capable(o, CAP_SYS_ADMIN, true);
}

/* A task in an ioctl has its nsproxy: only an exiting task loses it. */
struct ipc_namespace *baton_current_ipc_ns(void)
{
	return current->nsproxy->ipc_ns;
}

struct ipc_namespace *baton_get_ipc_ns(struct ipc_namespace *ns)
{
	return get_ipc_ns(ns);
}

/* put_ipc_ns() is not exported; ipcns_operations.put is that function. */
void baton_put_ipc_ns(struct ipc_namespace *ns)
{
	/* Without CONFIG_IPC_NS there is one namespace and no reference. */
	if (IS_ENABLED(CONFIG_IPC_NS))
		ns->ns.ops->put(&ns->ns);
}

/*
 * Before the object's memory is allocated: charge its owner for @bytes
 * (EDQUOT over a cap) and pin the caller's IPC namespace. Undone by
 * baton_named_destroy(), which the object's free calls.
 */
int baton_named_init(struct baton_named *n, const char *name, u32 mode,
		     int open_may, unsigned long bytes)
{
	int ret;

	kref_init(&n->ref);
	INIT_LIST_HEAD(&n->node);
	INIT_LIST_HEAD(&n->live);
	strscpy(n->name, name, sizeof(n->name));
	baton_owner_init(&n->owner, mode, open_may);
	ret = baton_charge(&n->charge, n->owner.uid, bytes);
	if (ret)
		return ret;
	n->ipc_ns = baton_get_ipc_ns(baton_current_ipc_ns());
	return 0;
}

/* The object is being freed: its last reference is gone. */
void baton_named_destroy(struct baton_named *n)
{
	baton_uncharge(&n->charge);
	baton_put_ipc_ns(n->ipc_ns);
	n->ipc_ns = NULL;
}

/*
 * Whether the caller may see @n at all: same IPC namespace. Every lookup
 * by name applies it, and so must anything that lists objects.
 */
bool baton_named_same_ns(const struct baton_named *n)
{
	return n->ipc_ns == baton_current_ipc_ns();
}

/*
 * In the namespace @ns_id names (an IPC namespace's inode number, as the
 * ALL_NS dumps report it), or, for 0, in the caller's namespace.
 */
static bool baton_named_in(const struct baton_named *n, u64 ns_id)
{
	if (!ns_id)
		return baton_named_same_ns(n);
	return baton_named_ns_id(n) == ns_id;
}

static struct baton_named *baton_names_find(struct baton_names *names,
					    const char *name, u64 ns_id)
{
	struct baton_named *n;

	lockdep_assert_held(&names->lock);
	list_for_each_entry(n, &names->list, node)
		if (baton_named_in(n, ns_id) && !strcmp(n->name, name))
			return n;
	return NULL;
}

/* The inode number of @n's IPC namespace (/proc/PID/ns/ipc shows it). */
u32 baton_named_ns_id(const struct baton_named *n)
{
	return n->ipc_ns->ns.inum;
}

/* The object named @name, with a reference for the caller, or NULL. */
struct baton_named *baton_names_get(struct baton_names *names,
				    const char *name)
{
	struct baton_named *n;

	mutex_lock(&names->lock);
	n = baton_names_find(names, name, 0);
	if (n)
		kref_get(&n->ref);
	mutex_unlock(&names->lock);
	return n;
}

/*
 * Ids grow in names->live order (both are set under names->lock), so "the
 * first object whose id is above the last one sent" is a dump cursor that
 * survives any object's removal between two dump calls.
 */
static atomic64_t baton_named_ids = ATOMIC64_INIT(0);

/*
 * The first live object after @after in publication order, unlinked ones
 * included, with a reference, or NULL. One whose last reference is gone
 * (its free is about to take it off the list) is skipped.
 */
struct baton_named *baton_names_next(struct baton_names *names, u64 after)
{
	struct baton_named *n, *found = NULL;

	mutex_lock(&names->lock);
	list_for_each_entry(n, &names->live, live) {
		if (n->id > after && kref_get_unless_zero(&n->ref)) {
			found = n;
			break;
		}
	}
	mutex_unlock(&names->lock);
	return found;
}

/* The kind's free, first: @n leaves names->live (if it ever joined). */
void baton_named_forget(struct baton_names *names, struct baton_named *n)
{
	mutex_lock(&names->lock);
	list_del_init(&n->live);
	mutex_unlock(&names->lock);
}

/* No longer reachable by name (unlinked, or never published). */
bool baton_named_unlinked(struct baton_names *names,
			  const struct baton_named *n)
{
	bool ret;

	mutex_lock(&names->lock);
	ret = list_empty(&n->node);
	mutex_unlock(&names->lock);
	return ret;
}

void baton_named_put(struct baton_names *names, struct baton_named *n)
{
	kref_put(&n->ref, names->release);
}

/*
 * CREATED or UNLINKED of @n, queued under the registry's lock: the order
 * of the queue is then the order of the registry, and a watcher never
 * sees a name's UNLINKED before the CREATED it follows (another task may
 * unlink the name the moment the lock is dropped).
 */
static void baton_names_event(struct baton_names *names,
			      struct baton_named *n, u32 type)
{
	struct baton_event ev = {
		.type = type,
		.obj = n,
		.index = -1,
	};

	lockdep_assert_held(&names->lock);
	baton_event(&ev, GFP_KERNEL);
}

/*
 * Publish @n under its name (EEXIST if taken in the caller's namespace,
 * which is @n's: the caller created it); the registry takes a ref.
 */
int baton_names_add(struct baton_names *names, struct baton_named *n)
{
	int ret = 0;

	mutex_lock(&names->lock);
	if (baton_names_find(names, n->name, 0)) {
		ret = -EEXIST;
	} else {
		kref_get(&n->ref);
		n->id = atomic64_inc_return(&baton_named_ids);
		n->published = true;
		list_add_tail(&n->node, &names->list);
		list_add_tail(&n->live, &names->live);
		WRITE_ONCE(names->added, names->added + 1);
		baton_names_event(names, n, names->created_event);
	}
	mutex_unlock(&names->lock);
	/* After the lock: a waiter re-checks under it (baton_name_wait()). */
	if (!ret)
		wake_up_all(&names->added_wq);
	return ret;
}

/*
 * The rules of struct baton_unlink (uapi/linux/baton.h), one place for
 * rings and domains: flags, reserved words and the name (EINVAL); with
 * BATON_UNLINK_IPC_NS, an administrator of the initial user namespace
 * (EPERM) naming a namespace (EINVAL for 0).
 */
static int baton_unlink_check(const struct baton_unlink *k)
{
	if (k->flags & ~BATON_UNLINK_IPC_NS || k->reserved)
		return -EINVAL;
	if (!(k->flags & BATON_UNLINK_IPC_NS))
		return k->ipc_ns ? -EINVAL : baton_check_name(k->name);
	if (!k->ipc_ns)
		return -EINVAL;
	if (baton_check_name(k->name))
		return -EINVAL;
	/* Before the lookup: others must not learn what exists there. */
	return capable(CAP_SYS_ADMIN) ? 0 : -EPERM;
}

/*
 * Remove the object @k names if the caller may (EINVAL, EPERM, ENOENT,
 * EACCES; an object of another IPC namespace is ENOENT unless @k names
 * that namespace). On success the caller inherits the registry's
 * reference and must put it.
 */
struct baton_named *baton_names_unlink(struct baton_names *names,
				       const struct baton_unlink *k)
{
	u64 ns_id = k->flags & BATON_UNLINK_IPC_NS ? k->ipc_ns : 0;
	struct baton_named *n;
	int ret;

	ret = baton_unlink_check(k);
	if (ret)
		return ERR_PTR(ret);
	mutex_lock(&names->lock);
	n = baton_names_find(names, k->name, ns_id);
	if (!n)
		n = ERR_PTR(-ENOENT);
	else if (!baton_owner_may_unlink(&n->owner))
		n = ERR_PTR(-EACCES);
	else
		list_del_init(&n->node);
	if (!IS_ERR(n))
		baton_names_event(names, n, names->unlinked_event);
	mutex_unlock(&names->lock);
	return n;
}

/*
 * The whole unlink of one kind (BATON_IOC_UNLINK, _EPOCH_UNLINK,
 * _POOL_UNLINK): remove the name as baton_names_unlink() does and drop
 * the registry's reference, which may free the object.
 */
int baton_names_remove(struct baton_names *names, const struct baton_unlink *k)
{
	struct baton_named *n = baton_names_unlink(names, k);

	if (IS_ERR(n))
		return PTR_ERR(n);
	baton_named_put(names, n);
	return 0;
}

/*
 * Whether @name is reachable in the caller's namespace, and how many
 * publications the registry had made when that was true (*@added).
 */
static bool baton_names_has(struct baton_names *names, const char *name,
			    u64 *added)
{
	bool found;

	mutex_lock(&names->lock);
	found = baton_names_find(names, name, 0);
	*added = names->added;
	mutex_unlock(&names->lock);
	return found;
}

/*
 * Sleep until the registry publishes something after @added, the
 * deadline passes (-ETIMEDOUT) or a signal comes (-ERESTARTSYS). No lost
 * wake: baton_names_add() bumps @added before its wake_up_all(), which
 * takes the queue's lock; we queue under that lock and only then read
 * @added, so either the wake finds us queued or we see the new count.
 */
static int baton_names_sleep(struct baton_names *names, u64 added,
			     bool has_deadline, ktime_t deadline)
{
	DEFINE_WAIT(wait);
	int ret = 0;

	for (;;) {
		ktime_t until = deadline;

		prepare_to_wait(&names->added_wq, &wait, TASK_INTERRUPTIBLE);
		if (READ_ONCE(names->added) != added)
			break;
		if (signal_pending(current)) {
			ret = -ERESTARTSYS;
			break;
		}
		if (!schedule_hrtimeout_range(has_deadline ? &until : NULL,
					      current->timer_slack_ns,
					      HRTIMER_MODE_ABS)) {
			ret = -ETIMEDOUT;
			break;
		}
	}
	finish_wait(&names->added_wq, &wait);
	return ret;
}

/*
 * BATON_IOC_NAME_WAIT: return once an object of k->kind named k->name
 * exists in the caller's IPC namespace. Each publication in the registry
 * wakes every sleeper, which looks again: creates are rare next to the
 * work they set up, so a thundering herd of lookups is cheap.
 */
int baton_name_wait(const struct baton_name_wait *k)
{
	bool has = k->flags & BATON_NAME_WAIT_DEADLINE;
	ktime_t deadline = baton_user_deadline(k->deadline_ns);
	struct baton_names *names;
	u64 added;
	int ret;

	if (k->flags & ~BATON_NAME_WAIT_DEADLINE || k->reserved0 ||
	    k->reserved[0] || k->reserved[1] || (!has && k->deadline_ns))
		return -EINVAL;
	if (k->kind == BATON_NAME_RING)
		names = &baton_rings;
	else if (k->kind == BATON_NAME_EPOCH)
		names = &baton_domains;
	else
		return -EINVAL;
	ret = baton_check_name(k->name);
	if (ret)
		return ret;

	while (!baton_names_has(names, k->name, &added)) {
		ret = baton_names_sleep(names, added, has, deadline);
		if (ret)
			return ret;
	}
	return 0;
}

/* Module exit: no file or mapping is left, so only the registry's refs. */
void baton_names_drain(struct baton_names *names,
		       void (*put)(struct baton_named *n))
{
	struct baton_named *n, *tmp;
	LIST_HEAD(gone);

	mutex_lock(&names->lock);
	list_splice_init(&names->list, &gone);
	mutex_unlock(&names->lock);
	/* Outside the lock: each free takes it (baton_named_forget()). */
	list_for_each_entry_safe(n, tmp, &gone, node) {
		list_del_init(&n->node);
		WARN_ON_ONCE(kref_read(&n->ref) != 1);
		put(n);
	}
	WARN_ON_ONCE(!list_empty(&names->live));
}

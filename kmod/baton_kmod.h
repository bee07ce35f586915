/* SPDX-License-Identifier: GPL-2.0 */
/*
 * baton: what the module's files share, and nothing else.
 *
 * main.c owns /dev/baton, the ioctl dispatch and the size-versioned struct
 * rules (baton_copy_in/out); ring.c owns ring objects, their registry and
 * ring fds; mpsc.c owns the MPSC protocol state of a ring (producer
 * indices, dead producers, tombstones); barrier.c owns the set of mms that
 * map a ring and the IPI barrier (G) over their CPUs. Each file states its
 * own locking rules; no lock is shared across files except through the
 * functions below.
 */
#ifndef BATON_KMOD_H
#define BATON_KMOD_H

#include <linux/compiler_types.h>
#include <linux/cpumask.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/uidgid.h>

#include <linux/baton.h>

struct ipc_namespace;
struct mm_struct;
struct baton_ring_create;
struct baton_ring_open;
struct baton_unlink;

/* main.c: the size rules of every baton ioctl struct. */
int baton_copy_in(void *k, size_t ksize, size_t ver0,
		  const void __user *uarg, u32 *usize);
int baton_copy_out(void __user *uarg, u32 usize, const void *k, size_t ksize);

/* ring.c: the /dev/baton ioctls that act on rings, and module exit. */
int baton_ring_create(struct baton_ring_create *k, void __user *uarg,
		      u32 usize);
int baton_ring_open(struct baton_ring_open *k, void __user *uarg, u32 usize);
int baton_ring_unlink(const struct baton_unlink *k);
void baton_registry_drain(void);

/* epoch.c: the /dev/baton ioctls that act on epoch domains. */
struct baton_epoch_create;
struct baton_epoch_open;
int baton_epoch_create(struct baton_epoch_create *k, void __user *uarg,
		       u32 usize);
int baton_epoch_open(struct baton_epoch_open *k, void __user *uarg,
		     u32 usize);
int baton_epoch_unlink(const struct baton_unlink *k);
void baton_epoch_registry_drain(void);

/*
 * barrier.c: the mms that map one ring, for the IPI barrier (G).
 * @lock guards @mms and @untracked; @ipi_lock serialises users of @scratch.
 * @untracked counts mappings whose mm could not be recorded (allocation
 * failure on fork); while it is non-zero the barrier covers every CPU.
 */
struct baton_mm_set {
	spinlock_t lock;		/* @mms, @untracked */
	struct list_head mms;
	unsigned long untracked;
	struct mutex ipi_lock;		/* @scratch */
	cpumask_var_t scratch;
};

int baton_mm_set_init(struct baton_mm_set *set);
void baton_mm_set_destroy(struct baton_mm_set *set);
int baton_mm_set_add(struct baton_mm_set *set, struct mm_struct *mm);
void baton_mm_set_add_nofail(struct baton_mm_set *set, struct mm_struct *mm);
void baton_mm_set_del(struct baton_mm_set *set, struct mm_struct *mm);
void baton_barrier_peers(struct baton_mm_set *set);

/*
 * mpsc.c: the MPSC protocol's kernel side (producer indices, dead
 * producers, attribution and tombstones). ring.c owns the memory and
 * passes the addresses in; attach and detach are called with ring->lock
 * held (mpsc.c's own lock nests inside it).
 */
struct baton_mpsc;
struct baton_mpsc_hdr;

struct baton_mpsc_layout {
	u64 *tail;
	u64 *seq;
	u8 *slots;
	u8 *claims;			/* one page per producer index */
	struct baton_mpsc_hdr *mhdr;
	u32 slot_count;
	u32 slot_size;
	u32 max_producers;
};

/* Check result: sleep, but re-check within a millisecond. */
#define BATON_MPSC_RECHECK	1

struct baton_mpsc *baton_mpsc_new(const struct baton_mpsc_layout *l);
void baton_mpsc_free(struct baton_mpsc *m);
int baton_mpsc_attach(struct baton_mpsc *m);
void baton_mpsc_detach(struct baton_mpsc *m, int k);
int baton_mpsc_check_consumer(struct baton_mpsc *m, u64 c, bool gone);
int baton_mpsc_check_producer(struct baton_mpsc *m, u64 i);

/*
 * limits.c: the per-user caps. A charge records what one object costs its
 * owner, from create until the object is freed.
 */
struct baton_user;

struct baton_charge {
	struct baton_user *user;	/* NULL: nothing charged */
	unsigned long bytes;
};

int baton_charge(struct baton_charge *c, kuid_t uid, unsigned long bytes);
void baton_uncharge(struct baton_charge *c);

/*
 * owner.c: names, permissions, IPC namespaces and registries of the
 * objects behind /dev/baton (rings and epoch domains share the rules).
 */
struct baton_owner {
	kuid_t uid;
	kgid_t gid;
	umode_t mode;
};

/*
 * What every named object embeds, and the registry of one kind of object
 * (rings, epoch domains). The registry holds a reference on each object
 * it lists until unlink or module exit. @ipc_ns is the creator's IPC
 * namespace, pinned until the object is freed: the name is found only
 * from inside it.
 */
struct baton_named {
	struct list_head node;		/* in its registry; names->lock */
	struct kref ref;
	char name[BATON_NAME_MAX];
	struct baton_owner owner;
	struct ipc_namespace *ipc_ns;
	struct baton_charge charge;	/* what the owner pays (limits.c) */
};

struct baton_names {
	struct mutex lock;		/* guards list */
	struct list_head list;
};

int baton_check_name(const char *name);
int baton_named_init(struct baton_named *n, const char *name, u32 mode,
		     unsigned long bytes);
void baton_named_destroy(struct baton_named *n);
bool baton_named_same_ns(const struct baton_named *n);
struct baton_named *baton_names_get(struct baton_names *names,
				    const char *name);
int baton_names_add(struct baton_names *names, struct baton_named *n);
struct baton_named *baton_names_unlink(struct baton_names *names,
				       const char *name);
void baton_names_drain(struct baton_names *names,
		       void (*put)(struct baton_named *n));
int baton_owner_permission(const struct baton_owner *o, int may);

#endif /* BATON_KMOD_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * baton: what the module's files share, and nothing else.
 *
 * main.c owns /dev/baton, the ioctl dispatch and the size-versioned struct
 * rules (baton_copy_in/out); ring.c owns ring objects, their registry and
 * ring fds; barrier.c owns the set of mms that map a ring and the IPI
 * barrier (G) over their CPUs. Each file states its own locking rules; no
 * lock is shared across files except through the functions below.
 */
#ifndef BATON_KMOD_H
#define BATON_KMOD_H

#include <linux/compiler_types.h>
#include <linux/cpumask.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>

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

#endif /* BATON_KMOD_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * baton: the IPI barrier (G) and the set of mms it covers.
 *
 * Owns struct baton_mm_set: for one ring (or epoch domain), the mms that
 * map it, each with the number of its vmas that do. pages.c adds an mm at
 * mmap() and from vm_ops->open (fork, split, mremap) and drops it from
 * vm_ops->close. The
 * parker (BATON_RING_IOC_PARK, or poll about to report not-ready) calls
 * baton_barrier_peers() after its own smp_mb() (F) to force a full
 * barrier on every CPU that may be running a peer.
 *
 * Locking: set->lock (spinlock) guards the list and the untracked count
 * and is never held across anything that sleeps or waits for other CPUs.
 * An entry exists only while its mm has a live vma of the ring, and
 * exit_mmap() closes every vma before the mm goes, so mm_cpumask() of a
 * listed mm is safe to read under set->lock. set->ipi_lock (mutex)
 * serialises the users of set->scratch across the IPI round; it nests
 * outside set->lock.
 */
#include <linux/cpumask.h>
#include <linux/list.h>
#include <linux/mm_types.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/spinlock.h>

#include "baton_kmod.h"

struct baton_mm_ref {
	struct list_head node;
	struct mm_struct *mm;
	unsigned long vmas;	/* vmas of this ring in @mm */
};

int baton_mm_set_init(struct baton_mm_set *set)
{
	spin_lock_init(&set->lock);
	INIT_LIST_HEAD(&set->mms);
	set->untracked = 0;
	mutex_init(&set->ipi_lock);
	if (!zalloc_cpumask_var(&set->scratch, GFP_KERNEL_ACCOUNT))
		return -ENOMEM;
	return 0;
}

/* Called when the ring's last reference goes: no vma is left. */
void baton_mm_set_destroy(struct baton_mm_set *set)
{
	WARN_ON_ONCE(!list_empty(&set->mms) || set->untracked);
	free_cpumask_var(set->scratch);
	mutex_destroy(&set->ipi_lock);
}

static struct baton_mm_ref *baton_mm_find(struct baton_mm_set *set,
					  struct mm_struct *mm)
{
	struct baton_mm_ref *ref;

	lockdep_assert_held(&set->lock);
	list_for_each_entry(ref, &set->mms, node)
		if (ref->mm == mm)
			return ref;
	return NULL;
}

static bool baton_mm_get(struct baton_mm_set *set, struct mm_struct *mm)
{
	struct baton_mm_ref *ref;

	spin_lock(&set->lock);
	ref = baton_mm_find(set, mm);
	if (ref)
		ref->vmas++;
	spin_unlock(&set->lock);
	return ref;
}

/*
 * Record one more vma of @mm. With @nofail an allocation failure is
 * absorbed by counting the vma as untracked, which widens the barrier to
 * every online CPU until it is unmapped: vm_ops->open cannot fail.
 */
static int __baton_mm_set_add(struct baton_mm_set *set, struct mm_struct *mm,
			      bool nofail)
{
	struct baton_mm_ref *ref, *new;
	int ret = 0;

	if (baton_mm_get(set, mm))
		return 0;

	new = kmalloc(sizeof(*new), GFP_KERNEL_ACCOUNT);

	spin_lock(&set->lock);
	ref = baton_mm_find(set, mm);
	if (ref) {
		/* Another vma of @mm got in while we allocated. */
		ref->vmas++;
	} else if (new) {
		new->mm = mm;
		new->vmas = 1;
		list_add(&new->node, &set->mms);
		new = NULL;
	} else if (nofail) {
		set->untracked++;
	} else {
		ret = -ENOMEM;
	}
	spin_unlock(&set->lock);

	kfree(new);
	return ret;
}

int baton_mm_set_add(struct baton_mm_set *set, struct mm_struct *mm)
{
	return __baton_mm_set_add(set, mm, false);
}

void baton_mm_set_add_nofail(struct baton_mm_set *set, struct mm_struct *mm)
{
	__baton_mm_set_add(set, mm, true);
}

/*
 * Drop one vma of @mm. A vma recorded as untracked may be charged to an
 * entry of its mm added later, and a later vma to the untracked count;
 * per mm, recorded vmas never exceed live ones, so an mm with live vmas
 * and no entry always keeps the untracked count above zero.
 */
void baton_mm_set_del(struct baton_mm_set *set, struct mm_struct *mm)
{
	struct baton_mm_ref *ref;

	spin_lock(&set->lock);
	ref = baton_mm_find(set, mm);
	if (ref) {
		if (--ref->vmas)
			ref = NULL;
		else
			list_del(&ref->node);
	} else if (!WARN_ON_ONCE(!set->untracked)) {
		set->untracked--;
	}
	spin_unlock(&set->lock);

	kfree(ref);
}

static void baton_ipi_mb(void *info)
{
	/*
	 * G, matches E: the peer's index store, still in this CPU's store
	 * buffer, becomes visible before the parker's re-check; a peer load
	 * of the waiting flag after this point sees the flag F published.
	 */
	smp_mb();
}

/*
 * (G) Run smp_mb() on every CPU that may be running a peer of the ring.
 * The caller has stored its waiting flag and run smp_mb() (F).
 *
 * Why the OR of mm_cpumask() over the ring's mms is enough on x86:
 *  - a peer stores to the ring's indices only through a mapping of the
 *    ring, so it runs in one of the recorded mms (mmap, and vm_ops->open
 *    on fork, split and mremap, keep the set complete);
 *  - switch_mm_irqs_off() (arch/x86/mm/tlb.c) sets the CPU's bit in the
 *    next mm's mask with a locked instruction before it loads CR3 and
 *    returns to user space, and clears it from the previous mm only when
 *    it switches to another mm (a lazy-TLB kernel thread leaves it set:
 *    one IPI too many, never one too few);
 *  - a CPU whose bit is set when we read the mask gets the IPI, and the
 *    smp_mb() there is membarrier's IPI-induced barrier (scenarios A
 *    and B at the top of the membarrier source in kernel/sched/);
 *  - a CPU whose bit is clear either left the mm before we read the mask,
 *    and a context switch is a full barrier (so is the locked clear), so
 *    its index stores are already visible to our re-check; or it enters
 *    the mm after we read it, after F made the flag visible, so its fast
 *    path load of the flag (E) sees it and the peer calls WAKE (H).
 * Other architectures do not all maintain mm_cpumask() (arm64 does not),
 * so there every online CPU gets the barrier.
 *
 * Stores made other than through a mapping (process_vm_writev(),
 * /proc/pid/mem) are not covered; a baton peer never makes them.
 */
/*
 * @dst |= @live, where @live is an mm's cpumask that context switches on
 * other CPUs set and clear under us (atomic bitops): read word by word
 * with READ_ONCE, as membarrier reads what it races with. A bit read
 * stale costs one IPI too many, or misses a CPU that switched away (it
 * needs none) or in since (its switch_mm() is a full barrier, after
 * which it sees what the caller stored before F).
 */
static void baton_mask_or_live(struct cpumask *dst, const struct cpumask *live)
{
	unsigned long *d = cpumask_bits(dst);
	const unsigned long *l = cpumask_bits(live);
	unsigned int i;

	for (i = 0; i < BITS_TO_LONGS(nr_cpu_ids); i++)
		d[i] |= READ_ONCE(l[i]);
}

void baton_barrier_peers(struct baton_mm_set *set)
{
	const struct cpumask *mask = cpu_online_mask;
	struct baton_mm_ref *ref;

	mutex_lock(&set->ipi_lock);
	if (IS_ENABLED(CONFIG_X86)) {
		spin_lock(&set->lock);
		if (!set->untracked) {
			cpumask_clear(set->scratch);
			list_for_each_entry(ref, &set->mms, node)
				baton_mask_or_live(set->scratch,
						   mm_cpumask(ref->mm));
			mask = set->scratch;
		}
		spin_unlock(&set->lock);
	}
	/* Waits for every handler: the peers' barriers have all run. */
	on_each_cpu_mask(mask, baton_ipi_mb, NULL, true);
	mutex_unlock(&set->ipi_lock);

	/*
	 * G, membarrier's barrier (c): the caller's re-check of the peer's
	 * index is ordered after the barriers the IPIs ran.
	 */
	smp_mb();
}

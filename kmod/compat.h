/* SPDX-License-Identifier: GPL-2.0 */
/*
 * baton: the kernel API differences between the releases baton builds for.
 *
 * Owns every #if on the kernel version: object code calls the helpers
 * below and never tests LINUX_VERSION_CODE itself. Each helper names the
 * release that changed the API it hides. Kernels tested (make check):
 * Debian 12's 6.1, 6.12 and 6.12 PREEMPT_RT. The branches for 6.13 and
 * later were built (W=1) and loaded against Debian sid's 7.2 once, by
 * hand (the selftests passed there, fuzz aside: see fuzz.c); the release
 * each names is from the series that made the change.
 */
#ifndef BATON_COMPAT_H
#define BATON_COMPAT_H

#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/mm.h>
#include <linux/shmem_fs.h>
#include <linux/version.h>
#include <net/genetlink.h>

/*
 * 6.3 made vma->vm_flags read-only (const) and added vm_flags_set() and
 * vm_flags_clear(), which also assert the mmap write lock and, with
 * per-VMA locks, mark the VMA for writing. ->mmap runs under that lock on
 * every release.
 */
#if KERNEL_VERSION(6, 3, 0) <= LINUX_VERSION_CODE
static inline void baton_vm_flags_set(struct vm_area_struct *vma,
				      vm_flags_t flags)
{
	vm_flags_set(vma, flags);
}

static inline void baton_vm_flags_clear(struct vm_area_struct *vma,
					vm_flags_t flags)
{
	vm_flags_clear(vma, flags);
}
#else
static inline void baton_vm_flags_set(struct vm_area_struct *vma,
				      vm_flags_t flags)
{
	vma->vm_flags |= flags;
}

static inline void baton_vm_flags_clear(struct vm_area_struct *vma,
					vm_flags_t flags)
{
	vma->vm_flags &= ~flags;
}
#endif

/*
 * 6.6 gave dumps a struct genl_info (struct genl_dumpit_info's attrs moved
 * to info.attrs, as a doit's genl_info has them); before, the dump info
 * carried the parsed attributes itself. NULL when the request had none.
 */
static inline struct nlattr **
baton_genl_dump_attrs(const struct genl_dumpit_info *info)
{
#if KERNEL_VERSION(6, 6, 0) <= LINUX_VERSION_CODE
	return info->info.attrs;
#else
	return info->attrs;
#endif
}

/*
 * A reference to the file *fp points at, under rcu_read_lock(), or NULL if
 * there is none or its count is zero. 6.7 made files SLAB_TYPESAFE_BY_RCU:
 * get_file_active() re-reads *fp after the increment (the memory may be
 * another file by then) and returns NULL on a zero count. Not
 * get_file_rcu(): that one retries until *fp changes, and a socket's
 * ->file keeps pointing at the dying file until __fput() reaches
 * sock_close(), which may be queued behind us on this CPU: it spun for
 * ever on 6.12. Before 6.7 the memory stayed that file's until the grace
 * period ended, and get_file_rcu() was the increment-unless-zero.
 */
static inline struct file *baton_get_file_rcu(struct file **fp)
{
#if KERNEL_VERSION(6, 7, 0) <= LINUX_VERSION_CODE
	return get_file_active(fp);
#else
	struct file *file = READ_ONCE(*fp);

	return file && get_file_rcu(file) ? file : NULL;
#endif
}

/*
 * 6.13 added hrtimer_setup(), which sets the callback with the rest; 6.15
 * removed hrtimer_init() and made struct hrtimer's ->function private.
 */
static inline void
baton_hrtimer_setup(struct hrtimer *timer,
		    enum hrtimer_restart (*fn)(struct hrtimer *),
		    clockid_t clock, enum hrtimer_mode mode)
{
#if KERNEL_VERSION(6, 13, 0) <= LINUX_VERSION_CODE
	hrtimer_setup(timer, fn, clock, mode);
#else
	hrtimer_init(timer, clock, mode);
	timer->function = fn;
#endif
}

/*
 * An unlinked shmem file whose size is not accounted up front
 * (VM_NORESERVE). 7.0 made shmem_file_setup()'s flags a vma_flags_t,
 * built with mk_vma_flags() from VMA_*_BIT numbers.
 */
static inline struct file *baton_shmem_file_setup_noreserve(const char *name,
							    loff_t size)
{
#if KERNEL_VERSION(7, 0, 0) <= LINUX_VERSION_CODE
	return shmem_file_setup(name, size, mk_vma_flags(VMA_NORESERVE_BIT));
#else
	return shmem_file_setup(name, size, VM_NORESERVE);
#endif
}

/* Map @vma with @file's own mmap. 6.17 renamed call_mmap() to vfs_mmap(). */
static inline int baton_vfs_mmap(struct file *file, struct vm_area_struct *vma)
{
#if KERNEL_VERSION(6, 17, 0) <= LINUX_VERSION_CODE
	return vfs_mmap(file, vma);
#else
	return call_mmap(file, vma);
#endif
}

#endif /* BATON_COMPAT_H */

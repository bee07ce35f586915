/* SPDX-License-Identifier: GPL-2.0 */
/*
 * baton: what differs between the kernels baton.ko builds for, and nothing
 * else. Each difference is one small helper named baton_<what the kernel
 * calls it>, so the rest of the module reads the same on every kernel.
 */
#ifndef BATON_COMPAT_H
#define BATON_COMPAT_H

#include <linux/mm.h>

/*
 * vma->vm_flags: a plain field written directly up to 6.2; from 6.3 it is
 * const and changes go through vm_flags_set() and vm_flags_clear(), which
 * also assert the mmap lock (->mmap holds it for writing either way).
 * Kbuild defines BATON_HAVE_VM_FLAGS_SET when <linux/mm.h> has them: a
 * probe, not a version test, as stable kernels backport.
 */
#ifndef BATON_HAVE_VM_FLAGS_SET
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
#else
/* baton_vm_flags_set() and _clear() are vm_flags_set() and _clear(). */
#endif

#endif /* BATON_COMPAT_H */

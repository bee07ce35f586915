// SPDX-License-Identifier: GPL-2.0
/*
 * baton: the pages of one object (a ring or an epoch domain) and how user
 * space maps them.
 *
 * Owns struct baton_pages: the object's pages, charged to the creator's
 * memory cgroup, their vmap() (the kernel's view, for the object's whole
 * life), and baton_pages_mmap(), the one way a range of them reaches a
 * user mapping. ring.c and epoch.c say which range a role may map and
 * whether writable (struct baton_region); this file applies it: the
 * checks every region shares, the vma flags, the PTEs, and the mm
 * tracking the IPI barrier needs (barrier.c).
 *
 * Two kinds of pages (Documentation/threat-model.rst, "Pages and pins"):
 *  - control pages (headers, index pages, sequence words, claim pages,
 *    epoch regions): VM_PFNMAP | VM_IO, special PTEs (remap_pfn_range()).
 *    get_user_pages() refuses them (EFAULT), so vmsplice(), O_DIRECT,
 *    process_vm_writev() and the like cannot take a reference that
 *    outlives the mapping: once a holder's last vma is gone, only the
 *    kernel can write its pages, which is what lets the kernel reset a
 *    claim page or a participant region for the next holder;
 *  - data pages (ring slots): ordinary PTEs (vm_insert_page(),
 *    VM_MIXEDMAP), which GUP accepts, so I/O can go straight into a slot.
 *    A write that outlives its writer's role can only change slot
 *    contents, which every producer may already write and the kernel
 *    never reads.
 *
 * Lifetime: special PTEs hold no page reference. The pages are freed only
 * with the object, and the object outlives every vma that maps it (a vma
 * holds its vm_file, the file holds the object); slot pages pinned by GUP
 * are freed when the last pin goes.
 *
 * The mm tracking: every vma carries the object's struct baton_mm_set in
 * vm_private_data, which fork, split and mremap copy; vm_ops->open and
 * ->close keep the set complete (barrier.c says why it must be).
 */
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "baton_kmod.h"
#include "compat.h"

/*
 * Charged to the caller's memory cgroup (an object can be 256 MiB and
 * /dev/baton is open to everyone). vmalloc_user() would give the same
 * memory but cannot charge it. Charging marks the page's memcg, not its
 * type: vm_insert_page() and remap_pfn_range() take it as any page.
 *
 * __GFP_RETRY_MAYFAIL: an object that does not fit the creator's
 * memory.max (or the machine) is the caller's ENOMEM, never an OOM kill
 * of whatever else runs in its cgroup; try_charge_memcg() gives up before
 * its OOM killer for such requests.
 */
#define BATON_PAGES_GFP	(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL |	\
			 __GFP_NOWARN)

/* @nr zeroed pages and their vmap(): 0 or -ENOMEM, with nothing left. */
int baton_pages_alloc(struct baton_pages *p, unsigned int nr)
{
	unsigned int i;

	p->pages = kvcalloc(nr, sizeof(*p->pages), BATON_PAGES_GFP);
	if (!p->pages)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		p->pages[i] = alloc_page(BATON_PAGES_GFP | __GFP_ZERO);
		if (!p->pages[i])
			goto fail;
	}
	p->base = vmap(p->pages, nr, VM_MAP, PAGE_KERNEL);
	if (p->base) {
		p->nr = nr;
		return 0;
	}
fail:
	while (i--)
		__free_page(p->pages[i]);
	kvfree(p->pages);
	p->pages = NULL;
	return -ENOMEM;
}

/* With the object: no vma maps the pages any more. */
void baton_pages_free(struct baton_pages *p)
{
	unsigned int i;

	if (!p->pages)
		return;
	vunmap(p->base);
	for (i = 0; i < p->nr; i++)
		__free_page(p->pages[i]);
	kvfree(p->pages);
	p->pages = NULL;
	p->nr = 0;
}

static void baton_pages_vm_open(struct vm_area_struct *vma)
{
	baton_mm_set_add_nofail(vma->vm_private_data, vma->vm_mm);
}

static void baton_pages_vm_close(struct vm_area_struct *vma)
{
	baton_mm_set_del(vma->vm_private_data, vma->vm_mm);
}

static const struct vm_operations_struct baton_pages_vm_ops = {
	.open	= baton_pages_vm_open,
	.close	= baton_pages_vm_close,
};

/*
 * A data mapping's PTEs can go while the mapping stays:
 * madvise(MADV_DONTNEED) accepts VM_MIXEDMAP. The next touch comes here
 * and gets the object's own page back (a data region's page index is its
 * file offset: ring.c); without this handler it was SIGBUS. The range is
 * the vma's, which never grows past the region (VM_DONTEXPAND).
 */
static vm_fault_t baton_pages_data_fault(struct vm_fault *vmf)
{
	const struct baton_mm_set *mms = vmf->vma->vm_private_data;
	const struct baton_pages *p = READ_ONCE(mms->pages);

	if (!p || vmf->pgoff >= p->nr)
		return VM_FAULT_SIGBUS;
	return vmf_insert_page(vmf->vma, vmf->address, p->pages[vmf->pgoff]);
}

static const struct vm_operations_struct baton_pages_data_vm_ops = {
	.open	= baton_pages_vm_open,
	.close	= baton_pages_vm_close,
	.fault	= baton_pages_data_fault,
};

/* Special PTEs, one page at a time: the pages need not be contiguous. */
static int baton_pages_map_pfns(struct vm_area_struct *vma,
				struct page **pages, unsigned long n)
{
	unsigned long i;
	int ret;

	baton_vm_flags_set(vma, VM_IO | VM_PFNMAP);
	for (i = 0; i < n; i++) {
		ret = remap_pfn_range(vma, vma->vm_start + (i << PAGE_SHIFT),
				      page_to_pfn(pages[i]), PAGE_SIZE,
				      vma->vm_page_prot);
		if (ret)
			return ret;
	}
	return 0;
}

/* Ordinary PTEs: each holds a reference on its page, GUP may take more. */
static int baton_pages_map_data(struct vm_area_struct *vma,
				struct page **pages, unsigned long n)
{
	baton_vm_flags_set(vma, VM_MIXEDMAP);
	return vm_map_pages_zero(vma, pages, n);
}

/*
 * Map region @r of @p into @vma, recording its mm in @mms. The length may
 * be shorter than the region, never longer (EINVAL); the mapping must be
 * MAP_SHARED (EINVAL: a private copy of shared words is meaningless); a
 * region the role does not write refuses PROT_WRITE (EACCES) and loses
 * VM_MAYWRITE, so mprotect() cannot upgrade it. No mapping grows
 * (VM_DONTEXPAND) or goes into a core dump (VM_DONTDUMP).
 *
 * On failure mmap_region() unmaps whatever was mapped, without ->close
 * (vm_ops is set last), so the mm is dropped here.
 */
int baton_pages_mmap(const struct baton_pages *p, struct vm_area_struct *vma,
		     const struct baton_region *r, struct baton_mm_set *mms)
{
	unsigned long n = vma_pages(vma);
	struct page **pages = p->pages + r->first;
	int ret;

	if (n > r->pages || WARN_ON_ONCE(r->first + r->pages > p->nr))
		return -EINVAL;
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (!r->writable) {
		if (vma->vm_flags & VM_WRITE)
			return -EACCES;
		baton_vm_flags_clear(vma, VM_MAYWRITE);
	}
	baton_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);

	/* Before the PTEs: no store through this vma escapes the barrier. */
	ret = baton_mm_set_add(mms, vma->vm_mm);
	if (ret)
		return ret;
	if (r->data)
		ret = baton_pages_map_data(vma, pages, n);
	else
		ret = baton_pages_map_pfns(vma, pages, n);
	if (ret) {
		baton_mm_set_del(mms, vma->vm_mm);
		return ret;
	}
	vma->vm_private_data = mms;
	if (r->data) {
		/* The same pages whichever mapping stores them first. */
		WRITE_ONCE(mms->pages, p);
		vma->vm_ops = &baton_pages_data_vm_ops;
	} else {
		vma->vm_ops = &baton_pages_vm_ops;
	}
	return 0;
}

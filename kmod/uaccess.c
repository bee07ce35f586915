// SPDX-License-Identifier: GPL-2.0
/*
 * baton: the size rules of every baton ioctl struct, the only two
 * functions of the module that touch an ioctl's user memory, and the end
 * of every call that hands back a new fd in its struct.
 *
 * Every struct of uapi/linux/baton.h starts with its u32 @size. The kernel
 * reads the caller's size first, rejects one below the struct's first
 * version (EINVAL) or above a page (E2BIG), copies with
 * copy_struct_from_user() (E2BIG for a non-zero tail it does not know),
 * and copies outputs back for min(@size, its own sizeof) bytes.
 *
 * Deadlines in those structs are the caller's CLOCK_MONOTONIC, which a
 * time namespace shifts; baton_user_deadline() turns one into the
 * kernel's own clock, as the kernel's timed syscalls do.
 *
 * Both may fault and sleep for as long as the caller's page takes to come
 * in (a userfaultfd or FUSE page: forever). So no caller may hold a lock
 * that anyone else waits for uninterruptibly (Documentation/
 * threat-model.rst, "User memory and locks"): copy in before taking it,
 * copy out after dropping it.
 *
 * Locking: none; the caller's own copies only.
 */
#include <linux/file.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/nsproxy.h>
#include <linux/sched.h>
#include <linux/time_namespace.h>
#include <linux/uaccess.h>

#include "baton_kmod.h"

/*
 * Copy a size-versioned struct in. @k is @ksize bytes and, like every
 * baton ioctl struct, starts with its u32 size. On success *@usize holds
 * the caller's size, which is also written over k's own size field so
 * nothing later acts on a second fetch of it.
 */
int baton_copy_in(void *k, size_t ksize, size_t ver0,
		  const void __user *uarg, u32 *usize)
{
	u32 size;
	int ret;

	if (get_user(size, (const u32 __user *)uarg))
		return -EFAULT;
	if (size < ver0)
		return -EINVAL;
	/* Bounds the zero-tail scan, as clone3() and sched_setattr() do. */
	if (size > PAGE_SIZE)
		return -E2BIG;
	ret = copy_struct_from_user(k, ksize, uarg, size);
	if (ret)
		return ret;
	*(u32 *)k = size;
	*usize = size;
	return 0;
}

/*
 * An absolute CLOCK_MONOTONIC deadline as the caller reads that clock, on
 * the kernel's clock (ktime_get()). A time namespace adds its monotonic
 * offset to what its tasks read (a restored container: often days), so
 * the caller's "now + 10 ms" taken as is would be days away, or long
 * past. timens_ktime_to_host() does this for the kernel's own syscalls
 * but calls a function modules cannot link against; the arithmetic is
 * the same: a deadline below the offset is already past.
 */
ktime_t baton_user_deadline(u64 deadline_ns)
{
	ktime_t t = min_t(u64, deadline_ns, KTIME_MAX);
#ifdef CONFIG_TIME_NS
	ktime_t off = timespec64_to_ktime(current->nsproxy->time_ns->offsets.monotonic);

	if (off > 0)
		t = t < off ? 0 : t - off;
	else if (off < 0)
		t = t > KTIME_MAX + off ? KTIME_MAX : t - off;
#endif
	return t;
}

int baton_copy_out(void __user *uarg, u32 usize, const void *k, size_t ksize)
{
	if (copy_to_user(uarg, k, min_t(size_t, usize, ksize)))
		return -EFAULT;
	return 0;
}

/*
 * The last steps of a create or open that returns @file at @fd in @k:
 * copy @k out, then, for a create, publish @n in @names (the name last,
 * so a failed create leaves nothing behind), then install the fd. If a
 * step fails the fd is never installed and fput() runs the file's
 * release, which undoes what the file held: the caller has nothing left
 * to clean up.
 */
int baton_copy_out_fd(void __user *uarg, u32 usize, const void *k,
		      size_t ksize, int fd, struct file *file,
		      struct baton_names *names, struct baton_named *n)
{
	int ret = baton_copy_out(uarg, usize, k, ksize);

	if (!ret && names)
		ret = baton_names_add(names, n);
	if (ret) {
		fput(file);
		put_unused_fd(fd);
		return ret;
	}
	fd_install(fd, file);
	return 0;
}

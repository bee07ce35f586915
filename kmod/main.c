// SPDX-License-Identifier: GPL-2.0
/*
 * baton: /dev/baton, module init and exit, ioctl dispatch.
 *
 * Owns the misc device and the table of /dev/baton ioctls, which applies
 * the size rules of uaccess.c once for every command. Ring objects live
 * in ring.c, epoch domains in epoch.c and buffer pools in pool.c, which
 * this file only calls;
 * the generic netlink family (netlink.c) is registered before the device
 * and unregistered after it.
 *
 * Locking: none here. The device has no state of its own; the misc core
 * and the file's module reference keep it alive while it is open.
 */
#include <linux/build_bug.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/workqueue.h>

#include <linux/baton.h>

#include "baton_kmod.h"

#define BATON_FEATURES	(BATON_FEAT_RING_SPSC | BATON_FEAT_PARK |	\
			 BATON_FEAT_POLL | BATON_FEAT_PEER_DEATH |	\
			 BATON_FEAT_ROLE_MMAP | BATON_FEAT_RING_MPSC |	\
			 BATON_FEAT_EPOCH | BATON_FEAT_NAME_WAIT |	\
			 BATON_FEAT_POOL | BATON_FEAT_POOL_WAIT |	\
			 BATON_FEAT_POOL_SHARE | BATON_FEAT_RING_BIND |	\
			 BATON_FEAT_POOL_COLD | BATON_FEAT_POOL_COLD_OPTIN |	\
			 BATON_FEAT_POOL_IDLE)

/* Handlers get the copied-in struct, the user pointer and the caller's size. */
static long baton_ioc_version(void *arg, void __user *uarg, u32 usize)
{
	struct baton_version *k = arg;

	if (k->flags)
		return -EINVAL;
	k->out_abi_version = BATON_ABI_VERSION;
	k->out_reserved = 0;
	k->out_features = BATON_FEATURES;
	return baton_copy_out(uarg, usize, k, sizeof(*k));
}

static long baton_ioc_ring_create(void *k, void __user *uarg, u32 usize)
{
	return baton_ring_create(k, uarg, usize);
}

static long baton_ioc_ring_open(void *k, void __user *uarg, u32 usize)
{
	return baton_ring_open(k, uarg, usize);
}

static long baton_ioc_unlink(void *k, void __user *uarg, u32 usize)
{
	return baton_ring_unlink(k);
}

static long baton_ioc_epoch_create(void *k, void __user *uarg, u32 usize)
{
	return baton_epoch_create(k, uarg, usize);
}

static long baton_ioc_epoch_open(void *k, void __user *uarg, u32 usize)
{
	return baton_epoch_open(k, uarg, usize);
}

static long baton_ioc_epoch_unlink(void *k, void __user *uarg, u32 usize)
{
	return baton_epoch_unlink(k);
}

static long baton_ioc_pool_create(void *k, void __user *uarg, u32 usize)
{
	return baton_pool_create(k, uarg, usize);
}

static long baton_ioc_pool_open(void *k, void __user *uarg, u32 usize)
{
	return baton_pool_open(k, uarg, usize);
}

static long baton_ioc_pool_unlink(void *k, void __user *uarg, u32 usize)
{
	return baton_pool_unlink(k);
}

static long baton_ioc_name_wait(void *k, void __user *uarg, u32 usize)
{
	return baton_name_wait(k);
}

/* Room for the largest struct any /dev/baton ioctl takes. */
union baton_dev_arg {
	struct baton_version version;
	struct baton_ring_create ring_create;
	struct baton_ring_open ring_open;
	struct baton_unlink unlink;
	struct baton_epoch_create epoch_create;
	struct baton_epoch_open epoch_open;
	struct baton_name_wait name_wait;
	struct baton_pool_create pool_create;
	struct baton_pool_open pool_open;
};

/*
 * One row per /dev/baton ioctl, as iommufd does it: the size rules are
 * applied once, here, for every command, so no handler can forget them.
 */
struct baton_dev_op {
	unsigned int cmd;
	size_t ksize;
	size_t ver0;
	long (*fn)(void *k, void __user *uarg, u32 usize);
};

static const struct baton_dev_op baton_dev_ops[] = {
	{ BATON_IOC_VERSION, sizeof(struct baton_version),
	  BATON_VERSION_SIZE_VER0, baton_ioc_version },
	{ BATON_IOC_RING_CREATE, sizeof(struct baton_ring_create),
	  BATON_RING_CREATE_SIZE_VER0, baton_ioc_ring_create },
	{ BATON_IOC_RING_OPEN, sizeof(struct baton_ring_open),
	  BATON_RING_OPEN_SIZE_VER0, baton_ioc_ring_open },
	{ BATON_IOC_UNLINK, sizeof(struct baton_unlink),
	  BATON_UNLINK_SIZE_VER0, baton_ioc_unlink },
	{ BATON_IOC_EPOCH_CREATE, sizeof(struct baton_epoch_create),
	  BATON_EPOCH_CREATE_SIZE_VER0, baton_ioc_epoch_create },
	{ BATON_IOC_EPOCH_OPEN, sizeof(struct baton_epoch_open),
	  BATON_EPOCH_OPEN_SIZE_VER0, baton_ioc_epoch_open },
	{ BATON_IOC_EPOCH_UNLINK, sizeof(struct baton_unlink),
	  BATON_UNLINK_SIZE_VER0, baton_ioc_epoch_unlink },
	{ BATON_IOC_NAME_WAIT, sizeof(struct baton_name_wait),
	  BATON_NAME_WAIT_SIZE_VER0, baton_ioc_name_wait },
	{ BATON_IOC_POOL_CREATE, sizeof(struct baton_pool_create),
	  BATON_POOL_CREATE_SIZE_VER0, baton_ioc_pool_create },
	{ BATON_IOC_POOL_OPEN, sizeof(struct baton_pool_open),
	  BATON_POOL_OPEN_SIZE_VER0, baton_ioc_pool_open },
	{ BATON_IOC_POOL_UNLINK, sizeof(struct baton_unlink),
	  BATON_UNLINK_SIZE_VER0, baton_ioc_pool_unlink },
};

static long baton_dev_ioctl(struct file *file, unsigned int cmd,
			    unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	union baton_dev_arg k;
	u32 usize;
	size_t i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(baton_dev_ops); i++) {
		const struct baton_dev_op *op = &baton_dev_ops[i];

		if (op->cmd != cmd)
			continue;
		ret = baton_copy_in(&k, op->ksize, op->ver0, uarg, &usize);
		if (ret)
			return ret;
		return op->fn(&k, uarg, usize);
	}
	return -ENOTTY;
}

static const struct file_operations baton_dev_fops = {
	.owner		= THIS_MODULE,
	.unlocked_ioctl	= baton_dev_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

/* 0666: anyone may ask; each ring carries its own owner and mode. */
static struct miscdevice baton_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "baton",
	.fops	= &baton_dev_fops,
	.mode	= 0666,
};

struct workqueue_struct *baton_wq;

static int __init baton_init(void)
{
	int ret;

	/* The structs are the ABI: their first versions are their sizes. */
	BUILD_BUG_ON(sizeof(struct baton_version) != BATON_VERSION_SIZE_VER0);
	BUILD_BUG_ON(sizeof(struct baton_ring_create) !=
		     BATON_RING_CREATE_SIZE_VER0);
	BUILD_BUG_ON(sizeof(struct baton_ring_open) !=
		     BATON_RING_OPEN_SIZE_VER0);
	BUILD_BUG_ON(sizeof(struct baton_unlink) != BATON_UNLINK_SIZE_VER0);
	BUILD_BUG_ON(sizeof(struct baton_park) != BATON_PARK_SIZE_VER0);
	BUILD_BUG_ON(sizeof(struct baton_ring_info) !=
		     BATON_RING_INFO_SIZE_VER0);
	BUILD_BUG_ON(sizeof(struct baton_epoch_create) !=
		     BATON_EPOCH_CREATE_SIZE_VER0);
	BUILD_BUG_ON(sizeof(struct baton_epoch_open) !=
		     BATON_EPOCH_OPEN_SIZE_VER0);
	BUILD_BUG_ON(sizeof(struct baton_epoch_register) !=
		     BATON_EPOCH_REGISTER_SIZE_VER0);
	BUILD_BUG_ON(sizeof(struct baton_epoch_collect) !=
		     BATON_EPOCH_COLLECT_SIZE_VER0);
	BUILD_BUG_ON(sizeof(struct baton_epoch_sync) !=
		     BATON_EPOCH_SYNC_SIZE_VER0);
	BUILD_BUG_ON(sizeof(struct baton_epoch_poll) !=
		     BATON_EPOCH_POLL_SIZE_VER0);
	BUILD_BUG_ON(sizeof(struct baton_name_wait) !=
		     BATON_NAME_WAIT_SIZE_VER0);
	BUILD_BUG_ON(sizeof(struct baton_pool_create) !=
		     BATON_POOL_CREATE_SIZE_VER0);
	BUILD_BUG_ON(sizeof(struct baton_pool_open) !=
		     BATON_POOL_OPEN_SIZE_VER0);
	/*
	 * The pool ABI places claim pages at 4096-byte strides and the
	 * library checks the geometry it maps against 4096 (baton.h), while
	 * the module sizes them by PAGE_SIZE: on a kernel with larger pages
	 * the two would disagree, so such a build is refused outright
	 * (Documentation/building.rst, "Supported kernels").
	 */
	BUILD_BUG_ON(PAGE_SIZE != 4096);

	/*
	 * Unbound: a pool's decay and repair requeue themselves, so on a
	 * per-CPU queue they would stay on the CPU they first ran on, and a
	 * real-time task holding that CPU (an RT holder spinning, RT
	 * throttling off) would stop the decay and the repair of dead
	 * holders for as long as it runs. Unbound, they run on any CPU the
	 * scheduler finds free.
	 */
	baton_wq = alloc_workqueue("baton", WQ_UNBOUND, 0);
	if (!baton_wq)
		return -ENOMEM;
	/* Netlink first: events of the first ring need the family. */
	ret = baton_nl_init();
	if (ret)
		goto destroy_wq;
	ret = misc_register(&baton_misc);
	if (ret)
		goto nl_exit;
	return 0;

nl_exit:
	baton_nl_exit();
destroy_wq:
	destroy_workqueue(baton_wq);
	return ret;
}

static void __exit baton_exit(void)
{
	misc_deregister(&baton_misc);
	/* Before the drains: their frees would only queue dropped events. */
	baton_nl_exit();
	/* No ring file or mapping is left: each pins the module. */
	baton_registry_drain();
	baton_epoch_registry_drain();
	baton_pool_registry_drain();
	/* Each free cancelled its works: nothing is left to drain. */
	destroy_workqueue(baton_wq);
}

module_init(baton_init);
module_exit(baton_exit);

MODULE_DESCRIPTION("baton: shared-memory rings between processes");
MODULE_LICENSE("GPL");

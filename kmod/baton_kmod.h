/* SPDX-License-Identifier: GPL-2.0 */
/*
 * baton: what the module's files share, and nothing else.
 *
 * main.c owns /dev/baton and the ioctl dispatch; pool.c buffer pools; uaccess.c the
 * size-versioned struct rules (baton_copy_in/out); ring.c owns ring objects, their registry and
 * ring fds; mpsc.c owns the MPSC protocol state of a ring (producer
 * indices, dead producers, tombstones); barrier.c owns the set of mms that
 * map a ring and the IPI barrier (G) over their CPUs; pages.c the pages of
 * rings and domains and their mappings. Each file states its
 * own locking rules; no lock is shared across files except through the
 * functions below. netlink.c owns the generic netlink family "baton":
 * statistics of named objects, watchers and events; the other files only
 * fill its stats structs and hand it events.
 */
#ifndef BATON_KMOD_H
#define BATON_KMOD_H

#include <linux/compiler_types.h>
#include <linux/cpumask.h>
#include <linux/hrtimer.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include <linux/baton.h>
#include <linux/baton_nl.h>

struct ipc_namespace;
struct mm_struct;
struct pid;
struct baton_ring_create;
struct baton_ring_open;
struct baton_unlink;
struct baton_name_wait;

/* uaccess.c: the size rules of every baton ioctl struct; they may fault. */
int baton_copy_in(void *k, size_t ksize, size_t ver0,
		  const void __user *uarg, u32 *usize);
int baton_copy_out(void __user *uarg, u32 usize, const void *k, size_t ksize);
ktime_t baton_user_deadline(u64 deadline_ns);
struct file;
struct baton_names;
struct baton_named;
int baton_copy_out_fd(void __user *uarg, u32 usize, const void *k,
		      size_t ksize, int fd, struct file *file,
		      struct baton_names *names, struct baton_named *n);

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

/* pool.c: the /dev/baton ioctls that act on buffer pools. */
struct baton_pool_create;
struct baton_pool_open;
int baton_pool_create(struct baton_pool_create *k, void __user *uarg,
		      u32 usize);
int baton_pool_open(struct baton_pool_open *k, void __user *uarg, u32 usize);
int baton_pool_unlink(const struct baton_unlink *k);
void baton_pool_registry_drain(void);
/* pool.c, for rings bound to a pool (BATON_RING_IOC_BIND_POOL). */
struct baton_pool;
struct baton_pool *baton_pool_fget(int fd);
void baton_pool_unref(struct baton_pool *pool);
void baton_pool_return_sent(struct baton_pool *pool, u64 ring_id);

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
	/* The object's pages, once a data region is mapped (pages.c). */
	const struct baton_pages *pages;
};

int baton_mm_set_init(struct baton_mm_set *set);
void baton_mm_set_destroy(struct baton_mm_set *set);
int baton_mm_set_add(struct baton_mm_set *set, struct mm_struct *mm);
void baton_mm_set_add_nofail(struct baton_mm_set *set, struct mm_struct *mm);
void baton_mm_set_del(struct baton_mm_set *set, struct mm_struct *mm);
void baton_barrier_peers(struct baton_mm_set *set);

/*
 * pages.c: the pages of one ring or epoch domain, the kernel's vmap() of
 * them, and their user mappings (control pages refuse GUP, slots do not).
 */
struct vm_area_struct;

struct baton_pages {
	struct page **pages;
	unsigned int nr;
	void *base;			/* vmap() of @pages */
};

/* One region of an object, as the caller's role may map it. */
struct baton_region {
	unsigned long first;		/* its first page in the object */
	unsigned long pages;		/* its length in pages */
	bool writable;			/* the role may map it PROT_WRITE */
	bool data;			/* ring slots: GUP-able (pages.c) */
};

int baton_pages_alloc(struct baton_pages *p, unsigned int nr);
void baton_pages_free(struct baton_pages *p);
int baton_pages_mmap(const struct baton_pages *p, struct vm_area_struct *vma,
		     const struct baton_region *r, struct baton_mm_set *mms);

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
	const struct baton_named *named;	/* the ring, for events */
};

/* Check result: sleep, but re-check within a millisecond. */
#define BATON_MPSC_RECHECK	1

struct baton_mpsc *baton_mpsc_new(const struct baton_mpsc_layout *l);
void baton_mpsc_free(struct baton_mpsc *m);
int baton_mpsc_attach(struct baton_mpsc *m);
void baton_mpsc_detach(struct baton_mpsc *m, int k);
void baton_mpsc_set_consumer(struct baton_mpsc *m, struct pid *pid);
int baton_mpsc_check_consumer(struct baton_mpsc *m, u64 c, bool gone);
int baton_mpsc_check_producer(struct baton_mpsc *m, u64 i);
bool baton_mpsc_released_ahead(struct baton_mpsc *m, u64 c);

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
	int open_may;	/* MAY_* an opener needs; 0: either (a ring's role) */
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
	struct list_head live;		/* in names->live until freed */
	struct kref ref;
	char name[BATON_NAME_MAX];
	struct baton_owner owner;
	struct ipc_namespace *ipc_ns;
	struct baton_charge charge;	/* what the owner pays (limits.c) */
	u64 id;				/* publication order: a dump's cursor */
	bool published;			/* was ever listed (names->lock) */
};

/*
 * @list: reachable by name. @live: every published object not yet freed,
 * unlinked ones included (statistics list them; they hold no reference).
 * @added counts publications; @added_wq wakes BATON_IOC_NAME_WAIT
 * sleepers after each one (owner.c, baton_name_wait()).
 */
struct baton_names {
	struct mutex lock;		/* guards list, live and added */
	struct list_head list;
	struct list_head live;
	u64 added;
	wait_queue_head_t added_wq;
	void (*release)(struct kref *ref);	/* the kind's free */
	u32 created_event;			/* BATON_EVENT_*_CREATED */
	u32 unlinked_event;			/* BATON_EVENT_*_UNLINKED */
};

int baton_check_name(const char *name);
int baton_named_init(struct baton_named *n, const char *name, u32 mode,
		     int open_may, unsigned long bytes);
void baton_named_destroy(struct baton_named *n);
bool baton_named_same_ns(const struct baton_named *n);
u32 baton_named_ns_id(const struct baton_named *n);
struct baton_named *baton_names_get(struct baton_names *names,
				    const char *name);
int baton_names_add(struct baton_names *names, struct baton_named *n);
struct baton_named *baton_names_unlink(struct baton_names *names,
				       const struct baton_unlink *k);
int baton_names_remove(struct baton_names *names, const struct baton_unlink *k);
void baton_names_drain(struct baton_names *names,
		       void (*put)(struct baton_named *n));
int baton_owner_permission(const struct baton_owner *o, int may);
int baton_name_wait(const struct baton_name_wait *k);

/*
 * The one visibility rule of statistics and events (owner.c): may the
 * current credentials, asking from IPC namespace @ns, learn that @n
 * exists? Dumps, doits and event delivery (under the watcher's saved
 * credentials and namespace) all ask this.
 */
bool baton_named_visible(const struct baton_named *n,
			 const struct ipc_namespace *ns);
/* The caller's IPC namespace, and a reference on one (owner.c). */
struct ipc_namespace *baton_current_ipc_ns(void);
struct ipc_namespace *baton_get_ipc_ns(struct ipc_namespace *ns);
void baton_put_ipc_ns(struct ipc_namespace *ns);
struct baton_named *baton_names_next(struct baton_names *names, u64 after);
bool baton_named_unlinked(struct baton_names *names,
			  const struct baton_named *n);
void baton_named_put(struct baton_names *names, struct baton_named *n);
void baton_named_forget(struct baton_names *names, struct baton_named *n);

/*
 * baton's one workqueue (main.c): every work item of the module (a pool's
 * decay and repair, netlink's event delivery) is queued here and only
 * here. The workqueue keeps a work from running twice at once, and
 * cancel_*_sync() waits for it, only among the queueings of one
 * workqueue; on a kernel where schedule_*work() and system_wq are two
 * queues (Debian's 6.12 has system_percpu_wq), mixing them ran a pool's
 * decay on both CPUs and the free's cancel waited for one of them.
 */
extern struct workqueue_struct *baton_wq;

/*
 * A work on baton_wq that runs some milliseconds after it is armed
 * (later.c): a delayed_work whose timer a real-time task cannot hold up.
 */
struct baton_later {
	struct hrtimer timer;		/* expires in hard irq context */
	struct work_struct work;
	bool stopped;			/* baton_later_stop(): arm nothing */
};

void baton_later_init(struct baton_later *later, work_func_t fn);
void baton_later_arm(struct baton_later *later, unsigned int ms);
void baton_later_stop(struct baton_later *later);

/* The registries, for netlink.c's lookups and dumps. */
extern struct baton_names baton_rings;
extern struct baton_names baton_domains;
extern struct baton_names baton_pools;

/*
 * Statistics snapshots (netlink.c). One attached ring file or one epoch
 * participant; @pid holds a reference, dropped by baton_stats_peers_free().
 */
struct baton_peer_stat {
	struct pid *pid;
	u32 role;			/* BATON_ROLE_*; 0 for participants */
	s32 index;			/* MPSC producer or participant; -1 */
	bool parked;			/* ring: inside BATON_RING_IOC_PARK */
	bool active;			/* participant: inside a read section */
	bool holder;			/* a pool's holder: no queue to report */
	u64 announced;			/* participant: its epoch, if active */
	u64 pending;			/* participant: queued retirements */
};

void baton_stats_peers_free(struct baton_peer_stat *peers, u32 nr);

/* ring.c: everything BATON_CMD_RING_GET reports about one ring. */
struct baton_ring_stats {
	u32 kind;
	u32 slot_count;
	u32 slot_size;
	u32 max_producers;
	u32 state;
	u32 producers;
	u32 consumers;
	u32 parked_producers;
	u32 parked_consumers;
	u64 head;			/* sampled from the shared page */
	u64 tail;			/* ditto */
	u64 occupancy;			/* tail - head, clamped */
	u64 parks_full;
	u64 parks_empty;
	u64 wakes_of_producer;
	u64 wakes_of_consumer;
	u64 producer_deaths;
	u64 consumer_deaths;
	u64 tombstones;
	u64 scribbles;
	u32 nr_peers;
	struct baton_peer_stat *peers;	/* kcalloc'ed; the caller frees */
};

int baton_ring_stats(const struct baton_named *n, struct baton_ring_stats *st);

/* epoch.c: everything BATON_CMD_EPOCH_GET reports about one domain. */
struct baton_epoch_stats {
	u32 max_participants;
	u32 queue_len;
	u64 global;
	u64 frontier;
	u32 participants;
	u32 active_readers;
	u64 oldest;			/* valid if oldest_pid */
	struct pid *oldest_pid;		/* a reference, or NULL */
	u64 pending;
	u32 sync_waiters;
	u64 sync_waits;
	u64 sync_timeouts;
	u32 orphans;
	u32 nr_peers;
	struct baton_peer_stat *peers;	/* kcalloc'ed; the caller frees */
};

int baton_epoch_stats(const struct baton_named *n,
		      struct baton_epoch_stats *st);

/* pool.c: everything BATON_CMD_POOL_GET reports about one pool. */
struct baton_pool_class_stat {
	u32 buf_shift;
	u32 count;
	u32 free;			/* tail - head, sampled, clamped */
	u32 cold;			/* COLD descriptors */
};

struct baton_pool_stats {
	u32 nr_classes;
	u32 decay_ms;
	u32 keep;
	u32 max_holders;
	u64 data_size;
	u32 holders;
	u64 holder_releases;
	u64 reclaimed;
	u64 repaired;
	u64 decayed;
	u64 decayed_bytes;
	u64 decay_ticks;
	u64 bad_words;
	struct baton_pool_class_stat cls[BATON_POOL_CLASSES_MAX];
	u32 nr_peers;
	struct baton_peer_stat *peers;	/* kvcalloc'ed; the caller frees */
};

int baton_pool_stats(const struct baton_named *n, struct baton_pool_stats *st);

/*
 * netlink.c: events. The emitter fills a struct baton_event on its stack;
 * baton_event() copies what it needs (the object's name and owner, a
 * reference on @pid) and returns at once: delivery runs later, from a
 * work item, under each watcher's credentials. It allocates with @gfp
 * (GFP_ATOMIC under a spinlock) and does nothing when nobody listens.
 */
struct baton_event {
	u32 type;			/* BATON_EVENT_* */
	const struct baton_named *obj;
	struct pid *pid;		/* or NULL; the caller keeps its ref */
	u32 role;			/* 0: none */
	s32 index;			/* -1: none */
	u64 count;
	u64 ticket;
	u64 epoch;
	u64 waited_ms;
};

void baton_event(const struct baton_event *ev, gfp_t gfp);
/* A released ring file or participant whose process is dying. */
bool baton_peer_died(struct pid *opener);
unsigned int baton_straggler_ms(void);
int baton_nl_init(void);
void baton_nl_exit(void);

#endif /* BATON_KMOD_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * selftests/uring.h: owns a raw io_uring for the selftests (no liburing
 * in the VM image): set up with the caller's flags, one request at a
 * time: take an SQE, fill it, submit; reap a CQE, waiting or not. The
 * ring's fd is pollable (POLLIN while a CQE waits), which bounds a wait.
 * Used by ring_gup.c (a polled O_DIRECT read) and mpsc_death.c (a
 * POLL_ADD on a consumer's fd).
 */
#ifndef BATON_SELFTEST_URING_H
#define BATON_SELFTEST_URING_H

#include <linux/io_uring.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

struct bt_uring {
	int fd;
	uint8_t *sq, *cq;
	size_t sq_len, cq_len, sqe_len;
	struct io_uring_sqe *sqes;
	struct io_uring_params p;
};

#define BT_URING_U32(u, ring, off)	((uint32_t *)((u)->ring + (u)->p.off))

/* A ring of 4 entries with @flags (IORING_SETUP_*): 0, or -1. */
static inline int bt_uring_init(struct bt_uring *u, uint32_t flags)
{
	memset(u, 0, sizeof(*u));
	u->p.flags = flags;
	u->fd = syscall(__NR_io_uring_setup, 4, &u->p);
	if (u->fd < 0)
		return -1;
	u->sq_len = u->p.sq_off.array + u->p.sq_entries * sizeof(uint32_t);
	u->cq_len = u->p.cq_off.cqes +
		    u->p.cq_entries * sizeof(struct io_uring_cqe);
	u->sqe_len = u->p.sq_entries * sizeof(struct io_uring_sqe);
	u->sq = mmap(NULL, u->sq_len, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_POPULATE, u->fd, IORING_OFF_SQ_RING);
	u->cq = mmap(NULL, u->cq_len, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_POPULATE, u->fd, IORING_OFF_CQ_RING);
	u->sqes = mmap(NULL, u->sqe_len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, u->fd, IORING_OFF_SQES);
	if (u->sq == MAP_FAILED || u->cq == MAP_FAILED ||
	    u->sqes == MAP_FAILED)
		return -1;
	return 0;
}

/* The next SQE, zeroed, for the caller to fill before bt_uring_submit(). */
static inline struct io_uring_sqe *bt_uring_sqe(struct bt_uring *u)
{
	uint32_t tail = *BT_URING_U32(u, sq, sq_off.tail);
	uint32_t idx = tail & *BT_URING_U32(u, sq, sq_off.ring_mask);

	memset(&u->sqes[idx], 0, sizeof(u->sqes[idx]));
	return &u->sqes[idx];
}

/* Publish the SQE bt_uring_sqe() gave and submit it: 0, or -1. */
static inline int bt_uring_submit(struct bt_uring *u)
{
	uint32_t tail = *BT_URING_U32(u, sq, sq_off.tail);
	uint32_t idx = tail & *BT_URING_U32(u, sq, sq_off.ring_mask);

	BT_URING_U32(u, sq, sq_off.array)[idx] = idx;
	__atomic_store_n(BT_URING_U32(u, sq, sq_off.tail), tail + 1,
			 __ATOMIC_RELEASE);
	return syscall(__NR_io_uring_enter, u->fd, 1, 0, 0, NULL, 0) == 1 ?
	       0 : -1;
}

/*
 * Reap one CQE into *@res: with @wait, waiting for it (and, IOPOLL,
 * driving it); without, only if one is there. 0, or -1 (none, or the
 * wait failed).
 */
static inline int bt_uring_reap(struct bt_uring *u, int wait, int32_t *res)
{
	struct io_uring_cqe *cqes = (void *)(u->cq + u->p.cq_off.cqes);
	uint32_t head = *BT_URING_U32(u, cq, cq_off.head);

	if (wait && syscall(__NR_io_uring_enter, u->fd, 0, 1,
			    IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return -1;
	if (head == __atomic_load_n(BT_URING_U32(u, cq, cq_off.tail),
				    __ATOMIC_ACQUIRE))
		return -1;
	*res = cqes[head & *BT_URING_U32(u, cq, cq_off.ring_mask)].res;
	__atomic_store_n(BT_URING_U32(u, cq, cq_off.head), head + 1,
			 __ATOMIC_RELEASE);
	return 0;
}

static inline void bt_uring_close(struct bt_uring *u)
{
	if (u->sqes && u->sqes != MAP_FAILED)
		munmap(u->sqes, u->sqe_len);
	if (u->cq && u->cq != MAP_FAILED)
		munmap(u->cq, u->cq_len);
	if (u->sq && u->sq != MAP_FAILED)
		munmap(u->sq, u->sq_len);
	if (u->fd >= 0)
		close(u->fd);
	u->fd = -1;
}

#endif /* BATON_SELFTEST_URING_H */

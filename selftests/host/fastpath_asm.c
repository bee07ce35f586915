// SPDX-License-Identifier: MIT
/*
 * The inline SPSC fast path, each function wrapped out of line so
 * check-fastpath-asm.sh can disassemble it and prove it holds no locked
 * instruction, no xchg and no fence: plain loads and stores, with the
 * acquire/release orderings (A..D) x86 gives for free and the StoreLoad
 * (E) paid for by the parker.
 *
 * FASTPATH_FENCED=1..3 builds deliberately wrong variants that the check
 * must reject, so a check that silently stopped matching cannot pass;
 * 5 loads the flag before the index store, which the order check
 * (fastpath_order.awk) must reject.
 */
#include "baton.h"

#define WRAP __attribute__((noinline, used))

WRAP uint32_t fp_prod_reserve(struct baton_ring *r, uint32_t n, uint64_t *idx)
{
	return baton_spsc_prod_reserve(r, n, idx);
}

WRAP void fp_prod_submit(struct baton_ring *r, uint32_t n)
{
#if FASTPATH_FENCED == 5
	/* E without the signal fence, and the load hoisted: caught by order. */
	uint32_t w = __atomic_load_n(r->cons_waiting, __ATOMIC_RELAXED);

	r->local += n;
	__atomic_store_n(r->tail, r->local, __ATOMIC_RELEASE);
	if (baton__wait_armed(w))
		__baton_ring_wake_peer(r);
#elif FASTPATH_FENCED == 1
	/* E done the expensive way: a full fence between store and load. */
	r->local += n;
	__atomic_store_n(r->tail, r->local, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(r->cons_waiting, __ATOMIC_RELAXED))
		__baton_ring_wake_peer(r);
#elif FASTPATH_FENCED == 2
	/* A seq_cst store: xchg on x86. */
	r->local += n;
	__atomic_store_n(r->tail, r->local, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(r->cons_waiting, __ATOMIC_RELAXED))
		__baton_ring_wake_peer(r);
#else
	baton_spsc_prod_submit(r, n);
#endif
}

WRAP uint32_t fp_cons_peek(struct baton_ring *r, uint32_t n, uint64_t *idx)
{
	return baton_spsc_cons_peek(r, n, idx);
}

WRAP void fp_cons_release(struct baton_ring *r, uint32_t n)
{
#if FASTPATH_FENCED == 3
	/* A read-modify-write on the shared index: lock xadd. */
	r->local += n;
	__atomic_fetch_add(r->head, n, __ATOMIC_RELEASE);
	if (__atomic_load_n(r->prod_waiting, __ATOMIC_RELAXED))
		__baton_ring_wake_peer(r);
#else
	baton_spsc_cons_release(r, n);
#endif
}

WRAP int fp_try_push(struct baton_ring *r, const void *msg, size_t len)
{
	return baton_spsc_try_push(r, msg, len);
}

WRAP int fp_try_pop(struct baton_ring *r, void *msg, size_t len)
{
	return baton_spsc_try_pop(r, msg, len);
}

/* The blocking forms' inline first look (the wait is out of line). */
WRAP int fp_spsc_push(struct baton_ring *r, const void *msg, size_t len)
{
	return baton_spsc_push(r, msg, len, -1);
}

WRAP int fp_spsc_pop(struct baton_ring *r, void *msg, size_t len)
{
	return baton_spsc_pop(r, msg, len, -1);
}

/*
 * MPSC. The blocking push must hold exactly one locked instruction, the
 * fetch_add (lock xadd), and no cmpxchg; the slow wait is out of line.
 * The consumer's peek and release, and the publication, hold none.
 * FASTPATH_FENCED=4 reserves with a CAS loop instead, which the check
 * must reject.
 */
WRAP int fp_mpsc_push(struct baton_ring *r, const void *msg, size_t len)
{
#if FASTPATH_FENCED == 4
	uint64_t t = __atomic_load_n(r->tail, __ATOMIC_RELAXED);

	while (!__atomic_compare_exchange_n(r->tail, &t, t + 1, 0,
					    __ATOMIC_ACQ_REL,
					    __ATOMIC_RELAXED))
		;
	if (!baton_mpsc_prod_slot_free(r, t) && baton_mpsc_prod_wait(r, t))
		return -1;
	memcpy(baton_ring_slot(r, t), msg, len);
	baton_mpsc_prod_publish(r, t);
	return 0;
#else
	return baton_mpsc_push(r, msg, len);
#endif
}

WRAP int fp_mpsc_cons_peek(struct baton_ring *r, uint64_t *idx)
{
	return baton_mpsc_cons_peek(r, idx);
}

WRAP void fp_mpsc_cons_release(struct baton_ring *r)
{
	baton_mpsc_cons_release(r);
}

WRAP int fp_mpsc_try_pop(struct baton_ring *r, void *msg, size_t len)
{
	return baton_mpsc_try_pop(r, msg, len, NULL);
}

WRAP int fp_mpsc_pop(struct baton_ring *r, void *msg, size_t len)
{
	return baton_mpsc_pop(r, msg, len, -1, NULL);
}

WRAP void fp_mpsc_prod_publish(struct baton_ring *r, uint64_t t)
{
	baton_mpsc_prod_publish(r, t);
}

/*
 * The bulk copies (Documentation/bulk.rst): the SPSC forms hold no locked
 * instruction either, and neither does the MPSC consumer's batch.
 */
WRAP int fp_spsc_push_bulk64(struct baton_ring *r, const void *msgs,
			     uint32_t n)
{
	return baton_spsc_try_push_bulk64(r, msgs, n);
}

WRAP int fp_spsc_pop_bulk64(struct baton_ring *r, void *msgs, uint32_t n)
{
	return baton_spsc_try_pop_bulk64(r, msgs, n);
}

WRAP int fp_mpsc_pop_bulk64(struct baton_ring *r, void *msgs, uint32_t n)
{
	return baton_mpsc_try_pop_bulk64(r, msgs, n, NULL);
}

/* The epoch read side: one plain store each way, the re-check a load. */
WRAP uint64_t fp_epoch_enter(struct baton_epoch *d)
{
#if FASTPATH_FENCED == 4
	/* The textbook announcement: a seq_cst store, xchg on x86. */
	uint64_t e;

	do {
		e = __atomic_load_n(d->global, __ATOMIC_SEQ_CST);
		__atomic_store_n(d->ann, BATON_EPOCH_ANN(e), __ATOMIC_SEQ_CST);
	} while (__atomic_load_n(d->global, __ATOMIC_SEQ_CST) != e);
	return e;
#else
	return baton_epoch_enter(d);
#endif
}

WRAP void fp_epoch_exit(struct baton_epoch *d)
{
	baton_epoch_exit(d);
}

/*
 * The pool's inline allocation and free (Documentation/pool.rst): no
 * locked instruction either. The allocation's Y13 is a store-then-load
 * site: the descriptor's OWNED store, then the load of the reap word.
 * FASTPATH_FENCED == 6 loads the word first, which the order check must
 * reject.
 */
WRAP int fp_pool_alloc(struct baton_pool *p, size_t size, uint64_t *h)
{
#if FASTPATH_FENCED == 6
	struct baton_pool_fast *f = baton__pool_fast(p);
	uint32_t i;

	for (i = 0; i < f->nr_classes; i++) {
		struct baton_pool_cls *c = &f->cls[i];
		uint64_t x, reap;

		if (size > (size_t)1 << c->shift || !c->mag.n)
			continue;
		x = c->mag.handle[--c->mag.n];
		*h = x;
		reap = __atomic_load_n(f->reap, __ATOMIC_RELAXED);
		__atomic_store_n(&c->desc[BATON_POOL_H_INDEX(x)].state,
				 (x & 0xffffffff00000000ULL) | f->owned,
				 __ATOMIC_RELAXED);
		return reap ? __baton_pool_alloc_during_reap(p, h) : 0;
	}
	return __baton_pool_alloc_slow(p, size, h);
#else
	return baton_pool_alloc(p, size, h);
#endif
}

WRAP int fp_pool_free(struct baton_pool *p, uint64_t h)
{
	return baton_pool_free(p, h);
}

// SPDX-License-Identifier: MIT
/*
 * The inline SPSC fast path, each function wrapped out of line so
 * check-fastpath-asm.sh can disassemble it and prove it holds no locked
 * instruction, no xchg and no fence: plain loads and stores, with the
 * acquire/release orderings (A..D) x86 gives for free and the StoreLoad
 * (E) paid for by the parker.
 *
 * FASTPATH_FENCED=1..3 builds deliberately wrong variants that the check
 * must reject, so a check that silently stopped matching cannot pass.
 */
#include "baton.h"

#define WRAP __attribute__((noinline, used))

WRAP uint32_t fp_prod_reserve(struct baton_ring *r, uint32_t n, uint64_t *idx)
{
	return baton_spsc_prod_reserve(r, n, idx);
}

WRAP void fp_prod_submit(struct baton_ring *r, uint32_t n)
{
#if FASTPATH_FENCED == 1
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

// SPDX-License-Identifier: MIT
/*
 * Prints the byte offsets of the pointer fields that the fast path's
 * store-then-load sites go through, for check-fastpath-asm.sh: one
 * "name offset" a line (rings, epoch domains, the pool allocation's Y13).
 */
#include <stddef.h>
#include <stdio.h>

#include "baton.h"

#define RING(f)	printf(#f " %zu\n", offsetof(struct baton_ring, f))

int main(void)
{
	RING(tail);
	RING(head);
	RING(prod_waiting);
	RING(cons_waiting);
	RING(seq);
	printf("ann %zu\n", offsetof(struct baton_epoch, ann));
	printf("sync_epoch %zu\n", offsetof(struct baton_epoch, sync_epoch));
	/* Y13: class 0's, the offset in every class (fastpath_order.awk) */
	printf("pool_desc %zu\n", offsetof(struct baton_pool_fast, cls[0].desc));
	printf("pool_reap %zu\n", offsetof(struct baton_pool_fast, reap));
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * selftests/pkg/pool_info_compat.c: a binary built against baton 2.1..2.4
 * keeps working after struct baton_pool_info grew cold[] in 2.5.
 *
 * Such a binary's baton_pool_info call binds to the symbol's LIBBATON_2.1
 * version with a struct that ends where cold[] begins. This program,
 * linked against the installed libbaton.so, calls that version through
 * dlvsym() on a buffer with a guard after the old size and checks: the
 * guard is untouched, and what was written is the 2.5 version's snapshot
 * up to cold[]. (That a plain call binds to the 2.5 version,
 * check-install.sh reads from this program's dynamic symbols.) memfd
 * backend; exits non-zero, naming the check, on any failure.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <baton/baton.h>

#define OLD_SIZE	offsetof(struct baton_pool_info, cold)
#define GUARD		0x5a

typedef int (*info_fn)(const struct baton_pool *, void *);

static int fail(const char *what)
{
	fprintf(stderr, "pool_info_compat: %s\n", what);
	return 1;
}

int main(void)
{
	struct baton_pool_params prm = { .nr_classes = 1, .decay_ms = 0 };
	unsigned char old_buf[OLD_SIZE + 64];
	struct baton_pool_info cur;
	struct baton_pool *pool;
	info_fn old_fn, new_fn;
	char name[64];
	void *lib;
	size_t i;
	int rc;

	prm.classes[0].buf_shift = 12;
	prm.classes[0].count = 64;
	snprintf(name, sizeof(name), "pool-info-compat-%d", (int)getpid());
	if (baton_pool_create(name, &prm, &pool))
		return fail("baton_pool_create");
	baton_pool_unlink(name);
	lib = dlopen("libbaton.so.2", RTLD_NOW | RTLD_NOLOAD);
	if (!lib)
		return fail("libbaton.so.2 is not this program's library");
	/* POSIX's way from dlsym()'s void * to a function pointer. */
	*(void **)&old_fn = dlvsym(lib, "baton_pool_info", "LIBBATON_2.1");
	*(void **)&new_fn = dlvsym(lib, "baton_pool_info", "LIBBATON_2.5");
	if (!old_fn || !new_fn)
		return fail("baton_pool_info@LIBBATON_2.1 or @LIBBATON_2.5 missing");
	if (old_fn == new_fn)
		return fail("the two versions are one function");
	memset(old_buf, GUARD, sizeof(old_buf));
	rc = old_fn(pool, old_buf);
	if (rc)
		return fail("the 2.1 version failed");
	for (i = OLD_SIZE; i < sizeof(old_buf); i++)
		if (old_buf[i] != GUARD)
			return fail("the 2.1 version wrote past 2.1's struct");
	if (baton_pool_info(pool, &cur))
		return fail("the 2.5 version failed");
	if (memcmp(old_buf, &cur, OLD_SIZE))
		return fail("the 2.1 version's snapshot differs from 2.5's");
	if (cur.classes[0].count != 64 || cur.cold[0] != 0)
		return fail("2.5's snapshot: count or cold wrong");
	if (old_fn(pool, NULL) != -22 || old_fn(NULL, old_buf) != -22)
		return fail("the 2.1 version accepts NULL");
	baton_pool_close(pool);
	printf("baton_pool_info@LIBBATON_2.1 writes %zu bytes, @@LIBBATON_2.5 %zu\n",
	       (size_t)OLD_SIZE, sizeof(struct baton_pool_info));
	return 0;
}

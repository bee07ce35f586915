// SPDX-License-Identifier: MIT
/*
 * lib/ctl/json.c: batonctl's JSON output, in iproute2's style: a writer
 * that keeps the separators and the indentation of -p, and a record
 * printed as one object of its table's fields.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "batonctl.h"

struct jw {
	int depth;
	bool need_comma[16];
};

static struct jw jw;

static void jw_indent(void)
{
	int i;

	if (!opt.pretty)
		return;
	putchar('\n');
	for (i = 0; i < jw.depth; i++)
		fputs("    ", stdout);
}

/* Separator, indentation and the key (NULL inside an array). */
static void jw_key(const char *key)
{
	if (jw.need_comma[jw.depth])
		putchar(',');
	jw.need_comma[jw.depth] = true;
	if (jw.depth > 0)
		jw_indent();
	if (key)
		printf(opt.pretty ? "\"%s\": " : "\"%s\":", key);
}

static void jw_open(const char *key, char c)
{
	jw_key(key);
	putchar(c);
	if (jw.depth + 1 < (int)(sizeof(jw.need_comma) /
				 sizeof(jw.need_comma[0])))
		jw.depth++;
	jw.need_comma[jw.depth] = false;
}

static void jw_close(char c)
{
	bool had = jw.need_comma[jw.depth];

	jw.depth--;
	if (had)
		jw_indent();
	putchar(c);
}

static void jw_string(const char *key, const char *s)
{
	const unsigned char *p;

	jw_key(key);
	putchar('"');
	for (p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			printf("\\u%04x", *p);
		else
			putchar(*p);
	}
	putchar('"');
}

static void jw_u64(const char *key, uint64_t v)
{
	jw_key(key);
	printf("%" PRIu64, v);
}

static void jw_bool(const char *key, bool b)
{
	jw_key(key);
	fputs(b ? "true" : "false", stdout);
}

/* A new top level: no depth, no separator pending. */
void jw_reset(void)
{
	memset(&jw, 0, sizeof(jw));
}

/* Top level: iproute2 prints an array of objects. */
void jw_begin_array(void)
{
	jw_reset();
	putchar('[');
	jw.depth = 1;
}

void jw_end_array(void)
{
	jw_close(']');
	putchar('\n');
}


static void json_field(const struct field *f, const struct rec *r);

void json_rec(const struct fieldset *fs, const struct rec *r)
{
	const char *const *u;
	size_t i;

	jw_open(NULL, '{');
	if (r->obj == OBJ_RING || r->obj == OBJ_EPOCH || r->obj == OBJ_POOL) {
		jw_string("object", obj_names[r->obj]);
		jw_string("backend", backend_names[r->backend]);
		jw_bool("stale", rec_stale(r));
	}
	for (i = 0; i < fs->n; i++) {
		const struct field *f = &fs->f[i];

		if (f->type == FT_PEER || f->type == FT_CLASS)
			continue;	/* printed with FT_PEERS, FT_CLASSES */
		json_field(f, r);
	}
	if (r->unavailable) {
		jw_open("unavailable", '[');
		for (u = r->unavailable; *u; u++)
			jw_string(NULL, *u);
		jw_close(']');
	}
	jw_close('}');
}

static void json_field(const struct field *f, const struct rec *r)
{
	char buf[32];
	size_t i;

	switch (f->type) {
	case FT_STR:
		if (r->name[0])
			jw_string(f->name, r->name);
		return;
	case FT_FLAG:
		/* Absent means false, but memfd objects have no such flag. */
		if (r->backend == BE_KMOD || rec_has(r, f->attr))
			jw_bool(f->name, rec_has(r, f->attr));
		return;
	case FT_PEERS:
		/* memfd rings and pools: no pids (an OFD lock has none) */
		if (r->obj == OBJ_EVENT || (r->backend == BE_MEMFD &&
					    r->obj != OBJ_EPOCH))
			return;
		jw_open(f->name, '[');
		for (i = 0; i < r->npeers; i++)
			json_rec(&fs_peer, &r->peers[i]);
		jw_close(']');
		return;
	case FT_CLASSES:
		jw_open(f->name, '[');
		for (i = 0; i < r->nclasses; i++)
			json_rec(&fs_class, &r->classes[i]);
		jw_close(']');
		return;
	default:
		break;
	}
	if (!rec_has(r, f->attr))
		return;
	if (f->show == FS_NUM || f->show == FS_MODE) {
		jw_u64(f->name, r->val[f->attr]);
	} else if (f->show == FS_STATE) {
		jw_open(f->name, '[');
		for (i = 0; i < 64; i++)
			if (r->val[f->attr] & (1ULL << i))
				jw_string(NULL, state_bit_name(i, buf,
							       sizeof(buf)));
		jw_close(']');
	} else {
		jw_string(f->name, enum_str(f->show, r->val[f->attr], buf,
					    sizeof(buf)));
	}
}


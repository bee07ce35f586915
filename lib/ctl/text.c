// SPDX-License-Identifier: MIT
/*
 * lib/ctl/text.c: batonctl's text output of records: "label value" lines,
 * peers, pool classes, and what the memfd backend cannot see.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>

#include "batonctl.h"

/* Text: "label value" for every present field, one per line. */
void text_value(const struct field *f, const struct rec *r)
{
	uint64_t v = r->val[f->attr];
	char buf[32];
	size_t i;

	switch (f->show) {
	case FS_MODE:
		printf("%04" PRIo64, v);
		return;
	case FS_STATE:
		if (!v)
			fputs("-", stdout);
		for (i = 0; i < 64; i++)
			if (v & (1ULL << i))
				printf("%s%s", state_bit_name(i, buf, sizeof(buf)),
				       v >> i >> 1 ? "," : "");
		return;
	case FS_NUM:
		printf("%" PRIu64, v);
		return;
	default:
		fputs(enum_str(f->show, v, buf, sizeof(buf)), stdout);
	}
}

void text_fields(const struct fieldset *fs, const struct rec *r)
{
	size_t i;

	if (rec_stale(r))
		printf("    %-20s yes\n", "stale");
	for (i = 0; i < fs->n; i++) {
		const struct field *f = &fs->f[i];

		if (f->type == FT_STR || f->type == FT_PEERS ||
		    f->type == FT_PEER || f->type == FT_CLASSES ||
		    f->type == FT_CLASS || f->show == FS_KIND)
			continue;	/* in the title line or below */
		if (f->type == FT_FLAG) {
			if (rec_has(r, f->attr))
				printf("    %-20s yes\n", f->name);
			continue;
		}
		if (!rec_has(r, f->attr))
			continue;
		printf("    %-20s ", f->name);
		text_value(f, r);
		putchar('\n');
	}
}

/* A sub-record on one line: "    LABEL field value field value ...". */
static void text_line(const char *label, const struct fieldset *fs,
		      const struct rec *p)
{
	size_t i;

	printf("    %s", label);
	for (i = 0; i < fs->n; i++) {
		const struct field *f = &fs->f[i];

		if (!rec_has(p, f->attr))
			continue;
		if (f->type == FT_FLAG) {
			printf(" %s", f->name);
			continue;
		}
		printf(" %s ", f->name);
		text_value(f, p);
	}
	putchar('\n');
}

void text_peer(const struct rec *p)
{
	text_line("peer", &fs_peer, p);
}

void text_class(const struct rec *c)
{
	text_line("class", &fs_class, c);
}

void text_unavailable(const struct rec *r)
{
	const char *const *u;

	if (!r->unavailable)
		return;
	fputs("    not visible on the memfd backend:", stdout);
	for (u = r->unavailable; *u; u++)
		printf(" %s", *u);
	putchar('\n');
}

const char *num_or_dash(const struct rec *r, int attr, char *buf,
			size_t len)
{
	if (!rec_has(r, attr))
		return "-";
	snprintf(buf, len, "%" PRIu64, r->val[attr]);
	return buf;
}


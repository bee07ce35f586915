// SPDX-License-Identifier: MIT
/*
 * lib/ctl/main.c: batonctl's command line: options, usage, and which
 * command runs. What batonctl is, and which file owns what, is in
 * batonctl.h.
 *
 *   batonctl [-j [-p]] list            rings and domains, one line each
 *   batonctl [-j [-p]] show NAME       one ring: every counter, its peers
 *   batonctl [-j [-p]] epoch [NAME]    epoch domains
 *   batonctl [-j] [-c N] [-t SECS] watch   events until SIGINT, N, SECS
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batonctl.h"

struct options opt;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: batonctl [-j [-p]] list\n"
		"       batonctl [-j [-p]] show NAME\n"
		"       batonctl [-j [-p]] epoch [NAME]\n"
		"       batonctl [-j] [-c COUNT] [-t SECONDS] watch\n"
		"  -j  JSON output (an array of objects; watch: one object a line)\n"
		"  -p  pretty JSON\n"
		"  -c  watch: stop after COUNT events\n"
		"  -t  watch: stop after SECONDS (exit 3 if -c events had not come)\n"
		"exit: 0 fine, 1 error, 2 module not loaded and nothing on memfd, 3 timed out\n");
}

static bool parse_long(const char *s, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return !errno && *s && !*end && *out >= 0;
}

int main(int argc, char **argv)
{
	const char *cmd;
	int c;

	while ((c = getopt(argc, argv, "jpc:t:h")) != -1) {
		switch (c) {
		case 'j':
			opt.json = true;
			break;
		case 'p':
			opt.pretty = true;
			break;
		case 'c':
			if (!parse_long(optarg, &opt.count)) {
				fprintf(stderr, "batonctl: -c wants a count\n");
				return 1;
			}
			break;
		case 't':
			if (!parse_long(optarg, &opt.timeout_s)) {
				fprintf(stderr, "batonctl: -t wants seconds\n");
				return 1;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 1;
	}
	cmd = argv[optind++];
	if (!strcmp(cmd, "list") || !strcmp(cmd, "ls")) {
		if (optind == argc)
			return cmd_list();
	} else if (!strcmp(cmd, "show")) {
		if (optind + 1 == argc)
			return cmd_get(OBJ_RING, argv[optind]);
	} else if (!strcmp(cmd, "epoch")) {
		if (optind + 1 >= argc)
			return cmd_get(OBJ_EPOCH, argv[optind]);
	} else if (!strcmp(cmd, "watch")) {
		if (optind == argc)
			return cmd_watch();
	} else if (!strcmp(cmd, "help")) {
		usage(stdout);
		return 0;
	}
	usage(stderr);
	return 1;
}

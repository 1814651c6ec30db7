// SPDX-License-Identifier: GPL-2.0
/*
 * ioband-setup: the administrator's command line for dm-ioband.
 *
 * Only --version and --help exist so far; the commands (create, remove,
 * list, show, set, attach, detach, top, wrap, apply) come with their own
 * issue.  Until then, use dmsetup as Documentation/ioband.rst shows.
 */
#include <stdio.h>
#include <string.h>

#define IOBAND_SETUP_VERSION "0.1"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ioband-setup --version | --help\n"
		"The commands are not written yet; see Documentation/ioband.rst\n"
		"for setting up ioband devices with dmsetup.\n");
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--version")) {
		printf("ioband-setup %s\n", IOBAND_SETUP_VERSION);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	usage(stderr);
	return 2;
}

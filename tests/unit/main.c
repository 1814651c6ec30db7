// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "unit.h"

int unit_test_failed;
static int passed, failed;

/*
 * IOBAND_UNIT_FAULT makes the run go wrong on purpose, for the self-test
 * of tests/unit/check (which must count each of these as a failure):
 * "abort" and "overflow" (a store the sanitizers report) kill the binary
 * in its second test, "hang" never returns from it, and "exit" prints a
 * clean summary and exits non-zero.
 */
static const char *unit_fault;

static void unit_inject_fault(void)
{
	static int runs;

	if (!unit_fault || ++runs != 2)
		return;
	if (!strcmp(unit_fault, "abort"))
		abort();
	if (!strcmp(unit_fault, "overflow")) {
		volatile char *p = malloc(8);

		p[8] = 1;	/* heap-buffer-overflow */
		free((void *)p);
	}
	if (!strcmp(unit_fault, "hang"))
		for (;;)
			pause();
}

void unit_run(const char *name, void (*fn)(void))
{
	unit_test_failed = 0;
	unit_inject_fault();
	fn();
	printf("%s unit/%s\n", unit_test_failed ? "FAIL" : "PASS", name);
	fflush(stdout);
	if (unit_test_failed)
		failed++;
	else
		passed++;
}

int main(void)
{
	unit_fault = getenv("IOBAND_UNIT_FAULT");
	parse_tests();
	sched_tests();
	range_tests();
	devtime_tests();
	limit_tests();
	lat_tests();
	tree_tests();
	lease_tests();
	printf("%d passed, %d failed\n", passed, failed);
	if (unit_fault && !strcmp(unit_fault, "exit"))
		return 3;
	return failed ? 1 : 0;
}

// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include "unit.h"

int unit_test_failed;
static int passed, failed;

void unit_run(const char *name, void (*fn)(void))
{
	unit_test_failed = 0;
	fn();
	printf("%s unit/%s\n", unit_test_failed ? "FAIL" : "PASS", name);
	if (unit_test_failed)
		failed++;
	else
		passed++;
}

int main(void)
{
	parse_tests();
	sched_tests();
	devtime_tests();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

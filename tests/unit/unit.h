/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A minimal harness for the userspace builds of dm-ioband's pure logic.
 * A test is a function; it fails if any of its CHECKs fails.  The run
 * prints one line per test and ends with "N passed, N failed".
 */
#ifndef IOBAND_UNIT_H
#define IOBAND_UNIT_H

#include <stdio.h>

extern int unit_test_failed;

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			unit_test_failed = 1;				\
			printf("  %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			printf(__VA_ARGS__);				\
			printf("\n");					\
		}							\
	} while (0)

void unit_run(const char *name, void (*fn)(void));
#define RUN(fn) unit_run(#fn, fn)

void parse_tests(void);
void sched_tests(void);
void range_tests(void);
void devtime_tests(void);
void limit_tests(void);
void lat_tests(void);
void tree_tests(void);
void lease_tests(void);

#endif

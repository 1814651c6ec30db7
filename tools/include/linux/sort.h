/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in for the kernel's <linux/sort.h>. */
#ifndef _IOBAND_SHIM_SORT_H
#define _IOBAND_SHIM_SORT_H

#include <stdlib.h>

static inline void sort(void *base, size_t num, size_t size,
			int (*cmp)(const void *, const void *), void *swap)
{
	(void)swap;
	qsort(base, num, size, cmp);
}

#endif

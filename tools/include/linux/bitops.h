/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in for the kernel's <linux/bitops.h>. */
#ifndef _IOBAND_SHIM_BITOPS_H
#define _IOBAND_SHIM_BITOPS_H

#include <linux/types.h>

/* the 1-based position of the most significant set bit, 0 for none */
static inline int fls64(u64 x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}

#endif

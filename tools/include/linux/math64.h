/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in for the kernel's <linux/math64.h>. */
#ifndef _IOBAND_SHIM_MATH64_H
#define _IOBAND_SHIM_MATH64_H

#include <linux/types.h>

static inline u64 div64_u64(u64 dividend, u64 divisor)
{
	return dividend / divisor;
}

/* a * mul / div through 128 bits; the quotient must fit in 64 */
static inline u64 mul_u64_u64_div_u64(u64 a, u64 mul, u64 div)
{
	return (u64)((__uint128_t)a * mul / div);
}

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in for the kernel's <linux/bits.h>. */
#ifndef _IOBAND_SHIM_BITS_H
#define _IOBAND_SHIM_BITS_H

#define BIT(nr)		(1UL << (nr))
#define BIT_ULL(nr)	(1ULL << (nr))

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in for the kernel's <linux/minmax.h>: min_t is in types.h. */
#include <linux/types.h>

/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in for the kernel's <linux/string.h>. */
#ifndef _IOBAND_SHIM_STRING_H
#define _IOBAND_SHIM_STRING_H

#include <string.h>

#endif

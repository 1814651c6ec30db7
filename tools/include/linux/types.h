/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace stand-in for the kernel's <linux/types.h>, so that the pure
 * logic of drivers/md/dm-ioband-policy.c builds in tests and fuzzers.
 */
#ifndef _IOBAND_SHIM_TYPES_H
#define _IOBAND_SHIM_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;

#define U32_MAX		((u32)~0U)
#define S64_MAX		((s64)(~0ULL >> 1))
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define EXPORT_SYMBOL_GPL(sym)
#ifndef __always_inline		/* glibc's <sys/cdefs.h> has one */
#define __always_inline	inline __attribute__((__always_inline__))
#endif
#define noinline	__attribute__((__noinline__))
#define min_t(type, a, b)	((type)(a) < (type)(b) ? (type)(a) : (type)(b))
#define max_t(type, a, b)	((type)(a) > (type)(b) ? (type)(a) : (type)(b))

#endif

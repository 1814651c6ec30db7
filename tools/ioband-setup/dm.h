/* SPDX-License-Identifier: GPL-2.0 */
/* ioband-setup: device-mapper through libdevmapper (dm.c). */
#ifndef IOBAND_SETUP_DM_H
#define IOBAND_SETUP_DM_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

struct dm_target_line {
	uint64_t start, len;
	char *type;
	char *params;
};

struct dmx_info {
	bool exists;
	uint32_t major, minor;
	int open_count;
	bool suspended, read_only, live_table, inactive_table;
	char name[128];
	char uuid[129];
};

void dmx_init(int verbose);
void dmx_exit(void);

/* Each returns 0, or -1 with dmx_errno set and dmx_why() describing it. */
extern int dmx_errno;
/*
 * Why the last operation failed: the kernel's own reason when one was
 * logged (read back from /dev/kmsg, e.g. "weight must be a number from 1
 * to 10000"), else libdevmapper's error, else strerror(dmx_errno).
 */
const char *dmx_why(void);

int dmx_info(const char *name, struct dmx_info *info);
int dmx_info_devt(uint32_t major, uint32_t minor, struct dmx_info *info);
int dmx_table(const char *name, bool status, struct dm_target_line **t, size_t *n);
void dmx_lines_free(struct dm_target_line *t, size_t n);
/* udev_flags: DM_UDEV_* flags for the device's uevents (0 for the usual ones) */
int dmx_create(const char *name, const char *uuid, const struct dm_target_line *t, size_t n,
	       bool read_only, uint16_t udev_flags);
int dmx_reload(const char *name, const struct dm_target_line *t, size_t n, bool read_only);
int dmx_suspend(const char *name);
int dmx_resume(const char *name);
int dmx_clear(const char *name);
int dmx_remove(const char *name);
/* @response: NULL, or the target's answer (malloc'ed, "" when it gave none) */
int dmx_message(const char *name, const char *msg, char **response);
/* Every device-mapper device's name; free each and the array. */
int dmx_list(char ***names, size_t *n);

/*
 * Test hook: IOBAND_SETUP_FAULT=<step>[,<step>...] makes dmx_fault(step)
 * true, and the caller fails at that step as if the kernel had refused it
 * (the reason reads "injected fault at <step>").  Used by the VM tests to
 * drive the roll-back paths of wrap, unwrap and apply.
 */
bool dmx_fault(const char *step);

#endif

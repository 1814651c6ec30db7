/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ioband-setup: what the command files share (ioband-setup.c holds the
 * device commands and these helpers; watch.c the state file and 'watch').
 */
#ifndef IOBAND_SETUP_CMD_H
#define IOBAND_SETUP_CMD_H

#include "ioband-setup.h"
#include "dm.h"

extern int verbose, quiet;

/* "ioband-setup: CMD: ..." on stderr; returns @code. */
int errorf(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A line on stdout, unless --quiet. */
void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int help_exit(void);

/* An ioband device as it is now. */
struct dev_state {
	char name[DM_NAME_MAX + 1];
	struct dmx_info info;
	struct dm_target_line *lines;
	size_t nlines;
	struct ioband_table t;
	uint64_t len;		/* sectors */
	char *wraps;		/* "VG/LV" when this is a wrapped logical volume */
};

void dev_state_free(struct dev_state *d);
/*
 * Load the state of the ioband device @name.  Quiet when @quiet_errors,
 * else prints why it is not one.  EX_OK or an exit code.
 */
int load_ioband(const char *name, struct dev_state *d, bool quiet_errors);
int send_message(const char *name, const char *msg);
/* Every ioband device; all_free() frees them. */
int all_ioband(struct dev_state **out, size_t *nout);
void all_free(struct dev_state *v, size_t n);
/* A readable name for device "major:minor": /dev/mapper/X or /dev/X; malloc'ed. */
char *devstr_name(const char *dev);
/*
 * The table for @o over @device ("major:minor"), resolving each GROUP by
 * the type in @o.  Groups given by cgroup path go into @paths too (with
 * the id they have now, 0 when none); those of paths no cgroup has yet
 * are left out of the table (and noted, prefixed by @what).  EX_OK or an
 * exit code (printed).
 */
int build_table(const struct setup_opts *o, const char *device, const char *default_dg,
		const struct ioband_table *cur, struct ioband_table *t,
		struct pg_state *paths, const char *what);

/*
 * The state file of the cgroup groups given by path (watch.c).  Commands
 * that change it hold its lock from before they read the device until
 * they are done, and 'watch' holds it while it reconciles, so that neither
 * acts on what the other is changing.  Each returns EX_OK or an exit code
 * (printed).
 */
int state_lock(void);
void state_unlock(void);
/* The entries (none when there is no state file yet). */
int state_load(struct pg_state *s);
/* Write @s back if it differs from what is there now. */
int state_save(const struct pg_state *s);
/* Replace @dev's entries by @paths' (their dev is ignored). */
int state_replace_dev(const char *dev, const struct pg_state *paths);
/* Is 'ioband-setup watch' running? */
bool watch_running(void);

int cmd_watch(int argc, char **argv);
int cmd_save(int argc, char **argv);

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ioband-setup: what the command files share (ioband-setup.c holds the
 * device commands and these helpers; watch.c the state file and 'watch';
 * lvm.c the wrapped logical volumes).
 */
#ifndef IOBAND_SETUP_CMD_H
#define IOBAND_SETUP_CMD_H

#include "ioband-setup.h"
#include "dm.h"

#define IOBAND_RUN_DIR		"/run/ioband"
/* the copy of a wrapped volume's own table: its name's suffix, uuid's prefix */
#define ORIG_SUFFIX		"-iobandorig"
#define ORIG_UUID_PREFIX	"IOBAND-ORIG-"

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
/*
 * A live device of device group @dg, whose settings a new device must
 * share, in @member; member->name is empty if the group has none yet.
 */
int dg_settings(const char *dg, struct dev_state *member);
/* VG/LV from a logical volume's device-mapper name; malloc'ed. */
char *dm_to_vg_lv(const char *dm);
/*
 * Replace the live table of @name by @lines in one swap: load, suspend,
 * resume.  On failure the old table is kept (or put back).  @step names
 * the fault-injection steps (<step>-load, -suspend, -resume).  EX_OK or an
 * exit code; *why describes a failure.
 */
int swap_table(const char *name, const struct dm_target_line *lines, size_t n, bool ro,
	       const char *step, char *why, size_t whylen);
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
/* Make IOBAND_RUN_DIR. */
int state_dir(void);
/* Is 'ioband-setup watch' running? */
bool watch_running(void);

/* A logical volume by name (lvm.c). */
struct lv_ref {
	char vg_lv[2 * DM_NAME_MAX];
	char dm[DM_NAME_MAX + 1];
	char orig[DM_NAME_MAX + 1];	/* the copy's name */
	struct dmx_info info;
};

/* Look up active volume @arg (VG/LV).  EX_OK or an exit code (printed). */
int lv_lookup(const char *arg, struct lv_ref *lv);
/* The end of the last target of @l: a table's length in sectors. */
uint64_t lines_len(const struct dm_target_line *l, size_t n);
/*
 * The commands on logical volumes, under the state lock, each EX_OK or an
 * exit code (printed): wrap @lv with the table from @o; unwrap @arg (one
 * LVM unwrapped or deactivated is cleaned up); repair @arg (wrap again a
 * volume LVM unwrapped, remove a stale copy).
 */
int lvm_wrap(struct lv_ref *lv, const struct setup_opts *o);
int lvm_unwrap(const char *arg);
int lvm_repair(const char *arg);
/* Repair every recorded wrap that needs it (watch), quietly when none does. */
int lvm_repair_all(void);
/*
 * Is @lv wrapped?  EX_OK with @d (the volume as an ioband device) and the
 * copy's table in @ol; an exit code (printed) otherwise.
 */
int lvm_wrapped(struct lv_ref *lv, struct dev_state *d, struct dm_target_line **ol, size_t *on);
/* After a change to ioband device @dm: keep its wrap record current. */
void lvm_record_update(const char *dm);

int cmd_watch(int argc, char **argv);
int cmd_save(int argc, char **argv);

#endif

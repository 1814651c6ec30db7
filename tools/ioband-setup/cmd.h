/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ioband-setup: what the command files share.  ioband-setup.c holds these
 * helpers and main; see its top comment for which file has which command.
 */
#ifndef IOBAND_SETUP_CMD_H
#define IOBAND_SETUP_CMD_H

#include "ioband-setup.h"
#include "dm.h"
#include "report.h"

#include <sys/stat.h>

#define IOBAND_RUN_DIR		"/run/ioband"
/* the copy of a wrapped volume's own table: its name's suffix, uuid's prefix */
#define ORIG_SUFFIX		"-iobandorig"
#define ORIG_UUID_PREFIX	"IOBAND-ORIG-"

extern int verbose, quiet;
/* "FILE:LINE" while apply works on a line: errorf() puts it first */
extern char err_ctx[512];
/* apply --dry-run: say what would change, change nothing */
extern bool dry_run;

/* ---- options (ioband-setup.c) ---- */

enum {
	O_HELP = 1, O_JSON, O_DG, O_TYPE, O_POLICY, O_WEIGHT, O_GROUP, O_IO_THROTTLE,
	O_IO_LIMIT, O_TOKEN_BASE, O_CARRYOVER, O_COST_MODEL, O_INTERVAL, O_COUNT, O_DRY_RUN, O_WAIT,
	O_OPTIONS, O_NOHEADINGS, O_SEPARATOR, O_UNITS, O_REPORTFORMAT, O_REPAIR,
};

struct opt {
	const char *lng;
	char shrt;
	bool arg;
	int id;
};

struct optstate {
	int argc;
	char **argv;
	int i;
	bool only_pos;
	const char *arg;
	char **pos;
	int npos;
};

/* The next option of @opts (and --help), 0 at the end, -1 after an error. */
int next_opt(struct optstate *st, const struct opt *opts);
void opt_begin(struct optstate *st, int argc, char **argv);
/*
 * The options of a command whose only options are --help and flags such as
 * --json: EX_OK or EX_USAGE, with *help set when --help was seen.
 */
int flag_opts(struct optstate *st, const struct opt *opts, bool *flag, bool *help);
/* Ends a command after flag_opts(): its help, or its usage error. */
int flag_opts_exit(struct optstate *st, int rc, bool help);
/*
 * Option @id (its value @arg) into @ro when it is a report option: 1 when
 * it was one, 0 when not, -1 after a usage error.
 */
int report_opt(struct report_opts *ro, int id, const char *arg);

/* The options of the reports (list, show, top); --json is --reportformat json. */
#define REPORT_OPTV \
	{ "json", 'j', false, O_JSON }, { "options", 'o', true, O_OPTIONS }, \
	{ "noheadings", 0, false, O_NOHEADINGS }, { "separator", 0, true, O_SEPARATOR }, \
	{ "units", 0, true, O_UNITS }, { "reportformat", 0, true, O_REPORTFORMAT }

/* The options of list and show: EX_OK or EX_USAGE, *help set on --help. */
int report_opts(struct optstate *st, const struct opt *opts, struct report_opts *ro,
		bool *help);
/*
 * The report of this command over @cols: EX_OK with *r, EX_OK with *r
 * NULL after -o help, or EX_USAGE (printed).
 */
int report_open(const struct report_col *cols, size_t ncols, const char *defaults,
		const struct report_opts *ro, struct report **r);
/* Check the options of @ro against @cols before any work: as report_open(). */
int report_check(const struct report_col *cols, size_t ncols, const char *defaults,
		 const struct report_opts *ro, bool *listed);

/* The options of create and wrap. */
#define SETUP_OPTV \
	{ "device-group", 'd', true, O_DG }, \
	{ "type", 't', true, O_TYPE }, \
	{ "policy", 'p', true, O_POLICY }, \
	{ "weight", 'w', true, O_WEIGHT }, \
	{ "group", 'g', true, O_GROUP }, \
	{ "io-throttle", 0, true, O_IO_THROTTLE }, \
	{ "io-limit", 0, true, O_IO_LIMIT }, \
	{ "token-base", 0, true, O_TOKEN_BASE }, \
	{ "carryover", 0, true, O_CARRYOVER }, \
	{ "cost-model", 0, true, O_COST_MODEL }


/*
 * Parse the options of create and wrap (from @opts) into @o; *nset counts
 * the settings given, and O_REPAIR sets *repair.  EX_OK or an exit code.
 */
int parse_setup_opts(struct optstate *st, const struct opt *opts, struct setup_opts *o,
		     bool *help, bool *repair, int *nset);

/* ---- messages, devices ---- */

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
 * Create ioband device @name over @device from @o (create and apply).
 * @what prefixes the messages.  EX_OK or an exit code (printed).
 */
int do_create(const char *name, const char *device, const struct setup_opts *o,
	      const char *what);
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
/* The kernel's status of ioband device @name into @s.  EX_OK or an exit code (printed). */
int load_status(const char *name, struct ioband_status *s);
/*
 * The device-mapper name of @arg (a name, /dev/mapper/NAME, /dev/dm-N, a
 * logical volume VG/LV) into @out.  EX_OK or an exit code (printed).
 */
int resolve_name(const char *arg, char *out, size_t outlen);
/* GROUP @spec for device type @type into @id.  EX_OK or an exit code (printed). */
int resolve_group(enum gtype type, const char *spec, int64_t *id);
/* How a message names group @spec (@id): "alice (uid 1000)"; malloc'ed. */
char *group_label(const char *spec, int64_t id);
/*
 * The cgroup path a cgroup GROUP @spec names, NULL for an id or the
 * default group; malloc'ed.
 */
char *group_path(const char *spec);
/* Say that a group by path waits for its cgroup (@what prefixes it). */
void note_absent(const char *what, const char *path);
/*
 * Block device @path: its stat in @st and its size in @sectors; @excl:
 * opened exclusively, to refuse a device in use.  EX_OK or an exit code (printed).
 */
int block_device(const char *path, struct stat *st, uint64_t *sectors, bool excl);
/*
 * Names of groups in show, top and apply's messages (a diff_namer): a
 * cgroup by the path it was given by (the state knows the paths of ids
 * whose cgroups are gone), else by the name it has now.
 */
struct diff_names {
	const char *dev;
	struct pg_state s;
};
char *diff_name(enum gtype type, int64_t id, void *ctx);
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

/* The commands: argc and argv from the command's name on; an exit code. */
int cmd_create(int argc, char **argv);
int cmd_remove(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_set(int argc, char **argv);
int cmd_attach(int argc, char **argv);
int cmd_detach(int argc, char **argv);
int cmd_wrap(int argc, char **argv);
int cmd_unwrap(int argc, char **argv);
int cmd_apply(int argc, char **argv);
int cmd_watch(int argc, char **argv);
int cmd_save(int argc, char **argv);

#endif

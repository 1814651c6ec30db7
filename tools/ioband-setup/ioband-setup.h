/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ioband-setup: shared declarations.
 *
 * parse.c holds everything that needs neither the kernel nor the system's
 * databases (table and status lines, the latency answer, GROUP specs,
 * values, /etc/iobandtab);
 * it is what tests/unit-style checks (make check) exercise, with report.c
 * (the tables of list, show and top: report.h).  names.c resolves names
 * against the running system, dm.c talks to device-mapper through
 * libdevmapper, ioband-setup.c holds the commands.
 */
#ifndef IOBAND_SETUP_H
#define IOBAND_SETUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes (documented in ioband-setup.8 and --help). */
enum {
	EX_OK = 0,
	EX_FAIL = 1,		/* refused or failed; nothing changed */
	EX_USAGE = 2,		/* bad command line, value or iobandtab syntax */
	EX_NOTFOUND = 3,	/* a device, LV, group, user or cgroup named does not exist */
	EX_CONFLICT = 4,	/* exists already, in use, (not) attached, not ioband... */
	EX_HALFDONE = 5,	/* failed, and undoing the steps taken failed too */
};

/* The kernel's limits (include/linux/dm-ioband.h). */
#define DG_NAME_MAX		31
#define WEIGHT_MIN		1
#define WEIGHT_MAX		10000
#define DEFAULT_WEIGHT		100
#define IO_LIMIT_MAX		65536
#define TOKEN_BASE_MAX		1048576
#define CARRYOVER_MAX		100
#define MAX_GROUPS		65536
#define DEFAULT_GROUP		(-1LL)
#define DM_NAME_MAX		127

enum gtype {
	GT_NONE, GT_USER, GT_GID, GT_PID, GT_PGRP, GT_CGROUP, GT_CGROUP_TREE, GT_NR
};

/* cgroup and cgroup-tree: groups are cgroups, named by their paths */
static inline bool gtype_cgroup(enum gtype type)
{
	return type == GT_CGROUP || type == GT_CGROUP_TREE;
}
enum policy { POL_WEIGHT, POL_WEIGHT_IOSIZE, POL_RANGE_BW, POL_WEIGHT_TIME, POL_NR };
/* A new device group's policy when none is given: weights in device time */
#define DEFAULT_POLICY		POL_WEIGHT_TIME

extern const char *const gtype_names[GT_NR];
extern const char *const policy_names[POL_NR];

int gtype_parse(const char *s);		/* -1 when unknown; "uid" is "user" */
int policy_parse(const char *s);	/* -1 when unknown */

/*
 * A group's limits, io.max's kinds (Documentation/ioband.rst, "Limits"):
 * bytes and I/Os a second, 0 for none, and the burst in milliseconds, in
 * the order the kernel prints them.
 */
enum { LIM_BPS, LIM_RBPS, LIM_WBPS, LIM_IOPS, LIM_RIOPS, LIM_WIOPS, LIM_BURST, LIM_NR };
#define LIM_RATE_MAX		(1ULL << 50)
#define LIM_BURST_MAX		60000
/* room for every limit as text: "bps=1125899906842624,..." */
#define LIMITS_TEXT_MAX		192
extern const char *const limit_keys[LIM_NR];

/* One group's configuration.  The default group has id -1. */
struct group_conf {
	int64_t id;
	uint32_t weight;	/* weight policies */
	uint32_t min_kbps;	/* range-bw */
	uint32_t max_kbps;	/* range-bw, 0: no upper limit */
	uint64_t limit[LIM_NR];	/* any policy */
};

/* The arguments of one ioband target (the table line after <start> <len>). */
struct ioband_table {
	char device[64];	/* as written: "major:minor" or a path */
	char dg[DG_NAME_MAX + 1];
	uint32_t io_throttle, io_limit, token_base;
	enum gtype type;
	enum policy policy;
	struct group_conf def;
	size_t ngroups;
	struct group_conf *groups;	/* in the order written */
	uint32_t bandwidth;	/* KB/s, "bandwidth="; 0: not stated */
	uint64_t model[6];	/* "rbps=" ... "wrandiops=" (weight-time); all 0: none */
};

/* The parameters of a cost model, in the kernel's order: rbps ... wrandiops. */
extern const char *const model_keys[6];

void table_free(struct ioband_table *t);
/* Parse the parameters of an ioband target; 0, or -1 with err filled. */
int table_parse(const char *params, struct ioband_table *t, char *err, size_t errlen);
/* Format the parameters; a malloc'ed string. */
char *table_format(const struct ioband_table *t);
const struct group_conf *table_find(const struct ioband_table *t, int64_t id);
/*
 * A readable name for group @id of a device of type @type (a path, a
 * user name...), malloc'ed, or NULL when there is none.
 */
typedef char *(*diff_namer)(enum gtype type, int64_t id, void *ctx);
/*
 * What differs between two tables of one device, ignoring the device
 * below (compared by the caller) and the order of the groups: a
 * malloc'ed, comma-separated description, or NULL when they are equal.
 * Groups are named "NAME (id N)" by @name (may be NULL), else by id.
 */
char *table_diff(const struct ioband_table *cur, const struct ioband_table *want,
		 diff_namer name, void *ctx);

/* One group's counters from the status line. */
struct group_stats {
	int64_t id;
	uint64_t reads, delayed_reads, read_sectors;
	uint64_t writes, delayed_writes, write_sectors;
};

struct ioband_status {
	char dg[DG_NAME_MAX + 1];
	size_t ngroups;
	struct group_stats *groups;	/* the default group first */
};

void status_free(struct ioband_status *s);
int status_parse(const char *params, struct ioband_status *s, char *err, size_t errlen);
const struct group_stats *status_find(const struct ioband_status *s, int64_t id);

/*
 * One group's line of the answer to the "latency" message: how many of
 * its bios are in the histograms (a sample, of the current second and
 * the one before it), and their medians and 99th percentiles, in microseconds (each
 * the upper edge of its bucket), of the time waited in ioband and of the
 * time the device below took.  All 0 when none was timed.
 */
enum { LAT_WAIT_P50, LAT_WAIT_P99, LAT_DEV_P50, LAT_DEV_P99, LAT_NR };

struct group_latency {
	int64_t id;
	uint64_t timed;
	uint64_t usec[LAT_NR];
};

struct ioband_latency {
	size_t ngroups;
	struct group_latency *groups;	/* in the answer's order */
};

void latency_free(struct ioband_latency *l);
/*
 * The answer, a line "<id> <timed> <wait_p50> <wait_p99> <dev_p50>
 * <dev_p99>" a group; blank lines and extra blanks are passed over.
 * Returns 0, or -1 with err filled (an empty answer has no default group).
 */
int latency_parse(const char *text, struct ioband_latency *l, char *err, size_t errlen);
const struct group_latency *latency_find(const struct ioband_latency *l, int64_t id);

/* Strict numbers: plain decimal digits, no sign, no spaces, in range. */
int parse_u64(const char *s, uint64_t max, uint64_t *out);
int parse_u32(const char *s, uint32_t max, uint32_t *out);
/* A bandwidth in KB/s, optionally with a k, m or g suffix (x1, x1024, x1048576). */
int parse_kbps(const char *s, uint32_t *out);

/* The range of group ids a type accepts (none: none at all). */
bool gid_in_range(enum gtype type, int64_t id);
int64_t gid_max(enum gtype type);

bool dg_name_valid(const char *s);
bool dm_name_valid(const char *s);

/* What 'set' was given: a weight, a range, limits (bit k: limit_keys[k]). */
struct set_value {
	bool has_weight, has_range;
	unsigned int limits_given;
	struct group_conf g;
};
/*
 * set's VALUE: "weight=W", "min=A,max=B" (either part may be left out: min
 * 0, max 0 meaning no upper limit), limits ("riops=500,wbps=20M"), a weight
 * or a range with limits.  Returns 0, or -1 with err.
 */
int set_value_parse(const char *s, struct set_value *v, char *err, size_t errlen);
/*
 * Limits "KEY=VALUE" separated by ',' or '/', each key of limit_keys once:
 * rates 1 to 2^50 with systemd's suffixes K, M, G, T (powers of 1000) or
 * "max" (0), the burst in ms.  Sets the keys given in @lim and *given;
 * returns 0, or -1 with err.
 */
int limits_parse(const char *s, uint64_t *lim, unsigned int *given, char *err,
		 size_t errlen);
/*
 * The limits of @lim that @given names (rates of 0 as "max"), "KEY=VALUE"
 * joined by @sep, into @buf; "" when none.
 */
void limits_format(const uint64_t *lim, unsigned int given, char sep, char *buf,
		   size_t len);
/* The mask of the limits @lim holds: the rates set, a burst not 0. */
unsigned int limits_set(const uint64_t *lim);
/*
 * The VALUE of --group SPEC=VALUE and of iobandtab's group=SPEC=VALUE:
 * a weight for the weight policies, MIN:MAX (KB/s) for range-bw, either
 * followed by '/' and limits (limits_parse()).
 */
int group_value_parse(const char *s, enum policy pol, struct group_conf *g,
		      char *err, size_t errlen);
/*
 * Split "SPEC=VALUE" at the first '=' after which a VALUE starts (a number,
 * or MIN:MAX, up to the end or to a '/'); returns -1 when there is none.
 */
int split_spec_value(const char *s, char **spec, char **value);

/*
 * GROUP specs.  Resolving needs the system (user and group databases,
 * the cgroup tree); the lookups are function pointers so that the unit
 * tests can give fakes.  Each returns 0 and the id, -1 when not found.
 */
struct resolver {
	int (*user_by_name)(const char *name, int64_t *id);
	int (*group_by_name)(const char *name, int64_t *id);
	/* path is relative to the cgroup2 root, without a leading '/' ("" is the root) */
	int (*cgroup_by_path)(const char *path, int64_t *id);
	const char *cgroup_root;	/* the cgroup2 mount point */
};

/*
 * Translate GROUP into a group id for a device of type @type:
 *   default, -1                 the default group (every type)
 *   user: a user name or uid    gid: a group name or gid
 *   pid, pgrp: a number
 *   cgroup: a path under the cgroup2 mount (/sys/fs/cgroup/web), a path
 *           relative to its root (web, /web, a/b), or a cgroup id (digits,
 *           no '/')
 * Returns 0, or an EX_* code with err filled (EX_USAGE for malformed or
 * out-of-range specs, EX_NOTFOUND for names that do not exist).
 */
int group_spec_resolve(enum gtype type, const char *spec, const struct resolver *r,
		       int64_t *id, char *err, size_t errlen);

/* The device-mapper name of logical volume VG/LV ('-' doubled in each). */
int lv_dm_name(const char *vg_lv, char *out, size_t outlen, char *err, size_t errlen);
/*
 * The device group a wrap of volume @vg_lv (device-mapper name @dm) gets
 * unless told: its volume group's name, so that the volumes of a volume
 * group share its disks' budget, or @dm where the name is no device
 * group id.  Into @out (DG_NAME_MAX + 1 or more, else @dm is too long).
 */
void lv_default_dg(const char *vg_lv, const char *dm, char *out, size_t outlen);

/*
 * /etc/iobandtab.  One device a line:
 *     <name> <device> [<options>]
 * '#' starts a comment; fields are separated by blanks; \040-style octal
 * escapes write a blank inside a field.  <device> is a path, UUID=, LABEL=,
 * PARTUUID= or PARTLABEL=; "wrap" makes <name> a VG/LV to wrap.  <options>,
 * comma-separated:
 *     device-group=ID type=T policy=P weight=W io-throttle=N io-limit=N
 *     token-base=N carryover=N group=SPEC=VALUE (repeatable) nofail
 * or "-" for none.
 */
struct tab_group {
	char *spec;
	char *value;
};

struct setup_opts {
	const char *dg;		/* NULL: derived from the name */
	int type;		/* -1: not given */
	int policy;		/* -1: not given */
	int64_t io_throttle, io_limit, token_base, carryover;	/* -1: not given */
	uint64_t model[6];	/* rbps= ... wrandiops=, weight-time's cost model; 0: not given */
	bool has_weight;
	uint32_t weight;
	size_t ngroups;
	struct tab_group *groups;
};

void setup_opts_init(struct setup_opts *o);
void setup_opts_free(struct setup_opts *o);
/* Add "SPEC=VALUE"; -1 with err when malformed. */
int setup_opts_add_group(struct setup_opts *o, const char *spec_value, char *err, size_t errlen);
/* Set device-group setting @key ("io-limit", "rbps"...) from @val; -1 with err. */
int setup_opts_set(struct setup_opts *o, const char *key, const char *val,
		   char *err, size_t errlen);

/*
 * The table for a device from @o: @ids holds the resolved ids of
 * o->groups, in order (GROUP_ABSENT: checked, but left out); @device is "major:minor"; @default_dg names the
 * device group when o->dg does not.  Device group settings not given are
 * taken from @cur (the table in force, or NULL), else the kernel's
 * defaults, written out (policy DEFAULT_POLICY, io_limit 128, token_base
 * 256).
 */
int opts_to_table(const struct setup_opts *o, const char *device, const char *default_dg,
		  const struct ioband_table *cur, const int64_t *ids,
		  struct ioband_table *t, char *err, size_t errlen);

struct tab_entry {
	int lineno;
	char *name;
	char *device;
	bool wrap;		/* <device> was "wrap": name is VG/LV */
	bool nofail;		/* a missing device is passed over, not a failure */
	char *strings;		/* storage for the option strings */
	struct setup_opts opts;
};

void tab_entry_free(struct tab_entry *e);
/* Is @s a device given by tag (UUID=, LABEL=, PARTUUID=, PARTLABEL=)? */
bool tab_device_is_tag(const char *s);
/*
 * Parse one line.  Returns 1 with *e filled, 0 for a blank or comment
 * line, -1 with err filled.
 */
int tab_parse_line(const char *line, int lineno, struct tab_entry *e, char *err, size_t errlen);

/* Decode iobandtab's \ooo escapes (and \\) in place; -1 on a malformed one. */
int tab_unescape(char *s);
/* Write @s as one iobandtab field: blanks, '#', '\\' and control characters as \ooo. */
void tab_put_field(FILE *f, const char *s);

/*
 * Cgroup groups by path (pathgroups.c).  The state file (/run/ioband/groups,
 * written by the commands, followed by 'ioband-setup watch') holds one entry
 * per device and cgroup path: the settings, and the id the group was last
 * attached under (0: none).
 */
#define GROUP_ABSENT	INT64_MIN	/* opts_to_table: a group left out (its cgroup does not exist yet) */
#define PG_MSG_LEN	256
#define PG_MAX_MSGS	5

struct pg_entry {
	char *dev;		/* device-mapper name */
	char *path;		/* from the cgroup2 root, with a leading '/': "/system.slice/web.service" */
	uint32_t weight, min_kbps, max_kbps;
	uint64_t limit[LIM_NR];	/* as group_conf's */
	int64_t id;
	uint32_t ioweight;	/* the cgroup's io.weight for the device, last seen (0: never) */
};

struct pg_state {
	size_t n;
	struct pg_entry *e;
};

/*
 * The cgroup path GROUP names, "/a/b" (malloc'ed), or NULL when GROUP is a
 * cgroup id or the default group.  @root is the cgroup2 mount point.
 */
char *cgroup_spec_path(const char *spec, const char *root);
/*
 * Where systemd puts the cgroup of unit @unit (web.service, a-b.slice...)
 * when nothing says otherwise: /system.slice/web.service,
 * /a.slice/a-b.slice; malloc'ed.  NULL when @unit is not a unit name.
 */
char *unit_default_path(const char *unit);
void pg_free(struct pg_state *s);
struct pg_entry *pg_find(const struct pg_state *s, const char *dev, const char *path);
struct pg_entry *pg_find_id(const struct pg_state *s, const char *dev, int64_t id);
/* The entry of @dev and @path, added (weight 100, no range, id 0) when there is none. */
struct pg_entry *pg_add(struct pg_state *s, const char *dev, const char *path);
/* Remove @e; the others keep their order. */
void pg_drop(struct pg_state *s, struct pg_entry *e);
void pg_write(FILE *f, const struct pg_state *s);
/* Add one line's entry: 1, 0 for a blank or comment line, -1 with err filled. */
int pg_parse_line(struct pg_state *s, const char *line, int lineno, char *err, size_t errlen);
/*
 * Reconcile @e with device table @t, the path's cgroup having id @cur now
 * (0: it does not exist): the messages to send, in order, into @msgs
 * (PG_MAX_MSGS of them at most), and their number.  A stale id (the one
 * last attached, when the path's id is another now) is detached, the
 * current one attached and given the entry's settings; e->id becomes @cur.
 */
size_t pg_plan(struct pg_entry *e, const struct ioband_table *t, int64_t cur,
	       char (*msgs)[PG_MSG_LEN]);
/*
 * The weight a cgroup's io.weight file (@text: "default W" and "MAJ:MIN W"
 * lines) gives device @devt ("MAJ:MIN"): its own line, else the default;
 * 0 when the text has neither.
 */
uint32_t ioweight_parse(const char *text, const char *devt);
/*
 * Follow io.weight: the entry's weight becomes @w (io.weight and ioband
 * weights are both 1 to 10000, default 100, and map one to one) when it
 * changed since last seen, or at first sight when it is not the default
 * (IOWeight= given); otherwise the entry's own weight stays.  Returns
 * true when the weight changed.
 */
bool pg_follow_ioweight(struct pg_entry *e, uint32_t w);

/* JSON */
void json_string(FILE *f, const char *s);

/* Helpers */
void *xmalloc(size_t n);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

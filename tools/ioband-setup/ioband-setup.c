// SPDX-License-Identifier: GPL-2.0
/*
 * ioband-setup: the administrator's command line for dm-ioband.
 *
 *   ioband-setup [-v] [-q] COMMAND [ARGS]     (ioband-setup help COMMAND)
 *
 * Everything goes through libdevmapper's dm_task API (dm.c); nothing runs
 * dmsetup.  Commands that change more than one thing undo what they did
 * when a later step fails, and say so; exit status 5 means even that
 * failed, and the message names what is left.  See ioband-setup.8.
 */
#include <errno.h>
#include <fcntl.h>
#include <libdevmapper.h>
#include <linux/fs.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "names.h"
#include "report.h"

#define VERSION "1.0"

int verbose, quiet;
static const char *cmd_name = "";
static char err_ctx[512];	/* "FILE:LINE" while apply works on a line */

/* ---- messages ------------------------------------------------------------ */

int errorf(int code, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "ioband-setup: %s%s%s%s", cmd_name, *cmd_name ? ": " : "", err_ctx,
		*err_ctx ? ": " : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

void note(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* ---- help ---------------------------------------------------------------- */

#define SETUP_OPTIONS \
	"  -d, --device-group ID   device group (default: NAME, when it is a valid id)\n" \
	"  -t, --type TYPE         none (default), user, gid, pid, pgrp, cgroup\n" \
	"  -p, --policy POLICY     weight-time (default), weight, weight-iosize,\n" \
	"                          range-bw\n" \
	"  -w, --weight W          the default group's weight, 1 to 10000 (100)\n" \
	"  -g, --group SPEC=VALUE  attach a group: GROUP as for 'set', VALUE a weight\n" \
	"                          (MIN:MAX in KB/s under range-bw); repeatable\n" \
	"      --io-throttle N     0 to 65536 (0, off)\n" \
	"      --io-limit N        bios in flight per device group, 1 to 65536 (128)\n" \
	"      --token-base N      window in 4 KiB tokens, 1 to 1048576 (256)\n" \
	"      --carryover N       idle credit kept, in windows, 0 to 100 (2)\n"

#define REPORT_HELP \
	"Report options (as lvs's):\n" \
	"  -o, --options COL[,COL...]   the columns; +COL[,...] adds to the default\n" \
	"                               set; -o help lists them\n" \
	"      --noheadings             no heading line\n" \
	"      --separator STR          STR between columns, no padding\n" \
	"      --units b|s|k|m|g        sizes in bytes, 512-byte sectors, KiB, MiB\n" \
	"                               (the default) or GiB (powers of 1024)\n" \
	"      --reportformat basic|json   JSON: every column unless -o says\n" \
	"  -j, --json                   --reportformat json\n"

#define GROUP_HELP \
	"GROUP names a group by the device's group type:\n" \
	"  default (or -1)   the default group, on every device\n" \
	"  user              a user name or uid       gid    a group name or gid\n" \
	"  pid               a process id             pgrp   a process group id\n" \
	"  cgroup            a path under the cgroup2 mount (/sys/fs/cgroup/web),\n" \
	"                    a path from its root (web, /web, a/b), a systemd unit\n" \
	"                    (web.service: its cgroup, by default under system.slice),\n" \
	"                    or a cgroup id (digits only; write /1234 for a cgroup\n" \
	"                    named 1234)\n"

static const struct cmd_help {
	const char *name, *usage, *text;
} helps[] = {
	{ "create", "create NAME DEVICE [OPTIONS]",
	  "Create the ioband device /dev/mapper/NAME over the block device DEVICE,\n"
	  "which must not be in use (for a mounted logical volume, see 'wrap').\n\n"
	  "Options:\n" SETUP_OPTIONS "\n" GROUP_HELP },
	{ "remove", "remove NAME",
	  "Remove the ioband device NAME.  It must not be open (mounted, or used by\n"
	  "another device).  A wrapped logical volume is undone with 'unwrap'.\n" },
	{ "list", "list [REPORT OPTIONS]",
	  "One line per ioband device, by name: its name, the device below, the device\n"
	  "group, group type, policy and number of attached groups, and the logical\n"
	  "volume it wraps, if any.\n\n" REPORT_HELP },
	{ "show", "show NAME [REPORT OPTIONS]",
	  "The configuration of the ioband device NAME and its groups' statistics,\n"
	  "with names resolved: cgroup paths, user and group names, process names.\n"
	  "SHARE is the group's weight over the sum of the weights of every group of\n"
	  "the device group: its share of the bandwidth when all are busy.  The\n"
	  "report options shape the table of groups (--noheadings drops the lines\n"
	  "above it too).\n\n" REPORT_HELP },
	{ "set", "set NAME GROUP weight=W | set NAME GROUP min=MIN,max=MAX",
	  "Set a group's weight (1 to 10000), or its bandwidth range in KB/s (a k, m\n"
	  "or g suffix multiplies by 1, 1024, 1048576; max 0 or left out: no upper\n"
	  "limit) for the range-bw policy.  A group not attached yet is attached\n"
	  "first, and detached again if the kernel refuses the value.\n\n" GROUP_HELP },
	{ "attach", "attach NAME GROUP [weight=W]",
	  "Attach GROUP to the ioband device NAME (weight 100 unless given).\n\n" GROUP_HELP },
	{ "detach", "detach NAME GROUP",
	  "Detach GROUP from NAME; its I/O goes to the default group from then on.\n\n"
	  GROUP_HELP },
	{ "top", "top NAME [--interval SECONDS] [--count N] [REPORT OPTIONS]",
	  "A live view of the groups of NAME: read and write throughput, I/Os per\n"
	  "second, bios delayed (held by ioband) per second, and each group's share\n"
	  "of the sectors moved, from successive status samples.\n\n"
	  "  -i, --interval S   seconds between samples (1; 0.1 to 3600)\n"
	  "  -c, --count N      stop after N reports (default: until interrupted)\n\n"
	  "The report options shape each report's table (--noheadings drops its\n"
	  "title line too); with JSON, one object per report and line.\n\n" REPORT_HELP },
	{ "wrap", "wrap VG/LV [OPTIONS] | wrap --repair VG/LV",
	  "Put ioband under an active logical volume, even a mounted one: its current\n"
	  "table is copied to a new device VG-LV" ORIG_SUFFIX ", and the volume's own\n"
	  "table is swapped, with suspend, load and resume, for ioband over that copy.\n"
	  "/dev/VG/LV stays the same device.  A failed step undoes the earlier ones.\n"
	  "LVM commands that reload or deactivate the volume (lvextend, lvreduce,\n"
	  "lvchange, vgchange -an) put LVM's table back and leave the copy behind,\n"
	  "stale; 'ioband-setup watch' then removes the copy and wraps the volume\n"
	  "again with the table it had (recorded in /run/ioband/wraps), and\n"
	  "'wrap --repair' does it by hand.  Set it up at boot with a wrap line in\n"
	  "iobandtab.\n\n"
	  "Options (the device group defaults to the volume's device-mapper name):\n"
	  SETUP_OPTIONS
	  "      --repair            wrap again as recorded (no other options)\n" },
	{ "unwrap", "unwrap VG/LV",
	  "Undo 'wrap': swap the volume's table back to the copy's, then remove the copy.\n"
	  "For a volume LVM unwrapped or deactivated, remove the stale copy and forget\n"
	  "the wrap.\n" },
	{ "apply", "apply [FILE] [--dry-run] [--wait SECONDS]",
	  "Make the devices match FILE (default /etc/iobandtab; - for standard input).\n"
	  "One device a line, '#' comments:\n\n"
	  "  NAME   DEVICE  [OPTIONS]     an ioband device NAME over DEVICE\n"
	  "  VG/LV  wrap    [OPTIONS]     the logical volume, wrapped\n\n"
	  "OPTIONS is '-' or a comma-separated list of device-group=ID, type=T,\n"
	  "policy=P, weight=W, group=SPEC=VALUE (repeatable), io-throttle=N,\n"
	  "io-limit=N, token-base=N, carryover=N.  A device that does not exist is\n"
	  "created (or wrapped); one that differs is reloaded with the line's table in\n"
	  "one atomic swap; one that matches is left alone.  Device group settings\n"
	  "not given keep their values in force.  Devices not in FILE are left alone.\n"
	  "The whole file is checked before anything changes.\n\n"
	  "  -n, --dry-run     say what would change, change nothing\n"
	  "  -W, --wait S      wait up to S seconds for each DEVICE to appear\n" },
	{ "save", "save [FILE] [--print]",
	  "Write the live configuration back to FILE (default /etc/iobandtab) in its\n"
	  "syntax, so that the next apply (at boot) keeps what set, attach and detach\n"
	  "changed.  A line whose device is live and differs from it gets options\n"
	  "written from the device (groups given by path keep their paths, other\n"
	  "groups are named by name or path where they have one), keeping its name,\n"
	  "device and comment as written; every other line stays as it is; live\n"
	  "ioband devices FILE does not name are added at its end.  apply of the\n"
	  "saved file then has nothing to change.\n\n"
	  "  -p, --print   write the result to standard output; FILE is left alone\n" },
	{ "watch", "watch [--once]",
	  "Keep each cgroup group given by path attached under the cgroup that has\n"
	  "the path now: a cgroup removed and made again (a restarted service) or\n"
	  "made after the group was configured gets the group's settings, and the\n"
	  "id of one that is gone is detached.  Groups given by path are recorded in\n"
	  "/run/ioband/groups by create, apply, set, attach, detach, remove, wrap\n"
	  "and unwrap; watch follows that file and the cgroup tree (inotify) until\n"
	  "SIGTERM, and prints what it changes.  Under the weight policies it also\n"
	  "follows the cgroups' io.weight (systemd's IOWeight=), one to one.  And it\n"
	  "repairs wrapped volumes that LVM commands unwrapped (see wrap), woken by\n"
	  "the kernel's uevents.  ioband-setup-watch.service runs it.\n\n"
	  "  --once   reconcile once and exit\n" },
	{ "help", "help [COMMAND]", "Help on one command, or the list of commands.\n" },
};

static const struct cmd_help *find_help(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(helps) / sizeof(helps[0]); i++)
		if (!strcmp(helps[i].name, name))
			return &helps[i];
	return NULL;
}

static void usage_all(FILE *f)
{
	size_t i;

	fprintf(f, "usage: ioband-setup [-v|--verbose] [-q|--quiet] COMMAND [ARGS]\n"
		   "       ioband-setup --version | --help | help COMMAND\n\nCommands:\n");
	for (i = 0; i < sizeof(helps) / sizeof(helps[0]); i++)
		fprintf(f, "  %s\n", helps[i].usage);
	fprintf(f, "\nExit status: 0 done; 1 refused or failed, nothing changed; 2 bad usage or\n"
		   "file syntax; 3 a device, volume, group, user or cgroup named does not\n"
		   "exist; 4 conflict (exists already, in use, attached or not, not an ioband\n"
		   "device); 5 failed and could not undo every step: the message says what\n"
		   "is left.  See ioband-setup(8).\n");
}

static int cmd_help_print(const char *name, FILE *f)
{
	const struct cmd_help *h = find_help(name);

	if (!h)
		return -1;
	fprintf(f, "usage: ioband-setup %s\n\n%s", h->usage, h->text);
	return 0;
}

int usage_error(const char *fmt, ...)
{
	va_list ap;
	const struct cmd_help *h = find_help(cmd_name);

	fflush(stdout);
	fprintf(stderr, "ioband-setup: %s%s", cmd_name, *cmd_name ? ": " : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (h)
		fprintf(stderr, "usage: ioband-setup %s  (ioband-setup %s --help)\n",
			h->usage, h->name);
	return EX_USAGE;
}

/* ---- options ------------------------------------------------------------- */

enum {
	O_HELP = 1, O_JSON, O_DG, O_TYPE, O_POLICY, O_WEIGHT, O_GROUP, O_IO_THROTTLE,
	O_IO_LIMIT, O_TOKEN_BASE, O_CARRYOVER, O_INTERVAL, O_COUNT, O_DRY_RUN, O_WAIT,
	O_OPTIONS, O_NOHEADINGS, O_SEPARATOR, O_UNITS, O_REPORTFORMAT, O_REPAIR,
};

struct opt {
	const char *lng;
	char shrt;
	bool arg;
	int id;
};

static const struct opt help_opt = { "help", 'h', false, O_HELP };

struct optstate {
	int argc;
	char **argv;
	int i;
	bool only_pos;
	const char *arg;
	char **pos;
	int npos;
};

static bool is_negative_number(const char *s)
{
	if (s[0] != '-' || !s[1])
		return false;
	for (s++; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/*
 * The next option of @opts (and --help), 0 at the end, -1 after printing
 * an error.  Arguments that are not options collect in st->pos; "--" ends
 * the options, and a negative number ("-1", the default group) is an
 * argument, not an option.
 */
static int next_opt(struct optstate *st, const struct opt *opts)
{
	while (st->i < st->argc) {
		char *a = st->argv[st->i++];
		const struct opt *o = NULL, *p;
		const char *val = NULL;

		if (st->only_pos || a[0] != '-' || !a[1] || is_negative_number(a)) {
			st->pos[st->npos++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			st->only_pos = true;
			continue;
		}
		if (a[1] == '-') {
			const char *eq = strchr(a + 2, '=');
			size_t n = eq ? (size_t)(eq - a - 2) : strlen(a + 2);

			for (p = opts; p && p->lng; p++)
				if (strlen(p->lng) == n && !strncmp(p->lng, a + 2, n))
					o = p;
			if (!o && n == 4 && !strncmp(a + 2, "help", 4))
				o = &help_opt;
			if (!o) {
				usage_error("unknown option '%.*s'", (int)n + 2, a);
				return -1;
			}
			if (eq && !o->arg) {
				usage_error("option --%s takes no value", o->lng);
				return -1;
			}
			val = eq ? eq + 1 : NULL;
		} else {
			for (p = opts; p && p->lng; p++)
				if (p->shrt && p->shrt == a[1])
					o = p;
			if (!o && a[1] == 'h')
				o = &help_opt;
			if (!o) {
				usage_error("unknown option '-%c'", a[1]);
				return -1;
			}
			if (a[2]) {
				if (!o->arg) {
					usage_error("option -%c takes no value", a[1]);
					return -1;
				}
				val = a + 2;
			}
		}
		if (o->arg && !val) {
			if (st->i >= st->argc) {
				usage_error("option --%s needs a value", o->lng);
				return -1;
			}
			val = st->argv[st->i++];
		}
		st->arg = val;
		return o->id;
	}
	return 0;
}

static void opt_begin(struct optstate *st, int argc, char **argv)
{
	memset(st, 0, sizeof(*st));
	st->argc = argc;
	st->argv = argv;
	st->i = 1;
	st->pos = xmalloc((argc + 1) * sizeof(char *));
}

/* --help seen: print the command's help */
int help_exit(void)
{
	cmd_help_print(cmd_name, stdout);
	return EX_OK;
}

/*
 * The options of a command whose only options are --help and flags such as
 * --json: EX_OK or EX_USAGE, with *help set when --help was seen.
 */
static int flag_opts(struct optstate *st, const struct opt *opts, bool *flag,
		     bool *help)
{
	int id;

	*help = false;
	while ((id = next_opt(st, opts)) > 0) {
		if (id == O_HELP) {
			*help = true;
			return EX_OK;
		}
		if (flag)
			*flag = true;
	}
	return id < 0 ? EX_USAGE : EX_OK;
}

/* Ends a command after flag_opts(): its help, or its usage error. */
static int flag_opts_exit(struct optstate *st, int rc, bool help)
{
	free(st->pos);
	return help ? help_exit() : rc;
}

/* The options of the reports (list, show, top); --json is --reportformat json. */
#define REPORT_OPTV \
	{ "json", 'j', false, O_JSON }, { "options", 'o', true, O_OPTIONS }, \
	{ "noheadings", 0, false, O_NOHEADINGS }, { "separator", 0, true, O_SEPARATOR }, \
	{ "units", 0, true, O_UNITS }, { "reportformat", 0, true, O_REPORTFORMAT }

/*
 * Option @id (its value @arg) into @ro when it is a report option: 1 when
 * it was one, 0 when not, -1 after a usage error.
 */
static int report_opt(struct report_opts *ro, int id, const char *arg)
{
	char err[256];
	int rc = 0;

	switch (id) {
	case O_JSON:
		ro->json = true;
		return 1;
	case O_OPTIONS:
		ro->columns = arg;
		return 1;
	case O_NOHEADINGS:
		ro->noheadings = true;
		return 1;
	case O_SEPARATOR:
		rc = report_separator_parse(ro, arg, err, sizeof(err));
		break;
	case O_UNITS:
		rc = report_units_parse(ro, arg, err, sizeof(err));
		break;
	case O_REPORTFORMAT:
		rc = report_format_parse(ro, arg, err, sizeof(err));
		break;
	default:
		return 0;
	}
	if (rc) {
		usage_error("%s", err);
		return -1;
	}
	return 1;
}

/* The options of list and show: EX_OK or EX_USAGE, *help set on --help. */
static int report_opts(struct optstate *st, const struct opt *opts, struct report_opts *ro,
		       bool *help)
{
	int id;

	report_opts_init(ro);
	*help = false;
	while ((id = next_opt(st, opts)) > 0) {
		if (id == O_HELP) {
			*help = true;
			return EX_OK;
		}
		if (report_opt(ro, id, st->arg) < 0)
			return EX_USAGE;
	}
	return id < 0 ? EX_USAGE : EX_OK;
}

/*
 * The report of this command over @cols: EX_OK with *r, EX_OK with *r
 * NULL after -o help, or EX_USAGE (printed).
 */
static int report_open(const struct report_col *cols, size_t ncols, const char *defaults,
		       const struct report_opts *ro, struct report **r)
{
	char err[256];
	int rc = report_new(cmd_name, cols, ncols, defaults, ro, stdout, r, err, sizeof(err));

	if (rc < 0)
		return usage_error("%s", err);
	return EX_OK;
}

/* Check the options of @ro against @cols before any work: as report_open(). */
static int report_check(const struct report_col *cols, size_t ncols, const char *defaults,
			const struct report_opts *ro, bool *listed)
{
	struct report *r;
	int rc = report_open(cols, ncols, defaults, ro, &r);

	*listed = !rc && !r;
	report_free(r);
	return rc;
}

#define SETUP_OPTV \
	{ "device-group", 'd', true, O_DG }, \
	{ "type", 't', true, O_TYPE }, \
	{ "policy", 'p', true, O_POLICY }, \
	{ "weight", 'w', true, O_WEIGHT }, \
	{ "group", 'g', true, O_GROUP }, \
	{ "io-throttle", 0, true, O_IO_THROTTLE }, \
	{ "io-limit", 0, true, O_IO_LIMIT }, \
	{ "token-base", 0, true, O_TOKEN_BASE }, \
	{ "carryover", 0, true, O_CARRYOVER }

static const struct opt create_optv[] = { SETUP_OPTV, { NULL, 0, false, 0 } };
static const struct opt wrap_optv[] = {
	SETUP_OPTV, { "repair", 0, false, O_REPAIR }, { NULL, 0, false, 0 }
};

/*
 * Parse the options of create and wrap (from @opts) into @o; *nset counts
 * the settings given, and O_REPAIR sets *repair.  EX_OK or an exit code.
 */
static int parse_setup_opts(struct optstate *st, const struct opt *opts, struct setup_opts *o,
			    bool *help, bool *repair, int *nset)
{
	static const char *const keys[] = {
		[O_DG] = "device-group", [O_TYPE] = "type", [O_POLICY] = "policy",
		[O_WEIGHT] = "weight", [O_GROUP] = "group", [O_IO_THROTTLE] = "io-throttle",
		[O_IO_LIMIT] = "io-limit", [O_TOKEN_BASE] = "token-base",
		[O_CARRYOVER] = "carryover",
	};
	char err[512];
	int id;

	*help = false;
	*nset = 0;
	while ((id = next_opt(st, opts)) > 0) {
		if (id == O_HELP) {
			*help = true;
			return EX_OK;
		}
		if (id == O_REPAIR) {
			*repair = true;
			continue;
		}
		if (setup_opts_set(o, keys[id], st->arg, err, sizeof(err)))
			return usage_error("%s", err);
		(*nset)++;
	}
	return id < 0 ? EX_USAGE : EX_OK;
}

/* ---- devices ------------------------------------------------------------- */

/* A readable name for device major:minor: /dev/mapper/X or /dev/X. */
static char *devt_name(unsigned int maj, unsigned int min)
{
	char path[128], buf[256];
	FILE *f;
	char *r = NULL;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/dm/name", maj, min);
	f = fopen(path, "r");
	if (f) {
		if (fgets(buf, sizeof(buf), f)) {
			buf[strcspn(buf, "\n")] = '\0';
			r = xasprintf("/dev/mapper/%s", buf);
		}
		fclose(f);
		if (r)
			return r;
	}
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/uevent", maj, min);
	f = fopen(path, "r");
	if (f) {
		while (fgets(buf, sizeof(buf), f)) {
			if (!strncmp(buf, "DEVNAME=", 8)) {
				buf[strcspn(buf, "\n")] = '\0';
				r = xasprintf("/dev/%s", buf + 8);
				break;
			}
		}
		fclose(f);
	}
	return r ? r : xasprintf("%u:%u", maj, min);
}

char *devstr_name(const char *dev)
{
	unsigned int maj, min;
	char c;

	if (sscanf(dev, "%u:%u%c", &maj, &min, &c) == 2)
		return devt_name(maj, min);
	return xstrdup(dev);
}

/*
 * The device-mapper name NAME stands for: a name, /dev/mapper/NAME, a
 * device node (/dev/dm-3, /dev/VG/LV), or VG/LV.
 */
static int resolve_name(const char *arg, char *out, size_t outlen)
{
	char err[256];

	if (!*arg)
		return errorf(EX_USAGE, "empty device name");
	if (!strncmp(arg, "/dev/mapper/", 12) && !strchr(arg + 12, '/')) {
		snprintf(out, outlen, "%s", arg + 12);
		return EX_OK;
	}
	if (arg[0] == '/') {
		struct stat st;
		struct dmx_info info;

		if (stat(arg, &st))
			return errorf(EX_NOTFOUND, "%s: %s", arg, strerror(errno));
		if (!S_ISBLK(st.st_mode))
			return errorf(EX_USAGE, "%s is not a block device", arg);
		if (dmx_info_devt(major(st.st_rdev), minor(st.st_rdev), &info))
			return errorf(EX_FAIL, "%s: %s", arg, dmx_why());
		if (!info.exists)
			return errorf(EX_CONFLICT, "%s is not a device-mapper device", arg);
		snprintf(out, outlen, "%s", info.name);
		return EX_OK;
	}
	if (strchr(arg, '/')) {
		if (lv_dm_name(arg, out, outlen, err, sizeof(err)))
			return errorf(EX_USAGE, "%s", err);
		return EX_OK;
	}
	if (!dm_name_valid(arg))
		return errorf(EX_USAGE, "'%s' is not a valid device name", arg);
	snprintf(out, outlen, "%s", arg);
	return EX_OK;
}

void dev_state_free(struct dev_state *d)
{
	dmx_lines_free(d->lines, d->nlines);
	table_free(&d->t);
	free(d->wraps);
	memset(d, 0, sizeof(*d));
}

/* VG/LV from a device-mapper name of a logical volume ("a--b-c" -> "a-b/c"). */
char *dm_to_vg_lv(const char *dm)
{
	char *out = xmalloc(strlen(dm) + 1), *o = out;
	bool split = false;

	for (; *dm; dm++) {
		if (*dm == '-' && dm[1] == '-') {
			*o++ = '-';
			dm++;
		} else if (*dm == '-' && !split) {
			*o++ = '/';
			split = true;
		} else {
			*o++ = *dm;
		}
	}
	*o = '\0';
	return out;
}

/*
 * Is @d (an ioband device) a wrapped logical volume?  Then d->wraps is
 * VG/LV: the volume's uuid is LVM's and the device below is our copy.
 */
static void detect_wrap(struct dev_state *d)
{
	struct dmx_info below;
	unsigned int maj, min;

	if (strncmp(d->info.uuid, "LVM-", 4) ||
	    sscanf(d->t.device, "%u:%u", &maj, &min) != 2 ||
	    dmx_info_devt(maj, min, &below) || !below.exists ||
	    strncmp(below.uuid, ORIG_UUID_PREFIX, strlen(ORIG_UUID_PREFIX)))
		return;
	d->wraps = dm_to_vg_lv(d->name);
}

int load_ioband(const char *name, struct dev_state *d, bool quiet_errors)
{
	char err[512];
	size_t i;

	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	if (dmx_info(name, &d->info))
		return quiet_errors ? EX_FAIL : errorf(EX_FAIL, "%s: %s", name, dmx_why());
	if (!d->info.exists)
		return quiet_errors ? EX_NOTFOUND :
			errorf(EX_NOTFOUND, "no device-mapper device named '%s'", name);
	if (dmx_table(name, false, &d->lines, &d->nlines))
		return quiet_errors ? EX_FAIL : errorf(EX_FAIL, "%s: %s", name, dmx_why());
	for (i = 0; i < d->nlines; i++)
		d->len = d->lines[i].start + d->lines[i].len > d->len ?
			 d->lines[i].start + d->lines[i].len : d->len;
	if (d->nlines != 1 || strcmp(d->lines[0].type, "ioband")) {
		int code = EX_CONFLICT;

		if (!quiet_errors) {
			if (!d->nlines)
				errorf(code, "'%s' has no table", name);
			else if (d->nlines == 1)
				errorf(code, "'%s' is not an ioband device (its table is %s)",
				       name, d->lines[0].type);
			else
				errorf(code, "'%s' has %zu targets; ioband-setup handles devices whose table is one ioband target",
				       name, d->nlines);
		}
		dev_state_free(d);
		return code;
	}
	if (table_parse(d->lines[0].params, &d->t, err, sizeof(err))) {
		int code = quiet_errors ? EX_FAIL :
			errorf(EX_FAIL, "%s: cannot read its ioband table: %s", name, err);

		dev_state_free(d);
		return code;
	}
	detect_wrap(d);
	return EX_OK;
}

static int load_status(const char *name, struct ioband_status *s)
{
	struct dm_target_line *l;
	size_t n;
	char err[512];
	int r;

	if (dmx_table(name, true, &l, &n))
		return errorf(dmx_errno == ENXIO ? EX_NOTFOUND : EX_FAIL, "%s: %s", name, dmx_why());
	if (n != 1 || strcmp(l[0].type, "ioband")) {
		dmx_lines_free(l, n);
		return errorf(EX_CONFLICT, "'%s' is no longer an ioband device", name);
	}
	r = status_parse(l[0].params, s, err, sizeof(err));
	dmx_lines_free(l, n);
	if (r)
		return errorf(EX_FAIL, "%s: cannot read its status: %s", name, err);
	return EX_OK;
}

/* Every ioband device: their names (for list, and shares in show). */
int all_ioband(struct dev_state **out, size_t *nout)
{
	char **names;
	size_t n, i;
	struct dev_state *v = NULL;
	size_t nv = 0;

	*out = NULL;
	*nout = 0;
	if (dmx_list(&names, &n))
		return errorf(EX_FAIL, "listing device-mapper devices: %s", dmx_why());
	for (i = 0; i < n; i++) {
		struct dev_state d;

		if (load_ioband(names[i], &d, true) == EX_OK) {
			v = xrealloc(v, (nv + 1) * sizeof(*v));
			v[nv++] = d;
		}
		free(names[i]);
	}
	free(names);
	*out = v;
	*nout = nv;
	return EX_OK;
}

void all_free(struct dev_state *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		dev_state_free(&v[i]);
	free(v);
}

/* Resolve GROUP for device type @type; EX_OK or an exit code (printed). */
static int resolve_group(enum gtype type, const char *spec, int64_t *id)
{
	struct resolver r;
	char err[512];
	int rc;

	sys_resolver(&r);
	if (type == GT_CGROUP && !r.cgroup_root && strcmp(spec, "default") &&
	    strcmp(spec, "-1") && strspn(spec, "0123456789") != strlen(spec))
		return errorf(EX_NOTFOUND, "group '%s': cgroup2 is not mounted", spec);
	rc = group_spec_resolve(type, spec, &r, id, err, sizeof(err));
	if (rc)
		return errorf(rc, "%s", err);
	return EX_OK;
}

/* "web (id 1234)" for messages. */
static char *group_label(const char *spec, int64_t id)
{
	if (id == DEFAULT_GROUP)
		return xstrdup("default group");
	if (!strcmp(spec, "") || strspn(spec, "0123456789") == strlen(spec))
		return xasprintf("%lld", (long long)id);
	return xasprintf("%s (id %lld)", spec, (long long)id);
}

static int block_device(const char *path, struct stat *st, uint64_t *sectors, bool excl)
{
	uint64_t bytes;
	int fd;

	if (stat(path, st))
		return errorf(errno == ENOENT ? EX_NOTFOUND : EX_FAIL, "%s: %s", path,
			      strerror(errno));
	if (!S_ISBLK(st->st_mode))
		return errorf(EX_USAGE, "%s is not a block device", path);
	fd = open(path, O_RDONLY | O_CLOEXEC | (excl ? O_EXCL : 0));
	if (fd < 0) {
		if (errno == EBUSY)
			return errorf(EX_CONFLICT,
				      "%s is in use (mounted, or held by another device); ioband needs it to itself (for a mounted logical volume, use wrap)",
				      path);
		return errorf(EX_FAIL, "%s: %s", path, strerror(errno));
	}
	if (ioctl(fd, BLKGETSIZE64, &bytes)) {
		close(fd);
		return errorf(EX_FAIL, "%s: cannot read its size: %s", path, strerror(errno));
	}
	close(fd);
	*sectors = bytes >> 9;
	if (!*sectors)
		return errorf(EX_USAGE, "%s is empty", path);
	return EX_OK;
}

static const char *cg_root_or_default(void)
{
	return cgroup_root() ? cgroup_root() : "/sys/fs/cgroup";
}

/*
 * The cgroup path a cgroup GROUP names: a systemd unit's cgroup
 * (web.service), or a path; NULL for an id or the default group.
 */
static char *group_path(const char *spec)
{
	char *p = cgroup_of_unit(spec);

	return p ? p : cgroup_spec_path(spec, cg_root_or_default());
}

/* The note for a cgroup group given by a path that no cgroup has yet. */
static void note_absent(const char *what, const char *path)
{
	note("%s: no cgroup %s yet: its group is attached when it appears%s", what, path,
	     watch_running() ? "" : " (while ioband-setup watch runs)");
}

int build_table(const struct setup_opts *o, const char *device, const char *default_dg,
		const struct ioband_table *cur, struct ioband_table *t,
		struct pg_state *paths, const char *what)
{
	enum gtype type = o->type >= 0 ? (enum gtype)o->type : GT_NONE;
	int64_t *ids = xmalloc(o->ngroups * sizeof(*ids));
	char **gpath = xmalloc(o->ngroups * sizeof(*gpath));
	char err[512];
	size_t i;
	int rc = EX_OK;

	memset(paths, 0, sizeof(*paths));
	for (i = 0; i < o->ngroups; i++)
		gpath[i] = type == GT_CGROUP ?
			   group_path(o->groups[i].spec) : NULL;
	for (i = 0; i < o->ngroups && !rc; i++) {
		if (type == GT_NONE && o->type < 0 && strcmp(o->groups[i].spec, "default") &&
		    strcmp(o->groups[i].spec, "-1")) {
			rc = errorf(EX_USAGE, "group '%s' needs a group type (--type user, gid, pid, pgrp or cgroup)",
				    o->groups[i].spec);
		} else if (gpath[i]) {
			ids[i] = cgroup_id_of(gpath[i]);
			if (!ids[i])
				ids[i] = GROUP_ABSENT;
		} else {
			rc = resolve_group(type, o->groups[i].spec, &ids[i]);
		}
	}
	if (!rc && opts_to_table(o, device, default_dg, cur, ids, t, err, sizeof(err)))
		rc = errorf(EX_USAGE, "%s", err);
	for (i = 0; i < o->ngroups && !rc; i++) {
		struct group_conf g = { .weight = DEFAULT_WEIGHT };
		struct pg_entry *e;

		if (!gpath[i])
			continue;
		/* checked by opts_to_table */
		group_value_parse(o->groups[i].value, t->policy, &g, err, sizeof(err));
		e = pg_add(paths, "", gpath[i]);
		e->weight = g.weight;
		e->min_kbps = g.min_kbps;
		e->max_kbps = g.max_kbps;
		e->id = ids[i] == GROUP_ABSENT ? 0 : ids[i];
		if (!e->id)
			note_absent(what, gpath[i]);
	}
	for (i = 0; i < o->ngroups; i++)
		free(gpath[i]);
	free(gpath);
	free(ids);
	if (rc)
		pg_free(paths);
	return rc;
}

int send_message(const char *name, const char *msg)
{
	if (verbose)
		fprintf(stderr, "ioband-setup: message to %s: %s\n", name, msg);
	return dmx_message(name, msg);
}

/* ---- create / remove ----------------------------------------------------- */

static bool dry_run;

/*
 * Create ioband device @name over @device from @o (the create command and
 * apply).  @what prefixes the messages.  EX_OK or an exit code (printed).
 */
/* EX_OK or an exit code (printed); see cmd.h. */
int dg_settings(const char *dg, struct dev_state *member)
{
	struct dev_state *v;
	size_t n, i;
	int rc;

	rc = all_ioband(&v, &n);
	if (rc)
		return rc;
	for (i = 0; i < n; i++) {
		if (!strcmp(v[i].t.dg, dg) && !v[i].info.suspended) {
			*member = v[i];
			v[i] = v[--n];
			break;
		}
	}
	all_free(v, n);
	return EX_OK;
}

static int do_create(const char *name, const char *device, const struct setup_opts *o,
		     const char *what)
{
	struct dev_state member;
	struct ioband_table t = { 0 };
	struct pg_state paths = { 0 };
	struct dm_target_line line;
	struct stat sb;
	uint64_t sectors;
	char devstr[32], *params = NULL;
	int rc;

	rc = block_device(device, &sb, &sectors, true);
	if (rc)
		return rc;
	snprintf(devstr, sizeof(devstr), "%u:%u", major(sb.st_rdev), minor(sb.st_rdev));
	memset(&member, 0, sizeof(member));
	rc = dry_run ? EX_OK : dg_settings(o->dg ? o->dg : name, &member);
	if (rc)
		return rc;
	rc = build_table(o, devstr, name, member.name[0] ? &member.t : NULL, &t, &paths, what);
	dev_state_free(&member);
	if (rc)
		return rc;
	if (dry_run) {
		note("%s: would create over %s (%s)", what, device, devstr);
		goto out;
	}
	params = table_format(&t);
	line = (struct dm_target_line){ 0, sectors, (char *)"ioband", params };
	if (verbose)
		fprintf(stderr, "ioband-setup: table: 0 %llu ioband %s\n",
			(unsigned long long)sectors, params);
	if (dmx_fault("create") || dmx_create(name, NULL, &line, 1, false, 0)) {
		const char *why = dmx_why();

		rc = errorf(EX_FAIL, "%s: the kernel refused the table (ioband %s): %s%s", what,
			    params, why, strstr(why, "unknown target type") ?
			    " (is the dm-ioband module loaded? modprobe dm-ioband)" : "");
		goto out;
	}
	if (o->carryover >= 0) {
		char msg[32];

		snprintf(msg, sizeof(msg), "carryover %lld", (long long)o->carryover);
		if (dmx_fault("create-carryover") || send_message(name, msg)) {
			char why[600];

			snprintf(why, sizeof(why), "%s", dmx_why());
			if (dmx_remove(name)) {
				rc = errorf(EX_HALFDONE, "%s: created, but setting its carryover failed (%s) and removing it again failed too (%s): remove %s by hand",
					    what, why, dmx_why(), name);
				goto out;
			}
			rc = errorf(EX_FAIL, "%s: setting the carryover failed (%s); removed %s again",
				    what, why, name);
			goto out;
		}
	}
	note("%s: created /dev/mapper/%s over %s (%s), device group %s, type %s, policy %s, %zu group%s attached",
	     what, name, device, devstr, t.dg, gtype_names[t.type], policy_names[t.policy],
	     t.ngroups, t.ngroups == 1 ? "" : "s");
	rc = state_replace_dev(name, &paths);
out:
	pg_free(&paths);
	free(params);
	table_free(&t);
	return rc;
}

static int cmd_create(int argc, char **argv)
{
	struct optstate st;
	struct setup_opts o;
	struct dmx_info info;
	const char *name;
	bool help;
	int rc, nset;

	opt_begin(&st, argc, argv);
	setup_opts_init(&o);
	rc = parse_setup_opts(&st, create_optv, &o, &help, NULL, &nset);
	if (help) {
		rc = help_exit();
		goto out;
	}
	if (rc)
		goto out;
	if (st.npos != 2) {
		rc = usage_error("expected NAME and DEVICE");
		goto out;
	}
	name = st.pos[0];
	if (!dm_name_valid(name)) {
		rc = errorf(EX_USAGE, "'%s' is not a valid device name (1 to %d characters, no '/' or blanks)",
			    name, DM_NAME_MAX);
		goto out;
	}
	if (dmx_info(name, &info)) {
		rc = errorf(EX_FAIL, "%s: %s", name, dmx_why());
		goto out;
	}
	if (info.exists) {
		rc = errorf(EX_CONFLICT, "a device named '%s' exists already", name);
		goto out;
	}
	rc = state_lock();
	if (!rc) {
		rc = do_create(name, st.pos[1], &o, name);
		state_unlock();
	}
out:
	setup_opts_free(&o);
	free(st.pos);
	return rc;
}

static int cmd_remove(int argc, char **argv)
{
	struct optstate st;
	struct dev_state d;
	char name[DM_NAME_MAX + 1];
	bool help;
	int rc;

	opt_begin(&st, argc, argv);
	rc = flag_opts(&st, NULL, NULL, &help);
	if (rc || help)
		return flag_opts_exit(&st, rc, help);
	if (st.npos != 1)
		return usage_error("expected one NAME");
	rc = resolve_name(st.pos[0], name, sizeof(name));
	if (rc)
		return rc;
	rc = state_lock();
	if (rc)
		return rc;
	rc = load_ioband(name, &d, false);
	if (rc) {
		state_unlock();
		return rc;
	}
	if (d.wraps) {
		rc = errorf(EX_CONFLICT, "'%s' is the wrapped logical volume %s: use 'ioband-setup unwrap %s'",
			    name, d.wraps, d.wraps);
		goto out;
	}
	if (dmx_fault("remove") || dmx_remove(name)) {
		if (dmx_errno == EBUSY) {
			struct dmx_info info;

			dmx_info(name, &info);
			rc = errorf(EX_CONFLICT, "'%s' is in use (open count %d): unmount it or stop what holds it open",
				    name, info.open_count);
		} else {
			rc = errorf(EX_FAIL, "removing '%s' failed: %s", name, dmx_why());
		}
		goto out;
	}
	note("removed %s", name);
	rc = state_replace_dev(name, &(struct pg_state){ 0 });
out:
	state_unlock();
	dev_state_free(&d);
	free(st.pos);
	return rc;
}

/* ---- list / show --------------------------------------------------------- */

static int dev_state_cmp(const void *a, const void *b)
{
	return strcmp(((const struct dev_state *)a)->name, ((const struct dev_state *)b)->name);
}

/* The ioband devices, by name (the kernel lists them in no useful order). */
static int cmd_list(int argc, char **argv)
{
	static const struct opt opts[] = { REPORT_OPTV, { NULL, 0, false, 0 } };
	struct optstate st;
	struct report_opts ro;
	struct report *r;
	struct dev_state *v;
	size_t n, i;
	bool help;
	int rc;

	opt_begin(&st, argc, argv);
	rc = report_opts(&st, opts, &ro, &help);
	if (rc || help)
		return flag_opts_exit(&st, rc, help);
	rc = st.npos ? usage_error("takes no arguments") : EX_OK;
	free(st.pos);
	if (rc)
		return rc;
	rc = report_open(list_cols, list_ncols, LIST_DEFAULT, &ro, &r);
	if (rc || !r)
		return rc;
	rc = all_ioband(&v, &n);
	if (rc) {
		report_free(r);
		return rc;
	}
	if (n)
		qsort(v, n, sizeof(*v), dev_state_cmp);
	for (i = 0; i < n; i++) {
		struct dev_state *d = &v[i];
		char *below = devstr_name(d->t.device);

		report_row(r);
		report_str(r, d->name);
		report_str(r, below);
		report_str(r, d->t.device);
		report_str(r, d->t.dg);
		report_str(r, gtype_names[d->t.type]);
		report_str(r, policy_names[d->t.policy]);
		report_u64(r, d->t.ngroups);
		report_str(r, d->wraps);
		report_sectors(r, d->len);
		report_u64(r, d->t.io_throttle);
		report_u64(r, d->t.io_limit);
		report_u64(r, d->t.token_base);
		report_i64(r, d->info.open_count);
		report_cell(r, d->info.suspended ? "yes" : "no",
			    d->info.suspended ? "true" : "false");
		free(below);
	}
	if (ro.json)
		report_print_json_doc(r, "devices", stdout);
	else
		report_print(r, stdout);
	report_free(r);
	all_free(v, n);
	return EX_OK;
}

/*
 * The cells show and top share (report.c's GROUP_CONF_COLS): a group's
 * settings, @c NULL for a group the table does not hold...
 */
static void report_group_settings(struct report *r, const struct group_conf *c, bool range)
{
	uint32_t min = c ? c->min_kbps : 0, max = c ? c->max_kbps : 0;
	char buf[32];

	if (range) {
		report_cell(r, "-", NULL);
		report_u64(r, min);
		report_u64(r, max);
		snprintf(buf, sizeof(buf), "%u:%u", min, max);
		report_str(r, buf);
	} else {
		report_u64(r, c ? c->weight : 0);
		report_cell(r, "-", NULL);
		report_cell(r, "-", NULL);
		report_cell(r, "-", NULL);
	}
}

/* ...and a new row with the group's id, name and settings. */
static void report_group_conf(struct report *r, int64_t id, const char *gname,
			      const struct group_conf *c, bool range)
{
	report_row(r);
	if (id == DEFAULT_GROUP)
		report_cell(r, "default", "-1");
	else
		report_i64(r, id);
	report_str(r, gname);
	report_group_settings(r, c, range);
}

/* The sum of the weights of every group of device group @dg. */
static uint64_t dg_weight_sum(const char *dg, const struct dev_state *self, char **members)
{
	struct dev_state *v;
	size_t n, i, j;
	uint64_t sum = 0;
	size_t len = 0;

	*members = NULL;
	if (all_ioband(&v, &n))
		v = NULL, n = 0;
	for (i = 0; i < n; i++) {
		const struct ioband_table *t = &v[i].t;

		if (strcmp(t->dg, dg))
			continue;
		if (!strcmp(v[i].name, self->name))
			t = &self->t;	/* the same reading as the rest of show */
		sum += t->def.weight;
		for (j = 0; j < t->ngroups; j++)
			sum += t->groups[j].weight;
		*members = xrealloc(*members, len + strlen(v[i].name) + 3);
		len += sprintf(*members + len, "%s%s", len ? ", " : "", v[i].name);
	}
	all_free(v, n);
	if (!sum) {	/* raced with a removal */
		sum = self->t.def.weight;
		for (j = 0; j < self->t.ngroups; j++)
			sum += self->t.groups[j].weight;
	}
	return sum;
}

struct diff_names {
	const char *dev;
	struct pg_state s;
};

/*
 * Groups in show, top and apply's messages: a cgroup by the path it was
 * given by (the state knows the paths of ids whose cgroups are gone),
 * else by the name it has now.
 */
static char *diff_name(enum gtype type, int64_t id, void *ctx)
{
	struct diff_names *dn = ctx;
	struct pg_entry *e = type == GT_CGROUP ? pg_find_id(&dn->s, dn->dev, id) : NULL;

	return e ? xstrdup(e->path) : group_display_name(type, id, true);
}

static const struct group_conf *group_conf_of(const struct ioband_table *t, int64_t id)
{
	return table_find(t, id);
}

/* Is @e a group of @d given by a path no cgroup has now (attached when one does)? */
static bool pg_waiting(const struct pg_entry *e, const struct dev_state *d)
{
	return !strcmp(e->dev, d->name) && !(e->id && table_find(&d->t, e->id));
}

/* The groups of show's JSON, and the "waiting" key's array. */
static void show_json_groups(const struct report *r, const struct dev_state *d,
			     const struct pg_state *ps)
{
	size_t i, nwait = 0;

	printf(",\"groups\":");
	report_print_json(r, stdout);
	printf(",\"waiting\":[");
	for (i = 0; i < ps->n; i++) {
		const struct pg_entry *e = &ps->e[i];

		if (!pg_waiting(e, d))
			continue;
		printf("%s{\"path\":", nwait++ ? "," : "");
		json_string(stdout, e->path);
		printf(",\"weight\":%u,\"min_kbps\":%u,\"max_kbps\":%u}", e->weight,
		       e->min_kbps, e->max_kbps);
	}
	printf("]}\n");
}

/* show's text rows of the waiting groups (pg_waiting()). */
static void show_waiting_rows(struct report *r, const struct dev_state *d,
			      const struct pg_state *ps)
{
	size_t i, j;

	for (i = 0; i < ps->n; i++) {
		const struct pg_entry *e = &ps->e[i];
		struct group_conf c = { .weight = e->weight, .min_kbps = e->min_kbps,
					.max_kbps = e->max_kbps };

		if (!pg_waiting(e, d))
			continue;
		report_row(r);
		report_cell(r, "waiting", NULL);
		report_str(r, e->path);
		report_group_settings(r, &c, d->t.policy == POL_RANGE_BW);
		report_cell(r, "-", NULL);	/* share */
		for (j = 0; j < 6; j++)		/* reads to write_sectors */
			report_cell(r, "", NULL);
		report_note(r, "(no cgroup yet)");
	}
}

static void show_json_head(const struct dev_state *d, const char *below, const char *members)
{
	char *m = xstrdup(members ? members : ""), *tok, *save = NULL;
	bool first = true;

	report_json_open(stdout);
	printf(",\"name\":");
	json_string(stdout, d->name);
	printf(",\"devt\":\"%u:%u\",\"sectors\":%llu,\"device\":", d->info.major,
	       d->info.minor, (unsigned long long)d->len);
	json_string(stdout, below);
	printf(",\"device_devt\":\"%s\",\"device_group\":", d->t.device);
	json_string(stdout, d->t.dg);
	printf(",\"device_group_members\":[");
	for (tok = strtok_r(m, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		printf("%s", first ? "" : ",");
		json_string(stdout, tok);
		first = false;
	}
	free(m);
	printf("],\"type\":\"%s\",\"policy\":\"%s\",\"io_throttle\":%u,\"io_limit\":%u,"
	       "\"token_base\":%u,\"suspended\":%s,\"open_count\":%d,\"wraps\":",
	       gtype_names[d->t.type], policy_names[d->t.policy], d->t.io_throttle,
	       d->t.io_limit, d->t.token_base, d->info.suspended ? "true" : "false",
	       d->info.open_count);
	if (d->wraps)
		json_string(stdout, d->wraps);
	else
		printf("null");
}

static void show_text_head(const struct dev_state *d, const char *below, const char *members)
{
	printf("name:          %s (%u:%u), %llu sectors (%.1f MiB)%s\n", d->name, d->info.major,
	       d->info.minor, (unsigned long long)d->len, d->len / 2048.0,
	       d->info.suspended ? ", SUSPENDED" : "");
	if (d->wraps)
		printf("wraps:         logical volume %s\n", d->wraps);
	printf("device:        %s (%s)\n", below, d->t.device);
	printf("device group:  %s (devices: %s)\n", d->t.dg, members ? members : d->name);
	printf("settings:      policy %s, io_throttle %u, io_limit %u, token_base %u\n",
	       policy_names[d->t.policy], d->t.io_throttle, d->t.io_limit, d->t.token_base);
	printf("group type:    %s\n\n", gtype_names[d->t.type]);
}

static int cmd_show(int argc, char **argv)
{
	static const struct opt opts[] = { REPORT_OPTV, { NULL, 0, false, 0 } };
	struct optstate st;
	struct report_opts ro;
	struct report *r;
	struct dev_state d;
	struct ioband_status s;
	struct diff_names dn = { 0 };
	char name[DM_NAME_MAX + 1], *below, *members;
	uint64_t wsum;
	size_t i;
	bool help, range, listed;
	int rc;

	opt_begin(&st, argc, argv);
	rc = report_opts(&st, opts, &ro, &help);
	if (rc || help)
		return flag_opts_exit(&st, rc, help);
	rc = report_check(group_cols, group_ncols, GROUP_DEFAULT_WEIGHT, &ro, &listed);
	if (rc || listed) {
		free(st.pos);
		return rc;
	}
	if (st.npos != 1) {
		free(st.pos);
		return usage_error("expected one NAME");
	}
	rc = resolve_name(st.pos[0], name, sizeof(name));
	free(st.pos);
	if (rc)
		return rc;
	rc = load_ioband(name, &d, false);
	if (rc)
		return rc;
	rc = load_status(name, &s);
	if (rc) {
		dev_state_free(&d);
		return rc;
	}
	range = d.t.policy == POL_RANGE_BW;
	rc = report_open(group_cols, group_ncols,
			 range ? GROUP_DEFAULT_RANGE : GROUP_DEFAULT_WEIGHT, &ro, &r);
	if (rc)
		goto out;
	below = devstr_name(d.t.device);
	wsum = dg_weight_sum(d.t.dg, &d, &members);
	dn.dev = d.name;
	state_load(&dn.s);
	for (i = 0; i < s.ngroups; i++) {
		const struct group_stats *g = &s.groups[i];
		const struct group_conf *c = group_conf_of(&d.t, g->id);
		char *gname = diff_name(d.t.type, g->id, &dn);
		double share = wsum ? (double)(c ? c->weight : 0) / wsum : 0;
		char text[16], json[16];

		report_group_conf(r, g->id, gname, c, range);
		if (range) {
			report_cell(r, "-", NULL);
		} else {
			snprintf(text, sizeof(text), "%.1f%%", 100 * share);
			snprintf(json, sizeof(json), "%.4f", share);
			report_cell(r, text, json);
		}
		report_u64(r, g->reads);
		report_u64(r, g->delayed_reads);
		report_sectors(r, g->read_sectors);
		report_u64(r, g->writes);
		report_u64(r, g->delayed_writes);
		report_sectors(r, g->write_sectors);
		free(gname);
	}
	if (ro.json) {
		show_json_head(&d, below, members);
		show_json_groups(r, &d, &dn.s);
	} else {
		show_waiting_rows(r, &d, &dn.s);
		if (!ro.noheadings)
			show_text_head(&d, below, members);
		report_print(r, stdout);
	}
	report_free(r);
	pg_free(&dn.s);
	free(members);
	free(below);
out:
	status_free(&s);
	dev_state_free(&d);
	return rc;
}

/* ---- set / attach / detach ----------------------------------------------- */

/*
 * The device, and its GROUP: its id, and for a cgroup given by path the
 * path ("/a/b", malloc'ed, else NULL), *gid being 0 when no cgroup has
 * that path now.  The state's lock is held on success.
 */
static int device_and_group(const char *namearg, const char *spec, struct dev_state *d,
			    int64_t *gid, char **path)
{
	char name[DM_NAME_MAX + 1];
	int rc;

	*path = NULL;
	rc = resolve_name(namearg, name, sizeof(name));
	if (rc)
		return rc;
	rc = state_lock();
	if (rc)
		return rc;
	rc = load_ioband(name, d, false);
	if (rc)
		goto fail;
	if (d->t.type == GT_CGROUP) {
		*path = group_path(spec);
		if (*path) {
			*gid = cgroup_id_of(*path);
			return EX_OK;
		}
	}
	rc = resolve_group(d->t.type, spec, gid);
	if (!rc)
		return EX_OK;
	dev_state_free(d);
fail:
	state_unlock();
	return rc;
}

/*
 * Record the value of a set or attach of cgroup group @gid (given by
 * @path, or by id; 0 when @path has no cgroup now) in the state: a group given by path gets an entry, one given by
 * the id of a path's cgroup has its entry changed.  @v and @is_range as
 * from set_value_parse, @has_value false for an attach with no weight.
 */
static int record_value(const char *dev, const char *path, int64_t gid, bool has_value,
			bool is_range, const struct group_conf *v)
{
	struct pg_state s;
	struct pg_entry *e;
	int rc;

	rc = state_load(&s);
	if (rc)
		return rc;
	e = path ? pg_add(&s, dev, path) : pg_find_id(&s, dev, gid);
	if (e) {
		if (is_range) {
			e->min_kbps = v->min_kbps;
			e->max_kbps = v->max_kbps;
		} else if (has_value) {
			e->weight = v->weight;
		}
		e->id = gid;
		rc = state_save(&s);
	}
	pg_free(&s);
	return rc;
}

static int cmd_set_attach(int argc, char **argv, bool attach)
{
	struct optstate st;
	struct dev_state d;
	struct group_conf v = { 0 };
	bool is_range = false, attached_now = false, has_value;
	char msg[128], err[512], *label = NULL, *path;
	int64_t gid;
	bool help;
	int rc;

	opt_begin(&st, argc, argv);
	rc = flag_opts(&st, NULL, NULL, &help);
	if (rc || help)
		return flag_opts_exit(&st, rc, help);
	if (attach ? st.npos < 2 || st.npos > 3 : st.npos != 3) {
		free(st.pos);
		return usage_error(attach ? "expected NAME GROUP [weight=W]" :
					    "expected NAME GROUP and weight=W or min=MIN,max=MAX");
	}
	has_value = st.npos == 3;
	if (has_value && set_value_parse(st.pos[2], &is_range, &v, err, sizeof(err))) {
		free(st.pos);
		return usage_error("%s", err);
	}
	if (attach && is_range) {
		free(st.pos);
		return usage_error("attach takes weight=W; set the range with 'set'");
	}
	if (attach && !has_value)
		v.weight = DEFAULT_WEIGHT;
	rc = device_and_group(st.pos[0], st.pos[1], &d, &gid, &path);
	if (rc) {
		free(st.pos);
		return rc;
	}
	if (path && !gid) {
		struct pg_state s;

		/* no cgroup has the path now: the watcher attaches it when one does */
		rc = state_load(&s);
		if (!rc && attach && pg_find(&s, d.name, path))
			rc = errorf(EX_CONFLICT, "%s is already configured on %s", path, d.name);
		pg_free(&s);
		if (!rc)
			rc = record_value(d.name, path, 0, true, is_range, &v);
		if (!rc)
			note_absent(d.name, path);
		goto out;
	}
	label = group_label(st.pos[1], gid);
	if (attach && gid == DEFAULT_GROUP) {
		rc = errorf(EX_USAGE, "the default group is always there; set its weight with 'set %s default weight=W'",
			    st.pos[0]);
		goto out;
	}
	if (gid != DEFAULT_GROUP && !table_find(&d.t, gid)) {
		snprintf(msg, sizeof(msg), "attach %lld", (long long)gid);
		if (dmx_fault("attach") || send_message(d.name, msg)) {
			rc = errorf(EX_FAIL, "attaching %s to %s: the kernel refused '%s': %s", label,
				    d.name, msg, dmx_why());
			goto out;
		}
		attached_now = true;
	} else if (attach) {
		rc = errorf(EX_CONFLICT, "%s is already attached to %s", label, d.name);
		goto out;
	}
	if (has_value) {
		if (is_range) {
			if (gid == DEFAULT_GROUP)
				snprintf(msg, sizeof(msg), "range-bw %u:%u", v.min_kbps, v.max_kbps);
			else
				snprintf(msg, sizeof(msg), "range-bw %lld:%u:%u", (long long)gid,
					 v.min_kbps, v.max_kbps);
		} else {
			snprintf(msg, sizeof(msg), "weight %lld:%u", (long long)gid, v.weight);
		}
		if (dmx_fault("set") || send_message(d.name, msg)) {
			char why[600];

			snprintf(why, sizeof(why), "%s", dmx_why());
			if (attached_now) {
				char undo[64];

				snprintf(undo, sizeof(undo), "detach %lld", (long long)gid);
				if (send_message(d.name, undo)) {
					rc = errorf(EX_HALFDONE, "%s: the kernel refused '%s': %s; %s was attached for it and detaching it again failed (%s): detach it by hand",
						    d.name, msg, why, label, dmx_why());
					goto out;
				}
				rc = errorf(EX_FAIL, "%s: the kernel refused '%s': %s (%s, attached for it, was detached again)",
					    d.name, msg, why, label);
				goto out;
			}
			rc = errorf(EX_FAIL, "%s: the kernel refused '%s': %s", d.name, msg, why);
			goto out;
		}
	}
	if (is_range)
		note("%s: %s%s, min %u KB/s, max %u KB/s%s", d.name, label,
		     attached_now ? " attached" : "", v.min_kbps, v.max_kbps,
		     d.t.policy == POL_RANGE_BW ? "" :
		     " (ranges act while the policy is range-bw)");
	else if (has_value)
		note("%s: %s%s, weight %u", d.name, label, attached_now ? " attached" : "",
		     v.weight);
	else
		note("%s: %s attached, weight %d", d.name, label, DEFAULT_WEIGHT);
	rc = gid == DEFAULT_GROUP || d.t.type != GT_CGROUP ? EX_OK :
	     record_value(d.name, path, gid, has_value || attach, is_range, &v);
out:
	if (d.wraps)
		lvm_record_update(d.name);
	state_unlock();
	free(path);
	free(label);
	dev_state_free(&d);
	free(st.pos);
	return rc;
}

static int cmd_set(int argc, char **argv)
{
	return cmd_set_attach(argc, argv, false);
}

static int cmd_attach(int argc, char **argv)
{
	return cmd_set_attach(argc, argv, true);
}

/*
 * Detach GROUP: its id, and for a group given by path (or by the id of a
 * path's cgroup) its entry in the state too, with the id it was last
 * attached under if that is another (a cgroup made again).
 */
static int cmd_detach(int argc, char **argv)
{
	struct optstate st;
	struct dev_state d;
	struct pg_state s = { 0 };
	struct pg_entry *e = NULL;
	char msg[64], *label = NULL, *path;
	int64_t gid, ids[2];
	size_t n = 0, i;
	bool help;
	int rc;

	opt_begin(&st, argc, argv);
	rc = flag_opts(&st, NULL, NULL, &help);
	if (rc || help)
		return flag_opts_exit(&st, rc, help);
	if (st.npos != 2) {
		free(st.pos);
		return usage_error("expected NAME GROUP");
	}
	rc = device_and_group(st.pos[0], st.pos[1], &d, &gid, &path);
	if (rc) {
		free(st.pos);
		return rc;
	}
	label = path && !gid ? xstrdup(path) : group_label(st.pos[1], gid);
	if (gid == DEFAULT_GROUP) {
		rc = errorf(EX_USAGE, "the default group cannot be detached");
		goto out;
	}
	rc = state_load(&s);
	if (rc)
		goto out;
	e = path ? pg_find(&s, d.name, path) :
	    d.t.type == GT_CGROUP ? pg_find_id(&s, d.name, gid) : NULL;
	if ((!path || gid) && table_find(&d.t, gid))
		ids[n++] = gid;
	if (e && e->id && e->id != gid && table_find(&d.t, e->id))
		ids[n++] = e->id;
	if (!n && !e) {
		rc = errorf(EX_CONFLICT, "%s is not attached to %s", label, d.name);
		goto out;
	}
	for (i = 0; i < n; i++) {
		snprintf(msg, sizeof(msg), "detach %lld", (long long)ids[i]);
		if (dmx_fault("detach") || send_message(d.name, msg)) {
			rc = errorf(EX_FAIL, "%s: the kernel refused '%s': %s", d.name, msg, dmx_why());
			goto out;
		}
	}
	if (e) {
		pg_drop(&s, e);
		rc = state_save(&s);
	}
	note("%s: %s detached", d.name, label);
out:
	if (d.wraps)
		lvm_record_update(d.name);
	state_unlock();
	pg_free(&s);
	free(path);
	free(label);
	dev_state_free(&d);
	free(st.pos);
	return rc;
}

/* ---- top ----------------------------------------------------------------- */

static volatile sig_atomic_t stop_top;

static void on_signal(int sig)
{
	(void)sig;
	stop_top = 1;
}

static double ts_sec(const struct timespec *t)
{
	return t->tv_sec + t->tv_nsec / 1e9;
}

static uint64_t delta(uint64_t now, uint64_t before)
{
	return now >= before ? now - before : now;	/* reset: counted from 0 */
}

/* A number and its JSON, with @prec decimals. */
static void report_num(struct report *r, double v, int prec)
{
	char buf[48];

	snprintf(buf, sizeof(buf), "%.*f", prec, v);
	report_cell(r, buf, buf);
}

/* One row of top: group @g's counts since @p (NULL: none before), over @dt seconds. */
static void top_row(struct report *r, const struct ioband_table *t, const struct group_stats *g,
		    const struct group_stats *p, double dt, uint64_t total, struct diff_names *dn)
{
	uint64_t rs = delta(g->read_sectors, p ? p->read_sectors : 0);
	uint64_t ws = delta(g->write_sectors, p ? p->write_sectors : 0);
	uint64_t rd = delta(g->reads, p ? p->reads : 0);
	uint64_t wr = delta(g->writes, p ? p->writes : 0);
	uint64_t dr = delta(g->delayed_reads, p ? p->delayed_reads : 0);
	uint64_t dw = delta(g->delayed_writes, p ? p->delayed_writes : 0);
	double share = total ? (double)(rs + ws) / total : 0;
	char *gname = diff_name(t->type, g->id, dn);
	char text[16], json[48];

	report_group_conf(r, g->id, gname, table_find(t, g->id), t->policy == POL_RANGE_BW);
	free(gname);
	snprintf(json, sizeof(json), "%.0f", rs * 512.0 / dt);
	report_size(r, rs * 512.0 / dt, json);
	snprintf(json, sizeof(json), "%.0f", ws * 512.0 / dt);
	report_size(r, ws * 512.0 / dt, json);
	report_num(r, rd / dt, 1);
	report_num(r, wr / dt, 1);
	report_num(r, (dr + dw) / dt, 1);
	report_num(r, dr / dt, 1);
	report_num(r, dw / dt, 1);
	report_u64(r, rd);
	report_u64(r, wr);
	report_sectors(r, rs);
	report_sectors(r, ws);
	report_u64(r, dr);
	report_u64(r, dw);
	snprintf(text, sizeof(text), "%.1f%%", 100 * share);
	snprintf(json, sizeof(json), "%.4f", share);
	report_cell(r, text, json);
}

static int top_report(const char *name, const struct ioband_table *t,
		      const struct ioband_status *prev, const struct ioband_status *cur,
		      double dt, const struct report_opts *ro, bool tty, struct diff_names *dn)
{
	uint64_t total = 0;
	size_t i;
	struct timespec wall;
	struct report *r;
	int rc;

	rc = report_open(top_cols, top_ncols,
			 t->policy == POL_RANGE_BW ? TOP_DEFAULT_RANGE : TOP_DEFAULT_WEIGHT, ro, &r);
	if (rc)
		return rc;
	clock_gettime(CLOCK_REALTIME, &wall);
	for (i = 0; i < cur->ngroups; i++) {
		const struct group_stats *g = &cur->groups[i], *p = status_find(prev, g->id);

		total += delta(g->read_sectors, p ? p->read_sectors : 0) +
			 delta(g->write_sectors, p ? p->write_sectors : 0);
	}
	names_refresh();
	for (i = 0; i < cur->ngroups; i++)
		top_row(r, t, &cur->groups[i], status_find(prev, cur->groups[i].id), dt, total, dn);
	if (ro->json) {
		report_json_open(stdout);
		printf(",\"name\":");
		json_string(stdout, name);
		printf(",\"time\":%.3f,\"interval\":%.3f,\"device_group\":", ts_sec(&wall), dt);
		json_string(stdout, t->dg);
		printf(",\"groups\":");
		report_print_json(r, stdout);
		printf("}\n");
	} else {
		char when[32];
		struct tm tm;

		localtime_r(&wall.tv_sec, &tm);
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
		if (tty)
			printf("\033[H\033[2J");
		if (!ro->noheadings)
			printf("%s  device group %s  type %s  policy %s  interval %.1fs  %s\n", name,
			       t->dg, gtype_names[t->type], policy_names[t->policy], dt, when);
		report_print(r, stdout);
		if (!tty)
			putchar('\n');
	}
	report_free(r);
	fflush(stdout);
	return EX_OK;
}

static int cmd_top(int argc, char **argv)
{
	static const struct opt opts[] = {
		REPORT_OPTV, { "count", 'c', true, O_COUNT },
		{ "interval", 'i', true, O_INTERVAL }, { NULL, 0, false, 0 },
	};
	struct report_opts ro;
	struct optstate st;
	struct dev_state d;
	struct ioband_status prev = { 0 }, cur = { 0 };
	struct diff_names dn = { 0 };
	struct timespec tprev, tnow, next;
	char name[DM_NAME_MAX + 1], *end;
	double interval = 1.0;
	uint64_t count = 0, done = 0;
	bool tty, listed;
	int id, rc;

	opt_begin(&st, argc, argv);
	report_opts_init(&ro);
	while ((id = next_opt(&st, opts)) > 0) {
		rc = report_opt(&ro, id, st.arg);
		if (rc) {
			if (rc > 0)
				continue;
			id = -1;
			break;
		}
		switch (id) {
		case O_HELP:
			free(st.pos);
			return help_exit();
		case O_COUNT:
			if (parse_u64(st.arg, UINT32_MAX, &count) || !count) {
				free(st.pos);
				return usage_error("--count must be a number from 1, not '%s'", st.arg);
			}
			break;
		case O_INTERVAL:
			errno = 0;
			interval = strtod(st.arg, &end);
			if (errno || end == st.arg || *end || !(interval >= 0.1 && interval <= 3600)) {
				free(st.pos);
				return usage_error("--interval must be 0.1 to 3600 seconds, not '%s'",
						   st.arg);
			}
			break;
		}
	}
	rc = id < 0 ? EX_USAGE : report_check(top_cols, top_ncols, TOP_DEFAULT_WEIGHT, &ro, &listed);
	if (rc || listed || st.npos != 1) {
		free(st.pos);
		return rc || listed ? rc : usage_error("expected one NAME");
	}
	rc = resolve_name(st.pos[0], name, sizeof(name));
	free(st.pos);
	if (rc)
		return rc;
	rc = load_ioband(name, &d, false);
	if (rc)
		return rc;
	rc = load_status(name, &prev);
	if (rc)
		goto out;
	tty = !ro.json && isatty(STDOUT_FILENO);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	clock_gettime(CLOCK_MONOTONIC, &tprev);
	next = tprev;
	while (!stop_top && (!count || done < count)) {
		struct timespec now;
		double dt;

		/*
		 * A sample that came late (a loaded machine) moves the next
		 * one: at the old time it would come at once, and report
		 * rates over a few milliseconds.
		 */
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (ts_sec(&now) - ts_sec(&next) > interval)
			next = now;
		next.tv_sec += (time_t)interval;
		next.tv_nsec += (long)((interval - floor(interval)) * 1e9);
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		while (!stop_top && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
		if (stop_top)
			break;
		dev_state_free(&d);
		rc = load_ioband(name, &d, false);
		if (rc)
			goto out;
		rc = load_status(name, &cur);
		if (rc)
			goto out;
		clock_gettime(CLOCK_MONOTONIC, &tnow);
		dt = ts_sec(&tnow) - ts_sec(&tprev);
		if (dt <= 0)
			dt = interval;
		dn.dev = name;
		state_load(&dn.s);
		rc = top_report(name, &d.t, &prev, &cur, dt, &ro, tty, &dn);
		pg_free(&dn.s);
		if (rc)
			goto out;
		status_free(&prev);
		prev = cur;
		memset(&cur, 0, sizeof(cur));
		tprev = tnow;
		done++;
	}
	rc = EX_OK;
out:
	status_free(&prev);
	status_free(&cur);
	dev_state_free(&d);
	return rc;
}

/* ---- table swaps (wrap, unwrap, apply) ----------------------------------- */

int swap_table(const char *name, const struct dm_target_line *lines, size_t n, bool ro,
		      const char *step, char *why, size_t whylen)
{
	char s[64];

	snprintf(s, sizeof(s), "%s-load", step);
	if (dmx_fault(s) || dmx_reload(name, lines, n, ro)) {
		snprintf(why, whylen, "loading the new table of %s failed: %s", name, dmx_why());
		dmx_clear(name);
		return EX_FAIL;
	}
	snprintf(s, sizeof(s), "%s-suspend", step);
	if (dmx_fault(s) || dmx_suspend(name)) {
		snprintf(why, whylen, "suspending %s failed: %s", name, dmx_why());
		dmx_clear(name);
		/* a suspend that half happened: make sure it runs again */
		dmx_resume(name);
		return EX_FAIL;
	}
	snprintf(s, sizeof(s), "%s-resume", step);
	if (dmx_fault(s) || dmx_resume(name)) {
		char first[600];

		snprintf(first, sizeof(first), "%s", dmx_why());
		dmx_clear(name);
		if (dmx_resume(name)) {
			snprintf(why, whylen, "resuming %s with its new table failed (%s), and resuming it with the old one failed too (%s): %s is left SUSPENDED",
				 name, first, dmx_why(), name);
			return EX_HALFDONE;
		}
		snprintf(why, whylen, "resuming %s with its new table failed: %s; it runs on with its old table",
			 name, first);
		return EX_FAIL;
	}
	return EX_OK;
}

/* ---- wrap, unwrap (lvm.c) ------------------------------------------------ */

static int cmd_wrap(int argc, char **argv)
{
	struct optstate st;
	struct setup_opts o;
	struct lv_ref lv;
	bool help, repair = false;
	int rc, nset;

	opt_begin(&st, argc, argv);
	setup_opts_init(&o);
	rc = parse_setup_opts(&st, wrap_optv, &o, &help, &repair, &nset);
	if (help)
		rc = help_exit();
	else if (!rc && st.npos != 1)
		rc = usage_error("expected one VG/LV");
	else if (!rc && repair && nset)
		rc = usage_error("--repair takes no settings: it wraps the volume again as it was");
	else if (!rc && !(rc = state_lock())) {
		if (repair)
			rc = lvm_repair(st.pos[0]);
		else if (!(rc = lv_lookup(st.pos[0], &lv)))
			rc = lvm_wrap(&lv, &o);
		state_unlock();
	}
	setup_opts_free(&o);
	free(st.pos);
	return rc;
}

static int cmd_unwrap(int argc, char **argv)
{
	struct optstate st;
	bool help;
	int rc;

	opt_begin(&st, argc, argv);
	rc = flag_opts(&st, NULL, NULL, &help);
	if (rc || help)
		return flag_opts_exit(&st, rc, help);
	if (st.npos != 1)
		rc = usage_error("expected one VG/LV");
	else if (!(rc = state_lock())) {
		rc = lvm_unwrap(st.pos[0]);
		state_unlock();
	}
	free(st.pos);
	return rc;
}

/* ---- apply --------------------------------------------------------------- */

/* Bring an existing ioband device @d in line with @want. */
static int apply_existing(const char *label, struct dev_state *d, const struct tab_entry *e,
			  const char *devstr, uint64_t len)
{
	struct ioband_table want = { 0 };
	struct pg_state paths = { 0 };
	struct dm_target_line line;
	char *diff = NULL, *params = NULL, why[1024];
	int rc;

	if (strcmp(d->t.device, devstr)) {
		char *a = devstr_name(d->t.device);

		rc = errorf(EX_CONFLICT, "%s: %s exists over %s (%s), the file says %s (%s): remove it first to move it",
			    label, d->name, a, d->t.device, e->device, devstr);
		free(a);
		return rc;
	}
	rc = build_table(&e->opts, devstr, e->wrap ? d->name : e->name, &d->t, &want, &paths,
			 label);
	if (rc)
		return rc;
	{
		struct diff_names dn = { .dev = d->name };

		state_load(&dn.s);
		diff = table_diff(&d->t, &want, diff_name, &dn);
		pg_free(&dn.s);
	}
	if (d->len != len) {
		char *more = xasprintf("%s%ssize %llu -> %llu sectors", diff ? diff : "",
				       diff ? ", " : "", (unsigned long long)d->len,
				       (unsigned long long)len);

		free(diff);
		diff = more;
	}
	if (!diff) {
		note("%s: up to date", label);
		rc = EX_OK;
		goto carryover;
	}
	if (dry_run) {
		note("%s: would reload (%s)", label, diff);
		rc = EX_OK;
		goto out;
	}
	params = table_format(&want);
	line = (struct dm_target_line){ 0, len, (char *)"ioband", params };
	rc = swap_table(d->name, &line, 1, d->info.read_only, "apply", why, sizeof(why));
	if (rc) {
		errorf(rc, "%s: %s", label, why);
		goto out;
	}
	note("%s: reloaded (%s)", label, diff);
carryover:
	if (e->opts.carryover >= 0 && !dry_run) {
		char msg[32];

		snprintf(msg, sizeof(msg), "carryover %lld", (long long)e->opts.carryover);
		if (send_message(d->name, msg))
			rc = errorf(EX_FAIL, "%s: setting the carryover failed: %s", label, dmx_why());
	}
	if (!dry_run) {
		int r = state_replace_dev(d->name, &paths);

		rc = rc ? rc : r;
	}
out:
	if (e->wrap && !dry_run)
		lvm_record_update(d->name);
	pg_free(&paths);
	free(params);
	free(diff);
	table_free(&want);
	return rc;
}

/* Is @path an ioband device (or a device of a wrapped volume)? */
static bool is_ioband_node(const char *path)
{
	struct stat st;
	struct dmx_info info;
	struct dm_target_line *l;
	size_t n, i;
	bool r = false;

	if (stat(path, &st) || !S_ISBLK(st.st_mode) ||
	    dmx_info_devt(major(st.st_rdev), minor(st.st_rdev), &info) || !info.exists)
		return false;
	if (strstr(info.name, ORIG_SUFFIX))
		return true;
	if (dmx_table(info.name, false, &l, &n))
		return false;
	for (i = 0; i < n; i++)
		r = r || !strcmp(l[i].type, "ioband");
	dmx_lines_free(l, n);
	return r;
}

/*
 * The device with tag @tag (UUID=...), NULL when none.  An ioband device
 * shows the filesystem of the device below it, and so its tags: ioband
 * devices are passed over.
 */
static char *device_by_tag(const char *tag)
{
	size_t n, i;
	char **v = devices_by_tag(tag, &n), *r = NULL;

	for (i = 0; i < n; i++) {
		if (!r && !is_ioband_node(v[i]))
			r = v[i];
		else
			free(v[i]);
	}
	free(v);
	return r;
}

/*
 * The device node @dev (a path, or a tag such as UUID=...) names, waiting
 * up to @seconds for it to appear; malloc'ed, NULL when it does not.
 */
static char *wait_for(const char *dev, double seconds)
{
	struct timespec ts = { 0, 100 * 1000 * 1000 };
	double waited = 0;

	for (;;) {
		char *path = tab_device_is_tag(dev) ? device_by_tag(dev) : xstrdup(dev);

		if (path && !access(path, F_OK))
			return path;
		free(path);
		if (waited >= seconds)
			return NULL;
		nanosleep(&ts, NULL);
		waited += 0.1;
	}
}

/* Is device-mapper there (its control node opens)? */
static bool dm_available(void)
{
	int fd = open("/dev/mapper/control", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static int apply_entry(const struct tab_entry *e, double wait_s)
{
	struct dev_state d;
	struct dmx_info info;
	const char *label = e->name;
	struct stat sb;
	uint64_t sectors;
	char devstr[32], *dev;
	int rc;

	if (e->wrap) {
		struct lv_ref lv;
		struct dm_target_line *ol;
		size_t on;

		if (wait_s > 0) {
			char *p = xasprintf("/dev/%s", e->name);

			free(wait_for(p, wait_s));
			free(p);
		}
		if (dry_run && !dm_available()) {
			struct ioband_table t = { 0 };
			struct pg_state paths;
			char dm[DM_NAME_MAX + 1], err[256];

			/* checked by tab_parse_line */
			lv_dm_name(e->name, dm, sizeof(dm), err, sizeof(err));
			rc = build_table(&e->opts, "0:0", dm, NULL, &t, &paths, label);
			pg_free(&paths);
			table_free(&t);
			if (!rc)
				note("%s: would wrap, unless it is wrapped already (device-mapper is not available to tell)",
				     label);
			return rc;
		}
		rc = lv_lookup(e->name, &lv);
		if (rc == EX_NOTFOUND && e->nofail) {
			note("%s: no such logical volume: passed over (nofail)", label);
			return EX_OK;
		}
		if (rc)
			return rc;
		rc = load_ioband(lv.dm, &d, true);
		if (rc == EX_CONFLICT) {	/* not wrapped yet */
			struct ioband_table t = { 0 };

			if (dry_run) {
				struct pg_state paths;

				rc = build_table(&e->opts, "0:0", lv.dm, NULL, &t, &paths, label);
				pg_free(&paths);
				table_free(&t);
				if (!rc)
					note("%s: would wrap", label);
				return rc;
			}
			return lvm_wrap(&lv, &e->opts);
		}
		if (rc)
			return errorf(rc, "%s: cannot read its table", label);
		dev_state_free(&d);
		rc = lvm_wrapped(&lv, &d, &ol, &on);
		if (rc)
			return rc;
		rc = apply_existing(label, &d, e, d.t.device, lines_len(ol, on));
		dmx_lines_free(ol, on);
		dev_state_free(&d);
		return rc;
	}

	dev = wait_for(e->device, wait_s);
	if (!dev) {
		if (e->nofail) {
			note("%s: %s does not exist: passed over (nofail)", label, e->device);
			return EX_OK;
		}
		return errorf(EX_NOTFOUND, "%s: %s", e->device, tab_device_is_tag(e->device) ?
			      "no device has it" : strerror(ENOENT));
	}
	if (dmx_info(e->name, &info)) {
		if (!dry_run || dm_available()) {
			rc = errorf(EX_FAIL, "%s: %s", label, dmx_why());
			goto out;
		}
		/* a dry run where device-mapper is not: as if there were no devices */
		info.exists = false;
	}
	if (!info.exists) {
		rc = do_create(e->name, dev, &e->opts, label);
		goto out;
	}
	rc = load_ioband(e->name, &d, false);
	if (rc)
		goto out;
	rc = block_device(dev, &sb, &sectors, false);
	if (!rc) {
		snprintf(devstr, sizeof(devstr), "%u:%u", major(sb.st_rdev), minor(sb.st_rdev));
		rc = apply_existing(label, &d, e, devstr, sectors);
	}
	dev_state_free(&d);
out:
	free(dev);
	return rc;
}

static int cmd_apply(int argc, char **argv)
{
	static const struct opt opts[] = {
		{ "dry-run", 'n', false, O_DRY_RUN }, { "wait", 'W', true, O_WAIT },
		{ NULL, 0, false, 0 },
	};
	struct optstate st;
	struct tab_entry *ents = NULL;
	size_t nents = 0, i, j;
	const char *file = "/etc/iobandtab";
	char *line = NULL, err[512];
	size_t cap = 0;
	double wait_s = 0;
	int id, rc = EX_OK, lineno = 0;
	FILE *f;

	opt_begin(&st, argc, argv);
	while ((id = next_opt(&st, opts)) > 0) {
		char *end;

		switch (id) {
		case O_HELP:
			free(st.pos);
			return help_exit();
		case O_DRY_RUN:
			dry_run = true;
			break;
		case O_WAIT:
			errno = 0;
			wait_s = strtod(st.arg, &end);
			if (errno || end == st.arg || *end || !(wait_s >= 0 && wait_s <= 3600)) {
				free(st.pos);
				return usage_error("--wait must be 0 to 3600 seconds, not '%s'", st.arg);
			}
			break;
		}
	}
	if (id < 0 || st.npos > 1) {
		free(st.pos);
		return id < 0 ? EX_USAGE : usage_error("expected at most one FILE");
	}
	if (st.npos)
		file = st.pos[0];
	free(st.pos);
	f = strcmp(file, "-") ? fopen(file, "r") : stdin;
	if (!f)
		return errorf(errno == ENOENT ? EX_NOTFOUND : EX_FAIL, "%s: %s", file, strerror(errno));
	/* The whole file first: a syntax error anywhere changes nothing. */
	while (getline(&line, &cap, f) >= 0) {
		struct tab_entry e;
		int r;

		r = tab_parse_line(line, ++lineno, &e, err, sizeof(err));
		if (r < 0) {
			rc = errorf(EX_USAGE, "%s: %s", file, err);
			continue;
		}
		if (!r)
			continue;
		for (j = 0; j < nents; j++) {
			if (!strcmp(ents[j].name, e.name)) {
				rc = errorf(EX_USAGE, "%s: line %d: %s is named on line %d already",
					    file, lineno, e.name, ents[j].lineno);
				break;
			}
		}
		ents = xrealloc(ents, (nents + 1) * sizeof(*ents));
		ents[nents++] = e;
	}
	free(line);
	if (ferror(f))
		rc = errorf(EX_FAIL, "%s: %s", file, strerror(errno));
	if (f != stdin)
		fclose(f);
	if (rc) {
		if (rc == EX_USAGE)
			errorf(EX_USAGE, "%s: nothing applied", file);
		goto out;
	}
	for (i = 0; i < nents; i++) {
		int r;

		snprintf(err_ctx, sizeof(err_ctx), "%s:%d", file, ents[i].lineno);
		r = dry_run ? EX_OK : state_lock();
		if (!r) {
			r = apply_entry(&ents[i], wait_s);
			if (!dry_run)
				state_unlock();
		}
		err_ctx[0] = '\0';

		if (r == EX_HALFDONE || (r && !rc))
			rc = r;
	}
out:
	for (i = 0; i < nents; i++)
		tab_entry_free(&ents[i]);
	free(ents);
	return rc;
}

/* ---- main ---------------------------------------------------------------- */

static int cmd_help(int argc, char **argv)
{
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		return help_exit();
	if (argc < 2) {
		usage_all(stdout);
		return EX_OK;
	}
	if (cmd_help_print(argv[1], stdout)) {
		cmd_name = "help";
		return usage_error("no command '%s'", argv[1]);
	}
	return EX_OK;
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} cmds[] = {
	{ "create", cmd_create }, { "remove", cmd_remove }, { "list", cmd_list },
	{ "show", cmd_show }, { "set", cmd_set }, { "attach", cmd_attach },
	{ "detach", cmd_detach }, { "top", cmd_top }, { "wrap", cmd_wrap },
	{ "unwrap", cmd_unwrap }, { "apply", cmd_apply }, { "save", cmd_save },
	{ "watch", cmd_watch },
	{ "help", cmd_help },
};

int main(int argc, char **argv)
{
	size_t i;
	int rc;

	while (argc > 1 && argv[1][0] == '-') {
		if (!strcmp(argv[1], "--version")) {
			printf("ioband-setup %s\n", VERSION);
			return EX_OK;
		}
		if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
			usage_all(stdout);
			return EX_OK;
		}
		if (!strcmp(argv[1], "-v") || !strcmp(argv[1], "--verbose"))
			verbose++;
		else if (!strcmp(argv[1], "-q") || !strcmp(argv[1], "--quiet"))
			quiet = 1;
		else {
			fprintf(stderr, "ioband-setup: unknown option '%s'\n", argv[1]);
			usage_all(stderr);
			return EX_USAGE;
		}
		argc--;
		argv++;
	}
	if (argc < 2) {
		usage_all(stderr);
		return EX_USAGE;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (!strcmp(argv[1], cmds[i].name)) {
			cmd_name = cmds[i].name;
			dmx_init(verbose);
			rc = cmds[i].fn(argc - 1, argv + 1);
			dmx_exit();
			return rc;
		}
	}
	fprintf(stderr, "ioband-setup: unknown command '%s' (ioband-setup --help lists them)\n",
		argv[1]);
	return EX_USAGE;
}

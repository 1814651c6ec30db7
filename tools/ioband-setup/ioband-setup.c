// SPDX-License-Identifier: GPL-2.0
/*
 * ioband-setup: the administrator's command line for dm-ioband.
 *
 *   ioband-setup [-v] [-q] COMMAND [ARGS]     (ioband-setup help COMMAND)
 *
 * Everything goes through libdevmapper's dm_task API (dm.c); nothing runs
 * dmsetup.  This file holds main, the help, the option parser and what the
 * command files share (messages, device state, group names); each family
 * of commands has its own file: devices.c (create, remove), groups.c (set,
 * attach, detach), show.c (list, show, top), apply.c (apply), save.c,
 * lvm.c (wrap, unwrap), watch.c.  Commands that change more than one thing undo what they did
 * when a later step fails, and say so; exit status 5 means even that
 * failed, and the message names what is left.  See ioband-setup.8.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cmd.h"
#include "names.h"
#include "report.h"

#define VERSION "1.0"

int verbose, quiet;
static const char *cmd_name = "";
char err_ctx[512];

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
	"      --carryover N       idle credit kept, in windows, 0 to 100 (2)\n" \
	"      --cost-model rbps=N,rseqiops=N,rrandiops=N,wbps=N,wseqiops=N,wrandiops=N\n" \
	"                          weight-time's costs, as iocost's io.cost.model\n"

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
	{ "set", "set NAME GROUP weight=W | set NAME GROUP min=MIN,max=MAX |\n"
	  "       set NAME GROUP [weight=W,]KEY=VALUE[,KEY=VALUE...]",
	  "Set a group's weight (1 to 10000), or its bandwidth range in KB/s (a k, m\n"
	  "or g suffix multiplies by 1, 1024, 1048576; max 0 or left out: no upper\n"
	  "limit) for the range-bw policy, or its limits, io.max's kinds: bps, rbps,\n"
	  "wbps (bytes a second), iops, riops, wiops (I/Os a second), each 1 to 2^50\n"
	  "with systemd's suffixes K, M, G, T (powers of 1000) or max (none), and\n"
	  "burst (ms, 0 to 60000); only the keys given change.  A group not attached\n"
	  "yet is attached first, and detached again if the kernel refuses the value.\n\n"
	  GROUP_HELP },
	{ "attach", "attach NAME GROUP [weight=W]",
	  "Attach GROUP to the ioband device NAME (weight 100 unless given).\n\n" GROUP_HELP },
	{ "detach", "detach NAME GROUP",
	  "Detach GROUP from NAME; its I/O goes to the default group from then on.\n\n"
	  GROUP_HELP },
	{ "top", "top NAME [--interval SECONDS] [--count N] [REPORT OPTIONS]",
	  "A live view of the groups of NAME: read and write throughput, I/Os per\n"
	  "second, bios delayed (held by ioband) per second, and each group's share\n"
	  "of the sectors moved, from successive status samples; and the kernel's\n"
	  "figures of the time bios wait in ioband and take at the device below.\n\n"
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
	  "Options (the device group defaults to the volume group's name, so that\n"
	  "the wrapped volumes of a volume group share its disks):\n"
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

static const struct opt help_opt = { "help", 'h', false, O_HELP };

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
int next_opt(struct optstate *st, const struct opt *opts)
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

void opt_begin(struct optstate *st, int argc, char **argv)
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
int flag_opts(struct optstate *st, const struct opt *opts, bool *flag,
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
int flag_opts_exit(struct optstate *st, int rc, bool help)
{
	free(st->pos);
	return help ? help_exit() : rc;
}

/*
 * Option @id (its value @arg) into @ro when it is a report option: 1 when
 * it was one, 0 when not, -1 after a usage error.
 */
int report_opt(struct report_opts *ro, int id, const char *arg)
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
int report_opts(struct optstate *st, const struct opt *opts, struct report_opts *ro,
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
int report_open(const struct report_col *cols, size_t ncols, const char *defaults,
		       const struct report_opts *ro, struct report **r)
{
	char err[256];
	int rc = report_new(cmd_name, cols, ncols, defaults, ro, stdout, r, err, sizeof(err));

	if (rc < 0)
		return usage_error("%s", err);
	return EX_OK;
}

/* Check the options of @ro against @cols before any work: as report_open(). */
int report_check(const struct report_col *cols, size_t ncols, const char *defaults,
			const struct report_opts *ro, bool *listed)
{
	struct report *r;
	int rc = report_open(cols, ncols, defaults, ro, &r);

	*listed = !rc && !r;
	report_free(r);
	return rc;
}

/*
 * Parse the options of create and wrap (from @opts) into @o; *nset counts
 * the settings given, and O_REPAIR sets *repair.  EX_OK or an exit code.
 */
int parse_setup_opts(struct optstate *st, const struct opt *opts, struct setup_opts *o,
			    bool *help, bool *repair, int *nset)
{
	static const char *const keys[] = {
		[O_DG] = "device-group", [O_TYPE] = "type", [O_POLICY] = "policy",
		[O_WEIGHT] = "weight", [O_GROUP] = "group", [O_IO_THROTTLE] = "io-throttle",
		[O_IO_LIMIT] = "io-limit", [O_TOKEN_BASE] = "token-base",
		[O_CARRYOVER] = "carryover", [O_COST_MODEL] = "cost-model",
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
int resolve_name(const char *arg, char *out, size_t outlen)
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

int load_status(const char *name, struct ioband_status *s)
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
int resolve_group(enum gtype type, const char *spec, int64_t *id)
{
	struct resolver r;
	char err[512];
	int rc;

	sys_resolver(&r);
	if (gtype_cgroup(type) && !r.cgroup_root && strcmp(spec, "default") &&
	    strcmp(spec, "-1") && strspn(spec, "0123456789") != strlen(spec))
		return errorf(EX_NOTFOUND, "group '%s': cgroup2 is not mounted", spec);
	rc = group_spec_resolve(type, spec, &r, id, err, sizeof(err));
	if (rc)
		return errorf(rc, "%s", err);
	return EX_OK;
}

/* "web (id 1234)" for messages. */
char *group_label(const char *spec, int64_t id)
{
	if (id == DEFAULT_GROUP)
		return xstrdup("default group");
	if (!strcmp(spec, "") || strspn(spec, "0123456789") == strlen(spec))
		return xasprintf("%lld", (long long)id);
	return xasprintf("%s (id %lld)", spec, (long long)id);
}

int block_device(const char *path, struct stat *st, uint64_t *sectors, bool excl)
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

/* See cmd.h; a systemd unit names its cgroup (web.service). */
char *group_path(const char *spec)
{
	char *p = cgroup_of_unit(spec);

	return p ? p : cgroup_spec_path(spec, cg_root_or_default());
}

/* The note for a cgroup group given by a path that no cgroup has yet. */
void note_absent(const char *what, const char *path)
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
		gpath[i] = gtype_cgroup(type) ?
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
		memcpy(e->limit, g.limit, sizeof(e->limit));
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
	return dmx_message(name, msg, NULL);
}

/* ---- group names ----*/

/*
 * Groups in show, top and apply's messages: a cgroup by the path it was
 * given by (the state knows the paths of ids whose cgroups are gone),
 * else by the name it has now.
 */
char *diff_name(enum gtype type, int64_t id, void *ctx)
{
	struct diff_names *dn = ctx;
	struct pg_entry *e = gtype_cgroup(type) ? pg_find_id(&dn->s, dn->dev, id) : NULL;

	return e ? xstrdup(e->path) : group_display_name(type, id, true);
}

/* ---- create / remove ----------------------------------------------------- */

bool dry_run;

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

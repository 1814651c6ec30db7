// SPDX-License-Identifier: GPL-2.0
/* ioband-setup: apply, which makes the devices match an iobandtab. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "cmd.h"
#include "names.h"

/* ---- apply --------------------------------------------------------------- */

/* Bring an existing ioband device @d in line with @want. */
static int apply_existing(const char *label, struct dev_state *d, const struct tab_entry *e,
			  const char *devstr, uint64_t len)
{
	struct ioband_table want = { 0 };
	struct pg_state paths = { 0 };
	struct dm_target_line line;
	char *diff = NULL, *params = NULL, why[1024], dg[DM_NAME_MAX + 1];
	int rc;

	if (strcmp(d->t.device, devstr)) {
		char *a = devstr_name(d->t.device);

		rc = errorf(EX_CONFLICT, "%s: %s exists over %s (%s), the file says %s (%s): remove it first to move it",
			    label, d->name, a, d->t.device, e->device, devstr);
		free(a);
		return rc;
	}
	if (e->wrap)
		lv_default_dg(e->name, d->name, dg, sizeof(dg));
	rc = build_table(&e->opts, devstr, e->wrap ? dg : e->name, &d->t, &want, &paths,
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
			char dm[DM_NAME_MAX + 1], dg[DM_NAME_MAX + 1], err[256];

			/* checked by tab_parse_line */
			lv_dm_name(e->name, dm, sizeof(dm), err, sizeof(err));
			lv_default_dg(e->name, dm, dg, sizeof(dg));
			rc = build_table(&e->opts, "0:0", dg, NULL, &t, &paths, label);
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
				char dg[DM_NAME_MAX + 1];

				lv_default_dg(lv.vg_lv, lv.dm, dg, sizeof(dg));
				rc = build_table(&e->opts, "0:0", dg, NULL, &t, &paths, label);
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

int cmd_apply(int argc, char **argv)
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


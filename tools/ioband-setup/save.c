// SPDX-License-Identifier: GPL-2.0
/*
 * ioband-setup save: the live configuration written back to iobandtab.
 *
 * Each line of the file whose device is live and differs from it (what
 * apply would change) gets options written from the live table and the
 * state of the groups given by path; the other lines, comments and blank
 * lines stay as they are, byte for byte; live ioband devices the file
 * does not name are added at its end.  apply of the file saved then finds
 * nothing to change.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "names.h"

struct opt_writer {
	FILE *f;
	bool any;
};

__attribute__((format(printf, 2, 3)))
static void opt_add(struct opt_writer *w, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (w->any)
		fputc(',', w->f);
	tab_put_field(w->f, buf);
	w->any = true;
}

/* group=SPEC=VALUE, the limits after a '/' each (iobandtab's ',' is taken) */
static void opt_group(struct opt_writer *w, const char *spec, enum policy pol,
		      uint32_t weight, uint32_t min, uint32_t max, const uint64_t *limit)
{
	char lim[LIMITS_TEXT_MAX];

	limits_format(limit, limits_set(limit), '/', lim, sizeof(lim));
	if (pol == POL_RANGE_BW)
		opt_add(w, "group=%s=%u:%u%s%s", spec, min, max, *lim ? "/" : "", lim);
	else
		opt_add(w, "group=%s=%u%s%s", spec, weight, *lim ? "/" : "", lim);
}

/*
 * The options of the live device @d (@e its line, or NULL), its groups
 * named by path (those given by path, then any cgroup the tree names) or
 * name, else by id.  EX_OK, or EX_FAIL (printed) for a name iobandtab
 * cannot hold.
 */
static int write_options(FILE *f, const struct dev_state *d, const char *default_dg,
			 const struct tab_entry *e, struct pg_state *s)
{
	const struct ioband_table *t = &d->t;
	struct opt_writer w = { f, false };
	size_t i;

	if (strcmp(t->dg, default_dg))
		opt_add(&w, "device-group=%s", t->dg);
	if (t->type != GT_NONE)
		opt_add(&w, "type=%s", gtype_names[t->type]);
	if (t->policy != DEFAULT_POLICY)
		opt_add(&w, "policy=%s", policy_names[t->policy]);
	/* the default group's limits go with its weight or range */
	if (limits_set(t->def.limit))
		opt_group(&w, "default", t->policy, t->def.weight, t->def.min_kbps,
			  t->def.max_kbps, t->def.limit);
	else if (t->policy != POL_RANGE_BW && t->def.weight != DEFAULT_WEIGHT)
		opt_add(&w, "weight=%u", t->def.weight);
	else if (t->policy == POL_RANGE_BW && (t->def.min_kbps || t->def.max_kbps))
		opt_group(&w, "default", t->policy, 0, t->def.min_kbps, t->def.max_kbps,
			  t->def.limit);
	if (t->io_throttle)
		opt_add(&w, "io-throttle=%u", t->io_throttle);
	if (t->io_limit != 128)
		opt_add(&w, "io-limit=%u", t->io_limit);
	if (t->token_base != 256)
		opt_add(&w, "token-base=%u", t->token_base);
	if (e && e->opts.carryover >= 0)
		opt_add(&w, "carryover=%lld", (long long)e->opts.carryover);
	for (i = 0; t->model[0] && i < 6; i++)
		opt_add(&w, "%s=%llu", model_keys[i], (unsigned long long)t->model[i]);
	for (i = 0; i < t->ngroups; i++) {
		const struct group_conf *g = &t->groups[i];
		struct pg_entry *pe = gtype_cgroup(t->type) ? pg_find_id(s, d->name, g->id) : NULL;
		char *name = pe ? xstrdup(pe->path) : group_display_name(t->type, g->id, true);

		/* a pid's command is no name for it */
		if (!name || t->type == GT_PID || t->type == GT_PGRP || strchr(name, ',')) {
			if (name && strchr(name, ',') && t->type != GT_PID && t->type != GT_PGRP)
				note("%s: group %s is written by id: iobandtab cannot hold the ',' in its name",
				     d->name, name);
			free(name);
			name = xasprintf("%lld", (long long)g->id);
		}
		opt_group(&w, name, t->policy, g->weight, g->min_kbps, g->max_kbps, g->limit);
		free(name);
	}
	/* groups given by paths no cgroup has now */
	for (i = 0; i < s->n; i++) {
		const struct pg_entry *pe = &s->e[i];

		if (strcmp(pe->dev, d->name) || (pe->id && table_find(t, pe->id)))
			continue;
		if (strchr(pe->path, ',')) {
			return errorf(EX_FAIL, "%s: the cgroup path %s has a ',', which iobandtab cannot hold",
				      d->name, pe->path);
		}
		opt_group(&w, pe->path, t->policy, pe->weight, pe->min_kbps, pe->max_kbps,
			  pe->limit);
	}
	if (e && e->nofail)
		opt_add(&w, "nofail");
	if (!w.any)
		fputc('-', f);
	return EX_OK;
}

/* Would apply leave @d as it is for line @e? */
static bool up_to_date(const struct tab_entry *e, const struct dev_state *d,
		       const char *default_dg, struct pg_state *s)
{
	struct ioband_table want = { 0 };
	struct pg_state paths;
	size_t i, n = 0;
	char *diff;
	bool same;
	int was_quiet = quiet;

	quiet = 1;
	same = !build_table(&e->opts, d->t.device, default_dg, &d->t, &want, &paths, d->name);
	quiet = was_quiet;
	if (!same)
		return false;
	diff = table_diff(&d->t, &want, NULL, NULL);
	same = !diff;
	free(diff);
	for (i = 0; i < s->n; i++) {
		const struct pg_entry *a = &s->e[i], *b;

		if (strcmp(a->dev, d->name))
			continue;
		n++;
		b = pg_find(&paths, "", a->path);
		if (!b || (d->t.policy == POL_RANGE_BW ? a->min_kbps != b->min_kbps ||
			   a->max_kbps != b->max_kbps : a->weight != b->weight) ||
		    memcmp(a->limit, b->limit, sizeof(a->limit)))
			same = false;
	}
	same = same && n == paths.n;
	pg_free(&paths);
	table_free(&want);
	return same;
}

/* The live device @v[] line @e names (its index), -1 when none. */
static ssize_t live_of(const struct tab_entry *e, const struct dev_state *v, size_t n)
{
	char dm[DM_NAME_MAX + 1], err[256];
	size_t i;

	if (e->wrap && lv_dm_name(e->name, dm, sizeof(dm), err, sizeof(err)))
		return -1;
	for (i = 0; i < n; i++)
		if (!strcmp(v[i].name, e->wrap ? dm : e->name))
			return i;
	return -1;
}

/* The first @n blank-separated fields of @line, as written. */
static size_t raw_fields(const char *line, int n)
{
	const char *p = line;

	while (n--) {
		p += strspn(p, " \t");
		p += strcspn(p, " \t\n#");
	}
	return p - line;
}

static int write_file(const char *file, const char *text, size_t len)
{
	char *tmp = xasprintf("%s.new", file);
	struct stat st;
	int rc = EX_OK;
	FILE *f = fopen(tmp, "w");

	if (!f || fwrite(text, 1, len, f) != len || fflush(f) || fsync(fileno(f))) {
		rc = errorf(EX_FAIL, "writing %s: %s", tmp, strerror(errno));
		if (f)
			fclose(f);
		unlink(tmp);
		goto out;
	}
	if (!stat(file, &st))
		fchmod(fileno(f), st.st_mode & 07777);
	if (fclose(f) || rename(tmp, file)) {
		rc = errorf(EX_FAIL, "writing %s: %s", file, strerror(errno));
		unlink(tmp);
	}
out:
	free(tmp);
	return rc;
}

enum { O_PRINT = 1 };

int cmd_save(int argc, char **argv)
{
	const char *file = "/etc/iobandtab";
	struct dev_state *v = NULL;
	struct pg_state s = { 0 };
	char *line = NULL, *text = NULL, err[512];
	size_t nv = 0, cap = 0, len = 0, i, changed = 0;
	bool print = false, *used = NULL, added = false;
	int lineno = 0, rc, npos = 0;
	FILE *in, *out;

	for (i = 1; i < (size_t)argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return help_exit();
		if (!strcmp(argv[i], "--print") || !strcmp(argv[i], "-p"))
			print = true;
		else if (argv[i][0] == '-' && argv[i][1])
			return usage_error("unknown option '%s'", argv[i]);
		else if (npos++)
			return usage_error("expected at most one FILE");
		else
			file = argv[i];
	}
	if (print)
		quiet = 1;	/* standard output is the file's */
	rc = state_lock();
	if (rc)
		return rc;
	rc = all_ioband(&v, &nv);
	if (!rc)
		rc = state_load(&s);
	if (rc)
		goto done;
	used = calloc(nv + 1, sizeof(*used));
	out = open_memstream(&text, &len);
	in = fopen(file, "r");
	if (!in && errno != ENOENT) {
		rc = errorf(EX_FAIL, "%s: %s", file, strerror(errno));
		fclose(out);
		goto done;
	}
	while (in && getline(&line, &cap, in) >= 0) {
		struct tab_entry e;
		ssize_t k;
		int r = tab_parse_line(line, ++lineno, &e, err, sizeof(err));
		char dm[DM_NAME_MAX + 1], dg[DM_NAME_MAX + 1];
		const char *hash;

		if (r < 0) {
			rc = errorf(EX_USAGE, "%s: %s; nothing saved", file, err);
			break;
		}
		k = r ? live_of(&e, v, nv) : -1;
		if (k < 0 || used[k]) {
			fputs(line, out);
			tab_entry_free(&e);
			continue;
		}
		used[k] = true;
		if (e.wrap) {
			lv_dm_name(e.name, dm, sizeof(dm), err, sizeof(err));
			lv_default_dg(e.name, dm, dg, sizeof(dg));
		}
		if (up_to_date(&e, &v[k], e.wrap ? dg : e.name, &s)) {
			fputs(line, out);
			tab_entry_free(&e);
			continue;
		}
		/* the name and device as written, new options, the comment kept */
		fwrite(line, 1, raw_fields(line, 2), out);
		fputc(' ', out);
		rc = write_options(out, &v[k], e.wrap ? dg : e.name, &e, &s);
		hash = strchr(line, '#');
		if (hash)
			fprintf(out, "  %s", hash);
		else
			fputc('\n', out);
		note("%s: line %d saved", e.name, lineno);
		changed++;
		tab_entry_free(&e);
		if (rc)
			break;
	}
	if (in)
		fclose(in);
	for (i = 0; i < nv && !rc; i++) {
		char *below, dg[DM_NAME_MAX + 1];

		if (used[i])
			continue;
		if (!added)
			fprintf(out, "# added by ioband-setup save\n");
		added = true;
		below = devstr_name(v[i].t.device);
		if (v[i].wraps) {
			tab_put_field(out, v[i].wraps);
			fputs(" wrap ", out);
		} else {
			tab_put_field(out, v[i].name);
			fputc(' ', out);
			tab_put_field(out, below);
			fputc(' ', out);
		}
		if (v[i].wraps)
			lv_default_dg(v[i].wraps, v[i].name, dg, sizeof(dg));
		rc = write_options(out, &v[i], v[i].wraps ? dg : v[i].name, NULL, &s);
		fputc('\n', out);
		note("%s: added", v[i].wraps ? v[i].wraps : v[i].name);
		changed++;
		free(below);
	}
	fclose(out);
	if (rc)
		goto done;
	if (print)
		fwrite(text, 1, len, stdout);
	else if (!changed)
		note("%s: up to date", file);
	else
		rc = write_file(file, text, len);
done:
	state_unlock();
	free(line);
	free(text);
	free(used);
	pg_free(&s);
	all_free(v, nv);
	return rc;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * ioband-setup: cgroup groups given by path (the pure part; the state
 * file's I/O and the watcher are in watch.c).
 *
 * The kernel knows a cgroup group by its id, the inode number of the
 * cgroup's directory, and a cgroup removed and made again under the same
 * path (a restarted systemd service) has a new one.  A group given by path
 * is therefore kept as path -> settings in the state file, with the id it
 * was last attached under; reconciling an entry with the tree (pg_plan)
 * detaches the old id and attaches the new one with the entry's settings.
 */
#include <stdlib.h>
#include <string.h>

#include "ioband-setup.h"

#define ERR(...) snprintf(err, errlen, __VA_ARGS__)

static bool digits_only(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s);
}

char *cgroup_spec_path(const char *spec, const char *root)
{
	size_t rl = strlen(root), n;
	const char *rel = spec;
	char *path;

	if (!*spec || digits_only(spec) || !strcmp(spec, "default") || !strcmp(spec, "-1"))
		return NULL;
	if (!strncmp(spec, root, rl) && (spec[rl] == '/' || !spec[rl]))
		rel = spec + rl;
	while (*rel == '/')
		rel++;
	path = xasprintf("/%s", rel);
	n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		path[--n] = '\0';
	return path;
}

char *unit_default_path(const char *unit)
{
	static const char *const suffixes[] = {
		".service", ".scope", ".slice", ".socket", ".mount", ".swap",
	};
	size_t n = strlen(unit), i, k;
	char *path;

	if (strchr(unit, '/'))
		return NULL;
	for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		k = strlen(suffixes[i]);
		if (n > k && !strcmp(unit + n - k, suffixes[i]))
			break;
	}
	if (i == sizeof(suffixes) / sizeof(suffixes[0]))
		return NULL;
	if (strcmp(suffixes[i], ".slice"))
		return xasprintf("/system.slice/%s", unit);
	if (!strcmp(unit, "-.slice"))
		return xstrdup("/");
	/* a-b-c.slice is /a.slice/a-b.slice/a-b-c.slice */
	path = xstrdup("");
	for (k = 0; k < n - 6; k++) {
		if (unit[k] == '-' && k) {
			char *more = xasprintf("%s/%.*s.slice", path, (int)k, unit);

			free(path);
			path = more;
		}
	}
	{
		char *more = xasprintf("%s/%s", path, unit);

		free(path);
		path = more;
	}
	return path;
}

void pg_free(struct pg_state *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->e[i].dev);
		free(s->e[i].path);
	}
	free(s->e);
	memset(s, 0, sizeof(*s));
}

struct pg_entry *pg_find(const struct pg_state *s, const char *dev, const char *path)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->e[i].dev, dev) && !strcmp(s->e[i].path, path))
			return &s->e[i];
	return NULL;
}

struct pg_entry *pg_find_id(const struct pg_state *s, const char *dev, int64_t id)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->e[i].dev, dev) && s->e[i].id == id)
			return &s->e[i];
	return NULL;
}

struct pg_entry *pg_add(struct pg_state *s, const char *dev, const char *path)
{
	struct pg_entry *e = pg_find(s, dev, path);

	if (e)
		return e;
	s->e = xrealloc(s->e, (s->n + 1) * sizeof(*s->e));
	e = &s->e[s->n++];
	memset(e, 0, sizeof(*e));
	e->dev = xstrdup(dev);
	e->path = xstrdup(path);
	e->weight = DEFAULT_WEIGHT;
	return e;
}

void pg_drop(struct pg_state *s, struct pg_entry *e)
{
	free(e->dev);
	free(e->path);
	memmove(e, e + 1, (s->e + --s->n - e) * sizeof(*e));
}

void pg_write(FILE *f, const struct pg_state *s)
{
	size_t i;

	fprintf(f, "# ioband-setup state (ioband-setup(8)): DEVICE CGROUP-PATH WEIGHT MIN-KB/s MAX-KB/s ID IO.WEIGHT LIMITS\n");
	for (i = 0; i < s->n; i++) {
		const struct pg_entry *e = &s->e[i];
		char lim[LIMITS_TEXT_MAX];

		tab_put_field(f, e->dev);
		fputc(' ', f);
		tab_put_field(f, e->path);
		limits_format(e->limit, limits_set(e->limit), ',', lim, sizeof(lim));
		fprintf(f, " %u %u %u %lld %u %s\n", e->weight, e->min_kbps, e->max_kbps,
			(long long)e->id, e->ioweight, *lim ? lim : "-");
	}
}

int pg_parse_line(struct pg_state *s, const char *line, int lineno, char *err, size_t errlen)
{
	char *copy = xstrdup(line), *f[9], *save = NULL, *p;
	uint64_t id, lim[LIM_NR] = { 0 };
	uint32_t w, mn, mx, iow;
	unsigned int given;
	int n = 0, r = -1;

	p = strchr(copy, '#');
	if (p)
		*p = '\0';
	for (p = strtok_r(copy, " \t\n", &save); p && n < 9; p = strtok_r(NULL, " \t\n", &save))
		f[n++] = p;
	if (!n) {
		r = 0;
		goto out;
	}
	/* the limits came later: a state of 7 fields has none */
	if (n != 7 && n != 8) {
		ERR("line %d: expected 8 fields, found %d", lineno, n);
		goto out;
	}
	if (n == 8 && strcmp(f[7], "-") && limits_parse(f[7], lim, &given, NULL, 0)) {
		ERR("line %d: bad limits '%s'", lineno, f[7]);
		goto out;
	}
	if (tab_unescape(f[0]) || tab_unescape(f[1]) || f[1][0] != '/' ||
	    !dm_name_valid(f[0])) {
		ERR("line %d: bad device name or cgroup path", lineno);
		goto out;
	}
	if (parse_u32(f[2], WEIGHT_MAX, &w) || w < WEIGHT_MIN || parse_u32(f[3], UINT32_MAX, &mn) ||
	    parse_u32(f[4], UINT32_MAX, &mx) || parse_u64(f[5], INT64_MAX, &id) ||
	    parse_u32(f[6], WEIGHT_MAX, &iow) || (mx && mn > mx)) {
		ERR("line %d: bad weight, range, id or io.weight", lineno);
		goto out;
	}
	if (pg_find(s, f[0], f[1])) {
		ERR("line %d: %s %s given twice", lineno, f[0], f[1]);
		goto out;
	}
	{
		struct pg_entry *e = pg_add(s, f[0], f[1]);

		e->weight = w;
		e->min_kbps = mn;
		e->max_kbps = mx;
		e->id = id;
		e->ioweight = iow;
		memcpy(e->limit, lim, sizeof(lim));
	}
	r = 1;
out:
	free(copy);
	return r;
}

/* Does @t hold @e's settings for group @id (as far as its policy shows them)? */
static bool settings_match(const struct ioband_table *t, const struct group_conf *g,
			   const struct pg_entry *e)
{
	if (memcmp(g->limit, e->limit, sizeof(g->limit)))
		return false;
	if (t->policy == POL_RANGE_BW)
		return g->min_kbps == e->min_kbps && g->max_kbps == e->max_kbps;
	return g->weight == e->weight;
}

size_t pg_plan(struct pg_entry *e, const struct ioband_table *t, int64_t cur,
	       char (*msgs)[PG_MSG_LEN])
{
	const struct group_conf *g;
	size_t n = 0;

	if (e->id && e->id != cur && table_find(t, e->id))
		snprintf(msgs[n++], PG_MSG_LEN, "detach %lld", (long long)e->id);
	e->id = cur;
	if (!cur)
		return n;
	g = table_find(t, cur);
	if (g && settings_match(t, g, e))
		return n;
	if (!g)
		snprintf(msgs[n++], PG_MSG_LEN, "attach %lld", (long long)cur);
	/*
	 * Both values (the weight acts under the weight policies, the range
	 * under range-bw), each unless a fresh group has it already.
	 */
	if (g || e->weight != DEFAULT_WEIGHT)
		snprintf(msgs[n++], PG_MSG_LEN, "weight %lld:%u", (long long)cur, e->weight);
	if (g || e->min_kbps || e->max_kbps)
		snprintf(msgs[n++], PG_MSG_LEN, "range-bw %lld:%u:%u", (long long)cur,
			 e->min_kbps, e->max_kbps);
	/* every kind, "max" where none is set, so that none stays behind */
	if ((g && memcmp(g->limit, e->limit, sizeof(e->limit))) || limits_set(e->limit)) {
		char lim[LIMITS_TEXT_MAX];

		limits_format(e->limit, (1U << LIM_NR) - 1, ',', lim, sizeof(lim));
		snprintf(msgs[n++], PG_MSG_LEN, "limit %lld/%s", (long long)cur, lim);
	}
	return n;
}

uint32_t ioweight_parse(const char *text, const char *devt)
{
	char *copy = xstrdup(text), *line, *save = NULL, key[32];
	uint32_t def = 0, dev = 0, w;
	char val[16];

	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%31s %15s", key, val) != 2 || parse_u32(val, WEIGHT_MAX, &w) ||
		    w < WEIGHT_MIN)
			continue;
		if (!strcmp(key, "default"))
			def = w;
		else if (!strcmp(key, devt))
			dev = w;
	}
	free(copy);
	return dev ? dev : def;
}

bool pg_follow_ioweight(struct pg_entry *e, uint32_t w)
{
	bool follow = w && (e->ioweight ? w != e->ioweight : w != DEFAULT_WEIGHT);

	if (w)
		e->ioweight = w;
	if (!follow || e->weight == w)
		return false;
	e->weight = w;
	return true;
}

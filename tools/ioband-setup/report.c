// SPDX-License-Identifier: GPL-2.0
/*
 * ioband-setup: reports (see report.h): the column tables of list, show
 * and top, column selection, widths from the content, separators, units
 * and JSON.
 */
#include <stdlib.h>
#include <string.h>

#include "ioband-setup.h"
#include "report.h"

/*
 * The columns.  A column's name is its JSON key, stable within a
 * REPORT_VERSION; size columns are named by the unit of their JSON value
 * (read_sectors), whatever --units makes of their text.
 */
const struct report_col list_cols[] = {
	{ "name", "NAME", false, false, "the ioband device's name" },
	{ "device", "DEVICE", false, false, "the device below, by path" },
	{ "devt", "DEVT", false, false, "the device below, major:minor" },
	{ "device_group", "DEVICE-GROUP", false, false, "the device group" },
	{ "type", "TYPE", false, false, "the group type" },
	{ "policy", "POLICY", false, false, "the device group's policy" },
	{ "groups", "GROUPS", true, false, "groups attached, the default group not counted" },
	{ "wraps", "WRAPS", false, false, "the logical volume it wraps (VG/LV)" },
	{ "sectors", "SIZE-@", true, true, "the device's size (JSON: 512-byte sectors)" },
	{ "io_throttle", "IO-THROTTLE", true, false, "the device group's io_throttle" },
	{ "io_limit", "IO-LIMIT", true, false, "the device group's io_limit" },
	{ "token_base", "TOKEN-BASE", true, false, "the device group's token_base" },
	{ "open_count", "OPEN", true, false, "how many hold the device open" },
	{ "suspended", "SUSPENDED", false, false, "whether the device is suspended" },
};
const size_t list_ncols = sizeof(list_cols) / sizeof(list_cols[0]);

/* The columns that show and top share, first in both, in this order. */
#define GROUP_CONF_COLS \
	{ "id", "GROUP", false, false, "the group's id (text: default for the default group, JSON: -1)" }, \
	{ "name", "NAME", false, false, "the group's name: cgroup path, user, group or process name" }, \
	{ "weight", "WEIGHT", true, false, "its weight (weight policies)" }, \
	{ "min_kbps", "MIN-KB/s", true, false, "its minimum bandwidth in KB/s (range-bw)" }, \
	{ "max_kbps", "MAX-KB/s", true, false, "its maximum bandwidth in KB/s, 0: none (range-bw)" }, \
	{ "range", "RANGE-KB/s", true, false, \
	  "MIN:MAX in KB/s (range-bw, whose default set has it for weight)" }, \
	{ "limits", "LIMITS", false, false, \
	  "its limits, io.max's kinds, KEY=VALUE,... (-: none; in the default set when a group has one)" }

const struct report_col group_cols[] = {
	GROUP_CONF_COLS,
	{ "share", "SHARE", true, false,
	  "weight over the device group's sum of weights (JSON: a fraction; -: cgroup-tree)" },
	{ "reads", "READS", true, false, "reads" },
	{ "delayed_reads", "R-DELAYED", true, false, "reads ioband held back" },
	{ "read_sectors", "READ-@", true, true, "data read (JSON: sectors)" },
	{ "writes", "WRITES", true, false, "writes" },
	{ "delayed_writes", "W-DELAYED", true, false, "writes ioband held back" },
	{ "write_sectors", "WRITE-@", true, true, "data written (JSON: sectors)" },
};
const size_t group_ncols = sizeof(group_cols) / sizeof(group_cols[0]);

const struct report_col top_cols[] = {
	GROUP_CONF_COLS,
	{ "read_bytes_per_s", "READ-@/s", true, true, "read throughput (JSON: bytes/s)" },
	{ "write_bytes_per_s", "WRITE-@/s", true, true, "write throughput (JSON: bytes/s)" },
	{ "read_iops", "READ-IOPS", true, false, "reads per second" },
	{ "write_iops", "WRITE-IOPS", true, false, "writes per second" },
	{ "delayed_per_s", "DELAYED/s", true, false, "reads and writes held back per second" },
	{ "delayed_reads_per_s", "R-DELAYED/s", true, false, "reads held back per second" },
	{ "delayed_writes_per_s", "W-DELAYED/s", true, false, "writes held back per second" },
	{ "reads", "READS", true, false, "reads in the interval" },
	{ "writes", "WRITES", true, false, "writes in the interval" },
	{ "read_sectors", "READ-@", true, true, "data read in the interval (JSON: sectors)" },
	{ "write_sectors", "WRITE-@", true, true, "data written in the interval (JSON: sectors)" },
	{ "delayed_reads", "R-DELAYED", true, false, "reads held back in the interval" },
	{ "delayed_writes", "W-DELAYED", true, false, "writes held back in the interval" },
	{ "share", "SHARE", true, false, "the group's part of the sectors moved (JSON: a fraction)" },
	{ "wait_p50", "WAIT-P50", true, false,
	  "median time bios waited in ioband, of a recent sample (-: none; JSON: microseconds)" },
	{ "wait_p99", "WAIT-P99", true, false,
	  "99th percentile of the time waited in ioband (-: none; JSON: microseconds)" },
	{ "dev_p50", "DEV-P50", true, false,
	  "median time the device below took, of a recent sample (-: none; JSON: microseconds)" },
	{ "dev_p99", "DEV-P99", true, false,
	  "99th percentile of the time the device below took (-: none; JSON: microseconds)" },
};
const size_t top_ncols = sizeof(top_cols) / sizeof(top_cols[0]);

static const struct {
	const char *name, *label;
	double bytes;
} units[RU_NR] = {
	[RU_BYTES] = { "b", "B", 1 },
	[RU_SECTORS] = { "s", "SECTORS", 512 },
	[RU_KIB] = { "k", "KiB", 1024 },
	[RU_MIB] = { "m", "MiB", 1024.0 * 1024 },
	[RU_GIB] = { "g", "GiB", 1024.0 * 1024 * 1024 },
};

#define ERR(...) do { if (err) snprintf(err, errlen, __VA_ARGS__); } while (0)

struct cell {
	char *text, *json;
	bool size;
	double bytes;
};

struct report {
	const struct report_col *cols;
	size_t ncols;
	size_t *sel;		/* the selected columns' indexes, in order */
	size_t nsel;
	struct report_opts o;
	struct cell *cells;	/* nrows * ncols */
	char **notes;		/* one per row, NULL: none */
	size_t nrows, filled;	/* cells of the last row given so far */
};

void report_opts_init(struct report_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->units = -1;
}

int report_units_parse(struct report_opts *o, const char *s, char *err, size_t errlen)
{
	int i;

	for (i = 0; i < RU_NR; i++) {
		if (!strcmp(s, units[i].name)) {
			o->units = i;
			return 0;
		}
	}
	ERR("unknown unit '%s' (b, s, k, m or g: bytes, 512-byte sectors, KiB, MiB, GiB)", s);
	return -1;
}

int report_format_parse(struct report_opts *o, const char *s, char *err, size_t errlen)
{
	if (strcmp(s, "json") && strcmp(s, "basic")) {
		ERR("unknown report format '%s' (basic or json)", s);
		return -1;
	}
	o->json = !strcmp(s, "json");
	return 0;
}

int report_separator_parse(struct report_opts *o, const char *s, char *err, size_t errlen)
{
	if (!*s) {
		ERR("--separator must not be empty");
		return -1;
	}
	o->separator = s;
	return 0;
}

/* Column names compare with '-' and '_' the same. */
static bool col_name_eq(const char *a, const char *b, size_t blen)
{
	size_t i;

	for (i = 0; i < blen; i++) {
		char x = a[i] == '-' ? '_' : a[i], y = b[i] == '-' ? '_' : b[i];

		if (!a[i] || x != y)
			return false;
	}
	return !a[blen];
}

/* Add the columns of comma-separated @list to r->sel (each once); -1 with err. */
static int select_cols(struct report *r, const char *cmd, const char *list,
		       const char *whole, char *err, size_t errlen)
{
	const char *p = list;

	for (;;) {
		size_t n = strcspn(p, ","), i, j;

		if (!n) {
			ERR("empty column name in '-o %s'", whole);
			return -1;
		}
		for (i = 0; i < r->ncols && !col_name_eq(r->cols[i].name, p, n); i++)
			;
		if (i == r->ncols) {
			ERR("unknown column '%.*s' (ioband-setup %s -o help lists them)",
			    (int)n, p, cmd);
			return -1;
		}
		for (j = 0; j < r->nsel && r->sel[j] != i; j++)
			;
		if (j == r->nsel)
			r->sel[r->nsel++] = i;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

static void list_help(const struct report_col *cols, size_t ncols, const char *defaults,
		      FILE *f)
{
	size_t i, w = 0;

	for (i = 0; i < ncols; i++)
		if (strlen(cols[i].name) > w)
			w = strlen(cols[i].name);
	fprintf(f, "Columns (-o COL[,COL...], or -o +COL[,...] added to the default set\n"
		   "%s):\n", defaults);
	for (i = 0; i < ncols; i++)
		fprintf(f, "  %-*s  %s\n", (int)w, cols[i].name, cols[i].help);
}

int report_new(const char *cmd, const struct report_col *cols, size_t ncols,
	       const char *defaults, const struct report_opts *o, FILE *f,
	       struct report **out, char *err, size_t errlen)
{
	struct report *r;
	const char *spec = o->columns;
	size_t i;

	*out = NULL;
	if (spec && !strcmp(spec, "help")) {
		list_help(cols, ncols, defaults, f);
		return 1;
	}
	if (spec && (!*spec || !strcmp(spec, "+"))) {
		ERR("-o needs at least one column (ioband-setup %s -o help lists them)", cmd);
		return -1;
	}
	if (o->json && (o->units >= 0 || o->separator || o->noheadings)) {
		ERR("--units, --separator and --noheadings shape the text report, not JSON "
		    "(whose sizes are always in sectors or bytes)");
		return -1;
	}
	r = xmalloc(sizeof(*r));
	memset(r, 0, sizeof(*r));
	r->cols = cols;
	r->ncols = ncols;
	r->o = *o;
	r->sel = xmalloc(ncols * sizeof(*r->sel));
	/* the default set (JSON's: every column), which -o +COL extends */
	if (!spec || *spec == '+') {
		if (o->json) {
			for (i = 0; i < ncols; i++)
				r->sel[r->nsel++] = i;
		} else if (select_cols(r, cmd, defaults, defaults, err, errlen)) {
			abort();	/* the defaults are ours */
		}
	}
	if (spec && select_cols(r, cmd, spec + (*spec == '+'), spec, err, errlen)) {
		report_free(r);
		return -1;
	}
	*out = r;
	return 0;
}

void report_free(struct report *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->nrows * r->ncols; i++) {
		free(r->cells[i].text);
		free(r->cells[i].json);
	}
	for (i = 0; i < r->nrows; i++)
		free(r->notes[i]);
	free(r->cells);
	free(r->notes);
	free(r->sel);
	free(r);
}

/* Every row has all its cells: else the command has a bug. */
static void check_complete(const struct report *r)
{
	if (r->nrows && r->filled != r->ncols)
		abort();
}

void report_row(struct report *r)
{
	check_complete(r);
	r->nrows++;
	r->cells = xrealloc(r->cells, r->nrows * r->ncols * sizeof(*r->cells));
	r->notes = xrealloc(r->notes, r->nrows * sizeof(*r->notes));
	r->notes[r->nrows - 1] = NULL;
	r->filled = 0;
}

static struct cell *next_cell(struct report *r)
{
	if (!r->nrows || r->filled == r->ncols)
		abort();	/* more cells than columns */
	return &r->cells[(r->nrows - 1) * r->ncols + r->filled++];
}

void report_cell(struct report *r, const char *text, const char *json)
{
	struct cell *c = next_cell(r);

	c->text = xstrdup(text);
	c->json = xstrdup(json ? json : "null");
	c->size = false;
	c->bytes = 0;
}

char *json_quote(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (!s)
		return xstrdup("null");
	f = open_memstream(&buf, &len);
	if (!f) {
		fprintf(stderr, "ioband-setup: out of memory\n");
		exit(EX_FAIL);
	}
	json_string(f, s);
	fclose(f);
	return buf;
}

void report_str(struct report *r, const char *s)
{
	char *j = json_quote(s);

	report_cell(r, s ? s : "-", j);
	free(j);
}

void report_u64(struct report *r, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	report_cell(r, buf, buf);
}

void report_i64(struct report *r, int64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%lld", (long long)v);
	report_cell(r, buf, buf);
}

void report_size(struct report *r, double bytes, const char *json)
{
	struct cell *c = next_cell(r);

	c->text = NULL;
	c->json = xstrdup(json);
	c->size = true;
	c->bytes = bytes;
}

void report_sectors(struct report *r, uint64_t sectors)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)sectors);
	report_size(r, sectors * 512.0, buf);
}

void report_latency(struct report *r, const struct group_latency *lat)
{
	int k;

	for (k = 0; k < LAT_NR; k++) {
		char *text, json[24];

		if (!lat || !lat->timed) {
			report_cell(r, "-", NULL);
			continue;
		}
		text = report_usec_text(lat->usec[k]);
		snprintf(json, sizeof(json), "%llu", (unsigned long long)lat->usec[k]);
		report_cell(r, text, json);
		free(text);
	}
}

void report_note(struct report *r, const char *note)
{
	free(r->notes[r->nrows - 1]);
	r->notes[r->nrows - 1] = xstrdup(note);
}

char *report_unit_text(double bytes, int unit)
{
	double v = bytes / units[unit].bytes;

	return unit <= RU_SECTORS ? xasprintf("%.0f", v) : xasprintf("%.2f", v);
}

char *report_usec_text(uint64_t usec)
{
	if (usec < 1000)
		return xasprintf("%lluus", (unsigned long long)usec);
	if (usec < 999950)	/* 999.95 ms and up reads 1.0s */
		return xasprintf("%.1fms", usec / 1e3);
	return xasprintf("%.1fs", usec / 1e6);
}

static int unit_of(const struct report *r)
{
	return r->o.units < 0 ? RU_MIB : r->o.units;
}

/* Column @c's heading, malloc'ed: a size column's '@' made the unit. */
static char *heading(const struct report *r, const struct report_col *c)
{
	const char *at = c->size ? strchr(c->heading, '@') : NULL;

	if (!at)
		return xstrdup(c->heading);
	return xasprintf("%.*s%s%s", (int)(at - c->heading), c->heading,
			 units[unit_of(r)].label, at + 1);
}

/* The texts of the selected columns, row by row; row -1 the headings. */
static char **texts(const struct report *r, size_t *nrows_out)
{
	size_t rows = r->nrows + 1, i, j;
	char **t = xmalloc(rows * r->nsel * sizeof(*t));

	for (j = 0; j < r->nsel; j++)
		t[j] = heading(r, &r->cols[r->sel[j]]);
	for (i = 0; i < r->nrows; i++) {
		for (j = 0; j < r->nsel; j++) {
			const struct cell *c = &r->cells[i * r->ncols + r->sel[j]];

			t[(i + 1) * r->nsel + j] = c->size ? report_unit_text(c->bytes, unit_of(r))
							   : xstrdup(c->text);
		}
	}
	*nrows_out = rows;
	return t;
}

/*
 * One line: with a separator, the cells as they are between separators;
 * else each padded to its column's width (@w), two blanks between
 * columns, no blanks at the end.
 */
static void print_line(const struct report *r, char **cells, const size_t *w,
		       const char *note, FILE *f)
{
	size_t j, last = 0;

	if (r->o.separator) {
		for (j = 0; j < r->nsel; j++)
			fprintf(f, "%s%s", j ? r->o.separator : "", cells[j]);
		fputc('\n', f);
		return;
	}
	for (j = 0; j < r->nsel; j++)
		if (*cells[j])
			last = j + 1;
	for (j = 0; j < last; j++) {
		const struct report_col *c = &r->cols[r->sel[j]];
		int pad = j + 1 < last || c->right ? (int)w[j] : 0;

		fprintf(f, "%s%*s", j ? "  " : "", c->right ? pad : -pad, cells[j]);
	}
	if (note)
		fprintf(f, "%s%s", last ? "  " : "", note);
	fputc('\n', f);
}

void report_print(const struct report *r, FILE *f)
{
	size_t rows, i, j, *w;
	char **t;

	check_complete(r);

	if (!r->nrows)
		return;
	t = texts(r, &rows);
	w = xmalloc(r->nsel * sizeof(*w));
	for (j = 0; j < r->nsel; j++) {
		w[j] = 0;
		for (i = r->o.noheadings; i < rows; i++)
			if (strlen(t[i * r->nsel + j]) > w[j])
				w[j] = strlen(t[i * r->nsel + j]);
	}
	for (i = r->o.noheadings; i < rows; i++)
		print_line(r, &t[i * r->nsel], w, i ? r->notes[i - 1] : NULL, f);
	for (i = 0; i < rows * r->nsel; i++)
		free(t[i]);
	free(t);
	free(w);
}

void report_print_json(const struct report *r, FILE *f)
{
	size_t i, j;

	check_complete(r);
	fputc('[', f);
	for (i = 0; i < r->nrows; i++) {
		fputs(i ? ",{" : "{", f);
		for (j = 0; j < r->nsel; j++) {
			const struct report_col *c = &r->cols[r->sel[j]];

			fprintf(f, "%s\"%s\":%s", j ? "," : "", c->name,
				r->cells[i * r->ncols + r->sel[j]].json);
		}
		fputc('}', f);
	}
	fputc(']', f);
}

void report_json_open(FILE *f)
{
	fprintf(f, "{\"report_version\":%d", REPORT_VERSION);
}

void report_print_json_doc(const struct report *r, const char *key, FILE *f)
{
	report_json_open(f);
	fprintf(f, ",\"%s\":", key);
	report_print_json(r, f);
	fputs("}\n", f);
}

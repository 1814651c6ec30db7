/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ioband-setup: reports (report.c), the tables of list, show and top, as
 * lvs makes them: -o COL[,COL...] (or -o +COL, added to the default set),
 * --noheadings, --separator STR, --units b|s|k|m|g, --reportformat json.
 * Nothing here talks to the system: make check exercises it whole.
 *
 * A command makes a report from its column table, then fills it one row
 * at a time, one cell per column of the table in the table's order,
 * selected or not; the report keeps the cells of the selected columns.
 * Every cell has a text form and a JSON form (a JSON literal); a size
 * cell has a byte count, written in --units in the text.
 */
#ifndef IOBAND_SETUP_REPORT_H
#define IOBAND_SETUP_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The version of the JSON reports' schema (ioband-setup.8 documents it). */
#define REPORT_VERSION	1

struct report_col {
	const char *name;	/* for -o, and the JSON key */
	const char *heading;	/* a size column's '@' is the unit: "READ-@" */
	bool right;		/* aligned right (numbers) */
	bool size;		/* a size: the text in --units */
	const char *help;	/* -o help's line */
};

enum report_unit { RU_BYTES, RU_SECTORS, RU_KIB, RU_MIB, RU_GIB, RU_NR };

struct report_opts {
	const char *columns;	/* -o, NULL: the default set */
	const char *separator;	/* --separator, NULL: aligned columns */
	bool noheadings;
	bool json;		/* --reportformat json, --json */
	int units;		/* --units, -1: not given (MiB) */
};

void report_opts_init(struct report_opts *o);
/* --units and --reportformat values into @o; -1 with err filled. */
int report_units_parse(struct report_opts *o, const char *s, char *err, size_t errlen);
int report_format_parse(struct report_opts *o, const char *s, char *err, size_t errlen);
/* --separator; -1 with err filled when empty. */
int report_separator_parse(struct report_opts *o, const char *s, char *err, size_t errlen);

/* The columns of the reports (report.c), in the order the cells are given. */
extern const struct report_col list_cols[];
extern const size_t list_ncols;
#define LIST_DEFAULT	"name,device,device_group,type,policy,groups,wraps"
extern const struct report_col group_cols[];	/* show */
extern const size_t group_ncols;
#define GROUP_DEFAULT_WEIGHT \
	"id,name,weight,share,reads,delayed_reads,read_sectors,writes,delayed_writes,write_sectors"
#define GROUP_DEFAULT_RANGE \
	"id,name,range,share,reads,delayed_reads,read_sectors,writes,delayed_writes,write_sectors"
extern const struct report_col top_cols[];
extern const size_t top_ncols;
#define TOP_DEFAULT_WEIGHT \
	"id,name,weight,read_bytes_per_s,write_bytes_per_s,read_iops,write_iops,delayed_per_s," \
	"wait_p99,dev_p99,share"
#define TOP_DEFAULT_RANGE \
	"id,name,range,read_bytes_per_s,write_bytes_per_s,read_iops,write_iops,delayed_per_s," \
	"wait_p99,dev_p99,share"

struct report;
struct group_latency;

/*
 * A report of @cmd ("list": its name in messages) over columns @cols,
 * the text's default set @defaults (JSON's is every column).  Returns 0
 * with *out, 1 when -o help was given (the columns are listed on @f, no
 * report made), -1 with err filled (unknown column, empty -o: nothing made).
 */
int report_new(const char *cmd, const struct report_col *cols, size_t ncols,
	       const char *defaults, const struct report_opts *o, FILE *f,
	       struct report **out, char *err, size_t errlen);
void report_free(struct report *r);

/* A new row; then one cell per column. */
void report_row(struct report *r);
/* A string; NULL: "-" in the text, null in JSON. */
void report_str(struct report *r, const char *s);
/* Text @text, JSON literal @json (both copied; NULL json: null). */
void report_cell(struct report *r, const char *text, const char *json);
void report_u64(struct report *r, uint64_t v);
void report_i64(struct report *r, int64_t v);
/* A size column's cell: @bytes in the text, JSON literal @json. */
void report_size(struct report *r, double bytes, const char *json);
/* A size in 512-byte sectors, the JSON the number of sectors. */
void report_sectors(struct report *r, uint64_t sectors);
/*
 * top's latency cells, wait_p50 to dev_p99, of a group's figures @lat:
 * report_usec_text() in the text, microseconds in JSON; "-" and null for
 * each when @lat is NULL (no figures) or timed none.
 */
void report_latency(struct report *r, const struct group_latency *lat);
/* A note after the row's last non-empty cell, in aligned text only. */
void report_note(struct report *r, const char *note);

/* The text report (nothing when there are no rows). */
void report_print(const struct report *r, FILE *f);
/* The rows as a JSON array of objects, keys the selected columns' names. */
void report_print_json(const struct report *r, FILE *f);
/* A JSON report's opening: '{' and its "report_version" key. */
void report_json_open(FILE *f);
/* A JSON report that is the rows only: {"report_version":N,"@key":[...]} and a newline. */
void report_print_json_doc(const struct report *r, const char *key, FILE *f);

/* A malloc'ed JSON string literal of @s; NULL: "null". */
char *json_quote(const char *s);
/* "X.XX" of @bytes in @unit (b and s: whole numbers), malloc'ed. */
char *report_unit_text(double bytes, int unit);
/* @usec as "250us", "1.2ms" or "3.4s", malloc'ed. */
char *report_usec_text(uint64_t usec);

#endif

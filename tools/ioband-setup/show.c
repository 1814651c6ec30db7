// SPDX-License-Identifier: GPL-2.0
/* ioband-setup: the report commands, list, show and top (report.c lays them out). */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "names.h"

/* ---- list / show --------------------------------------------------------- */

static int dev_state_cmp(const void *a, const void *b)
{
	return strcmp(((const struct dev_state *)a)->name, ((const struct dev_state *)b)->name);
}

/* The ioband devices, by name (the kernel lists them in no useful order). */
int cmd_list(int argc, char **argv)
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
	char buf[32], lim[LIMITS_TEXT_MAX] = "";

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
	if (c)
		limits_format(c->limit, limits_set(c->limit), ',', lim, sizeof(lim));
	report_str(r, *lim ? lim : NULL);
}

/* @def, and the limits column after it when a group of @t or @ps has limits */
static const char *default_cols(const char *def, const struct ioband_table *t,
				const struct pg_state *ps, const char *dev, char *buf,
				size_t len)
{
	bool any = limits_set(t->def.limit);
	size_t i;

	for (i = 0; i < t->ngroups; i++)
		any = any || limits_set(t->groups[i].limit);
	for (i = 0; ps && i < ps->n; i++)
		any = any || (!strcmp(ps->e[i].dev, dev) && limits_set(ps->e[i].limit));
	snprintf(buf, len, "%s%s", def, any ? ",limits" : "");
	return buf;
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
	char lim[LIMITS_TEXT_MAX];
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
		limits_format(e->limit, limits_set(e->limit), ',', lim, sizeof(lim));
		printf(",\"weight\":%u,\"min_kbps\":%u,\"max_kbps\":%u,\"limits\":", e->weight,
		       e->min_kbps, e->max_kbps);
		if (*lim)
			json_string(stdout, lim);
		else
			printf("null");
		printf("}");
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

		memcpy(c.limit, e->limit, sizeof(c.limit));

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

int cmd_show(int argc, char **argv)
{
	static const struct opt opts[] = { REPORT_OPTV, { NULL, 0, false, 0 } };
	struct optstate st;
	struct report_opts ro;
	struct report *r;
	struct dev_state d;
	struct ioband_status s;
	struct diff_names dn = { 0 };
	char name[DM_NAME_MAX + 1], *below, *members, cols[256];
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
	dn.dev = d.name;
	state_load(&dn.s);
	rc = report_open(group_cols, group_ncols,
			 default_cols(range ? GROUP_DEFAULT_RANGE : GROUP_DEFAULT_WEIGHT, &d.t,
				      &dn.s, d.name, cols, sizeof(cols)), &ro, &r);
	if (rc)
		goto out;
	below = devstr_name(d.t.device);
	wsum = dg_weight_sum(d.t.dg, &d, &members);
	for (i = 0; i < s.ngroups; i++) {
		const struct group_stats *g = &s.groups[i];
		const struct group_conf *c = group_conf_of(&d.t, g->id);
		char *gname = diff_name(d.t.type, g->id, &dn);
		double share = wsum ? (double)(c ? c->weight : 0) / wsum : 0;
		char text[16], json[16];

		report_group_conf(r, g->id, gname, c, range);
		/* in a tree, a share depends on which groups are active */
		if (range || d.t.type == GT_CGROUP_TREE) {
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

/*
 * One row of top: group @g's counts since @p (NULL: none before), over @dt
 * seconds, and its latency figures @lat (NULL: none).
 */
static void top_row(struct report *r, const struct ioband_table *t, const struct group_stats *g,
		    const struct group_stats *p, const struct group_latency *lat, double dt,
		    uint64_t total, struct diff_names *dn)
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
	report_latency(r, lat);
}

static int top_report(const char *name, const struct ioband_table *t,
		      const struct ioband_status *prev, const struct ioband_status *cur,
		      const struct ioband_latency *lat, double dt, const struct report_opts *ro,
		      bool tty, struct diff_names *dn)
{
	uint64_t total = 0;
	size_t i;
	struct timespec wall;
	struct report *r;
	char cols[256];
	int rc;

	rc = report_open(top_cols, top_ncols,
			 default_cols(t->policy == POL_RANGE_BW ? TOP_DEFAULT_RANGE :
				      TOP_DEFAULT_WEIGHT, t, NULL, name, cols, sizeof(cols)), ro, &r);
	if (rc)
		return rc;
	clock_gettime(CLOCK_REALTIME, &wall);
	for (i = 0; i < cur->ngroups; i++) {
		const struct group_stats *g = &cur->groups[i], *p = status_find(prev, g->id);

		total += delta(g->read_sectors, p ? p->read_sectors : 0) +
			 delta(g->write_sectors, p ? p->write_sectors : 0);
	}
	names_refresh();
	for (i = 0; i < cur->ngroups; i++) {
		const struct group_stats *g = &cur->groups[i];

		top_row(r, t, g, status_find(prev, g->id), latency_find(lat, g->id), dt, total, dn);
	}
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

/*
 * The latency figures of @name into @lat, asked of the kernel while *ask:
 * a module that refuses the message (an older one) or answers what does
 * not parse clears it, and leaves @lat empty from then on.
 */
static void load_latency(const char *name, struct ioband_latency *lat, bool *ask)
{
	char *text, err[256];

	latency_free(lat);
	if (!*ask)
		return;
	if (dmx_message(name, "latency", &text)) {
		if (verbose)
			fprintf(stderr, "ioband-setup: %s: no latency figures: %s\n", name,
				dmx_why());
		*ask = false;
		return;
	}
	if (latency_parse(text, lat, err, sizeof(err))) {
		errorf(EX_FAIL, "%s: cannot read its latency figures: %s", name, err);
		*ask = false;
	}
	free(text);
}

int cmd_top(int argc, char **argv)
{
	static const struct opt opts[] = {
		REPORT_OPTV, { "count", 'c', true, O_COUNT },
		{ "interval", 'i', true, O_INTERVAL }, { NULL, 0, false, 0 },
	};
	struct report_opts ro;
	struct optstate st;
	struct dev_state d;
	struct ioband_status prev = { 0 }, cur = { 0 };
	struct ioband_latency lat = { 0 };
	struct diff_names dn = { 0 };
	struct timespec tprev, tnow, next;
	char name[DM_NAME_MAX + 1], *end;
	double interval = 1.0;
	uint64_t count = 0, done = 0;
	bool tty, listed, ask_latency = true;
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
		load_latency(name, &lat, &ask_latency);
		dt = ts_sec(&tnow) - ts_sec(&tprev);
		if (dt <= 0)
			dt = interval;
		dn.dev = name;
		state_load(&dn.s);
		rc = top_report(name, &d.t, &prev, &cur, &lat, dt, &ro, tty, &dn);
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
	latency_free(&lat);
	dev_state_free(&d);
	return rc;
}


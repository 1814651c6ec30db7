// SPDX-License-Identifier: GPL-2.0
/*
 * ioband-setup: the pure parts (no kernel, no system databases).
 *
 * Table and status lines of the ioband target as Documentation/ioband.rst
 * describes them, GROUP specs, set values, and /etc/iobandtab lines.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ioband-setup.h"

const char *const gtype_names[GT_NR] = {
	[GT_NONE] = "none", [GT_USER] = "user", [GT_GID] = "gid",
	[GT_PID] = "pid", [GT_PGRP] = "pgrp", [GT_CGROUP] = "cgroup",
	[GT_CGROUP_TREE] = "cgroup-tree",
};

const char *const policy_names[POL_NR] = {
	[POL_WEIGHT] = "weight", [POL_WEIGHT_IOSIZE] = "weight-iosize",
	[POL_RANGE_BW] = "range-bw", [POL_WEIGHT_TIME] = "weight-time",
};

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p) {
		fprintf(stderr, "ioband-setup: out of memory\n");
		exit(EX_FAIL);
	}
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		fprintf(stderr, "ioband-setup: out of memory\n");
		exit(EX_FAIL);
	}
	return p;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(xmalloc(n), s, n);
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	s = xmalloc(n + 1);
	va_start(ap, fmt);
	vsnprintf(s, n + 1, fmt, ap);
	va_end(ap);
	return s;
}

#define ERR(...) do { if (err) snprintf(err, errlen, __VA_ARGS__); } while (0)

int gtype_parse(const char *s)
{
	int i;

	if (!strcmp(s, "uid"))
		return GT_USER;
	for (i = 0; i < GT_NR; i++)
		if (!strcmp(s, gtype_names[i]))
			return i;
	return -1;
}

int policy_parse(const char *s)
{
	int i;

	for (i = 0; i < POL_NR; i++)
		if (!strcmp(s, policy_names[i]))
			return i;
	return -1;
}

/* ---- numbers ------------------------------------------------------------- */

/* Digits at *s, no overflow past max; *end past them.  0 or -1. */
static int parse_dec(const char *s, const char **end, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		uint64_t d = *s - '0';

		if (v > (max - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*end = s;
	*out = v;
	return 0;
}

int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	const char *end;

	if (!s || parse_dec(s, &end, max, out) || *end)
		return -1;
	return 0;
}

int parse_u32(const char *s, uint32_t max, uint32_t *out)
{
	uint64_t v;

	if (parse_u64(s, max, &v))
		return -1;
	*out = v;
	return 0;
}

int parse_kbps(const char *s, uint32_t *out)
{
	const char *end;
	uint64_t v, mul = 1;

	if (parse_dec(s, &end, UINT32_MAX, &v))
		return -1;
	if (*end) {
		switch (tolower((unsigned char)*end)) {
		case 'k': mul = 1; break;
		case 'm': mul = 1024; break;
		case 'g': mul = 1024 * 1024; break;
		default: return -1;
		}
		if (end[1])
			return -1;
	}
	if (v > UINT32_MAX / mul)
		return -1;
	*out = v * mul;
	return 0;
}

/* -1, or a number up to INT64_MAX, at *s; *end past it. */
static int parse_id(const char *s, const char **end, int64_t *id)
{
	uint64_t v;

	if (s[0] == '-') {
		if (s[1] != '1' || (s[2] >= '0' && s[2] <= '9'))
			return -1;
		*end = s + 2;
		*id = DEFAULT_GROUP;
		return 0;
	}
	if (parse_dec(s, end, INT64_MAX, &v))
		return -1;
	*id = v;
	return 0;
}

int64_t gid_max(enum gtype type)
{
	switch (type) {
	case GT_USER:
	case GT_GID:
		return 4294967294LL;
	case GT_PID:
	case GT_PGRP:
		return 4194304;
	case GT_CGROUP:
	case GT_CGROUP_TREE:
		return INT64_MAX;
	default:
		return 0;
	}
}

bool gid_in_range(enum gtype type, int64_t id)
{
	int64_t min = (type == GT_USER || type == GT_GID) ? 0 : 1;

	return type != GT_NONE && id >= min && id <= gid_max(type);
}

bool dg_name_valid(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n > DG_NAME_MAX)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.')
			return false;
	return true;
}

bool dm_name_valid(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n > DM_NAME_MAX || strchr(s, '/') ||
	    !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || *s == 0x7f)
			return false;
	return true;
}

/* ---- table lines --------------------------------------------------------- */

void table_free(struct ioband_table *t)
{
	free(t->groups);
	t->groups = NULL;
	t->ngroups = 0;
}

/* Split a copy of s at blanks; returns the count, fills argv. */
static size_t split_words(char *s, char ***argvp)
{
	size_t n = 0, cap = 16;
	char **argv = xmalloc(cap * sizeof(*argv));
	char *p = s;

	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			break;
		if (n == cap) {
			cap *= 2;
			argv = xrealloc(argv, cap * sizeof(*argv));
		}
		argv[n++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n')
			p++;
		if (*p)
			*p++ = '\0';
	}
	*argvp = argv;
	return n;
}

static int parse_group_arg(const char *s, enum policy pol, struct group_conf *g,
			   bool is_default, char *err, size_t errlen)
{
	const char *end = s;

	g->id = DEFAULT_GROUP;
	g->weight = DEFAULT_WEIGHT;
	g->min_kbps = g->max_kbps = 0;
	memset(g->limit, 0, sizeof(g->limit));
	if (!is_default && parse_id(s, &end, &g->id)) {
		ERR("group must be <id>:<value>: '%s'", s);
		return -1;
	}
	if (*end != ':') {
		ERR("group must be <id>:<value>: '%s'", s);
		return -1;
	}
	return group_value_parse(end + 1, pol, g, err, errlen);
}

const char *const model_keys[6] = {
	"rbps", "rseqiops", "rrandiops", "wbps", "wseqiops", "wrandiops"
};

/* A cost model's value: 1 to 10^12, as the kernel takes it; *v set only then. */
static int model_value_parse(const char *s, uint64_t *v)
{
	unsigned long long n;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (*end || errno || !n || n > 1000000000000ULL)
		return -1;
	*v = n;
	return 0;
}

/* Six parameters or none. */
static bool model_whole(const uint64_t *m)
{
	int k;

	for (k = 0; k < 6; k++)
		if (!m[k] != !m[0])
			return false;
	return true;
}

/* One "<option>=<value>" of a table line, into @t. */
static int table_option_parse(const char *a, struct ioband_table *t, char *err,
			      size_t errlen)
{
	int k;

	if (!strncmp(a, "bandwidth=", 10)) {
		if (t->bandwidth || parse_u32(a + 10, UINT32_MAX, &t->bandwidth) ||
		    !t->bandwidth) {
			ERR("bad bandwidth in ioband table: '%s'", a);
			return -1;
		}
		return 0;
	}
	for (k = 0; k < 6; k++) {
		size_t n = strlen(model_keys[k]);

		if (strncmp(a, model_keys[k], n) || a[n] != '=')
			continue;
		if (t->model[k] || model_value_parse(a + n + 1, &t->model[k])) {
			ERR("bad cost model value in ioband table: '%s'", a);
			return -1;
		}
		return 0;
	}
	ERR("unknown option in ioband table: '%s'", a);
	return -1;
}

int table_parse(const char *params, struct ioband_table *t, char *err, size_t errlen)
{
	char *copy = xstrdup(params), **argv;
	size_t argc = split_words(copy, &argv), i;
	uint32_t v[3];
	int r = -1, x;

	memset(t, 0, sizeof(*t));
	/*
	 * the options after the groups: bandwidth= and a cost model, each with
	 * a '=' and no ':' (a group's limits have '=' after its "<id>:")
	 */
	for (; argc && strchr(argv[argc - 1], '=') && !strchr(argv[argc - 1], ':'); argc--)
		if (table_option_parse(argv[argc - 1], t, err, errlen))
			goto out;
	if (!model_whole(t->model)) {
		ERR("a cost model needs all of rbps, rseqiops, rrandiops, wbps, wseqiops and wrandiops in ioband table '%s'",
		    params);
		goto out;
	}
	if (argc < 7) {
		ERR("too few arguments (%zu) in ioband table '%s'", argc, params);
		goto out;
	}
	if (strlen(argv[0]) >= sizeof(t->device)) {
		ERR("device '%s' too long", argv[0]);
		goto out;
	}
	strcpy(t->device, argv[0]);
	if (!dg_name_valid(argv[1])) {
		ERR("bad device group id '%s'", argv[1]);
		goto out;
	}
	strcpy(t->dg, argv[1]);
	if (parse_u32(argv[2], IO_LIMIT_MAX, &v[0]) ||
	    parse_u32(argv[3], IO_LIMIT_MAX, &v[1]) ||
	    parse_u32(argv[6], TOKEN_BASE_MAX, &v[2])) {
		ERR("bad number in ioband table '%s'", params);
		goto out;
	}
	t->io_throttle = v[0];
	t->io_limit = v[1];
	t->token_base = v[2];
	x = gtype_parse(argv[4]);
	if (x < 0) {
		ERR("unknown group type '%s'", argv[4]);
		goto out;
	}
	t->type = x;
	x = policy_parse(argv[5]);
	if (x < 0) {
		ERR("unknown policy '%s'", argv[5]);
		goto out;
	}
	t->policy = x;
	t->def.id = DEFAULT_GROUP;
	t->def.weight = DEFAULT_WEIGHT;
	i = 7;
	if (i < argc && argv[i][0] == ':') {
		if (parse_group_arg(argv[i], t->policy, &t->def, true, err, errlen))
			goto out;
		i++;
	}
	t->groups = xmalloc((argc - i) * sizeof(*t->groups));
	for (; i < argc; i++) {
		struct group_conf *g = &t->groups[t->ngroups];

		if (parse_group_arg(argv[i], t->policy, g, false, err, errlen))
			goto out;
		if (g->id == DEFAULT_GROUP) {
			ERR("the default group must be written ':<value>'");
			goto out;
		}
		if (table_find(t, g->id)) {
			ERR("duplicate group id %lld", (long long)g->id);
			goto out;
		}
		t->ngroups++;
	}
	r = 0;
out:
	if (r)
		table_free(t);
	free(argv);
	free(copy);
	return r;
}

static void append(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void append(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (*len + n + 1 > *cap) {
		*cap = (*len + n + 1) * 2;
		*buf = xrealloc(*buf, *cap);
	}
	va_start(ap, fmt);
	vsnprintf(*buf + *len, n + 1, fmt, ap);
	va_end(ap);
	*len += n;
}

static void append_value(char **buf, size_t *len, size_t *cap, enum policy pol,
			 const struct group_conf *g)
{
	char lim[LIMITS_TEXT_MAX];

	if (pol == POL_RANGE_BW)
		append(buf, len, cap, "%u:%u", g->min_kbps, g->max_kbps);
	else
		append(buf, len, cap, "%u", g->weight);
	limits_format(g->limit, limits_set(g->limit), ',', lim, sizeof(lim));
	if (*lim)
		append(buf, len, cap, "/%s", lim);
}

char *table_format(const struct ioband_table *t)
{
	size_t len = 0, cap = 128, i;
	char *buf = xmalloc(cap);

	buf[0] = '\0';
	append(&buf, &len, &cap, "%s %s %u %u %s %s %u :", t->device, t->dg,
	       t->io_throttle, t->io_limit, gtype_names[t->type],
	       policy_names[t->policy], t->token_base);
	append_value(&buf, &len, &cap, t->policy, &t->def);
	for (i = 0; i < t->ngroups; i++) {
		append(&buf, &len, &cap, " %lld:", (long long)t->groups[i].id);
		append_value(&buf, &len, &cap, t->policy, &t->groups[i]);
	}
	if (t->bandwidth)
		append(&buf, &len, &cap, " bandwidth=%u", t->bandwidth);
	for (i = 0; t->model[0] && i < 6; i++)
		append(&buf, &len, &cap, " %s=%llu", model_keys[i],
		       (unsigned long long)t->model[i]);
	return buf;
}

const struct group_conf *table_find(const struct ioband_table *t, int64_t id)
{
	size_t i;

	if (id == DEFAULT_GROUP)
		return &t->def;
	for (i = 0; i < t->ngroups; i++)
		if (t->groups[i].id == id)
			return &t->groups[i];
	return NULL;
}

static bool value_eq(enum policy pol, const struct group_conf *a, const struct group_conf *b)
{
	if (pol == POL_RANGE_BW)
		return a->min_kbps == b->min_kbps && a->max_kbps == b->max_kbps;
	return a->weight == b->weight;
}

static bool limits_eq(const struct group_conf *a, const struct group_conf *b)
{
	return !memcmp(a->limit, b->limit, sizeof(a->limit));
}

/* " (limits K=V,...)" of @g into @buf, "" when it has none */
static const char *limits_note(const struct group_conf *g, char *buf, size_t len)
{
	char lim[LIMITS_TEXT_MAX];

	limits_format(g->limit, limits_set(g->limit), ',', lim, sizeof(lim));
	snprintf(buf, len, "%s", *lim ? lim : "none");
	return buf;
}

/* "NAME (id N)", or "N" when @name has none for it; malloc'ed. */
static char *group_ref(diff_namer name, void *ctx, enum gtype type, int64_t id)
{
	char *n = name ? name(type, id, ctx) : NULL, *r;

	r = n ? xasprintf("%s (id %lld)", n, (long long)id) : xasprintf("%lld", (long long)id);
	free(n);
	return r;
}

char *table_diff(const struct ioband_table *cur, const struct ioband_table *want,
		 diff_namer name, void *ctx)
{
	size_t len = 0, cap = 128, i;
	char *buf = xmalloc(cap), *ref, lim[LIMITS_TEXT_MAX];
	const char *sep = "";

	buf[0] = '\0';
#define DIFF(...) do { append(&buf, &len, &cap, "%s", sep); \
		append(&buf, &len, &cap, __VA_ARGS__); sep = ", "; } while (0)
	if (strcmp(cur->dg, want->dg))
		DIFF("device group %s -> %s", cur->dg, want->dg);
	if (cur->type != want->type)
		DIFF("type %s -> %s", gtype_names[cur->type], gtype_names[want->type]);
	if (cur->policy != want->policy)
		DIFF("policy %s -> %s", policy_names[cur->policy], policy_names[want->policy]);
	if (cur->io_throttle != want->io_throttle)
		DIFF("io_throttle %u -> %u", cur->io_throttle, want->io_throttle);
	if (cur->io_limit != want->io_limit)
		DIFF("io_limit %u -> %u", cur->io_limit, want->io_limit);
	if (cur->token_base != want->token_base)
		DIFF("token_base %u -> %u", cur->token_base, want->token_base);
	if (memcmp(cur->model, want->model, sizeof(cur->model)))
		DIFF("cost model %s", !want->model[0] ? "withdrawn" :
		     cur->model[0] ? "changed" : "given");
	/* weights and ranges are only comparable under the same kind of policy */
	bool kind = (cur->policy == POL_RANGE_BW) != (want->policy == POL_RANGE_BW);

	if (kind || !value_eq(want->policy, &cur->def, &want->def)) {
		if (want->policy == POL_RANGE_BW)
			DIFF("default group %u:%u", want->def.min_kbps, want->def.max_kbps);
		else
			DIFF("default weight %u -> %u", cur->def.weight, want->def.weight);
	}
	if (!limits_eq(&cur->def, &want->def))
		DIFF("default group limits %s", limits_note(&want->def, lim, sizeof(lim)));
	for (i = 0; i < want->ngroups; i++) {
		const struct group_conf *w = &want->groups[i];
		const struct group_conf *c = table_find(cur, w->id);

		ref = group_ref(name, ctx, want->type, w->id);
		if (!c)
			DIFF("attach %s", ref);
		else if (kind || !value_eq(want->policy, c, w)) {
			if (want->policy == POL_RANGE_BW)
				DIFF("group %s %u:%u", ref, w->min_kbps, w->max_kbps);
			else
				DIFF("group %s weight %u -> %u", ref, c->weight, w->weight);
		}
		if (c && !limits_eq(c, w))
			DIFF("group %s limits %s", ref, limits_note(w, lim, sizeof(lim)));
		free(ref);
	}
	for (i = 0; i < cur->ngroups; i++) {
		if (table_find(want, cur->groups[i].id))
			continue;
		ref = group_ref(name, ctx, cur->type, cur->groups[i].id);
		DIFF("detach %s", ref);
		free(ref);
	}
#undef DIFF
	if (!len) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* ---- status lines -------------------------------------------------------- */

void status_free(struct ioband_status *s)
{
	free(s->groups);
	s->groups = NULL;
	s->ngroups = 0;
}

int status_parse(const char *params, struct ioband_status *s, char *err, size_t errlen)
{
	char *copy = xstrdup(params), **argv;
	size_t argc = split_words(copy, &argv), i, j;
	int r = -1;

	memset(s, 0, sizeof(*s));
	if (argc < 8 || (argc - 1) % 7) {
		ERR("unexpected ioband status '%s'", params);
		goto out;
	}
	if (!dg_name_valid(argv[0])) {
		ERR("bad device group id '%s' in status", argv[0]);
		goto out;
	}
	strcpy(s->dg, argv[0]);
	s->groups = xmalloc((argc - 1) / 7 * sizeof(*s->groups));
	for (i = 1; i < argc; i += 7) {
		struct group_stats *g = &s->groups[s->ngroups];
		uint64_t *f[6] = { &g->reads, &g->delayed_reads, &g->read_sectors,
				   &g->writes, &g->delayed_writes, &g->write_sectors };
		const char *end;

		if (parse_id(argv[i], &end, &g->id) || *end) {
			ERR("bad group id '%s' in status", argv[i]);
			goto out;
		}
		for (j = 0; j < 6; j++) {
			if (parse_u64(argv[i + 1 + j], UINT64_MAX, f[j])) {
				ERR("bad counter '%s' in status", argv[i + 1 + j]);
				goto out;
			}
		}
		s->ngroups++;
	}
	r = 0;
out:
	if (r)
		status_free(s);
	free(argv);
	free(copy);
	return r;
}

const struct group_stats *status_find(const struct ioband_status *s, int64_t id)
{
	size_t i;

	for (i = 0; i < s->ngroups; i++)
		if (s->groups[i].id == id)
			return &s->groups[i];
	return NULL;
}

/* ---- latency figures ----------------------------------------------------- */

void latency_free(struct ioband_latency *l)
{
	free(l->groups);
	l->groups = NULL;
	l->ngroups = 0;
}

int latency_parse(const char *text, struct ioband_latency *l, char *err, size_t errlen)
{
	static const char *const counts[1 + LAT_NR] = {
		"timed", "wait_p50", "wait_p99", "dev_p50", "dev_p99"
	};
	char *copy = xstrdup(text), *rest = copy, *line, **argv = NULL;
	size_t lineno = 0, argc, j;
	int r = -1;

	memset(l, 0, sizeof(*l));
	while ((line = strsep(&rest, "\n"))) {
		struct group_latency *g;
		const char *end;

		lineno++;
		free(argv);
		argc = split_words(line, &argv);
		if (!argc)
			continue;
		if (argc != 2 + LAT_NR) {
			ERR("latency line %zu: %zu fields, not 6 (id timed wait_p50 wait_p99 "
			    "dev_p50 dev_p99)", lineno, argc);
			goto out;
		}
		l->groups = xrealloc(l->groups, (l->ngroups + 1) * sizeof(*l->groups));
		g = &l->groups[l->ngroups];
		if (parse_id(argv[0], &end, &g->id) || *end) {
			ERR("latency line %zu: bad id '%s'", lineno, argv[0]);
			goto out;
		}
		for (j = 0; j < 1 + LAT_NR; j++) {
			uint64_t *v = j ? &g->usec[j - 1] : &g->timed;

			if (parse_u64(argv[1 + j], UINT64_MAX, v)) {
				ERR("latency line %zu: bad %s '%s'", lineno, counts[j],
				    argv[1 + j]);
				goto out;
			}
		}
		l->ngroups++;
	}
	if (!l->ngroups) {
		ERR("empty latency answer (not even the default group)");
		goto out;
	}
	r = 0;
out:
	if (r)
		latency_free(l);
	free(argv);
	free(copy);
	return r;
}

const struct group_latency *latency_find(const struct ioband_latency *l, int64_t id)
{
	size_t i;

	for (i = 0; i < l->ngroups; i++)
		if (l->groups[i].id == id)
			return &l->groups[i];
	return NULL;
}

/* ---- values -------------------------------------------------------------- */

const char *const limit_keys[LIM_NR] = {
	"bps", "rbps", "wbps", "iops", "riops", "wiops", "burst"
};

/* A rate: 1 to 2^50, systemd's suffixes K, M, G, T (powers of 1000); "max": 0. */
static int parse_limit_rate(const char *s, uint64_t *out)
{
	const char *end;
	uint64_t v, mul = 1;

	if (!strcmp(s, "max")) {
		*out = 0;
		return 0;
	}
	if (parse_dec(s, &end, LIM_RATE_MAX, &v))
		return -1;
	if (*end) {
		switch (*end) {
		case 'K': mul = 1000ULL; break;
		case 'M': mul = 1000000ULL; break;
		case 'G': mul = 1000000000ULL; break;
		case 'T': mul = 1000000000000ULL; break;
		default: return -1;
		}
		if (end[1])
			return -1;
	}
	if (!v || v > LIM_RATE_MAX / mul)
		return -1;
	*out = v * mul;
	return 0;
}

static int limit_key(const char *s, size_t len)
{
	int k;

	for (k = 0; k < LIM_NR; k++)
		if (strlen(limit_keys[k]) == len && !strncmp(s, limit_keys[k], len))
			return k;
	return -1;
}

int limits_parse(const char *s, uint64_t *lim, unsigned int *given, char *err,
		 size_t errlen)
{
	char *copy = xstrdup(s), *tok, *save = NULL, *eq;
	int r = -1, k;

	*given = 0;
	if (!*s) {
		ERR("no limits after '/'");
		goto out;
	}
	for (tok = strtok_r(copy, ",/", &save); tok; tok = strtok_r(NULL, ",/", &save)) {
		eq = strchr(tok, '=');
		k = eq ? limit_key(tok, eq - tok) : -1;
		if (k < 0) {
			ERR("limits are KEY=VALUE, KEY one of bps rbps wbps iops riops wiops burst, not '%s'",
			    tok);
			goto out;
		}
		if (*given & (1U << k)) {
			ERR("limit %s given twice", limit_keys[k]);
			goto out;
		}
		*given |= 1U << k;
		if (k == LIM_BURST) {
			if (parse_u64(eq + 1, LIM_BURST_MAX, &lim[k])) {
				ERR("burst must be 0 to %d ms, not '%s'", LIM_BURST_MAX, eq + 1);
				goto out;
			}
		} else if (parse_limit_rate(eq + 1, &lim[k])) {
			ERR("%s must be 1 to 2^50 a second (suffix K, M, G or T: powers of 1000) or max, not '%s'",
			    limit_keys[k], eq + 1);
			goto out;
		}
	}
	r = 0;
out:
	free(copy);
	return r;
}

unsigned int limits_set(const uint64_t *lim)
{
	unsigned int m = 0;
	int k;

	for (k = 0; k < LIM_NR; k++)
		if (lim[k])
			m |= 1U << k;
	return m;
}

void limits_format(const uint64_t *lim, unsigned int given, char sep, char *buf,
		   size_t len)
{
	const char sepstr[2] = { sep, '\0' };
	size_t n = 0;
	int k;

	buf[0] = '\0';
	for (k = 0; k < LIM_NR && n < len; k++) {
		if (!(given & (1U << k)))
			continue;
		n += snprintf(buf + n, len - n, "%s%s=", n ? sepstr : "", limit_keys[k]);
		if (n >= len)
			break;
		if (lim[k] || k == LIM_BURST)
			n += snprintf(buf + n, len - n, "%llu", (unsigned long long)lim[k]);
		else
			n += snprintf(buf + n, len - n, "max");
	}
}

static int weight_or_range_parse(const char *s, enum policy pol, struct group_conf *g,
				 char *err, size_t errlen)
{
	if (pol == POL_RANGE_BW) {
		const char *colon = strchr(s, ':');
		char *lo;
		int bad;

		if (!colon) {
			ERR("range must be MIN:MAX in KB/s, not '%s'", s);
			return -1;
		}
		lo = xasprintf("%.*s", (int)(colon - s), s);
		bad = parse_kbps(lo, &g->min_kbps) || parse_kbps(colon + 1, &g->max_kbps);
		free(lo);
		if (bad) {
			ERR("range must be MIN:MAX in KB/s, not '%s'", s);
			return -1;
		}
		if (g->max_kbps && g->min_kbps > g->max_kbps) {
			ERR("minimum bandwidth above maximum in '%s'", s);
			return -1;
		}
		return 0;
	}
	if (parse_u32(s, WEIGHT_MAX, &g->weight) || g->weight < WEIGHT_MIN) {
		ERR("weight must be a number from %d to %d, not '%s'", WEIGHT_MIN, WEIGHT_MAX, s);
		return -1;
	}
	return 0;
}

int group_value_parse(const char *s, enum policy pol, struct group_conf *g,
		      char *err, size_t errlen)
{
	const char *slash = strchr(s, '/');
	unsigned int given;
	char *value;
	int r;

	memset(g->limit, 0, sizeof(g->limit));
	if (!slash)
		return weight_or_range_parse(s, pol, g, err, errlen);
	value = xasprintf("%.*s", (int)(slash - s), s);
	r = weight_or_range_parse(value, pol, g, err, errlen);
	free(value);
	return r ? r : limits_parse(slash + 1, g->limit, &given, err, errlen);
}

/* One token of set's VALUE into @v; 0, or -1 with err. */
static int set_token_parse(const char *tok, struct set_value *v, bool *have_min,
			   bool *have_max, char *err, size_t errlen)
{
	struct group_conf *g = &v->g;
	unsigned int given;

	if (!strncmp(tok, "weight=", 7) && !v->has_weight) {
		v->has_weight = true;
		return weight_or_range_parse(tok + 7, POL_WEIGHT, g, err, errlen);
	}
	if (!strncmp(tok, "min=", 4) && !*have_min) {
		*have_min = v->has_range = true;
		if (!parse_kbps(tok + 4, &g->min_kbps))
			return 0;
		ERR("min must be a bandwidth in KB/s (suffix k, m or g allowed), not '%s'", tok + 4);
		return -1;
	}
	if (!strncmp(tok, "max=", 4) && !*have_max) {
		*have_max = v->has_range = true;
		if (!parse_kbps(tok + 4, &g->max_kbps))
			return 0;
		ERR("max must be a bandwidth in KB/s (suffix k, m or g allowed), not '%s'", tok + 4);
		return -1;
	}
	if (!strncmp(tok, "weight=", 7) || !strncmp(tok, "min=", 4) ||
	    !strncmp(tok, "max=", 4)) {
		ERR("%.*s given twice", (int)(strchr(tok, '=') - tok), tok);
		return -1;
	}
	if (!strchr(tok, '=') || limit_key(tok, strchr(tok, '=') - tok) < 0) {
		ERR("expected weight=W, min=MIN,max=MAX or limits (KEY=VALUE, KEY one of bps rbps wbps iops riops wiops burst), not '%s'",
		    tok);
		return -1;
	}
	if (limits_parse(tok, g->limit, &given, err, errlen))
		return -1;
	if (v->limits_given & given) {
		ERR("limit %s given twice", limit_keys[__builtin_ctz(v->limits_given & given)]);
		return -1;
	}
	v->limits_given |= given;
	return 0;
}

int set_value_parse(const char *s, struct set_value *v, char *err, size_t errlen)
{
	char *copy, *tok, *save = NULL;
	bool have_min = false, have_max = false;
	int r = -1;

	memset(v, 0, sizeof(*v));
	copy = xstrdup(s);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (set_token_parse(tok, v, &have_min, &have_max, err, errlen))
			goto out;
	if (!v->has_weight && !v->has_range && !v->limits_given) {
		ERR("expected weight=W, min=MIN,max=MAX or limits (riops=500,wbps=20M), not '%s'",
		    s);
		goto out;
	}
	if (v->has_weight && v->has_range) {
		ERR("a weight and a range at once: set one, then the other");
		goto out;
	}
	if (v->g.max_kbps && v->g.min_kbps > v->g.max_kbps) {
		ERR("min %u KB/s is above max %u KB/s", v->g.min_kbps, v->g.max_kbps);
		goto out;
	}
	r = 0;
out:
	free(copy);
	return r;
}

/* Whether @s, up to its end or a '/', is a weight or MIN:MAX: digits and ':' */
static bool starts_value(const char *s)
{
	size_t n = strcspn(s, "/");

	return n && strspn(s, "0123456789:kKmMgG") == n;
}

int split_spec_value(const char *s, char **spec, char **value)
{
	const char *eq;

	for (eq = strchr(s, '='); eq; eq = strchr(eq + 1, '='))
		if (eq != s && starts_value(eq + 1))
			break;
	if (!eq)
		return -1;
	*spec = xasprintf("%.*s", (int)(eq - s), s);
	*value = xstrdup(eq + 1);
	return 0;
}

/* ---- GROUP specs --------------------------------------------------------- */

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

int group_spec_resolve(enum gtype type, const char *spec, const struct resolver *r,
		       int64_t *id, char *err, size_t errlen)
{
	uint64_t v;

	if (!*spec) {
		ERR("empty GROUP");
		return EX_USAGE;
	}
	if (!strcmp(spec, "default") || !strcmp(spec, "-1")) {
		*id = DEFAULT_GROUP;
		return 0;
	}
	switch (type) {
	case GT_NONE:
		ERR("'%s': group type none has only the default group", spec);
		return EX_USAGE;
	case GT_USER:
	case GT_GID: {
		const char *what = type == GT_USER ? "user" : "group";

		if ((type == GT_USER ? r->user_by_name : r->group_by_name)(spec, id) == 0)
			return 0;
		if (!all_digits(spec)) {
			ERR("no %s named '%s'", what, spec);
			return EX_NOTFOUND;
		}
		if (parse_u64(spec, (uint64_t)gid_max(type), &v)) {
			ERR("%s id '%s' out of range (0 to %lld)", what, spec,
			    (long long)gid_max(type));
			return EX_USAGE;
		}
		*id = v;
		return 0;
	}
	case GT_PID:
	case GT_PGRP:
		if (!all_digits(spec)) {
			ERR("'%s' is not a %s (a number from 1 to %lld)", spec,
			    type == GT_PID ? "process id" : "process group id",
			    (long long)gid_max(type));
			return EX_USAGE;
		}
		if (parse_u64(spec, (uint64_t)gid_max(type), &v) || v < 1) {
			ERR("%s '%s' out of range (1 to %lld)",
			    type == GT_PID ? "process id" : "process group id", spec,
			    (long long)gid_max(type));
			return EX_USAGE;
		}
		*id = v;
		return 0;
	case GT_CGROUP:
	case GT_CGROUP_TREE: {
		const char *root = r->cgroup_root ? r->cgroup_root : "/sys/fs/cgroup";
		char *path;
		int rc;

		if (all_digits(spec)) {
			if (parse_u64(spec, INT64_MAX, &v) || v < 1) {
				ERR("cgroup id '%s' out of range (1 to %lld)", spec,
				    (long long)INT64_MAX);
				return EX_USAGE;
			}
			*id = v;
			return 0;
		}
		path = cgroup_spec_path(spec, root);
		rc = r->cgroup_by_path(path + 1, id);
		if (rc) {
			ERR("no cgroup '%s' (looked for %s%s)", spec, root,
			    strcmp(path, "/") ? path : "");
			free(path);
			return EX_NOTFOUND;
		}
		free(path);
		return 0;
	}
	default:
		break;
	}
	ERR("unknown group type");
	return EX_USAGE;
}

/* ---- logical volumes ----------------------------------------------------- */

int lv_dm_name(const char *vg_lv, char *out, size_t outlen, char *err, size_t errlen)
{
	const char *s = vg_lv, *slash;
	size_t n = 0;
	int part;

	if (!strncmp(s, "/dev/", 5))
		s += 5;
	slash = strchr(s, '/');
	if (!slash || slash == s || !slash[1] || strchr(slash + 1, '/')) {
		ERR("'%s' is not VG/LV", vg_lv);
		return -1;
	}
	for (part = 0; part < 2; part++) {
		const char *p = part ? slash + 1 : s, *e = part ? p + strlen(p) : slash;

		if (part) {
			if (n + 1 >= outlen)
				goto toolong;
			out[n++] = '-';
		}
		for (; p < e; p++) {
			if (!isalnum((unsigned char)*p) && !strchr("+_.-", *p)) {
				ERR("'%s': volume group and logical volume names hold only letters, digits and +_.-",
				    vg_lv);
				return -1;
			}
			if (n + 2 >= outlen)
				goto toolong;
			out[n++] = *p;
			if (*p == '-')
				out[n++] = '-';
		}
	}
	out[n] = '\0';
	return 0;
toolong:
	ERR("'%s': name too long", vg_lv);
	return -1;
}

/* ---- setup options and /etc/iobandtab ------------------------------------ */

void lv_default_dg(const char *vg_lv, const char *dm, char *out, size_t outlen)
{
	const char *s = strncmp(vg_lv, "/dev/", 5) ? vg_lv : vg_lv + 5;
	size_t n = strcspn(s, "/");

	if (n < outlen) {
		memcpy(out, s, n);
		out[n] = '\0';
		if (dg_name_valid(out))
			return;
	}
	snprintf(out, outlen, "%s", dm);
}

void setup_opts_init(struct setup_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->type = -1;
	o->policy = -1;
	o->io_throttle = o->io_limit = o->token_base = o->carryover = -1;
}

void setup_opts_free(struct setup_opts *o)
{
	size_t i;

	for (i = 0; i < o->ngroups; i++) {
		free(o->groups[i].spec);
		free(o->groups[i].value);
	}
	free(o->groups);
	o->groups = NULL;
	o->ngroups = 0;
}

int setup_opts_add_group(struct setup_opts *o, const char *spec_value, char *err, size_t errlen)
{
	struct tab_group g;

	if (split_spec_value(spec_value, &g.spec, &g.value)) {
		ERR("group must be SPEC=VALUE, not '%s'", spec_value);
		return -1;
	}
	o->groups = xrealloc(o->groups, (o->ngroups + 1) * sizeof(*o->groups));
	o->groups[o->ngroups++] = g;
	return 0;
}

static int cost_model_set(struct setup_opts *o, const char *val, char *err, size_t errlen);

int setup_opts_set(struct setup_opts *o, const char *key, const char *val,
		   char *err, size_t errlen)
{
	static const struct {
		const char *key;
		size_t off;
		uint32_t min, max;
	} nums[] = {
		{ "io-throttle", offsetof(struct setup_opts, io_throttle), 0, IO_LIMIT_MAX },
		{ "io-limit", offsetof(struct setup_opts, io_limit), 0, IO_LIMIT_MAX },
		{ "token-base", offsetof(struct setup_opts, token_base), 0, TOKEN_BASE_MAX },
		{ "carryover", offsetof(struct setup_opts, carryover), 0, CARRYOVER_MAX },
	};
	size_t i;
	int x;

	for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		uint32_t v;

		if (strcmp(key, nums[i].key))
			continue;
		if (parse_u32(val, nums[i].max, &v) || v < nums[i].min) {
			ERR("%s must be a number from %u to %u, not '%s'", key,
			    nums[i].min, nums[i].max, val);
			return -1;
		}
		*(int64_t *)((char *)o + nums[i].off) = v;
		return 0;
	}
	if (!strcmp(key, "type")) {
		x = gtype_parse(val);
		if (x < 0) {
			ERR("unknown group type '%s' (none, user, uid, gid, pid, pgrp, cgroup, cgroup-tree)", val);
			return -1;
		}
		o->type = x;
		return 0;
	}
	if (!strcmp(key, "policy")) {
		x = policy_parse(val);
		if (x < 0) {
			ERR("unknown policy '%s' (weight-time, weight, weight-iosize, range-bw)", val);
			return -1;
		}
		o->policy = x;
		return 0;
	}
	if (!strcmp(key, "weight")) {
		if (parse_u32(val, WEIGHT_MAX, &o->weight) || o->weight < WEIGHT_MIN) {
			ERR("weight must be a number from %d to %d, not '%s'", WEIGHT_MIN,
			    WEIGHT_MAX, val);
			return -1;
		}
		o->has_weight = true;
		return 0;
	}
	if (!strcmp(key, "device-group")) {
		if (!dg_name_valid(val)) {
			ERR("device group id '%s' must be 1 to %d letters, digits, '_', '-' or '.'",
			    val, DG_NAME_MAX);
			return -1;
		}
		o->dg = val;
		return 0;
	}
	if (!strcmp(key, "group"))
		return setup_opts_add_group(o, val, err, errlen);
	for (x = 0; x < 6; x++) {
		if (strcmp(key, model_keys[x]))
			continue;
		if (o->model[x]) {
			ERR("%s given twice", key);
			return -1;
		}
		if (model_value_parse(val, &o->model[x])) {
			ERR("%s must be a number from 1 to 1000000000000, not '%s'", key, val);
			return -1;
		}
		return 0;
	}
	if (!strcmp(key, "cost-model"))
		return cost_model_set(o, val, err, errlen);
	ERR("unknown option '%s'", key);
	return -1;
}

/* --cost-model rbps=N,rseqiops=N,...: the six keys, each as its own option. */
static int cost_model_set(struct setup_opts *o, const char *val, char *err, size_t errlen)
{
	char *copy = xstrdup(val), *tok, *save, *eq;
	int r = 0;

	for (tok = strtok_r(copy, ",", &save); tok && !r; tok = strtok_r(NULL, ",", &save)) {
		eq = strchr(tok, '=');
		if (!eq) {
			ERR("cost model must be rbps=N,rseqiops=N,rrandiops=N,wbps=N,wseqiops=N,wrandiops=N, not '%s'",
			    val);
			r = -1;
			break;
		}
		*eq = '\0';
		if (!strcmp(tok, "cost-model")) {
			ERR("unknown cost model parameter 'cost-model'");
			r = -1;
			break;
		}
		r = setup_opts_set(o, tok, eq + 1, err, errlen);
	}
	free(copy);
	return r;
}

int opts_to_table(const struct setup_opts *o, const char *device, const char *default_dg,
		  const struct ioband_table *cur, const int64_t *ids,
		  struct ioband_table *t, char *err, size_t errlen)
{
	const char *dg = o->dg ? o->dg : default_dg;
	bool have_def = o->has_weight;
	size_t i, j;

	memset(t, 0, sizeof(*t));
	if (strlen(device) >= sizeof(t->device)) {
		ERR("device '%s' too long", device);
		return -1;
	}
	strcpy(t->device, device);
	if (!dg || !dg_name_valid(dg)) {
		ERR("'%s' cannot be a device group id (1 to %d letters, digits, '_', '-' or '.'): give one with --device-group",
		    dg ? dg : "", DG_NAME_MAX);
		return -1;
	}
	strcpy(t->dg, dg);
	t->type = o->type >= 0 ? (enum gtype)o->type : GT_NONE;
	/* Device group settings: given, else those in force, else the defaults. */
	t->policy = o->policy >= 0 ? (enum policy)o->policy : cur ? cur->policy : DEFAULT_POLICY;
	t->io_limit = o->io_limit >= 0 ? o->io_limit : cur ? cur->io_limit : 0;
	if (!t->io_limit)
		t->io_limit = 128;
	t->io_throttle = o->io_throttle >= 0 ? o->io_throttle :
			 cur && cur->io_throttle <= t->io_limit ? cur->io_throttle : 0;
	t->token_base = o->token_base >= 0 ? o->token_base : cur ? cur->token_base : 0;
	if (!t->token_base)
		t->token_base = 256;
	t->bandwidth = cur ? cur->bandwidth : 0;
	if (!model_whole(o->model)) {
		ERR("a cost model needs all of rbps, rseqiops, rrandiops, wbps, wseqiops and wrandiops");
		return -1;
	}
	if (o->model[0])
		memcpy(t->model, o->model, sizeof(t->model));
	else if (cur)
		memcpy(t->model, cur->model, sizeof(t->model));
	if (t->io_throttle > t->io_limit) {
		ERR("io-throttle %u must not exceed io-limit %u", t->io_throttle, t->io_limit);
		return -1;
	}
	t->def.id = DEFAULT_GROUP;
	t->def.weight = o->has_weight ? o->weight : DEFAULT_WEIGHT;
	if (t->policy == POL_RANGE_BW && o->has_weight) {
		ERR("the table of a range-bw device holds ranges, not weights: give the default group's range as default=MIN:MAX (weights are set with 'set NAME GROUP weight=W')");
		return -1;
	}
	t->groups = xmalloc(o->ngroups * sizeof(*t->groups));
	for (i = 0; i < o->ngroups; i++) {
		struct group_conf g = { .id = ids[i], .weight = DEFAULT_WEIGHT };
		char why[256];

		if (group_value_parse(o->groups[i].value, t->policy, &g, why, sizeof(why))) {
			ERR("group %s: %s", o->groups[i].spec, why);
			goto bad;
		}
		if (g.id == GROUP_ABSENT)
			continue;
		if (g.id == DEFAULT_GROUP) {
			if (have_def) {
				ERR("the default group is given twice");
				goto bad;
			}
			have_def = true;
			t->def = g;
			continue;
		}
		if (!gid_in_range(t->type, g.id)) {
			if (t->type == GT_NONE)
				ERR("group %s: group type none has only the default group",
				    o->groups[i].spec);
			else
				ERR("group %s: id %lld out of range for group type %s",
				    o->groups[i].spec, (long long)g.id, gtype_names[t->type]);
			goto bad;
		}
		for (j = 0; j < t->ngroups; j++) {
			if (t->groups[j].id == g.id) {
				ERR("group %s is given twice (id %lld)", o->groups[i].spec,
				    (long long)g.id);
				goto bad;
			}
		}
		t->groups[t->ngroups++] = g;
	}
	return 0;
bad:
	table_free(t);
	return -1;
}

void tab_entry_free(struct tab_entry *e)
{
	free(e->name);
	free(e->device);
	free(e->strings);
	setup_opts_free(&e->opts);
	memset(e, 0, sizeof(*e));
}

void tab_put_field(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = *s;

		if (c <= ' ' || c == '#' || c == '\\' || c == 0x7f)
			fprintf(f, "\\%03o", c);
		else
			fputc(c, f);
	}
}

bool tab_device_is_tag(const char *s)
{
	static const char *const tags[] = { "UUID=", "LABEL=", "PARTUUID=", "PARTLABEL=" };
	size_t i;

	for (i = 0; i < sizeof(tags) / sizeof(tags[0]); i++)
		if (!strncmp(s, tags[i], strlen(tags[i])) && s[strlen(tags[i])])
			return true;
	return false;
}

int tab_unescape(char *s)
{
	char *d = s;

	while (*s) {
		if (*s == '\\') {
			if (s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
			    s[3] >= '0' && s[3] <= '7') {
				*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
				s += 4;
				continue;
			}
			if (s[1] == '\\') {
				*d++ = '\\';
				s += 2;
				continue;
			}
			return -1;
		}
		*d++ = *s++;
	}
	*d = '\0';
	return 0;
}

int tab_parse_line(const char *line, int lineno, struct tab_entry *e, char *err, size_t errlen)
{
	char *copy = xstrdup(line), **argv, *hash, *tok, *save = NULL;
	size_t argc, i;
	int r = -1;

	memset(e, 0, sizeof(*e));
	setup_opts_init(&e->opts);
	e->lineno = lineno;
	hash = strchr(copy, '#');
	if (hash)
		*hash = '\0';
	argc = split_words(copy, &argv);
	if (argc == 0) {
		r = 0;
		goto out;
	}
	if (argc < 2 || argc > 3) {
		ERR("line %d: expected NAME DEVICE [OPTIONS], found %zu field%s", lineno,
		    argc, argc == 1 ? "" : "s");
		goto out;
	}
	for (i = 0; i < argc; i++) {
		if (tab_unescape(argv[i])) {
			ERR("line %d: bad escape in '%s' (write \\ooo octal, e.g. \\040 for a blank)",
			    lineno, argv[i]);
			goto out;
		}
	}
	e->name = xstrdup(argv[0]);
	e->device = xstrdup(argv[1]);
	e->wrap = !strcmp(argv[1], "wrap");
	if (e->wrap) {
		char dm[DM_NAME_MAX + 1], why[256];

		if (lv_dm_name(e->name, dm, sizeof(dm), why, sizeof(why))) {
			ERR("line %d: %s (a wrap line names a logical volume VG/LV)", lineno, why);
			goto out;
		}
	} else {
		if (!dm_name_valid(e->name)) {
			ERR("line %d: '%s' is not a valid device name (1 to %d characters, no '/' or blanks)",
			    lineno, e->name, DM_NAME_MAX);
			goto out;
		}
		if (e->device[0] != '/' && !tab_device_is_tag(e->device)) {
			ERR("line %d: device '%s' must be an absolute path, UUID=, LABEL=, PARTUUID= or PARTLABEL= (or 'wrap')",
			    lineno, e->device);
			goto out;
		}
	}
	if (argc == 3 && strcmp(argv[2], "-")) {
		e->strings = xstrdup(argv[2]);
		for (tok = strtok_r(e->strings, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			char *eq = strchr(tok, '='), why[256];

			if (!strcmp(tok, "nofail")) {
				e->nofail = true;
				continue;
			}
			if (!eq || eq == tok) {
				ERR("line %d: option '%s' must be KEY=VALUE", lineno, tok);
				goto out;
			}
			*eq = '\0';
			if (setup_opts_set(&e->opts, tok, eq + 1, why, sizeof(why))) {
				ERR("line %d: %s", lineno, why);
				goto out;
			}
		}
	}
	r = 1;
out:
	if (r < 0)
		tab_entry_free(e);
	else if (r == 0) {
		setup_opts_free(&e->opts);
		free(e->name);
		free(e->device);
		free(e->strings);
		e->name = e->device = e->strings = NULL;
	}
	free(argv);
	free(copy);
	return r;
}

/* ---- JSON ---------------------------------------------------------------- */

void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

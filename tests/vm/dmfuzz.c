// SPDX-License-Identifier: GPL-2.0
/*
 * dmfuzz: feed generated table lines and messages to a live ioband device
 * through the kernel's own entry points (DM_TABLE_LOAD, then a resume, and
 * DM_TARGET_MSG), so that every byte goes through device-mapper's own
 * argument splitting (dm_split_args(): any of ' ' \t \n \v \f \r and 0xA0
 * ends a word, a backslash quotes the next byte) before ioband's parser.
 *
 *   dmfuzz SEED COUNT NAME DEVICE SECTORS [CORPUS-FILE...]
 *
 * NAME is the ioband device (one target of SECTORS sectors over DEVICE,
 * given as MAJOR:MINOR, the way its table prints it).  Inputs are the
 * corpus entries (files of tests/fuzz/corpus, one entry each; or
 * tests/vm/t/bad-input.corpus, one "KIND<TAB>reason<TAB>input" entry a
 * line) and well-formed lines made from the device's current state, each
 * mutated 0-4 times: byte flips, words inserted, deleted, duplicated or
 * spliced from another entry, separators swapped among the set above,
 * numbers replaced by edge values (0, -1, 2^32, 2^63, 2^64, overlong digit
 * strings), backslashes inserted, words made very long.  A table line's
 * device word is never mutated into another device: it is kept (maybe
 * with backslashes that the kernel removes) or replaced by a bad one.
 *
 * The expected outcome of each input comes from a model written from the
 * documented grammar (Documentation/ioband.rst), not from the target's
 * parser: the input is split as dm_split_args() does and checked field by
 * field.  For every input the kernel must agree with the model on whether
 * it is refused (and, for messages, with which errno), and afterwards
 *   - the table (DM_TABLE_STATUS) and the IMA status line, which carries
 *     the carryover, equal the model's state printed as the target prints
 *     it; after a refused input they are also byte-identical to before;
 *   - there is no inactive table (a refused load leaves none, an accepted
 *     one was resumed) and the group ids of the status line are the
 *     model's: checked after each table line and every eighth input.
 * The initial model is the device's table read back through the model's
 * table parser, so the printed table must be a valid table line.  The
 * first disagreement is printed with the input (C-escaped) and its number;
 * the same SEED replays the same inputs.  Exit status 0 when all COUNT
 * inputs agreed, 1 on a disagreement, 2 on a setup error.  The last line
 * of stdout counts the inputs: "N inputs: T tables (A accepted), M
 * messages (B accepted)".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <linux/dm-ioctl.h>

typedef uint64_t u64;
typedef int64_t s64;
typedef uint32_t u32;

#define IO_SIZE		(4 << 20)	/* ioctl buffer */
#define STATUS_SIZE	(4 << 10)	/* what a status is asked with first */
#define IN_MAX		(256 << 10)	/* bytes in one input */
#define ARGS_MAX	(IN_MAX / 2 + 1)
#define GROUPS_MAX	65536
#define SEEDS_MAX	4096

/* ---- random numbers (xorshift64*) -------------------------------------- */

static u64 rng_state;

static u64 rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static unsigned int rn(unsigned int n)
{
	return n ? rnd() % n : 0;
}

/* ---- the model ------------------------------------------------------------ */

enum { POL_WEIGHT, POL_IOSIZE, POL_RANGE, POL_TIME, NR_POL };
enum { T_NONE, T_USER, T_GID, T_PID, T_PGRP, T_CGROUP, T_CGROUP_TREE, NR_T };

static const char *const pol_names[NR_POL] = {
	"weight", "weight-iosize", "range-bw", "weight-time"
};
static const char *const type_names[NR_T] = {
	"none", "user", "gid", "pid", "pgrp", "cgroup", "cgroup-tree"
};

/* io.max's kinds, in the order the target prints them */
static const char *const limit_keys[6] = {
	"bps", "rbps", "wbps", "iops", "riops", "wiops"
};

struct grp {
	s64 id;
	u32 weight, min, max;
	u64 lim[6];	/* rates, 0: none */
	u32 burst;	/* ms */
};

static const char *const model_keys[6] = {
	"rbps", "rseqiops", "rrandiops", "wbps", "wseqiops", "wrandiops"
};

struct state {
	char dg[32];
	u32 throttle, limit, token_base, bandwidth, carryover;
	u64 model[6];	/* weight-time's cost model, all 0: none */
	int policy, type;
	struct grp def;
	u32 n;
	struct grp *g;	/* GROUPS_MAX, in id order */
};

static void state_copy(struct state *to, const struct state *from)
{
	struct grp *g = to->g;

	*to = *from;
	to->g = g;
	memcpy(g, from->g, from->n * sizeof(*g));
}

static int is_sep(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

/*
 * Splits @s in place as device-mapper does: words end at a separator, a
 * backslash takes the next byte literally (a last backslash is itself).
 */
static int split(char *s, char **argv)
{
	int argc = 0;
	char *out;

	for (;;) {
		while (is_sep(*s))
			s++;
		if (!*s)
			return argc;
		argv[argc++] = out = s;
		while (*s && !is_sep(*s)) {
			if (*s == '\\' && s[1])
				s++;
			*out++ = *s++;
		}
		if (*s)
			s++;
		*out = 0;
	}
}

/* Decimal digits only, all of @s up to @end (or its end), at most @max. */
static int number(const char *s, const char **end, u64 max, u64 *val)
{
	unsigned __int128 v = 0;
	const char *p = s;

	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (*p - '0');
		if (v > max)
			return -1;
		p++;
	}
	if (p == s)
		return -1;
	if (end)
		*end = p;
	else if (*p)
		return -1;
	*val = v;
	return 0;
}

static int number32(const char *s, u32 lo, u32 hi, u32 *val)
{
	u64 v;

	if (number(s, NULL, hi, &v) || v < lo)
		return -1;
	*val = v;
	return 0;
}

static int name_index(const char *const *names, int n, const char *s)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

static int type_of(const char *s)
{
	return strcmp(s, "uid") ? name_index(type_names, NR_T, s) : T_USER;
}

/* A group id: "-1" (the default group) or digits, up to S64_MAX. */
static int group_id(const char *s, const char **end, s64 *id)
{
	u64 v;

	if (s[0] == '-') {
		if (s[1] != '1' || (s[2] >= '0' && s[2] <= '9'))
			return -1;
		*end = s + 2;
		*id = -1;
		return 0;
	}
	if (number(s, end, INT64_MAX, &v))
		return -1;
	*id = v;
	return 0;
}

static int id_fits(int type, s64 id)
{
	switch (type) {
	case T_USER:
	case T_GID:
		return id >= 0 && id < 0xffffffffLL;
	case T_PID:
	case T_PGRP:
		return id >= 1 && id <= 4 * 1024 * 1024;
	case T_CGROUP:
	case T_CGROUP_TREE:
		return id >= 1;
	}
	return 0;
}

/*
 * "key=value[,key=value]..." after a group's '/': rates of limit_keys (or
 * "max" for none) and burst=<ms>, each key once.  Sets the keys it names
 * in @g and their bits in *given (bit 6: burst); -1 if bad.
 */
static int group_limits(const char *s, struct grp *g, unsigned int *given)
{
	struct grp v = *g;
	unsigned int seen = 0;
	u64 val;

	for (;;) {
		const char *eq = strchr(s, '='), *end;
		size_t len = eq ? (size_t)(eq - s) : 0;
		int k;

		for (k = 0; k < 7; k++)
			if (len == strlen(k < 6 ? limit_keys[k] : "burst") &&
			    !strncmp(s, k < 6 ? limit_keys[k] : "burst", len))
				break;
		if (k == 7 || (seen & 1u << k))
			return -1;
		seen |= 1u << k;
		if (k < 6 && !strncmp(eq + 1, "max", 3)) {
			v.lim[k] = 0;
			end = eq + 4;
		} else if (k < 6) {
			if (number(eq + 1, &end, 1ULL << 50, &val) || !val)
				return -1;
			v.lim[k] = val;
		} else {
			if (number(eq + 1, &end, 60000, &val))
				return -1;
			v.burst = val;
		}
		if (!*end)
			break;
		if (*end != ',')
			return -1;
		s = end + 1;
	}
	*g = v;
	*given = seen;
	return 0;
}

/*
 * A weight, or "min:max" in KB/s (max 0: no cap) under range-bw, then
 * '/' and limits or nothing.  *given as group_limits() sets it (0: none).
 */
static int group_value(int range, const char *s, struct grp *g,
		       unsigned int *given)
{
	const char *end;
	u64 lo, hi, w;

	*given = 0;
	if (!range) {
		if (number(s, &end, 10000, &w) || w < 1)
			return -1;
		g->weight = w;
	} else {
		if (number(s, &end, 0xffffffffULL, &lo) || *end != ':' ||
		    number(end + 1, &end, 0xffffffffULL, &hi) ||
		    (hi && lo > hi))
			return -1;
		g->min = lo;
		g->max = hi;
	}
	if (!*end)
		return 0;
	return *end == '/' ? group_limits(end + 1, g, given) : -1;
}

static void grp_init(struct grp *g, s64 id)
{
	g->id = id;
	g->weight = 100;
	g->min = 0;
	g->max = 0;
	memset(g->lim, 0, sizeof(g->lim));
	g->burst = 0;
}

static u64 min_sum(const struct state *s)
{
	u64 sum = s->def.min;
	u32 i;

	for (i = 0; i < s->n; i++)
		sum += s->g[i].min;
	return sum;
}

static int cmp_grp(const void *a, const void *b)
{
	s64 x = ((const struct grp *)a)->id, y = ((const struct grp *)b)->id;

	return x < y ? -1 : x > y;
}

/* 0 stands for the setting's default in a table line. */
static int setting(const char *s, u32 max, u32 def, u32 *val)
{
	if (number32(s, 0, max, val))
		return -1;
	if (!*val)
		*val = def;
	return 0;
}

/* "<key>=<value>" of a cost model into @model: 1 if no key, -1 if bad. */
static int model_param(const char *a, u64 *model)
{
	unsigned int k;

	for (k = 0; k < 6; k++) {
		size_t n = strlen(model_keys[k]);

		if (strncmp(a, model_keys[k], n) || a[n] != '=')
			continue;
		if (model[k] || number(a + n + 1, NULL, 1000000000000ULL,
				       &model[k]) || !model[k])
			return -1;
		return 0;
	}
	return 1;
}

/* Six parameters or none. */
static int model_whole(const u64 *model)
{
	int k, n = 0;

	for (k = 0; k < 6; k++)
		n += !!model[k];
	return n == 0 || n == 6 ? 0 : -1;
}

/*
 * The target's arguments after its device word: <dg> <io_throttle>
 * <io_limit> <type> <policy> <token_base> [:<value>] [<id>:<value>]...
 * [<option>=<value>]... (bandwidth= and a cost model, in any order).
 * Fills @t (but its carryover) when they are valid.
 */
static int model_table(int argc, char **argv, struct state *t)
{
	const char *bw = "bandwidth=";
	unsigned int given;
	size_t len;
	int i;

	t->bandwidth = 0;
	memset(t->model, 0, sizeof(t->model));
	/* options start with a letter; a group's limits hold '=' too */
	for (; argc && argv[argc - 1][0] >= 'a' && argv[argc - 1][0] <= 'z' &&
	       strchr(argv[argc - 1], '='); argc--) {
		const char *a = argv[argc - 1];

		if (strncmp(a, bw, strlen(bw))) {
			if (model_param(a, t->model))
				return -1;
		} else if (t->bandwidth ||
			   number32(a + strlen(bw), 1, 0xffffffffU, &t->bandwidth)) {
			return -1;
		}
	}
	if (model_whole(t->model))
		return -1;
	if (argc < 6 || argc - 7 > GROUPS_MAX)
		return -1;
	len = strlen(argv[0]);
	if (!len || len > 31 || strspn(argv[0], "abcdefghijklmnopqrstuvwxyz"
			"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") != len)
		return -1;
	strcpy(t->dg, argv[0]);
	if (setting(argv[1], 65536, 0, &t->throttle) ||
	    setting(argv[2], 65536, 128, &t->limit) ||
	    t->throttle > t->limit)
		return -1;
	t->type = type_of(argv[3]);
	t->policy = name_index(pol_names, NR_POL, argv[4]);
	if (t->type < 0 || t->policy < 0 ||
	    setting(argv[5], 1048576, 256, &t->token_base))
		return -1;
	grp_init(&t->def, -1);
	i = 6;
	if (i < argc && argv[i][0] == ':') {
		if (group_value(t->policy == POL_RANGE, argv[i] + 1, &t->def,
				&given))
			return -1;
		i++;
	}
	for (t->n = 0; i < argc; i++) {
		struct grp *g = &t->g[t->n];
		const char *end;
		s64 id;

		if (t->n == GROUPS_MAX || group_id(argv[i], &end, &id) ||
		    id < 0 || *end != ':' || !id_fits(t->type, id))
			return -1;
		grp_init(g, id);
		if (group_value(t->policy == POL_RANGE, end + 1, g, &given))
			return -1;
		t->n++;
	}
	qsort(t->g, t->n, sizeof(*t->g), cmp_grp);
	for (i = 1; i < (int)t->n; i++)
		if (t->g[i].id == t->g[i - 1].id)
			return -1;
	return t->bandwidth && min_sum(t) > t->bandwidth ? -1 : 0;
}

/* The limits @given (group_limits()'s bits) of @v, into @g. */
static void grp_take_limits(struct grp *g, const struct grp *v,
			    unsigned int given)
{
	int k;

	for (k = 0; k < 6; k++)
		if (given & 1u << k)
			g->lim[k] = v->lim[k];
	if (given & 1u << 6)
		g->burst = v->burst;
}

static struct grp *find(struct state *s, s64 id)
{
	struct grp key = { .id = id };

	if (id == -1)
		return &s->def;
	return bsearch(&key, s->g, s->n, sizeof(*s->g), cmp_grp);
}

/* Applies message @argv to @s; the errno the target must give, or 0. */
static int model_message(int argc, char **argv, struct state *s)
{
	static const struct {
		const char *name;
		u32 lo, hi;
	} settings[] = {
		{ "token", 1, 1048576 }, { "carryover", 0, 100 },
		{ "io_throttle", 0, 65536 }, { "io_limit", 1, 65536 },
		{ "bandwidth", 0, 0xffffffffU },
	};
	struct state c;
	const char *end;
	struct grp *g, v;
	unsigned int i, given;
	s64 id;
	u32 val;

	if (!argc)
		return EINVAL;
	if (!strcmp(argv[0], "weight") || !strcmp(argv[0], "range-bw")) {
		int range = argv[0][0] == 'r';
		const char *a = argc == 2 ? argv[1] : "";
		const char *colon = strchr(a, ':');

		if (argc != 2)
			return EINVAL;
		id = -1;
		if (colon && (!range || strchr(colon + 1, ':'))) {
			if (group_id(a, &end, &id) || *end != ':')
				return EINVAL;
			a = end + 1;
		}
		grp_init(&v, id);
		if (group_value(range, a, &v, &given))
			return EINVAL;
		g = find(s, id);
		if (!g)
			return ENOENT;
		if (range && s->bandwidth &&
		    min_sum(s) - g->min + v.min > s->bandwidth)
			return EINVAL;
		if (range) {
			g->min = v.min;
			g->max = v.max;
		} else {
			g->weight = v.weight;
		}
		grp_take_limits(g, &v, given);
		return 0;
	}
	if (!strcmp(argv[0], "limit")) {
		const char *a = argc == 2 ? argv[1] : "";

		id = -1;
		end = a;
		if (argc != 2 || (*a != '/' && (group_id(a, &end, &id) ||
						*end != '/')))
			return EINVAL;
		grp_init(&v, id);
		if (group_limits(end + 1, &v, &given))
			return EINVAL;
		g = find(s, id);
		if (!g)
			return ENOENT;
		grp_take_limits(g, &v, given);
		return 0;
	}
	if (!strcmp(argv[0], "type")) {
		int t = argc == 2 ? type_of(argv[1]) : -1;

		if (t < 0)
			return EINVAL;
		if (s->n)
			return EBUSY;
		s->type = t;
		return 0;
	}
	if (!strcmp(argv[0], "policy")) {
		int p = argc == 2 ? name_index(pol_names, NR_POL, argv[1]) : -1;

		if (p < 0)
			return EINVAL;
		s->policy = p;
		return 0;
	}
	if (!strcmp(argv[0], "attach") || !strcmp(argv[0], "detach")) {
		if (argc != 2 || group_id(argv[1], &end, &id) || *end || id == -1)
			return EINVAL;
		g = find(s, id);
		if (argv[0][0] == 'd') {
			if (!g)
				return ENOENT;
			memmove(g, g + 1, (s->g + s->n - (g + 1)) * sizeof(*g));
			s->n--;
			return 0;
		}
		if (!id_fits(s->type, id))
			return EINVAL;
		if (g)
			return EEXIST;
		if (s->n == GROUPS_MAX)
			return ENOSPC;
		grp_init(&s->g[s->n++], id);
		qsort(s->g, s->n, sizeof(*s->g), cmp_grp);
		return 0;
	}
	if (!strcmp(argv[0], "reset") || !strcmp(argv[0], "latency"))
		return argc == 1 ? 0 : EINVAL;
	if (!strcmp(argv[0], "cost_model")) {
		u64 m[6] = { 0 };

		if (argc == 2 && !strcmp(argv[1], "auto")) {
			memset(s->model, 0, sizeof(s->model));
			return 0;
		}
		if (argc != 7)
			return EINVAL;
		for (i = 1; i < 7; i++)
			if (model_param(argv[i], m))
				return EINVAL;
		memcpy(s->model, m, sizeof(m));
		return 0;
	}
	for (i = 0; i < sizeof(settings) / sizeof(settings[0]); i++)
		if (!strcmp(argv[0], settings[i].name))
			break;
	if (i == sizeof(settings) / sizeof(settings[0]) || argc != 2 ||
	    number32(argv[1], settings[i].lo, settings[i].hi, &val))
		return EINVAL;
	c = *s;
	switch (i) {
	case 0: c.token_base = val; break;
	case 1: c.carryover = val; break;
	case 2: c.throttle = val; break;
	case 3: c.limit = val; break;
	case 4: c.bandwidth = val; break;
	}
	if (c.throttle > c.limit || (c.bandwidth && min_sum(&c) > c.bandwidth))
		return EINVAL;
	*s = c;
	return 0;
}

/* ---- printing the model as the target prints itself ---------------------- */

static size_t print_grp(char *p, const struct state *s, const struct grp *g)
{
	size_t n = g->id == -1 ? (size_t)sprintf(p, " ") :
				 (size_t)sprintf(p, " %lld", (long long)g->id);
	char sep = '/';
	int k;

	if (s->policy == POL_RANGE)
		n += sprintf(p + n, ":%u:%u", g->min, g->max);
	else
		n += sprintf(p + n, ":%u", g->weight);
	for (k = 0; k < 6; k++) {
		if (!g->lim[k])
			continue;
		n += sprintf(p + n, "%c%s=%llu", sep, limit_keys[k],
			     (unsigned long long)g->lim[k]);
		sep = ',';
	}
	if (sep == ',' && g->burst)
		n += sprintf(p + n, ",burst=%u", g->burst);
	return n;
}

static void print_table(char *p, const struct state *s, const char *dev)
{
	u32 i;

	p += sprintf(p, "%s %s %u %u %s %s %u", dev, s->dg, s->throttle,
		     s->limit, type_names[s->type], pol_names[s->policy],
		     s->token_base);
	p += print_grp(p, s, &s->def);
	for (i = 0; i < s->n; i++)
		p += print_grp(p, s, &s->g[i]);
	if (s->bandwidth)
		p += sprintf(p, " bandwidth=%u", s->bandwidth);
	for (i = 0; s->model[0] && i < 6; i++)
		p += sprintf(p, " %s=%llu", model_keys[i],
			     (unsigned long long)s->model[i]);
}

static void print_ima(char *p, const struct state *s, const char *dev)
{
	sprintf(p, ",device_name=%s,device_group=%s,group_type=%s,policy=%s"
		",io_throttle=%u,io_limit=%u,token_base=%u,carryover=%u,groups=%u;",
		dev, s->dg, type_names[s->type], pol_names[s->policy],
		s->throttle, s->limit, s->token_base, s->carryover, s->n + 1);
}

/* ---- the kernel's side ----------------------------------------------------- */

static int ctl_fd;
static char *io_buf;
static const char *dm_name;
static u64 dm_sectors;

static struct dm_ioctl *header(size_t payload, u32 flags)
{
	struct dm_ioctl *io = (struct dm_ioctl *)io_buf;

	memset(io, 0, sizeof(*io));
	io->version[0] = DM_VERSION_MAJOR;
	io->data_start = sizeof(*io);
	io->data_size = sizeof(*io) + payload;
	io->flags = flags;
	strcpy(io->name, dm_name);
	return io;
}

static int dm_load(const char *params)
{
	size_t len = strlen(params);
	struct dm_ioctl *io = header((sizeof(struct dm_target_spec) + len + 1 + 7) & ~7UL, 0);
	struct dm_target_spec *spec = (void *)(io_buf + io->data_start);

	memset(spec, 0, sizeof(*spec));
	io->target_count = 1;
	spec->sector_start = 0;
	spec->length = dm_sectors;
	strcpy(spec->target_type, "ioband");
	memcpy(spec + 1, params, len + 1);
	spec->next = io->data_size - io->data_start;
	return ioctl(ctl_fd, DM_TABLE_LOAD, io) ? errno : 0;
}

static int dm_resume(void)
{
	return ioctl(ctl_fd, DM_DEV_SUSPEND, header(0, 0)) ? errno : 0;
}

static int dm_message(const char *msg)
{
	size_t len = strlen(msg);
	struct dm_ioctl *io = header(sizeof(struct dm_target_msg) + len + 1, 0);
	struct dm_target_msg *tm = (void *)(io_buf + io->data_start);

	tm->sector = 0;
	memcpy(tm->message, msg, len + 1);
	return ioctl(ctl_fd, DM_TARGET_MSG, io) ? errno : 0;
}

/*
 * The status line of the device's one target into @out ("" when it has
 * none, as the inactive slot usually has), or -1 on an ioctl error.
 */
static int dm_status(u32 flags, char *out)
{
	struct dm_ioctl *io = header(STATUS_SIZE, flags);
	struct dm_target_spec *spec;

	if (ioctl(ctl_fd, DM_TABLE_STATUS, io))
		return -1;
	if (io->flags & DM_BUFFER_FULL_FLAG) {
		io = header(IO_SIZE - sizeof(*io), flags);
		if (ioctl(ctl_fd, DM_TABLE_STATUS, io) ||
		    (io->flags & DM_BUFFER_FULL_FLAG))
			return -1;
	}
	*out = 0;
	if (!io->target_count)
		return 0;
	spec = (void *)(io_buf + io->data_start);
	strcpy(out, (char *)(spec + 1));
	return 0;
}

struct snap {
	char *table, *ima, *inactive, *info;
};

/* The table and IMA status; with @full the inactive slot and the status too. */
static int snap_take(struct snap *s, int full)
{
	*s->inactive = *s->info = 0;
	return dm_status(DM_STATUS_TABLE_FLAG, s->table) ||
	       dm_status(DM_IMA_MEASUREMENT_FLAG, s->ima) ||
	       (full && (dm_status(DM_STATUS_TABLE_FLAG | DM_QUERY_INACTIVE_TABLE_FLAG,
				   s->inactive) ||
			 dm_status(0, s->info))) ? -1 : 0;
}

/* ---- inputs ---------------------------------------------------------------- */

struct seed {
	char *s;
	int table;	/* a table line (device word first) */
};

static struct seed seeds[SEEDS_MAX];
static int nr_seeds;
static const char *dev_word;	/* MAJOR:MINOR of the device below */

static const char *const edges[] = {
	"0", "-1", "1", "00", "007", "4294967295", "4294967296", "4294967297",
	"9223372036854775807", "9223372036854775808", "18446744073709551615",
	"18446744073709551616", "65536", "65537", "10000", "10001",
	"1048576", "1048577", "100", "4194304", "4194305", "2147483648",
	"99999999999999999999999999999999999999999",
	"000000000000000000000000000000000000000001", "-0", "+1", "1e3", "0x10",
};

static const char *const words[] = {
	"weight", "range-bw", "type", "policy", "attach", "detach", "reset",
	"latency",
	"token", "carryover", "io_throttle", "io_limit", "bandwidth",
	"none", "user", "uid", "gid", "pid", "pgrp", "cgroup", "cgroup-tree",
	"weight-iosize", "weight-time", ":", ":0", ":100", ":0:0", ":1:0",
	"1000:80", "0:1", "-1:5", "-1", "1:2:3", "bandwidth=0",
	"bandwidth=1000", "bandwidth=4294967295", "bandwidth=4294967296",
	"bandwidth=", "5:100:200", "\\", "\\\\", "fz", "dg", "a:b", "::",
	"cost_model", "auto", "rbps=51200000", "rseqiops=1724", "rrandiops=1",
	"wbps=17066666", "wseqiops=446", "wrandiops=1000000000000",
	"wrandiops=1000000000001", "rbps=0", "rbps=", "model=linear", "x=1",
};

static const char seps[] = { ' ', '\t', '\n', '\v', '\f', '\r', (char)0xa0 };

static const char *const bad_devs[] = {
	"/dev/null", "999:999", "/dev/nonexistent", "0:0", "notadevice",
	"/dev/console", "\\", "253:", ":0",
};

static void add_seed(const char *s, int table)
{
	if (nr_seeds < SEEDS_MAX) {
		seeds[nr_seeds].s = strdup(s);
		seeds[nr_seeds++].table = table;
	}
}

/* One file of tests/fuzz/corpus, or the lines of bad-input.corpus. */
static void read_corpus(const char *path)
{
	static char buf[IN_MAX];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f) {
		perror(path);
		exit(2);
	}
	if (strstr(path, "bad-input.corpus")) {
		while (fgets(buf, sizeof(buf), f)) {
			char *kind = buf, *in = strchr(buf, '\t');

			buf[strcspn(buf, "\n")] = 0;
			if (!in || !(in = strchr(in + 1, '\t')))
				continue;
			in++;
			if (kind[0] == 'M') {
				add_seed(in, 0);
			} else if (kind[0] == 'T') {
				/* the corpus gives '\' literally, as dmsetup does */
				char esc[2 * sizeof(buf)], *o = esc;
				char *dev = strstr(in, "@DEV@");

				for (; *in; in++) {
					if (in == dev) {
						o += sprintf(o, "%s", dev_word);
						in += 4;
						continue;
					}
					if (*in == '\\')
						*o++ = '\\';
					*o++ = *in;
				}
				*o = 0;
				add_seed(esc, 1);
			}
		}
	} else {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		buf[n] = 0;
		add_seed(buf, 0);
		/* a table line without its device word */
		if (strlen(dev_word) + n + 2 < sizeof(buf)) {
			size_t size = strlen(dev_word) + n + 2;
			char *t = malloc(size);

			strcpy(t, dev_word);
			strcat(t, " ");
			strcat(t, buf);
			add_seed(t, 1);
			free(t);
		}
	}
	fclose(f);
}

static s64 rnd_id(int type)
{
	switch (rn(3)) {
	case 0:
		return rn(3000);
	case 1:
		return type == T_PID || type == T_PGRP ? 1 + rn(4194304) :
			(s64)(rnd() & 0xffffffff);
	}
	return 1 + rn(10);
}

static u32 rnd_u32(u32 lo, u32 hi)
{
	return lo + (u32)(rnd() % ((u64)hi - lo + 1));
}

/* " rbps=N ... wrandiops=N": six, now and then five, or one twice */
static void gen_model(char *p)
{
	int k, n = rn(8) ? 6 : 5, twice = rn(8) ? -1 : rn(6);

	for (k = 0; k < n; k++)
		p += sprintf(p, " %s=%u", model_keys[k == twice ? (k + 1) % 6 : k],
			     1 + rn(rn(2) ? 10000 : 2000000000));
}

/* "/k=v,..." now and then: limits, "max", a burst, once in a while a key twice */
static char *gen_limits(char *p)
{
	int k, n = rn(3), sep = '/';

	if (rn(3))
		return p;
	for (k = 0; k <= n; k++) {
		int key = rn(7);

		if (key == 6)
			p += sprintf(p, "%cburst=%u", sep, rn(2) ? rn(2000) : rn(70000));
		else if (!rn(6))
			p += sprintf(p, "%c%s=max", sep, limit_keys[key]);
		else
			p += sprintf(p, "%c%s=%llu", sep, limit_keys[key],
				     (unsigned long long)(rn(4) ? 1 + rn(1 << 20) :
							  rnd() >> rn(20)));
		sep = ',';
	}
	return p;
}

/* A well-formed table line (the model decides whether it fits). */
static void gen_table(char *p, const struct state *s)
{
	int type = 1 + rn(NR_T - 1), policy = rn(NR_POL), i, n = rn(6);
	u32 limit = rn(4) ? 1 + rn(256) : rnd_u32(0, 65536);

	if (!rn(8))
		type = T_NONE;
	p += sprintf(p, "%s %s %u %u %s %s %u", dev_word,
		     rn(3) ? s->dg : rn(2) ? "fz" : "fz2", rn(limit + 1),
		     limit, type_names[type], pol_names[policy],
		     rn(4) ? rn(2048) : rnd_u32(0, 1048576));
	if (rn(4)) {
		p += policy == POL_RANGE ?
			sprintf(p, " :%u:%u", rn(5000), rn(2) ? 0 : 5000 + rn(5000)) :
			sprintf(p, " :%u", 1 + rn(10000));
		p = gen_limits(p);
	}
	for (i = 0; type != T_NONE && i < n; i++) {
		p += policy == POL_RANGE ?
			sprintf(p, " %lld:%u:%u", (long long)rnd_id(type), rn(2000),
				rn(2) ? 0 : 2000 + rn(5000)) :
			sprintf(p, " %lld:%u", (long long)rnd_id(type), 1 + rn(10000));
		p = gen_limits(p);
	}
	if (!rn(4))
		p += sprintf(p, " bandwidth=%u", 1 + rn(100000));
	if (!rn(4))
		gen_model(p);
}

static void gen_message(char *p, const struct state *s)
{
	s64 id = s->n && rn(4) ? s->g[rn(s->n)].id : rn(3) ? rnd_id(s->type) : -1;

	switch (rn(14)) {
	case 0:
	case 1:
		p += sprintf(p, "weight %lld:%u", (long long)id, 1 + rn(10000));
		gen_limits(p);
		break;
	case 13:
		p += rn(4) ? sprintf(p, "limit %lld", (long long)id) :
			     sprintf(p, "limit ");
		if (!gen_limits(p)[0])
			sprintf(p, "/%s=%u", limit_keys[rn(6)], 1 + rn(100000));
		break;
	case 2:
		if (rn(2))
			sprintf(p, "range-bw %lld:%u:%u", (long long)id, rn(3000),
				rn(2) ? 0 : 3000 + rn(3000));
		else
			sprintf(p, "range-bw %u:%u", rn(3000), rn(3) ? 0 : 3000 + rn(3000));
		break;
	case 3:
	case 4:
		sprintf(p, "attach %lld", (long long)rnd_id(s->type));
		break;
	case 5:
		sprintf(p, "detach %lld", (long long)id);
		break;
	case 6:
		sprintf(p, "type %s", rn(4) ? type_names[rn(NR_T)] : "uid");
		break;
	case 7:
		sprintf(p, "policy %s", pol_names[rn(NR_POL)]);
		break;
	case 8:
		sprintf(p, rn(2) ? "reset" : "latency");
		break;
	case 9:
		sprintf(p, "io_limit %u", s->throttle + rn(256));
		break;
	case 10:
		sprintf(p, rn(2) ? "io_throttle %u" : "token %u", rn(s->limit + 1));
		break;
	case 11:
		if (rn(3)) {
			p += sprintf(p, "cost_model");
			gen_model(p);
		} else {
			sprintf(p, "cost_model auto");
		}
		break;
	default:
		if (rn(2))
			sprintf(p, "carryover %u", rn(101));
		else
			sprintf(p, "bandwidth %u", rn(2) ? 0 : rnd_u32(0, 200000));
		break;
	}
}

/* Words of @s as [start, end) offsets: maximal runs of non-separators. */
static int words_of(const char *s, int *at, int *end, int max)
{
	int n = 0, i = 0;

	while (s[i] && n < max) {
		while (s[i] && is_sep(s[i]))
			i++;
		if (!s[i])
			break;
		at[n] = i;
		while (s[i] && !is_sep(s[i]))
			i++;
		end[n++] = i;
	}
	return n;
}

/* Replaces [a, b) of @s (length *len) with @with. */
static void splice(char *s, size_t *len, size_t a, size_t b, const char *with,
		   size_t wlen)
{
	if (*len - (b - a) + wlen >= IN_MAX)
		return;
	memmove(s + a + wlen, s + b, *len - b + 1);
	memcpy(s + a, with, wlen);
	*len = *len - (b - a) + wlen;
}

static void mutate(char *s, size_t *len)
{
	static int at[4096], end[4096], at2[4096], end2[4096];
	static char tmp[IN_MAX];
	int n = words_of(s, at, end, 4096), w = rn(n);
	size_t pos = rn(*len + 1);
	const char *word;
	char c;
	int k, m;

	switch (rn(11)) {
	case 0:	/* a byte flipped or replaced */
		if (!*len)
			break;
		pos = rn(*len);
		c = rn(2) ? s[pos] ^ (1 << rn(8)) : (char)(1 + rn(255));
		s[pos] = c ? c : 'x';
		break;
	case 1:	/* a word inserted */
		word = rn(2) ? words[rn(sizeof(words) / sizeof(*words))] :
			       edges[rn(sizeof(edges) / sizeof(*edges))];
		pos = n ? (size_t)(rn(2) ? at[w] : end[w]) : 0;
		k = sprintf(tmp, " %s ", word);
		splice(s, len, pos, pos, tmp, k);
		break;
	case 2:	/* a word deleted */
		if (n)
			splice(s, len, at[w], end[w], "", 0);
		break;
	case 3:	/* a word duplicated, up to some thousands of times */
		if (!n)
			break;
		m = rn(4) ? 1 : 1 + rn(3000);
		k = end[w] - at[w];
		for (pos = 0; m > 0 && *len + pos + k + 1 < IN_MAX / 2; m--) {
			memcpy(tmp + pos, s + at[w], k);
			tmp[pos + k] = ' ';
			pos += k + 1;
		}
		splice(s, len, at[w], at[w], tmp, pos);
		break;
	case 4:	/* separators swapped, added or run together */
		for (k = 0; k < 1 + (int)rn(3); k++)
			tmp[k] = seps[rn(sizeof(seps))];
		if (n > 1 && rn(3)) {
			w = 1 + rn(n - 1);
			splice(s, len, end[w - 1], at[w], tmp, k);
		} else {
			splice(s, len, rn(2) ? 0 : *len, rn(2) ? 0 : *len, tmp, k);
		}
		break;
	case 5:	/* a number replaced by an edge value */
	case 6:
		for (k = 0; k < 8; k++) {
			pos = rn(*len + 1);
			if (s[pos] >= '0' && s[pos] <= '9')
				break;
		}
		if (!(s[pos] >= '0' && s[pos] <= '9'))
			break;
		for (m = pos; m > 0 && s[m - 1] >= '0' && s[m - 1] <= '9'; m--)
			;
		for (k = pos; s[k] >= '0' && s[k] <= '9'; k++)
			;
		word = edges[rn(sizeof(edges) / sizeof(*edges))];
		splice(s, len, m, k, word, strlen(word));
		break;
	case 7:	/* a backslash inserted, or two, or one at the end */
		k = rn(3);
		splice(s, len, k == 2 ? *len : pos, k == 2 ? *len : pos, "\\\\", k == 1 ? 2 : 1);
		break;
	case 8:	/* a word made very long */
		if (!n)
			break;
		m = rn(2) ? 100 + rn(1000) : 4096 + rn(65536);
		c = "9a0:_"[rn(5)];
		memset(tmp, c, m);
		splice(s, len, at[w], end[w], tmp, m);
		break;
	case 9:	/* a word from another entry */
		if (!n)
			break;
		word = seeds[rn(nr_seeds)].s;
		k = words_of(word, at2, end2, 4096);
		if (k) {
			m = rn(k);
			splice(s, len, at[w], end[w], word + at2[m], end2[m] - at2[m]);
		}
		break;
	default: /* a letter's case changed, or a word swapped for a keyword */
		if (n && rn(2)) {
			word = words[rn(sizeof(words) / sizeof(*words))];
			splice(s, len, at[w], end[w], word, strlen(word));
		} else if (*len) {
			pos = rn(*len);
			s[pos] ^= (s[pos] | 0x20) >= 'a' && (s[pos] | 0x20) <= 'z' ? 0x20 : 0;
		}
		break;
	}
}

/*
 * A table line into @out: its device word first, kept (some of its bytes
 * quoted with a backslash, which the kernel removes) or a bad one, then a
 * separator and the mutated rest.
 */
static void make_table(char *out, const char *line, int mutations)
{
	static char rest[IN_MAX];
	const char *sp = line;
	size_t len;
	char *o = out;
	int i;

	while (*sp && !is_sep(*sp))
		sp++;
	strcpy(rest, *sp ? sp + 1 : "");
	len = strlen(rest);
	for (i = 0; i < mutations; i++)
		mutate(rest, &len);
	if (!rn(20)) {
		o += sprintf(o, "%s", bad_devs[rn(sizeof(bad_devs) / sizeof(*bad_devs))]);
	} else if (!rn(10)) {
		for (sp = dev_word; *sp; sp++) {
			if (!rn(3))
				*o++ = '\\';
			*o++ = *sp;
		}
	} else {
		/* the seed's own device word: ours or a bad one */
		memcpy(o, line, sp - line);
		o += sp - line;
	}
	*o++ = rn(8) ? ' ' : seps[rn(sizeof(seps))];
	strcpy(o, rest);
}

/* Seconds spent so far: refused loads, loads and resumes, messages, status. */
static double spent[4];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- main ------------------------------------------------------------------- */

/* @s as a C string literal, cut at 300 bytes */
static void print_escaped(FILE *f, const char *s)
{
	size_t n = strlen(s);
	size_t i;

	fputc('"', f);
	for (i = 0; i < n && i < 300; i++) {
		unsigned char c = s[i];

		if (c == '\\' || c == '"')
			fprintf(f, "\\%c", c);
		else if (c >= 32 && c < 127)
			fputc(c, f);
		else
			fprintf(f, "\\x%02x", c);
	}
	fputc('"', f);
	if (n > 300)
		fprintf(f, "... (%zu bytes)", n);
}

/* The ids of the status line: its words after the name, 7 a group. */
static int info_ids_match(const char *info, const struct state *s)
{
	u32 i = 0;
	long long id;
	int k, used;

	info += strcspn(info, " ");
	while (sscanf(info, " %lld%n", &id, &used) == 1) {
		if (i > s->n || id != (i ? s->g[i - 1].id : -1))
			return 0;
		i++;
		info += used;
		for (k = 0; k < 6; k++) {
			long long x;

			if (sscanf(info, " %lld%n", &x, &used) != 1)
				return 0;
			info += used;
		}
	}
	return i == s->n + 1 && !*info;
}

static const char *state_mismatch(const struct snap *now, const struct state *s,
				  int full, char *want)
{
	static char ima[4096];
	size_t a, b;

	print_table(want, s, dev_word);
	if (strcmp(now->table, want))
		return "table";
	print_ima(ima, s, dev_word);
	a = strlen(now->ima);
	b = strlen(ima);
	if (a < b || strcmp(now->ima + a - b, ima)) {
		strcpy(want, ima);
		return "IMA status";
	}
	if (!full)
		return NULL;
	if (*now->inactive) {
		strcpy(want, "");
		return "inactive table";
	}
	if (!info_ids_match(now->info, s)) {
		strcpy(want, "the model's group ids");
		return "status line";
	}
	return NULL;
}

static void snap_alloc(struct snap *s)
{
	s->table = malloc(IO_SIZE);
	s->ima = malloc(IO_SIZE);
	s->inactive = malloc(IO_SIZE);
	s->info = malloc(IO_SIZE);
	if (!s->table || !s->ima || !s->inactive || !s->info)
		exit(2);
}

int main(int argc, char **argv)
{
	static char in[IN_MAX * 2], split_buf[IN_MAX * 2];
	static char *args[ARGS_MAX];
	struct state live = { }, next = { };
	struct snap before, after, tmp;
	unsigned long count, i, tables = 0, tables_ok = 0, msgs = 0, msgs_ok = 0;
	char *want;
	int a, r, expect, table, full;
	const char *what;
	double t0, t1;

	if (argc < 6) {
		fprintf(stderr, "usage: dmfuzz SEED COUNT NAME DEVICE SECTORS [CORPUS-FILE...]\n");
		return 2;
	}
	rng_state = strtoull(argv[1], NULL, 0) * 2 + 1;
	count = strtoul(argv[2], NULL, 0);
	dm_name = argv[3];
	dev_word = argv[4];
	dm_sectors = strtoull(argv[5], NULL, 0);
	for (a = 6; a < argc; a++)
		read_corpus(argv[a]);
	io_buf = malloc(IO_SIZE);
	want = malloc(IO_SIZE);
	live.g = malloc(GROUPS_MAX * sizeof(*live.g));
	next.g = malloc(GROUPS_MAX * sizeof(*next.g));
	snap_alloc(&before);
	snap_alloc(&after);
	ctl_fd = open("/dev/mapper/control", O_RDWR);
	if (ctl_fd < 0 || !io_buf || !want || !live.g || !next.g) {
		perror("dmfuzz: /dev/mapper/control");
		return 2;
	}
	printf("dmfuzz: seed %s, %lu inputs, %d corpus entries\n", argv[1],
	       count, nr_seeds);
	fflush(stdout);

	/* the device's own table, read back by the model */
	if (snap_take(&before, 1)) {
		perror("dmfuzz: status");
		return 2;
	}
	strcpy(split_buf, before.table);
	a = split(split_buf, args);
	if (a < 1 || strcmp(args[0], dev_word) || model_table(a - 1, args + 1, &live)) {
		fprintf(stderr, "dmfuzz: the device's table does not parse: %s\n", before.table);
		return 1;
	}
	what = strstr(before.ima, "carryover=");
	live.carryover = what ? strtoul(what + 10, NULL, 10) : 0;
	what = state_mismatch(&before, &live, 1, want);
	if (what) {
		fprintf(stderr, "dmfuzz: the initial %s is not the model's:\n  got  %s\n  want %s\n",
			what, before.table, want);
		return 1;
	}

	for (i = 1; i <= count; i++) {
		const struct seed *sd;
		int mutations = rn(10) < 3 ? 0 : 1 + rn(4);
		size_t len;

		table = rn(10) < 4;
		sd = nr_seeds && rn(3) ? &seeds[rn(nr_seeds)] : NULL;
		if (table) {
			if (!sd || !sd->table)
				gen_table(split_buf, &live);
			else
				strcpy(split_buf, sd->s);
			make_table(in, split_buf, mutations);
		} else {
			if (sd && !sd->table)
				strcpy(in, sd->s);
			else
				gen_message(in, &live);
			len = strlen(in);
			for (a = 0; a < mutations; a++)
				mutate(in, &len);
		}

		/* the model's verdict */
		state_copy(&next, &live);
		strcpy(split_buf, in);
		a = split(split_buf, args);
		if (table) {
			expect = a < 1 || strcmp(args[0], dev_word) ||
				 model_table(a - 1, args + 1, &next) ? EINVAL : 0;
			/* a new device group starts with the default carryover */
			if (!expect && strcmp(next.dg, live.dg))
				next.carryover = 2;
		} else {
			/*
			 * A first word starting with '@' is for device-mapper
			 * itself: it refuses any but its own (which are
			 * not sent), the target never sees them.
			 */
			if (a && (!strcasecmp(args[0], "@cancel_deferred_remove") ||
				  !strncasecmp(args[0], "@stats_", 7))) {
				i--;
				continue;
			}
			expect = a && args[0][0] == '@' ? EINVAL :
				 model_message(a, args, &next);
		}

		/* the kernel's */
		t0 = now();
		if (table) {
			tables++;
			r = dm_load(in);
			if (!r) {
				r = dm_resume();
				if (r) {
					printf("dmfuzz: input %lu: resume after a load failed: %s\n",
					       i, strerror(r));
					goto bad;
				}
				tables_ok++;
			}
		} else {
			msgs++;
			r = dm_message(in);
			msgs_ok += !r;
		}
		t1 = now();
		spent[table ? !r : 2] += t1 - t0;
		/*
		 * Only a table load can fill the inactive slot, and the
		 * status line's ids are the table's groups: both are read
		 * after a table line and every eighth input.
		 */
		full = table || !(i % 8);
		a = snap_take(&after, full);
		spent[3] += now() - t1;
		if (a) {
			printf("dmfuzz: input %lu: status: %s\n", i, strerror(errno));
			goto bad;
		}
		if (!r != !expect || (!table && r != expect)) {
			printf("dmfuzz: input %lu: the kernel %s (%s), the model %s (%s)\n",
			       i, r ? "refused it" : "took it", strerror(r),
			       expect ? "refuses it" : "takes it", strerror(expect));
			goto bad;
		}
		if (r && (strcmp(after.table, before.table) ||
			  strcmp(after.ima, before.ima) ||
			  (full && *after.inactive))) {
			printf("dmfuzz: input %lu: refused but the state changed:\n"
			       "  before %s\n         %s\n  after  %s\n         %s\n",
			       i, before.table, before.ima, after.table, after.ima);
			goto bad;
		}
		if (!r)
			state_copy(&live, &next);
		what = state_mismatch(&after, &live, full, want);
		if (what) {
			printf("dmfuzz: input %lu: the %s is not the model's:\n  got  %s\n  want %s\n",
			       i, what, !strcmp(what, "table") ? after.table :
			       !strcmp(what, "IMA status") ? after.ima :
			       !strcmp(what, "inactive table") ? after.inactive : after.info,
			       want);
			goto bad;
		}
		tmp = before;
		before = after;
		after = tmp;
		if (i % 2000 == 0) {
			printf("dmfuzz: %lu inputs\n", i);
			fflush(stdout);
		}
	}
	printf("dmfuzz: seconds in refused loads %.1f, loads and resumes %.1f, messages %.1f, status %.1f\n",
	       spent[0], spent[1], spent[2], spent[3]);
	printf("%lu inputs: %lu tables (%lu accepted), %lu messages (%lu accepted)\n",
	       count, tables, tables_ok, msgs, msgs_ok);
	return 0;
bad:
	printf("dmfuzz: the %s was ", table ? "table line" : "message");
	print_escaped(stdout, in);
	printf("\ndmfuzz: input %lu of seed %s: the same seed replays it\n",
	       i, argv[1]);
	printf("%lu inputs: %lu tables (%lu accepted), %lu messages (%lu accepted)\n",
	       i, tables, tables_ok, msgs, msgs_ok);
	return 1;
}

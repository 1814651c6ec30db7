// SPDX-License-Identifier: GPL-2.0
/*
 * dm-ioband policies: the configuration grammar and the scheduling
 * arithmetic of the ioband target.
 *
 * This file is pure logic.  It takes no lock, allocates nothing and reads
 * no clock, so the same source builds in the kernel (as dm-ioband-policy.ko)
 * and in userspace for unit tests, fuzzing and simulation (tests/unit).
 * The target serialises every call on one device group with that device
 * group's spinlock and owns all the memory.
 */
#ifdef __KERNEL__
#include <linux/module.h>
#endif
#include <linux/bitops.h>
#include <linux/dm-ioband.h>
#include <linux/math64.h>
#include <linux/sort.h>
#include <linux/string.h>

#define NSEC_PER_SEC_U64	1000000000ULL

/* ---- names ------------------------------------------------------------ */

static const char *const type_names[IOBAND_NR_TYPES] = {
	[IOBAND_TYPE_NONE] = "none",
	[IOBAND_TYPE_USER] = "user",
	[IOBAND_TYPE_GID] = "gid",
	[IOBAND_TYPE_PID] = "pid",
	[IOBAND_TYPE_PGRP] = "pgrp",
	[IOBAND_TYPE_CGROUP] = "cgroup",
	[IOBAND_TYPE_CGROUP_TREE] = "cgroup-tree",
};

static const char *const policy_names[IOBAND_NR_POLICIES] = {
	[IOBAND_POLICY_WEIGHT] = "weight",
	[IOBAND_POLICY_WEIGHT_IOSIZE] = "weight-iosize",
	[IOBAND_POLICY_RANGE_BW] = "range-bw",
	[IOBAND_POLICY_WEIGHT_TIME] = "weight-time",
};

const char *ioband_type_name(enum ioband_group_type type)
{
	return type < IOBAND_NR_TYPES ? type_names[type] : "?";
}
EXPORT_SYMBOL_GPL(ioband_type_name);

const char *ioband_policy_name(enum ioband_policy policy)
{
	return policy < IOBAND_NR_POLICIES ? policy_names[policy] : "?";
}
EXPORT_SYMBOL_GPL(ioband_policy_name);

static const char *const model_param_names[IOBAND_MODEL_NR_PARAMS] = {
	[IOBAND_MODEL_RBPS] = "rbps",
	[IOBAND_MODEL_RSEQIOPS] = "rseqiops",
	[IOBAND_MODEL_RRANDIOPS] = "rrandiops",
	[IOBAND_MODEL_WBPS] = "wbps",
	[IOBAND_MODEL_WSEQIOPS] = "wseqiops",
	[IOBAND_MODEL_WRANDIOPS] = "wrandiops",
};

const char *ioband_model_param_name(enum ioband_model_param param)
{
	return param < IOBAND_MODEL_NR_PARAMS ? model_param_names[param] : "?";
}
EXPORT_SYMBOL_GPL(ioband_model_param_name);

/* All six parameters (the grammar takes all or none; zero would divide). */
bool ioband_model_given(const struct ioband_cost_model *model)
{
	unsigned int i;

	for (i = 0; i < IOBAND_MODEL_NR_PARAMS; i++)
		if (!model->param[i])
			return false;
	return true;
}
EXPORT_SYMBOL_GPL(ioband_model_given);

static int ioband_parse_type(const char *s, enum ioband_group_type *type)
{
	int i;

	/* "uid" is the ancestor's other spelling of "user". */
	if (!strcmp(s, "uid")) {
		*type = IOBAND_TYPE_USER;
		return 0;
	}
	for (i = 0; i < IOBAND_NR_TYPES; i++) {
		if (!strcmp(s, type_names[i])) {
			*type = i;
			return 0;
		}
	}
	return -EINVAL;
}

static int ioband_parse_policy(const char *s, enum ioband_policy *policy)
{
	int i;

	for (i = 0; i < IOBAND_NR_POLICIES; i++) {
		if (!strcmp(s, policy_names[i])) {
			*policy = i;
			return 0;
		}
	}
	return -EINVAL;
}

/* ---- numbers -------------------------------------------------------------
 *
 * Strict decimal: digits only, no sign, no spaces, no leading '+', no
 * overflow.  *end is set past the last digit so callers can parse the
 * "id:weight" forms.
 */
static int ioband_parse_dec(const char *s, const char **end, u64 max, u64 *val)
{
	u64 v = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		u64 digit = *s - '0';

		if (v > (max - digit) / 10)
			return -ERANGE;
		v = v * 10 + digit;
	}
	*end = s;
	*val = v;
	return 0;
}

/* A whole argument that is a number in [min, max]. */
static int ioband_parse_u32_arg(const char *s, u32 min, u32 max, u32 *val)
{
	const char *end;
	u64 v;

	if (ioband_parse_dec(s, &end, max, &v) || *end || v < min)
		return -EINVAL;
	*val = v;
	return 0;
}

/* A group id: -1 (the default group) or a non-negative number. */
static int ioband_parse_id(const char *s, const char **end, s64 *id)
{
	u64 v;

	if (s[0] == '-') {
		if (s[1] != '1' || (s[2] >= '0' && s[2] <= '9'))
			return -EINVAL;
		*end = s + 2;
		*id = IOBAND_DEFAULT_GROUP;
		return 0;
	}
	if (ioband_parse_dec(s, end, S64_MAX, &v))
		return -EINVAL;
	*id = v;
	return 0;
}

/* A group's value ends its word, or is followed by '/' and its limits. */
static bool ioband_value_ends(const char *end)
{
	return !*end || *end == '/';
}

static int ioband_parse_weight(const char *s, const char **end, u32 *weight)
{
	u64 v;

	if (ioband_parse_dec(s, end, IOBAND_WEIGHT_MAX, &v) ||
	    !ioband_value_ends(*end) || v < IOBAND_WEIGHT_MIN)
		return -EINVAL;
	*weight = v;
	return 0;
}

/* "min:max" in KB/s; max 0 means no cap. */
static int ioband_parse_range(const char *s, const char **end, u32 *min,
			      u32 *max, char **error)
{
	u64 lo, hi;

	if (ioband_parse_dec(s, end, U32_MAX, &lo) || **end != ':' ||
	    ioband_parse_dec(*end + 1, end, U32_MAX, &hi) ||
	    !ioband_value_ends(*end)) {
		*error = "range must be <min>:<max> in KB/s";
		return -EINVAL;
	}
	if (hi && lo > hi) {
		*error = "minimum bandwidth above maximum";
		return -EINVAL;
	}
	*min = lo;
	*max = hi;
	return 0;
}

static const char * const ioband_limit_names[IOBAND_NR_LIMITS] = {
	[IOBAND_LIMIT_BPS] = "bps",
	[IOBAND_LIMIT_RBPS] = "rbps",
	[IOBAND_LIMIT_WBPS] = "wbps",
	[IOBAND_LIMIT_IOPS] = "iops",
	[IOBAND_LIMIT_RIOPS] = "riops",
	[IOBAND_LIMIT_WIOPS] = "wiops",
};

const char *ioband_limit_name(enum ioband_limit_kind kind)
{
	return kind < IOBAND_NR_LIMITS ? ioband_limit_names[kind] : "?";
}
EXPORT_SYMBOL_GPL(ioband_limit_name);

/*
 * One "key=value" of a group's limits, ending at ',' or at the end:
 * a rate in bytes or bios per second, or "max" for none (as io.max
 * writes it), or burst=<ms>.  *@seen marks the keys given so far.
 */
static int ioband_parse_limit(const char *s, const char **end,
			      struct ioband_group_conf *g, u32 *seen,
			      char **error)
{
	const char *eq = strchr(s, '=');
	size_t len = eq ? (size_t)(eq - s) : 0;
	u64 v;
	int k;

	for (k = 0; k <= IOBAND_NR_LIMITS; k++) {
		const char *name = k < IOBAND_NR_LIMITS ?
				   ioband_limit_names[k] : "burst";

		if (len == strlen(name) && !strncmp(s, name, len))
			break;
	}
	if (k > IOBAND_NR_LIMITS) {
		*error = "limits are <key>=<value>: bps rbps wbps iops riops wiops burst";
		return -EINVAL;
	}
	if (*seen & BIT(k)) {
		*error = "limit given twice for one group";
		return -EINVAL;
	}
	*seen |= BIT(k);
	if (k < IOBAND_NR_LIMITS && !strncmp(eq + 1, "max", 3)) {
		g->limit_rate[k] = 0;
		*end = eq + 4;
	} else if (k < IOBAND_NR_LIMITS) {
		if (ioband_parse_dec(eq + 1, end, IOBAND_LIMIT_RATE_MAX, &v) ||
		    !v) {
			*error = "limit rate must be 1 to 2^50 a second, or max";
			return -EINVAL;
		}
		g->limit_rate[k] = v;
	} else {
		if (ioband_parse_dec(eq + 1, end, IOBAND_BURST_MS_MAX, &v)) {
			*error = "burst must be a number of milliseconds from 0 to 60000";
			return -EINVAL;
		}
		g->burst_ms = v;
	}
	if (**end && **end != ',') {
		*error = "limits are separated by ','";
		return -EINVAL;
	}
	return 0;
}

/* A group's limits: "key=value[,key=value]...", after its '/'. */
static int ioband_parse_limits(const char *s, struct ioband_group_conf *g,
			       char **error)
{
	const char *end;
	u32 seen = 0;

	for (;;) {
		if (ioband_parse_limit(s, &end, g, &seen, error))
			return -EINVAL;
		if (!*end)
			break;
		s = end + 1;
	}
	g->limits_given = seen;
	return 0;
}

/*
 * The value part of a group specification, after its "id:": a weight for
 * the weight policies, "min:max" for range-bw; either may be followed by
 * '/' and the group's limits.
 */
static int ioband_parse_group_value(enum ioband_policy policy, const char *s,
				    struct ioband_group_conf *g, char **error)
{
	const char *end;

	if (policy == IOBAND_POLICY_RANGE_BW) {
		if (ioband_parse_range(s, &end, &g->min_kbps, &g->max_kbps,
				       error))
			return -EINVAL;
	} else if (ioband_parse_weight(s, &end, &g->weight)) {
		*error = "weight must be a number from 1 to 10000";
		return -EINVAL;
	}
	return *end ? ioband_parse_limits(end + 1, g, error) : 0;
}

static void ioband_group_conf_init(struct ioband_group_conf *g, s64 id)
{
	g->id = id;
	g->weight = IOBAND_DEFAULT_WEIGHT;
	g->min_kbps = 0;
	g->max_kbps = 0;
	memset(g->limit_rate, 0, sizeof(g->limit_rate));
	g->burst_ms = 0;
	g->limits_given = 0;
}

int ioband_check_group_id(enum ioband_group_type type, s64 id,
			  char **error)
{
	switch (type) {
	case IOBAND_TYPE_NONE:
		*error = "group type none has only the default group";
		return -EINVAL;
	case IOBAND_TYPE_USER:
	case IOBAND_TYPE_GID:
		/* (uid_t)-1 is the "no id" value of the syscalls */
		if (id < 0 || id >= U32_MAX)
			goto bad;
		return 0;
	case IOBAND_TYPE_PID:
	case IOBAND_TYPE_PGRP:
		/* PID_MAX_LIMIT is 4M on 64-bit */
		if (id < 1 || id > 4 * 1024 * 1024)
			goto bad;
		return 0;
	case IOBAND_TYPE_CGROUP:
	case IOBAND_TYPE_CGROUP_TREE:
		if (id < 1)
			goto bad;
		return 0;
	default:
		break;
	}
bad:
	*error = "group id out of range for the group type";
	return -EINVAL;
}
EXPORT_SYMBOL_GPL(ioband_check_group_id);

void ioband_dg_conf_init(struct ioband_dg_conf *conf)
{
	conf->policy = IOBAND_POLICY_WEIGHT;
	conf->io_throttle = IOBAND_DEFAULT_IO_THROTTLE;
	conf->io_limit = IOBAND_DEFAULT_IO_LIMIT;
	conf->token_base = IOBAND_DEFAULT_TOKEN_BASE;
	conf->carryover = IOBAND_DEFAULT_CARRYOVER;
	conf->bandwidth = 0;
	memset(&conf->model, 0, sizeof(conf->model));
}
EXPORT_SYMBOL_GPL(ioband_dg_conf_init);

static int ioband_check_dg_name(const char *s, char *name, char **error)
{
	size_t len = strlen(s);
	size_t i;

	if (!len || len > IOBAND_DG_NAME_MAX) {
		*error = "device group id must be 1 to 31 characters";
		return -EINVAL;
	}
	for (i = 0; i < len; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '-' ||
		      c == '.')) {
			*error = "device group id may hold only letters, digits, '_', '-' and '.'";
			return -EINVAL;
		}
	}
	memcpy(name, s, len + 1);
	return 0;
}

/* 0 stands for the default of a setting, as in the ancestor's tables. */
static int ioband_parse_setting(const char *s, u32 max, u32 def, u32 *val)
{
	if (ioband_parse_u32_arg(s, 0, max, val))
		return -EINVAL;
	if (!*val)
		*val = def;
	return 0;
}

static int ioband_check_limits(const struct ioband_dg_conf *c, char **error)
{
	if (c->io_throttle > c->io_limit) {
		*error = "io_throttle must not exceed io_limit";
		return -EINVAL;
	}
	return 0;
}

static int ioband_parse_group_spec(const struct ioband_table *t,
				   const char *arg, struct ioband_group_conf *g,
				   char **error)
{
	const char *end;
	s64 id;

	if (arg[0] == ':') {
		*error = "the default group ':' must come first";
		return -EINVAL;
	}
	if (ioband_parse_id(arg, &end, &id) || *end != ':' ||
	    id == IOBAND_DEFAULT_GROUP) {
		*error = "group must be <id>:<value>";
		return -EINVAL;
	}
	if (ioband_check_group_id(t->type, id, error))
		return -EINVAL;
	ioband_group_conf_init(g, id);
	return ioband_parse_group_value(t->dg.policy, end + 1, g, error);
}

/*
 * Minimum bandwidths are promises: they may not add up to more than the
 * device group's bandwidth, when the administrator has stated it.
 */
int ioband_check_min_sum(const struct ioband_dg_conf *conf, u64 sum_kbps,
			 char **error)
{
	if (conf->bandwidth && sum_kbps > conf->bandwidth) {
		*error = "minimum bandwidths add up past the device group's bandwidth";
		return -EINVAL;
	}
	return 0;
}
EXPORT_SYMBOL_GPL(ioband_check_min_sum);

/* The errors that name every choice: a table's and a message's alike. */
#define IOBAND_ERR_TYPE \
	"unknown group type (none, user, uid, gid, pid, pgrp, cgroup, cgroup-tree)"
/* The errors that name every parameter of a cost model. */
#define IOBAND_ERR_MODEL_PART \
	"a cost model needs all of rbps, rseqiops, rrandiops, wbps, wseqiops and wrandiops"
#define IOBAND_ERR_OPTION \
	"unknown table option (bandwidth=, rbps=, rseqiops=, rrandiops=, wbps=, wseqiops=, wrandiops=)"
#define IOBAND_ERR_MODEL_MSG \
	"cost_model takes auto, or rbps=, rseqiops=, rrandiops=, wbps=, wseqiops= and wrandiops="
#define IOBAND_ERR_MODEL_KEY \
	"unknown cost model parameter (rbps, rseqiops, rrandiops, wbps, wseqiops, wrandiops)"

/*
 * "<param>=<value>", one parameter of a cost model, into @m: -ENOENT if
 * @arg names none.
 */
static int ioband_parse_model_param(const char *arg, struct ioband_cost_model *m,
				    char **error)
{
	const char *end;
	unsigned int i;
	u64 v;

	for (i = 0; i < IOBAND_MODEL_NR_PARAMS; i++) {
		size_t n = strlen(model_param_names[i]);

		if (strncmp(arg, model_param_names[i], n) || arg[n] != '=')
			continue;
		if (m->param[i]) {
			*error = "cost model parameter given twice";
			return -EINVAL;
		}
		if (ioband_parse_dec(arg + n + 1, &end, IOBAND_MODEL_PARAM_MAX,
				     &v) || *end || !v) {
			*error = "cost model values must be numbers from 1 to 1000000000000";
			return -EINVAL;
		}
		m->param[i] = v;
		return 0;
	}
	return -ENOENT;
}

/* A cost model is all six parameters or none. */
static int ioband_check_model(const struct ioband_cost_model *m, char **error)
{
	unsigned int i, n = 0;

	for (i = 0; i < IOBAND_MODEL_NR_PARAMS; i++)
		n += !!m->param[i];
	if (n && n < IOBAND_MODEL_NR_PARAMS) {
		*error = IOBAND_ERR_MODEL_PART;
		return -EINVAL;
	}
	return 0;
}

#define BANDWIDTH_ARG "bandwidth="

static int ioband_parse_table_option(const char *arg, struct ioband_table *t,
				     char **error)
{
	int r;

	if (strncmp(arg, BANDWIDTH_ARG, strlen(BANDWIDTH_ARG))) {
		r = ioband_parse_model_param(arg, &t->dg.model, error);
		if (r == -ENOENT)
			*error = IOBAND_ERR_OPTION;
		return r ? -EINVAL : 0;
	}
	if (t->dg.bandwidth) {
		*error = "bandwidth given twice";
		return -EINVAL;
	}
	if (ioband_parse_u32_arg(arg + strlen(BANDWIDTH_ARG), 1, U32_MAX,
				 &t->dg.bandwidth)) {
		*error = "bandwidth must be a number of KB/s from 1 to 4294967295";
		return -EINVAL;
	}
	return 0;
}

/*
 * The table's optional last arguments, not in the ancestor's syntax:
 * "<option>=<value>" in any order after the groups (whose arguments never
 * hold '='): bandwidth=<KB/s> and a cost model.
 */
/*
 * A table option is "<name>=<value>" with a name of letters; a group's
 * specification starts with its id or ':', though its limits hold '='.
 */
static bool ioband_is_table_option(const char *arg)
{
	return arg[0] >= 'a' && arg[0] <= 'z' && strchr(arg, '=');
}

static int ioband_parse_table_options(unsigned int *argc, char **argv,
				      struct ioband_table *t, char **error)
{
	for (; *argc && ioband_is_table_option(argv[*argc - 1]); (*argc)--)
		if (ioband_parse_table_option(argv[*argc - 1], t, error))
			return -EINVAL;
	return ioband_check_model(&t->dg.model, error);
}

static int ioband_check_table_mins(const struct ioband_table *t, char **error)
{
	u64 sum = t->def.min_kbps;
	unsigned int i;

	for (i = 0; i < t->nr_groups; i++)
		sum += t->groups[i].min_kbps;
	return ioband_check_min_sum(&t->dg, sum, error);
}

static int ioband_cmp_group_id(const void *a, const void *b)
{
	s64 x = ((const struct ioband_group_conf *)a)->id;
	s64 y = ((const struct ioband_group_conf *)b)->id;

	return x < y ? -1 : x > y;
}

/*
 * <device_group_id> <io_throttle> <io_limit> <group_type> <policy>
 * <token_base> [:<default>] [<id>:<value>]... [<option>=<value>]...
 */
int ioband_parse_table(unsigned int argc, char **argv, struct ioband_table *t,
		       char **error)
{
	unsigned int i, j;

	ioband_dg_conf_init(&t->dg);
	if (ioband_parse_table_options(&argc, argv, t, error))
		return -EINVAL;
	if (argc < 6) {
		*error = "too few arguments";
		return -EINVAL;
	}
	/* groups and the default group's ':' (counted exactly below) */
	if (argc - 6 > IOBAND_MAX_GROUPS + 1) {
		*error = "too many groups (at most 65536)";
		return -EINVAL;
	}
	if (ioband_check_dg_name(argv[0], t->dg_name, error))
		return -EINVAL;
	if (ioband_parse_setting(argv[2], IOBAND_IO_LIMIT_MAX,
				 IOBAND_DEFAULT_IO_LIMIT, &t->dg.io_limit)) {
		*error = "io_limit must be a number from 0 to 65536";
		return -EINVAL;
	}
	if (ioband_parse_setting(argv[1], IOBAND_IO_LIMIT_MAX,
				 IOBAND_DEFAULT_IO_THROTTLE, &t->dg.io_throttle)) {
		*error = "io_throttle must be a number from 0 to 65536";
		return -EINVAL;
	}
	if (ioband_check_limits(&t->dg, error))
		return -EINVAL;
	if (ioband_parse_type(argv[3], &t->type)) {
		*error = IOBAND_ERR_TYPE;
		return -EINVAL;
	}
	if (ioband_parse_policy(argv[4], &t->dg.policy)) {
		*error = "unknown policy (weight, weight-iosize, range-bw, weight-time)";
		return -EINVAL;
	}
	if (ioband_parse_setting(argv[5], IOBAND_TOKEN_BASE_MAX,
				 IOBAND_DEFAULT_TOKEN_BASE, &t->dg.token_base)) {
		*error = "token_base must be a number from 0 to 1048576";
		return -EINVAL;
	}

	ioband_group_conf_init(&t->def, IOBAND_DEFAULT_GROUP);
	i = 6;
	if (i < argc && argv[i][0] == ':') {
		if (ioband_parse_group_value(t->dg.policy, argv[i] + 1, &t->def,
					     error))
			return -EINVAL;
		i++;
	}

	t->nr_groups = 0;
	for (; i < argc; i++) {
		if (ioband_parse_group_spec(t, argv[i], &t->groups[t->nr_groups],
					    error))
			return -EINVAL;
		t->nr_groups++;
	}
	if (t->nr_groups > IOBAND_MAX_GROUPS) {
		*error = "too many groups (at most 65536)";
		return -EINVAL;
	}
	/*
	 * In id order, as the table is printed back; duplicates are then
	 * neighbours, found in n log n even for 65536 groups.
	 */
	sort(t->groups, t->nr_groups, sizeof(*t->groups), ioband_cmp_group_id, NULL);
	for (j = 1; j < t->nr_groups; j++) {
		if (t->groups[j].id == t->groups[j - 1].id) {
			*error = "duplicate group id";
			return -EINVAL;
		}
	}
	return ioband_check_table_mins(t, error);
}
EXPORT_SYMBOL_GPL(ioband_parse_table);

/* "[<id>:]<value>" for the weight and range-bw messages. */
static int ioband_parse_msg_group(enum ioband_policy policy, const char *arg,
				  struct ioband_group_conf *g, char **error)
{
	const char *end;
	const char *value = arg;
	s64 id = IOBAND_DEFAULT_GROUP;

	/* A bare value sets the default group; "-1:" names it explicitly. */
	if (strchr(arg, ':') && (policy != IOBAND_POLICY_RANGE_BW ||
				 strchr(strchr(arg, ':') + 1, ':'))) {
		if (ioband_parse_id(arg, &end, &id) || *end != ':') {
			*error = "group must be <id>:<value>";
			return -EINVAL;
		}
		value = end + 1;
	}
	ioband_group_conf_init(g, id);
	return ioband_parse_group_value(policy, value, g, error);
}

/* "limit [<id>]/<limits>": a group's limits alone; no id is the default group. */
static int ioband_parse_limit_msg(unsigned int argc, char **argv,
				  struct ioband_msg *msg, char **error)
{
	const char *end = argc == 2 ? argv[1] : NULL;
	s64 id = IOBAND_DEFAULT_GROUP;

	msg->kind = IOBAND_MSG_LIMIT;
	if (!end || (*end != '/' && (ioband_parse_id(argv[1], &end, &id) ||
				     *end != '/'))) {
		*error = "expected [<id>]/<limits>";
		return -EINVAL;
	}
	ioband_group_conf_init(&msg->group, id);
	return ioband_parse_limits(end + 1, &msg->group, error);
}

static const struct {
	const char *name;
	enum ioband_msg_kind kind;
	u32 min, max;
} setting_msgs[] = {
	{ "token", IOBAND_MSG_TOKEN, 1, IOBAND_TOKEN_BASE_MAX },
	{ "carryover", IOBAND_MSG_CARRYOVER, 0, IOBAND_CARRYOVER_MAX },
	{ "io_throttle", IOBAND_MSG_IO_THROTTLE, 0, IOBAND_IO_LIMIT_MAX },
	{ "io_limit", IOBAND_MSG_IO_LIMIT, 1, IOBAND_IO_LIMIT_MAX },
	{ "bandwidth", IOBAND_MSG_BANDWIDTH, 0, U32_MAX },
};

static int ioband_parse_setting_msg(unsigned int argc, char **argv,
				    struct ioband_msg *msg, char **error)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(setting_msgs); i++) {
		if (strcmp(argv[0], setting_msgs[i].name))
			continue;
		msg->kind = setting_msgs[i].kind;
		if (argc != 2 ||
		    ioband_parse_u32_arg(argv[1], setting_msgs[i].min,
					 setting_msgs[i].max, &msg->value)) {
			*error = "value missing or out of range";
			return -EINVAL;
		}
		return 0;
	}
	*error = "unknown message";
	return -EINVAL;
}

/* "cost_model auto", or all six parameters in any order. */
static int ioband_parse_model_msg(unsigned int argc, char **argv,
				  struct ioband_msg *msg, char **error)
{
	unsigned int i;

	msg->kind = IOBAND_MSG_COST_MODEL;
	memset(&msg->model, 0, sizeof(msg->model));
	if (argc == 2 && !strcmp(argv[1], "auto"))
		return 0;
	if (argc != 1 + IOBAND_MODEL_NR_PARAMS) {
		*error = IOBAND_ERR_MODEL_MSG;
		return -EINVAL;
	}
	for (i = 1; i < argc; i++) {
		int r = ioband_parse_model_param(argv[i], &msg->model, error);

		if (r == -ENOENT)
			*error = IOBAND_ERR_MODEL_KEY;
		if (r)
			return -EINVAL;
	}
	return 0;
}

static int ioband_parse_attach_msg(unsigned int argc, char **argv,
				   struct ioband_msg *msg, char **error)
{
	const char *end;

	msg->kind = strcmp(argv[0], "attach") ? IOBAND_MSG_DETACH :
						IOBAND_MSG_ATTACH;
	if (argc != 2 || ioband_parse_id(argv[1], &end, &msg->group.id) || *end ||
	    msg->group.id == IOBAND_DEFAULT_GROUP) {
		*error = "expected one group id";
		return -EINVAL;
	}
	return 0;
}

/* Parses a message into @msg; applying it is the target's business. */
int ioband_parse_message(unsigned int argc, char **argv,
			 struct ioband_msg *msg, char **error)
{
	if (!argc) {
		*error = "empty message";
		return -EINVAL;
	}
	if (!strcmp(argv[0], "weight") || !strcmp(argv[0], "range-bw")) {
		enum ioband_policy as = IOBAND_POLICY_WEIGHT;

		msg->kind = IOBAND_MSG_WEIGHT;
		if (argv[0][0] == 'r') {
			as = IOBAND_POLICY_RANGE_BW;
			msg->kind = IOBAND_MSG_RANGE_BW;
		}
		if (argc != 2) {
			*error = "expected one group value";
			return -EINVAL;
		}
		return ioband_parse_msg_group(as, argv[1], &msg->group, error);
	}
	if (!strcmp(argv[0], "type")) {
		msg->kind = IOBAND_MSG_TYPE;
		if (argc != 2 || ioband_parse_type(argv[1], &msg->type)) {
			*error = IOBAND_ERR_TYPE;
			return -EINVAL;
		}
		return 0;
	}
	if (!strcmp(argv[0], "policy")) {
		msg->kind = IOBAND_MSG_POLICY;
		if (argc != 2 || ioband_parse_policy(argv[1], &msg->policy)) {
			*error = "unknown policy (weight, weight-iosize, range-bw, weight-time)";
			return -EINVAL;
		}
		return 0;
	}
	if (!strcmp(argv[0], "attach") || !strcmp(argv[0], "detach"))
		return ioband_parse_attach_msg(argc, argv, msg, error);
	if (!strcmp(argv[0], "limit"))
		return ioband_parse_limit_msg(argc, argv, msg, error);
	if (!strcmp(argv[0], "cost_model"))
		return ioband_parse_model_msg(argc, argv, msg, error);
	if (!strcmp(argv[0], "reset") || !strcmp(argv[0], "latency")) {
		msg->kind = argv[0][0] == 'r' ? IOBAND_MSG_RESET :
						IOBAND_MSG_LATENCY;
		if (argc != 1) {
			*error = msg->kind == IOBAND_MSG_RESET ?
				 "reset takes no argument" :
				 "latency takes no argument";
			return -EINVAL;
		}
		return 0;
	}
	return ioband_parse_setting_msg(argc, argv, msg, error);
}
EXPORT_SYMBOL_GPL(ioband_parse_message);

/* Applies a device-group-wide setting message to a copy of the settings. */
int ioband_dg_conf_update(struct ioband_dg_conf *conf,
			  const struct ioband_msg *msg, char **error)
{
	struct ioband_dg_conf c = *conf;

	switch (msg->kind) {
	case IOBAND_MSG_TOKEN:
		c.token_base = msg->value;
		break;
	case IOBAND_MSG_CARRYOVER:
		c.carryover = msg->value;
		break;
	case IOBAND_MSG_IO_THROTTLE:
		c.io_throttle = msg->value;
		break;
	case IOBAND_MSG_IO_LIMIT:
		c.io_limit = msg->value;
		break;
	case IOBAND_MSG_BANDWIDTH:
		c.bandwidth = msg->value;
		break;
	case IOBAND_MSG_COST_MODEL:
		c.model = msg->model;
		break;
	case IOBAND_MSG_POLICY:
		c.policy = msg->policy;
		break;
	default:
		*error = "not a device group setting";
		return -EINVAL;
	}
	if (ioband_check_limits(&c, error))
		return -EINVAL;
	*conf = c;
	return 0;
}
EXPORT_SYMBOL_GPL(ioband_dg_conf_update);

/* ---- the heaps ------------------------------------------------------------
 *
 * Binary min-heaps of groups, each in its own IOBAND_NR_HEAPS-th of the
 * storage the target provides, so the group first in an order is found in
 * O(1) and re-placed in O(log n).  The held heap orders every group holding
 * bios by vtime; range-bw's are described under "range-bw" below.  Virtual
 * times and times wrap; compare differences.
 */
static bool ioband_vt_before(u64 a, u64 b)
{
	return (s64)(a - b) < 0;
}

#ifdef __KERNEL__
#define ioband_count_visit()	do { } while (0)
#define ioband_count_alone()	do { } while (0)
#else
unsigned long ioband_heap_visits, ioband_alone_starts;
#define ioband_count_visit()	(ioband_heap_visits++)
#define ioband_count_alone()	(ioband_alone_starts++)
#endif

/* range-bw's classes of a held group; IOBAND_RANGE_NONE when not held */
enum {
	IOBAND_RANGE_NONE,
	IOBAND_RANGE_OWED,	/* below its minimum, not capped */
	IOBAND_RANGE_OTHER,	/* neither capped nor owed */
	IOBAND_RANGE_CAPPED,
};

static struct ioband_entity **ioband_heap_slots(struct ioband_sched *s,
						enum ioband_heap_id h)
{
	return s->heap + h * s->heap_cap;
}

static u32 *ioband_heap_len(struct ioband_sched *s, enum ioband_heap_id h)
{
	return h == IOBAND_HEAP_HELD ? &s->heap_len : &s->side_len[h - 1];
}

static s32 *ioband_heap_idx(struct ioband_entity *e, enum ioband_heap_id h)
{
	switch (h) {
	case IOBAND_HEAP_HELD:
		return &e->heap_idx;
	case IOBAND_HEAP_FREE:
		return &e->free_idx;
	case IOBAND_HEAP_LIMITED:
		return &e->limit_idx;
	default:
		return &e->wait_idx;
	}
}

/* Whether @a goes before @b in heap @h. */
static bool ioband_heap_before(enum ioband_heap_id h,
			       const struct ioband_entity *a,
			       const struct ioband_entity *b)
{
	switch (h) {
	case IOBAND_HEAP_HELD:
		break;
	case IOBAND_HEAP_FREE:
		/* the owed first, then by vtime */
		if (a->range_class != b->range_class)
			return a->range_class == IOBAND_RANGE_OWED;
		break;
	case IOBAND_HEAP_LIMITED:
		return ioband_vt_before(a->limit_due, b->limit_due);
	default:
		return ioband_vt_before(a->range_due, b->range_due);
	}
	return ioband_vt_before(a->vtime, b->vtime);
}

static void ioband_heap_set(struct ioband_sched *s, enum ioband_heap_id h,
			    u32 i, struct ioband_entity *e)
{
	ioband_heap_slots(s, h)[i] = e;
	*ioband_heap_idx(e, h) = i;
}

static void ioband_heap_up(struct ioband_sched *s, enum ioband_heap_id h,
			   u32 i)
{
	struct ioband_entity **heap = ioband_heap_slots(s, h);
	struct ioband_entity *e = heap[i];

	while (i) {
		u32 parent = (i - 1) / 2;

		ioband_count_visit();
		if (!ioband_heap_before(h, e, heap[parent]))
			break;
		ioband_heap_set(s, h, i, heap[parent]);
		i = parent;
	}
	ioband_heap_set(s, h, i, e);
}

static void ioband_heap_down(struct ioband_sched *s, enum ioband_heap_id h,
			     u32 i)
{
	struct ioband_entity **heap = ioband_heap_slots(s, h);
	u32 len = *ioband_heap_len(s, h);
	struct ioband_entity *e = heap[i];

	for (;;) {
		u32 child = 2 * i + 1;

		ioband_count_visit();
		if (child >= len)
			break;
		if (child + 1 < len &&
		    ioband_heap_before(h, heap[child + 1], heap[child]))
			child++;
		if (!ioband_heap_before(h, heap[child], e))
			break;
		ioband_heap_set(s, h, i, heap[child]);
		i = child;
	}
	ioband_heap_set(s, h, i, e);
}

/* Appends @e to heap @h, leaving its order to the caller. */
static void ioband_heap_append(struct ioband_sched *s, enum ioband_heap_id h,
			       struct ioband_entity *e)
{
	/* The target sizes the heaps for every group of the device group. */
	ioband_heap_set(s, h, (*ioband_heap_len(s, h))++, e);
}

static void ioband_heap_insert(struct ioband_sched *s, enum ioband_heap_id h,
			       struct ioband_entity *e)
{
	ioband_heap_append(s, h, e);
	ioband_heap_up(s, h, *ioband_heap_idx(e, h));
}

static void ioband_heap_remove(struct ioband_sched *s, enum ioband_heap_id h,
			       struct ioband_entity *e)
{
	s32 *idx = ioband_heap_idx(e, h);
	u32 i = *idx, len = --*ioband_heap_len(s, h);
	struct ioband_entity *last = ioband_heap_slots(s, h)[len];

	*idx = -1;
	if (last == e)
		return;
	ioband_heap_set(s, h, i, last);
	ioband_heap_up(s, h, i);
	ioband_heap_down(s, h, *ioband_heap_idx(last, h));
}

/* Orders heap @h, filled by ioband_heap_append(), in O(n). */
static void ioband_heap_build(struct ioband_sched *s, enum ioband_heap_id h)
{
	u32 i = *ioband_heap_len(s, h) / 2;

	while (i--)
		ioband_heap_down(s, h, i);
}

/* ---- scheduling ------------------------------------------------------------
 *
 * The model is explained in the top comment of drivers/md/dm-ioband.c.
 * In short: serving @cost sectors advances a group's vtime by
 * cost / weight and the device group's clock by cost / active_weight.
 * A group may run at most @window ahead of the clock and may fall at most
 * @carry behind it, which bounds the credit an idle group can bank.  A
 * group is active while it has bios held or in flight, and for idle_ns
 * after its last one completed: a group whose processes are between two
 * I/Os keeps its share, a group that has stopped gives it up.
 */
/*
 * The clock only moves forward, by less than 2^63 at a time; a new value
 * below the old one has wrapped past 2^64, which advances the epoch.
 */
static inline void ioband_sched_clock_to(struct ioband_sched *s, u64 vclock)
{
	if (vclock < s->vclock)
		s->vclock_wraps++;
	s->vclock = vclock;
}

/*
 * The clock advances by @delta, less what weight-time's corrections have
 * taken back (the clock owes it, since it never moves backwards).
 */
static inline void ioband_sched_clock_advance(struct ioband_sched *s, u64 delta)
{
	u64 paid = min_t(u64, delta, s->vclock_owed);

	s->vclock_owed -= paid;
	ioband_sched_clock_to(s, s->vclock + delta - paid);
}

/* @e's virtual time is now @vtime, set relative to the current clock. */
static inline void ioband_entity_set_vtime(struct ioband_sched *s,
					   struct ioband_entity *e, u64 vtime)
{
	e->vtime = vtime;
	e->vtime_epoch = ioband_sched_epoch(s);
}

/*
 * The window is one epoch of token_base tokens shared by the weight of the
 * active groups, so that a busy group among many idle ones may still run
 * a few bios ahead of the clock: sharing it by the weight of every
 * configured group held every other bio of a weight-100 group when 64 of
 * 1024 groups were busy.  It is never less than the epoch shared by the
 * total weight with at least one token per group (with more groups than
 * tokens a group of average weight could otherwise not run one bio ahead
 * of the clock).  The carry-over, which bounds the credit a returning
 * group brings back, is carryover windows of the same kind, for the same
 * reason: shared by the total weight, idle groups shrank the credit of a
 * single synchronous stream, which gives up its share at every completion
 * and so returns with every bio, and the more groups were configured the
 * more often its bios were held.
 *
 * The active weight changes with every group that starts or stops, so the
 * window follows it lazily: ioband_sched_window() divides again only when the
 * active weight differs from the one it last divided by.
 */
static u64 ioband_token_cost(const struct ioband_sched *s)
{
	return s->conf.policy == IOBAND_POLICY_WEIGHT_TIME ?
	       IOBAND_TIME_TOKEN : IOBAND_SECTORS_PER_TOKEN;
}

static void ioband_update_window(struct ioband_sched *s)
{
	u64 total = s->total_weight ? s->total_weight : 1;
	u64 epoch = (u64)max_t(u32, s->conf.token_base, s->nr_entities) *
		    ioband_token_cost(s);

	s->base_window = div64_u64(epoch * IOBAND_VSCALE, total);
	s->window_weight = 0;
	s->window = s->base_window;
}

static u64 ioband_sched_window(struct ioband_sched *s)
{
	u64 w;

	if (s->window_weight == s->active_weight || !s->active_weight)
		return s->window;
	w = div64_u64((u64)s->conf.token_base * ioband_token_cost(s) *
		      IOBAND_VSCALE, s->active_weight);
	s->window = max_t(u64, w, s->base_window);
	s->window_weight = s->active_weight;
	return s->window;
}

/* How far behind the clock a returning group may stay: its credit. */
static u64 ioband_sched_carry(struct ioband_sched *s)
{
	return ioband_sched_window(s) * s->conf.carryover;
}

static void ioband_est_init(struct ioband_est *est);

/*
 * iocost's linear model in nanoseconds (blk-iocost.c, calc_lcoefs()): a
 * page costs a second over the pages per second; an I/O what a second
 * over the I/Os per second leaves after its one page, none if less.
 * Each at most a second.
 */
static u32 ioband_model_ns(u64 per_sec, u64 minus)
{
	u64 ns = div64_u64(NSEC_PER_SEC_U64 + per_sec - 1, per_sec);

	ns = ns > minus ? ns - minus : 0;
	return min_t(u64, ns, IOBAND_EST_MAX_NS);
}

static void ioband_model_coef_set(struct ioband_model_coef *c,
				  const struct ioband_cost_model *m)
{
	unsigned int w;

	memset(c, 0, sizeof(*c));
	c->given = ioband_model_given(m);
	if (!c->given)
		return;
	for (w = 0; w < 2; w++) {
		const u64 *p = &m->param[w * 3];	/* bps, seqiops, randiops */
		u64 pages = max_t(u64, 1, div64_u64(p[0] + 4095, 4096));

		c->page_ns[w] = ioband_model_ns(pages, 0);
		c->io_ns[w * 2] = ioband_model_ns(p[2], c->page_ns[w]);
		c->io_ns[w * 2 + 1] = ioband_model_ns(p[1], c->page_ns[w]);
	}
}

/*
 * What the user's model says a bio of @e costs, in units; what is left
 * below a unit is carried to the group's next bio, so that in the long
 * run a group pays what the model says to the nanosecond (on a fast
 * device a 4 KiB read may cost less than a unit).  The class gives the
 * direction and whether it is sequential.
 */
u32 ioband_model_charge(struct ioband_entity *e,
			const struct ioband_model_coef *m, u32 cls, u32 sectors)
{
	u32 wseq = cls / IOBAND_EST_SIZES;	/* write * 2 + sequential */
	u64 pages = max_t(u32, 1, sectors >> 3);
	u64 ns = m->io_ns[wseq] + pages * m->page_ns[wseq >> 1];

	ns = min_t(u64, ns, IOBAND_EST_MAX_NS) + e->model_rem_ns;
	e->model_rem_ns = ns & ((1U << IOBAND_TIME_SHIFT) - 1);
	return ns >> IOBAND_TIME_SHIFT;
}
EXPORT_SYMBOL_GPL(ioband_model_charge);

void ioband_sched_init(struct ioband_sched *s, const struct ioband_dg_conf *c,
		       struct ioband_entity **heap, u32 heap_cap)
{
	memset(s, 0, sizeof(*s));
	s->conf = *c;
	s->idle_ns = IOBAND_DEFAULT_IDLE_NS;
	s->heap = heap;
	s->heap_cap = heap_cap;
	ioband_est_init(&s->est);
	ioband_model_coef_set(&s->model, &c->model);
	ioband_update_window(s);
}
EXPORT_SYMBOL_GPL(ioband_sched_init);

static void ioband_range_switch(struct ioband_sched *s, bool on);

void ioband_sched_set_conf(struct ioband_sched *s,
			   const struct ioband_dg_conf *conf)
{
	bool was_range = s->conf.policy == IOBAND_POLICY_RANGE_BW;
	bool is_range = conf->policy == IOBAND_POLICY_RANGE_BW;

	/* what another policy's bios taught may be stale: learn afresh */
	if (conf->policy != s->conf.policy)
		ioband_est_init(&s->est);
	s->conf = *conf;
	ioband_model_coef_set(&s->model, &conf->model);
	ioband_update_window(s);
	if (was_range != is_range)
		ioband_range_switch(s, is_range);
}
EXPORT_SYMBOL_GPL(ioband_sched_set_conf);

/*
 * Moves the heaps into new storage of IOBAND_HEAP_SLOTS(@heap_cap) slots
 * (@heap_cap at least heap_len) and returns the old storage for the caller
 * to free.
 */
struct ioband_entity **ioband_sched_swap_heap(struct ioband_sched *s,
					      struct ioband_entity **heap,
					      u32 heap_cap)
{
	struct ioband_entity **old = s->heap;
	enum ioband_heap_id h;

	for (h = 0; h < IOBAND_NR_HEAPS; h++)
		memcpy(heap + h * heap_cap, ioband_heap_slots(s, h),
		       *ioband_heap_len(s, h) * sizeof(*heap));
	s->heap = heap;
	s->heap_cap = heap_cap;
	return old;
}
EXPORT_SYMBOL_GPL(ioband_sched_swap_heap);

static u64 ioband_inv_weight(u32 weight)
{
	return div64_u64(IOBAND_VSCALE, weight);
}

/*
 * A group's own state, outside any scheduler: a table that is loaded but
 * not yet resumed has its groups prepared, and they join the scheduler
 * only when it goes live.
 */
void ioband_entity_prepare(struct ioband_entity *e, u32 weight)
{
	memset(e, 0, sizeof(*e));
	e->weight = weight;
	e->inv_weight = ioband_inv_weight(weight);
	e->heap_idx = -1;
	e->free_idx = -1;
	e->wait_idx = -1;
	e->limit_idx = -1;
}
EXPORT_SYMBOL_GPL(ioband_entity_prepare);

/* A prepared group joins @s, level with its clock. */
void ioband_entity_join(struct ioband_sched *s, struct ioband_entity *e)
{
	ioband_entity_set_vtime(s, e, s->vclock);
	s->total_weight += e->weight;
	s->nr_entities++;
	ioband_update_window(s);
}
EXPORT_SYMBOL_GPL(ioband_entity_join);

void ioband_entity_init(struct ioband_sched *s, struct ioband_entity *e,
			u32 weight)
{
	ioband_entity_prepare(e, weight);
	ioband_entity_join(s, e);
}
EXPORT_SYMBOL_GPL(ioband_entity_init);

static bool ioband_entity_busy(const struct ioband_entity *e)
{
	return e->nr_queued || e->nr_inflight;
}

/*
 * The idle list holds, oldest first, exactly the groups that are active
 * but not busy.
 */
void ioband_sched_idle_add(struct ioband_sched *s, struct ioband_entity *e,
			   u64 now)
{
	e->idle_since = now;
	e->idle_next = NULL;
	e->idle_prev = s->idle_tail;
	if (s->idle_tail)
		s->idle_tail->idle_next = e;
	else
		s->idle_head = e;
	s->idle_tail = e;
}
EXPORT_SYMBOL_GPL(ioband_sched_idle_add);

static void ioband_idle_del(struct ioband_sched *s, struct ioband_entity *e)
{
	if (e->idle_prev)
		e->idle_prev->idle_next = e->idle_next;
	else
		s->idle_head = e->idle_next;
	if (e->idle_next)
		e->idle_next->idle_prev = e->idle_prev;
	else
		s->idle_tail = e->idle_prev;
	e->idle_prev = NULL;
	e->idle_next = NULL;
}

static void ioband_deactivate(struct ioband_sched *s, struct ioband_entity *e)
{
	ioband_idle_del(s, e);
	e->active = false;
	ioband_active_add(s, e, -(s64)e->weight);
	s->nr_active--;
}

/* Groups idle for longer than idle_ns give up their share. */
static inline void ioband_expire_idle(struct ioband_sched *s, u64 now)
{
	while (s->idle_head &&
	       (s64)(now - s->idle_head->idle_since) >= (s64)s->idle_ns)
		ioband_deactivate(s, s->idle_head);
}

void ioband_entity_set_weight(struct ioband_sched *s, struct ioband_entity *e,
			      u32 weight)
{
	s64 delta = (s64)weight - e->weight;

	if (e->in_tree) {
		/* whether it counts where it is does not change */
		if (e->active)
			e->tree_weight += delta;
		if (e->tree_weight && e->parent)
			e->parent->tree_weight += delta;
		else if (e->tree_weight)
			s->active_weight += delta;
	} else if (e->active) {
		s->active_weight += delta;
	}
	s->total_weight += delta;
	e->weight = weight;
	e->inv_weight = ioband_inv_weight(weight);
	ioband_update_window(s);
}
EXPORT_SYMBOL_GPL(ioband_entity_set_weight);

/*
 * The group leaves the configuration.  Its held bios must have been moved
 * away; bios still in flight keep it active until they complete, and
 * ioband_entity_forget() must be called before its memory is reused.
 */
void ioband_entity_exit(struct ioband_sched *s, struct ioband_entity *e)
{
	s->total_weight -= e->weight;
	s->nr_entities--;
	ioband_update_window(s);
}
EXPORT_SYMBOL_GPL(ioband_entity_exit);

/* The scheduler lets go of a group with nothing held or in flight. */
void ioband_entity_forget(struct ioband_sched *s, struct ioband_entity *e)
{
	if (e->active)
		ioband_deactivate(s, e);
	if (s->antic == e)
		s->antic = NULL;
}
EXPORT_SYMBOL_GPL(ioband_entity_forget);

/* After a policy switch every group starts level with the clock. */
void ioband_entity_restart(struct ioband_sched *s, struct ioband_entity *e)
{
	/* Equal keys keep the heap ordered without re-sorting it. */
	e->vtime = s->vclock;
	e->vtime_epoch = ioband_sched_epoch(s);
}
EXPORT_SYMBOL_GPL(ioband_entity_restart);

static u32 ioband_ewma(u32 avg, u64 ns);

/*
 * weight-time: a single stream's pause since its last completion teaches
 * its think time.
 */
static void ioband_time_arrive(struct ioband_entity *e, u64 now)
{
	if (e->last_done && !e->nr_queued &&
	    (e->parallel || !e->nr_inflight))
		e->think_ns = ioband_ewma(e->think_ns,
					  min_t(u64, now - e->last_done, U32_MAX));
}

/* Whether the device is kept for another group's next bio. */
static bool ioband_antic_other(struct ioband_sched *s, struct ioband_entity *e,
			       u64 now, u64 *wake_at)
{
	if (!s->antic || s->antic == e)
		return false;
	if (ioband_vt_before(now, s->antic_until)) {
		*wake_at = s->antic_until;
		return true;
	}
	s->antic = NULL;
	return false;
}

/*
 * @e, active now and holding no bio, brings at most the carry-over of
 * credit from the past (see ioband_sched_carry()).  A group whose time was
 * last set two epochs ago is more than 2^61 behind the clock, far past
 * any credit it may keep; within one epoch, the two times are less than
 * 2^63 apart and compare right.
 */
static __always_inline void ioband_entity_floor(struct ioband_sched *s,
						struct ioband_entity *e)
{
	u64 floor = s->vclock - ioband_sched_carry(s);

	if (ioband_sched_epoch(s) - e->vtime_epoch >= 2 ||
	    ioband_vt_before(e->vtime, floor))
		ioband_entity_set_vtime(s, e, floor);
}

/*
 * A bio arrives for @e, which becomes active if it was not.  A group that
 * is not holding bios may not bring more than the carry-over of credit
 * from the past.
 */
static __always_inline void ioband_sched_arrive(struct ioband_sched *s,
						struct ioband_entity *e,
						u64 now)
{
	ioband_expire_idle(s, now);
	if (!e->active) {
		e->active = true;
		e->parallel = false;
		ioband_active_add(s, e, e->weight);
		s->nr_active++;
	} else if (!ioband_entity_busy(e)) {
		ioband_idle_del(s, e);
	} else {
		e->parallel = true;
	}
	if (!e->nr_queued)
		ioband_entity_floor(s, e);
	if (s->conf.policy == IOBAND_POLICY_WEIGHT_TIME)
		ioband_time_arrive(e, now);
}

/* ---- the hierarchy ---------------------------------------------------------
 *
 * See "Hierarchy" in drivers/md/dm-ioband.c.  A node counts where it is
 * (in its parent's tree_weight, or at the top in active_weight) with its
 * own weight while its tree_weight is not 0: while it or a group below it
 * is active.  Outside a tree (no parent, no children) that is while it is
 * active, and tree_weight is not kept.
 */

/* What @e counts for where it is: its weight, or 0. */
static u64 ioband_counted(const struct ioband_entity *e)
{
	bool counts = e->in_tree ? e->tree_weight : e->active;

	return counts ? e->weight : 0;
}

/*
 * @delta joins @e's tree_weight: its own activity, or a child that starts
 * or stops counting.  Up the tree for as long as a node's counting changes.
 */
void ioband_tree_add(struct ioband_sched *s, struct ioband_entity *e,
		     s64 delta)
{
	for (;;) {
		bool counted = e->tree_weight;

		e->tree_weight += delta;
		if (counted == !!e->tree_weight)
			return;
		delta = e->tree_weight ? (s64)e->weight : -(s64)e->weight;
		if (!e->parent) {
			s->active_weight += delta;
			return;
		}
		e = e->parent;
	}
}
EXPORT_SYMBOL_GPL(ioband_tree_add);

/* @e has or loses a parent or children: it enters or leaves the tree. */
static void ioband_tree_update(struct ioband_entity *e)
{
	bool in = e->parent || e->nr_children;

	/* entering, its children are still to come: only its own activity */
	if (in && !e->in_tree)
		e->tree_weight = e->active ? e->weight : 0;
	e->in_tree = in;
}

/*
 * @e, with everything below it, moves under @parent (NULL: to the top).
 * The caller keeps the tree a tree and frees no parent that still has
 * children.
 */
void ioband_entity_set_parent(struct ioband_sched *s, struct ioband_entity *e,
			      struct ioband_entity *parent)
{
	s64 w = ioband_counted(e);
	struct ioband_entity *old = e->parent;

	if (old == parent)
		return;
	if (old)
		ioband_tree_add(s, old, -w);
	else
		s->active_weight -= w;
	e->parent = parent;
	ioband_tree_update(e);
	if (old) {
		old->nr_children--;
		ioband_tree_update(old);
	}
	if (parent) {
		parent->nr_children++;
		ioband_tree_update(parent);
		ioband_tree_add(s, parent, w);
	} else {
		s->active_weight += w;
	}
}
EXPORT_SYMBOL_GPL(ioband_entity_set_parent);

/*
 * 1 / the part of its top ancestor's weight that falls to @e, in
 * IOBAND_VSCALE: its top ancestor's inverse weight, times at each level
 * the active weight shared over the weight it was shared by (its own bios
 * share its node's with its active children).  Every factor is at least
 * 1, so no partial product exceeds the result: nothing overflows while
 * that is at most IOBAND_VSCALE, and a share below a weight of 1 counts
 * as 1.
 */
u64 ioband_tree_inv_weight(const struct ioband_entity *e)
{
	const struct ioband_entity *n;
	u64 inv;

	for (n = e; n->parent; n = n->parent)
		;
	inv = n->inv_weight;
	if (e->tree_weight > e->weight)
		inv = div64_u64(inv * e->tree_weight, e->weight);
	for (n = e; n->parent && inv < IOBAND_VSCALE; n = n->parent)
		inv = div64_u64(inv * max_t(u64, n->parent->tree_weight,
					    n->weight), n->weight);
	return min_t(u64, inv, IOBAND_VSCALE);
}
EXPORT_SYMBOL_GPL(ioband_tree_inv_weight);

/* ---- range-bw --------------------------------------------------------------
 *
 * Each group has two token buckets, counted in sector-nanoseconds so that
 * refilling is a multiplication: a bucket gains elapsed_ns * rate tokens,
 * rate in sectors per second (KB/s * 2), and a bio of n sectors costs
 * n * 10^9.  Each holds at most IOBAND_RANGE_BURST_NS worth of its rate.
 * The cap bucket may go negative by one bio: a group may send while it
 * has any token left, so no bio waits for more than its own cost to
 * refill, and then waits until the debt is paid.  A group whose minimum
 * bucket has tokens is below its minimum and goes before the others.
 * What is left is shared by weight, through the virtual clock.
 */
#define NSEC_PER_SEC_S64 1000000000LL

static s64 ioband_range_rate(u32 kbps)
{
	return (s64)kbps * 2;	/* sectors per second */
}

static s64 ioband_range_depth(u32 kbps)
{
	s64 depth = ioband_range_rate(kbps) * IOBAND_RANGE_BURST_NS;

	/* at least one 4 KiB bio, so a tiny rate is not stuck forever */
	return depth > 8 * NSEC_PER_SEC_S64 ? depth : 8 * NSEC_PER_SEC_S64;
}

/*
 * A bucket of @kbps that held @tokens, @elapsed ns later.  Filling is
 * exact however long ago the bucket was last filled, so filling it once
 * equals filling it at every moment in between: a group's buckets are
 * filled only when it is looked at.  The time to fill it bounds the
 * product.
 */
static s64 ioband_range_fill(s64 tokens, s64 elapsed, u32 kbps)
{
	s64 rate = ioband_range_rate(kbps), depth = ioband_range_depth(kbps);

	if (tokens >= depth || (u64)elapsed > div64_u64(depth - tokens, rate))
		return depth;
	return tokens + elapsed * rate;
}

static void ioband_range_refill(struct ioband_entity *e, u64 now)
{
	s64 elapsed = (s64)(now - e->refilled_at);

	if (elapsed <= 0)
		return;
	e->refilled_at = now;
	if (e->max_kbps)
		e->cap_tokens = ioband_range_fill(e->cap_tokens, elapsed,
						  e->max_kbps);
	if (e->min_kbps)
		e->min_tokens = ioband_range_fill(e->min_tokens, elapsed,
						  e->min_kbps);
}

static bool ioband_range_capped(const struct ioband_entity *e)
{
	return e->max_kbps && e->cap_tokens <= 0;
}

static bool ioband_range_below_min(const struct ioband_entity *e)
{
	return e->min_kbps && e->min_tokens > 0;
}

/* When a bucket of @kbps, at @tokens (not above 0) at @at, is above 0. */
static u64 ioband_range_when_positive(s64 tokens, u32 kbps, u64 at)
{
	return at + div64_u64(-tokens, ioband_range_rate(kbps)) + 1;
}

static void ioband_range_charge(struct ioband_entity *e, u32 cost)
{
	s64 tokens = (s64)cost * NSEC_PER_SEC_S64;

	if (e->max_kbps)
		e->cap_tokens -= tokens;
	if (e->min_kbps) {
		e->min_tokens -= tokens;
		/* service above the minimum does not become a debt to it */
		if (e->min_tokens < -ioband_range_depth(e->min_kbps))
			e->min_tokens = -ioband_range_depth(e->min_kbps);
	}
}

static void ioband_earliest(u64 *wake_at, u64 t)
{
	if (t && (!*wake_at || ioband_vt_before(t, *wake_at)))
		*wake_at = t;
}

/*
 * range-bw keeps each held group in heaps by its class: the free heap
 * holds the groups not capped, those below their minimum (owed) first,
 * then by vtime, so its head is the one ioband_sched_next() serves; the
 * capped heap holds the capped groups by when they are paid up, and the
 * met heap the free groups with a minimum they have met, by when it is
 * owed again.  Filling only raises buckets, so a held group's class
 * changes with time alone only at its range_due, and only out of the
 * capped or met heap; anything else that changes it (a charge, a new
 * range) takes the group out of its heaps first and files it again after.
 * A group's class is taken from its buckets as of their last fill, which
 * with range_due tells it at any later time.
 */
static void ioband_range_add(struct ioband_sched *s, enum ioband_heap_id h,
			     struct ioband_entity *e, bool sift)
{
	if (sift)
		ioband_heap_insert(s, h, e);
	else
		ioband_heap_append(s, h, e);
}

static void ioband_range_place(struct ioband_sched *s, struct ioband_entity *e,
			       bool sift)
{
	ioband_count_visit();
	if (ioband_range_capped(e)) {
		e->range_class = IOBAND_RANGE_CAPPED;
		e->range_due = ioband_range_when_positive(e->cap_tokens,
							  e->max_kbps,
							  e->refilled_at);
		ioband_range_add(s, IOBAND_HEAP_CAPPED, e, sift);
		return;
	}
	e->range_class = ioband_range_below_min(e) ? IOBAND_RANGE_OWED :
						     IOBAND_RANGE_OTHER;
	ioband_range_add(s, IOBAND_HEAP_FREE, e, sift);
	if (e->range_class == IOBAND_RANGE_OWED || !e->min_kbps)
		return;
	e->range_due = ioband_range_when_positive(e->min_tokens, e->min_kbps,
						  e->refilled_at);
	ioband_range_add(s, IOBAND_HEAP_MET, e, sift);
}

static void ioband_range_unplace(struct ioband_sched *s,
				 struct ioband_entity *e)
{
	if (e->free_idx >= 0)
		ioband_heap_remove(s, IOBAND_HEAP_FREE, e);
	if (e->wait_idx >= 0)
		ioband_heap_remove(s, e->range_class == IOBAND_RANGE_CAPPED ?
				   IOBAND_HEAP_CAPPED : IOBAND_HEAP_MET, e);
	e->range_class = IOBAND_RANGE_NONE;
}

/*
 * Before a held group's buckets are spent or it stops being held: they
 * count as filled whenever ioband_sched_next() chooses (the scan these
 * heaps replace filled every held group's), so they are brought to the
 * last such time, and the group leaves its heaps.
 */
static void ioband_range_lift(struct ioband_sched *s, struct ioband_entity *e)
{
	if (e->range_class == IOBAND_RANGE_NONE)
		return;
	ioband_range_refill(e, s->range_seen);
	ioband_range_unplace(s, e);
}

/* After that, or when it starts being held: files it again. */
static void ioband_range_settle(struct ioband_sched *s, struct ioband_entity *e)
{
	if (s->conf.policy == IOBAND_POLICY_RANGE_BW && e->heap_idx >= 0)
		ioband_range_place(s, e, true);
}

/*
 * The policy becomes range-bw (@on: every held group is filed, in O(n),
 * as the target's restart of every group is) or stops being it.
 */
static void ioband_range_switch(struct ioband_sched *s, bool on)
{
	enum ioband_heap_id h;
	u32 i;

	for (i = 0; i < s->heap_len; i++) {
		struct ioband_entity *e = s->heap[i];

		if (on) {
			ioband_range_place(s, e, false);
			continue;
		}
		e->range_class = IOBAND_RANGE_NONE;
		e->free_idx = -1;
		e->wait_idx = -1;
	}
	for (h = IOBAND_HEAP_FREE; h <= IOBAND_HEAP_MET; h++) {
		if (on)
			ioband_heap_build(s, h);
		else
			*ioband_heap_len(s, h) = 0;
	}
}

void ioband_entity_set_range(struct ioband_sched *s, struct ioband_entity *e,
			     u32 min_kbps, u32 max_kbps, u64 now)
{
	ioband_range_unplace(s, e);
	e->min_kbps = min_kbps;
	e->max_kbps = max_kbps;
	e->refilled_at = now;
	e->cap_tokens = max_kbps ? ioband_range_depth(max_kbps) : 0;
	e->min_tokens = 0;
	ioband_range_settle(s, e);
}
EXPORT_SYMBOL_GPL(ioband_entity_set_range);

/*
 * Whether a group that is not held could still move the clock.  Under
 * weight-time only a group in its grace counts: one with bios in flight
 * and none held is asking for no more than it has, and holding the others
 * back for it would leave the device idle (max-min fairness: what a group
 * cannot use goes to the others).
 */
static inline bool ioband_sched_may_wait(const struct ioband_sched *s,
					 const struct ioband_entity *e)
{
	if (s->conf.policy == IOBAND_POLICY_WEIGHT_TIME)
		return s->idle_head;
	return s->nr_active > s->heap_len + !e->nr_queued;
}

/*
 * May @e, the group furthest behind among those that want to send a bio,
 * be served now?  Within its window always.  Beyond it, when io_throttle
 * is set and fewer bios are in flight, or when every active group holds
 * bios beyond its window, so that no dispatch could ever move the clock:
 * then the clock jumps forward until @e is within its window again, as if
 * a new epoch had begun.  Otherwise the clock moves when an active group
 * that is not held sends a bio, or when an idle group's grace runs out at
 * *wake_at.
 */
static inline bool ioband_may_serve(struct ioband_sched *s,
				    struct ioband_entity *e, u64 *wake_at)
{
	u64 window;

	*wake_at = 0;
	if (s->nr_inflight >= ioband_sched_depth(s))
		return false;
	window = ioband_sched_window(s);
	if (!ioband_vt_before(s->vclock + window, e->vtime))
		return true;
	if (s->nr_inflight >= s->conf.io_throttle && ioband_sched_may_wait(s, e)) {
		if (s->idle_head)
			*wake_at = s->idle_head->idle_since + s->idle_ns;
		return false;
	}
	s->vclock_owed = 0;	/* set from the groups' times, it owes nothing */
	ioband_sched_clock_to(s, e->vtime - window);
	return true;
}

/* May the bio that just arrived for @e go at once? */
static inline bool ioband_sched_admit(struct ioband_sched *s,
				      struct ioband_entity *e, u64 now)
{
	u64 wake_at;

	/* Bios of one group leave in the order they came. */
	if (e->nr_queued)
		return false;
	if (s->antic) {
		if (ioband_antic_other(s, e, now, &wake_at))
			return false;
		/*
		 * The awaited bio: its group's batch goes on, before groups
		 * further behind, while it is within its window.
		 */
		if (s->antic == e) {
			s->antic = NULL;
			if (s->nr_inflight < ioband_sched_depth(s) &&
			    !ioband_vt_before(s->vclock + ioband_sched_window(s), e->vtime))
				return true;
		}
	}
	if (s->conf.policy == IOBAND_POLICY_RANGE_BW) {
		ioband_range_refill(e, now);
		if (ioband_range_capped(e))
			return false;
		if (ioband_range_below_min(e))
			return s->nr_inflight < s->conf.io_limit;
	} else if (s->heap_len && ioband_vt_before(s->heap[0]->vtime, e->vtime)) {
		/* a group behind every held one may go first */
		return false;
	}
	return ioband_may_serve(s, e, &wake_at);
}

static inline void ioband_sched_hold(struct ioband_sched *s,
				     struct ioband_entity *e)
{
	if (!e->nr_queued++) {
		ioband_heap_insert(s, IOBAND_HEAP_HELD, e);
		ioband_range_settle(s, e);
	}
}

/*
 * A bio of @e goes down: from its group's queue when @held, else straight
 * from map.  The caller may dispatch held bios past every limit (suspend);
 * the limits only ever decide in ioband_sched_start() and _next().
 */
static __always_inline void ioband_sched_charge(struct ioband_sched *s,
						struct ioband_entity *e,
						u32 cost, bool held)
{
	/*
	 * Service under a range-bw minimum is owed, not a share of what is
	 * left: it moves neither the group's virtual time nor the clock, so
	 * it is not held against the group once it has met its minimum.
	 */
	bool owed = s->conf.policy == IOBAND_POLICY_RANGE_BW &&
		    ioband_range_below_min(e);

	if (held && !--e->nr_queued)
		ioband_heap_remove(s, IOBAND_HEAP_HELD, e);
	if (!owed) {
		ioband_sched_clock_advance(s, div64_u64((u64)cost * IOBAND_VSCALE,
							s->active_weight));
		ioband_entity_set_vtime(s, e, e->vtime +
					cost * ioband_entity_inv_weight(e));
	}
	/*
	 * A group running alone sets the clock: when others join, it has
	 * its whole window ahead of it, not whatever lead it had left.
	 */
	if (s->nr_active == 1 && ioband_vt_before(s->vclock, e->vtime))
		ioband_sched_clock_to(s, e->vtime);
	if (e->heap_idx >= 0)
		ioband_heap_down(s, IOBAND_HEAP_HELD, e->heap_idx);
	e->nr_inflight++;
	s->nr_inflight++;
	if (s->conf.policy == IOBAND_POLICY_RANGE_BW)
		ioband_range_charge(e, cost);
}

/*
 * A bio that bypasses holding is charged like any other, but the debt it
 * leaves is bounded, as iocost bounds its debts: beyond its window a group
 * owes at most @carry of virtual time (what it may keep as credit the
 * other way), and a capped group's bucket at most one burst.  The excess
 * is forgiven, so that a flood of metadata, swap or suspend-time bios
 * cannot stall its group for longer than that once it is over.  A debt
 * the group already had is kept, not forgiven.
 */
static inline void ioband_sched_charge_bypass(struct ioband_sched *s,
					      struct ioband_entity *e, u32 cost,
					 bool held)
{
	u64 vtime = e->vtime, limit;
	s64 cap_tokens = e->cap_tokens;

	ioband_sched_charge(s, e, cost, held);
	limit = s->vclock + ioband_sched_window(s) + ioband_sched_carry(s);
	if (ioband_vt_before(limit, e->vtime)) {
		ioband_entity_set_vtime(s, e, ioband_vt_before(limit, vtime) ? vtime : limit);
		/* moved down past it by the charge, it may be above its parent */
		if (e->heap_idx >= 0)
			ioband_heap_up(s, IOBAND_HEAP_HELD, e->heap_idx);
	}
	if (e->max_kbps && e->cap_tokens < -ioband_range_depth(e->max_kbps))
		e->cap_tokens = min_t(s64, cap_tokens,
				      -ioband_range_depth(e->max_kbps));
}

void ioband_sched_dispatch(struct ioband_sched *s, struct ioband_entity *e,
			   u32 cost, bool held, bool bypass)
{
	ioband_range_lift(s, e);
	if (bypass)
		ioband_sched_charge_bypass(s, e, cost, held);
	else
		ioband_sched_charge(s, e, cost, held);
	ioband_range_settle(s, e);
}
EXPORT_SYMBOL_GPL(ioband_sched_dispatch);

/*
 * tests/unit/alone-diff's reference build sets it to compile out the path
 * below, and requires both builds to leave the scheduler in the same state.
 */
#ifndef IOBAND_TEST_NO_ALONE
#define IOBAND_TEST_NO_ALONE	0
#endif

/*
 * Whether a bio of @e finds the device group with no group active, no
 * bio in flight and nothing that could hold it: what ioband_sched_start()
 * would do then is ioband_sched_start_alone()'s, without its questions.
 * With no group active none is idle or holds bios, and the clock has no
 * group to wait for: a single synchronous stream meets this at every bio,
 * since its group stops counting at every completion.
 */
static __always_inline bool ioband_sched_alone(const struct ioband_sched *s,
					       const struct ioband_entity *e)
{
	return !IOBAND_TEST_NO_ALONE && !s->nr_active && !s->nr_inflight && !s->antic &&
	       s->conf.policy == IOBAND_POLICY_WEIGHT && !e->in_tree;
}

/*
 * ioband_sched_start() for a bio of @e while ioband_sched_alone(): @e
 * becomes the one active group, within its window at once (a group alone
 * is never held: with nothing in flight the clock jumps to it), and is
 * charged.  It leaves what the general path would (tests/unit/alone-diff.c
 * compares the two).
 */
static __always_inline bool ioband_sched_start_alone(struct ioband_sched *s,
						     struct ioband_entity *e,
						     u32 cost)
{
	ioband_count_alone();
	e->active = true;
	e->parallel = false;
	s->active_weight += e->weight;
	s->nr_active = 1;
	ioband_entity_floor(s, e);
	/*
	 * Beyond its window, the group would have waited for the clock to
	 * come within a window of it, forgiving what the clock owed; the
	 * jump to its time after the charge covers the rest.
	 */
	if (ioband_vt_before(s->vclock + ioband_sched_window(s), e->vtime))
		s->vclock_owed = 0;
	ioband_sched_clock_advance(s, div64_u64((u64)cost * IOBAND_VSCALE,
						s->active_weight));
	ioband_entity_set_vtime(s, e, e->vtime + cost * e->inv_weight);
	if (ioband_vt_before(s->vclock, e->vtime))
		ioband_sched_clock_to(s, e->vtime);
	e->nr_inflight++;
	s->nr_inflight++;
	return true;
}

/*
 * ioband_sched_start() but for a bio that finds the device group empty.
 * The building blocks inline here: ioband_sched_arrive() and
 * ioband_sched_charge() are __always_inline, since inline is only a hint
 * and the compiler keeps large functions out of line, adding a call and
 * its register saves to every bio.
 */
static noinline bool ioband_sched_start_shared(struct ioband_sched *s,
					       struct ioband_entity *e,
					       u32 cost, bool bypass, u64 now)
{
	ioband_sched_arrive(s, e, now);
	if (bypass) {
		ioband_range_lift(s, e);
		ioband_sched_charge_bypass(s, e, cost, false);
		ioband_range_settle(s, e);
		return true;
	}
	if (!ioband_sched_admit(s, e, now)) {
		ioband_sched_hold(s, e);
		return false;
	}
	ioband_sched_charge(s, e, cost, false);
	return true;
}

/*
 * A bio of @cost arrives for @e: true if it may go down at once (and it
 * is charged), false if it must wait (and it is queued: the caller keeps
 * it in @e's list).  @bypass sends it regardless: while suspending, and
 * for bios that other groups may be waiting on; its debt is bounded (see
 * ioband_sched_charge_bypass()).
 * The one call the map path makes.  The path of a bio that finds the
 * device group empty needs one saved register, the shared path six: apart,
 * the first does not pay for the second's.
 */
bool ioband_sched_start(struct ioband_sched *s, struct ioband_entity *e,
			u32 cost, bool bypass, u64 now)
{
	if (!bypass && ioband_sched_alone(s, e))
		return ioband_sched_start_alone(s, e, cost);
	return ioband_sched_start_shared(s, e, cost, bypass, now);
}
EXPORT_SYMBOL_GPL(ioband_sched_start);

/* ---- leases ----------------------------------------------------------------
 *
 * While no group holds bios, the scheduler decides nothing: every bio that
 * arrives goes, and is charged.  A lease lets one CPU send the next bios
 * of a group without the device group's lock: up to @slots bios costing
 * @units in all, charged when it is granted as that many admissions would
 * have been, and counted in flight from then on.  What the CPU does not
 * use goes back by ioband_lease_return(); bios sent under it complete by
 * ioband_lease_complete().  The bound: a lease is granted only if all of
 * it fits the group's window, so a group never runs further past the
 * clock than a bio of the locked path may; what it costs is that the last
 * part of a window is used through the lock, one bio at a time.
 */

/* What the clock advances by for @units of service at the active weight. */
static u64 ioband_lease_clock_delta(const struct ioband_sched *s, u64 units)
{
	return s->active_weight ?
	       div64_u64(units * IOBAND_VSCALE, s->active_weight) : 0;
}

/*
 * After a bio of @e went down by ioband_sched_start(): the most of @units
 * (at least @cost, what one bio costs) and @slots that @e may lease, which
 * are charged, as a lease word (ioband_lease_word()); 0 when none may be.
 * None while any group holds bios (an arbitration is going on, and every
 * bio must take part in it), under range-bw (its buckets are per bio), or
 * when the lease would take more than half the depth still free, or a
 * whole lease does not fit @e's window.
 */
u64 ioband_lease_grant(struct ioband_sched *s, struct ioband_entity *e,
		       u32 cost, u32 units, u32 slots)
{
	u64 room, inv = ioband_entity_inv_weight(e), window;
	u32 depth = ioband_sched_depth(s);

	if (s->heap_len || s->conf.policy == IOBAND_POLICY_RANGE_BW ||
	    !e->active || s->nr_inflight >= depth)
		return 0;
	slots = min_t(u32, slots, (depth - s->nr_inflight) / 2);
	window = ioband_sched_window(s);
	if (!slots || ioband_vt_before(s->vclock + window, e->vtime))
		return 0;
	room = div64_u64(s->vclock + window - e->vtime, inv);
	if (room < cost)
		return 0;
	/*
	 * More units than the slots can use at once: the slots of bios that
	 * completed on the lease's CPU come back to it (see dm-ioband.c).
	 */
	units = max_t(u64, min_t(u64, units, room), cost);
	ioband_sched_clock_advance(s, ioband_lease_clock_delta(s, units));
	ioband_entity_set_vtime(s, e, e->vtime + (u64)units * inv);
	if (s->nr_active == 1 && ioband_vt_before(s->vclock, e->vtime))
		ioband_sched_clock_to(s, e->vtime);
	e->nr_inflight += slots;
	s->nr_inflight += slots;
	return ioband_lease_word(slots, units);
}
EXPORT_SYMBOL_GPL(ioband_lease_grant);

/*
 * A lease of @e comes back with @units and @slots unused: @e's time goes
 * back by them, and the clock, which never moves back, owes what it
 * advanced for them (as ioband_sched_correct() does for an overcharge).
 * Units may come back without slots (bios costing less than the lease's
 * first); then nothing left flight, and @e, possibly idle already, stays
 * as it is.
 */
void ioband_lease_return(struct ioband_sched *s, struct ioband_entity *e,
			 u32 units, u32 slots, u64 now)
{
	ioband_entity_set_vtime(s, e, e->vtime -
				(u64)units * ioband_entity_inv_weight(e));
	s->vclock_owed += ioband_lease_clock_delta(s, units);
	if (!slots)
		return;
	e->nr_inflight -= slots;
	s->nr_inflight -= slots;
	ioband_sched_maybe_idle(s, e, now);
}
EXPORT_SYMBOL_GPL(ioband_lease_return);

/*
 * @nr bios that @e sent under a lease have completed; @parallel if any of
 * them went down while another of @e's was in flight (what
 * ioband_sched_arrive() would have seen: see ioband_sched_maybe_idle()).
 */
void ioband_lease_complete(struct ioband_sched *s, struct ioband_entity *e,
			   u32 nr, bool parallel, u64 now)
{
	e->parallel |= parallel;
	e->nr_inflight -= nr;
	s->nr_inflight -= nr;
	ioband_sched_maybe_idle(s, e, now);
}
EXPORT_SYMBOL_GPL(ioband_lease_complete);

/*
 * The bio that ioband_sched_start() has just held for @e, the last of
 * its queue, is not kept after all (the caller ends it, see REQ_NOWAIT in
 * dm-ioband.c): @e leaves the heap if it holds no other, and with nothing
 * in flight goes idle as after a completion.  Nothing was charged, so
 * nothing is refunded.
 */
void ioband_sched_unhold(struct ioband_sched *s, struct ioband_entity *e,
			 u64 now)
{
	if (!--e->nr_queued) {
		ioband_range_lift(s, e);
		ioband_heap_remove(s, IOBAND_HEAP_HELD, e);
	}
	ioband_sched_maybe_idle(s, e, now);
}
EXPORT_SYMBOL_GPL(ioband_sched_unhold);

/*
 * The most groups whose class ioband_sched_next() updates in one call, so
 * that a call costs O(IOBAND_RANGE_BATCH * log n) however many groups are
 * held.  When more are due, the rest are moved on the next calls (the
 * caller is woken at once, or calls again for the group it released): a
 * group whose cap is paid up or whose minimum is owed again may so be
 * passed over by ceil(k / IOBAND_RANGE_BATCH) - 1 releases when k groups
 * became due at once (8 groups: none; 10,000 groups: 1,249 releases).
 */
#define IOBAND_RANGE_BATCH	8

/* The held group whose class is next to change with time, NULL if none. */
static struct ioband_entity *ioband_range_first_due(struct ioband_sched *s)
{
	struct ioband_entity *c = NULL, *m = NULL;

	if (*ioband_heap_len(s, IOBAND_HEAP_CAPPED))
		c = ioband_heap_slots(s, IOBAND_HEAP_CAPPED)[0];
	if (*ioband_heap_len(s, IOBAND_HEAP_MET))
		m = ioband_heap_slots(s, IOBAND_HEAP_MET)[0];
	if (!c || (m && ioband_vt_before(m->range_due, c->range_due)))
		return m;
	return c;
}

/*
 * The group whose oldest held bio should go next, or NULL to wait for a
 * completion or, if *wake_at is not 0, until that time at the latest.
 *
 * range-bw: a group below its minimum first, then the group furthest
 * behind among those not capped, under the usual window: the head of the
 * free heap, once the groups whose class time has changed are filed anew.
 * Capped groups are skipped; the earliest of them to be paid up sets
 * *wake_at.
 */
static struct ioband_entity *ioband_range_next(struct ioband_sched *s, u64 now,
					       u64 *wake_at)
{
	struct ioband_entity *e;
	u64 wake = 0;
	u32 moved = 0;

	if (s->nr_inflight >= s->conf.io_limit)
		return NULL;
	s->range_seen = now;
	while ((e = ioband_range_first_due(s)) &&
	       !ioband_vt_before(now, e->range_due)) {
		if (moved++ == IOBAND_RANGE_BATCH) {
			wake = e->range_due;	/* past: at once */
			break;
		}
		ioband_range_refill(e, now);
		ioband_range_unplace(s, e);
		ioband_range_place(s, e, true);
	}
	if (*ioband_heap_len(s, IOBAND_HEAP_FREE)) {
		e = ioband_heap_slots(s, IOBAND_HEAP_FREE)[0];
		if (e->range_class == IOBAND_RANGE_OWED ||
		    ioband_may_serve(s, e, wake_at))
			return e;
	}
	if (*ioband_heap_len(s, IOBAND_HEAP_CAPPED))
		ioband_earliest(&wake,
				ioband_heap_slots(s, IOBAND_HEAP_CAPPED)[0]->range_due);
	ioband_earliest(wake_at, wake);
	return NULL;
}

struct ioband_entity *ioband_sched_next(struct ioband_sched *s, u64 now,
					u64 *wake_at)
{
	*wake_at = 0;
	ioband_expire_idle(s, now);
	if (s->conf.policy == IOBAND_POLICY_RANGE_BW)
		return ioband_range_next(s, now, wake_at);
	if (!s->heap_len || ioband_antic_other(s, s->heap[0], now, wake_at) ||
	    !ioband_may_serve(s, s->heap[0], wake_at))
		return NULL;
	return s->heap[0];
}
EXPORT_SYMBOL_GPL(ioband_sched_next);

/* ---- weight-time: the estimator and depth control --------------------------
 *
 * See "Device time" and "Depth control" in the top comment of
 * drivers/md/dm-ioband.c.  A class's cost is the mean time its bios spent
 * in flight, an exponentially weighted moving average over 1 << EST_SHIFT
 * bios; a bio is charged that mean when it goes down, and the difference
 * to its own time when it completes.
 */
#define EST_SHIFT		3
#define EST_DEFAULT_NS		100000	/* the guess before any completion */

/*
 * A depth interval: at least DEPTH_SAMPLES completions, DEPTH_SAMPLES_PER_BIO
 * per bio of depth, and DEPTH_INTERVAL_NS (a few batches of a sequential
 * stream on a disk, so that the rate is not one batch's).
 */
#define DEPTH_SAMPLES		64
#define DEPTH_SAMPLES_PER_BIO	8
#define DEPTH_INTERVAL_NS	(50 * 1000 * 1000ULL)
#define DEPTH_SHORT		16
/* The least gain a step up must bring, in 64ths */
#define DEPTH_GAIN_MIN		3
/* Intervals at the base depth between two probes. */
#define DEPTH_STEADY		8

static void ioband_est_init(struct ioband_est *est)
{
	memset(est, 0, sizeof(*est));
	est->mean_ns = EST_DEFAULT_NS;
	est->depth = 1;
	est->base = 1;
	est->slow_start = true;
}

static u32 ioband_ewma(u32 avg, u64 ns)
{
	if (!avg)
		return ns;
	return (s64)avg + (((s64)ns - (s64)avg) >> EST_SHIFT);
}

void ioband_est_learn(struct ioband_sched *s, u32 cls, u64 ns)
{
	s->est.cost_ns[cls] = ioband_ewma(s->est.cost_ns[cls], ns);
	s->est.mean_ns = ioband_ewma(s->est.mean_ns, ns);
}
EXPORT_SYMBOL_GPL(ioband_est_learn);

/*
 * @e was charged @charged units for a bio that took @ns: it and the clock
 * move by the difference, as if the bio had been charged right.
 */
void ioband_sched_correct(struct ioband_sched *s, struct ioband_entity *e,
			  u32 charged, u64 ns)
{
	s64 d = (s64)ioband_time_units(ns) - charged;

	if (!d)
		return;
	ioband_entity_set_vtime(s, e, e->vtime +
				d * (s64)ioband_entity_inv_weight(e));
	if (s->active_weight) {
		u64 delta = div64_u64((u64)(d < 0 ? -d : d) * IOBAND_VSCALE,
				      s->active_weight);

		/* the clock never moves back: what it was overcharged, it owes */
		if (d > 0)
			ioband_sched_clock_advance(s, delta);
		else
			s->vclock_owed += delta;
	}
	if (s->nr_active == 1 && ioband_vt_before(s->vclock, e->vtime))
		ioband_sched_clock_to(s, e->vtime);
	if (e->heap_idx < 0)
		return;
	if (d < 0)
		ioband_heap_up(s, IOBAND_HEAP_HELD, e->heap_idx);
	else
		ioband_heap_down(s, IOBAND_HEAP_HELD, e->heap_idx);
}
EXPORT_SYMBOL_GPL(ioband_sched_correct);

/*
 * A bio of @e has completed and @e holds nothing: a single stream with
 * nothing in flight, or a parallel group behind the clock.  If it would be
 * served now and usually sends its next bio within a quarter of the mean
 * bio's time, the device waits for that bio (twice its think time and an
 * eighth of a mean bio at most) before serving another group: a stream
 * that pauses between bios keeps its turn, so it is served in batches,
 * and a group short of its share keeps the place its bio left.
 */
void ioband_sched_anticipate(struct ioband_sched *s, struct ioband_entity *e,
			     u64 now)
{
	u32 mean = s->est.mean_ns;

	if (e->think_ns >= mean / 4 ||
	    ioband_vt_before(s->vclock + ioband_sched_window(s), e->vtime) ||
	    (e->parallel && !ioband_vt_before(e->vtime, s->vclock)))
		return;
	s->antic = e;
	s->antic_until = now + 2 * (u64)e->think_ns + mean / 8;
}
EXPORT_SYMBOL_GPL(ioband_sched_anticipate);

static void ioband_depth_set(struct ioband_est *est, u32 depth)
{
	est->depth = depth;
	est->iv_done = 0;
	est->iv_busy = 0;
}

/*
 * Doubling the depth gained something, not enough: if throughput grew in
 * proportion up to a knee and not beyond, the knee is where the gain ran
 * out.  It becomes the base, its rate measured afresh.
 */
static void ioband_depth_knee(struct ioband_est *est, u64 rate)
{
	u64 knee = div64_u64(est->base * rate + est->base_rate - 1,
			     est->base_rate);

	if (knee > est->base && knee < est->depth) {
		est->base = knee;
		est->base_rate = 0;
	}
}

/* A probe failed: the next, after DEPTH_STEADY intervals, goes the other way. */
static void ioband_depth_fail(struct ioband_est *est)
{
	est->slow_start = false;
	est->probe_down = est->depth > est->base;
	est->steady = 0;
}

/* The depth to try next from est->base, or est->base if none. */
static u32 ioband_depth_probe(const struct ioband_est *est, u32 limit)
{
	u32 b = est->base, step = max_t(u32, 1, b / 8);

	if (est->slow_start)
		return min_t(u32, 2 * b, limit);
	if ((est->probe_down || b >= limit) && b > 1)
		return b - min_t(u32, step, b - 1);
	return min_t(u32, b + step, limit);
}

/*
 * Does @rate at est->depth beat base_rate at est->base?  Upwards, when
 * it gains at least a quarter of what the extra depth would give if
 * throughput grew in proportion, and DEPTH_GAIN_MIN; downwards, when it
 * loses less than that.
 */
static bool ioband_depth_better(const struct ioband_est *est, u64 rate)
{
	u64 b = est->base, d = est->depth;
	u64 step = d > b ? d - b : b - d;
	/* the threshold, in 64ths of base_rate */
	u64 t = max_t(u64, DEPTH_GAIN_MIN, div64_u64(16 * step, b));

	if (d > b)
		return rate * 64 > est->base_rate * (64 + t);
	return rate * 64 >= est->base_rate * (64 - t);
}

/*
 * Called for every completion, before the in-flight count drops.  An
 * interval is DEPTH_SAMPLES completions or DEPTH_SAMPLES_PER_BIO per bio
 * of depth, whichever is more; it teaches something only if the depth
 * was what held bios back for most of it (three completions in four
 * found it full with bios waiting), else the demand was the limit.
 */
void ioband_depth_sample(struct ioband_sched *s, u64 now)
{
	struct ioband_est *est = &s->est;
	u32 need = max_t(u32, DEPTH_SAMPLES, DEPTH_SAMPLES_PER_BIO * est->depth);
	u32 limit = s->conf.io_limit, next;
	u64 rate, elapsed;

	if (!est->iv_done++) {
		est->iv_start = now;
		return;
	}
	if (s->nr_inflight >= est->depth && s->heap_len)
		est->iv_busy++;
	elapsed = now - est->iv_start;
	/*
	 * An interval whose demand falls short ends early: after
	 * DEPTH_SHORT completions found the depth not full, once a quarter
	 * of them did.
	 */
	if ((est->iv_done < need || elapsed < DEPTH_INTERVAL_NS) &&
	    (est->iv_done - est->iv_busy < DEPTH_SHORT ||
	     (est->iv_done - est->iv_busy) * 4 <= est->iv_done))
		return;
	if (est->base > limit)
		est->base = limit;
	if (est->iv_busy * 4 < est->iv_done * 3) {
		/* a probe the demand did not fill failed */
		if (est->depth != est->base)
			ioband_depth_fail(est);
		ioband_depth_set(est, est->base);
		return;
	}
	rate = div64_u64((u64)(est->iv_done - 1) * NSEC_PER_SEC_U64, elapsed);
	if (est->depth != est->base) {
		if (ioband_depth_better(est, rate)) {
			/* keep going the same way */
			est->base = est->depth;
			est->base_rate = rate;
			est->steady = DEPTH_STEADY;
		} else {
			if (est->slow_start && est->depth > est->base)
				ioband_depth_knee(est, rate);
			ioband_depth_fail(est);
		}
	} else {
		est->base_rate = est->base_rate ?
				 (est->base_rate + rate) / 2 : rate;
		est->steady++;
	}
	next = est->base;
	if (est->slow_start || est->steady >= DEPTH_STEADY) {
		est->steady = 0;
		next = ioband_depth_probe(est, limit);
	}
	ioband_depth_set(est, next);
}
EXPORT_SYMBOL_GPL(ioband_depth_sample);

/* All held bios of @from now belong to @to (a group being detached). */
void ioband_sched_move_held(struct ioband_sched *s, struct ioband_entity *from,
			    struct ioband_entity *to, u64 now)
{
	u32 nr = from->nr_queued;

	if (!nr)
		return;
	ioband_sched_arrive(s, to, now);
	ioband_range_lift(s, from);
	ioband_heap_remove(s, IOBAND_HEAP_HELD, from);
	from->nr_queued = 0;
	ioband_sched_maybe_idle(s, from, now);
	if (!to->nr_queued) {
		ioband_heap_insert(s, IOBAND_HEAP_HELD, to);
		ioband_range_settle(s, to);
	}
	to->nr_queued += nr;
}
EXPORT_SYMBOL_GPL(ioband_sched_move_held);

/* ---- Limits --------------------------------------------------------------
 *
 * A limit lets a group send @rate bytes (or bios) a second.  It is kept
 * as one time, paid_to: the budget the limit has given up to then is
 * spent, so at @now it holds (now - paid_to) * rate of budget.  A bio
 * of cost c (its bytes, or 1) spans c / rate of that time, rounded up.
 * Two rules make it a pacer rather than a bucket that lends:
 *
 * - A bio waits for its own budget: it may go when paid_to + span has
 *   come, and going moves paid_to by its span.  A limit set anew starts
 *   with nothing saved, so 256 bios of 4 KiB under 1 MiB/s take 1 s from
 *   the moment the limit was set, the first included.
 * - The budget a limit keeps unused is at most max(burst, span): with
 *   burst 0 (the default) an idle group saves only what its next bio
 *   needs, so over any interval of length T a limit lets through at most
 *   rate * (T + burst) plus one bio (1 s at 1 MiB/s in 4 KiB bios: 0.4 %
 *   over; with a burst of 1 s, twice the rate for the first second).
 *
 * A bio that may not wait (see the target's urgent bios) is charged when
 * it goes all the same, and paid_to passes @now: the debt delays the bios
 * after it, by max(burst, span) at most (ioband_limits_charge_urgent()).
 * An I/O limit counts the requests a bio becomes below (max_io_bytes).
 * Changing a rate keeps what has been saved (or owed) as
 * budget, not as time: 0.9 s saved at 512 KiB/s is 1.8 s at 256 KiB/s.
 *
 * Times are ktime nanoseconds; they do not wrap, but a limit may be set
 * within its burst of boot, so nothing here subtracts more than @now.
 */

/* the most time a limit saves or owes through a change of its rate */
#define IOBAND_LIMIT_KEEP_MAX_NS	BIT_ULL(40)	/* 18 min */

/* The kinds that apply to a read ([0]) and to a write ([1]). */
#define IOBAND_LIMITS_PER_DIR	4
static const u8 ioband_limit_kinds[2][IOBAND_LIMITS_PER_DIR] = {
	{ IOBAND_LIMIT_BPS, IOBAND_LIMIT_RBPS, IOBAND_LIMIT_IOPS, IOBAND_LIMIT_RIOPS },
	{ IOBAND_LIMIT_BPS, IOBAND_LIMIT_WBPS, IOBAND_LIMIT_IOPS, IOBAND_LIMIT_WIOPS },
};

/*
 * The time a bio of @bytes spans under the set limit @k of @ls.  An IOPS
 * limit counts the requests the device below will see: a bio larger than
 * it takes is split there, one request per max_io_bytes.
 */
static u64 ioband_limit_span(const struct ioband_limits *ls,
			     enum ioband_limit_kind k, u32 bytes)
{
	const struct ioband_limit *l = &ls->lim[k];
	u64 units = bytes;

	if (k >= IOBAND_LIMIT_IOPS)
		units = ls->max_io_bytes && bytes > ls->max_io_bytes ?
			div64_u64((u64)bytes + ls->max_io_bytes - 1,
				  ls->max_io_bytes) : 1;

	/* below 2^32 * 10^9 < 2^62: no overflow */
	return div64_u64(units * NSEC_PER_SEC_U64 + l->rate - 1, l->rate);
}

/* Where the budget of @l for a bio spanning @span begins at @now. */
static u64 ioband_limit_start(const struct ioband_limit *l, u64 span, u64 now)
{
	u64 keep = max_t(u64, l->burst_ns, span);

	if (ioband_vt_before(l->paid_to, now) && now - l->paid_to > keep)
		return now - keep;
	return l->paid_to;
}

/* @ns of budget at @from a second as time at @to, bounded. */
static u64 ioband_limit_rescale(u64 ns, u64 from, u64 to)
{
	ns = min_t(u64, ns, IOBAND_LIMIT_KEEP_MAX_NS);
	/* the quotient below must fit in 64 bits (x86's divq faults) */
	if (div64_u64(from, to) >= BIT_ULL(23))
		return IOBAND_LIMIT_KEEP_MAX_NS;
	return min_t(u64, mul_u64_u64_div_u64(ns, from, to),
		     IOBAND_LIMIT_KEEP_MAX_NS);
}

/*
 * Set @l to @rate a second (0: no limit) keeping @burst_ns of unused
 * budget.  A new limit starts with nothing saved; a changed one keeps
 * what it had saved or owed, at the new rate.
 */
void ioband_limit_set(struct ioband_limit *l, u64 rate, u64 burst_ns,
		      u64 now)
{
	u64 ns;

	if (rate && !l->rate) {
		l->paid_to = now;
	} else if (rate && l->rate && rate != l->rate) {
		if (ioband_vt_before(l->paid_to, now)) {
			ns = ioband_limit_rescale(now - l->paid_to, l->rate,
						  rate);
			l->paid_to = now - min_t(u64, ns, now);
		} else {
			ns = ioband_limit_rescale(l->paid_to - now, l->rate,
						  rate);
			l->paid_to = now + ns;
		}
	}
	l->rate = rate;
	l->burst_ns = burst_ns;
}
EXPORT_SYMBOL_GPL(ioband_limit_set);

/*
 * Where the budget of @ls's limit @k for a bio of @bytes that came at
 * @at ends: the bio may go then, and the limit is paid to then if it
 * does.  0 if the limit is not set.
 */
static __always_inline u64 ioband_limit_end(const struct ioband_limits *ls,
					    enum ioband_limit_kind k,
					    u32 bytes, u64 at)
{
	const struct ioband_limit *l = &ls->lim[k];
	u64 span;

	if (!l->rate)
		return 0;
	span = ioband_limit_span(ls, k, bytes);
	return ioband_limit_start(l, span, at) + span;
}

/* The later of @due and @end, a limit's end (0: not set). */
static inline u64 ioband_limit_later(u64 due, u64 end)
{
	return end && ioband_vt_before(due, end) ? end : due;
}

/*
 * A bio of @bytes, a write if @write, came at @at: when may it go under
 * the limits of @ls?  If that is by @now, each limit that applies pays
 * its span from @at (one pass over them: map()'s path, four kinds
 * written out, so that nothing is indexed or kept on the stack).
 * Returns the time it may go; after @now, nothing is charged.
 */
u64 ioband_limits_take(struct ioband_limits *ls, bool write, u32 bytes,
		       u64 at, u64 now)
{
	enum ioband_limit_kind kb = write ? IOBAND_LIMIT_WBPS : IOBAND_LIMIT_RBPS;
	enum ioband_limit_kind ki = write ? IOBAND_LIMIT_WIOPS : IOBAND_LIMIT_RIOPS;
	u64 end_bps = ioband_limit_end(ls, IOBAND_LIMIT_BPS, bytes, at);
	u64 end_dbps = ioband_limit_end(ls, kb, bytes, at);
	u64 end_iops = ioband_limit_end(ls, IOBAND_LIMIT_IOPS, bytes, at);
	u64 end_diops = ioband_limit_end(ls, ki, bytes, at);
	u64 due = at;

	due = ioband_limit_later(due, end_bps);
	due = ioband_limit_later(due, end_dbps);
	due = ioband_limit_later(due, end_iops);
	due = ioband_limit_later(due, end_diops);
	if (ioband_vt_before(now, due))
		return due;
	if (end_bps)
		ls->lim[IOBAND_LIMIT_BPS].paid_to = end_bps;
	if (end_dbps)
		ls->lim[kb].paid_to = end_dbps;
	if (end_iops)
		ls->lim[IOBAND_LIMIT_IOPS].paid_to = end_iops;
	if (end_diops)
		ls->lim[ki].paid_to = end_diops;
	return due;
}
EXPORT_SYMBOL_GPL(ioband_limits_take);

/*
 * A bio of @bytes that may not wait goes at @now: each limit that applies
 * pays its span, and the debt it leaves is forgiven beyond max(burst,
 * span) past @now, so the group's next bio waits for no more.
 */
void ioband_limits_charge_urgent(struct ioband_limits *ls, bool write,
				 u32 bytes, u64 now)
{
	const u8 *kinds = ioband_limit_kinds[write];
	int i;

	for (i = 0; i < IOBAND_LIMITS_PER_DIR; i++) {
		struct ioband_limit *l = &ls->lim[kinds[i]];
		u64 span, keep;

		if (!l->rate)
			continue;
		span = ioband_limit_span(ls, kinds[i], bytes);
		l->paid_to = ioband_limit_start(l, span, now) + span;
		keep = max_t(u64, l->burst_ns, span);
		if (ioband_vt_before(now + keep, l->paid_to))
			l->paid_to = now + keep;
	}
}
EXPORT_SYMBOL_GPL(ioband_limits_charge_urgent);

/*
 * The bio of @bytes charged last did not go after all (the target ended
 * it with EAGAIN): each limit that applies gets its span back.  Where the
 * charge started from @now - keep, what comes back is no more than the
 * limit would keep anyway.
 */
void ioband_limits_refund(struct ioband_limits *ls, bool write, u32 bytes)
{
	const u8 *kinds = ioband_limit_kinds[write];
	int i;

	for (i = 0; i < IOBAND_LIMITS_PER_DIR; i++) {
		struct ioband_limit *l = &ls->lim[kinds[i]];

		if (l->rate)
			l->paid_to -= ioband_limit_span(ls, kinds[i], bytes);
	}
}
EXPORT_SYMBOL_GPL(ioband_limits_refund);

/*
 * The limited heap: groups whose first bio waits for a limit, by the time
 * it may go.  The target keeps those bios out of the scheduler until then
 * (see "Limits" above); a group is in it at most once.
 */

/* @e's waiting bio may go at @due: files @e, or moves it if filed. */
void ioband_limit_wait(struct ioband_sched *s, struct ioband_entity *e,
		       u64 due)
{
	e->limit_due = due;
	if (e->limit_idx < 0) {
		ioband_heap_insert(s, IOBAND_HEAP_LIMITED, e);
		return;
	}
	ioband_heap_up(s, IOBAND_HEAP_LIMITED, e->limit_idx);
	ioband_heap_down(s, IOBAND_HEAP_LIMITED, e->limit_idx);
}
EXPORT_SYMBOL_GPL(ioband_limit_wait);

/* @e has no bio waiting for a limit any more. */
void ioband_limit_cancel(struct ioband_sched *s, struct ioband_entity *e)
{
	if (e->limit_idx >= 0)
		ioband_heap_remove(s, IOBAND_HEAP_LIMITED, e);
}
EXPORT_SYMBOL_GPL(ioband_limit_cancel);

/*
 * A group whose waiting bio may go at @now, taken out of the heap, or
 * NULL; then *wake_at is when the next one may (0: none waits).
 */
struct ioband_entity *ioband_limit_next(struct ioband_sched *s, u64 now,
					u64 *wake_at)
{
	struct ioband_entity *e;

	*wake_at = 0;
	if (!*ioband_heap_len(s, IOBAND_HEAP_LIMITED))
		return NULL;
	e = ioband_heap_slots(s, IOBAND_HEAP_LIMITED)[0];
	if (ioband_vt_before(now, e->limit_due)) {
		*wake_at = e->limit_due;
		return NULL;
	}
	ioband_heap_remove(s, IOBAND_HEAP_LIMITED, e);
	return e;
}
EXPORT_SYMBOL_GPL(ioband_limit_next);

/* ---- latency statistics ----------------------------------------------------
 *
 * A bucket holds the durations from its lower edge up to, not including,
 * its top: bucket 0 those under 2^IOBAND_LAT_MIN_SHIFT ns, the last those
 * of 2^IOBAND_LAT_MAX_SHIFT ns and more, and in between four to each power
 * of two, so that a top is at most 25 % above any duration in its bucket.
 */
#define IOBAND_LAT_LAST		(IOBAND_LAT_BUCKETS - 1)
#define IOBAND_LAT_COUNT_MAX	0xffff

u32 ioband_lat_bucket(u64 ns)
{
	u32 k;

	if (ns < (1ULL << IOBAND_LAT_MIN_SHIFT))
		return 0;
	if (ns >= (1ULL << IOBAND_LAT_MAX_SHIFT))
		return IOBAND_LAT_LAST;
	k = fls64(ns) - 1;	/* ns is in [2^k, 2^(k + 1)) */
	return 1 + ((k - IOBAND_LAT_MIN_SHIFT) << IOBAND_LAT_SUB_SHIFT) +
	       ((ns >> (k - IOBAND_LAT_SUB_SHIFT)) &
		((1U << IOBAND_LAT_SUB_SHIFT) - 1));
}
EXPORT_SYMBOL_GPL(ioband_lat_bucket);

/* The top of @bucket; the last bucket has none and gives its lower edge. */
u64 ioband_lat_bucket_top(u32 bucket)
{
	u32 k, sub;

	if (!bucket)
		return 1ULL << IOBAND_LAT_MIN_SHIFT;
	if (bucket >= IOBAND_LAT_LAST)
		return 1ULL << IOBAND_LAT_MAX_SHIFT;
	k = IOBAND_LAT_MIN_SHIFT + ((bucket - 1) >> IOBAND_LAT_SUB_SHIFT);
	sub = (bucket - 1) & ((1U << IOBAND_LAT_SUB_SHIFT) - 1);
	return (u64)((1U << IOBAND_LAT_SUB_SHIFT) + sub + 1) <<
	       (k - IOBAND_LAT_SUB_SHIFT);
}
EXPORT_SYMBOL_GPL(ioband_lat_bucket_top);

/*
 * Brings @l's windows up to @now: a second that has ended becomes the
 * previous one and a new, empty second starts where it ended; after two
 * or more seconds both windows are empty and the current one starts at
 * @now.  A @now behind the current second's start (read before another
 * CPU aged @l) ages nothing.
 */
void ioband_lat_age(struct ioband_lat *l, u64 now)
{
	s64 ahead = now - l->cur_start;

	if (ahead < (s64)NSEC_PER_SEC_U64)
		return;
	if (ahead >= 2 * (s64)NSEC_PER_SEC_U64) {
		memset(l->sec, 0, sizeof(l->sec));
		l->cur_start = now;
		return;
	}
	l->cur ^= 1;
	memset(&l->sec[l->cur], 0, sizeof(l->sec[l->cur]));
	l->cur_start += NSEC_PER_SEC_U64;
}
EXPORT_SYMBOL_GPL(ioband_lat_age);

static void ioband_lat_hist_add(struct ioband_lat_hist *h, u64 ns)
{
	u16 *c = &h->count[ioband_lat_bucket(ns)];

	if (*c < IOBAND_LAT_COUNT_MAX)
		(*c)++;
}

/* A timed bio completed at @now: it waited @wait_ns, then took @dev_ns. */
void ioband_lat_add(struct ioband_lat *l, u64 wait_ns, u64 dev_ns, u64 now)
{
	struct ioband_lat_second *sec;

	ioband_lat_age(l, now);
	sec = &l->sec[l->cur];
	ioband_lat_hist_add(&sec->wait, wait_ns);
	ioband_lat_hist_add(&sec->dev, dev_ns);
}
EXPORT_SYMBOL_GPL(ioband_lat_add);

static const struct ioband_lat_hist *
ioband_lat_hist(const struct ioband_lat *l, u32 sec, enum ioband_lat_kind kind)
{
	return kind == IOBAND_LAT_WAIT ? &l->sec[sec].wait : &l->sec[sec].dev;
}

/* How many durations of @kind lie in bucket @i over both seconds. */
static u32 ioband_lat_bucket_count(const struct ioband_lat *l,
				   enum ioband_lat_kind kind, u32 i)
{
	return ioband_lat_hist(l, 0, kind)->count[i] +
	       ioband_lat_hist(l, 1, kind)->count[i];
}

u32 ioband_lat_count(const struct ioband_lat *l, enum ioband_lat_kind kind)
{
	u32 i, n = 0;

	for (i = 0; i < IOBAND_LAT_BUCKETS; i++)
		n += ioband_lat_bucket_count(l, kind, i);
	return n;
}
EXPORT_SYMBOL_GPL(ioband_lat_count);

/*
 * The @pct-th percentile (1 to 100) of the durations of @kind over both
 * seconds, as the top of the bucket that holds the one of rank
 * ceil(n * pct / 100); 0 if there are none.
 */
u64 ioband_lat_percentile(const struct ioband_lat *l,
			  enum ioband_lat_kind kind, u32 pct)
{
	u32 n = ioband_lat_count(l, kind), rank, seen = 0, i;

	if (!n)
		return 0;
	rank = div64_u64((u64)n * pct + 99, 100);
	for (i = 0; i < IOBAND_LAT_LAST; i++) {
		seen += ioband_lat_bucket_count(l, kind, i);
		if (seen >= rank)
			break;
	}
	return ioband_lat_bucket_top(i);
}
EXPORT_SYMBOL_GPL(ioband_lat_percentile);

u32 ioband_policy_abi(void)
{
	return IOBAND_ABI;
}
EXPORT_SYMBOL_GPL(ioband_policy_abi);

#ifdef __KERNEL__
MODULE_DESCRIPTION("dm-ioband policies: configuration grammar and scheduling");
MODULE_AUTHOR("dm-ioband developers");
MODULE_LICENSE("GPL");
#endif

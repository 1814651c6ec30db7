// SPDX-License-Identifier: GPL-2.0
/* Table line and message grammar of dm-ioband. */
#include <stdlib.h>
#include <string.h>
#include <linux/dm-ioband.h>
#include "unit.h"

#define MAX_ARGS 64

/* Splits @line on spaces into @argv (modifies a copy kept in @buf). */
static unsigned int split(const char *line, char *buf, char **argv)
{
	unsigned int argc = 0;
	char *tok;

	strcpy(buf, line);
	for (tok = strtok(buf, " "); tok && argc < MAX_ARGS;
	     tok = strtok(NULL, " "))
		argv[argc++] = tok;
	return argc;
}

static int table(const char *line, struct ioband_table *t, char **error)
{
	static struct ioband_group_conf groups[MAX_ARGS];
	char buf[4096], *argv[MAX_ARGS];
	unsigned int argc = split(line, buf, argv);

	memset(t, 0, sizeof(*t));
	t->groups = groups;
	*error = NULL;
	return ioband_parse_table(argc, argv, t, error);
}

static int message(const char *line, struct ioband_msg *m, char **error)
{
	char buf[4096], *argv[MAX_ARGS];
	unsigned int argc = split(line, buf, argv);

	memset(m, 0, sizeof(*m));
	*error = NULL;
	return ioband_parse_message(argc, argv, m, error);
}

static void table_ancestor_example(void)
{
	struct ioband_table t;
	char *err;

	CHECK(!table("share1 10 400 user weight 2048 :100 1000:80 2000:20",
		     &t, &err), "%s", err);
	CHECK(!strcmp(t.dg_name, "share1"), "%s", t.dg_name);
	CHECK(t.dg.io_throttle == 10 && t.dg.io_limit == 400, "limits");
	CHECK(t.type == IOBAND_TYPE_USER, "type");
	CHECK(t.dg.policy == IOBAND_POLICY_WEIGHT, "policy");
	CHECK(t.dg.token_base == 2048, "token");
	CHECK(t.def.id == IOBAND_DEFAULT_GROUP && t.def.weight == 100, "def");
	CHECK(t.nr_groups == 2, "%u groups", t.nr_groups);
	CHECK(t.groups[0].id == 1000 && t.groups[0].weight == 80, "g0");
	CHECK(t.groups[1].id == 2000 && t.groups[1].weight == 20, "g1");
}

static void table_defaults(void)
{
	struct ioband_table t;
	char *err;

	CHECK(!table("1 0 0 none weight 0 :40", &t, &err), "%s", err);
	CHECK(t.dg.io_throttle == IOBAND_DEFAULT_IO_THROTTLE, "throttle");
	CHECK(t.dg.io_limit == IOBAND_DEFAULT_IO_LIMIT, "limit");
	CHECK(t.dg.token_base == IOBAND_DEFAULT_TOKEN_BASE, "token");
	CHECK(t.dg.carryover == IOBAND_DEFAULT_CARRYOVER, "carryover");
	CHECK(t.def.weight == 40 && t.nr_groups == 0, "def");

	CHECK(!table("dg 0 0 uid weight-iosize 0", &t, &err), "%s", err);
	CHECK(t.type == IOBAND_TYPE_USER, "uid is user");
	CHECK(t.def.weight == IOBAND_DEFAULT_WEIGHT, "default weight");
	CHECK(t.dg.policy == IOBAND_POLICY_WEIGHT_IOSIZE, "iosize");

	CHECK(!table("dg 0 0 cgroup weight 0 :1 9223372036854775807:10000",
		     &t, &err), "%s", err);
	CHECK(t.groups[0].id == 9223372036854775807LL, "big cgroup id");
}

static void table_range_bw(void)
{
	struct ioband_table t;
	char *err;

	CHECK(!table("dg 0 0 gid range-bw 0 :0:0 100:1000:5000 200:0:800",
		     &t, &err), "%s", err);
	CHECK(t.dg.policy == IOBAND_POLICY_RANGE_BW, "policy");
	CHECK(t.def.min_kbps == 0 && t.def.max_kbps == 0, "def");
	CHECK(t.groups[0].min_kbps == 1000 && t.groups[0].max_kbps == 5000,
	      "g0");
	CHECK(t.groups[1].max_kbps == 800, "g1");
	CHECK(t.dg.bandwidth == 0, "no bandwidth stated");
	CHECK(!table("dg 0 0 gid range-bw 0 :0:0 1:600:0 2:400:0 bandwidth=1000",
		     &t, &err), "%s", err);
	CHECK(t.dg.bandwidth == 1000 && t.nr_groups == 2, "bandwidth=1000");
	CHECK(!table("dg 0 0 none weight 0 bandwidth=5", &t, &err), "%s", err);
	CHECK(t.dg.bandwidth == 5 && t.def.weight == IOBAND_DEFAULT_WEIGHT,
	      "bandwidth without groups");
}

/* Limits after a group's weight or range, under any policy. */
static void table_limits(void)
{
	struct ioband_table t;
	char *err;

	CHECK(!table("dg 0 0 user weight 0 :100/wiops=500 1:80/rbps=2000,wbps=max,burst=1000 2:20",
		     &t, &err), "%s", err);
	CHECK(t.def.weight == 100 && t.def.limit_rate[IOBAND_LIMIT_WIOPS] == 500,
	      "default group's limit");
	CHECK(t.groups[0].weight == 80 &&
	      t.groups[0].limit_rate[IOBAND_LIMIT_RBPS] == 2000 &&
	      t.groups[0].limit_rate[IOBAND_LIMIT_WBPS] == 0 &&
	      t.groups[0].burst_ms == 1000, "group 1's limits");
	CHECK(!t.groups[1].limit_rate[IOBAND_LIMIT_BPS] && !t.groups[1].burst_ms,
	      "group 2 has none");
	CHECK(!table("dg 0 0 gid range-bw 0 :0:0 7:100:500/iops=64,bps=1048576",
		     &t, &err), "%s", err);
	CHECK(t.groups[0].max_kbps == 500 &&
	      t.groups[0].limit_rate[IOBAND_LIMIT_IOPS] == 64 &&
	      t.groups[0].limit_rate[IOBAND_LIMIT_BPS] == 1048576,
	      "range-bw with limits");
}

/* iocost's io.cost.model parameters, in the table after the groups. */
static void table_cost_model(void)
{
	static const u64 want[] = { 51200000, 1724, 1724, 17066666, 446, 446 };
	struct ioband_table t;
	unsigned int i;
	char *err;

	CHECK(!table("dg 0 0 user weight-time 0 :100 5:400 rbps=51200000 rseqiops=1724 rrandiops=1724 wbps=17066666 wseqiops=446 wrandiops=446",
		     &t, &err), "%s", err);
	for (i = 0; i < IOBAND_MODEL_NR_PARAMS; i++)
		CHECK(t.dg.model.param[i] == want[i], "%s=%llu",
		      ioband_model_param_name(i),
		      (unsigned long long)t.dg.model.param[i]);
	CHECK(t.nr_groups == 1 && t.groups[0].weight == 400, "groups");
	CHECK(ioband_model_given(&t.dg.model), "given");
	/* any order, bandwidth= among them; none: nothing given */
	CHECK(!table("dg 0 0 none weight-time 0 wrandiops=1 bandwidth=9 wbps=1 "
		     "rrandiops=1000000000000 rseqiops=1 wseqiops=1 rbps=1",
		     &t, &err), "%s", err);
	CHECK(t.dg.bandwidth == 9 && t.dg.model.param[IOBAND_MODEL_RRANDIOPS] ==
	      1000000000000ULL, "mixed order");
	CHECK(!table("dg 0 0 none weight-time 0", &t, &err), "%s", err);
	CHECK(!ioband_model_given(&t.dg.model), "none given");
}

static const struct {
	const char *line;
	const char *error;	/* a word the error must contain */
} bad_tables[] = {
	{ "", "too few" },
	{ "dg 0 0 none weight", "too few" },
	{ "dg 0 0 bogus weight 0", "group type" },
	{ "dg 0 0 none bogus 0", "policy" },
	{ "dg x 0 none weight 0", "io_throttle" },
	{ "dg -1 0 none weight 0", "io_throttle" },
	{ "dg 0 65537 none weight 0", "io_limit" },
	{ "dg 8 4 none weight 0", "exceed" },
	{ "dg 0 2 none weight 0", NULL },
	{ "dg 0 0 none weight 1048577", "token_base" },
	{ "dg 0 0 none weight 99999999999999999999", "token_base" },
	{ "dg 0 0 none weight 0 :0", "weight" },
	{ "dg 0 0 user weight 0 :100 1:80/", "limits are" },
	{ "dg 0 0 user weight 0 :100 1:80/xbps=5", "limits are" },
	{ "dg 0 0 user weight 0 :100 1:80/rbps", "limits are" },
	{ "dg 0 0 user weight 0 :100 1:80/rbps=", "limit rate" },
	{ "dg 0 0 user weight 0 :100 1:80/rbps=0", "limit rate" },
	{ "dg 0 0 user weight 0 :100 1:80/rbps=1125899906842625", "limit rate" },
	{ "dg 0 0 user weight 0 :100 1:80/rbps=1125899906842624", NULL },
	{ "dg 0 0 user weight 0 :100 1:80/rbps=5,rbps=6", "twice" },
	{ "dg 0 0 user weight 0 :100 1:80/rbps=5,", "limits are" },
	{ "dg 0 0 user weight 0 :100 1:80/rbps=5;wbps=6", "separated" },
	{ "dg 0 0 user weight 0 :100 1:80/rbps=maxx", "separated" },
	{ "dg 0 0 user weight 0 :100 1:80/burst=60001", "burst" },
	{ "dg 0 0 user weight 0 :100 1:80/burst=max", "burst" },
	{ "dg 0 0 user weight 0 :100 1:8000000000000000000000000/iops=1", "weight" },
	{ "dg 0 0 user weight 0 :100 1:/iops=1", "weight" },
	{ "dg 0 0 user range-bw 0 :0:0 1:5/iops=1", "range" },
	{ "dg 0 0 none weight 0 :10001", "weight" },
	{ "dg 0 0 none weight 0 :abc", "weight" },
	{ "dg 0 0 none weight 0 :+5", "weight" },
	{ "dg 0 0 none weight 0 :5 ", NULL },
	{ "dg 0 0 none weight 0 :5 1:5", "none" },
	{ "dg 0 0 user weight 0 :5 1:5 1:6", "duplicate" },
	{ "dg 0 0 user weight 0 1:5 :5", "first" },
	{ "dg 0 0 user weight 0 -1:5", "<id>:<value>" },
	{ "dg 0 0 user weight 0 -2:5", "<id>:<value>" },
	{ "dg 0 0 user weight 0 1:", "weight" },
	{ "dg 0 0 user weight 0 1", "<id>:<value>" },
	{ "dg 0 0 user weight 0 4294967295:5", "out of range" },
	{ "dg 0 0 pid weight 0 0:5", "out of range" },
	{ "dg 0 0 pid weight 0 4194305:5", "out of range" },
	{ "dg 0 0 cgroup weight 0 0:5", "out of range" },
	{ "dg 0 0 cgroup weight 0 9223372036854775808:5", "<id>:<value>" },
	{ "dg 0 0 gid range-bw 0 :5", "range" },
	{ "dg 0 0 gid range-bw 0 :500:100", "above" },
	{ "dg 0 0 gid range-bw 0 1:1:2:3", "range" },
	{ "dg 0 0 gid range-bw 0 :1:0 1:600:0 2:400:0 bandwidth=1000", "add up" },
	{ "dg 0 0 gid range-bw 0 :0:0 bandwidth=0", "bandwidth" },
	{ "dg 0 0 gid range-bw 0 :0:0 bandwidth=", "bandwidth" },
	{ "dg 0 0 gid range-bw 0 :0:0 bandwidth=4294967296", "bandwidth" },
	{ "dg 0 0 gid range-bw 0 bandwidth=9 :0:0", "<id>:<value>" },
	{ "dg 0 0 none weight bandwidth=9", "too few" },
	{ "dg 0 0 none weight 0 bandwidth=9 bandwidth=9", "twice" },
	{ "dg 0 0 none weight 0 rbps=1", "needs all" },
	{ "dg 0 0 none weight-time 0 rbps=1 rseqiops=1 rrandiops=1 wbps=1 wseqiops=1",
	  "needs all" },
	{ "dg 0 0 none weight-time 0 rbps=1 rseqiops=1 rrandiops=1 wbps=1 wseqiops=1 rbps=2",
	  "twice" },
	{ "dg 0 0 none weight-time 0 rbps=0 rseqiops=1 rrandiops=1 wbps=1 wseqiops=1 wrandiops=1",
	  "1 to 1000000000000" },
	{ "dg 0 0 none weight-time 0 rbps=1000000000001", "1 to 1000000000000" },
	{ "dg 0 0 none weight-time 0 rbps=1x", "1 to 1000000000000" },
	{ "dg 0 0 none weight-time 0 rbps=", "1 to 1000000000000" },
	{ "dg 0 0 none weight-time 0 model=linear", "unknown table option" },
	{ "dg 0 0 none weight-time 0 rbpsx=1", "unknown table option" },
	{ "dg 0 0 user weight-time 0 rbps=1 :5", "<id>:<value>" },
	{ "0123456789012345678901234567890123 0 0 none weight 0", "31" },
	{ "d/g 0 0 none weight 0", "letters" },
	{ "d\xc3\xa9g 0 0 none weight 0", "letters" },
};

static void table_bad(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad_tables); i++) {
		struct ioband_table t;
		char *err;
		int r = table(bad_tables[i].line, &t, &err);

		if (!bad_tables[i].error) {
			CHECK(!r, "'%s' refused: %s", bad_tables[i].line, err);
			continue;
		}
		CHECK(r == -EINVAL, "'%s' accepted", bad_tables[i].line);
		CHECK(err && strstr(err, bad_tables[i].error),
		      "'%s': error '%s' lacks '%s'", bad_tables[i].line,
		      err ? err : "(null)", bad_tables[i].error);
	}
}

static void messages_good(void)
{
	struct ioband_msg m;
	char *err;

	CHECK(!message("weight 40", &m, &err), "%s", err);
	CHECK(m.kind == IOBAND_MSG_WEIGHT && m.group.id == -1 &&
	      m.group.weight == 40, "weight default");
	CHECK(!message("weight 1000:80", &m, &err), "%s", err);
	CHECK(m.group.id == 1000 && m.group.weight == 80, "weight id");
	CHECK(!message("weight -1:7", &m, &err), "%s", err);
	CHECK(m.group.id == -1 && m.group.weight == 7, "weight -1");
	CHECK(!message("range-bw 5:100:200", &m, &err), "%s", err);
	CHECK(m.kind == IOBAND_MSG_RANGE_BW && m.group.id == 5 &&
	      m.group.min_kbps == 100 && m.group.max_kbps == 200, "range");
	CHECK(!message("range-bw -1:0:0", &m, &err), "%s", err);
	CHECK(m.group.id == -1, "range default");
	CHECK(!message("token 4096", &m, &err) && m.value == 4096, "token");
	CHECK(!message("carryover 0", &m, &err) && m.value == 0, "carry");
	CHECK(!message("io_throttle 8", &m, &err) && m.value == 8, "thr");
	CHECK(!message("io_throttle 0", &m, &err) && m.value == 0, "thr 0");
	CHECK(!message("io_limit 64", &m, &err) && m.value == 64, "lim");
	CHECK(!message("bandwidth 4294967295", &m, &err) &&
	      m.kind == IOBAND_MSG_BANDWIDTH && m.value == 4294967295U, "bw");
	CHECK(!message("type pgrp", &m, &err) && m.type == IOBAND_TYPE_PGRP,
	      "type");
	CHECK(!message("cost_model wrandiops=6 wseqiops=5 wbps=4 rrandiops=3 "
		       "rseqiops=2 rbps=1", &m, &err), "%s", err);
	CHECK(m.kind == IOBAND_MSG_COST_MODEL && m.model.param[0] == 1 &&
	      m.model.param[IOBAND_MODEL_WRANDIOPS] == 6, "cost_model");
	CHECK(!message("cost_model auto", &m, &err) &&
	      m.kind == IOBAND_MSG_COST_MODEL && !ioband_model_given(&m.model),
	      "cost_model auto");
	CHECK(!message("policy weight-iosize", &m, &err) &&
	      m.policy == IOBAND_POLICY_WEIGHT_IOSIZE, "policy");
	CHECK(!message("attach 1000", &m, &err) &&
	      m.kind == IOBAND_MSG_ATTACH && m.group.id == 1000, "attach");
	CHECK(!message("detach 1000", &m, &err) &&
	      m.kind == IOBAND_MSG_DETACH, "detach");
	CHECK(!message("reset", &m, &err) && m.kind == IOBAND_MSG_RESET,
	      "reset");
	CHECK(!message("latency", &m, &err) && m.kind == IOBAND_MSG_LATENCY,
	      "latency");
	CHECK(message("latency 5", &m, &err) &&
	      !strcmp(err, "latency takes no argument"), "latency 5: %s", err);
}

/*
 * Limits by message: "limit [<id>]/<limits>" names the kinds it changes,
 * as io.max does; a weight or range may carry them too.
 */
static void messages_limits(void)
{
	const u32 burst = IOBAND_LIMITS_GIVEN_BURST;
	struct ioband_msg m;
	char *err;

	CHECK(!message("limit 5/rbps=100,wiops=max,burst=250", &m, &err),
	      "%s", err);
	CHECK(m.kind == IOBAND_MSG_LIMIT && m.group.id == 5 &&
	      m.group.limit_rate[IOBAND_LIMIT_RBPS] == 100 &&
	      !m.group.limit_rate[IOBAND_LIMIT_WIOPS] &&
	      m.group.burst_ms == 250 &&
	      m.group.limits_given == (BIT(IOBAND_LIMIT_RBPS) |
				       BIT(IOBAND_LIMIT_WIOPS) | burst),
	      "limit 5: given %#x", m.group.limits_given);
	CHECK(!message("limit /iops=7", &m, &err), "%s", err);
	CHECK(m.group.id == IOBAND_DEFAULT_GROUP &&
	      m.group.limit_rate[IOBAND_LIMIT_IOPS] == 7 &&
	      m.group.limits_given == BIT(IOBAND_LIMIT_IOPS), "limit default");
	CHECK(!message("limit -1/burst=0", &m, &err), "%s", err);
	CHECK(m.group.id == IOBAND_DEFAULT_GROUP &&
	      m.group.limits_given == burst, "limit -1");
	CHECK(!message("weight 9:40/wbps=4096", &m, &err), "%s", err);
	CHECK(m.kind == IOBAND_MSG_WEIGHT && m.group.weight == 40 &&
	      m.group.limit_rate[IOBAND_LIMIT_WBPS] == 4096 &&
	      m.group.limits_given == BIT(IOBAND_LIMIT_WBPS), "weight+limit");
	CHECK(!message("weight 9:40", &m, &err) && !m.group.limits_given,
	      "a weight alone names no limit");
	CHECK(!message("range-bw 3:10:20/riops=1", &m, &err), "%s", err);
	CHECK(m.group.max_kbps == 20 &&
	      m.group.limits_given == BIT(IOBAND_LIMIT_RIOPS), "range+limit");
}

static const char *const bad_messages[] = {
	"", "bogus", "weight", "weight 0", "weight 10001", "weight x",
	"weight 1:2 3", "weight :5", "weight 1:", "weight -2:5", "weight 1:2:3",
	"range-bw 5:300:200", "range-bw", "range-bw 1:2:x",
	"token", "token 0", "token 1048577", "token -1", "token 1 2",
	"carryover 101", "bandwidth", "bandwidth -1", "bandwidth 4294967296", "io_throttle 65537", "io_limit 65537", "io_limit 1x",
	"type", "type bogus", "type user gid", "policy", "policy x",
	"attach", "attach -1", "attach x", "attach 1 2", "detach",
	"detach 18446744073709551616", "reset now", "latency -1", "latency all",
	"cost_model", "cost_model auto auto", "cost_model learn",
	"cost_model rbps=1", "cost_model rbps=1 rseqiops=1 rrandiops=1 wbps=1 wseqiops=1 wbps=1",
	"cost_model rbps=1 rseqiops=1 rrandiops=1 wbps=1 wseqiops=1 wrandiops=0",
	"cost_model rbps=1 rseqiops=1 rrandiops=1 wbps=1 wseqiops=1 ctrl=user",
	"cost_model rbps=1 rseqiops=1 rrandiops=1 wbps=1 wseqiops=1 wrandiops=1 model=linear",
	"limit", "limit 5", "limit 5/", "limit /", "limit x/rbps=1",
	"limit 5/rbps=0", "limit 5/rbps=1 6/wbps=1", "limit 5:rbps=1",
	"limit 5/rbps=1,rbps=2", "limit 5/burst=60001", "limit -2/iops=1",
	"limit 5/iops=1,", "limit 5/wiops=max1",
	"weight 5:100/", "weight 5:100/rbps=0",
};

static void messages_bad(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad_messages); i++) {
		struct ioband_msg m;
		char *err;

		CHECK(message(bad_messages[i], &m, &err) == -EINVAL,
		      "'%s' accepted", bad_messages[i]);
		CHECK(err && *err, "'%s' has no error text", bad_messages[i]);
	}
}

static void conf_update(void)
{
	struct ioband_dg_conf c;
	struct ioband_msg m = { .kind = IOBAND_MSG_IO_THROTTLE, .value = 200 };
	char *err = NULL;

	ioband_dg_conf_init(&c);
	CHECK(ioband_dg_conf_update(&c, &m, &err) == -EINVAL,
	      "throttle above limit accepted");
	CHECK(c.io_throttle == IOBAND_DEFAULT_IO_THROTTLE, "changed anyway");
	m.value = 8;
	CHECK(!ioband_dg_conf_update(&c, &m, &err) && c.io_throttle == 8,
	      "throttle 8");
	m.kind = IOBAND_MSG_IO_LIMIT;
	m.value = 2;
	CHECK(ioband_dg_conf_update(&c, &m, &err) == -EINVAL,
	      "limit below throttle accepted");
	m.value = 256;
	CHECK(!ioband_dg_conf_update(&c, &m, &err) && c.io_limit == 256,
	      "limit");
	m.kind = IOBAND_MSG_WEIGHT;
	CHECK(ioband_dg_conf_update(&c, &m, &err) == -EINVAL, "weight");
}

static void group_ids(void)
{
	char *err;

	CHECK(!ioband_check_group_id(IOBAND_TYPE_USER, 0, &err), "uid 0");
	CHECK(ioband_check_group_id(IOBAND_TYPE_USER, 4294967295LL, &err),
	      "uid -1");
	CHECK(!ioband_check_group_id(IOBAND_TYPE_PGRP, 1, &err), "pgrp 1");
	CHECK(ioband_check_group_id(IOBAND_TYPE_NONE, 1, &err), "none");
	CHECK(!strcmp(ioband_type_name(IOBAND_TYPE_CGROUP), "cgroup"), "nm");
	CHECK(!strcmp(ioband_policy_name(IOBAND_POLICY_RANGE_BW), "range-bw"),
	      "policy name");
}

/*
 * One limit for the table and for attach: 65536 groups besides the
 * default group, with or without a ':<default>' argument (a line without
 * one took 65537), and duplicates found among that many.
 */
static int table_of(u32 nr, bool with_default, s64 dup)
{
	static struct ioband_group_conf groups[IOBAND_MAX_GROUPS + 2];
	static char specs[IOBAND_MAX_GROUPS + 2][24];
	static char *argv[IOBAND_MAX_GROUPS + 8];
	static const char *const head[] = {
		"dg", "0", "0", "cgroup", "weight", "0",
	};
	struct ioband_table t = { .groups = groups };
	unsigned int argc = 0;
	char *err;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(head); i++)
		argv[argc++] = (char *)head[i];
	if (with_default)
		argv[argc++] = ":100";
	for (i = 0; i < nr; i++) {
		/* in descending order, so the parser's sort has work to do */
		snprintf(specs[i], sizeof(specs[i]), "%llu:100",
			 (unsigned long long)(i == nr - 1 && dup ? dup : nr - i));
		argv[argc++] = specs[i];
	}
	return ioband_parse_table(argc, argv, &t, &err);
}

static void table_group_limit(void)
{
	CHECK(!table_of(IOBAND_MAX_GROUPS, false, 0), "65536 groups refused");
	CHECK(!table_of(IOBAND_MAX_GROUPS, true, 0),
	      "65536 groups and ':100' refused");
	CHECK(table_of(IOBAND_MAX_GROUPS + 1, false, 0),
	      "65537 groups accepted without a default");
	CHECK(table_of(IOBAND_MAX_GROUPS + 1, true, 0),
	      "65537 groups accepted with a default");
	CHECK(table_of(IOBAND_MAX_GROUPS, false, 12345),
	      "a duplicate among 65536 groups accepted");
}

void parse_tests(void)
{
	RUN(table_ancestor_example);
	RUN(table_defaults);
	RUN(table_range_bw);
	RUN(table_limits);
	RUN(table_cost_model);
	RUN(table_bad);
	RUN(messages_good);
	RUN(messages_bad);
	RUN(messages_limits);
	RUN(conf_update);
	RUN(group_ids);
	RUN(table_group_limit);
}

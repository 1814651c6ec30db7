// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of ioband-setup's pure parts (parse.c): GROUP specs with a
 * fake user, group and cgroup database, set values, iobandtab lines,
 * table and status lines, the latency message's answer, table diffs, LV
 * names, reports (report.c).
 * make check; the last
 * line reads "N passed, N failed".
 */
#include <stdlib.h>
#include <string.h>

#include "ioband-setup.h"
#include "report.h"

static int passed, failed;

#define CHECK(cond, ...) do {						\
	if (cond) {							\
		passed++;						\
	} else {							\
		failed++;						\
		printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);	\
		printf(__VA_ARGS__);					\
		putchar('\n');						\
	}								\
} while (0)

/* ---- a fake system ------------------------------------------------------- */

static int fake_user(const char *name, int64_t *id)
{
	if (!strcmp(name, "alice")) { *id = 1000; return 0; }
	if (!strcmp(name, "root")) { *id = 0; return 0; }
	if (!strcmp(name, "2000")) { *id = 3000; return 0; }	/* a user named like a number */
	return -1;
}

static int fake_group(const char *name, int64_t *id)
{
	if (!strcmp(name, "staff")) { *id = 50; return 0; }
	return -1;
}

static int fake_cgroup(const char *path, int64_t *id)
{
	if (!strcmp(path, "")) { *id = 1; return 0; }
	if (!strcmp(path, "web")) { *id = 4242; return 0; }
	if (!strcmp(path, "a/b")) { *id = 777; return 0; }
	if (!strcmp(path, "1234")) { *id = 99; return 0; }
	return -1;
}

static char *fake_namer(enum gtype type, int64_t id, void *ctx)
{
	(void)ctx;
	if (type != GT_CGROUP)
		return NULL;
	return id == 1000 ? xstrdup("/web") : id == 7 ? xstrdup("/gone") : NULL;
}

static const struct resolver fake = {
	fake_user, fake_group, fake_cgroup, "/sys/fs/cgroup",
};

static void spec_ok(enum gtype t, const char *spec, int64_t want)
{
	char err[256] = "";
	int64_t id = -42;
	int rc = group_spec_resolve(t, spec, &fake, &id, err, sizeof(err));

	CHECK(rc == 0 && id == want, "type %s spec '%s': rc %d id %lld (want %lld) err '%s'",
	      gtype_names[t], spec, rc, (long long)id, (long long)want, err);
}

static void spec_bad(enum gtype t, const char *spec, int want_rc, const char *want_err)
{
	char err[256] = "";
	int64_t id;
	int rc = group_spec_resolve(t, spec, &fake, &id, err, sizeof(err));

	CHECK(rc == want_rc && strstr(err, want_err),
	      "type %s spec '%s': rc %d (want %d) err '%s' (want '%s')", gtype_names[t], spec,
	      rc, want_rc, err, want_err);
}

static void test_specs(void)
{
	int t;

	for (t = 0; t < GT_NR; t++) {
		spec_ok(t, "default", -1);
		spec_ok(t, "-1", -1);
		spec_bad(t, "", EX_USAGE, "empty");
	}
	spec_bad(GT_NONE, "alice", EX_USAGE, "only the default group");
	spec_bad(GT_NONE, "5", EX_USAGE, "only the default group");

	spec_ok(GT_USER, "alice", 1000);
	spec_ok(GT_USER, "root", 0);
	spec_ok(GT_USER, "1001", 1001);
	spec_ok(GT_USER, "0", 0);
	spec_ok(GT_USER, "2000", 3000);	/* names first, as chown does */
	spec_ok(GT_USER, "4294967294", 4294967294LL);
	spec_bad(GT_USER, "4294967295", EX_USAGE, "out of range");
	spec_bad(GT_USER, "bob", EX_NOTFOUND, "no user named 'bob'");
	spec_bad(GT_USER, "-2", EX_NOTFOUND, "no user");
	spec_ok(GT_GID, "staff", 50);
	spec_ok(GT_GID, "7", 7);
	spec_bad(GT_GID, "alice", EX_NOTFOUND, "no group named 'alice'");

	spec_ok(GT_PID, "1", 1);
	spec_ok(GT_PID, "4194304", 4194304);
	spec_bad(GT_PID, "0", EX_USAGE, "out of range");
	spec_bad(GT_PID, "4194305", EX_USAGE, "out of range");
	spec_bad(GT_PID, "init", EX_USAGE, "not a process id");
	spec_bad(GT_PGRP, "12x", EX_USAGE, "not a process group id");
	spec_ok(GT_PGRP, "300", 300);

	spec_ok(GT_CGROUP, "web", 4242);
	spec_ok(GT_CGROUP, "/web", 4242);
	spec_ok(GT_CGROUP, "/sys/fs/cgroup/web", 4242);
	spec_ok(GT_CGROUP, "/sys/fs/cgroup/web/", 4242);
	spec_ok(GT_CGROUP, "a/b", 777);
	spec_ok(GT_CGROUP, "/sys/fs/cgroup/a/b", 777);
	spec_ok(GT_CGROUP, "/sys/fs/cgroup", 1);
	spec_ok(GT_CGROUP, "4242", 4242);	/* digits: an id */
	spec_ok(GT_CGROUP, "/1234", 99);	/* a cgroup named 1234 */
	spec_ok(GT_CGROUP, "9223372036854775807", 9223372036854775807LL);
	spec_bad(GT_CGROUP, "9223372036854775808", EX_USAGE, "out of range");
	spec_bad(GT_CGROUP, "0", EX_USAGE, "out of range");
	spec_bad(GT_CGROUP, "nosuch", EX_NOTFOUND, "no cgroup 'nosuch' (looked for /sys/fs/cgroup/nosuch)");
	spec_bad(GT_CGROUP, "/sys/fs/cgroupx", EX_NOTFOUND, "no cgroup");
}

/* ---- values -------------------------------------------------------------- */

static void test_values(void)
{
	struct set_value v;
	struct group_conf g;
	char err[256], buf[LIMITS_TEXT_MAX];
	unsigned int given;

	CHECK(!set_value_parse("weight=400", &v, err, sizeof(err)) && v.has_weight &&
	      !v.has_range && !v.limits_given && v.g.weight == 400, "weight=400");
	CHECK(set_value_parse("weight=0", &v, err, sizeof(err)) &&
	      strstr(err, "1 to 10000"), "weight=0: %s", err);
	CHECK(set_value_parse("weight=10001", &v, err, sizeof(err)), "weight=10001");
	CHECK(set_value_parse("weight=+5", &v, err, sizeof(err)), "weight=+5");
	CHECK(set_value_parse("weight=", &v, err, sizeof(err)), "weight=");
	CHECK(set_value_parse("400", &v, err, sizeof(err)) &&
	      strstr(err, "expected weight=W, min=MIN,max=MAX or limits (KEY=VALUE"),
	      "bare 400: %s", err);
	CHECK(!set_value_parse("min=100,max=200", &v, err, sizeof(err)) && v.has_range &&
	      v.g.min_kbps == 100 && v.g.max_kbps == 200, "min,max");
	CHECK(!set_value_parse("max=2m,min=1k", &v, err, sizeof(err)) && v.has_range &&
	      v.g.min_kbps == 1 && v.g.max_kbps == 2048, "max,min with suffixes");
	CHECK(!set_value_parse("min=1G", &v, err, sizeof(err)) &&
	      v.g.min_kbps == 1048576 && v.g.max_kbps == 0, "min only");
	CHECK(!set_value_parse("max=0", &v, err, sizeof(err)) && v.g.max_kbps == 0, "max=0");
	CHECK(set_value_parse("min=300,max=200", &v, err, sizeof(err)) &&
	      strstr(err, "above max"), "min above max: %s", err);
	CHECK(set_value_parse("min=1,min=2", &v, err, sizeof(err)) &&
	      strstr(err, "min given twice"), "min twice: %s", err);
	CHECK(set_value_parse("min=1,weight=2", &v, err, sizeof(err)) &&
	      strstr(err, "a weight and a range"), "mixed: %s", err);
	CHECK(set_value_parse("min=5t", &v, err, sizeof(err)), "bad suffix");
	CHECK(set_value_parse("min=4096g", &v, err, sizeof(err)), "overflow");

	/* limits: systemd's suffixes are powers of 1000; "max" is none */
	CHECK(!set_value_parse("riops=500,wbps=20M", &v, err, sizeof(err)) && !v.has_weight &&
	      !v.has_range && v.limits_given == (1U << LIM_RIOPS | 1U << LIM_WBPS) &&
	      v.g.limit[LIM_RIOPS] == 500 && v.g.limit[LIM_WBPS] == 20000000,
	      "riops=500,wbps=20M: %s", err);
	CHECK(!set_value_parse("weight=300,rbps=1K,bps=2G,iops=3T,wiops=max,burst=1000", &v, err,
			       sizeof(err)) && v.has_weight && v.g.weight == 300 &&
	      v.g.limit[LIM_RBPS] == 1000 && v.g.limit[LIM_BPS] == 2000000000ULL &&
	      v.g.limit[LIM_IOPS] == 3000000000000ULL && !v.g.limit[LIM_WIOPS] &&
	      (v.limits_given & 1U << LIM_WIOPS) && v.g.limit[LIM_BURST] == 1000,
	      "weight with limits: %s", err);
	CHECK(!set_value_parse("min=100,riops=5", &v, err, sizeof(err)) && v.has_range &&
	      v.g.limit[LIM_RIOPS] == 5, "a range with a limit");
	CHECK(set_value_parse("riops=5,riops=6", &v, err, sizeof(err)) &&
	      strstr(err, "riops given twice"), "riops twice: %s", err);
	CHECK(set_value_parse("riops=0", &v, err, sizeof(err)) && strstr(err, "1 to 2^50"),
	      "riops=0: %s", err);
	CHECK(set_value_parse("rbps=1125899906842625", &v, err, sizeof(err)), "rbps past 2^50");
	CHECK(!set_value_parse("rbps=1125899906842624", &v, err, sizeof(err)), "rbps 2^50");
	CHECK(set_value_parse("rbps=2000T", &v, err, sizeof(err)), "rbps 2000T past 2^50");
	CHECK(set_value_parse("rbps=20m", &v, err, sizeof(err)), "lower-case suffix");
	CHECK(set_value_parse("burst=60001", &v, err, sizeof(err)) && strstr(err, "0 to 60000"),
	      "burst past a minute: %s", err);
	CHECK(set_value_parse("burst=max", &v, err, sizeof(err)), "burst=max");
	CHECK(set_value_parse("rlimit=5", &v, err, sizeof(err)) &&
	      strstr(err, "KEY one of bps rbps wbps iops riops wiops burst), not 'rlimit=5'"),
	      "unknown key: %s", err);
	limits_format(v.g.limit, 0, ',', buf, sizeof(buf));
	CHECK(!*buf, "no limit given: '%s'", buf);
	CHECK(!set_value_parse("wiops=max,rbps=7,burst=0", &v, err, sizeof(err)), "for format");
	limits_format(v.g.limit, v.limits_given, ',', buf, sizeof(buf));
	CHECK(!strcmp(buf, "rbps=7,wiops=max,burst=0"), "formatted in the kernel's order: '%s'",
	      buf);
	limits_format(v.g.limit, limits_set(v.g.limit), '/', buf, sizeof(buf));
	CHECK(!strcmp(buf, "rbps=7"), "only those set: '%s'", buf);
	CHECK(!limits_parse("rbps=1/wiops=2,burst=3", g.limit, &given, err, sizeof(err)) &&
	      given == (1U << LIM_RBPS | 1U << LIM_WIOPS | 1U << LIM_BURST),
	      "'/' and ',' both separate");

	CHECK(!group_value_parse("100:0", POL_RANGE_BW, &g, err, sizeof(err)) &&
	      g.min_kbps == 100 && !g.max_kbps, "range value");
	CHECK(group_value_parse("100", POL_RANGE_BW, &g, err, sizeof(err)) &&
	      strstr(err, "MIN:MAX"), "range value without colon");
	CHECK(!group_value_parse("10000", POL_WEIGHT_IOSIZE, &g, err, sizeof(err)) &&
	      g.weight == 10000 && !limits_set(g.limit), "weight value");
	CHECK(!group_value_parse("400/riops=500/wbps=20M", POL_WEIGHT_TIME, &g, err,
				 sizeof(err)) && g.weight == 400 && g.limit[LIM_RIOPS] == 500 &&
	      g.limit[LIM_WBPS] == 20000000, "weight value with limits: %s", err);
	CHECK(!group_value_parse("0:100/iops=5", POL_RANGE_BW, &g, err, sizeof(err)) &&
	      g.max_kbps == 100 && g.limit[LIM_IOPS] == 5, "range value with limits");
	CHECK(group_value_parse("400/", POL_WEIGHT, &g, err, sizeof(err)) &&
	      strstr(err, "no limits"), "'/' and nothing: %s", err);

	{
		char *sp, *val;

		CHECK(!split_spec_value("web=400", &sp, &val) && !strcmp(sp, "web") &&
		      !strcmp(val, "400"), "split");
		free(sp);
		free(val);
		CHECK(!split_spec_value("a=b=5", &sp, &val) && !strcmp(sp, "a=b") &&
		      !strcmp(val, "5"), "split at the '=' a value follows");
		free(sp);
		free(val);
		CHECK(!split_spec_value("a=b=5/riops=5/wbps=2M", &sp, &val) && !strcmp(sp, "a=b") &&
		      !strcmp(val, "5/riops=5/wbps=2M"), "split before the limits");
		free(sp);
		free(val);
		CHECK(!split_spec_value("/x/a=b/c=0:100", &sp, &val) && !strcmp(sp, "/x/a=b/c") &&
		      !strcmp(val, "0:100"), "a path with '=' and '/'");
		free(sp);
		free(val);
		CHECK(split_spec_value("web", &sp, &val), "no '='");
		CHECK(split_spec_value("=5", &sp, &val), "no spec");
		CHECK(split_spec_value("web=", &sp, &val), "no value");
	}
}

/* ---- table and status lines ---------------------------------------------- */

static void test_tables(void)
{
	struct ioband_table t, u;
	struct ioband_status s;
	char err[256], *f, *d;

	CHECK(!table_parse("8:16 data 0 128 cgroup weight 256 :100 1000:400 7:5", &t, err,
			   sizeof(err)), "parse: %s", err);
	CHECK(!strcmp(t.device, "8:16") && !strcmp(t.dg, "data") && t.io_throttle == 0 &&
	      t.io_limit == 128 && t.type == GT_CGROUP && t.policy == POL_WEIGHT &&
	      t.token_base == 256 && t.def.weight == 100 && t.ngroups == 2 &&
	      t.groups[0].id == 1000 && t.groups[0].weight == 400 && t.groups[1].id == 7,
	      "parsed fields");
	f = table_format(&t);
	CHECK(!strcmp(f, "8:16 data 0 128 cgroup weight 256 :100 1000:400 7:5"), "format: %s", f);
	free(f);
	CHECK(table_find(&t, 7) && table_find(&t, 7)->weight == 5 && !table_find(&t, 8) &&
	      table_find(&t, -1) == &t.def, "find");
	CHECK(!table_parse("8:16 data 0 128 cgroup-tree weight-time 256 :100 1000:300 1001:2",
			   &u, err, sizeof(err)) && u.type == GT_CGROUP_TREE && u.ngroups == 2,
	      "cgroup-tree: %s", err);
	f = table_format(&u);
	CHECK(!strcmp(f, "8:16 data 0 128 cgroup-tree weight-time 256 :100 1000:300 1001:2"),
	      "format: %s", f);
	free(f);
	table_free(&u);

	CHECK(!table_parse("8:16 data 0 128 none weight-time 256 :40", &u, err, sizeof(err)) &&
	      u.policy == POL_WEIGHT_TIME && u.def.weight == 40, "weight-time table: %s", err);
	f = table_format(&u);
	CHECK(!strcmp(f, "8:16 data 0 128 none weight-time 256 :40"), "format: %s", f);
	free(f);
	table_free(&u);
	CHECK(!table_parse("8:16 data 0 128 uid weight-iosize 0", &u, err, sizeof(err)) &&
	      u.type == GT_USER && u.def.weight == 100 && !u.ngroups, "no default arg, uid");
	table_free(&u);
	CHECK(!table_parse("8:16 d 0 0 gid range-bw 0 :10:20 5:1:0", &u, err, sizeof(err)) &&
	      u.def.min_kbps == 10 && u.def.max_kbps == 20 && u.groups[0].min_kbps == 1,
	      "range-bw table: %s", err);
	f = table_format(&u);
	CHECK(!strcmp(f, "8:16 d 0 0 gid range-bw 0 :10:20 5:1:0"), "range format: %s", f);
	free(f);
	table_free(&u);
	CHECK(!table_parse("8:16 d 0 0 gid range-bw 0 :10:20 5:1:0 bandwidth=900", &u, err,
			   sizeof(err)) && u.bandwidth == 900 && u.ngroups == 1,
	      "bandwidth=: %s", err);
	f = table_format(&u);
	CHECK(!strcmp(f, "8:16 d 0 0 gid range-bw 0 :10:20 5:1:0 bandwidth=900"),
	      "bandwidth format: %s", f);
	free(f);
	table_free(&u);
	CHECK(table_parse("8:16 d 0 0 gid range-bw 0 bandwidth=0", &u, err, sizeof(err)) &&
	      strstr(err, "bandwidth"), "bandwidth=0: %s", err);
	/* a cost model is carried through, in any order, and printed as the kernel prints it */
	CHECK(!table_parse("8:16 d 0 128 cgroup weight-time 256 :100 5:400 wrandiops=6 "
			   "bandwidth=900 wseqiops=5 wbps=4 rrandiops=3 rseqiops=2 rbps=1",
			   &u, err, sizeof(err)) && u.model[0] == 1 && u.model[5] == 6 &&
	      u.bandwidth == 900 && u.ngroups == 1, "cost model: %s", err);
	f = table_format(&u);
	CHECK(!strcmp(f, "8:16 d 0 128 cgroup weight-time 256 :100 5:400 bandwidth=900 "
		      "rbps=1 rseqiops=2 rrandiops=3 wbps=4 wseqiops=5 wrandiops=6"),
	      "cost model format: %s", f);
	free(f);
	table_free(&u);
	/* limits after a group's value: read, printed back as the kernel prints them */
	CHECK(!table_parse("8:16 d 0 128 cgroup weight 256 :100/wiops=5 5:400/riops=500,wbps=7,burst=10 "
			   "6:7/bps=9 bandwidth=900", &u, err, sizeof(err)) && u.ngroups == 2 &&
	      u.def.limit[LIM_WIOPS] == 5 && u.groups[0].limit[LIM_RIOPS] == 500 &&
	      u.groups[0].limit[LIM_BURST] == 10 && u.bandwidth == 900, "limits: %s", err);
	table_free(&u);
	CHECK(table_parse("8:16 d 0 128 cgroup weight 256 :100 5:400/riops=500,wbps=7,burst=10 "
			  "6:0:0/bps=9", &u, err, sizeof(err)) && strstr(err, "weight must be"),
	      "a range in a weight table: %s", err);
	CHECK(!table_parse("8:16 d 0 128 cgroup weight 256 :100/wiops=5 5:400/riops=500,wbps=7,burst=10",
			   &u, err, sizeof(err)), "limits: %s", err);
	f = table_format(&u);
	CHECK(!strcmp(f, "8:16 d 0 128 cgroup weight 256 :100/wiops=5 5:400/wbps=7,riops=500,burst=10"),
	      "limits format: %s", f);
	free(f);
	{
		struct ioband_table w;

		CHECK(!table_parse("8:16 d 0 128 cgroup weight 256 :100 5:400/riops=600", &w, err,
				   sizeof(err)), "other limits: %s", err);
		d = table_diff(&u, &w, NULL, NULL);
		CHECK(d && !strcmp(d, "default group limits none, group 5 limits riops=600"),
		      "limits diff: %s", d ? d : "(none)");
		free(d);
		table_free(&w);
	}
	table_free(&u);
	CHECK(table_parse("8:16 d 0 0 none weight-time 0 rbps=1", &u, err, sizeof(err)) &&
	      strstr(err, "needs all"), "partial model: %s", err);
	CHECK(table_parse("8:16 d 0 0 none weight-time 0 rbps=0", &u, err, sizeof(err)) &&
	      strstr(err, "cost model value"), "rbps=0: %s", err);
	CHECK(table_parse("8:16 d 0 0 none weight-time 0 x=1", &u, err, sizeof(err)) &&
	      strstr(err, "unknown option"), "x=1: %s", err);
	CHECK(table_parse("8:16 data 0 128 cgroup weight", &u, err, sizeof(err)) &&
	      strstr(err, "too few"), "short: %s", err);
	CHECK(table_parse("8:16 data 0 128 bogus weight 0", &u, err, sizeof(err)) &&
	      strstr(err, "group type"), "type: %s", err);
	CHECK(table_parse("8:16 data 0 128 user bogus 0", &u, err, sizeof(err)), "policy");
	CHECK(table_parse("8:16 d/x 0 128 user weight 0", &u, err, sizeof(err)), "dg");
	CHECK(table_parse("8:16 d 0 128 user weight 0 1:5 1:6", &u, err, sizeof(err)) &&
	      strstr(err, "duplicate"), "dup: %s", err);
	CHECK(table_parse("8:16 d 0 128 user weight 0 1:0", &u, err, sizeof(err)), "weight 0");
	CHECK(table_parse("8:16 d 0 128 user weight 0 -1:5", &u, err, sizeof(err)), "id -1");
	CHECK(table_parse("8:16 d 0 128 user weight 0 x:5", &u, err, sizeof(err)), "id x");

	/* diffs */
	CHECK(!table_parse("8:16 data 0 128 cgroup weight 256 :100 7:5 1000:400", &u, err,
			   sizeof(err)), "parse reordered");
	d = table_diff(&t, &u, NULL, NULL);
	CHECK(!d, "order does not matter: %s", d ? d : "");
	free(d);
	table_free(&u);
	/* weight-time's weights are weights: a switch keeps them */
	CHECK(!table_parse("8:16 data 0 128 cgroup weight-time 256 :100 7:5 1000:300", &u, err,
			   sizeof(err)), "parse weight-time");
	d = table_diff(&t, &u, NULL, NULL);
	CHECK(d && !strcmp(d, "policy weight -> weight-time, group 1000 weight 400 -> 300"),
	      "diff to weight-time: %s", d ? d : "(none)");
	free(d);
	table_free(&u);
	CHECK(!table_parse("8:16 data2 4 64 cgroup weight-iosize 512 :50 1000:300 9:1", &u, err,
			   sizeof(err)), "parse other");
	d = table_diff(&t, &u, NULL, NULL);
	CHECK(d && !strcmp(d, "device group data -> data2, policy weight -> weight-iosize, "
			     "io_throttle 0 -> 4, io_limit 128 -> 64, token_base 256 -> 512, "
			     "default weight 100 -> 50, group 1000 weight 400 -> 300, attach 9, detach 7"),
	      "diff: %s", d ? d : "(none)");
	free(d);
	d = table_diff(&t, &u, fake_namer, NULL);
	CHECK(d && strstr(d, ", group /web (id 1000) weight 400 -> 300, attach 9, detach /gone (id 7)"),
	      "diff with names: %s", d ? d : "(none)");
	free(d);
	table_free(&u);
	table_free(&t);

	CHECK(!status_parse("data -1 3 0 24 0 0 0 1000 10 4 80 3 0 24", &s, err, sizeof(err)),
	      "status: %s", err);
	CHECK(!strcmp(s.dg, "data") && s.ngroups == 2 && s.groups[0].id == -1 &&
	      s.groups[0].reads == 3 && s.groups[0].read_sectors == 24 &&
	      s.groups[1].id == 1000 && s.groups[1].delayed_reads == 4 &&
	      s.groups[1].write_sectors == 24, "status fields");
	CHECK(status_find(&s, 1000) == &s.groups[1] && !status_find(&s, 5), "status find");
	status_free(&s);
	CHECK(status_parse("data -1 3 0 24 0 0", &s, err, sizeof(err)), "short status");
	CHECK(status_parse("data -1 3 0 24 0 0 x", &s, err, sizeof(err)), "bad counter");
	CHECK(status_parse("data -2 3 0 24 0 0 0", &s, err, sizeof(err)), "bad id");
}

/* ---- the answer to the latency message ----------------------------------- */

/* @text parses into @n groups, the first two given (id, timed, usec) when there. */
static void latency_ok(const char *text, size_t n, const struct group_latency *want,
		       const char *what)
{
	struct ioband_latency l;
	char err[256] = "";
	size_t i;
	int rc = latency_parse(text, &l, err, sizeof(err));

	CHECK(!rc && l.ngroups == n, "%s: rc %d, %zu groups (want %zu), err '%s'", what, rc,
	      l.ngroups, n, err);
	for (i = 0; !rc && i < n && i < 2; i++) {
		const struct group_latency *g = &l.groups[i];

		CHECK(g->id == want[i].id && g->timed == want[i].timed &&
		      !memcmp(g->usec, want[i].usec, sizeof(g->usec)),
		      "%s: group %zu: %lld %llu %llu %llu %llu %llu", what, i, (long long)g->id,
		      (unsigned long long)g->timed, (unsigned long long)g->usec[0],
		      (unsigned long long)g->usec[1], (unsigned long long)g->usec[2],
		      (unsigned long long)g->usec[3]);
		CHECK(latency_find(&l, want[i].id) == g, "%s: find %lld", what,
		      (long long)want[i].id);
	}
	latency_free(&l);
}

static void latency_bad(const char *text, const char *want_err, const char *what)
{
	struct ioband_latency l;
	char err[256] = "";
	int rc = latency_parse(text, &l, err, sizeof(err));

	CHECK(rc && !strcmp(err, want_err) && !l.ngroups && !l.groups,
	      "%s: rc %d, %zu groups, err '%s' (want '%s')", what, rc, l.ngroups, err, want_err);
	if (!rc)
		latency_free(&l);
}

static void test_latency(void)
{
	static const struct group_latency two[] = {
		{ -1, 0, { 0, 0, 0, 0 } },
		{ 17, 32, { 201327, 201327, 6291, 8388 } },
	};
	static const struct group_latency timed_default[] = {
		{ -1, 5, { 0, 40, 90, 120 } },
	};
	struct ioband_latency l;
	char err[256];

	/* the kernel's answer: the default group (-1, none timed here) first */
	latency_ok("-1 0 0 0 0 0\n17 32 201327 201327 6291 8388\n", 2, two, "normal");
	latency_ok("-1 5 0 40 90 120\n", 1, timed_default, "the default group timed");
	CHECK(!latency_parse("-1 0 0 0 0 0\n17 32 201327 201327 6291 8388\n", &l, err,
			     sizeof(err)) && !latency_find(&l, 18) && l.groups[0].timed == 0,
	      "timed 0, a group not in the answer: %s", err);
	latency_free(&l);
	/* blanks, tabs, blank lines, with or without a last newline */
	latency_ok("  -1\t0 0  0 0 0  \n\n17 32 201327 201327 6291 8388", 2, two,
		   "extra whitespace, no last newline");
	latency_ok("-1 0 0 0 0 0\n17 32 201327 201327 6291 8388\n\n", 2, two,
		   "blank line at the end");

	latency_bad("", "empty latency answer (not even the default group)", "empty");
	latency_bad("\n \n", "empty latency answer (not even the default group)", "blank lines");
	latency_bad("-1 0 0 0 0\n",
		    "latency line 1: 5 fields, not 6 (id timed wait_p50 wait_p99 dev_p50 dev_p99)",
		    "a field short");
	latency_bad("-1 0 0 0 0 0\n17 32 201327 201327 6291 8388 9\n",
		    "latency line 2: 7 fields, not 6 (id timed wait_p50 wait_p99 dev_p50 dev_p99)",
		    "a field too many");
	latency_bad("-1 0 0 0 0 0\n17 32 201327 201327 6291 8388x\n",
		    "latency line 2: bad dev_p99 '8388x'", "junk after a number");
	latency_bad("-1 0 0 x 0 0\n", "latency line 1: bad wait_p99 'x'", "not a number");
	latency_bad("-1 -3 0 0 0 0\n", "latency line 1: bad timed '-3'", "a negative count");
	latency_bad("-2 0 0 0 0 0\n", "latency line 1: bad id '-2'", "id -2");
	latency_bad("17x 0 0 0 0 0\n", "latency line 1: bad id '17x'", "junk after the id");
}

/* ---- options to tables --------------------------------------------------- */

static void test_opts_to_table(void)
{
	struct setup_opts o;
	struct ioband_table t, cur;
	char err[256], *f;
	int64_t ids[4];

	setup_opts_init(&o);
	CHECK(!setup_opts_set(&o, "type", "cgroup", err, sizeof(err)), "type");
	CHECK(!setup_opts_add_group(&o, "web=400", err, sizeof(err)), "group");
	CHECK(!setup_opts_add_group(&o, "a/b=50", err, sizeof(err)), "group 2");
	ids[0] = 4242;
	ids[1] = 777;
	CHECK(!opts_to_table(&o, "250:0", "data", NULL, ids, &t, err, sizeof(err)), "%s", err);
	f = table_format(&t);
	CHECK(!strcmp(f, "250:0 data 0 128 cgroup weight-time 256 :100 4242:400 777:50"),
	      "a new device group gets weight-time: %s", f);
	free(f);
	table_free(&t);

	/* settings not given keep the values in force */
	CHECK(!table_parse("250:0 data 3 64 cgroup weight-iosize 512 :100", &cur, err,
			   sizeof(err)), "cur");
	CHECK(!opts_to_table(&o, "250:0", "data", &cur, ids, &t, err, sizeof(err)), "%s", err);
	f = table_format(&t);
	CHECK(!strcmp(f, "250:0 data 3 64 cgroup weight-iosize 512 :100 4242:400 777:50"), "%s", f);
	free(f);
	table_free(&t);
	table_free(&cur);

	CHECK(!setup_opts_set(&o, "device-group", "shared", err, sizeof(err)), "dg");
	CHECK(!setup_opts_set(&o, "weight", "10", err, sizeof(err)), "weight");
	CHECK(!setup_opts_set(&o, "io-limit", "16", err, sizeof(err)), "io-limit");
	CHECK(!setup_opts_set(&o, "io-throttle", "8", err, sizeof(err)), "io-throttle");
	CHECK(!setup_opts_set(&o, "token-base", "0", err, sizeof(err)), "token-base");
	CHECK(!opts_to_table(&o, "250:0", "data", NULL, ids, &t, err, sizeof(err)), "%s", err);
	f = table_format(&t);
	CHECK(!strcmp(f, "250:0 shared 8 16 cgroup weight-time 256 :10 4242:400 777:50"), "%s", f);
	free(f);
	table_free(&t);

	CHECK(!setup_opts_set(&o, "io-throttle", "17", err, sizeof(err)), "io-throttle 17");
	CHECK(opts_to_table(&o, "250:0", "data", NULL, ids, &t, err, sizeof(err)) &&
	      strstr(err, "must not exceed io-limit"), "%s", err);
	o.io_throttle = -1;

	ids[1] = 4242;
	CHECK(opts_to_table(&o, "250:0", "data", NULL, ids, &t, err, sizeof(err)) &&
	      strstr(err, "given twice"), "dup: %s", err);
	ids[1] = -1;
	CHECK(opts_to_table(&o, "250:0", "data", NULL, ids, &t, err, sizeof(err)) &&
	      strstr(err, "default group is given twice"), "dup default: %s", err);
	o.has_weight = false;
	CHECK(!opts_to_table(&o, "250:0", "data", NULL, ids, &t, err, sizeof(err)) &&
	      t.def.weight == 50 && t.ngroups == 1, "default=50 as a group: %s", err);
	table_free(&t);

	o.dg = NULL;
	CHECK(opts_to_table(&o, "250:0", "a-very-long-name-of-more-than-31-chars", NULL, ids,
			    &t, err, sizeof(err)) && strstr(err, "--device-group"), "%s", err);
	o.type = GT_PID;
	ids[0] = 0;
	CHECK(opts_to_table(&o, "250:0", "data", NULL, ids, &t, err, sizeof(err)) &&
	      strstr(err, "out of range for group type pid"), "%s", err);
	setup_opts_free(&o);

	setup_opts_init(&o);
	CHECK(setup_opts_set(&o, "type", "bogus", err, sizeof(err)) &&
	      strstr(err, "unknown group type"), "%s", err);
	CHECK(setup_opts_set(&o, "policy", "fast", err, sizeof(err)) &&
	      strstr(err, "unknown policy"), "%s", err);
	CHECK(setup_opts_set(&o, "io-limit", "65537", err, sizeof(err)) &&
	      strstr(err, "io-limit must be a number from 0 to 65536"), "%s", err);
	CHECK(setup_opts_set(&o, "carryover", "101", err, sizeof(err)), "carryover");
	CHECK(setup_opts_set(&o, "device-group", "a/b", err, sizeof(err)), "dg");
	CHECK(setup_opts_set(&o, "colour", "red", err, sizeof(err)) &&
	      strstr(err, "unknown option 'colour'"), "%s", err);
	CHECK(!setup_opts_set(&o, "policy", "range-bw", err, sizeof(err)) &&
	      !setup_opts_set(&o, "weight", "5", err, sizeof(err)), "range-bw");
	CHECK(opts_to_table(&o, "250:0", "data", NULL, ids, &t, err, sizeof(err)) &&
	      strstr(err, "holds ranges, not weights"), "%s", err);
	setup_opts_free(&o);

	/* a cost model: given whole, kept from the table in force, or refused */
	setup_opts_init(&o);
	CHECK(!table_parse("250:0 data 0 128 none weight-time 256 :100 rbps=1 rseqiops=2 "
			   "rrandiops=3 wbps=4 wseqiops=5 wrandiops=6", &cur, err, sizeof(err)),
	      "cur with a model: %s", err);
	CHECK(!opts_to_table(&o, "250:0", "data", &cur, ids, &t, err, sizeof(err)), "%s", err);
	f = table_format(&t);
	CHECK(!strcmp(f, "250:0 data 0 128 none weight-time 256 :100 rbps=1 rseqiops=2 "
		      "rrandiops=3 wbps=4 wseqiops=5 wrandiops=6"), "model kept: %s", f);
	free(f);
	table_free(&t);
	CHECK(!setup_opts_set(&o, "cost-model", "rbps=10,rseqiops=20,rrandiops=30,wbps=40,"
			      "wseqiops=50,wrandiops=60", err, sizeof(err)), "--cost-model: %s", err);
	CHECK(!opts_to_table(&o, "250:0", "data", &cur, ids, &t, err, sizeof(err)), "%s", err);
	f = table_format(&t);
	CHECK(!strcmp(f, "250:0 data 0 128 none weight-time 256 :100 rbps=10 rseqiops=20 "
		      "rrandiops=30 wbps=40 wseqiops=50 wrandiops=60"), "model given: %s", f);
	free(f);
	f = table_diff(&cur, &t, NULL, NULL);
	CHECK(f && strstr(f, "cost model changed"), "diff: %s", f ? f : "(none)");
	free(f);
	table_free(&t);
	table_free(&cur);
	CHECK(setup_opts_set(&o, "rbps", "7", err, sizeof(err)) && strstr(err, "given twice"),
	      "rbps twice: %s", err);
	setup_opts_free(&o);
	setup_opts_init(&o);
	CHECK(!setup_opts_set(&o, "rbps", "7", err, sizeof(err)), "rbps");
	CHECK(opts_to_table(&o, "250:0", "data", NULL, ids, &t, err, sizeof(err)) &&
	      strstr(err, "needs all"), "partial model: %s", err);
	CHECK(setup_opts_set(&o, "wbps", "0", err, sizeof(err)) &&
	      strstr(err, "wbps must be a number from 1 to 1000000000000"), "wbps=0: %s", err);
	CHECK(setup_opts_set(&o, "wseqiops", "7x", err, sizeof(err)) && !o.model[4] &&
	      !setup_opts_set(&o, "wseqiops", "7", err, sizeof(err)), "wseqiops=7x left a value");
	CHECK(setup_opts_set(&o, "cost-model", "rbps", err, sizeof(err)) &&
	      strstr(err, "cost model must be"), "--cost-model rbps: %s", err);
	setup_opts_free(&o);
}

/* ---- iobandtab ----------------------------------------------------------- */

static void test_tab(void)
{
	struct tab_entry e;
	char err[256];

	CHECK(tab_parse_line("", 1, &e, err, sizeof(err)) == 0, "blank");
	CHECK(tab_parse_line("   # comment\n", 2, &e, err, sizeof(err)) == 0, "comment");
	CHECK(tab_parse_line("data /dev/sdb\n", 3, &e, err, sizeof(err)) == 1 &&
	      !strcmp(e.name, "data") && !strcmp(e.device, "/dev/sdb") && !e.wrap &&
	      e.opts.type == -1 && !e.opts.ngroups && e.lineno == 3, "minimal");
	tab_entry_free(&e);
	CHECK(tab_parse_line("data\t/dev/sdb\t-  # nothing\n", 4, &e, err, sizeof(err)) == 1 &&
	      !e.opts.ngroups, "dash options");
	tab_entry_free(&e);
	CHECK(tab_parse_line("web /dev/disk/by-id/x type=cgroup,policy=weight-iosize,"
			     "device-group=dg1,weight=50,group=web=400,group=/sys/fs/cgroup/a/b=100,"
			     "io-limit=64,io-throttle=4,token-base=512,carryover=3", 5, &e, err,
			     sizeof(err)) == 1, "full: %s", err);
	CHECK(e.opts.type == GT_CGROUP && e.opts.policy == POL_WEIGHT_IOSIZE &&
	      !strcmp(e.opts.dg, "dg1") && e.opts.has_weight && e.opts.weight == 50 &&
	      e.opts.ngroups == 2 && !strcmp(e.opts.groups[0].spec, "web") &&
	      !strcmp(e.opts.groups[0].value, "400") &&
	      !strcmp(e.opts.groups[1].spec, "/sys/fs/cgroup/a/b") && e.opts.io_limit == 64 &&
	      e.opts.io_throttle == 4 && e.opts.token_base == 512 && e.opts.carryover == 3,
	      "full fields");
	tab_entry_free(&e);
	CHECK(tab_parse_line("db /dev/sdc rbps=1,rseqiops=2,rrandiops=3,wbps=4,wseqiops=5,"
			     "wrandiops=6", 5, &e, err, sizeof(err)) == 1 &&
	      e.opts.model[0] == 1 && e.opts.model[5] == 6, "cost model: %s", err);
	tab_entry_free(&e);
	CHECK(tab_parse_line("vg0/home wrap type=user,group=alice=300", 6, &e, err, sizeof(err)) == 1 &&
	      e.wrap && !strcmp(e.name, "vg0/home"), "wrap: %s", err);
	tab_entry_free(&e);
	CHECK(tab_parse_line("x /dev/sdb group=my\\040cg=5", 7, &e, err, sizeof(err)) == 1 &&
	      !strcmp(e.opts.groups[0].spec, "my cg"), "escape: %s", err);
	tab_entry_free(&e);

	CHECK(tab_parse_line("data", 8, &e, err, sizeof(err)) < 0 &&
	      strstr(err, "line 8: expected NAME DEVICE [OPTIONS], found 1 field"), "%s", err);
	CHECK(tab_parse_line("a b c d", 9, &e, err, sizeof(err)) < 0 &&
	      strstr(err, "found 4 fields"), "%s", err);
	CHECK(tab_parse_line("data sdb", 10, &e, err, sizeof(err)) < 0 &&
	      strstr(err, "absolute path"), "%s", err);
	CHECK(tab_parse_line("a/b /dev/sdb", 11, &e, err, sizeof(err)) < 0 &&
	      strstr(err, "not a valid device name"), "%s", err);
	CHECK(tab_parse_line("home wrap", 12, &e, err, sizeof(err)) < 0 &&
	      strstr(err, "VG/LV"), "%s", err);
	CHECK(tab_parse_line("d /dev/sdb type=cgroup,bogus", 13, &e, err, sizeof(err)) < 0 &&
	      strstr(err, "line 13: option 'bogus' must be KEY=VALUE"), "%s", err);
	CHECK(tab_parse_line("d /dev/sdb weight=0", 14, &e, err, sizeof(err)) < 0 &&
	      strstr(err, "line 14: weight must be a number from 1 to 10000"), "%s", err);
	CHECK(tab_parse_line("d /dev/sdb group=web", 15, &e, err, sizeof(err)) < 0 &&
	      strstr(err, "SPEC=VALUE"), "%s", err);
	CHECK(tab_parse_line("d /dev/sdb\\9 -", 16, &e, err, sizeof(err)) < 0 &&
	      strstr(err, "bad escape"), "%s", err);
	CHECK(tab_parse_line("d /dev/sdb speed=5", 17, &e, err, sizeof(err)) < 0 &&
	      strstr(err, "unknown option 'speed'"), "%s", err);

	/* devices by tag; nofail */
	CHECK(tab_parse_line("d UUID=1b2c-3d type=cgroup,nofail,group=web=5", 18, &e, err,
			     sizeof(err)) == 1 && e.nofail && !strcmp(e.device, "UUID=1b2c-3d") &&
	      e.opts.ngroups == 1, "tag and nofail: %s", err);
	tab_entry_free(&e);
	CHECK(tab_parse_line("d LABEL=my\\040data", 19, &e, err, sizeof(err)) == 1 && !e.nofail &&
	      !strcmp(e.device, "LABEL=my data"), "label: %s", err);
	tab_entry_free(&e);
	CHECK(tab_device_is_tag("PARTUUID=x") && tab_device_is_tag("PARTLABEL=x") &&
	      !tab_device_is_tag("UUID=") && !tab_device_is_tag("uuid=x") &&
	      !tab_device_is_tag("/dev/sdb"), "tags");
	CHECK(tab_parse_line("d FOO=x", 20, &e, err, sizeof(err)) < 0 &&
	      strstr(err, "line 20: device 'FOO=x' must be an absolute path, UUID="), "%s", err);
	CHECK(tab_parse_line("d UUID=", 21, &e, err, sizeof(err)) < 0, "empty UUID");
}

static void test_names(void)
{
	char out[128], err[256];

	CHECK(!lv_dm_name("vg0/home", out, sizeof(out), err, sizeof(err)) &&
	      !strcmp(out, "vg0-home"), "%s", out);
	CHECK(!lv_dm_name("/dev/my-vg/my-lv", out, sizeof(out), err, sizeof(err)) &&
	      !strcmp(out, "my--vg-my--lv"), "%s", out);
	CHECK(lv_dm_name("home", out, sizeof(out), err, sizeof(err)), "no slash");
	CHECK(lv_dm_name("a/b/c", out, sizeof(out), err, sizeof(err)), "two slashes");
	CHECK(lv_dm_name("a/b c", out, sizeof(out), err, sizeof(err)), "blank");
	CHECK(lv_dm_name("a/", out, sizeof(out), err, sizeof(err)), "no lv");
	CHECK(lv_dm_name("vg/lv", out, 6, err, sizeof(err)) && strstr(err, "too long"), "short buffer");
	lv_default_dg("/dev/vg0/home", "vg0-home", out, sizeof(out));
	CHECK(!strcmp(out, "vg0"), "a wrap's device group: %s", out);
	lv_default_dg("a+b/home", "a+b-home", out, sizeof(out));
	CHECK(!strcmp(out, "a+b-home"), "no device group id: the dm name: %s", out);
	lv_default_dg("v234567890123456789012345678901234/x", "v2-x", out, sizeof(out));
	CHECK(!strcmp(out, "v2-x"), "a volume group name too long: %s", out);

	CHECK(dg_name_valid("a.b-c_9") && !dg_name_valid("") && !dg_name_valid("a b") &&
	      !dg_name_valid("0123456789012345678901234567890123"), "dg names");
	CHECK(dm_name_valid("vg0-home") && !dm_name_valid("a/b") && !dm_name_valid("a b") &&
	      !dm_name_valid("..") && !dm_name_valid(""), "dm names");
	CHECK(gtype_parse("uid") == GT_USER && gtype_parse("cgroup") == GT_CGROUP &&
	      gtype_parse("cgroup-tree") == GT_CGROUP_TREE &&
	      gtype_parse("x") < 0 && policy_parse("range-bw") == POL_RANGE_BW, "parsers");
	{
		uint32_t v;
		uint64_t w;

		CHECK(!parse_u32("65536", 65536, &v) && v == 65536 && parse_u32("65537", 65536, &v) &&
		      parse_u32("", 5, &v) && parse_u32("1 ", 5, &v) && parse_u32("-1", 5, &v),
		      "u32");
		CHECK(!parse_u64("18446744073709551615", UINT64_MAX, &w) &&
		      parse_u64("18446744073709551616", UINT64_MAX, &w), "u64");
	}
}

/* ---- cgroup groups by path (pathgroups.c) --------------------------------- */

static void plan_is(struct pg_entry *e, const char *table, int64_t cur, const char *want,
		    int64_t want_id)
{
	struct ioband_table t;
	char msgs[PG_MAX_MSGS][PG_MSG_LEN], got[512] = "", err[256];
	size_t n, i, len = 0;

	CHECK(!table_parse(table, &t, err, sizeof(err)), "table '%s': %s", table, err);
	n = pg_plan(e, &t, cur, msgs);
	for (i = 0; i < n; i++)
		len += snprintf(got + len, sizeof(got) - len, "%s%s", i ? ", " : "", msgs[i]);
	CHECK(!strcmp(got, want) && e->id == want_id, "plan over '%s' cur %lld: '%s' id %lld (want '%s' id %lld)",
	      table, (long long)cur, got, (long long)e->id, want, (long long)want_id);
	table_free(&t);
}

/* @p (malloc'ed, freed here) is @want */
static void path_is(char *p, const char *want)
{
	CHECK(p && !strcmp(p, want), "'%s', want '%s'", p ? p : "(null)", want);
	free(p);
}

static void test_pathgroups(void)
{
	struct pg_state s = { 0 };
	struct pg_entry *e;
	char *buf = NULL, err[256];
	size_t len = 0;
	FILE *f;

	path_is(cgroup_spec_path("/sys/fs/cgroup/system.slice/web.service/", "/sys/fs/cgroup"),
		"/system.slice/web.service");
	path_is(cgroup_spec_path("web", "/sys/fs/cgroup"), "/web");
	path_is(cgroup_spec_path("//", "/sys/fs/cgroup"), "/");
	path_is(cgroup_spec_path("/sys/fs/cgroupx", "/sys/fs/cgroup"), "/sys/fs/cgroupx");
	CHECK(!cgroup_spec_path("1234", "/sys/fs/cgroup") && !cgroup_spec_path("default", "/x") &&
	      !cgroup_spec_path("-1", "/x") && !cgroup_spec_path("", "/x"), "ids and default are not paths");

	/* systemd units */
	path_is(unit_default_path("web.service"), "/system.slice/web.service");
	path_is(unit_default_path("a-b-c.slice"), "/a.slice/a-b.slice/a-b-c.slice");
	path_is(unit_default_path("batch.slice"), "/batch.slice");
	path_is(unit_default_path("-.slice"), "/");
	path_is(unit_default_path("session-3.scope"), "/system.slice/session-3.scope");
	CHECK(!unit_default_path("web") && !unit_default_path("system.slice/web.service") &&
	      !unit_default_path(".service") && !unit_default_path("web.services"), "not units");

	/* a group by path: attached with its settings, then its cgroup made again */
	e = pg_add(&s, "c", "/web");
	e->weight = 300;
	plan_is(e, "1:1 c 0 128 cgroup weight 256 :100", 500, "attach 500, weight 500:300", 500);
	plan_is(e, "1:1 c 0 128 cgroup weight 256 :100 500:300", 500, "", 500);
	plan_is(e, "1:1 c 0 128 cgroup weight 256 :100 500:300", 0, "detach 500", 0);
	plan_is(e, "1:1 c 0 128 cgroup weight 256 :100 500:300", 0, "", 0);
	e->id = 500;
	plan_is(e, "1:1 c 0 128 cgroup weight 256 :100 500:300", 501,
		"detach 500, attach 501, weight 501:300", 501);
	/* a stale id detached already by hand; a weight changed behind our back */
	e->id = 500;
	plan_is(e, "1:1 c 0 128 cgroup weight 256 :100 501:7", 501, "weight 501:300, range-bw 501:0:0", 501);
	/* range-bw: the range is what the table shows */
	e->min_kbps = 100;
	e->max_kbps = 2048;
	plan_is(e, "1:1 c 0 128 cgroup range-bw 256 :0:0 501:100:2048", 501, "", 501);
	plan_is(e, "1:1 c 0 128 cgroup range-bw 256 :0:0", 501,
		"attach 501, weight 501:300, range-bw 501:100:2048", 501);
	e->weight = DEFAULT_WEIGHT;
	e->min_kbps = e->max_kbps = 0;
	plan_is(e, "1:1 c 0 128 cgroup weight 256 :100", 9, "attach 9", 9);
	/* limits: sent whole (every kind, max where none), unless the table has them */
	e->limit[LIM_RIOPS] = 500;
	plan_is(e, "1:1 c 0 128 cgroup weight 256 :100", 9,
		"attach 9, limit 9/bps=max,rbps=max,wbps=max,iops=max,riops=500,wiops=max,burst=0", 9);
	plan_is(e, "1:1 c 0 128 cgroup weight 256 :100 9:100/riops=500", 9, "", 9);
	plan_is(e, "1:1 c 0 128 cgroup weight 256 :100 9:100/riops=500,wbps=7", 9,
		"weight 9:100, range-bw 9:0:0, limit 9/bps=max,rbps=max,wbps=max,iops=max,riops=500,wiops=max,burst=0",
		9);
	e->limit[LIM_RIOPS] = 0;
	plan_is(e, "1:1 c 0 128 cgroup weight 256 :100 9:100/riops=500", 9,
		"weight 9:100, range-bw 9:0:0, limit 9/bps=max,rbps=max,wbps=max,iops=max,riops=max,wiops=max,burst=0",
		9);

	/* the state file: written, read back the same; escapes; errors */
	e = pg_add(&s, "d", "/a b#\\c");
	e->weight = 5;
	e->min_kbps = 1;
	e->max_kbps = 2;
	e->id = 77;
	e->limit[LIM_WBPS] = 20000000;
	e->limit[LIM_BURST] = 100;
	CHECK(pg_add(&s, "d", "/a b#\\c") == e && s.n == 2, "pg_add finds the entry");
	f = open_memstream(&buf, &len);
	pg_write(f, &s);
	fclose(f);
	CHECK(strstr(buf, "\nc /web 100 0 0 9 0 -\nd /a\\040b\\043\\134c 5 1 2 77 0 wbps=20000000,burst=100\n"),
	      "%s", buf);
	{
		struct pg_state r = { 0 };
		char *line, *save = NULL;
		int n = 0, bad = 0;

		for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			bad += pg_parse_line(&r, line, ++n, err, sizeof(err)) < 0;
		e = pg_find(&r, "d", "/a b#\\c");
		CHECK(!bad && r.n == 2 && e && e->weight == 5 && e->min_kbps == 1 && e->max_kbps == 2 &&
		      e->id == 77 && e->limit[LIM_WBPS] == 20000000 && e->limit[LIM_BURST] == 100 &&
		      limits_set(e->limit) == (1U << LIM_WBPS | 1U << LIM_BURST) &&
		      pg_find_id(&r, "c", 9), "read back: %zu entries", r.n);
		CHECK(pg_parse_line(&r, "c /old 100 0 0 9 0", 9, err, sizeof(err)) == 1 &&
		      !limits_set(pg_find(&r, "c", "/old")->limit), "a state before limits: %s", err);
		pg_drop(&r, pg_find(&r, "c", "/old"));
		CHECK(pg_parse_line(&r, "c /x 1 0 0 9 0 riops=0", 9, err, sizeof(err)) < 0 &&
		      strstr(err, "bad limits"), "%s", err);
		CHECK(pg_parse_line(&r, "c /web 100 0 0 9 0", 9, err, sizeof(err)) < 0 &&
		      strstr(err, "given twice"), "%s", err);
		CHECK(pg_parse_line(&r, "c web 100 0 0 9 0", 9, err, sizeof(err)) < 0, "relative path");
		CHECK(pg_parse_line(&r, "c /x 0 0 0 9 0", 9, err, sizeof(err)) < 0, "weight 0");
		CHECK(pg_parse_line(&r, "c /x 1 5 4 9 0", 9, err, sizeof(err)) < 0, "min above max");
		CHECK(pg_parse_line(&r, "c /x 1 0 0 9 10001", 9, err, sizeof(err)) < 0, "io.weight");
		CHECK(pg_parse_line(&r, "c /x 1 0 0 9", 9, err, sizeof(err)) < 0 &&
		      strstr(err, "expected 8 fields"), "%s", err);
		CHECK(pg_parse_line(&r, "  # note", 9, err, sizeof(err)) == 0, "comment");
		pg_add(&r, "e", "/z");
		pg_drop(&r, pg_find(&r, "c", "/web"));
		CHECK(r.n == 2 && !pg_find(&r, "c", "/web") && r.e[0].id == 77 &&
		      !strcmp(r.e[1].path, "/z"), "drop keeps the order");
		pg_free(&r);
	}
	free(buf);
	pg_free(&s);

	/* io.weight */
	CHECK(ioweight_parse("default 100\n", "253:3") == 100, "default");
	CHECK(ioweight_parse("default 250\n253:3 40\n8:0 7\n", "253:3") == 40, "per device");
	CHECK(ioweight_parse("default 250\n8:0 7\n", "253:3") == 250, "another device's");
	CHECK(ioweight_parse("", "253:3") == 0 && ioweight_parse("default 0\n", "1:1") == 0 &&
	      ioweight_parse("default 10001\n", "1:1") == 0, "none");
	{
		struct pg_entry e = { .weight = 400 };

		CHECK(!pg_follow_ioweight(&e, 100) && e.weight == 400 && e.ioweight == 100,
		      "first sight of the default: the configured weight stays");
		CHECK(!pg_follow_ioweight(&e, 100) && e.weight == 400, "unchanged");
		CHECK(pg_follow_ioweight(&e, 700) && e.weight == 700 && e.ioweight == 700, "changed");
		e.weight = 50;	/* set by hand since */
		CHECK(!pg_follow_ioweight(&e, 700) && e.weight == 50, "set by hand stays");
		CHECK(!pg_follow_ioweight(&e, 0) && e.ioweight == 700, "no io.weight file");
		CHECK(pg_follow_ioweight(&e, 100) && e.weight == 100, "back to the default");
		e = (struct pg_entry){ .weight = 400 };
		CHECK(pg_follow_ioweight(&e, 600) && e.weight == 600, "IOWeight= at first sight");
	}
}

static void test_json(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	json_string(f, "a\"b\\c\nd\x01/");
	fclose(f);
	CHECK(!strcmp(buf, "\"a\\\"b\\\\c\\nd\\u0001/\""), "%s", buf);
	free(buf);
}

/* ---- reports (report.c) -------------------------------------------------- */

/* One row of list's columns: a device of @sectors, its other cells fixed. */
static void list_row(struct report *r, const char *name, const char *policy, uint64_t sectors)
{
	report_row(r);
	report_str(r, name);
	report_str(r, "/dev/sdb");
	report_str(r, "8:16");
	report_str(r, "dg");
	report_str(r, "cgroup");
	report_str(r, policy);
	report_u64(r, 12);
	report_str(r, NULL);
	report_sectors(r, sectors);
	report_u64(r, 0);
	report_u64(r, 128);
	report_u64(r, 256);
	report_i64(r, 1);
	report_cell(r, "no", "false");
}

/*
 * list's report of two devices (weight-iosize, then @name2 weight-time) with
 * @o and -o @cols: its text (or JSON), malloc'ed, or NULL with @err.
 */
static char *list_report(const char *cols, struct report_opts o, const char *name2,
			 char *err, size_t errlen)
{
	struct report *r;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc;

	o.columns = cols;
	rc = report_new("list", list_cols, list_ncols, LIST_DEFAULT, &o, f, &r, err, errlen);
	if (rc < 0) {
		fclose(f);
		free(buf);
		return NULL;
	}
	if (r) {
		list_row(r, "d1", "weight-iosize", 131072);
		list_row(r, name2, "weight-time", 2048);
		if (o.json)
			report_print_json_doc(r, "devices", f);
		else
			report_print(r, f);
		report_free(r);
	}
	fclose(f);
	return buf;
}

static void report_ok(const char *cols, struct report_opts o, const char *name2,
		      const char *want, const char *what)
{
	char err[256] = "";
	char *got = list_report(cols, o, name2, err, sizeof(err));

	CHECK(got && !strcmp(got, want), "%s: -o %s: got\n%s(err '%s'), want\n%s", what,
	      cols ? cols : "(none)", got ? got : "NULL\n", err, want);
	free(got);
}

static void report_bad(const char *cols, struct report_opts o, const char *want_err)
{
	char err[256] = "";
	char *got = list_report(cols, o, "d2", err, sizeof(err));

	CHECK(!got && !strcmp(err, want_err), "-o '%s': got '%s', err '%s' (want '%s')",
	      cols ? cols : "(none)", got ? got : "a report", err, want_err);
	free(got);
}

static void test_report(void)
{
	static const char *const long_name = "a-device-name-of-forty-characters-long-x";
	struct report_opts o, sep, noh, json;
	char err[256], want[1024];
	int u;

	report_opts_init(&o);
	/* the default set; numbers right-aligned, widths from the content */
	report_ok(NULL, o, "d2",
		  "NAME  DEVICE    DEVICE-GROUP  TYPE    POLICY         GROUPS  WRAPS\n"
		  "d1    /dev/sdb  dg            cgroup  weight-iosize      12  -\n"
		  "d2    /dev/sdb  dg            cgroup  weight-time        12  -\n", "default");
	report_ok("name,policy", o, "d2",
		  "NAME  POLICY\n"
		  "d1    weight-iosize\n"
		  "d2    weight-time\n", "selected");
	report_ok("policy,name", o, "d2",
		  "POLICY         NAME\n"
		  "weight-iosize  d1\n"
		  "weight-time    d2\n", "in the order given");
	report_ok("name,open-count,name", o, "d2",
		  "NAME  OPEN\n"
		  "d1       1\n"
		  "d2       1\n", "'-' for '_', each column once");
	report_ok("+sectors,io_limit", o, "d2",
		  "NAME  DEVICE    DEVICE-GROUP  TYPE    POLICY         GROUPS  WRAPS  SIZE-MiB  IO-LIMIT\n"
		  "d1    /dev/sdb  dg            cgroup  weight-iosize      12  -         64.00       128\n"
		  "d2    /dev/sdb  dg            cgroup  weight-time        12  -          1.00       128\n",
		  "+COL");
	/* a long name widens its column, the next ones stay aligned */
	snprintf(want, sizeof(want),
		 "NAME                                      POLICY         GROUPS\n"
		 "d1                                        weight-iosize      12\n"
		 "%s  weight-time        12\n", long_name);
	report_ok("name,policy,groups", o, long_name, want, "long name");
	sep = o;
	CHECK(!report_separator_parse(&sep, ":", err, sizeof(err)), "%s", err);
	snprintf(want, sizeof(want), "NAME:POLICY:GROUPS\nd1:weight-iosize:12\n%s:weight-time:12\n",
		 long_name);
	report_ok("name,policy,groups", sep, long_name, want, "separator: no padding");
	CHECK(report_separator_parse(&sep, "", err, sizeof(err)) &&
	      !strcmp(err, "--separator must not be empty"), "empty separator: '%s'", err);
	noh = o;
	noh.noheadings = true;
	report_ok("name,policy", noh, "d2", "d1  weight-iosize\nd2  weight-time\n", "--noheadings");
	sep.noheadings = true;
	report_ok("name,policy", sep, "d2", "d1:weight-iosize\nd2:weight-time\n",
		  "--noheadings --separator");

	/* units: 131072 and 2048 sectors (64 MiB, 1 MiB), powers of 1024 (unpadded) */
	{
		static const char *const names[] = { "b", "s", "k", "m", "g" };
		static const char *const wants[] = {
			"67108864\n1048576\n", "131072\n2048\n",
			"65536.00\n1024.00\n", "64.00\n1.00\n", "0.06\n0.00\n",
		};

		for (u = 0; u < 5; u++) {
			struct report_opts uo = sep;

			CHECK(!report_units_parse(&uo, names[u], err, sizeof(err)), "%s", err);
			report_ok("sectors", uo, "d2", wants[u], names[u]);
		}
		sep.noheadings = false;
		CHECK(!report_units_parse(&sep, "s", err, sizeof(err)), "%s", err);
		report_ok("name,sectors", sep, "d2", "NAME:SIZE-SECTORS\nd1:131072\nd2:2048\n",
			  "the unit in the heading");
		CHECK(report_units_parse(&o, "K", err, sizeof(err)) &&
		      !strcmp(err, "unknown unit 'K' (b, s, k, m or g: bytes, 512-byte sectors, "
				   "KiB, MiB, GiB)"), "unit K: '%s'", err);
		CHECK(report_units_parse(&o, "", err, sizeof(err)) && o.units == -1,
		      "empty unit: '%s', units %d", err, o.units);
	}
	{
		char *t = report_unit_text(3 * 1024.0 * 1024 * 1024 / 2, RU_GIB);

		CHECK(!strcmp(t, "1.50"), "1.5 GiB: %s", t);
		free(t);
		t = report_unit_text(1536, RU_SECTORS);
		CHECK(!strcmp(t, "3"), "1536 bytes in sectors: %s", t);
		free(t);
	}
	{
		static const struct {
			uint64_t usec;
			const char *text;
		} times[] = {
			{ 0, "0us" }, { 999, "999us" }, { 1000, "1.0ms" }, { 6291, "6.3ms" },
			{ 201327, "201.3ms" }, { 999949, "999.9ms" }, { 999950, "1.0s" },
			{ 3400000, "3.4s" },
		};
		size_t i;

		for (i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
			char *t = report_usec_text(times[i].usec);

			CHECK(!strcmp(t, times[i].text), "%llu us: %s (want %s)",
			      (unsigned long long)times[i].usec, t, times[i].text);
			free(t);
		}
	}
	/* top's default sets name its columns */
	{
		static const char *const defaults[] = { TOP_DEFAULT_WEIGHT, TOP_DEFAULT_RANGE };
		struct report_opts to = o;
		struct report *r;

		for (u = 0; u < 2; u++) {
			to.columns = defaults[u];
			CHECK(!report_new("top", top_cols, top_ncols, defaults[u], &to, stdout,
					  &r, err, sizeof(err)) && r, "top's default set %d: %s", u,
			      err);
			report_free(r);
		}
	}
	/*
	 * top's latency cells (its last columns): in a unit in the text,
	 * microseconds in JSON, - and null for a group that timed none and
	 * for one without figures
	 */
	{
		static const struct group_latency timed = { 17, 32, { 0, 201327, 6291, 3400000 } };
		static const struct group_latency none = { 18, 0, { 0, 0, 0, 0 } };
		static const char *const wants[] = {
			"WAIT-P50  WAIT-P99  DEV-P50  DEV-P99\n"
			"     0us   201.3ms    6.3ms     3.4s\n"
			"       -         -        -        -\n"
			"       -         -        -        -\n",
			"[{\"wait_p50\":0,\"wait_p99\":201327,\"dev_p50\":6291,\"dev_p99\":3400000},"
			"{\"wait_p50\":null,\"wait_p99\":null,\"dev_p50\":null,\"dev_p99\":null},"
			"{\"wait_p50\":null,\"wait_p99\":null,\"dev_p50\":null,\"dev_p99\":null}]",
		};
		const struct report_col *lat_cols = &top_cols[top_ncols - LAT_NR];

		CHECK(!strcmp(lat_cols[0].name, "wait_p50") && !strcmp(lat_cols[3].name, "dev_p99"),
		      "top's last columns: %s ... %s", lat_cols[0].name, lat_cols[3].name);
		for (u = 0; u < 2; u++) {
			struct report_opts lo = o;
			struct report *r;
			char *buf = NULL;
			size_t len = 0;
			FILE *f = open_memstream(&buf, &len);

			lo.json = u;
			CHECK(!report_new("top", lat_cols, LAT_NR,
					  "wait_p50,wait_p99,dev_p50,dev_p99", &lo, f, &r, err,
					  sizeof(err)) && r, "%s", err);
			report_row(r);
			report_latency(r, &timed);
			report_row(r);
			report_latency(r, &none);
			report_row(r);
			report_latency(r, NULL);
			if (u)
				report_print_json(r, f);
			else
				report_print(r, f);
			report_free(r);
			fclose(f);
			CHECK(!strcmp(buf, wants[u]), "latency cells: got\n%s\nwant\n%s", buf,
			      wants[u]);
			free(buf);
		}
	}

	/* a row with empty cells at its end and a note (show's waiting groups) */
	{
		static const char *const seps[] = { NULL, ":" };
		static const char *const wants[] = {
			"NAME           GROUPS  POLICY\n"
			"d1                 12  weight-iosize\n"
			"a-longer-name  (no cgroup yet)\n",
			"NAME:GROUPS:POLICY\nd1:12:weight-iosize\na-longer-name::\n",
		};

		for (u = 0; u < 2; u++) {
			struct report_opts no = o;
			struct report *r;
			char *buf = NULL;
			size_t len = 0, i;
			FILE *f = open_memstream(&buf, &len);

			no.columns = "name,groups,policy";
			no.separator = seps[u];
			CHECK(!report_new("list", list_cols, list_ncols, LIST_DEFAULT, &no, f, &r,
					  err, sizeof(err)) && r, "%s", err);
			list_row(r, "d1", "weight-iosize", 0);
			report_row(r);
			report_str(r, "a-longer-name");
			for (i = 1; i < list_ncols; i++)
				report_cell(r, "", NULL);
			report_note(r, "(no cgroup yet)");
			report_print(r, f);
			report_free(r);
			fclose(f);
			CHECK(!strcmp(buf, wants[u]), "note, separator %s: got\n%swant\n%s",
			      seps[u] ? seps[u] : "none", buf, wants[u]);
			free(buf);
		}
	}

	/* bad columns: an error naming the problem, no report */
	report_bad("foo", o, "unknown column 'foo' (ioband-setup list -o help lists them)");
	report_bad("name,foo", o, "unknown column 'foo' (ioband-setup list -o help lists them)");
	report_bad("", o, "-o needs at least one column (ioband-setup list -o help lists them)");
	report_bad("+", o, "-o needs at least one column (ioband-setup list -o help lists them)");
	report_bad("name,,policy", o, "empty column name in '-o name,,policy'");
	report_bad("+name,", o, "empty column name in '-o +name,'");
	{
		char *h = list_report("help", o, "d2", err, sizeof(err));

		CHECK(h && strstr(h, "\n  device_group  the device group\n") &&
		      strstr(h, "\n  sectors       the device's size"), "-o help:\n%s", h);
		free(h);
	}

	/* JSON: the version, every column unless -o says, strings escaped */
	report_opts_init(&json);
	CHECK(!report_format_parse(&json, "json", err, sizeof(err)) && json.json, "%s", err);
	report_ok("name,wraps,sectors,suspended", json, "a\"b\\c\n",
		  "{\"report_version\":1,\"devices\":[{\"name\":\"d1\",\"wraps\":null,"
		  "\"sectors\":131072,\"suspended\":false},{\"name\":\"a\\\"b\\\\c\\n\","
		  "\"wraps\":null,\"sectors\":2048,\"suspended\":false}]}\n", "JSON");
	{
		static const char every[] =
			"{\"report_version\":1,\"devices\":[{\"name\":\"d1\",\"device\":\"/dev/sdb\","
			"\"devt\":\"8:16\",\"device_group\":\"dg\",\"type\":\"cgroup\","
			"\"policy\":\"weight-iosize\",\"groups\":12,\"wraps\":null,\"sectors\":131072,"
			"\"io_throttle\":0,\"io_limit\":128,\"token_base\":256,\"open_count\":1,"
			"\"suspended\":false},";
		char *j = list_report(NULL, json, "d2", err, sizeof(err));

		CHECK(j && !strncmp(j, every, strlen(every)), "JSON, every column: %s", j);
		free(j);
	}
	CHECK(report_format_parse(&json, "xml", err, sizeof(err)) &&
	      !strcmp(err, "unknown report format 'xml' (basic or json)"), "xml: '%s'", err);
	json.units = RU_KIB;
	report_bad("name", json, "--units, --separator and --noheadings shape the text report, "
				 "not JSON (whose sizes are always in sectors or bytes)");
}

int main(void)
{
	test_specs();
	test_values();
	test_tables();
	test_latency();
	test_opts_to_table();
	test_tab();
	test_names();
	test_pathgroups();
	test_json();
	test_report();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

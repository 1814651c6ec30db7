// SPDX-License-Identifier: GPL-2.0
/*
 * weight-time on the discrete-event device (devsim.h): shares of device
 * time, throughput, depth, and following a device that changes.  Bounds
 * are the goal's: every group within 2 points of its share of device
 * time (max-min fair where a group cannot use its share), total
 * throughput at least 95 % of the bare device's under contention and
 * 97 % for a lone group.
 */
#include <string.h>
#include "devsim.h"
#include "devsim-scen.h"
#include "unit.h"

/* @sim, set up for @sc and perhaps changed, against @sc's targets. */
static void check_scen_sim(const struct ds_scen *sc, const struct ds_sim *set)
{
	double target[DS_MAX_GROUPS], bare;
	struct ds_sim sim = *set;
	u32 i;

	ds_targets(sc, target);
	sim.bare = true;
	ds_run(&sim);
	bare = ds_util(&sim);
	sim = *set;
	ds_run(&sim);
	for (i = 0; i < sim.nr_groups; i++)
		CHECK(ds_share(&sim, i) > target[i] - 2 &&
		      ds_share(&sim, i) < target[i] + 2,
		      "%s: group %u has %.1f %% of device time for %.1f",
		      sc->name, i, ds_share(&sim, i), target[i]);
	CHECK(ds_util(&sim) >= 0.95 * bare,
	      "%s: device %.1f %% busy, bare %.1f %%", sc->name,
	      ds_util(&sim), bare);
}

/* Every scenario of devsim-scen.c. */
static void devtime_shares(void)
{
	const struct ds_scen *sc;
	struct ds_sim sim;

	for (sc = ds_scens; sc->name; sc++) {
		ds_scen_setup(sc, &sim);
		check_scen_sim(sc, &sim);
	}
}

/*
 * The 2009 case: besides half the device time each, the sequential
 * reader keeps at least 40 % of what it gets alone (it got 4.6 % in the
 * trial, each of its reads paying a seek).
 */
static void devtime_seq_batches(void)
{
	const struct ds_scen *sc;
	struct ds_sim sim;
	double alone;

	for (sc = ds_scens; sc->name && !strstr(sc->name, "seq vs random");
	     sc++)
		;
	ds_scen_setup(sc, &sim);
	alone = ds_alone_ios(&sim, 0);
	ds_run(&sim);
	CHECK(sim.g[0].ios >= 0.4 * alone,
	      "sequential reader: %llu I/Os, %.0f alone (%.1f %%)",
	      (unsigned long long)sim.g[0].ios, alone,
	      100.0 * sim.g[0].ios / alone);
}

/* A lone group on each profile: at least 97 % of the bare device. */
static void devtime_lone_group(void)
{
	static const char *const profiles[] = { "ssd", "nvme", "disk" };
	u32 i;

	for (i = 0; i < 3; i++) {
		struct ds_sim sim;
		u64 bare;

		ds_setup(&sim, profiles[i], 1);
		sim.g[0].procs = 8;
		sim.g[0].iodepth = 8;
		sim.bare = true;
		ds_run(&sim);
		bare = sim.total_ios;
		sim.bare = false;
		ds_run(&sim);
		CHECK(sim.total_ios >= 0.97 * bare,
		      "%s: %llu I/Os alone under weight-time, %llu bare",
		      profiles[i], (unsigned long long)sim.total_ios,
		      (unsigned long long)bare);
	}
}

/*
 * Depth control finds what the device needs for full throughput (its
 * channels, on the model device) and io_limit caps it, and the two
 * groups share the device equally.
 */
static void devtime_depth(void)
{
	static const struct {
		const char *profile;
		u32 io_limit, lo, hi;
	} cases[] = {
		{ "ssd", 128, 4, 5 },
		{ "nvme", 128, 32, 36 },
		{ "disk", 128, 1, 1 },
		{ "nvme", 8, 8, 8 },
	};
	u32 i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct ds_sim sim;

		/* two groups: a lone group has no depth to keep */
		ds_setup(&sim, cases[i].profile, 2);
		sim.conf.io_limit = cases[i].io_limit;
		sim.g[0].procs = sim.g[1].procs = 16;
		sim.g[0].iodepth = sim.g[1].iodepth = 8;
		sim.run_ns = sim.warmup_ns + 2000 * 1000 * 1000ULL;
		ds_run(&sim);
		CHECK(sim.depth >= cases[i].lo && sim.depth <= cases[i].hi,
		      "%s, io_limit %u: depth %u after %llu ms, not %u-%u",
		      cases[i].profile, cases[i].io_limit, sim.depth,
		      (unsigned long long)(sim.run_ns / 1000000),
		      cases[i].lo, cases[i].hi);
		/* the group that came first went io_limit deep alone */
		CHECK(ds_share(&sim, 0) > 48 && ds_share(&sim, 0) < 52,
		      "%s, io_limit %u: first group %.1f %% of device time, not 50",
		      cases[i].profile, cases[i].io_limit, ds_share(&sim, 0));
	}
}

/*
 * Writes get twice as expensive 3 s into the run: within 5 s every
 * group's share of device time is back within 2 points of its target.
 */
static void devtime_follows_device(void)
{
	static const double target[] = { 400 / 7.0, 200 / 7.0, 100 / 7.0 };
	const u64 s = 1000 * 1000 * 1000ULL, period = s / 2;
	struct ds_sim sim;
	u32 i, k;

	ds_setup(&sim, "ssd", 3);
	for (i = 0; i < 3; i++) {
		sim.g[i].weight = 400 >> i;
		sim.g[i].iodepth = 4;
	}
	sim.g[2].write = true;
	sim.warmup_ns = 0;
	sim.run_ns = 10 * s + period;
	sim.sample_ns = period;
	sim.change_at_ns = 3 * s;
	sim.changed = sim.prof;
	sim.changed.base_ns[IOBM_WRITE] *= 2;
	sim.changed.per_kib_ns[IOBM_WRITE] *= 2;
	ds_run(&sim);
	/* the half-seconds from 1 s to 3 s, and from the change + 5 s on */
	for (k = 2; k * period < sim.run_ns - period; k++) {
		u64 total = 0;

		if (k * period >= sim.change_at_ns &&
		    k * period < sim.change_at_ns + 5 * s)
			continue;
		for (i = 0; i < 3; i++)
			total += sim.g[i].series[k];
		for (i = 0; i < 3; i++) {
			double got = 100.0 * sim.g[i].series[k] / total;

			CHECK(got > target[i] - 2 && got < target[i] + 2,
			      "%.1f s: group %u has %.1f %% for %.1f",
			      k * 0.5, i, got, target[i]);
		}
	}
}

/*
 * Device time moves the clock fast (a second of a weight-1 group's is
 * 2^53): a run that starts 2^45 short of 2^64 wraps within its first
 * second, and every group still gets its share.
 */
static void devtime_clock_wraps(void)
{
	const struct ds_scen *sc = &ds_scens[0];
	double target[DS_MAX_GROUPS];
	struct ds_sim sim;
	u32 i;

	ds_targets(sc, target);
	ds_scen_setup(sc, &sim);
	sim.vclock_start = -(1ULL << 45);
	ds_run(&sim);
	CHECK(sim.vclock_wraps == 1, "the clock wrapped %llu times",
	      (unsigned long long)sim.vclock_wraps);
	for (i = 0; i < sim.nr_groups; i++)
		CHECK(ds_share(&sim, i) > target[i] - 2 &&
		      ds_share(&sim, i) < target[i] + 2,
		      "group %u has %.1f %% of device time for %.1f", i,
		      ds_share(&sim, i), target[i]);
}

/*
 * ioband's worker takes 20 us to bring a released bio to the device (a
 * fifth of a read on the ssd profile): depth control adds the depth that
 * hides it, and the shares hold.
 */
static void devtime_worker_latency(void)
{
	struct ds_sim sim;

	ds_scen_setup(&ds_scens[0], &sim);
	sim.release_ns = 20000;
	check_scen_sim(&ds_scens[0], &sim);
}

/*
 * iocost's linear model of a profile without seeks, as the benchmarks
 * write it into io.cost.model (bench/vm/70-devtime.sh): a page costs
 * 4 KiB of transfer over the channels, a 4 KiB I/O its base and
 * transfer over the channels.
 */
static void true_model(const struct iobm_profile *p,
		       struct ioband_cost_model *m)
{
	u32 w;

	for (w = 0; w < 2; w++) {
		u64 pk = p->per_kib_ns[w], base = p->base_ns[w];
		u64 iops = p->channels * 1000000000ULL / (base + 4 * pk);

		m->param[w * 3] = p->channels * 1024 * 1000000000ULL / pk;
		m->param[w * 3 + 1] = iops;
		m->param[w * 3 + 2] = iops;
	}
}

/*
 * A cost model given by the user: on every scenario without seeks (the
 * linear model has none), the true model gives every group its share of
 * device time within 2 points, as the estimator does.
 */
static void devtime_user_model(void)
{
	const struct ds_scen *sc;
	struct ds_sim sim;
	u32 n = 0;

	for (sc = ds_scens; sc->name; sc++) {
		if (strcmp(sc->profile, "ssd") && strcmp(sc->profile, "nvme"))
			continue;
		ds_scen_setup(sc, &sim);
		true_model(&sim.prof, &sim.conf.model);
		check_scen_sim(sc, &sim);
		n++;
	}
	CHECK(n >= 6, "only %u scenarios without seeks", n);
}

/*
 * The model, not what ioband measures, says what a bio costs: a model
 * that takes the writes of the ssd profile (3.5 times a read) for reads
 * gives the writing group of weight 1 of 4:2:1 its weight's share of
 * I/Os, and so far more than its share of device time (37 % where the
 * learned costs give it 14.3).
 */
static void devtime_user_model_rules(void)
{
	const struct ds_scen *sc = &ds_scens[0];
	struct ds_sim sim;
	u32 i;

	ds_scen_setup(sc, &sim);
	true_model(&sim.prof, &sim.conf.model);
	for (i = 0; i < 3; i++)
		sim.conf.model.param[3 + i] = sim.conf.model.param[i];
	ds_run(&sim);
	CHECK(ds_share(&sim, 2) > 30,
	      "the writers have %.1f %% of device time, want over 30",
	      ds_share(&sim, 2));
	CHECK(sim.g[2].ios * 7 > (sim.g[0].ios + sim.g[1].ios + sim.g[2].ios) *
				 0.95,
	      "the writers have %llu of %llu I/Os, want a seventh",
	      (unsigned long long)sim.g[2].ios,
	      (unsigned long long)(sim.g[0].ios + sim.g[1].ios +
				   sim.g[2].ios));
}

/*
 * The coefficients as iocost derives them, the remainder carried so that
 * charges add up to the model's time to the unit, the one-second bound,
 * and no correction at completion: the model decides what a bio costs.
 */
static void model_charge_arithmetic(void)
{
	static struct ioband_entity *heap[IOBAND_HEAP_SLOTS(1)];
	struct ioband_dg_conf conf;
	struct ioband_entity e;
	struct ioband_sched s;
	u64 sum = 0, vtime;
	u32 i, cls, cost;

	ioband_dg_conf_init(&conf);
	conf.policy = IOBAND_POLICY_WEIGHT_TIME;
	/* reads: 10 us a page, 20 us a random 4 KiB, 10 us a sequential one */
	conf.model = (struct ioband_cost_model){ { 409600000, 100000, 50000,
						   /* writes: 1 ms a page */
						   4096000, 2000, 1 } };
	ioband_sched_init(&s, &conf, heap, 1);
	CHECK(s.model.given && s.model.page_ns[0] == 10000 &&
	      s.model.io_ns[0] == 10000 && s.model.io_ns[1] == 0,
	      "reads: page %u, random %u, sequential %u", s.model.page_ns[0],
	      s.model.io_ns[0], s.model.io_ns[1]);
	CHECK(s.model.page_ns[1] == 1000000 && s.model.io_ns[2] == 999000000 &&
	      s.model.io_ns[3] == 0, "writes: page %u, random %u, sequential %u",
	      s.model.page_ns[1], s.model.io_ns[2], s.model.io_ns[3]);
	ioband_entity_init(&s, &e, 100);
	/* 512 random 4 KiB reads of 20000 ns: 20000 units, not 512 * 39 */
	for (i = 0; i < 512; i++) {
		cls = ioband_time_class(&e, false, 1000000 * (i + 1), 8);
		sum += ioband_time_charge(&s, &e, cls, 8);
	}
	CHECK(sum == 20000, "512 reads of 20 us charged %llu units",
	      (unsigned long long)sum);
	/* sequential 64 KiB: 16 pages; a 1 MiB random write: a second */
	cls = ioband_time_class(&e, false, e.next_sector, 128);
	cost = ioband_time_charge(&s, &e, cls, 128);
	CHECK(cost == 160000 / 512 || cost == 160000 / 512 + 1,
	      "64 KiB sequential read: %u units", cost);
	cls = ioband_time_class(&e, true, 7, 2048);
	cost = ioband_time_charge(&s, &e, cls, 2048);
	CHECK(cost == 1000000000 / 512 || cost == 1000000000 / 512 + 1,
	      "1 MiB write: %u units, want a second's", cost);
	/* completion moves nothing: the bio pays what the model said */
	CHECK(ioband_sched_start(&s, &e, cost, false, 1), "lone group held");
	vtime = e.vtime;
	ioband_sched_complete_timed(&s, &e, cls, cost, 5000, false, 2);
	CHECK(e.vtime == vtime, "completion moved the group's time by %lld",
	      (long long)(e.vtime - vtime));
	conf.model = (struct ioband_cost_model){ };
	ioband_sched_set_conf(&s, &conf);
	CHECK(!s.model.given, "auto: still given");
	CHECK(ioband_sched_start(&s, &e, cost, false, 3), "lone group held");
	vtime = e.vtime;
	ioband_sched_complete_timed(&s, &e, cls, cost, 5000, false, 4);
	CHECK(e.vtime != vtime, "learned costs: completion corrected nothing");
}

/* The scenario whose name contains @part (a failed check if none). */
static const struct ds_scen *scen_named(const char *part)
{
	const struct ds_scen *sc;

	for (sc = ds_scens; sc->name; sc++)
		if (strstr(sc->name, part))
			return sc;
	CHECK(false, "no scenario named '... %s ...'", part);
	return NULL;
}

/*
 * A group of one process keeping 4 bios in flight, which it sends again
 * 20 us after each completes (a sixth of a read on the ssd profile),
 * against groups of 4 and 16 processes that always hold bios: without
 * keeping a completed bio's place for the group's next one, the others
 * took every place it left and it got 50.6 % for 57.1.
 */
static void devtime_parallel_pauses(void)
{
	const struct ds_scen *sc = scen_named("1x4 / 4x4 / 16x4");
	struct ds_sim sim;
	u32 i;

	if (!sc)
		return;
	ds_scen_setup(sc, &sim);
	for (i = 0; i < sim.nr_groups; i++)
		sim.g[i].think_ns = 20000;
	check_scen_sim(sc, &sim);
}

/*
 * The group of 16 processes runs alone first, io_limit (128) bios deep,
 * most of them queued in the device; the others join 1 to 10 ms later,
 * while those bios are still in flight.  Their time in flight is mostly
 * queueing, not device time, and teaches nothing about the device: each
 * group is within 2 points of its share over the 2 s starting 200 ms
 * after the join.  (Charged its queueing, the group got nothing for 0.3
 * to 1.2 s, and the depth learned from it left the device half idle.)
 */
static void devtime_join_behind_deep(void)
{
	static const u64 join_ms[] = { 1, 3, 10 };
	const struct ds_scen *sc = scen_named("1x32 / 4x32 / 16x32");
	struct ds_sim sim;
	u32 i;

	if (!sc)
		return;
	for (i = 0; i < ARRAY_SIZE(join_ms); i++) {
		u64 join = join_ms[i] * 1000 * 1000;

		ds_scen_setup(sc, &sim);
		sim.g[0].start_ns = join;
		sim.g[1].start_ns = join;
		sim.warmup_ns = join + 200 * 1000 * 1000;
		sim.run_ns = sim.warmup_ns + 2000 * 1000 * 1000ULL;
		check_scen_sim(sc, &sim);
	}
}

void devtime_tests(void)
{
	RUN(devtime_join_behind_deep);
	RUN(devtime_parallel_pauses);
	RUN(model_charge_arithmetic);
	RUN(devtime_user_model);
	RUN(devtime_user_model_rules);
	RUN(devtime_worker_latency);
	RUN(devtime_clock_wraps);
	RUN(devtime_depth);
	RUN(devtime_lone_group);
	RUN(devtime_follows_device);
	RUN(devtime_seq_batches);
	RUN(devtime_shares);
}

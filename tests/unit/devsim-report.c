// SPDX-License-Identifier: GPL-2.0
/*
 * The estimator comparison: every scenario of devsim-scen.h under the old
 * policies and under weight-time with each way of learning costs, as a
 * table of target against achieved shares of device time, throughput
 * against the bare device.  make -C tests/unit report
 */
#include <stdio.h>
#include <string.h>
#include "devsim.h"
#include "devsim-scen.h"

static const char *const charge_names[DS_NR_CHARGES] = {
	[DS_TABLE_INFLIGHT] = "table+inflight",
	[DS_INFLIGHT] = "inflight",
	[DS_PS] = "ps-clock",
	[DS_TABLE_PS] = "table+ps-clock",
	[DS_TABLE_ONLY] = "table, no corr.",
	[DS_GAP] = "gap",
};

static void row(const char *name, struct ds_sim *sim, const double *alone,
		double bare_util)
{
	u32 i;

	ds_run(sim);
	printf("  %-16s", name);
	for (i = 0; i < sim->nr_groups; i++)
		printf(" %5.1f", ds_share(sim, i));
	printf("  |");
	for (i = 0; i < sim->nr_groups; i++)
		printf(" %5.1f", alone[i] ?
		       100.0 * sim->g[i].ios / alone[i] : 0);
	printf("  | util %5.1f %% (bare %5.1f)", ds_util(sim), bare_util);
	if (!sim->bare && sim->conf.policy == IOBAND_POLICY_WEIGHT_TIME)
		printf("  depth %u", sim->depth);
	printf("\n");
}

int main(void)
{
	const struct ds_scen *sc;

	for (sc = ds_scens; sc->name; sc++) {
		struct ds_sim sim, base;
		double alone[DS_MAX_GROUPS], target[DS_MAX_GROUPS], bare_util;
		u32 i, c;

		ds_scen_setup(sc, &base);
		ds_targets(sc, target);
		printf("%s\n  %-16s", sc->name, "target");
		for (i = 0; i < base.nr_groups; i++)
			printf(" %5.1f", target[i]);
		printf("  | %% of alone throughput\n");
		for (i = 0; i < base.nr_groups; i++)
			alone[i] = ds_alone_ios(&base, i);
		sim = base;
		sim.bare = true;
		ds_run(&sim);
		bare_util = ds_util(&sim);
		row("bare", &sim, alone, bare_util);
		sim = base;
		sim.conf.policy = IOBAND_POLICY_WEIGHT;
		row("weight", &sim, alone, bare_util);
		sim = base;
		sim.conf.policy = IOBAND_POLICY_WEIGHT_IOSIZE;
		row("weight-iosize", &sim, alone, bare_util);
		for (c = 0; c < DS_NR_CHARGES; c++) {
			sim = base;
			sim.charge = c;
			row(charge_names[c], &sim, alone, bare_util);
		}
	}
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The scenarios of the weight-time targets on the discrete-event device,
 * shared by the unit tests (test_devtime.c) and the comparison report
 * (devsim-report.c).
 */
#ifndef IOBAND_DEVSIM_SCEN_H
#define IOBAND_DEVSIM_SCEN_H

#include "devsim.h"

struct ds_scen_group {
	u32 weight, procs, iodepth, kib;
	bool write, seq;
};

struct ds_scen {
	const char *name;
	const char *profile;
	u64 warmup_ms, run_ms;	/* 0: ds_setup()'s */
	u32 nr_groups;
	struct ds_scen_group g[DS_MAX_GROUPS];
};

/* The scenarios, ending with one whose name is NULL. */
extern const struct ds_scen ds_scens[];
void ds_scen_setup(const struct ds_scen *sc, struct ds_sim *sim);

/*
 * Each group's fair share of device time in percent: by weight, except
 * that a group that cannot use its share alone gets what it uses alone
 * and the rest is shared among the others (max-min fairness).
 */
void ds_targets(const struct ds_scen *sc, double *target);
/* I/Os group @i completes alone on the bare device with @sim's settings. */
double ds_alone_ios(const struct ds_sim *sim, u32 i);

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A discrete-event model of ioband over a device, driving the real
 * scheduling arithmetic of drivers/md/dm-ioband-policy.c.
 */
#ifndef IOBAND_SIM_H
#define IOBAND_SIM_H

#include <linux/dm-ioband.h>

#define SIM_MAX_GROUPS 8

struct sim_group {
	u32 weight;
	u32 procs;		/* processes, each with one I/O outstanding */
	u32 io_kb;		/* size of each I/O */
	u64 think_us;		/* pause between a completion and the next I/O */
	u32 min_kbps;		/* range-bw */
	u32 max_kbps;
	/* results */
	u64 ios;
	u64 kb;
	u64 held;
};

struct sim {
	struct ioband_dg_conf conf;
	u32 depth;		/* device queue depth */
	u64 base_us;		/* per-I/O service time ... */
	u64 per_kb_ns;		/* ... plus this per KiB */
	u64 run_us;
	u64 warmup_us;
	u64 vclock_start;	/* to test wrap-around */
	u32 nr_groups;
	struct sim_group g[SIM_MAX_GROUPS];
	/* results */
	u64 total_ios;
	u64 busy_us;		/* time the device had at least one I/O */
};

void sim_run(struct sim *sim);
/* Device throughput with no ioband, in I/Os, for the same groups. */
u64 sim_run_bare(struct sim *sim);

#endif

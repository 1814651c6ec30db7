/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A discrete-event model device (the arithmetic of tests/modeldev/model.h:
 * channels serving a FIFO device queue of qdepth requests) under ioband,
 * driving the real policy code of drivers/md/dm-ioband-policy.c as map()
 * and end_io() do, with dispatch and completion times.  The device knows
 * the ground truth the policy can only estimate: how long each group kept
 * a channel busy.
 */
#ifndef IOBAND_DEVSIM_H
#define IOBAND_DEVSIM_H

#include <linux/dm-ioband.h>
#include "../modeldev/model.h"

#define DS_MAX_GROUPS	4
#define DS_MAX_SAMPLES	64

/*
 * How weight-time learns what a bio cost.  DS_TABLE_INFLIGHT is what the
 * kernel does; the others are the candidates it was chosen among.
 */
enum ds_charge {
	DS_TABLE_INFLIGHT,	/* class table charged at dispatch, corrected
				 * to the bio's time in flight at completion */
	DS_INFLIGHT,		/* nothing at dispatch, time in flight after */
	DS_PS,			/* nothing at dispatch, then the integral of
				 * dt / bios in flight over the bio's life */
	DS_TABLE_PS,		/* the table, corrected to DS_PS's figure */
	DS_TABLE_ONLY,		/* the table learned from time in flight,
				 * no correction */
	DS_GAP,			/* nothing at dispatch, then the time since
				 * the previous completion (or dispatch) */
	DS_NR_CHARGES
};

struct ds_group {
	u32 weight;
	u32 procs;		/* processes ... */
	u32 iodepth;		/* ... each with this many I/Os outstanding */
	u32 kib;		/* I/O size */
	bool write;
	bool seq;		/* each process reads or writes a stream */
	u64 think_ns;		/* between a completion and the next I/O */
	u64 start_ns;		/* when its processes start */
	u32 parent;		/* 1 + the index of its parent group, 0: none */
	/* results over the measured part of the run */
	u64 ios;
	u64 busy_ns;		/* channel time its I/Os took: the truth */
	u64 held;		/* I/Os ioband held */
	u64 series[DS_MAX_SAMPLES];	/* busy_ns per sample_ns */
};

struct ds_sim {
	struct iobm_profile prof;
	struct ioband_dg_conf conf;
	bool bare;		/* no ioband: straight to the device */
	enum ds_charge charge;
	u32 qdepth;		/* the device queue's tags */
	u64 release_ns;		/* a held bio's way from release to device */
	u64 run_ns;
	u64 warmup_ns;
	u64 sample_ns;		/* series' period, 0: none */
	u64 change_at_ns;	/* then the device becomes @changed, 0: never */
	struct iobm_profile changed;
	u64 vclock_start;	/* the scheduler's clock at the start */
	u32 nr_groups;
	struct ds_group g[DS_MAX_GROUPS];
	/* results */
	u64 vclock_wraps;	/* times the clock wrapped past 2^64 */
	u64 busy_ns;		/* channel time used, all groups */
	u64 total_ios;
	u32 depth;		/* the depth weight-time settled on */
};

/* A run with the defaults: 64 tags, 4 s measured after 1 s. */
void ds_setup(struct ds_sim *sim, const char *profile, u32 nr_groups);
void ds_run(struct ds_sim *sim);
/* The share of channel time @i used, in percent. */
double ds_share(const struct ds_sim *sim, u32 i);
/* Channel time used over what the channels could give, in percent. */
double ds_util(const struct ds_sim *sim);

#endif

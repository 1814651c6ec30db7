// SPDX-License-Identifier: GPL-2.0
/* The scenarios of devsim-scen.h. */
#include <string.h>
#include "devsim-scen.h"

static void group(struct ds_sim *sim, u32 i, u32 weight, u32 procs,
		  u32 iodepth, u32 kib, bool write, bool seq)
{
	struct ds_group *g = &sim->g[i];

	g->weight = weight;
	g->procs = procs;
	g->iodepth = iodepth;
	g->kib = kib;
	g->write = write;
	g->seq = seq;
}

/* ssd, 4:2:1, each group 4 processes at depth 4, 4 KiB random. */
static void ssd_421(struct ds_sim *sim, bool write_low, bool write_high)
{
	ds_setup(sim, "ssd", 3);
	group(sim, 0, 400, 4, 4, 4, write_high, false);
	group(sim, 1, 200, 4, 4, 4, false, false);
	group(sim, 2, 100, 4, 4, 4, write_low, false);
}

static void ssd_write_low(struct ds_sim *sim)
{
	ssd_421(sim, true, false);
}

static void ssd_write_high(struct ds_sim *sim)
{
	ssd_421(sim, false, true);
}

/* The 2009 case: a sequential and a random reader, psync, on a disk. */
static void disk_seq_random(struct ds_sim *sim)
{
	ds_setup(sim, "disk", 2);
	sim->run_ns = 11 * 1000 * 1000 * 1000ULL;
	group(sim, 0, 100, 1, 1, 4, false, true);
	group(sim, 1, 100, 1, 1, 4, false, false);
}

/* 4 KiB against 256 KiB readers, equal weights. */
static void ssd_small_large(struct ds_sim *sim)
{
	ds_setup(sim, "ssd", 2);
	group(sim, 0, 100, 4, 4, 4, false, false);
	group(sim, 1, 100, 4, 4, 256, false, false);
}

/*
 * 320 KiB against 1 MiB readers: one size class (the largest), so only
 * the correction at completion tells them apart.
 */
static void ssd_large_larger(struct ds_sim *sim)
{
	ds_setup(sim, "ssd", 2);
	group(sim, 0, 100, 4, 2, 320, false, false);
	group(sim, 1, 100, 4, 2, 1024, false, false);
}

/*
 * Uneven depth: the fewest submitters with the highest weight, every
 * group able to keep the device busy alone.
 */
static void ssd_uneven_depth(struct ds_sim *sim)
{
	ds_setup(sim, "ssd", 3);
	group(sim, 0, 400, 1, 8, 4, false, false);
	group(sim, 1, 200, 4, 4, 4, false, false);
	group(sim, 2, 100, 16, 32, 4, false, false);
}

/* The same, but the heavy group's one psync process cannot. */
static void ssd_uneven_psync(struct ds_sim *sim)
{
	ds_setup(sim, "ssd", 3);
	group(sim, 0, 400, 1, 1, 4, false, false);
	group(sim, 1, 200, 4, 4, 4, false, false);
	group(sim, 2, 100, 16, 32, 4, false, false);
}

static void nvme_write_low(struct ds_sim *sim)
{
	ds_setup(sim, "nvme", 3);
	sim->warmup_ns = 500 * 1000 * 1000ULL;
	sim->run_ns = 1500 * 1000 * 1000ULL;
	group(sim, 0, 400, 4, 16, 4, false, false);
	group(sim, 1, 200, 4, 16, 4, false, false);
	group(sim, 2, 100, 4, 16, 4, true, false);
}

static void nvme_uneven_depth(struct ds_sim *sim)
{
	ds_setup(sim, "nvme", 3);
	sim->warmup_ns = 500 * 1000 * 1000ULL;
	sim->run_ns = 1500 * 1000 * 1000ULL;
	group(sim, 0, 400, 1, 32, 4, false, false);
	group(sim, 1, 200, 4, 16, 4, false, false);
	group(sim, 2, 100, 16, 32, 4, true, false);
}

/* Writes against reads on a disk, 4:1, random. */
static void disk_write_high(struct ds_sim *sim)
{
	ds_setup(sim, "disk", 2);
	group(sim, 0, 400, 4, 1, 64, true, false);
	group(sim, 1, 100, 4, 1, 4, false, false);
}

const struct ds_scen ds_scens[] = {
	{ "ssd 4:2:1, writes in the lowest", ssd_write_low },
	{ "ssd 4:2:1, writes in the highest", ssd_write_high },
	{ "disk 1:1, seq vs random psync readers", disk_seq_random },
	{ "ssd 1:1, 4 KiB vs 256 KiB readers", ssd_small_large },
	{ "ssd 1:1, 320 KiB vs 1 MiB readers", ssd_large_larger },
	{ "ssd 4:2:1, 1x8 / 4x4 / 16x32 submitters", ssd_uneven_depth },
	{ "ssd 4:2:1, 1 psync / 4x4 / 16x32 (max-min)", ssd_uneven_psync },
	{ "nvme 4:2:1, writes in the lowest", nvme_write_low },
	{ "nvme 4:2:1, 1x32 / 4x16 / 16x32 writers", nvme_uneven_depth },
	{ "disk 4:1, 64 KiB writes vs 4 KiB reads", disk_write_high },
	{ NULL, NULL }
};

double ds_alone_ios(const struct ds_sim *sim, u32 i)
{
	static struct ds_sim one;
	u32 j;

	one = *sim;
	one.bare = true;
	for (j = 0; j < one.nr_groups; j++)
		if (j != i)
			one.g[j].procs = 0;
	ds_run(&one);
	return one.g[i].ios;
}

void ds_targets(const struct ds_scen *sc, double *target)
{
	static struct ds_sim sim;
	double cap[DS_MAX_GROUPS], left = 100;
	bool fixed[DS_MAX_GROUPS] = { false };
	u32 i, n, round;

	sc->setup(&sim);
	n = sim.nr_groups;
	/* what each group uses alone, in percent of the channels' time */
	for (i = 0; i < n; i++) {
		static struct ds_sim one;
		u32 j;

		one = sim;
		one.bare = true;
		for (j = 0; j < n; j++)
			if (j != i)
				one.g[j].procs = 0;
		ds_run(&one);
		cap[i] = ds_util(&one);
	}
	/* water-filling: fix the groups whose demand is below their share */
	for (round = 0; round < n; round++) {
		double w = 0;
		bool changed = false;

		for (i = 0; i < n; i++)
			if (!fixed[i])
				w += sim.g[i].weight;
		for (i = 0; i < n; i++) {
			if (fixed[i])
				continue;
			target[i] = left * sim.g[i].weight / w;
			if (cap[i] < target[i] - 1) {
				target[i] = cap[i];
				fixed[i] = true;
				left -= cap[i];
				changed = true;
				break;
			}
		}
		if (!changed)
			break;
	}
}

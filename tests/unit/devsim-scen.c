// SPDX-License-Identifier: GPL-2.0
/* The scenarios of devsim-scen.h. */
#include <string.h>
#include "devsim-scen.h"

#define MS 1000000ULL

/*
 * Reads are 4 KiB and random, unless said.  Each group: weight, processes,
 * I/Os each keeps outstanding, KiB, writes, sequential.
 */
const struct ds_scen ds_scens[] = {
	{ "ssd 4:2:1, writes in the lowest", "ssd", 0, 0, 3, {
		{ 400, 4, 4, 4, false, false },
		{ 200, 4, 4, 4, false, false },
		{ 100, 4, 4, 4, true, false } } },
	{ "ssd 4:2:1, writes in the highest", "ssd", 0, 0, 3, {
		{ 400, 4, 4, 4, true, false },
		{ 200, 4, 4, 4, false, false },
		{ 100, 4, 4, 4, false, false } } },
	/* the 2009 case: a sequential and a random reader, psync */
	{ "disk 1:1, seq vs random psync readers", "disk", 0, 11000, 2, {
		{ 100, 1, 1, 4, false, true },
		{ 100, 1, 1, 4, false, false } } },
	{ "ssd 1:1, 4 KiB vs 256 KiB readers", "ssd", 0, 0, 2, {
		{ 100, 4, 4, 4, false, false },
		{ 100, 4, 4, 256, false, false } } },
	/* one size class (the largest): only the correction tells them apart */
	{ "ssd 1:1, 320 KiB vs 1 MiB readers", "ssd", 0, 0, 2, {
		{ 100, 4, 2, 320, false, false },
		{ 100, 4, 2, 1024, false, false } } },
	/* the fewest submitters with the highest weight, each able alone */
	{ "ssd 4:2:1, 1x8 / 4x4 / 16x32 submitters", "ssd", 0, 0, 3, {
		{ 400, 1, 8, 4, false, false },
		{ 200, 4, 4, 4, false, false },
		{ 100, 16, 32, 4, false, false } } },
	/* the benchmark's depth cases: 1, 4 and 16 jobs, each D in flight */
	{ "ssd 4:2:1, 1x4 / 4x4 / 16x4 submitters", "ssd", 0, 0, 3, {
		{ 400, 1, 4, 4, false, false },
		{ 200, 4, 4, 4, false, false },
		{ 100, 16, 4, 4, false, false } } },
	{ "ssd 4:2:1, 1x8 / 4x8 / 16x8 submitters", "ssd", 0, 0, 3, {
		{ 400, 1, 8, 4, false, false },
		{ 200, 4, 8, 4, false, false },
		{ 100, 16, 8, 4, false, false } } },
	{ "ssd 4:2:1, 1x32 / 4x32 / 16x32 submitters", "ssd", 0, 0, 3, {
		{ 400, 1, 32, 4, false, false },
		{ 200, 4, 32, 4, false, false },
		{ 100, 16, 32, 4, false, false } } },
	/* the same, but the heavy group's one psync process cannot */
	{ "ssd 4:2:1, 1 psync / 4x4 / 16x32 (max-min)", "ssd", 0, 0, 3, {
		{ 400, 1, 1, 4, false, false },
		{ 200, 4, 4, 4, false, false },
		{ 100, 16, 32, 4, false, false } } },
	{ "nvme 4:2:1, writes in the lowest", "nvme", 500, 1500, 3, {
		{ 400, 4, 16, 4, false, false },
		{ 200, 4, 16, 4, false, false },
		{ 100, 4, 16, 4, true, false } } },
	{ "nvme 4:2:1, 1x32 / 4x16 / 16x32 writers", "nvme", 500, 1500, 3, {
		{ 400, 1, 32, 4, false, false },
		{ 200, 4, 16, 4, false, false },
		{ 100, 16, 32, 4, true, false } } },
	{ "disk 4:1, 64 KiB writes vs 4 KiB reads", "disk", 0, 0, 2, {
		{ 400, 4, 1, 64, true, false },
		{ 100, 4, 1, 4, false, false } } },
	{ NULL }
};

void ds_scen_setup(const struct ds_scen *sc, struct ds_sim *sim)
{
	u32 i;

	ds_setup(sim, sc->profile, sc->nr_groups);
	if (sc->warmup_ms)
		sim->warmup_ns = sc->warmup_ms * MS;
	if (sc->run_ms)
		sim->run_ns = sc->run_ms * MS;
	for (i = 0; i < sc->nr_groups; i++) {
		const struct ds_scen_group *sg = &sc->g[i];
		struct ds_group *g = &sim->g[i];

		g->weight = sg->weight;
		g->procs = sg->procs;
		g->iodepth = sg->iodepth;
		g->kib = sg->kib;
		g->write = sg->write;
		g->seq = sg->seq;
	}
}

/* @sim's group @i alone on the bare device. */
static const struct ds_sim *run_alone(const struct ds_sim *sim, u32 i)
{
	static struct ds_sim one;
	u32 j;

	one = *sim;
	one.bare = true;
	for (j = 0; j < one.nr_groups; j++)
		if (j != i)
			one.g[j].procs = 0;
	ds_run(&one);
	return &one;
}

double ds_alone_ios(const struct ds_sim *sim, u32 i)
{
	return run_alone(sim, i)->g[i].ios;
}

void ds_targets(const struct ds_scen *sc, double *target)
{
	static struct ds_sim sim;
	double cap[DS_MAX_GROUPS], left = 100;
	bool fixed[DS_MAX_GROUPS] = { false };
	u32 i, n, round;

	ds_scen_setup(sc, &sim);
	n = sim.nr_groups;
	/* what each group uses alone, in percent of the channels' time */
	for (i = 0; i < n; i++)
		cap[i] = ds_util(run_alone(&sim, i));
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

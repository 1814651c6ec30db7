// SPDX-License-Identifier: GPL-2.0
/*
 * ioband_sched_start() has a path of its own for a bio that finds the
 * device group empty (ioband_sched_alone()).  This program drives the
 * scheduler with seeded random arrivals, completions, releases, weight
 * changes and clock wraps, and prints, for every run, a hash of the
 * scheduler's whole visible state after every step and how often the
 * empty case came up.  The Makefile builds it twice, once with that path
 * compiled out (IOBAND_TEST_NO_ALONE); tests/unit/check requires the two
 * outputs to be the same and the empty case to have come up.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/dm-ioband.h>

#define NR_GROUPS	4
#define MAX_HELD	64
#define RUNS		400
#define STEPS		4000

static u64 rng_state;

static u32 rnd(u32 n)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (u32)(rng_state >> 33) % n;
}

static u64 hash;

static void mix(u64 v)
{
	int i;

	for (i = 0; i < 8; i++) {
		hash ^= (v >> (i * 8)) & 0xff;
		hash *= 1099511628211ULL;
	}
}

struct group {
	struct ioband_entity ent;
	u32 held_cost[MAX_HELD];	/* costs of its held bios, FIFO */
	u32 held_head, nr_held;
};

static struct ioband_sched s;
static struct ioband_entity *heap[IOBAND_HEAP_SLOTS(NR_GROUPS)];
static struct group grp[NR_GROUPS];
static u64 now;

static u32 group_of(const struct ioband_entity *e)
{
	u32 i = 0;

	while (&grp[i].ent != e)
		i++;
	return i;
}

static void mix_state(void)
{
	int i;

	mix(s.vclock);
	mix(s.vclock_wraps);
	mix(s.vclock_owed);
	mix(s.active_weight);
	mix(s.nr_active);
	mix(s.nr_inflight);
	mix(s.heap_len);
	mix(s.antic ? group_of(s.antic) + 1 : 0);
	for (i = 0; i < NR_GROUPS; i++) {
		struct ioband_entity *e = &grp[i].ent;

		mix(e->vtime);
		mix(e->vtime_epoch);
		mix(e->active | e->parallel << 1);
		mix(e->nr_inflight);
		mix(e->nr_queued);
		mix(e->weight);
	}
}

static void release(void)
{
	struct ioband_entity *e;
	u64 wake_at;

	while ((e = ioband_sched_next(&s, now, &wake_at))) {
		struct group *g = &grp[group_of(e)];

		ioband_sched_dispatch(&s, e, g->held_cost[g->held_head], true,
				      false);
		g->held_head = (g->held_head + 1) % MAX_HELD;
		g->nr_held--;
		mix(group_of(e));
	}
	mix(wake_at);
}

static void arrive(struct group *g, u64 *alone)
{
	struct ioband_entity *e = &g->ent;
	bool bypass = !rnd(16), went;
	u32 cost = 8 << rnd(s.conf.policy == IOBAND_POLICY_WEIGHT ? 4 : 10);

	if (g->nr_held == MAX_HELD)
		return;
	/* ioband_sched_alone()'s question, from what the structures show */
	*alone += !bypass && !s.nr_active && !s.nr_inflight && !s.antic &&
		  s.conf.policy == IOBAND_POLICY_WEIGHT && !e->in_tree;
	went = ioband_sched_start(&s, e, cost, bypass, now);
	mix(went);
	if (!went) {
		g->held_cost[(g->held_head + g->nr_held) % MAX_HELD] = cost;
		g->nr_held++;
		release();
	}
}

/*
 * Under weight-time a completion says how long the bio took, which moves
 * the group's time and may leave the clock owing (vclock_owed).
 */
static void complete(struct group *g)
{
	if (s.conf.policy != IOBAND_POLICY_WEIGHT_TIME) {
		ioband_sched_complete(&s, &g->ent, now);
		return;
	}
	ioband_sched_complete_timed(&s, &g->ent, rnd(IOBAND_EST_SIZES),
				    8 << rnd(10), 1000 + rnd(4000000), !rnd(4),
				    now);
}

static void run(u32 seed, u64 *alone)
{
	struct ioband_dg_conf conf;
	u32 step, i, arrivals;

	rng_state = seed;
	ioband_dg_conf_init(&conf);
	conf.policy = rnd(4) ? IOBAND_POLICY_WEIGHT : IOBAND_POLICY_WEIGHT_IOSIZE;
	conf.io_limit = 1 + rnd(8);
	conf.io_throttle = rnd(4);
	ioband_sched_init(&s, &conf, heap, NR_GROUPS);
	/* some runs start near a wrap of the clock, or of its epoch */
	s.vclock = rnd(2) ? 0 : (u64)0 - ((u64)rnd(1000) << 32);
	memset(grp, 0, sizeof(grp));
	for (i = 0; i < NR_GROUPS; i++)
		ioband_entity_init(&s, &grp[i].ent, 1 + rnd(1000));
	now = 1000000;
	/* of 8 steps, how many are arrivals: from a busy device to an idle one */
	arrivals = 1 + rnd(4);
	for (step = 0; step < STEPS; step++) {
		struct group *g = &grp[rnd(NR_GROUPS)];

		now += rnd(4) ? rnd(20000) : rnd(20000000);
		i = rnd(8);
		if (i < arrivals) {
			arrive(g, alone);
		} else if (i < 7) {
			for (i = 0; i < NR_GROUPS && !g->ent.nr_inflight; i++)
				g = &grp[i];
			if (g->ent.nr_inflight) {
				complete(g);
				release();
			}
		} else if (!rnd(8)) {
			ioband_entity_set_weight(&s, &g->ent, 1 + rnd(1000));
		} else if (!rnd(64)) {
			/*
			 * What weight-time leaves behind meets the empty path,
			 * and a smaller window leaves a group that ran ahead
			 * beyond it.
			 */
			conf.policy = rnd(2) ? IOBAND_POLICY_WEIGHT :
					       IOBAND_POLICY_WEIGHT_TIME;
			conf.token_base = rnd(2) ? IOBAND_DEFAULT_TOKEN_BASE :
						   rnd(64);
			ioband_sched_set_conf(&s, &conf);
		}
		mix_state();
	}
}

int main(void)
{
	u64 alone = 0;
	u32 seed;

	for (seed = 1; seed <= RUNS; seed++) {
		hash = 14695981039346656037ULL;
		run(seed, &alone);
		printf("run %u: %016llx\n", seed, (unsigned long long)hash);
	}
	printf("empty device group met by %llu bios\n",
	       (unsigned long long)alone);
	/* the reference build never takes the path: only the other prints */
	if (ioband_alone_starts)
		printf("empty-device-group path taken by %lu bios\n",
		       ioband_alone_starts);
	return 0;
}

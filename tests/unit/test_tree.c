// SPDX-License-Identifier: GPL-2.0
/*
 * Hierarchical weights: the tree's arithmetic under random changes, and
 * shares of device time on the discrete-event device (devsim.h).  The
 * bounds are issue 17's: a parent of weight 300 with children 2:1 against
 * a sibling of weight 100 gives 50 / 25 / 25 % of device time, each within
 * 2 points, and a child's idle share goes to its sibling first.
 */
#include <stdlib.h>
#include <string.h>
#include <linux/dm-ioband.h>
#include "devsim.h"
#include "unit.h"

#define TREE_N	8

/* The tree weight @e must have, counted from scratch. */
static u64 tree_expect(struct ioband_entity *ents, u32 i)
{
	u64 w = ents[i].active ? ents[i].weight : 0;
	u32 c;

	for (c = 0; c < TREE_N; c++)
		if (ents[c].parent == &ents[i] && tree_expect(ents, c))
			w += ents[c].weight;
	return w;
}

static bool tree_below(struct ioband_entity *ents, u32 i, u32 anc)
{
	const struct ioband_entity *n;

	for (n = &ents[i]; n; n = n->parent)
		if (n == &ents[anc])
			return true;
	return false;
}

/*
 * Random moves, activity and weights: after each, every node's tree
 * weight and the clock's active weight are what counting from scratch
 * gives, and the active groups' shares of the top weight add up to it.
 */
static void tree_random(void)
{
	struct ioband_entity ents[TREE_N];
	struct ioband_dg_conf conf;
	struct ioband_entity *heap[TREE_N * IOBAND_NR_HEAPS];
	struct ioband_sched s;
	u32 i, step, bad = 0;

	srand(17);
	ioband_dg_conf_init(&conf);
	ioband_sched_init(&s, &conf, heap, TREE_N);
	for (i = 0; i < TREE_N; i++)
		ioband_entity_init(&s, &ents[i], 100);
	for (step = 0; step < 20000 && !bad; step++) {
		u32 a = rand() % TREE_N, b = rand() % (TREE_N + 1);
		u64 top = 0, sum_eff = 0, floor1 = 0;

		switch (rand() % 3) {
		case 0:	/* a moves under b (TREE_N: the top) */
			if (b == TREE_N)
				ioband_entity_set_parent(&s, &ents[a], NULL);
			else if (!tree_below(ents, b, a))
				ioband_entity_set_parent(&s, &ents[a], &ents[b]);
			break;
		case 1:
			ents[a].active = !ents[a].active;
			ioband_active_add(&s, &ents[a], ents[a].active ?
					  (s64)ents[a].weight : -(s64)ents[a].weight);
			break;
		default:
			ioband_entity_set_weight(&s, &ents[a], 1 + rand() % 1000);
			break;
		}
		for (i = 0; i < TREE_N; i++) {
			u64 want = tree_expect(ents, i);
			bool in = ents[i].parent || ents[i].nr_children;

			CHECK(ents[i].in_tree == in, "step %u: %u in_tree %d",
			      step, i, ents[i].in_tree);
			if (in)
				CHECK(ents[i].tree_weight == want,
				      "step %u: %u tree_weight %llu want %llu",
				      step, i, (unsigned long long)ents[i].tree_weight,
				      (unsigned long long)want);
			if (!ents[i].parent && want)
				top += ents[i].weight;
			if (!ents[i].active)
				continue;
			sum_eff += IOBAND_VSCALE * 1000 /
				   ioband_entity_inv_weight(&ents[i]);
			/* a share below weight 1 counts as 1 */
			floor1 += ioband_entity_inv_weight(&ents[i]) ==
				  IOBAND_VSCALE;
		}
		CHECK(s.active_weight == top, "step %u: active_weight %llu want %llu",
		      step, (unsigned long long)s.active_weight,
		      (unsigned long long)top);
		/* in thousandths of a weight, each rounded once a level */
		CHECK(sum_eff <= top * 1000 + floor1 * 1000 + TREE_N &&
		      sum_eff + 8 * TREE_N >= top * 1000,
		      "step %u: the active groups' weights add up to %llu/1000, want %llu",
		      step, (unsigned long long)sum_eff, (unsigned long long)top);
		bad = unit_test_failed;
	}
}

/* Outside a tree a group's inverse weight is exactly the flat one. */
static void tree_flat_exact(void)
{
	struct ioband_entity a, b;
	struct ioband_dg_conf conf;
	struct ioband_entity *heap[2 * IOBAND_NR_HEAPS];
	struct ioband_sched s;

	ioband_dg_conf_init(&conf);
	ioband_sched_init(&s, &conf, heap, 2);
	ioband_entity_init(&s, &a, 300);
	ioband_entity_init(&s, &b, 200);
	ioband_entity_set_parent(&s, &b, &a);
	a.active = true;
	b.active = true;
	ioband_active_add(&s, &b, 200);
	CHECK(ioband_entity_inv_weight(&b) == IOBAND_VSCALE / 300,
	      "a lone child has its parent's weight: %llu",
	      (unsigned long long)ioband_entity_inv_weight(&b));
	ioband_active_add(&s, &a, 300);
	/* a's own bios and b share 300 as 300:200 */
	CHECK(ioband_entity_inv_weight(&a) == IOBAND_VSCALE / 300 * 500 / 300,
	      "a: %llu", (unsigned long long)ioband_entity_inv_weight(&a));
	ioband_entity_set_parent(&s, &b, NULL);
	CHECK(!a.in_tree && !b.in_tree && s.active_weight == 500 &&
	      ioband_entity_inv_weight(&a) == a.inv_weight,
	      "apart again: active_weight %llu",
	      (unsigned long long)s.active_weight);
}

/*
 * On the ssd profile, readers: group 0 (weight 300) is the parent of 1
 * (400) and 2 (200), so 2:1, and 3 (100) its sibling.  Each case says
 * which groups send and each one's share of device time, within 2 points.
 */
struct tree_case {
	const char *what;
	bool busy[4];
	double want[4];
};

static const struct tree_case tree_cases[] = {
	/* flat weights 400:200:100 would give 57 / 29 / 14 */
	{ "children 2:1 of 300 against 100", { false, true, true, true },
	  { 0, 50, 25, 25 } },
	/* flat: 80 / 20 */
	{ "a child idle: its share to its sibling first",
	  { false, true, false, true }, { 0, 75, 0, 25 } },
	/* the parent's own bios: 300 x 300 / 900 = 100 of 400 */
	{ "a parent with bios of its own", { true, true, true, true },
	  { 25, 33.3, 16.7, 25 } },
};

static void tree_shares(void)
{
	static const u32 weights[4] = { 300, 400, 200, 100 };
	const struct tree_case *c;
	struct ds_sim sim;
	u32 i;

	for (c = tree_cases; c < tree_cases + ARRAY_SIZE(tree_cases); c++) {
		ds_setup(&sim, "ssd", 4);
		for (i = 0; i < 4; i++) {
			sim.g[i].weight = weights[i];
			sim.g[i].procs = c->busy[i] ? 4 : 0;
			sim.g[i].iodepth = 4;
		}
		sim.g[1].parent = 1;
		sim.g[2].parent = 1;
		ds_run(&sim);
		for (i = 0; i < 4; i++)
			CHECK(ds_share(&sim, i) > c->want[i] - 2 &&
			      ds_share(&sim, i) < c->want[i] + 2,
			      "%s: group %u has %.1f %% of device time for %.1f",
			      c->what, i, ds_share(&sim, i), c->want[i]);
	}
}

void tree_tests(void)
{
	RUN(tree_random);
	RUN(tree_flat_exact);
	RUN(tree_shares);
}

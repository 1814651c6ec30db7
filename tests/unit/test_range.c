// SPDX-License-Identifier: GPL-2.0
/*
 * range-bw's choice of the next group, by heaps: against a reference copy
 * of the O(n) scan it replaced, on random workloads, and by its cost with
 * 10,000 held groups.
 */
#include <stdlib.h>
#include <string.h>
#include <linux/dm-ioband.h>
#include "unit.h"

/* IOBAND_RANGE_BATCH of drivers/md/dm-ioband-policy.c */
#define BATCH	8
#define NSEC	1000000000LL

static u64 rng_state;

static u64 rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static u32 rnd_below(u32 n)
{
	return rnd() % n;
}

static bool vt_before(u64 a, u64 b)
{
	return (s64)(a - b) < 0;
}

/* ---- the reference: the scan, as it was, over the same state ---------- */

static s64 ref_rate(u32 kbps)
{
	return (s64)kbps * 2;
}

static s64 ref_depth(u32 kbps)
{
	s64 d = ref_rate(kbps) * IOBAND_RANGE_BURST_NS;

	return d > 8 * NSEC ? d : 8 * NSEC;
}

/* An exact fill: the 1 s clamp of the scan's refill is gone with it. */
static s64 ref_fill(s64 tokens, u64 from, u64 now, u32 kbps)
{
	s64 elapsed = (s64)(now - from);
	__int128 t;

	if (!kbps || elapsed <= 0)
		return tokens;
	t = (__int128)tokens + (__int128)elapsed * ref_rate(kbps);
	return t > ref_depth(kbps) ? ref_depth(kbps) : (s64)t;
}

enum ref_class { REF_OWED, REF_OTHER, REF_CAPPED };

static enum ref_class ref_classify(const struct ioband_entity *e, u64 now,
				   u64 *ready_at)
{
	s64 cap = ref_fill(e->cap_tokens, e->refilled_at, now, e->max_kbps);
	s64 min = ref_fill(e->min_tokens, e->refilled_at, now, e->min_kbps);

	if (e->max_kbps && cap <= 0) {
		s64 rate = ref_rate(e->max_kbps);

		*ready_at = now + (u64)(-cap + rate) / rate;
		return REF_CAPPED;
	}
	return e->min_kbps && min > 0 ? REF_OWED : REF_OTHER;
}

struct ref_choice {
	const struct ioband_entity *e;	/* NULL: none */
	enum ref_class class;
	u64 wake_at;
};

/*
 * ioband_sched_next() under range-bw as the scan decided, from the state
 * it finds (idle groups expired first, as it does), changing nothing.
 */
static struct ref_choice ref_next(const struct ioband_sched *s, u64 now)
{
	const struct ioband_entity *below_min = NULL, *best = NULL, *idle;
	struct ref_choice c = { NULL, REF_OTHER, 0 };
	u64 active_weight = s->active_weight, window, wake_capped = 0;
	u32 nr_active = s->nr_active, i;

	for (idle = s->idle_head;
	     idle && (s64)(now - idle->idle_since) >= (s64)s->idle_ns;
	     idle = idle->idle_next) {
		active_weight -= idle->weight;
		nr_active--;
	}
	if (s->nr_inflight >= s->conf.io_limit)
		return c;
	for (i = 0; i < s->heap_len; i++) {
		const struct ioband_entity *e = s->heap[i];
		u64 ready_at;

		switch (ref_classify(e, now, &ready_at)) {
		case REF_CAPPED:
			if (!wake_capped || vt_before(ready_at, wake_capped))
				wake_capped = ready_at;
			break;
		case REF_OWED:
			if (!below_min || vt_before(e->vtime, below_min->vtime))
				below_min = e;
			break;
		default:
			if (!best || vt_before(e->vtime, best->vtime))
				best = e;
		}
	}
	if (below_min) {
		c.e = below_min;
		c.class = REF_OWED;
		return c;
	}
	if (best) {
		/* ioband_may_serve() */
		window = s->window;
		if (s->window_weight != active_weight && active_weight) {
			window = (u64)s->conf.token_base * 8 * IOBAND_VSCALE /
				 active_weight;
			if (window < s->base_window)
				window = s->base_window;
		}
		if (!vt_before(s->vclock + window, best->vtime) ||
		    s->nr_inflight < s->conf.io_throttle ||
		    nr_active <= s->heap_len) {
			c.e = best;
			return c;
		}
		if (idle)
			c.wake_at = idle->idle_since + s->idle_ns;
	}
	if (wake_capped && (!c.wake_at || vt_before(wake_capped, c.wake_at)))
		c.wake_at = wake_capped;
	return c;
}

/* ---- the heaps' own invariants ------------------------------------------ */

static struct ioband_entity **heap_of(struct ioband_sched *s, int h)
{
	return s->heap + h * s->heap_cap;
}

static u32 len_of(struct ioband_sched *s, int h)
{
	return h == IOBAND_HEAP_HELD ? s->heap_len : s->side_len[h - 1];
}

static bool heap_before(int h, const struct ioband_entity *a,
			const struct ioband_entity *b)
{
	if (h == IOBAND_HEAP_FREE && a->range_class != b->range_class)
		return a->range_class == 1;	/* owed */
	if (h >= IOBAND_HEAP_CAPPED)
		return vt_before(a->range_due, b->range_due);
	return vt_before(a->vtime, b->vtime);
}

/* Every heap ordered, its slots and the groups' indices agreeing. */
static bool heaps_ok(struct ioband_sched *s, bool range)
{
	u32 free = 0, wait = 0, i;
	int h;

	for (h = 0; h <= IOBAND_HEAP_MET; h++) {
		for (i = 0; i < len_of(s, h); i++) {
			struct ioband_entity *e = heap_of(s, h)[i];
			s32 idx = h == IOBAND_HEAP_HELD ? e->heap_idx :
				  h == IOBAND_HEAP_FREE ? e->free_idx : e->wait_idx;

			if (idx != (s32)i ||
			    (i && heap_before(h, e, heap_of(s, h)[(i - 1) / 2]))) {
				printf("  heap %d slot %u: index %d, class %d\n",
				       h, i, idx, e->range_class);
				return false;
			}
		}
	}
	for (i = 0; i < s->heap_len; i++) {
		struct ioband_entity *e = s->heap[i];

		if (!range) {
			if (e->range_class || e->free_idx >= 0 || e->wait_idx >= 0)
				return false;
			continue;
		}
		if (!e->range_class)
			return false;
		free += e->free_idx >= 0;
		wait += e->wait_idx >= 0;
	}
	return free == len_of(s, IOBAND_HEAP_FREE) &&
	       wait == len_of(s, IOBAND_HEAP_CAPPED) + len_of(s, IOBAND_HEAP_MET);
}

/* Held groups whose class time has changed and ioband_sched_next() owes a move. */
static u32 nr_due(struct ioband_sched *s, u64 now)
{
	u32 n = 0, i;
	int h;

	for (h = IOBAND_HEAP_CAPPED; h <= IOBAND_HEAP_MET; h++)
		for (i = 0; i < len_of(s, h); i++)
			n += !vt_before(now, heap_of(s, h)[i]->range_due);
	return n;
}

/* ---- the differential run ------------------------------------------------ */

#define DG	48		/* group slots */
#define MAXQ	64		/* bios held or in flight per group */

struct dgroup {
	struct ioband_entity e;
	bool live;		/* attached */
	bool detached;		/* awaiting its last completion */
	u32 held[MAXQ], nr_held;	/* costs, oldest first */
	u32 inflight;
};

static struct dgroup dgs[DG];
static struct ioband_entity *dheap[IOBAND_HEAP_SLOTS(DG)];

static void random_range(struct ioband_sched *s, struct dgroup *g, u64 now)
{
	static const u32 rates[] = {
		0, 0, 0, 1, 40, 400, 4000, 40000, 400000, 4000000
	};
	u32 min = rates[rnd_below(10)], max = rates[rnd_below(10)];

	if (max && min > max)
		min = max;
	ioband_entity_set_range(s, &g->e, min, max, now);
}

static void attach(struct ioband_sched *s, struct dgroup *g, u64 now)
{
	ioband_entity_init(s, &g->e, 1 + rnd_below(1000));
	random_range(s, g, now);
	g->live = true;
	g->nr_held = 0;
	g->inflight = 0;
}

static void complete_one(struct ioband_sched *s, struct dgroup *g, u64 now)
{
	g->inflight--;
	ioband_sched_complete(s, &g->e, now);
	if (g->detached && !g->inflight) {
		ioband_entity_forget(s, &g->e);
		g->detached = false;
	}
}

/* Releases one held bio of @g, as ioband_release_one() does. */
static void release(struct ioband_sched *s, struct dgroup *g, bool bypass)
{
	u32 cost = g->held[0];

	memmove(g->held, g->held + 1, --g->nr_held * sizeof(*g->held));
	ioband_sched_dispatch(s, &g->e, cost, true, bypass);
	g->inflight++;
}

struct diff_stats {
	u32 calls, exact, batched, chosen;
};

/* One ioband_sched_next() checked against the reference. */
static struct ioband_entity *checked_next(struct ioband_sched *s, u64 now,
					  struct diff_stats *st)
{
	u32 due = nr_due(s, now);
	struct ref_choice ref = ref_next(s, now);
	struct ioband_entity *e;
	u64 wake_at, ready;

	e = ioband_sched_next(s, now, &wake_at);
	st->calls++;
	st->chosen += !!e;
	if (due > BATCH && s->nr_inflight < s->conf.io_limit) {
		/* batched: a group not capped, or a wake-up at once */
		st->batched++;
		CHECK(nr_due(s, now) == due - BATCH, "due %u then %u",
		      due, nr_due(s, now));
		if (e)
			CHECK(ref_classify(e, now, &ready) != REF_CAPPED,
			      "batched: chose a capped group");
		else
			CHECK(wake_at && !vt_before(now, wake_at),
			      "batched: wake_at %llu at %llu",
			      (unsigned long long)wake_at,
			      (unsigned long long)now);
		return e;
	}
	st->exact++;
	if (!ref.e) {
		CHECK(!e && wake_at == ref.wake_at,
		      "step %u: chose %p wake %llu, the scan none wake %llu",
		      st->calls, (void *)e, (unsigned long long)wake_at,
		      (unsigned long long)ref.wake_at);
		return e;
	}
	/* among equal virtual times either may go first */
	CHECK(e && ref_classify(e, now, &ready) == ref.class &&
	      e->vtime == ref.e->vtime,
	      "step %u: chose %p (class %d vtime %llu), the scan class %d vtime %llu",
	      st->calls, (void *)e, e ? (int)ref_classify(e, now, &ready) : -1,
	      e ? (unsigned long long)e->vtime : 0ULL, ref.class,
	      (unsigned long long)ref.e->vtime);
	return e;
}

static void range_vs_scan(void)
{
	struct ioband_dg_conf conf;
	struct diff_stats st = { 0 };
	struct ioband_sched s;
	u64 now = 1000;
	u32 step, i;

	rng_state = 88172645463325252ULL;
	ioband_dg_conf_init(&conf);
	conf.policy = IOBAND_POLICY_RANGE_BW;
	conf.io_limit = 32;
	conf.io_throttle = 4;
	ioband_sched_init(&s, &conf, dheap, DG);
	memset(dgs, 0, sizeof(dgs));
	for (i = 0; i < DG; i++)
		attach(&s, &dgs[i], now);

	for (step = 0; step < 200000 && !unit_test_failed; step++) {
		struct dgroup *g = &dgs[rnd_below(DG)];
		u32 op = rnd_below(100);

		/* time: mostly short steps, now and then seconds */
		now += rnd_below(50) ? rnd_below(200000) :
		       rnd_below(3) * NSEC + rnd_below(NSEC);
		if (op < 40) {
			/* bios arrive; now and then REQ_NOWAIT or a bypass */
			for (i = rnd_below(12); i--; g = &dgs[rnd_below(DG)]) {
				u32 cost = 8 << rnd_below(6);
				bool bypass = !rnd_below(30);

				if (!g->live || g->nr_held + g->inflight >= MAXQ)
					continue;
				if (ioband_sched_start(&s, &g->e, cost, bypass, now))
					g->inflight++;
				else if (!rnd_below(20))
					ioband_sched_unhold(&s, &g->e, now);
				else
					g->held[g->nr_held++] = cost;
			}
		} else if (op < 70) {
			/* completions, then the release loop */
			for (i = 0; i < DG; i++) {
				while (dgs[i].inflight && rnd_below(3))
					complete_one(&s, &dgs[i], now);
			}
			for (i = 0; i < 2 * DG; i++) {
				struct ioband_entity *e = checked_next(&s, now, &st);

				if (!e)
					break;
				release(&s, (struct dgroup *)e, false);
			}
		} else if (op < 76 && g->live) {
			random_range(&s, g, now);
		} else if (op < 78 && g->nr_held) {
			/* suspend: every held bio goes, past the limits */
			while (g->nr_held)
				release(&s, g, true);
		} else if (op < 80 && g != &dgs[0] && g->live &&
			   dgs[0].nr_held + g->nr_held <= MAXQ) {
			/* detached: its held bios join the default group */
			ioband_sched_move_held(&s, &g->e, &dgs[0].e, now);
			memcpy(dgs[0].held + dgs[0].nr_held, g->held,
			       g->nr_held * sizeof(*g->held));
			dgs[0].nr_held += g->nr_held;
			g->nr_held = 0;
			ioband_entity_exit(&s, &g->e);
			g->live = false;
			g->detached = true;
			if (!g->inflight) {
				ioband_entity_forget(&s, &g->e);
				g->detached = false;
			}
		} else if (op < 82 && !g->live && !g->detached) {
			attach(&s, g, now);
		} else if (op == 82) {
			/* another policy for a while, then range-bw afresh */
			conf.policy = IOBAND_POLICY_WEIGHT;
			ioband_sched_set_conf(&s, &conf);
			CHECK(heaps_ok(&s, false), "heaps after leaving range-bw");
			conf.policy = IOBAND_POLICY_RANGE_BW;
			ioband_sched_set_conf(&s, &conf);
			for (i = 0; i < DG; i++)
				ioband_entity_restart(&s, &dgs[i].e);
		}
		CHECK(heaps_ok(&s, true), "heaps broken at step %u (op %u)",
		      step, op);
	}
	printf("  %u steps, %u decisions (%u released): %u exact, %u batched\n",
	       step, st.calls, st.chosen, st.exact, st.batched);
	CHECK(st.exact > 50000 && st.batched > 100 && st.chosen > 20000,
	      "too few decisions of either kind to judge");
}

/* ---- the cost with 10,000 held groups ------------------------------------ */

#define NBIG	10000
#define LOG2_NBIG	14	/* ceil(log2(NBIG)) */
/* a constant times log2 n: the decision and a batch of moves */
#define COST_BOUND	(64 * LOG2_NBIG)

static struct ioband_entity big[NBIG];
static struct ioband_entity *bigheap[IOBAND_HEAP_SLOTS(NBIG)];

static void range_cost_10000(void)
{
	struct ioband_dg_conf conf;
	struct ioband_sched s;
	unsigned long worst = 0, worst_op = 0, v;
	u64 now = 1000, wake_at;
	u32 i, calls = 0, inflight[NBIG] = { 0 }, drain = 0, due, nr_in = 0;

	rng_state = 2463534242ULL;
	ioband_dg_conf_init(&conf);
	conf.policy = IOBAND_POLICY_RANGE_BW;
	conf.io_limit = 64;
	ioband_sched_init(&s, &conf, bigheap, NBIG);
	for (i = 0; i < NBIG; i++) {
		ioband_entity_init(&s, &big[i], 100);
		/* a third capped, a third with a minimum, a third both */
		ioband_entity_set_range(&s, &big[i], i % 3 ? 100 + i % 7 : 0,
					i % 3 != 1 ? 200 + i % 5 : 0, now);
		/* each held twice: spent buckets first, by bypasses */
		ioband_sched_start(&s, &big[i], 1024, true, now);
		ioband_sched_complete(&s, &big[i], now);
		inflight[i] += ioband_sched_start(&s, &big[i], 8, false, now);
		inflight[i] += ioband_sched_start(&s, &big[i], 8, false, now);
		nr_in += inflight[i];
	}
	CHECK(s.heap_len > NBIG / 2, "%u groups held", s.heap_len);
	/*
	 * A second later every cap is paid up and every minimum owed at
	 * once: the moves take ceil(due / BATCH) calls, each as cheap.
	 */
	now += NSEC;
	due = nr_due(&s, now);
	for (i = 0; i < (due + BATCH - 1) / BATCH; i++) {
		struct ioband_entity *e;

		ioband_heap_visits = 0;
		e = ioband_sched_next(&s, now, &wake_at);
		if (ioband_heap_visits > worst)
			worst = ioband_heap_visits;
		calls++;
		drain += !e && wake_at && !vt_before(now, wake_at);
		if (e) {
			ioband_sched_dispatch(&s, e, 8, true, false);
			ioband_sched_complete(&s, e, now);
		}
	}
	printf("  %u due at once: %u calls moved them, at most %lu visits a call\n",
	       due, i, worst);
	CHECK(due > NBIG / 2 && !nr_due(&s, now), "%u due, %u left after %u calls",
	      due, nr_due(&s, now), i);
	for (i = 0; i < 20000; i++) {
		struct ioband_entity *e;

		now += rnd_below(500) ? rnd_below(100000) : 2 * NSEC;
		/* completions cost O(1): one in flight completes now and then */
		if (nr_in && rnd_below(2)) {
			u32 j = rnd_below(NBIG);

			while (!inflight[j])
				j = (j + 1) % NBIG;
			nr_in--;
			inflight[j]--;
			ioband_sched_complete(&s, &big[j], now);
		}
		ioband_heap_visits = 0;
		e = ioband_sched_next(&s, now, &wake_at);
		v = ioband_heap_visits;
		calls++;
		if (v > worst)
			worst = v;
		if (wake_at && !vt_before(now, wake_at))
			drain++;
		if (!e)
			continue;
		/* the dispatch, and the group's next bio held again */
		ioband_heap_visits = 0;
		ioband_sched_dispatch(&s, e, 8, true, false);
		inflight[e - big]++;
		nr_in++;
		if (!e->nr_queued && ioband_sched_start(&s, e, 8, false, now)) {
			inflight[e - big]++;
			nr_in++;
		}
		if (ioband_heap_visits > worst_op)
			worst_op = ioband_heap_visits;
	}
	printf("  %u calls with %u groups held: at most %lu visits a decision, %lu a dispatch; %u woke at once to go on (bound %d)\n",
	       calls, NBIG, worst, worst_op, drain, COST_BOUND);
	CHECK(worst <= COST_BOUND, "%lu visits in one ioband_sched_next()",
	      worst);
	CHECK(worst_op <= COST_BOUND, "%lu visits in one dispatch", worst_op);
}

void range_tests(void)
{
	RUN(range_vs_scan);
	RUN(range_cost_10000);
}

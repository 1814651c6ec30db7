// SPDX-License-Identifier: GPL-2.0
/* Leases of the scheduler (ioband_lease_*() in dm-ioband-policy.c). */
#include <stdlib.h>
#include <string.h>
#include <linux/dm-ioband.h>
#include "unit.h"

#define NR	3

struct lease_sched {
	struct ioband_sched s;
	struct ioband_entity e[NR];
	struct ioband_entity *heap[IOBAND_HEAP_SLOTS(NR)];
};

static u64 lease_rng;

static u32 lease_rnd(u32 n)
{
	lease_rng = lease_rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (u32)(lease_rng >> 33) % n;
}

/*
 * A device group of three groups under @policy, from @seed: weights and
 * the clock drawn, groups 1 and 2 with a bio or two in flight, so that
 * more than one group is active and no single stream sets the clock.
 */
static void lease_setup(struct lease_sched *l, enum ioband_policy policy,
			u32 seed)
{
	struct ioband_dg_conf conf;
	u32 i;

	lease_rng = seed;
	memset(l, 0, sizeof(*l));
	ioband_dg_conf_init(&conf);
	conf.policy = policy;
	ioband_sched_init(&l->s, &conf, l->heap, NR);
	l->s.vclock = lease_rnd(2) ? 0 : (u64)0 - ((u64)lease_rnd(1000) << 32);
	for (i = 0; i < NR; i++)
		ioband_entity_init(&l->s, &l->e[i], 1 + lease_rnd(1000));
	for (i = 1; i < NR; i++)
		ioband_sched_start(&l->s, &l->e[i], 8, false, 1000);
}

/*
 * ioband_lease_grant() of @slots and *@units: the slots granted, and in
 * *@units the units (left as they were if none).
 */
static u32 lease_grant(struct lease_sched *l, struct ioband_entity *e,
		       u32 cost, u32 *units, u32 slots)
{
	u64 lease = ioband_lease_grant(&l->s, e, cost, *units, slots);

	if (lease)
		*units = ioband_lease_units(lease);
	return ioband_lease_slots(lease);
}

static u64 lease_window_end(const struct lease_sched *l)
{
	return l->s.vclock + l->s.window;
}

/* However much is asked, a granted lease fits the group's window. */
static void lease_within_window(void)
{
	struct lease_sched l;
	u32 seed, granted = 0;

	for (seed = 1; seed <= 2000; seed++) {
		u32 units = 8 << lease_rnd(12), slots = 1 + lease_rnd(64), got;
		u64 end;

		lease_setup(&l, IOBAND_POLICY_WEIGHT, seed);
		if (!ioband_sched_start(&l.s, &l.e[0], 8, false, 1000))
			continue;
		end = lease_window_end(&l);
		got = lease_grant(&l, &l.e[0], 8, &units, slots);
		if (!got)
			continue;
		granted++;
		CHECK((s64)(l.e[0].vtime - end) <= 0,
		      "seed %u: a lease of %u units put the group %lld past its window",
		      seed, units, (long long)(l.e[0].vtime - end));
		CHECK(got <= slots, "seed %u: %u slots for %u asked", seed,
		      got, slots);
	}
	CHECK(granted > 1000, "only %u of 2000 leases granted", granted);
}

/* A lease returned whole leaves the group where it was; the clock owes. */
static void lease_return_whole(void)
{
	struct lease_sched l;
	u32 seed;

	for (seed = 1; seed <= 2000; seed++) {
		u32 units = 8 * (1 + lease_rnd(32)), slots = 32, got;
		u64 vtime, vclock, inflight;

		lease_setup(&l, IOBAND_POLICY_WEIGHT, seed);
		ioband_sched_start(&l.s, &l.e[0], 8, false, 1000);
		vtime = l.e[0].vtime;
		vclock = l.s.vclock;
		inflight = l.s.nr_inflight;
		got = lease_grant(&l, &l.e[0], 8, &units, slots);
		if (!got)
			continue;
		CHECK(l.s.nr_inflight == inflight + got,
		      "seed %u: %u in flight for %llu + %u", seed,
		      l.s.nr_inflight, (unsigned long long)inflight, got);
		ioband_lease_return(&l.s, &l.e[0], units, got, 2000);
		CHECK(l.e[0].vtime == vtime, "seed %u: vtime moved by %lld",
		      seed, (long long)(l.e[0].vtime - vtime));
		CHECK(l.s.nr_inflight == inflight, "seed %u: %u in flight",
		      seed, l.s.nr_inflight);
		CHECK(l.s.vclock_owed == l.s.vclock - vclock,
		      "seed %u: the clock advanced %llu and owes %llu", seed,
		      (unsigned long long)(l.s.vclock - vclock),
		      (unsigned long long)l.s.vclock_owed);
	}
}

/*
 * A lease used whole charges what as many admissions would: the group's
 * time exactly, the clock within one unit of rounding per bio.
 */
static void lease_as_admissions(void)
{
	struct lease_sched a, b;
	u32 seed, compared = 0;

	for (seed = 1; seed <= 2000; seed++) {
		u32 slots = 1 + lease_rnd(16), units, got, i;

		units = 8 * slots;
		lease_setup(&a, IOBAND_POLICY_WEIGHT, seed);
		lease_setup(&b, IOBAND_POLICY_WEIGHT, seed);
		ioband_sched_start(&a.s, &a.e[0], 8, false, 1000);
		got = lease_grant(&a, &a.e[0], 8, &units, slots);
		if (!got || units != 8 * got)
			continue;
		for (i = 0; i <= got; i++)
			if (!ioband_sched_start(&b.s, &b.e[0], 8, false, 1000))
				break;
		if (i <= got)
			continue;	/* the locked path would hold one */
		compared++;
		CHECK(a.e[0].vtime == b.e[0].vtime,
		      "seed %u: leased vtime %llu, admitted %llu", seed,
		      (unsigned long long)a.e[0].vtime,
		      (unsigned long long)b.e[0].vtime);
		CHECK(a.s.vclock - b.s.vclock + got <= 2 * got,
		      "seed %u: leased clock %llu, admitted %llu (%u bios)",
		      seed, (unsigned long long)a.s.vclock,
		      (unsigned long long)b.s.vclock, got);
		CHECK(a.s.nr_inflight == b.s.nr_inflight,
		      "seed %u: %u in flight leased, %u admitted", seed,
		      a.s.nr_inflight, b.s.nr_inflight);
		ioband_sched_complete(&a.s, &a.e[0], 2000);
		ioband_lease_complete(&a.s, &a.e[0], got, true, 2000);
		for (i = 0; i <= got; i++)
			ioband_sched_complete(&b.s, &b.e[0], 2000);
		CHECK(a.e[0].active == b.e[0].active &&
		      a.s.active_weight == b.s.active_weight,
		      "seed %u: after completion active %d/%d, weight %llu/%llu",
		      seed, a.e[0].active, b.e[0].active,
		      (unsigned long long)a.s.active_weight,
		      (unsigned long long)b.s.active_weight);
	}
	CHECK(compared > 1000, "only %u of 2000 seeds compared", compared);
}

/* No lease while bios are held, under range-bw, or with the depth spent. */
static void lease_refused(void)
{
	struct lease_sched l;
	u32 units = 64, i;

	lease_setup(&l, IOBAND_POLICY_RANGE_BW, 1);
	ioband_sched_start(&l.s, &l.e[0], 8, false, 1000);
	CHECK(!lease_grant(&l, &l.e[0], 8, &units, 8),
	      "a lease under range-bw");

	lease_setup(&l, IOBAND_POLICY_WEIGHT, 1);
	l.s.conf.io_limit = 4;
	for (i = 0; i < 2; i++)
		ioband_sched_start(&l.s, &l.e[0], 8, false, 1000);
	/* four in flight of four */
	CHECK(!lease_grant(&l, &l.e[0], 8, &units, 8),
	      "a lease with %u of %u in flight", l.s.nr_inflight,
	      l.s.conf.io_limit);

	/* group 0 past its window, held while the depth has room */
	lease_setup(&l, IOBAND_POLICY_WEIGHT, 1);
	for (i = 0; i < 1000; i++)
		if (!ioband_sched_start(&l.s, &l.e[0], 8, false, 1000))
			break;
	CHECK(l.s.heap_len && l.s.nr_inflight < l.s.conf.io_limit / 2,
	      "%u held with %u in flight of %u", l.s.heap_len,
	      l.s.nr_inflight, l.s.conf.io_limit);
	CHECK(!lease_grant(&l, &l.e[1], 8, &units, 8),
	      "a lease while %u groups hold bios", l.s.heap_len);
}

/*
 * A lease whose slots are spent but not its units (the depth allowed
 * fewer slots than it asked for, or its bios cost less than the first)
 * comes back after the group went idle: the group stays on the idle list
 * once, and the active weight counts it once.
 */
static void lease_return_units_only(void)
{
	struct lease_sched l;
	struct ioband_entity *e;
	u32 units = 32 * 8, got, n;

	lease_setup(&l, IOBAND_POLICY_WEIGHT, 7);
	l.s.conf.io_limit = 8;
	/* a parallel group: two bios at once */
	ioband_sched_start(&l.s, &l.e[0], 8, false, 1000);
	ioband_sched_start(&l.s, &l.e[0], 8, false, 1000);
	got = lease_grant(&l, &l.e[0], 4, &units, 32);
	CHECK(got && got < 32, "%u slots granted with io_limit 8", got);
	/* its slots' bios went down at 4 units each, and every bio completed */
	units -= got * 4;
	ioband_lease_complete(&l.s, &l.e[0], got, true, 2000);
	ioband_sched_complete(&l.s, &l.e[0], 2000);
	ioband_sched_complete(&l.s, &l.e[0], 2000);
	CHECK(l.s.idle_head == &l.e[0] || l.s.idle_tail == &l.e[0],
	      "group 0 not idle after its last completion");
	ioband_lease_return(&l.s, &l.e[0], units, 0, 3000);
	for (n = 0, e = l.s.idle_head; e && n < 10; e = e->idle_next)
		n += e == &l.e[0];
	CHECK(n == 1, "group 0 on the idle list %u times", n);
	CHECK(l.s.active_weight == l.e[0].weight + l.e[1].weight +
				   l.e[2].weight,
	      "active weight %llu for three active groups of %u",
	      (unsigned long long)l.s.active_weight,
	      l.e[0].weight + l.e[1].weight + l.e[2].weight);
}

/*
 * A lease whose slots the free depth bounds still carries a whole
 * lease's units, as far as the window allows: the slots of its bios that
 * complete on its CPU come back to it, so it may send more bios than it
 * has slots.
 */
static void lease_units_beyond_slots(void)
{
	struct lease_sched l;
	u32 seed, whole = 0;

	for (seed = 1; seed <= 2000; seed++) {
		u32 units = 32 * 8, got;
		u64 room, inv;

		lease_setup(&l, IOBAND_POLICY_WEIGHT, seed);
		/* after the next bio, 8 of the depth free: 4 slots at most */
		l.s.conf.io_limit = l.s.nr_inflight + 9;
		if (!ioband_sched_start(&l.s, &l.e[0], 8, false, 1000))
			continue;
		inv = ioband_entity_inv_weight(&l.e[0]);
		room = (lease_window_end(&l) - l.e[0].vtime) / inv;
		got = lease_grant(&l, &l.e[0], 8, &units, 32);
		if (!got)
			continue;
		CHECK(got <= 4, "seed %u: %u slots with 8 of the depth free",
		      seed, got);
		CHECK(units == (room < 256 ? room : 256),
		      "seed %u: %u units for %u slots, room for %llu", seed,
		      units, got, (unsigned long long)room);
		whole += units == 256;
	}
	CHECK(whole > 1000, "only %u of 2000 leases carried 32 bios' units",
	      whole);
}

void lease_tests(void)
{
	RUN(lease_within_window);
	RUN(lease_return_whole);
	RUN(lease_as_admissions);
	RUN(lease_refused);
	RUN(lease_return_units_only);
	RUN(lease_units_beyond_slots);
}

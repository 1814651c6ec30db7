// SPDX-License-Identifier: GPL-2.0
/*
 * The limits' arithmetic (ioband_limit_set, ioband_limits_take and the
 * urgent charge): blktests' throtl/001, 003, 005 and 007 as
 * sequences of bios with their expected times, the bound over any window,
 * bursts, rate changes and the edges of the arithmetic.
 */
#include <string.h>
#include <linux/dm-ioband.h>
#include "unit.h"

#define MS	1000000ULL
#define SEC	1000000000ULL
/* far from boot, as a running system's clock */
#define T0	(1000 * SEC)

struct lim_run {
	struct ioband_limits ls;
	u64 now;
};

static void lim_init(struct lim_run *r)
{
	memset(r, 0, sizeof(*r));
	r->now = T0;
}

static void lim_set(struct lim_run *r, enum ioband_limit_kind k, u64 rate,
		    u64 burst_ns)
{
	ioband_limit_set(&r->ls.lim[k], rate, burst_ns, r->now);
}

/* When a bio that came at @at may go, asked without charging anything. */
static u64 lim_due(const struct ioband_limits *ls, bool write, u32 bytes,
		   u64 at)
{
	struct ioband_limits copy = *ls;

	return ioband_limits_take(&copy, write, bytes, at, at);
}

/* A bio that came at @at goes, charged from @at whenever it is due. */
static void lim_charge(struct ioband_limits *ls, bool write, u32 bytes,
		       u64 at)
{
	ioband_limits_take(ls, write, bytes, at, lim_due(ls, write, bytes, at));
}

/* A greedy submitter's next bio: it goes when due; returns that time. */
static u64 lim_send(struct lim_run *r, bool write, u32 bytes)
{
	u64 due = ioband_limits_take(&r->ls, write, bytes, r->now, r->now);

	if (due > r->now) {
		r->now = due;
		due = ioband_limits_take(&r->ls, write, bytes, r->now, r->now);
		CHECK(due <= r->now, "a bio due at %llu not taken then",
		      (unsigned long long)due);
	}
	return r->now;
}

/* throtl/001: 256 x 4 KiB at 1 MiB/s, or at 256 IOPS, take 1 s. */
static void test_limit_throtl_001(void)
{
	static const enum ioband_limit_kind kinds[] = {
		IOBAND_LIMIT_WBPS, IOBAND_LIMIT_WIOPS,
		IOBAND_LIMIT_RBPS, IOBAND_LIMIT_RIOPS,
	};
	unsigned int i, n;

	for (i = 0; i < 4; i++) {
		enum ioband_limit_kind k = kinds[i];
		bool write = k == IOBAND_LIMIT_WBPS || k == IOBAND_LIMIT_WIOPS;
		struct lim_run r;
		u64 first = 0, last = 0;

		lim_init(&r);
		lim_set(&r, k, k >= IOBAND_LIMIT_IOPS ? 256 : 1 << 20, 0);
		for (n = 0; n < 256; n++) {
			last = lim_send(&r, write, 4096);
			if (!n)
				first = last;
		}
		CHECK(last - T0 >= 999 * MS && last - T0 <= 1001 * MS,
		      "kind %d: the 256th bio went after %llu ns, want 1 s",
		      k, (unsigned long long)(last - T0));
		CHECK(first > T0,
		      "kind %d: the first bio went at once: the new limit lent budget",
		      k);
	}
}

/*
 * throtl/003: one 1 MiB bio under 1 MiB/s takes 1 s, and under 256 IOPS
 * as well where the device below takes 4 KiB a request: an IOPS limit
 * counts the 256 requests the bio becomes there.  On a device that takes
 * it whole it is one request (1 IOPS: 1 s).
 */
static void test_limit_throtl_003(void)
{
	static const struct {
		enum ioband_limit_kind kind;
		u64 rate;
		u32 max_io_bytes;
	} cases[] = {
		{ IOBAND_LIMIT_WBPS, 1 << 20, 4096 },
		{ IOBAND_LIMIT_WBPS, 1 << 20, 0 },
		{ IOBAND_LIMIT_WIOPS, 256, 4096 },
		{ IOBAND_LIMIT_WIOPS, 1, 1 << 20 },
		{ IOBAND_LIMIT_WIOPS, 1, 0 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct lim_run r;
		u64 t;

		lim_init(&r);
		r.ls.max_io_bytes = cases[i].max_io_bytes;
		lim_set(&r, cases[i].kind, cases[i].rate, 0);
		t = lim_send(&r, true, 1 << 20);
		CHECK(t - T0 == SEC,
		      "case %u: 1 MiB went after %llu ns, want 1 s", i,
		      (unsigned long long)(t - T0));
	}
}

/*
 * throtl/005: a 1 MiB write issued 0.1 s after a 512 KiB/s limit is set;
 * 0.9 s later the limit becomes 256 KiB/s.  blktests expects 3 s from the
 * issue: the budget saved at the old rate (0.9 s, 460.8 KiB, counted from
 * the issue as blk-throttle's slice starts there) is kept, the rest is
 * paid at the new rate.  Here the budget counts from the limit's setting:
 * 1 s at 512 KiB/s, then 512 KiB at 256 KiB/s, 3.0 s after the issue.
 */
static void test_limit_throtl_005(void)
{
	struct lim_run r;
	u64 due, issue;

	lim_init(&r);
	lim_set(&r, IOBAND_LIMIT_WBPS, 512 << 10, 0);
	r.now += 100 * MS;
	issue = r.now;
	due = lim_due(&r.ls, true, 1 << 20, r.now);
	CHECK(due - T0 == 2 * SEC, "due %llu ns after the limit, want 2 s",
	      (unsigned long long)(due - T0));
	r.now += 900 * MS;
	lim_set(&r, IOBAND_LIMIT_WBPS, 256 << 10, 0);
	due = lim_due(&r.ls, true, 1 << 20, r.now);
	CHECK(due - issue >= 2500 * MS && due - issue < 3500 * MS,
	      "went %llu ms after its issue, want 3 s (rounded)",
	      (unsigned long long)((due - issue) / MS));
	CHECK(due - T0 == 3 * SEC, "due %llu ns after the limit, want 3 s",
	      (unsigned long long)(due - T0));
}

/*
 * throtl/007: two 1 MiB writes at once under 1 MiB/s end after 1 s and
 * 2 s, with or without an IOPS limit far above them.
 */
static void test_limit_throtl_007(void)
{
	int with_iops;

	for (with_iops = 0; with_iops < 2; with_iops++) {
		struct lim_run r;
		u64 a, b;

		lim_init(&r);
		lim_set(&r, IOBAND_LIMIT_WBPS, 1 << 20, 0);
		if (with_iops)
			lim_set(&r, IOBAND_LIMIT_WIOPS, 1000000, 0);
		a = lim_send(&r, true, 1 << 20);
		b = lim_send(&r, true, 1 << 20);
		CHECK(a - T0 == SEC && b - T0 == 2 * SEC,
		      "iops %d: %llu and %llu ms, want 1000 and 2000", with_iops,
		      (unsigned long long)((a - T0) / MS),
		      (unsigned long long)((b - T0) / MS));
	}
}

/* A small deterministic generator, so a failure repeats. */
static u64 lim_rand(u64 *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/*
 * Over any interval of length W, a limit of rate R and burst B lets
 * through at most R * (W + B) plus one bio, whatever the sizes and the
 * pauses: a submitter that sleeps at random and sends bios of 512 B to
 * 1 MiB, checked over every window that starts at a bio.
 */
static void test_limit_window_bound(void)
{
	static const u64 bursts[] = { 0, 200 * MS, SEC };
	static u64 at[4096];
	static u32 size[4096];
	unsigned int b, i, j;
	u64 x = 88172645463325252ULL;

	for (b = 0; b < 3; b++) {
		u64 rate = 4 << 20, worst = 0;
		struct lim_run r;

		lim_init(&r);
		lim_set(&r, IOBAND_LIMIT_BPS, rate, bursts[b]);
		for (i = 0; i < 4096; i++) {
			if (lim_rand(&x) % 8 == 0)
				r.now += lim_rand(&x) % (2 * SEC);
			size[i] = 512 << (lim_rand(&x) % 12);
			at[i] = lim_send(&r, lim_rand(&x) & 1, size[i]);
		}
		for (i = 0; i < 4096; i++) {
			u64 sum = 0, allowed;

			for (j = i; j < 4096 && at[j] - at[i] < SEC; j++)
				sum += size[j];
			/* R * (1 s + B), plus the largest bio (1 MiB) */
			allowed = rate + rate * bursts[b] / SEC + (1 << 20);
			if (sum > allowed && sum - allowed > worst)
				worst = sum - allowed;
		}
		CHECK(!worst,
		      "burst %llu ms: a 1 s window held %llu bytes over rate x (1 s + burst) + one bio",
		      (unsigned long long)(bursts[b] / MS),
		      (unsigned long long)worst);
	}
}

/*
 * A burst of 1 s at 1 MiB/s: after a long pause, 1 MiB of 4 KiB bios
 * goes at once, then the bios are paced again.  Without a burst the pause
 * saves one bio's worth only.
 */
static void test_limit_burst(void)
{
	struct lim_run r;
	unsigned int n, at_once;

	lim_init(&r);
	lim_set(&r, IOBAND_LIMIT_RBPS, 1 << 20, SEC);
	r.now += 10 * SEC;
	for (n = at_once = 0; n < 512; n++)
		if (lim_send(&r, false, 4096) == T0 + 10 * SEC)
			at_once++;
	CHECK(at_once == 256, "%u bios at once after a pause, want 256",
	      at_once);
	CHECK(r.now - T0 - 10 * SEC == SEC,
	      "the other 256 took %llu ns, want 1 s",
	      (unsigned long long)(r.now - T0 - 10 * SEC));

	lim_init(&r);
	lim_set(&r, IOBAND_LIMIT_RBPS, 1 << 20, 0);
	r.now += 10 * SEC;
	for (n = at_once = 0; n < 8; n++)
		if (lim_send(&r, false, 4096) == T0 + 10 * SEC)
			at_once++;
	CHECK(at_once == 1, "without a burst %u bios went at once, want 1",
	      at_once);
}

/* Reads and writes: a read limit leaves writes alone, and so on. */
static void test_limit_directions(void)
{
	struct lim_run r;
	u64 t;

	lim_init(&r);
	lim_set(&r, IOBAND_LIMIT_RBPS, 1 << 20, 0);
	lim_set(&r, IOBAND_LIMIT_WIOPS, 10, 0);
	t = lim_send(&r, true, 1 << 20);
	CHECK(t - T0 == 100 * MS,
	      "a 1 MiB write waited %llu ns, want the write IOPS limit's 100 ms",
	      (unsigned long long)(t - T0));
	r.now = T0;
	t = lim_due(&r.ls, false, 4096, r.now);
	CHECK(t - T0 == 3906250,
	      "a 4 KiB read is due after %llu ns, want 3906250",
	      (unsigned long long)(t - T0));
	/* bytes and IOPS together: the slower one binds */
	lim_init(&r);
	lim_set(&r, IOBAND_LIMIT_BPS, 1 << 20, 0);
	lim_set(&r, IOBAND_LIMIT_IOPS, 100, 0);
	for (t = 0; t < 100; t++)
		lim_send(&r, t & 1, 4096);
	CHECK(r.now - T0 == SEC,
	      "100 bios of 4 KiB under 100 IOPS and 1 MiB/s took %llu ns, want 1 s",
	      (unsigned long long)(r.now - T0));
}

/*
 * Rate changes keep budget, not time: saved, owed, raised, lowered,
 * removed and set again (which starts empty), and rates so far apart
 * that the quotient would not fit.
 */
static void test_limit_rate_change(void)
{
	struct ioband_limit *l;
	struct lim_run r;

	lim_init(&r);
	l = &r.ls.lim[IOBAND_LIMIT_BPS];
	lim_set(&r, IOBAND_LIMIT_BPS, 1 << 20, 2 * SEC);
	r.now += 500 * MS;
	lim_set(&r, IOBAND_LIMIT_BPS, 2 << 20, 2 * SEC);
	CHECK(r.now - l->paid_to == 250 * MS,
	      "0.5 s saved at 1 MiB/s became %llu ns at 2 MiB/s, want 250 ms",
	      (unsigned long long)(r.now - l->paid_to));
	/* a debt: an urgent 1 MiB bio charged at once */
	lim_charge(&r.ls, false, 1 << 20, r.now);
	CHECK(l->paid_to - r.now == 250 * MS, "owed %llu ns, want 250 ms",
	      (unsigned long long)(l->paid_to - r.now));
	lim_set(&r, IOBAND_LIMIT_BPS, 1 << 20, 2 * SEC);
	CHECK(l->paid_to - r.now == 500 * MS,
	      "owed %llu ns at half the rate, want 500 ms",
	      (unsigned long long)(l->paid_to - r.now));
	/* removed, then set again: nothing saved */
	lim_set(&r, IOBAND_LIMIT_BPS, 0, 0);
	CHECK(lim_due(&r.ls, false, 1 << 20, r.now) == r.now,
	      "a removed limit still binds");
	r.now += 5 * SEC;
	lim_set(&r, IOBAND_LIMIT_BPS, 1 << 20, 2 * SEC);
	CHECK(l->paid_to == r.now, "a limit set again kept %llu ns",
	      (unsigned long long)(r.now - l->paid_to));
	/* 2^40 B/s to 1 B/s: bounded, no fault */
	lim_set(&r, IOBAND_LIMIT_IOPS, 1ULL << 40, 0);
	r.now += SEC;
	lim_set(&r, IOBAND_LIMIT_IOPS, 1, 0);
	CHECK(r.now - r.ls.lim[IOBAND_LIMIT_IOPS].paid_to <= 1ULL << 40,
	      "saved time unbounded");
}

/*
 * Near boot a change of rate may turn the budget saved into more time
 * than has passed since boot: it is bounded by now, not wrapped.
 */
static void test_limit_near_boot(void)
{
	struct ioband_limits ls;
	u64 due;

	memset(&ls, 0, sizeof(ls));
	ioband_limit_set(&ls.lim[IOBAND_LIMIT_BPS], 1 << 20, 10 * SEC, MS);
	due = lim_due(&ls, false, 4096, 2 * MS);
	CHECK(due == MS + 3906250,
	      "due at %llu ns, want 4906250 (set empty at 1 ms)",
	      (unsigned long long)due);
	/* 2 ms saved at 1 MiB/s are 2097 s at 1 B/s: since boot at most */
	ioband_limit_set(&ls.lim[IOBAND_LIMIT_BPS], 1, 10 * SEC, 3 * MS);
	CHECK(ls.lim[IOBAND_LIMIT_BPS].paid_to == 0,
	      "paid_to %llu after a change at 3 ms, want 0",
	      (unsigned long long)ls.lim[IOBAND_LIMIT_BPS].paid_to);
}

/*
 * The limited heap: groups come out in the order their bios may go, none
 * before its time, each once; *wake_at names the next time; a group
 * filed again moves; a cancelled one never comes out.  range-bw's heaps
 * are not touched (its groups held meanwhile keep their places).
 */
#define NLIM	64
static struct ioband_entity *lheap[IOBAND_HEAP_SLOTS(NLIM)];

static void test_limit_heap(void)
{
	static struct ioband_entity ents[NLIM];
	struct ioband_dg_conf conf;
	struct ioband_sched s;
	struct ioband_entity *e, *first, *early_one, *gone;
	u64 x = 2463534242ULL, now = T0, last = 0, wake;
	unsigned int i, out = 0, early = 0, order = 0, seen[NLIM] = { 0 };

	ioband_dg_conf_init(&conf);
	conf.policy = IOBAND_POLICY_RANGE_BW;
	ioband_sched_init(&s, &conf, lheap, NLIM);
	for (i = 0; i < NLIM; i++) {
		ioband_entity_prepare(&ents[i], 100);
		ioband_limit_wait(&s, &ents[i], T0 + lim_rand(&x) % SEC);
	}
	/*
	 * The first in line filed again last, a leaf that is not the last slot
	 * filed first, and one cancelled.
	 */
	first = s.heap[IOBAND_HEAP_LIMITED * s.heap_cap];
	ioband_limit_wait(&s, first, T0 + 2 * SEC);
	early_one = s.heap[IOBAND_HEAP_LIMITED * s.heap_cap + NLIM - 2];
	ioband_limit_wait(&s, early_one, T0);
	gone = early_one == &ents[1] ? &ents[2] : &ents[1];
	ioband_limit_cancel(&s, gone);
	CHECK(s.side_len[IOBAND_HEAP_FREE - 1] == 0 &&
	      s.side_len[IOBAND_HEAP_CAPPED - 1] == 0 &&
	      s.side_len[IOBAND_HEAP_MET - 1] == 0,
	      "the limited heap spilled into range-bw's");
	while (out < NLIM) {
		e = ioband_limit_next(&s, now, &wake);
		if (!e) {
			if (!wake)
				break;
			early += wake <= now;
			now = wake;
			continue;
		}
		if (!out)
			CHECK(e == early_one, "the group filed at T0 came out after another");
		out++;
		seen[e - ents]++;
		early += e->limit_due > now;
		order += e->limit_due < last;
		last = e->limit_due;
	}
	CHECK(out == NLIM - 1 && !seen[gone - ents],
	      "%u came out (the cancelled: %u), want %u", out,
	      seen[gone - ents], NLIM - 1);
	CHECK(!early, "%u came out before their time or woke in the past",
	      early);
	CHECK(!order, "%u out of order", order);
	CHECK(last == T0 + 2 * SEC && first->limit_idx < 0,
	      "the group filed again came out at %llu",
	      (unsigned long long)(last - T0));
	for (i = 0; i < NLIM; i++)
		CHECK(seen[i] <= 1, "group %u came out %u times", i, seen[i]);
}

/*
 * Urgent bios (metadata, a suspending device) go whatever the limits say;
 * their debt is forgiven beyond max(burst, span), so 1000 of them at once
 * delay the group's next bio by one span, not by 1000.
 */
static void test_limit_urgent_debt(void)
{
	struct lim_run r;
	u64 due;
	int i;

	lim_init(&r);
	lim_set(&r, IOBAND_LIMIT_WBPS, 1 << 20, 0);
	for (i = 0; i < 1000; i++)
		ioband_limits_charge_urgent(&r.ls, true, 4096, r.now);
	due = lim_due(&r.ls, true, 4096, r.now);
	CHECK(due - r.now <= 2 * 3906250ULL,
	      "next bio due %llu us after 1000 urgent ones, want <= 7813",
	      (unsigned long long)((due - r.now) / 1000));
	/* with a burst of 1 s, the debt may reach it, no further */
	lim_set(&r, IOBAND_LIMIT_WBPS, 1 << 20, SEC);
	for (i = 0; i < 1000; i++)
		ioband_limits_charge_urgent(&r.ls, true, 4096, r.now);
	due = lim_due(&r.ls, true, 4096, r.now);
	CHECK(due - r.now <= SEC + 3906250ULL,
	      "with a 1 s burst: next bio due %llu ms later, want <= 1004",
	      (unsigned long long)((due - r.now) / MS));
}

/*
 * A bio charged and then not sent (EAGAIN) is refunded: the bios after it
 * go as if it had never come.
 */
static void test_limit_refund(void)
{
	struct lim_run r, ref;
	int i;

	lim_init(&r);
	lim_set(&r, IOBAND_LIMIT_RIOPS, 256, 0);
	lim_set(&r, IOBAND_LIMIT_BPS, 1 << 20, 0);
	ref = r;
	for (i = 0; i < 10; i++)
		lim_send(&ref, false, 4096);
	for (i = 0; i < 10; i++) {
		lim_send(&r, false, 4096);
		/* an EAGAIN'd bio between each two */
		lim_charge(&r.ls, false, 4096, r.now);
		ioband_limits_refund(&r.ls, false, 4096);
	}
	CHECK(r.now == ref.now && !memcmp(&r.ls, &ref.ls, sizeof(r.ls)),
	      "10 bios with 10 refunded between them: %llu ns, alone %llu",
	      (unsigned long long)(r.now - T0),
	      (unsigned long long)(ref.now - T0));
}

void limit_tests(void)
{
	RUN(test_limit_throtl_001);
	RUN(test_limit_throtl_003);
	RUN(test_limit_throtl_005);
	RUN(test_limit_throtl_007);
	RUN(test_limit_window_bound);
	RUN(test_limit_burst);
	RUN(test_limit_directions);
	RUN(test_limit_rate_change);
	RUN(test_limit_near_boot);
	RUN(test_limit_heap);
	RUN(test_limit_urgent_debt);
	RUN(test_limit_refund);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Latency statistics (dm-ioband-policy.c): the buckets' edges, the
 * percentiles against exact ones, the two one-second windows, saturation.
 */
#include <stdlib.h>
#include <string.h>
#include <linux/dm-ioband.h>
#include "unit.h"

#define NS_PER_SEC	1000000000ULL
#define NS_PER_MS	1000000ULL

/* Every bucket holds its lower edge and the nanosecond below its top. */
static void lat_bucket_edges(void)
{
	u32 b;

	CHECK(ioband_lat_bucket(0) == 0 && ioband_lat_bucket(1023) == 0,
	      "under 1024 ns: bucket 0");
	CHECK(ioband_lat_bucket(1024) == 1, "1024 ns: bucket %u",
	      ioband_lat_bucket(1024));
	CHECK(ioband_lat_bucket(1ULL << 35) == IOBAND_LAT_BUCKETS - 1 &&
	      ioband_lat_bucket(~0ULL) == IOBAND_LAT_BUCKETS - 1,
	      "2^35 ns and more: the last bucket");
	for (b = 1; b < IOBAND_LAT_BUCKETS - 1; b++) {
		u64 lo = ioband_lat_bucket_top(b - 1);
		u64 top = ioband_lat_bucket_top(b);

		CHECK(ioband_lat_bucket(lo) == b, "%llu ns: bucket %u, want %u",
		      (unsigned long long)lo, ioband_lat_bucket(lo), b);
		CHECK(ioband_lat_bucket(top - 1) == b,
		      "%llu ns: bucket %u, want %u",
		      (unsigned long long)(top - 1),
		      ioband_lat_bucket(top - 1), b);
		CHECK(top * 4 <= lo * 5, "bucket %u: top %llu over 1.25 x %llu",
		      b, (unsigned long long)top, (unsigned long long)lo);
	}
}

static u32 lat_n(const struct ioband_lat *l, enum ioband_lat_kind kind)
{
	return ioband_lat_count(l, kind);
}

static u64 lat_p(const struct ioband_lat *l, enum ioband_lat_kind kind,
		 u32 pct)
{
	return ioband_lat_percentile(l, kind, pct);
}

static int lat_cmp(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* The exact @pct-th percentile of @n sorted durations, by the same rank. */
static u64 lat_exact(const u64 *sorted, u32 n, u32 pct)
{
	u32 rank = ((u64)n * pct + 99) / 100;

	return sorted[rank - 1];
}

/*
 * 3000 durations spread from 0.5 us to 8 s: every percentile is at or
 * above the exact one and at most 25 % above it (or within bucket 0).
 */
static void lat_percentiles(void)
{
	static const u32 pcts[] = { 1, 10, 50, 90, 99, 100 };
	struct ioband_lat l = { .cur_start = 5 * NS_PER_SEC };
	u64 d[3000], seed = 12345;
	u32 i;

	for (i = 0; i < 3000; i++) {
		u64 base;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		/* spread over the powers of two from 500 ns to about 8 s */
		base = 500ULL << ((seed >> 33) % 24);
		d[i] = base + (seed >> 7) % base;
		ioband_lat_add(&l, d[i], d[i] / 2, 5 * NS_PER_SEC);
	}
	qsort(d, 3000, sizeof(d[0]), lat_cmp);
	CHECK(lat_n(&l, IOBAND_LAT_WAIT) == 3000 &&
	      lat_n(&l, IOBAND_LAT_DEV) == 3000, "counts %u %u",
	      lat_n(&l, IOBAND_LAT_WAIT), lat_n(&l, IOBAND_LAT_DEV));
	for (i = 0; i < ARRAY_SIZE(pcts); i++) {
		u64 exact = lat_exact(d, 3000, pcts[i]);
		u64 got = lat_p(&l, IOBAND_LAT_WAIT, pcts[i]);

		CHECK(got > exact && (exact < 1024 || got * 4 <= exact * 5),
		      "p%u: %llu ns, exact %llu", pcts[i],
		      (unsigned long long)got, (unsigned long long)exact);
	}
}

/* The rank rounds up: of 99 x 1 ms and 2 x 100 ms, the 100th is 100 ms. */
static void lat_rank(void)
{
	struct ioband_lat l = { };
	u32 i;

	for (i = 0; i < 99; i++)
		ioband_lat_add(&l, NS_PER_MS, 0, 0);
	ioband_lat_add(&l, 100 * NS_PER_MS, 0, 0);
	ioband_lat_add(&l, 100 * NS_PER_MS, 0, 0);
	CHECK(lat_p(&l, IOBAND_LAT_WAIT, 99) >= 100 * NS_PER_MS,
	      "p99 of 99 x 1 ms, 2 x 100 ms: %llu",
	      (unsigned long long)lat_p(&l, IOBAND_LAT_WAIT, 99));
	CHECK(lat_p(&l, IOBAND_LAT_WAIT, 50) < 2 * NS_PER_MS,
	      "p50: %llu",
	      (unsigned long long)lat_p(&l, IOBAND_LAT_WAIT, 50));
	CHECK(lat_p(&l, IOBAND_LAT_DEV, 50) == 1024,
	      "0 ns: the top of bucket 0, got %llu",
	      (unsigned long long)lat_p(&l, IOBAND_LAT_DEV, 50));
	memset(&l, 0, sizeof(l));
	CHECK(!lat_p(&l, IOBAND_LAT_WAIT, 50), "an empty histogram: 0");
}

/*
 * A bio counts for the rest of its second and all of the next, in both
 * histograms, then is gone; the percentiles are of both seconds; a clock
 * read behind the current second's start (another CPU's) ages nothing;
 * two seconds or more with no bio leave nothing and start afresh.
 */
static void lat_windows(void)
{
	struct ioband_lat l = { .cur_start = 10 * NS_PER_SEC };
	u32 i;

	/* a lone bio, its wait and its device time in different buckets */
	ioband_lat_add(&l, 0, 7 * NS_PER_MS, 10 * NS_PER_SEC);
	ioband_lat_age(&l, 11 * NS_PER_SEC + 9 * NS_PER_SEC / 10);
	CHECK(lat_n(&l, IOBAND_LAT_WAIT) == 1 && lat_n(&l, IOBAND_LAT_DEV) == 1,
	      "a lone bio 1.9 s on: %u %u", lat_n(&l, IOBAND_LAT_WAIT),
	      lat_n(&l, IOBAND_LAT_DEV));
	CHECK(lat_p(&l, IOBAND_LAT_DEV, 99) >= 7 * NS_PER_MS &&
	      lat_p(&l, IOBAND_LAT_DEV, 99) * 4 <= 7 * NS_PER_MS * 5,
	      "its device time 1.9 s on: %llu",
	      (unsigned long long)lat_p(&l, IOBAND_LAT_DEV, 99));
	ioband_lat_age(&l, 11 * NS_PER_SEC);
	CHECK(lat_n(&l, IOBAND_LAT_DEV) == 1, "a clock behind: %u",
	      lat_n(&l, IOBAND_LAT_DEV));
	ioband_lat_age(&l, 12 * NS_PER_SEC);
	CHECK(!lat_n(&l, IOBAND_LAT_WAIT) && !lat_n(&l, IOBAND_LAT_DEV),
	      "the lone bio 2 s on: %u %u", lat_n(&l, IOBAND_LAT_WAIT),
	      lat_n(&l, IOBAND_LAT_DEV));
	CHECK(l.cur_start == 12 * NS_PER_SEC, "the second began at %llu",
	      (unsigned long long)l.cur_start);

	/* 50 of 5 ms in one second, 40 of 200 ms in the next: all count */
	for (i = 0; i < 50; i++)
		ioband_lat_add(&l, 5 * NS_PER_MS, 0, 12 * NS_PER_SEC + i);
	for (i = 0; i < 40; i++)
		ioband_lat_add(&l, 200 * NS_PER_MS, 0,
			       13 * NS_PER_SEC + NS_PER_SEC / 2);
	CHECK(lat_n(&l, IOBAND_LAT_WAIT) == 90, "50 + 40: %u",
	      lat_n(&l, IOBAND_LAT_WAIT));
	CHECK(lat_p(&l, IOBAND_LAT_WAIT, 50) >= 5 * NS_PER_MS &&
	      lat_p(&l, IOBAND_LAT_WAIT, 50) < 7 * NS_PER_MS,
	      "p50 of 50 x 5 ms and 40 x 200 ms: %llu",
	      (unsigned long long)lat_p(&l, IOBAND_LAT_WAIT, 50));
	/* a second on, the 50 are gone and 10 new of 1 ms come */
	for (i = 0; i < 10; i++)
		ioband_lat_add(&l, NS_PER_MS, 0, 14 * NS_PER_SEC + 1);
	CHECK(lat_n(&l, IOBAND_LAT_WAIT) == 50, "40 + 10: %u",
	      lat_n(&l, IOBAND_LAT_WAIT));
	CHECK(lat_p(&l, IOBAND_LAT_WAIT, 50) >= 200 * NS_PER_MS,
	      "the 200 ms ones are the median: %llu",
	      (unsigned long long)lat_p(&l, IOBAND_LAT_WAIT, 50));
	ioband_lat_age(&l, 40 * NS_PER_SEC);
	CHECK(!lat_n(&l, IOBAND_LAT_WAIT) && !lat_n(&l, IOBAND_LAT_DEV),
	      "26 s on: %u left", lat_n(&l, IOBAND_LAT_WAIT));
	CHECK(l.cur_start == 40 * NS_PER_SEC, "the second began at %llu",
	      (unsigned long long)l.cur_start);
}

/* A count stops at 65535 instead of wrapping to a few. */
static void lat_saturation(void)
{
	struct ioband_lat l = { };
	u32 i;

	for (i = 0; i < 70000; i++)
		ioband_lat_add(&l, 3 * NS_PER_MS, 100000, 0);
	CHECK(lat_n(&l, IOBAND_LAT_WAIT) == 65535, "count %u",
	      lat_n(&l, IOBAND_LAT_WAIT));
	CHECK(lat_p(&l, IOBAND_LAT_DEV, 99) > 100000 &&
	      lat_p(&l, IOBAND_LAT_DEV, 99) <= 125000, "p99 %llu",
	      (unsigned long long)lat_p(&l, IOBAND_LAT_DEV, 99));
}

void lat_tests(void)
{
	RUN(lat_bucket_edges);
	RUN(lat_percentiles);
	RUN(lat_rank);
	RUN(lat_windows);
	RUN(lat_saturation);
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The model device's cost arithmetic: how long the device is busy with one
 * request.  Pure, like drivers/md/dm-ioband-policy.c: no lock, no clock, no
 * allocation, so the same source serves the blk-mq model device that the VM
 * tests and benchmarks run on (tests/modeldev/iobmodel.c) and the
 * discrete-event device of the userspace tests (tests/unit), and a test can
 * compare what the two say about the same request stream.
 *
 * The model.  The device has @channels servers.  A request waits for a
 * free channel (first come, first served), then occupies it for
 *
 *	base[dir] + size_kib * per_kib[dir] + seek(distance)
 *
 * where dir is read or write, and distance is how far the request starts
 * from where the previous request to start service ended (one head for the
 * whole device, as on a disk; a profile without seek cost ignores it):
 *
 *	seek = 0                                   distance 0 (sequential)
 *	seek = seek_min + (seek_max - seek_min) * distance / capacity
 *
 * A write to a device with a volatile cache (cache_kib > 0) costs a quarter
 * of its transfer (per_kib[write] / 4 a KiB) while the cache has room; what
 * it saves is owed
 * as dirty data and paid by the next flush (REQ_PREFLUSH), which costs
 * flush_base plus the dirty KiB at the write's full cost per KiB.  A write
 * that finds the cache full is written through at full cost.  A FUA write
 * is written through.  Discards cost base[write].
 *
 * Every cost is in nanoseconds; sizes in 512-byte sectors.
 */
#ifndef IOBAND_MODEL_H
#define IOBAND_MODEL_H

#include <linux/string.h>
#include <linux/types.h>

enum iobm_dir { IOBM_READ, IOBM_WRITE, IOBM_NR_DIRS };

struct iobm_profile {
	const char *name;
	u32 channels;		/* requests served at once */
	u64 base_ns[IOBM_NR_DIRS];	/* fixed cost per request */
	u64 per_kib_ns[IOBM_NR_DIRS];	/* cost per KiB transferred */
	u64 seek_min_ns;	/* a seek of one sector */
	u64 seek_max_ns;	/* a seek across the whole device */
	u64 capacity_sectors;	/* the distance of a full seek */
	u64 cache_kib;		/* volatile write cache, 0: none */
	u64 flush_base_ns;	/* a flush's fixed cost */
};

/* The device's state that costs depend on. */
struct iobm_state {
	u64 head;		/* where the last request to start ended */
	u64 dirty_kib;		/* cached writes a flush still owes */
};

struct iobm_req {
	enum iobm_dir dir;
	u64 sector;
	u32 sectors;
	bool flush;		/* REQ_PREFLUSH: pay for the cache first */
	bool fua;		/* write through the cache */
	bool discard;
};

static inline u64 iobm_seek_ns(const struct iobm_profile *p, u64 from, u64 to)
{
	u64 d = from > to ? from - to : to - from;

	if (!d || !p->seek_max_ns)
		return 0;
	if (d >= p->capacity_sectors)
		return p->seek_max_ns;
	/* at most 2^40 sectors times at most 2^24 ns: no overflow */
	return p->seek_min_ns +
	       (p->seek_max_ns - p->seek_min_ns) * d / p->capacity_sectors;
}

/*
 * How long @r occupies a channel once it starts service, and the state
 * after it.  Requests start in the order the device chose; the caller
 * calls this when a channel takes @r.
 */
static inline u64 iobm_service_ns(const struct iobm_profile *p,
				  struct iobm_state *st,
				  const struct iobm_req *r)
{
	u64 kib = (r->sectors + 1) / 2;
	u64 ns = 0;

	if (r->flush) {
		if (p->cache_kib)
			ns += p->flush_base_ns +
			      st->dirty_kib * p->per_kib_ns[IOBM_WRITE];
		st->dirty_kib = 0;
	}
	if (!r->sectors)
		return ns;
	if (r->discard) {
		st->head = r->sector + r->sectors;
		return ns + p->base_ns[IOBM_WRITE];
	}
	ns += iobm_seek_ns(p, st->head, r->sector);
	st->head = r->sector + r->sectors;
	if (r->dir == IOBM_WRITE && p->cache_kib && !r->fua &&
	    st->dirty_kib + kib <= p->cache_kib) {
		st->dirty_kib += kib;
		return ns + kib * p->per_kib_ns[IOBM_WRITE] / 4;
	}
	return ns + p->base_ns[r->dir] + kib * p->per_kib_ns[r->dir];
}

/*
 * The profiles the tests and benchmarks name (the model device's profile=
 * parameter; iobm_profile_get() here).  Each field can then be set on its
 * own.
 *
 * ssd:  4 channels, reads 100 us + 4 us/KiB, writes 400 us + 12 us/KiB
 *       (a 4 KiB write costs 3.5 times a 4 KiB read), no seek.
 * nvme: 32 channels, reads 20 us + 1 us/KiB, writes 30 us + 2 us/KiB.
 * disk: 1 channel, reads and writes 100 us + 10 us/KiB (about 100 MB/s
 *       sequential), seeks from 0.5 ms to 8 ms across 1 GiB.
 *
 * Under TCG the guest completes a few thousand I/Os a second in all, so
 * with ssd and disk the device, not the guest's CPU, is what is shared;
 * nvme is there for depth, and is CPU-bound under TCG.
 */
static inline bool iobm_profile_get(const char *name, struct iobm_profile *p)
{
	static const struct iobm_profile ssd = {
		.name = "ssd", .channels = 4,
		.base_ns = { 100000, 400000 },
		.per_kib_ns = { 4000, 12000 },
	};
	static const struct iobm_profile nvme = {
		.name = "nvme", .channels = 32,
		.base_ns = { 20000, 30000 },
		.per_kib_ns = { 1000, 2000 },
	};
	static const struct iobm_profile disk = {
		.name = "disk", .channels = 1,
		.base_ns = { 100000, 100000 },
		.per_kib_ns = { 10000, 10000 },
		.seek_min_ns = 500000, .seek_max_ns = 8000000,
		.capacity_sectors = 2ULL << 20,
	};

	if (!strcmp(name, "ssd"))
		*p = ssd;
	else if (!strcmp(name, "nvme"))
		*p = nvme;
	else if (!strcmp(name, "disk"))
		*p = disk;
	else
		return false;
	return true;
}

#endif /* IOBAND_MODEL_H */

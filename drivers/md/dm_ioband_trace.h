/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of the ioband target: a bio entering map() (its flags say
 * whether it is REQ_NOWAIT), a bio held in its group's queue, a held bio
 * released to the device below, a bio whose submitter waits for room in
 * its full group (once per wait), a REQ_NOWAIT bio ended with
 * BLK_STS_AGAIN because it would have been held, and a lease granted to
 * a CPU (the bios it may send without the device group's lock, and their
 * cost in the scheduler's units).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM ioband

#if !defined(_DM_IOBAND_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _DM_IOBAND_TRACE_H

#include <linux/tracepoint.h>
#include <linux/blk_types.h>

DECLARE_EVENT_CLASS(ioband_bio,
		    TP_PROTO(const char *dg_name, s64 group_id, struct bio *bio),
		    TP_ARGS(dg_name, group_id, bio),
		    TP_STRUCT__entry(__array(char, dg_name, 32)
				     __field(s64, group_id)
				     __field(sector_t, sector)
				     __field(unsigned int, nr_sector)
				     __field(unsigned int, opf)
				     __field(bool, nowait)
				     __field(bool, polled)),
		    TP_fast_assign(strscpy(__entry->dg_name, dg_name,
					   sizeof(__entry->dg_name));
				   __entry->group_id = group_id;
				   __entry->sector = bio->bi_iter.bi_sector;
				   __entry->nr_sector = bio_sectors(bio);
				   __entry->opf = bio->bi_opf;
				   __entry->nowait = bio->bi_opf & REQ_NOWAIT;
				   __entry->polled = bio->bi_opf & REQ_POLLED;),
		    TP_printk("dg=%s group=%lld sector=%llu nr_sector=%u opf=0x%x nowait=%d polled=%d",
			      __entry->dg_name, __entry->group_id,
			      (unsigned long long)__entry->sector,
			      __entry->nr_sector, __entry->opf,
			      __entry->nowait, __entry->polled));

DEFINE_EVENT(ioband_bio, ioband_map,
	     TP_PROTO(const char *dg_name, s64 group_id, struct bio *bio),
	     TP_ARGS(dg_name, group_id, bio));

DEFINE_EVENT(ioband_bio, ioband_hold,
	     TP_PROTO(const char *dg_name, s64 group_id, struct bio *bio),
	     TP_ARGS(dg_name, group_id, bio));

DEFINE_EVENT(ioband_bio, ioband_release,
	     TP_PROTO(const char *dg_name, s64 group_id, struct bio *bio),
	     TP_ARGS(dg_name, group_id, bio));

DEFINE_EVENT(ioband_bio, ioband_wait,
	     TP_PROTO(const char *dg_name, s64 group_id, struct bio *bio),
	     TP_ARGS(dg_name, group_id, bio));

DEFINE_EVENT(ioband_bio, ioband_again,
	     TP_PROTO(const char *dg_name, s64 group_id, struct bio *bio),
	     TP_ARGS(dg_name, group_id, bio));

TRACE_EVENT(ioband_lease,
	    TP_PROTO(const char *dg_name, s64 group_id, u32 slots, u32 units),
	    TP_ARGS(dg_name, group_id, slots, units),
	    TP_STRUCT__entry(__array(char, dg_name, 32)
			     __field(s64, group_id)
			     __field(u32, slots)
			     __field(u32, units)),
	    TP_fast_assign(strscpy(__entry->dg_name, dg_name,
				   sizeof(__entry->dg_name));
			   __entry->group_id = group_id;
			   __entry->slots = slots;
			   __entry->units = units;),
	    TP_printk("dg=%s group=%lld slots=%u units=%u",
		      __entry->dg_name, __entry->group_id,
		      __entry->slots, __entry->units));

#endif /* _DM_IOBAND_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE dm_ioband_trace
#include <trace/define_trace.h>

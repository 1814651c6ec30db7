/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of the ioband target: a bio held in its group's queue, a
 * held bio released to the device below, and a bio whose submitter waits
 * for room in its full group (once per wait).
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
				     __field(unsigned int, opf)),
		    TP_fast_assign(strscpy(__entry->dg_name, dg_name,
					   sizeof(__entry->dg_name));
				   __entry->group_id = group_id;
				   __entry->sector = bio->bi_iter.bi_sector;
				   __entry->nr_sector = bio_sectors(bio);
				   __entry->opf = bio->bi_opf;),
		    TP_printk("dg=%s group=%lld sector=%llu nr_sector=%u opf=0x%x",
			      __entry->dg_name, __entry->group_id,
			      (unsigned long long)__entry->sector,
			      __entry->nr_sector, __entry->opf));

DEFINE_EVENT(ioband_bio, ioband_hold,
	     TP_PROTO(const char *dg_name, s64 group_id, struct bio *bio),
	     TP_ARGS(dg_name, group_id, bio));

DEFINE_EVENT(ioband_bio, ioband_release,
	     TP_PROTO(const char *dg_name, s64 group_id, struct bio *bio),
	     TP_ARGS(dg_name, group_id, bio));

DEFINE_EVENT(ioband_bio, ioband_wait,
	     TP_PROTO(const char *dg_name, s64 group_id, struct bio *bio),
	     TP_ARGS(dg_name, group_id, bio));

#endif /* _DM_IOBAND_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE dm_ioband_trace
#include <trace/define_trace.h>

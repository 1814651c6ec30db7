/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-ioband: the configuration grammar and the scheduling arithmetic
 * shared by the ioband target (drivers/md/dm-ioband.c), the policy module
 * (drivers/md/dm-ioband-policy.c) and their userspace builds (tests/unit,
 * fuzzers, simulation).
 *
 * Nothing declared here takes a lock, allocates or reads a clock: the
 * caller owns the memory and serialises every call on one device group
 * with that device group's lock, and time, where a policy needs it, comes
 * in as an argument in nanoseconds.
 */
#ifndef _LINUX_DM_IOBAND_H
#define _LINUX_DM_IOBAND_H

#include <linux/types.h>

#define IOBAND_DG_NAME_MAX	31	/* characters in a device group id */
#define IOBAND_WEIGHT_MIN	1
#define IOBAND_WEIGHT_MAX	10000
#define IOBAND_DEFAULT_WEIGHT	100
#define IOBAND_DEFAULT_GROUP	(-1LL)	/* id of every device's default group */
#define IOBAND_MAX_GROUPS	65536	/* attached groups per ioband device */

#define IOBAND_IO_LIMIT_MAX	65536
#define IOBAND_TOKEN_BASE_MAX	1048576
#define IOBAND_CARRYOVER_MAX	100
#define IOBAND_DEFAULT_IO_LIMIT		128
#define IOBAND_DEFAULT_IO_THROTTLE	0	/* never run past the window */
#define IOBAND_DEFAULT_TOKEN_BASE	256
#define IOBAND_DEFAULT_CARRYOVER	2
/* How long a group with nothing held or in flight still counts as busy. */
#define IOBAND_DEFAULT_IDLE_NS		(2 * 1000 * 1000ULL)

/*
 * range-bw token buckets hold this much time's worth of a group's rate:
 * the burst a capped group may have above its cap, and the catch-up a
 * group below its minimum may claim at once.
 */
#define IOBAND_RANGE_BURST_NS	(50 * 1000 * 1000LL)

/* A token is one 4 KiB I/O; costs are kept in 512-byte sectors. */
#define IOBAND_SECTORS_PER_TOKEN	8

enum ioband_group_type {
	IOBAND_TYPE_NONE,
	IOBAND_TYPE_USER,
	IOBAND_TYPE_GID,
	IOBAND_TYPE_PID,
	IOBAND_TYPE_PGRP,
	IOBAND_TYPE_CGROUP,
	IOBAND_NR_TYPES
};

enum ioband_policy {
	IOBAND_POLICY_WEIGHT,
	IOBAND_POLICY_WEIGHT_IOSIZE,
	IOBAND_POLICY_RANGE_BW,
	IOBAND_NR_POLICIES
};

/* One group's configuration, as written in a table line or a message. */
struct ioband_group_conf {
	s64 id;			/* IOBAND_DEFAULT_GROUP for the default group */
	u32 weight;		/* weight policies */
	u32 min_kbps;		/* range-bw */
	u32 max_kbps;		/* range-bw, 0: no cap */
};

/* Settings shared by every ioband device of one device group. */
struct ioband_dg_conf {
	enum ioband_policy policy;
	u32 io_throttle;
	u32 io_limit;
	u32 token_base;
	u32 carryover;
	u32 bandwidth;		/* KB/s the device serves, 0: not stated */
};

/*
 * A parsed table line, without its leading <device>.  The caller provides
 * @groups with room for one entry per argument.
 */
struct ioband_table {
	char dg_name[IOBAND_DG_NAME_MAX + 1];
	struct ioband_dg_conf dg;
	enum ioband_group_type type;
	struct ioband_group_conf def;
	u32 nr_groups;
	struct ioband_group_conf *groups;
};

enum ioband_msg_kind {
	IOBAND_MSG_WEIGHT,
	IOBAND_MSG_RANGE_BW,
	IOBAND_MSG_TOKEN,
	IOBAND_MSG_CARRYOVER,
	IOBAND_MSG_IO_THROTTLE,
	IOBAND_MSG_IO_LIMIT,
	IOBAND_MSG_BANDWIDTH,
	IOBAND_MSG_TYPE,
	IOBAND_MSG_POLICY,
	IOBAND_MSG_ATTACH,
	IOBAND_MSG_DETACH,
	IOBAND_MSG_RESET,
};

struct ioband_msg {
	enum ioband_msg_kind kind;
	struct ioband_group_conf group;	/* weight, range-bw, attach, detach */
	u32 value;	/* token, carryover, io_throttle, io_limit, bandwidth */
	enum ioband_group_type type;
	enum ioband_policy policy;
};

const char *ioband_type_name(enum ioband_group_type type);
const char *ioband_policy_name(enum ioband_policy policy);
void ioband_dg_conf_init(struct ioband_dg_conf *conf);
int ioband_parse_table(unsigned int argc, char **argv, struct ioband_table *t,
		       char **error);
int ioband_parse_message(unsigned int argc, char **argv,
			 struct ioband_msg *msg, char **error);
int ioband_check_group_id(enum ioband_group_type type, s64 id,
			  char **error);
int ioband_dg_conf_update(struct ioband_dg_conf *conf,
			  const struct ioband_msg *msg, char **error);
int ioband_check_min_sum(const struct ioband_dg_conf *conf, u64 sum_kbps,
			 char **error);

/*
 * Scheduling.  A group's entity tracks the virtual time it has consumed;
 * the device group's scheduler keeps the virtual clock, the in-flight
 * count and a heap of the groups that hold bios.  See the top comment of
 * drivers/md/dm-ioband.c for the model.
 */
struct ioband_entity {
	u64 vtime;		/* virtual time the group has been served to */
	u64 vtime_epoch;	/* ioband_sched_epoch() when vtime was last set */
	u64 inv_weight;		/* IOBAND_VSCALE / weight */
	u32 weight;
	u32 nr_queued;		/* bios held for this group */
	u32 nr_inflight;	/* bios released and not yet completed */
	s32 heap_idx;		/* slot in ioband_sched.heap, -1 if none */
	bool active;		/* its weight is in active_weight */
	bool parallel;		/* had two bios at once since it became active */
	u64 idle_since;		/* when it last had nothing held or in flight */
	/* on ioband_sched's idle list while active with nothing to do */
	struct ioband_entity *idle_prev, *idle_next;
	/* range-bw: token buckets in sector-nanoseconds, see policy.c */
	u32 min_kbps;
	u32 max_kbps;		/* 0: no cap */
	s64 cap_tokens;
	s64 min_tokens;
	u64 refilled_at;
};

struct ioband_sched {
	struct ioband_dg_conf conf;
	u64 vclock;		/* the device group's virtual clock */
	u64 vclock_wraps;	/* times vclock has wrapped past 2^64 */
	u64 window;		/* how far past the clock a group may run */
	u64 window_weight;	/* the active weight window was shared by */
	u64 base_window;	/* the least window: total weight's share */
	u64 carry;		/* how far behind it a group may stay */
	u64 total_weight;	/* all groups, busy or idle */
	u32 nr_entities;	/* all groups */
	u64 active_weight;	/* groups with bios held or in flight */
	u32 nr_inflight;
	u64 idle_ns;		/* grace before an idle group stops counting */
	u32 nr_active;		/* groups whose weight is in active_weight */
	struct ioband_entity *idle_head, *idle_tail;	/* oldest first */
	u32 heap_len;
	u32 heap_cap;
	struct ioband_entity **heap;	/* groups holding bios, by vtime */
};

#define IOBAND_VSCALE	4294967296ULL

/*
 * The clock's epoch: how many eighths of 2^64 it has run since the device
 * group began.  A group whose virtual time was last set two or more epochs
 * ago is behind the clock by more than 2^61, whatever the difference of
 * the two 64-bit times says; see "Virtual time" in drivers/md/dm-ioband.c.
 */
static inline u64 ioband_sched_epoch(const struct ioband_sched *s)
{
	return s->vclock_wraps << 3 | s->vclock >> 61;
}

void ioband_sched_init(struct ioband_sched *s, const struct ioband_dg_conf *c,
		       struct ioband_entity **heap, u32 heap_cap);
void ioband_sched_set_conf(struct ioband_sched *s,
			   const struct ioband_dg_conf *conf);
struct ioband_entity **ioband_sched_swap_heap(struct ioband_sched *s,
					      struct ioband_entity **heap,
					      u32 heap_cap);
void ioband_entity_prepare(struct ioband_entity *e, u32 weight);
void ioband_entity_join(struct ioband_sched *s, struct ioband_entity *e);
void ioband_entity_init(struct ioband_sched *s, struct ioband_entity *e,
			u32 weight);
void ioband_entity_set_weight(struct ioband_sched *s, struct ioband_entity *e,
			      u32 weight);
void ioband_entity_set_range(struct ioband_entity *e, u32 min_kbps,
			     u32 max_kbps, u64 now);
void ioband_entity_exit(struct ioband_sched *s, struct ioband_entity *e);
void ioband_entity_forget(struct ioband_sched *s, struct ioband_entity *e);

/*
 * What a bio costs in tokens: one per bio under weight, its sectors under
 * weight-iosize and range-bw.  Discards and write-zeroes carry no data
 * through the bus: they cost one token whatever range they name.  Inline,
 * like ioband_sched_needs_clock(): both run for every bio.
 */
static inline u32 ioband_bio_cost(const struct ioband_sched *s, u32 sectors,
				  bool has_data)
{
	if (s->conf.policy == IOBAND_POLICY_WEIGHT || !has_data)
		return IOBAND_SECTORS_PER_TOKEN;
	return sectors ? sectors : 1;
}

/*
 * Whether the next event on @s concerning @e reads @now: to expire idle
 * groups, to start @e's grace, or to fill range-bw buckets.  When not, the
 * caller may pass 0 and save reading the clock on the fast path.
 */
static inline bool ioband_sched_needs_clock(const struct ioband_sched *s,
					    const struct ioband_entity *e)
{
	return s->idle_head || e->parallel ||
	       s->conf.policy == IOBAND_POLICY_RANGE_BW;
}

void ioband_sched_dispatch(struct ioband_sched *s, struct ioband_entity *e,
			   u32 cost, bool held, bool bypass);
bool ioband_sched_start(struct ioband_sched *s, struct ioband_entity *e,
			u32 cost, bool bypass, u64 now);
struct ioband_entity *ioband_sched_next(struct ioband_sched *s, u64 now,
					u64 *wake_at);
void ioband_sched_idle_add(struct ioband_sched *s, struct ioband_entity *e,
			   u64 now);

/*
 * A group with nothing held or in flight keeps its share for idle_ns if it
 * has had more than one bio in the scheduler at once since it became
 * active: its I/O comes from several submitters (or an asynchronous one),
 * so a moment with nothing in flight means they are between two I/Os.  A
 * group that has only ever had one bio at a time is a single synchronous
 * stream whose pauses are its own: holding the others back during them
 * would only leave the device idle, so it gives its share up at once.
 * Inline, like ioband_sched_complete(): every completion runs it.
 */
static inline void ioband_sched_maybe_idle(struct ioband_sched *s,
					   struct ioband_entity *e, u64 now)
{
	if (!e->active || e->nr_queued || e->nr_inflight)
		return;
	if (e->parallel) {
		ioband_sched_idle_add(s, e, now);
		return;
	}
	e->active = false;
	s->active_weight -= e->weight;
	s->nr_active--;
}

/* A bio of @e has completed. */
static inline void ioband_sched_complete(struct ioband_sched *s,
					 struct ioband_entity *e, u64 now)
{
	e->nr_inflight--;
	s->nr_inflight--;
	ioband_sched_maybe_idle(s, e, now);
}

void ioband_sched_move_held(struct ioband_sched *s, struct ioband_entity *from,
			    struct ioband_entity *to, u64 now);
void ioband_entity_restart(struct ioband_sched *s, struct ioband_entity *e);

#endif /* _LINUX_DM_IOBAND_H */

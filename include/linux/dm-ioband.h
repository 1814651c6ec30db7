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

#include <linux/bits.h>
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
	IOBAND_TYPE_CGROUP_TREE,	/* cgroups, weights shared down the tree */
	IOBAND_NR_TYPES
};

enum ioband_policy {
	IOBAND_POLICY_WEIGHT,
	IOBAND_POLICY_WEIGHT_IOSIZE,
	IOBAND_POLICY_RANGE_BW,
	IOBAND_POLICY_WEIGHT_TIME,
	IOBAND_NR_POLICIES
};

/* One group's configuration, as written in a table line or a message. */
/*
 * Limits, io.max's kinds: a rate in bytes or bios per second, for reads
 * and writes together or for one direction.  See "Limits" in
 * drivers/md/dm-ioband-policy.c.
 */
enum ioband_limit_kind {
	IOBAND_LIMIT_BPS,	/* bytes per second, reads and writes */
	IOBAND_LIMIT_RBPS,
	IOBAND_LIMIT_WBPS,
	IOBAND_LIMIT_IOPS,	/* bios per second, reads and writes */
	IOBAND_LIMIT_RIOPS,
	IOBAND_LIMIT_WIOPS,
	IOBAND_NR_LIMITS
};

#define IOBAND_LIMIT_RATE_MAX	BIT_ULL(50)
#define IOBAND_BURST_MS_MAX	60000

struct ioband_group_conf {
	s64 id;			/* IOBAND_DEFAULT_GROUP for the default group */
	u32 weight;		/* weight policies */
	u32 min_kbps;		/* range-bw */
	u32 max_kbps;		/* range-bw, 0: no cap */
	/* any policy: by enum ioband_limit_kind, 0: none */
	u64 limit_rate[IOBAND_NR_LIMITS];
	u32 burst_ms;
	/* which of them were written: BIT(kind), IOBAND_LIMITS_GIVEN_BURST */
	u32 limits_given;
};

#define IOBAND_LIMITS_GIVEN_BURST	BIT(IOBAND_NR_LIMITS)

/*
 * weight-time: a cost model given instead of the one ioband learns, in the
 * terms of iocost's io.cost.model (model=linear): bytes per second, and
 * sequential and random I/Os per second, of reads and of writes.  All six
 * or none.  See "Device time" in drivers/md/dm-ioband.c.
 */
enum ioband_model_param {
	IOBAND_MODEL_RBPS,
	IOBAND_MODEL_RSEQIOPS,
	IOBAND_MODEL_RRANDIOPS,
	IOBAND_MODEL_WBPS,
	IOBAND_MODEL_WSEQIOPS,
	IOBAND_MODEL_WRANDIOPS,
	IOBAND_MODEL_NR_PARAMS
};

#define IOBAND_MODEL_PARAM_MAX	1000000000000ULL

struct ioband_cost_model {
	u64 param[IOBAND_MODEL_NR_PARAMS];	/* all 0: none given */
};

/* Settings shared by every ioband device of one device group. */
struct ioband_dg_conf {
	enum ioband_policy policy;
	u32 io_throttle;
	u32 io_limit;
	u32 token_base;
	u32 carryover;
	u32 bandwidth;		/* KB/s the device serves, 0: not stated */
	struct ioband_cost_model model;
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
	IOBAND_MSG_COST_MODEL,
	IOBAND_MSG_TYPE,
	IOBAND_MSG_POLICY,
	IOBAND_MSG_ATTACH,
	IOBAND_MSG_DETACH,
	IOBAND_MSG_RESET,
	IOBAND_MSG_LIMIT,
	IOBAND_MSG_LATENCY,
};

struct ioband_msg {
	enum ioband_msg_kind kind;
	struct ioband_group_conf group;	/* weight, range-bw, limit, attach, detach */
	u32 value;	/* token, carryover, io_throttle, io_limit, bandwidth */
	enum ioband_group_type type;
	enum ioband_policy policy;
	struct ioband_cost_model model;	/* cost_model, all 0 for "auto" */
};

const char *ioband_type_name(enum ioband_group_type type);
const char *ioband_policy_name(enum ioband_policy policy);
const char *ioband_limit_name(enum ioband_limit_kind kind);
const char *ioband_model_param_name(enum ioband_model_param param);
bool ioband_model_given(const struct ioband_cost_model *model);
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
	u64 next_sector;	/* weight-time: where its last bio ended */
	u64 inv_weight;		/* IOBAND_VSCALE / weight */
	u32 weight;
	u32 nr_queued;		/* bios held for this group */
	u32 nr_inflight;	/* bios released and not yet completed */
	s32 heap_idx;		/* slot in ioband_sched.heap, -1 if none */
	bool active;		/* its weight is in active_weight */
	bool parallel;		/* had two bios at once since it became active */
	u64 idle_since;		/* when it last had nothing held or in flight */
	/* weight-time: its submitters' pause, for ioband_sched_anticipate() */
	u64 last_done;		/* when its last bio completed */
	u32 think_ns;		/* mean pause from a completion to its next bio */
	u32 model_rem_ns;	/* a user's cost model: charge below a unit */
	/* on ioband_sched's idle list while active with nothing to do */
	struct ioband_entity *idle_prev, *idle_next;
	/* range-bw: token buckets in sector-nanoseconds, see policy.c */
	u32 min_kbps;
	u32 max_kbps;		/* 0: no cap */
	s64 cap_tokens;
	s64 min_tokens;
	u64 refilled_at;
	/* range-bw, while held: its class and its slots, see policy.c */
	u8 range_class;
	s32 free_idx;		/* slot in the free heap, -1 if none */
	s32 wait_idx;		/* slot in the capped or met heap, -1 if none */
	u64 range_due;		/* when its class changes with time alone */
	/* limits: while the group's next bio waits for one (see Limits) */
	u64 limit_due;		/* when that bio may go */
	s32 limit_idx;		/* slot in the limited heap, -1 if none */
	/*
	 * The hierarchy (see "Hierarchy" in drivers/md/dm-ioband.c): the
	 * group it shares a share with, NULL at the top, and while in_tree
	 * (it has a parent or children) the weight active at and below it:
	 * its own while active, plus each child's whose tree_weight is not 0.
	 */
	struct ioband_entity *parent;
	u32 nr_children;
	bool in_tree;
	u64 tree_weight;
};

/*
 * weight-time: what the device group has learned of its device.  A bio's
 * class is its direction, its size (a power of two bucket from 4 KiB to
 * IOBAND_EST_SIZES buckets up) and whether it starts where its group's
 * previous bio ended.  See "Device time" in drivers/md/dm-ioband.c.
 */
#define IOBAND_EST_SIZES	8
#define IOBAND_EST_CLASSES	(2 * 2 * IOBAND_EST_SIZES)
/*
 * weight-time counts device time in units of 2^9 ns, and its token, what
 * token_base counts, is 2^7 units (65.5 us): the default window is 16.8 ms
 * of device time, long enough for a batch of a sequential stream on a
 * disk to pay for the seek that starts it.
 */
#define IOBAND_TIME_SHIFT	9
#define IOBAND_TIME_TOKEN	128

struct ioband_est {
	u32 cost_ns[IOBAND_EST_CLASSES];	/* mean time in flight, 0: none yet */
	u32 mean_ns;		/* of every class: the guess for a new one */
	/* depth control: the bios in flight the device needs, see policy.c */
	u32 depth;		/* in force (io_limit caps it) */
	u32 base;		/* the depth probes are measured against */
	u32 steady;		/* intervals at base since the last probe */
	bool slow_start;	/* doubling until a probe fails */
	bool probe_down;	/* the next probe is downwards */
	u64 base_rate;		/* completions per second at base */
	u64 iv_start;		/* the current interval's start */
	u32 iv_done;		/* completions in it */
	u32 iv_busy;		/* of them, with the limit binding */
};

/*
 * The heaps of struct ioband_sched: every group holding bios, by vtime,
 * and range-bw's three (see "range-bw" in drivers/md/dm-ioband-policy.c).
 * The target allocates IOBAND_HEAP_SLOTS(n) pointers for n groups.
 */
enum ioband_heap_id {
	IOBAND_HEAP_HELD,
	IOBAND_HEAP_FREE,
	IOBAND_HEAP_CAPPED,
	IOBAND_HEAP_MET,
	IOBAND_HEAP_LIMITED,	/* groups whose next bio waits for a limit */
	IOBAND_NR_HEAPS
};

#define IOBAND_HEAP_SLOTS(n)	((n) * IOBAND_NR_HEAPS)

/*
 * weight-time: the coefficients of the user's cost model in nanoseconds,
 * as iocost derives them: a bio costs io_ns[write * 2 + sequential] plus
 * page_ns[write] for each 4 KiB page it carries (at least one).
 */
struct ioband_model_coef {
	bool given;
	u32 io_ns[4];
	u32 page_ns[2];
};

struct ioband_sched {
	struct ioband_dg_conf conf;
	struct ioband_est est;
	struct ioband_model_coef model;
	u64 vclock;		/* the device group's virtual clock */
	u64 vclock_wraps;	/* times vclock has wrapped past 2^64 */
	u64 vclock_owed;	/* weight-time: moves back the clock owes */
	u64 window;		/* how far past the clock a group may run */
	u64 window_weight;	/* the active weight window was shared by */
	u64 base_window;	/* the least window: total weight's share */
	u64 total_weight;	/* all groups, busy or idle */
	u32 nr_entities;	/* all groups */
	u64 active_weight;	/* active groups at the top of their trees */
	u32 nr_inflight;
	u64 idle_ns;		/* grace before an idle group stops counting */
	u32 nr_active;		/* groups whose weight is in active_weight */
	struct ioband_entity *idle_head, *idle_tail;	/* oldest first */
	/* weight-time: the single stream whose next bio the device awaits */
	struct ioband_entity *antic;
	u64 antic_until;
	u32 heap_len;
	u32 heap_cap;
	/*
	 * IOBAND_HEAP_SLOTS(heap_cap) pointers: the first heap_cap are the
	 * groups holding bios, by vtime; range-bw's heaps follow.
	 */
	struct ioband_entity **heap;
	u32 side_len[IOBAND_NR_HEAPS - 1];	/* the heaps after the first */
	u64 range_seen;		/* range-bw: when it last chose a group */
};

#ifndef __KERNEL__
/* Userspace builds count the heap steps and group visits of the policy. */
extern unsigned long ioband_heap_visits;
/* and how many bios ioband_sched_start() took as finding it empty */
extern unsigned long ioband_alone_starts;
#endif

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
void ioband_entity_set_range(struct ioband_sched *s, struct ioband_entity *e,
			     u32 min_kbps, u32 max_kbps, u64 now);
void ioband_entity_exit(struct ioband_sched *s, struct ioband_entity *e);
void ioband_entity_forget(struct ioband_sched *s, struct ioband_entity *e);
void ioband_entity_set_parent(struct ioband_sched *s, struct ioband_entity *e,
			      struct ioband_entity *parent);
void ioband_tree_add(struct ioband_sched *s, struct ioband_entity *e,
		     s64 delta);
u64 ioband_tree_inv_weight(const struct ioband_entity *e);

/*
 * @e starts (@delta its weight) or stops (minus it) being active.  Outside
 * a tree that is its weight in active_weight; inside, it goes up the tree
 * as far as it changes whether a node counts.  Inline: every activation
 * and every idle single stream's completion runs it.
 */
static inline void ioband_active_add(struct ioband_sched *s,
				     struct ioband_entity *e, s64 delta)
{
	if (!e->in_tree)
		s->active_weight += delta;
	else
		ioband_tree_add(s, e, delta);
}

/*
 * What serving @e costs in virtual time per unit: 1 / its weight, or in a
 * tree 1 / the part of its top ancestor's weight that falls to it.
 */
static inline u64 ioband_entity_inv_weight(const struct ioband_entity *e)
{
	if (!e->in_tree)
		return e->inv_weight;
	return ioband_tree_inv_weight(e);
}

/* Whether every bio costs one token, whatever it carries (weight). */
static inline bool ioband_cost_flat(const struct ioband_sched *s)
{
	return s->conf.policy == IOBAND_POLICY_WEIGHT;
}

/*
 * What a bio costs in tokens: one per bio under weight, its sectors under
 * weight-iosize and range-bw.  Discards and write-zeroes carry no data
 * through the bus: they cost one token whatever range they name.  Inline,
 * like ioband_sched_needs_clock(): both run for every bio.
 */
static inline u32 ioband_bio_cost(const struct ioband_sched *s, u32 sectors,
				  bool has_data)
{
	if (ioband_cost_flat(s) || !has_data)
		return IOBAND_SECTORS_PER_TOKEN;
	return sectors ? sectors : 1;
}

/*
 * Whether the next event on @s concerning @e reads @now: to expire idle
 * groups, to start @e's grace, to fill range-bw buckets, or to time bios
 * under weight-time.  When not, the caller may pass 0 and save reading
 * the clock on the fast path.
 */
static inline bool ioband_sched_needs_clock(const struct ioband_sched *s,
					    const struct ioband_entity *e)
{
	return s->idle_head || e->parallel ||
	       s->conf.policy == IOBAND_POLICY_RANGE_BW ||
	       s->conf.policy == IOBAND_POLICY_WEIGHT_TIME;
}

/*
 * weight-time: device time in cost units, rounded to the nearest and at
 * least one.  The caller clamps @ns to IOBAND_EST_MAX_NS.
 */
#define IOBAND_EST_MAX_NS	(1000 * 1000 * 1000ULL)

static inline u32 ioband_time_units(u64 ns)
{
	u32 u = (ns + (1U << (IOBAND_TIME_SHIFT - 1))) >> IOBAND_TIME_SHIFT;

	return u ? u : 1;
}

/*
 * weight-time: the class (see struct ioband_est) of a bio of @sectors at
 * @sector, after a bio of its stream that ended at @next_sector.  Inline:
 * it runs for every bio, like ioband_time_cost().
 */
static inline u32 ioband_time_class_after(u64 next_sector, bool write,
					  u64 sector, u32 sectors)
{
	u32 blocks = (sectors + 7) >> 3;	/* 4 KiB blocks */
	bool seq = sector == next_sector;
	u32 size = 0;

	while (blocks > 1 && size < IOBAND_EST_SIZES - 1) {
		blocks = (blocks + 1) >> 1;
		size++;
	}
	return (write * 2 + seq) * IOBAND_EST_SIZES + size;
}

/* The class of a bio of @e, which @e's next bio follows. */
static inline u32 ioband_time_class(struct ioband_entity *e, bool write,
				    u64 sector, u32 sectors)
{
	u32 cls = ioband_time_class_after(e->next_sector, write, sector,
					  sectors);

	e->next_sector = sector + sectors;
	return cls;
}

/* weight-time: what a bio of class @cls is charged when it goes down. */
static inline u32 ioband_time_cost(const struct ioband_sched *s, u32 cls)
{
	u32 ns = s->est.cost_ns[cls];

	return ioband_time_units(ns ? ns : s->est.mean_ns);
}

u32 ioband_model_charge(struct ioband_entity *e,
			const struct ioband_model_coef *m, u32 cls, u32 sectors);

/*
 * weight-time: what a bio of @e, of class @cls and @sectors, is charged
 * when it goes down: its cost under the user's model if one is given,
 * else its class's mean.
 */
static inline u32 ioband_time_charge(const struct ioband_sched *s,
				     struct ioband_entity *e, u32 cls,
				     u32 sectors)
{
	if (s->model.given)
		return ioband_model_charge(e, &s->model, cls, sectors);
	return ioband_time_cost(s, cls);
}

/*
 * The most bios in flight the scheduler lets go down: under weight-time,
 * while more than one group is active, the depth the device needs (see
 * "Depth control" in drivers/md/dm-ioband.c).
 */
static inline u32 ioband_sched_depth(const struct ioband_sched *s)
{
	if (s->conf.policy == IOBAND_POLICY_WEIGHT_TIME && s->nr_active > 1 &&
	    s->est.depth < s->conf.io_limit)
		return s->est.depth;
	return s->conf.io_limit;
}

void ioband_sched_dispatch(struct ioband_sched *s, struct ioband_entity *e,
			   u32 cost, bool held, bool bypass);
bool ioband_sched_start(struct ioband_sched *s, struct ioband_entity *e,
			u32 cost, bool bypass, u64 now);
/*
 * A lease as one word, which a CPU's counter holds and takes bios from
 * with one compare-and-exchange: its slots above, its units below.
 */
static inline u64 ioband_lease_word(u32 slots, u32 units)
{
	return (u64)slots << 32 | units;
}

static inline u32 ioband_lease_slots(u64 lease)
{
	return lease >> 32;
}

static inline u32 ioband_lease_units(u64 lease)
{
	return (u32)lease;
}

u64 ioband_lease_grant(struct ioband_sched *s, struct ioband_entity *e,
		       u32 cost, u32 units, u32 slots);
void ioband_lease_return(struct ioband_sched *s, struct ioband_entity *e,
			 u32 units, u32 slots, u64 now);
void ioband_lease_complete(struct ioband_sched *s, struct ioband_entity *e,
			   u32 nr, bool parallel, u64 now);
void ioband_sched_unhold(struct ioband_sched *s, struct ioband_entity *e,
			 u64 now);
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
	ioband_active_add(s, e, -(s64)e->weight);
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

void ioband_est_learn(struct ioband_sched *s, u32 cls, u64 ns);
void ioband_sched_correct(struct ioband_sched *s, struct ioband_entity *e,
			  u32 charged, u64 ns);
void ioband_depth_sample(struct ioband_sched *s, u64 now);
void ioband_sched_anticipate(struct ioband_sched *s, struct ioband_entity *e,
			     u64 now);

/*
 * Whether the bio just charged went down beyond the depth the device
 * needs (a lone group's, which io_limit alone bounds, or an urgent one):
 * its time in flight is then mostly queueing below, not device time (see
 * "Device time" in drivers/md/dm-ioband.c).
 */
static inline bool ioband_sched_beyond_depth(const struct ioband_sched *s)
{
	return s->nr_inflight > s->est.depth;
}

/*
 * weight-time: a bio of @e and class @cls, charged @charged units when it
 * went down, has completed after @ns in flight.  Unless it went down
 * @beyond_depth, the device group learns the class's cost and its depth,
 * and the group pays what the bio took, unless the user's cost model says
 * what it costs.
 */
static inline void ioband_sched_complete_timed(struct ioband_sched *s,
					       struct ioband_entity *e,
					       u32 cls, u32 charged, u64 ns,
					       bool beyond_depth, u64 now)
{
	if (ns > IOBAND_EST_MAX_NS)
		ns = IOBAND_EST_MAX_NS;
	if (!beyond_depth) {
		ioband_depth_sample(s, now);
		ioband_est_learn(s, cls, ns);
		if (!s->model.given)
			ioband_sched_correct(s, e, charged, ns);
	}
	ioband_sched_complete(s, e, now);
	e->last_done = now;
	if (!e->nr_queued && (e->parallel || !e->nr_inflight))
		ioband_sched_anticipate(s, e, now);
}

void ioband_sched_move_held(struct ioband_sched *s, struct ioband_entity *from,
			    struct ioband_entity *to, u64 now);
void ioband_entity_restart(struct ioband_sched *s, struct ioband_entity *e);

/*
 * A limit's state: a pacing bucket kept as the time up to which its
 * budget is spent; a bio waits until every limit that applies to it has
 * saved its cost.
 */
struct ioband_limit {
	u64 rate;		/* bytes or bios per second, 0: no limit */
	u64 burst_ns;		/* the unused budget it keeps, as time at rate */
	u64 paid_to;		/* its budget up to this time is spent */
};

struct ioband_limits {
	struct ioband_limit lim[IOBAND_NR_LIMITS];
	u32 max_io_bytes;	/* the device below splits larger bios; 0: never */
};

void ioband_limit_set(struct ioband_limit *l, u64 rate, u64 burst_ns,
		      u64 now);
u64 ioband_limits_take(struct ioband_limits *ls, bool write, u32 bytes,
		       u64 at, u64 now);
void ioband_limits_charge_urgent(struct ioband_limits *ls, bool write,
				 u32 bytes, u64 now);
void ioband_limits_refund(struct ioband_limits *ls, bool write, u32 bytes);
void ioband_limit_wait(struct ioband_sched *s, struct ioband_entity *e,
		       u64 due);
void ioband_limit_cancel(struct ioband_sched *s, struct ioband_entity *e);
struct ioband_entity *ioband_limit_next(struct ioband_sched *s, u64 now,
					u64 *wake_at);

/*
 * Latency statistics: for a sample of a group's bios, how long each waited
 * in ioband (from map until it went down) and how long the device below
 * then took, in histograms of four buckets to each power of two from
 * 2^10 ns (1 us) to 2^35 ns (34 s), with one bucket below and one above.
 * The figures cover the bios timed in the current second and the one
 * before it.  See "Latency statistics" in drivers/md/dm-ioband.c.
 */
#define IOBAND_LAT_MIN_SHIFT	10
#define IOBAND_LAT_MAX_SHIFT	35
#define IOBAND_LAT_SUB_SHIFT	2	/* 4 buckets to a power of two */
#define IOBAND_LAT_BUCKETS \
	(((IOBAND_LAT_MAX_SHIFT - IOBAND_LAT_MIN_SHIFT) << IOBAND_LAT_SUB_SHIFT) + 2)

struct ioband_lat_hist {
	u16 count[IOBAND_LAT_BUCKETS];	/* saturating */
};

/* The same bios in both: a timed bio adds to each. */
struct ioband_lat_second {
	struct ioband_lat_hist wait;	/* map until it went down */
	struct ioband_lat_hist dev;	/* went down until it completed */
};

struct ioband_lat {
	struct ioband_lat_second sec[2];	/* sec[cur] and the one before */
	u64 cur_start;			/* when sec[cur] began */
	u32 cur;
};

enum ioband_lat_kind {
	IOBAND_LAT_WAIT,
	IOBAND_LAT_DEV,
};

void ioband_lat_add(struct ioband_lat *l, u64 wait_ns, u64 dev_ns, u64 now);
void ioband_lat_age(struct ioband_lat *l, u64 now);
u32 ioband_lat_count(const struct ioband_lat *l, enum ioband_lat_kind kind);
u64 ioband_lat_percentile(const struct ioband_lat *l,
			  enum ioband_lat_kind kind, u32 pct);
u32 ioband_lat_bucket(u64 ns);
u64 ioband_lat_bucket_top(u32 bucket);

/*
 * The layout both modules were built with: the target refuses to load
 * beside a policy module from another build of this header, whose structs
 * it would misread (a stale one once did, and crashed in the worker).
 */
#define IOBAND_ABI \
	((u32)(sizeof(struct ioband_sched) << 16 | sizeof(struct ioband_entity)))
u32 ioband_policy_abi(void);

#endif /* _LINUX_DM_IOBAND_H */

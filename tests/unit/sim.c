// SPDX-License-Identifier: GPL-2.0
/*
 * The model: every process keeps one I/O outstanding (after an optional
 * think time).  ioband admits or holds each I/O exactly as map() does;
 * completions release held I/Os as end_io() does.  Released I/Os enter a
 * device that serves @depth at a time, first come first served, each for
 * base_us plus per_kb_ns per KiB.
 */
#include <stdlib.h>
#include <string.h>
#include "sim.h"

#define MAX_IOS 1024

struct io {
	int group;
	u64 done_at;		/* when on the device */
	u64 start_at;		/* when its process submits it */
	u32 cost;
	enum { IO_THINK, IO_HELD, IO_WAIT_TAG, IO_ON_DEVICE } state;
	u64 seq;		/* FIFO order among held or waiting I/Os */
};

struct model {
	struct sim *sim;
	bool bare;
	struct ioband_sched s;
	struct ioband_entity ent[SIM_MAX_GROUPS];
	struct ioband_entity *heap[IOBAND_HEAP_SLOTS(SIM_MAX_GROUPS)];
	struct io ios[MAX_IOS];
	u32 nr_ios;
	u32 on_device;
	u64 now;
	u64 wake_at;		/* the scheduler's timer, 0 if not armed */
	u64 seq;
};

static u64 service_us(struct model *m, struct io *io)
{
	struct sim *sim = m->sim;

	return sim->base_us + sim->g[io->group].io_kb * sim->per_kb_ns / 1000;
}

static void start_on_device(struct model *m, struct io *io)
{
	io->state = IO_ON_DEVICE;
	io->done_at = m->now + service_us(m, io);
	m->on_device++;
}

/* A released I/O reaches the device, or waits for a tag. */
static void device_submit(struct model *m, struct io *io)
{
	if (m->on_device < m->sim->depth) {
		start_on_device(m, io);
	} else {
		io->state = IO_WAIT_TAG;
		io->seq = m->seq++;
	}
}

static struct io *oldest(struct model *m, int state, int group)
{
	struct io *best = NULL;
	u32 i;

	for (i = 0; i < m->nr_ios; i++) {
		struct io *io = &m->ios[i];

		if ((int)io->state != state || (group >= 0 && io->group != group))
			continue;
		if (!best || io->seq < best->seq)
			best = io;
	}
	return best;
}

static void release_allowed(struct model *m)
{
	struct ioband_entity *e;
	u64 wake_at;

	while ((e = ioband_sched_next(&m->s, m->now * 1000, &wake_at))) {
		struct io *io = oldest(m, IO_HELD, e - m->ent);

		ioband_sched_dispatch(&m->s, e, io->cost, true, false);
		device_submit(m, io);
	}
	if (wake_at)
		m->wake_at = (wake_at + 999) / 1000;
}

static void map(struct model *m, struct io *io)
{
	struct sim_group *sg = &m->sim->g[io->group];
	struct ioband_entity *e = &m->ent[io->group];

	if (m->bare) {
		device_submit(m, io);
		return;
	}
	io->cost = ioband_bio_cost(&m->s, sg->io_kb * 2, true);
	if (ioband_sched_start(&m->s, e, io->cost, false, m->now * 1000)) {
		device_submit(m, io);
		return;
	}
	io->state = IO_HELD;
	io->seq = m->seq++;
	if (m->now >= m->sim->warmup_us)
		sg->held++;
	release_allowed(m);
}

static void complete(struct model *m, struct io *io)
{
	struct sim *sim = m->sim;
	struct sim_group *sg = &sim->g[io->group];
	struct io *next;

	m->on_device--;
	if (m->now >= sim->warmup_us) {
		sg->ios++;
		sg->kb += sg->io_kb;
		sim->total_ios++;
	}
	if (!m->bare) {
		ioband_sched_complete(&m->s, &m->ent[io->group], m->now * 1000);
		release_allowed(m);
	}
	next = oldest(m, IO_WAIT_TAG, -1);
	if (next && m->on_device < sim->depth)
		start_on_device(m, next);
	/* The process gets its completion and thinks, or submits again. */
	io->state = IO_THINK;
	io->start_at = m->now + sg->think_us;
	if (!sg->think_us)
		map(m, io);
}

static void model_init(struct model *m, struct sim *sim, bool bare)
{
	u32 i, p;

	memset(m, 0, sizeof(*m));
	m->sim = sim;
	m->bare = bare;
	ioband_sched_init(&m->s, &sim->conf, m->heap, SIM_MAX_GROUPS);
	m->s.vclock = sim->vclock_start;
	for (i = 0; i < sim->nr_groups; i++) {
		struct sim_group *sg = &sim->g[i];

		ioband_entity_init(&m->s, &m->ent[i], sg->weight);
		ioband_entity_set_range(&m->s, &m->ent[i], sg->min_kbps,
					sg->max_kbps, 0);
		sg->ios = sg->kb = sg->held = 0;
		for (p = 0; p < sg->procs && m->nr_ios < MAX_IOS; p++) {
			struct io *io = &m->ios[m->nr_ios++];

			io->group = i;
			io->state = IO_THINK;
			io->start_at = p;	/* staggered start */
		}
	}
	sim->total_ios = 0;
	sim->busy_us = 0;
}

/* The next event: a device completion or a process's submission. */
static struct io *next_event(struct model *m, u64 *when)
{
	struct io *best = NULL;
	u32 i;

	for (i = 0; i < m->nr_ios; i++) {
		struct io *io = &m->ios[i];
		u64 t;

		if (io->state == IO_ON_DEVICE)
			t = io->done_at;
		else if (io->state == IO_THINK)
			t = io->start_at;
		else
			continue;
		if (!best || t < *when) {
			best = io;
			*when = t;
		}
	}
	return best;
}

static void model_run(struct model *m)
{
	struct sim *sim = m->sim;
	u64 when = 0;
	struct io *io;

	for (;;) {
		io = next_event(m, &when);
		if (m->wake_at && (!io || m->wake_at <= when)) {
			io = NULL;
			when = m->wake_at;
		} else if (!io) {
			break;
		}
		if (when >= sim->run_us)
			break;
		if (m->on_device && m->now >= sim->warmup_us)
			sim->busy_us += when - m->now;
		m->now = when;
		if (!io) {
			m->wake_at = 0;
			release_allowed(m);
		} else if (io->state == IO_ON_DEVICE) {
			complete(m, io);
		} else {
			map(m, io);
		}
	}
}

void sim_run(struct sim *sim)
{
	static struct model m;

	model_init(&m, sim, false);
	model_run(&m);
}

u64 sim_run_bare(struct sim *sim)
{
	static struct model m;

	model_init(&m, sim, true);
	model_run(&m);
	return sim->total_ios;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The discrete-event model device of devsim.h.  Every process keeps
 * iodepth I/Os outstanding; each I/O goes through ioband exactly as map()
 * sends it (ioband_sched_start(), or held and released by
 * ioband_sched_next() after a completion or at the scheduler's timer), is
 * given a tag of the device queue (or waits for one, first come first
 * served), waits in the device's FIFO for a channel and occupies it for
 * what iobm_service_ns() says.  Its completion reaches ioband as end_io()
 * reports it.
 */
#include <stdlib.h>
#include <string.h>
#include "devsim.h"

#define DS_MAX_IOS	4096

enum ds_state { DS_THINK, DS_HELD, DS_WAIT_TAG, DS_QUEUED, DS_SERVED };

struct ds_io {
	u32 group;
	u32 proc;
	enum ds_state state;
	struct iobm_req req;
	u32 cls;
	u32 charged;
	bool beyond_depth;
	u64 dispatch_ns;
	double ps_start;	/* DS_PS's clock at dispatch */
	u64 service_ns;
	s32 next;		/* in a FIFO */
};

struct ds_fifo {
	s32 head, tail;
};

enum ds_ev { EV_SUBMIT, EV_DONE, EV_WAKE, EV_CHANGE, EV_DEVICE };

struct ds_event {
	u64 t;
	u64 seq;
	enum ds_ev kind;
	s32 io;
};

struct ds_model {
	struct ds_sim *sim;
	struct ioband_sched s;
	struct ioband_entity ent[DS_MAX_GROUPS];
	struct ioband_entity *heap[DS_MAX_GROUPS];
	struct ds_fifo held[DS_MAX_GROUPS];
	struct ds_fifo wait_tag, queued;
	struct ds_io ios[DS_MAX_IOS];
	u32 nr_ios;
	u64 pos[DS_MAX_IOS];	/* each process's stream */
	struct iobm_state st;
	u32 in_device, busy_channels;
	u64 now;
	u64 wake_at;
	u64 last_done;		/* DS_GAP */
	double ps_clock;	/* DS_PS */
	u64 ps_at;
	u64 rng;
	struct ds_event *ev;
	u32 nr_ev, ev_cap;
	u64 ev_seq;
};

/* ---- events: a binary heap on time, then order of scheduling ---------- */

static bool ev_before(const struct ds_event *a, const struct ds_event *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void ev_push(struct ds_model *m, u64 t, enum ds_ev kind, s32 io)
{
	u32 i = m->nr_ev++;

	if (m->nr_ev > m->ev_cap) {
		m->ev_cap = m->ev_cap ? 2 * m->ev_cap : 1024;
		m->ev = realloc(m->ev, m->ev_cap * sizeof(*m->ev));
	}
	m->ev[i] = (struct ds_event){ t, m->ev_seq++, kind, io };
	while (i && ev_before(&m->ev[i], &m->ev[(i - 1) / 2])) {
		struct ds_event tmp = m->ev[i];

		m->ev[i] = m->ev[(i - 1) / 2];
		m->ev[(i - 1) / 2] = tmp;
		i = (i - 1) / 2;
	}
}

static struct ds_event ev_pop(struct ds_model *m)
{
	struct ds_event top = m->ev[0];
	u32 i = 0;

	m->ev[0] = m->ev[--m->nr_ev];
	for (;;) {
		u32 c = 2 * i + 1;
		struct ds_event tmp;

		if (c >= m->nr_ev)
			break;
		if (c + 1 < m->nr_ev && ev_before(&m->ev[c + 1], &m->ev[c]))
			c++;
		if (!ev_before(&m->ev[c], &m->ev[i]))
			break;
		tmp = m->ev[i];
		m->ev[i] = m->ev[c];
		m->ev[c] = tmp;
		i = c;
	}
	return top;
}

/* ---- FIFOs of I/Os ----------------------------------------------------- */

static void fifo_push(struct ds_model *m, struct ds_fifo *f, s32 io)
{
	m->ios[io].next = -1;
	if (f->tail >= 0)
		m->ios[f->tail].next = io;
	else
		f->head = io;
	f->tail = io;
}

static s32 fifo_pop(struct ds_model *m, struct ds_fifo *f)
{
	s32 io = f->head;

	if (io >= 0) {
		f->head = m->ios[io].next;
		if (f->head < 0)
			f->tail = -1;
	}
	return io;
}

/* ---- the device ------------------------------------------------------- */

static bool measured(const struct ds_model *m)
{
	return m->now >= m->sim->warmup_ns;
}

static void start_channels(struct ds_model *m)
{
	s32 io;

	while (m->busy_channels < m->sim->prof.channels &&
	       (io = fifo_pop(m, &m->queued)) >= 0) {
		struct ds_io *d = &m->ios[io];

		d->state = DS_SERVED;
		d->service_ns = iobm_service_ns(&m->sim->prof, &m->st, &d->req);
		m->busy_channels++;
		ev_push(m, m->now + d->service_ns, EV_DONE, io);
	}
}

static void device_submit(struct ds_model *m, s32 io)
{
	if (m->in_device < m->sim->qdepth) {
		m->in_device++;
		m->ios[io].state = DS_QUEUED;
		fifo_push(m, &m->queued, io);
		start_channels(m);
	} else {
		m->ios[io].state = DS_WAIT_TAG;
		fifo_push(m, &m->wait_tag, io);
	}
}

/* ---- ioband, as map() and end_io() drive it -------------------------- */

/* DS_PS's clock: each bio in flight is charged dt / their number. */
static void ps_advance(struct ds_model *m)
{
	if (m->s.nr_inflight)
		m->ps_clock += (double)(m->now - m->ps_at) / m->s.nr_inflight;
	m->ps_at = m->now;
}

/* @io goes down, after release_ns if it was held (ioband's worker). */
static void dispatch(struct ds_model *m, s32 io, bool held)
{
	struct ds_io *d = &m->ios[io];

	d->dispatch_ns = m->now;
	d->ps_start = m->ps_clock;
	if (held && m->sim->release_ns)
		ev_push(m, m->now + m->sim->release_ns, EV_DEVICE, io);
	else
		device_submit(m, io);
}

static void release_allowed(struct ds_model *m)
{
	struct ioband_entity *e;
	u64 wake_at;

	while ((e = ioband_sched_next(&m->s, m->now, &wake_at))) {
		s32 io = fifo_pop(m, &m->held[e - m->ent]);

		ps_advance(m);
		ioband_sched_dispatch(&m->s, e, m->ios[io].charged, true, false);
		m->ios[io].beyond_depth = ioband_sched_beyond_depth(&m->s);
		dispatch(m, io, true);
	}
	if (wake_at && wake_at != m->wake_at) {
		m->wake_at = wake_at;
		ev_push(m, wake_at, EV_WAKE, -1);
	}
}

static bool charged_at_dispatch(enum ds_charge c)
{
	return c == DS_TABLE_INFLIGHT || c == DS_TABLE_PS ||
	       c == DS_TABLE_ONLY;
}

static void map(struct ds_model *m, s32 io)
{
	struct ds_io *d = &m->ios[io];
	struct ds_sim *sim = m->sim;
	struct ds_group *g = &sim->g[d->group];
	struct ioband_entity *e = &m->ent[d->group];

	if (sim->bare) {
		dispatch(m, io, false);
		return;
	}
	if (sim->conf.policy == IOBAND_POLICY_WEIGHT_TIME) {
		d->cls = ioband_time_class(e, d->req.dir == IOBM_WRITE,
					   d->req.sector, d->req.sectors);
		d->charged = charged_at_dispatch(sim->charge) ?
			     ioband_time_charge(&m->s, e, d->cls,
						d->req.sectors) : 0;
	} else {
		d->charged = ioband_bio_cost(&m->s, d->req.sectors, true);
	}
	ps_advance(m);
	if (ioband_sched_start(&m->s, e, d->charged, false, m->now)) {
		d->beyond_depth = ioband_sched_beyond_depth(&m->s);
		dispatch(m, io, false);
		return;
	}
	d->state = DS_HELD;
	fifo_push(m, &m->held[d->group], io);
	if (measured(m))
		g->held++;
	release_allowed(m);
}

static void end_io(struct ds_model *m, struct ds_io *d)
{
	struct ioband_entity *e = &m->ent[d->group];
	u64 ns;

	if (m->s.conf.policy != IOBAND_POLICY_WEIGHT_TIME) {
		ioband_sched_complete(&m->s, e, m->now);
		return;
	}
	switch (m->sim->charge) {
	case DS_PS:
	case DS_TABLE_PS:
		ps_advance(m);
		ns = m->ps_clock - d->ps_start + 0.5;
		break;
	case DS_GAP:
		ns = m->now - (m->last_done > d->dispatch_ns ?
			       m->last_done : d->dispatch_ns);
		break;
	default:
		ns = m->now - d->dispatch_ns;
		break;
	}
	m->last_done = m->now;
	/* the table learns @ns; charged as much, the group pays no more */
	if (m->sim->charge == DS_TABLE_ONLY)
		d->charged = ioband_time_units(ns);
	ioband_sched_complete_timed(&m->s, e, d->cls, d->charged, ns,
				    d->beyond_depth, m->now);
}

/* ---- processes -------------------------------------------------------- */

static u64 rnd(struct ds_model *m)
{
	/* xorshift64: the same stream on every run */
	m->rng ^= m->rng << 13;
	m->rng ^= m->rng >> 7;
	m->rng ^= m->rng << 17;
	return m->rng;
}

static u64 capacity(const struct ds_model *m)
{
	return m->sim->prof.capacity_sectors ? m->sim->prof.capacity_sectors :
					       2ULL << 20;
}

/* The process of @io issues its next I/O. */
static void submit(struct ds_model *m, s32 io)
{
	struct ds_io *d = &m->ios[io];
	const struct ds_group *g = &m->sim->g[d->group];
	u32 sectors = g->kib * 2;
	u64 cap = capacity(m);

	d->req = (struct iobm_req){
		.dir = g->write ? IOBM_WRITE : IOBM_READ,
		.sectors = sectors,
	};
	if (g->seq) {
		u64 *pos = &m->pos[d->proc];

		if (*pos + sectors > cap)
			*pos = 0;
		d->req.sector = *pos;
		*pos += sectors;
	} else {
		d->req.sector = rnd(m) % ((cap - sectors) / 8) * 8;
	}
	map(m, io);
}

static void complete(struct ds_model *m, s32 io)
{
	struct ds_io *d = &m->ios[io];
	struct ds_sim *sim = m->sim;
	struct ds_group *g = &sim->g[d->group];
	s32 next;

	m->busy_channels--;
	m->in_device--;
	if (measured(m)) {
		u64 t = m->now - sim->warmup_ns;

		g->ios++;
		g->busy_ns += d->service_ns;
		sim->busy_ns += d->service_ns;
		sim->total_ios++;
		if (sim->sample_ns && t / sim->sample_ns < DS_MAX_SAMPLES)
			g->series[t / sim->sample_ns] += d->service_ns;
	}
	next = fifo_pop(m, &m->wait_tag);
	if (next >= 0) {
		m->in_device++;
		m->ios[next].state = DS_QUEUED;
		fifo_push(m, &m->queued, next);
	}
	start_channels(m);
	if (!sim->bare) {
		end_io(m, d);
		release_allowed(m);
	}
	d->state = DS_THINK;
	if (g->think_ns)
		ev_push(m, m->now + g->think_ns, EV_SUBMIT, io);
	else
		submit(m, io);
}

static void model_init(struct ds_model *m, struct ds_sim *sim)
{
	u32 i, p, k, proc = 0;

	memset(m, 0, sizeof(*m));
	m->sim = sim;
	m->rng = 88172645463325252ULL;
	m->wait_tag.head = m->wait_tag.tail = -1;
	m->queued.head = m->queued.tail = -1;
	ioband_sched_init(&m->s, &sim->conf, m->heap, DS_MAX_GROUPS);
	m->s.vclock = sim->vclock_start;
	for (i = 0; i < sim->nr_groups; i++) {
		struct ds_group *g = &sim->g[i];

		ioband_entity_init(&m->s, &m->ent[i], g->weight);
		m->held[i].head = m->held[i].tail = -1;
		g->ios = g->busy_ns = g->held = 0;
		memset(g->series, 0, sizeof(g->series));
		for (p = 0; p < g->procs; p++, proc++) {
			/* streams start spread over the device */
			m->pos[proc] = capacity(m) / 64 * (proc % 64) / 8 * 8;
			for (k = 0; k < g->iodepth && m->nr_ios < DS_MAX_IOS;
			     k++) {
				struct ds_io *d = &m->ios[m->nr_ios];

				d->group = i;
				d->proc = proc;
				d->state = DS_THINK;
				/* staggered start */
				ev_push(m, g->start_ns + m->nr_ios * 1000ULL,
					EV_SUBMIT, m->nr_ios);
				m->nr_ios++;
			}
		}
	}
	for (i = 0; i < sim->nr_groups; i++)
		if (sim->g[i].parent)
			ioband_entity_set_parent(&m->s, &m->ent[i],
						 &m->ent[sim->g[i].parent - 1]);
	if (sim->change_at_ns)
		ev_push(m, sim->change_at_ns, EV_CHANGE, -1);
	sim->busy_ns = sim->total_ios = 0;
}

void ds_run(struct ds_sim *sim)
{
	static struct ds_model m;

	model_init(&m, sim);
	while (m.nr_ev) {
		struct ds_event ev = ev_pop(&m);

		if (ev.t >= sim->run_ns)
			break;
		m.now = ev.t;
		switch (ev.kind) {
		case EV_SUBMIT:
			submit(&m, ev.io);
			break;
		case EV_DONE:
			complete(&m, ev.io);
			break;
		case EV_WAKE:
			if (ev.t != m.wake_at)
				break;	/* re-armed since */
			m.wake_at = 0;
			release_allowed(&m);
			break;
		case EV_CHANGE:
			sim->prof = sim->changed;
			break;
		case EV_DEVICE:
			/* timed from here, as the kernel's worker does */
			m.ios[ev.io].dispatch_ns = m.now;
			device_submit(&m, ev.io);
			break;
		}
	}
	sim->depth = min_t(u32, m.s.est.base, m.s.conf.io_limit);
	sim->vclock_wraps = m.s.vclock_wraps;
	free(m.ev);
	m.ev = NULL;
}

void ds_setup(struct ds_sim *sim, const char *profile, u32 nr_groups)
{
	u32 i;

	memset(sim, 0, sizeof(*sim));
	iobm_profile_get(profile, &sim->prof);
	ioband_dg_conf_init(&sim->conf);
	sim->conf.policy = IOBAND_POLICY_WEIGHT_TIME;
	sim->qdepth = 64;
	sim->warmup_ns = 1000 * 1000 * 1000ULL;
	sim->run_ns = 5 * 1000 * 1000 * 1000ULL;
	sim->nr_groups = nr_groups;
	for (i = 0; i < nr_groups; i++) {
		sim->g[i].weight = 100;
		sim->g[i].procs = 4;
		sim->g[i].iodepth = 1;
		sim->g[i].kib = 4;
	}
}

double ds_share(const struct ds_sim *sim, u32 i)
{
	return sim->busy_ns ? 100.0 * sim->g[i].busy_ns / sim->busy_ns : 0;
}

double ds_util(const struct ds_sim *sim)
{
	return 100.0 * sim->busy_ns /
	       ((double)(sim->run_ns - sim->warmup_ns) * sim->prof.channels);
}

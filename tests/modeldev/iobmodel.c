// SPDX-License-Identifier: GPL-2.0
/*
 * iobmodel: a blk-mq block device whose service time follows a cost model
 * (model.h), for the tests and benchmarks of dm-ioband.  null_blk charges
 * every request the same; this device charges by direction, size and seek,
 * has a number of channels (requests served at once), an optional volatile
 * write cache, and counts the device time each cgroup used, so device-time
 * fairness can be measured against the truth.
 *
 * Devices are made through configfs, like null_blk's:
 *	mkdir /sys/kernel/config/iobmodel/NAME	(the disk is /dev/NAME)
 *	echo disk > .../NAME/profile		(ssd, nvme or disk)
 *	echo 1 > .../NAME/power
 * tests/modeldev/README.md lists the attributes and the stats format.
 *
 * How a request is served.  queue_rq moves the data at once (memory_backed:
 * the store and the cache below are under data_lock, so queue_rq may sleep:
 * BLK_MQ_F_BLOCKING), then hands the request to a free channel, or, when
 * all are busy, to the device's FIFO.  A channel that takes a request asks
 * the model how long it is busy (iobm_service_ns(), under dev->lock, which
 * keeps the model's state in request start order) and arms its hrtimer for
 * the end; the timer completes the request and takes the FIFO's head.  The
 * next request's service starts when the previous one should have ended
 * (or when it arrived, if later), not when the timer ran: a late timer
 * delays one completion, not the device's throughput.
 *
 * The cache.  With cache_kib > 0 the device declares a volatile write cache
 * with FUA.  Its timing is the model's; its data (memory_backed) is kept
 * apart from the stable store: every write without FUA goes to the cache
 * and stays volatile until a flush moves the cache to the store.  A crash
 * (the crash attribute, or power off) drops the cache.  That is the least
 * durable behaviour a device may have: what a flush or FUA promises
 * survives, nothing else is promised.
 */
#include <linux/blk-cgroup.h>
#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/cgroup.h>
#include <linux/configfs.h>
#include <linux/hrtimer.h>
#include <linux/highmem.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "model.h"

/* (cgroup id, direction) pairs counted; the rest only in the totals. */
#define IOBM_NR_CLASSES		32
#define IOBM_MAX_CHANNELS	1024
#define IOBM_MAX_DEPTH		1024
#define IOBM_MAX_SIZE_MIB	BIT_ULL(20)
/* Bounds that keep every sum and product of model.h within u64. */
#define IOBM_MAX_NS		(10ULL * NSEC_PER_SEC)
#define IOBM_MAX_CACHE_KIB	BIT_ULL(24)
#define IOBM_MAX_CAPACITY	BIT_ULL(40)
#define IOBM_MAX_HW_SECTORS	2048

/* The numeric settings, one configfs attribute each, named as here. */
enum iobm_setting {
	IOBM_S_channels,
	IOBM_S_read_base_ns,
	IOBM_S_write_base_ns,
	IOBM_S_read_per_kib_ns,
	IOBM_S_write_per_kib_ns,
	IOBM_S_seek_min_ns,
	IOBM_S_seek_max_ns,
	IOBM_S_capacity_sectors,
	IOBM_S_cache_kib,
	IOBM_S_flush_base_ns,
	IOBM_S_size,
	IOBM_S_queue_depth,
	IOBM_S_memory_backed,
	IOBM_NR_SETTINGS
};

static const struct {
	u64 min;
	u64 max;
} iobm_range[IOBM_NR_SETTINGS] = {
	[IOBM_S_channels] = { 1, IOBM_MAX_CHANNELS },
	[IOBM_S_read_base_ns] = { 0, IOBM_MAX_NS },
	[IOBM_S_write_base_ns] = { 0, IOBM_MAX_NS },
	[IOBM_S_read_per_kib_ns] = { 0, IOBM_MAX_NS },
	[IOBM_S_write_per_kib_ns] = { 0, IOBM_MAX_NS },
	[IOBM_S_seek_min_ns] = { 0, IOBM_MAX_NS },
	[IOBM_S_seek_max_ns] = { 0, IOBM_MAX_NS },
	[IOBM_S_capacity_sectors] = { 0, IOBM_MAX_CAPACITY },
	[IOBM_S_cache_kib] = { 0, IOBM_MAX_CACHE_KIB },
	[IOBM_S_flush_base_ns] = { 0, IOBM_MAX_NS },
	[IOBM_S_size] = { 1, IOBM_MAX_SIZE_MIB },	/* MiB */
	[IOBM_S_queue_depth] = { 1, IOBM_MAX_DEPTH },
	[IOBM_S_memory_backed] = { 0, 1 },
};

struct iobm_class {
	u64 cgid;
	enum iobm_dir dir;
	u64 requests;
	u64 sectors;
	u64 busy_ns;
};

struct iobm_dev;

struct iobm_chan {
	struct hrtimer timer;
	struct iobm_dev *dev;
	struct request *rq;	/* in service, NULL: idle */
	ktime_t end;		/* when the model says rq is done */
};

struct iobm_cmd {
	struct list_head fifo;
	ktime_t arrival;
};

struct iobm_dev {
	struct config_item item;

	/* The settings and the power state; settings change only when off. */
	struct mutex cfg_lock;
	const char *profile;	/* the profile the settings started from */
	u64 set[IOBM_NR_SETTINGS];
	struct gendisk *disk;	/* non-NULL: powered on */
	struct blk_mq_tag_set tag_set;
	struct iobm_chan *chans;
	/* The settings in force, taken at power on. */
	struct iobm_profile prof;
	bool memory_backed;

	/* Service: everything below up to data_lock. */
	spinlock_t lock;
	struct list_head fifo;
	u32 busy_chans;
	u32 max_busy_chans;
	struct iobm_state st;
	struct iobm_class classes[IOBM_NR_CLASSES];
	u32 nr_classes;
	u64 untracked;		/* requests of no class: the table was full */
	u64 requests;
	u64 busy_ns;
	u64 flushes;
	u64 fuas;
	u64 late_ns;		/* sum of how late the timers ran */
	u64 late_max_ns;
	u32 in_flight;
	u32 max_in_flight;
	u64 crashes;

	/* Data (memory_backed): page index -> struct page. */
	struct mutex data_lock;
	struct xarray store;	/* stable */
	struct xarray cache;	/* written, not yet flushed */
};

static inline struct iobm_dev *to_iobm(struct config_item *item)
{
	return container_of(item, struct iobm_dev, item);
}

/* ---- data ------------------------------------------------------------ */

static void iobm_free_pages(struct xarray *xa)
{
	struct page *page;
	unsigned long idx;

	xa_for_each(xa, idx, page) {
		xa_erase(xa, idx);
		__free_page(page);
	}
}

/* The page at @idx of @xa, made (a copy of @init, or zeros) if absent. */
static struct page *iobm_page(struct xarray *xa, unsigned long idx,
			      struct page *init)
{
	struct page *page = xa_load(xa, idx);

	if (page)
		return page;
	page = alloc_page(GFP_NOIO);
	if (!page)
		return NULL;
	if (init)
		copy_highpage(page, init);
	else
		clear_highpage(page);
	if (xa_is_err(xa_store(xa, idx, page, GFP_NOIO))) {
		__free_page(page);
		return NULL;
	}
	return page;
}

static void iobm_copy_to(struct page *page, unsigned int off, void *buf,
			 unsigned int len)
{
	void *p = kmap_local_page(page);

	memcpy(p + off, buf, len);
	kunmap_local(p);
}

/* Move the cache to the store (a flush).  Caller holds data_lock. */
static int iobm_flush_cache(struct iobm_dev *dev)
{
	struct page *page, *old;
	unsigned long idx;

	lockdep_assert_held(&dev->data_lock);
	xa_for_each(&dev->cache, idx, page) {
		old = xa_load(&dev->store, idx);
		if (old) {
			copy_highpage(old, page);
		} else if (xa_is_err(xa_store(&dev->store, idx, page,
					      GFP_NOIO))) {
			return -ENOMEM;
		}
		xa_erase(&dev->cache, idx);
		if (old)
			__free_page(page);
	}
	return 0;
}

/* Zero sectors [@s, @e) of one page, where @xa has it. */
static void iobm_zero(struct xarray *xa, sector_t s, sector_t e)
{
	struct page *page = xa_load(xa, s >> PAGE_SECTORS_SHIFT);

	if (page)
		memzero_page(page, (s & SECTOR_MASK) << SECTOR_SHIFT,
			     (e - s) << SECTOR_SHIFT);
}

/* Drop what a discard covers: whole pages go, partial ones read zeros. */
static void iobm_discard(struct iobm_dev *dev, sector_t sector, u32 sectors)
{
	struct xarray *xas[] = { &dev->cache, &dev->store };
	sector_t end = sector + sectors;
	unsigned long first = DIV_ROUND_UP(sector, PAGE_SECTORS);
	unsigned long last = end >> PAGE_SECTORS_SHIFT;	/* exclusive */
	sector_t head = (sector_t)first << PAGE_SECTORS_SHIFT;
	sector_t tail = (sector_t)last << PAGE_SECTORS_SHIFT;
	struct page *page;
	unsigned long idx;
	int i;

	lockdep_assert_held(&dev->data_lock);
	for (i = 0; i < ARRAY_SIZE(xas); i++) {
		if (first > last) {	/* inside one page */
			iobm_zero(xas[i], sector, end);
			continue;
		}
		if (first < last) {
			xa_for_each_range(xas[i], idx, page, first, last - 1) {
				xa_erase(xas[i], idx);
				__free_page(page);
			}
		}
		if (sector < head)
			iobm_zero(xas[i], sector, head);
		if (tail < end)
			iobm_zero(xas[i], tail, end);
	}
}

/* One piece of a write, within one page of the device. */
static int iobm_write_piece(struct iobm_dev *dev, unsigned long idx,
			    unsigned int off, void *buf, unsigned int len,
			    bool fua)
{
	struct page *page;

	if (dev->prof.cache_kib && !fua) {
		page = iobm_page(&dev->cache, idx, xa_load(&dev->store, idx));
		if (!page)
			return -ENOMEM;
		iobm_copy_to(page, off, buf, len);
		return 0;
	}
	page = iobm_page(&dev->store, idx, NULL);
	if (!page)
		return -ENOMEM;
	iobm_copy_to(page, off, buf, len);
	/* a cached older copy must not hide (or, flushed, undo) this write */
	page = xa_load(&dev->cache, idx);
	if (page)
		iobm_copy_to(page, off, buf, len);
	return 0;
}

static void iobm_read_piece(struct iobm_dev *dev, unsigned long idx,
			    unsigned int off, void *buf, unsigned int len)
{
	struct page *page = xa_load(&dev->cache, idx);
	void *p;

	if (!page)
		page = xa_load(&dev->store, idx);
	if (!page) {
		memset(buf, 0, len);
		return;
	}
	p = kmap_local_page(page);
	memcpy(buf, p + off, len);
	kunmap_local(p);
}

/*
 * Move @rq's data.  Caller holds data_lock.  A write that fails half way
 * is repeated whole (BLK_STS_RESOURCE), so a partial copy does no harm.
 */
static int iobm_transfer(struct iobm_dev *dev, struct request *rq)
{
	bool write = req_op(rq) == REQ_OP_WRITE;
	bool fua = rq->cmd_flags & REQ_FUA;
	sector_t sector = blk_rq_pos(rq);
	struct req_iterator iter;
	struct bio_vec bv;
	int err;

	lockdep_assert_held(&dev->data_lock);
	if (req_op(rq) == REQ_OP_FLUSH || (rq->cmd_flags & REQ_PREFLUSH)) {
		err = iobm_flush_cache(dev);
		if (err)
			return err;
	}
	if (req_op(rq) == REQ_OP_DISCARD) {
		iobm_discard(dev, sector, blk_rq_sectors(rq));
		return 0;
	}
	if (req_op(rq) != REQ_OP_READ && !write)
		return 0;

	rq_for_each_segment(bv, rq, iter) {
		void *buf = bvec_kmap_local(&bv);
		unsigned int done = 0;

		err = 0;
		while (done < bv.bv_len) {
			unsigned long idx = sector >> PAGE_SECTORS_SHIFT;
			unsigned int off = (sector & SECTOR_MASK) << SECTOR_SHIFT;
			unsigned int len = min_t(unsigned int, bv.bv_len - done,
						 PAGE_SIZE - off);

			if (write)
				err = iobm_write_piece(dev, idx, off, buf + done,
						       len, fua);
			else
				iobm_read_piece(dev, idx, off, buf + done, len);
			if (err)
				break;
			done += len;
			sector += len >> SECTOR_SHIFT;
		}
		kunmap_local(buf);
		if (err)
			return err;
	}
	return 0;
}

/* ---- service ----------------------------------------------------------- */

static u64 iobm_rq_cgid(struct request *rq)
{
	struct cgroup_subsys_state *css = rq->bio ? bio_blkcg_css(rq->bio) : NULL;

	return css ? cgroup_id(css->cgroup) : 0;
}

static void iobm_account(struct iobm_dev *dev, u64 cgid, enum iobm_dir dir,
			 u32 sectors, u64 ns)
{
	struct iobm_class *c = NULL;
	u32 i;

	lockdep_assert_held(&dev->lock);
	dev->requests++;
	dev->busy_ns += ns;
	for (i = 0; i < dev->nr_classes && !c; i++)
		if (dev->classes[i].cgid == cgid && dev->classes[i].dir == dir)
			c = &dev->classes[i];
	if (!c) {
		if (dev->nr_classes == IOBM_NR_CLASSES) {
			dev->untracked++;
			return;
		}
		c = &dev->classes[dev->nr_classes++];
		*c = (struct iobm_class){ .cgid = cgid, .dir = dir };
	}
	c->requests++;
	c->sectors += sectors;
	c->busy_ns += ns;
}

/* @chan takes @rq, whose service starts at @start. */
static void iobm_start(struct iobm_dev *dev, struct iobm_chan *chan,
		       struct request *rq, ktime_t start)
{
	enum req_op op = req_op(rq);
	struct iobm_req r = {
		.dir = op == REQ_OP_READ ? IOBM_READ : IOBM_WRITE,
		.sector = blk_rq_pos(rq),
		.sectors = op == REQ_OP_FLUSH ? 0 : blk_rq_sectors(rq),
		.flush = op == REQ_OP_FLUSH || (rq->cmd_flags & REQ_PREFLUSH),
		.fua = rq->cmd_flags & REQ_FUA,
		.discard = op == REQ_OP_DISCARD,
	};
	u64 ns;

	lockdep_assert_held(&dev->lock);
	ns = iobm_service_ns(&dev->prof, &dev->st, &r);
	chan->rq = rq;
	chan->end = ktime_add_ns(start, ns);
	iobm_account(dev, iobm_rq_cgid(rq), r.dir, r.sectors, ns);
	dev->flushes += r.flush;
	dev->fuas += r.fua;
}

static enum hrtimer_restart iobm_timer_fn(struct hrtimer *timer)
{
	struct iobm_chan *chan = container_of(timer, struct iobm_chan, timer);
	struct iobm_dev *dev = chan->dev;
	enum hrtimer_restart ret = HRTIMER_NORESTART;
	ktime_t now = ktime_get();
	struct request *rq;
	struct iobm_cmd *cmd;
	unsigned long flags;
	u64 late;

	spin_lock_irqsave(&dev->lock, flags);
	rq = chan->rq;
	late = ktime_after(now, chan->end) ? ktime_to_ns(ktime_sub(now, chan->end)) : 0;
	dev->late_ns += late;
	dev->late_max_ns = max(dev->late_max_ns, late);
	dev->in_flight--;
	cmd = list_first_entry_or_null(&dev->fifo, struct iobm_cmd, fifo);
	if (cmd) {
		list_del(&cmd->fifo);
		iobm_start(dev, chan, blk_mq_rq_from_pdu(cmd),
			   ktime_after(cmd->arrival, chan->end) ?
			   cmd->arrival : chan->end);
		hrtimer_set_expires(timer, chan->end);
		ret = HRTIMER_RESTART;
	} else {
		chan->rq = NULL;
		dev->busy_chans--;
	}
	spin_unlock_irqrestore(&dev->lock, flags);
	blk_mq_end_request(rq, BLK_STS_OK);
	return ret;
}

static blk_status_t iobm_queue_rq(struct blk_mq_hw_ctx *hctx,
				  const struct blk_mq_queue_data *bd)
{
	struct request *rq = bd->rq;
	struct iobm_dev *dev = hctx->queue->queuedata;
	struct iobm_cmd *cmd = blk_mq_rq_to_pdu(rq);
	struct iobm_chan *chan = NULL;
	unsigned long flags;
	u32 i;

	switch (req_op(rq)) {
	case REQ_OP_READ:
	case REQ_OP_WRITE:
	case REQ_OP_FLUSH:
	case REQ_OP_DISCARD:
		break;
	default:
		return BLK_STS_NOTSUPP;
	}
	if (dev->memory_backed) {
		int err;

		mutex_lock(&dev->data_lock);
		err = iobm_transfer(dev, rq);
		mutex_unlock(&dev->data_lock);
		if (err)
			return BLK_STS_RESOURCE;
	}
	blk_mq_start_request(rq);
	cmd->arrival = ktime_get();

	spin_lock_irqsave(&dev->lock, flags);
	dev->in_flight++;
	dev->max_in_flight = max(dev->max_in_flight, dev->in_flight);
	if (dev->busy_chans < dev->prof.channels) {
		for (i = 0; i < dev->prof.channels; i++) {
			if (!dev->chans[i].rq) {
				chan = &dev->chans[i];
				break;
			}
		}
	}
	if (chan) {
		dev->busy_chans++;
		dev->max_busy_chans = max(dev->max_busy_chans, dev->busy_chans);
		iobm_start(dev, chan, rq, cmd->arrival);
		hrtimer_start(&chan->timer, chan->end, HRTIMER_MODE_ABS);
	} else {
		list_add_tail(&cmd->fifo, &dev->fifo);
	}
	spin_unlock_irqrestore(&dev->lock, flags);
	return BLK_STS_OK;
}

static const struct blk_mq_ops iobm_mq_ops = {
	.queue_rq = iobm_queue_rq,
};

static const struct block_device_operations iobm_fops = {
	.owner = THIS_MODULE,
};

/* Power loss: what was not flushed is gone. */
static void iobm_crash(struct iobm_dev *dev)
{
	mutex_lock(&dev->data_lock);
	iobm_free_pages(&dev->cache);
	spin_lock_irq(&dev->lock);
	dev->st.dirty_kib = 0;
	dev->crashes++;
	spin_unlock_irq(&dev->lock);
	mutex_unlock(&dev->data_lock);
}

static void iobm_reset_stats(struct iobm_dev *dev)
{
	spin_lock_irq(&dev->lock);
	dev->nr_classes = 0;
	dev->untracked = 0;
	dev->requests = 0;
	dev->busy_ns = 0;
	dev->flushes = 0;
	dev->fuas = 0;
	dev->late_ns = 0;
	dev->late_max_ns = 0;
	dev->max_in_flight = dev->in_flight;
	dev->max_busy_chans = dev->busy_chans;
	spin_unlock_irq(&dev->lock);
}

static void iobm_profile_to_settings(const struct iobm_profile *p, u64 *set)
{
	set[IOBM_S_channels] = p->channels;
	set[IOBM_S_read_base_ns] = p->base_ns[IOBM_READ];
	set[IOBM_S_write_base_ns] = p->base_ns[IOBM_WRITE];
	set[IOBM_S_read_per_kib_ns] = p->per_kib_ns[IOBM_READ];
	set[IOBM_S_write_per_kib_ns] = p->per_kib_ns[IOBM_WRITE];
	set[IOBM_S_seek_min_ns] = p->seek_min_ns;
	set[IOBM_S_seek_max_ns] = p->seek_max_ns;
	set[IOBM_S_capacity_sectors] = p->capacity_sectors;
	set[IOBM_S_cache_kib] = p->cache_kib;
	set[IOBM_S_flush_base_ns] = p->flush_base_ns;
}

/* The settings come into force; false (and a message) if they clash. */
static bool iobm_apply_settings(struct iobm_dev *dev)
{
	struct iobm_profile *p = &dev->prof;
	const u64 *set = dev->set;
	const char *name = config_item_name(&dev->item);
	u64 prod;

	lockdep_assert_held(&dev->cfg_lock);
	p->name = dev->profile;
	p->channels = set[IOBM_S_channels];
	p->base_ns[IOBM_READ] = set[IOBM_S_read_base_ns];
	p->base_ns[IOBM_WRITE] = set[IOBM_S_write_base_ns];
	p->per_kib_ns[IOBM_READ] = set[IOBM_S_read_per_kib_ns];
	p->per_kib_ns[IOBM_WRITE] = set[IOBM_S_write_per_kib_ns];
	p->seek_min_ns = set[IOBM_S_seek_min_ns];
	p->seek_max_ns = set[IOBM_S_seek_max_ns];
	p->capacity_sectors = set[IOBM_S_capacity_sectors];
	p->cache_kib = set[IOBM_S_cache_kib];
	p->flush_base_ns = set[IOBM_S_flush_base_ns];
	dev->memory_backed = set[IOBM_S_memory_backed];

	if (p->seek_min_ns > p->seek_max_ns) {
		pr_warn("iobmodel: %s: seek_min_ns %llu is above seek_max_ns %llu\n",
			name, p->seek_min_ns, p->seek_max_ns);
		return false;
	}
	if (check_mul_overflow(p->seek_max_ns - p->seek_min_ns,
			       p->capacity_sectors, &prod)) {
		pr_warn("iobmodel: %s: (seek_max_ns - seek_min_ns) * capacity_sectors overflows 64 bits\n",
			name);
		return false;
	}
	return true;
}

/* Before queue_limits features (6.11): the limits set on the queue. */
#ifndef BLK_FEAT_WRITE_CACHE
static void iobm_set_limits(struct iobm_dev *dev)
{
	struct request_queue *q = dev->disk->queue;
	bool cache = dev->prof.cache_kib;

	blk_queue_logical_block_size(q, SECTOR_SIZE);
	blk_queue_physical_block_size(q, PAGE_SIZE);
	blk_queue_max_hw_sectors(q, IOBM_MAX_HW_SECTORS);
	blk_queue_max_discard_sectors(q, UINT_MAX >> SECTOR_SHIFT);
	q->limits.discard_granularity = PAGE_SIZE;
	blk_queue_write_cache(q, cache, cache);
	if (!dev->prof.seek_max_ns)
		blk_queue_flag_set(QUEUE_FLAG_NONROT, q);
}
#endif

static int iobm_power_on(struct iobm_dev *dev)
{
	struct blk_mq_tag_set *set = &dev->tag_set;
	struct gendisk *disk;
	u32 i;
	int err;

	lockdep_assert_held(&dev->cfg_lock);
	if (!iobm_apply_settings(dev))
		return -EINVAL;
	dev->chans = kcalloc(dev->prof.channels, sizeof(*dev->chans), GFP_KERNEL);
	if (!dev->chans)
		return -ENOMEM;
	for (i = 0; i < dev->prof.channels; i++) {
		hrtimer_init(&dev->chans[i].timer, CLOCK_MONOTONIC,
			     HRTIMER_MODE_ABS);
		dev->chans[i].timer.function = iobm_timer_fn;
		dev->chans[i].dev = dev;
	}
	dev->busy_chans = 0;
	dev->in_flight = 0;
	dev->st = (struct iobm_state){ 0 };
	iobm_reset_stats(dev);

	memset(set, 0, sizeof(*set));
	set->ops = &iobm_mq_ops;
	set->nr_hw_queues = 1;
	set->queue_depth = dev->set[IOBM_S_queue_depth];
	set->numa_node = NUMA_NO_NODE;
	set->cmd_size = sizeof(struct iobm_cmd);
	set->flags = BLK_MQ_F_SHOULD_MERGE | BLK_MQ_F_BLOCKING;
	set->driver_data = dev;
	err = blk_mq_alloc_tag_set(set);
	if (err)
		goto free_chans;

#ifdef BLK_FEAT_WRITE_CACHE
	{
		struct queue_limits lim = {
			.logical_block_size = SECTOR_SIZE,
			.physical_block_size = PAGE_SIZE,
			.max_hw_sectors = IOBM_MAX_HW_SECTORS,
			.max_hw_discard_sectors = UINT_MAX >> SECTOR_SHIFT,
			.discard_granularity = PAGE_SIZE,
		};

		if (dev->prof.cache_kib)
			lim.features |= BLK_FEAT_WRITE_CACHE | BLK_FEAT_FUA;
		if (dev->prof.seek_max_ns)
			lim.features |= BLK_FEAT_ROTATIONAL;
		disk = blk_mq_alloc_disk(set, &lim, dev);
	}
#else
	disk = blk_mq_alloc_disk(set, dev);
#endif
	if (IS_ERR(disk)) {
		err = PTR_ERR(disk);
		goto free_set;
	}
	dev->disk = disk;
#ifndef BLK_FEAT_WRITE_CACHE
	iobm_set_limits(dev);
#endif
	disk->fops = &iobm_fops;
	disk->private_data = dev;
	disk->flags |= GENHD_FL_NO_PART;
	strscpy(disk->disk_name, config_item_name(&dev->item), DISK_NAME_LEN);
	set_capacity(disk, dev->set[IOBM_S_size] << (20 - SECTOR_SHIFT));
	err = add_disk(disk);
	if (err)
		goto put_disk;
	return 0;

put_disk:
	put_disk(disk);
	dev->disk = NULL;
free_set:
	blk_mq_free_tag_set(set);
free_chans:
	kfree(dev->chans);
	dev->chans = NULL;
	return err;
}

static void iobm_power_off(struct iobm_dev *dev)
{
	u32 i;

	lockdep_assert_held(&dev->cfg_lock);
	/* del_gendisk waits for every request: the timers are idle after it */
	del_gendisk(dev->disk);
	put_disk(dev->disk);
	dev->disk = NULL;
	blk_mq_free_tag_set(&dev->tag_set);
	for (i = 0; i < dev->prof.channels; i++)
		hrtimer_cancel(&dev->chans[i].timer);
	kfree(dev->chans);
	dev->chans = NULL;
	iobm_crash(dev);
}

/* ---- configfs ---------------------------------------------------------- */

static int iobm_busy(struct iobm_dev *dev, const char *attr)
{
	pr_warn("iobmodel: %s: %s: cannot change while powered on\n",
		config_item_name(&dev->item), attr);
	return -EBUSY;
}

static ssize_t iobm_setting_show(struct config_item *item, char *page,
				 enum iobm_setting s)
{
	struct iobm_dev *dev = to_iobm(item);
	u64 v;

	mutex_lock(&dev->cfg_lock);
	v = dev->set[s];
	mutex_unlock(&dev->cfg_lock);
	return sprintf(page, "%llu\n", v);
}

/*
 * A powered-on device takes a new cost per request (the base and per-KiB
 * times, the flush's) for the requests that start service after it, so a
 * benchmark can change the device under a running load; the other
 * settings shape the disk or depend on each other, and wait for power off.
 * Caller holds cfg_lock; false: @s is not one of those.
 */
static bool iobm_set_live(struct iobm_dev *dev, enum iobm_setting s, u64 v)
{
	struct iobm_profile *p = &dev->prof;
	u64 *live[IOBM_NR_SETTINGS] = {
		[IOBM_S_read_base_ns] = &p->base_ns[IOBM_READ],
		[IOBM_S_write_base_ns] = &p->base_ns[IOBM_WRITE],
		[IOBM_S_read_per_kib_ns] = &p->per_kib_ns[IOBM_READ],
		[IOBM_S_write_per_kib_ns] = &p->per_kib_ns[IOBM_WRITE],
		[IOBM_S_flush_base_ns] = &p->flush_base_ns,
	};

	lockdep_assert_held(&dev->cfg_lock);
	if (!live[s])
		return false;
	/* iobm_start() reads the profile under dev->lock */
	spin_lock_irq(&dev->lock);
	*live[s] = v;
	spin_unlock_irq(&dev->lock);
	return true;
}

/* A number in the setting's range; see iobm_set_live() for when. */
static ssize_t iobm_setting_store(struct config_item *item, const char *page,
				  size_t count, enum iobm_setting s,
				  const char *attr)
{
	struct iobm_dev *dev = to_iobm(item);
	const char *name = config_item_name(item);
	int err = 0;
	u64 v;

	if (kstrtou64(page, 0, &v)) {
		pr_warn("iobmodel: %s: %s: not a number\n", name, attr);
		return -EINVAL;
	}
	if (v < iobm_range[s].min || v > iobm_range[s].max) {
		pr_warn("iobmodel: %s: %s: %llu is outside [%llu, %llu]\n",
			name, attr, v, iobm_range[s].min, iobm_range[s].max);
		return -ERANGE;
	}
	mutex_lock(&dev->cfg_lock);
	if (dev->disk && !iobm_set_live(dev, s, v))
		err = iobm_busy(dev, attr);
	else
		dev->set[s] = v;
	mutex_unlock(&dev->cfg_lock);
	return err ? err : count;
}

#define IOBM_ATTR(_name)						\
static ssize_t iobm_##_name##_show(struct config_item *item, char *page)\
{									\
	return iobm_setting_show(item, page, IOBM_S_##_name);		\
}									\
static ssize_t iobm_##_name##_store(struct config_item *item,		\
				    const char *page, size_t count)	\
{									\
	return iobm_setting_store(item, page, count, IOBM_S_##_name,	\
				  #_name);				\
}									\
CONFIGFS_ATTR(iobm_, _name)

IOBM_ATTR(channels);
IOBM_ATTR(read_base_ns);
IOBM_ATTR(write_base_ns);
IOBM_ATTR(read_per_kib_ns);
IOBM_ATTR(write_per_kib_ns);
IOBM_ATTR(seek_min_ns);
IOBM_ATTR(seek_max_ns);
IOBM_ATTR(capacity_sectors);
IOBM_ATTR(cache_kib);
IOBM_ATTR(flush_base_ns);
IOBM_ATTR(size);
IOBM_ATTR(queue_depth);
IOBM_ATTR(memory_backed);

static ssize_t iobm_profile_show(struct config_item *item, char *page)
{
	struct iobm_dev *dev = to_iobm(item);
	ssize_t ret;

	mutex_lock(&dev->cfg_lock);
	ret = sprintf(page, "%s\n", dev->profile);
	mutex_unlock(&dev->cfg_lock);
	return ret;
}

/* Every field of the profile takes the named profile's value. */
static ssize_t iobm_profile_store(struct config_item *item, const char *page,
				  size_t count)
{
	struct iobm_dev *dev = to_iobm(item);
	struct iobm_profile p;
	char name[16];
	ssize_t ret = count;

	strscpy(name, page, sizeof(name));
	strim(name);
	if (!iobm_profile_get(name, &p)) {
		pr_warn("iobmodel: %s: unknown profile '%s' (ssd, nvme, disk)\n",
			config_item_name(item), name);
		return -EINVAL;
	}
	mutex_lock(&dev->cfg_lock);
	if (dev->disk) {
		ret = iobm_busy(dev, "profile");
	} else {
		dev->profile = p.name;
		iobm_profile_to_settings(&p, dev->set);
	}
	mutex_unlock(&dev->cfg_lock);
	return ret;
}
CONFIGFS_ATTR(iobm_, profile);

static ssize_t iobm_power_show(struct config_item *item, char *page)
{
	struct iobm_dev *dev = to_iobm(item);
	ssize_t ret;

	mutex_lock(&dev->cfg_lock);
	ret = sprintf(page, "%d\n", !!dev->disk);
	mutex_unlock(&dev->cfg_lock);
	return ret;
}

static ssize_t iobm_power_store(struct config_item *item, const char *page,
				size_t count)
{
	struct iobm_dev *dev = to_iobm(item);
	bool on;
	int err = kstrtobool(page, &on);

	if (err)
		return err;
	mutex_lock(&dev->cfg_lock);
	if (on && !dev->disk)
		err = iobm_power_on(dev);
	else if (!on && dev->disk)
		iobm_power_off(dev);
	mutex_unlock(&dev->cfg_lock);
	return err ? err : count;
}
CONFIGFS_ATTR(iobm_, power);

static ssize_t iobm_crash_store(struct config_item *item, const char *page,
				size_t count)
{
	bool crash;
	int err = kstrtobool(page, &crash);

	if (err)
		return err;
	if (crash)
		iobm_crash(to_iobm(item));
	return count;
}
CONFIGFS_ATTR_WO(iobm_, crash);

static ssize_t iobm_stats_show(struct config_item *item, char *page)
{
	static const char * const dirs[] = { "read", "write" };
	struct iobm_dev *dev = to_iobm(item);
	ssize_t n = 0;
	u32 i;

	spin_lock_irq(&dev->lock);
	for (i = 0; i < dev->nr_classes; i++) {
		const struct iobm_class *c = &dev->classes[i];

		n += scnprintf(page + n, PAGE_SIZE - n,
			       "cgroup %llu %s requests %llu sectors %llu busy_ns %llu\n",
			       c->cgid, dirs[c->dir], c->requests, c->sectors,
			       c->busy_ns);
	}
	n += scnprintf(page + n, PAGE_SIZE - n,
		       "total requests %llu busy_ns %llu untracked %llu in_flight %u max_in_flight %u max_busy_channels %u flushes %llu fua %llu dirty_kib %llu crashes %llu late_ns %llu late_max_ns %llu\n",
		       dev->requests, dev->busy_ns, dev->untracked, dev->in_flight,
		       dev->max_in_flight, dev->max_busy_chans, dev->flushes, dev->fuas,
		       dev->st.dirty_kib, dev->crashes, dev->late_ns,
		       dev->late_max_ns);
	spin_unlock_irq(&dev->lock);
	return n;
}

/* Writing 0 starts the counts afresh. */
static ssize_t iobm_stats_store(struct config_item *item, const char *page,
				size_t count)
{
	u64 v;

	if (kstrtou64(page, 0, &v) || v)
		return -EINVAL;
	iobm_reset_stats(to_iobm(item));
	return count;
}
CONFIGFS_ATTR(iobm_, stats);

static struct configfs_attribute *iobm_attrs[] = {
	&iobm_attr_profile,
	&iobm_attr_channels,
	&iobm_attr_read_base_ns,
	&iobm_attr_write_base_ns,
	&iobm_attr_read_per_kib_ns,
	&iobm_attr_write_per_kib_ns,
	&iobm_attr_seek_min_ns,
	&iobm_attr_seek_max_ns,
	&iobm_attr_capacity_sectors,
	&iobm_attr_cache_kib,
	&iobm_attr_flush_base_ns,
	&iobm_attr_size,
	&iobm_attr_queue_depth,
	&iobm_attr_memory_backed,
	&iobm_attr_power,
	&iobm_attr_crash,
	&iobm_attr_stats,
	NULL,
};

static void iobm_release(struct config_item *item)
{
	struct iobm_dev *dev = to_iobm(item);

	iobm_free_pages(&dev->cache);
	iobm_free_pages(&dev->store);
	xa_destroy(&dev->cache);
	xa_destroy(&dev->store);
	mutex_destroy(&dev->data_lock);
	mutex_destroy(&dev->cfg_lock);
	kfree(dev);
}

static struct configfs_item_operations iobm_item_ops = {
	.release = iobm_release,
};

static const struct config_item_type iobm_dev_type = {
	.ct_item_ops = &iobm_item_ops,
	.ct_attrs = iobm_attrs,
	.ct_owner = THIS_MODULE,
};

static struct config_item *iobm_make_item(struct config_group *group,
					  const char *name)
{
	struct iobm_profile prof;
	struct iobm_dev *dev;

	if (strlen(name) >= DISK_NAME_LEN) {
		pr_warn("iobmodel: name '%s' is longer than %d characters\n",
			name, DISK_NAME_LEN - 1);
		return ERR_PTR(-ENAMETOOLONG);
	}
	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return ERR_PTR(-ENOMEM);
	mutex_init(&dev->cfg_lock);
	mutex_init(&dev->data_lock);
	spin_lock_init(&dev->lock);
	INIT_LIST_HEAD(&dev->fifo);
	xa_init(&dev->store);
	xa_init(&dev->cache);
	iobm_profile_get("ssd", &prof);
	dev->profile = prof.name;
	iobm_profile_to_settings(&prof, dev->set);
	dev->set[IOBM_S_size] = 1024;
	dev->set[IOBM_S_queue_depth] = 64;
	config_item_init_type_name(&dev->item, name, &iobm_dev_type);
	return &dev->item;
}

static void iobm_drop_item(struct config_group *group, struct config_item *item)
{
	struct iobm_dev *dev = to_iobm(item);

	mutex_lock(&dev->cfg_lock);
	if (dev->disk)
		iobm_power_off(dev);
	mutex_unlock(&dev->cfg_lock);
	config_item_put(item);
}

static struct configfs_group_operations iobm_group_ops = {
	.make_item = iobm_make_item,
	.drop_item = iobm_drop_item,
};

static const struct config_item_type iobm_subsys_type = {
	.ct_group_ops = &iobm_group_ops,
	.ct_owner = THIS_MODULE,
};

static struct configfs_subsystem iobm_subsys = {
	.su_group = {
		.cg_item = {
			.ci_namebuf = "iobmodel",
			.ci_type = &iobm_subsys_type,
		},
	},
};

static int __init iobm_init(void)
{
	config_group_init(&iobm_subsys.su_group);
	mutex_init(&iobm_subsys.su_mutex);
	return configfs_register_subsystem(&iobm_subsys);
}

static void __exit iobm_exit(void)
{
	configfs_unregister_subsystem(&iobm_subsys);
}

module_init(iobm_init);
module_exit(iobm_exit);
MODULE_DESCRIPTION("Block device with a cost model, for dm-ioband's tests");
MODULE_LICENSE("GPL");

// SPDX-License-Identifier: GPL-2.0
/*
 * dm-ioband: a device-mapper target that shares the bandwidth of a block
 * device among groups of I/O.
 *
 * 1. Devices, device groups and groups
 *
 * An ioband device is one ioband target: it remaps its bios to one device
 * below (a disk, a partition, a logical volume).  Every ioband device
 * names a device group, and all ioband devices that name the same device
 * group share one scheduler: its policy, its settings and its limit on
 * bios in flight.  The partitions of one disk, each behind its own ioband
 * device in one device group, thus divide the disk between them.
 *
 * Each ioband device sorts its bios into groups by a group type: none
 * (everything in the device's default group), user, gid, pid, pgrp (taken
 * from the submitting task, which for bios dm core deferred to its worker
 * while the device was suspended is that worker) or cgroup, and then the
 * nearest ancestor that has a group.  A bio's cgroup is that of the blkcg
 * association of the bio submitted to the ioband device, the one the
 * kernel's own I/O controllers charge: writeback is charged to the cgroup
 * the inode's writeback belongs to, a driver stacked above (dm-crypt, md,
 * loop) passes on the cgroup of the bio it was given, swap-out is charged
 * to the page's owner, and a direct write to the writer whoever owns its
 * pages.  dm core gives a clone that association only when it submits it,
 * after map(), so ioband reads the original's (see ioband_orig_css()); a
 * bio with none is charged to the owner of its page cache pages, else to
 * the submitting task's cgroup.  A bio with no group of its own
 * goes to the device's default group.  Groups belong to their ioband
 * device; the scheduler of the device group sees all groups of all its
 * devices side by side.
 *
 * 2. Virtual time
 *
 * The weight policies give each group a share of the device group's
 * service in proportion to its weight.  Service is counted in sectors: a
 * bio costs one token (8 sectors) under "weight", and its size under
 * "weight-iosize".  Each group keeps a virtual time that serving it
 * advances by cost / weight; the device group keeps a virtual clock that
 * every dispatch advances by cost / (sum of the weights of the active
 * groups).  While every active group keeps up, their virtual times advance
 * with the clock, and each has received service in proportion to its
 * weight.  A group running alone sets the clock to its own virtual time.
 *
 * Virtual times are 64-bit and wrap; two of them compare by their signed
 * difference, which is right while they are less than 2^63 apart.  Busy
 * groups stay within a few windows of the clock, but an idle group's time
 * stands still: at weight 1 and 1 MiB bios the clock runs 2^63 in about a
 * million bios, a day of uptime at the default weight.  So the device
 * group also counts the clock's epochs (eighths of 2^64, wraps included),
 * and each group the epoch in which its time was last set: a group two or
 * more epochs old is known to be far behind, and gets the credit any
 * group behind the clock gets (3. below), whatever the difference says.
 *
 * 3. Tokens: the window and the carry-over
 *
 * A group may run ahead of the clock by one window, its share of
 * token_base tokens (the ancestor's tokens per epoch) among the active
 * groups: window = token_base / active weight in virtual time, so that
 * groups configured but idle do not shrink it (with 64 busy groups among
 * 1024, sharing it by the total weight held every other bio of a light
 * group).  It is never less than token_base, or one token per group if
 * there are more groups, shared by the total weight.  Past the window a
 * group's bios are held in its queue until the clock catches up.  A group
 * that was idle, or kept fewer bios busy than its share, falls behind the
 * clock; when it next sends bios it keeps at most carryover windows of
 * that credit, so idling cannot be saved up into a long burst.  Windows
 * of the same kind, so that idle groups do not shrink the credit either:
 * a single synchronous stream returns with every bio (4. below), and
 * lives on it.
 *
 * 4. Who counts as busy: activity, grace and work conservation
 *
 * A group is active, and its weight slows the clock, while it has bios
 * held or in flight.  The processes of a busy group are often all between
 * two I/Os at once (thinking, or waiting for a CPU): if the group stopped
 * counting at that instant, the others would take its share and the
 * weights would mean little.  So a group that has had two or more bios in
 * the scheduler at once stays active for idle_ns (2 ms) after its last one
 * completed.  A group that has only ever had one bio at a time is a single
 * synchronous stream whose pauses are its own, and gives up its share at
 * once: holding the others back for it would only idle the device.
 *
 * Held bios wait for the clock, and the clock moves when an active group
 * that is not held sends a bio.  When every active group is held beyond
 * its window, nothing could move it: the clock jumps forward to the group
 * furthest behind, as if a new epoch had begun, and the idle share is
 * handed out at once and charged to no one.  When only a grace period
 * stands in the way, a timer asks again when it runs out.  A lone busy
 * group is level with the clock and never waits.  io_throttle, when set,
 * also lets the group furthest behind past its window while fewer bios
 * than that are in flight: it trades accuracy for keeping a deep device
 * queue full.  io_limit bounds the bios in flight, so a deep queue below
 * cannot swallow the order ioband chose.
 *
 * 5. Choosing the next bio
 *
 * The groups that hold bios sit in a min-heap on virtual time.  When a bio
 * completes, or settings change, the head of the heap is released while
 * it is within its window (or the device is under-used) and fewer than
 * io_limit bios are in flight.  Bios of one group leave in the order they
 * came.  This is the arithmetic of dm-ioband-policy.c, which takes no
 * lock, allocates nothing and builds in userspace for tests.
 *
 * 6. Minimum and maximum bandwidth
 *
 * Under range-bw each group also has two token buckets, filled at its
 * minimum and maximum rates.  A group whose cap bucket is empty is held
 * whatever the device is doing, and an hrtimer fires when its debt is
 * paid; a group whose minimum bucket has tokens goes before all others.
 * The rest is shared by weight through the virtual clock as above.  What
 * a group is sent under its minimum is owed to it, not part of its share,
 * so it moves no virtual time: had it counted, a group that ran on its
 * minimum would find itself far ahead of the others, and starved, once
 * the minimum was met or removed.
 *
 * The choice takes O(log n) of the held groups, not a scan of them: the
 * held groups are filed by class in heaps (free to send, those below
 * their minimum first; capped, by when their debt is paid; met, by when
 * their minimum is owed again), a group's buckets refill only when it is
 * touched, and each choice first re-files at most IOBAND_RANGE_BATCH (8)
 * groups whose class changed with time.  When more fall due at once, the
 * rest are re-filed on the calls that follow, which come at once: with k
 * due together, the last is re-filed up to ceil(k / 8) - 1 releases late.
 *
 * 7. A bio's life
 *
 * map() remaps the bio to the device below and, under the device group's
 * spinlock, classifies it and asks the scheduler.  If its group holds nothing
 * and may be served, the bio is charged and returned to device-mapper,
 * which submits it: the fast path, one lock round trip and no queueing.
 * Otherwise the bio is appended to its group's queue and map() asks the
 * scheduler what may go now; if that releases this very bio first in line
 * (after every older bio of its group), map() returns it to
 * device-mapper as on the fast path, else it stays (DM_MAPIO_SUBMITTED).
 * end_io() counts the completion and moves the bios the scheduler now
 * allows to the ready list of the CPU that mapped each; that CPU's work
 * item submits them with dm_submit_bio_remap(), since completions may run
 * in interrupt context where submitting may not sleep.  So a held bio goes
 * down from its submitter's CPU, to that CPU's queue on a multi-queue
 * device, and no single worker carries every CPU's bios.  A CPU's bios go
 * down in the order they were released; bios of different CPUs, which
 * their submitters had in flight at once, in any order.  Each device
 * group has a workqueue of its own (WQ_MEM_RECLAIM, so it makes progress
 * under memory pressure): with ioband on ioband in two device groups, the
 * upper group's worker submits to the lower device, and on one shared
 * workqueue it could wait behind, or be the rescuer for, the very work it
 * needs.  Empty flushes carry no data and are passed through uncharged;
 * a flush only covers writes that have completed, and a held write has
 * not, so passing it is correct.
 *
 * Metadata and swap bios (REQ_META, REQ_SWAP: the kernel's own "issue as
 * root" class) are charged to their group but never held.  Every group
 * may be waiting on them: a journal commit blocks every writer of the
 * filesystem, whatever its group, and if the commit's bios queued behind
 * the weight of a small group (where the journal thread's I/O usually
 * lands), the writers of all groups would move in lockstep, one commit at
 * a time, and the weights would mean nothing.  Sent at once, they still
 * advance their group's virtual time, so the group repays them by waiting
 * longer with its next bios.  They may pass the group's held bios and
 * io_limit; no ordering is lost, since whoever needs an order waits for
 * completion.  What such bios, and those that pass while the device
 * suspends, leave a group owing is bounded, as iocost bounds its debts:
 * at most the carry-over past its window (2 windows by default), and
 * under range-bw at most one burst of its cap bucket (50 ms at the cap,
 * or one 4 KiB bio); the rest is forgiven.  Unbounded, 100 MB of metadata
 * from a group capped at 1000 KB/s stalled its next bio for 102 s.
 *
 * REQ_NOWAIT bios (io_uring's; the target declares DM_TARGET_NOWAIT,
 * without which dm would clear nowait support on the device and io_uring
 * would submit everything from its worker threads) never sleep and are
 * never held: one that the scheduler would hold, or that would queue
 * behind its group's held bios, ends with BLK_STS_AGAIN from map(), so in
 * its submitter's context, where io_uring reissues it from a worker
 * without REQ_NOWAIT (an EAGAIN that came later, from the worker's
 * submission, would reach io_uring outside the submitting task, where it
 * does not reissue).  Nothing in map() sleeps for them or allocates.  dm
 * core's own part differs: 6.12 allocates their dm_io and clone with
 * GFP_NOWAIT and ends them with BLK_STS_AGAIN when that fails, 6.1 takes
 * both from its mempools with GFP_NOIO, as for dm-linear, and may sleep
 * there when memory is short.  Polled bios (REQ_POLLED) are charged but
 * never held, like metadata: their submitter spins polling for them, and
 * holding one would turn that spin into a busy wait for ioband's clock.
 * On 6.1 a dm target cannot refuse polling (dm derives it from the
 * devices below); on 6.12 io_hints could clear it, but then a polled bio
 * to the device fails with BLK_STS_NOTSUPP where it works on dm-linear.
 * So exempting them is the choice left; a group that sends only polled
 * bios is not held to its share or cap, only charged.
 *
 * A group holds at most what it drains in IOBAND_HOLD_MS (200 ms) at its
 * cap, at least IOBAND_HOLD_MIN_SECTORS (64 KiB) and at most
 * IOBAND_HOLD_SECTORS (4 MiB, also the bound of a group without a cap),
 * before the next submitter waits in map() for room, as it would for a
 * free request of a full queue.  Nothing else pushes back: without the
 * bound a flusher handed ioband a whole cgroup's dirty pages at once, a
 * low-weight group held hundreds of MiB, and a journal commit that must
 * wait for some of those pages (ext4's ordered data) waited for all of
 * them, 27 s under a flood where dm-linear took 1.4 s.  The bound follows
 * the cap because a fixed 4 MiB took 40 s to drain at 100 KB/s, and its
 * waiting submitter may hold a locked page.  The wait itself is killable
 * and lasts IOBAND_WAIT_MAX (1 s) at most: then, or on a fatal signal,
 * the bio is held beyond the bound, never refused or lost.  The submitter
 * sleeps only where that is safe and useful: not in a plain kernel
 * thread, which may submit for every group (dm-crypt's writer, jbd2),
 * although a workqueue worker does, and the flusher writing one cgroup's
 * pages back is one; not in an ioband device group's own worker, which
 * submits for every group of its device group (ioband on ioband); not in
 * a filesystem transaction (current->journal_info: ext4 submits writeback
 * under a journal handle, and a commit waits for every handle); and not
 * while bios it submitted earlier still wait on its current->bio_list,
 * since the group may be waiting for those very bios to complete.
 * presuspend and detach wake the sleepers.
 *
 * ioband directly on ioband in one device group would wait on itself (the
 * upper device's bios fill io_limit while the lower one holds them) and
 * is refused when either table is loaded; devices in between are not
 * seen, since dm exports no walk of their tables.
 *
 * 8. Reconfiguration and suspend
 *
 * Messages change weights, settings and groups under the device group's
 * configuration mutex and take the spinlock only to publish the change;
 * I/O is never suspended for them.  A detached group's held bios join the
 * default group's queue; the group itself lives until its bios in flight
 * complete.  presuspend releases every bio the device holds and lets new
 * ones pass until resume, so a suspend never waits on the scheduler.
 *
 * A loaded table changes nothing until it is resumed: its groups are set
 * up outside the scheduler (no weight in any window, no minimum in any
 * sum) and join it in resume.  The device group's settings (policy,
 * io_throttle, io_limit, token_base, bandwidth, cost model) belong to all
 * its devices, so resuming one must not change them for the others:
 * while another mapped device of the group is live, a table must name the
 * group's settings, or it is refused at load, and again in preresume if a
 * message changed them since (dm then leaves the device suspended, as with
 * any failed preresume, until a table that fits is loaded).  A device
 * alone in its group, or replacing its own table, brings its table's
 * settings.
 * The minimums of every live device must fit the stated bandwidth, a
 * resuming table's included.
 *
 * 9. Locking
 *
 * ioband_dgs_lock (mutex) guards the list of device groups.  Each device
 * group has conf_lock (mutex), which serialises constructors, destructors,
 * messages and resume, and lock (spinlock, taken with interrupts off since
 * completions may come in hard interrupt context), which guards the
 * scheduler, the groups' queues and statistics, the group lookup tables and
 * the CPUs' ready lists.  Each device's xarray of groups is changed only under
 * dg->lock or with its own lock taken irq-safe.  No lock is shared between
 * device groups.
 *
 * Interrupts are off while dg->lock is held, so the time it is held must
 * not grow with the number of groups (up to 65536 a device).  A walk over
 * a device's groups (status, reset, presuspend, resume, removal, a table's
 * groups attached) takes the lock for IOBAND_LOCK_BATCH groups at a time
 * (ioband_walk_groups()); removal frees the groups after its walk, outside
 * the lock (ioband_groups_free()); a group that gets room wakes its own
 * waiting submitters, not every group's (ioband_room_queue()); range-bw
 * chooses in O(log n) (see 6.).  Two things still grow with the groups
 * under the lock, both rare and a few stores a group: a policy change by
 * message restarts every group's virtual time, and growing the heap (on
 * attach, doubling) copies it.
 *
 * No CPU spins for dg->lock in hard interrupt context.  A completion
 * (end_io(), which may be one) tries the lock once; if another CPU holds
 * it, the completion is written to a ring of its own CPU's
 * (IOBAND_DONE_SLOTS of them, struct ioband_done: what the scheduler is to
 * be told), the CPU put on dg->done, a lock-free list, and the lock tried
 * once more.  Every holder takes the lock and drops it through
 * ioband_lock_irq() and ioband_unlock(), which tell the scheduler what the
 * rings hold, and the latter releases what those completions allow before
 * it drops the lock, then looks at dg->done again and, if a CPU is on it
 * and the lock is free, takes it and does the same.  With a full barrier
 * between listing and the second try, and between dropping the lock and
 * looking, either the completion gets the lock or the holder sees it
 * listed: none is left untold.  So one CPU releases at a time and the
 * others leave their completions; the only wait is a completion whose
 * ring is full, which takes the lock as before.  The idle timer
 * (ioband_wake()) likewise sets dg->release_owed and tries the lock once.
 * A completion left on a ring is told with its time in flight measured
 * when it came, and the scheduler's clock read when it is told; its
 * group stays in flight until then, so it is not freed under it, and a
 * detached group whose last completion is told is destroyed by whoever
 * tells it (an RCU callback frees it and drops its cgroup).
 *
 * 10. Device time (weight-time)
 *
 * Under weight-time a bio costs the time the device spends on it, so a
 * weight is a share of the device's time whatever a group does: reads or
 * writes, small or large, sequential or random, one process or a hundred.
 * Under weight and weight-iosize, which count bios or bytes, a group whose
 * bios take the device longer (writes on flash, seeks on a disk) gets more
 * of it than its weight says.  Nothing about the device is configured.
 *
 * The estimator.  The device group learns, for each class of bio (read or
 * write; its size, in power-of-two buckets from 4 KiB; sequential if it
 * starts where its group's previous bio ended), the mean time bios of the
 * class spend in flight, from release to completion, averaged over about
 * eight bios.  A bio is charged its class's mean when it goes down, so
 * that the order of release sees its cost before it completes; when it
 * completes, its group's virtual time and the clock move by the
 * difference to its own time in flight.  In the long run a group pays
 * exactly the time its bios were in flight; the table only makes the
 * charge timely.  (Without the correction, 320 KiB and 1 MiB readers,
 * one class, got 26/74 % for 50/50.)  The clock never moves back: what
 * an overcharged bio gives back, the clock owes, and pays out of its next
 * advances.  A class not yet seen costs the mean of all classes, and
 * before the first completion 100 us.
 *
 * Time in flight is device time only while the device is not queueing
 * what ioband released, which is what depth control below is for.  Then
 * a bio in flight is being served: its time is its service time, and a
 * device serving several bios at once is one with several servers.  A
 * bio that goes down beyond the learned depth (a lone group's, which
 * io_limit alone bounds, or an urgent bio) mostly waits below: it pays
 * its class's mean, and its time in flight teaches neither the costs nor
 * the depth.  (Charged its time in flight, a group that ran alone 128
 * bios deep for a few milliseconds before others joined got nothing for
 * the next 0.3 to 1.2 s on the simulated ssd, and nothing for seconds on
 * the disk, where 128 bios wait a second; and the depth, having seen
 * full throughput at every depth it thought it tried, fell to 1 and left
 * the device half idle.)  Of
 * the alternatives tried on the model device, charging time in flight
 * only at completion did as well there, but lets a group release as many
 * bios as the depth before it pays for any; a processor-sharing clock
 * (each bio in flight accrues dt / the number in flight) gave writers
 * among readers on the 32-channel profile 11.9 % for 14.3; the time since
 * the previous completion, which on a device serving in parallel is
 * short whatever the bio, gave them 16.3 %.
 *
 * Its limits.  Whatever else waits below ioband is charged to the bio
 * that waited: another user of the device, a scheduler below, ioband's
 * own worker for released bios.  A probe above the depth the device needs
 * lets some queueing in for one interval.  Sequential means sequential
 * for the group: several streams of one group interleave and look random,
 * and a stream's first bio after another group's pays the seek, which the
 * correction charges it.  A write the device's volatile cache absorbs is
 * charged what it took; the flush that pays for it, if empty, is not
 * charged at all.  One bio counts for at most a second.  A policy switch
 * learns afresh.
 *
 * A model given.  A user who knows the device's costs may give them
 * instead, in the terms of iocost's io.cost.model (model=linear: bytes
 * per second, sequential and random I/Os per second, of reads and of
 * writes), and a bio then costs what the model says, with iocost's
 * arithmetic: a second over the I/Os per second of its direction and kind,
 * less its first page, plus a second over the pages per second for each
 * 4 KiB page, at least one.  The charge stands: no correction at
 * completion, so a model that is wrong is obeyed (writes priced as reads
 * on the ssd profile gave the writers 39 % of the device for 14.3), and a
 * device that changes is not followed.  Device time is then the model's,
 * the whole device for a second being a second, where the learned costs
 * count a bio's time in flight, several bios' at once on a device that
 * serves in parallel: the window of 16.8 ms holds a few times more bios.
 * Sequential stays ioband's (where the group's previous bio ended), not
 * iocost's (within 16 MiB of it).  A 4 KiB read on a fast device costs
 * about a unit, so what a charge leaves below a unit is carried to the
 * group's next bio (dropped, the nvme profile's writers got 11.7 % for
 * 14.3); a REQ_NOWAIT bio ended with EAGAIN has moved that remainder
 * already, by less than a unit.  Depth control and batches still work from
 * what ioband measures.
 *
 * Depth control.  While more than one group is active, ioband keeps in
 * flight no more bios than the device needs for full throughput, so that
 * the device's queue, first come first served, cannot undo the order
 * ioband chose (with the default io_limit of 128, a group of one process
 * against groups of many got 60-62 % for 70).  A lone group has no order
 * to keep, and io_limit alone bounds it: limited to the depth, a group
 * that keeps fewer bios in flight than the device serves at once lost
 * throughput to the depth's probes and to the bio the depth held back (on
 * the simulated nvme profile, 16 bios against 32 channels: 91 % of the
 * bare device, 50 % when ioband's worker took 20 us a release).  The
 * price: a group that becomes active waits for the bios the lone group has
 * in flight beyond the depth, once.  The depth learned while groups
 * compete is kept for the next contention.  The depth is found by hill
 * climbing on completions per second.  An interval is at least 64
 * completions, 8 per bio of depth and 50 ms (on a device serving a read
 * in 46 ms, the ssd profile x400, that is a second or more, and the
 * simulated device was a quarter to half busy for the first 5 s of
 * contention while the depth doubled from 1), and counts only if three
 * completions in four found the depth full with bios held: otherwise the
 * demand, not the depth, was the limit (and a probe the demand cannot fill
 * ends after 16 such completions).  From a depth of 1 it doubles while
 * throughput grows by at least a quarter as much as the depth; a doubling
 * that gained less puts the depth where the gain ran out (the base depth
 * times the ratio of the rates).  Then every 8 intervals it probes a step
 * (an eighth, at least one) up or down, in turn: a step up is kept if
 * throughput grew by a quarter as much as the depth and at least 3/64, a
 * step down if it fell by less, and a kept step is followed at once by
 * another the same way, so the depth follows a device that changes.
 * io_limit caps it.  The probes down cost throughput, one interval in 17
 * at a step less (1.3 % on a device needing 4), and ioband's worker,
 * between a release and the device, costs what it takes: depth control
 * adds depth to hide it only when that gains 3/64 or more (on the model
 * device serving 20 ms reads, a 1 ms worker cost 2 % more than none, a 3
 * ms one 8 %).
 *
 * Batches.  A single stream (a group that has had one bio at a time)
 * pauses between its bios, and the device served the others meanwhile:
 * a sequential reader on a disk paid a seek for each of its reads (4.6 %
 * of what it got alone against a random reader).  So when a stream's bio
 * completes and leaves it nothing, and the stream usually sends its next
 * within a quarter of a mean bio, the device waits for it (twice the
 * stream's think time and an eighth of a mean bio at most), and that bio
 * goes before groups further behind while it is within its window.  The
 * stream is served in batches as long as the window: token_base tokens
 * of 65.5 us, 16.8 ms of device time by default, shared by the active
 * weight, long enough for a sequential batch to pay for the seek that
 * starts it.  On a device serving in parallel, the wait keeps a stream's
 * place, so a synchronous group that cannot use its share alone gets what
 * it can use (max-min fairness).  A wait that guessed wrong leaves the
 * device idle for its length.
 *
 * A group of several bios at once pauses too: each of its submitters
 * sends its next bio a moment after one completes, and with the depth
 * no more than the device needs, the place its bio left was taken at
 * once by a group that holds bios.  So the same wait keeps the place of
 * a group that holds nothing when its bio completes, while the group is
 * behind the clock (it has had less than its share) and its pause, from
 * a completion to its next bio, is short as above.  A group of one
 * process keeping 4 bios in flight against groups of 4 and 16 got 53.9 %
 * of the device for 57.1 on the model device without it (50.6 on the
 * simulated device, pausing 20 us a bio); a group at or past its share
 * waits for nothing.
 *
 * Under weight-time, a group with bios in flight and none held does not
 * keep the clock from jumping (4.): it is asking for no more than it has,
 * and waiting for it left the device 43 % busy with a synchronous group
 * of high weight.  Only a group in its grace does.
 *
 * 11. Limits
 *
 * Any group, under any policy, may have limits of io.max's kinds: bytes
 * or I/Os a second, for reads and writes together or for one direction,
 * and a burst (the unused budget it may keep, 0 by default).  The
 * arithmetic, a pacer per limit and its bound (over any interval T at
 * most rate * (T + burst) and one bio), is "Limits" in dm-ioband-policy.c.
 * Limits act before the scheduler: a bio that its limits do not allow
 * yet, or that comes behind bios of its group that wait, waits in the
 * group's limit queue (a limit is a cap, not a share, so the device's
 * other groups are no concern of it), and the group waits in the limited
 * heap, by when its first bio may go, for the device group's hrtimer.
 * When the limits allow it, the bio is charged to them and joins the
 * scheduler as a new bio would.  The scheduler holds at most one bio of
 * a group whose limits bind: the next joins when that one is released,
 * so what goes down is paced, not what joins the scheduler's queue.
 *
 * An I/O limit counts the requests a bio becomes in the device below,
 * which splits what it cannot take in one (its max_sectors): a 1 MiB bio
 * on a disk that takes 4 KiB a request is 256 I/Os, as io.max on that
 * disk would count it.  The hrtimer's lateness costs no budget: a bio
 * that waited counts as gone when it was due, and the bios due meanwhile
 * follow at once, so a window may see rate * lateness more (microseconds
 * on a host, milliseconds under a loaded TCG), never a longer burst.
 * After a wait in the scheduler instead, the budget counts from then.
 *
 * As elsewhere, urgent bios (7.) and those of a suspending device are
 * charged and never wait; the debt they leave is forgiven beyond one
 * burst, or the bio's own span, so the group's next bio waits no longer.
 * presuspend sends every waiting bio down; a detached group's waiting
 * bios wait for the default group's limits, if it has any.  A REQ_NOWAIT
 * bio that would wait ends with BLK_STS_AGAIN.  A group's hold bound
 * (7.) follows its lowest bytes limit as it follows a range-bw cap; I/O
 * limits leave it alone.  A message that names limits ("limit", or a
 * weight or range with them) changes the kinds it names, as writing
 * io.max does, and the bios waiting see the new limits at once.
 *
 * 12. Latency statistics
 *
 * Each group keeps two histograms of a sample of its bios (the arithmetic
 * is "latency statistics" in dm-ioband-policy.c): the time from map()
 * until the bio went down (0 when it passed at once; the wait for room,
 * for its limits and in the scheduler otherwise) and the time from then
 * until it completed, the device below's.  A bio goes down from map()
 * or from the worker, which stamps it, so the worker's own delay counts
 * as waiting, as it does for the submitter.  A group times the first bio
 * it maps in each jiffy: every bio of a group with fewer than HZ a second,
 * HZ a second of a busier one, whose others pay one compare with jiffies
 * in map() and a test in end_io().  Both histograms are written when the
 * bio completes, under the group's lat_lock and not dg->lock (a leased
 * bio completes without it), so they always hold the same bios.  They
 * are kept a second at a time, the current second and the one before it,
 * and the percentiles (the tops of their buckets, at most 25 % high) are
 * of both: the bios timed in the last one to two seconds, which is what a
 * monitor polling every second or so wants.  A window is dropped whole, so
 * a group with few bios keeps each of them for a second at least, in both
 * histograms (halving every count each second would not: a lone count
 * goes at the first halving, and a bio whose wait sits in a full bucket
 * would keep its wait and lose its device time).  The
 * "latency" message answers with a line per group, in status's order;
 * status itself keeps the ancestor's seven columns.
 *
 * 13. Hierarchy
 *
 * Under group type cgroup-tree a device's groups form the tree of their
 * cgroups: a group's parent is the group of its cgroup's nearest ancestor
 * that has one.  A bio still counts in the group of its cgroup's nearest
 * configured ancestor (1.), as under type cgroup, but the weights are
 * shared down the tree, as io.weight's are: the groups at the top of
 * their trees (and every group of every other device of the device group)
 * share the device group by their weights, and a group's share is divided
 * among its own bios and its children that are active, by their weights.
 * A parent's own bios count as one more child of the parent's weight, as
 * CFQ's leaf_weight did by default.  A child that is idle leaves its
 * share to its siblings first: p of weight 300 with children x (400) and
 * y (200) against b (100) gives x, y and b 50 / 25 / 25 % of the device,
 * and 75 / 0 / 25 with y idle, where the same groups flat (type cgroup)
 * get 57 / 29 / 14 and 80 / 0 / 20.
 *
 * The scheduler stays flat: a group is charged in virtual time as if its
 * weight were the part of its top ancestor's weight that falls to it (its
 * weight over the active weight of its siblings and itself, at each level
 * up), so its charges follow whoever is active at the moment of each
 * charge.  Each group keeps the active weight at and below it (its own
 * while it is active, and each child's that has anything active), and a
 * group that starts or stops being active changes it up the tree only as
 * far as a node's own counting changes; the clock's active weight is that
 * of the tops.  A group outside any tree (every group of every other type)
 * pays one test of a byte on its charges and activity; a charge in a tree
 * walks to the top and back, a division a level.  A share below a weight
 * of 1 counts as 1.
 *
 * The tree is built from the cgroups, pinned while their groups live,
 * when the device goes live and again after every attach and detach: a
 * walk of the device's groups, a batch at a time (9.), which also makes
 * an attach O(groups).  A detached group's children move to its parent
 * on that walk, and the group is freed when both its last bio has
 * completed and its last child has moved, whichever comes last.  A group
 * whose cgroup does not exist (or is not in the cgroup namespace of the
 * task that attaches it) is at the top.  Trees do not span devices.
 *
 * 14. Leases: bios that take no lock
 *
 * While no group holds bios the scheduler arbitrates nothing: every bio
 * goes down at once and is only charged.  Then a CPU may hold a lease of
 * a group (ioband_lease_grant()): the tokens of IOBAND_LEASE_BIOS (48)
 * bios like the one that asked, charged to the group's virtual time and
 * the clock when granted, as that many admissions would be, and up to
 * IOBAND_LEASE_SLOTS (32) slots, counted in flight.  map() takes from this CPU's lease with one
 * cmpxchg on a word no other CPU writes in the common case, counts the
 * bio in per-CPU statistics, and sends it down without dg->lock; end_io()
 * counts its completion in a per-CPU counter.  A CPU comes to the lock
 * when its lease runs out, gives back what is left, folds its
 * completions, and takes a new lease for the bio that came, which then
 * completes as one of the lease's: one acquisition per 49 bios instead
 * of two a bio.  A group's first bio of each jiffy, timed for the
 * latency statistics (12.), may go under a lease too; it records its
 * times under its group's lat_lock, which only it and readers of the
 * statistics take, before it counts its completion.
 *
 * A lease is granted only if all of it fits the group's window, so no
 * group runs further past the clock than the locked path lets it; the
 * price is that the last lease's worth of a window is used through the
 * lock.  Reserved slots count in flight, at most half the depth that is
 * free, so a lease delays no one: while nothing is held, the depth is not
 * what limits anybody.  The first bio held ends every lease of the device
 * group (ioband_lease_revoke_all(): leasing off, then each CPU's word
 * taken back with xchg and its completions folded), and from then on
 * every bio takes the lock as in 7., so contended shares are the locked
 * path's.  Messages, attach, detach and policy changes end leases the
 * same way, and presuspend and removal end the device's.
 *
 * A leased bio finds its group without the lock: the default group while
 * none is attached, else the group this CPU last found for the bio's
 * cgroup or task id (struct ioband_lookup_cache, one per CPU, which also
 * serves the locked path), valid while no group has come or gone since.
 * The lookup runs as an RCU-sched reader, and attached groups are freed a
 * grace period after their last bio (ioband_group_destroy()), so a group
 * found as it is detached is still there: either the detach took its
 * lease back first, and the bio takes the lock, or the bio took from the
 * lease first and went down as it would have just before the detach.
 * cgroup-tree is not leased: its charges climb the tree.
 *
 * A completion on a CPU that holds a lease of its group gives its slot
 * back to that lease: the slot stays counted in flight, unused, so a
 * lease bounds what its CPU has in flight, not what it has sent, and a
 * CPU keeping 16 bios in flight renews only when its lease's units run
 * out, even if the free depth left its lease fewer than 32 slots (four
 * CPUs' leases share half of it).  Any other completion counts itself
 * in its CPU's counter, then reads whether leasing is still on and its
 * group still attached and on the device group's list of leased groups
 * (a flag of the group's, lease_listed); the side that ends leasing or
 * detaches writes its flag, then takes back every lease, folds every
 * counter and takes the group off the list.  The list's test is for a
 * bio leased before a revoke that completes after leasing has begun
 * again with no new lease of its group: no revoke would fold its count,
 * and its group would stay in flight for good; leasing begins again with
 * a release that the completion's read of it acquires, so a completion
 * that reads it on sees its group off the list.  With a full barrier on
 * each side, either the fold sees the count or the completion sees a
 * flag; in the second case it takes one count back (any one: counts are
 * interchangeable) and completes it under the lock.  The count it holds
 * keeps the group in flight, so a detached group cannot be freed under
 * it.
 *
 * What it costs in accuracy: nothing a lease sends runs past the group's
 * window, so a group is never further ahead of the clock than under the
 * lock; slots reserved and not yet used count in flight (at most 32 a CPU
 * and group when granted, and half the free depth, and then only the
 * slots of bios that went down and came back), which only matters once a
 * bio is held, and the first held bio takes them back.  A completion left
 * in a CPU's count keeps its group in flight, and so active, until it is
 * folded: at most until that CPU's next bio of the group through the
 * lock, the next revoke, or a detach.
 *
 * What it saves: today every bio takes dg->lock twice.  At 3 M IOPS from
 * 64 CPUs that is 6 M acquisitions a second of one cache line that moves
 * between CPUs, at 250-600 ns a transfer (estimated from the code, not
 * measured here): 1.5-3.6 s of lock hold a second, so the lock, not the
 * device, is the limit, near 0.8-2 M IOPS.  With leases a CPU submitting
 * 47 K IOPS takes the lock once per 49 bios, 960 times a second: about
 * 61 K acquisitions a second for the 64 CPUs, 1.5-3.7 % of the lock's
 * capacity (weight-time, see below: 0.021 a bio, 62 K a second).  More
 * when several groups are active and a group's window holds fewer than
 * about two leases (96 bios): a group that renews ahead of the others is
 * cut to the window's room, and takes the lock for each of the shorter
 * leases until they catch up, which is the window doing its work (four
 * groups at token_base 256 have 64 bios a window: 80-smp measures it).
 * The latency sample adds a group's lat_lock once a jiffy (250 a second
 * at HZ=250), a lock of its own that no bio waits for.
 *
 * Under weight-time (10.) a leased bio pays its class's mean, read
 * without the lock, and its completion is only counted: it neither
 * teaches the estimator nor corrects its charge, since both need the
 * lock and while nothing is held no share is at stake.  The bio that
 * takes a lease through the lock is timed as any bio there (10.) on one
 * lease in IOBAND_LEASE_TIMED_EVERY (64) a CPU and group, and completes
 * under the lock; on the others it completes as the lease's bios do.  So
 * the estimator goes on learning while nothing is held, from one bio in
 * 3136, and weight-time takes the lock 1 + 1/64 times per 49 bios, 0.021
 * a bio.  Depth control learns only while bios are held.  While more than
 * one group is active, weight-time keeps what is in flight within the
 * learned depth, and on a device that needs little (the CPU-bound null_blk
 * of 80-smp, where bios are held for room) no lease fits: the depth is
 * being arbitrated, through the lock as in 7.  A lease
 * follows its group's stream on its own CPU: its bios are
 * sequential if they start where the CPU's last leased bio of the group
 * ended, and the bio through the lock takes the stream back from there.
 * A stream that moves between CPUs pays a random bio's mean for its
 * first bio on each, corrected if it goes through the lock.  A cost
 * model given to weight-time is not leased: its charges carry what they
 * leave below a unit to the group's next bio.
 *
 * Not yet: a timer that folds the completions of CPUs that stop
 * submitting; until then they stay counted in flight until the next
 * revoke, that CPU's next bio of the group through the lock, or a detach.
 */
#include <linux/blk-cgroup.h>
#include <linux/bio.h>
#include <linux/cgroup.h>
#include <linux/cred.h>
#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <linux/hash.h>
#include <linux/hrtimer.h>
#include <linux/llist.h>
#include <linux/device-mapper.h>
#include <linux/memcontrol.h>
#include <linux/dm-ioband.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#define CREATE_TRACE_POINTS
#include "dm_ioband_trace.h"

#define DM_MSG_PREFIX "ioband"

struct ioband_stats {
	u64 reads;
	u64 delayed_reads;
	u64 read_sectors;
	u64 writes;
	u64 delayed_writes;
	u64 write_sectors;
};

struct ioband_device;

struct ioband_group {
	struct ioband_entity ent;
	struct ioband_device *dev;
	s64 id;
	struct bio_list held;	/* held by the scheduler */
	/*
	 * Bios that wait for the group's limits, before the scheduler (see
	 * 11.); they came after every bio in held.
	 */
	struct bio_list limit_wait;
	u64 held_sectors;	/* of the bios in held and limit_wait */
	struct ioband_limits limits;
	bool limited;		/* a limit is set */
	/* freed when its last bio completes and no group is its child */
	bool detached;
	/* cgroup-tree: its cgroup, pinned, NULL if none had its id */
	struct cgroup *cgrp;
	struct ioband_stats stats;
	/* each CPU's lease and leased bios (see 14.) */
	struct ioband_group_pcpu __percpu *pcpu;
	/* on dg->leased while it may have leases or their completions */
	struct list_head lease_node;
	/* lease_node is on dg->leased: under dg->lock, read without it */
	bool lease_listed;
	/* an attached group is freed a grace period after it is destroyed */
	struct rcu_head rcu;
	/* see 12.: the jiffy of its last timed bio, and the histograms */
	unsigned long lat_jiffy;
	spinlock_t lat_lock;		/* lat's, inside dg->lock */
	struct ioband_lat lat;
};

#define IOBAND_ROOM_WAIT_BITS	6

/* How a completion left for dg->lock's holder is told to the scheduler. */
enum ioband_done_kind {
	IOBAND_DONE_PLAIN,	/* ioband_sched_complete() */
	IOBAND_DONE_TIMED,	/* weight-time: ioband_sched_complete_timed() */
	IOBAND_DONE_LEASED,	/* a leased bio's, to fold */
};

/* A bio's completion, as the scheduler is told it under dg->lock. */
struct ioband_done {
	struct ioband_group *grp;
	u64 elapsed_ns;		/* timed: its time in flight */
	u32 cost;
	u8 cls;
	u8 kind;		/* enum ioband_done_kind */
	bool beyond_depth;
};

/* Completions a CPU may leave for dg->lock's holder (see 9.). */
#define IOBAND_DONE_SLOTS	64

/*
 * One CPU's part of a device group: the bios released for the CPU that
 * mapped them, which its own work item sends down (see 7.), and the
 * completions it left while another CPU held dg->lock (see 9.).
 */
struct ioband_dg_pcpu {
	struct ioband_dg *dg;
	int cpu;
	/*
	 * A ring: this CPU writes done[] and done_head with interrupts off,
	 * the holder of dg->lock reads them and writes done_tail.
	 */
	struct ioband_done done[IOBAND_DONE_SLOTS];
	unsigned int done_head, done_tail;
	unsigned long done_listed;	/* bit 0: done_node is on dg->done */
	struct llist_node done_node;
	struct bio_list ready;		/* under dg->lock */
	/*
	 * Owed a run of submit_work: on dg->kicks, or queued by whoever took
	 * it from there; its worker clears it as it takes ready.  Under
	 * dg->lock.
	 */
	bool kicked;
	struct ioband_dg_pcpu *next_kick;	/* on dg->kicks */
	struct work_struct submit_work;
};

struct ioband_dg {
	struct list_head node;		/* on ioband_dgs */
	char name[IOBAND_DG_NAME_MAX + 1];
	unsigned int nr_devices;	/* under ioband_dgs_lock */

	struct mutex conf_lock;		/* see 9. Locking */
	struct list_head devices;	/* under conf_lock and lock */
	u32 nr_entities;		/* under conf_lock: heap slots needed */

	spinlock_t lock;		/* see 9. Locking */
	/* leases may be granted; written under lock, read without (see 14.) */
	bool leasing;
	struct list_head leased;	/* groups, under lock (see 14.) */
	struct ioband_sched sched;
	/* each CPU's released bios and work item */
	struct ioband_dg_pcpu __percpu *pcpu;
	/* the CPUs with bios released and no run of their work owed yet */
	struct ioband_dg_pcpu *kicks;	/* under lock */
	/* the CPUs with completions left for the lock's holder (see 9.) */
	struct llist_head done;
	/* completions told since the last release, and the time they gave */
	bool done_told;			/* under lock */
	u64 done_now;			/* under lock */
	/* bit 0: the timer found the lock taken, and left its release */
	unsigned long release_owed;
	struct workqueue_struct *wq;	/* this device group's own, see 7. */
	struct hrtimer wake_timer;	/* an idle group's grace runs out */
	/* submitters of full groups, by group: see ioband_room_queue() */
	wait_queue_head_t room_wait[1 << IOBAND_ROOM_WAIT_BITS];
};

struct ioband_device {
	struct dm_target *ti;
	struct dm_dev *dev;
	dev_t devt;			/* of the dm device this target is in */
	struct ioband_dg *dg;
	struct list_head dg_node;
	enum ioband_group_type type;
	bool passthrough;		/* between presuspend and resume */
	/*
	 * Resumed at least once: its groups take part in the device group's
	 * scheduler.  Until then the table changes nothing (see 8.).  Under
	 * conf_lock and lock.
	 */
	bool live;
	struct ioband_dg_conf table_conf;	/* as its table line gave them */
	struct ioband_group def;
	struct xarray groups;		/* id -> attached ioband_group */
	u32 nr_groups;
	/*
	 * The minimums of the default and every attached group, in KB/s,
	 * kept as they change so that no check walks the groups.  Under
	 * conf_lock and lock.
	 */
	u64 min_sum;
	/*
	 * Each CPU's last lookup: a stream of bios from one submitter finds
	 * its group without walking the xarray (and a cgroup's ancestors),
	 * and without writing a line other CPUs read.  An answer holds while
	 * groups_gen, advanced under dg->lock whenever a group comes or goes,
	 * is the one it was found under.
	 */
	struct ioband_lookup_cache __percpu *lookup;
	u64 groups_gen;
#ifdef IOBAND_OUT_OF_TREE
	/* what the original bio of a clone must show; see ioband_orig_css() */
	struct mapped_device *md;
	struct gendisk *disk;
	/* a bio of this device has shown it; once true, stays true */
	bool orig_proven;
#endif
};

/* Per-bio data. */
struct ioband_bio {
	struct ioband_group *grp;	/* charged to, NULL if not scheduled */
	u32 cost;
	/* weight-time (see 10.): its class, and when and how it went down */
	bool timed;
	bool beyond_depth;
	u8 cls;
	/* timed for the latency statistics (see 12.), since map_ns */
	bool lat;
	bool leased;	/* went down under a lease (see 14.) */
	int cpu;	/* held: mapped on it, and sent down from it (see 7.) */
	u64 map_ns;
	u64 start_ns;
};

static LIST_HEAD(ioband_dgs);
static DEFINE_MUTEX(ioband_dgs_lock);

/* dg->lock is taken and dropped through these (see 9.) */
static void ioband_lock_irq(struct ioband_dg *dg);
static void ioband_unlock_irq(struct ioband_dg *dg);

/* ---- classification ----------------------------------------------------- */

/*
 * One CPU's last lookup on a device: bios whose id is @id go to @grp,
 * while @gen is the device's groups_gen.  Each CPU writes only its own,
 * under dg->lock; the path without the lock (14.) reads its own with
 * preemption off, and @seq tells it when a bio mapped in an interrupt
 * rewrote the entry under it.
 */
struct ioband_lookup_cache {
	u32 seq;		/* odd while being written */
	u64 gen;		/* 0: empty */
	s64 id;
	struct ioband_group *grp;
};

/* What this CPU last found on @d for @id, or NULL.  Preemption off. */
static inline struct ioband_group *ioband_lookup_recall(struct ioband_device *d,
							s64 id)
{
	struct ioband_lookup_cache *c = this_cpu_ptr(d->lookup);
	u32 seq = READ_ONCE(c->seq);
	struct ioband_group *g;
	u64 gen;
	s64 cid;

	barrier();
	gen = READ_ONCE(c->gen);
	cid = READ_ONCE(c->id);
	g = READ_ONCE(c->grp);
	barrier();
	if ((seq & 1) || READ_ONCE(c->seq) != seq || cid != id ||
	    !gen || gen != READ_ONCE(d->groups_gen))
		return NULL;
	return g;
}

/* This CPU's lookup on @d found @g for @id.  dg->lock held. */
static void ioband_lookup_remember(struct ioband_device *d, s64 id,
				   struct ioband_group *g)
{
	struct ioband_lookup_cache *c = this_cpu_ptr(d->lookup);

	lockdep_assert_held(&d->dg->lock);
	WRITE_ONCE(c->seq, c->seq + 1);
	barrier();
	WRITE_ONCE(c->gen, d->groups_gen);
	WRITE_ONCE(c->id, id);
	WRITE_ONCE(c->grp, g);
	barrier();
	WRITE_ONCE(c->seq, c->seq + 1);
}

/* A group came or went: every CPU's lookup is forgotten.  dg->lock held. */
static void ioband_lookup_forget(struct ioband_device *d)
{
	lockdep_assert_held(&d->dg->lock);
	WRITE_ONCE(d->groups_gen, d->groups_gen + 1);
}

static s64 ioband_task_id(enum ioband_group_type type)
{
	switch (type) {
	case IOBAND_TYPE_USER:
		return from_kuid_munged(&init_user_ns, current_uid());
	case IOBAND_TYPE_GID:
		return from_kgid_munged(&init_user_ns, current_gid());
	case IOBAND_TYPE_PID:
		return task_tgid_nr(current);
	case IOBAND_TYPE_PGRP:
		return task_pgrp_nr(current);
	default:
		return IOBAND_DEFAULT_GROUP;
	}
}

static bool ioband_type_cgroup(enum ioband_group_type type)
{
	return type == IOBAND_TYPE_CGROUP || type == IOBAND_TYPE_CGROUP_TREE;
}

/* The group types this kernel can classify by. */
static int ioband_check_type(enum ioband_group_type type, char **error)
{
	if (!IS_ENABLED(CONFIG_CGROUPS) && ioband_type_cgroup(type)) {
		*error = "group types cgroup and cgroup-tree need a kernel with CONFIG_CGROUPS";
		return -EINVAL;
	}
	return 0;
}

/* ---- the original bio's cgroup ----------------------------------------- */

#if IS_ENABLED(CONFIG_CGROUPS)

/*
 * Device-mapper hands targets clones that carry no blkcg association (dm
 * core copies it from the original bio only when the clone is submitted,
 * in dm_submit_bio_remap()), so the cgroup a bio is charged to is the one
 * the original bio, the one submitted to this dm device, is associated
 * with: whoever submits it, a stacked driver (dm-crypt, md, loop),
 * swap-out or the flusher, that is what the block layer's own controllers
 * charge.  The original bio outlives its clones, and its association pins
 * the blkcg, so the cgroup stays valid while the clone is in the target.
 */
#ifdef IOBAND_OUT_OF_TREE
/*
 * Out of tree there is no dm interface for the original bio: these are
 * struct dm_target_io and struct dm_io of drivers/md/dm-core.h, the same in
 * 6.1 and 6.12.  Nothing is trusted before it is checked, on the first
 * bio of each device: where dm core put our per-bio data (dm_per_bio_data()
 * knows the real offsets), both magic numbers, the mapped device, and the
 * original bio's disk.  Those offsets are the kernel's, the same for every
 * clone dm core makes, so the bios after it only follow two pointers.
 */
struct ioband_dm_stats_aux {
	bool merged;
	unsigned long long duration_ns;
};

struct ioband_dm_io;

struct ioband_dm_target_io {
	unsigned short magic;
	blk_short_t flags;
	unsigned int target_bio_nr;
	struct ioband_dm_io *io;
	struct dm_target *ti;
	unsigned int *len_ptr;
	sector_t old_sector;
	struct bio clone;
};

struct ioband_dm_io {
	unsigned short magic;
	blk_short_t flags;
	spinlock_t lock;		/* dm core's; never taken here */
	unsigned long start_time;
	void *data;
	struct ioband_dm_io *next;
	struct ioband_dm_stats_aux stats_aux;
	blk_status_t status;
	atomic_t io_count;
	struct mapped_device *md;
	struct bio *orig_bio;
	unsigned int sector_offset;
	unsigned int sectors;
	struct ioband_dm_target_io tio;
};

#define IOBAND_DM_TIO_MAGIC	28714
#define IOBAND_DM_IO_MAGIC	19577

enum { IOBAND_ORIG_UNKNOWN, IOBAND_ORIG_ON, IOBAND_ORIG_OFF };
static int ioband_orig_mode;

/* The original of @clone, once the layout is known to be the one above. */
static struct bio *ioband_orig_bio(struct bio *clone)
{
	return container_of(clone, struct ioband_dm_target_io, clone)->io->orig_bio;
}

/*
 * The original of @clone, whose per-bio data is @ib, or NULL if dm core's
 * layout is not the one above.  The per-bio data lies just before the
 * dm_target_io, or before the dm_io that embeds it: comparing is enough
 * to prove the offset of the clone in both before anything is read.
 */
static struct bio *ioband_orig_bio_checked(struct ioband_device *d,
					   struct bio *clone,
					   struct ioband_bio *ib)
{
	struct ioband_dm_target_io *tio =
		container_of(clone, struct ioband_dm_target_io, clone);
	struct ioband_dm_io *outer = container_of(tio, struct ioband_dm_io, tio);
	struct ioband_dm_io *io;
	struct bio *orig;

	if ((void *)(ib + 1) != tio && (void *)(ib + 1) != outer)
		return NULL;
	if (tio->magic != IOBAND_DM_TIO_MAGIC)
		return NULL;
	io = tio->io;
	if ((void *)(ib + 1) == outer && io != outer)
		return NULL;
	if (io->magic != IOBAND_DM_IO_MAGIC || io->md != d->md)
		return NULL;
	orig = io->orig_bio;
	if (!orig || orig->bi_bdev->bd_disk != d->disk)
		return NULL;
	return orig;
}

/* Says once which way cgroups are found; once off, it stays off. */
static noinline void ioband_orig_mode_set(int mode)
{
	if (mode == IOBAND_ORIG_ON) {
		if (cmpxchg(&ioband_orig_mode, IOBAND_ORIG_UNKNOWN, mode) ==
		    IOBAND_ORIG_UNKNOWN)
			DMINFO("charging bios to the cgroup of the bio submitted to the dm device");
	} else if (xchg(&ioband_orig_mode, mode) != mode) {
		DMWARN("unknown dm core layout: charging bios to their pages' owner or submitter");
	}
}

static struct cgroup_subsys_state *ioband_orig_css(struct ioband_device *d,
						   struct bio *clone,
						   struct ioband_bio *ib)
{
	int mode = READ_ONCE(ioband_orig_mode);
	struct bio *orig;

	lockdep_assert_held(&d->dg->lock);
	/* without blk-cgroup no bio has an association */
	if (!IS_ENABLED(CONFIG_BLK_CGROUP) || mode == IOBAND_ORIG_OFF)
		return NULL;
	if (likely(d->orig_proven))
		return bio_blkcg_css(ioband_orig_bio(clone));
	orig = ioband_orig_bio_checked(d, clone, ib);
	WRITE_ONCE(d->orig_proven, orig);
	if (mode == IOBAND_ORIG_UNKNOWN || !orig)
		ioband_orig_mode_set(orig ? IOBAND_ORIG_ON : IOBAND_ORIG_OFF);
	return orig ? bio_blkcg_css(orig) : NULL;
}

/*
 * ioband_orig_css() once @d's layout is proven, else NULL: the question
 * map() asks inline, before it calls anything.  Needs no lock.
 */
static inline struct cgroup_subsys_state *
ioband_orig_css_proven(struct ioband_device *d, struct bio *clone)
{
	if (!IS_ENABLED(CONFIG_BLK_CGROUP) || !READ_ONCE(d->orig_proven) ||
	    READ_ONCE(ioband_orig_mode) == IOBAND_ORIG_OFF)
		return NULL;
	return bio_blkcg_css(ioband_orig_bio(clone));
}
#else
static struct cgroup_subsys_state *ioband_orig_css(struct ioband_device *d,
						   struct bio *clone,
						   struct ioband_bio *ib)
{
	return dm_bio_orig_blkcg_css(clone);
}

static inline struct cgroup_subsys_state *
ioband_orig_css_proven(struct ioband_device *d, struct bio *clone)
{
	return dm_bio_orig_blkcg_css(clone);
}
#endif

/*
 * This CPU's last lookup's answer for a bio of a cgroup type whose
 * original carries the same cgroup, else NULL (ask
 * ioband_lookup_attached(), which also answers for bios without an
 * association).  Preemption off; no lock needed.
 */
static inline struct ioband_group *ioband_lookup_cached(struct ioband_device *d,
							struct bio *bio)
{
	struct cgroup_subsys_state *css = ioband_orig_css_proven(d, bio);

	return css ? ioband_lookup_recall(d, cgroup_id(css->cgroup)) : NULL;
}

/*
 * The memory cgroup of the page cache page @bio starts with, or NULL: a
 * bio without an association (or with a dm core this module cannot read)
 * is charged as writeback charges a page, to the cgroup that owns it.
 * folio_memcg() wants rcu_read_lock() itself (lockdep does not count
 * disabled interrupts), so this path, not the common one, takes it.
 */
static struct cgroup *ioband_page_cgroup(struct bio *bio)
{
#if IS_ENABLED(CONFIG_MEMCG)
	struct cgroup *cgrp = NULL;
	struct mem_cgroup *memcg;
	struct folio *folio;

	if (!bio_has_data(bio))
		return NULL;
	folio = page_folio(bio_page(bio));
	if (folio_test_slab(folio) || !folio->mapping || folio_test_anon(folio))
		return NULL;
	rcu_read_lock();
	memcg = folio_memcg(folio);
	if (memcg)
		cgrp = memcg->css.cgroup;
	rcu_read_unlock();
	return cgrp;
#else
	return NULL;
#endif
}

/*
 * The cgroup @bio is charged to: the original bio's association; without
 * one, the owner of its pages, else the submitting task's cgroup.  Called
 * with interrupts off; see ioband_lookup().
 */
static struct cgroup *ioband_bio_cgroup(struct ioband_device *d,
					struct bio *bio, struct ioband_bio *ib)
{
	struct cgroup_subsys_state *css = ioband_orig_css(d, bio, ib);
	struct cgroup *cgrp;

	if (css)
		return css->cgroup;
	cgrp = ioband_page_cgroup(bio);
	return cgrp ? cgrp : task_dfl_cgroup(current);
}

/* cgroup-tree: the cgroup whose id is @id, pinned; NULL if none is. */
static struct cgroup *ioband_cgroup_get(s64 id)
{
	struct cgroup *cgrp = cgroup_get_from_id(id);

	return IS_ERR(cgrp) ? NULL : cgrp;
}

static void ioband_cgroup_put(struct cgroup *cgrp)
{
	if (cgrp)
		cgroup_put(cgrp);
}

/*
 * The group of @d of @cgrp's nearest ancestor that has one, or NULL.
 * dg->lock held: interrupts are off, an RCU read-side section, and
 * @cgrp is pinned, which pins its ancestors.
 */
static struct ioband_group *ioband_cgroup_ancestor(struct ioband_device *d,
						   struct cgroup *cgrp)
{
	struct ioband_group *g = NULL;

	lockdep_assert_held(&d->dg->lock);
	for (cgrp = cgroup_parent(cgrp); cgrp && !g; cgrp = cgroup_parent(cgrp))
		g = xa_load(&d->groups, cgroup_id(cgrp));
	return g;
}
#else
/* The cgroup types are refused without cgroups. */
static struct cgroup *ioband_bio_cgroup(struct ioband_device *d,
					struct bio *bio, struct ioband_bio *ib)
{
	return NULL;
}

static struct cgroup *ioband_cgroup_get(s64 id)
{
	return NULL;
}

static void ioband_cgroup_put(struct cgroup *cgrp)
{
}

static struct ioband_group *ioband_cgroup_ancestor(struct ioband_device *d,
						   struct cgroup *cgrp)
{
	return NULL;
}

static inline struct ioband_group *ioband_lookup_cached(struct ioband_device *d,
							struct bio *bio)
{
	return NULL;
}
#endif

/*
 * ioband_lookup() where groups are attached.  Called with dg->lock held,
 * which also makes the cgroup pointers safe: interrupts are off, and that
 * is an RCU read-side critical section (since the RCU flavours were merged
 * in 4.20), so no rcu_read_lock() of its own is needed on every bio.
 */
static noinline struct ioband_group *
ioband_lookup_attached(struct ioband_device *d, struct bio *bio,
		       struct ioband_bio *ib)
{
	struct ioband_group *g = NULL;
	struct cgroup *cgrp = NULL;
	s64 id;

	lockdep_assert_held(&d->dg->lock);
	/* cgroup ids are 64-bit and never reused, so they can be cached */
	if (ioband_type_cgroup(d->type)) {
		cgrp = ioband_bio_cgroup(d, bio, ib);
		id = cgroup_id(cgrp);
	} else {
		id = ioband_task_id(d->type);
	}
	g = ioband_lookup_recall(d, id);
	if (g)
		return g;
	if (cgrp) {
		for (; cgrp && !g; cgrp = cgroup_parent(cgrp))
			g = xa_load(&d->groups, cgroup_id(cgrp));
	} else {
		g = xa_load(&d->groups, id);
	}
	if (!g)
		g = &d->def;
	ioband_lookup_remember(d, id, g);
	return g;
}

/*
 * The group of a bio: its own or, for cgroups, its nearest ancestor's;
 * else the default group, which is all a device without attached groups
 * has.  Inline, so that neither that case nor a stream of bios of the
 * last cgroup costs a call.  dg->lock held.
 */
static inline struct ioband_group *ioband_lookup(struct ioband_device *d,
						 struct bio *bio,
						 struct ioband_bio *ib)
{
	struct ioband_group *g;

	if (!d->nr_groups || d->type == IOBAND_TYPE_NONE)
		return &d->def;
	g = ioband_type_cgroup(d->type) ? ioband_lookup_cached(d, bio) : NULL;
	return g ? g : ioband_lookup_attached(d, bio, ib);
}

/*
 * ioband_lookup() without dg->lock, for the leased path (14.): NULL where
 * it would have to walk the groups, and for cgroup-tree, whose groups are
 * not leased.  An attach or a detach that races with it ends every lease
 * first, so a group found here can only have been found just before.
 * RCU-sched read side: an attached group is freed a grace period after
 * it is destroyed.
 */
static inline struct ioband_group *
ioband_lookup_unlocked(struct ioband_device *d, struct bio *bio)
{
	enum ioband_group_type type = READ_ONCE(d->type);

	if (!READ_ONCE(d->nr_groups) || type == IOBAND_TYPE_NONE)
		return &d->def;
	if (type == IOBAND_TYPE_CGROUP_TREE)
		return NULL;
	if (type == IOBAND_TYPE_CGROUP)
		return ioband_lookup_cached(d, bio);
	return ioband_lookup_recall(d, ioband_task_id(type));
}

/* ---- leases (see 14.) ------------------------------------------------------ */

#define IOBAND_LEASE_SLOTS	32
/* what a lease's units pay for, in bios: more than its slots (see 14.) */
#define IOBAND_LEASE_BIOS	48
/*
 * weight-time: the bio that takes a lease through the lock is timed
 * through it on one lease in this many a CPU and group, so that the
 * estimator goes on learning while nothing is held (see 14.).
 */
#define IOBAND_LEASE_TIMED_EVERY	64

/*
 * Whether this bio of @g is timed for the latency statistics: the first
 * it maps in each jiffy (see 12.), with or without dg->lock (a lease's
 * bios are timed too, so the sample does not end leases).
 */
static inline bool ioband_lat_sample(struct ioband_group *g)
{
	unsigned long now = jiffies, last = READ_ONCE(g->lat_jiffy);

	return likely(last == now) ? false :
	       try_cmpxchg(&g->lat_jiffy, &last, now);
}

/* One CPU's part of a group. */
struct ioband_group_pcpu {
	atomic64_t lease;		/* ioband_lease_word(), 0: none */
	atomic_t done;			/* leased bios completed, not folded */
	struct ioband_stats stats;	/* of the bios it sent under leases */
	/* weight-time: where its last leased bio ended, U64_MAX: none */
	u64 next_sector;
	u32 grants;			/* leases granted, under dg->lock */
};

/* What @g's lease on @cpu did not use, back to the scheduler.  dg->lock held. */
static void ioband_lease_take_back(struct ioband_dg *dg, struct ioband_group *g,
				   int cpu, u64 now)
{
	s64 w = atomic64_xchg(&per_cpu_ptr(g->pcpu, cpu)->lease, 0);

	if (w)
		ioband_lease_return(&dg->sched, &g->ent, ioband_lease_units(w),
				    ioband_lease_slots(w), now);
}

/* The leased bios of @g completed on @cpu, into the scheduler.  dg->lock held. */
static void ioband_lease_fold(struct ioband_dg *dg, struct ioband_group *g,
			      int cpu, u64 now)
{
	int done = atomic_xchg(&per_cpu_ptr(g->pcpu, cpu)->done, 0);

	if (done)
		ioband_lease_complete(&dg->sched, &g->ent, done, false, now);
}

/*
 * Every lease of @g ends and every CPU's completions of its leased bios
 * are folded; @g leaves dg->leased.  The caller has ended leasing or
 * detached @g, and ordered that before (see ioband_end_leased()).
 * dg->lock held.
 */
static void ioband_lease_end(struct ioband_dg *dg, struct ioband_group *g,
			     u64 now)
{
	int cpu;

	lockdep_assert_held(&dg->lock);
	for_each_possible_cpu(cpu) {
		ioband_lease_take_back(dg, g, cpu, now);
		ioband_lease_fold(dg, g, cpu, now);
		WRITE_ONCE(per_cpu_ptr(g->pcpu, cpu)->next_sector, U64_MAX);
	}
	list_del_init(&g->lease_node);
	WRITE_ONCE(g->lease_listed, false);
}

/*
 * No lease from now on, until ioband_lease_renew() finds nothing held.
 * dg->lock held.
 */
static void ioband_lease_revoke_all(struct ioband_dg *dg, u64 now)
{
	struct ioband_group *g, *next;

	lockdep_assert_held(&dg->lock);
	if (!dg->leasing)
		return;
	WRITE_ONCE(dg->leasing, false);
	/* leasing off before the counters are read; see ioband_end_leased() */
	smp_mb();
	list_for_each_entry_safe(g, next, &dg->leased, lease_node)
		ioband_lease_end(dg, g, now);
}

/*
 * @g leaves its device (detached, or the device goes away): no lease of
 * it from now on, and none of its bios' completions is left unfolded, so
 * that what it has in flight is what really is.  dg->lock held.
 */
static void ioband_lease_leave(struct ioband_dg *dg, struct ioband_group *g,
			       u64 now)
{
	lockdep_assert_held(&dg->lock);
	WRITE_ONCE(g->detached, true);
	/* detached before the counters are read; see ioband_end_leased() */
	smp_mb();
	ioband_lease_end(dg, g, now);
}

/*
 * A bio of @g comes to the lock: this CPU gives back what its lease of
 * @g has left and folds its completions first, so that the scheduler
 * sees what is really in flight (a single stream whose lease ran out has
 * nothing, and is not taken for a parallel one).  Nothing to do for a
 * group off dg->leased: ioband_lease_end() took back and folded all, and
 * a completion that finds it off folds its own count.  dg->lock held.
 */
static void ioband_lease_settle(struct ioband_dg *dg, struct ioband_group *g,
				u64 now)
{
	struct ioband_group_pcpu *pc = this_cpu_ptr(g->pcpu);
	int cpu = smp_processor_id();

	lockdep_assert_held(&dg->lock);
	if (!g->lease_listed)
		return;
	ioband_lease_take_back(dg, g, cpu, now);
	ioband_lease_fold(dg, g, cpu, now);
	/* a stream that went on under this CPU's lease goes on here */
	if (pc->next_sector != U64_MAX) {
		g->ent.next_sector = pc->next_sector;
		WRITE_ONCE(pc->next_sector, U64_MAX);
	}
}

/*
 * After a bio of @g costing @cost went down through the lock: a new lease
 * for this CPU, if the scheduler grants one.  Not for cgroup-tree, whose
 * charges climb the tree, nor for a cost model given to weight-time,
 * which carries what each charge leaves below a unit to the group's next
 * bio, nor under range-bw, whose leases the scheduler never grants
 * (asking would turn leasing on, and every bio would look for a lease in
 * vain first).  True if a lease was granted and the bio may complete as
 * one of its bios, without the lock: always, but for one lease in
 * IOBAND_LEASE_TIMED_EVERY of a timed bio.  dg->lock held.
 */
static bool ioband_lease_renew(struct ioband_dg *dg, struct ioband_device *d,
			       struct ioband_group *g, u32 cost, bool timed)
{
	struct ioband_group_pcpu *pc = this_cpu_ptr(g->pcpu);
	struct ioband_sched *s = &dg->sched;
	u64 lease;

	lockdep_assert_held(&dg->lock);
	if (g->limited || g->detached || d->type == IOBAND_TYPE_CGROUP_TREE ||
	    d->passthrough || !d->live || s->model.given ||
	    s->conf.policy == IOBAND_POLICY_RANGE_BW)
		return false;
	if (!dg->leasing) {
		if (s->heap_len)
			return false;
		/*
		 * after the revoke took its groups off dg->leased: a
		 * completion that reads leasing on sees them off (see
		 * ioband_end_leased())
		 */
		smp_store_release(&dg->leasing, true);
	}
	lease = ioband_lease_grant(s, &g->ent, cost, IOBAND_LEASE_BIOS * cost,
				   IOBAND_LEASE_SLOTS);
	if (!lease)
		return false;
	/* weight-time: the lease's bios follow the group's last */
	WRITE_ONCE(pc->next_sector, g->ent.next_sector);
	atomic64_set(&pc->lease, lease);
	trace_ioband_lease(dg->name, g->id, ioband_lease_slots(lease),
			   ioband_lease_units(lease));
	if (!g->lease_listed) {
		list_add(&g->lease_node, &dg->leased);
		WRITE_ONCE(g->lease_listed, true);
	}
	return !timed || ++pc->grants % IOBAND_LEASE_TIMED_EVERY;
}

static bool ioband_bio_urgent(const struct bio *bio);

/* Takes one bio of @cost from this CPU's lease of @g.  Preemption off. */
static bool ioband_lease_take(struct ioband_group *g, u32 cost)
{
	atomic64_t *lease = &this_cpu_ptr(g->pcpu)->lease;
	s64 old = atomic64_read(lease), new;

	do {
		if (!ioband_lease_slots(old) || ioband_lease_units(old) < cost)
			return false;
		new = old - ioband_lease_word(1, cost);
	} while (!atomic64_try_cmpxchg(lease, &old, new));
	return true;
}

/*
 * weight-time: what a leased bio costs, its class's mean (see 14.), and
 * in *@cls its class.  The means change under dg->lock as bios complete
 * through it; a mean a moment old is as good.  Preemption off.
 */
static u32 ioband_leased_time_cost(const struct ioband_sched *s,
				   const struct ioband_group *g,
				   const struct bio *bio, u32 *cls)
{
	u32 ns;

	*cls = ioband_time_class_after(READ_ONCE(this_cpu_ptr(g->pcpu)->next_sector),
				       op_is_write(bio_op(bio)),
				       bio->bi_iter.bi_sector, bio_sectors(bio));
	ns = READ_ONCE(s->est.cost_ns[*cls]);
	return ioband_time_units(ns ? ns : READ_ONCE(s->est.mean_ns));
}

/*
 * A bio of @d under this CPU's lease of its group: it goes down without
 * dg->lock.  False if its group is not found without the lock, there is
 * no lease or not enough of one, or the bio is one the scheduler must
 * see.
 */
static bool ioband_map_leased(struct ioband_device *d, struct bio *bio,
			      struct ioband_bio *ib)
{
	struct ioband_sched *s = &d->dg->sched;
	bool taken = false, timed;
	struct ioband_group *g;
	u32 cost, cls;

	if (ioband_bio_urgent(bio))
		return false;
	/* an attached group found here is freed only after a grace period */
	rcu_read_lock_sched();
	g = ioband_lookup_unlocked(d, bio);
	if (!g)
		goto out;
	timed = READ_ONCE(s->conf.policy) == IOBAND_POLICY_WEIGHT_TIME;
	if (timed)
		cost = ioband_leased_time_cost(s, g, bio, &cls);
	else
		cost = ioband_cost_flat(s) ? IOBAND_SECTORS_PER_TOKEN :
		       ioband_bio_cost(s, bio_sectors(bio), bio_has_data(bio));
	if (!ioband_lease_take(g, cost))
		goto out;
	if (timed)
		WRITE_ONCE(this_cpu_ptr(g->pcpu)->next_sector,
			   bio_end_sector(bio));
	if (op_is_write(bio_op(bio))) {
		this_cpu_inc(g->pcpu->stats.writes);
		this_cpu_add(g->pcpu->stats.write_sectors, bio_sectors(bio));
	} else {
		this_cpu_inc(g->pcpu->stats.reads);
		this_cpu_add(g->pcpu->stats.read_sectors, bio_sectors(bio));
	}
	ib->grp = g;
	ib->cost = cost;
	ib->timed = false;
	ib->lat = ioband_lat_sample(g);
	if (unlikely(ib->lat)) {
		ib->map_ns = ktime_get_ns();
		ib->start_ns = ib->map_ns;
	}
	ib->leased = true;
	trace_ioband_map(d->dg->name, g->id, bio);
	taken = true;
out:
	rcu_read_unlock_sched();
	return taken;
}

/*
 * A leased bio of @g completed.  If this CPU holds a lease of @g, the
 * bio's slot goes back to it: the slot stays counted in flight, now
 * unused, and the lease bounds what the CPU has in flight rather than
 * what it has sent.  The lease word is 0 once taken back, so a slot given
 * back before the xchg that ends the lease is returned by it, and none
 * after.  Otherwise the completion is left in this CPU's count for a
 * later fold, unless leasing has ended, @g is detached or @g is off
 * dg->leased: then the fold that ended its lease may have run already,
 * and the caller takes one completion back to fold it itself under the
 * lock (true).  Counts are interchangeable, and the one taken back keeps
 * @g in flight, so @g outlives it.  The full barrier pairs with the one
 * before the fold in ioband_lease_revoke_all() and ioband_lease_leave():
 * either the fold sees this count, or this sees the flag.  Leasing read
 * on again (acquire, paired with ioband_lease_renew()'s release) comes
 * after the revoke that took @g off the list, so @g's flag reads off
 * unless @g was leased again, and then a later revoke folds the count.
 */
static bool ioband_end_leased(struct ioband_dg *dg, struct ioband_group *g)
{
	struct ioband_group_pcpu *pc;
	bool fold = false;
	s64 lease;

	/* once given back or counted, @g may be freed by another CPU */
	rcu_read_lock_sched();
	pc = this_cpu_ptr(g->pcpu);
	lease = atomic64_read(&pc->lease);
	while (lease) {
		if (atomic64_try_cmpxchg(&pc->lease, &lease,
					 lease + ioband_lease_word(1, 0)))
			goto out;
	}
	atomic_inc(&pc->done);
	/* counted before the flags are read: pairs with the fold's smp_mb() */
	smp_mb__after_atomic();
	/*
	 * Off dg->leased, no revoke would fold it: leasing ended and began
	 * again since the bio went down, without a new lease of @g.
	 */
	if (!smp_load_acquire(&dg->leasing) || READ_ONCE(g->detached) ||
	    !READ_ONCE(g->lease_listed))
		fold = atomic_dec_if_positive(&pc->done) >= 0;
out:
	rcu_read_unlock_sched();
	return fold;
}

/* ---- back-pressure (see 7.) ---------------------------------------------- */

/*
 * A group holds at most what it drains in IOBAND_HOLD_MS at its cap, and
 * never less than IOBAND_HOLD_MIN_SECTORS (a few bios, so that a capped
 * group still keeps one bio waiting for its tokens) nor more than
 * IOBAND_HOLD_SECTORS, the bound of a group without a cap.
 */
#define IOBAND_HOLD_SECTORS	(4U << (20 - SECTOR_SHIFT))
#define IOBAND_HOLD_MIN_SECTORS	(64U << (10 - SECTOR_SHIFT))
#define IOBAND_HOLD_MS		200
/* The longest a submitter waits for room before its bio is held anyway. */
#define IOBAND_WAIT_MAX		HZ

static u64 ioband_hold_bound(const struct ioband_dg *dg,
			     const struct ioband_group *g)
{
	u64 sectors = IOBAND_HOLD_SECTORS, rate;
	int k;

	if (dg->sched.conf.policy == IOBAND_POLICY_RANGE_BW &&
	    g->ent.max_kbps)
		/* KB/s * 2 is sectors per second */
		sectors = (u64)g->ent.max_kbps * 2 * IOBAND_HOLD_MS /
			  MSEC_PER_SEC;
	/* the lowest limit in bytes; IOPS limits leave the bound as it is */
	for (k = IOBAND_LIMIT_BPS; g->limited && k <= IOBAND_LIMIT_WBPS; k++) {
		rate = g->limits.lim[k].rate;
		if (rate)
			sectors = min(sectors, div_u64(rate * IOBAND_HOLD_MS /
						       MSEC_PER_SEC,
						       SECTOR_SIZE));
	}
	return clamp_t(u64, sectors, IOBAND_HOLD_MIN_SECTORS,
		       IOBAND_HOLD_SECTORS);
}

static bool ioband_group_full(const struct ioband_device *d,
			      const struct ioband_group *g)
{
	return g->held_sectors >= ioband_hold_bound(d->dg, g) &&
	       !d->passthrough;
}

static void ioband_submit_work(struct work_struct *work);

/*
 * May the submitter of @bio sleep in map() until its group has room?
 * REQ_NOWAIT bios never come here (they end with BLK_STS_AGAIN instead).
 */
static bool ioband_may_sleep(const struct bio *bio)
{
	const struct bio_list *pending = current->bio_list;

	/*
	 * A task in a filesystem transaction (ext4's writepages maps blocks
	 * and submits the bios under a journal handle): the journal's
	 * commit, and then every writer of the filesystem, would wait for
	 * its sleep.
	 */
	if (current->journal_info)
		return false;
	if (current->flags & PF_KTHREAD) {
		struct work_struct *work;

		/* a plain kernel thread may submit for every group */
		if (!(current->flags & PF_WQ_WORKER))
			return false;
		/*
		 * An ioband device group's own worker, submitting to an
		 * ioband device below: it also submits for every group of
		 * its device group, and sleeping there would stall them all.
		 */
		work = current_work();
		if (work && work->func == ioband_submit_work)
			return false;
	}
	return !pending ||
	       (bio_list_empty(&pending[0]) && bio_list_empty(&pending[1]));
}

/*
 * A submitter waiting for room in group @g sleeps on one of its device
 * group's room queues, chosen by @g, and a group that gets room wakes its
 * own sleepers only: a wake-up walks the sleepers of the groups that hash
 * alike, not those of every group.  The queues belong to the device
 * group, which outlives every bio, so a sleeper never waits on a group
 * that was freed meanwhile.
 */
struct ioband_room_waiter {
	struct wait_queue_entry wq;
	const struct ioband_group *g;
};

static wait_queue_head_t *ioband_room_queue(struct ioband_dg *dg,
					    const struct ioband_group *g)
{
	return &dg->room_wait[hash_ptr(g, IOBAND_ROOM_WAIT_BITS)];
}

/* @key: the group that has room, or NULL for every sleeper. */
static int ioband_room_wake(struct wait_queue_entry *wq, unsigned int mode,
			    int sync, void *key)
{
	struct ioband_room_waiter *w =
		container_of(wq, struct ioband_room_waiter, wq);

	if (key && key != w->g)
		return 0;
	return autoremove_wake_function(wq, mode, sync, key);
}

/* Every sleeper of @dg may look again: a device lets bios pass. */
static void ioband_wake_all(struct ioband_dg *dg)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(dg->room_wait); i++)
		wake_up_all(&dg->room_wait[i]);
}

/*
 * Sleeps until the group of @bio (@g, full) has room or the device lets
 * bios pass, for IOBAND_WAIT_MAX at most, or until a fatal signal comes,
 * and returns the group, looked up again: it may have been detached
 * meanwhile.  Then the bio is held as usual, beyond the bound if the wait
 * ended early: no bio is refused for a full group.  Called and returns
 * with dg->lock held, under which the waiter is queued before the lock is
 * let go, so a wake-up cannot come between the test and the sleep.  Not
 * inlined: it stays out of map()'s fast path, and a waiting task's wchan
 * names it.
 */
static noinline struct ioband_group *
ioband_wait_for_room(struct ioband_device *d, struct bio *bio,
		     struct ioband_bio *ib, struct ioband_group *g)
{
	struct ioband_dg *dg = d->dg;
	struct ioband_room_waiter w;
	long left = IOBAND_WAIT_MAX;

	lockdep_assert_held(&dg->lock);
	init_wait_entry(&w.wq, 0);
	w.wq.func = ioband_room_wake;
	trace_ioband_wait(dg->name, g->id, bio);
	do {
		wait_queue_head_t *q = ioband_room_queue(dg, g);

		w.g = g;
		prepare_to_wait(q, &w.wq, TASK_KILLABLE);
		ioband_unlock_irq(dg);
		left = io_schedule_timeout(left);
		finish_wait(q, &w.wq);
		ioband_lock_irq(dg);
		g = ioband_lookup(d, bio, ib);
	} while (ioband_group_full(d, g) && left &&
		 !fatal_signal_pending(current));
	return g;
}

/* @g's held bios shrink by @sectors: wake its submitters at the bound. */
static void ioband_unhold(struct ioband_dg *dg, struct ioband_group *g,
			  u64 sectors)
{
	u64 bound = ioband_hold_bound(dg, g);
	bool was_full = g->held_sectors >= bound;
	wait_queue_head_t *q;

	g->held_sectors -= sectors;
	if (!was_full || g->held_sectors >= bound)
		return;
	q = ioband_room_queue(dg, g);
	if (wq_has_sleeper(q))
		__wake_up(q, TASK_NORMAL, 0, g);
}

/* ---- releasing held bios ------------------------------------------------ */

static struct ioband_group *to_group(struct ioband_entity *e)
{
	return container_of(e, struct ioband_group, ent);
}

static void ioband_group_free_rcu(struct rcu_head *rcu)
{
	struct ioband_group *g = container_of(rcu, struct ioband_group, rcu);

	ioband_cgroup_put(g->cgrp);
	free_percpu(g->pcpu);
	kfree(g);
}

/*
 * An attached group; the leased path may still read it (see 14.).  Any
 * context, dg->lock held or not.
 */
static void ioband_group_destroy(struct ioband_group *g)
{
	call_rcu(&g->rcu, ioband_group_free_rcu);
}

/*
 * A detached group is freed once its last bio has completed and the last
 * of its children has moved to its parent, by whichever comes last: both
 * happen under dg->lock, so exactly one caller sees both done.
 */
static bool ioband_group_drained(const struct ioband_group *g)
{
	return g->detached && !g->ent.nr_inflight && !g->ent.nr_children;
}

/*
 * @bio of @g goes down: to the ready list of the CPU that mapped it, whose
 * worker is owed a run if it was not.  dg->lock held.
 */
static void ioband_ready(struct ioband_dg *dg, struct ioband_group *g,
			 struct bio *bio)
{
	struct ioband_bio *ib = dm_per_bio_data(bio, sizeof(*ib));
	struct ioband_dg_pcpu *pc = per_cpu_ptr(dg->pcpu, ib->cpu);

	lockdep_assert_held(&dg->lock);
	ioband_unhold(dg, g, bio_sectors(bio));
	ib->grp = g;
	if (ib->timed || ib->lat)
		ib->start_ns = ktime_get_ns();
	ib->beyond_depth = ioband_sched_beyond_depth(&dg->sched);
	bio_list_add(&pc->ready, bio);
	if (!pc->kicked) {
		pc->kicked = true;
		pc->next_kick = dg->kicks;
		dg->kicks = pc;
	}
	trace_ioband_release(dg->name, g->id, bio);
}

/*
 * The CPUs whose workers are owed a run, for ioband_kick_workers() once
 * dg->lock is dropped.  dg->lock held.
 */
static struct ioband_dg_pcpu *ioband_kicks_take(struct ioband_dg *dg)
{
	struct ioband_dg_pcpu *kicks = dg->kicks;

	lockdep_assert_held(&dg->lock);
	dg->kicks = NULL;
	return kicks;
}

/*
 * Queues the work of each CPU on @pc's chain, on that CPU.  A CPU is on
 * one chain at a time: it is chained again only after its worker cleared
 * kicked, which it does in the run this queues, so its next_kick is read
 * before.  (The work of a CPU that went offline runs on another.)
 */
static void ioband_kick_workers(struct ioband_dg *dg,
				struct ioband_dg_pcpu *pc)
{
	while (pc) {
		struct ioband_dg_pcpu *next = pc->next_kick;

		queue_work_on(pc->cpu, dg->wq, &pc->submit_work);
		pc = next;
	}
}

/*
 * @bio, just held by map() on this CPU: if the scheduler released it at
 * once and first in line (so after every older bio of its group on this
 * CPU), it is taken off the ready list to go down from map(), and its
 * CPU's worker is not kicked for nothing.  ioband_release_one() has
 * charged it.  dg->lock held.
 */
static bool ioband_ready_here(struct ioband_dg *dg, struct bio *bio)
{
	struct ioband_bio *ib = dm_per_bio_data(bio, sizeof(*ib));
	struct ioband_dg_pcpu *pc = per_cpu_ptr(dg->pcpu, ib->cpu);

	lockdep_assert_held(&dg->lock);
	if (pc->ready.head != bio)
		return false;
	bio_list_pop(&pc->ready);
	if (bio_list_empty(&pc->ready) && dg->kicks == pc) {
		dg->kicks = pc->next_kick;
		pc->kicked = false;
	}
	return true;
}

/*
 * What the scheduler charges for @bio of @g: its cost in @ib.  Inline, as
 * is ioband_count(): map() calls both for every bio.
 */
static inline void ioband_price(struct ioband_sched *s,
				struct ioband_group *g,
				struct ioband_bio *ib, struct bio *bio)
{
	ib->timed = s->conf.policy == IOBAND_POLICY_WEIGHT_TIME;
	if (ib->timed) {
		ib->cls = ioband_time_class(&g->ent, op_is_write(bio_op(bio)),
					    bio->bi_iter.bi_sector,
					    bio_sectors(bio));
		ib->cost = ioband_time_charge(s, &g->ent, ib->cls,
					      bio_sectors(bio));
	} else if (ioband_cost_flat(s)) {
		/* what ioband_bio_cost() says, without reading the bio */
		ib->cost = IOBAND_SECTORS_PER_TOKEN;
	} else {
		ib->cost = ioband_bio_cost(s, bio_sectors(bio),
					   bio_has_data(bio));
	}
}

static void ioband_limit_feed(struct ioband_dg *dg, struct ioband_group *g,
			      u64 now, u64 from);

/*
 * Moves the oldest held bio of @g to the ready list, past every limit
 * while its device is suspending (its debt then bounded), and lets the
 * next bio that waited for @g's limits into the scheduler if they allow
 * it.  dg->lock held.
 */
static void ioband_release_one(struct ioband_dg *dg, struct ioband_group *g)
{
	struct bio *bio = bio_list_pop(&g->held);
	struct ioband_bio *ib = dm_per_bio_data(bio, sizeof(*ib));

	ioband_sched_dispatch(&dg->sched, &g->ent, ib->cost, true,
			      g->dev->passthrough);
	ioband_ready(dg, g, bio);
	if (unlikely(!bio_list_empty(&g->limit_wait))) {
		u64 now = ktime_get_ns();

		ioband_limit_feed(dg, g, now, now);
	}
}

/* ---- limits --------------------------------------------------------------- */

/* @g's limits as @conf names them (the others stay).  dg->lock held. */
static void ioband_group_set_limits(struct ioband_group *g,
				    const struct ioband_group_conf *conf,
				    u64 now)
{
	struct ioband_limit *lim = g->limits.lim;
	u64 burst_ns = lim[0].burst_ns, rate;
	int k;

	if (conf->limits_given & IOBAND_LIMITS_GIVEN_BURST)
		burst_ns = (u64)conf->burst_ms * NSEC_PER_MSEC;
	g->limited = false;
	for (k = 0; k < IOBAND_NR_LIMITS; k++) {
		rate = conf->limits_given & BIT(k) ? conf->limit_rate[k] :
						      lim[k].rate;
		ioband_limit_set(&lim[k], rate, burst_ns, now);
		g->limited |= !!rate;
	}
}

/*
 * @bio of @g enters the scheduler, past @g's limits: held there, or
 * released at once.  dg->lock held.
 */
static void ioband_sched_enter(struct ioband_dg *dg, struct ioband_group *g,
			       struct bio *bio, u64 now)
{
	struct ioband_bio *ib = dm_per_bio_data(bio, sizeof(*ib));

	ioband_price(&dg->sched, g, ib, bio);
	if (ioband_sched_start(&dg->sched, &g->ent, ib->cost, false, now))
		ioband_ready(dg, g, bio);
	else
		bio_list_add(&g->held, bio);
}

/*
 * Lets @g's bios that wait for its limits into the scheduler, oldest
 * first, while the limits allow at @now and the scheduler holds none of
 * @g's: it never holds more than one bio of a group whose limits bind, so
 * that the limits pace what goes down, not what joins the scheduler's
 * queue.  A bio they do not allow yet files @g in the limited heap, by
 * when they will.
 *
 * @from is when the first bio's wait counts from: @now, or when its
 * limits allowed it if it comes from the limited heap, so that the
 * hrtimer's lateness costs the group no budget: the limits count each
 * bio as gone when it was due (or came, if later), and the bios due
 * meanwhile follow at once.  After a wait in the scheduler, @now: what
 * the scheduler held back is not saved up for a burst.  dg->lock held.
 */
static void ioband_limit_feed(struct ioband_dg *dg, struct ioband_group *g,
			      u64 now, u64 from)
{
	struct bio *bio;

	lockdep_assert_held(&dg->lock);
	while ((bio = bio_list_peek(&g->limit_wait)) &&
	       bio_list_empty(&g->held)) {
		struct ioband_bio *ib = dm_per_bio_data(bio, sizeof(*ib));
		bool write = op_is_write(bio_op(bio));
		u32 bytes = bio->bi_iter.bi_size;
		/* start_ns: when it came, until it goes down */
		u64 at = max(from, ib->start_ns);
		u64 due = ioband_limits_take(&g->limits, write, bytes, at, now);

		if (due > now) {
			ioband_limit_wait(&dg->sched, &g->ent, due);
			return;
		}
		bio_list_pop(&g->limit_wait);
		ioband_sched_enter(dg, g, bio, now);
		from = min(due, now);
	}
	ioband_limit_cancel(&dg->sched, &g->ent);
}

/*
 * May @bio of @g, which waits for nothing else, go to the scheduler at
 * @now under @g's limits?  If so they are charged for it.
 */
static bool ioband_limits_allow(struct ioband_group *g, struct bio *bio,
				u64 now, u64 *due)
{
	*due = ioband_limits_take(&g->limits, op_is_write(bio_op(bio)),
				  bio->bi_iter.bi_size, now, now);
	return *due <= now;
}

/*
 * Every bio that waits for @g's limits goes down now, charged all the
 * same (its debt bounded, as for urgent bios): the device is suspending.
 * dg->lock held.
 */
static void ioband_limit_flush(struct ioband_dg *dg, struct ioband_group *g,
			       u64 now)
{
	struct bio *bio;

	ioband_limit_cancel(&dg->sched, &g->ent);
	while ((bio = bio_list_pop(&g->limit_wait))) {
		struct ioband_bio *ib = dm_per_bio_data(bio, sizeof(*ib));

		ioband_limits_charge_urgent(&g->limits, op_is_write(bio_op(bio)),
					    bio->bi_iter.bi_size, now);
		ioband_price(&dg->sched, g, ib, bio);
		ioband_sched_start(&dg->sched, &g->ent, ib->cost, true, now);
		ioband_ready(dg, g, bio);
	}
}

/*
 * Releases what the scheduler allows, to the ready lists (the caller then
 * kicks their workers).  When the scheduler waits for an idle group's
 * grace to run out, the timer asks again then.
 */
static void ioband_release_allowed(struct ioband_dg *dg, u64 now)
{
	struct ioband_sched *s = &dg->sched;
	struct ioband_entity *e;
	u64 wake_at, limit_at;

	lockdep_assert_held(&dg->lock);
	for (;;) {
		limit_at = 0;
		/* groups whose limits now allow their next bio; rare */
		if (unlikely(s->side_len[IOBAND_HEAP_LIMITED - 1])) {
			u64 t = now ?: ktime_get_ns();

			while ((e = ioband_limit_next(s, t, &limit_at)))
				ioband_limit_feed(dg, to_group(e), t,
						  e->limit_due);
		}
		e = ioband_sched_next(s, now, &wake_at);
		if (!e)
			break;
		ioband_release_one(dg, to_group(e));
	}
	if (limit_at && (!wake_at || limit_at < wake_at))
		wake_at = limit_at;
	if (wake_at)
		hrtimer_start(&dg->wake_timer, ns_to_ktime(wake_at),
			      HRTIMER_MODE_ABS);
}

/*
 * Releases every bio @g holds, and every bio that waits for its limits,
 * past every limit.  dg->lock held.
 */
static void ioband_release_group(struct ioband_device *d,
				 struct ioband_group *g, void *unused)
{
	while (!bio_list_empty(&g->held))
		ioband_release_one(d->dg, g);
	if (unlikely(!bio_list_empty(&g->limit_wait)))
		ioband_limit_flush(d->dg, g, ktime_get_ns());
}

/* ---- completions and dg->lock (see 9.) ---------------------------------- */

/*
 * Tells the scheduler completion @d of @d->grp, at @now (0: if the
 * scheduler needs no time).  A detached group whose last bio this was is
 * destroyed.  Inline, so that end_io()'s @d, whose address is never
 * taken, lives in registers.  dg->lock held.
 */
static __always_inline void ioband_done_tell(struct ioband_dg *dg,
					     const struct ioband_done *d,
					     u64 now)
{
	struct ioband_sched *s = &dg->sched;
	struct ioband_group *g = d->grp;

	lockdep_assert_held(&dg->lock);
	if (!now && ioband_sched_needs_clock(s, &g->ent))
		now = ktime_get_ns();
	/* (charged under another policy, the bio has no time to report) */
	if (d->kind == IOBAND_DONE_LEASED)
		ioband_lease_complete(s, &g->ent, 1, false, now);
	else if (d->kind == IOBAND_DONE_TIMED &&
		 s->conf.policy == IOBAND_POLICY_WEIGHT_TIME)
		ioband_sched_complete_timed(s, &g->ent, d->cls, d->cost,
					    d->elapsed_ns, d->beyond_depth,
					    now);
	else
		ioband_sched_complete(s, &g->ent, now);
	dg->done_told = true;
	dg->done_now = now;
	if (g->detached && !g->ent.nr_inflight) {
		ioband_entity_forget(s, &g->ent);
		if (ioband_group_drained(g))
			ioband_group_destroy(g);
	}
}

/*
 * dg->lock is taken elsewhere: @d is left on this CPU's ring for a holder
 * of the lock to tell; false if the ring is full.  Interrupts off.
 */
static bool ioband_done_leave(struct ioband_dg *dg,
			      const struct ioband_done *d)
{
	struct ioband_dg_pcpu *pc = this_cpu_ptr(dg->pcpu);
	unsigned int head = pc->done_head;

	/* a slot is reused only once the drain has read it */
	if (head - smp_load_acquire(&pc->done_tail) >= IOBAND_DONE_SLOTS)
		return false;
	pc->done[head % IOBAND_DONE_SLOTS] = *d;
	/* the slot is written before the drain may read it */
	smp_store_release(&pc->done_head, head + 1);
	/*
	 * Written before listed (a full barrier): a drain that takes this
	 * CPU off the list after this sees the bit set reads the new head.
	 */
	if (!test_and_set_bit(0, &pc->done_listed))
		llist_add(&pc->done_node, &dg->done);
	return true;
}

/* Tells the completions that CPUs left on their rings.  dg->lock held. */
static void ioband_done_drain(struct ioband_dg *dg)
{
	struct ioband_dg_pcpu *pc, *next;
	struct llist_node *list;
	u64 now;

	lockdep_assert_held(&dg->lock);
	if (llist_empty(&dg->done))
		return;
	list = llist_del_all(&dg->done);
	now = ktime_get_ns();
	llist_for_each_entry_safe(pc, next, list, done_node) {
		unsigned int tail = pc->done_tail, head;

		clear_bit(0, &pc->done_listed);
		/* unlisted before the ring is read: see ioband_done_leave() */
		smp_mb__after_atomic();
		/* and its slots read after their head */
		head = smp_load_acquire(&pc->done_head);
		for (; tail != head; tail++)
			ioband_done_tell(dg, &pc->done[tail % IOBAND_DONE_SLOTS],
					 now);
		/* the slots are free for the CPU once read */
		smp_store_release(&pc->done_tail, tail);
	}
}

/*
 * Takes dg->lock, interrupts off, and tells the completions left while
 * another CPU held it, so that the holder sees what is in flight.
 */
static void ioband_lock_irq(struct ioband_dg *dg)
	__acquires(&dg->lock)
{
	spin_lock_irq(&dg->lock);
	ioband_done_drain(dg);
}

/*
 * Drops dg->lock, interrupts staying off.  First the completions left
 * while it was held are told, the bios the told ones allow are released
 * and the workers of their CPUs kicked; then, if more were left meanwhile
 * and no other CPU has taken the lock since, again.  A completion that
 * finds the lock taken lists itself, then tries the lock once more
 * (ioband_end_io()): with a full barrier on each side, either it finds
 * the lock free or the holder finds it listed, so none is left untold.
 * This is one pass; ioband_unlock() loops.
 */
static __always_inline void ioband_unlock_pass(struct ioband_dg *dg)
	__releases(&dg->lock)
{
	struct ioband_dg_pcpu *kicks;

	ioband_done_drain(dg);
	/* read first: the bit's cache line is written only when it is set */
	if (unlikely(test_bit(0, &dg->release_owed)) &&
	    test_and_clear_bit(0, &dg->release_owed)) {
		dg->done_told = false;
		ioband_release_allowed(dg, ktime_get_ns());
	} else if (dg->done_told) {
		dg->done_told = false;
		/* nothing held: nothing to release, no timer to set */
		if (dg->sched.heap_len)
			ioband_release_allowed(dg, dg->done_now);
	}
	kicks = ioband_kicks_take(dg);
	spin_unlock(&dg->lock);
	ioband_kick_workers(dg, kicks);
	/*
	 * unlocked before the list and the bit are read: pairs with
	 * ioband_end_io() and ioband_wake()
	 */
	smp_mb();
}

/* Completions or a release were left while dg->lock was held. */
static bool ioband_unlock_owed(struct ioband_dg *dg)
{
	return !llist_empty(&dg->done) || test_bit(0, &dg->release_owed);
}

/* What was left during ioband_unlock_pass(), if the lock is free. */
static noinline void ioband_unlock_again(struct ioband_dg *dg)
{
	while (ioband_unlock_owed(dg) && spin_trylock(&dg->lock))
		ioband_unlock_pass(dg);
}

/*
 * ioband_unlock(), inline: for map() and end_io(), which drop the lock
 * once per bio.
 */
static __always_inline void __ioband_unlock(struct ioband_dg *dg)
	__releases(&dg->lock)
{
	ioband_unlock_pass(dg);
	if (unlikely(ioband_unlock_owed(dg)))
		ioband_unlock_again(dg);
}

static void ioband_unlock(struct ioband_dg *dg)
	__releases(&dg->lock)
{
	__ioband_unlock(dg);
}

static void ioband_unlock_irq(struct ioband_dg *dg)
	__releases(&dg->lock)
{
	ioband_unlock(dg);
	local_irq_enable();
}

/* ioband_lock_irq(), for a caller whose interrupts may be off already */
static unsigned long ioband_lock_irqsave(struct ioband_dg *dg)
	__acquires(&dg->lock)
{
	unsigned long flags;

	spin_lock_irqsave(&dg->lock, flags);
	ioband_done_drain(dg);
	return flags;
}

static void ioband_kick(struct ioband_dg *dg)
{
	unsigned long flags = ioband_lock_irqsave(dg);

	ioband_release_allowed(dg, ktime_get_ns());
	ioband_unlock(dg);
	local_irq_restore(flags);
}

/*
 * An idle group's grace ran out, or a limit allows a bio: release what may
 * go.  A hard interrupt, so no spinning for the lock: if another CPU
 * holds it, that one releases before it drops it (ioband_unlock()).
 */
static enum hrtimer_restart ioband_wake(struct hrtimer *timer)
{
	struct ioband_dg *dg = container_of(timer, struct ioband_dg,
					    wake_timer);
	unsigned long flags;

	set_bit(0, &dg->release_owed);
	/* owed before the lock is tried: see ioband_unlock() */
	smp_mb__after_atomic();
	local_irq_save(flags);
	if (spin_trylock(&dg->lock))
		ioband_unlock(dg);
	local_irq_restore(flags);
	return HRTIMER_NORESTART;
}

static void ioband_submit_work(struct work_struct *work)
{
	struct ioband_dg_pcpu *pc = container_of(work, struct ioband_dg_pcpu,
						 submit_work);
	struct ioband_dg *dg = pc->dg;
	struct blk_plug plug;
	struct bio_list bios;
	struct bio *bio;
	u64 now;

	ioband_lock_irq(dg);
	bios = pc->ready;
	bio_list_init(&pc->ready);
	pc->kicked = false;
	ioband_unlock_irq(dg);

	/*
	 * dm_submit_bio_remap() gives the bio the original's blkcg
	 * association, so controllers below see the right cgroup, and does
	 * dm's accounting (ti->accounts_remapped_io).
	 */
	/*
	 * weight-time times a bio from here: the worker's delay is not the
	 * device's time (charged from the release, it gave a group of cheap
	 * reads 55 % for 57 on the model device, 20 us of delay for 100 us
	 * reads).
	 */
	now = ktime_get_ns();
	blk_start_plug(&plug);
	while ((bio = bio_list_pop(&bios))) {
		struct ioband_bio *ib = dm_per_bio_data(bio, sizeof(*ib));

		if (ib->timed || ib->lat)
			ib->start_ns = now;
		dm_submit_bio_remap(bio, NULL);
	}
	blk_finish_plug(&plug);
}

static inline void ioband_count(struct ioband_group *g, struct bio *bio,
				bool held)
{
	struct ioband_stats *st = &g->stats;

	if (op_is_write(bio_op(bio))) {
		st->writes++;
		st->write_sectors += bio_sectors(bio);
		st->delayed_writes += held;
	} else {
		st->reads++;
		st->read_sectors += bio_sectors(bio);
		st->delayed_reads += held;
	}
}

/*
 * bio_set_dev() without the blkcg association: every bio this target
 * charges goes down through dm_submit_bio_remap() (DM_MAPIO_REMAPPED or
 * from the worker), which gives it the original bio's association, so
 * associating it here as well would only be undone.
 */
static void ioband_set_dev(struct bio *bio, struct block_device *bdev)
{
	bio_clear_flag(bio, BIO_REMAPPED);
	if (bio->bi_bdev != bdev)
		bio_clear_flag(bio, BIO_BPS_THROTTLED);
	bio->bi_bdev = bdev;
}

/*
 * Bios that other groups may be waiting on, and polled bios, go down at
 * once; see 7.
 */
static bool ioband_bio_urgent(const struct bio *bio)
{
	return bio->bi_opf & (REQ_META | REQ_SWAP | REQ_POLLED);
}

/*
 * A bio for @g, which holds bios already, and that the scheduler may
 * hold: NULL if it is REQ_NOWAIT (it would be held behind them, and its
 * submitter may not wait), else its group after waiting for room if @g is
 * full.  Called and returns with dg->lock held.  Inline: out of line,
 * @waited would live on map()'s stack, and its address would arm the
 * stack protector on every bio.
 */
static __always_inline struct ioband_group *
ioband_behind_held(struct ioband_device *d, struct bio *bio,
		   struct ioband_bio *ib, struct ioband_group *g, bool *waited)
{
	if (bio->bi_opf & REQ_NOWAIT)
		return NULL;
	if (ioband_group_full(d, g) && ioband_may_sleep(bio)) {
		g = ioband_wait_for_room(d, bio, ib, g);
		*waited = true;
	}
	return g;
}

enum ioband_limits_verdict {
	IOBAND_LIMITS_PASS,	/* on to the scheduler, limits charged */
	IOBAND_LIMITS_WAIT,	/* queued for the limits */
	IOBAND_LIMITS_AGAIN,	/* REQ_NOWAIT, and it would wait */
};

/*
 * The limits of @g (which has some, or bios waiting for them) for @bio,
 * which waited for room already if it had to.  An urgent bio (@bypass)
 * is charged and passes; another waits behind @g's waiting bios, or
 * while the limits do not allow it.  Called and returns with dg->lock
 * held.  Not inlined: it stays out of map()'s fast path.
 */
static noinline enum ioband_limits_verdict
ioband_map_limited(struct ioband_dg *dg, struct ioband_group *g,
		   struct bio *bio, struct ioband_bio *ib, bool bypass)
{
	u64 now = ktime_get_ns(), due = 0;

	if (bypass) {
		ioband_limits_charge_urgent(&g->limits,
					    op_is_write(bio_op(bio)),
					    bio->bi_iter.bi_size, now);
		return IOBAND_LIMITS_PASS;
	}
	if (bio_list_empty(&g->limit_wait) && bio_list_empty(&g->held) &&
	    ioband_limits_allow(g, bio, now, &due))
		return IOBAND_LIMITS_PASS;
	if (bio->bi_opf & REQ_NOWAIT)
		return IOBAND_LIMITS_AGAIN;
	ib->start_ns = now;
	ib->cpu = smp_processor_id();
	bio_list_add(&g->limit_wait, bio);
	g->held_sectors += bio_sectors(bio);
	trace_ioband_hold(dg->name, g->id, bio);
	if (due) {
		/* first in line: the limits alone keep it */
		ioband_limit_wait(&dg->sched, &g->ent, due);
		ioband_release_allowed(dg, now);
	}
	return IOBAND_LIMITS_WAIT;
}

static int ioband_map(struct dm_target *ti, struct bio *bio)
{
	struct ioband_device *d = ti->private;
	struct ioband_bio *ib = dm_per_bio_data(bio, sizeof(*ib));
	struct ioband_dg *dg = d->dg;
	struct ioband_sched *s = &dg->sched;
	struct ioband_group *g;
	bool held, bypass, waited = false;
	u64 now;

	ib->grp = NULL;
	if (!bio_sectors(bio)) {
		/* empty flush: not charged */
		bio_set_dev(bio, d->dev->bdev);
		return DM_MAPIO_REMAPPED;
	}

	/* A held bio may be released as soon as the lock drops. */
	ioband_set_dev(bio, d->dev->bdev);
	bio->bi_iter.bi_sector = dm_target_offset(ti, bio->bi_iter.bi_sector);
	ib->leased = false;
	if (READ_ONCE(dg->leasing) && ioband_map_leased(d, bio, ib))
		return DM_MAPIO_REMAPPED;

	ioband_lock_irq(dg);
	g = ioband_lookup(d, bio, ib);
	trace_ioband_map(dg->name, g->id, bio);
	ib->lat = ioband_lat_sample(g);
	if (unlikely(ib->lat))
		ib->map_ns = ktime_get_ns();
	bypass = d->passthrough || ioband_bio_urgent(bio);
	if (unlikely(g->held_sectors) && !bypass) {
		struct ioband_group *room = ioband_behind_held(d, bio, ib, g,
							       &waited);

		if (!room)
			goto again;
		g = room;
	}
	/* limit_wait's bios count in held_sectors: none wait while it is 0 */
	if (unlikely(g->limited ||
		     (g->held_sectors && !bio_list_empty(&g->limit_wait)))) {
		switch (ioband_map_limited(dg, g, bio, ib, bypass)) {
		case IOBAND_LIMITS_PASS:
			break;
		case IOBAND_LIMITS_WAIT:
			ioband_count(g, bio, true);
			ioband_unlock_irq(dg);
			return DM_MAPIO_SUBMITTED;
		default:
			goto again;
		}
	}
	ioband_price(s, g, ib, bio);
	/* The clock is read only when the scheduler or a timed bio needs it. */
	now = ioband_sched_needs_clock(s, &g->ent) || ib->lat ?
	      ktime_get_ns() : 0;
	ioband_lease_settle(dg, g, now);
	held = !ioband_sched_start(s, &g->ent, ib->cost, bypass, now);
	if (held)
		ioband_lease_revoke_all(dg, now);
	else if (!bypass)
		ib->leased = ioband_lease_renew(dg, d, g, ib->cost, ib->timed);
	if (held) {
		if (unlikely(bio->bi_opf & REQ_NOWAIT)) {
			/* the scheduler forgets it: it never came */
			ioband_sched_unhold(s, &g->ent,
					    now ? now : ktime_get_ns());
			/* and its limits, which charged it (not bypass) */
			if (unlikely(g->limited))
				ioband_limits_refund(&g->limits,
						     op_is_write(bio_op(bio)),
						     bio->bi_iter.bi_size);
			goto again;
		}
		ib->cpu = smp_processor_id();
		bio_list_add(&g->held, bio);
		g->held_sectors += bio_sectors(bio);
		trace_ioband_hold(dg->name, g->id, bio);
		/* it may be the one the scheduler waits for */
		ioband_release_allowed(dg, now);
		held = !ioband_ready_here(dg, bio);
	} else {
		ib->grp = g;
		ib->start_ns = now;
		ib->beyond_depth = ioband_sched_beyond_depth(s);
	}
	ioband_count(g, bio, held || waited);
	__ioband_unlock(dg);
	local_irq_enable();
	return held ? DM_MAPIO_SUBMITTED : DM_MAPIO_REMAPPED;

again:
	/*
	 * A REQ_NOWAIT bio that would be held ends with BLK_STS_AGAIN, from
	 * here, in its submitter's context: io_uring then reissues it from
	 * one of its workers, without REQ_NOWAIT.
	 */
	trace_ioband_again(dg->name, g->id, bio);
	ioband_unlock_irq(dg);
	bio->bi_status = BLK_STS_AGAIN;
	bio_endio(bio);
	return DM_MAPIO_SUBMITTED;
}

/* @ib, timed for @g's latency (see 12.), has completed: now, as recorded. */
static u64 ioband_lat_record(struct ioband_group *g,
			     const struct ioband_bio *ib)
{
	unsigned long flags;
	u64 now = ktime_get_ns();

	spin_lock_irqsave(&g->lat_lock, flags);
	ioband_lat_add(&g->lat, ib->start_ns - ib->map_ns, now - ib->start_ns,
		       now);
	spin_unlock_irqrestore(&g->lat_lock, flags);
	return now;
}

/*
 * The completion of @ib, at @now if it is timed (its time in flight is
 * measured to then).
 */
static __always_inline struct ioband_done
ioband_done_of(const struct ioband_bio *ib, u64 now)
{
	struct ioband_done d = { .grp = ib->grp };

	if (ib->leased) {
		d.kind = IOBAND_DONE_LEASED;
	} else if (ib->timed) {
		d.kind = IOBAND_DONE_TIMED;
		d.cls = ib->cls;
		d.cost = ib->cost;
		d.elapsed_ns = now - ib->start_ns;
		d.beyond_depth = ib->beyond_depth;
	}
	return d;
}

/*
 * end_io() found dg->lock taken: the completion of @ib is left on this
 * CPU's ring for the holder, or told once the lock is had if the ring is
 * full.  Out of line: the ring's copy takes the record's address, which
 * in end_io() would arm the stack protector on every completion.
 * Interrupts off.
 */
static noinline void ioband_end_io_contended(struct ioband_dg *dg,
					     const struct ioband_bio *ib,
					     u64 now)
{
	struct ioband_done d = ioband_done_of(ib, now);

	if (ioband_done_leave(dg, &d)) {
		/* listed before the lock is tried: see ioband_unlock() */
		smp_mb();
		if (spin_trylock(&dg->lock))
			ioband_unlock(dg);
		return;
	}
	/* its ring is full: wait for the holder, who empties it */
	spin_lock(&dg->lock);
	ioband_done_drain(dg);
	ioband_done_tell(dg, &d, now);
	ioband_unlock(dg);
}

static int ioband_end_io(struct dm_target *ti, struct bio *bio,
			 blk_status_t *error)
{
	struct ioband_bio *ib = dm_per_bio_data(bio, sizeof(*ib));
	struct ioband_group *g = ib->grp;
	struct ioband_dg *dg;
	unsigned long flags;
	u64 now;

	if (!g)
		return DM_ENDIO_DONE;
	dg = g->dev->dg;
	/* before a leased bio is counted, which may free its group */
	now = unlikely(ib->lat) ? ioband_lat_record(g, ib) : 0;
	if (ib->leased) {
		if (!ioband_end_leased(dg, g))
			return DM_ENDIO_DONE;
	} else if (ib->timed && !now) {
		now = ktime_get_ns();
	}
	/*
	 * Possibly in a hard interrupt: no spinning for the lock.  If another
	 * CPU holds it, the completion is left for it to tell (see 9.).
	 */
	local_irq_save(flags);
	if (likely(spin_trylock(&dg->lock))) {
		struct ioband_done d = ioband_done_of(ib, now);

		ioband_done_drain(dg);
		ioband_done_tell(dg, &d, now);
		__ioband_unlock(dg);
	} else {
		ioband_end_io_contended(dg, ib, now);
	}
	local_irq_restore(flags);
	return DM_ENDIO_DONE;
}

/* ---- allocation fault injection ----------------------------------------- */

/*
 * Every allocation of the configuration paths (table load, a new device
 * group, attach) first asks ioband_alloc_fails(), which fails it as the
 * fault attribute /sys/kernel/debug/fail_ioband says (the knobs of
 * Documentation/fault-injection: probability, times, space, task-filter),
 * so that a test fails ioband's allocations and nobody else's.
 * fail_ioband/sites counts the failures injected at each site: a test can
 * require every failure path to have been taken.  Built only with
 * CONFIG_FAULT_INJECTION_DEBUG_FS; otherwise nothing fails.
 */
enum ioband_alloc_site {
	IOBAND_ALLOC_TABLE,	/* ioband_ctr(): the parsed groups */
	IOBAND_ALLOC_DEVICE,	/* ioband_ctr(): the device */
	IOBAND_ALLOC_DG,	/* ioband_dg_get(): a new device group */
	IOBAND_ALLOC_DG_HEAP,	/* ioband_dg_get(): its first heap */
	IOBAND_ALLOC_DG_PCPU,	/* ioband_dg_get(): its per-CPU part */
	IOBAND_ALLOC_DG_WQ,	/* ioband_dg_get(): its workqueue */
	IOBAND_ALLOC_HEAP,	/* ioband_dg_reserve(): a larger heap */
	IOBAND_ALLOC_GROUPS,	/* ioband_attach(): the array of new groups */
	IOBAND_ALLOC_GROUP,	/* ioband_attach(): one group */
	IOBAND_ALLOC_SLOT,	/* ioband_attach(): its slot in the xarray */
	IOBAND_NR_ALLOC_SITES
};

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
static DECLARE_FAULT_ATTR(ioband_fail_alloc);
static atomic_t ioband_alloc_failed[IOBAND_NR_ALLOC_SITES];
static struct dentry *ioband_fault_dir;

static const char * const ioband_alloc_site_names[IOBAND_NR_ALLOC_SITES] = {
	[IOBAND_ALLOC_TABLE] = "table",
	[IOBAND_ALLOC_DEVICE] = "device",
	[IOBAND_ALLOC_DG] = "dg",
	[IOBAND_ALLOC_DG_HEAP] = "dg_heap",
	[IOBAND_ALLOC_DG_PCPU] = "dg_pcpu",
	[IOBAND_ALLOC_DG_WQ] = "dg_wq",
	[IOBAND_ALLOC_HEAP] = "heap",
	[IOBAND_ALLOC_GROUPS] = "groups",
	[IOBAND_ALLOC_GROUP] = "group",
	[IOBAND_ALLOC_SLOT] = "slot",
};

static bool ioband_alloc_fails(enum ioband_alloc_site site)
{
	if (!should_fail(&ioband_fail_alloc, 1))
		return false;
	atomic_inc(&ioband_alloc_failed[site]);
	return true;
}

static int ioband_sites_show(struct seq_file *m, void *v)
{
	int i;

	for (i = 0; i < IOBAND_NR_ALLOC_SITES; i++)
		seq_printf(m, "%s %d\n", ioband_alloc_site_names[i],
			   atomic_read(&ioband_alloc_failed[i]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ioband_sites);

/* Without debugfs nothing is injected, and ioband works as ever. */
static void ioband_fault_init(void)
{
	ioband_fault_dir = fault_create_debugfs_attr("fail_ioband", NULL,
						     &ioband_fail_alloc);
	if (!IS_ERR(ioband_fault_dir))
		debugfs_create_file("sites", 0400, ioband_fault_dir, NULL,
				    &ioband_sites_fops);
}

static void ioband_fault_exit(void)
{
	debugfs_remove_recursive(ioband_fault_dir);
}
#else
static inline bool ioband_alloc_fails(enum ioband_alloc_site site)
{
	return false;
}

static inline void ioband_fault_init(void)
{
}

static inline void ioband_fault_exit(void)
{
}
#endif

/* @alloc, or NULL without calling it when a failure is injected at @site */
#define ioband_alloc(site, alloc) (ioband_alloc_fails(site) ? NULL : (alloc))

/* ---- device groups ------------------------------------------------------- */

static struct ioband_dg *ioband_dg_get(const char *name,
				       const struct ioband_dg_conf *conf)
{
	struct ioband_entity **heap;
	struct ioband_dg *dg;
	unsigned int i;
	int cpu;

	mutex_lock(&ioband_dgs_lock);
	list_for_each_entry(dg, &ioband_dgs, node) {
		if (!strcmp(dg->name, name)) {
			dg->nr_devices++;
			goto out;
		}
	}
	dg = ioband_alloc(IOBAND_ALLOC_DG, kzalloc(sizeof(*dg), GFP_KERNEL));
	heap = ioband_alloc(IOBAND_ALLOC_DG_HEAP,
			    kvcalloc(IOBAND_HEAP_SLOTS(1), sizeof(*heap),
				     GFP_KERNEL));
	if (dg) {
		dg->pcpu = ioband_alloc(IOBAND_ALLOC_DG_PCPU,
					alloc_percpu(struct ioband_dg_pcpu));
		dg->wq = ioband_alloc(IOBAND_ALLOC_DG_WQ,
				      alloc_workqueue("kioband/%.15s",
						      WQ_MEM_RECLAIM, 0, name));
	}
	if (!dg || !heap || !dg->pcpu || !dg->wq) {
		if (dg && dg->wq)
			destroy_workqueue(dg->wq);
		if (dg)
			free_percpu(dg->pcpu);
		kfree(dg);
		kvfree(heap);
		dg = NULL;
		goto out;
	}
	strscpy(dg->name, name, sizeof(dg->name));
	dg->nr_devices = 1;
	mutex_init(&dg->conf_lock);
	INIT_LIST_HEAD(&dg->devices);
	INIT_LIST_HEAD(&dg->leased);
	spin_lock_init(&dg->lock);
	init_llist_head(&dg->done);
	ioband_sched_init(&dg->sched, conf, heap, 1);
	for_each_possible_cpu(cpu) {
		struct ioband_dg_pcpu *pc = per_cpu_ptr(dg->pcpu, cpu);

		pc->dg = dg;
		pc->cpu = cpu;
		bio_list_init(&pc->ready);
		INIT_WORK(&pc->submit_work, ioband_submit_work);
	}
	hrtimer_init(&dg->wake_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	for (i = 0; i < ARRAY_SIZE(dg->room_wait); i++)
		init_waitqueue_head(&dg->room_wait[i]);
	dg->wake_timer.function = ioband_wake;
	list_add(&dg->node, &ioband_dgs);
out:
	mutex_unlock(&ioband_dgs_lock);
	return dg;
}

static void ioband_dg_put(struct ioband_dg *dg)
{
	mutex_lock(&ioband_dgs_lock);
	if (--dg->nr_devices) {
		mutex_unlock(&ioband_dgs_lock);
		return;
	}
	list_del(&dg->node);
	mutex_unlock(&ioband_dgs_lock);

	hrtimer_cancel(&dg->wake_timer);
	destroy_workqueue(dg->wq);
	free_percpu(dg->pcpu);
	WARN_ON_ONCE(dg->sched.nr_inflight || dg->sched.heap_len ||
		     !llist_empty(&dg->done));
	kvfree(dg->sched.heap);
	mutex_destroy(&dg->conf_lock);
	kfree(dg);
}

/*
 * Makes room in the heap for @more entities.  The heap must hold every
 * group of the device group, since any of them may hold bios.
 */
static int ioband_dg_reserve(struct ioband_dg *dg, u32 more)
{
	u32 need = dg->nr_entities + more;
	struct ioband_entity **heap, **old;

	lockdep_assert_held(&dg->conf_lock);
	if (need <= dg->sched.heap_cap)
		return 0;
	need = max(need, 2 * dg->sched.heap_cap);
	heap = ioband_alloc(IOBAND_ALLOC_HEAP,
			    kvcalloc(IOBAND_HEAP_SLOTS(need), sizeof(*heap),
				     GFP_KERNEL));
	if (!heap)
		return -ENOMEM;
	ioband_lock_irq(dg);
	old = ioband_sched_swap_heap(&dg->sched, heap, need);
	ioband_unlock_irq(dg);
	kvfree(old);
	return 0;
}

/* New device group settings; dg->lock held. */
static void ioband_dg_set_conf(struct ioband_dg *dg,
			       const struct ioband_dg_conf *conf)
{
	bool restart = conf->policy != dg->sched.conf.policy;
	struct ioband_device *d;
	struct ioband_group *g;
	unsigned long idx;

	ioband_lease_revoke_all(dg, ktime_get_ns());
	ioband_sched_set_conf(&dg->sched, conf);
	if (!restart)
		return;
	/* Virtual times of one policy mean nothing to another. */
	list_for_each_entry(d, &dg->devices, dg_node) {
		ioband_entity_restart(&dg->sched, &d->def.ent);
		xa_for_each(&d->groups, idx, g)
			ioband_entity_restart(&dg->sched, &g->ent);
	}
}

/* ---- groups -------------------------------------------------------------- */

/* A new group; it joins the scheduler now if its device is live.  dg->lock held. */
static void ioband_group_init(struct ioband_device *d, struct ioband_group *g,
			      const struct ioband_group_conf *conf)
{
	u64 now = ktime_get_ns();
	int cpu;

	lockdep_assert_held(&d->dg->lock);
	g->dev = d;
	g->id = conf->id;
	for_each_possible_cpu(cpu)
		per_cpu_ptr(g->pcpu, cpu)->next_sector = U64_MAX;
	spin_lock_init(&g->lat_lock);
	INIT_LIST_HEAD(&g->lease_node);
	bio_list_init(&g->held);
	bio_list_init(&g->limit_wait);
	ioband_entity_prepare(&g->ent, conf->weight);
	ioband_entity_set_range(&d->dg->sched, &g->ent, conf->min_kbps,
				conf->max_kbps, now);
	/* IOPS limits count the requests the device below will make */
	g->limits.max_io_bytes =
		queue_max_sectors(bdev_get_queue(d->dev->bdev)) << SECTOR_SHIFT;
	ioband_group_set_limits(g, conf, now);
	d->min_sum += conf->min_kbps;
	if (d->live)
		ioband_entity_join(&d->dg->sched, &g->ent);
}

/*
 * A group with nothing held or in flight leaves the scheduler, if its
 * device ever joined it.  dg->lock held.
 */
static void ioband_group_leave(struct ioband_device *d, struct ioband_group *g)
{
	lockdep_assert_held(&d->dg->lock);
	if (!d->live)
		return;
	ioband_entity_exit(&d->dg->sched, &g->ent);
	ioband_entity_forget(&d->dg->sched, &g->ent);
}

/*
 * Every walk over a device's groups that needs dg->lock takes it for
 * IOBAND_LOCK_BATCH groups at a time, so that interrupts stay off for as
 * long at 65536 groups as at 32 (see 9.).
 */
#define IOBAND_LOCK_BATCH	32

typedef void (*ioband_group_fn)(struct ioband_device *d,
				struct ioband_group *g, void *arg);

/*
 * Calls @fn for every group attached to @d, under dg->lock, a batch at a
 * time: groups attached or detached meanwhile may or may not be seen,
 * each other group is seen exactly once.  @fn may detach its group.
 */
static void ioband_walk_groups(struct ioband_device *d, ioband_group_fn fn,
			       void *arg)
{
	struct ioband_dg *dg = d->dg;
	struct ioband_group *g;
	unsigned long idx = 0;
	unsigned int n;

	do {
		n = 0;
		ioband_lock_irq(dg);
		xa_for_each_start(&d->groups, idx, g, idx) {
			fn(d, g, arg);
			if (++n == IOBAND_LOCK_BATCH)
				break;
		}
		ioband_unlock_irq(dg);
		cond_resched();
	} while (n == IOBAND_LOCK_BATCH && ++idx);
}

/* ---- the hierarchy (see 13.) --------------------------------------------- */

/*
 * dg->lock held: @g moves under the group of its nearest ancestor cgroup
 * that has one, or to the top; a detached parent it leaves may be freed.
 */
static void ioband_group_relink(struct ioband_device *d, struct ioband_group *g,
				void *unused)
{
	struct ioband_entity *old = g->ent.parent;
	struct ioband_group *p = g->cgrp ? ioband_cgroup_ancestor(d, g->cgrp) :
					   NULL;

	lockdep_assert_held(&d->dg->lock);
	ioband_entity_set_parent(&d->dg->sched, &g->ent, p ? &p->ent : NULL);
	if (old && old != g->ent.parent && ioband_group_drained(to_group(old)))
		ioband_group_destroy(to_group(old));
}

/*
 * After groups came or went, or when the device goes live: every group of
 * a live cgroup-tree device under its nearest configured ancestor.  A
 * walk of all groups, a batch at a time (see 9.).  conf_lock held, so no
 * group comes or goes meanwhile.
 */
static void ioband_tree_relink(struct ioband_device *d)
{
	lockdep_assert_held(&d->dg->conf_lock);
	if (d->type == IOBAND_TYPE_CGROUP_TREE && d->live)
		ioband_walk_groups(d, ioband_group_relink, NULL);
}

/* dg->lock held: @g leaves its tree, before its device's groups are freed. */
static void ioband_group_unlink(struct ioband_device *d, struct ioband_group *g,
				void *unused)
{
	lockdep_assert_held(&d->dg->lock);
	ioband_entity_set_parent(&d->dg->sched, &g->ent, NULL);
}

/*
 * Adds attached groups to a device.  Called with conf_lock held and the
 * heap reserved.  Many groups come only from a table line, whose device
 * sees no bio before it is resumed; a message attaches one.
 */
static int ioband_attach(struct ioband_device *d,
			 const struct ioband_group_conf *confs, u32 nr)
{
	struct ioband_dg *dg = d->dg;
	struct ioband_group **gs;
	u32 i;
	int r;

	gs = ioband_alloc(IOBAND_ALLOC_GROUPS,
			  kvcalloc(nr, sizeof(*gs), GFP_KERNEL));
	if (!gs)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		gs[i] = ioband_alloc(IOBAND_ALLOC_GROUP,
				     kzalloc(sizeof(*gs[i]), GFP_KERNEL));
		if (!gs[i]) {
			r = -ENOMEM;
			goto fail;
		}
		gs[i]->pcpu = ioband_alloc(IOBAND_ALLOC_GROUP,
					   alloc_percpu(struct ioband_group_pcpu));
		if (!gs[i]->pcpu) {
			r = -ENOMEM;
			goto fail;
		}
		if (d->type == IOBAND_TYPE_CGROUP_TREE)
			gs[i]->cgrp = ioband_cgroup_get(confs[i].id);
		r = ioband_alloc_fails(IOBAND_ALLOC_SLOT) ? -ENOMEM :
			xa_reserve_irq(&d->groups, confs[i].id, GFP_KERNEL);
		if (r)
			goto fail;
	}

	for (i = 0; i < nr; i++) {
		/* a batch at a time, as in ioband_walk_groups() */
		if (i % IOBAND_LOCK_BATCH == 0)
			ioband_lock_irq(dg);
		ioband_group_init(d, gs[i], &confs[i]);
		/* reserved above: cannot fail or allocate */
		xa_store(&d->groups, confs[i].id, gs[i], GFP_ATOMIC);
		WRITE_ONCE(d->nr_groups, d->nr_groups + 1);
		ioband_lookup_forget(d);
		/* a bio of its cgroup may have been leased to another group */
		ioband_lease_revoke_all(dg, ktime_get_ns());
		if (i % IOBAND_LOCK_BATCH == IOBAND_LOCK_BATCH - 1 || i == nr - 1)
			ioband_unlock_irq(dg);
	}
	dg->nr_entities += nr;
	kvfree(gs);
	ioband_tree_relink(d);
	return 0;

fail:
	ioband_lock_irq(dg);
	for (i = 0; i < nr; i++)
		xa_release(&d->groups, confs[i].id);
	ioband_unlock_irq(dg);
	for (i = 0; i < nr && gs[i]; i++)
		ioband_group_destroy(gs[i]);
	kvfree(gs);
	return r;
}

/*
 * Takes a group out of its device.  Its held bios join the default
 * group's, and those that waited for its limits wait for the default
 * group's (if it has none, they join its scheduler queue as it allows);
 * it is freed now if it has nothing in flight, else by its last end_io.
 * dg->lock held.
 */
static bool ioband_detach_locked(struct ioband_device *d,
				 struct ioband_group *g)
{
	struct ioband_sched *s = &d->dg->sched;
	u64 now = ktime_get_ns();

	ioband_lease_leave(d->dg, g, now);
	xa_erase(&d->groups, g->id);
	WRITE_ONCE(d->nr_groups, d->nr_groups - 1);
	d->min_sum -= g->ent.min_kbps;
	ioband_lookup_forget(d);
	ioband_sched_move_held(s, &g->ent, &d->def.ent, now);
	bio_list_merge(&d->def.held, &g->held);
	bio_list_init(&g->held);
	ioband_limit_cancel(s, &g->ent);
	bio_list_merge(&d->def.limit_wait, &g->limit_wait);
	bio_list_init(&g->limit_wait);
	d->def.held_sectors += g->held_sectors;
	ioband_unhold(d->dg, g, g->held_sectors);
	ioband_limit_feed(d->dg, &d->def, now, now);
	ioband_entity_exit(s, &g->ent);
	/* its children follow it to the top until ioband_tree_relink() */
	ioband_entity_set_parent(s, &g->ent, NULL);
	if (g->ent.nr_inflight)
		return false;
	ioband_entity_forget(s, &g->ent);
	return ioband_group_drained(g);
}

static int ioband_detach(struct ioband_device *d, s64 id)
{
	struct ioband_dg *dg = d->dg;
	struct ioband_group *g;
	bool free_now;

	ioband_lock_irq(dg);
	g = xa_load(&d->groups, id);
	if (!g) {
		ioband_unlock_irq(dg);
		return -ENOENT;
	}
	free_now = ioband_detach_locked(d, g);
	ioband_unlock_irq(dg);
	dg->nr_entities--;
	if (free_now)
		ioband_group_destroy(g);
	ioband_tree_relink(d);
	ioband_kick(dg);
	return 0;
}

/* ---- constructor and destructor ------------------------------------------ */

/*
 * dm has waited for every bio: nothing is held or in flight.  @g leaves
 * the scheduler; it stays in d->groups until ioband_groups_free().
 * dg->lock held.
 */
static void ioband_group_retire(struct ioband_device *d, struct ioband_group *g,
				void *unused)
{
	lockdep_assert_held(&d->dg->lock);
	/* completions of leased bios that no CPU has folded yet */
	ioband_lease_leave(d->dg, g, ktime_get_ns());
	WARN_ON_ONCE(!bio_list_empty(&g->held) ||
		     !bio_list_empty(&g->limit_wait) || g->ent.nr_inflight);
	ioband_group_leave(d, g);
}

/*
 * Once @d has left its device group's list, no walk under dg->lock can
 * reach its groups: each is freed after a grace period, and none of it
 * is done under the lock (see 9.).  One erase at a time, since the
 * xarray's lock also turns interrupts off and xa_destroy() holds it for
 * the whole array.
 */
static void ioband_groups_free(struct ioband_device *d)
{
	struct ioband_group *g;
	unsigned long idx;

	xa_for_each(&d->groups, idx, g) {
		xa_erase(&d->groups, idx);
		ioband_group_destroy(g);
		cond_resched();
	}
}

static void ioband_dtr(struct dm_target *ti)
{
	struct ioband_device *d = ti->private;
	struct ioband_dg *dg = d->dg;

	mutex_lock(&dg->conf_lock);
	/* no group may be freed while another is its child */
	if (d->type == IOBAND_TYPE_CGROUP_TREE && d->live)
		ioband_walk_groups(d, ioband_group_unlink, NULL);
	ioband_walk_groups(d, ioband_group_retire, NULL);
	ioband_lock_irq(dg);
	ioband_lease_leave(dg, &d->def, ktime_get_ns());
	ioband_group_leave(d, &d->def);
	if (d->live)
		list_del(&d->dg_node);
	ioband_unlock_irq(dg);
	dg->nr_entities -= d->nr_groups + 1;
	mutex_unlock(&dg->conf_lock);

	ioband_groups_free(d);
	dm_put_device(ti, d->dev);
	ioband_dg_put(dg);
	free_percpu(d->def.pcpu);
	free_percpu(d->lookup);
	kfree(d);
}

/* The minimum bandwidths of @d's groups, in KB/s.  conf_lock held. */
static u64 ioband_device_min_sum(struct ioband_device *d)
{
	lockdep_assert_held(&d->dg->conf_lock);
	return d->min_sum;
}

/*
 * The minimum bandwidths of the live devices of @dg but those of mapped
 * device @skip (whose table a new one is replacing), in KB/s.  conf_lock
 * held: minimums change only under it.
 */
static u64 ioband_dg_min_sum(struct ioband_dg *dg, struct mapped_device *skip)
{
	struct ioband_device *d;
	u64 sum = 0;

	lockdep_assert_held(&dg->conf_lock);
	list_for_each_entry(d, &dg->devices, dg_node)
		if (dm_table_get_md(d->ti->table) != skip)
			sum += ioband_device_min_sum(d);
	return sum;
}

/*
 * Whether a mapped device other than @md has a live table in @dg: then
 * the device group's settings are theirs too.  conf_lock held.
 */
static bool ioband_dg_shared(struct ioband_dg *dg, struct mapped_device *md)
{
	struct ioband_device *d;

	lockdep_assert_held(&dg->conf_lock);
	list_for_each_entry(d, &dg->devices, dg_node)
		if (dm_table_get_md(d->ti->table) != md)
			return true;
	return false;
}

/*
 * May a table of mapped device @md with device group settings @c and
 * minimums adding up to @min_sum go live in @dg now?  Its settings must be
 * the device group's while another device of it is live (resuming must
 * not change theirs), and the minimums of all live devices must fit the
 * device group's bandwidth.  conf_lock held.
 */
static int ioband_may_go_live(struct ioband_dg *dg, struct mapped_device *md,
			      const struct ioband_dg_conf *c, u64 min_sum,
			      char **error)
{
	const struct ioband_dg_conf *now = &dg->sched.conf;

	if (!ioband_dg_shared(dg, md))
		return ioband_check_min_sum(c, min_sum, error);
	*error = NULL;
	if (c->policy != now->policy)
		*error = "policy differs from the device group's: change it by message";
	else if (c->io_throttle != now->io_throttle)
		*error = "io_throttle differs from the device group's: change it by message";
	else if (c->io_limit != now->io_limit)
		*error = "io_limit differs from the device group's: change it by message";
	else if (c->token_base != now->token_base)
		*error = "token_base differs from the device group's: change it by message";
	else if (c->bandwidth != now->bandwidth)
		*error = "bandwidth differs from the device group's: change it by message";
	else if (memcmp(&c->model, &now->model, sizeof(c->model)))
		*error = "cost model differs from the device group's: change it by message";
	if (*error)
		return -EINVAL;
	return ioband_check_min_sum(now, ioband_dg_min_sum(dg, md) + min_sum,
				    error);
}

/*
 * ioband directly on ioband in one device group would wait on itself: the
 * upper device's bios count against io_limit while the lower one holds
 * them, and the lower one's wait for those very slots.  Only devices
 * stacked directly are seen: device-mapper exports no way to walk the
 * tables of the devices in between.  Checked at load and again at resume,
 * since only live devices are on the device group's list.
 */
static char *ioband_check_stack(struct ioband_dg *dg,
				const struct ioband_device *d)
{
	struct ioband_device *o;

	lockdep_assert_held(&dg->conf_lock);
	list_for_each_entry(o, &dg->devices, dg_node) {
		if (o->devt == d->dev->bdev->bd_dev)
			return "the device below is an ioband device of the same device group";
		if (o->dev->bdev->bd_dev == d->devt)
			return "an ioband device of the same device group lies on this device";
	}
	return NULL;
}

/*
 * Sets up @d's groups outside the scheduler; they join it when the table
 * is resumed.  Refuses a table that could not go live as it stands.
 */
static int ioband_join(struct ioband_device *d, const struct ioband_table *t,
		       char **error)
{
	struct ioband_dg *dg = d->dg;
	u64 min_sum = t->def.min_kbps;
	u32 i;
	int r;

	for (i = 0; i < t->nr_groups; i++)
		min_sum += t->groups[i].min_kbps;
	mutex_lock(&dg->conf_lock);
	*error = ioband_check_stack(dg, d);
	r = *error ? -EINVAL :
		     ioband_may_go_live(dg, dm_table_get_md(d->ti->table),
					&t->dg, min_sum, error);
	if (r)
		goto out;
	*error = "out of memory";
	r = ioband_dg_reserve(dg, t->nr_groups + 1);
	if (r)
		goto out;
	ioband_lock_irq(dg);
	ioband_group_init(d, &d->def, &t->def);
	ioband_unlock_irq(dg);
	dg->nr_entities++;
	r = ioband_attach(d, t->groups, t->nr_groups);
	if (r)
		dg->nr_entities--;
out:
	mutex_unlock(&dg->conf_lock);
	return r;
}

/*
 * <device> <device_group_id> <io_throttle> <io_limit> <group_type>
 * <policy> <token_base> [:<default>] [<group_id>:<value>]...
 */
static int ioband_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct ioband_table t = { };
	struct ioband_device *d;
	char *error;
	int r;

	if (argc < 1) {
		ti->error = "missing device";
		return -EINVAL;
	}
	t.groups = ioband_alloc(IOBAND_ALLOC_TABLE,
				kvcalloc(argc, sizeof(*t.groups), GFP_KERNEL));
	d = ioband_alloc(IOBAND_ALLOC_DEVICE, kzalloc(sizeof(*d), GFP_KERNEL));
	if (d) {
		d->def.pcpu = ioband_alloc(IOBAND_ALLOC_DEVICE,
					   alloc_percpu(struct ioband_group_pcpu));
		d->lookup = ioband_alloc(IOBAND_ALLOC_DEVICE,
					 alloc_percpu(struct ioband_lookup_cache));
		d->groups_gen = 1;
	}
	if (!t.groups || !d || !d->def.pcpu || !d->lookup) {
		ti->error = "out of memory";
		r = -ENOMEM;
		goto bad;
	}
	r = ioband_parse_table(argc - 1, argv + 1, &t, &error);
	if (!r)
		r = ioband_check_type(t.type, &error);
	if (r) {
		ti->error = error;
		goto bad;
	}
	r = dm_get_device(ti, argv[0], dm_table_get_mode(ti->table), &d->dev);
	if (r) {
		ti->error = "device lookup failed";
		goto bad;
	}
	/*
	 * A zone takes its writes in order; holding one group's write while
	 * another group's goes to the same zone would break that order.
	 */
	if (bdev_is_zoned(d->dev->bdev)) {
		ti->error = "zoned devices are not supported (holding breaks zone write order)";
		r = -EINVAL;
		goto bad_dev;
	}
	d->dg = ioband_dg_get(t.dg_name, &t.dg);
	if (!d->dg) {
		ti->error = "out of memory";
		r = -ENOMEM;
		goto bad_dev;
	}
	d->ti = ti;
#ifdef IOBAND_OUT_OF_TREE
	d->md = dm_table_get_md(ti->table);
	d->disk = dm_disk(d->md);
#endif
	d->devt = disk_devt(dm_disk(dm_table_get_md(ti->table)));
	d->type = t.type;
	d->table_conf = t.dg;
	/*
	 * The xarray's lock nests inside dg->lock, which end_io takes in
	 * interrupt context: it must never be taken with interrupts on.
	 */
	xa_init_flags(&d->groups, XA_FLAGS_LOCK_IRQ);
	r = ioband_join(d, &t, &error);
	if (r) {
		ti->error = error;
		goto bad_dg;
	}
	kvfree(t.groups);

	ti->private = d;
	ti->num_flush_bios = 1;
	ti->num_discard_bios = 1;
	ti->num_write_zeroes_bios = 1;
	ti->per_io_data_size = sizeof(struct ioband_bio);
	ti->accounts_remapped_io = true;
	return 0;

bad_dg:
	ioband_dg_put(d->dg);
bad_dev:
	dm_put_device(ti, d->dev);
bad:
	if (d) {
		free_percpu(d->def.pcpu);
		free_percpu(d->lookup);
	}
	kfree(d);
	kvfree(t.groups);
	return r;
}

/* ---- suspend and resume -------------------------------------------------- */

/* Releases everything this device holds and lets new bios pass. */
static void ioband_presuspend(struct dm_target *ti)
{
	struct ioband_device *d = ti->private;
	struct ioband_dg *dg = d->dg;

	ioband_lock_irq(dg);
	d->passthrough = true;
	ioband_lease_revoke_all(dg, ktime_get_ns());
	ioband_release_group(d, &d->def, NULL);
	ioband_unlock_irq(dg);
	ioband_walk_groups(d, ioband_release_group, NULL);
	/* a sleeper of this device may pass now */
	ioband_wake_all(dg);
	ioband_kick(dg);
}

static void ioband_presuspend_undo(struct dm_target *ti)
{
	struct ioband_device *d = ti->private;

	ioband_lock_irq(d->dg);
	d->passthrough = false;
	ioband_unlock_irq(d->dg);
	ioband_kick(d->dg);
}

/*
 * A table about to be resumed for the first time: the device group may
 * have changed since it was loaded (a message, another device's table).
 */
static int ioband_preresume(struct dm_target *ti)
{
	struct ioband_device *d = ti->private;
	struct mapped_device *md = dm_table_get_md(ti->table);
	struct ioband_dg *dg = d->dg;
	char *error;
	int r = 0;

	mutex_lock(&dg->conf_lock);
	if (!d->live) {
		error = ioband_check_stack(dg, d);
		r = error ? -EINVAL :
			    ioband_may_go_live(dg, md, &d->table_conf,
					       ioband_device_min_sum(d), &error);
	}
	mutex_unlock(&dg->conf_lock);
	if (r)
		DMERR("%s: table not resumed: %s", dm_device_name(md), error);
	return r;
}

/* dg->lock held */
static void ioband_group_join(struct ioband_device *d, struct ioband_group *g,
			      void *unused)
{
	lockdep_assert_held(&d->dg->lock);
	ioband_entity_join(&d->dg->sched, &g->ent);
}

/*
 * @d's groups join the scheduler, a batch at a time: the device is
 * suspended until resume returns, so no bio of it meets a group that has
 * not joined yet.  A device alone in its device group brings its table's
 * settings; else they are the group's already (ioband_may_go_live()).
 * conf_lock held.
 */
static void ioband_go_live(struct ioband_device *d)
{
	struct ioband_dg *dg = d->dg;

	lockdep_assert_held(&dg->conf_lock);
	ioband_lock_irq(dg);
	if (!ioband_dg_shared(dg, dm_table_get_md(d->ti->table))) {
		/* a table line has no carryover: keep the one in force */
		d->table_conf.carryover = dg->sched.conf.carryover;
		ioband_dg_set_conf(dg, &d->table_conf);
	}
	ioband_group_join(d, &d->def, NULL);
	ioband_unlock_irq(dg);
	ioband_walk_groups(d, ioband_group_join, NULL);
	ioband_lock_irq(dg);
	list_add_tail(&d->dg_node, &dg->devices);
	d->live = true;
	ioband_unlock_irq(dg);
	ioband_tree_relink(d);
}

static void ioband_resume(struct dm_target *ti)
{
	struct ioband_device *d = ti->private;
	struct ioband_dg *dg = d->dg;

	mutex_lock(&dg->conf_lock);
	if (!d->live)
		ioband_go_live(d);
	ioband_lock_irq(dg);
	d->passthrough = false;
	ioband_unlock_irq(dg);
	mutex_unlock(&dg->conf_lock);
	ioband_kick(dg);
}

/* ---- messages ------------------------------------------------------------ */

static struct ioband_group *ioband_find_group(struct ioband_device *d, s64 id)
{
	if (id == IOBAND_DEFAULT_GROUP)
		return &d->def;
	return xa_load(&d->groups, id);
}

/*
 * The limits @conf names for @g; the bios waiting for them see the new
 * ones at once.  dg->lock held.
 */
static void ioband_group_change_limits(struct ioband_dg *dg,
				       struct ioband_group *g,
				       const struct ioband_group_conf *conf)
{
	u64 now = ktime_get_ns();

	lockdep_assert_held(&dg->lock);
	ioband_group_set_limits(g, conf, now);
	ioband_limit_cancel(&dg->sched, &g->ent);
	ioband_limit_feed(dg, g, now, now);
}

/*
 * "weight" and "range-bw": a group's share or its bandwidth range, and
 * the limits they name; "limit": the limits alone.
 */
static int ioband_msg_group(struct ioband_device *d,
			    const struct ioband_msg *msg, char **error)
{
	const struct ioband_group_conf *conf = &msg->group;
	struct ioband_dg *dg = d->dg;
	struct ioband_group *g;
	int r = 0;

	ioband_lock_irq(dg);
	ioband_lease_revoke_all(dg, ktime_get_ns());
	g = ioband_find_group(d, conf->id);
	if (!g) {
		*error = "no such group";
		r = -ENOENT;
	} else if (msg->kind == IOBAND_MSG_LIMIT) {
		/* below, as for the others */
	} else if (msg->kind == IOBAND_MSG_WEIGHT) {
		ioband_entity_set_weight(&dg->sched, &g->ent, conf->weight);
	} else {
		r = ioband_check_min_sum(&dg->sched.conf,
					 ioband_dg_min_sum(dg, NULL) -
					 g->ent.min_kbps + conf->min_kbps,
					 error);
		if (!r) {
			d->min_sum = d->min_sum - g->ent.min_kbps +
				     conf->min_kbps;
			ioband_entity_set_range(&dg->sched, &g->ent,
						conf->min_kbps, conf->max_kbps,
						ktime_get_ns());
		}
	}
	if (!r && conf->limits_given)
		ioband_group_change_limits(dg, g, conf);
	ioband_unlock_irq(dg);
	return r;
}

static int ioband_msg_attach(struct ioband_device *d, s64 id,
			     char **error)
{
	struct ioband_group_conf conf = {
		.id = id, .weight = IOBAND_DEFAULT_WEIGHT,
	};
	int r;

	if (ioband_check_group_id(d->type, id, error))
		return -EINVAL;
	if (xa_load(&d->groups, id)) {
		*error = "group already attached";
		return -EEXIST;
	}
	if (d->nr_groups >= IOBAND_MAX_GROUPS) {
		*error = "too many groups (at most 65536)";
		return -ENOSPC;
	}
	r = ioband_dg_reserve(d->dg, 1);
	if (!r)
		r = ioband_attach(d, &conf, 1);
	if (r)
		*error = "out of memory";
	return r;
}

static int ioband_msg_type(struct ioband_device *d, enum ioband_group_type type,
			   char **error)
{
	if (ioband_check_type(type, error))
		return -EINVAL;
	if (d->nr_groups) {
		*error = "detach all groups before changing the group type";
		return -EBUSY;
	}
	ioband_lock_irq(d->dg);
	WRITE_ONCE(d->type, type);
	ioband_unlock_irq(d->dg);
	return 0;
}

/* dg->lock held */
static void ioband_reset_stats(struct ioband_device *d, struct ioband_group *g,
			       void *unused)
{
	int cpu;

	lockdep_assert_held(&d->dg->lock);
	memset(&g->stats, 0, sizeof(g->stats));
	spin_lock(&g->lat_lock);
	memset(&g->lat, 0, sizeof(g->lat));
	spin_unlock(&g->lat_lock);
	for_each_possible_cpu(cpu)
		memset(&per_cpu_ptr(g->pcpu, cpu)->stats, 0, sizeof(g->stats));
}

static void ioband_msg_reset(struct ioband_device *d)
{
	ioband_lock_irq(d->dg);
	ioband_reset_stats(d, &d->def, NULL);
	ioband_unlock_irq(d->dg);
	ioband_walk_groups(d, ioband_reset_stats, NULL);
}

static int ioband_msg_setting(struct ioband_device *d,
			      const struct ioband_msg *msg, char **error)
{
	struct ioband_dg *dg = d->dg;
	struct ioband_dg_conf conf = dg->sched.conf;
	int r;

	if (ioband_dg_conf_update(&conf, msg, error))
		return -EINVAL;
	ioband_lock_irq(dg);
	r = ioband_check_min_sum(&conf, ioband_dg_min_sum(dg, NULL), error);
	if (!r)
		ioband_dg_set_conf(dg, &conf);
	ioband_unlock_irq(dg);
	return r;
}

static int ioband_apply_msg(struct ioband_device *d,
			    const struct ioband_msg *msg, char **error)
{
	switch (msg->kind) {
	case IOBAND_MSG_WEIGHT:
	case IOBAND_MSG_RANGE_BW:
	case IOBAND_MSG_LIMIT:
		return ioband_msg_group(d, msg, error);
	case IOBAND_MSG_TYPE:
		return ioband_msg_type(d, msg->type, error);
	case IOBAND_MSG_ATTACH:
		return ioband_msg_attach(d, msg->group.id, error);
	case IOBAND_MSG_DETACH:
		if (ioband_detach(d, msg->group.id)) {
			*error = "no such group";
			return -ENOENT;
		}
		return 0;
	case IOBAND_MSG_RESET:
		ioband_msg_reset(d);
		return 0;
	default:
		return ioband_msg_setting(d, msg, error);
	}
}

static void ioband_emit_latency(struct ioband_device *d, char *result,
				unsigned int maxlen);

static int ioband_message(struct dm_target *ti, unsigned int argc,
			  char **argv, char *result, unsigned int maxlen)
{
	struct ioband_device *d = ti->private;
	struct ioband_dg *dg = d->dg;
	struct ioband_msg msg = { };
	char *error;
	int r;

	r = ioband_parse_message(argc, argv, &msg, &error);
	if (!r && msg.kind == IOBAND_MSG_LATENCY) {
		/* a question, not a change: no conf_lock, nothing to kick */
		ioband_emit_latency(d, result, maxlen);
		return 1;
	}
	if (!r) {
		mutex_lock(&dg->conf_lock);
		r = ioband_apply_msg(d, &msg, &error);
		mutex_unlock(&dg->conf_lock);
	}
	if (r) {
		/*
		 * At most 32 characters of the message's name: a kernel log
		 * record holds about 1000, and a longer name pushed the
		 * reason out of it.
		 */
		DMERR("%s: message \"%.32s\" refused: %s",
		      dm_device_name(dm_table_get_md(ti->table)),
		      argc ? argv[0] : "", error);
		return r;
	}
	ioband_kick(dg);
	return 0;
}

/* ---- status -------------------------------------------------------------- */

/* Where status writes, and what it knows of the table. */
struct ioband_emit {
	char *result;
	unsigned int maxlen;
	unsigned int sz;
	enum ioband_policy policy;
};

/* A group's counters.  dg->lock held, so that they agree with each other. */
static void ioband_emit_stats(struct ioband_device *d, struct ioband_group *g,
			      void *arg)
{
	struct ioband_emit *em = arg;
	struct ioband_stats sum = g->stats, *st = &sum;
	char *result = em->result;
	unsigned int maxlen = em->maxlen, sz = em->sz;
	int cpu;

	lockdep_assert_held(&d->dg->lock);
	/* with what each CPU counted of leased bios (see 14.) */
	for_each_possible_cpu(cpu) {
		const struct ioband_stats *c = &per_cpu_ptr(g->pcpu, cpu)->stats;

		sum.reads += c->reads;
		sum.read_sectors += c->read_sectors;
		sum.writes += c->writes;
		sum.write_sectors += c->write_sectors;
	}
	DMEMIT(" %lld %llu %llu %llu %llu %llu %llu", g->id, st->reads,
	       st->delayed_reads, st->read_sectors, st->writes,
	       st->delayed_writes, st->write_sectors);
	em->sz = sz;
}

/* "/<kind>=<rate>,...[,burst=<ms>]": @g's limits as a table line has them */
static void ioband_emit_limits(const struct ioband_group *g, char *result,
			       unsigned int maxlen, unsigned int *size)
{
	const struct ioband_limit *lim = g->limits.lim;
	unsigned int sz = *size;
	char sep = '/';
	int k;

	for (k = 0; k < IOBAND_NR_LIMITS; k++) {
		if (!lim[k].rate)
			continue;
		DMEMIT("%c%s=%llu", sep, ioband_limit_name(k), lim[k].rate);
		sep = ',';
	}
	if (lim[0].burst_ns)
		DMEMIT(",burst=%llu", div_u64(lim[0].burst_ns, NSEC_PER_MSEC));
	*size = sz;
}

/* A group as a table line gives it: weights, or ranges under range-bw. */
static void ioband_emit_group_conf(struct ioband_device *d,
				   struct ioband_group *g, void *arg)
{
	struct ioband_emit *em = arg;
	char *result = em->result;
	unsigned int maxlen = em->maxlen, sz = em->sz;

	lockdep_assert_held(&d->dg->lock);
	if (g->id != IOBAND_DEFAULT_GROUP)
		DMEMIT(" %lld", g->id);
	else
		DMEMIT(" ");
	if (em->policy == IOBAND_POLICY_RANGE_BW)
		DMEMIT(":%u:%u", g->ent.min_kbps, g->ent.max_kbps);
	else
		DMEMIT(":%u", g->ent.weight);
	if (g->limited)
		ioband_emit_limits(g, result, maxlen, &sz);
	em->sz = sz;
}

/*
 * The table line; its settings are read once, so that every group is
 * written in the same policy's terms even if a message changes it while
 * the groups are written (a batch at a time, see ioband_walk_groups()).
 */
static void ioband_emit_table(struct ioband_device *d, struct ioband_emit *em)
{
	struct ioband_dg *dg = d->dg;
	struct ioband_dg_conf c;
	char *result = em->result;
	unsigned int maxlen = em->maxlen, sz;

	ioband_lock_irq(dg);
	c = d->live ? dg->sched.conf : d->table_conf;
	em->policy = c.policy;
	sz = em->sz;
	DMEMIT("%s %s %u %u %s %s %u", d->dev->name, dg->name,
	       c.io_throttle, c.io_limit, ioband_type_name(d->type),
	       ioband_policy_name(c.policy), c.token_base);
	em->sz = sz;
	ioband_emit_group_conf(d, &d->def, em);
	ioband_unlock_irq(dg);
	ioband_walk_groups(d, ioband_emit_group_conf, em);
	sz = em->sz;
	if (c.bandwidth)
		DMEMIT(" bandwidth=%u", c.bandwidth);
	if (ioband_model_given(&c.model)) {
		enum ioband_model_param p;

		for (p = 0; p < IOBAND_MODEL_NR_PARAMS; p++)
			DMEMIT(" %s=%llu", ioband_model_param_name(p),
			       c.model.param[p]);
	}
	em->sz = sz;
}

/*
 * Each group's counters agree with each other, but two groups' may come
 * from instants apart: the groups are written a batch at a time, so that
 * interrupts are not off for as long as 65536 groups take to format.
 */
static void ioband_emit_info(struct ioband_device *d, struct ioband_emit *em)
{
	struct ioband_dg *dg = d->dg;
	char *result = em->result;
	unsigned int maxlen = em->maxlen, sz = em->sz;

	DMEMIT("%s", dg->name);
	em->sz = sz;
	ioband_lock_irq(dg);
	ioband_emit_stats(d, &d->def, em);
	ioband_unlock_irq(dg);
	ioband_walk_groups(d, ioband_emit_stats, em);
}

static u64 ioband_lat_us(const struct ioband_lat *l,
			 enum ioband_lat_kind kind, u32 pct)
{
	return DIV_ROUND_UP_ULL(ioband_lat_percentile(l, kind, pct),
				NSEC_PER_USEC);
}

/* A group's latency line (see 12.), in microseconds.  dg->lock held. */
static void ioband_emit_group_latency(struct ioband_device *d,
				      struct ioband_group *g, void *arg)
{
	struct ioband_emit *em = arg;
	struct ioband_lat *l = &g->lat;
	char *result = em->result;
	unsigned int maxlen = em->maxlen, sz = em->sz;

	lockdep_assert_held(&d->dg->lock);
	spin_lock(&g->lat_lock);
	ioband_lat_age(l, ktime_get_ns());
	DMEMIT("%lld %u %llu %llu %llu %llu\n", g->id,
	       ioband_lat_count(l, IOBAND_LAT_WAIT),
	       ioband_lat_us(l, IOBAND_LAT_WAIT, 50),
	       ioband_lat_us(l, IOBAND_LAT_WAIT, 99),
	       ioband_lat_us(l, IOBAND_LAT_DEV, 50),
	       ioband_lat_us(l, IOBAND_LAT_DEV, 99));
	spin_unlock(&g->lat_lock);
	em->sz = sz;
}

/*
 * The answer to "latency": a line per group, the default group first and
 * the others in status's order, a batch of groups at a time as status.
 */
static void ioband_emit_latency(struct ioband_device *d, char *result,
				unsigned int maxlen)
{
	struct ioband_emit em = { .result = result, .maxlen = maxlen };
	struct ioband_dg *dg = d->dg;

	if (maxlen)
		result[0] = '\0';
	ioband_lock_irq(dg);
	ioband_emit_group_latency(d, &d->def, &em);
	ioband_unlock_irq(dg);
	ioband_walk_groups(d, ioband_emit_group_latency, &em);
}

static void ioband_status(struct dm_target *ti, status_type_t type,
			  unsigned int status_flags, char *result,
			  unsigned int maxlen)
{
	struct ioband_device *d = ti->private;
	struct ioband_dg *dg = d->dg;
	struct ioband_emit em = { .result = result, .maxlen = maxlen };
	struct ioband_dg_conf c;
	unsigned int sz = 0, nr_groups;

	switch (type) {
	case STATUSTYPE_INFO:
		ioband_emit_info(d, &em);
		break;
	case STATUSTYPE_TABLE:
		ioband_emit_table(d, &em);
		break;
	case STATUSTYPE_IMA:
		ioband_lock_irq(dg);
		c = dg->sched.conf;
		nr_groups = d->nr_groups;
		ioband_unlock_irq(dg);
		DMEMIT_TARGET_NAME_VERSION(ti->type);
		DMEMIT(",device_name=%s,device_group=%s,group_type=%s,policy=%s",
		       d->dev->name, dg->name, ioband_type_name(d->type),
		       ioband_policy_name(c.policy));
		DMEMIT(",io_throttle=%u,io_limit=%u,token_base=%u,carryover=%u",
		       c.io_throttle, c.io_limit, c.token_base, c.carryover);
		DMEMIT(",groups=%u;", nr_groups + 1);
		break;
	}
}

static int ioband_iterate_devices(struct dm_target *ti,
				  iterate_devices_callout_fn fn, void *data)
{
	struct ioband_device *d = ti->private;

	return fn(ti, d->dev, 0, ti->len, data);
}

/*
 * ioband neither changes nor splits a bio's data, and remaps it whole to
 * one device: an integrity payload and an inline encryption context stay
 * valid below, as they do through dm-linear.
 */
static struct target_type ioband_target = {
	.name = "ioband",
	.version = {2, 1, 0},
	.features = DM_TARGET_PASSES_INTEGRITY | DM_TARGET_PASSES_CRYPTO |
		    DM_TARGET_NOWAIT,
	.module = THIS_MODULE,
	.ctr = ioband_ctr,
	.dtr = ioband_dtr,
	.map = ioband_map,
	.end_io = ioband_end_io,
	.presuspend = ioband_presuspend,
	.presuspend_undo = ioband_presuspend_undo,
	.preresume = ioband_preresume,
	.resume = ioband_resume,
	.status = ioband_status,
	.message = ioband_message,
	.iterate_devices = ioband_iterate_devices,
};

static int __init dm_ioband_init(void)
{
	int r;

	if (ioband_policy_abi() != IOBAND_ABI) {
		DMERR("dm-ioband-policy is from another build (%#x, not %#x)",
		      ioband_policy_abi(), IOBAND_ABI);
		return -EINVAL;
	}
	ioband_fault_init();
	r = dm_register_target(&ioband_target);
	if (r < 0) {
		DMERR("register failed %d", r);
		ioband_fault_exit();
	}
	return r;
}

static void __exit dm_ioband_exit(void)
{
	dm_unregister_target(&ioband_target);
	/* groups freed after a grace period (ioband_group_destroy()) */
	rcu_barrier();
	ioband_fault_exit();
}

module_init(dm_ioband_init);
module_exit(dm_ioband_exit);

MODULE_DESCRIPTION(DM_NAME " target sharing a device's bandwidth among groups");
MODULE_AUTHOR("dm-ioband developers");
MODULE_LICENSE("GPL");

# SPDX-License-Identifier: GPL-2.0
# bench/report section: buffered writeback (bench/vm/65-writeback.sh).
# Sourced by bench/report (sections 5) with its helpers in scope.

# iocost's model in MiB/s (runs before the setting existed: 8)
WB_IOC=$(get wb.iocost_mibs)
WB_IOC=${WB_IOC:-8}
# wb_label CASE: the row's name
wb_label() {
	case $1 in
	none) echo "none (raw null_blk)" ;;
	bfq) echo "BFQ (raw null_blk)" ;;
	iocost) echo "iocost as it comes, automatic model (raw null_blk)" ;;
	iocost-model) echo "iocost, model $WB_IOC MiB/s, vrate 100 % (raw null_blk)" ;;
	ioband) echo "ioband (dm device)" ;;
	bfq-below-dm) echo "dm-linear, BFQ on the null_blk below" ;;
	iocost-below-dm) echo "dm-linear, iocost on the null_blk below" ;;
	iocost-model-below-dm) echo "dm-linear, iocost (model $WB_IOC MiB/s, vrate 100 %) on the null_blk below" ;;
	iocost-on-dm) echo "dm-linear, iocost (model $WB_IOC MiB/s, vrate 100 %) enabled on the dm device" ;;
	linear) echo "dm-linear (dm device, no control)" ;;
	esac
}
# wb_cell LOAD CASE: "share % (error) | MiB/s (a / b MiB)" or "not measured"
wb_cell() {
	local k=wb.$1.$2
	if has "$k.share"; then
		printf '%s %% (%s) | %s (%s / %s)' "$(get "$k.share")" \
			"$(calc "\"%+.1f\", $(get "$k.share") - 75")" "$(get "$k.mibs")" \
			"$(get "$k.a_mib")" "$(get "$k.b_mib")"
	else
		printf 'not measured | '
	fi
}
# wb_na CTL: why CTL (bfq, iocost) was not measurable, if it was not
wb_na() { has "wb.na.$1" && get "wb.na.$1" | tr '_' ' '; return 0; }

if has wb.settings; then
	cat <<EOT

## Buffered writeback$(has time.65-writeback && printf ' (%s s)' "$(get time.65-writeback)")

\`bench/vm/65-writeback.sh\`, grown from the tests 40-stack-writeback and
40-stack-fsync.  Two cgroups, a weighted 300 and b 100 (aim: 75 % of the
disk's bytes for a), write through ext4 on a memory-backed null_blk limited
to 8 MiB/s (\`mbps=8\`, \`max_sectors=128\`).  *fdatasync*: 8 writers per
cgroup rewrite their own 2 MiB files (64 KiB writes, \`fdatasync\`).
*flusher*: one plain writer per cgroup writes new 4 MiB files,
vm.dirty_bytes 16 MiB, background 4 MiB, so that the kernel's flusher
threads write the data back.  Counted: each cgroup's \`wbytes\` in its
io.stat line for the null_blk (what reached the disk for it) over a window
of $(get wb.window) s after a warm-up of $(get wb.warm) s (fdatasync) or
$(get wb.fwarm) s (flusher: its dirty throttling follows each cgroup's
writeback bandwidth, which takes seconds to settle after a change).  ioband: type cgroup,
weight-iosize, \`io_limit 2\`, default token_base.  iocost: \`io.weight\`,
\`io.cost.qos enable=1\`, once as it comes (its automatic model and QoS)
and once with \`io.cost.model\` set to $WB_IOC MiB/s
(\`ctrl=user model=linear\`, that many MiB/s and 256 IOPS per MiB/s both
ways, so that an I/O costs its pages) and \`io.cost.qos\` fixing its rate
there (\`ctrl=user rpct=0 wpct=0 min=100.00 max=100.00\`).  The automatic
model takes the null_blk for a fast SSD; iocost gives a cgroup's unused
budget to the others and binds only once the device is busy by its model,
and the null_blk delivers 4-8 MiB/s under TCG, not its nominal 8: with the
model at 8 MiB/s, QoS automatic or vrate fixed, two full runs measured
44-54 % for a in every iocost case.  BFQ: \`io.bfq.weight\`,
its defaults.  The controllers change under the running load.  io.stat
counts a bio when it is submitted to the null_blk: below ioband when ioband
releases it, under BFQ and iocost before they hold it (at most their
queue's worth of difference over a window).  MiB/s: both
cgroups' bytes over the window (a / b: each one's MiB); under TCG the
guest's CPU and other work on the host move it.

| controller | fdatasync: a's share (vs 75) | fdatasync: MiB/s (a / b MiB) | flusher: a's share (vs 75) | flusher: MiB/s (a / b MiB) |
|---|---|---|---|---|
EOT
	for c in none bfq iocost-model iocost linear ioband bfq-below-dm iocost-below-dm iocost-model-below-dm iocost-on-dm; do
		has "wb.fdatasync.$c.share" || has "wb.flusher.$c.share" || continue
		echo "| $(wb_label $c) | $(wb_cell fdatasync $c) | $(wb_cell flusher $c) |"
	done
	echo
	for c in bfq iocost; do
		r=$(wb_na $c)
		[ -n "$r" ] && echo "$c: not measurable: $r."
	done
	has wb.dm.scheduler &&
		echo "BFQ on the dm device itself: not measurable: after \`bfq\` is written to its scheduler file, the file reads \`$(get wb.dm.scheduler | tr '_' ' ')\` (a bio-based device has no I/O scheduler)."
	case $(get wb.dm.iocost_enable) in
	refused) echo "iocost on the dm device itself: not measurable: \`io.cost.qos\` refused \`enable=1\` for it." ;;
	model_refused) echo "iocost on the dm device itself: not measurable: \`io.cost.model\` refused the linear model for it." ;;
	esac
	has wb.na.iocost_model && echo "iocost with a model: not measurable: $(get wb.na.iocost_model | tr '_' ' ')."
fi

if has wb.fs.linear.max_ms || has wb.fs.ioband.max_ms; then
	cat <<EOT

### fsync latency under a buffered flood

ext4 on a memory-backed null_blk limited to 16 MiB/s (queue depth 8).
Cgroup flood (weight 1) rewrites 16 MiB files in a loop; once 16 MiB of
it has reached the disk, cgroup sync (weight 1000) writes 16 KiB and fsyncs
it, $(get wb.fs_rounds) times, each timed in the guest, the start of
\`dd\` included.  BFQ and iocost (\`io.bfq.weight\`, \`io.weight\`, the
model set to $((WB_IOC * 2)) MiB/s, vrate 100 %) act on the raw null_blk, where jbd2's journal
writes come from the root cgroup, which neither lets one weight;
dm-linear and ioband (type cgroup, weight-iosize, \`io_limit 8\`, the default
group, where the journal's writes land, at weight 1) on a dm device over it.

| controller | median fsync ms | max fsync ms |
|---|---|---|
EOT
	for c in linear ioband bfq iocost; do
		has "wb.fs.$c.max_ms" || continue
		wb_l=$(wb_label $c)
		[ $c = iocost ] && wb_l="iocost, model $((WB_IOC * 2)) MiB/s, vrate 100 % (raw null_blk)"
		echo "| $wb_l | $(get "wb.fs.$c.median_ms") | $(get "wb.fs.$c.max_ms") |"
	done
	for c in bfq iocost; do
		r=$(wb_na $c)
		[ -n "$r" ] && echo && echo "$c: not measurable: $r."
	done
fi
return 0

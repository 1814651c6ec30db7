# SPDX-License-Identifier: GPL-2.0
# bench/report section: limits of io.max's kinds against io.max
# (bench/vm/66-limits.sh, issue 17).  Sourced by bench/report (sections 7)
# with its helpers in scope.

if has lim.settings; then
	read -r -a LCAP <<<"$(get lim.caps | tr / ' ')"
	cat <<EOT

## Limits of io.max's kinds against io.max (issue 17)$(has time.66-limits && printf ' (%s s)' "$(get time.66-limits)")

\`bench/vm/66-limits.sh\`: cgroups a, b and c, four psync jobs each of 4 KiB
random direct I/O, on a null_blk without completion delay, so that the
limits bind and not the device: a under a bytes limit of 400 KiB/s, b under
an IOPS limit of 100, c under both kinds at once (200 KiB/s and 200 IOPS,
the bytes binding), each in the load's direction (\`rbps\`, \`riops\`; \`wbps\`,
\`wiops\`).  ioband (type cgroup, policy weight with the limits in its table:
\`$(get lim.table | tr _ ' ')\`) and then dm-linear with
blk-throttle's \`io.max\` for the same cgroups, on one dm device under one
load.  I/Os a second that left the controller (the null_blk's io.stat)
over the window, and the most over any span of a second or more (counts
every 0.25 s, each read between two clock readings and the span taken at
its longest: a figure above the limit is above it for certain).
Goal: within 2 % of the limit over the window and never above it over any
second.  Settings: $(settings lim.settings).

| direction | cgroup (limit, IOPS) | ioband | ioband, most in 1 s | io.max | io.max, most in 1 s |
|---|---|---|---|---|---|
EOT
	for d in read write; do
		i=0
		for g in a b c; do
			k=lim.$d
			has "$k.ioband.$g.iops" || { i=$((i + 1)); continue; }
			c=${LCAP[$i]}
			row="| $d | $g ($c) |"
			for ctl in ioband iomax; do
				v=$(get "$k.$ctl.$g.iops") m=$(get "$k.$ctl.$g.max1s")
				row+=" $v ($(err_pct "$v" "$c") %: $(yes_no "$(abs1 "$(err_pct "$v" "$c")")" '<=' 2)) | $m ($(yes_no "$m" '<=' "$c")) |"
			done
			echo "$row"
			i=$((i + 1))
		done
	done
	if has lim.light.linear.p99; then
		cat <<EOT

A light reader under a limit it stays below (\`rbps\` 4000 KiB/s; one psync
job, 1 ms of think time, slow null_blk of 100 us): completion latency in
us.  Goal: p99 at most 1.2 times the same reader's without a limit.  And a
greedy reader under \`rbps\` 400 KiB/s: the longest gap between two
completions.

| target | p50 | p99 | IOPS | p99 over no limit |
|---|---|---|---|---|
EOT
		for ctl in linear ioband iomax; do
			has "lim.light.$ctl.p99" || continue
			case $ctl in
			linear) label="dm-linear, no limit" ;;
			ioband) label="ioband, rbps limit" ;;
			iomax) label="dm-linear + io.max rbps" ;;
			esac
			r=$(calc "\"%.2f\", $(get "lim.light.$ctl.p99") / $(get lim.light.linear.p99)")
			g=
			[ $ctl = linear ] || g=" ($(yes_no "$r" '<=' 1.2))"
			echo "| $label | $(get "lim.light.$ctl.p50") | $(get "lim.light.$ctl.p99") | $(get "lim.light.$ctl.iops") | $r$g |"
		done
		echo
		for ctl in ioband iomax; do
			has "lim.greedy.$ctl.gap_ms" || continue
			echo "Greedy reader, $ctl: $(get "lim.greedy.$ctl.iops") IOPS (the limit allows 100), longest gap $(get "lim.greedy.$ctl.gap_ms") ms."
			echo
		done
	fi
fi

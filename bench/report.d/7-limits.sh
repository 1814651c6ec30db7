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
load, in the \`-icount\` boot (guest time counts instructions, so the host's
load stalls neither the limits nor the measurement).  Each group's fio works
in its own third of the device.  I/Os a second that left the controller
over the window of 10 s (the null_blk's io.stat), and the fewest and the
most that left it within any half-open second (the null_blk's
\`block_bio_queue\` trace events, whose sectors name the group).  A limit
of r a second spaces I/Os 1/r apart: r in a second, one more or one fewer
when the dispatch of one I/O at the second's edge was a few microseconds
late against the other's (a pacer whose I/Os go 1 % closer than the limit puts r + 2 in a
second at 100 a second).  Goal: within 2 % of the limit over the window
and over every second (at least 98 % of r I/Os in a second), and never
above it over any second (at most r + 1 I/Os).  Settings: $(settings lim.settings).

| direction | cgroup (limit, IOPS) | ioband, 10 s | ioband, fewest and most in 1 s | io.max, 10 s | io.max, fewest and most in 1 s |
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
				f=$(get "$k.$ctl.$g.min1s")
				row+=" $v ($(err_pct "$v" "$c") %: $(yes_no "$(abs1 "$(err_pct "$v" "$c")")" '<=' 2))"
				row+=" | $f, $m ($(yes_no "$f" '>=' "$(calc "\"%.2f\", 0.98 * $c")"), $(yes_no "$m" '<=' "$((c + 1))")) |"
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

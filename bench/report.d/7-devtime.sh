# SPDX-License-Identifier: GPL-2.0
# bench/report section: device time on the model device
# (bench/vm/70-devtime.sh, issue 13).  Sourced by bench/report (sections 7)
# with its helpers in scope.

dt_label() {
	case $1 in
	linear) echo "dm-linear" ;;
	weight) echo "ioband weight" ;;
	weight-time) echo "ioband weight-time" ;;
	weight-time-model) echo "ioband weight-time, true model" ;;
	bfq) echo "BFQ" ;;
	iocost-model) echo "iocost, true model, vrate 100 %" ;;
	iocost) echo "iocost, automatic" ;;
	esac
}
# dt_ref CTL: the window a controller's throughput is set against
dt_ref() { echo linear; }
dt_title() {
	case $1 in
	ssd-wlow) echo "ssd, weights 4:2:1, reads in a and b, writes in c (the lowest)" ;;
	ssd-whigh) echo "ssd, weights 4:2:1, writes in a (the highest), reads in b and c" ;;
	disk-seqrand) echo "disk, weights 1:1, a sequential psync reader (a) against a random one (b)" ;;
	ssd-4k256k) echo "ssd, weights 1:1, 4 KiB readers (a) against 256 KiB readers (b)" ;;
	ssd-change) echo "ssd, weights 4:2:1, reads in a and b, writes in c; then the writes' cost doubles" ;;
	depth-1) echo "ssd, weights 4:2:1, 4 KiB random readers: 1, 4 and 16 psync jobs" ;;
	depth-*) echo "ssd, weights 4:2:1, 4 KiB random readers: 1, 4 and 16 jobs at libaio iodepth ${1#depth-}" ;;
	*) echo "$1" ;;
	esac
}
# a group's spec "weight:rw:bs:jobs:iodepth" in words
dt_spec() {
	echo "$1" | awk -F: '{ printf "weight %s, %s %s, %s job%s%s", $1, $3, $2, $4,
		($4 > 1 ? "s" : ""), ($5 > 1 ? ", libaio iodepth " $5 : ", psync") }'
}

if has dt.settings; then
	cat <<EOT

## Device time on the model device (issue 13)$(has time.70-devtime && printf ' (%s s)' "$(get time.70-devtime)")

\`bench/vm/70-devtime.sh\`, in the $([ "$(get dt.icount)" = 1 ] && echo "\`-icount\` boot (guest time counts instructions: these figures repeat)" || echo "TCG boot (not under \`-icount\`: host load moves these figures)").
Each case runs on its own model device (tests/modeldev, \`iobmodel.ko\`),
which counts the time it is busy with each cgroup's requests.  **Share** is
each group's busy time on the device over the window divided by the
device's total busy time (the device's own attribution, not throughput
ratios); the target is the group's weight over the busy groups' weights.
ioband (type cgroup, $(settings dt.settings | sed 's/window [^,]*, settle [^,]*, //')) acts on a dm device over the model
device, its live table swapped under one load: dm-linear, \`weight\`
(counts I/Os), \`weight-time\` (device time), and \`weight-time\` given
the model's true parameters as its cost model (the \`rbps=\` ...
\`wrandiops=\` options, the same as iocost's below; not for the disk,
whose seeks a linear model does not hold).  Under a second load on the
model device itself (scheduler none but for BFQ): BFQ
(\`io.bfq.weight\`, its defaults), iocost with \`io.cost.model\` set to the
model's true parameters (\`ctrl=user model=linear\`, below) and its rate
fixed (\`io.cost.qos ctrl=user rpct=0 wpct=0 min=100.00 max=100.00\`):
iocost's best case, and iocost as it comes (\`enable=1\`, automatic model
and QoS); \`io.weight\` as the weights.  No controller on the model
device itself divides it as dm-linear does (the device is the limit):
dm-linear is every row's reference.  $(settings dt.settings | sed 's/, io_throttle.*//; s/settle \([0-9.]*\)/settle \1 s/').
The target is the weight's share, except where group a cannot use its
share alone (by more than a point: dm-linear's busy time with a alone):
then a's target is what it uses alone and the others divide the rest by
weight (max-min fairness).
**busy**: the device's busy time over channels × window (near 100 %: the
device, not the guest's CPU, is what is shared); **CPU**: the guest CPU's
busy time over the window (1 vCPU).  Throughput is set against dm-linear
on the same device: device busy time,
the measure of the goal (a scheduler giving more time to cheaper requests
raises IOPS without using the device better), and IOPS.
EOT
	DT_SUM=()
	for cs in $(get dt.cases | tr ',' ' '); do
		P=dt.$cs
		has "$P.groups" || continue
		IFS=, read -r -a SP <<<"$(get "$P.groups")"
		GS=(a b c)
		GS=("${GS[@]:0:${#SP[@]}}")
		wsum=0
		for s in "${SP[@]}"; do wsum=$((wsum + ${s%%:*})); done
		TG=()
		for s in "${SP[@]}"; do TG+=("$(calc "\"%.1f\", 100 * ${s%%:*} / $wsum")"); done
		# max-min: a group a that cannot use its share alone (more than
		# a point short) gets what it uses alone, the rest share the rest
		mm=
		cap=$(get "$P.linear-alone.busy")
		if [ -n "$cap" ] && awk -v c="$cap" -v t="${TG[0]}" 'BEGIN { exit !(c < t - 1) }'; then
			w0=${SP[0]%%:*}
			TG[0]=$cap
			i=1
			for s in "${SP[@]:1}"; do
				TG[$i]=$(calc "\"%.1f\", (100 - $cap) * ${s%%:*} / ($wsum - $w0)")
				i=$((i + 1))
			done
			mm=", max-min: a alone keeps the device $cap % busy"
		fi
		gl=$(echo "${GS[*]}" | sed 's| | / |g')
		echo
		echo "### $(dt_title "$cs") (targets $(echo "${TG[*]}" | sed 's| | / |g') %$mm)"
		echo
		echo "Profile $(get "$P.profile"), times × $(get "$P.scale"), $(get "$P.channels") channel(s).  Groups:"
		i=0
		for s in "${SP[@]}"; do echo "${GS[$i]}: $(dt_spec "$s")$([ $i -lt $((${#SP[@]} - 1)) ] && echo ';' || echo '.')"; i=$((i + 1)); done
		echo "iocost's true model: \`$(get "$P.model" | tr '_' ' ')\`."
		echo
		echo "| controller | device-time share $gl % | error (points) | max error | I/O share $gl % | IOPS | MiB/s | busy % | busy vs ref | IOPS vs ref | CPU % |"
		echo "|---|---|---|---|---|---|---|---|---|---|---|"
		for c in linear weight weight-time weight-time-model bfq iocost-model iocost; do
			k=$P.$c
			has "$k.iops" || continue
			ds= es= ios= em=0
			i=0
			for g in "${GS[@]}"; do
				d=$(get "$k.dt.$g")
				e=$(calc "\"%+.1f\", $d - ${TG[$i]}")
				ds+="${ds:+ / }$d" es+="${es:+ / }$e" ios+="${ios:+ / }$(get "$k.io.$g")"
				em=$(printf '%s\n' "$em" "$(abs1 "$e")" | sort -g | tail -n1)
				i=$((i + 1))
			done
			r=$(dt_ref "$c")
			bref= iref=
			if has "$P.$r.busy"; then
				bref=$(pct "$(get "$k.busy")" "$(get "$P.$r.busy")")
				iref=$(pct "$(get "$k.iops")" "$(get "$P.$r.iops")")
			fi
			echo "| $(dt_label "$c") | $ds | $es | $em | $ios | $(get "$k.iops") | $(get "$k.mibs") | $(get "$k.busy") | ${bref:+$bref %} | ${iref:+$iref %} | $(get "$k.cpu") |"
			extra=
			if [ "$cs" = disk-seqrand ] && has "$P.$r-alone.iops"; then
				kept=$(pct "$(get "$k.ios.a")" "$(calc "\"%.0f\", $(get "$P.$r-alone.iops") * $(get "$k.secs")")")
				extra="seq reader kept $kept % of alone: $(yes_no "$kept" '>=' 40)"
			fi
			if [ "$c" = "$r" ]; then
				DT_SUM+=("| $cs | $(dt_label "$c") (no control) | $em | | (ref) | | $extra |")
			else
				DT_SUM+=("| $cs | $(dt_label "$c") | $em | $(yes_no "$em" '<=' 2) | ${bref:+$bref %} | ${bref:+$(yes_no "$bref" '>=' 95)} | $extra |")
			fi
		done
		echo
		la=$(get "$P.linear-alone.iops") wa=$(get "$P.weight-time-alone.iops")
		if [ -n "$la" ] && [ -n "$wa" ]; then
			lr=$(pct "$wa" "$la")
			echo "Group a alone: $la IOPS under dm-linear (busy $(get "$P.linear-alone.busy") %), $wa under weight-time (busy $(get "$P.weight-time-alone.busy") %): **$lr %** (goal >= 97 %: $(yes_no "$lr" '>=' 97))."
			DT_SUM+=("| $cs | ioband weight-time, a alone | | | $lr % of dm-linear's IOPS | $(yes_no "$lr" '>=' 97) (>= 97 %) | |")
		fi
		if [ "$cs" = ssd-change ]; then
			cat <<EOT
After the window above, the model device's \`write_base_ns\` and
\`write_per_kib_ns\` double under the running load (a 4 KiB write then
costs $(calc "\"%.2f\", 2 * 4.48 * $(get "$P.scale") / 10") ms); each group's share of the device time in every second after,
and over the second half of the $(get dt.after) s.  iocost keeps the model of before.
Goal: back within 2 points within 5 s.

| controller | worst error each second after the change (points) | last second off by more than 2 | seconds $(( $(get dt.after) / 2 ))-$(get dt.after): shares $gl % | error (points) | goal <= 2 |
|---|---|---|---|---|---|
EOT
			for c in linear weight weight-time weight-time-model bfq iocost-model iocost; do
				k=$P.$c.after
				has "$k.series" || continue
				errs= last=0
				for e in $(get "$k.series" | tr ';' ' '); do
					t=${e%%:*}
					IFS=, read -r -a v <<<"${e#*:}"
					em=0
					for i in "${!v[@]}"; do
						em=$(printf '%s\n' "$em" "$(abs1 "$(calc "\"%.1f\", ${v[$i]} - ${TG[$i]}")")" | sort -g | tail -n1)
					done
					errs+="${errs:+, }$em"
					awk -v x="$em" 'BEGIN { exit !(x > 2) }' && last=$t
				done
				ds= es= em=0
				i=0
				for g in "${GS[@]}"; do
					d=$(get "$k.dt.$g")
					e=$(calc "\"%+.1f\", $d - ${TG[$i]}")
					ds+="${ds:+ / }$d" es+="${es:+ / }$e"
					em=$(printf '%s\n' "$em" "$(abs1 "$e")" | sort -g | tail -n1)
					i=$((i + 1))
				done
				echo "| $(dt_label "$c") | $errs | $([ "$last" = 0 ] && echo none || echo "${last} s") | $ds | $es | $(yes_no "$em" '<=' 2) |"
				DT_SUM+=("| $cs | $(dt_label "$c"), seconds $(( $(get dt.after) / 2 ))-$(get dt.after) after the change | $em | $(yes_no "$em" '<=' 2) | | | last second off by > 2: $([ "$last" = 0 ] && echo none || echo "${last} s") ($(awk -v x="$last" 'BEGIN { exit !(x <= 5) }' && echo met || echo '**missed**') <= 5 s) |")
			done
			echo
		fi
		if [ "$cs" = disk-seqrand ] && [ -n "$la" ]; then
			echo "\"Kept\": the sequential reader's I/Os in the window over what it did alone under dm-linear in as long."
		fi
	done
	if [ ${#DT_SUM[@]} -gt 0 ]; then
		echo
		echo "### Against the goals (issue 13)"
		echo
		echo "Every group within 2 points of its share of device time; device busy time at least 95 % of the reference's under contention; a lone group's IOPS at least 97 % of dm-linear's."
		echo
		echo "| case | controller | worst error (points) | goal <= 2 | throughput vs ref | goal | |"
		echo "|---|---|---|---|---|---|---|"
		printf '%s\n' "${DT_SUM[@]}"
	fi
fi
return 0

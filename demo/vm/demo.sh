#!/bin/bash
# make demo, the guest side: ioband over an emulated slow disk, three cgroups
# weighted 400:200:100 each running 8 fio jobs of 4 KiB random direct
# reads; every second, each group's throughput from `dmsetup status` as a
# bar, then a summary of target against achieved share.
#
# Lines for the user start with @@DEMO (demo/run shows them as they come);
# "@@DATA sample T IOPS_A IOPS_B IOPS_C" lines feed demo/run's chart.
# timeout: 300
. /tests/lib.sh

SECS=20
for a in $(</proc/cmdline); do
	case $a in demo.seconds=*) SECS=${a#*=} ;; esac
done
# The table's io_throttle, io_limit and token_base, as in the benchmarks
# (bench/README.md).
THROTTLE=0 LIMIT=128 TOKEN=256
GROUPS_=(a b c)
WEIGHTS=(400 200 100)
BAR=50		# columns for 100 %

say() { echo "@@DEMO $*"; }

# An emulated slow disk: null_blk completing each request after 100 us from
# a timer, 4 requests at a time.
nb=$(nullb_create demo0 4096 100000 4)
sz=$(blockdev --getsz "$nb")
ids=()
for g in "${GROUPS_[@]}"; do
	cg_create "$g" >/dev/null
	ids+=("$(stat -c %i "$CG_ROOT/$g")")
done
table="0 $sz ioband $nb demo $THROTTLE $LIMIT cgroup weight $TOKEN :100"
for i in 0 1 2; do table+=" ${ids[$i]}:${WEIGHTS[$i]}"; done
dev=$(dm_create demo "$table")

say "ioband over $nb (null_blk: 100 us per request, queue depth 4), as $dev:"
say "  $table"
for i in 0 1 2; do
	say "  cgroup /sys/fs/cgroup/${GROUPS_[$i]} (id ${ids[$i]}): weight ${WEIGHTS[$i]}"
done
say "starting fio in each cgroup: 8 psync jobs, 4 KiB random direct reads ..."

for g in "${GROUPS_[@]}"; do
	cg_run "$g" fio --name="$g" --filename="$dev" --direct=1 --rw=randread \
		--bs=4k --ioengine=psync --numjobs=8 --time_based --runtime=3600 \
		--norandommap --randrepeat=0 --group_reporting --eta=never \
		--output=/dev/null </dev/null >/dev/null 2>&1 &
done
on_exit "for g in ${GROUPS_[*]}; do echo 1 > $CG_ROOT/\$g/cgroup.kill; done; sleep 1"
# The fio jobs keep the guest's CPUs busy: let this shell, which only
# samples and prints, run first when it wakes (fio keeps its own priority).
renice -n -20 -p $$ >/dev/null 2>&1
# A sleep without starting a program: read with a timeout on a FIFO that
# nobody writes.
mkfifo "$TESTDIR/tick"
exec 9<>"$TESTDIR/tick"
nap() { # microseconds
	[ "$1" -gt 0 ] || return 0
	local w
	printf -v w '%d.%06d' $(($1 / 1000000)) $(($1 % 1000000))
	read -r -t "$w" -u 9 _
	return 0
}

# COUNT[i]: I/Os (reads + writes) of group i so far, from dmsetup status:
# <start> <len> ioband <dg> then per group <id> reads delayed_reads
# read_sectors writes delayed_writes write_sectors.
sample() {
	local -a s
	local i j
	read -r -a s <<<"$(dmsetup status demo)"
	for i in 0 1 2; do
		COUNT[$i]=0
		for ((j = 4; j + 6 < ${#s[@]}; j += 7)); do
			[ "${s[$j]}" = "${ids[$i]}" ] && COUNT[$i]=$((s[j + 1] + s[j + 4]))
		done
	done
	local t=$EPOCHREALTIME
	NOW=$(( ${t%.*} * 1000000 + 10#${t#*.} ))
}

# Wait until all 24 jobs run and every group has done I/O.
t=0
while :; do
	sample
	n=0
	for g in "${GROUPS_[@]}"; do
		mapfile -t p <"$CG_ROOT/$g/cgroup.procs"
		[ ${#p[@]} -ge 9 ] && n=$((n + 1))
	done
	[ $n = 3 ] && [ "${COUNT[0]}" -gt 0 ] && [ "${COUNT[1]}" -gt 0 ] && [ "${COUNT[2]}" -gt 0 ] && break
	t=$((t + 1))
	[ $t -lt 240 ] || fail "fio did not start"
	nap 500000
done
say "all 24 jobs running; sampling dmsetup status every second for $SECS s"
say ""

pct10() { # n total -> REPLY = percent x 10
	REPLY=0
	[ "$2" -gt 0 ] && REPLY=$(( (1000 * $1 + $2 / 2) / $2 ))
}
bar() { # width
	local s
	printf -v s '%*s' "$1" ''
	REPLY=${s// /#}
}

sample
first=("${COUNT[@]}") t_first=$NOW
prev=("${COUNT[@]}") t_prev=$NOW
for ((sec = 1; sec <= SECS; sec++)); do
	# sample on the wall clock's seconds since the first sample
	nap $((t_first + sec * 1000000 - ${EPOCHREALTIME/./}))
	sample
	dt=$((NOW - t_prev))
	el=$(( (NOW - t_first + 50000) / 100000 ))
	tot=0
	for i in 0 1 2; do
		d[$i]=$((COUNT[i] - prev[i]))
		tot=$((tot + d[i]))
	done
	lines=()
	data="$((el / 10)).$((el % 10))"
	for i in 0 1 2; do
		iops=$(( (d[i] * 1000000 + dt / 2) / dt ))
		pct10 "${d[$i]}" "$tot"
		p=$REPLY
		bar $(( (p * BAR + 500) / 1000 ))
		lbl=
		[ $i = 0 ] && lbl=$((el / 10)).$((el % 10))s
		printf -v l '%6s  %s w%-3s |%-*s| %5d IOPS %3d.%d %%' \
			"$lbl" "${GROUPS_[$i]}" "${WEIGHTS[$i]}" \
			"$BAR" "$REPLY" "$iops" $((p / 10)) $((p % 10))
		say "$l"
		data+=" $iops"
	done
	printf -v l '        total %d IOPS' $(( (tot * 1000000 + dt / 2) / dt ))
	say "$l"
	report sample "$data"
	prev=("${COUNT[@]}") t_prev=$NOW
done

# Summary over the whole sampled time.
dt=$((NOW - t_first))
tot=0
wsum=0
for i in 0 1 2; do
	d[$i]=$((COUNT[i] - first[i]))
	tot=$((tot + d[i]))
	wsum=$((wsum + WEIGHTS[i]))
done
say ""
say "summary over $((dt / 1000000)).$((dt / 100000 % 10)) s:"
say "  group  weight  target %  achieved %  error (points)   IOPS"
worst=0
for i in 0 1 2; do
	tg=$(( (1000 * WEIGHTS[i] + wsum / 2) / wsum ))
	pct10 "${d[$i]}" "$tot"
	ac=$REPLY
	e=$((ac - tg))
	ae=${e#-}
	[ "$ae" -gt "$worst" ] && worst=$ae
	sign=+
	[ $e -lt 0 ] && sign=-
	printf -v l '  %-5s  %6d  %8s  %10s  %14s  %5d' "${GROUPS_[$i]}" "${WEIGHTS[$i]}" \
		"$((tg / 10)).$((tg % 10))" "$((ac / 10)).$((ac % 10))" \
		"$sign$((ae / 10)).$((ae % 10))" $(( (d[i] * 1000000 + dt / 2) / dt ))
	say "$l"
	report "summary.${GROUPS_[$i]}" "${WEIGHTS[$i]} $tg $ac"
done
say "  total IOPS $(( (tot * 1000000 + dt / 2) / dt )); largest error $((worst / 10)).$((worst % 10)) points"
report summary.total_iops $(( (tot * 1000000 + dt / 2) / dt ))
report summary.worst_error "$((worst / 10)).$((worst % 10))"
say ""
say "dmsetup status demo:"
say "  $(dmsetup status demo)"

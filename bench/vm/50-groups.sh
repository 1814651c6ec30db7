#!/bin/bash
# Scenario 4, many groups (seed 003), for tests/vm/run --icount --smp 1:
# ioband of type cgroup with N = 1, 16, 64, 256, 1024 configured groups
# (bench.groups) and BUSY = 64 busy fio jobs (bench.busy), psync 4 KiB
# random direct reads.  Job i runs in cgroup mg(i mod N): with fewer groups
# than jobs every group holds BUSY/N jobs, with more the first BUSY groups
# are busy and the rest configured and idle.  Group j weighs 100 * (1 + j
# mod 4).  One fio, started once per device; its jobs move between the
# cgroups and the table is swapped live between the runs.
#
#   cost:     a null_blk without completion delay, so the guest's one CPU
#             is the bottleneck and, under -icount, 10^9 / IOPS is the
#             guest instructions per I/O (whole stack); dm-linear before
#             and after the ioband runs for reference, and 1 group once
#             more at the end.
#   accuracy: a null_blk completing after 1 ms, queue depth 4, so the
#             device is the bottleneck: each busy group's I/Os over a
#             window, against its weight's share.
#   messages: how long `dmsetup message DEV 0 weight ID:W` takes (the
#             whole dmsetup command; median of 5) on the accuracy device
#             under its load, and how long the table swap took.
#
# Keys: mg.settings, mg.cost.linear.K.iops, mg.cost.N.iops,
# mg.cost.1-again.iops,
# mg.cost.N.held, mg.acc.N.ios (comma list, busy group order),
# mg.acc.N.secs, mg.acc.N.held,
# mg.msg.N.usecs, mg.load.N.usecs.
# timeout: 1500
. /tests/lib.sh
. /tests/t/bench.inc

GROUPS_LIST=$(bparam groups "1,16,64,256,1024")
BUSY=$(bparam busy 64)
WIN=$(bparam gwin 3)
AWIN=$(bparam gawin 5)

max=1
for n in ${GROUPS_LIST//,/ }; do [ "$n" -gt $max ] && max=$n; done
report mg.settings "groups=$GROUPS_LIST,busy=$BUSY,window=${WIN}s,acc_window=${AWIN}s,io_throttle=$IOB_THROTTLE,io_limit=$IOB_LIMIT,token_base=$IOB_TOKEN"

# The cgroups: mgs, where fio starts, and mg0..mg(max-1), all at the root
# (window and load_start name cgroups by one path component).
cg_create mgs >/dev/null
MG=()
for ((j = 0; j < max; j++)); do MG+=("$CG_ROOT/mg$j"); done
mkdir "${MG[@]}" || fail "mkdir of $max cgroups"
on_exit "rmdir ${MG[*]}"
mapfile -t IDS < <(stat -c %i "${MG[@]}")
[ ${#IDS[@]} = "$max" ] || fail "cgroup ids: ${#IDS[@]} of $max"
weight() { REPLY=$((100 * (1 + $1 % 4))); }

# table_for DEV NAME N: the ioband table with groups mg0..mg(N-1)
table_for() {
	local t j sz
	sz=$(blockdev --getsz "$1")
	t="0 $sz ioband $1 $2 $IOB_THROTTLE $IOB_LIMIT cgroup weight $IOB_TOKEN :100"
	for ((j = 0; j < $3; j++)); do
		weight $j
		t+=" ${IDS[j]}:$REPLY"
	done
	REPLY=$t
}

WORKERS=()
# start_load DEV: BUSY fio jobs in mgs; WORKERS: their pids (not fio's
# main process, which does no I/O and stays in mgs)
start_load() {
	local i=0 p ppid rest
	local -a procs
	load_start mgs "$1" randread 4k "$BUSY"
	while :; do
		mapfile -t procs <"$CG_ROOT/mgs/cgroup.procs"
		[ ${#procs[@]} -gt "$BUSY" ] && break
		i=$((i + 1))
		[ $i -lt 600 ] || fail "fio started ${#procs[@]} of $((BUSY + 1)) processes in 120 s"
		sleep 0.2
	done
	WORKERS=()
	for p in "${procs[@]}"; do
		read -r _ _ _ ppid rest <"/proc/$p/stat" || continue
		[[ " ${procs[*]} " == *" $ppid "* ]] && WORKERS+=("$p")
	done
	[ ${#WORKERS[@]} = "$BUSY" ] || fail "found ${#WORKERS[@]} fio jobs of $BUSY"
}

# spread N: job i into mg(i mod N); BUSYCG: the busy cgroups, in order;
# their .jobs files say how many jobs each holds, for window
BUSYCG=()
spread() {
	local n=$1 i j nb
	nb=$((n < BUSY ? n : BUSY))
	BUSYCG=()
	for ((j = 0; j < nb; j++)); do
		BUSYCG+=("mg$j")
		# window waits for more processes than this: the jobs less one
		echo $((BUSY / nb + (j < BUSY % nb ? 1 : 0) - 1)) >"$TESTDIR/.jobs.mg$j"
	done
	for ((i = 0; i < BUSY; i++)); do
		echo "${WORKERS[i]}" >"$CG_ROOT/mg$((i % n))/cgroup.procs" ||
			fail "moving fio job ${WORKERS[i]} to mg$((i % n))"
	done
	# no process left in fio's own cgroup but fio's main process
	echo 0 >"$TESTDIR/.jobs.mgs"
}

# usecs_of CMD...: REPLY = microseconds the command took
usecs_of() {
	local t0
	usecs
	t0=$REPLY
	"$@" || fail "$*"
	usecs
	REPLY=$((REPLY - t0))
}

# held_all DMNAME: REPLY = percent of all the device's bios (every group's)
# that ioband held rather than passed at once, from dmsetup status
held_all() {
	local -a s
	local i n=0 h=0
	read -r -a s <<<"$(dmsetup status "$1")" || fail "dmsetup status $1"
	for ((i = 4; i + 6 < ${#s[@]}; i += 7)); do
		n=$((n + s[i + 1] + s[i + 4]))
		h=$((h + s[i + 2] + s[i + 5]))
	done
	pct "$h" "$n"
}

median_of() { # values...
	REPLY=$(printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
}

# ---- cost -------------------------------------------------------------------
fnb=$(fast_nullb mgf0)
fsz=$(blockdev --getsz "$fnb")
LIN="0 $fsz linear $fnb 0"
fdev=$(dm_create mgf "$LIN")
start_load "$fdev"
spread 1
window "$WIN" "$fdev" "${BUSYCG[@]}"
report mg.cost.linear.1.iops "$W_IOPS"
log "cost: dm-linear $W_IOPS IOPS"
for n in ${GROUPS_LIST//,/ }; do
	spread "$n"
	table_for "$fnb" mgf "$n"
	dm_swap mgf "$REPLY"
	dmsetup message mgf 0 reset || fail "reset mgf"
	window "$WIN" "$fdev" "${BUSYCG[@]}"
	report "mg.cost.$n.iops" "$W_IOPS"
	held_all mgf
	report "mg.cost.$n.held" "$REPLY"
	log "cost: $n groups, ${#BUSYCG[@]} busy: $W_IOPS IOPS, held $REPLY %"
done
# 1 group again: does the cost depend on what ran before?
spread 1
table_for "$fnb" mgf 1
dm_swap mgf "$REPLY"
window "$WIN" "$fdev" "${BUSYCG[@]}"
report mg.cost.1-again.iops "$W_IOPS"
log "cost: 1 group again: $W_IOPS IOPS"
dm_swap mgf "$LIN"
window "$WIN" "$fdev" "${BUSYCG[@]}"
report mg.cost.linear.2.iops "$W_IOPS"
log "cost: dm-linear again $W_IOPS IOPS"
load_stop mgs "${BUSYCG[@]}"
for ((j = 0; j < max; j++)); do
	cg_busy "mg$j" && load_stop "mg$j"
done

# ---- accuracy and messages ---------------------------------------------------
snb=$(nullb_create mgs0 "$BENCH_SIZE_MB" 1000000 4)
ssz=$(blockdev --getsz "$snb")
sdev=$(dm_create mgd "0 $ssz linear $snb 0")
start_load "$sdev"
for n in ${GROUPS_LIST//,/ }; do
	spread "$n"
	table_for "$snb" mgd "$n"
	usecs_of dm_swap mgd "$REPLY"
	report "mg.load.$n.usecs" "$REPLY"
	dmsetup message mgd 0 reset || fail "reset mgd"
	window "$AWIN" "$sdev" "${BUSYCG[@]}"
	report "mg.acc.$n.secs" "$W_SECS"
	report "mg.acc.$n.ios" "$(IFS=,; echo "${W_IOS[*]:0:${#BUSYCG[@]}}")"
	held_all mgd
	report "mg.acc.$n.held" "$REPLY"
	[ "$W_TOTAL" -gt 0 ] || fail "$n groups: no I/O in the window"
	# weight messages to the last configured group: there and back
	last=$((n - 1))
	weight $last
	w=$REPLY
	t=()
	for k in 1 2 3 4 5; do
		usecs_of dmsetup message mgd 0 weight "${IDS[last]}:$((w + k))"
		t+=("$REPLY")
	done
	dmsetup message mgd 0 weight "${IDS[last]}:$w" || fail "weight back to $w"
	median_of "${t[@]}"
	report "mg.msg.$n.usecs" "$REPLY"
	# the message must have landed: the status names the group
	dmsetup status mgd | grep -q " ${IDS[last]} " || fail "group ${IDS[last]} not in the status"
	log "accuracy: $n groups: I/Os $(IFS=,; echo "${W_IOS[*]:0:${#BUSYCG[@]}}") in $W_SECS s; weight message $REPLY us"
done
load_stop mgs "${BUSYCG[@]}"
for ((j = 0; j < max; j++)); do
	cg_busy "mg$j" && load_stop "mg$j"
done
exit 0

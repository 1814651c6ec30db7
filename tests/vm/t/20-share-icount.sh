#!/bin/bash
# Weights 4:2:1 hold to the goal's 2 points, in a guest whose time counts
# instructions (-icount), so the figure repeats exactly whatever the host
# does.  Three cgroups of 4 psync 4 KiB random readers each on a null_blk
# that completes in 1 ms at depth 4 (4000 IOPS, well under what the guest's
# CPU can submit: the device is what is shared; checked below).
# icount: yes
# kernel: production
# smp: 1
# timeout: 240
. /tests/lib.sh

WINDOW=6	# seconds of guest time measured
nb=$(nullb_create shr0 256 1000000 4)
sz=$(blockdev --getsz "$nb")
declare -A id
for g in a b c; do
	cg_create "shr-$g" >/dev/null
	id[$g]=$(stat -c %i "$CG_ROOT/shr-$g")
done
dev=$(dm_create shr "0 $sz ioband $nb shrdg 0 0 cgroup weight 0 :100 ${id[a]}:400 ${id[b]}:200 ${id[c]}:100")

pids=()
for g in a b c; do
	cg_run "shr-$g" fio --name="$g" --filename="$dev" --rw=randread --bs=4k \
		--numjobs=4 --direct=1 --ioengine=psync --time_based \
		--runtime=$((WINDOW + 3)) --group_reporting \
		>"$TESTDIR/fio-$g.out" 2>&1 &
	pids+=($!)
done
# reads of group $1 since the last reset
reads() {
	dmsetup status shr | awk -v id="$1" '
		{ for (i = 5; i + 6 <= NF; i += 7) if ($i == id) print $(i + 1) + 0 }'
}
# every group reading before the window opens (bounded: the test's timeout)
for g in a b c; do
	until [ "$(reads "${id[$g]}")" -gt 100 ]; do
		alive "${pids[0]}" || fail "fio ended early: $(tail -n 3 "$TESTDIR/fio-a.out")"
		sleep 0.1
	done
done
dmsetup message shr 0 reset || fail "reset"
sleep $WINDOW	# the measured window (guest time)
total=0
declare -A n
for g in a b c; do
	n[$g]=$(reads "${id[$g]}")
	total=$((total + n[$g]))
done
for p in "${pids[@]}"; do wait "$p" || fail "fio failed"; done

iops=$((total / WINDOW))
log "reads a=${n[a]} b=${n[b]} c=${n[c]} total=$total ($iops IOPS)"
report share_icount.iops "$iops"
# The device is the limit: at least 90 % of its 4000 IOPS.
[ "$iops" -ge 3600 ] || fail "device not the limit: $iops IOPS of 4000"
# Shares in tenths of a point, against 571.4 / 285.7 / 142.9.
for g in a b c; do
	case $g in a) w=400 ;; b) w=200 ;; c) w=100 ;; esac
	got=$((n[$g] * 1000 / total))
	want=$((w * 1000 / 700))
	report "share_icount.$g" "$got"
	d=$((got - want))
	[ ${d#-} -le 20 ] ||
		fail "group $g (weight $w) got $((got / 10)).$((got % 10)) % of the reads, want $((want / 10)).$((want % 10)) within 2 points"
done
log "shares a=${n[a]} b=${n[b]} c=${n[c]} of $total: within 2 points of 4:2:1"

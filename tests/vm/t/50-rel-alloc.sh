#!/bin/bash
# Allocation failure: ioband's own fault attribute (fail_ioband in debugfs,
# built with CONFIG_FAULT_INJECTION_DEBUG_FS) fails one of ioband's
# allocations at a time and nobody else's: every allocation of four
# operations in turn (creating a device in a new device group, a second
# device in a live one, loading a table into the live device, an attach
# message), until the operation gets through.  Each failure reaches the
# caller as ENOMEM and changes nothing: no device, table or group is
# left, no device group's worker survives; every allocation site failed
# at least once (fail_ioband/sites).  Meanwhile a writer verifies its data
# through the live device at io_limit 1 on a slow disk, so bios are held
# throughout: ioband counts as many bios as fio issued and the device
# below completed.  fail_make_request then fails bios below ioband while
# bios are held: every submitter gets EIO, ioband counts each bio once
# (the device below never sees the failed ones: not compared there).
# Each bio ioband held it released once; kmemleak finds nothing of ours.
# Debian's 6.1 (the production kernel) has no CONFIG_FAULT_INJECTION:
# there the test is skipped, never passed.
# timeout: 1800
# append: kmemleak=on
. /tests/lib.sh
. /tests/t/rel.inc

DBG=/sys/kernel/debug
FI=$DBG/fail_ioband
FMR=$DBG/fail_make_request
if ! [ -d $FI ]; then
	[ -d $DBG/failslab ] || [ -d $FMR ] &&
		fail "the kernel injects faults, but ioband has no $FI"
	skip "no CONFIG_FAULT_INJECTION in this kernel: ioband's allocations cannot be failed"
fi
[ -d $FMR ] || skip "no fail_make_request in debugfs"

nb=$(nullb_create alloc0 64 2000000 2 1)
sz=$(blockdev --getsz "$nb")
spare=$(nullb_create alloc2 16 "" "" 0)
ssz=$(blockdev --getsz "$spare")
# io_limit 1 on a 2 ms disk: the writer's other bios wait in ioband
dev=$(dm_create alloc "0 $sz ioband $nb allocdg 0 1 user weight 2 :100 0:100 1000:10 1001:10 1002:10")
rel_below_prepare "$nb"
below0=$(rel_below_ios "$nb")
rel_trace_start
live=$(dmsetup table alloc)

rel_loop_start w timeout 180 fio --name=alloc --filename="$dev" --rw=randwrite \
	--bs=4k --size=256k --numjobs=4 --offset_increment=8m --direct=1 \
	--ioengine=psync --verify_fatal=1 --group_reporting
rel_wait_held alloc 3 "$(cat "$TESTDIR/loop-w/pid")"
held0=$(rel_held alloc)

on_exit "echo 0 > $FI/probability"
echo 0 >$FI/verbose
echo Y >$FI/task-filter
echo 1 >$FI/interval
echo 0 >$FI/probability
sites() { awk '{ printf " %s=%s", $1, $2 }' $FI/sites; }
sites0=$(sites)
# Tables are loaded into devices made without one, and messages sent, by
# dmmsg: one ioctl each, where a dmsetup would cost seconds on the debug
# kernel.
for n in fnew fsecond; do
	dmsetup create $n --notable || fail "dmsetup create $n --notable"
	on_exit "dmsetup remove --retry $n"
done
# A process costs a fork and an exec of half a second each on the debug
# kernel under TCG: the helpers below read files with bash's own read and
# fork no more than they must.
failing() { # [--load]: dmmsg with make-it-fail, the line on stdin
	(echo 1 >/proc/self/make-it-fail && exec dmmsg "$@") 2>&1
}
# A device group's workqueue has a rescuer thread (WQ_MEM_RECLAIM), named
# kioband/NAME (6.1) or kworker/R-kioband/NAME (6.12).
has_worker() {
	local f c
	for f in /proc/[0-9]*/comm; do
		read -r c 2>/dev/null <"$f" && [[ $c == *kioband/"$1" ]] && return 0
	done
	return 1
}
no_worker() {
	local i=0
	while has_worker "$1"; do
		i=$((i + 1))
		[ $i -lt 100 ] || return 1
		sleep 0.05
	done
}
tables() {
	local l
	while read -r l; do
		[[ $l =~ ^Tables\ present:[[:space:]]*(.*)$ ]] && echo "${BASH_REMATCH[1]}"
	done < <(dmsetup info "$1" 2>/dev/null)
}
# nothing left of a failed or undone operation
no_table() { [ "$(tables "$1")" = None ] && { [ -z "${2:-}" ] || no_worker "$2"; }; }
unchanged() {
	[ "$(dmsetup table alloc)" = "$live" ] && [ "$(tables alloc)" = LIVE ]
}
# walk NAME CHECK UNDO DMMSG_ARGS LINE: with space k, the k-th of ioband's
# allocations for LINE fails (space 1 and 0 both fail the first); k = 1,
# 2, ... until LINE gets through with none failed.  CHECK must hold after
# each failure and, after UNDO, after the success.
injected=0
walk() {
	local name=$1 check=$2 undo=$3 args=$4 line=$5 k=1 out rc left
	while :; do
		echo 1 >$FI/times
		echo $k >$FI/space
		echo 100 >$FI/probability
		# shellcheck disable=SC2086 # none or one word
		out=$(echo "$line" | failing $args)
		rc=$?
		echo 0 >$FI/probability
		read -r left <$FI/times
		if [ "$left" = 1 ]; then
			[ $rc = 0 ] || fail "$name: nothing failed at allocation $k, yet: $out"
			$undo >/dev/null || fail "$name: undoing it"
			$check || fail "$name: undone, it left something behind"
			break
		fi
		injected=$((injected + 1))
		[ $rc != 0 ] || fail "$name: allocation $k failed, yet the operation succeeded"
		case $out in
		*"Cannot allocate memory"*) ;;
		*) fail "$name: allocation $k failed, but the caller saw: $out" ;;
		esac
		$check || fail "$name: allocation $k failed and left a change: $(dmsetup ls; dmsetup table alloc)"
		k=$((k + 1))
		[ $k -le 64 ] || fail "$name: more than 64 allocations"
	done
	log "$name: each of its $((k - 1)) allocations failed once, cleanly; then it worked"
}
# (the worker of a device group that was made can be seen: the check can fail)
undo_fnew() { has_worker fnew || fail "no worker kioband/fnew seen"; dmsetup clear fnew; }
walk "a table in a new device group" "no_table fnew fnew" undo_fnew --load \
	"fnew 0 $ssz ioband $spare fnew 0 1 user weight 2 :100 1:10 2:10"
walk "a table in the live device group" "no_table fsecond" "dmsetup clear fsecond" --load \
	"fsecond 0 $ssz ioband $spare allocdg 0 1 user weight 2 :100 1:10"
walk "a table for the live device" unchanged "dmsetup clear alloc" --load \
	"alloc 0 $sz ioband $nb allocdg 0 1 user weight 2 :100 0:100 7:10"
walk "attach" unchanged "dmsetup message alloc 0 detach 777" "" "alloc attach 777"
sites1=$(sites)
log "failures injected at each site:$sites1 (before:$sites0)"
set -- $sites1
per_site=0
for s; do
	n=${s#*=}
	[ "$n" -gt 0 ] || fail "no failure was injected at allocation site ${s%=*}: its failure path was never taken"
	per_site=$((per_site + n))
done
assert_eq "$per_site" "$injected" "failures counted at the sites vs injected"
held=$(($(rel_held alloc) - held0))
[ "$held" -gt 0 ] || fail "no bio was held while allocations failed"
rel_loop_stop w
set -- "$LOOP_RUNS" "$LOOP_IOS"
bios=$2
counted=$(($(rel_sum alloc 1) + $(rel_sum alloc 4)))
assert_eq "$counted" "$bios" "bios counted by ioband vs issued by fio"
assert_eq "$(($(rel_below_ios "$nb") - below0))" "$bios" "I/Os completed below ioband vs issued by fio"
log "$injected allocations failed cleanly, $held bios held meanwhile, $bios bios counted once each"

# --- fail_make_request below ioband, with bios held -----------------------------
slow=$(nullb_create alloc1 64 2000000 1 1)
fdev=$(dm_create fmr "0 $(blockdev --getsz "$slow") ioband $slow fmrdg 0 1 none weight 1")
on_exit "echo 0 > $FMR/probability"
on_exit "echo 0 > /sys/block/$(basename "$slow")/make-it-fail"
echo 0 >$FMR/verbose
echo -1 >$FMR/times
echo 1 >$FMR/interval
echo 30 >$FMR/probability
subs=
for i in 1 2 3 4; do
	dd if=/dev/zero of="$fdev" bs=4k count=400 seek=$((i * 1024)) oflag=direct \
		2>"$TESTDIR/dd.$i" &
	subs="$subs $!"
done
rel_wait_held fmr 3 "${subs##* }"
echo 1 >"/sys/block/$(basename "$slow")/make-it-fail"
want=0
for i in 1 2 3 4; do
	p=$(echo $subs | cut -d' ' -f$i)
	rel_wait_gone "$p" 120 || fail "a submitter still runs 120 s after fail_make_request"
	wait "$p" && fail "submitter $i saw no error"
	grep -q "Input/output error" "$TESTDIR/dd.$i" || fail "no EIO: $(cat "$TESTDIR/dd.$i")"
	n=$(sed -n 's/^\([0-9]*\)+0 records out.*/\1/p' "$TESTDIR/dd.$i")
	want=$((want + ${n:-0} + 1))
done
echo 0 >"/sys/block/$(basename "$slow")/make-it-fail"
assert_eq "$(rel_sum fmr 4)" "$want" "bios counted by ioband vs issued"
dd if=/dev/zero of="$fdev" bs=4k count=8 oflag=direct status=none || fail "write after the faults"
log "fail_make_request: 4 submitters ended with EIO, $want bios counted once each"

holds=$(rel_trace_balance)
log "$holds bios held and released once each"
rel_kmemleak_check
report holds "$holds"
report alloc_failed "$injected"
report held_while_failing "$held"
report bios $((bios + want))

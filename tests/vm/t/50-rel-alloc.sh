#!/bin/bash
# Allocation failure (debug kernel): failslab fails the slab allocations of
# dmsetup's own calls (table loads with groups, device creation, attach
# messages) while a writer verifies its data through ioband: each call
# either works or fails with an error, and the device is then in the state
# that outcome says; ioband counts as many bios as fio issued and the
# device below completed.  fail_make_request then fails bios below ioband
# while bios are held: every submitter gets EIO, ioband counts each bio
# once (the device below never sees the failed ones: not compared there).
# Each bio ioband held it released once.
# kmemleak finds nothing of ours afterwards.
# timeout: 500
# append: kmemleak=on
. /tests/lib.sh
. /tests/t/rel.inc

rel_kernel debug || skip "failslab and fail_make_request are built into the debug kernel only"
FS=/sys/kernel/debug/failslab
FMR=/sys/kernel/debug/fail_make_request
[ -d $FS ] && [ -d $FMR ] || skip "no failslab or fail_make_request in debugfs"
ROUNDS=${REL_ROUNDS:-15}

nb=$(nullb_create alloc0 64 200000 2 1)
sz=$(blockdev --getsz "$nb")
table() { # groups from $1, $2 of them
	awk -v sz="$sz" -v nb="$nb" -v a="$1" -v n="$2" 'BEGIN {
		printf "0 %d ioband %s allocdg 0 4 user weight 2 :100", sz, nb
		for (i = a; i < a + n; i++) printf " %d:%d", i, i % 100 + 1
		print "" }'
}
dev=$(dm_create alloc "$(table 1000 10)")
rel_below_prepare "$nb"
below0=$(rel_below_ios "$nb")
rel_trace_start
live=$(dmsetup table alloc)

# failslab for the tasks that ask for it (task-filter), no console noise
on_exit "echo 0 > $FS/probability"
echo 0 >$FS/verbose
# GFP_KERNEL allocations too (ignore-gfp-wait is Y by default: only atomic
# ones would fail)
echo N >$FS/ignore-gfp-wait
echo Y >$FS/task-filter
echo -1 >$FS/times
echo 1 >$FS/interval
# 1 %: a dmsetup run makes a few hundred slab allocations (its exec
# included), so some calls get through and some fail
echo 1 >$FS/probability
failing() {
	sh -c 'echo 1 > /proc/self/make-it-fail && exec "$@"' failing "$@" >/dev/null 2>&1
}

rel_loop_start w timeout 180 fio --name=alloc --filename="$dev" --rw=randwrite \
	--bs=4k --size=2m --numjobs=2 --offset_increment=8m --direct=1 \
	--ioengine=psync --verify_fatal=1 --group_reporting

ok=0 failed=0
has_group() { dmsetup status alloc | awk -v id="$1" '{ for (i = 5; i <= NF; i += 7) if ($i == id) f = 1 } END { exit !f }'; }
for r in $(seq 1 "$ROUNDS"); do
	[ $((r % 5)) = 1 ] && log "round $r: $ok calls worked, $failed failed"
	# attach: present exactly when it succeeded
	id=$((50000 + r))
	if failing dmsetup message alloc 0 attach $id; then
		ok=$((ok + 1))
		has_group $id || fail "round $r: attach $id succeeded but the group is missing"
		dmsetup message alloc 0 detach $id || fail "round $r: detach $id"
	else
		failed=$((failed + 1))
		has_group $id && fail "round $r: attach $id failed but the group is there"
	fi
	# a table load with 200 groups: an inactive table exactly when it succeeded
	if failing dmsetup load alloc --table "$(table $((r * 1000)) 200)"; then
		ok=$((ok + 1))
		[ -n "$(dmsetup table --inactive alloc)" ] || fail "round $r: load succeeded, no inactive table"
		dmsetup clear alloc || fail "round $r: clear"
	else
		failed=$((failed + 1))
		[ -z "$(dmsetup table --inactive alloc)" ] ||
			fail "round $r: load failed but left an inactive table"
	fi
	assert_eq "$(dmsetup table alloc)" "$live" "round $r: live table"
	# a whole device: create, then remove whatever is left
	if failing dmsetup create alloc2 --table "$(table 1 20 | sed 's/allocdg/allocdg2/')"; then
		ok=$((ok + 1))
	else
		failed=$((failed + 1))
	fi
	dmsetup remove alloc2 >/dev/null 2>&1
	dmsetup info alloc2 >/dev/null 2>&1 && fail "round $r: alloc2 cannot be removed"
done
echo 0 >$FS/probability
log "failslab: $ok calls worked, $failed failed cleanly"
[ $failed -gt 0 ] || fail "failslab made nothing fail"
rel_loop_stop w
set -- "$LOOP_RUNS" "$LOOP_IOS"
bios=$2
counted=$(($(rel_sum alloc 1) + $(rel_sum alloc 4)))
assert_eq "$counted" "$bios" "bios counted by ioband vs issued by fio"
assert_eq "$(($(rel_below_ios "$nb") - below0))" "$bios" "I/Os completed below ioband vs issued by fio"

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
report calls_ok "$ok"
report calls_failed "$failed"
report bios $((bios + want))

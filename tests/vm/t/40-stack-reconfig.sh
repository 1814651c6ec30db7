#!/bin/bash
# Reconfiguration under a mounted, busy ext4 on ioband: weights changed by
# message, new tables loaded and swapped in (dmsetup load + suspend +
# resume, with other weights, io_limit and policy), plain suspend/resume
# with and without freezing the filesystem, while a writer fsyncs and a
# reader reads all along.  Afterwards every file checksums as written and
# e2fsck finds the filesystem clean.
# timeout: 180
. /tests/lib.sh
. /tests/t/stack.inc
require mkfs.ext4 e2fsck

mnt=/mnt/src
nb=$(stk_nullb src0 192 completion_nsec=20000 hw_queue_depth=8)
sz=$(blockdev --getsz "$nb")
nbdev=$(cat /sys/block/"${nb#/dev/}"/dev)
dm_create src-io "0 $sz ioband $nb src 0 16 user weight 0 :100 0:300" >/dev/null
mkfs.ext4 -q /dev/mapper/src-io || fail "mkfs.ext4"
stk_mount /dev/mapper/src-io $mnt
stk_fill $mnt/pre 16
sync
stk_busy_start $mnt

table() { dmsetup table src-io; }
for round in 1 2 3; do
	stk_busy_wait
	dmsetup message src-io 0 weight 0:$((round * 200)) || fail "weight message"
	dmsetup message src-io 0 weight $((round * 50)) || fail "default weight message"
	case " $(table) " in
	*" :$((round * 50)) 0:$((round * 200)) "*) ;;
	*) fail "round $round: the weights messages did not show in the table: $(table)" ;;
	esac
	stk_busy_wait

	# a new table: other weights, io_limit and (every other round) policy
	policy=weight
	[ $((round % 2)) = 1 ] && policy=weight-iosize
	new="0 $sz ioband $nb src 0 $((round * 8)) user $policy 0 :$((round * 10)) 0:$((round * 100)) 1000:5"
	dmsetup load src-io --table "$new" || fail "round $round: dmsetup load"
	# loaded, not yet live
	case " $(table) " in
	*" :$((round * 50)) 0:$((round * 200)) "*) ;;
	*) fail "round $round: a loaded table went live before the resume: $(table)" ;;
	esac
	dmsetup suspend src-io || fail "round $round: suspend"
	dmsetup resume src-io || fail "round $round: resume"
	assert_eq "$(table)" "0 $sz ioband $nbdev src 0 $((round * 8)) user $policy 256 :$((round * 10)) 0:$((round * 100)) 1000:5" \
		"round $round: the new table is live"
	stk_busy_wait

	# suspend/resume alone, freezing the filesystem and not
	dmsetup suspend src-io || fail "round $round: plain suspend"
	assert_eq "$(dmsetup info -c --noheadings -o attr src-io | cut -c3)" s "round $round: suspended"
	dmsetup resume src-io || fail "round $round: plain resume"
	dmsetup suspend --nolockfs src-io || fail "round $round: suspend --nolockfs"
	dmsetup resume src-io || fail "round $round: resume after --nolockfs"
	stk_busy_wait
	log "round $round: weights, table ($policy) and suspends done; the load is at round $(cat "$TESTDIR/busy.progress")"
done

stk_busy_stop
log "the load did $STK_BUSY_ROUNDS write-fsync-read rounds through it all"
report reconfig_load_rounds "$STK_BUSY_ROUNDS"
stk_verify $mnt/pre
[ "$(stk_field src-io 0 writes)" -gt 0 ] || fail "root's writes were not counted in group 0 after the reloads"
umount $mnt || fail "umount"
stk_fsck /dev/mapper/src-io
mount /dev/mapper/src-io $mnt || fail "mount again"
stk_verify $mnt/pre

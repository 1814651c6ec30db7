#!/bin/bash
# Latency statistics (the "latency" message): a line per group in status's
# order; a group under riops=20 with four synchronous readers waits in
# ioband what Little's law says (four bios in flight at 20 a second: about
# 200 ms each, less the device's 5 ms), an unlimited group beside it waits
# nothing; both take the device's 5 ms below it; the figures are of the
# current second and the one before, so two seconds after the load stops
# none are left; reset clears them; an argument is refused and changes
# nothing.
# timeout: 240
. /tests/lib.sh

nb=$(nullb_create ls0 64 5000000 4)
sz=$(blockdev --getsz "$nb")
cga=$(cg_create ls-a)
cgb=$(cg_create ls-b)
ida=$(stat -c %i "$cga")
idb=$(stat -c %i "$cgb")
dev=$(dm_create lsx "0 $sz ioband $nb lsdg 0 0 cgroup weight 0 :100 $ida:100/riops=20 $idb:100")

# lat ID FIELD: a field of ID's line of the answer in $ANSWER (2: timed,
# 3 and 4: wait p50 and p99, 5 and 6: below p50 and p99, microseconds)
lat() { echo "$ANSWER" | awk -v id="$1" -v f="$2" '$1 == id { print $f }'; }
ask() { ANSWER=$(dmsetup message lsx 0 latency) || fail "latency refused"; }

ask
echo "$ANSWER"
assert_eq "$(echo "$ANSWER" | awk '{ printf "%s:%d ", $1, NF }')" \
	"-1:6 $ida:6 $idb:6 " "the answer's groups and fields"
# the same groups in the same order as status
assert_eq "$(echo "$ANSWER" | awk '{ printf "%s ", $1 }')" \
	"$(dmsetup status lsx | awk '{ for (i = 5; i <= NF; i += 7) printf "%s ", $i }')" \
	"groups in status's order"
assert_eq "$(lat "$ida" 2) $(lat "$idb" 2)" "0 0" "timed before any I/O"

# a: 4 synchronous readers under riops=20; b: 1 reader, no limit.
for g in a b; do
	jobs=1
	[ $g = a ] && jobs=4
	cg_run ls-$g fio --name=$g --filename="$dev" --rw=randread --bs=4k \
		--direct=1 --ioengine=psync --numjobs=$jobs --time_based \
		--runtime=6 --group_reporting >"$TESTDIR/fio-$g.log" 2>&1 &
	eval "fio_$g=\$!"
done
on_exit "kill $fio_a $fio_b 2>/dev/null"

# until both groups have 10 bios timed (half a second of a's I/O at 20 a
# second; the figures hold one to two seconds of it)
i=0
while :; do
	ask
	[ "$(lat "$ida" 2)" -ge 10 ] && [ "$(lat "$idb" 2)" -ge 10 ] && break
	i=$((i + 1))
	[ $i -lt 300 ] || fail "fewer than 10 bios timed in a or b after 30 s: $ANSWER"
	sleep 0.1
done
echo "$ANSWER"
report a_wait_p50_us "$(lat "$ida" 3)"
report a_below_p50_us "$(lat "$ida" 5)"
report b_wait_p50_us "$(lat "$idb" 3)"
report b_below_p50_us "$(lat "$idb" 5)"
w=$(lat "$ida" 3)
[ "$w" -ge 100000 ] && [ "$w" -le 500000 ] ||
	fail "a waited $w us in ioband (p50), want 100000 to 500000 (4 bios in flight at 20 a second)"
w=$(lat "$idb" 3)
[ "$w" -le 1000 ] || fail "b waited $w us in ioband (p50), want at most 1000: nothing holds it"
for id in "$ida" "$idb"; do
	b=$(lat "$id" 5)
	[ "$b" -ge 5000 ] && [ "$b" -le 100000 ] ||
		fail "group $id took $b us below ioband (p50), want 5000 to 100000 (a 5 ms null_blk; the wait is not in it)"
done
assert_eq "$(lat -1 2)" 0 "timed in the default group, which did no I/O"

wait "$fio_a" || fail "fio in a: $(cat "$TESTDIR/fio-a.log")"
wait "$fio_b" || fail "fio in b: $(cat "$TESTDIR/fio-b.log")"
# b's bios were never held (status: its delayed reads)
assert_eq "$(dmsetup status lsx | awk -v id="$idb" '{ for (i = 5; i <= NF; i += 7) if ($i == id) print $(i + 2) }')" \
	0 "b's delayed reads"

# ---- two seconds with no I/O leave nothing ----------------------------------------
# (b had 10 or more timed while its load ran, above; its last bio ended
# before t1)
ask
n1=$(lat "$idb" 2)
usecs
t1=$REPLY
while usecs && [ $((REPLY - t1)) -lt 2000000 ]; do
	sleep 0.2
done
ask
n2=$(lat "$idb" 2)
echo "b timed: $n1, then $n2 two seconds later"
assert_eq "$n2" 0 "b's bios timed two seconds after its load stopped"
assert_eq "$(lat "$idb" 6)" 0 "b's dev_p99 with nothing timed"

# ---- reset clears them; an argument is refused and changes nothing ---------------
dmsetup message lsx 0 reset || fail "reset refused"
ask
assert_eq "$(echo "$ANSWER" | awk '{ s += $2 } END { print s }')" 0 "timed after reset"
table=$(dmsetup table lsx)
n=$(dmesg | grep -c 'message "latency" refused: latency takes no argument')
dmsetup message lsx 0 latency 5 2>/dev/null && fail "'latency 5' accepted"
[ "$(dmesg | grep -c 'message "latency" refused: latency takes no argument')" -gt "$n" ] ||
	fail "'latency 5' refused without its reason in the kernel log"
assert_eq "$(dmsetup table lsx)" "$table" "the table after a refused message"

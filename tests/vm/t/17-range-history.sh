#!/bin/bash
# range-bw: service a group got through its minimum is not held against it
# afterwards.  Once its minimum is removed (and a cap set below its fair
# share), it gets its share of what is left at once, not after the others
# have caught up with all it got under the minimum.
# timeout: 180
# long: debug
. /tests/lib.sh
. /tests/t/range.inc

# The slow device of 17-range-min (range.inc), depth 2, io_limit 2.
nb=$(nullb_create rhist0 1024 "$RNG_NSEC" 2)
RNG_DISK=$(basename "$nb")
sz=$(blockdev --getsz "$nb")
dev=$(dm_create rhist "0 $sz ioband $nb rhistdg 0 2 cgroup range-bw 0 :0:0")
rng_readers "$dev" rhist-a rhist-b
A=$(stat -c %i $CG_ROOT/rhist-a)
B=$(stat -c %i $CG_ROOT/rhist-b)
for id in $A $B; do
	dmsetup message rhist 0 attach "$id" || fail "attach $id"
done

rng_measure hist_nomin rhist-a rhist-b
CAP=$TOT
[ "$CAP" -ge "$RNG_MIN_KBS" ] || fail "the device served only $CAP KB/s"

# a gets 80 % through its minimum for 12 s, b the rest ...
MA=$((CAP * 80 / 100))
dmsetup message rhist 0 range-bw "$A:$MA:0" || fail "range-bw $A:$MA:0"
for k in 1 2; do
	rng_measure hist_min80_$k rhist-a rhist-b
	[ "${KBS[0]}" -ge $((MA * 85 / 100)) ] || fail "a got ${KBS[0]} KB/s, below 85 % of its minimum $MA"
done

# ... then none, and a cap of 25 %, half its fair share of 50 %: the cap,
# not a debt from the minimum, must be what limits it.
XA=$((CAP * 25 / 100))
dmsetup message rhist 0 range-bw "$A:0:$XA" || fail "range-bw $A:0:$XA"
rng_cap_start "$A"
rng_measure hist_cap25 rhist-a rhist-b
rng_cap_check "$A" "$XA" hist_cap25
[ "${KBS[0]}" -le $((XA * 105 / 100)) ] || fail "a capped at $XA KB/s got ${KBS[0]} KB/s"
[ "${KBS[0]}" -ge $((XA * 80 / 100)) ] ||
	fail "a, capped at $XA KB/s with equal weights, got only ${KBS[0]} KB/s (b ${KBS[1]}) after its minimum was removed"

#!/bin/bash
# Smoke test of the benchmark suite (make bench-smoke, and the last stage
# of make check): the accuracy scenario's reads through ioband for 3
# seconds.  Asserts only that every group did I/O and that the shares are
# ordered a > b > c (weights 400:200:100).  The null_blk is the accuracy
# scenario's (4 ms, queue depth 4: at most 1000 IOPS), so that the device
# and not the guest's CPU is what the groups share: on the 100 us device a
# TCG guest reached about 2000 of its 40000 IOPS, ioband never had to hold
# a bio, and the order was the CPU scheduler's (36.6 / 37.9 / 25.5 % in CI).
# timeout: 240
. /tests/lib.sh
. /tests/t/bench.inc

WIN=$(bparam window 3)

nb=$(nullb_create smoke0 "$BENCH_SIZE_MB" "$(bparam acc_nsec 4000000)" "$(bparam acc_qd 4)")
sz=$(blockdev --getsz "$nb")
for g in a b c; do cg_create "$g" >/dev/null; done
ia=$(cg_id a) ib=$(cg_id b) ic=$(cg_id c)
iob=$(dm_create smoke_iob "0 $sz ioband $nb smoke $IOB_THROTTLE $IOB_LIMIT cgroup weight $IOB_TOKEN :100 $ia:400 $ib:200 $ic:100")
for g in a b c; do load_start "$g" "$iob" randread 4k 8; done
window "$WIN" "$iob" a b c
load_stop a b c
pct "${W_IOS[0]}" "$W_TOTAL"; sa=$REPLY
pct "${W_IOS[1]}" "$W_TOTAL"; sb=$REPLY
pct "${W_IOS[2]}" "$W_TOTAL"; sc=$REPLY
report smoke.shares "$sa/$sb/$sc"
report smoke.iops "$W_IOPS"
log "shares $sa / $sb / $sc %, $W_IOPS IOPS; $(dmsetup status smoke_iob | cut -d' ' -f4-)"
for i in 0 1 2; do
	[ "${W_IOS[$i]}" -gt 0 ] || fail "group $i did no I/O (${W_IOS[*]})"
done
[ "${W_IOS[0]}" -gt "${W_IOS[1]}" ] && [ "${W_IOS[1]}" -gt "${W_IOS[2]}" ] ||
	fail "shares not ordered a > b > c: $sa / $sb / $sc %"
exit 0

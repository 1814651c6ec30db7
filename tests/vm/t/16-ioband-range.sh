#!/bin/bash
# range-bw: caps hold for reads and for writes, a cap changed by message
# takes effect live, and switching policies under load loses nothing.
# timeout: 300
# long: debug
. /tests/lib.sh

nb=$(nullb_create rng0 128 "" "" 1)
sz=$(blockdev --getsz "$nb")
cg_create rng-r >/dev/null
cg_create rng-w >/dev/null
R=$(stat -c %i /sys/fs/cgroup/rng-r)
W=$(stat -c %i /sys/fs/cgroup/rng-w)
dev=$(dm_create rng "0 $sz ioband $nb rngdg 0 0 cgroup range-bw 0 :0:0 $R:0:800 $W:0:600")

# fio's bandwidth in KiB/s for a 4-second job in cgroup $1 doing $2.
bw_in() {
	cg_run "$1" fio --name=j --filename="$dev" --rw="$2" --bs=4k --numjobs=4 \
		--direct=1 --ioengine=psync --time_based --runtime=4 \
		--group_reporting --offset="$3" --size=16m \
		--output-format=terse --terse-version=3 2>"$TESTDIR/fio.err" |
		awk -F';' -v rw="$2" 'NF > 50 { print (rw == "randread") ? $7 : $48 }'
}
in_range() { # value cap
	[ "$1" -le $(($2 * 105 / 100)) ] && [ "$1" -ge $(($2 * 80 / 100)) ]
}

r=$(bw_in rng-r randread 0)
log "reads capped at 800 KB/s: $r KiB/s"
in_range "${r:-0}" 800 || fail "read cap 800: got $r KiB/s"
w=$(bw_in rng-w randwrite 32m)
log "writes capped at 600 KB/s: $w KiB/s"
in_range "${w:-0}" 600 || fail "write cap 600: got $w KiB/s"
report range_read_cap_800 "$r"
report range_write_cap_600 "$w"

# Live change of a cap.
dmsetup message rng 0 range-bw $R:0:400 || fail "range-bw message"
r=$(bw_in rng-r randread 0)
log "after the message, reads capped at 400 KB/s: $r KiB/s"
in_range "${r:-0}" 400 || fail "read cap 400 after message: got $r KiB/s"
assert_eq "$(dmsetup table rng | cut -d' ' -f11-)" ":0:0 $R:0:400 $W:0:600" "table after message"

# Bad ranges are refused and change nothing.
expect_fail dmsetup message rng 0 range-bw $R:500:100
expect_fail dmsetup message rng 0 range-bw 4242:0:100
assert_eq "$(dmsetup table rng | cut -d' ' -f11-)" ":0:0 $R:0:400 $W:0:600" "table after refusals"

# Policy switches under a verifying writer: nothing lost.
cg_run rng-w fio --name=v --filename="$dev" --rw=randwrite --bs=4k --size=8m \
	--offset=64m --numjobs=2 --offset_increment=16m --direct=1 \
	--ioengine=psync $(fio_verify_args) --verify_fatal=1 \
	>"$TESTDIR/verify.out" 2>&1 &
writer=$!
n=0
while kill -0 "$writer" 2>/dev/null; do
	dmsetup message rng 0 policy weight || fail "policy weight under load"
	dmsetup message rng 0 policy range-bw || fail "policy range-bw under load"
	n=$((n + 2))
done
wait "$writer" || fail "writer under policy switches: $(tail -n 5 "$TESTDIR/verify.out")"
log "$n policy switches under a verifying writer"
[ "$n" -ge 2 ] || fail "no policy switch happened during the write"

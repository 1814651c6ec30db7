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
# Status field F (3: held reads, 2: reads, 6: held writes, 5: writes) of
# group ID.
status_of() { # ID F
	dmsetup status rng | awk -v id="$1" -v f="$2" '{
		for (i = 5; i + 6 <= NF; i += 7) if ($i == id) print $(i + f - 1) }'
}
# capped WHAT ID CGROUP RW OFFSET CAP: the group's rate in BW (KiB/s).  A
# cap bounds it from above whatever the host does; from below (80 %) only
# where the cap is what limits the group (more than a tenth of its bios
# held: the guest could go faster) and for the time the guest ran
# (stall_start).  A bound not judged goes to UNJUDGED, and the test ends
# as a skip naming it.
UNJUDGED=
capped() {
	local what=$1 id=$2 cap=$6 f=2 n0 h0 n h
	[ "$4" = randwrite ] && f=5
	n0=$(status_of "$id" $f) h0=$(status_of "$id" $((f + 1)))
	stall_start
	BW=$(bw_in "$3" "$4" "$5")
	stall_stop
	n=$(($(status_of "$id" $f) - n0)) h=$(($(status_of "$id" $((f + 1))) - h0))
	BW=${BW:-0}
	log "$what: $BW KiB/s, $h of $n bios held, the guest stood still $STALL_MS ms"
	[ "$BW" -le $((cap * 105 / 100)) ] || fail "$what: got $BW KiB/s"
	if [ "$h" -le $((n / 10)) ]; then
		UNJUDGED+="$what: $BW KiB/s with $h of $n bios held (the guest, not the cap, was the limit); "
	elif [ "$STALL_MS" -gt 2000 ]; then
		UNJUDGED+="$what: $BW KiB/s, the guest stood still $STALL_MS ms while its 4 s job ran; "
	else
		[ "$BW" -ge $((cap * 80 / 100 * (4000 - STALL_MS) / 4000)) ] ||
			fail "$what: got only $BW KiB/s with $h of $n bios held (the guest stood still $STALL_MS ms)"
	fi
}

capped "read cap 800" "$R" rng-r randread 0 800
report range_read_cap_800 "$BW"
capped "write cap 600" "$W" rng-w randwrite 32m 600
report range_write_cap_600 "$BW"

# Live change of a cap.
dmsetup message rng 0 range-bw $R:0:400 || fail "range-bw message"
capped "read cap 400 after the message" "$R" rng-r randread 0 400
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
while alive "$writer"; do
	dmsetup message rng 0 policy weight || fail "policy weight under load"
	dmsetup message rng 0 policy range-bw || fail "policy range-bw under load"
	n=$((n + 2))
done
wait "$writer" || fail "writer under policy switches: $(tail -n 5 "$TESTDIR/verify.out")"
log "$n policy switches under a verifying writer"
[ "$n" -ge 2 ] || fail "no policy switch happened during the write"
[ -z "$UNJUDGED" ] || skip "lower bounds not judged: $UNJUDGED"

#!/bin/bash
# ioband-setup top: bad arguments; reports whose per-group counts add up to
# exactly the I/O done between the first and the last sample, rates that
# agree with those counts, the text view, SIGINT; and under two competing
# readers weighted 400:100, shares that are each group's part of the
# sectors, counts within the status counters read around top's run, and
# the heavier group ahead.
# timeout: 240
# long: debug
. /tests/lib.sh
. /tests/t/setup.inc

nb=$(nullb_create st0 64 100000 4)
cgw=$(cg_create st-web)
cgb=$(cg_create st-batch)
idw=$(stat -c %i "$cgw")
idb=$(stat -c %i "$cgb")
expect 0 ioband-setup create t "$nb" -t cgroup -g st-web=400 -g st-batch=100 --io-limit 16
on_exit "dmsetup remove --retry t"
dev=/dev/mapper/t

# ---- bad arguments ---------------------------------------------------------------------
expect 2 ioband-setup top t --count 0
contains "--count must be a number from 1, not '0'"
expect 2 ioband-setup top t --interval 0
contains "--interval must be 0.1 to 3600 seconds, not '0'"
expect 2 ioband-setup top t -i abc
contains "--interval must be 0.1 to 3600 seconds, not 'abc'"
expect 2 ioband-setup top
contains "expected one NAME"
expect 2 ioband-setup top t u
expect 3 ioband-setup top nosuch
contains "no device-mapper device named 'nosuch'"
dm_create st-lin "0 8 linear $nb 0" >/dev/null
expect 4 ioband-setup top st-lin
contains "'st-lin' is not an ioband device"

# ---- counts: 100 reads by st-web while top runs ------------------------------------------
# field FIELD of group ID in one JSON report line
jf() { echo "$1" | grep -o "{\"id\":$2,[^}]*}" | grep -o "\"$3\":[-0-9.a-z\"/]*" | cut -d: -f2; }
ioband-setup top t --json --count 5 --interval 1 >"$TESTDIR/top.json" 2>&1 &
top=$!
# the first report is out: its first sample is behind us
i=0
while [ ! -s "$TESTDIR/top.json" ]; do
	sleep 0.1
	i=$((i + 1))
	[ $i -lt 300 ] || fail "no report from top in 30 s"
done
cg_run st-web dd if=$dev of=/dev/null bs=4k count=100 iflag=direct status=none || fail "dd in st-web"
wait $top || fail "top exited $?: $(cat "$TESTDIR/top.json")"
cat "$TESTDIR/top.json"
assert_eq "$(wc -l <"$TESTDIR/top.json")" 5 "reports"
sum_r=0 sum_s=0 other=0
while read -r line; do
	r=$(jf "$line" "$idw" reads)
	s=$(jf "$line" "$idw" read_sectors)
	iops=$(jf "$line" "$idw" read_iops)
	bps=$(jf "$line" "$idw" read_bytes_per_s)
	dt=$(echo "$line" | grep -o '"interval":[0-9.]*' | cut -d: -f2)
	[ -n "$r" ] && [ -n "$iops" ] && [ -n "$dt" ] || fail "report without st-web's fields: $line"
	assert_eq "$(jf "$line" "$idw" name)" '"/st-web"' "name in the report"
	assert_eq "$(jf "$line" "$idw" weight)" 400 "weight in the report"
	# rates are the counts over the interval
	awk -v r="$r" -v i="$iops" -v s="$s" -v b="$bps" -v t="$dt" 'BEGIN {
		exit !(t > 0.3 && t < 3 && (r / t - i) ^ 2 <= (0.002 * i + 0.06) ^ 2 &&
		       (s * 512 / t - b) ^ 2 <= (0.002 * b + 1) ^ 2) }' ||
		fail "rates do not match the counts: reads $r sectors $s iops $iops bytes/s $bps interval $dt"
	sum_r=$((sum_r + r))
	sum_s=$((sum_s + s))
	other=$((other + $(jf "$line" "$idb" reads) + $(jf "$line" -1 reads)))
done <"$TESTDIR/top.json"
assert_eq "$sum_r" 100 "st-web's reads over all reports"
assert_eq "$sum_s" 800 "st-web's read sectors over all reports"
assert_eq "$other" 0 "reads of the other groups"
# the kernel's latency figures: st-web's reads timed in a report, none for st-batch (no I/O)
timed=0
while read -r line; do
	p99=$(jf "$line" "$idw" dev_p99)
	if [ "$p99" != null ]; then
		[[ $p99 =~ ^[0-9]+$ ]] && [ "$p99" -gt 0 ] || fail "st-web's dev_p99 is not microseconds: $line"
		timed=$((timed + 1))
	fi
	for k in wait_p50 wait_p99 dev_p50 dev_p99; do
		assert_eq "$(jf "$line" "$idb" $k)" null "st-batch's $k (it did no I/O)"
	done
done <"$TESTDIR/top.json"
[ "$timed" -gt 0 ] || fail "no report has a dev_p99 for st-web after its 100 reads: $(cat "$TESTDIR/top.json")"

# ---- the text view --------------------------------------------------------------------------
expect 0 ioband-setup top t --count 2 --interval 0.3
echo "$out"
assert_eq "$(echo "$out" | grep -c '^t  device group t  type cgroup  policy weight-time  interval 0.[3-9]s')" 2 "report headers"
assert_eq "$(echo "$out" | grep -c '^GROUP  *NAME  *WEIGHT  *READ-MiB/s  *WRITE-MiB/s  *READ-IOPS  *WRITE-IOPS  *DELAYED/s  *WAIT-P99  *DEV-P99  *SHARE$')" 2 "column headers"
assert_eq "$(echo "$out" | awk '$1 == '"$idw"' { print $2, $3 }' | sort -u)" "/st-web 400" "st-web rows"
assert_eq "$(echo "$out" | awk '$1 == "default" { print $2, $3 }' | sort -u)" "default 100" "default rows"
lacks $'\033['

# ---- SIGINT ends it cleanly ------------------------------------------------------------------
ioband-setup top t --interval 0.5 >"$TESTDIR/int.out" 2>&1 &
top=$!
sleep 2
kill -INT $top
wait $top
rc=$?
assert_eq "$rc" 0 "top's exit status after SIGINT"
[ "$(grep -c '^GROUP' "$TESTDIR/int.out")" -ge 1 ] || fail "no report before SIGINT: $(cat "$TESTDIR/int.out")"

# ---- two competing readers, weights 400:100 ------------------------------------------------
reads_of() { dmsetup status t | awk -v id="$1" '{ for (i = 5; i + 6 <= NF; i += 7) if ($i == id) print $(i + 1) }'; }
pids=
for g in st-web st-batch; do
	cg_run $g fio --name=r --filename=$dev --rw=randread --bs=4k --numjobs=8 \
		--direct=1 --ioengine=psync --time_based --runtime=120 --group_reporting \
		>/dev/null 2>&1 &
	pids="$pids $!"
done
on_exit "kill $pids"
# until both readers are going (slow to start on a debug kernel)
w0=$(reads_of "$idw") b0=$(reads_of "$idb") i=0
while :; do
	sleep 1
	w1=$(reads_of "$idw") b1=$(reads_of "$idb")
	[ $((w1 - w0)) -gt 50 ] && [ $((b1 - b0)) -gt 50 ] && break
	w0=$w1 b0=$b1 i=$((i + 1))
	[ $i -lt 90 ] || fail "the two readers did not get going"
done
sleep 1
# sectors read by each group around top's run, from the status line
sectors_of() { dmsetup status t | awk -v id="$1" '{ for (i = 5; i + 6 <= NF; i += 7) if ($i == id) print $(i + 3) }'; }
sw0=$(sectors_of "$idw") sb0=$(sectors_of "$idb")
expect 0 ioband-setup top t --json --count 3 --interval 1
sw1=$(sectors_of "$idw") sb1=$(sectors_of "$idb")
echo "$out"
kill $pids
wait
ws=0 bs=0 delayed=0
while read -r line; do
	ws=$((ws + $(jf "$line" "$idw" read_sectors)))
	bs=$((bs + $(jf "$line" "$idb" read_sectors)))
	delayed=$((delayed + $(jf "$line" "$idw" delayed_reads) + $(jf "$line" "$idb" delayed_reads)))
	# each share is the group's sectors over all sectors of the interval
	awk -v a="$(jf "$line" "$idw" share)" -v b="$(jf "$line" "$idb" share)" \
		-v c="$(jf "$line" -1 share)" -v sa="$(jf "$line" "$idw" read_sectors)" \
		-v sb="$(jf "$line" "$idb" read_sectors)" 'BEGIN {
		exit !((a + b + c - 1) ^ 2 < 0.0001 && (a - sa / (sa + sb)) ^ 2 < 0.0001) }' ||
		fail "shares do not add up: $line"
done <<<"$out"
[ $((ws + bs)) -gt 0 ] || fail "no reads seen under load"
share=$((100 * ws / (ws + bs)))
status_share=$((100 * (sw1 - sw0) / (sw1 - sw0 + sb1 - sb0)))
log "st-web's share: ${share}% in top's reports, ${status_share}% in the status around them (weights 400:100), $delayed bios delayed"
report setup_top_share_400_100 "$share"
# top's reports cover all but the moments before its first and after its
# last sample of what the status counted around it
[ $((ws + bs)) -le $((sw1 - sw0 + sb1 - sb0)) ] || fail "top counted more than the status: $((ws + bs)) > $((sw1 - sw0 + sb1 - sb0))"
report setup_top_delayed "$delayed"
# On the debug kernel the guest's CPU, not the 100 us null_blk, is the
# limit, and nothing need queue at ioband (make check: 0 delayed, shares
# 51/50 % for 400:100): the share and the delayed bios are reported
# there, checked on production.
if [ "$(cat /etc/ioband-vm-kernel)" = debug ]; then
	log "debug kernel: st-web's share ${share}%, $delayed delayed bios (not checked: the CPU is the limit)"
else
	[ "$share" -gt 50 ] || fail "st-web (weight 400) got ${share}% against st-batch (weight 100)"
	[ "$delayed" -gt 0 ] || fail "competing readers, but top saw no delayed bios"
fi
log "top as documented"

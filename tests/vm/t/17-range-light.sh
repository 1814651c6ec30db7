#!/bin/bash
# range-bw and seed 002: a light (think-time) workload whose demand stays
# below its cap is never held by ioband, alone or next to a group that runs
# into its own cap; and that capped group resumes promptly after each wait
# (at most two gaps of 250 ms or more between completions in 6 s, where a
# once-a-second refill would leave five or six near 1000 ms).
# timeout: 180
# long: debug
. /tests/lib.sh

nb=$(nullb_create rl0 256)
sz=$(blockdev --getsz "$nb")
cg_create rl-l >/dev/null
cg_create rl-h >/dev/null
L=$(stat -c %i $CG_ROOT/rl-l)
H=$(stat -c %i $CG_ROOT/rl-h)
# L capped at 4000 KB/s (1000 4 KiB I/Os a second), H at 400 KB/s (100).
dev=$(dm_create rl "0 $sz ioband $nb rldg 0 0 cgroup range-bw 0 :0:0 $L:0:4000 $H:0:400")

# One psync job in cgroup $1, 4 KiB random reads for 6 s, more fio options
# after; prints fio's terse line.
job() {
	local cg=$1
	shift
	cg_run "$cg" fio --name=j --filename="$dev" --rw=randread --bs=4k \
		--direct=1 --ioengine=psync --time_based --runtime=6 \
		--norandommap --randrepeat=0 --output-format=terse \
		--terse-version=3 "$@" 2>>"$TESTDIR/fio.err" | grep ';'
}
# Field N of a terse line (7 read KiB/s, 8 read IOPS, 15 read clat max us).
field() { echo "$1" | cut -d';' -f"$2"; }
# The read clat percentile P (e.g. 99.000000) of a terse line, in us.
pctl() { echo "$1" | tr ';' '\n' | sed -n "s/^$2%=//p" | head -n1; }
# "reads delayed_reads" of group $1 in ioband's status.
held() {
	dmsetup status rl | awk -v id="$1" '{
		for (i = 5; i + 6 <= NF; i += 7) if ($i == id) print $(i + 1), $(i + 2) }'
}

# The light workload: one read, then 2 ms of think time, so at most 500
# I/Os a second, half of L's cap; the 50 ms burst bucket is never emptied.
LIGHT="--thinktime=2000 --thinktime_blocks=1"

# 1. L alone.
dmsetup message rl 0 reset || fail "reset"
t=$(job rl-l $LIGHT)
[ -n "$t" ] || fail "light job: $(tail -n 3 "$TESTDIR/fio.err")"
set -- $(held "$L")
log "L alone: $1 reads, $2 held; $(field "$t" 8) IOPS, p50 $(pctl "$t" 50.000000) us, p99 $(pctl "$t" 99.000000) us"
report range_light_alone_p99_us "$(pctl "$t" 99.000000)"
[ "$1" -ge 100 ] || fail "L did only $1 reads"
[ "$2" = 0 ] || fail "L, below its cap, had $2 of $1 reads held"

# 2. L next to H, which reads without pause and so lives on its cap.  H
# logs each completion, to find its longest gap between two.
dmsetup message rl 0 reset || fail "reset"
stall_start
(cd "$TESTDIR" && job rl-h --write_lat_log=h --log_avg_msec=0 >h.terse) &
hjob=$!
t=$(job rl-l $LIGHT)
wait "$hjob"
stall_stop
th=$(cat "$TESTDIR/h.terse")
[ -n "$t" ] && [ -n "$th" ] || fail "jobs: $(tail -n 3 "$TESTDIR/fio.err")"
set -- $(held "$L")
lr=$1 lh=$2
set -- $(held "$H")
hr=$1 hh=$2
hbw=$(field "$th" 7)
# fio logs each completion's time in ms since the job began: the longest
# gap between two, and how many gaps exceed 250 ms.
set -- $(awk -F, 'NR > 1 { d = $1 - p; if (d > g) g = d; if (d > 250) n++ }
	{ p = $1 } END { print g + 0, n + 0 }' "$TESTDIR"/h_clat*.log)
gap=$1 long=$2
log "L next to H: $lr reads, $lh held; $(field "$t" 8) IOPS, p50 $(pctl "$t" 50.000000) us, p99 $(pctl "$t" 99.000000) us"
log "H capped at 400: $hbw KiB/s, $hr reads, $hh held, clat max $(field "$th" 15) us, longest gap between completions $gap ms, $long gaps over 250 ms; the guest stood still $STALL_MS ms"
report range_light_beside_capped_p99_us "$(pctl "$t" 99.000000)"
report range_capped_400_kbps "$hbw"
report range_capped_gap_ms "$gap"
[ "$lr" -ge 100 ] || fail "L did only $lr reads next to H"
[ "$lh" = 0 ] || fail "L, below its cap, had $lh of $lr reads held next to a capped group"
# H kept to its cap (50 ms of burst over 6 s: 1 %), whatever the host did.
[ "${hbw:-0}" -le 420 ] || fail "H capped at 400 KB/s read $hbw KiB/s"
# Its rate and its gaps say how the cap releases only where the cap is
# what limits H: more than a tenth of its reads held (its fio alone, under
# TCG, spends ms between reads, so not every read waits), and the guest
# not stopped by the host for more than a second of the 6.
if [ "$hh" -le $((hr / 10)) ]; then
	skip "H's rate and gaps not judged: only $hh of its $hr reads were held (the guest, not the cap, was the limit: $hbw KiB/s)"
elif [ "$STALL_MS" -gt 1000 ]; then
	skip "H's rate and gaps not judged: the guest stood still $STALL_MS ms while the 6 s jobs ran ($hbw KiB/s, $long gaps over 250 ms)"
fi
[ "${hbw:-0}" -ge 320 ] || fail "H capped at 400 KB/s read only $hbw KiB/s"
# A 4 KiB read costs 10 ms of a 400 KB/s cap.  A budget refilled once a
# second would leave a gap near 1000 ms every second (5 or 6 here); a host
# that stops the guest for half a second now and then leaves one or two.
[ "$long" -le 2 ] || fail "H had $long gaps over 250 ms between completions (longest $gap ms)"

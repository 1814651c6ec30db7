#!/bin/bash
# Back-pressure: a capped group holds at most what it drains in 200 ms at
# its cap (at least 64 KiB, at most 4 MiB); beyond that its submitters
# wait in map() for room, as they would for a full request queue, for 1 s
# at most (see 7. in dm-ioband.c).  The group is capped at 4 MB/s
# (range-bw) on a fast null_blk, so whatever it sends beyond its cap is
# held.
#
# 1. Direct I/O: fio keeps 32 bios of 256 KiB (8 MiB) in flight.  The
#    group holds 800 KiB (200 ms at 4 MB/s) plus at most one bio (counted
#    from the ioband_hold/ioband_release tracepoints), and fio's thread
#    sleeps in ioband_wait_for_room (its wchan).
# 2. suspend while it sleeps: presuspend lets everything pass, so suspend
#    returns; after resume the load goes on and fio verifies its data.
# 3. Buffered writeback: 32 MiB written through the page cache to the
#    ioband device, written back by the flusher (background limit 1 MiB).
#    The flusher waits for room too (its ioband_wait trace events; a
#    sampled wchan can miss its short waits on the debug kernel), so the
#    pages under writeback
#    (/proc/meminfo Writeback) stay below 12 MiB; it was all 32 MiB at
#    once before there was a bound.
# 4. The wait is bounded in time: at 100 KB/s a 256 KiB bio takes 2.6 s to
#    drain, and fio's thread, which waited that long for each bio when
#    the bound was 4 MiB whatever the cap, now waits at most 1 s before its
#    bio is held anyway: its waits start at most 2 s apart.
# 5. remove --force while a submitter sleeps: every bio ends.
# A submitter's sleep is seen by sampling wchan; when the host starves the
# guest so that fio ends before one is seen, the trace must still show
# that fio waited for room, and what 2. or 5. does while it sleeps is not
# judged (a skip naming it).
# timeout: 420
. /tests/lib.sh
require fio

tr=/sys/kernel/tracing
[ -d $tr/events/ioband ] || mount -t tracefs nodev $tr 2>/dev/null
[ -d $tr/events/ioband ] || skip "no tracefs with ioband events"
# the tests after this one find tracing as it was
on_exit "echo $(cat $tr/tracing_on) > $tr/tracing_on; echo > $tr/trace"
nb=$(nullb_create bp0 256 "" "" 1)
sz=$(blockdev --getsz "$nb")
cg_create bp-w >/dev/null
W=$(stat -c %i $CG_ROOT/bp-w)
table="0 $sz ioband $nb bpdg 0 0 cgroup range-bw 0 :0:0 $W:0:4096"
dev=$(dm_create bp "$table")

# The most sectors group $W held at once, from the trace (a release is
# traced under the same lock as the hold it ends, so the order is exact).
max_held() {
	awk -v g="group=$W" '
		/ioband_hold:/ && $0 ~ g { split($0, a, "nr_sector="); h += a[2] + 0 }
		/ioband_release:/ && $0 ~ g { split($0, a, "nr_sector="); h -= a[2] + 0 }
		h > m { m = h }
		END { print m + 0 }' $tr/trace
}
trace_start() {
	echo 0 >$tr/tracing_on
	echo >$tr/trace
	echo 1 >$tr/events/ioband/enable
	echo 1 >$tr/tracing_on
}
on_exit "echo 0 > $tr/events/ioband/enable"
# The name of a task sleeping for room, if there is one.
sleeper() {
	local t w c
	# read, not cat: a fork per task would take seconds under TCG (and
	# wchan has no newline, so read reports end of file)
	for t in /proc/[0-9]*/task/*; do
		w= c=
		read -r w 2>/dev/null <"$t/wchan"
		[ "$w" = ioband_wait_for_room ] || continue
		read -r c 2>/dev/null <"$t/comm"
		echo "$c"
		return
	done
}
# How often a thread of fio began to wait for room, from the trace.
fio_waits() { awk '/ioband_wait:/ && $1 ~ /^fio/ { n++ } END { print n + 0 }' $tr/trace; }
# Checks that could not be arranged: reported in a skip at the end.
UNJUDGED=
# Wait (at most 30 s) until a thread of fio sleeps for room, while fio
# ($1: the shell that runs it) lasts.  The sampling of wchan can miss
# every sleep of fio when the host starves the guest (debug kernel, a
# loaded host: 24 MiB written without one sleep seen): if fio ends
# first, the trace says whether it waited for room at all (a fault if
# not), and what was to be done while it slept ($2) is not judged.
wait_sleeper() {
	local i
	for i in $(seq 300); do
		[ "$(sleeper)" = fio ] && return 0
		if ! alive "$1"; then
			[ "$(fio_waits)" -gt 0 ] || fail "fio ended without ever waiting for room"
			UNJUDGED+="$2: fio ended before one of its $(fio_waits) waits for room was seen; "
			return 1
		fi
		sleep 0.1
	done
	fail "no thread of fio waited in ioband_wait_for_room within 30 s"
}
start_fio() {
	cg_run bp-w fio --name=bp --filename="$dev" --rw=write --bs=256k \
		--size="$1" --iodepth=32 --ioengine=libaio --direct=1 --thread \
		$(fio_verify_args) --verify_fatal=1 >"$TESTDIR/fio.out" 2>&1 &
	fio_pid=$!
}

# ---- 1. direct I/O, and 2. suspend with a sleeper -------------------------------
trace_start
start_fio 24m
wait_sleeper $fio_pid "suspend while fio sleeps for room"
held=$(max_held)
log "fio sleeps in ioband_wait_for_room; the group held at most $((held / 2)) KiB"
report backpressure_direct_max_held_kib $((held / 2))
# 200 ms at 4096 KB/s, in sectors
bound=$((4096 * 2 * 200 / 1000))
[ "$held" -ge $bound ] && [ "$held" -le $((bound + 512)) ] ||
	fail "the group held at most $held sectors, want 200 ms at its cap to that + one 256 KiB bio ($bound-$((bound + 512)))"
timeout 30 dmsetup suspend bp || fail "suspend with a submitter waiting for room"
dmsetup resume bp || fail "resume"
wait $fio_pid || fail "fio after suspend: $(tail -n 5 "$TESTDIR/fio.out")"
grep -q 'err= 0' "$TESTDIR/fio.out" || fail "fio reported errors: $(grep err= "$TESTDIR/fio.out")"
log "fio wrote and verified 24 MiB across the suspend"

# ---- 3. buffered writeback --------------------------------------------------------
peak=0
cg_run bp-w dd if=/dev/urandom of="$TESTDIR/ref" bs=1M count=32 status=none
sync
# held open, so that dd's close (not the last) does not write its pages
# back itself; with a low background limit, the flusher writes them
exec 3<"$dev"
on_exit "echo $(cat /proc/sys/vm/dirty_background_bytes) >/proc/sys/vm/dirty_background_bytes"
echo $((1 << 20)) >/proc/sys/vm/dirty_background_bytes
cg_run bp-w dd if="$TESTDIR/ref" of="$dev" bs=1M count=32 status=none ||
	fail "buffered write to $dev"
trace_start
# sample the pages under writeback until the flusher is done (at most
# 60 s: 32 MiB take 8 s at 4 MB/s)
end=$(($(date +%s) + 60))
while :; do
	set -- $(awk '$1 == "Dirty:" { d = $2 } $1 == "Writeback:" { w = $2 }
		END { print d, w }' /proc/meminfo)
	[ "$2" -gt $peak ] && peak=$2
	[ $(($1 + $2)) -gt 1024 ] || break
	[ "$(date +%s)" -le $end ] || fail "$1 KiB dirty, $2 KiB under writeback after 60 s"
	sleep 0.2
done
exec 3<&-
echo 0 >$tr/tracing_on
# the waiting task is the trace line's first field, "comm-pid"
flusher=$(awk '/ioband_wait:/ && $1 ~ /^kworker/ { n++ } END { print n + 0 }' $tr/trace)
log "buffered 32 MiB at 4 MB/s: at most $peak KiB under writeback at once; a kworker (the flusher) waited for room $flusher times"
report backpressure_writeback_flusher_waits "$flusher"
report backpressure_writeback_peak_kib "$peak"
[ "$peak" -le $((12 * 1024)) ] ||
	fail "$peak KiB under writeback at once, want at most 12 MiB (800 KiB held, the rest in flight)"
[ "$peak" -ge $((bound / 2)) ] ||
	fail "only $peak KiB under writeback at most: the flusher did not fill the group"
[ "$flusher" -gt 0 ] || fail "no flusher thread (kworker) waited for room: $(grep -m 3 ioband_wait: $tr/trace)"
echo 3 >/proc/sys/vm/drop_caches
cmp -n $((32 << 20)) "$TESTDIR/ref" "$dev" || fail "data read back differs from what was written"

# ---- 4. the wait is bounded in time --------------------------------------------------
dmsetup message bp 0 range-bw "$W:0:100" || fail "cap at 100 KB/s"
trace_start
cg_run bp-w fio --name=bp --filename="$dev" --rw=write --bs=256k --size=64m \
	--iodepth=32 --ioengine=libaio --direct=1 --thread --time_based --runtime=60 \
	>"$TESTDIR/fio4.out" 2>&1 &
fio_pid=$!
for i in $(seq 150); do
	[ "$(fio_waits)" -ge 6 ] && break
	alive $fio_pid || fail "fio ended: $(tail -n 3 "$TESTDIR/fio4.out")"
	sleep 0.2
done
[ "$(fio_waits)" -ge 6 ] || fail "fio's thread waited for room only $(fio_waits) times in 30 s at 100 KB/s"
echo 0 >$tr/tracing_on
# the greatest time between two waits of one fio thread (field 4: "secs:")
gap=$(awk '/ioband_wait:/ && $1 ~ /^fio/ {
		t = $4 + 0; if (($1) in last && t - last[$1] > m) m = t - last[$1]; last[$1] = t
	} END { printf "%d\n", m * 1000 }' $tr/trace)
log "at 100 KB/s: $(fio_waits) waits of fio, at most $gap ms apart"
report backpressure_wait_gap_ms "$gap"
dmsetup message bp 0 range-bw "$W:0:4096" || fail "cap back at 4 MB/s"
kill $fio_pid 2>/dev/null
wait $fio_pid
[ "$gap" -le 2000 ] || fail "fio's waits for room started up to $gap ms apart at 100 KB/s, want at most 2 s (1 s of wait, then the bio is held)"

# ---- 5. remove --force with a sleeper ------------------------------------------------
# While fio holds the device open, remove --force swaps in an error table
# (and reports the device busy): the sleeper must wake, fio must end with
# I/O errors, and the device must then go away.
trace_start
start_fio 64m
if wait_sleeper $fio_pid "remove --force while fio sleeps for room"; then
	timeout 30 dmsetup remove --force bp 2>/dev/null
	[ $? -ne 124 ] || fail "remove --force hung with a submitter waiting for room"
	wait $fio_pid && fail "fio saw no error after the forced removal"
	grep -qi "error" "$TESTDIR/fio.out" || fail "no I/O error reported: $(tail -n 3 "$TESTDIR/fio.out")"
	log "fio ended with errors after the forced removal"
fi
echo 0 >$tr/tracing_on
if dmsetup info bp >/dev/null 2>&1; then
	dmsetup remove bp || fail "remove after fio ended"
fi
log "device gone"
[ -z "$UNJUDGED" ] || skip "$UNJUDGED"

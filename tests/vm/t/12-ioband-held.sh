#!/bin/bash
# Bios held in ioband's queues survive suspend, resume, table reload, detach
# and forced removal: every one completes, data verifies, nothing hangs.
# One bio in flight at a time (io_limit 1) over a device taking 5 ms per
# request keeps the other writers' bios held.
# timeout: 400
. /tests/lib.sh

nb=$(nullb_create held0 128 5000000 1 1)
sz=$(blockdev --getsz "$nb")
table() { echo "0 $sz ioband $nb helddg 1 1 gid weight 0 :100 $1"; }
dev=$(dm_create held "$(table 2000:100)")

# delayed_writes of group $1
delayed_writes() {
	dmsetup status held | awk -v id="$1" '{
		for (i = 5; i + 6 <= NF; i += 7) if ($i == id) print $(i+5) }'
}
# Wait (bounded by the test's timeout) until group $1 has had $2 writes held.
wait_held() {
	until [ "$(delayed_writes "$1")" -ge "$2" ]; do
		alive "$writers" || fail "writers ended before $2 bios were held"
		sleep 0.1
	done
}
# Four writers in gid 2000, each verifying what it wrote: $1 each, $2
# apart (256k, 1m by default: about 3 s of writes and reads through the
# 5 ms device).
start_writers() {
	fio --name=w --filename="$dev" --rw=randwrite --bs=4k --size="${1:-256k}" \
		--offset_increment="${2:-1m}" --numjobs=4 --direct=1 --ioengine=psync \
		$(fio_verify_args) --verify_fatal=1 --gid=2000 --group_reporting \
		>"$TESTDIR/fio.out" 2>&1 &
	writers=$!
}
finish_writers() {
	wait "$writers" || fail "fio failed after $1: $(tail -n 5 "$TESTDIR/fio.out")"
	grep -q "issued rwts" "$TESTDIR/fio.out" || fail "fio did not run after $1"
	grep -Eqi "bad pattern|bad magic|verify failed" "$TESTDIR/fio.out" &&
		fail "verify errors after $1: $(grep -Ei -m3 'bad|verify' "$TESTDIR/fio.out")"
	log "writers verified their data after $1"
}

# --- suspend and resume with bios held ---------------------------------------------
dmsetup message held 0 reset
start_writers
wait_held 2000 3
dmsetup suspend held || fail "suspend with bios held"
dmsetup resume held || fail "resume"
finish_writers "suspend/resume"

# --- reload with other weights while bios are held ----------------------------------
dmsetup message held 0 reset
start_writers
wait_held 2000 3
table 2000:300 | dmsetup load held || fail "load"
dmsetup suspend held || fail "suspend for reload"
dmsetup resume held || fail "resume after reload"
assert_eq "$(dmsetup table held | awk '{print $NF}')" 2000:300 "reloaded weight"
finish_writers "reload"

# --- detach the group that holds bios: they move to the default group ---------------
dmsetup message held 0 reset
start_writers
wait_held 2000 3
dmsetup message held 0 detach 2000 || fail "detach with bios held"
finish_writers "detach"
[ "$(dmsetup status held | wc -w)" -eq 11 ] || fail "group 2000 still listed: $(dmsetup status held)"
dmsetup message held 0 attach 2000 || fail "attach again"

# --- forced removal with bios held ---------------------------------------------------
# While fio holds the device open, remove --force swaps in an error table
# (and reports the device busy): held bios must be released, the writers
# must end with I/O errors, and the device must then go away.  The
# writers have a minute of work, so that they are still writing when the
# error table comes, however slowly a loaded host runs dmsetup (with 3 s
# of work they finished first once, on the debug kernel beside other VMs).
dmsetup message held 0 reset
start_writers 4m 4m
wait_held 2000 3
dmsetup remove --force held 2>/dev/null
wait "$writers" && fail "writers saw no error after the forced removal"
grep -qi "error" "$TESTDIR/fio.out" || fail "no I/O error reported: $(tail -n 3 "$TESTDIR/fio.out")"
if dmsetup info held >/dev/null 2>&1; then
	dmsetup remove held || fail "remove after the writers ended"
fi
log "writers ended with errors after the forced removal; device gone"

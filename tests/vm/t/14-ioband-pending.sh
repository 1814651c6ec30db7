#!/bin/bash
# A loaded table changes nothing until it is resumed, and resuming one
# device of a device group never changes another's settings.  While
# another mapped device of the group is live, a table's device group
# settings (policy, io_throttle, io_limit, token_base, bandwidth) must be
# the group's: refused at load, or at resume if a message changed them
# since; a device alone in its group brings its table's settings.  The
# minimums of a loaded table do not count until it is live, so they make
# no valid message fail; they are checked again when it is resumed.
# timeout: 180
. /tests/lib.sh

nb=$(nullb_create pend0 64)
half=$(($(blockdev --getsz "$nb") / 2))
p1=$(dm_create pendp1 "0 $half linear $nb 0")
p2=$(dm_create pendp2 "0 $half linear $nb $half")
t1() { echo "0 $half ioband $p1 pend 0 $1 user range-bw 0 :0:0 1000:$2:0 bandwidth=1000"; }
t2() { echo "0 $half ioband $p2 pend 0 $1 user range-bw 0 :0:0 2000:$2:0 bandwidth=1000"; }
dm_create pendi1 "$(t1 16 300)" >/dev/null
dmsetup create pendi2 --notable || fail "create pendi2 without a table"
on_exit "dmsetup remove --retry pendi2"
io_limit() { dmsetup table "$@" | cut -d' ' -f7; }

# refused_load REASON TABLE: the load fails and the kernel log says why
refused_load() {
	dmesg -c >/dev/null
	if echo "$2" | dmsetup load pendi2 2>/dev/null; then
		fail "pendi2 loaded '$2'"
	fi
	dmesg | grep -qF "$1" || fail "no '$1' in the log: $(dmesg | tail -n 3)"
}
# refused_resume REASON: the resume fails and the kernel log says why
refused_resume() {
	dmesg -c >/dev/null
	dmsetup resume pendi2 2>/dev/null && fail "pendi2 resumed"
	dmesg | grep -qF "table not resumed: $1" ||
		fail "no 'table not resumed: $1' in the log: $(dmesg | tail -n 3)"
}

# --- settings that differ from the live group's are refused at load ----------
refused_load "io_limit differs from the device group's: change it by message" "$(t2 32 100)"
refused_load "policy differs" "0 $half ioband $p2 pend 0 16 user weight 0 bandwidth=1000"
refused_load "bandwidth differs" "0 $half ioband $p2 pend 0 16 user range-bw 0 :0:0"
log "tables whose settings differ from the live device group's refused at load"

# --- a loaded table's minimums make no valid message fail ----------------------
t2 16 600 | dmsetup load pendi2 || fail "load pendi2 with the group's settings"
assert_eq "$(dmsetup table --inactive pendi2 | awk '{print $NF}')" bandwidth=1000 "inactive table"
# 500 + 0 of the live devices fit 1000; the loaded table's 600 do not count yet
dmsetup message pendi1 0 range-bw 1000:500:0 ||
	fail "a valid message refused because of a table not yet live"
# ... but they count when it is resumed
refused_resume "minimum bandwidths add up past the device group's bandwidth"
dmsetup message pendi1 0 range-bw 1000:300:0 || fail "lower pendi1's minimum"
dmsetup resume pendi2 || fail "resume pendi2 once its minimums fit"
log "a loaded table's minimums counted only when it was resumed"

# --- resuming one device never changes another's settings ----------------------
dmsetup message pendi1 0 io_limit 8 || fail "io_limit message"
assert_eq "$(io_limit pendi2)" 8 "io_limit seen by the other live device"
refused_load "io_limit differs from the device group's: change it by message" "$(t2 16 100)"
t2 8 100 | dmsetup load pendi2 || fail "load with the group's io_limit"
dmsetup message pendi1 0 io_limit 4 || fail "io_limit message while a table is loaded"
dmsetup suspend pendi2 || fail "suspend pendi2"
refused_resume "io_limit differs from the device group's"
assert_eq "$(io_limit pendi1)" 4 "pendi1's io_limit after pendi2's refused resume"
t2 4 100 | dmsetup load pendi2 && dmsetup resume pendi2 || fail "reload pendi2 with io_limit 4"
assert_eq "$(io_limit pendi1)" 4 "pendi1's io_limit after pendi2's resume"
log "a device's resume kept the other's settings"

# --- a device alone in its group brings its table's settings --------------------
dmsetup remove pendi2 || fail "remove pendi2"
t1 32 300 | dmsetup load pendi1 && dmsetup suspend pendi1 && dmsetup resume pendi1 ||
	fail "reload the lone pendi1 with io_limit 32"
assert_eq "$(io_limit pendi1)" 32 "the lone device's reloaded io_limit"
dd if=/dev/zero of=$(dm_node pendi1) bs=4k count=16 oflag=direct 2>/dev/null ||
	fail "I/O through pendi1"
log "a device alone in its group took its reloaded table's settings"

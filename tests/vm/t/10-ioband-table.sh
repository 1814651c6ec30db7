#!/bin/bash
# Table lines and messages: every form accepted or refused as documented,
# the dmsetup table round trip, the status format, and refused input that
# changes nothing.
# timeout: 400
. /tests/lib.sh

nb=$(nullb_create tbl0 64)
sz=$(blockdev --getsz "$nb")

# --- good table lines ---------------------------------------------------------
good() {
	local name=$1 args=$2
	echo "0 $sz ioband $nb $args" | dmsetup create "$name" ||
		fail "refused good table: $args"
	dmsetup remove "$name" || fail "remove $name"
}
good g1 "share1 10 400 user weight 2048 :100 1000:80 2000:20"
good g2 "1 0 0 none weight 0 :40"
good g3 "dg 0 0 uid weight-iosize 0"
good g4 "dg 0 0 gid weight 0 :1 0:10000"
good g5 "dg 0 0 pid weight 0 :5 1:5 4194304:5"
good g6 "dg 0 0 pgrp weight 0"
good g7 "dg 0 0 cgroup weight 0 :10 1:20 9223372036854775807:30"

# --- bad table lines: refused, with the reason in the kernel log ----------------
bad() {
	local args=$1 reason=$2
	dmesg -c >/dev/null
	if echo "0 $sz ioband $nb $args" | dmsetup create badtbl 2>/dev/null; then
		dmsetup remove badtbl
		fail "accepted bad table: $args"
	fi
	dmesg | grep -q "$reason" || fail "no '$reason' in kernel log for: $args ($(dmesg | tail -n 3))"
	dmsetup info badtbl >/dev/null 2>&1 && dmsetup remove badtbl
	return 0
}
bad "dg 0 0 none weight" "too few arguments"
bad "dg 0 0 bogus weight 0" "unknown group type"
bad "dg 0 0 none bogus 0" "unknown policy"
bad "dg 8 4 none weight 0" "io_throttle must not exceed io_limit"
bad "dg 0 0 none weight 0 :0" "weight must be"
bad "dg 0 0 none weight 0 :5 1:5" "only the default group"
bad "dg 0 0 user weight 0 1:5 1:6" "duplicate group id"
bad "dg 0 0 pid weight 0 0:5" "out of range"
bad "dg/x 0 0 none weight 0" "device group id"
bad "dg 0 0 none weight 99999999999999999999" "token_base"
bad "dg 0 0 gid range-bw 0 :500:100" "minimum bandwidth above maximum"

# --- the table round trip -------------------------------------------------------
line="rt 10 400 user weight 2048 :100 1000:80 2000:20"
dev=$(dm_create rt "0 $sz ioband $nb $line")
majmin=$(cat /sys/block/$(basename "$nb")/dev)
want="0 $sz ioband $majmin rt 10 400 user weight 2048 :100 1000:80 2000:20"
assert_eq "$(dmsetup table rt)" "$want" "dmsetup table"
# Load the printed table into a second device: same table back.
dmsetup table rt | dmsetup create rt2 || fail "reloading the printed table"
on_exit "dmsetup remove rt2"
assert_eq "$(dmsetup table rt2)" "$want" "table of the reloaded line"

# --- status: the ancestor's format ------------------------------------------------
st=$(dmsetup status rt)
echo "$st" | grep -Eq "^0 $sz ioband rt -1 0 0 0 0 0 0 1000 0 0 0 0 0 0 2000 0 0 0 0 0 0\$" ||
	fail "status format: $st"
dd if="$dev" of=/dev/null bs=4k count=10 iflag=direct status=none || fail "read"
dd if=/dev/zero of="$dev" bs=4k count=3 oflag=direct status=none || fail "write"
set -- $(dmsetup status rt)
# 0 len ioband dg id reads dreads rsect writes dwrites wsect
assert_eq "$5" -1 "default group id"
assert_eq "$6" 10 "reads counted"
assert_eq "$8" 80 "read sectors counted"
assert_eq "$9" 3 "writes counted"
assert_eq "${11}" 24 "write sectors counted"
dmsetup message rt 0 reset || fail "reset"
set -- $(dmsetup status rt)
assert_eq "$6 $9" "0 0" "statistics after reset"

# --- messages -------------------------------------------------------------------
msg() { dmsetup message rt 0 -- "$@" || fail "message refused: $*"; }
msg weight 50
msg weight 1000:70
msg weight -1:60
msg attach 3000
msg weight 3000:5
msg detach 2000
msg token 4096
msg carryover 5
msg io_limit 64
msg io_throttle 8
msg policy weight-iosize
assert_eq "$(dmsetup table rt)" \
	"0 $sz ioband $majmin rt 8 64 user weight-iosize 4096 :60 1000:70 3000:5" \
	"table after messages"
# Settings are shared by the device group: rt2 sees them too.
assert_eq "$(dmsetup table rt2 | cut -d' ' -f6-10)" "8 64 user weight-iosize 4096" \
	"device group settings shared"

before=$(dmsetup table rt)
badmsg() {
	local reason=$1
	shift
	dmesg -c >/dev/null
	if dmsetup message rt 0 -- "$@" 2>/dev/null; then
		fail "accepted bad message: $*"
	fi
	dmesg | grep -q "$reason" || fail "no '$reason' in kernel log for message: $* ($(dmesg | tail -n 2))"
	assert_eq "$(dmsetup table rt)" "$before" "table after refused message: $*"
}
badmsg "unknown message" bogus
badmsg "weight must be" weight 0
badmsg "weight must be" weight 1000:10001
badmsg "no such group" weight 4242:10
badmsg "group already attached" attach 1000
badmsg "no such group" detach 4242
badmsg "detach all groups" type gid
badmsg "unknown group type" type bogus
badmsg "unknown policy" policy bogus
badmsg "io_throttle must not exceed io_limit" io_throttle 100
badmsg "io_throttle must not exceed io_limit" io_limit 4
badmsg "value missing or out of range" token 0
badmsg "value missing or out of range" carryover 101
badmsg "out of range for the group type" attach 4294967295
badmsg "takes no argument" reset now

# Reloading the printed table changes nothing.
dmsetup table rt | dmsetup load rt && dmsetup suspend rt && dmsetup resume rt ||
	fail "reloading the printed table"
assert_eq "$(dmsetup table rt)" "$before" "table after reloading it"

# type changes once the groups are gone
msg detach 1000
msg detach 3000
msg type gid
assert_eq "$(dmsetup table rt | cut -d" " -f8)" gid "type after message"
log "table, status and messages as documented"

#!/bin/bash
# range-bw's promise check: with the device group's bandwidth stated
# (bandwidth=<KB/s> in the table, or the bandwidth message), minimums that
# would add up past it are refused, across every device of the device
# group, and a refused message changes nothing.
# timeout: 120
. /tests/lib.sh

nb=$(nullb_create rbw0 64)
half=$(($(blockdev --getsz "$nb") / 2))
p1=$(dm_create rbwp1 "0 $half linear $nb 0")
p2=$(dm_create rbwp2 "0 $half linear $nb $half")
dm_create rbw1 "0 $half ioband $p1 rbwdg 0 0 gid range-bw 0 :0:0 10:300:0 20:200:0 bandwidth=1000" >/dev/null
dm_create rbw2 "0 $half ioband $p2 rbwdg 0 0 gid range-bw 0 :0:0 30:400:0 bandwidth=1000" >/dev/null

# refused DEV REASON MSG...: the message fails, and the kernel log says why.
refused() {
	local dev=$1 why=$2 n
	shift 2
	n=$(dmesg | grep -c "message \"$1\" refused: .*$why")
	if dmsetup message "$dev" 0 -- "$@" 2>/dev/null; then
		fail "message to $dev accepted: $*"
	fi
	[ "$(dmesg | grep -c "message \"$1\" refused: .*$why")" -gt "$n" ] ||
		fail "message to $dev refused, but not because '$why': $*"
}
msg() { dmsetup message "$1" 0 -- "${@:2}" || fail "message to $1 refused: ${*:2}"; }

t1=$(dmsetup table rbw1)
t2=$(dmsetup table rbw2)
case $t1 in
*" 10:300:0 20:200:0 bandwidth=1000") ;;
*) fail "table of rbw1 does not round-trip its bandwidth: $t1" ;;
esac

# 300 + 200 + 400 = 900: raising 30's minimum to 600 would make 1100.
refused rbw2 'add up' range-bw 30:600:0
assert_eq "$(dmsetup table rbw2)" "$t2" "rbw2's table after a refused range"
msg rbw2 range-bw 30:500:0
t2=$(dmsetup table rbw2)
# Another device's group counts too: the sum is now exactly 1000.
refused rbw1 'add up' range-bw -1:1:0
refused rbw1 'add up' bandwidth 999
assert_eq "$(dmsetup table rbw1)" "$t1" "rbw1's table after refused messages"
# The bandwidth is the device group's: set on one device, shown on both.
msg rbw1 bandwidth 2000
case $(dmsetup table rbw2) in
*" bandwidth=2000") ;;
*) fail "rbw2 does not show the device group's new bandwidth: $(dmsetup table rbw2)" ;;
esac
msg rbw1 range-bw -1:1000:0
# 0 withdraws the statement and with it the check.
msg rbw2 bandwidth 0
case $(dmsetup table rbw2) in
*bandwidth*) fail "bandwidth still shown after 0: $(dmsetup table rbw2)" ;;
esac
msg rbw2 range-bw 30:100000:0
refused rbw2 'add up' bandwidth 1000
refused rbw2 'value missing or out of range' bandwidth 4294967296
log "sums of minimums checked across both devices of the device group"
dd if=/dev/zero of="$(dm_node rbw1)" bs=4k count=64 oflag=direct 2>/dev/null || fail "I/O after the messages"

#!/bin/bash
# A group that joins behind a lone group's deep queue (weight-time, the
# benchmark's depth-32 case): c, 16 processes keeping 32 reads each in
# flight, runs alone first, so io_limit (128) of its bios go down, most of
# them to wait in the model device's queue; then a (1 process x 32) and b
# (4 x 32) join, weights 4:2:1.  The lone group's bios spent their time
# in flight queued, which is not device time and teaches the estimator
# nothing: from 2 s after the join, every group is within 2 points of its
# weight's share of the device's busy time, and the device, not the
# guest's CPU, is the limit (busy at least 95 %).  The profile is the ssd
# x20 of 20-share-devtime, whose header says why; on the debug kernel a
# device not the limit is reported, not judged.
# icount: yes
# smp: 1
# long: debug
# timeout: 600
. /tests/lib.sh
. /tests/t/devtime.inc

SETTLE=2 WINDOW=4 SCALE=20	# seconds of guest time; the profile's times x SCALE
DT_RW=([a]=randread [b]=randread [c]=randread)
DT_JOBS=([a]=1 [b]=4 [c]=16)
DT_DEPTH=([a]=32 [b]=32 [c]=32)

# the model device's requests in flight (its tags in use)
in_flight() {
	local -a f
	while read -r -a f; do
		[ "${f[0]}" = total ] && [ "${f[7]}" = in_flight ] &&
			{ echo "${f[8]}"; return; }
	done <"$IOBM_CFS/$1/stats"
	fail "no in_flight in $IOBM_CFS/$1/stats"
}

dev=$(dt_device dtj0)
sz=$(blockdev --getsz "$dev")
dt_cgroups dtj
iob=$(dm_create dtj "0 $sz ioband $dev dtjdg 0 0 cgroup weight-time 0 $(dt_groups)")
dt_load dtj "$iob" dtj0 c
# c alone fills the device's 64 tags, more than its 4 channels serve
for ((i = 0; i < 100; i++)); do
	n=$(in_flight dtj0)
	[ "$n" -ge 64 ] && break
	sleep 0.1
done
[ "$n" -ge 64 ] || fail "c alone: $n requests in flight on the model device, want 64"
log "c alone: $n requests in flight on the model device"
dt_load dtj "$iob" dtj0 a b
dt_window dtj0 share_join
not_limit=$(dt_limit)
[ -z "$not_limit" ] || skip "$not_limit (%:$DT_MSG)"
dt_judge "weight-time, c deep first"
log "device time shares (%):$DT_MSG, within 2 points of 4:2:1"

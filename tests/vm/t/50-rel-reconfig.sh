#!/bin/bash
# Reconfiguration storm: three cgroups write and verify (crc32c) through
# ioband while this shell changes the configuration without pause, at least
# 1,000 operations: weights, detach/attach, policy and type switches, token,
# io_limit, io_throttle, carryover, ranges, reset, suspend/resume and table
# reloads with other weights.  No verify error, every fio ends in time.
# timeout: 600
. /tests/lib.sh
. /tests/t/rel.inc

OPS=${REL_OPS:-1000}
nb=$(nullb_create storm0 192 200000 4 1)
sz=$(blockdev --getsz "$nb")
ids=()
for c in a b c; do
	cg_create "storm-$c" >/dev/null
	ids+=("$(stat -c %i /sys/fs/cgroup/storm-$c)")
done
A=${ids[0]} B=${ids[1]} C=${ids[2]}
table() { echo "0 $sz ioband $nb stormdg 0 8 cgroup weight 2 :$1 $A:$2 $B:$3 $C:$4"; }
dev=$(dm_create storm "$(table 100 400 200 100)")

# Each cgroup runs fio again and again until the storm ends; every run
# verifies what it wrote.
n=0
for c in a b c; do
	rel_loop_start $c cg_run "storm-$c" timeout 180 fio --name="$c" \
		--filename="$dev" --rw=randwrite --bs=4k --size=2m \
		--offset=$((n * 64))m --offset_increment=16m --numjobs=2 \
		--direct=1 --ioengine=psync --verify=crc32c --verify_fatal=1 \
		--group_reporting
	n=$((n + 1))
done
runs_so_far() { ls "$TESTDIR"/loop-*/ | grep -c '^run-'; }

ops=0
held=0
op() {
	"$@" >/dev/null || fail "operation $((ops + 1)) refused: $*"
	ops=$((ops + 1))
}
msg() { op dmsetup message storm 0 -- "$@"; }
w() { echo $((RANDOM % 1000 + 1)); }
policies=(weight-iosize range-bw weight)
cycle=0
while [ $ops -lt "$OPS" ] || [ "$(runs_so_far)" -lt 6 ]; do
	[ -e "$TESTDIR"/loop-a/failed ] || [ -e "$TESTDIR"/loop-b/failed ] ||
		[ -e "$TESTDIR"/loop-c/failed ] && break
	[ $((cycle % 5)) = 0 ] && log "$ops operations, $(runs_so_far) fio runs"
	cycle=$((cycle + 1))
	msg weight "$A:$(w)"
	msg weight "$B:$(w)"
	msg weight "$(w)"
	msg detach "$C"
	msg attach "$C"
	msg weight "$C:$(w)"
	msg token $((RANDOM % 64 + 1))
	msg io_limit $((RANDOM % 29 + 4))
	msg io_throttle $((RANDOM % 5))
	msg carryover $((RANDOM % 6))
	msg policy "${policies[cycle % 3]}"
	msg range-bw "$B:$((RANDOM % 4000)):0"
	op dmsetup suspend storm
	op dmsetup resume storm
	held=$((held + $(rel_held storm)))
	if [ $((cycle % 5)) = 0 ]; then
		op dmsetup load storm --table "$(table "$(w)" "$(w)" "$(w)" "$(w)")"
		op dmsetup suspend storm
		op dmsetup resume storm
	fi
	if [ $((cycle % 10)) = 0 ]; then
		msg detach "$A"
		msg detach "$B"
		msg detach "$C"
		msg type gid
		msg type cgroup
		msg attach "$A"
		msg attach "$B"
		msg attach "$C"
	fi
	msg reset
done
log "$ops operations in $cycle cycles; waiting for the writers"
runs=0 bios=0
for c in a b c; do
	set -- $(rel_loop_stop $c)
	runs=$((runs + $1)) bios=$((bios + $2))
done
[ "$ops" -ge "$OPS" ] || fail "only $ops operations"
[ "$held" -gt 0 ] || fail "no bio was ever held: no contention"
# The device still works and is in the last configuration.
dd if="$dev" of=/dev/null bs=4k count=16 iflag=direct status=none || fail "read after the storm"
log "$runs fio runs verified, $bios I/Os, $held held bios seen, $ops operations"
report ops "$ops"
report bios "$bios"
report fio_runs "$runs"
report held_seen "$held"

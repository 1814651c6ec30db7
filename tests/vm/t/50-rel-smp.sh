#!/bin/bash
# Concurrency on a 4-CPU guest: on every CPU a writer (its own cgroup)
# verifies its data through two ioband devices of one device group, while
# four message loops, one per CPU, change weights, attach and detach groups
# and change the device group's settings on both devices at once.
# timeout: 400
# smp: 4
. /tests/lib.sh
. /tests/t/rel.inc

OPS=${REL_OPS:-150}	# per message loop
cpus=$(nproc)
[ "$cpus" -ge 4 ] || skip "needs a 4-CPU guest (has $cpus)"
nb0=$(nullb_create smp0 128 100000 8 1)
nb1=$(nullb_create smp1 128 100000 8 1)
sz=$(blockdev --getsz "$nb0")
ids=()
for c in 0 1 2 3; do
	cg_create "smp-$c" >/dev/null
	ids+=("$(stat -c %i /sys/fs/cgroup/smp-$c)")
done
groups="${ids[0]}:400 ${ids[1]}:300 ${ids[2]}:200 ${ids[3]}:100"
d0=$(dm_create smpa "0 $sz ioband $nb0 smpdg 0 8 cgroup weight 4 :100 $groups")
d1=$(dm_create smpb "0 $sz ioband $nb1 smpdg 0 8 cgroup weight 4 :100 $groups")

# writer on CPU c: half its jobs on each device
for c in 0 1 2 3; do
	rel_loop_start w$c cg_run "smp-$c" timeout 180 fio \
		--rw=randwrite --bs=4k --size=1m --offset=$((c * 16))m \
		--direct=1 --ioengine=psync --verify=crc32c --verify_fatal=1 \
		--cpus_allowed=$c --group_reporting \
		--name=a$c --filename="$d0" --name=b$c --filename="$d1"
done

# message loop on CPU c: its own extra groups, shared settings
msgloop() {
	local c=$1 i dev id
	for i in $(seq 1 "$OPS"); do
		dev=smpa
		[ $((i % 2)) = 0 ] && dev=smpb
		id=$((100000 + c * 1000 + i % 7))
		case $((i % 6)) in
		0) taskset -c "$c" dmsetup message $dev 0 weight "${ids[c]}:$((RANDOM % 1000 + 1))" ;;
		1) taskset -c "$c" dmsetup message $dev 0 attach $id ;;
		2) taskset -c "$c" dmsetup message $dev 0 token $((RANDOM % 32 + 1)) ;;
		3) taskset -c "$c" dmsetup message $dev 0 io_limit $((RANDOM % 16 + 1)) ;;
		4) taskset -c "$c" dmsetup message $dev 0 weight $((RANDOM % 1000 + 1)) ;;
		5) taskset -c "$c" dmsetup message $dev 0 reset ;;
		esac || echo "cpu $c op $i ($((i % 6))) on $dev" >>"$TESTDIR/msgfail"
		# detach what this loop attached, on whichever device holds it
		if [ $((i % 6)) = 1 ]; then
			taskset -c "$c" dmsetup message $dev 0 detach $id ||
				echo "cpu $c detach $id on $dev" >>"$TESTDIR/msgfail"
		fi
	done
}
pids=
for c in 0 1 2 3; do
	msgloop $c &
	pids="$pids $!"
done
for p in $pids; do
	wait "$p"
done
[ -e "$TESTDIR/msgfail" ] && fail "messages refused: $(head -n 5 "$TESTDIR/msgfail")"
msgs=$((4 * (OPS + OPS / 6)))
log "$msgs messages from 4 CPUs in parallel"
# let every writer finish at least one run while the messages ran
runs=0 bios=0
for c in 0 1 2 3; do
	rel_loop_stop w$c
	set -- "$LOOP_RUNS" "$LOOP_IOS"
	[ "$1" -ge 1 ] || fail "writer $c never ran"
	runs=$((runs + $1)) bios=$((bios + $2))
done
log "$runs fio runs on 4 CPUs verified, $bios I/Os"
report messages "$msgs"
report bios "$bios"
report fio_runs "$runs"

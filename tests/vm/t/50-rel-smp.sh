#!/bin/bash
# Concurrency on a 4-CPU guest: on every CPU a writer (its own cgroup)
# verifies its data through two ioband devices of one device group, while
# four message loops, one per CPU, change weights, attach and detach
# groups, ask for the latency statistics and change the device group's
# settings on both devices at once.
# timeout: 900
# smp: 4
. /tests/lib.sh
. /tests/t/rel.inc

OPS=${REL_OPS:-3000}	# messages per CPU, about
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
		--direct=1 --ioengine=psync --verify_fatal=1 \
		--cpus_allowed=$c --group_reporting \
		--name=a$c --filename="$d0" --name=b$c --filename="$d1"
done

# Message batch of CPU c, for dmmsg: its own extra groups (attached and
# detached again, on either device), weights and the shared settings.
batch() {
	awk -v c="$1" -v n="$OPS" -v g="${ids[$1]}" -v seed="$RANDOM" 'BEGIN {
		srand(seed)
		for (i = 1; i <= n; i++) {
			dev = i % 2 ? "smpa" : "smpb"
			id = 100000 + c * 1000 + i % 7
			op = i % 6
			if (op == 0) printf "%s weight %s:%d\n", dev, g, int(rand() * 1000) + 1
			if (op == 1) printf "%s attach %d\n%s detach %d\n", dev, id, dev, id
			if (op == 2) printf "%s token %d\n", dev, int(rand() * 32) + 1
			if (op == 3) printf "%s io_limit %d\n", dev, int(rand() * 16) + 1
			if (op == 4) printf "%s weight %d\n", dev, int(rand() * 1000) + 1
			if (op == 5) printf "%s %s\n", dev, i % 12 == 5 ? "reset" : "latency"
		}
	}'
}
# Rounds of four batches in parallel, one per CPU, until every writer has
# finished a run (so the messages met the writers' I/O all along).
msgs=0
rounds=0
# a writer's second run has started once its first has finished
finished() { # the fewest runs started by any writer, less one
	local c k min=999999
	for c in 0 1 2 3; do
		k=$(ls "$TESTDIR/loop-w$c" | grep -c '^run-')
		[ "$k" -lt $min ] && min=$k
	done
	echo $((min - 1))
}
# Where the writers' fio processes wait (held bios are not in the dm
# device's inflight: ioband accounts a bio when it goes down).
writers_dump() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(cat "$p/comm" 2>/dev/null)" = fio ] || continue
		log "fio ${p#/proc/} state $(cut -d' ' -f3 "$p/stat"): $(tr '\n' ' ' <"$p/stack" 2>/dev/null)"
	done
	log "smpa: $(dmsetup status smpa)"
	log "smpb: $(dmsetup status smpb)"
}
while [ $rounds -lt 2 ] || [ "$(finished)" -lt 1 ]; do
	rounds=$((rounds + 1))
	[ $rounds -le 200 ] || {
		writers_dump
		fail "the writers did not finish a run in 200 rounds"
	}
	pids=
	for c in 0 1 2 3; do
		batch $c >"$TESTDIR/batch.$c"
		msgs=$((msgs + $(wc -l <"$TESTDIR/batch.$c")))
		taskset -c $c dmmsg <"$TESTDIR/batch.$c" >"$TESTDIR/dmmsg.$c" 2>&1 &
		pids="$pids $!"
	done
	c=0
	for p in $pids; do
		wait "$p" || fail "CPU $c: messages refused: $(tail -n 3 "$TESTDIR/dmmsg.$c")"
		c=$((c + 1))
	done
done
log "$msgs messages from 4 CPUs in parallel, $rounds rounds"
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

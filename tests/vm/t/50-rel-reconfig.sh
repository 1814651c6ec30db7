#!/bin/bash
# Reconfiguration storm: three cgroups write and verify (crc32c) through
# ioband while this shell changes the configuration without pause, at least
# 1,000 operations: weights, detach/attach, policy and type switches, token,
# io_limit, io_throttle, carryover, ranges, reset (messages, in batches
# through dmmsg), suspend/resume and table reloads with other weights
# (dmsetup).  No verify error, every fio ends in time, the device works,
# the device below completed exactly the I/Os fio issued (ioband's own
# counts are reset by the storm and lose detached groups), and each bio
# ioband held it released once.
# timeout: 400
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
rel_below_prepare "$nb"
below0=$(rel_below_ios "$nb")
rel_trace_start

# Each cgroup runs fio again and again until the storm ends; every run
# verifies what it wrote.
n=0
for c in a b c; do
	rel_loop_start $c cg_run "storm-$c" timeout 180 fio --name="$c" \
		--filename="$dev" --rw=randwrite --bs=4k --size=2m \
		--offset=$((n * 64))m --offset_increment=16m --numjobs=2 \
		--direct=1 --ioengine=psync --verify_fatal=1 \
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
# A batch of messages, one dmmsg process for all (a dmsetup per message
# would cost ~100 ms each under TCG): weights of every group, detach and
# attach, the device group's settings, a policy switch, a range, and every
# fifth cycle a type switch (allowed only with no group attached).  The
# statistics are reset after each batch, with dmsetup.
w() { echo $((RANDOM % 1000 + 1)); }
batch() { # cycle
	awk -v seed="$RANDOM" -v cyc="$1" -v a="$A" -v b="$B" -v c="$C" 'BEGIN {
		srand(seed)
		split("weight-iosize range-bw weight", pol, " ")
		for (j = 0; j < 8; j++) {
			printf "storm weight %s:%d\n", a, int(rand() * 1000) + 1
			printf "storm weight %s:%d\n", b, int(rand() * 1000) + 1
			printf "storm weight %d\n", int(rand() * 1000) + 1
			printf "storm detach %s\nstorm attach %s\n", c, c
			printf "storm weight %s:%d\n", c, int(rand() * 1000) + 1
			printf "storm token %d\n", int(rand() * 64) + 1
			printf "storm io_limit %d\n", int(rand() * 29) + 4
			printf "storm io_throttle %d\n", int(rand() * 5)
			printf "storm carryover %d\n", int(rand() * 6)
			printf "storm policy %s\n", pol[(cyc + j) % 3 + 1]
			printf "storm range-bw %s:%d:0\n", b, int(rand() * 4000)
		}
		if (cyc % 5 == 0) {
			printf "storm detach %s\nstorm detach %s\nstorm detach %s\n", a, b, c
			printf "storm type gid\nstorm type cgroup\n"
			printf "storm attach %s\nstorm attach %s\nstorm attach %s\n", a, b, c
		}
	}'
}
cycle=0
while [ $ops -lt "$OPS" ] || [ "$(runs_so_far)" -lt 6 ]; do
	[ -e "$TESTDIR"/loop-a/failed ] || [ -e "$TESTDIR"/loop-b/failed ] ||
		[ -e "$TESTDIR"/loop-c/failed ] && break
	[ $((cycle % 10)) = 0 ] && log "$ops operations, $(runs_so_far) fio runs"
	cycle=$((cycle + 1))
	batch $cycle >"$TESTDIR/batch"
	dmmsg <"$TESTDIR/batch" >"$TESTDIR/dmmsg.out" 2>&1 ||
		fail "cycle $cycle: messages refused: $(tail -n 3 "$TESTDIR/dmmsg.out")"
	ops=$((ops + $(wc -l <"$TESTDIR/batch")))
	held=$((held + $(rel_held storm)))
	op dmsetup message storm 0 reset
	op dmsetup suspend storm
	op dmsetup resume storm
	if [ $((cycle % 3)) = 0 ]; then
		op dmsetup load storm --table "$(table "$(w)" "$(w)" "$(w)" "$(w)")"
		op dmsetup suspend storm
		op dmsetup resume storm
	fi
done
log "$ops operations in $cycle cycles; waiting for the writers"
runs=0 bios=0
for c in a b c; do
	rel_loop_stop $c
	set -- "$LOOP_RUNS" "$LOOP_IOS"
	runs=$((runs + $1)) bios=$((bios + $2))
done
[ "$ops" -ge "$OPS" ] || fail "only $ops operations"
[ "$held" -gt 0 ] || fail "no bio was ever held: no contention"
below=$(($(rel_below_ios "$nb") - below0))
assert_eq "$below" "$bios" "I/Os completed below ioband vs issued by fio"
holds=$(rel_trace_balance)
# The device still works and is in the last configuration.
dd if="$dev" of=/dev/null bs=4k count=16 iflag=direct status=none || fail "read after the storm"
log "$runs fio runs verified, $bios I/Os (as many completed below), $held held bios seen ($holds traced, each released once), $ops operations"
report ops "$ops"
report bios "$bios"
report fio_runs "$runs"
report held_seen "$held"
report holds_traced "$holds"

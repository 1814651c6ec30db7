#!/bin/bash
# Held bios go down from the CPU that mapped them (issue 16; section 7 of
# the design essay in drivers/md/dm-ioband.c).  Two readers, each pinned
# to a vCPU of its own and in a cgroup of its own group, share io_limit 4
# on a null_blk with a submission queue per CPU and 10 ms completions, so
# most of their reads are held, and are released by either reader's
# completions.  The device must be slower than the readers, or most reads
# find a free slot: at 4 reads in flight it serves 400 a second, which a
# debug guest on a loaded host still outpaces.  dm fires block_bio_remap
# where a bio is sent to the device below: in map() for a read that
# passes, in ioband's worker for a held one.  Every read of each reader
# must be sent from the reader's vCPU, and many of each must have been
# held.
# timeout: 300
. /tests/lib.sh

CPUS=$(nproc)
[ "$CPUS" -ge 2 ] || skip "$CPUS vCPUs, want 2"
N=2000
nb=$(NULLB_ATTRS="submit_queues=$CPUS" nullb_create rc0 256 10000000)
sz=$(blockdev --getsz "$nb")
ids=()
for c in a b; do
	p=$(cg_create "rc-$c")
	ids+=("$(stat -c %i "$p")")
done
dev=$(dm_create rc "0 $sz ioband $nb rcdg 0 4 cgroup weight 0 :100 ${ids[0]}:100 ${ids[1]}:100")
dm=$(dev_t_of "$dev")

echo 8192 >$TRACEFS/buffer_size_kb || fail "trace buffer size"
trace_start block/block_bio_remap ioband/ioband_hold
pids=()
for i in 0 1; do
	c=$([ $i = 0 ] && echo a || echo b)
	cg_run "rc-$c" fio --name="r$i" --filename="$dev" --direct=1 --rw=randread \
		--bs=4k --ioengine=libaio --iodepth=8 --cpus_allowed=$i \
		--offset=$((i * 64))m --size=64m --number_ios=$N \
		--output="$TESTDIR/fio-$i.out" &
	pids+=($!)
done
for i in 0 1; do
	wait "${pids[$i]}" || fail "reader $i: $(tail -n 3 "$TESTDIR/fio-$i.out")"
done
trace_stop
cp $TRACEFS/trace "$TESTDIR/trace"

# Per reader (by offset: reader 1 from 64 MiB): its reads sent below, those
# sent from another vCPU than its own, and its reads held.
read -r sent0 away0 sent1 away1 <<<"$(awk -v dm="($dm)" '
	/ block_bio_remap: / {
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^\[[0-9]+\]$/) cpu = substr($i, 2, length($i) - 2) + 0
			if ($i == "<-" && $(i + 1) == dm) sec = $(i + 2)
		}
		if (sec == "") next
		r = sec >= 131072
		sent[r]++
		if (cpu != r) away[r]++
		sec = ""
	}
	END { print sent[0] + 0, away[0] + 0, sent[1] + 0, away[1] + 0 }' "$TESTDIR/trace")"
held0=$(grep -c "ioband_hold: .*group=${ids[0]} " "$TESTDIR/trace")
held1=$(grep -c "ioband_hold: .*group=${ids[1]} " "$TESTDIR/trace")
log "reader 0: $sent0 reads sent, $away0 from another vCPU, $held0 held; reader 1: $sent1 sent, $away1 from another vCPU, $held1 held"
report release_cpu_away $((away0 + away1))
report release_cpu_held $((held0 + held1))
assert_eq "$sent0 $sent1" "$N $N" "reads sent below, by reader (block_bio_remap)"
[ "$held0" -ge $((N / 4)) ] && [ "$held1" -ge $((N / 4)) ] ||
	fail "too few reads held to judge: $held0 and $held1, want at least $((N / 4)) each"
[ "$away0" = 0 ] && [ "$away1" = 0 ] ||
	fail "held reads sent from another CPU than their submitter's: $away0 of reader 0's (vCPU 0), $away1 of reader 1's (vCPU 1)"

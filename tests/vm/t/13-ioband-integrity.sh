#!/bin/bash
# Data integrity under contention: three cgroups weighted 400:200:100 write
# and verify (crc32c) their own regions at once through ioband, with
# a one-token window and io_limit 8, so that bios are held.
# timeout: 400
# long: debug
. /tests/lib.sh

nb=$(nullb_create integ0 256 100000 4 1)
sz=$(blockdev --getsz "$nb")
ids=""
for c in a b c; do
	cg_create "integ-$c" >/dev/null
	ids="$ids $(stat -c %i /sys/fs/cgroup/integ-$c)"
done
set -- $ids
dev=$(dm_create integ "0 $sz ioband $nb integdg 0 8 cgroup weight 1 :100 $1:400 $2:200 $3:100")

n=0
for c in a b c; do
	cg_run "integ-$c" fio --name="$c" --filename="$dev" --rw=randwrite \
		--bs=4k --size=8m --offset=$((n * 64))m --offset_increment=16m \
		--numjobs=2 --direct=1 --ioengine=psync $(fio_verify_args) \
		--verify_fatal=1 --group_reporting >"$TESTDIR/fio-$c.out" 2>&1 &
	eval "pid_$c=$!"
	n=$((n + 1))
done
for c in a b c; do
	eval "wait \$pid_$c" || fail "fio in $c: $(tail -n 5 "$TESTDIR/fio-$c.out")"
done

st=$(dmsetup status integ)
log "status: $st"
for id in $ids; do
	delayed=$(echo "$st" | awk -v id="$id" '{
		for (i = 5; i + 6 <= NF; i += 7) if ($i == id) print $(i+5) }')
	total_delayed=$((${total_delayed:-0} + ${delayed:-0}))
done
[ "$total_delayed" -gt 0 ] || fail "no bio was ever held: no contention tested"
log "three groups wrote and verified 48 MiB under contention ($total_delayed bios held)"

#!/bin/bash
# ioband with io_uring, bios larger than 4 MiB (the most a group holds), a
# zoned device and swap, each checked for integrity: two cgroups' writers
# (weights 400 and 100) queue in ioband (io_limit 1), and verify with a
# pattern new to the run (fio_verify_args).  The layers users stack with
# ioband (dm-crypt, dm-thin, md raid1, loop, above and below) are
# 40-stack-layers.sh.
# timeout: 480
# long: debug
. /tests/lib.sh
. /tests/t/stack.inc
. /tests/t/kinds.inc
require fio

# io_uring: REQ_NOWAIT bios that would be held end with EAGAIN and come
# back from io_uring's worker; the data must be there exactly once.
WHAT="io_uring"
N=$((N + 1))
sk_ioband "$(stk_nullb skd$N 128)"
SK_ENGINE=io_uring SK_FIO="--iodepth=16" sk_writers "$SK_DEV"
h=$(sk_held)
[ "$h" -gt 0 ] || fail "$WHAT: no bio held"
log "$WHAT: verified at depth 16, $h bios held"

# Bios larger than the 4 MiB a group may hold go through ioband whole.
# big_start: record the bios ioband maps that are larger than 4 KiB (the
# 4 KiB writes beside them overran the trace buffer once); biggest: the
# largest of them, in sectors
big_start() {
	echo "nr_sector > 8" >$TRACEFS/events/ioband/ioband_map/filter || fail "trace filter"
	on_exit "echo 0 > $TRACEFS/events/ioband/ioband_map/filter"
	trace_start ioband/ioband_map
}
biggest() {
	awk '/ ioband_map: / { for (i = 1; i <= NF; i++) if ($i ~ /^nr_sector=/) {
		n = substr($i, 11) + 0; if (n > m) m = n } } END { print m + 0 }' $TRACEFS/trace
}
# A 16 MiB discard, one bio, from a's cgroup over data it wrote, while b's
# writers verify theirs: the range reads back as zeros, b's data is intact.
WHAT="a 16 MiB discard"
N=$((N + 1))
sk_ioband "$(stk_nullb skd$N 64 discard=1)"
cg_run sk-a dd if=/dev/urandom of="$SK_DEV" bs=1M seek=32 count=16 oflag=direct status=none ||
	fail "$WHAT: writing the range"
big_start
cg_run sk-b fio --name=b --filename="$SK_DEV" --rw=randwrite --bs=4k --size=4m \
	--numjobs=2 --offset_increment=4m --direct=1 --ioengine=psync \
	$(fio_verify_args) --verify_fatal=1 >"$TESTDIR/fio-b.out" 2>&1 &
bw=$!
cg_run sk-a blkdiscard -o $((32 << 20)) -l $((16 << 20)) "$SK_DEV" || fail "$WHAT: blkdiscard"
wait $bw || fail "$WHAT: b's writer failed: $(grep -hiE "err|verify|bad" "$TESTDIR/fio-b.out" | head -n 4)"
trace_stop
big=$(biggest)
[ "$big" -ge $((16 << 11)) ] || fail "$WHAT: the largest bio ioband saw had $big sectors"
nz=$(dd if="$SK_DEV" bs=1M skip=32 count=16 iflag=direct status=none | tr -d '\000' | wc -c)
[ "$nz" = 0 ] || fail "$WHAT: $nz bytes of the discarded range are not zero"
log "$WHAT: one bio of $big sectors; zeros read back, b's writes verified"

# Writes of 8 MiB from huge pages (four 2 MiB pages make one bio), where
# the kernel has them (the debug kernel has neither hugetlbfs nor THP:
# there the discard above is the only bio over 4 MiB).
WHAT="8 MiB writes"
if [ -e /proc/sys/vm/nr_hugepages ]; then
	on_exit "echo 0 > /proc/sys/vm/nr_hugepages"
	echo 64 >/proc/sys/vm/nr_hugepages
	[ "$(cat /proc/sys/vm/nr_hugepages)" -ge 48 ] ||
		fail "$WHAT: $(cat /proc/sys/vm/nr_hugepages) huge pages of the 48 wanted (each fio job takes 5 for its 8 MiB buffer)"
	N=$((N + 1))
	sk_ioband "$(stk_nullb skd$N 128)"
	big_start
	SK_BS=8m SK_MB=16 SK_FIO="--iomem=shmhuge" sk_writers "$SK_DEV"
	trace_stop
	big=$(biggest)
	[ "$big" -gt 8192 ] || fail "$WHAT: the largest bio ioband saw had $big sectors"
	log "$WHAT: verified; the largest bio ioband mapped had $big sectors"
else
	log "$WHAT: not tried, no huge pages in this kernel"
	report stack_kinds_hugepage_writes not-tried
fi

# A zoned device: refused at table load, with the reason in the log.
WHAT="zoned"
zd=$(stk_nullb skz 256 zoned=1 zone_size=16)
zsz=$(blockdev --getsz "$zd")
if dmsetup create skzio --table "0 $zsz ioband $zd skzdg 0 0 none weight 0 :100" 2>"$TESTDIR/zoned.err"; then
	dmsetup remove skzio
	fail "$WHAT: ioband loaded over a zoned device"
fi
why=$(dmesg | grep "zoned devices are not supported" | tail -n 1)
[ -n "$why" ] || fail "$WHAT: refused without ioband's reason: $(dmesg | tail -n 3)"
log "$WHAT: refused (${why#*] })"

# Swap on ioband under memory pressure: 32 MiB in a cgroup limited to
# 12 MiB goes out to swap and back, twice (64 MiB took 200 s on debug).  Swap bios are REQ_SWAP: never
# held (see 3. in dm-ioband.c), but they pass through ioband and count.
WHAT="swap"
N=$((N + 1))
sk_ioband "$(stk_nullb skd$N 256)"
mkswap "$SK_DEV" >/dev/null || fail "mkswap on ioband"
swapon "$SK_DEV" || fail "swapon $SK_DEV"
on_exit "swapoff $SK_DEV"
cg_create sk-swap >/dev/null
S=$(stat -c %i $CG_ROOT/sk-swap)
echo 12M >$CG_ROOT/sk-swap/memory.max || fail "memory.max"
out=$(cg_run sk-swap memverify 32 2) || fail "$WHAT: memverify: $out"
ws=$(dmsetup status "$SK_IO" | awk '{ s = 0; for (i = 5; i + 6 <= NF; i += 7) s += $(i + 6); print s }')
[ "$ws" -ge $((20 << 11)) ] || fail "$WHAT: only $ws sectors written to swap through ioband"
log "$WHAT: $out; $ws sectors swapped out through ioband"

#!/bin/bash
# The model device (tests/modeldev), by its own account: each request costs
# what model.h says (direction, size, seek), also after a cost is changed
# while the device is on, the channels serve at once,
# the stats charge device time to the submitting cgroup through a
# dm-linear, and the write cache is declared, flushed, and lost in a crash.
# The guest's clock is checked against the model in 06-modeldev-timing.
# timeout: 600
# long: debug
. /tests/lib.sh
. /tests/t/modeldev.inc

# ---- cost per request ---------------------------------------------------
ssd=$(iobm_create mssd 1024 ssd)
reset_stats mssd
fio_run "$ssd" randrw 4k 1 60 >/dev/null
for rw in read write; do
	want=$(model_ns mssd $rw 4)
	got=$(dir_busy_per_req mssd $rw)
	log "4 KiB $rw: $got ns of device time a request, model $want"
	same "$got" "$want" "4 KiB $rw's device time (ns)"
done
same "$(total mssd max_busy_channels)" 1 "channels busy at once at depth 1"

# ---- channels -----------------------------------------------------------
# 256 KiB reads at depth 8: all 4 channels busy, the rest in the FIFO.
# The guest must submit 8 before the first completes: at the profile's
# 1.1 ms a read the debug kernel (idle host) reached only 3 in flight,
# and with 64 KiB (356 us) 2-5, where production kept 8.  So the reads
# cost ten times the profile's per KiB here (11 ms), which the device
# takes while powered on.  (1 MiB reads were split in two: 10 in flight.)
r0=$(attr mssd read_per_kib_ns)
echo $((10 * r0)) >"$IOBM_CFS/mssd/read_per_kib_ns" ||
	fail "read_per_kib_ns refused while powered on"
reset_stats mssd
fio_run "$ssd" randread 256k 8 400 >/dev/null
log "depth 8: max in flight $(total mssd max_in_flight), max busy channels $(total mssd max_busy_channels)"
inflight=$(total mssd max_in_flight)
[ "$inflight" -gt "$(attr mssd channels)" ] && [ "$inflight" -le 8 ] ||
	fail "requests in the device at depth 8: $inflight, want more than its $(attr mssd channels) channels and at most 8"
same "$(total mssd max_busy_channels)" "$(attr mssd channels)" "channels busy at once at depth 8"
same "$(busy_per_req mssd)" "$(model_ns mssd read 256)" "256 KiB read's device time (ns)"
echo "$r0" >"$IOBM_CFS/mssd/read_per_kib_ns" || fail "read_per_kib_ns back"

# ---- costs changed while powered on --------------------------------------
# A request that starts after the change costs the new time (the bench's
# device that changes mid-run); the disk's shape waits for power off.
w0=$(attr mssd write_base_ns)
echo $((2 * w0)) >"$IOBM_CFS/mssd/write_base_ns" ||
	bad "write_base_ns refused while powered on"
reset_stats mssd
fio_run "$ssd" randwrite 4k 1 20 >/dev/null
same "$(dir_busy_per_req mssd write)" "$(model_ns mssd write 4)" \
	"4 KiB write's device time after write_base_ns doubled while on (ns)"
echo "$w0" >"$IOBM_CFS/mssd/write_base_ns" || bad "write_base_ns back"
echo 8 >"$IOBM_CFS/mssd/channels" 2>/dev/null &&
	bad "channels changed while powered on"
same "$(attr mssd channels)" 4 "channels after a refused change"

# ---- seek -----------------------------------------------------------------
# disk profile over 1 GiB (its full seek): sequential reads never seek,
# random ones seek a third of the disk on average: seek_min + (seek_max -
# seek_min) / 3 (model.h).
disk=$(iobm_create mdisk 1024 disk)
seq_want=$(model_ns mdisk read 4)
rand_want=$((seq_want + $(attr mdisk seek_min_ns) +
	($(attr mdisk seek_max_ns) - $(attr mdisk seek_min_ns)) / 3))
reset_stats mdisk
fio_run "$disk" read 4k 1 200 >/dev/null
seq=$(busy_per_req mdisk)
reset_stats mdisk
fio_run "$disk" randread 4k 1 150 >/dev/null
rand=$(busy_per_req mdisk)
log "disk 4 KiB reads: sequential $seq ns a request (model $seq_want), random $rand ns (the model's mean $rand_want)"
report disk_seq_4k_ns "$seq"
report disk_rand_4k_ns "$rand"
same "$seq" "$seq_want" "sequential 4 KiB read's device time (ns)"
# 150 random distances: their mean's spread is 2 % of the disk, 4 % of
# rand_want; 12 % is three of those.
within "$rand" "$((rand_want * 88 / 100))" "$((rand_want * 112 / 100))" ||
	bad "random 4 KiB read: $rand ns of device time, the model's mean is $rand_want (12 %)"

# ---- device time per cgroup -------------------------------------------
# Through a dm-linear, as under dm-ioband: the clone keeps the submitter's
# cgroup.  A writes 100 4 KiB blocks while B reads 150.
lin=$(dm_create mlin "0 $(blockdev --getsz "$ssd") linear $ssd 0")
cg_create mA/leaf >/dev/null
cg_create mB/leaf >/dev/null
ida=$(stat -c %i $CG_ROOT/mA/leaf)
idb=$(stat -c %i $CG_ROOT/mB/leaf)
reset_stats mssd
cg_run mA/leaf fio --name=a --filename="$lin" --rw=randwrite --bs=4k \
	--direct=1 --number_ios=100 --output-format=terse >/dev/null 2>&1 &
pa=$!
cg_run mB/leaf fio --name=b --filename="$lin" --rw=randread --bs=4k \
	--direct=1 --number_ios=150 --output-format=terse >/dev/null 2>&1 &
pb=$!
wait $pa || fail "fio in mA failed"
wait $pb || fail "fio in mB failed"
echo "stats of mssd (cgroup mA is $ida, mB is $idb):"
cat "$IOBM_CFS/mssd/stats"
w=$(model_ns mssd write 4)
r=$(model_ns mssd read 4)
same "$(stat_line mssd "$ida" write)" \
	"cgroup $ida write requests 100 sectors 800 busy_ns $((100 * w))" "mA's writes"
same "$(stat_line mssd "$idb" read)" \
	"cgroup $idb read requests 150 sectors 1200 busy_ns $((150 * r))" "mB's reads"
[ -z "$(stat_line mssd "$ida" read)$(stat_line mssd "$idb" write)" ] ||
	bad "mA read or mB wrote, says the device"
same "$(total mssd busy_ns)" $((100 * w + 150 * r)) "total busy_ns"

# ---- write cache, flush, FUA, crash -------------------------------------
same "$(cat /sys/block/mssd/queue/write_cache)" "write through" \
	"write_cache of a model device without cache"
wc=$(iobm_create mwc 64 ssd cache_kib=1024 memory_backed=1)
wcl=$(dm_create mwcl "0 $(blockdev --getsz "$wc") linear $wc 0")
same "$(cat /sys/block/${wcl#/dev/}/queue/write_cache)" "write back" \
	"write_cache of a dm-linear over a cached model device"
for p in p1 p2 p3; do
	head -c 65536 /dev/urandom >"$TESTDIR/$p"
done
head -c 65536 /dev/zero >"$TESTDIR/zero"
# at DEV N: the sha256 of the 64 KiB at MiB N, read past the page cache
at() { dd if="$1" bs=64k skip=$((16 * $2)) count=1 iflag=direct status=none | sha256sum | cut -c1-64; }
sum() { sha256sum <"$TESTDIR/$1" | cut -c1-64; }
f0=$(total mwc flushes)
dd if="$TESTDIR/p1" of="$wcl" bs=64k oflag=direct conv=fsync status=none || fail "dd p1"
f1=$(total mwc flushes)
[ "$f1" -gt "$f0" ] || bad "fsync sent no flush to the device ($f0 -> $f1)"
u0=$(total mwc fua)
dd if="$TESTDIR/p3" of="$wcl" bs=64k seek=32 oflag=direct,dsync status=none || fail "dd p3"
[ "$(total mwc fua)" -gt "$u0" ] || bad "an O_DSYNC write reached the device without FUA"
dd if="$TESTDIR/p2" of="$wcl" bs=64k seek=16 oflag=direct status=none || fail "dd p2"
same "$(at "$wcl" 1)" "$(sum p2)" "unflushed write read back before the crash"
log "flushes $f0 -> $(total mwc flushes), fua $u0 -> $(total mwc fua), dirty_kib $(total mwc dirty_kib)"
echo 1 >"$IOBM_CFS/mwc/crash"
same "$(at "$wcl" 0)" "$(sum p1)" "flushed data after the crash"
same "$(at "$wcl" 2)" "$(sum p3)" "O_DSYNC data after the crash"
same "$(at "$wcl" 1)" "$(sum zero)" "unflushed data after the crash"
same "$(total mwc dirty_kib)" 0 "dirty KiB after the crash"
# power off without a flush is a crash too
dmsetup remove mwcl || fail "dmsetup remove mwcl"
dd if="$TESTDIR/p2" of="$wc" bs=64k seek=48 oflag=direct status=none || fail "dd p2 at 3 MiB"
{ echo 0 >"$IOBM_CFS/mwc/power" && echo 1 >"$IOBM_CFS/mwc/power"; } || fail "power cycle mwc"
# the node devtmpfs makes for the new disk, not the old one's
i=0
until [ "$(stat -c %Hr:%Lr "$wc" 2>/dev/null)" = "$(cat /sys/block/mwc/dev)" ] ||
	[ $i -ge 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
same "$(at "$wc" 0)" "$(sum p1)" "flushed data after power off"
same "$(at "$wc" 3)" "$(sum zero)" "unflushed data after power off"

check_end

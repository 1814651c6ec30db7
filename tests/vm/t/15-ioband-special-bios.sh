#!/bin/bash
# Flushes, FUA writes, discards and write-zeroes pass through ioband and do
# what they should below; discards and write-zeroes count as writes, empty
# flushes are not counted.  The device below has a volatile write cache, so
# flushes and FUA writes reach ioband (the block layer strips them above a
# device without one) and must be seen below it.
# timeout: 200
. /tests/lib.sh

nb=$(nullb_create sp0 64 "" "" 1 16)
echo 0 >/sys/kernel/config/nullb/sp0/power
echo 1 >/sys/kernel/config/nullb/sp0/discard || fail "null_blk discard"
echo 1 >/sys/kernel/config/nullb/sp0/power
sz=$(blockdev --getsz "$nb")
dev=$(dm_create sp "0 $sz ioband $nb spdg 0 0 none weight-iosize 0")

# Limits pass up from the device below.
assert_eq "$(cat /sys/block/$(basename "$dev")/queue/discard_max_bytes)" \
	"$(cat /sys/block/$(basename "$nb")/queue/discard_max_bytes)" "discard limit"
assert_eq "$(blockdev --getss "$dev")" "$(blockdev --getss "$nb")" "sector size"

# Discard: the range reads back as zeroes from a memory-backed null_blk.
head -c $((1 << 20)) /dev/urandom | dd of="$dev" bs=1M oflag=direct status=none ||
	fail "write"
blkdiscard -o 0 -l $((1 << 20)) "$dev" || fail "blkdiscard through ioband"
zeros=$(head -c $((1 << 20)) /dev/zero | sha256sum)
assert_eq "$(dd if="$nb" bs=1M count=1 iflag=direct status=none | sha256sum)" "$zeros" \
	"discarded range below ioband"

# Write-zeroes (BLKZEROOUT) reaches the device as zeroes.
head -c $((1 << 20)) /dev/urandom | dd of="$dev" bs=1M seek=2 oflag=direct status=none
blkdiscard -z -o $((2 << 20)) -l $((1 << 20)) "$dev" || fail "blkdiscard -z through ioband"
assert_eq "$(dd if="$nb" bs=1M skip=2 count=1 iflag=direct status=none | sha256sum)" "$zeros" \
	"zeroed range below ioband"

# Flush and FUA: the cache is announced up through ioband, fsync and O_SYNC
# writes complete and land, and each flush and FUA write sent to ioband
# reaches the device below as one.
wc_of() { cat "/sys/block/$(basename "$1")/queue/write_cache"; }
assert_eq "$(wc_of "$nb")" "write back" "null_blk's write cache"
assert_eq "$(wc_of "$dev")" "write back" "write cache announced by ioband"
dmsetup message sp 0 reset
head -c $((256 << 10)) /dev/urandom >"$TESTDIR/p"
trace_start block/block_bio_queue block/block_rq_issue
dd if="$TESTDIR/p" of="$dev" bs=4k seek=1024 oflag=direct,sync conv=fsync status=none ||
	fail "O_SYNC writes with fsync"
trace_stop
# rwbs: a leading F is a flush (REQ_PREFLUSH), an F after the W is FUA
rwbs_count() { # DEV EVENT REGEX
	awk -v d="$(dev_t_of "$1")" -v ev="$2:" -v re="$3" '
		{ for (i = 1; i < NF; i++) if ($i == ev && $(i + 1) == d) {
			if ($(i + 2) ~ re) n++
			break } }
		END { print n + 0 }' $TRACEFS/trace
}
flush_up=$(rwbs_count "$dev" block_bio_queue '^F')
fua_up=$(rwbs_count "$dev" block_bio_queue '^F?W.*F')
flush_down=$(rwbs_count "$nb" block_rq_issue '^F')
fua_down=$(rwbs_count "$nb" block_rq_issue '^F?W.*F')
log "flushes: $flush_up sent to ioband, $flush_down issued below; FUA writes: $fua_up, $fua_down"
# dd waits for each write and each flush, so none can be merged below
[ "$fua_up" -ge 64 ] || fail "only $fua_up FUA writes reached ioband: is the cache announced?"
[ "$flush_up" -ge 1 ] || fail "no flush reached ioband (fsync)"
assert_eq "$fua_down" "$fua_up" "FUA writes issued below"
assert_eq "$flush_down" "$flush_up" "flushes issued below"
assert_eq "$(dd if="$nb" bs=4k skip=1024 count=64 iflag=direct status=none | sha256sum)" \
	"$(sha256sum <"$TESTDIR/p")" "FUA data below ioband"
set -- $(dmsetup status sp)
# 64 data writes; the empty flushes of fsync are not counted
assert_eq "$9" 64 "writes counted (empty flushes excluded)"
log "discard, write-zeroes, flush and FUA pass through"

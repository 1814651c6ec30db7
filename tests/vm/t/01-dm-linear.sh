#!/bin/bash
# dm-linear over a memory-backed null_blk: data written comes back intact, and
# fio can drive it.
# timeout: 120
# long: debug
. /tests/lib.sh

nb=$(nullb_create lin0 64 "" "" 1)
sectors=$(blockdev --getsz "$nb")
assert_eq "$sectors" 131072 "null_blk size in sectors"
dev=$(dm_create lin "0 $sectors linear $nb 0")
log "dm-linear $dev over $nb ($sectors sectors)"
[ -b /dev/mapper/lin ] || fail "/dev/mapper/lin missing after dmsetup mknodes"

# 8 MiB pattern at a 1 MiB offset, written through dm, read back both
# through dm and from the underlying device.
head -c $((8 << 20)) /dev/urandom >"$TESTDIR/pattern"
want=$(sha256sum <"$TESTDIR/pattern" | cut -d' ' -f1)
dd if="$TESTDIR/pattern" of="$dev" bs=1M seek=1 oflag=direct conv=fsync status=none ||
	fail "dd write through $dev"
got=$(dd if="$dev" bs=1M skip=1 count=8 iflag=direct status=none | sha256sum | cut -d' ' -f1)
assert_eq "$got" "$want" "checksum read through dm-linear"
got=$(dd if="$nb" bs=1M skip=1 count=8 iflag=direct status=none | sha256sum | cut -d' ' -f1)
assert_eq "$got" "$want" "checksum read from the null_blk below"

out=$(fio --name=randread --filename="$dev" --rw=randread --bs=4k \
	--ioengine=psync --direct=1 --time_based --runtime=2 \
	--output-format=terse --terse-version=3 2>&1) || fail "fio: $out"
# terse v3: field 8 is read IOPS
iops=$(echo "$out" | tail -n1 | cut -d';' -f8)
log "fio randread 4k psync: $iops IOPS"
[ "${iops:-0}" -gt 0 ] || fail "fio reported no read IOPS: $out"
report dm_linear_randread_iops "$iops"

#!/bin/bash
# Partitions sharing one disk: a slow memory-backed null_blk split into
# three partitions with sfdisk, each wrapped in ioband by the documentation's
# own "Partitions of one disk" example (type none, weights 40:20:10 in the
# tables, one device group), read by busy readers on all three at once:
# the reads divide the disk about 57:29:14, with the device group's default
# io_limit and with the io_limit 32 the example then sets.
# timeout: 240
. /tests/lib.sh
. /tests/t/stack.inc
require sfdisk fio

for p in /dev/sdb /dev/sdb1 /dev/sdb2 /dev/sdb3; do
	[ -e $p ] && skip "$p exists in this VM; the example's names are taken"
done
# 100 us per request and 4 in flight: on production the disk, not the CPU,
# is the limit
nb=$(stk_nullb stp0 192 completion_nsec=100000 hw_queue_depth=4)
printf ',60M\n,60M\n,\n' | sfdisk -q "$nb" >"$TESTDIR/sfdisk.out" 2>&1 ||
	fail "sfdisk: $(cat "$TESTDIR/sfdisk.out")"
parts=($(stk_parts "$nb" 3))
log "partitions of $nb: ${parts[*]} ($(blockdev --getsz "${parts[0]}") sectors each)"
# The example's /dev/sdbN are these partitions.
for i in 1 2 3; do
	ln -s "${parts[i - 1]}" /dev/sdb$i || fail "ln -s /dev/sdb$i"
	on_exit "rm -f /dev/sdb$i"
done

doc_load
for i in 1 2 3; do on_exit "dmsetup remove --retry sdb$i-io"; done
doc_run partitions
for i in 1 2 3; do
	# the bdev names the partition itself, from sector 0, whole length
	part=${parts[i - 1]}
	assert_eq "$(dmsetup table sdb$i-io | cut -d' ' -f1,2,4)" \
		"0 $(blockdev --getsz "$part") $(cat /sys/class/block/"${part#/dev/}"/dev)" \
		"sdb$i-io over $part"
done
e2fsck -fn /dev/mapper/sdb1-io >/dev/null 2>&1 || fail "the example's ext4 on sdb1-io is not clean"

# 8 readers on each partition's ioband device for 5 s, all in one fio so
# that they start together (separate fio processes start seconds apart
# under TCG, and one alone on the disk skews the split); prints the three
# shares of the reads in percent.
shares() {
	local i r=() jobs=()
	for i in 1 2 3; do
		dmsetup message sdb$i-io 0 reset || fail "reset"
		jobs+=(--name=p$i --filename=/dev/mapper/sdb$i-io)
	done
	fio --rw=randread --bs=4k --numjobs=8 --direct=1 --ioengine=psync \
		--time_based --runtime=5 "${jobs[@]}" >"$TESTDIR/fio.out" 2>&1 ||
		fail "fio: $(tail -n 5 "$TESTDIR/fio.out")"
	for i in 1 2 3; do r+=("$(stk_field sdb$i-io -1 reads)"); done
	log "reads: ${r[*]}" >&2
	echo "$(stk_share "${r[0]}" "${r[1]}" "${r[2]}")" \
		"$(stk_share "${r[1]}" "${r[0]}" "${r[2]}")" \
		"$(stk_share "${r[2]}" "${r[0]}" "${r[1]}")"
}

# 57:29:14 is the aim; the bands leave room for TCG's noise but not for no
# sharing (33 each) or the wrong order.  Production measured 52-53 / 31 /
# 15.  The debug kernel (KASAN, lockdep) manages only 130-300 reads a second
# here, fewer than the disk could serve, so ioband seldom has to choose and
# the split stays near even (35 / 32 / 31 and 37 / 34 / 27 measured, as
# 14-ioband-devgroup sees it compressed there too): there only the order of
# the first and the last is checked.
check_shares() {
	local what=$1 s1=$2 s2=$3 s3=$4
	log "$what: shares $s1 / $s2 / $s3 % (aim 57 / 29 / 14)"
	if grep -q debug /etc/ioband-vm-kernel 2>/dev/null; then
		[ "$s1" -gt "$s3" ] || fail "$what: shares $s1/$s2/$s3 %: sdb1-io (40) did not get more than sdb3-io (10)"
		return 0
	fi
	[ "$s1" -gt "$s2" ] && [ "$s2" -gt "$s3" ] || fail "$what: shares $s1/$s2/$s3 % do not follow the weights 40:20:10"
	[ "$s1" -ge 45 ] && [ "$s1" -le 70 ] || fail "$what: sdb1-io got $s1 %, want 45 to 70 (aim 57)"
	[ "$s3" -ge 5 ] && [ "$s3" -le 22 ] || fail "$what: sdb3-io got $s3 %, want 5 to 22 (aim 14)"
}

set -- $(shares)
report partitions_40_20_10_io_limit_128 "$1/$2/$3"
check_shares "io_limit 128" "$@"

doc_run partitions-io-limit
for i in 1 2 3; do
	assert_eq "$(dmsetup table sdb$i-io | cut -d' ' -f7)" 32 "io_limit of sdb$i-io after the message to sdb1-io"
done
set -- $(shares)
report partitions_40_20_10_io_limit_32 "$1/$2/$3"
check_shares "io_limit 32" "$@"

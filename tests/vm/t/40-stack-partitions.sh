#!/bin/bash
# Partitions sharing one disk: a slow memory-backed null_blk split into
# three partitions with sfdisk, each wrapped in ioband by the documentation's
# own "Partitions of one disk" example (type none, weights 40:20:10 in the
# tables, one device group), read by busy readers on all three at once:
# the reads divide the disk about 57:29:14, with the device group's default
# io_limit and with the io_limit 32 the example then sets (checked on the
# production kernel; see check_shares for the debug kernel).
# timeout: 240
# long: debug
. /tests/lib.sh
. /tests/t/stack.inc
require sfdisk fio

for p in /dev/sdb /dev/sdb1 /dev/sdb2 /dev/sdb3; do
	[ -e $p ] && skip "$p exists in this VM; the example's names are taken"
done
# 2 ms per request and 4 in flight (2000 I/O a second): the disk, not the
# guest's CPU, is the limit on production (at 100 us 1.6-2.1 of its 4
# requests were in flight, at 1 ms 2.9: the CPU was)
nb=$(stk_nullb stp0 192 completion_nsec=2000000 hw_queue_depth=4)
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
# shares of the reads in percent, and the disk's mean requests in flight
# meanwhile in hundredths (sampled every 20 ms; 400 when it is the limit).
shares() {
	local i r=() jobs=() fpid rd wr sum=0 n=0
	for i in 1 2 3; do
		dmsetup message sdb$i-io 0 reset || fail "reset"
		jobs+=(--name=p$i --filename=/dev/mapper/sdb$i-io)
	done
	fio --rw=randread --bs=4k --numjobs=8 --direct=1 --ioengine=psync \
		--time_based --runtime=5 "${jobs[@]}" >"$TESTDIR/fio.out" 2>&1 &
	fpid=$!
	[ -p "$TESTDIR/tick" ] || mkfifo "$TESTDIR/tick"
	exec 8<>"$TESTDIR/tick"
	while alive $fpid; do
		read -r rd wr <"/sys/block/${nb#/dev/}/inflight"
		sum=$((sum + rd + wr)) n=$((n + 1))
		read -r -t 0.02 -u 8	# 20 ms, no fork
	done
	exec 8<&-
	wait $fpid || fail "fio: $(tail -n 5 "$TESTDIR/fio.out")"
	for i in 1 2 3; do r+=("$(stk_field sdb$i-io -1 reads)"); done
	log "reads: ${r[*]}" >&2
	echo "$(stk_share "${r[0]}" "${r[1]}" "${r[2]}")" \
		"$(stk_share "${r[1]}" "${r[0]}" "${r[2]}")" \
		"$(stk_share "${r[2]}" "${r[0]}" "${r[1]}")" $((sum * 100 / (n ? n : 1)))
}

# 57:29:14 is the aim; the bands leave room for TCG's noise but not for no
# sharing (33 each) or the wrong order.  Production measured 51-53 / 30-31 /
# 15-17.  The debug kernel (KASAN, lockdep) manages only 130-300 reads a
# second here, a few windows of the example's token_base (256) in the 5 s,
# and the split stayed near even there (35/32/31, 37/34/27, 31/36/31): on
# that kernel the shares are reported, not judged: the rest is checked and
# the test ends as a skip saying so.
# The split is ioband's only where the disk is the limit: judged when it
# had at least 3 of its 4 requests in flight on average, else left to
# UNJUDGED (the test then ends as a skip naming it).
UNJUDGED=
check_shares() {
	local what=$1 s1=$2 s2=$3 s3=$4 occ=$5
	log "$what: shares $s1 / $s2 / $s3 % (aim 57 / 29 / 14), $occ/100 requests in flight on the disk"
	if grep -q debug /etc/ioband-vm-kernel 2>/dev/null; then
		UNJUDGED+="$what: the debug kernel is too slow for the split to mean anything ($s1/$s2/$s3 %); "
		return 0
	fi
	if [ "$occ" -lt 300 ]; then
		UNJUDGED+="$what: the disk had only $occ/100 of its 4 requests in flight: the CPU, not the disk, was the limit ($s1/$s2/$s3 %); "
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
[ -z "$UNJUDGED" ] || skip "shares not judged: $UNJUDGED"

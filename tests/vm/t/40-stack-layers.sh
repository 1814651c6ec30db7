#!/bin/bash
# The stacks users build, each checked for integrity with bios held:
# ioband below and above dm-crypt, dm-thin, md raid1 and loop.  Each stack
# gets a fresh memory-backed null_blk and a device group whose io_limit of
# 1 makes two cgroups' writers (weights 400 and 100) queue in ioband, so
# bios are held (checked from the held counters).  Writers verify with a
# pattern new to the run (fio_verify_args).  With ioband below the other
# layer, each cgroup's writes must be charged to its own group: the bio
# that reaches ioband is the layer's, and carries the cgroup of the one
# submitted above it.  About 100 s on production.
# timeout: 600
# long: yes
. /tests/lib.sh
. /tests/t/stack.inc
. /tests/t/kinds.inc
require fio mdadm

KEY=$(printf '%064x' 0x1234567890abcdef)
modprobe dm-crypt 2>/dev/null

# layer KIND LOWER: the layer over LOWER; prints its device
layer() {
	local kind=$1 lower=$2 sz name=sk$1$N md
	sz=$(blockdev --getsz "$lower")
	case $kind in
	crypt) dm_create "$name" "0 $sz crypt aes-cbc-plain64 $KEY 0 $lower 0" ;;
	thin)
		# the pool's metadata on a null_blk of its own, data on LOWER
		md=$(stk_nullb skmeta$N 16)
		dd if=/dev/zero of="$md" bs=4k count=1 oflag=direct status=none
		dm_create "${name}p" "0 $sz thin-pool $md $lower 128 0 1 skip_block_zeroing" >/dev/null
		dmsetup message "${name}p" 0 "create_thin 0" || fail "create_thin"
		on_exit "dmsetup message ${name}p 0 'delete 0'"
		dm_create "$name" "0 $((64 << 11)) thin /dev/mapper/${name}p 0" ;;
	raid1)
		# the second leg a null_blk of its own
		md=/dev/md$N
		mdadm --create "$md" --run --quiet --level=1 --raid-devices=2 \
			--assume-clean --metadata=1.2 "$lower" "$(stk_nullb skleg$N 128)" \
			>"$TESTDIR/mdadm.out" 2>&1 || fail "mdadm --create: $(cat "$TESTDIR/mdadm.out")"
		on_exit "mdadm --stop $md"
		echo "$md" ;;
	loop)
		md=$(losetup -f --show --direct-io=on "$lower") || fail "losetup $lower"
		on_exit "losetup -d $md"
		echo "$md" ;;
	esac
}

for kind in crypt thin raid1 loop; do
	# ioband over the layer over the disk
	WHAT="ioband over $kind"
	N=$((N + 1))
	lo=$(layer $kind "$(stk_nullb skd$N 128)")
	[ -b "$lo" ] || fail "$WHAT: no $kind device"
	sk_ioband "$lo"
	sk_writers "$SK_DEV"
	h=$(sk_held)
	[ "$h" -gt 0 ] || fail "$WHAT: no bio held"
	log "$WHAT: two cgroups' 4 MiB verified, $h bios held"

	# the layer over ioband over the disk
	WHAT="$kind over ioband"
	N=$((N + 1))
	sk_ioband "$(stk_nullb skd$N 128)"
	top=$(layer $kind "$SK_DEV")
	[ -b "$top" ] || fail "$WHAT: no $kind device"
	# loop sends each cgroup's bios from one worker, one after the
	# other: two cgroups' workers meet in ioband less often (writing 1 MiB
	# a job, none was held once; 4 MiB, 243), so they write more
	mb=1
	[ $kind = loop ] && mb=4
	SK_MB=$mb sk_writers "$top"
	for g in A B; do
		s=$(stk_field "$SK_IO" "${!g}" wsect)
		# 2 * mb MiB each; raid1 writes them once to this leg
		[ "$s" -ge $((mb << 12)) ] || fail "$WHAT: group ${g,} was charged $s sectors of its $((mb << 12))"
	done
	h=$(sk_held)
	[ "$h" -gt 0 ] || fail "$WHAT: no bio held"
	log "$WHAT: verified, $h bios held, each cgroup charged to its group"
done


#!/bin/bash
# Module life: rmmod is refused while an ioband device exists (for both of
# our modules); 40 cycles (20 on the debug kernel) of load, use (table,
# I/O, messages, remove) and unload; then kmemleak (debug kernel) finds
# nothing of ours.
# timeout: 700
# append: kmemleak=on
. /tests/lib.sh
. /tests/t/rel.inc

# 40 cycles (1.4 s each under TCG); 20 on the debug kernel, where each
# takes about 5 s under KASAN and kmemleak.  100 cycles, measured on both
# kernels, found nothing that 20 did not; REL_CYCLES overrides both.
CYCLES=40
rel_kernel debug && CYCLES=20
CYCLES=${REL_CYCLES:-$CYCLES}
case $(cat /run/ioband-modules 2>/dev/null) in
loaded) ;;
*) skip "our modules were not loaded at boot: $(cat /run/ioband-modules)" ;;
esac
mdir=/lib/modules/$(uname -r)/extra
[ -f $mdir/dm-ioband.ko ] && [ -f $mdir/dm-ioband-policy.ko ] || skip "modules not found in $mdir"
# Whatever happens, leave the modules loaded for the tests after this one.
on_exit "grep -qw dm_ioband_policy /proc/modules || insmod $mdir/dm-ioband-policy.ko; grep -qw dm_ioband /proc/modules || insmod $mdir/dm-ioband.ko"

nb=$(nullb_create mod0 16)
on_exit "dmsetup remove mod"
sz=$(blockdev --getsz "$nb")
loaded() { # without a grep per call: /proc/modules read by bash
	local m _
	while read -r m _; do
		[ "$m" = "$1" ] && return 0
	done </proc/modules
	return 1
}

echo "0 $sz ioband $nb moddg 0 0 user weight 0 :100 1000:200" | dmsetup create mod ||
	fail "create"
expect_fail rmmod dm_ioband
expect_fail rmmod dm_ioband_policy
loaded dm_ioband || fail "dm_ioband gone while a device exists"
loaded dm_ioband_policy || fail "dm_ioband_policy gone while dm_ioband uses it"
dmsetup remove mod || fail "remove"
log "rmmod refused while a device exists"

# Each cycle: both modules in and out, a device with groups used for I/O
# and messages in between.  Few programs per cycle: each exec costs a lot
# under TCG.
for i in $(seq 1 "$CYCLES"); do
	[ $((i % 20)) = 1 ] && log "cycle $i"
	rmmod dm_ioband dm_ioband_policy || fail "cycle $i: rmmod"
	loaded dm_ioband_policy && fail "cycle $i: still loaded"
	insmod $mdir/dm-ioband-policy.ko && insmod $mdir/dm-ioband.ko ||
		fail "cycle $i: insmod"
	echo "0 $sz ioband $nb moddg$((i % 3)) 0 4 user weight 1 :100 1000:200 0:50" |
		dmsetup create mod || fail "cycle $i: create"
	dd if=/dev/zero of=/dev/mapper/mod bs=4k count=16 oflag=direct status=none ||
		fail "cycle $i: write"
	printf 'mod attach %d\nmod weight 0:%d\nmod detach 1000\n' $((2000 + i)) "$i" |
		dmmsg >/dev/null || fail "cycle $i: messages"
	dmsetup remove mod || fail "cycle $i: remove"
done
log "$CYCLES load, use and unload cycles"

rel_kmemleak_check
report cycles "$CYCLES"

#!/bin/bash
# ioband-setup wrap and unwrap (and an iobandtab wrap line) on a logical
# volume whose ext4 filesystem stays mounted and busy throughout: the
# volume's table is swapped for ioband over a copy and back, every failed
# step (injected) is undone, and afterwards the files written before and
# during it all checksum the same and fsck finds the filesystem clean.
# timeout: 420
# long: debug
. /tests/lib.sh
. /tests/t/setup.inc
require lvm

mnt=/mnt/sw
lv_mounted sw $mnt
orig_table=$(dmsetup table sw-data)
devt=$(stat -L -c %t:%T /dev/sw/data)
size=$(blockdev --getsz /dev/sw/data)
log "LV sw/data: $orig_table"
for i in 1 2 3 4 5 6; do
	dd if=/dev/urandom of=$mnt/f$i bs=64k count=8 status=none || fail "writing f$i"
done
dd if=/dev/urandom of="$TESTDIR/ref" bs=64k count=4 status=none
(cd $mnt && md5sum f?) >"$TESTDIR/sums"
sync

# Busy all along: a writer syncing copies of ref, a reader of the files.
busy() {
	local n=0
	while [ ! -e "$TESTDIR/stop" ]; do
		n=$((n + 1))
		dd if="$TESTDIR/ref" of=$mnt/busy$((n % 8)) bs=64k conv=fsync status=none ||
			{ echo "writer: dd failed" >"$TESTDIR/busy.err"; return; }
		dd if=$mnt/f$((n % 6 + 1)) of=/dev/null bs=64k iflag=direct status=none ||
			{ echo "reader: dd failed" >"$TESTDIR/busy.err"; return; }
	done
	echo "$n" >"$TESTDIR/busy.count"
}
busy &
busy_pid=$!
on_exit "touch $TESTDIR/stop; wait $busy_pid"

still_mounted() { grep -q " $mnt ext4 " /proc/mounts || fail "$mnt is no longer mounted"; }
unchanged() {
	assert_eq "$(dmsetup table sw-data)" "$orig_table" "sw-data's table ($1)"
	gone sw-data-iobandorig
	still_mounted
}

# ---- bad arguments --------------------------------------------------------------------
expect 3 ioband-setup wrap sw/nosuch
contains "no active logical volume sw/nosuch (no device-mapper device sw-nosuch)"
expect 2 ioband-setup wrap data
contains "'data' is not VG/LV"
expect 2 ioband-setup wrap
contains "expected one VG/LV"
expect 4 ioband-setup unwrap sw/data
contains "sw/data is not wrapped"
expect 3 ioband-setup unwrap sw/nosuch
contains "no active logical volume sw/nosuch"
expect 2 ioband-setup unwrap
contains "expected one VG/LV"
expect 2 ioband-setup unwrap sw/data --type user
contains "unknown option '--type'"
dm_create fakevg-lv "0 8 linear $LV_PV 0" >/dev/null
expect 4 ioband-setup wrap fakevg/lv
contains "fakevg/lv (device-mapper device fakevg-lv) is not a logical volume"
# a volume whose target owns its data: not copied
dmsetup create fakevg-err --uuid LVM-fakevgerrvolume --table "0 8 error" || fail "fakevg-err"
expect 4 ioband-setup wrap fakevg/err
contains "fakevg/err's table uses the error target; only linear and striped volumes can be wrapped"
dmsetup remove fakevg-err || fail "removing fakevg-err"
expect 2 ioband-setup wrap sw/data -t user -g root=0
contains "weight must be a number from 1 to 10000"
expect 3 ioband-setup wrap sw/data -t user -g nobody=5
contains "no user named 'nobody'"
unchanged "after refused arguments"

# ---- each step failing: undone --------------------------------------------------------------
for step in wrap-create wrap-load wrap-suspend wrap-resume; do
	IOBAND_SETUP_FAULT=$step expect 1 ioband-setup wrap sw/data -t user -g root=300
	contains "injected fault at $step"
	if [ $step = wrap-create ]; then
		contains "nothing changed"
	else
		contains "undone, sw/data is unchanged"
	fi
	unchanged "after a failed $step"
done

# ---- wrap ---------------------------------------------------------------------------------
sleep 1
expect 0 ioband-setup wrap /dev/sw/data -t user -g root=300 --io-limit 32
assert_eq "$out" "wrapped sw/data: sw-data now goes through ioband (device group sw, type user, policy weight-time, 1 group) over sw-data-iobandorig"
odevt=$(dmsetup info -c --noheadings -o major,minor sw-data-iobandorig | tr -d ' ')
assert_eq "$(dmsetup table sw-data)" "0 $size ioband $odevt sw 0 32 user weight-time 256 :100 0:300" "wrapped table"
assert_eq "$(dmsetup table sw-data-iobandorig)" "$orig_table" "the copy's table"
assert_eq "$(stat -L -c %t:%T /dev/sw/data)" "$devt" "/dev/sw/data's device number"
still_mounted
# the completion offers the volume as VG/LV (not its /dev/mapper link) and
# ioband devices only where a device name is asked for
. /usr/share/bash-completion/completions/ioband-setup
assert_eq "$(_ioband_setup_lvs | grep -c '^mapper/')" 0 "completion's volumes: $(_ioband_setup_lvs | tr '\n' ' ')"
_ioband_setup_lvs | grep -qx sw/data || fail "completion's volumes lack sw/data: $(_ioband_setup_lvs | tr '\n' ' ')"
assert_eq "$(_ioband_setup_dm_names | sort | tr '\n' ' ')" "$(dmsetup ls --target ioband | awk '{ print $1 }' | sort | tr '\n' ' ')" "completion's devices"
_ioband_setup_dm_names | grep -qx sw-data-iobandorig && fail "completion offers sw-data-iobandorig, a linear device"
sleep 2
expect 0 ioband-setup show sw/data
echo "$out"
contains "wraps:         logical volume sw/data"
contains "device:        /dev/mapper/sw-data-iobandorig ($odevt)"
set -- $(echo "$out" | awk '$1 == 0')
[ "${8:-0}" -gt 0 ] && [ "${5:-0}" -gt 0 ] || fail "root's reads and writes are not counted through the wrap: $*"
expect 0 ioband-setup list
assert_eq "$(echo "$out" | awk '$1 == "sw-data" { print $2, $3, $NF }')" \
	"/dev/mapper/sw-data-iobandorig sw sw/data" "list row of the wrapped volume"
expect 4 ioband-setup wrap sw/data
contains "sw/data is wrapped already"
expect 4 ioband-setup remove sw-data
contains "'sw-data' is the wrapped logical volume sw/data: use 'ioband-setup unwrap sw/data'"
expect 0 ioband-setup set sw/data root weight=50
lvm lvs sw >"$TESTDIR/lvs.out" 2>&1 || fail "lvs with the volume wrapped: $(cat "$TESTDIR/lvs.out")"
wrapped_table=$(dmsetup table sw-data)

# ---- unwrap: each step failing leaves it wrapped ------------------------------------------
for step in unwrap-load unwrap-suspend unwrap-resume; do
	IOBAND_SETUP_FAULT=$step expect 1 ioband-setup unwrap sw/data
	contains "injected fault at $step"
	contains "it is still wrapped"
	assert_eq "$(dmsetup table sw-data)" "$wrapped_table" "still wrapped after a failed $step"
	still_mounted
done
IOBAND_SETUP_FAULT=unwrap-remove expect 5 ioband-setup unwrap sw/data
contains "unwrap sw/data: the volume is unwrapped, but removing its former copy sw-data-iobandorig failed (injected fault at unwrap-remove): remove it by hand"
assert_eq "$(dmsetup table sw-data)" "$orig_table" "unwrapped table"
dmsetup remove sw-data-iobandorig || fail "removing the leftover copy"
unchanged "after unwrap"

# ---- an iobandtab wrap line ----------------------------------------------------------------
tab=$TESTDIR/iobandtab
echo "sw/data wrap type=user,group=root=300  # the data volume" >"$tab"
expect 0 ioband-setup apply "$tab"
contains "wrapped sw/data"
odevt=$(dmsetup info -c --noheadings -o major,minor sw-data-iobandorig | tr -d ' ')
assert_eq "$(dmsetup table sw-data)" "0 $size ioband $odevt sw 0 128 user weight-time 256 :100 0:300" "wrapped by apply"
expect 0 ioband-setup apply "$tab"
assert_eq "$out" "sw/data: up to date"
echo "sw/data wrap type=user,group=root=100,io-limit=8" >"$tab"
expect 0 ioband-setup apply --dry-run "$tab"
assert_eq "$out" "sw/data: would reload (io_limit 128 -> 8, group root (id 0) weight 300 -> 100)"
IOBAND_SETUP_FAULT=apply-resume expect 1 ioband-setup apply "$tab"
contains "sw/data: resuming sw-data with its new table failed: injected fault at apply-resume; it runs on with its old table"
assert_eq "$(dmsetup table sw-data)" "0 $size ioband $odevt sw 0 128 user weight-time 256 :100 0:300" "after a failed reload"
expect 0 ioband-setup apply "$tab"
assert_eq "$out" "sw/data: reloaded (io_limit 128 -> 8, group root (id 0) weight 300 -> 100)"
assert_eq "$(dmsetup table sw-data)" "0 $size ioband $odevt sw 0 8 user weight-time 256 :100 0:100" "reloaded by apply"
expect 0 ioband-setup apply "$tab"
assert_eq "$out" "sw/data: up to date"
still_mounted
expect 0 ioband-setup unwrap sw/data
assert_eq "$out" "unwrapped sw/data"
unchanged "after the last unwrap"

# ---- the data --------------------------------------------------------------------------------
sleep 1
touch "$TESTDIR/stop"
wait $busy_pid
[ ! -e "$TESTDIR/busy.err" ] || fail "the load failed: $(cat "$TESTDIR/busy.err")"
log "the load did $(cat "$TESTDIR/busy.count") write-and-read rounds"
[ "$(cat "$TESTDIR/busy.count")" -ge 5 ] || fail "the load hardly ran"
umount $mnt || fail "umount"
e2fsck -fn /dev/sw/data >"$TESTDIR/fsck.out" 2>&1 || fail "fsck: $(tail -n 5 "$TESTDIR/fsck.out")"
mount /dev/sw/data $mnt || fail "mount again"
(cd $mnt && md5sum -c "$TESTDIR/sums" >/dev/null) || fail "files written before the wrap differ"
want=$(md5sum <"$TESTDIR/ref" | cut -d' ' -f1)
for f in $mnt/busy*; do
	assert_eq "$(md5sum <"$f" | cut -d' ' -f1)" "$want" "$f, written during wrap and unwrap"
done
log "wrap and unwrap under a busy mounted ext4: undone on every failure, data intact"

#!/bin/bash
# A wrapped logical volume through LVM's own changes, its ext4 mounted and
# busy: lvextend, lvreduce, lvchange --refresh and vgchange -an/-ay each put
# LVM's table back (or remove the volume and leave the copy), and
# 'ioband-setup watch' wraps the volume again with the settings it had
# (a live 'set' included) and removes the stale copy, with LVM's lock
# taken so that it acts after the LVM command.  Without the watcher,
# wrap --repair and unwrap do it by hand.  lvs warns about a wrapped
# volume only as documented, and not at all once it is unwrapped.
# Afterwards the files all checksum and fsck finds ext4 clean.
# timeout: 420
# long: debug
. /tests/lib.sh
. /tests/t/setup.inc
require lvm

mnt=/mnt/lv
lv_mounted lv $mnt
for i in 1 2 3 4; do
	dd if=/dev/urandom of=$mnt/f$i bs=64k count=8 status=none || fail "writing f$i"
done
dd if=/dev/urandom of="$TESTDIR/ref" bs=64k count=4 status=none
(cd $mnt && md5sum f?) >"$TESTDIR/sums"
sync

# Busy while LVM changes the volume: a writer syncing copies of ref, a
# reader of the files.  It stops (and is checked) before each unmount; in
# its own cgroup, so that a failed test's clean-up kills it first.
busy_cg=$(cg_create lv-busy)
busy_start() {
	rm -f "$TESTDIR/stop"
	(
		echo $BASHPID >"$busy_cg/cgroup.procs"
		n=0
		while [ ! -e "$TESTDIR/stop" ]; do
			n=$((n + 1))
			dd if="$TESTDIR/ref" of=$mnt/busy$((n % 8)) bs=64k conv=fsync status=none ||
				{ echo "writer: dd failed" >"$TESTDIR/busy.err"; exit 1; }
			dd if=$mnt/f$((n % 4 + 1)) of=/dev/null bs=64k iflag=direct status=none ||
				{ echo "reader: dd failed" >"$TESTDIR/busy.err"; exit 1; }
		done
	) &
	busy_pid=$!
}
busy_stop() {
	touch "$TESTDIR/stop"
	wait $busy_pid
	[ ! -e "$TESTDIR/busy.err" ] || fail "the load failed: $(cat "$TESTDIR/busy.err")"
}

# the volume wrapped as set up below: ioband over its copy, whose table is
# LVM's table of the volume now ($1), with the settings of the last 'set'
wrapped_as() {
	local odevt
	odevt=$(dmsetup info -c --noheadings -o major,minor lv-data-iobandorig 2>/dev/null | tr -d ' ')
	[ -n "$odevt" ] || return 1
	[ "$(dmsetup table lv-data-iobandorig)" = "$1" ] || return 1
	[ "$(dmsetup table lv-data)" = "0 $(echo "$1" | awk '{ n = $1 + $2 } END { print n }') ioband $odevt lv 0 32 user weight-time 256 :100 0:50" ]
}
# lvs works, and warns only as ioband-setup(8) says it does about a wrapped
# volume: LVM finds ioband's table over the copy where it expects its own
lvs_as_documented() {
	local other
	lvm lvs lv >"$TESTDIR/lvs.out" 2>&1 || fail "lvs ($1): $(cat "$TESTDIR/lvs.out")"
	other=$(grep -i warn "$TESTDIR/lvs.out" |
		grep -vE "^  WARNING: Device mismatch detected for lv/(data|other) which is accessing /dev/mapper/lv-(data|other)-iobandorig instead of /dev/lv0(, /dev/lv0)*\.\$" |
		grep -vE "^  WARNING: Detected ioband segment type does not match expected type (striped|linear) for lv/(data|other)\.\$" |
		grep -vE "^  WARNING: Cannot find matching (striped|linear) segment for lv/(data|other)\.\$")
	[ -z "$other" ] || fail "lvs warns otherwise than documented ($1): $other"
}
copy_gone() { ! dmsetup info lv-data-iobandorig >/dev/null 2>&1; }
# rewrapped N WHAT: wait (20 s at most) until the watcher says it wrapped
# lv/data again for the (N+1)th time; took is left in $took
rewrapped() {
	local t0=${EPOCHREALTIME/./}
	while [ "$(grep -c '^wrapped again lv/data' "$TESTDIR/watch.log")" -le "$1" ]; do
		[ $(((${EPOCHREALTIME/./} - t0) / 1000)) -lt 20000 ] ||
			fail "$2: not wrapped again within 20 s; the watcher said: $(tail -n 5 "$TESTDIR/watch.log"); lv-data: $(dmsetup table lv-data); devices: $(dmsetup ls | tr '\n' ' ')"
		sleep 0.01
	done
	took=$(((${EPOCHREALTIME/./} - t0) / 1000))
}

busy_start
watch_start "$TESTDIR/watch.log"
expect 0 ioband-setup wrap lv/data -t user -g root=300 --io-limit 32
expect 0 ioband-setup set lv/data root weight=50
table=$(dmsetup table lv-data-iobandorig)
wrapped_as "$table" || fail "wrapped: $(dmsetup table lv-data)"
# a second volume of the volume group joins its device group, with its
# settings (io_limit 32), and shares the disk by its default group's weight
lvm lvcreate -q -y -L 16M -n other lv >/dev/null || fail "lvcreate other"
on_exit "ioband-setup unwrap lv/other"
expect 0 ioband-setup wrap lv/other -w 200
contains "device group lv, type none"
assert_eq "$(dmsetup table lv-other | cut -d' ' -f5-)" "lv 0 32 none weight-time 256 :200" "lv/other's table"
lvs_as_documented "wrapped"

# ---- LVM's reloads, repaired by the watcher -----------------------------------------
for step in "lvextend -L +32M" "lvreduce -f -L -32M" "lvchange --refresh" "lvextend -L +16M"; do
	nrep=$(grep -c '^wrapped again lv/data' "$TESTDIR/watch.log")
	lvm $step lv/data >"$TESTDIR/lvm.out" 2>&1 || fail "$step: $(cat "$TESTDIR/lvm.out")"
	rewrapped "$nrep" "$step"
	log "$step: wrapped again in $took ms"
	# the copy maps what LVM maps now
	table=$(dmsetup table lv-data-iobandorig)
	assert_eq "$(echo "$table" | awk '{ n = $1 + $2 } END { print n }')" \
		"$(lvm lvs --noheadings --units s -o lv_size lv/data | tr -d ' S')" "the copy's length after $step"
	wrapped_as "$table" || fail "after $step: $(dmsetup table lv-data) over $table"
	grep -q "removed the stale copy lv-data-iobandorig" "$TESTDIR/watch.log" ||
		fail "the watcher did not say it removed the stale copy: $(cat "$TESTDIR/watch.log")"
	lvs_as_documented "after $step"
	grep -q " $mnt ext4 " /proc/mounts || fail "$mnt is no longer mounted after $step"
done

# ---- vgchange: refused while mounted; -an and -ay ----------------------------------
expect 0 ioband-setup unwrap lv/other
expect 5 lvm vgchange -an lv
wrapped_as "$table" || fail "after a refused vgchange -an: $(dmsetup table lv-data)"
busy_stop
umount $mnt || fail "umount"
lvm vgchange -q -an lv >"$TESTDIR/lvm.out" 2>&1 || fail "vgchange -an: $(cat "$TESTDIR/lvm.out")"
[ ! -e /dev/mapper/lv-data ] || fail "vgchange -an left lv-data"
# the copy must not outlive the volume: its extents are free for others now
until_ok 20 copy_gone
log "vgchange -an: the stale copy removed in $took ms"
nrep=$(grep -c '^wrapped again lv/data' "$TESTDIR/watch.log")
lvm vgchange -q -ay lv >"$TESTDIR/lvm.out" 2>&1 || fail "vgchange -ay: $(cat "$TESTDIR/lvm.out")"
rewrapped "$nrep" "vgchange -ay"
log "vgchange -ay: wrapped again in $took ms"
table=$(dmsetup table lv-data-iobandorig)
wrapped_as "$table" || fail "after vgchange -ay: $(dmsetup table lv-data)"
lvs_as_documented "after vgchange -ay"
mount /dev/lv/data $mnt || fail "mount after vgchange -ay"

# ---- by hand, with no watcher ---------------------------------------------------------
watch_stop
lvm lvextend -q -L +16M lv/data >/dev/null 2>&1 || fail "lvextend without the watcher"
expect 0 ioband-setup wrap --repair lv/data
contains "lv/data: removed the stale copy lv-data-iobandorig"
contains "wrapped again lv/data: lv-data now goes through ioband"
wrapped_as "$(dmsetup table lv-data-iobandorig)" || fail "after wrap --repair: $(dmsetup table lv-data)"
expect 0 ioband-setup wrap --repair lv/data
assert_eq "$out" "lv/data is wrapped: nothing to repair"
expect 2 ioband-setup wrap --repair lv/data -t user
contains "--repair takes no settings"
# wrap again afresh over the stale copy
lvm lvextend -q -L +16M lv/data >/dev/null 2>&1 || fail "lvextend without the watcher"
expect 0 ioband-setup wrap lv/data -t user -g root=50 --io-limit 32
contains "lv/data: removed the stale copy lv-data-iobandorig"
wrapped_as "$(dmsetup table lv-data-iobandorig)" || fail "wrapped afresh: $(dmsetup table lv-data)"
# a copy that is not ours is not removed
lvm lvextend -q -L +16M lv/data >/dev/null 2>&1 || fail "lvextend without the watcher"
dmsetup rename lv-data-iobandorig lv-data-keep || fail "rename"
on_exit "dmsetup remove lv-data-keep 2>/dev/null"
dmsetup create lv-data-iobandorig --uuid OTHER-lv-data --table "0 8 error" || fail "a foreign copy"
expect 4 ioband-setup wrap --repair lv/data
contains "a device named lv-data-iobandorig exists already and is not the copy of lv/data"
dmsetup remove lv-data-iobandorig && dmsetup rename lv-data-keep lv-data-iobandorig || fail "rename back"
expect 0 ioband-setup unwrap lv/data
contains "lv/data: removed the stale copy lv-data-iobandorig"
contains "lv/data was not wrapped any more (LVM had changed or deactivated it): its wrap is forgotten"
gone lv-data-iobandorig
expect 4 ioband-setup unwrap lv/data
contains "lv/data is not wrapped"
expect 3 ioband-setup wrap --repair lv/data
contains "no wrap of lv/data is recorded"
lvm lvs lv >"$TESTDIR/lvs.out" 2>&1 || fail "lvs unwrapped: $(cat "$TESTDIR/lvs.out")"
grep -qi warn "$TESTDIR/lvs.out" && fail "lvs warns with nothing wrapped: $(cat "$TESTDIR/lvs.out")"

# ---- the data ---------------------------------------------------------------------------
umount $mnt || fail "umount"
e2fsck -fn /dev/lv/data >"$TESTDIR/fsck.out" 2>&1 || fail "fsck: $(tail -n 5 "$TESTDIR/fsck.out")"
mount /dev/lv/data $mnt || fail "mount again"
(cd $mnt && md5sum -c "$TESTDIR/sums" >/dev/null) || fail "files written before the wrap differ"
want=$(md5sum <"$TESTDIR/ref" | cut -d' ' -f1)
for f in $mnt/busy*; do
	assert_eq "$(md5sum <"$f" | cut -d' ' -f1)" "$want" "$f, written while LVM changed the volume"
done
umount $mnt
log "lvextend, lvreduce, lvchange --refresh, vgchange -an/-ay: wrapped again each time, no stale copy, data intact"

#!/bin/bash
# Classification: cgroup (nested, and buffered writeback charged to the
# dirtying cgroup), user, gid, pid and pgrp.  Each case does I/O and checks
# which group's counters moved.
# timeout: 300
# long: debug
. /tests/lib.sh

nb=$(nullb_create cls0 256 "" "" 1)
sz=$(blockdev --getsz "$nb")

# Counters of group $2 on device $1: "reads read_sectors writes write_sectors".
counters() {
	dmsetup status "$1" | awk -v id="$2" '{
		for (i = 5; i + 6 <= NF; i += 7)
			if ($i == id) print $(i+1), $(i+3), $(i+4), $(i+6) }'
}
reads_of() { set -- $(counters "$1" "$2"); echo "${1:-missing}"; }
wsect_of() { set -- $(counters "$1" "$2"); echo "${4:-missing}"; }

# ---- cgroup ---------------------------------------------------------------------
a=$(cg_create cls-a)
ab=$(cg_create cls-a/b)
c=$(cg_create cls-c)
ida=$(stat -c %i "$a")
idc=$(stat -c %i "$c")
dev=$(dm_create clscg "0 $sz ioband $nb clsdg 0 0 cgroup weight 0 :100 $ida:200 $idc:300")

cg_run cls-a/b dd if="$dev" of=/dev/null bs=4k count=17 iflag=direct status=none
cg_run cls-c dd if="$dev" of=/dev/null bs=4k count=5 iflag=direct status=none
dd if="$dev" of=/dev/null bs=4k count=3 iflag=direct status=none
assert_eq "$(reads_of clscg "$ida")" 17 "nested cgroup a/b counted in a"
assert_eq "$(reads_of clscg "$idc")" 5 "cgroup c"
assert_eq "$(reads_of clscg -1)" 3 "root cgroup in the default group"

# Buffered writes: the flusher writes them back, but each cgroup's pages
# are charged to it through the bio's blkcg association (a/b's to a).
mkfs.ext4 -q -F "$dev" || fail "mkfs.ext4"
mkdir -p /mnt/cls
mount "$dev" /mnt/cls || fail "mount"
on_exit "umount /mnt/cls"
sync
dmsetup message clscg 0 reset || fail reset
cg_run cls-a/b sh -c 'dd if=/dev/zero of=/mnt/cls/a bs=1M count=16 status=none'
cg_run cls-c sh -c 'dd if=/dev/zero of=/mnt/cls/c bs=1M count=8 status=none'
sync
wa=$(wsect_of clscg "$ida")
wc=$(wsect_of clscg "$idc")
log "writeback sectors: a=$wa c=$wc default=$(wsect_of clscg -1)"
[ "$wa" -ge 32768 ] || fail "cgroup a's 16 MiB of writeback charged $wa sectors"
[ "$wc" -ge 16384 ] || fail "cgroup c's 8 MiB of writeback charged $wc sectors"
[ "$wa" -lt 40000 ] && [ "$wc" -lt 24000 ] || fail "writeback over-charged: a=$wa c=$wc"
umount /mnt/cls

# ---- user and gid (fio switches ids before its I/O) --------------------------------
dev=$(dm_create clsuid "0 $sz ioband $nb clsdg2 0 0 user weight 0 :100 1000:50 0:50")
chmod 666 "$dev"	# fio opens it after dropping to uid 1000
fio --name=u --filename="$dev" --rw=read --bs=4k --size=44k --direct=1 \
	--uid=1000 --gid=2000 >"$TESTDIR/fio.out" 2>&1 || fail "fio as uid 1000: $(tail -n 3 "$TESTDIR/fio.out")"
dd if="$dev" of=/dev/null bs=4k count=2 iflag=direct status=none
assert_eq "$(reads_of clsuid 1000)" 11 "uid 1000"
assert_eq "$(reads_of clsuid 0)" 2 "uid 0"
assert_eq "$(reads_of clsuid -1)" 0 "nothing in the default group"

dev=$(dm_create clsgid "0 $sz ioband $nb clsdg3 0 0 gid weight 0 :100 2000:50")
chmod 666 "$dev"
fio --name=g --filename="$dev" --rw=read --bs=4k --size=28k --direct=1 \
	--uid=1000 --gid=2000 >"$TESTDIR/fio.out" 2>&1 || fail "fio as gid 2000: $(tail -n 3 "$TESTDIR/fio.out")"
assert_eq "$(reads_of clsgid 2000)" 7 "gid 2000"

# ---- pid and pgrp: a child reports its ids through a fifo, waits for the
# group to be attached, then does its I/O. ---------------------------------------
mkfifo "$TESTDIR/ids" "$TESTDIR/go"
dev=$(dm_create clspid "0 $sz ioband $nb clsdg4 0 0 pid weight 0")
sh -c 'echo $$ > "$1/ids"; read x < "$1/go"; exec dd if="$2" of=/dev/null bs=4k count=9 iflag=direct status=none' \
	sh "$TESTDIR" "$dev" &
child=$!
read -r pid <"$TESTDIR/ids"
assert_eq "$pid" "$child" "child pid"
dmsetup message clspid 0 attach "$pid" || fail "attach pid"
echo go >"$TESTDIR/go"
wait "$child" || fail "dd in the pid child"
assert_eq "$(reads_of clspid "$pid")" 9 "pid group"

dev=$(dm_create clspgrp "0 $sz ioband $nb clsdg5 0 0 pgrp weight 0")
setsid sh -c 'cut -d" " -f5 /proc/$$/stat > "$1/ids"; read x < "$1/go"; dd if="$2" of=/dev/null bs=4k count=6 iflag=direct status=none; dd if="$2" of=/dev/null bs=4k count=7 iflag=direct status=none' \
	sh "$TESTDIR" "$dev" &
child=$!
read -r pgrp <"$TESTDIR/ids"
[ "$pgrp" != "$(cut -d' ' -f5 /proc/$$/stat)" ] || fail "child kept our process group"
dmsetup message clspgrp 0 attach "$pgrp" || fail "attach pgrp"
echo go >"$TESTDIR/go"
wait "$child" || fail "dd in the pgrp child"
assert_eq "$(reads_of clspgrp "$pgrp")" 13 "both processes of the pgrp"
log "cgroup, user, gid, pid and pgrp classification as documented"

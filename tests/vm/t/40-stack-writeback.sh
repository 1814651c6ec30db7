#!/bin/bash
# Buffered writes (no O_DIRECT) from two cgroups of weights 300 and 100 on
# ext4 on ioband (type cgroup, policy weight-iosize, default token_base)
# over a null_blk limited to 4 MiB/s.  What reaches the disk is counted in
# each cgroup's io.stat line for the null_blk: what ioband sent down for it.
#
# 1. Written back by the writers' own fdatasync: 8 writers per cgroup
#    rewrite their 2 MiB files in place.  While both cgroups are busy the
#    disk's bytes divide 3:1 (aim 75 % for the weight-300 cgroup).
# 2. Written back by the kernel's flusher threads: one plain writer per
#    cgroup writes new 4 MiB files, with the dirty limits lowered
#    (vm.dirty_bytes 16 MiB, background 4 MiB) so that both cgroups' dirty
#    pages are being written back at once.  Each cgroup's writeback is
#    charged to its own group, all of it and no more, and the disk's bytes
#    divide 3:1 again.
#
# Two things make such a test measure the setup rather than ioband, found
# the hard way: a page belongs to the cgroup that first brought it into
# memory, so the files are created by their own cgroup (created by this
# shell, every rewrite was charged to the root cgroup and the default
# group); and ext4's lazy inode-table initialisation writes for seconds
# after mount from a kernel thread, so mkfs does it up front.
# Journal writes are never held (they are REQ_META); before that, each
# commit's writes waited behind the weight-100 default group and the
# writers of both cgroups moved in lockstep, one commit at a time: 50-61 %.
# timeout: 300
# long: debug
. /tests/lib.sh
. /tests/t/stack.inc
require mkfs.ext4

mnt=/mnt/swb
# null_blk lets a request through only when it fits in one 20 ms tick's
# budget (84 KB at 4 MiB/s; it never lets a larger one pass), so 64 KiB
nb=$(stk_nullb swb0 500 mbps=4 max_sectors=128 hw_queue_depth=8)
sz=$(blockdev --getsz "$nb")
disk=$(cat "/sys/block/${nb#/dev/}/dev")
cg_create stk-wa/w >/dev/null
cg_create stk-wb/w >/dev/null
ia=$(stat -c %i $CG_ROOT/stk-wa)
ib=$(stat -c %i $CG_ROOT/stk-wb)
# io_limit 2: writeback bios are up to 2 MiB, so even 2 in flight keep
# the disk busy; more would leave the order to the queue beneath ioband
io=$(dm_create swb-io "0 $sz ioband $nb swb 0 2 cgroup weight-iosize 0 :100 $ia:300 $ib:100")
mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0 "$io" || fail "mkfs.ext4"
stk_mount "$io" $mnt
mkdir -p $mnt/wa/flush $mnt/wb/flush

# MiB the null_blk has been sent for cgroup $1 (its io.stat line; read
# without a fork, which takes long under TCG with 16 writers running)
disk_mib() {
	local line f
	while read -r line; do
		[ "${line%% *}" = "$disk" ] || continue
		for f in $line; do
			case $f in wbytes=*) echo $((${f#wbytes=} >> 20)); return ;; esac
		done
	done <"$CG_ROOT/$1/io.stat"
	echo 0
}
# Wait (at most $2 seconds) until both cgroups together have reached the
# disk with $1 MiB.
wait_disk() {
	local end=$(($(date +%s) + $2))
	while [ $(($(disk_mib stk-wa) + $(disk_mib stk-wb))) -lt "$1" ]; do
		[ "$(date +%s)" -le $end ] ||
			fail "only $(disk_mib stk-wa) + $(disk_mib stk-wb) MiB reached the disk after $2 s, want $1"
		sleep 0.2
	done
}
# share NAME: once both cgroups write, skip 4 MiB, then measure 24 MiB;
# checks cgroup a's share of it
share() {
	local a0 b0 t0 a b ms kbs lo=65 hi=85
	wait_disk $(($(disk_mib stk-wa) + $(disk_mib stk-wb) + 4)) 60
	a0=$(disk_mib stk-wa) b0=$(disk_mib stk-wb) t0=$EPOCHREALTIME
	wait_disk $((a0 + b0 + 24)) 90
	a=$(($(disk_mib stk-wa) - a0)) b=$(($(disk_mib stk-wb) - b0))
	ms=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", (b - a) * 1000 }')
	kbs=$(((a + b) * 1024 * 1000 / ms))
	set -- "$(stk_share $a $b)"
	log "$name: in $ms ms cgroup a (300) $a MiB, b (100) $b MiB reached the disk ($kbs of its 4096 KiB/s): a's share $1 % (aim 75)"
	report "writeback_${name}_share_300_100" "$1"
	# The weights can only act while the disk is the limit.  On the debug
	# kernel on a loaded host the guest's CPU can be instead: the writers
	# dirty pages more slowly than the disk writes them, each group gets
	# all it asks for, and the split is the writers' (48 % in one such
	# run, at 52 % of the disk's speed).  Said, not checked, then.  Under
	# TCG the disk, when it is the limit, writes 70-80 % of its nominal
	# speed (2880-3300 KiB/s of 4096 on both kernels).
	if [ "$kbs" -lt $((4096 * 60 / 100)) ]; then
		log "$name: the disk was not the limit ($kbs of 4096 KiB/s): the split is not checked"
		return
	fi
	# The flusher's split on the debug kernel follows the host's load:
	# 72-76 % on a quiet host, 57 % with a load of 4 on its 2 CPUs, where
	# the flusher of the weight-300 cgroup (KASAN makes building its bios
	# slow) at times had nothing queued.  Reported there, not checked.
	if [ "$name" = flusher ] && grep -q debug /etc/ioband-vm-kernel 2>/dev/null; then
		log "$name: on the debug kernel the split is reported, not checked"
		return
	fi
	# measured: fdatasync 75-79 % on production, 74-76 % on debug; the
	# flusher 72-75 % on production
	[ "$1" -ge $lo ] && [ "$1" -le $hi ] ||
		fail "$name writeback: cgroup a got $1 % of the disk, want $lo to $hi (aim 75; 50 would mean the weights are ignored)"
}
stop_writers() {
	touch "$TESTDIR/stop"
	wait
	[ ! -e "$TESTDIR/writer.err" ] || fail "$(cat "$TESTDIR/writer.err")"
	rm -f "$TESTDIR/stop"
}
on_exit "touch $TESTDIR/stop; wait"

# ---- 1. the writers' own fdatasync -------------------------------------------
for g in wa wb; do
	cg_run stk-$g/w sh -c 'for i in 1 2 3 4 5 6 7 8; do
		dd if=/dev/zero of="$0/s$i" bs=1M count=2 status=none || exit 1
	done' $mnt/$g || fail "creating $g's files"
done
sync
for g in wa wb; do
	for i in 1 2 3 4 5 6 7 8; do
		# rewrites in place: no block allocation, no ordered data
		cg_run stk-$g/w sh -c 'while [ ! -e "$0/stop" ]; do
			dd if=/dev/zero of="$1" bs=64k count=32 conv=notrunc,fdatasync status=none ||
				{ echo "fdatasync writer $1 failed" >"$0/writer.err"; exit 1; }
		done' "$TESTDIR" $mnt/$g/s$i &
	done
done
name=fdatasync share
stop_writers

# ---- 2. the flusher threads ----------------------------------------------------
sync
on_exit "echo $(cat /proc/sys/vm/dirty_bytes) >/proc/sys/vm/dirty_bytes"
on_exit "echo $(cat /proc/sys/vm/dirty_background_bytes) >/proc/sys/vm/dirty_background_bytes"
echo $((16 << 20)) >/proc/sys/vm/dirty_bytes
echo $((4 << 20)) >/proc/sys/vm/dirty_background_bytes
dmsetup message swb-io 0 reset || fail reset
for g in wa wb; do
	cg_run stk-$g/w sh -c 'n=0; while [ ! -e "$0/stop" ]; do
		n=$((n + 1))
		dd if=/dev/zero of="$1/flush/f$n" bs=64k count=64 status=none ||
			{ echo "flusher writer $1 failed" >"$0/writer.err"; exit 1; }
	done' "$TESTDIR" $mnt/$g &
done
name=flusher share
stop_writers
sync
for g in a b; do
	eval id=\$i$g
	got=$(stk_field swb-io "$id" wsect)
	# whole 4 MiB files: the loop checks for "stop" between two
	want=$(($(ls $mnt/w$g/flush | wc -l) * 8192))
	log "cgroup $g wrote $((want / 2048)) MiB through the page cache; its group counted $((got / 2048)) MiB"
	# all of it, and at most 1 MiB of the other's or of metadata besides
	[ "$got" -ge "$want" ] && [ "$got" -le $((want + 2048)) ] ||
		fail "cgroup $g's flusher writeback: $got sectors charged, it wrote $want"
done
log "default group (metadata, journal): $(stk_field swb-io -1 wsect) sectors"

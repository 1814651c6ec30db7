#!/bin/bash
# Leases (section 14 of the design essay in drivers/md/dm-ioband.c):
# while no group holds bios, a CPU sends the next bios of a group without
# the device group's lock, from a lease of at most 48 bios.
#  1. A single psync reader in an attached cgroup's group: the leases are
#     granted and used (at least 8 reads a grant; with no lease used, a
#     read through the lock would ask for a new one every time), and the
#     status counts every read exactly once (leased reads are counted per
#     CPU).
#  2. The same for a uid group (found without the lock by task id).
#  3. The group detached and attached again, up to 20 times, under a verifying
#     writer at depth 8 in its cgroup: every write lands (fio's pattern
#     verify), and the device is removed afterwards.  A detached group's
#     leased bios that complete late must be counted done once, neither
#     lost nor twice: either way the device group's count of bios in flight
#     would not come back to zero, and its removal warns (a kernel report
#     fails the run).
#  4. Part 1 under weight-time, whose leased bios pay their class's mean.
#  5. A leased bio that completes after leasing ended and began again,
#     with no new lease of its group, is folded: a's one read, leased on a
#     slow device, meets a revoke (a message) and a new lease of b's, then
#     completes.  Left unfolded, a would stay in flight for good, and at
#     io_limit 1 b's next read would be held for good.
# timeout: 300
# long: debug
. /tests/lib.sh

nb=$(nullb_create ls0 64 "" "" 1)
sz=$(blockdev --getsz "$nb")
N=4000

# ioband_lease events of group $1 in the trace
grants_of() {
	awk -v g="group=$1 " 'index($0, "ioband_lease:") && index($0, g) { n++ }
		END { print n + 0 }' $TRACEFS/trace
}
# lone_reader WHAT NAME TABLE: $N reads in cgroup ls-a (id $ida) on a new
# dm device NAME, every read counted once and at least 8 a lease
lone_reader() {
	local what=$1 name=$2 dev g
	echo >$TRACEFS/trace
	dev=$(dm_create "$name" "$3")
	cg_run ls-a dd if="$dev" of=/dev/null bs=4k count=$N iflag=direct status=none ||
		fail "dd in cgroup a ($what)"
	g=$(grants_of "$ida")
	log "$what: $N reads, $g leases granted"
	[ "$g" -gt 0 ] || fail "$what: no lease granted for $N reads of a lone reader"
	[ $((N / g)) -ge 8 ] || fail "$what: $g leases for $N reads: $((N / g)) reads a lease, want at least 8"
	assert_eq "$(dm_group_reads "$name" "$ida")" $N "$what: cgroup a's reads in the status"
	assert_eq "$(dm_group_reads "$name" -1)" 0 "$what: the default group's reads"
	report "lease_${what//-/_}_reads_per_grant" $((N / g))
}

trace_start ioband/ioband_lease

# ---- 1. cgroup ------------------------------------------------------------------
a=$(cg_create ls-a)
ida=$(stat -c %i "$a")
lone_reader cgroup lscg "0 $sz ioband $nb lsdg 0 0 cgroup weight 0 :100 $ida:200"
cgdev=$(dm_node lscg)

# ---- 2. uid (fio drops to uid 1000 before its I/O) -----------------------------------
echo >$TRACEFS/trace
dev=$(dm_create lsuid "0 $sz ioband $nb lsdg2 0 0 user weight 0 :100 1000:100")
chmod 666 "$dev"
fio --name=u --filename="$dev" --rw=randread --bs=4k --number_ios=$N --direct=1 \
	--uid=1000 --gid=1000 >"$TESTDIR/fio-u.out" 2>&1 ||
	fail "fio as uid 1000: $(tail -n 3 "$TESTDIR/fio-u.out")"
g=$(grants_of 1000)
log "uid: $N reads, $g leases granted"
[ "$g" -gt 0 ] || fail "uid: no lease granted for $N reads of a lone reader"
[ $((N / g)) -ge 8 ] || fail "uid: $g leases for $N reads: $((N / g)) reads a lease, want at least 8"
assert_eq "$(dm_group_reads lsuid 1000)" $N "uid 1000's reads in the status"
dmsetup remove lsuid || fail "remove lsuid"

# ---- 3. detach and attach under a verifying writer ------------------------------------
# fio writes its region at random, then reads it back and checks every
# block, 40 times over; the group comes and goes while it runs.
echo >$TRACEFS/trace
cg_run ls-a fio --name=w --filename="$cgdev" --rw=randwrite --bs=4k --size=4m \
	--ioengine=libaio --iodepth=8 --direct=1 --loops=40 \
	$(fio_verify_args) --verify_fatal=1 >"$TESTDIR/fio-w.out" 2>&1 &
fpid=$!
on_exit "kill $fpid 2>/dev/null"
rounds=0
while alive $fpid && [ $rounds -lt 20 ]; do
	# some writes go under a lease of the attached group first
	n=$(grants_of "$ida")
	while alive $fpid && [ "$(grants_of "$ida")" -le "$n" ]; do
		sleep 0.05
	done
	alive $fpid || break
	dmsetup message lscg 0 detach "$ida" || fail "detach $ida (round $rounds)"
	dmsetup message lscg 0 attach "$ida" || fail "attach $ida (round $rounds)"
	dmsetup message lscg 0 weight "$ida:200" || fail "weight $ida (round $rounds)"
	rounds=$((rounds + 1))
done
wait $fpid || fail "the verifying writer failed: $(grep -m1 -i 'verify\|err' "$TESTDIR/fio-w.out")"
log "$rounds detaches under leased writes, every block verified after each of 40 passes"
[ $rounds -ge 5 ] || fail "only $rounds detaches while the writer ran, want at least 5"
dmsetup remove lscg || fail "remove lscg"

# ---- 4. weight-time -------------------------------------------------------------------
lone_reader weight-time lswt "0 $sz ioband $nb lsdg4 0 0 cgroup weight-time 0 :100 $ida:200"
dmsetup remove lswt || fail "remove lswt"

# ---- 5. a completion after leasing began again ----------------------------------
# wait_dd PID WHAT: bounded wait (10 s) for a dd started in the background
wait_dd() {
	local i
	for i in $(seq 100); do
		alive "$1" || { wait "$1"; return; }
		sleep 0.1
	done
	return 1
}
slow=$(nullb_create ls5 64 500000000)
ssz=$(blockdev --getsz "$slow")
b=$(cg_create ls-b)
idb=$(stat -c %i "$b")
sdev=$(dm_create ls5 "0 $ssz ioband $slow lsdg5 0 8 cgroup weight 0 :100 $ida:100 $idb:100")
echo >$TRACEFS/trace
cg_run ls-a dd if="$sdev" of=/dev/null bs=4k count=1 iflag=direct status=none &
apid=$!
# a's read went down with a lease of its group (the trace event is at the
# grant, under the lock, before the read leaves map())
for i in $(seq 100); do
	[ "$(grants_of "$ida")" -ge 1 ] && break
	sleep 0.05
done
[ "$(grants_of "$ida")" -ge 1 ] || fail "no lease granted for a's read"
alive $apid || fail "a's read ended before the revoke: the device is not slow"
dmsetup message ls5 0 weight "$ida:100" || fail "weight $ida"
cg_run ls-b dd if="$sdev" of=/dev/null bs=4k count=1 iflag=direct status=none ||
	fail "b's first read"
wait_dd $apid || fail "a's read did not end within 10 s"
dmsetup message ls5 0 io_limit 1 || fail "io_limit 1"
cg_run ls-b dd if="$sdev" of=/dev/null bs=4k count=1 skip=1 iflag=direct status=none &
bpid=$!
if ! wait_dd $bpid; then
	# a's group off the device folds what it left, and lets b go
	dmsetup message ls5 0 detach "$ida"
	wait $bpid
	fail "b's read at io_limit 1 not done within 10 s: a's leased read, completed after leasing began again, stayed in flight"
fi
log "a read leased before a revoke and completed after a new lease: folded"
dmsetup remove ls5 || fail "remove ls5"

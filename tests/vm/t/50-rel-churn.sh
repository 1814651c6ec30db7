#!/bin/bash
# Scale and churn while I/O runs: 10,000 groups attached and detached by
# message and 10,000 groups at a time swapped in and out by table reloads;
# a cgroup removed while its bios are held (its group stays valid until
# they drain); a process whose uid group is detached mid-I/O.  Every
# writer verifies its data (crc32c).
# timeout: 500
. /tests/lib.sh
. /tests/t/rel.inc

nb=$(nullb_create churn0 128 200000 2 1)
sz=$(blockdev --getsz "$nb")
dev=$(dm_create churn "0 $sz ioband $nb churndg 0 4 user weight 2 :100 0:100")

# A writer (uid 0, so in group 0) that verifies, until the churn ends.
rel_loop_start w timeout 180 fio --name=churn --filename="$dev" --rw=randwrite \
	--bs=4k --size=2m --numjobs=2 --offset_increment=8m --direct=1 \
	--ioengine=psync --verify_fatal=1 --group_reporting

# --- 10,000 groups attached, weighted and detached by message -----------------------
# Ids never used before; about 50 attached at any time.  One dmmsg process
# sends them all (a dmsetup per message is ~100 ms under TCG).
GROUPS_BY_MSG=${REL_GROUPS:-10000}
awk -v n="$GROUPS_BY_MSG" 'BEGIN {
	for (i = 0; i < n; i++) {
		printf "churn attach %d\nchurn weight %d:%d\n", 100000 + i, 100000 + i, i % 9999 + 1
		if (i >= 50)
			printf "churn detach %d\n", 100000 + i - 50
	}
	for (i = (n > 50 ? n - 50 : 0); i < n; i++)
		printf "churn detach %d\n", 100000 + i
}' >"$TESTDIR/churn.msgs"
dmmsg <"$TESTDIR/churn.msgs" >"$TESTDIR/dmmsg.out" 2>&1 ||
	fail "messages refused: $(tail -n 3 "$TESTDIR/dmmsg.out")"
assert_eq "$(tail -n1 "$TESTDIR/dmmsg.out")" "$((GROUPS_BY_MSG * 3)) sent, 0 refused" "dmmsg"
assert_eq "$(dmsetup status churn | wc -w)" $((4 + 2 * 7)) "groups left after the message churn"
attached=$GROUPS_BY_MSG
log "$attached groups attached, weighted and detached by message under I/O"

# --- 10,000 groups per table, swapped in and out ------------------------------------
swaps=0
for base in 1000000 2000000 3000000; do
	awk -v sz="$sz" -v nb="$nb" -v a=$base 'BEGIN {
		printf "0 %d ioband %s churndg 0 4 user weight 2 :100 0:100", sz, nb
		for (i = a; i < a + 10000; i++) printf " %d:%d", i, i % 10000 + 1
		print "" }' | dmsetup load churn || fail "load 10,000 groups"
	dmsetup suspend churn && dmsetup resume churn || fail "resume 10,000 groups"
	assert_eq "$(dmsetup status churn | wc -w)" $((4 + 10002 * 7)) "groups in the status"
	swaps=$((swaps + 1))
done
dmsetup load churn --table "0 $sz ioband $nb churndg 0 4 user weight 2 :100 0:100" &&
	dmsetup suspend churn && dmsetup resume churn || fail "back to two groups"
rel_loop_stop w
set -- "$LOOP_RUNS" "$LOOP_IOS"
churn_bios=$2
log "$((swaps * 10000)) groups swapped in and out by $swaps table reloads; writers verified $churn_bios I/Os"

# --- a cgroup removed while its bios are held ---------------------------------------
# The writers are moved out of the cgroup while their bios are held, the
# cgroup is removed and its group detached: the held bios still complete.
slow=$(nullb_create churn1 64 5000000 1 1)
cgd=$(cg_create churn-gone)
cgid=$(stat -c %i "$cgd")
cg_create churn-other >/dev/null
held=$(dm_create held "0 $(blockdev --getsz "$slow") ioband $slow churndg2 0 1 cgroup weight 1 :100 $cgid:100")
cg_run churn-gone fio --name=gone --filename="$held" --rw=randwrite --bs=4k --size=128k \
	--numjobs=4 --offset_increment=1m --direct=1 --ioengine=psync $(fio_verify_args) \
	--verify_fatal=1 --group_reporting >"$TESTDIR/gone.out" 2>&1 &
gpid=$!
rel_wait_held held 3 $gpid
# fio may still be forking a job while its others are moved: a child
# forked before its parent moved stays behind, so move until none is left
# (each round moves every process seen; at most one per job can appear)
for round in 1 2 3 4 5 6; do
	procs=$(cat "$cgd/cgroup.procs")
	[ -n "$procs" ] || break
	for p in $procs; do
		# one that has exited meanwhile is gone already
		echo "$p" 2>/dev/null >/sys/fs/cgroup/churn-other/cgroup.procs ||
			[ ! -d "/proc/$p" ] || fail "moving $p out"
	done
done
[ -z "$(cat "$cgd/cgroup.procs")" ] ||
	fail "processes still in churn-gone after 6 rounds of moving them out: $(cat "$cgd/cgroup.procs" | xargs)"
rmdir "$cgd" || fail "rmdir of the emptied cgroup"
[ -d "$cgd" ] && fail "cgroup still there"
inflight_held=$(rel_held held)
dmsetup message held 0 detach "$cgid" || fail "detach the removed cgroup's group"
wait $gpid || fail "writers of the removed cgroup: $(tail -n 5 "$TESTDIR/gone.out")"
rel_fio_verified "$TESTDIR/gone.out"
log "cgroup removed with $inflight_held bios held: its writers verified their data"

# --- a uid group detached mid-I/O -------------------------------------------------
dmsetup load held --table "0 $(blockdev --getsz "$slow") ioband $slow churndg2 0 1 user weight 1 :100 4242:100" &&
	dmsetup suspend held && dmsetup resume held || fail "user table"
chmod 666 "$held"	# fio opens it as uid 4242
fio --name=uid --filename="$held" --rw=randwrite --bs=4k --size=128k --numjobs=4 \
	--offset_increment=1m --direct=1 --ioengine=psync $(fio_verify_args) \
	--verify_fatal=1 --uid=4242 --group_reporting >"$TESTDIR/uid.out" 2>&1 &
upid=$!
rel_wait_held held 3 $upid
dmsetup message held 0 detach 4242 || fail "detach uid 4242 mid-I/O"
wait $upid || fail "writer of uid 4242: $(tail -n 5 "$TESTDIR/uid.out")"
rel_fio_verified "$TESTDIR/uid.out"
# its later bios went to the default group
[ "$(rel_field held -1 4)" -gt 0 ] || fail "no write reached the default group after the detach"
log "uid group detached mid-I/O: the writer verified its data"

report groups_by_message "$attached"
report groups_by_table $((swaps * 10000))
report bios $((churn_bios + $(rel_fio_issued "$TESTDIR/gone.out" "$TESTDIR/uid.out")))

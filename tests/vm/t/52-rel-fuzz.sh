#!/bin/bash
# The kernel's own parser under fuzz: 10,000 table lines and messages
# (2,000 on the debug kernel, five times slower), made from the fuzz
# corpus and bad-input.corpus and mutated (tests/vm/dmfuzz.c), go through
# DM_TABLE_LOAD (+ resume) and DM_TARGET_MSG of a live ioband device, so
# through device-mapper's own splitting (\t \n \v \f \r 0xA0, backslash
# quoting); each one is refused or applied exactly as a model of the
# documented grammar says, a refused one leaves the table and status
# byte-identical.  A writer verifies its data all along, through every
# reload.  A failure prints the seed: rerun with VM_APPEND=dmfuzz.seed=N
# (and dmfuzz.count=N to scale the run) to replay it.
# timeout: 540
# long: debug
. /tests/lib.sh
. /tests/t/rel.inc

COUNT=$(sed -n 's/.*dmfuzz\.count=\([0-9]*\).*/\1/p' /proc/cmdline)
if [ -z "$COUNT" ]; then
	COUNT=10000
	rel_kernel debug && COUNT=2000
fi
seed=$(sed -n 's/.*dmfuzz\.seed=\([0-9]*\).*/\1/p' /proc/cmdline)
[ -n "$seed" ] || seed=$(( $(date +%s%N) % 1000000007 ))
log "seed $seed (replay: VM_APPEND=dmfuzz.seed=$seed)"

nb=$(nullb_create fuzz0 64 "" "" 1)
sz=$(blockdev --getsz "$nb")
below=$(stat -L -c '%t:%T' "$nb")
below=$((16#${below%:*})):$((16#${below#*:}))
orig="0 $sz ioband $nb fz 8 64 user weight 256 :100 0:100 1000:80"
dev=$(dm_create fz "$orig")

# A writer that verifies (uid 0: group 0 or the default group, whatever
# the table of the moment says), again and again until the fuzzing ends.
rel_loop_start w timeout 120 fio --name=fz --filename="$dev" --rw=randwrite \
	--bs=4k --size=1m --numjobs=2 --offset_increment=8m --direct=1 \
	--ioengine=psync --verify_fatal=1 --group_reporting

t0=$(date +%s.%N)
timeout 450 dmfuzz "$seed" "$COUNT" fz "$below" "$sz" /tests/fuzz-corpus/* \
	/tests/t/bad-input.corpus >"$TESTDIR/fuzz.out" 2>&1
rc=$?
log "dmfuzz took $(echo "$(date +%s.%N) $t0" | awk '{ print $1 - $2 }') s"
cat "$TESTDIR/fuzz.out"

# Back to a table under which the writer runs at full speed (a fuzzed
# range-bw cap could leave it at a few KB/s), then its last run must end
# and every run must have verified.
dmsetup load fz --table "$orig" && dmsetup resume fz || fail "back to the original table"
rel_loop_stop w
log "the writer verified $LOOP_IOS I/Os in $LOOP_RUNS runs across the fuzzing"
[ $rc = 0 ] || fail "dmfuzz seed $seed: rc $rc: $(grep -m1 'input [0-9]*:' "$TESTDIR/fuzz.out")"

# "N inputs: T tables (A accepted), M messages (B accepted)"
read -r n _ t _ ta _ m _ ma _ < <(tail -n1 "$TESTDIR/fuzz.out" | tr -d '(,')
assert_eq "$n" "$COUNT" "inputs"
# Both outcomes must be tried often: a tenth of each kind accepted and a
# tenth refused at least.
for k in "tables $t $ta" "messages $m $ma"; do
	set -- $k
	[ $(($3 * 10)) -ge "$2" ] && [ $((($2 - $3) * 10)) -ge "$2" ] ||
		fail "$1: $3 of $2 accepted (want a tenth to nine tenths)"
done
report inputs "$n"
report tables_accepted "$ta"
report messages_accepted "$ma"
report writer_ios "$LOOP_IOS"

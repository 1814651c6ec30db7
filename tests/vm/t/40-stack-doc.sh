#!/bin/bash
# Documentation/ioband.rst's examples, run as written (the blocks marked
# "vm-example" in the .rst, copied into stack-doc.inc by
# tests/vm/stack-doc-extract) on null_blk disks standing in for the
# example's /dev/sdc and /dev/sdd1, and the outputs the .rst shows
# ("vm-output") compared with the real ones: the same text with the
# numbers left free.  The "Partitions of one disk" example runs in
# 40-stack-partitions.sh.
# timeout: 180
# long: debug
. /tests/lib.sh
. /tests/t/stack.inc
require fio

for p in /dev/sdc /dev/sdd1 /dev/sde; do
	[ -e $p ] && skip "$p exists in this VM; the example's names are taken"
done
# 1 ms a request: the tracepoint example's readers keep more bios in
# flight than io_limit lets go down, however slowly the guest submits
nc=$(stk_nullb sdoc0 64 completion_nsec=1000000 hw_queue_depth=4)
nd=$(stk_nullb sdoc1 16)
ln -s "$nc" /dev/sdc && on_exit "rm -f /dev/sdc"
ln -s "$nd" /dev/sdd1 && on_exit "rm -f /dev/sdd1"
ne=$(stk_nullb sdoc2 16)
ln -s "$ne" /dev/sde && on_exit "rm -f /dev/sde"
szc=$(blockdev --getsz "$nc")
devc=$(cat /sys/block/"${nc#/dev/}"/dev)
doc_load
# the .rst's output block NAME, line N (commands "# ..." included)
doc_out() { sed -n "${2}p" "$TESTDIR/doc/$1.out"; }
# the last kernel log record holding TEXT, without its timestamp
klog() { dmesg | grep -F -- "$1" | tail -n 1 | sed 's/^\[[ 0-9.]*\] //'; }

# ---- a refused table ------------------------------------------------------------------
out=$(echo "0 8 ioband /dev/sdc refused 8 4 none weight 0" | dmsetup create refused 2>&1) &&
	fail "a table with io_throttle 8 above io_limit 4 was accepted"
case $out in *"reload ioctl on refused"*failed*) ;; *) fail "dmsetup said: $out" ;; esac
got=$(klog "io_throttle must not exceed io_limit")
assert_eq "$(doc_shape "$got")" "$(doc_shape "$(doc_out table-refused 1)")" "the refused table's kernel log line"
dmsetup info refused >/dev/null 2>&1 && fail "the refused table left a device"

# ---- cgroups: the data device, attach, detach ---------------------------------------
on_exit "dmsetup remove --retry data"
on_exit "rmdir $CG_ROOT/backup $CG_ROOT/web $CG_ROOT/batch"
doc_run cgroups
web=$(stat -c %i $CG_ROOT/web)
batch=$(stat -c %i $CG_ROOT/batch)
# the defaults filled in: io_limit 0 is 128, token_base 0 is 256
want="0 $szc ioband $devc data 0 128 cgroup weight 256 :100 $web:400 $batch:100"
assert_eq "$(dmsetup table data)" "$want" "the cgroups example's table"
assert_eq "$(doc_out table 1)" "# dmsetup table data" "the table block's command"
assert_eq "$(doc_shape "$(dmsetup table data)")" "$(doc_shape "$(doc_out table 2)")" "dmsetup table's form"

doc_run attach
id=$(stat -c %i $CG_ROOT/backup)
assert_eq "$(dmsetup table data)" "$want $id:50" "after the attach example"
id=$id doc_run detach
assert_eq "$(dmsetup table data)" "$want" "after the detach example"

# ---- limits on batch ------------------------------------------------------------------
batch=$batch doc_run limits
assert_eq "$(dmsetup table data)" "$want/wbps=20000000,riops=500,burst=1000" "after the limits example"
assert_eq "$(doc_out table-limits 1)" "# dmsetup table data" "the limits table block's command"
assert_eq "$(doc_shape "$(dmsetup table data)")" "$(doc_shape "$(doc_out table-limits 2)")" "dmsetup table's form with limits"
batch=$batch doc_run limits-off
assert_eq "$(dmsetup table data)" "$want" "after the limits-off example"

# ---- status: I/O from web and batch at once -------------------------------------------
for g in web batch; do
	cg_run $g fio --name=$g --filename=/dev/mapper/data --rw=randread --bs=4k \
		--numjobs=4 --direct=1 --ioengine=psync --number_ios=200 \
		--group_reporting >/dev/null 2>&1 &
done
wait
st=$(dmsetup status data)
log "status after 800 reads from each cgroup: $st"
assert_eq "$(doc_out status 1)" "# dmsetup status data" "the status block's command"
assert_eq "$(doc_shape "$st")" "$(doc_shape "$(doc_out status 2)")" "dmsetup status's form"
assert_eq "$(stk_field data "$web" reads)/$(stk_field data "$web" rsect)" 800/6400 "web's reads and sectors"
assert_eq "$(stk_field data "$batch" reads)/$(stk_field data "$batch" rsect)" 800/6400 "batch's reads and sectors"
assert_eq "$(stk_field data -1 reads)" 0 "the default group's reads"
# the latency answer: the block's command, a line of six numbers a group
lat=$(dmsetup message data 0 latency) || fail "the latency message refused"
log "latency after those reads: $lat"
assert_eq "$(doc_out latency 1)" "# dmsetup message data 0 latency" "the latency block's command"
assert_eq "$(echo "$lat" | awk '{ print $1 }' | tr '\n' ' ')" \
	"$(dmsetup status data | awk '{ for (i = 5; i <= NF; i += 7) printf "%s ", $i }')" \
	"the latency answer's groups, in status's order"
for n in 2 3 4; do
	assert_eq "$(doc_shape "$(doc_out latency $n)")" "N N N N N N" "the latency block's line $n"
done
while read -r line; do
	assert_eq "$(doc_shape "$line")" "N N N N N N" "a line of the latency answer"
done <<<"$lat"

# ---- reading the statistics ----------------------------------------------------------
doc_run stats >"$TESTDIR/stats.out"
cat "$TESTDIR/stats.out"
assert_eq "$(awk '{print $1, $2}' "$TESTDIR/stats.out" | xargs)" "group -1 group $web group $batch" "the stats example's groups"
assert_eq "$(awk '{print $3}' "$TESTDIR/stats.out" | xargs)" "0.0 3.1 3.1" "the stats example's MiB"
assert_eq "$(awk '{print $5}' "$TESTDIR/stats.out" | xargs)" "0.0 50.0 50.0" "the stats example's shares"
assert_eq "$(awk '{print $9}' "$TESTDIR/stats.out" | xargs)" "0 800 800" "the stats example's bios"
awk '{ if ($7 > $9) exit 1 }' "$TESTDIR/stats.out" || fail "the stats example shows more bios held than bios"

# ---- changing weights: sleep stands in to read the table at each step ------------------
printf '#!/bin/sh\ndmsetup table data >>%s\n' "$TESTDIR/steps" >"$TESTDIR/doc/bin/sleep"
chmod +x "$TESTDIR/doc/bin/sleep"
batch=$batch doc_run weights
rm "$TESTDIR/doc/bin/sleep"
assert_eq "$(sed "s/.* $batch:\([0-9]*\).*/\1/" "$TESTDIR/steps" | xargs)" "100 200 400 800" "batch's weight at each step"
assert_eq "$(dmsetup table data)" "0 $szc ioband $devc data 0 128 cgroup weight 256 :100 $web:400 $batch:800" "after the weights example"

# ---- '--' before a message with a '-' -----------------------------------------------------
out=$(dmsetup message data 0 weight -1:60 2>&1) && fail "dmsetup took 'weight -1:60' without --"
case $out in *"invalid option -- '1'"*) ;; *) fail "without --, dmsetup said: $out" ;; esac
case "$(dmsetup table data)" in *" :100 "*) ;; *) fail "the message without -- changed something" ;; esac
doc_run dash
case "$(dmsetup table data)" in *" :60 "*) ;; *) fail "the -- example did not set the default weight: $(dmsetup table data)" ;; esac

# ---- a refused message ------------------------------------------------------------------
out=$(dmsetup message data 0 weight 0 2>&1) && fail "weight 0 was accepted"
case $out in *"message ioctl on data"*"failed: Invalid argument"*) ;; *) fail "dmsetup said: $out" ;; esac
got=$(klog 'message "weight" refused')
assert_eq "$(doc_shape "$got")" "$(doc_shape "$(doc_out message-refused 1)")" "the refused message's kernel log line"

# ---- users ----------------------------------------------------------------------------------
on_exit "dmsetup remove --retry home"
doc_run users
assert_eq "$(dmsetup table home)" \
	"0 $(blockdev --getsz "$nd") ioband $(cat /sys/block/"${nd#/dev/}"/dev) home 0 128 user weight 256 :100 1000:300 1001:100" \
	"the users example's table"

# ---- a tree of cgroups ------------------------------------------------------------------------
on_exit "dmsetup remove --retry sites"
on_exit "rmdir $CG_ROOT/web/a $CG_ROOT/web/b"
doc_run tree
want="0 $(blockdev --getsz "$ne") ioband $(cat /sys/block/"${ne#/dev/}"/dev) sites 0 128 cgroup-tree weight-time 256 :100"
# the groups in id order, as dmsetup table prints them
want+=$(for g in web:300 web/a:400 web/b:200 batch:100; do
	echo " $(stat -c %i "$CG_ROOT/${g%:*}"):${g#*:}"
done | sort -n -t: -k1,1 | tr -d '\n')
assert_eq "$(dmsetup table sites)" "$want" "the tree example's table"

# ---- a cost model -----------------------------------------------------------------------------
doc_run cost-model
case "$(dmsetup table data)" in
*" weight-time 256 "*" rbps=500000000 rseqiops=60000 rrandiops=40000 wbps=300000000 wseqiops=30000 wrandiops=20000") ;;
*) fail "the cost model example's table: $(dmsetup table data)" ;;
esac
doc_run cost-model-auto
case "$(dmsetup table data)" in
*=*) fail "the model is still there after 'cost_model auto': $(dmsetup table data)" ;;
esac
dmsetup message data 0 policy weight || fail "policy weight again"

# ---- tracepoints: run the commands shown, with I/O that gets held ---------------------------
tr=/sys/kernel/tracing
[ -d $tr/events ] || mount -t tracefs nodev $tr 2>/dev/null
if [ ! -d $tr/events/ioband ]; then
	log "no ioband trace events on this kernel (no tracefs): the tracepoint example is not checked"
else
	on_exit "echo 0 > $tr/events/ioband/enable"
	# few bios in flight, so that some are held (and released)
	dmsetup message data 0 io_limit 2 || fail "io_limit 2"
	held_reads() { dmsetup status data | awk '{ for (i = 5; i + 6 <= NF; i += 7) n += $(i + 2) } END { print n + 0 }'; }
	held0=$(held_reads)
	doc_out trace 1 | sed 's/^# //' | bash || fail "$(doc_out trace 1)"
	# the reader runs until the readers are done and their last release
	# is read: fio's 16 processes take several seconds to start on the
	# debug kernel, longer than a fixed window (8 s caught nothing)
	timeout 120 bash -c "$(doc_out trace 2 | sed 's/^# //')" >"$TESTDIR/trace" &
	reader=$!
	on_exit "kill $reader 2>/dev/null"
	fios=()
	for g in web batch; do
		cg_run $g fio --name=$g --filename=/dev/mapper/data --rw=randread --bs=4k \
			--numjobs=8 --direct=1 --ioengine=psync --time_based --runtime=2 \
			>/dev/null 2>&1 &
		fios+=($!)
	done
	wait "${fios[@]}"
	held=$(($(held_reads) - held0))
	[ "$held" -gt 0 ] || skip "the tracepoint example not checked: the readers got no bio held (the guest submitted one at a time)"
	# every hold has its release by now; wait (at most 10 s) until the
	# reader has printed one
	i=0
	while ! grep -q ioband_release "$TESTDIR/trace" && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill $reader 2>/dev/null
	for n in 3 4; do
		# the line's own text, with its numbers free
		re=$(doc_out trace $n | sed -E 's/^\.\.\. //; s/0x[0-9a-f]+/0x[0-9a-f]+/; s/=[0-9]+/=-?[0-9]+/g')
		grep -qE "$re" "$TESTDIR/trace" || fail "no trace line like '$(doc_out trace $n)': $(head -n 3 "$TESTDIR/trace")"
	done
	log "trace: $(grep -c ioband_hold "$TESTDIR/trace") holds, $(grep -c ioband_release "$TESTDIR/trace") releases, e.g. $(grep -m1 ioband_hold "$TESTDIR/trace")"
fi
log "the documentation's examples ran as written and its outputs match"

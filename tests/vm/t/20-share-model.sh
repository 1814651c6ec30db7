#!/bin/bash
# A cost model given by the user (weight-time, iocost's io.cost.model
# terms): the table takes it and prints it back, the cost_model message
# sets it and "auto" withdraws it, bad input is refused with its reason
# and changes nothing, a second device of the device group must name the
# same model; and the model, not what ioband measures, prices the bios.
#
# The shares, as 20-share-devtime: weights 4:2:1, reads in a and b, 4 KiB
# random writes (3.9 times a read's device time) in c, on the model
# device's ssd profile with its times x20, under -icount.
#  1. With the device's true linear model (written as the benchmarks write
#     it into io.cost.model) each group is within 2 points of its share of
#     device time.
#  2. A model that takes the writes for reads gives c a seventh of the
#     I/Os, and so well over its share of device time (about 37 %): the
#     model decides.  With the model ignored and costs learned, c keeps
#     its 14.3 %, and this fails.
# On the debug kernel the device is not the limit (see 20-share-devtime):
# the shares are reported, not judged.
# icount: yes
# smp: 1
# long: debug
# timeout: 600
. /tests/lib.sh
. /tests/t/devtime.inc

SETTLE=2 WINDOW=4 SCALE=20	# seconds of guest time; the profile's times x SCALE
dev=$(dt_device dtm0)
d=$IOBM_CFS/dtm0
sz=$(blockdev --getsz "$dev")
half=$((sz / 2))

# iocost's linear model of the device (no seeks): a page costs 4 KiB of
# transfer over the channels, a 4 KiB I/O its base and transfer over them
ch=$(cat "$d/channels")
model=
for dir in read write; do
	base=$(cat "$d/${dir}_base_ns") pk=$(cat "$d/${dir}_per_kib_ns")
	iops=$((ch * 1000000000 / (base + 4 * pk)))
	model+=" ${dir:0:1}bps=$((ch * 1024 * 1000000000 / pk)) ${dir:0:1}seqiops=$iops ${dir:0:1}randiops=$iops"
done
model=${model# }
log "true model: $model"
# the same with the writes priced as reads
read -r -a m <<<"$model"
cheap="${m[0]} ${m[1]} ${m[2]} w${m[0]#r} w${m[1]#r} w${m[2]#r}"

# --- the interface -----------------------------------------------------------
p1=$(dm_create dtmp1 "0 $half linear $dev 0")
p2=$(dm_create dtmp2 "0 $half linear $dev $half")
dm_create dtmi2 "0 $half ioband $p2 dtmdg 0 0 none weight-time 0 :100 $model" >/dev/null
below=$(dev_t_of "$p2" | tr , :)
t=$(dmsetup table dtmi2)
assert_eq "$t" "0 $half ioband $below dtmdg 0 128 none weight-time 256 :100 $model" "table with a model"

refused_load() { # DEV REASON TABLE
	dmesg -c >/dev/null
	echo "$3" | dmsetup load "$1" 2>/dev/null && fail "$1 loaded '$3'"
	dmesg | grep -qF "$2" || fail "no '$2' in the log: $(dmesg | tail -n 3)"
	assert_eq "$(dmsetup table "$1")" "$t" "$1's table after a refused load"
}
refused_msg() { # DEV REASON MSG...
	local dev=$1 why=$2
	shift 2
	dmesg -c >/dev/null
	dmsetup message "$dev" 0 -- "$@" 2>/dev/null && fail "$dev took '$*'"
	dmesg | grep -qF "message \"$1\" refused: $why" ||
		fail "no 'message \"$1\" refused: $why' in the log: $(dmesg | tail -n 3)"
	assert_eq "$(dmsetup table "$dev")" "$t" "$dev's table after '$*'"
}
refused_load dtmi2 "a cost model needs all of rbps, rseqiops, rrandiops, wbps, wseqiops and wrandiops" \
	"0 $half ioband $p2 dtmdg 0 0 none weight-time 0 :100 ${model% *}"
refused_load dtmi2 "cost model values must be numbers from 1 to 1000000000000" \
	"0 $half ioband $p2 dtmdg 0 0 none weight-time 0 :100 ${model% *} wrandiops=0"
refused_load dtmi2 "unknown table option" \
	"0 $half ioband $p2 dtmdg 0 0 none weight-time 0 :100 model=linear $model"
refused_msg dtmi2 "cost_model takes auto" cost_model "${m[@]:0:5}"
refused_msg dtmi2 "unknown cost model parameter" cost_model "${m[@]:0:5}" ctrl=user
refused_msg dtmi2 "cost model parameter given twice" cost_model "${m[@]:0:5}" "${m[0]}"
# a second device of the live device group names the same model or is refused
dmsetup create dtmi1 --notable || fail "create dtmi1 without a table"
on_exit "dmsetup remove --retry dtmi1"
dmesg -c >/dev/null
echo "0 $half ioband $p1 dtmdg 0 0 cgroup weight-time 0 :100" | dmsetup load dtmi1 2>/dev/null &&
	fail "dtmi1 loaded without the device group's model"
dmesg | grep -qF "cost model differs from the device group's: change it by message" ||
	fail "no 'cost model differs' in the log: $(dmesg | tail -n 3)"
dmsetup message dtmi2 0 cost_model auto || fail "cost_model auto refused"
t=$(dmsetup table dtmi2)
assert_eq "$t" "0 $half ioband $below dtmdg 0 128 none weight-time 256 :100" "table after auto"
# shellcheck disable=SC2086
dmsetup message dtmi2 0 cost_model $cheap || fail "cost_model refused: $cheap"
t=$(dmsetup table dtmi2)
assert_eq "$t" "0 $half ioband $below dtmdg 0 128 none weight-time 256 :100 $cheap" "table after cost_model"
log "the model taken, printed back, changed and withdrawn; bad input refused, tables unchanged"
dmsetup remove dtmi1 && dmsetup remove dtmi2 && dmsetup remove dtmp1 && dmsetup remove dtmp2 ||
	fail "removing the interface's devices"

# --- the shares ----------------------------------------------------------------
dt_cgroups dtm
iob=$(dm_create dtm "0 $sz ioband $dev dtmsh 0 0 cgroup weight-time 0 $(dt_groups) $model")
dt_load dtm "$iob" dtm0
dt_window dtm0 share_model.true
not_limit=$(dt_limit)
true_msg=$DT_MSG
[ -n "$not_limit" ] || dt_judge "true model"
# shellcheck disable=SC2086
dmsetup message dtm 0 cost_model $cheap || fail "cost_model refused: $cheap"
dt_window dtm0 share_model.cheap
[ -z "$not_limit" ] || skip "$not_limit: true model%:$true_msg; writes as reads%:$DT_MSG"
c=${DT_GOT[c]}
[ "$c" -ge 300 ] ||
	fail "writes priced as reads: c got $((c / 10)).$((c % 10)) % of the device time, want over 30 (the model ignored?) (%:$DT_MSG)"
log "true model within 2 points of 4:2:1 (%:$true_msg); writes priced as reads gave c $((c / 10)).$((c % 10)) %"

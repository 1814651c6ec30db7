#!/bin/bash
# The model device against the guest's clock: at depth 1 a 4 KiB read and
# write take model.h's time (fio's clat), depth 8 on the ssd profile gives
# `channels` times depth 1's throughput, and the disk profile's random
# reads are much slower than its sequential ones.  Meant for --icount
# (guest time follows instructions, timers are punctual: the figures are
# exact); on a loaded host the timers run late, and then only the bounds
# that lateness cannot break are checked and the rest skipped.  make
# check runs it under -icount on the production kernel (52 s there).
# icount: yes
# kernel: production
# smp: 1
# timeout: 300
. /tests/lib.sh
. /tests/t/modeldev.inc

# Costs of 10 ms and more, so the guest's own overhead (measured on a
# zero-cost twin) stays small beside them.  PUNCTUAL: the device's timers
# ran late by at most 2 % of the cost (the device measures it).
PUNCTUAL=1
punctual() { # dev cost_ns
	[ "$(late_per_req "$1")" -le $(($2 / 50)) ] || PUNCTUAL=0
}

# ---- service time at depth 1 -------------------------------------------
iobm_create mzero 64 ssd read_base_ns=0 write_base_ns=0 \
	read_per_kib_ns=0 write_per_kib_ns=0 >/dev/null
iobm_create mslow 64 ssd read_base_ns=10000000 write_base_ns=20000000 >/dev/null
declare -A med
for rw in read write; do
	want=$(model_ns mslow $rw 4)
	if [ $rw = read ]; then f_min=14 f_med=24; else f_min=55 f_med=65; fi
	for d in mzero mslow; do
		reset_stats $d
		out=$(fio_run "/dev/$d" rand$rw 4k 1 60)
		med[$d]=$(field "$out" $f_med)
	done
	min=$(field "$out" $f_min)
	late=$(late_per_req mslow)
	punctual mslow "$want"
	got=$(((med[mslow] - med[mzero]) * 1000))
	log "4 KiB $rw: model $want ns; fio clat median ${med[mslow]} us, zero-cost twin ${med[mzero]} us, min $min us; timers late $late ns on average"
	report "${rw}_4k_model_ns" "$want"
	report "${rw}_4k_clat_ns" "$got"
	report "${rw}_4k_late_ns" "$late"
	# a completion never comes before the model's time
	within "$min" "$((want / 1000))" 1e12 ||
		bad "4 KiB $rw completed after $min us, before the model's $want ns"
	[ $PUNCTUAL = 1 ] || continue
	# clat's median above the twin's: the model's time, plus the timers'
	# lateness and the cost of waking the guest from idle (0.1 % under
	# --icount); fio's clat has a 1 us grain.
	within "$got" "$((want * 99 / 100))" "$((want * 103 / 100 + 2 * late))" ||
		bad "4 KiB $rw took $got ns more than on the zero-cost twin, the model says $want (-1 % to +3 % + twice the lateness)"
done

# ---- channels -----------------------------------------------------------
# 512 KiB reads on the ssd profile (4 channels) with a 10 ms read base:
# 12.048 ms each.
chn=$(iobm_create mch 1024 ssd read_base_ns=10000000)
ch=$(attr mch channels)
t=$(model_ns mch read 512)
reset_stats mch
iops1=$(field "$(fio_run "$chn" randread 512k 1 40)" 8)
punctual mch "$t"
reset_stats mch
iops8=$(field "$(fio_run "$chn" randread 512k 8 160)" 8)
punctual mch "$t"
cap=$(calc "$ch * 1e9 / $t")
ratio=$(awk -v a="$iops8" -v b="$iops1" 'BEGIN { printf "%.2f", a / b }')
log "512 KiB reads: $iops1 IOPS at depth 1, $iops8 at depth 8 (x$ratio, $ch channels, the model's limit $cap IOPS)"
report ssd_512k_iops_depth1 "$iops1"
report ssd_512k_iops_depth8 "$iops8"
# the device never beats its model (fio's IOPS is rounded: +1)
within "$iops8" 0 "$((cap + 1))" ||
	bad "depth 8: $iops8 IOPS, above the $cap that $ch channels allow"
if [ $PUNCTUAL = 1 ]; then
	# depth 1 also pays the guest's overhead once a request: the ratio
	# may exceed channels a little
	within "$ratio" "$(awk -v c="$ch" 'BEGIN { print c * 0.95 }')" \
		"$(awk -v c="$ch" 'BEGIN { print c * 1.1 }')" ||
		bad "depth 8 gave $ratio times depth 1's IOPS, want $ch (-5 % to +10 %)"
	within "$iops8" "$((cap * 95 / 100))" "$((cap + 1))" ||
		bad "depth 8: $iops8 IOPS, the model's $ch channels give $cap (-5 %)"
fi

# The seek section checks only closeness: not worth its time otherwise.
if [ $PUNCTUAL = 0 ]; then
	check_end
	skip "timers ran late by more than 2 % of a request's cost (host loaded?): only the lower bounds were checked, the seek section not run"
fi

# ---- seek -----------------------------------------------------------------
# The disk profile over 1 GiB: sequential 4 KiB reads 0.14 ms, random ones
# 3.14 ms on average (05-modeldev checks the device time exactly).
disk=$(iobm_create mdisk 1024 disk)
reset_stats mdisk
seq=$(field "$(fio_run "$disk" read 4k 1 200)" 16)
reset_stats mdisk
rand=$(field "$(fio_run "$disk" randread 4k 1 100)" 16)
punctual mdisk 3140000
log "disk 4 KiB reads: sequential clat $seq us, random $rand us"
report disk_seq_4k_clat_us "$seq"
report disk_rand_4k_clat_us "$rand"
# the model's ratio is 22; the guest's overhead on each read lowers it
if [ $PUNCTUAL = 1 ]; then
	within "$rand" "$(calc "$seq * 10")" 1e12 ||
		bad "random reads ($rand us) are not 10 times slower than sequential ones ($seq us)"
fi

check_end
[ $PUNCTUAL = 1 ] || skip "timers ran late by more than 2 % of a request's cost (host loaded?): only the lower bounds were checked"

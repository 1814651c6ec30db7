#!/bin/bash
# weight-iosize (beside the scenarios of issue 6): two cgroups of equal
# weight, 8 psync jobs each, one issuing 4 KiB and one 64 KiB random direct
# reads: the byte shares under policy weight-iosize (goal 50/50), under
# policy weight for contrast (every bio costs the same), and through
# dm-linear, swapped as the live table of one dm device under one running
# load, for bench.rounds rounds (TCG timing is noisy: the report takes the
# median).  Twice: on the null_blk of the accuracy scenario (100 us, queue
# depth 4), and on one completing after 1 ms, where under TCG the device
# rather than the guest's CPU limits the 4 KiB group.
# timeout: 600
. /tests/lib.sh
. /tests/t/bench.inc

WIN=$(bparam window 10)
ROUNDS=$(bparam rounds 3)
DEVS=$(bparam iosize_devs "100us,1ms")

for g in a b; do cg_create "$g" >/dev/null; done
ia=$(cg_id a) ib=$(cg_id b)
report iosize.settings "window=${WIN}s,rounds=$ROUNDS,io_throttle=$IOB_THROTTLE,io_limit=$IOB_LIMIT,token_base=$IOB_TOKEN"

# iosize_turn DEV ROUND POLICY: POLICY (or dm-linear) as the live table of
# device DEV for one window of the running load; reports its shares.
iosize_turn() {
	local d=$1 k=$2 pol=$3 p=iosize.$1.$3.$2 ba bb

	if [ "$pol" = linear ]; then
		dm_swap "sz$d" "0 $sz linear $nb 0"
	else
		dm_swap "sz$d" "0 $sz ioband $nb sz $IOB_THROTTLE $IOB_LIMIT cgroup $pol $IOB_TOKEN :100 $ia:100 $ib:100"
	fi
	window "$WIN" "$dev" a b
	pct "${W_BYTES[0]}" "$W_TOTAL_BYTES"
	ba=$REPLY
	pct "${W_BYTES[1]}" "$W_TOTAL_BYTES"
	bb=$REPLY
	report "$p.bytes.a" "${W_BYTES[0]}"
	report "$p.bytes.b" "${W_BYTES[1]}"
	report "$p.bshare.a" "$ba"
	report "$p.bshare.b" "$bb"
	report "$p.ios.a" "${W_IOS[0]}"
	report "$p.ios.b" "${W_IOS[1]}"
	report "$p.secs" "$W_SECS"
	report "$p.bytes_total" "$W_TOTAL_BYTES"
	REPLY=
	if [ "$pol" != linear ]; then
		ioband_held "sz$d" "$ia" "$ib"
		report "$p.held" "${REPLY// //}"
	fi
	log "$d #$k $pol: bytes $ba / $bb %, I/Os ${W_IOS[0]} / ${W_IOS[1]} in $W_SECS s${REPLY:+, held ${REPLY// / / } %}"
}

for d in ${DEVS//,/ }; do
	case $d in
	100us) nb=$(nullb_create "sz$d" "$BENCH_SIZE_MB" 100000 4) ;;
	1ms) nb=$(nullb_create "sz$d" "$BENCH_SIZE_MB" 1000000 4) ;;
	*) fail "unknown device $d" ;;
	esac
	sz=$(blockdev --getsz "$nb")
	dev=$(dm_create "sz$d" "0 $sz linear $nb 0")
	load_start a "$dev" randread 4k 8
	load_start b "$dev" randread 64k 8
	for k in $(seq 1 "$ROUNDS"); do
		for pol in weight-iosize weight linear; do
			iosize_turn "$d" "$k" "$pol"
		done
	done
	load_stop a b
done

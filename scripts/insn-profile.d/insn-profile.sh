#!/bin/bash
# The guest half of scripts/insn-profile: one fio job of bench.prof_ios
# 4 KiB random direct reads (psync) on a null_blk without completion
# delay, through the target bench.prof_target (raw, linear, none: ioband
# of type none, cgroup: ioband of type cgroup with the job's cgroup), and
# the symbols of the modules the host half attributes addresses to.
# bench.prof_target=syms prints instead where the core functions named
# in bench.prof_core (comma-separated) begin and end (KCORE lines).
# timeout: 900
. /tests/lib.sh

T=none N=4000 C=
for a in $(</proc/cmdline); do
	case $a in
	bench.prof_target=*) T=${a#*=} ;;
	bench.prof_ios=*) N=${a#*=} ;;
	bench.prof_core=*) C=${a#*=} ;;
	esac
done
if [ "$T" = syms ]; then
	grep -E ' [tT] ' /proc/kallsyms | grep -v '\[' | sort |
		awk -v c=",$C," 'p { print "KCORE", p, a, $1; p = "" }
			index(c, "," $3 ",") { p = $3; a = $1 }'
	exit 0
fi
nb=$(nullb_create prof0 4096)
sz=$(blockdev --getsz "$nb")
cg_create a >/dev/null
ia=$(stat -c %i "$CG_ROOT/a")
case $T in
raw) dev=$nb ;;
linear) dev=$(dm_create prof "0 $sz linear $nb 0") ;;
none) dev=$(dm_create prof "0 $sz ioband $nb p 0 128 none weight 256 :100") ;;
cgroup) dev=$(dm_create prof "0 $sz ioband $nb p 0 128 cgroup weight 256 :100 $ia:100") ;;
*) fail "unknown bench.prof_target $T" ;;
esac
grep -E '\[(dm_mod|dm_ioband|dm_ioband_policy|null_blk)\]$' /proc/kallsyms |
	awk '{ print "KSYM", $1, $3, $4 }'
cg_run a fio --name=p --filename="$dev" --direct=1 --rw=randread --bs=4k \
	--ioengine=psync --number_ios="$N" --norandommap --randrepeat=0 \
	--output-format=terse --terse-version=3 >"$TESTDIR/fio.out" ||
	fail "fio failed"
# terse v3: field 6 is the read I/Os' total KiB, 7 their bandwidth
echo "PROF_IOS $(awk -F';' '{ print $6 / 4 }' "$TESTDIR/fio.out")"

# SPDX-License-Identifier: GPL-2.0
#
# Helpers for the VM tests (tests/vm/t/*.sh).  Source it first thing:
#     . /tests/lib.sh
# Works in bash and in busybox sh.  Devices made through these helpers are
# torn down when the test exits (in reverse order), pass or fail.
#
#   fail MSG                  print MSG as the failure reason, exit 1
#   skip MSG                  print MSG as the skip reason, exit 77
#   assert_eq GOT WANT [MSG]  fail unless GOT = WANT (string compare)
#   expect_fail CMD...        run CMD, fail if it succeeds
#   require CMD...            skip unless each CMD is on PATH
#   on_exit CMD               run the shell command CMD when the test exits
#   nullb_create NAME SIZE_MB [COMPLETION_NSEC] [QUEUE_DEPTH] [MEMORY_BACKED] [CACHE_MB]
#                             make a null_blk device through configfs, print
#                             its /dev path (removed at exit); CACHE_MB (with
#                             MEMORY_BACKED 1) gives it a volatile write cache
#                             of that size, which a power off drops
#   iobm_create NAME SIZE_MB PROFILE [ATTR=VALUE...]
#                             make a model device (tests/modeldev) with that
#                             profile, then each ATTR set; print its /dev
#                             path (removed at exit)
#   iobm_busy NAME            the model device's busy time (ns) by cgroup id
#                             in IOBM_BUSY[id], and in all in IOBM_TOTAL,
#                             since its stats were last reset
#   nullb_power NAME 0|1      power a null_blk device off (dropping its write
#                             cache) or on; on, print its /dev path (the
#                             name may change on power on)
#   trace_start EVENT...      clear the trace and record EVENTs (system/name,
#                             e.g. block/block_rq_issue); restored at exit
#   trace_stop                stop recording; the trace stays in
#                             /sys/kernel/tracing/trace
#   dev_t_of DEV              "MAJOR,MINOR" of block device DEV, as trace
#                             lines print it
#   dm_create NAME TABLE      dmsetup create NAME from TABLE, print /dev/dm-N
#                             (removed at exit)
#   dm_node NAME              print /dev/dm-N of device-mapper device NAME and
#                             create /dev/mapper/NAME with dmsetup mknodes
#   cg_create PATH            make /sys/fs/cgroup/PATH with +io +memory
#                             enabled along the way; print its directory
#   cg_run PATH CMD...        run CMD inside cgroup PATH
#   report KEY VALUE          record a measurement (@@DATA KEY VALUE)
#   stall_start, stall_stop   how long the guest stood still in between:
#                             STALL_MS (see below)
#   fio_verify_args           fio options verifying with a pattern of this
#                             run's own (see below)
#   log MSG                   print MSG with the test's elapsed seconds
#   alive PID                 PID runs: not gone, and not a zombie, which
#                             kill -0 takes for alive (a background job
#                             that ended and was not reaped yet)

CG_ROOT=/sys/fs/cgroup
NULLB_CFS=/sys/kernel/config/nullb
IOBM_CFS=/sys/kernel/config/iobmodel
_LIB_T0=$(date +%s)
# State lives in files, not variables, because helpers that print a path run
# in command substitutions ($(nullb_create ...)), i.e. in subshells.
_LIB_STATE=${TESTDIR:-/tmp}/.lib.$$
mkdir -p "$_LIB_STATE"
: >"$_LIB_STATE/cleanup"

# fail works from a subshell too: it marks the test failed and signals the
# test's main shell ($$ is the same in every subshell).
fail() {
	echo "@@FAIL $*" >&2
	: >"$_LIB_STATE/failed"
	kill -TERM $$ 2>/dev/null
	exit 1
}

skip() {
	echo "@@SKIP $*" >&2
	: >"$_LIB_STATE/skipped"
	kill -TERM $$ 2>/dev/null
	exit 77
}

log() {
	echo "[+$(($(date +%s) - _LIB_T0))s] $*"
}

assert_eq() {
	[ "$1" = "$2" ] || fail "${3:-assert_eq}: got '$1', want '$2'"
}

# A zombie passes kill -0: bash does not always reap a background job
# at once (one ended while its shell waited in read -t, and a loop on
# kill -0 ran until the test's timeout).
alive() {
	local s
	read -r s 2>/dev/null <"/proc/$1/stat" || return 1
	s=${s##*) }
	[ "${s%% *}" != Z ]
}

expect_fail() {
	if "$@"; then
		fail "expected to fail: $*"
	fi
	return 0
}

require() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || skip "$c not available"
	done
}

# Cleanups run last-registered first, in the test's main shell at exit.
on_exit() {
	echo "$1" >>"$_LIB_STATE/cleanup"
}
_lib_cleanup() {
	local rc=$? cmd
	set +e
	trap - EXIT TERM INT
	[ -f "$_LIB_STATE/failed" ] && rc=1
	[ -f "$_LIB_STATE/skipped" ] && [ $rc = 0 -o $rc = 143 ] && rc=77
	_lib_cg_kill
	# in this shell, not a pipeline's subshell: a "wait" among them must
	# wait for the test's own children
	sed -n '1!G;h;$p' "$_LIB_STATE/cleanup" >"$_LIB_STATE/cleanup.last-first"
	while IFS= read -r cmd; do
		eval "$cmd" </dev/null >/dev/null 2>&1
	done <"$_LIB_STATE/cleanup.last-first"
	rm -rf "$_LIB_STATE"
	exit $rc
}
# Before the clean-up: the processes of the cgroups the test made (a
# workload it started there, fio's job processes, may still hold the
# devices the clean-up removes) killed and waited for, 5 s at most.
_lib_cg_kill() {
	local cg i=0
	[ -f "$_LIB_STATE/cgroups" ] || return 0
	for cg in $(cat "$_LIB_STATE/cgroups"); do echo 1 >"$cg/cgroup.kill"; done 2>/dev/null
	while [ $i -lt 50 ] && [ -n "$(for cg in $(cat "$_LIB_STATE/cgroups"); do cat "$cg/cgroup.procs"; done 2>/dev/null)" ]; do
		sleep 0.1
		i=$((i + 1))
	done
}
trap _lib_cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

# Wait until a path exists (devtmpfs creates nodes asynchronously).
_lib_wait_path() {
	local i=0
	while [ ! -e "$1" ] && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	[ -e "$1" ]
}

# _lib_wait_blk DEV: wait (5 s at most) until DEV is the block device
# named as its last component in /sys/class/block (its major:minor), not
# only a path that exists.  A regular file there was made by a write (fio, dd, a shell
# redirection) to the path while no device had that name: every later
# user of the name would write to that file instead, so fail at once.
_lib_wait_blk() {
	local dev=$1 want got i=0
	while :; do
		want=
		read -r want 2>/dev/null <"/sys/class/block/${dev##*/}/dev"
		if [ -n "$want" ] && [ -b "$dev" ]; then
			got=$(stat -L -c '%t %T' "$dev")
			[ "$((0x${got% *})):$((0x${got#* }))" = "$want" ] && return 0
		fi
		[ ! -e "$dev" ] || [ -b "$dev" ] ||
			fail "$dev is a $(stat -c %F "$dev"), not a block device: something wrote to that path while no device had it"
		[ $i -lt 100 ] || fail "$dev did not appear as block device ${want:-(none in /sys/class/block)}"
		sleep 0.05
		i=$((i + 1))
	done
}

nullb_create() {
	local name=$1 size=$2 nsec=${3:-} qd=${4:-} mem=${5:-0} cache=${6:-} d
	[ -n "$name" ] && [ -n "$size" ] || fail "usage: nullb_create NAME SIZE_MB [NSEC] [QD] [MEM] [CACHE_MB]"
	if [ ! -d $NULLB_CFS ]; then
		modprobe -q null_blk nr_devices=0 2>/dev/null
		[ -d $NULLB_CFS ] || fail "null_blk configfs not available"
	fi
	d=$NULLB_CFS/$name
	mkdir "$d" || fail "nullb_create: mkdir $d"
	on_exit "rmdir $d"
	on_exit "echo 0 > $d/power"
	echo "$size" >"$d/size" || fail "nullb_create: size"
	echo 2 >"$d/queue_mode"
	if [ -n "$nsec" ]; then
		echo 2 >"$d/irqmode" || fail "nullb_create: irqmode"
		echo "$nsec" >"$d/completion_nsec" || fail "nullb_create: completion_nsec"
	fi
	[ -n "$qd" ] && { echo "$qd" >"$d/hw_queue_depth" || fail "nullb_create: hw_queue_depth"; }
	echo "$mem" >"$d/memory_backed" || fail "nullb_create: memory_backed"
	# NULLB_ATTRS="attr=value ...": more configfs attributes (poll_queues=1)
	local kv
	for kv in ${NULLB_ATTRS:-}; do
		echo "${kv#*=}" >"$d/${kv%%=*}" || fail "nullb_create: $kv"
	done
	[ -n "$cache" ] && { echo "$cache" >"$d/cache_size" || fail "nullb_create: cache_size"; }
	nullb_power "$name" 1
}

nullb_power() {
	local name=$1 d=$NULLB_CFS/$1 dev
	echo "$2" >"$d/power" || fail "nullb_power: power $2"
	[ "$2" = 1 ] || return 0
	# Newer kernels name the disk after the configfs directory, older ones
	# nullb<index>; the index is given anew at each power on.
	if [ -e "/sys/block/$name" ]; then
		dev=/dev/$name
	else
		dev=/dev/nullb$(cat "$d/index")
	fi
	_lib_wait_blk "$dev"
	echo "$dev"
}

iobm_create() {
	local name=$1 size=$2 profile=$3 d a
	[ -n "$name" ] && [ -n "$size" ] && [ -n "$profile" ] ||
		fail "usage: iobm_create NAME SIZE_MB PROFILE [ATTR=VALUE...]"
	shift 3
	if [ ! -d $IOBM_CFS ]; then
		case $(cat /run/iobmodel-module 2>/dev/null) in
		failed*) fail "iobmodel: $(cat /run/iobmodel-module)" ;;
		esac
		skip "the model device is not built (iobmodel.ko)"
	fi
	d=$IOBM_CFS/$name
	mkdir "$d" || fail "iobm_create: mkdir $d"
	on_exit "rmdir $d"
	on_exit "echo 0 > $d/power"
	# the profile first: it sets every field of the model
	echo "$profile" >"$d/profile" || fail "iobm_create: profile $profile"
	echo "$size" >"$d/size" || fail "iobm_create: size $size"
	for a in "$@"; do
		echo "${a#*=}" >"$d/${a%%=*}" || fail "iobm_create: $a"
	done
	echo 1 >"$d/power" || fail "iobm_create: power on"
	_lib_wait_blk "/dev/$name"
	echo "/dev/$name"
}

iobm_busy() {
	local -a f
	unset IOBM_BUSY
	declare -gA IOBM_BUSY
	IOBM_TOTAL=0
	while read -r -a f; do
		case ${f[0]} in
		cgroup) IOBM_BUSY[${f[1]}]=$((${IOBM_BUSY[${f[1]}]:-0} + f[8])) ;;
		total) IOBM_TOTAL=${f[4]} ;;
		esac
	done <"$IOBM_CFS/$1/stats"
}

dm_node() {
	local name=$1 f n
	for f in /sys/block/dm-*/dm/name; do
		[ -f "$f" ] || continue
		if [ "$(cat "$f")" = "$name" ]; then
			n=${f#/sys/block/}
			n=${n%%/*}
			dmsetup mknodes "$name" >/dev/null 2>&1
			_lib_wait_blk "/dev/$n"
			echo "/dev/$n"
			return 0
		fi
	done
	fail "dm_node: no dm device named $name"
}

dm_create() {
	local name=$1 table=$2
	echo "$table" | dmsetup create "$name" || fail "dmsetup create $name '$table'"
	on_exit "dmsetup remove --retry $name"
	dm_node "$name"
}

# The reads ioband counted for group ID $2 (-1: the default group) of dm
# device $1, from the 7 columns a group has in its status.
dm_group_reads() {
	dmsetup status "$1" | awk -v id="$2" '{
		for (i = 5; i + 6 <= NF; i += 7)
			if ($i == id) { print $(i+1); exit } }'
}

cg_create() {
	local path=${1#/} cur=$CG_ROOT part c
	# Each ancestor (the root included) hands io and memory down.
	for part in $(echo "$path" | tr '/' ' '); do
		for c in io memory; do
			grep -qw "$c" "$cur/cgroup.subtree_control" ||
				echo "+$c" >"$cur/cgroup.subtree_control" 2>/dev/null ||
				{ [ $c = io ] && fail "cg_create: cannot enable +io in $cur"; }
		done
		cur=$cur/$part
		if [ ! -d "$cur" ]; then
			mkdir "$cur" || fail "cg_create: mkdir $cur"
			echo "$cur" >>"$_LIB_STATE/cgroups"
			on_exit "rmdir $cur"
		fi
	done
	echo "$cur"
}

cg_run() {
	local path=${1#/}
	shift
	[ -d "$CG_ROOT/$path" ] || fail "cg_run: no cgroup $path"
	sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$CG_ROOT/$path" "$@"
}

# microseconds since the epoch, in REPLY (no fork)
usecs() {
	local t=$EPOCHREALTIME
	REPLY=$(( ${t%.*} * 1000000 + 10#${t#*.} ))
}

# A rate a test measures on real (TCG) time is lost while the host does not
# run the guest: a bound on it holds only for the time the guest ran.
# stall_start starts a loop that waits 10 ms at a time without forking and
# counts each wake-up more than 50 ms late as that much time stood still;
# stall_stop sets STALL_MS to the total since stall_start.  The loop runs
# at a real-time priority: the guest's own busy tasks do not delay it (at
# normal priority, beside a test's readers on a loaded host, it counted
# 6.6 s of a 6 s window in which a capped reader lost nothing).  With
# several vCPUs it sees its own vCPU's stalls: a skip may come where only
# one vCPU stood still, never a verdict where the guest did.
stall_start() {
	_STALL_FILE=$_LIB_STATE/stall
	echo 0 >"$_STALL_FILE"
	(
		fifo=$_LIB_STATE/stall.$BASHPID late=0
		chrt -f -p 50 $BASHPID >/dev/null || log "stall_start: no real-time priority"
		# a FIFO nobody writes: read -t waits on it without a fork;
		# its name goes once it is open, so the next call makes its own
		mkfifo "$fifo" && exec 9<>"$fifo" && rm -f "$fifo" ||
			{ echo 999999 >"$_STALL_FILE"; exit 1; }
		usecs
		prev=$REPLY
		while :; do
			read -r -t 0.01 -u 9
			usecs
			now=$REPLY
			if [ $((now - prev)) -gt 60000 ]; then
				late=$((late + now - prev - 10000))
				echo "$((late / 1000))" >"$_STALL_FILE"
			fi
			prev=$now
		done
	) &
	_STALL_PID=$!
	on_exit "kill $_STALL_PID"
}
stall_stop() {
	kill "$_STALL_PID" 2>/dev/null
	wait "$_STALL_PID" 2>/dev/null
	STALL_MS=$(cat "$_STALL_FILE")
}

TRACEFS=/sys/kernel/tracing
# trace_start EVENT...: enable EVENTs (until the test ends) on an empty
# buffer.  Enabling or disabling an event patches its sites' code: do it
# while no I/O runs through them, since a vCPU of QEMU's multi-threaded
# TCG may execute a patch site's stale int3 forever (see tests/vm/init).
# A test that traces part of a load enables its events before the load
# and moves a filter (rng_cap_start in t/range.inc).
trace_start() {
	local e
	[ -e $TRACEFS/trace ] || mount -t tracefs nodev $TRACEFS 2>/dev/null
	[ -e $TRACEFS/trace ] || fail "no tracefs"
	on_exit "echo $(cat $TRACEFS/tracing_on) > $TRACEFS/tracing_on; echo > $TRACEFS/trace"
	echo 0 >$TRACEFS/tracing_on
	echo >$TRACEFS/trace
	for e in "$@"; do
		[ -e "$TRACEFS/events/$e/enable" ] || fail "no trace event $e"
		echo 1 >"$TRACEFS/events/$e/enable"
		on_exit "echo 0 > $TRACEFS/events/$e/enable"
	done
	echo 1 >$TRACEFS/tracing_on
}

trace_stop() {
	echo 0 >$TRACEFS/tracing_on
}

dev_t_of() {
	local n
	n=$(stat -L -c '%t %T' "$1") || fail "dev_t_of: no device $1"
	set -- $n
	echo "$((16#$1)),$((16#$2))"
}

report() {
	echo "@@DATA $1 $2"
}

# fio's verify options for one run: every block holds a pattern made of a
# number new to this run and the block's offset.  fio 3.33's crc32c verify
# passes a block that still holds an earlier run's data for the same offset
# (its header is self-consistent, and the seed is not checked), so a write
# lost on a re-run over the same region went unseen; with a pattern of its
# own, the old data fails ("bad pattern block offset").  Use it unquoted:
#     fio ... $(fio_verify_args) --verify_fatal=1
fio_verify_args() {
	local n
	n=$(( $(cat "$_LIB_STATE/fio-runs" 2>/dev/null || echo 0) + 1 ))
	echo "$n" >"$_LIB_STATE/fio-runs"
	# the clock's nanoseconds keep concurrent callers apart
	printf -- '--verify=pattern --verify_pattern=0x%08x%04x%%o\n' \
		$(( $(date +%s%N) & 0xffffffff )) $((n & 0xffff))
}

# fio_pinned_readers N PER DEV [CG]: one fio reader pinned to each of
# vCPUs 0..N-1, reader i reading PER random 4 KiB blocks of DEV's i-th
# 64 MiB with libaio at depth 16 (its output in $TESTDIR/fio-i.out), in
# cgroup CG-i if CG is given.  Returns when all have ended; fails if one
# did not end well.
fio_pinned_readers() {
	local n=$1 per=$2 dev=$3 cg=${4:-} i pre pids=()
	for ((i = 0; i < n; i++)); do
		pre=()
		[ -z "$cg" ] || pre=(cg_run "$cg-$i")
		"${pre[@]}" fio --name="r$i" --filename="$dev" --direct=1 \
			--rw=randread --bs=4k --ioengine=libaio --iodepth=16 \
			--cpus_allowed="$i" --offset=$((i * 64))m --size=64m \
			--number_ios="$per" --output="$TESTDIR/fio-$i.out" &
		pids+=($!)
	done
	for ((i = 0; i < n; i++)); do
		wait "${pids[$i]}" || fail "reader $i: $(tail -n 3 "$TESTDIR/fio-$i.out")"
	done
}

#!/bin/bash
# The task-based group types are cooperative, as ioband.rst says: each
# follows an identity the process may change.  setsid leaves a pgrp group;
# a forked child is not its parent's pid group (an exec'd one is); a new
# real gid (what newgrp does) leaves a gid group; a process in a user
# namespace of its own writes as its subordinate uid, not as its user.
# timeout: 120
# long: debug
. /tests/lib.sh

nb=$(nullb_create coop0 64)
sz=$(blockdev --getsz "$nb")
# writes of group ID on device NAME (0 if absent)
writes() {
	dmsetup status "$1" | awk -v id="$2" '
		{ for (i = 5; i + 6 <= NF; i += 7) if ($i == id) v = $(i + 4) }
		END { print v + 0 }'
}
# wr DEV: 8 direct 4 KiB writes to DEV from the calling process's children
wr() { dd if=/dev/zero of="$1" bs=4k count=8 oflag=direct status=none || fail "dd to $1"; }
# lands NAME ID WANT-ID: after the writes, WANT-ID got 8 more and ID none
lands() {
	local name=$1 id=$2 want=$3 before_id before_want
	before_id=$(writes "$name" "$id")
	before_want=$(writes "$name" "$want")
	shift 3
	"$@"
	assert_eq "$(($(writes "$name" "$want") - before_want))" 8 "$name: writes to group $want"
	[ "$id" = "$want" ] ||
		assert_eq "$(($(writes "$name" "$id") - before_id))" 0 "$name: writes to group $id"
}

# --- pgrp: setsid makes a new process group --------------------------------------
pg=$(cut -d' ' -f5 /proc/$$/stat)
d=$(dm_create cpg "0 $sz ioband $nb coopdg 0 0 pgrp weight 0 :100 $pg:200")
lands cpg "$pg" "$pg" wr "$d"
lands cpg "$pg" -1 setsid -w dd if=/dev/zero of="$d" bs=4k count=8 oflag=direct status=none
log "pgrp: the test's own process group's writes counted in it; setsid's in the default group"

# --- pid: a fork is a new pid, an exec is not ---------------------------------------
d=$(dm_create cpid "0 $sz ioband $nb coopdg 0 0 pid weight 0 :100")
mkfifo "$TESTDIR/go" "$TESTDIR/pid"
# A subshell names its pid, waits for its group to be attached, then writes
# by exec (its own pid) or by a forked dd.
run_as_pid() { # exec|fork
	(
		echo "$BASHPID" >"$TESTDIR/pid"
		read -r _ <"$TESTDIR/go"
		if [ "$1" = exec ]; then
			exec dd if=/dev/zero of="$d" bs=4k count=8 oflag=direct status=none
		fi
		# not the subshell's last command: bash would exec it, not fork
		dd if=/dev/zero of="$d" bs=4k count=8 oflag=direct status=none
		exit $?
	) &
	read -r p <"$TESTDIR/pid"
	dmsetup message cpid 0 attach "$p" || fail "attach pid $p"
	echo go >"$TESTDIR/go"
	wait $! || fail "the writer of pid $p"
	echo "$p"
}
p=$(run_as_pid exec)
assert_eq "$(writes cpid "$p")" 8 "pid: writes of an exec'd dd to its own pid's group"
p=$(run_as_pid fork)
assert_eq "$(writes cpid "$p")" 0 "pid: writes of a forked dd to its parent's group"
assert_eq "$(writes cpid -1)" 8 "pid: writes of a forked dd to the default group"
log "pid: an exec'd writer counted in its pid's group, a forked one in the default group"

# --- gid: a new real gid, as newgrp makes ----------------------------------------
d=$(dm_create cgid "0 $sz ioband $nb coopdg 0 0 gid weight 0 :100 2000:200")
chmod 666 "$d"
lands cgid 2000 2000 setpriv --regid=2000 --clear-groups dd if=/dev/zero of="$d" bs=4k count=8 oflag=direct status=none
lands cgid 2000 -1 setpriv --regid=2001 --clear-groups dd if=/dev/zero of="$d" bs=4k count=8 oflag=direct status=none
log "gid: real gid 2000's writes in its group, the same process's after a switch to 2001 in the default group"

# --- user: a user namespace writes as its subordinate uid -------------------------
d=$(dm_create cusr "0 $sz ioband $nb coopdg 0 0 user weight 0 :100 0:200")
chmod 666 "$d"
lands cusr 0 0 wr "$d"
mkfifo "$TESTDIR/upid" "$TESTDIR/ugo"
# A process in a user namespace of its own writes as uid 1 there, which
# is subordinate uid 100000 outside: the map (its own uid as the
# namespace's root, and one subordinate id) is written from here, as
# newuidmap would for a user, and the process then takes uid 1, as a
# container runtime does (entering the namespace leaves its uid as it was).
userns_writer() {
	unshare --user bash -c 'echo $$ >"$0/upid" && read -r _ <"$0/ugo" &&
		exec setpriv --reuid=1 --regid=1 --keep-groups \
			dd if=/dev/zero of="$1" bs=4k count=8 oflag=direct status=none' \
		"$TESTDIR" "$d" &
	local w=$! up
	read -r up <"$TESTDIR/upid"
	# one write each: a map takes exactly one, and bash's printf writes by line
	printf '0 0 1\n1 100000 1\n' | dd of=/proc/$up/uid_map bs=64 status=none &&
		echo deny >/proc/$up/setgroups &&
		printf '0 0 1\n1 100000 1\n' | dd of=/proc/$up/gid_map bs=64 status=none ||
		fail "mapping the user namespace of $up"
	echo go >"$TESTDIR/ugo"
	wait $w || fail "the writer in the user namespace"
}
lands cusr 0 -1 userns_writer
log "user: root's writes in its group; uid 1 of a user namespace (100000 outside) in the default group"

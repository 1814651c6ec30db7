#!/bin/bash
# ioband-setup set, attach and detach on devices of every group type: GROUP
# named by user or group name, id, pid, cgroup path in each form, or
# default; the messages that reach the kernel (read back with dmsetup
# table), ranges, limits, names in show, I/O landing in the groups set up, and
# refused commands that change nothing.
# timeout: 240
# long: debug
. /tests/lib.sh
. /tests/t/setup.inc

nb=$(nullb_create sg0 32)
sz=$(blockdev --getsz "$nb")
half=$((sz / 2))
quarter=$((sz / 4))
p1=$(dm_create sg-p1 "0 $quarter linear $nb 0")
p2=$(dm_create sg-p2 "0 $quarter linear $nb $quarter")
p3=$(dm_create sg-p3 "0 $quarter linear $nb $half")
p4=$(dm_create sg-p4 "0 $quarter linear $nb $((half + quarter))")
groups_of() { dmsetup table "$1" | cut -d' ' -f11-; }

# ---- user ----------------------------------------------------------------------------
add_user alice 1000 2000
expect 0 ioband-setup create u "$p1" -t user
on_exit "dmsetup remove u"
expect 0 ioband-setup set u alice weight=300
assert_eq "$out" "u: alice (id 1000) attached, weight 300"
assert_eq "$(groups_of u)" ":100 1000:300"
expect 0 ioband-setup set u 1000 weight=50
assert_eq "$out" "u: 1000, weight 50"
expect 0 ioband-setup set u default weight=60
assert_eq "$out" "u: default group, weight 60"
expect 0 ioband-setup set u -1 weight=70
assert_eq "$(groups_of u)" ":70 1000:50"
expect 0 ioband-setup attach u root
assert_eq "$out" "u: root (id 0) attached, weight 100"
expect 0 ioband-setup attach u 4242 weight=9
assert_eq "$(groups_of u)" ":70 0:100 1000:50 4242:9"
before=$(dmsetup table u)
expect 4 ioband-setup attach u root
contains "root (id 0) is already attached to u"
expect 2 ioband-setup attach u default
contains "the default group is always there"
expect 2 ioband-setup set u alice weight=0
contains "weight must be a number from 1 to 10000, not '0'"
expect 2 ioband-setup set u alice 300
contains "expected weight=W, min=MIN,max=MAX or limits (KEY=VALUE, KEY one of bps rbps wbps iops riops wiops burst), not '300'"
expect 2 ioband-setup set u alice min=300,max=200
contains "min 300 KB/s is above max 200 KB/s"
expect 2 ioband-setup set u alice min=5x
contains "min must be a bandwidth in KB/s"
expect 2 ioband-setup set u alice
contains "expected NAME GROUP and weight=W, min=MIN,max=MAX or limits (riops=500,wbps=20M)"
expect 3 ioband-setup set u bob weight=5
contains "no user named 'bob'"
expect 2 ioband-setup set u 4294967295 weight=5
contains "user id '4294967295' out of range (0 to 4294967294)"
expect 3 ioband-setup set nosuch alice weight=5
contains "no device-mapper device named 'nosuch'"
expect 4 ioband-setup set sg-p4 alice weight=5
contains "'sg-p4' is not an ioband device (its table is linear)"
expect 2 ioband-setup detach u default
contains "the default group cannot be detached"
expect 4 ioband-setup detach u 77
contains "77 is not attached to u"
expect 2 ioband-setup detach u
contains "expected NAME GROUP"
expect 2 ioband-setup attach u alice weight=1 extra
assert_eq "$(dmsetup table u)" "$before" "table after refused commands"
expect 0 ioband-setup detach u root
assert_eq "$out" "u: root (id 0) detached"
expect 0 ioband-setup detach /dev/mapper/u 4242
assert_eq "$(groups_of u)" ":70 1000:50"
# the I/O of uid 1000 lands in the group set up by name
chmod 666 /dev/mapper/u
fio --name=a --filename=/dev/mapper/u --rw=read --bs=4k --size=20k --direct=1 \
	--uid=1000 --gid=2000 >"$TESTDIR/fio.out" 2>&1 || fail "fio as alice: $(tail -n 3 "$TESTDIR/fio.out")"
expect 0 ioband-setup show u
set -- $(echo "$out" | awk '$1 == 1000')
assert_eq "$2 $3 $5" "alice 50 5" "alice's reads in show"

# ranges: set under the weight policy (they act under range-bw); a range
# on a group not attached attaches it
expect 0 ioband-setup set u alice min=100,max=2m
assert_eq "$out" "u: alice (id 1000), min 100 KB/s, max 2048 KB/s (ranges act while the policy is range-bw)"
expect 0 ioband-setup set u 5 max=300
assert_eq "$out" "u: 5 attached, min 0 KB/s, max 300 KB/s (ranges act while the policy is range-bw)"
assert_eq "$(groups_of u)" ":70 5:100 1000:50" "a range attaches, and keeps the weights"
dmsetup message u 0 policy range-bw || fail "policy range-bw"
assert_eq "$(groups_of u)" ":0:0 5:0:300 1000:100:2048" "ranges in the table under range-bw"
expect 0 ioband-setup set u default min=1,max=9
assert_eq "$out" "u: default group, min 1 KB/s, max 9 KB/s"
assert_eq "$(groups_of u)" ":1:9 5:0:300 1000:100:2048"
expect 0 ioband-setup show u
contains "settings:      policy range-bw"
set -- $(echo "$out" | awk '$1 == 1000')
assert_eq "$2 $3 $4" "alice 100:2048 -" "range in show"
dmsetup message u 0 policy weight || fail "policy weight"

# a value the kernel refuses after the group was attached for it: the
# group is detached again (the kernel refusal is injected)
before=$(dmsetup table u)
IOBAND_SETUP_FAULT=set expect 1 ioband-setup set u 6 weight=5
contains "u: the kernel refused 'weight 6:5': injected fault at set (6, attached for it, was detached again)"
assert_eq "$(dmsetup table u)" "$before" "table after a refused set"
IOBAND_SETUP_FAULT=attach expect 1 ioband-setup attach u 6
contains "attaching 6 to u: the kernel refused 'attach 6': injected fault at attach"
IOBAND_SETUP_FAULT=detach expect 1 ioband-setup detach u 5
contains "u: the kernel refused 'detach 5': injected fault at detach"
assert_eq "$(dmsetup table u)" "$before" "table after refused attach and detach"

# ---- gid ------------------------------------------------------------------------------
expect 0 ioband-setup create g "$p2" -t gid -g alice=20
on_exit "dmsetup remove g"
assert_eq "$(groups_of g)" ":100 2000:20" "group alice by name"
expect 0 ioband-setup set g 0 weight=3
expect 3 ioband-setup set g nosuchgroup weight=3
contains "no group named 'nosuchgroup'"
expect 0 ioband-setup show g
set -- $(echo "$out" | awk '$1 == 2000')
assert_eq "$2 $3" "alice 20" "group 2000 named"
set -- $(echo "$out" | awk '$1 == 0')
assert_eq "$2 $3" "root 3" "group 0 named"

# ---- pid and pgrp ---------------------------------------------------------------------
expect 0 ioband-setup create p "$p3" -t pid
on_exit "dmsetup remove p"
sleep 300 &
sl=$!
on_exit "kill $sl"
expect 0 ioband-setup set p "$sl" weight=40
assert_eq "$(groups_of p)" ":100 $sl:40"
expect 0 ioband-setup show p --json
contains "{\"id\":$sl,\"name\":\"sleep\",\"weight\":40,"
expect 2 ioband-setup set p sleep weight=4
contains "'sleep' is not a process id"
expect 2 ioband-setup attach p 0
contains "process id '0' out of range (1 to 4194304)"
expect 0 ioband-setup detach p "$sl"
dmsetup message p 0 type pgrp || fail "type pgrp"
expect 0 ioband-setup attach p "$$"
assert_eq "$(groups_of p)" ":100 $$:100"
expect 2 ioband-setup attach p x1
contains "'x1' is not a process group id"

# ---- cgroup ---------------------------------------------------------------------------
a=$(cg_create sg-a)
ab=$(cg_create sg-a/b)
ida=$(stat -c %i "$a")
idab=$(stat -c %i "$ab")
expect 0 ioband-setup create c "$p4" -t cgroup
on_exit "dmsetup remove c"
expect 0 ioband-setup set c sg-a weight=200
assert_eq "$out" "c: sg-a (id $ida) attached, weight 200"
expect 0 ioband-setup set c /sg-a/b weight=10
expect 0 ioband-setup set c /sys/fs/cgroup/sg-a weight=210
expect 0 ioband-setup set c "$idab" weight=11
assert_eq "$(groups_of c)" ":100 $ida:210 $idab:11"
# a path no cgroup has yet: recorded for ioband-setup watch, not attached
expect 0 ioband-setup set c sg-nosuch weight=1
contains "c: no cgroup /sg-nosuch yet: its group is attached when it appears"
assert_eq "$(groups_of c)" ":100 $ida:210 $idab:11" "a path no cgroup has is not attached"
expect 0 ioband-setup detach c sg-nosuch
assert_eq "$out" "c: /sg-nosuch detached"
expect 4 ioband-setup detach c sg-nosuch
contains "/sg-nosuch is not attached to c"
expect 2 ioband-setup set c 0 weight=1
contains "cgroup id '0' out of range"
cg_run sg-a/b dd if=/dev/mapper/c of=/dev/null bs=4k count=7 iflag=direct status=none ||
	fail "dd in sg-a/b"
expect 0 ioband-setup show c
set -- $(echo "$out" | awk '$1 == '"$idab")
assert_eq "$2 $3 $5" "/sg-a/b 11 7" "nested cgroup by path, with its reads"
# a cgroup that is gone: shown without a name, detached by id
expect 0 ioband-setup detach c sg-a/b
expect 0 ioband-setup attach c "$idab"
rmdir "$ab"
expect 0 ioband-setup show c
set -- $(echo "$out" | awk '$1 == '"$idab")
assert_eq "$2" "-" "a removed cgroup has no name"
expect 0 ioband-setup detach c "$idab"
assert_eq "$(groups_of c)" ":100 $ida:210"

# ---- limits: io.max's kinds, systemd's suffixes, only the keys given change -------------
expect 0 ioband-setup set c sg-a riops=500,wbps=20M
assert_eq "$out" "c: sg-a (id $ida), limits wbps=20000000,riops=500"
assert_eq "$(groups_of c)" ":100 $ida:210/wbps=20000000,riops=500"
expect 0 ioband-setup set c sg-a weight=300,wbps=max,burst=1000
assert_eq "$(groups_of c)" ":100 $ida:300/riops=500,burst=1000"
expect 0 ioband-setup set c default wiops=7K
assert_eq "$(groups_of c)" ":100/wiops=7000 $ida:300/riops=500,burst=1000"
expect 0 ioband-setup show c
assert_eq "$(echo "$out" | awk '$1 == '"$ida"' { print $NF }')" "riops=500,burst=1000" \
	"show's limits column"
before=$(dmsetup table c)
expect 2 ioband-setup set c sg-a riops=0
contains "riops must be 1 to 2^50 a second (suffix K, M, G or T: powers of 1000) or max, not '0'"
expect 2 ioband-setup set c sg-a riops=5,riops=6
contains "limit riops given twice"
expect 2 ioband-setup set c sg-a burst=70000
contains "burst must be 0 to 60000 ms, not '70000'"
expect 2 ioband-setup set c sg-a weight=5,min=1
contains "a weight and a range at once"
expect 2 ioband-setup attach c sg-a/b riops=5
contains "attach takes weight=W; set a range or limits with 'set'"
assert_eq "$(dmsetup table c)" "$before" "refused limits changed nothing"
expect 0 ioband-setup set c sg-a riops=max,burst=0
expect 0 ioband-setup set c default wiops=max
assert_eq "$(groups_of c)" ":100 $ida:300" "every limit removed"

# ---- none -----------------------------------------------------------------------------
dmsetup message c 0 detach "$ida" && dmsetup message c 0 type none || fail "type none"
expect 2 ioband-setup set c sg-a weight=5
contains "'sg-a': group type none has only the default group"
expect 0 ioband-setup set c default weight=5
assert_eq "$(groups_of c)" ":5"
log "set, attach and detach as documented"

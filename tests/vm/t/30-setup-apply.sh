#!/bin/bash
# ioband-setup apply: an iobandtab creates its devices, a second apply
# changes nothing, an edited file reloads exactly the devices that differ
# (atomically: a failed swap keeps the old table), --dry-run changes
# nothing, a syntax error anywhere applies nothing, a failing line does not
# stop the others; the same file from standard input.
# timeout: 240
# long: debug
. /tests/lib.sh
. /tests/t/setup.inc

nb=$(nullb_create sa0 32)
nb2=$(nullb_create sa1 16)
sz=$(blockdev --getsz "$nb")
sz2=$(blockdev --getsz "$nb2")
half=$((sz / 2))
p1=$(dm_create sa-p1 "0 $half linear $nb 0")
p2=$(dm_create sa-p2 "0 $half linear $nb $half")
m1=$(cat /sys/block/${p1#/dev/}/dev)
m2=$(cat /sys/block/${p2#/dev/}/dev)
mm2=$(cat /sys/block/${nb2#/dev/}/dev)
web=$(cg_create sa-web)
idw=$(stat -c %i "$web")
add_user alice 1000 2000
for n in sa-a sa-b sa-c; do on_exit "dmsetup remove $n"; done
tab=$TESTDIR/iobandtab
tables() { for n in sa-a sa-b sa-c; do echo "$n: $(dmsetup table $n 2>/dev/null | cut -d' ' -f4-)"; done; }

# ---- syntax errors: reported by line, nothing applied -----------------------------------------
cat >"$tab" <<EOF
# two halves of one disk, 3:1
sa-a   $p1   weight=300,device-group=sa-half
sa-b   $p2   weight=100,device-group=sa-half,type=bogus
sa-c   sa-x
EOF
expect 2 ioband-setup apply "$tab"
contains "apply: $tab: line 3: unknown group type 'bogus'"
contains "apply: $tab: line 4: device 'sa-x' must be an absolute path, UUID=, LABEL=, PARTUUID= or PARTLABEL= (or 'wrap')"
contains "apply: $tab: nothing applied"
gone sa-a
printf 'sa-a %s -\nsa-a %s -\n' "$p1" "$p2" >"$tab"
expect 2 ioband-setup apply "$tab"
contains "line 2: sa-a is named on line 1 already"
gone sa-a
expect 3 ioband-setup apply "$TESTDIR/nosuch"
contains "$TESTDIR/nosuch: No such file or directory"
expect 2 ioband-setup apply a b
contains "expected at most one FILE"
expect 2 ioband-setup apply --wait x "$tab"
contains "--wait must be 0 to 3600 seconds, not 'x'"

# ---- first apply: created ------------------------------------------------------------------
cat >"$tab" <<EOF
# two halves of one disk, 3:1
sa-a   $p1   weight=300,device-group=sa-half,io-limit=16
sa-b   $p2   weight=100,device-group=sa-half,io-limit=16
# cgroup and user groups; \040 would write a blank
sa-c   $nb2  type=cgroup,group=sa-web=400,group=default=50,token-base=128,carryover=4
EOF
expect 0 ioband-setup apply --dry-run "$tab"
assert_eq "$out" "sa-a: would create over $p1 ($m1)
sa-b: would create over $p2 ($m2)
sa-c: would create over $nb2 ($mm2)" "dry run"
gone sa-a
expect 0 ioband-setup apply "$tab"
echo "$out"
contains "sa-a: created /dev/mapper/sa-a over $p1 ($m1), device group sa-half, type none"
contains "sa-c: created /dev/mapper/sa-c over $nb2 ($mm2), device group sa-c, type cgroup, policy weight-time, 1 group attached"
# a device group's settings are its devices' alike: given on each line
# (a table naming others while one device of the group is live is refused)
assert_eq "$(tables)" "sa-a: $m1 sa-half 0 16 none weight-time 256 :300
sa-b: $m2 sa-half 0 16 none weight-time 256 :100
sa-c: $mm2 sa-c 0 128 cgroup weight-time 128 :50 $idw:400" "tables after the first apply"

# show sees the device group's other device: shares over both
expect 0 ioband-setup show sa-a
contains "device group:  sa-half (devices: sa-a, sa-b)"
set -- $(echo "$out" | awk '$1 == "default"')
assert_eq "$3 $4" "300 75.0%" "sa-a's share of the device group sa-half"

# ---- again: nothing to do --------------------------------------------------------------------
before=$(tables)
expect 0 ioband-setup apply "$tab"
assert_eq "$out" "sa-a: up to date
sa-b: up to date
sa-c: up to date" "second apply"
assert_eq "$(tables)" "$before" "tables after the second apply"
# the same from standard input
expect 0 sh -c "ioband-setup apply - <$tab"
assert_eq "$(echo "$out" | grep -c 'up to date')" 3 "apply from standard input"

# messages change a device behind the file's back; apply puts it back
dmsetup message sa-c 0 attach 12345 || fail "attach by message"
dmsetup message sa-c 0 weight $idw:1 || fail "weight by message"
expect 0 ioband-setup apply "$tab"
assert_eq "$(echo "$out" | grep sa-c)" "sa-c: reloaded (group /sa-web (id $idw) weight 1 -> 400, detach 12345)"
assert_eq "$(tables)" "$before" "tables after putting sa-c back"

# ---- an edited file: only what differs is reloaded ----------------------------------------------
cat >"$tab" <<EOF
sa-a   $p1   weight=300,device-group=sa-half,io-limit=16
sa-b   $p2   weight=200,device-group=sa-half,io-limit=16
sa-c   $nb2  type=user,group=alice=70,group=0=10,policy=weight-iosize
EOF
expect 0 ioband-setup apply -n "$tab"
assert_eq "$out" "sa-a: up to date
sa-b: would reload (default weight 100 -> 200)
sa-c: would reload (type cgroup -> user, policy weight-time -> weight-iosize, default weight 50 -> 100, attach alice (id 1000), attach root (id 0), detach /sa-web (id $idw))" "dry run of the edit"
assert_eq "$(tables)" "$before" "tables after a dry run"
IOBAND_SETUP_FAULT=apply-load expect 1 ioband-setup apply "$tab"
contains "sa-b: loading the new table of sa-b failed: injected fault at apply-load"
assert_eq "$(tables)" "$before" "tables after failed loads"
IOBAND_SETUP_FAULT=apply-suspend expect 1 ioband-setup apply "$tab"
contains "sa-c: suspending sa-c failed: injected fault at apply-suspend"
assert_eq "$(tables)" "$before" "tables after failed suspends"
expect 0 ioband-setup apply "$tab"
assert_eq "$out" "sa-a: up to date
sa-b: reloaded (default weight 100 -> 200)
sa-c: reloaded (type cgroup -> user, policy weight-time -> weight-iosize, default weight 50 -> 100, attach alice (id 1000), attach root (id 0), detach /sa-web (id $idw))" "apply of the edit"
assert_eq "$(tables)" "sa-a: $m1 sa-half 0 16 none weight-time 256 :300
sa-b: $m2 sa-half 0 16 none weight-time 256 :200
sa-c: $mm2 sa-c 0 128 user weight-iosize 128 :100 0:10 1000:70" "tables after the edit"
expect 0 ioband-setup apply "$tab"
assert_eq "$(echo "$out" | grep -c 'up to date')" 3 "the edit applied, nothing left to do"

# ---- failing lines do not stop the others --------------------------------------------------
cat >"$tab" <<EOF
sa-a   $p2   weight=300,device-group=sa-half,io-limit=16
sa-b   $p2   weight=250,device-group=sa-half,io-limit=16
sa-c   $nb2  type=user,group=nobody=5
sa-d   /dev/nosuch
EOF
expect 4 ioband-setup apply "$tab"
echo "$out"
contains "apply: $tab:1: sa-a: sa-a exists over /dev/mapper/sa-p1 ($m1), the file says $p2 ($m2): remove it first to move it"
contains "sa-b: reloaded (default weight 200 -> 250)"
contains "apply: $tab:3: no user named 'nobody'"
contains "apply: $tab:4: /dev/nosuch: No such file or directory"
gone sa-d
assert_eq "$(dmsetup table sa-b | cut -d' ' -f11)" ":250" "sa-b applied despite the other lines"
log "apply as documented"

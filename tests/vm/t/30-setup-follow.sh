#!/bin/bash
# ioband-setup watch: a cgroup group given by path follows its path.  A
# cgroup removed and made again (what systemd does on a service restart)
# keeps its weight and limits: its I/O is counted in the group of its new id, none in
# the default group, and the old id is detached; a group configured before
# its cgroup exists is attached when it appears; the watcher started after
# a re-creation (its initial scan) fixes the device; a live 'set' survives
# the next re-creation; a detached path stays detached; show names the
# path (of a removed cgroup's id too), and lists a group waiting for its
# cgroup.  Reports how long a new cgroup's I/O goes to the default group
# (mkdir to attach, attach_ms).
# timeout: 240
# long: debug
. /tests/lib.sh
. /tests/t/setup.inc

rm -f /run/ioband/groups
nb=$(nullb_create sf0 16)
web=$(cg_create sf-web)
id0=$(stat -c %i "$web")
expect 0 ioband-setup create sf "$nb" -t cgroup -g sf-web=300 -g sf-later=200/wiops=9
on_exit "dmsetup remove sf"
contains "sf: no cgroup /sf-later yet: its group is attached when it appears (while ioband-setup watch runs)"
contains "type cgroup, policy weight-time, 1 group attached"
assert_eq "$(dmsetup table sf | cut -d' ' -f11-)" ":100 $id0:300" "the table before the watcher"
expect 0 ioband-setup show sf
set -- $(echo "$out" | awk '$1 == "waiting"')
assert_eq "$2 $3 $5 $6 $7 $8" "/sf-later 200 wiops=9 (no cgroup yet)" "show's group waiting for its cgroup, its limits last"
watch_start "$TESTDIR/watch.log"
groups_of() { dmsetup table sf | cut -d' ' -f11-; }
has_groups() { [ "$(groups_of)" = "$1" ]; }
dd_in() { # CGROUP BLOCKS: direct reads of 4 KiB from inside CGROUP
	cg_run "$1" dd if=/dev/mapper/sf of=/dev/null bs=4k count="$2" iflag=direct status=none ||
		fail "dd in $1"
}

# ---- a restart: removed and made again, a new id -------------------------------------
rmdir "$web"
mkdir "$web"
id1=$(stat -c %i "$web")
[ "$id1" != "$id0" ] || fail "the cgroup made again kept its id $id0"
until_ok 10 has_groups ":100 $id1:300"
log "re-created sf-web ($id0 -> $id1): attached in ${took} ms after mkdir"
report attach_ms "$took"
dd_in sf-web 16
assert_eq "$(gstat sf "$id1")" "16 128" "sf-web's reads in the group of its new id"
assert_eq "$(gstat sf default)" "0 0" "the default group's reads"
assert_eq "$(gstat sf "$id0")" "" "the old id"
# the rmdir and the mkdir, in one reconcile or two
grep -Eq "^sf: /sf-web: detach $id0(, |$)" "$TESTDIR/watch.log" &&
	grep -Eq "^sf: /sf-web: (detach $id0, )?attach $id1, weight $id1:300$" "$TESTDIR/watch.log" ||
	fail "the watcher's log: $(cat "$TESTDIR/watch.log")"

# ---- a group configured before its cgroup exists -------------------------------------
later=$(cg_create sf-later)
idl=$(stat -c %i "$later")
until_ok 10 has_groups ":100 $id1:300 $idl:200/wiops=9"
dd_in sf-later 8
assert_eq "$(gstat sf "$idl")" "8 64" "sf-later's reads"
assert_eq "$(gstat sf default)" "0 0" "the default group's reads"
expect 0 ioband-setup show sf
set -- $(echo "$out" | awk '$1 == '"$id1")
assert_eq "$2 $3 $5" "/sf-web 300 16" "show names the path"

# ---- a live set, then a restart: the new id gets the weight set ------------------------
expect 0 ioband-setup set sf sf-web weight=50,riops=500,wbps=20M
rmdir "$web"
mkdir "$web"
id2=$(stat -c %i "$web")
until_ok 10 has_groups ":100 $idl:200/wiops=9 $id2:50/wbps=20000000,riops=500"

# ---- the watcher down while the cgroup is made again: its first scan ----------------------
watch_stop
rmdir "$web"
mkdir "$web"
id3=$(stat -c %i "$web")
assert_eq "$(groups_of)" ":100 $idl:200/wiops=9 $id2:50/wbps=20000000,riops=500" "the table while no watcher runs"
expect 0 ioband-setup show sf
set -- $(echo "$out" | awk '$1 == '"$id2")
assert_eq "$2" "/sf-web" "show names the id of a removed cgroup by its path"
watch_start "$TESTDIR/watch2.log"
has_groups ":100 $idl:200/wiops=9 $id3:50/wbps=20000000,riops=500" || fail "after the first scan: $(groups_of)"

# ---- detached by path: not attached again --------------------------------------------
expect 0 ioband-setup detach sf sf-web
assert_eq "$out" "sf: sf-web (id $id3) detached"
rmdir "$web"
mkdir "$web"
id4=$(stat -c %i "$web")
# the watcher handles events in order: once sf-later's new id is attached,
# sf-web's re-creation before it has been seen too
rmdir "$later"
mkdir "$later"
idl2=$(stat -c %i "$later")
until_ok 10 has_groups ":100 $idl2:200/wiops=9"
expect 0 ioband-setup watch --once
assert_eq "$out" "" "a reconcile with nothing to do"
log "groups followed their paths; the new id attached ${took} ms after mkdir"

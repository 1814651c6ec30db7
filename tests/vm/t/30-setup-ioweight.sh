#!/bin/bash
# ioband-setup watch follows a cgroup's io.weight (what systemd's IOWeight=
# and 'systemctl set-property ... IOWeight=' write) for a group given by
# path: the default io.weight at first sight leaves the configured weight;
# a change is followed within a second (io.weight and ioband weights map
# one to one); a restart whose new cgroup gets the same io.weight again
# keeps it; 'set' afterwards wins until io.weight changes again.  Reports
# the write-to-attach time (ioweight_ms).
# timeout: 240
# long: debug
. /tests/lib.sh
. /tests/t/setup.inc

rm -f /run/ioband/groups
nb=$(nullb_create si0 16)
web=$(cg_create si-web)
[ -f "$web/io.weight" ] || skip "no io.weight file (the kernel has no CONFIG_BLK_CGROUP_IOCOST)"
id=$(stat -c %i "$web")
expect 0 ioband-setup create si "$nb" -t cgroup -g si-web=400
on_exit "dmsetup remove si"
watch_start "$TESTDIR/watch.log"
has_groups() { [ "$(dmsetup table si | cut -d' ' -f11-)" = "$1" ]; }
assert_eq "$(cat "$web/io.weight")" "default 100" "a new cgroup's io.weight"
has_groups ":100 $id:400" || fail "the configured weight, with io.weight at its default: $(dmsetup table si)"

# systemctl set-property si-web.service IOWeight=700
echo "default 700" >"$web/io.weight" || fail "writing io.weight"
until_ok 1 has_groups ":100 $id:700"
log "io.weight 700 followed in $took ms"
report ioweight_ms "$took"
grep -q "^si: /si-web: io.weight 700 followed$" "$TESTDIR/watch.log" ||
	fail "the watcher's log: $(cat "$TESTDIR/watch.log")"

# a restart: the new cgroup gets IOWeight= again (after its mkdir, as systemd writes it)
rmdir "$web"
mkdir "$web"
echo "default 700" >"$web/io.weight" || fail "writing io.weight"
id2=$(stat -c %i "$web")
until_ok 10 has_groups ":100 $id2:700"

# set by hand: kept while io.weight stays; a new io.weight is followed again
expect 0 ioband-setup set si si-web weight=50
echo "default 700" >"$web/io.weight"
expect 0 ioband-setup watch --once
has_groups ":100 $id2:50" || fail "io.weight written again, unchanged: $(dmsetup table si)"
echo "default 20" >"$web/io.weight"
until_ok 1 has_groups ":100 $id2:20"
log "io.weight followed"

#!/bin/bash
# ioband-setup apply at boot, before the services' cgroups exist: a line
# whose groups are given by cgroup paths no cgroup has yet creates its
# device all the same (exit 0), over a device named by UUID= or LABEL=;
# lines with nofail whose devices are missing are passed over; once the
# cgroups appear, ioband-setup watch attaches their groups with the
# file's weights and their I/O is counted there, none in the default
# group; apply again finds nothing to do (the tag resolved to the device
# below, not to the ioband device that shows the same filesystem).  apply --dry-run where
# device-mapper is not available (its node directory hidden).  A unit
# named without its slice (sbu.service) is /system.slice/sbu.service.
# timeout: 240
# long: debug
. /tests/lib.sh
. /tests/t/setup.inc

rm -f /run/ioband/groups
nb=$(nullb_create sb0 16 "" "" 1)
mkfs.ext4 -q -L sb-data "$nb" || fail "mkfs.ext4"
uuid=$(blkid -o value -s UUID "$nb")
[ -n "$uuid" ] || fail "no UUID on $nb"
mm=$(cat /sys/block/${nb#/dev/}/dev)
tab=$TESTDIR/iobandtab
cat >"$tab" <<EOF
# the services' cgroups are made later, by their start
sb-a   UUID=$uuid   type=cgroup,group=sb-sys/web.service=400,group=/sb-db=200,group=default=50,group=sbu.service=300
sb-b   /dev/sb-nosuch       nofail
sb-c   LABEL=sb-nolabel     weight=5,nofail
EOF

# ---- a dry run where device-mapper is not there ----------------------------------------
expect 0 sh -c 'mount -t tmpfs -o ro tmpfs /dev/mapper || exit 99
ioband-setup apply --dry-run "$1"; rc=$?; umount /dev/mapper; exit $rc' sh "$tab"
assert_eq "$out" "sb-a: no cgroup /sb-sys/web.service yet: its group is attached when it appears (while ioband-setup watch runs)
sb-a: no cgroup /sb-db yet: its group is attached when it appears (while ioband-setup watch runs)
sb-a: no cgroup /system.slice/sbu.service yet: its group is attached when it appears (while ioband-setup watch runs)
sb-a: would create over $nb ($mm)
sb-b: /dev/sb-nosuch does not exist: passed over (nofail)
sb-c: LABEL=sb-nolabel does not exist: passed over (nofail)" "dry run without device-mapper"
gone sb-a

# ---- boot: no cgroups, no watcher yet ------------------------------------------------------
on_exit "dmsetup remove sb-a"
expect 0 ioband-setup apply "$tab"
contains "sb-a: created /dev/mapper/sb-a over $nb ($mm), device group sb-a, type cgroup, policy weight-time, 0 groups attached"
contains "sb-b: /dev/sb-nosuch does not exist: passed over (nofail)"
assert_eq "$(dmsetup table sb-a | cut -d' ' -f11-)" ":50" "the table before the cgroups exist"
gone sb-b
gone sb-c
# without nofail, a missing device fails its line (and only it)
printf 'sb-d /dev/sb-nosuch -\n' >"$TESTDIR/tab2"
expect 3 ioband-setup apply "$TESTDIR/tab2"
contains "/dev/sb-nosuch: No such file or directory"

# ---- the services start -----------------------------------------------------------------
watch_start "$TESTDIR/watch.log"
web=$(cg_create sb-sys/web.service)
db=$(cg_create sb-db)
unit=$(cg_create system.slice/sbu.service)
idw=$(stat -c %i "$web")
idd=$(stat -c %i "$db")
idu=$(stat -c %i "$unit")
has_groups() { [ "$(dmsetup table sb-a | cut -d' ' -f11-)" = "$1" ]; }
until_ok 10 has_groups ":50 $idw:400 $idd:200 $idu:300"
# (apply's blkid probes read the ioband device too, from the default group)
def0=$(gstat sb-a default)
for g in sb-sys/web.service:12 sb-db:5; do
	cg_run "${g%:*}" dd if=/dev/mapper/sb-a of=/dev/null bs=4k count="${g#*:}" iflag=direct \
		status=none || fail "dd in ${g%:*}"
done
assert_eq "$(gstat sb-a "$idw")" "12 96" "web.service's reads"
assert_eq "$(gstat sb-a "$idd")" "5 40" "sb-db's reads"
assert_eq "$(gstat sb-a default)" "$def0" "the default group's reads"

# ---- apply again: the groups attached by the watcher are what the file says -------------------
expect 0 ioband-setup apply "$tab"
assert_eq "$out" "sb-a: up to date
sb-b: /dev/sb-nosuch does not exist: passed over (nofail)
sb-c: LABEL=sb-nolabel does not exist: passed over (nofail)" "apply after the cgroups appeared"
# a unit by its name: its cgroup found in the tree
expect 0 ioband-setup set sb-a sbu.service weight=350
assert_eq "$out" "sb-a: sbu.service (id $idu), weight 350"
grep -q "^sb-a /system.slice/sbu.service 350 0 0 $idu " /run/ioband/groups ||
	fail "the state: $(cat /run/ioband/groups)"
log "apply before the cgroups, then attached as they appeared"

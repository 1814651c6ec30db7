#!/bin/bash
# ioband-setup save: live changes (set, attach, detach; a group by a path
# no cgroup has yet; a device made by create) written back to iobandtab in
# its syntax (limits too), comments and spacing kept, only the lines that differ
# rewritten; save again and apply then have nothing to change; apply's
# diff before the save names groups by path and name; after a "reboot"
# (devices and state gone) apply brings back what was saved, a cost model
# given to create included.
# timeout: 240
# long: debug
. /tests/lib.sh
. /tests/t/setup.inc

rm -f /run/ioband/groups
nb=$(nullb_create ss0 16)
nb2=$(nullb_create ss1 16)
nb3=$(nullb_create ss2 16)
web=$(cg_create ss-web)
idw=$(stat -c %i "$web")
add_user alice 1000 2000
for n in ss-a ss-b ss-c; do on_exit "dmsetup remove $n"; done
tab=$TESTDIR/iobandtab
cat >"$tab" <<EOF
# my devices
ss-a  $nb   type=cgroup,group=ss-web=400,group=ss-db=100  # web and db
ss-b	$nb2	type=user,group=alice=70
ss-x  /dev/ss-nosuch  nofail
# the end
EOF
expect 0 ioband-setup apply "$tab"
tables() { for n in ss-a ss-b ss-c; do echo "$n: $(dmsetup table $n 2>/dev/null | cut -d' ' -f4-)"; done; }

# ---- live changes -------------------------------------------------------------------
expect 0 ioband-setup set ss-a ss-web weight=250,riops=500,wbps=20M
expect 0 ioband-setup set ss-a ss-later weight=30,wiops=9
expect 0 ioband-setup detach ss-a ss-db
expect 0 ioband-setup set ss-b alice weight=90
expect 0 ioband-setup attach ss-b root weight=5
expect 0 ioband-setup create ss-c "$nb3" -t cgroup -g ss-web=10 --io-limit 32 \
	--cost-model rbps=1000000,rseqiops=2000,rrandiops=300,wbps=400000,wseqiops=500,wrandiops=60
# what apply would undo, by name
expect 0 ioband-setup apply --dry-run "$tab"
contains "ss-a: would reload (group /ss-web (id $idw) weight 250 -> 400, group /ss-web (id $idw) limits none)"
contains "ss-b: would reload (group alice (id 1000) weight 90 -> 70, detach root (id 0))"

# ---- save ----------------------------------------------------------------------------
expect 0 ioband-setup save "$tab"
assert_eq "$out" "ss-a: line 2 saved
ss-b: line 3 saved
ss-c: added" "save's report"
assert_eq "$(cat "$tab")" "# my devices
ss-a  $nb type=cgroup,group=/ss-web=250/wbps=20000000/riops=500,group=/ss-later=30/wiops=9  # web and db
ss-b	$nb2 type=user,group=root=5,group=alice=90
ss-x  /dev/ss-nosuch  nofail
# the end
# added by ioband-setup save
ss-c $nb3 type=cgroup,io-limit=32,rbps=1000000,rseqiops=2000,rrandiops=300,wbps=400000,wseqiops=500,wrandiops=60,group=/ss-web=10" "the file saved"
cp "$tab" "$TESTDIR/saved"
expect 0 ioband-setup save "$tab"
assert_eq "$out" "$tab: up to date" "save again"
cmp -s "$tab" "$TESTDIR/saved" || fail "save again changed the file"

# ---- apply: nothing to change --------------------------------------------------------
before=$(tables)
state=$(cat /run/ioband/groups)
expect 0 ioband-setup apply "$tab"
assert_eq "$(echo "$out" | grep -v 'no cgroup /ss-later yet')" "ss-a: up to date
ss-b: up to date
ss-x: /dev/ss-nosuch does not exist: passed over (nofail)
ss-c: up to date" "apply after save"
assert_eq "$(tables)" "$before" "the tables after apply"
assert_eq "$(cat /run/ioband/groups)" "$state" "the state after apply"

# ---- a reboot: the devices and the state gone, apply brings back what was saved ----------------
for n in ss-a ss-b ss-c; do dmsetup remove $n || fail "remove $n"; done
rm -f /run/ioband/groups
expect 0 ioband-setup apply "$tab"
assert_eq "$(tables)" "$before" "the tables after the reboot"
grep -q "^ss-a /ss-later 30 0 0 0 0 wiops=9$" /run/ioband/groups || fail "the state after the reboot: $(cat /run/ioband/groups)"
log "saved, applied with nothing to change, brought back after a reboot"

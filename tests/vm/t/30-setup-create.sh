#!/bin/bash
# ioband-setup: --help of every command; create, list, show and remove with
# good and bad arguments: exit codes, messages, the tables that reach the
# kernel (read back with dmsetup), names resolved in show, and nothing left
# behind by a refused command.
# timeout: 240
# long: debug
. /tests/lib.sh
. /tests/t/setup.inc

# ---- help and usage ------------------------------------------------------------
for c in create remove list show set attach detach top wrap unwrap apply help; do
	expect 0 ioband-setup "$c" --help
	contains "usage: ioband-setup $c"
	expect 0 ioband-setup help "$c"
	contains "usage: ioband-setup $c"
	expect 0 ioband-setup "$c" -h
	contains "usage: ioband-setup $c"
done
expect 0 ioband-setup --help
contains "Exit status: 0 done; 1 refused"
expect 0 ioband-setup --version
assert_eq "$out" "ioband-setup 1.0"
expect 2 ioband-setup
contains "usage: ioband-setup"
expect 2 ioband-setup bogus
contains "unknown command 'bogus'"
expect 2 ioband-setup help bogus
contains "no command 'bogus'"
expect 2 ioband-setup create
contains "expected NAME and DEVICE"
expect 2 ioband-setup create --bogus a b
contains "unknown option '--bogus'"
expect 2 ioband-setup create a b --type
contains "option --type needs a value"
expect 2 ioband-setup list extra
contains "takes no arguments"

# ---- create: defaults ------------------------------------------------------------
nb=$(nullb_create sc0 64)
sz=$(blockdev --getsz "$nb")
mm=$(cat /sys/block/${nb#/dev/}/dev)
expect 0 ioband-setup create d1 "$nb"
on_exit "dmsetup remove d1"
assert_eq "$out" "d1: created /dev/mapper/d1 over $nb ($mm), device group d1, type none, policy weight-time, 0 groups attached"
assert_eq "$(dmsetup table d1)" "0 $sz ioband $mm d1 0 128 none weight-time 256 :100" "table of d1"
[ -b /dev/mapper/d1 ] || fail "/dev/mapper/d1 was not made"
expect 0 ioband-setup -q remove d1
assert_eq "$out" "" "--quiet"
gone d1

# ---- create: every option, names resolved ------------------------------------------
cgw=$(cg_create sc-web)
cgb=$(cg_create sc-batch)
idw=$(stat -c %i "$cgw")
idb=$(stat -c %i "$cgb")
expect 0 ioband-setup create d2 "$nb" --type cgroup --group sc-web=400 \
	-g /sys/fs/cgroup/sc-batch=50 --weight 20 --device-group shared \
	--io-limit 64 --io-throttle 4 --token-base 512 --carryover 5
contains "d2: created /dev/mapper/d2 over $nb ($mm), device group shared, type cgroup, policy weight-time, 2 groups attached"
on_exit "dmsetup remove d2"
assert_eq "$(dmsetup table d2)" "0 $sz ioband $mm shared 4 64 cgroup weight-time 512 :20 $idw:400 $idb:50" "table of d2"

cg_run sc-web dd if=/dev/mapper/d2 of=/dev/null bs=4k count=17 iflag=direct status=none ||
	fail "dd in sc-web"
cg_run sc-batch dd if=/dev/zero of=/dev/mapper/d2 bs=4k count=3 oflag=direct status=none ||
	fail "dd in sc-batch"
expect 0 ioband-setup show d2
echo "$out"
contains "name:          d2 ($(cat /sys/block/$(basename "$(dm_node d2)")/dev)), $sz sectors (64.0 MiB)"
contains "device:        $nb ($mm)"
contains "device group:  shared (devices: d2)"
contains "settings:      policy weight-time, io_throttle 4, io_limit 64, token_base 512"
contains "group type:    cgroup"
# GROUP NAME WEIGHT SHARE READS R-DELAYED READ-MiB WRITES W-DELAYED WRITE-MiB
row=$(echo "$out" | awk '$2 == "/sc-web"')
set -- $row
assert_eq "$1 $3 $4 $5 $8" "$idw 400 85.1% 17 0" "show row of sc-web"
row=$(echo "$out" | awk '$2 == "/sc-batch"')
set -- $row
assert_eq "$1 $3 $4 $5 $8" "$idb 50 10.6% 0 3" "show row of sc-batch"
set -- $(echo "$out" | awk '$1 == "default"')
assert_eq "$2 $3 $4" "default 20 4.3%" "show row of the default group"
expect 0 ioband-setup show /dev/mapper/d2 --json
contains "{\"report_version\":1,\"name\":\"d2\""
contains "\"device_group\":\"shared\",\"device_group_members\":[\"d2\"],\"type\":\"cgroup\",\"policy\":\"weight-time\",\"io_throttle\":4,\"io_limit\":64,\"token_base\":512"
contains "{\"id\":$idw,\"name\":\"/sc-web\",\"weight\":400,\"min_kbps\":null,\"max_kbps\":null,\"range\":null,\"limits\":null,\"share\":0.8511,\"reads\":17,\"delayed_reads\":0,\"read_sectors\":136,\"writes\":0"
contains "{\"id\":$idb,\"name\":\"/sc-batch\",\"weight\":50,\"min_kbps\":null,\"max_kbps\":null,\"range\":null,\"limits\":null,\"share\":0.1064,\"reads\":0,\"delayed_reads\":0,\"read_sectors\":0,\"writes\":3,\"delayed_writes\":0,\"write_sectors\":24}"
expect 0 ioband-setup show "$(dm_node d2)"
contains "device group:  shared"

# user type: names from /etc/passwd
add_user alice 1000 2000
nb2=$(nullb_create sc1 32)
mm2=$(cat /sys/block/${nb2#/dev/}/dev)
expect 0 ioband-setup create d3 "$nb2" -t uid -g alice=300 -g 1001=100 -g root=7 -p weight-iosize
on_exit "dmsetup remove d3"
assert_eq "$(dmsetup table d3 | cut -d' ' -f4-)" "$mm2 d3 0 128 user weight-iosize 256 :100 0:7 1000:300 1001:100" "table of d3 (groups in order of id)"
expect 0 ioband-setup show d3
contains "settings:      policy weight-iosize"
set -- $(echo "$out" | awk '$1 == 1000')
assert_eq "$2 $3" "alice 300" "user 1000 named"
set -- $(echo "$out" | awk '$1 == 1001')
assert_eq "$2 $3" "- 100" "user 1001 has no name"
set -- $(echo "$out" | awk '$1 == 0')
assert_eq "$2" "root" "user 0 named"

# cgroup-tree: cgroup paths as for cgroup; no share, which depends on
# which children are busy
cga=$(cg_create sc-web/a)
ida=$(stat -c %i "$cga")
nb4=$(nullb_create sc4 32)
mm4=$(cat /sys/block/${nb4#/dev/}/dev)
expect 0 ioband-setup create d4 "$nb4" -t cgroup-tree -g sc-web=300 -g sc-web/a=400
on_exit "dmsetup remove d4"
assert_eq "$(dmsetup table d4 | cut -d' ' -f4-)" "$mm4 d4 0 128 cgroup-tree weight-time 256 :100 $idw:300 $ida:400" "table of d4"
expect 0 ioband-setup show d4
contains "group type:    cgroup-tree"
set -- $(echo "$out" | awk '$2 == "/sc-web/a"')
assert_eq "$1 $3 $4" "$ida 400 -" "show row of sc-web/a"
expect 0 ioband-setup -q remove d4

# ---- list ------------------------------------------------------------------------------
dm_create sc-lin "0 8 linear $nb2 0" >/dev/null	# not ioband: not listed
expect 0 ioband-setup list
echo "$out"
assert_eq "$(echo "$out" | head -n1 | tr -s ' ')" "NAME DEVICE DEVICE-GROUP TYPE POLICY GROUPS WRAPS" "list header"
assert_eq "$(echo "$out" | awk '$1 == "d2"' | tr -s ' ')" "d2 $nb shared cgroup weight-time 2 -" "list row d2"
assert_eq "$(echo "$out" | awk '$1 == "d3"' | tr -s ' ')" "d3 $nb2 d3 user weight-iosize 3 -" "list row d3"
[ "$(echo "$out" | wc -l)" = 3 ] || fail "list shows other devices: $out"
expect 2 ioband-setup list --bogus
contains "unknown option '--bogus'"
expect 3 ioband-setup show nosuch
contains "no device-mapper device named 'nosuch'"
expect 4 ioband-setup show sc-lin
contains "'sc-lin' is not an ioband device (its table is linear)"
expect 2 ioband-setup show
contains "expected one NAME"
expect 2 ioband-setup show d2 d3
expect 2 ioband-setup show d2 -x
contains "unknown option '-x'"
expect 3 ioband-setup show /dev/mapper/nosuch
expect 0 ioband-setup list --json
contains "{\"name\":\"d2\",\"device\":\"$nb\",\"devt\":\"$mm\",\"device_group\":\"shared\",\"type\":\"cgroup\",\"policy\":\"weight-time\",\"groups\":2,\"wraps\":null,\"sectors\":$sz,\"io_throttle\":4,\"io_limit\":64,\"token_base\":512,\"open_count\":0,\"suspended\":false}"
case $out in "{\"report_version\":1,\"devices\":["*"]}") ;; *) fail "list --json is not report version 1's object of devices: $out" ;; esac

# ---- create: refused, and nothing left behind ---------------------------------------------
nb3=$(nullb_create sc2 16)
expect 4 ioband-setup create d2 "$nb3"
contains "a device named 'd2' exists already"
expect 3 ioband-setup create bad /dev/nosuch
contains "/dev/nosuch: No such file or directory"
expect 2 ioband-setup create bad /etc/passwd
contains "/etc/passwd is not a block device"
expect 4 ioband-setup create bad "$nb"
contains "$nb is in use (mounted, or held by another device)"
expect 2 ioband-setup create bad "$nb3" --type bogus
contains "unknown group type 'bogus'"
expect 2 ioband-setup create bad "$nb3" --policy fast
contains "unknown policy 'fast'"
expect 2 ioband-setup create bad "$nb3" -g sc-web=5
contains "group 'sc-web' needs a group type"
expect 3 ioband-setup create bad "$nb3" -t user -g nosuchuser=5
contains "no user named 'nosuchuser'"
# a cgroup path no cgroup has yet: created without it (ioband-setup watch
# attaches it when it appears)
expect 0 ioband-setup create bad "$nb3" -t cgroup -g nosuchcg=5
contains "bad: no cgroup /nosuchcg yet: its group is attached when it appears"
contains "type cgroup, policy weight-time, 0 groups attached"
expect 0 ioband-setup remove bad
expect 2 ioband-setup create bad "$nb3" -t pid -g 0=5
contains "process id '0' out of range"
expect 2 ioband-setup create bad "$nb3" -t none -g 5=5
contains "group type none has only the default group"
expect 2 ioband-setup create bad "$nb3" --weight 0
contains "weight must be a number from 1 to 10000, not '0'"
expect 2 ioband-setup create bad "$nb3" -t user -g 5=10001
contains "weight must be a number from 1 to 10000, not '10001'"
expect 2 ioband-setup create bad "$nb3" -t user -g alice=5 -g 1000=6
contains "group 1000 is given twice (id 1000)"
expect 2 ioband-setup create bad "$nb3" --io-throttle 10 --io-limit 5
contains "io-throttle 10 must not exceed io-limit 5"
expect 2 ioband-setup create bad "$nb3" --io-limit 65537
contains "io-limit must be a number from 0 to 65536"
expect 2 ioband-setup create bad "$nb3" --device-group a/b
contains "device group id 'a/b' must be 1 to 31"
expect 2 ioband-setup create a-name-that-is-longer-than-thirty-one "$nb3"
contains "give one with --device-group"
expect 2 ioband-setup create a/b "$nb3"
contains "'a/b' is not a valid device name"
expect 2 ioband-setup create bad "$nb3" --policy range-bw -w 5
contains "the table of a range-bw device holds ranges, not weights"
expect 2 ioband-setup create bad "$nb3" --policy range-bw -t gid -g 5=300:200
contains "minimum bandwidth above maximum"
expect 2 ioband-setup create bad "$nb3" --policy range-bw -t gid -g 5=300
contains "range must be MIN:MAX in KB/s, not '300'"
gone bad
# an injected failure after the device was made: removed again
IOBAND_SETUP_FAULT=create-carryover expect 1 ioband-setup create bad "$nb3" --carryover 3
contains "bad: setting the carryover failed (injected fault at create-carryover); removed bad again"
gone bad
# and the device below is free again
expect 0 ioband-setup create good "$nb3"
expect 0 ioband-setup remove good

# range-bw: ranges in the table, shown as ranges
mm3=$(cat /sys/block/${nb3#/dev/}/dev)
expect 0 ioband-setup create rb "$nb3" --policy range-bw -t gid -g default=100:200 -g 5=10:0 -g 6=1m:2m
contains "policy range-bw, 2 groups attached"
assert_eq "$(dmsetup table rb | cut -d' ' -f4-)" "$mm3 rb 0 128 gid range-bw 256 :100:200 5:10:0 6:1024:2048" "range-bw table"
expect 0 ioband-setup show rb
contains "RANGE-KB/s"
set -- $(echo "$out" | awk '$1 == 6')
assert_eq "$3 $4" "1024:2048 -" "range-bw row"
expect 0 ioband-setup show rb --json
contains "{\"id\":5,\"name\":null,\"weight\":null,\"min_kbps\":10,\"max_kbps\":0,\"range\":\"10:0\",\"limits\":null,\"share\":null,"
expect 0 ioband-setup remove rb

# ---- remove ----------------------------------------------------------------------------
expect 3 ioband-setup remove nosuch
contains "no device-mapper device named 'nosuch'"
expect 4 ioband-setup remove sc-lin
contains "'sc-lin' is not an ioband device (its table is linear)"
expect 2 ioband-setup remove
contains "expected one NAME"
sleep 60 </dev/mapper/d3 &
holder=$!
expect 4 ioband-setup remove d3
contains "'d3' is in use (open count 1): unmount it or stop what holds it open"
kill $holder
wait $holder 2>/dev/null
expect 0 ioband-setup remove d3
assert_eq "$out" "removed d3"
gone d3
expect 0 ioband-setup remove /dev/mapper/d2
gone d2
expect 0 ioband-setup list
assert_eq "$out" "" "list with no ioband device"
expect 0 ioband-setup list --json
assert_eq "$out" '{"report_version":1,"devices":[]}' "list --json with no ioband device"
# ---- the kernel's own reason: the target is not there ------------------------------
# No ioband device is left; unload the modules and make autoloading fail.
mp=$(cat /proc/sys/kernel/modprobe)
on_exit "echo $mp > /proc/sys/kernel/modprobe; modprobe dm-ioband 2>/dev/null || { insmod /lib/modules/\$(uname -r)/extra/dm-ioband-policy.ko; insmod /lib/modules/\$(uname -r)/extra/dm-ioband.ko; }"
echo /bin/false >/proc/sys/kernel/modprobe
rmmod dm_ioband && rmmod dm_ioband_policy || fail "cannot unload the modules"
expect 1 ioband-setup create bad "$nb3"
contains "bad: the kernel refused the table (ioband $mm3 bad 0 128 none weight-time 256 :100): unknown target type (is the dm-ioband module loaded? modprobe dm-ioband)"
gone bad
echo "$mp" >/proc/sys/kernel/modprobe
modprobe dm-ioband 2>/dev/null || { insmod /lib/modules/$(uname -r)/extra/dm-ioband-policy.ko &&
	insmod /lib/modules/$(uname -r)/extra/dm-ioband.ko; } || fail "cannot load the modules again"
expect 0 ioband-setup create good "$nb3"
expect 0 ioband-setup remove good
# ---- a second device of a device group takes the group's settings ------------------
half=$(($(blockdev --getsz "$nb3") / 2))
h1=$(dm_create sh1 "0 $half linear $nb3 0")
h2=$(dm_create sh2 "0 $half linear $nb3 $half")
expect 0 ioband-setup create m1 "$h1" -d shared
on_exit "ioband-setup remove m2 >/dev/null 2>&1; ioband-setup remove m1 >/dev/null 2>&1"
dmsetup message m1 0 io_limit 8 || fail "io_limit message"
expect 0 ioband-setup create m2 "$h2" -d shared
assert_eq "$(dmsetup table m2 | cut -d' ' -f7)" 8 "the new member's io_limit"
expect 0 ioband-setup remove m2
expect 1 ioband-setup create m2 "$h2" -d shared --io-limit 16
contains "io_limit differs from the device group's: change it by message"
gone m2
expect 0 ioband-setup remove m1
log "create, list, show, remove and help as documented"

#!/bin/bash
# ioband-setup's reports against real devices, as an LVM admin would use
# them: list -o with --noheadings and --separator, -o +COL, columns as wide
# as a 40-character device name, --units, JSON of report version 1 (and
# --json the same), show's and top's -o; bad report options refused with
# status 2 and nothing on standard output.
# timeout: 120
# long: debug
. /tests/lib.sh
. /tests/t/setup.inc

long=a-device-name-of-forty-characters-long-x
[ ${#long} = 40 ] || fail "the long name has ${#long} characters"
nb=$(nullb_create sr0 64)
nb2=$(nullb_create sr1 32)
mm=$(cat /sys/block/${nb#/dev/}/dev)
mm2=$(cat /sys/block/${nb2#/dev/}/dev)
cgw=$(cg_create sr-web)
idw=$(stat -c %i "$cgw")
expect 0 ioband-setup create sr-a "$nb" -t cgroup -g sr-web=300 -p weight-iosize --io-limit 64
on_exit "dmsetup remove sr-a"
expect 0 ioband-setup create "$long" "$nb2" --device-group sr-long
on_exit "dmsetup remove $long"

# ---- list: chosen columns, for scripts (sorted by name) ------------------------------------
expect 0 ioband-setup list -o name,policy --noheadings --separator :
assert_eq "$out" "$long:weight-time
sr-a:weight-iosize" "list -o name,policy --noheadings --separator :"
expect 0 ioband-setup list -o policy,name,groups --separator ' | '
assert_eq "$out" "POLICY | NAME | GROUPS
weight-time | $long | 0
weight-iosize | sr-a | 1" "list --separator ' | ': no padding"

# ---- aligned: each column as wide as its widest cell, numbers to the right ----------------
expect 0 ioband-setup list -o name,policy,groups
echo "$out"
assert_eq "$out" "NAME                                      POLICY         GROUPS
$long  weight-time         0
sr-a                                      weight-iosize       1" "list -o name,policy,groups"
# the default set: DEVICE as wide as the longer device path
w=$(( ${#nb} > ${#nb2} ? ${#nb} : ${#nb2} ))
want=$(printf '%-40s  %-*s  %-12s  %-6s  %-13s  %6s  %s\n' NAME "$w" DEVICE DEVICE-GROUP TYPE POLICY GROUPS WRAPS \
	"$long" "$w" "$nb2" sr-long none weight-time 0 - \
	sr-a "$w" "$nb" sr-a cgroup weight-iosize 1 -)
expect 0 ioband-setup list
echo "$out"
assert_eq "$out" "$want" "list's default columns, aligned with a 40-character name"
expect 0 ioband-setup list -o +io_limit,devt --noheadings
assert_eq "$(echo "$out" | tr -s ' ')" "$long $nb2 sr-long none weight-time 0 - 128 $mm2
sr-a $nb sr-a cgroup weight-iosize 1 - 64 $mm" "list -o +io_limit,devt"

# ---- units: 64 MiB and 32 MiB, powers of 1024 ------------------------------------------------
for u in "b 33554432 67108864" "s 65536 131072" "k 32768.00 65536.00" "m 32.00 64.00" "g 0.03 0.06"; do
	set -- $u
	expect 0 ioband-setup list -o sectors,name --noheadings --separator , --units "$1"
	assert_eq "$out" "$2,$long
$3,sr-a" "list --units $1"
done
expect 0 ioband-setup list -o name,sectors --units s
assert_eq "$(echo "$out" | head -n1 | tr -s ' ')" "NAME SIZE-SECTORS" "the unit in the heading"

# ---- JSON -----------------------------------------------------------------------------------
expect 0 ioband-setup list --reportformat json -o name,policy,wraps,sectors
assert_eq "$out" "{\"report_version\":1,\"devices\":[{\"name\":\"$long\",\"policy\":\"weight-time\",\"wraps\":null,\"sectors\":65536},{\"name\":\"sr-a\",\"policy\":\"weight-iosize\",\"wraps\":null,\"sectors\":131072}]}" "list --reportformat json -o"
expect 0 ioband-setup list --reportformat json
json=$out
expect 0 ioband-setup list --json
assert_eq "$out" "$json" "--json is --reportformat json"
contains "{\"name\":\"sr-a\",\"device\":\"$nb\",\"devt\":\"$mm\",\"device_group\":\"sr-a\",\"type\":\"cgroup\",\"policy\":\"weight-iosize\",\"groups\":1,\"wraps\":null,\"sectors\":131072,\"io_throttle\":0,\"io_limit\":64,\"token_base\":256,\"open_count\":0,\"suspended\":false}"

# ---- show and top ---------------------------------------------------------------------------
cg_run sr-web dd if=/dev/mapper/sr-a of=/dev/null bs=4k count=8 iflag=direct status=none ||
	fail "dd in sr-web"
expect 0 ioband-setup show sr-a -o id,name,weight,reads,read_sectors --noheadings --separator : --units s
echo "$out"
assert_eq "$(echo "$out" | grep "^$idw:")" "$idw:/sr-web:300:8:64" "show -o, sectors"
assert_eq "$(echo "$out" | grep -c '^default:default:100:')" 1 "show -o: the default group's row"
lacks "device group:"
expect 0 ioband-setup show sr-a -o id,read_sectors --units k --noheadings
assert_eq "$(echo "$out" | awk -v id="$idw" '$1 == id { print $2 }')" "32.00" "show --units k"
expect 0 ioband-setup show sr-a --reportformat json -o id,name,read_sectors
contains "{\"report_version\":1,\"name\":\"sr-a\","
contains "\"groups\":[{\"id\":-1,\"name\":\"default\",\"read_sectors\":"
contains "{\"id\":$idw,\"name\":\"/sr-web\",\"read_sectors\":64}],\"waiting\":[]}"
expect 0 ioband-setup top sr-a --count 1 --interval 0.2 -o id,name,weight,reads --noheadings --separator :
echo "$out"
assert_eq "$(echo "$out" | grep "^$idw:")" "$idw:/sr-web:300:0" "top -o --noheadings --separator :"
assert_eq "$(echo "$out" | grep -c '^default:default:100:[0-9]*$')" 1 "top: the default group's row"
assert_eq "$(echo "$out" | wc -l)" 2 "top: rows only"

# ---- bad report options: status 2, a message naming the problem, nothing on stdout ----------
bad() { # WANT-MESSAGE ARGS...
	local msg=$1
	shift
	expect 2 ioband-setup "$@"
	contains "$msg"
	assert_eq "$(ioband-setup "$@" 2>/dev/null)" "" "stdout of ioband-setup $*"
}
bad "unknown column 'foo' (ioband-setup list -o help lists them)" list -o name,foo
bad "-o needs at least one column" list -o ''
bad "empty column name in '-o name,'" list -o name,
bad "unknown unit 'K' (b, s, k, m or g" list --units K
bad "--separator must not be empty" list --separator ''
bad "unknown report format 'xml' (basic or json)" list --reportformat xml
bad "--units, --separator and --noheadings shape the text report, not JSON" list --json --units k
bad "unknown column 'bogus' (ioband-setup show -o help lists them)" show sr-a -o bogus
bad "unknown column 'share' (ioband-setup list -o help lists them)" list -o share
bad "unknown column 'bogus' (ioband-setup top -o help lists them)" top sr-a -o bogus --count 1
expect 0 ioband-setup list -o help
contains "  device_group  the device group"
expect 0 ioband-setup top -o help
contains "  read_bytes_per_s"

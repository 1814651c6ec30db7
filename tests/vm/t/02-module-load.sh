#!/bin/bash
# Our modules loaded at boot and registered the ioband target.
# timeout: 60
. /tests/lib.sh

state=$(cat /run/ioband-modules 2>/dev/null)
case $state in
absent) skip "dm-ioband.ko is not built yet" ;;
failed*) fail "module load $state" ;;
esac
if [ -f "/lib/modules/$(uname -r)/extra/dm-ioband-policy.ko" ]; then
	grep -qw dm_ioband_policy /proc/modules || fail "dm_ioband_policy not in /proc/modules"
fi
grep -qw dm_ioband /proc/modules || fail "dm_ioband not in /proc/modules"
dmsetup targets | grep -w ioband || fail "ioband target not registered"

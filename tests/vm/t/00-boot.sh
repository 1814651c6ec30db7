#!/bin/bash
# The VM is up and device-mapper is there.
# timeout: 60
. /tests/lib.sh

log "kernel $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ {print $2 " kB"}' /proc/meminfo)"
[ -d /sys/fs/cgroup ] && [ -f /sys/fs/cgroup/cgroup.controllers ] ||
	fail "cgroup2 not mounted"
log "cgroup controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
grep -qw io /sys/fs/cgroup/cgroup.controllers || fail "no io controller"
[ -c /dev/mapper/control ] || fail "no /dev/mapper/control (dm-mod missing?)"
targets=$(dmsetup targets) || fail "dmsetup targets failed"
echo "$targets"
echo "$targets" | grep -qw linear || fail "dm-linear not listed by dmsetup targets"
dmsetup version || fail "dmsetup version"

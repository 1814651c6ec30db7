#!/bin/bash
# Each CPU remembers its last lookup of a bio's group (struct
# ioband_lookup_cache in drivers/md/dm-ioband.c), and forgets it when a
# group comes or goes.  A reader pinned to vCPU 0 reads through ioband in
# three batches: before its group is attached, while it is, and after it
# is detached.  Each batch must be counted in the group that existed when
# it was read, for the cgroup type and for a task type (user), which
# reach the remembered answer by different paths.  Another group stays
# attached throughout: a device without groups looks nothing up.
# timeout: 120
. /tests/lib.sh

nb=$(nullb_create lk0 64)
sz=$(blockdev --getsz "$nb")

# batch NAME COUNT RUN...: COUNT reads through NAME, run as RUN ... on vCPU 0.
batch() {
	local name=$1 count=$2
	shift 2
	"$@" taskset -c 0 dd if="$(dm_node "$name")" of=/dev/null bs=4k count="$count" \
		iflag=direct status=none || fail "$name: $count reads"
}

# read_batches NAME ID RUN...: batches of 5, 7 and 3 reads around an
# attach and a detach of group ID.
read_batches() {
	local name=$1 id=$2
	shift 2
	batch "$name" 5 "$@"
	dmsetup message "$name" 0 attach "$id" || fail "$name: attach $id"
	batch "$name" 7 "$@"
	assert_eq "$(dm_group_reads "$name" "$id") $(dm_group_reads "$name" -1)" "7 5" \
		"$name: reads of group $id and of the default group after the attach"
	dmsetup message "$name" 0 detach "$id" || fail "$name: detach $id"
	batch "$name" 3 "$@"
	assert_eq "$(dm_group_reads "$name" "$id")" "" "$name: group $id in the status after the detach"
	assert_eq "$(dm_group_reads "$name" -1)" 8 "$name: the default group's reads after the detach"
}

p=$(cg_create lk-a)
id=$(stat -c %i "$p")
p=$(cg_create lk-b)
dm_create lkcg "0 $sz ioband $nb lkdg 0 0 cgroup weight 0 :100 $(stat -c %i "$p"):100" >/dev/null
read_batches lkcg "$id" cg_run lk-a

dm_create lkuser "0 $sz ioband $nb lkdg2 0 0 user weight 0 :100 1000:100" >/dev/null
read_batches lkuser 0 env
log "cgroup and user: each batch counted in the group it was read under"

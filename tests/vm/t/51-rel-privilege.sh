#!/bin/bash
# Only CAP_SYS_ADMIN in the initial user namespace may load, create,
# suspend or remove an ioband table, or send it a message: a user, root
# without CAP_SYS_ADMIN, and root in a user namespace of its own are each
# refused every one of these, and the device is left as it was.  The
# control node is opened to everyone first, so that the refusal comes from
# the kernel's capability check and not from the node's file mode.
# timeout: 120
# long: debug
. /tests/lib.sh

nb=$(nullb_create priv0 64)
sz=$(blockdev --getsz "$nb")
table="0 $sz ioband $nb privdg 0 0 user weight 0 :100 1000:200"
dm_create priv "$table" >/dev/null
ctl=/dev/mapper/control
mode=$(stat -c %a $ctl)
chmod 666 $ctl || fail "chmod $ctl"
on_exit "chmod $mode $ctl"
before=$(dmsetup table priv)

# refused WHO CMD... : CMD (a dmsetup command line) must fail with EACCES
# or EPERM when run under WHO's wrapper ($wrap)
refused() {
	local who=$1
	shift
	if "${wrap[@]}" "$@" </dev/null >"$TESTDIR/out" 2>&1; then
		fail "$who: '$*' was allowed"
	fi
	grep -Eq "Permission denied|Operation not permitted" "$TESTDIR/out" ||
		fail "$who: '$*' failed, but not for lack of privilege: $(cat "$TESTDIR/out")"
}

# each WHO: the whole list of dm operations, then the device unchanged
try_all() {
	local who=$1
	refused "$who" dmsetup message priv 0 weight 1000:999
	refused "$who" dmsetup message priv 0 attach 2000
	refused "$who" dmsetup message priv 0 policy range-bw
	refused "$who" dmsetup load priv --table "$table"
	refused "$who" dmsetup create priv2 --table "$table"
	refused "$who" dmsetup suspend priv
	refused "$who" dmsetup remove priv
	refused "$who" dmsetup status priv
	assert_eq "$(dmsetup table priv)" "$before" "$who: table after the refusals"
	dmsetup info priv | grep -q "^State: *ACTIVE" || fail "$who: device not active: $(dmsetup info priv)"
	dmsetup info priv | grep -q "Tables present: *LIVE$" || fail "$who: an inactive table appeared"
	dmsetup info priv2 >/dev/null 2>&1 && fail "$who: priv2 exists"
	log "$who: refused all 8 operations; the device is unchanged"
}

wrap=(setpriv --reuid=1000 --regid=1000 --clear-groups)
try_all "uid 1000"
wrap=(setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin)
try_all "root without CAP_SYS_ADMIN"
wrap=(unshare --user --map-root-user)
"${wrap[@]}" true || skip "no user namespaces on this kernel"
try_all "root in a user namespace"
# and root itself may: the same message takes effect
dmsetup message priv 0 weight 1000:999 || fail "root's message refused"
dmsetup table priv | grep -q " 1000:999" || fail "root's weight not applied: $(dmsetup table priv)"

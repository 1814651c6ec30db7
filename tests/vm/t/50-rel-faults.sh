#!/bin/bash
# Faults below ioband: dm-flakey, dm-error, dm-dust and dm-delay under an
# ioband device that holds bios (io_limit 1, four submitters).  Errors reach
# the submitters as EIO; every bio, held or not, completes exactly once
# (ioband counted as many bios as the submitters issued, the lower device
# completed as many, each held bio was released once); forced removal and
# wipe_table with bios held end every submitter.
# timeout: 400
. /tests/lib.sh
. /tests/t/rel.inc

nb=$(nullb_create fault0 64 1000000 2 1)
sz=$(blockdev --getsz "$nb")
N=4		# submitters
COUNT=400	# 4 KiB I/Os each, far more than run before the fault
bios_total=0
unacct=0
rel_kernel production && unacct=$N
rel_trace_start

# stack LOWER_TABLE: the lower device "low" and ioband "fio" over it
stack() {
	low=$(dm_create low "$1")
	rel_below_prepare "$low"
	low0=$(rel_below_ios "$low")
	io=$(dm_create flt "0 $sz ioband $low faultdg 0 1 none weight 1")
}
unstack() {
	dmsetup remove flt 2>/dev/null
	dmsetup remove low || fail "remove low"
}

# start DIR: N direct dd submitters on their own 4 MiB regions
start() {
	local i
	dir=$1
	subs=
	for i in $(seq 1 $N); do
		if [ "$dir" = write ]; then
			dd if=/dev/zero of="$io" bs=4k count=$COUNT seek=$((i * 1024)) \
				oflag=direct 2>"$TESTDIR/dd.$i" &
		else
			dd if="$io" of=/dev/null bs=4k count=$COUNT skip=$((i * 1024)) \
				iflag=direct 2>"$TESTDIR/dd.$i" &
		fi
		subs="$subs $!"
	done
}
# finish WHAT: every submitter ends (in bounded time) with an I/O error
finish_with_eio() {
	local p i=0
	for p in $subs; do
		rel_wait_gone "$p" 120 || fail "$1: a submitter still runs 120 s after the fault"
		wait "$p" && fail "$1: a submitter saw no error"
	done
	for i in $(seq 1 $N); do
		grep -q "Input/output error" "$TESTDIR/dd.$i" ||
			fail "$1: no EIO for submitter $i: $(cat "$TESTDIR/dd.$i")"
	done
}
# bios the submitters issued: the records that went through plus the one
# that failed
issued() {
	local i s=0 n
	for i in $(seq 1 $N); do
		n=$(sed -n 's/^\([0-9]*\)+0 records \(in\|out\).*/\1/p' "$TESTDIR/dd.$i" | tail -n1)
		s=$((s + ${n:-0} + 1))
	done
	echo $s
}
# count_ok WHAT FIELD: ioband counted exactly the bios issued, once each
count_ok() {
	local got want
	got=$(rel_sum flt "$2")
	want=$(issued)
	assert_eq "$got" "$want" "$1: bios counted by ioband vs issued"
	# The lower device (dm) counts each bio ioband sent down once as
	# I/O, except on 6.1 the one per submitter that its fault target
	# failed in map (6.12 counts those too).
	local below=$(($(rel_below_ios "$low") - low0))
	if rel_kernel debug; then
		# 6.12 counts the failed bios of some faults and not of others
		# (make check: writes all counted, flakey-read 441 of 445):
		# bounded there, at most one per submitter uncounted, none twice
		[ "$below" -le "$got" ] && [ "$below" -ge $((got - N)) ] ||
			fail "$1: $below bios completed below, ioband counted $got ($N submitters)"
		return
	fi
	assert_eq "$below" "$((got - unacct))" \
		"$1: bios completed below ($unacct failed ones not counted there) vs counted by ioband"
	bios_total=$((bios_total + got))
	log "$1: $got bios, $(rel_held flt) of them held, all completed, errors reported"
}

# swap_low TABLE: reload the lower device (the fault appears or goes)
swap_low() {
	dmsetup load low --table "$1" && dmsetup suspend low && dmsetup resume low ||
		fail "reloading low with $1"
}

# --- a fault that replaces the lower device's table --------------------------
table_fault() { # name good bad dir field
	stack "$2"
	start "$4"
	rel_wait_held flt $((N - 1)) "${subs##* }"
	swap_low "$3"
	finish_with_eio "$1"
	count_ok "$1" "$5"
	# the fault gone, the same device works again
	swap_low "$2"
	dd if=/dev/zero of="$io" bs=4k count=8 oflag=direct status=none ||
		fail "$1: write after the fault went away"
	unstack
}
table_fault flakey "0 $sz flakey $nb 0 60 0" "0 $sz flakey $nb 0 0 60" write 4
table_fault flakey-read "0 $sz flakey $nb 0 60 0" "0 $sz flakey $nb 0 0 60" read 1
table_fault error "0 $sz linear $nb 0" "0 $sz error" write 4
table_fault error-read "0 $sz linear $nb 0" "0 $sz error" read 1

# --- dm-dust: bad blocks that fail reads ------------------------------------------
if dmsetup targets | grep -qw dust; then
	stack "0 $sz dust $nb 0 4096"
	# a bad block 100 blocks into each reader's region
	for i in $(seq 1 $N); do
		dmsetup message low 0 addbadblock $((i * 1024 + 100)) >/dev/null || fail "addbadblock"
	done
	dmsetup message low 0 enable >/dev/null || fail "dust enable"
	start read
	finish_with_eio dust
	count_ok dust 1
	# each reader stopped exactly at its bad block
	for i in $(seq 1 $N); do
		grep -q "^100+0 records in" "$TESTDIR/dd.$i" ||
			fail "dust: reader $i did not stop at its bad block: $(cat "$TESTDIR/dd.$i")"
	done
	unstack
	dust=done
else
	log "no dust target on this kernel"
	dust=absent
fi

# --- dm-delay: forced removal and wipe_table with bios held ------------------------
# remove --force swaps in an error table while the device is open: held bios
# are released and end with errors, new ones fail at once.
stack "0 $sz delay $nb 0 100"
start write
rel_wait_held flt $((N - 1)) "${subs##* }"
dmsetup remove --force flt >/dev/null 2>&1
finish_with_eio "remove --force"
if dmsetup info flt >/dev/null 2>&1; then
	dmsetup remove flt || fail "remove after the forced removal"
fi
dmsetup remove low || fail "remove low after remove --force"
log "remove --force: every submitter ended with EIO"

stack "0 $sz delay $nb 0 100"
start write
rel_wait_held flt $((N - 1)) "${subs##* }"
dmsetup wipe_table flt >/dev/null || fail "wipe_table with bios held"
finish_with_eio "wipe_table"
assert_eq "$(dmsetup table flt | awk '{print $3}')" error "table after wipe_table"
unstack
log "wipe_table: every submitter ended with EIO"

holds=$(rel_trace_balance)
log "$holds bios held and released once each"
report bios "$bios_total"
report holds "$holds"
report dust "$dust"

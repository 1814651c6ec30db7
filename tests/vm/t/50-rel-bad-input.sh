#!/bin/bash
# Bad input: every malformed table line and message of bad-input.corpus,
# plus generated giants (10,000 and 65,538 groups in one line, 100,000
# character words), is refused with its reason in the kernel log and
# changes nothing: the table, the inactive table and the status stay as
# they were.  A valid 10,000-group line is accepted as a control.
# timeout: 300
# long: debug
. /tests/lib.sh
. /tests/t/rel.inc

nb=$(nullb_create bad0 64)
sz=$(blockdev --getsz "$nb")
orig="bidg 8 64 user weight 256 :100 1000:80 2000:20"
dev=$(dm_create bi "0 $sz ioband $nb $orig")
dd if="$dev" of=/dev/null bs=4k count=3 iflag=direct status=none || fail "read"
set -f	# corpus entries hold '*' and the like: no globbing from here on

state() {
	dmsetup table bi
	echo "inactive: $(dmsetup table --inactive bi)"
	dmsetup status bi
}
before=$(state)
: >"$TESTDIR/bad"
n=0
bad() { echo "$*" >>"$TESTDIR/bad"; }

# check KIND REASON INPUT-FOR-THE-RECORD [full]: after an attempt that had
# to fail.  A refused table load can only have left an inactive table
# behind: that is checked every time, the whole state every tenth time.
check() {
	local kind=$1 reason=$2 what=$3 k
	n=$((n + 1))
	k=$(dmesg -c)
	if [ "$accepted" = 1 ]; then
		bad "$kind accepted: ${what:0:200}"
		return
	fi
	case $k in
	*"$reason"*) ;;
	*) bad "$kind no '$reason' in the kernel log for: ${what:0:200} (got: $(echo "$k" | tail -n 2 | cut -c1-200))" ;;
	esac
	[ -s "$TESTDIR/err" ] || bad "$kind dmsetup printed no error for: ${what:0:200}"
	if [ $((n % 10)) = 0 ] || [ -n "${4:-}" ]; then
		[ "$(state)" = "$before" ] || bad "$kind state changed by: ${what:0:200}: $(state)"
	elif [ -n "$(dmsetup table --inactive bi)" ]; then
		bad "$kind left an inactive table: ${what:0:200}"
	fi
}

try_table() { # reason args (the target's arguments)
	accepted=0
	if printf '0 %s ioband %s\n' "$sz" "$2" | dmsetup load bi 2>"$TESTDIR/err"; then
		accepted=1
		dmsetup clear bi
	fi
	check T "$1" "$2"
}

try_msg() { # reason words...
	local reason=$1
	shift
	accepted=0
	# shellcheck disable=SC2068 # the words of the message, as given
	dmsetup message bi 0 -- $@ 2>"$TESTDIR/err" && accepted=1
	check M "$reason" "$*" full
}

# The corpus goes through dmmsg, tables (--load) and messages each in one
# process (a dmsetup per entry is slow under TCG, ~1.5 s on the debug
# kernel).  Each entry must be refused, and the kernel's lines after its
# "dmmsg: line N" mark must give its reason.
: >"$TESTDIR/T.in"
: >"$TESTDIR/M.in"
: >"$TESTDIR/T.reasons"
: >"$TESTDIR/M.reasons"
while IFS=$'\t' read -r kind reason input; do
	case $kind in
	T)
		# the kernel reads '\' in a table line as an escape: double
		# it, as dmsetup load does
		input=${input//\\/\\\\}
		echo "bi 0 $sz ioband ${input//@DEV@/$nb}" >>"$TESTDIR/T.in"
		;;
	M) echo "bi $input" >>"$TESTDIR/M.in" ;;
	*) continue ;;
	esac
	echo "$reason" >>"$TESTDIR/$kind.reasons"
done </tests/t/bad-input.corpus

batch() { # T|M
	local kind=$1 nr opt=
	[ "$kind" = T ] && opt=--load
	nr=$(wc -l <"$TESTDIR/$kind.in")
	dmesg -c >/dev/null
	DMMSG_MARK=1 dmmsg $opt <"$TESTDIR/$kind.in" >"$TESTDIR/$kind.out" 2>"$TESTDIR/$kind.err"
	assert_eq "$(tail -n1 "$TESTDIR/$kind.out")" "0 sent, $nr refused" "$kind entries refused"
	# one line per entry: the kernel's words after its mark
	dmesg -c | awk '/dmmsg: line [0-9]+$/ { i = $NF; next } i { s[i] = s[i] " " $0 }
		END { for (j = 1; j <= i; j++) print s[j] }' >"$TESTDIR/$kind.log"
	assert_eq "$(wc -l <"$TESTDIR/$kind.log")" "$nr" "$kind entries marked in the kernel log"
	paste -d '\n' "$TESTDIR/$kind.reasons" "$TESTDIR/$kind.log" "$TESTDIR/$kind.in" |
	while IFS= read -r r && IFS= read -r k && IFS= read -r in; do
		case $k in
		*"$r"*) ;;
		*) bad "$kind no '$r' in the kernel log for: ${in:0:200} (got: ${k:0:300})" ;;
		esac
	done
	[ "$(state)" = "$before" ] || bad "$kind state changed by the corpus: $(state)"
	n=$((n + nr))
	log "$nr corpus entries of kind $kind refused"
}
batch T
batch M
corpus=$n

# --- generated giants ---------------------------------------------------------------
groups() { # first count -> "id:weight" words
	awk -v a="$1" -v n="$2" 'BEGIN { for (i = a; i < a + n; i++) printf " %d:%d", i, i % 10000 + 1 }'
}
g10k=$(groups 1 10000)
try_table "duplicate group id" "$nb bidg 0 0 user weight 0 :100$g10k 1:5"
try_table "weight must be" "$nb bidg 0 0 user weight 0 :100$g10k 10001:0"
try_table "only the default group" "$nb bidg 0 0 none weight 0 :100$g10k"
try_table "too many groups" "$nb bidg 0 0 user weight 0 :100$(groups 1 65538)"
# 100,000 nines: no field takes a number that large
long=$(head -c 100000 /dev/zero | tr '\0' 9)
try_table "device group id must be 1 to 31" "$nb ${long//9/d} 0 0 user weight 0"
try_table "token_base must be" "$nb bidg 0 0 user weight $long"
try_table "weight must be" "$nb bidg 0 0 user weight 0 :$long"
try_table "group must be" "$nb bidg 0 0 user weight 0 $long:5"
try_msg "weight must be" weight "1000:$long"
try_msg "unknown message" "${long//9/x}"
try_msg "expected one group id" attach "$long"
try_msg "value missing or out of range" token "$long"
log "$((n - corpus)) generated giants tried"

refused=$((n - $(grep -c accepted "$TESTDIR/bad")))
if [ -s "$TESTDIR/bad" ]; then
	log "$(wc -l <"$TESTDIR/bad") problems:"
	head -n 40 "$TESTDIR/bad"
	fail "$(wc -l <"$TESTDIR/bad") of $n bad inputs not refused cleanly (first: $(head -n1 "$TESTDIR/bad" | cut -c1-300))"
fi

# --- control: a valid 10,000-group line is taken, then the old one again -------------
printf '0 %s ioband %s bidg 8 64 user weight 256 :100%s\n' "$sz" "$nb" "$g10k" | dmsetup load bi ||
	fail "a valid 10,000-group table was refused: $(dmesg | tail -n 2)"
dmsetup suspend bi && dmsetup resume bi || fail "resume with 10,000 groups"
assert_eq "$(dmsetup table bi | wc -w)" $((10000 + 11)) "words of the 10,000-group table"
dd if="$dev" of=/dev/null bs=4k count=3 iflag=direct status=none || fail "read with 10,000 groups"
dmsetup load bi --table "0 $sz ioband $nb $orig" && dmsetup suspend bi && dmsetup resume bi ||
	fail "back to the original table"
assert_eq "$(dmsetup table bi | cut -d' ' -f5-)" "$(echo "$before" | head -n1 | cut -d' ' -f5-)" "table after the control"
log "all $n bad inputs refused with their reason, nothing changed; 10,000 groups accepted"
report inputs "$n"
report refused "$refused"

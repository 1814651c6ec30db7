#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make install and make uninstall of the whole project (the top Makefile)
# into staging roots, checked file by file: the modules in
# /lib/modules/<release>/extra (built for that release; no depmod with
# DESTDIR), the tool, its man page, the systemd unit naming the installed
# tool (and the watcher's unit), the bash completion; modes and contents; with PREFIX=/usr too;
# uninstall leaves nothing.  Ends with "N passed, N failed".
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL test-install: $*"; }
expect_eq() { if [ "$1" = "$2" ]; then ok; else bad "$3: got '$1', want '$2'"; fi; }
finish() { echo "$pass passed, $fail failed"; [ "$fail" = 0 ]; exit; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# install_into DIR [MAKE ARGS]: make install into DIR
install_into() {
	local d=$1
	shift
	if ! make -C "$TOP" install DESTDIR="$d" "$@" >"$tmp/make.log" 2>&1; then
		bad "make install DESTDIR=$d $*: $(tail -n 15 "$tmp/make.log")"
		finish
	fi
	ok
}

files_of() { (cd "$1" && find . \( -type f -o -type l \) -printf '%P %m\n' | LC_ALL=C sort); }

check_root() { # DIR SBINDIR MANDIR UNITDIR COMPLETIONDIR
	local d=$1 sbin=$2 man=$3 unit=$4 comp=$5 kver ko vm
	kver=$(ls "$d/lib/modules" 2>/dev/null)
	[ -n "$kver" ] && [ "$(echo "$kver" | wc -l)" = 1 ] || { bad "$d: no single /lib/modules/<release>: '$kver'"; return; }
	ok
	expect_eq "$(files_of "$d")" "$(LC_ALL=C sort <<EOF2
${comp#/}/ioband-setup 644
${man#/}/man8/ioband-setup.8 644
${sbin#/}/ioband-setup 755
${unit#/}/ioband-setup-watch.service 644
${unit#/}/ioband-setup.service 644
lib/modules/$kver/extra/dm-ioband-policy.ko 644
lib/modules/$kver/extra/dm-ioband.ko 644
EOF2
)" "the files installed in $d, and their modes"
	for ko in dm-ioband dm-ioband-policy; do
		cmp -s "$TOP/drivers/md/$ko.ko" "$d/lib/modules/$kver/extra/$ko.ko" && ok ||
			bad "$ko.ko differs from drivers/md/$ko.ko"
		vm=$(/sbin/modinfo -F vermagic "$d/lib/modules/$kver/extra/$ko.ko" 2>/dev/null | cut -d' ' -f1)
		expect_eq "$vm" "$kver" "$ko.ko built for the release it is installed for"
	done
	expect_eq "$(/sbin/modinfo -F depends "$d/lib/modules/$kver/extra/dm-ioband.ko" | tr ',' '\n' |
		grep -x dm-ioband-policy)" "dm-ioband-policy" \
		"dm-ioband.ko needs dm-ioband-policy (which modprobe loads first after depmod)"
	[ ! -e "$d/lib/modules/$kver/modules.dep" ] && ok || bad "depmod ran although DESTDIR was set"
	cmp -s "$HERE/ioband-setup" "$d$sbin/ioband-setup" && ok || bad "the installed tool differs"
	expect_eq "$("$d$sbin/ioband-setup" --version)" "ioband-setup 1.0" "the installed tool runs"
	cmp -s "$HERE/ioband-setup.8" "$d$man/man8/ioband-setup.8" && ok || bad "the man page differs"
	if command -v groff >/dev/null; then
		expect_eq "$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$d$man/man8/ioband-setup.8" 2>&1)" "" \
			"groff warnings in the man page"
	fi
	cmp -s "$HERE/ioband-setup.bash-completion" "$d$comp/ioband-setup" && ok ||
		bad "the completion differs"
	expect_eq "$(bash -c ". '$d$comp/ioband-setup' && complete -p ioband-setup")" \
		"complete -F _ioband_setup ioband-setup" "the completion loads"
	expect_eq "$(grep '^ExecStart=' "$d$unit/ioband-setup.service")" \
		"ExecStart=$sbin/ioband-setup apply --wait 30 /etc/iobandtab" "the unit's ExecStart"
	expect_eq "$(grep '^ExecStart=' "$d$unit/ioband-setup-watch.service")" \
		"ExecStart=$sbin/ioband-setup watch" "the watch unit's ExecStart"
	for u in ioband-setup ioband-setup-watch; do
		expect_eq "$(grep -c '@' "$d$unit/$u.service")" 0 "placeholders left in $u.service"
		if command -v systemd-analyze >/dev/null; then
			# the unit names the tool where it runs, not in the staging root
			sed "s|$sbin/ioband-setup|$d$sbin/ioband-setup|" "$d$unit/$u.service" \
				>"$tmp/$u.service"
			systemd-analyze verify --man=no "$tmp/$u.service" >"$tmp/verify.log" 2>&1 &&
				ok || bad "systemd-analyze verify $u.service: $(cat "$tmp/verify.log")"
		fi
	done
}

# ---- the default PREFIX (/usr/local) ---------------------------------------------------
install_into "$tmp/root"
check_root "$tmp/root" /usr/local/sbin /usr/local/share/man /etc/systemd/system \
	/usr/local/share/bash-completion/completions
# installing again over it changes nothing
files_of "$tmp/root" >"$tmp/before"
install_into "$tmp/root"
expect_eq "$(files_of "$tmp/root")" "$(cat "$tmp/before")" "a second install"
if make -C "$TOP" uninstall DESTDIR="$tmp/root" >"$tmp/make.log" 2>&1; then ok; else
	bad "make uninstall: $(tail -n 15 "$tmp/make.log")"
fi
expect_eq "$(files_of "$tmp/root")" "" "files left after uninstall"

# ---- PREFIX=/usr --------------------------------------------------------------------------
install_into "$tmp/usr" PREFIX=/usr
check_root "$tmp/usr" /usr/sbin /usr/share/man /usr/lib/systemd/system \
	/usr/share/bash-completion/completions
make -C "$TOP" uninstall DESTDIR="$tmp/usr" PREFIX=/usr >/dev/null 2>&1
expect_eq "$(files_of "$tmp/usr")" "" "files left after uninstall with PREFIX=/usr"
finish

# SPDX-License-Identifier: GPL-2.0
# bench/report section: many CPUs (bench/vm/80-smp.sh, issue 16).  Sourced
# by bench/report (sections 8) with its helpers in scope.

# smp_med CTL N: the median IOPS of CTL with N submitters over the rounds
smp_med() {
	local k v=()
	for k in $(seq 1 20); do
		has "smp.$1.$2.$k.iops" && v+=("$(get "smp.$1.$2.$k.iops")")
	done
	[ ${#v[@]} -gt 0 ] && median "${v[@]}"
}
# smp_per LOCKKEY: per bio, three decimals
smp_per() { calc "\"%.3f\", $(get "$1") / $(get "${1%.*}.bios")"; }
# smp_goal LOCKKEY: whether the lock was taken at most once per 32 bios
smp_goal() {
	[ $(($(get "$1") * 32)) -le "$(get "${1%.*}.bios")" ] && echo met ||
		echo '**missed**'
}

if has smp.settings || has smp.lock.settings; then
	cat <<EOT

## Many CPUs (issue 16)$(has time.80-smp && printf ' (%s s)' "$(get time.80-smp)")

\`bench/vm/80-smp.sh\`: a 4-vCPU guest (TCG on the host's $(get meta.host_cpus) cores),
1, 2 and 4 submitters, each a fio job (libaio, 4 KiB random direct reads,
iodepth 16) pinned to a vCPU of its own and in a cgroup of its own, on a
null_blk with a submission queue per CPU and no completion delay.  ioband
*none*: one group for all, under weight; ioband *cgroup*: a group per
submitter, under weight and under weight-time.
Each cell is the median of the rounds, targets in turns with fresh jobs.
With 4 vCPUs on $(get meta.host_cpus) host cores the guest's CPUs are what
is shared, so these ratios show what ioband costs on the submitting CPUs,
not how a lock scales on real hardware; the lock figures below show that.
Settings: $(settings smp.settings).

| submitters | dm-linear IOPS | ioband none | ioband cgroup, weight | ioband cgroup, weight-time |
|---|---|---|---|---|
EOT
	for n in 1 2 4; do
		l=$(smp_med linear $n) a=$(smp_med none $n) c=$(smp_med cgroup $n)
		t=$(smp_med time $n)
		[ -n "$l" ] || continue
		printf '| %s | %s | %s (%s %%) | %s (%s %%) | %s (%s %%) |\n' "$n" "$l" \
			"${a:-?}" "$( [ -n "$a" ] && pct "$a" "$l")" \
			"${c:-?}" "$( [ -n "$c" ] && pct "$c" "$l")" \
			"${t:-?}" "$( [ -n "$t" ] && pct "$t" "$l")"
	done
	if has smp.lock.none.1.bios; then
		cat <<EOT

The device group's lock on the debug kernel (4 vCPUs, CONFIG_LOCK_STAT),
over one window at steady state: \`/proc/lock_stat\`'s acquisitions of the
class \`&dg->lock\` per bio the dm device completed, its *acq-bounces*
(taken on another CPU than the one that held it last: a cache line that
moved) and its contentions per bio.  Goal of issue 16: at most one
acquisition per 32 bios (0.031) on the fast path, that is while no bio
is held; *held* counts the bios ioband held in the window (the groups'
delayed reads), and a row with any is arbitration, not the fast path.
*time* is type cgroup under weight-time.
Settings: $(settings smp.lock.settings).

| type | submitters | bios | held | acquisitions per bio | bounces per bio | contentions per bio |
|---|---|---|---|---|---|---|
EOT
		for ctl in none cgroup time; do
			for n in 1 2 4; do
				k=smp.lock.$ctl.$n
				has "$k.bios" || continue
				if [ "$(get "$k.held")" = 0 ]; then
					v="goal <= 1/32: $(smp_goal "$k.acq")"
				else
					v="bios held: not the fast path"
				fi
				printf '| %s | %s | %s | %s | %s (%s) | %s | %s |\n' "$ctl" "$n" \
					"$(get "$k.bios")" "$(get "$k.held")" \
					"$(smp_per "$k.acq")" "$v" \
					"$(smp_per "$k.bounces")" "$(smp_per "$k.contentions")"
			done
		done
	fi
fi

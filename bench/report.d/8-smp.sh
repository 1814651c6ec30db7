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
# smp_per LOCKKEY: per bio, two decimals
smp_per() { calc "\"%.2f\", $(get "$1") / $(get "${1%.*}.bios")"; }

if has smp.settings; then
	cat <<EOT

## Many CPUs (issue 16)$(has time.80-smp && printf ' (%s s)' "$(get time.80-smp)")

\`bench/vm/80-smp.sh\`: a 4-vCPU guest (TCG on the host's $(get meta.host_cpus) cores),
1, 2 and 4 submitters, each a fio job (libaio, 4 KiB random direct reads,
iodepth 16) pinned to a vCPU of its own and in a cgroup of its own, on a
null_blk with a submission queue per CPU and no completion delay.  ioband
*none*: one group for all; ioband *cgroup*: weight, a group per submitter.
Each cell is the median of the rounds, targets in turns with fresh jobs.
With 4 vCPUs on $(get meta.host_cpus) host cores the guest's CPUs are what
is shared, so these ratios show what ioband costs on the submitting CPUs,
not how a lock scales on real hardware; the lock figures below show that.
Settings: $(settings smp.settings).

| submitters | dm-linear IOPS | ioband none | ioband cgroup |
|---|---|---|---|
EOT
	for n in 1 2 4; do
		l=$(smp_med linear $n) a=$(smp_med none $n) c=$(smp_med cgroup $n)
		[ -n "$l" ] || continue
		printf '| %s | %s | %s (%s %%) | %s (%s %%) |\n' "$n" "$l" \
			"${a:-?}" "$( [ -n "$a" ] && pct "$a" "$l")" \
			"${c:-?}" "$( [ -n "$c" ] && pct "$c" "$l")"
	done
	if has smp.lock.none.1.bios; then
		cat <<EOT

The device group's lock on the debug kernel (4 vCPUs, CONFIG_LOCK_STAT),
over one window at steady state: \`/proc/lock_stat\`'s acquisitions of the
class \`&dg->lock\` per bio the dm device completed, its *acq-bounces*
(taken on another CPU than the one that held it last: a cache line that
moved) and its contentions per bio.  Goal of issue 16: at most one
acquisition per 32 bios (0.03) on the fast path.

| type | submitters | bios | acquisitions per bio | bounces per bio | contentions per bio |
|---|---|---|---|---|---|
EOT
		for ctl in none cgroup; do
			for n in 1 2 4; do
				k=smp.lock.$ctl.$n
				has "$k.bios" || continue
				printf '| %s | %s | %s | %s (goal <= 0.03: %s) | %s | %s |\n' "$ctl" "$n" \
					"$(get "$k.bios")" "$(smp_per "$k.acq")" \
					"$(yes_no "$(smp_per "$k.acq")" '<=' 0.03)" \
					"$(smp_per "$k.bounces")" "$(smp_per "$k.contentions")"
			done
		done
	fi
fi

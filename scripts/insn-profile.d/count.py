#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""scripts/insn-profile's counting.

count.py CORE_SYMS SECTION_LOG QEMU_LOG
    Every function's instructions, most first: "insns function [module]".  QEMU_LOG holds in_asm blocks ("IN:" then one line per
    instruction, "0xADDR: ...") and exec lines ("Trace N: HOST
    [CS_BASE/PC/FLAGS/CFLAGS] ..."); a block counts the instructions of
    its latest translation each time it runs.  SECTION_LOG gives the
    modules' symbols ("KSYM addr name [module]") and the reads done
    ("PROF_IOS n"); CORE_SYMS the core functions ("KCORE name start
    end").
count.py --diff SHORT LONG N
    Instructions per I/O of each function: LONG's count less SHORT's,
    over the N I/Os more that LONG's run did.
count.py --table TARGET... -- DIR
    The TARGETs' DIR/TARGET.txt side by side.
"""
import bisect
import re
import sys

TRACE = re.compile(r'^Trace \d+: \S+ \[[0-9a-f]+/([0-9a-f]+)/')
INSN = re.compile(r'^0x([0-9a-f]+):')


def symbols(core, section):
    syms = []
    with open(core) as f:
        for line in f:
            _, n, a, e = line.split()
            syms.append((int(a, 16), n, 'vmlinux'))
    ios = None
    with open(section, errors='replace') as f:
        for line in f:
            m = re.search(r'KSYM ([0-9a-f]+) (\S+) \[(\S+)\]', line)
            if m:
                syms.append((int(m.group(1), 16), m.group(2), m.group(3)))
            m = re.search(r'PROF_IOS ([0-9.]+)', line)
            if m:
                ios = float(m.group(1))
    if not ios:
        sys.exit('insn-profile: no PROF_IOS in ' + section)
    syms.sort()
    return syms, ios


def count(qemu_log):
    size = {}		# pc -> instructions of its latest translation
    total = {}		# pc -> instructions run from blocks starting there
    pc = None
    with open(qemu_log, errors='replace') as f:
        for line in f:
            if line.startswith('Trace '):
                m = TRACE.match(line)
                if m:
                    p = int(m.group(1), 16)
                    total[p] = total.get(p, 0) + size.get(p, 0)
                pc = None
            elif line.startswith('IN:'):
                pc = -1
            elif pc is not None:
                m = INSN.match(line)
                if m:
                    if pc == -1:
                        pc = int(m.group(1), 16)
                        size[pc] = 0
                    size[pc] += 1
    return total


def main():
    if sys.argv[1] == '--diff':
        n = {}
        for sign, path in ((-1, sys.argv[2]), (1, sys.argv[3])):
            with open(path) as f:
                for line in f:
                    v, name = line.split(None, 1)
                    name = name.strip()
                    n[name] = n.get(name, 0) + sign * float(v)
        ios = float(sys.argv[4])
        for name, v in sorted(n.items(), key=lambda kv: -kv[1]):
            print(f'{v / ios:.2f} {name}')
        return
    if sys.argv[1] == '--table':
        sep = sys.argv.index('--')
        targets, d = sys.argv[2:sep], sys.argv[sep + 1]
        per = {}
        for t in targets:
            with open(f'{d}/{t}.txt') as f:
                for line in f:
                    v, name = line.split(None, 1)
                    per.setdefault(name.strip(), {})[t] = float(v)
        rows = sorted(per.items(), key=lambda kv: -max(kv[1].values()))
        print('| function | ' + ' | '.join(targets) + ' |')
        print('|---|' + '---|' * len(targets))
        sums = {t: 0.0 for t in targets}
        for name, vals in rows:
            if max(vals.values()) < 0.5:
                continue
            for t in targets:
                sums[t] += vals.get(t, 0)
            print(f'| {name} | ' + ' | '.join(
                f'{vals.get(t, 0):.1f}' for t in targets) + ' |')
        print('| **counted** | ' + ' | '.join(
            f'{sums[t]:.1f}' for t in targets) + ' |')
        return
    syms, _ = symbols(sys.argv[1], sys.argv[2])
    addrs = [s[0] for s in syms]
    by = {}
    for pc, n in count(sys.argv[3]).items():
        i = bisect.bisect_right(addrs, pc) - 1
        key = f'{syms[i][1]} [{syms[i][2]}]' if i >= 0 else hex(pc)
        by[key] = by.get(key, 0) + n
    for key, n in sorted(by.items(), key=lambda kv: -kv[1]):
        print(f'{n} {key}')


main()

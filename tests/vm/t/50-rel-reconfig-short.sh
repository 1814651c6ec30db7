#!/bin/bash
# 50-rel-reconfig (a long test) with 20 cycles instead of 100, the same
# checks: 40 suspends (20 in reloads) and 48 detaches, 95 % with bios
# held, for make check.  VM_APPEND=REL_CYCLES=N sets the cycles of both.
# timeout: 600
# long: debug
# smp: 4
REL_CYCLES=${REL_CYCLES:-20}
. /tests/t/50-rel-reconfig.sh

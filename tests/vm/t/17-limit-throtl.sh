#!/bin/bash
# Limits of each io.max kind, alone, together, over split bios, changed
# while bios wait, across a suspend and a removal: blktests' throtl/001,
# 003, 005 and 007 as limit-throtl.inc has them, with N = 64 bios a second.
# Under -icount guest time follows instructions and a busy host cannot
# stall the guest, so every bound is judged whatever CI's host does.
# icount: yes
# kernel: production
# smp: 1
# timeout: 400
. /tests/lib.sh
. /tests/t/stack.inc
N=64
. /tests/t/limit-throtl.inc

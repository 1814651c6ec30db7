#!/bin/bash
# limit-throtl.inc on the debug kernel (lockdep, KASAN, UBSAN watching
# the limits' paths), with N = 32 bios a second: its guest takes about as
# long for 256 bios as the limit would.  Without -icount a busy host slows
# the guest by any amount, so only what holds whatever it does is judged:
# the lower bounds, no bio held by a limit of the other direction, a
# suspend that does not wait for the limits, nothing lost.  The upper
# bounds are 17-limit-throtl's (production, under -icount).
# kernel: debug
# timeout: 650
. /tests/lib.sh
. /tests/t/stack.inc
N=32
UPPER=no
. /tests/t/limit-throtl.inc

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make deb: the Debian packages of debian/ (dm-ioband-dkms, ioband-setup),
# built with dpkg-buildpackage -b from a copy of the working tree's files
# (tracked and untracked, not ignored), so that the tree itself is left
# as it is.  The packages land in build/deb/, the build's log beside them.
set -euo pipefail

TOP=${TOP:-$(cd "$(dirname "$0")/.." && pwd)}
BUILD=${BUILD:-$TOP/build}
OUT=$BUILD/deb
SRC=$OUT/dm-ioband

rm -rf "$OUT"
mkdir -p "$SRC"
(cd "$TOP" && git ls-files -z --cached --others --exclude-standard |
	rsync -a --from0 --files-from=- . "$SRC/")
if ! (cd "$SRC" && dpkg-buildpackage -b -uc -us) >"$OUT/build.log" 2>&1; then
	echo "mk-deb: dpkg-buildpackage failed; the end of $OUT/build.log:" >&2
	tail -n 30 "$OUT/build.log" >&2
	exit 1
fi
rm -rf "$SRC"
for d in "$OUT"/*.deb; do
	echo "mk-deb: $d"
done

#!/usr/bin/env bash
# Verify the embedded charting library is the one package-lock.json pins:
# its sha256 as update-vendor.sh recorded it, its version as the lockfile
# names it, and no sequence that would end the <script> element it is
# embedded in.  No network, no node.  Exit 0 when all hold.
set -euo pipefail
cd "$(dirname "$0")"
fail() { echo "check-vendor.sh: $*" >&2; exit 1; }

(cd vendor && sha256sum --quiet --strict -c SHA256SUMS) ||
    fail "vendor/echarts.min.js does not match vendor/SHA256SUMS; fix: run report/web/update-vendor.sh"

want=$(cat vendor/ECHARTS_VERSION)
locked=$(python3 -c 'import json,sys; print(json.load(open("package-lock.json"))["packages"]["node_modules/echarts"]["version"])')
[ "$want" = "$locked" ] ||
    fail "vendor/ECHARTS_VERSION is $want but package-lock.json pins $locked; fix: run report/web/update-vendor.sh"
grep -q "version=\"$locked\"" vendor/echarts.min.js ||
    fail "vendor/echarts.min.js does not declare version $locked; fix: run report/web/update-vendor.sh"
for f in vendor/LICENSE-echarts vendor/NOTICE-echarts vendor/LICENSE-d3 vendor/LICENSE-zrender vendor/LICENSE-tslib; do
    [ -s "$f" ] || fail "$f missing; fix: run report/web/update-vendor.sh"
done

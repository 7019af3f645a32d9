#!/usr/bin/env bash
# Re-fetch the charting library embedded in report.html and rewrite
# vendor/ (the file, its licences, SHA256SUMS).  Only a maintainer runs
# this, with node and npm and network; building iowrap needs neither.
#
#   report/web/update-vendor.sh            re-fetch the version package-lock.json pins
#   report/web/update-vendor.sh 5.6.1      move the pin to echarts 5.6.1 first
#
# npm ci checks the tarball against package-lock.json's "integrity"
# (sha512); the copied file's sha256 goes into vendor/SHA256SUMS, which
# report/web/check-vendor.sh (run by tests/test_report_html.py) verifies.
set -euo pipefail
cd "$(dirname "$0")"
command -v npm >/dev/null || { echo "update-vendor.sh: npm not found; fix: apt-get install npm (or use nodejs.org's build)" >&2; exit 1; }

if [ $# -ge 1 ]; then
    npm install --save-exact --ignore-scripts --no-audit --no-fund "echarts@$1"
fi
npm ci --ignore-scripts --no-audit --no-fund

version=$(node -p 'require("./node_modules/echarts/package.json").version')
cp node_modules/echarts/dist/echarts.min.js vendor/echarts.min.js
cp node_modules/echarts/LICENSE vendor/LICENSE-echarts
cp node_modules/echarts/NOTICE vendor/NOTICE-echarts
cp node_modules/echarts/licenses/LICENSE-d3 vendor/LICENSE-d3
cp node_modules/zrender/LICENSE vendor/LICENSE-zrender
cp node_modules/tslib/LICENSE.txt vendor/LICENSE-tslib
(cd vendor && sha256sum echarts.min.js >SHA256SUMS)
echo "$version" >vendor/ECHARTS_VERSION
rm -rf node_modules
./check-vendor.sh
echo "update-vendor.sh: vendor/ now holds echarts $version; rebuild with make and commit report/web/"

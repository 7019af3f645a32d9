#!/usr/bin/env bash
# Install the Debian 12 (bookworm) packages iowrap needs to build and test.
# Idempotent: does nothing (and touches no network) when all are installed.
# Works as root, or via `sudo -n` when not root.
set -euo pipefail

# Add packages here (one space-separated list). libc6-dev and linux-libc-dev are
# listed explicitly because installs use --no-install-recommends (gcc only
# recommends libc6-dev; ci/build-deps.sh needs the kernel headers).
PACKAGES="musl-tools musl-dev gcc gcc-multilib libc6-dev linux-libc-dev make dpkg-dev meson ninja-build pkg-config gperf file python3 python3-pytest strace bubblewrap busybox-static clang-format cppcheck util-linux procps slurm-wlm munge snakemake chromium fio xfsprogs git sqlite3 xz-utils zstd lz4 zip unzip bzip2 perl rsync patch nodejs openjdk-17-jdk-headless gpg gpg-agent"

die() { echo "install-packages.sh: $*" >&2; exit 1; }

command -v dpkg-query >/dev/null 2>&1 || die "dpkg-query not found; this script needs Debian 12 (bookworm) with dpkg/apt"

missing=()
for pkg in $PACKAGES; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
    [ "$status" = "installed" ] || missing+=("$pkg")
done

if [ "${#missing[@]}" -eq 0 ]; then
    echo "install-packages.sh: all required packages already installed"
    exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
    SUDO=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO=(sudo -n env DEBIAN_FRONTEND=noninteractive)  # sudo drops the environment
else
    die "missing packages: ${missing[*]}; not root and 'sudo -n' unavailable, fix: run 'sudo apt-get install ${missing[*]}' or rerun this script as root"
fi

echo "install-packages.sh: installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp "${TMPDIR:-/tmp}/iowrap-apt.XXXXXX.log")
if ! "${SUDO[@]}" apt-get update -q >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    die "apt-get update failed (log: $log); fix: check network access to the Debian mirror and /etc/apt/sources.list*"
fi
if ! "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >>"$log" 2>&1; then
    tail -n 30 "$log" >&2
    die "apt-get install failed for: ${missing[*]} (log: $log); fix: see the log above, then rerun"
fi

# Verify.
still=()
for pkg in "${missing[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
    [ "$status" = "installed" ] || still+=("$pkg")
done
[ "${#still[@]}" -eq 0 ] || die "still not installed after apt-get install: ${still[*]} (log: $log)"
rm -f "$log"
echo "install-packages.sh: installed: ${missing[*]}"

#!/usr/bin/env bash
# Build libseccomp, libfuse3 and cJSON as static musl libraries from Debian
# bookworm's own source packages, into build/deps (relative to the repository
# root):
#
#   build/deps/lib/libseccomp.a  build/deps/include/seccomp.h
#   build/deps/lib/libfuse3.a    build/deps/include/fuse3/*.h
#   build/deps/lib/libcjson.a    build/deps/include/cjson/cJSON.h
#   build/kheaders/              kernel headers for `musl-gcc -idirafter`
#
# Sources come from `apt-get source` run with a private apt configuration under
# build/apt (own sources.list, lists, cache); the system's apt setup is only
# read, never changed, and no system deb-src line is needed. Works as root or
# unprivileged. Built once: when the libraries and build/deps/.built exist this
# exits at once. Force a rebuild with `rm -rf build/deps`.
#
# Noisy output goes to build/logs/*.log; on failure the log's tail is printed.
# Env overrides: IOWRAP_DEBIAN_MIRROR (e.g. http://deb.debian.org/debian).
set -euo pipefail

SUITE=bookworm
SECCOMP_SRC=libseccomp
SECCOMP_VERSION=2.5.4-1+deb12u1
FUSE_SRC=fuse3
FUSE_VERSION=3.14.0-4
CJSON_SRC=cjson
CJSON_VERSION=1.7.15-1+deb12u4
# Bump when the build recipe changes, to invalidate existing build/deps.
RECIPE=2

ME=build-deps.sh
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$ROOT/build
DEPS=$BUILD/deps
SRC=$BUILD/src
DL=$SRC   # .dsc/tarballs sit beside the unpacked trees (Debian layout)
APTDIR=$BUILD/apt
LOGS=$BUILD/logs
KHEADERS=$BUILD/kheaders
STAMP=$DEPS/.built   # the Makefile depends on this name (DEPS_STAMP)
STAGE=$BUILD/deps.stage

say() { echo "$ME: $*"; }
die() { echo "$ME: error: $*" >&2; exit 1; }

# Print the tail of a log and die.
# $HINT, when set, is the suggested fix printed with the error.
fail_log() { # STEP LOGFILE
    echo "$ME: error: $1 failed (log: ${2#"$ROOT"/}, last 30 lines below); fix: ${HINT:-see the log}" >&2
    tail -n 30 "$2" >&2 || true
    exit 1
}

# Run a command with output appended to a log; on failure show the log and die.
run_logged() { # STEP LOGFILE CMD...
    local step=$1 log=$2
    shift 2
    echo "+ $*" >>"$log"
    "$@" >>"$log" 2>&1 || fail_log "$step" "$log"
}

# Like run_logged, but retry once (network fetches).
run_retry() { # STEP LOGFILE CMD...
    local step=$1 log=$2
    shift 2
    echo "+ $*" >>"$log"
    if ! "$@" >>"$log" 2>&1; then
        echo "$ME: $step failed, retrying once in 5s (log: ${log#"$ROOT"/})" >&2
        echo "--- retry ---" >>"$log"
        sleep 5
        "$@" >>"$log" 2>&1 || fail_log "$step" "$log"
    fi
}

stamp_ok() {
    [ -f "$DEPS/lib/libseccomp.a" ] && [ -f "$DEPS/lib/libfuse3.a" ] &&
        [ -f "$DEPS/include/seccomp.h" ] && [ -f "$DEPS/include/fuse3/fuse.h" ] &&
    [ -f "$DEPS/lib/libcjson.a" ] && [ -f "$DEPS/include/cjson/cJSON.h" ] &&
        [ -f "$STAMP" ] && grep -qx "recipe=$RECIPE" "$STAMP"
}

# --- kernel headers for musl-gcc (cheap; always refreshed) -------------------
make_kheaders() {
    local ma=""
    ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch 2>/dev/null || true)
    [ -f /usr/include/linux/seccomp.h ] ||
        die "kernel headers missing (/usr/include/linux/seccomp.h); fix: apt-get install linux-libc-dev (or run ci/install-packages.sh)"
    local asm=""
    if [ -n "$ma" ] && [ -d "/usr/include/$ma/asm" ]; then
        asm=/usr/include/$ma/asm
    elif [ -d /usr/include/asm ]; then
        asm=/usr/include/asm
    else
        die "no asm kernel headers found (/usr/include/${ma:-<multiarch>}/asm); fix: apt-get install linux-libc-dev"
    fi
    mkdir -p "$KHEADERS"
    ln -sfn /usr/include/linux "$KHEADERS/linux"
    ln -sfn "$asm" "$KHEADERS/asm"
    ln -sfn /usr/include/asm-generic "$KHEADERS/asm-generic"
    if [ -d /usr/include/mtd ]; then ln -sfn /usr/include/mtd "$KHEADERS/mtd"; fi
}

up_to_date_msg() {
    say "up to date ($(grep -E '^(libseccomp|fuse3|cjson)=' "$STAMP" | paste -sd' ')); rm -rf build/deps to rebuild"
}

# Fast path: nothing to write.
if stamp_ok && [ -e "$KHEADERS/linux/seccomp.h" ] && [ -d "$KHEADERS/asm/" ]; then
    up_to_date_msg
    exit 0
fi

if [ -e "$BUILD" ]; then
    if [ ! -w "$BUILD" ] || [ ! -x "$BUILD" ]; then
        die "$BUILD is not writable by $(id -un); fix: chown -R $(id -un) $BUILD (or remove it) and rerun"
    fi
elif [ ! -w "$ROOT" ]; then
    die "cannot create $BUILD ($ROOT not writable by $(id -un)); fix: run from a writable checkout"
fi
mkdir -p "$BUILD"

make_kheaders

if stamp_ok; then
    up_to_date_msg
    exit 0
fi

# --- preflight ---------------------------------------------------------------
for tool in apt-get apt-cache dpkg-source dpkg musl-gcc gcc make meson ninja gperf ar; do
    command -v "$tool" >/dev/null 2>&1 ||
        die "'$tool' not found; fix: run 'bash ci/install-packages.sh' (as root or with sudo)"
done

mkdir -p "$BUILD" "$LOGS"

# Serialise concurrent runs (e.g. parallel make); re-check after the wait.
if command -v flock >/dev/null 2>&1; then
    exec 9>"$BUILD/.build-deps.lock"
    flock 9
    if stamp_ok; then say "up to date (built by a concurrent run)"; exit 0; fi
fi

START=$(date +%s)

# Keep the environment from leaking host (glibc) flags into musl builds.
unset CFLAGS CPPFLAGS CXXFLAGS LDFLAGS LIBS MAKEFLAGS MFLAGS MAKELEVEL PKG_CONFIG_PATH
export LC_ALL=C
export PKG_CONFIG_LIBDIR=$DEPS/lib/pkgconfig
JOBS=$(nproc 2>/dev/null || echo 2)

# --- private apt configuration -----------------------------------------------
# Find the Debian archive URI (and keyring) the system uses for $SUITE.
detect_mirror() {
    local f
    {
        for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
            [ -f "$f" ] || continue
            # deb [opts] URI SUITE COMPONENTS...
            awk -v suite="$SUITE" '
                /^[ \t]*deb(-src)?[ \t]/ {
                    sub(/#.*/, "")
                    line = $0; kr = ""
                    if (match(line, /\[[^]]*\]/)) {
                        opts = substr(line, RSTART + 1, RLENGTH - 2)
                        line = substr(line, 1, RSTART - 1) substr(line, RSTART + RLENGTH)
                        n = split(opts, o, /[ \t]+/)
                        for (i = 1; i <= n; i++) if (o[i] ~ /^signed-by=/) { kr = o[i]; sub(/^signed-by=/, "", kr) }
                    }
                    split(line, w, /[ \t]+/)
                    # w[1] may be empty when the line starts with blanks
                    j = (w[1] == "") ? 2 : 1
                    if (w[j + 2] == suite) print w[j + 1], kr
                }' "$f"
        done
        for f in /etc/apt/sources.list.d/*.sources; do
            [ -f "$f" ] || continue
            # deb822 stanzas separated by blank lines
            awk -v suite="$SUITE" '
                function flush() {
                    if (uris != "" && enabled != "no" && (" " suites " ") ~ (" " suite " ") && types ~ /deb/) {
                        split(uris, u, /[ \t]+/); print u[1], kr
                    }
                    types = uris = suites = kr = ""; enabled = "yes"
                }
                BEGIN { enabled = "yes" }
                /^[ \t]*#/ { next }
                /^[ \t]*$/ { flush(); next }
                tolower($1) == "types:"     { $1 = ""; types = $0 }
                tolower($1) == "uris:"      { $1 = ""; sub(/^[ \t]+/, ""); uris = $0 }
                tolower($1) == "suites:"    { $1 = ""; sub(/^[ \t]+/, ""); suites = $0 }
                tolower($1) == "enabled:"   { enabled = tolower($2) }
                tolower($1) == "signed-by:" { if ($2 ~ /^\//) kr = $2 }
                END { flush() }' "$f"
        done
    } | awk '$1 ~ /^[a-z+]+:/ && $1 !~ /^cdrom:/' | head -n 1
}

MIRROR_LINE=$(detect_mirror || true)
MIRROR=${IOWRAP_DEBIAN_MIRROR:-}
KEYRING=""
if [ -z "$MIRROR" ] && [ -n "$MIRROR_LINE" ]; then
    MIRROR=${MIRROR_LINE%% *}
    KEYRING=${MIRROR_LINE#"$MIRROR"}
    KEYRING=${KEYRING# }
fi
MIRROR=${MIRROR:-http://deb.debian.org/debian}
MIRROR=${MIRROR%/}
if [ -z "$KEYRING" ] || [ ! -f "$KEYRING" ]; then
    KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
fi
[ -f "$KEYRING" ] ||
    die "Debian archive keyring $KEYRING not found; fix: apt-get install debian-archive-keyring"

mkdir -p "$APTDIR/etc/sources.list.d" "$APTDIR/etc/preferences.d" \
    "$APTDIR/state/lists/partial" "$APTDIR/cache/archives/partial"
echo "deb-src [signed-by=$KEYRING] $MIRROR $SUITE main" >"$APTDIR/etc/sources.list"
: >"$APTDIR/state/status"
APTCONF=$APTDIR/apt.conf
# Read after the system's apt.conf(.d) (so proxies etc. still apply); points
# every writable/source location at build/apt and drops the system's hooks.
cat >"$APTCONF" <<EOF
Dir::Etc::SourceList "$APTDIR/etc/sources.list";
Dir::Etc::SourceParts "$APTDIR/etc/sources.list.d";
Dir::Etc::Preferences "$APTDIR/etc/preferences";
Dir::Etc::PreferencesParts "$APTDIR/etc/preferences.d";
Dir::State "$APTDIR/state";
Dir::State::Lists "$APTDIR/state/lists";
Dir::State::status "$APTDIR/state/status";
Dir::Cache "$APTDIR/cache";
Dir::Cache::archives "$APTDIR/cache/archives";
APT::Sandbox::User "root";
Acquire::Languages "none";
#clear APT::Update::Pre-Invoke;
#clear APT::Update::Post-Invoke;
#clear APT::Update::Post-Invoke-Success;
#clear DPkg::Pre-Invoke;
#clear DPkg::Post-Invoke;
EOF
APT_GET=(apt-get -c "$APTCONF" -q -y)
APT_CACHE=(apt-cache -c "$APTCONF")

APTLOG=$LOGS/apt.log
: >"$APTLOG"
HINT="check network/proxy access to $MIRROR (apt.conf proxy settings apply), or set IOWRAP_DEBIAN_MIRROR to a reachable Debian mirror"
say "fetching $SUITE source index from $MIRROR (private apt config: build/apt)"
run_retry "apt-get update (private config, $MIRROR $SUITE)" "$APTLOG" "${APT_GET[@]}" --error-on=any update

# Print the version to use: the pinned one if served, else the newest served.
pick_version() { # SRCPKG WANTED
    local pkg=$1 want=$2 versions best="" v
    versions=$("${APT_CACHE[@]}" showsrc "$pkg" 2>>"$APTLOG" |
        awk -v p="$pkg" '/^Package:/ { ok = ($2 == p) } ok && /^Version:/ { print $2 }' || true)
    [ -n "$versions" ] ||
        die "source package '$pkg' not found in $MIRROR $SUITE main (log: ${APTLOG#"$ROOT"/}); fix: check IOWRAP_DEBIAN_MIRROR / network"
    if grep -qxF -- "$want" <<<"$versions"; then
        echo "$want"
        return
    fi
    for v in $versions; do
        if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; then best=$v; fi
    done
    echo "$ME: NOTE: $pkg $want is not served by $SUITE; using $best instead" >&2
    echo "$best"
}

# Download (retry once) and unpack a source package; prints the unpacked dir.
fetch_source() { # SRCPKG VERSION
    local pkg=$1 ver=$2 dsc dir
    mkdir -p "$DL"
    (cd "$DL" && run_retry "apt-get source $pkg=$ver" "$APTLOG" \
        "${APT_GET[@]}" source --download-only "$pkg=$ver") || exit 1
    dsc=$DL/${pkg}_${ver#*:}.dsc
    [ -f "$dsc" ] || die "apt-get source did not produce $dsc (log: ${APTLOG#"$ROOT"/})"
    dir=$SRC/$pkg-${ver#*:}
    rm -rf "$dir"
    run_logged "dpkg-source -x $pkg $ver" "$LOGS/$pkg-unpack.log" dpkg-source -x "$dsc" "$dir"
    echo "$dir"
}

SECCOMP_USED=$(pick_version "$SECCOMP_SRC" "$SECCOMP_VERSION")
FUSE_USED=$(pick_version "$FUSE_SRC" "$FUSE_VERSION")
CJSON_USED=$(pick_version "$CJSON_SRC" "$CJSON_VERSION")

: >"$LOGS/$SECCOMP_SRC-unpack.log"
: >"$LOGS/$FUSE_SRC-unpack.log"
: >"$LOGS/$CJSON_SRC-unpack.log"
SECCOMP_DIR=$(fetch_source "$SECCOMP_SRC" "$SECCOMP_USED")
FUSE_DIR=$(fetch_source "$FUSE_SRC" "$FUSE_USED")
CJSON_DIR=$(fetch_source "$CJSON_SRC" "$CJSON_USED")
say "sources: $SECCOMP_SRC $SECCOMP_USED, $FUSE_SRC $FUSE_USED, $CJSON_SRC $CJSON_USED (Debian $SUITE, unpacked in build/src)"

HINT="read the log; 'rm -rf build/src' and rerun if the source tree is damaged"

# Install into a staging DESTDIR, then move into place, so build/deps is either
# complete or absent. The prefix (baked into .pc files) is the final $DEPS.
rm -rf "$STAGE"
CFLAGS_MUSL="-O2 -idirafter $KHEADERS"

# --- libseccomp (autotools) --------------------------------------------------
LOG=$LOGS/libseccomp.log
: >"$LOG"
B=$SRC/libseccomp-build
rm -rf "$B"
mkdir -p "$B"
say "building libseccomp (log: build/logs/libseccomp.log)"
(
    cd "$B"
    run_logged "libseccomp configure" "$LOG" "$SECCOMP_DIR/configure" \
        CC=musl-gcc CFLAGS="$CFLAGS_MUSL" \
        --prefix="$DEPS" --libdir="$DEPS/lib" \
        --enable-static --disable-shared --disable-python --disable-dependency-tracking
    # Only the library, headers and .pc: skip tools/, tests/, doc/.
    run_logged "libseccomp make" "$LOG" make -j"$JOBS" -C src
    run_logged "libseccomp install" "$LOG" make -C include install DESTDIR="$STAGE"
    run_logged "libseccomp install" "$LOG" make -C src install DESTDIR="$STAGE"
    run_logged "libseccomp install" "$LOG" make install-pkgconfDATA DESTDIR="$STAGE"
) || exit 1

# --- libfuse3 (meson) --------------------------------------------------------
LOG=$LOGS/fuse3.log
: >"$LOG"
B=$SRC/fuse3-build
rm -rf "$B"
NATIVE=$SRC/fuse3-musl.ini
cat >"$NATIVE" <<EOF
[binaries]
c = 'musl-gcc'
ar = 'ar'
strip = 'strip'

[built-in options]
c_args = ['-idirafter', '$KHEADERS']
EOF
say "building fuse3 (log: build/logs/fuse3.log)"
# Notes: --bindir=/usr/bin only sets FUSERMOUNT_DIR (where libfuse looks for
# fusermount3 when unprivileged; it falls back to PATH); nothing is installed
# there. disable-libc-symbol-version: no .symver aliases, which a static musl
# archive has no use for (fuse_new etc. map to fuse_new_31 in the headers).
run_logged "fuse3 meson setup" "$LOG" meson setup "$B" "$FUSE_DIR" \
    --native-file "$NATIVE" --wrap-mode=nodownload \
    --prefix "$DEPS" --libdir lib --bindir /usr/bin \
    --buildtype release -Ddefault_library=static \
    -Dexamples=false -Dutils=false -Dtests=false -Duseroot=false \
    -Ddisable-libc-symbol-version=true -Dinitscriptdir= -Dudevrulesdir=
run_logged "fuse3 build" "$LOG" ninja -C "$B" -j"$JOBS"
run_logged "fuse3 install" "$LOG" meson install -C "$B" --no-rebuild --destdir "$STAGE"

# --- cJSON (two files; its CMake build is not needed for a static archive) ----
# Reads summary.json and other JSON for `iowrap tasks` and `iowrap report`.
LOG=$LOGS/cjson.log
: >"$LOG"
B=$SRC/cjson-build
rm -rf "$B"
mkdir -p "$B" "$STAGE$DEPS/lib" "$STAGE$DEPS/include/cjson"
say "building cJSON (log: build/logs/cjson.log)"
run_logged "cJSON compile" "$LOG" musl-gcc $CFLAGS_MUSL -std=c89 -fno-strict-aliasing \
    -c "$CJSON_DIR/cJSON.c" -o "$B/cJSON.o"
run_logged "cJSON archive" "$LOG" ar rcs "$STAGE$DEPS/lib/libcjson.a" "$B/cJSON.o"
run_logged "cJSON install" "$LOG" install -m 0644 "$CJSON_DIR/cJSON.h" "$STAGE$DEPS/include/cjson/cJSON.h"

# --- move into place ---------------------------------------------------------
for lib in libseccomp.a libfuse3.a libcjson.a; do
    [ -f "$STAGE$DEPS/lib/$lib" ] ||
        die "install produced no $lib under ${STAGE#"$ROOT"/} (logs: build/logs)"
done
rm -f "$STAGE$DEPS"/lib/*.la
cat >"${STAGE}${STAMP}" <<EOF
recipe=$RECIPE
libseccomp=$SECCOMP_USED
fuse3=$FUSE_USED
cjson=$CJSON_USED
mirror=$MIRROR $SUITE
built=$(date -u +%Y-%m-%dT%H:%M:%SZ)
EOF
rm -rf "$DEPS"
mv "$STAGE$DEPS" "$DEPS"
rm -rf "$STAGE"
# The unpacked trees (fuse3's is ~100 MB, mostly docs) and build dirs are only
# useful for debugging a failed build; keep the downloaded .dsc and tarballs.
rm -rf "$SECCOMP_DIR" "$FUSE_DIR" "$CJSON_DIR" "$SRC/libseccomp-build" "$SRC/fuse3-build" "$SRC/cjson-build"

say "done in $(($(date +%s) - START))s: build/deps (libseccomp $SECCOMP_USED, fuse3 $FUSE_USED, cjson $CJSON_USED)"

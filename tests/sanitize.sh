#!/usr/bin/env bash
# make sanitize: the unit tests and the pytest suite on the build in DIR
# (build/san: AddressSanitizer and UndefinedBehaviorSanitizer, glibc).
# Any report a sanitizer writes to DIR/logs (tests/tools/san_options.c)
# fails the run, whatever the tests said.
#
# Not run: the tests that need the static binary itself (a container
# without glibc, the check that it is static).
set -uo pipefail

[ $# -ge 1 ] || { echo "usage: tests/sanitize.sh DIR [PYTEST-ARGS...]" >&2; exit 2; }
dir=$(realpath -e -- "$1") || exit 2
shift
logs="$dir/logs"
# Sticky and writable by all: some tests run iowrap as nobody, and a
# report it cannot write goes to stderr instead.
rm -rf "$logs" && mkdir -m 1777 "$logs" || exit 1
export IOWRAP_TEST_BINARY="$dir/iowrap"

"$dir/unit-tests"
unit=$?
/usr/bin/python3 -m pytest -q tests \
	--deselect tests/test_launcher.py::test_binary_is_fully_static \
	--ignore tests/test_container.py "$@"
suite=$?

# Where a test takes /proc away from iowrap, the runtime cannot find the
# stack's bounds nor the executable: its notes of that are no report.
runtime_notes='^==[0-9]+==WARNING: (ASan is ignoring requested __asan_handle_no_return|reading executable name failed)|^False positive error reports may follow$|^For details see https://github.com/google/sanitizers/issues/189$'
for f in "$logs"/*; do
	[ -f "$f" ] && ! grep -qvE "$runtime_notes" "$f" && rm -f "$f"
done
if compgen -G "$logs/*" >/dev/null; then
	cat "$logs"/* >&2
	echo "sanitize: the sanitizers' reports are above (also in $logs)" >&2
	exit 1
fi
[ "$unit" -eq 0 ] && [ "$suite" -eq 0 ]

#!/usr/bin/env bash
# make sanitize: the unit tests and the pytest suite on the build in DIR
# (build/san: AddressSanitizer and UndefinedBehaviorSanitizer, glibc).
# Any report a sanitizer writes to DIR/logs (tests/tools/san_options.c)
# fails the run, whatever the tests said.
#
# Not run: the tests that need the static binary itself (a container
# without glibc, the check that it is static).
set -uo pipefail

dir=$(realpath "${1:?usage: tests/sanitize.sh DIR [PYTEST-ARGS...]}")
shift
logs="$dir/logs"
rm -rf "$logs" && mkdir "$logs" || exit 1
export IOWRAP_TEST_BINARY="$dir/iowrap"

"$dir/unit-tests"
unit=$?
/usr/bin/python3 -m pytest -q tests \
	--deselect tests/test_launcher.py::test_binary_is_fully_static \
	--ignore tests/test_container.py "$@"
suite=$?

if compgen -G "$logs/*" >/dev/null; then
	cat "$logs"/* >&2
	echo "sanitize: the sanitizers' reports are above (also in $logs)" >&2
	exit 1
fi
[ "$unit" -eq 0 ] && [ "$suite" -eq 0 ]

#!/usr/bin/env bash
# Build-time check of the files embedded in report.html: a script or style
# asset holding "</script", "</style" or "<!--" would end (or confuse) the
# element it is pasted into, so the build stops instead.  The template must
# hold each of html.c's markers exactly once.
set -euo pipefail
fail() { echo "check-assets.sh: $*" >&2; exit 1; }

for f in "$@"; do
    [ -r "$f" ] || fail "$f missing; fix: restore it from git"
    case "$f" in
    *template.html)
        for m in @IOWRAP_STYLE@ @IOWRAP_DATA@ @IOWRAP_ECHARTS@ @IOWRAP_APP@; do
            n=$(grep -o "$m" "$f" | wc -l)
            [ "$n" -eq 1 ] || fail "$f holds marker $m $n times, not once"
        done ;;
    *)
        if grep -qiE '</script|</style|<!--' "$f"; then
            fail "$f holds </script, </style or <!--, which would break report.html; fix: write it as <\\/script or split the string"
        fi ;;
    esac
done

#!/bin/bash
# badgz.sh — malformed and tricky gzip files (zlib, puff, libdeflate, zlib-ng,
# rapidgzip and GNU gzip test vectors): spigz -dc must reach GNU gzip 1.12's
# verdict on each, with the same output, and never crash or hang.  The
# vectors and their checker live outside the sources, in
# shared/testdata/badgz next to the work tree; BADGZ_DIR names another place.
# Without them the test fails, unless SPIGZ_ALLOW_SKIP=1 (then it is skipped,
# status 77, as from a release tarball).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
: "${SPIGZ:?SPIGZ must point at the spigz binary}"
: "${srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
dir=${BADGZ_DIR:-$srcdir/../shared/testdata/badgz}

if [ ! -f "$dir/check.sh" ] || [ ! -f "$dir/MANIFEST.tsv" ]; then
    msg="the badgz test vectors are not in '$dir' (set BADGZ_DIR to their directory)"
    if [ "${SPIGZ_ALLOW_SKIP:-}" = 1 ]; then
        echo "badgz.sh: SKIP: $msg"
        exit 77
    fi
    echo "FAIL: badgz.sh: $msg; set SPIGZ_ALLOW_SKIP=1 to skip this test instead" >&2
    echo "badgz.sh: 1 checks, 1 failed"
    exit 1
fi
# check.sh runs "$SPIGZ -dc": give it an absolute path.
case $SPIGZ in
    /*) spigz=$SPIGZ ;;
    *) spigz=$(pwd)/$SPIGZ ;;
esac
out=$(bash "$dir/check.sh" "$spigz" 2>&1)
rc=$?
printf '%s\n' "$out"
summary=$(printf '%s\n' "$out" | tail -n 1)
if [[ $summary =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped$ ]]; then
    passed=${BASH_REMATCH[1]} failed=${BASH_REMATCH[2]}
else
    echo "FAIL: badgz.sh: check.sh ended without its summary line (status $rc)" >&2
    echo "badgz.sh: 1 checks, 1 failed"
    exit 1
fi
if [ "$rc" -ne 0 ] || [ "$failed" -ne 0 ] || [ "$passed" -eq 0 ]; then
    echo "FAIL: badgz.sh: $failed vectors failed, $passed passed (check.sh status $rc)" >&2
    echo "badgz.sh: $((passed + failed)) checks, $((failed > 0 ? failed : 1)) failed"
    exit 1
fi
echo "badgz.sh: $((passed + failed)) checks, 0 failed"

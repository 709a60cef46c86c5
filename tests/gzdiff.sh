#!/bin/bash
# gzdiff.sh — spigz against GNU gzip, case by case (tests/py/gzdiff.py): every
# difference that doc/GZIP.md does not list fails.  The bounded run (make
# check) runs two fixed sets of cases, seeds 1 and 2, one case of them
# around 4 GiB.  GZDIFF_LONG=1 (or the argument
# "long") runs thousands of cases, several around 4 GiB.  GZDIFF_CASES,
# GZDIFF_SEED and GZDIFF_JOBS override the defaults.  A failure prints, for
# each failing case, a one-line reproducer and the shell commands run.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=tests/lib.sh
. "${srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need gzip pigz igzip libdeflate-gzip bgzip zopfli compress busybox python3 head
# Debian's interpreter, not a wrapper (pyenv shims cost 0.1 s a call).
if [ -x /usr/bin/python3 ]; then PY3=/usr/bin/python3; else PY3=$(command -v python3); fi

LONG=${GZDIFF_LONG:-0}
[ "${1:-}" = long ] && LONG=1
JOBS=${GZDIFF_JOBS:-2}
run() {
    local seed=$1
    shift
    section "gzdiff.py --seed $seed $*"
    if "$PY3" "$srcdir/tests/py/gzdiff.py" --spigz "$SPIGZ" --seed "$seed" --jobs "$JOBS" \
        --tmp "$T" "$@"; then
        pass
    else
        fail "gzdiff.py --seed $seed $* found differences from gzip (reproducers above)"
    fi
}

if [ "$LONG" = 1 ]; then
    run "${GZDIFF_SEED:-$(date +%s)}" --cases "${GZDIFF_CASES:-10000}" --big-every 1000 \
        --big-slow --signatures
else
    run "${GZDIFF_SEED:-1}" --cases "${GZDIFF_CASES:-1600}" --signatures
    # A second fixed set, the last of its cases around 4 GiB.  (Fixed seeds:
    # make check gives the same verdict every day; the long run draws new
    # cases.)
    n=${GZDIFF_CASES:-1600}
    run 2 --cases "$n" --big-every "$n" --signatures
fi
finish

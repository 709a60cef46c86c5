# lib.sh — shared helpers for the shell tests.  Source it; it sets up a
# scratch directory (removed on exit) and counts failures.
# shellcheck shell=bash # sourced by bash tests (export_index.sh, POSIX sh, uses its POSIX part)
# shellcheck disable=SC2034 # its variables are for the tests that source it
set -u
# Python helpers import each other from the sources: no __pycache__ there.
export PYTHONDONTWRITEBYTECODE=1
# The interpreter itself, not a wrapper (pyenv shims cost 0.1 s a call),
# and one that sees Debian's python3 modules (python3-xxhash, which
# scripts/deps.sh installs for /usr/bin/python3): a python3 earlier on PATH
# (pyenv, a venv) may not.  The first that imports xxhash wins; else the
# PATH's, and the tests that need xxhash say it is missing.
PY3=
for p in python3 /usr/bin/python3; do
    PY3=$("$p" -c 'import sys, xxhash; print(sys.executable)' 2>/dev/null) && break
done
[ -n "$PY3" ] || PY3=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) || PY3=python3
: "${SPIGZ:?SPIGZ must point at the spigz binary}"
# What inflates a foreign file read by name: ISA-L when spigz has it.
if "$SPIGZ" -V | grep -q '^engines: ISA-L'; then FAST_INFLATE=ISA-L; else FAST_INFLATE=zlib; fi
# LEVELS: the compression levels this build has, as -V lists them, between
# spaces (" 0 1 ... 12 "): a build without ISA-L has no 1 to 3, one without
# libdeflate none above 9 (src/core/engine.h).  has_level N [WHAT]: true
# when it has level N; else it notes that WHAT (the caller's checks at that
# level) is skipped, for that level only.  tests/cli.sh checks the refusal.
LEVELS=" $("$SPIGZ" -V | sed -n '/not in this build/d; s/^  level *\([0-9]*\):.*/\1/p' | tr '\n' ' ')"
has_level() {
    case $LEVELS in *" $1 "*) return 0 ;; esac
    echo "NOTE: this spigz has no level $1: ${2:-its checks at that level} skipped"
    return 1
}
# FAST: the fastest level it has (1, or 4 without ISA-L), for runs whose
# level does not matter.
case $LEVELS in *" 1 "*) FAST=1 ;; *) FAST=4 ;; esac
# FREE_ZERO: what --free=zero maps in this build (-V's line).  has_fs KIND
# [WHAT]: true when it maps filesystem KIND (ext2/3/4 with libext2fs, ntfs
# with libntfs-3g; vfat, exfat and swap by hand, with libblkid); else it
# notes that WHAT is skipped, for that filesystem only.  need_free_zero: in
# a build without --free=zero (configure --without-blkid) a test of it
# checks the refusal and ends SKIP (77), saying that nothing else was checked.
FREE_ZERO=$("$SPIGZ" -V | sed -n 's/^--free=zero: //p')
has_fs() {
    local by
    case $1 in
    ext*) by="ext2/3/4 by libext2fs" ;;
    ntfs) by="NTFS by libntfs-3g" ;;
    *) by="by hand" ;;
    esac
    case $FREE_ZERO in *"$by"*) return 0 ;; esac
    echo "NOTE: this spigz reads $1 whole under --free=zero (spigz -V): ${2:-its checks} skipped"
    return 1
}
need_free_zero() {
    local s
    case $FREE_ZERO in unavailable*) ;; *) return 0 ;; esac
    printf 'data\n' > "$T/nofree"
    "$SPIGZ" --free=zero -c "$T/nofree" > "$T/nofree.gz" 2> "$T/nofree.err"; s=$?
    check "--free=zero in a build without it: status $s, expected 1" [ "$s" -eq 1 ]
    check "--free=zero in a build without it: says why ($(cat "$T/nofree.err"))" \
        grep -q "needs libblkid" "$T/nofree.err"
    check "--free=zero in a build without it: no output" test ! -s "$T/nofree.gz"
    echo "$(basename "$0"): $CHECKS checks, $FAILS failed; SKIP: --free=zero is $FREE_ZERO:" \
        "nothing else checked"
    [ "$FAILS" -eq 0 ] && exit 77
    exit 1
}
: "${srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
T=$(mktemp -d "${TMPDIR:-/tmp}/spigz-test.XXXXXX")
# A test that attaches a loop device sets LOOPDEV (more of them: LOOPDEVS,
# space-separated); they go with the scratch.
LOOPDEV=
LOOPDEVS=
cleanup() {
    local l
    for l in $LOOPDEV $LOOPDEVS; do losetup -d "$l" 2>/dev/null; done
    rm -rf "$T"
}
trap cleanup EXIT
section() { echo "[${SECONDS}s] $*"; }
# HANG: the seconds after which a run is taken for hung (timeout "$HANG"),
# not a time it must finish in: generous, so that a loaded machine or a
# sanitizer build never fails a test that merely ran slowly.
HANG=${SPIGZ_TEST_HANG:-600}
FAILS=0
CHECKS=0

pass() { CHECKS=$((CHECKS + 1)); }
fail() { CHECKS=$((CHECKS + 1)); FAILS=$((FAILS + 1)); echo "FAIL: $*" >&2; }
# check DESCRIPTION COMMAND...: the command must succeed.
check() { local d=$1; shift; if "$@"; then pass; else fail "$d"; fi; }
# need TOOL...: a missing tool is a failure, never a silent skip.
need() { local t; for t in "$@"; do command -v "$t" >/dev/null 2>&1 || { fail "required tool '$t' is not installed"; }; done; }
# need_or_skip WHAT TOOL...: end SKIP (77) naming the tools missing and WHAT
# (the checks) is then not checked; for tools a machine may well lack
need_or_skip() {
    local what=$1 t missing=
    shift
    for t in "$@"; do command -v "$t" > /dev/null 2>&1 || missing="$missing $t"; done
    [ -z "$missing" ] && return 0
    echo "SKIP: not installed:$missing: $what"
    exit 77
}
finish() {
    echo "$(basename "$0"): $CHECKS checks, $FAILS failed"
    [ "$FAILS" -eq 0 ]
}

# map_bad MAP: the bad ('-') areas of a GNU ddrescue mapfile as
# OFF+LEN,... (decimal), in file order (--bad-map's output).
map_bad() {
    python3 - "$1" <<'EOF'
import sys
out, first = [], True
for line in open(sys.argv[1]):
    if line.startswith("#") or not line.strip():
        continue
    f = line.split()
    if first:          # the status line: current_pos current_status [pass]
        first = False
        continue
    if f[2] == "-":
        out.append(f"{int(f[0], 16)}+{int(f[1], 16)}")
print(",".join(out))
EOF
}

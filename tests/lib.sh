# lib.sh — shared helpers for the shell tests.  Source it; it sets up a
# scratch directory (removed on exit) and counts failures.
set -u
# Python helpers import each other from the sources: no __pycache__ there.
export PYTHONDONTWRITEBYTECODE=1
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

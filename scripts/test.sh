#!/bin/sh
# The test command: install what is missing, build, and run every test.
#   1. the quick tier, which fails in minutes: shellcheck on every script
#      (scripts/lint.sh), the build, the unit tests and the command line's
#      tests (make check-quick);
#   2. `make distcheck`: every unit and shell test, from the release tarball
#      built elsewhere (which proves the tarball builds and passes);
#   3. the unit and shell tests under AddressSanitizer/UBSan and the threads
#      under ThreadSanitizer (scripts/sanitize.sh), a short run of each fuzzer
#      (scripts/fuzz.sh), the Debian package built, installed and tried
#      (scripts/deb.sh), and every other configuration configure offers, each
#      built and tested on what it changes (scripts/builds.sh);
#   4. what the tests left behind: entries in the temporary directory, loop
#      devices, mounts and processes that were not there before.
# A failing test's log is printed (VERBOSE); the run stops at the first
# failing stage.
set -eu
cd "$(dirname "$0")/.."
tmp=${TMPDIR:-/tmp}
# The machine's state that the tests may change, one line per item.
tmp_list() { find "$tmp" -mindepth 1 -maxdepth 1 -name 'spigz*' -printf 'file %p\n'; }
loop_list() { losetup -l -n -O NAME,BACK-FILE 2> /dev/null | sed 's/^/loop device /' || true; }
mount_list() { findmnt -rn -o TARGET,SOURCE 2> /dev/null | sed 's/^/mount /' || true; }
# Processes of this session, or naming spigz or the temporary directory (a
# FUSE daemon leaves the session but names its mount point), but not this
# script, its ancestors and what it runs now: a test's leftover has lost its
# parent, the test, and is no descendant of this script.  Listed by pid and
# command line only (a parent may change: an orphan is adopted).  With
# `all`, every process: the list taken before the tests, so that nothing
# running then (whatever its place now) counts as left behind.  Kernel
# threads (kthreadd, pid 2, and its children) come and go on their own and
# are never counted; nor is a session id of 0 (a script started outside any
# session, as some CI runners do, shares it with every kernel thread).
proc_list() {
    ps -eo pid=,ppid=,sid=,args= | awk -v me=$$ -v tmp="$tmp/spigz" -v all="${1:-}" '
        { pid = $1; parent[pid] = $2; sid[pid] = $3
          l = $0; sub(/^ *[0-9]+ +[0-9]+ +[0-9]+ /, "", l); args[pid] = l }
        END {
            for (q = me; q in parent && q > 1; q = parent[q]) mine[q] = 1
            for (p in args) {
                if (all != "") { print "process " p " " args[p]; continue }
                if (p in mine || p == 2 || parent[p] == 2) continue
                q = p
                while (q != me && q in parent && q > 1) q = parent[q]
                if (q == me) continue
                if ((sid[me] > 0 && sid[p] == sid[me]) || index(args[p], tmp) || args[p] ~ /(^|[ \/])spigz( |$)/)
                    print "process " p " " args[p]
            }
        }'
}
state() { tmp_list; loop_list; mount_list; proc_list; }
before=$(mktemp)
trap 'rm -f "$before"' EXIT
scripts/deps.sh test
{ tmp_list; loop_list; mount_list; proc_list all; } | sort > "$before"

VERBOSE=1
export VERBOSE
# 1. quick
scripts/lint.sh
scripts/build.sh
make -s -j"$(nproc)" check-quick
# 2. everything, from the release tarball
make -s -j"$(nproc)" distcheck
# 3. sanitizers, fuzzers, the package, the other configurations
scripts/sanitize.sh
FUZZ_SEED=1 scripts/fuzz.sh 30
scripts/deb.sh
scripts/builds.sh
# 4. nothing left behind
left=$(state | sort | comm -13 "$before" -)
if [ -n "$left" ]; then
    echo "FAIL: the tests left behind:" >&2
    printf '%s\n' "$left" | sed 's/^/    /' >&2
    exit 1
fi
echo "all tests passed"

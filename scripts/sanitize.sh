#!/bin/sh
# The tests under sanitizers, each in its own out-of-tree build:
#   asan: every test (unit and shell) with AddressSanitizer + UBSan;
#   tsan: the pool, pipeline, scout, random-access reader and gzip-index
#         (gzx) unit tests, the mount (its reader threads), and the estimate, progress,
#         restore, salvage and inflate tests (they run threads: the restore's ordered
#         writes, salvage's damage lists and compare's differences among
#         them), with ThreadSanitizer.
# Usage: scripts/sanitize.sh [asan|tsan]...   (default: both)
# Builds in $SANITIZE_DIR, else ${TMPDIR:-/tmp}/spigz-sanitize, which is
# removed when every test passed (kept, with the logs, when one failed).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$top/configure" ] || (cd "$top" && ./autogen.sh >/dev/null)
base=${SANITIZE_DIR:-${TMPDIR:-/tmp}/spigz-sanitize}
mkdir -p "$base"
# A tree configured in place (scripts/build.sh, ./configure) refuses builds
# elsewhere: build from a clean copy of its distributed files then.
if [ -f "$top/config.status" ]; then
    rm -rf "$base/src" && make -s -C "$top" distdir distdir="$base/src" >/dev/null
    top=$base/src
fi
[ "$#" -gt 0 ] || set -- asan tsan
for kind in "$@"; do
    dir=$base/$kind
    rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
    case $kind in
    asan)
        flags="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined"
        "$top/configure" -q CC=clang CFLAGS="$flags" LDFLAGS="-fsanitize=address,undefined"
        make -s -j"$(nproc)"
        # fault.so is preloaded into a sanitized binary: the ASan runtime must come first.
        ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:verify_asan_link_order=0 \
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 SPIGZ_SANITIZER=address \
            make -s -j"$(nproc)" check
        ;;
    tsan)
        flags="-O1 -g -fsanitize=thread"
        "$top/configure" -q CC=clang CFLAGS="$flags" LDFLAGS="-fsanitize=thread"
        make -s -j"$(nproc)"
        TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 SPIGZ_SANITIZER=thread \
            make -s -j"$(nproc)" check TESTS="tests/check_pool tests/check_compress tests/check_scout tests/check_ra tests/check_gzx tests/mount.sh tests/estimate.sh tests/progress.sh tests/restore.sh tests/salvage.sh tests/inflate.sh"
        ;;
    *) echo "usage: $0 [asan|tsan]..." >&2; exit 1 ;;
    esac
    echo "sanitizer $kind: all tests passed"
done
# Passed: the builds go (a failure exits above and keeps them, logs and all);
# a directory the caller named is the caller's.
cd /
[ -n "${SANITIZE_DIR:-}" ] || rm -rf "$base"

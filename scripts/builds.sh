#!/bin/sh
# Every configuration configure offers, built and tested (as zstd's
# tests/libzstd_builds.sh builds each of its library's variants): each one is
# configured out of tree from a clean copy of the distributed files (`make
# distdir`), built, checked to lack what it says it lacks (`spigz -V`, the
# libraries the program links, configure's summary), and tested on what it
# changes: the unit tests that touch it and a few shell tests.
#   noisal   --without-isal                    no levels 1 to 3: refused, said;
#                                              foreign files inflated by zlib
#   nold     --without-libdeflate              zlib makes the pieces, levels 0..9
#   zlib     both of those                     zlib alone: levels 0 and 4..9
#   noblkid  --without-blkid                   --free=zero refused, saying why
#   nofs     --without-ext2fs --without-ntfs3g --without-fdisk --without-devmapper
#                                              ext2/3/4 and NTFS read whole, said; the
#                                              manifest without type names
#   nomount  --without-fuse3                   --mount refused, saying why
#   shared   --disable-static-libdeflate       libdeflate's shared library
#   nocheck  --without-check                   make check without the unit tests
#   nonbd    --without-nbdkit                  no nbdkit plugin; tests/nbd.sh SKIPs
# The default configuration is built and tested in full by `make distcheck`
# (scripts/test.sh); `default` here builds it and checks what it has.
# About 8 minutes on 2 cores.
# Usage: scripts/builds.sh [NAME]...   (default: every variant above)
# Builds in $BUILDS_DIR, else ${TMPDIR:-/tmp}/spigz-builds, which is removed
# when every variant passed (kept, with the logs, when one failed).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$top/configure" ] || (cd "$top" && ./autogen.sh >/dev/null)
base=${BUILDS_DIR:-${TMPDIR:-/tmp}/spigz-builds}
jobs=$(nproc)
# a failing test's log is printed (automake's harness reads VERBOSE)
VERBOSE=1
export VERBOSE
[ "$#" -gt 0 ] || set -- noisal nold zlib noblkid nofs nomount shared nocheck nonbd

mkdir -p "$base"
# A tree configured in place refuses builds elsewhere: build from a clean
# copy of its distributed files then (as scripts/sanitize.sh does).
src=$top
if [ -f "$top/config.status" ]; then
    rm -rf "$base/src" && make -s -C "$top" distdir distdir="$base/src" >/dev/null
    src=$base/src
fi

fail() { echo "builds: $name: FAIL: $*" >&2; exit 1; }
# has TEXT / lacks TEXT: spigz -V (in $dir/version) says / does not say TEXT
has() { grep -qF -- "$1" version || fail "spigz -V lacks '$1':$(sed 's/^/    /' version)"; }
lacks() { ! grep -qF -- "$1" version || fail "spigz -V says '$1':$(sed 's/^/    /' version)"; }
# links LIB / links_not LIB: the program's NEEDED entries name LIB (e.g. libisal.so)
links() { grep -q "NEEDED.*\[$1" needed || fail "spigz does not link $1: $(tr '\n' ' ' < needed)"; }
links_not() { ! grep -q "NEEDED.*\[$1" needed || fail "spigz links $1"; }
# summary TEXT: configure's summary (its last lines) says TEXT
summary() { grep -qF -- "$1" configure.out || fail "configure's summary lacks '$1': $(tail -n 2 configure.out)"; }
# levels LIST: the levels -V lists as made, exactly
levels() {
    got=$(sed -n '/not in this build/d; s/^  level *\([0-9]*\):.*/\1/p' version | tr '\n' ' ')
    [ "$got" = "$1 " ] || fail "levels made: '$got', expected '$1'"
}
# check TESTS...: make check on them: their results, and the failing ones' logs
check() {
    if make -s -j"$jobs" check TESTS="$*" > check.out 2>&1; then
        echo "builds: $name: $(grep -E '^(PASS|SKIP|XFAIL):' check.out | tr '\n' ' ')"
    else
        cat check.out >&2
        fail "make check TESTS='$*'"
    fi
}
# skipped TEST: the shell test ended SKIP (77), as it must in this build
skipped() { grep -q '^:test-result: SKIP' "tests/${1%.sh}.trs" || fail "tests/$1 did not end SKIP"; }

engine_units="tests/check_engine tests/check_compress tests/check_resync tests/check_scout"
all=$(date +%s)
for name in "$@"; do
    case $name in
    default) opts= ;;
    noisal) opts=--without-isal ;;
    nold) opts=--without-libdeflate ;;
    zlib) opts="--without-isal --without-libdeflate" ;;
    noblkid) opts=--without-blkid ;;
    nofs) opts="--without-ext2fs --without-ntfs3g --without-fdisk --without-devmapper" ;;
    nomount) opts=--without-fuse3 ;;
    shared) opts=--disable-static-libdeflate ;;
    nocheck) opts=--without-check ;;
    nonbd) opts=--without-nbdkit ;;
    *) echo "usage: $0 [default|noisal|nold|zlib|noblkid|nofs|nomount|shared|nocheck|nonbd]..." >&2; exit 1 ;;
    esac
    t0=$(date +%s)
    echo "builds: $name: configure $opts"
    dir=$base/$name
    rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
    # shellcheck disable=SC2086 # $opts is a list of options
    "$src/configure" $opts > configure.out 2>&1 || { tail -n 30 configure.out >&2; fail "configure"; }
    make -s -j"$jobs" > make.out 2>&1 || { tail -n 40 make.out >&2; fail "make"; }
    ./spigz -V > version
    readelf -d spigz > needed
    # ---- what it has and lacks ----
    case $name in
    default)
        summary "levels 1-3: ISA-L yes"; summary "libdeflate (static)"
        has "engines: ISA-L"; levels "0 1 2 3 4 5 6 7 8 9 10 11 12"
        has "ext2/3/4 by libext2fs"; has "NTFS by libntfs-3g"
        links libisal.so; links_not libdeflate.so; links libblkid.so; links libext2fs.so
        links libntfs-3g.so; summary "nbdkit plugin: yes"; has "--mount: libfuse3"; links libfuse3.so
        ! readelf -d nbdkit-spigz-plugin.so | grep -q 'NEEDED.*\[libdeflate.so' ||
            fail "the nbdkit plugin links libdeflate.so, not its archive" ;;
    noisal)
        summary "levels 1-3: ISA-L no"; has "(built without ISA-L)"
        has "level  1: not in this build"; levels "0 4 5 6 7 8 9 10 11 12"; links_not libisal.so ;;
    nold)
        summary "data engine: zlib"; lacks libdeflate; levels "0 1 2 3 4 5 6 7 8 9"
        links_not libdeflate.so ;;
    zlib)
        summary "data engine: zlib"; summary "levels 1-3: ISA-L no"; lacks libdeflate
        has "(built without ISA-L)"; levels "0 4 5 6 7 8 9"; links_not libdeflate.so
        links_not libisal.so ;;
    noblkid)
        has "--free=zero: unavailable (built without libblkid)"; links_not libblkid.so ;;
    nofs)
        has "ext2/3/4 read whole (built without libext2fs)"
        has "NTFS read whole (built without libntfs-3g)"
        summary "partition type names in the manifest: libfdisk no"
        has "LVM2 read whole (built without libdevmapper)"
        links_not libext2fs.so; links_not libntfs-3g.so; links_not libfdisk.so
        links_not libdevmapper.so ;;
    nomount)
        summary "--mount: libfuse3 no"; has "--mount: not in this build"
        links_not libfuse3.so ;;
    shared)
        summary "libdeflate (shared)"; has libdeflate; links libdeflate.so
        readelf -d nbdkit-spigz-plugin.so | grep -q 'NEEDED.*\[libdeflate.so' ||
            fail "the nbdkit plugin does not link libdeflate.so" ;;
    nocheck)
        summary "unit tests: no" ;;
    nonbd)
        summary "nbdkit plugin: no"
        [ ! -e nbdkit-spigz-plugin.so ] || fail "the nbdkit plugin was built" ;;
    esac
    # ---- its tests ----
    case $name in
    default) check tests/check_engine ;;
    noisal)
        # -1 to -3 refused (cli.sh); every gzip file inflated by zlib (inflate.sh)
        check "$engine_units" tests/check_splice tests/cli.sh tests/inflate.sh ;;
    nold)
        # zlib's pieces beside ISA-L's; -10 to -12 refused (cli.sh)
        # the nbdkit plugin decodes with zlib alone (nbd.sh)
        check "$engine_units" tests/cli.sh tests/nbd.sh
        [ ! -e tests/check_splice ] || fail "check_splice built without libdeflate" ;;
    zlib)
        # zlib's pieces alone: every reader, every level, threads, inputs
        # (roundtrip.sh); -1 to -3 and -10 to -12 refused (cli.sh)
        check "$engine_units" tests/cli.sh tests/roundtrip.sh
        [ ! -e tests/check_splice ] || fail "check_splice built without libdeflate" ;;
    noblkid)
        # the refusal, then SKIP: free.sh and layouts.sh check nothing else
        check tests/check_layout tests/free.sh tests/layouts.sh
        skipped free.sh; skipped layouts.sh
        printf 'data\n' > in
        s=0; ./spigz --free=zero -c in > in.gz 2> err || s=$?
        [ "$s" = 1 ] && grep -q "needs libblkid" err && [ ! -s in.gz ] ||
            fail "--free=zero: status $s, '$(cat err)', expected 1 and the reason" ;;
    nofs)
        # ext4 and NTFS read whole, saying why, and restored as they were;
        # partition tables and the filesystems read by hand as ever (layouts.sh);
        # the manifest without libfdisk's type names (manifest.sh)
        check tests/check_layout tests/check_layclu tests/layouts.sh tests/manifest.sh
        truncate -s 40M ext4.img ntfs.img
        mke2fs -q -F -t ext4 ext4.img && mkntfs -Q -F -q ntfs.img > /dev/null 2>&1 ||
            fail "mke2fs or mkntfs"
        for fs in ext4:libext2fs ntfs:libntfs-3g; do
            s=0; ./spigz --free=zero -v -c "${fs%:*}.img" > fs.gz 2> err || s=$?
            [ "$s" = 0 ] && grep -q "read whole: this spigz was built without ${fs#*:}" err &&
                ./spigz -dc fs.gz | cmp -s - "${fs%:*}.img" ||
                fail "--free=zero on ${fs%:*}: status $s, '$(cat err)': expected 0, read whole, said"
        done
        echo "builds: $name: ext4 and NTFS read whole, said, restored" ;;
    nomount)
        # the refusal (status 1, said), then SKIP
        check tests/mount.sh
        skipped mount.sh ;;
    shared)
        # the nbdkit plugin with libdeflate's shared library too (nbd.sh)
        check tests/check_engine tests/check_splice tests/check_compress tests/cli.sh tests/nbd.sh ;;
    nocheck)
        # make check runs the shell tests; no unit test is built
        check tests/cli.sh
        ! ls tests/check_* > /dev/null 2>&1 || fail "unit tests built: $(ls tests/check_*)" ;;
    nonbd)
        # the plugin's test ends SKIP, saying so
        check tests/nbd.sh
        skipped nbd.sh ;;
    esac
    echo "builds: $name: passed in $(($(date +%s) - t0)) s"
done
echo "builds: $* passed in $(($(date +%s) - all)) s"
# Passed: the builds go (a failure exits above and keeps them, logs and
# all); a directory the caller named is the caller's.
cd /
[ -n "${BUILDS_DIR:-}" ] || rm -rf "$base"

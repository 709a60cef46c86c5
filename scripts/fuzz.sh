#!/bin/sh
# Build the libFuzzer harnesses (fuzz/fuzz_*.c) out of tree with clang, then
# run each for SECONDS (default 30), failing on any crash, leak, timeout or
# out-of-memory.  fuzz/README.md explains the harnesses and long campaigns.
#
# Usage: scripts/fuzz.sh [SECONDS]      build, then run every harness
#        scripts/fuzz.sh --build        build only; prints the build folder
#
# Environment: FUZZ_DIR     build and working folder
#                           (default ${TMPDIR:-/tmp}/spigz-fuzz)
#              FUZZ_TARGETS harnesses to run (default "decode index layout resync gzx
#                           manifest lvm")
#              CC           a clang with libFuzzer (default clang)
#              FUZZ_SEED    libFuzzer's -seed (default 0: a new one each run);
#                           the test command fixes it, so that CI explores
#                           the same inputs each time and a finding there
#                           reproduces (long campaigns leave it unset)
# Crash reproducers go to fuzz/crashes/NAME-crash-* (never commit them); new
# corpus entries go to $FUZZ_DIR/corpus-NAME, so fuzz/corpus/ stays as the
# seeds fuzz/make-corpus.sh made.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${FUZZ_DIR:-${TMPDIR:-/tmp}/spigz-fuzz}
cc=${CC:-clang}
targets=${FUZZ_TARGETS:-decode index layout resync gzx manifest lvm}
build_only=false
secs=30
case ${1:-} in
--build) build_only=true ;;
'') ;;
*[!0-9]*) echo "usage: $0 [SECONDS] | --build" >&2; exit 1 ;;
*) secs=$1 ;;
esac

[ -x "$top/configure" ] || (cd "$top" && ./autogen.sh >/dev/null)
mkdir -p "$dir/cfg" "$dir/obj"

# config.h from a configure run with the same compiler.
# shellcheck disable=SC3013 # -nt: dash (Debian's sh) and bash have it
if [ ! -f "$dir/cfg/config.h" ] || [ "$top/configure" -nt "$dir/cfg/config.h" ]; then
    # A tree configured in place refuses a configure run elsewhere: run the
    # one of a clean copy of its distributed files then.
    cfgtop=$top
    if [ -f "$top/config.status" ]; then
        rm -rf "$dir/src" && make -s -C "$top" distdir distdir="$dir/src" >/dev/null
        cfgtop=$dir/src
    fi
    (cd "$dir/cfg" && "$cfgtop/configure" -q CC="$cc" >/dev/null)
fi
libs="-lz $(pkg-config --libs libxxhash) -pthread"
if grep -q '^#define HAVE_LIBDEFLATE 1' "$dir/cfg/config.h"; then
    libs="-ldeflate $libs"
fi
# ISA-L (levels 1 to 3, the inflate of foreign files) and the layout
# readers' libraries, where configure found them
layout_cflags=
for lib in ISAL:libisal BLKID:blkid FDISK:fdisk EXT2FS:"ext2fs com_err" NTFS3G:libntfs-3g DEVMAPPER:devmapper; do
    if grep -q "^#define HAVE_${lib%%:*} 1" "$dir/cfg/config.h"; then
        # shellcheck disable=SC2086 # ${lib#*:} is a list of packages
        libs="$(pkg-config --libs ${lib#*:}) $libs"
        # shellcheck disable=SC2086 # the same list
        layout_cflags="$layout_cflags $(pkg-config --cflags ${lib#*:})"
    fi
done

san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
# FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION (libFuzzer's convention): the
# XFS and btrfs readers then take every metadata checksum as good, so that
# mutations reach the trees behind them (a fuzzer cannot forge CRC-32C)
cflags="-std=gnu11 -g -O1 -fno-omit-frame-pointer $san -DHAVE_CONFIG_H -I$dir/cfg $layout_cflags"
cflags="$cflags -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION"

# The core: every source but the command line's (src/cli), and the index
# export the command line owns (src/cli/xidx.c, which fuzz_index checks).
# Each layer is compiled with its own folder and core's only, as Makefile.am
# does, so a back-edge fails here too; the command line's file and the
# harnesses see every layer.
all_layers="-I$top/src/core -I$top/src/compress -I$top/src/restore -I$top/src/layout -I$top/src/cli"
objs=
for src in "$top"/src/core/*.c "$top"/src/compress/*.c "$top"/src/restore/*.c \
    "$top"/src/layout/*.c "$top"/src/cli/xidx.c; do
    base=$(basename "$src" .c)
    layer=$(basename "$(dirname "$src")")
    case $base in
    lay_ext4) grep -q '^#define HAVE_EXT2FS 1' "$dir/cfg/config.h" || continue ;;
    lay_ntfs) grep -q '^#define HAVE_NTFS3G 1' "$dir/cfg/config.h" || continue ;;
    esac
    incs="-I$top/src/$layer -I$top/src/core"
    [ "$layer" = cli ] && incs=$all_layers
    obj=$dir/obj/$base.o
    # shellcheck disable=SC3013 # -nt: dash (Debian's sh) and bash have it
    if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ -n "$(find "$top/src" -name '*.h' -newer "$obj")" ]; then
        # shellcheck disable=SC2086 # $cc and $cflags are lists of words
        $cc $cflags $incs -fsanitize=fuzzer-no-link -c "$src" -o "$obj"
    fi
    objs="$objs $obj"
done
for t in $targets; do
    # shellcheck disable=SC2086 # $cc, $cflags, $objs and $libs are lists of words
    $cc $cflags $all_layers -fsanitize=fuzzer "$top/fuzz/fuzz_$t.c" $objs $libs -o "$dir/fuzz_$t"
done
if $build_only; then
    echo "$dir"
    exit 0
fi

mkdir -p "$top/fuzz/crashes"
status=0
for t in $targets; do
    mkdir -p "$dir/corpus-$t"
    # fuzz/regress/NAME: inputs that once failed, kept apart from the seeds
    # fuzz/make-corpus.sh regenerates.
    regress=
    [ -d "$top/fuzz/regress/$t" ] && regress=$top/fuzz/regress/$t
    # seeds: committed for decode, index, gzx, manifest and lvm; made by the mkfs tools for
    # layout (megabytes of images, mostly zeros: not committed)
    seeds=$top/fuzz/corpus/$t max_len=1048576
    [ "$t" = resync ] && seeds=$top/fuzz/corpus/decode # damaged gzip: its files
    if [ "$t" = layout ]; then
        seeds=$dir/seed-layout max_len=4194304
        rm -rf "$seeds" && sh "$top/fuzz/make-layout-seeds.sh" "$seeds"
    fi
    echo "== fuzz_$t: $secs s"
    # fuzz_layout's leaks inside libntfs-3g are matched against
    # fuzz/lsan.supp, which needs the library's frames: slow unwinding
    # there (the library has no frame pointers); the others keep the fast one.
    asan=detect_leaks=1
    [ "$t" = layout ] && asan=$asan:fast_unwind_on_malloc=0
    if ! ASAN_OPTIONS=${ASAN_OPTIONS:-$asan} \
        LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$top/fuzz/lsan.supp} \
        UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
        "$dir/fuzz_$t" -max_len=$max_len -timeout=10 -max_total_time="$secs" \
        -seed="${FUZZ_SEED:-0}" \
        -print_final_stats=1 -artifact_prefix="$top/fuzz/crashes/$t-" \
        "$dir/corpus-$t" "$seeds" ${regress:+"$regress"} >"$dir/fuzz_$t.log" 2>&1; then
        echo "fuzz_$t FAILED: see $dir/fuzz_$t.log and fuzz/crashes/" >&2
        tail -n 40 "$dir/fuzz_$t.log" >&2
        status=1
    else
        grep -E '^stat::number_of_executed_units|^Done' "$dir/fuzz_$t.log" || true
    fi
done
# Clean runs leave nothing behind in the default build directory (a failure
# keeps it: the log named above is in it); FUZZ_DIR is the caller's.
[ "$status" -ne 0 ] || [ -n "${FUZZ_DIR:-}" ] || rm -rf "$dir"
exit $status

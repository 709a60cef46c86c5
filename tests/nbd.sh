#!/bin/sh
# nbd.sh — the nbdkit plugin (src/nbd/nbd_plugin.c, nbdkit-spigz-plugin.so
# from the build tree) serving a spigz backup read-only, checked with real
# clients: nbdinfo (read-only, multi-conn, and `--map`: the zero runs as
# hole,zero extents at their offsets, also through nbdkit's offset filter),
# nbdcopy (one connection; four connections and two copies at once with a
# cache of about one piece; --no-extents) and qemu-img convert: each equal
# to the original, byte for byte.  A damaged data piece or zero piece makes
# the copy fail and nbdkit log the piece's range, while the ranges around it
# still read right; a backup cut while served fails the copy.  A plain
# gzip file is served through its gzip index, saved beside it (or at
# index=PATH) and loaded the next time.  A file that is not gzip, a
# directory, no file, cache=0 are refused with a message.  The .so
# exports plugin_init alone and needs nothing but nbdkit's own functions and
# its libraries.  In a sanitizer build (scripts/sanitize.sh) nbdkit gets the
# sanitizer's runtime preloaded and its messages are checked for reports.
# Every nbdkit runs captive (--run) on a private socket (-U -): none
# outlives its command, no sleeps.  About 5 s.
# A build without the plugin (configure found no nbdkit-plugin-dev), or a
# machine without nbdkit, nbdinfo or nbdcopy: SKIP (77); without qemu-img
# only its check is skipped (and the test ends SKIP, saying so).
# POSIX sh (run by $(SHELL), dash on Debian).
# shellcheck source=tests/lib.sh
. "${srcdir:-$(dirname "$0")/..}/tests/lib.sh"

if [ -z "${NBDKIT_PLUGIN:-}" ]; then
    echo "nbd.sh: SKIP: spigz was configured without the nbdkit plugin (no nbdkit-plugin-dev): nothing checked"
    exit 77
fi
missing=
for t in nbdkit nbdinfo nbdcopy; do
    command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
done
if [ -n "$missing" ]; then
    echo "nbd.sh: SKIP: not installed:$missing (Debian: nbdkit, libnbd-bin): the plugin was not checked"
    exit 77
fi
need python3 cmp gzip timeout truncate nm ldd
[ -f "$NBDKIT_PLUGIN" ] || fail "the plugin $NBDKIT_PLUGIN was not built"
[ "$FAILS" -eq 0 ] || { finish; exit 1; }
NOTCHECKED=
P=$NBDKIT_PLUGIN
SPZ="$srcdir/tests/py/spz.py"
cd "$T" || exit 1

ldd -r "$P" > ldd.out 2>&1
# nbdkit_ ARGS...: nbdkit, with the sanitizer's runtime preloaded when the
# plugin was built with one and nbdkit was not (scripts/sanitize.sh): clang
# leaves the runtime's symbols undefined in a shared object, gcc links
# libasan.so, which must come first.  A --run command runs without it
# (qemu-img's coroutines hang under ASan).  sane FILE: no sanitizer report
# in nbdkit's messages.
PRELOAD=
if grep -q '^undefined symbol: __asan_' ldd.out; then
    PRELOAD=$(clang -print-file-name="libclang_rt.asan-$(uname -m).so" 2>/dev/null) || PRELOAD=
    [ -f "$PRELOAD" ] || { fail "the plugin needs ASan's runtime; clang's was not found"; finish; exit 1; }
else
    PRELOAD=$(ldd "$P" | awk '$1 ~ /^libasan/ { print $3 }')
fi
# A leak report counts when a frame of its stack is the plugin's: nbdkit's
# own allocations, not made for the plugin, are nbdkit's business.
nbdkit_() { LD_PRELOAD=$PRELOAD timeout -k 10 "$HANG" nbdkit "$@"; }
sane() {
    awk '/runtime error:|ERROR: AddressSanitizer/ { bad = 1 }
         /^(Direct|Indirect) leak of/ { leak = 1; next }
         leak && /nbdkit-spigz-plugin|\/src\/(nbd|restore|core)\// { bad = 1 }
         /^$/ { leak = 0 }
         END { exit bad }' "$1" || fail "a sanitizer report: $(cat "$1")"
}

# serve GZ ARGS... -- CMD: nbdkit serves GZ (ARGS: nbdkit's options, such
# as --filter=, and more KEY=VALUE parameters) on a private socket while
# sh -c CMD runs with $uri and $unixsocket set; CMD's status lands in ./st,
# nbdkit's messages in ./log.
serve() {
    gz=$1
    shift
    opts=
    args=
    while [ "$1" != "--" ]; do
        case $1 in -*) opts="$opts $1" ;; *) args="$args $1" ;; esac
        shift
    done
    shift
    rm -f st
    # shellcheck disable=SC2086 # OPTS and ARGS are words
    nbdkit_ -U - $opts "$P" "$gz" $args \
        --run 'unset LD_PRELOAD; '"$1"'; echo $? > '"$T/st" > log 2>&1
    ns=$?
    [ -f st ] || { echo "serve: the command did not run (nbdkit status $ns)"; cat log; echo 99 > st; }
    sane log
}
status() { cat st; }

section "the shared object"
# Exports: plugin_init alone (the version script).  Undefined: nbdkit's
# functions only, every other symbol found in the libraries it links (and,
# in a sanitizer build, the sanitizer's runtime, preloaded above).
exports=$(nm -D --defined-only "$P" | awk '$2 ~ /^[TDBRVW]$/ { print $3 }')
check "exports plugin_init alone (got: $exports)" [ "$exports" = plugin_init ]
undef=$(sed -n 's/^undefined symbol: \([^ 	]*\).*/\1/p' ldd.out |
    grep -Ev '^(nbdkit_|__(asan|ubsan|sanitizer|lsan)_)' | tr '\n' ' ')
check "no undefined symbol but nbdkit's (got: $undef)" [ -z "$undef" ]
check "ldd -r lists nbdkit's functions as undefined (the check above sees them)" \
    grep -q '^undefined symbol: nbdkit_error' ldd.out
nbdkit_ "$P" --dump-plugin > dump 2>&1
sane dump
check "--dump-plugin: thread model parallel" grep -qx 'thread_model=parallel' dump
check "--dump-plugin: spigz's version" grep -q '^spigz_version=[0-9]' dump

section "an image: data, zero runs, text"
# gen.py OUT SEG...: OUT is the segments KIND:N in turn (r random, t text,
# z zeros); prints the 4 KiB blocks that are all zero, as "START LENGTH"
# runs: the zero extents the index must give (spigz classifies 4 KiB blocks).
cat > gen.py <<'EOF'
import random, sys
out, segs = sys.argv[1], sys.argv[2:]
r = random.Random(out)
words = b"the of and disk image block device sparse zero chunk stream member index".split()
d = bytearray()
for s in segs:
    kind, n = s.split(":")
    n = int(n)
    if kind == "r":
        d += r.randbytes(n)
    elif kind == "z":
        d += bytes(n)
    else:
        d += b" ".join(r.choice(words) for _ in range(n // 4 + 1))[:n]
open(out, "wb").write(d)
B = 4096
start = None
for b in range(0, len(d) // B + 1):
    z = (b + 1) * B <= len(d) and not any(d[b * B:(b + 1) * B])
    if z and start is None:
        start = b * B
    if not z and start is not None:
        print(start, b * B - start)
        start = None
EOF
python3 gen.py img r:1060000 z:3145728 t:1200000 r:300000 z:2097252 t:5000 > want.zero
size=$(stat -c %s img)
check "the image has two zero runs ($(tr '\n' ' ' < want.zero))" [ "$(wc -l < want.zero)" -eq 2 ]
# 256 KiB pieces: several data pieces on each side of the zero runs.
"$SPIGZ" -b 256 -c img > img.gz || fail "spigz -b 256 img"
python3 "$SPZ" info img.gz > pieces || fail "spz.py info img.gz"

section "nbdinfo: read-only, multi-conn, the zero runs as extents"
serve img.gz -- 'nbdinfo "$uri" > nbdinfo.out && nbdinfo --map "$uri" > map.out'
check "nbdinfo ran (status $(status); $(cat log))" [ "$(status)" -eq 0 ]
check "the export's size is the image's ($size)" grep -q "export-size: $size\$" nbdinfo.out
check "the export is read-only" grep -q 'is_read_only: true' nbdinfo.out
check "the export allows multi-conn" grep -q 'can_multi_conn: true' nbdinfo.out
# The map's hole,zero extents (adjacent ones merged) must be the image's
# zero runs exactly; the data extents cover the rest.
awk '$4 == "hole,zero" { if (s != "" && s + l == $1) { l += $2 } else { if (s != "") print s, l; s = $1; l = $2 } }
     END { if (s != "") print s, l }' map.out > got.zero
check "nbdinfo --map: the zero runs at their offsets ($(tr '\n' ' ' < got.zero))" cmp -s want.zero got.zero
total=$(awk '{ t += $2 } END { print t }' map.out)
check "nbdinfo --map covers the image ($total of $size)" [ "$total" = "$size" ]
check "nbdinfo --map: every other extent is data" \
    sh -c '! awk '\''$4 != "hole,zero" && $4 != "data"'\'' map.out | grep -q .'
# Extents asked from inside a data run into a zero run: through nbdkit's
# offset filter, a window from 1 MiB (data) to the middle of the first zero
# run; the map must end with the zero run's first half.
read -r z1 zl1 < want.zero
win=$((z1 + zl1 / 2 - 1048576))
serve img.gz --filter=offset offset=1048576 range=$win -- 'nbdinfo --map "$uri" > map2.out'
check "nbdinfo --map through the offset filter ran ($(cat log))" [ "$(status)" -eq 0 ]
check "a window's map: data, then the zero run from its start ($(tr '\n' ' ' < map2.out))" \
    sh -c "awk 'NR == 1 && \$1 == 0 && \$2 == $((z1 - 1048576)) && \$4 == \"data\" { a = 1 }
               NR == 2 && \$1 == $((z1 - 1048576)) && \$2 == $((zl1 / 2)) && \$4 == \"hole,zero\" { b = 1 }
               END { exit !(a && b && NR == 2) }' map2.out"

section "nbdcopy and qemu-img: the image, byte for byte"
serve img.gz -- 'nbdcopy "$uri" copy1'
check "nbdcopy ran (status $(status); $(cat log))" [ "$(status)" -eq 0 ]
check "nbdcopy: the image" cmp -s img copy1
# The magic key's long form, and the whole content read (extents ignored).
serve "file=$T/img.gz" -- 'nbdcopy --no-extents "$uri" copy2'
check "nbdcopy --no-extents, file=: ran (status $(status); $(cat log))" [ "$(status)" -eq 0 ]
check "nbdcopy --no-extents: the image" cmp -s img copy2
# Four connections and two copies at once, a cache of about one piece:
# readers evict each other's pieces and wait for the same piece.
serve img.gz cache=300K -- 'nbdcopy --connections=4 --requests=8 --request-size=65536 "$uri" copy3 &
    p=$!; nbdcopy --connections=4 --no-extents "$uri" copy4; s=$?; wait $p && [ $s -eq 0 ]'
check "two nbdcopy, four connections each, cache=300K: ran (status $(status); $(cat log))" [ "$(status)" -eq 0 ]
check "concurrent copies: the first is the image" cmp -s img copy3
check "concurrent copies: the second is the image" cmp -s img copy4
if command -v qemu-img >/dev/null 2>&1; then
    serve img.gz -- 'qemu-img convert -f raw -O raw "nbd+unix:///?socket=$unixsocket" copy5'
    check "qemu-img convert ran (status $(status); $(cat log))" [ "$(status)" -eq 0 ]
    # qemu (7.2) rounds an export's size up to 512 bytes, reading the
    # bytes past the end as zeros: those must be zeros, the rest the image.
    qs=$(stat -c %s copy5)
    check "qemu-img convert: the image's size, rounded up to 512 ($qs)" \
        [ "$qs" -eq $(((size + 511) / 512 * 512)) ]
    check "qemu-img convert: zeros past the image's end" \
        [ "$(tail -c +$((size + 1)) copy5 | tr -d '\000' | wc -c)" -eq 0 ]
    truncate -s "$size" copy5
    check "qemu-img convert: the image" cmp -s img copy5
else
    NOTCHECKED="$NOTCHECKED qemu-img convert (qemu-utils is not installed)"
fi

section "damage: the copy fails, nbdkit names the range, the rest reads"
# damage KIND N OUT: OUT is img.gz with a byte in the middle of its Nth piece
# of that kind (data or zero) changed; prints the piece's "UOFF ULEN".
damage() {
    python3 - "$1" "$2" "$3" pieces <<'EOF'
import sys
kind, n, out, info = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
ps = [dict(w.split("=") for w in l.split()[3:]) for l in open(info)
      if l.startswith("piece ") and l.split()[2] == kind]
p = ps[n - 1]
d = bytearray(open("img.gz", "rb").read())
at = int(p["foff"]) + int(p["clen"]) // 2
d[at] ^= 0x55
open(out, "wb").write(d)
print(p["uoff"], p["ulen"])
EOF
}
# the third data piece: inside the first random run, away from both ends.
read -r u l <<EOF
$(damage data 3 bad.gz)
EOF
serve bad.gz -- 'nbdcopy "$uri" bad.out'
check "a damaged data piece: nbdcopy fails (status $(status))" [ "$(status)" -ne 0 ]
check "a damaged data piece: nbdkit names its range (bytes $u to $((u + l)))" \
    grep -q "bad.gz: bytes $u to $((u + l)) of the image" log
if [ "$(status)" -eq 0 ]; then cmp -s img bad.out || fail "a damaged piece copied WRONG bytes"; fi
serve bad.gz --filter=offset offset=0 range="$u" -- 'nbdcopy "$uri" before.out'
check "a damaged data piece: the bytes before it still read ($(cat log))" [ "$(status)" -eq 0 ]
head -c "$u" img > before.want
check "a damaged data piece: the bytes before it are the image's" cmp -s before.want before.out
serve bad.gz --filter=offset offset=$((u + l)) -- 'nbdcopy "$uri" after.out'
check "a damaged data piece: the bytes after it still read ($(cat log))" [ "$(status)" -eq 0 ]
tail -c +$((u + l + 1)) img > after.want
check "a damaged data piece: the bytes after it are the image's" cmp -s after.want after.out
# A damaged zero piece: its extent is the index's claim (a client that
# skips it trusts the index); a client that reads it gets the piece checked.
read -r u l <<EOF
$(damage zero 1 badz.gz)
EOF
serve badz.gz -- 'nbdcopy --no-extents "$uri" badz.out'
check "a damaged zero piece read: nbdcopy fails (status $(status))" [ "$(status)" -ne 0 ]
check "a damaged zero piece read: nbdkit names its range (bytes $u to $((u + l)))" \
    grep -q "badz.gz: bytes $u to $((u + l)) of the image" log
# The backup cut while it is served (after nbdkit opened it): reads fail.
# Not under a sanitizer: with ASan's runtime preloaded, nbdkit's exit after
# these failed reads often deadlocks (glibc's locale lock, in p11-kit's
# destructor), which plain builds never do; tests/check_ra covers the cut.
if [ -z "$PRELOAD" ]; then
    cp img.gz cut.gz
    serve cut.gz -- 'truncate -s 1000000 '"$T"'/cut.gz && nbdcopy --no-extents "$uri" cut.out'
    check "a backup cut while served: nbdcopy fails (status $(status))" [ "$(status)" -ne 0 ]
    check "a backup cut while served: nbdkit says why" grep -q 'cut.gz: .*bytes [0-9]* to [0-9]*' log
else
    echo "NOTE: the backup cut while served is checked in plain builds only (nbdkit's exit deadlocks under a preloaded ASan)"
fi

section "a gzip file without spigz's index: its gzip index, saved and reused"
gzip -c img > plain.gz
serve plain.gz -- 'nbdcopy "$uri" copy6'
check "plain gzip: nbdcopy ran (status $(status); $(cat log))" [ "$(status)" -eq 0 ]
check "plain gzip: the image" cmp -s img copy6
check "plain gzip: the index saved beside it" test -s plain.gz.gzx
serve plain.gz -v -- 'nbdcopy "$uri" copy7'
check "plain gzip again: the image" cmp -s img copy7
check "plain gzip again: the saved index loaded" grep -q "gzip index loaded from the saved index" log
mkdir ix
serve plain.gz "index=$T/ix/plain.index" -- 'nbdcopy "$uri" copy8'
check "index=PATH: the image" cmp -s img copy8
check "index=PATH: saved there" test -s ix/plain.index

section "refusals"
printf 'not gzip\n' > plain.txt
serve plain.txt -- 'true'
check "a file that is not gzip is refused: the command never ran" [ "$(status)" -ne 0 ]
check "a file that is not gzip is refused with vol_open's reason" grep -q "plain.txt: " log
mkdir dir.gz
serve dir.gz -- 'true'
check "a directory is refused" grep -q "dir.gz: not a regular file" log
nbdkit_ -U - "$P" --run true > log 2>&1
sane log
check "no file: refused, saying how to give one" grep -q "no backup given" log
serve img.gz cache=0 -- 'true'
check "cache=0 is refused" grep -q "cache=0: the cache must hold at least one byte" log
serve img.gz size=1 -- 'true'
check "an unknown key is refused" grep -q "unknown parameter 'size'" log

if [ -n "$NOTCHECKED" ]; then
    echo "nbd.sh: $CHECKS checks, $FAILS failed; SKIP: not checked:$NOTCHECKED"
    [ "$FAILS" -eq 0 ] && exit 77
    exit 1
fi
finish

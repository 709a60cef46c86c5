#!/bin/sh
# export_index.sh — the piece index exported for other random-access gzip
# tools (src/core/xidx.c, doc/FORMAT.md section 6), read by the real tools:
# gztool (-I INDEX -b OFFSET -r N) and Python's indexed_gzip
# (IndexedGzipFile(auto_build=False).import_index, seek, read).  Byte ranges
# at the start, inside data pieces, inside zero runs, across piece
# boundaries, past 4 GiB and at the end are compared with the original
# content; each tool must start at the point the index names (gztool's
# "Starting from index point") and never rebuild or extend the index
# (gztool leaves the file byte for byte as it was; indexed_gzip without
# auto_build refuses an offset no point covers).  Contents: mixed data and
# zero runs at -6, -1 (ISA-L where linked) and -0 (stored blocks), a sparse
# 4.5 GiB image with 1 GiB zero pieces, empty and one-byte files, a --rescue
# backup with bad ranges; a gzip file with no index of ours (pigz, gzip and
# spigz members joined: its gzip index, windows and all, section 7 of
# FORMAT.md); the command line's names, refusals and outputs.
# About 12 s.
# POSIX sh (run by $(SHELL), dash on Debian).
# shellcheck source=tests/lib.sh
. "${srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need gztool python3 gzip pigz cmp head tail truncate dd awk timeout
: "${FAULT_SO:?FAULT_SO must point at the fault injection shim (tests/fault.so)}"
[ -f "$FAULT_SO" ] || fail "fault shim $FAULT_SO is missing (make tests/fault.so)"
# indexed_gzip may live in the system's Python only (Debian's
# python3-indexed-gzip), not in a python3 found first on PATH.
IGPY=
for p in python3 /usr/bin/python3; do
    if "$p" -c 'import indexed_gzip' 2>/dev/null; then IGPY=$p; break; fi
done
[ -n "$IGPY" ] || fail "no python3 imports indexed_gzip (Debian: python3-indexed-gzip)"
[ "$FAILS" -eq 0 ] || { finish; exit 1; }

M=1048576
G=1073741824
cd "$T" || exit 1

# ---- helpers ----

# gen.py OUT SEG...: OUT is the segments KIND:N in turn: r random, t text,
# z zeros.  Deterministic.
cat > gen.py <<'EOF'
import random, sys
out, segs = sys.argv[1], sys.argv[2:]
r = random.Random(out)
words = b"the of and disk image block device sparse zero chunk stream member index".split()
with open(out, "wb") as f:
    for s in segs:
        kind, n = s.split(":")
        n = int(n)
        if kind == "r":
            f.write(r.randbytes(n))
        elif kind == "z":
            f.write(bytes(n))
        else:
            t = b" ".join(r.choice(words) for _ in range(n // 4 + 1))
            f.write(t[:n])
EOF

# ig.py GZ INDEX CONTENT OFF:N...: read each range through indexed_gzip,
# each with a fresh object (a buffered reader could otherwise serve a seek
# from what it read before) that may not build: "ok OFF" or "FAIL ...".
# Then the seek points must be the pieces' (uoff, foff) and the end, read
# from the file INFO (spz.py info); "all" reads the whole content through
# one object, across the trailing index members.
cat > ig.py <<'EOF'
import sys, indexed_gzip as ig
gz, idx, content, info = sys.argv[1:5]
ref = open(content, "rb")
def piece(line):
    kv = dict(w.split("=") for w in line.split() if "=" in w)
    return int(kv["uoff"]), int(kv["foff"])
lines = open(info).read().splitlines()
head = dict(w.split("=") for w in lines[0].split())
want = [piece(l) for l in lines[1:]]
want.append((int(head["total"]), int(head["data_len"]) - 10))
def opened():
    f = ig.IndexedGzipFile(gz, auto_build=False)
    f.import_index(idx)
    return f
f = opened()
got = list(f.seek_points())
print("points ok" if got == want else "FAIL points %s != %s" % (got[:4], want[:4]))
for r in sys.argv[5:]:
    if r == "all":
        ref.seek(0)
        print("ok all" if opened().read() == ref.read() else "FAIL all")
        continue
    off, n = map(int, r.split(":"))
    f = opened()
    f.seek(off)
    data = f.read(n)
    ref.seek(off)
    if data == ref.read(n):
        print("ok %d" % off)
    else:
        print("FAIL %d: bytes differ (%d read)" % (off, len(data)))
EOF

# one_point.py INDEX OUT: the indexed_gzip index cut to its first point.
cat > one_point.py <<'EOF'
import struct, sys
d = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(d[:31] + struct.pack("<I", 1) + d[35:53])
EOF

# piece_at INFO OFF: "K FOFF UOFF" of the point gztool must start from for
# offset OFF (1-based, as it counts them): the last piece at or before OFF.
piece_at() {
    awk -v off="$2" '$1 == "piece" {
        split($6, f, "="); split($7, u, "=")
        if (u[2] + 0 <= off + 0) { k = $2 + 1; fo = f[2]; uo = u[2] }
    } END { print k, fo, uo }' "$1"
}

# uoff_of INFO KIND N: the offset in the content of the Nth piece (from 1)
# of that kind (data or zero).
uoff_of() {
    awk -v kind="$2" -v n="$3" '$1 == "piece" && $3 == kind && ++seen == n {
        split($7, u, "="); print u[2]; exit }' "$1"
}

# ref CONTENT OFF N: the N bytes of CONTENT at OFF (tail seeks in a file).
ref() { tail -c +$(($2 + 1)) "$1" | head -c "$3"; }

# export_both GZ: GZ.gzi and GZ.igz by spigz --export-index -o, GZ.info from
# spz.py; the sizes must be the formats' for pieces + 1 points.
export_both() {
    python3 "$srcdir/tests/py/spz.py" info "$1" > "$1.info" || fail "spz.py info $1"
    pieces=$(sed -n '1s/.* pieces=\([0-9]*\).*/\1/p' "$1.info")
    if "$SPIGZ" -f --export-index=gztool -o "$1.gzi" "$1" 2> xerr; then pass; else fail "export gztool $1: $(cat xerr)"; fi
    if "$SPIGZ" -f --export-index=indexed_gzip -o "$1.igz" "$1" 2> xerr; then pass; else fail "export indexed_gzip $1: $(cat xerr)"; fi
    check "$1: gztool index of $pieces + 1 points is $((40 + 24 * (pieces + 1))) bytes" \
        test "$(wc -c < "$1.gzi")" -eq $((40 + 24 * (pieces + 1)))
    check "$1: indexed_gzip index of $pieces + 1 points is $((35 + 18 * (pieces + 1))) bytes" \
        test "$(wc -c < "$1.igz")" -eq $((35 + 18 * (pieces + 1)))
    cp "$1.gzi" "$1.gzi.orig"
}

# gzt GZ CONTENT OFF N: gztool extracts the range through the index, from
# the index's point for it, and leaves the index as it was.
gzt() {
    timeout "$HANG" gztool -v 2 -I "$1.gzi" -b "$3" -r "$4" "$1" > gzt.out 2> gzt.err
    rc=$?
    check "gztool -b $3 -r $4 $1: status 0 (rc=$rc: $(tail -c 300 gzt.err))" test "$rc" -eq 0
    ref "$2" "$3" "$4" > gzt.ref
    check "gztool -b $3 -r $4 $1: the content's bytes ($(wc -c < gzt.out) read)" \
        cmp -s gzt.out gzt.ref
    piece_at "$1.info" "$3" > gzt.pt
    read -r k fo uo < gzt.pt
    check "gztool -b $3 $1 starts at point $k (@$fo->$uo): $(grep 'Starting from' gzt.err)" \
        grep -q "Starting from index point $k (@$fo->$uo," gzt.err
    check "gztool -b $3 $1 does not rewrite the index" \
        sh -c '! grep -q -e "Index written" -e "Updated index" gzt.err'
    check "gztool -b $3 $1: the index file is unchanged" cmp -s "$1.gzi" "$1.gzi.orig"
}

# gzt_all GZ CONTENT: gztool from offset 0 to the end of the file, across
# the trailing index members, without -r.
gzt_all() {
    timeout "$HANG" gztool -I "$1.gzi" -b 0 "$1" > gzt.out 2> gzt.err
    rc=$?
    check "gztool -b 0 $1 (to the end): status 0 (rc=$rc: $(tail -c 300 gzt.err))" test "$rc" -eq 0
    check "gztool -b 0 $1 (to the end): the whole content" cmp -s gzt.out "$2"
    check "gztool -b 0 $1 (to the end): the index file is unchanged" \
        cmp -s "$1.gzi" "$1.gzi.orig"
}

# igz GZ CONTENT RANGE...: indexed_gzip reads the ranges (ig.py).
igz() {
    gz=$1 content=$2
    shift 2
    timeout "$HANG" "$IGPY" ig.py "$gz" "$gz.igz" "$content" "$gz.info" "$@" > igz.out 2> igz.err
    rc=$?
    check "indexed_gzip on $gz: status 0 (rc=$rc: $(tail -c 300 igz.err))" test "$rc" -eq 0
    check "indexed_gzip on $gz: the seek points are the pieces' and the end's" \
        grep -qx "points ok" igz.out
    for r in "$@"; do
        case $r in all) o=all ;; *) o=${r%%:*} ;; esac
        check "indexed_gzip on $gz at $r: the content's bytes ($(grep "$o" igz.out | head -1))" \
            grep -qx "ok $o" igz.out
    done
}

# both GZ CONTENT OFF:N...: both tools read every range.
both() {
    gz=$1 content=$2
    shift 2
    for r in "$@"; do
        [ "$r" = all ] && continue
        gzt "$gz" "$content" "${r%%:*}" "${r#*:}"
    done
    igz "$gz" "$content" "$@"
}

# ---- mixed data and zero runs, three levels ----

# data 3 MiB + 12345, zeros 5 MiB + 777, text 2.5 MB, zeros 20 MiB, data
# 700001: data pieces of 1 MiB and shorter, zero pieces of 5 and 20 MiB.
python3 gen.py mixed r:$((3 * M + 12345)) z:$((5 * M + 777)) t:2500000 z:$((20 * M)) r:700001
TOTAL=$(wc -c < mixed)
for lv in 6 1 0; do
    has_level "$lv" "the export of mixed data at -$lv" || continue
    gz=mixed-$lv.gz
    "$SPIGZ" -$lv -c mixed > "$gz" || fail "spigz -$lv"
    export_both "$gz"
    Z1=$(uoff_of "$gz.info" zero 1)   # the first zero run: data before it
    D5=$(uoff_of "$gz.info" data 5)   # the data after it
    D8=$(uoff_of "$gz.info" data 8)   # the last data piece, after 20 MiB of zeros
    check "$gz: pieces as expected ($Z1 $D5 $D8)" test "$Z1" -gt $((3 * M)) -a "$D5" -gt $((8 * M)) \
        -a "$D8" -gt $((30 * M))
    both "$gz" mixed 0:100000 $((M + 54321)):100000 $((4 * M)):100000 \
        $((M - 5000)):$((3 * M)) $((Z1 - 7)):20 $((D5 - 3)):10 $((9 * M)):$((22 * M)) \
        $((D8 - 1)):2 $((TOTAL - 100)):1000 $((TOTAL - 1)):1 all
    gzt_all "$gz" mixed
done

# ---- a sparse 4.5 GiB image: offsets past 4 GiB, 1 GiB zero pieces ----

truncate -s $((4 * G + G / 2)) sparse
python3 gen.py d1 r:$((2 * M))
python3 gen.py d2 t:$((3 * M / 2))
dd if=d1 of=sparse bs=1M seek=100 conv=notrunc 2>/dev/null
dd if=d2 of=sparse bs=1M seek=4400 conv=notrunc 2>/dev/null
"$SPIGZ" -c sparse > sparse.gz || fail "spigz sparse"
export_both sparse.gz
check "the sparse image has 1 GiB zero pieces" grep -q "zero ulen=$G " sparse.gz.info
S=$((4 * G + G / 2))
both sparse.gz sparse 0:1000 $((100 * M + 12345)):$((2 * M)) $((102 * M + G + G / 2)):4096 \
    $((4400 * M - 1000)):5000 $((4400 * M + M + 777)):$((M / 2)) $((S - 100)):1000

# ---- empty and one-byte contents ----

: > empty
printf 'x' > one
# indexed_gzip 1.7.0's read() to the end never returns on an empty
# content, any gzip file's (gzip -c of nothing too): a read of a size does.
for f in empty one; do
    "$SPIGZ" -c "$f" > "$f.gz" || fail "spigz $f"
    export_both "$f.gz"
    gzt_all "$f.gz" "$f"
done
igz empty.gz empty 0:10
igz one.gz one 0:10 all

# ---- a --rescue backup: its bad ranges are zeros in ordinary pieces ----

python3 gen.py sick r:$((2 * M)) z:$((M / 2)) r:$((M + 4321))
env LD_PRELOAD="$FAULT_SO" FAULT_EIO_FILE="$T/sick" \
    FAULT_EIO_RANGES="$((M / 2))+4096,$((2 * M + M / 2 + 512))+1024" \
    "$SPIGZ" --rescue -c "$T/sick" > sick.gz 2> rescue.err
rc=$?
check "--rescue with bad sectors: status 2 (rc=$rc: $(head -c 200 rescue.err))" test "$rc" -eq 2
gzip -dc sick.gz > sick.read
check "the rescued content differs from the disk's where it was bad" sh -c '! cmp -s sick sick.read'
python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); print(d[-78 + 17] & 1)' sick.gz > flags
check "the backup's footer says bad ranges follow the pieces (flag 1: $(cat flags))" grep -qx 1 flags
export_both sick.gz
both sick.gz sick.read 0:$((M / 2 + 10000)) $((M / 2 + 4000)):200 \
    $((2 * M + M / 2)):$((M / 2)) all
gzt_all sick.gz sick.read

# ---- the tools do not build what the index lacks ----

# A point missing: indexed_gzip without auto_build refuses the offset.
python3 one_point.py mixed-6.gz.igz cut.igz
"$IGPY" - mixed-6.gz cut.igz > cut.out 2>&1 <<'EOF'
import sys, indexed_gzip as ig
f = ig.IndexedGzipFile(sys.argv[1], auto_build=False)
f.import_index(sys.argv[2])
try:
    f.seek(20000000)
    f.read(10)
    print("read")
except ig.NotCoveredError:
    print("not covered")
EOF
check "indexed_gzip, auto_build off, a one-point index: 20000000 not covered ($(cat cut.out))" \
    grep -qx "not covered" cut.out

# What the index is checked against: indexed_gzip refuses it for another
# file (its compressed size); spigz refuses a file without an index.
"$IGPY" - mixed-0.gz mixed-6.gz.igz > other.out 2>&1 <<'EOF'
import sys, indexed_gzip as ig
f = ig.IndexedGzipFile(sys.argv[1], auto_build=False)
try:
    f.import_index(sys.argv[2])
    print("imported")
except Exception as e:
    print("refused", type(e).__name__)
EOF
check "indexed_gzip refuses the index of another file ($(cat other.out))" grep -q "^refused" other.out
# Any other gzip file exports its gzip index (restore/gzx.h), windows and
# all: pigz's output, gzip -1's and a spigz file joined (members of every
# kind, the spigz file's index not at the start), read by both tools at
# offsets across the members, neither tool rebuilding nor extending the
# index; a file that is not gzip is refused, nothing left.
pigz -p 2 -c mixed > pigz.gz
gzip -1 -c mixed > g1.gz
cat pigz.gz g1.gz mixed-6.gz > foreign.gz
cat mixed mixed mixed > foreign
for f in gztool indexed_gzip; do
    "$SPIGZ" --export-index=$f -o foreign.$f foreign.gz 2> xerr
    check "--export-index=$f of a file with no index of its own: status 0 ($(cat xerr))" test $? -eq 0
done
cp foreign.gztool foreign.gztool.orig
for r in 0:100000 $((5 * M)):300000 $((TOTAL - 1000)):5000 $TOTAL:70000 \
    $((2 * TOTAL + 777)):100000 $((3 * TOTAL - 1000)):1000; do
    off=${r%:*} n=${r#*:}
    timeout "$HANG" gztool -v 2 -I foreign.gztool -b "$off" -r "$n" foreign.gz > gzt.out 2> gzt.err
    ref foreign "$off" "$n" > gzt.ref
    check "gztool on a foreign file's index, -b $off -r $n: the content's bytes" cmp -s gzt.out gzt.ref
    check "gztool on a foreign file's index, -b $off: from an index point" \
        grep -q "Starting from index point" gzt.err
done
check "gztool on a foreign file's index: the index file is unchanged" \
    cmp -s foreign.gztool foreign.gztool.orig
timeout "$HANG" "$IGPY" - foreign.gz foreign.indexed_gzip foreign "$TOTAL" > fig.out 2>&1 <<'EOF'
import sys, indexed_gzip as ig
gz, idx, content, total = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
ref = open(content, "rb").read()
for off in (0, 5 << 20, total - 1000, total, 2 * total + 777, 3 * total - 1000):
    f = ig.IndexedGzipFile(gz, auto_build=False)
    f.import_index(idx)
    f.seek(off)
    print("ok" if f.read(100000) == ref[off:off + 100000] else "FAIL %d" % off)
EOF
check "indexed_gzip on a foreign file's index: every range ($(tr '\n' ' ' < fig.out))" \
    test "$(grep -c '^ok$' fig.out)" -eq 6
"$SPIGZ" --export-index=gztool mixed 2> xerr
rc=$?
check "no export from a file that is not gzip (rc=$rc: $(cat xerr))" test "$rc" -eq 1
check "no export from a file that is not gzip: the file named" \
    grep -q "^spigz: mixed: no index to export" xerr
check "no export from a file that is not gzip: no index left" test ! -e mixed.gzi

# The command line: default names beside the file (FILE.gz -> FILE.gzi,
# FILE.gzidx), the same bytes as with -o and -c, an existing index kept
# without -f (status 2), an unknown format refused, and the index read by
# gztool under its default name with no -I.
cp mixed-6.gz named.gz
"$SPIGZ" --export-index=gztool named.gz 2> xerr
check "--export-index=gztool FILE.gz: status 0 ($(cat xerr))" test $? -eq 0
check "--export-index=gztool FILE.gz writes FILE.gzi as -o does" cmp -s named.gzi mixed-6.gz.gzi
"$SPIGZ" --export-index=indexed_gzip named.gz 2> xerr
check "--export-index=indexed_gzip FILE.gz writes FILE.gzidx as -o does" cmp -s named.gzidx mixed-6.gz.igz
"$SPIGZ" --export-index=indexed_gzip -c named.gz > stdout.igz 2> xerr
check "--export-index -c: the same bytes on stdout" cmp -s stdout.igz mixed-6.gz.igz
"$SPIGZ" --export-index=indexed_gzip -c < named.gz > stdin.igz 2> xerr
check "--export-index -c < FILE: the same bytes" cmp -s stdin.igz mixed-6.gz.igz
echo keep > named.gzi
"$SPIGZ" --export-index=gztool named.gz 2> xerr
rc=$?
check "an existing index is kept without -f (rc=$rc, $(cat xerr))" test "$rc" -eq 2
check "an existing index is kept without -f: its bytes" grep -qx keep named.gzi
"$SPIGZ" -f --export-index=gztool named.gz 2> xerr
check "-f replaces it" cmp -s named.gzi mixed-6.gz.gzi
"$SPIGZ" --export-index=zran named.gz 2> xerr
rc=$?
check "an unknown format is refused (rc=$rc)" test "$rc" -eq 1
check "an unknown format is refused: the formats named" grep -q "expected gztool or indexed_gzip" xerr
rm -f named.gzi
"$SPIGZ" --export-index=gztool named.gz 2> xerr
gztool -b 1000 named.gz 2> gzt.err | head -c 5000 > gzt.out
ref mixed 1000 5000 > gzt.ref
check "gztool finds FILE.gzi by itself and reads through it" cmp -s gzt.out gzt.ref

finish

#!/bin/bash
# salvage.sh — damaged backups with an index (--salvage), and verifying a
# backup against its disk (--compare).
#
# --salvage through the index: every data piece whose bytes are damaged is
# restored as zeros at its place and listed (message, -v, --bad-map); every
# other byte is the original's; status 1; the same output to a file, a
# pipe, at -p1 and -p2.  A damaged zero piece's content is known (zeros).
# Without --salvage the damage is an error and no output is left.
#
# --compare BACKUP TARGET: status 0 when the target holds the image, 1 with
# the exact ranges that differ; a sparse target's holes are zeros; a target
# past the image's end is not compared; a damaged backup is an error, never
# "identical".  Statuses are cmp's: 2 for trouble (a damaged backup, a
# target that cannot be read, which the message names: never the backup).
# Targets of every kind end: a character device (/dev/null, /dev/zero), a
# FIFO, a short file.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=tests/lib.sh
. "${srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need python3 cmp gzip ddrescuelog losetup truncate timeout mkfifo
: "${FAULT_SO:?FAULT_SO must point at the fault injection shim (tests/fault.so)}"
[ -f "$FAULT_SO" ] || fail "fault shim $FAULT_SO is missing (make tests/fault.so)"

M=$((1024 * 1024))
IMG=$T/img
python3 - "$IMG" <<'EOF'
import random, sys
r = random.Random(11)
M = 1 << 20
d = bytearray(24 * M)
d[0:6 * M] = r.randbytes(6 * M)          # pieces 0-5
d[10 * M:12 * M] = r.randbytes(2 * M)    # pieces after a zero run
d[23 * M + 9:24 * M] = r.randbytes(M - 9)
open(sys.argv[1], "wb").write(d)
EOF
"$SPIGZ" -c "$IMG" > "$T/img.gz"

# The pieces from the index, "k kind foff clen uoff ulen" each (tests/py/spz.py
# reads FORMAT.md independently of spigz; foff is the piece's file offset).
python3 "$srcdir/tests/py/spz.py" info "$T/img.gz" |
    sed -n 's/^piece \([0-9]*\) \([a-z]*\) ulen=\([0-9]*\) clen=\([0-9]*\) foff=\([0-9]*\) uoff=\([0-9]*\)$/\1 \2 \5 \4 \6 \3/p' > "$T/pieces"
[ -s "$T/pieces" ] || fail "tests/py/spz.py cannot list the pieces"

# flip FILE OFFSET...: xor 0x5a into the bytes at those file offsets.
flip() {
    python3 - "$@" <<'EOF'
import sys
p = sys.argv[1]
d = bytearray(open(p, "rb").read())
for o in sys.argv[2:]:
    d[int(o)] ^= 0x5a
open(p, "wb").write(d)
EOF
}
# piece_at KIND N: "foff clen uoff ulen" of the N-th piece of that kind.
piece_at() { awk -v k="$1" -v n="$2" '$2 == k { if (i++ == n) { print $3, $4, $5, $6; exit } }' "$T/pieces"; }

# expect FILE RANGES: FILE is the image with RANGES (OFF+LEN,...) zeroed.
expect() {
    python3 - "$IMG" "$1" "$2" <<'EOF'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
for r in filter(None, sys.argv[3].split(",")):
    a, n = (int(x) for x in r.split("+"))
    d[a:a + n] = bytes(n)
got = open(sys.argv[2], "rb").read()
if got != bytes(d):
    i = next((i for i in range(min(len(got), len(d))) if got[i] != d[i]), min(len(got), len(d)))
    sys.exit(f"differs at {i} ({len(got)} vs {len(d)} bytes)")
EOF
}

section "damaged data pieces, through the index"
read -r c1 l1 u1 n1 <<< "$(piece_at data 1)"
read -r c2 _ u2 n2 <<< "$(piece_at data 6)"
cp "$T/img.gz" "$T/d.gz"
flip "$T/d.gz" $((c1 + l1 / 2)) $((c2 + 3))
WANT="$u1+$n1,$u2+$n2"
"$SPIGZ" -d -o "$T/plain" "$T/d.gz" 2> /dev/null
check "without --salvage: status 1, no output left" sh -c "[ $? -eq 1 ] && [ ! -e '$T/plain' ]"
"$SPIGZ" -d --salvage -v --bad-map "$T/map" -o "$T/out" "$T/d.gz" 2> "$T/err"
check "--salvage: status 1" test $? -eq 1
check "--salvage: the output holds the image but for the damaged pieces, zeros" expect "$T/out" "$WANT"
check "--salvage: the message counts them" grep -q "d.gz: $((n1 + n2)) bytes in 2 ranges damaged, restored as zeros (first at offset $u1)" "$T/err"
check "--salvage -v: lists each range" sh -c "grep -q ': bad $u1+$n1' '$T/err' && grep -q ': bad $u2+$n2' '$T/err'"
check "--salvage: the map's bad areas are the damaged pieces" test "$(map_bad "$T/map")" = "$WANT"
check "--salvage: ddrescuelog reads the map" sh -c "ddrescuelog -t '$T/map' | grep -q 'bad-sector: *[0-9]'"
"$SPIGZ" -dc --salvage -p1 "$T/d.gz" > "$T/out1" 2> /dev/null
check "--salvage -p1 to a pipe: the same bytes" cmp -s "$T/out1" "$T/out"
"$SPIGZ" -d --salvage -p2 --sparse=never -o "$T/out2" "$T/d.gz" 2> /dev/null
check "--salvage, not sparse: the same bytes" cmp -s "$T/out2" "$T/out"
"$SPIGZ" -t --salvage "$T/d.gz" 2> "$T/err"
check "-t --salvage: status 1 and the same report" sh -c "[ $? -eq 1 ] && grep -q 'in 2 ranges damaged' '$T/err'"

section "a damaged zero piece: its content is known"
read -r cz lz _ _ <<< "$(piece_at zero 0)"
cp "$T/img.gz" "$T/z.gz"
flip "$T/z.gz" $((cz + lz / 2))
"$SPIGZ" -d --salvage -o "$T/outz" "$T/z.gz" 2> "$T/err"
check "--salvage: status 1 (the file is damaged)" test $? -eq 1
check "--salvage: the image whole (the zero piece from the index)" cmp -s "$T/outz" "$IMG"
check "--salvage: says a zero piece was restored from the index" grep -q "1 zero piece was damaged, restored from the index" "$T/err"

section "a damaged trailer: the index checks every piece instead"
cp "$T/img.gz" "$T/t.gz"
python3 - "$T/t.gz" <<'EOF2'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
data_len = struct.unpack("<Q", d[-78 + 28:-78 + 36])[0]
d[data_len - 7] ^= 0xff   # a byte of the data member's CRC-32
open(sys.argv[1], "wb").write(d)
EOF2
"$SPIGZ" -d -o "$T/tplain" "$T/t.gz" 2> /dev/null
check "without --salvage: status 1 (gzip's crc error), no output" sh -c "[ $? -eq 1 ] && [ ! -e '$T/tplain' ]"
"$SPIGZ" -d --salvage -o "$T/tout" "$T/t.gz" 2> "$T/err"
check "--salvage: status 1" test $? -eq 1
check "--salvage: the whole image, every piece checked against the index" cmp -s "$T/tout" "$IMG"
check "--salvage: says the trailer is damaged" grep -q "trailer is damaged: every piece was checked against the index" "$T/err"

section "a damaged index: the data member decodes as any gzip file"
read -r pay <<< "$(python3 "$srcdir/tests/py/spz.py" info "$T/img.gz" | sed -n 's/.*data_len=\([0-9]*\).*/\1/p')"
cp "$T/img.gz" "$T/i.gz"
flip "$T/i.gz" $((pay + 20))
"$SPIGZ" -d --salvage -o "$T/iout" "$T/i.gz" 2> "$T/err"
check "--salvage: the image, the index not used (status 2: a warning)" \
    sh -c "[ $? -eq 2 ] && cmp -s '$T/iout' '$IMG' && grep -q 'index not used' '$T/err'"

section "a forged, self-consistent index on an intact file: gunzip's bytes, never the index's offsets"
# Every checksum of FORMAT.md 4 recomputed (tests/py/spz.py forge_consistent):
# move (a piece claims more bytes, a later one fewer) and swap (two data
# pieces, not adjacent, swap their lengths), so that the pieces between sit
# elsewhere.  Salvage took the pieces that failed for damage and placed the
# others at the offsets the index claims: wrong bytes outside the ranges it
# reported (status 1).  The data member decodes whole: the index is wrong.
FC=$T/fc
python3 -c 'import random, sys
r = random.Random(3)
with open(sys.argv[1], "wb") as f:
    f.write(r.randbytes(1 << 20)); f.write(r.randbytes(100 << 10)); f.write(bytes(2 << 20))
    f.write(r.randbytes(1536 << 10))' "$FC"
"$SPIGZ" -c "$FC" > "$T/fc.gz"
mkdir -p "$T/fcd"
python3 "$srcdir/tests/py/spz.py" forge_consistent "$T/fc.gz" "$T/fcd" || fail "spz.py forge_consistent failed"
for f in move swap; do
    check "$f: the forged file is a valid gzip file" gzip -t "$T/fcd/$f.gz"
    rm -f "$T/fo"
    "$SPIGZ" -d --salvage -o "$T/fo" "$T/fcd/$f.gz" 2> "$T/err"
    rc=$?
    check "$f: -d --salvage: gunzip's bytes ($(cmp "$T/fo" "$FC" 2>&1 | head -1))" cmp -s "$T/fo" "$FC"
    check "$f: -d --salvage: status 2, the index not used, no damage claimed (RC=$rc: $(head -c 300 "$T/err"))" \
        sh -c "[ $rc -eq 2 ] && grep -q 'index not used' '$T/err' && ! grep -q damaged '$T/err'"
    "$SPIGZ" -dc --salvage -p2 "$T/fcd/$f.gz" 2> /dev/null | cat > "$T/fo"
    check "$f: -dc --salvage to a pipe: gunzip's bytes" cmp -s "$T/fo" "$FC"
    "$SPIGZ" -dc --salvage -p1 "$T/fcd/$f.gz" > "$T/fo" 2> /dev/null
    check "$f: -dc --salvage -p1 to a file: gunzip's bytes" cmp -s "$T/fo" "$FC"
    "$SPIGZ" -t --salvage "$T/fcd/$f.gz" 2> "$T/err"
    check "$f: -t --salvage: status 2 (the index), no damage claimed" \
        sh -c "[ $? -eq 2 ] && ! grep -q damaged '$T/err'"
done
# The same forgery on a damaged file: the data member is damaged, so the
# index's lengths are what salvage has (FORMAT.md 5): its damage is listed
cp "$T/fcd/move.gz" "$T/fdm.gz"
flip "$T/fdm.gz" 2000000
rm -f "$T/fo"
"$SPIGZ" -d --salvage -o "$T/fo" "$T/fdm.gz" 2> "$T/err"
check "a forged index on a damaged file: status 1, damage listed" \
    sh -c "[ $? -eq 1 ] && grep -q 'damaged, restored as zeros' '$T/err'"

section "the same damage and an intact file agree"
"$SPIGZ" -d --salvage -o "$T/outok" "$T/img.gz" 2> "$T/err"
check "--salvage of an intact file: status 0, the image, no message" \
    sh -c "[ $? -eq 0 ] && cmp -s '$T/outok' '$IMG' && [ ! -s '$T/err' ]"

section "--compare"
"$SPIGZ" --compare "$T/img.gz" "$IMG" 2> "$T/err"
check "identical: status 0, silent" sh -c "[ $? -eq 0 ] && [ ! -s '$T/err' ]"
"$SPIGZ" --compare -v "$T/img.gz" "$IMG" 2> "$T/err"
check "identical -v: says so" grep -q "img: identical to $T/img.gz (25165824 bytes)" "$T/err"
cp --sparse=always "$IMG" "$T/sparse"
"$SPIGZ" --compare "$T/img.gz" "$T/sparse"
check "a sparse copy: identical" test $? -eq 0
cp "$IMG" "$T/mod"
python3 - "$T/mod" <<'EOF'
import sys
p = sys.argv[1]
d = bytearray(open(p, "rb").read())
d[3000000] ^= 1                     # in data
d[8000000:8000010] = b"0123456789"  # in zeros
d[11 * 1048576 + 5] ^= 0xff
open(p, "wb").write(d)
EOF
"$SPIGZ" --compare -v --bad-map "$T/cmap" "$T/img.gz" "$T/mod" 2> "$T/err"
check "modified: status 1" test $? -eq 1
check "modified: the message counts the bytes and ranges" grep -q "mod: differs from $T/img.gz: 12 bytes in 3 ranges (first at 3000000, 8000000, 11534341)" "$T/err"
check "modified -v: each range" sh -c "grep -q 'differs 8000000+10' '$T/err'"
check "modified: the map marks them" test "$(map_bad "$T/cmap")" = "3000000+1,8000000+10,11534341+1"
head -c $((20 * M)) "$IMG" > "$T/short"
"$SPIGZ" --compare "$T/img.gz" "$T/short" 2> "$T/err"
check "a shorter target: status 1, the missing end differs" \
    sh -c "[ $? -eq 1 ] && grep -q 'differs from .*: $((4 * M)) bytes in 1 range (first at $((20 * M)))' '$T/err'"
cp "$IMG" "$T/long"
head -c 4096 /dev/urandom >> "$T/long"
"$SPIGZ" --compare -v "$T/img.gz" "$T/long" 2> "$T/err"
check "a longer target: status 0, the rest not compared" \
    sh -c "[ $? -eq 0 ] && grep -q '4096 bytes past the image' '$T/err'"
"$SPIGZ" --compare "$T/d.gz" "$IMG" 2> "$T/err"
check "a damaged backup is trouble (status 2), never identical" \
    sh -c "[ $? -eq 2 ] && ! grep -q identical '$T/err' && grep -q 'd.gz' '$T/err'"
gzip -c "$IMG" > "$T/foreign.gz"
"$SPIGZ" --compare "$T/foreign.gz" "$T/mod" 2> "$T/err"
check "a gzip file (sequential): the same differences" grep -q "differs from .*: 12 bytes in 3 ranges" "$T/err"
"$SPIGZ" --compare "$T/foreign.gz" "$IMG"
check "a gzip file: identical" test $? -eq 0
if LOOPDEV=$(losetup --find --show "$T/mod" 2>/dev/null); then
    "$SPIGZ" --compare "$T/img.gz" "$LOOPDEV" 2> "$T/err"
    check "a device: the same differences" grep -q "differs from .*: 12 bytes in 3 ranges" "$T/err"
    losetup -d "$LOOPDEV"
    LOOPDEV=
else
    fail "cannot attach a loop device"
fi

section "--compare: targets of every kind end, read errors are the target's"
# (a 60 s bound: before the fix /dev/null and /dev/zero spun for ever)
for gz in img.gz foreign.gz; do
    timeout "$HANG" "$SPIGZ" --compare "$T/$gz" /dev/null 2> "$T/err"
    check "$gz against /dev/null: it ends, status 1, all of it differs" \
        sh -c "[ $? -eq 1 ] && grep -q '/dev/null: differs from .*: $((24 * M)) bytes in 1 range (first at 0)' '$T/err'"
    timeout "$HANG" "$SPIGZ" --compare "$T/$gz" /dev/zero 2> "$T/err"
    check "$gz against /dev/zero: it ends, status 1, the data differs" \
        sh -c "[ $? -eq 1 ] && grep -q '/dev/zero: differs from ' '$T/err'"
done
zimg=$T/zimg
head -c $((3 * M)) /dev/zero > "$zimg"
"$SPIGZ" -c "$zimg" > "$T/zimg.gz"
timeout "$HANG" "$SPIGZ" --compare "$T/zimg.gz" /dev/zero 2> "$T/err"
check "an image of zeros against /dev/zero: identical (status 0)" sh -c "[ $? -eq 0 ] && [ ! -s '$T/err' ]"
mkfifo "$T/fifo"
for what in whole short long; do
    case $what in
        whole) feed() { cat "$IMG"; } ;;
        short) feed() { head -c $((5 * M + 3)) "$IMG"; } ;;
        long) feed() { cat "$IMG" "$IMG"; } ;;
    esac
    feed > "$T/fifo" 2> /dev/null &
    fpid=$!
    timeout "$HANG" "$SPIGZ" --compare -v "$T/img.gz" "$T/fifo" 2> "$T/err"
    rc=$?
    kill "$fpid" 2> /dev/null
    wait "$fpid" 2> /dev/null
    case $what in
        whole|long) check "a FIFO holding the image ($what): status 0, identical" \
            sh -c "[ $rc -eq 0 ] && grep -q 'fifo: identical to' '$T/err'" ;;
        short) check "a FIFO holding less: status 1, the rest differs" \
            sh -c "[ $rc -eq 1 ] && grep -q 'fifo: differs from .*: $((19 * M - 3)) bytes in 1 range (first at $((5 * M + 3)))' '$T/err'" ;;
    esac
done
"$SPIGZ" --compare "$T/img.gz" < "$IMG" /dev/stdin 2> "$T/err"
check "standard input (a file) as the target: identical" test $? -eq 0
cat "$IMG" | "$SPIGZ" --compare "$T/img.gz" /dev/stdin 2> "$T/err"
check "standard input (a pipe) as the target: identical" test $? -eq 0
# A bad sector of the target: the error names the target, status 2 (cmp's
# trouble): never the backup, never "differs"
for gz in img.gz foreign.gz; do
    LD_PRELOAD=$FAULT_SO FAULT_EIO_FILE=$IMG FAULT_EIO_RANGES=$((11 * M))+4096 \
        "$SPIGZ" --compare "$T/$gz" "$IMG" 2> "$T/err"
    rc=$?
    check "$gz, a target read error: status 2 (trouble), not 1 (RC=$rc)" test "$rc" -eq 2
    check "$gz, a target read error: the message names the target ($(head -c 200 "$T/err"))" \
        grep -q "^spigz: $IMG: read error.*Input/output error" "$T/err"
    check "$gz, a target read error: the backup is not blamed" sh -c "! grep -q '$gz' '$T/err'"
done
LD_PRELOAD=$FAULT_SO FAULT_EIO_FILE=$T/img.gz FAULT_EIO_RANGES=100000+4096 \
    "$SPIGZ" --compare "$T/img.gz" "$IMG" 2> "$T/err"
check "a backup read error: status 2, the backup named" \
    sh -c "[ $? -eq 2 ] && grep -q 'img.gz: read error' '$T/err'"
"$SPIGZ" --compare "$T/img.gz" "$T/nonexistent" 2> "$T/err"
check "a missing target: status 2" sh -c "[ $? -eq 2 ] && grep -q 'nonexistent: No such file' '$T/err'"

"$SPIGZ" --compare "$T/img.gz" 2> "$T/err"
check "--compare with one operand: usage error" sh -c "[ $? -eq 1 ] && grep -q 'compare takes a backup' '$T/err'"

finish

#!/bin/bash
# rescue.sh — backing up a failing disk (--rescue, --bad-map): bad sectors
# from the fault shim (tests/fault.so: EIO on chosen byte ranges of one
# file or device, flaky sectors, short reads).  The backup must restore to
# the input with exactly the bad sectors zeroed, list them (message, -l -v,
# the index, a ddrescue mapfile that GNU ddrescue reads and fills in), give
# status 2, keep the input, and be the same bytes whatever -p and the read
# sizes.  Without --rescue the first error ends the run with its offset.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=tests/lib.sh
. "${srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need python3 cmp timeout ddrescue ddrescuelog losetup
: "${FAULT_SO:?FAULT_SO must point at the fault injection shim (tests/fault.so)}"
[ -f "$FAULT_SO" ] || fail "fault shim $FAULT_SO is missing (make tests/fault.so)"

M=$((1024 * 1024))
IMG=$T/disk.img
# 12 MiB: random data, a zero stretch, random data (bad sectors land in
# data, in zeros and across a window's edge).
python3 - "$IMG" <<'EOF'
import random, sys
r = random.Random(7)
M = 1 << 20
d = bytearray(r.randbytes(12 * M))
d[5 * M:7 * M] = bytes(2 * M)
open(sys.argv[1], "wb").write(d)
EOF

# spig ENV... -- ARGS: spigz with the shim; stdout $T/out, stderr $T/err, RC.
spig() {
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    timeout "$HANG" env LD_PRELOAD="$FAULT_SO" "${envs[@]}" "$SPIGZ" "$@" > "$T/out" 2> "$T/err"
    RC=$?
}

# expect_zeroed SRC RANGES OUT SECTOR: OUT holds SRC with the sectors that
# meet each OFF+LEN of RANGES zeroed, nothing else changed.
expect_zeroed() {
    python3 - "$1" "$2" "$3" "$4" <<'EOF'
import sys
src, ranges, out, sector = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
d = bytearray(open(src, "rb").read())
for r in ranges.split(","):
    off, n = (int(x, 0) for x in r.split("+"))
    a, b = off // sector * sector, min(len(d), -(-(off + n) // sector) * sector)
    d[a:b] = bytes(b - a)
got = open(out, "rb").read()
if got != bytes(d):
    bad = next((i for i in range(min(len(got), len(d))) if got[i] != d[i]), min(len(got), len(d)))
    sys.exit(f"restore differs from the expected image at byte {bad} ({len(got)} vs {len(d)} bytes)")
EOF
}


BAD="$((M + 512))+512,$((3 * M - 700))+1400,$((6 * M))+4096,$((11 * M + 77))+1"
# the same, as whole sectors of 512 bytes, merged where they touch
BADS="$((M + 512))+512,$((3 * M - 1024))+2048,$((6 * M))+4096,$((11 * M))+512"

section "bad sectors in a file, -p2"
spig FAULT_EIO_FILE="$IMG" FAULT_EIO_RANGES="$BAD" -- --rescue --bad-map "$T/map" -p2 -c "$IMG"
check "--rescue with bad sectors exits 2 (RC=$RC: $(head -c 300 "$T/err"))" test "$RC" -eq 2
mv "$T/out" "$T/p2.gz"
check "the message counts the bad bytes and names the file" \
    grep -q "disk.img: 7168 bytes in 4 ranges could not be read and are zeros in the backup (first at offset $((M + 512)))" "$T/err"
"$SPIGZ" -dc "$T/p2.gz" > "$T/rest" 2> "$T/err2"
check "the backup decodes" test $? -eq 0
check "the restore is the image with exactly the bad sectors zeroed" expect_zeroed "$IMG" "$BAD" "$T/rest" 512
check "gzip decodes it the same" sh -c "gzip -dc '$T/p2.gz' | cmp -s - '$T/rest'"
check "the mapfile's bad areas are the bad sectors" test "$(map_bad "$T/map")" = "$BADS"
check "ddrescuelog reads the mapfile: 7168 bad bytes" sh -c "ddrescuelog -t '$T/map' | grep -q 'bad-sector: *7168 B'"
check "ddrescuelog: the map covers the whole image" sh -c "ddrescuelog -t '$T/map' | grep -q 'mapfile extent: *12582 kB'"
cp "$T/rest" "$T/filled"
ddrescue -q -r1 "$IMG" "$T/filled" "$T/map" > /dev/null 2>&1
check "ddrescue with the map fills in just the bad sectors: the image back" cmp -s "$T/filled" "$IMG"

section "the index lists them; -l -v and --bad-map from the backup"
"$SPIGZ" -lv "$T/p2.gz" > /dev/null 2> "$T/err"
check "-l -v says what could not be read" grep -q "7168 bytes in 4 ranges could not be read when the backup was made" "$T/err"
check "-l -v lists each range" test "$(grep -c ': bad ' "$T/err")" -eq 4
check "-l -v gives the ranges' offsets" grep -q ": bad $((3 * M - 1024))+2048" "$T/err"
"$SPIGZ" -l --bad-map "$T/map2" "$T/p2.gz" > /dev/null 2>&1
check "-l --bad-map writes the same bad areas" test "$(map_bad "$T/map2")" = "$BADS"
"$SPIGZ" -l "$T/p2.gz" > /dev/null 2> "$T/err"
check "-l without -v says nothing of them" test ! -s "$T/err"
"$SPIGZ" -t "$T/p2.gz"
check "-t passes a rescued backup (its data is what was read)" test $? -eq 0
"$SPIGZ" -d --bad-map "$T/map4" -o "$T/rest2" "$T/p2.gz" 2> "$T/err"
check "-d of a rescued backup: status 0" test $? -eq 0
check "-d says the backup lacks what it could not read" \
    grep -q "p2.gz: 7168 bytes of the disk could not be read when this backup was made: zeros" "$T/err"
check "-d --bad-map maps what the image lacks" test "$(map_bad "$T/map4")" = "$BADS"
ddrescue -q -r1 "$IMG" "$T/rest2" "$T/map4" > /dev/null 2>&1
check "restore, then ddrescue from the disk with that map: the disk's image" cmp -s "$T/rest2" "$IMG"

section "determinism: -p1, and short reads"
spig FAULT_EIO_FILE="$IMG" FAULT_EIO_RANGES="$BAD" -- --rescue -p1 -c "$IMG"
check "-p1 gives the same bytes as -p2" cmp -s "$T/out" "$T/p2.gz"
spig FAULT_EIO_FILE="$IMG" FAULT_EIO_RANGES="$BAD" FAULT_SHORT_READ=5000 -- --rescue -p2 -c "$IMG"
check "short reads of 5000 bytes give the same bytes (RC=$RC)" cmp -s "$T/out" "$T/p2.gz"
spig FAULT_EIO_FILE="$IMG" FAULT_SHORT_READ=3000 -- -p2 -c "$IMG"
"$SPIGZ" -p2 -c "$IMG" > "$T/plain.gz"
check "short reads alone change nothing (RC=$RC)" cmp -s "$T/out" "$T/plain.gz"
# (the manifest records --rescue: a run with it that read everything is
# that plain backup with --rescue's entry)
"$SPIGZ" --rescue -p2 -c "$IMG" > "$T/plain-rescue.gz"

section "flaky sectors: a retry reads them"
spig FAULT_EIO_FILE="$IMG" FAULT_EIO_RANGES="$BAD" FAULT_EIO_FLAKY=1 -- --rescue --bad-map "$T/map3" -p2 -c "$IMG"
check "sectors that fail once are read on retry: status 0 (RC=$RC: $(head -c 200 "$T/err"))" test "$RC" -eq 0
check "... the backup is the plain one" cmp -s "$T/out" "$T/plain-rescue.gz"
check "... and the map has no bad area" test -z "$(map_bad "$T/map3")"
check "... and covers the image as finished" sh -c "ddrescuelog -t '$T/map3' | grep -q 'rescued: *12582 kB'"

section "without --rescue the first error ends the run"
spig FAULT_EIO_FILE="$IMG" FAULT_EIO_RANGES="$BAD" -- -c "$IMG"
check "status 1 (RC=$RC)" test "$RC" -eq 1
check "the message gives the window's offset" grep -q "disk.img: read error at offset $M: Input/output error" "$T/err"
cp "$IMG" "$T/named.img"
spig FAULT_EIO_FILE="$T/named.img" FAULT_EIO_RANGES="$BAD" -- "$T/named.img"
check "FILE -> FILE.gz fails: no output left, input kept" sh -c "[ ! -e '$T/named.img.gz' ] && [ -e '$T/named.img' ]"

section "FILE -> FILE.gz with bad sectors keeps the input"
spig FAULT_EIO_FILE="$T/named.img" FAULT_EIO_RANGES="$BAD" -- --rescue "$T/named.img"
check "status 2 (RC=$RC)" test "$RC" -eq 2
check "the backup is made and the input, which it does not hold whole, is kept" \
    sh -c "[ -e '$T/named.img.gz' ] && cmp -s '$T/named.img' '$IMG'"
rm -f "$T/named.img.gz"
spig -- --rescue "$T/named.img"
check "with nothing bad, --rescue replaces the input as gzip does (RC=$RC)" \
    sh -c "[ $RC -eq 0 ] && [ -e '$T/named.img.gz' ] && [ ! -e '$T/named.img' ]"

section "bounded: a whole window unreadable"
rm -f "$T/log"
spig FAULT_EIO_FILE="$IMG" FAULT_EIO_RANGES="$((8 * M))+$M" FAULT_READ_LOG="$T/log" -- --rescue -p2 -c "$IMG"
check "status 2 (RC=$RC)" test "$RC" -eq 2
check "1 MiB reported bad" grep -q "1048576 bytes in 1 range could not be read" "$T/err"
reads=$(wc -l < "$T/log")
# 2048 sectors, tried twice each, and the halving splits above them
check "the reads stay bounded: $reads <= 3 x 2048 x 2" test "$reads" -le $((3 * 2048 * 2))
"$SPIGZ" -dc "$T/out" > "$T/rest"
check "the restore has that MiB zeroed" expect_zeroed "$IMG" "$((8 * M))+$M" "$T/rest" 512

section "progress counts bad bytes"
# Reads slowed (20 ms each) so that the run outlasts the display's first
# 0.5 s: the final line is drawn then, whatever the machine's speed.
spig FAULT_EIO_FILE="$IMG" FAULT_EIO_RANGES="$BAD" FAULT_READ_DELAY_US=20000 -- --rescue --progress -p2 -c "$IMG"
check "the last progress line shows bad 7.00 KiB" sh -c "tr '\r' '\n' < '$T/err' | grep -q 'bad 7.00 KiB'"

section "a loop device: sector reads bypass the page cache"
if LOOPDEV=$(losetup --find --show "$IMG" 2>/dev/null); then
    spig FAULT_EIO_FILE="$IMG" FAULT_EIO_RANGES="$BAD" -- --rescue -n -p2 -c "$IMG"
    mv "$T/out" "$T/p2n.gz"
    spig FAULT_EIO_FILE="$LOOPDEV" FAULT_EIO_RANGES="$BAD" -- --rescue --bad-map "$T/mapd" -n -p2 -c "$LOOPDEV"
    check "device: status 2 (RC=$RC: $(head -c 200 "$T/err"))" test "$RC" -eq 2
    check "device: the same backup as from the file (-n: no name, no time)" cmp -s "$T/out" "$T/p2n.gz"
    check "device: the same map" test "$(map_bad "$T/mapd")" = "$BADS"
    losetup -d "$LOOPDEV"
    LOOPDEV=
else
    fail "cannot attach a loop device (root and the loop module are needed)"
fi

section "options"
"$SPIGZ" --rescue -d "$T/p2.gz" 2> "$T/err"
check "--rescue with -d is a usage error" sh -c "[ $? -eq 1 ] && grep -q 'rescue is for compressing' '$T/err'"
"$SPIGZ" --bad-map "$T/m" -c "$IMG" > /dev/null 2> "$T/err"
check "--bad-map without --rescue when compressing is a usage error" grep -q "needs --rescue" "$T/err"

finish

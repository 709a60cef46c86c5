#!/bin/bash
# xfs.sh — --free=zero on XFS (src/layout/lay_xfs.c), each filesystem made
# by xfsprogs over random bytes (the old data of a used disk: mkfs.xfs -K
# leaves the data area as it was, checked) and filled by the kernel (loop
# mounts) or by mkfs.xfs -p.  What is free is asked of xfsprogs, not of
# spigz: each AG's bnobt as xfs_db's btdump lists it (every leaf), checked
# against the AGF's freeblks and against xfs_db's freesp -d.  So a map that
# zeroes one used byte, or keeps old data where the bnobt says free, is
# seen byte for byte.  Filesystems of 48 MiB (xfs_repair -n wants 32).
#
# Mapped (status 0, -v: "xfs ... skipped as free"), the restore exactly the
# original with the bnobt's extents zeroed, xfs_repair -n passing and every
# file reading back identical: a v5 filesystem written through the kernel
# (random files, a directory tree, a sparse file, a file of 150 extents
# made by interleaved appends (its map a B+tree), 1400 small files with
# every other one deleted (a two-level bnobt and cntbt), big files
# deleted), backed up much smaller than without --free=zero; a v4
# filesystem (mkfs.xfs -m crc=0, filled by mkfs -p: this kernel mounts no
# v4); clean logs of other shapes (wrapped into cycle 2, and then reset by
# xfs_repair -L; mounted with logbsize=256k, whose records have 8 header
# blocks); other geometries (1 KiB blocks, 4 KiB sectors, rmapbt); XFS in a
# GPT partition larger than the filesystem (the bytes past it kept).
#
# Read whole (every byte restored; -v: "read whole" and the reason in
# lay_xfs.c's words; status 0 or 2): a dirty log (a shutdown after a
# write: xfs_logprint says DIRTY), an external log, and damaged metadata: an
# AGF's freeblks changed under its CRC (v5: the CRC catches it; v4: the
# count), the superblock's fdblocks changed with its CRC made right, the
# needsrepair flag, a bnobt leaf record widened over used blocks with its
# CRC made right (the two trees disagree), a bnobt leaf's CRC broken, an
# unknown incompatible feature.  And free space cross-linked with a file,
# every tree and count agreeing (their CRCs right), which only the file's
# extent map contradicts: status 2, and the file restored whole.
#
# Needs xfsprogs; without them, SKIP (77), saying so.  The kernel's parts
# (writing through a mount, a dirty log, an external log) need loop mounts
# of XFS: where they fail, those parts are SKIPped, named, and the rest run.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fslib.sh"
need_free_zero
need_or_skip "(xfsprogs): XFS under --free=zero not checked" mkfs.xfs xfs_db xfs_repair xfs_io \
    xfs_logprint
case $FREE_ZERO in
*XFS*) ;;
*)
    echo "SKIP: this spigz reads XFS whole under --free=zero (spigz -V: $FREE_ZERO): nothing checked"
    exit 77
    ;;
esac
need sfdisk losetup mount umount cmp dd sha256sum "$PY3"
cd "$T" || exit 1
S=512
M=$((1 << 20))
mkdir m r
fs_mounted "$T/m"
fs_mounted "$T/r"
SKIPPED=

# xfs_mk FILE MKFS-ARG...: XFS over a copy of old.img's random bytes (under
# 300 MB, mkfs.xfs wants to be told it is a test); -K: no discard
xfs_mk() {
    local f=$1
    shift
    cp old.img "$f"
    TEST_DIR=$T TEST_DEV=$f QA_CHECK_FS=1 mkfs.xfs -q -f -K "$@" "$f" > "$f.mkfs" 2>&1 ||
        fail "mkfs.xfs $* $f: $(grep -v deprecated "$f.mkfs" | head -2 | tr '\n' ' ')"
}
# xmount IMG DIR [OPTION,...]: IMG on a loop device, mounted on DIR (XFS);
# XDEV_<dir> is the device, XIMG_<dir> the image.  Status 1 when either
# fails (said by the caller).
xmount() {
    local dev
    loop_attach dev "$1" || return 1
    mount -t xfs ${3:+-o "$3"} "$dev" "$2" 2> "$2.err" || { loop_detach "$dev"; return 1; }
    printf -v "XDEV_$2" '%s' "$dev"
    printf -v "XIMG_$2" '%s' "$1"
}
# xumount DIR: unmounted, its device detached and gone: a device still
# busy is only marked to go (autoclear), and spigz --free=zero refuses an
# image a loop device still serves (or, when the number is reused by
# another's losetup meanwhile, names that losetup)
xumount() {
    local d="XDEV_$1" i="XIMG_$1" n=0
    umount "$1" || fail "umount $1"
    loop_detach "${!d}"
    while losetup -j "${!i}" | grep -q . && [ $n -lt 100 ]; do
        sleep 0.05
        n=$((n + 1))
    done
    [ $n -lt 100 ] || fail "the loop device of ${!i} still there 5 s after losetup -d"
}
# backup NAME IMG: NAME.gz (--free=zero -v, its messages in NAME.err, its
# status in NAME.s), restored as NAME-r.img
backup() {
    "$SPIGZ" --free=zero -v -k -"$FAST" -c "$2" > "$1.gz" 2> "$1.err"
    echo $? > "$1.s"
    "$SPIGZ" -dc "$1.gz" > "$1-r.img" 2> "$1.derr" || fail "$1: spigz -d ($(cat "$1.derr"))"
}
# xfs_free IMG: the extents IMG's bnobts list, one "OFFSET LENGTH" (bytes)
# a line, as xfs_db reads them: btdump of each AG's bnobt (its leaves'
# records).  Fails unless each AG's extents ascend without overlap and sum
# to its AGF's freeblks, and xfs_db's freesp -d (in xfsprogs 6.1 the
# bnobt's extents and, as extents of one block, the free list's) lists
# them and flcount blocks more.
xfs_free() {
    "$PY3" - "$1" <<'EOF'
import re, subprocess, sys
img = sys.argv[1]
def db(*cmds):
    args = ["xfs_db", "-r"]
    for c in cmds:
        args += ["-c", c]
    return subprocess.run(args + [img], capture_output=True, text=True, check=True).stdout
g = dict(re.findall(r"^(\w+) = (\d+)$", db("sb 0", "p agcount agblocks blocksize"), re.M))
agc, agb, bs = int(g["agcount"]), int(g["agblocks"]), int(g["blocksize"])
cmds = []
for a in range(agc):
    cmds += [f"echo AG {a}", f"agf {a}", "p freeblks flcount", "addr bnoroot", "btdump"]
ag, level, free, fl, recs = None, None, {}, {}, {}
for line in db(*cmds).splitlines():
    m = re.match(r"AG (\d+)\s*$", line)
    if m:
        ag = int(m.group(1)); recs[ag] = []; continue
    m = re.match(r"(freeblks|flcount) = (\d+)", line)
    if m:
        (free if m.group(1) == "freeblks" else fl)[ag] = int(m.group(2)); continue
    m = re.match(r"bnobt level (\d+) ", line)
    if m:
        level = int(m.group(1)); continue
    m = re.match(r"\s*\d+:\[(\d+),(\d+)\]", line)
    if m and level == 0:
        recs[ag].append((int(m.group(1)), int(m.group(2))))
for a in range(agc):
    r, end = recs.get(a, []), 0
    for s, n in r:
        assert s >= end and n > 0, f"AG {a}: records out of order at {s}"
        end = s + n
        print((a * agb + s) * bs, n * bs)
    assert sum(n for _, n in r) == free[a], f"AG {a}: {sum(n for _, n in r)} != freeblks {free[a]}"
fs = set(tuple(map(int, m)) for m in re.findall(r"^ *(\d+) +(\d+) +(\d+) *$", db("freesp -d"), re.M))
bno = set((a, s, n) for a in recs for s, n in recs[a])
more = fs - bno
assert bno <= fs and all(n == 1 for _, _, n in more) and len(more) == sum(fl.values()), \
    f"freesp -d: {len(fs)} extents, the bnobts {len(bno)}, flcount {sum(fl.values())}"
EOF
}
# freecmp ORIG RESTORE FREE: "DIFF FNZ STALE": bytes outside FREE's
# extents where RESTORE differs from ORIG (a size difference counts), bytes
# inside them not zero in RESTORE, and not zero in ORIG (the old data)
freecmp() {
    "$PY3" - "$@" <<'EOF'
import sys
o, r = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
# both with FREE zeroed: what is left must be equal
exp, rz = bytearray(o), bytearray(r)
fnz = stale = 0
for line in open(sys.argv[3]):
    off, ln = map(int, line.split())
    stale += ln - o.count(0, off, off + ln)
    fnz += ln - r.count(0, off, off + ln)
    exp[off:off + ln] = rz[off:off + ln] = bytes(ln)
diff = 0
if exp != rz:
    diff = abs(len(exp) - len(rz))
    for i in range(0, min(len(exp), len(rz)), 1 << 16):
        x, y = exp[i:i + (1 << 16)], rz[i:i + (1 << 16)]
        if x != y:
            diff += sum(p != q for p, q in zip(x, y))
print(diff, fnz, stale)
EOF
}
# xfs_cat IMG PATH: the file's bytes, read through xfs_db (its inode's size
# and extent map), not through a mount
xfs_cat() {
    "$PY3" - "$1" "$2" <<'EOF'
import re, subprocess, sys
img, path = sys.argv[1], sys.argv[2]
def db(*cmds):
    args = ["xfs_db", "-r"]
    for c in cmds:
        args += ["-c", c]
    return subprocess.run(args + [img], capture_output=True, text=True, check=True).stdout
g = dict(re.findall(r"^(\w+) = (\d+)$", db("sb 0", "p agblocks blocksize"), re.M))
agb, bs = int(g["agblocks"]), int(g["blocksize"])
out = db(f"path {path}", "p core.size", "bmap")
size = int(re.search(r"core.size = (\d+)", out).group(1))
data = bytearray(size)
with open(img, "rb") as f:
    for m in re.finditer(r"data offset (\d+) startblock \d+ \((\d+)/(\d+)\) count (\d+)", out):
        fo, ag, b, n = map(int, m.groups())
        f.seek((ag * agb + b) * bs)
        chunk = f.read(n * bs)
        data[fo * bs:fo * bs + n * bs] = chunk[:max(0, size - fo * bs)]
sys.stdout.buffer.write(bytes(data[:size]))
EOF
}
# crc_ok IMG OFFSET LENGTH CRCOFF: the CRC-32C of LENGTH bytes at OFFSET
# (the 4 at CRCOFF in them taken as zero) is what those 4 hold, little-
# endian (computed here: xfs_db's "(correct)" comes from its cache, and said
# correct of an AGF whose CRC it had just found wrong)
crc_ok() {
    "$PY3" - "$srcdir/tests/py" "$@" <<'EOF'
import struct, sys
sys.path.insert(0, sys.argv[1])
from crc32c import crc32c
img, off, ln, co = sys.argv[2], *map(int, sys.argv[3:])
with open(img, "rb") as f:
    f.seek(off)
    b = bytearray(f.read(ln))
want = struct.unpack_from("<I", b, co)[0]
b[co:co + 4] = bytes(4)
sys.exit(0 if crc32c(b) == want else 1)
EOF
}
# agf_field IMG AG FIELD: the value xfs_db prints for an AGF field
agf_field() { xfs_db -r -c "agf $2" -c "p $3" "$1" 2> /dev/null | sed -n "s/^$3 = //p"; }
sb_field() { xfs_db -r -c "sb 0" -c "p $2" "$1" 2> /dev/null | sed -n "s/^$2 = //p"; }
# mapped NAME IMG WHAT: IMG backed up and restored: status 0, -v says xfs
# skipped as free, the restore exactly IMG with its bnobts' extents zeroed
# (which held old data), xfs_repair -n passes on it.  Sets STALE (the old
# data's bytes).
mapped() {
    local n=$1 img=$2 what=$3 diff fnz s
    backup "$n" "$img"
    # catches a clean, intact filesystem read whole (a refusal by mistake:
    # a field misread, a clean log taken for dirty), or a map not said
    check "$what: status 0 ($(cat "$n.s"): $(head -c 300 "$n.err"))" [ "$(cat "$n.s")" -eq 0 ]
    check "$what: -v says xfs, skipped as free ($(grep -m1 xfs "$n.err"))" \
        grep -q 'xfs, .* skipped as free' "$n.err"
    xfs_free "$img" > "$n.free" 2> "$n.free.err" || fail "$what: xfs_db's bnobt ($(tail -1 "$n.free.err"))"
    read -r diff fnz STALE <<< "$(freecmp "$img" "$n-r.img" "$n.free")"
    # catches a test that proves nothing: free space already zeros (mkfs
    # discarding or zeroing it), so that keeping it would pass unseen
    check "$what: the bnobt's free extents held old data ($STALE bytes not zero)" \
        [ "${STALE:-0}" -gt $((8 * M)) ]
    # catches a used byte zeroed (a gap of the bnobt taken for free: an
    # extent's end or start off by one, a record or a leaf misread)
    check "$what: every byte outside them is the original's ($diff bytes differ)" [ "$diff" = 0 ]
    # catches free space kept (old data in the backup: an extent missed,
    # a leaf or a whole AG skipped)
    check "$what: every byte inside them is zero in the restore ($fnz bytes not)" [ "$fnz" = 0 ]
    # catches the same, in XFS's own terms (a zeroed inode, tree or
    # directory block), and a restore XFS rejects however it came to be
    xfs_repair -n -f "$n-r.img" > "$n.repair" 2>&1
    s=$?
    check "$what: xfs_repair -n passes on the restore ($s: $(tail -2 "$n.repair" | tr '\n' ' '))" [ "$s" -eq 0 ]
}
# whole NAME IMG WHAT WHY: IMG backed up, read whole: status 0 or 2, every
# byte restored, -v says read whole and WHY (a regex), nothing skipped
whole() {
    backup "$1" "$2"
    # catch a map made anyway (bytes zeroed or dropped), a refusal for
    # another reason than the one meant, and a hard failure (status 1)
    check "$3: status 0 or 2 ($(cat "$1.s"): $(head -c 300 "$1.err"))" grep -qx '[02]' "$1.s"
    check "$3: every byte restored" cmp -s "$1-r.img" "$2"
    check "$3: -v says read whole: $4 ($(grep -m1 'read whole' "$1.err"))" \
        grep -q "xfs, read whole: .*$4" "$1.err"
    check "$3: nothing skipped as free" sh -c "! grep -q 'skipped as free' '$1.err'"
}
# sums DIR: every name under DIR with its type, size and blocks, and every
# file's sha256
sums() { (cd "$1" && find . -printf '%y %s %b %p\n' | sort && find . -type f -print0 | sort -z | xargs -0 sha256sum); }
# drop NAME...: NAME.img, its backup and its restore removed (the test's
# files are large: written back to disk if kept, under memory pressure)
drop() { local n; for n; do rm -f "$n.img" "$n-r.img" "$n.gz" "$n-plain.gz"; done; }
# not COMMAND...: COMMAND fails
not() { ! "$@"; }
# matches STRING REGEX: STRING matches the extended regular expression
matches() { [[ $1 =~ $2 ]]; }
# flip IMG OFFSET: the lowest bit of IMG's byte at OFFSET flipped
flip() {
    "$PY3" -c 'import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2])); b = f.read(1); f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 1]))' "$1" "$2"
}

stale old.img 48
# the files for mkfs -p (v4, and the filesystems no mount writes)
mkdir -p src/etc/conf.d src/var/log
"$PY3" - <<'EOF'
import random
r = random.Random(7)
open("src/vmlinuz", "wb").write(r.randbytes(3_000_000))
open("src/initrd", "wb").write(r.randbytes(1_500_000))
open("src/etc/hostname", "wb").write(b"xfs.example\n")
open("src/etc/conf.d/net", "wb").write(r.randbytes(9000))
open("src/var/log/messages", "w").write("".join(f"line {i} of the log\n" for i in range(40000)))
EOF
cat > x.proto <<EOF
/dev/null
0 0
d--755 0 0
vmlinuz ---644 0 0 $T/src/vmlinuz
initrd ---644 0 0 $T/src/initrd
etc d--755 0 0
hostname ---644 0 0 $T/src/etc/hostname
conf.d d--755 0 0
net ---600 0 0 $T/src/etc/conf.d/net
\$
\$
var d--755 0 0
log d--755 0 0
messages ---644 0 0 $T/src/var/log/messages
\$
\$
\$
EOF
PROTO_FILES="vmlinuz initrd etc/hostname etc/conf.d/net var/log/messages"

section "v5, written through the kernel"
xfs_mk v5.img
CAN_MOUNT=1
if xmount v5.img m allocsize=4k; then
    # random files, a tree, a sparse file, a file of many extents (appends
    # interleaved with another file's, each synced), 1400 small files of
    # which every other one is deleted (a bnobt of two levels), big files
    # deleted (their old contents left in free space)
    "$PY3" - <<'EOF'
import os, random
r = random.Random(11)
for i in range(6):
    open(f"m/rand{i}.bin", "wb").write(r.randbytes(r.randrange(100_000, 1_500_000)))
for d in ("home/ann/docs", "home/bob", "usr/share/doc/x"):
    os.makedirs("m/" + d)
    for i in range(5):
        open(f"m/{d}/f{i}.txt", "w").write(f"{d} {i}\n" * r.randrange(1, 20000))
with open("m/sparse.img", "wb") as f:
    for off in (0, 5 << 20, 11 << 20, (20 << 20) - 4096):
        f.seek(off)
        f.write(r.randbytes(4096))
a, b = open("m/frag.log", "ab"), open("m/other.log", "ab")
for i in range(150):
    for f in (a, b):
        f.write(r.randbytes(4096 + r.randrange(4096)))
        f.flush()
        os.fsync(f.fileno())
a.close(); b.close()
os.makedirs("m/small")
for i in range(1400):
    open("m/small/s%04d" % i, "wb").write(r.randbytes(4096))
for i in range(2):
    open(f"m/gone{i}.bin", "wb").write(r.randbytes(3_000_000))
os.sync()
for i in range(0, 1400, 2):
    os.unlink("m/small/s%04d" % i)
for i in range(2):
    os.unlink(f"m/gone{i}.bin")
os.unlink("m/other.log")
EOF
    next=$(xfs_io -r -c stat m/frag.log | sed -n 's/^fsxattr.nextents = //p')
    check "frag.log has many extents (${next:-?})" [ "${next:-0}" -ge 100 ]
    read -r blocks size <<< "$(stat -c '%b %s' m/sparse.img)"
    check "sparse.img is sparse ($blocks blocks of 512, $size bytes)" [ $((blocks * 512)) -lt $((size / 4)) ]
    sums m > v5.sums
    xumount m
else
    CAN_MOUNT=
    echo "NOTE: cannot loop-mount XFS here ($(cat m.err 2>/dev/null)): mkfs -p fills it"
    SKIPPED="$SKIPPED; writing through the kernel (deleted files, sparse and fragmented files), a dirty log, a wrapped log (and reset by xfs_repair -L), logbsize=256k, an external log"
    xfs_mk v5.img -p x.proto
fi
check "xfs_logprint: its log is clean" sh -c "xfs_logprint -t v5.img 2>&1 | grep -q 'state: <CLEAN>'"
ver=$(($(sb_field v5.img versionnum) & 15))
check "v5 (its superblock's version: $ver)" [ "$ver" -eq 5 ]
if [ -n "$CAN_MOUNT" ]; then
    # (else the B+tree nodes' path in lay_xfs.c goes untested)
    lv=$(for ((a = 0; a < $(sb_field v5.img agcount); a++)); do agf_field v5.img $a bnolevel; done | sort -n | tail -1)
    check "some AG's bnobt has two levels or more ($lv)" [ "${lv:-0}" -ge 2 ]
fi
mapped v5 v5.img "v5"
v5_stale=$STALE
if [ -n "$CAN_MOUNT" ]; then
    if xmount v5-r.img r ro,nouuid; then
        sums r > v5-r.sums
        xumount r
        check "every file reads back identical (names, sizes, blocks, sha256)" cmp -s v5.sums v5-r.sums
    else
        fail "mount the restore ($(cat r.err))"
    fi
fi
"$SPIGZ" -k -"$FAST" -c v5.img > v5-plain.gz || fail "spigz (no --free=zero)"
saved=$(($(stat -c %s v5-plain.gz) - $(stat -c %s v5.gz)))
echo "NOTE: $saved bytes smaller than without --free=zero; old data dropped: $v5_stale"
check "the backup is smaller by at least 90% of the old data dropped" [ "$saved" -gt $((v5_stale * 9 / 10)) ]
drop v5

section "v4 (mkfs.xfs -m crc=0), filled by mkfs -p"
xfs_mk v4.img -m crc=0 -p x.proto
ver=$(($(sb_field v4.img versionnum) & 15))
check "v4 (its superblock's version: $ver)" [ "$ver" -eq 4 ]
mapped v4 v4.img "v4"
for f in $PROTO_FILES; do
    check "v4: /$f reads back identical (through xfs_db)" cmp -s <(xfs_cat v4-r.img "/$f") "src/$f"
done
rm -f v4-r.img v4.gz

section "clean logs of other shapes"
if [ -n "$CAN_MOUNT" ]; then
    # the log (1368 blocks) written past its end: cycle 2 before the head
    xfs_mk wrap.img
    if xmount wrap.img m; then
        for i in 1 2 3 4; do
            mkdir m/d && (cd m/d && seq 1 3000 | xargs touch) && sync && rm -rf m/d && sync
        done
        xumount m
    else
        fail "mount wrap.img ($(cat m.err))"
    fi
    xfs_logprint -d wrap.img > wrap.log 2>&1
    check "xfs_logprint: wrapped (records of cycle 2), clean" \
        sh -c "grep -q 'HEADER Cycle 2' wrap.log && xfs_logprint -t wrap.img 2>&1 | grep -q 'state: <CLEAN>'"
    mapped wrap wrap.img "a wrapped log"
    rm -f wrap-r.img wrap.gz
    # iclogs of 256 KiB: each record header 8 blocks (extended headers)
    xfs_mk big.img
    if xmount big.img m logbsize=256k; then
        cp src/vmlinuz m/ && mkdir m/d && seq 1 500 | sed 's|^|m/d/|' | xargs touch
        xumount m
    else
        fail "mount big.img logbsize=256k ($(cat m.err))"
    fi
    mapped big big.img "logbsize=256k"
    drop big
    # xfs_repair -L on the wrapped log: it formats the log anew past the
    # cycles its metadata's LSNs name (xfsprogs' libxfs_log_clear): an
    # unmount record of cycle N at block 0, the rest of its first 256 KiB
    # zeros, then records of cycle N - 1 to the log's end.  The kernel
    # mounts it without recovery ("Ending clean mount"); xfs_logprint says
    # CLEAN.  (Catches a clean log read as dirty: what every filesystem
    # repaired after real use looks like.)
    cp wrap.img rep.img
    xfs_repair -L rep.img > rep.repair1 2>&1 || fail "xfs_repair -L ($(tail -1 rep.repair1))"
    xfs_logprint -d rep.img > rep.log 2>&1
    check "xfs_logprint: reset by xfs_repair -L into a cycle past 2 ($(grep -m1 HEADER rep.log)), clean" \
        sh -c "grep -m1 HEADER rep.log | grep -qE '^ +0 HEADER Cycle ([3-9]|[1-9][0-9]+) ' &&
            xfs_logprint -t rep.img 2>&1 | grep -q 'state: <CLEAN>'"
    mapped rep rep.img "a wrapped log reset by xfs_repair -L"
    drop wrap rep
fi

section "other geometries (mkfs -p)"
for g in "1 KiB blocks:-b size=1024" "4 KiB sectors:-s size=4096" "rmapbt:-m rmapbt=1"; do
    what=${g%%:*}
    # shellcheck disable=SC2086 # the options, split
    xfs_mk geo.img ${g#*:} -p x.proto
    # then a file deleted and one written through the kernel
    if [ -n "$CAN_MOUNT" ]; then
        if xmount geo.img m; then
            rm m/vmlinuz && cp src/initrd m/initrd.old
            xumount m
        else
            fail "$what: mount ($(cat m.err))"
        fi
    fi
    mapped geo geo.img "$what"
    drop geo
done

if [ -n "$CAN_MOUNT" ]; then
    section "a dirty log: read whole"
    xfs_mk dirty.img
    if xmount dirty.img m; then
        cp src/vmlinuz m/ && sync && xfs_io -x -c shutdown m || fail "write, sync, shutdown"
        xumount m
    else
        fail "mount dirty.img ($(cat m.err))"
    fi
    check "xfs_logprint: DIRTY" sh -c "xfs_logprint -t dirty.img 2>&1 | grep -q 'state: <DIRTY>'"
    whole dirty dirty.img "a dirty log" "needs recovery"
    drop dirty

    section "an external log: read whole"
    cp old.img ext.img
    head -c $((16 * M)) old.img > extlog.img
    if loop_need LOGDEV extlog.img; then
        TEST_DIR=$T TEST_DEV=ext.img QA_CHECK_FS=1 mkfs.xfs -q -f -K -l "logdev=$LOGDEV,size=2048b" ext.img \
            > ext.mkfs 2>&1 || fail "mkfs.xfs -l logdev ($(head -2 ext.mkfs | tr '\n' ' '))"
        if xmount ext.img m "logdev=$LOGDEV"; then
            cp src/initrd m/ && mkdir m/d && touch m/d/a
            xumount m
        else
            fail "mount ext.img logdev=$LOGDEV ($(cat m.err))"
        fi
        check "the superblock's logstart is 0 (external)" [ "$(sb_field ext.img logstart)" = 0 ]
        loop_detach "$LOGDEV"
        whole ext ext.img "an external log" "its log is on another device"
        drop ext extlog
    fi
fi

section "damaged metadata: read whole"
# Each case's damage is first shown to be what it says (xfs_db's values,
# the CRCs computed here); then whole(): its status and every byte
# restored catch a map built on the damage (old data kept, or used blocks
# zeroed), its reason catches a refusal for another cause than the one
# meant (a check that no longer runs, hidden behind a later one).
xfs_mk dm.img -p x.proto
mapped dm dm.img "undamaged (the control)"
AGB=$(sb_field dm.img agblocks)
BS=$(sb_field dm.img blocksize)
SS=$(sb_field dm.img sectsize)
AGF1=$((AGB * BS + SS)) # AG 1's AGF: one sector into the AG
for c in "AG 1's AGF:$AGF1 $SS 216" "the superblock:0 $SS 224" \
    "AG 0's bnobt root:$(($(agf_field dm.img 0 bnoroot) * BS)) $BS 52"; do
    # shellcheck disable=SC2086 # offset, length, CRC offset
    check "the control: ${c%%:*}'s CRC valid (computed here)" crc_ok dm.img ${c#*:}
done
# (a) AG 1's AGF: a bit of freeblks (bytes 52-55) flipped, its CRC left
cp dm.img a.img
flip a.img $((AGF1 + 55))
fb=$(($(agf_field dm.img 1 freeblks) ^ 1))
check "(a) xfs_db: AG 1's freeblks now $fb ($(agf_field a.img 1 freeblks))" [ "$(agf_field a.img 1 freeblks)" = "$fb" ]
check "(a) its AGF's CRC wrong" not crc_ok a.img $AGF1 "$SS" 216
whole a a.img "(a) an AGF's freeblks, its CRC wrong" "an AG header's checksum is wrong"
drop a
# (a') the same in a v4 AGF (no CRC): its count and its bnobt disagree
cp v4.img a4.img
flip a4.img $(($(sb_field v4.img agblocks) * $(sb_field v4.img blocksize) + $(sb_field v4.img sectsize) + 55))
check "(a') xfs_db: the v4 AG 1's freeblks changed" \
    [ "$(agf_field a4.img 1 freeblks)" = $(($(agf_field v4.img 1 freeblks) ^ 1)) ]
whole a4 a4.img "(a') a v4 AGF's freeblks" "an AG's free-block count disagrees with its free-space tree"
drop a4
# (b) the superblock's fdblocks one more, its CRC recomputed (xfs_db write)
cp dm.img b.img
fd=$(sb_field dm.img fdblocks)
xfs_db -x -c 'sb 0' -c "write fdblocks $((fd + 1))" b.img > /dev/null 2>&1 || fail "xfs_db write fdblocks"
check "(b) xfs_db: fdblocks now $((fd + 1)) ($(sb_field b.img fdblocks))" [ "$(sb_field b.img fdblocks)" = $((fd + 1)) ]
check "(b) the superblock's CRC valid (xfs_db made it)" crc_ok b.img 0 "$SS" 224
whole b b.img "(b) the superblock's fdblocks" "superblock's free-block count disagrees with its AGs'"
drop b
# (c) needsrepair (incompat bit 16), the CRC recomputed
cp dm.img c.img
inc=$(sb_field dm.img features_incompat)
xfs_db -x -c 'sb 0' -c "write features_incompat $((inc | 16))" c.img > /dev/null 2>&1 ||
    fail "xfs_db write features_incompat"
check "(c) xfs_db: features_incompat now needsrepair too ($(sb_field c.img features_incompat))" \
    [ "$(sb_field c.img features_incompat)" = "$(printf '%#x' $((inc | 16)))" ]
check "(c) the superblock's CRC valid" crc_ok c.img 0 "$SS" 224
whole c c.img "(c) needsrepair" "marked as needing repair"
drop c
# (c') an incompatible feature spigz does not know (bit 30), the CRC right
# (write -d: xfs_db's verifier refuses it otherwise; the CRC is still made)
cp dm.img c2.img
xfs_db -x -c 'sb 0' -c "write -d features_incompat $((inc | (1 << 30)))" c2.img > /dev/null 2>&1 ||
    fail "xfs_db write -d features_incompat"
check "(c') xfs_db: features_incompat now bit 30 too ($(sb_field c2.img features_incompat))" \
    [ "$(sb_field c2.img features_incompat)" = "$(printf '%#x' $((inc | (1 << 30))))" ]
check "(c') the superblock's CRC valid" crc_ok c2.img 0 "$SS" 224
whole c2 c2.img "(c') an unknown incompatible feature" "features spigz does not know"
drop c2
# (d) AG 0's bnobt (one leaf): its first record widened to end a block
# before the second starts, over used blocks, the block's CRC recomputed by
# xfs_db: the bnobt alone now calls used blocks free (zeroing them would
# destroy them); the cntbt and the counters disagree
cp dm.img d.img
lv0=$(agf_field dm.img 0 bnolevel)
broot=$(($(agf_field dm.img 0 bnoroot) * BS))
recs=$(xfs_db -r -c 'agf 0' -c 'addr bnoroot' -c 'p recs' dm.img)
read -r s1 c1 s2 <<< "$(echo "$recs" | "$PY3" -c 'import re, sys
r = re.findall(r"(\d+):\[(\d+),(\d+)\]", sys.stdin.read())
print(r[0][1], r[0][2], r[1][1])' 2>/dev/null)"
if [ "$lv0" = 1 ] && [ -n "$s2" ] && [ $((s1 + c1 + 1)) -lt "$s2" ]; then
    w=$((s2 - s1 - 1))
    xfs_db -x -c 'agf 0' -c 'addr bnoroot' -c "write recs[1].blockcount $w" d.img > /dev/null 2>&1 ||
        fail "xfs_db write recs[1].blockcount"
    got=$(xfs_db -r -c 'agf 0' -c 'addr bnoroot' -c 'p recs[1]' d.img | tr '\n' ' ')
    check "(d) xfs_db: [$s1,$c1] now [$s1,$w] ($got)" matches "$got" "1:\[$s1,$w\]"
    check "(d) the bnobt block's CRC valid (xfs_db made it)" crc_ok d.img "$broot" "$BS" 52
    whole d d.img "(d) a bnobt record widened over used blocks" \
        "its two free-space trees (by block and by size) disagree"
    drop d
else
    fail "(d) AG 0's bnobt: one leaf whose first two records have a gap of 2 blocks or more expected (level $lv0: $recs)"
fi
# (e) AG 0's bnobt leaf: its first record's blockcount changed, the block's
# CRC not (v5 header: 56 bytes; a record: startblock, blockcount)
cp dm.img e.img
flip e.img $((broot + 56 + 7))
check "(e) the bnobt block's CRC wrong" not crc_ok e.img "$broot" "$BS" 52
whole e e.img "(e) a bnobt leaf's CRC" "a free-space tree block's checksum or stamp is wrong"
drop e
# (f) AG 0's last free extent widened down over the last 4 blocks of the
# file before it, consistently: its bnobt and cntbt records, the AGF's
# freeblks and longest, the superblock's fdblocks (their CRCs made by
# xfs_db).  Every count agrees; only the file's extent map says otherwise
# (xfs_repair -n: "claims free block").  Catches a map trusted from the
# free-space trees alone: the file's last 16 KiB zeroed.
cp dm.img f.img
read -r fs fc fname _ fn <<< "$(PROTO_FILES=$PROTO_FILES "$PY3" - dm.img <<'EOF'
import os, re, subprocess, sys
img = sys.argv[1]
def db(*cmds):
    args = ["xfs_db", "-r"]
    for c in cmds:
        args += ["-c", c]
    return subprocess.run(args + [img], capture_output=True, text=True).stdout
bno = re.findall(r"(\d+):\[(\d+),(\d+)\]", db("agf 0", "addr bnoroot", "p recs"))
cnt = re.findall(r"(\d+):\[(\d+),(\d+)\]", db("agf 0", "addr cntroot", "p recs"))
longest = int(re.search(r"longest = (\d+)", db("agf 0", "p longest")).group(1))
s, c = int(bno[-1][1]), int(bno[-1][2])
assert c == longest and cnt[-1][1:] == bno[-1][1:], "the last extent is not the longest"
for f in os.environ["PROTO_FILES"].split():
    for m in re.finditer(r"startblock \d+ \(0/(\d+)\) count (\d+)", db(f"path /{f}", "bmap")):
        if int(m.group(1)) + int(m.group(2)) == s and int(m.group(2)) >= 4:
            print(s, c, f, m.group(1), m.group(2))
            sys.exit(0)
sys.exit("no file ends where AG 0's last free extent starts")
EOF
)"
if [ -n "$fn" ]; then
    nb=$(xfs_db -r -c 'agf 0' -c 'addr bnoroot' -c 'p numrecs' f.img | sed -n 's/numrecs = //p')
    nc=$(xfs_db -r -c 'agf 0' -c 'addr cntroot' -c 'p numrecs' f.img | sed -n 's/numrecs = //p')
    xfs_db -x -c 'agf 0' -c 'addr bnoroot' -c "write recs[$nb].startblock $((fs - 4))" \
        -c "write recs[$nb].blockcount $((fc + 4))" -c 'agf 0' -c 'addr cntroot' \
        -c "write recs[$nc].startblock $((fs - 4))" -c "write recs[$nc].blockcount $((fc + 4))" \
        -c 'agf 0' -c "write freeblks $(($(agf_field dm.img 0 freeblks) + 4))" -c "write longest $((fc + 4))" \
        -c 'sb 0' -c "write fdblocks $(($(sb_field dm.img fdblocks) + 4))" f.img > /dev/null 2>&1 ||
        fail "(f) xfs_db writes"
    xfs_repair -n -f f.img > f.repair 2>&1
    check "(f) xfs_repair -n: /$fname claims free block $((fs - 4)) ($(grep -m1 'claims free' f.repair))" \
        grep -q "claims free block $((fs - 4))" f.repair
    for c in "$SS $SS 216" "$(($(agf_field f.img 0 bnoroot) * BS)) $BS 52" \
        "$(($(agf_field f.img 0 cntroot) * BS)) $BS 52" "0 $SS 224"; do
        # shellcheck disable=SC2086 # offset, length, CRC offset
        check "(f) a CRC valid (AG 0's AGF, its bnobt and cntbt roots, the superblock: at ${c%% *})" crc_ok f.img $c
    done
    backup f f.img
    check "(f) status 2: the damage said ($(cat f.s): $(head -c 300 f.err))" [ "$(cat f.s)" -eq 2 ]
    check "(f) /$fname reads back identical" cmp -s <(xfs_cat f-r.img "/$fname") "src/$fname"
    xfs_free dm.img > dm.free || fail "xfs_db's bnobt of dm"
    read -r diff _ _ <<< "$(freecmp f.img f-r.img dm.free)"
    check "(f) every byte outside the undamaged filesystem's free extents the original's ($diff differ)" [ "$diff" = 0 ]
else
    fail "(f) a file ending where AG 0's last free extent starts expected"
fi
drop f dm v4

section "XFS in a GPT partition larger than the filesystem"
# p1: sectors 2048.. (48 MiB); the filesystem 40 MiB of it: the last 8 MiB
# (old data) are no filesystem's and must be kept
truncate -s 50M disk.img
printf 'label: gpt\nstart=2048, size=98304, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4\n' |
    sfdisk -q disk.img || fail "sfdisk"
cp old.img p1.img
TEST_DIR=$T TEST_DEV=p1.img QA_CHECK_FS=1 mkfs.xfs -q -f -K -d size=40m -p x.proto p1.img > p1.mkfs 2>&1 ||
    fail "mkfs.xfs -d size=40m ($(head -2 p1.mkfs | tr '\n' ' '))"
dd if=p1.img of=disk.img bs=1M oflag=seek_bytes seek=$((2048 * S)) conv=notrunc status=none
backup gpt disk.img
check "status 0 ($(cat gpt.s): $(head -c 300 gpt.err))" [ "$(cat gpt.s)" -eq 0 ]
check "-v: partition 1 xfs, skipped as free ($(grep -m1 'partition 1' gpt.err))" \
    grep -q 'partition 1 .*xfs, .* skipped as free' gpt.err
dd if=gpt-r.img bs=1M iflag=skip_bytes,count_bytes skip=$((2048 * S)) count=$((98304 * S)) status=none > p1-r.img
xfs_free p1.img > p1.free || fail "xfs_db's bnobt of p1"
read -r diff fnz stale <<< "$(freecmp p1.img p1-r.img p1.free)"
check "p1: the free extents held old data ($stale bytes)" [ "${stale:-0}" -gt $((8 * M)) ]
check "p1: every byte outside them the original's, the 8 MiB past the filesystem too ($diff differ)" [ "$diff" = 0 ]
check "p1: every byte inside them zero ($fnz not)" [ "$fnz" = 0 ]
check "the GPT (the first 1 MiB) identical" cmp -s -n $M disk.img gpt-r.img
xfs_repair -n -f p1-r.img > p1.repair 2>&1
s=$?
check "p1: xfs_repair -n passes ($s: $(tail -2 p1.repair | tr '\n' ' '))" [ "$s" -eq 0 ]

section "nothing left behind"
loops_detach
check "no mount of ours left" sh -c "! grep -q ' $T/' /proc/self/mountinfo"
if [ -n "$SKIPPED" ]; then
    echo "xfs.sh: $CHECKS checks, $FAILS failed; SKIP: not checked: ${SKIPPED#; }"
    [ "$FAILS" -eq 0 ] && exit 77
fi
finish

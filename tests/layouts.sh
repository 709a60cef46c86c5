#!/bin/bash
# layouts.sh — --free=zero on disks that carry more than one layout: a
# table written beside an old filesystem's boot sector, an old GPT's backup
# header under an MBR, a primary and backup GPT that disagree, an extended
# boot record inside another partition's free space.  Each program reads
# such a disk its own way (the kernel, libblkid, fdisk); a block may be
# coded as zero only where every reading calls it free, table structures
# are always data, and the run warns (status 2) naming the readings.  A
# disk with one layout keeps the fast path (status 0, free space skipped).
#
# Oracle: each filesystem's own tools (e2fsck, fsck.vfat, the files read
# back) and tests/py/fsfree.py's independent free-space reading: the restore
# may differ from the original only in sectors that the partition's
# filesystem calls free.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fslib.sh"
need_free_zero # a build without it: the refusal checked, then SKIP
need python3 sfdisk mke2fs debugfs e2fsck mkfs.vfat mcopy fsck.vfat mkfs.exfat mkntfs cmp
FSFREE="$srcdir/tests/py/fsfree.py"
cd "$T" || exit 1
S=512

mkdir src
"$PY3" - <<'EOF'
import random
r = random.Random(11)
for i in range(40):
    open(f"src/t{i}", "wb").write(r.randbytes(r.randrange(1000, 400_000)))
EOF
# an ext4 partition image of SECTORS sectors with the files, one deleted
mk_ext4_part() {
    stale "$1.stale" $(( ($2 * S + 1048575) / 1048576 ))
    head -c $(($2 * S)) "$1.stale" > "$1" && rm -f "$1.stale"
    mke2fs -q -F -t ext4 -E nodiscard -d src "$1" >/dev/null 2>&1 || fail "mke2fs $1"
    debugfs -w -R "rm t3" "$1" >/dev/null 2>&1
}
# files_ok PART WHAT: e2fsck passes and every file but t3 reads back
files_ok() {
    local i bad=0
    check "$2: e2fsck -fn" e2fsck -fn "$1" >/dev/null 2>&1
    for i in $(seq 0 39); do
        [ "$i" = 3 ] && continue
        debugfs -R "dump t$i $T/got" "$1" >/dev/null 2>&1
        cmp -s got "src/t$i" || bad=$((bad + 1))
    done
    check "$2: every file reads back ($bad differ)" [ "$bad" -eq 0 ]
}
# only_free DISK RESTORED KIND@OFF+LEN: the restore differs from the disk
# only in sectors the partition's filesystem calls free (fsfree.py)
only_free() {
    "$PY3" "$FSFREE" expect "$1" e.img "$3" || { fail "fsfree.py $3"; return; }
    "$PY3" - "$1" "$2" e.img <<'EOF'
import sys
d, r, e = (open(p, "rb") for p in sys.argv[1:4])
off = bad = 0
while True:
    a, b, c = d.read(1 << 20), r.read(1 << 20), e.read(1 << 20)
    if not a and not b:
        break
    if a != b:
        for i in range(0, max(len(a), len(b)), 512):
            x, y, z = a[i:i + 512], b[i:i + 512], c[i:i + 512]
            if y != x and y != z:
                if bad < 3:
                    print(f"sector {(off + i) // 512} lost", file=sys.stderr)
                bad += 1
    off += len(a)
sys.exit(bad != 0)
EOF
    check "the restore of $1 differs only where its filesystem says free" [ $? -eq 0 ]
}
# backup DISK: --free=zero -v, then restored into r.img; $s is the status
backup() {
    "$SPIGZ" --free=zero -v -c "$1" > b.gz 2> b.err; s=$?
    "$SPIGZ" -dc b.gz > r.img || fail "$1: restore"
}
# table IMG: sfdisk's dump of its table, without the file's name
table() { sfdisk -d "$1" 2>&1 | sed "s|$1||g"; }
# part_of IMG SECTOR SECTORS OUT
part_of() { dd if="$1" of="$4" bs=512 skip="$2" count="$3" status=none; }

section "a whole-disk filesystem under a later MBR (FAT32, then an MBR and ext4)"
PSTART=2048 PLEN=100000
mk_ext4_part p.img $PLEN
for kind in vfat32 vfat16 exfat ntfs ext4; do
    stale d.img 64
    case $kind in
    vfat32) mkfs.vfat -F 32 -s 1 d.img >/dev/null ;;
    vfat16) mkfs.vfat -F 16 d.img >/dev/null ;;
    exfat) mkfs.exfat d.img >/dev/null ;;
    ntfs) mkntfs -Q -F -q d.img >/dev/null 2>&1 ;;
    ext4) mke2fs -q -F -t ext4 -E nodiscard d.img >/dev/null 2>&1 ;;
    esac || fail "mkfs $kind"
    # a script partitions the stick: sfdisk keeps the old boot sector
    printf 'label: dos\nstart=%d, size=%d, type=83\n' $PSTART $PLEN | sfdisk -q d.img >/dev/null 2>&1 ||
        fail "sfdisk over $kind"
    put d.img p.img $PSTART
    backup d.img
    check "$kind under an MBR: status 2 ($s)" [ "$s" -eq 2 ]
    check "$kind under an MBR: the warning names the MBR ($(head -c 300 b.err))" \
        grep -q "reads [0-9] ways: 1. an MBR (the kernel's reading)" b.err
    check "$kind under an MBR: and the whole-disk filesystem" grep -q "filesystem on the whole input" b.err
    part_of r.img $PSTART $PLEN rp.img
    files_ok rp.img "$kind under an MBR"
    only_free d.img r.img "ext4@$((PSTART * S))+$((PLEN * S))"
    check "$kind under an MBR: the table restored" cmp -s <(table d.img) <(table r.img)
    # the backup says so later: its index keeps the warning as a note
    "$SPIGZ" -l b.gz > /dev/null 2> l.err; s=$?
    check "$kind under an MBR: -l status 0 ($s)" [ "$s" -eq 0 ]
    check "$kind under an MBR: -l repeats the warning ($(head -c 200 l.err))" \
        grep -q "when this backup was made: its layout reads [0-9] ways: 1. an MBR" l.err
    "$SPIGZ" -t b.gz 2> t.err; s=$?
    check "$kind under an MBR: -t status 0, the note said ($s)" \
        sh -c "[ $s -eq 0 ] && grep -q 'when this backup was made: its layout' t.err"
    check "$kind under an MBR: -l --format=json lists it" \
        sh -c "'$SPIGZ' -l --format=json b.gz | python3 -c 'import json, sys; d = json.load(sys.stdin); sys.exit(not d[\"notes\"][0].startswith(\"its layout reads\"))'"
done

section "one layout: the fast path stays"
stale d.img 64
mkfs.vfat -F 32 -s 1 d.img >/dev/null
mcopy -i d.img src/t1 src/t2 :: || fail "mcopy"
backup d.img
check "whole-disk FAT32: status 0 ($s: $(head -c 300 b.err))" [ "$s" -eq 0 ]
check "whole-disk FAT32: one reading" sh -c '! grep -q "ways" b.err'
check "whole-disk FAT32: its free space skipped" grep -q "skipped as free" b.err
check "whole-disk FAT32: fsck.vfat" fsck.vfat -n r.img >/dev/null 2>&1
check "whole-disk FAT32: a file reads back" sh -c "mcopy -n -i r.img ::t2 - | cmp -s - src/t2"
"$SPIGZ" -l b.gz > /dev/null 2> l.err
check "whole-disk FAT32: no note in the backup" sh -c '! grep -q "when this backup was made" l.err'
check "whole-disk FAT32: no note flag in the footer (flag 2; 4 is the manifest's)" \
    sh -c "[ \$(( \$(tail -c 78 b.gz | od -An -tu1 -j17 -N1) & 2 )) -eq 0 ]"
stale d.img 64
printf 'label: dos\nstart=%d, size=%d, type=83\n' $PSTART $PLEN | sfdisk -q d.img >/dev/null
put d.img p.img $PSTART
backup d.img
check "MBR alone: status 0 ($s: $(head -c 300 b.err))" [ "$s" -eq 0 ]
has_fs ext4 "MBR alone: its ext4 mapped" && check "MBR alone: mapped" grep -q "skipped as free" b.err

section "two signatures in one small filesystem"
# libblkid's safe probe takes the first match unchecked on a region of
# 1.44 MB or less: a FAT12 floppy image holding an old ext2 superblock
# (its FAT's sectors over it) must still be read whole
truncate -s 1M e2.img && mke2fs -q -F -t ext2 e2.img >/dev/null 2>&1
truncate -s 1M tiny.img && mkfs.vfat -R 4 tiny.img >/dev/null
dd if=e2.img of=tiny.img bs=1024 skip=1 seek=1 count=1 conv=notrunc status=none
backup tiny.img
check "a 1 MiB FAT12 over an ext2 superblock: status 2 ($s)" [ "$s" -eq 2 ]
check "a 1 MiB FAT12 over an ext2 superblock: read whole ($(head -c 200 b.err))" \
    grep -q "read whole: more than one filesystem signature" b.err
check "a 1 MiB FAT12 over an ext2 superblock: restored whole" cmp -s tiny.img r.img

section "an MBR disk keeping an old GPT's backup header at its end"
stale d.img 64
SECTORS=$((64 * 2048))
printf 'label: gpt\nstart=2048, size=%d\n' $((SECTORS - 4096)) | sfdisk -q d.img >/dev/null ||
    fail "sfdisk gpt"
dd if=/dev/zero of=d.img bs=512 count=34 conv=notrunc status=none # the primary wiped
# the MBR's partition runs to the disk's end: the old backup header and its
# entries lie in the ext4's free space, and are kept all the same
MLEN=$((SECTORS - PSTART))
printf 'label: dos\nstart=%d, size=%d, type=83\n' $PSTART $MLEN | sfdisk -q d.img >/dev/null
mk_ext4_part q.img $MLEN
# keep the stale header: the ext4 image ends in its own (free) bytes there
head -c $(((MLEN - 33) * S)) q.img > q2.img
put d.img q2.img $PSTART
backup d.img
check "stale GPT backup: status 2 ($s)" [ "$s" -eq 2 ]
check "stale GPT backup: the warning names it ($(head -c 400 b.err))" grep -q "a GPT (backup header" b.err
check "stale GPT backup: its header and entries are kept" \
    cmp -s <(tail -c $((33 * S)) d.img) <(tail -c $((33 * S)) r.img)
part_of r.img $PSTART $MLEN rp.img
files_ok rp.img "stale GPT backup"

section "a GPT whose primary and backup disagree"
stale d.img 64
printf 'label: gpt\nstart=2048, size=%d\n' $PLEN | sfdisk -q d.img >/dev/null
put d.img p.img $PSTART
# the backup's first entry made to end earlier, both CRCs recomputed: a
# valid header that says something else
"$PY3" - d.img <<'EOF'
import struct, sys, zlib
f = open(sys.argv[1], "r+b")
f.seek(512); h = bytearray(f.read(512))
alt = struct.unpack_from("<Q", h, 32)[0]
f.seek(alt * 512); b = bytearray(f.read(512))
hs, ent_lba, n, es = (struct.unpack_from("<I", b, 12)[0], struct.unpack_from("<Q", b, 72)[0],
                      struct.unpack_from("<I", b, 80)[0], struct.unpack_from("<I", b, 84)[0])
f.seek(ent_lba * 512); a = bytearray(f.read(n * es))
end = struct.unpack_from("<Q", a, 40)[0]
struct.pack_into("<Q", a, 40, end - 20000)
struct.pack_into("<I", b, 88, zlib.crc32(a))
struct.pack_into("<I", b, 16, 0); struct.pack_into("<I", b, 16, zlib.crc32(b[:hs]))
f.seek(ent_lba * 512); f.write(a); f.seek(alt * 512); f.write(b)
EOF
backup d.img
check "primary and backup GPT differ: status 2 ($s)" [ "$s" -eq 2 ]
check "primary and backup GPT differ: both named ($(head -c 400 b.err))" \
    sh -c 'grep -q "a GPT (primary header" b.err && grep -q "a GPT (backup header" b.err'
part_of r.img $PSTART $PLEN rp.img
files_ok rp.img "primary and backup GPT differ"
only_free d.img r.img "ext4@$((PSTART * S))+$((PLEN * S))"

section "an extended boot record inside a primary's free space"
# primary 1: the ext4 at 2048; an extended partition whose first EBR lies
# in the ext4's free space (sector 90000), describing a logical partition
# after the primary (sectors 105000-130000); the kernel and fdisk list it
stale d.img 64
put d.img p.img $PSTART
"$PY3" - d.img <<'EOF'
import struct, sys
f = open(sys.argv[1], "r+b")
def entry(boot, typ, start, size):
    return struct.pack("<B3sB3sII", boot, b"\0\0\0", typ, b"\0\0\0", start, size)
mbr = bytearray(512)
mbr[446:462] = entry(0, 0x83, 2048, 100000)
mbr[462:478] = entry(0, 0x05, 90000, 41000)
mbr[510:512] = b"\x55\xaa"
ebr = bytearray(512)
ebr[446:462] = entry(0, 0x83, 15000, 25000) # the logical: 105000 .. 130000
ebr[510:512] = b"\x55\xaa"
f.seek(0); f.write(mbr)
f.seek(90000 * 512); f.write(ebr)
EOF
mk_ext4_part l.img 25000
put d.img l.img 105000
check "the crafted disk: sfdisk lists the logical partition" sh -c 'sfdisk -d d.img | grep -q "start=  *105000"'
backup d.img
check "an EBR in a primary's free space: its sector restored" \
    cmp -s <(part_of d.img 90000 1 /dev/stdout) <(part_of r.img 90000 1 /dev/stdout)
check "an EBR in a primary's free space: the table restored" cmp -s <(table d.img) <(table r.img)
check "an EBR in a primary's free space: said ($(head -c 300 b.err))" grep -q "covers the partition table" b.err
part_of r.img 105000 25000 rl.img
files_ok rl.img "the logical partition"
part_of r.img $PSTART $PLEN rp.img
files_ok rp.img "the primary around the EBR"

section "a GPT of 4096-byte sectors in an image file"
# written by sfdisk through a loop device of 4 KiB logical sectors
stale d.img 64
if loop_attach dev -b 4096 d.img; then
    printf 'label: gpt\nstart=256, size=%d\n' $((PLEN / 8)) | sfdisk -q "$dev" >/dev/null 2>&1 ||
        fail "sfdisk on a 4 KiB loop device"
    loop_detach "$dev"
    mk_ext4_part p4.img $PLEN
    put d.img p4.img $((256 * 8))
    backup d.img
    check "4 KiB GPT: status 0 ($s: $(head -c 300 b.err))" [ "$s" -eq 0 ]
    has_fs ext4 "4 KiB GPT: its ext4 mapped" &&
        check "4 KiB GPT: its partition mapped" grep -q "partition 1 (gpt.*ext4.*skipped as free" b.err
    part_of r.img $((256 * 8)) $PLEN rp.img
    files_ok rp.img "4 KiB GPT"
else
    fail "losetup -b 4096: loop devices are needed"
fi

finish

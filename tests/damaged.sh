#!/bin/bash
# damaged.sh — --free=zero on damaged ext2/3/4 and NTFS (the second reading): a
# damaged allocation map must not hand its damage to the backup.  Each
# filesystem is made by its own tools over random bytes (the stale data of a
# used disk) with real files in it, then damaged as a bad sector, a ddrescue
# fill or a bad write would: a group descriptor's block-bitmap pointer zeroed
# or past the end, a descriptor checksum wrong, a block-bitmap block zeroed
# (ext2, ext3, ext4 with and without metadata_csum, bigalloc), an extent
# tree leaf zeroed, a $Bitmap cluster zeroed (under and over the dispute
# bound), a live MFT record zeroed.  The backup must restore every file byte
# for byte and every byte the healthy filesystem used, with status 2 and a
# message naming the cause.  Healthy filesystems of each kind stay mapped:
# status 0, no dispute, the restore their image with its free blocks zeroed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fslib.sh"
need_free_zero # a build without it: the refusal checked, then SKIP
need python3 mke2fs debugfs dumpe2fs mkntfs ntfscp ntfscat ntfsinfo ntfsls cmp
FSFREE="$srcdir/tests/py/fsfree.py"
cd "$T" || exit 1

# 450 files of 1 byte to 300 KB (20 MB); NTFS gets the first 60
mkdir -p src/t
"$PY3" - <<'EOF'
import random
r = random.Random(22)
for i in range(450):
    n = r.choice([100, 3000, 20000, 70000, 300000])
    open("src/t/f%03d" % i, "wb").write(r.randbytes(r.randint(1, n)))
EOF
# mk_ext FILE MiB MKE2FS-OPTION...: the files under /t
mk_ext() { mkfs_ext "$1" "$2" src "${@:3}"; }
# mk_ntfs FILE MiB MKNTFS-OPTION...: the first 60 files at the root
mk_ntfs() { local names; mapfile -t names < <(seq -f 'f%03g' 0 59)
            mkfs_ntfs "$@"; ntfs_put "$1" src/t "${names[@]}"; }

# ext_bitmap FILE: "BLOCK BLOCKSIZE" of the block bitmap of the group other
# than 0 with the most blocks in use (its bitmap initialised)
ext_bitmap() {
    dumpe2fs "$1" 2>/dev/null | "$PY3" -c '
import re, sys
bs, best, g, bb, uninit = 0, None, None, None, False
for line in sys.stdin:
    m = re.match(r"Block size:\s+(\d+)", line)
    if m: bs = int(m.group(1))
    m = re.match(r"Group (\d+): \(Blocks (\d+)-(\d+)\)(.*)", line)
    if m:
        g, size = int(m.group(1)), int(m.group(3)) - int(m.group(2)) + 1
        uninit = "BLOCK_UNINIT" in m.group(4)
    m = re.match(r"\s+Block bitmap at (\d+)", line)
    if m: bb = int(m.group(1))
    m = re.match(r"\s+(\d+) free (blocks|clusters)", line)
    if m and g and not uninit:
        used = size - int(m.group(1))
        if best is None or used > best[0]: best = (used, bb)
print(best[1], bs)'
}
# ntfs_bitmap FILE: "LCN CLUSTERSIZE" of the $Bitmap cluster with the most
# clusters in use, the boot sector's first cluster of it left alone
ntfs_bitmap() {
    local cs
    cs=$(ntfsinfo -m "$1" | sed -n 's/.*Cluster Size: *//p')
    # shellcheck disable=SC2016
    ntfscat "$1" '$Bitmap' > bm.bin
    ntfsinfo -v -i 6 "$1" | "$PY3" -c '
import re, sys
cs, runs, on = int(sys.argv[1]), [], False
for line in sys.stdin:
    if "Runlist:" in line: runs, on = [], True; continue
    m = re.match(r"\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s*$", line)
    if on and m: runs.append(tuple(int(x, 16) for x in m.groups()))
    elif on and runs: on = False
bm = open("bm.bin", "rb").read()
k = len(bm) // cs
ones = lambda i: sum(bin(b).count("1") for b in bm[i * cs:(i + 1) * cs])
pick = 0 if k <= 1 else max(range(1, k), key=ones)
for vcn, lcn, n in runs:
    if vcn <= pick < vcn + n: print(lcn + pick - vcn, cs)' "$cs"
}
# zero FILE BLOCK SIZE: a bad sector, or a ddrescue fill
zero() { dd if=/dev/zero of="$1" bs="$3" seek="$2" count=1 conv=notrunc status=none; }

# same_used WHAT RESTORED DAMAGED FREELIST: every byte outside FREELIST
# (the healthy filesystem's free ranges, "OFF LEN" lines) is the damaged
# image's
same_used() {
    check "$1: every byte the healthy filesystem used is restored" "$PY3" -c '
import sys
a, b = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
if len(a) != len(b): sys.exit("lengths differ")
at = 0
for line in list(open(sys.argv[3])) + ["%d 0" % len(a)]:
    off, n = map(int, line.split())
    if a[at:off] != b[at:off]:
        sys.exit("used bytes differ in [%d, %d)" % (at, off))
    at = max(at, off + n)' "$2" "$3" "$4"
}
# files_back KIND WHAT RESTORED: every file reads back from the restore
files_back() {
    local n got=0 total=0
    case $1 in
    ext) rm -rf out && mkdir out
         debugfs -c -R "rdump /t out" "$3" >/dev/null 2>&1
         for n in src/t/*; do
             total=$((total + 1)); cmp -s "$n" "out/t/${n##*/}" && got=$((got + 1))
         done ;;
    ntfs) for n in $(seq -f 'f%03g' 0 59); do
              total=$((total + 1))
              ntfscat "$3" "$n" 2>/dev/null | cmp -s - "src/t/$n" && got=$((got + 1))
          done ;;
    esac
    check "$2: $got of $total files read back" [ "$got" -eq "$total" ]
}

# fsfree.py's name for a kind: dumpe2fs reads ext2 and ext3 as well
fsfree_type() { if [ "$1" = ntfs ]; then echo ntfs; else echo ext4; fi; }
# healthy KIND WHAT IMAGE: mapped, status 0, no dispute, the restore the
# image with its free blocks zeroed (fsfree.py asks the filesystem's tools)
# A filesystem this build does not map (configure --without-ext2fs or
# --without-ntfs3g) is read whole: its cases are skipped, each noted.
RAN=
healthy() {
    local s
    has_fs "$1" "$2" || return 0
    RAN=1
    "$SPIGZ" --free=zero -v -c "$3" > h.gz 2> h.err; s=$?
    check "$2: status $s, expected 0 ($(head -c 300 h.err))" [ "$s" -eq 0 ]
    check "$2: mapped ($(head -c 300 h.err))" grep -q "skipped as free" h.err
    check "$2: no dispute ($(head -c 300 h.err))" sh -c "! grep -q 'calls free' h.err"
    "$PY3" "$FSFREE" expect "$3" e.img "$(fsfree_type "$1")@0+$(stat -c %s "$3")" || fail "$2: fsfree.py"
    check "$2: the restore is the image with its free blocks zeroed" \
        sh -c "'$SPIGZ' -dc h.gz | cmp -s - e.img"
}
# damaged KIND WHAT HEALTHY DAMAGED PATTERN: status 2, the cause named,
# nothing lost
damaged() {
    local s
    has_fs "$1" "$2" || return 0
    "$PY3" "$FSFREE" "$(fsfree_type "$1")" "$3" > free.txt ||
        fail "$2: fsfree.py on the healthy image"
    "$SPIGZ" --free=zero -c "$4" > d.gz 2> d.err; s=$?
    check "$2: status $s, expected 2 ($(head -c 300 d.err))" [ "$s" -eq 2 ]
    check "$2: the message names the cause ($(head -c 300 d.err))" grep -q "$5" d.err
    "$SPIGZ" -dc d.gz > r.img || fail "$2: restore"
    same_used "$2" r.img "$4" free.txt
    files_back "$1" "$2" r.img
}

section "ext: a corrupt group descriptor (e2fsck: Corrupt group descriptor)"
mk_ext e4.img 96 -t ext4 -b 1024 -g 4096
healthy ext "ext4, 1 KiB blocks, 4 MiB groups" e4.img
for bad in 0 99999999; do
    cp e4.img d.img
    debugfs -w -R "set_bg 2 block_bitmap $bad" d.img >/dev/null 2>&1 || fail "debugfs set_bg"
    damaged ext "ext4, group 2's block bitmap at $bad" e4.img d.img "group descriptors are corrupt"
done
cp e4.img d.img
debugfs -w -R "set_bg 1 checksum 0x1234" d.img >/dev/null 2>&1 || fail "debugfs set_bg checksum"
damaged ext "ext4, group 1's descriptor checksum wrong" e4.img d.img \
    "checksum of its group descriptor 1"

section "ext: a block-bitmap block zeroed"
mk_ext e2.img 96 -t ext2 -b 1024
mk_ext e3.img 128 -t ext3 -b 4096 -g 4096
mk_ext e4n.img 96 -t ext4 -O ^metadata_csum -b 4096 -g 2048
mk_ext e4c.img 96 -t ext4 -b 4096 -g 2048
mk_ext ebig.img 128 -t ext4 -O bigalloc,^metadata_csum -b 1024 -C 16384 -g 1024
for spec in "ext2 1 KiB blocks:e2.img:calls free" "ext3 4 KiB blocks:e3.img:calls free" \
    "ext4 without metadata_csum:e4n.img:calls free" \
    "ext4 bigalloc 16 KiB clusters:ebig.img:calls free" \
    "ext4 with metadata_csum:e4c.img:checksum does not match"; do
    what=${spec%%:*}; rest=${spec#*:}; img=${rest%%:*}; pat=${rest#*:}
    healthy ext "$what" "$img"
    cp "$img" d.img
    # shellcheck disable=SC2046
    zero d.img $(ext_bitmap "$img")
    damaged ext "$what, a block bitmap zeroed" "$img" d.img "$pat"
done

section "ext: a damaged extent tree, and healthy layouts"
mkdir sp
"$PY3" -c 'import random; r = random.Random(5); f = open("sp/sparse", "wb")
for i in range(300): f.seek(i * 8192); f.write(r.randbytes(4096))'
stale sp.img 32
mke2fs -q -F -E nodiscard -t ext4 -O ^metadata_csum -b 1024 -d sp sp.img >/dev/null 2>&1 ||
    fail "mke2fs sp.img"
# the root's one index entry: "0/ 1   1/  1     0 -   655  4402   656" (its
# physical block, the leaf)
leaf=$(debugfs -R "ex /sparse" sp.img 2>/dev/null |
    sed -n 's|^ *0/ *[0-9]* *[0-9]*/ *[0-9]* *[0-9]* *- *[0-9]* *\([0-9]*\) .*|\1|p' | head -n 1)
check "the sparse file has an extent leaf block ($leaf)" [ -n "$leaf" ]
healthy ext "ext4, a file of 300 extents" sp.img
cp sp.img d.img
zero d.img "${leaf:-0}" 1024
if has_fs ext4 "an extent leaf zeroed"; then
    "$SPIGZ" --free=zero -c d.img > d.gz 2> d.err; s=$?
    check "an extent leaf zeroed: status $s, expected 2 ($(head -c 300 d.err))" [ "$s" -eq 2 ]
    check "an extent leaf zeroed: read whole, naming the inode ($(head -c 300 d.err))" \
        grep -q "read whole: inode 12: its extent tree cannot be read" d.err
    check "an extent leaf zeroed: the restore is the image" sh -c "'$SPIGZ' -dc d.gz | cmp -s - d.img"
fi
mk_ext emeta.img 96 -t ext4 -O meta_bg,^resize_inode -b 1024 -g 1024
healthy ext "ext4 meta_bg, 1 KiB blocks, 96 groups" emeta.img
mk_ext e64k.img 128 -t ext4 -b 65536
healthy ext "ext4 64 KiB blocks" e64k.img
mk_ext e3r.img 64 -t ext3 -b 2048
healthy ext "ext3 2 KiB blocks, a resize inode" e3r.img
mk_ext emmp.img 64 -t ext4 -O mmp,sparse_super2
healthy ext "ext4 with an MMP block and two superblock backups (sparse_super2)" emmp.img
# (with nodiscard over stale bytes mke2fs 1.47.0 fails to make the orphan
# file: it reads an inode of the uninitialised table; discarded, it is zeros)
stale equota.img 64
mke2fs -q -F -d src -t ext4 -O quota,project,orphan_file equota.img >/dev/null 2>&1 ||
    fail "mke2fs quota,project,orphan_file"
healthy ext "ext4 with quota inodes and an orphan file" equota.img
printf '30000\n30001\n40000\n' > bad.txt
mk_ext ebad.img 64 -t ext4 -b 1024 -l bad.txt
healthy ext "ext4 with three bad blocks listed (inode 1)" ebad.img

section "NTFS: a \$Bitmap cluster zeroed, a live MFT record zeroed"
mk_ntfs n512.img 64 -c 512
healthy ntfs "NTFS 512-byte clusters" n512.img
cp n512.img d.img
# shellcheck disable=SC2046
zero d.img $(ntfs_bitmap n512.img)
damaged ntfs "NTFS 512-byte clusters, a \$Bitmap cluster zeroed (under the bound)" n512.img d.img \
    "its allocation map calls free"
mk_ntfs n4k.img 64
healthy ntfs "NTFS 4 KiB clusters" n4k.img
cp n4k.img d.img
# shellcheck disable=SC2046
zero d.img $(ntfs_bitmap n4k.img)
damaged ntfs "NTFS 4 KiB clusters, its one \$Bitmap cluster zeroed (over the bound)" n4k.img d.img \
    "read whole: its allocation map calls free"
# f030's record: its number from ntfsls, its place from $MFT's runlist
ino=$(ntfsls -i n4k.img 2>/dev/null | awk '$2 == "f030" { print $1 }')
at=$("$PY3" -c 'import sys; b = open(sys.argv[1], "rb").read(512)
bps, spc, mft = int.from_bytes(b[11:13], "little"), b[13], int.from_bytes(b[48:56], "little")
print(mft * bps * spc // 1024 + int(sys.argv[2]))' n4k.img "${ino:-0}")
check "f030 has a record ($ino)" [ -n "$ino" ]
cp n4k.img d.img
zero d.img "$at" 1024
if has_fs ntfs "a live MFT record zeroed"; then
    "$SPIGZ" --free=zero -c d.img > d.gz 2> d.err; s=$?
    check "a live MFT record zeroed: status $s, expected 2 ($(head -c 300 d.err))" [ "$s" -eq 2 ]
    check "a live MFT record zeroed: read whole, naming it ($(head -c 300 d.err))" \
        grep -q "read whole: MFT record $ino is damaged" d.err
    check "a live MFT record zeroed: the restore is the image" \
        sh -c "'$SPIGZ' -dc d.gz | cmp -s - d.img"
fi
if [ -z "$RAN" ] && [ "$FAILS" -eq 0 ]; then
    echo "damaged.sh: SKIP: this spigz maps neither ext2/3/4 nor NTFS: nothing checked"
    exit 77
fi
finish

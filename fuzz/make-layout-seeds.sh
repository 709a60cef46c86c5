#!/bin/sh
# Write fuzz_layout's seeds into DIR: small filesystems made by their own
# mkfs (FAT12, FAT16, ext2 with 1 KiB blocks, ext4 without a journal, swap,
# exFAT, NTFS, each with a file written into it where a tool can do it
# without mounting), alone and inside an MBR (with a logical partition) and
# a GPT disk; ext2, ext4 and NTFS with a zeroed allocation bitmap; and
# trees of directories for the second reading, healthy and damaged; XFS
# (v5, v4) and btrfs as sparse images.
# Reproducible: fixed UUIDs, serials, times and content.  Run by
# scripts/fuzz.sh; nothing of it is committed (the NTFS and exFAT images
# are megabytes, mostly zeros).  A missing mkfs leaves its seed out.
#
# Usage: fuzz/make-layout-seeds.sh DIR
set -eu
dir=$1
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
U=11111111-2222-3333-4444-555555555555
export E2FSPROGS_FAKE_TIME=1 SOURCE_DATE_EPOCH=1
awk 'BEGIN { for (i = 0; i < 400; i++) printf "seed line %04d\n", i }' >"$tmp/file"
mkdir "$tmp/d" && cp "$tmp/file" "$tmp/d/file"
have() { command -v "$1" >/dev/null 2>&1; }

if have mkfs.vfat; then
    truncate -s 128K "$dir/fat12" && mkfs.vfat -F 12 -i 12345678 "$dir/fat12" >/dev/null
    truncate -s 5M "$tmp/fat16" && mkfs.vfat -F 16 -s 1 -i 12345678 "$tmp/fat16" >/dev/null || rm -f "$tmp/fat16"
    if have mcopy; then
        MTOOLS_SKIP_CHECK=1 mcopy -m -i "$dir/fat12" "$tmp/file" ::file 2>/dev/null || true
    fi
fi
if have mke2fs; then
    truncate -s 256K "$dir/ext2-1k"
    mke2fs -q -F -t ext2 -b 1024 -N 16 -U $U -E hash_seed=$U -d "$tmp/d" "$dir/ext2-1k"
    truncate -s 1M "$dir/ext4-nojournal"
    mke2fs -q -F -t ext4 -O ^has_journal -N 32 -U $U -E hash_seed=$U -d "$tmp/d" \
        "$dir/ext4-nojournal"
fi
# damaged, for the second reading (lay_fs.h): without metadata_csum, so
# that mutations reach the inode scan and the extent walk; ext4 with a
# sparse file of 40 extents (an extent tree of depth 1) and ext2 with a
# file through double-indirect blocks, each with its block bitmap zeroed
if have mke2fs && have dumpe2fs && have python3; then
    mkdir "$tmp/x"
    python3 -c 'import sys; f = open(sys.argv[1], "wb")
for i in range(40): f.seek(i * 2048); f.write(bytes([i + 1]) * 1024)' "$tmp/x/sparse"
    awk 'BEGIN { for (i = 0; i < 20000; i++) printf "indirect %05d\n", i }' >"$tmp/x/big"
    truncate -s 1M "$dir/ext4-extents-damaged"
    mke2fs -q -F -t ext4 -b 1024 -O ^has_journal,^metadata_csum -N 32 -U $U -E hash_seed=$U \
        -d "$tmp/x" "$dir/ext4-extents-damaged"
    truncate -s 1M "$dir/ext2-indirect-damaged"
    mke2fs -q -F -t ext2 -b 1024 -N 16 -U $U -E hash_seed=$U -d "$tmp/x" \
        "$dir/ext2-indirect-damaged"
    for f in "$dir/ext4-extents-damaged" "$dir/ext2-indirect-damaged"; do
        bb=$(dumpe2fs "$f" 2>/dev/null | sed -n 's/^ *Block bitmap at \([0-9]*\).*/\1/p' | head -n 1)
        dd if=/dev/zero of="$f" bs=1024 seek="$bb" count=1 conv=notrunc status=none
    done
fi
if have mkswap; then
    truncate -s 64K "$dir/swap" && mkswap -U $U "$dir/swap" >/dev/null 2>&1
fi
if have mkfs.exfat; then
    truncate -s 3M "$dir/exfat" && mkfs.exfat -L seed "$dir/exfat" >/dev/null 2>&1 || rm -f "$dir/exfat"
fi
if have mkntfs; then
    truncate -s 2M "$dir/ntfs" && mkntfs -Q -F -q -T -L seed "$dir/ntfs" >/dev/null 2>&1 || rm -f "$dir/ntfs"
fi
if [ -f "$dir/ntfs" ] && have python3; then
    # its $Bitmap (the data of MFT record 6) zeroed: every metadata file's
    # clusters disputed by the MFT scan
    python3 - "$dir/ntfs" "$dir/ntfs-bitmap-damaged" <<'EOF'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
bps, spc = int.from_bytes(d[11:13], "little"), d[13]
cs = bps * spc
mft = int.from_bytes(d[48:56], "little") * cs
rec = d[mft + 6 * 1024:mft + 7 * 1024]
at = int.from_bytes(rec[20:22], "little")
while int.from_bytes(rec[at:at + 4], "little") not in (0x80, 0xFFFFFFFF) and at < 1024:
    at += max(8, int.from_bytes(rec[at + 4:at + 8], "little"))
mp = at + int.from_bytes(rec[at + 32:at + 34], "little")
h = rec[mp]
lcn = int.from_bytes(rec[mp + 1 + (h & 15):mp + 1 + (h & 15) + (h >> 4)], "little")
d[lcn * cs:(lcn + 1) * cs] = bytes(cs)
open(sys.argv[2], "wb").write(d)
EOF
fi
if have sfdisk && [ -f "$dir/fat12" ] && [ -f "$dir/ext2-1k" ]; then
    # MBR: FAT12 primary at sector 63, an extended one, ext2 logical in it
    truncate -s 1M "$dir/mbr"
    printf 'label: dos\nlabel-id: 0x12345678\nstart=63, size=256, type=1\nstart=400, type=5\nstart=464, size=512, type=83\n' |
        sfdisk -q "$dir/mbr" >/dev/null
    dd if="$dir/fat12" of="$dir/mbr" bs=512 seek=63 conv=notrunc status=none
    dd if="$dir/ext2-1k" of="$dir/mbr" bs=512 seek=464 conv=notrunc status=none
    # GPT: the same two, and swap
    truncate -s 1M "$dir/gpt"
    printf 'label: gpt\nlabel-id: %s\nfirst-lba: 34\nstart=40, size=256, uuid=%s\nstart=296, size=512, uuid=%s\nstart=808, size=128, type=0657FD6D-A4AB-43C4-84E5-0933C84B4F4F, uuid=%s\n' \
        $U $U 22222222-2222-3333-4444-555555555555 33333333-2222-3333-4444-555555555555 |
        sfdisk -q "$dir/gpt" >/dev/null
    dd if="$dir/fat12" of="$dir/gpt" bs=512 seek=40 conv=notrunc status=none
    dd if="$dir/ext2-1k" of="$dir/gpt" bs=512 seek=296 conv=notrunc status=none
    dd if="$dir/swap" of="$dir/gpt" bs=512 seek=808 conv=notrunc status=none
fi
# Two layouts on one disk: a FAT16 made on the whole disk, then a table
# written beside its boot sector (the kernel reads the table, libblkid the
# FAT); and an MBR disk keeping an old GPT's backup header at its end.
if have sfdisk && have mkfs.vfat && [ -f "$dir/ext2-1k" ]; then
    truncate -s 3M "$dir/fat-under-mbr"
    mkfs.vfat -F 16 -s 1 -i 12345678 "$dir/fat-under-mbr" >/dev/null
    printf 'label: dos\nlabel-id: 0x12345678\nstart=2048, size=512, type=83\n' |
        sfdisk -q "$dir/fat-under-mbr" >/dev/null
    dd if="$dir/ext2-1k" of="$dir/fat-under-mbr" bs=512 seek=2048 conv=notrunc status=none
    truncate -s 2M "$dir/mbr-stale-gpt"
    printf 'label: gpt\nlabel-id: %s\nstart=40, size=512, uuid=%s\n' $U $U |
        sfdisk -q "$dir/mbr-stale-gpt" >/dev/null
    dd if=/dev/zero of="$dir/mbr-stale-gpt" bs=512 count=34 conv=notrunc status=none
    printf 'label: dos\nlabel-id: 0x12345678\nstart=63, size=512, type=83\n' |
        sfdisk -q "$dir/mbr-stale-gpt" >/dev/null
    dd if="$dir/ext2-1k" of="$dir/mbr-stale-gpt" bs=512 seek=63 conv=notrunc status=none
fi
# the FAT16 volume only for its boot sector and FATs: the first 64 KiB
[ -f "$tmp/fat16" ] && head -c 65536 "$tmp/fat16" >"$dir/fat16-head"

# The second reading (the directory trees): a FAT12 holding two levels of
# directories, and the same with its FAT's first sector zeroed in both
# copies (its chains broken); an exFAT given, by hand, a directory holding
# a file along a FAT chain and a NoFatChain one, and the same with those
# clusters cleared from its bitmap (the dispute).
if have mcopy && have mmd && have python3 && [ -f "$dir/fat12" ]; then
    truncate -s 256K "$dir/fat12-tree" && mkfs.vfat -F 12 -i 12345678 "$dir/fat12-tree" >/dev/null
    export MTOOLS_SKIP_CHECK=1
    if mmd -i "$dir/fat12-tree" ::d ::d/e && mcopy -m -i "$dir/fat12-tree" "$tmp/file" ::d/file &&
        mcopy -m -i "$dir/fat12-tree" "$tmp/file" ::d/e/file2 && mcopy -m -i "$dir/fat12-tree" "$tmp/file" ::top 2>/dev/null; then
        cp "$dir/fat12-tree" "$dir/fat12-tree-broken"
        python3 - "$dir/fat12-tree-broken" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    b = f.read(512)
    bps, res, nfats, fatsz = int.from_bytes(b[11:13], "little"), int.from_bytes(b[14:16], "little"), b[16], int.from_bytes(b[22:24], "little")
    for k in range(nfats):
        f.seek((res + k * fatsz) * bps + 3)  # entries 2 on: every chain
        f.write(bytes(bps - 3))
PY
    else
        rm -f "$dir/fat12-tree"
    fi
fi
if have python3 && [ -f "$dir/exfat" ]; then
    cp "$dir/exfat" "$dir/exfat-tree"
    python3 - "$dir/exfat-tree" "$dir/exfat-tree-nobitmap" <<'PY'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
le = lambda o, n: int.from_bytes(d[o:o + n], "little")
def put(o, n, v): d[o:o + n] = v.to_bytes(n, "little")
bps = 1 << d[108]; cl = bps << d[109]
fat, heap, count, root = le(80, 4) * bps, le(88, 4) * bps, le(92, 4), le(96, 4)
at = lambda c: heap + (c - 2) * cl
bm = next(le(at(root) + i + 20, 4) for i in range(0, cl, 32) if d[at(root) + i] == 0x81)
used = lambda c: d[at(bm) + (c - 2) // 8] >> ((c - 2) % 8) & 1
free = [c for c in range(2, count + 2) if not used(c)][:4]
def entry_set(name, attr, first, length, nofat):
    e = bytearray(96)
    e[0], e[1] = 0x85, 2
    e[4:6] = attr.to_bytes(2, "little")
    e[32], e[33], e[35] = 0xC0, 1 | (2 if nofat else 0), len(name)
    e[40:48] = e[56:64] = length.to_bytes(8, "little")
    e[52:56] = first.to_bytes(4, "little")
    e[64] = 0xC1
    e[66:66 + 2 * len(name)] = name.encode("utf-16-le")
    s = 0
    for i, x in enumerate(e):
        if i not in (2, 3):
            s = ((s >> 1) | ((s & 1) << 15)) + x & 0xFFFF
    e[2:4] = s.to_bytes(2, "little")
    return e
slot = next(i for i in range(0, cl, 32) if d[at(root) + i] == 0)
d[at(root) + slot:at(root) + slot + 96] = entry_set("d", 0x10, free[0], cl, True)
d[at(free[0]):at(free[0]) + 192] = entry_set("f", 0x20, free[1], 2 * cl, False) + \
    entry_set("g", 0x20, free[3], 100, True)
put(fat + 4 * free[1], 4, free[2]); put(fat + 4 * free[2], 4, 0xFFFFFFFF)
for c in free:
    d[at(bm) + (c - 2) // 8] |= 1 << ((c - 2) % 8)
open(sys.argv[1], "wb").write(d)
for c in free:
    d[at(bm) + (c - 2) // 8] &= ~(1 << ((c - 2) % 8)) & 0xFF
open(sys.argv[2], "wb").write(d)
PY
    # the same two in 80 KiB (the FAT moved to sector 24, the heap cut to
    # 16 clusters from 16 KiB, the checksum redone): fuzzed 30 times faster
    for n in tree tree-nobitmap; do
        python3 - "$dir/exfat-$n" "$dir/exfat-small-$n" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
le = lambda o, n: int.from_bytes(d[o:o + n], "little")
bps = 1 << d[108]; spc = 1 << d[109]
boot = bytearray(d[:12 * bps])
boot[72:80] = (32 + 16 * spc).to_bytes(8, "little")  # VolumeLength
boot[80:84] = (24).to_bytes(4, "little")             # FatOffset
boot[84:88] = (1).to_bytes(4, "little")              # FatLength
boot[88:92] = (32).to_bytes(4, "little")             # ClusterHeapOffset
boot[92:96] = (16).to_bytes(4, "little")             # ClusterCount
s = 0
for i, x in enumerate(boot[:11 * bps]):
    if i not in (106, 107, 112):
        s = ((s >> 1) | ((s & 1) << 31)) + x & 0xFFFFFFFF
boot[11 * bps:] = s.to_bytes(4, "little") * (bps // 4)
fat, heap = le(80, 4) * bps, le(88, 4) * bps
out = bytes(boot) * 2 + d[fat:fat + bps] + bytes(7 * bps) + d[heap:heap + 16 * spc * bps]
open(sys.argv[2], "wb").write(out)
PY
    done
fi
# XFS (v5 and v4) and btrfs: tens of MiB, written as sparse images
# (fuzz_layout.c's sparse_image(): "SPZSPARS", the size in MiB, then each
# 4 KiB block that is not zeros, numbered)
sparse() {
    python3 - "$1" "$2" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
out = bytearray(b"SPZSPARS" + (len(d) >> 20).to_bytes(4, "little"))
for i in range(0, len(d), 4096):
    b = d[i:i + 4096]
    if b.strip(b"\0"):
        out += (i // 4096).to_bytes(4, "little") + b.ljust(4096, b"\0")
open(sys.argv[2], "wb").write(out)
PY
}
if have mkfs.xfs && have python3; then
    for v in 5 4; do
        crc=1 && [ $v = 4 ] && crc=0
        truncate -s 20M "$tmp/xfs$v"
        if TEST_DIR=1 TEST_DEV=1 QA_CHECK_FS=1 mkfs.xfs -q -f -m crc=$crc,uuid=$U "$tmp/xfs$v" >/dev/null 2>&1; then
            sparse "$tmp/xfs$v" "$dir/xfs-v$v.sparse"
        fi
    done
fi
if have mkfs.btrfs && have python3; then
    truncate -s 114M "$tmp/btrfs"
    if mkfs.btrfs -q -f -U $U "$tmp/btrfs" >/dev/null 2>&1; then
        sparse "$tmp/btrfs" "$dir/btrfs.sparse"
    fi
fi
exit 0

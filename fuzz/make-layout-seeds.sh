#!/bin/sh
# Write fuzz_layout's seeds into DIR: small filesystems made by their own
# mkfs (FAT12, FAT16, ext2 with 1 KiB blocks, ext4 without a journal, swap,
# exFAT, NTFS, each with a file written into it where a tool can do it
# without mounting), alone and inside an MBR (with a logical partition) and
# a GPT disk; and ext2, ext4 and NTFS with a zeroed allocation bitmap.
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
exit 0

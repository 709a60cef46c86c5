#!/usr/bin/env bash
# free-bench.sh — --free=zero on a used disk, side by side with the same disk
# with its free space zeroed, pigz, partclone and e2image.
#
# usage: bench/free-bench.sh [--dir DIR] [--spigz PATH] [--threads N] [--out FILE]
#
# The image, used-disk.img (about 4.3 GiB, built once into DIR, default
# $BENCH_DIR or /var/tmp/spigz-bench, from mkimages.sh's data.img and
# ext4-usr.img, which are built first when missing): a GPT disk whose every
# byte first held old data (data.img's /usr content, over and over: the
# deleted files of a used disk), then
#   p1  256 MiB FAT32 (EFI), given 40 MB of the /usr sample with mtools;
#   p2  4 GiB ext4, ext4-usr.img's used blocks written over the old data
#       (e2image -ra onto a loop device writes only used blocks);
#   p3  1 GiB NTFS, quick-formatted (mkntfs -Q) over the old data, given
#       200 MB of the sample through ntfs-3g.
# used-disk-zeroed.img is the same disk with its free space zeroed by other
# tools: zerofree for the ext4, tests/py/fsfree.py for the FAT32 (from its
# specification) and the NTFS (ntfscat's $Bitmap).  Both are compressed
# with spigz at -6.
#
# Rows: time (wall, page cache warm, median of 3 for spigz), output size,
# bytes read (spigz: its -vv accounting, input minus what it skipped unread,
# plus the metadata its layout readers read).  Targets (backups of
# used disks): output <= 1.01x the zeroed disk's, time <= 1.1x, >= 8x faster
# than pigz -6, the estimate's split exact and fast.
# Needs root (loop devices), sfdisk, mkfs.vfat, mtools, e2image, zerofree,
# partclone.ext4, partclone.vfat, partclone.ntfs, ntfs-3g, pigz.
{
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
top=$(cd "$here/.." && pwd -P)
dir=${BENCH_DIR:-/var/tmp/spigz-bench} spigz=$top/spigz threads=2 out=''
while [ $# -gt 0 ]; do
    case $1 in
    --dir) dir=$2; shift 2 ;;
    --spigz) spigz=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) sed -n '3,/^$/s/^# \{0,1\}//p' "$0"; exit 1 ;;
    esac
done
say() { printf 'free-bench: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }
for t in sfdisk mkfs.vfat mcopy e2image zerofree partclone.ext4 partclone.vfat partclone.ntfs mkntfs ntfs-3g pigz losetup; do
    command -v "$t" >/dev/null || die "$t is not installed"
done
[ -x "$spigz" ] || die "no spigz at $spigz"
MIB=1048576
P1_OFF=$MIB P1_LEN=$((256 * MIB))
P2_OFF=$((257 * MIB)) P2_LEN=$((4096 * MIB))
P3_OFF=$((P2_OFF + P2_LEN)) P3_LEN=$((1024 * MIB))
SIZE=$((P3_OFF + P3_LEN + MIB))
LOOPS=()
cleanup() { for l in "${LOOPS[@]}"; do losetup -d "$l" 2>/dev/null || true; done; }
trap cleanup EXIT
# loop IMG OFF LEN: attach, the device into $l (not through a command
# substitution: its subshell would lose LOOPS, and an error would leak it)
loop() { l=$(losetup -f --show -o "$2" --sizelimit "$3" "$1"); LOOPS+=("$l"); }
unloop() { losetup -d "$1"; LOOPS=("${LOOPS[@]/$1}"); }

# ---- the images -------------------------------------------------------------
RECIPE="used-disk v3"
if [ ! -f "$dir/used-disk.img" ] || [ "$(cat "$dir/.used-disk.stamp" 2>/dev/null)" != "$RECIPE" ]; then
    [ -f "$dir/data.img" ] && [ -f "$dir/ext4-usr.img" ] ||
        "$here/mkimages.sh" --only data,ext4-usr "$dir" >&2
    say "building used-disk.img (4.3 GiB: old data, then GPT, FAT32 and ext4)"
    t0=$SECONDS
    img=$dir/used-disk.img.tmp
    rm -f "$img" "$dir/used-disk.img" "$dir/used-disk-zeroed.img" "$dir/.used-disk.stamp"
    reps=$(( (SIZE + $(stat -c %s "$dir/data.img") - 1) / $(stat -c %s "$dir/data.img") ))
    for _ in $(seq "$reps"); do cat "$dir/data.img"; done > "$img"
    truncate -s "$SIZE" "$img"
    [ "$(stat -c %s "$img")" = "$SIZE" ] || die "filling used-disk.img failed"
    printf 'label: gpt\nlabel-id: 5A5A5A5A-1111-2222-3333-444444444444\nstart=%d, size=%d, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, uuid=5A5A5A5A-1111-2222-3333-000000000001\nstart=%d, size=%d, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, uuid=5A5A5A5A-1111-2222-3333-000000000002\nstart=%d, size=%d, type=EBD0A0A2-B9E5-4433-87C0-68B6B72699C7, uuid=5A5A5A5A-1111-2222-3333-000000000003\n' \
        $((P1_OFF / 512)) $((P1_LEN / 512)) $((P2_OFF / 512)) $((P2_LEN / 512)) \
        $((P3_OFF / 512)) $((P3_LEN / 512)) | sfdisk -q "$img" >/dev/null
    loop "$img" $P1_OFF $P1_LEN
    mkfs.vfat -F 32 -n EFI -i 5a5a5a5a "$l" >/dev/null
    # 40 MB of the sample's files, flat names
    stg=$(mktemp -d "$dir/.fat.XXXXXX")
    total=0 n=0
    while IFS=$'\t' read -r sz p && [ "$total" -lt $((40 * MIB)) ]; do
        n=$((n + 1)); cp "$p" "$stg/f$n" 2>/dev/null && total=$((total + sz))
    done < "$dir/usr-manifest.tsv"
    MTOOLS_SKIP_CHECK=1 mcopy -i "$l" "$stg"/* :: >/dev/null
    rm -rf "$stg"
    unloop "$l"
    loop "$img" $P2_OFF $P2_LEN
    e2image -ra "$dir/ext4-usr.img" "$l" 2>/dev/null
    unloop "$l"
    loop "$img" $P3_OFF $P3_LEN
    mkntfs -Q -F -q -L DATA -T "$l" >/dev/null 2>&1
    mnt=$(mktemp -d "$dir/.mnt.XXXXXX")
    ntfs-3g "$l" "$mnt"
    total=0 n=0
    while IFS=$'\t' read -r sz p && [ "$total" -lt $((200 * MIB)) ]; do
        n=$((n + 1)); [ "$n" -gt 2000 ] || continue # not the FAT's files
        cp "$p" "$mnt/f$n" 2>/dev/null && total=$((total + sz))
    done < "$dir/usr-manifest.tsv"
    umount "$mnt"
    rmdir "$mnt"
    unloop "$l"
    mv "$img" "$dir/used-disk.img"
    say "building used-disk-zeroed.img (zerofree on the ext4, fsfree.py on the FAT32)"
    zimg=$dir/used-disk-zeroed.img.tmp
    cp --sparse=never "$dir/used-disk.img" "$zimg"
    loop "$zimg" $P2_OFF $P2_LEN
    zerofree "$l"
    unloop "$l"
    # zerofree stamps the superblock it closes (write time, kbytes written,
    # checksum): put the original back, so that the twins differ only in
    # free space
    dd if="$dir/used-disk.img" of="$zimg" bs=1024 skip=$(((P2_OFF + 1024) / 1024)) \
        seek=$(((P2_OFF + 1024) / 1024)) count=1 conv=notrunc status=none
    for p in vfat:$P1_OFF:$P1_LEN ntfs:$P3_OFF:$P3_LEN; do
        IFS=: read -r kind off len <<< "$p"
        dd if="$zimg" of="$dir/.p" bs=1M skip=$((off / MIB)) count=$((len / MIB)) status=none
        python3 "$top/tests/py/fsfree.py" expect "$dir/.p" "$dir/.pz" "$kind@0+$len"
        dd if="$dir/.pz" of="$zimg" bs=1M seek=$((off / MIB)) conv=notrunc status=none
        rm -f "$dir/.p" "$dir/.pz"
    done
    mv "$zimg" "$dir/used-disk-zeroed.img"
    echo "$RECIPE" > "$dir/.used-disk.stamp"
    say "images done in $((SECONDS - t0)) s"
fi
U=$dir/used-disk.img Z=$dir/used-disk-zeroed.img
o=$dir/out/free-bench
mkdir -p "$o"

# ---- runs -------------------------------------------------------------------
warm() { cat "$@" > /dev/null; }
# timed OUTFILE CMD...: wall seconds of CMD (stdout to OUTFILE)
timed() {
    local f=$1 t0 t1; shift
    t0=${EPOCHREALTIME/./}
    "$@" > "$f"
    t1=${EPOCHREALTIME/./}
    awk "BEGIN { printf \"%.3f\", ($t1 - $t0) / 1e6 }"
}
median3() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
rows=()
row() { rows+=("| $1 | $2 | $3 | $4 | $5 |"); }
warm "$U" "$Z"
ts=()
for _ in 1 2 3; do ts+=("$(timed "$o/used-free.gz" "$spigz" -p "$threads" --free=zero -c "$U")"); done
t_free=$(median3 "${ts[@]}")
s_free=$(stat -c %s "$o/used-free.gz")
acct=$("$spigz" -p "$threads" --free=zero -vv -c "$U" 2>&1 > /dev/null)
read_free=$(echo "$acct" | sed -n 's/.*(\([0-9]*\) bytes in, .* \([0-9]*\) holes, \([0-9]*\) free).*/\1 \2 \3/p' |
    awk '{ print $1 - $2 - $3 }')
meta=$(echo "$acct" | sed -n 's/.*; \(.*\) of metadata read.*/\1/p')
row "spigz --free=zero -p $threads, used disk" "$t_free" "$s_free" "$read_free + $meta metadata" "median of 3: ${ts[*]}"
ts=()
for _ in 1 2 3; do ts+=("$(timed "$o/zeroed.gz" "$spigz" -p "$threads" -c "$Z")"); done
t_zero=$(median3 "${ts[@]}")
s_zero=$(stat -c %s "$o/zeroed.gz")
row "spigz -p $threads, the disk with its free space zeroed" "$t_zero" "$s_zero" "$SIZE" "median of 3: ${ts[*]}"
t=$(timed "$o/used.gz" "$spigz" -p "$threads" -c "$U")
row "spigz -p $threads, used disk, without --free" "$t" "$(stat -c %s "$o/used.gz")" "$SIZE" "every stale byte deflated"
t_pigz=$(timed "$o/pigz.gz" pigz -6 -p "$threads" -c "$U")
row "pigz -6 -p $threads, used disk" "$t_pigz" "$(stat -c %s "$o/pigz.gz")" "$SIZE" ""
loop "$U" $P1_OFF $P1_LEN; l1=$l
loop "$U" $P2_OFF $P2_LEN; l2=$l
t1=$(timed /dev/null partclone.vfat -q -c -s "$l1" -o "$o/p1.pc" -L /dev/null 2>/dev/null)
t2=$(timed /dev/null partclone.ext4 -q -c -s "$l2" -o "$o/p2.pc" -L /dev/null 2>/dev/null)
loop "$U" $P3_OFF $P3_LEN; l3=$l
t3=$(timed /dev/null partclone.ntfs -q -c -s "$l3" -o "$o/p3.pc" -L /dev/null 2>/dev/null)
unloop "$l3"
row "partclone.vfat + .ext4 + .ntfs -c (p1, p2, p3)" "$t1 + $t2 + $t3" \
    "$(($(stat -c %s "$o/p1.pc") + $(stat -c %s "$o/p2.pc") + $(stat -c %s "$o/p3.pc")))" \
    "used blocks" "its own format, uncompressed; the partitions only"
t=$(timed /dev/null e2image -Qa "$l2" "$o/p2.qcow2")
row "e2image -Qa (p2)" "$t" "$(stat -c %s "$o/p2.qcow2")" "used blocks" "qcow2, uncompressed; the ext4 only"
unloop "$l1"; unloop "$l2"
ts=()
for _ in 1 2 3; do ts+=("$(timed "$o/est.txt" "$spigz" -p "$threads" --free=zero --estimate --format=kv "$U")"); done
t_est=$(median3 "${ts[@]}")
est_size=$(sed -n 's/^size=//p' "$o/est.txt" | cut -d. -f1)
est_zero=$(sed -n 's/^zero_bytes=//p' "$o/est.txt")
est_free=$(sed -n 's/^free_bytes=//p' "$o/est.txt")
real_zero=$(echo "$acct" | sed -n 's/.* out, \([0-9]*\) zero of which.*/\1/p')
real_free=$(echo "$acct" | sed -n 's/.* holes, \([0-9]*\) free).*/\1/p')
row "spigz --free=zero --estimate" "$t_est" "$est_size (predicted)" "" \
    "free bytes $est_free (compression: $real_free), zero bytes $est_zero ($real_zero)"
ok() { awk "BEGIN { exit !($1) }" && echo PASS || echo FAIL; }
{
    echo "## --free=zero: a used disk ($(date -u '+%Y-%m-%d'), $(nproc) cores, spigz $("$spigz" -V | head -1 | cut -d' ' -f2))"
    echo
    echo "used-disk.img: $SIZE bytes, GPT: 256 MiB FAT32 (40 MB of files) + 4 GiB ext4 (~600 MB of /usr files) + 1 GiB NTFS (200 MB); every byte held old data first. See bench/free-bench.sh."
    echo
    echo "| command | time s | output bytes | bytes read | notes |"
    echo "|---|---:|---:|---:|---|"
    printf '%s\n' "${rows[@]}"
    echo
    echo "| target | measured | result |"
    echo "|---|---|---|"
    echo "| output <= 1.01x the zeroed disk's | $(awk "BEGIN { printf \"%.4f\", $s_free / $s_zero }")x | $(ok "$s_free <= 1.01 * $s_zero") |"
    echo "| time <= 1.1x the zeroed disk's | $(awk "BEGIN { printf \"%.3f\", $t_free / $t_zero }")x | $(ok "$t_free <= 1.1 * $t_zero") |"
    echo "| >= 8x faster than pigz -6 | $(awk "BEGIN { printf \"%.1f\", $t_pigz / $t_free }")x | $(ok "$t_pigz >= 8 * $t_free") |"
    echo "| estimate's free bytes = the compression's (the maps' split, exact) | $est_free vs $real_free | $(ok "$est_free == $real_free") |"
    echo "| estimate's size within 3% | $est_size vs $s_free | $(ok "$est_size <= 1.03 * $s_free && $est_size >= 0.97 * $s_free") |"
    echo "| estimate in under 1 s | $t_est s | $(ok "$t_est < 1") |"
} | tee ${out:+"$out"}
"$spigz" -dc "$o/used-free.gz" | cmp - "$Z" && echo "restore of the --free=zero backup = the zeroed disk: ok" ||
    echo "restore of the --free=zero backup differs from the zeroed disk"
rm -rf "$o"
}

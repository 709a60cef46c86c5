#!/usr/bin/env bash
# disks-bench.sh — --free=zero on the disks people have, side by side with
# the same disk with its free space zeroed by the systems' own tools, spigz
# without --free, pigz -6 and partclone.
#
# usage: bench/disks-bench.sh [--dir DIR] [--spigz PATH] [--threads N] [--out FILE]
#
# Three 2 GiB GPT disks, built once into DIR (default $BENCH_DIR or
# /var/tmp/spigz-bench), every byte first holding old data (mkimages.sh's
# data.img, /usr content, over and over), filesystems made without discard:
#   rhel     512 MiB XFS /boot; an LVM PV, VG "rhel": root XFS 800 MiB,
#            swap 128 MiB, home ext4 320 MiB, ~250 MiB of extents unallocated
#   fedora   256 MiB FAT32 EFI; 512 MiB ext4 /boot; btrfs (subvolumes root
#            and home, a snapshot, compress=zstd)
#   windows  100 MiB FAT32 EFI; 16 MiB MSR; NTFS "C:" with pagefile.sys
#            (256 MiB), hiberfil.sys (128 MiB) and swapfile.sys (16 MiB) of
#            stale bytes beside ordinary files; a Recovery NTFS
# Each filesystem holds /usr files, some of them deleted again.  The
# -zeroed twin of each is the same disk with its free space zeroed by
# others' tools: fstrim (the kernel's ext4, XFS and btrfs) through a loop
# device (its discards punch holes in the copy), fsfree.py for FAT (from its
# specification) and NTFS (ntfscat's $Bitmap), dd over LVM's unallocated
# extents (pvs --segments)
# and the swap's body; then written dense, so that reading it reads zeros.
# windows-zeroed-volatile.img also has its volatile files' contents zeroed
# (through ntfs-3g: their clusters stay), the twin of --exclude=volatile.
#
# Rows per disk: time (wall, page cache warm, median of 3 for spigz),
# output size.  Targets (issue 26): output <= 1.01x the zeroed disk's, time
# <= 1.1x.  Needs root (loop devices, mounts), sfdisk, lvm2, xfsprogs,
# btrfs-progs, e2fsprogs, dosfstools, mtools, ntfs-3g, partclone, pigz.
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
say() { printf 'disks-bench: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }
for t in sfdisk pvcreate mkfs.xfs mkfs.btrfs mke2fs mkswap mkfs.vfat mkntfs ntfs-3g fstrim \
    partclone.xfs partclone.btrfs partclone.ntfs partclone.extfs partclone.vfat pigz losetup; do
    command -v "$t" >/dev/null || die "$t is not installed"
done
[ -x "$spigz" ] || die "no spigz at $spigz"
MIB=1048576 SIZE=$((2048 * MIB))
LOOPS=() MNT=''
cleanup() {
    [ -z "$MNT" ] || umount "$MNT" 2>/dev/null || true
    for l in "${LOOPS[@]}"; do [ -z "$l" ] || losetup -d "$l" 2>/dev/null || true; done
}
trap cleanup EXIT
loop() { l=$(losetup -f --show -o "$2" --sizelimit "$3" "$1"); LOOPS+=("$l"); }
unloop() { losetup -d "$1"; LOOPS=("${LOOPS[@]/$1}"); }
mnt() { MNT=$(mktemp -d "$dir/.mnt.XXXXXX"); mount "$@" "$MNT"; }
unmnt() { umount "$MNT"; rmdir "$MNT"; MNT=''; }
# fill DIR SOURCES...: copy /usr trees in, then delete a third of the files
fill() {
    local d=$1; shift
    for s in "$@"; do cp -a "$s" "$d/" 2>/dev/null || true; done
    sync
    find "$d" -type f | awk 'NR % 3 == 0' | while read -r f; do rm -f "$f"; done
}
# fat_fill DEV SRC...: the same through mtools (no vfat module needed)
fat_fill() {
    local dev=$1 stg; shift
    stg=$(mktemp -d "$dir/.fat.XXXXXX")
    for s in "$@"; do cp -rL "$s" "$stg/" 2>/dev/null || true; done
    MTOOLS_SKIP_CHECK=1 mcopy -s -Q -i "$dev" "$stg"/* :: >/dev/null 2>&1
    (cd "$stg" && find . -type f | awk 'NR % 3 == 0') | while read -r f; do
        MTOOLS_SKIP_CHECK=1 mdel -i "$dev" "::${f#.}" >/dev/null 2>&1 || true
    done
    rm -rf "$stg"
}
# zero_free IMG KIND OFF LEN: the free space of the filesystem at OFF,
# zeroed by tests/py/fsfree.py (from its own reading: FAT's specification,
# ntfscat's $Bitmap)
zero_free() {
    dd if="$1" of="$dir/.p" bs=1M skip=$(($3 / MIB)) count=$(($4 / MIB)) status=none
    python3 "$top/tests/py/fsfree.py" expect "$dir/.p" "$dir/.pz" "$2@0+$4"
    dd if="$dir/.pz" of="$1" bs=1M seek=$(($3 / MIB)) conv=notrunc status=none
    rm -f "$dir/.p" "$dir/.pz"
}
# the LVM commands, on one loop device only, changing nothing of the host
lvmcfg=$(mktemp -d)
trap 'cleanup; rm -rf "$lvmcfg"' EXIT
printf 'global { activation = 0 }\nactivation { udev_sync = 0 udev_rules = 0 }\nbackup { backup = 0 archive = 0 }\ndevices { obtain_device_list_from_udev = 0 }\n' \
    > "$lvmcfg/lvm.conf"
lvm() { LVM_SYSTEM_DIR=$lvmcfg LVM_SUPPRESS_FD_WARNINGS=1 "$@" 2>/dev/null; }

stale() { # IMG: SIZE bytes of old data
    local reps
    reps=$(( (SIZE + $(stat -c %s "$dir/data.img") - 1) / $(stat -c %s "$dir/data.img") ))
    for _ in $(seq "$reps"); do cat "$dir/data.img"; done > "$1"
    truncate -s "$SIZE" "$1"
}
dense() { cp --sparse=never "$1" "$1.d" && mv "$1.d" "$1"; }

build_rhel() { # IMG ZEROED
    stale "$1"
    printf 'label: gpt\nstart=2048, size=%d, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4\nstart=%d, type=E6D6D379-F507-44C2-A23C-238F2A3DF928\n' \
        $((512 * 2048)) $((513 * 2048)) | sfdisk -q "$1" >/dev/null
    local p2=$((513 * MIB)) p2len=$((SIZE - 513 * MIB - MIB))
    loop "$1" "$MIB" $((512 * MIB))
    mkfs.xfs -q -f -K -L boot "$l"; mnt "$l"; fill "$MNT" /usr/share/doc; unmnt; unloop "$l"
    loop "$1" "$p2" "$p2len"; local pv=$l
    lvm pvcreate --devices "$pv" "$pv" >/dev/null
    lvm vgcreate --devices "$pv" rhel "$pv" >/dev/null
    for lv in root:800 swap:128 home:320; do
        lvm lvcreate --devices "$pv" --activate n -Zn -Wn -L "${lv#*:}M" -n "${lv%%:*}" rhel >/dev/null
    done
    local pe0 ext
    pe0=$(lvm pvs --devices "$pv" --noheadings --units b --nosuffix -o pe_start "$pv" | tr -d ' ')
    ext=$(lvm vgs --devices "$pv" --noheadings --units b --nosuffix -o vg_extent_size rhel | tr -d ' ')
    # each LV is one segment here: a loop device over its extents
    lvm lvs --devices "$pv" --noheadings -o lv_name,seg_pe_ranges rhel > "$dir/.rhel.segs"
    lvm pvs --devices "$pv" --noheadings --segments -o pvseg_start,pvseg_size,lv_name "$pv" \
        > "$dir/.rhel.pvsegs"
    unloop "$pv"
    while read -r name range; do
        local a=${range##*:}; local s=${a%-*} e=${a#*-}
        loop "$1" $((p2 + pe0 + s * ext)) $(((e - s + 1) * ext))
        case $name in
        root) mkfs.xfs -q -f -K -L root "$l"; mnt "$l"; fill "$MNT" /usr/share/locale /usr/lib/python3; unmnt ;;
        home) mke2fs -q -F -t ext4 -E nodiscard -L home "$l"; mnt "$l"; fill "$MNT" /usr/share/man; unmnt ;;
        swap) mkswap -q -L swap "$l" >/dev/null ;;
        esac
        unloop "$l"
    done < "$dir/.rhel.segs"
    cp --sparse=never "$1" "$2"
    loop "$2" "$MIB" $((512 * MIB)); mnt "$l"; fstrim "$MNT"; unmnt; unloop "$l"
    while read -r name range; do
        local a=${range##*:}; local s=${a%-*} e=${a#*-}
        loop "$2" $((p2 + pe0 + s * ext)) $(((e - s + 1) * ext))
        case $name in
        root | home) mnt "$l"; fstrim "$MNT"; unmnt ;;
        swap) # the body after the header page
            dd if=/dev/zero of="$2" bs=4096 seek=$(((p2 + pe0 + s * ext) / 4096 + 1)) \
                count=$(((e - s + 1) * ext / 4096 - 1)) conv=notrunc status=none ;;
        esac
        unloop "$l"
    done < "$dir/.rhel.segs"
    while read -r start size name; do # unallocated extents
        [ -z "$name" ] || continue
        dd if=/dev/zero of="$2" bs="$ext" seek=$(((p2 + pe0) / ext + start)) count="$size" \
            conv=notrunc status=none
    done < "$dir/.rhel.pvsegs"
    dense "$2"
}

build_fedora() {
    stale "$1"
    printf 'label: gpt\nstart=2048, size=%d, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B\nstart=%d, size=%d, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4\nstart=%d, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4\n' \
        $((256 * 2048)) $((257 * 2048)) $((512 * 2048)) $((769 * 2048)) | sfdisk -q "$1" >/dev/null
    loop "$1" "$MIB" $((256 * MIB)); mkfs.vfat -F 32 -n EFI "$l" >/dev/null
    fat_fill "$l" /usr/share/doc/bash /usr/share/zoneinfo; unloop "$l"
    loop "$1" $((257 * MIB)) $((512 * MIB)); mke2fs -q -F -t ext4 -E nodiscard -L boot "$l"
    mnt "$l"; fill "$MNT" /usr/share/man; unmnt; unloop "$l"
    loop "$1" $((769 * MIB)) $((SIZE - 770 * MIB)); mkfs.btrfs -q -f -K -L fedora "$l" >/dev/null
    mnt -o compress=zstd "$l"
    btrfs -q subvolume create "$MNT/root"; btrfs -q subvolume create "$MNT/home"
    fill "$MNT/root" /usr/share/locale /usr/lib/python3
    btrfs -q subvolume snapshot "$MNT/root" "$MNT/root-snap"
    fill "$MNT/home" /usr/share/doc
    unmnt; unloop "$l"
    cp --sparse=never "$1" "$2"
    zero_free "$2" vfat "$MIB" $((256 * MIB))
    loop "$2" $((257 * MIB)) $((512 * MIB)); mnt "$l"; fstrim "$MNT"; unmnt; unloop "$l"
    loop "$2" $((769 * MIB)) $((SIZE - 770 * MIB)); mnt "$l"; fstrim "$MNT"; unmnt; unloop "$l"
    dense "$2"
}

build_windows() { # IMG ZEROED ZEROED-VOLATILE
    stale "$1"
    printf 'label: gpt\nstart=2048, size=%d, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B\nstart=%d, size=%d, type=E3C9E316-0B5C-4DB8-817D-F92DF00215AE\nstart=%d, size=%d, type=EBD0A0A2-B9E5-4433-87C0-68B6B72699C7\nstart=%d, type=DE94BBA4-06D1-4D40-A16A-BFD50179D6AC\n' \
        $((100 * 2048)) $((101 * 2048)) $((16 * 2048)) $((117 * 2048)) $((1700 * 2048)) \
        $((1817 * 2048)) | sfdisk -q "$1" >/dev/null
    loop "$1" "$MIB" $((100 * MIB)); mkfs.vfat -F 32 -n SYSTEM "$l" >/dev/null
    fat_fill "$l" /usr/share/doc/bash; unloop "$l"
    loop "$1" $((117 * MIB)) $((1700 * MIB)); mkntfs -Q -F -q -L Windows "$l" >/dev/null 2>&1
    MNT=$(mktemp -d "$dir/.mnt.XXXXXX"); ntfs-3g "$l" "$MNT"
    # the volatile files: stale memory, as Windows leaves them
    head -c $((256 * MIB)) "$dir/data.img" > "$MNT/pagefile.sys"
    head -c $((128 * MIB)) "$dir/data.img" > "$MNT/hiberfil.sys"
    head -c $((16 * MIB)) "$dir/data.img" > "$MNT/swapfile.sys"
    fill "$MNT" /usr/share/locale /usr/lib/python3
    unmnt; unloop "$l"
    loop "$1" $((1817 * MIB)) $((SIZE - 1818 * MIB)); mkntfs -Q -F -q -L Recovery "$l" >/dev/null 2>&1
    MNT=$(mktemp -d "$dir/.mnt.XXXXXX"); ntfs-3g "$l" "$MNT"; fill "$MNT" /usr/share/doc/bash; unmnt
    unloop "$l"
    cp --sparse=never "$1" "$2"
    zero_free "$2" vfat "$MIB" $((100 * MIB))
    zero_free "$2" ntfs $((117 * MIB)) $((1700 * MIB))
    zero_free "$2" ntfs $((1817 * MIB)) $((SIZE - 1818 * MIB))
    cp --sparse=never "$2" "$3"
    loop "$3" $((117 * MIB)) $((1700 * MIB))
    MNT=$(mktemp -d "$dir/.mnt.XXXXXX"); ntfs-3g "$l" "$MNT"
    for f in pagefile.sys hiberfil.sys swapfile.sys; do
        dd if=/dev/zero of="$MNT/$f" bs=1M count=$(($(stat -c %s "$MNT/$f") / MIB)) \
            conv=notrunc status=none
    done
    unmnt; unloop "$l"
}

RECIPE="disks v1"
[ -f "$dir/data.img" ] || "$here/mkimages.sh" --only data "$dir" >&2
for d in rhel fedora windows; do
    if [ -f "$dir/$d-like.img" ] && [ "$(cat "$dir/.$d-like.stamp" 2>/dev/null)" = "$RECIPE" ]; then
        continue
    fi
    say "building $d-like.img and its zeroed twin"
    t0=$SECONDS
    rm -f "$dir/$d-like"*.img "$dir/.$d-like.stamp"
    case $d in
    rhel) build_rhel "$dir/rhel-like.img" "$dir/rhel-like-zeroed.img" ;;
    fedora) build_fedora "$dir/fedora-like.img" "$dir/fedora-like-zeroed.img" ;;
    windows) build_windows "$dir/windows-like.img" "$dir/windows-like-zeroed.img" \
        "$dir/windows-like-zeroed-volatile.img" ;;
    esac
    echo "$RECIPE" > "$dir/.$d-like.stamp"
    say "$d done in $((SECONDS - t0)) s"
done

# ---- runs -------------------------------------------------------------------
o=$dir/out/disks-bench
mkdir -p "$o"
timed() { # OUTFILE CMD...: wall seconds of CMD (stdout to OUTFILE)
    local f=$1 t0 t1; shift
    t0=${EPOCHREALTIME/./}
    "$@" > "$f"
    t1=${EPOCHREALTIME/./}
    awk "BEGIN { printf \"%.3f\", ($t1 - $t0) / 1e6 }"
}
median3() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
sz() { stat -c %s "$1"; }
rows=() targets=()
row() { rows+=("| $1 | $2 | $3 | $4 | $5 |"); }
ok() { awk "BEGIN { exit !($1) }" && echo PASS || echo FAIL; }
# spigz3 OUT IMG OPTS...: median of 3; sets T and S
spigz3() {
    local out=$1 img=$2 ts=(); shift 2
    for _ in 1 2 3; do ts+=("$(timed "$out" "$spigz" -p "$threads" "$@" -c "$img")"); done
    T=$(median3 "${ts[@]}") S=$(sz "$out")
}
# partclone over each filesystem of DISK: "part:kind" list; sets PT and PS
partclone_all() {
    local img=$1; shift
    PT=0 PS=0
    for p in "$@"; do
        IFS=: read -r off len kind <<< "$p"
        loop "$img" "$off" "$len"
        local t
        rm -f "$o/pc" # partclone -o refuses an existing file
        t=$(timed /dev/null "partclone.$kind" -q -c -s "$l" -o "$o/pc" -L /dev/null 2>/dev/null) ||
            die "partclone.$kind failed on $img at $off"
        [ -s "$o/pc" ] || die "partclone.$kind wrote nothing for $img at $off"
        unloop "$l"
        PT=$(awk "BEGIN { print $PT + $t }") PS=$((PS + $(sz "$o/pc")))
    done
}
bench_disk() { # NAME PARTCLONE-PARTS...
    local d=$1; shift
    local U=$dir/$d-like.img Z=$dir/$d-like-zeroed.img
    cat "$U" "$Z" > /dev/null
    spigz3 "$o/free.gz" "$U" --free=zero; local tf=$T sf=$S
    row "$d: spigz --free=zero" "$tf" "$sf" "" ""
    spigz3 "$o/zeroed.gz" "$Z"; local tz=$T sz0=$S
    row "$d: spigz, the disk with its free space zeroed" "$tz" "$sz0" "" "fstrim, fsfree.py, dd"
    spigz3 "$o/plain.gz" "$U"
    row "$d: spigz, without --free" "$T" "$S" "" "every stale byte deflated"
    local tp; tp=$(timed "$o/pigz.gz" pigz -6 -p "$threads" -c "$U")
    row "$d: pigz -6" "$tp" "$(sz "$o/pigz.gz")" "" ""
    partclone_all "$U" "$@"
    row "$d: partclone -c, each filesystem" "$PT" "$PS" "" "its own format, uncompressed; filesystems only"
    targets+=("| $d: output <= 1.01x zeroed | $(awk "BEGIN { printf \"%.4f\", $sf / $sz0 }")x | $(ok "$sf <= 1.01 * $sz0") |")
    targets+=("| $d: time <= 1.1x zeroed | $(awk "BEGIN { printf \"%.3f\", $tf / $tz }")x | $(ok "$tf <= 1.1 * $tz") |")
}
# the rhel disk's LVs for partclone: their extents (one segment each)
pe0=$((513 * MIB)) # the PV's offset; its pe_start and the LVs' from the build
rhel_parts=("$MIB:$((512 * MIB)):xfs")
if [ -f "$dir/.rhel.segs" ]; then
    loop "$dir/rhel-like.img" $((513 * MIB)) $((SIZE - 514 * MIB))
    pvstart=$(lvm pvs --devices "$l" --noheadings --units b --nosuffix -o pe_start "$l" | tr -d ' ')
    ext=$(lvm vgs --devices "$l" --noheadings --units b --nosuffix -o vg_extent_size rhel | tr -d ' ')
    unloop "$l"
    while read -r name range; do
        a=${range##*:} s=${a%-*} e=${a#*-}
        case $name in
        root) rhel_parts+=("$((pe0 + pvstart + s * ext)):$(((e - s + 1) * ext)):xfs") ;;
        home) rhel_parts+=("$((pe0 + pvstart + s * ext)):$(((e - s + 1) * ext)):extfs") ;;
        esac
    done < "$dir/.rhel.segs"
fi
bench_disk rhel "${rhel_parts[@]}"
bench_disk fedora "$MIB:$((256 * MIB)):vfat" "$((257 * MIB)):$((512 * MIB)):extfs" \
    "$((769 * MIB)):$((SIZE - 770 * MIB)):btrfs"
bench_disk windows "$MIB:$((100 * MIB)):vfat" "$((117 * MIB)):$((1700 * MIB)):ntfs" \
    "$((1817 * MIB)):$((SIZE - 1818 * MIB)):ntfs"
W=$dir/windows-like.img ZV=$dir/windows-like-zeroed-volatile.img
cat "$ZV" > /dev/null
spigz3 "$o/wv.gz" "$W" --free=zero --exclude=volatile; tv=$T sv=$S
row "windows: spigz --free=zero --exclude=volatile" "$tv" "$sv" "" "pagefile, hiberfil, swapfile as zeros"
spigz3 "$o/wzv.gz" "$ZV"; tzv=$T szv=$S
row "windows: spigz, free space and volatile files zeroed" "$tzv" "$szv" "" ""
targets+=("| windows --exclude=volatile: output <= 1.01x zeroed | $(awk "BEGIN { printf \"%.4f\", $sv / $szv }")x | $(ok "$sv <= 1.01 * $szv") |")
targets+=("| windows --exclude=volatile: time <= 1.1x zeroed | $(awk "BEGIN { printf \"%.3f\", $tv / $tzv }")x | $(ok "$tv <= 1.1 * $tzv") |")
{
    echo "## --free=zero on the disks people have ($(date -u '+%Y-%m-%d'), $(nproc) cores, spigz $("$spigz" -V | head -1 | cut -d' ' -f2), -6, -p $threads)"
    echo
    echo "2 GiB GPT disks, old data under everything; see bench/disks-bench.sh for their contents."
    echo
    echo "| command | time s | output bytes | | notes |"
    echo "|---|---:|---:|---|---|"
    printf '%s\n' "${rows[@]}"
    echo
    echo "| target | measured | result |"
    echo "|---|---|---|"
    printf '%s\n' "${targets[@]}"
} | tee "${out:-/dev/null}"
}

# shellcheck shell=bash
# fslib.sh — what the shell tests that build disks and filesystems share
# (free, layouts, damaged, damaged_fat, mounts, device, paths): the old data
# a filesystem is made over, writing an image into a disk, mkfs runs over
# old data, and loop devices and mounts that are released at the end
# however the test ends.  Source it after lib.sh.  It replaces lib.sh's
# EXIT trap with fs_release (what is mounted, unmounted; the loop devices
# attached here, detached; then lib.sh's cleanup); a test with more to
# release calls fs_release from its own trap.  Needs PY3 (lib.sh).

# stale FILE MiB: random bytes (seeded by FILE's name: the same on every
# run), the old data of a used disk
stale() { "$PY3" -c 'import random, sys; r = random.Random(sys.argv[1])
with open(sys.argv[1], "wb") as f:
    for _ in range(int(sys.argv[2])): f.write(r.randbytes(1 << 20))' "$1" "$2"; }

# put IMG FILE SECTOR: FILE written into IMG at 512-byte SECTOR
put() { dd if="$2" of="$1" bs=1M oflag=seek_bytes seek=$(($3 * 512)) conv=notrunc status=none; }
# part IMG START SECTORS OUT: the partition's bytes (sectors of 512)
part() {
    dd if="$1" bs=1M iflag=skip_bytes,count_bytes skip=$(($2 * 512)) count=$(($3 * 512)) \
        status=none > "$4"
}

# ---- filesystems made over old data (stale), by their own tools ----

# mkfs_ext FILE MiB SRC MKE2FS-OPTION...: ext2/3/4 holding SRC's files
mkfs_ext() {
    local f=$1 m=$2 src=$3
    shift 3
    stale "$f" "$m"
    mke2fs -q -F -E nodiscard -d "$src" "$@" "$f" >/dev/null 2>&1 || fail "mke2fs $* $f"
}

# mkfs_fat FILE MiB SRC MKFS.VFAT-OPTION...: FAT holding SRC's files and
# directories (mtools)
mkfs_fat() {
    local f=$1 m=$2 src=$3
    shift 3
    stale "$f" "$m"
    mkfs.vfat "$@" "$f" >/dev/null || fail "mkfs.vfat $* $f"
    mcopy -s -i "$f" "$src"/* :: || fail "mcopy into $f"
}

# mkfs_ntfs FILE MiB MKNTFS-OPTION...: an empty NTFS (ntfs_put fills it)
mkfs_ntfs() {
    local f=$1 m=$2
    shift 2
    stale "$f" "$m"
    mkntfs -Q -F -q "$@" "$f" >/dev/null 2>&1 || fail "mkntfs $* $f"
}

# ntfs_put IMG DIR NAME...: DIR/NAME into IMG's root by ntfscp (no mount)
ntfs_put() {
    local f=$1 d=$2 n
    shift 2
    for n in "$@"; do
        ntfscp -q "$f" "$d/$n" "$n" >/dev/null 2>&1 || fail "ntfscp $f $n"
    done
}

# ---- loop devices and mounts, released at the end ----
# Recorded in files, not in variables: a device attached in a command
# substitution's subshell would be lost from a variable, and outlive the
# test.
FS_LOOPS=$T/.fs-loops
FS_MOUNTS=$T/.fs-mounts
: > "$FS_LOOPS"
: > "$FS_MOUNTS"

# loop_attach VAR LOSETUP-ARG...: a loop device (losetup -f --show ARG...),
# its name in VAR.  Status 1 when losetup fails: the caller says what that
# means (a failure, or cases not run).
loop_attach() {
    local fs_dev
    fs_dev=$(losetup -f --show "${@:2}" 2>/dev/null) || return 1
    echo "$fs_dev" >> "$FS_LOOPS"
    printf -v "$1" '%s' "$fs_dev"
}

# loop_need VAR LOSETUP-ARG...: the same, and a failure when losetup fails
loop_need() { loop_attach "$@" || { fail "losetup ${*:2}"; return 1; }; }

# loop_detach DEV: detach one now
loop_detach() {
    losetup -d "$1"
    sed -i "\\|^$1\$|d" "$FS_LOOPS"
}

# loops_detach: detach all of them now (before checking none is left)
loops_detach() {
    local l
    while read -r l; do losetup -d "$l" 2>/dev/null; done < "$FS_LOOPS"
    : > "$FS_LOOPS"
}

# fs_mounted DIR: something may be mounted on DIR; unmounted at the end if
# it still is
fs_mounted() { echo "$1" >> "$FS_MOUNTS"; }

# with_fuse IMG MOUNTER ro|rw DIR COMMAND...: IMG on a loop device
# (read-only for ro), mounted on DIR by the FUSE MOUNTER (-o ro for ro),
# COMMAND run, then unmounted and the device detached.  Status: COMMAND's;
# 125 when losetup fails, 126 when the mount fails (the device detached).
with_fuse() {
    local img=$1 mounter=$2 mode=$3 dir=$4 dev rc
    shift 4
    if [ "$mode" = ro ]; then
        loop_attach dev -r "$img" || return 125
        "$mounter" -o ro "$dev" "$dir" >/dev/null 2>&1
    else
        loop_attach dev "$img" || return 125
        "$mounter" "$dev" "$dir"
    fi || { loop_detach "$dev"; return 126; }
    fs_mounted "$(realpath "$dir")"
    "$@"
    rc=$?
    umount "$dir" || fail "umount $dir ($img)"
    loop_detach "$dev"
    return $rc
}

fs_release() {
    local m l
    tac "$FS_MOUNTS" 2>/dev/null | while read -r m; do
        mountpoint -q "$m" && umount "$m"
    done
    [ -f "$FS_LOOPS" ] && while read -r l; do losetup -d "$l" 2>/dev/null; done < "$FS_LOOPS"
    cleanup
}
trap fs_release EXIT

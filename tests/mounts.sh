#!/bin/bash
# mounts.sh — --free=zero refuses an input whose filesystem may change
# while its maps are read, wherever it is mounted: through a second loop
# device of the same image, by FUSE directly on the image file (no device
# number to match), on a loop device over a partition's range, in another
# mount namespace (a live one, and one no process shows: the kernel's
# exclusive-open test), or while a process holds the image open for
# writing.  A read-only mount is still mapped; --force-mounted maps anyway.
# A plain backup of a filesystem mounted read-write is made, with a
# warning naming the mount and status 2; mounted read-only, silently.
# Every mount, loop device, namespace and process made here is released
# at the end and checked for.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fslib.sh"
need_free_zero # a build without it: the refusal checked, then SKIP
need losetup mke2fs mount umount unshare nsenter mkfifo
cd "$T" || exit 1
S=512
NSFILE=
CHILD=
release() {
    [ -n "$CHILD" ] && { echo go 1<>go.fifo; wait "$CHILD"; } 2>/dev/null
    [ -n "$NSFILE" ] && { nsenter --mount="$NSFILE" umount "$T/nsm" 2>/dev/null
                          umount "$NSFILE" 2>/dev/null; umount "$T/nsd" 2>/dev/null; }
    fs_release
}
trap release EXIT
# refused WHAT IMAGE PATTERN: --free=zero refuses it (status 1, naming why)
refused() {
    "$SPIGZ" --free=zero -c "$2" > /dev/null 2> e.err; local s=$?
    check "$1: refused, status $s" [ "$s" -eq 1 ]
    check "$1: says why ($(head -c 300 e.err))" grep -q "$3" e.err
}
# fuse_umount DIR: unmount a FUSE mount and wait for its daemon to exit
# (umount returns first; the daemon still holds its loop device open)
fuse_umount() {
    local pid
    pid=$(pgrep -f -- " $1\$") || pid=
    umount "$1" || { fail "umount $1"; return; }
    while [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
}
mapped() {
    "$SPIGZ" --free=zero -c "$2" > /dev/null 2> e.err; local s=$?
    check "$1: mapped, status $s ($(head -c 300 e.err))" [ "$s" -eq 0 ]
}

# An MBR disk image: ext4 in partition 1 (sectors 2048 .. 2048 + PLEN).
PLEN=60000
truncate -s 48M d.img
printf 'label: dos\nstart=2048, size=%d, type=83\n' $PLEN | sfdisk -q d.img >/dev/null
truncate -s $((PLEN * S)) p.img
mke2fs -q -F -t ext4 p.img >/dev/null 2>&1 || fail "mke2fs"
dd if=p.img of=d.img bs=512 seek=2048 conv=notrunc status=none
mkdir -p m m2 nsm

section "nothing mounted: mapped"
mapped "the image alone" d.img

section "a partition's range on a loop device, mounted read-write"
loop_need P -o $((2048 * S)) --sizelimit $((PLEN * S)) d.img
mount "$P" m && fs_mounted "$T/m" || fail "mount $P"
refused "the image" d.img "is mounted read-write on $T/m"
loop_need D d.img
refused "a second loop device of the whole image" "$D" "is mounted read-write on $T/m"
# a plain backup (no --free=zero) reads it as asked, and warns: status 2
for in in d.img "$D"; do
    "$SPIGZ" -c "$in" > pl.gz 2> e.err; s=$?
    check "plain backup of $in, mounted read-write: status 2, got $s" [ "$s" -eq 2 ]
    check "... a warning names the mount ($(head -c 300 e.err))" \
        grep -q "$in: warning: .* is mounted read-write on $T/m: the backup may be inconsistent" e.err
    check "... and the backup holds the input" sh -c "gzip -dc pl.gz | cmp -s - '$in'"
done
"$SPIGZ" -q -c d.img > pl.gz 2> e.err; s=$?
check "-q: still status 2, got $s, nothing said" sh -c "[ $s -eq 2 ] && [ ! -s e.err ]"
"$SPIGZ" --free=zero --force-mounted -c d.img > f.gz 2> e.err; s=$?
check "--force-mounted maps it anyway, status $s" [ "$s" -ne 1 ]
check "--force-mounted: says what may change ($(head -c 200 e.err))" \
    grep -q "mapped while it may change (--force-mounted): .* is mounted read-write on" e.err
"$SPIGZ" -l f.gz > /dev/null 2> e.err
check "--force-mounted: the backup says so" grep -q "when this backup was made: mapped while it may change" e.err
umount m
# a mount point longer than any fixed buffer (mountinfo fields are read
# whole: a 2,200-byte path once pushed "rw" out of the options' place)
LONG=$T/lp
for _ in $(seq 11); do LONG=$LONG/$(printf 'd%.0s' $(seq 200)); done
mkdir -p "$LONG"
mount "$P" "$LONG" && fs_mounted "$LONG" || fail "mount $P on a long path"
refused "mounted on a 2,200-byte path" d.img "is mounted read-write on $T/lp/"
umount "$LONG"
mount -o ro "$P" m && fs_mounted "$T/m" || fail "mount -o ro $P"
mapped "mounted read-only" d.img
"$SPIGZ" -c d.img > pl.gz 2> e.err; s=$?
check "plain backup, mounted read-only: status 0, got $s, no warning ($(head -c 300 e.err))" \
    sh -c "[ $s -eq 0 ] && [ ! -s e.err ]"
umount m

section "mounted in another mount namespace, held by a live process"
mkfifo ready.fifo go.fifo
# The child opens go.fifo before it says "mounted" (read-write: no wait), so
# the parent's "go" is never lost; whatever happens, something is written to
# ready.fifo, so the parent's read always returns.
( unshare -m --propagation private bash -c '
      exec 5<>go.fifo
      if mount "$1" "$2"; then
          echo mounted > ready.fifo; read -r x <&5; umount "$2"
      else
          echo failed > ready.fifo
      fi' _ "$P" "$T/nsm" || echo failed > ready.fifo ) &
CHILD=$!
read -r state < ready.fifo # the child has mounted, or failed
check "the other namespace mounted it" [ "$state" = mounted ]
check "not in ours" sh -c "! grep -q ' $T/nsm ' /proc/self/mountinfo"
refused "a mount in another namespace" d.img "in the mount namespace of process"
echo go 1<>go.fifo
wait "$CHILD"
CHILD=
mapped "that namespace gone" d.img

section "mounted in a namespace no process shows"
mkdir -p nsd
if mount --bind nsd nsd && mount --make-private nsd && touch nsd/mnt &&
    unshare --mount="$T/nsd/mnt" true; then
    NSFILE=$T/nsd/mnt
    nsenter --mount="$NSFILE" mount "$P" "$T/nsm" || fail "mount inside the kept namespace"
    refused "a mount only the kernel knows of" d.img "held exclusively by the kernel"
    nsenter --mount="$NSFILE" umount "$T/nsm" || fail "umount inside the kept namespace"
    umount "$NSFILE" && umount nsd && NSFILE=
    mapped "that namespace gone" d.img
else
    fail "a mount namespace kept by a bind mount of its nsfs file"
fi

section "a process holding the image, or a loop device of it, open for writing"
exec 3<>d.img
refused "open for writing" d.img "has it open for writing"
exec 3>&-
exec 3<>"$P"
refused "a loop device of it open for writing" d.img "has it open for writing"
exec 3>&-
exec 3<d.img
mapped "open for reading only" d.img
exec 3<&-
# A loop device bound read-only holds the file for reading: open for
# writing, it writes nothing (EPERM, even after blockdev --setrw).  util-linux's
# losetup -f holds such a device so while its detach waits for a last close,
# and spigz refused, naming losetup: lvm.sh failed so under parallel tests.
loop_need R -r d.img
exec 3<>"$R"
mapped "a read-only loop device of it open for writing" d.img
exec 3>&-
loop_detach "$R"

section "NTFS through FUSE: on the image file, and on a second loop device"
FUSE_MISSING=
if command -v mkntfs >/dev/null && command -v ntfs-3g >/dev/null && [ -c /dev/fuse ]; then
    truncate -s 32M n.img
    mkntfs -Q -F -q n.img >/dev/null 2>&1 || fail "mkntfs"
    if ntfs-3g n.img "$T/m2" 2>/dev/null; then
        fs_mounted "$T/m2"
        refused "ntfs-3g on the image file" n.img "n.img is mounted read-write on $T/m2"
        fuse_umount "$T/m2"
        loop_need A n.img
        loop_need B n.img
        ntfs-3g "$B" "$T/m2" && fs_mounted "$T/m2" || fail "ntfs-3g $B"
        refused "ntfs-3g on a second loop device: the image" n.img "$B is mounted read-write"
        refused "ntfs-3g on a second loop device: the first" "$A" "$B is mounted read-write"
        fuse_umount "$T/m2"
        ntfs-3g -o ro n.img "$T/m2" && fs_mounted "$T/m2" || fail "ntfs-3g -o ro"
        mapped "ntfs-3g read-only on the image file" n.img
        fuse_umount "$T/m2"
    else
        FUSE_MISSING="ntfs-3g mounts (FUSE) of the image and of a loop device"
    fi
else
    FUSE_MISSING="ntfs-3g mounts (no mkntfs, ntfs-3g or /dev/fuse)"
fi

section "nothing left behind"
loops_detach
check "no loop device of ours left" sh -c "! losetup -j d.img | grep -q . && ! losetup -j n.img 2>/dev/null | grep -q ."
check "no mount of ours left" sh -c "! grep -q ' $T/' /proc/self/mountinfo"
if [ -n "$FUSE_MISSING" ]; then
    echo "mounts.sh: $CHECKS checks, $FAILS failed; SKIP: not checked: $FUSE_MISSING"
    [ "$FAILS" -eq 0 ] && exit 77
fi
finish

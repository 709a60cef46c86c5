#!/bin/bash
# btrfs.sh — btrfs under --free=zero, made and filled by btrfs's own tools
# and the kernel (loop mounts).  A Fedora-like GPT disk: an EFI System FAT32,
# an ext4 /boot and a btrfs (mkfs.btrfs's defaults: DUP metadata, the
# free-space tree) with the subvolumes root and home, mounted with
# compress=zstd, holding text that compresses, random files, a file
# fragmented by interleaved appends and a snapshot of root; then files
# deleted.  Everything is made over random bytes (mkfs -K and mount
# -o nodiscard keep them), so that unallocated device space and free space
# in data block groups hold old data.  After a backup and a restore: btrfs
# check, e2fsck and fsck.vfat pass; every file of every subvolume and of the
# snapshot reads back identical; every byte spigz zeroed was free by btrfs's
# own account (the extent tree's extents and tree blocks, through the chunk
# tree's stripes, as btrfs inspect-internal dump-tree prints them:
# tests/py/btrfsmap.py), the unallocated space and the data block groups'
# free space are zeros; the backup is smaller by about the old data; ext4's
# and FAT's free blocks are zeroed too.  Then what must be read whole, byte
# for byte, -v saying why: a log tree to replay, one device of two, a stale
# free-space tree (forged: a free extent grown over a data extent, its leaf's
# CRC-32C made right; btrfs check sees it too), a superblock whose checksum
# is wrong; and a filesystem without a free-space tree (space_cache=v1),
# whose unallocated space is zeroed but whose data block groups are kept.
#
# Needs btrfs-progs, xfsprogs' xfs_io, and a kernel that mounts btrfs on
# loop devices (as root): without them, SKIP (77), saying so.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fslib.sh"
need_free_zero
need_or_skip "(btrfs-progs, xfsprogs, util-linux): btrfs under --free=zero not checked (its \
free space, what is read whole)" mkfs.btrfs btrfs xfs_io losetup mount umount
need sfdisk mkfs.vfat mcopy fsck.vfat mke2fs e2fsck debugfs dumpe2fs filefrag sha256sum cmp dd "$PY3"
has_fs ext4 "the disk's /boot (every check here)" || { finish; exit 77; }
cd "$T" || exit 1
M=$((1 << 20))
bmap() { "$PY3" "$srcdir/tests/py/btrfsmap.py" "$@"; }
lvseg() { "$PY3" "$srcdir/tests/py/lvmseg.py" "$@"; }
fsfree() { "$PY3" "$srcdir/tests/py/fsfree.py" "$@"; }

# ---- btrfs on loop devices ----
# The kernel keeps each btrfs device it has seen, by its filesystem's UUID:
# a restore has the original's, so they are mounted one at a time, and each
# device is forgotten (btrfs device scan --forget) before it is detached,
# however the test ends.
BT_DEVS=$T/.bt-devs
: > "$BT_DEVS"
# A mount still busy (the test stopped by a signal while a writer of its own
# runs on) is detached lazily: never left mounted, nor emptied by the rm -rf.
bt_release() {
    local m d
    tac "$FS_MOUNTS" 2> /dev/null | while read -r m; do
        mountpoint -q "$m" && { umount "$m" 2> /dev/null || umount -l "$m"; }
    done
    while read -r d; do btrfs device scan --forget "$d" > /dev/null 2>&1; done < "$BT_DEVS"
    fs_release
}
trap bt_release EXIT
# bt_mount IMG DIR ro|rw OPTIONS: IMG mounted on DIR through a loop device
# (read-only for ro), its name in BTDEV
BTDEV=
bt_mount() {
    local img=$1 dir=$2 mode=$3 opts=$4
    mkdir -p "$dir"
    if [ "$mode" = ro ]; then
        loop_need BTDEV -r "$img" || return 1
        opts=ro,$opts
    else
        loop_need BTDEV "$img" || return 1
    fi
    echo "$BTDEV" >> "$BT_DEVS"
    fs_mounted "$(realpath "$dir")"
    mount -t btrfs -o "$opts" "$BTDEV" "$dir" 2> "$dir.merr" || {
        btrfs device scan --forget "$BTDEV" > /dev/null 2>&1
        loop_detach "$BTDEV"
        return 1
    }
}
# bt_umount DIR: unmounted, its device forgotten and detached
bt_umount() {
    umount "$1" || fail "umount $1"
    btrfs device scan --forget "$BTDEV" > /dev/null 2>&1
    loop_detach "$BTDEV"
}
# mkbtrfs IMG MiB MKFS-ARG...: a btrfs over old data (nodiscard: mkfs.btrfs
# would trim a file's blocks to zeros)
mkbtrfs() {
    local f=$1 m=$2
    shift 2
    stale "$f" "$m"
    mkfs.btrfs -q -f -K "$@" "$f" > /dev/null 2>&1 || fail "mkfs.btrfs $* $f"
}
# files DIR SEED: DIR/keep (2 MiB random), DIR/notes.txt (text) and
# DIR/gone (6 MiB random) written, synced, then gone deleted: its bytes
# stay on the device (nodiscard), free; SEED.head is its first MiB
files() {
    "$PY3" - "$1" "$2" <<'EOF'
import os, random, sys
d, r = sys.argv[1], random.Random(sys.argv[2])
open(d + "/keep", "wb").write(r.randbytes(2 << 20))
open(d + "/notes.txt", "w").write(" ".join(r.choice(["chunk", "stripe", "extent", "tree"])
                                           for _ in range(100000)))
g = r.randbytes(6 << 20)
open(d + "/gone", "wb").write(g)
open(sys.argv[2] + ".head", "wb").write(g[:1 << 20])
EOF
    sync -f "$1"
    rm "$1/gone"
    sync -f "$1"
}
# said FILE: a checker's last words (its output's last 3 lines, on one)
said() { tail -3 "$1" 2> /dev/null | tr '\n' ' '; }
# backup NAME IMG: NAME.gz (--free=zero -v, its messages in NAME.err, its
# status in NAME.s), restored as NAME-r.img
backup() {
    "$SPIGZ" --free=zero -v -k -"$FAST" -c "$2" > "$1.gz" 2> "$1.err"
    echo $? > "$1.s"
    "$SPIGZ" -dc "$1.gz" > "$1-r.img" 2> "$1.derr" || fail "$1: spigz -d ($(cat "$1.derr"))"
}
# whole NAME IMG WHY WORDS: IMG backed up, read whole, -v saying WORDS:
# every byte restored
whole() {
    backup "$1" "$2"
    check "$3: status 0 or 2 ($(cat "$1.s"): $(head -c 300 "$1.err"))" grep -qx '[02]' "$1.s"
    check "$3: every byte restored" cmp -s "$1-r.img" "$2"
    check "$3: -v says read whole: $4 ($(head -1 "$1.err"))" \
        sh -c 'grep -q "read whole" "$1" && grep -qF "$2" "$1" && ! grep -q "skipped as free" "$1"' - "$1.err" "$4"
}
# mapped NAME IMG WHAT: IMG backed up and mapped: status 0, -v says
# skipped as free, the restore passes btrfs check, and its unallocated space
# and data groups' free space (btrfs's account) are zeros
mapped() {
    local nz s
    backup "$1" "$2"
    check "$3: status 0 ($(cat "$1.s"): $(head -c 300 "$1.err"))" [ "$(cat "$1.s")" -eq 0 ]
    check "$3: -v says skipped as free ($(head -1 "$1.err"))" \
        grep -q 'btrfs.* skipped as free' "$1.err"
    btrfs check --readonly "$1-r.img" > "$1.chk" 2>&1; s=$?
    check "$3: btrfs check passes on the restore ($(said "$1.chk"))" [ $s -eq 0 ]
    read -r nz _ <<< "$(bmap datafree "$2" | lvseg nonzero "$1-r.img" 0)"
    check "$3: the data groups' free space zero in the restore ($nz bytes not)" [ "$nz" = 0 ]
}

section "a Fedora-like disk: EFI System FAT32, /boot ext4, btrfs (root, home)"
# sectors: p1 34 MiB, p2 16 MiB, p3 200 MiB
P1=2048 P1N=69632 P2=71680 P2N=32768 P3=104448 P3N=409600
# (the partitions' own images hold their old data: the rest is a hole)
truncate -s 252M disk.img
printf 'label: gpt\nstart=%d, size=%d, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B\nstart=%d, size=%d, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4\nstart=%d, size=%d, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4\n' \
    $P1 $P1N $P2 $P2N $P3 $P3N | sfdisk -q disk.img || fail "sfdisk"
mkdir -p esp/EFI/fedora boot/grub2
echo 'shim' > esp/EFI/fedora/shimx64.efi
"$PY3" -c 'import random; open("boot/vmlinuz", "wb").write(random.Random(1).randbytes(3 << 20))'
seq 1 20000 > boot/config
echo 'set default=0' > boot/grub2/grub.cfg
mkfs_fat p1.img 34 esp -F 32 -n EFI
mkfs_ext p2.img 16 boot -t ext4 -L boot
mkbtrfs p3.img 200 -L fedora
if ! bt_mount p3.img mnt rw compress=zstd,nodiscard; then
    echo "SKIP: cannot mount btrfs on a loop device ($(head -c 200 mnt.merr)): btrfs under" \
        "--free=zero not checked (needs root and the btrfs module)"
    finish || exit 1
    exit 77
fi
btrfs subvolume create mnt/root > /dev/null || fail "subvolume create root"
btrfs subvolume create mnt/home > /dev/null || fail "subvolume create home"
mkdir -p mnt/root/usr/share/doc mnt/root/usr/bin mnt/root/etc mnt/root/var/tmp mnt/home/user
[ -d /usr/share/doc/bash ] && cp -r /usr/share/doc/bash mnt/root/usr/share/doc/
"$PY3" - mnt <<'EOF'
import os, random, sys
m, r = sys.argv[1], random.Random(7)
words = b"subvolume snapshot extent chunk stripe device tree leaf node checksum".split()
for i in range(40):                   # text that compresses (zstd extents)
    d = f"{m}/root/usr/share/doc/pkg{i}"
    os.makedirs(d)
    open(d + "/README", "wb").write(b" ".join(r.choice(words) for _ in range(20000)))
open(m + "/root/etc/hostname", "w").write("fedora\n")          # inline
open(m + "/root/usr/bin/blob", "wb").write(r.randbytes(3 << 20))
open(m + "/home/user/photo.jpg", "wb").write(r.randbytes(4 << 20))
# a file fragmented by appends interleaved with another's, each synced
with open(m + "/home/user/frag.log", "ab") as a, open(m + "/home/user/other.log", "ab") as b:
    for _ in range(48):
        for f, n in ((a, 64 << 10), (b, 16 << 10)):
            f.write(r.randbytes(n))
            f.flush()
            os.fsync(f.fileno())
EOF
sync -f mnt
btrfs subvolume snapshot mnt/root mnt/root-snap > /dev/null || fail "subvolume snapshot"
# after the snapshot: root's blob deleted (the snapshot keeps its extents),
# a download and a temporary file written and deleted (their extents freed),
# and every other one of 240 thumbnails of 8 KiB: a data group's free space
# in so many pieces that the free-space tree holds it as a bitmap
"$PY3" - mnt <<'EOF'
import os, random, sys
m, r = sys.argv[1], random.Random(8)
open(m + "/home/user/old.iso", "wb").write(r.randbytes(20 << 20))
open(m + "/root/var/tmp/t", "wb").write(r.randbytes(6 << 20))
open(m + "/root/etc/motd", "w").write("after the snapshot\n")
os.makedirs(m + "/home/user/.cache/thumbnails")
for i in range(240):
    open(f"{m}/home/user/.cache/thumbnails/{i}.png", "wb").write(r.randbytes(8 << 10))
EOF
sync -f mnt
rm mnt/root/usr/bin/blob mnt/home/user/old.iso mnt/root/var/tmp/t mnt/home/user/.cache/thumbnails/*[02468].png
sync -f mnt
frags=$(filefrag mnt/home/user/frag.log | grep -o '[0-9]* extents\? found' | cut -d' ' -f1)
check "frag.log is fragmented (${frags:-?} extents)" [ "${frags:-0}" -ge 8 ]
bt_umount mnt
put disk.img p1.img $P1
put disk.img p2.img $P2
put disk.img p3.img $P3
part disk.img $P3 $P3N o3.img
part disk.img $P2 $P2N o2.img
part disk.img $P1 $P1N o1.img
btrfs inspect-internal dump-super o3.img > o3.super
check "p3: DUP metadata and a valid free-space tree (compat_ro $(sed -n 's/^compat_ro_flags\s*//p' o3.super))" \
    sh -c "btrfs inspect-internal dump-tree -t chunk o3.img | grep -q 'type METADATA|DUP' &&
        grep -q '^compat_ro_flags.*0x3' o3.super && grep -q '^log_root\s*0$' o3.super"
# (else the free-space bitmaps' reading would go untested)
bmap fst o3.img > o3.fst || fail "btrfsmap.py fst"
check "p3: the free-space tree holds a data group's free space as a bitmap" grep -q '^BITMAP .* DATA' o3.fst
# (so that a checker failing on a restore is spigz's doing)
check "the originals pass their checkers" sh -c 'btrfs check --readonly o3.img > /dev/null 2>&1 &&
    e2fsck -fn o2.img > /dev/null 2>&1 && fsck.vfat -n o1.img > /dev/null 2>&1'
bmap free o3.img > o3.free || fail "btrfsmap.py free"
bmap unalloc o3.img > o3.unalloc || fail "btrfsmap.py unalloc"
bmap datafree o3.img > o3.datafree || fail "btrfsmap.py datafree"

section "the backup and the restore"
backup b disk.img
check "--free=zero: status 0 ($(cat b.s): $(head -c 400 b.err))" [ "$(cat b.s)" -eq 0 ]
# (a btrfs read whole, or not recognised, would say something else)
check "-v: partition 3 is btrfs, skipped as free ($(grep 'partition 3' b.err))" \
    sh -c "grep 'partition 3' b.err | grep -q 'btrfs.*skipped as free'"
check "-v: partition 2 is ext4, skipped as free ($(grep 'partition 2' b.err))" \
    sh -c "grep 'partition 2' b.err | grep -q 'ext4.*skipped as free'"
check "-v: partition 1 is FAT, skipped as free ($(grep 'partition 1' b.err))" \
    sh -c "grep 'partition 1' b.err | grep -qi 'fat.*skipped as free'"
"$SPIGZ" -k -"$FAST" -c disk.img > plain.gz || fail "spigz (no --free=zero)"
part b-r.img $P3 $P3N r3.img
part b-r.img $P2 $P2N r2.img
part b-r.img $P1 $P1N r1.img

section "the restored filesystems pass their checkers"
# (a used block zeroed: a tree block, a superblock, a chunk)
btrfs check --readonly r3.img > r3.chk 2>&1; s=$?
check "btrfs check --readonly on p3 ($(said r3.chk))" [ $s -eq 0 ]
# (a data extent zeroed: its checksums in the csum tree no longer match)
btrfs check --readonly --check-data-csum r3.img > r3.chkd 2>&1; s=$?
check "btrfs check --check-data-csum on p3 ($(said r3.chkd))" [ $s -eq 0 ]
e2fsck -fn r2.img > r2.chk 2>&1; s=$?
check "e2fsck -fn on p2 ($(said r2.chk))" [ $s -eq 0 ]
fsck.vfat -n r1.img > r1.chk 2>&1; s=$?
check "fsck.vfat -n on p1 ($(said r1.chk))" [ $s -eq 0 ]

section "every file of every subvolume reads back identical"
# (a data extent zeroed; a compressed extent, a fragment of frag.log)
# sums IMG OUT: the top level (subvolid 5, showing root, home and the
# snapshot) mounted read-only: each file's sha256, the subvolumes' list
sums() {
    bt_mount "$1" mnt ro subvolid=5 || { fail "mount $1 ($(cat mnt.merr))"; return; }
    (cd mnt && find . -type f -print0 | sort -z | xargs -0 -r sha256sum --) > "$2" 2>&1
    btrfs subvolume list mnt > "$2.subvols" 2>&1
    bt_umount mnt
}
sums o3.img o.sums
sums r3.img r.sums
n=$(wc -l < o.sums)
check "the original: files in root, home and the snapshot ($n files; $(grep -c ' ./root-snap/' o.sums) in the snapshot)" \
    sh -c "[ $n -ge 80 ] && grep -q ' ./root-snap/usr/bin/blob$' o.sums && grep -q ' ./home/user/frag.log$' o.sums &&
        grep -q ' ./root/etc/motd$' o.sums && ! grep -q ' ./root/usr/bin/blob$' o.sums"
check "every file's sha256 the same ($(diff o.sums r.sums | head -3 | tr '\n' ' '))" cmp -s o.sums r.sums
check "the same subvolumes ($(tr '\n' ' ' < r.sums.subvols))" \
    sh -c 'cmp -s o.sums.subvols r.sums.subvols && [ $(wc -l < o.sums.subvols) -eq 3 ]'

section "what was zeroed was free by btrfs's account"
read -r diff fnz stale <<< "$(lvseg freecmp o3.img r3.img < o3.free)"
check "no byte differs inside the first MiB, a superblock copy, an extent or a tree block ($diff bytes do)" \
    [ "$diff" = 0 ]
read -r bad zeroed <<< "$(lvseg covers o3.img r3.img)"
check "every sector that differs is zero in the restore ($bad sectors not; $zeroed zeroed)" [ "$bad" = 0 ]
# (mkfs.btrfs zeroes the device's last 2 MiB, and wrote its first tree
# blocks in temporary chunks at 1 MiB, since removed: some 7% of it)
read -r nz total <<< "$(lvseg nonzero o3.img 0 < o3.unalloc)"
check "unallocated space: old data in the original ($nz of $total bytes not zero)" \
    sh -c "[ ${total:-0} -ge $((40 * M)) ] && [ ${nz:-0} -gt $((${total:-0} * 85 / 100)) ]"
un_stale=$nz
read -r nz total <<< "$(lvseg nonzero r3.img 0 < o3.unalloc)"
check "unallocated space: zeros in the restore ($nz of $total bytes not)" [ "$nz" = 0 ]
read -r nz total <<< "$(lvseg nonzero o3.img 0 < o3.datafree)"
check "data groups' free space: old data in the original (the deleted files' among it: $nz of $total bytes)" \
    [ "${nz:-0}" -gt $((8 * M)) ]
df_stale=$nz
read -r nz total <<< "$(lvseg nonzero r3.img 0 < o3.datafree)"
check "data groups' free space: zeros in the restore ($nz of $total bytes not)" [ "$nz" = 0 ]
echo "NOTE: p3: $zeroed sectors zeroed; $stale bytes of old data in btrfs's free space (metadata groups' too)"

section "ext4's and FAT's free blocks"
fs_stale=0
for p in 2:ext4 1:vfat; do
    n=${p%:*} fs=${p#*:}
    fsfree "$fs" "o$n.img" > "o$n.free" || fail "fsfree.py $fs"
    read -r diff fnz stale <<< "$(lvseg freecmp "o$n.img" "r$n.img" < "o$n.free")"
    check "p$n ($fs): old data in its free blocks ($stale bytes)" [ "${stale:-0}" -gt $((4 * M)) ]
    check "p$n ($fs): its used blocks the original's ($diff bytes differ)" [ "$diff" = 0 ]
    check "p$n ($fs): its free blocks zero in the restore ($fnz bytes not)" [ "$fnz" = 0 ]
    fs_stale=$((fs_stale + ${stale:-0}))
done
check "/boot/vmlinuz reads back identical" sh -c 'debugfs -R "dump /vmlinuz got" r2.img > /dev/null 2>&1 && cmp -s got boot/vmlinuz'
check "EFI/fedora/shimx64.efi reads back identical" \
    sh -c 'mcopy -n -i r1.img ::EFI/fedora/shimx64.efi - | cmp -s - esp/EFI/fedora/shimx64.efi'

section "the backup's size"
dropped=$((un_stale + df_stale + fs_stale))
saved=$(($(stat -c %s plain.gz) - $(stat -c %s b.gz)))
echo "NOTE: $saved bytes smaller than without --free=zero; old data to drop: $dropped"
check "smaller by at least 90% of the old data in btrfs's unallocated space and data groups, ext4's and FAT's free blocks" \
    [ "$saved" -gt $((dropped * 9 / 10)) ]
check "... most of it: more than 100 MiB" [ "$saved" -gt $((100 * M)) ]

# ---- standalone filesystems: what must be read whole ----

section "a log tree to replay (a copy taken while mounted, after an fsync)"
mkbtrfs log.img 64 -m single
if bt_mount log.img mnt rw nodiscard,commit=300; then
    files mnt log
    # fsync writes the log tree and a superblock naming it, no commit
    xfs_io -f -c 'pwrite -S 0x5a 0 64k' -c fsync mnt/late > /dev/null || fail "xfs_io pwrite, fsync"
    cp log.img logc.img
    bt_umount mnt
else
    fail "mount log.img ($(cat mnt.merr))"
fi
lr=$(btrfs inspect-internal dump-super logc.img | sed -n 's/^log_root\s*//p')
check "the copy's superblock names a log tree (log_root ${lr:-?})" sh -c "[ '${lr:-0}' != 0 ]"
# (why it must be read whole: the fsynced data is in no committed extent, so
# the committed trees call its bytes free; mapped, they would be zeroed and
# the log, replayed at the next mount, would point at zeros)
bmap free logc.img > logc.free || fail "btrfsmap.py free logc.img"
check "the fsynced 64 KiB lie in what the committed trees call free" "$PY3" -c '
import sys
at = open("logc.img", "rb").read().find(b"\x5a" * 65536)
free = [tuple(map(int, l.split())) for l in open("logc.free")]
sys.exit(not (at > 0 and any(o <= at and at + 65536 <= o + n for o, n in free)))'
mapped logu log.img "the same filesystem unmounted (the log replayed)"
whole logc logc.img "a log tree to replay" "log tree holds writes to replay"

section "one device of two"
# (one device's chunk tree names stripes on the other: its own allocation
# cannot be judged alone)
stale two2.img 112
mkbtrfs two1.img 112 -d single -m dup "$T/two2.img"
for i in 1 2; do
    check "two$i: num_devices 2" sh -c "btrfs inspect-internal dump-super two$i.img | grep -q '^num_devices\s*2$'"
    whole "two$i" "two$i.img" "device $i of 2" "several devices"
done

section "a filesystem (single metadata) with files, one deleted: mapped"
# (the base of the forged cases below: mapped intact, so that what makes them
# read whole is what was done to them)
mkbtrfs one.img 64 -m single
bt_mount one.img mnt rw nodiscard && { files mnt one; bt_umount mnt; } || fail "mount one.img ($(cat mnt.merr))"
mapped one one.img "the intact filesystem"
check "... the deleted file's bytes not in the restore" \
    "$PY3" -c 'import sys; sys.exit(open("one-r.img", "rb").read().find(open("one.head", "rb").read()) >= 0)'
check "... but in the original" \
    "$PY3" -c 'import sys; sys.exit(open("one.img", "rb").read().find(open("one.head", "rb").read()) < 0)'

section "a stale free-space tree"
# (trusted, it would zero a file's data; the extent tree, read second, is
# what must catch it)
cp one.img fst.img
bmap stalefst fst.img > fst.forged || fail "btrfsmap.py stalefst"
echo "NOTE: $(cat fst.forged)"
btrfs check --readonly fst.img > fst.chk 2>&1; s=$?
check "btrfs check sees it (status $s: $(grep -m1 -A1 'checking free space' fst.chk | tr '\n' ' '))" \
    sh -c "[ $s -ne 0 ] && grep -A1 'checking free space' fst.chk | grep -q 'wanted offset'"
whole fst fst.img "a stale free-space tree" "stale free-space tree"

section "a tree block older than its parent names (a lost write)"
# (internally valid, checksum and all, but not the block its parent wrote:
# the kernel refuses it, "parent transid verify failed")
cp one.img gen.img
bmap oldgen gen.img > gen.forged || fail "btrfsmap.py oldgen"
echo "NOTE: $(cat gen.forged)"
btrfs check --readonly gen.img > gen.chk 2>&1
check "btrfs check sees it ($(grep -m1 'transid' gen.chk))" grep -q 'parent transid verify failed' gen.chk
whole gen gen.img "a block of an older generation" "not of the generation its parent names"

section "a superblock whose checksum is wrong"
# (nothing it says can be trusted: its tree roots, sizes, chunk array)
cp one.img sb.img
printf 'X' | dd of=sb.img bs=1 seek=$((0x10000 + 0x12b)) conv=notrunc status=none # its label
check "dump-super sees it" sh -c "btrfs inspect-internal dump-super sb.img | grep -q \"DON'T MATCH\""
whole sb sb.img "a superblock checksum broken" "superblock's checksum is wrong"

section "no free-space tree (space_cache=v1): data groups kept, unallocated space zeroed"
mkbtrfs v1.img 64 -m single -R ^free-space-tree
if bt_mount v1.img mnt rw nodiscard,space_cache=v1; then
    files mnt v1
    bt_umount mnt
    ro=$(btrfs inspect-internal dump-super v1.img | sed -n 's/^compat_ro_flags\s*//p')
    if [ "$((ro & 1))" -ne 0 ]; then
        # the kernel made a free-space tree after all: no such case here
        echo "NOTE: this kernel added a free-space tree (compat_ro $ro): the case without one not checked"
    else
        backup v1 v1.img
        check "status 0 ($(cat v1.s): $(head -c 300 v1.err))" [ "$(cat v1.s)" -eq 0 ]
        check "-v says skipped as free ($(head -1 v1.err))" grep -q 'btrfs.*skipped as free' v1.err
        btrfs check --readonly v1-r.img > v1.chk 2>&1; s=$?
        check "btrfs check passes on the restore ($(said v1.chk))" [ $s -eq 0 ]
        bmap unalloc v1.img > v1.unalloc && bmap datafree v1.img > v1.datafree || fail "btrfsmap.py v1"
        read -r nz total <<< "$(lvseg nonzero v1.img 0 < v1.unalloc)"
        check "unallocated space: old data in the original ($nz of $total bytes)" [ "${nz:-0}" -gt $((16 * M)) ]
        read -r nz total <<< "$(lvseg nonzero v1-r.img 0 < v1.unalloc)"
        check "unallocated space: zeros in the restore ($nz of $total bytes not)" [ "$nz" = 0 ]
        # (a reader trusting the v1 space cache, or taking a missing
        # free-space tree for an empty one, would zero these)
        read -r nz total <<< "$(lvseg nonzero v1.img 0 < v1.datafree)"
        check "data groups' free space: old data in the original ($nz of $total bytes)" [ "${nz:-0}" -gt $((4 * M)) ]
        check "data groups' free space kept, every byte (no free-space tree to trust)" "$PY3" -c '
import sys
a, b = open("v1.img", "rb"), open("v1-r.img", "rb")
for l in open("v1.datafree"):
    o, n = map(int, l.split())
    a.seek(o)
    b.seek(o)
    if a.read(n) != b.read(n):
        sys.exit(1)'
        check "... the deleted file's bytes survive" \
            "$PY3" -c 'import sys; sys.exit(open("v1-r.img", "rb").read().find(open("v1.head", "rb").read()) < 0)'
    fi
else
    echo "NOTE: this kernel refuses space_cache=v1 ($(head -c 200 mnt.merr)): the case without a free-space tree not checked"
fi
[ -n "${KEEP_T:-}" ] && cp -a "$T" "$KEEP_T"
finish

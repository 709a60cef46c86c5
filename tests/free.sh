#!/bin/bash
# free.sh — --free=zero: backups of disks, partitions and filesystems whose
# free space holds old data.  Each filesystem is made by its own mkfs over
# random bytes, given files, some of them deleted; after a backup with
# --free=zero and a restore, the restored bytes must be exactly the
# original's with every free block zeroed (free as tests/py/fsfree.py finds it,
# from the filesystem's own tools or its specification), the checker must
# pass and the files must read back.  Then what must be read whole (dirty,
# corrupt, overlapping), the input kinds, determinism, the estimate and the
# mounted refusal.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fslib.sh"
need_free_zero # a build without it: the refusal checked, then SKIP
need python3 sfdisk mke2fs debugfs dumpe2fs e2fsck mkfs.vfat mcopy mdel fsck.vfat \
    mkfs.exfat fsck.exfat mount.exfat-fuse mkntfs ntfscp ntfsls ntfstruncate ntfs-3g ntfsfix \
    ntfscat ntfsinfo mkswap losetup cmp
FSFREE="$srcdir/tests/py/fsfree.py"
cd "$T" || exit 1
MIB=1048576

# Files for the filesystems: text, random, a mix; f2 is deleted afterwards.
mkdir src
"$PY3" - <<'EOF'
import random
r = random.Random(7)
words = b"disk block sector cluster inode bitmap free used journal extent".split()
open("src/f1", "wb").write(b" ".join(r.choice(words) for _ in range(300000)))
open("src/f2", "wb").write(r.randbytes(2_500_000))
open("src/f3", "wb").write(r.randbytes(700_000) + bytes(300_000) + b"tail" * 5000)
EOF
# FUSE mounts (exFAT's files, the mounted-filesystem refusal) need /dev/fuse.
# A machine without it runs every other check; the test then ends SKIP (77),
# never PASS, saying what it did not check.
FUSE_MISSING=
no_fuse() { FUSE_MISSING="$FUSE_MISSING $1;"; echo "NOTE: not checked without FUSE: $1"; }
# fuse_works: whether a FUSE mount of a loop device can be made here
fuse_works() {
    local dev ok=1
    [ -c /dev/fuse ] || { echo "NOTE: /dev/fuse is missing"; return 1; }
    truncate -s 4M probe.img && mkfs.exfat probe.img >/dev/null 2>&1 || return 1
    loop_attach dev probe.img || return 1
    mkdir -p mnt
    if mount.exfat-fuse "$dev" mnt >/dev/null 2>&1; then
        umount mnt && ok=0
    else
        echo "NOTE: a FUSE mount fails here"
    fi
    loop_detach "$dev"
    rm -f probe.img
    return $ok
}
FUSE=0 # SPIGZ_TEST_NO_FUSE=1 runs the test as on a machine without FUSE
if [ -z "${SPIGZ_TEST_NO_FUSE:-}" ] && fuse_works; then FUSE=1; fi

# fuse_fill FILE MOUNTER: copy the files in through a loop device, delete f2
fuse_fill() {
    [ "$FUSE" = 1 ] || { no_fuse "files written into $1"; return; }
    mkdir -p mnt
    with_fuse "$1" "$2" rw mnt sh -c 'cp src/f1 src/f2 src/f3 mnt/ && sync && rm mnt/f2'
    case $? in 125) fail "losetup $1" ;; 126) fail "$2 $1" ;; esac
}
# fuse_read FILE MOUNTER WHAT: mounted read-only, f1 and f3 read back, f2 gone
fuse_read() {
    [ "$FUSE" = 1 ] || { no_fuse "$3: files read back"; return; }
    mkdir -p mnt
    with_fuse "$1" "$2" ro mnt fuse_read_back "$3"
    case $? in 125) fail "$3: losetup" ;; 126) fail "$3: $2 -o ro" ;; esac
}
fuse_read_back() {
    check "$1: f1 reads back" cmp -s mnt/f1 src/f1
    check "$1: f3 reads back" cmp -s mnt/f3 src/f3
    check "$1: f2 stays deleted" [ ! -e mnt/f2 ]
}
mk_ext4_opts() { mkfs_ext "$1" "$2" src -t ext4 -L "e$2" "${@:3}"
                 debugfs -w -R "rm f2" "$1" >/dev/null 2>&1; }
mk_vfat() { mkfs_fat "$1" "$2" src "${@:3}" -n "FAT$2"; mdel -i "$1" ::f2 || fail "mdel $1"; }
mk_exfat() { stale "$1" "$2"; mkfs.exfat -L "X$2" "$1" >/dev/null || fail "mkfs.exfat $1"
             fuse_fill "$1" mount.exfat-fuse; }
# NTFS through ntfs-3g's own tools (no mount): f2's clusters freed by
# truncating it to nothing
mk_ntfs() { local f=$1 ino; mkfs_ntfs "$f" "$2" -L "N$2" "${@:3}"; ntfs_put "$f" src f1 f2 f3
            ino=$(ntfsls -i "$f" 2>/dev/null | awk '$2 == "f2" { print $1 }')
            ntfstruncate "$f" "$ino" 0 >/dev/null 2>&1 || fail "ntfstruncate $f f2"; }
mk_swap() { stale "$1" "$2"; mkswap -L sw "$1" >/dev/null 2>&1 || fail "mkswap $1"; }

# fs_check KIND FILE WHAT: the checker passes and the files read back
fs_check() {
    local kind=$1 f=$2 what=$3
    case $kind in
    ext4) check "$what: e2fsck -fn" e2fsck -fn "$f" >/dev/null 2>&1
          debugfs -R "dump f1 $T/got" "$f" >/dev/null 2>&1
          check "$what: f1 reads back" cmp -s got src/f1
          debugfs -R "dump f3 $T/got" "$f" >/dev/null 2>&1
          check "$what: f3 reads back" cmp -s got src/f3 ;;
    vfat) check "$what: fsck.vfat -n" fsck.vfat -n "$f" >/dev/null 2>&1
          check "$what: f1 reads back" sh -c "mcopy -n -i '$f' ::f1 - | cmp -s - src/f1"
          check "$what: f3 reads back" sh -c "mcopy -n -i '$f' ::f3 - | cmp -s - src/f3" ;;
    exfat) check "$what: fsck.exfat -n" fsck.exfat -n "$f" >/dev/null 2>&1
           fuse_read "$f" mount.exfat-fuse "$what" ;;
    ntfs) check "$what: ntfsfix -n" ntfsfix -n "$f" >/dev/null 2>&1
          check "$what: f1 reads back" sh -c "ntfscat '$f' f1 | cmp -s - src/f1"
          check "$what: f3 reads back" sh -c "ntfscat '$f' f3 | cmp -s - src/f3" ;;
    swap) check "$what: a swap header" sh -c "tail -c +4087 '$f' | head -c 10 | grep -q SWAPSPACE2" ;;
    esac
}

# mapped KIND@SECTOR+SECTORS...: those whose filesystem this build maps
# (the others are read whole: has_fs notes them)
mapped() {
    local spec
    for spec in "$@"; do has_fs "${spec%@*}" "its free blocks zeroed at ${spec#*@}" >&2 && echo "$spec"; done
}

# bytes_of KIND@SECTOR+SECTORS...: the same in bytes, for fsfree.py
bytes_of() {
    local spec kind at n
    for spec in "$@"; do
        kind=${spec%@*}; at=${spec#*@}; n=${at#*+}; at=${at%+*}
        printf '%s ' "$kind@$((at * 512))+$((n * 512))"
    done
}

# put DISK PART SECTOR: copy a partition image into a disk image
put() { dd if="$2" of="$1" bs=512 seek="$3" conv=notrunc status=none; }

# verify WHAT DISK KIND@SECTOR+SECTORS...: back up with --free=zero, restore,
# compare with the original's free space zeroed, check each filesystem
verify() {
    local what=$1 disk=$2 spec kind at n specs=() keep=() s
    shift 2
    # a filesystem this build does not map is read whole (its bytes expected
    # as they are); the others are checked as ever
    for spec in "$@"; do
        has_fs "${spec%@*}" "$what: ${spec%@*}'s free blocks zeroed" && keep+=("$spec")
    done
    set -- "${keep[@]}"
    for spec in "$@"; do
        kind=${spec%@*}; at=${spec#*@}; n=${at#*+}; at=${at%+*}
        specs+=("$kind@$((at * 512))+$((n * 512))")
    done
    "$SPIGZ" --free=zero -v -c "$disk" > b.gz 2> b.err; s=$?
    check "$what: status $s ($(head -c 600 b.err))" [ "$s" -eq 0 ]
    if [ "$#" -gt 0 ]; then
        check "$what: -v says what was skipped" grep -q "skipped as free" b.err
    else
        check "$what: -v says it was read whole, and why" grep -q "read whole: this spigz was built without" b.err
    fi
    "$SPIGZ" -dc b.gz > r.img || fail "$what: restore"
    "$PY3" "$FSFREE" expect "$disk" e.img "${specs[@]}" || fail "$what: fsfree.py"
    check "$what: the restore is the original with its free blocks zeroed ($(cmp r.img e.img 2>&1 | head -c 200))" \
        cmp -s r.img e.img
    for spec in "$@"; do
        kind=${spec%@*}; at=${spec#*@}; n=${at#*+}; at=${at%+*}
        dd if=r.img of=part bs=512 skip="$at" count="$n" status=none
        fs_check "$kind" part "$what: $kind at sector $at"
    done
    # at most 1.01x the backup of the image with its free blocks zeroed
    local got want
    got=$(stat -c %s b.gz)
    want=$("$SPIGZ" -c e.img | wc -c)
    check "$what: $got bytes, the zeroed image's backup $want" [ "$((got * 100))" -le "$((want * 101))" ]
}

section "filesystems alone"
mk_ext4_opts ext4.img 96;       verify "ext4 alone" ext4.img ext4@0+$((96 * 2048))
mk_ext4_opts ext1k.img 48 -b 1024; verify "ext4 1 KiB blocks" ext1k.img ext4@0+$((48 * 2048))
mk_ext4_opts big.img 96 -O bigalloc -C 65536; verify "ext4 bigalloc 64 KiB clusters" big.img ext4@0+$((96 * 2048))
mk_vfat fat32.img 80 -F 32 -s 1; verify "FAT32 alone" fat32.img vfat@0+$((80 * 2048))
mk_vfat fat16.img 24 -F 16;     verify "FAT16 alone" fat16.img vfat@0+$((24 * 2048))
mk_vfat fat12.img 12 -F 12 -s 8; verify "FAT12 alone" fat12.img vfat@0+$((12 * 2048))
mk_exfat exfat.img 48;          verify "exFAT alone" exfat.img exfat@0+$((48 * 2048))
mk_ntfs ntfs.img 64;            verify "NTFS alone" ntfs.img ntfs@0+$((64 * 2048))
mk_ntfs ntfs64k.img 96 -c 65536; verify "NTFS 64 KiB clusters" ntfs64k.img ntfs@0+$((96 * 2048))
mk_ntfs ntfs512.img 24 -c 512 -s 512; verify "NTFS 512-byte clusters" ntfs512.img ntfs@0+$((24 * 2048))
mk_swap swap.img 16;            verify "swap alone" swap.img swap@0+$((16 * 2048))

section "a GPT disk"
stale gpt.img 310
sfdisk -q gpt.img <<EOF >/dev/null || fail "sfdisk gpt"
label: gpt
start=2048, size=$((80 * 2048)), type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B
start=$((81 * 2048)), size=$((96 * 2048)), type=0FC63DAF-8483-4772-8E79-3D69D8477DE4
start=$((177 * 2048)), size=$((16 * 2048)), type=0657FD6D-A4AB-43C4-84E5-0933C84B4F4F
start=$((193 * 2048)), size=$((48 * 2048)), type=EBD0A0A2-B9E5-4433-87C0-68B6B72699C7
start=$((241 * 2048)), size=$((64 * 2048)), type=EBD0A0A2-B9E5-4433-87C0-68B6B72699C7
EOF
put gpt.img fat32.img 2048
put gpt.img ext4.img $((81 * 2048))
put gpt.img swap.img $((177 * 2048))
put gpt.img exfat.img $((193 * 2048))
put gpt.img ntfs.img $((241 * 2048))
verify "GPT" gpt.img vfat@2048+$((80 * 2048)) ext4@$((81 * 2048))+$((96 * 2048)) \
    swap@$((177 * 2048))+$((16 * 2048)) exfat@$((193 * 2048))+$((48 * 2048)) \
    ntfs@$((241 * 2048))+$((64 * 2048))
# the primary header damaged: libblkid takes the backup, the map is the same
cp gpt.img gpt-bad.img
printf 'XXXXXXXX' | dd of=gpt-bad.img bs=1 seek=$((512 + 16)) conv=notrunc status=none
"$SPIGZ" --free=zero -c gpt-bad.img 2>/dev/null | "$SPIGZ" -dc > r2.img
"$PY3" -c 'import sys; a = open("r2.img", "rb").read(); b = open("r.img", "rb").read()
sys.exit(a[1024:] != b[1024:])' || fail "GPT with a bad primary header: not mapped as with the good one"

# a partition at LBA 34, the first a GPT of 512-byte sectors allows: mapped
# (a 24 KiB guard meant for 4 KiB sectors once read it whole)
stale gpt34.img 16
sfdisk -q gpt34.img <<EOF >/dev/null || fail "sfdisk gpt34"
label: gpt
first-lba: 34
start=34, size=$((12 * 2048)), type=EBD0A0A2-B9E5-4433-87C0-68B6B72699C7
EOF
put gpt34.img fat12.img 34
verify "GPT, a partition at LBA 34" gpt34.img vfat@34+$((12 * 2048))

section "an MBR disk: primaries, logicals, sectors not on 4 KiB"
stale mbr.img 350
sfdisk -q mbr.img <<EOF >/dev/null || fail "sfdisk dos"
label: dos
start=63, size=$((24 * 2048)), type=6
start=$((25 * 2048)), size=$((12 * 2048)), type=1
start=$((38 * 2048)), type=5
start=$((38 * 2048 + 63)), size=$((48 * 2048)), type=83
start=$((87 * 2048 + 1)), size=$((96 * 2048)), type=83
start=$((184 * 2048)), size=$((96 * 2048)), type=7
start=$((281 * 2048 + 7)), size=$((48 * 2048)), type=7
start=$((330 * 2048)), size=$((16 * 2048)), type=82
EOF
put mbr.img fat16.img 63
put mbr.img fat12.img $((25 * 2048))
put mbr.img ext1k.img $((38 * 2048 + 63))
put mbr.img big.img $((87 * 2048 + 1))
put mbr.img ntfs64k.img $((184 * 2048))
put mbr.img exfat.img $((281 * 2048 + 7))
put mbr.img swap.img $((330 * 2048))
LOGICALS="ext4@$((38 * 2048 + 63))+$((48 * 2048)) ext4@$((87 * 2048 + 1))+$((96 * 2048))
ntfs@$((184 * 2048))+$((96 * 2048)) exfat@$((281 * 2048 + 7))+$((48 * 2048))
swap@$((330 * 2048))+$((16 * 2048))"
# shellcheck disable=SC2086
verify "MBR" mbr.img vfat@63+$((24 * 2048)) vfat@$((25 * 2048))+$((12 * 2048)) $LOGICALS

section "read whole, with a warning: nothing used is ever lost"
# whole DESC IMAGE PATTERN: status 2, the warning, and the original back
whole() {
    local s
    "$SPIGZ" --free=zero -c "$2" > w.gz 2> w.err; s=$?
    check "$1: status $s, expected 2 ($(head -c 300 w.err))" [ "$s" -eq 2 ]
    check "$1: the warning says why ($(head -c 300 w.err))" grep -q "$3" w.err
    check "$1: the restore is the original" sh -c "'$SPIGZ' -dc w.gz | cmp -s - '$2'"
}
cp fat16.img dirty.img
printf '\001' | dd of=dirty.img bs=1 seek=37 conv=notrunc status=none
whole "FAT16 marked dirty" dirty.img "dirty"
if has_fs ext4 "ext4 read whole when it needs recovery or its checksum is wrong"; then
    cp ext4.img rec.img
    debugfs -w -R "feature needs_recovery" rec.img >/dev/null 2>&1
    whole "ext4 journal needing recovery" rec.img "recovery"
    cp ext4.img csum.img
    printf 'x' | dd of=csum.img bs=1 seek=$((1024 + 120)) conv=notrunc status=none # s_volume_name
    whole "ext4 superblock checksum wrong" csum.img "libext2fs"
fi
# NTFS whose MFT and its mirror both start with garbage: libntfs-3g refuses
# it (with one of them good it mounts from the other, rightly)
cp ntfs.img mft.img
"$PY3" -c 'f = open("mft.img", "r+b"); b = f.read(512)
bps = int.from_bytes(b[11:13], "little")
for at in (48, 56):
    f.seek(int.from_bytes(b[at:at + 8], "little") * bps * b[13]); f.write(b"\xa5" * 4096)'
# libblkid no longer calls it NTFS: read whole, as an unknown filesystem
"$SPIGZ" --free=zero -v -c mft.img > w.gz 2> w.err
check "NTFS with a damaged MFT: read whole, said ($(head -c 300 w.err))" grep -q "read whole" w.err
check "NTFS with a damaged MFT: the restore is the original" sh -c "'$SPIGZ' -dc w.gz | cmp -s - mft.img"
cp exfat.img xdirty.img
"$PY3" -c 'import sys; f = open("xdirty.img", "r+b"); f.seek(106); f.write(b"\x02")'
whole "exFAT marked dirty" xdirty.img "dirty\|checksum"
# overlapping and out-of-disk MBR entries, written by hand
cp mbr.img ovl.img
"$PY3" - <<'EOF'
import struct
f = open("ovl.img", "r+b")
f.seek(446 + 16)  # entry 2 over entry 1's sectors
f.write(struct.pack("<B3sB3sII", 0, b"\0\0\0", 6, b"\0\0\0", 2048, 8192))
f.close()
f = open("far.img", "wb"); f.write(open("mbr.img", "rb").read())
f.seek(446 + 16)  # entry 2 past the end of the disk
f.write(struct.pack("<B3sB3sII", 0, b"\0\0\0", 6, b"\0\0\0", 716000, 100000))
EOF
"$SPIGZ" --free=zero -c ovl.img > w.gz 2> w.err; s=$?
check "MBR entries overlapping: status $s, expected 2 ($(head -c 300 w.err))" [ "$s" -eq 2 ]
check "MBR entries overlapping: said" grep -q "overlaps another" w.err
# shellcheck disable=SC2086,SC2046 # a list of specs
"$PY3" "$FSFREE" expect ovl.img e.img $(bytes_of $(mapped $LOGICALS))
check "MBR entries overlapping: those two read whole, the logicals mapped" \
    sh -c "'$SPIGZ' -dc w.gz | cmp -s - e.img"
"$SPIGZ" --free=zero -c far.img > w.gz 2> w.err; s=$?
check "MBR entry past the disk: status $s, expected 2 ($(head -c 300 w.err))" [ "$s" -eq 2 ]
check "MBR entry past the disk: said" grep -q "outside the disk" w.err
# shellcheck disable=SC2086,SC2046 # a list of specs
"$PY3" "$FSFREE" expect far.img e.img $(bytes_of vfat@63+$((24 * 2048)) $(mapped $LOGICALS))
check "MBR entry past the disk: read whole, the others mapped" \
    sh -c "'$SPIGZ' -dc w.gz | cmp -s - e.img"
# no filesystem at all: read whole, said with -v only, status 0
stale none.img 8
"$SPIGZ" --free=zero -v -c none.img > w.gz 2> w.err; s=$?
check "random bytes: status $s, expected 0" [ "$s" -eq 0 ]
check "random bytes: -v says read whole" grep -q "read whole" w.err
check "random bytes: the restore is the original" sh -c "'$SPIGZ' -dc w.gz | cmp -s - none.img"

section "inputs: pipes refused, stdin from its offset, files and devices alike"
cat gpt.img | "$SPIGZ" --free=zero -c > /dev/null 2> p.err; s=$?
check "a pipe: status $s, expected 1" [ "$s" -eq 1 ]
check "a pipe: the message says why ($(cat p.err))" grep -q "seekable" p.err
# stdin a file already read 1 MiB into: the input starts there (the FAT32)
{ head -c $MIB > /dev/null; "$SPIGZ" --free=zero -c > o.gz; } < gpt.img
tail -c +$((MIB + 1)) gpt.img > tail.img
"$PY3" "$FSFREE" expect tail.img e.img "vfat@0+$((80 * MIB))"
check "stdin 1 MiB in: the rest, its FAT32's free space zeroed" \
    sh -c "'$SPIGZ' -dc o.gz | cmp -s - e.img"
# -n: a device has no name to store, a file has
"$SPIGZ" --free=zero -n -p 1 -c gpt.img > p1.gz
"$SPIGZ" --free=zero -n -p 2 -c gpt.img > p2.gz
check "-p 1 and -p 2: the same bytes" cmp -s p1.gz p2.gz
if loop_attach dev -r gpt.img; then
    "$SPIGZ" --free=zero -n -p 2 -c "$dev" > dev.gz
    check "the image through a loop device: the same bytes as the file" cmp -s dev.gz p2.gz
    loop_detach "$dev"
else
    fail "losetup -r gpt.img"
fi

section "--estimate and --map with --free=zero"
"$SPIGZ" --free=zero -vv -c gpt.img 2>&1 > /dev/null | grep -o '[0-9]* zero of which' > z.txt
"$SPIGZ" --free=zero --estimate=full --format=kv gpt.img > est.txt 2>/dev/null
check "--estimate=full: the compression's zero bytes ($(cat z.txt); $(grep zero_bytes est.txt))" \
    [ "$(grep '^zero_bytes=' est.txt | cut -d= -f2)" = "$(cut -d' ' -f1 z.txt)" ]
"$SPIGZ" --free=zero --estimate --format=kv gpt.img > est2.txt 2>/dev/null
# over 200 MiB with all five mapped; FAT32, exFAT and swap alone have 100
min=100
has_fs ext4 "200 MiB free" && has_fs ntfs "200 MiB free" && min=200
check "--estimate (sample): the free bytes counted, over $min MiB ($(grep free_bytes est2.txt))" \
    [ "$(grep '^free_bytes=' est2.txt | cut -d= -f2)" -gt $((min * MIB)) ]
"$SPIGZ" --free=zero --map gpt.img > map.txt 2>&1
check "--map marks where the partitions start ($(head -c 300 map.txt))" grep -q '<- 2 ext4' map.txt
has_fs ntfs "--map's use of partition 5" &&
    check "--map lists the partitions with their use" grep -q 'gpt partition 5 .*ntfs.* used' map.txt

section "mounted read-write: refused unless --force-mounted"
if [ "$FUSE" != 1 ]; then
    no_fuse "the mounted-filesystem refusal"
elif loop_attach dev ntfs.img; then
    mkdir -p mnt
    fs_mounted "$T/mnt"
    if ntfs-3g "$dev" mnt; then
        "$SPIGZ" --free=zero -c ntfs.img > /dev/null 2> m.err; s=$?
        check "mounted: the image refused, status $s" [ "$s" -eq 1 ]
        check "mounted: the message names the mount ($(cat m.err))" grep -q "mounted read-write on" m.err
        "$SPIGZ" --free=zero -c "$dev" > /dev/null 2> m.err; s=$?
        check "mounted: the device refused, status $s" [ "$s" -eq 1 ]
        "$SPIGZ" --free=zero --force-mounted -c ntfs.img > /dev/null 2> m.err; s=$?
        check "mounted: --force-mounted goes on, status $s ($(cat m.err))" [ "$s" -ne 1 ]
        umount mnt
    else
        fail "ntfs-3g mount of ntfs.img"
    fi
    loop_detach "$dev"
else
    fail "losetup ntfs.img"
fi
[ -n "${KEEP_T:-}" ] && cp -a "$T" "$KEEP_T"
if [ -n "$FUSE_MISSING" ] && [ "$FAILS" -eq 0 ]; then
    echo "free.sh: $CHECKS checks passed; SKIP: without FUSE, not checked:$FUSE_MISSING"
    exit 77
fi
finish

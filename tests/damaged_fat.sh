#!/bin/bash
# damaged_fat.sh — --free=zero on damaged FAT and exFAT volumes: a damaged
# allocation map must not hand its damage to the backup (the second reading,
# DESIGN.md section 12).
# Each volume is made by its own mkfs over random bytes and given hundreds
# of files in subdirectories (mtools for FAT, a FUSE mount for exFAT), some
# of them deleted.  Healthy, it must stay mapped with status 0, its restore
# the original with its free space zeroed (tests/py/fsfree.py).  Damaged (a FAT
# sector zeroed in every copy, a single-FAT volume's, an exFAT allocation
# bitmap cluster, cross-linked chains, an entry set's checksum), the run
# must end with status 2 and a message naming the cause, and the restore
# with the damage undone (the bytes put back, as a repair would) must give
# every file back: read whole, the original itself; mapped with the dispute
# read as data, the original with its free space zeroed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fslib.sh"
need_free_zero # a build without it: the refusal checked, then SKIP
need python3 mkfs.vfat mcopy mdel mdeltree fsck.vfat mkfs.exfat fsck.exfat \
    mount.exfat-fuse losetup cmp diff
FSFREE="$srcdir/tests/py/fsfree.py"
DMG="$srcdir/tests/py/fatdamage.py"
cd "$T" || exit 1
mkdir mnt
fs_mounted "$T/mnt"

# The files: 700 small ones with 8.3 names (one cluster each, and first in
# the volume: FAT12/16's root directory, a region, puts no directory
# cluster between them), and 8 directories of 60 files of 0 to 70 KB with
# long names, two levels deep.
"$PY3" - <<'EOF'
import os, random
r = random.Random(22)
os.makedirs("src/root")
for i in range(700):
    open(f"src/root/A{i:03d}.BIN", "wb").write(r.randbytes(r.randint(1, 500)))
for d in range(8):
    base = f"src/big/Directory-{d}"
    os.makedirs(base + "/second-level/third-level")
    for i in range(60):
        sub = [base, base + "/second-level", base + "/second-level/third-level"][i % 3]
        n = r.choice([0, 100, 700, 1500, 3000, 5000, 20000, 70000])
        open(f"{sub}/A-file-with-a-long-name-{d}-{i}.bin", "wb").write(r.randbytes(n))
EOF
# want_tree DIR PARTS...: the files a volume is given: root (src/root's
# files), big (src/big's directories), or big/Directory-N
want_tree() {
    local w=$1 p
    shift
    rm -rf "$w" && mkdir "$w"
    for p in "$@"; do
        case $p in
        root | big) cp -r "src/$p"/* "$w"/ ;;
        *) cp -r "src/$p" "$w"/ ;;
        esac
    done
}
# deleted files: one file, one directory (their entries stay, marked deleted)
GONE_FILE=Directory-1/second-level/A-file-with-a-long-name-1-4.bin
GONE_DIR=Directory-2/second-level/third-level

# mk_fat IMG MiB WANT MKFS-OPTIONS...: a FAT volume holding WANT's files
mk_fat() {
    local f=$1 w=$3
    mkfs_fat "$@"
    if [ -e "$w/$GONE_FILE" ]; then
        mdel -i "$f" "::$GONE_FILE" && mdeltree -i "$f" "::$GONE_DIR" || fail "mdel in $f"
        rm -r "${w:?}/$GONE_FILE" "${w:?}/$GONE_DIR"
    fi
}

# FUSE mounts (exFAT's files) need /dev/fuse: without it the FAT checks run
# and the test ends SKIP (77), never PASS, saying what it did not check.
FUSE=0
if [ -z "${SPIGZ_TEST_NO_FUSE:-}" ] && [ -c /dev/fuse ]; then FUSE=1; fi
# mk_exfat IMG MiB WANT MKFS-OPTIONS...: an exFAT volume holding WANT's files
mk_exfat() {
    local f=$1 m=$2 w=$3
    shift 3
    stale "$f" "$m"
    mkfs.exfat "$@" "$f" >/dev/null || fail "mkfs.exfat $* $f"
    with_fuse "$f" mount.exfat-fuse rw mnt exfat_fill "$w" "$f"
    case $? in
    125) fail "losetup $f"; return ;;
    126) FUSE=0; echo "NOTE: a FUSE mount fails here" ;;
    esac
    rm -r "${w:?}/$GONE_FILE" "${w:?}/$GONE_DIR"
}
# exfat_fill WANT IMG: WANT's files into the volume mounted on mnt, the
# deleted ones deleted
exfat_fill() {
    cp -r "$1"/* mnt/ && rm -r "mnt/$GONE_FILE" "mnt/$GONE_DIR" || fail "cp into $2"
}

same_tree() { diff -rq "$1" "$2" >/dev/null 2>&1; }
# files KIND IMG WANT WHAT: the checker passes and every file of WANT, and
# nothing else, reads back from IMG
files() {
    local kind=$1 f=$2 w=$3 what=$4
    rm -rf got && mkdir got
    if [ "$kind" = vfat ]; then
        check "$what: fsck.vfat -n" fsck.vfat -n "$f" >/dev/null 2>&1
        mcopy -s -n -i "$f" '::*' got/ || fail "$what: mcopy out"
        check "$what: every file reads back ($(diff -rq "$w" got 2>&1 | head -c 300))" \
            same_tree "$w" got
        return
    fi
    check "$what: fsck.exfat -n" fsck.exfat -n "$f" >/dev/null 2>&1
    with_fuse "$f" mount.exfat-fuse ro mnt exfat_files "$w" "$what"
    case $? in 125) fail "$what: losetup" ;; 126) fail "$what: mount.exfat-fuse -o ro" ;; esac
}
# exfat_files WANT WHAT: every file of WANT, and nothing else, on mnt
exfat_files() {
    check "$2: every file reads back ($(diff -rq "$1" mnt 2>&1 | head -c 300))" same_tree "$1" mnt
}

# healthy KIND IMG WANT WHAT: mapped, status 0, no dispute; the restore is
# the volume with its free space zeroed; its files read back
healthy() {
    local kind=$1 f=$2 w=$3 what=$4 s
    "$SPIGZ" --free=zero -v -c "$f" > b.gz 2> b.err; s=$?
    check "$what: status $s, expected 0 ($(head -c 400 b.err))" [ "$s" -eq 0 ]
    check "$what: mapped ($(head -c 300 b.err))" grep -q "skipped as free" b.err
    check "$what: no dispute" sh -c '! grep -q "calls free\|read whole" b.err'
    "$SPIGZ" -dc b.gz > r.img || fail "$what: restore"
    "$PY3" "$FSFREE" expect "$f" e.img "$kind@0+$(stat -c %s "$f")" || fail "$what: fsfree.py"
    check "$what: the restore is the volume with its free space zeroed" cmp -s r.img e.img
    files "$kind" r.img "$w" "$what"
}

# damaged KIND HEALTHY DAMAGED WANT MODE PATTERN WHAT: status 2, a message
# matching PATTERN; MODE whole: read whole; MODE mapped: still mapped, the
# dispute read as data.  The restore with the damage undone is HEALTHY
# (whole) or HEALTHY with its free space zeroed (mapped); its files read back.
damaged() {
    local kind=$1 h=$2 d=$3 w=$4 mode=$5 pat=$6 what=$7 s
    "$SPIGZ" --free=zero -v -c "$d" > b.gz 2> b.err; s=$?
    echo "$what: status $s: $(grep -v 'replaced with stdout' b.err | head -c 300)"
    check "$what: status $s, expected 2 ($(head -c 400 b.err))" [ "$s" -eq 2 ]
    check "$what: the message names the cause ($(head -c 400 b.err))" grep -q "$pat" b.err
    if [ "$mode" = whole ]; then
        check "$what: read whole" grep -q "read whole" b.err
        cp "$h" e.img
    else
        check "$what: still mapped" grep -q "skipped as free" b.err
        "$PY3" "$FSFREE" expect "$h" e.img "$kind@0+$(stat -c %s "$h")" || fail "$what: fsfree.py"
    fi
    "$SPIGZ" -dc b.gz > r.img || fail "$what: restore"
    "$PY3" "$DMG" undo "$h" "$d" r.img
    check "$what: the restore, repaired, is the volume (its free space zeroed if mapped)" \
        cmp -s r.img e.img
    files "$kind" r.img "$w" "$what"
}

# zero_fat IMG SECTOR [COPY]: zero a FAT sector in every copy, or in one
zero_fat() {
    local off len k=0
    while read -r off len; do
        if [ -z "${3:-}" ] || [ "$3" = "$k" ]; then
            dd if=/dev/zero of="$1" bs=1 seek="$off" count="$len" conv=notrunc status=none
        fi
        k=$((k + 1))
    done < <("$PY3" "$DMG" fat-copies "$1" "$2")
}

section "FAT32: a FAT sector zeroed in both copies, in one"
want_tree w32 root big
mk_fat f32.img 64 w32 -F 32 -s 1
healthy vfat f32.img w32 "FAT32 healthy"
cp f32.img d.img
zero_fat d.img "$("$PY3" "$DMG" fat-sector f32.img mid)"
damaged vfat f32.img d.img w32 whole "FAT is damaged.*chain breaks" "FAT32, a FAT sector zeroed in both copies"
# in the first copy only: the second continues every chain, nothing is lost
cp f32.img d.img
zero_fat d.img "$("$PY3" "$DMG" fat-sector f32.img mid)" 0
"$SPIGZ" --free=zero -v -c d.img > b.gz 2> b.err; s=$?
check "FAT32, a sector zeroed in FAT 0 only: status $s, expected 0 ($(head -c 300 b.err))" [ "$s" -eq 0 ]
"$PY3" "$FSFREE" expect f32.img e.img "vfat@0+$(stat -c %s f32.img)"
"$SPIGZ" -dc b.gz > r.img
"$PY3" "$DMG" undo f32.img d.img r.img
check "FAT32, a sector zeroed in FAT 0 only: mapped as the healthy volume" cmp -s r.img e.img
# two files' chains from one cluster: which one is wrong is unknown
cp f32.img d.img
"$PY3" "$DMG" fat-crosslink d.img
damaged vfat f32.img d.img w32 whole "loop or cross" "FAT32, two files cross-linked"

section "FAT16: one-cluster files lose their FAT sector in both copies; a single FAT"
want_tree w16 root big
mk_fat f16.img 48 w16 -F 16 -s 4 -r 1024
healthy vfat f16.img w16 "FAT16 healthy"
cp f16.img d.img
zero_fat d.img "$("$PY3" "$DMG" fat-sector f16.img eoc)"
damaged vfat f16.img d.img w16 mapped "calls free" "FAT16, a sector of one-cluster files zeroed in both copies"
want_tree w16s root big
mk_fat f16s.img 48 w16s -F 16 -s 4 -f 1 -r 1024
healthy vfat f16s.img w16s "FAT16 with one FAT healthy"
cp f16s.img d.img
zero_fat d.img "$("$PY3" "$DMG" fat-sector f16s.img mid)"
damaged vfat f16s.img d.img w16s whole "FAT is damaged" "FAT16 with one FAT, a FAT sector zeroed"

section "FAT12 with one FAT: a sector of one-cluster files zeroed"
want_tree w12 root big/Directory-1 big/Directory-2
mk_fat f12.img 4 w12 -F 12 -s 2 -f 1 -r 1024
healthy vfat f12.img w12 "FAT12 healthy"
cp f12.img d.img
zero_fat d.img "$("$PY3" "$DMG" fat-sector f12.img eoc)"
damaged vfat f12.img d.img w12 mapped "calls free" "FAT12 with one FAT, a sector of one-cluster files zeroed"

section "exFAT: an allocation bitmap cluster zeroed; an entry set damaged"
if [ "$FUSE" = 1 ]; then
    want_tree wx big
    mk_exfat x.img 64 wx
fi
if [ "$FUSE" = 1 ]; then
    healthy exfat x.img wx "exFAT healthy"
    # one bitmap cluster is the whole bitmap here: beyond the bound, read whole
    cp x.img d.img
    read -r off len < <("$PY3" "$DMG" xf-bitmap x.img)
    dd if=/dev/zero of=d.img bs=1 seek="$off" count="$len" conv=notrunc status=none
    damaged exfat x.img d.img wx whole "calls free" "exFAT, its allocation bitmap zeroed"
    # a File entry's checksum wrong: its allocation cannot be trusted
    cp x.img d.img
    off=$("$PY3" "$DMG" xf-file-entry x.img)
    "$PY3" "$DMG" flip d.img "$((off + 2))"
    damaged exfat x.img d.img wx whole "entry set is damaged" "exFAT, an entry set's checksum wrong"
    # 512-byte clusters: a bitmap cluster covers 2 MiB, under the bound: mapped
    want_tree wx5 big
    mk_exfat x5.img 64 wx5 -c 512
fi
if [ "$FUSE" = 1 ]; then
    healthy exfat x5.img wx5 "exFAT, 512-byte clusters, healthy"
    cp x5.img d.img
    read -r off len < <("$PY3" "$DMG" xf-bitmap x5.img)
    dd if=/dev/zero of=d.img bs=1 seek="$off" count="$len" conv=notrunc status=none
    damaged exfat x5.img d.img wx5 mapped "calls free" "exFAT, 512-byte clusters, a bitmap cluster zeroed"
fi
if [ "$FUSE" != 1 ] && [ "$FAILS" -eq 0 ]; then
    echo "damaged_fat.sh: $CHECKS checks passed; SKIP: without FUSE, exFAT was not checked"
    exit 77
fi
finish

#!/bin/bash
# lvm.sh — LVM2 physical volumes under --free=zero, made by LVM's own tools
# (isolated: a configuration of the test's own, no activation, no
# device-mapper, each command seeing its loop device alone).  A RHEL-like
# GPT disk: an XFS /boot and a PV holding the VG "rhel" (LVs root XFS, swap,
# home ext4), made over random bytes, so that the unallocated extents, the
# swap's body and home's free blocks (a deleted file's among them) hold old
# data; root and home were extended after home was made, so each has two
# segments (root's second after home, home's second before its first).
# After a backup and a restore: the PV's metadata is LVM's (pvck, the same
# VG by vgcfgbackup); home, read through its segments (tests/py/lvmseg.py,
# checked against lvs), passes e2fsck, its files read back, its used blocks
# are the original's and its free blocks are zeros; the swap's header is
# kept and its body zeroed; the XFS volumes (read whole for now) pass
# xfs_repair -n and hold nothing but their bytes or zeros; the unallocated
# extents are zeros; outside the XFS volumes the disk is exactly the
# original with those zeros; and the backup is smaller by about the old
# data dropped.  Then whole-disk PVs: one intact, whose LV is mapped the
# same way, and what must be read whole, byte for byte: two metadata areas
# whose texts disagree (checksums valid), a PV larger than its partition
# (its extents, or only its dev_size), a broken text checksum, and a
# snapshot (its origin and its COW store; a plain LV beside them still has
# its free blocks zeroed).  -v must name each LV as VG/LV and say whether
# it was mapped ("skipped as free") or "read whole".
#
# Needs lvm2 and xfsprogs: without them, SKIP (77), saying so.  lvcreate -s
# needs device-mapper: the snapshot is written into the VG's metadata, as
# LVM writes it, and restored with vgcfgrestore.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fslib.sh"
need_free_zero
need_or_skip "(lvm2, xfsprogs): LVM2 PVs under --free=zero not checked (their LVs' free \
blocks, unallocated extents, what is read whole)" pvcreate vgcreate lvcreate lvextend lvs pvck \
    vgcfgbackup vgcfgrestore mkfs.xfs xfs_repair
need sfdisk mke2fs e2fsck debugfs dumpe2fs mkswap losetup cmp dd "$PY3"
has_fs ext4 "the LVs' ext4 (every check here)" || { finish; exit 77; }
cd "$T" || exit 1
S=512
M=$((1 << 20))
lvseg() { "$PY3" "$srcdir/tests/py/lvmseg.py" "$@"; }
fsfree() { "$PY3" "$srcdir/tests/py/fsfree.py" "$@"; }

# LVM touches nothing of the host's: its configuration, locks and hints
# here; no device-mapper, udev, backups or archives.
export LVM_SYSTEM_DIR=$T/lvm LVM_SUPPRESS_FD_WARNINGS=1
mkdir -p lvm/lock
cat > lvm/lvm.conf <<EOF
global { activation = 0 locking_dir = "$T/lvm/lock" }
activation { udev_sync = 0 udev_rules = 0 monitoring = 0 }
backup { backup = 0 archive = 0 }
devices { obtain_device_list_from_udev = 0 hints = "none" use_devicesfile = 0 }
EOF
# lvm_on DEV COMMAND ARG...: an LVM command that sees DEV alone (a filter:
# pvck ignores --devices); its messages go to lvm.log
lvm_on() {
    local dev=$1 cmd=$2
    shift 2
    echo "# $cmd $*" >> lvm.log
    "$cmd" --config "devices { global_filter = [ \"a|^$dev\$|\", \"r|.*|\" ] }" "$@" 2>> lvm.log
}
# lvm_fail WHAT: a failure, with LVM's last words
lvm_fail() { fail "$1: $(grep -v 'WARNING: ' lvm.log | tail -3 | tr '\n' ' ')"; }
# quiet COMMAND...: its output dropped (its status kept)
quiet() { "$@" > /dev/null; }
# xfs_mk FILE MKFS-ARG...: XFS over what FILE holds (under 300 MB,
# mkfs.xfs wants to be told it is a test)
xfs_mk() {
    local f=$1
    shift
    TEST_DIR=$T TEST_DEV=$f QA_CHECK_FS=1 mkfs.xfs -q -f -K "$@" "$f" > /dev/null 2>&1 ||
        fail "mkfs.xfs $* $f"
}
xfs_ok() { xfs_repair -n -f "$1" > "$1.repair" 2>&1; }
# ext_mk FILE SRC: ext4 of SRC's files over what FILE holds; /gone deleted
ext_mk() {
    mke2fs -q -F -E nodiscard -t ext4 -d "$2" "$1" > /dev/null 2>&1 || fail "mke2fs $1"
    debugfs -w -R "rm /gone" "$1" > /dev/null 2>&1 || fail "debugfs rm /gone in $1"
}
# lv_fs IMG PVOFF VGTXT LV KIND ARG...: LV's bytes (old data) taken out,
# its filesystem made over them (KIND: ext4 SRC, xfs MKFS-ARG..., swap),
# written back through its segments; the LV's image stays as o-LV.img
lv_fs() {
    local img=$1 off=$2 txt=$3 lv=$4 kind=$5
    shift 5
    lvseg extract "$img" "$off" "$txt" "$lv" "o-$lv.img" || fail "extract $lv"
    case $kind in
    ext4) ext_mk "o-$lv.img" "$1" ;;
    xfs) xfs_mk "o-$lv.img" "$@" ;;
    swap) mkswap -L "$lv" "o-$lv.img" > /dev/null 2>&1 || fail "mkswap $lv" ;;
    esac
    lvseg insert "$img" "$off" "$txt" "$lv" "o-$lv.img" || fail "insert $lv"
}
# backup NAME IMG: NAME.gz (--free=zero -v, its messages in NAME.err, its
# status in NAME.s), restored as NAME-r.img
backup() {
    "$SPIGZ" --free=zero -v -k -"$FAST" -c "$2" > "$1.gz" 2> "$1.err"
    echo $? > "$1.s"
    "$SPIGZ" -dc "$1.gz" > "$1-r.img" 2> "$1.derr" || fail "$1: spigz -d ($(cat "$1.derr"))"
}
# said ERR LV WORDS: -v's line of LV (VG/LV) says WORDS
said() { grep -F "$2" "$1" | grep -q "$3"; }

mkdir src xsrc
"$PY3" - <<'EOF'
import random
r = random.Random(5)
words = b"volume group extent segment stripe metadata area label sector".split()
open("src/notes.txt", "wb").write(b" ".join(r.choice(words) for _ in range(200000)))
open("src/photo.jpg", "wb").write(r.randbytes(3_000_000))
open("src/gone", "wb").write(r.randbytes(4_000_000))
open("xsrc/hostname", "wb").write(b"rhel.example\n")
open("xsrc/vmlinuz", "wb").write(r.randbytes(2_000_000))
EOF
mkdir src/docs && seq 1 50000 > src/docs/seq.txt
printf '/dev/null\n0 0\nd--755 0 0\netc d--755 0 0\nhostname ---644 0 0 %s\n$\nvmlinuz ---644 0 0 %s\n$\n' \
    "$T/xsrc/hostname" "$T/xsrc/vmlinuz" > xfs.proto

section "a RHEL-like disk: XFS /boot, LVM (root XFS, swap, home ext4)"
# sectors: p1 /boot 32 MiB; p2 the PV, 160 MiB (39 extents of 4 MiB)
P1=2048 P1N=65536 P2=67584 P2N=327680
stale disk.img 194
printf 'label: gpt\nstart=%d, size=%d, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, name=boot\nstart=%d, size=%d, type=E6D6D379-F507-44C2-A23C-238F2A3DF928, name=lvm\n' \
    $P1 $P1N $P2 $P2N | sfdisk -q disk.img || fail "sfdisk"
PVOFF=$((P2 * S))
loop_need PV -o $PVOFF --sizelimit $((P2N * S)) disk.img || exit 1
lvm_on "$PV" pvcreate -y "$PV" > /dev/null || lvm_fail "pvcreate"
lvm_on "$PV" vgcreate rhel "$PV" > /dev/null || lvm_fail "vgcreate"
# root at extents 0-5, swap 6-9, home 20-21; then root grows at 22-23
# (after home) and home at 10-19 (before its first extents); 24-38 unallocated
for lv in root:24M:0-5 swap:16M:6-9 home:8M:20-21; do
    IFS=: read -r n size pes <<< "$lv"
    lvm_on "$PV" lvcreate --activate n -Zn -Wn -L "$size" -n "$n" rhel "$PV:$pes" > /dev/null ||
        lvm_fail "lvcreate $lv"
done
lvm_on "$PV" lvextend -L +8M rhel/root "$PV:22-23" > /dev/null || lvm_fail "lvextend rhel/root"
lvm_on "$PV" lvextend -L +40M rhel/home "$PV:10-19" > /dev/null || lvm_fail "lvextend rhel/home"
lvm_on "$PV" vgcfgbackup -f rhel.txt rhel > /dev/null || lvm_fail "vgcfgbackup"
lvm_on "$PV" lvs --noheadings --units b -o lv_name,seg_start_pe,seg_size_pe,seg_pe_ranges,vg_extent_size \
    rhel > lvs.txt
lvm_on "$PV" pvs --noheadings --units b -o pe_start "$PV" > pvs.txt
loop_detach "$PV"
check "the segments as lvs lists them ($(tr -s ' \n' ' ' < lvs.txt))" "$PY3" -c '
rows = [l.split() for l in open("lvs.txt") if l.strip()]
got = sorted((r[0], int(r[1]), r[3].rsplit(":", 1)[1]) for r in rows)
assert got == [("home", 0, "20-21"), ("home", 2, "10-19"), ("root", 0, "0-5"), ("root", 6, "22-23"),
               ("swap", 0, "6-9")], got'
# lvmseg.py reads vgcfgbackup's text: it must place each LV as lvs does
for lv in root swap home; do
    check "lvmseg.py places $lv as lvs does" cmp -s <(lvseg segs rhel.txt $lv) <(awk -v lv=$lv \
        -v pe0="$(tr -dc 0-9 < pvs.txt)" '$1 == lv { split($4, d, ":"); split(d[2], r, "-");
            e = $5 + 0; print $2 * e, pe0 + r[1] * e, $3 * e }' lvs.txt)
done
part disk.img $P1 $P1N o-boot.img
xfs_mk o-boot.img -L boot -p xfs.proto
put disk.img o-boot.img $P1
lv_fs disk.img $PVOFF rhel.txt root xfs -L root -p xfs.proto
lv_fs disk.img $PVOFF rhel.txt swap swap
lv_fs disk.img $PVOFF rhel.txt home ext4 src
check "the originals pass their checkers" sh -c 'xfs_repair -n -f o-boot.img > /dev/null 2>&1 &&
    xfs_repair -n -f o-root.img > /dev/null 2>&1 && e2fsck -fn o-home.img > /dev/null 2>&1'
fsfree ext4 o-home.img > home.free || fail "fsfree.py ext4"
fsfree swap o-swap.img > swap.free || fail "fsfree.py swap"
lvseg unalloc rhel.txt > unalloc.txt || fail "lvmseg.py unalloc"

section "the backup and the restore"
backup b disk.img
check "--free=zero: status 0 ($(cat b.s): $(head -c 400 b.err))" [ "$(cat b.s)" -eq 0 ]
cp b-r.img r.img
"$SPIGZ" -k -"$FAST" -c disk.img > plain.gz || fail "spigz (no --free=zero)"
check "without --free=zero: every byte" sh -c "'$SPIGZ' -dc plain.gz | cmp -s - disk.img"
read -r bad zeroed <<< "$(lvseg covers disk.img r.img)"
check "the restore holds the original's bytes or zeros, nothing else ($bad sectors)" [ "$bad" = 0 ]
check "the PV's label and metadata area (its first MiB) identical" \
    cmp -s <(dd if=disk.img bs=$S skip=$P2 count=2048 status=none) \
    <(dd if=r.img bs=$S skip=$P2 count=2048 status=none)

section "the restored PV is LVM's"
if loop_need RPV -r -o $PVOFF --sizelimit $((P2N * S)) r.img; then
    check "pvck passes" quiet lvm_on "$RPV" pvck "$RPV"
    lvm_on "$RPV" vgcfgbackup -f r-rhel.txt rhel > /dev/null
    check "vgcfgbackup: the same VG (all but the device's name)" \
        cmp -s <(sed -n '/^rhel {/,$p' rhel.txt | grep -v 'device = ') \
        <(sed -n '/^rhel {/,$p' r-rhel.txt | grep -v 'device = ')
    loop_detach "$RPV"
fi

section "home (ext4) read through its segment map"
lvseg extract r.img $PVOFF rhel.txt home r-home.img || fail "extract home"
check "e2fsck -fn passes" sh -c "e2fsck -fn r-home.img > home.fsck 2>&1"
for f in notes.txt photo.jpg docs/seq.txt; do
    check "/$f reads back identical" sh -c "debugfs -R 'dump /$f got' r-home.img > /dev/null 2>&1 && cmp -s got src/$f"
done
read -r diff fnz stale <<< "$(lvseg freecmp o-home.img r-home.img < home.free)"
check "the original home's free blocks held old data ($stale bytes not zero)" [ "${stale:-0}" -gt $((16 * M)) ]
check "every used block of home is the original's ($diff bytes differ)" [ "$diff" = 0 ]
check "every free block of home is zero in the restore ($fnz of $stale bytes of old data kept)" [ "$fnz" = 0 ]
check "-v: rhel/home skipped as free ($(grep -F rhel/home b.err))" said b.err rhel/home 'skipped as free'
home_stale=$stale

section "swap: its header kept, its body zeroed"
lvseg extract r.img $PVOFF rhel.txt swap r-swap.img || fail "extract swap"
read -r diff fnz stale <<< "$(lvseg freecmp o-swap.img r-swap.img < swap.free)"
check "the original swap's body held old data ($stale bytes not zero)" [ "${stale:-0}" -gt $((15 * M)) ]
check "its header page identical ($diff bytes differ)" [ "$diff" = 0 ]
check "its body zero in the restore ($fnz bytes not)" [ "$fnz" = 0 ]
check "-v: rhel/swap skipped as free ($(grep -F rhel/swap b.err))" said b.err rhel/swap 'skipped as free'
swap_stale=$stale

section "root and /boot (XFS)"
lvseg extract r.img $PVOFF rhel.txt root r-root.img || fail "extract root"
part r.img $P1 $P1N r-boot.img
for v in root boot; do
    check "$v: xfs_repair -n passes ($(tail -2 r-$v.img.repair 2>/dev/null | tr '\n' ' '))" xfs_ok r-$v.img
    read -r bad zeroed <<< "$(lvseg covers o-$v.img r-$v.img)"
    check "$v: the original's bytes wherever the restore is not zero ($bad sectors)" [ "$bad" = 0 ]
    echo "NOTE: $v: $zeroed sectors zeroed"
done
check "-v: rhel/root named ($(grep -F rhel/root b.err))" grep -qF rhel/root b.err

section "the unallocated extents"
read -r nz total <<< "$(lvseg nonzero disk.img $PVOFF < unalloc.txt)"
check "in the original, old data ($nz of $total bytes not zero)" \
    sh -c "[ ${total:-0} -ge $((40 * M)) ] && [ ${nz:-0} -gt $((${total:-0} * 99 / 100)) ]"
unalloc_stale=$nz
read -r nz total <<< "$(lvseg nonzero r.img $PVOFF < unalloc.txt)"
check "in the restore, zeros ($nz of $total bytes not)" [ "$nz" = 0 ]

section "the whole disk, byte for byte"
# zeros where they must be; the XFS volumes (read whole for now) aside
{
    lvseg place rhel.txt home $PVOFF < home.free
    lvseg place rhel.txt swap $PVOFF < swap.free
    awk -v b=$PVOFF '{ print $1 + b, $2 }' unalloc.txt
} > zero.txt
{
    echo "$((P1 * S)) $((P1N * S))"
    lvseg segs rhel.txt root | awk -v b=$PVOFF '{ print $2 + b, $3 }'
} > skip.txt
wrong=$(lvseg expect disk.img r.img zero.txt skip.txt)
check "outside the XFS volumes: the original, with exactly home's free blocks, the swap's body and the unallocated extents zeros ($wrong bytes not)" \
    [ "$wrong" = 0 ]

section "the backup's size"
dropped=$((home_stale + swap_stale + unalloc_stale))
saved=$(($(stat -c %s plain.gz) - $(stat -c %s b.gz)))
echo "NOTE: $saved bytes smaller than without --free=zero; old data to drop: $dropped"
check "smaller by at least 90% of the old data in home's free blocks, the swap and the unallocated extents" \
    [ "$saved" -gt $((dropped * 9 / 10)) ]

# ---- what must be read whole ----
# odd NAME MiB PVCREATE-ARG...: NAME.img, a whole-disk PV over old data: VG
# NAME, LV data (16 MiB, ext4 holding src, /gone deleted), the rest unallocated
odd() {
    local n=$1 size=$2 dev
    shift 2
    stale "$n.img" "$size"
    loop_need dev "$n.img" || return 1
    lvm_on "$dev" pvcreate -y "$@" "$dev" > /dev/null || lvm_fail "$n: pvcreate $*"
    lvm_on "$dev" vgcreate "$n" "$dev" > /dev/null || lvm_fail "$n: vgcreate"
    lvm_on "$dev" lvcreate --activate n -Zn -Wn -L 16M -n data "$n" > /dev/null || lvm_fail "$n: lvcreate"
    lvm_on "$dev" vgcfgbackup -f "$n.txt" "$n" > /dev/null || lvm_fail "$n: vgcfgbackup"
    loop_detach "$dev"
    lvseg extract "$n.img" 0 "$n.txt" data "$n-data.img" && ext_mk "$n-data.img" src &&
        lvseg insert "$n.img" 0 "$n.txt" data "$n-data.img" || fail "$n: ext4 in data"
    fsfree ext4 "$n-data.img" > "$n-data.free" || fail "$n: fsfree.py ext4"
    # (else zeroing them by mistake would go unseen)
    read -r nz _ <<< "$(lvseg nonzero "$n-data.img" 0 < "$n-data.free")"
    check "$n: old data in the free blocks of data's ext4 ($nz bytes)" [ "${nz:-0}" -gt $((4 * M)) ]
}
# mapped NAME VGTXT LV: LV's ext4 (the original in VG-LV.img, its free
# ranges in VG-LV.free) in NAME's restore: e2fsck passes, its used blocks
# are the original's, its free blocks zeros, and -v says VG/LV skipped as free
mapped() {
    local n=$1 txt=$2 lv=$3 vg diff fnz stale
    vg=${txt%.txt}
    lvseg extract "$n-r.img" 0 "$txt" "$lv" "r-$n-$lv.img" || fail "$n: extract $lv"
    check "$n: $vg/$lv: e2fsck -fn passes" sh -c "e2fsck -fn r-$n-$lv.img > /dev/null 2>&1"
    read -r diff fnz stale <<< "$(lvseg freecmp "$vg-$lv.img" "r-$n-$lv.img" < "$vg-$lv.free")"
    check "$n: $vg/$lv: its used blocks the original's ($diff bytes differ)" [ "$diff" = 0 ]
    check "$n: $vg/$lv: its free blocks zero in the restore ($fnz of $stale bytes of old data kept)" \
        [ "$fnz" = 0 ]
    check "$n: -v: $vg/$lv skipped as free ($(grep -F "$vg/$lv" "$n.err"))" said "$n.err" "$vg/$lv" 'skipped as free'
}
# whole NAME IMG VG WHY: IMG backed up, read whole: every byte restored
whole() {
    backup "$1" "$2"
    check "$4: status 0 or 2 ($(cat "$1.s"): $(head -c 300 "$1.err"))" grep -qx '[02]' "$1.s"
    check "$4: every byte restored" cmp -s "$1-r.img" "$2"
    check "$4: -v says read whole ($(grep 'read whole' "$1.err" | head -1))" grep -q 'read whole' "$1.err"
    check "$4: -v: no LV of $3 skipped as free" sh -c "! grep -F '$3/' '$1.err' | grep -q 'skipped as free'"
}
# pvck_on IMG: pvck's status on IMG (whole)
pvck_on() {
    local dev s
    loop_need dev -r "$1" || return 99
    lvm_on "$dev" pvck "$dev" > /dev/null
    s=$?
    loop_detach "$dev"
    return $s
}

section "a whole-disk PV with two metadata areas alike: mapped"
# (what makes the cases below read whole is what was done to them)
odd two 48 --pvmetadatacopies 2
cp two.img ctl.img
backup ctl ctl.img
check "status 0 ($(cat ctl.s): $(head -c 300 ctl.err))" [ "$(cat ctl.s)" -eq 0 ]
mapped ctl two.txt data

section "two metadata areas whose texts disagree"
# the second area's copy puts data at extent 3, checksums made right
lvseg retext two.img 0 1 '"pv0", 0' '"pv0", 3' || fail "lvmseg.py retext"
lvseg mda two.img 0 > two.mda
check "both areas' checksums valid ($(tr '\n' '|' < two.mda))" sh -c \
    '[ $(grep -c "^mda .*header crc ok.*crc ok" two.mda) -eq 2 ]'
lvseg text two.img 0 0 > two.t0 && lvseg text two.img 0 1 > two.t1 || fail "lvmseg.py text"
check "... their texts differ" sh -c '! cmp -s two.t0 two.t1'
check "... LVM takes it (pvck passes)" pvck_on two.img
whole two two.img two "two areas disagreeing"

section "a PV larger than its partition"
odd big 32
# b1: the extents past the partition's end; b2: only dev_size past it
# (its 7 extents end at 29 MiB, the partition is 30 MiB, dev_size 32);
# data (extents 0-3) within the partition in both
check "the PV: pe_start 1 MiB, 7 extents of 4 MiB, dev_size 32 MiB" \
    sh -c "grep -q 'pe_start = 2048' big.txt && grep -q 'pe_count = 7' big.txt &&
        grep -q 'extent_size = 8192' big.txt && grep -q 'dev_size = 65536' big.txt"
for c in 1:49152 2:61440; do
    n=b${c%:*} len=${c#*:}
    stale "$n.img" $((len / 2048 + 10))
    printf 'label: gpt\nstart=2048, size=%d, type=E6D6D379-F507-44C2-A23C-238F2A3DF928\n' "$len" |
        sfdisk -q "$n.img" || fail "sfdisk $n"
    part big.img 0 "$len" "$n-p.img"
    put "$n.img" "$n-p.img" 2048
done
whole b1 b1.img big "its extents past the partition (24 MiB)"
whole b2 b2.img big "its dev_size past the partition (30 MiB)"

section "a metadata text whose checksum is wrong"
odd crc 48
lvseg flip crc.img 0 0 || fail "lvmseg.py flip"
pvck_on crc.img
s=$?
check "... LVM sees it: pvck fails ($s)" sh -c "[ $s -ne 0 ] && [ $s -ne 99 ]"
whole crc crc.img crc "a text checksum broken"

section "a snapshot: its origin and COW read whole, a plain LV beside them mapped"
stale snapvg.img 64
if loop_need SV snapvg.img; then
    lvm_on "$SV" pvcreate -y "$SV" > /dev/null || lvm_fail "snapvg: pvcreate"
    lvm_on "$SV" vgcreate snapvg "$SV" > /dev/null || lvm_fail "snapvg: vgcreate"
    for lv in home:16M data:16M snap:8M; do
        lvm_on "$SV" lvcreate --activate n -Zn -Wn -L "${lv#*:}" -n "${lv%:*}" snapvg > /dev/null ||
            lvm_fail "snapvg: lvcreate $lv"
    done
    lvm_on "$SV" vgcfgbackup -f snapvg.txt snapvg > /dev/null || lvm_fail "snapvg: vgcfgbackup"
    # lvcreate -s needs device-mapper: the snapshot written into the VG's
    # metadata as lvcreate -s writes it (snapshot0, visible, its segment
    # naming home the origin and snap the COW store), then restored by
    # vgcfgrestore, which hides snap as lvcreate -s does
    "$PY3" - <<'EOF'
t = open("snapvg.txt").read()
i = t.rindex("\t}\n\n}")
open("snapvg-s.txt", "w").write(t[:i] + '''
		snapshot0 {
			id = "sNaPsh-0000-0000-0000-0000-0000-000000"
			status = ["READ", "WRITE", "VISIBLE"]
			flags = []
			segment_count = 1

			segment1 {
				start_extent = 0
				extent_count = 4

				type = "snapshot"
				chunk_size = 8
				origin = "home"
				cow_store = "snap"
			}
		}
''' + t[i:])
EOF
    lvm_on "$SV" vgcfgrestore -f snapvg-s.txt snapvg > /dev/null || lvm_fail "snapvg: vgcfgrestore"
    lvm_on "$SV" lvs --noheadings -o lv_name,origin snapvg > snaplvs.txt
    check "LVM sees snap as home's snapshot ($(tr -s ' \n' ' ' < snaplvs.txt))" grep -qE '^ *snap +home *$' snaplvs.txt
    loop_detach "$SV"
fi
for lv in home data; do
    lvseg extract snapvg.img 0 snapvg.txt $lv snapvg-$lv.img && ext_mk snapvg-$lv.img src &&
        lvseg insert snapvg.img 0 snapvg.txt $lv snapvg-$lv.img || fail "snapvg: ext4 in $lv"
done
# the COW store's header (dm-snapshot's: magic, valid, version, chunk size)
"$PY3" -c 'import struct, sys; sys.stdout.buffer.write(struct.pack("<IIII", 0x70416E53, 1, 1, 8))' > cow.hdr
put snapvg.img cow.hdr $(($(lvseg segs snapvg.txt snap | cut -d' ' -f2) / S))
fsfree ext4 snapvg-data.img > snapvg-data.free || fail "fsfree.py ext4 data"
backup snapvg snapvg.img
check "status 0 ($(cat snapvg.s): $(head -c 300 snapvg.err))" [ "$(cat snapvg.s)" -eq 0 ]
for lv in home snap; do
    lvseg extract snapvg.img 0 snapvg.txt $lv o-sv-$lv.img
    lvseg extract snapvg-r.img 0 snapvg.txt $lv r-sv-$lv.img
    check "$lv: every byte restored" cmp -s o-sv-$lv.img r-sv-$lv.img
    check "-v: snapvg/$lv read whole ($(grep -F "snapvg/$lv" snapvg.err))" said snapvg.err "snapvg/$lv" 'read whole'
done
read -r nz _ <<< "$(lvseg nonzero snapvg-data.img 0 < snapvg-data.free)"
check "data: old data in its free blocks ($nz bytes)" [ "${nz:-0}" -gt $((4 * M)) ]
mapped snapvg snapvg.txt data

section "an encrypted LV (LUKS2): read whole and said so; a plain LV beside it mapped"
# Ubuntu's LVM-with-LUKS puts the LUKS inside an LV (or the PV inside one):
# -v, --estimate (text, JSON, key=value) and the manifest say encrypted
if command -v cryptsetup > /dev/null; then
    stale enc.img 64
    loop_need ED enc.img || fail "loop enc.img"
    lvm_on "$ED" pvcreate -y "$ED" > /dev/null || lvm_fail "enc: pvcreate"
    lvm_on "$ED" vgcreate encvg "$ED" > /dev/null || lvm_fail "enc: vgcreate"
    # READ: an LV named like a status flag every other LV carries (it once
    # counted as used by them, and was read whole)
    for lv in data secret READ; do
        lvm_on "$ED" lvcreate --activate n -Zn -Wn -L 16M -n $lv encvg > /dev/null || lvm_fail "enc: lvcreate $lv"
    done
    lvm_on "$ED" vgcfgbackup -f encvg.txt encvg > /dev/null || lvm_fail "enc: vgcfgbackup"
    loop_detach "$ED"
    lvseg extract enc.img 0 encvg.txt data encvg-data.img && ext_mk encvg-data.img src &&
        lvseg insert enc.img 0 encvg.txt data encvg-data.img || fail "enc: ext4 in data"
    fsfree ext4 encvg-data.img > encvg-data.free || fail "fsfree.py ext4 encvg data"
    lvseg extract enc.img 0 encvg.txt READ encvg-READ.img && ext_mk encvg-READ.img src &&
        lvseg insert enc.img 0 encvg.txt READ encvg-READ.img || fail "enc: ext4 in READ"
    fsfree ext4 encvg-READ.img > encvg-READ.free || fail "fsfree.py ext4 encvg READ"
    printf 'spigz-test-key' > enc.key
    lvseg extract enc.img 0 encvg.txt secret o-secret.img &&
        cryptsetup luksFormat --batch-mode --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 \
            --key-file enc.key o-secret.img > /dev/null 2>&1 &&
        lvseg insert enc.img 0 encvg.txt secret o-secret.img || fail "enc: LUKS2 in secret"
    backup enc enc.img
    check "status 0 ($(cat enc.s): $(head -c 300 enc.err))" [ "$(cat enc.s)" -eq 0 ]
    check "-v: encvg/secret read whole, encrypted ($(grep -F encvg/secret enc.err))" \
        sh -c "grep -F encvg/secret enc.err | grep -q 'crypto_LUKS.*read whole: an encrypted volume'"
    lvseg extract enc-r.img 0 encvg.txt secret r-secret.img
    check "secret: every byte restored" cmp -s o-secret.img r-secret.img
    mapped enc encvg.txt data
    mapped enc encvg.txt READ
    "$SPIGZ" --estimate --free=zero enc.img > enc.est 2>&1
    check "--estimate: the encrypted LV named ($(grep encrypted enc.est))" \
        grep -q 'encrypted   LV encvg/secret (crypto_LUKS, 16.0 MiB)' enc.est
    "$SPIGZ" --estimate --free=zero --format=json enc.img > enc.json 2> /dev/null
    check "--estimate --format=json: the volume encrypted" "$PY3" -c '
import json, sys
d = json.load(open("enc.json"))
v = [v for L in d["layouts"] for p in L["partitions"] for v in p.get("volumes", [])]
s = [x for x in v if x["name"] == "encvg/secret"]
sys.exit(not (s and s[0]["encrypted"] and not s[0]["mapped"] and
              any(x["name"] == "encvg/data" and x["mapped"] for x in v)))'
    "$SPIGZ" --estimate --free=zero --format=kv enc.img > enc.kv 2> /dev/null
    check "--estimate --format=kv: encrypted= names the LV ($(grep '^encrypted=' enc.kv))" \
        grep -q '^encrypted=1:0:crypto_LUKS:16777216:encvg/secret$' enc.kv
    "$SPIGZ" -l --format=json enc.gz > enc.l.json
    check "the manifest: the LV encrypted, read whole" "$PY3" -c '
import json, sys
lv = json.load(open("enc.l.json"))["manifest"]["part"]["0"]["lv"].values()
s = [v for v in lv if v["name"] == "encvg/secret"]
sys.exit(not (s and s[0].get("encrypted") == 1 and "encrypted" in s[0].get("read-whole", "")))'
else
    echo "NOTE: cryptsetup missing: the encrypted LV is not checked"
fi
[ -n "${KEEP_T:-}" ] && cp -a "$T" "$KEEP_T"
finish

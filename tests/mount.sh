#!/bin/bash
# mount.sh — --mount BACKUP DIR: a backup read as files without restoring
# it.  A GPT disk holding ext4, FAT32, exFAT and NTFS, and an MBR disk with
# logical partitions, are backed up and mounted: DIR/disk equals the image,
# DIR/pN each partition, named as the kernel names them; every file of each
# filesystem reads back with its sha256 through the kernel (loop mounts,
# where the machine has the filesystem) and through the user-space tools
# (fuse2fs, mtools, ntfs-3g on DIR/pN; mount.exfat-fuse, which wants a
# block device, on a loop device over it).  Concurrent
# readers at random offsets and sizes, uncached (O_DIRECT), equal the image;
# SEEK_HOLE finds the zero runs and `cp --sparse=always` keeps them holes.
# A damaged piece fails with EIO on exactly its range and is logged naming
# it, every other range reads; a backup cut or overwritten while mounted
# fails with EIO, never a wrong byte; one renamed over keeps being served
# from the file that was mounted.  A pigz backup mounts after its index
# pass (--progress accepted: its line needs a pass longer than half a
# second, which progress.sh's inputs give), the index saved beside it (or at --index-file),
# reused, refused when the file changed; damaged after the pass, it reads
# EIO, never other bytes.  The daemon, -f, SIGTERM, two mounts at once, and
# the errors (status 1, nothing mounted).
#
# Needs /dev/fuse and fusermount3: without them, SKIP (77), saying so.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fslib.sh"
if ! "$SPIGZ" -V | grep -q '^--mount: libfuse3'; then
    "$SPIGZ" --mount "$0" "$T" 2> "$T/err"; s=$?
    check "--mount in a build without libfuse3: status $s, expected 1" [ "$s" -eq 1 ]
    check "--mount in a build without libfuse3: says so" grep -q "not in this build" "$T/err"
    echo "$(basename "$0"): $CHECKS checks, $FAILS failed; SKIP: this spigz has no --mount"
    [ "$FAILS" -eq 0 ] && exit 77
    exit 1
fi
if [ ! -c /dev/fuse ] || ! command -v fusermount3 >/dev/null; then
    echo "SKIP: no /dev/fuse or fusermount3 here: --mount not checked"
    exit 77
fi
need python3 sfdisk mke2fs mkfs.vfat mcopy mkfs.exfat mount.exfat-fuse mkntfs ntfscp ntfs-3g \
    fuse2fs cmp sha256sum
cd "$T" || exit 1
S=512
mkdir src mnt m m2
fs_mounted "$T/mnt"
fs_mounted "$T/m"
fs_mounted "$T/m2"
"$PY3" - <<'EOF'
import random
r = random.Random(24)
for i in range(12):
    open(f"src/f{i}.bin", "wb").write(r.randbytes(r.randrange(1, 300_000)))
open("src/text.txt", "w").write("the quick brown fox\n" * 5000)
EOF
(cd src && sha256sum -- *) > sums

# ---- the mount's own helpers ----
# mount_fg BACKUP DIR ERRLOG [OPTION...]: --mount -f in the background,
# FG_PID its process; returns once DIR is mounted, or 1 when the command
# ended first (its status then in FG_RC).
mount_fg() {
    local b=$1 d=$2 log=$3 i
    shift 3
    timeout "$HANG" "$SPIGZ" --mount -f "$@" "$b" "$d" 2> "$log" &
    FG_PID=$!
    for i in $(seq 3000); do
        mountpoint -q "$d" && return 0
        kill -0 "$FG_PID" 2>/dev/null || { wait "$FG_PID"; FG_RC=$?; return 1; }
        sleep 0.05
    done
    return 1
}
# umount_fg DIR: unmount, and FG_RC the foreground command's status
umount_fg() {
    fusermount3 -u "$1" || fail "fusermount3 -u $1"
    wait "$FG_PID"
    FG_RC=$?
}
# not COMMAND...: COMMAND fails (for check)
not() { ! "$@"; }
# sums_ok DIR WHAT: every file of src reads back from DIR, sha256 equal
sums_ok() { (cd "$1" && sha256sum -c --quiet "$T/sums") > /dev/null 2>&1 || fail "$2: sha256"; pass; }
# slice_ok FILE IMG OFF LEN WHAT: FILE holds IMG's bytes [OFF, OFF+LEN)
slice_ok() {
    check "$5: size" [ "$(stat -c %s "$1")" -eq "$4" ]
    check "$5: content" cmp -s "$1" <(tail -c +$(($3 + 1)) "$2" | head -c "$4")
}

# ---- a GPT disk: ext4, FAT32, exFAT, NTFS, and a long zero run ----
section "a GPT disk with four filesystems"
mkfs_ext p1.img 16 src -t ext4
mkfs_fat p2.img 40 src -F 32
stale p3.img 8
mkfs.exfat p3.img >/dev/null || fail "mkfs.exfat"
with_fuse p3.img mount.exfat-fuse rw mnt cp src/* mnt/
case $? in 0) ;; *) fail "files into the exFAT volume" ;; esac
mkfs_ntfs p4.img 8
ntfs_put p4.img src f{0..11}.bin text.txt
truncate -s 160M gpt.img
printf 'label: gpt\nstart=2048, size=%d\nsize=%d\nsize=%d\nstart=%d, size=%d\n' \
    $((16 << 11)) $((40 << 11)) $((8 << 11)) $((140 << 11)) $((8 << 11)) | sfdisk -q gpt.img \
    || fail "sfdisk gpt"
P_OFF=(0 2048 $((2048 + (16 << 11))) $((2048 + (56 << 11))) $((140 << 11)))
P_LEN=(0 $((16 << 11)) $((40 << 11)) $((8 << 11)) $((8 << 11)))
for i in 1 2 3 4; do put gpt.img "p$i.img" "${P_OFF[$i]}"; done
"$SPIGZ" -k -q gpt.img || fail "compress gpt.img"

section "mounted: disk, p1..p4, the files through the kernel and the tools"
"$SPIGZ" --mount gpt.img.gz m; s=$?
check "--mount (daemon): status $s" [ "$s" -eq 0 ]
check "--mount (daemon): mounted when it returns" mountpoint -q m
names() { find "$1" -mindepth 1 -printf '%f\n' | sort | tr '\n' ' '; }
check "the files: $(names m)" [ "$(names m)" = "disk p1 p2 p3 p4 " ]
slice_ok m/disk gpt.img 0 $((160 << 20)) "disk"
for i in 1 2 3 4; do
    slice_ok "m/p$i" gpt.img $((P_OFF[i] * S)) $((P_LEN[i] * S)) "p$i"
done
check "files are read-only" [ "$(stat -c %a m/disk)" = 444 ]
if ( : >> m/disk ) 2>/dev/null; then fail "disk opened for writing"; else pass; fi
# the kernel's filesystems, on a loop device over DIR/pN, where it has them
for i in 1 2 3; do
    t=$(case $i in 1) echo ext4 ;; 2) echo vfat ;; 3) echo exfat ;; esac)
    if loop_attach dev -r "m/p$i"; then
        if mount -t "$t" -o ro "$dev" mnt 2>/dev/null; then
            sums_ok mnt "p$i ($t, kernel, loop)"
            umount mnt
        else
            echo "NOTE: the kernel here does not mount $t: p$i checked by the tools only"
        fi
        loop_detach "$dev"
    else
        fail "losetup -r m/p$i"
    fi
done
# the user-space tools, on DIR/pN itself (containers have no loop devices)
if fuse2fs -o ro,fakeroot m/p1 mnt >/dev/null 2>&1; then
    sums_ok mnt "p1 (ext4, fuse2fs)"
    fusermount3 -u mnt
else
    fail "fuse2fs m/p1"
fi
rm -rf got && mkdir got && mcopy -n -i m/p2 '::*' got/ && sums_ok got "p2 (FAT32, mtools)" \
    || fail "mcopy from m/p2"
# mount.exfat-fuse wants a block device when run as root: a loop device
with_fuse m/p3 mount.exfat-fuse ro mnt sums_ok mnt "p3 (exFAT, mount.exfat-fuse)"
case $? in 0) ;; 125) fail "losetup m/p3" ;; *) fail "mount.exfat-fuse on m/p3" ;; esac
if ntfs-3g -o ro m/p4 mnt >/dev/null 2>&1; then
    sums_ok mnt "p4 (NTFS, ntfs-3g)"
    fusermount3 -u mnt
else
    fail "ntfs-3g m/p4"
fi

section "random reads at once, uncached; SEEK_HOLE; cp --sparse"
"$PY3" - m/disk gpt.img <<'EOF' || fail "concurrent O_DIRECT reads differ from the image"
import mmap, os, random, sys, threading
path, img = sys.argv[1], open(sys.argv[2], "rb").read()
bad = []
def reader(seed):
    r = random.Random(seed)
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    buf = mmap.mmap(-1, 1 << 20)
    for _ in range(150):
        n = r.choice([4096, 8192, 65536, 1 << 20])
        off = r.randrange(0, len(img) - n) & ~4095
        got = os.preadv(fd, [memoryview(buf)[:n]], off)
        if got != n or buf[:n] != img[off:off + n]:
            bad.append((off, n, got))
    os.close(fd)
ts = [threading.Thread(target=reader, args=(s,)) for s in range(6)]
for t in ts: t.start()
for t in ts: t.join()
sys.exit(1 if bad else 0)
EOF
pass
# the zero runs the index holds, merged, against SEEK_DATA/SEEK_HOLE
"$PY3" "$srcdir/tests/py/spz.py" info gpt.img.gz > pieces
"$PY3" - m/disk pieces <<'EOF' || fail "SEEK_DATA/SEEK_HOLE differ from the index's zero runs"
import os, sys
want, end = [], 0
for line in open(sys.argv[2]):
    f = line.split()
    if f[0] != "piece":
        continue
    kv = dict(x.split("=") for x in f[3:])
    uoff, ulen = int(kv["uoff"]), int(kv["ulen"])
    end = uoff + ulen
    if f[2] == "data":
        if want and want[-1][1] == uoff:
            want[-1][1] = end
        else:
            want.append([uoff, end])
fd = os.open(sys.argv[1], os.O_RDONLY)
got, at = [], 0
while True:
    try:
        d = os.lseek(fd, at, os.SEEK_DATA)
    except OSError:
        break
    h = os.lseek(fd, d, os.SEEK_HOLE)
    got.append([d, h])
    at = h
print("data runs:", len(got), "expected:", len(want), file=sys.stderr)
sys.exit(0 if got == want and len(want) > 1 else 1)
EOF
pass
cp --sparse=always m/disk sparse.img || fail "cp --sparse=always"
check "cp --sparse=always: equal" cmp -s sparse.img gpt.img
check "cp --sparse=always: holes kept ($(du -k sparse.img | cut -f1) KiB of $((160 << 10)))" \
    [ "$(du -k sparse.img | cut -f1)" -lt $((100 << 10)) ]
rm -f sparse.img

section "two mounts at once; the daemon ends at fusermount3 -u"
cp gpt.img.gz other.gz
"$SPIGZ" --mount other.gz m2 || fail "a second mount"
check "two mounts: both read" cmp -s m/p2 m2/p2
for d in m m2; do
    fusermount3 -u "$d" || fail "fusermount3 -u $d"
done
for i in $(seq 600); do
    pgrep -f "spigz --mount (gpt.img|other).gz" > /dev/null || break
    sleep 0.05
done
check "the daemons ended after fusermount3 -u" not pgrep -f "spigz --mount (gpt.img|other).gz"

# ---- an MBR disk with logical partitions ----
section "an MBR disk: p1, and logicals p5 p6"
mkfs_fat l5.img 4 src
mkfs_ext l6.img 4 src -t ext2
truncate -s 24M mbr.img
printf 'label: dos\nstart=2048, size=4096, type=83\nstart=8192, type=5\nstart=10240, size=8192, type=c\nstart=20480, size=8192, type=83\n' \
    | sfdisk -q mbr.img || fail "sfdisk mbr"
put mbr.img l5.img 10240
put mbr.img l6.img 20480
"$SPIGZ" -k -q mbr.img || fail "compress mbr.img"
if mount_fg mbr.img.gz m log; then
    check "MBR: the files: $(names m)" [ "$(names m)" = "disk p1 p5 p6 " ]
    slice_ok m/p5 mbr.img $((10240 * S)) $((8192 * S)) "p5"
    slice_ok m/p6 mbr.img $((20480 * S)) $((8192 * S)) "p6"
    rm -rf got && mkdir got && mcopy -n -i m/p5 '::*' got/ && sums_ok got "p5 (FAT, mtools)" \
        || fail "mcopy from m/p5"
    umount_fg m
    check "-f: status $FG_RC after fusermount3 -u" [ "$FG_RC" -eq 0 ]
else
    fail "--mount -f mbr.img.gz: $(cat log)"
fi

# ---- trust: damage, truncation, replacement ----
section "a damaged piece: EIO on exactly its range, logged; the rest reads"
# the longest data piece of the disk with a data or zero piece on each side
read -r P_UOFF P_ULEN P_FOFF P_CLEN < <("$PY3" - pieces <<'EOF'
best = None
rows = [dict(x.split("=") for x in l.split()[3:]) | {"kind": l.split()[2]}
        for l in open("pieces") if l.startswith("piece")]
for k in range(1, len(rows) - 1):
    p = rows[k]
    if p["kind"] == "data" and int(p["ulen"]) >= 16384 and (best is None or int(p["ulen"]) > int(best["ulen"])):
        best = p
print(best["uoff"], best["ulen"], best["foff"], best["clen"])
EOF
)
cp gpt.img.gz dmg.gz
printf '\x55' | dd of=dmg.gz bs=1 seek=$((P_FOFF + P_CLEN / 2)) conv=notrunc status=none
# dread FILE OFF LEN: LEN bytes at OFF read past the page cache, equal to
# the image's; status 1 on EIO, 2 on different bytes
dread() {
    "$PY3" - "$@" <<'EOF'
import mmap, os, sys
f, off, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
fd = os.open(f, os.O_RDONLY | os.O_DIRECT)
buf = mmap.mmap(-1, n)
try:
    got = os.preadv(fd, [buf], off)
except OSError as e:
    sys.exit(1 if e.errno == 5 else 3)
with open("gpt.img", "rb") as g:
    g.seek(off)
    sys.exit(0 if got == n and buf[:n] == g.read(n) else 2)
EOF
}
if mount_fg dmg.gz m log; then
    dread m/disk $((P_UOFF - 4096)) 4096; s=$?
    check "the 4 KiB before the damaged piece read (status $s)" [ "$s" -eq 0 ]
    dread m/disk "$P_UOFF" 4096; s=$?
    check "the damaged piece's first 4 KiB: EIO (status $s)" [ "$s" -eq 1 ]
    dread m/disk $((P_UOFF + P_ULEN - 4096)) 4096; s=$?
    check "the damaged piece's last 4 KiB: EIO (status $s)" [ "$s" -eq 1 ]
    dread m/disk $((P_UOFF + P_ULEN)) 4096; s=$?
    check "the 4 KiB after the damaged piece read (status $s)" [ "$s" -eq 0 ]
    dread m/disk $((P_UOFF - 4096)) 65536; s=$?
    check "a read across the damaged piece's start: EIO (status $s)" [ "$s" -eq 1 ]
    if cmp -s m/disk gpt.img 2>/dev/null; then fail "a damaged backup read whole"; else pass; fi
    umount_fg m
    check "-f after failed reads: status $FG_RC, expected 1" [ "$FG_RC" -eq 1 ]
    range="$P_UOFF"
    check "the log names the damaged range ($(head -c 300 log))" grep -q "$range" log
    check "the log says it once per range ($(grep -c "$range" log) lines)" \
        [ "$(grep -c "$range" log)" -le 2 ]
else
    fail "--mount -f dmg.gz: $(cat log)"
fi

section "a damaged zero piece: EIO on its range, never zeros"
# Zero runs are answered without inflating (spliced from a hole), only
# after their pieces passed the check.  The longest zero piece, its
# encoding's middle changed.
read -r Z_UOFF Z_ULEN Z_FOFF Z_CLEN < <("$PY3" - pieces <<'EOF'
rows = [dict(x.split("=") for x in l.split()[3:]) | {"kind": l.split()[2]}
        for l in open("pieces") if l.startswith("piece")]
z = max((p for p in rows[1:-1] if p["kind"] == "zero"), key=lambda p: int(p["ulen"]))
print(z["uoff"], z["ulen"], z["foff"], z["clen"])
EOF
)
cp gpt.img.gz zdmg.gz
printf '\x55' | dd of=zdmg.gz bs=1 seek=$((Z_FOFF + Z_CLEN / 2)) conv=notrunc status=none
if mount_fg zdmg.gz m log; then
    dread m/disk "$Z_UOFF" 4096; s=$?
    check "the damaged zero piece's first 4 KiB: EIO (status $s)" [ "$s" -eq 1 ]
    dread m/disk $((Z_UOFF + Z_ULEN / 2 / 4096 * 4096)) 1032192; s=$?
    check "a long read in the damaged zero piece: EIO (status $s)" [ "$s" -eq 1 ]
    dread m/disk $((Z_UOFF + Z_ULEN)) 4096; s=$?
    check "the 4 KiB after the damaged zero piece read (status $s)" [ "$s" -eq 0 ]
    # a reader without O_DIRECT, and a private mapping, get the same answers
    if dd if=m/disk bs=1M skip=$((Z_UOFF / 1048576 + 1)) count=1 status=none > /dev/null 2>&1; then
        fail "dd of the damaged zero piece read"
    else pass; fi
    "$PY3" - m/disk gpt.img $((Z_UOFF + Z_ULEN)) <<'EOF'; s=$?
import mmap, sys
off = int(sys.argv[3]) // 4096 * 4096
with open(sys.argv[1], "rb") as f, open(sys.argv[2], "rb") as g:
    m = mmap.mmap(f.fileno(), 65536, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ, offset=off)
    g.seek(off)
    sys.exit(0 if m[:] == g.read(65536) else 2)
EOF
    check "a private mapping past it reads the image's bytes (status $s)" [ "$s" -eq 0 ]
    umount_fg m
    check "-f after failed zero reads: status $FG_RC, expected 1" [ "$FG_RC" -eq 1 ]
else
    fail "--mount -f zdmg.gz: $(cat log)"
fi

section "a damaged partition table: disk only, a warning"
P0_FOFF=$(awk '$1 == "piece" && $2 == 0 { for (i = 3; i <= NF; i++) if ($i ~ /^foff=/) print substr($i, 6) }' pieces)
cp gpt.img.gz dmg0.gz
printf '\x55\x55\x55\x55' | dd of=dmg0.gz bs=1 seek=$((P0_FOFF + 40)) conv=notrunc status=none
if mount_fg dmg0.gz m log; then
    check "piece 0 damaged: the files: $(names m)" [ "$(names m)" = "disk " ]
    check "piece 0 damaged: warned ($(head -c 300 log))" grep -q "partition table may be unreadable" log
    dread m/disk 0 4096; s=$?
    check "piece 0 damaged: its bytes are EIO (status $s)" [ "$s" -eq 1 ]
    dread m/disk "$((P_OFF[1] * S))" 4096; s=$?
    check "piece 0 damaged: p1's bytes read (status $s)" [ "$s" -eq 0 ]
    umount_fg m
    check "piece 0 damaged: status $FG_RC, expected 1" [ "$FG_RC" -eq 1 ]
else
    fail "--mount -f dmg0.gz: $(cat log)"
fi

section "a backup cut, overwritten or renamed over while mounted"
cp gpt.img.gz cut.gz
if mount_fg cut.gz m log; then
    truncate -s $((P_FOFF + 10)) cut.gz
    dread m/disk "$P_UOFF" 4096; s=$?
    check "cut while mounted: EIO (status $s)" [ "$s" -eq 1 ]
    dread m/disk $((150 << 20)) 4096; s=$?
    check "cut while mounted, a later piece: EIO (status $s)" [ "$s" -eq 1 ]
    umount_fg m
else
    fail "--mount -f cut.gz: $(cat log)"
fi
# another backup of the same size written over the mounted one, in place
cp gpt.img alt.img
printf 'other content' | dd of=alt.img bs=1 seek=$((P_UOFF + 100)) conv=notrunc status=none
"$SPIGZ" -c -q alt.img > alt.gz
cp gpt.img.gz over.gz
if mount_fg over.gz m log; then
    if [ "$(stat -c %s alt.gz)" -eq "$(stat -c %s over.gz)" ]; then
        dd if=alt.gz of=over.gz conv=notrunc status=none
        dread m/disk "$P_UOFF" 4096; s=$?
        check "overwritten in place while mounted: EIO or the old bytes, never others (status $s)" \
            [ "$s" -eq 1 ] || [ "$s" -eq 0 ]
    else
        cat alt.gz > over.gz
        dread m/disk "$P_UOFF" 4096; s=$?
        check "rewritten with another size while mounted: EIO (status $s)" [ "$s" -eq 1 ]
    fi
    umount_fg m
else
    fail "--mount -f over.gz: $(cat log)"
fi
cp gpt.img.gz ren.gz
if mount_fg ren.gz m log; then
    mv alt.gz ren.gz
    dread m/disk "$P_UOFF" 4096; s=$?
    check "renamed over while mounted: the mounted file's bytes (status $s)" [ "$s" -eq 0 ]
    umount_fg m
    check "renamed over: status $FG_RC" [ "$FG_RC" -eq 0 ]
else
    fail "--mount -f ren.gz: $(cat log)"
fi

section "a pigz backup: its gzip index built, saved, reused, refused when the file changed"
pigz -c gpt.img > pz.gz || fail "pigz"
# whole_ok FILE: every 1 MiB of FILE, read past the page cache, is the
# image's or EIO (printed: the number of EIO chunks); never other bytes
whole_ok() {
    "$PY3" - "$1" gpt.img <<'EOF'
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
img = open(sys.argv[2], "rb")
buf = mmap.mmap(-1, 1 << 20)
eio = off = 0
while True:
    want = img.read(1 << 20)
    if not want:
        break
    try:
        got = os.preadv(fd, [buf], off)
    except OSError as e:
        if e.errno != 5:
            raise
        eio += 1
    else:
        if buf[:got] != want:
            sys.exit("other bytes at %d" % off)
    off += len(want)
print(eio)
EOF
}
if mount_fg pz.gz m log -v --progress; then
    check "pigz: the files: $(names m)" [ "$(names m)" = "disk p1 p2 p3 p4 " ]
    check "pigz: disk equals the image" cmp -s m/disk gpt.img
    slice_ok m/p2 gpt.img $((P_OFF[2] * S)) $((P_LEN[2] * S)) "pigz: p2"
    umount_fg m
    check "pigz: status $FG_RC" [ "$FG_RC" -eq 0 ]
    check "pigz: index built and saved ($(head -c 300 log))" \
        grep -q "gzip index built (no saved index); saved as pz.gz.gzx" log
    check "pigz: the index saved beside it" test -s pz.gz.gzx
else
    fail "--mount -f pz.gz: $(cat log)"
fi
if mount_fg pz.gz m log -v; then
    slice_ok m/p4 gpt.img $((P_OFF[4] * S)) $((P_LEN[4] * S)) "pigz again: p4"
    umount_fg m
    check "pigz again: the saved index loaded ($(head -c 300 log))" grep -q "gzip index loaded from the saved index" log
else
    fail "--mount -f pz.gz (again): $(cat log)"
fi
touch -d '2001-01-01' pz.gz
if mount_fg pz.gz m log -v; then
    check "pigz, its time changed: reads" cmp -s m/disk gpt.img
    umount_fg m
    check "pigz, its time changed: the saved index refused, built again ($(head -c 300 log))" \
        grep -q "gzip index built (the file was modified since the index was made); saved as pz.gz.gzx" log
else
    fail "--mount -f pz.gz (touched): $(cat log)"
fi
# As a daemon: the partition table is read before the daemon forks, and
# read-ahead threads started then would not exist in it (its exit waited
# for them forever); the daemon reads ahead after the fork and ends at
# fusermount3 -u.
"$SPIGZ" --mount pz.gz m || fail "--mount pz.gz (daemon)"
check "pigz, daemon: disk equals the image" cmp -s m/disk gpt.img
fusermount3 -u m || fail "fusermount3 -u m (pigz daemon)"
for i in $(seq 600); do
    pgrep -f "spigz --mount pz.gz m" > /dev/null || break
    sleep 0.05
done
check "pigz, daemon: it ended after fusermount3 -u" not pgrep -f "spigz --mount pz.gz m"
pkill -9 -f "spigz --mount pz.gz m"
mkdir idx
if mount_fg pz.gz m log -v --index-file=idx/pz.index; then
    umount_fg m
    check "--index-file: saved there ($(head -c 300 log))" test -s idx/pz.index
else
    fail "--mount -f --index-file: $(cat log)"
fi
# --index-file naming the backup itself, or a link to it: the index is not
# saved over it (it replaced the backup before), the mount still reads
cp -p pz.gz self.gz
ln self.gz self-link.gz
cp self.gz self.orig
for ix in self.gz self-link.gz; do
    if mount_fg self.gz m log -v --index-file="$ix"; then
        check "--index-file=$ix (the backup): reads" cmp -s m/disk gpt.img
        umount_fg m
        check "--index-file=$ix (the backup): not saved, said ($(head -c 300 log))" \
            grep -q "not saved: $ix is the gzip file itself" log
    else
        fail "--mount -f --index-file=$ix: $(cat log)"
    fi
    check "--index-file=$ix (the backup): the backup intact" cmp -s self.gz self.orig
done
rm -f self.gz self-link.gz self.orig
# damaged after the index was built, its time kept: EIO, never other bytes
cp -p pz.gz pzd.gz
cp -p pz.gz.gzx pzd.gz.gzx
printf '\x55\x55' | dd of=pzd.gz bs=1 seek=$(($(stat -c %s pzd.gz) / 3)) conv=notrunc status=none
touch -r pz.gz pzd.gz
if mount_fg pzd.gz m log -v; then
    check "pigz damaged: the saved index loaded ($(head -c 200 log))" grep -q "loaded from the saved index" log
    n=$(whole_ok m/disk) || fail "pigz damaged: a read returned other bytes than the image's"
    check "pigz damaged: some reads EIO (${n:-?} MiB)" [ "${n:-0}" -gt 0 ]
    umount_fg m
    check "pigz damaged: status $FG_RC, expected 1" [ "$FG_RC" -eq 1 ]
else
    fail "--mount -f pzd.gz: $(cat log)"
fi

section "SIGTERM ends a mount cleanly"
if mount_fg gpt.img.gz m log; then
    kill -TERM "$FG_PID"
    wait "$FG_PID"; s=$?
    check "SIGTERM: status $s" [ "$s" -eq 0 ]
    check "SIGTERM: unmounted" not mountpoint -q m
else
    fail "--mount -f gpt.img.gz: $(cat log)"
fi
# A second SIGTERM while the mount is ending (timeout(1) and systemd send
# one to the process and another to its group) once met the default action
# once libfuse's handlers were gone: status 143, the mount left behind.  A
# storm of them, sent to spigz itself until it has gone, covers the whole
# teardown: the status must be 0 however they fall.
if mount_fg gpt.img.gz m log; then
    pid=$(pgrep -P "$FG_PID" | head -n 1)
    if [ -n "$pid" ]; then
        while kill -TERM "$pid" 2>/dev/null; do :; done
        wait "$FG_PID"; s=$?
        check "SIGTERM storm: status $s" [ "$s" -eq 0 ]
        check "SIGTERM storm: unmounted" not mountpoint -q m
    else
        fail "SIGTERM storm: no spigz under timeout $FG_PID"
    fi
else
    fail "--mount -f gpt.img.gz: $(cat log)"
fi

section "errors: status 1, a message, nothing mounted"
# err_case WHAT WANT-IN-MESSAGE ARG...
err_case() {
    local what=$1 want=$2
    shift 2
    "$SPIGZ" --mount "$@" 2> err; s=$?
    check "$what: status $s, expected 1" [ "$s" -eq 1 ]
    check "$what: says '$want' ($(head -c 200 err))" grep -q "$want" err
    check "$what: nothing mounted" not mountpoint -q m
    check "$what: nothing mounted on a file" not mountpoint -q pieces
}
err_case "no such backup" "No such file" nonesuch.gz m
printf 'not gzip at all\n' > plain.txt
err_case "a file that is not gzip" "plain.txt" plain.txt m
err_case "DIR not a directory" "cannot mount" gpt.img.gz pieces
err_case "one operand" "takes a backup and the directory" gpt.img.gz
err_case "a directory as the backup" "not a regular file" src m
finish

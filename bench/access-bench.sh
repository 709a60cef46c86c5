#!/usr/bin/env bash
# access-bench.sh — opening a backup without restoring it, side by side in
# one run: spigz --mount (and the nbdkit plugin, when built) against
# Python's indexed_gzip, gztool, nbdkit's gzip filter and a compressed
# qcow2 of the same disk read by qemu.
#
# usage: bench/access-bench.sh [--dir DIR] [--spigz PATH] [--plugin SO] [--reads N] [--out FILE]
#                               [--prepare]   (only make the disk and its backups)
#
# The disk (made once in DIR, default $BENCH_DIR or /var/tmp/spigz-bench;
# about 5 minutes and 9 GB): access-disk.img, 16 GiB, GPT: p1 a 4 GiB ext4
# (mkimages.sh's ext4-usr.img: 600 MB of /usr, plus big.bin, 100 MB of
# data.img), p2 a 2 GiB NTFS (big.bin and /usr/share/doc's files), the
# rest zeros.  Backed up by spigz -6 (access-disk.spigz.gz), spigz -6 -b 128
# (access-disk.b128.spigz.gz: 128 KiB pieces, for the random reads) and
# pigz -6 (access-disk.pigz.gz), and converted by qemu-img to a compressed qcow2.
# Every backup is in the page cache before each row, as in bench.sh.
#
# Rows (wall time of one run each unless said; the content checked):
#   first byte: from the command to 4 KiB of p2 read (our backup; the pigz
#       one through its index pass, first and with the index saved);
#   one file out: big.bin copied out of p1 (ext4, a loop mount of DIR/p1)
#       and p2 (NTFS, ntfs-3g on DIR/p2), mount included, against spigz -d
#       then the same mount and copy; ls -R of each;
#   sequential: cat DIR/disk, nbdcopy from the plugin, spigz -dc;
#   random 4 KiB reads in p1, N of them (default 2000; indexed_gzip a
#       fortieth as many, each costing it up to 4 MiB of inflate), uncached (a fresh
#       mount) and again (cached): IOPS, p50 and p99 latency; the mount
#       also on the -b 128 backup;
#   memory: the mount's peak RSS with the default cache.
# Needs root (loop devices, mounts), pigz, python3's indexed_gzip and nbd
# modules, gztool, nbdkit, qemu-img, qemu-io, qemu-nbd, ntfs-3g, mkntfs.
{
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
top=$(cd "$here/.." && pwd -P)
dir=${BENCH_DIR:-/var/tmp/spigz-bench} spigz=$top/spigz plugin=$top/nbdkit-spigz-plugin.so
reads=2000 out='' prepare=''
while [ $# -gt 0 ]; do
    case $1 in
    --dir) dir=$2; shift 2 ;;
    --spigz) spigz=$2; shift 2 ;;
    --plugin) plugin=$2; shift 2 ;;
    --reads) reads=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --prepare) prepare=1; shift ;;
    *) echo "usage: $0 [--dir DIR] [--spigz PATH] [--plugin SO] [--reads N] [--out FILE]" >&2
       exit 2 ;;
    esac
done
PY=/usr/bin/python3 # Debian's, with indexed_gzip and nbd
for t in pigz gztool nbdkit qemu-img qemu-io qemu-nbd ntfs-3g mkntfs ntfscp sfdisk debugfs \
    fusermount3 nbdcopy; do
    command -v "$t" >/dev/null || { echo "access-bench: $t is needed" >&2; exit 1; }
done
"$PY" -c 'import indexed_gzip, nbd' ||
    { echo "access-bench: python3-indexed-gzip and python3-libnbd are needed" >&2; exit 1; }
[ -x "$spigz" ] || { echo "access-bench: $spigz is not built" >&2; exit 1; }
"$spigz" -V | grep -q '^--mount: libfuse3' || { echo "access-bench: $spigz has no --mount" >&2; exit 1; }
[ -f "$plugin" ] || plugin=
G=$((1 << 30)) M=$((1 << 20))
P1=$M P1LEN=$((4 * G)) P2=$((M + 4 * G)) P2LEN=$((2 * G))
img=$dir/access-disk.img ours=$dir/access-disk.spigz.gz theirs=$dir/access-disk.pigz.gz
qcow=$dir/access-disk.qcow2
small=$dir/access-disk.b128.spigz.gz # -b 128: pieces of 128 KiB, for random reads
work=$(mktemp -d "${TMPDIR:-/tmp}/spigz-access.XXXXXX")
mnt=$work/m
mkdir -p "$mnt" "$work/a" "$work/b"
cleanup() {
    for d in "$work/a" "$work/b" "$mnt"; do mountpoint -q "$d" && umount "$d"; done
    losetup -j "$img" -O NAME -n 2>/dev/null | xargs -r -n1 losetup -d
    rm -rf "$work"
}
trap cleanup EXIT

# ---- the disk, made once ----
if [ ! -f "$img" ] || [ ! -f "$dir/.access-disk.stamp" ]; then
    [ -f "$dir/ext4-usr.img" ] && [ -f "$dir/data.img" ] ||
        "$here/mkimages.sh" --dir "$dir" --only ext4-usr,data
    echo "access-bench: making $img (once)"
    head -c $((100 * M)) "$dir/data.img" > "$work/big.bin"
    cp --sparse=always "$dir/ext4-usr.img" "$work/p1.img"
    debugfs -w -R "write $work/big.bin big.bin" "$work/p1.img" >/dev/null 2>&1
    truncate -s "$P2LEN" "$work/p2.img"
    mkntfs -Q -F -q "$work/p2.img" >/dev/null 2>&1
    ntfs-3g "$work/p2.img" "$work/a"
    cp "$work/big.bin" "$work/a/" && cp -r /usr/share/doc "$work/a/doc" 2>/dev/null || true
    umount "$work/a"
    rm -f "$img.tmp" && truncate -s $((16 * G)) "$img.tmp"
    printf 'label: gpt\nstart=%d, size=%d\nstart=%d, size=%d\n' $((P1 / 512)) $((P1LEN / 512)) \
        $((P2 / 512)) $((P2LEN / 512)) | sfdisk -q "$img.tmp"
    dd if="$work/p1.img" of="$img.tmp" bs=1M seek=$((P1 / M)) conv=notrunc,sparse status=none
    dd if="$work/p2.img" of="$img.tmp" bs=1M seek=$((P2 / M)) conv=notrunc,sparse status=none
    rm -f "$work/p1.img" "$work/p2.img" "$ours" "$theirs" "$qcow"
    mv "$img.tmp" "$img"
    echo "access-disk v1: GPT 16G, p1 ext4-usr + big.bin, p2 NTFS 2G big.bin + doc" \
        > "$dir/.access-disk.stamp"
fi
[ -f "$ours" ] || "$spigz" -6 -c "$img" > "$ours"
[ -f "$small" ] || "$spigz" -6 -b 128 -c "$img" > "$small"
[ -f "$theirs" ] || pigz -6 -c "$img" > "$theirs"
[ -f "$qcow" ] || qemu-img convert -c -f raw -O qcow2 "$img" "$qcow"
[ -f "$work/big.bin" ] || head -c $((100 * M)) "$dir/data.img" > "$work/big.bin"
[ -z "$prepare" ] || exit 0

# ---- helpers ----
now() { date +%s.%N; }
since() { printf '%.3f' "$(echo "$(now) - $1" | bc)"; }
report() { printf '%-58s %s\n' "$1" "$2" | tee -a "${out:-/dev/null}"; }
warm() { cat "$@" > /dev/null; }
mount_ours() { "$spigz" --mount "$1" "$mnt"; }
unmount_ours() {
    fusermount3 -u "$mnt"
    while pgrep -f "spigz --mount $1 $mnt" > /dev/null; do sleep 0.05; done
}
[ -n "$out" ] && : > "$out"
echo "access-bench: $(nproc) CPUs, $(date -u +%F), $(stat -c %s "$ours") B ours," \
    "$(stat -c %s "$small") B ours at -b 128, $(stat -c %s "$theirs") B pigz, $(stat -c %s "$qcow") B qcow2" | tee -a "${out:-/dev/null}"

# ---- first byte of p2 ----
echo "== first 4 KiB of p2 (at $P2), from the command" | tee -a "${out:-/dev/null}"
want=$(dd if="$img" bs=4096 skip=$((P2 / 4096)) count=1 status=none | sha256sum)
same() { [ "$(sha256sum)" = "$want" ] || { echo "access-bench: $1 read other bytes" >&2; exit 1; }; }
warm "$ours"
t=$(now); mount_ours "$ours"; dd if="$mnt/p2" bs=4096 count=1 status=none | same mount; report "spigz --mount (spigz backup)" "$(since "$t") s"
unmount_ours "$ours"
if "$spigz" --mount "$theirs" "$mnt" 2>/dev/null; then
    unmount_ours "$theirs"
    rm -f "$theirs.gzx"
    warm "$theirs"
    t=$(now); mount_ours "$theirs"; dd if="$mnt/p2" bs=4096 count=1 status=none | same mount-pigz
    report "spigz --mount (pigz backup, index pass)" "$(since "$t") s"
    unmount_ours "$theirs"
    t=$(now); mount_ours "$theirs"; dd if="$mnt/p2" bs=4096 count=1 status=none | same mount-pigz2
    report "spigz --mount (pigz backup, index reused)" "$(since "$t") s"
    unmount_ours "$theirs"
else
    report "spigz --mount (pigz backup)" "not in this build"
fi
t=$(now); "$PY" -c 'import indexed_gzip, sys
f = indexed_gzip.IndexedGzipFile(sys.argv[1]); f.seek(int(sys.argv[2])); sys.stdout.buffer.write(f.read(4096))' \
    "$ours" "$P2" | same indexed_gzip; report "indexed_gzip (spigz backup)" "$(since "$t") s"
rm -f "${ours%.gz}.gzi"
t=$(now); gztool -b "$P2" -r 4096 "$ours" 2>/dev/null | same gztool
report "gztool -b (spigz backup)" "$(since "$t") s"
rm -f "${ours%.gz}.gzi"
t=$(now); nbdkit -U - --filter=gzip file "$ours" --run \
    "qemu-io -f raw -r -c 'read -v $P2 512' \"\$uri\"" > /dev/null
report "nbdkit --filter=gzip (spigz backup)" "$(since "$t") s"
warm "$qcow"
t=$(now); qemu-io -f qcow2 -r -c "read $P2 4096" "$qcow" > /dev/null
report "qemu-io, compressed qcow2" "$(since "$t") s"

# ---- one file out ----
echo "== big.bin (100 MB) out, mount or restore included" | tee -a "${out:-/dev/null}"
got=$work/got.bin
check_big() { cmp -s "$got" "$work/big.bin" || { echo "access-bench: big.bin differs ($1)" >&2; exit 1; }; }
warm "$ours"
t=$(now); mount_ours "$ours"; mount -o ro,loop "$mnt/p1" "$work/a"; cp "$work/a/big.bin" "$got"
report "ext4: spigz --mount, mount -o loop DIR/p1, cp" "$(since "$t") s"; check_big ext4-mount
t=$(now); ls -R "$work/a" > /dev/null; report "ext4: ls -R, mounted" "$(since "$t") s"
umount "$work/a"
t=$(now); ntfs-3g -o ro "$mnt/p2" "$work/b"; cp "$work/b/big.bin" "$got"
report "NTFS: ntfs-3g DIR/p2, cp (backup mounted)" "$(since "$t") s"; check_big ntfs-mount
t=$(now); ls -R "$work/b" > /dev/null; report "NTFS: ls -R, mounted" "$(since "$t") s"
umount "$work/b"
unmount_ours "$ours"
t=$(now); "$spigz" -d -o "$work/r.img" "$ours"
l=$(losetup -f --show -r -o "$P1" --sizelimit "$P1LEN" "$work/r.img")
mount -o ro "$l" "$work/a"; cp "$work/a/big.bin" "$got"
report "ext4: spigz -d, mount, cp" "$(since "$t") s"; check_big ext4-restore
umount "$work/a"; losetup -d "$l"
rm -f "$work/r.img"
t=$(now); "$spigz" -d -o "$work/r.img" "$ours"
l=$(losetup -f --show -r -o "$P2" --sizelimit "$P2LEN" "$work/r.img")
ntfs-3g -o ro "$l" "$work/b"; cp "$work/b/big.bin" "$got"
report "NTFS: spigz -d, ntfs-3g, cp" "$(since "$t") s"; check_big ntfs-restore
umount "$work/b"; losetup -d "$l"
rm -f "$work/r.img" "$got"

# ---- sequential ----
echo "== sequential, the whole disk to /dev/null" | tee -a "${out:-/dev/null}"
warm "$ours"
mount_ours "$ours"
t=$(now); cat "$mnt/disk" > /dev/null; report "cat DIR/disk (spigz --mount)" "$(since "$t") s"
pid=$(pgrep -f "spigz --mount $ours $mnt")
report "  the mount's peak RSS, default cache" "$(awk '/VmHWM/ {print $2, $3}' "/proc/$pid/status")"
unmount_ours "$ours"
if [ -n "$plugin" ]; then
    t=$(now); nbdkit -U - "$plugin" "$ours" --run 'nbdcopy "$uri" null:'
    report "nbdcopy from nbdkit spigz" "$(since "$t") s"
fi
t=$(now); "$spigz" -dc "$ours" > /dev/null; report "spigz -dc" "$(since "$t") s"
t=$(now); pigz -dc "$ours" > /dev/null; report "pigz -dc" "$(since "$t") s"

# ---- random reads ----
echo "== $reads random 4 KiB reads in p1: uncached, then the same again" | tee -a "${out:-/dev/null}"
rr() { # NAME KIND TARGET [N]
    local line
    "$PY" "$here/access_reader.py" "$2" "$3" "$P1" "$P1LEN" "${4:-$reads}" 7 | while read -r line; do
        report "$1: ${line%% *}" "${line#* }"
    done
}
warm "$ours"
mount_ours "$ours"; CHECK=$img rr "spigz --mount, O_DIRECT" file "$mnt/disk"; unmount_ours "$ours"
# a read decodes the whole piece it touches (its CRC checked before a byte
# is returned): 1 MiB by default, 128 KiB in a backup made with -b 128
warm "$small"
mount_ours "$small"; CHECK=$img rr "spigz --mount, -b 128 backup, O_DIRECT" file "$mnt/disk"
unmount_ours "$small"
if [ -n "$plugin" ]; then
    nbdkit -U - "$plugin" "$ours" --run "CHECK=$img '$PY' '$here/access_reader.py' nbd \"\$uri\" $P1 $P1LEN $reads 7" |
        while read -r line; do report "nbdkit spigz: ${line%% *}" "${line#* }"; done
fi
# indexed_gzip decodes up to a point's 4 MiB a read (about 3 a second here):
# a fortieth as many reads
ig=$((reads / 40 > 20 ? reads / 40 : 20))
CHECK=$img rr "indexed_gzip (spigz backup), $ig reads" igzip "$ours" "$ig"
warm "$qcow"
sock=$work/qemu.sock
qemu-nbd -r -f qcow2 -k "$sock" --persistent "$qcow" & qpid=$!
while [ ! -S "$sock" ]; do sleep 0.05; done
CHECK=$img rr "qemu-nbd, compressed qcow2" nbd "nbd+unix:///?socket=$sock"
kill "$qpid"; wait "$qpid" 2>/dev/null || true
}

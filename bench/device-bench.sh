#!/usr/bin/env bash
# device-bench.sh — restoring onto a device, and backing one up without
# filling the page cache, side by side in one run.
#
# usage: bench/device-bench.sh [--dir DIR] [--spigz PATH] [--threads N] [--out FILE]
#
# Images (in DIR, default $BENCH_DIR or /var/tmp/spigz-bench): mkimages.sh's
# ext4-usr-dense.img (4 GiB, dense) and mostly-empty.img (made here: 256 MiB
# of data.img, then 3.75 GiB of zeros: a fresh install's disk).  Each is
# compressed once with spigz -6.  The target is a loop device (direct I/O
# on, so the backing file is not cached twice) on a 4 GiB file in DIR.
#
# Restore rows (wall time, median of 3, each ending with the data on the
# device: spigz syncs it itself, dd with conv=fsync):
#   spigz -d -o /dev/loopN          the index, pieces in parallel, BLKZEROOUT
#   spigz -d --direct -o ...        data pages written with O_DIRECT
#   spigz -d --discard -o ...       zero spans discarded (the loop device
#                                   punches holes in its file)
#   spigz -dc | dd bs=1M            the habit it replaces
#   spigz -dc | dd oflag=direct     the same with O_DIRECT writes
#   pigz -dc | dd bs=1M             the peer
# Backup rows: spigz -c of the device (pages dropped behind the reader),
# of the file with and without --nocache; time, and for the file how much
# of it is in the page cache afterwards (fincore).
# Needs root (loop devices), pigz, fincore.
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
    *) echo "usage: $0 [--dir DIR] [--spigz PATH] [--threads N] [--out FILE]" >&2; exit 2 ;;
    esac
done
for t in pigz fincore losetup dd; do
    command -v "$t" >/dev/null || { echo "device-bench: $t is needed" >&2; exit 1; }
done
[ -x "$spigz" ] || { echo "device-bench: $spigz is not built" >&2; exit 1; }
mkdir -p "$dir"
[ -f "$dir/ext4-usr-dense.img" ] && [ -f "$dir/data.img" ] || "$here/mkimages.sh" --dir "$dir"
G=$((1 << 30))
if [ ! -f "$dir/mostly-empty.img" ]; then
    cp "$dir/data.img" "$dir/mostly-empty.img.tmp"
    truncate -s $((4 * G)) "$dir/mostly-empty.img.tmp"
    mv "$dir/mostly-empty.img.tmp" "$dir/mostly-empty.img"
fi
loop=
cleanup() { [ -n "$loop" ] && losetup -d "$loop" 2>/dev/null; rm -f "$dir/target.img"; }
trap cleanup EXIT
truncate -s $((4 * G)) "$dir/target.img"
loop=$(losetup --direct-io=on --find --show "$dir/target.img")

# med3 CMD...: the median wall time of three runs, in seconds.
med3() {
    local a=() s e
    for _ in 1 2 3; do
        s=$(date +%s.%N)
        "$@" > /dev/null 2>&1
        e=$(date +%s.%N)
        a+=("$(echo "$e - $s" | bc)")
    done
    printf '%s\n' "${a[@]}" | sort -n | sed -n 2p
}
report() { printf '%-44s %8.3f s\n' "$1" "$2" | tee -a "${out:-/dev/null}"; }
[ -n "$out" ] && : > "$out"
echo "device-bench: $(nproc) CPUs, -p$threads, target $loop (direct I/O), $(date -u +%F)" | tee -a "${out:-/dev/null}"

for img in ext4-usr-dense mostly-empty; do
    gz=$dir/$img.spigz.gz
    [ -f "$gz" ] || "$spigz" -6 -p"$threads" -c "$dir/$img.img" > "$gz"
    cat "$gz" > /dev/null # the input cached, as in every row
    echo "== restore $img ($(stat -c %s "$gz") bytes compressed)" | tee -a "${out:-/dev/null}"
    report "spigz -d -o $loop" "$(med3 "$spigz" -d -p"$threads" -o "$loop" "$gz")"
    cmp -s -n $((4 * G)) "$loop" "$dir/$img.img" || { echo "device-bench: restore differs" >&2; exit 1; }
    report "spigz -d --direct -o $loop" "$(med3 "$spigz" -d --direct -p"$threads" -o "$loop" "$gz")"
    cmp -s -n $((4 * G)) "$loop" "$dir/$img.img" || { echo "device-bench: restore differs" >&2; exit 1; }
    report "spigz -d --discard -o $loop" "$(med3 "$spigz" -d --discard -p"$threads" -o "$loop" "$gz")"
    cmp -s -n $((4 * G)) "$loop" "$dir/$img.img" || { echo "device-bench: restore differs" >&2; exit 1; }
    report "spigz -dc | dd bs=1M conv=fsync" \
        "$(med3 sh -c "'$spigz' -dc -p$threads '$gz' | dd of=$loop bs=1M conv=fsync status=none")"
    report "spigz -dc | dd bs=1M oflag=direct conv=fsync" \
        "$(med3 sh -c "'$spigz' -dc -p$threads '$gz' | dd of=$loop bs=1M iflag=fullblock oflag=direct conv=fsync status=none")"
    report "pigz -dc | dd bs=1M conv=fsync" \
        "$(med3 sh -c "pigz -dc -p$threads '$gz' | dd of=$loop bs=1M conv=fsync status=none")"
done

echo "== backup, and the page cache after it" | tee -a "${out:-/dev/null}"
dd if="$dir/ext4-usr-dense.img" of="$loop" bs=4M oflag=direct status=none
cached() { fincore -nb -o RES "$1" | tr -d ' '; }
t=$(med3 "$spigz" -p"$threads" -c "$loop")
report "spigz -c $loop (drops pages)" "$t"
# (a loop device's own page cache is not observable: fincore sizes a device
# as 0, and its reads are cached in the backing file, which direct I/O
# bypasses; tests/device.sh checks the DONTNEED advice instead)
f=$dir/ext4-usr-dense.img
cat "$f" > /dev/null
report "spigz -c FILE (page cache kept)" "$(med3 "$spigz" -p"$threads" -c "$f")"
echo "   cached afterwards: $(cached "$f") bytes of the file" | tee -a "${out:-/dev/null}"
sync; echo 1 > /proc/sys/vm/drop_caches
report "spigz -c FILE, cold cache" "$(med3 sh -c "echo 1 > /proc/sys/vm/drop_caches; '$spigz' -p$threads -c '$f'")"
report "spigz -c --nocache FILE, cold cache" "$(med3 sh -c "echo 1 > /proc/sys/vm/drop_caches; '$spigz' --nocache -p$threads -c '$f'")"
echo "   cached afterwards: $(cached "$f") bytes of the file" | tee -a "${out:-/dev/null}"
}

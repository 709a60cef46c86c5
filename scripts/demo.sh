#!/bin/bash
# The main job on a built-in demo image: install what is missing (the build,
# mke2fs, gzip and pigz: scripts/deps.sh demo), build, make a 2 GiB ext4 disk
# image holding ~300 MB of real files from /usr (mostly empty, like a fresh
# install), back it up with spigz and with pigz, check spigz's output with
# gzip -t and a full round trip, and print both.
# The image lives in $DEMO_DIR (default /var/tmp/spigz-demo), never in the
# tree, and is removed at the end unless DEMO_KEEP=1 (or --keep) asks to keep
# it for the next run.  Disk: up to 3 GB while it runs (the image, the files
# staged for it, the two backups).
set -euo pipefail
cd "$(dirname "$0")/.."
keep=${DEMO_KEEP:-0}
case ${1:-} in
    --keep) keep=1 ;;
    '') ;;
    *) echo "usage: $0 [--keep]   (or DEMO_KEEP=1)" >&2; exit 1 ;;
esac
scripts/deps.sh demo
scripts/build.sh
dir=${DEMO_DIR:-/var/tmp/spigz-demo}
mkdir -p "$dir"
img=$dir/demo-disk.img
threads=$(nproc)
# an interrupted or failed run takes its half-made files with it
trap 'rm -rf "$dir/stage" "$img.tmp" "$dir"/demo.*.gz "$dir"/demo.*.time' EXIT

# A line that rewrites itself on a terminal, one line per step elsewhere.
progress() {
    if [ -t 2 ]; then printf '\r%-72s' "$*" >&2; else printf '%s\n' "$*" >&2; fi
}

if [ ! -s "$img" ]; then
    echo "making the demo image $img: 2 GiB ext4 with ~300 MB of files from /usr"
    stage=$dir/stage
    rm -rf "$stage" && mkdir -p "$stage"
    # A deterministic choice of files: sorted, regular, readable, up to 300 MB.
    find /usr/lib /usr/share -xdev -type f -readable -size -20M -printf '%s\t%p\n' 2>/dev/null |
        sort -k2 | awk -F'\t' '{ t += $1; if (t <= 300e6) print $1 "\t" $2 }' |
        { copied=0 shown=0
          while IFS=$'\t' read -r n f; do
              mkdir -p "$stage$(dirname "$f")" && cp -p "$f" "$stage$f" 2>/dev/null || true
              copied=$((copied + n))
              if [ $((copied - shown)) -ge 10000000 ]; then
                  shown=$copied
                  progress "  copying files: $((copied / 1000000)) of ~300 MB"
              fi
          done
          progress "  copying files: $((copied / 1000000)) MB, done"
          if [ -t 2 ]; then echo >&2; fi; }
    echo "  mke2fs -d: writing them into the image"
    truncate -s 2G "$img.tmp"
    E2FSPROGS_FAKE_TIME=1700000000 mke2fs -q -F -t ext4 -L demo \
        -U 0f0e0d0c-0b0a-0908-0706-050403020100 -E hash_seed=0f0e0d0c-0b0a-0908-0706-050403020100 \
        -d "$stage" "$img.tmp"
    # A disk read through dd has no holes: make the image dense, as a device is.
    echo "  making it dense (a disk read by dd has no holes)"
    cp --sparse=never "$img.tmp" "$img" && rm -f "$img.tmp" && rm -rf "$stage"
fi
size=$(stat -c %s "$img")
cat "$img" > /dev/null # warm the page cache, for both tools alike

run() { # NAME OUTPUT COMMAND...: time a compression, print time, size, rate
    local name=$1 out=$2; shift 2
    local t0 t1
    t0=$(date +%s.%N); "$@" < "$img" > "$out"; t1=$(date +%s.%N)
    awk -v n="$name" -v a="$t0" -v b="$t1" -v s="$size" -v o="$(stat -c %s "$out")" \
        'BEGIN { t = b - a; printf "%-22s %7.2f s %8.0f MB/s %12d bytes (%.2f%% of the image)\n", n, t, s / t / 1e6, o, 100 * o / s }'
    awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}' > "$out.time"
}

echo "image: $img ($size bytes, $threads threads)"
run "spigz -p$threads" "$dir/demo.spigz.gz" ./spigz -c -p"$threads"
echo "  and pigz, for comparison:"
run "pigz -p$threads" "$dir/demo.pigz.gz" pigz -c -p"$threads"
gzip -t "$dir/demo.spigz.gz" && echo "gzip -t: spigz's output is a valid gzip file"
gzip -dc "$dir/demo.spigz.gz" | cmp - "$img" && echo "round trip: gzip -dc gives back the image byte for byte"
awk -v a="$(cat "$dir/demo.spigz.gz.time")" -v b="$(cat "$dir/demo.pigz.gz.time")" \
    'BEGIN { printf "spigz is %.1fx faster than pigz here\n", b / a }'
rm -f "$dir"/demo.*.gz "$dir"/demo.*.time
if [ "$keep" = 1 ]; then
    echo "the image stays in $img for the next run (remove it with: rm -r $dir)"
else
    rm -f "$img" && rmdir "$dir" 2>/dev/null || true
    echo "removed the demo image (DEMO_KEEP=1 or --keep keeps it)"
fi

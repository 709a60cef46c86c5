#!/usr/bin/env bash
# manifest-bench.sh — what the manifest and the image digest cost: spigz
# built before them (OLD) and this spigz (NEW), side by side in one run,
# alternating, on the bench's images, at -1 (the fastest data: the digest's
# hashing shows most) and -6, plain and with --free=zero (the free map),
# and -t (which now checks the digest).  Reports wall seconds (median of
# --runs), the output's size and the difference in bytes.
#
# usage: bench/manifest-bench.sh --old PATH [--new PATH] [--runs N] [--dir DIR] [--out FILE]
#   --old   a spigz binary from before the manifest (git worktree of an
#           earlier commit, built)
#   --new   this one (default ./spigz)
#   --dir   the images (bench/mkimages.sh; default $BENCH_DIR or
#           /var/tmp/spigz-bench): data.img and ext4-usr-dense.img are built
#           there if missing
#   --out   also write the table as Markdown to FILE
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
old='' new=$here/../spigz runs=3 dir=${BENCH_DIR:-/var/tmp/spigz-bench} out=''
while [ $# -gt 0 ]; do
    case $1 in
    --old) old=$2; shift ;;
    --new) new=$2; shift ;;
    --runs) runs=$2; shift ;;
    --dir) dir=$2; shift ;;
    --out) out=$2; shift ;;
    *) echo "usage: $0 --old PATH [--new PATH] [--runs N] [--dir DIR] [--out FILE]" >&2; exit 2 ;;
    esac
    shift
done
[ -x "$old" ] && [ -x "$new" ] || { echo "$0: --old and --new must be spigz binaries" >&2; exit 2; }
"$here/mkimages.sh" --only data,ext4-usr-dense "$dir" > /dev/null
o=$(mktemp -d "${TMPDIR:-/tmp}/manifest-bench.XXXXXX")
trap 'rm -rf "$o"' EXIT

# t CMD...: wall seconds of CMD (stdout to $o/out), after a sync
t() {
    sync
    local a b
    a=$(date +%s.%N)
    "$@" > "$o/out"
    b=$(date +%s.%N)
    echo "$a $b" | awk '{printf "%.3f", $2 - $1}'
}
median() { tr ' ' '\n' | sort -n | awk '{v[NR]=$1} END {print v[int((NR + 1) / 2)]}'; }

rows=()
row() { # LABEL IMAGE OPTS...
    local label=$1 img=$2
    shift 2
    local to=() tn=() so sn
    for _ in $(seq "$runs"); do
        to+=("$(t "$old" -c -p 2 "$@" "$img")")
        so=$(stat -c %s "$o/out")
        cp "$o/out" "$o/old.gz"
        tn+=("$(t "$new" -c -p 2 "$@" "$img")")
        sn=$(stat -c %s "$o/out")
        cp "$o/out" "$o/new.gz"
    done
    local mo mn
    mo=$(echo "${to[*]}" | median)
    mn=$(echo "${tn[*]}" | median)
    rows+=("| $label | ${to[*]} | ${tn[*]} | $mo | $mn | $so | $sn | $((sn - so)) |")
    # -t: the old binary on its file, the new one on its (it checks the digest)
    local vo=() vn=()
    for _ in $(seq "$runs"); do
        vo+=("$(t "$old" -t -p 2 "$o/old.gz")")
        vn+=("$(t "$new" -t -p 2 "$o/new.gz")")
    done
    rows+=("| $label, then -t | ${vo[*]} | ${vn[*]} | $(echo "${vo[*]}" | median) | $(echo "${vn[*]}" | median) | | | |")
}
cd "$dir"
row "data.img -1" data.img -1
row "data.img -6" data.img -6
row "ext4-usr-dense.img -6" ext4-usr-dense.img -6
row "ext4-usr-dense.img -6 --free=zero" ext4-usr-dense.img -6 --free=zero

{
    echo "manifest-bench: $(date -u +%Y-%m-%d), $(nproc) cores, -p 2, $runs runs each, alternating old and new"
    echo "old: $("$old" -V | head -1) ($old); new: $("$new" -V | head -1)"
    echo
    echo "| case | old s | new s | old median | new median | old bytes | new bytes | new - old bytes |"
    echo "|---|---|---|---|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
} | tee "${out:-/dev/null}"

#!/usr/bin/env bash
# report.sh — run every bench and write doc/BENCHMARKS.md: the current
# results, one section per workload, spigz and its peers side by side in each
# table, the charts beside them.  `make bench` runs it.
#
# usage: bench/report.sh [--spigz PATH] [--quick] [--frontier] [--keep DIR]
#   --spigz PATH  the spigz under test (default: the one built in this checkout)
#   --quick       bench.sh without the 64 GiB sparse image, one run per row
#                 (a look, not a record: the report says so)
#   --frontier    also bench/frontier.sh (every tool at every level; ~40 min)
#                 for the frontier charts; without it the charts committed
#                 from the last frontier run stay and the report says when
#                 that was
#   --keep DIR    where this run's raw records go (default
#                 bench/results/DATE-COMMIT): every script's Markdown and the
#                 TSV records, so that a later report can be compared with it
#
# Workloads, each a script of its own (bench/README.md explains them):
#   compression  bench.sh: every image, spigz -1/-3/-6 against pigz, gzip,
#                igzip, libdeflate-gzip; pipes; the estimate; restore
#   used disk    free-bench.sh: --free=zero against the disk zeroed by other
#                tools, pigz, partclone, e2image (root: loop devices)
#   devices      device-bench.sh: restoring onto a device, backing one up
#                (root)
# Each runs alone (never two benches at once); the machine, the date and the
# commit go at the top.  Earlier reports are in bench/results/, by date.
{
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
top=$(cd "$here/.." && pwd -P)
spigz=$top/spigz quick=false frontier=false keep=''
while [ $# -gt 0 ]; do
    case $1 in
    --spigz) spigz=$2; shift 2 ;;
    --quick) quick=true; shift ;;
    --frontier) frontier=true; shift ;;
    --keep) keep=$2; shift 2 ;;
    *) sed -n '3,/^$/s/^# \{0,1\}//p' "$0"; exit 1 ;;
    esac
done
[ -x "$spigz" ] || { echo "report: no spigz at $spigz (build it first)" >&2; exit 1; }
commit=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$top" status --porcelain --untracked-files=no 2>/dev/null | head -1)
[ -z "$dirty" ] || commit="$commit (with uncommitted changes)"
day=$(date -u +%F)
keep=${keep:-$top/bench/results/$day-${commit%% *}}
mkdir -p "$keep"
say() { printf 'report: %s\n' "$*" >&2; }

status=0
run() { # NAME COMMAND...: the script's Markdown into $keep/NAME.md
    local name=$1; shift
    say "$name: $*"
    if "$@" --out "$keep/$name.md" > "$keep/$name.log" 2>&1; then :; else
        local s=$?
        # bench.sh: 2 means a performance target failed, the report stands
        [ "$s" -eq 2 ] || { say "$name failed (status $s): see $keep/$name.log"; status=1; }
    fi
}
bargs=(--spigz "$spigz" --tsv "$keep/bench.tsv")
# shellcheck disable=SC2054 # the commas are bench.sh's list of images, one word
$quick && bargs+=(--images zeros-dense,data,ext4-usr,ext4-usr-dense --runs 1)
run compression bash "$here/bench.sh" "${bargs[@]}"
if [ "$(id -u)" -eq 0 ]; then
    run used-disk bash "$here/free-bench.sh" --spigz "$spigz"
    run devices bash "$here/device-bench.sh" --spigz "$spigz"
else
    say "not root: the used-disk and device benches (loop devices) are left out"
fi
charts=$top/doc/bench
if $frontier; then
    say "frontier: every tool at every level"
    bash "$here/frontier.sh" --spigz "$spigz" --tsv "$keep/frontier.tsv" > "$keep/frontier.log" 2>&1 ||
        { say "frontier failed: see $keep/frontier.log"; status=1; }
fi
if command -v gnuplot > /dev/null; then
    tsvs=("$keep/bench.tsv")
    [ -f "$keep/frontier.tsv" ] && tsvs+=("$keep/frontier.tsv")
    if $frontier; then
        bash "$here/plot.sh" --out "$charts" "${tsvs[@]}" > /dev/null 2>&1 || say "plot failed"
    else # the restore chart is this run's; the frontier charts stay the last run's
        tmp=$(mktemp -d)
        bash "$here/plot.sh" --out "$tmp" "${tsvs[@]}" > /dev/null 2>&1 &&
            cp "$tmp/restore.png" "$charts/restore.png" || say "plot failed"
        rm -rf "$tmp"
    fi
fi

# The report: a header, then each workload's section as its script wrote it
# (its title one level down), then the charts.
section() { # FILE TITLE
    [ -f "$1" ] || return 0
    printf '\n## %s\n\n' "$2"
    sed -e 's/^## /### /' -e 's/^### \(.*\)/#### \1/' "$1" | sed -e 's/^#### \(spigz benchmark\)$/### \1/'
}
{
    printf '# Benchmarks\n\n'
    printf 'The current results, written by `make bench` (bench/report.sh) on %s from commit %s' "$day" "$commit"
    $quick && printf ' with `--quick` (one run per row, no 64 GiB image: a look, not a record)'
    printf '.\nspigz and its peers run side by side in each table, in one run, on the same machine;\n'
    printf 'bench/README.md says what each bench does and how to run one alone. Earlier reports\n'
    printf 'are in bench/results/, by date; this run'"'"'s raw records are in %s.\n\n' "${keep#"$top"/}"
    printf 'Machine: %s, %s CPUs, %s GiB of memory, Linux %s.\n' \
        "$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)" "$(nproc)" \
        "$(awk '/MemTotal/ { printf "%d", $2 / 1048576 }' /proc/meminfo)" "$(uname -r)"
    printf '\nContents: [compression and restore](#compression-and-restore), '
    printf '[a used disk](#a-used-disk---freezero), [devices](#devices), [charts](#charts).\n'
    section "$keep/compression.md" "Compression and restore"
    section "$keep/used-disk.md" "A used disk (--free=zero)"
    if [ -f "$keep/devices.md" ]; then # device-bench.sh writes a plain table: kept as it is
        printf '\n## Devices\n\n```text\n'
        cat "$keep/devices.md"
        printf '```\n'
    fi
    printf '\n## Charts\n\n'
    if $frontier; then
        printf 'The speed/size frontier, every tool at every level, from this run:\n\n'
    else
        printf 'The speed/size frontier, every tool at every level (bench/frontier.sh, last run on %s;\n' \
            "$(git -C "$top" log -1 --format=%cs -- doc/bench/frontier-data.png 2>/dev/null || echo unknown)"
        printf '`bench/report.sh --frontier` runs it again):\n\n'
    fi
    for f in "$charts"/frontier-*.png; do
        [ -f "$f" ] && printf '![%s](bench/%s)\n\n' "$(basename "$f" .png)" "$(basename "$f")"
    done
    printf 'Restore times, this run:\n\n![restore](bench/restore.png)\n'
} > "$top/doc/BENCHMARKS.md"
# The records are committed: paths into this checkout are said relative to
# it (the spigz under test is ./spigz, not a path of this machine).
for f in "$top/doc/BENCHMARKS.md" "$keep"/*.md "$keep"/*.log; do
    [ -f "$f" ] && sed -i "s|$top/||g" "$f"
done
say "wrote doc/BENCHMARKS.md; raw records in $keep"
exit $status
}

#!/usr/bin/env bash
# report.sh — run every bench and write doc/BENCHMARKS.md: the current
# results, one section per workload, spigz and its peers side by side in each
# table, the charts beside them.  `make bench` runs it.
#
# usage: bench/report.sh [--spigz PATH] [--quick] [--frontier] [--keep DIR] [--only LIST]
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
#   --only LIST   run only these workloads (compression, used-disk, devices,
#                 access; comma-separated); each other section is the newest
#                 earlier record's in bench/results/, and says so
#
# Workloads, each a script of its own (bench/README.md explains them):
#   compression  bench.sh: every image, spigz -1/-3/-6 against pigz, gzip,
#                igzip, libdeflate-gzip; pipes; the estimate; restore
#   used disk    free-bench.sh: --free=zero against the disk zeroed by other
#                tools, pigz, partclone, e2image (root: loop devices)
#   devices      device-bench.sh: restoring onto a device, backing one up
#                (root)
#   access       access-bench.sh: a backup opened without restoring it
#                (--mount, the nbdkit plugin) against indexed_gzip, gztool,
#                nbdkit's gzip filter and a compressed qcow2 (root)
#   manifest     manifest-bench.sh, run by hand once (it needs a spigz built
#                before the manifest): its newest record in bench/results/
# Each runs alone (never two benches at once); the machine, the date and the
# commit go at the top.  Earlier reports are in bench/results/, by date.
{
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
top=$(cd "$here/.." && pwd -P)
spigz=$top/spigz quick=false frontier=false keep='' only=''
while [ $# -gt 0 ]; do
    case $1 in
    --spigz) spigz=$2; shift 2 ;;
    --quick) quick=true; shift ;;
    --frontier) frontier=true; shift ;;
    --keep) keep=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
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
want() { [ -z "$only" ] || case ",$only," in *",$1,"*) true ;; *) false ;; esac; }
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
want compression && run compression bash "$here/bench.sh" "${bargs[@]}"
if [ "$(id -u)" -eq 0 ]; then
    want used-disk && run used-disk bash "$here/free-bench.sh" --spigz "$spigz"
    want devices && run devices bash "$here/device-bench.sh" --spigz "$spigz"
    want access && run access bash "$here/access-bench.sh" --spigz "$spigz"
else
    say "not root: the used-disk, device and access benches (loop devices, mounts) are left out"
fi
charts=$top/doc/bench
if $frontier; then
    say "frontier: every tool at every level"
    bash "$here/frontier.sh" --spigz "$spigz" --tsv "$keep/frontier.tsv" > "$keep/frontier.log" 2>&1 ||
        { say "frontier failed: see $keep/frontier.log"; status=1; }
fi
if command -v gnuplot > /dev/null && [ -f "$keep/bench.tsv" ]; then
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
# record NAME: this run's NAME.md, else the newest earlier record's (with
# --only), else nothing.
record() {
    if [ -f "$keep/$1.md" ]; then echo "$keep/$1.md"; return; fi
    local d
    while read -r d; do
        [ -f "$d/$1.md" ] && [ "$d" != "$keep" ] && { echo "$d/$1.md"; return; }
    done < <(find "$top/bench/results" -mindepth 1 -maxdepth 1 -type d | sort -r)
}
earlier_note() { # FOLDER: a section taken from an earlier run
    printf '*This section is from an earlier run: %s (its date and commit in its name).*\n\n' \
        "${1#"$top"/}"
}
section() { # NAME TITLE
    local f from
    f=$(record "$1")
    [ -n "$f" ] || return 0
    from=${f%/*}; [ "$from" = "$keep" ] && from=
    printf '\n## %s\n\n' "$2"
    [ -z "$from" ] || earlier_note "$from"
    sed -e 's/^## /### /' -e 's/^### \(.*\)/#### \1/' "$f" | sed -e 's/^#### \(spigz benchmark\)$/### \1/'
}
plain() { # NAME TITLE: a script that writes plain lines, kept as they are
    local f from
    f=$(record "$1")
    [ -n "$f" ] || return 0
    from=${f%/*}; [ "$from" = "$keep" ] && from=
    printf '\n## %s\n\n' "$2"
    [ -z "$from" ] || earlier_note "$from"
    printf '```text\n'
    cat "$f"
    printf '```\n'
}
{
    printf '# Benchmarks\n\n'
    printf 'The current results, written by `make bench` (bench/report.sh) on %s from commit %s' "$day" "$commit"
    [ -z "$only" ] || printf ' (this run: %s; the other sections say which run they come from)' "$only"
    $quick && printf ' with `--quick` (one run per row, no 64 GiB image: a look, not a record)'
    printf '.\nspigz and its peers run side by side in each table, in one run, on the same machine;\n'
    printf 'bench/README.md says what each bench does and how to run one alone. Earlier reports\n'
    printf 'are in bench/results/, by date; this run'"'"'s raw records are in %s.\n\n' "${keep#"$top"/}"
    printf 'Machine: %s, %s CPUs, %s GiB of memory, Linux %s.\n' \
        "$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)" "$(nproc)" \
        "$(awk '/MemTotal/ { printf "%d", $2 / 1048576 }' /proc/meminfo)" "$(uname -r)"
    printf '\nContents: [compression and restore](#compression-and-restore), '
    printf '[a used disk](#a-used-disk---freezero), [devices](#devices), '
    printf '[opening a backup without restoring it](#opening-a-backup-without-restoring-it), '
    printf '[the manifest'"'"'s cost](#the-manifests-cost), [charts](#charts).\n'
    section compression "Compression and restore"
    section used-disk "A used disk (--free=zero)"
    plain devices "Devices"
    plain access "Opening a backup without restoring it"
    section manifest "The manifest's cost"

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
    if [ -f "$keep/bench.tsv" ]; then
        printf 'Restore times, this run:\n\n![restore](bench/restore.png)\n'
    else
        printf 'Restore times, from the run the compression section comes from:\n\n![restore](bench/restore.png)\n'
    fi
} > "$top/doc/BENCHMARKS.md"
# The records are committed: paths into this checkout are said relative to
# it (the spigz under test is ./spigz, not a path of this machine).
for f in "$top/doc/BENCHMARKS.md" "$keep"/*.md "$keep"/*.log; do
    [ -f "$f" ] && sed -i "s|$top/||g" "$f"
done
say "wrote doc/BENCHMARKS.md; raw records in $keep"
exit $status
}

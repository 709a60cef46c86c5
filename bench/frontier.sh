#!/usr/bin/env bash
# frontier.sh — every gzip compressor at every level it has, on the bench's
# images: the speed/size frontier, as one TSV (bench/plot.sh draws it).
#
# usage: bench/frontier.sh [options] [> FILE.tsv]
#   --images LIST   comma-separated images (default data,ext4-usr-dense; any
#                   of bench/mkimages.sh's: zeros-dense, data, ext4-usr,
#                   ext4-usr-dense, zeros-sparse)
#   --tools LIST    tools to run (default spigz,pigz,gzip,igzip,libdeflate,bgzip)
#   --levels LIST   only these levels of each tool (e.g. 1,6: a quick look);
#                   default every level the tool has:
#                     spigz 1-12 (-p N), pigz 1-9 and 11 if it has it (-p N),
#                     gzip 1,6,9, igzip 0-3 at -T 1 and at -T N,
#                     libdeflate-gzip 1-12, bgzip -l 1-9 (-@ N, when bgzip
#                     has -@); gzip and libdeflate-gzip are single-threaded
#   --threads N     N (default 2)
#   --timeout S     per-run time limit in seconds (default 300); a run that
#                   exceeds it is killed and recorded as a timeout, and the
#                   higher levels of the same tool (slower still) are recorded
#                   as skipped instead of run
#   --runs N        runs per point, the median is recorded (default 1)
#   --no-verify     do not check spigz's outputs (default: every spigz output
#                   is decompressed by igzip, else gzip, and compared with the
#                   image; a wrong one is recorded as status wrong)
#   --dir DIR       image directory (default $BENCH_DIR, else
#                   /var/tmp/spigz-bench); missing images are built first
#   --outdir DIR    where outputs go while measured (default DIR/out)
#   --spigz PATH    the spigz under test (default $SPIGZ, else the checkout's)
#   --tsv FILE      write the record to FILE (default: standard output)
#
# The record has bench.sh's --tsv columns (bench/README.md), kind compress.
# Progress goes to stderr.  zstd is not gzip and is left out.  Exit status:
# 0 all ran (timeouts are data, not errors), 1 a setup error or a wrong
# spigz output.

# One { ... } block: bash reads it whole before running it.
{
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
die() { printf 'frontier: %s\n' "$*" >&2; exit 1; }
say() { printf 'frontier: %s\n' "$*" >&2; }
usage() { sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit "${1:-0}"; }

ALL_IMAGES=(zeros-dense data ext4-usr ext4-usr-dense zeros-sparse)
ALL_TOOLS=(spigz pigz gzip igzip libdeflate bgzip)
images_arg=data,ext4-usr-dense tools_arg=$(IFS=,; echo "${ALL_TOOLS[*]}") levels_arg=''
threads=2 timeout_s=300 runs=1 verify=1 tsvout='' outbase=''
imgdir=${BENCH_DIR:-/var/tmp/spigz-bench}

needarg() { [[ $# -ge 2 && -n $2 ]] || die "$1 needs a value (see --help)"; }
while (($#)); do
  case $1 in
    --images) needarg "$@"; images_arg=$2; shift ;;
    --tools) needarg "$@"; tools_arg=$2; shift ;;
    --levels) needarg "$@"; levels_arg=$2; shift ;;
    -p|--threads) needarg "$@"; threads=$2; shift ;;
    --timeout) needarg "$@"; timeout_s=$2; shift ;;
    --runs) needarg "$@"; runs=$2; shift ;;
    --no-verify) verify=0 ;;
    --dir) needarg "$@"; imgdir=$2; shift ;;
    --outdir) needarg "$@"; outbase=$2; shift ;;
    --spigz) needarg "$@"; SPIGZ=$2; shift ;;
    --tsv) needarg "$@"; tsvout=$2; shift ;;
    -h|--help) usage 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
  shift
done
[[ $threads =~ ^[1-9][0-9]*$ ]] || die "--threads wants a positive integer"
[[ $timeout_s =~ ^[1-9][0-9]*$ ]] || die "--timeout wants whole seconds"
[[ $runs =~ ^[1-9]$ ]] || die "--runs wants 1-9"
images=() tools=()
declare -A want_level=()
IFS=, read -r -a req <<<"$images_arg"
for i in "${req[@]}"; do
  i=${i%.img}
  case " ${ALL_IMAGES[*]} " in *" $i "*) images+=("$i") ;; *) die "unknown image '$i' (known: ${ALL_IMAGES[*]})" ;; esac
done
IFS=, read -r -a req <<<"$tools_arg"
for t in "${req[@]}"; do
  [[ $t == libdeflate-gzip ]] && t=libdeflate
  case " ${ALL_TOOLS[*]} " in *" $t "*) tools+=("$t") ;; *) die "unknown tool '$t' (known: ${ALL_TOOLS[*]})" ;; esac
done
if [[ -n $levels_arg ]]; then
  IFS=, read -r -a req <<<"$levels_arg"
  for l in "${req[@]}"; do
    [[ $l =~ ^[0-9]+$ ]] || die "--levels wants numbers, not '$l'"
    want_level[$((10#$l))]=1
  done
fi

# ---- tools --------------------------------------------------------------------
if [[ -n ${SPIGZ:-} ]]; then
  spigz=$SPIGZ
  [[ $spigz == */* ]] || spigz=$(command -v "$spigz" || true)
  [[ -n $spigz && -f $spigz && -x $spigz ]] || die "the spigz to test, ${SPIGZ} (SPIGZ or --spigz), is not an executable file"
else
  spigz=$(cd "$here/.." && pwd -P)/spigz
  [[ -f $spigz && -x $spigz ]] || die "spigz was not built: no executable $spigz (or set SPIGZ=/path/to/spigz)"
fi
[[ -x /usr/bin/time ]] || die "/usr/bin/time is not installed (Debian package time)"
command -v timeout >/dev/null || die "timeout is missing (Debian package coreutils)"
# series: TOOL|THREADS|LEVELS (space-separated) -- one line of the plot each
series=()
add_series() {  # add_series TOOL THREADS LEVEL...: the wanted levels only
  local t=$1 th=$2 l ls=''
  shift 2
  for l; do
    if ((${#want_level[@]} == 0)) || [[ -n ${want_level[$l]:-} ]]; then ls+="$l "; fi
  done
  [[ -n $ls ]] && series+=("$t|$th|${ls% }")
  return 0
}
for t in "${tools[@]}"; do
  case $t in
    spigz) add_series spigz "$threads" {1..12} ;;
    pigz)
      command -v pigz >/dev/null || { say "pigz is not installed (Debian package pigz): left out"; continue; }
      lv=({1..9})
      pigz -11 -c </dev/null >/dev/null 2>&1 && lv+=(11)
      add_series pigz "$threads" "${lv[@]}" ;;
    gzip)
      command -v gzip >/dev/null || { say "gzip is not installed: left out"; continue; }
      add_series gzip 1 1 6 9 ;;
    igzip)
      command -v igzip >/dev/null || { say "igzip is not installed (Debian package isal): left out"; continue; }
      add_series igzip 1 0 1 2 3
      ((threads == 1)) || add_series igzip "$threads" 0 1 2 3 ;;
    libdeflate)
      command -v libdeflate-gzip >/dev/null || { say "libdeflate-gzip is not installed (Debian package libdeflate-tools): left out"; continue; }
      add_series libdeflate-gzip 1 {1..12} ;;
    bgzip)
      command -v bgzip >/dev/null || { say "bgzip is not installed (Debian package tabix): left out"; continue; }
      bth=1
      bgzip -h 2>&1 | grep -q -- '--threads' && bth=$threads
      add_series bgzip "$bth" {1..9} ;;
  esac
done
((${#series[@]})) || die "nothing to run: no tool has any of the levels asked for"
if ((verify)); then
  if command -v igzip >/dev/null; then vdec=igzip; else vdec=gzip; fi
fi

# cmdline TOOL THREADS LEVEL IMG: sets cmd=() and cmdtext
cmdline() {
  local t=$1 th=$2 l=$3 img=$4
  case $t in
    spigz) cmd=("$spigz" -c -p "$th" "-$l" "$img"); cmdtext="spigz -c -p $th -$l IMG > OUT" ;;
    pigz) cmd=(pigz -c -p "$th" "-$l" "$img"); cmdtext="pigz -c -p $th -$l IMG > OUT" ;;
    gzip) cmd=(gzip -c "-$l" "$img"); cmdtext="gzip -c -$l IMG > OUT" ;;
    igzip) cmd=(igzip -c "-$l" -T "$th" "$img"); cmdtext="igzip -c -$l -T $th IMG > OUT" ;;
    libdeflate-gzip) cmd=(libdeflate-gzip -c "-$l" "$img"); cmdtext="libdeflate-gzip -c -$l IMG > OUT" ;;
    bgzip)
      if ((th > 1)); then
        cmd=(bgzip -c -l "$l" -@ "$th" "$img"); cmdtext="bgzip -c -l $l -@ $th IMG > OUT"
      else
        cmd=(bgzip -c -l "$l" "$img"); cmdtext="bgzip -c -l $l IMG > OUT"
      fi ;;
  esac
}

# ---- images and the run directory --------------------------------------------------
"$here/mkimages.sh" --only "$(IFS=,; echo "${images[*]}")" "$imgdir" >&2 || die "building the images failed"
imgdir=$(cd "$imgdir" && pwd -P)
outbase=${outbase:-$imgdir/out}
mkdir -p "$outbase"
run=$(mktemp -d "$outbase/frontier.XXXXXX")
child=''
# shellcheck disable=SC2317  # called from the EXIT trap
cleanup() {
  [[ -n $child ]] && kill -TERM "$child" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$run"
}
trap cleanup EXIT
trap 'say interrupted; exit 130' INT TERM HUP

# ---- measuring (as bench.sh does) ----------------------------------------------------
busy_ticks() {
  local _c u n s _i _w q sq st _r
  read -r _c u n s _i _w q sq st _r </proc/stat
  echo $((u + n + s + q + sq + st))
}
clk_tck=$(getconf CLK_TCK 2>/dev/null || echo 100)
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# run_cmd OUT CMD...: CMD's stdout to OUT; sets r_status (ok|timeout|failed)
# r_time (s) r_rss (KiB) r_other (cores busy with anything else) r_err
run_cmd() {
  local rc=0 t0 t1 m us ss b0 b1 out=$1
  shift
  : >"$run/time"
  b0=$(busy_ticks)
  t0=${EPOCHREALTIME/./}
  timeout -k 10 "$timeout_s" /usr/bin/time -f '%e %M %U %S' -o "$run/time" "$@" >"$out" 2>"$run/err" &
  child=$!
  wait "$child" || rc=$?
  t1=${EPOCHREALTIME/./}
  b1=$(busy_ticks)
  child=''
  r_time=$(awk -v d="$((t1 - t0))" 'BEGIN { printf "%.6f", d / 1e6 }')
  m='' us='' ss=''
  read -r _ m us ss < <(tail -n1 "$run/time") || true
  r_rss=${m:-}
  [[ $r_rss =~ ^[0-9]+$ ]] || r_rss=''
  r_other=''
  if [[ $us =~ ^[0-9.]+$ && $ss =~ ^[0-9.]+$ ]]; then
    r_other=$(awk -v b="$((b1 - b0))" -v hz="$clk_tck" -v u="$us" -v s="$ss" -v w="$((t1 - t0))" \
      'BEGIN { o = (b / hz - u - s) / (w / 1e6); printf "%.2f", o < 0 ? 0 : o }')
  fi
  r_err=''
  if ((rc == 0)); then
    r_status=ok
  elif ((rc == 124 || ((rc == 137 || rc == 143) && (t1 - t0) >= timeout_s * 1000000))); then
    r_status=timeout
  else
    r_status=failed
    r_err=$(sed -n '/[^[:space:]]/{s/\t/ /g;p;q}' "$run/err")
    r_err=${r_err:0:80}
    [[ -n $r_err ]] || r_err="exit status $rc"
  fi
}

# ---- the record -----------------------------------------------------------------------
cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n1)
mem=$(awk '/^MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)
spigz_v=$({ "$spigz" -V 2>&1 || true; } | sed -n 1p)
if [[ -n $tsvout ]]; then
  exec 3>"$tsvout" || die "cannot write $tsvout"
else
  exec 3>&1
fi
{
  printf '# spigz bench record: bench/frontier.sh\n'
  printf '# date: %s\n' "$(date '+%Y-%m-%d %H:%M:%S %Z')"
  printf '# machine: %s, %s cores online, %s RAM\n' "${cpu:-?}" "$(nproc)" "$mem"
  printf '# spigz: %s\n' "$spigz_v"
  printf '# settings: threads %s, timeout %s s, runs %s, verify %s\n' "$threads" "$timeout_s" "$runs" "$verify"
  printf 'image\ttool\tlevel\tthreads\tseconds\tout_bytes\tin_bytes\tkind\tstatus\truns\tfile\tsink\talloc_bytes\trss_kib\tother_cpu\trow\tcommand\n'
} >&3
tsv() {
  local f line=''
  for f in "$@"; do line+="${f:--}	"; done
  printf '%s\n' "${line%	}" >&3
}

# ---- running ----------------------------------------------------------------------------
npoints=0
for s in "${series[@]}"; do
  IFS='|' read -r _ _ ls <<<"$s"
  read -r -a lv <<<"$ls"
  npoints=$((npoints + ${#lv[@]}))
done
npoints=$((npoints * ${#images[@]}))
say "$npoints points on ${#images[@]} image(s), ${runs} run(s) each, at most $timeout_s s a run"
t_start=$SECONDS k=0 wrong=0
for img in "${images[@]}"; do
  path=$imgdir/$img.img
  size=$(stat -c %s "$path")
  read -r blk bsz < <(stat -c '%b %B' "$path")
  if ((blk * bsz > 0)); then
    say "$img: warming the page cache"
    cat -- "$path" >/dev/null
  fi
  for s in "${series[@]}"; do
    IFS='|' read -r t th ls <<<"$s"
    read -r -a lv <<<"$ls"
    stop=''  # a level timed out: the higher ones are skipped
    for l in "${lv[@]}"; do
      k=$((k + 1))
      cmdline "$t" "$th" "$l" "$path"
      row="$t-$l-T$th"
      if [[ -n $stop ]]; then
        say "$img: $cmdtext ($k/$npoints): skipped ($stop timed out)"
        tsv "$img" "$t" "$l" "$th" '' '' "$size" compress skipped 0 image file '' '' '' "$row" "$cmdtext"
        continue
      fi
      out=$run/out.gz
      times=() st=ok rss='' oth='' bytes='' err=''
      for ((r = 1; r <= runs; r++)); do
        run_cmd "$out" "${cmd[@]}"
        if [[ $r_status != ok ]]; then st=$r_status err=$r_err times=("$r_time"); rss=$r_rss oth=$r_other; break; fi
        times+=("$r_time")
        if [[ -n $r_rss ]] && { [[ -z $rss ]] || ((r_rss > rss)); }; then rss=$r_rss; fi
        if [[ -n $r_other ]] && { [[ -z $oth ]] || awk -v a="$r_other" -v b="$oth" 'BEGIN { exit !(a > b) }'; }; then oth=$r_other; fi
      done
      tm=$(median "${times[@]}")
      if [[ $st == ok ]]; then
        bytes=$(stat -c %s "$out")
        if ((verify)) && [[ $t == spigz ]]; then
          # shellcheck disable=SC2016
          if ! bash -c 'set -o pipefail; "$1" -dc -- "$2" | cmp -s -- - "$3"' v "$vdec" "$out" "$path"; then
            st=wrong wrong=1 err="$vdec -dc differs from the image"
          fi
        fi
      fi
      [[ $st == timeout ]] && stop="-$l"
      rm -f -- "$out"
      tsv "$img" "$t" "$l" "$th" "$tm" "$bytes" "$size" compress "$st" "${#times[@]}" image file '' "$rss" "$oth" "$row" "$cmdtext"
      if [[ $st == ok ]]; then
        msg="$(printf '%.3f' "$tm") s, $bytes bytes ($(awk -v a="$bytes" -v b="$size" 'BEGIN { printf "%.3f", 100 * a / b }')%)"
      else
        msg="$st after $(printf '%.1f' "$tm") s${err:+ ($err)}"
      fi
      say "$img: $cmdtext ($k/$npoints, $((SECONDS - t_start)) s in): $msg${oth:+, other CPU $oth}"
    done
  done
done
say "done in $((SECONDS - t_start)) s${tsvout:+, record in $tsvout}"
((wrong)) && die "a spigz output did not decompress to the image (status wrong in the record)"
exit 0
}

#!/usr/bin/env bash
# bench.sh — spigz against pigz, gzip, igzip and libdeflate-gzip, side by side.
#
# usage: bench/bench.sh [options]
#   --images LIST   comma-separated images, in order (default:
#                   zeros-dense,data,ext4-usr,ext4-usr-dense,zeros-sparse)
#   --skip LIST     rows to leave out (repeatable): spigz-1, spigz-3,
#                   spigz-pipe, spigz-dd, cat-pipe, pigz, pigz-1, gzip,
#                   igzip-1-T1, igzip-1-TN, igzip-3-T1, igzip-3-TN (N: the
#                   --threads value), igzip-1, igzip-3 (both thread counts),
#                   igzip (every igzip row), libdeflate; pigz, gzip, igzip
#                   and libdeflate also leave out their restore rows
#   --threads N     threads for spigz, pigz and igzip (default 2); igzip also
#                   runs at -T 1
#   --level N       level 1-9 for spigz, pigz, gzip, libdeflate-gzip (default 6;
#                   spigz also runs -1 and -3, pigz also -1; igzip runs -1 and
#                   -3, its own scale is 0-3)
#   --timeout S     per-run time limit in seconds (default 300)
#   --runs N        spigz runs per image, the median is reported (default 3)
#   --quick         skip the content check of the 64 GiB spigz output
#   --wait-idle S   before each run wait up to S s for the rest of the machine
#                   to go quiet (< 0.15 cores busy); default 0 (do not wait)
#   --out FILE      also write the report to FILE (Markdown)
#   --tsv FILE      also write every measured row to FILE (tab-separated, one
#                   header line after '#' comment lines; see bench/README.md)
#   --dir DIR       image directory (default $BENCH_DIR, else /var/tmp/spigz-bench);
#                   missing images are built by bench/mkimages.sh first
#   --outdir DIR    where compressed outputs go while measured (default DIR/out)
#   --spigz PATH    the spigz under test (default $SPIGZ, else the spigz built
#                   in the checkout this script belongs to)
#   --restore-images LIST  images for the restore (decompression) section
#                   (default ext4-usr-dense): each is compressed once by spigz
#                   and by pigz, then spigz -d/-t, igzip -d, pigz -d/-t, gzip -d
#                   and libdeflate-gunzip are timed on those files
#   --no-restore    skip the restore section
#   --no-estimate   skip the estimate section (spigz --estimate against the
#                   compression section's sizes; ext4-usr-dense also at -1, -9)
#   --restore-only  skip the compression section (run only the restore one)
#
# The report (stdout, Markdown) has the machine, one table per image, the
# restore tables, the project's targets with PASS/FAIL, and the checks of
# spigz's outputs.  Progress goes to stderr.  Exit status: 0 all targets PASS
# and every spigz output verified; 1 spigz failed or produced a wrong output
# (or restored without the expected path: the index on spigz files, the
# sequential one on pigz files), or a usage/setup error; 2 outputs correct
# but a performance target FAILs.

# The whole script is one { ... } block: bash parses it completely before
# running it, so editing or updating this file during a long run is harmless.
{
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
t_start=${EPOCHREALTIME/./}

die() { printf 'bench: %s\n' "$*" >&2; exit 1; }
say() { printf 'bench: %s\n' "$*" >&2; }
usage() { sed -n '3,/^$/s/^# \{0,1\}//p' "$0"; exit "${1:-0}"; }

ALL_IMAGES=(zeros-dense data ext4-usr ext4-usr-dense zeros-sparse)

threads=2 level=6 timeout_s=300 runs=3 quick=0 mdout='' images_arg='' wait_idle=0 tsvout=''
restore_arg=ext4-usr-dense no_restore=0 restore_only=0 no_estimate=0
imgdir=${BENCH_DIR:-/var/tmp/spigz-bench} outbase=''
declare -A skip=()
skip_req=()

needarg() { [[ $# -ge 2 && -n $2 ]] || die "$1 needs a value (see --help)"; }
while (($#)); do
  case $1 in
    --images) needarg "$@"; images_arg=$2; shift ;;
    --skip) needarg "$@"
      IFS=, read -r -a sk <<<"$2"
      skip_req+=("${sk[@]}")
      shift ;;
    -p|--threads) needarg "$@"; threads=$2; shift ;;
    --level) needarg "$@"; level=$2; shift ;;
    --timeout) needarg "$@"; timeout_s=$2; shift ;;
    --runs) needarg "$@"; runs=$2; shift ;;
    --quick) quick=1 ;;
    --wait-idle) needarg "$@"; wait_idle=$2; shift ;;
    --out) needarg "$@"; mdout=$2; shift ;;
    --tsv) needarg "$@"; tsvout=$2; shift ;;
    --dir) needarg "$@"; imgdir=$2; shift ;;
    --outdir) needarg "$@"; outbase=$2; shift ;;
    --spigz) needarg "$@"; SPIGZ=$2; shift ;;
    --restore-images) needarg "$@"; restore_arg=$2; shift ;;
    --no-restore) no_restore=1 ;;
    --no-estimate) no_estimate=1 ;;
    --restore-only) restore_only=1 ;;
    -h|--help) usage 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
  shift
done
[[ $threads =~ ^[1-9][0-9]*$ ]] || die "--threads wants a positive integer"
[[ $level =~ ^[1-9]$ ]] || die "--level wants 1-9"
[[ $timeout_s =~ ^[1-9][0-9]*$ ]] || die "--timeout wants whole seconds"
[[ $runs =~ ^[1-9]$ ]] || die "--runs wants 1-9"
[[ $wait_idle =~ ^[0-9]+$ ]] || die "--wait-idle wants whole seconds"

# the compression rows, in the order they run.  igzip runs at -T 1 and at
# -T N (N = --threads; one row when N is 1).
IG1=(igzip-1-T1) IG3=(igzip-3-T1)
((threads == 1)) || IG1+=("igzip-1-T$threads") IG3+=("igzip-3-T$threads")
ALL_TOOLS=(spigz spigz-1 spigz-3 spigz-pipe spigz-dd cat-pipe pigz pigz-1 gzip "${IG1[@]}" "${IG3[@]}" libdeflate)
for t in "${skip_req[@]}"; do
  case $t in
    igzip) for x in "${IG1[@]}" "${IG3[@]}"; do skip[$x]=1; done ;;
    igzip-1) for x in "${IG1[@]}"; do skip[$x]=1; done ;;
    igzip-3) for x in "${IG3[@]}"; do skip[$x]=1; done ;;
    libdeflate-gzip) skip[libdeflate]=1 ;;
    spigz) die "spigz is the tool under test: it cannot be skipped" ;;
    *)
      case " ${ALL_TOOLS[*]:1} " in
        *" $t "*) skip[$t]=1 ;;
        *) die "unknown tool '$t' for --skip (known: ${ALL_TOOLS[*]:1} igzip-1 igzip-3 igzip)" ;;
      esac ;;
  esac
done

images=()
if [[ -n $images_arg ]]; then
  IFS=, read -r -a req <<<"$images_arg"
  for i in "${req[@]}"; do
    i=${i%.img}
    case " ${ALL_IMAGES[*]} " in *" $i "*) images+=("$i") ;; *) die "unknown image '$i' (known: ${ALL_IMAGES[*]})" ;; esac
  done
else
  images=("${ALL_IMAGES[@]}")
fi
((no_restore && restore_only)) && die "--no-restore and --restore-only leave nothing to run"
((restore_only)) && images=()
rimages=()
declare -A restore_set=()
if ((!no_restore)); then
  IFS=, read -r -a req <<<"$restore_arg"
  for i in "${req[@]}"; do
    i=${i%.img}
    case " ${ALL_IMAGES[*]} " in *" $i "*) ;; *) die "unknown image '$i' for --restore-images (known: ${ALL_IMAGES[*]})" ;; esac
    [[ -n ${restore_set[$i]:-} ]] && continue
    rimages+=("$i") restore_set[$i]=1
  done
fi

# ---- tools ------------------------------------------------------------------
if [[ -n ${SPIGZ:-} ]]; then
  spigz=$SPIGZ
  [[ $spigz == */* ]] || spigz=$(command -v "$spigz" || true)
  [[ -n $spigz && -f $spigz && -x $spigz ]] || die "the spigz to test, ${SPIGZ} (SPIGZ or --spigz), is not an executable file"
else
  spigz=$(cd "$here/.." && pwd -P)/spigz
  [[ -f $spigz && -x $spigz ]] || die "spigz was not built: no executable $spigz (run ./autogen.sh && ./configure && make, or set SPIGZ=/path/to/spigz)"
fi
command -v pigz >/dev/null || die "pigz is not installed (Debian package pigz): it is the reference for the targets"
command -v gzip >/dev/null || die "gzip is not installed (Debian package gzip)"
[[ -x /usr/bin/time ]] || die "/usr/bin/time is not installed (Debian package time)"
command -v timeout >/dev/null || die "timeout is missing (Debian package coreutils)"
command -v python3 >/dev/null || die "python3 is not installed (Debian package python3): it checks spigz's outputs"
have_igzip=1 have_libdeflate=1
# igzip's restore rows run unless every igzip compression row is skipped
igzip_restore=0
for x in "${IG1[@]}" "${IG3[@]}"; do [[ -n ${skip[$x]:-} ]] || igzip_restore=1; done
if ! command -v igzip >/dev/null; then
  have_igzip=0
  ((!igzip_restore)) || say "igzip is not installed (Debian package isal): skipping its rows"
  for x in "${IG1[@]}" "${IG3[@]}"; do skip[$x]=1; done
  igzip_restore=0
fi
if ! command -v libdeflate-gzip >/dev/null; then
  have_libdeflate=0
  [[ -n ${skip[libdeflate]:-} ]] || say "libdeflate-gzip is not installed (Debian package libdeflate-tools): skipping its row"
  skip[libdeflate]=1
fi
have_gunzip=1  # libdeflate-gunzip, for the restore section
command -v libdeflate-gunzip >/dev/null || have_gunzip=0
tools=()
for t in "${ALL_TOOLS[@]}"; do [[ -n ${skip[$t]:-} ]] || tools+=("$t"); done

# ---- images -----------------------------------------------------------------
t_img=${EPOCHREALTIME/./}
build=("${images[@]}" "${rimages[@]}")
only=$(IFS=,; echo "${build[*]}")
"$here/mkimages.sh" --only "$only" "$imgdir" || die "building the images failed"
t_img=$(( ${EPOCHREALTIME/./} - t_img ))
imgdir=$(cd "$imgdir" && pwd -P)

outbase=${outbase:-$imgdir/out}
mkdir -p "$outbase"
run=$(mktemp -d "$outbase/run.XXXXXX")
child=''
vpids=()
# shellcheck disable=SC2317  # called from the EXIT trap
cleanup() {
  local p
  [[ -n $child ]] && kill -TERM "$child" 2>/dev/null
  for p in "${vpids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$run"
}
trap cleanup EXIT
trap 'say interrupted; exit 130' INT TERM HUP

avail=$(df -P -B1 "$run" | awk 'NR==2 {print $4}')
((avail > 2 << 30)) || die "less than 2 GiB free in $outbase for the compressed outputs"

# ---- python helpers for the checks -------------------------------------------
cat >"$run/check.py" <<'PY'
"""check.py members GZ SIZE  -- the first gzip member inflates (zlib, CRC and
                                 ISIZE checked) to exactly SIZE bytes and every
                                 later member is empty;
   check.py zeros SIZE        -- stdin is exactly SIZE zero bytes;
   check.py bodysha GZ        -- sha256 of GZ after its gzip header (which holds
                                 the file name and time, not the content); in a
                                 spigz footer the fields that depend on the
                                 header's length (data_len, header_len,
                                 footer_crc) count as zeros."""
import hashlib, sys, zlib

def header_len(f):
    h = f.read(10)
    if len(h) < 10 or h[:3] != b'\x1f\x8b\x08' or h[3] & 0xe0:
        sys.exit('not a gzip header')
    flg, n = h[3], 10
    if flg & 4:
        xlen = int.from_bytes(f.read(2), 'little')
        f.read(xlen)
        n += 2 + xlen
    for bit in (8, 16):
        if flg & bit:
            while True:
                c = f.read(1)
                if not c:
                    sys.exit('truncated gzip header')
                n += 1
                if c == b'\0':
                    break
    if flg & 2:
        f.read(2)
        n += 2
    return n

def bodysha(path):
    with open(path, 'rb') as f:
        start = header_len(f)
        f.seek(0, 2)
        end = f.seek(0, 2)
        f.seek(max(end - 78, 0))
        foot = bytearray(f.read(78))
        spigz = len(foot) == 78 and end - 78 >= start and foot[12:14] == b'SF'
        if spigz:
            foot[28:44] = bytes(16)
            foot[64:68] = bytes(4)
            end -= 78
        f.seek(start)
        h, left = hashlib.sha256(), end - start
        while left > 0 and (buf := f.read(min(left, 1 << 20))):
            h.update(buf)
            left -= len(buf)
        if spigz:
            h.update(foot)
    print(h.hexdigest())

def members(path, size):
    with open(path, 'rb') as f:
        d, n, k = zlib.decompressobj(31), 0, 0
        rest = b''
        while not d.eof:
            buf = f.read(1 << 16)
            if not buf:
                sys.exit(f'first member is truncated after {n} bytes')
            out = d.decompress(buf, 1 << 22)
            n += len(out)
            while d.unconsumed_tail and not d.eof:
                n += len(d.decompress(d.unconsumed_tail, 1 << 22))
        rest = d.unused_data + f.read()
    if n != size:
        sys.exit(f'first member holds {n} bytes, the image has {size}')
    while rest:
        e = zlib.decompressobj(31)
        if e.decompress(rest) or not e.eof:
            sys.exit(f'member {k + 2} is not an empty gzip member')
        rest = e.unused_data
        k += 1
    print(f'1 data member of {n} bytes + {k} empty member(s)')

def zeros(size):
    B, n, f = 1 << 20, 0, sys.stdin.buffer
    z = bytes(B)
    while True:
        b = f.read(B)
        if not b:
            break
        if b != (z if len(b) == B else bytes(len(b))):
            sys.exit(f'non-zero byte in [{n}, {n + len(b)})')
        n += len(b)
    if n != size:
        sys.exit(f'{n} bytes inflated, the image has {size}')
    print(f'{n} zero bytes')

if sys.argv[1] == 'members':
    members(sys.argv[2], int(sys.argv[3]))
elif sys.argv[1] == 'bodysha':
    bodysha(sys.argv[2])
else:
    zeros(int(sys.argv[2]))
PY

# ---- report -------------------------------------------------------------------
if [[ -n $mdout ]]; then : >"$mdout" || die "cannot write $mdout"; fi
rep() {
  printf '%s\n' "$@"
  if [[ -n $mdout ]]; then printf '%s\n' "$@" >>"$mdout"; fi
}
# table: rows are TSV lines; the first is the header; a column whose header
# starts with '>' is right-aligned.  Renders as an aligned Markdown table.
table() {
  local out
  out=$(printf '%s\n' "$@" | awk -F'\t' '
    { for (i = 1; i <= NF; i++) { c[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) } if (NF > nf) nf = NF; nr = NR }
    END {
      for (i = 1; i <= nf; i++) { r[i] = substr(c[1, i], 1, 1) == ">"; if (r[i]) { c[1, i] = substr(c[1, i], 2) } }
      for (n = 1; n <= nr; n++) {
        line = "|"
        for (i = 1; i <= nf; i++) line = line " " sprintf(r[i] ? "%" w[i] "s" : "%-" w[i] "s", c[n, i]) " |"
        print line
        if (n == 1) {
          line = "|"
          for (i = 1; i <= nf; i++) { d = ""; for (j = 0; j < w[i]; j++) d = d "-"; line = line (r[i] ? " " substr(d, 2) ": |" : " " d " |") }
          print line
        }
      }
    }')
  rep "$out"
}
calc() { awk -v a="$2" -v b="${3:-0}" "BEGIN { printf \"$1\", $4 }"; }  # calc FMT A B EXPR

first_line() {  # first non-blank line, without the run directory, '|', tabs and excess
  local l
  l=$(sed -n '/[^[:space:]]/{s/[|]/\//g;s/\t/ /g;p;q}' "$1")
  l=${l//"${run:-/nonexistent}/"/}
  ((${#l} <= 80)) || l="${l:0:80}..."
  printf '%s\n' "$l"
}
# load: 1-minute load average (kernel-wide, so it shows other users of the
# machine too) and the CPU pressure of the last 10 s
load() {
  local l p
  l=$(cut -d' ' -f1 /proc/loadavg)
  p=$(sed -n 's/^some avg10=\([0-9.]*\).*/\1/p' /proc/pressure/cpu 2>/dev/null || true)
  printf 'loadavg %s%s' "$l" "${p:+, cpu pressure ${p}%}"
}
ver() { { "$@" 2>&1 || true; } | sed -n '1{s/[|]/\//g;p}'; }
debver() { dpkg-query -W -f '${Version}' "$1" 2>/dev/null || echo '?'; }

cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n1)
mem=$(awk '/^MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)
# shellcheck disable=SC1091
os=$( (. /etc/os-release && echo "$PRETTY_NAME") 2>/dev/null || echo '?')
spigz_v=$(ver "$spigz" -V)
stand_in=0
[[ $spigz_v == spigz* ]] || stand_in=1

rep "# spigz benchmark" ""
rep "- date: $(date '+%Y-%m-%d %H:%M:%S %Z')"
rep "- machine: ${cpu:-?}, $(nproc) cores online ($(lscpu 2>/dev/null | sed -n 's/^Thread(s) per core: *//p') thread(s) per core), $mem RAM"
rep "- system: $os, kernel $(uname -srm)"
rep "- images: $imgdir ($(df -P -T "$imgdir" | awk 'NR==2 {print $2}'), /usr sample $(sed -n 's/.*usr-list \([0-9a-f]*\).*/\1/p' "$imgdir/.ext4-usr.stamp" "$imgdir/.data.stamp" 2>/dev/null | sort -u | paste -sd, - || true))"
rep "- load at start: $(load) (anything but this bench running makes the numbers noisy)"
rep "- settings: threads $threads, level $level, timeout ${timeout_s} s per run, spigz median of $runs run(s); page cache warmed before each image"
if ((${#rimages[@]})); then
  rep "- restore section: $(IFS=,; echo "${rimages[*]}") (decompression of the image compressed by spigz and by pigz at -p $threads, default level)"
else
  rep "- restore section: not run (--no-restore)"
fi
((restore_only)) && rep "- compression section: not run (--restore-only)"
rep "- spigz: $spigz: $spigz_v"
if ((stand_in)); then
  rep "- **WARNING: SPIGZ is a stand-in (its -V does not say spigz): these numbers are not spigz's.**"
fi
rep "- pigz: $(ver pigz -V) (deb $(debver pigz))"
rep "- gzip: $(ver gzip -V) (deb $(debver gzip))"
((have_igzip)) && rep "- igzip: $(ver igzip -V) (deb isal $(debver isal))"
((have_libdeflate)) && rep "- libdeflate-gzip: $(ver libdeflate-gzip -V) (deb libdeflate-tools $(debver libdeflate-tools))"
if ((${#rimages[@]} && !have_gunzip)) && [[ -z ${skip[libdeflate]:-} ]]; then
  say "libdeflate-gunzip is not installed (Debian package libdeflate-tools): skipping its restore row"
fi
((${#images[@]})) && rep "" "Commands (IMG is the image file, OUT a file in $outbase; every tool reads IMG by name except the pipe rows spigz-pipe, spigz-dd and cat-pipe):" ""
# shellcheck disable=SC2016  # the pipe command is expanded by the inner bash
cmdline() {  # cmdline TOOL IMG -> sets cmd=()
  local l k
  case $1 in
    spigz) cmd=("$spigz" -c -p "$threads" "-$level" "$2") ;;
    spigz-[13]) cmd=("$spigz" -c -p "$threads" "-${1#spigz-}" "$2") ;;
    spigz-pipe) cmd=(bash -c 'set -o pipefail; cat -- "$1" | "$2" -c -p "$3" "-$4"' spigz-pipe "$2" "$spigz" "$threads" "$level") ;;
    spigz-dd) cmd=(bash -c 'set -o pipefail; dd if="$1" bs=16M status=none | "$2" -c -p "$3" "-$4"' spigz-dd "$2" "$spigz" "$threads" "$level") ;;
    cat-pipe) cmd=(bash -c 'set -o pipefail; cat -- "$1" | cat' cat-pipe "$2") ;;
    pigz) cmd=(pigz -c -p "$threads" "-$level" "$2") ;;
    pigz-1) cmd=(pigz -c -p "$threads" -1 "$2") ;;
    gzip) cmd=(gzip -c "-$level" "$2") ;;
    igzip-[0-3]-T*) l=${1#igzip-} k=${1##*-T}; cmd=(igzip -c "-${l%%-*}" -T "$k" "$2") ;;
    libdeflate) cmd=(libdeflate-gzip -c "-$level" "$2") ;;
  esac
}
# row_meta ROW: the row's program, level and threads, as the TSV records
# them (m_tool m_level m_threads)
row_meta() {
  case $1 in
    spigz) m_tool=spigz m_level=$level m_threads=$threads ;;
    spigz-[13]) m_tool=spigz m_level=${1#spigz-} m_threads=$threads ;;
    spigz-pipe|spigz-dd) m_tool=$1 m_level=$level m_threads=$threads ;;
    cat-pipe) m_tool=cat-pipe m_level=- m_threads=1 ;;
    pigz) m_tool=pigz m_level=$level m_threads=$threads ;;
    pigz-1) m_tool=pigz m_level=1 m_threads=$threads ;;
    gzip) m_tool=gzip m_level=$level m_threads=1 ;;
    igzip-*) m_tool=igzip m_level=${1#igzip-} m_threads=${1##*-T}; m_level=${m_level%%-*} ;;
    libdeflate) m_tool=libdeflate-gzip m_level=$level m_threads=1 ;;
  esac
}
declare -A what=(
  [spigz]="spigz -c -p $threads -$level IMG > OUT"
  [spigz-1]="spigz -c -p $threads -1 IMG > OUT"
  [spigz-3]="spigz -c -p $threads -3 IMG > OUT"
  [spigz-pipe]="cat IMG | spigz -c -p $threads -$level > OUT  (stdin is a pipe, as in dd | spigz)"
  [spigz-dd]="dd if=IMG bs=16M | spigz -c -p $threads -$level > OUT  (stdin is a pipe written in 16 MiB blocks)"
  [cat-pipe]="cat IMG | cat > /dev/null  (the pipe alone: the baseline of the two rows above)"
  [pigz]="pigz -c -p $threads -$level IMG > OUT"
  [pigz-1]="pigz -c -p $threads -1 IMG > OUT"
  [gzip]="gzip -c -$level IMG > OUT  (single-threaded)"
  [libdeflate]="libdeflate-gzip -c -$level IMG > OUT  (single-threaded; maps the whole file and needs an output buffer as large)"
)
for t in "${IG1[@]}" "${IG3[@]}"; do
  what[$t]="igzip -c -${t:6:1} -T ${t##*-T} IMG > OUT  (ISA-L, levels 0-3 only)"
done
if ((${#images[@]})); then for t in "${tools[@]}"; do rep "- $t: ${what[$t]}"; done; fi
rep "" "Each run: \`timeout $timeout_s /usr/bin/time -f '%e %M %U %S' CMD\`; time is wall clock (bash EPOCHREALTIME, µs) around it, RSS the peak of the process (for the pipe rows the largest of the processes in the pipe). MB/s = image bytes / time / 10^6; out/in = output bytes / image bytes; vs spigz = tool time / the time of spigz at the same level (spigz-1 for the -1 rows of pigz and igzip, spigz-3 for igzip's -3 rows, spigz for the rest); spigz's rows and the pipe rows report the median of $runs run(s) (the pipe rows run once on an image over 8 GiB); other CPU = cores busy with anything but the tool during the run (whole machine, /proc/stat, minus the tool's user+sys time; for spigz the largest over its runs): well above 0.05 means the run was disturbed." ""
if ((${#rimages[@]})); then
  rep "Restore section: IN is the spigz file or the pigz file of the image, OUT a regular file in $run/restore, deleted after each run, then sync; each run starts after a sync and a 1 s pause. spigz -d runs with -vv, which only adds its report line on stderr naming the path taken (\"parallel, through the index\" or \"sequential\", either perhaps followed by a comma and a detail); it is checked on every run, and each file spigz restores is compared with the image (cmp). MB/s = uncompressed bytes / time / 10^6; vs spigz = time / the time of spigz's row of the same kind on the same file (-d to /dev/null, -d to a file, -t); allocated = the allocated blocks of OUT times their size (stat %b * %B), for spigz after the cmp and an fsync, the largest over its runs; other CPU as above, and for a file output it includes the kernel's writeback of it. spigz's times are the median of $runs run(s), the other tools run once." ""
fi

# ---- the machine-readable record (--tsv) --------------------------------------------
# '#' lines (what ran, where, when), one header line, then one line per
# measured row, written as soon as it is measured.  Empty values are '-'.
TSV_HEAD="image	tool	level	threads	seconds	out_bytes	in_bytes	kind	status	runs	file	sink	alloc_bytes	rss_kib	other_cpu	row	command"
if [[ -n $tsvout ]]; then
  {
    printf '# spigz bench record: bench/bench.sh\n'
    printf '# date: %s\n' "$(date '+%Y-%m-%d %H:%M:%S %Z')"
    printf '# machine: %s, %s cores online, %s RAM\n' "${cpu:-?}" "$(nproc)" "$mem"
    printf '# spigz: %s\n' "$spigz_v"
    printf '# settings: threads %s, level %s, timeout %s s, runs %s\n' "$threads" "$level" "$timeout_s" "$runs"
    printf '%s\n' "$TSV_HEAD"
  } >"$tsvout" || die "cannot write $tsvout"
fi
# tsv FIELD...: one row of the record (the fields in TSV_HEAD's order)
tsv() {
  [[ -n $tsvout ]] || return 0
  local f line=''
  for f in "$@"; do line+="${f:--}	"; done
  printf '%s\n' "${line%	}" >>"$tsvout"
}

# ---- running ------------------------------------------------------------------
# busy CPU ticks of the whole machine (user nice system irq softirq steal)
busy_ticks() {
  local _c u n s _i _w q sq st _r
  read -r _c u n s _i _w q sq st _r </proc/stat
  echo $((u + n + s + q + sq + st))
}
clk_tck=$(getconf CLK_TCK 2>/dev/null || echo 100)
# median V...: the median of the numbers (the lower middle one of an even count)
median() {
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
# run_one TOOL IMG OUT: sets r_status (ok|timeout|failed) r_time (s) r_rss (KiB)
# r_other (cores used by others during the run, '' if unknown) r_err
run_one() {
  cmdline "$1" "$2"
  run_cmd "$3" "${cmd[@]}"
}
# run_cmd OUT CMD...: runs CMD with stdout to OUT and stderr to $run/err; sets
# the same r_* as run_one
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
  r_time=$(calc '%.6f' "$((t1 - t0))" 0 'a / 1e6')
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
    r_err=$(first_line "$run/err")
    [[ -n $r_err ]] || r_err="exit status $rc"
  fi
}

declare -A res_status res_time res_rss res_bytes res_other
# idle: wait up to $wait_idle s until the machine's other load is below 0.15 cores
idle() {
  ((wait_idle > 0)) || return 0
  local t0=$SECONDS b0 b1 c
  while :; do
    b0=$(busy_ticks); sleep 1; b1=$(busy_ticks)
    c=$(awk -v b="$((b1 - b0))" -v hz="$clk_tck" 'BEGIN { printf "%.2f", b / hz }')
    awk -v c="$c" 'BEGIN { exit !(c < 0.15) }' && return 0
    if ((SECONDS - t0 >= wait_idle)); then say "machine still busy ($c cores) after ${wait_idle} s: running anyway"; return 0; fi
  done
}
declare -A chk chk_runs chk_pipe  # per image: verification text; per image and row: run/pipe sameness
fail_correct=0
declare -A verified=()  # body sha256 of a verified spigz output -> which output it was
ext4_sha='' ext4d_sha=''
bodysha() { python3 "$run/check.py" bodysha "$1" 2>/dev/null || echo "invalid gzip header: $1"; }
# check_out IMG GZ SIZE ROW: 0 when GZ, ROW's output for IMG, checks out; sets
# vtext (what was found) and c_sha (its sha256 after the gzip header).  An
# output whose bytes after the header equal those of an output verified
# before (the same image at another level, or ext4-usr-dense against
# ext4-usr) is not checked again.
check_out() {
  local img=$1 gz=$2 size=$3 row=$4
  c_sha=$(bodysha "$gz")
  if [[ -n ${verified[$c_sha]:-} ]]; then
    vtext="identical after the gzip header to the verified ${verified[$c_sha]}"
    return 0
  fi
  if [[ $img == zeros-sparse ]]; then
    if ((quick)); then vtext="content check skipped (--quick)"; return 0; fi
    say "$img: checking $row's output (inflate and count $((size >> 30)) GiB of zeros)"
    verify_zeros "$gz" "$size" || return 1
  else
    say "$img: checking $row's output (gzip -t, gzip -dc | cmp, zlib member check)"
    verify_full "$imgdir/$img.img" "$gz" "$size" || return 1
  fi
  verified[$c_sha]="$row output of $img.img"
}

# verify IMG GZ SIZE LABEL: 0 when the output is right; appends to $vtext
verify_full() {
  local img=$1 gz=$2 size=$3 p1 p2 p3 r1=0 r2=0 r3=0
  timeout 3600 gzip -t "$gz" >"$run/v1" 2>&1 & p1=$!
  # shellcheck disable=SC2016
  timeout 3600 bash -c 'set -o pipefail; gzip -dc -- "$1" | cmp -- - "$2"' v "$gz" "$img" >"$run/v2" 2>&1 & p2=$!
  timeout 3600 python3 "$run/check.py" members "$gz" "$size" >"$run/v3" 2>&1 & p3=$!
  vpids=("$p1" "$p2" "$p3")
  wait "$p1" || r1=$?
  wait "$p2" || r2=$?
  wait "$p3" || r3=$?
  vpids=()
  local txt=''
  if ((r1 == 0)); then txt+="gzip -t ok"; else txt+="gzip -t FAILED ($(first_line "$run/v1"))"; fi
  if ((r2 == 0)); then txt+=", gzip -dc | cmp identical"; else txt+=", gzip -dc | cmp FAILED ($(first_line "$run/v2"))"; fi
  if ((r3 == 0)); then txt+=", zlib: $(first_line "$run/v3")"; else txt+=", zlib member check FAILED ($(first_line "$run/v3"))"; fi
  vtext=$txt
  ((r1 == 0 && r2 == 0 && r3 == 0))
}
verify_zeros() {  # the 64 GiB hole: one fast streaming inflate, zeros and length checked
  local gz=$1 size=$2 rc=0 dec
  if ((have_igzip)); then dec=igzip; else dec=gzip; fi
  # shellcheck disable=SC2016
  timeout 3600 bash -c 'set -o pipefail; "$1" -dc -- "$2" | python3 "$3" zeros "$4"' v "$dec" "$gz" "$run/check.py" "$size" >"$run/v1" 2>&1 &
  vpids=("$!")
  wait "$!" || rc=$?
  vpids=()
  if ((rc == 0)); then
    vtext="$dec -dc (CRC and length checked) | all $(first_line "$run/v1")"
  else
    vtext="$dec -dc | zero check FAILED ($(first_line "$run/v1"))"
  fi
  return "$rc"
}

# The restore section needs IMG compressed by `spigz -p N -c` and `pigz -p N -c`
# (default level): at -6 the compression runs above are exactly those, so
# their outputs are kept for it instead of being made a second time.
rdir=$run/restore
mkdir -p "$rdir"
keep_for_restore() {  # keep_for_restore IMG TOOL FILE: 0 when FILE was kept
  [[ $level == 6 && -n ${restore_set[$1]:-} ]] || return 1
  mv -f -- "$3" "$rdir/$1.$2.gz"
}

for img in "${images[@]}"; do
  path=$imgdir/$img.img
  size=$(stat -c %s "$path")
  read -r blk bsz < <(stat -c '%b %B' "$path")
  alloc=$((blk * bsz))
  t_i=${EPOCHREALTIME/./}
  if ((alloc > 0)); then
    say "$img: warming the page cache"
    cat -- "$path" >/dev/null
  fi
  rows=()
  sp_out="$run/$img.spigz.gz"
  for t in "${tools[@]}"; do
    out=$run/$img.$t.gz
    [[ $t == cat-pipe ]] && out=/dev/null
    # spigz's rows and the pipe rows: the median of $runs runs (a pipe
    # through the 64 GiB hole takes minutes: once there)
    n=1
    case $t in
      spigz|spigz-[13]) n=$runs ;;
      spigz-pipe|spigz-dd|cat-pipe) ((size > 8 << 30)) || n=$runs ;;
    esac
    times=() rssmax='' st=ok err='' bytes='' label='' othmax='' same=''
    for ((k = 1; k <= n; k++)); do
      o=$out
      if ((k > 1)) && [[ $out != /dev/null ]]; then o=$run/$img.$t.again.gz; fi
      ((n > 1)) && label=" (run $k/$n)"
      say "$img: $t$label"
      idle
      run_one "$t" "$path" "$o"
      if [[ $r_status != ok ]]; then st=$r_status err=$r_err times=("$r_time"); rssmax=$r_rss; break; fi
      times+=("$r_time")
      if [[ -n $r_rss ]] && { [[ -z $rssmax ]] || ((r_rss > rssmax)); }; then rssmax=$r_rss; fi
      if [[ -n $r_other ]] && { [[ -z $othmax ]] || awk -v a="$r_other" -v b="$othmax" 'BEGIN { exit !(a > b) }'; }; then othmax=$r_other; fi
      if [[ $o != "$out" ]]; then
        if cmp -s "$out" "$o"; then same=${same:-yes}; else same=no; fi
        rm -f "$o"
      fi
    done
    tm=$(median "${times[@]}")
    say "$img: $t: $st, $tm s${err:+ ($err)}"
    if [[ $st == ok && $out != /dev/null ]]; then bytes=$(stat -c %s "$out"); fi
    res_status[$img,$t]=$st res_time[$img,$t]=$tm res_rss[$img,$t]=$rssmax res_bytes[$img,$t]=$bytes res_other[$img,$t]=$othmax
    chk_runs[$img,$t]=$same
    row_meta "$t"
    sink='file'
    [[ $out == /dev/null ]] && sink=null
    tsv "$img" "$m_tool" "$m_level" "$m_threads" "$tm" "$bytes" "$size" compress "$st" "${#times[@]}" image "$sink" '' "$rssmax" "$othmax" "$t" "${what[$t]%%  (*}"
    # keep spigz's outputs for the checks (a pipe's only if it differs
    # from spigz's after the gzip header), pigz's for the restore section
    case $t in
      spigz|spigz-[13]) ;;
      spigz-pipe|spigz-dd)
        if [[ $st != ok ]]; then
          rm -f "$out"
        elif [[ ${res_status[$img,spigz]} == ok && $(bodysha "$sp_out") == "$(bodysha "$out")" ]]; then
          # a file's name and time go into the gzip header (-N, as pigz and
          # gzip do); from a pipe there are none: compare what follows it
          chk_pipe[$img,$t]=yes
          rm -f "$out"
        else
          chk_pipe[$img,$t]=no  # checked below
        fi ;;
      cat-pipe) ;;  # wrote to /dev/null
      pigz) if ! { [[ $st == ok ]] && keep_for_restore "$img" pigz "$out"; }; then rm -f "$out"; fi ;;
      *) rm -f "$out" ;;
    esac
    # the row; vs spigz: against spigz at the same level
    note=''
    ((${#times[@]} > 1)) && note="median of ${#times[@]}: $(printf '%.3f ' "${times[@]}")"
    case $t in
      spigz-pipe|spigz-dd) note+="${note:+; }stdin pipe" ;;
      cat-pipe) note+="${note:+; }the pipe alone, no compression" ;;
    esac
    ref=spigz
    case $t in
      spigz|spigz-[13]|cat-pipe) ref='' ;;
      pigz-1|igzip-1-*) ref='spigz-1' ;;
      igzip-3-*) ref='spigz-3' ;;
    esac
    ref_ok=0
    [[ -n $ref && ${res_status[$img,$ref]:-} == ok ]] && ref_ok=1
    if [[ $st == ok ]]; then
      mbs=$(calc '%.1f' "$size" "$tm" 'a / b / 1e6')
      ratio='-'
      [[ -n $bytes ]] && ratio=$(calc '%.3f%%' "$bytes" "$size" '100 * a / b')
      vs='-'
      ((ref_ok)) && vs=$(calc '%.1fx' "$tm" "${res_time[$img,$ref]}" 'a / b')
      [[ $ref_ok == 1 && $ref != spigz ]] && vs+=" ($ref)"
      rss='?'
      [[ -n $rssmax ]] && rss=$(calc '%.1f' "$rssmax" 0 'a / 1024')
      rows+=("$t	$(printf '%.3f' "$tm")	$mbs	${bytes:--}	$ratio	$vs	$rss	${othmax:--}	$note")
    elif [[ $st == timeout ]]; then
      mbs="<$(calc '%.1f' "$size" "$timeout_s" 'a / b / 1e6')"
      vs='-'
      ((ref_ok)) && vs=">$(calc '%.0fx' "$timeout_s" "${res_time[$img,$ref]}" 'a / b')"
      rows+=("$t	timeout	$mbs	-	-	$vs	-	-	killed after $timeout_s s")
    else
      rows+=("$t	failed	-	-	-	-	-	-	$err")
    fi
  done

  # ---- checks of spigz's outputs for this image
  vparts=() ok_img=1
  for t in spigz spigz-1 spigz-3 spigz-pipe spigz-dd; do
    [[ -n ${res_status[$img,$t]:-} ]] || continue  # skipped
    f=$run/$img.$t.gz
    if [[ ${res_status[$img,$t]} != ok ]]; then  # spigz failed or timed out
      vparts+=("$t ${res_status[$img,$t]}: nothing to check"); ok_img=0; continue
    fi
    if [[ ${chk_pipe[$img,$t]:-} == yes ]]; then
      vparts+=("$t: identical after the gzip header to spigz's")
      continue
    fi
    [[ -f $f ]] || continue
    if check_out "$img" "$f" "$size" "$t"; then vparts+=("$t: ok: $vtext"); else vparts+=("$t: FAILED: $vtext"); ok_img=0; fi
    if [[ $t == spigz ]]; then
      [[ $img == ext4-usr ]] && ext4_sha=$c_sha
      [[ $img == ext4-usr-dense ]] && ext4d_sha=$c_sha
    fi
    [[ $t == spigz ]] || rm -f "$f"
  done
  ((ok_img)) || fail_correct=1
  vtext=$(IFS=';'; echo "${vparts[*]}")
  vtext=${vtext//;/; }
  chk[$img]="$( ((ok_img)) && echo ok || echo FAILED ): $vtext"
  if ! { ((ok_img)) && keep_for_restore "$img" spigz "$sp_out"; }; then rm -f "$sp_out"; fi

  t_i=$(( ${EPOCHREALTIME/./} - t_i ))
  rep "## $img.img: $(calc '%.2f' "$size" 0 'a / 1073741824') GiB ($size bytes), $(calc '%.0f' "$alloc" 0 'a / 1048576') MiB allocated" ""
  table "tool	>time s	>MB/s	>output bytes	>out/in	>vs spigz	>RSS MiB	>other CPU	notes" "${rows[@]}"
  rep "" "spigz outputs: ${chk[$img]}" "" "(image done in $(calc '%.0f' "$t_i" 0 'a / 1e6') s)" ""
done

# ---- restore (decompression) ------------------------------------------------------
# Each restore image is compressed once by `spigz -p N -c` and by `pigz -p N -c`
# (default level, outside timing), then the decompressors run on those files.
declare -A rs_status rs_time rs_other rs_alloc rs_times rs_chk rs_err rs_size rs_refalloc rs_refname
rfail=0   # a spigz restore failed, differs from the image or took the wrong path
mib() { calc '%.1f' "$1" 0 'a / 1048576'; }
declare -A rlabel=(
  [sp.file]="spigz -d to a file, spigz file" [sp.null]="spigz -d to /dev/null, spigz file"
  [sp.test]="spigz -t, spigz file" [igzip.null]="igzip -d to /dev/null, spigz file"
  [pigz.null]="pigz -d to /dev/null, spigz file" [pigz.file]="pigz -d to a file, spigz file"
  [gzip.null]="gzip -d to /dev/null, spigz file" [gunzip.null]="libdeflate-gunzip to /dev/null, spigz file"
  [pigz.test]="pigz -t, spigz file" [psp.null]="spigz -d to /dev/null, pigz file"
  [psp.file]="spigz -d to a file, pigz file" [ppigz.null]="pigz -d to /dev/null, pigz file"
  [ppigz.file]="pigz -d to a file, pigz file"
  [pigzip.null]="igzip -d to /dev/null, pigz file" [pigzip.file]="igzip -d to a file, pigz file"
)
# what the record (--tsv) says of each row: tool|file|threads|command
declare -A rmeta=(
  [sp.file]="spigz -d|spigz|$threads|spigz -d -p $threads -o OUT IN"
  [sp.null]="spigz -d|spigz|$threads|spigz -d -p $threads -c IN > /dev/null"
  [sp.test]="spigz -t|spigz|$threads|spigz -t -p $threads IN"
  [igzip.null]="igzip -d|spigz|1|igzip -d -c IN > /dev/null"
  [pigz.null]="pigz -d|spigz|$threads|pigz -d -p $threads -c IN > /dev/null"
  [pigz.file]="pigz -d|spigz|$threads|pigz -d -p $threads -c IN > OUT"
  [gzip.null]="gzip -d|spigz|1|gzip -d -c IN > /dev/null"
  [gunzip.null]="libdeflate-gunzip|spigz|1|libdeflate-gunzip -c IN > /dev/null"
  [pigz.test]="pigz -t|spigz|$threads|pigz -t -p $threads IN"
  [psp.null]="spigz -d|pigz|$threads|spigz -d -p $threads -c IN > /dev/null"
  [psp.file]="spigz -d|pigz|$threads|spigz -d -p $threads -o OUT IN"
  [ppigz.null]="pigz -d|pigz|$threads|pigz -d -p $threads -c IN > /dev/null"
  [ppigz.file]="pigz -d|pigz|$threads|pigz -d -p $threads -c IN > OUT"
  [pigzip.null]="igzip -d|pigz|1|igzip -d -c IN > /dev/null"
  [pigzip.file]="igzip -d|pigz|1|igzip -d -c IN > OUT"
)
# rtsv KEY: the record's line for restore row KEY of $rimg
rtsv() {
  local key=$1 mt mf mth mc f inb outb=$size
  IFS='|' read -r mt mf mth mc <<<"${rmeta[$key]}"
  f=$sfile
  [[ $mf == pigz ]] && f=$pfile
  inb=${rs_size[$rimg,$mf]:-}
  [[ -n $inb || ! -f $f ]] || inb=$(stat -c %s "$f")
  [[ $key == *.test ]] && outb=''
  tsv "$rimg" "$mt" 6 "$mth" "${rs_time[$rimg,$key]:-}" "$outb" "$inb" restore "${rs_status[$rimg,$key]}" \
    "$(wc -w <<<"${rs_times[$rimg,$key]:-}")" "$mf" "${key#*.}" "${rs_alloc[$rimg,$key]:-}" '' "${rs_other[$rimg,$key]:-}" "$key" "$mc"
}
maxof() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a + 0 > b + 0) ? a : b }'; }
# rrun KEY KIND N EXPECT SINK CMD...: runs CMD N times (the median is kept in
# rs_*[$rimg,KEY]).  KIND: file (the output is $rout), null (/dev/null) or test.
# EXPECT: index or sequential for spigz -d (run with -vv, whose report line on
# stderr names the path taken: checked on every run; a file output is also
# compared with the image), test for spigz -t, - for the other tools.  SINK
# gets CMD's stdout.  Before each run: the previous output is deleted, sync,
# then a 1 s pause, so that no writeback of an earlier run overlaps it.
rrun() {
  local key=$1 kind=$2 n=$3 expect=$4 sink=$5 k tm st=ok err='' othmax='' allocmax=''
  local times=() paths=0 same=0 bad='' want='' label='' blk bsz need avail pm ptxt=''
  shift 5
  case $expect in
    # the report line's parenthesis, which may name more after a comma
    # ("(sequential, ISA-L)")
    index) want='parallel, through the index' ;;
    sequential) want='sequential' ;;
  esac
  if [[ $kind == file ]]; then  # room for the output: spigz's is sparse
    need=$((size + (256 << 20)))
    [[ $expect == - ]] || need=$((ref_alloc + (256 << 20)))
    avail=$(df -P -B1 "$rdir" | awk 'NR==2 {print $4}')
    if ((avail < need)); then
      rs_status[$rimg,$key]=skipped rs_err[$rimg,$key]="needs $(calc '%.1f' "$need" 0 'a / 1e9') GB free in $rdir, has $(calc '%.1f' "$avail" 0 'a / 1e9')"
      say "restore $rimg: ${rlabel[$key]}: skipped (${rs_err[$rimg,$key]})"
      rtsv "$key"
      return 0
    fi
  fi
  for ((k = 1; k <= n; k++)); do
    rm -f -- "$rout"
    sync
    sleep 1
    ((n > 1)) && label=" (run $k/$n)"
    say "restore $rimg: ${rlabel[$key]}$label"
    idle
    run_cmd "$sink" "$@"
    if [[ $r_status != ok ]]; then st=$r_status err=$r_err times=("$r_time"); break; fi
    times+=("$r_time")
    [[ -n $r_other ]] && othmax=$(maxof "$r_other" "$othmax")
    if [[ -n $want ]]; then
      if pm=$(grep -oE -- "\\(${want}(, [^)]*)?\\)" "$run/err"); then
        paths=$((paths + 1))
        pm=${pm%%$'\n'*} pm=${pm#(} ptxt=${pm%)}
      else
        bad+="run $k took the wrong path (stderr: $(first_line "$run/err")); "
      fi
    fi
    if [[ $kind == file ]]; then
      if [[ $expect != - ]]; then
        if cmp -s -- "$rout" "$cmpref"; then same=$((same + 1)); else bad+="run $k: the restored file differs from the image; "; fi
        sync -- "$rout"  # so that the allocation is final
      fi
      read -r blk bsz < <(stat -c '%b %B' "$rout")
      allocmax=$(maxof "$((blk * bsz))" "$allocmax")
      rm -f -- "$rout"
      sync
    fi
  done
  rm -f -- "$rout"
  tm=$(printf '%s\n' "${times[@]}" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
  say "restore $rimg: ${rlabel[$key]}: $st, $tm s${err:+ ($err)}"
  rs_status[$rimg,$key]=$st rs_time[$rimg,$key]=$tm rs_other[$rimg,$key]=$othmax
  rs_alloc[$rimg,$key]=$allocmax rs_err[$rimg,$key]=$err
  rs_times[$rimg,$key]=$(printf '%.3f ' "${times[@]}")
  rtsv "$key"
  if [[ $expect != - ]]; then  # a spigz row
    local c=''
    if [[ $st != ok ]]; then
      c="FAILED: spigz $st${err:+ ($err)}"
    elif [[ -n $bad ]]; then
      c="FAILED: ${bad%; }"
    else
      c=ok
      [[ -n $want ]] && c+=", ${ptxt:-$want} in $paths/${#times[@]} run(s)"
      [[ $kind == file ]] && c+=", identical to the image in $same/${#times[@]}"
    fi
    rs_chk[$rimg,$key]=$c
    [[ $c == ok* ]] || rfail=1
  fi
  return 0
}
# rrow KEY FILE COMMAND REFKEY NOTE: one row of the restore table (nothing for
# a tool that did not run); vs spigz = this time / the time of REFKEY
rrow() {
  local key=$1 file=$2 cm=$3 ref=$4 note=$5 st tm vs al mbs oth
  st=${rs_status[$rimg,$key]:-}
  [[ -n $st ]] || return 0
  case $st in
    ok)
      tm=${rs_time[$rimg,$key]}
      mbs=$(calc '%.1f' "$size" "$tm" 'a / b / 1e6')
      vs='-'
      if [[ $ref != "$key" && ${rs_status[$rimg,$ref]:-} == ok ]]; then vs=$(calc '%.2fx' "$tm" "${rs_time[$rimg,$ref]}" 'a / b'); fi
      al='-'
      [[ -n ${rs_alloc[$rimg,$key]} ]] && al=$(mib "${rs_alloc[$rimg,$key]}")
      oth=${rs_other[$rimg,$key]:--}
      if [[ -n ${rs_chk[$rimg,$key]:-} ]]; then  # a spigz row
        local rt=${rs_times[$rimg,$key]} c=${rs_chk[$rimg,$key]}
        [[ $c == ok* ]] || c="FAILED (see below)"
        [[ $rt == *' '*' '* ]] && note="median of $(wc -w <<<"$rt"): ${rt% }${note:+; }$note"
        note+="${note:+; }$c"
      fi
      rrows+=("$file	$cm	$(printf '%.3f' "$tm")	$mbs	$vs	$al	$oth	$note")
      ;;
    timeout)
      mbs="<$(calc '%.1f' "$size" "$timeout_s" 'a / b / 1e6')"
      vs='-'
      [[ ${rs_status[$rimg,$ref]:-} == ok && $ref != "$key" ]] && vs=">$(calc '%.1fx' "$timeout_s" "${rs_time[$rimg,$ref]}" 'a / b')"
      rrows+=("$file	$cm	timeout	$mbs	$vs	-	-	killed after $timeout_s s")
      ;;
    *) rrows+=("$file	$cm	$st	-	-	-	-	${rs_err[$rimg,$key]:-}") ;;
  esac
}
# rmake TOOL: the TOOL file of $rimg (kept from the compression section, or
# made now); sets made_note
rmake() {
  local f=$rdir/$rimg.$1.gz
  if [[ -s $f ]]; then made_note="kept from the compression run above"; return 0; fi
  say "restore $rimg: making the $1 file ($1 -p $threads -c $rimg.img)"
  if [[ $1 == spigz ]]; then run_cmd "$f" "$spigz" -p "$threads" -c "$path"; else run_cmd "$f" pigz -p "$threads" -c "$path"; fi
  if [[ $r_status != ok ]]; then
    made_note="$1 -p $threads -c $r_status${r_err:+ ($r_err)}"
    rm -f -- "$f"
    return 1
  fi
  made_note="made in $(printf '%.1f' "$r_time") s"
}
for rimg in "${rimages[@]}"; do
  t_i=${EPOCHREALTIME/./}
  path=$imgdir/$rimg.img
  size=$(stat -c %s "$path")
  sfile=$rdir/$rimg.spigz.gz pfile=$rdir/$rimg.pigz.gz rout=$rdir/$rimg.restored
  # the original sparse image, for the allocation: ext4-usr.img for
  # ext4-usr-dense (the same bytes, as mkimages.sh checks), else the image
  refimg=$path
  [[ $rimg == ext4-usr-dense ]] && refimg=$imgdir/ext4-usr.img
  cmpref=$refimg  # cmp reads holes much faster than written zeros
  read -r blk bsz < <(stat -c '%b %B' "$refimg")
  ref_alloc=$((blk * bsz))
  s_ok=1 p_ok=1
  rmake spigz || { s_ok=0; rfail=1; }
  s_note=$made_note
  rmake pigz || p_ok=0
  p_note=$made_note
  say "restore $rimg: warming the page cache"
  for f in "$sfile" "$pfile"; do [[ -f $f ]] && cat -- "$f" >/dev/null; done
  cat -- "$cmpref" >/dev/null
  if ((s_ok)); then
    rs_size[$rimg,spigz]=$(stat -c %s "$sfile")
    rrun sp.file file "$runs" index /dev/null "$spigz" -vv -d -p "$threads" -o "$rout" "$sfile"
    rrun sp.null null "$runs" index /dev/null "$spigz" -vv -d -p "$threads" -c "$sfile"
    rrun sp.test test "$runs" test /dev/null "$spigz" -t -p "$threads" "$sfile"
    if ((igzip_restore)); then
      rrun igzip.null null 1 - /dev/null igzip -d -c "$sfile"
    fi
    if [[ -z ${skip[pigz]:-} ]]; then
      rrun pigz.null null 1 - /dev/null pigz -d -p "$threads" -c "$sfile"
      rrun pigz.file file 1 - "$rout" pigz -d -p "$threads" -c "$sfile"
    fi
    [[ -n ${skip[gzip]:-} ]] || rrun gzip.null null 1 - /dev/null gzip -d -c "$sfile"
    if [[ -z ${skip[libdeflate]:-} ]] && ((have_gunzip)); then
      rrun gunzip.null null 1 - /dev/null libdeflate-gunzip -c "$sfile"
    fi
    [[ -n ${skip[pigz]:-} ]] || rrun pigz.test test 1 - /dev/null pigz -t -p "$threads" "$sfile"
  else
    rs_chk[$rimg,sp.file]="FAILED: no spigz file ($s_note)"
  fi
  if ((p_ok)); then
    rs_size[$rimg,pigz]=$(stat -c %s "$pfile")
    rrun psp.null null "$runs" sequential /dev/null "$spigz" -vv -d -p "$threads" -c "$pfile"
    rrun psp.file file "$runs" sequential /dev/null "$spigz" -vv -d -p "$threads" -o "$rout" "$pfile"
    if ((igzip_restore)); then
      rrun pigzip.null null 1 - /dev/null igzip -d -c "$pfile"
      rrun pigzip.file file 1 - "$rout" igzip -d -c "$pfile"
    fi
    if [[ -z ${skip[pigz]:-} ]]; then
      rrun ppigz.null null 1 - /dev/null pigz -d -p "$threads" -c "$pfile"
      rrun ppigz.file file 1 - "$rout" pigz -d -p "$threads" -c "$pfile"
    fi
  fi
  rm -f -- "$sfile" "$pfile" "$rout"

  rrows=()
  S='spigz file' P='pigz file'
  rrow sp.file "$S" "spigz -d -p $threads -o OUT" sp.file ''
  rrow sp.null "$S" "spigz -d -p $threads -c > /dev/null" sp.null ''
  rrow sp.test "$S" "spigz -t -p $threads" sp.test ''
  rrow igzip.null "$S" "igzip -d -c > /dev/null" sp.null "single-threaded (-T is for compression only)"
  rrow pigz.null "$S" "pigz -d -p $threads -c > /dev/null" sp.null "pigz inflates on one thread"
  rrow pigz.file "$S" "pigz -d -p $threads -c > OUT" sp.file "writes every byte"
  rrow gzip.null "$S" "gzip -d -c > /dev/null" sp.null "single-threaded"
  rrow gunzip.null "$S" "libdeflate-gunzip -c > /dev/null" sp.null "single-threaded, whole file in memory"
  rrow pigz.test "$S" "pigz -t -p $threads" sp.test ''
  rrow psp.null "$P" "spigz -d -p $threads -c > /dev/null" psp.null ''
  rrow psp.file "$P" "spigz -d -p $threads -o OUT" psp.file ''
  rrow pigzip.null "$P" "igzip -d -c > /dev/null" psp.null "single-threaded"
  rrow pigzip.file "$P" "igzip -d -c > OUT" psp.file "single-threaded, writes every byte"
  rrow ppigz.null "$P" "pigz -d -p $threads -c > /dev/null" psp.null ''
  rrow ppigz.file "$P" "pigz -d -p $threads -c > OUT" psp.file "writes every byte"

  t_i=$(( ${EPOCHREALTIME/./} - t_i ))
  rep "## Restore: $rimg.img, $(calc '%.2f' "$size" 0 'a / 1073741824') GiB ($size bytes)" ""
  rep "- spigz file: \`spigz -p $threads -c $rimg.img\`: ${rs_size[$rimg,spigz]:-?} bytes, $s_note"
  rep "- pigz file: \`pigz -p $threads -c $rimg.img\`: ${rs_size[$rimg,pigz]:-?} bytes, $p_note" ""
  if ((${#rrows[@]})); then
    table "file	command	>time s	>MB/s	>vs spigz	>allocated MiB	>other CPU	notes" "${rrows[@]}"
  fi
  if [[ ${rs_status[$rimg,sp.file]:-} == ok ]]; then
    ra=${rs_alloc[$rimg,sp.file]}
    rr='n/a'
    ((ref_alloc > 0)) && rr=$(calc '%.3f' "$ra" "$ref_alloc" 'a / b')
    rep "" "Allocated: the file spigz restored from the spigz file $ra bytes ($(mib "$ra") MiB), the original sparse image ${refimg##*/} $ref_alloc bytes ($(mib "$ref_alloc") MiB): $rr of it."
    rs_refalloc[$rimg]=$ref_alloc rs_refname[$rimg]=${refimg##*/}
  fi
  rc='' nk=0
  for k in sp.file sp.null sp.test psp.null psp.file; do
    [[ -n ${rs_chk[$rimg,$k]:-} ]] || continue
    nk=$((nk + 1))
    [[ ${rs_chk[$rimg,$k]} == ok* ]] || rc+="${rc:+; }${rlabel[$k]}: ${rs_chk[$rimg,$k]}"
  done
  if ((nk == 0)); then rc='nothing ran'; elif [[ -z $rc ]]; then rc="ok (the paths and the contents are in the notes)"; fi
  rep "" "spigz restores: $rc" "" "(restore done in $(calc '%.0f' "$t_i" 0 'a / 1e6') s)" ""
done

# ---- estimate (--estimate) ---------------------------------------------------------
# For each image of the compression section, at the bench's level: spigz
# --estimate against the size spigz wrote there, and the estimate's time
# against spigz's compression time.  ext4-usr-dense also at levels 1 and 9
# (the fast and the small levels), each compressed once more for its actual size and time.
erows=()
declare -A es_err es_in es_share
est_one() {  # est_one IMG LEVEL ACTUAL_BYTES COMPRESS_TIME
  local img=$1 lv=$2 actual=$3 ctime=$4 path="$imgdir/$1.img" sz lo hi err share inside
  # as the compression section: the image in the page cache (the restore
  # section has pushed it out since)
  [[ $img == zeros-sparse ]] || cat -- "$path" >/dev/null
  # the median of $runs runs, as the compression time it is set against
  local k times=()
  for ((k = 0; k < runs; k++)); do
    idle
    say "$img: spigz --estimate -$lv"
    run_cmd "$run/est.kv" "$spigz" --estimate -p "$threads" "-$lv" --format=kv "$path"
    if [[ $r_status != ok ]]; then
      erows+=("$img	-$lv	$actual	$r_status	-	-	-	-	-")
      tsv "$img" "spigz --estimate" "$lv" "$threads" "$r_time" '' "$(stat -c %s "$path")" estimate "$r_status" 1 image null '' '' '' estimate \
        "spigz --estimate -p $threads -$lv --format=kv IMG"
      es_in[$img,$lv]=failed
      return
    fi
    times+=("$r_time")
  done
  r_time=$(median "${times[@]}")
  sz=$(sed -n 's/^size=//p' "$run/est.kv") lo=$(sed -n 's/^size_low=//p' "$run/est.kv")
  hi=$(sed -n 's/^size_high=//p' "$run/est.kv")
  err=$(calc '%+.2f' "$sz" "$actual" '100 * (a - b) / b')
  inside=no
  awk -v a="$actual" -v l="$lo" -v h="$hi" 'BEGIN { exit !(l <= a && a <= h) }' && inside=yes
  share=$(calc '%.1f' "$r_time" "$ctime" '100 * a / b')
  es_err[$img,$lv]=$err es_in[$img,$lv]=$inside es_share[$img,$lv]=$share
  tsv "$img" "spigz --estimate" "$lv" "$threads" "$r_time" "$sz" "$(stat -c %s "$path")" estimate ok "$runs" image null '' '' '' estimate \
    "spigz --estimate -p $threads -$lv --format=kv IMG"
  erows+=("$img	-$lv	$actual	$sz	$err%	$lo .. $hi	$inside	$(printf '%.3f' "$r_time") s / $(printf '%.3f' "$ctime") s	$share%")
}
if ((!no_estimate && ${#images[@]})); then
  for img in "${images[@]}"; do
    [[ ${res_status[$img,spigz]:-} == ok ]] || continue
    est_one "$img" "$level" "${res_bytes[$img,spigz]}" "${res_time[$img,spigz]}"
  done
  if [[ " ${images[*]} " == *" ext4-usr-dense "* ]]; then
    for lv in 1 9; do
      [[ $lv == "$level" ]] && continue
      times=()
      cat -- "$imgdir/ext4-usr-dense.img" >/dev/null
      for ((k = 0; k < runs; k++)); do
        idle
        say "ext4-usr-dense: spigz -$lv (for the estimate's reference)"
        run_cmd "$outbase/est-ref.gz" "$spigz" -c -p "$threads" "-$lv" "$imgdir/ext4-usr-dense.img"
        [[ $r_status == ok ]] || break
        times+=("$r_time")
      done
      if [[ $r_status == ok ]]; then
        est_one ext4-usr-dense "$lv" "$(stat -c %s "$outbase/est-ref.gz")" "$(median "${times[@]}")"
      else
        erows+=("ext4-usr-dense	-$lv	spigz $r_status	-	-	-	-	-	-")
      fi
      rm -f "$outbase/est-ref.gz"
    done
  fi
  rep "## Estimate" "" "spigz --estimate -p $threads -LEVEL --format=kv IMG, against the size of spigz -c -p $threads -LEVEL IMG (the compression section's, or $runs more runs at levels 1 and 9 on ext4-usr-dense); time share = estimate time / compression time, each the median of $runs runs." ""
  table "image	level	>actual bytes	>predicted	>error	90% interval	actual inside	time (estimate / compression)	>time share" "${erows[@]}"
  rep ""
fi

# ---- targets ------------------------------------------------------------------
perf_fail=0 noisy=0
trows=()
have() { [[ " ${images[*]} " == *" $1 "* ]]; }
# ratio_target IMG NEED SIZECHECK(0/1) LABEL [ROW PEER]: PASS when PEER's
# time / ROW's time >= NEED (ROW spigz and PEER pigz unless given), and with
# SIZECHECK ROW's output is no larger than PEER's
ratio_target() {
  local img=$1 need=$2 sizechk=$3 label=$4 srow=${5:-spigz} pk=${6:-pigz} p s r res m
  if ! have "$img"; then trows+=("$label	not run	-	-"); return; fi
  s=${res_status[$img,$srow]:-}
  p=${res_status[$img,$pk]:-skipped}
  if [[ -z $s ]]; then trows+=("$label	$srow skipped	-	-"); return; fi
  if [[ $s != ok ]]; then trows+=("$label	$srow $s	-	FAIL"); perf_fail=1; return; fi
  case $p in
    ok) r=$(calc '%.2f' "${res_time[$img,$pk]}" "${res_time[$img,$srow]}" 'a / b') ;;
    timeout) r=$(calc '%.2f' "$timeout_s" "${res_time[$img,$srow]}" 'a / b') ;;
    *) trows+=("$label	$pk $p	-	n/a"); return ;;
  esac
  if [[ $p == ok && $pk == cat-pipe ]]; then
    m="${r}x cat-pipe's MB/s ($srow $(printf '%.3f' "${res_time[$img,$srow]}") s, cat-pipe $(printf '%.3f' "${res_time[$img,$pk]}") s"
    [[ ${res_status[$img,spigz]} == ok ]] && m+="; spigz from the file $(printf '%.3f' "${res_time[$img,spigz]}") s"
    m+=")"
  elif [[ $p == ok ]]; then
    m="${r}x $pk ($srow $(printf '%.3f' "${res_time[$img,$srow]}") s, $pk $(printf '%.3f' "${res_time[$img,$pk]}") s)"
  else
    m=">${r}x $pk ($srow $(printf '%.3f' "${res_time[$img,$srow]}") s, $pk timed out)"
  fi
  res=PASS
  awk -v r="$r" -v n="$need" 'BEGIN { exit !(r >= n) }' || res=FAIL
  if [[ $p == timeout && $res == FAIL ]]; then res=n/a; fi
  if ((sizechk)); then
    if [[ $p == ok ]]; then
      m+="; output $(calc '%.4f' "${res_bytes[$img,$srow]}" "${res_bytes[$img,$pk]}" 'a / b') of $pk's (${res_bytes[$img,$srow]} vs ${res_bytes[$img,$pk]} bytes)"
      local sb=${res_bytes[$img,$srow]} pb=${res_bytes[$img,$pk]}
      ((sb <= pb)) || res=FAIL
    fi
  fi
  [[ $res == FAIL ]] && perf_fail=1
  local needs=">= ${need}x"
  ((sizechk)) && needs+=", output <= $pk"
  local o1=${res_other[$img,$srow]:-0} o2=${res_other[$img,$pk]:-0}
  if awk -v a="$o1" -v b="$o2" 'BEGIN { exit !(a > 0.25 || b > 0.25) }'; then
    m+=" [disturbed: other CPU $o1 / $o2 cores]"
    noisy=1
  fi
  trows+=("$label	$m	$needs	$res")
}
# lead_target IMG ROW LABEL PEER...: PASS when ROW is faster than every PEER
# and its output no larger than any PEER's; n/a when a PEER did not finish
lead_target() {
  local img=$1 srow=$2 label=$3 s p pk m='' res=PASS na=0 st sb pt pb o oth='' n=0
  shift 3
  if ! have "$img"; then trows+=("$label	not run	-	-"); return; fi
  s=${res_status[$img,$srow]:-}
  if [[ -z $s ]]; then trows+=("$label	$srow skipped	-	-"); return; fi
  if [[ $s != ok ]]; then trows+=("$label	$srow $s	-	FAIL"); perf_fail=1; return; fi
  st=${res_time[$img,$srow]} sb=${res_bytes[$img,$srow]}
  o=${res_other[$img,$srow]:-0}
  awk -v a="$o" 'BEGIN { exit !(a > 0.25) }' && oth+=" $srow $o"
  for pk; do
    p=${res_status[$img,$pk]:-skipped}
    case $p in
      ok)
        pt=${res_time[$img,$pk]} pb=${res_bytes[$img,$pk]}
        n=$((n + 1))
        m+="${m:+; }$(calc '%.2f' "$pt" "$st" 'a / b')x $pk's speed, output $(calc '%.4f' "$sb" "$pb" 'a / b') of its ($(printf '%.3f' "$st") vs $(printf '%.3f' "$pt") s, $sb vs $pb bytes)"
        awk -v a="$pt" -v b="$st" 'BEGIN { exit !(a > b) }' || res=FAIL
        ((sb <= pb)) || res=FAIL
        o=${res_other[$img,$pk]:-0}
        if awk -v a="$o" 'BEGIN { exit !(a > 0.25) }'; then oth+=" $pk $o"; fi
        ;;
      timeout) m+="${m:+; }$pk timed out (output unknown)"; na=1 ;;
      *) m+="${m:+; }$pk $p"; na=1 ;;
    esac
  done
  if ((n == 0)) && [[ $res == PASS ]]; then na=1; fi
  [[ -n $m ]] || m="no peer row ran"
  if [[ $res == PASS ]] && ((na)); then res=n/a; fi
  [[ $res == FAIL ]] && perf_fail=1
  if [[ -n $oth ]]; then
    m+=" [disturbed: other CPU (cores):$oth]"
    noisy=1
  fi
  trows+=("$label	$m	faster, output <= each	$res")
}
if ((${#images[@]})); then  # the compression targets
ratio_target zeros-dense 15 0 "zeros-dense: spigz throughput"
if have zeros-sparse; then
  s=${res_status[zeros-sparse,spigz]}
  if [[ $s == ok ]]; then
    res=PASS
    awk -v t="${res_time[zeros-sparse,spigz]}" 'BEGIN { exit !(t < 1) }' || { res=FAIL; perf_fail=1; }
    trows+=("zeros-sparse: spigz time for the 64 GiB hole	$(printf '%.3f' "${res_time[zeros-sparse,spigz]}") s	< 1 s	$res")
  else
    trows+=("zeros-sparse: spigz time for the 64 GiB hole	spigz $s	< 1 s	FAIL"); perf_fail=1
  fi
else
  trows+=("zeros-sparse: spigz time for the 64 GiB hole	not run	-	-")
fi
ratio_target ext4-usr-dense 4 1 "ext4-usr-dense: throughput, size"
ratio_target data 2.5 1 "data: throughput, size"
# the fast levels against igzip on every image; reading a pipe on the
# written zeros, where compression is not what limits spigz (on the other
# images the pipe rows show the cost of the pipe against spigz's own row)
for img in "${images[@]}"; do
  lead_target "$img" spigz-1 "$img: spigz -1 vs igzip -1 at -T 1${IG1[1]:+ and -T $threads}" "${IG1[@]}"
  lead_target "$img" spigz-3 "$img: spigz -3 vs igzip -3 at -T 1${IG3[1]:+ and -T $threads}" "${IG3[@]}"
  [[ $img == zeros-dense ]] || continue
  # MB/s of the row / MB/s of cat-pipe is cat-pipe's time / the row's
  ratio_target "$img" 0.8 0 "$img: spigz-pipe (cat to spigz) MB/s vs cat-pipe (cat to cat)" spigz-pipe cat-pipe
  ratio_target "$img" 0.8 0 "$img: spigz-dd (dd bs=16M to spigz) MB/s vs cat-pipe" spigz-dd cat-pipe
done
# RSS
worst='' worst_img='' rss_bad=0 rss_res=PASS
for img in "${images[@]}"; do
  for t in spigz spigz-1 spigz-3 spigz-pipe; do
    v=${res_rss[$img,$t]:-}
    [[ -n $v ]] || continue
    if [[ -z $worst ]] || ((v > worst)); then worst=$v worst_img="$img ($t)"; fi
    ((v <= 64 * 1024)) || rss_bad=1
  done
done
if [[ -z $worst ]]; then rss_res=n/a; elif ((rss_bad)); then rss_res=FAIL; perf_fail=1; fi
trows+=("peak RSS of spigz at -p$threads, every image	$( [[ -n $worst ]] && echo "$(calc '%.1f' "$worst" 0 'a / 1024') MiB max, on $worst_img" || echo -)	<= 64 MiB	$rss_res")
cres=PASS
((fail_correct)) && cres=FAIL
trows+=("spigz outputs decompress to the image	$(for img in "${images[@]}"; do printf '%s ' "$img:${chk[$img]%%:*}"; done)	all ok	$cres")
fi

# the restore targets: judged on ext4-usr-dense (a used system disk's content); on any
# other restore image they are shown as informative and do not count
# rtarget IMG LABEL NEED SPKEY PEERKEY PEERNAME [KEY2 NAME2]: PASS when the
# time of PEERKEY / the time of SPKEY >= NEED; KEY2 is only shown
rtarget() {
  local img=$1 label=$2 need=$3 spk=$4 pk=$5 pn=$6 k2=${7:-} n2=${8:-} s p r m res o1 o2 st2
  s=${rs_status[$img,$spk]:-not run}
  p=${rs_status[$img,$pk]:-not run}
  [[ $img == ext4-usr-dense ]] || label+=" (informative)"
  if [[ $s != ok ]]; then
    res=FAIL
    if [[ $img == ext4-usr-dense ]]; then perf_fail=1; else res+=" (info)"; fi
    trows+=("$label	spigz $s	>= ${need}x	$res")
    return
  fi
  case $p in
    ok) r=$(calc '%.2f' "${rs_time[$img,$pk]}" "${rs_time[$img,$spk]}" 'a / b')
      m="${r}x $pn (spigz $(printf '%.3f' "${rs_time[$img,$spk]}") s, $pn $(printf '%.3f' "${rs_time[$img,$pk]}") s)" ;;
    timeout) r=$(calc '%.2f' "$timeout_s" "${rs_time[$img,$spk]}" 'a / b')
      m=">${r}x $pn (spigz $(printf '%.3f' "${rs_time[$img,$spk]}") s, $pn timed out)" ;;
    *) trows+=("$label	$pn $p	>= ${need}x	n/a"); return ;;
  esac
  res=PASS
  awk -v r="$r" -v n="$need" 'BEGIN { exit !(r >= n) }' || res=FAIL
  if [[ $p == timeout && $res == FAIL ]]; then res=n/a; fi
  if [[ -n $k2 ]]; then
    st2=${rs_status[$img,$k2]:-not run}
    if [[ $st2 == ok ]]; then
      m+="; $n2: $(calc '%.2f' "${rs_time[$img,$k2]}" "${rs_time[$img,$spk]}" 'a / b')x ($(printf '%.3f' "${rs_time[$img,$k2]}") s)"
    else
      m+="; $n2: $st2"
    fi
  fi
  o1=${rs_other[$img,$spk]:-0} o2=${rs_other[$img,$pk]:-0}
  if awk -v a="$o1" -v b="$o2" 'BEGIN { exit !(a > 0.25 || b > 0.25) }'; then
    m+=" [disturbed: other CPU $o1 / $o2 cores]"
    noisy=1
  fi
  if [[ $img == ext4-usr-dense ]]; then
    [[ $res == FAIL ]] && perf_fail=1
  else
    res+=" (info)"
  fi
  trows+=("$label	$m	>= ${need}x	$res")
}
for img in "${rimages[@]}"; do
  rtarget "$img" "$img restore: spigz -d to a file vs igzip -d to /dev/null" 1.5 sp.file igzip.null igzip
  rtarget "$img" "$img restore: spigz -d to a file vs pigz -d to /dev/null" 5 sp.file pigz.null pigz pigz.file "pigz -d to a file"
  # allocation of the restored file vs the original sparse image
  label="$img restore: allocated blocks vs the original sparse image"
  [[ $img == ext4-usr-dense ]] || label+=" (informative)"
  if [[ ${rs_status[$img,sp.file]:-} == ok && -n ${rs_refalloc[$img]:-} ]]; then
    a=${rs_alloc[$img,sp.file]} b=${rs_refalloc[$img]}
    if ((b > 0)); then
      r=$(calc '%.3f' "$a" "$b" 'a / b')
      res=PASS
      awk -v r="$r" 'BEGIN { exit !(r <= 1.05) }' || res=FAIL
      m="${r}x (${a} vs ${b} bytes of ${rs_refname[$img]})"
    else
      res=PASS
      ((a == 0)) || res=FAIL
      m="$a bytes, ${rs_refname[$img]} has none"
    fi
    if [[ $img == ext4-usr-dense ]]; then [[ $res == FAIL ]] && perf_fail=1; else res+=" (info)"; fi
    trows+=("$label	$m	<= 1.05x	$res")
  else
    res=FAIL
    if [[ $img == ext4-usr-dense ]]; then perf_fail=1; else res+=" (info)"; fi
    trows+=("$label	spigz ${rs_status[$img,sp.file]:-not run}	<= 1.05x	$res")
  fi
  rtarget "$img" "$img pigz file: spigz -d vs pigz -d, both to /dev/null" 1 psp.null ppigz.null pigz
  rtarget "$img" "$img pigz file: spigz -d vs pigz -d, both to a file" 1 psp.file ppigz.file pigz
  rtarget "$img" "$img pigz file: spigz -d -c vs igzip -d -c, both to /dev/null" 1 psp.null pigzip.null igzip
  rtarget "$img" "$img pigz file: spigz -d -o OUT (sparse) vs igzip -d -c > OUT" 1 psp.file pigzip.file igzip
  rtarget "$img" "$img: spigz -t vs pigz -t on the spigz file" 3 sp.test pigz.test pigz
done
if ((${#rimages[@]})); then
  ((rfail)) && fail_correct=1
  cres=PASS
  ((rfail)) && cres=FAIL
  rr=''
  for img in "${rimages[@]}"; do
    st=ok
    for k in sp.file sp.null sp.test psp.null psp.file; do
      [[ -z ${rs_chk[$img,$k]:-} || ${rs_chk[$img,$k]} == ok* ]] || st=FAILED
    done
    rr+="$img:$st "
  done
  trows+=("spigz restores equal the image, through the index (spigz file) or sequentially (pigz file)	$rr	all ok	$cres")
fi

# the estimate's targets
if ((!no_estimate && ${#images[@]})); then
  for lv in 1 6 9; do
    label="ext4-usr-dense -$lv: estimate error, time share"
    if [[ -z ${es_err[ext4-usr-dense,$lv]:-} ]]; then trows+=("$label	${es_in[ext4-usr-dense,$lv]:-not run}	-	-"); continue; fi
    res=PASS
    awk -v e="${es_err[ext4-usr-dense,$lv]}" -v t="${es_share[ext4-usr-dense,$lv]}" 'BEGIN { exit !(e <= 3 && e >= -3 && t <= 10) }' || { res=FAIL; perf_fail=1; }
    trows+=("$label	${es_err[ext4-usr-dense,$lv]}%, ${es_share[ext4-usr-dense,$lv]}% of the compression time	within 3%, <= 10%	$res")
  done
  for img in zeros-sparse ext4-usr; do
    [[ -n ${es_err[$img,$level]:-} ]] || continue
    res=PASS
    awk -v e="${es_err[$img,$level]}" 'BEGIN { exit !(e <= 1 && e >= -1) }' || { res=FAIL; perf_fail=1; }
    trows+=("$img (sparse): estimate error	${es_err[$img,$level]}%	within 1%	$res")
  done
  ins='' res=PASS
  for k in "${!es_in[@]}"; do
    ins+="${k/,/ -}:${es_in[$k]} "
    [[ ${es_in[$k]} == yes ]] || res=FAIL
  done
  [[ $res == FAIL ]] && perf_fail=1
  trows+=("the estimate's 90% interval holds the actual size	$ins	every image	$res")
fi

rep "## Targets" ""
if [[ $threads != 2 || $level != 6 ]]; then
  rep "(The targets are defined at -p2 -6; this run used -p$threads -$level, so they are only indicative.)" ""
fi
table "target	measured	need	result" "${trows[@]}"
if ((noisy)); then
  rep "" "**Some target runs were disturbed: other processes used more than 0.25 cores meanwhile (see the other CPU column). Rerun on a quiet machine (or with --wait-idle 60) before trusting these results.**"
fi

# ---- consistency (the brief's "same content, same bytes") -----------------------
crows=()
for img in "${images[@]}"; do
  for t in spigz spigz-1 spigz-3 spigz-pipe spigz-dd; do
    [[ -n ${chk_runs[$img,$t]:-} ]] && crows+=("$img: $t output identical across its runs	${chk_runs[$img,$t]}")
    [[ -n ${chk_pipe[$img,$t]:-} ]] && crows+=("$img: $t output (stdin) identical to spigz's from the file, after the gzip header	${chk_pipe[$img,$t]}")
  done
done
if have ext4-usr && have ext4-usr-dense && [[ -n ${ext4_sha:-} && -n ${ext4d_sha:-} ]]; then
  crows+=("ext4-usr sparse and dense: identical spigz outputs (after the gzip header)	$( [[ $ext4_sha == "$ext4d_sha" ]] && echo yes || echo no)")
fi
if have ext4-usr && have ext4-usr-dense && [[ ${res_status[ext4-usr,spigz]} == ok && ${res_status[ext4-usr-dense,spigz]} == ok ]]; then
  crows+=("ext4-usr: spigz on the sparse file vs the dense file	$(calc '%.2fx faster' "${res_time[ext4-usr-dense,spigz]}" "${res_time[ext4-usr,spigz]}" 'a / b')")
fi
if ((${#crows[@]})); then
  rep "" "## Consistency (informative)" ""
  table "check	result" "${crows[@]}"
fi

t_total=$(( ${EPOCHREALTIME/./} - t_start ))
rep "" "Load at the end: $(load)." "" "Bench took $(calc '%d min %02d s' "$t_total" 0 'int(a / 6e7), int(a / 1e6) % 60') (image check/build $(calc '%.0f' "$t_img" 0 'a / 1e6') s)."
((stand_in)) && rep "" "**WARNING: SPIGZ was a stand-in ($spigz_v): not spigz's numbers.**"
[[ -n $mdout ]] && say "report written to $mdout"
if ((fail_correct)); then exit 1; fi
if ((perf_fail)); then exit 2; fi
exit 0
}

#!/usr/bin/env bash
# plot.sh — PNG charts from the records of bench/bench.sh --tsv and
# bench/frontier.sh.
#
# usage: bench/plot.sh [--out DIR] [--images LIST] FILE.tsv...
#   --out DIR       where the charts go (default: the current directory)
#   --images LIST   only these images (default: every image in the records)
#
# Writes, with gnuplot (Debian package gnuplot-nox):
#   frontier-IMAGE.png  per image: wall time (log scale) against the output
#                       size (% of the input), one series per tool and thread
#                       count, its points (labelled with the level) joined in
#                       level order: the speed/size frontier; a dashed line
#                       marks cat IMG | cat when the record has it; runs that
#                       timed out or failed have no size and are listed below
#                       the chart
#   restore.png         restore time per decompressor and compressed file
#                       (spigz's, pigz's), one panel per restore image
# A point measured in more than one row (several records, or bench.sh and
# frontier.sh) is drawn at the median time and size (the lower middle of an
# even count).  The machine and the date come from the records' '#' lines.

{
set -euo pipefail
export LC_ALL=C

die() { printf 'plot: %s\n' "$*" >&2; exit 1; }
say() { printf 'plot: %s\n' "$*" >&2; }
usage() { sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit "${1:-0}"; }

outdir=. images_arg=''
files=()
while (($#)); do
  case $1 in
    --out) [[ $# -ge 2 && -n $2 ]] || die "--out needs a directory"; outdir=$2; shift ;;
    --images) [[ $# -ge 2 && -n $2 ]] || die "--images needs a list"; images_arg=$2; shift ;;
    -h|--help) usage 0 ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) files+=("$1") ;;
  esac
  shift
done
((${#files[@]})) || die "no record given (bench/bench.sh --tsv FILE, bench/frontier.sh --tsv FILE)"
for f in "${files[@]}"; do [[ -r $f ]] || die "cannot read $f"; done
command -v gnuplot >/dev/null || die "gnuplot is not installed (Debian package gnuplot-nox)"
mkdir -p "$outdir"
tmp=$(mktemp -d)
if [[ -n ${PLOT_KEEP:-} ]]; then say "keeping $tmp (PLOT_KEEP is set)"; else trap 'rm -rf "$tmp"' EXIT; fi

# ---- read the records ------------------------------------------------------------------
# One awk pass: the '#' lines give the machine and the date; each file's header
# line names the columns.  Writes in $tmp:
#   meta            machine<TAB>..., date<TAB>... (unique, in order)
#   images          image<TAB>in_bytes, in order of appearance
#   c.IMAGE         series<TAB>tool<TAB>threads<TAB>level<TAB>seconds<TAB>pct<TAB>n
#                   (the median of the rows of that point)
#   cat.IMAGE       the median seconds of cat IMG | cat
#   bad.IMAGE       what timed out or failed, one per line
#   r.IMAGE         file<TAB>label<TAB>seconds<TAB>MB/s<TAB>status, in order
: >"$tmp/images"
awk -F'\t' -v tmp="$tmp" -v want="$images_arg" '
  function med(s,   a, n, i, j, t) {
    n = split(s, a, " ")
    for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return a[int((n + 1) / 2)]
  }
  function img_ok(im) { return want == "" || index("," want ",", "," im ",") > 0 }
  function seen_img(im, ib) { if (!(im in imgs)) { imgs[im] = ib; imgorder[++nimg] = im } else if (imgs[im] == "-" && ib != "-") imgs[im] = ib }
  FNR == 1 { hdr = 0 }
  /^#/ {
    if ($0 ~ /^# machine: /) { v = substr($0, 12); if (!(v in mseen)) { mseen[v] = 1; machines = machines (machines == "" ? "" : "; ") v } }
    if ($0 ~ /^# date: /) { v = substr($0, 9); if (d0 == "" || v < d0) d0 = v; if (v > d1) d1 = v }
    next
  }
  !hdr { for (i = 1; i <= NF; i++) col[$i] = i; hdr = 1
         if (!("image" in col) || !("seconds" in col) || !("kind" in col)) { print "plot: " FILENAME ": not a bench record (no image, seconds, kind columns)" > "/dev/stderr"; exit 2 }
         next }
  {
    im = $col["image"]; kind = $col["kind"]; st = $col["status"]; tool = $col["tool"]
    if (!img_ok(im)) next
    sec = $col["seconds"]; ob = $col["out_bytes"]; ib = $col["in_bytes"]; th = $col["threads"]; lv = $col["level"]
    if (kind == "compress") {
      seen_img(im, ib)
      if (tool == "cat-pipe") { if (st == "ok") cat[im] = cat[im] " " sec; next }
      if (tool == "spigz-pipe" || tool == "spigz-dd") next   # the same points as spigz, from a pipe
      if (st != "ok") {
        d = tool " -" lv (th > 1 ? " (" th " threads)" : "") ": " st (st == "timeout" ? " after " sprintf("%.0f", sec) " s" : "")
        if (!((im, d) in bseen)) { bseen[im, d] = 1; bad[im] = bad[im] d "\n" }
        next
      }
      if (ob !~ /^[0-9]+$/ || ib !~ /^[0-9]+$/ || ib == 0) next
      oc = ("other_cpu" in col) ? $col["other_cpu"] : "-"
      if (oc ~ /^[0-9.]+$/) { nrun[im]++; if (oc + 0 > 0.25) nbusy[im]++ }
      ser = tool (th == 1 ? " (1 thread)" : " (" th " threads)")
      if (tool == "igzip") ser = "igzip -T " th
      else if (tool == "spigz" || tool == "pigz") ser = tool " -p " th
      else if (tool == "bgzip" && th > 1) ser = "bgzip -@ " th
      k = im SUBSEP ser SUBSEP lv
      if (!(k in pt)) { pt[k] = 1; ptorder[++npt] = k; ptool[k] = tool; pth[k] = th }
      psec[k] = psec[k] " " sec; ppct[k] = ppct[k] " " (100 * ob / ib); pn[k]++
    } else if (kind == "restore") {
      seen_img(im, ob)
      cm = $col["command"]; sub(/ IN$/, "", cm); sub(/ IN /, " ", cm)
      k = im SUBSEP $col["file"] SUBSEP cm
      if (!(k in rt)) { rt[k] = 1; rorder[++nr] = k; rst[k] = st; rob[k] = ob }
      if (st == "ok") { rsec[k] = rsec[k] " " sec; rst[k] = "ok" }
      oc = ("other_cpu" in col) ? $col["other_cpu"] : "-"
      if (oc ~ /^[0-9.]+$/ && oc + 0 > rload[im] + 0) rload[im] = oc
    }
  }
  END {
    printf "machine\t%s\ndate\t%s\n", (machines == "" ? "machine not recorded" : machines), (d0 == "" ? "date not recorded" : d0 == d1 ? d0 : "measured " d0 " to " d1) > (tmp "/meta")
    for (i = 1; i <= nimg; i++) printf "%s\t%s\n", imgorder[i], imgs[imgorder[i]] > (tmp "/images")
    for (i = 1; i <= npt; i++) {
      k = ptorder[i]; split(k, p, SUBSEP)
      printf "%s\t%s\t%s\t%s\t%s\t%s\t%d\n", p[2], ptool[k], pth[k], p[3], med(psec[k]), med(ppct[k]), pn[k] > (tmp "/c." p[1])
    }
    for (im in cat) printf "%s\n", med(cat[im]) > (tmp "/cat." im)
    for (im in bad) printf "%s", bad[im] > (tmp "/bad." im)
    for (im in rload) printf "%s\n", rload[im] > (tmp "/rload." im)
    for (im in nrun) printf "%d %d\n", nbusy[im], nrun[im] > (tmp "/busy." im)
    for (i = 1; i <= nr; i++) {
      k = rorder[i]; split(k, p, SUBSEP)
      s = (rst[k] == "ok") ? med(rsec[k]) : "-"
      mbs = (s != "-" && rob[k] ~ /^[0-9]+$/) ? sprintf("%.0f", rob[k] / s / 1e6) : "-"
      printf "%s\t%s\t%s\t%s\t%s\n", p[2], p[3], s, mbs, rst[k] > (tmp "/r." p[1])
    }
  }
' "${files[@]}" || die "reading the records failed"

machine=$(sed -n 's/^machine\t//p' "$tmp/meta")
date=$(sed -n 's/^date\t//p' "$tmp/meta")
q() { local s=${1//\\/\\\\}; s=${s//\"/\\\"}; s=${s//$'\n'/\\n}; printf '"%s"' "$s"; }  # a gnuplot string
human() { awk -v b="$1" 'BEGIN { if (b !~ /^[0-9]+$/) { print "size unknown"; exit }
  if (b >= 2^30) printf "%.2f GiB", b / 2^30; else printf "%.0f MiB", b / 2^20 }'; }

# a fixed colour per tool, so that every chart reads the same
color() {
  case $1 in
    spigz) echo '#d62728' ;; pigz) echo '#1f77b4' ;; gzip) echo '#7f7f7f' ;;
    igzip) echo '#2ca02c' ;; libdeflate-gzip) echo '#ff7f0e' ;; bgzip) echo '#9467bd' ;;
    *) echo '#8c564b' ;;
  esac
}

made=()
# ---- frontier-IMAGE.png -------------------------------------------------------------------
while IFS=$'\t' read -r img inb; do
  [[ -s $tmp/c.$img ]] || continue
  g=$tmp/frontier.$img.gp
  # one data file per series, sorted by level
  mapfile -t sers < <(cut -f1 "$tmp/c.$img" | awk '!s[$0]++' | awk '{ print (index($0, "spigz") == 1 ? 0 : 1) "\t" $0 }' | sort -t$'\t' -k1,1n -k2,2 | cut -f2)
  plots=() n=0 multi=0
  for s in "${sers[@]}"; do
    n=$((n + 1))
    awk -F'\t' -v s="$s" '$1 == s' "$tmp/c.$img" | sort -t$'\t' -k4,4n >"$tmp/s.$img.$n"
    tool=$(cut -f2 "$tmp/s.$img.$n" | head -n1)
    th=$(cut -f3 "$tmp/s.$img.$n" | head -n1)
    awk -F'\t' '$7 > 1 { f = 1 } END { exit !f }' "$tmp/s.$img.$n" && multi=1
    lw=1.5 dt=1 pt=7
    [[ $tool == spigz ]] && lw=2.5
    if [[ $th == 1 ]] && grep -qP "^$tool\t" <(cut -f2,3 "$tmp/c.$img" | awk -F'\t' '$2 > 1'); then dt=2 pt=6; fi
    plots+=("$(q "$tmp/s.$img.$n") using 5:6 with linespoints lw $lw dt $dt pt $pt ps 1.1 lc rgb '$(color "$tool")' title $(q "$s")")
    plots+=("$(q "$tmp/s.$img.$n") using 5:6:4 with labels offset char 0.9,0.55 font ',8' tc rgb '$(color "$tool")' notitle")
  done
  caption="Each point is one level (its number beside it), joined in level order; lower and further left is better. Wall time, page cache warm."
  ((multi)) && caption+=" Points measured more than once: the median."
  if [[ -s $tmp/busy.$img ]]; then
    read -r nb nt <"$tmp/busy.$img"
    ((nb == 0)) || caption+=" $nb of the $nt rows ran while other work kept more than 0.25 cores busy: those times are high."
  fi
  if [[ -s $tmp/bad.$img ]]; then
    caption+=$'\n'"No size (not drawn): $(paste -sd';' "$tmp/bad.$img" | sed 's/;/; /g')"
  fi
  caption=$(fold -s -w 200 <<<"$caption")
  nlines=$(wc -l <<<"$caption")
  bm=$((4 + nlines))
  {
    hpx=$((820 + 14 * nlines))
    printf 'set terminal pngcairo size 1280,%d noenhanced font "DejaVu Sans,11"\n' "$hpx"
    printf 'set output %s\n' "$(q "$outdir/frontier-$img.png")"
    printf 'set title %s font ",14"\n' "$(q "Speed and size: $img.img ($(human "$inb")), every tool at every level"$'\n'"$machine; $date")"
    printf 'set datafile separator "\\t"\nset logscale x 10\nset format x "%%g"\nset mxtics 10\n'
    printf 'set xlabel "compression time (s, wall clock, log scale)"\n'
    printf 'set ylabel "output size (%% of the input)"\n'
    printf 'set grid xtics mxtics ytics lc rgb "#dddddd"\n'
    printf 'set key outside right top box opaque title "tool (threads)"\n'
    # the x range: a little room around the fastest and the slowest point
    xr=$( { cut -f5 "$tmp/c.$img"; [[ -s $tmp/cat.$img ]] && cat "$tmp/cat.$img"; } |
      awk 'NR == 1 || $1 < lo { lo = $1 } $1 > hi { hi = $1 } END { if (lo <= 0) lo = 1e-3; printf "%g:%g", lo / 1.6, hi * 1.6 }')
    printf 'set xrange [%s]\nset bmargin %d\nset offsets 0, 0, graph 0.05, graph 0.05\n' "$xr" "$bm"
    # tics at 1, 2 and 5 of every decade in the range
    awk -v r="$xr" 'BEGIN { split(r, a, ":"); s = ""
      for (e = int(log(a[1]) / log(10)) - 1; e <= int(log(a[2]) / log(10)) + 1; e++)
        for (m = 1; m <= 5; m += (m == 1 ? 1 : 3)) { v = m * 10 ^ e; if (v >= a[1] && v <= a[2]) s = s (s == "" ? "" : ", ") sprintf("\"%g\" %g", v, v) }
      if (s != "") print "set xtics (" s ")" }'
    printf 'set label 1 %s at screen 0.01, screen %s left font ",9"\n' "$(q "$caption")" "$(awk -v n="$nlines" -v h="$hpx" 'BEGIN { printf "%.4f", (14 * n) / h }')"
    if [[ -s $tmp/cat.$img ]]; then
      c=$(cat "$tmp/cat.$img")
      printf 'set arrow 1 from %s, graph 0 to %s, graph 1 nohead dt 3 lw 1.5 lc rgb "#444444"\n' "$c" "$c"
      printf 'set label 2 %s at %s, graph 0.97 rotate by 90 right offset char -0.8,0 font ",9" tc rgb "#444444"\n' "$(q "cat IMG | cat: $(printf '%.3f' "$c") s")" "$c"
    fi
    printf 'plot '
    sep=''
    for p in "${plots[@]}"; do printf '%s%s' "$sep" "$p"; sep=$', \\\n     '; done
    printf '\n'
  } >"$g"
  gnuplot "$g" 2>"$tmp/gp.err" || { cat "$tmp/gp.err" >&2; die "gnuplot failed on $g"; }
  [[ -s $tmp/gp.err ]] && sed 's/^/plot: gnuplot: /' "$tmp/gp.err" >&2
  made+=("$outdir/frontier-$img.png")
done <"$tmp/images"

# ---- restore.png ------------------------------------------------------------------------
rimgs=()
while IFS=$'\t' read -r img _; do [[ -s $tmp/r.$img ]] && rimgs+=("$img"); done <"$tmp/images"
if ((${#rimgs[@]})); then
  g=$tmp/restore.gp
  h=100
  for img in "${rimgs[@]}"; do h=$((h + 130 + 34 * $(wc -l <"$tmp/r.$img"))); done
  {
    printf 'set terminal pngcairo size 1280,%d noenhanced font "DejaVu Sans,11"\n' "$h"
    printf 'set output %s\n' "$(q "$outdir/restore.png")"
    printf 'set multiplot layout %d,1 title %s font ",14"\n' "${#rimgs[@]}" \
      "$(q "Restore: time per decompressor, on spigz's file and on pigz's file of the same image"$'\n'"$machine; $date")"
    printf 'set datafile separator "\\t"\nset style fill solid 0.85 border -1\nset grid xtics lc rgb "#dddddd"\nset yrange [*:*]\nset offsets 0, 0, 0.5, 0.5\n'
    printf 'set xlabel "restore time (s, wall clock; page cache warm; OUT is a regular file, /dev/null is no output)"\n'
    printf 'set key outside right top box title "compressed file"\nset lmargin 34\n'
  } >"$g"
  for img in "${rimgs[@]}"; do
    # y position: rows in order, a gap between the files
    awk -F'\t' 'BEGIN { OFS = "\t" } { if (NR > 1 && $1 != f) y -= 0.6; f = $1; print y + 0, $0; y-- }' "$tmp/r.$img" >"$tmp/ry.$img"
    inb=$(awk -F'\t' -v i="$img" '$1 == i { print $2 }' "$tmp/images")
    xmax=$(awk -F'\t' '$4 != "-" && $4 > m { m = $4 } END { print m * 1.45 + 0.001 }' "$tmp/ry.$img")
    {
      load=''
      [[ -s $tmp/rload.$img ]] && load="; other load during the runs: up to $(cat "$tmp/rload.$img") cores"
      printf 'set title %s\n' "$(q "$img.img ($(human "$inb")) restored$load")"
      printf 'set xrange [0:%s]\n' "$xmax"
      printf 'set ytics scale 0 font ",10"\n'
      np=0 pl=''
      for f in spigz pigz; do
        awk -F'\t' -v f="$f" '$2 == f && $4 != "-"' "$tmp/ry.$img" >"$tmp/ry.$img.$f"
        [[ -s $tmp/ry.$img.$f ]] || continue
        col='#d62728'
        [[ $f == pigz ]] && col='#1f77b4'
        pl+="${pl:+, }$(q "$tmp/ry.$img.$f") using (\$4/2):1:(\$4/2):(0.38):ytic(3) with boxxyerror lc rgb '$col' title $(q "$f file")"
        pl+=", $(q "$tmp/ry.$img.$f") using 4:1:(strcol(5) eq '-' ? sprintf(' %.3f s', \$4) : sprintf(' %.3f s, %s MB/s', \$4, strcol(5))) with labels left font ',9' notitle"
        np=$((np + 1))
      done
      # rows without a time: named, with their status
      awk -F'\t' '$4 == "-"' "$tmp/ry.$img" >"$tmp/ry.$img.none"
      if [[ -s $tmp/ry.$img.none ]]; then
        pl+="${pl:+, }$(q "$tmp/ry.$img.none") using (0):1:(sprintf(' %s', strcol(6))):ytic(3) with labels left font ',9' notitle"
      fi
      printf 'plot %s\n' "$pl"
    } >>"$g"
  done
  printf 'unset multiplot\n' >>"$g"
  gnuplot "$g" 2>"$tmp/gp.err" || { cat "$tmp/gp.err" >&2; die "gnuplot failed on $g"; }
  [[ -s $tmp/gp.err ]] && sed 's/^/plot: gnuplot: /' "$tmp/gp.err" >&2
  made+=("$outdir/restore.png")
fi
((${#made[@]})) || die "nothing to draw: no compress or restore rows with a time"
for f in "${made[@]}"; do say "wrote $f"; done
exit 0
}

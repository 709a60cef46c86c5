#!/bin/bash
# paths.sh — path races and same-file checks (doc/DESIGN.md, "Paths and
# identity"): what spigz creates, renames or removes is reached through its
# directory's descriptor, and no output overwrites an input.
#   1. -r: a directory swapped for a link mid-walk leads nowhere outside
#      the tree (the swap made by tests/race.so at a chosen call: no sleeps)
#   2. in place: a directory component swapped, or the input's name saved
#      over, just before the input is removed: no other file is lost
#   3. -r LINK with and without -f, -k, -c: as gzip 1.12
#   4. --bad-map never overwrites the input, the output, the compared
#      target or an existing file (without -f); its failures are status 1,
#      apart from --rescue's 2; a failed write leaves nothing
#   5. --export-index: -o and -c >> onto the input are refused
#   6. -o: a dangling link decided up front (-f replaces it, as gzip), -o -
#      is stdout, a device or FIFO written is the one checked
#   7. block devices: -o /dev/loopN /dev/loopN (and another node of it, a
#      partition's range on a second loop device of the image, the image
#      behind the device, stdout, --bad-map) refused, the device intact
# Needs root for mknod and loop devices; where losetup cannot attach one,
# the rest runs and the test exits 77 naming what was not checked.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=tests/lib.sh
. "${srcdir:-$(dirname "$0")/..}/tests/lib.sh"
# shellcheck source=tests/fslib.sh
. "${srcdir:-$(dirname "$0")/..}/tests/fslib.sh"

need gzip cmp diff find timeout env mknod python3 sfdisk
: "${RACE_SO:?RACE_SO must point at the race shim (tests/race.so)}"
: "${FAULT_SO:?FAULT_SO must point at the fault injection shim (tests/fault.so)}"
[ -f "$RACE_SO" ] || fail "race shim $RACE_SO is missing (make tests/race.so)"
[ -f "$FAULT_SO" ] || fail "fault shim $FAULT_SO is missing (make tests/fault.so)"
[ "$FAILS" -eq 0 ] || { finish; exit 1; }

W=$T/w
mkdir -p "$W"
cd "$W" || exit 1
SKIPPED=

# sp [VAR=VALUE...] -- ARG...: spigz ARG... in $W with that environment;
# stdout in $T/out, stderr in $T/err; sets RC and CMD.
sp() {
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    CMD="${envs[*]} spigz $*"
    timeout "$HANG" env "${envs[@]}" "$SPIGZ" "$@" > "$T/out" 2> "$T/err"
    RC=$?
}
# race VAR=VALUE... -- ARG...: sp under the race shim, its log in $T/race.
race() {
    rm -f "$T/race"
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    sp LD_PRELOAD="$RACE_SO" RACE_LOG="$T/race" "${envs[@]}" "$@"
}
errtext() { tr '\n' '|' < "$T/err" | head -c 400; }
rc_is() {
    if [ "$RC" -eq "$2" ]; then pass; else fail "$1: '$CMD' exited $RC, expected $2 ($(errtext))"; fi
}
err_has() {
    if grep -qF -- "$2" "$T/err"; then pass; else fail "$1: stderr of '$CMD' lacks '$2': $(errtext)"; fi
}
err_lacks() {
    if grep -qF -- "$2" "$T/err"; then fail "$1: stderr of '$CMD' has '$2': $(errtext)"; else pass; fi
}
# raced DESC: the shim acted (the window was reached; else the case proves nothing).
raced() {
    if [ -s "$T/race" ]; then pass; else fail "$1: the race shim never acted (no call matched)"; fi
}
# same_tree DESC A B: A and B hold the same names and bytes.
same_tree() {
    if diff -r "$2" "$3" > "$T/diff" 2>&1; then pass
    else fail "$1: $2 differs from $3: $(head -c 300 "$T/diff" | tr '\n' '|')"; fi
}
gz_is() {
    if [ -f "$2" ] && gzip -dc < "$2" 2>/dev/null | cmp -s - "$3"; then pass
    else fail "$1: $2 does not decode to $3 (after '$CMD')"; fi
}
same() { if cmp -s "$2" "$3"; then pass; else fail "$1: $2 differs from $3 (after '$CMD')"; fi; }
absent() { if [ -e "$2" ] || [ -L "$2" ]; then fail "$1: $2 exists (after '$CMD')"; else pass; fi; }
# no_tmp DESC DIR: no temporary name (.NAME.XXXXXX) left in DIR.
no_tmp() {
    local left
    left=$(find "$2" -maxdepth 1 -name '.*.??????' | tr '\n' ' ')
    if [ -z "$left" ]; then pass; else fail "$1: temporary files left: $left"; fi
}

# ==== 1. -r: a directory swapped for a link during the walk ====
section "1. -r with a directory swapped for a link mid-walk"
# tree/sub holds x; outside/ (the victim) holds a file x of its own (x.gz
# with -d: VICTIM), nothing a run over it would refuse to make.
mktree() {
    rm -rf tree outside outside.ref
    mkdir -p tree/sub outside
    echo a > tree/a
    seq 1 2000 > tree/sub/x
    seq 5 9000 > outside/x
    [ "${1:-x}" = x ] || gzip outside/x
    cp -a outside outside.ref
}
# When spigz opens tree/sub/x (the directory already entered), tree/sub
# becomes a link to ../outside: a walk by path opens outside/x.
mktree
race RACE_ON=open RACE_NAME=x RACE_MOVE=tree/sub:tree/sub.away RACE_LINK=../outside:tree/sub -- -r tree
raced "-r, swap at the open of a file inside"
rc_is "-r, swap at the open of a file inside" 0
same_tree "-r, swap at the open of a file inside: outside untouched" outside outside.ref
gz_is "-r, swap at the open: the tree's own file compressed where it moved" tree/sub.away/x.gz <(seq 1 2000)
# Between the check that tree/sub is a directory and its opening: a walk by
# path (opendir) follows the link.
mktree
race RACE_ON=stat RACE_AFTER=1 RACE_NAME=sub RACE_MOVE=tree/sub:tree/sub.away \
    RACE_LINK=../outside:tree/sub -- -r tree
raced "-r, swap after the directory was checked"
rc_is "-r, swap after the directory was checked: the link is refused" 1
err_has "-r, swap after the check" "tree/sub: Too many levels of symbolic links"
same_tree "-r, swap after the check: outside untouched" outside outside.ref
# The same when decompressing: tree/sub holds x.gz.
mktree x.gz
gzip tree/sub/x
race RACE_ON=open RACE_NAME=x.gz RACE_MOVE=tree/sub:tree/sub.away RACE_LINK=../outside:tree/sub -- -dr tree
raced "-dr, swap at the open of a file inside"
same_tree "-dr, swap at the open: outside untouched" outside outside.ref
same "-dr, swap at the open: the tree's own file decompressed" tree/sub.away/x <(seq 1 2000)
# -rf: a link to a directory inside the tree is "a directory", never walked.
mktree
ln -s ../../outside tree/sub/l
sp -- -rf tree
rc_is "-rf with a link to a directory inside the tree" 2
err_has "-rf with a link to a directory inside" "tree/sub/l is a directory -- ignored"
same_tree "-rf with a link to a directory inside: outside untouched" outside outside.ref

# ==== 2. in place: the input removed only while it is the file read ====
section "2. in-place removal through the directory's descriptor"
# After the output is renamed, before the input goes: d becomes a link to
# other/, which holds a file of the input's name.
mkpair() {
    rm -rf d d.away other
    mkdir d other
    seq 1 3000 > d/f
    seq 7 7777 > other/f
    cp other/f other.ref
}
mkpair
race RACE_ON=unlink RACE_NAME=f RACE_MOVE=d:d.away RACE_LINK=other:d -- d/f
raced "compress in place, swap before the removal"
rc_is "compress in place, swap before the removal" 0
same "compress in place, swap before the removal: the other file survives" other/f other.ref
gz_is "compress in place, swap: the output" d.away/f.gz <(seq 1 3000)
absent "compress in place, swap: the input itself removed" d.away/f
mkpair
gzip d/f
mv other/f other/f.gz
cp other/f.gz other.ref
race RACE_ON=unlink RACE_NAME=f.gz RACE_MOVE=d:d.away RACE_LINK=other:d -- -d d/f.gz
raced "decompress in place, swap before the removal"
rc_is "decompress in place, swap before the removal" 0
same "decompress in place, swap: the other file survives" other/f.gz other.ref
same "decompress in place, swap: the output" d.away/f <(seq 1 3000)
absent "decompress in place, swap: the input itself removed" d.away/f.gz
# The input's name saved over (an editor's rename) after the output got its
# name: the new file stays, a warning says why.
mkpair
seq 1 10 > d/f.new
race RACE_ON=any RACE_ARM=rename:f.gz RACE_NAME=f RACE_MOVE=d/f.new:d/f -- d/f
raced "compress in place, the name saved over"
rc_is "compress in place, the name saved over: a warning" 2
err_has "compress in place, the name saved over" "d/f: not removed: the name no longer leads to the file that was read"
same "compress in place, the name saved over: the new file kept" d/f <(seq 1 10)
gz_is "compress in place, the name saved over: the output" d/f.gz <(seq 1 3000)
mkpair
gzip d/f
seq 1 10 | gzip > d/f.gz.new
cp d/f.gz.new d/new.ref
race RACE_ON=any RACE_ARM=rename:f RACE_NAME=f.gz RACE_MOVE=d/f.gz.new:d/f.gz -- -d d/f.gz
raced "decompress in place, the name saved over"
rc_is "decompress in place, the name saved over: a warning" 2
same "decompress in place, the name saved over: the new file kept" d/f.gz d/new.ref

# ==== 3. -r LINK: as gzip 1.12 ====
section "3. -r LINK with and without -f, as gzip"
# gzip -r LINK refuses the link (ELOOP, status 1) unless -f or -c.
# linkrun TOOL OPTS: in a fresh $T/l.NAME, TOOL OPTS link (link -> dir);
# the status and the files after, in $T/l.NAME/st.
linkrun() {
    local d=$T/l.${1##*/}
    rm -rf "$d" && mkdir -p "$d/dir/sub" && cd "$d" || return 1
    seq 1 500 > dir/sub/x && echo y > dir/y && ln -s dir link
    case $2 in -d*) gzip -r dir ;; esac
    "$1" "$2" link > /dev/null 2> err
    echo "status $?" > st
    find . -path ./err -prune -o -path ./st -prune -o -print | sort >> st
    cd "$W" || exit 1
}
for opts in -r -rf -rk -rc -dr -drf; do
    linkrun gzip "$opts"
    linkrun "$SPIGZ" "$opts"
    if cmp -s "$T/l.gzip/st" "$T/l.spigz/st"; then pass
    else fail "$opts LINK: gzip: $(tr '\n' ' ' < "$T/l.gzip/st"), spigz: $(tr '\n' ' ' < "$T/l.spigz/st")"; fi
done
linkrun "$SPIGZ" -r
grep -q "link: Too many levels of symbolic links" "$T/l.spigz/err" && pass ||
    fail "-r LINK: the message names the link ($(cat "$T/l.spigz/err"))"

# ==== 4. --bad-map ====
section "4. --bad-map: never over the input, the output or the target"
head -c 300000 /dev/urandom > img
"$SPIGZ" -c img > b.gz
cp b.gz b.ref
cp img img.ref
bm_refused() { # DESC [STATUS]: status 1 (--compare's trouble: 2), named, nothing left behind
    rc_is "$1" "${2:-1}"
    err_has "$1: says why" "the map would overwrite it"
    no_tmp "$1" .
}
# kept DESC FILE REF: FILE is still REF (else the failure, and REF put back
# so that the next case starts as it should).
kept() { if cmp -s "$2" "$3"; then pass; else fail "$1: $2 changed (after '$CMD')"; cp "$3" "$2"; fi; }
sp -- -t --bad-map b.gz b.gz
bm_refused "-t --bad-map FILE FILE"
kept "-t --bad-map FILE FILE: the backup intact" b.gz b.ref
ln -s b.gz blink
sp -- -t --bad-map blink b.gz
bm_refused "-t --bad-map LINK-TO-FILE FILE"
kept "-t --bad-map through a link: the backup intact" b.gz b.ref
sp -- -l --bad-map b.gz b.gz
bm_refused "-l --bad-map FILE FILE"
kept "-l --bad-map FILE FILE: intact" b.gz b.ref
sp -- -d -o out --bad-map out b.gz
bm_refused "-d -o OUT --bad-map OUT"
absent "-d -o OUT --bad-map OUT: no output" out
cp img out.old
sp -- -d -f -o out.old --bad-map out.old b.gz
bm_refused "-d -f -o OUT --bad-map OUT (OUT exists)"
kept "-d -f -o OUT --bad-map OUT: the old OUT kept" out.old img.ref
sp -- -dc --bad-map o.raw b.gz
rc_is "-dc --bad-map M (stdout elsewhere)" 0
# shellcheck disable=SC2094 # the same file in and out: the refusal is the test
timeout "$HANG" "$SPIGZ" -dc --bad-map o2.raw b.gz > o2.raw 2> "$T/err"
RC=$? CMD="spigz -dc --bad-map o2.raw b.gz > o2.raw"
bm_refused "-dc --bad-map STDOUT-FILE"
# --compare's statuses are cmp's: a refusal is trouble, 2
sp -- --compare b.gz img --bad-map img
bm_refused "--compare B T --bad-map T" 2
kept "--compare B T --bad-map T: the target intact" img img.ref
sp -- --compare b.gz img --bad-map b.gz
bm_refused "--compare B T --bad-map B" 2
kept "--compare B T --bad-map B: the backup intact" b.gz b.ref
sp -- --rescue --bad-map img -c img
bm_refused "--rescue -c IN --bad-map IN"
kept "--rescue --bad-map IN: the input intact" img img.ref
sp -- --rescue -k --bad-map img.gz img
bm_refused "--rescue -k IN --bad-map IN.gz (the output)"
absent "--rescue -k --bad-map IN.gz: no output" img.gz
# An existing map: kept without -f (status 1, before any work: no output),
# replaced with -f.
echo keep > m
cp m m.ref
sp -- -d -o out --bad-map m b.gz
rc_is "--bad-map EXISTING without -f" 1
err_has "--bad-map EXISTING without -f" "m: already exists; not overwritten"
kept "--bad-map EXISTING without -f: kept" m m.ref
absent "--bad-map EXISTING without -f: refused before any work (no output)" out
sp -- -d -f -o out --bad-map m b.gz
rc_is "--bad-map EXISTING with -f" 0
grep -q '^# Mapfile' m && pass || fail "--bad-map EXISTING with -f: not replaced by a map"
no_tmp "--bad-map EXISTING with -f" .
ln -s nowhere dm
sp -- -t --bad-map dm b.gz
rc_is "--bad-map DANGLING-LINK without -f" 1
sp -- -t -f --bad-map dm b.gz
rc_is "--bad-map DANGLING-LINK with -f" 0
[ -f dm ] && [ ! -L dm ] && [ ! -e nowhere ] && pass ||
    fail "--bad-map DANGLING-LINK with -f: the link is not replaced by the map"
# Status: sectors --rescue could not read are 2; a map that could not be
# written is 1, whatever else happened.
BAD="4096+512"
sp LD_PRELOAD="$FAULT_SO" FAULT_EIO_FILE="$W/img" FAULT_EIO_RANGES="$BAD" -- --rescue -c --bad-map rm.map img
rc_is "--rescue with a bad sector and its map" 2
grep -q '^0x00001000  0x00000200  -' rm.map && pass || fail "--rescue: the map lacks the bad sector"
sp LD_PRELOAD="$FAULT_SO" FAULT_EIO_FILE="$W/img" FAULT_EIO_RANGES="$BAD" -- --rescue -c --bad-map rm.map img
rc_is "--rescue with a bad sector, the map refused (exists)" 1
# A map write that fails (disk full; stdout a pipe, which the shim spares):
# status 1, the backup whole, no map and no temporary left.
rm -f rm.map
CMD="spigz --rescue -c --bad-map rm.map img | cat (ENOSPC on files)"
timeout "$HANG" env LD_PRELOAD="$FAULT_SO" FAULT_EIO_FILE="$W/img" FAULT_EIO_RANGES="$BAD" \
    FAULT_WRITE_ENOSPC_AFTER=0 "$SPIGZ" --rescue -c --bad-map rm.map img 2> "$T/err" | cat > r.gz
RC=${PIPESTATUS[0]}
rc_is "--rescue, the map's write fails: status 1, not the 2 of bad sectors" 1
err_has "--rescue, the map's write fails" "rm.map: No space left on device"
gzip -t r.gz 2>/dev/null && pass || fail "--rescue, the map's write fails: the backup is not whole"
absent "--rescue, the map's write fails: no map" rm.map
no_tmp "--rescue, the map's write fails" .
sp LD_PRELOAD="$FAULT_SO" FAULT_FSYNC_EIO=file -- -t --bad-map fm.map b.gz
rc_is "-t --bad-map, the map's fsync fails" 1
absent "-t --bad-map, the map's fsync fails: no map" fm.map
no_tmp "-t --bad-map, the map's fsync fails" .
# Interrupted mid-run (stopped by the fault shim once 1 MiB is read, the
# FIFO says when; the signal ends its wait): SIGINT removes both temporary
# files, the output's and the map's, and spigz dies by it.
SD=$T/stall
rm -rf "$SD" && mkdir -p "$SD" && mkfifo "$SD/stalled" "$SD/go"
head -c $((8 * 1024 * 1024)) /dev/urandom > big
(ulimit -c 0 && LD_PRELOAD=$FAULT_SO FAULT_STALL_AFTER=1048576 FAULT_STALL_DIR=$SD \
    exec env --default-signal=INT "$SPIGZ" --rescue -k --bad-map big.map big) 2> "$T/err" &
pid=$!
if timeout "$HANG" sh -c 'read -r _ < "$1"' sh "$SD/stalled"; then
    tmps=$(find . -maxdepth 1 -name '.big.*' | sort | tr '\n' ' ')
    case $tmps in
        *.big.gz.*.big.map.*) pass ;;
        *) fail "--rescue --bad-map mid-run: expected the output's and the map's temporary files, found '$tmps'" ;;
    esac
    kill -INT "$pid"
    wait "$pid"
    RC=$? CMD="spigz --rescue -k --bad-map big.map big (SIGINT)"
    rc_is "--rescue --bad-map, SIGINT mid-run" 130
    no_tmp "--rescue --bad-map, SIGINT mid-run" .
    absent "--rescue --bad-map, SIGINT mid-run: no map" big.map
    absent "--rescue --bad-map, SIGINT mid-run: no output" big.gz
else
    kill -9 "$pid" 2> /dev/null
    wait "$pid"
    fail "spigz --rescue --bad-map never reached its stall: $(errtext)"
fi
"$SPIGZ" --help | grep -A3 -- "--bad-map FILE" | grep -q "status 1" && pass ||
    fail "--help does not say --bad-map's failures are status 1"

# ==== 5. --export-index onto its input ====
section "5. --export-index: -o and -c >> onto the input refused"
cp b.ref x.gz
sp -- --export-index=gztool -f -o x.gz x.gz
rc_is "--export-index -f -o IN IN" 1
err_has "--export-index -f -o IN IN" "x.gz: input and output are the same file"
kept "--export-index -f -o IN IN: the backup intact" x.gz b.ref
ln -s x.gz xl
sp -- --export-index=gztool -f -o xl x.gz
rc_is "--export-index -f -o LINK-TO-IN IN" 1
kept "--export-index -o LINK-TO-IN IN: intact" x.gz b.ref
CMD="spigz --export-index=gztool -c x.gz >> x.gz"
# shellcheck disable=SC2094 # the same file in and out: the refusal is the test
timeout "$HANG" "$SPIGZ" --export-index=gztool -c x.gz >> x.gz 2> "$T/err"
RC=$?
rc_is "--export-index -c IN >> IN" 1
err_has "--export-index -c IN >> IN" "x.gz: input and output are the same file"
kept "--export-index -c IN >> IN: nothing appended" x.gz b.ref
CMD="spigz --export-index=gztool -c < x.gz >> x.gz"
# shellcheck disable=SC2094 # the same file in and out: the refusal is the test
timeout "$HANG" "$SPIGZ" --export-index=gztool -c < x.gz >> x.gz 2> "$T/err"
RC=$?
rc_is "--export-index -c < IN >> IN" 1
kept "--export-index -c < IN >> IN: nothing appended" x.gz b.ref

# ==== 6. -o ====
section "6. -o: dangling links, -o -, devices and FIFOs"
seq 1 5000 > in
# gzip, for its own outputs: a dangling link at the output's name is kept
# without -f (status 2), replaced by the file with -f.
for f in "" -f; do
    rm -f o o.gz nowhere && seq 1 50 > o && ln -s nowhere o.gz
    gzip $f o 2> /dev/null
    g="$? $(stat -c %F o.gz) $([ -e nowhere ] && echo target-made)"
    rm -f o o.gz nowhere && seq 1 50 > o && ln -s nowhere o.gz
    sp -- $f o
    s="$RC $(stat -c %F o.gz) $([ -e nowhere ] && echo target-made)"
    [ "$g" = "$s" ] && pass || fail "output name a dangling link ($f): gzip '$g', spigz '$s'"
done
# -o through a dangling link: the same, decided before any work.
rm -f dl nowhere
ln -s nowhere dl
sp LD_PRELOAD="$FAULT_SO" FAULT_READ_EIO_AFTER=0 -- -o dl in
rc_is "-o DANGLING without -f: refused before reading (no read error)" 2
err_has "-o DANGLING without -f" "dl already exists; not overwritten"
[ -L dl ] && pass || fail "-o DANGLING without -f: the link is gone"
no_tmp "-o DANGLING without -f" .
"$SPIGZ" -c in > in.gz
# a valid header, then damage: decoding would fail; refusing comes first
python3 - in.gz bad.gz <<'EOF'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
for i in range(40, 200):
    d[i] ^= 0x55
open(sys.argv[2], "wb").write(d)
EOF
sp -- -d -o dl bad.gz
rc_is "-d -o DANGLING without -f: refused before decoding" 2
err_lacks "-d -o DANGLING without -f: nothing decoded" "bad.gz:"
sp -- -f -o dl in
rc_is "-o DANGLING with -f" 0
[ -f dl ] && [ ! -L dl ] && [ ! -e nowhere ] && pass || fail "-o DANGLING with -f: the link is not replaced"
gz_is "-o DANGLING with -f: the output" dl in
rm -f dl && ln -s nowhere dl
sp -- -d -f -o dl in.gz
rc_is "-d -o DANGLING with -f" 0
same "-d -o DANGLING with -f: the output" dl in
# -o - is stdout
sp -- -o - in
rc_is "-o - (compress)" 0
gz_is "-o - writes stdout" "$T/out" in
absent "-o -: no file named -" ./-
sp -- -d -o - in.gz
rc_is "-o - (decompress)" 0
same "-d -o - writes stdout" "$T/out" in
absent "-d -o -: no file named -" ./-
# A device given with -o: the object checked is the object written.  When
# the name is replaced by a regular file before spigz opens it (swap at the
# first open of the name), that file is an existing file (kept without -f).
if mknod nul c 1 3 2> /dev/null; then
    seq 1 1000 > precious
    cp precious precious.ref
    race RACE_ON=open RACE_NAME=nul RACE_MOVE=precious:nul -- -o nul in
    raced "-o DEVICE swapped for a file before the open"
    rc_is "-o DEVICE swapped for a file before the open: an existing file" 2
    same "-o DEVICE swapped for a file before the open: the file intact" nul precious.ref
    # ... and replaced right after it was looked at: the device is written
    # (through the descriptor that was checked), the file stays intact.
    rm -f nul && mknod nul c 1 3 && cp precious.ref precious
    race RACE_ON=open RACE_AFTER=1 RACE_NAME=nul RACE_MOVE=precious:nul -- -o nul in
    raced "-o DEVICE swapped for a file after the check"
    rc_is "-o DEVICE swapped for a file after the check" 0
    same "-o DEVICE swapped after the check: the file intact" nul precious.ref
else
    SKIPPED="$SKIPPED -o onto a device swapped for a file (mknod refused);"
fi
# -f -o over an existing file replaces that file only: one saved over
# the name while spigz wrote (after its temporary file was made, before
# the rename) is kept, the output not given that name (status 1)
seq 1 1000 > old.gz
seq 5 5000 > precious && cp precious precious.ref
race RACE_ON=stat RACE_ARM=open:.old.gz.* RACE_NAME=old.gz RACE_MOVE=precious:old.gz -- -f -o old.gz in
raced "-f -o FILE: the name swapped before the rename"
rc_is "-f -o FILE: the name swapped before the rename" 1
same "-f -o FILE: the file saved over the name is kept" old.gz precious.ref
no_tmp "-f -o FILE: the name swapped before the rename" .
# a FIFO given with -o is written into
rm -f fifo && mkfifo fifo
timeout "$HANG" cat fifo > fifo.out &
reader=$!
sp -- -o fifo in
wait "$reader"
rc_is "-o FIFO" 0
gz_is "-o FIFO: the reader got the output" fifo.out in
[ -p fifo ] && pass || fail "-o FIFO: the FIFO was replaced"

# ==== 7. block devices ====
section "7. block devices: the same device refused"
# dev_kept DESC: the device still holds its image (else the failure, and
# the image put back, the device's cache dropped).
dev_kept() {
    if cmp -s dev.img dev.ref; then pass; return; fi
    fail "$1: the device was written (after '$CMD')"
    cp dev.ref dev.img && blockdev --flushbufs "$DEV" 2> /dev/null
}
loop_cases() {
    local L=$DEV
    # the image behind the device holds a spigz file, so that -d and
    # --export-index have something to read
    sp -- -o "$L" "$L"
    rc_is "-o DEV DEV" 1
    err_has "-o DEV DEV" "$L: input and output are the same device"
    dev_kept "-o DEV DEV: the device intact"
    sp -- -d -o "$L" "$L"
    rc_is "-d -o DEV DEV" 1
    dev_kept "-d -o DEV DEV: the device intact"
    sp -- --export-index=gztool -o "$L" "$L"
    rc_is "--export-index -o DEV DEV" 1
    dev_kept "--export-index -o DEV DEV: the device intact"
    CMD="spigz -c DEV > DEV"
    # shellcheck disable=SC2094 # the same file in and out: the refusal is the test
    timeout "$HANG" "$SPIGZ" -c "$L" > "$L" 2> "$T/err"
    RC=$?
    rc_is "-c DEV > DEV" 1
    dev_kept "-c DEV > DEV: the device intact"
    CMD="spigz -dc DEV > DEV"
    # shellcheck disable=SC2094 # the same file in and out: the refusal is the test
    timeout "$HANG" "$SPIGZ" -dc "$L" > "$L" 2> "$T/err"
    RC=$?
    rc_is "-dc DEV > DEV" 1
    dev_kept "-dc DEV > DEV: the device intact"
    CMD="spigz -c < DEV -o DEV"
    # shellcheck disable=SC2094 # the same file in and out: the refusal is the test
    timeout "$HANG" "$SPIGZ" -o "$L" < "$L" > /dev/null 2> "$T/err"
    RC=$?
    rc_is "-o DEV < DEV" 1
    dev_kept "-o DEV < DEV: the device intact"
    # another node of the same device
    mknod alt b "$(stat -c '%t' "$L" | sed 's/^/0x/' | xargs printf '%d')" \
        "$(stat -c '%T' "$L" | sed 's/^/0x/' | xargs printf '%d')"
    sp -- -o alt "$L"
    rc_is "-o OTHER-NODE DEV" 1
    dev_kept "-o OTHER-NODE DEV: the device intact"
    rm -f alt
    # --bad-map onto the device compared with, or the disk being rescued
    sp -- --compare devb.gz "$L" --bad-map "$L"
    rc_is "--compare B DEV --bad-map DEV" 2
    dev_kept "--compare B DEV --bad-map DEV: the device intact"
    sp -- --rescue -c --bad-map "$L" "$L"
    rc_is "--rescue -c DEV --bad-map DEV" 1
    dev_kept "--rescue -c DEV --bad-map DEV: the device intact"
}
head -c $((4 * 1024 * 1024)) /dev/urandom > raw
"$SPIGZ" -$FAST -c raw > dev.img
truncate -s 8M dev.img
printf 'label: dos\nstart=4096, size=8192, type=83\n' | sfdisk -q --no-tell-kernel dev.img 2> /dev/null
cp dev.img dev.ref
"$SPIGZ" -$FAST -c dev.ref > devb.gz
if loop_attach DEV dev.img && [ -b "$DEV" ]; then
    loop_cases
    # a partition's range on a second loop device of the same image: its
    # sectors are the first one's (lay_stores: loops over the same file)
    if loop_attach PART -o $((4096 * 512)) --sizelimit $((8192 * 512)) dev.img; then
        sp -- -o "$PART" "$DEV"
        rc_is "-o PART DEV" 1
        dev_kept "-o PART DEV: the device intact"
        sp -- -o "$DEV" "$PART"
        rc_is "-o DEV PART" 1
        dev_kept "-o DEV PART: the device intact"
        loop_detach "$PART"
    else
        fail "a second loop device over a partition's range"
    fi
    # the image onto a loop device of itself, and the reverse
    sp -- -f -o "$DEV" dev.img
    rc_is "-o DEV IMAGE-BEHIND-DEV" 1
    dev_kept "-o DEV IMAGE-BEHIND-DEV: the image intact"
    sp -- -f -o dev.img "$DEV"
    rc_is "-o IMAGE-BEHIND-DEV DEV" 1
    dev_kept "-o IMAGE-BEHIND-DEV DEV: the image intact"
    loop_detach "$DEV"
else
    SKIPPED="$SKIPPED block devices (losetup could not attach a loop device);"
fi

finish || exit 1
if [ -n "$SKIPPED" ]; then
    echo "SKIP: not checked:$SKIPPED"
    exit 77
fi

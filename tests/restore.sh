#!/bin/bash
# restore.sh — restore you can trust: every way spigz -d was found to write a
# wrong byte, lose data or differ from GNU gzip where scripts depend on it,
# each a case that failed before its fix.  The output is compared with what
# gzip writes wherever gzip does the same thing.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=tests/lib.sh
. "${srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need gzip python3 cmp od dd head truncate rsync compress
: "${FAULT_SO:?FAULT_SO must point at the fault injection shim (tests/fault.so)}"
W=$T/w
mkdir -p "$W"
cd "$W" || exit 1

# rnd FILE SIZE: SIZE random bytes (deterministic per name).
rnd() {
    local name
    name=$(basename "$1")
    "$PY3" -c 'import random, sys
r = random.Random(sys.argv[1]); sys.stdout.buffer.write(r.randbytes(int(sys.argv[2])))' \
        "$name" "$2" > "$1"
}
# same DESC A B: files A and B exist and are equal.
same() { if cmp -s "$2" "$3"; then pass; else fail "$1: $2 and $3 differ (or one is missing)"; fi; }
# status_is DESC GOT WANT
status_is() { if [ "$2" = "$3" ]; then pass; else fail "$1: exit status $2, expected $3"; fi; }

# ==== 1. the descriptor's offset ====
section "1. output through a regular file descriptor: at its offset, left at the end"
printf hello > a
printf ab > b
"$SPIGZ" -k a b
"$SPIGZ" -dc a.gz b.gz > out
status_is "-dc a.gz b.gz > out" $? 0
check "-dc a.gz b.gz > out holds helloab ($(od -An -c out | tr -s ' '))" [ "$(cat out)" = helloab ]
rnd big 3000000
"$SPIGZ" -k big
(printf HDR; "$SPIGZ" -dc big.gz; printf TRL) > f
(printf HDR; cat big; printf TRL) > f.want
same "(printf HDR; spigz -dc big.gz; printf TRL) > f" f f.want
# >> and a file opened read-write at an offset (old bytes after the output stay)
cp f.want g
"$SPIGZ" -dc big.gz >> g
cat f.want big > g.want
same "spigz -dc big.gz >> g" g g.want
head -c 5000000 /dev/zero | tr '\0' o > h
{ head -c 7 <&3 > /dev/null; "$SPIGZ" -dc big.gz >&3; printf T >&3; } 3<> h
{ head -c 7 /dev/zero | tr '\0' o; cat big; printf T; head -c $((5000000 - 7 - 3000000 - 1)) /dev/zero | tr '\0' o; } > h.want
same "spigz -dc into a read-write descriptor at offset 7" h h.want
# a file of zeros and data, restored to a file after a prefix (holes kept right)
"$PY3" -c 'import random, sys
r = random.Random(5); f = open(sys.argv[1], "wb")
for i in range(12):
    f.write(r.randbytes(300000)); f.write(bytes(5000000))' zd
"$SPIGZ" -k zd
(printf P; "$SPIGZ" -dc zd.gz; "$SPIGZ" -dc a.gz) > zd.out
(printf P; cat zd a) > zd.want
same "a sparse restore after a prefix and before another" zd.out zd.want

# ==== 2. what was decoded before an error goes out, whatever the timing ====
section "2. trailing bytes and cut files: gzip's output, never timing's"
printf w | gzip > w.gz
for i in $(seq 1 20); do
    (cat w.gz; printf x) | "$SPIGZ" -cdf > o 2> e
    s=$?
    [ "$s" = 0 ] && [ "$(cat o)" = wx ] || { fail "(gzip; printf x) | spigz -cdf: run $i gave '$(cat o)', status $s (gzip: wx, 0)"; break; }
    (cat w.gz; printf x) | "$SPIGZ" -cd > o 2> e
    s=$?
    [ "$s" = 1 ] && [ "$(cat o)" = w ] || { fail "(gzip; printf x) | spigz -cd: run $i gave '$(cat o)', status $s (gzip: w, 1)"; break; }
done
pass
# -cdf copies whatever follows a member, zeros too, as gzip -cdf
for t in '\0\0\0' '\037' 'xyz' 'x\0'; do
    # shellcheck disable=SC2059 # $t holds printf's escapes: the bytes to append
    (cat w.gz; printf "$t") | gzip -cdf > o.g 2> /dev/null
    g=$?
    # shellcheck disable=SC2059 # the same
    (cat w.gz; printf "$t") | "$SPIGZ" -cdf > o.s 2> /dev/null
    s=$?
    status_is "-cdf with '$t' after a member" "$s" "$g"
    same "-cdf with '$t' after a member" o.s o.g
done
# -v says when trailing zeros were ignored (gzip: status 2)
(cat w.gz; printf '\0\0') | "$SPIGZ" -cdv > /dev/null 2> e
status_is "-cdv with trailing zeros" $? 2
check "-cdv with trailing zeros says so" grep -q "trailing zero bytes ignored" e
# a large member and one byte after it: all of it, then the error
gzip -c big > bigx.gz
printf x >> bigx.gz
for i in 1 2 3 4 5; do
    "$SPIGZ" -cd < bigx.gz > o 2> /dev/null
    s=$?
    [ "$s" = 1 ] && cmp -s o big || { fail "a member and one more byte: run $i: status $s, $(wc -c < o) bytes (gzip: all $(wc -c < big), 1)"; break; }
done
pass
# truncated files: at least what gzip writes, then status 1
for f in big.gz zd.gz; do
    size=$(wc -c < "$f")
    for cut in 100 $((size / 3)) $((size / 2)) $((size - 100)) $((size - 9)); do
        head -c "$cut" "$f" > cut.gz
        gzip -dc < cut.gz > o.g 2> /dev/null
        for how in file stdin; do
            if [ $how = file ]; then "$SPIGZ" -dc cut.gz > o.s 2> e; else "$SPIGZ" -dc < cut.gz > o.s 2> e; fi
            s=$?
            status_is "$f cut to $cut ($how)" "$s" 1
            n=$(wc -c < o.g)
            if [ "$(wc -c < o.s)" -ge "$n" ] && cmp -s -n "$n" o.s o.g; then pass; else
                fail "$f cut to $cut ($how): spigz wrote $(wc -c < o.s) bytes, gzip $n (a prefix of it expected)"; fi
            # and never more than the content
            cmp -s -n "$(wc -c < o.s)" o.s "${f%.gz}" || fail "$f cut to $cut ($how): bytes that are not the content's"
        done
    done
done

# ==== 3. a forged, self-consistent index ====
section "3. a forged index: the output is gunzip's, or nothing is claimed"
"$PY3" -c 'import os
r = os.urandom
with open("fc", "wb") as f:
    f.write(r(1 << 20)); f.write(r(100 << 10)); f.write(bytes(2 << 20)); f.write(r(1536 << 10))'
"$SPIGZ" -k fc
mkdir fcd
"$PY3" "$srcdir/tests/py/spz.py" forge_consistent fc.gz fcd || fail "spz.py forge_consistent failed"
gzip -t fcd/move.gz || fail "the forged file is not a valid gzip file"
rm -f o
"$SPIGZ" -d -o o fcd/move.gz 2> e
status_is "-d -o of a forged index" $? 2
check "-d -o of a forged index warns about the index" grep -q index e
same "-d -o of a forged index" o fc
"$SPIGZ" -dc fcd/move.gz > o 2> /dev/null
same "-dc > file of a forged index" o fc
"$SPIGZ" -dc fcd/move.gz 2> /dev/null | cat > o
same "-dc | cat of a forged index" o fc
cp fcd/move.gz m.gz
rm -f m
"$SPIGZ" -d m.gz 2> /dev/null
status_is "in place -d of a forged index" $? 2
same "in place -d of a forged index" m fc
for p in 1 2 3 8; do
    rm -f o
    "$SPIGZ" -p $p -d -o o fcd/move.gz 2> /dev/null
    same "-p $p -d -o of a forged index" o fc
done
# -t decodes every piece: it sees the forgery (and gzip's verdict holds)
"$SPIGZ" -t fcd/move.gz 2> e
status_is "-t of a forged index" $? 2
check "-t of a forged index warns about the index" grep -q index e

# ==== 4. the index reader and EINTR ====
section "4. reads interrupted by a signal (EINTR) are retried"
for f in fc.gz zd.gz; do
    LD_PRELOAD=$FAULT_SO FAULT_READ_EINTR=1 "$SPIGZ" -dcvv "$f" > o 2> e
    status_is "-dc $f with EINTR" $? 0
    same "-dc $f with EINTR" o "${f%.gz}"
    check "-dc $f with EINTR used the index" grep -q "through the index" e
    LD_PRELOAD=$FAULT_SO FAULT_READ_EINTR=1 "$SPIGZ" -l "$f" > o 2> e
    status_is "-l $f with EINTR" $? 0
    check "-l $f with EINTR: the exact size" grep -q " $(wc -c < "${f%.gz}") " o
done

# ==== 5. the index's temporary file ====
section "5. a missing or full TMPDIR fails at the start, naming it"
truncate -s 4G huge
printf data | dd of=huge bs=1 seek=1000000 conv=notrunc 2> /dev/null
TMPDIR=$T/nowhere "$SPIGZ" -c huge > o 2> e
status_is "TMPDIR missing, a 4 GiB input" $? 1
check "TMPDIR missing: the message names it ($(cat e))" grep -q "$T/nowhere" e
check "TMPDIR missing: nothing written" [ ! -s o ]
TMPDIR=$T/nowhere "$SPIGZ" -c big > o 2> e
status_is "TMPDIR missing, a small input (the index cannot spill)" $? 0
gzip -dc < o | cmp -s - big && pass || fail "TMPDIR missing, a small input: wrong output"
rm -f huge
if [ "$(id -u)" = 0 ] && mkdir full && mount -t tmpfs -o size=16k spigz-full full 2> /dev/null; then
    dd if=/dev/zero of=full/fill bs=4k count=16 2> /dev/null
    printf x | TMPDIR=$W/full "$SPIGZ" -c > o 2> e
    status_is "TMPDIR full, a pipe" $? 1
    check "TMPDIR full: the message names it ($(cat e))" grep -q "$W/full" e
    umount full
else
    echo "NOTE: not root or no tmpfs: the full TMPDIR case is not run" >&2
fi

# ==== 6. decompression memory does not depend on the file ====
section "6. memory: bounded whatever piece size the file was made with"
# 32 pieces of 32 MiB that compress ~1000:1: at -p 16 the pipeline would
# hold 34 of them (2.2 GB); the budget allows 256 MiB of pieces.
"$PY3" -c 'import random, sys
blk = random.Random(9).randbytes(4096) * 256
with open(sys.argv[1], "wb") as f:
    for i in range(1024):
        f.write(blk)' rep
"$SPIGZ" -$FAST -b 32768 -k rep
# ThreadSanitizer's shadow memory multiplies the RSS: the bounds are
# checked by the plain run of this file (make check), not under it.
rss_bound() { # rss_bound WHAT KIB MAX_MIB
    if [ "${SPIGZ_SANITIZER:-}" = thread ]; then
        echo "note: $1: peak RSS $2 KiB not bounded under ThreadSanitizer"
    else
        check "$1: peak RSS $2 KiB, at most $3 MiB" [ "$2" -le $(($3 * 1024)) ]
    fi
}
rss() { # rss CMD...: the peak RSS of CMD in KiB (stdout discarded)
    "$PY3" -c 'import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode)' "$@"
}
read -r kib s < <(rss "$SPIGZ" -p 16 -dc rep.gz)
status_is "-p 16 -dc of 32 MiB pieces" "$s" 0
rss_bound "-p 16 -dc of 32 MiB pieces" "$kib" 600
"$SPIGZ" -p 16 -dc rep.gz | cmp -s - rep && pass || fail "-p 16 -dc of 32 MiB pieces: wrong output"
# pieces over the limit: decoded sequentially, no warning
"$SPIGZ" -$FAST -b 131072 -c rep > rep128.gz
read -r kib s < <(rss "$SPIGZ" -p 16 -dc rep128.gz)
status_is "-dc of 128 MiB pieces" "$s" 0
rss_bound "-dc of 128 MiB pieces" "$kib" 300
"$SPIGZ" -dcvv rep128.gz 2> e | cmp -s - rep && pass || fail "-dc of 128 MiB pieces: wrong output"
check "-dc of 128 MiB pieces: sequential, no warning ($(cat e))" grep -q "(sequential" e
check "-dc of 128 MiB pieces: no warning" [ "$(grep -c index e)" = 0 ]
rm -f rep rep.gz rep128.gz

# ==== 7. named outputs ====
section "7. outputs: devices and FIFOs written into, -f keeps the old file until the new one is whole"
rnd d1 200000
"$SPIGZ" -k d1
# A device and a FIFO named with -o (and -f) are written into, never
# replaced.  The device is a node of the null device made here (as root), so
# that a spigz that replaced it would not replace the machine's /dev/null.
if [ "$(id -u)" = 0 ] && mknod null c 1 3 2> /dev/null; then
    dev=$W/null
else
    echo "NOTE: not root: the device case uses /dev/null, and only without -f" >&2
    dev=
fi
for f in "" -f; do
    [ -z "$dev" ] && [ -n "$f" ] && continue
    "$SPIGZ" -d $f -o "${dev:-/dev/null}" d1.gz
    status_is "-d $f -o a device" $? 0
    check "-d $f -o a device: still the device" [ -c "${dev:-/dev/null}" ]
    mkfifo fifo
    timeout "$HANG" cat fifo > fifo.out &
    cat_pid=$!
    "$SPIGZ" -d $f -o fifo d1.gz
    s=$?
    status_is "-d $f -o FIFO" $s 0
    if [ -p fifo ] && [ $s = 0 ]; then
        pass
        wait $cat_pid
        same "-d $f -o FIFO: what the reader got" fifo.out d1
    else
        fail "-d $f -o FIFO: not written into"
        kill $cat_pid
    fi
    rm -f fifo fifo.out
done
if [ -n "$dev" ]; then
    "$SPIGZ" -f -o "$dev" d1
    check "-f -o a device (compressing): still the device" [ -c "$dev" ]
fi
# stdin is the output file: refused, the file intact
cp d1 same
# shellcheck disable=SC2094 # the same file in and out: the refusal is the test
"$SPIGZ" -f -o same < same 2> e
status_is "-f -o X < X" $? 1
same "-f -o X < X leaves X" same d1
cp d1.gz same.gz
# shellcheck disable=SC2094 # the same file in and out: the refusal is the test
"$SPIGZ" -d -f -o same.gz < same.gz 2> e
status_is "-d -f -o X.gz < X.gz" $? 1
same "-d -f -o X.gz < X.gz leaves X.gz" same.gz d1.gz
# shellcheck disable=SC2094 # the same file in and out: the refusal is the test
"$SPIGZ" -c < same >> same 2> e
status_is "-c < X >> X" $? 1
same "-c < X >> X leaves X" same d1
# -f: a failed run leaves the old output as it was
printf old > keep.out
cp big.gz bad.gz
printf '\377' | dd of=bad.gz bs=1 seek=2000000 conv=notrunc 2> /dev/null
"$SPIGZ" -d -f -o keep.out bad.gz 2> /dev/null
status_is "-d -f -o onto an old file, corrupt input" $? 1
check "-d -f -o: the old output kept" [ "$(cat keep.out)" = old ]
printf old > d1.out
LD_PRELOAD=$FAULT_SO FAULT_READ_EIO_AFTER=100000 "$SPIGZ" -f -o d1.out d1 2> /dev/null
status_is "-f -o onto an old file, read error" $? 1
check "-f -o: the old output kept after a read error" [ "$(cat d1.out)" = old ]
check "no temporary file left behind" [ -z "$(find . -name '.*.??????')" ]
# -f and success: replaced
"$SPIGZ" -d -f -o keep.out d1.gz
same "-d -f -o onto an old file" keep.out d1
# mode: an output from stdin gets 0666 less the umask, as a redirection
for m in 022 077 002; do
    rm -f um.gz
    (umask $m; "$SPIGZ" -o um.gz < d1)
    want=$(printf '%o' $((0666 & ~0$m)))
    check "umask $m: -o from stdin gets mode $want ($(stat -c %a um.gz))" [ "$(stat -c %a um.gz)" = "$want" ]
    rm -f um
    (umask $m; "$SPIGZ" -d -o um < um.gz)
    check "umask $m: -d -o from stdin gets mode $want" [ "$(stat -c %a um)" = "$want" ]
done
# a file size limit (SIGXFSZ): the partial output goes, the input stays,
# and spigz dies by the signal as gzip does (128 + 25; no core file)
rm -f big
(ulimit -c 0; ulimit -f 100; exec "$SPIGZ" -d big.gz) 2> e
status_is "-d past the file size limit" $? $((128 + $(kill -l XFSZ)))
check "-d past the file size limit: no partial output" [ ! -e big ] && [ -z "$(find . -name '.big*')" ]
check "-d past the file size limit: the input kept" [ -s big.gz ]
(ulimit -c 0; ulimit -f 100; exec "$SPIGZ" -k -f -o big.out zd) 2> e
status_is "compression past the file size limit" $? $((128 + $(kill -l XFSZ)))
check "compression past the file size limit: no partial output" [ ! -e big.out ] && [ -z "$(find . -name '.big*')" ]
"$SPIGZ" -dc big.gz > big  # for what follows

# ==== 8. numbers and levels ====
section "8. malformed numbers are errors"
for r in '5 :5' '5:5 ' '5x:5' ':5' '5:' '5:5KK' '5:-1' '18446744073709551616:1' '16777216T:1'; do
    "$SPIGZ" -dc --range "$r" big.gz > o 2> e
    status_is "--range '$r'" $? 1
    check "--range '$r': nothing written" [ ! -s o ]
done
"$SPIGZ" -dc --range '5k:5' big.gz > o
cmp -s o <(dd if=big bs=1 skip=5120 count=5 2> /dev/null) && pass || fail "--range 5k:5"
for l in -99999 -13 -100 -012; do
    "$SPIGZ" $l -c d1 > o 2> e
    status_is "level $l" $? 1
    check "level $l: 'invalid compression level'" grep -q "invalid compression level" e
done
for opt in "-p x" "-p 1x" "-b 4" "-b 99999999999" "--zero-run 0" "--seed 1x" "-p ''"; do
    eval "\"\$SPIGZ\" $opt -c d1" > o 2> e
    status_is "$opt" $? 1
done

# ==== 9. messages and status ====
section "9. messages: true, and the status of a full stdout"
"$SPIGZ" -dc big.gz > /dev/null 2> e
status_is "-dc" $? 0
for a in -h -V -L --help --version "--estimate big" "--map big" "-l big.gz"; do
    # shellcheck disable=SC2086 # $a is a list of arguments
    "$SPIGZ" $a > /dev/full 2> e
    status_is "$a > /dev/full" $? 1
    # shellcheck disable=SC2086 # the same list
    "$SPIGZ" $a >&- 2> e
    status_is "$a with stdout closed" $? 1
done
gzip -V > /dev/full 2> /dev/null
status_is "(gzip agrees: -V > /dev/full)" $? 1
"$SPIGZ" -V | grep -q "^Copyright" && pass || fail "-V has no copyright line"
"$SPIGZ" -L | grep -q "zlib\|Permission is granted" && pass || fail "-L shows no license"

# ==== 10. drop-in for gzip ====
section "10. gzip's behaviour: GZIP, names, suffixes, -l, -v, -r, pack and LZW"
mkdir p10 && cd p10 || exit 1
printf 'hello hello hello hello\n' > h
# gz_vs_sp DESC CMD...: gzip and spigz (as "TOOL") give the same stdout and
# status class; each runs in a copy of the current directory.
gz_vs_sp() {
    local desc=$1 g s
    shift
    rm -rf ../gz.d ../sp.d && cp -a . ../gz.d && cp -a . ../sp.d
    (cd ../gz.d && TOOL=gzip eval "$*") > ../gz.out 2> ../gz.err
    g=$?
    (cd ../sp.d && TOOL=$SPIGZ eval "$*") > ../sp.out 2> ../sp.err
    s=$?
    status_is "$desc (gzip: $g)" "$s" "$g"
    same "$desc: stdout" ../sp.out ../gz.out
    # shellcheck disable=SC2012 # the names are the test's own, plain
    if [ "$(cd ../gz.d && ls -A | sort | tr '\n' ' ')" = "$(cd ../sp.d && ls -A | sort | tr '\n' ' ')" ]; then
        pass
    else
        fail "$desc: files left: gzip: $(ls -A ../gz.d | tr '\n' ' '), spigz: $(ls -A ../sp.d | tr '\n' ' ')"
    fi
}
gzip -k h
# GZIP: allowed options applied with a warning; others refused; -q silences
gz_vs_sp "GZIP=-v" 'GZIP=-v "$TOOL" -k -f h 2>&1 | grep -c deprecated'
gz_vs_sp "GZIP=-c refused" 'GZIP=-c "$TOOL" -k -f h'
gz_vs_sp "GZIP=--stdout refused" 'GZIP=--stdout "$TOOL" -k -f h'
gz_vs_sp "GZIP=operand refused" 'GZIP=foo "$TOOL" -k -f h'
gz_vs_sp "GZIP=-q: no warning" 'GZIP="-9 -q" "$TOOL" -k -f h 2>&1 | grep -c deprecated'
gz_vs_sp "GZIP=-9 with -q" 'GZIP=-9 "$TOOL" -q -k -f h 2>&1 | grep -c deprecated'
gz_vs_sp "GZIP empty" 'GZIP=" " "$TOOL" -k -f h 2>&1 | grep -c deprecated'
gz_vs_sp "GZIP=-n: no name stored" 'GZIP=-n "$TOOL" -q -c h | "$TOOL" -dc -N -l 2>/dev/null | tail -1 | awk "{print \$4}"'
# -d FILE finds FILE.gz; a missing FILE.gz is named; links refused by the .gz name
gz_vs_sp "-d FILE finds FILE.gz" 'rm h; "$TOOL" -d h; cat h'
gz_vs_sp "-d FILE finds FILE.z" 'rm h; mv h.gz h.z; "$TOOL" -d h; cat h'
gz_vs_sp "-d missing names FILE.gz" 'rm h; "$TOOL" -d nothere 2>&1 | grep -c nothere.gz'
gz_vs_sp "-d LINK finds LINK.gz" 'rm h; ln -s h.gz l.gz; "$TOOL" -d l 2>&1 | grep -c "l.gz"'
gz_vs_sp "-d HARDLINK finds it" 'rm h; ln h.gz hl.gz; "$TOOL" -d hl 2>&1 | grep -c "hl.gz"'
gz_vs_sp "-f FILE.gz makes FILE.gz.gz" '"$TOOL" -f h.gz; ls'
gz_vs_sp "FILE.gz without -f is left" '"$TOOL" h.gz 2>&1 | grep -c "already has"'
# -l: heading, -q, a corrupt file is an error, several members
cat h.gz h.gz > hh.gz
cp h.gz bad.gz
printf '\377' | dd of=bad.gz bs=1 seek=15 conv=notrunc 2> /dev/null
gz_vs_sp "-l" '"$TOOL" -l h.gz hh.gz'
gz_vs_sp "-lv" '"$TOOL" -lv h.gz hh.gz | cut -c1-15,35-'
gz_vs_sp "-lq prints no heading" '"$TOOL" -lq h.gz'
gz_vs_sp "-l of a corrupt file" '"$TOOL" -l bad.gz'
gz_vs_sp "-l from stdin" '"$TOOL" -l < hh.gz'
# -v from stdin
seq 1 3000 > num
gz_vs_sp "-cv from stdin" '"$TOOL" -cv < num 2>&1 > /dev/null | tr -d "0-9."'
gz_vs_sp "-dcv from stdin" '"$TOOL" -dcv < h.gz 2>&1 > /dev/null'
gz_vs_sp "-tv from stdin" '"$TOOL" -tv < h.gz 2>&1'
# -r
mkdir -p tree/a/b
cp h tree/x
cp h tree/a/y
cp h.gz tree/a/b/z.gz
gz_vs_sp "-r" '"$TOOL" -r tree; find tree | sort'
gz_vs_sp "-dr" '"$TOOL" -d -r tree; find tree | sort'
gz_vs_sp "-lr" '"$TOOL" -l -r tree | sort'
rm -rf tree
# -r never walks into what it writes: names are read before any is processed
# (thousands, so that readdir would return fresh outputs in later batches)
mkdir many
"$PY3" -c 'import sys
for i in range(3000):
    open("%s/f%d" % (sys.argv[1], i), "w").write("%d\n" % i)' many
"$SPIGZ" -rf many; s=$?
status_is "-rf of 3000 files" "$s" 0
# shellcheck disable=SC2010 # the names are the test's own: f0 to f2999 and suffixes
check "-rf of 3000 files: each compressed once ($(ls many | grep -c 'gz\.gz$') twice)" \
    [ "$(ls many | grep -c '^f[0-9]*\.gz$')" = 3000 ]
"$SPIGZ" -rf many; s=$?
status_is "-rf again (each to .gz.gz)" "$s" 0
"$SPIGZ" -dr many; s=$?
status_is "-dr of 3000 .gz.gz" "$s" 0
# shellcheck disable=SC2010 # the same names
check "-dr of 3000 .gz.gz: each decompressed once ($(ls many | grep -c '^f[0-9]*$') twice)" \
    [ "$(ls many | grep -c '^f[0-9]*\.gz$')" = 3000 ]
rm -rf many
# an error that stops the walk is reported once, by the file's name
mkdir -p deep/a/b && printf '\037\213\010\000\000\000\000\000\000\003XXXXXXXX' > deep/a/b/bad.gz
"$SPIGZ" -dr deep 2> e; s=$?
status_is "-dr with a damaged file deep down" "$s" 1
check "-dr with a damaged file deep down: one message, naming it ($(cat e))" \
    [ "$(wc -l < e)" = 1 ] && grep -q "deep/a/b/bad.gz" e
rm -rf deep
# what is at the output's name: kept without -f (a directory too), replaced
# with -f unless a directory (a FIFO, a link: the name, not what it leads to)
kind() { for f in "$@"; do stat -c '%n %F' "$f"; done; }
gz_vs_sp "output name is a directory" 'cp h o; mkdir o.gz; "$TOOL" o; echo "status $?"; kind o o.gz'
gz_vs_sp "output name is a directory, -f" 'cp h o; mkdir o.gz; "$TOOL" -f o; echo "status $?"; kind o o.gz'
gz_vs_sp "output name is a FIFO, -f" \
    'cp h o; mkfifo o.gz; "$TOOL" -f o; echo "status $?"; kind o.gz; [ -f o.gz ] && gzip -dc o.gz'
gz_vs_sp "output name is a link to a directory, -f" \
    'cp h o; mkdir d; ln -s d o.gz; "$TOOL" -f o; echo "status $?"; kind o.gz d; ls d'
gz_vs_sp "output name is a dangling link" \
    'cp h o; ln -s nowhere o.gz; "$TOOL" o; echo "status $?"; kind o o.gz'
gz_vs_sp "-d: output name is a FIFO, -f" \
    'gzip -c h > x.gz; mkfifo x; "$TOOL" -df x.gz; echo "status $?"; kind x; [ -f x ] && cat x'
# names too long for the file system: a stored one is cut to fit (as
# gzip); one made by adding .gz is refused before any work (D-long-name)
"$PY3" -c 'import gzip, sys
sys.stdout.buffer.write(gzip.compress(b"long\n", mtime=0))' > ln.gz
"$PY3" -c 'import sys
d = bytearray(open("ln.gz", "rb").read()); d[3] |= 8
sys.stdout.buffer.write(bytes(d[:10]) + b"n" * 300 + b"\0" + bytes(d[10:]))' > longname.gz
rm ln.gz
gz_vs_sp "-dN of a stored name of 300 bytes" '"$TOOL" -dN longname.gz; echo "status $?"; ls | awk "{ print length(\$0) }" | sort -n'
gz_vs_sp "-dNq of a stored name of 300 bytes" '"$TOOL" -dNq longname.gz; echo "status $?"'
rm longname.gz
long=$(printf "%0253d" 0)
printf 'data\n' > "$long"
"$SPIGZ" "$long" 2> e; s=$?
status_is "compressing a 253-byte name" "$s" 1
check "compressing a 253-byte name: refused, input kept ($(cat e))" \
    grep -q "File name too long" e && [ -f "$long" ]
check "compressing a 253-byte name: no temporary file left" [ -z "$(find . -maxdepth 1 -name ".$long*")" ]
rm -f "$long"
# levels run together are one level (pigz's -11); gzip's own -1..-9 agree
for l in 1 6 9; do
    has_level "$l" "-$l against gzip -$l" || continue
    gz_vs_sp "-$l" '"$TOOL" -'$l' -c h | gzip -dc'
done
# pack(1) and LZW (.Z)
python3 -c 'import sys; sys.stdout.buffer.write(bytes.fromhex("1f1e0000000603010100616e6216c8"))' > banana.z
if command -v compress > /dev/null; then
    compress -c h > h.Z
    gz_vs_sp "-dc .Z" '"$TOOL" -dc h.Z'
    gz_vs_sp "-d .Z" '"$TOOL" -d h.Z; cat h'
    gz_vs_sp "-l .Z" '"$TOOL" -l h.Z'
    cat h.gz h.Z > gzZ.gz
    gz_vs_sp "-dc gzip then LZW" '"$TOOL" -dc gzZ.gz'
    # 9-bit codes past a full table read an entry never written: zero, as
    # in gzip for that file alone, never what an earlier file left in memory
    # (gzip's own tables keep it: D-lzw-leftover)
    "$PY3" -c 'import random, sys; r = random.Random(3)
sys.stdout.write("".join(r.choice("abcdefgh\n") for _ in range(20000)))' > w
    compress -c w > w.Z
    printf '\037\235\200\101\002\006\004' > full9.Z
    gz_vs_sp "-dc LZW codes past a full table, after other files" \
        'if [ "$TOOL" = gzip ]; then gzip -dc w.Z w.Z && gzip -dc full9.Z; else "$TOOL" -dc w.Z w.Z full9.Z; fi'
else
    fail "compress (ncompress) is not installed: the LZW cases are not run"
fi
gz_vs_sp "-dc pack" '"$TOOL" -dc banana.z'
gz_vs_sp "-lv pack" '"$TOOL" -lv banana.z | cut -c1-24,35-'
cat h.gz banana.z h.gz > mixed.gz
gz_vs_sp "-dc gzip, pack, gzip" '"$TOOL" -dc mixed.gz'
(cat h.gz; printf '\037\036') > packcut.gz
gz_vs_sp "a member then pack bytes: status 1" '"$TOOL" -dc packcut.gz'
rm -f mixed.gz packcut.gz banana.z
# a zip header gzip refuses is refused before the output is looked at (an
# existing one is not "already exists"); its name, encryption and method
# too (gzdiff seed 42 case 6077)
"$PY3" -c 'import struct, sys, zlib
d = b"zip\n"; c = zlib.compressobj(6, 8, -15); z = c.compress(d) + c.flush()
h = b"PK\3\4" + struct.pack("<HHHHHIIIHH", 20, 0, 8, 0, 0, zlib.crc32(d), len(z), len(d), 1, 0) + b"z"
open("z.taz", "wb").write(h + z)
open("cut.taz", "wb").write(h[:18])
open("noname.taz", "wb").write(h[:30])
open("enc.taz", "wb").write(h[:6] + b"\1" + h[7:] + z)
open("meth.taz", "wb").write(h[:8] + b"\x0c" + h[9:] + z)'
gz_vs_sp "-d zip" '"$TOOL" -d z.taz; cat z.tar'
for z in cut noname enc meth; do
    gz_vs_sp "-d $z zip over an existing output" 'echo old > '$z'.tar; "$TOOL" -d '$z'.taz 2>&1 | sed "s/^[a-z]*: //" | grep .; cat '$z'.tar'
done
rm -f ./*.taz ./*.tar
# -lN lists the stored name's last component as gzip does, even where -dN
# would not use it (seed 42 case 2414)
for n in "" ".." "a/b/." "dir/" "/x"; do
    "$PY3" -c 'import struct, sys, zlib
c = zlib.compressobj(6, 8, -15); z = c.compress(b"hi") + c.flush()
sys.stdout.buffer.write(b"\x1f\x8b\x08\x08\0\0\0\0\0\3" + sys.argv[1].encode() + b"\0" + z +
    struct.pack("<II", zlib.crc32(b"hi"), 2))' "$n" > sn.gz
    gz_vs_sp "-lN of stored name '$n'" '"$TOOL" -lN sn.gz'
done
rm -f sn.gz
# unspigz and spigzcat (and gunzip, zcat) by name
ln -s "$SPIGZ" unspigz
ln -s "$SPIGZ" spigzcat
ln -s "$SPIGZ" zcat
cp h.gz k.gz
./spigzcat k.gz > o && same "spigzcat FILE" o h
./zcat < k.gz > o && same "zcat < FILE (a link named zcat)" o h
./unspigz k.gz && same "unspigz FILE" k h
check "unspigz FILE removed FILE.gz" [ ! -e k.gz ]
./unspigz -x 2> e
check "messages carry the name spigz was run by ($(cat e))" grep -q "^unspigz: " e
cd ..

# ==== 11. --rsyncable ====
section "11. --rsyncable: an insertion changes the chunks near it only (rsync's statistics)"
need rsync
"$PY3" -c 'import random, sys
r = random.Random(1)
a = bytearray()
for i in range(300):
    a += r.randbytes(30000) + (b"text line %d with some words\n" % i) * 700
open(sys.argv[1], "wb").write(a)
open(sys.argv[2], "wb").write(a[:6000000] + b"INSERTED" * 125 + a[6000000:])' ra rb
lit() { # lit OLD NEW: rsync's literal bytes sending NEW over OLD
    rm -rf rdst && mkdir rdst && cp "$1" rdst/new
    rsync --no-whole-file --stats "$2" rdst/new | awk '/^Literal data/ { gsub(",", "", $3); print $3 }'
}
for f in ra rb; do
    "$SPIGZ" --rsyncable -c $f > $f.rs.gz
    "$SPIGZ" -c $f > $f.gz
    gzip -dc < $f.rs.gz | cmp -s - $f && pass || fail "--rsyncable: $f.rs.gz does not decompress to $f"
done
size=$(wc -c < rb.rs.gz)
with=$(lit ra.rs.gz rb.rs.gz)
without=$(lit ra.gz rb.gz)
check "--rsyncable: rsync sends $with of $size bytes (without: $without): under a fifth" \
    [ "$with" -lt $((size / 5)) ]
check "without --rsyncable rsync sends more than a third ($without of $size)" \
    [ "$without" -gt $((size / 3)) ]
"$SPIGZ" --rsyncable -p 1 -c rb | cmp -s - rb.rs.gz && pass || fail "--rsyncable: -p 1 and -p 2 differ"
# shellcheck disable=SC2094 # rb is read twice, written by nothing
"$SPIGZ" --rsyncable -n -c < rb | cmp -s - <(cat rb | "$SPIGZ" --rsyncable -n -c) && pass ||
    fail "--rsyncable: a file on stdin and a pipe differ"
rm -rf ra rb ra.* rb.* rdst

finish

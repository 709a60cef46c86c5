#!/bin/bash
# roundtrip.sh — spigz output must decode to the input with every gzip reader
# (gzip, pigz, busybox, 7-Zip, libarchive, Python's gzip and zlib, libdeflate,
# igzip, and spigz itself through its index and sequentially), hold it all in
# its first gzip member followed only by empty members (the index, then the
# footer; nothing with --no-index, which writes the same first member), and be
# the same bytes whatever the thread count and whether the input is a file, a
# sparse file or a pipe.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=tests/lib.sh
. "${srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need gzip pigz busybox 7zz bsdcat python3 libdeflate-gunzip igzip cmp dd \
    truncate fallocate stat head tail
: "${FAULT_SO:?FAULT_SO must point at the fault injection shim (tests/fault.so)}"
[ -f "$FAULT_SO" ] || fail "fault shim $FAULT_SO is missing (make tests/fault.so)"

# Levels 10 to 12 exist with the libdeflate engine only: the highest level
# -V lists (12 with libdeflate, 9 with zlib).
MAXLV=$("$SPIGZ" -V | sed -n 's/^  level *\([0-9]*\):.*/\1/p' | tail -n 1)
K=1024
M=$((1024 * 1024))
G=$((1024 * 1024 * 1024))
PY=$T/py
mkdir -p "$PY"
# The interpreter itself, not a wrapper (pyenv shims cost 0.1 s a call).

# ---- Python helpers ----

# gen.py OUT SEG... [-- OUT SEG...]...: write each OUT as the concatenation of
# its segments, deterministically.
# SEG is KIND:N with N an expression using K, M, G (e.g. "r:1M+1"); kinds:
# r random bytes, o random bytes without any zero byte, t English-like text,
# z zero bytes.
cat > "$PY/gen.py" <<'EOF'
import random, sys, zlib
WORDS = """the of and to in is was that for it with as his on be at by had are
but from or have an they which one you were her all she there would their we
him been has when who will more if no out so said what up its about into than
them can only other new some could time these two may then do first any my now
such like our over man me even most made after also did many before must
through back years where much your way well down should because each just
those people how too little state good very make world still own see men work
long get here between both life being under never day same another know while
last might us great old year off come since against go came right used take
three disk image block device sparse hole zero chunk stream member deflate""".split()

def num(s):
    s = s.replace("K", "*1024").replace("M", "*1048576").replace("G", "*1073741824")
    return int(eval(s, {"__builtins__": {}}))

def text(r, n):
    parts, total = [], 0
    while total < n:
        words = r.choices(WORDS, k=r.randint(3, 14))
        words[0] = words[0].capitalize()
        line = " ".join(words) + (".\n" if r.random() < 0.8 else ",\n")
        parts.append(line)
        total += len(line)
    return "".join(parts).encode()[:n]

def gen(out, segs):
    seed = zlib.crc32(out.rsplit("/", 1)[-1].encode())
    with open(out, "wb") as f:
        for i, seg in enumerate(segs):
            kind, n = seg.split(":", 1)
            n = num(n)
            r = random.Random(seed * 1000 + i)
            if kind == "r":
                f.write(r.randbytes(n))
            elif kind == "o":
                f.write(r.randbytes(n).replace(b"\0", b"\x01"))
            elif kind == "t":
                f.write(text(r, n))
            elif kind == "z":
                f.write(bytes(n))
            else:
                sys.exit("gen.py: unknown segment kind " + kind)

args = sys.argv[1:]
while args and args != ["--"]:
    end = args.index("--") if "--" in args else len(args)
    gen(args[0], args[1:end])
    args = args[end + 1:]
EOF

# pycheck.py GZ ORIG [quick] [noindex]: Python's readers (quick: only the
# member check).  Prints "ok NAME" or "FAIL NAME: why" for each.  The member
# check: the first gzip member decodes to the whole input, and everything
# after it is gzip members that decode to nothing, the last one the 78-byte
# footer (noindex: nothing after the first member).
cat > "$PY/pycheck.py" <<'EOF'
import gzip, sys, zlib
data = open(sys.argv[1], "rb").read()
want = open(sys.argv[2], "rb").read()
quick = "quick" in sys.argv[3:]
noindex = "noindex" in sys.argv[3:]

def report(name, out, extra_ok=True, extra=""):
    if out == want and extra_ok:
        print("ok " + name)
    else:
        print("FAIL %s: %d bytes out, %d expected%s%s" % (
            name, len(out), len(want),
            "" if out == want else " (content differs)", extra))

def attempt(name, fn):
    try:
        fn()
    except Exception as e:
        print("FAIL %s: %r" % (name, e))

if not quick:
    attempt("python3 gzip.decompress",
            lambda: report("python3 gzip.decompress", gzip.decompress(data)))
    # zlib with wbits 31 reads only the first member: it must get everything.
    attempt("python3 zlib.decompress(data, 31)",
            lambda: report("python3 zlib.decompress(data, 31)", zlib.decompress(data, 31)))

def members():
    d = zlib.decompressobj(31)
    out = d.decompress(data) + d.flush()
    ok, why = d.eof and d.unconsumed_tail == b"", ""
    rest, n, last = d.unused_data, 0, b""
    if noindex and rest:
        ok, why = False, "; %d bytes after the first member (--no-index)" % len(rest)
    while ok and rest:
        e = zlib.decompressobj(31)
        got = e.decompress(rest) + e.flush()
        if not e.eof or got:
            ok = False
            why = "; trailing member %d %s" % (
                n + 1, "decodes to %d bytes" % len(got) if e.eof else "is not a complete gzip member")
        n += 1
        last = rest[:len(rest) - len(e.unused_data)]
        rest = e.unused_data
    # An index member per 65531 bytes of records (none for an empty input),
    # then the footer.
    if ok and not noindex and (n < (2 if want else 1) or len(last) != 78 or last[12:14] != b"SF"):
        ok, why = False, "; %d trailing members, not index members and a 78-byte footer" % n
    report("first member is the input, then empty members (zlib.decompressobj(31))",
           out, ok, why)
attempt("first member is the input, then empty members (zlib.decompressobj(31))", members)
EOF

# hdr.py GZ: the gzip header fields, "flg=.. mtime=.. xfl=.. os=.. name=..".
cat > "$PY/hdr.py" <<'EOF'
import struct, sys
d = open(sys.argv[1], "rb").read()
if len(d) < 18 or d[:3] != b"\x1f\x8b\x08":
    sys.exit("not a gzip file: %r" % d[:10])
flg, mtime, xfl, os_ = d[3], struct.unpack("<I", d[4:8])[0], d[8], d[9]
p = 10
if flg & 4:
    p += 2 + struct.unpack("<H", d[p:p + 2])[0]
name = "-"
if flg & 8:
    e = d.index(b"\0", p)
    name = d[p:e].decode("latin-1")
print("flg=%d mtime=%d xfl=%d os=%d name=%s" % (flg, mtime, xfl, os_, name))
EOF

# trailer.py GZ: "crc isize total" of the data member, found through the
# footer (FORMAT.md: the data member is data_len bytes; total is the content
# length).
cat > "$PY/trailer.py" <<'EOF'
import struct, sys
with open(sys.argv[1], "rb") as f:
    f.seek(-78, 2)
    foot = f.read(78)
    if foot[12:14] != b"SF":
        sys.exit("trailer.py: no footer")
    total, data_len = struct.unpack("<QQ", foot[20:36])
    f.seek(data_len - 8)
    crc, isize = struct.unpack("<II", f.read(8))
print(crc, isize, total)
EOF

# sparsecmp.py FILE < DATA: DATA equals FILE; hole ranges are compared with
# zeros without reading them, so a multi-GiB sparse file is quick.
cat > "$PY/sparsecmp.py" <<'EOF'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
size = os.fstat(fd).st_size
ext, pos = [], 0
while pos < size:
    try:
        d = os.lseek(fd, pos, os.SEEK_DATA)
    except OSError:
        break
    h = os.lseek(fd, d, os.SEEK_HOLE)
    ext.append((d, h))
    pos = h
inp = sys.stdin.buffer
BS = 1 << 22
buf = bytearray(BS)
zeros = bytes(BS)
off = ei = 0
while True:
    n = inp.readinto(buf)
    if not n:
        break
    if off + n > size:
        sys.exit("decoded data is longer than %d bytes" % size)
    while ei < len(ext) and ext[ei][1] <= off:
        ei += 1
    if ei < len(ext) and ext[ei][0] < off + n:
        same = buf[:n] == os.pread(fd, n, off)
    else:
        same = (buf == zeros) if n == BS else (buf[:n] == zeros[:n])
    if not same:
        sys.exit("decoded data differs from %s in bytes [%d, %d)" % (sys.argv[1], off, off + n))
    off += n
if off != size:
    sys.exit("decoded %d bytes, expected %d" % (off, size))
EOF

# ---- shell helpers ----

gen() { "$PY3" "$PY/gen.py" "$@" || fail "gen.py $* failed"; }
fsize() { stat -c %s -- "$1"; }
errtext() { tr '\n' ' ' < "$1" | head -c 400; }
section() { echo "[${SECONDS}s] $*"; }
both0() { [ "$1" -eq 0 ] && [ "$2" -eq 0 ]; }

# put FILE OFFSET SEG...: write generated data into FILE at OFFSET, in place.
put() {
    local f=$1 off=$2
    shift 2
    gen "$T/put.tmp" "$@"
    dd if="$T/put.tmp" of="$f" bs=64K seek="$off" oflag=seek_bytes \
        conv=notrunc status=none || fail "dd into $f at $off failed"
}

# z OUT ARG...: run "spigz ARG... > OUT"; it must exit 0 and print nothing.
z() {
    local out=$1 rc
    shift
    "$SPIGZ" "$@" > "$out" 2> "$T/z.err"
    rc=$?
    if [ "$rc" -ne 0 ] || [ -s "$T/z.err" ]; then
        fail "spigz $* exited $rc (expected 0, silent): $(errtext "$T/z.err")"
        return 1
    fi
    pass
}

# same DESC A B: files A and B must be identical.
same() {
    if cmp -s -- "$2" "$3"; then
        pass
    else
        fail "$1: $2 ($(fsize "$2") bytes) and $3 ($(fsize "$3") bytes) differ"
    fi
}

dec_gzip() { gzip -dc -- "$1"; }
dec_pigz() { pigz -dc -- "$1"; }
dec_busybox() { busybox gunzip -c "$1"; }
dec_7zz() { 7zz x -so -bd "$1"; }
dec_bsdcat() { bsdcat "$1"; }
dec_libdeflate() { libdeflate-gunzip -c "$1"; }
dec_igzip() { igzip -dc "$1"; }
dec_spigz() { "$SPIGZ" -dc -- "$1"; }
dec_spigz_seq() { "$SPIGZ" -dc --no-index -- "$1"; }
DECODERS=(gzip pigz busybox 7zz bsdcat libdeflate igzip spigz spigz_seq)

# decode DESC DECODER GZ ORIG: one reader must give back ORIG exactly.
decode() {
    local desc=$1 d=$2 gz=$3 orig=$4 rc
    "dec_$d" "$gz" > "$T/rt.out" 2> "$T/rt.err"
    rc=$?
    if [ "$rc" -ne 0 ]; then
        fail "$desc: decoder '$d' exited $rc on $gz: $(errtext "$T/rt.err")"
    elif ! cmp -s "$T/rt.out" "$orig"; then
        fail "$desc: decoder '$d' gives $(fsize "$T/rt.out") bytes that differ from the $(fsize "$orig")-byte input"
    else
        pass
    fi
}

# pyreaders DESC GZ ORIG [quick] [noindex]: Python's gzip and zlib readers,
# the member check.
pyreaders() {
    local desc=$1 line n=0 want=3
    case " ${*:4} " in *" quick "*) want=1 ;; esac
    while IFS= read -r line; do
        n=$((n + 1))
        case $line in
            ok\ *) pass ;;
            *) fail "$desc: $line" ;;
        esac
    done < <("$PY3" "$PY/pycheck.py" "$2" "$3" "${@:4}" 2>&1)
    [ "$n" -eq "$want" ] || fail "$desc: pycheck.py printed $n results instead of $want"
}

# rt DESC GZ ORIG: every reader.
rt() {
    local d
    for d in "${DECODERS[@]}"; do
        decode "$1" "$d" "$2" "$3"
    done
    pyreaders "$1" "$2" "$3"
}

# rt_lite DESC GZ ORIG: three unrelated inflaters, spigz and the member
# check (for variations of options on inputs that went through rt).
rt_lite() {
    local d
    for d in gzip 7zz libdeflate spigz; do
        decode "$1" "$d" "$2" "$3"
    done
    pyreaders "$1" "$2" "$3" quick
}

# rt_quick DESC GZ ORIG: gzip, spigz and the member check only (for sweeps).
rt_quick() {
    decode "$1" gzip "$2" "$3"
    decode "$1" spigz "$2" "$3"
    pyreaders "$1" "$2" "$3" quick
}

# case_rt DESC FILE ARG...: spigz -c ARG... FILE through every reader ($RT:
# rt, or rt_lite), and the file and pipe paths (with -n) give the same bytes;
# with --no-index, the same first member alone.
RT=rt
case_rt() {
    local desc=$1 f=$2
    shift 2
    z "$T/c.gz" -c "$@" "$f" || return
    "$RT" "$desc (spigz -c $*)" "$T/c.gz" "$f"
    if z "$T/ni.gz" --no-index -c "$@" "$f"; then
        pyreaders "$desc (spigz --no-index -c $*)" "$T/ni.gz" "$f" quick noindex
        if cmp -s -n "$(fsize "$T/ni.gz")" "$T/ni.gz" "$T/c.gz"; then
            pass
        else
            fail "$desc: spigz --no-index -c $* is not the first member of spigz -c $*"
        fi
    fi
    z "$T/file.gz" -n -c "$@" "$f" || return
    z "$T/pipe.gz" -c "$@" < <(cat "$f") || return
    same "$desc: file vs pipe (spigz -n -c $*)" "$T/file.gz" "$T/pipe.gz"
}

# ---- 1. small sizes: 0, 1, 4095, 4096, 4097 bytes ----
section "1. small sizes: 0, 1, 4095, 4096, 4097 bytes"
mkdir -p "$T/in"
small=()
gen_args=()
for kind in z r t o; do
    for n in 0 1 4095 4096 4097; do
        [ "$kind" != z ] && [ "$n" -eq 0 ] && continue
        small+=("$T/in/$kind-$n")
        gen_args+=("$T/in/$kind-$n" "$kind:$n" --)
    done
done
gen "${gen_args[@]}"
for f in "${small[@]}"; do
    case_rt "${f##*/} bytes" "$f"
done

# ---- 2. chunk boundaries: N-1, N, N+1 (1 MiB default, 64 KiB with -b 64) ----
section "2. chunk boundaries: N-1, N, N+1 (1 MiB default, 64 KiB with -b 64)"
# Prefixes of one input per kind.
gen "$T/in/big-r" r:3M+5 -- "$T/in/big-t" t:3M+5 -- "$T/in/big-z" z:3M+5
for kind in r t z; do
    for n in $((M - 1)) $M $((M + 1)) $((3 * M + 5)); do
        head -c "$n" "$T/in/big-$kind" > "$T/in/chunk"
        case_rt "$kind $n bytes, default chunk" "$T/in/chunk"
    done
    for n in $((64 * K - 1)) $((64 * K)) $((64 * K + 1)) $((3 * 64 * K + 5)); do
        head -c "$n" "$T/in/big-$kind" > "$T/in/chunk"
        case_rt "$kind $n bytes, -b 64" "$T/in/chunk" -b 64
    done
done
rm -f "$T/in/chunk" "$T/in/big-r" "$T/in/big-t" "$T/in/big-z"

# ---- 3. mixed data and zero runs, several thresholds and chunk sizes ----
section "3. mixed data and zero runs, several thresholds and chunk sizes"
# Zero runs of 4, 8, 12, 16, 20, 60, 64, 68 KiB, 1 MiB and 3 MiB+4 KiB, at
# aligned and unaligned offsets, at the start and the end; data at the edges
# of runs ends in zero and non-zero bytes.
gen "$T/in/mixA" z:100K r:10000 z:4K t:5000 z:8K r:3000 z:12K t:12000 z:16K \
    r:1 z:20K t:7777 z:60K r:4096 z:64K t:100 z:68K r:200K z:1M t:1M+3 \
    z:3M+4K r:5 z:1000 t:4095 z:200K -- \
    "$T/in/mixB" r:4096 z:64K-1 r:4097 z:64K+1 t:70000 z:128K o:1M-4K z:5 \
    o:100 z:2M t:300000 z:16K-1 r:16K+1 z:64K -- \
    "$T/in/mixC" t:20000 z:4K z:1 r:1 z:4095 t:3 z:1M-1 r:65536 z:65536 t:1
for f in mixA mixB mixC; do
    case_rt "$f" "$T/in/$f"
    for opt in "--zero-run 4" "--zero-run 16" "--zero-run 64" "--zero-run 1024" \
        "-b 32" "-b 33" "-b 100 --zero-run 8" "-b 32 --zero-run 1024" "-p 1 -b 4096"; do
        # shellcheck disable=SC2086 # $opt is a list of options
        RT=rt_lite case_rt "$f" "$T/in/$f" $opt
    done
done

# Zero runs of many lengths (mod 258, the longest deflate match, and around
# 4 KiB blocks), in the middle and at the end of the input, coded as runs.
mkdir -p "$T/sweep"
lengths=(4096 4097 4098 4099 4100 4353 4354 4355 4356 8191 8192 8193
    $((16 * 258)) $((16 * 258 + 1)) $((16 * 258 + 2)) $((16 * 258 + 3))
    $((65536 + 257)) $((65536 + 258)) $((65536 + 259)) 266241 $((M + 1)))
gen_args=()
for L in "${lengths[@]}"; do
    gen_args+=("$T/sweep/end-$L" r:8192 "z:$L" --
        "$T/sweep/mid-$L" t:5000 "z:$L" r:3 "z:$L" t:4096 "z:$L" --)
done
gen "${gen_args[@]}"
for L in "${lengths[@]}"; do
    f=$T/sweep/end-$L
    z "$T/sweep.gz" -c --zero-run 4 "$f" && rt_quick "zero run of $L bytes at the end" "$T/sweep.gz" "$f"
    f=$T/sweep/mid-$L
    z "$T/sweep.gz" -c --zero-run 4 "$f" && rt_quick "zero runs of $L bytes inside data" "$T/sweep.gz" "$f"
done
rm -rf "$T/sweep"

# ---- 4. sparse files: same bytes as the dense copy and as a pipe ----
section "4. sparse files: same bytes as the dense copy and as a pipe"
mkdir -p "$T/sp"
# Hole at the start.
truncate -s 3M "$T/sp/start"
put "$T/sp/start" $((3 * M)) r:500K t:100K+7
# Holes in the middle: a large one, one below the threshold (8 KiB), one of
# 60 KiB next to 8 KiB of written zeros (together a 68 KiB zero run).
put "$T/sp/middle" 0 r:1M+123
put "$T/sp/middle" $((6 * M)) r:300K
put "$T/sp/middle" $((7 * M)) t:1000
put "$T/sp/middle" $((7 * M + 12 * K)) r:5000
put "$T/sp/middle" $((8 * M)) z:8K
put "$T/sp/middle" $((8 * M + 68 * K)) t:4K
# Hole at the end, size not a multiple of 4 KiB.
put "$T/sp/end" 0 r:2M
truncate -s $((10 * M + 777)) "$T/sp/end"
# Only a hole.
truncate -s $((20 * M + 1)) "$T/sp/empty"
# Holes of exactly 64 KiB and 60 KiB, data not aligned to chunks.
put "$T/sp/edges" 0 t:4K
put "$T/sp/edges" $((68 * K)) r:4K
put "$T/sp/edges" $((132 * K)) o:1M
put "$T/sp/edges" $((132 * K + M + 64 * K)) t:1
# Preallocated (unwritten) extents read as zeros.
put "$T/sp/prealloc" 0 r:100K
fallocate -o $((100 * K)) -l $((2 * M)) "$T/sp/prealloc" || fail "fallocate failed"
put "$T/sp/prealloc" $((100 * K + 2 * M)) t:1000

for s in start middle end empty edges prealloc; do
    f=$T/sp/$s
    cp --sparse=never "$f" "$f.dense" || fail "cp --sparse=never $f failed"
    alloc=$(($(stat -c %b "$f") * $(stat -c %B "$f")))
    if [ "$s" != prealloc ] && [ "$alloc" -ge "$(fsize "$f")" ]; then
        fail "sparse file $s has no holes (filesystem of $T keeps none?): $alloc bytes allocated for $(fsize "$f")"
    fi
    z "$T/sp.gz" -c "$f" && rt "sparse $s" "$T/sp.gz" "$f.dense"
    z "$T/sp-n.gz" -n -c "$f" || continue
    z "$T/sp-dense.gz" -n -c "$f.dense" &&
        same "sparse $s: sparse file vs dense copy" "$T/sp-n.gz" "$T/sp-dense.gz"
    z "$T/sp-stdin.gz" -n -c < "$f" &&
        same "sparse $s: file vs stdin redirected from it" "$T/sp-n.gz" "$T/sp-stdin.gz"
    z "$T/sp-pipe.gz" -c < <(cat "$f") &&
        same "sparse $s: file vs pipe" "$T/sp-n.gz" "$T/sp-pipe.gz"
    z "$T/sp-p1.gz" -n -c -p 1 --zero-run 4 "$f" &&
        z "$T/sp-p3.gz" -n -c -p 3 --zero-run 4 < <(cat "$f.dense") &&
        same "sparse $s: -p 1 file vs -p 3 pipe, --zero-run 4" "$T/sp-p1.gz" "$T/sp-p3.gz"
    # Holes are never read: a read fault after the allocated bytes (plus a
    # little) must not be hit.  (-n: without it, a named file's manifest
    # has libblkid probe its partition table and filesystem, reading a few
    # fixed places, holes or not: the compressor's reading is checked here.)
    if [ "$s" != prealloc ]; then
        LD_PRELOAD=$FAULT_SO FAULT_READ_EIO_AFTER=$((alloc + 64 * K)) \
            "$SPIGZ" -n -c "$f" > "$T/sp-fault.gz" 2> "$T/z.err"
        rc=$?
        if [ "$rc" -eq 0 ] && cmp -s "$T/sp-fault.gz" "$T/sp-n.gz"; then
            pass
        else
            fail "sparse $s: holes were read (reads limited to $alloc+64K bytes: exit $rc, $(errtext "$T/z.err"))"
        fi
    fi
    rm -f "$f.dense"
done

# ---- 5. thread count and level invariance, every level ----
section "5. thread count and level invariance, every level"
gen "$T/in/pmix" r:1500K z:2M t:2M z:100K r:500K z:64K t:1M+17
for p in 1 2 3 4 5 6 7 8; do
    z "$T/p$p.gz" -c -p "$p" "$T/in/pmix" || continue
    [ "$p" -gt 1 ] && same "-p $p vs -p 1" "$T/p1.gz" "$T/p$p.gz"
done
rt "-p 8 output" "$T/p8.gz" "$T/in/pmix"
for lv in 1 2 3 "$MAXLV"; do
    has_level "$lv" "thread count invariance" || continue
    z "$T/l$lv-p1.gz" -c "-$lv" -p 1 "$T/in/pmix" || continue
    for p in 3 8; do
        z "$T/l$lv-p$p.gz" -c "-$lv" -p "$p" "$T/in/pmix" &&
            same "level $lv: -p $p vs -p 1" "$T/l$lv-p1.gz" "$T/l$lv-p$p.gz"
    done
done
z "$T/b64-p1.gz" -c -b 64 -p 1 "$T/in/pmix" &&
    z "$T/b64-p8.gz" -c -b 64 -p 8 "$T/in/pmix" &&
    same "-b 64: -p 8 vs -p 1" "$T/b64-p1.gz" "$T/b64-p8.gz"

gen "$T/in/lmix" t:600K r:300K z:300K t:300K z:5000 o:10000
for lv in $(seq 0 12); do
    has_level "$lv" "round trip" || continue
    z "$T/lv$lv.gz" -c "-$lv" -p 2 "$T/in/lmix" && rt "level $lv" "$T/lv$lv.gz" "$T/in/lmix"
done
# the fastest level the build has (1, or 4 without ISA-L) against 9
for lo in 1 2 3 4; do [ -s "$T/lv$lo.gz" ] && break; done
if [ -s "$T/lv0.gz" ] && [ -s "$T/lv$lo.gz" ] && [ -s "$T/lv9.gz" ]; then
    l0=$(fsize "$T/lv0.gz") llo=$(fsize "$T/lv$lo.gz") l9=$(fsize "$T/lv9.gz")
    in=$(($(fsize "$T/in/lmix") - 300 * K))
    check "level 0 stores the data (output $l0 bytes >= $in data bytes)" [ "$l0" -ge "$in" ]
    check "level 9 output ($l9 bytes) smaller than level $lo output ($llo bytes)" [ "$l9" -lt "$llo" ]
fi
has_level 1 "--fast (-1)" &&
    z "$T/fast.gz" -c --fast "$T/in/lmix" && same "--fast is -1" "$T/fast.gz" "$T/lv1.gz"
z "$T/best.gz" -c --best "$T/in/lmix" && same "--best is -9" "$T/best.gz" "$T/lv9.gz"

# ---- 6. a long zero run from a pipe: near deflate's 1032:1 bound ----
section "6. a long zero run from a pipe: near deflate's 1032:1 bound"
n=$((G + 12345))
truncate -s "$n" "$T/zeros.ref"
z "$T/zeros.gz" -c < <(head -c "$n" /dev/zero)
if [ -s "$T/zeros.gz" ]; then
    zs=$(fsize "$T/zeros.gz")
    # 1.05 MB per GiB at most; and deflate cannot beat 1032:1.
    lim=$((n * 1050000 / G + 100))
    check "$n zeros from a pipe: $zs bytes, expected <= $lim" [ "$zs" -le "$lim" ]
    check "$n zeros: $zs bytes is not below deflate's 1032:1 limit" [ "$zs" -ge $((n / 1032)) ]
    igzip -dc "$T/zeros.gz" | "$PY3" "$PY/sparsecmp.py" "$T/zeros.ref"
    st=("${PIPESTATUS[@]}")
    check "$n zeros round trip (igzip -dc: exit ${st[0]}, compare: exit ${st[1]})" \
        both0 "${st[0]}" "${st[1]}"
fi
rm -f "$T/zeros.gz" "$T/zeros.ref"

# ---- 7. header fields: FNAME and MTIME ----
section "7. header fields: FNAME and MTIME"
mkdir -p "$T/hdr/sub/dir"
hf=$T/hdr/sub/dir/file.txt
gen "$hf" t:3000
touch -d @1600000000 "$hf"
hdr_is() { # hdr_is DESC GZ EXPECTED
    local got
    got=$("$PY3" "$PY/hdr.py" "$2" 2>&1)
    if [ "$got" = "$3" ]; then pass; else fail "$1: header '$got', expected '$3'"; fi
}
z "$T/h.gz" -c "$hf" && hdr_is "-c FILE stores the base name and mtime" "$T/h.gz" \
    "flg=8 mtime=1600000000 xfl=0 os=3 name=file.txt"
cp -p "$hf" "$T/hdr/copy.txt"
z "$T/h.out" -k "$T/hdr/copy.txt" && hdr_is "FILE -> FILE.gz stores the name and mtime" \
    "$T/hdr/copy.txt.gz" "flg=8 mtime=1600000000 xfl=0 os=3 name=copy.txt"
z "$T/h.out" -o "$T/hdr/o.gz" "$hf" && hdr_is "-o OUT FILE stores FILE's name" \
    "$T/hdr/o.gz" "flg=8 mtime=1600000000 xfl=0 os=3 name=file.txt"
z "$T/h.gz" -c -n "$hf" && hdr_is "-n stores neither name nor mtime" "$T/h.gz" \
    "flg=0 mtime=0 xfl=0 os=3 name=-"
z "$T/h.gz" -c -n -N "$hf" && hdr_is "-n -N: the last wins, name stored" "$T/h.gz" \
    "flg=8 mtime=1600000000 xfl=0 os=3 name=file.txt"
z "$T/h.gz" -c --no-name "$hf" && hdr_is "--no-name" "$T/h.gz" "flg=0 mtime=0 xfl=0 os=3 name=-"
z "$T/h.gz" -c < "$hf" && hdr_is "stdin (a regular file) stores its time, no name (gzip)" \
    "$T/h.gz" "flg=0 mtime=1600000000 xfl=0 os=3 name=-"
z "$T/h.gz" -n -c < "$hf" && hdr_is "stdin (a regular file) with -n stores nothing" "$T/h.gz" \
    "flg=0 mtime=0 xfl=0 os=3 name=-"
z "$T/h.gz" -N -c < <(cat "$hf") && hdr_is "stdin (a pipe), even with -N, stores nothing" \
    "$T/h.gz" "flg=0 mtime=0 xfl=0 os=3 name=-"
z "$T/h.gz" -c - < "$hf" && hdr_is "'-' stores its file's time" "$T/h.gz" \
    "flg=0 mtime=1600000000 xfl=0 os=3 name=-"
z "$T/h.gz" -c -9 "$hf" && hdr_is "-9 sets XFL 2" "$T/h.gz" \
    "flg=8 mtime=1600000000 xfl=2 os=3 name=file.txt"
has_level 1 "-1's XFL" && z "$T/h.gz" -c -1 "$hf" && hdr_is "-1 sets XFL 4" "$T/h.gz" \
    "flg=8 mtime=1600000000 xfl=4 os=3 name=file.txt"
# A time beyond MTIME's 32 bits (or before 1970): MTIME 0 and, as gzip, a
# warning (status 2); with -n nothing is stored and nothing said.
for when in "2200-01-01 00:00:00 UTC" "1960-01-01 00:00:00 UTC"; do
    touch -d "$when" "$hf"
    "$SPIGZ" -c "$hf" > "$T/h.gz" 2> "$T/z.err"
    rc=$?
    check "mtime $when: status $rc, expected 2 (gzip's warning)" [ "$rc" -eq 2 ]
    check "mtime $when: the warning names the file" grep -q "file.txt: warning: file timestamp out of range" "$T/z.err"
    hdr_is "mtime $when: MTIME 0, name stored" "$T/h.gz" "flg=8 mtime=0 xfl=0 os=3 name=file.txt"
    z "$T/h.gz" -n -c "$hf"
done
rt "header case" "$T/h.gz" "$hf"

# A regular file of size 0 with content (/proc): read as a stream.
if [ -r /proc/version ]; then
    cat /proc/version > "$T/hdr/version"
    z "$T/h.gz" -c /proc/version && rt "/proc/version (size 0, has content)" "$T/h.gz" "$T/hdr/version"
else
    echo "NOTE: no /proc/version, the size-0 /proc file case is not tested" >&2
fi

# ---- 8. stdin redirected from a regular file is read from its offset ----
section "8. stdin redirected from a regular file is read from its offset"
# "{ skip a header; spigz; } < file" must compress the rest of the file, as
# gzip and pigz do, and leave the offset at the end of the input.
gen "$T/in/off" t:200000
tail -c +1001 "$T/in/off" > "$T/in/off.rest"
{ dd bs=1000 count=1 of=/dev/null status=none; "$SPIGZ" -c > "$T/off.gz" 2> "$T/z.err"; } < "$T/in/off"
if gzip -dc "$T/off.gz" 2>/dev/null | cmp -s - "$T/in/off.rest"; then
    pass
else
    fail "stdin at offset 1000 of a regular file: '{ dd bs=1000 count=1 of=/dev/null; spigz -c; } < FILE' must compress FILE from byte 1000 (gzip -dc gives $(gzip -dc "$T/off.gz" 2>/dev/null | wc -c) bytes, expected $(fsize "$T/in/off.rest"))"
fi
truncate -s 10M "$T/in/off2"
put "$T/in/off2" 0 t:5000
left=$({ "$SPIGZ" -c > /dev/null 2>&1; cat; } < "$T/in/off2" | wc -c)
check "stdin from a regular file is consumed to its end: '{ spigz -c >/dev/null; cat; } < FILE' left $left bytes for cat, expected 0" \
    [ "$left" -eq 0 ]

# ---- 9. a sparse input over 4 GiB ----
section "9. a sparse input over 4 GiB"
big=$T/big
size=$((4 * G + M + 37))
truncate -s "$size" "$big"
put "$big" $((2 * G - 5000)) r:300000
dd if=/dev/zero of="$big" bs=1M count=1 seek=$((3 * G)) oflag=seek_bytes conv=notrunc status=none
put "$big" $((4 * G + 100)) r:100000 t:100000
z "$T/big.out" -k "$big"
if [ -s "$big.gz" ]; then
    read -r _ isize total < <("$PY3" "$PY/trailer.py" "$big.gz")
    check "over 4 GiB: ISIZE $isize = size mod 2^32 = $((size % (1 << 32)))" [ "$isize" -eq $((size % (1 << 32))) ]
    check "over 4 GiB: the footer's total $total = size $size" [ "$total" -eq "$size" ]
    igzip -dc "$big.gz" | "$PY3" "$PY/sparsecmp.py" "$big"
    st=("${PIPESTATUS[@]}")
    check "over 4 GiB: round trip (igzip -dc: exit ${st[0]}, compare: exit ${st[1]})" \
        both0 "${st[0]}" "${st[1]}"
    # igzip checked the CRC and ISIZE; the file and pipe paths agree too.
    z "$T/big-n.gz" -n -c -p 1 "$big" && z "$T/big-pipe.gz" -c -p 2 < <(cat "$big") &&
        same "over 4 GiB: -p 1 file vs -p 2 pipe" "$T/big-n.gz" "$T/big-pipe.gz"
    alloc=$(($(stat -c %b "$big") * $(stat -c %B "$big")))
    LD_PRELOAD=$FAULT_SO FAULT_READ_EIO_AFTER=$((alloc + 64 * K)) "$SPIGZ" -n -c "$big" \
        > "$T/big-f.gz" 2> "$T/z.err"
    rc=$?
    if [ "$rc" -eq 0 ] && cmp -s "$T/big-f.gz" "$T/big-n.gz"; then
        pass
    else
        fail "over 4 GiB: holes were read (reads limited to $alloc+64K bytes: exit $rc, $(errtext "$T/z.err"))"
    fi
fi
rm -f "$big" "$big.gz" "$T/big-n.gz" "$T/big-pipe.gz" "$T/big-f.gz"

finish

#!/bin/bash
# inflate.sh — the sequential restore's two inflaters agree.  A gzip file
# read by name (or as a seekable stdin) is inflated by ISA-L, and by zlib
# wherever ISA-L stops short (src/restore/unz_fast.c); SPIGZ_INFLATE=zlib
# uses zlib alone, which is GNU gzip's verdict byte for byte (decompress.sh,
# badgz.sh).  Here, on hundreds of damaged and cut files and on
# multi-member files whose members end across the 1 MiB read boundaries:
# the same status, stderr and output with either, the output GNU gzip's
# when gzip agrees on the status, cut files' output gzip's to the byte (its
# look-ahead emulated), and -vv naming the inflater used.
# shellcheck source=tests/lib.sh
. "${srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need gzip pigz igzip libdeflate-gzip python3 cmp
PY3=$(command -v python3)

section "1. members ending across read boundaries, by name: ISA-L, output exact"
"$PY3" - "$T" <<'PYEOF'
import os, random, subprocess, sys, zlib
t = sys.argv[1]
rnd = random.Random(7)
parts, plain = [], []
size = 0
# random (incompressible) members so that compressed offsets track the
# output: member ends land on and around every 1 MiB of input
while size < 5 << 20:
    n = rnd.choice([0, 1, 2, 100, 4096, 65536, 300000, 1 << 20, (1 << 20) - 3, 1500000])
    data = rnd.randbytes(n) if rnd.random() < 0.7 else bytes(n)
    c = zlib.compressobj(rnd.choice([1, 6, 9]), zlib.DEFLATED, 31)
    gz = c.compress(data) + c.flush()
    parts.append(gz)
    plain.append(data)
    size += len(gz)
open(os.path.join(t, "multi.gz"), "wb").write(b"".join(parts))
open(os.path.join(t, "multi"), "wb").write(b"".join(plain))
print(len(parts))
PYEOF
"$SPIGZ" -dc -vv "$T/multi.gz" > "$T/out" 2> "$T/err"
check "multi-member: -dc exits 0 ($(cat "$T/err"))" [ $? -eq 0 ]
check "multi-member: the output is the members' data" cmp -s "$T/out" "$T/multi"
check "multi-member: inflated by $FAST_INFLATE ($(cat "$T/err"))" grep -q "(sequential, $FAST_INFLATE)" "$T/err"
"$SPIGZ" -dc < "$T/multi.gz" > "$T/out2" 2>/dev/null
check "multi-member, stdin a file: the same output" cmp -s "$T/out2" "$T/multi"
cat "$T/multi.gz" | "$SPIGZ" -dc > "$T/out3" 2>/dev/null
check "multi-member, from a pipe: the same output" cmp -s "$T/out3" "$T/multi"
"$SPIGZ" -t "$T/multi.gz"
check "multi-member: -t exits 0" [ $? -eq 0 ]
# trailing zeros and trailing garbage after the last member, as gzip
for tail in zeros garbage; do
    cp "$T/multi.gz" "$T/tail.gz"
    if [ $tail = zeros ]; then head -c 1000 /dev/zero >> "$T/tail.gz"; else printf 'xyz123' >> "$T/tail.gz"; fi
    gzip -dc < "$T/tail.gz" > "$T/g.out" 2>/dev/null; g=$?
    "$SPIGZ" -dc "$T/tail.gz" > "$T/s.out" 2>/dev/null; s=$?
    check "trailing $tail: status $s, gzip's $g" [ "$s" -eq "$g" ]
    check "trailing $tail: gzip's output" cmp -s "$T/s.out" "$T/g.out"
done

section "2. damaged and cut files: ISA-L (with zlib where it stops) = zlib alone = gzip"
# Bases: text-like and binary data over several output items (1 MiB each),
# made by gzip, pigz, igzip and libdeflate.
"$PY3" - "$T" <<'PYEOF'
import random, sys
rnd = random.Random(11)
words = [bytes(rnd.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randint(2, 9))) for _ in range(3000)]
out = bytearray()
while len(out) < 3 << 20:
    if rnd.random() < 0.1:
        out += rnd.randbytes(rnd.randint(1, 20000))
    else:
        out += b" ".join(rnd.choice(words) for _ in range(200)) + b"\n"
open(sys.argv[1] + "/base", "wb").write(out[:3 << 20])
PYEOF
gzip -c -6 "$T/base" > "$T/b-gzip.gz"
pigz -c -p 2 "$T/base" > "$T/b-pigz.gz"
igzip -c -1 "$T/base" > "$T/b-igzip.gz"
libdeflate-gzip -c -9 "$T/base" > "$T/b-ld.gz"
head -c 200000 "$T/base" | gzip -9 > "$T/b-small.gz"

"$PY3" - "$T" "$SPIGZ" <<'PYEOF'
import hashlib, os, random, subprocess, sys
t, spigz = sys.argv[1], sys.argv[2]
rnd = random.Random(42)
bases = ["b-gzip.gz", "b-pigz.gz", "b-igzip.gz", "b-ld.gz", "b-small.gz"]
env_zlib = dict(os.environ, SPIGZ_INFLATE="zlib")

def run(cmd, path, env=None):
    with open(path, "rb") as f:
        p = subprocess.run(cmd, stdin=f, capture_output=True, env=env, timeout=60)
    return p.returncode, p.stdout, p.stderr

data = open(os.path.join(t, "base"), "rb").read()
plain = {b: data for b in bases}
plain["b-small.gz"] = data[:200000]
cases = fails = agree_gzip = intact = 0
for base in bases:
    orig = open(os.path.join(t, base), "rb").read()
    for k in range(60):
        d = bytearray(orig)
        how = rnd.random()
        if how < 0.15:                           # cut
            d = d[:rnd.randrange(10, len(d))]
        else:                                    # 1 to 4 damaged bytes, often early in a block
            for _ in range(rnd.randint(1, 4)):
                p = rnd.randrange(10, len(d) - 8)
                if rnd.random() < 0.5:
                    d[p] ^= 1 << rnd.randrange(8)
                else:
                    d[p] = rnd.randrange(256)
        path = os.path.join(t, "case.gz")
        open(path, "wb").write(d)
        cases += 1
        fast = run([spigz, "-dc", path], path)
        slow = run([spigz, "-dc", path], path, env_zlib)
        gz = run(["gzip", "-dc"], path)
        what = f"{base} case {k}"
        if fast[0] == 0 and slow[0] == 1 and fast[1] == plain[base]:
            # the one way they may part: a damaged Huffman header that
            # zlib (and gzip) refuse, whose damage changes no decoded byte
            # (ISA-L builds the code anyway; the CRC-32 and length vouch
            # for the output): restored by -d, refused by -t (doc/GZIP.md)
            intact += 1
            t = run([spigz, "-t", path], path)
            if t[0] != 1:
                fails += 1
                print(f"FAIL: {what}: -t took a file that zlib refuses (status {t[0]})")
            continue
        if fast[0] != slow[0] or fast[2] != slow[2] or fast[1] != slow[1]:
            fails += 1
            print(f"FAIL: {what}: ISA-L path status {fast[0]}, {len(fast[1])} bytes, {fast[2][:120]!r}; "
                  f"zlib status {slow[0]}, {len(slow[1])} bytes, {slow[2][:120]!r}")
            open(os.path.join(t, f"fail-{base}-{k}.gz"), "wb").write(d)
        if fast[0] == gz[0] and fast[1] == gz[1]:
            agree_gzip += 1
        elif fast[0] == gz[0]:
            fails += 1
            print(f"FAIL: {what}: status {gz[0]} as gzip, but {len(fast[1])} bytes where gzip wrote {len(gz[1])}")
            if os.environ.get("KEEP_FAILS"):
                open(os.path.join(os.environ["KEEP_FAILS"], f"fail-{base}-{k}.gz"), "wb").write(d)
print(f"{cases} cases, {fails} failed, {agree_gzip} with gzip's status and output, "
      f"{intact} restored by ISA-L where zlib refuses a header")
sys.exit(1 if fails else 0)
PYEOF
check "damaged and cut files: both inflaters agree, and with gzip" [ $? -eq 0 ]

section "2b. cut files: gzip's output to the byte, by name, from stdin and from a pipe"
# gzip stops a code or two before zlib at the end of a cut stream (its
# look-ahead, resync.h rs_gzip_cut): fixed blocks (a short input), stored
# blocks (random data), dynamic ones from five compressors.
head -c 300 "$T/base" | gzip -9 > "$T/c-fixed.gz"
head -c 70000 /dev/urandom > "$T/rnd" && gzip -c "$T/rnd" > "$T/c-stored.gz"
cp "$T/b-gzip.gz" "$T/c-gzip.gz"
gzip -1 -c "$T/base" > "$T/c-gzip1.gz"
cp "$T/b-pigz.gz" "$T/c-pigz.gz"
cp "$T/b-igzip.gz" "$T/c-igzip.gz"
libdeflate-gzip -12 -c "$T/base" > "$T/c-ld12.gz"
"$PY3" - "$T" "$SPIGZ" <<'PYEOF'
import os, random, subprocess, sys
t, spigz = sys.argv[1], sys.argv[2]
rnd = random.Random(5)
env_zlib = dict(os.environ, SPIGZ_INFLATE="zlib")
def run(cmd, path, env=None, pipe=False):
    if pipe:
        data = open(path, "rb").read()
        p = subprocess.run(cmd, input=data, capture_output=True, env=env, timeout=60)
    else:
        with open(path, "rb") as f:
            p = subprocess.run(cmd, stdin=f, capture_output=True, env=env, timeout=60)
    return p.returncode, p.stdout
cases = fails = 0
for base in ["c-fixed.gz", "c-stored.gz", "c-gzip.gz", "c-gzip1.gz", "c-pigz.gz", "c-igzip.gz", "c-ld12.gz"]:
    d = open(os.path.join(t, base), "rb").read()
    n = len(d) - 8
    cuts = sorted(set([rnd.randrange(11, n) for _ in range(25)] + [n - k for k in range(1, 6)]))
    for cut in cuts:
        path = os.path.join(t, "cut.gz")
        open(path, "wb").write(d[:cut])
        gz = run(["gzip", "-dc"], path)
        for how, got in (("by name", run([spigz, "-dc", path], path)),
                         ("zlib", run([spigz, "-dc", path], path, env_zlib)),
                         ("pipe", run([spigz, "-dc"], path, pipe=True))):
            cases += 1
            if got != gz:
                fails += 1
                print(f"FAIL: {base} cut at {cut} ({how}): status {got[0]}, {len(got[1])} bytes; "
                      f"gzip status {gz[0]}, {len(gz[1])} bytes")
print(f"{cases} cut cases, {fails} failed")
sys.exit(1 if fails else 0)
PYEOF
check "cut files: gzip's status and output to the byte" [ $? -eq 0 ]

section "3. the inflater each path takes"
gzip -c "$T/base" > "$T/one.gz"
"$SPIGZ" -dc -vv "$T/one.gz" > /dev/null 2> "$T/err"
check "by name: $FAST_INFLATE ($(cat "$T/err"))" grep -q "(sequential, $FAST_INFLATE)" "$T/err"
SPIGZ_INFLATE=zlib "$SPIGZ" -dc -vv "$T/one.gz" > /dev/null 2> "$T/err"
check "SPIGZ_INFLATE=zlib: zlib ($(cat "$T/err"))" grep -q "(sequential, zlib)" "$T/err"
cat "$T/one.gz" | "$SPIGZ" -dc -vv > /dev/null 2> "$T/err"
check "from a pipe: zlib ($(cat "$T/err"))" grep -q "(sequential, zlib)" "$T/err"
# a damaged second member: ISA-L for the first, zlib gives the verdict on it
head -c 100000 "$T/base" | gzip > "$T/two.gz"
"$PY3" -c "
import sys; d = bytearray(open(sys.argv[1], 'rb').read()); d[len(d) // 2] ^= 0x10
sys.stdout.buffer.write(bytes(d))" "$T/two.gz" > "$T/bad2.gz"
cat "$T/one.gz" "$T/bad2.gz" > "$T/mixed.gz"
"$SPIGZ" -dc -vv "$T/mixed.gz" > "$T/s.out" 2> "$T/err"; s=$?
gzip -dc "$T/mixed.gz" > "$T/g.out" 2>/dev/null; g=$?
check "a damaged second member: status $s, gzip's $g" [ "$s" -eq "$g" ]
check "a damaged second member: gzip's output" cmp -s "$T/s.out" "$T/g.out"
if [ "$FAST_INFLATE" = ISA-L ] && [ "$s" -eq 0 ]; then
    check "a damaged second member: ISA-L, then zlib ($(cat "$T/err"))" grep -q "ISA-L for 1 of 2 members" "$T/err"
fi

section "4. a header zlib refuses whose data is intact: restored by -d, refused by -t"
# One dynamic block whose literal/length code is incomplete (a 1-, a 2- and
# a 3-bit code: 'a', 'b' and end-of-block): GNU gzip and zlib refuse it,
# ISA-L builds the code and decodes the data, which the CRC-32 confirms.
"$PY3" - "$T/incomplete.gz" <<'PYEOF'
import struct, sys, zlib
bits = []
def put(v, n):                      # n bits of v, least significant first
    bits.extend((v >> i) & 1 for i in range(n))
def code(c, n):                     # a Huffman code, most significant bit first
    bits.extend((c >> (n - 1 - i)) & 1 for i in range(n))
put(1, 1); put(2, 2)                # final, dynamic
put(0, 5); put(0, 5)                # 257 literal/length codes, 1 distance code
order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]
cl = {18: 2, 0: 2, 1: 2, 2: 3, 3: 3}  # complete: 3/4 + 2/8
put(len(order) - 4, 4)
for s in order:
    put(cl.get(s, 0), 3)
clc = {0: (0b00, 2), 1: (0b01, 2), 18: (0b10, 2), 2: (0b110, 3), 3: (0b111, 3)}
def length(l):
    code(*clc[l])
def zeros(n):
    while n:
        k = min(n, 138); code(*clc[18]); put(k - 11, 7); n -= k
zeros(97); length(1); length(2); zeros(157); length(3); length(1)
text = b"abba" * 1000
for ch in text:
    code(0, 1) if ch == ord("a") else code(0b10, 2)
code(0b110, 3)                       # end of block
while len(bits) % 8:
    bits.append(0)
body = bytes(sum(bits[i + j] << j for j in range(8)) for i in range(0, len(bits), 8))
gz = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + body + struct.pack("<II", zlib.crc32(text), len(text))
open(sys.argv[1], "wb").write(gz)
open(sys.argv[1][:-3], "wb").write(text)
PYEOF
gzip -dc < "$T/incomplete.gz" > /dev/null 2> "$T/g.err"; g=$?
check "the incomplete code: gzip refuses it (status $g: $(cat "$T/g.err"))" [ "$g" -eq 1 ]
SPIGZ_INFLATE=zlib "$SPIGZ" -dc "$T/incomplete.gz" > /dev/null 2> "$T/err"; s=$?
check "the incomplete code: zlib alone refuses it as gzip (status $s: $(cat "$T/err"))" \
    [ "$s" -eq 1 ] && grep -q "format violated" "$T/err"
"$SPIGZ" -t "$T/incomplete.gz" 2> "$T/err"; s=$?
check "the incomplete code: -t refuses it as gzip (status $s)" [ "$s" -eq 1 ]
"$SPIGZ" -dc "$T/incomplete.gz" > "$T/out" 2> "$T/err"; s=$?
if [ "$FAST_INFLATE" = ISA-L ]; then
    check "the incomplete code: -d restores its data (status $s: $(cat "$T/err"))" [ "$s" -eq 0 ]
    check "the incomplete code: -d's output is the data the CRC-32 vouches for" \
        cmp -s "$T/out" "$T/incomplete"
else
    check "the incomplete code: -d refuses it (zlib only, status $s)" [ "$s" -eq 1 ]
fi
# The same code with nothing decoded (its first symbol is end-of-block):
# the trailer of nothing is eight zero bytes and vouches for nothing, so -d
# too gives gzip's verdict, alone and followed by other bytes (found by
# fuzz_decode: ISA-L said "decompression OK, trailing garbage ignored").
"$PY3" - "$T/incomplete.gz" "$T/empty.gz" "$T/empty-tail.gz" <<'PYEOF2'
import sys
d = open(sys.argv[1], "rb").read()
hdr, body = d[:10], d[10:-8]
# The code lengths end 97 + 2 + 157 + 2 symbols in; rebuild the body's bits
# up to there and append the end-of-block code (110) at once.
bits = [(b >> i) & 1 for b in body for i in range(8)]
out = []
def take(n):
    v = bits[:n]; del bits[:n]; out.extend(v); return v
take(3); take(10); take(4); take(19 * 3)
def clcode():
    a = take(2)
    if a == [1, 1]:
        take(1)
    return a
n = 0
while n < 258:
    a = clcode()
    if a == [0, 1] or a == [1, 1]:
        n += 1
    else:
        k = take(7); n += sum(b << i for i, b in enumerate(k)) + 11
out.extend([1, 1, 0])
while len(out) % 8:
    out.append(0)
empty = bytes(sum(out[i + j] << j for j in range(8)) for i in range(0, len(out), 8))
open(sys.argv[2], "wb").write(hdr + empty + bytes(8))
open(sys.argv[3], "wb").write(hdr + empty + bytes(8) + b"\x1c\x08E`D\x15\x10'")
PYEOF2
for f in empty empty-tail; do
    gzip -dc < "$T/$f.gz" > /dev/null 2> "$T/g.err"; g=$?
    "$SPIGZ" -dc "$T/$f.gz" > "$T/out" 2> "$T/err"; s=$?
    check "the incomplete code decoding to nothing ($f): -d's status $s is gzip's $g ($(cat "$T/err"))" \
        [ "$s" -eq "$g" ] && [ "$g" -eq 1 ]
    check "the incomplete code decoding to nothing ($f): gzip's message" grep -q "format violated" "$T/err"
done
section "5. a dynamic header with no code-length code: gzip's \"format violated\""
# HCLEN + 4 code-length lengths all 0 (GNU gzip's bug#33501): gzip refuses
# the header at once; zlib reads each length as 0 from one bit and fails
# only some 34 bytes later, so with fewer bytes after it, spigz said
# "unexpected end of file".  Alone, with bytes after it, after 100 KB of
# output (stored blocks), and as a second member: gzip's message, status
# and output, by name, from stdin, from a pipe, with zlib alone, and -t.
"$PY3" - "$T" <<'PYEOF'
import os, random, struct, sys, zlib
t = sys.argv[1]
HDR = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03"
bad = bytes([0x64, 0, 0, 0])           # dynamic, HLIT 12, HDIST 0, HCLEN 0: 4 zero lengths
data = random.Random(5).randbytes(100000)
stored = b""
for i in range(0, len(data), 65535):  # non-final stored blocks
    part = data[i:i + 65535]
    stored += b"\x00" + struct.pack("<HH", len(part), len(part) ^ 0xffff) + part
c = zlib.compressobj(9, zlib.DEFLATED, 31)
first = c.compress(b"first member " * 1000) + c.flush()
cases = {"alone": HDR + bad, "tail8": HDR + bad + bytes(8), "tail30": HDR + bad + b"\xff" * 30,
         "after-output": HDR + stored + bad + bytes(12),
         "second-member": first + HDR + bad + bytes(20)}
for name, d in cases.items():
    open(os.path.join(t, "nl-%s.gz" % name), "wb").write(d)
PYEOF
for n in alone tail8 tail30 after-output second-member; do
    f=$T/nl-$n.gz
    gzip -dc < "$f" > "$T/g.out" 2> "$T/g.err"; g=$?
    check "$n: gzip says format violated (status $g)" sh -c "[ $g -eq 1 ] && grep -q 'format violated' '$T/g.err'"
    for how in named stdin pipe zlib test; do
        case $how in
            named) "$SPIGZ" -dc "$f" ;;
            stdin) "$SPIGZ" -dc < "$f" ;;
            pipe) cat "$f" | "$SPIGZ" -dc ;;
            zlib) SPIGZ_INFLATE=zlib "$SPIGZ" -dc "$f" ;;
            test) "$SPIGZ" -t "$f" ;;
        esac > "$T/s.out" 2> "$T/err"
        s=$?
        check "$n ($how): status 1 and gzip's message ($(head -c 200 "$T/err"))" \
            sh -c "[ $s -eq 1 ] && grep -q 'invalid compressed data--format violated' '$T/err'"
        [ $how = test ] || check "$n ($how): gzip's output ($(wc -c < "$T/s.out") bytes, gzip $(wc -c < "$T/g.out"))" \
            cmp -s "$T/s.out" "$T/g.out"
    done
done

finish

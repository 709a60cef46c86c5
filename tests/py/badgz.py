#!/usr/bin/env python3
"""badgz.py — malformed and tricky gzip inputs, written here bit by bit, for
tests/badgz.sh (which takes GNU gzip's verdict on each, live, and requires
spigz's to match).

  badgz.py DIR      write DIR/NAME for every vector and DIR/MANIFEST.tsv, one
                    line a vector:  file  class  expect  zlib  description
  badgz.py --list   the same lines on stdout, nothing written

expect: what the vector was built to be, checked against gzip by the test:
"ok:SHA256" (gzip decodes it to exactly these bytes, status 0), "warn:SHA256"
(the same bytes, status 2: a warning), "fail" (gzip refuses it, status 1),
"-" (no claim: gzip's own behaviour is the point).  zlib: what zlib's raw
inflate says of the deflate data of the vector's member under test ("ok N":
ends after N bytes, "cut", or its error message), checked here as each vector
is written, so that a vector which stopped testing what its name says fails
the generator rather than passing quietly; "-" where no deflate data is
under test.

Everything is built here from the formats' own descriptions: RFC 1951
(deflate) and RFC 1952 (gzip), compress(1)'s LZW as GNU gzip's unlzw reads it,
pack(1) as GNU gzip's unpack reads it (the encoder is gzdiff.py's), the zip
local header (PKWARE's APPNOTE), BGZF's EOF block (the SAM specification).
No file of another project is used.  Deterministic: fixed seeds, no clock.
Python 3 standard library only (zlib for the ordinary compressed data and for
the self-check).
"""
import base64
import functools
import hashlib
import os
import random
import struct
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gzdiff import pack_encode  # noqa: E402  (a pack(1) encoder, shared)

# ---------------------------------------------------------------- bits


class Bits:
    """Deflate's bit order: values least significant bit first, Huffman
    codes most significant bit first."""

    def __init__(self):
        self.out = bytearray()
        self.acc = 0
        self.n = 0

    def put(self, v, n):
        assert 0 <= v < (1 << n) or n == 0, (v, n)
        self.acc |= v << self.n
        self.n += n
        while self.n >= 8:
            self.out.append(self.acc & 0xFF)
            self.acc >>= 8
            self.n -= 8

    def code(self, c, n):
        self.put(int(format(c, "0%db" % n)[::-1], 2) if n else 0, n)

    def align(self, fill=0):
        if self.n:
            self.put(fill & ((1 << (8 - self.n)) - 1), 8 - self.n)

    def raw(self, b):
        assert self.n == 0
        self.out += b

    def bits(self):
        return 8 * len(self.out) + self.n

    def done(self, fill=0):
        self.align(fill)
        return bytes(self.out)

# ---------------------------------------------------------------- Huffman


def canon(lengths):
    return _canon(tuple(lengths))


@functools.lru_cache(maxsize=64)
def _canon(lengths):
    """RFC 1951 3.2.2: the canonical code of each symbol, (code, length), or
    None for length 0.  Any lengths are taken: an over-subscribed set gets
    codes that collide, which is enough to write a header a decoder refuses."""
    top = max(lengths, default=0)
    count = [0] * (top + 2)
    for ln in lengths:
        if ln:
            count[ln] += 1
    nxt, code = [0] * (top + 2), 0
    for b in range(1, top + 1):
        code = (code + count[b - 1]) << 1
        nxt[b] = code
    out = []
    for ln in lengths:
        if ln:
            out.append((nxt[ln] & ((1 << ln) - 1), ln))
            nxt[ln] += 1
        else:
            out.append(None)
    return out


def huff_lengths(freq, n, limit):
    """Code lengths (a list of n) of a complete Huffman code for the symbols
    of freq (symbol -> count > 0), none longer than limit.  One symbol gets
    a partner (the next free symbol): a complete code needs two."""
    freq = {s: f for s, f in freq.items() if f}
    if len(freq) == 1:
        (s,) = freq
        freq[(s + 1) % n] = 1
    while True:
        nodes = [(f, [s]) for s, f in sorted(freq.items())]
        depth = dict.fromkeys(freq, 0)
        while len(nodes) > 1:
            nodes.sort(key=lambda t: t[0])
            (f1, a), (f2, b) = nodes[0], nodes[1]
            for s in a + b:
                depth[s] += 1
            nodes = nodes[2:] + [(f1 + f2, a + b)]
        if max(depth.values()) <= limit:
            return [depth.get(s, 0) for s in range(n)]
        freq = {s: (f + 1) // 2 for s, f in freq.items()}


FIXED_LIT = [8] * 144 + [9] * 112 + [7] * 24 + [8] * 8
FIXED_DIST = [5] * 32
LBASE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99,
         115, 131, 163, 195, 227, 258]
LEXT = [0] * 8 + [1] * 4 + [2] * 4 + [3] * 4 + [4] * 4 + [5] * 4 + [0]
DBASE = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025,
         1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577]
DEXT = [0, 0] + [(i - 2) // 2 for i in range(2, 30)]
CL_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]


def len_sym(n):
    i = max(i for i in range(29) if LBASE[i] <= n)
    return 257 + i, n - LBASE[i], LEXT[i]


def dist_sym(d):
    i = max(i for i in range(30) if DBASE[i] <= d)
    return i, d - DBASE[i], DEXT[i]

# ---------------------------------------------------------------- deflate
# A block's content is a list of tokens: a literal (int 0..255), a match
# ("m", length, distance), or a symbol written as given, valid or not:
# ("L", litlen symbol, extra value, extra bits), ("D", distance symbol,
# extra value, extra bits).  The end-of-block code follows unless eob=False.


def symbols(tokens):
    for t in tokens:
        if isinstance(t, int):
            yield "L", t, 0, 0
        elif t[0] == "m":
            yield ("L",) + len_sym(t[1])
            yield ("D",) + dist_sym(t[2])
        else:
            yield t


def write_tokens(bw, tokens, lit, dist, eob=True):
    lc, dc = canon(lit), canon(dist)
    for kind, sym, val, nx in list(symbols(tokens)) + ([("L", 256, 0, 0)] if eob else []):
        code = (lc if kind == "L" else dc)[sym]
        bw.code(*code)
        bw.put(val, nx)


def stored(bw, data, final=1, length=None, nlen=None, pad=0):
    bw.put(final, 1)
    bw.put(0, 2)
    bw.align(pad)
    n = len(data) if length is None else length
    bw.raw(struct.pack("<HH", n, (n ^ 0xFFFF) if nlen is None else nlen) + data)


def fixed(bw, tokens, final=1, eob=True):
    bw.put(final, 1)
    bw.put(1, 2)
    write_tokens(bw, tokens, FIXED_LIT, FIXED_DIST, eob)


def rle(lengths):
    """Code-length symbols (symbol, extra value) for a list of lengths."""
    out, i = [], 0
    while i < len(lengths):
        v, run = lengths[i], 1
        while i + run < len(lengths) and lengths[i + run] == v:
            run += 1
        left = run
        if v == 0:
            while left >= 11:
                k = min(left, 138)
                out.append((18, k - 11))
                left -= k
            if left >= 3:
                out.append((17, left - 3))
                left = 0
        else:
            out.append((v, 0))
            left -= 1
            while left >= 3:
                k = min(left, 6)
                out.append((16, k - 3))
                left -= k
        out += [(v, 0)] * left
        i += run
    return out


CL_EXTRA = {16: 2, 17: 3, 18: 7}


def dynamic(bw, tokens, final=1, lit=None, dist=None, cl=None, cl_lens=None, hlit=None,
            hdist=None, hclen=None, eob=True, data=True):
    """A dynamic block: lengths from the tokens unless given; any header
    field may be given as it should not be."""
    syms = list(symbols(tokens))
    if lit is None:
        f = {256: 1} if eob else {}
        for k, s, _, _ in syms:
            if k == "L":
                f[s] = f.get(s, 0) + 1
        lit = huff_lengths(f, 286, 15)
        while len(lit) > 257 and lit[-1] == 0:
            lit.pop()
    if dist is None:
        f = {}
        for k, s, _, _ in syms:
            if k == "D":
                f[s] = f.get(s, 0) + 1
        dist = huff_lengths(f, 30, 15) if f else [1]
        while len(dist) > 1 and dist[-1] == 0:
            dist.pop()
    if cl is None:
        cl = rle(list(lit) + list(dist))
    if cl_lens is None:
        f = {}
        for s, _ in cl:
            f[s] = f.get(s, 0) + 1
        cl_lens = huff_lengths(f, 19, 7)
    n = 19
    while n > 4 and cl_lens[CL_ORDER[n - 1]] == 0:
        n -= 1
    bw.put(final, 1)
    bw.put(2, 2)
    bw.put(len(lit) - 257 if hlit is None else hlit, 5)
    bw.put(len(dist) - 1 if hdist is None else hdist, 5)
    bw.put((n if hclen is None else hclen) - 4, 4)
    for i in range(n if hclen is None else hclen):
        bw.put(cl_lens[CL_ORDER[i]], 3)
    codes = canon(cl_lens)
    for s, x in cl:
        bw.code(*codes[s])
        if s in CL_EXTRA:
            bw.put(x, CL_EXTRA[s])
    if data:
        write_tokens(bw, tokens, lit, dist, eob)
    return lit, dist


def lz_tokens(data, window=32768):
    """Greedy LZ77 tokens for small data (a hash of 3-byte prefixes)."""
    out, pos, seen = [], 0, {}
    while pos < len(data):
        best = (0, 0)
        for cand in reversed(seen.get(data[pos:pos + 3], [])[-16:]):
            if pos - cand > window:
                break
            n = 0
            while n < 258 and pos + n < len(data) and data[cand + n] == data[pos + n]:
                n += 1
            if n > best[0]:
                best = (n, pos - cand)
        step = best[0] if best[0] >= 3 else 1
        out.append(("m",) + best if best[0] >= 3 else data[pos])
        for p in range(pos, pos + step):
            seen.setdefault(data[p:p + 3], []).append(p)
        pos += step
    return out


def deflate(data, level=6, wbits=15, mem=8, strategy=zlib.Z_DEFAULT_STRATEGY, chunks=None,
            flush=zlib.Z_SYNC_FLUSH):
    c = zlib.compressobj(level, zlib.DEFLATED, -wbits, mem, strategy)
    if not chunks:
        return c.compress(data) + c.flush()
    out = bytearray()
    for i in range(0, len(data), chunks):
        out += c.compress(data[i:i + chunks]) + c.flush(flush)
    return bytes(out + c.flush())


def zraw(stream):
    """zlib's raw inflate verdict: "ok N", "cut" or its message."""
    d = zlib.decompressobj(-15)
    try:
        out = d.decompress(stream)
    except zlib.error as e:
        return str(e).split(": ", 1)[-1]
    return "ok %d" % len(out) if d.eof else "cut"


# ---------------------------------------------------------------- gzip


def header(method=8, flg=0, mtime=0, xfl=0, os_=3, extra=None, name=None, comment=None,
           hcrc=None, text=False, reserved=0):
    f = reserved | (1 if text else 0) | (2 if hcrc is not None else 0)
    f |= (4 if extra is not None else 0) | (8 if name is not None else 0)
    f |= 16 if comment is not None else 0
    h = bytes([0x1F, 0x8B, method, f | flg]) + struct.pack("<IBB", mtime, xfl, os_)
    if extra is not None:
        h += struct.pack("<H", len(extra)) + extra
    if name is not None:
        h += name + b"\0"
    if comment is not None:
        h += comment + b"\0"
    if hcrc is not None:
        h += struct.pack("<H", (zlib.crc32(h) & 0xFFFF) if hcrc is True else hcrc)
    return h


def trailer(data, crc=None, size=None):
    return struct.pack("<II", zlib.crc32(data) if crc is None else crc,
                       (len(data) if size is None else size) & 0xFFFFFFFF)


def member(data, body=None, **hdr):
    """A whole member of data: body is its deflate stream (zlib's if None)."""
    return header(**hdr) + (deflate(data) if body is None else body) + trailer(data)


EMPTY = member(b"", b"\x03\x00")

# ---------------------------------------------------------------- contents

WORDS = ("block member window stream header trailer length distance literal code table "
         "tree leaf root zero byte disk image copy restore index piece gzip deflate inflate "
         "stored fixed dynamic repeat final bit order check sum size time name comment "
         "extra field flag reserved method magic garbage padding").split()


def rng(seed):
    return random.Random(seed)


def text(seed, n):
    r, out = rng(seed), []
    total = 0
    while total < n:
        line = " ".join(r.choice(WORDS) for _ in range(r.randint(4, 12))).capitalize() + ".\n"
        out.append(line)
        total += len(line)
    return "".join(out).encode()[:n]


def rbytes(seed, n):
    return rng(seed).randbytes(n)


CONTENTS = [
    ("1B", b"x"),
    ("latin1-utf8", "".join(chr(i) for i in range(256)).encode()),
    ("32A", b"A" * 32),
    ("base64-32K", base64.b64encode(rbytes(1, 24576))),
    ("base64-256K", base64.encodebytes(rbytes(2, 196608))),
    ("text-40K", text(3, 40000)),
    ("empty", b""),
    ("numbers", b"".join(b"%d\n" % i for i in range(10, 20000))),
    ("random-128K", rbytes(4, 131072)),
    ("zeros-1M", bytes(1 << 20)),
]

# ---------------------------------------------------------------- LZW


def lzw_tokens(data, maxbits, block=True, clear_when_full=False):
    """compress(1)'s codes for data: the longest known string each time, a
    new entry after each code until the table is full (then, in block mode
    and if asked, a CLEAR code and a fresh table)."""
    if not data:
        return []
    first = 257 if block else 256
    table, free, top = {}, first, 1 << maxbits
    codes, ent = [], data[0]
    for c in data[1:]:
        k = (ent, c)
        if k in table:
            ent = table[k]
            continue
        codes.append(ent)
        if free < top:
            table[k] = free
            free += 1
        elif block and clear_when_full:
            codes.append(256)
            table, free = {}, first
        ent = c
    codes.append(ent)
    return codes


def lzw_pack(codes, maxbits, block=True, flags=None):
    """The .Z stream of codes, widths and padding as GNU gzip's unlzw reads
    them: a code's width grows when the next entry would not fit, and each
    change of width (and each CLEAR) starts on a whole group of 8 codes."""
    bw = Bits()
    hdr = bytes([0x1F, 0x9D, (maxbits | (0x80 if block else 0)) if flags is None else flags])
    top = 1 << maxbits
    free, n, maxcode, first = (257 if block else 256), 9, 511, True
    seg = 0

    def regroup(width):
        pad = (-(bw.bits() - seg)) % (width * 8)
        while pad:
            k = min(pad, 16)
            bw.put(0, k)
            pad -= k
        return bw.bits()

    for code in codes:
        if free > maxcode:
            seg = regroup(n)
            n += 1
            maxcode = top if n == maxbits else (1 << n) - 1
        bw.put(code, n)
        if first:
            first = False
            continue
        if code == 256 and block:
            free = 256
            seg = regroup(n)
            n, maxcode = 9, 511
            continue
        if free < top:
            free += 1
    return hdr + bw.done()

# ---------------------------------------------------------------- zip


def zip_entry(data, method=8, flags=0, name=b"a.txt", crc=None, csize=None, usize=None,
              descriptor=False, body=None):
    comp = (deflate(data) if method == 8 else data) if body is None else body
    crc = zlib.crc32(data) if crc is None else crc
    cs = len(comp) if csize is None else csize
    us = len(data) if usize is None else usize
    if descriptor:
        flags |= 8
    h = b"PK\x03\x04" + struct.pack("<HHHHHIIIHH", 20, flags, method, 0, 0x21,
                                    0 if descriptor else crc, 0 if descriptor else cs,
                                    0 if descriptor else us, len(name), 0) + name
    out = h + comp
    if descriptor:
        out += b"PK\x07\x08" + struct.pack("<III", crc, cs, us)
    return out


def zip_file(entries):
    """Local entries, then a central directory and its end (gzip reads only
    the first local entry; they are here for tools that read the end)."""
    out, cd = bytearray(), bytearray()
    for e in entries:
        cd += b"PK\x01\x02" + struct.pack("<HH", 20, 20) + e[6:30] + struct.pack(
            "<HHHII", 0, 0, 0, 0, len(out)) + e[30:30 + struct.unpack("<H", e[26:28])[0]]
        out += e
    end = b"PK\x05\x06" + struct.pack("<HHHHIIH", 0, 0, len(entries), len(entries), len(cd),
                                      len(out), 0)
    return bytes(out + cd + end)

# ---------------------------------------------------------------- vectors


class Vectors:
    def __init__(self):
        self.v = []
        self.names = set()

    def add(self, name, cls, desc, data, expect="-", zlib_of=None, zlib_says=None, allow="-"):
        """expect: "ok"/"warn" with the bytes gzip must give (a tuple
        ("ok", bytes)), "fail", or "-".  zlib_of: the deflate stream under
        test, zlib_says: what zlib's raw inflate must say of it.  allow: a
        difference from gzip the test allows on this vector (ID[:SHA256])."""
        assert name not in self.names, name
        self.names.add(name)
        z = "-"
        if zlib_of is not None:
            z = zraw(zlib_of)
            if z != zlib_says:
                raise SystemExit("badgz.py: %s: zlib says %r of its deflate data, not %r: the "
                                 "vector no longer tests what it says" % (name, z, zlib_says))
        if isinstance(expect, tuple):
            expect = "%s:%s" % (expect[0], hashlib.sha256(expect[1]).hexdigest())
        if isinstance(allow, tuple):
            allow = "%s:%s" % (allow[0], hashlib.sha256(allow[1]).hexdigest())
        assert "\t" not in desc and "\n" not in desc
        self.v.append((name + ".gz", cls, expect, z, allow, desc, bytes(data)))


# An incomplete code ISA-L decodes with (spigz reads files with it), then a
# trailer that does not match: tests/badgz.sh says why this is allowed.
ISAL_TRAILER = "finding:isal-trailer"


def raw_vector(V, name, desc, body, zsays, data=b"", expect=None, allow="-"):
    """A deflate stream in a gzip member whose trailer is data's."""
    if expect is None:
        expect = ("ok", data) if zsays.startswith("ok") else "fail"
    V.add(name, "inflate", desc, header() + body + trailer(data), expect, body, zsays, allow)


def inflate_errors(V):
    lit = list(b"abc")
    # ---- block types
    bw = Bits()
    bw.put(1, 1)
    bw.put(3, 2)
    raw_vector(V, "inflate-block-type-3", "block type 3 (reserved) as the first block",
               bw.done(), "invalid block type")
    bw = Bits()
    bw.put(0, 1)
    bw.put(3, 2)
    raw_vector(V, "inflate-block-type-3-not-final", "block type 3 in a block that is not the last",
               bw.done(0xFF), "invalid block type")
    bw = Bits()
    stored(bw, b"abc", final=0)
    bw.put(1, 1)
    bw.put(3, 2)
    raw_vector(V, "inflate-block-type-3-after-stored", "block type 3 after a stored block of 3 "
               "bytes", bw.done(), "invalid block type", b"abc")
    for n in (32767, 32768, 65537):
        d = text(10 + n, n)
        bw = Bits()
        fixed(bw, list(d), final=0)
        bw.put(1, 1)
        bw.put(3, 2)
        raw_vector(V, "inflate-block-type-3-after-%d" % n,
                   "block type 3 after %d bytes of literals: what gzip writes before the error "
                   "(its 32 KiB window flushes)" % n, bw.done(), "invalid block type", d)
    # ---- stored lengths
    for nm, ln, nl, what in (("nlen-equal", 5, 5, "NLEN equal to LEN"),
                             ("nlen-one-bit", 5, 0xFFFA ^ 0x100,
                              "NLEN one bit off LEN's complement"),
                             ("zero-zero", 0, 0, "LEN 0 and NLEN 0"),
                             ("ffff-ffff", 0xFFFF, 0xFFFF, "LEN 65535 and NLEN 65535")):
        bw = Bits()
        stored(bw, b"hello", length=ln, nlen=nl)
        raw_vector(V, "inflate-stored-" + nm, "stored block: " + what, bw.done(),
                   "invalid stored block lengths", b"hello")
    bw = Bits()
    stored(bw, b"abc", final=0)
    stored(bw, b"de", nlen=2)
    raw_vector(V, "inflate-stored-second-mismatch", "a good stored block, then one whose NLEN "
               "is wrong", bw.done(), "invalid stored block lengths", b"abcde")
    bw = Bits()
    fixed(bw, lit, final=0)
    stored(bw, b"x", nlen=0xFFFF)
    raw_vector(V, "inflate-stored-mismatch-after-fixed", "a stored block with a wrong NLEN after "
               "a fixed block (not byte-aligned before it)", bw.done(),
               "invalid stored block lengths", b"abcx")
    # ---- counts
    for nm, kw, what in (("hlit-287", dict(hlit=30), "HLIT 30: 287 literal/length codes"),
                         ("hlit-288", dict(hlit=31), "HLIT 31: 288 literal/length codes"),
                         ("hdist-31", dict(hdist=30), "HDIST 30: 31 distance codes"),
                         ("hdist-32", dict(hdist=31), "HDIST 31: 32 distance codes")):
        bw = Bits()
        dynamic(bw, lit, **kw)
        raw_vector(V, "inflate-" + nm, "dynamic block with " + what, bw.done(),
                   "too many length or distance symbols", b"abc")
    # ---- the code-length code: HLIT 0, HDIST 0, all 19 lengths sent.  zlib
    # takes a code-length code with no codes at all as one that reads a 0
    # length from each bit: the block then has no end-of-block code.
    for nm, cll, what in (
            ("cl-incomplete", {18: 1, 8: 2, 1: 3}, "code-length code incomplete (1, 2, 3 bits)"),
            ("cl-oversubscribed", {18: 1, 8: 1, 1: 1}, "code-length code over-subscribed "
             "(three 1-bit codes)"),
            ("cl-single", {8: 1}, "code-length code of a single 1-bit code"),
            ("cl-all-zero", {}, "code-length code with no codes (all 19 lengths 0), then 300 "
             "zero bits"),
            ("cl-seven-bit-incomplete", {8: 7, 16: 7, 1: 7}, "code-length code of three 7-bit "
             "codes")):
        bw = Bits()
        bw.put(1, 1)
        bw.put(2, 2)
        bw.put(0, 10)
        bw.put(15, 4)
        for i in range(19):
            bw.put(cll.get(CL_ORDER[i], 0), 3)
        for _ in range(20):
            bw.put(0, 15)
        raw_vector(V, "inflate-" + nm, what, bw.done(), "invalid code -- missing end-of-block"
                   if nm == "cl-all-zero" else "invalid code lengths set")
    # ---- repeats (a, b, c and the end of block: 2 bits; one distance code)
    ll = [0] * 97 + [2, 2, 2] + [0] * 156 + [2] + [2]
    for nm, cl, what in (
            ("repeat-first", [(16, 0)] + rle(ll),
             "code 16 (repeat the previous length) as the very first length"),
            ("repeat16-past-end", rle(ll)[:-1] + [(16, 3)],
             "code 16 repeating past the last length (HLIT + HDIST)"),
            ("repeat17-past-end", rle(ll)[:-1] + [(17, 0)],
             "code 17 (3 zeros) for the last length: 2 past it"),
            ("repeat18-past-end", rle(ll[:-2]) + [(2, 0), (18, 100)],
             "code 18 (111 zeros) running past the last length")):
        bw = Bits()
        dynamic(bw, lit, lit=ll[:257], dist=ll[257:], cl=cl, data=False)
        bw.put(0, 16)
        raw_vector(V, "inflate-" + nm, what, bw.done(), "invalid bit length repeat", b"abc")
    # The lengths are one sequence (RFC 1951 3.2.7): repeats may cross from
    # the literal/length lengths into the distance lengths.  a, b, c: 2 bits;
    # the end of block and length 6 (symbol 260): 3 bits; 8 distance codes
    # of 3 bits, the first six of them by a 16 repeating symbol 260's length.
    ll = [0] * 97 + [2, 2, 2] + [0] * 156 + [3, 0, 0, 0, 3]
    bw = Bits()
    dynamic(bw, list(b"abcabcabc") + [("m", 6, 3)], lit=ll, dist=[3] * 8,
            cl=rle(ll) + [(16, 3), (3, 0), (3, 0)])
    raw_vector(V, "inflate-repeat16-across-boundary", "code 16 repeating the last literal/length "
               "code's length into the distance lengths (valid)", bw.done(), "ok 15",
               b"abcabcabcabcabc")
    ll = [0] * 97 + [2, 2, 2] + [0] * 156 + [2] + [0] * 4
    bw = Bits()
    dynamic(bw, lit, lit=ll, dist=[0] * 10 + [1, 1],
            cl=rle(ll[:-4]) + [(18, 14 - 11), (1, 0), (1, 0)])
    raw_vector(V, "inflate-repeat18-across-boundary", "code 18 running zeros from the literal/"
               "length lengths into the distance lengths (valid)", bw.done(), "ok 3", b"abc")
    # code 16 after a zero length repeats the zero: 10 + 1 + 6 + 80 zeros
    ll = [0] * 97 + [2, 2, 2] + [0] * 156 + [2]
    bw = Bits()
    dynamic(bw, lit, lit=ll, dist=[1],
            cl=[(17, 7), (0, 0), (16, 3), (18, 69)] + rle(ll[97:]) + [(1, 0)])
    raw_vector(V, "inflate-repeat16-of-zero", "code 16 repeating a zero length (valid)", bw.done(),
               "ok 3", b"abc")
    # ---- literal/length code
    bw = Bits()
    ll = [0] * 97 + [2, 2, 2] + [0] * 156 + [0]
    dynamic(bw, lit, lit=ll, dist=[1], eob=False)
    raw_vector(V, "inflate-no-end-of-block-code", "dynamic block whose literal/length code has no "
               "end-of-block code (length of 256 is 0)", bw.done(),
               "invalid code -- missing end-of-block", b"abc")
    bw = Bits()
    dynamic(bw, [], lit=[0] * 257, dist=[1], eob=False, data=False)
    raw_vector(V, "inflate-lit-all-zero", "dynamic block whose literal/length lengths are all 0",
               bw.done(), "invalid code -- missing end-of-block")
    for nm, ll, what in (
            ("lit-oversubscribed", [0] * 97 + [1, 1, 2] + [0] * 156 + [2], "literal/length code "
             "over-subscribed"),
            ("lit-incomplete", [0] * 97 + [2, 2, 2] + [0] * 156 + [3], "literal/length code "
             "incomplete (2, 2, 2, 3 bits)"),
            ("lit-incomplete-15", [0] * 97 + [1, 2, 15] + [0] * 156 + [15], "literal/length "
             "code incomplete, with 15-bit codes")):
        bw = Bits()
        dynamic(bw, [], lit=ll, dist=[1], eob=False, data=False)
        bw.put(0, 16)
        raw_vector(V, "inflate-" + nm, what, bw.done(), "invalid literal/lengths set", b"abc",
                   allow=ISAL_TRAILER if "incomplete" in nm else "-")
    bw = Bits()
    dynamic(bw, [], lit=[0] * 256 + [1], dist=[1])
    raw_vector(V, "inflate-lit-single-eob", "literal/length code of one 1-bit code, the end of "
               "block (incomplete but allowed: valid)", bw.done(), "ok 0")
    bw = Bits()
    dynamic(bw, [], lit=[0] * 256 + [1], dist=[1], eob=False)
    bw.put(1, 1)
    raw_vector(V, "inflate-lit-single-unused-code", "literal/length code of one 1-bit code, and "
               "the stream uses the other 1-bit code", bw.done(), "invalid literal/length code")
    for s in (286, 287):
        bw = Bits()
        fixed(bw, [97, ("L", s, 0, 0)], eob=False)
        raw_vector(V, "inflate-fixed-lit-%d" % s, "fixed block using literal/length symbol %d "
                   "(a fixed code that names nothing)" % s, bw.done(),
                   "invalid literal/length code", b"a")
    # ---- distance code
    for nm, ds, what in (("dist-oversubscribed", [1, 1, 1], "distance code over-subscribed"),
                         ("dist-incomplete", [2, 2, 2], "distance code incomplete (2, 2, 2 bits)"),
                         ("dist-incomplete-15", [1, 15],
                          "distance code incomplete, 1 and 15 bits")):
        bw = Bits()
        dynamic(bw, [], lit=[0] * 97 + [2, 2, 2] + [0] * 156 + [2], dist=ds, data=False)
        bw.put(0, 16)
        raw_vector(V, "inflate-" + nm, what, bw.done(), "invalid distances set", b"abc",
                   allow=ISAL_TRAILER if "incomplete" in nm else "-")
    toks = list(b"ab") + [("m", 4, 2)]
    bw = Bits()
    dynamic(bw, toks, dist=[0, 1])
    raw_vector(V, "inflate-dist-single", "one distance code, of 1 bit (incomplete but allowed: "
               "valid)", bw.done(), "ok 6", b"ababab")
    bw = Bits()
    lens, _ = dynamic(bw, toks, dist=[0, 1], data=False)
    write_tokens(bw, list(b"ab") + [("L", len_sym(4)[0], 0, 0)], lens, [0, 1], eob=False)
    bw.put(1, 1)
    bw.put(0, 16)
    raw_vector(V, "inflate-dist-single-unused-code", "one 1-bit distance code, and the stream "
               "uses the other", bw.done(), "invalid distance code", b"ababab")
    bw = Bits()
    dynamic(bw, list(b"literals only"), dist=[0])
    raw_vector(V, "inflate-dist-none", "no distance codes at all (HDIST 0, length 0) and only "
               "literals (valid)", bw.done(), "ok 13", b"literals only")
    bw = Bits()
    toks = list(b"ab") + [("L", 258, 0, 0)]
    lens, _ = dynamic(bw, toks, dist=[0], data=False)
    write_tokens(bw, toks, lens, [0], eob=False)
    bw.put(0, 16)
    raw_vector(V, "inflate-dist-none-used", "no distance codes, and a length code is used",
               bw.done(), "invalid distance code", b"abab")
    for s in (30, 31):
        bw = Bits()
        fixed(bw, [97, ("L", 257, 0, 0), ("D", s, 0, 0)], eob=False)
        bw.put(0, 16)
        raw_vector(V, "inflate-fixed-dist-%d" % s, "fixed block using distance symbol %d" % s,
                   bw.done(), "invalid distance code", b"aaaa")
    # ---- lengths
    bw = Bits()
    fixed(bw, [97, ("L", 284, 31, 5), ("D", 0, 0, 0)])
    raw_vector(V, "inflate-len-284-plus-31", "length 258 coded as symbol 284 with extra bits 31 "
               "(not 285: allowed by zlib, refused by some)", bw.done(), "ok 259", b"a" * 259)
    bw = Bits()
    fixed(bw, [97, ("m", 258, 1), ("m", 258, 1), ("m", 3, 1)])
    raw_vector(V, "inflate-len-258-overlap", "matches of 258 at distance 1 (copies of bytes "
               "being written)", bw.done(), "ok 520", b"a" * 520)
    d = bytes(range(256)) * 2
    bw = Bits()
    dynamic(bw, list(d[:256]) + [("m", 256, 256)])
    raw_vector(V, "inflate-long-codes", "a dynamic code of 256 literals (8 and 9-bit codes) and "
               "a match", bw.done(), "ok 512", d)
    # ---- codes of 15 bits, code-length code of 19 entries
    ll = [0] * 286
    shape = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 15]
    for i, s in enumerate([97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110,
                           256, 111]):
        ll[s] = shape[i]
    while ll[-1] == 0:
        ll.pop()
    data = b"onmlkjihgfedcba"
    bw = Bits()
    dynamic(bw, list(data), lit=ll, dist=[1], cl_lens=[4] * 13 + [5] * 6)
    raw_vector(V, "inflate-15-bit-codes", "literal/length codes from 1 to 15 bits, the longest "
               "used, and all 19 code-length code lengths sent", bw.done(), "ok 15", data)
    # ---- cut streams (every place a decoder can run out)
    d = text(20, 3000)
    bw = Bits()
    dynamic(bw, lz_tokens(d))
    body = bw.done()
    for cut in (1, 2, 3, 5, 10, 40, len(body) // 2, len(body) - 1):
        V.add("inflate-cut-dynamic-at-%d" % cut, "truncated", "dynamic block of %d bytes cut "
              "after %d (nothing follows)" % (len(body), cut), header() + body[:cut], "fail",
              body[:cut], "cut")
    bw = Bits()
    fixed(bw, list(b"abc"), eob=False)
    V.add("inflate-cut-no-eob", "truncated", "fixed block whose data ends without the end-of-block "
          "code", header() + bw.done(), "fail", bw.done(), "cut")
    bw = Bits()
    fixed(bw, [], final=0)
    raw_vector(V, "inflate-no-final-block", "only a non-final empty fixed block, then the trailer",
               bw.done(), "cut")


def intact(V):
    """Code lengths zlib and gzip refuse (an incomplete code, a repeat past
    the lengths' end) that ISA-L builds a code from, each followed by data
    in that code: spigz inflates a file with ISA-L, and keeps its output
    when the trailer vouches for it (doc/GZIP.md, D-intact-header); a pipe
    is inflated by zlib, which refuses the member as gzip does."""
    abc = list(b"abc")
    lit_inc = [0] * 97 + [2, 2, 2] + [0] * 156 + [3]               # 2, 2, 2, 3 bits
    ll = [0] * 97 + [2, 2, 2] + [0] * 156 + [2]
    codes = {}
    bw = Bits()
    dynamic(bw, abc, lit=lit_inc, dist=[1])
    codes["lit"] = (bw.done(), b"abc", "invalid literal/lengths set",
                    "a literal/length code that is incomplete (2, 2, 2, 3 bits)")
    bw = Bits()
    dynamic(bw, list(b"ab") + [("m", 4, 2)], dist=[2, 2, 2])
    codes["dist"] = (bw.done(), b"ababab", "invalid distances set",
                     "a distance code that is incomplete (2, 2, 2 bits)")
    bw = Bits()
    dynamic(bw, abc, lit=ll, dist=[2], cl=rle(ll)[:-1] + [(16, 0)])
    codes["repeat"] = (bw.done(), b"abc", "invalid bit length repeat",
                       "a code 16 repeating one length past the last")
    # a long member: a, b, c and the end code in 2, 2, 2, 3 bits, length
    # 258 (symbol 285) in 4: incomplete; 1.5 MB of output, over one item
    lens = [0] * 97 + [2, 2, 2] + [0] * 156 + [3] + [0] * 28 + [4]
    toks = abc + [("m", 258, 3)] * 6000
    big = b"abc" * (1 + 258 * 6000 // 3)
    bw = Bits()
    dynamic(bw, toks, lit=lens, dist=[0, 0, 1])
    codes["long"] = (bw.done(), big, "invalid literal/lengths set",
                     "an incomplete literal/length code, %d bytes out" % len(big))
    empty = [0] * 97 + [2] + [0] * 158 + [2]                       # 2 codes of 2 bits
    bw = Bits()
    dynamic(bw, [], lit=empty, dist=[1])
    body = bw.done()
    V.add("intact-nothing", "intact", "an incomplete literal/length code (two 2-bit codes), "
          "the end code at once, the trailer of nothing (ISA-L's nothing is decoded again by "
          "zlib)", member(b"", body), "fail", body, "invalid literal/lengths set")
    for k, (body, out, zsays, what) in codes.items():
        def add(nm, blob, how, allow):
            V.add("intact-%s-%s" % (k, nm), "intact", "%s, then data in it; %s" % (what, how),
                  blob, "fail", body, zsays, allow)
        hdr = header()
        add("trailer-right", hdr + body + trailer(out), "the trailer of that data",
            ("D-intact-header", out))
        if k == "repeat":
            continue
        add("crc-wrong", hdr + body + trailer(out, crc=zlib.crc32(out) ^ 1),
            "a CRC-32 one bit off", ISAL_TRAILER)
        add("isize-wrong", hdr + body + trailer(out, size=len(out) + 1),
            "an ISIZE one more", ISAL_TRAILER)
        if k == "long":
            continue
        add("trailer-cut", hdr + body + trailer(out)[:4], "half a trailer",
            ISAL_TRAILER)
        add("no-trailer", hdr + body, "no trailer", ISAL_TRAILER)
        add("then-member", hdr + body + trailer(out) + member(b"next"),
            "the trailer of that data, then another member", ("D-intact-header", out + b"next"))
        add("after-member", member(b"first") + hdr + body + trailer(out),
            "after another member, the trailer of that data", ("D-intact-header", b"first" + out))


def window_edges(V):
    """Distances at the window's edge, and before the member's start: gzip
    reads its window there (zeros, or an earlier member's bytes) and its
    CRC-32 then judges the output."""
    d = rbytes(30, 32768)
    bw = Bits()
    stored(bw, d, final=0)
    fixed(bw, [("m", 258, 32768), ("m", 3, 32768)])
    out = d + d[:258] + d[258:261]
    raw_vector(V, "window-dist-32768", "a match at distance 32768 after 32768 bytes: the "
               "window's far edge (valid)", bw.done(), "ok 33029", out)
    bw = Bits()
    stored(bw, d[:32767], final=0)
    fixed(bw, [("m", 3, 32768)])
    V.add("window-dist-32768-one-short", "window", "a match at distance 32768 after 32767 bytes "
          "(one before the member's start: gzip reads its zero window)",
          header() + bw.done() + trailer(d[:32767] + b"\0" + d[:2]), "-", bw.done(),
          "invalid distance too far back")
    for n in (1, 100):
        pre = text(31, n)
        for fit in ("zeros", "none"):
            bw = Bits()
            fixed(bw, list(pre) + [("m", 10, n + 5)])
            gz = pre + b"\0" * 5 + pre[:5]
            V.add("window-before-start-%d-%s" % (n, fit), "window",
                  "%d literals, then a match reaching 5 bytes before the member's start; trailer "
                  "of %s" % (n, "gzip's output (its window holds zeros there)" if fit == "zeros"
                             else "the literals alone"),
                  header() + bw.done() + trailer(gz if fit == "zeros" else pre), "-", bw.done(),
                  "invalid distance too far back")
    # a distance into the previous member: gzip's window keeps its bytes,
    # at each place the member's own position mod 32 KiB
    for n1, dist in ((20, 32758), (40000, 8), (40000, 32768)):
        first = text(32 + n1, n1)
        win = bytearray(32768)
        for i in range(max(0, n1 - 32768), n1):
            win[i % 32768] = first[i]
        bw = Bits()
        fixed(bw, [("m", 8, dist)])
        gz = bytes(win[(32768 - dist + k) % 32768] for k in range(8))
        for fit, out, what in (("gzip", gz, "gzip's output (what its window keeps there)"),
                               ("zeros", bytes(8), "zeros")):
            if fit == "zeros" and gz == out:
                continue
            V.add("window-previous-member-%d-%d-%s" % (n1, dist, fit), "window",
                  "a member of %d bytes, then one whose first code copies 8 bytes from distance %d "
                  "(before its start); trailer of %s" % (n1, dist, what),
                  member(first) + header() + bw.done() + trailer(out), "-", bw.done(),
                  "invalid distance too far back")
    big = text(33, 100000)
    V.add("window-wrap", "window", "100000 bytes of text with matches across the 32 KiB window's "
          "wrap (zlib level 9)", member(big, deflate(big, 9)), ("ok", big), deflate(big, 9),
          "ok 100000")
    z = bytes(70000)
    bw = Bits()
    fixed(bw, [0] + [("m", 258, 1)] * 271 + [("m", 70000 - 1 - 258 * 271, 1)])
    V.add("window-run-70000", "window", "a run of 70000 zeros as matches at distance 1 across "
          "two window wraps", member(z, bw.done()), ("ok", z), bw.done(), "ok 70000")
    bw = Bits()
    stored(bw, b"", final=0)
    fixed(bw, [("m", 4, 1)])
    V.add("window-dist1-empty", "window", "a match at distance 1 before any output (gzip's window "
          "gives zeros; trailer of four zeros)", header() + bw.done() + trailer(bytes(4)), "-",
          bw.done(), "invalid distance too far back")


def headers(V):
    body = deflate(b"header test\n")
    data = b"header test\n"

    def h(name, desc, blob, expect=None):
        V.add("header-" + name, "header", desc, blob,
              ("ok", data) if expect is None else expect)

    for m in (0, 7, 9, 255):
        h("method-%d" % m, "compression method %d (only 8 is deflate)" % m,
          member(data, body, method=m), "fail")
    for f, what in ((0x20, "bit 5 (encrypted)"), (0x40, "bit 6 (reserved)"),
                    (0x80, "bit 7 (reserved)"), (0xE0, "bits 5, 6 and 7")):
        h("flag-%02x" % f, "flags with %s set" % what, member(data, body, reserved=f), "fail")
    h("flag-80-with-name", "reserved flag bit 7 with a name",
      member(data, body, reserved=0x80, name=b"n"), "fail")
    h("fhcrc-good", "FHCRC with the right header CRC-16", member(data, body, hcrc=True))
    h("fhcrc-bad", "FHCRC with a wrong header CRC-16", member(data, body, hcrc=0x1234), "fail")
    hh = header(hcrc=True)
    h("fhcrc-zero", "FHCRC with a header CRC-16 of 0 (computed: %04x)" %
      struct.unpack("<H", hh[-2:])[0], member(data, body, hcrc=0), "fail")
    all_ = dict(extra=b"AB\x02\x00xy", name=b"file.txt", comment=b"a comment", text=True)
    h("all-fields-good", "FTEXT, FEXTRA, FNAME, FCOMMENT and FHCRC, CRC-16 right",
      member(data, body, hcrc=True, **all_))
    hb = header(hcrc=True, **all_)
    bad = struct.unpack("<H", hb[-2:])[0] ^ 0x8000
    h("all-fields-bad-crc", "FTEXT, FEXTRA, FNAME, FCOMMENT and FHCRC, CRC-16 one bit off",
      member(data, body, hcrc=bad, **all_), "fail")
    h("fextra-empty", "FEXTRA of length 0", member(data, body, extra=b""))
    h("fextra-subfields", "FEXTRA of three subfields",
      member(data, body, extra=b"AB\x03\x00abcCD\x00\x00EF\x01\x00z"))
    h("fextra-junk", "FEXTRA of 7 bytes that are not subfields",
      member(data, body, extra=b"\x01" * 7))
    h("fextra-overrun-subfield", "FEXTRA whose subfield claims more bytes than XLEN",
      member(data, body, extra=b"AB\xff\x00abc"))
    h("fextra-65535", "FEXTRA of 65535 bytes",
      member(data, body, extra=b"ZZ\xfb\xff" + bytes(65531)))
    h("fname-empty", "FNAME of 0 bytes", member(data, body, name=b""))
    h("fname-65536", "FNAME of 65536 bytes", member(data, body, name=b"n" * 65536))
    h("fname-8bit", "FNAME of Latin-1 and control bytes",
      member(data, body, name=b"caf\xe9\x01\x7f"))
    h("fname-path", "FNAME with a path ../x/y", member(data, body, name=b"../x/y"))
    h("fcomment-empty", "FCOMMENT of 0 bytes", member(data, body, comment=b""))
    h("fcomment-100000", "FCOMMENT of 100000 bytes", member(data, body, comment=b"c" * 100000))
    h("fname-fcomment", "FNAME and FCOMMENT", member(data, body, name=b"a", comment=b"b"))
    h("ftext", "FTEXT set on binary data", member(data, body, text=True))
    for x in (2, 4, 0xFF):
        h("xfl-%d" % x, "XFL %d" % x, member(data, body, xfl=x))
    for o in (0, 11, 13, 255):
        h("os-%d" % o, "OS %d" % o, member(data, body, os_=o))
    for t in (0x7FFFFFFF, 0x80000000, 0xFFFFFFFE):
        h("mtime-%08x" % t, "MTIME %#x" % t, member(data, body, mtime=t))
    V.add("header-y2106", "header", "MTIME 0xffffffff (year 2106), OS 255, an empty stored block",
          header(mtime=0xFFFFFFFF, os_=255) + b"\x01\x00\x00\xff\xff" + trailer(b""), ("ok", b""))
    for nm, blob, what in (("magic-1f", b"\x1f", "one byte, 1f"),
                           ("magic-1f8b", b"\x1f\x8b", "the magic alone"),
                           ("magic-1f8c", b"\x1f\x8c" + member(data, body)[2:], "magic 1f 8c"),
                           ("magic-8b1f", b"\x8b\x1f" + member(data, body)[2:],
                            "magic bytes swapped"),
                           ("empty-file", b"", "an empty file"),
                           ("plain-text", b"not compressed at all\n", "plain text"),
                           ("zlib-stream", zlib.compress(data),
                            "a zlib stream (RFC 1950), not gzip")):
        h(nm, "not gzip: " + what, blob, "fail")
    h("magic-1f9e", "magic 1f 9e (gzip 0.5's, which gzip still reads)",
      b"\x1f\x9e" + member(data, body)[2:])
    # later members
    for nm, m2, what in (("method-7", member(data, body, method=7), "method 7"),
                         ("flag-80", member(data, body, reserved=0x80), "reserved flag bit 7"),
                         ("fhcrc-bad", member(data, body, hcrc=1), "a wrong header CRC-16"),
                         ("flag-20", member(data, body, reserved=0x20), "the encrypted flag")):
        V.add("header-second-" + nm, "header", "a good member, then one with " + what,
              member(data, body) + m2, "fail")


def truncations(V):
    """One member with every header field, cut at each place."""
    data = text(40, 2000)
    bw = Bits()
    dynamic(bw, lz_tokens(data))
    body = bw.done()
    hdr = header(extra=b"AB\x04\x00wxyz", name=b"name.txt", comment=b"comment", hcrc=True,
                 mtime=1234567890)
    whole = hdr + body + trailer(data)
    hl = len(hdr)
    # 0-9 fixed fields, 10-11 XLEN, 12-19 extra, 20-28 name and its NUL,
    # 29-36 comment and its NUL, 37-38 the header CRC
    assert hl == 39 and hdr[28] == 0 and hdr[36] == 0, (hl, hdr)
    places = {"1": 1, "2-magic": 2, "3-method": 3, "4-flags": 4, "6-mtime": 6, "8-mtime": 8,
              "9-xfl": 9, "10-os": 10, "11-xlen": 11, "12-xlen": 12, "14-extra": 14,
              "19-extra": 19, "20-extra": 20, "24-name": 24, "28-name": 28, "29-name-nul": 29,
              "33-comment": 33, "36-comment": 36, "37-comment-nul": 37, "38-hcrc": 38}
    places.update({"header": hl, "deflate-1": hl + 1, "deflate-half": hl + len(body) // 2,
                   "deflate-all-but-1": hl + len(body) - 1, "no-trailer": hl + len(body)})
    for k in range(1, 8):
        places["trailer-%d" % k] = hl + len(body) + k
    for nm, at in places.items():
        V.add("cut-at-%s" % nm, "truncated", "a member with every header field (%d bytes), cut "
              "after %d" % (len(whole), at), whole[:at], "fail")
    # stored blocks cut
    bw = Bits()
    stored(bw, b"0123456789")
    sb = bw.done()
    for k, what in ((1, "the block header"), (2, "LEN"), (4, "NLEN"), (8, "the data")):
        V.add("cut-stored-%d" % k, "truncated", "a stored block cut after %d bytes (in %s)" %
              (k, what), header() + sb[:k], "fail")
    V.add("cut-second-member-header", "truncated", "a member, then 5 bytes of another's header",
          member(data, body) + header()[:5], "fail")
    V.add("cut-second-member-1f8b08", "truncated", "a member, then 1f 8b 08 alone",
          member(data, body) + b"\x1f\x8b\x08", "fail")
    for k in (1, 3, 5):
        d2 = text(41, 5000)
        m = member(d2, deflate(d2, 9))
        V.add("cut-second-member-trailer-%d" % k, "truncated", "a member, then a second member "
              "cut %d bytes before its end" % k, member(data, body) + m[:-k], "fail")


def trailers(V):
    data = text(50, 500)
    body = deflate(data)
    good = header() + body
    for nm, t, what, ex in (
            ("crc", trailer(data, crc=zlib.crc32(data) ^ 1), "CRC-32 one bit off", "fail"),
            ("isize", trailer(data, size=len(data) + 1), "ISIZE one more", "fail"),
            ("isize-plus-2^31", trailer(data, size=len(data) + (1 << 31)), "ISIZE 2^31 more",
             "fail"),
            ("both", trailer(data, crc=0, size=0), "CRC-32 and ISIZE both 0", "fail"),
            ("big-endian", struct.pack(">II", zlib.crc32(data), len(data)), "CRC-32 and ISIZE "
             "big-endian", "fail")):
        V.add("trailer-" + nm, "trailer", "trailer with " + what, good + t, ex)
    V.add("trailer-empty-member-crc", "trailer", "an empty member whose CRC-32 is 1",
          header() + b"\x03\x00" + trailer(b"", crc=1), "fail")
    V.add("trailer-second-member-isize", "trailer", "a good member, then one whose ISIZE is wrong",
          member(data, body) + good + trailer(data, size=7), "fail")
    V.add("trailer-crc-of-other", "trailer", "CRC-32 and ISIZE of other data of the same length",
          good + trailer(data[::-1]), "fail")


def members(V):
    a, b = text(60, 3000), rbytes(61, 3000)
    V.add("members-two", "members", "two members", member(a) + member(b), ("ok", a + b))
    V.add("members-empty", "members", "one empty member (deflate 03 00)", EMPTY, ("ok", b""))
    V.add("members-empty-stored", "members", "one empty member of an empty stored block",
          member(b"", b"\x01\x00\x00\xff\xff"), ("ok", b""))
    V.add("members-empty-first", "members", "an empty member, then data", EMPTY + member(a),
          ("ok", a))
    V.add("members-empty-last", "members", "data, then an empty member", member(a) + EMPTY,
          ("ok", a))
    V.add("members-empty-three", "members", "three empty members", EMPTY * 3, ("ok", b""))
    tiny = b"".join(member(bytes([65 + i % 26])) for i in range(1000))
    V.add("members-1000-tiny", "members", "1000 members of one byte each", tiny,
          ("ok", bytes(65 + i % 26 for i in range(1000))))
    mixed = (member(a[:100], name=b"one", hcrc=True) + member(a[100:200], extra=b"XY\x00\x00",
                                                              comment=b"two") +
             member(a[200:300], deflate(a[200:300], 0)) + member(a[300:], mtime=0xFFFFFFFF, os_=0))
    V.add("members-mixed-headers", "members", "four members with different header fields and "
          "levels", mixed, ("ok", a))
    big = text(62, 200000)
    V.add("members-window-not-shared", "members", "a member of 200000 bytes, then one repeating "
          "text of the first (its own matches only)", member(big) + member(big[:50000]),
          ("ok", big + big[:50000]))


def trailing(V):
    data = text(70, 1000)
    m = member(data)
    for nm, t, ex in (
            ("zeros-1", bytes(1), "-"), ("zeros-2", bytes(2), "-"), ("zeros-7", bytes(7), "-"),
            ("zeros-8", bytes(8), "-"), ("zeros-9", bytes(9), "-"), ("zeros-512", bytes(512), "-"),
            ("zeros-65536", bytes(65536), "-"), ("byte-01", b"\x01", "-"),
            ("garbage", b"trailing garbage\n", "-"), ("byte-1f", b"\x1f", "-"),
            ("magic", b"\x1f\x8b", "-"), ("zeros-then-garbage", bytes(100) + b"junk", "-"),
            ("zeros-then-member", bytes(100) + member(b"more"), "-"),
            ("garbage-then-member", b"junk" + member(b"more"), "-"),
            ("lzw-magic", b"\x1f\x9d", "-"), ("pack-magic", b"\x1f\x1e", "-"),
            ("zip-magic", b"PK\x03\x04", "-"), ("lzh-magic", b"\x1f\xa0", ("D-lzh", data)),
            ("random-1000", rbytes(71, 1000), "-")):
        allow = "-"
        if isinstance(ex, tuple):
            ex, allow = "-", ex
        V.add("trailing-" + nm, "trailing", "a member, then %d bytes: %s" % (len(t), nm),
              m + t, ex, allow=allow)


def stored_blocks(V):
    def sv(name, desc, blocks, out):
        bw = Bits()
        for kw in blocks:
            if "fixed" in kw:
                fixed(bw, kw["fixed"], final=kw.get("final", 0))
            else:
                stored(bw, **kw)
        body = bw.done()
        V.add("stored-" + name, "stored", desc, member(out, body), ("ok", out), body,
              "ok %d" % len(out))

    sv("empty", "one empty stored block", [dict(data=b"")], b"")
    sv("one-byte", "a stored block of one byte", [dict(data=b"Z")], b"Z")
    d = rbytes(80, 65535)
    sv("65535", "a stored block of 65535 bytes (the largest)", [dict(data=d)], d)
    d2 = rbytes(81, 65535 * 17)
    sv("17x65535", "17 stored blocks of 65535 bytes",
       [dict(data=d2[i:i + 65535], final=int(i == 65535 * 16)) for i in range(0, len(d2), 65535)],
       d2)
    sv("many-empty", "1000 empty stored blocks, then one of data (as sync flushes leave)",
       [dict(data=b"", final=0)] * 1000 + [dict(data=b"end")], b"end")
    sv("after-fixed-padding", "a fixed block, then a stored block with its padding bits set "
       "(they are ignored)", [dict(fixed=list(b"ab")), dict(data=b"cd", pad=0x7F)], b"abcd")
    sv("between-fixed", "fixed, stored, fixed blocks",
       [dict(fixed=list(b"ab")), dict(data=b"cd", final=0), dict(fixed=list(b"ef"), final=1)],
       b"abcdef")


def slow(V):
    """Degenerate streams a decoder must get through quickly."""
    bw = Bits()
    for _ in range(40000):
        fixed(bw, [], final=0)
    fixed(bw, [])
    body = bw.done()
    V.add("slow-empty-fixed-blocks", "slow", "40000 empty fixed blocks (%d bytes)" % len(body),
          member(b"", body), ("ok", b""), body, "ok 0")
    bw = Bits()
    for _ in range(4000):
        dynamic(bw, [], lit=[0] * 256 + [1], dist=[1], final=0)
    dynamic(bw, [], lit=[0] * 256 + [1], dist=[1])
    body = bw.done()
    V.add("slow-empty-dynamic-blocks", "slow", "4001 empty dynamic blocks (%d bytes)" % len(body),
          member(b"", body), ("ok", b""), body, "ok 0")
    bw = Bits()
    for _ in range(4000):
        dynamic(bw, [], lit=[0] * 256 + [1], dist=[1], final=0)
    body = bw.done()
    V.add("slow-empty-dynamic-cut", "slow", "4000 empty dynamic blocks, no final one",
          header() + body, "fail", body, "cut")


STYLES = [
    ("gzip", "zlib level 6, one member", lambda d: member(d)),
    ("level9-w9", "level 9, a 512-byte window, memLevel 1",
     lambda d: member(d, deflate(d, 9, 9, 1))),
    ("fixed", "fixed codes only (Z_FIXED)",
     lambda d: member(d, deflate(d, 6, strategy=zlib.Z_FIXED))),
    ("huffman", "Huffman only, no matches",
     lambda d: member(d, deflate(d, 1, strategy=zlib.Z_HUFFMAN_ONLY))),
    ("rle", "distance-1 matches only (Z_RLE)",
     lambda d: member(d, deflate(d, 6, strategy=zlib.Z_RLE))),
    ("stored", "level 0: stored blocks", lambda d: member(d, deflate(d, 0))),
    ("sync-flush", "a sync flush (an empty stored block) every 16 KiB, as parallel compressors "
     "join their pieces", lambda d: member(d, deflate(d, 6, chunks=16384))),
    ("full-flush", "a full flush every 16 KiB (independent pieces)",
     lambda d: member(d, deflate(d, 6, chunks=16384, flush=zlib.Z_FULL_FLUSH))),
]


def bgzf(d):
    """BGZF (the SAM specification): members of at most 65280 input bytes,
    each with an extra subfield BC holding the member's size less 1, and
    the fixed empty EOF member last."""
    out = bytearray()
    for i in range(0, len(d), 65280):
        piece = d[i:i + 65280]
        body = deflate(piece)
        size = 12 + 6 + len(body) + 8
        out += header(xfl=0, os_=255, extra=b"BC\x02\x00" + struct.pack("<H", size - 1)) + body
        out += trailer(piece)
    out += header(os_=255, extra=b"BC\x02\x00\x1b\x00") + b"\x03\x00" + trailer(b"")
    return bytes(out)


def chunked(d):
    """Members of 64 KiB of input each, an extra subfield (ID "SZ") with the
    member's compressed size, and an empty member at the end."""
    out = bytearray()
    for i in range(0, len(d), 65536):
        piece = d[i:i + 65536]
        body = deflate(piece, 4)
        out += header(extra=b"SZ\x04\x00" + struct.pack("<I", len(body))) + body + trailer(piece)
    return bytes(out + EMPTY)


def encoders(V):
    styles = STYLES + [("bgzf", "BGZF: members with a BC subfield and the EOF member", bgzf),
                       ("chunked", "members of 64 KiB with an extra subfield, an empty one last",
                        chunked)]
    for cn, d in CONTENTS:
        for sn, what, f in styles:
            V.add("valid-%s-%s" % (cn, sn), "valid", "%s (%d bytes): %s" % (cn, len(d), what),
                  f(d), ("ok", d))


def lzw(V):
    t = text(90, 5000)
    big = text(91, 300000) + rbytes(92, 100000)
    for nm, d, bits, block, clear, what in (
            ("9", t, 9, True, False, "9-bit codes at most"),
            ("12", t, 12, True, False, "12-bit codes"),
            ("16", t, 16, True, False, "16-bit codes"),
            ("16-full", big, 16, True, False, "16-bit codes, the table full, never cleared"),
            ("12-clear", big, 12, True, True, "12-bit codes, CLEAR each time the table fills"),
            ("16-no-block", t, 16, False, False, "no block mode (no CLEAR code, entries from 256)"),
            ("1-byte", b"q", 16, True, False, "one byte"),
            ("kwkwk", b"ab" + b"a" * 50, 16, True, False, "codes naming the entry being defined")):
        V.add("lzw-" + nm, "lzw", "compress(1) data, " + what,
              lzw_pack(lzw_tokens(d, bits, block, clear), bits, block), ("ok", d))
    V.add("lzw-empty", "lzw", "compress(1) header and no codes", b"\x1f\x9d\x90", ("ok", b""))
    V.add("lzw-17-bits", "lzw", "compress(1) data of 17-bit codes (more than gzip handles)",
          lzw_pack(lzw_tokens(t, 16), 16, flags=0x80 | 17), "fail")
    for f in (0x20, 0x40):
        V.add("lzw-flag-%02x" % f, "lzw", "compress(1) data with the reserved flag %#x" % f,
              lzw_pack(lzw_tokens(t, 16), 16, flags=0x90 | f), "-")
    V.add("lzw-first-code-300", "lzw", "first code 300 (not a byte)", lzw_pack([300, 65], 16),
          "fail")
    V.add("lzw-code-past-free", "lzw", "a code beyond the next free entry",
          lzw_pack([65, 66, 400, 67], 16), "fail")
    V.add("lzw-cut", "lzw", "compress(1) data cut in the middle of a code",
          lzw_pack(lzw_tokens(t, 16), 16)[:1001], "-")
    V.add("lzw-after-gzip", "lzw", "a gzip member, then compress(1) data",
          member(t[:100]) + lzw_pack(lzw_tokens(t, 16), 16), ("ok", t[:100] + t))
    V.add("lzw-then-gzip", "lzw", "compress(1) data, then a gzip member (LZW reads to the end: "
          "the member becomes codes)", lzw_pack(lzw_tokens(t, 16), 16) + member(b"x"), "-")


def pack(V):
    t = text(100, 4000)
    for nm, d, what in (("text", t, "4000 bytes of text"), ("1-byte", b"z", "one byte"),
                        ("two-symbols", b"ab" * 100, "two symbols"),
                        ("one-symbol", b"a" * 300, "one symbol, 300 times"),
                        ("all-bytes", bytes(range(256)) * 3, "all 256 byte values"),
                        ("empty", b"", "nothing")):
        V.add("pack-" + nm, "pack", "pack(1) data: " + what, pack_encode(d), ("ok", d))
    p = bytearray(pack_encode(t))
    for nm, edit, what in (
            ("maxlen-0", lambda b: b.__setitem__(6, 0), "a tree depth of 0"),
            ("maxlen-26", lambda b: b.__setitem__(6, 26), "a tree depth of 26 (over 25)"),
            ("length-plus-1", lambda b: b.__setitem__(5, b[5] + 1),
             "a length one more than the data"),
            ("length-minus-1", lambda b: b.__setitem__(5, b[5] - 1),
             "a length one less than the data"),
            ("cut-tree", None, "cut in the tree"),
            ("cut-data", None, "cut in the data")):
        b = bytearray(p)
        if nm == "cut-tree":
            b = b[:10]
        elif nm == "cut-data":
            b = b[:len(b) // 2]
        else:
            edit(b)
        V.add("pack-" + nm, "pack", "pack(1) data with " + what, b, "-")
    # hand-made trees, by the leaf counts stored for each depth (the last one
    # is stored less 2: the end code and one more are implied), the literals
    # then taken from the bytes that follow
    for lv in ([0], [1], [0, 0], [0, 1], [1, 0], [1, 1], [0, 3], [2, 0], [1, 0, 0], [1, 1, 0],
               [0, 0, 7], [0, 2, 1], [255, 255]):
        blob = b"\x1f\x1e" + struct.pack(">I", 3) + bytes([len(lv)]) + bytes(lv) + \
            b"abcdefghij" + b"\x55\xaa" * 4
        V.add("pack-tree-" + "-".join(map(str, lv)), "pack", "pack(1) header of depth %d, leaf "
              "counts %s as stored, then literals and data" % (len(lv), lv), blob, "-")
    V.add("pack-between-gzip", "pack", "a gzip member, pack(1) data, a gzip member",
          member(b"one\n") + pack_encode(b"two\n") + member(b"three\n"),
          ("ok", b"one\ntwo\nthree\n"))


def zips(V):
    d = text(110, 3000)
    for nm, z, ex, what in (
            ("deflated", zip_file([zip_entry(d)]), ("ok", d), "one deflated entry"),
            ("stored", zip_file([zip_entry(d, method=0)]), ("ok", d), "one stored entry"),
            ("descriptor", zip_file([zip_entry(d, descriptor=True)]), ("ok", d),
             "a deflated entry with a data descriptor"),
            ("two-entries", zip_file([zip_entry(d), zip_entry(b"second", name=b"b")]), "-",
             "two entries (gzip takes the first)"),
            ("method-12", zip_file([zip_entry(d, method=12, body=b"BZh9" + bytes(20))]), "fail",
             "an entry of method 12 (bzip2)"),
            ("encrypted", zip_file([zip_entry(d, flags=1)]), "fail", "the encrypted flag"),
            ("stored-size-wrong", zip_file([zip_entry(d, method=0, csize=len(d) - 1)]), "-",
             "a stored entry whose sizes disagree"),
            ("crc-wrong", zip_file([zip_entry(d, crc=1)]), "fail", "a wrong CRC-32"),
            ("cut", zip_file([zip_entry(d)])[:20], "fail", "cut inside the local header")):
        V.add("zip-" + nm, "zip", "zip file: " + what, z, ex)


def all_vectors():
    V = Vectors()
    for f in (inflate_errors, intact, window_edges, headers, truncations, trailers, members,
              trailing, stored_blocks, slow, encoders, lzw, pack, zips):
        f(V)
    return V.v


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    vs = all_vectors()
    lines = ["\t".join(v[:6]) for v in vs]
    if argv[1] == "--list":
        print("\n".join(lines))
        return
    os.makedirs(argv[1], exist_ok=True)
    for v in vs:
        with open(os.path.join(argv[1], v[0]), "wb") as f:
            f.write(v[6])
    with open(os.path.join(argv[1], "MANIFEST.tsv"), "w") as f:
        f.write("file\tclass\texpect\tzlib\tallow\tdescription\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv)

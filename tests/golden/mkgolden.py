#!/usr/bin/env python3
"""mkgolden.py — the golden spigz files, written from doc/FORMAT.md alone.

A second, independent writer of the spigz format: every byte below follows
the text of doc/FORMAT.md (and RFC 1951/1952 for deflate and gzip), never
spigz's code.  Standard library only, but python3-xxhash for the image
digest's XXH3-128 (FORMAT.md 2.3); zlib serves for CRC-32 and nothing
else, and to check that each data piece written here inflates to its bytes
(the deflate blocks are written here bit by bit, so the output does not
depend on the zlib version at hand).

    python3 tests/golden/mkgolden.py [--out DIR]      write the golden set
    python3 tests/golden/mkgolden.py --check DIR      compare DIR with what
                                                      this program writes
    python3 tests/golden/mkgolden.py [--renote NAME NOTES.json]
                                     [--remanifest NAME MANIFEST.bin] --out FILE
        the golden file NAME with other notes (tests/golden.sh: spigz's own
        notes, whose wording is the CLI's, not the format's) and with a
        manifest's bytes after them (spigz's own, whose entries golden.sh
        checks one by one: the date and host are not the format's)
    python3 tests/golden/mkgolden.py --digest NAME
        the image digest (FORMAT.md 2.3) of the golden file NAME

THE GOLDEN FILES ARE REGENERATED ONLY ON PURPOSE.  tests/golden.sh fails when
spigz stops reading them, or stops writing the same bytes for the same
content, and that failure is the point: every backup already made has these
bytes.  When the test fails:
  - after a change meant to keep the format: the change is wrong; fix it,
    never these files;
  - after a deliberate change to the format (FORMAT.md changed first): old
    files must keep decoding, so the files here STAY as they are and keep
    being decoded by the test; give the new version its own files (new
    names, written by new code here next to the old), and let only the
    "same bytes as spigz writes" comparison move to them.
Running this program over tests/golden/ must leave every existing file
byte-identical (tests/golden.sh checks it with --check).
"""
import argparse
import hashlib
import json
import os
import struct
import sys
import zlib

K = 1024
M = 1 << 20
G = 1 << 30

# ---------------------------------------------------------------------------
# Bits (RFC 1951 3.1.1; FORMAT.md 1.1): fields and extra bits go least
# significant bit first, Huffman codes most significant bit first, both
# packed from the least significant bit of each byte.  Runs of zero bytes are
# kept as counts, so that a 1 GiB zero piece (1 MB of encoding, nearly all
# zero) costs nothing to build.


class Bits:
    def __init__(self):
        self.segs = []          # bytes objects and ints (that many zero bytes)
        self.cur = bytearray()
        self.acc = 0
        self.nacc = 0

    def put(self, val, n):
        """A field of n bits, least significant bit first."""
        assert 0 <= val < (1 << n) or n == 0 and val == 0
        for i in range(n):
            self.acc |= ((val >> i) & 1) << self.nacc
            self.nacc += 1
            if self.nacc == 8:
                self.cur.append(self.acc)
                self.acc = self.nacc = 0

    def code(self, bits):
        """A Huffman code written as a string of '0' and '1', first bit first."""
        for b in bits:
            self.put(int(b), 1)

    def zero_bits(self, n):
        while n > 0 and self.nacc != 0:
            self.put(0, 1)
            n -= 1
        if n >= 8:
            self.flush_cur()
            self.segs.append(n // 8)
            n %= 8
        self.put(0, n)

    def align(self):
        """Zero bits up to the byte boundary."""
        if self.nacc:
            self.put(0, 8 - self.nacc)

    def raw(self, data):
        assert self.nacc == 0
        self.cur += data

    def flush_cur(self):
        if self.cur:
            self.segs.append(bytes(self.cur))
            self.cur = bytearray()

    def done(self):
        """The segments; the writer must stand on a byte boundary."""
        assert self.nacc == 0, "a piece must end on a byte boundary"
        self.flush_cur()
        return self.segs


def seg_len(segs):
    return sum(s if isinstance(s, int) else len(s) for s in segs)


def seg_bytes(segs):
    return b"".join(bytes(s) if isinstance(s, int) else s for s in segs)


def seg_crc(segs, crc=0):
    for s in segs:
        if isinstance(s, int):
            z = bytes(min(s, M))
            n = s
            while n > 0:
                k = min(n, len(z))
                crc = zlib.crc32(z[:k], crc)
                n -= k
        else:
            crc = zlib.crc32(s, crc)
    return crc


# ---------------------------------------------------------------------------
# Deflate tables (RFC 1951 3.2.5)

LEN_BASE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
            35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
LEN_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
             3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
DIST_BASE = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193,
             257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145,
             8193, 12289, 16385, 24577]
DIST_EXTRA = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6,
              7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]


def fixed_code(sym):
    """The fixed literal/length code of sym (RFC 1951 3.2.6), as a bit string."""
    if sym < 144:
        return format(0x30 + sym, "08b")
    if sym < 256:
        return format(0x190 + sym - 144, "09b")
    if sym < 280:
        return format(sym - 256, "07b")
    return format(0xc0 + sym - 280, "08b")


def fixed_length(b, length):
    """A match length (3..258) in a fixed block: its code, then its extra bits."""
    i = max(j for j in range(29) if LEN_BASE[j] <= length)
    b.code(fixed_code(257 + i))
    b.put(length - LEN_BASE[i], LEN_EXTRA[i])


def fixed_distance(b, dist):
    i = max(j for j in range(30) if DIST_BASE[j] <= dist)
    b.code(format(i, "05b"))
    b.put(dist - DIST_BASE[i], DIST_EXTRA[i])


# ---------------------------------------------------------------------------
# FORMAT.md 1.1: the canonical encoding of a zero piece of n bytes, step by
# step as the text gives it.

CL_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1]
CL_LENGTHS = [0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2]  # in CL_ORDER
CL_CODE = {18: "0", 1: "10", 2: "11"}        # the code-length code
LL_CODE = {285: "0", 0: "10", 256: "11"}     # literal/length code
DIST_CODE_0 = "0"                            # distance code 0 (distance 1)


def zero_piece(n):
    assert 1 <= n <= 1 << 40
    k, r = divmod(n - 1, 258)
    b = Bits()
    # 1. the dynamic block's header
    b.put(0, 1)             # BFINAL 0
    b.put(2, 2)             # BTYPE 2
    b.put(29, 5)            # HLIT: 286 codes
    b.put(1, 5)             # HDIST: 2 codes
    b.put(14, 4)            # HCLEN: 18 code-length code lengths
    for ln in CL_LENGTHS:
        b.put(ln, 3)
    # the 288 code lengths: 2; 18+127; 18+106; 2; 18+17; 1; 1; 1
    b.code(CL_CODE[2])
    b.code(CL_CODE[18])
    b.put(127, 7)           # 138 zeros: literals 1..138
    b.code(CL_CODE[18])
    b.put(106, 7)           # 117 zeros: literals 139..255
    b.code(CL_CODE[2])      # 256
    b.code(CL_CODE[18])
    b.put(17, 7)            # 28 zeros: 257..284
    b.code(CL_CODE[1])      # 285
    b.code(CL_CODE[1])      # distance 0
    b.code(CL_CODE[1])      # distance 1
    # 2. literal 0, k matches of 258 at distance 1 (two zero bits each), end
    b.code(LL_CODE[0])
    b.zero_bits(2 * k)      # LL_CODE[285] + DIST_CODE_0, k times: all zeros
    b.code(LL_CODE[256])
    # 3. the r last zeros in a fixed block
    if r > 0:
        b.put(0, 1)         # BFINAL 0
        b.put(1, 2)         # BTYPE 1
        if r >= 3:
            fixed_length(b, r)
            b.code("00000")  # distance code 0: distance 1
        else:
            for _ in range(r):
                b.code("00110000")
        b.code("0000000")   # end of block
    # 4. an empty stored block
    b.put(0, 1)
    b.put(0, 2)
    b.align()
    b.raw(b"\x00\x00\xff\xff")
    return b.done()


# ---------------------------------------------------------------------------
# Data pieces (FORMAT.md 1: complete non-final blocks, byte-aligned at both
# ends, no distance before the piece).  Built here, not by zlib:


def stored_blocks(b, data, maxlen=65535, final=0):
    """data as stored blocks (RFC 1951 3.2.4), from a byte boundary."""
    pos = 0
    while True:
        chunk = data[pos:pos + maxlen]
        b.put(final, 1)
        b.put(0, 2)
        b.align()
        b.raw(struct.pack("<HH", len(chunk), len(chunk) ^ 0xffff))
        b.raw(chunk)
        pos += len(chunk)
        if pos >= len(data):
            return


def sync_marker(b):
    """An empty stored block: what spigz ends its data pieces with."""
    b.put(0, 1)
    b.put(0, 2)
    b.align()
    b.raw(b"\x00\x00\xff\xff")


def piece_stored(data):
    """A data piece as spigz -0 writes one up to 65531 bytes (FORMAT.md 1:
    its chunk compressed, made non-final, then the empty stored block)."""
    assert 1 <= len(data) <= 65531
    b = Bits()
    stored_blocks(b, data)
    sync_marker(b)
    return b.done()


def piece_stored_bare(data):
    """Stored blocks and nothing after them: already byte-aligned."""
    b = Bits()
    stored_blocks(b, data, maxlen=1000)
    return b.done()


def lz77(data):
    """Greedy matches within data (distance <= 32768, no earlier bytes)."""
    head = {}
    i, out = 0, []
    while i < len(data):
        best, bdist = 0, 0
        if i + 3 <= len(data):
            key = data[i:i + 3]
            j = head.get(key)
            if j is not None and i - j <= 32768:
                n = 0
                while n < 258 and i + n < len(data) and data[j + n] == data[i + n]:
                    n += 1
                best, bdist = n, i - j
            head[key] = i
        if best >= 3:
            out.append((best, bdist))
            for p in range(i + 1, min(i + best, len(data) - 2)):
                head[data[p:p + 3]] = p
            i += best
        else:
            out.append(data[i])
            i += 1
    return out


def fixed_block(b, data):
    b.put(0, 1)
    b.put(1, 2)
    for t in lz77(data):
        if isinstance(t, int):
            b.code(fixed_code(t))
        else:
            fixed_length(b, t[0])
            fixed_distance(b, t[1])
    b.code(fixed_code(256))


def piece_fixed(data, splits=()):
    """Fixed-code blocks (cut at the offsets in splits), then the empty
    stored block after the padding bits."""
    b = Bits()
    cuts = [0] + list(splits) + [len(data)]
    for a, z in zip(cuts, cuts[1:]):
        fixed_block(b, data[a:z])
    sync_marker(b)
    return b.done()


def piece_mixed(data):
    """A fixed block, a stored block, a fixed block: padding mid-piece."""
    a, z = len(data) // 3, 2 * len(data) // 3
    b = Bits()
    fixed_block(b, data[:a])
    stored_blocks(b, data[a:z])
    fixed_block(b, data[z:])
    sync_marker(b)
    return b.done()


# ---------------------------------------------------------------------------
# Contents: deterministic, from sha256 (no random module, no platform).

WORDS = (b"the of and disk image block device sparse zero chunk stream member "
         b"index piece deflate gzip footer record backup restore").split()


def rand_bytes(n, seed):
    out = bytearray()
    i = 0
    while len(out) < n:
        out += hashlib.sha256(b"%s:%d" % (seed.encode(), i)).digest()
        i += 1
    return bytes(out[:n])


def text_bytes(n, seed):
    r = rand_bytes(n, seed)
    out = bytearray()
    i = 0
    while len(out) < n:
        out += WORDS[r[i % n] % len(WORDS)] + (b"\n" if r[(i * 7) % n] % 11 == 0 else b" ")
        i += 1
    return bytes(out[:n])


# ---------------------------------------------------------------------------
# gzip framing (FORMAT.md 1, RFC 1952)

def gzip_header(name=None, mtime=0, xfl=0, os_=3, extra=None, comment=None, hcrc=False):
    flg = (0x04 if extra is not None else 0) | (0x08 if name is not None else 0) | \
          (0x10 if comment is not None else 0) | (0x02 if hcrc else 0)
    h = bytearray(b"\x1f\x8b\x08" + bytes([flg]) + struct.pack("<I", mtime) + bytes([xfl, os_]))
    if extra is not None:
        h += struct.pack("<H", len(extra)) + extra
    if name is not None:
        h += name + b"\x00"
    if comment is not None:
        h += comment + b"\x00"
    if hcrc:
        h += struct.pack("<H", zlib.crc32(h) & 0xffff)
    return bytes(h)


def leb(v):
    """Unsigned LEB128, minimal (FORMAT.md 2)."""
    assert 0 <= v < 1 << 64
    out = bytearray()
    while True:
        byte = v & 0x7f
        v >>= 7
        out.append(byte | (0x80 if v else 0))
        if not v:
            return bytes(out)


# FORMAT.md 2.2: the manifest's entry types.
MF_TEXT, MF_UINT, MF_BYTES, MF_RANGES = 1, 2, 3, 4


def ranges_value(ranges):
    """A ranges value: the count, then (gap, length) pairs (FORMAT.md 2.2)."""
    out, end = bytearray(leb(len(ranges))), 0
    for off, ln in ranges:
        assert ln >= 1 and (off > end or (end == 0 and off >= 0))
        out += leb(off - end) + leb(ln)
        end = off + ln
    return bytes(out)


def manifest_bytes(entries):
    """FORMAT.md 2.2: the count, then each entry as its key's length and
    bytes, its type, its value's length and bytes.  entries: (key, type,
    value) with value a str, an int, bytes, a list of (offset, length), or
    for a type this writer does not know, its raw bytes."""
    out = bytearray(leb(len(entries)))
    seen = set()
    for key, typ, val in entries:
        k = key.encode("ascii")
        assert 1 <= len(k) <= 64 and all(c in b"abcdefghijklmnopqrstuvwxyz0123456789._-" for c in k)
        assert key not in seen
        seen.add(key)
        if typ == MF_TEXT:
            v = val.encode("utf-8")
            assert len(v) <= 4096 and printable(val)
        elif typ == MF_UINT:
            v = leb(val)
        elif typ == MF_BYTES:
            v = bytes(val)
            assert len(v) <= 64
        elif typ == MF_RANGES:
            v = ranges_value(val)
        else:
            v = bytes(val)
        out += bytes([len(k)]) + k + bytes([typ]) + leb(len(v)) + v
    return bytes(out)


def tree_digest(chunks):
    """FORMAT.md 2.3: XXH3-128 (canonical, big-endian) of each 4 KiB block
    (the last may be shorter), of each run of 256 of those, of those and the
    length as 8 bytes little-endian.  chunks: bytes, or an int for that many
    zeros.  python3-xxhash computes XXH3-128, as zlib computes CRC-32 here."""
    import xxhash
    H = xxhash.xxh3_128_digest
    zleaf = H(bytes(4096))
    zgroup = H(zleaf * 256)
    top, group, leaves, part, total = xxhash.xxh3_128(), xxhash.xxh3_128(), 0, bytearray(), 0

    def leaf(h):
        nonlocal group, leaves
        group.update(h)
        leaves += 1
        if leaves == 256:
            top.update(group.digest())
            group, leaves = xxhash.xxh3_128(), 0

    for c in chunks:
        if isinstance(c, int):
            total += c
            n = c
            if part:
                k = min(4096 - len(part), n)
                part += bytes(k)
                n -= k
                if len(part) == 4096:
                    leaf(H(bytes(part)))
                    part = bytearray()
            while n >= 4096:
                if leaves == 0 and n >= 4096 * 256:
                    top.update(zgroup)
                    n -= 4096 * 256
                else:
                    leaf(zleaf)
                    n -= 4096
            part += bytes(n)
        else:
            total += len(c)
            part += c
            while len(part) >= 4096:
                leaf(H(bytes(part[:4096])))
                del part[:4096]
    if part:
        leaf(H(bytes(part)))
    if leaves:
        top.update(group.digest())
    top.update(struct.pack("<Q", total))
    return top.digest()


def manifest_json(entries):
    """What spigz -l --format=json prints of a manifest: dotted keys as
    nested objects; text a string, a number, bytes in hex, ranges counted."""
    out, prev, depth_open = "{", None, 0
    for key, typ, val in entries:
        segs = key.split(".")
        keep = 0
        if prev is not None:
            while keep < len(prev) - 1 and keep < len(segs) - 1 and prev[keep] == segs[keep]:
                keep += 1
        keep = min(keep, depth_open)
        out += "}" * (depth_open - keep)
        depth_open = keep
        if prev is not None:
            out += ","
        while depth_open < len(segs) - 1:
            out += jstr(segs[depth_open]) + ":{"
            depth_open += 1
        out += jstr(segs[-1]) + ":"
        if typ == MF_TEXT:
            out += jstr(val)
        elif typ == MF_UINT:
            out += "%d" % val
        elif typ == MF_BYTES:
            out += '"' + bytes(val).hex() + '"'
        elif typ == MF_RANGES:
            out += '{"ranges":%d,"bytes":%d}' % (len(val), sum(n for _, n in val))
        else:
            out += '{"type":%d,"length":%d}' % (typ, len(bytes(val)))
        prev = segs
    return out + "}" * depth_open + "}"


class Piece:
    def __init__(self, kind, ulen, segs, crc):
        self.kind, self.ulen, self.segs, self.crc = kind, ulen, segs, crc
        self.clen = seg_len(segs)


def data_piece(data, encode=piece_stored):
    return Piece(1, len(data), encode(data), zlib.crc32(data))


def zero(n):
    return Piece(0, n, zero_piece(n), 0)


def content_crc(pieces):
    crc = 0
    for p in pieces:
        crc = seg_crc([p.ulen], crc) if p.kind == 0 else \
            zlib.crc32(inflate_piece(p), crc)
    return crc


def inflate_piece(p):
    """A data piece's bytes, by zlib: a check on this writer, FORMAT.md's
    rule that the piece followed by 03 00 is a complete raw deflate stream."""
    d = zlib.decompressobj(-15)
    out = d.decompress(seg_bytes(p.segs) + b"\x03\x00")
    assert d.eof and not d.unused_data, "piece does not end where it should"
    assert len(out) == p.ulen and zlib.crc32(out) == p.crc
    return out


def index_payload(pieces, bad=None, notes=None, manifest=None):
    """FORMAT.md 2: records, then the bad-range list, then the notes, then
    the manifest (its length, then its bytes)."""
    out = bytearray()
    for p in pieces:
        out += leb(p.ulen * 2 + p.kind) + leb(p.clen)
        if p.kind == 1:
            out += struct.pack("<I", p.crc)
    if bad:
        out += leb(len(bad))
        end = 0
        for off, ln in bad:
            assert ln >= 1 and (off > end or (end == 0 and off >= 0))
            out += leb(off - end) + leb(ln)
            end = off + ln
    if notes:
        assert 1 <= len(notes) <= 64
        out += leb(len(notes))
        for t in notes:
            raw = t.encode("utf-8")
            assert 1 <= len(raw) <= 1024 and printable(t)
            out += leb(len(raw)) + raw
    if manifest:
        assert 1 <= len(manifest) <= 16 << 20
        out += leb(len(manifest)) + manifest
    return bytes(out)


def printable(t):
    return all(not (ord(c) < 0x20 or ord(c) == 0x7f or 0x80 <= ord(c) <= 0x9f) for c in t)


# An index member's and the footer's first 10 bytes: FEXTRA, MTIME 0, XFL 0,
# OS 255 (FORMAT.md 2 and 3).
IDX_HEAD = bytes.fromhex("1f8b08040000000000ff")


def index_members(payload, split=None):
    """FORMAT.md 2: each member's fixed bytes around its share of the payload;
    spigz's split (65531 a member) unless another is given."""
    sizes = []
    left = len(payload)
    for s in (split or []):
        if left == 0:
            break
        sizes.append(min(s, left))
        left -= sizes[-1]
    while left > 0:
        sizes.append(min(65531, left))
        left -= sizes[-1]
    out, at = bytearray(), 0
    for m in sizes:
        assert 1 <= m <= 65531
        out += IDX_HEAD
        out += struct.pack("<H", m + 4) + b"SI" + struct.pack("<H", m)
        out += payload[at:at + m]
        out += b"\x03\x00" + bytes(8)
        at += m
    return bytes(out)


def footer(flags, total, data_len, header_len, index_len, npieces, payload_crc):
    """FORMAT.md 3: 78 bytes."""
    f = bytearray(IDX_HEAD)
    f += struct.pack("<H", 56) + b"SF" + struct.pack("<H", 52)
    body = struct.pack("<BBH", 1, flags, 0) + struct.pack(
        "<QQQQQI", total, data_len, header_len, index_len, npieces, payload_crc)
    assert len(body) == 48
    f += body + struct.pack("<I", zlib.crc32(body)) + b"\x03\x00" + bytes(8)
    assert len(f) == 78
    return bytes(f)


class Golden:
    """A spigz file: header, pieces, 03 00, trailer; then the index members
    and the footer unless index is False."""

    def __init__(self, name, header, pieces, index=True, bad=None, notes=None,
                 split=None, about="", spigz=None, manifest=None, manifest_raw=None):
        """manifest: (key, type, value) entries, the image digest appended;
        manifest_raw: a manifest's bytes as they are (--remanifest)."""
        self.name, self.about, self.spigz = name, about, spigz
        self.pieces, self.bad, self.notes = pieces, bad, notes
        self.header = header
        self.total = sum(p.ulen for p in pieces)
        self.crc = content_crc(pieces)
        segs = [header]
        for p in pieces:
            segs += p.segs
        segs.append(b"\x03\x00" + struct.pack("<II", self.crc, self.total & 0xffffffff))
        self.data_len = seg_len(segs)
        self.index = index
        self.mf = None
        if manifest is not None:
            self.mf = list(manifest) + [("image.xxh3-128-tree", MF_BYTES,
                                          tree_digest(self.image_chunks()))]
            manifest_raw = manifest_bytes(self.mf)
        if index:
            payload = index_payload(pieces, bad, notes, manifest_raw)
            members = index_members(payload, split)
            flags = (1 if bad else 0) | (2 if notes else 0) | (4 if manifest_raw else 0)
            segs.append(members)
            segs.append(footer(flags, self.total, self.data_len, len(header), len(members),
                               len(pieces), zlib.crc32(payload)))
        self.segs = segs
        self.size = seg_len(segs)

    def bytes(self):
        return seg_bytes(self.segs)

    def image_chunks(self):
        """The decoded content, in pieces (zero pieces as counts)."""
        for p in self.pieces:
            yield p.ulen if p.kind == 0 else inflate_piece(p)

    def image_sha256(self, start=0, length=None):
        h = hashlib.sha256()
        end = self.total if length is None else start + length
        at = 0
        for c in self.image_chunks():
            n = c if isinstance(c, int) else len(c)
            a, z = max(at, start), min(at + n, end)
            if a < z:
                if isinstance(c, int):
                    left = z - a
                    zz = bytes(M)
                    while left > 0:
                        h.update(zz[:min(left, M)])
                        left -= min(left, M)
                else:
                    h.update(c[a - at:z - at])
            at += n
        return h.hexdigest()

    def lists(self):
        """What spigz -l prints: from the index (the deflate stream: data_len
        less the header and trailer), or as gzip -l without one."""
        mtime = struct.unpack("<I", self.header[4:8])[0]
        return list_outputs(self.name, self.size, len(self.header), self.total & 0xffffffff,
                            self.total, self.index, self.crc, mtime,
                            self.data_len - len(self.header) - 8 if self.index else None,
                            self.notes or (), self.mf)

    # FORMAT.md 6: one point per piece (compressed offset header_len + the
    # piece's offset in the deflate stream, decoded offset its uoff), then
    # the end point (data_len - 10, total).
    def points(self):
        pts, c, u = [], len(self.header), 0
        for p in self.pieces:
            pts.append((c, u))
            c += p.clen
            u += p.ulen
        pts.append((self.data_len - 10, self.total))
        return pts

    def export_gztool(self):
        """FORMAT.md 6.1: big-endian."""
        pts = self.points()
        out = bytearray(bytes(8) + b"gzipindx" + struct.pack(">QQ", len(pts), len(pts)))
        for c, u in pts:
            out += struct.pack(">QQII", u, c, 0, 0)
        out += struct.pack(">Q", self.total)
        return bytes(out)

    def export_indexed_gzip(self):
        """FORMAT.md 6.2: the host's order; little-endian written here."""
        pts = self.points()
        out = bytearray(b"GZIDX" + bytes([1, 0]))
        out += struct.pack("<QQIII", self.size, self.total, 1048576, 32768, len(pts))
        for c, u in pts:
            out += struct.pack("<QQBB", c, u, 0, 0)
        return bytes(out)


# ---------------------------------------------------------------------------
# What spigz -l prints for a file (gzip -l's columns; doc/spigz.1): its
# sizes come from the index when there is one (exact), else from the
# trailer's ISIZE.  Here so that the expectation is written down, not
# copied from a run.

def list_outputs(fname, size, header_len, isize, total, exact, crc, mtime, deflated=None,
                 notes=(), mf=None):
    """-l's text and JSON.  Exact (from the index): the content's length, and
    the ratio of the deflate stream to it; else gzip's figures: ISIZE, and
    the file less the header and trailer, the length of all members apart."""
    stem = fname[:-3] if fname.endswith(".gz") else fname
    unc = total if exact else isize
    if deflated is None:
        deflated = size - header_len - 8
    ratio = 0.0 if unc == 0 else 100.0 * (float(unc) - float(deflated)) / float(unc)
    text = "         compressed        uncompressed  ratio uncompressed_name\n" + \
        "%19d %19d %5.1f%% %s\n" % (size, unc, ratio, stem)
    js = '{"file":%s,"uncompressed_name":%s,"compressed":%d,"uncompressed":%d,' \
        '"ratio":%.1f,"exact":%s,"members":1%s,"method":"deflate","crc":"%08x",' \
        '"mtime":%d' % (jstr(fname), jstr(stem), size, unc, ratio,
                        "true" if exact else "false",
                        "" if exact else ',"all_members":%d' % total, crc, mtime)
    if notes:
        js += ',"notes":[' + ",".join(jstr(t) for t in notes) + "]"
    if mf:
        js += ',"manifest":' + manifest_json(mf)
    return text, js + "}\n"


def jstr(s):
    """A JSON string: quote and backslash escaped, other text as it is."""
    out = '"'
    for c in s:
        if c in '"\\':
            out += "\\" + c
        elif ord(c) < 0x20 or ord(c) == 0x7f:
            out += "\\u%04x" % ord(c)
        else:
            out += c
    return out + '"'


# ---------------------------------------------------------------------------
# The golden set.  `spigz` says how spigz itself writes the same bytes from
# the same content (tests/golden.sh runs it and compares): -0 gives stored
# data pieces that this writer reproduces (one stored block up to 65531
# bytes: libdeflate's level 0 and zlib's agree there), and the pieces follow
# spigz's segmenter (4 KiB blocks, zero runs of 16 KiB or more, 1 GiB zero
# pieces).

def mbr_disk(tag):
    """2 MiB: an MBR whose one partition lies past the disk's end (spigz
    --free=zero reads it whole and says why: a note), data at 1 MiB."""
    mbr = bytearray(4096)
    mbr[440:444] = rand_bytes(4, tag)          # disk signature
    mbr[446:462] = bytes([0, 0, 0, 0, 0x83, 0, 0, 0]) + struct.pack("<II", 2048, 100000)
    mbr[510:512] = b"\x55\xaa"
    data = text_bytes(5000, tag) + bytes(8192 - 5000)
    return [bytes(mbr), 1 * M - 4096, data, 1 * M - 8192]


def golden_set():
    gs = []
    hdr0 = gzip_header()                               # spigz -n: no name, MTIME 0

    # A plain gzip file: one member, one final fixed block, name and time.
    t = text_bytes(6000, "plain") + bytes(3000) + text_bytes(1500, "plain2")
    plain = gzip_file(t, b"plain.txt", 1700000000, 2)
    gs.append(("plain.gz", plain, t, "a plain gzip file (one member, no index)"))

    # spigz --no-index -0 -n: the data member alone.
    a = text_bytes(5000, "noindex") + bytes(3192)
    gs.append(Golden("noindex.gz", hdr0, [
        data_piece(a), zero(16 * K), data_piece(rand_bytes(4 * K, "noindex")),
        zero(16 * K + 129)], index=False,
        about="--no-index: data member only; last zero piece (n-1) mod 258 = 0",
        spigz={"options": ["-0", "-n", "--no-index"]}))

    # Version 1, no flags; the name and time stored (spigz -0 on disk.img).
    a = text_bytes(4096, "v1a") + bytes(4096) + text_bytes(4096, "v1b")
    gs.append(Golden("v1.gz", gzip_header(b"disk.img", 1700000000), [
        data_piece(a), zero(20 * K), data_piece(rand_bytes(4096, "v1")),
        zero(M + 4 * K), data_piece(text_bytes(4196, "v1c"))],
        about="version 1, flags 0; FNAME and MTIME stored",
        spigz={"options": ["-0"], "name": "disk.img", "mtime": 1700000000}))

    # Empty content: no pieces, no index member, the footer alone.
    gs.append(Golden("v1-empty.gz", hdr0, [], about="empty content: no index member",
                     spigz={"options": ["-0", "-n"]}))

    # Flag 1: bad ranges (spigz --rescue over unreadable sectors), one at
    # offset 0 (gap 0), one inside a zero piece, one ending at the content's
    # end (a short last sector).
    d = bytearray(rand_bytes(16 * K, "bad"))
    bad = [(0, 512), (5120, 1024), (16 * K - 512, 512), (20 * K, 512), (53248, 300)]
    for off, ln in bad[:3]:
        d[off:off + ln] = bytes(ln)
    tail = bytearray(rand_bytes(4096, "badtail")) + bytes(300)
    gs.append(Golden("v1-bad.gz", hdr0, [
        data_piece(bytes(d)), zero(32 * K), data_piece(bytes(tail))], bad=bad,
        about="version 1, flag 1: bad ranges (one at 0, one inside a zero piece, one at the end)",
        spigz={"options": ["-0", "-n", "--rescue"]}))

    # Flag 2: notes (content: an MBR disk that spigz --free=zero notes).
    disk = mbr_disk("notes")
    notes = ["a",
             'UTF-8: caf\u00e9, \u6f22\u5b57, \U0001f600; "quoted" and back\\slash',
             "".join("%04d " % i for i in range(205))[:1024]]
    gs.append(Golden("v1-notes.gz", hdr0, [
        data_piece(disk[0]), zero(disk[1]), data_piece(disk[2]), zero(disk[3])],
        notes=notes,
        about="version 1, flag 2: notes (1 byte, UTF-8 of 2 to 4 bytes, 1024 bytes)",
        spigz={"options": ["-0", "-n", "--free=zero"], "own_notes": True}))

    # Flags 1 and 2: bad ranges, then notes.
    disk = mbr_disk("badnotes")
    d = bytearray(disk[2])
    bad = [(M + 1024, 512), (M + 4608, 1536)]   # block 1 keeps data before 4608
    for off, ln in bad:
        d[off - M:off - M + ln] = bytes(ln)
    gs.append(Golden("v1-bad-notes.gz", hdr0, [
        data_piece(disk[0]), zero(disk[1]), data_piece(bytes(d)), zero(disk[3])],
        bad=bad, notes=["the bad ranges come first, then this note"],
        about="version 1, flags 1 and 2",
        spigz={"options": ["-0", "-n", "--rescue", "--free=zero"], "own_notes": True}))

    # What spigz never writes but a reader must take (FORMAT.md 1 and 2):
    # a header with every field, data pieces of other block kinds, zero
    # pieces of 1 to 3 bytes, the payload split at odd places (inside
    # records and notes), 64 notes.
    txt = text_bytes(9000, "split")
    pieces = [
        data_piece(txt[:3000], piece_fixed),
        zero(1),
        data_piece(txt[3000:6000], lambda x: piece_fixed(x, (1000, 2222))),
        zero(2),
        data_piece(txt[6000:7500], piece_mixed),
        zero(3),
        data_piece(rand_bytes(2500, "split"), piece_stored_bare),
        zero(300000),
        data_piece(b"\xff", piece_fixed),
        zero(259),
        data_piece(txt[7500:], piece_fixed),
    ]
    notes = ["note %d of 64%s" % (i + 1, " \u2014 \u00e9t\u00e9" if i % 9 == 0 else "")
             for i in range(64)]
    bad = [(3000, 2), (3500, 200), (308000, 1)]
    hdr = gzip_header(b"split.img", 1234567890, 4, 255, extra=b"AB\x03\x00xyz",
                      comment=b"every header field", hcrc=True)
    gs.append(Golden("v1-split.gz", hdr, pieces, bad=bad, notes=notes,
                     split=[1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233],
                     about="a reader's cases: FEXTRA/FCOMMENT/FHCRC, fixed and mixed "
                           "blocks, zero pieces of 1-3 bytes, payload split in 13 members, "
                           "64 notes, flags 3"))

    # Flag 4: the manifest (FORMAT.md 2.2), after the notes; every type of
    # entry, and a newer writer's of a type this one does not know (kept,
    # skipped); the payload split so that the manifest spans members.  The
    # image digest (2.3) is appended by Golden.
    disk = mbr_disk("manifest")
    mf = [("spigz.version", MF_TEXT, "0.1.0"), ("options.level", MF_UINT, 0),
          ("options.piece", MF_UINT, M), ("options.zero-run", MF_UINT, 16 * K),
          ("options.free", MF_TEXT, "zero"), ("host", MF_TEXT, "golden"),
          ("source.path", MF_TEXT, "/dev/sdz"), ("source.kind", MF_TEXT, "block device"),
          ("source.size", MF_UINT, 2 * M),
          ("source.model", MF_TEXT, "Golden disk \u00e9 \"quoted\""),
          ("source.sector", MF_UINT, 512), ("source.physical-sector", MF_UINT, 4096),
          ("table.type", MF_TEXT, "dos"), ("table.id", MF_TEXT, "1a2b3c4d"),
          ("part.1.start", MF_UINT, M), ("part.1.size", MF_UINT, 100000 * 512),
          ("part.1.type", MF_TEXT, "0x83"), ("part.1.type-name", MF_TEXT, "Linux"),
          ("part.1.read-whole", MF_TEXT, "the partition lies outside the disk"),
          ("free.bytes", MF_UINT, 2 * M - 12288), ("free.ranges", MF_UINT, 2),
          ("free.map", MF_RANGES, [(4096, M - 4096), (M + 8192, M - 8192)]),
          ("zz.newer", 9, b"\x00\x01\x02")]
    gs.append(Golden("m1.gz", hdr0, [
        data_piece(disk[0]), zero(disk[1]), data_piece(disk[2]), zero(disk[3])],
        notes=["a note before the manifest"], manifest=mf, split=[5, 40, 3, 700],
        about="flags 2 and 4: notes, then a manifest of every entry type (and an "
              "unknown one), split across index members; its image digest"))
    # Flag 4 alone: what spigz -n writes from a pipe (version, options, digest).
    a = text_bytes(6000, "m1min") + bytes(10000)
    gs.append(Golden("m1-min.gz", hdr0, [
        data_piece(a), zero(20 * K), data_piece(rand_bytes(5000, "m1min"))],
        manifest=[("spigz.version", MF_TEXT, "0.1.0"), ("options.level", MF_UINT, 0),
                  ("options.piece", MF_UINT, M), ("options.zero-run", MF_UINT, 16 * K)],
        about="flag 4 alone: a manifest as from a pipe with -n; a last block of 904 bytes"))

    # 1 GiB zero pieces: the largest spigz writes, and the rest of a run.
    gs.append(Golden("v1-big.gz", hdr0, [
        data_piece(rand_bytes(4096, "big1")), zero(G), zero(12 * K),
        data_piece(rand_bytes(4096, "big2"))],
        about="a 1 GiB zero piece and a run's rest of 12 KiB (stored gzip-compressed: "
              "v1-big.gz.gz)", spigz={"options": ["-0", "-n"]}))
    return gs


ZRUN_LENGTHS = [
    1, 2, 3, 4,                  # r = 0, 1, 2 (literals), 3 (shortest match)
    115, 116,                    # r = 114 (last 7-bit length code), 115 (first 8-bit)
    258, 259, 260,               # r = 257 (longest rest); k = 1 with r = 0, 1
    1548, 1549, 1806, 1807,      # around the first whole zero byte in the middle
    1808, 2065, 2323, 2581,      # k = 7..10: every bit offset of the rest
    4096, 16 * K, 64 * K + 1, M, M + 4 * K,
    G - 1, G, G + 1, (1 << 32) + 1, 1 << 40,
]


def rle(segs):
    """An encoding as text: hex bytes, and 0*N for each run of N >= 8 zero
    bytes (wherever it lies), so the text does not depend on how it was built."""
    toks, lit, z = [], bytearray(), 0

    def settle():
        nonlocal z
        if z >= 8:
            if lit:
                toks.append(lit.hex())
                lit.clear()
            toks.append("0*%d" % z)
        else:
            lit.extend(bytes(z))
        z = 0
    for s in segs:
        if isinstance(s, int):
            z += s
            continue
        for byte in s:
            if byte == 0:
                z += 1
            else:
                settle()
                lit.append(byte)
    settle()
    if lit:
        toks.append(lit.hex())
    return " ".join(toks)


def zrun_text():
    lines = ["# Canonical zero-piece encodings (doc/FORMAT.md 1.1), written by mkgolden.py.",
             "# One line per length: n, the encoding's size in bytes, then the bytes as",
             "# hex with 0*N for a run of N zero bytes.  tests/check_zrun.c compares",
             "# zrun_encode() with every line; regenerate only on purpose (mkgolden.py)."]
    for n in ZRUN_LENGTHS:
        segs = zero_piece(n)
        lines.append("%d %d %s" % (n, seg_len(segs), rle(segs)))
    return "\n".join(lines) + "\n"


def ranges_for(g):
    """--range cases: from a piece boundary into a data piece, across a data
    piece's end, inside a zero piece, out of a zero piece, the last bytes."""
    out, u = [], 0
    starts = []
    for p in g.pieces:
        starts.append((u, p))
        u += p.ulen
    for (s0, p0), (s1, p1) in zip(starts, starts[1:]):
        if p0.kind == 0 and p1.kind == 1:
            out.append((s1, min(g.total - s1, 3000)))
            break
    for (s0, p0), (s1, p1) in zip(starts, starts[1:]):
        if p0.kind == 1 and p1.kind == 0:
            out.append((s1 - 100, 200))
            break
    for s0, p in starts:
        if p.kind == 0 and p.ulen >= 1000:
            out.append((s0 + p.ulen // 2, 300))
            if s0 + p.ulen < g.total:
                out.append((s0 + p.ulen - 64, min(g.total - s0 - p.ulen + 64, 4096)))
            break
    if g.total > 0:
        out.append((max(0, g.total - 1000), min(g.total, 1000)))
    return [(o, n, g.image_sha256(o, n)) for o, n in out]


def build():
    files = {}
    manifest = {"_comment": [
        "Written by mkgolden.py from doc/FORMAT.md; read by tests/golden.sh.",
        "Per file: its sha256, the length and sha256 of its decoded image, what",
        "spigz -l prints (text and --format=json), the sha256 of the",
        "--export-index outputs (null: spigz refuses, no index), --range cases",
        "as [offset, length, sha256], the bad ranges and notes of its index,",
        "and how spigz writes the same bytes (null: it never does)."]}
    for g in golden_set():
        if isinstance(g, tuple):                  # the plain gzip file
            name, data, image, about = g
            files[name] = data
            hlen = len(gzip_header(b"plain.txt"))
            text, js = list_outputs(name, len(data), hlen, len(image), len(image), False,
                                    zlib.crc32(image), struct.unpack("<I", data[4:8])[0])
            manifest[name] = {
                "about": about, "sha256": hashlib.sha256(data).hexdigest(),
                "size": len(data), "image_len": len(image),
                "image_sha256": hashlib.sha256(image).hexdigest(),
                "list_text": text, "list_json": js,
                "export_gztool_sha256": None, "export_indexed_gzip_sha256": None,
                "index": False,
                "ranges": [[100, 5000, hashlib.sha256(image[100:5100]).hexdigest()]],
                "bad": [], "notes": [], "spigz": None}
            continue
        data = g.bytes()
        stored = g.name + ".gz" if g.size > 100 * K else g.name
        # over 100 KiB (a 1 GiB zero piece): kept gzip-compressed in the tree
        files[stored] = gzip_file(data) if stored != g.name else data
        text, js = g.lists()
        manifest[g.name] = {
            "about": g.about, "stored_as": stored,
            "sha256": hashlib.sha256(data).hexdigest(), "size": g.size,
            "image_len": g.total, "image_sha256": g.image_sha256(),
            "list_text": text, "list_json": js,
            "export_gztool_sha256":
                hashlib.sha256(g.export_gztool()).hexdigest() if g.index else None,
            "export_indexed_gzip_sha256":
                hashlib.sha256(g.export_indexed_gzip()).hexdigest() if g.index else None,
            "index": g.index,
            "ranges": [list(r) for r in ranges_for(g)],
            "bad": [list(r) for r in (g.bad or [])],
            "notes": g.notes or [],
            "spigz": g.spigz,
        }
    files["zrun.txt"] = zrun_text().encode()
    files["MANIFEST.json"] = (json.dumps(manifest, indent=1, ensure_ascii=False,
                                         sort_keys=True) + "\n").encode()
    return files


def gzip_file(data, name=None, mtime=0, xfl=0):
    """A plain one-member gzip file: one final fixed-code block."""
    b = Bits()
    b.put(1, 1)
    b.put(1, 2)
    for tok in lz77(data):
        if isinstance(tok, int):
            b.code(fixed_code(tok))
        else:
            fixed_length(b, tok[0])
            fixed_distance(b, tok[1])
    b.code(fixed_code(256))
    b.align()
    return gzip_header(name, mtime, xfl) + seg_bytes(b.done()) + \
        struct.pack("<II", zlib.crc32(data), len(data) & 0xffffffff)


def renote(name, notes, manifest_raw=None):
    """The golden file name with other notes (None: its own) and a manifest's
    bytes after them: what spigz writes for its content (tests/golden.sh,
    which checks that manifest's entries on their own)."""
    for g in golden_set():
        if not isinstance(g, tuple) and g.name == name:
            return Golden(g.name, g.header, g.pieces, bad=g.bad,
                          notes=g.notes if notes is None else notes,
                          manifest_raw=manifest_raw).bytes()
    raise SystemExit("no golden file " + name)


def image_digest(name):
    """The tree digest (FORMAT.md 2.3) of a golden file's image, in hex."""
    for g in golden_set():
        if not isinstance(g, tuple) and g.name == name:
            return tree_digest(g.image_chunks()).hex()
    raise SystemExit("no golden file " + name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--check", metavar="DIR")
    ap.add_argument("--renote", nargs=2, metavar=("NAME", "NOTES_JSON"))
    ap.add_argument("--remanifest", nargs=2, metavar=("NAME", "MANIFEST_BIN"))
    ap.add_argument("--digest", metavar="NAME")
    a = ap.parse_args()
    if a.digest:
        print(image_digest(a.digest))
        return 0
    if a.renote or a.remanifest:
        name = (a.renote or a.remanifest)[0]
        notes = raw = None
        if a.renote:
            with open(a.renote[1], encoding="utf-8") as f:
                notes = json.load(f)
        if a.remanifest:
            with open(a.remanifest[1], "rb") as f:
                raw = f.read()
        with open(a.out, "wb") as f:
            f.write(renote(name, notes, raw))
        return 0
    files = build()
    if a.check:
        bad = 0
        for name, data in sorted(files.items()):
            path = os.path.join(a.check, name)
            try:
                with open(path, "rb") as f:
                    old = f.read()
            except OSError as e:
                print("%s: %s" % (name, e), file=sys.stderr)
                bad += 1
                continue
            if old != data:
                print("%s: differs from what mkgolden.py writes" % name, file=sys.stderr)
                bad += 1
        return 1 if bad else 0
    os.makedirs(a.out, exist_ok=True)
    for name, data in sorted(files.items()):
        with open(os.path.join(a.out, name), "wb") as f:
            f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())

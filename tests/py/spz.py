#!/usr/bin/env python3
# spz.py: take a spigz file apart (doc/FORMAT.md) and forge variants of it.
#   spz.py info GZ            sizes, then one line per piece
#   spz.py targets GZ         "OFFSET NAME" for the byte-corruption tests
#   spz.py corrupt GZ DIR     DIR/N.gz: GZ with one of those bytes changed;
#                             DIR/list: "N NAME=VALUE"
#   spz.py forge GZ DIR       DIR/NAME.gz for each forged index, and DIR/list
#                             with "NAME KIND" (KIND good: the index is valid
#                             and must be used; bad: it must be refused;
#                             either: refused or not seen; plain: not a
#                             spigz file, no warning)
#   spz.py forge_consistent GZ DIR   self-consistent forged indexes (see there)
import copy, os, struct, sys, zlib
FOOT = 78
MHDR = bytes([0x1F, 0x8B, 8, 4, 0, 0, 0, 0, 0, 0xFF])
MEND = bytes([3, 0]) + bytes(8)

def leb(v, pad=0):
    out = bytearray()
    while True:
        b, v = v & 0x7F, v >> 7
        if v or pad:
            out.append(b | 0x80)
            if not v:
                pad -= 1
        else:
            out.append(b)
            return bytes(out)

def unleb(p, i):
    v = s = 0
    while True:
        b = p[i]
        i += 1
        v |= (b & 0x7F) << s
        s += 7
        if not b & 0x80:
            return v, i

class Spz:
    def __init__(self, d):
        self.d = d
        f = d[-FOOT:]
        if len(d) < FOOT or f[:10] != MHDR or f[12:14] != b"SF":
            sys.exit("spz.py: no spigz footer")
        (self.version, self.flags, self.reserved, self.total, self.data_len,
         self.header_len, self.index_len, self.npieces, self.pcrc,
         self.fcrc) = struct.unpack("<BBHQQQQQII", f[16:68])
        self.members, payload = [], bytearray()
        pos, end = self.data_len, self.data_len + self.index_len
        while pos < end:
            m = struct.unpack("<H", d[pos + 14:pos + 16])[0]
            self.members.append((pos, m))
            payload += d[pos + 16:pos + 16 + m]
            pos += 26 + m
        self.payload = bytes(payload)
        self.pieces, i, uoff, coff = [], 0, 0, 0
        while i < len(payload) and len(self.pieces) < self.npieces:
            r0 = i
            h, i = unleb(payload, i)
            c, i = unleb(payload, i)
            crc = None
            if h & 1:
                crc = struct.unpack("<I", payload[i:i + 4])[0]
                i += 4
            self.pieces.append(dict(data=h & 1, ulen=h >> 1, clen=c, crc=crc, roff=r0,
                                    uoff=uoff, foff=self.header_len + coff))
            uoff += h >> 1
            coff += c
        # what follows the records (bad ranges, notes, the manifest: the
        # footer's flags say which), kept as it is by rebuild()
        self.tail = bytes(payload[i:])
        self.data = d[:self.data_len]

    def poff(self, k):
        """The file offset of payload byte k."""
        base = 0
        for pos, m in self.members:
            if k < base + m:
                return pos + 16 + k - base
            base += m
        raise IndexError(k)

def records(recs):
    out = bytearray()
    for r in recs:
        out += leb(r["ulen"] * 2 + r["data"], r.get("hpad", 0)) + leb(r["clen"], r.get("cpad", 0))
        if r["data"]:
            out += struct.pack("<I", r["crc"])
    return bytes(out)

def member(chunk, xlen=None, mlen=None, hdr=MHDR, end=MEND, sub=b"SI", extra=b""):
    m = len(chunk)
    return (hdr + struct.pack("<H", m + 4 + len(extra) if xlen is None else xlen) + sub
            + struct.pack("<H", m if mlen is None else mlen) + chunk + extra + end)

def members(payload, split=None):
    if split is None:
        split, n = [], len(payload)
        while n > 0:
            split.append(min(n, 65531))
            n -= split[-1]
    out, p = b"", 0
    for m in split:
        out += member(payload[p:p + m])
        p += m
    assert p == len(payload)
    return out

def footer(total, data_len, header_len, index_len, npieces, pcrc, version=1, flags=0,
           reserved=0, fcrc=None):
    body = struct.pack("<BBHQQQQQI", version, flags, reserved, total, data_len, header_len,
                       index_len, npieces, pcrc)
    return (MHDR + struct.pack("<H2sH", 56, b"SF", 52) + body
            + struct.pack("<I", zlib.crc32(body) if fcrc is None else fcrc) + MEND)

def rebuild(s, recs=None, payload=None, idx=None, data=None, **fo):
    """s with other records, payload, index members, data member or footer
    fields; the checksums are recomputed unless given.  What follows the
    records (the manifest) and the footer's flags stay s's."""
    if payload is None:
        payload = records(s.pieces if recs is None else recs) + s.tail
    if idx is None:
        idx = members(payload)
    f = dict(total=s.total, data_len=s.data_len, header_len=s.header_len, index_len=len(idx),
             npieces=s.npieces if recs is None else len(recs), pcrc=zlib.crc32(payload),
             flags=s.flags)
    f.update(fo)
    return (s.data if data is None else data) + idx + footer(**f)

def cmd_info(path):
    s = Spz(open(path, "rb").read())
    print("total=%d data_len=%d header_len=%d index_len=%d pieces=%d members=%d size=%d" % (
        s.total, s.data_len, s.header_len, s.index_len, s.npieces, len(s.members), len(s.d)))
    for k, p in enumerate(s.pieces):
        print("piece %d %s ulen=%d clen=%d foff=%d uoff=%d" % (
            k, "data" if p["data"] else "zero", p["ulen"], p["clen"], p["foff"], p["uoff"]))

def cmd_targets(path):
    s = Spz(open(path, "rb").read())
    n = len(s.d)
    names = {0: "footer-magic", 2: "footer-CM", 3: "footer-FLG", 4: "footer-MTIME",
             8: "footer-XFL", 9: "footer-OS", 10: "footer-XLEN", 12: "footer-SF",
             14: "footer-LEN", 16: "footer-version", 17: "footer-flags",
             18: "footer-reserved", 20: "footer-total", 28: "footer-data_len",
             36: "footer-header_len", 44: "footer-index_len", 52: "footer-pieces",
             60: "footer-payload_crc", 64: "footer-footer_crc", 68: "footer-03-00",
             70: "footer-CRC32", 74: "footer-ISIZE"}
    name = "footer"
    for i in range(FOOT):
        name = names.get(i, name)
        print(n - FOOT + i, "%s+%d" % (name, i))
    for j, (pos, m) in enumerate(s.members):
        for i, what in [(0, "magic"), (1, "magic"), (2, "CM"), (3, "FLG"), (4, "MTIME"),
                        (8, "XFL"), (9, "OS"), (10, "XLEN"), (11, "XLEN-high"), (12, "SI"),
                        (13, "SI"), (14, "LEN"), (15, "LEN-high")]:
            print(pos + i, "index%d-%s+%d" % (j, what, i))
        for k in sorted({0, 1, m // 3, m // 2, m - 5, m - 1}):
            if 0 <= k < m:
                print(pos + 16 + k, "index%d-payload+%d" % (j, k))
        for i in range(10):
            print(pos + 16 + m + i, "index%d-%s+%d" % (j, "03-00" if i < 2 else "CRC-ISIZE", i))
    data = [p for p in s.pieces if p["data"] and p["clen"] > 64]
    zero = [p for p in s.pieces if not p["data"] and p["clen"] > 64]
    # the records of a data and a zero piece: h, clen, the CRC
    for what, p in (("data", data[0]), ("zero", zero[0])):
        r, a = p["roff"], len(leb(p["ulen"] * 2 + p["data"]))
        print(s.poff(r), "record-%s-h" % what)
        print(s.poff(r + a), "record-%s-clen" % what)
        if p["data"]:
            print(s.poff(r + a + len(leb(p["clen"])) + 2), "record-data-crc")
    for what, p in (("data", data[0]), ("zero", zero[0])):
        a, c = p["foff"], p["clen"]
        for i in sorted({0, 1, 5, 13, c // 2, c - 9, c - 6, c - 5, c - 4, c - 1}):
            print(a + i, "%s-piece@%d+%d" % (what, a, i))
    print(s.data_len - 10, "data-member-03-00")
    print(s.data_len - 8, "data-member-CRC32")
    print(s.data_len - 4, "data-member-ISIZE")
    print(3, "data-member-FLG")
    print(4, "data-member-MTIME")

def cmd_forge(path, out):
    s = Spz(open(path, "rb").read())
    content = zlib.decompressobj(31).decompress(s.data)
    lst = []

    def w(name, kind, data):
        with open(os.path.join(out, name + ".gz"), "wb") as f:
            f.write(data)
        lst.append("%s %s" % (name, kind))

    def recs(fn):
        r = copy.deepcopy(s.pieces)
        fn(r)
        return r

    P = s.pieces
    kd = [k for k, p in enumerate(P) if p["data"]]
    kz = [k for k, p in enumerate(P) if not p["data"]]
    pair = next(k for k in kd if k + 1 in kd)          # two data pieces in a row
    dz = next(k for k in kz if k + 1 in kd)            # a zero piece, then data
    L = len(s.payload)
    # Valid indexes that are not what spigz writes: they must be used.
    w("same", "good", rebuild(s))
    w("split-1", "good", rebuild(s, idx=members(s.payload, [1] * L)))
    w("split-odd", "good", rebuild(s, idx=members(s.payload, [1, 2, 3, L - 6])))
    def merge(r, k, data=True):
        a, b = r[k], r[k + 1]
        a["ulen"] += b["ulen"]
        a["clen"] += b["clen"]
        a["data"] = 1
        a["crc"] = zlib.crc32(content[a["uoff"]:a["uoff"] + a["ulen"]])
        del r[k + 1]
    w("merge-data", "good", rebuild(s, recs=recs(lambda r: merge(r, pair))))
    w("merge-zero-data", "good", rebuild(s, recs=recs(lambda r: merge(r, dz))))
    def z2d(r):
        r[kz[0]]["data"] = 1
        r[kz[0]]["crc"] = zlib.crc32(bytes(r[kz[0]]["ulen"]))
    w("zero-as-data", "good", rebuild(s, recs=recs(z2d)))
    # Footer fields, its checksum recomputed: each must be checked for itself.
    for f, vals in [("version", [0, 2, 255]), ("flags", [1, 128]), ("reserved", [1, 256]),
                    ("total", [s.total + 1, s.total - 1, s.total + (1 << 32), 0, (1 << 64) - 1]),
                    ("data_len", [s.data_len + 1, s.data_len - 1, 0, (1 << 64) - 1,
                                  (1 << 64) - s.index_len - FOOT]),
                    ("header_len", [s.header_len + 1, s.header_len - 1, 0, 9, s.data_len,
                                    (1 << 64) - 1]),
                    ("index_len", [s.index_len + 1, s.index_len - 1, 0, (1 << 64) - 1,
                                   (1 << 64) - s.data_len - FOOT]),
                    ("npieces", [s.npieces + 1, s.npieces - 1, 0, 1 << 40, (1 << 64) - 1]),
                    ("pcrc", [s.pcrc ^ 1])]:
        for v in vals:
            fo = dict(data_len=s.data_len, index_len=s.index_len)
            fo[f] = v
            # Sizes adding up to less than the file describe a spigz file
            # after other members (cat a.gz b.gz): it may be read as such.
            short = fo["data_len"] + fo["index_len"] + FOOT < len(s.d)
            w("footer-%s=%d" % (f, v), "either" if short else "bad", rebuild(s, **{f: v}))
    w("footer-crc-only", "bad", rebuild(s, fcrc=zlib.crc32(b"x")))
    # Records, both checksums recomputed.
    def setk(k, key, v):
        def fn(r):
            r[k][key] = v(r[k][key]) if callable(v) else v
        return fn
    for name, fn in [
            ("ulen+1", setk(kd[0], "ulen", lambda x: x + 1)),
            ("ulen-1", setk(kd[0], "ulen", lambda x: x - 1)),
            ("zero-ulen+1", setk(kz[0], "ulen", lambda x: x + 1)),
            ("zero-ulen+4G", setk(kz[0], "ulen", lambda x: x + (1 << 32))),
            ("ulen=0", setk(kz[0], "ulen", 0)),
            ("ulen=2^40+1", setk(kz[0], "ulen", (1 << 40) + 1)),
            ("clen=0", setk(kd[0], "clen", 0)),
            ("clen+1", setk(kd[-1], "clen", lambda x: x + 1)),
            ("crc^1", setk(kd[0], "crc", lambda x: x ^ 1)),
            ("data-as-zero", setk(kd[0], "data", 0)),
            ("h-not-minimal", setk(kd[0], "hpad", 1)),
            ("clen-not-minimal", setk(kz[0], "cpad", 2))]:
        w("rec-" + name, "bad", rebuild(s, recs=recs(fn)))
    def shift(key, k):
        def fn(r):
            r[k][key] += 1
            r[k + 1][key] -= 1
        return fn
    # The sums stay right: only the pieces' own checks can see these.
    w("rec-clen-shift-data", "bad", rebuild(s, recs=recs(shift("clen", pair))))
    w("rec-clen-shift-zero", "bad", rebuild(s, recs=recs(shift("clen", dz))))
    w("rec-ulen-shift", "bad", rebuild(s, recs=recs(shift("ulen", pair))))
    def swap(r):
        r[pair], r[pair + 1] = r[pair + 1], r[pair]
    w("rec-swap", "bad", rebuild(s, recs=recs(swap)))
    w("rec-extra", "bad", rebuild(s, recs=P + [dict(data=0, ulen=4096, clen=30)],
                                  total=s.total + 4096))
    w("rec-missing", "bad", rebuild(s, recs=P[:-1]))
    w("rec-trailing-byte", "bad", rebuild(s, payload=s.payload + b"\0"))
    w("rec-cut", "bad", rebuild(s, payload=s.payload[:-1]))
    w("rec-leb-11-bytes", "bad", rebuild(s, payload=b"\xff" * 10 + b"\x01" + s.payload))
    # Index members that gzip reads as empty members but are not as FORMAT.md says.
    pl = s.payload
    w("member-len-0", "bad", rebuild(s, idx=member(b"") + members(pl)))
    w("member-xlen-more", "bad", rebuild(s, idx=member(pl, extra=b"ZZ\x00\x00")))
    w("member-mtime", "bad", rebuild(s, idx=member(pl, hdr=MHDR[:4] + b"\1" + MHDR[5:])))
    w("member-os", "bad", rebuild(s, idx=member(pl, hdr=MHDR[:9] + b"\3")))
    w("member-sub-id", "bad", rebuild(s, idx=member(pl, sub=b"SJ")))
    w("member-stored-end", "bad",
      rebuild(s, idx=member(pl, end=b"\x01\x00\x00\xff\xff" + bytes(8))))
    w("member-not-empty", "bad",
      rebuild(s, idx=member(pl, end=zlib.compress(b"x")[2:-4] + struct.pack(
          "<II", zlib.crc32(b"x"), 1))))
    w("member-fname", "bad",
      rebuild(s, idx=MHDR[:3] + b"\x0c" + MHDR[4:] + struct.pack("<H2sH", len(pl) + 4, b"SI",
                                                                    len(pl)) + pl + b"n\0" + MEND))
    # A data member whose header is not the one the footer describes.
    hdr = s.data[:s.header_len]
    nh = bytes([hdr[0], hdr[1], hdr[2], hdr[3] | 16]) + hdr[4:] + b"comment\0"
    w("data-header-longer", "bad", rebuild(s, data=nh + s.data[s.header_len:],
                                           data_len=s.data_len + 8))
    # Another gzip member before the spigz file (cat a.gz b.gz): decoded in turn.
    w("member-before", "plain", member(b"", extra=b"") + s.d)
    with open(os.path.join(out, "list"), "w") as f:
        f.write("\n".join(lst) + "\n")

def crc_combine(c1, c2, n):
    """zlib's crc32_combine: the CRC-32 of A + B from crc(A), crc(B), len(B)."""
    z = bytes(n)
    return zlib.crc32(z, c1) ^ zlib.crc32(z, 0) ^ c2

def crc_of(recs, upto=None):
    c = 0
    for r in recs[:upto]:
        c = crc_combine(c, r["crc"] if r["data"] else zlib.crc32(bytes(r["ulen"])), r["ulen"])
    return c

def fix_crc(recs, j, want):
    """Choose data piece j's CRC so the combination of all is `want`: what a
    forger does to make an index self-consistent (FORMAT.md check 6).  The
    combination is affine in crc_j over GF(2): solve bit by bit."""
    assert recs[j]["data"]
    recs[j]["crc"] = 0
    base = crc_of(recs)
    basis = []                          # (value, which crc_j bits make it)
    for bit in range(32):
        recs[j]["crc"] = 1 << bit
        v, tag = crc_of(recs) ^ base, 1 << bit
        for bv, bt in basis:
            if v ^ bv < v:
                v, tag = v ^ bv, tag ^ bt
        if v:
            basis.append((v, tag))
            basis.sort(reverse=True)
    target, x = want ^ base, 0
    for bv, bt in basis:
        if target ^ bv < target:
            target, x = target ^ bv, x ^ bt
    assert target == 0, "no solution"
    recs[j]["crc"] = x
    assert crc_of(recs) == want

def cmd_forge_consistent(path, out):
    """Indexes a forger made self-consistent (every checksum right, the
    pieces' CRC-32s fixed up to match the member's), which only the pieces'
    own checks (FORMAT.md 7-8) can refuse.  out/NAME.gz and out/list with
    "NAME FIRST_MISPLACED_OFFSET LENGTH": where the forged index puts the
    first misplaced piece, and how much content it misplaces.  move: one
    piece claims d bytes more, a later one d fewer; swap (when two data
    pieces not adjacent differ in length): they swap their lengths."""
    s = Spz(open(path, "rb").read())
    P = s.pieces
    want = crc_of(P)
    lst = []
    # A data piece k that claims d more bytes than it holds, and a later data
    # piece j that claims d fewer: every piece between them sits d bytes off.
    kd = [k for k, p in enumerate(P) if p["data"]]
    for k in kd:
        js = [j for j in kd if j >= k + 2 and P[j]["ulen"] > 8192]
        if js:
            break
    j = js[0]
    d = P[j]["ulen"] // 2
    r = copy.deepcopy(P)
    r[k]["ulen"] += d
    r[j]["ulen"] -= d
    fix_crc(r, j, want)
    with open(os.path.join(out, "move.gz"), "wb") as f:
        f.write(rebuild(s, recs=r))
    lst.append("move %d %d" % (P[k + 1]["uoff"] + d, P[k + 1]["ulen"]))
    # Two data pieces k < j, not adjacent, of different lengths, that swap
    # them: every piece between them sits ulen_j - ulen_k bytes off.
    pairs = [(k, j) for k in kd for j in kd
             if j >= k + 2 and P[k]["ulen"] != P[j]["ulen"]]
    if pairs:
        k, j = pairs[0]
        r = copy.deepcopy(P)
        r[k]["ulen"], r[j]["ulen"] = P[j]["ulen"], P[k]["ulen"]
        fix_crc(r, j, want)
        with open(os.path.join(out, "swap.gz"), "wb") as f:
            f.write(rebuild(s, recs=r))
        lst.append("swap %d %d" % (P[k]["uoff"] + P[j]["ulen"], P[j]["uoff"] - P[k + 1]["uoff"]))
    with open(os.path.join(out, "list"), "w") as f:
        f.write("\n".join(lst) + "\n")

def cmd_corrupt(path, out):
    """out/N.gz for each target offset and new value; out/list: "N NAME"."""
    d = open(path, "rb").read()
    import io, contextlib
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        cmd_targets(path)
    lst, n = [], 0
    for line in buf.getvalue().splitlines():
        off, name = line.split(" ", 1)
        off = int(off)
        vals = [d[off] ^ 1, d[off] ^ 0xFF, 0]
        if name.startswith("footer") and not name.endswith(("+0", "+1", "+16", "+17", "+18",
                                                             "+20", "+27", "+28", "+35", "+36",
                                                             "+44", "+52", "+60", "+64", "+68")):
            vals = vals[:1]         # the other bytes of a footer field: one change
        for v in dict.fromkeys(vals):
            if v == d[off]:
                continue
            n += 1
            with open(os.path.join(out, "%d.gz" % n), "wb") as f:
                f.write(d[:off] + bytes([v]) + d[off + 1:])
            lst.append("%d %s=%02x" % (n, name, v))
    with open(os.path.join(out, "list"), "w") as f:
        f.write("\n".join(lst) + "\n")

if __name__ == "__main__":
    globals()["cmd_" + sys.argv[1]](*sys.argv[2:])

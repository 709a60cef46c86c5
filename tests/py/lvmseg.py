#!/usr/bin/env python3
"""lvmseg.py — LVM2 for tests/lvm.sh, sharing no code with spigz: where a
logical volume's bytes lie on its physical volume (from the VG's metadata as
LVM's own vgcfgbackup writes it), the unallocated extents, byte comparisons
of the restored data, and forged metadata (LVM's on-disk label, metadata
area headers and checksums, read and written here from the format).

Offsets and sizes are bytes; PVOFF is where the PV starts in IMAGE.

  lvmseg.py segs VGTXT LV               LV's pieces: "LV_OFF PV_OFF LEN" a line
  lvmseg.py extract IMAGE PVOFF VGTXT LV OUT
                                        OUT: LV's bytes, read through its segments
  lvmseg.py insert IMAGE PVOFF VGTXT LV IN
                                        IN's bytes written to LV's extents in IMAGE
  lvmseg.py place VGTXT LV BASE         stdin: "OFF LEN" ranges of LV; prints
                                        them where they lie in an image whose
                                        PV starts at BASE (split at segments)
  lvmseg.py unalloc VGTXT               the PV's unallocated extents: "OFF LEN"
                                        (from the PV's start) a line
  lvmseg.py nonzero IMAGE BASE          stdin: "OFF LEN" ranges (from BASE);
                                        prints "NONZERO TOTAL" bytes in them
  lvmseg.py freecmp ORIG REST           stdin: ORIG's free "OFF LEN" ranges;
                                        prints "USED_DIFF FREE_NONZERO FREE_STALE":
                                        bytes outside them where REST differs
                                        from ORIG, nonzero bytes of REST in
                                        them, nonzero bytes of ORIG in them
  lvmseg.py expect ORIG REST ZEROS SKIPS
                                        prints the bytes of REST that are not
                                        as expected: zeros in the ZEROS file's
                                        "OFF LEN" ranges, ORIG's elsewhere,
                                        anything in the SKIPS file's ranges
  lvmseg.py covers ORIG REST            prints the 512-byte sectors of REST
                                        that are neither zero nor ORIG's, and
                                        those that are zero where ORIG's are not
  lvmseg.py mda IMAGE PVOFF             the label and each metadata area: its
                                        text's place, size, checksum ok or BAD
  lvmseg.py text IMAGE PVOFF AREA       metadata area AREA's (0, 1) text
  lvmseg.py retext IMAGE PVOFF AREA OLD NEW
                                        metadata area AREA (0, 1): the first OLD
                                        in its text becomes NEW, the text's and
                                        the header's checksums made right
  lvmseg.py flip IMAGE PVOFF AREA       one byte of the text in area AREA
                                        changed, its checksum left as it was
"""
import re
import struct
import sys
import zlib

SECTOR = 512
MDA_MAGIC = b" LVM2 x[5A%r0N*>"
CRC_INIT = 0xF597A6CF


def lvmcrc(data, init=CRC_INIT):
    """LVM2's calc_crc: a CRC-32 whose register starts at init, not inverted."""
    return zlib.crc32(data, init ^ 0xFFFFFFFF) ^ 0xFFFFFFFF


# ---- the metadata text (LVM's config syntax) ----

TOKEN = re.compile(r'\s+|#[^\n]*|"(?:[^"\\]|\\.)*"|[{}\[\]=,]|[^\s{}\[\]=,#"]+')


def tokens(text):
    pos = 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            raise SystemExit(f"lvmseg.py: cannot parse the metadata at {pos}")
        pos = m.end()
        t = m.group()
        if t[0].isspace() or t[0] == "#":
            continue
        yield t


def value(t):
    if t[0] == '"':
        return t[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    try:
        return int(t)
    except ValueError:
        return t


def parse(text):
    """The text as nested dicts: sections are dicts, arrays lists."""
    toks = list(tokens(text))
    i = 0

    def section():
        nonlocal i
        d = {}
        while i < len(toks) and toks[i] != "}":
            name = toks[i]
            i += 1
            if toks[i] == "{":
                i += 1
                d[name] = section()
                i += 1  # }
            elif toks[i] == "=":
                i += 1
                if toks[i] == "[":
                    i += 1
                    arr = []
                    while toks[i] != "]":
                        if toks[i] != ",":
                            arr.append(value(toks[i]))
                        i += 1
                    i += 1
                    d[name] = arr
                else:
                    d[name] = value(toks[i])
                    i += 1
            else:
                raise SystemExit(f"lvmseg.py: unexpected {toks[i]!r} after {name!r}")
        return d

    return section()


def the_vg(path):
    top = parse(open(path).read())
    for name, v in top.items():
        if isinstance(v, dict) and "physical_volumes" in v:
            return name, v
    raise SystemExit(f"lvmseg.py: no volume group in {path}")


def the_pv(vg):
    pvs = vg["physical_volumes"]
    if len(pvs) != 1:
        raise SystemExit("lvmseg.py: one PV only")
    name, pv = next(iter(pvs.items()))
    return name, pv


def segments(lv):
    return [s for k, s in sorted(lv.items(), key=lambda kv: kv[0])
            if k.startswith("segment") and isinstance(s, dict)]


def lv_pieces(path, lvname):
    """LV's (lv_off, pv_off, len): its linear segments, in logical order."""
    _, vg = the_vg(path)
    pvname, pv = the_pv(vg)
    ext = vg["extent_size"] * SECTOR
    base = pv["pe_start"] * SECTOR
    lv = vg["logical_volumes"].get(lvname)
    if lv is None:
        raise SystemExit(f"lvmseg.py: no LV {lvname} in {path}")
    out = []
    for s in sorted(segments(lv), key=lambda s: s["start_extent"]):
        if s["type"] != "striped" or s["stripe_count"] != 1 or s["stripes"][0] != pvname:
            raise SystemExit(f"lvmseg.py: {lvname}: a segment that is not linear on {pvname}")
        out.append((s["start_extent"] * ext, base + s["stripes"][1] * ext, s["extent_count"] * ext))
    return out


def unalloc(path):
    _, vg = the_vg(path)
    pvname, pv = the_pv(vg)
    ext = vg["extent_size"] * SECTOR
    base = pv["pe_start"] * SECTOR
    used = [False] * pv["pe_count"]
    for lv in vg.get("logical_volumes", {}).values():
        for s in segments(lv):
            if s["type"] != "striped":
                continue
            n = s["extent_count"] // s["stripe_count"]
            st = s["stripes"]
            for j in range(0, len(st), 2):
                if st[j] == pvname:
                    for pe in range(st[j + 1], st[j + 1] + n):
                        used[pe] = True
    out, start = [], None
    for pe, u in enumerate(used + [True]):
        if not u and start is None:
            start = pe
        elif u and start is not None:
            out.append((base + start * ext, (pe - start) * ext))
            start = None
    return out


# ---- bytes ----

def ndiff(a, b):
    """How many bytes of a and b (the same length) differ."""
    if a == b:
        return 0
    x = int.from_bytes(a, "little") ^ int.from_bytes(b, "little")
    return len(a) - x.to_bytes(len(a), "little").count(0)


def read_ranges():
    rs = []
    for line in sys.stdin:
        f = line.split()
        if f:
            rs.append((int(f[0]), int(f[1])))
    return sorted(rs)


def chunks(f, off, length, step=1 << 20):
    f.seek(off)
    while length > 0:
        d = f.read(min(step, length))
        if not d:
            raise SystemExit("lvmseg.py: a range past the end of the file")
        yield d
        length -= len(d)


def cmd_nonzero(image, base):
    nz = total = 0
    with open(image, "rb") as f:
        for off, ln in read_ranges():
            for d in chunks(f, base + off, ln):
                nz += len(d) - d.count(0)
                total += len(d)
    print(nz, total)


def cmd_freecmp(orig, rest):
    free = read_ranges()
    with open(orig, "rb") as fo, open(rest, "rb") as fr:
        size = fo.seek(0, 2)
        if fr.seek(0, 2) != size:
            raise SystemExit("lvmseg.py: the two files' sizes differ")
        used, pos = [], 0
        for off, ln in free:
            if off > pos:
                used.append((pos, off - pos))
            pos = max(pos, off + ln)
        if pos < size:
            used.append((pos, size - pos))
        diff = fnz = stale = 0
        for off, ln in used:
            for a, b in zip(chunks(fo, off, ln), chunks(fr, off, ln)):
                diff += ndiff(a, b)
        for off, ln in free:
            for a, b in zip(chunks(fo, off, ln), chunks(fr, off, ln)):
                stale += len(a) - a.count(0)
                fnz += len(b) - b.count(0)
    print(diff, fnz, stale)


def place(path, lvname, base):
    pieces = lv_pieces(path, lvname)
    for off, ln in read_ranges():
        end = off + ln
        for loff, poff, pln in pieces:
            a, b = max(off, loff), min(end, loff + pln)
            if a < b:
                print(base + poff + a - loff, b - a)


def load_ranges(path):
    rs = []
    for line in open(path):
        f = line.split()
        if f:
            rs.append((int(f[0]), int(f[1])))
    return rs


def cmd_expect(orig, rest, zeros, skips):
    # the file cut at every range's ends; each piece zero, skip or keep
    kind = {}
    cuts = set()
    for k, path in (("zero", zeros), ("skip", skips)):
        for off, ln in load_ranges(path):
            cuts.update((off, off + ln))
            kind.setdefault(k, []).append((off, off + ln))
    wrong = 0
    with open(orig, "rb") as fo, open(rest, "rb") as fr:
        size = fo.seek(0, 2)
        if fr.seek(0, 2) != size:
            raise SystemExit("lvmseg.py: the two files' sizes differ")
        cuts.update((0, size))
        pts = sorted(c for c in cuts if 0 <= c <= size)
        for a, b in zip(pts, pts[1:]):
            inside = lambda k: any(s <= a and b <= e for s, e in kind.get(k, []))
            if inside("skip"):
                continue
            z = inside("zero")
            for x, y in zip(chunks(fo, a, b - a), chunks(fr, a, b - a)):
                wrong += len(y) - y.count(0) if z else ndiff(x, y)
    print(wrong)


def cmd_covers(orig, rest):
    bad = zeroed = 0
    zero = bytes(SECTOR)
    with open(orig, "rb") as fo, open(rest, "rb") as fr:
        size = fo.seek(0, 2)
        if fr.seek(0, 2) != size:
            raise SystemExit("lvmseg.py: the two files' sizes differ")
        for a, b in zip(chunks(fo, 0, size), chunks(fr, 0, size)):
            if a == b:
                continue
            for i in range(0, len(a), SECTOR):
                x, y = a[i:i + SECTOR], b[i:i + SECTOR]
                if y == zero:
                    zeroed += x != zero
                elif x != y:
                    bad += 1
    print(bad, zeroed)


# ---- the on-disk label and metadata areas ----

def label(f, pvoff):
    for s in range(4):
        f.seek(pvoff + s * SECTOR)
        sec = f.read(SECTOR)
        if sec[:8] == b"LABELONE" and sec[24:32] == b"LVM2 001":
            _, crc, off = struct.unpack_from("<QII", sec, 8)
            ok = lvmcrc(sec[20:]) == crc
            ph = off
            uuid = sec[ph:ph + 32]
            dev_size, = struct.unpack_from("<Q", sec, ph + 32)
            p = ph + 40
            lists = []
            for _ in range(2):
                areas = []
                while True:
                    o, n = struct.unpack_from("<QQ", sec, p)
                    p += 16
                    if o == 0 and n == 0:
                        break
                    areas.append((o, n))
                lists.append(areas)
            return {"sector": s, "crc_ok": ok, "uuid": uuid.decode(), "dev_size": dev_size,
                    "data": lists[0], "mdas": lists[1]}
    raise SystemExit("lvmseg.py: no LVM2 label")


def mda_read(f, pvoff, start):
    """The metadata area at start (from the PV's): its header and its first
    text's (offset from the area's start, size, checksum)."""
    f.seek(pvoff + start)
    h = f.read(SECTOR)
    crc, = struct.unpack_from("<I", h, 0)
    if h[4:20] != MDA_MAGIC:
        raise SystemExit(f"lvmseg.py: no metadata area header at {start}")
    version, hstart, hsize = struct.unpack_from("<IQQ", h, 20)
    off, size, tcrc, flags = struct.unpack_from("<QQII", h, 40)
    return {"header": h, "crc_ok": lvmcrc(h[4:]) == crc, "start": hstart, "size": hsize,
            "text_off": off, "text_size": size, "text_crc": tcrc, "flags": flags}


def text_read(f, pvoff, m):
    if m["text_off"] + m["text_size"] > m["size"]:
        raise SystemExit("lvmseg.py: the text wraps around its area (not handled)")
    f.seek(pvoff + m["start"] + m["text_off"])
    return f.read(m["text_size"])


def cmd_mda(image, pvoff):
    with open(image, "rb") as f:
        lb = label(f, pvoff)
        print(f"label sector {lb['sector']} crc {'ok' if lb['crc_ok'] else 'BAD'} "
              f"dev_size {lb['dev_size']} data {lb['data']} mdas {lb['mdas']}")
        for i, (start, _) in enumerate(lb["mdas"]):
            m = mda_read(f, pvoff, start)
            t = text_read(f, pvoff, m)
            seq = re.search(rb"seqno = (\d+)", t)
            print(f"mda {i} at {m['start']} size {m['size']} header crc "
                  f"{'ok' if m['crc_ok'] else 'BAD'} text at {m['text_off']} size "
                  f"{m['text_size']} crc {'ok' if lvmcrc(t) == m['text_crc'] else 'BAD'} "
                  f"seqno {int(seq.group(1)) if seq else '?'}")


def area(f, pvoff, n):
    lb = label(f, pvoff)
    if n >= len(lb["mdas"]):
        raise SystemExit(f"lvmseg.py: the PV has {len(lb['mdas'])} metadata areas")
    m = mda_read(f, pvoff, lb["mdas"][n][0])
    return m, text_read(f, pvoff, m)


def cmd_retext(image, pvoff, n, old, new):
    with open(image, "r+b") as f:
        m, t = area(f, pvoff, n)
        if old.encode() not in t:
            raise SystemExit(f"lvmseg.py: {old!r} is not in area {n}'s text")
        t = t.replace(old.encode(), new.encode(), 1)
        if m["text_off"] + len(t) > m["size"]:
            raise SystemExit("lvmseg.py: the new text does not fit")
        f.seek(pvoff + m["start"] + m["text_off"])
        f.write(t)
        h = bytearray(m["header"])
        struct.pack_into("<QQI", h, 40, m["text_off"], len(t), lvmcrc(t))
        struct.pack_into("<I", h, 0, lvmcrc(bytes(h[4:])))
        f.seek(pvoff + m["start"])
        f.write(h)


def cmd_flip(image, pvoff, n):
    with open(image, "r+b") as f:
        m, t = area(f, pvoff, n)
        i = t.index(b"logical_volumes")  # a letter of a keyword: the text's checksum breaks
        f.seek(pvoff + m["start"] + m["text_off"] + i)
        f.write(b"L")


def main(a):
    if not a:
        raise SystemExit(__doc__)
    c = a[0]
    if c == "segs":
        for p in lv_pieces(a[1], a[2]):
            print(*p)
    elif c in ("extract", "insert"):
        image, pvoff, txt, lv, other = a[1], int(a[2]), a[3], a[4], a[5]
        pieces = lv_pieces(txt, lv)
        with open(image, "rb" if c == "extract" else "r+b") as f, \
                open(other, "wb" if c == "extract" else "rb") as g:
            for loff, poff, ln in pieces:
                if c == "extract":
                    for d in chunks(f, pvoff + poff, ln):
                        g.write(d)
                else:
                    g.seek(loff)
                    d = g.read(ln)
                    if len(d) != ln:
                        raise SystemExit(f"lvmseg.py: {other} is smaller than {lv}")
                    f.seek(pvoff + poff)
                    f.write(d)
    elif c == "place":
        place(a[1], a[2], int(a[3]))
    elif c == "expect":
        cmd_expect(a[1], a[2], a[3], a[4])
    elif c == "unalloc":
        for p in unalloc(a[1]):
            print(*p)
    elif c == "nonzero":
        cmd_nonzero(a[1], int(a[2]))
    elif c == "freecmp":
        cmd_freecmp(a[1], a[2])
    elif c == "covers":
        cmd_covers(a[1], a[2])
    elif c == "mda":
        cmd_mda(a[1], int(a[2]))
    elif c == "text":
        with open(a[1], "rb") as f:
            sys.stdout.buffer.write(area(f, int(a[2]), int(a[3]))[1])
    elif c == "retext":
        cmd_retext(a[1], int(a[2]), int(a[3]), a[4], a[5])
    elif c == "flip":
        cmd_flip(a[1], int(a[2]), int(a[3]))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])

#!/usr/bin/env python3
"""fsfree.py — a second opinion on which bytes of a filesystem are free, for
tests/free.sh.  It shares no code with spigz: ext2/3/4 and NTFS are asked of
their own tools (dumpe2fs's "Free blocks", ntfscat's $Bitmap and ntfsinfo's
cluster size), FAT and exFAT are read here from Microsoft's specifications,
swap from mkswap's header.

  fsfree.py TYPE PART            the free byte ranges of PART, one "OFF LEN"
                                 a line (TYPE: ext4, ntfs, vfat, exfat, swap)
  fsfree.py expect DISK OUT TYPE@OFF+LEN...
                                 write OUT: DISK with the free ranges of each
                                 listed partition (bytes OFF..OFF+LEN of DISK)
                                 zeroed: what a restore of a --free=zero
                                 backup must give, byte for byte
"""
import os
import re
import struct
import subprocess
import sys
import tempfile


def ext4_free(path):
    out = subprocess.run(["dumpe2fs", path], capture_output=True, text=True, check=True).stdout
    bs = int(re.search(r"^Block size:\s+(\d+)", out, re.M).group(1))
    # with bigalloc, dumpe2fs lists free clusters by their first blocks:
    # "a-b" is the clusters from a's to b's, b's whole
    m = re.search(r"^Cluster size:\s+(\d+)", out, re.M)
    ratio = int(m.group(1)) // bs if m else 1
    ranges = []
    for line in out.splitlines():
        m = re.match(r"\s+Free blocks: (.*)", line)
        if not m or not m.group(1).strip():
            continue
        for part in m.group(1).split(","):
            a, _, b = part.strip().partition("-")
            a = int(a)
            b = int(b) if b else a
            ranges.append((a * bs, (b - a + ratio) * bs))
    return ranges


def bits_free(bitmap, nbits, unit, base):
    """Runs of clear bits of bitmap (LSB first) as byte ranges."""
    ranges, start = [], None
    for i in range(nbits):
        used = bitmap[i >> 3] >> (i & 7) & 1
        if not used and start is None:
            start = i
        elif used and start is not None:
            ranges.append((base + start * unit, (i - start) * unit))
            start = None
    if start is not None:
        ranges.append((base + start * unit, (nbits - start) * unit))
    return ranges


def ntfs_free(path):
    info = subprocess.run(["ntfsinfo", "-m", path], capture_output=True, text=True,
                          check=True).stdout
    cs = int(re.search(r"Cluster Size:\s+(\d+)", info).group(1))
    nc = int(re.search(r"Volume Size in Clusters:\s+(\d+)", info).group(1))
    bm = subprocess.run(["ntfscat", path, "$Bitmap"], capture_output=True, check=True).stdout
    return bits_free(bm, nc, cs, 0)


def le(b, off, n):
    return int.from_bytes(b[off:off + n], "little")


def fat_geo(d):
    """A FAT boot sector's geometry, in sectors (fatdamage.py uses it too)."""
    bps, spc, res, nfats = le(d, 11, 2), d[13], le(d, 14, 2), d[16]
    root_ents, tot = le(d, 17, 2), le(d, 19, 2) or le(d, 32, 4)
    fatsz = le(d, 22, 2) or le(d, 36, 4)
    root_sec = (root_ents * 32 + bps - 1) // bps
    data = res + nfats * fatsz + root_sec
    clusters = (tot - data) // spc
    bits = 12 if clusters < 4085 else 16 if clusters < 65525 else 32
    return dict(bps=bps, spc=spc, res=res, nfats=nfats, fatsz=fatsz, data=data,
                clusters=clusters, bits=bits, root=res + nfats * fatsz, root_ents=root_ents)


def vfat_free(path):
    with open(path, "rb") as f:
        d = f.read()
    g = fat_geo(d)
    bps, spc, res, nfats, fatsz = g["bps"], g["spc"], g["res"], g["nfats"], g["fatsz"]
    data, clusters, bits = g["data"], g["clusters"], g["bits"]
    fats = [d[(res + k * fatsz) * bps:(res + (k + 1) * fatsz) * bps] for k in range(nfats)]

    def entry(fat, n):
        if bits == 12:
            v = le(fat, n * 3 // 2, 2)
            return v >> 4 if n & 1 else v & 0xFFF
        if bits == 16:
            return le(fat, 2 * n, 2)
        return le(fat, 4 * n, 4) & 0x0FFFFFFF

    bitmap = bytearray((clusters + 7) // 8)
    for c in range(clusters):
        if any(entry(fat, c + 2) for fat in fats):
            bitmap[c >> 3] |= 1 << (c & 7)
    return bits_free(bitmap, clusters, spc * bps, data * bps)


def exfat_free(path):
    with open(path, "rb") as f:
        d = f.read()
    bps = 1 << d[108]
    cl = bps << d[109]
    fat = le(d, 80, 4) * bps
    heap = le(d, 88, 4) * bps
    count = le(d, 92, 4)
    root = le(d, 96, 4)

    def chain(c):
        seen = 0
        while 2 <= c < count + 2 and seen <= count:
            yield c
            c = le(d, fat + 4 * c, 4)
            seen += 1

    bm_first = bm_len = None
    for c in chain(root):
        clu = d[heap + (c - 2) * cl:heap + (c - 1) * cl]
        for i in range(0, cl, 32):
            if clu[i] == 0x81 and bm_first is None:
                bm_first, bm_len = le(clu, i + 20, 4), le(clu, i + 24, 8)
    bm = b"".join(d[heap + (c - 2) * cl:heap + (c - 1) * cl] for c in chain(bm_first))
    return bits_free(bm[:bm_len], count, cl, heap)


def swap_free(path):
    with open(path, "rb") as f:
        d = f.read(65536)
    for ps in (4096, 8192, 16384, 32768, 65536):
        if d[ps - 10:ps] == b"SWAPSPACE2":
            last = le(d, 1028, 4)
            return [(ps, last * ps)]
    raise SystemExit("fsfree.py: no swap header in " + path)


FREE = {"ext4": ext4_free, "ntfs": ntfs_free, "vfat": vfat_free, "exfat": exfat_free,
        "swap": swap_free}


def expect(disk, out, parts):
    with open(disk, "rb") as f:
        data = bytearray(f.read())
    for spec in parts:
        kind, _, rest = spec.partition("@")
        off, _, length = rest.partition("+")
        off, length = int(off), int(length)
        with tempfile.NamedTemporaryFile(dir=os.path.dirname(os.path.abspath(out))) as t:
            t.write(data[off:off + length])
            t.flush()
            for a, n in FREE[kind](t.name):
                assert a + n <= length, (spec, a, n)
                data[off + a:off + a + n] = bytes(n)
    with open(out, "wb") as f:
        f.write(data)


def main():
    if sys.argv[1] == "expect":
        expect(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        for a, n in FREE[sys.argv[1]](sys.argv[2]):
            print(a, n)


if __name__ == "__main__":
    main()

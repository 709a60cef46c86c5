#!/usr/bin/env python3
"""fatdamage.py — find where to damage a FAT or exFAT volume, for
tests/damaged_fat.sh.  It shares no code with spigz: the boot sectors are
read here from Microsoft's specifications, as tests/py/fsfree.py does.

  fatdamage.py fat-sector IMG mid|eoc
      a sector of the FAT (its index from the FAT's start) whose entries are
      those of live files: "mid", one holding entries that point on along a
      chain (zeroed, a chain breaks); "eoc", one whose entries are all 0 or
      end-of-chain marks, at least a third of them marks (zeroed, files of
      one cluster lose theirs from the FAT, nothing breaks)
  fatdamage.py fat-copies IMG SECTOR
      "OFF LEN" of that sector in each FAT copy, bytes, a line each
  fatdamage.py fat-crosslink IMG
      point the second file of the root directory with data at the first
      one's first cluster (FAT32): two chains claim one cluster
  fatdamage.py flip IMG OFF
      change the byte at OFF (every bit pattern to another)
  fatdamage.py undo HEALTHY DAMAGED RESTORED
      put HEALTHY's sectors back into RESTORED wherever DAMAGED differs
  fatdamage.py xf-bitmap IMG
      "OFF LEN" of the allocation bitmap's cluster with the most bits set
  fatdamage.py xf-file-entry IMG
      the byte offset of the first File entry (0x85) of the root directory
"""
import sys

from fsfree import fat_geo, le  # the oracle's reading of the boot sector


def fat_entry(d, g, n):
    fat = g["res"] * g["bps"]
    if g["bits"] == 12:
        v = le(d, fat + n * 3 // 2, 2)
        return v >> 4 if n & 1 else v & 0xFFF
    if g["bits"] == 16:
        return le(d, fat + 2 * n, 2)
    return le(d, fat + 4 * n, 4) & 0x0FFFFFFF


def fat_sector(d, kind):
    g = fat_geo(d)
    eoc = {12: 0xFF8, 16: 0xFFF8, 32: 0x0FFFFFF8}[g["bits"]]
    per = g["bps"] * 8 // g["bits"]  # whole entries in a sector (FAT12: 341 of 341.3)
    # sector 0 holds entries 0 and 1 and the first directories: left alone
    for s in range(1, g["fatsz"]):
        first = (s * g["bps"] * 8 + g["bits"] - 1) // g["bits"]
        # with the entries across its edges (FAT12's straddle them)
        ents = [fat_entry(d, g, n)
                for n in range(max(first - 1, 2), min(first + per + 1, g["clusters"] + 2))]
        mid = sum(1 for e in ents if 2 <= e < g["clusters"] + 2)
        ends = sum(1 for e in ents if e >= eoc)
        if kind == "mid" and mid >= len(ents) // 2:
            return s
        if kind == "eoc" and mid == 0 and ends * 3 >= per:
            return s
    raise SystemExit(f"fatdamage.py: no FAT sector of kind {kind}")


def fat_crosslink(path):
    with open(path, "r+b") as f:
        d = bytearray(f.read())
        g = fat_geo(d)
        cs = g["bps"] * g["spc"]
        files, c = [], le(d, 44, 4)
        while 2 <= c < g["clusters"] + 2 and len(files) < 2:
            at = (g["data"] + (c - 2) * g["spc"]) * g["bps"]
            for i in range(at, at + cs, 32):
                e = d[i:i + 32]
                if e[0] in (0, 0xE5) or e[11] & 0x18 or (e[11] & 0x3F) == 0x0F:
                    continue
                if le(e, 28, 4) > 0:
                    files.append(i)
            c = fat_entry(d, g, c)
        a, b = files[0], files[1]
        d[b + 20:b + 22] = d[a + 20:a + 22]
        d[b + 26:b + 28] = d[a + 26:a + 28]
        f.seek(b)
        f.write(d[b:b + 32])


def undo(healthy, damaged, restored):
    """Put the healthy volume's bytes back into restored wherever damaged
    differs from it (a sector at a time): the damage repaired."""
    with open(healthy, "rb") as h, open(damaged, "rb") as d, open(restored, "r+b") as r:
        at = 0
        while True:
            a, b = h.read(512), d.read(512)
            if not a:
                break
            if a != b:
                r.seek(at)
                r.write(a)
            at += len(a)


def xf_geo(d):
    bps = 1 << d[108]
    return dict(bps=bps, cl=bps << d[109], fat=le(d, 80, 4) * bps, heap=le(d, 88, 4) * bps,
                count=le(d, 92, 4), root=le(d, 96, 4))


def xf_chain(d, g, c):
    seen = 0
    while 2 <= c < g["count"] + 2 and seen <= g["count"]:
        yield c
        c = le(d, g["fat"] + 4 * c, 4)
        seen += 1


def xf_root_entries(d, g):
    for c in xf_chain(d, g, g["root"]):
        base = g["heap"] + (c - 2) * g["cl"]
        for i in range(0, g["cl"], 32):
            yield base + i


def xf_bitmap(d):
    g = xf_geo(d)
    first = next(le(d, o + 20, 4) for o in xf_root_entries(d, g) if d[o] == 0x81)
    best = max(xf_chain(d, g, first),
               key=lambda c: sum(bin(x).count("1")
                                 for x in d[g["heap"] + (c - 2) * g["cl"]:
                                            g["heap"] + (c - 1) * g["cl"]]))
    return g["heap"] + (best - 2) * g["cl"], g["cl"]


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "flip":
        with open(path, "r+b") as f:
            f.seek(int(sys.argv[3]))
            b = f.read(1)[0]
            f.seek(int(sys.argv[3]))
            f.write(bytes([b ^ 0x55]))
        return
    if cmd == "undo":
        undo(path, sys.argv[3], sys.argv[4])
        return
    if cmd == "fat-crosslink":
        fat_crosslink(path)
        return
    with open(path, "rb") as f:
        d = f.read()
    if cmd == "fat-sector":
        print(fat_sector(d, sys.argv[3]))
    elif cmd == "fat-copies":
        g = fat_geo(d)
        for k in range(g["nfats"]):
            print((g["res"] + k * g["fatsz"] + int(sys.argv[3])) * g["bps"], g["bps"])
    elif cmd == "xf-bitmap":
        print(*xf_bitmap(d))
    elif cmd == "xf-file-entry":
        g = xf_geo(d)
        print(next(o for o in xf_root_entries(d, g) if d[o] == 0x85))
    else:
        raise SystemExit("fatdamage.py: unknown command " + cmd)


if __name__ == "__main__":
    main()

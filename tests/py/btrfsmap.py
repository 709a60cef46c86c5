#!/usr/bin/env python3
"""btrfsmap.py — btrfs for tests/btrfs.sh, sharing no code with spigz: what
btrfs's own tools say is allocated on a single-device filesystem, and forged
damage.  The map is read from btrfs-progs' `btrfs inspect-internal dump-tree`
(the chunk tree's stripes, the extent tree's EXTENT_ITEM and METADATA_ITEM
keys) and `dump-super` (node size, the device's size); the forgeries write
the on-disk format (a tree block's header and item keys, its CRC-32C) here.

Offsets and sizes are bytes of the device (the filesystem's image).

  btrfsmap.py free IMG        what btrfs leaves free: every byte of the
                              device but the first MiB, the superblock copies
                              (64 KiB, 64 MiB, 256 GiB) and every allocated
                              extent and tree block at each of its chunk's
                              stripes: "OFF LEN" a line
  btrfsmap.py unalloc IMG     the device space in no chunk's stripe (less the
                              first MiB and the superblock copies)
  btrfsmap.py datafree IMG    inside data chunks, the bytes no extent holds
                              (the extent tree's account), at each stripe
  btrfsmap.py extents IMG     the data extents: "LOGICAL LEN PHYS" a line
  btrfsmap.py fst IMG         the free-space tree's items: "KIND START LEN
                              GROUP" a line (KIND: INFO, EXTENT, BITMAP;
                              GROUP: the type of the chunk holding START)
  btrfsmap.py stalefst IMG    the free-space tree made stale: a free extent
                              item (in a single-profile leaf) grown back over
                              the data extent just before it, the leaf's
                              checksum made right; prints what it did
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from crc32c import crc32c  # noqa: E402

SB = (64 << 10, 64 << 20, 256 << 30)
SB_SIZE = 4096
MIB = 1 << 20


def run(*args):
    return subprocess.run(args, capture_output=True, text=True, check=True).stdout


def super_info(img):
    out = run("btrfs", "inspect-internal", "dump-super", img)
    get = lambda k: int(re.search(r"^" + re.escape(k) + r"\s+(\d+)", out, re.M).group(1))
    return {"nodesize": get("nodesize"), "total": get("dev_item.total_bytes"),
            "devid": get("dev_item.devid")}


def chunks(img, devid):
    """[(logical, length, type, [phys...])] from the chunk tree."""
    out = run("btrfs", "inspect-internal", "dump-tree", "-t", "chunk", img)
    res, cur = [], None
    for line in out.splitlines():
        m = re.search(r"item \d+ key \(FIRST_CHUNK_TREE CHUNK_ITEM (\d+)\)", line)
        if m:
            cur = [int(m.group(1)), 0, "", []]
            res.append(cur)
            continue
        m = re.search(r"^\s+length (\d+) owner \d+ stripe_len \d+ type (\S+)", line)
        if m and cur is not None:
            cur[1], cur[2] = int(m.group(1)), m.group(2)
            continue
        m = re.search(r"^\s+stripe \d+ devid (\d+) offset (\d+)", line)
        if m and cur is not None:
            if int(m.group(1)) != devid:
                raise SystemExit("btrfsmap.py: a stripe on another device")
            cur[3].append(int(m.group(2)))
    return [tuple(c) for c in res]


def extents(img, nodesize):
    """[(logical, length, is_data)] from the extent tree."""
    out = run("btrfs", "inspect-internal", "dump-tree", "-t", "extent", img)
    res = []
    for m in re.finditer(r"item \d+ key \((\d+) (EXTENT_ITEM|METADATA_ITEM) (\d+)\)", out):
        ln = nodesize if m.group(2) == "METADATA_ITEM" else int(m.group(3))
        res.append((int(m.group(1)), ln))
    return res


def to_phys(chs, logical, ln):
    for lo, cl, _, phys in chs:
        if lo <= logical < lo + cl:
            if logical + ln > lo + cl:
                raise SystemExit("btrfsmap.py: an extent across its chunk's end")
            return [p + logical - lo for p in phys]
    raise SystemExit(f"btrfsmap.py: extent {logical} in no chunk")


def merge(rs):
    out = []
    for off, ln in sorted(rs):
        if ln <= 0:
            continue
        if out and off <= out[-1][0] + out[-1][1]:
            out[-1][1] = max(out[-1][1], off + ln - out[-1][0])
        else:
            out.append([off, ln])
    return out


def complement(used, lo, hi):
    """[lo, hi) less the used ranges."""
    out, pos = [], lo
    for off, ln in merge(used):
        if off > pos:
            out.append((pos, min(off, hi) - pos))
        pos = max(pos, off + ln)
        if pos >= hi:
            break
    if pos < hi:
        out.append((pos, hi - pos))
    return [(o, n) for o, n in out if n > 0]


def reserved(total):
    return [(0, MIB)] + [(s, SB_SIZE) for s in SB if s + SB_SIZE <= total]


def cmd_free(img):
    si = super_info(img)
    chs = chunks(img, si["devid"])
    used = reserved(si["total"])
    for logical, ln in extents(img, si["nodesize"]):
        used += [(p, ln) for p in to_phys(chs, logical, ln)]
    return complement(used, 0, si["total"])


def cmd_unalloc(img):
    si = super_info(img)
    used = reserved(si["total"])
    for _, ln, _, phys in chunks(img, si["devid"]):
        used += [(p, ln) for p in phys]
    return complement(used, 0, si["total"])


def cmd_datafree(img):
    si = super_info(img)
    chs = chunks(img, si["devid"])
    ext = extents(img, si["nodesize"])
    out = []
    for lo, cl, typ, phys in chs:
        if not typ.startswith("DATA") or "METADATA" in typ:
            continue
        inside = [(o, n) for o, n in ext if lo <= o < lo + cl]
        for o, n in complement(inside, lo, lo + cl):
            out += [(p + o - lo, n) for p in phys]
    return merge(out)


def cmd_extents(img):
    si = super_info(img)
    chs = chunks(img, si["devid"])
    out = []
    for o, n in extents(img, si["nodesize"]):
        for lo, cl, typ, phys in chs:
            if lo <= o < lo + cl and typ.startswith("DATA"):
                out.append((o, n, phys[0] + o - lo))
    return out


def cmd_fst(img):
    si = super_info(img)
    chs = chunks(img, si["devid"])
    out = run("btrfs", "inspect-internal", "dump-tree", "-t", "10", img)
    res = []
    for m in re.finditer(r"item \d+ key \((\d+) FREE_SPACE_(INFO|EXTENT|BITMAP) (\d+)\)", out):
        start = int(m.group(1))
        group = [t for lo, cl, t, _ in chs if lo <= start < lo + cl]
        res.append((m.group(2), start, int(m.group(3)), group[0] if group else "none"))
    return res


# ---- forging ----

def cmd_stalefst(img):
    si = super_info(img)
    chs = chunks(img, si["devid"])
    data = sorted((o, n) for o, n, _ in cmd_extents(img))
    out = run("btrfs", "inspect-internal", "dump-tree", "-t", "10", img)
    leaf = None
    items = []  # (leaf, index, start, type, len)
    for line in out.splitlines():
        m = re.match(r"leaf (\d+) items", line)
        if m:
            leaf = int(m.group(1))
            continue
        m = re.search(r"item (\d+) key \((\d+) (FREE_SPACE_\w+) (\d+)\)", line)
        if m and leaf is not None:
            items.append((leaf, int(m.group(1)), int(m.group(2)), m.group(3), int(m.group(4))))
    for k, (leaf, idx, start, typ, ln) in enumerate(items):
        if typ != "FREE_SPACE_EXTENT" or k == 0 or items[k - 1][0] != leaf:
            continue
        before = [(o, n) for o, n in data if o + n == start]
        prev_start = items[k - 1][2]
        if not before or before[0][0] < prev_start:
            continue
        e0, en = before[0]
        if items[k - 1][3] == "FREE_SPACE_EXTENT" and prev_start + items[k - 1][4] > e0:
            continue
        phys = to_phys(chs, leaf, si["nodesize"])
        if len(phys) != 1:
            raise SystemExit("btrfsmap.py stalefst: the leaf is not single-profile")
        with open(img, "r+b") as f:
            f.seek(phys[0])
            node = bytearray(f.read(si["nodesize"]))
            it = 101 + idx * 25
            if (int.from_bytes(node[it:it + 8], "little") != start or node[it + 8] != 199 or
                    int.from_bytes(node[it + 9:it + 17], "little") != ln):
                raise SystemExit("btrfsmap.py stalefst: the item is not where dump-tree says")
            if int.from_bytes(node[0:4], "little") != crc32c(node[32:]):
                raise SystemExit("btrfsmap.py stalefst: the leaf's checksum was already wrong")
            node[it:it + 8] = e0.to_bytes(8, "little")
            node[it + 9:it + 17] = (start + ln - e0).to_bytes(8, "little")
            node[0:4] = crc32c(node[32:]).to_bytes(4, "little")
            f.seek(phys[0])
            f.write(node)
        print(f"free extent ({start} {ln}) made ({e0} {start + ln - e0}), over the data extent "
              f"({e0} {en}) at device offset {to_phys(chs, e0, en)[0]}")
        return []
    raise SystemExit("btrfsmap.py stalefst: no free extent right after a data extent")


def cmd_oldgen(img):
    """The free-space tree's first leaf stamped with an older generation
    than its parent names (a write lost on the copy read), its checksum
    made right again: what the kernel calls "parent transid verify
    failed"."""
    si = super_info(img)
    chs = chunks(img, si["devid"])
    out = run("btrfs", "inspect-internal", "dump-tree", "-t", "10", img)
    m = re.search(r"^leaf (\d+) items \d+ free space \d+ generation (\d+)", out, re.M)
    if not m:
        raise SystemExit("btrfsmap.py oldgen: no leaf in the free-space tree")
    leaf, gen = int(m.group(1)), int(m.group(2))
    phys = to_phys(chs, leaf, si["nodesize"])
    if len(phys) != 1 or gen < 2:
        raise SystemExit("btrfsmap.py oldgen: the leaf is not single-profile, or of generation 1")
    with open(img, "r+b") as f:
        f.seek(phys[0])
        node = bytearray(f.read(si["nodesize"]))
        if int.from_bytes(node[80:88], "little") != gen or \
                int.from_bytes(node[0:4], "little") != crc32c(node[32:]):
            raise SystemExit("btrfsmap.py oldgen: the leaf is not as dump-tree says")
        node[80:88] = (gen - 1).to_bytes(8, "little")
        node[0:4] = crc32c(node[32:]).to_bytes(4, "little")
        f.seek(phys[0])
        f.write(node)
    print(f"leaf {leaf}: generation {gen} made {gen - 1}")
    return []


def main(a):
    cmds = {"free": cmd_free, "unalloc": cmd_unalloc, "datafree": cmd_datafree,
            "extents": cmd_extents, "fst": cmd_fst, "stalefst": cmd_stalefst,
            "oldgen": cmd_oldgen}
    if len(a) != 2 or a[0] not in cmds:
        raise SystemExit(__doc__)
    for r in cmds[a[0]](a[1]):
        print(*r)


if __name__ == "__main__":
    main(sys.argv[1:])

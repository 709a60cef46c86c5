"""ntfslink.py IMG A B: cross-link two files of an NTFS image in place: the
first data run of file B (its unnamed $DATA, non-resident) is made to name
the first cluster run of file A, as a damaged volume's MFT can.  Only the
run's LCN bytes change, never at a fixup position; the records' fixups are
undone in a copy to read them.  For tests/volatile.sh."""
import struct
import sys

img, a_name, b_name = sys.argv[1], sys.argv[2], sys.argv[3]
d = bytearray(open(img, "rb").read())
bps = struct.unpack_from("<H", d, 11)[0]
spc = d[13]
cs = bps * spc
mft_lcn = struct.unpack_from("<q", d, 48)[0]
c = struct.unpack_from("<b", d, 64)[0]
rs = cs * c if c > 0 else 1 << -c
def records():
    at = mft_lcn * cs
    for i in range(4096):
        off = at + i * rs
        if d[off:off + 4] != b"FILE":
            continue
        r = bytearray(d[off:off + rs])
        usa, n = struct.unpack_from("<HH", r, 4)
        for k in range(1, n):  # the fixups undone in a copy
            r[k * bps - 2:k * bps] = r[usa + 2 * k:usa + 2 * k + 2]
        yield off, r
def attrs(r):
    at = struct.unpack_from("<H", r, 20)[0]
    while True:
        t, ln = struct.unpack_from("<II", r, at)
        if t == 0xFFFFFFFF or ln == 0:
            return
        yield at, t
        at += ln
def name_of(r):
    for at, t in attrs(r):
        if t == 0x30:
            vo = struct.unpack_from("<H", r, at + 20)[0]
            n = r[at + vo + 64]
            return r[at + vo + 66:at + vo + 66 + 2 * n].decode("utf-16-le")
def data_run(off, r):
    for at, t in attrs(r):
        if t == 0x80 and r[at + 8] == 1 and r[at + 9] == 0:  # non-resident, unnamed
            mp = at + struct.unpack_from("<H", r, at + 32)[0]
            return off + mp, r[mp]
recs = {name_of(r): (off, r) for off, r in records()}
(ao, ar), (bo, br) = recs[a_name], recs[b_name]
apos, ah = data_run(ao, ar)
bpos, bh = data_run(bo, br)
al, aof = ah & 15, ah >> 4
lcn = int.from_bytes(d[apos + 1 + al:apos + 1 + al + aof], "little", signed=True)
bl, bof = bh & 15, bh >> 4
assert bof >= aof
for p in range(bpos, bpos + 1 + bl + bof):
    assert (p - bo) % bps not in (bps - 2, bps - 1), "a fixup position"
d[bpos + 1 + bl:bpos + 1 + bl + bof] = lcn.to_bytes(bof, "little", signed=True)
open(img, "wb").write(d)
print("B's first run now at LCN", lcn)

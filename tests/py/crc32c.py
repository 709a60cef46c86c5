"""crc32c.py — CRC-32C (Castagnoli, reflected 0x82F63B78), as XFS and btrfs
checksum their metadata: the tests' own, from the polynomial (no code shared
with spigz).  crc32c(data) is the standard CRC (initial and final value
inverted)."""


def _table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


_T = _table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _T[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF

#!/usr/bin/env python3
# access_reader.py — random 4 KiB reads of a disk image through one access
# path, for bench/access-bench.sh: the latency of each read, and the rate.
#
#   access_reader.py file PATH OFF LEN N SEED        O_DIRECT preads of PATH
#   access_reader.py igzip GZ OFF LEN N SEED         Python's indexed_gzip
#                                                    (its index built first,
#                                                    timed apart)
#   access_reader.py nbd URI OFF LEN N SEED          libnbd's pread
#
# N reads at 4 KiB-aligned offsets drawn (seeded) from [OFF, OFF + LEN),
# one at a time, each timed; then the same offsets again (the "cached"
# pass: whatever the path keeps, it keeps).  Prints one line per pass:
#   PASS iops=... p50_ms=... p99_ms=... [index_s=...]
# and, with CHECK=IMG in the environment, compares every read with IMG.
import mmap, os, random, sys, time

def reads(read, offs):
    lat = []
    t0 = time.perf_counter()
    for o in offs:
        a = time.perf_counter()
        read(o)
        lat.append(time.perf_counter() - a)
    total = time.perf_counter() - t0
    lat.sort()
    return len(offs) / total, lat[len(lat) // 2] * 1e3, lat[min(len(lat) - 1, len(lat) * 99 // 100)] * 1e3

def main():
    kind, target = sys.argv[1], sys.argv[2]
    off, length, n, seed = (int(x) for x in sys.argv[3:7])
    r = random.Random(seed)
    offs = [off + (r.randrange(0, length - 4096) & ~4095) for _ in range(n)]
    check = os.environ.get("CHECK")
    img = open(check, "rb") if check else None
    extra = ""
    if kind == "file":
        fd = os.open(target, os.O_RDONLY | os.O_DIRECT)
        buf = mmap.mmap(-1, 4096)
        def read(o):
            if os.preadv(fd, [buf], o) != 4096:
                sys.exit("short read at %d" % o)
            return bytes(buf)
    elif kind == "igzip":
        import indexed_gzip
        a = time.perf_counter()
        f = indexed_gzip.IndexedGzipFile(target, spacing=4 << 20)
        f.build_full_index()
        extra = " index_s=%.3f" % (time.perf_counter() - a)
        def read(o):
            f.seek(o)
            return f.read(4096)
    elif kind == "nbd":
        import nbd
        h = nbd.NBD()
        h.connect_uri(target)
        def read(o):
            return h.pread(4096, o)
    else:
        sys.exit("unknown kind " + kind)
    for name in ("uncached", "cached"):
        iops, p50, p99 = reads(read, offs)
        print("%s iops=%.0f p50_ms=%.3f p99_ms=%.3f%s" % (name, iops, p50, p99, extra))
        extra = ""
    if img: # after the timed passes, which it would warm
        for o in offs[:200]:
            img.seek(o)
            if read(o) != img.read(4096):
                sys.exit("%s: wrong bytes at %d" % (kind, o))

main()

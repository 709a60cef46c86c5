#!/usr/bin/env python3
"""gzdiff.py — a differential test of spigz against GNU gzip.

Every case is derived from (seed, case number) alone: a set of files (compressed
streams from many producers, mutated or not, or plain contents), one shell
command run identically for gzip and for spigz, each in a fresh scratch
directory holding identical files.  Compared: the exit status class, stdout,
the files left behind (names, contents, modes, link counts, mtimes) and which
files the messages name.  spigz's compressed bytes are its own: compressed
outputs are compared by decompressing them with gzip.

A difference is a failure unless it is one of the deliberate differences that
doc/GZIP.md lists; each allowance here is keyed by such an ID, and the harness
refuses to run if the document does not list an ID it uses.

  gzdiff.py --spigz PATH [--gzip PATH] [--seed S] [--cases N | --time SECONDS | --case N]
            [--jobs J] [--big-every M [--big-slow]] [--tmp DIR] [--keep] [--signatures]
            [-q | -v]

A failure prints a one-line reproducer (--case N -v: the case in detail, its
scratch kept, with orig/ holding the files as they were before the run) and
the shell commands run for both.  The summary ends with the line
"gzdiff: N cases (seed S): P passed, F failed"; the exit status is 0 when no
case failed, 1 otherwise, 2 when the harness refuses to run.
Python 3 standard library only.
"""
import argparse
import hashlib
import heapq
import io
import os
import random
import re
import shlex
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
import zlib
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

# The deliberate differences this harness allows, by doc/GZIP.md ID.
ALLOWANCES = ("D-compressed-bytes", "D-list-exact", "D-same-file", "D-wording",
              "D-index-warning", "D-list-trailing", "D-later-member", "D-error-output",
              "D-stdin-name", "D-lzh", "D-cut-header", "D-unusable-name", "D-verbose-notes",
              "D-pack-tree", "D-force-keeps", "D-list-totals")

K, M, G = 1 << 10, 1 << 20, 1 << 30
TIMEOUT = 60          # hang guard for one command (a timeout is a failure)
BIG_TIMEOUT = 900     # the same for cases around 4 GiB
TOOL = "@T@"          # the tool's place in a command template

# ---------------------------------------------------------------- contents

WORDS = ("the of and to in is was that for it with as his on be at by had are but from or "
         "have an they which one you were her all she there would their we him been has when "
         "who will more if no out so said what up its about into than them can only disk "
         "image block device sparse hole zero chunk stream member deflate index").split()


def gen_text(rng, n):
    out, total = [], 0
    while total < n:
        line = " ".join(rng.choices(WORDS, k=rng.randint(3, 14))).capitalize() + ".\n"
        out.append(line)
        total += len(line)
    return "".join(out).encode()[:n]


def gen_bytes(rng, n):
    """n bytes mixing random bytes, text, zero runs and short patterns."""
    out = bytearray()
    while len(out) < n:
        left = n - len(out)
        seg = min(left, int(2 ** rng.uniform(3, 19)))
        k = rng.random()
        if k < 0.33:
            out += rng.randbytes(seg)
        elif k < 0.63:
            out += gen_text(rng, min(seg, 256 * K))
        elif k < 0.85:
            if rng.random() < 0.5 and len(out) % 4096:          # a run of whole blocks
                out += rng.randbytes(min(left, 4096 - len(out) % 4096))
                left = n - len(out)
                seg = min(left, 4096 * rng.choice([1, 3, 4, 5, 8, 16, 64, 256]))
            out += bytes(seg)
        else:
            pat = rng.randbytes(rng.randint(1, 40))
            out += (pat * (seg // len(pat) + 1))[:seg]
    return bytes(out[:n])


BOUNDARY = [4095, 4096, 4097, 8191, 8192, 8193, 16383, 16384, 16385, 32767, 32768, 32769,
            65535, 65536, 65537, 131071, 131072, 131073, 1048575, 1048576, 1048577]


def gen_size(rng, small=False):
    r = rng.random()
    if r < 0.08:
        return 0
    if r < 0.13:
        return 1
    if r < 0.16:
        return rng.randint(2, 20)
    if r < 0.36:
        return max(0, rng.choice(BOUNDARY) + rng.choice([0, 0, 0, -1, 1, 4096, -4096]))
    if r < 0.90 or small:
        return int(2 ** rng.uniform(4, 17 if small else 19))
    return int(2 ** rng.uniform(19, 21.6))                      # 512 KiB .. 3 MiB


class Content:
    """Bytes, or a sparse file of `size` bytes with some data `extents`."""

    def __init__(self, data=b"", size=None, extents=None):
        self.data = data
        self.extents = extents
        self.size = len(data) if extents is None else size

    @property
    def big(self):
        return self.extents is not None

    def write(self, path):
        with open(path, "wb") as f:
            if self.extents is None:
                f.write(self.data)
            else:
                f.truncate(self.size)
                for off, b in self.extents:
                    f.seek(off)
                    f.write(b)

    def describe(self):
        if self.big:
            return "sparse %d bytes, data at %s" % (
                self.size, ", ".join("%d+%d" % (o, len(b)) for o, b in self.extents))
        return "%d bytes" % self.size


def gen_content(rng, small=False):
    return Content(gen_bytes(rng, gen_size(rng, small)))


def gen_big(rng):
    size = 4 * G + rng.choice([-4096, -1, 0, 1, 4097, M + 3, 3 * 65536])
    ext = []
    for _ in range(rng.randint(1, 4)):
        n = rng.randint(1, 64 * K)
        off = rng.randrange(0, size - n)
        if rng.random() < 0.5:
            off -= off % 4096
        ext.append((off, gen_bytes(rng, n)))
    if rng.random() < 0.5:
        n = rng.randint(1, 9000)
        ext.append((size - n, gen_bytes(rng, n)))
    return Content(size=size, extents=ext)

# ---------------------------------------------------------------- digests

BLK = 1 << 16
ZBLK = bytes(BLK)


class Digest:
    """A digest of a byte stream that is the same however the stream arrives
    (a pipe, a dense file, a sparse file): aligned all-zero 64 KiB blocks are
    only counted.  Keeps the first `keep` bytes for the report."""

    def __init__(self, keep=0):
        self.h = hashlib.sha256()
        self.n = 0
        self.buf = b""
        self.keep = keep
        self.kept = bytearray()

    def _block(self, blk):
        if blk != ZBLK:
            self.h.update(struct.pack("<Q", self.n))
            self.h.update(blk)
        self.n += BLK

    def feed(self, b):
        if self.keep and len(self.kept) < self.keep:
            self.kept += b[:self.keep - len(self.kept)]
        if self.buf:
            need = BLK - len(self.buf)
            self.buf += b[:need]
            b = b[need:]
            if len(self.buf) < BLK:
                return
            self._block(self.buf)
            self.buf = b""
        i, n = 0, len(b)
        while n - i >= BLK:
            self._block(b[i:i + BLK])
            i += BLK
        self.buf = b[i:]

    def feed_zeros(self, n):
        if self.buf:
            need = min(n, BLK - len(self.buf))
            self.feed(bytes(need))
            n -= need
        if self.keep and len(self.kept) < self.keep:
            self.kept += bytes(min(n, self.keep - len(self.kept)))
        self.n += n // BLK * BLK
        if n % BLK:
            self.buf = bytes(n % BLK)

    def total(self):
        return self.n + len(self.buf)

    def hexdigest(self):
        h = self.h.copy()
        if self.buf.strip(b"\0"):
            h.update(struct.pack("<Q", self.n))
            h.update(self.buf)
        h.update(b"end" + struct.pack("<Q", self.total()))
        return "%s/%d" % (h.hexdigest()[:16], self.total())


def file_digest(path, keep=0):
    """The Digest of a file, reading only its data extents."""
    d = Digest(keep)
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        pos = 0
        while pos < size:
            try:
                data = os.lseek(fd, pos, os.SEEK_DATA)
            except OSError:
                data = size
            if data > pos:
                d.feed_zeros(data - pos)
                pos = data
            if pos >= size:
                break
            hole = os.lseek(fd, pos, os.SEEK_HOLE)
            while pos < hole:
                b = os.pread(fd, min(M, hole - pos), pos)
                if not b:
                    hole = pos
                    break
                d.feed(b)
                pos += len(b)
    finally:
        os.close(fd)
    return d

# ---------------------------------------------------------------- gzip members by hand

MTIMES = [0, 1, 1234567890, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 1600000000, 86399]
STORED = [b"orig.dat", b"Report 7.txt", b"sub/dir/leaf.bin", b"../up.txt", b"", b".", b"..",
          b"n" * 300, b"x", b"name.gz", b"caf\xc3\xa9.txt", b"a\x01ctl", b"trail/"]


def deflate_raw(rng, data):
    level = rng.choice([0, 1, 2, 6, 9, 9])
    wbits = rng.choice([15, 15, 15, 9, 10, 12])
    strategy = rng.choice([zlib.Z_DEFAULT_STRATEGY] * 3 + [zlib.Z_FILTERED, zlib.Z_HUFFMAN_ONLY,
                                                           zlib.Z_RLE, zlib.Z_FIXED])
    c = zlib.compressobj(level, zlib.DEFLATED, -wbits, rng.choice([1, 8, 9]), strategy)
    if rng.random() < 0.3 and len(data) > 1:
        out, pos = b"", 0
        for _ in range(rng.randint(1, 5)):
            cut = rng.randint(pos, len(data))
            out += c.compress(data[pos:cut]) + c.flush(
                rng.choice([zlib.Z_SYNC_FLUSH, zlib.Z_FULL_FLUSH, zlib.Z_PARTIAL_FLUSH]))
            pos = cut
        return out + c.compress(data[pos:]) + c.flush()
    return c.compress(data) + c.flush()


def handmade(rng, data):
    """A gzip member built here: header fields gzip writers seldom set."""
    flg = 0
    extra = name = comment = None
    if rng.random() < 0.1:
        flg |= 1                                              # FTEXT
    if rng.random() < 0.25:
        r = rng.random()
        if r < 0.2:
            extra = b""
        elif r < 0.3:
            extra = rng.randbytes(rng.randint(1, 20))         # not subfields
        elif r < 0.35:
            extra = b"XY" + struct.pack("<H", 65531) + rng.randbytes(65531)
        else:
            extra = b"".join(bytes([rng.randrange(65, 91), rng.randrange(65, 91)]) +
                             struct.pack("<H", n) + rng.randbytes(n)
                             for n in [rng.randint(0, 30) for _ in range(rng.randint(1, 3))])
        flg |= 4
    if rng.random() < 0.4:
        name = rng.choice(STORED)
        flg |= 8
    if rng.random() < 0.2:
        comment = rng.choice([b"a comment", b"", b"c" * 1000, b"line\nbreak"])
        flg |= 16
    hcrc = rng.random() < 0.15
    if hcrc:
        flg |= 2
    mtime = rng.choice(MTIMES + [rng.getrandbits(32)])
    xfl = rng.choice([0, 2, 4, rng.randrange(256)])
    os_ = rng.choice([0, 3, 3, 7, 11, 255, rng.randrange(256)])
    h = bytes([0x1F, 0x8B, 8, flg]) + struct.pack("<IBB", mtime, xfl, os_)
    if extra is not None:
        h += struct.pack("<H", len(extra)) + extra
    if name is not None:
        h += name + b"\0"
    if comment is not None:
        h += comment + b"\0"
    if hcrc:
        h += struct.pack("<H", zlib.crc32(h) & 0xFFFF)
    desc = "python member (flg %02x, mtime %d, os %d%s)" % (
        flg, mtime, os_, ", name %r" % name if name is not None else "")
    return h + deflate_raw(rng, data) + struct.pack("<II", zlib.crc32(data),
                                                    len(data) & 0xFFFFFFFF), desc

# ---------------------------------------------------------------- pack (.z) and others


def huffman_lengths(freq):
    """Code lengths of a Huffman code for freq (symbol -> count > 0), at most 24."""
    while True:
        heap = [(f, i, (s,)) for i, (s, f) in enumerate(sorted(freq.items()))]
        heapq.heapify(heap)
        depth = dict.fromkeys(freq, 0)
        n = len(heap)
        while len(heap) > 1:
            f1, _, a = heapq.heappop(heap)
            f2, _, b = heapq.heappop(heap)
            for s in a + b:
                depth[s] += 1
            heapq.heappush(heap, (f1 + f2, n, a + b))
            n += 1
        if max(depth.values()) <= 24:
            return depth
        freq = {s: (f + 1) // 2 for s, f in freq.items()}


def pack_encode(data):
    """data in the pack format (magic 1f 1e), as GNU gzip's unpack.c reads it."""
    EOB = 256
    freq = {}
    for b in data:
        freq[b] = freq.get(b, 0) + 1
    if not freq:
        freq[0] = 1                     # the tree needs a literal besides EOB
    freq[EOB] = 1
    depth = huffman_lengths(freq)
    top = max(depth.values())
    if depth[EOB] != top:               # EOB is the last code of the deepest level
        s = next(s for s in sorted(depth) if depth[s] == top)
        depth[s], depth[EOB] = depth[EOB], top
    lits = {ln: sorted(s for s in depth if s != EOB and depth[s] == ln)
            for ln in range(1, top + 1)}
    leaves = {ln: len(lits[ln]) for ln in lits}
    leaves[top] += 1
    parents, nodes = {}, 0
    for ln in range(top, 0, -1):
        nodes >>= 1
        parents[ln] = nodes
        nodes += leaves[ln]
    code = {}
    for ln in lits:
        for j, s in enumerate(lits[ln]):
            code[s] = (parents[ln] + j, ln)
    code[EOB] = (parents[top] + leaves[top] - 1, top)
    out = bytearray(b"\x1f\x1e" + struct.pack(">I", len(data) & 0xFFFFFFFF) + bytes([top]))
    out += bytes(leaves[ln] - (2 if ln == top else 0) for ln in range(1, top + 1))
    for ln in range(1, top + 1):
        out += bytes(lits[ln])
    acc = nbits = 0
    for b in data:
        c, ln = code[b]
        acc = (acc << ln) | c
        nbits += ln
        while nbits >= 8:
            nbits -= 8
            out.append((acc >> nbits) & 0xFF)
        acc &= (1 << nbits) - 1
    c, ln = code[EOB]
    acc = (acc << ln) | c
    nbits += ln
    while nbits >= 8:
        nbits -= 8
        out.append((acc >> nbits) & 0xFF)
        acc &= (1 << nbits) - 1
    if nbits:
        out.append((acc << (8 - nbits)) & 0xFF)
    return bytes(out)


def zip_encode(rng, data):
    """A one-member zip file (gzip -d reads its first member if deflated)."""
    bio = io.BytesIO()
    with zipfile.ZipFile(bio, "w", compression=rng.choice([zipfile.ZIP_DEFLATED] * 3 +
                                                          [zipfile.ZIP_STORED])) as z:
        z.writestr(rng.choice(["member.txt", "a/b.bin"]), data)
    return bio.getvalue()

# ---------------------------------------------------------------- streams


class Stream:
    def __init__(self, data, desc, size, spigz=False):
        self.data = data
        self.desc = desc
        self.size = size            # decompressed size (-1: not a gzip stream)
        self.spigz = spigz          # an unmutated spigz file with its index
        self.index_at = None        # where its index and footer start
        if spigz and len(data) >= 78 and data[-78 + 12:-78 + 14] == b"SF":
            data_len = struct.unpack("<Q", data[-78 + 28:-78 + 36])[0]
            self.index_at = max(0, data_len - 10)


class GzFile:
    """The bytes of one input file and what the comparison needs to know."""

    def __init__(self, data, desc, members, exact=None):
        self.data = data
        self.desc = desc
        self.members = members      # [(start, Stream)]
        self.exact = exact          # D-list-exact: the true size, when it applies

# ---------------------------------------------------------------- the harness


class Harness:
    def __init__(self, a):
        self.a = a
        self.spigz = os.path.abspath(a.spigz)
        self.gzip = shutil.which(a.gzip) or a.gzip
        self.gzip = os.path.abspath(self.gzip)
        self.gzip_prog = os.path.basename(self.gzip)
        self.seed = a.seed
        self.tools = {}
        for t in ("pigz", "igzip", "libdeflate-gzip", "bgzip", "zopfli", "compress",
                  "busybox"):
            p = shutil.which(t)
            if p:
                self.tools[t] = p
        self.missing = sorted(set(("pigz", "igzip", "libdeflate-gzip", "bgzip", "zopfli",
                                   "compress", "busybox")) - set(self.tools))
        self.base = tempfile.mkdtemp(prefix="gzdiff.", dir=a.tmp)
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C",
                    "TZ": "UTC", "HOME": self.base}
        self.lock = threading.Lock()
        self.allowed = dict.fromkeys(ALLOWANCES, 0)
        self.maxlevel = 12
        try:
            v = subprocess.run([self.spigz, "-V"], capture_output=True, timeout=10).stdout
            if b"engine: zlib" in v:
                self.maxlevel = 9
        except (OSError, subprocess.SubprocessError):
            pass

    def allow(self, key):
        assert key in ALLOWANCES
        with self.lock:
            self.allowed[key] += 1

    def reproducer(self, n, big):
        cmd = ["python3", sys.argv[0], "--spigz", self.a.spigz]
        if self.a.gzip != "gzip":
            cmd += ["--gzip", self.a.gzip]
        cmd += ["--seed", str(self.seed), "--case", str(n)]
        if big:
            cmd += ["--big-every", str(self.a.big_every)] + (
                ["--big-slow"] if self.a.big_slow else [])
        return " ".join(shlex.quote(c) for c in cmd + ["-v"])


class Case:
    """One generated case: the files, the command, what to compare."""

    NAMES = ["q7", "zdat", "img3", "vk2", "Mx9", "p0q", "w 5", "r-8", "t_4", "kb.e", "j6j",
             "hh2", "uu9", "Fz1"]

    def __init__(self, h, n, big, pdir):
        self.h = h
        self.n = n
        self.big = big
        self.rng = random.Random("gzdiff:%d:%d" % (h.seed, n))
        self.pdir = pdir
        self.files = []             # (name, kind, payload, mode)
        self.used = set()
        self.cmd = None
        self.cat = None
        self.mode = "d"             # d: decompress-like (bytes compared); c: compress
        self.stdout = "pipe"        # pipe, file (a regular file outside the scratch)
        self.env = {}
        self.list_exact = {}        # listing name -> true sizes (D-list-exact)
        self.listing = False
        self.same_stdin = None      # D-same-file: the file both stdin and stdout
        self.names = {"stdin", "stdout"}
        self.notes = []
        self.pcount = 0
        self.big_done = False
        self.mtimes = {}            # name -> an odd mtime (ns) for that file
        self.gz = {}                # name -> GzFile, for the allowances

    # ---- files

    def fresh(self, suffix=""):
        for _ in range(100):
            b = self.rng.choice(self.NAMES)
            if b + suffix not in self.used and b not in self.used:
                self.used.add(b + suffix)
                self.used.add(b)
                return b + suffix
        b = "f%d" % len(self.used)
        self.used.add(b + suffix)
        return b + suffix

    def add(self, name, payload, mode=None, note=""):
        if mode is None:
            mode = self.rng.choice([0o644] * 5 + [0o600, 0o755, 0o444, 0o640])
            if self.rng.random() < 0.03:        # set-user-ID, set-group-ID, sticky
                mode = self.rng.choice([0o4755, 0o2755, 0o1644])
        if self.rng.random() < 0.03:            # gzip warns: out of MTIME's range
            self.mtimes[name] = self.rng.choice([4294967300, -1000, 0]) * 10 ** 9
            note = (note + ", " if note else "") + "mtime %d" % (self.mtimes[name] // 10 ** 9)
        self.used.add(name)
        self.files.append((name, "file", payload, mode))
        self.names.add(name)
        self.notes.append("%s: %s, mode %o%s" % (
            name, payload.describe() if isinstance(payload, Content) else "%d bytes" % len(payload),
            mode, ", " + note if note else ""))

    def add_special(self, name, kind, target=None):
        self.used.add(name)
        self.files.append((name, kind, target, None))
        self.names.add(name)
        self.notes.append("%s: %s%s" % (name, kind, " -> " + target if target else ""))

    def arg(self, name):
        """A file name as written on the command line."""
        r = self.rng.random()
        if r < 0.08:
            self.names.add("./" + name)
            return shlex.quote("./" + name)
        return shlex.quote(name)

    # ---- producers

    def content_file(self, content):
        key = getattr(content, "path", None)
        if key is None:
            nm = self.rng.choice(["orig.dat", "Report 7.txt", "data.bin", "x" * 200, "log.txt"])
            sub = os.path.join(self.pdir, "p%d" % self.pcount)
            self.pcount += 1
            os.mkdir(sub)
            path = os.path.join(sub, nm)
            content.write(path)
            mt = self.rng.choice([1234567890, 1600000000, 0x7FFFFFFF, 86399, 0xFFFFFFFF + 5,
                                  1500000000])
            os.utime(path, (mt, mt))
            content.path = key = path
        return key

    def run_producer(self, argv, stdin_path=None, cwd=None):
        fin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
        try:
            p = subprocess.run(argv, stdin=fin, capture_output=True, cwd=cwd or self.pdir,
                               env=self.h.env, timeout=BIG_TIMEOUT)
        finally:
            if stdin_path:
                fin.close()
        return p.returncode, p.stdout

    def produce(self, content, producer=None):
        """A gzip stream of content, from a producer chosen at random."""
        rng, t = self.rng, self.h.tools
        if content.big:
            choices = [("spigz", 6)] + ([("pigz", 1), ("gzip", 1)] if self.h.a.big_slow else [])
        else:
            choices = [("gzip", 5), ("pigz", 3), ("igzip", 2), ("libdeflate-gzip", 2),
                       ("bgzip", 1), ("zopfli", 1 if content.size <= 64 * K else 0),
                       ("spigz", 6), ("python", 5), ("busybox", 1)]
        choices = [(c, w) for c, w in choices if w and (c in ("gzip", "spigz", "python") or c in t)]
        if producer is None:
            producer = rng.choices([c for c, _ in choices], [w for _, w in choices])[0]
        if producer == "python":
            data, desc = handmade(rng, content.data)
            return Stream(data, desc, content.size)
        path = self.content_file(content)
        nm = rng.choice([[], ["-n"], ["-N"]])
        spigz_index = False
        if producer == "gzip":
            lv = rng.randint(1, 9)
            argv = [self.h.gzip, "-c", "-%d" % lv] + nm + [path]
        elif producer == "pigz":
            argv = [t["pigz"], "-c", "-%d" % rng.choice(list(range(1, 10)) + (
                [11] if content.size < 32 * K else []))]
            if content.big:
                argv = [t["pigz"], "-c", "-1", "-p", "2"]
            else:
                argv += rng.choice([[], ["-i"]]) + ["-p", str(rng.randint(1, 4))]
                argv += rng.choice([[], ["-b", str(rng.choice([32, 64, 128, 1024]))]]) + nm
            argv.append(path)
        elif producer == "igzip":
            argv = [t["igzip"], "-c", "-%d" % rng.randint(0, 3)] + rng.choice(
                [[], ["-n"], ["-N"]]) + [path]
        elif producer == "libdeflate-gzip":
            argv = [t["libdeflate-gzip"], "-c", "-%d" % rng.randint(1, 12), path]
        elif producer == "bgzip":
            argv = [t["bgzip"], "-c", "-l", str(rng.randint(-1, 9)), path]
        elif producer == "zopfli":
            argv = [t["zopfli"], "-c", "--i%d" % rng.randint(1, 5), path]
        elif producer == "busybox":
            argv = [t["busybox"], "gzip", "-c", path]
        else:
            argv = [self.h.spigz, "-c", "-%d" % rng.randint(0, self.h.maxlevel)]
            if rng.random() < 0.3:
                argv += ["-b", str(rng.choice([32, 64, 100, 256, 2048]))]
            if rng.random() < 0.2:
                argv += ["--zero-run", str(rng.choice([4, 8, 64]))]
            if rng.random() < 0.3:
                argv += ["-p", str(rng.randint(1, 4))]
            spigz_index = rng.random() >= 0.2
            if not spigz_index:
                argv.append("--no-index")
            argv += nm + [path]
        # Run next to the file, with its bare name: some tools store the path.
        argv = [os.path.basename(path) if a == path else a for a in argv]
        rc, out = self.run_producer(argv, cwd=os.path.dirname(path))
        desc = " ".join(shlex.quote(os.path.basename(a)) if i == 0 else
                        shlex.quote(a) for i, a in enumerate(argv))
        # 2: a warning (gzip's "file timestamp out of range"), the stream is fine
        if rc not in (0, 2) or not out.startswith(b"\x1f\x8b"):
            data, d2 = handmade(rng, content.data if not content.big else b"")
            return Stream(data, "%s failed (%d); instead %s" % (desc, rc, d2), content.size)
        return Stream(out, desc, content.size, spigz=spigz_index)

    def nongzip(self):
        """A stream gzip may or may not decompress: LZW, pack, zip, plain..."""
        rng = self.rng
        content = gen_content(rng, small=True)
        r = rng.random()
        if r < 0.3 and "compress" in self.h.tools:
            bits = rng.randint(9, 16)
            path = self.content_file(content)
            rc, out = self.run_producer([self.h.tools["compress"], "-c", "-f", "-b", str(bits)],
                                        stdin_path=path)
            return Stream(out, "compress -b %d of %s" % (bits, content.describe()), content.size)
        if r < 0.55:
            data = content.data[:128 * K]
            return Stream(pack_encode(data), "pack of %d bytes" % len(data), len(data))
        if r < 0.62:
            return Stream(zip_encode(rng, content.data), "zip of %s" % content.describe(), -1)
        if r < 0.72:
            return Stream(zlib.compress(content.data), "zlib stream", -1)
        if r < 0.9:
            return Stream(content.data, "plain %s" % content.describe(), -1)
        b = rng.choice([b"", b"\x1f", b"\x1f\x8b", b"\x1f\x8b\x08", b"\x1f\x9e", b"\x1f\xa0",
                        b"\x1f\x9d", b"\x1f\x1e", b"PK\x03\x04", b"\x1f\x8b\x07"])
        b += rng.randbytes(rng.choice([0, 0, 1, 5, 30]))
        return Stream(b, "bytes %s" % b[:12].hex(), -1)

    def gzfile(self, nongzip=0.12, single=False):
        """The bytes of a compressed input: members, maybe mutated."""
        rng = self.rng
        if self.big and not self.big_done:
            self.big_done = True            # one file around 4 GiB a case
            content = gen_big(rng)
            st = self.produce(content)
            members = [(0, st)]
            parts = [st.data]
            if rng.random() < 0.25:
                small = gen_content(rng, small=True)
                s2 = self.produce(small)
                if rng.random() < 0.5:
                    members.insert(0, (0, s2))
                    members[1] = (len(s2.data), st)
                    parts.insert(0, s2.data)
                else:
                    members.append((len(st.data), s2))
                    parts.append(s2.data)
            data = b"".join(parts)
            desc = ["big: %s" % content.describe()] + [m.desc for _, m in members]
            return self.mutate(data, members, desc, big=True)
        if rng.random() < nongzip:
            st = self.nongzip()
            members = [(0, st)]
            data = st.data
            if rng.random() < 0.2:                  # and then a gzip member
                s2 = self.produce(gen_content(rng, small=True))
                members.append((len(data), s2))
                data += s2.data
            return self.mutate(data, members, [m.desc for _, m in members], gz=False)
        r = rng.random()
        n = 1 if single or r < 0.72 else rng.randint(2, 4) if r < 0.96 else rng.randint(5, 30)
        members, data = [], b""
        for i in range(n):
            if n > 4 or (i > 0 and rng.random() < 0.15):
                if rng.random() < 0.3:
                    d, ds = handmade(rng, b"")
                    st = Stream(d, ds, 0)
                else:
                    st = self.produce(Content(gen_bytes(rng, rng.randint(0, 300))))
            else:
                st = self.produce(gen_content(rng, small=n > 1))
            members.append((len(data), st))
            data += st.data
        return self.mutate(data, members, [m.desc for _, m in members])

    def pick_pos(self, data, members):
        rng = self.rng
        if not data:
            return 0
        r = rng.random()
        idx = [(s + m.index_at, s + len(m.data)) for s, m in members if m.index_at is not None]
        if r < 0.3 and idx:
            a, b = rng.choice(idx)
            return rng.randrange(a, b)
        s, m = rng.choice(members)
        ln = max(1, len(m.data))
        if r < 0.5:
            return min(len(data) - 1, s + rng.randrange(min(ln, 24)))
        if r < 0.7:
            return min(len(data) - 1, s + max(0, ln - 1 - rng.randrange(min(ln, 24))))
        return rng.randrange(len(data))

    def mutate(self, data, members, desc, gz=True, big=False):
        rng = self.rng
        r = rng.random()
        if big and rng.random() < 0.6:
            r = 0.0                     # mostly intact: -l's exact size over 4 GiB
        what = "none"
        if r < 0.45:
            pass
        elif r < 0.57:
            cut = self.pick_pos(data, members)
            data = data[:cut]
            what = "cut at %d" % cut
        elif r < 0.67:
            pos = self.pick_pos(data, members)
            if data:
                bit = rng.randrange(8)
                data = data[:pos] + bytes([data[pos] ^ (1 << bit)]) + data[pos + 1:]
                what = "bit %d of byte %d flipped" % (bit, pos)
        elif r < 0.74:
            n = rng.choice([1, 2, 3, 7, 8, 9, 100, 4096, 70000])
            data += bytes(n)
            what = "%d trailing zeros" % n
        elif r < 0.88:
            n = rng.randint(1, 8)
            start = rng.choice([b"", b"", b"\x1f", b"\x1f\x8b", b"\x1f\x9e", b"\x1f\x1e",
                                b"\x1f\x9d", b"\x1f\x8b\x08", b"\x1f\xa0", b"\x00"])[:n]
            g = start + rng.randbytes(n - len(start))
            data += g
            what = "trailing garbage %s" % g.hex()
        elif r < 0.93:
            g = rng.choice([b"this is not gzip data\n", rng.randbytes(rng.randint(9, 200)),
                            bytes(rng.randint(1, 50)) + b"junk"])
            if rng.random() < 0.4:
                g += handmade(rng, b"after the garbage\n")[0]
            data += g
            what = "trailing %d bytes of garbage (%s...)" % (len(g), g[:8].hex())
        elif r < 0.96 and gz and data[:2] == b"\x1f\x8b":
            data = b"\x1f\x9e" + data[2:]
            what = "magic 1f 9e (old gzip)"
        elif not big:
            k = rng.randint(1, 3)
            for _ in range(k):
                pos = self.pick_pos(data, members)
                if data:
                    data = data[:pos] + bytes([rng.randrange(256)]) + data[pos + 1:]
            if rng.random() < 0.5:
                data = data[:self.pick_pos(data, members)]
            what = "%d bytes changed, maybe cut" % k
        exact = None
        if what in ("none", "magic 1f 9e (old gzip)") and members and members[-1][1].spigz:
            exact = sum(m.size for _, m in members)
        return GzFile(data, "mutation: %s; members: %s" % (what, "; ".join(desc)), members,
                      exact)

    def add_gz(self, name, gzf, mode=None):
        self.gz[name] = gzf
        self.add(name, gzf.data, mode, gzf.desc)
        if gzf.exact is not None:
            self.exact_names(name, gzf)

    def exact_names(self, name, gzf, stdin=False):
        """-l: the listing names of an input D-list-exact covers."""
        names = set()
        if stdin:
            names |= {"stdout", "stdin"}
        else:
            names.add(strip_suffix(name))
            names.add(name)
            names.add("./" + strip_suffix(name))    # named ./FILE on the command line
        # a set: inputs may list under the same (stored) name
        for nm in names:
            self.list_exact.setdefault(nm, set()).add(gzf.exact)
        for s, m in gzf.members[-1:]:
            st = stored_name(m.data)
            if st:
                for nm in (os.path.basename(st).decode("latin-1"),
                           "./" + os.path.basename(st).decode("latin-1")):
                    self.list_exact.setdefault(nm, set()).add(gzf.exact)


def strip_suffix(name):
    low = name.lower()
    for suf, rep in ((".gz", ""), ("-gz", ""), (".z", ""), ("-z", ""), ("_z", ""),
                     (".tgz", ".tar"), (".taz", ".tar")):
        if low.endswith(suf) and len(name) > len(suf):
            return name[:-len(suf)] + rep
    return name


def stored_name(data):
    try:
        return stored_name_of(data)
    except (struct.error, IndexError, ValueError):
        return None


def stored_name_of(data):
    # 1f 9e: the old gzip magic, read as 1f 8b by both
    if len(data) < 10 or data[:1] != b"\x1f" or data[1:2] not in (b"\x8b", b"\x9e") or \
            data[2:3] != b"\x08" or not data[3] & 8:
        return None
    p = 10
    if data[3] & 4:
        p += 2 + struct.unpack("<H", data[10:12])[0]
    end = data.find(b"\0", p)
    return data[p:end] if end >= 0 else None

# ---------------------------------------------------------------- the invocations

DC = ["-dc", "-cd", "-d -c", "-c -d", "--decompress --stdout", "--uncompress --to-stdout",
      "-d --stdout", "--decompress -c", "-dc", "-dc"]


def opts(rng, pool):
    """Some options of pool [(option, probability)], shuffled."""
    out = [o for o, p in pool if rng.random() < p]
    rng.shuffle(out)
    return out


def cmdline(rng, pre, options, args, post=""):
    """'@T@ PRE OPTIONS ARGS POST', an option sometimes after the operands."""
    options = list(options)
    after = []
    if options and args and rng.random() < 0.15:
        after = [options.pop()]
    words = [TOOL] + ([pre] if pre else []) + options + args + after
    if rng.random() < 0.05 and not after and args:
        words = [TOOL] + ([pre] if pre else []) + options + ["--"] + args
    return " ".join(words) + (" " + post if post else "")


def gz_suffix(rng):
    return rng.choice([".gz"] * 10 + [".GZ", "-gz", ".z", "-z", "_z", ".tgz", ".taz", ".Z"])


def op_dc_pipe(c):
    rng = c.rng
    f = c.fresh(".gz")
    c.add_gz(f, c.gzfile())
    o = opts(rng, [("-v", .2), ("-q", .1), ("-f", .1), ("-N", .1), ("-n", .05), ("-k", .05),
                    ("--silent", .03), ("-a", .03)])
    c.cmd = cmdline(rng, rng.choice(DC), o, [c.arg(f)])
    c.stdout = rng.choice(["pipe", "pipe", "file"])


def op_dc_file(c):
    rng = c.rng
    f = c.fresh(".gz")
    c.add_gz(f, c.gzfile())
    out = c.fresh()
    c.names.add(out)
    o = opts(rng, [("-v", .15), ("-q", .1), ("-f", .1)])
    c.cmd = cmdline(rng, rng.choice(DC), o, [c.arg(f)], "> " + shlex.quote(out))


def op_dc_append(c):
    rng = c.rng
    f = c.fresh(".gz")
    c.add_gz(f, c.gzfile())
    out = c.fresh(".out")
    c.add(out, Content(gen_bytes(rng, rng.choice([1, 100, 4096, 5000, 65536, 300000]))), 0o644)
    c.cmd = cmdline(rng, rng.choice(DC), [], [c.arg(f)], ">> " + shlex.quote(out))


def op_dc_shared(c):
    rng = c.rng
    args = []
    for _ in range(rng.randint(2, 3)):
        f = c.fresh(".gz")
        c.add_gz(f, c.gzfile(nongzip=0.05))
        args.append(c.arg(f))
    pre = rng.choice(["prefix\\n", "", "x", "P%.0s' {1..5000}; printf '"])
    suf = rng.choice(["suffix\\n", "", "y"])
    out = c.fresh(".out")
    c.names.add(out)
    redir = ">"
    if rng.random() < 0.3:
        c.add(out, Content(gen_bytes(rng, rng.choice([1, 4096, 10000]))), 0o644)
        redir = ">>"
    if rng.random() < 0.25:     # the harness's own stdout, a regular file
        c.cmd = cmdline(rng, rng.choice(DC), [], args)
        c.stdout = "file"
        return
    c.cmd = "(printf '%s'; %s; st=$?; printf '%s'; exit $st) %s %s" % (
        pre, cmdline(rng, rng.choice(DC), [], args), suf, redir, shlex.quote(out))


def op_dc_dash(c):
    rng = c.rng
    a, b, s = c.fresh(".gz"), c.fresh(".gz"), c.fresh(".gz")
    for f in (a, b, s):
        c.add_gz(f, c.gzfile(nongzip=0.05))
    args = [c.arg(a), "-", c.arg(b)]
    if rng.random() < 0.3:
        args = ["-", c.arg(a)]
    c.cmd = cmdline(rng, rng.choice(DC), [], args, "< " + shlex.quote(s))
    r = rng.random()
    if r < 0.3:
        out = c.fresh(".out")
        c.names.add(out)
        c.cmd += " > " + shlex.quote(out)
    else:
        c.stdout = "file" if r < 0.5 else "pipe"


def op_dcf(c):
    rng = c.rng
    f = c.fresh(rng.choice([".gz", ".txt", ""]))
    c.add_gz(f, c.gzfile(nongzip=0.6))
    r = rng.random()
    pre = rng.choice(["-dcf", "-cdf", "-d -c -f", "--decompress --stdout --force", "-dfc"])
    o = opts(rng, [("-v", .15), ("-q", .1)])
    if r < 0.45:
        c.cmd = cmdline(rng, pre, o, [c.arg(f)])
    elif r < 0.65:
        c.cmd = cmdline(rng, pre, o, []) + " < " + shlex.quote(f)
    elif r < 0.8:
        g = c.fresh(".gz")
        c.add_gz(g, c.gzfile(nongzip=0.3))
        c.cmd = cmdline(rng, pre, o, [c.arg(g), c.arg(f), c.arg(g)])
    elif r < 0.9:
        c.cmd = "cat %s | %s" % (shlex.quote(f), cmdline(rng, pre, o, []))
    else:
        c.cmd = cmdline(rng, "-df", o, [c.arg(f)])       # -f without -c: no copying
    c.stdout = rng.choice(["pipe", "file"])


def op_dc_stdin(c):
    rng = c.rng
    f = c.fresh(".gz")
    c.add_gz(f, c.gzfile())
    r = rng.random()
    q = shlex.quote(f)
    if r < 0.3:
        c.cmd = "%s -d < %s" % (TOOL, q)
    elif r < 0.5:
        c.cmd = "%s %s < %s" % (TOOL, rng.choice(DC), q)
    elif r < 0.7:
        c.cmd = "cat %s | %s -d" % (q, TOOL)
    elif r < 0.8:
        c.cmd = "%s -d - < %s" % (TOOL, q)
    elif r < 0.9:
        c.cmd = "%s < %s -d -v" % (TOOL, q)
    else:
        out = c.fresh(".out")
        c.names.add(out)
        c.cmd = "%s -d < %s > %s" % (TOOL, q, shlex.quote(out))
    c.stdout = rng.choice(["pipe", "file"])


def existing_output(c, name, p=0.25):
    rng = c.rng
    if rng.random() < p and name not in c.used:
        c.add(name, Content(gen_bytes(rng, rng.choice([0, 10, 5000]))), 0o644, "existing output")


def op_d_inplace(c):
    rng = c.rng
    custom = rng.random() < 0.12
    suf = rng.choice([".suf", ".xyz", "_x", ".gz", ".Gz", "z", "-xz"]) if custom else None
    args = []
    for _ in range(1 if rng.random() < 0.8 else 2):
        s = suf if custom else gz_suffix(rng)
        f = c.fresh(s)
        c.add_gz(f, c.gzfile(nongzip=0.08))
        args.append(c.arg(f))
        out = f[:-len(s)] if custom else strip_suffix(f)
        c.names.add(out)
        existing_output(c, out)
    o = opts(rng, [("-f", .3), ("-k", .3), ("-N", .2), ("-n", .08), ("-v", .25), ("-q", .08),
                    ("-M", .06), ("-m", .04), ("--synchronous", .03)])
    if custom:
        o.insert(rng.randrange(len(o) + 1), rng.choice(
            ["-S " + shlex.quote(suf), "--suffix=" + shlex.quote(suf), "-S" + shlex.quote(suf),
             "--suffix " + shlex.quote(suf)]))
    c.cmd = cmdline(rng, rng.choice(["-d", "--decompress", "--uncompress", "-d"]), o, args)


def op_d_noext(c):
    rng = c.rng
    base = c.fresh()
    s = rng.choice([".gz"] * 6 + [".z", "-gz", "-z", "_z", ".Z", ".tgz"])
    c.add_gz(base + s, c.gzfile(nongzip=0.05))
    if rng.random() < 0.25:
        c.add(base, Content(gen_bytes(rng, 100)), 0o644, "the name itself exists")
    c.names.add(base)
    o = opts(rng, [("-f", .2), ("-k", .2), ("-v", .2), ("-q", .05)])
    c.cmd = cmdline(rng, "-d", o, [c.arg(base)])


def op_d_links(c):
    rng = c.rng
    real = c.fresh(".gz")
    c.add_gz(real, c.gzfile(nongzip=0.03, single=True))
    r = rng.random()
    link = c.fresh(".gz")
    if r < 0.45:
        c.add_special(link, "symlink", real)
    elif r < 0.85:
        c.add_special(link, "hardlink", real)
    elif r < 0.93:
        c.add_special(link, "symlink", "nowhere.gz")
    else:
        d = c.fresh()
        c.add_special(d, "dir")
        c.add_special(link, "symlink", d)
    c.names.add(strip_suffix(link))
    o = opts(rng, [("-f", .45), ("-k", .3), ("-v", .2), ("-c", .2)])
    if "-c" in o:
        c.stdout = "pipe"
    c.cmd = cmdline(rng, "-d", o, [c.arg(link)] + ([c.arg(real)] if rng.random() < 0.2 else []))


def op_special(c):
    """A directory, a missing file, next to a good one."""
    rng = c.rng
    pre = rng.choice(["-d", "-dc", "-t", "-l", "", "-c"])
    if pre in ("", "-c"):
        good = c.fresh()
        c.add(good, gen_content(rng, small=True))
        c.mode = "c"
    else:
        good = c.fresh(".gz")
        c.add_gz(good, c.gzfile(nongzip=0.0, single=True))
        c.listing = pre == "-l"
    d = c.fresh(rng.choice([".gz", ""]))
    if rng.random() < 0.5:
        c.add_special(d, "dir")
        c.files.append((d + "/inner", "file", b"inside\n", 0o644))
    else:
        c.names.add(d)                                  # missing
    args = [c.arg(d), c.arg(good)]
    if rng.random() < 0.4:
        args.reverse()
    o = opts(rng, [("-v", .2), ("-q", .1), ("-f", .2), ("-k", .3)])
    c.cmd = cmdline(rng, pre, o, args)


def op_test(c):
    rng = c.rng
    args = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        f = c.fresh(gz_suffix(rng))
        c.add_gz(f, c.gzfile(nongzip=0.1))
        args.append(c.arg(f))
    o = opts(rng, [("-v", .35), ("-q", .1), ("-f", .05)])
    pre = rng.choice(["-t", "--test", "-t", "-tv"])
    r = rng.random()
    if r < 0.2:
        c.cmd = cmdline(rng, pre, o, []) + " < " + args[0]
    elif r < 0.3:
        c.cmd = "cat %s | %s" % (args[0], cmdline(rng, pre, o, []))
    else:
        c.cmd = cmdline(rng, pre, o, args)


def op_list(c):
    rng = c.rng
    c.listing = True
    args = []
    gzs = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        f = c.fresh(gz_suffix(rng))
        g = c.gzfile(nongzip=0.06)
        c.add_gz(f, g)
        gzs.append(g)
        args.append(c.arg(f))
    o = opts(rng, [("-v", .35), ("-N", .2), ("-q", .05), ("-n", .05), ("-M", .06), ("-m", .04)])
    pre = rng.choice(["-l", "--list", "-l", "-lv"])
    r = rng.random()
    if r < 0.2:
        c.cmd = cmdline(rng, pre, o, []) + " < " + args[0]
        c.list_exact = {}
        if gzs[0].exact is not None:
            c.exact_names("-", gzs[0], stdin=True)
    else:
        c.cmd = cmdline(rng, pre, o, args)


def op_c_inplace(c):
    rng = c.rng
    c.mode = "c"
    custom = rng.random() < 0.1
    suf = rng.choice([".suf", ".xyz", "_x", ".gz", "z"]) if custom else ".gz"
    args = []
    for _ in range(1 if rng.random() < 0.8 else 2):
        if rng.random() < 0.1:
            f = c.fresh(rng.choice([".gz", ".GZ", ".z", "-gz", "_z", ".tgz", ".taz", ".Z"]))
        else:
            f = c.fresh(rng.choice(["", "", "", ".txt", ".tar", ".bin"]))
        c.add(f, gen_content(rng))
        args.append(c.arg(f))
        c.names.add(f + suf)
        if rng.random() < 0.2:
            c.add(f + suf, Content(gen_bytes(rng, rng.choice([0, 10, 5000]))), 0o644,
                  "existing output")
    o = opts(rng, [("-k", .3), ("-f", .3), ("-N", .1), ("-n", .15), ("-v", .25), ("-q", .08),
                    ("-m", .08), ("-M", .04), ("--synchronous", .05), ("-a", .02)])
    if rng.random() < 0.5:
        o.append(rng.choice(["-%d" % rng.randint(1, 9), "--fast", "--best"]))
    if custom:
        o.insert(rng.randrange(len(o) + 1), rng.choice(
            ["-S " + shlex.quote(suf), "--suffix=" + shlex.quote(suf), "-S" + shlex.quote(suf)]))
    c.cmd = cmdline(rng, "", o, args)


def op_c_stdout(c):
    rng = c.rng
    c.mode = "c"
    f = c.fresh(rng.choice(["", ".txt", ".gz"]))
    c.add(f, gen_content(rng) if not c.big else gen_big(rng))
    q = shlex.quote(f)
    o = opts(rng, [("-n", .2), ("-N", .1), ("-v", .1), ("-q", .05), ("-f", .05), ("-m", .1),
                    ("-M", .05)])
    if rng.random() < 0.5:
        o.append("-%d" % rng.randint(1, 9))
    r = rng.random()
    c.stdout = rng.choice(["pipe", "file"])
    if r < 0.35:
        c.cmd = cmdline(rng, rng.choice(["-c", "--stdout", "--to-stdout"]), o, [c.arg(f)])
    elif r < 0.5:
        c.cmd = cmdline(rng, "", o, []) + " < " + q
    elif r < 0.6:
        c.cmd = "cat %s | %s" % (q, cmdline(rng, "", o, []))
    elif r < 0.7:
        g = c.fresh()
        c.add(g, gen_content(rng, small=True))
        out = c.fresh(".gz")
        c.names.add(out)
        c.cmd = cmdline(rng, "-c", o, [c.arg(f), c.arg(g)]) + " > " + shlex.quote(out)
    elif r < 0.8:
        c.cmd = cmdline(rng, "-c", o, ["-"]) + " < " + q
    elif r < 0.9:
        old = c.fresh(".gz")
        c.add(old, handmade(rng, b"an older member\n")[0], 0o644, "an existing gzip file")
        c.cmd = cmdline(rng, "-c", o, [c.arg(f)]) + " >> " + shlex.quote(old)
    else:
        g = c.fresh()
        c.add(g, gen_content(rng, small=True))
        c.cmd = cmdline(rng, "-c", o, [c.arg(f), "-"]) + " < " + shlex.quote(g)


def op_c_links(c):
    rng = c.rng
    c.mode = "c"
    real = c.fresh()
    c.add(real, gen_content(rng, small=True))
    link = c.fresh()
    r = rng.random()
    if r < 0.45:
        c.add_special(link, "symlink", real)
    elif r < 0.9:
        c.add_special(link, "hardlink", real)
    else:
        c.add_special(link, "symlink", "nowhere")
    c.names.add(link + ".gz")
    o = opts(rng, [("-f", .45), ("-k", .3), ("-v", .2), ("-c", .2)])
    c.cmd = cmdline(rng, "", o, [c.arg(link)])


def op_same_file(c):
    """Standard input, or the input, is the output (gzip may read its own output)."""
    rng = c.rng
    lim = "ulimit -f 20480; "
    r = rng.random()
    if r < 0.5:
        f = c.fresh()
        c.add(f, gen_content(rng, small=rng.random() < 0.5), 0o644)
        c.mode = "c"
        q = shlex.quote(f)
        form = rng.choice(["%s -c < %s >> %s", "%s < %s >> %s", "%s -c < %s 1<> %s",
                           "%s -c %s >> %s"])
        c.cmd = lim + form % (TOOL, q, q)
    else:
        f = c.fresh(".gz")
        c.add_gz(f, c.gzfile(nongzip=0.0, single=True), 0o644)
        q = shlex.quote(f)
        form = rng.choice(["%s -dc < %s >> %s", "%s -d < %s >> %s", "%s -dc < %s 1<> %s",
                           "%s -dc %s >> %s"])
        c.cmd = lim + form % (TOOL, q, q)
    if " < " in c.cmd:
        c.same_stdin = f


def op_dc_head(c):
    """A reader that stops early: the writer gets SIGPIPE or EPIPE."""
    rng = c.rng
    f = c.fresh(".gz")
    content = Content(gen_bytes(rng, rng.randint(3 * M, 6 * M)))
    st = c.produce(content, rng.choice(["gzip", "spigz", "spigz", "pigz", "python"]))
    c.add_gz(f, GzFile(st.data, st.desc, [(0, st)]))
    c.cmd = "%s | head -c %d > /dev/null; exit ${PIPESTATUS[0]}" % (
        cmdline(rng, rng.choice(DC), [], [c.arg(f)]), rng.choice([0, 1, 1000, 100000]))


def op_env(c):
    """The GZIP environment variable."""
    rng = c.rng
    c.env["GZIP"] = rng.choice(["-q", "-v", "-1", "-9", "-n", "-N", "--fast", "-c", "-q -v",
                                "--rsyncable", "-k", "--silent", "-m", "-a", "--synchronous"])
    rng.choice([op_dc_pipe, op_d_inplace, op_c_inplace, op_c_stdout, op_test])(c)


OPS = [("dc-pipe", op_dc_pipe, 10), ("dc-file", op_dc_file, 6), ("dc-append", op_dc_append, 4),
       ("dc-shared", op_dc_shared, 6), ("dc-dash", op_dc_dash, 4), ("dcf", op_dcf, 5),
       ("dc-stdin", op_dc_stdin, 5), ("d-inplace", op_d_inplace, 12),
       ("d-noext", op_d_noext, 4), ("d-links", op_d_links, 3), ("special", op_special, 3),
       ("test", op_test, 7), ("list", op_list, 7), ("c-inplace", op_c_inplace, 9),
       ("c-stdout", op_c_stdout, 7), ("c-links", op_c_links, 3),
       ("same-file", op_same_file, 2), ("dc-head", op_dc_head, 2), ("env", op_env, 2)]


def generate(h, n, big, pdir):
    c = Case(h, n, big, pdir)
    if big:
        pool = [("list", op_list, 3), ("test", op_test, 2), ("dc-pipe", op_dc_pipe, 1)]
        if h.a.big_slow:
            pool += [("d-inplace", op_d_inplace, 1), ("dc-file", op_dc_file, 1),
                     ("c-stdout", op_c_stdout, 1)]
    else:
        pool = OPS
    cat, fn, _ = c.rng.choices(pool, [w for _, _, w in pool])[0]
    c.cat = cat + (" (4 GiB)" if big else "")
    fn(c)
    if big and not h.a.big_slow:
        c.stdout = "pipe"           # no 4 GiB file written outside the scratch
    if c.env:
        c.cat = "env"
    return c

# ---------------------------------------------------------------- running


class Run:
    pass


def setup(c, root):
    os.mkdir(root)
    t = 1500000000
    mt = {}
    for i, (name, kind, payload, mode) in enumerate(c.files):
        p = os.path.join(root, name)
        if kind == "file":
            if isinstance(payload, Content):
                payload.write(p)
            else:
                with open(p, "wb") as f:
                    f.write(payload)
            ns = c.mtimes.get(name, (t + i * 86400) * 10 ** 9 + 123456789 + i)
            os.utime(p, ns=(ns, ns))
            os.chmod(p, mode)
            mt.setdefault(ns, name)
        elif kind == "symlink":
            os.symlink(payload, p)
        elif kind == "hardlink":
            os.link(os.path.join(root, payload), p)
        elif kind == "dir":
            os.mkdir(p)
    return mt


def pump(pipe, d, save):
    try:
        while True:
            b = pipe.read1(M) if hasattr(pipe, "read1") else pipe.read(M)
            if not b:
                break
            d.feed(b)
            if save is not None:
                save.write(b)
    finally:
        if save is not None:
            save.close()


def status_class(rc):
    if rc is None:
        return "timeout"
    if rc < 0:
        return "signal %d" % -rc
    if rc > 128 and rc <= 128 + 64:
        return "signal %d" % (rc - 128)
    if rc in (0, 1, 2):
        return str(rc)
    return "status %d" % rc


def run_tool(h, c, cdir, which, tool):
    r = Run()
    root = os.path.join(cdir, which)
    r.root = root
    r.orig_mtimes = setup(c, root)
    cap = os.path.join(cdir, "cap")
    os.makedirs(cap, exist_ok=True)
    r.cmd = c.cmd.replace(TOOL, shlex.quote(tool))
    env = dict(h.env)
    env.update(c.env)
    r.errpath = os.path.join(cap, which + ".err")
    r.outpath = os.path.join(cap, which + ".out")
    keep = 4 * M
    r.out = Digest(keep)
    ferr = open(r.errpath, "wb")
    r.t0 = time.time_ns()
    save = None
    if c.stdout == "file":
        fout = open(r.outpath, "wb")
    else:
        fout = subprocess.PIPE
        if c.mode == "c":
            save = open(r.outpath, "wb")
    p = subprocess.Popen(["bash", "-c", r.cmd], cwd=root, env=env, stdin=subprocess.DEVNULL,
                         stdout=fout, stderr=ferr, start_new_session=True)
    th = None
    if fout is subprocess.PIPE:
        th = threading.Thread(target=pump, args=(p.stdout, r.out, save), daemon=True)
        th.start()
    else:
        fout.close()
    ferr.close()
    limit = BIG_TIMEOUT if c.big else TIMEOUT
    try:
        rc = p.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
        rc = None
    if th is not None:
        th.join()
        p.stdout.close()
    else:
        r.out = file_digest(r.outpath, keep)
    r.secs = (time.time_ns() - r.t0) / 1e9
    r.rc = rc
    r.cls = status_class(rc)
    with open(r.errpath, "rb") as f:
        r.err = f.read()
    r.snap = snapshot(root, r.orig_mtimes, r.t0)
    r.extra = sorted(set(os.listdir(cdir)) - {"g", "s", "cap", "prod", "orig"})
    return r


def mtime_tag(ns, orig, t0):
    if ns in orig:
        return "= mtime of %s" % orig[ns]
    if abs(ns - t0) < 3600 * 10 ** 9:
        return "now"
    return "%d.%09d" % divmod(ns, 10 ** 9)


def snapshot(root, orig, t0):
    snap = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for nm in sorted(dirnames + filenames):
            p = os.path.join(dirpath, nm)
            rel = os.path.relpath(p, root)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                snap[rel] = ("symlink", os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                snap[rel] = ("dir", "%o" % (st.st_mode & 0o7777))
            elif stat.S_ISREG(st.st_mode):
                d = file_digest(p)
                with open(p, "rb") as f:
                    head = f.read(2)
                snap[rel] = ("file", "mode %o" % (st.st_mode & 0o7777), "links %d" % st.st_nlink,
                             "mtime " + mtime_tag(st.st_mtime_ns, orig, t0), d.hexdigest(),
                             head)
            else:
                snap[rel] = ("other", "%o" % stat.S_IFMT(st.st_mode))
    return snap

# ---------------------------------------------------------------- compressed outputs


def headers(data, orig, t0):
    """(FNAME, MTIME) of the members that carry a name, a time or data."""
    out, pos = [], 0
    while pos < len(data):
        b = data
        if b[pos:pos + 3] != b"\x1f\x8b\x08" or len(b) < pos + 10:
            out.append(("not a member at %d" % pos,))
            break
        flg = b[pos + 3]
        mtime = struct.unpack("<I", b[pos + 4:pos + 8])[0]
        p = pos + 10
        name = None
        try:
            if flg & 4:
                p += 2 + struct.unpack("<H", b[p:p + 2])[0]
            if flg & 8:
                e = b.index(b"\0", p)
                name = b[p:e]
                p = e + 1
            if flg & 16:
                p = b.index(b"\0", p) + 1
            if flg & 2:
                p += 2
        except ValueError:
            out.append(("bad header at %d" % pos,))
            break
        d = zlib.decompressobj(-15)
        rest = b[p:]
        while not d.eof:
            d.decompress(rest, 16 * M)
            rest = d.unconsumed_tail
            if not rest and not d.eof:
                break
        if not d.eof:
            out.append(("cut member at %d" % pos,))
            break
        end = len(b) - len(d.unused_data)
        isize = struct.unpack("<I", b[end + 4:end + 8])[0] if end + 8 <= len(b) else -1
        if name is not None or mtime != 0 or isize != 0:
            if mtime == 0:
                mt = "0"
            else:
                mt = next(("= mtime of %s" % v for k, v in orig.items()
                           if k // 10 ** 9 == mtime), None)
                if mt is None:
                    mt = "now" if abs(mtime - t0 / 1e9) < 3600 else str(mtime)
            out.append((name, mt))
        pos = end + 8
    return out


def decoded(h, path, orig, t0):
    """What a compressed output means: gzip -dc's status and output, the names
    and times its members carry."""
    with open(path, "rb") as f:
        p = subprocess.Popen([h.gzip, "-dc"], stdin=f, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, env=h.env)
        d = Digest()
        pump(p.stdout, d, None)
        rc = p.wait()
    with open(path, "rb") as f:
        data = f.read()
    return ("gzip -dc: status %d" % rc, d.hexdigest(), "headers %r" % headers(data, orig, t0))

# ---------------------------------------------------------------- comparison

LIST_RE = re.compile(rb"^(?P<pre>.*?)(?P<c> *\d+) (?P<u> *\d+) (?P<r> *\S+%) (?P<n>.*)$")

TRAILING = ("trailing zeros", "trailing garbage", "bytes of garbage")


def mutation(gzf):
    m = re.match(r"mutation: (.*?); members:", gzf.desc)
    return m.group(1) if m else ""


def has_lzh(c):
    """D-lzh: an input holds SCO compress -H's magic (1f a0) where gzip looks
    for a member."""
    return any(mutation(g).startswith("trailing garbage 1fa0") or g.data[:2] == b"\x1f\xa0"
               for g in c.gz.values())


def later_refused(err, prog):
    """D-later-member: the files whose member gzip refused with a header (or
    LZW width) error, as named in its messages."""
    pat = re.compile(r"(?:^|\s)%s: (\S.*?):? (?:unknown method \d+|is encrypted|"
                     r"has flags 0x[0-9a-f]+|compressed with \d+ bits|header checksum 0x)" %
                     re.escape(prog), re.M)
    return set(pat.findall(err))


def drop_lines(err, pats):
    """err without the lines matching any of pats, and whether any went."""
    out, gone = [], False
    for ln in err.split(b"\n"):
        if any(re.search(p, ln) for p in pats):
            gone = True
        else:
            out.append(ln)
    return b"\n".join(out), gone


def is_prefix(a, b):
    """One is a prefix of the other, but for what both end with (a suffix a
    shell wrote after the tool)."""
    n = 0
    while n < min(len(a), len(b)) and a[len(a) - 1 - n] == b[len(b) - 1 - n]:
        n += 1
    a, b = a[:len(a) - n], b[:len(b) - n]
    return a[:min(len(a), len(b))] == b[:min(len(a), len(b))]


def spigz_listed(c):
    """D-list-exact: the listing names of the inputs that end with a spigz
    footer (gzip lists that empty member: size 0, CRC 0)."""
    names = set()
    for name, g in c.gz.items():
        f = g.data[-78:]
        if len(f) == 78 and f[:4] == b"\x1f\x8b\x08\x04" and f[12:14] == b"SF":
            base = strip_suffix(os.path.basename(name))
            names |= {base, "./" + base, "stdout"}
            st = stored_name(g.data)
            if st:
                names.add(os.path.basename(st.decode("latin-1")))
                names.add("./" + os.path.basename(st.decode("latin-1")))
    return {n.encode("latin-1") for n in names}


def compare_list(h, c, g, s, skip=()):
    """-l output, D-list-exact applied to the inputs it covers.  skip: the
    listing names of inputs gzip lists differently on purpose (D-list-
    trailing: gzip prints no line for a file with bytes after its last member;
    D-later-member: gzip lists a file whose later member it refused)."""
    gl, sl = g.split(b"\n"), s.split(b"\n")
    tot = [i for i, ln in enumerate(gl) if ln.endswith(b"% (totals)")]
    stot = [i for i, ln in enumerate(sl) if ln.endswith(b"% (totals)")]
    if tot and gl != sl and (len(tot) > 1 or not stot):
        # D-list-totals: gzip 1.12 prints a totals line after a file it failed
        # to list (and after one with trailing bytes), with -q too, as well
        # as at the end
        extra = tot[:-1] if stot else tot
        gl = [ln for i, ln in enumerate(gl) if i not in extra]
        h.allow("D-list-totals")
    if skip and gl != sl:
        names = {n.encode("latin-1") for n in skip}

        def keep(lines):
            return [ln for ln in lines
                    if not ((m := LIST_RE.match(ln)) and m.group("n") in names | {b"(totals)"})]
        def heading_only(lines):      # a heading with no entry under it goes too
            return [] if not any(LIST_RE.match(ln) for ln in lines) else lines
        gl2, sl2 = heading_only(keep(gl)), heading_only(keep(sl))
        if len(gl2) == len(sl2):
            h.allow("D-list-trailing")
            gl, sl = gl2, sl2
    footers = spigz_listed(c)
    if footers and len(sl) == len(gl) + 1 and any(ln.endswith(b"% (totals)") for ln in sl) \
            and not any(ln.endswith(b"% (totals)") for ln in gl):
        # gzip prints no totals when all it listed has size 0: the footers
        sl = [ln for ln in sl if not ln.endswith(b"% (totals)")]
        h.allow("D-list-exact")
    if len(gl) != len(sl):
        return ["-l: gzip printed %d lines, spigz %d: gzip %r, spigz %r" % (
            len(gl) - 1, len(sl) - 1, g[:300].decode("latin-1"), s[:300].decode("latin-1"))], False
    probs, used, any_exact = [], False, False
    exact = {k.encode("latin-1"): v for k, v in c.list_exact.items()}
    for i, (a, b) in enumerate(zip(gl, sl)):
        ma, mb = LIST_RE.match(a), LIST_RE.match(b)
        if ma and mb and a != b:
            nm = ma.group("n")
            footer = nm in footers and int(ma.group("u")) == 0
            if nm in exact or footer or (nm == b"(totals)" and any_exact):
                any_exact = any_exact or footer
                if nm in exact:
                    any_exact = True
                    if int(mb.group("u")) not in exact[nm]:
                        probs.append("-l of %s: spigz shows %d bytes, the content has %s" % (
                            nm.decode("latin-1"), int(mb.group("u")),
                            " or ".join(map(str, sorted(exact[nm])))))

                def blank(m, line):
                    # the size and ratio, and with -v the CRC and the date,
                    # are the data member's, not the empty footer's
                    for k in ("u", "r", "pre"):
                        line = line[:m.start(k)] + b"#" * (m.end(k) - m.start(k)) + \
                            line[m.end(k):]
                    return line
                a, b = (re.sub(rb"[# ]+", b"#", blank(m, ln)) for m, ln in ((ma, a), (mb, b)))
                used = True
        if a != b and ma and mb and ma.group("n").rsplit(b"/", 1)[-1] in (b".", b"..", b""):
            # D-unusable-name: gzip -lN shows a stored name "." or "..";
            # spigz, which will not use it, the name without -N
            if a[:ma.start("n")] == b[:mb.start("n")]:
                h.allow("D-unusable-name")
                continue
        if a != b:
            probs.append("-l line %d: gzip %r, spigz %r" % (i, a.decode("latin-1"),
                                                            b.decode("latin-1")))
    return probs, used


def name_pattern(n):
    return re.compile(r"(?<![\w.~-])" + re.escape(n) + r"(?![\w~-])(?!\.\w)")


def messages(h, c, rg, rs, names):
    """Which files the messages name, the program-name prefix."""
    probs = []
    ge, se = rg.err.decode("latin-1"), rs.err.decode("latin-1")
    # D-verbose-notes: gzip -v notes each member's extra field as it reads
    # headers, also of a file spigz does not decode (an output that exists)
    # or decodes through its index
    ge2 = re.sub(r"(?m)(?:^|\t)%s: .*: extra field of \d+ bytes ignored$" %
                 re.escape(h.gzip_prog), "", ge)
    if ge2 != ge:
        h.allow("D-verbose-notes")
        ge = ge2
        se = re.sub(r"(?m)^\S+: .*: (?:extra field of \d+ bytes ignored|decoded through its "
                    r"index|exact sizes from (?:its index|the indexes .*)|the size shown is gzip's.*|"
                    r"\d+ members: the size shown is the last one's.*)$", "", se)
    gn = {n for n in names if len(n) > 1 and name_pattern(n).search(ge)}
    sn = {n for n in names if len(n) > 1 and name_pattern(n).search(se)}
    miss = sorted(gn - sn)
    if miss:
        probs.append("spigz's messages do not name %s (gzip's do)" % ", ".join(miss))
    gp = [ln for ln in ge.splitlines() if ln.startswith(h.gzip_prog + ":")]
    sprog = ("spigz:", os.path.basename(h.spigz) + ":")
    sp = [ln for ln in se.splitlines() if ln.startswith(sprog)]
    if gp and not sp:
        probs.append("gzip printed %d '%s:' message(s), spigz none with its name" % (
            len(gp), h.gzip_prog))
    if not ge.strip() and se.strip():
        probs.append("spigz printed messages, gzip none")
    if ge.strip() and not se.strip():
        probs.append("gzip printed messages, spigz none")
    return probs


def orig_snap(c, rs):
    """The scratch as it was before spigz ran (made once, on demand)."""
    if getattr(rs, "snap_orig", None) is None:
        rs.snap_orig = snapshot_setup(c, os.path.dirname(rs.root))
    return rs.snap_orig


def compare(h, c, rg, rs):
    fails = []          # (kind, detail)
    if rg.cls == "timeout" or rs.cls == "timeout":
        fails.append(("timeout", "gzip %s, spigz %s" % (rg.cls, rs.cls)))
    if has_lzh(c):
        # D-lzh: gzip decodes (or fails on) what follows as LZH; spigz does not
        h.allow("D-lzh")
        return fails + [("crash", "spigz %s" % rs.cls)] if rs.cls.startswith("signal") else fails
    gerr, serr = rg.err.decode("latin-1"), rs.err.decode("latin-1")
    # D-verbose-notes: what spigz says with -v about -l's sizes and its index
    if not rg.err.strip():
        rs.err, gone = drop_lines(rs.err, [rb"the size shown is gzip's",
                                           rb"members: the size shown is the last one's",
                                           rb"exact sizes from its index",
                                           rb"exact sizes from the indexes",
                                           rb"decoded through its index"])
        if gone:
            h.allow("D-verbose-notes")
    # D-index-warning: spigz says a spigz file's index is damaged
    scls = rs.cls
    quiet = re.search(r"(?:^|\s)-\w*q", c.cmd) or "-q" in c.env.get("GZIP", "")
    if quiet and rs.cls == "2" and rg.cls == "0" and not rs.err.strip() and any(
            "spigz -c" in g.desc and "--no-index" not in g.desc and mutation(g) != "none"
            for g in c.gz.values()):
        scls = "0"          # -q: the index warning unsaid, its status kept
        h.allow("D-index-warning")
    if re.search(rb"index not used", rs.err) and not re.search(rb"index", rg.err):
        rs.err, _ = drop_lines(rs.err, [rb"index not used"])
        if scls == "2" and rg.cls == "0" and not re.search(
                rb"trailing|not overwritten|warning, unknown|timestamp out of range|"
                rb"unknown suffix|-- ignored|other link|changed", rs.err):
            scls = "0"
        h.allow("D-index-warning")
    # D-same-file: spigz refuses an output that is its input, named or stdin
    if rs.cls == "1" and b"input and output are the same file" in rs.err:
        orig = orig_snap(c, rs)
        if {k: v for k, v in rs.snap.items() if k in orig} == orig:
            h.allow("D-same-file")
            return fails
    if c.listing and rg.cls == "1" and spigz_listed(c):
        # D-list-exact: spigz lists a spigz file from its index, undecoded;
        # gzip decodes it, and on damaged data stops there
        for name, g in c.gz.items():
            f = g.data[-78:]
            if f[12:14] == b"SF" and re.search(
                    r"%s: (?:(?:\./)?%s|stdin): (?:invalid|unexpected|crc)" % (
                        re.escape(h.gzip_prog), re.escape(name)), gerr):
                h.allow("D-list-exact")
                return fails
    refused = later_refused(gerr, h.gzip_prog) if rg.cls == rs.cls == "1" else set()
    refused = {f for f in refused if f in serr}
    skip = set()
    if c.listing:
        for name, g in c.gz.items():
            said = re.search(r"%s: (?:\./)?%s: decompression OK, trailing" % (
                re.escape(h.gzip_prog), re.escape(name)), gerr)
            if said or any(t in mutation(g) for t in TRAILING):
                base = strip_suffix(os.path.basename(name))
                skip |= {base, "./" + base, name, "stdout"}
                st = stored_name(g.data)
                if st:
                    skip.add(os.path.basename(st.decode("latin-1")))
                    skip.add("./" + os.path.basename(st.decode("latin-1")))
        for f in refused:
            base = strip_suffix(os.path.basename(f))
            skip |= {base, "./" + base, f}
    # D-unusable-name: -N and a stored name that is "", "." or "..": gzip
    # tries to create a file by that name; spigz names it as without -N
    with_n = "-N" in c.cmd or "--name" in c.cmd or "-N" in c.env.get("GZIP", "")
    unusable = [f for f, g in c.gz.items() if with_n and (st := stored_name(g.data)) is not
                None and st.rsplit(b"/", 1)[-1] in (b"", b".", b"..")]
    empty_name = bool(unusable)
    # ... and so gzip fails to create it and goes on to the next file, where
    # spigz decodes it, and stops if its data is damaged: later files are
    # decompressed by gzip only
    stopped_on_unusable = rs.cls == "1" and any(
        re.search(r"(?:^|\s|/)" + re.escape(os.path.basename(f)) +
                  r": (?:invalid compressed data|unexpected end of file)", serr)
        for f in unusable)
    # D-cut-header: gzip 1.12 removes the previous file's output when the
    # next one's header is cut short (its output name still in hand)
    cut = rg.cls == rs.cls == "1" and "unexpected end of file" in gerr
    both_failed = rg.cls == rs.cls == "1"
    # the same error on the same file, after another file was decoded: gzip's
    # window still holds that file's bytes when the data is invalid
    fe = re.findall(r"%s: (\S.*?): (invalid compressed data.*|unexpected end of file)" %
                    re.escape(h.gzip_prog), gerr)
    # (gzip may report a crc and then a length error for one member)
    same_failure = both_failed and bool(fe) and all(
        re.search(re.escape(f) + r": (?:invalid compressed data|unexpected end of file)", serr)
        for f, _ in fe) and len(c.gz) > 1
    # D-same-file: spigz may refuse when stdin is the output; gzip does anything.
    if c.same_stdin is not None:
        ent = rs.snap.get(c.same_stdin)
        orig = rs.snap_orig.get(c.same_stdin)
        if rs.cls == "1" and ent == orig and rs.err.strip():
            h.allow("D-same-file")
            return fails
    if empty_name and rg.cls != scls:
        h.allow("D-unusable-name")
    elif rg.cls != scls:
        fails.append(("status", "gzip %s, spigz %s" % (rg.cls, scls)))
    # stdout
    go, so = rg.out, rs.out
    if c.listing:
        probs, used = compare_list(h, c, bytes(go.kept), bytes(so.kept), skip)
        if used:
            h.allow("D-list-exact")
        fails += [("stdout", p) for p in probs]
    elif go.hexdigest() != so.hexdigest():
        detail = None
        if c.mode == "c" and go.total() and so.total():
            gi = decoded(h, rg.outpath, rg.orig_mtimes, rg.t0)
            si = decoded(h, rs.outpath, rs.orig_mtimes, rs.t0)
            if gi == si:
                h.allow("D-compressed-bytes")
            elif stdin_unnamed(gi) == stdin_unnamed(si):
                h.allow("D-compressed-bytes")
                h.allow("D-stdin-name")
            else:
                detail = "compressed stdout means %s with gzip, %s with spigz" % (gi, si)
        elif both_failed and go.total() <= go.keep and so.total() <= so.keep and \
                is_prefix(bytes(go.kept), bytes(so.kept)):
            h.allow("D-error-output")
        elif same_failure:
            h.allow("D-error-output")   # gzip's window carries over from the file before
        else:
            detail = "stdout: gzip %d bytes, spigz %d bytes%s" % (
                go.total(), so.total(), first_diff(go, so))
        if detail:
            fails.append(("stdout", detail))
    # files
    outs = {strip_suffix(os.path.basename(f)) for f in refused}
    for f in refused:       # -N: the output gzip kept has the stored name
        g = c.gz.get(f) or c.gz.get(os.path.basename(f))
        st = stored_name(g.data) if g is not None else None
        if st:
            outs.add(os.path.basename(st.decode("latin-1")))
    inputs = {n for n, _, _, _ in c.files}
    for name in sorted(set(rg.snap) | set(rs.snap)):
        a, b = rg.snap.get(name), rs.snap.get(name)
        if a is None or b is None:
            base = os.path.basename(name)
            if refused and (name in refused or base in outs or name in outs or
                            (a is None and name in inputs) or
                            any(os.path.basename(f).startswith(base) for f in refused)):
                h.allow("D-later-member")       # gzip kept the output, removed the input
                continue
            if empty_name and (a is None or name in inputs or (stopped_on_unusable and b is None)):
                h.allow("D-unusable-name")
                continue
            def output_of(i):       # the names an input's output can have
                g = c.gz.get(i)
                st = stored_name(g.data) if g is not None else None
                return {strip_suffix(i)} | ({os.path.basename(st.decode("latin-1"))} if st else set())
            def failed(i):
                return re.search(re.escape(i) + r":? (?:unexpected|invalid|not in gzip|"
                                 r"unknown method|has flags|is encrypted)", gerr)
            if cut and a is None and name not in inputs and any(
                    name in output_of(i) and not failed(i) for i in inputs):
                h.allow("D-cut-header")
                continue
            if both_failed and a is None and name in inputs and \
                    rs.snap[name] == orig_snap(c, rs).get(name):
                h.allow("D-force-keeps")        # -f: the old output stays on failure
                continue
            fails.append(("files", "%s exists only after %s (%s)" % (
                name, "gzip" if b is None else "spigz", desc_entry(a or b))))
            continue
        if a == b:
            continue
        if refused and (name in outs or os.path.basename(name) in outs):
            h.allow("D-later-member")           # gzip wrote it over the old one
            continue
        if both_failed and a[0] == b[0] == "file" and (same_failure or is_prefix(
                read_file(os.path.join(rg.root, name)), read_file(os.path.join(rs.root, name)))):
            h.allow("D-error-output")           # its time changed with its content
            continue
        if a[0] != b[0]:
            fails.append(("files", "%s: %s after gzip, %s after spigz" % (
                name, desc_entry(a), desc_entry(b))))
            continue
        diffs = ["%s vs %s" % (x, y) for x, y in zip(a[1:4], b[1:4]) if x != y]
        if a[0] == "file" and a[4] != b[4]:
            if c.mode == "c" and a[5] == b[5] == b"\x1f\x8b":
                gi = decoded(h, os.path.join(rg.root, name), rg.orig_mtimes, rg.t0)
                si = decoded(h, os.path.join(rs.root, name), rs.orig_mtimes, rs.t0)
                if gi == si:
                    h.allow("D-compressed-bytes")
                else:
                    diffs.append("decompressed: %s vs %s" % (gi, si))
            else:
                diffs.append("content %s vs %s" % (a[4], b[4]))
        elif a[0] != "file" and a != b:
            diffs.append("%s vs %s" % (desc_entry(a), desc_entry(b)))
        if diffs:
            fails.append(("files", "%s: %s (gzip vs spigz)" % (name, "; ".join(diffs))))
    if rg.extra != rs.extra:
        fails.append(("files", "outside the scratch: gzip left %s, spigz %s" % (
            rg.extra, rs.extra)))
    # messages
    names = set(c.names)
    for snap in (rg.snap, rs.snap):
        for k in snap:
            names.add(k)
            names.add(os.path.basename(k))
    mp = messages(h, c, rg, rs, names)
    if mp and empty_name:
        h.allow("D-unusable-name")      # gzip's "." already exists, spigz silent
        mp = []
    fails += [("messages", p) for p in mp]
    if not mp and rg.err.replace(h.gzip_prog.encode() + b":", b"") != \
            rs.err.replace(b"spigz:", b""):
        h.allow("D-wording")
    return fails


def stdin_unnamed(info):
    """D-stdin-name: gzip names a member read from "-" after a named file
    "stdin"; spigz stores no name for it (and headers() leaves out a member
    with no name, no time and no data)."""
    import ast
    hs = ast.literal_eval(info[2][len("headers "):])
    hs = [(None,) + h[1:] if h[:1] == (b"stdin",) else h for h in hs]
    hs = [h for h in hs if h != (None, "0")]
    return info[:2] + ("headers %r" % hs,)


def read_file(path):
    with open(path, "rb") as f:
        return f.read()


def first_diff(a, b):
    ka, kb = bytes(a.kept), bytes(b.kept)
    n = min(len(ka), len(kb))
    for i in range(0, n, 4096):
        e = min(n, i + 4096)
        if ka[i:e] != kb[i:e]:
            j = next(j for j in range(i, e) if ka[j] != kb[j])
            return ", first difference at byte %d" % j
    if len(ka) != len(kb) and n < a.keep:
        return ", one is a prefix of the other"
    return ""


def desc_entry(e):
    if e is None:
        return "missing"
    if e[0] == "file":
        return "file, %s, %s, %s, %s" % (e[1], e[2], e[3], e[4])
    return " ".join(str(x) for x in e)

# ---------------------------------------------------------------- one case


class Result:
    pass


def run_case(h, n):
    big = h.a.big_every > 0 and n % h.a.big_every == h.a.big_every - 1
    cdir = os.path.join(h.base, "c%d" % n)
    os.mkdir(cdir)
    pdir = os.path.join(cdir, "prod")
    os.mkdir(pdir)
    res = Result()
    res.n, res.big, res.cdir = n, big, cdir
    try:
        t0 = time.time()
        c = generate(h, n, big, pdir)
        res.case = c
        rg = run_tool(h, c, cdir, "g", h.gzip)
        rs = run_tool(h, c, cdir, "s", h.spigz)
        if c.same_stdin is not None:
            rs.snap_orig = snapshot_setup(c, cdir)
        if h.a.keep or (h.a.case is not None and h.a.verbose):
            setup(c, os.path.join(cdir, "orig"))     # the files as they were
        res.rg, res.rs = rg, rs
        res.fails = compare(h, c, rg, rs)
        res.secs = time.time() - t0
    except Exception as e:          # a harness bug: report it as a failure
        import traceback
        res.fails = [("harness", "%s: %s" % (type(e).__name__, e))]
        res.tb = traceback.format_exc()
        if not hasattr(res, "case"):
            res.case = None
    if not (h.a.keep or (h.a.case is not None and h.a.verbose)):
        shutil.rmtree(cdir, ignore_errors=True)
    return res


def snapshot_setup(c, cdir):
    """The scratch as set up, for D-same-file's 'left unchanged'."""
    root = tempfile.mkdtemp(prefix="snap.", dir=cdir)
    os.rmdir(root)
    mt = setup(c, root)
    snap = snapshot(root, mt, time.time_ns())
    shutil.rmtree(root, ignore_errors=True)
    return snap


def fingerprint(c):
    """A digest of what the case sets up and runs (to check reproductions)."""
    f = hashlib.sha256(c.cmd.encode() + repr(sorted(c.env.items())).encode() +
                       c.stdout.encode())
    for name, kind, payload, mode in c.files:
        f.update(repr((name, kind, mode)).encode())
        if isinstance(payload, Content):
            f.update(payload.data if not payload.big else repr(
                (payload.size, payload.extents)).encode())
        elif isinstance(payload, bytes):
            f.update(payload)
        elif payload is not None:
            f.update(payload.encode())
    return f.hexdigest()[:16]


def report(h, res, verbose):
    c = res.case
    out = []
    kinds = sorted({k for k, _ in res.fails})
    cat = c.cat if c else "?"
    out.append("FAIL case %d [%s]: %s" % (res.n, cat, "; ".join(kinds)))
    for k, d in res.fails:
        out.append("  %s: %s" % (k, d))
    out.append("  reproduce: " + h.reproducer(res.n, res.big))
    if c is not None and hasattr(res, "rg"):
        for who, r in (("gzip", res.rg), ("spigz", res.rs)):
            env = "".join("%s=%s " % (k, shlex.quote(v)) for k, v in c.env.items())
            so = "" if c.stdout == "pipe" else " > " + shlex.quote(r.outpath)
            out.append("  %-5s: (cd %s && %sbash -c %s%s)" % (
                who, shlex.quote(r.root), env, shlex.quote(r.cmd), so))
    if hasattr(res, "tb"):
        out.append(res.tb)
    if verbose and c is not None:
        out.append("  case fingerprint %s; files:" % fingerprint(c))
        out += ["    " + x for x in c.notes]
        if hasattr(res, "rg"):
            for who, r in (("gzip", res.rg), ("spigz", res.rs)):
                out.append("  %s: status %s, %.2fs, stdout %s" % (who, r.cls, r.secs,
                                                                  r.out.hexdigest()))
                for ln in r.err.decode("latin-1").splitlines()[:20]:
                    out.append("    stderr| " + ln)
                for k, v in sorted(r.snap.items()):
                    out.append("    %s: %s" % (k, desc_entry(v)))
        if h.a.case is not None:
            out.append("  scratch kept in %s (orig/: the files before the run)" % res.cdir)
    return "\n".join(out)


def verbose_ok(h, res):
    c = res.case
    lines = ["ok case %d [%s]" % (res.n, c.cat)]
    for who, r in (("gzip", res.rg), ("spigz", res.rs)):
        env = "".join("%s=%s " % (k, shlex.quote(v)) for k, v in c.env.items())
        lines.append("  %-5s: (cd %s && %sbash -c %s) -> status %s, %.2fs" % (
            who, shlex.quote(r.root), env, shlex.quote(r.cmd), r.cls, r.secs))
        for ln in r.err.decode("latin-1").splitlines()[:10]:
            lines.append("    stderr| " + ln)
    lines.append("  case fingerprint %s; files:" % fingerprint(c))
    lines += ["    " + x for x in c.notes]
    if h.a.case is not None:
        lines.append("  scratch kept in %s (orig/: the files before the run)" % res.cdir)
    return "\n".join(lines)

# ---------------------------------------------------------------- main


def doc_ids(path):
    ids = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^\|\s*(D-[A-Za-z0-9-]+)\s*\|", line)
            if m:
                ids.add(m.group(1))
    return ids


def main():
    ap = argparse.ArgumentParser(description="spigz against GNU gzip, case by case.")
    ap.add_argument("--spigz", required=True)
    ap.add_argument("--gzip", default="gzip")
    ap.add_argument("--seed", type=int, default=1)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--cases", type=int, default=None)
    g.add_argument("--time", type=float, default=None, help="run cases for this many seconds")
    g.add_argument("--case", type=int, default=None, help="run this case only")
    ap.add_argument("--first", type=int, default=0, help="the first case number")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--big-every", type=int, default=0,
                    help="case n is around 4 GiB when n %% M == M-1 (0: never)")
    ap.add_argument("--big-slow", action="store_true",
                    help="4 GiB cases may also compress with gzip and pigz and write files")
    ap.add_argument("--doc", default=None, help="doc/GZIP.md (default: the one in these sources)")
    ap.add_argument("--tmp", default=None, help="where the scratch directories go")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directories")
    ap.add_argument("--signatures", action="store_true",
                    help="list the failures grouped by what differs")
    ap.add_argument("-q", "--quiet", action="store_true", help="print only the summary")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()

    doc = a.doc or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "doc", "GZIP.md")
    try:
        ids = doc_ids(doc)
    except OSError as e:
        sys.exit("gzdiff: cannot read %s: %s" % (doc, e))
    missing = [i for i in ALLOWANCES if i not in ids]
    if missing:
        print("gzdiff: %s does not list %s: refusing to run" % (doc, ", ".join(missing)),
              file=sys.stderr)
        sys.exit(2)
    if not os.access(a.spigz, os.X_OK):
        sys.exit("gzdiff: %s is not executable" % a.spigz)
    os.umask(0o022)
    h = Harness(a)
    if h.missing:
        print("gzdiff: warning: producers missing (cases differ from a full setup): %s"
              % " ".join(h.missing), file=sys.stderr)
    t0 = time.time()
    results = []
    try:
        if a.case is not None:
            nums = iter([a.case])
        elif a.time is not None:
            def gen_nums():
                k = a.first
                while time.time() - t0 < a.time:
                    yield k
                    k += 1
            nums = gen_nums()
        else:
            nums = iter(range(a.first, a.first + (a.cases if a.cases is not None else 200)))
        with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
            pending = set()
            for k in nums:
                pending.add(ex.submit(run_case, h, k))
                while len(pending) >= 2 * max(1, a.jobs):
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for f in done:
                        emit(h, f.result(), results)
            for f in pending:
                emit(h, f.result(), results)
    finally:
        if not (a.keep or (a.case is not None and a.verbose)):
            shutil.rmtree(h.base, ignore_errors=True)
    summary(h, results, time.time() - t0)
    return 1 if any(r.fails for r in results) else 0


def emit(h, res, results):
    results.append(res)
    if h.a.quiet:
        return
    if res.fails:
        print(report(h, res, h.a.verbose), flush=True)
    elif h.a.verbose:
        print(verbose_ok(h, res), flush=True)


def signature(cat, kind, detail):
    """A failure with the case's particulars taken out, to group like ones."""
    d = re.sub(r"[0-9a-f]{16}/\d+", "DIGEST", detail)
    for n in sorted(Case.NAMES, key=len, reverse=True):
        d = d.replace(n, "F")
    d = re.sub(r"\d+", "N", d)
    return "%s | %s: %s" % (cat, kind, d[:150])


def summary(h, results, secs):
    cats = {}
    kinds = {}
    sigs = {}
    for r in results:
        for k, d in r.fails:
            sg = signature(r.case.cat if r.case else "?", k, d)
            n, first = sigs.get(sg, (0, r.n))
            sigs[sg] = (n + 1, min(first, r.n))
    if sigs and h.a.signatures:
        print("gzdiff: failures grouped (count, first case, what):")
        for sg, (n, first) in sorted(sigs.items(), key=lambda x: (-x[1][0], x[0])):
            print("  %5d %6d  %s" % (n, first, sg))
    for r in results:
        cat = r.case.cat if r.case else "?"
        n, f = cats.get(cat, (0, 0))
        cats[cat] = (n + 1, f + (1 if r.fails else 0))
        for k in {k for k, _ in r.fails}:
            kinds[k] = kinds.get(k, 0) + 1
    print("gzdiff: per category (cases, failed):")
    for cat in sorted(cats):
        print("  %-20s %5d %5d" % (cat, cats[cat][0], cats[cat][1]))
    if kinds:
        print("gzdiff: failed cases by kind: " + ", ".join(
            "%s %d" % (k, v) for k, v in sorted(kinds.items())))
    print("gzdiff: allowances used: " + ", ".join("%s %d" % (k, v)
                                                 for k, v in sorted(h.allowed.items())))
    nf = sum(1 for r in results if r.fails)
    slow = sorted((r for r in results if hasattr(r, "secs")), key=lambda r: -r.secs)[:3]
    print("gzdiff: %.0f s; slowest cases: %s" % (secs, ", ".join(
        "%d (%.1f s)" % (r.n, r.secs) for r in slow)))
    print("gzdiff: %d cases (seed %d): %d passed, %d failed" % (
        len(results), h.seed, len(results) - nf, nf))


if __name__ == "__main__":
    sys.exit(main())

#!/bin/bash
# progress.sh — the progress line on stderr: its format, its rate limit
# (nothing in the first 0.5 s, at most 5 draws a second), its totals (a file,
# a block device, none for a pipe), counters that never go back (also when a
# lying index sends decompression back to the sequential path), how it ends (a
# newline when forced on a file, blanked on a terminal, always before later
# messages), its absence (stderr not a terminal, -q, --no-progress), and that
# stdout is the same bytes with and without it.  Runs are made to last about
# two seconds by reading spigz's output through a throttle, whatever the
# machine's speed; a pseudo-terminal (python3's pty) stands in for a user's.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=tests/lib.sh
. "${srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need python3 cmp head tail cut grep wc tr stat truncate dd date timeout
M=$((1024 * 1024))
W=$T/w
PY=$T/py
mkdir -p "$W" "$PY"

# ---- Python helpers ----

# throttle.py RATE OUT: copy stdin to OUT at RATE bytes a second at most.
cat > "$PY/throttle.py" <<'EOF'
import os, sys, time
rate, out = float(sys.argv[1]), open(sys.argv[2], "wb")
t0, n = time.monotonic(), 0
while True:
    b = os.read(0, 1 << 16)
    if not b:
        break
    out.write(b)
    n += len(b)
    ahead = n / rate - (time.monotonic() - t0)
    if ahead > 0:
        time.sleep(ahead)
EOF

# lines.py: what every progress update must look like, shared by the checks.
cat > "$PY/lines.py" <<'EOF'
import re
SIZE = r"[0-9]+(?:\.[0-9]+)? (?:B|KiB|MiB|GiB|TiB)"
# done/total: "12.0/128 MiB" when both are in one unit, else "512 KiB/128 MiB"
DONE = r"(?P<done>[0-9]+(?:\.[0-9]+)?(?: (?:B|KiB|MiB|GiB|TiB))?)/(?P<total>" + SIZE + ")"
ETA = r"ETA (?:--:--|[0-9]+:[0-5][0-9](?::[0-5][0-9])?)"
NAME = r"(?P<name>\S.*?)"
TIME = r"[0-9]+:[0-5][0-9](?::[0-5][0-9])?"
# The fields after the name, in the order shown; a narrow terminal drops the
# least important first (percent, rate and ETA last, after the name).
FORMS = {
    # NAME  P%  DONE/TOTAL  ELAPSED  RATE/s  ETA m:ss  zeros Z%  out O%
    "c": [r"(?P<pct>[0-9]+)%", DONE, rf"(?P<time>{TIME})",
          rf"{SIZE}/s", ETA, r"zeros (?P<zeros>[0-9]+)%", r"out (?P<ratio>[0-9.]+)%"],
    # sequential restore, measured by compressed input:
    # NAME  P%  DONE/TOTAL  ELAPSED  RATE/s  ETA m:ss  out SIZE (Rx)
    "d": [r"(?P<pct>[0-9]+)%", DONE, rf"(?P<time>{TIME})",
          rf"{SIZE}/s", ETA, rf"out (?P<out>{SIZE}) \((?P<ratio>[0-9.]+)x\)"],
    # restore through the index, measured by the image's bytes written:
    # NAME  P%  DONE/TOTAL  ELAPSED  RATE/s  ETA m:ss  in SIZE
    "di": [r"(?P<pct>[0-9]+)%", DONE, rf"(?P<time>{TIME})",
           rf"{SIZE}/s", ETA, rf"in (?P<in>{SIZE})"],
    # no total: NAME  DONE  ELAPSED  RATE/s  zeros Z%  out O%
    "cp": [rf"(?P<done>{SIZE})", rf"(?P<time>{TIME})", rf"{SIZE}/s",
           r"zeros (?P<zeros>[0-9]+)%", r"out (?P<ratio>[0-9.]+)%"],
    # no total: NAME  DONE  ELAPSED  RATE/s  out SIZE (Rx)
    "dp": [rf"(?P<done>{SIZE})", rf"(?P<time>{TIME})", rf"{SIZE}/s",
           rf"out (?P<out>{SIZE}) \((?P<ratio>[0-9.]+)x\)"],
}
# Before anything is counted the fields after the ETA are left out.
EARLY = {
    "c": rf"\S.*?  0%  0(?: B)?/{SIZE}  {TIME}  0 B/s  {ETA}",
    "d": rf"\S.*?  0%  0(?: B)?/{SIZE}  {TIME}  0 B/s  {ETA}",
    "di": rf"\S.*?  0%  0(?: B)?/{SIZE}  {TIME}  0 B/s  {ETA}",
    "cp": rf"\S.*?  0 B  {TIME}  0 B/s",
    "dp": rf"\S.*?  0 B  {TIME}  0 B/s",
}
# The summary line that ends a run that succeeded.
SUMMARY = (rf"(?P<name>\S.*?): (?P<ok>OK, )?(?P<in>{SIZE}) => (?P<out>{SIZE})"
           rf" \((?P<ratio>[0-9.]+(?:%|x))\) in (?:[0-9.]+ s|{TIME}), {SIZE}/s"
           r"(?:, zeros (?P<zeros>[0-9]+)%)?")

def form(kind, full):
    """The regex of an update: every field, or (full false) any of them but
    the first, the name too, in their order."""
    f = FORMS[kind]
    if full:
        return NAME + "".join("  " + x for x in f)
    return "(?:" + NAME + "  )?" + f[0] + "".join(f"(?:  {x})?" for x in f[1:])

def updates(text, kind, width, errors, full=True):
    """Split the \r-separated updates, check each one, return the matches
    (None for an update made before anything was counted).  KIND may be
    "a/b": each update is of one form or the other (a restore through the
    index is measured by its input until the index is read)."""
    out = []
    kinds = kind.split("/")
    for i, u in enumerate(text.split("\r")[1:]):
        line = u.rstrip(" ")
        if len(u) > width - 1:
            errors.append(f"update {i} is {len(u)} columns, more than {width - 1}: {u!r}")
        m = None
        for k in kinds:
            m = m or re.fullmatch(form(k, full), line)
        if m is None and not any(re.fullmatch(EARLY[k], line) for k in kinds):
            errors.append(f"update {i} does not match the {kind} form: {line!r}")
        out.append(m)
    return out

def summary(line, name, errors):
    m = re.fullmatch(SUMMARY, line)
    if m is None:
        errors.append(f"no summary line: {line!r}")
    elif m["name"] != name:
        errors.append(f"summary of {m['name']!r}, expected {name!r}")
    return m
EOF

# check_file.py KIND ELAPSED FILE [NAME ZEROS TOTAL OUT]: a forced progress
# run's stderr (not a terminal): "\r"-separated updates, at most 5 a second of
# ELAPSED plus 2, percent never going back, ended by a "\n" after a last
# update at 100% (for a known total) with the expected name, zero share, total
# and output; then the summary line (unless SUMMARY=0), no escape sequence,
# nothing else.
cat > "$PY/check_file.py" <<'EOF'
import os, re, sys
sys.path.insert(0, sys.argv[0].rsplit("/", 1)[0])
from lines import updates, summary
kind, elapsed, path = sys.argv[1], float(sys.argv[2]), sys.argv[3]
want = sys.argv[4:]
text = open(path, "rb").read().decode("utf-8", "replace")
errors = []
lines = 1 if os.environ.get("SUMMARY") == "0" else 2
if not text.startswith("\r"):
    errors.append(f"stderr does not start with a \\r update: {text[:80]!r}")
if not text.endswith("\n") or text.count("\n") != lines:
    errors.append(f"stderr must end with its {lines} newlines: {text[-160:]!r}")
if "\x1b" in text:
    errors.append("an escape sequence in a non-terminal's progress")
body, _, rest = text.partition("\n")
if lines == 2 and want:
    summary(rest.rstrip("\n"), want[0], errors)
ms = updates(body, kind, 80, errors, full=False)
for m in ms:  # the fields a narrow line keeps last are always there at 80 columns
    if m is not None and "total" in m.groupdict() and not re.search(r"/s  ETA ", m.group(0)):
        errors.append(f"no rate and ETA: {m.group(0)!r}")
n = len(ms)
if n == 0:
    errors.append("no update at all in a run of %.2f s" % elapsed)
if n > 5 * elapsed + 2:
    errors.append(f"{n} updates in {elapsed:.2f} s: more than 5 a second")
def size(v, unit_of=None):
    n, _, u = v.partition(" ")
    u = u or unit_of.partition(" ")[2]  # "12.0/128 MiB": done takes total's unit
    return float(n) * 1024 ** ["B", "KiB", "MiB", "GiB", "TiB"].index(u)
def value(m, key):
    if key == "pct":
        return int(m[key])
    return size(m[key], m.groupdict().get("total") if key == "done" else None)
for key in ("pct", "done", "out", "in"):
    # within one form: a restore through an index that turns out to lie
    # goes from counting its output to counting its input
    for rx in {m.re.pattern for m in ms if m is not None}:
        seq = [value(m, key) for m in ms
               if m is not None and m.re.pattern == rx and m.groupdict().get(key)]
        if seq != sorted(seq):
            errors.append(f"{key} went back: {seq}")
last = ms[-1] if ms else None
if last is None:
    errors.append("the last update is not a complete one")
elif want:
    name, zeros, total, out = want
    g = last.groupdict()
    if g["name"] != name:
        errors.append(f"name {g['name']!r}, expected {name!r}")
    if "pct" in g and (g["pct"] != "100" or "ETA 0:00" not in last.group(0)):
        errors.append(f"the last update is not at 100% with ETA 0:00: {last.group(0)!r}")
    if zeros != "-" and g.get("zeros") != zeros:
        errors.append(f"zero share {g.get('zeros')}%, expected {zeros}%")
    if total != "-" and g.get("total", g.get("done")) != total:
        errors.append(f"total {g.get('total', g.get('done'))!r}, expected {total!r}")
    if out != "-" and g.get("out") != out:
        errors.append(f"out {g.get('out')!r}, expected {out!r}")
    # (a long name, as a device's, leaves no room for the ratio at 80 columns)
    if kind in ("c", "cp") and g.get("ratio") is not None and not 45 <= float(g["ratio"]) <= 55:
        errors.append(f"compressed share {g['ratio']}%: half the input is random, half zero")
for e in errors:
    print("progress:", e, file=sys.stderr)
print(f"{n} updates in {elapsed:.2f} s", file=sys.stderr)
sys.exit(1 if errors else 0)
EOF

# on_tty.py REF RATE COLS SPIGZ ARG...: run spigz with stderr on a new pseudo-
# terminal COLS wide and stdout read through a pipe at RATE bytes a second;
# stdout must equal REF.  Prints "elapsed first-update-delay" and the bytes
# the terminal got (to pty.out) for the checks that follow.
cat > "$PY/on_tty.py" <<'EOF'
import fcntl, os, pty, select, struct, subprocess, sys, termios, time
ref, rate, cols, cmd = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
master, slave = pty.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
t0 = time.monotonic()
p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
os.close(slave)
out, tty, first, n = bytearray(), bytearray(), None, 0
fd = p.stdout.fileno()
open_fds = {fd, master}
while open_fds:
    want = [master] if master in open_fds else []
    ahead = n / rate - (time.monotonic() - t0)
    if fd in open_fds and ahead <= 0:
        want.append(fd)
    r, _, _ = select.select(want, [], [], max(ahead, 0) if fd in open_fds else 10)
    for f in r:
        try:
            b = os.read(f, 1 << 16)
        except OSError:       # EIO: the terminal's last holder is gone
            b = b""
        if not b:
            open_fds.discard(f)
        elif f == fd:
            out += b
            n += len(b)
        else:
            if first is None and b"\r" in b:
                first = time.monotonic() - t0
            tty += b
    if fd not in open_fds and p.poll() is not None:
        # drain what the terminal still holds, then stop
        while master in open_fds and select.select([master], [], [], 0.2)[0]:
            try:
                b = os.read(master, 1 << 16)
            except OSError:
                b = b""
            if not b:
                break
            tty += b
        break
rc = p.wait()
elapsed = time.monotonic() - t0
open(os.environ["PTY_OUT"], "wb").write(bytes(tty))
same = bytes(out) == open(ref, "rb").read()
print(f"{elapsed:.3f} {first if first is not None else -1:.3f} {rc} {int(same)}")
EOF

# check_tty.py KIND ELAPSED FIRST COLS FILE NAME: what a terminal got: updates
# at most COLS-1 wide, the first one after 0.5 s at the earliest, at most 5 a
# second, no newline, the line blanked at the end ("\r", spaces, "\r"), then
# the summary line of NAME and the only newline.
cat > "$PY/check_tty.py" <<'EOF'
import re, sys
sys.path.insert(0, sys.argv[0].rsplit("/", 1)[0])
from lines import updates, summary
kind, elapsed, first, cols, path, name = sys.argv[1:7]
elapsed, first, cols = float(elapsed), float(first), int(cols)
text = open(path, "rb").read().decode("utf-8", "replace")
errors = []
m = re.search(r"\r( +)\r([^\r\n]*)\r\n$", text)
if m is None:
    errors.append(f"the line is not blanked and followed by the summary: {text[-160:]!r}")
else:
    summary(m.group(2), name, errors)
if "\n" in (text[:m.start()] if m else text):
    errors.append("a newline in a terminal's progress")
body = text[:m.start()] if m else text
ms = updates(body, kind, cols, errors, full=cols >= 80)
if m is not None and ms and len(m.group(1)) < len(body.rsplit("\r", 1)[-1].rstrip(" ")):
    errors.append("the blanking is shorter than the last update")
n = len(ms)
if n == 0:
    errors.append("nothing shown on a terminal in %.2f s" % elapsed)
if n > 5 * elapsed + 2:
    errors.append(f"{n} updates in {elapsed:.2f} s: more than 5 a second")
if 0 <= first < 0.45:
    errors.append(f"the first update came {first:.3f} s after the start, before 0.5 s")
for e in errors:
    print("progress:", e, file=sys.stderr)
print(f"{n} updates in {elapsed:.2f} s, first after {first:.2f} s", file=sys.stderr)
sys.exit(1 if errors else 0)
EOF

now() { date +%s.%N; }
since() { "$PY3" -c 'import sys; print("%.3f" % (float(sys.argv[2]) - float(sys.argv[1])))' "$1" "$(now)"; }
errtext() { tr '\r\n' '||' < "$1" | head -c 400; }

# ---- the input: 32 MiB random, a 64 MiB hole, 32 MiB random ----

section "input"
head -c $((32 * M)) /dev/urandom > "$W/big"
truncate -s $((96 * M)) "$W/big"
head -c $((32 * M)) /dev/urandom >> "$W/big"
check "input size" [ "$(stat -c %s "$W/big")" -eq $((128 * M)) ]
(cd "$W" && "$SPIGZ" -c big > big.gz) || fail "spigz -c big"
(cd "$W" && "$SPIGZ" -c --no-index big > seq.gz) || fail "spigz -c --no-index big"
"$SPIGZ" -n -c < "$W/big" > "$W/stdin.gz" || fail "spigz -n -c < big" # no name or time stored
CRATE=$((32 * M))   # compressed output read at 32 MiB/s: ~2 s
DRATE=$((64 * M))   # restored output read at 64 MiB/s: ~2 s

# slow OUT RATE ARG...: spigz ARG... in $W, stdout read at RATE into OUT,
# stderr in $T/err; sets RC and ELAPSED.
slow() {
    local out=$1 rate=$2 t
    shift 2
    t=$(now)
    (cd "$W" && exec timeout "$HANG" "$SPIGZ" "$@") 2> "$T/err" | "$PY3" "$PY/throttle.py" "$rate" "$out"
    RC=${PIPESTATUS[0]}
    ELAPSED=$(since "$t")
}

# forced KIND DESC OUT REF [NAME ZEROS TOTAL OUT]: the last slow run exited 0,
# wrote REF on stdout and a well-formed forced progress on stderr.
forced() {
    local kind=$1 desc=$2 out=$3 ref=$4
    shift 4
    check "$desc: exit status $RC" [ "$RC" -eq 0 ]
    check "$desc: stdout differs from the run without progress" cmp -s "$out" "$ref"
    if "$PY3" "$PY/check_file.py" "$kind" "$ELAPSED" "$T/err" "$@"; then
        pass
    else
        fail "$desc: progress: $(errtext "$T/err")"
    fi
}

# ---- forced on a file: compression ----

section "--progress, compression of a file"
slow "$T/c.out" "$CRATE" -c --progress big
forced c "-c --progress FILE" "$T/c.out" "$W/big.gz" big 50 "128 MiB" -
slow "$T/c.out" "$CRATE" -c --progress --no-index big
forced c "-c --progress --no-index FILE" "$T/c.out" "$W/seq.gz" big 50 "128 MiB" -

# A block device's total comes from BLKGETSIZE64 (no name stored: as stdin).
if LOOPDEV=$(losetup -f --show "$W/big" 2>/dev/null) && [ -b "$LOOPDEV" ]; then
    slow "$T/c.out" "$CRATE" -c -n --progress "$LOOPDEV" # -n: the manifest names no device
    forced c "-c --progress DEVICE" "$T/c.out" "$W/stdin.gz" "$LOOPDEV" 50 "128 MiB" -
    losetup -d "$LOOPDEV"
    LOOPDEV=
else
    LOOPDEV=
    echo "NOTE: no loop device here (losetup failed): the device total is not checked" >&2
fi

section "--progress, compression of a pipe"
t=$(now)
# shellcheck disable=SC2002 # a pipe, not a file: no total
cat "$W/big" | (cd "$W" && exec timeout "$HANG" "$SPIGZ" -c --progress) 2> "$T/err" |
    "$PY3" "$PY/throttle.py" "$CRATE" "$T/c.out"
RC=${PIPESTATUS[1]}
ELAPSED=$(since "$t")
forced cp "cat FILE | spigz -c --progress" "$T/c.out" "$W/stdin.gz" stdin 50 "128 MiB" -
# --size gives the pipe a total: percent and ETA.
t=$(now)
# shellcheck disable=SC2002 # a pipe, not a file: no total
cat "$W/big" | (cd "$W" && exec timeout "$HANG" "$SPIGZ" -c --progress --size 128M) 2> "$T/err" |
    "$PY3" "$PY/throttle.py" "$CRATE" "$T/c.out"
RC=${PIPESTATUS[1]}
ELAPSED=$(since "$t")
forced c "cat FILE | spigz -c --progress --size 128M" "$T/c.out" "$W/stdin.gz" stdin 50 "128 MiB" -

# ---- forced on a file: decompression ----

section "--progress, decompression"
slow "$T/d.out" "$DRATE" -dc --progress big.gz
# Through the index the line counts the image's bytes written (the exact
# total from the index), not the compressed bytes read.
forced di/d "-dc --progress FILE.gz (index)" "$T/d.out" "$W/big" big.gz - "128 MiB" -
slow "$T/d.out" "$DRATE" -dc --progress seq.gz
forced d "-dc --progress FILE.gz (sequential)" "$T/d.out" "$W/big" seq.gz - - "128 MiB"
slow "$T/d.out" "$DRATE" -dc --progress --no-index big.gz
forced d "-dc --progress --no-index FILE.gz" "$T/d.out" "$W/big" big.gz - - "128 MiB"

section "--progress, decompression of a pipe"
t=$(now)
# shellcheck disable=SC2002 # a pipe, not a file: no total
cat "$W/big.gz" | (cd "$W" && exec timeout "$HANG" "$SPIGZ" -dc --progress) 2> "$T/err" |
    "$PY3" "$PY/throttle.py" "$DRATE" "$T/d.out"
RC=${PIPESTATUS[1]}
ELAPSED=$(since "$t")
forced dp "cat FILE.gz | spigz -dc --progress" "$T/d.out" "$W/big" stdin - - "128 MiB"

# A file named with control characters shows them as '?'.
cp "$W/big.gz" "$W/a"$'\t'"b.gz"
slow "$T/d.out" "$DRATE" -dc --progress "a"$'\t'"b.gz"
forced di/d "-dc --progress NAME-WITH-TAB" "$T/d.out" "$W/big" "a?b.gz" - "128 MiB" -

# An index that lies about a piece three quarters in: the indexed path stops
# there and the sequential one starts over; the counters wait for it to pass
# what was counted, never going back or counting twice.
cat > "$PY/lie.py" <<'EOF'
import struct, sys, zlib
d = open(sys.argv[1], "rb").read()
foot = d[-78:]
body = list(struct.unpack("<BBHQQQQQI", foot[16:64]))
total, data_len, index_len = body[3], body[4], body[6]
payload, pos = b"", data_len
while pos < data_len + index_len:
    m = struct.unpack("<H", d[pos + 14:pos + 16])[0]
    payload += d[pos + 16:pos + 16 + m]
    pos += 26 + m
def leb_get(i):
    v = s = 0
    while True:
        v, s, i = v | (payload[i] & 0x7F) << s, s + 7, i + 1
        if not payload[i - 1] & 0x80:
            return v, i
def leb(v):
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    return bytes(out + bytes([v]))
recs, i, uoff = [], 0, 0
while len(recs) < body[7]:  # the pieces' records; the rest (the manifest) kept
    h, i = leb_get(i)
    c, i = leb_get(i)
    crc = payload[i:i + 4] if h & 1 else b""
    i += len(crc)
    recs.append([h, c, crc, uoff])
    uoff += h >> 1
# Two data pieces in a row, three quarters in: move a byte from one to the other.
k = next(k for k in range(len(recs) - 1)
         if recs[k][3] >= total * 3 // 4 and recs[k][0] & 1 and recs[k + 1][0] & 1)
recs[k][1] += 1
recs[k + 1][1] -= 1
payload = b"".join(leb(h) + leb(c) + crc for h, c, crc, _ in recs) + payload[i:]
MHDR = bytes([0x1F, 0x8B, 8, 4, 0, 0, 0, 0, 0, 0xFF])
MEND = bytes([3, 0]) + bytes(8)
idx = b""
for j in range(0, len(payload), 65531):
    m = payload[j:j + 65531]
    idx += MHDR + struct.pack("<H2sH", len(m) + 4, b"SI", len(m)) + m + MEND
body[6], body[8] = len(idx), zlib.crc32(payload)
b = struct.pack("<BBHQQQQQI", *body)
foot = MHDR + struct.pack("<H2sH", 56, b"SF", 52) + b + struct.pack("<I", zlib.crc32(b)) + MEND
open(sys.argv[2], "wb").write(d[:data_len] + idx + foot)
EOF
"$PY3" "$PY/lie.py" "$W/big.gz" "$W/lie.gz" || fail "lie.py failed"
slow "$T/d.out" "$DRATE" -dc --progress lie.gz
check "-dc --progress LYING-INDEX: exit status $RC (a warning)" [ "$RC" -eq 2 ]
check "-dc --progress LYING-INDEX: stdout" cmp -s "$T/d.out" "$W/big"
head -n 1 "$T/err" > "$T/err1"
if SUMMARY=0 "$PY3" "$PY/check_file.py" di/d "$ELAPSED" "$T/err1" lie.gz - - "128 MiB" &&
    tail -n +2 "$T/err" | grep -q '^spigz: lie.gz: index not used (the piece at offset'; then
    pass
else
    fail "-dc --progress LYING-INDEX: $(errtext "$T/err")"
fi

# ---- the line ends before later messages ----

section "--progress=log: plain lines for logs"
# log.py ERR STEP: every line of ERR plain ("spigz: big:  NN%  ..."), no
# carriage return; with STEP (percent), each line but the last crossed a
# new multiple of it; the last at 100%; at least two lines; then the
# summary line
cat > "$PY/log.py" <<'EOF2'
import re, sys
raw = open(sys.argv[1], "rb").read().decode()
step = int(sys.argv[2])
if "\r" in raw:
    sys.exit("a carriage return in a log")
lines = raw.splitlines()
if lines and lines[-1].startswith("big: "):
    lines.pop()  # the summary line that ends a run shown with progress
pcts = []
for l in lines:
    m = re.match(r"^spigz: big:  (\d+)%  \S+ MiB  \d+:\d\d  \S+ \S+/s  ETA \d+:\d\d  zeros \d+%  out \S+%$", l)
    if not m:
        sys.exit("not a log line: %r" % l)
    pcts.append(int(m.group(1)))
if len(pcts) < 2 or pcts[-1] != 100:
    sys.exit("lines at %r" % pcts)
if step:
    for a, b in zip([0] + pcts, pcts[:-1]):
        if b // step <= a // step:
            sys.exit("a line without a new step of %d%%: %r" % (step, pcts))
EOF2
slow "$T/c.out" "$CRATE" -c --progress=log:25% big
check "--progress=log:25%: exit status $RC, stdout unchanged" sh -c "[ $RC -eq 0 ] && cmp -s '$T/c.out' '$W/big.gz'"
check "--progress=log:25%: its lines ($(errtext "$T/err"))" "$PY3" "$PY/log.py" "$T/err" 25
slow "$T/c.out" "$CRATE" -c --progress=log:1 big
check "--progress=log:1: its lines ($(errtext "$T/err"))" "$PY3" "$PY/log.py" "$T/err" 0
"$SPIGZ" -c --progress=log:0 "$W/big" > /dev/null 2> "$T/err"; RC=$?
check "--progress=log:0 is a usage error ($RC: $(errtext "$T/err"))" \
    sh -c "[ $RC -eq 1 ] && grep -q 'invalid --progress' '$T/err'"

section "a restore onto a device says syncing while its cache is flushed"
if [ -f "${FAULT_SO:-}" ] && truncate -s $((128 * M)) "$W/dev.img" &&
    LOOPDEV=$(losetup -f --show "$W/dev.img" 2>/dev/null) && [ -b "$LOOPDEV" ]; then
    mkfifo "$T/stalled" "$T/go"
    (cd "$W" && LD_PRELOAD="$FAULT_SO" FAULT_FSYNC_STALL_DIR="$T" exec timeout "$HANG" \
        "$SPIGZ" -d -f --progress -o "$LOOPDEV" big.gz) 2> "$T/err" &
    pid=$!
    read -r _ < "$T/stalled" # spigz is in the device's fsync now
    # the display draws every 200 ms: wait for what it drew (bounded)
    for _ in $(seq 100); do grep -q syncing "$T/err" && break; sleep 0.1; done
    echo go > "$T/go"
    wait "$pid"; RC=$?
    check "restore onto a device: status $RC" [ "$RC" -eq 0 ]
    check "... the line said syncing while the device flushed ($(errtext "$T/err"))" grep -q "  syncing" "$T/err"
    check "... and the device holds the image" cmp -s -n $((128 * M)) "$LOOPDEV" "$W/big"
    losetup -d "$LOOPDEV"
    LOOPDEV=
else
    LOOPDEV=
    echo "NOTE: no loop device (or no fault shim): syncing is not checked" >&2
fi

section "messages after the line"
slow "$T/c.out" "$CRATE" -v -c --progress big
check "-v --progress: exit status $RC" [ "$RC" -eq 0 ]
tail -n 1 "$T/err" > "$T/last"
if grep -q '^big:.*%' "$T/last" && [ "$(tr -cd '\n' < "$T/err" | wc -c)" -eq 3 ] &&
    head -n 1 "$T/err" | grep -q $'^\r' &&
    sed -n 2p "$T/err" | grep -q '^big: 128 MiB => .* in .*, zeros 50%$'; then
    pass
else
    fail "-v --progress: the summary, then the verbose line, must follow the ended progress line: $(errtext "$T/err")"
fi

# A corrupt file read sequentially: the error comes after a second or more.
cp "$W/seq.gz" "$W/bad.gz"
size=$(stat -c %s "$W/bad.gz")
printf '\377\377\377\377\377\377\377\377' |
    dd of="$W/bad.gz" bs=1 seek=$((size - 20000)) conv=notrunc status=none
slow "$T/d.out" "$DRATE" -dc --progress bad.gz
check "-dc --progress CORRUPT: exit status $RC" [ "$RC" -eq 1 ]
if grep -q '^spigz: bad.gz: ' "$T/err" && grep -q $'^\r' "$T/err" &&
    [ "$(tail -n 1 "$T/err" | cut -c1-7)" = "spigz: " ] &&
    [ "$(grep -c . "$T/err")" -eq 2 ]; then
    pass
else
    fail "-dc --progress CORRUPT: the error must follow the ended progress line: $(errtext "$T/err")"
fi

# ---- absent ----

section "absent"
for args in "-c big" "-c --progress -q big" "-c -q --progress big" \
    "-c --progress --no-progress big" "-c --no-progress --progress big"; do
    # shellcheck disable=SC2086 # the words are the options
    slow "$T/c.out" $((2 * CRATE)) $args
    check "spigz $args: exit status $RC" [ "$RC" -eq 0 ]
    check "spigz $args: stdout" cmp -s "$T/c.out" "$W/big.gz"
    if [ -s "$T/err" ]; then
        fail "spigz $args (stderr not a terminal) printed: $(errtext "$T/err")"
    else
        pass
    fi
done
slow "$T/d.out" $((2 * DRATE)) -dc big.gz
check "-dc, stderr a file: silent" [ ! -s "$T/err" ]
# A quick run draws no line even when forced, but says what it did.
head -c 100000 "$W/big" > "$W/small"
(cd "$W" && "$SPIGZ" -c --progress small > "$T/s.out") 2> "$T/err"
if [ "$(wc -l < "$T/err")" -eq 1 ] && ! grep -q $'\r' "$T/err" &&
    grep -q '^small: 97.7 KiB => 9[78].[0-9] KiB (10[0-9].[0-9]%) in [0-9.]* s, .*/s, zeros 0%$' "$T/err"; then
    pass
else
    fail "--progress on a run under 0.5 s: only the summary line: $(errtext "$T/err")"
fi
# --format=json reports each file on stderr, with or without a display, -q too.
(cd "$W" && "$SPIGZ" -q -c --format=json small > "$T/s.out") 2> "$T/err"
if "$PY3" - "$T/err" <<'EOF'; then pass; else fail "--format=json report: $(errtext "$T/err")"; fi
import json, sys
lines = open(sys.argv[1]).read().splitlines()
r = json.loads(lines[0])
ok = len(lines) == 1 and r["operation"] == "compress" and r["file"] == "small" and \
    r["output"] == "stdout" and r["in_bytes"] == 100000 and r["level"] == 6 and \
    r["out_bytes"] > 100000 and r["zero_bytes"] == 0 and r["seconds"] >= 0
sys.exit(0 if ok else 1)
EOF
(cd "$W" && "$SPIGZ" -t --format=json big.gz seq.gz) 2> "$T/err"
if "$PY3" - "$T/err" <<'EOF'; then pass; else fail "-t --format=json: $(errtext "$T/err")"; fi
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1]).read().splitlines()]
ok = [(r["operation"], r["file"], r["path"], r["out_bytes"]) for r in rs] == \
    [("test", "big.gz", "index", 128 << 20), ("test", "seq.gz", "sequential", 128 << 20)]
sys.exit(0 if ok and all("output" not in r for r in rs) else 1)
EOF
(cd "$W" && "$SPIGZ" -dc --format=kv big.gz > "$T/d.out") 2> "$T/err"
check "-dc --format=kv: key=value lines" grep -qx 'out_bytes=134217728' "$T/err"
check "-dc --format=kv: the output" cmp -s "$T/d.out" "$W/big"
(cd "$W" && "$SPIGZ" -l --progress big.gz > "$T/l.out") 2> "$T/err"
check "-l --progress prints no progress" [ ! -s "$T/err" ]

# ---- on a terminal ----

section "terminal"
# tty KIND DESC REF RATE COLS ARG...: spigz ARG... with stderr a terminal.
tty_run() {
    local kind=$1 desc=$2 ref=$3 rate=$4 cols=$5 res
    shift 5
    res=$(cd "$W" && PTY_OUT=$T/pty.out "$PY3" "$PY/on_tty.py" "$ref" "$rate" "$cols" \
        timeout "$HANG" "$SPIGZ" "$@") || { fail "$desc: on_tty.py failed"; return; }
    read -r elapsed first rc same <<< "$res"
    check "$desc: exit status $rc" [ "$rc" -eq 0 ]
    check "$desc: stdout differs from the run without a terminal" [ "$same" -eq 1 ]
    if [ "$kind" = none ]; then
        check "$desc: nothing on the terminal" [ ! -s "$T/pty.out" ]
    elif "$PY3" "$PY/check_tty.py" "$kind" "$elapsed" "$first" "$cols" "$T/pty.out" \
        "${@: -1}"; then
        pass
    else
        fail "$desc: $(errtext "$T/pty.out")"
    fi
}
tty_run c "-c FILE, stderr a terminal" "$W/big.gz" "$CRATE" 80 -c big
tty_run c "-c FILE, a 60-column terminal" "$W/big.gz" "$CRATE" 60 -c big
tty_run di/d "-dc FILE.gz, stderr a terminal" "$W/big" "$DRATE" 80 -dc big.gz
tty_run none "-q -c FILE, stderr a terminal" "$W/big.gz" "$CRATE" 80 -q -c big
tty_run none "--no-progress -c FILE, stderr a terminal" "$W/big.gz" "$CRATE" 80 \
    --no-progress -c big
# A very narrow terminal keeps what fits, percent, rate and ETA before the
# name; the line is never wider.
res=$(cd "$W" && PTY_OUT=$T/pty.out "$PY3" "$PY/on_tty.py" "$W/big.gz" "$CRATE" 30 \
    timeout "$HANG" "$SPIGZ" -c big) || fail "30 columns: on_tty.py failed"
if "$PY3" - "$T/pty.out" <<'EOF'; then pass; else fail "30 columns: $(errtext "$T/pty.out")"; fi
import re, sys
t = open(sys.argv[1], "rb").read().decode()
body = t[:t.rindex("\r", 0, t.rindex("\r", 0, len(t) - 2))]  # less the blanking and summary
ups = [u for u in body.split("\r")[1:] if u.strip()]
rx = r"(?:\S.*?  )?[0-9]+%(?:  .*)?  [0-9.]+ (?:B|KiB|MiB|GiB)/s  ETA \S+"
ok = ups and all(len(u) <= 29 for u in body.split("\r")) and \
    all(re.fullmatch(rx, u.rstrip()) for u in ups)
sys.exit(0 if ok else 1)
EOF

# A terminal resized while the line is shown (SIGWINCH): narrowed below the
# line, widened, narrowed again.  The bytes it got are replayed on a model
# of a terminal that rewraps its lines on a resize: before each update the
# row holds one whole update and nothing else, the cursor never goes above
# the line, and at the end the screen holds the summary line alone.
cat > "$PY/resize.py" <<'EOF'
import fcntl, os, pty, re, select, signal, struct, subprocess, sys, termios, time
sys.path.insert(0, sys.argv[0].rsplit("/", 1)[0])
from lines import form, EARLY, SUMMARY
# interrupt: one resize, 100 to 30 columns, and SIGINT at once, before the
# next draw can redraw the line: the signal handler ends it instead.
interrupt = sys.argv[1] == "interrupt"
if interrupt:
    del sys.argv[1]
rate, cmd = float(sys.argv[1]), sys.argv[2:]
sizes = [100, 30] if interrupt else [100, 40, 100, 30]
master, slave = pty.openpty()
def winsize(cols):
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
winsize(sizes[0])
p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
os.close(slave)
t0, n, tty, events = time.monotonic(), 0, bytearray(), [(0, sizes[0])]
fd, open_fds = p.stdout.fileno(), None
open_fds = {fd, master}
while open_fds:
    want = [master] if master in open_fds else []
    ahead = n / rate - (time.monotonic() - t0)
    if fd in open_fds and ahead <= 0:
        want.append(fd)
    r, _, _ = select.select(want, [], [], max(ahead, 0) if fd in open_fds else 10)
    for f in r:
        try:
            b = os.read(f, 1 << 16)
        except OSError:
            b = b""
        if not b:
            open_fds.discard(f)
        elif f == fd:
            n += len(b)
        else:
            tty += b
            # the next size once three more updates came at this one
            if len(events) < len(sizes) and tty.count(b"\r") >= 3 * len(events):
                winsize(sizes[len(events)])
                events.append((len(tty), sizes[len(events)]))
                if interrupt and len(events) == len(sizes):
                    p.send_signal(signal.SIGINT)
    if fd not in open_fds and p.poll() is not None:
        while master in open_fds and select.select([master], [], [], 0.2)[0]:
            try:
                b = os.read(master, 1 << 16)
            except OSError:
                b = b""
            if not b:
                break
            tty += b
        break
rc = p.wait()
text = tty.decode("utf-8", "replace")
errors = [] if rc == (-signal.SIGINT if interrupt else 0) else [f"exit status {rc}"]
if len(events) < len(sizes):
    errors.append(f"the run ended after {len(events) - 1} resizes of {len(sizes) - 1}")
update = re.compile(form("c", False) + "|" + EARLY["c"])
last = r"\S+: interrupted" if interrupt else SUMMARY  # what the screen ends with
# The model: logical lines, the cursor an index into the current one; a
# resize rewraps the rows, so it changes nothing but the width.
lines, cur, pending, width, ev, i = [[]], 0, False, sizes[0], 1, 0
def row():
    return cur // width - 1 if pending else cur // width
while i < len(text):
    while ev < len(events) and events[ev][0] <= len(text[:i].encode()):
        width = events[ev][1]
        ev += 1
    ch = text[i]
    if ch == "\r":
        shown = "".join(lines[-1]).rstrip(" ")
        if shown and not update.fullmatch(shown) and not re.fullmatch(last, shown):
            errors.append(f"at width {width}, the row holds {shown!r}")
        cur, pending = row() * width, False
    elif ch == "\n":
        lines.append([])
        cur, pending = 0, False
    elif ch == "\x1b":
        m = re.match(r"\x1b\[([0-9]*)([AJ])", text[i:])
        if m is None:
            errors.append(f"an escape sequence the model does not know: {text[i:i + 8]!r}")
            break
        if m.group(2) == "A":
            up = int(m.group(1) or 1)
            col = cur - row() * width
            if row() - up < 0:
                errors.append("the cursor went above the line")
            cur = max(row() - up, 0) * width + col
        else:
            del lines[-1][cur:]
        pending = False
        i += len(m.group(0))
        continue
    else:
        line = lines[-1]
        line.extend(" " * (cur - len(line)))
        if cur < len(line):
            line[cur] = ch
        else:
            line.append(ch)
        cur += 1
        pending = cur % width == 0
    i += 1
screen = ["".join(l).rstrip(" ") for l in lines]
if len(screen) != 2 or screen[1] != "" or not re.fullmatch(last, screen[0]):
    errors.append(f"the screen at the end: {screen!r}")
for e in errors:
    print("resize:", e, file=sys.stderr)
sys.exit(1 if errors else 0)
EOF
if (cd "$W" && "$PY3" "$PY/resize.py" $((CRATE / 2)) timeout "$HANG" "$SPIGZ" -c big \
    > "$T/resize.err" 2>&1); then
    pass
else
    fail "a terminal resized under the line: $(head -c 600 "$T/resize.err")"
fi
# ... and interrupted at once (Ctrl-C): the handler's end of the line too.
if (cd "$W" && "$PY3" "$PY/resize.py" interrupt $((CRATE / 2)) timeout "$HANG" "$SPIGZ" -c big \
    > "$T/resize.err" 2>&1); then
    pass
else
    fail "a terminal resized under the line, then SIGINT: $(head -c 600 "$T/resize.err")"
fi

finish

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
PY3=$(python3 -c 'import sys; print(sys.executable)') || PY3=python3
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
ETA = r"ETA (?:--:--|[0-9]+:[0-5][0-9](?::[0-5][0-9])?)"
NAME = r"(?P<name>\S.*?)"
# The fields after the name, in order; a narrow terminal drops them from the end.
FORMS = {
    # NAME  P%  DONE/TOTAL  RATE/s  ETA m:ss  zeros Z%  out O%
    "c": [r"(?P<pct>[0-9]+)%", rf"(?P<done>{SIZE})/(?P<total>{SIZE})", rf"{SIZE}/s", ETA,
          r"zeros (?P<zeros>[0-9]+)%", r"out (?P<ratio>[0-9.]+)%"],
    # NAME  P%  DONE/TOTAL  RATE/s  ETA m:ss  out SIZE (Rx)
    "d": [r"(?P<pct>[0-9]+)%", rf"(?P<done>{SIZE})/(?P<total>{SIZE})", rf"{SIZE}/s", ETA,
          rf"out (?P<out>{SIZE}) \((?P<ratio>[0-9.]+)x\)"],
    # no total: NAME  DONE  RATE/s  zeros Z%  out O%
    "cp": [rf"(?P<done>{SIZE})", rf"{SIZE}/s", r"zeros (?P<zeros>[0-9]+)%",
           r"out (?P<ratio>[0-9.]+)%"],
    # no total: NAME  DONE  RATE/s  out SIZE (Rx)
    "dp": [rf"(?P<done>{SIZE})", rf"{SIZE}/s", rf"out (?P<out>{SIZE}) \((?P<ratio>[0-9.]+)x\)"],
}
# Before anything is counted the fields after the rate are left out.
EARLY = {
    "c": rf"\S.*?  0%  0 B/{SIZE}  0 B/s  {ETA}",
    "d": rf"\S.*?  0%  0 B/{SIZE}  0 B/s  {ETA}",
    "cp": r"\S.*?  0 B  0 B/s",
    "dp": r"\S.*?  0 B  0 B/s",
}

def form(kind, full):
    """The regex of an update: every field, or (full false) the name, the
    first two fields and any of the others from the left."""
    f = FORMS[kind]
    if full:
        return NAME + "".join("  " + x for x in f)
    tail = ""
    for x in reversed(f[2:]):
        tail = f"(?:  {x}{tail})?"
    return NAME + "  " + f[0] + "  " + f[1] + tail

def updates(text, kind, width, errors, full=True):
    """Split the \r-separated updates, check each one, return the matches
    (None for an update made before anything was counted)."""
    out = []
    rx = form(kind, full)
    for i, u in enumerate(text.split("\r")[1:]):
        line = u.rstrip(" ")
        if len(u) > width - 1:
            errors.append(f"update {i} is {len(u)} columns, more than {width - 1}: {u!r}")
        m = re.fullmatch(rx, line)
        if m is None and re.fullmatch(EARLY[kind], line) is None:
            errors.append(f"update {i} does not match the {kind} form: {line!r}")
        out.append(m)
    return out
EOF

# check_file.py KIND ELAPSED FILE [NAME ZEROS TOTAL OUT]: a forced progress
# run's stderr (not a terminal): "\r"-separated updates, at most 5 a second of
# ELAPSED plus 2, percent never going back, ended by one "\n" after a last
# update at 100% (for a known total) with the expected name, zero share, total
# and output; no escape sequence, nothing after the newline.
cat > "$PY/check_file.py" <<'EOF'
import sys
sys.path.insert(0, sys.argv[0].rsplit("/", 1)[0])
from lines import updates
kind, elapsed, path = sys.argv[1], float(sys.argv[2]), sys.argv[3]
want = sys.argv[4:]
text = open(path, "rb").read().decode("utf-8", "replace")
errors = []
if not text.startswith("\r"):
    errors.append(f"stderr does not start with a \\r update: {text[:80]!r}")
if not text.endswith("\n") or text.count("\n") != 1:
    errors.append(f"stderr must end with its only newline: {text[-120:]!r}")
if "\x1b" in text:
    errors.append("an escape sequence in a non-terminal's progress")
ms = updates(text.rstrip("\n"), kind, 80, errors)
n = len(ms)
if n == 0:
    errors.append("no update at all in a run of %.2f s" % elapsed)
if n > 5 * elapsed + 2:
    errors.append(f"{n} updates in {elapsed:.2f} s: more than 5 a second")
def size(v):
    n, u = v.split()
    return float(n) * 1024 ** ["B", "KiB", "MiB", "GiB", "TiB"].index(u)
for key, conv in (("pct", int), ("done", size), ("out", size)):
    seq = [conv(m[key]) for m in ms if m is not None and key in m.groupdict()]
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
    if kind in ("c", "cp") and not 45 <= float(g["ratio"]) <= 55:
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

# check_tty.py KIND ELAPSED FIRST COLS FILE: what a terminal got: updates at
# most COLS-1 wide, the first one after 0.5 s at the earliest, at most 5 a
# second, no newline, the line blanked at the end ("\r", spaces, "\r").
cat > "$PY/check_tty.py" <<'EOF'
import re, sys
sys.path.insert(0, sys.argv[0].rsplit("/", 1)[0])
from lines import updates
kind, elapsed, first, cols, path = sys.argv[1:6]
elapsed, first, cols = float(elapsed), float(first), int(cols)
text = open(path, "rb").read().decode("utf-8", "replace")
errors = []
if "\n" in text:
    errors.append("a newline in a terminal's progress")
m = re.search(r"\r( +)\r$", text)
if m is None:
    errors.append(f"the line is not blanked at the end: {text[-100:]!r}")
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
    (cd "$W" && exec timeout 120 "$SPIGZ" "$@") 2> "$T/err" | "$PY3" "$PY/throttle.py" "$rate" "$out"
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
    slow "$T/c.out" "$CRATE" -c --progress "$LOOPDEV"
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
cat "$W/big" | (cd "$W" && exec timeout 120 "$SPIGZ" -c --progress) 2> "$T/err" |
    "$PY3" "$PY/throttle.py" "$CRATE" "$T/c.out"
RC=${PIPESTATUS[1]}
ELAPSED=$(since "$t")
forced cp "cat FILE | spigz -c --progress" "$T/c.out" "$W/stdin.gz" stdin 50 "128 MiB" -

# ---- forced on a file: decompression ----

section "--progress, decompression"
slow "$T/d.out" "$DRATE" -dc --progress big.gz
forced d "-dc --progress FILE.gz (index)" "$T/d.out" "$W/big" big.gz - - "128 MiB"
slow "$T/d.out" "$DRATE" -dc --progress seq.gz
forced d "-dc --progress FILE.gz (sequential)" "$T/d.out" "$W/big" seq.gz - - "128 MiB"
slow "$T/d.out" "$DRATE" -dc --progress --no-index big.gz
forced d "-dc --progress --no-index FILE.gz" "$T/d.out" "$W/big" big.gz - - "128 MiB"

section "--progress, decompression of a pipe"
t=$(now)
# shellcheck disable=SC2002 # a pipe, not a file: no total
cat "$W/big.gz" | (cd "$W" && exec timeout 120 "$SPIGZ" -dc --progress) 2> "$T/err" |
    "$PY3" "$PY/throttle.py" "$DRATE" "$T/d.out"
RC=${PIPESTATUS[1]}
ELAPSED=$(since "$t")
forced dp "cat FILE.gz | spigz -dc --progress" "$T/d.out" "$W/big" stdin - - "128 MiB"

# A file named with control characters shows them as '?'.
cp "$W/big.gz" "$W/a"$'\t'"b.gz"
slow "$T/d.out" "$DRATE" -dc --progress "a"$'\t'"b.gz"
forced d "-dc --progress NAME-WITH-TAB" "$T/d.out" "$W/big" "a?b.gz" - - "128 MiB"

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
while i < len(payload):
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
payload = b"".join(leb(h) + leb(c) + crc for h, c, crc, _ in recs)
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
if "$PY3" "$PY/check_file.py" d "$ELAPSED" "$T/err1" lie.gz - - "128 MiB" &&
    tail -n +2 "$T/err" | grep -q '^spigz: lie.gz: index not used (the piece at offset'; then
    pass
else
    fail "-dc --progress LYING-INDEX: $(errtext "$T/err")"
fi

# ---- the line ends before later messages ----

section "messages after the line"
slow "$T/c.out" "$CRATE" -v -c --progress big
check "-v --progress: exit status $RC" [ "$RC" -eq 0 ]
tail -n 1 "$T/err" > "$T/last"
if grep -q '^big:.*%' "$T/last" && [ "$(tr -cd '\n' < "$T/err" | wc -c)" -eq 2 ] &&
    head -n 1 "$T/err" | grep -q $'^\r'; then
    pass
else
    fail "-v --progress: the verbose line must follow the ended progress line: $(errtext "$T/err")"
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
# A quick run prints nothing even when forced.
head -c 100000 "$W/big" > "$W/small"
(cd "$W" && "$SPIGZ" -c --progress small > "$T/s.out") 2> "$T/err"
check "--progress on a run under 0.5 s prints nothing" [ ! -s "$T/err" ]
(cd "$W" && "$SPIGZ" -l --progress big.gz > "$T/l.out") 2> "$T/err"
check "-l --progress prints no progress" [ ! -s "$T/err" ]

# ---- on a terminal ----

section "terminal"
# tty KIND DESC REF RATE COLS ARG...: spigz ARG... with stderr a terminal.
tty_run() {
    local kind=$1 desc=$2 ref=$3 rate=$4 cols=$5 res
    shift 5
    res=$(cd "$W" && PTY_OUT=$T/pty.out "$PY3" "$PY/on_tty.py" "$ref" "$rate" "$cols" \
        timeout 120 "$SPIGZ" "$@") || { fail "$desc: on_tty.py failed"; return; }
    read -r elapsed first rc same <<< "$res"
    check "$desc: exit status $rc" [ "$rc" -eq 0 ]
    check "$desc: stdout differs from the run without a terminal" [ "$same" -eq 1 ]
    if [ "$kind" = none ]; then
        check "$desc: nothing on the terminal" [ ! -s "$T/pty.out" ]
    elif "$PY3" "$PY/check_tty.py" "$kind" "$elapsed" "$first" "$cols" "$T/pty.out"; then
        pass
    else
        fail "$desc: $(errtext "$T/pty.out")"
    fi
}
tty_run c "-c FILE, stderr a terminal" "$W/big.gz" "$CRATE" 80 -c big
tty_run c "-c FILE, a 60-column terminal" "$W/big.gz" "$CRATE" 60 -c big
tty_run d "-dc FILE.gz, stderr a terminal" "$W/big" "$DRATE" 80 -dc big.gz
tty_run none "-q -c FILE, stderr a terminal" "$W/big.gz" "$CRATE" 80 -q -c big
tty_run none "--no-progress -c FILE, stderr a terminal" "$W/big.gz" "$CRATE" 80 \
    --no-progress -c big
# A very narrow terminal keeps only what fits; the line is never wider.
res=$(cd "$W" && PTY_OUT=$T/pty.out "$PY3" "$PY/on_tty.py" "$W/big.gz" "$CRATE" 30 \
    timeout 120 "$SPIGZ" -c big) || fail "30 columns: on_tty.py failed"
if "$PY3" - "$T/pty.out" <<'EOF'; then pass; else fail "30 columns: $(errtext "$T/pty.out")"; fi
import re, sys
t = open(sys.argv[1], "rb").read().decode()
ups = [u for u in t.split("\r")[1:] if u.strip()]
ok = ups and all(len(u) <= 29 for u in t.split("\r")) and \
    all(re.fullmatch(r"(?:\S.*  )?[0-9]+%  .*", u.rstrip()) for u in ups)
sys.exit(0 if ok else 1)
EOF

finish

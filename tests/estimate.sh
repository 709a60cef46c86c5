#!/bin/bash
# estimate.sh — --estimate and --map: predictions checked against real spigz
# output on generated images, the report formats, the map, reproducibility
# and errors.
. "$(dirname "$0")/lib.sh"
need python3 cmp truncate

export LC_ALL=C COLUMNS=80

# gen.py OUT SIZE SEG...: a dense (or, with SIZE prefixed by 's', sparse)
# image; SEG is KIND@OFFSET+LENGTH (MiB, may be fractional): t text, r random,
# s structured records (compressible binary), m a 256 KiB mix of all.
cat > "$T/gen.py" <<'EOF'
import random, sys
MIB = 1 << 20
WORDS = ("the of and to in is was that for it with as his on be at by had are but from "
         "or have an they which one you were her all she there would their we disk image "
         "block device sparse hole zero chunk stream member deflate kernel module").split()
def text(r, n):
    out, total = [], 0
    while total < n:
        line = " ".join(r.choices(WORDS, k=r.randint(3, 14))) + ".\n"
        out.append(line); total += len(line)
    return "".join(out).encode()[:n]
def records(r, n):
    out, i = bytearray(), r.randint(0, 1 << 20)
    while len(out) < n:
        out += i.to_bytes(8, "little") + r.choice(WORDS).encode().ljust(24, b"\0") \
               + bytes([r.randint(0, 3)]) * 32
        i += r.randint(1, 3)
    return bytes(out[:n])
def mix(r, n):
    out, k = bytearray(), 0
    while len(out) < n:
        f = (text, records, lambda r, m: r.randbytes(m), lambda r, m: bytes(m))[k % 4]
        out += f(r, 256 << 10); k += 1
    return bytes(out[:n])
out, size = sys.argv[1], sys.argv[2]
sparse = size.startswith("s")
size = int(float(size.lstrip("s")) * MIB)
r = random.Random(out.rsplit("/", 1)[-1])
with open(out, "wb") as f:
    if not sparse:
        f.write(bytes(size))
    f.truncate(size)
    for seg in sys.argv[3:]:
        kind, where = seg.split("@")
        off, n = (int(float(x) * MIB) for x in where.split("+"))
        f.seek(off)
        f.write({"t": text, "r": lambda r, m: r.randbytes(m), "s": records, "m": mix}[kind](r, n))
EOF

gen() { python3 "$T/gen.py" "$@" || fail "gen.py $*"; }
mkdir -p "$T/img"
gen "$T/img/mostly-zero" s256 t@3+2 r@40+1 s@100+2 t@250+0.5   # sparse, ~2% data
gen "$T/img/half" 48 m@0+24                                     # dense, half data
gen "$T/img/full" 40 m@0+40                                     # no zero runs
gen "$T/img/random" 32 r@0+32                                   # incompressible
gen "$T/img/text" 32 t@0+32                                     # compressible text
: > "$T/img/empty"

# kv FILE KEY: a value from a key=value report.
kv() { sed -n "s/^$2=//p" "$1" | head -n 1; }

# within ACTUAL LO SIZE HI PCT: the interval holds the actual size and the
# prediction is within PCT percent of it.
within() {
    python3 - "$@" <<'EOF'
import sys
a, lo, s, hi, pct = (float(x) for x in sys.argv[1:])
ok = lo <= a <= hi and abs(s - a) <= a * pct / 100
if not ok:
    print("actual %d, predicted %d [%d, %d] (%.2f%% off, allowed %g%%)"
          % (a, s, lo, hi, 100 * (s - a) / max(a, 1), pct), file=sys.stderr)
sys.exit(0 if ok else 1)
EOF
}

# ---- predictions against real output ----
for img in mostly-zero half full random text empty; do
    f=$T/img/$img
    for opts in "-6" "-1 -b 256" "-9 --estimate=full"; do
        l=${opts%% *}
        has_level "${l#-}" "$img $opts" || continue
        # shellcheck disable=SC2206 # $opts is a list of options
        case $opts in *full*) e=( $opts ) ;; *) e=( --estimate $opts ) ;; esac
        # shellcheck disable=SC2206 # the same list
        c=( ${opts/--estimate=full/} )
        actual=$("$SPIGZ" -c "${c[@]}" -p 2 < "$f" | wc -c) # stdin: no name stored
        if ! "$SPIGZ" "${e[@]}" -p 2 --format=kv < "$f" > "$T/r" 2> "$T/err"; then
            fail "$img $opts: estimate failed: $(cat "$T/err")"; continue
        fi
        check "$img $opts: nothing on stderr" test ! -s "$T/err"
        check "$img $opts: within 5% and inside the interval" \
            within "$actual" "$(kv "$T/r" size_low)" "$(kv "$T/r" size)" "$(kv "$T/r" size_high)" 5
        size=$(stat -c %s "$f")
        check "$img $opts: input size" test "$(kv "$T/r" input_bytes)" = "$size"
        z=$(kv "$T/r" zero_bytes) d=$(kv "$T/r" data_bytes)
        check "$img $opts: zeros + data = size" test $((z + d)) -eq "$size"
    done
done

# Named files: the stored name counts, and holes are found.
f=$T/img/mostly-zero
actual=$("$SPIGZ" -c -p 2 "$f" | wc -c)
"$SPIGZ" --estimate -p 2 --format=kv "$f" > "$T/r"
check "named file: within 5%" \
    within "$actual" "$(kv "$T/r" size_low)" "$(kv "$T/r" size)" "$(kv "$T/r" size_high)" 5
check "sparse file: holes seen" test "$(kv "$T/r" hole_bytes)" -gt $((200 << 20))
check "sample mode: not exact" test "$(kv "$T/r" split_exact)" = false
"$SPIGZ" --estimate=full -p 2 --format=kv "$f" > "$T/full"
check "full mode: exact split" test "$(kv "$T/full" split_exact)" = true
check "probe split equals the full read's here" \
    test "$(kv "$T/r" zero_bytes)" = "$(kv "$T/full" zero_bytes)"
check "the input is untouched and no output made" \
    test -f "$f" -a ! -e "$f.gz"

# A pipe is read whole.
cat "$T/img/half" | "$SPIGZ" --estimate -p 2 --format=kv > "$T/r"
actual=$("$SPIGZ" -c -p 2 < "$T/img/half" | wc -c)
check "pipe: exact split" test "$(kv "$T/r" split_exact)" = true
check "pipe: within 5%" \
    within "$actual" "$(kv "$T/r" size_low)" "$(kv "$T/r" size)" "$(kv "$T/r" size_high)" 5

# ---- reproducibility: the seed alone decides the sample ----
strip() { grep -v -e '^seconds=' -e '^estimate_seconds=' -e '^threads=' "$1"; }
for s in 1 7; do
    "$SPIGZ" --estimate --seed $s -p 1 --format=kv "$T/img/full" > "$T/a$s"
    "$SPIGZ" --estimate --seed $s -p 2 --format=kv "$T/img/full" > "$T/b$s"
    check "seed $s: same figures whatever -p" cmp -s <(strip "$T/a$s") <(strip "$T/b$s")
done
check "seeds 1 and 7: different samples" \
    test "$(kv "$T/a1" size)" != "$(kv "$T/a7" size)"

# ---- formats ----
"$SPIGZ" --estimate --map --format=json "$T/img/half" "$T/img/text" > "$T/j"
check "json: one object per input, map of width x 16 cells" python3 - "$T/j" <<'EOF'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 2, lines
for line in lines:
    o = json.loads(line)
    for k in ("file", "size", "size_low", "size_high", "zero_bytes", "data_bytes", "seconds"):
        assert k in o, k
    assert o["size_low"] <= o["size"] <= o["size_high"]
    assert len(o["map"]) == 64 * 16 and all(0 <= v <= 100 for v in o["map"])
o = json.loads(lines[0])
# half: the first half is data (some of it zero runs), the second all zeros
assert max(o["map"][:400]) > 0 and max(o["map"][600:]) == 0, o["map"]
EOF
"$SPIGZ" --estimate "$T/img/text" > "$T/t"
check "text: names the file and its size" grep -q "^$T/img/text: 32.0 MiB, " "$T/t"
check "text: gives an interval" grep -q "^  compressed .*90% interval" "$T/t"

# ---- the map ----
"$SPIGZ" --map "$T/img/mostly-zero" > "$T/m"
check "map: no size estimate without --estimate" bash -c "! grep -q interval '$T/m'"
check "map: legend" grep -q "map: each cell 256 KiB" "$T/m"
rows=$(grep -c '^ *[0-9.]* [KMGT]*i*B \{1,\}[-.+*#]*$' "$T/m")
check "map: 16 rows of cells ($rows)" test "$rows" -eq 16
check "map: 64 cells a row (COLUMNS=80)" \
    bash -c "grep -E '^ *[0-9.]+ ([KMGT]i)?B [-.+*#]{64}\$' '$T/m' | wc -l | grep -qx 16"
check "map: the data near the start shows" \
    bash -c "sed -n '3p' '$T/m' | grep -q '[-+*#]'"
check "map: the empty middle is all dots" \
    bash -c "sed -n '10p' '$T/m' | grep -Eq ' [.]{64}\$'"

# ---- errors ----
"$SPIGZ" --estimate "$T/nope" "$T/img/text" > "$T/o" 2> "$T/e"
check "missing file: exit 1" test $? -eq 1
check "missing file: named" grep -q "spigz: $T/nope: No such file" "$T/e"
check "missing file: the next one still estimated" grep -q "img/text:" "$T/o"
"$SPIGZ" --estimate -c "$T/img/text" > /dev/null 2>&1
check "--estimate with -c: usage error" test $? -eq 1
"$SPIGZ" --estimate --format=xml "$T/img/text" > /dev/null 2>&1
check "--format=xml: usage error" test $? -eq 1
"$SPIGZ" --estimate=half "$T/img/text" > /dev/null 2>&1
check "--estimate=half: usage error" test $? -eq 1

finish

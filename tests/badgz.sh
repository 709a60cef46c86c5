#!/bin/bash
# badgz.sh — malformed and tricky gzip inputs, written by tests/py/badgz.py
# (every inflate error path, window edges, header fields and flags, cuts at
# every field, trailers, members, trailing bytes, stored blocks, degenerate
# streams, many encoders' valid output, LZW, pack and zip as gzip reads
# them; its MANIFEST.tsv lists them).  GNU gzip 1.12's verdict on each is
# taken here, live: spigz -dc must give the same exit status and the same
# output bytes (those written before an error too), name its input in its
# message, and never crash or hang.  Each vector is read twice: from a file
# on standard input (seekable: ISA-L inflates it, zlib gives the verdict
# where ISA-L stops short) and from a pipe (zlib).
#
# A difference is allowed only where the manifest names one for that vector,
# and only as narrowly as its rule below says: a doc/GZIP.md ID (D-lzh,
# D-intact-header), or a finding not resolved yet (finding:isal-trailer,
# printed on every run).  The vectors are checked against gzip as well: one
# built to decode (to known bytes), to warn or to fail must do so under gzip,
# so a generator or an oracle gone wrong fails here too.
#
# BADGZ_DIR, when set, names a further corpus with its own check.sh and
# MANIFEST.tsv (`check.sh SPIGZ` ending "N passed, N failed, N skipped"); it
# is run as well.  It is optional: the test needs nothing outside the sources.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=tests/lib.sh
. "${srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need gzip python3 sha256sum cmp timeout
gv=$(gzip --version 2>/dev/null | head -n 1)
check "the verdicts are GNU gzip 1.12's, and the gzip here is '$gv'" [ "$gv" = "gzip 1.12" ]
for id in D-lzh D-intact-header; do
    check "doc/GZIP.md lists $id, which this test allows" grep -q "^| $id |" "$srcdir/doc/GZIP.md"
done

V=$T/vectors
section "writing the vectors (tests/py/badgz.py)"
if ! "$PY3" "$srcdir/tests/py/badgz.py" "$V"; then
    fail "tests/py/badgz.py could not write the vectors"
    finish
    exit
fi
n=$(($(wc -l < "$V/MANIFEST.tsv") - 1))
check "badgz.py wrote at least 300 vectors (it wrote $n)" [ "$n" -ge 300 ]

sha() { local s; s=$(sha256sum < "$1"); echo "${s%% *}"; }
line1() { grep -m 1 . "$1" | cut -c 1-160; }

# The vector is what it was built to be, under gzip (expect column).
built_for() {
    case $expect in
        ok:*) [ "$grc" -eq 0 ] && [ "$gsha" = "${expect#ok:}" ] ;;
        warn:*) [ "$grc" -eq 2 ] && [ "$gsha" = "${expect#warn:}" ] ;;
        fail) [ "$grc" -eq 1 ] ;;
        -) return 0 ;;
        *) return 1 ;;
    esac
}

# allowed MODE: spigz's run differs from gzip's; is that the difference the
# manifest allows on this vector (never a crash or a hang)?
KNOWN=0
ALLOWED=0
allowed() {
    local s
    s=$(sha "$T/s.out")
    case $allow in
        # doc/GZIP.md D-lzh: the LZH magic after a member is trailing
        # garbage: a warning, status 2, the members' bytes out.
        D-lzh:*) [ "$rc" -eq 2 ] && [ "$s" = "${allow#*:}" ] ;;
        # doc/GZIP.md D-intact-header: read from a file, code lengths gzip
        # refuses but ISA-L builds from, and the data they code is what the
        # trailer vouches for: status 0 and those bytes.  From a pipe, never.
        D-intact-header:*)
            [ "$1" = file ] && [ "$grc" -eq 1 ] && [ "$rc" -eq 0 ] && [ "$s" = "${allow#*:}" ] ;;
        # A finding, not a documented difference: read from a file, code
        # lengths gzip refuses (ISA-L builds a code from them) and a trailer
        # that is wrong or cut.  spigz fails too (status 1), but with the
        # trailer's message (crc error, length error, unexpected end of
        # file) and ISA-L's bytes out, where gzip says "format violated"
        # with nothing of the member out.  From a pipe it must match.
        finding:isal-trailer)
            [ "$1" = file ] && [ "$grc" -eq 1 ] && [ "$rc" -eq 1 ] || return 1
            echo "KNOWN FINDING (isal-trailer): $file: $why; spigz: $(line1 "$T/s.err")"
            KNOWN=$((KNOWN + 1))
            return 0 ;;
        *) return 1 ;;
    esac || return 1
    echo "allowed (${allow%%:*}): $file ($1): $why"
    ALLOWED=$((ALLOWED + 1))
}

# judge MODE: spigz's run (rc, $T/s.out, $T/s.err) against gzip's.
judge() {
    why=
    if [ "$rc" -eq 124 ]; then
        why="hung (no end in ${HANG}s)"
    elif [ "$rc" -gt 128 ]; then
        why="crashed (signal $((rc - 128)))"
    elif [ "$rc" -ne "$grc" ]; then
        why="status $rc, gzip's $grc"
    elif ! cmp -s "$T/s.out" "$T/g.out"; then
        why="output of $(stat -c %s "$T/s.out") bytes, not gzip's $(stat -c %s "$T/g.out")"
    elif [ "$rc" -ne 0 ] && ! line1 "$T/s.err" | grep -q '^spigz: stdin'; then
        why="its message does not name its input: '$(line1 "$T/s.err")'"
    fi
    if [ -z "$why" ]; then
        pass
    elif [ "$rc" -ne 124 ] && [ "$rc" -le 128 ] && allowed "$1"; then
        pass
    else
        fail "$file (from a $1): $why; spigz: '$(line1 "$T/s.err")'; gzip: '$(line1 "$T/g.err")' [$cls: $desc]"
    fi
}

section "spigz -dc and gzip -dc on each vector, from a file and from a pipe"
declare -A classes=()
while IFS=$'\t' read -r file cls expect _zlib allow desc; do
    [ "$file" = file ] && continue
    classes[$cls]=$((${classes[$cls]:-0} + 1))
    f=$V/$file
    timeout "$HANG" gzip -dc < "$f" > "$T/g.out" 2> "$T/g.err"
    grc=$?
    gsha=$(sha "$T/g.out")
    if [ "$expect" != - ]; then
        built_for || fail "$file: gzip's verdict (status $grc, '$(line1 "$T/g.err")') is not the one the vector was built for ($expect) [$cls: $desc]"
        built_for && pass
    fi
    timeout "$HANG" "$SPIGZ" -dc < "$f" > "$T/s.out" 2> "$T/s.err"
    rc=$?
    judge file
    timeout "$HANG" "$SPIGZ" -dc < <(cat "$f") > "$T/s.out" 2> "$T/s.err"
    rc=$?
    judge pipe
done < "$V/MANIFEST.tsv"
summary=
for c in "${!classes[@]}"; do summary="$summary $c=${classes[$c]}"; done
echo "$n vectors by class:$summary"
echo "$ALLOWED differences allowed (doc/GZIP.md), $KNOWN known findings"

if [ -n "${BADGZ_DIR:-}" ]; then
    section "the further corpus in BADGZ_DIR=$BADGZ_DIR (its check.sh)"
    if [ -f "$BADGZ_DIR/check.sh" ] && [ -f "$BADGZ_DIR/MANIFEST.tsv" ]; then
        case $SPIGZ in /*) sp=$SPIGZ ;; *) sp=$(pwd)/$SPIGZ ;; esac
        out=$(bash "$BADGZ_DIR/check.sh" "$sp" 2>&1)
        crc=$?
        printf '%s\n' "$out"
        last=$(printf '%s\n' "$out" | tail -n 1)
        if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped$ ]] &&
            [ "$crc" -eq 0 ] && [ "${BASH_REMATCH[2]}" -eq 0 ] && [ "${BASH_REMATCH[1]}" -gt 0 ]; then
            pass
        else
            fail "BADGZ_DIR's check.sh: '$last' (status $crc)"
        fi
    else
        fail "BADGZ_DIR=$BADGZ_DIR holds no check.sh and MANIFEST.tsv"
    fi
fi
finish

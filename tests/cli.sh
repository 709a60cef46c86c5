#!/bin/bash
# cli.sh — options and gzip's file handling: FILE -> FILE.gz, -k, -c, -o, -S,
# -f, refusals (existing output, suffix, directory, links, FIFOs, devices,
# terminals), exit statuses, messages, metadata copied to the output.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=tests/lib.sh
. "${srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need gzip python3 cmp stat mkfifo timeout script od seq head strace

# Every spigz run happens in $W with relative names, as a user would type.
W=$T/w
R=$T/ref
mkdir -p "$W" "$R"

errtext() { tr '\n' '|' < "$T/err" | head -c 400; }

# run ARG...: spigz ARG... in $W; stdout in $T/out, stderr in $T/err, the
# exit status in $RC, the command line in $CMD.  stdin is kept.
run() {
    CMD="spigz $*"
    (cd "$W" && exec timeout "$HANG" "$SPIGZ" "$@") > "$T/out" 2> "$T/err"
    RC=$?
}

# rc_is DESC N: the last run exited N.
rc_is() {
    if [ "$RC" -eq "$2" ]; then
        pass
    else
        fail "$1: '$CMD' exited $RC, expected $2 (stderr: $(errtext))"
    fi
}

# err_has DESC TEXT: the last run's stderr contains TEXT.
err_has() {
    if grep -qF -- "$2" "$T/err"; then
        pass
    else
        fail "$1: stderr of '$CMD' lacks '$2': $(errtext)"
    fi
}

err_empty() {
    if [ -s "$T/err" ]; then
        fail "$1: '$CMD' printed on stderr: $(errtext)"
    else
        pass
    fi
}

out_empty() {
    if [ -s "$T/out" ]; then
        fail "$1: '$CMD' wrote $(stat -c %s "$T/out") bytes on stdout"
    else
        pass
    fi
}

# gz_is DESC GZ ORIG: GZ decodes (gzip) to exactly ORIG.
gz_is() {
    if [ ! -f "$2" ]; then
        fail "$1: $2 does not exist"
    elif gzip -dc < "$2" 2> "$T/gzerr" | cmp -s - "$3"; then
        pass
    else
        fail "$1: $2 does not decode to $3 ($(tr '\n' ' ' < "$T/gzerr"))"
    fi
}

# present DESC PATH / absent DESC PATH (paths relative to $W).
present() { if [ -e "$W/$2" ] || [ -L "$W/$2" ]; then pass; else fail "$1: $2 is missing (after '$CMD')"; fi; }
absent() { if [ -e "$W/$2" ] || [ -L "$W/$2" ]; then fail "$1: $2 exists (after '$CMD')"; else pass; fi; }

# unchanged DESC NAME: $W/NAME still equals $R/NAME.
unchanged() {
    if cmp -s "$W/$2" "$R/$2"; then pass; else fail "$1: $2 changed or vanished (after '$CMD')"; fi
}

# mk NAME [LINES]: a text file in $W with a reference copy in $R.
mk() {
    seq 1 "${2:-5000}" | sed "s/^/$1 line /" > "$W/$1"
    cp "$W/$1" "$R/$1"
}

# flg GZ: the FLG byte of a gzip header, in decimal.
flg() { od -An -tu1 -j3 -N1 "$1" | tr -d ' '; }

# ---- FILE -> FILE.gz, -k, -c, -o, -S, -f ----
section "FILE -> FILE.gz, -k, -c, -o, -S, -f"
mk a
run a
rc_is "spigz FILE" 0
err_empty "spigz FILE"
out_empty "spigz FILE"
absent "spigz FILE removes FILE" a
gz_is "spigz FILE writes FILE.gz" "$W/a.gz" "$R/a"

mk b
run -k b
rc_is "-k" 0
unchanged "-k keeps FILE" b
gz_is "-k writes FILE.gz" "$W/b.gz" "$R/b"
mk b2
run --keep b2
rc_is "--keep" 0
unchanged "--keep keeps FILE" b2

mk c
for opt in -c --stdout --to-stdout; do
    run "$opt" c
    rc_is "$opt" 0
    gz_is "$opt writes to stdout" "$T/out" "$R/c"
    unchanged "$opt keeps FILE" c
    absent "$opt creates no FILE.gz" c.gz
done

mk d
run -o out.gz d
rc_is "-o OUT" 0
gz_is "-o OUT writes OUT" "$W/out.gz" "$R/d"
unchanged "-o keeps the input" d
absent "-o creates no FILE.gz" d.gz
out_empty "-o OUT"
run --output=out2.gz d
rc_is "--output=OUT" 0
gz_is "--output=OUT writes OUT" "$W/out2.gz" "$R/d"
run --output out3.gz d
rc_is "--output OUT" 0
gz_is "--output OUT writes OUT" "$W/out3.gz" "$R/d"
run -o out4.gz < "$R/d"
rc_is "-o OUT from stdin" 0
gz_is "-o OUT from stdin" "$W/out4.gz" "$R/d"
run -o nodir/out.gz d
rc_is "-o into a missing directory" 1
unchanged "-o into a missing directory keeps the input" d

mk e
run -S .xyz e
rc_is "-S .xyz" 0
absent "-S .xyz removes FILE" e
gz_is "-S .xyz writes FILE.xyz" "$W/e.xyz" "$R/e"
mk e2
run --suffix=_z e2
rc_is "--suffix=_z" 0
gz_is "--suffix=_z writes FILE_z" "$W/e2_z" "$R/e2"
# 30 bytes, gzip's longest (31 is refused, below)
mk e30
run -S .12345678901234567890123456789 e30
rc_is "a 30-byte suffix" 0
gz_is "a 30-byte suffix: FILE + it" "$W/e30.12345678901234567890123456789" "$R/e30"
run -d -S .12345678901234567890123456789 e30.12345678901234567890123456789
rc_is "a 30-byte suffix, -d" 0
unchanged "a 30-byte suffix, -d: the file back" e30
rm -f "$W/e30" "$R/e30"

mk f
echo old > "$W/f.gz"
run -f f
rc_is "-f over an existing FILE.gz" 0
gz_is "-f replaces FILE.gz" "$W/f.gz" "$R/f"
absent "-f removes FILE" f
mk f2
echo old > "$W/f2.out"
run --force -o f2.out f2
rc_is "--force -o over an existing OUT" 0
gz_is "--force -o replaces OUT" "$W/f2.out" "$R/f2"

# ---- refusals ----
section "refusals: existing output, suffix, directory, links, FIFO"
mk g
echo "not mine" > "$W/g.gz"
cp "$W/g.gz" "$R/g.gz"
run g
rc_is "existing FILE.gz" 2
err_has "existing FILE.gz" "g.gz already exists; not overwritten"
unchanged "existing FILE.gz is untouched" g.gz
unchanged "existing FILE.gz: the input is kept" g
run -k g
rc_is "existing FILE.gz with -k" 2
unchanged "existing FILE.gz with -k is untouched" g.gz
run -q g
rc_is "existing FILE.gz with -q" 2
err_has "-q does not silence 'already exists' (gzip does not)" "g.gz already exists"
unchanged "existing FILE.gz with -q is untouched" g.gz
cp "$R/g.gz" "$W/g.out"
run -o g.out g
rc_is "existing -o OUT" 2
err_has "existing -o OUT" "g.out already exists; not overwritten"
unchanged "existing -o OUT: the input is kept" g
if cmp -s "$W/g.out" "$R/g.gz"; then pass; else fail "existing -o OUT was modified"; fi

printf 'x\n' | gzip > "$W/h.gz"
cp "$W/h.gz" "$R/h.gz"
run h.gz
rc_is "input with the .gz suffix (as gzip: status 0)" 0
err_has "input with the .gz suffix" "h.gz already has .gz suffix -- unchanged"
unchanged "input with the .gz suffix is untouched" h.gz
absent "input with the .gz suffix: no h.gz.gz" h.gz.gz
run -q h.gz
rc_is "input with the .gz suffix, -q" 0
err_empty "-q silences 'already has .gz suffix'"
run -c h.gz
rc_is "-c compresses an input with the .gz suffix" 0
gz_is "-c compresses an input with the .gz suffix" "$T/out" "$R/h.gz"
mk h.xyz
run -S .xyz h.xyz
rc_is "input with the -S suffix" 0
err_has "input with the -S suffix" "h.xyz already has .xyz suffix -- unchanged"
unchanged "input with the -S suffix is untouched" h.xyz
run h.xyz
rc_is "h.xyz without -S is compressed" 0
gz_is "h.xyz without -S is compressed" "$W/h.xyz.gz" "$R/h.xyz"

mkdir "$W/dir"
run dir
rc_is "a directory" 2
err_has "a directory" "dir is a directory -- ignored"
absent "a directory: no dir.gz" dir.gz
run -c dir
rc_is "a directory with -c" 2
err_has "a directory with -c" "dir is a directory -- ignored"
run -q dir
rc_is "a directory with -q" 2
err_empty "-q silences 'is a directory'"

mk target
ln -s target "$W/link"
run link
rc_is "a symbolic link without -f" 1
err_has "a symbolic link without -f" "link: Too many levels of symbolic links"
absent "a symbolic link without -f: no link.gz" link.gz
present "a symbolic link without -f is kept" link
unchanged "a symbolic link without -f: the target is kept" target
# As gzip and pigz: -c (and so -o) follow links.  This matters for devices
# named by /dev/disk/by-id/... or /dev/mapper/..., which are links.
run -c link
rc_is "a symbolic link with -c (gzip -c follows links)" 0
gz_is "a symbolic link with -c" "$T/out" "$R/target"
run -o link.out link
rc_is "a symbolic link with -o" 0
gz_is "a symbolic link with -o" "$W/link.out" "$R/target"
run -f link
rc_is "a symbolic link with -f" 0
gz_is "a symbolic link with -f: link.gz holds the target" "$W/link.gz" "$R/target"
absent "a symbolic link with -f: the link is removed" link
unchanged "a symbolic link with -f: the target is kept" target

mk hl
ln "$W/hl" "$W/hl2"
run hl
rc_is "a file with 2 links" 2
err_has "a file with 2 links" "hl has 1 other link -- file ignored"
unchanged "a file with 2 links is kept" hl
absent "a file with 2 links: no hl.gz" hl.gz
ln "$W/hl" "$W/hl3"
run hl
rc_is "a file with 3 links" 2
err_has "a file with 3 links" "hl has 2 other links -- file ignored"
run -k hl
rc_is "a file with 3 links and -k (as gzip)" 2
run -c hl
rc_is "a file with links and -c" 0
err_empty "a file with links and -c"
gz_is "a file with links and -c" "$T/out" "$R/hl"
run -f hl
rc_is "a file with links and -f" 0
gz_is "a file with links and -f" "$W/hl.gz" "$R/hl"
absent "a file with links and -f: that name is removed" hl
if cmp -s "$W/hl2" "$R/hl"; then pass; else fail "a file with links and -f: the other link lost its content"; fi

mkfifo "$W/fifo"
run fifo
rc_is "a FIFO without -c" 2
err_has "a FIFO without -c" "fifo is not a directory or a regular file - ignored"
absent "a FIFO without -c: no fifo.gz" fifo.gz
if [ -p "$W/fifo" ]; then pass; else fail "a FIFO without -c: the FIFO is gone"; fi
# With -c: the test shell holds the FIFO open read-write (so spigz never sees
# EOF early) and writes more than a pipe buffer, which completes only once
# spigz reads; then it closes its end.
head -c 300000 /dev/urandom > "$R/fifodata"
seq 1 100000 >> "$R/fifodata"
exec 3<>"$W/fifo"
(cd "$W" && exec timeout "$HANG" "$SPIGZ" -c fifo) > "$T/fifo.gz" 2> "$T/err" 3>&- &
pid=$!
timeout "$HANG" cat "$R/fifodata" >&3
exec 3>&-
wait "$pid"
RC=$? CMD="spigz -c fifo"
rc_is "a FIFO with -c" 0
gz_is "a FIFO with -c" "$T/fifo.gz" "$R/fifodata"
check "a FIFO with -c stores no name (FLG $(flg "$T/fifo.gz"))" [ "$(flg "$T/fifo.gz")" = 0 ]

# ---- devices ----
section "devices"
# A character device: our own node for /dev/null if we may make one (a bug
# must not remove the real /dev/null), else /dev/null itself.
if mknod "$W/null" c 1 3 2>/dev/null; then
    NULLDEV=null
else
    echo "NOTE: cannot mknod; using /dev/null" >&2
    NULLDEV=/dev/null
fi
run -c "$NULLDEV"
rc_is "-c on a character device" 0
if [ "$(gzip -dc < "$T/out" 2>/dev/null | wc -c)" -eq 0 ] && gzip -t < "$T/out" 2>/dev/null; then
    pass
else
    fail "-c $NULLDEV: not a valid empty gzip stream"
fi
check "-c on a character device stores no name (FLG $(flg "$T/out"))" [ "$(flg "$T/out")" = 0 ]
check "-c on a character device stores no mtime" \
    [ "$(od -An -tu4 -j4 -N4 "$T/out" | tr -d ' ')" = 0 ]
for opt in "" -f -k; do
    # shellcheck disable=SC2086 # no argument when $opt is empty
    run $opt "$NULLDEV"
    rc_is "a character device without -c or -o ($opt)" 1
    err_has "a character device without -c or -o ($opt)" "$NULLDEV"
    if [ -c "$W/$NULLDEV" ] || [ -c "$NULLDEV" ]; then pass; else fail "spigz $opt $NULLDEV removed the device"; fi
    absent "a character device without -c: no output" "$NULLDEV.gz"
done
run -o null.gz "$NULLDEV"
rc_is "-o on a character device" 0
gz_is "-o on a character device" "$W/null.gz" /dev/null

# A block device: a loop device on an image, if this machine allows it.
# (A loop device's size is the image's, rounded down to 512 bytes.)
head -c $((1024 * 1024 + 4096)) /dev/urandom > "$R/img"
head -c $((2048 * 1024)) /dev/zero >> "$R/img"
seq 1 300000 | head -c $((1024 * 1024 - 4096 + 512)) >> "$R/img"
if LOOPDEV=$(losetup -f --show "$R/img" 2>/dev/null) && [ -b "$LOOPDEV" ]; then
    run -c "$LOOPDEV"
    rc_is "-c on a block device" 0
    gz_is "-c on a block device" "$T/out" "$R/img"
    check "-c on a block device stores no name" [ "$(flg "$T/out")" = 0 ]
    # (-n: stdin from a regular file gets its time stored, as with gzip;
    # and on the device, -n leaves its identity out of the manifest)
    "$SPIGZ" -c -n < "$R/img" > "$T/img-stdin.gz"
    "$SPIGZ" -c -n "$LOOPDEV" > "$T/out-n"
    if cmp -s "$T/out-n" "$T/img-stdin.gz"; then pass; else fail "block device and its image (stdin) give different bytes"; fi
    run -o dev.gz "$LOOPDEV"
    rc_is "-o on a block device" 0
    gz_is "-o on a block device" "$W/dev.gz" "$R/img"
    run "$LOOPDEV"
    rc_is "a block device without -c or -o" 1
    err_has "a block device without -c or -o" "$LOOPDEV"
    check "a block device without -c is not removed" [ -b "$LOOPDEV" ]
    # /dev/disk/by-id/... and /dev/mapper/... are symbolic links.
    ln -s "$LOOPDEV" "$W/disk-by-id"
    run -c disk-by-id
    rc_is "-c on a symbolic link to a block device" 0
    gz_is "-c on a symbolic link to a block device" "$T/out" "$R/img"
    losetup -d "$LOOPDEV"
    LOOPDEV=
else
    LOOPDEV=
    echo "NOTE: no loop device here (losetup failed): block device cases not run" >&2
fi

# ---- inputs of 64 MiB and more: the scout reads ahead ----
section "scout"
# Data, long zero stretches, units with one byte set at their edges, a hole and
# a short tail.  The same bytes must come out from the file (the scout runs),
# from a pipe (no scout), from stdin partly read, and from a loop device, at
# -p1 and -p2.
"$PY3" - "$R/big" <<'PYEOF'
import os, random, sys
M = 1 << 20
r = random.Random(11)
with open(sys.argv[1], "wb") as f:
    def unit(kind):
        if kind == "d":
            f.write(r.randbytes(M))
        elif kind == "h":
            f.seek(M, os.SEEK_CUR)
        else:
            b = bytearray(M)
            if kind == "l": b[-1] = 1
            if kind == "f": b[0] = 1
            if kind == "m": b[M // 2 + 99] = 7
            f.write(b)
    for k in "d" * 10 + "z" * 30 + "lf" + "z" * 18 + "hhh" + "zmzdzz" * 4 + "z" * 12:
        unit(k)
    f.write(bytes(3000))
PYEOF
"$SPIGZ" -c -n -p2 "$R/big" > "$T/big-file.gz"
gz_is "a 97 MiB file (scout)" "$T/big-file.gz" "$R/big"
for p in 1 2; do
    "$SPIGZ" -c -n -p$p "$R/big" > "$T/big-file$p.gz"
    cat "$R/big" | "$SPIGZ" -c -p$p > "$T/big-pipe$p.gz"
    if cmp -s "$T/big-file.gz" "$T/big-file$p.gz" && cmp -s "$T/big-file.gz" "$T/big-pipe$p.gz"; then
        pass
    else
        fail "a 97 MiB file at -p$p: file and pipe give different bytes"
    fi
done
{ dd bs=1M skip=7 count=0 2>/dev/null; "$SPIGZ" -n -c; } < "$R/big" > "$T/big-part.gz"
tail -c +$((7 * 1024 * 1024 + 1)) "$R/big" | "$SPIGZ" -c > "$T/big-tail.gz"
if cmp -s "$T/big-part.gz" "$T/big-tail.gz"; then pass; else fail "stdin partly read: not the bytes of the rest"; fi
if LOOPDEV=$(losetup -f --show "$R/big" 2>/dev/null) && [ -b "$LOOPDEV" ]; then
    # A loop device ends on a 512-byte boundary: compare with that much.
    head -c $(( $(stat -c %s "$R/big") / 512 * 512 )) "$R/big" | "$SPIGZ" -c > "$T/big-512.gz"
    "$SPIGZ" -c -n "$LOOPDEV" > "$T/big-dev.gz" # -n: no device identity in the manifest
    if cmp -s "$T/big-dev.gz" "$T/big-512.gz"; then pass; else fail "a 97 MiB loop device: not the bytes of its image"; fi
    { dd bs=1M skip=7 count=0 2>/dev/null; "$SPIGZ" -c; } < "$LOOPDEV" > "$T/big-devpart.gz"
    head -c $(( $(stat -c %s "$R/big") / 512 * 512 )) "$R/big" | tail -c +$((7 * 1024 * 1024 + 1)) \
        | "$SPIGZ" -c > "$T/big-512tail.gz"
    if cmp -s "$T/big-devpart.gz" "$T/big-512tail.gz"; then pass; else fail "a loop device partly read: not the bytes of the rest"; fi
    losetup -d "$LOOPDEV"
    LOOPDEV=
else
    LOOPDEV=
    echo "NOTE: no loop device here (losetup failed): the scout's block device case not run" >&2
fi
rm -f "$R/big" "$T"/big-*.gz

# ---- terminal ----
section "terminal"
mk tty
q() { printf '%q ' "$@"; }
(cd "$W" && script -qec "$(q "$SPIGZ" -c tty)" /dev/null < /dev/null > "$T/tty.log" 2>&1)
RC=$? CMD="spigz -c tty (stdout a terminal)"
rc_is "compressed data to a terminal" 1
if grep -qF "compressed data not written to a terminal" "$T/tty.log"; then
    pass
else
    fail "compressed data to a terminal: message missing: $(head -c 300 "$T/tty.log")"
fi
(cd "$W" && script -qec "$(q "$SPIGZ") < tty" /dev/null < /dev/null > "$T/tty.log" 2>&1)
RC=$? CMD="spigz < tty (stdout a terminal)"
rc_is "stdin to a terminal" 1
(cd "$W" && script -qec "$(q "$SPIGZ" -f -c tty)" /dev/null < /dev/null > "$T/tty.log" 2>&1)
RC=$? CMD="spigz -f -c tty (stdout a terminal)"
rc_is "-f forces compressed data to a terminal" 0
(cd "$W" && script -qec "$(q "$SPIGZ" -k tty)" /dev/null < /dev/null > "$T/tty.log" 2>&1)
RC=$? CMD="spigz -k tty (stdout a terminal)"
rc_is "FILE -> FILE.gz with stdout a terminal" 0
gz_is "FILE -> FILE.gz with stdout a terminal" "$W/tty.gz" "$R/tty"

# ---- several files, exit status ----
section "several files, exit status"
mk m1
mk m2
run m1 missing m2
rc_is "a missing file among others" 1
err_has "a missing file among others" "spigz: missing: No such file or directory"
gz_is "a missing file among others: the first is compressed" "$W/m1.gz" "$R/m1"
gz_is "a missing file among others: the last is compressed" "$W/m2.gz" "$R/m2"
absent "a missing file among others: m1 removed" m1
absent "a missing file among others: m2 removed" m2
mk m3
run dir missing
rc_is "warning then error: the error wins" 1
run missing dir
rc_is "error then warning: the error wins" 1
run dir m3
rc_is "a warning among others" 2
gz_is "a warning among others: the other file is compressed" "$W/m3.gz" "$R/m3"
run -q missing
rc_is "-q and a missing file" 1
err_has "-q does not silence errors" "missing"
mk m4
mk m5
run -c m4 m5
rc_is "-c with two files" 0
cat "$R/m4" "$R/m5" > "$R/m45"
gz_is "-c with two files: their concatenation" "$T/out" "$R/m45"

# ---- options: placement, --, combined, levels, -p ----
section "option syntax"
mk oa
run oa -k
rc_is "options after the file name" 0
unchanged "option -k after the file name keeps it" oa
gz_is "options after the file name" "$W/oa.gz" "$R/oa"
mk -k
run -- -k
rc_is "-- ends the options" 0
gz_is "-- ends the options: '-k' compressed" "$W/-k.gz" "$R/-k"
absent "-- ends the options: '-k' removed" -k
mk "sp ace"
run "sp ace"
rc_is "a name with a space" 0
gz_is "a name with a space" "$W/sp ace.gz" "$R/sp ace"
mk ob
run -c -k -9 ob
cp "$T/out" "$T/ob-sep.gz"
run -ck9 ob
rc_is "combined short options -ck9" 0
if cmp -s "$T/out" "$T/ob-sep.gz"; then pass; else fail "-ck9 differs from -c -k -9"; fi
for opt in -p2 "-p 2" --processes=2 "--processes 2" "-p 1024" "--blocksize=64" "-b64" \
    "-b 524288" "--zero-run=8" "--zero-run 4" --fast --best -0; do
    [ "$opt" != --fast ] || has_level 1 "option syntax '--fast' (-1)" || continue
    # shellcheck disable=SC2086 # $opt may be two words
    run -c $opt ob
    rc_is "option syntax '$opt'" 0
    gz_is "option syntax '$opt'" "$T/out" "$R/ob"
done
# -11 is level eleven (XFL 2, best), not -1 and -1 (XFL 4, fastest).
if has_level 11 "-11"; then
    run -c -11 ob
    rc_is "-11" 0
    gz_is "-11" "$T/out" "$R/ob"
    x11=$(od -An -tu1 -j8 -N1 "$T/out" | tr -d ' ')
    check "-11 is level eleven, not -1 (XFL $x11, expected 2)" [ "$x11" = 2 ]
fi
if has_level 1 "-1's XFL"; then
    run -c -1 ob
    rc_is "-1" 0
    gz_is "-1" "$T/out" "$R/ob"
    x1=$(od -An -tu1 -j8 -N1 "$T/out" | tr -d ' ')
    check "-1 sets XFL 4 (got $x1)" [ "$x1" = 4 ]
fi
# A level this build lacks (1 to 3 without ISA-L, 10 to 12 without
# libdeflate) is refused, saying which and why, before any output: never
# other bytes under its name.  -V lists the map.
run -V
rc_is "-V" 0
cp "$T/out" "$T/version"
for l in 0 1 2 3 4 5 6 7 8 9 10 11 12; do
    case $LEVELS in *" $l "*) continue ;; esac
    if [ "$l" -le 3 ]; then
        check "-V: level $l not in this build" grep -q "^  level  *$l: not in this build" "$T/version"
        why="level $l is made by ISA-L, which this spigz was built without"
    else
        check "-V: no level $l listed" test -z "$(grep "^  level  *$l:" "$T/version")"
        why="invalid compression level -$l (0..9 with"
    fi
    for mode in -c --estimate; do
        run "$mode" "-$l" ob
        rc_is "spigz $mode -$l in a build without it" 1
        err_has "spigz $mode -$l in a build without it: says why" "$why"
        out_empty "spigz $mode -$l in a build without it: no output"
        unchanged "spigz $mode -$l in a build without it: the input is kept" ob
        absent "spigz $mode -$l in a build without it: no ob.gz" ob.gz
    done
done
seq 1 200000 > "$R/pp"
head -c 2000000 /dev/urandom >> "$R/pp"
cp "$R/pp" "$W/pp"
touch -d @1500000000 "$W/pp"
run -k -p 1 pp
mv "$W/pp.gz" "$T/pp1.gz"
run -k -p 4 pp
rc_is "-p 4" 0
if cmp -s "$W/pp.gz" "$T/pp1.gz"; then pass; else fail "-p 4 and -p 1 give different FILE.gz"; fi

# ---- -v, -q, -V, -h ----
section "-v -q -V -h"
seq 1 1000 > "$W/v"
cp "$W/v" "$R/v"
run -v v
rc_is "-v" 0
TAB=$(printf '\t')
line=$(cat "$T/err")
if [[ $line =~ ^v:${TAB}[\ -]?[\ 0-9]*[0-9]\.[0-9]%\ --\ replaced\ with\ v\.gz$ ]]; then
    pass
else
    fail "-v: stderr '$line', expected 'v:<TAB> NN.N% -- replaced with v.gz'"
fi
# The percentage is gzip's: the deflate data against the input, without the
# header and trailer, as 'gzip -l' reports it for the same data member.  (gzip
# -l gives the last member's length, which for spigz's own file is the empty
# footer's: it is asked about the same data member written with --no-index.)
pct=$(sed -n 's/.*[[:space:]]\(-\{0,1\}[0-9.]*\)% .*/\1/p' "$T/err")
"$SPIGZ" --no-index -c "$R/v" > "$T/v-noindex.gz"
gzl=$(gzip -l "$T/v-noindex.gz" | awk 'NR == 2 { sub("%", "", $3); print $3 }')
if [ -n "$pct" ] && [ -n "$gzl" ] && "$PY3" -c 'import sys; sys.exit(abs(float(sys.argv[1]) - float(sys.argv[2])) > 0.1)' "$pct" "$gzl"; then
    pass
else
    fail "-v ratio '$pct%' differs from gzip's ('gzip -l' on the same data member says '$gzl%')"
fi
# spigz -l knows the size of its own file from the index.
spl=$("$SPIGZ" -l "$W/v.gz" | awk 'NR == 2 { print $1, $2 }')
check "spigz -l v.gz: '$spl', expected '$(stat -c %s "$W/v.gz") $(stat -c %s "$R/v")'" \
    [ "$spl" = "$(stat -c %s "$W/v.gz") $(stat -c %s "$R/v")" ]
cp "$R/v" "$W/v"
run -v -k -f v
if [[ $(cat "$T/err") =~ ^v:${TAB}.*%\ --\ created\ v\.gz$ ]]; then
    pass
else
    fail "-v -k: stderr '$(cat "$T/err")', expected 'v:<TAB> NN.N% -- created v.gz'"
fi
run -v -c v
if [[ $(cat "$T/err") =~ ^v:${TAB}.*%.*$ ]] && [ "$(wc -l < "$T/err")" -eq 1 ]; then
    pass
else
    fail "-v -c: stderr '$(cat "$T/err")', expected one line 'v:<TAB> NN.N%...'"
fi
run -vv -c v
rc_is "-vv" 0
err_has "-vv gives the byte counts" "bytes in"
run --verbose -c v
rc_is "--verbose" 0
err_has "--verbose" "v:"

run -V
rc_is "-V" 0
if grep -qiE 'libdeflate|zlib' "$T/out"; then pass; else fail "-V does not name the engine: $(tr '\n' ' ' < "$T/out")"; fi
run --version
rc_is "--version" 0
if grep -qiE 'spigz.*[0-9]+\.[0-9]+' "$T/out"; then pass; else fail "--version has no version number: $(tr '\n' ' ' < "$T/out")"; fi
run -h
rc_is "-h" 0
if grep -q 'Usage' "$T/out"; then pass; else fail "-h prints no usage on stdout"; fi
run --help
rc_is "--help" 0
if grep -q -- '--processes' "$T/out"; then pass; else fail "--help does not list --processes"; fi

# ---- invalid options and values ----
section "invalid options"
mk inv
ls -A "$W" > "$T/before"
while IFS= read -r args; do
    eval "set -- $args"
    run "$@"
    rc_is "invalid: spigz $args" 1
    if grep -q '^spigz: ' "$T/err"; then pass; else fail "invalid: '$CMD' gives no 'spigz: ...' message: $(errtext)"; fi
    out_empty "invalid: $args"
    ls -A "$W" > "$T/after"
    if cmp -s "$T/before" "$T/after"; then pass; else fail "invalid: '$CMD' created or removed files: $(diff "$T/before" "$T/after" | tr '\n' ' ')"; fi
done <<'EOF'
-p 1025 inv
-p x inv
-p -1 inv
-b 1 inv
-b 31 inv
-b 524289 inv
-b 64k inv
--zero-run 0 inv
-S '' inv
-S a/b inv
-S 1234567890123456789012345678901 inv
-d -S 1234567890123456789012345678901 inv.gz
-t -S 1234567890123456789012345678901 inv.gz
-x inv
--bogus inv
-13 inv
-99 inv
--keep=yes inv
inv -p
inv --suffix
-o o.gz inv inv
-o o.gz -c inv
--sparse=bogus inv
--sparse= inv
--range 0:1 inv
-c --range 0:1 inv
-d --range 0:1 inv
-dc --range 1 inv
-dc --range 1:2:3 inv
-dc --range= inv
-t -o o.gz inv
-l -o o.gz inv
-d -o o.gz inv inv
EOF
unchanged "invalid options leave the input alone" inv

# -p 0 means every online CPU (zstd's -T0), as no -p does: the same bytes.
run -p 1 -c inv
cp "$T/out" "$T/p1.gz"
for args in "-p 0" "--processes=0" ""; do
    # shellcheck disable=SC2086 # a list of arguments, or none
    run $args -c inv
    rc_is "spigz $args -c" 0
    if cmp -s "$T/out" "$T/p1.gz"; then pass; else fail "spigz $args -c: other bytes than -p 1"; fi
done

# ---- metadata ----
section "metadata"
mk meta
chmod 640 "$W/meta"
touch -d "2001-02-03 04:05:06.123456789" "$W/meta"
owner=
if chown 1234:5678 "$W/meta" 2>/dev/null; then owner=1234:5678; fi
before=$(stat -c '%a %Y %y %X' "$W/meta")
run meta
rc_is "metadata: spigz FILE" 0
if [ -f "$W/meta.gz" ]; then
    after=$(stat -c '%a %Y %y %X' "$W/meta.gz")
    check "FILE.gz has FILE's mode and times ('$after', expected '$before')" [ "$after" = "$before" ]
    if [ -n "$owner" ]; then
        got=$(stat -c '%u:%g' "$W/meta.gz")
        check "FILE.gz has FILE's owner ($got, expected $owner)" [ "$got" = "$owner" ]
    fi
else
    fail "metadata: meta.gz missing"
fi
mk meta2
chmod 604 "$W/meta2"
touch -d @1234567890 "$W/meta2"
run -k meta2
check "-k: FILE.gz mode and mtime ($(stat -c '%a %Y' "$W/meta2.gz"))" \
    [ "$(stat -c '%a %Y' "$W/meta2.gz" 2>/dev/null)" = "604 1234567890" ]

# An output that names the input itself is refused, and the input survives.
mk self
run -f -o self self
check "-o INPUT INPUT: exit 1" [ "$RC" -eq 1 ]
check "-o INPUT INPUT: says so" grep -q "self: input and output are the same file" "$T/err"
check "-o INPUT INPUT: input intact" cmp -s "$W/self" "$R/self"
(cd "$W" && "$SPIGZ" -c self > self.gz)
cp "$W/self.gz" "$T/self.gz.ref"
run -d -f -o self.gz self.gz
check "-d -o INPUT INPUT: exit 1" [ "$RC" -eq 1 ]
check "-d -o INPUT INPUT: says so" grep -q "self.gz: input and output are the same file" "$T/err"
check "-d -o INPUT INPUT: input intact" cmp -s "$W/self.gz" "$T/self.gz.ref"

# gzip 1.12's options -m, -M, -a/--ascii, --silent, --synchronous: taken as
# gzip takes them (spigz refused them all).  MTIME is header bytes 4-7, the
# name follows the 10-byte header when FLG (byte 3) has 0x08.
section "-m -M -a --silent --synchronous, as gzip"
mk tm
touch -d @1234567890 "$W/tm"
# hdr FILE: "MTIME FNAME-flag" of a gzip file's first member
hdr() { od -An -tu1 -j3 -N5 "$1" | awk '{ print $2 + 256 * ($3 + 256 * ($4 + 256 * $5)), ($1 >= 8) ? "name" : "noname" }'; }
for o in "" -m -M -n "-n -M" "-N -m" "-m -N" -nm -Mm -mM; do
    # shellcheck disable=SC2086 # $o: zero to two options
    run -c $o tm
    rc_is "-c $o" 0
    # shellcheck disable=SC2086 # the same list
    (cd "$W" && gzip -c $o tm) > "$T/g.gz"
    check "-c $o: MTIME and name as gzip's ($(hdr "$T/out"), gzip $(hdr "$T/g.gz"))" \
        [ "$(hdr "$T/out")" = "$(hdr "$T/g.gz")" ]
    gz_is "-c $o: the content" "$T/out" "$R/tm"
done
(cd "$W" && gzip -c tm) > "$T/tm.gz"
for o in "" -N -M -m "-N -m" "-m -N" "-n -M" "-M -n"; do
    for p in g s; do
        rm -rf "${W:?}/$p" && mkdir "$W/$p" && cp "$T/tm.gz" "$W/$p/x.gz" && touch -d @1500000000 "$W/$p/x.gz"
    done
    # shellcheck disable=SC2086 # $o is a list of options
    (cd "$W/g" && gzip -d $o x.gz)
    # shellcheck disable=SC2086 # the same list
    (cd "$W/s" && "$SPIGZ" -d $o x.gz) 2> "$T/err"
    got=$(cd "$W/s" && stat -c '%n %Y' -- *) want=$(cd "$W/g" && stat -c '%n %Y' -- *)
    check "-d $o: the name and time gzip restores ('$got', gzip '$want')" [ "$got" = "$want" ]
done
rm -rf "$W/g" "$W/s"
for o in -a --ascii -qa "-a -q" "--silent -a"; do
    # shellcheck disable=SC2086
    run -c $o tm
    rc_is "-c $o: status 0, as gzip" 0
    gz_is "-c $o: the content" "$T/out" "$R/tm"
    case $o in
        *q*|*silent*) err_empty "-c $o: quiet" ;;
        *) err_has "-c $o: says it is ignored, as gzip" "option --ascii ignored on this system" ;;
    esac
done
cp "$T/tm.gz" "$W/h2.gz"
run --silent h2.gz
rc_is "--silent is -q: FILE.gz already has the suffix" 0
err_empty "--silent is -q: no 'already has .gz suffix'"
rm -f "$W/h2.gz"
mk sy
run -k --synchronous sy
rc_is "--synchronous -k" 0
gz_is "--synchronous -k" "$W/sy.gz" "$R/sy"
rm -f "$W/sy.gz"
(cd "$W" && strace -f -e trace=fsync,fdatasync -o "$T/st" "$SPIGZ" -k --synchronous sy)
check "--synchronous -k: the output and its directory are synced ($(grep -c sync "$T/st") calls)" \
    [ "$(grep -cE 'f(data)?sync\([0-9]+\) += 0' "$T/st")" -ge 2 ]
rm -f "$W/sy.gz"
(cd "$W" && strace -f -e trace=fsync,fdatasync -o "$T/st" "$SPIGZ" -k sy)
check "without it, -k syncs nothing" [ "$(grep -cE 'f(data)?sync\(' "$T/st")" -eq 0 ]
run -d -k -f --synchronous sy.gz
rc_is "-d --synchronous" 0
unchanged "-d --synchronous: the file" sy
for e in -m -M -a --ascii --synchronous; do
    CMD="GZIP=$e spigz -c sy"
    (cd "$W" && GZIP=$e exec "$SPIGZ" -c sy) > /dev/null 2> "$T/err"
    RC=$?
    rc_is "GZIP=$e: not valid there, as gzip" 1
done
CMD="GZIP=--silent spigz -c sy"
(cd "$W" && GZIP=--silent exec "$SPIGZ" -c sy) > "$T/out" 2> "$T/err"
RC=$?
rc_is "GZIP=--silent: valid, as -q" 0
err_empty "GZIP=--silent: quiet, no deprecation warning"

# Pipes at pipe speed: the buffer of a pipe spigz reads or writes is raised
# to 1 MiB (pipe.h), compressing and decompressing; the bytes are the same
# as from and to files (the determinism checks above).
need strace
max=$(cat /proc/sys/fs/pipe-max-size)
want=$((max < 1048576 ? max : 1048576))
head -c 3000000 /dev/urandom > "$T/pz"
cat "$T/pz" | strace -f -e trace=fcntl -o "$T/st" "$SPIGZ" -n -c | cat > "$T/pz.gz"
check "compress: stdin's pipe buffer raised to $want" grep -q "fcntl(0, F_SETPIPE_SZ, $want)" "$T/st"
check "compress: stdout's pipe buffer raised to $want" grep -q "fcntl(1, F_SETPIPE_SZ, $want)" "$T/st"
"$SPIGZ" -n -c < "$T/pz" > "$T/pz.file.gz"
check "compress: the same bytes through pipes as between files" cmp -s "$T/pz.gz" "$T/pz.file.gz"
cat "$T/pz.gz" | strace -f -e trace=fcntl -o "$T/st" "$SPIGZ" -dc | cat > "$T/pz.out"
check "decompress: both pipes raised" sh -c "grep -q 'fcntl(0, F_SETPIPE_SZ, $want)' '$T/st' && grep -q 'fcntl(1, F_SETPIPE_SZ, $want)' '$T/st'"
check "decompress through pipes: the input" cmp -s "$T/pz.out" "$T/pz"

# --format=json: errors and warnings are JSON lines on stderr too, beside
# the per-file reports; text without it
printf 'not gzip\n' > "$T/notgz.gz"
"$SPIGZ" -t --format=json "$T/missing.gz" "$T/notgz.gz" 2> "$T/err"; rc=$?
check "-t --format=json of a missing file and a non-gzip one: status 1 ($rc)" [ "$rc" -eq 1 ]
check "... each error one JSON object naming the file ($(tr '\n' '|' < "$T/err"))" python3 -c 'import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
assert [r["level"] for r in rs] == ["error", "error"], rs
assert "missing.gz: No such file or directory" in rs[0]["message"] and rs[0]["program"] == "spigz"
assert "notgz.gz: not in gzip format" in rs[1]["message"]' "$T/err"
"$SPIGZ" -t "$T/missing.gz" 2> "$T/err"
check "... and text without --format=json" grep -q "^spigz: .*missing.gz: No such file or directory$" "$T/err"

finish

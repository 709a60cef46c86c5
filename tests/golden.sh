#!/bin/sh
# golden.sh — the on-disk format pinned by golden files (tests/golden/, its
# README.md).  The files were written by tests/golden/mkgolden.py from
# doc/FORMAT.md's text, not by spigz; tests/golden/MANIFEST.json gives for
# each its decoded image (length, sha256), what `spigz -l` prints (text and
# JSON), the sha256 of its --export-index outputs, byte ranges, bad ranges
# and notes.  For every file:
#   - the committed bytes are what mkgolden.py writes and what the manifest
#     says (a hand edit, or a drift of the writer, fails here);
#   - GNU gzip (-t, -dc) and zlib (zlib.decompress(data, 31): a reader that
#     stops after the first member) decode it to the image;
#   - spigz decodes it: -dc, -d -o and -t, through the index (-v says so, and
#     nothing warns: an index refused would decode sequentially with a
#     warning) and with --no-index; --range at a piece boundary, across it,
#     inside a zero piece and out of it; -l and -l --format=json; the index's
#     notes and bad ranges (-l --bad-map); both --export-index formats (a
#     file without a spigz index exports its gzip index, not pinned here);
#   - spigz writes the same bytes from the same content (-0: stored data
#     pieces, which mkgolden.py writes too), so a change to the zero-piece
#     encoder, the index writer or the footer fails here; notes come from
#     spigz --free=zero (a disk whose partition lies past its end) and are
#     the CLI's words, so those two files are compared with mkgolden.py's
#     output for spigz's own notes (--renote).
# When this test fails, do not regenerate the files to make it pass: read
# tests/golden/README.md.  About 20 s (a 1 GiB image is decoded several times).
# POSIX sh (run by $(SHELL), dash on Debian).
# shellcheck source=tests/lib.sh
. "${srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need "$PY3" gzip sha256sum cmp touch
: "${FAULT_SO:?FAULT_SO must point at the fault injection shim (tests/fault.so)}"
[ -f "$FAULT_SO" ] || fail "fault shim $FAULT_SO is missing (make tests/fault.so)"
[ "$FAILS" -eq 0 ] || { finish; exit 1; }
GD=$srcdir/tests/golden
MK=$GD/mkgolden.py
cd "$T" || exit 1

# h.py: the manifest's fields, and zlib's reading of a file.
cat > h.py <<'EOF'
import hashlib, json, shlex, sys, zlib
GD = sys.argv[1]
m = json.load(open(GD + "/MANIFEST.json", encoding="utf-8"))
cmd, args = sys.argv[2], sys.argv[3:]
e = m.get(args[0]) if args else None

def inflate_first_member(data, out=None):
    """zlib's gzip reader (wbits 31): the first member only, as Python's
    zlib.decompress(data, 31) and Rust's GzDecoder read a file.  Written
    sparsely to out when given; returns (length, sha256)."""
    if len(data) < (1 << 20) and out is None:
        img = zlib.decompress(data, 31)
        return len(img), hashlib.sha256(img).hexdigest()
    d, h, n = zlib.decompressobj(31), hashlib.sha256(), 0
    f = open(out, "wb") if out else None
    left = data
    while left and not d.eof:
        b = d.decompress(left, 1 << 20)
        left = d.unconsumed_tail
        h.update(b)
        n += len(b)
        if f and b.count(0) == len(b):
            f.seek(len(b), 1)
        elif f:
            f.write(b)
    if not d.eof:
        sys.exit("zlib: the first member does not end")
    if f:
        f.truncate()
        f.close()
    return n, h.hexdigest()

if cmd == "names":
    print(" ".join(k for k in sorted(m) if not k.startswith("_")))
elif cmd == "get":                      # NAME KEY: a field as it is
    v = e[args[1]]
    sys.stdout.write(v if isinstance(v, str) else "" if v is None else json.dumps(v))
elif cmd == "unpack":                   # NAME: the committed file, as NAME
    raw = open(GD + "/" + e.get("stored_as", args[0]), "rb").read()
    data = zlib.decompress(raw, 31) if e.get("stored_as", args[0]) != args[0] else raw
    open(args[0], "wb").write(data)
    ok = hashlib.sha256(data).hexdigest() == e["sha256"] and len(data) == e["size"]
    sys.exit(0 if ok else "%s: not the bytes the manifest gives" % args[0])
elif cmd == "zlib":                     # NAME [OUT]: zlib decodes it to the image
    n, sha = inflate_first_member(open(args[0], "rb").read(), args[1] if len(args) > 1 else None)
    if (n, sha) != (e["image_len"], e["image_sha256"]):
        sys.exit("zlib: %d bytes, sha256 %s" % (n, sha))
elif cmd == "ranges":                   # NAME: OFF LEN SHA256 lines
    for off, ln, sha in e["ranges"]:
        print(off, ln, sha)
elif cmd == "spoil":                    # NAME FILE: bytes in the bad ranges (unreadable)
    with open(args[1], "r+b") as f:
        for o, n in e["bad"]:
            f.seek(o)
            f.write(b"\xa5" * n)
elif cmd == "vars":                     # NAME: its fields as shell assignments
    r = e["spigz"] or {}
    v = {"ABOUT": e["about"], "HAS_INDEX": int(e["index"]), "IMG_SHA": e["image_sha256"],
         "BIG": int(e["image_len"] > 64 << 20),
         "EXP_gztool": e["export_gztool_sha256"] or "",
         "EXP_indexed_gzip": e["export_indexed_gzip_sha256"] or "",
         "BAD": ",".join("%d+%d" % (o, n) for o, n in e["bad"]),
         # how spigz writes the same bytes
         "OPTS": " ".join(r.get("options", [])), "NAME": r.get("name", "in.img"),
         "MTIME": r.get("mtime", ""), "RESCUE": int("--rescue" in r.get("options", [])),
         "OWN_NOTES": int(r.get("own_notes", False))}
    print(" ".join("%s=%s" % (k, shlex.quote(str(x))) for k, x in v.items()))
elif cmd == "notes-said":               # NAME STDERR: each note said, in order
    err = open(args[1], encoding="utf-8").read()
    said = [l.split(": when this backup was made: ", 1)[1] for l in err.splitlines()
            if ": when this backup was made: " in l]
    sys.exit(0 if said == e["notes"] else "notes said: %r" % said)
elif cmd == "own-manifest":             # FILE OUT: the manifest's bytes in FILE's index
    # (FORMAT.md 2 and 3, read here on their own: the footer's flags and
    # counts, the members' payload, the records, bad ranges and notes
    # skipped, then the manifest's length and bytes)
    d = open(args[0], "rb").read()
    f = d[-78:]
    flags, npieces = f[17], int.from_bytes(f[52:60], "little")
    data_len = int.from_bytes(f[28:36], "little")
    index_len = int.from_bytes(f[44:52], "little")
    pay, at = bytearray(), data_len
    while at < data_len + index_len:
        m = int.from_bytes(d[at + 14:at + 16], "little")
        pay += d[at + 16:at + 16 + m]
        at += 26 + m
    def leb(p, i):
        v = s = 0
        while True:
            v |= (p[i] & 0x7f) << s
            s += 7
            i += 1
            if not p[i - 1] & 0x80:
                return v, i
    i = 0
    for _ in range(npieces):
        h, i = leb(pay, i)
        _, i = leb(pay, i)
        i += 4 if h & 1 else 0
    if flags & 1:
        n, i = leb(pay, i)
        for _ in range(2 * n):
            _, i = leb(pay, i)
    if flags & 2:
        n, i = leb(pay, i)
        for _ in range(n):
            ln, i = leb(pay, i)
            i += ln
    if not flags & 4:
        sys.exit("no manifest (flags %d)" % flags)
    ln, i = leb(pay, i)
    if i + ln != len(pay):
        sys.exit("the manifest does not end the payload")
    open(args[1], "wb").write(pay[i:])
elif cmd == "check-manifest":           # NAME LIST.json VERSION HOST DIGEST: spigz's own
    # manifest's entries, as the options in the manifest's "spigz" say
    # (doc/FORMAT.md 2.2): what the content and options determine, and
    # where from only for a named input without -n
    got = json.load(open(args[1], encoding="utf-8"))["manifest"]
    opts = (e["spigz"] or {}).get("options", [])
    want = {"spigz": {"version": args[2]},
            "options": {"level": 0, "piece": 1 << 20, "zero-run": 16 << 10},
            "image": {"xxh3-128-tree": args[4]}}
    if "--free=zero" in opts:
        want["options"]["free"] = "zero"
    if "--rescue" in opts:
        want["options"]["rescue"] = 1
    if "-n" not in opts:
        r = e["spigz"]
        want["host"] = args[3]
        want["source"] = {"path": r.get("name", "in.img"), "kind": "file",
                          "size": e["image_len"]}
        if r.get("mtime"):
            want["source"]["mtime"] = r["mtime"]
    problems = []
    for k, v in want.items():
        for kk, vv in (v.items() if isinstance(v, dict) else [(None, v)]):
            g = got.get(k) if kk is None else (got.get(k) or {}).get(kk)
            if g != vv:
                problems.append("%s%s: %r, not %r" % (k, "" if kk is None else "." + kk, g, vv))
    if "--free=zero" in opts:     # the map: what was skipped, inside the image
        fr = got.get("free", {})
        if fr.get("map", {}).get("bytes") != fr.get("bytes") or \
                fr.get("bytes", 0) > e["image_len"]:
            problems.append("free: %r" % fr)
    elif "free" in got:
        problems.append("a free map without --free=zero")
    if "-n" in opts and ("host" in got or "source" in got):
        problems.append("-n, yet where from: %r %r" % (got.get("host"), got.get("source")))
    sys.exit("; ".join(problems) if problems else 0)
elif cmd == "json-notes":               # LIST.json OUT: the notes spigz -l reports
    json.dump(json.load(open(args[0], encoding="utf-8")).get("notes", []),
              open(args[1], "w", encoding="utf-8"))
EOF
mf() { "$PY3" h.py "$GD" get "$@"; }
sha() { sha256sum | cut -d' ' -f1; }

section "tests/golden/ holds exactly what mkgolden.py writes"
check "mkgolden.py --check: the committed files are the generator's (never regenerate to pass: README.md)" \
    "$PY3" "$MK" --check "$GD"

# decode NAME WHAT EXPECT-INDEX CMD...: CMD's stdout is the image, status 0,
# no warning; -v's "decoded through its index" iff EXPECT-INDEX is 1.
decode() {
    n=$1 what=$2 idx=$3
    shift 3
    "$@" > out 2> err
    rc=$?
    check "$n: $what: status 0 ($rc: $(head -c 300 err))" [ "$rc" -eq 0 ]
    check "$n: $what: the image" [ "$(sha < out)" = "$IMG_SHA" ]
    check "$n: $what: no index refused" sh -c '! grep -q "index not used" err'
    if [ "$idx" = 1 ]; then
        check "$n: $what: through the index" grep -q "decoded through its index" err
    else
        check "$n: $what: sequentially" sh -c '! grep -q "decoded through its index" err'
    fi
}

for n in $("$PY3" h.py "$GD" names); do
    eval "$("$PY3" h.py "$GD" vars "$n")"
    section "$n: $ABOUT"
    if ! "$PY3" h.py "$GD" unpack "$n"; then
        fail "$n: the committed file is not the manifest's"
        continue
    fi
    # A 1 GiB image: what only repeats the small files' checks at 1 GiB a
    # pass (gzip -dc, spigz -d -o, spigz --no-index) is left out.
    [ "$BIG" = 1 ] && echo "NOTE: $n: $(mf "$n" image_len) bytes: gzip -dc, spigz -d -o and" \
        "spigz --no-index not run on it (the smaller files have them)"

    # Other readers.
    check "$n: zlib.decompress(data, 31) gives the image" "$PY3" h.py "$GD" zlib "$n" "$n.img"
    check "$n: gzip -t" gzip -t "$n"
    [ "$BIG" = 1 ] || check "$n: gzip -dc gives the image" [ "$(gzip -dc "$n" | sha)" = "$IMG_SHA" ]

    # spigz decodes it.
    decode "$n" "-dcv" "$HAS_INDEX" "$SPIGZ" -dcv "$n"
    [ "$BIG" = 1 ] || decode "$n" "-dcv --no-index" 0 "$SPIGZ" -dcv --no-index "$n"
    if [ "$BIG" = 0 ]; then
        rm -f d.img
        "$SPIGZ" -dv -o d.img "$n" 2> err
        rc=$?
        check "$n: -d -o: status 0 ($rc: $(head -c 300 err))" [ "$rc" -eq 0 ]
        check "$n: -d -o: the image" [ "$(sha < d.img)" = "$IMG_SHA" ]
        check "$n: -d -o: through the index iff it has one" \
            [ "$(grep -c "decoded through its index" err)" = "$HAS_INDEX" ]
        rm -f d.img
    fi
    "$SPIGZ" -tv "$n" 2> err
    rc=$?
    check "$n: -t: status 0 ($rc: $(head -c 300 err))" [ "$rc" -eq 0 ]
    check "$n: -t: through the index iff it has one" \
        [ "$(grep -c "decoded through its index" err)" = "$HAS_INDEX" ]
    check "$n: -t: no index refused" sh -c '! grep -q "index not used" err'
    if [ "$BIG" = 0 ]; then
        "$SPIGZ" -t --no-index "$n" 2> err
        check "$n: -t --no-index: status 0 ($(head -c 300 err))" [ $? -eq 0 ]
    fi

    "$PY3" h.py "$GD" ranges "$n" > ranges.txt
    while read -r off len want; do
        for how in index no-index; do
            [ "$BIG" = 1 ] && [ $how = no-index ] && continue
            if [ $how = index ]; then
                "$SPIGZ" -dc --range "$off:$len" "$n" > out 2> err
            else
                "$SPIGZ" -dc --no-index --range "$off:$len" "$n" > out 2> err
            fi
            rc=$?
            check "$n: --range $off:$len ($how): status 0 ($rc: $(head -c 300 err))" [ "$rc" -eq 0 ]
            check "$n: --range $off:$len ($how): the bytes" [ "$(sha < out)" = "$want" ]
        done
    done < ranges.txt

    # -l, text and JSON; the notes (said on stderr in text mode) and the
    # bad ranges (--bad-map) the index holds.
    mf "$n" list_text > want
    "$SPIGZ" -l "$n" > got 2> err
    check "$n: -l: status 0 ($(head -c 300 err))" [ $? -eq 0 ]
    check "$n: -l prints the manifest's ($(head -c 300 got))" cmp -s got want
    check "$n: -l says the index's notes" "$PY3" h.py "$GD" notes-said "$n" err
    mf "$n" list_json > want
    "$SPIGZ" -l --format=json "$n" > got 2> err
    check "$n: -l --format=json: status 0 ($(head -c 300 err))" [ $? -eq 0 ]
    check "$n: -l --format=json prints the manifest's ($(head -c 300 got))" cmp -s got want
    if [ "$HAS_INDEX" = 1 ]; then
        rm -f map
        "$SPIGZ" -l --bad-map map "$n" > /dev/null 2> err
        check "$n: -l --bad-map: status 0 ($(head -c 300 err))" [ $? -eq 0 ]
        check "$n: -l --bad-map: the index's bad ranges" \
            [ "$(map_bad map)" = "$BAD" ]
    fi

    # --export-index: the bytes FORMAT.md section 6 gives (a spigz index).
    for fmt in gztool indexed_gzip; do
        eval "want=\$EXP_$fmt"
        "$SPIGZ" --export-index=$fmt -c "$n" > out 2> err
        rc=$?
        if [ -n "$want" ]; then
            check "$n: --export-index=$fmt: status 0 ($rc: $(head -c 300 err))" [ "$rc" -eq 0 ]
            if [ $fmt = indexed_gzip ] && [ "$("$PY3" -c 'import sys; print(sys.byteorder)')" != little ]; then
                echo "NOTE: $n: indexed_gzip's export is in the host's byte order; the golden one is little-endian: not compared"
            else
                check "$n: --export-index=$fmt: the bytes" [ "$(sha < out)" = "$want" ]
            fi
        else
            # no spigz index to export: the file's gzip index goes out
            # instead (FORMAT.md 6.4, its bytes those of restore/gzx's
            # points, not pinned here: tests/export_index.sh has gztool and
            # indexed_gzip read through it)
            check "$n: --export-index=$fmt, no spigz index: the gzip index, status 0 ($rc: $(head -c 300 err))" \
                [ "$rc" -eq 0 ]
            check "$n: --export-index=$fmt, no spigz index: written" [ -s out ]
        fi
    done

    # spigz writes the same bytes from the same content.
    if [ -z "$OPTS" ]; then
        rm -f "$n" "$n.img"
        continue
    fi
    if [ "$OWN_NOTES" = 1 ] && "$SPIGZ" -V | grep -q '^--free=zero: unavailable'; then
        echo "NOTE: $n: this spigz has no --free=zero (no libblkid): its own notes are not" \
             "written, so its index with notes is not compared here"
        rm -f "$n" "$n.img"
        continue
    fi
    rm -rf own && mkdir own && mv "$n.img" "own/$NAME"
    IN=$T/own/$NAME
    [ "$RESCUE" = 1 ] && "$PY3" h.py "$GD" spoil "$n" "$IN"
    [ -n "$MTIME" ] && touch -d "@$MTIME" "$IN"
    # shellcheck disable=SC2086 # OPTS: the manifest's options, split
    if [ "$RESCUE" = 1 ]; then
        (cd own && LD_PRELOAD="$FAULT_SO" FAULT_EIO_FILE="$IN" \
            FAULT_EIO_RANGES="$BAD" "$SPIGZ" $OPTS -c "$NAME") \
            > own.gz 2> err
    else
        (cd own && "$SPIGZ" $OPTS -c "$NAME") > own.gz 2> err
    fi
    rc=$?
    want_rc=0
    [ "$RESCUE" = 1 ] || [ "$OWN_NOTES" = 1 ] && want_rc=2   # warnings: unread, a doubt
    check "$n: spigz $OPTS: status $want_rc ($rc: $(head -c 300 err))" [ "$rc" -eq "$want_rc" ]
    if [ "$HAS_INDEX" = 0 ]; then   # --no-index: no manifest either
        check "$n: spigz $OPTS writes the golden bytes" cmp "$n" own.gz
        rm -rf own own.gz "$n" "$n.img"
        continue
    fi
    # Its manifest (FORMAT.md 2.2): each entry checked here against what
    # the options and the content say (the version and host are the run's,
    # the digest mkgolden.py's), then its bytes put into mkgolden.py's file
    # for the byte comparison of everything else.
    "$SPIGZ" -l --format=json own.gz > own.json 2> err
    "$PY3" h.py "$GD" own-manifest own.gz own-mf.bin
    check "$n: spigz $OPTS writes a manifest" [ $? -eq 0 ]
    ver=$("$SPIGZ" -V | sed -n '1s/^spigz \([^ ]*\).*/\1/p')
    dig=$("$PY3" "$MK" --digest "$n")
    "$PY3" h.py "$GD" check-manifest "$n" own.json "$ver" "$(uname -n)" "$dig" 2> why
    check "$n: spigz $OPTS: its manifest's entries ($(head -c 400 why))" [ $? -eq 0 ]
    if [ "$OWN_NOTES" = 1 ]; then
        "$PY3" h.py "$GD" json-notes own.json own-notes.json
        check "$n: spigz noted something ($(cat own-notes.json))" grep -q '[^][]' own-notes.json
        "$PY3" "$MK" --renote "$n" own-notes.json --remanifest "$n" own-mf.bin --out want.gz
        check "$n: spigz $OPTS writes mkgolden.py's bytes (with spigz's own notes and manifest)" cmp want.gz own.gz
    else
        "$PY3" "$MK" --remanifest "$n" own-mf.bin --out want.gz
        check "$n: spigz $OPTS writes the golden bytes (with its manifest)" cmp want.gz own.gz
    fi
    rm -rf own own.gz own.json own-mf.bin want.gz "$n" "$n.img"
done

finish

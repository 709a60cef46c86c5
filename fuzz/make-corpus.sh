#!/bin/sh
# Regenerate the seed corpora fuzz/corpus/decode and fuzz/corpus/index.
#
#   decode: spigz files of several layouts (written by the harness itself
#           with cmp_run: empty, one byte, mixed data and zero runs, levels
#           0 and 1, no index, all zeros), the same kind of content from
#           gzip, pigz, bgzip and igzip, multi-member and trailing-byte
#           variants, a spigz file after a gzip member, LZW, pack and zip
#           inputs (alone and after gzip members), and a selection of the
#           malformed and tricky vectors tests/py/badgz.py writes (as
#           badgz-NAME);
#   index:  one flags byte + the valid trailing region of each of
#           fuzz_index's fixed data members (see fuzz/fuzz_index.c);
#   gzx:    one flags byte + the saved index (.gzx) of each of fuzz_gzx's
#           fixed gzip files (see fuzz/fuzz_gzx.c).
#
# Reproducible: fixed content, no names or time stamps stored.  The total
# stays well under 200 KB.  Needs clang (the harnesses are built with
# scripts/fuzz.sh --build), gzip; pigz, bgzip and igzip when installed.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bld=$("$top/scripts/fuzz.sh" --build | tail -n 1)
dec=$top/fuzz/corpus/decode
idx=$top/fuzz/corpus/index
gzx=$top/fuzz/corpus/gzx
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -rf "$dec" "$idx" "$gzx"
mkdir -p "$dec" "$idx" "$gzx"
badgz=$tmp/badgz
python3 "$top/tests/py/badgz.py" "$badgz"

# ---- spigz layouts, from the harnesses ----
SPIGZ_FUZZ_DUMP_SEEDS=$dec "$bld/fuzz_decode" >/dev/null 2>&1
SPIGZ_FUZZ_DUMP_SEEDS=$idx "$bld/fuzz_index" >/dev/null 2>&1
SPIGZ_FUZZ_DUMP_SEEDS=$gzx "$bld/fuzz_gzx" >/dev/null 2>&1

# ---- other gzip writers on the same kind of content ----
# 24 KiB of numbered lines, then 12 KiB of zeros, then more lines.
awk 'BEGIN { for (i = 0; i < 1200; i++) printf "line %05d of the seed\n", i }' >"$tmp/text"
head -c 12288 /dev/zero >"$tmp/zeros"
cat "$tmp/text" "$tmp/zeros" "$tmp/text" | head -c 40000 >"$tmp/mixed"
gzip -9 -n -c <"$tmp/mixed" >"$dec/gzip-9.gz"
gzip -1 -n -c <"$tmp/text" >"$dec/gzip-1.gz"
printf '' | gzip -n -c >"$dec/gzip-empty.gz"
cat "$dec/gzip-1.gz" "$dec/gzip-empty.gz" "$dec/gzip-1.gz" >"$dec/gzip-3-members.gz"
{ cat "$dec/gzip-empty.gz"; printf '\0\0\0\0'; } >"$dec/gzip-trailing-zeros.gz"
{ cat "$dec/gzip-empty.gz"; printf 'garbage'; } >"$dec/gzip-trailing-garbage.gz"
cat "$dec/gzip-empty.gz" "$dec/spigz-mixed-l1.gz" >"$dec/gzip-then-spigz.gz"
cat "$dec/spigz-one-byte.gz" "$dec/gzip-empty.gz" >"$dec/spigz-then-gzip.gz"
if command -v pigz >/dev/null; then
    pigz -n -p 2 -b 32 -c <"$tmp/mixed" >"$dec/pigz.gz"
    pigz -n -i -p 2 -b 32 -c <"$tmp/text" >"$dec/pigz-independent.gz"
fi
if command -v bgzip >/dev/null; then
    bgzip -c <"$tmp/mixed" >"$dec/bgzip.gz"
fi
if command -v igzip >/dev/null; then
    igzip -n -c <"$tmp/mixed" >"$dec/igzip.gz"
fi

# ---- what else gzip -d reads: compress(1)'s LZW, pack(1), a zip's entry ----
if command -v compress >/dev/null; then
    compress -b 12 -c <"$tmp/mixed" >"$dec/lzw-12.Z"
    compress -b 16 -c <"$tmp/text" >"$dec/lzw-16.Z"
    cat "$dec/gzip-1.gz" "$dec/lzw-12.Z" >"$dec/gzip-then-lzw.gz"
fi
# pack: "banana", by the tests' pack(1) encoder
python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); from gzdiff import pack_encode
sys.stdout.buffer.write(pack_encode(b"banana"))' "$top/tests/py" >"$dec/pack-banana.z"
cat "$dec/gzip-empty.gz" "$dec/pack-banana.z" "$dec/gzip-empty.gz" >"$dec/gzip-pack-gzip.gz"
python3 - "$tmp/text" "$dec" <<'PY'
import sys, zipfile, io
text = open(sys.argv[1], "rb").read()[:5000]
for name, method in (("zip-stored.zip", zipfile.ZIP_STORED), ("zip-deflated.zip", zipfile.ZIP_DEFLATED)):
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", method) as z:
        for n, d in (("a.txt", text), ("b.txt", b"second")):
            zi = zipfile.ZipInfo(n, (1980, 1, 1, 0, 0, 0))
            zi.compress_type = method
            z.writestr(zi, d)
    open(sys.argv[2] + "/" + name, "wb").write(b.getvalue())
PY

# ---- malformed and tricky vectors (tests/py/badgz.py), one or two a class ----
for f in inflate-block-type-3 inflate-stored-nlen-equal inflate-cl-incomplete \
    inflate-lit-oversubscribed inflate-repeat16-across-boundary inflate-dist-single \
    inflate-lit-single-eob inflate-fixed-dist-30 inflate-len-258-overlap \
    inflate-cut-dynamic-at-5 intact-lit-crc-wrong window-before-start-1-none \
    window-previous-member-20-32758-gzip window-run-70000 header-y2106 header-flag-80 \
    header-fhcrc-bad trailer-crc trailer-isize trailing-byte-01 trailing-garbage \
    stored-one-byte valid-1B-bgzf valid-empty-chunked valid-32A-fixed lzw-kwkwk \
    lzw-after-gzip pack-tree-0-1 pack-tree-1-1 pack-between-gzip; do
    cp "$badgz/$f.gz" "$dec/badgz-$f.gz"
done
chmod 644 "$dec"/* "$idx"/* "$gzx"/*
echo "decode: $(find "$dec" -type f | wc -l) files, $(cat "$dec"/* | wc -c) bytes"
echo "index:  $(find "$idx" -type f | wc -l) files, $(cat "$idx"/* | wc -c) bytes"
echo "gzx:    $(find "$gzx" -type f | wc -l) files, $(cat "$gzx"/* | wc -c) bytes"

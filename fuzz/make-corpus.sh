#!/bin/sh
# Regenerate the seed corpora fuzz/corpus/decode and fuzz/corpus/index.
#
#   decode: spigz files of several layouts (written by the harness itself
#           with cmp_run: empty, one byte, mixed data and zero runs, levels
#           0 and 1, no index, all zeros), the same kind of content from
#           gzip, pigz, bgzip and igzip, multi-member and trailing-byte
#           variants, a spigz file after a gzip member, LZW, pack and zip
#           inputs (alone and after gzip members), and a selection of
#           malformed vectors from /work/shared/testdata/badgz/gz (or
#           $BADGZ_DIR);
#   index:  one flags byte + the valid trailing region of each of
#           fuzz_index's fixed data members (see fuzz/fuzz_index.c).
#
# Reproducible: fixed content, no names or time stamps stored.  The total
# stays well under 200 KB.  Needs clang (the harnesses are built with
# scripts/fuzz.sh --build), gzip; pigz, bgzip and igzip when installed.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
badgz=${BADGZ_DIR:-/work/shared/testdata/badgz/gz}
bld=$("$top/scripts/fuzz.sh" --build | tail -n 1)
dec=$top/fuzz/corpus/decode
idx=$top/fuzz/corpus/index
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -rf "$dec" "$idx"
mkdir -p "$dec" "$idx"

# ---- spigz layouts, from the harnesses ----
SPIGZ_FUZZ_DUMP_SEEDS=$dec "$bld/fuzz_decode" >/dev/null 2>&1
SPIGZ_FUZZ_DUMP_SEEDS=$idx "$bld/fuzz_index" >/dev/null 2>&1

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
# pack: "banana", as GNU gzip's tests/unpack-valid has it
printf '\037\036\000\000\000\006\003\001\001\000\141\156\142\026\310' >"$dec/pack-banana.z"
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
if [ -d "$badgz" ]; then
    for f in gnu-unpack-invalid-0 gnu-unpack-invalid-1 gnu-unpack-invalid-2 gnu-helin.Z; do
        [ -f "$badgz/$f.gz" ] && cp "$badgz/$f.gz" "$dec/badgz-$f.gz"
    done
fi

# ---- malformed and tricky vectors ----
if [ -d "$badgz" ]; then
    for f in gnu-bug33501 gnu-hufts-segv gnu-trailing-nul-1 gnu-y2106 \
        infcover-bad-gzip-flags infcover-bad-header-crc infcover-check-gzip-length \
        infcover-incorrect-data-check infcover-invalid-distance-too-far-back \
        infcover-invalid-stored-block-lengths infcover-stored infcover-window-wrap \
        libdeflate-gzip_tests-bad-3 libdeflate-test_incomplete_codes-001 \
        libdeflate-test_trailing_bytes-000 puff-cov-05 puff-zeros \
        rapidgzip-1B.bgz rapidgzip-empty.migz rapidgzip-32A-fixed-Huffman.pgzf \
        zlib-ng-CVE-2005-2096-test; do
        [ -f "$badgz/$f.gz" ] && cp "$badgz/$f.gz" "$dec/badgz-$f.gz"
    done
fi
chmod 644 "$dec"/* "$idx"/*
echo "decode: $(find "$dec" -type f | wc -l) files, $(cat "$dec"/* | wc -c) bytes"
echo "index:  $(find "$idx" -type f | wc -l) files, $(cat "$idx"/* | wc -c) bytes"

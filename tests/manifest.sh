#!/bin/bash
# manifest.sh — the manifest in every backup (doc/FORMAT.md 2.2 and 2.3),
# checked against what the system's own tools say of the same disk:
#   - a GPT disk made by sfdisk (EFI System FAT32, Linux ext4, Microsoft
#     basic data NTFS): table type and id, each partition's start, size,
#     type GUID, name and UUID as sfdisk --json gives them, its type's name
#     as fdisk prints it, each filesystem's type, label and UUID as blkid
#     gives them; with --free=zero, each filesystem's used and free bytes
#     adding up to its size, and the free map's bytes;
#   - where from: the host, the path and size, a file's mtime; none from
#     stdin or with -n, so -n, a pipe and -p keep giving the same bytes;
#     a loop device's sector sizes;
#   - the image digest: -t checks it; a manifest whose digest was changed
#     (and every checksum mended) fails -t with status 1;
#   - --compare of a --free=zero backup: an unchanged disk is identical
#     (free blocks not compared, said), a changed used block differs (1), a
#     changed free block does not, an unreadable target is trouble (2);
#     --format=json's object;
#   - the cost: a plain backup's manifest is a few hundred bytes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fslib.sh"
need sfdisk blkid mke2fs mkfs.vfat mcopy cmp "$PY3"
"$PY3" -c 'import xxhash' 2> /dev/null || fail "python3-xxhash is not installed (the digest's check needs it)"
need_free_zero
cd "$T" || exit 1
M=$((1 << 20))

# mf FILE EXPR: a value of FILE's manifest, from -l --format=json (EXPR a
# Python expression on m, the manifest object)
mf() { "$SPIGZ" -l --format=json "$1" | "$PY3" -c 'import json, sys
m = json.load(sys.stdin).get("manifest", {})
v = eval(sys.argv[1])
print(json.dumps(v) if isinstance(v, (dict, list)) else v)' "$2"; }

section "a GPT disk: EFI System (FAT32), Linux (ext4), Microsoft basic data (NTFS)"
mkdir -p src && head -c $((3 * M)) /dev/urandom > src/a && echo hello > src/b
truncate -s 200M disk.img
printf 'label: gpt\nstart=2048, size=69632, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, name="EFI system"\nstart=71680, size=131072, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, name="root fs"\nstart=202752, size=131072, type=EBD0A0A2-B9E5-4433-87C0-68B6B72699C7, name="data"\n' |
    sfdisk -q disk.img || fail "sfdisk"
mkfs_fat p1.img 34 src -F 32 -n ESP
mkfs_ext p2.img 64 src -t ext4 -L rootfs
put disk.img p1.img 2048
put disk.img p2.img 71680
if command -v mkntfs > /dev/null; then
    mkfs_ntfs p3.img 64 -L Data
    ntfs_put p3.img src a
    put disk.img p3.img 202752
fi
"$SPIGZ" -k -c --free=zero disk.img > fz.gz 2> err; s=$?
check "--free=zero backup: status $s ($(head -c 300 err))" [ "$s" -eq 0 ]
"$SPIGZ" -k -c disk.img > plain.gz 2> err; s=$?
check "plain backup: status $s ($(head -c 300 err))" [ "$s" -eq 0 ]
sfdisk --json disk.img > sf.json
for b in fz.gz plain.gz; do
    check "$b: table type gpt" [ "$(mf $b 'm["table"]["type"]')" = gpt ]
    want=$("$PY3" -c 'import json,sys; print(json.load(open("sf.json"))["partitiontable"]["id"].lower())')
    check "$b: table id is sfdisk's ($want)" [ "$(mf $b 'm["table"]["id"].lower()')" = "$want" ]
    for n in 1 2 3; do
        got=$(mf $b "[m['part']['$n'][k] for k in ('start', 'size', 'type', 'name', 'uuid')]")
        want=$("$PY3" -c 'import json, sys
p = json.load(open("sf.json"))["partitiontable"]["partitions"][int(sys.argv[1]) - 1]
print(json.dumps([p["start"] * 512, p["size"] * 512, p["type"].lower(), p["name"], p["uuid"].lower()]))' $n)
        got=$(echo "$got" | tr '[:upper:]' '[:lower:]')
        want=$(echo "$want" | tr '[:upper:]' '[:lower:]')
        check "$b: partition $n as sfdisk --json gives it ($got vs $want)" [ "$got" = "$want" ]
    done
    if [ "$(mf $b '"type-name" in m["part"]["1"]')" = True ]; then
        check "$b: type names as fdisk's" [ "$(mf $b '[m["part"][n]["type-name"] for n in "123"]')" = \
            '["EFI System", "Linux filesystem", "Microsoft basic data"]' ]
    else
        echo "NOTE: this spigz has no libfdisk: type names not checked"
    fi
done
# each filesystem as blkid reads it, through a second loop device over the
# partition's range (this machine's loop devices scan no partitions)
for n in 1 2 3; do
    IFS=' ' read -r start size <<< "$(mf fz.gz "'%d %d' % (m['part']['$n']['start'], m['part']['$n']['size'])")"
    [ "$n" = 3 ] && ! command -v mkntfs > /dev/null && continue
    if loop_attach dev -r -o "$start" --sizelimit "$size" disk.img; then
        for k in TYPE LABEL UUID; do
            key=$(case $k in TYPE) echo fs ;; LABEL) echo label ;; UUID) echo fs-uuid ;; esac)
            want=$(blkid -p -o value -s "$k" "$dev")
            check "partition $n: $key as blkid gives it ($want)" \
                [ "$(mf fz.gz "m['part']['$n'].get('$key', '')")" = "$want" ]
        done
        loop_detach "$dev"
    else
        echo "NOTE: no loop device: partition $n's filesystem against blkid not checked"
    fi
    if has_fs "$(mf fz.gz "m['part']['$n']['fs']")" "its used bytes"; then
        check "partition $n: used + free = its size" \
            [ "$(mf fz.gz "m['part']['$n']['used'] + m['part']['$n']['free']")" = "$size" ]
    fi
done
check "the free map's bytes are free.bytes" \
    [ "$(mf fz.gz 'm["free"]["map"]["bytes"] == m["free"]["bytes"] > 0')" = True ]
check "plain backup: no used or free bytes, no free map" \
    [ "$(mf plain.gz '"free" in m or "used" in m["part"]["2"]')" = False ]

section "where from"
touch -d @1700000000 disk.img
"$SPIGZ" -k -c disk.img > named.gz
check "host is uname -n" [ "$(mf named.gz 'm["host"]')" = "$(uname -n)" ]
check "source path, kind, size, mtime" [ "$(mf named.gz '[m["source"][k] for k in ("path", "kind", "size", "mtime")]')" = \
    "[\"disk.img\", \"file\", $((200 * M)), 1700000000]" ]
"$SPIGZ" -c -n < disk.img > stdin.gz # (-n: gzip stores a redirected file's mtime)
check "stdin: nothing of where from, nor a plain backup's layout" \
    [ "$(mf stdin.gz '[k for k in m if k in ("host", "source", "table", "part")]')" = "[]" ]
"$SPIGZ" -c -n -p 1 disk.img > n1.gz
"$SPIGZ" -c -n -p 2 disk.img > n2.gz
check "-n: the same bytes as from stdin, at -p 1 and -p 2" sh -c 'cmp -s n1.gz stdin.gz && cmp -s n2.gz stdin.gz'
cat disk.img | "$SPIGZ" -c > pipe.gz
check "a pipe: the same bytes" cmp -s pipe.gz stdin.gz
"$SPIGZ" -c -p 1 disk.img > p1.gz
check "named, -p 1 and -p 2 (no -n): the same bytes (no clock read)" cmp -s p1.gz named.gz
if loop_attach dev -r disk.img; then
    "$SPIGZ" -c "$dev" > dev.gz
    check "a device: kind, size and logical sector size" \
        [ "$(mf dev.gz '[m["source"][k] for k in ("kind", "size", "sector")]')" = \
        "[\"block device\", $((200 * M)), $(blockdev --getss "$dev")]" ]
    "$SPIGZ" -c -n "$dev" > devn.gz
    check "a device with -n: the same bytes as its image from stdin" cmp -s devn.gz stdin.gz
    loop_detach "$dev"
else
    echo "NOTE: no loop device: a device's manifest not checked"
fi

section "the image digest"
want=$("$PY3" -c 'import struct, sys, xxhash
H = xxhash.xxh3_128_digest
d = open("disk.img", "rb").read()
L = [H(d[i:i + 4096]) for i in range(0, len(d), 4096)]
G = [H(b"".join(L[j:j + 256])) for j in range(0, len(L), 256)]
print(H(b"".join(G) + struct.pack("<Q", len(d))).hex())')
check "plain backup: the digest of the image (FORMAT.md 2.3)" [ "$(mf plain.gz 'm["image"]["xxh3-128-tree"]')" = "$want" ]
"$SPIGZ" -tv plain.gz 2> err; s=$?
check "-t: status $s, the digest said to hold" sh -c "[ $s -eq 0 ] && grep -q 'digest is the one recorded' err"
# the digest's last byte flipped, the payload's and the footer's CRCs mended
"$PY3" - plain.gz forged.gz <<'EOF'
import sys, zlib
d = bytearray(open(sys.argv[1], "rb").read())
f = len(d) - 78
data_len = int.from_bytes(d[f + 28:f + 36], "little")
key = b"\x13image.xxh3-128-tree\x03\x10"
at = d.rfind(key)
assert at > 0
d[at + len(key) + 15] ^= 1          # inside the last index member
crc, p = 0, data_len
while p < f:
    m = int.from_bytes(d[p + 14:p + 16], "little")
    crc = zlib.crc32(d[p + 16:p + 16 + m], crc)
    p += 26 + m
d[f + 60:f + 64] = crc.to_bytes(4, "little")
d[f + 64:f + 68] = zlib.crc32(d[f + 16:f + 64]).to_bytes(4, "little")
open(sys.argv[2], "wb").write(d)
EOF
"$SPIGZ" -t forged.gz 2> err; s=$?
check "-t of a forged digest: status 1 ($s), said ($(head -c 300 err))" \
    sh -c "[ $s -eq 1 ] && grep -q 'is not the one recorded' err"
"$SPIGZ" -dc forged.gz | cmp -s - disk.img
check "-dc of it still gives the image (the digest is -t's)" [ $? -eq 0 ]

section "--compare of a --free=zero backup"
"$SPIGZ" --compare fz.gz disk.img 2> err; s=$?
check "unchanged: status 0 ($s: $(head -c 300 err))" [ "$s" -eq 0 ]
check "... says what was not compared" grep -q "free map calls free (--free=zero: zeros in the backup) not compared" err
free_off=$(mf fz.gz 'm["part"]["2"]["start"]')
# a used block: ext4's superblock (1 KiB into the partition); a free one:
# the largest free range's middle
cp disk.img used.img
printf 'XXXX' | dd of=used.img bs=1 seek=$((free_off + 1024 + 100)) conv=notrunc status=none
"$SPIGZ" --compare fz.gz used.img 2> err; s=$?
check "a used block changed: status 1 ($s), named ($(head -c 300 err))" \
    sh -c "[ $s -eq 1 ] && grep -q 'differs from fz.gz: 4 bytes in 1 range (first at $((free_off + 1124)))' err"
mid=$("$PY3" - fz.gz <<'EOF'
import sys
d = open(sys.argv[1], "rb").read()
f = d[-78:]
flags, npieces = f[17], int.from_bytes(f[52:60], "little")
dl, il = int.from_bytes(f[28:36], "little"), int.from_bytes(f[44:52], "little")
pay, at = bytearray(), dl
while at < dl + il:
    m = int.from_bytes(d[at + 14:at + 16], "little"); pay += d[at + 16:at + 16 + m]; at += 26 + m
def leb(p, i):
    v = s = 0
    while True:
        v |= (p[i] & 0x7f) << s; s += 7; i += 1
        if not p[i - 1] & 0x80: return v, i
i = 0
for _ in range(npieces):
    h, i = leb(pay, i); _, i = leb(pay, i); i += 4 if h & 1 else 0
if flags & 2:
    n, i = leb(pay, i)
    for _ in range(n):
        l, i = leb(pay, i); i += l
L, i = leb(pay, i)
mf, j = pay[i:i + L], 0
c, j = leb(mf, 0)
for _ in range(c):
    k = mf[j]; key = mf[j + 1:j + 1 + k]; j += 1 + k; t = mf[j]; j += 1
    vl, j = leb(mf, j); v = mf[j:j + vl]; j += vl
    if key == b"free.map":
        n, q = leb(v, 0); end, best = 0, (0, 0)
        for _ in range(n):
            g, q = leb(v, q); ln, q = leb(v, q); end += g
            best = max(best, (ln, end)); end += ln
        print(best[1] + best[0] // 2)
EOF
)
cp disk.img free.img
printf 'YYYY' | dd of=free.img bs=1 seek="$mid" conv=notrunc status=none
"$SPIGZ" --compare fz.gz free.img 2> err; s=$?
check "a free block changed (at $mid): status 0 ($s: $(head -c 300 err))" [ "$s" -eq 0 ]
"$SPIGZ" --compare --no-index fz.gz free.img 2> /dev/null; s=$?
check "... which differs byte for byte (without the index: 1, got $s)" [ "$s" -eq 1 ]
"$SPIGZ" --compare fz.gz missing.img 2> err; s=$?
check "an unreadable target: status 2 ($s), named ($(cat err))" \
    sh -c "[ $s -eq 2 ] && grep -q 'missing.img: No such file or directory' err"
"$SPIGZ" --compare --format=json fz.gz used.img > out.json 2> err; s=$?
check "--format=json: status 1 ($s), one object" [ "$s" -eq 1 ]
check "... its fields ($(cat out.json))" "$PY3" -c 'import json, sys
o = json.load(open("out.json"))
assert o["backup"] == "fz.gz" and o["target"] == "used.img" and o["status"] == 1
assert not o["identical"] and o["differing_bytes"] == 4 and o["differing_ranges"] == 1
assert o["free_map"] is True and o["free_not_compared"] > 0 and o["first"][0][1] == 4'

section "the cost"
head -c $((8 * M)) /dev/urandom > r.bin
"$SPIGZ" -k -c -n r.bin > with.gz
"$SPIGZ" -c -n --no-index r.bin > none.gz
mfsize=$(( $(stat -c %s with.gz) - $(stat -c %s none.gz) ))
echo "NOTE: an 8 MiB file's index with its manifest: $mfsize bytes"
check "an 8 MiB file's whole index, manifest included, under 1 KiB ($mfsize)" [ "$mfsize" -lt 1024 ]
finish

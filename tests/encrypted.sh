#!/bin/bash
# encrypted.sh — encrypted volumes under --free=zero: a LUKS2 volume made by
# cryptsetup and a BitLocker volume (its header as Windows writes it: the
# boot sector's signature and the FVE metadata block it points to, then
# random bytes for the ciphertext) are partitions of a GPT disk beside an
# ext4.  Their blocks are ciphertext, used and free alike, and which are
# free cannot be known without unlocking them: each is read whole, and -v,
# --map and --estimate (text, JSON, key=value) say it is encrypted; the
# manifest marks them; the restore holds every byte of them, the ext4's
# free blocks zeroed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fslib.sh"
need sfdisk cryptsetup mke2fs cmp dd "$PY3"
need_free_zero
cd "$T" || exit 1
M=$((1 << 20))

section "a GPT disk: ext4, LUKS2, BitLocker"
mkdir -p src && head -c $((2 * M)) /dev/urandom > src/a
truncate -s 100M disk.img
printf 'label: gpt\nstart=2048, size=65536\nstart=67584, size=65536\nstart=133120, size=65536\n' |
    sfdisk -q disk.img || fail "sfdisk"
mkfs_ext p1.img 32 src -t ext4 -L plain
stale p2.img 32
# (the key file is a file: no terminal; a fast PBKDF, the header is what counts)
printf 'secret' > key
cryptsetup luksFormat --batch-mode --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 \
    --key-file key p2.img > /dev/null 2>&1 || fail "cryptsetup luksFormat"
stale p3.img 32
"$PY3" - p3.img <<'EOF'
import struct, sys
# BitLocker (Windows 7 and later): the boot sector's entry point and
# signature, the FVE metadata block's offset at byte 176, and that block's
# own signature, size and version
with open(sys.argv[1], "r+b") as f:
    f.write(b"\xeb\x58\x90-FVE-FS-")
    f.seek(176)
    f.write(struct.pack("<Q", 0x21000))
    f.seek(510)
    f.write(b"\x55\xaa")
    f.seek(0x21000)
    f.write(b"-FVE-FS-" + struct.pack("<HH", 512, 2))
EOF
put disk.img p1.img 2048
put disk.img p2.img 67584
put disk.img p3.img 133120
if [ "$(blkid -p -o value -s TYPE p2.img)" != crypto_LUKS ] ||
    [ "$(blkid -p -o value -s TYPE p3.img)" != BitLocker ]; then
    fail "blkid does not see the volumes made here: $(blkid -p p2.img p3.img)"
fi

"$SPIGZ" --free=zero -v -k -c disk.img > fz.gz 2> err; s=$?
check "--free=zero: status 0 ($s: $(head -c 400 err))" [ "$s" -eq 0 ]
for n in 2 3; do
    check "-v: partition $n read whole, encrypted ($(grep "partition $n " err))" \
        grep -q "partition $n (gpt, .*: \(crypto_LUKS\|BitLocker\), 32.0 MiB, read whole: an encrypted volume" err
done
"$SPIGZ" -dc fz.gz > back.img
for n in 2 3; do
    start=$(( n == 2 ? 67584 : 133120 ))
    check "partition $n: every byte restored" \
        cmp -s <(dd if=back.img bs=512 skip=$start count=65536 status=none) p$n.img
done
check "the ext4 holds its files: its free blocks are zeros, the file is there" \
    sh -c "dd if=back.img bs=512 skip=2048 count=65536 status=none > r1.img && debugfs -R 'cat /a' r1.img 2>/dev/null | cmp -s - src/a"

section "--estimate and --map say it"
"$SPIGZ" --estimate --free=zero disk.img > est.txt 2> err
check "--estimate: partition 2 encrypted ($(grep encrypted est.txt | tr '\n' '|'))" \
    grep -q "^  encrypted   partition 2 (crypto_LUKS, 32.0 MiB): read whole" est.txt
check "--estimate: partition 3 encrypted" grep -q "^  encrypted   partition 3 (BitLocker, 32.0 MiB): read whole" est.txt
check "--estimate: not the ext4" sh -c '! grep -q "encrypted   partition 1" est.txt'
"$SPIGZ" --estimate --free=zero --format=json disk.img > est.json
check "--estimate --format=json: encrypted true for 2 and 3, false for 1, 2 and 3 unmapped" "$PY3" -c '
import json, sys
o = json.load(open("est.json"))
ps = {p["number"]: p for L in o["layouts"] for p in L["partitions"]}
assert [ps[n]["encrypted"] for n in (1, 2, 3)] == [False, True, True], ps
assert not ps[2]["mapped"] and not ps[3]["mapped"] and "encrypted volume" in ps[2]["why"]'
"$SPIGZ" --estimate --free=zero --format=kv disk.img > est.kv
check "--format=kv: an encrypted= line each ($(grep ^encrypted= est.kv | tr '\n' ' '))" \
    sh -c "grep -qx 'encrypted=1:2:crypto_LUKS:$((32 * M))' est.kv && grep -qx 'encrypted=1:3:BitLocker:$((32 * M))' est.kv"
"$SPIGZ" --map --free=zero disk.img > map.txt
check "--map: partition 2 read whole, encrypted" \
    grep -q "gpt partition 2 at .*crypto_LUKS, 32.0 MiB, read whole: an encrypted volume" map.txt

section "the manifest marks them"
"$SPIGZ" -l --format=json fz.gz > l.json
check "--free=zero backup: part.2 and part.3 encrypted, part.1 not" "$PY3" -c '
import json
p = json.load(open("l.json"))["manifest"]["part"]
assert p["2"].get("encrypted") == 1 and p["3"].get("encrypted") == 1 and "encrypted" not in p["1"], p
assert p["2"]["fs"] == "crypto_LUKS" and p["3"]["fs"] == "BitLocker" and "read-whole" in p["2"]'
"$SPIGZ" -k -c disk.img > plain.gz
"$SPIGZ" -l --format=json plain.gz > l2.json
check "a plain backup too" "$PY3" -c '
import json
p = json.load(open("l2.json"))["manifest"]["part"]
assert p["2"].get("encrypted") == 1 and p["3"].get("encrypted") == 1, p'
finish

#!/bin/bash
# volatile.sh — --exclude=volatile: Windows' pagefile.sys, hiberfil.sys and
# swapfile.sys stored as zeros, on a Windows-like GPT disk made by the
# system's tools (sfdisk; an EFI System FAT32, a 16 MiB MSR with no
# filesystem, an NTFS "C:" holding the page and hibernation files full of
# random bytes beside ordinary files, a Recovery NTFS).  After the restore:
# the volatile files are there with their sizes and hold zeros, every other
# file reads back identical, ntfsfix -n passes; without the option every
# byte is as it was (the default stays byte-faithful).  What it saved is said
# by the backup, by --estimate (text, JSON, key=value) and in the manifest.
# A hibernated volume (hiberfil.sys with Windows' hibernation signature) is
# read whole, as before: its hibernation file is never dropped.  The option
# is refused without --free=zero and outside a backup or an estimate.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fslib.sh"
need sfdisk mkntfs ntfscp ntfscat ntfsfix mkfs.vfat mcopy cmp dd "$PY3"
need_free_zero
has_fs ntfs "the volatile files" || { finish; exit 77; }
cd "$T" || exit 1
M=$((1 << 20))

section "a Windows-like GPT disk"
mkdir -p esp c rec
echo bootmgr > esp/bootx64.efi
head -c $((12 * M)) /dev/urandom > c/pagefile.sys
head -c $((6 * M)) /dev/urandom > c/hiberfil.sys
head -c $((2 * M)) /dev/urandom > c/swapfile.sys
head -c $((3 * M)) /dev/urandom > c/report.docx
seq 1 100000 > c/notes.txt
head -c $((1 * M)) /dev/urandom > rec/winre.wim
truncate -s 200M disk.img
printf 'label: gpt\nstart=2048, size=69632, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B\nstart=71680, size=32768, type=E3C9E316-0B5C-4DB8-817D-F92DF00215AE\nstart=104448, size=204800, type=EBD0A0A2-B9E5-4433-87C0-68B6B72699C7\nstart=309248, size=65536, type=DE94BBA4-06D1-4D40-A16A-BFD50179D6AC\n' |
    sfdisk -q disk.img || fail "sfdisk"
mkfs_fat p1.img 34 esp -F 32 -n SYSTEM
stale p2.img 16
mkfs_ntfs p3.img 100 -L Windows
ntfs_put p3.img c pagefile.sys hiberfil.sys swapfile.sys report.docx notes.txt
mkfs_ntfs p4.img 32 -L Recovery
ntfs_put p4.img rec winre.wim
put disk.img p1.img 2048
put disk.img p2.img 71680
put disk.img p3.img 104448
put disk.img p4.img 309248

"$SPIGZ" --free=zero --exclude=volatile -k -c disk.img > ex.gz 2> err; s=$?
check "--exclude=volatile: status 0 ($s: $(head -c 400 err))" [ "$s" -eq 0 ]
check "... says what it stored as zeros ($(grep volatile err))" \
    grep -q "partition 3 (gpt, .*): 20.0 MiB of Windows' volatile files (pagefile.sys, hiberfil.sys, swapfile.sys) stored as zeros" err
"$SPIGZ" --free=zero -k -c disk.img > keep.gz
"$SPIGZ" -dc ex.gz > ex.img
"$SPIGZ" -dc keep.gz > keep.img
part ex.img 104448 204800 c-ex.img
part keep.img 104448 204800 c-keep.img
for f in pagefile.sys hiberfil.sys swapfile.sys; do
    ntfscat c-ex.img "$f" > got
    check "$f: its size kept, zeros in it" \
        sh -c "[ $(stat -c %s c/$f) -eq \$(stat -c %s got) ] && cmp -s -n $(stat -c %s c/$f) got /dev/zero"
    check "$f: without the option, its bytes" sh -c "ntfscat c-keep.img $f | cmp -s - c/$f"
done
for f in report.docx notes.txt; do
    check "$f reads back identical" sh -c "ntfscat c-ex.img $f | cmp -s - c/$f"
done
check "ntfsfix -n on the restored C:" sh -c "ntfsfix -n c-ex.img > /dev/null 2>&1"
part ex.img 309248 65536 rec-ex.img
check "the Recovery volume: its file identical" sh -c "ntfscat rec-ex.img winre.wim | cmp -s - rec/winre.wim"
check "the Recovery volume has no volatile files: nothing said of it" sh -c '! grep -q "partition 4 .*volatile" err'
part ex.img 2048 69632 esp-ex.img
check "the EFI System FAT32: its file" sh -c "mcopy -n -i esp-ex.img ::bootx64.efi - | cmp -s - esp/bootx64.efi"
check "the MSR: every byte (no filesystem: read whole)" \
    cmp -s <(dd if=ex.img bs=512 skip=71680 count=32768 status=none) p2.img
saved=$(( $(stat -c %s keep.gz) - $(stat -c %s ex.gz) ))
echo "NOTE: the backup with --exclude=volatile is $saved bytes smaller"
check "... about the 20 MiB of random bytes smaller ($saved)" [ "$saved" -gt $((19 * M)) ]

section "--estimate and the manifest say it"
"$SPIGZ" --estimate --free=zero --exclude=volatile disk.img > est.txt 2> /dev/null
check "--estimate ($(grep volatile est.txt))" \
    grep -q "^  volatile    partition 3 (ntfs): 20.0 MiB of pagefile.sys, hiberfil.sys, swapfile.sys stored as zeros" est.txt
"$SPIGZ" --estimate --free=zero --exclude=volatile --format=json disk.img > est.json 2> /dev/null
check "--estimate --format=json: excluded per partition" "$PY3" -c '
import json
o = json.load(open("est.json"))
ps = {p["number"]: p for L in o["layouts"] for p in L["partitions"]}
assert ps[3]["excluded"] == 20 << 20 and ps[4]["excluded"] == 0, ps'
"$SPIGZ" --estimate --free=zero --exclude=volatile --format=kv disk.img > est.kv 2> /dev/null
check "--format=kv: an excluded= line" grep -qx "excluded=1:3:$((20 * M))" est.kv
"$SPIGZ" -l --format=json ex.gz > l.json
check "the manifest: options.exclude and part.3.excluded" "$PY3" -c '
import json
m = json.load(open("l.json"))["manifest"]
assert m["options"]["exclude"] == "volatile" and m["part"]["3"]["excluded"] == 20 << 20, m'

section "a hibernated Windows keeps its hibernation file"
cp p3.img h3.img
printf 'HIBR' > hibr && ntfscp -q h3.img hibr hiberfil.sys # its signature over the first bytes
"$SPIGZ" --free=zero --exclude=volatile -c h3.img > h.gz 2> err; s=$?
check "status 2, read whole: hibernated ($s: $(head -c 300 err))" \
    sh -c "[ $s -eq 2 ] && grep -q 'hibernated' err && ! grep -q 'stored as zeros' err"
check "... every byte kept" sh -c "'$SPIGZ' -dc h.gz | cmp -s - h3.img"

section "a damaged volume: a volatile file's clusters named by another file too"
# (whoever zeroed pagefile.sys here would zero victim.bin's data too)
mkfs_ntfs x.img 32
head -c $((1 * M)) /dev/urandom > c/victim.bin
ntfs_put x.img c pagefile.sys victim.bin
"$PY3" "$srcdir/tests/py/ntfslink.py" x.img pagefile.sys victim.bin > /dev/null || fail "ntfslink.py"
head -c $((1 * M)) c/pagefile.sys > pf1
check "victim.bin now reads pagefile.sys's first MiB" sh -c "ntfscat x.img victim.bin | cmp -s - pf1"
"$SPIGZ" --free=zero --exclude=volatile -c x.img > x.gz 2> err; s=$?
check "status 2, said ($s: $(head -c 300 err))" \
    sh -c "[ $s -eq 2 ] && grep -q 'its volatile files (pagefile.sys) share clusters with other files (run chkdsk): kept as they are' err"
"$SPIGZ" -dc x.gz > x-r.img
check "... victim.bin (and pagefile.sys) restored with their bytes" \
    sh -c "ntfscat x-r.img victim.bin | cmp -s - pf1 && ntfscat x-r.img pagefile.sys | cmp -s - c/pagefile.sys"

section "refused where it makes no sense"
"$SPIGZ" --exclude=volatile -c disk.img > /dev/null 2> err; s=$?
check "without --free=zero: a usage error ($s: $(head -1 err))" \
    sh -c "[ $s -eq 1 ] && grep -q 'exclude=volatile is for a backup' err"
"$SPIGZ" -d --free=zero --exclude=volatile -c ex.gz > /dev/null 2> err; s=$?
check "with -d: a usage error ($s)" [ "$s" -eq 1 ]
"$SPIGZ" --free=zero --exclude=everything -c disk.img > /dev/null 2> err; s=$?
check "--exclude=everything: a usage error ($s: $(head -1 err))" \
    sh -c "[ $s -eq 1 ] && grep -q \"invalid --exclude 'everything'\" err"
finish

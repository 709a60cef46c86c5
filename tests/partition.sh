#!/bin/bash
# partition.sh — `spigz -d --partition N`: one partition of the image, as
# the kernel numbers them (a GPT; an MBR with its logicals from 5), out of
# a spigz backup (through its index) and a pigz one (through a gzip index
# built in one pass and kept beside it), to a file, to stdout and onto a
# device.  Each equals the partition's bytes of the image (dd at the
# table's offsets).  A partition the image lacks is an error naming those
# it has; a pipe, or --range with it, is refused; a device too small for
# the partition is refused before a byte is written.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fslib.sh"
need sfdisk pigz cmp dd losetup
cd "$T" || exit 1
S=512 M=$((1 << 20))
# part IMG START SECTORS: the bytes of the image there
part() { dd if="$1" bs=$S skip="$2" count="$3" status=none; }
rnd() { "$PY3" -c 'import os, sys
f = open(sys.argv[1], "r+b")
for a in sys.argv[2:]:
    off, n = (int(x) for x in a.split(":"))
    f.seek(off); f.write(os.urandom(n))' "$@"; }

section "a GPT disk: p1, p2 (data, then zeros)"
truncate -s 64M gpt.img
printf 'label: gpt\nstart=2048, size=20480\nstart=24576, size=40960\n' | sfdisk -q gpt.img
rnd gpt.img $((2048 * S)):$((20480 * S)) $((24576 * S)):$((30000 * S))
"$SPIGZ" -c gpt.img > gpt.gz
pigz -c gpt.img > gpt.pz.gz
for b in gpt.gz gpt.pz.gz; do
    rm -f p2.out
    "$SPIGZ" -d --partition 2 -o p2.out "$b" 2> err; s=$?
    check "$b: --partition 2 -o: status $s ($(head -c 300 err))" [ "$s" -eq 0 ]
    check "$b: p2 equals the image's bytes" cmp -s p2.out <(part gpt.img 24576 40960)
    "$SPIGZ" -dc --partition 1 "$b" > p1.out 2> err; s=$?
    check "$b: --partition 1 -c: status $s ($(head -c 300 err))" [ "$s" -eq 0 ]
    check "$b: p1 equals the image's bytes" cmp -s p1.out <(part gpt.img 2048 20480)
done
check "the pigz backup's gzip index kept beside it" test -s gpt.pz.gz.gzx
"$SPIGZ" -dc --partition 2 < gpt.gz > p2.in 2> err; s=$?
check "stdin redirected from the backup: status $s, the same p2" \
    sh -c "[ $s -eq 0 ] && cmp -s p2.in p2.out"

section "an MBR with logical partitions: p1, p5, p6"
truncate -s 48M mbr.img
printf 'label: dos\nstart=2048, size=8192, type=83\nstart=12288, size=65536, type=5\nstart=14336, size=16384, type=83\nstart=32768, size=20480, type=83\n' |
    sfdisk -q mbr.img
rnd mbr.img $((2048 * S)):$((8192 * S)) $((14336 * S)):$((16384 * S)) $((32768 * S)):$((20480 * S))
"$SPIGZ" -c mbr.img > mbr.gz
for n in 1:2048:8192 5:14336:16384 6:32768:20480; do
    IFS=: read -r k at len <<< "$n"
    "$SPIGZ" -dc --partition "$k" mbr.gz > pk.out 2> err; s=$?
    part mbr.img "$at" "$len" > pk.want
    check "--partition $k: status $s, the image's bytes ($(head -c 300 err))" \
        sh -c "[ $s -eq 0 ] && cmp -s pk.out pk.want"
done

section "errors"
"$SPIGZ" -dc --partition 3 gpt.gz > /dev/null 2> err; s=$?
check "no partition 3: status 1, got $s" [ "$s" -eq 1 ]
check "... names those there are ($(cat err))" grep -q "gpt.gz: no partition 3: the image has p1, p2" err
"$SPIGZ" -dc --partition 2 mbr.gz > /dev/null 2> err; s=$?
check "MBR p2 (the extended container's slot is no partition): status 1, got $s" [ "$s" -eq 1 ]
check "... names those there are ($(cat err))" grep -q "no partition 2: the image has p1, p5, p6" err
head -c $((4 * M)) /dev/urandom > raw.img && "$SPIGZ" -c raw.img > raw.gz
"$SPIGZ" -dc --partition 1 raw.gz > /dev/null 2> err; s=$?
check "no partition table: status 1, said ($(cat err))" \
    sh -c "[ $s -eq 1 ] && grep -q 'no partition 1: the image holds no partition table' err"
cat gpt.gz | "$SPIGZ" -dc --partition 1 > /dev/null 2> err; s=$?
check "a pipe: status 1, said ($(cat err))" sh -c "[ $s -eq 1 ] && grep -q 'must be a file, not a pipe' err"
"$PY3" - "$SPIGZ" gpt.gz 2> err <<'EOF'; s=$?
import os, subprocess, sys
fd = os.open(sys.argv[2], os.O_RDONLY)
os.lseek(fd, 3, 0)
sys.exit(subprocess.run([sys.argv[1], "-dc", "--partition", "1"], stdin=fd,
                        stdout=subprocess.DEVNULL).returncode)
EOF
check "stdin left at an offset: status 1, said ($(cat err))" \
    sh -c "[ $s -eq 1 ] && grep -q 'reads the backup from its first byte' err"
"$SPIGZ" -dc --partition 1 --range 0:1 gpt.gz > /dev/null 2> err; s=$?
check "with --range: a usage error ($(head -1 err))" \
    sh -c "[ $s -eq 1 ] && grep -q -- '--partition and --range' err"
"$SPIGZ" -d --partition 1 gpt.gz 2> err; s=$?
check "without -c or -o: a usage error ($(head -1 err))" \
    sh -c "[ $s -eq 1 ] && grep -q -- '--partition needs -d and -c or -o' err"

section "onto a device: too small refused before a byte is written, else the partition"
truncate -s $((16 * M)) small.dev && "$PY3" -c 'import os, sys; open(sys.argv[1], "r+b").write(os.urandom(16 << 20))' small.dev
cp small.dev small.before
if loop_attach SM small.dev; then
    "$SPIGZ" -d --partition 2 -o "$SM" gpt.gz 2> err; s=$?
    check "p2 (20 MiB) onto 16 MiB: status 1, got $s" [ "$s" -eq 1 ]
    check "... refused, sizes named ($(head -c 300 err))" \
        grep -q "$SM: the device (16777216 bytes, 16.0 MiB) is smaller than the range (20971520 bytes, 20.0 MiB): not written" err
    check "... not a byte written" cmp -s small.dev small.before
    "$SPIGZ" -d --partition 1 -o "$SM" gpt.gz 2> err; s=$?
    check "p1 (10 MiB) onto 16 MiB: status $s ($(head -c 300 err))" [ "$s" -eq 0 ]
    check "... the device starts with p1" cmp -s -n $((20480 * S)) "$SM" <(part gpt.img 2048 20480)
else
    echo "NOTE: no loop device: the device checks of --partition were not run"
fi
finish

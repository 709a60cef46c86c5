#!/bin/bash
# device.sh — restoring onto block devices (loop devices here), and a
# backup's page cache: `spigz -d -o /dev/X` writes the image into the
# device through the index (pieces in parallel, zero spans zeroed by the
# kernel: BLKZEROOUT, or discard with --discard) or sequentially; a device
# holding old data ends up holding the image byte for byte, whether the
# kernel zeroes or (fault shim: FAULT_NO_ZEROOUT) spigz writes the zeros.
# Refused before any write: a mounted device (read-write or read-only, by
# -o or on stdout), a device smaller than the image (with an index) or
# than --range's bytes (a number, or "end" with an index); without an
# index, a clear error at the device's end.  A signal says how much was
# written.  Reading a device drops its pages from the page cache.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=tests/lib.sh
. "${srcdir:-$(dirname "$0")/..}/tests/lib.sh"
# shellcheck source=tests/fslib.sh
. "${srcdir:-$(dirname "$0")/..}/tests/fslib.sh"

need python3 cmp losetup mount umount mkfs.ext4 timeout fincore strace sfdisk
: "${FAULT_SO:?FAULT_SO must point at the fault injection shim (tests/fault.so)}"
[ -f "$FAULT_SO" ] || fail "fault shim $FAULT_SO is missing (make tests/fault.so)"

M=$((1024 * 1024))
# fill DEV: old data (random) all over it.
fill() { python3 -c "import os,sys; open(sys.argv[1],'r+b').write(os.urandom(int(sys.argv[2])))" "$1" "$2"; }

# A 40 MiB image: data at the start, a data island, an unaligned tail.
IMG=$T/img
python3 - "$IMG" <<'EOF'
import random, sys
r = random.Random(5)
M = 1 << 20
d = bytearray(40 * M)
d[0:3 * M] = r.randbytes(3 * M)
d[20 * M:21 * M + 100] = r.randbytes(M + 100)
d[39 * M + 7:40 * M - 5] = r.randbytes(M - 12)
open(sys.argv[1], "wb").write(d)
EOF
"$SPIGZ" -c "$IMG" > "$T/img.gz"
"$SPIGZ" --no-index -c "$IMG" > "$T/ni.gz"
mkdir -p "$T/mnt"
fs_mounted "$T/mnt"

# same_prefix DEV N FILE: the first N bytes of DEV are FILE.
same_prefix() { cmp -s -n "$2" "$1" "$3"; }

section "onto a device larger than the image, holding old data"
truncate -s $((64 * M)) "$T/big"
loop_need BIG "$T/big" || exit 1
fill "$BIG" $((64 * M))
cp "$T/big" "$T/big.before"
"$SPIGZ" -d -vv -o "$BIG" "$T/img.gz" 2> "$T/err"
check "indexed restore onto a device: status 0 ($(head -c 300 "$T/err"))" test $? -eq 0
check "... through the index" grep -q "decoded through its index" "$T/err"
check "... the device holds the image, zero spans really zeroed" same_prefix "$BIG" $((40 * M)) "$IMG"
check "... the kernel zeroed the zero spans (BLKZEROOUT)" grep -Eq "/dev/loop[0-9]+: [1-9][0-9]* bytes zeroed by the device" "$T/err"
check "... the bytes past the image are untouched" cmp -s -i $((40 * M)) "$BIG" "$T/big.before"

fill "$BIG" $((64 * M))
"$SPIGZ" -d -vv -o "$BIG" "$T/ni.gz" 2> "$T/err"
check "sequential restore (no index) onto a device: status 0" test $? -eq 0
check "... the device holds the image" same_prefix "$BIG" $((40 * M)) "$IMG"
check "... zeros by the kernel there too" grep -Eq ": [1-9][0-9]* bytes zeroed by the device" "$T/err"

for gz in img.gz ni.gz; do
    fill "$BIG" $((64 * M))
    LD_PRELOAD=$FAULT_SO FAULT_NO_ZEROOUT=1 "$SPIGZ" -d -vv --discard -o "$BIG" "$T/$gz" 2> "$T/err"
    check "$gz, a device that zeroes nothing: status 0" test $? -eq 0
    check "$gz: ... every zero written by spigz instead: the image" same_prefix "$BIG" $((40 * M)) "$IMG"
    check "$gz: ... nothing was offloaded" grep -q ": 0 bytes zeroed by the device" "$T/err"
done

section "--direct: data written past the page cache"
fill "$BIG" $((64 * M))
"$SPIGZ" -d --direct -p2 -o "$BIG" "$T/img.gz"
check "--direct: status 0" test $? -eq 0
check "--direct: the device holds the image (aligned pages direct, the rest buffered)" \
    same_prefix "$BIG" $((40 * M)) "$IMG"
"$SPIGZ" -d --direct -o "$T/plainfile" "$T/img.gz" 2> "$T/err"
check "--direct onto a file is an error" sh -c "grep -q 'direct is for block devices' '$T/err' && [ ! -e '$T/plainfile' ]"

section "--discard: zero spans discarded where the device guarantees zeros"
fill "$BIG" $((64 * M))
sync
"$SPIGZ" -d --discard -o "$BIG" "$T/img.gz"
check "--discard: status 0" test $? -eq 0
check "--discard: the device holds the image" same_prefix "$BIG" $((40 * M)) "$IMG"
used=$(du -k "$T/big" | cut -f1)
# a loop device discards by punching holes in its file: 5 MiB of data and
# the 24 MiB past the image stay
check "--discard: the loop device's file lost the zero spans ($used KiB used)" test "$used" -lt $((32 * 1024))
"$SPIGZ" -d --discard -o "$T/plainfile" "$T/img.gz" 2> "$T/err"
check "--discard onto a file is an error" sh -c "grep -q 'discard is for block devices' '$T/err' && [ ! -e '$T/plainfile' ]"

section "a device of exactly the image's size"
truncate -s $((40 * M)) "$T/exact"
loop_need EX "$T/exact" || exit 1
fill "$EX" $((40 * M))
"$SPIGZ" -d -o "$EX" "$T/img.gz"
check "exact size: status 0 and the image" sh -c "[ $? -eq 0 ] && cmp -s '$EX' '$IMG'"

section "a device too small"
truncate -s $((32 * M)) "$T/small"
loop_need SM "$T/small" || exit 1
fill "$SM" $((32 * M))
cp "$T/small" "$T/small.before"
"$SPIGZ" -d -o "$SM" "$T/img.gz" 2> "$T/err"
check "with an index: status 1" test $? -eq 1
check "... refused, sizes named" grep -q "$SM: the device (33554432 bytes, 32.0 MiB) is smaller than the image (41943040 bytes, 40.0 MiB): not written" "$T/err"
check "... not a byte written" cmp -s "$SM" "$T/small.before"
"$SPIGZ" -d -o "$SM" "$T/ni.gz" 2> "$T/err"
check "without an index: status 1" test $? -eq 1
check "... the error says the image is larger than the device" grep -q "$SM: the image is larger than the device, which ends at 33554432 bytes (32.0 MiB)" "$T/err"
check "... what fits was written" same_prefix "$SM" $((32 * M)) "$IMG"
check "... and the device is said to hold a partial image ($(tail -c 300 "$T/err"))" \
    grep -Eq "spigz: $SM: restore failed after [0-9]+ bytes of the image were written: the device holds a partial image" "$T/err"
"$SPIGZ" -d -o "$SM" "$T/img.gz" 2> "$T/err"
check "refused before writing: no partial image claimed" sh -c "! grep -q 'partial image' '$T/err'"

section "--range onto a device too small: refused before a byte is written"
# Its length is known before a byte is written (a number; or "end" through
# the index): it must fit.  Before, what fitted was written, then the
# restore failed, leaving a cut filesystem that blkid still recognises.
fill "$SM" $((32 * M))
cp "$T/small" "$T/small.before"
for gz in img ni; do
    "$SPIGZ" -d --range=4M:36M -o "$SM" "$T/$gz.gz" 2> "$T/err"
    check "$gz.gz, --range=4M:36M onto 32 MiB: status 1" test $? -eq 1
    check "... refused, sizes named ($(head -c 300 "$T/err"))" \
        grep -q "$SM: the device (33554432 bytes, 32.0 MiB) is smaller than the range (37748736 bytes, 36.0 MiB): not written" "$T/err"
    check "... not a byte written" cmp -s "$SM" "$T/small.before"
done
"$SPIGZ" -d --range=4M:end -o "$SM" "$T/img.gz" 2> "$T/err"
check "--range=4M:end (36 MiB by the index) onto 32 MiB: status 1" test $? -eq 1
check "... refused, sizes named ($(head -c 300 "$T/err"))" \
    grep -q "$SM: the device (33554432 bytes, 32.0 MiB) is smaller than the range (37748736 bytes, 36.0 MiB): not written" "$T/err"
check "... not a byte written" cmp -s "$SM" "$T/small.before"
"$SPIGZ" -d --range=8M:end -o "$SM" "$T/img.gz" 2> "$T/err"
check "--range=8M:end (32 MiB) onto 32 MiB: status 0 ($(head -c 300 "$T/err"))" test $? -eq 0
check "... the range written" cmp -s -n $((32 * M)) "$SM" <(tail -c +$((8 * M + 1)) "$IMG")

section "a failed restore says the device holds a partial image"
for how in cut damaged; do
    fill "$BIG" $((64 * M))
    if [ $how = cut ]; then
        head -c $(($(wc -c < "$T/img.gz") / 2)) "$T/img.gz" > "$T/bad.gz"
    else
        cp "$T/ni.gz" "$T/bad.gz"
        python3 -c 'import sys
p = sys.argv[1]; d = bytearray(open(p, "rb").read())
for i in range(len(d) // 2, len(d) // 2 + 64): d[i] ^= 0x5a
open(p, "wb").write(d)' "$T/bad.gz"
    fi
    "$SPIGZ" -d -o "$BIG" "$T/bad.gz" 2> "$T/err"
    check "$how backup onto a device: status 1" test $? -eq 1
    check "$how backup: the device is named, holding a partial image ($(head -c 300 "$T/err"))" \
        grep -Eq "spigz: $BIG: restore failed after [1-9][0-9]* bytes of the image were written: the device holds a partial image" "$T/err"
done

section "mounted devices are refused"
fill "$SM" $((32 * M))
mkfs.ext4 -q -F "$SM" || fail "mkfs.ext4 failed"
for how in rw ro; do
    if mount -o "$how" "$SM" "$T/mnt"; then
        "$SPIGZ" -d -o "$SM" "$T/img.gz" 2> "$T/err"
        check "mounted $how, -o: status 1" test $? -eq 1
        check "mounted $how, -o: names what is mounted where ($(head -c 300 "$T/err"))" \
            grep -q "$SM: $SM is mounted on $T/mnt: not written" "$T/err"
        "$SPIGZ" -dc "$T/img.gz" > "$SM" 2> "$T/err"
        check "mounted $how, stdout: status 1" test $? -eq 1
        check "mounted $how, stdout: names what is mounted where ($(head -c 300 "$T/err"))" \
            grep -q "stdout: $SM is mounted on $T/mnt: not written" "$T/err"
        umount "$T/mnt"
        # (mounting writes to the filesystem itself: look for the image)
        check "mounted $how: nothing of the image written" sh -c "! cmp -s -n $((3 * M)) '$SM' '$IMG'"
        check "mounted $how: the filesystem is whole" e2fsck -fn "$SM" > /dev/null 2>&1
    else
        fail "cannot mount the test filesystem $how"
    fi
done

section "a disk whose partition is mounted: the refusal names what is mounted where"
# (this kernel's loop devices may not scan partitions: the partition is a
# second loop device over its range of the same file, as mounts.sh does)
truncate -s $((48 * M)) "$T/pdisk"
printf 'label: dos\nstart=2048, size=40960, type=83\n' | sfdisk -q "$T/pdisk" > /dev/null
if loop_need PD "$T/pdisk" && loop_need PP -o $((2048 * 512)) --sizelimit $((40960 * 512)) "$T/pdisk" &&
    mkfs.ext4 -q -F "$PP" && mount "$PP" "$T/mnt"; then
    cp "$T/pdisk" "$T/pdisk.before"
    "$SPIGZ" -d -o "$PD" "$T/img.gz" 2> "$T/err"
    check "partition mounted: status 1" test $? -eq 1
    check "... names the partition and where ($(head -c 300 "$T/err"))" \
        grep -q "$PD: $PP is mounted on $T/mnt: not written" "$T/err"
    umount "$T/mnt"
    # (mount and umount write into the partition: the first MiB, before it, is the test)
    check "... not a byte written" cmp -s -n $M "$T/pdisk" "$T/pdisk.before"
else
    fail "a loop device over a partition's range, with a mounted ext4"
fi

section "a signal says how far the device was written"
SD=$T/stall
mkdir -p "$SD" && mkfifo "$SD/stalled" "$SD/go"
fill "$BIG" $((64 * M))
(LD_PRELOAD=$FAULT_SO FAULT_STALL_AFTER=$((4 * M)) FAULT_STALL_DIR=$SD \
    exec "$SPIGZ" -d -p2 -o "$BIG" "$T/img.gz") 2> "$T/err" &
pid=$!
# (the handler exits at once: the stalled read never needs its go)
if timeout "$HANG" sh -c 'read -r _ < "$1"' sh "$SD/stalled"; then
    kill -s INT "$pid"
else
    kill -9 "$pid"
fi
wait "$pid"
RC=$?
check "SIGINT: killed by it, status 130 (RC=$RC)" test "$RC" -eq 130
check "SIGINT: the message says how much of the image the device holds ($(head -c 300 "$T/err"))" \
    grep -Eq "spigz: $BIG: interrupted after [0-9]+ bytes of the image were written: the device holds a partial image" "$T/err"

section "reading a device leaves the page cache as it was"
# A loop device's own page cache cannot be observed here (its reads are
# cached in its backing file's pages, and fincore sizes a device as 0), so
# what is checked is what spigz asks of the kernel: POSIX_FADV_DONTNEED
# over every byte of the device it read.  A file's cache is observed below.
strace -f -e trace=fadvise64 -o "$T/st" "$SPIGZ" -c "$BIG" > /dev/null
dropped=$(python3 - "$T/st" $((64 * M)) <<'EOF'
import re, sys
covered = bytearray(int(sys.argv[2]) // 4096)
for line in open(sys.argv[1]):
    m = re.search(r"fadvise64\(\d+, (\d+), (\d+), POSIX_FADV_DONTNEED\)", line)
    if m:
        off, n = int(m.group(1)), int(m.group(2))
        for i in range(off // 4096, min(len(covered), (off + n + 4095) // 4096)):
            covered[i] = 1
print(sum(covered) * 4096)
EOF
)
check "a backup of the 64 MiB device advises all of it away (DONTNEED over $dropped bytes)" \
    test "$dropped" -eq $((64 * M))
cat "$IMG" > /dev/null
"$SPIGZ" -c "$IMG" > /dev/null
fcached=$(fincore -nb -o RES "$IMG" | tr -d ' ')
"$SPIGZ" --nocache -c "$IMG" > /dev/null
ncached=$(fincore -nb -o RES "$IMG" | tr -d ' ')
check "a file keeps its page cache by default (${fcached} bytes), --nocache drops it (${ncached} bytes)" \
    sh -c "[ '$fcached' -gt $((30 * M)) ] && [ '$ncached' -lt $((2 * M)) ]"

section "a whole disk onto a larger device: said, and for a GPT the command that moves its backup header"
truncate -s 40M "$T/gpt.img"
printf 'label: gpt\nstart=2048, size=20480\n' | sfdisk -q "$T/gpt.img"
"$SPIGZ" -c "$T/gpt.img" > "$T/gpt.gz"
fill "$BIG" $((64 * M))
"$SPIGZ" -d -f -o "$BIG" "$T/gpt.gz" 2> "$T/err"; s=$?
check "restored onto a 64 MiB device: status $s ($(head -c 300 "$T/err"))" [ "$s" -eq 0 ]
check "... says the device is larger, and by how much" \
    grep -q "the device (64.0 MiB) is larger than the image (40.0 MiB): the 24.0 MiB after it is in no partition" "$T/err"
check "... names the command for the GPT's backup header" grep -q "sfdisk --relocate gpt-bak-std $BIG" "$T/err"
sfdisk -l "$BIG" 2>&1 | grep -q "backup GPT table is not on the end"
check "... which sfdisk sees (before the command)" [ $? -eq 0 ]
sfdisk -q --relocate gpt-bak-std "$BIG" > /dev/null 2>&1
sfdisk -l "$BIG" 2>&1 | grep -q "backup GPT table is not on the end"
check "... and the command given fixes (sfdisk no longer complains)" [ $? -ne 0 ]
"$SPIGZ" -d -f -o "$BIG" "$T/img.gz" 2> "$T/err"
check "an image without a GPT: the size said, no GPT command" \
    sh -c "grep -q 'is larger than the image' '$T/err' && ! grep -q relocate '$T/err'"

finish

#!/bin/sh
# Install what building, testing, the demo and the benchmark need, on Debian 12
# (bookworm) or a close relative.  Runs apt-get as root, or through sudo.
# Usage: scripts/deps.sh [build|demo|deb|test|bench]   (default: test)
# demo is what scripts/demo.sh needs and no more: the build, mke2fs for its
# image, and the gzip and pigz it compares with.  nbdkit-plugin-dev builds the
# nbdkit plugin; nbdkit, libnbd-bin (nbdinfo, nbdcopy) and qemu-utils
# (qemu-img) serve and read it in tests/nbd.sh and scripts/deb.sh.
set -eu
what=${1:-test}
build="build-essential autoconf automake pkg-config zlib1g-dev libxxhash-dev libdeflate-dev libisal-dev check libblkid-dev libfdisk-dev libext2fs-dev ntfs-3g-dev libdevmapper-dev libfuse3-dev nbdkit-plugin-dev"
test="$build gzip pigz busybox 7zip libarchive-tools python3 python3-xxhash cryptsetup-bin isal libdeflate-tools zopfli tabix util-linux e2fsprogs clang libclang-rt-14-dev strace ncompress rsync fdisk mount dosfstools mtools exfatprogs exfat-fuse ntfs-3g gddrescue bash-completion gztool python3-indexed-gzip shellcheck fuse3 fuse2fs nbdkit libnbd-bin qemu-utils lvm2 xfsprogs btrfs-progs"
demo="$build gzip pigz e2fsprogs"
deb="$build debhelper dpkg-dev fakeroot lintian gzip man-db nbdkit libnbd-bin"
bench="$test time zerofree partclone bc gnuplot-nox python3-libnbd"
case $what in
    build) pkgs=$build ;;
    demo) pkgs=$demo ;;
    deb) pkgs=$deb ;;
    test) pkgs=$test ;;
    bench) pkgs=$bench ;;
    *) echo "usage: $0 [build|demo|deb|test|bench]" >&2; exit 1 ;;
esac
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
echo "installing:$missing"
$sudo apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null

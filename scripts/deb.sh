#!/bin/sh
# Build the Debian package from this tree and check it, as a user would get
# it: `dpkg-buildpackage -us -uc -b` in a copy of the distributed files plus
# debian/, lintian (any error fails; warnings are shown), then install the
# .deb, try the installed spigz, unspigz, spigzcat, manual page, bash
# completion and nbdkit plugin (served once by nbdkit when it is installed),
# and remove it again (unless a spigz package was installed
# before: then the new one stays, and is said to).  Nothing is left in the
# tree or in the temporary directory.
# Usage: scripts/deb.sh [--keep-deb DIR]   (copy the .deb to DIR)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
keep=
case ${1:-} in
    --keep-deb) keep=${2:?--keep-deb needs a directory} ;;
    '') ;;
    *) echo "usage: $0 [--keep-deb DIR]" >&2; exit 1 ;;
esac
"$top/scripts/deps.sh" deb
[ -f "$top/config.status" ] || "$top/scripts/build.sh"
if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
work=$(mktemp -d "${TMPDIR:-/tmp}/spigz-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
version=$(sed -n 's/^AC_INIT(\[spigz\], \[\([^]]*\)\].*/\1/p' "$top/configure.ac")
src=$work/spigz-$version
make -s -C "$top" distdir distdir="$src" > /dev/null
cp -R "$top/debian" "$src/"
echo "deb: dpkg-buildpackage -us -uc -b (log: build.log, shown on failure)"
if ! (cd "$src" && dpkg-buildpackage -us -uc -b) > "$work/build.log" 2>&1; then
    tail -n 60 "$work/build.log" >&2
    echo "deb: FAIL: the package did not build" >&2
    exit 1
fi
deb=$(ls "$work"/spigz_*.deb)
echo "deb: built $(basename "$deb") ($(stat -c %s "$deb") bytes)"
lintian --fail-on error --tag-display-limit 0 "$deb" > "$work/lintian.log" 2>&1 || {
    cat "$work/lintian.log" >&2
    echo "deb: FAIL: lintian reports errors" >&2
    exit 1
}
sed 's/^/deb: lintian: /' "$work/lintian.log"

before=no
dpkg-query -W -f='${Status}' spigz 2>/dev/null | grep -q "install ok installed" && before=yes
$sudo dpkg -i "$deb" > /dev/null
fail=0
ck() { # DESCRIPTION COMMAND...: one check of the installed package (its output shown if it fails)
    d=$1
    shift
    if out=$("$@" 2>&1); then
        echo "deb: ok: $d"
    else
        echo "deb: FAIL: $d" >&2
        printf '%s\n' "$out" | tail -n 20 >&2
        fail=1
    fi
}
t=$work/smoke
mkdir -p "$t"
{ seq 1 200000; head -c 3000000 /dev/zero; seq 5 90000; } > "$t/in"
ck "spigz -V names the engines" sh -c '/usr/bin/spigz -V | grep -q "^engines: ISA-L"'
ck "spigz -c | gzip -dc gives the input back" sh -c '/usr/bin/spigz -c "$1" | gzip -dc | cmp -s - "$1"' sh "$t/in"
ck "unspigz restores a file" sh -c 'cd "$1" && /usr/bin/spigz -k in && mv in in.orig && /usr/bin/unspigz in.gz && cmp -s in in.orig' sh "$t"
ck "spigzcat writes to stdout" sh -c '/usr/bin/spigz -c "$1/in.orig" | /usr/bin/spigzcat | cmp -s - "$1/in.orig"' sh "$t"
ck "spigz -l gives the exact size" sh -c '/usr/bin/spigz -c "$1" > "$1.gz" && /usr/bin/spigz -l "$1.gz" | grep -q " $(stat -c %s "$1") "' sh "$t/in"
ck "the manual pages are installed" sh -c 'for m in spigz unspigz spigzcat; do [ -e /usr/share/man/man1/$m.1.gz ] || exit 1; done'
ck "bash completion is installed for the three names" sh -c 'd=/usr/share/bash-completion/completions; [ -f $d/spigz ] && [ -e $d/unspigz ] && [ -e $d/spigzcat ]'
ck "the binaries are in /usr/bin" sh -c '[ -x /usr/bin/spigz ] && [ -x /usr/bin/unspigz ] && [ -x /usr/bin/spigzcat ]'
ck "the installed spigz mounts (-V: --mount with libfuse3)" sh -c '/usr/bin/spigz -V | grep -q "^--mount: libfuse3"'
# The nbdkit plugin: where nbdkit looks for plugins (`nbdkit spigz` finds it
# by name), and served once by the installed nbdkit when it is here.
plugindir=$(pkg-config --variable=plugindir nbdkit 2>/dev/null) || plugindir=
nbd_serves() { # FILE: its backup served by `nbdkit spigz`: its size and bytes
    /usr/bin/spigz -c "$1" > "$1.nbd.gz" || return 1
    # shellcheck disable=SC2016 # $uri and $F are the --run shell's
    F=$1 nbdkit -U - spigz "$1.nbd.gz" \
        --run 'nbdinfo --size "$uri" > "$F.size" && nbdcopy "$uri" "$F.nbd"' || return 1
    [ "$(cat "$1.size")" = "$(stat -c %s "$1")" ] && cmp -s "$1" "$1.nbd"
}
if [ -n "$plugindir" ]; then
    ck "the nbdkit plugin is in nbdkit's plugindir" test -f "$plugindir/nbdkit-spigz-plugin.so"
    if command -v nbdkit > /dev/null && command -v nbdcopy > /dev/null; then
        ck "nbdkit spigz serves the backup (nbdinfo --size, nbdcopy)" nbd_serves "$t/in.orig"
    else
        echo "deb: nbdkit or nbdcopy is not installed: the plugin was not served"
    fi
else
    echo "deb: nbdkit's plugindir is unknown (no nbdkit-plugin-dev): the plugin was not looked for"
fi
if [ "$before" = no ]; then
    $sudo dpkg -r spigz > /dev/null
    ck "removed again: nothing of it left in /usr/bin" sh -c '! [ -e /usr/bin/spigz ]'
    [ -z "$plugindir" ] ||
        ck "removed again: the nbdkit plugin too" sh -c '! [ -e "$1/nbdkit-spigz-plugin.so" ]' sh "$plugindir"
else
    echo "deb: a spigz package was installed before: the one just built stays installed"
fi
[ -z "$keep" ] || cp "$deb" "$keep/"
if [ "$fail" -ne 0 ]; then
    echo "deb: FAIL: the installed package did not pass its smoke test" >&2
    exit 1
fi
echo "deb: the package builds, is lintian clean of errors, installs and works"

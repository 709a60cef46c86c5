#!/bin/sh
# Configure and build in the source tree (idempotent).  Extra arguments go to
# configure, e.g. CFLAGS='-O1 -g -fsanitize=address'.
set -eu
cd "$(dirname "$0")/.."
[ -x configure ] || ./autogen.sh >/dev/null
if [ ! -f Makefile ] || [ "$#" -gt 0 ]; then
    ./configure -q "$@"
fi
make -s -j"$(nproc)"

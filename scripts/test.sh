#!/bin/sh
# Install what is missing, build, and run every test: the Check unit tests
# and the shell tests (CLI, round trips through every gunzip, errors) through
# `make distcheck`, which also proves the release tarball builds and passes;
# then the unit tests again under AddressSanitizer/UBSan and the pipeline
# under ThreadSanitizer (scripts/sanitize.sh), a short run of each fuzzer
# (scripts/fuzz.sh), the Debian package built, installed and tried
# (scripts/deb.sh), and every other configuration configure offers, each
# built and tested on what it changes (scripts/builds.sh).
set -eu
cd "$(dirname "$0")/.."
# What the tests leave in the temporary directory is checked at the end:
# every spigz* entry that was not there before is a test that did not clean up.
tmp=${TMPDIR:-/tmp}
tmp_list() { find "$tmp" -mindepth 1 -maxdepth 1 -name 'spigz*' -printf '%f\n'; }
tmp_before=" $(tmp_list | tr '\n' ' ') "
scripts/deps.sh test
scripts/build.sh
# VERBOSE: a failing test's log is printed (automake's harness reads it).
VERBOSE=1
export VERBOSE
make -s -j"$(nproc)" distcheck
scripts/sanitize.sh
FUZZ_SEED=1 scripts/fuzz.sh 30
# The Debian package: builds, lintian, installs, works, removed again.
scripts/deb.sh
scripts/builds.sh
left=
for f in $(tmp_list); do
    case $tmp_before in *" $f "*) ;; *) left="$left $f" ;; esac
done
if [ -n "$left" ]; then
    echo "FAIL: the tests left behind in $tmp:$left" >&2
    exit 1
fi
echo "all tests passed"

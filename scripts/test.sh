#!/bin/sh
# Install what is missing, build, and run every test: the Check unit tests
# and the shell tests (CLI, round trips through every gunzip, errors) through
# `make distcheck`, which also proves the release tarball builds and passes;
# then the unit tests again under AddressSanitizer/UBSan and the pipeline
# under ThreadSanitizer (scripts/sanitize.sh).
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh test
scripts/build.sh
make -s -j"$(nproc)" distcheck
scripts/sanitize.sh
echo "all tests passed"

#!/bin/sh
# Runs shellcheck on every shell script of the repository: the files named *.sh,
# those whose first line starts a shell (#!.../sh, bash, dash), and the bash
# completion.  Repository-wide choices are in .shellcheckrc; a warning meant
# at one line is disabled at that line, with the reason.  Any finding fails,
# printed with its line.  Part of the test command's quick tier.
# Usage: scripts/lint.sh
set -eu
cd "$(dirname "$0")/.."
command -v shellcheck > /dev/null || { echo "lint: shellcheck is not installed (scripts/deps.sh test)" >&2; exit 1; }
# The repository's files: git's list in a checkout, else the source tree's
# own folders (a release tarball); never a build's generated scripts.
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
    files=$(git ls-files --cached --others --exclude-standard)
else
    files=$(find autogen.sh .ci bench completion fuzz scripts tests -type f 2>/dev/null)
fi
list=
for f in $files; do
    [ -f "$f" ] || continue
    case $f in
    *.sh | completion/*) ;;
    *) head -n 1 "$f" | grep -qE '^#!.*/(env +)?(ba|da)?sh( |$)' || continue ;;
    esac
    list="$list $f"
done
# shellcheck disable=SC2086 # $list is the list of files (no spaces in their names)
shellcheck --external-sources $list
echo "lint: shellcheck: $(echo "$list" | wc -w) shell scripts, no findings"

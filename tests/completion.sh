#!/bin/bash
# Bash completion (completion/spigz): every long option `spigz --help`
# lists is offered; values for the options that take a word; after -d, -t,
# -l and for unspigz and spigzcat, compressed files only (by gzip's
# suffixes); otherwise every file.  Needs bash and bash-completion.
# shellcheck source=tests/lib.sh
. "${srcdir:-$(dirname "$0")/..}/tests/lib.sh"

BC=/usr/share/bash-completion/bash_completion
COMP=$srcdir/completion/spigz
[ -r "$BC" ] || fail "bash-completion is not installed ($BC): scripts/deps.sh test installs it"
[ -r "$COMP" ] || fail "no completion script at $COMP"
[ "$FAILS" = 0 ] || finish

W=$T/w
mkdir -p "$W/sub"
touch "$W/a.gz" "$W/b.tgz" "$W/c.Z" "$W/d.txt" "$W/e.img"

# complete WORDS...: what completion offers for the last word (sorted, one a
# line), run in a fresh bash from $W as a user's shell would.  WORDS are as
# bash splits the line: "--sparse=" is the three words --sparse = "".
complete_words() {
    (cd "$W" && bash --norc --noprofile -c '
        . "$1"; . "$2"; shift 2
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
        COMP_LINE=$1 prev=$1; shift
        for w in "$@"; do # no blank around a "=" word, as it was typed
            if [ "$w" = "=" ] || [ "$prev" = "=" ]; then COMP_LINE+=$w; else COMP_LINE+=" $w"; fi
            prev=$w
        done
        COMP_POINT=${#COMP_LINE}
        set -- "${COMP_WORDS[@]}"
        _spigz "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
        printf "%s\n" "${COMPREPLY[@]}" | sort' sh "$BC" "$COMP" "$@")
}
# offers DESC "WANT..." WORDS...: completion offers exactly WANT.
offers() {
    local d=$1 want got
    # shellcheck disable=SC2086 # $2 is a list of words
    want=$(printf '%s\n' $2 | sort)
    shift 2
    got=$(complete_words "$@")
    if [ "$got" = "$want" ]; then pass; else fail "$d: offered '$(tr '\n' ' ' <<< "$got")', expected '$(tr '\n' ' ' <<< "$want")'"; fi
}

section "every long option of --help is offered"
"$SPIGZ" --help | grep -oE -- '--[a-z][a-z-]*=?' | sort -u > "$T/help-opts"
complete_words spigz -- | tr ' ' '\n' > "$T/offered"
complete_words spigz --e >> "$T/offered" # --estimate and --estimate=
missing=$(sort -u "$T/offered" | comm -23 "$T/help-opts" -)
check "options in --help but not offered: '$missing'" [ -z "$missing" ]
# and nothing is offered that spigz does not take
while read -r o; do
    "$SPIGZ" --help | grep -qE -- "(^|[ ,])${o%=}([ =,\[]|$)" || fail "offered $o, which --help does not list"
done < <(sort -u "$T/offered")

section "values"
offers "--sparse=" "auto always never" spigz --sparse = ""
offers "--free=" "zero keep" spigz --free = ""
offers "--format=" "text json kv" spigz --format = ""
offers "--estimate=" "sample full" spigz --estimate = ""
offers "--export-index=" "gztool indexed_gzip" spigz --export-index = ""
offers "-p takes a number" "" spigz -p ""

section "files"
offers "compressing: every file" "a.gz b.tgz c.Z d.txt e.img sub" spigz ""
offers "-d: compressed files" "a.gz b.tgz c.Z sub" spigz -d ""
offers "-dc: compressed files" "a.gz b.tgz c.Z sub" spigz -dc ""
offers "--test: compressed files" "a.gz b.tgz c.Z sub" spigz --test ""
offers "-lv: compressed files" "a.gz b.tgz c.Z sub" spigz -lv ""
offers "--export-index=gztool: compressed files" "a.gz b.tgz c.Z sub" spigz --export-index = gztool ""
offers "unspigz: compressed files" "a.gz b.tgz c.Z sub" unspigz ""
offers "spigzcat: compressed files" "a.gz b.tgz c.Z sub" spigzcat ""
offers "-o takes any name" "a.gz b.tgz c.Z d.txt e.img sub" spigz -d -o ""
offers "-k -9: every file" "a.gz b.tgz c.Z d.txt e.img sub" spigz -k -9 ""

finish

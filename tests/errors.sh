#!/bin/bash
# errors.sh — failures: missing and unreadable inputs, read errors midway,
# disk full, a full device on stdout, signals mid-run, a closed pipe, a file
# changing size; and, decompressing (through the index and sequentially),
# read errors, a full disk, a file size limit and signals.  On an error the
# partial output is removed, the input kept, the status is 1 and the message
# names the file and the cause.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
# shellcheck source=tests/lib.sh
. "${srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need gzip cmp stat timeout env head seq truncate
: "${FAULT_SO:?FAULT_SO must point at the fault injection shim (tests/fault.so)}"
[ -f "$FAULT_SO" ] || fail "fault shim $FAULT_SO is missing (make tests/fault.so)"
env --default-signal=INT true 2>/dev/null || fail "env --default-signal is not supported (coreutils >= 8.31 needed)"

W=$T/w
R=$T/ref
mkdir -p "$W" "$R"
M=$((1024 * 1024))

errtext() { tr '\n' '|' < "$T/err" | head -c 400; }
one_of() { local v=$1 x; shift; for x; do [ "$v" = "$x" ] && return 0; done; return 1; }

# frun [VAR=VALUE...] -- ARG...: spigz ARG... in $W with the environment
# VAR=VALUE... (e.g. LD_PRELOAD); stderr through a pipe (never a file the
# shim could fail), stdout in $T/out.  Sets RC and CMD.
frun() {
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    CMD="${envs[*]} spigz $*"
    (cd "$W" && exec timeout "$HANG" env "${envs[@]}" "$SPIGZ" "$@") 2>&1 > "$T/out" | cat > "$T/err"
    RC=${PIPESTATUS[0]}
}

rc_is() {
    if [ "$RC" -eq "$2" ]; then
        pass
    else
        fail "$1: '$CMD' exited $RC, expected $2 (stderr: $(errtext))"
    fi
}

err_has() {
    if grep -qF -- "$2" "$T/err"; then
        pass
    else
        fail "$1: stderr of '$CMD' lacks '$2': $(errtext)"
    fi
}

absent() { if [ -e "$W/$2" ]; then fail "$1: $2 was left behind (after '$CMD')"; else pass; fi; }
unchanged() {
    if cmp -s "$W/$2" "$R/$2"; then pass; else fail "$1: input $2 changed or vanished (after '$CMD')"; fi
}
gz_is() {
    if [ -f "$2" ] && gzip -dc < "$2" 2>/dev/null | cmp -s - "$3"; then
        pass
    else
        fail "$1: $2 does not decode to $3"
    fi
}

# only DESC NAME...: $W holds exactly these names (no stray files).
only() {
    local desc=$1 got want
    shift
    got=$(find "$W" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort | tr '\n' ' ')
    want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
    if [ "$got" = "$want" ]; then pass; else fail "$desc: directory holds '$got', expected '$want'"; fi
}

# mk NAME SIZE: a file of random and text data in $W, with a copy in $R.
mk() {
    { head -c $(($2 / 2)) /dev/urandom; seq 1 $(($2 / 4)) | head -c $(($2 - $2 / 2)); } > "$W/$1"
    cp "$W/$1" "$R/$1"
}

# ---- missing and unreadable inputs ----
section "missing and unreadable inputs"
frun -- missing
rc_is "a missing file" 1
err_has "a missing file" "spigz: missing: No such file or directory"
absent "a missing file: no output" missing.gz

mk ok1 100000
mk ok2 100000
: > "$W/notdir"
frun -- ok1 notdir/x missing ok2
rc_is "unopenable files among good ones" 1
err_has "a path through a non-directory" "notdir/x: Not a directory"
err_has "a missing file among others" "missing: No such file or directory"
gz_is "unopenable files among good ones: the first is compressed" "$W/ok1.gz" "$R/ok1"
gz_is "unopenable files among good ones: the last is compressed" "$W/ok2.gz" "$R/ok2"
rm -f "$W/ok1.gz" "$W/ok2.gz" "$W/notdir"

frun -- ''
rc_is "an empty file name" 1
err_has "an empty file name" "No such file or directory"
frun -- -o new.gz missing
rc_is "-o OUT with a missing input" 1
absent "-o OUT with a missing input: OUT not created" new.gz
long=$(printf 'x%.0s' $(seq 1 254))
echo data > "$W/$long"
cp "$W/$long" "$R/$long"
frun -- "$long"
rc_is "an output name too long for the file system" 1
err_has "an output name too long" "File name too long"
unchanged "an output name too long: input kept" "$long"
rm -f "$W/$long" "$R/$long"
(cd "$W" && exec timeout "$HANG" "$SPIGZ" -c "$R/ok1" >&-) 2>&1 | cat > "$T/err"
RC=${PIPESTATUS[0]} CMD="spigz -c FILE >&-"
rc_is "a closed stdout" 1
err_has "a closed stdout" "stdout"

ln -s nowhere "$W/dangling"
frun -- -f dangling
rc_is "a dangling link with -f" 1
err_has "a dangling link with -f" "dangling: No such file or directory"
absent "a dangling link: no output" dangling.gz
rm -f "$W/dangling"

mk unr 200000
frun LD_PRELOAD="$FAULT_SO" FAULT_READ_EIO_AFTER=0 -- unr
rc_is "an unreadable file (EIO at once)" 1
err_has "an unreadable file names it" "unr:"
err_has "an unreadable file gives the cause" "Input/output error"
absent "an unreadable file: no partial output" unr.gz
unchanged "an unreadable file is kept" unr
only "an unreadable file: no stray files" unr
rm -f "$W/unr" "$R/unr"

# Levels 1 and 2 map ISA-L's stream inside 2 GiB of reserved address space a
# thread (src/core/isal_home.h); with less allowed they stop, naming the file
# and the cause, and leave nothing behind.  A sanitizer's shadow memory needs
# terabytes of address space itself (scripts/sanitize.sh sets SPIGZ_SANITIZER),
# so there the limit stops the runtime, not spigz: checked in plain builds.
if [ -n "${SPIGZ_SANITIZER:-}" ]; then
    echo "NOTE: the ulimit -v check of -1 runs in plain builds only (not under $SPIGZ_SANITIZER)"
elif has_level 1 "the ulimit -v check of -1"; then
    mk lim $((3 * M))
    (cd "$W" && ulimit -v 1500000 && exec timeout "$HANG" "$SPIGZ" -1 -p 2 lim) > "$T/out" 2> "$T/err"
    RC=$? CMD="spigz -1 -p 2 lim (ulimit -v 1500000)"
    rc_is "-1 without the address space it reserves" 1
    err_has "-1 without address space names the file" "lim:"
    err_has "-1 without address space says why" "address space"
    absent "-1 without address space: no partial output" lim.gz
    only "-1 without address space: input kept, no stray files" lim
    unchanged "-1 without address space: input unchanged" lim
    rm -f "$W/lim" "$R/lim"
fi

# ---- read error midway ----
section "read error midway"
mk r $((8 * M))
for mode in file keep o c p1; do
    case $mode in
        file) args=(r) out=r.gz ;;
        keep) args=(-k r) out=r.gz ;;
        o) args=(-o r.out r) out=r.out ;;
        c) args=(-c r) out= ;;
        p1) args=(-p 1 r) out=r.gz ;;
    esac
    frun LD_PRELOAD="$FAULT_SO" FAULT_READ_EIO_AFTER=$((3 * M + 100)) -- "${args[@]}"
    rc_is "read error midway ($mode)" 1
    err_has "read error midway ($mode) names the file" "spigz: r:"
    err_has "read error midway ($mode) gives the cause" "Input/output error"
    unchanged "read error midway ($mode): input kept" r
    if [ -n "$out" ]; then
        absent "read error midway ($mode): partial output removed" "$out"
    fi
    only "read error midway ($mode): no stray files" r
done
# From standard input redirected from the file.
(cd "$W" && LD_PRELOAD=$FAULT_SO FAULT_READ_EIO_AFTER=$((2 * M)) exec "$SPIGZ" -o r.out < r) 2>&1 | cat > "$T/err"
RC=${PIPESTATUS[0]} CMD="spigz -o r.out < r (read error)"
rc_is "read error on stdin" 1
err_has "read error on stdin names it" "stdin"
err_has "read error on stdin gives the cause" "Input/output error"
absent "read error on stdin: partial -o output removed" r.out
# In the data after a hole of a sparse file.
truncate -s $((64 * M)) "$W/sp"
head -c $((3 * M)) /dev/urandom | dd of="$W/sp" bs=1M seek=40 conv=notrunc status=none
cp --sparse=always "$W/sp" "$R/sp"
frun LD_PRELOAD="$FAULT_SO" FAULT_READ_EIO_AFTER=$((M + 4096)) -- -k sp
rc_is "read error after a hole" 1
err_has "read error after a hole" "Input/output error"
absent "read error after a hole: partial output removed" sp.gz
rm -f "$W/sp" "$R/sp"

# ---- disk full ----
section "disk full"
# (named as below: the manifest records the source's path as given)
(cd "$W" && "$SPIGZ" -k -c r) > "$T/r-full.gz" 2>/dev/null
full=$(stat -c %s "$T/r-full.gz")
# (The last 78 bytes are the index's footer, the bytes before it the index.)
for n in 0 5 100000 $((full - 100)) $((full - 78)) $((full - 1)); do
    for mode in file o; do
        case $mode in
            file) args=(r) out=r.gz ;;
            o) args=(-o r.out r) out=r.out ;;
        esac
        frun LD_PRELOAD="$FAULT_SO" FAULT_WRITE_ENOSPC_AFTER=$n -- "${args[@]}"
        rc_is "disk full after $n of $full bytes ($mode)" 1
        err_has "disk full after $n bytes ($mode) names the output" "$out"
        err_has "disk full after $n bytes ($mode) gives the cause" "No space left on device"
        absent "disk full after $n bytes ($mode): partial output removed" "$out"
        unchanged "disk full after $n bytes ($mode): input kept" r
        only "disk full after $n bytes ($mode): no stray files" r
    done
done
# Exactly enough room: success (the shim and the sizes agree).
frun LD_PRELOAD="$FAULT_SO" FAULT_WRITE_ENOSPC_AFTER="$full" -- -k r
rc_is "disk with exactly enough room ($full bytes)" 0
gz_is "disk with exactly enough room" "$W/r.gz" "$R/r"
rm -f "$W/r.gz"
# The output's data or its directory entry cannot be made durable (fsync
# fails): the input is never removed.
for d in compress decompress; do
    case $d in
        compress) args=(r) out=r.gz in=r ;;
        decompress) cp "$T/r-full.gz" "$W/r.gz"; cp "$T/r-full.gz" "$R/r.gz"
                    rm -f "$W/r"; args=(-d r.gz) out=r in=r.gz ;;
    esac
    frun LD_PRELOAD="$FAULT_SO" FAULT_FSYNC_EIO=file -- "${args[@]}"
    rc_is "$d: fsync of the output fails" 1
    err_has "$d: fsync of the output fails: named" "$out"
    absent "$d: fsync of the output fails: output removed" "$out"
    unchanged "$d: fsync of the output fails: input kept" "$in"
    frun LD_PRELOAD="$FAULT_SO" FAULT_FSYNC_EIO=dir -- "${args[@]}"
    rc_is "$d: fsync of the output's directory fails (a warning)" 2
    err_has "$d: fsync of the directory fails: said" "cannot sync its directory"
    if [ $d = compress ]; then
        gz_is "$d: fsync of the directory fails: output whole" "$W/r.gz" "$R/r"
    else
        cmp -s "$W/r" "$R/r" && pass || fail "$d: fsync of the directory fails: output not whole"
    fi
    unchanged "$d: fsync of the directory fails: input kept" "$in"
    rm -f "$W/$out"
done
rm -f "$W/r.gz" "$R/r.gz"
cp "$R/r" "$W/r"
only "after the fsync failures: no stray files" r

# A full device on standard output.
(cd "$W" && exec timeout "$HANG" "$SPIGZ" -c r) 2>&1 > /dev/full | cat > "$T/err"
RC=${PIPESTATUS[0]} CMD="spigz -c r > /dev/full"
rc_is "spigz -c FILE > /dev/full" 1
err_has "spigz -c FILE > /dev/full" "No space left on device"
unchanged "spigz -c FILE > /dev/full: input kept" r
(cd "$W" && exec timeout "$HANG" "$SPIGZ") < /dev/null 2>&1 > /dev/full | cat > "$T/err"
RC=${PIPESTATUS[0]} CMD="spigz < /dev/null > /dev/full"
rc_is "an empty input to /dev/full (fails at the final flush)" 1
err_has "an empty input to /dev/full" "No space left on device"

# An output that cannot be replaced.
mkdir "$W/outdir"
frun -- -f -o outdir r
rc_is "-f -o onto a directory" 1
unchanged "-f -o onto a directory: input kept" r
if [ -d "$W/outdir" ]; then pass; else fail "-f -o onto a directory removed the directory"; fi
rmdir "$W/outdir"

# ---- signals mid-run ----
section "signals"
rm -f "$W/r" "$R/r"
mk big $((40 * M))
# stall_start AFTER ARG...: start spigz ARG... in $W with its reads of files
# stopped once AFTER bytes are read (fault.so), and return when they are: it
# is then mid-run, its output created.  stall_go lets it go on.  The FIFOs
# synchronise; timeout only guards against a hang.
SD=$T/stall
stall_start() {
    local after=$1
    shift
    rm -rf "$SD" && mkdir -p "$SD" && mkfifo "$SD/stalled" "$SD/go"
    # (no core file from the re-raised SIGXCPU/SIGXFSZ: their default dumps)
    (cd "$W" && ulimit -c 0 && LD_PRELOAD=$FAULT_SO FAULT_STALL_AFTER=$after FAULT_STALL_DIR=$SD \
        exec env --default-signal=INT,TERM,HUP "$SPIGZ" "$@") 2> "$T/err" &
    pid=$!
    if timeout "$HANG" sh -c 'read -r _ < "$1"' sh "$SD/stalled"; then
        return 0
    fi
    kill -9 "$pid" 2> /dev/null
    wait "$pid"
    fail "spigz $* never reached its stall at $after bytes (status $?): $(errtext "$T/err")"
    return 1
}
stall_go() { timeout "$HANG" sh -c ': > "$1"' sh "$SD/go" || fail "spigz did not take up its go"; }
# sig SIGNAL MODE: a signal while spigz is mid-run: it must remove its
# partial output (under a temporary name), leave only the input, and die by
# the same signal as gzip does (status 128 + the signal's number in the
# shell), so that a loop in a script stops.
sig() {
    local s=$1 mode=$2 args
    case $mode in
        file) args=(big) ;;
        o) args=(-o big.out big) ;;
    esac
    stall_start $((8 * M)) "${args[@]}" || return
    check "SIG$s ($mode): the partial output exists under a temporary name" \
        [ "$(find "$W" -name '.big*' | wc -l)" = 1 ]
    kill -s "$s" "$pid"
    wait "$pid"
    RC=$? CMD="spigz ${args[*]} (SIG$s mid-run)"
    rc_is "SIG$s mid-run ($mode): killed by it" $((128 + $(kill -l "$s")))
    err_has "SIG$s mid-run ($mode): says so" "partial output removed"
    unchanged "SIG$s mid-run ($mode): input kept" big
    only "SIG$s mid-run ($mode): no stray files" big
}
sig INT file
sig TERM file
sig HUP o
sig TERM o
sig XCPU file
sig XFSZ o
# A real file size limit (ulimit -f, SIGXFSZ not ignored): the kernel's
# signal is named for what it is, as the shell names it, not "interrupted"
# (gzip itself says nothing and dies by it too)
for args in "-k big" "-d -k big.gz"; do
    [ "$args" = "-d -k big.gz" ] && "$SPIGZ" -k "$W/big" 2> /dev/null && cp "$W/big.gz" "$R/big.gz"
    # shellcheck disable=SC2086 # $args is a list of arguments
    (cd "$W" && ulimit -c 0 && ulimit -f 8192 && exec env --default-signal=XFSZ "$SPIGZ" -f $args) 2> "$T/err"
    RC=$? CMD="spigz -f $args (ulimit -f 8192)"
    rc_is "a file size limit ($args): killed by SIGXFSZ" $((128 + $(kill -l XFSZ)))
    err_has "a file size limit ($args): named" "file size limit exceeded (SIGXFSZ), partial output removed"
    if grep -q interrupted "$T/err"; then fail "a file size limit ($args): called an interruption"; else pass; fi
done
only "a file size limit: no stray files" big big.gz
rm -f "$W/big.gz" "$R/big.gz"
# -c: nothing to remove, and no claim that something was
stall_start $((8 * M)) -c big > /dev/null
kill -s INT "$pid"
wait "$pid"
RC=$? CMD="spigz -c big (SIGINT mid-run)"
rc_is "SIGINT with -c: killed by it" 130
if grep -q "removed" "$T/err"; then fail "SIGINT with -c: claims an output was removed: $(errtext "$T/err")"; else pass; fi

# A loop in a script stops at one Ctrl-C.  The terminal signals the whole
# process group, and bash then stops only when its child died by the signal
# (a child that exits 1 is taken to have handled it, and the loop goes on to
# the next file).  setsid gives the loop its own group to signal.
mk small $((6 * M))
rm -rf "$SD" && mkdir -p "$SD" && mkfifo "$SD/stalled" "$SD/go"
(cd "$W" && exec setsid bash -c '
    for f in big small; do
        if [ "$f" = big ]; then
            LD_PRELOAD=$1 FAULT_STALL_AFTER=$2 FAULT_STALL_DIR=$3 "$0" -c "$f" > /dev/null
        else
            "$0" -k "$f"
        fi
    done' "$SPIGZ" "$FAULT_SO" $((8 * M)) "$SD") 2> "$T/err" &
pid=$!
if timeout "$HANG" sh -c 'read -r _ < "$1"' sh "$SD/stalled"; then
    kill -s INT -- "-$pid"
else
    kill -9 -- "-$pid"
fi
wait "$pid"
RC=$? CMD="bash -c 'for f in big small; do spigz ...; done' (SIGINT to the group)"
rc_is "a shell loop interrupted once: it stops, by SIGINT" 130
check "a shell loop interrupted once: the next file was not compressed" test ! -e "$W/small.gz"
rm -f "$W/small" "$W/small.gz" "$R/small"

# A signal the caller ignores (nohup, background jobs) stays ignored.
mk small $((6 * M))
rm -rf "$SD" && mkdir -p "$SD" && mkfifo "$SD/stalled" "$SD/go"
(cd "$W" && LD_PRELOAD=$FAULT_SO FAULT_STALL_AFTER=$M FAULT_STALL_DIR=$SD \
    exec env --ignore-signal=INT "$SPIGZ" -k small) 2> "$T/err" &
pid=$!
timeout "$HANG" sh -c 'read -r _ < "$1"' sh "$SD/stalled" || fail "spigz -k small never stalled"
kill -s INT "$pid" 2>/dev/null
stall_go
wait "$pid"
RC=$? CMD="spigz -k small (SIGINT ignored by the caller)"
rc_is "an ignored SIGINT stays ignored" 0
gz_is "an ignored SIGINT stays ignored: complete output" "$W/small.gz" "$R/small"
rm -f "$W/small" "$W/small.gz" "$R/small"

# ---- a closed pipe ----
section "closed pipe"
# SIGPIPE as default: killed by it (or exit 1), never a hang (timeout: 124).
(cd "$W" && exec timeout "$HANG" "$SPIGZ" -c big) 2> "$T/err" | head -c 100 > /dev/null
RC=${PIPESTATUS[0]}
check "spigz -c FILE | head -c 100: status $RC (141 = SIGPIPE or 1, not 124 = hang)" \
    one_of "$RC" 141 1
# SIGPIPE ignored: a write error, status 1, a message.
for p in 1 2; do
    (trap '' PIPE; cd "$W" && exec timeout "$HANG" "$SPIGZ" -p "$p" -c big) 2> "$T/err" | head -c 100 > /dev/null
    RC=${PIPESTATUS[0]} CMD="spigz -p $p -c big | head -c 100 (SIGPIPE ignored)"
    rc_is "closed pipe with SIGPIPE ignored (-p $p)" 1
    err_has "closed pipe with SIGPIPE ignored (-p $p)" "Broken pipe"
done
# (random data after the zeros: the output must outgrow any pipe buffer,
# spigz's own 1 MiB one included, or it could all be written before head
# exits, and then there is no error to report)
(trap '' PIPE; { head -c $((100 * M)) /dev/zero; head -c $((8 * M)) /dev/urandom; } |
    timeout "$HANG" "$SPIGZ" -c --zero-run 1024) 2> "$T/err" | head -c 10 > /dev/null
st=("${PIPESTATUS[@]}")
RC=${st[0]} CMD="head -c 100M /dev/zero | spigz -c | head -c 10 (SIGPIPE ignored)"
# The status of the pipeline's subshell is spigz's (timeout's).
rc_is "closed pipe from a pipe input" 1
unchanged "closed pipe: input kept" big
only "closed pipe: no stray files" big

# ---- a file changing size while compressed ----
section "size changes"
# Wait until spigz has created its output (it then holds the input's size)
# and is slowed down in its reads, then change the input.
grow_shrink() {
    local what=$1
    mk chg $((8 * M))
    stall_start $((2 * M)) -k chg || return
    if [ "$what" = grow ]; then
        head -c $((2 * M)) /dev/urandom >> "$W/chg"
    else
        truncate -s $((3 * M)) "$W/chg"
    fi
    stall_go
    wait "$pid"
    RC=$? CMD="spigz -k chg (input ${what}s)"
    rc_is "a file that ${what}s while compressed: a warning" 2
    err_has "a file that ${what}s: the warning" "chg"
    err_has "a file that ${what}s: the warning says so" "changed"
    # The output is a valid gzip of what was read: a prefix of the data.
    local gz n
    gzip -dc < "$W/chg.gz" > "$T/chg.out" 2>/dev/null
    gz=$?
    n=$(stat -c %s "$T/chg.out")
    if [ "$gz" -eq 0 ] && [ "$n" -gt 0 ] && cmp -s "$T/chg.out" <(head -c "$n" "$W/chg") &&
        cmp -s "$T/chg.out" <(head -c "$n" "$R/chg"); then
        pass
    else
        fail "a file that ${what}s: chg.gz (gzip status $gz, $n bytes) is not a prefix of the data"
    fi
    rm -f "$W/chg" "$W/chg.gz" "$R/chg"
}
grow_shrink grow
grow_shrink shrink

# ---- decompression: read errors, a full disk, signals ----
section "decompression errors"
rm -rf "${W:?}"/* "${R:?}"/*
# An image with data and zero runs: spigz's file (the index: positioned
# reads and writes), the same without index and gzip's (sequential).
{ seq 1 400000; head -c $((2 * M)) /dev/urandom; head -c $((4 * M)) /dev/zero
    seq 1 300000; head -c $((3 * M)) /dev/zero; head -c $((2 * M)) /dev/urandom; } > "$T/dimg"
"$SPIGZ" -c -b 64 "$T/dimg" > "$R/di.gz"
"$SPIGZ" -c --no-index "$T/dimg" > "$R/dn.gz"
gzip -1 -c < "$T/dimg" > "$R/dg.gz"
# A read error midway: status 1, the input named, the output removed.
for src in di dn dg; do
    half=$(($(stat -c %s "$R/$src.gz") / 2))
    for mode in file keep o c; do
        cp "$R/$src.gz" "$W/$src.gz"
        case $mode in
            file) args=(-d "$src.gz") out=$src ;;
            keep) args=(-d -k "$src.gz") out=$src ;;
            o) args=(-d -o "$src.out" "$src.gz") out=$src.out ;;
            c) args=(-dc "$src.gz") out= ;;
        esac
        frun LD_PRELOAD="$FAULT_SO" FAULT_READ_EIO_AFTER="$half" -- "${args[@]}"
        rc_is "decompression, read error midway ($src, $mode)" 1
        err_has "decompression, read error midway ($src, $mode): names the file" "spigz: $src.gz:"
        err_has "decompression, read error midway ($src, $mode): the cause" "Input/output error"
        unchanged "decompression, read error midway ($src, $mode): input kept" "$src.gz"
        [ -n "$out" ] && absent "decompression, read error midway ($src, $mode): partial output removed" "$out"
        only "decompression, read error midway ($src, $mode): no stray files" "$src.gz"
    done
    rm -f "$W/$src.gz"
done
# A full disk: the shim makes write() fail, as the sequential path writes.
for src in dn dg; do
    for n in 0 100000 $((3 * M)); do
        for mode in file o; do
            cp "$R/$src.gz" "$W/$src.gz"
            case $mode in
                file) args=(-d "$src.gz") out=$src ;;
                o) args=(-d -o "$src.out" "$src.gz") out=$src.out ;;
            esac
            frun LD_PRELOAD="$FAULT_SO" FAULT_WRITE_ENOSPC_AFTER="$n" -- "${args[@]}"
            rc_is "decompression, disk full after $n bytes ($src, $mode)" 1
            err_has "decompression, disk full ($src, $mode): names the output" "spigz: $out:"
            err_has "decompression, disk full ($src, $mode): the cause" "No space left on device"
            absent "decompression, disk full ($src, $mode): partial output removed" "$out"
            unchanged "decompression, disk full ($src, $mode): input kept" "$src.gz"
            only "decompression, disk full ($src, $mode): no stray files" "$src.gz"
        done
    done
    rm -f "$W/$src.gz"
done
# The indexed path writes with pwrite(), which the shim does not see: a small
# tmpfs gives a real ENOSPC (when this machine lets us mount one), and a file
# size limit (ulimit -f, SIGXFSZ ignored) gives EFBIG anywhere.
MNT=$T/mnt
mkdir -p "$MNT"
if mount -t tmpfs -o size=2m spigz-test "$MNT" 2>/dev/null; then
    trap 'umount "$MNT" 2>/dev/null; rm -rf "$T"' EXIT
    for src in di dn; do
        cp "$R/$src.gz" "$W/$src.gz"
        frun -- -d -o "$MNT/out" "$src.gz"
        rc_is "decompression onto a full tmpfs ($src)" 1
        err_has "decompression onto a full tmpfs ($src): names the output" "$MNT/out:"
        err_has "decompression onto a full tmpfs ($src): the cause" "No space left on device"
        check "decompression onto a full tmpfs ($src): partial output removed" [ ! -e "$MNT/out" ]
        unchanged "decompression onto a full tmpfs ($src): input kept" "$src.gz"
        rm -f "$W/$src.gz"
    done
    umount "$MNT" || fail "umount $MNT failed"
    trap 'rm -rf "$T"' EXIT
else
    echo "NOTE: cannot mount a tmpfs here: the real ENOSPC case is not run" >&2
fi
for src in di dn; do
    cp "$R/$src.gz" "$W/$src.gz"
    CMD="spigz -d $src.gz (ulimit -f 2048)"
    (cd "$W" && trap '' XFSZ && ulimit -f 2048 && exec timeout "$HANG" "$SPIGZ" -d "$src.gz") 2>&1 |
        cat > "$T/err"
    RC=${PIPESTATUS[0]}
    rc_is "decompression past the file size limit ($src)" 1
    err_has "decompression past the file size limit ($src): names the output" "spigz: $src:"
    err_has "decompression past the file size limit ($src): the cause" "File too large"
    absent "decompression past the file size limit ($src): partial output removed" "$src"
    unchanged "decompression past the file size limit ($src): input kept" "$src.gz"
    only "decompression past the file size limit ($src): no stray files" "$src.gz"
    rm -f "$W/$src.gz"
done

# Signals while decompressing to a file, stalled mid-run.
for mode in di-file di-o dn-file; do
    src=${mode%-*}
    cp "$R/$src.gz" "$W/$src.gz"
    case $mode in
        *-file) args=(-d "$src.gz") ;;
        *-o) args=(-d -o "$src.out" "$src.gz") ;;
    esac
    for s in INT TERM; do
        stall_start $(($(stat -c %s "$W/$src.gz") / 2)) "${args[@]}" || continue
        kill -s "$s" "$pid"
        wait "$pid"
        RC=$? CMD="spigz ${args[*]} (SIG$s mid-run)"
        rc_is "decompression, SIG$s mid-run ($mode): killed by it" $((128 + $(kill -l "$s")))
        unchanged "decompression, SIG$s mid-run ($mode): input kept" "$src.gz"
        only "decompression, SIG$s mid-run ($mode): no stray files" "$src.gz"
    done
    rm -f "$W/$src.gz"
done

finish

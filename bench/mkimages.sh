#!/usr/bin/env bash
# mkimages.sh — build the reproducible spigz benchmark images.
#
# usage: bench/mkimages.sh [--force] [--only LIST] [DIR]
#
#   DIR      where the images go (default $BENCH_DIR, else /var/tmp/spigz-bench);
#            refused if it lies inside a git checkout (the images total ~9 GiB).
#   --only   comma-separated subset of: zeros-dense,zeros-sparse,ext4-usr,
#            ext4-usr-dense,data (ext4-usr-dense implies ext4-usr).
#   --force  rebuild even if an image is complete.
#
# Images (apparent size / allocated on disk):
#   zeros-dense.img     4 GiB of written zeros, fully allocated      (4 GiB)
#   zeros-sparse.img    64 GiB, one hole                              (0)
#   ext4-usr.img        4 GiB ext4 holding ~600 MB of files from /usr,
#                       sparse as mke2fs leaves it                    (~0.65 GB)
#   ext4-usr-dense.img  the same bytes, fully allocated               (4 GiB)
#   data.img            256 MiB of /usr file content, no all-zero
#                       4 KiB-aligned block                           (256 MiB)
#
# An image counts as complete when NAME.img exists and .NAME.stamp records the
# current recipe (and, for ext4-usr-dense, the sha256 of the ext4-usr.img it was
# copied from).  Changing a recipe below (bump RECIPE_*) rebuilds that image.
# Images are built as NAME.img.tmp and renamed when verified, so an interrupted
# build never leaves a half image that looks complete.
#
# Reproducibility: the files are chosen from /usr/{bin,lib,share} in a fixed
# pseudo-random order (sorted by sha256 of "salt:path"), so the sample mixes
# binaries, libraries, text, and already-compressed files instead of being
# /usr/bin plus the first half of /usr/lib.  The chosen list is kept in
# usr-manifest.tsv.  mke2fs gets a fixed UUID, hash seed, label, time
# (E2FSPROGS_FAKE_TIME) and C-locale name order; every inode's ctime and owner
# are then reset with debugfs (mke2fs -d copies st_ctime and st_uid from the
# staging dir, and neither can be set from user space).  Two builds on the same
# machine with the same /usr give byte-identical images, as root or not.
# Installing or removing packages under /usr changes the sample: the manifest
# sha256 (in the stamps, printed by bench.sh) tells whether two runs used the
# same files.

# The whole script is one { ... } block: bash parses it completely before
# running it, so editing or updating this file during a long run is harmless.
{
set -euo pipefail
export LC_ALL=C

# Bump a recipe string when that image's construction changes.
RECIPE_ZEROS_DENSE='zeros-dense v1: dd if=/dev/zero bs=16M count=256 conv=fsync'
RECIPE_ZEROS_SPARSE='zeros-sparse v1: truncate -s 64G'
RECIPE_EXT4='ext4-usr v1: 4G ext4, 600e6 B of /usr by sha256(salt:path), debugfs ctime/uid fixup'
RECIPE_EXT4_DENSE='ext4-usr-dense v1: cp --sparse=never ext4-usr.img'
RECIPE_DATA='data v1: 256MiB of /usr by sha256(salt:path), zero 4K blocks dropped'

SALT='spigz-bench-v1'
UUID='5b1c7a2e-3d4f-4a6b-8c9d-0e1f2a3b4c5d'
LABEL='spigzbench'
FAKE_TIME=1700000000            # 2023-11-14 22:13:20 UTC
EXT4_SIZE=$((4 << 30))
EXT4_FILL=600000000             # bytes of file content in the ext4 image
MAX_FILE=$((32 << 20))          # skip files above 32 MiB (one libLLVM would dominate)
DATA_SIZE=$((256 << 20))
ZD_SIZE=$((4 << 30))
ZS_SIZE=$((64 << 30))

ALL_IMAGES=(zeros-dense zeros-sparse ext4-usr ext4-usr-dense data)

die() { printf 'mkimages: %s\n' "$*" >&2; exit 1; }
say() { printf 'mkimages: %s\n' "$*" >&2; }

usage() {
  sed -n '3,11s/^# \{0,1\}//p' "$0"
  exit "${1:-0}"
}

force=0
only=''
dir=''
while (($#)); do
  case $1 in
    --force) force=1 ;;
    --only) [[ $# -ge 2 ]] || die "--only needs a list"; only=$2; shift ;;
    --only=*) only=${1#--only=} ;;
    -h|--help) usage 0 ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) [[ -z $dir ]] || die "only one DIR"; dir=$1 ;;
  esac
  shift
done
dir=${dir:-${BENCH_DIR:-/var/tmp/spigz-bench}}

# ---- which images ---------------------------------------------------------
declare -A want=()
if [[ -z $only ]]; then
  for i in "${ALL_IMAGES[@]}"; do want[$i]=1; done
else
  IFS=, read -r -a req <<<"$only"
  for i in "${req[@]}"; do
    i=${i%.img}
    case " ${ALL_IMAGES[*]} " in *" $i "*) want[$i]=1 ;; *) die "unknown image '$i' (known: ${ALL_IMAGES[*]})" ;; esac
  done
fi
[[ -n ${want[ext4-usr-dense]:-} ]] && want[ext4-usr]=1

# ---- tools ----------------------------------------------------------------
# mke2fs and debugfs live in /usr/sbin, which a normal user's PATH may lack.
findtool() {  # findtool NAME PACKAGE -> path on stdout
  local p
  p=$(PATH=$PATH:/usr/sbin:/sbin command -v "$1" 2>/dev/null) || die "$1 not found: install the Debian package $2"
  printf '%s\n' "$p"
}
for t in dd truncate stat cp cmp sha256sum df mv rm; do findtool "$t" coreutils >/dev/null; done
findtool flock util-linux >/dev/null
PYTHON=$(findtool python3 python3)
if [[ -n ${want[ext4-usr]:-} ]]; then
  MKE2FS=$(findtool mke2fs e2fsprogs)
  DEBUGFS=$(findtool debugfs e2fsprogs)
fi

# ---- directory ------------------------------------------------------------
# Refuse a directory inside a git checkout (or this source tree) before
# creating anything there.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
dir=$(realpath -m -- "$dir")
anc=$dir
while [[ ! -d $anc ]]; do anc=$(dirname -- "$anc"); done
if top=$(git -C "$anc" rev-parse --show-toplevel 2>/dev/null); then
  die "$dir is inside the git checkout $top: choose a directory outside it (BENCH_DIR=...)"
fi
case $dir/ in "$(cd "$here/.." && pwd -P)"/*) die "$dir is inside the source tree" ;; esac
mkdir -p "$dir" || die "cannot create $dir"
dir=$(cd "$dir" && pwd -P)

exec 9>"$dir/.lock"
flock -n 9 || { say "another mkimages is running in $dir; waiting"; flock 9; }

# ---- helpers --------------------------------------------------------------
stamp_ok() {  # stamp_ok NAME EXPECTED-STAMP
  [[ $force = 0 && -f $dir/$1.img && -f $dir/.$1.stamp ]] || return 1
  [[ $(<"$dir/.$1.stamp") == "$2" ]]
}
alloc_bytes() { local b B; read -r b B < <(stat -c '%b %B' "$1"); echo $((b * B)); }
size_of() { stat -c '%s' "$1"; }
need_space() {  # need_space BYTES WHAT
  local avail
  avail=$(df -P -B1 "$dir" | awk 'NR==2 {print $4}')
  ((avail > $1 + (1 << 30))) || die "not enough free space in $dir for $2: need $(($1 >> 20)) MiB + 1 GiB slack, have $((avail >> 20)) MiB"
}
finish() {  # finish NAME STAMP  (tmp file verified by the caller)
  mv -f "$dir/$1.img.tmp" "$dir/$1.img"
  printf '%s\n' "$2" >"$dir/.$1.stamp.tmp"
  mv -f "$dir/.$1.stamp.tmp" "$dir/.$1.stamp"
}
# shellcheck disable=SC2317  # called from the EXIT trap
cleanup() {
  rm -rf "$dir/.staging"
  rm -f "$dir"/*.img.tmp "$dir"/.*.stamp.tmp "$dir/.manifest.tmp" "$dir/.debugfs.cmds"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

t_all=$SECONDS

# ---- zeros-dense ----------------------------------------------------------
if [[ -n ${want[zeros-dense]:-} ]]; then
  st="$RECIPE_ZEROS_DENSE"
  if stamp_ok zeros-dense "$st"; then
    say "zeros-dense.img complete"
  else
    need_space "$ZD_SIZE" zeros-dense.img
    say "building zeros-dense.img (4 GiB of written zeros)"
    t0=$SECONDS
    rm -f "$dir/zeros-dense.img" "$dir/.zeros-dense.stamp"
    dd if=/dev/zero of="$dir/zeros-dense.img.tmp" bs=16M count=$((ZD_SIZE >> 24)) conv=fsync status=none
    [[ $(size_of "$dir/zeros-dense.img.tmp") == "$ZD_SIZE" ]] || die "zeros-dense: wrong size"
    a=$(alloc_bytes "$dir/zeros-dense.img.tmp")
    ((a >= ZD_SIZE)) || die "zeros-dense: only $a of $ZD_SIZE bytes allocated (does this filesystem dedupe or compress zeros?)"
    finish zeros-dense "$st"
    say "zeros-dense.img done in $((SECONDS - t0)) s"
  fi
fi

# ---- zeros-sparse ---------------------------------------------------------
if [[ -n ${want[zeros-sparse]:-} ]]; then
  st="$RECIPE_ZEROS_SPARSE"
  if stamp_ok zeros-sparse "$st"; then
    say "zeros-sparse.img complete"
  else
    say "building zeros-sparse.img (64 GiB hole)"
    rm -f "$dir/zeros-sparse.img" "$dir/.zeros-sparse.stamp" "$dir/zeros-sparse.img.tmp"
    truncate -s "$ZS_SIZE" "$dir/zeros-sparse.img.tmp"
    [[ $(size_of "$dir/zeros-sparse.img.tmp") == "$ZS_SIZE" ]] || die "zeros-sparse: wrong size"
    [[ $(alloc_bytes "$dir/zeros-sparse.img.tmp") == 0 ]] || die "zeros-sparse: file has allocated blocks (no sparse file support here?)"
    finish zeros-sparse "$st"
  fi
fi

# ---- the /usr sample (manifest) ---------------------------------------------
# Lines "SIZE<TAB>PATH" in selection order.  Only regular files readable by
# everybody, in directories everybody may enter, with names debugfs can parse
# unquoted; so root and a normal user choose the same files.
manifest_sha=''
make_manifest() {
  [[ -n $manifest_sha ]] && return 0
  "$PYTHON" - "$SALT" "$MAX_FILE" >"$dir/.manifest.tmp" <<'PY'
import hashlib, os, re, stat, sys
salt, max_file = sys.argv[1], int(sys.argv[2])
safe = re.compile(r'^[A-Za-z0-9._+,:@=%~/-]+$')
files = []
for root in ('/usr/bin', '/usr/lib', '/usr/share'):
    for d, dirs, names in os.walk(root):
        keep = []
        for n in sorted(dirs):
            try:
                m = os.lstat(os.path.join(d, n)).st_mode
            except OSError:
                continue
            if stat.S_ISDIR(m) and (m & 0o005) == 0o005 and safe.match(n):
                keep.append(n)
        dirs[:] = keep
        for n in names:
            p = os.path.join(d, n)
            if not safe.match(p):
                continue
            try:
                s = os.lstat(p)
            except OSError:
                continue
            if stat.S_ISREG(s.st_mode) and s.st_mode & 0o004 and 0 < s.st_size <= max_file:
                files.append((hashlib.sha256(f'{salt}:{p}'.encode()).hexdigest(), s.st_size, p))
files.sort()
for _, size, p in files:
    print(f'{size}\t{p}')
PY
  mv -f "$dir/.manifest.tmp" "$dir/usr-all.tsv"
  manifest_sha=$(sha256sum <"$dir/usr-all.tsv" | cut -c1-16)
}

# ---- ext4-usr ---------------------------------------------------------------
ext4_stamp() { printf '%s; usr-list %s' "$RECIPE_EXT4" "$1"; }
if [[ -n ${want[ext4-usr]:-} ]]; then
  cur=''
  [[ -f $dir/.ext4-usr.stamp ]] && cur=$(<"$dir/.ext4-usr.stamp")
  if [[ $force = 0 && -f $dir/ext4-usr.img && $cur == "$RECIPE_EXT4; usr-list "* ]]; then
    say "ext4-usr.img complete"
  else
    need_space $((EXT4_FILL * 2 + (256 << 20))) ext4-usr.img
    say "building ext4-usr.img (4 GiB ext4, ~600 MB of /usr files)"
    t0=$SECONDS
    rm -f "$dir/ext4-usr.img" "$dir/.ext4-usr.stamp" "$dir/ext4-usr-dense.img" "$dir/.ext4-usr-dense.stamp"
    make_manifest
    stg=$dir/.staging
    rm -rf "$stg"
    mkdir -p "$stg"
    # Copy the first files of the sample up to EXT4_FILL bytes; then give every
    # file and directory a fixed mode and fixed times (mke2fs -d copies them).
    "$PYTHON" - "$dir/usr-all.tsv" "$stg" "$EXT4_FILL" "$FAKE_TIME" "$dir/usr-manifest.tsv" <<'PY'
import os, shutil, sys
lst, stg, fill, t, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
total, chosen = 0, []
with open(lst) as f:
    for line in f:
        size, p = line.rstrip('\n').split('\t', 1)
        if total >= fill:
            break
        dst = stg + p
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        try:
            shutil.copyfile(p, dst)
        except OSError as e:
            sys.exit(f'mkimages: cannot copy {p}: {e}')
        st = os.stat(p)
        os.chmod(dst, 0o755 if st.st_mode & 0o111 else 0o644)
        total += os.path.getsize(dst)
        chosen.append(f'{os.path.getsize(dst)}\t{p}')
with open(out, 'w') as f:
    f.write('\n'.join(chosen) + '\n')
paths = []
for d, dirs, names in os.walk(stg, topdown=False):
    for n in names:
        paths.append(os.path.join(d, n))
    os.chmod(d, 0o755)
    paths.append(d)
for p in paths:
    os.utime(p, (t, t), follow_symlinks=False)
# debugfs commands: owner root, ctime fixed, for every inode made from staging
with open(os.path.join(stg, '..', '.debugfs.cmds'), 'w') as f:
    for p in sorted(paths):
        rel = p[len(stg):] or '/'
        for field, val in (('ctime', f'@{t}'), ('uid', '0'), ('gid', '0')):
            f.write(f'sif {rel} {field} {val}\n')
print(f'mkimages: staged {len(chosen)} files, {total} bytes', file=sys.stderr)
PY
    truncate -s "$EXT4_SIZE" "$dir/ext4-usr.img.tmp"
    E2FSPROGS_FAKE_TIME=$FAKE_TIME "$MKE2FS" -q -F -t ext4 -b 4096 -I 256 -i 16384 \
      -L "$LABEL" -U "$UUID" -E "hash_seed=$UUID,root_owner=0:0" \
      -d "$stg" "$dir/ext4-usr.img.tmp" >&2 || die "mke2fs failed"
    E2FSPROGS_FAKE_TIME=$FAKE_TIME "$DEBUGFS" -w -f "$dir/.debugfs.cmds" "$dir/ext4-usr.img.tmp" \
      >"$dir/.debugfs.log" 2>&1 || die "debugfs fixup failed (see $dir/.debugfs.log)"
    # debugfs reports errors on stdout/stderr without failing: look for them.
    if grep -v -e '^debugfs' "$dir/.debugfs.log" | grep -q .; then
      die "debugfs fixup reported errors (see $dir/.debugfs.log)"
    fi
    rm -f "$dir/.debugfs.cmds" "$dir/.debugfs.log"
    rm -rf "$stg"
    [[ $(size_of "$dir/ext4-usr.img.tmp") == "$EXT4_SIZE" ]] || die "ext4-usr: wrong size"
    fsck=$(PATH=$PATH:/usr/sbin:/sbin command -v e2fsck || true)
    if [[ -n $fsck ]]; then
      "$fsck" -fn "$dir/ext4-usr.img.tmp" >"$dir/.fsck.log" 2>&1 || die "e2fsck finds errors in ext4-usr.img (see $dir/.fsck.log)"
      rm -f "$dir/.fsck.log"
    fi
    sha=$(sha256sum <"$dir/ext4-usr.img.tmp" | cut -c1-64)
    finish ext4-usr "$(ext4_stamp "$manifest_sha"); sha256 $sha"
    say "ext4-usr.img done in $((SECONDS - t0)) s ($(($(alloc_bytes "$dir/ext4-usr.img") >> 20)) MiB allocated, sha256 ${sha:0:16})"
  fi
fi

# ---- ext4-usr-dense -------------------------------------------------------
if [[ -n ${want[ext4-usr-dense]:-} ]]; then
  src_sha=$(sed -n 's/.*; sha256 \([0-9a-f]*\)$/\1/p' "$dir/.ext4-usr.stamp")
  [[ -n $src_sha ]] || die "ext4-usr stamp has no sha256: rerun with --force"
  st="$RECIPE_EXT4_DENSE; from sha256 $src_sha"
  if stamp_ok ext4-usr-dense "$st"; then
    say "ext4-usr-dense.img complete"
  else
    need_space "$EXT4_SIZE" ext4-usr-dense.img
    say "building ext4-usr-dense.img (ext4-usr.img fully allocated)"
    t0=$SECONDS
    rm -f "$dir/ext4-usr-dense.img" "$dir/.ext4-usr-dense.stamp"
    cp --sparse=never "$dir/ext4-usr.img" "$dir/ext4-usr-dense.img.tmp"
    sync -d "$dir/ext4-usr-dense.img.tmp" 2>/dev/null || sync
    a=$(alloc_bytes "$dir/ext4-usr-dense.img.tmp")
    ((a >= EXT4_SIZE)) || die "ext4-usr-dense: only $a of $EXT4_SIZE bytes allocated"
    cmp "$dir/ext4-usr.img" "$dir/ext4-usr-dense.img.tmp" || die "ext4-usr-dense differs from ext4-usr"
    finish ext4-usr-dense "$st"
    say "ext4-usr-dense.img done in $((SECONDS - t0)) s"
  fi
fi

# ---- data -------------------------------------------------------------------
if [[ -n ${want[data]:-} ]]; then
  cur=''
  [[ -f $dir/.data.stamp ]] && cur=$(<"$dir/.data.stamp")
  if [[ $force = 0 && -f $dir/data.img && $cur == "$RECIPE_DATA; usr-list "* ]]; then
    say "data.img complete"
  else
    need_space "$DATA_SIZE" data.img
    say "building data.img (256 MiB of /usr content, no all-zero 4 KiB block)"
    t0=$SECONDS
    rm -f "$dir/data.img" "$dir/.data.stamp"
    make_manifest
    "$PYTHON" - "$dir/usr-all.tsv" "$dir/data.img.tmp" "$DATA_SIZE" <<'PY'
import sys
lst, out, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
B = 4096
zero = bytes(B)
pending, written, dropped = b'', 0, 0
with open(lst) as f, open(out, 'wb') as o:
    for line in f:
        p = line.rstrip('\n').split('\t', 1)[1]
        with open(p, 'rb') as src:
            while written < want:
                buf = src.read(1 << 20)
                if not buf:
                    break
                buf = pending + buf
                n = len(buf) // B * B
                pending = buf[n:]
                for i in range(0, n, B):
                    blk = buf[i:i + B]
                    if blk == zero:
                        dropped += 1
                        continue
                    o.write(blk)
                    written += B
                    if written == want:
                        break
        if written >= want:
            break
if written != want:
    sys.exit(f'mkimages: /usr sample too small for data.img ({written} bytes)')
print(f'mkimages: data.img: dropped {dropped} all-zero 4 KiB blocks', file=sys.stderr)
PY
    [[ $(size_of "$dir/data.img.tmp") == "$DATA_SIZE" ]] || die "data: wrong size"
    "$PYTHON" - "$dir/data.img.tmp" <<'PY' || die "data.img has an all-zero 4 KiB block"
import sys
zero = bytes(4096)
with open(sys.argv[1], 'rb') as f:
    while True:
        buf = f.read(1 << 22)
        if not buf:
            break
        for i in range(0, len(buf), 4096):
            if buf[i:i + 4096] == zero:
                sys.exit(1)
PY
    sha=$(sha256sum <"$dir/data.img.tmp" | cut -c1-64)
    finish data "$RECIPE_DATA; usr-list $manifest_sha; sha256 $sha"
    say "data.img done in $((SECONDS - t0)) s (sha256 ${sha:0:16})"
  fi
fi

say "images in $dir ($(du -sh "$dir" | cut -f1) allocated), $((SECONDS - t_all)) s"
exit
}

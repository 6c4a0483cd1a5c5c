#!/bin/sh
# A program of one's own against an installed rig, built with the commands
# docs/finding-devices.md gives ("A program against an installed rig"):
#
#   cc app.c $(pkg-config --cflags --libs rig-core) \
#      -Wl,-rpath,$(pkg-config --variable=libdir rig-core)
#
# from a prefix install, the same tree moved elsewhere, and a DESTDIR
# install, each with the libdir Debian uses (lib/x86_64-linux-gnu style,
# multiarch): the program builds, runs with no environment, and opens a
# memory device through the installed plugin; pkg-config's answers, with
# and without --define-prefix, name the tree's own folders, never
# .../lib/lib/... nor -I/usr/lib/include.
# usage: run.sh SOURCE_ROOT SCRATCH_DIR
set -eu
src=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
multiarch=$(cc -print-multiarch 2>/dev/null || true)
libdir=lib${multiarch:+/$multiarch}
prefix="$work/prefix"
# Libraries and drivers only: what a user's program needs.
meson setup "$work/build" "$src" --prefix="$prefix" --libdir="$libdir" -Dtests=disabled \
  -Dtools=disabled -Dvulkan=disabled -Dcuda=disabled -Dremote=disabled -Damdgpu=disabled \
  >"$work/setup.log" 2>&1 || { cat "$work/setup.log"; exit 1; }
meson compile -C "$work/build" >"$work/compile.log" 2>&1 || { cat "$work/compile.log"; exit 1; }

cat >"$work/app.c" <<'EOF'
#include <rig/rig.h>
#include <stdio.h>

int main(void) {
  rig_device *d;
  if (rig_device_open_memory("installed", &d) != RIG_OK) {
    fprintf(stderr, "app: %s\n", rig_error_last()->message);
    return 1;
  }
  printf("app: %s opens, rig %s\n", rig_device_name(d), rig_version());
  rig_status st = rig_device_close(d);
  rig_device_release(d);
  return st == RIG_OK ? 0 : 1;
}
EOF

# check WHAT ROOT: builds app against the tree at ROOT (its own prefix) as
# the docs say and runs it with no environment.
check() {
  what=$1
  root=$2
  pc="$root/$libdir/pkgconfig"
  for define in "" --define-prefix; do
    flags=$(PKG_CONFIG_PATH="$pc" pkg-config $define --cflags --libs rig-core)
    case "$flags" in
      *"/lib/lib/"* | *"-I/usr/lib/include"* | *"$work/build"*)
        echo "install: $what: pkg-config $define gives '$flags'"; exit 1 ;;
    esac
    for want in "$root/$libdir" "$root/include"; do
      got=$(cd "$want" && pwd -P)
      ok=no
      for w in $flags; do
        d=${w#-L}; d=${d#-I}
        [ "$d" != "$w" ] && [ -d "$d" ] && [ "$(cd "$d" && pwd -P)" = "$got" ] && ok=yes
      done
      [ $ok = yes ] || { echo "install: $what: pkg-config $define: no flag for $want: $flags"; exit 1; }
    done
  done
  # shellcheck disable=SC2046
  cc -o "$work/app-$what" "$work/app.c" $(PKG_CONFIG_PATH="$pc" pkg-config --cflags --libs rig-core) \
    -Wl,-rpath,"$(PKG_CONFIG_PATH="$pc" pkg-config --variable=libdir rig-core)"
  out=$(env -i PATH=/usr/bin:/bin "$work/app-$what" 2>&1) ||
    { echo "install: $what: the program failed: $out"; exit 1; }
  echo "$what: $out"
  case "$out" in *"memory:installed opens"*) ;; *) exit 1 ;; esac
}

meson install -C "$work/build" --no-rebuild >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; exit 1; }
check prefix "$prefix"
mv "$prefix" "$work/moved"
check moved "$work/moved"
DESTDIR="$work/dest" meson install -C "$work/build" --no-rebuild >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; exit 1; }
check destdir "$work/dest$prefix"

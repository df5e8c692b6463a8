#!/bin/sh
# install.sh BUILD_DIR SOURCE_DIR CC SANITIZED(0|1) - the library as another project sees
# it: installs the build with DESTDIR (files land under it, the pkg-config
# file names the real prefix) and into a temporary prefix, checks that
# nothing installed points back into the source or build tree, then builds
# tests/install/consumer.c against the installed copy with pkg-config
# (shared and static) and with a CMake project using find_package (shared
# and static), runs each with an empty disk cache and checks its output:
# the cpu and lazy results, a program compiled by cc at run time (and
# cached), and OpenBLAS's pthreads build loaded.
set -u
build="$1"; src="$2"; cc="$3"; sanitized="$4"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }
# step NAME LOG COMMAND...: runs a command, its output into LOG (shown on failure)
step() {
    name="$1"; log="$2"; shift 2
    if "$@" >"$log" 2>&1; then ok "$name"; else bad "$name:"; cat "$log"; return 1; fi
}

# -- DESTDIR: everything lands below it, the .pc file names the prefix itself
step "install with DESTDIR" "$tmp/destdir.log" env DESTDIR="$tmp/stage" \
    cmake --install "$build" --prefix /usr/local || exit 1
pc=$(find "$tmp/stage/usr/local" -name lazytensor.pc)
for f in "$tmp/stage/usr/local/include/lazytensor.h" "$pc" \
         "$(dirname "$pc")/../cmake/lazytensor/lazytensorConfig.cmake"; do
    [ -f "$f" ] && ok "staged ${f#"$tmp"/stage}" || bad "missing in the DESTDIR tree: $f"
done
grep -qx "prefix=/usr/local" "$pc" && ok "staged lazytensor.pc has prefix=/usr/local" ||
    { bad "staged lazytensor.pc:"; cat "$pc"; }

# -- a real prefix
prefix="$tmp/prefix"
step "install to $prefix" "$tmp/install.log" cmake --install "$build" --prefix "$prefix" || exit 1
libdir=$(dirname "$(find "$prefix" -name 'liblazytensor.so')")
# (the build tree may be deleted once installed). Debug information names
# the sources it was built from, which is what it is for: it is stripped
# from a copy of each binary first. Sanitized binaries also keep source
# names for their reports: of those only the dynamic section (RPATH,
# needed libraries) is searched.
find "$prefix" -type f | while read -r f; do
    copy="$tmp/scan/${f#"$prefix"/}"
    mkdir -p "$(dirname "$copy")"
    if grep -qI '' "$f"; then cp "$f" "$copy"
    elif [ "$sanitized" = 1 ]; then readelf -d "$f" >"$copy" 2>&1
    else strip --strip-debug -o "$copy" "$f"
    fi
done
for tree in "$src" "$build"; do
    if grep -rlF "$tree" "$tmp/scan" >"$tmp/refs"; then
        bad "installed files name $tree (debug information aside):"; cat "$tmp/refs"
    else
        ok "no installed file names $tree (debug information aside)"
    fi
done

# check NAME PROGRAM: runs PROGRAM with a fresh disk cache and checks what it prints
check() {
    name="$1"; prog="$2"; cache="$tmp/cache-$name"
    env LT_CACHE_DIR="$cache" "$prog" >"$tmp/out" 2>&1
    code=$?
    if [ "$code" -eq 0 ] && grep -qx "cpu: 0 38" "$tmp/out" && grep -qx "lazy: 0 38" "$tmp/out" &&
       grep -qx "lazy backend cpu, programs compiled by cc: [1-9][0-9]*" "$tmp/out" &&
       grep -qx "lazytensor [0-9.]*" "$tmp/out"; then
        ok "$name runs (exit 0, cpu and lazy give 0 38, compiled by cc)"
    else
        bad "$name: exit $code, output:"; cat "$tmp/out"
    fi
    [ -n "$(find "$cache" -name '*.so' 2>/dev/null)" ] && ok "$name left a compiled program in its cache" ||
        bad "$name: no compiled program in $cache"
    ldd "$prog" | grep -q "libopenblas.so.* => .*openblas-pthread/" && ok "$name loads the pthreads OpenBLAS" ||
        { bad "$name does not load OpenBLAS's pthreads build:"; ldd "$prog"; }
}

# -- pkg-config, shared and static (-l:liblazytensor.a: the .so sits beside it)
export PKG_CONFIG_PATH="$libdir/pkgconfig"
cflags=$(pkg-config --cflags lazytensor) && libs=$(pkg-config --libs lazytensor) &&
    static_libs=$(pkg-config --static --libs lazytensor) || bad "pkg-config lazytensor failed"
warn="-std=c11 -Wall -Wextra -Werror"
# shellcheck disable=SC2086 # the flags are words
step "pkg-config build, shared" "$tmp/pc.log" \
    "$cc" $warn $cflags "$src/tests/install/consumer.c" -o "$tmp/pc_shared" $libs -Wl,-rpath,"$libdir" &&
    check pkgconfig_shared "$tmp/pc_shared"
# shellcheck disable=SC2086
step "pkg-config build, static" "$tmp/pc_static.log" \
    "$cc" $warn $cflags "$src/tests/install/consumer.c" -o "$tmp/pc_static" \
    $(echo "$static_libs" | sed 's/-llazytensor/-l:liblazytensor.a/') &&
    check pkgconfig_static "$tmp/pc_static"
ldd "$tmp/pc_static" | grep -q liblazytensor && bad "the static build loads liblazytensor.so"

# -- CMake: find_package(lazytensor), both imported targets
step "cmake configure with find_package" "$tmp/cmake.log" cmake -S "$src/tests/install" -B "$tmp/cmake" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" &&
    step "cmake build" "$tmp/cmake_build.log" cmake --build "$tmp/cmake" &&
    check cmake_shared "$tmp/cmake/consumer_shared" &&
    check cmake_static "$tmp/cmake/consumer_static"
ldd "$tmp/cmake/consumer_static" 2>/dev/null | grep -q liblazytensor && bad "consumer_static loads liblazytensor.so"
exit $fail

#!/bin/sh
# dlopen_tls.sh LIBRARY - the shared library can be loaded at run time
# (Python's extension, ctypes, plugins): it must not ask for static TLS
# (the initial-exec model), whose small reserve for dlopen'ed libraries
# other libraries (OpenMP runtimes) may already have used. Checks the
# dynamic section's flags, then loads the library with dlopen through
# Python's ctypes after libgomp, when both are present.
set -u
lib="$1"
if ! command -v readelf >/dev/null 2>&1; then
    echo "readelf missing: skipped"; exit 0
fi
flags=$(readelf -d "$lib" | grep '(FLAGS)' || true)
case "$flags" in
    *STATIC_TLS*) echo "FAIL: $lib needs static TLS: $flags"; exit 1;;
esac
echo "ok: no STATIC_TLS flag in $lib"
if [ -x /usr/bin/python3 ]; then
    /usr/bin/python3 - "$lib" <<'PY' || exit 1
import ctypes, ctypes.util, sys
gomp = ctypes.util.find_library("gomp")
if gomp:
    ctypes.CDLL(gomp)
lib = ctypes.CDLL(sys.argv[1])
print("ok: loaded with dlopen%s" % (" after " + gomp if gomp else ""))
PY
fi

#!/bin/sh
# Instructions per op recorded on the lazy device (bench/tracing's tiny ops,
# as a chain): a count of executed instructions does not depend on what else
# the machine runs, unlike time. Each op is recorded N and 2N times by
# `tracing --count`; the difference of the two runs' counts over N ops
# leaves out start-up and teardown. Counted by Valgrind (cachegrind without
# cache simulation, user instructions only, Valgrind's own malloc), or by
# `perf stat -e instructions:u` with PERF=1 where the CPU counters are
# exposed; the two differ a little (malloc's instructions, for one).
#
# usage: bench/tracing_instructions.sh [build folder, default build] [N, default 20000]
# Valgrind cannot run a -march=native build on a CPU with AVX-512: count a
# build configured with -DLT_NATIVE=OFF there (the script says so).
set -eu
BUILD=${1:-build}
N=${2:-20000}
BIN="$BUILD/bench/tracing"
[ -x "$BIN" ] || { echo "no $BIN: build first (make build)" >&2; exit 2; }
export LT_GRAPH_WARN_NODES=0

count() { # op, applications -> instructions of the whole run
    if [ "${PERF:-0}" = 1 ]; then
        perf stat -x, -e instructions:u "$BIN" --count "$1" "$2" 2>&1 >/dev/null | awk -F, '/instructions/ {print $1}'
    else
        out=$(valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$BIN" --count "$1" "$2" \
            2>&1 >/dev/null) || true
        case $out in
        *"unhandled instruction"* | *SIGILL*)
            # Valgrind (3.19) cannot decode AVX-512, which -march=native
            # emits on CPUs that have it
            echo "  valgrind cannot run $BIN (instructions it does not know; a -march=native build on" \
                "an AVX-512 CPU): count a build configured with -DLT_NATIVE=OFF, or use PERF=1" >&2
            return ;;
        esac
        printf '%s\n' "$out" | awk '/I *refs:/ {gsub(",", "", $NF); print $NF}'
    fi
}

echo "instructions per op recorded on the lazy device (chain, f32[4]; N=$N and 2N)"
for spec in add:1 mul_scalar:1 relu:1 affine:2; do
    op=${spec%:*}
    calls=${spec#*:}
    one=$(count "$op" "$N")
    two=$(count "$op" $((2 * N)))
    [ -n "$one" ] && [ -n "$two" ] || { echo "  $op: no count (is valgrind or perf there?)"; continue; }
    awk -v op="$op" -v a="$one" -v b="$two" -v n="$N" -v c="$calls" \
        'BEGIN { printf "  %-12s %8.0f\n", op, (b - a) / (n * c) }'
done

#!/bin/sh
# bench/first_step.sh - first-step latency of training steps on the lazy
# device: cold (empty disk cache), warm disk cache (a new process, programs
# on disk) and steady, per backend, from bench/peers_step.
#
# usage: bench/first_step.sh [BUILD_DIR [STEPS [WORKLOADS]]]
#        (defaults: build, 20, "mlp_sgd gpt")
#
# Each backend gets its own fresh LT_CACHE_DIR; peers_step runs twice in it
# (cold, then warm). Columns, in ms:
#   cold1, cold2   the first and second step of the cold process (the first
#                  step also computes the parameters' initial values; the
#                  second is the first with the steady graph)
#   warm1, warm2   the same in the second process (programs on disk)
#   steady         median of STEPS steps of the warm process, after its
#                  background compiles are done (--wait-compiles)
#   warm1-steady   what a warm start costs over a steady step
# "interp" compiles nothing: its cold1 - steady is the first step's cost
# with no compiler at all (first touch of memory, the initializers).
# Machines are noisy: compare rows of one run, and run it twice.
set -eu
build=${1:-build}
steps=${2:-20}
workloads=${3:-"mlp_sgd gpt"}
bin="$build/bench/peers_step"
[ -x "$bin" ] || { echo "first_step.sh: $bin not found (build the benchmarks first)" >&2; exit 2; }

field() { # field NAME JSON
    printf '%s\n' "$2" | sed -n "s/.*\"$1\": \([-0-9.]*\).*/\1/p"
}

printf '%-9s %-7s %9s %9s %9s %9s %9s %13s\n' workload backend cold1 cold2 warm1 warm2 steady warm1-steady
for w in $workloads; do
    for be in interp cpu tiered; do
        dir=$(mktemp -d)
        cold=$(LT_CACHE_DIR="$dir" "$bin" --device lazy --backend "$be" --workload "$w" --steps "$steps" --wait-compiles)
        warm=$(LT_CACHE_DIR="$dir" "$bin" --device lazy --backend "$be" --workload "$w" --steps "$steps" --wait-compiles)
        rm -rf "$dir"
        steady=$(field median_ms "$warm")
        warm1=$(field cold_ms "$warm")
        printf '%-9s %-7s %9.1f %9.1f %9.1f %9.1f %9.1f %13.1f\n' "$w" "$be" "$(field cold_ms "$cold")" \
            "$(field second_ms "$cold")" "$warm1" "$(field second_ms "$warm")" "$steady" \
            "$(awk "BEGIN { print $warm1 - $steady }")"
    done
done

#!/bin/sh
# Runs each fuzzer for a while on its corpus (`make fuzz` calls this).
#
#   fuzz/run.sh <dir of fuzzer binaries> <seconds per fuzzer> <work dir> <fuzzer>...
#
# A fuzzer starts from fuzz/corpus/<fuzzer> (kept in the repository, never
# written) and from what earlier runs found in <work dir>/<fuzzer>/corpus,
# where it adds its new inputs. A finding stops that fuzzer; its input is
# saved under <work dir>/<fuzzer>/artifacts/ and printed with the command
# that reproduces it. Every fuzzer runs; the exit status is 1 if any found
# something. FUZZ_FLAGS adds libFuzzer options (e.g. "-fork=2
# -ignore_crashes=1" to keep going past findings).
set -u
bin_dir=$1
seconds=$2
work=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)

# The library is built with recoverable UBSan so that a report listed in
# ubsan.supp can be silenced while it is fixed; anything else stops the run.
UBSAN_OPTIONS="suppressions=$here/ubsan.supp:halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export UBSAN_OPTIONS
# Compiled programs go to a cache private to this work dir.
mkdir -p "$work/lt-cache" && chmod 700 "$work/lt-cache"
LT_CACHE_DIR=${LT_CACHE_DIR:-$(cd "$work/lt-cache" && pwd)}
export LT_CACHE_DIR

# Inputs larger than these gain nothing (a program stops after 48 steps).
max_len() {
    case $1 in
    fuzz_program) echo 512 ;;
    fuzz_cache) echo 32768 ;;
    *) echo 4096 ;;
    esac
}

# The fuzz_program settings of this run, to repeat when reproducing.
settings=""
for v in FUZZ_PROGRAM_SKIP FUZZ_PROGRAM_BACKENDS FUZZ_PROGRAM_CPU_EVERY; do
    eval "val=\${$v:-}"
    # shellcheck disable=SC2154 # val is set by the eval
    [ -n "$val" ] && settings="$settings$v=$val "
done

failed=""
summary=""
for name in "$@"; do
    dir="$work/$name"
    mkdir -p "$dir/corpus" "$dir/artifacts"
    dict=""
    [ -f "$here/dict/$name.dict" ] && dict="-dict=$here/dict/$name.dict"
    echo "==== $name: $seconds s"
    log="$dir/last.log"
    touch "$dir/.started"
    # shellcheck disable=SC2086 # FUZZ_FLAGS and dict are word lists
    "$bin_dir/$name" -max_total_time="$seconds" -timeout=300 -max_len="$(max_len "$name")" \
        -print_final_stats=1 -artifact_prefix="$dir/artifacts/" $dict ${FUZZ_FLAGS:-} \
        "$dir/corpus" "$here/corpus/$name" >"$log" 2>&1
    status=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    added=$(sed -n 's/^stat::new_units_added: *//p' "$log" | tail -1)
    if [ -z "$execs" ]; then # -fork mode: the last status line "#N: cov: ... exec/s R ..."
        last=$(grep -E "^#[0-9]+: cov:" "$log" | tail -1)
        execs=$(echo "$last" | sed -n 's/^#\([0-9]*\):.*/\1/p')
        rate=$(echo "$last" | sed -n 's/.*exec\/s \([0-9]*\).*/\1/p')
    fi
    line="$name: ${execs:-?} execs, ${rate:-?} execs/s, ${added:-?} new inputs"
    echo "     $line"
    summary="$summary
  $line"
    # Inputs this run saved (crash-, leak-, timeout-, oom-; in -fork mode
    # the log does not name them).
    artifacts=$(find "$dir/artifacts" -type f -newer "$dir/.started" | sort)
    if [ $status -ne 0 ] || [ -n "$artifacts" ]; then
        failed="$failed $name"
        echo "==== $name FOUND A PROBLEM (exit status $status). What it reported:"
        grep -E -A25 "FUZZ FINDING|runtime error|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)" "$log" | head -60
        for a in $artifacts; do
            echo "==== reproducer: $a"
            echo "     run it again: ${settings}UBSAN_OPTIONS=suppressions=$here/ubsan.supp $bin_dir/$name $a"
        done
        [ -z "$artifacts" ] && echo "==== no reproducer was written; the whole log is $log"
    fi
done
echo "==== fuzzing summary:$summary"
if [ -n "$failed" ]; then
    echo "==== FAILED:$failed (see fuzz/README.md, 'Reproducing a finding')"
    exit 1
fi
echo "==== no findings"

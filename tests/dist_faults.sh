#!/bin/sh
# Faults in a data-parallel run of lazytensor-train under mpirun (2 ranks):
#  1. rank 1 is killed (SIGKILL) mid-training: the job exits non-zero
#     within the timeout and the message names rank 1;
#  2. rank 1 stops (SIGSTOP) mid-training: rank 0's collective times out
#     after LT_DIST_TIMEOUT and it exits non-zero naming rank 1;
#  3. rank 1 builds another model: both ranks refuse to train;
#  4. rank 1 runs one step more: both ranks report the disagreement.
# usage: dist_faults.sh MPIRUN TRAINER
set -u
MPIRUN=$1
TRAIN=$2
export LT_DIST_TIMEOUT=5 LT_NUM_THREADS=1
RUN="$MPIRUN --oversubscribe --allow-run-as-root --bind-to none"
OUT=$(mktemp)
WRAP=$(mktemp)
trap 'rm -f "$OUT" "$WRAP"' EXIT
fail() { echo "FAIL: $*"; echo "--- output:"; cat "$OUT"; exit 1; }

# $1: signal for rank 1 after 4 s; then the trainer's command line
signal_wrapper() {
    cat > "$WRAP" <<EOS
#!/bin/sh
if [ "\$OMPI_COMM_WORLD_RANK" = 1 ]; then (sleep 4; kill -$1 \$\$) & fi
exec "\$@"
EOS
    chmod +x "$WRAP"
}

# expect_failure NAME MAX_SECONDS PATTERN... -- command
expect_failure() {
    name=$1 limit=$2
    shift 2
    patterns=""
    while [ "$1" != "--" ]; do patterns="$patterns
$1"; shift; done
    shift
    start=$(date +%s)
    timeout 120 "$@" > "$OUT" 2>&1
    rc=$?
    elapsed=$(( $(date +%s) - start ))
    [ "$rc" -ne 0 ] || fail "$name: exit status 0"
    [ "$rc" -ne 124 ] || fail "$name: hung (killed by timeout after 120 s)"
    [ "$elapsed" -le "$limit" ] || fail "$name: took $elapsed s (limit $limit s)"
    echo "$patterns" | while IFS= read -r p; do
        [ -z "$p" ] || grep -qF -- "$p" "$OUT" || { echo "missing: $p"; exit 1; }
    done || fail "$name: a message is missing"
    echo "ok: $name (exit $rc after $elapsed s)"
}

TRAIN_ARGS="--model mlp --device cpu --epochs 1 --batch-size 32 --quiet"

signal_wrapper KILL
expect_failure "rank 1 killed" 60 "process rank 1" "signal 9" -- \
    $RUN -np 2 "$WRAP" "$TRAIN" $TRAIN_ARGS

signal_wrapper STOP
expect_failure "rank 1 stopped" 60 "lazytensor-train: rank 0: " "within 5 s (LT_DIST_TIMEOUT)" "rank 1 stopped or was lost" -- \
    $RUN -np 2 "$WRAP" "$TRAIN" $TRAIN_ARGS

expect_failure "different models" 40 "rank 0: dp_new: rank 1's model differs from rank 0's" \
    "rank 1: dp_new: rank 1's model differs from rank 0's" -- \
    $RUN -np 1 "$TRAIN" --model mlp --device cpu --steps 3 --quiet : -np 1 "$TRAIN" --model cnn --device cpu --steps 3 --quiet

expect_failure "different step counts" 40 \
    "rank 0: dist_finalize: the ranks disagree: rank 0 calls dist_finalize (the end of the run)" \
    "rank 1: step 3 failed: all_reduce: the ranks disagree" -- \
    $RUN -np 1 "$TRAIN" --device lazy --epochs 1 --steps 3 --quiet : -np 1 "$TRAIN" --device lazy --epochs 1 --steps 4 --quiet
echo "all fault tests passed"

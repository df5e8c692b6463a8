#!/bin/sh
# trainer_cli.sh TRAINER - command-line behaviour of lazytensor-train: bad
# flags, a missing dataset, a bad checkpoint and a shape mismatch each give
# a clear message and a non-zero exit; --compare agrees on eager and lazy;
# a saved model loads back.
set -u
trainer="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# expect CODE PATTERN ARGS...: runs the trainer, checks exit code and output
expect() {
    code="$1"; pattern="$2"; shift 2
    env ${run_env:-} "$trainer" "$@" >"$tmp/out" 2>&1
    got=$?
    if [ "$got" -ne "$code" ] || ! grep -q -- "$pattern" "$tmp/out"; then
        echo "FAIL: ${run_env:-} $* -> exit $got (want $code), output:"; cat "$tmp/out"
        echo "  (wanted a line matching: $pattern)"
        fail=1
    else
        echo "ok: ${run_env:-} $* -> exit $got"
    fi
}

expect 2 "unknown option --bogus" --bogus
expect 2 "bad value \"fast\" for --model" --model fast
expect 2 "bad value \"gpu\" for --device" --device gpu
expect 2 "bad value \"-3\" for --epochs" --epochs -3
expect 2 "bad value \"abc\" for --lr" --lr abc
expect 2 "--batch-size needs a value" --batch-size
expect 0 "usage: lazytensor-train" --help
expect 1 "no/such/dir/train-images-idx3-ubyte.gz" --data /no/such/dir
expect 1 "dataset-fashion-mnist" --data /usr/share/datasets/fashion-mnist/missing-subdir

# --print-losses: every step's loss, 9 decimals, epoch by epoch
expect 0 "^epoch 2 step 1 loss [0-9]\.[0-9]\{9\}$" --model mlp --device cpu --epochs 2 --steps 2 --quiet --print-losses

printf 'not a safetensors file' >"$tmp/bad.safetensors"
expect 1 "corrupt\|truncated" --load "$tmp/bad.safetensors" --steps 1 --epochs 1 --quiet

# a model saved by the MLP does not fit the CNN: shape/name mismatch
expect 0 "saved model to" --model mlp --device cpu --epochs 1 --steps 2 --quiet --save "$tmp/mlp.safetensors"
expect 1 "no tensor named\|shape" --model cnn --device cpu --epochs 1 --steps 1 --quiet --load "$tmp/mlp.safetensors"
# resuming with another optimizer keeps the model and starts a fresh optimizer
expect 0 "has no optimizer state: loaded the model only" --model mlp --optimizer sgd --device cpu --epochs 1 --steps 1 --quiet --load "$tmp/mlp.safetensors"
expect 0 "test accuracy" --model mlp --device lazy --epochs 1 --steps 2 --quiet --load "$tmp/mlp.safetensors"

# a second process compiles nothing: every program comes from the disk cache
# (LT_TIERED=0: the first process builds each program before running it,
# where the tiered default drops the builds still queued at exit)
run_env="LT_CACHE_DIR=$tmp/cache LT_TIERED=0"
expect 0 "compiled by cc" --model mlp --device lazy --epochs 1 --steps 3 --quiet
expect 0 "(0 compiled by cc, [1-9][0-9]* loaded from the disk cache)" --model mlp --device lazy --epochs 1 --steps 3 --quiet
# the tiered default runs new graphs on interp while they compile
run_env="LT_CACHE_DIR=$tmp/cache-tiered"
expect 0 "tiered: [1-9][0-9]* runs on interp while [1-9][0-9]* programs compiled in the background" --model mlp --device lazy --epochs 1 --steps 3 --quiet
run_env=""

# eager and lazy training agree to 1e-4 over 50 steps, with the default
# backend and with the interp backend
expect 0 "losses agree" --model mlp --compare --compare-steps 50 --batch-size 64
expect 0 "losses agree" --model cnn --compare --compare-steps 50 --batch-size 16
run_env="LT_BACKEND=interp"
expect 0 "losses agree" --model mlp --compare --compare-steps 50 --batch-size 64
expect 0 "losses agree" --model cnn --compare --compare-steps 50 --batch-size 16
run_env=""
exit $fail

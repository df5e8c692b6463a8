#!/bin/sh
# Data-parallel scaling on one machine: the same global batch trained by
# 1 rank x 2 threads and by 2 ranks x 1 thread (mpirun), for the MLP and
# the CNN, on the lazy and cpu devices. Prints each run's throughput,
# communication and overlap lines from lazytensor-train's summary.
# usage: bench/dist_scaling.sh [BUILD_DIR] [GLOBAL_BATCH]
set -eu
BUILD=${1:-build}
GLOBAL=${2:-128}
TRAIN=$BUILD/lazytensor-train
MPIRUN="mpirun --oversubscribe --allow-run-as-root --bind-to none"
for model in mlp cnn; do
    steps=120
    [ "$model" = cnn ] && steps=40
    for device in lazy cpu; do
        common="--model $model --device $device --epochs 1 --steps $steps --quiet"
        echo "== $model on $device, global batch $GLOBAL, $steps steps"
        echo "-- 1 rank x 2 threads (batch $GLOBAL)"
        $TRAIN $common --batch-size "$GLOBAL" --threads 2 | grep -E "step time|throughput"
        echo "-- 2 ranks x 1 thread (batch $((GLOBAL / 2)) each)"
        LT_NUM_THREADS=1 $MPIRUN -np 2 "$TRAIN" $common --batch-size $((GLOBAL / 2)) --threads 1 |
            grep -E "step time|throughput|data-parallel|communication|overlap"
    done
done

/*
 * dist_allreduce - all-reduce time against message size on the ranks of
 * `mpirun -np N build/bench/dist_allreduce`: the latency (alpha) and
 * bandwidth that docs/distributed.md's step-time model uses. For each size
 * (4 B to 64 MB of f32) it runs lt_all_reduce on cpu tensors several times
 * and prints, on rank 0, the median time and the bus bandwidth
 * 2 (N - 1) / N * bytes / time (what a ring all-reduce moves per rank).
 */
#include "bench_util.h"
#include "lazytensor.h"

#include <stdio.h>

int main(void)
{
    if (lt_dist_init() != LT_OK) {
        fprintf(stderr, "dist_allreduce: %s\n", lt_last_error());
        return 1;
    }
    int rank = lt_dist_rank(), world = lt_dist_world_size();
    if (rank == 0)
        printf("all-reduce (sum, f32) on %d rank%s\n%12s %12s %14s\n", world, world > 1 ? "s" : "", "bytes",
               "median us", "bus GB/s");
    for (int64_t n = 1; n <= ((int64_t)16 << 20); n *= 8) {
        int reps = n >= (1 << 20) ? 5 : 50;
        double t[50];
        lt_scope_begin();
        lt_tensor *x = lt_full(&n, 1, 1.0, LT_F32, lt_device_cpu());
        for (int r = 0; r < reps; r++) {
            lt_scope_begin();
            double t0 = now_ms();
            lt_tensor *y = lt_all_reduce(x, LT_REDUCE_SUM);
            t[r] = now_ms() - t0;
            lt_scope_end();
            if (!y) {
                fprintf(stderr, "dist_allreduce: %s\n", lt_last_error());
                return 1;
            }
        }
        lt_scope_end();
        double ms = median(t, reps), bytes = (double)n * 4;
        if (rank == 0)
            printf("%12.0f %12.1f %14.3f\n", bytes, ms * 1e3,
                   world > 1 ? 2.0 * (world - 1) / world * bytes / (ms * 1e-3) / 1e9 : 0.0);
    }
    return lt_dist_finalize() == LT_OK ? 0 : 1;
}

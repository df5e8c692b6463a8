/*
 * data_shard.c - the dataset split over the ranks of a distributed run.
 *
 * Global batch g is the same samples, in the same order, as batch g of
 * size batch * world in one process (the permutation comes from the same
 * seed on every rank); rank r takes its r-th block of `batch` samples. The
 * order is padded to a multiple of the world size by repeating its first
 * samples (as PyTorch's DistributedSampler does), so every rank gets the
 * same number of batches and the last, partial global batch splits into
 * equal per-rank batches: the ranks run the same number of steps.
 */
#include "nn/nn_internal.h"

#include <stdlib.h>

int64_t lt_dataset_shard_batch(const lt_dataset *d, const int64_t *perm, int64_t index, int64_t batch, int rank,
                               int world, double mean, double std, lt_device dev, lt_tensor **images,
                               lt_tensor **labels)
{
    if (!d || !images || !labels)
        return lt_error(LT_ERR_NULL, "dataset_shard_batch: NULL argument"), -1;
    *images = *labels = NULL;
    if (world < 1 || rank < 0 || rank >= world)
        return lt_error(LT_ERR_ARGUMENT, "dataset_shard_batch: rank %d is not in a world of %d ranks", rank, world),
               -1;
    if (batch < 1 || index < 0 || batch > INT64_MAX / world)
        return lt_error(LT_ERR_ARGUMENT, "dataset_shard_batch: batch %lld and index %lld (expected batch >= 1, "
                        "index >= 0)", (long long)batch, (long long)index), -1;
    int64_t count = d->count, padded = count == 0 ? 0 : (count + world - 1) / world * world;
    int64_t global = batch * world;
    if (index > (padded - 1) / global || padded == 0)
        return 0; /* past the end */
    int64_t start = index * global;
    int64_t per_rank = (padded - start < global ? padded - start : global) / world;
    int64_t *mine = malloc(sizeof *mine * (size_t)per_rank);
    if (!mine)
        return lt_error(LT_ERR_MEMORY, "dataset_shard_batch: out of memory"), -1;
    for (int64_t k = 0; k < per_rank; k++) {
        int64_t pos = (start + rank * per_rank + k) % count; /* past the end: the first samples again */
        mine[k] = perm ? perm[pos] : pos;
    }
    int64_t got = lt_dataset_batch(d, mine, 0, per_rank, mean, std, dev, images, labels);
    free(mine);
    return got;
}

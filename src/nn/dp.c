/*
 * dp.c - data-parallel training over the ranks of a distributed run.
 *
 * lt_dp_new checks that every rank built the same model (a signature of
 * the parameters' names, dtypes and shapes, gathered from every rank),
 * broadcasts the parameters from rank 0, and cuts the parameters into
 * buckets: runs of parameters of one dtype and device, taken from the last
 * registered to the first (the order in which backward produces their
 * gradients), of at most bucket_bytes each. lt_dp_sync_grads packs each
 * bucket's gradients into one flat buffer, averages it over the ranks with
 * one all-reduce and copies the averages back, so a model of many small
 * parameters costs a few large messages rather than many small ones. On the
 * lazy device all of it is traced into the step program.
 *
 * Overlap (cpu device): the dp installs autograd's grad-ready hook, so a
 * bucket whose last gradient backward has just finalized is packed and its
 * all-reduce started at once (non-blocking, lt_dist_rt.all_reduce_start)
 * while backward goes on; each later grad-ready event moves the started
 * all-reduces forward (lt_dist_rt.test). lt_dp_sync_grads then waits for
 * them, copies the averages back and reduces the buckets that did not
 * start (say, a parameter that got no gradient) the blocking way.
 */
#include "autograd/autograd.h"
#include "core/dist.h"
#include "nn/nn_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARAMS 4096

typedef struct dp_bucket {
    int first, count; /* into lt_dp.order */
    int64_t numel;
    lt_dtype dtype;
    int ready;              /* gradients finalized in this backward */
    lt_tensor *flat;        /* started: the packed gradients being reduced */
    lt_dist_request *req;
} dp_bucket;

struct lt_dp {
    lt_tensor **params; /* one reference each */
    int nparams;
    int *order;         /* parameter indices, last registered first */
    dp_bucket *buckets;
    int nbuckets;
    int64_t bytes_per_sync;
    size_t bucket_bytes;
    int *bucket_of;         /* per parameter: its bucket */
    bool overlap;
    lt_status failed;       /* an error in the grad-ready hook, reported by sync */
    char message[512];
    double span_s, blocked_s; /* started all-reduces: start to end, and waited for */
};

size_t lt_dp_default_bucket_bytes(void)
{
    const char *v = getenv("LT_DP_BUCKET_MB");
    char *end = NULL;
    double mb = v ? strtod(v, &end) : 0;
    if (v && *v && end && !*end && mb > 0 && mb < 1e6)
        return (size_t)(mb * (1 << 20));
    return LT_DP_DEFAULT_BUCKET_BYTES;
}

/* FNV-1a over the parameters' names, dtypes and shapes. */
static uint64_t signature(lt_tensor *const *params, const char *const *names, int n, int64_t *total)
{
    uint64_t h = 1469598103934665603ull;
    *total = 0;
    for (int k = 0; k < n; k++) {
        for (const char *s = names[k]; *s; s++)
            h = (h ^ (unsigned char)*s) * 1099511628211ull;
        int64_t words[2 + LT_MAX_DIMS] = {lt_tensor_dtype(params[k]), lt_tensor_ndim(params[k])};
        for (int d = 0; d < lt_tensor_ndim(params[k]); d++)
            words[2 + d] = lt_tensor_shape(params[k])[d];
        for (int w = 0; w < 2 + lt_tensor_ndim(params[k]); w++)
            h = (h ^ (uint64_t)words[w]) * 1099511628211ull;
        *total += lt_tensor_numel(params[k]);
    }
    return h;
}

/* Every rank's signature must equal rank 0's. */
static lt_status check_same_model(lt_tensor *const *params, const char *const *names, int n)
{
    int world = lt_dist_world_size();
    if (world == 1)
        return LT_OK;
    int64_t mine[3], dims[1] = {3};
    mine[2] = (int64_t)signature(params, names, n, &mine[1]);
    mine[0] = n;
    lt_scope_begin();
    int64_t *all = malloc(sizeof *all * 3 * (size_t)world);
    lt_tensor *gathered = lt_all_gather(lt_from_data(mine, dims, 1, LT_I64, lt_device_cpu()));
    lt_status st = !all ? lt_error(LT_ERR_MEMORY, "dp_new: out of memory")
                   : gathered ? lt_copy_to_host(gathered, all, sizeof *all * 3 * (size_t)world)
                              : lt_last_status();
    for (int r = 1; st == LT_OK && r < world; r++)
        if (memcmp(&all[3 * r], all, sizeof *all * 3) != 0)
            st = lt_error(LT_ERR_DIST,
                          "dp_new: rank %d's model differs from rank 0's: rank %d has %lld parameters of %lld "
                          "elements (signature %016llx), rank 0 has %lld parameters of %lld elements (%016llx); "
                          "every rank must build the same model",
                          r,
                          r, (long long)all[3 * r], (long long)all[3 * r + 1], (unsigned long long)all[3 * r + 2],
                          (long long)all[0], (long long)all[1], (unsigned long long)all[2]);
    free(all);
    lt_scope_end();
    return st;
}

static lt_status broadcast_params(lt_dp *dp)
{
    lt_status st = LT_OK;
    lt_no_grad_begin();
    for (int k = 0; k < dp->nparams && st == LT_OK; k++) {
        lt_scope_begin();
        if (!lt_broadcast_(dp->params[k], 0))
            st = lt_last_status();
        lt_scope_end();
    }
    lt_no_grad_end();
    return st;
}

/* Runs of one dtype and device, at most bucket_bytes (a larger parameter
 * gets a bucket of its own), last parameter first. */
static lt_status plan_buckets(lt_dp *dp)
{
    dp->order = malloc(sizeof *dp->order * (size_t)dp->nparams);
    dp->buckets = calloc((size_t)dp->nparams + 1, sizeof *dp->buckets);
    if (!dp->order || !dp->buckets)
        return lt_error(LT_ERR_MEMORY, "dp_new: out of memory");
    for (int k = 0; k < dp->nparams; k++)
        dp->order[k] = dp->nparams - 1 - k;
    dp_bucket *b = NULL;
    dp->bucket_of = malloc(sizeof *dp->bucket_of * (size_t)dp->nparams);
    if (!dp->bucket_of)
        return lt_error(LT_ERR_MEMORY, "dp_new: out of memory");
    for (int k = 0; k < dp->nparams; k++) {
        lt_tensor *p = dp->params[dp->order[k]];
        lt_dtype dt = lt_tensor_dtype(p);
        int64_t n = lt_tensor_numel(p);
        size_t es = lt_dtype_size(dt);
        bool fits = b && b->dtype == dt &&
                    lt_device_equal(lt_tensor_device(p), lt_tensor_device(dp->params[dp->order[b->first]])) &&
                    (size_t)(b->numel + n) * es <= dp->bucket_bytes;
        if (!fits) {
            b = &dp->buckets[dp->nbuckets++];
            *b = (dp_bucket){.first = k, .dtype = dt};
        }
        b->count++;
        b->numel += n;
        dp->bucket_of[dp->order[k]] = (int)(b - dp->buckets);
        dp->bytes_per_sync += n * (int64_t)es;
    }
    return LT_OK;
}

static void grad_ready(lt_tensor *leaf, void *ctx);

lt_dp *lt_dp_new(lt_module *m, size_t bucket_bytes)
{
    if (!m)
        return lt_error(LT_ERR_NULL, "dp_new: the module is NULL"), NULL;
    lt_tensor *params[MAX_PARAMS];
    const char *names[MAX_PARAMS];
    int n = lt_module_parameters(m, params, names, MAX_PARAMS);
    if (n < 0)
        return NULL;
    if (n > MAX_PARAMS)
        return lt_error(LT_ERR_ARGUMENT, "dp_new: %d parameters (at most %d)", n, MAX_PARAMS), NULL;
    if (lt_dist_init() != LT_OK || check_same_model(params, names, n) != LT_OK)
        return NULL;
    lt_dp *dp = calloc(1, sizeof *dp);
    if (dp)
        dp->params = calloc((size_t)n + 1, sizeof *dp->params);
    if (!dp || !dp->params) {
        free(dp);
        return lt_error(LT_ERR_MEMORY, "dp_new: out of memory"), NULL;
    }
    dp->bucket_bytes = bucket_bytes ? bucket_bytes : lt_dp_default_bucket_bytes();
    for (int k = 0; k < n; k++) {
        dp->params[k] = params[k];
        lt_retain(params[k]);
    }
    dp->nparams = n;
    if (plan_buckets(dp) != LT_OK || broadcast_params(dp) != LT_OK) {
        lt_dp_free(dp);
        return NULL;
    }
    if (lt_dist_world_size() > 1)
        lt_dp_set_overlap(dp, true);
    return dp;
}

/* The bucket's gradients (zeros for a parameter without one), flat. */
static lt_tensor *pack(lt_dp *dp, const dp_bucket *b)
{
    lt_tensor *parts[MAX_PARAMS];
    for (int k = 0; k < b->count; k++) {
        lt_tensor *p = dp->params[dp->order[b->first + k]];
        lt_tensor *g = lt_grad(p);
        int64_t flat = -1;
        parts[k] = lt_reshape(g ? g : lt_zeros_like(p), &flat, 1);
        if (!parts[k])
            return NULL;
    }
    return b->count == 1 ? parts[0] : lt_cat(parts, b->count, 0);
}

/* Copies the averaged gradients back (a missing gradient is created). */
static lt_status unpack(lt_dp *dp, const dp_bucket *b, lt_tensor *avg)
{
    int64_t at = 0;
    for (int k = 0; k < b->count; k++) {
        lt_tensor *p = dp->params[dp->order[b->first + k]];
        int64_t n = lt_tensor_numel(p);
        lt_tensor *part = lt_reshape(lt_narrow(avg, 0, at, n), lt_tensor_shape(p), lt_tensor_ndim(p));
        at += n;
        lt_tensor *g = lt_grad(p);
        if (part && !g && !lt_requires_grad(p))
            continue; /* a frozen parameter: nothing to write */
        lt_status st = !part ? lt_last_status() : g ? (lt_copy_(g, part) ? LT_OK : lt_last_status())
                                                    : lt_ag_accumulate_leaf(p, part);
        if (st != LT_OK)
            return st;
    }
    return LT_OK;
}

/* ---- overlap --------------------------------------------------------------- */

static void hook_failed(lt_dp *dp, lt_status st)
{
    if (dp->failed != LT_OK)
        return;
    dp->failed = st;
    snprintf(dp->message, sizeof dp->message, "%s", lt_last_error());
}

/* Packs bucket b (all its gradients are final) and starts its all-reduce. */
static void start_bucket(lt_dp *dp, dp_bucket *b)
{
    lt_scope_begin();
    lt_tensor *flat = pack(dp, b);
    flat = flat ? lt_contiguous(flat) : NULL;
    if (flat) {
        b->flat = lt_retain(flat);
        int64_t n = b->numel;
        lt_dist_call c = {.who = "dp_sync_grads", .kind = LT_DIST_ALL_REDUCE, .dtype = b->dtype, .numel = n,
                          .ndim = 1, .shape = &n, .arg = LT_DIST_MEAN};
        lt_status st = lt_dist_rt_get()->all_reduce_start(&c, lt_tensor_data(b->flat), &b->req);
        if (st != LT_OK)
            hook_failed(dp, st);
    } else {
        hook_failed(dp, lt_last_status());
    }
    lt_scope_end();
}

/* Moves the started all-reduces forward (MPI progresses inside its calls). */
static void progress(lt_dp *dp)
{
    for (int i = 0; i < dp->nbuckets && dp->failed == LT_OK; i++) {
        bool done = true;
        if (dp->buckets[i].req && lt_dist_rt_get()->test(dp->buckets[i].req, &done) != LT_OK)
            hook_failed(dp, lt_last_status());
    }
}

static void grad_ready(lt_tensor *leaf, void *ctx)
{
    lt_dp *dp = ctx;
    if (!dp->overlap || dp->failed != LT_OK || lt_tensor_device(leaf).kind != LT_DEVICE_CPU)
        return; /* the lazy device traces the all-reduces into the step instead */
    int k = 0;
    while (k < dp->nparams && dp->params[k] != leaf)
        k++;
    if (k == dp->nparams)
        return;
    dp_bucket *b = &dp->buckets[dp->bucket_of[k]];
    if (++b->ready > b->count) {
        lt_error(LT_ERR_STATE, "dp_sync_grads: a second lt_backward before lt_dp_sync_grads while overlap is on "
                               "(to accumulate gradients over several backward passes, call "
                               "lt_dp_set_overlap(dp, false))");
        hook_failed(dp, LT_ERR_STATE);
        return;
    }
    if (b->ready == b->count)
        start_bucket(dp, b);
    progress(dp);
}

lt_status lt_dp_set_overlap(lt_dp *dp, bool on)
{
    if (!dp)
        return lt_error(LT_ERR_NULL, "dp_set_overlap: the lt_dp is NULL");
    dp->overlap = on;
    lt_ag_set_grad_ready_hook(on ? grad_ready : NULL, on ? dp : NULL);
    return LT_OK;
}

/* ---- the step's gradient averaging ------------------------------------------ */

/* Waits for a started bucket and writes its averages back. */
static lt_status finish_bucket(lt_dp *dp, dp_bucket *b)
{
    double span = 0, blocked = 0;
    lt_status st = lt_dist_rt_get()->wait(b->req, &span, &blocked);
    b->req = NULL;
    dp->span_s += span;
    dp->blocked_s += blocked;
    if (st == LT_OK)
        st = unpack(dp, b, b->flat);
    return st;
}

static lt_status reduce_bucket(lt_dp *dp, dp_bucket *b)
{
    lt_tensor *flat = pack(dp, b);
    lt_tensor *avg = flat ? lt_all_reduce(flat, LT_REDUCE_MEAN) : NULL;
    return avg ? unpack(dp, b, avg) : lt_last_status();
}

static void reset_buckets(lt_dp *dp)
{
    for (int i = 0; i < dp->nbuckets; i++) {
        dp_bucket *b = &dp->buckets[i];
        if (b->req) { /* after an error: the request still needs its wait */
            double span, blocked;
            lt_dist_rt_get()->wait(b->req, &span, &blocked);
            b->req = NULL;
        }
        if (b->flat)
            lt_release(b->flat);
        b->flat = NULL;
        b->ready = 0;
    }
}

lt_status lt_dp_sync_grads(lt_dp *dp)
{
    if (!dp)
        return lt_error(LT_ERR_NULL, "dp_sync_grads: the lt_dp is NULL");
    if (lt_dist_world_size() == 1)
        return LT_OK; /* the mean over one rank */
    lt_status st = dp->failed;
    if (st != LT_OK)
        lt_error(st, "%s", dp->message);
    lt_no_grad_begin();
    for (int i = 0; i < dp->nbuckets && st == LT_OK; i++) { /* started ones first, in bucket order */
        lt_scope_begin();
        if (dp->buckets[i].flat)
            st = finish_bucket(dp, &dp->buckets[i]);
        lt_scope_end();
    }
    for (int i = 0; i < dp->nbuckets && st == LT_OK; i++) {
        lt_scope_begin();
        if (!dp->buckets[i].flat)
            st = reduce_bucket(dp, &dp->buckets[i]);
        lt_scope_end();
    }
    lt_no_grad_end();
    reset_buckets(dp);
    dp->failed = LT_OK;
    return st;
}

void lt_dp_overlap_stats(const lt_dp *dp, double *comm_s, double *hidden_s)
{
    *comm_s = dp ? dp->span_s : 0;
    *hidden_s = dp ? dp->span_s - dp->blocked_s : 0;
}

int lt_dp_num_buckets(const lt_dp *dp) { return dp ? dp->nbuckets : 0; }

int64_t lt_dp_bytes_per_sync(const lt_dp *dp) { return dp ? dp->bytes_per_sync : 0; }

void lt_dp_free(lt_dp *dp)
{
    if (!dp)
        return;
    if (dp->overlap)
        lt_dp_set_overlap(dp, false);
    reset_buckets(dp);
    for (int k = 0; k < dp->nparams; k++)
        lt_release(dp->params[k]);
    free(dp->params);
    free(dp->bucket_of);
    free(dp->order);
    free(dp->buckets);
    free(dp);
}

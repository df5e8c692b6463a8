/* dist.c - the distributed runtime table in use, the world of one, and the
 * communication counters (see dist.h). */
#include "core/dist.h"

#include <stdatomic.h>
#include <string.h>

static lt_status single_in_place(const lt_dist_call *c, void *buf)
{
    (void)c, (void)buf;
    return LT_OK;
}

static lt_status single_copy(const lt_dist_call *c, const void *send, void *recv)
{
    size_t bytes = (size_t)c->numel * lt_dtype_size(c->dtype);
    if (bytes > 0 && send != recv)
        memmove(recv, send, bytes);
    return LT_OK;
}

static lt_status single_barrier(const char *who)
{
    (void)who;
    return LT_OK;
}

/* A finished request: the world of one has nothing to wait for. */
static lt_status single_start(const lt_dist_call *c, void *buf, lt_dist_request **req)
{
    (void)c, (void)buf;
    *req = NULL;
    return LT_OK;
}

static lt_status single_test(lt_dist_request *req, bool *done)
{
    (void)req;
    *done = true;
    return LT_OK;
}

static lt_status single_wait(lt_dist_request *req, double *span_s, double *blocked_s)
{
    (void)req;
    *span_s = *blocked_s = 0;
    return LT_OK;
}

static lt_status single_finalize(void) { return LT_OK; }

static const lt_dist_rt single = {
    .name = "single",
    .rank = 0,
    .size = 1,
    .local_rank = 0,
    .all_reduce = single_in_place,
    .broadcast = single_in_place,
    .all_gather = single_copy,
    .reduce_scatter = single_copy,
    .barrier = single_barrier,
    .all_reduce_start = single_start,
    .test = single_test,
    .wait = single_wait,
    .finalize = single_finalize,
};

static _Atomic(const lt_dist_rt *) current;

const lt_dist_rt *lt_dist_rt_single(void) { return &single; }

const lt_dist_rt *lt_dist_rt_get(void)
{
    const lt_dist_rt *rt = atomic_load(&current);
    return rt ? rt : &single;
}

void lt_dist_rt_set(const lt_dist_rt *rt) { atomic_store(&current, rt); }

/* ---- counters ---------------------------------------------------------- */

static atomic_llong bytes_total, calls_total, wait_ns_total;

void lt_dist_account(int64_t bytes, double seconds)
{
    atomic_fetch_add(&bytes_total, bytes);
    atomic_fetch_add(&calls_total, 1);
    atomic_fetch_add(&wait_ns_total, (long long)(seconds * 1e9));
}

void lt_dist_counters(int64_t *bytes, int64_t *calls, double *seconds)
{
    *bytes = atomic_load(&bytes_total);
    *calls = atomic_load(&calls_total);
    *seconds = (double)atomic_load(&wait_ns_total) * 1e-9;
}

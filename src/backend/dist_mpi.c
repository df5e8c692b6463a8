/*
 * dist_mpi.c - the distributed runtime table over Open MPI (see
 * core/dist.h). The only file that includes mpi.h.
 *
 * The library does not link Open MPI: lt_dist_mpi_open loads libmpi.so.40
 * with dlopen (LT_MPI_LIBRARY overrides the name) only when the process was
 * started by a launcher, so a single-process program neither loads nor
 * initializes MPI, and programs link the library as before. Open MPI's
 * predefined handles (MPI_COMM_WORLD, MPI_FLOAT...) are addresses of its
 * global objects, which dlsym finds by their Open MPI names.
 *
 * Every collective is non-blocking underneath and waited for by polling
 * with a deadline (LT_DIST_TIMEOUT seconds, default 120), so a lost or
 * stuck rank becomes an error (LT_ERR_DIST), never a hang. Before each
 * collective the ranks exchange its signature (op, dtype, shape, root or
 * reduction, sequence number) point to point: a rank that calls another
 * collective, or another shape or dtype, is reported by rank number on
 * every rank, and so is a rank that does not answer. After a timeout the
 * world is broken: later calls fail at once and MPI_Finalize is skipped
 * (it would wait for the lost rank).
 *
 * MPI is initialized with MPI_THREAD_SERIALIZED and every entry point holds
 * one mutex, so the lazy device's executor thread and the caller's thread
 * may both run collectives (in an order that must match across ranks).
 */
#include "backend/dist_mpi.h"

#include <mpi.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SIG_WORDS 10
#define SIG_TAG 4242
#define DEFAULT_TIMEOUT_S 120.0
/* MPI counts are int: larger buffers go in chunks of this many bytes */
#define CHUNK_BYTES ((int64_t)1 << 30)

static struct {
    void *lib;
    __typeof__(MPI_Init_thread) *Init_thread;
    __typeof__(MPI_Finalize) *Finalize;
    __typeof__(MPI_Comm_rank) *Comm_rank;
    __typeof__(MPI_Comm_size) *Comm_size;
    __typeof__(MPI_Comm_set_errhandler) *Comm_set_errhandler;
    __typeof__(MPI_Error_string) *Error_string;
    __typeof__(MPI_Iallreduce) *Iallreduce;
    __typeof__(MPI_Ibcast) *Ibcast;
    __typeof__(MPI_Iallgather) *Iallgather;
    __typeof__(MPI_Ireduce_scatter_block) *Ireduce_scatter_block;
    __typeof__(MPI_Ibarrier) *Ibarrier;
    __typeof__(MPI_Isend) *Isend;
    __typeof__(MPI_Irecv) *Irecv;
    __typeof__(MPI_Test) *Test;
    __typeof__(MPI_Op_create) *Op_create;
    MPI_Comm world;
    MPI_Datatype f32, f64, i32, i64, u8, u16, cbool, byte;
    MPI_Op sum, max, lor, half_sum[2], half_max[2]; /* [0] bf16, [1] f16 */
    MPI_Errhandler errors_return;
} M;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static lt_dist_rt table;
static double timeout_s = DEFAULT_TIMEOUT_S;
static int64_t seq;        /* collectives issued by this rank */
static bool broken;        /* a timeout left a collective behind */
static bool finalized;

struct lt_dist_request {
    MPI_Request req;
    lt_dist_call call;
    void *buf;
    int64_t bytes;
    double started, finished_at;
    bool finished;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

bool lt_dist_mpi_launched(void)
{
    const char *size = getenv("OMPI_COMM_WORLD_SIZE");
    return (size && *size) || getenv("PMIX_RANK");
}

static int env_int(const char *name, int fallback)
{
    const char *v = getenv(name);
    char *end = NULL;
    long n = v ? strtol(v, &end, 10) : 0;
    return v && *v && end && !*end && n >= 0 && n < (1L << 30) ? (int)n : fallback;
}

static lt_status mpi_error(const char *who, const char *what, int rc)
{
    char msg[512] = "";
    int len = 0;
    if (M.Error_string)
        M.Error_string(rc, msg, &len);
    return lt_error(LT_ERR_DIST, "%s: %s failed on rank %d: %s", who, what, table.rank, msg);
}

/* ---- loading ----------------------------------------------------------- */

static bool load_symbol(void **slot, const char *name)
{
    *slot = dlsym(M.lib, name);
    return *slot != NULL;
}

static lt_status load_library(void)
{
    const char *name = getenv("LT_MPI_LIBRARY");
    if (!name || !*name)
        name = "libmpi.so.40";
    /* global: Open MPI's own plugins resolve its symbols through it */
    M.lib = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
    if (!M.lib)
        return lt_error(LT_ERR_UNSUPPORTED,
                        "dist_init: started by an MPI launcher, but Open MPI's library cannot be loaded (%s); "
                        "install it with apt-get install openmpi-bin libopenmpi-dev", dlerror());
    struct { void **slot; const char *name; } syms[] = {
        {(void **)&M.Init_thread, "MPI_Init_thread"}, {(void **)&M.Finalize, "MPI_Finalize"},
        {(void **)&M.Comm_rank, "MPI_Comm_rank"}, {(void **)&M.Comm_size, "MPI_Comm_size"},
        {(void **)&M.Comm_set_errhandler, "MPI_Comm_set_errhandler"},
        {(void **)&M.Error_string, "MPI_Error_string"}, {(void **)&M.Iallreduce, "MPI_Iallreduce"},
        {(void **)&M.Ibcast, "MPI_Ibcast"}, {(void **)&M.Iallgather, "MPI_Iallgather"},
        {(void **)&M.Ireduce_scatter_block, "MPI_Ireduce_scatter_block"},
        {(void **)&M.Ibarrier, "MPI_Ibarrier"}, {(void **)&M.Isend, "MPI_Isend"},
        {(void **)&M.Irecv, "MPI_Irecv"}, {(void **)&M.Test, "MPI_Test"},
        {(void **)&M.Op_create, "MPI_Op_create"},
        {(void **)&M.world, "ompi_mpi_comm_world"}, {(void **)&M.f32, "ompi_mpi_float"},
        {(void **)&M.f64, "ompi_mpi_double"}, {(void **)&M.i32, "ompi_mpi_int32_t"},
        {(void **)&M.i64, "ompi_mpi_int64_t"}, {(void **)&M.u8, "ompi_mpi_uint8_t"},
        {(void **)&M.u16, "ompi_mpi_uint16_t"}, {(void **)&M.cbool, "ompi_mpi_c_bool"},
        {(void **)&M.byte, "ompi_mpi_byte"}, {(void **)&M.sum, "ompi_mpi_op_sum"},
        {(void **)&M.max, "ompi_mpi_op_max"}, {(void **)&M.lor, "ompi_mpi_op_lor"},
        {(void **)&M.errors_return, "ompi_mpi_errors_return"},
    };
    for (size_t k = 0; k < sizeof syms / sizeof syms[0]; k++)
        if (!load_symbol(syms[k].slot, syms[k].name))
            return lt_error(LT_ERR_UNSUPPORTED, "dist_init: %s has no symbol %s (Open MPI 4 expected)", name,
                            syms[k].name);
    return LT_OK;
}

/* ---- bf16 / f16 reductions (MPI has no such types: computed in f32) ------ */

#define HALF_OP(name, to_f32, from_f32, combine)                                   \
    static void name(void *in, void *inout, int *len, MPI_Datatype *dt)             \
    {                                                                              \
        (void)dt;                                                                  \
        const uint16_t *a = in;                                                    \
        uint16_t *b = inout;                                                       \
        for (int i = 0; i < *len; i++) {                                           \
            float x = to_f32(a[i]), y = to_f32(b[i]);                              \
            b[i] = from_f32(combine);                                              \
        }                                                                          \
    }
HALF_OP(bf16_sum, lt_bf16_to_f32, lt_f32_to_bf16, x + y)
HALF_OP(f16_sum, lt_f16_to_f32, lt_f32_to_f16, x + y)
HALF_OP(bf16_max, lt_bf16_to_f32, lt_f32_to_bf16, (x > y || x != x) ? x : y)
HALF_OP(f16_max, lt_f16_to_f32, lt_f32_to_f16, (x > y || x != x) ? x : y)

static MPI_Datatype mpi_type(lt_dtype dt)
{
    switch (dt) {
    case LT_F32: return M.f32;
    case LT_F64: return M.f64;
    case LT_I32: return M.i32;
    case LT_I64: return M.i64;
    case LT_U8: return M.u8;
    case LT_BOOL: return M.cbool;
    default: return M.u16; /* bf16, f16 */
    }
}

/* SUM and MEAN add (bool: or), MAX takes the largest (bool: or). */
static MPI_Op mpi_op(lt_dtype dt, int reduce)
{
    if (dt == LT_BOOL)
        return M.lor;
    if (dt == LT_BF16 || dt == LT_F16)
        return reduce == LT_DIST_MAX ? M.half_max[dt == LT_F16] : M.half_sum[dt == LT_F16];
    return reduce == LT_DIST_MAX ? M.max : M.sum;
}

/* ---- waiting with a deadline --------------------------------------------- */

/* Polls reqs[0..n) until all are done or the deadline passes; done[k] tells
 * which finished. */
static lt_status wait_all(MPI_Request *reqs, bool *done, int n, const char *who, const char *what)
{
    double deadline = now_s() + timeout_s;
    int left = 0;
    for (int k = 0; k < n; k++)
        left += !done[k];
    for (long spin = 0; left > 0; spin++) {
        for (int k = 0; k < n; k++) {
            if (done[k])
                continue;
            int flag = 0;
            int rc = M.Test(&reqs[k], &flag, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS) {
                broken = true;
                return mpi_error(who, what, rc);
            }
            if (flag)
                done[k] = true, left--;
        }
        if (left == 0)
            break;
        if (now_s() > deadline) {
            broken = true;
            return lt_error(LT_ERR_DIST, "%s: timed out", who);
        }
        if (spin > 2000) { /* past a short spin, leave the core to the others */
            struct timespec pause = {0, 50000};
            nanosleep(&pause, NULL);
        }
    }
    return LT_OK;
}

/* The other ranks, as "1" or "one of ranks 1, 2, 3". */
static void other_ranks(char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%s", table.size > 2 ? "one of ranks " : "rank ");
    for (int r = 0, k = 0; r < table.size && n < (int)cap - 16; r++)
        if (r != table.rank)
            n += snprintf(buf + n, cap - (size_t)n, "%s%d", k++ ? ", " : "", r);
}

static lt_status wait_one(MPI_Request *req, const char *who, const char *what)
{
    bool done = false;
    lt_status st = wait_all(req, &done, 1, who, what);
    if (st != LT_OK && lt_last_status() == LT_ERR_DIST && broken && !done) {
        char others[128];
        other_ranks(others, sizeof others);
        return lt_error(LT_ERR_DIST,
                        "%s: rank %d: the %s did not complete within %g s (LT_DIST_TIMEOUT): every rank had "
                        "started it, so %s stopped or was lost during the transfer",
                        who, table.rank, what, timeout_s, others);
    }
    return st;
}

/* ---- agreement ------------------------------------------------------------ */

static const char *kind_name(int64_t kind)
{
    static const char *const names[] = {"?", "all_reduce", "broadcast", "all_gather", "reduce_scatter",
                                        "barrier_all", "dist_finalize (the end of the run)", "signature"};
    return kind >= 0 && kind < (int64_t)(sizeof names / sizeof names[0]) ? names[kind] : "?";
}

static void describe(const int64_t *s, char *buf, size_t cap)
{
    static const char *const reduces[] = {"sum", "mean", "max"};
    int n = snprintf(buf, cap, "%s", kind_name(s[0]));
    if (s[0] >= LT_DIST_ALL_REDUCE && s[0] <= LT_DIST_REDUCE_SCATTER) {
        bool root = s[0] == LT_DIST_BROADCAST;
        if (root)
            n += snprintf(buf + n, cap - (size_t)n, "(root %lld)", (long long)s[2]);
        else if (s[0] != LT_DIST_ALL_GATHER && s[2] >= 0 && s[2] < 3)
            n += snprintf(buf + n, cap - (size_t)n, "(%s)", reduces[s[2]]);
        n += snprintf(buf + n, cap - (size_t)n, " of %s [", lt_dtype_name((lt_dtype)s[1]));
        for (int d = 0; d < s[5] && d < 4; d++)
            n += snprintf(buf + n, cap - (size_t)n, "%s%lld", d ? ", " : "", (long long)s[6 + d]);
        n += snprintf(buf + n, cap - (size_t)n, "%s]", s[5] > 4 ? ", ..." : "");
    }
    snprintf(buf + n, cap - (size_t)n, " (collective #%lld)", (long long)s[3]);
}

static void make_signature(const lt_dist_call *c, int64_t *sig)
{
    memset(sig, 0, sizeof(int64_t) * SIG_WORDS);
    sig[0] = c->kind;
    sig[1] = c->dtype;
    sig[2] = c->arg;
    sig[3] = seq++;
    sig[4] = c->numel;
    sig[5] = c->ndim;
    for (int d = 0; d < c->ndim && d < 4; d++)
        sig[6 + d] = c->shape[d];
}

/* Names the ranks whose signature never arrived. */
static lt_status report_silent(const char *who, const bool *done, int size)
{
    char ranks[256] = "";
    int n = 0;
    for (int r = 0; r < size && n < (int)sizeof ranks - 16; r++)
        if (r != table.rank && !done[2 * r])
            n += snprintf(ranks + n, sizeof ranks - (size_t)n, "%s%d", n ? ", " : "", r);
    return lt_error(LT_ERR_DIST,
                    "%s: rank %d: no answer from rank %s within %g s (LT_DIST_TIMEOUT): rank %s stopped or was "
                    "lost, or never calls this collective",
                    who, table.rank, ranks, timeout_s, ranks);
}

/* Exchanges c's signature with every other rank and checks they agree:
 * every rank sees every signature, so every rank gives the same verdict. */
static lt_status agree(const lt_dist_call *c)
{
    if (broken)
        return lt_error(LT_ERR_DIST, "%s: an earlier collective was lost; the distributed run cannot go on",
                        c->who);
    int size = table.size;
    int64_t *sigs = calloc((size_t)size * SIG_WORDS, sizeof *sigs);
    MPI_Request *reqs = calloc((size_t)size * 2, sizeof *reqs);
    bool *done = calloc((size_t)size * 2, sizeof *done);
    if (!sigs || !reqs || !done) {
        free(sigs), free(reqs), free(done);
        return lt_error(LT_ERR_MEMORY, "%s: out of memory", c->who);
    }
    int64_t *mine = &sigs[(size_t)table.rank * SIG_WORDS];
    make_signature(c, mine);
    int rc = MPI_SUCCESS;
    for (int r = 0; r < size && rc == MPI_SUCCESS; r++) {
        done[2 * r] = done[2 * r + 1] = r == table.rank;
        if (r == table.rank)
            continue;
        rc = M.Irecv(&sigs[(size_t)r * SIG_WORDS], SIG_WORDS, M.i64, r, SIG_TAG, M.world, &reqs[2 * r]);
        if (rc == MPI_SUCCESS)
            rc = M.Isend(mine, SIG_WORDS, M.i64, r, SIG_TAG, M.world, &reqs[2 * r + 1]);
    }
    lt_status st = rc == MPI_SUCCESS ? wait_all(reqs, done, 2 * size, c->who, "signature exchange")
                                     : mpi_error(c->who, "signature exchange", rc);
    if (st != LT_OK && broken)
        st = report_silent(c->who, done, size);
    for (int r = 1; st == LT_OK && r < size; r++) {
        if (memcmp(&sigs[(size_t)r * SIG_WORDS], sigs, sizeof(int64_t) * SIG_WORDS) == 0)
            continue;
        char a[160], b[160];
        describe(sigs, a, sizeof a);
        describe(&sigs[(size_t)r * SIG_WORDS], b, sizeof b);
        st = lt_error(LT_ERR_DIST, "%s: the ranks disagree: rank 0 calls %s, rank %d calls %s", c->who, a, r, b);
    }
    free(sigs), free(reqs), free(done);
    return st;
}

/* ---- collectives ------------------------------------------------------------ */

static void divide(void *buf, int64_t n, lt_dtype dt, int by)
{
    for (int64_t i = 0; i < n; i++) {
        if (dt == LT_F32)
            ((float *)buf)[i] /= (float)by;
        else if (dt == LT_F64)
            ((double *)buf)[i] /= by;
        else if (dt == LT_BF16)
            ((uint16_t *)buf)[i] = lt_f32_to_bf16(lt_bf16_to_f32(((uint16_t *)buf)[i]) / (float)by);
        else if (dt == LT_F16)
            ((uint16_t *)buf)[i] = lt_f32_to_f16(lt_f16_to_f32(((uint16_t *)buf)[i]) / (float)by);
    }
}

static lt_status reduce_chunks(const lt_dist_call *c, void *buf)
{
    size_t es = lt_dtype_size(c->dtype);
    int64_t per = CHUNK_BYTES / (int64_t)es;
    for (int64_t at = 0; at < c->numel; at += per) {
        int n = (int)(c->numel - at < per ? c->numel - at : per);
        MPI_Request req;
        int rc = M.Iallreduce(MPI_IN_PLACE, (char *)buf + (size_t)at * es, n, mpi_type(c->dtype),
                              mpi_op(c->dtype, c->arg), M.world, &req);
        lt_status st = rc == MPI_SUCCESS ? wait_one(&req, c->who, "all-reduce") : mpi_error(c->who, "all-reduce", rc);
        if (st != LT_OK)
            return st;
    }
    if (c->arg == LT_DIST_MEAN)
        divide(buf, c->numel, c->dtype, table.size);
    return LT_OK;
}

static lt_status mpi_all_reduce(const lt_dist_call *c, void *buf)
{
    double t0 = now_s();
    pthread_mutex_lock(&lock);
    lt_status st = agree(c);
    if (st == LT_OK)
        st = reduce_chunks(c, buf);
    pthread_mutex_unlock(&lock);
    lt_dist_account(c->numel * (int64_t)lt_dtype_size(c->dtype), now_s() - t0);
    return st;
}

static lt_status mpi_broadcast(const lt_dist_call *c, void *buf)
{
    double t0 = now_s();
    pthread_mutex_lock(&lock);
    lt_status st = agree(c);
    int64_t bytes = c->numel * (int64_t)lt_dtype_size(c->dtype);
    for (int64_t at = 0; st == LT_OK && at < bytes; at += CHUNK_BYTES) {
        int n = (int)(bytes - at < CHUNK_BYTES ? bytes - at : CHUNK_BYTES);
        MPI_Request req;
        int rc = M.Ibcast((char *)buf + at, n, M.byte, c->arg, M.world, &req);
        st = rc == MPI_SUCCESS ? wait_one(&req, c->who, "broadcast") : mpi_error(c->who, "broadcast", rc);
    }
    pthread_mutex_unlock(&lock);
    lt_dist_account(bytes, now_s() - t0);
    return st;
}

static lt_status mpi_all_gather(const lt_dist_call *c, const void *send, void *recv)
{
    int64_t bytes = c->numel * (int64_t)lt_dtype_size(c->dtype);
    if (bytes > CHUNK_BYTES)
        return lt_error(LT_ERR_UNSUPPORTED, "%s: %lld bytes per rank is more than this build sends at once (%lld)",
                        c->who, (long long)bytes, (long long)CHUNK_BYTES);
    double t0 = now_s();
    pthread_mutex_lock(&lock);
    lt_status st = agree(c);
    if (st == LT_OK && bytes > 0) {
        MPI_Request req;
        int rc = M.Iallgather(send, (int)bytes, M.byte, recv, (int)bytes, M.byte, M.world, &req);
        st = rc == MPI_SUCCESS ? wait_one(&req, c->who, "all-gather") : mpi_error(c->who, "all-gather", rc);
    }
    pthread_mutex_unlock(&lock);
    lt_dist_account(bytes * table.size, now_s() - t0);
    return st;
}

static lt_status mpi_reduce_scatter(const lt_dist_call *c, const void *send, void *recv)
{
    int64_t block = c->numel / table.size;
    if (block * (int64_t)lt_dtype_size(c->dtype) > CHUNK_BYTES)
        return lt_error(LT_ERR_UNSUPPORTED, "%s: a block of %lld elements is more than this build sends at once",
                        c->who, (long long)block);
    double t0 = now_s();
    pthread_mutex_lock(&lock);
    lt_status st = agree(c);
    if (st == LT_OK && block > 0) {
        MPI_Request req;
        int rc = M.Ireduce_scatter_block(send, recv, (int)block, mpi_type(c->dtype), mpi_op(c->dtype, c->arg),
                                         M.world, &req);
        st = rc == MPI_SUCCESS ? wait_one(&req, c->who, "reduce-scatter") : mpi_error(c->who, "reduce-scatter", rc);
    }
    if (st == LT_OK && c->arg == LT_DIST_MEAN)
        divide(recv, block, c->dtype, table.size);
    pthread_mutex_unlock(&lock);
    lt_dist_account(c->numel * (int64_t)lt_dtype_size(c->dtype), now_s() - t0);
    return st;
}

static lt_status mpi_barrier(const char *who)
{
    lt_dist_call c = {.who = who, .kind = LT_DIST_BARRIER, .dtype = LT_U8};
    pthread_mutex_lock(&lock);
    lt_status st = agree(&c);
    if (st == LT_OK) {
        MPI_Request req;
        int rc = M.Ibarrier(M.world, &req);
        st = rc == MPI_SUCCESS ? wait_one(&req, who, "barrier") : mpi_error(who, "barrier", rc);
    }
    pthread_mutex_unlock(&lock);
    return st;
}

/* ---- non-blocking all-reduce (overlap) --------------------------------------- */

static lt_status mpi_all_reduce_start(const lt_dist_call *c, void *buf, lt_dist_request **out)
{
    *out = NULL;
    int64_t bytes = c->numel * (int64_t)lt_dtype_size(c->dtype);
    if (bytes > CHUNK_BYTES)
        return mpi_all_reduce(c, buf); /* finished at once */
    lt_dist_request *r = calloc(1, sizeof *r);
    if (!r)
        return lt_error(LT_ERR_MEMORY, "%s: out of memory", c->who);
    r->call = *c;
    r->call.shape = NULL; /* only the signature reads it */
    r->call.ndim = 0;
    r->buf = buf;
    r->bytes = bytes;
    pthread_mutex_lock(&lock);
    lt_status st = agree(c);
    r->started = now_s(); /* after the ranks met: waiting for a late rank is not transfer time */
    if (st == LT_OK) {
        int rc = M.Iallreduce(MPI_IN_PLACE, buf, (int)c->numel, mpi_type(c->dtype), mpi_op(c->dtype, c->arg),
                              M.world, &r->req);
        if (rc != MPI_SUCCESS)
            st = mpi_error(c->who, "all-reduce", rc);
    }
    pthread_mutex_unlock(&lock);
    if (st != LT_OK) {
        free(r);
        return st;
    }
    *out = r;
    return LT_OK;
}

static lt_status mpi_test(lt_dist_request *r, bool *done)
{
    *done = true;
    if (!r || r->finished)
        return LT_OK;
    int flag = 0;
    pthread_mutex_lock(&lock);
    int rc = M.Test(&r->req, &flag, MPI_STATUS_IGNORE);
    pthread_mutex_unlock(&lock);
    if (rc != MPI_SUCCESS)
        return mpi_error(r->call.who, "all-reduce", rc);
    if (flag)
        r->finished = true, r->finished_at = now_s();
    *done = r->finished;
    return LT_OK;
}

static lt_status mpi_wait(lt_dist_request *r, double *span_s, double *blocked_s)
{
    *span_s = *blocked_s = 0;
    if (!r)
        return LT_OK;
    double t0 = now_s();
    lt_status st = LT_OK;
    if (!r->finished) {
        pthread_mutex_lock(&lock);
        st = wait_one(&r->req, r->call.who, "all-reduce");
        pthread_mutex_unlock(&lock);
        r->finished_at = now_s();
        *blocked_s = r->finished_at - t0;
    }
    *span_s = r->finished_at - r->started;
    if (st == LT_OK && r->call.arg == LT_DIST_MEAN)
        divide(r->buf, r->call.numel, r->call.dtype, table.size);
    lt_dist_account(r->bytes, *blocked_s);
    free(r);
    return st;
}

/* ---- start and end ------------------------------------------------------------ */

static lt_status mpi_finalize(void)
{
    pthread_mutex_lock(&lock);
    lt_status st = LT_OK;
    if (!finalized && !broken) {
        lt_dist_call c = {.who = "dist_finalize", .kind = LT_DIST_FINALIZE, .dtype = LT_U8};
        st = agree(&c);
        /* ranks that disagree skip MPI_Finalize, which would wait for the others */
        if (st == LT_OK)
            M.Finalize();
        finalized = true;
    }
    pthread_mutex_unlock(&lock);
    return st;
}

static lt_status create_half_ops(void)
{
    MPI_User_function *fns[4] = {bf16_sum, f16_sum, bf16_max, f16_max};
    MPI_Op *ops[4] = {&M.half_sum[0], &M.half_sum[1], &M.half_max[0], &M.half_max[1]};
    for (int k = 0; k < 4; k++) {
        int rc = M.Op_create(fns[k], 1, ops[k]);
        if (rc != MPI_SUCCESS)
            return mpi_error("dist_init", "MPI_Op_create", rc);
    }
    return LT_OK;
}

lt_status lt_dist_mpi_open(const lt_dist_rt **out)
{
    *out = NULL;
    lt_status st = load_library();
    if (st != LT_OK)
        return st;
    const char *t = getenv("LT_DIST_TIMEOUT");
    char *end = NULL;
    double v = t ? strtod(t, &end) : 0;
    if (t && *t && end && !*end && v > 0)
        timeout_s = v;
    int provided = 0;
    int rc = M.Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
    if (rc != MPI_SUCCESS)
        return mpi_error("dist_init", "MPI_Init_thread", rc);
    M.Comm_set_errhandler(M.world, M.errors_return);
    table = (lt_dist_rt){
        .name = "mpi",
        .local_rank = env_int("OMPI_COMM_WORLD_LOCAL_RANK", 0),
        .all_reduce = mpi_all_reduce,
        .broadcast = mpi_broadcast,
        .all_gather = mpi_all_gather,
        .reduce_scatter = mpi_reduce_scatter,
        .barrier = mpi_barrier,
        .all_reduce_start = mpi_all_reduce_start,
        .test = mpi_test,
        .wait = mpi_wait,
        .finalize = mpi_finalize,
    };
    M.Comm_rank(M.world, &table.rank);
    M.Comm_size(M.world, &table.size);
    if (provided < MPI_THREAD_SERIALIZED)
        fprintf(stderr, "lazytensor: Open MPI gave thread level %d; collectives stay on one thread at a time\n",
                provided);
    st = create_half_ops();
    if (st != LT_OK)
        return st;
    *out = &table;
    return LT_OK;
}

double lt_dist_mpi_timeout(void) { return timeout_s; }

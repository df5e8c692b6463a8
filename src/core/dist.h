/*
 * dist.h - the distributed runtime table: how collectives reach the engine
 * that moves the bytes between processes.
 *
 * Core holds the table in use. Until a higher layer installs another one
 * (lt_dist_init installs Open MPI's, src/backend/dist_mpi.c, when the
 * process was started by a launcher) it is the world of one, where every
 * collective is an identity. Eager kernels (src/eager/collective.c) call
 * the table; compiled and interpreted step programs reach those kernels
 * through their own runtime call, so every device goes through this one
 * table and nothing but dist_mpi.c sees mpi.h.
 *
 * Buffers are contiguous host memory. Every call names the public op in
 * its errors (`who`), checks that all ranks make the same call (op, dtype,
 * shape, root or reduction) and returns LT_OK or an error (LT_ERR_DIST for
 * a disagreement, a lost rank or a timeout).
 */
#ifndef LT_CORE_DIST_H
#define LT_CORE_DIST_H

#include "core/core.h"

/* Reductions (the public LT_REDUCE_* values). */
enum { LT_DIST_SUM = 0, LT_DIST_MEAN = 1, LT_DIST_MAX = 2 };

/* What a collective is, for the cross-rank agreement check and messages. */
typedef struct lt_dist_call {
    const char *who;     /* the op's name in messages */
    int kind;            /* lt_dist_kind */
    lt_dtype dtype;
    int64_t numel;       /* elements of this rank's input */
    int ndim;
    const int64_t *shape;
    int arg;             /* reduction or root */
} lt_dist_call;

enum { LT_DIST_ALL_REDUCE = 1, LT_DIST_BROADCAST, LT_DIST_ALL_GATHER, LT_DIST_REDUCE_SCATTER,
       LT_DIST_BARRIER, LT_DIST_FINALIZE, LT_DIST_SIGNATURE };

/* A collective started and not yet finished (overlap of communication with
 * computation). */
typedef struct lt_dist_request lt_dist_request;

typedef struct lt_dist_rt {
    const char *name; /* "single" or "mpi" */
    int rank, size, local_rank;
    /* buf[0..numel) in place: reduced over all ranks (MEAN divides) */
    lt_status (*all_reduce)(const lt_dist_call *c, void *buf);
    /* buf[0..numel) in place: root's values on every rank */
    lt_status (*broadcast)(const lt_dist_call *c, void *buf);
    /* recv[size * numel]: every rank's send, in rank order */
    lt_status (*all_gather)(const lt_dist_call *c, const void *send, void *recv);
    /* recv[numel / size]: this rank's block of the reduction of send */
    lt_status (*reduce_scatter)(const lt_dist_call *c, const void *send, void *recv);
    lt_status (*barrier)(const char *who);
    /* Non-blocking all_reduce of buf in place: *req is waited with wait.
     * Agreement is checked when it starts. */
    lt_status (*all_reduce_start)(const lt_dist_call *c, void *buf, lt_dist_request **req);
    /* Moves req forward without blocking; *done once it has finished. */
    lt_status (*test)(lt_dist_request *req, bool *done);
    /* Waits for req and frees it (also on error). *span_s: from its start
     * to its end; *blocked_s: the part of it spent blocked here. */
    lt_status (*wait)(lt_dist_request *req, double *span_s, double *blocked_s);
    /* Ends the distributed run (checks that every rank ends too). */
    lt_status (*finalize)(void);
} lt_dist_rt;

/* The table in use (never NULL). */
const lt_dist_rt *lt_dist_rt_get(void);
/* Installs a table (NULL: back to the world of one). */
void lt_dist_rt_set(const lt_dist_rt *rt);
/* The world of one. */
const lt_dist_rt *lt_dist_rt_single(void);

/* Bytes moved by collectives and seconds spent waiting on them, counted by
 * every table (for the trainer's summary and lt_dist_stats). */
void lt_dist_account(int64_t bytes, double seconds);
/* Totals since the process started. */
void lt_dist_counters(int64_t *bytes, int64_t *calls, double *seconds);

#endif

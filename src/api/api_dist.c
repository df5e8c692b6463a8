/*
 * api_dist.c - the public distributed API: starting and ending a run, the
 * rank and world size, and the collectives as ops (traced on the lazy
 * device, run at once on cpu).
 *
 * Without a launcher the world has one rank and nothing of MPI is loaded:
 * every collective is the op on a world of one (a copy). Under mpirun the
 * first call that needs the world (lt_dist_init, or any collective)
 * installs Open MPI's runtime table (src/backend/dist_mpi.c), and an exit
 * handler ends the run if the program does not.
 */
#include "api/api.h"
#include "backend/dist_mpi.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool started, ended;

/* Rank and size from the launcher's environment, before MPI is up. */
static int env_int(const char *name, int fallback)
{
    const char *v = getenv(name);
    char *end = NULL;
    long n = v ? strtol(v, &end, 10) : 0;
    return v && *v && end && !*end && n >= 0 && n < (1L << 30) ? (int)n : fallback;
}

static void end_at_exit(void)
{
    if (lt_dist_finalize() != LT_OK)
        fprintf(stderr, "lazytensor: %s\n", lt_last_error());
}

lt_status lt_dist_init(void)
{
    lt_status st = LT_OK;
    pthread_mutex_lock(&init_lock);
    if (ended)
        st = lt_error(LT_ERR_STATE, "dist_init: the distributed run has ended (lt_dist_finalize was called)");
    else if (!started && lt_dist_mpi_launched()) {
        const lt_dist_rt *rt = NULL;
        st = lt_dist_mpi_open(&rt);
        if (st == LT_OK) {
            lt_dist_rt_set(rt);
            atexit(end_at_exit);
        }
    }
    if (st == LT_OK)
        started = true;
    pthread_mutex_unlock(&init_lock);
    return st;
}

lt_status lt_dist_finalize(void)
{
    pthread_mutex_lock(&init_lock);
    lt_status st = LT_OK;
    if (started && !ended)
        st = lt_dist_rt_get()->finalize();
    ended = started;
    pthread_mutex_unlock(&init_lock);
    return st;
}

int lt_dist_rank(void)
{
    return started ? lt_dist_rt_get()->rank : env_int("OMPI_COMM_WORLD_RANK", env_int("PMIX_RANK", 0));
}

int lt_dist_world_size(void)
{
    return started ? lt_dist_rt_get()->size : lt_dist_mpi_launched() ? env_int("OMPI_COMM_WORLD_SIZE", 1) : 1;
}

int lt_dist_local_rank(void)
{
    return started ? lt_dist_rt_get()->local_rank : env_int("OMPI_COMM_WORLD_LOCAL_RANK", 0);
}

const char *lt_dist_backend(void) { return lt_dist_rt_get()->name; }

void lt_dist_stats_get(lt_dist_stats *s)
{
    if (s)
        lt_dist_counters(&s->bytes, &s->calls, &s->seconds);
}

/* ---- collectives -------------------------------------------------------- */

/* The world must be up before a collective is recorded: its size is part
 * of the op. */
static bool ready(const char *name)
{
    if (started && !ended)
        return true;
    if (ended) {
        lt_error(LT_ERR_STATE, "%s: the distributed run has ended (lt_dist_finalize was called)", name);
        return false;
    }
    return lt_dist_init() == LT_OK;
}

static lt_tensor *collective(lt_op op, lt_tensor *t, int64_t reduce, int64_t root)
{
    if (!ready(lt_op_name(op)))
        return NULL;
    lt_attrs a = lt_attrs_init();
    a.i[0] = reduce;
    a.i[1] = root;
    a.i[2] = lt_dist_rt_get()->size;
    a.ni = 3;
    return lt_call1(op, t, &a);
}

lt_tensor *lt_all_reduce(lt_tensor *t, lt_reduce_op op) { return collective(LT_OP_ALL_REDUCE, t, op, 0); }

lt_tensor *lt_broadcast(lt_tensor *t, int root) { return collective(LT_OP_BROADCAST, t, 0, root); }

lt_tensor *lt_all_gather(lt_tensor *t) { return collective(LT_OP_ALL_GATHER, t, 0, 0); }

lt_tensor *lt_reduce_scatter(lt_tensor *t, lt_reduce_op op) { return collective(LT_OP_REDUCE_SCATTER, t, op, 0); }

/* In-place forms: the collective's result copied back, which also writes
 * through views (and is an in-place substitution on the lazy device). */
static lt_tensor *copy_back(lt_tensor *dst, lt_tensor *result)
{
    if (!result)
        return NULL;
    lt_tensor *r = lt_copy_(dst, result);
    return r;
}

lt_tensor *lt_all_reduce_(lt_tensor *t, lt_reduce_op op) { return copy_back(t, lt_all_reduce(t, op)); }

lt_tensor *lt_broadcast_(lt_tensor *t, int root) { return copy_back(t, lt_broadcast(t, root)); }

lt_status lt_barrier_all(void)
{
    if (!ready("barrier_all"))
        return lt_last_status();
    return lt_dist_rt_get()->barrier("barrier_all");
}

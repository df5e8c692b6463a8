/*
 * pool.h - the library's own worker pool: every parallel loop of the eager
 * kernels, of OpenBLAS calls and of compiled programs runs on it.
 *
 * Why not OpenMP's pool: libgomp reads its wait policy once, from the
 * environment, when it is loaded. Its default lets idle workers spin for
 * about a millisecond after every parallel loop, which on a small or busy
 * machine takes the core from the thread that has work (steps measured 4x
 * slower on an idle 2-core machine, 20x under load). A library cannot set
 * that policy for its user, so it keeps its own pool whose waiting it
 * controls: a worker spins briefly (LT_POOL_SPIN_US, default 50 us), then
 * sleeps on a futex, and work is handed out in chunks claimed from a shared
 * counter, so a worker that the OS has descheduled holds up nothing: the
 * caller takes its chunks.
 *
 * Threads: lt_set_num_threads(n); by default LT_NUM_THREADS, else
 * OMP_NUM_THREADS, else the CPUs this process may run on.
 *
 * Determinism: chunk boundaries depend only on n, the grain and the thread
 * count, never on which thread ran a chunk, so a loop that writes per-chunk
 * partial results and combines them in chunk order gives the same bits on
 * every run.
 */
#ifndef LT_POOL_H
#define LT_POOL_H

#include <stdint.h>

/* Body of a parallel loop: processes [begin, end) of the iteration space.
 * chunk is the index of the chunk (0 .. lt_parallel_chunks(...) - 1). */
typedef void (*lt_range_fn)(void *ctx, int64_t begin, int64_t end, int64_t chunk);

/*
 * Runs fn over [0, n) in chunks of at least `grain` iterations (rounded to
 * multiples of `align` when align > 1, so vector loops stay whole), on the
 * pool's threads and the caller's. Runs inline, as one chunk, when n is
 * below 2 * grain, when the pool has one thread, or when called from inside
 * another parallel loop or while another thread uses the pool. Returns when
 * every chunk is done.
 */
void lt_parallel_for(int64_t n, int64_t grain, int64_t align, lt_range_fn fn, void *ctx);

/* The number of chunks lt_parallel_for(n, grain, align, ...) uses, for
 * callers that keep one partial result per chunk. */
int64_t lt_parallel_chunks(int64_t n, int64_t grain, int64_t align);

/* Threads of the pool, the caller included. */
int lt_pool_threads(void);
/* Sets it (n <= 0: the default); takes effect for the next loop. */
void lt_pool_set_threads(int n);

#endif

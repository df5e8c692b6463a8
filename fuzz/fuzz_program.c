/*
 * fuzz_program.c - random programs run eagerly and lazily, eager results
 * as the oracle.
 *
 * The input decodes into a program (program.h): up to MAX_STEPS steps over
 * a few tensor slots, covering factories, elementwise ops, reductions
 * (also over empty dims), views of views, in-place ops into views and
 * expanded tensors, indexing with out-of-range indices, matmul, failing
 * ops, releases and use after release, barriers and reads. The program
 * runs on the cpu device, recording every step's status, result metadata
 * and values read; then on the lazy device with the interp backend, and
 * (on a share of the inputs) with the compiled cpu backend. Properties:
 *   - a step that succeeds on cpu succeeds on lazy, with the same dtype,
 *     shape and strides; values read agree (NaN-aware, with a tolerance
 *     for floating point);
 *   - a step that fails on cpu fails on lazy with the same status, or (an
 *     error deferred to the barrier) the lazy op succeeds and then the
 *     next barrier fails; dropping the tensors the failed op wrote, the
 *     barrier then succeeds and every other tensor holds its cpu value
 *     (a failed barrier changes nothing);
 *   - any use of a released handle fails with LT_ERR_RELEASED everywhere;
 *   - no crash, no sanitizer report, no tensor handle leaked.
 *
 * Environment:
 *   FUZZ_PROGRAM_SKIP=a,b     families to leave out (program.h: size0,
 *                             empty_reduce, release, view_inplace,
 *                             expand_inplace, async, index, matmul,
 *                             bad_index, cast, deferred, inf_extremum)
 *   FUZZ_PROGRAM_BACKENDS     lazy backends to compare (default
 *                             "interp,cpu")
 *   FUZZ_PROGRAM_CPU_EVERY=N  compiled backend on one input in N (by a
 *                             hash of the input, so a crash reproduces;
 *                             default 4; compiles run cc)
 *   FUZZ_PROGRAM_TRACE=1      print each program as C while it runs on cpu
 *   LT_CACHE_DIR              compiled programs (default
 *                             /tmp/lt-fuzz-cache-<uid>)
 */
#include "program_internal.h"

#include <math.h>
#include <sys/stat.h>

static unsigned skip_mask;
static bool trace_on, use_interp = true, use_compiled = true;
static uint64_t compiled_every = 4;
static lt_device lazy_dev;

/* What the cpu run did: the oracle for the lazy runs. */
typedef struct cpu_trace {
    int nsteps;
    step_result steps[MAX_STEPS];
    prog_values snap[MAX_STEPS][NSLOTS]; /* every slot after a failed step */
    bool snap_live[MAX_STEPS][NSLOTS];
    prog_values final[NSLOTS];
    bool final_live[NSLOTS];
} cpu_trace;

static cpu_trace tr;

/* ---- configuration ----------------------------------------------------------------- */

static const struct { const char *name; unsigned bit; } families[] = {
    {"size0", F_SIZE0},         {"empty_reduce", F_EMPTY_REDUCE},     {"release", F_RELEASE},
    {"view_inplace", F_VIEW_INPLACE}, {"expand_inplace", F_EXPAND_INPLACE}, {"async", F_ASYNC},
    {"index", F_INDEX},         {"matmul", F_MATMUL},                 {"bad_index", F_BAD_INDEX},
    {"cast", F_CAST},           {"deferred", F_DEFERRED},             {"inf_extremum", F_INF_EXTREMUM},
};

static unsigned parse_skip(const char *text)
{
    unsigned mask = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", text ? text : "");
    for (char *save = NULL, *w = strtok_r(buf, ", ", &save); w; w = strtok_r(NULL, ", ", &save)) {
        bool known = false;
        for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
            if (strcmp(w, families[i].name) == 0)
                mask |= families[i].bit, known = true;
        if (!known) {
            fprintf(stderr, "fuzz_program: unknown family \"%s\" in FUZZ_PROGRAM_SKIP\n", w);
            exit(2);
        }
    }
    return mask;
}

/* A private compile cache, unless the caller chose one. */
static void set_cache_dir(void)
{
    if (getenv("LT_CACHE_DIR"))
        return;
    char dir[128];
    snprintf(dir, sizeof dir, "/tmp/lt-fuzz-cache-%ld", (long)getuid());
    mkdir(dir, 0700);
    setenv("LT_CACHE_DIR", dir, 1);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    fuzz_common_init();
    set_cache_dir();
    skip_mask = parse_skip(getenv("FUZZ_PROGRAM_SKIP"));
    trace_on = getenv("FUZZ_PROGRAM_TRACE") && atoi(getenv("FUZZ_PROGRAM_TRACE")) > 0;
    const char *backends = getenv("FUZZ_PROGRAM_BACKENDS");
    if (backends) {
        use_interp = strstr(backends, "interp") != NULL;
        use_compiled = strstr(backends, "cpu") != NULL;
    }
    const char *every = getenv("FUZZ_PROGRAM_CPU_EVERY");
    if (every && atoi(every) > 0)
        compiled_every = (uint64_t)atoi(every);
    lazy_dev = lt_device_parse("lazy");
    /* A small program cache bounds the memory of long runs (every new
     * graph is a program) and exercises eviction and disk-cache reloads. */
    FUZZ_CHECK(lt_lazy_set_cache_size(64) == LT_OK, "setting the program cache size");
    if (use_compiled && lt_lazy_set_backend("cpu") != LT_OK) {
        fprintf(stderr, "fuzz_program: the compiled backend is unavailable (%s); interp only\n", lt_last_error());
        use_compiled = false;
    }
    fprintf(stderr, "fuzz_program: backends%s%s (compiled on 1 input in %llu), skip 0x%x, cache %s\n",
            use_interp ? " interp" : "", use_compiled ? " cpu" : "", (unsigned long long)compiled_every, skip_mask,
            getenv("LT_CACHE_DIR"));
    return 0;
}

/* ---- comparison ---------------------------------------------------------------------- */

static bool close_enough(double e, double l, lt_dtype dt)
{
    if (isnan(e) || isnan(l))
        return isnan(e) && isnan(l);
    if (e == l)
        return true;
    if (!lt_dtype_is_floating(dt))
        return false;
    double tol = dt == LT_F16 || dt == LT_BF16 ? 1e-2 : dt == LT_F32 ? 1e-4 : 1e-9;
    return fabs(e - l) <= tol * (1 + fabs(e));
}

static const char *backend_now(void) { return lt_lazy_backend(); }

static void compare_values(const prog_values *c, const prog_values *l, int step, const char *what)
{
    bool same_shape = c->dt == l->dt && c->ndim == l->ndim && c->numel == l->numel;
    for (int d = 0; same_shape && d < c->ndim; d++)
        same_shape = c->shape[d] == l->shape[d];
    FUZZ_CHECK(same_shape, "step %d, %s: cpu read %s[%d dims, %lld elements], lazy (%s) %s[%d dims, %lld elements]",
               step, what, lt_dtype_name(c->dt), c->ndim, (long long)c->numel, backend_now(), lt_dtype_name(l->dt),
               l->ndim, (long long)l->numel);
    for (int64_t i = 0; i < c->numel; i++)
        FUZZ_CHECK(close_enough(c->v[i], l->v[i], c->dt),
                   "step %d, %s: element %lld is %.9g on cpu but %.9g on lazy (%s), dtype %s", step, what,
                   (long long)i, c->v[i], l->v[i], backend_now(), lt_dtype_name(c->dt));
}

static void compare_meta(const step_result *c, const step_result *l, int step)
{
    FUZZ_CHECK(c->made == l->made && c->same_as == l->same_as && c->dropped == l->dropped && c->dst == l->dst,
               "step %d: cpu made=%d same_as=%d dropped=%d, lazy (%s) made=%d same_as=%d dropped=%d", step, c->made,
               c->same_as, c->dropped, backend_now(), l->made, l->same_as, l->dropped);
    if (!c->made)
        return;
    bool same = c->dt == l->dt && c->ndim == l->ndim;
    for (int d = 0; same && d < c->ndim; d++)
        same = c->shape[d] == l->shape[d] && c->strides[d] == l->strides[d];
    FUZZ_CHECK(same, "step %d: the result is %s with %d dims on cpu, %s with %d dims on lazy (%s), or their shapes "
               "or strides differ", step, lt_dtype_name(c->dt), c->ndim, lt_dtype_name(l->dt), l->ndim,
               backend_now());
}

/* ---- runs ------------------------------------------------------------------------------ */

static void run_init(prog_run *r, lt_device dev, const uint8_t *data, size_t size)
{
    memset(r, 0, sizeof *r);
    r->dev = dev;
    r->bytes = data;
    r->len = size;
    r->skip = skip_mask;
}

/* Reads every live slot (which must succeed). */
static void snapshot(prog_run *r, prog_values *vals, bool *live)
{
    for (int s = 0; s < NSLOTS; s++) {
        live[s] = r->slot[s] != NULL;
        if (live[s])
            FUZZ_CHECK(prog_read(r->slot[s], &vals[s]) == LT_OK, "reading slot t%d on cpu", s);
    }
}

static void free_values(prog_values *vals, bool *live)
{
    for (int s = 0; s < NSLOTS; s++)
        if (live[s])
            prog_values_free(&vals[s]);
}

static void run_cpu(const uint8_t *data, size_t size)
{
    prog_run r;
    run_init(&r, lt_device_cpu(), data, size);
    r.trace = trace_on;
    if (trace_on)
        fprintf(stderr, "program of %zu bytes (t0..t%d are slots, dev the device):\n", size, NSLOTS - 1);
    int k = 0;
    for (; k < MAX_STEPS && !prog_done(&r); k++) {
        prog_step(&r);
        tr.steps[k] = r.res; /* takes the values read */
        if (r.res.status != LT_OK)
            snapshot(&r, tr.snap[k], tr.snap_live[k]);
    }
    tr.nsteps = k;
    snapshot(&r, tr.final, tr.final_live);
    prog_release_all(&r);
}

static void free_trace(void)
{
    for (int k = 0; k < tr.nsteps; k++) {
        prog_values_free(&tr.steps[k].values);
        if (tr.steps[k].status != LT_OK)
            free_values(tr.snap[k], tr.snap_live[k]);
    }
    free_values(tr.final, tr.final_live);
}

/* After an error deferred to the barrier: drop what the failed op wrote
 * (its result, or every tensor of the family it wrote into); the barrier
 * must then succeed and every other tensor hold its value from before. */
static void recover(prog_run *r, int k)
{
    const step_result *l = &r->res;
    int slot = l->made || l->inplace ? l->dst : l->same_as;
    int family = slot >= 0 ? r->family[slot] : -1;
    for (int s = 0; s < NSLOTS; s++)
        if (r->slot[s] && (s == slot || r->family[s] == family)) {
            lt_release(r->slot[s]);
            r->slot[s] = NULL;
        }
    lt_clear_error();
    lt_status st = lt_mark_step();
    FUZZ_CHECK(st == LT_OK, "step %d: after a failed barrier and releasing what the failed op wrote, the next "
               "barrier fails too (%s)", k, lt_status_name(st));
    for (int s = 0; s < NSLOTS; s++) {
        if (!r->slot[s])
            continue;
        FUZZ_CHECK(tr.snap_live[k][s], "step %d: slot t%d is live on lazy only", k, s);
        prog_values v;
        FUZZ_CHECK(prog_read(r->slot[s], &v) == LT_OK, "step %d: reading t%d after a failed barrier", k, s);
        char what[64];
        snprintf(what, sizeof what, "t%d after the failed barrier", s);
        compare_values(&tr.snap[k][s], &v, k, what);
        prog_values_free(&v);
    }
}

/* One step of a lazy run against the cpu trace; false: stop the run. */
static bool check_step(prog_run *r, int k)
{
    const step_result *c = &tr.steps[k], *l = &r->res;
    FUZZ_CHECK(c->op == l->op, "step %d decoded as op %d on cpu but %d on lazy", k, c->op, l->op);
    if (c->status == LT_OK) {
        FUZZ_CHECK(l->status == LT_OK, "step %d: succeeds on cpu, fails on lazy (%s) with %s", k, backend_now(),
                   lt_status_name(l->status));
        compare_meta(c, l, k);
        if (c->read)
            compare_values(&c->values, &l->values, k, "a read");
        return true;
    }
    if (l->status != LT_OK) {
        FUZZ_CHECK(l->status == c->status, "step %d: fails with %s on cpu but with %s on lazy (%s)", k,
                   lt_status_name(c->status), lt_status_name(l->status), backend_now());
        return true;
    }
    /* cpu refused, the lazy op was accepted: the error must surface at
     * the barrier (reads and barriers are barriers themselves). */
    FUZZ_CHECK(!l->read && !l->barrier, "step %d: a read or barrier fails on cpu (%s) but succeeds on lazy (%s)", k,
               lt_status_name(c->status), backend_now());
    if (skip_mask & F_DEFERRED)
        return false;
    lt_clear_error();
    lt_status st = lt_mark_step();
    FUZZ_CHECK(st != LT_OK, "step %d: fails on cpu with %s, but lazy (%s) accepts it and the next barrier succeeds",
               k, lt_status_name(c->status), backend_now());
    recover(r, k);
    return false;
}

static void run_lazy_on(const char *backend, const uint8_t *data, size_t size)
{
    FUZZ_CHECK(lt_lazy_set_backend(backend) == LT_OK, "selecting backend %s", backend);
    prog_run r;
    run_init(&r, lazy_dev, data, size);
    bool complete = true;
    for (int k = 0; k < tr.nsteps && complete; k++) {
        r.force_skip = tr.steps[k].skipped;
        prog_step(&r);
        complete = check_step(&r, k);
        prog_values_free(&r.res.values);
    }
    for (int s = 0; complete && s < NSLOTS; s++) {
        FUZZ_CHECK((r.slot[s] != NULL) == tr.final_live[s], "at the end, slot t%d is %s on cpu but not on lazy (%s)",
                   s, tr.final_live[s] ? "live" : "empty", backend_now());
        if (!r.slot[s])
            continue;
        prog_values v;
        FUZZ_CHECK(prog_read(r.slot[s], &v) == LT_OK, "reading t%d at the end on lazy (%s)", s, backend_now());
        char what[32];
        snprintf(what, sizeof what, "t%d at the end", s);
        compare_values(&tr.final[s], &v, tr.nsteps, what);
        prog_values_free(&v);
    }
    prog_release_all(&r);
    lt_clear_error();
    FUZZ_CHECK(lt_mark_step() == LT_OK, "a barrier with every tensor released fails on lazy (%s)", backend_now());
}

static uint64_t hash_input(const uint8_t *data, size_t size)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < size; i++)
        h = (h ^ data[i]) * 1099511628211ull;
    return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    int64_t live_before = lt_live_tensor_count();
    run_cpu(data, size);
    if (use_interp)
        run_lazy_on("interp", data, size);
    if (use_compiled && hash_input(data, size) % compiled_every == 0)
        run_lazy_on("cpu", data, size);
    free_trace();
    lt_clear_error();
    FUZZ_CHECK(lt_live_tensor_count() == live_before, "%lld tensor handles leaked",
               (long long)(lt_live_tensor_count() - live_before));
    return 0;
}

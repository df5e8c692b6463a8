/*
 * cpu.c - the "cpu" backend: compiles each canonical graph into one native
 * program (src/compiler: schedule, memory plan, C renderer, system C
 * compiler, disk cache) and runs it.
 *
 * An execution binds the program's buffer table: leaves are the input
 * buffers, outputs get fresh buffers (or a donated leaf's buffer when the
 * barrier allows it and the plan proved it safe), temporaries live in one
 * workspace allocation. The program's calls into eager kernels (matmul,
 * conv, indexing, random numbers...) come back through rt_call, which wraps
 * the buffers in strided CPU tensor handles and runs lt_eager_run.
 *
 * A compile has a quick part (cpu_prepare: schedule, memory plan, C source)
 * and a slow part (cpu_build: the system C compiler, or the disk cache).
 * Both start with the plan cache (compiler/plan_cache.c): a graph compiled
 * by an earlier process comes back with its plan and object, and skips
 * the quick part too. On a miss, compile does both parts; compile_start
 * only copies the graph, and compile_finish (which the tiered backend,
 * tiered.c, runs on its background thread) does both. Every program
 * built or found by its source stores its plan in the plan cache.
 */
#include "compiler/compiler.h"
#include "compiler/kir.h"
#include "compiler/plan_cache.h"
#include "eager/eager.h"
#include "core/pool.h"
#include "lazy/lazy.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The runtime table a program receives (the generated prelude declares the
 * same struct): eager calls, and the library's pool for parallel kernels. */
typedef struct lt_rt {
    void *ctx;
    int (*call)(void *ctx, int id);
    void (*parallel_for)(int64_t n, int64_t grain, int64_t align, lt_range_fn fn, void *ctx);
} lt_rt;

typedef int (*entry_fn)(void *const *B, const double *S, const lt_rt *rt);

typedef struct cpu_exe {
    kir_plan plan;
    void *handle;
    entry_fn entry; /* NULL until built (see cpu_compile_start) */
    void *interp; /* set instead when the compiler stopped working (timed out) */
    lt_graph *pending; /* compile_start's copy of the graph, until compile_finish prepares it */
    char *src;    /* the C source while it waits to be built */
    size_t len;
    lt_cc_unit units[LT_CC_MAX_UNITS]; /* its translation units */
    int nunits;
    kir_plan_info info; /* counters of the compile, for the metrics and the plan cache */
} cpu_exe;

/* ---- compile ---------------------------------------------------------------- */

/* LT_DUMP_KERNELS=dir: the generated C of every compiled graph (a program
 * of several units as graph-<hash>.part1.c, .part2.c, ...). */
static void dump_source(const char *src, size_t len, const lt_cc_unit *units, int nunits)
{
    const char *dir = getenv("LT_DUMP_KERNELS");
    if (!dir || !*dir)
        return;
    mkdir(dir, 0755);
    uint64_t h[2];
    lt_ir_hash_init(h);
    for (size_t i = 0; i < len; i++)
        lt_ir_hash_u64(h, (unsigned char)src[i]);
    for (int part = 0; part < nunits; part++) {
        char path[1200], suffix[16] = "";
        if (nunits > 1)
            snprintf(suffix, sizeof suffix, ".part%d", part + 1);
        snprintf(path, sizeof path, "%s/graph-%016llx%016llx%s.c", dir, (unsigned long long)h[0],
                 (unsigned long long)h[1], suffix);
        FILE *f = fopen(path, "w");
        if (!f)
            return;
        fwrite(src + units[part].begin, 1, units[part].end - units[part].begin, f);
        fclose(f);
    }
}

static void cpu_release(void *exe)
{
    cpu_exe *e = exe;
    if (!e)
        return;
    lt_cc_unload(e->handle);
    kir_plan_free(&e->plan);
    if (e->interp)
        lt_backend_interp()->release(e->interp);
    free(e->src);
    lt_graph_free(e->pending);
    free(e);
}

static void set_metrics(const kir_plan_info *info)
{
    lt_metric_set("Kernels", info->kernels);
    lt_metric_set("KernelFunctions", info->functions);
    lt_metric_set("KernelCalls", info->calls);
    lt_metric_set("FusedGemmUpdates", info->fused_gemm);
    lt_metric_set("ProgramBytes", info->bytes);
    lt_metric_set("TranslationUnits", info->units);
    lt_metric_set("ColdUnits", info->cold_units);
    lt_metric_set("WarmUnits", info->warm_units);
}

/* The quick part of a compile: schedule, memory plan and C source. */
/* report: set the counters of the compile (Kernels, ...); false on the
 * tiered backend's background thread, whose builds would otherwise change
 * them at any moment under a barrier that reads them. */
static lt_status prepare(cpu_exe *e, const lt_graph *g, bool report)
{
    if (kir_schedule(&e->plan, g) != LT_OK)
        return lt_last_status();
    int functions = 0;
    e->src = kir_memplan(&e->plan) == LT_OK ? kir_render(&e->plan, &e->len, e->units, &e->nunits, &functions) : NULL;
    if (!e->src)
        return lt_last_status();
    dump_source(e->src, e->len, e->units, e->nunits);
    e->info = (kir_plan_info){.kernels = e->plan.nk, .functions = functions, .calls = e->plan.ncalls,
                              .fused_gemm = e->plan.nfused_gemm, .bytes = (int64_t)e->len, .units = e->nunits};
    for (int u = 0; u < e->nunits; u++) {
        e->info.cold_units += e->units[u].tier == LT_CC_COLD;
        e->info.warm_units += e->units[u].tier == LT_CC_WARM;
    }
    if (report)
        set_metrics(&e->info);
    return LT_OK;
}

static cpu_exe *cpu_prepare(const lt_graph *g)
{
    cpu_exe *e = calloc(1, sizeof *e);
    if (!e) {
        lt_error(LT_ERR_MEMORY, "cpu backend: out of memory");
        return NULL;
    }
    if (prepare(e, g, true) != LT_OK) {
        cpu_release(e);
        return NULL;
    }
    return e;
}

/* A program whose plan and object are both in the disk cache: nothing to
 * schedule, plan or render (NULL: not there). LT_DUMP_KERNELS asks for
 * the source, so it always renders. */
static cpu_exe *from_plan_cache(const lt_graph *g)
{
    const char *dump = getenv("LT_DUMP_KERNELS");
    if (dump && *dump)
        return NULL;
    cpu_exe *e = calloc(1, sizeof *e);
    void *entry = NULL;
    if (!e || !kir_plan_cache_load(g, &e->plan, &e->info, &e->handle, &entry)) {
        free(e);
        return NULL;
    }
    e->entry = (entry_fn)entry;
    set_metrics(&e->info);
    return e;
}

/* The slow part: the shared object, from the disk cache or the compiler. */
static lt_status cpu_build(cpu_exe *e)
{
    void *entry = NULL;
    char key[33];
    lt_status st = lt_cc_load(e->src, e->units, e->nunits, &e->handle, &entry, key);
    if (st != LT_OK)
        return st;
    kir_plan_cache_store(&e->plan, &e->info, key);
    e->entry = (entry_fn)entry;
    free(e->src);
    e->src = NULL;
    return LT_OK;
}

/* An executable that runs g with interp: the compiler stopped working. */
static cpu_exe *interp_fallback(const lt_graph *g)
{
    cpu_exe *e = calloc(1, sizeof *e);
    if (e)
        e->interp = lt_backend_interp()->compile(g);
    if (e && !e->interp) {
        free(e);
        return NULL;
    }
    return e;
}

static void *cpu_compile(const lt_graph *g)
{
    cpu_exe *e = lt_cc_available(NULL, 0) ? from_plan_cache(g) : NULL;
    if (e)
        return e;
    e = cpu_prepare(g);
    if (!e)
        return NULL;
    if (cpu_build(e) == LT_OK)
        return e;
    cpu_release(e);
    if (lt_cc_available(NULL, 0)) /* a compile error: reported */
        return NULL;
    lt_clear_error(); /* the compiler hung (cc.c warned): run the graph with interp */
    return interp_fallback(g);
}

/* Ready at once when the plan cache holds the program (or when no compiler
 * works any more, with interp). Otherwise only a copy of the graph is
 * kept: scheduling, planning and rendering (tens of milliseconds for a
 * transformer step) are left to cpu_compile_finish, on the tiered
 * backend's background thread, so the first tier starts at once. */
static void *cpu_compile_start(const lt_graph *g, bool *ready)
{
    *ready = false;
    if (!lt_cc_available(NULL, 0)) {
        *ready = true;
        return interp_fallback(g);
    }
    cpu_exe *e = from_plan_cache(g);
    if (e) {
        *ready = true;
        return e;
    }
    e = calloc(1, sizeof *e);
    if (e)
        e->pending = lt_graph_copy(g);
    if (!e || !e->pending) {
        free(e);
        lt_error(LT_ERR_MEMORY, "cpu backend: out of memory");
        return NULL;
    }
    return e;
}

/* The rest of a compile_start: the quick part if it was left for later,
 * then the object (disk cache by source, or the compiler). */
static lt_status cpu_compile_finish(void *exe)
{
    cpu_exe *e = exe;
    if (e->pending) {
        lt_status st = prepare(e, e->pending, false);
        lt_graph_free(e->pending);
        e->pending = NULL;
        if (st != LT_OK)
            return st;
    }
    return cpu_build(e);
}

/* ---- execute ----------------------------------------------------------------- */

typedef struct exec_ctx {
    const cpu_exe *exe;
    lt_exec_args *args;
    lt_storage **store; /* per buffer: the storage holding it */
    int64_t *base;      /* per buffer: byte offset of its data in that storage */
    void **ptr;         /* per buffer: its data */
} exec_ctx;

/* A CPU handle on buffer b with the given geometry (elements). */
static lt_tensor *buffer_handle(exec_ctx *x, int b, const lt_meta *m, const int64_t *strides, int64_t offset)
{
    lt_meta hm = *m;
    hm.weak = 0;
    lt_tensor *t = lt_tensor_new_handle(&hm, lt_device_cpu());
    if (!t)
        return NULL;
    t->storage = x->store[b];
    atomic_fetch_add(&t->storage->refcount, 1);
    if (strides)
        memcpy(t->strides, strides, sizeof(int64_t) * (size_t)m->ndim);
    t->offset = x->base[b] / (int64_t)lt_dtype_size((lt_dtype)m->dtype) + offset;
    return t;
}

/* A 0-d f64 wrapped scalar (as the lazy device records them). */
static lt_tensor *scalar_handle(double v)
{
    int64_t none[1] = {0};
    lt_meta m = lt_meta_make(LT_F64, none, 0);
    lt_tensor *t = lt_tensor_alloc(&m, lt_device_cpu(), "scalar");
    if (!t)
        return NULL;
    t->weak = 1;
    *(double *)lt_tensor_ptr(t) = v;
    return t;
}

/* A matmul fused with its update (fuse_gemm.c): out = acc + alpha * (in[0]
 * @ in[1]). The start value is copied unless out took acc's buffer. */
static lt_status run_fused_update(exec_ctx *x, const kir_call *c, lt_tensor *const *in, lt_tensor *out)
{
    const void *acc = x->ptr[c->acc_buf];
    if (acc != x->ptr[c->out[0]])
        memcpy(x->ptr[c->out[0]], acc, x->exe->plan.b[c->out[0]].nbytes);
    double alpha = c->alpha;
    if (c->alpha_slot >= 0)
        alpha = c->alpha_negated ? -x->args->scalars[c->alpha_slot] : x->args->scalars[c->alpha_slot];
    return lt_eager_matmul_acc(in[0], in[1], out, alpha);
}

/* The runtime table's call: runs the eager kernel of call `id`. */
static int rt_call(void *ctx, int id)
{
    exec_ctx *x = ctx;
    const kir_plan *p = &x->exe->plan;
    const kir_call *c = &p->calls[id];
    const lt_gnode *n = &p->g->nodes[c->node];
    const double *scalars = x->args->scalars;
    lt_attrs a = n->attrs;
    for (int k = 0; k < a.nf; k++)
        if (n->attr_param[k] >= 0)
            a.f[k] = scalars[n->attr_param[k]];
    lt_tensor *small[8], **in = c->nin <= 8 ? small : calloc((size_t)c->nin, sizeof *in);
    lt_tensor *out[LT_MAX_OUTPUTS] = {NULL};
    if (!in)
        return lt_error(LT_ERR_MEMORY, "cpu backend: out of memory");
    lt_status st = LT_OK;
    int made = 0;
    for (; made < c->nin && st == LT_OK; made++) {
        const kir_arg *arg = &c->in[made];
        if (arg->scalar)
            in[made] = scalar_handle(arg->slot >= 0 ? scalars[arg->slot] : arg->value);
        else
            in[made] = buffer_handle(x, arg->buf, &arg->meta, arg->strides, arg->offset);
        if (!in[made])
            st = lt_last_status();
    }
    for (int o = 0; o < c->nout && st == LT_OK; o++) {
        out[o] = buffer_handle(x, c->out[o], &p->b[c->out[o]].meta, NULL, 0);
        if (!out[o])
            st = lt_last_status();
    }
    if (st == LT_OK && c->acc_buf >= 0)
        st = run_fused_update(x, c, in, out[0]);
    else if (st == LT_OK)
        st = lt_eager_run((lt_op)n->op, in, c->nin, &a, n->out, out, lt_device_cpu());
    if (st != LT_OK)
        x->args->failed_node = (uint32_t)c->node; /* named in the barrier's message */
    for (int k = 0; k < made; k++)
        if (in[k])
            lt_tensor_unref(in[k]);
    for (int o = 0; o < LT_MAX_OUTPUTS; o++)
        if (out[o])
            lt_tensor_unref(out[o]);
    if (in != small)
        free(in);
    return (int)st;
}

/* Binds every buffer of the plan to memory. */
static lt_status bind_buffers(exec_ctx *x, lt_storage *ws)
{
    const kir_plan *p = &x->exe->plan;
    lt_exec_args *args = x->args;
    for (int b = 0; b < p->nb; b++) {
        const kir_buf *buf = &p->b[b];
        lt_storage *s = NULL;
        x->base[b] = 0;
        if (buf->kind == KB_LEAF) {
            s = args->leaves[buf->slot];
            atomic_fetch_add(&s->refcount, 1);
        } else if (buf->kind == KB_OUT) {
            if (buf->donor >= 0 && args->donatable && args->donatable[buf->donor]) {
                s = args->leaves[buf->donor];
                atomic_fetch_add(&s->refcount, 1);
                args->donated++;
            } else {
                s = lt_host_buffer_alloc(buf->nbytes);
                if (!s)
                    return lt_last_status();
            }
        } else {
            s = ws;
            atomic_fetch_add(&s->refcount, 1);
            x->base[b] = buf->offset;
        }
        x->store[b] = s;
        x->ptr[b] = (char *)s->data + x->base[b];
    }
    return LT_OK;
}

static lt_status cpu_execute(void *exe, lt_exec_args *args)
{
    const cpu_exe *e = exe;
    if (e->interp)
        return lt_backend_interp()->execute(e->interp, args);
    if (!e->entry)
        return lt_error(LT_ERR_STATE, "cpu backend: program executed before it was built");
    const kir_plan *p = &e->plan;
    size_t nb = (size_t)p->nb + 1;
    exec_ctx x = {e, args, calloc(nb, sizeof(lt_storage *)), calloc(nb, sizeof(int64_t)), calloc(nb, sizeof(void *))};
    lt_storage *ws = NULL;
    lt_status st = LT_OK;
    if (!x.store || !x.base || !x.ptr)
        st = lt_error(LT_ERR_MEMORY, "cpu backend: out of memory");
    bool has_tmp = false; /* temporaries of 0 bytes still need a buffer to point into */
    for (int b = 0; b < p->nb; b++)
        has_tmp = has_tmp || p->b[b].kind == KB_TMP;
    if (st == LT_OK && has_tmp) {
        lt_device cpu = lt_device_cpu();
        ws = lt_storage_new((size_t)p->ws_size, cpu, "cpu program workspace");
        if (!ws)
            st = lt_last_status();
    }
    if (st == LT_OK)
        st = bind_buffers(&x, ws);
    if (st == LT_OK) {
        lt_rt rt = {&x, rt_call, lt_parallel_for};
        int status = e->entry(x.ptr, args->scalars, &rt);
        if (status != 0)
            st = lt_error_pending() ? (lt_status)status
                                    : lt_error((lt_status)status, "cpu backend: a runtime call failed");
    }
    for (uint32_t r = 0; r < p->g->nroots; r++) {
        args->outputs[r] = NULL;
        if (st == LT_OK) {
            lt_storage *s = x.store[p->root_buf[r]];
            atomic_fetch_add(&s->refcount, 1);
            args->outputs[r] = s;
        }
    }
    for (int b = 0; x.store && b < p->nb; b++)
        lt_storage_unref(x.store[b]);
    lt_storage_unref(ws);
    free(x.store);
    free(x.base);
    free(x.ptr);
    return st;
}

const lt_backend *lt_backend_cpu(void)
{
    static const lt_backend cpu = {
        .name = "cpu",
        .compile = cpu_compile,
        .execute = cpu_execute,
        .release = cpu_release,
        .buffer_alloc = lt_host_buffer_alloc,
        .copy_to_host = lt_host_copy_to_host,
        .copy_from_host = lt_host_copy_from_host,
        .host_visible = true,
        .compile_start = cpu_compile_start,
        .compile_finish = cpu_compile_finish,
    };
    return &cpu;
}

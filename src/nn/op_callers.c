/*
 * op_callers.c - the callers of the op registry: one per C prototype.
 *
 * A caller casts a row's function back to its prototype, passes the
 * prepared arguments in order and turns the return value into tagged
 * results by the row's result kind. Rows of one prototype share a caller;
 * a row of a new prototype needs one line here.
 */
#include "nn/op_registry.h"

#include "core/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef lt_tensor *lt_t;
typedef const int64_t *ints;

/* ---- return values as results --------------------------------------------- */

static int tensor_out(lt_arg *out, lt_tensor *r)
{
    out[0] = (lt_arg){.kind = LT_ARG_TENSOR, .t = r};
    return r ? 1 : -1;
}

static int module_out(lt_arg *out, lt_module *m)
{
    out[0] = (lt_arg){.kind = LT_ARG_MODULE, .module = m};
    return m ? 1 : -1;
}

static int optimizer_out(lt_arg *out, lt_optimizer *o)
{
    out[0] = (lt_arg){.kind = LT_ARG_OPTIMIZER, .optimizer = o};
    return o ? 1 : -1;
}

static int status_out(lt_arg *out, lt_status st)
{
    (void)out;
    return st == LT_OK ? 0 : -1;
}

/* Counts and sizes are negative only on error (with the error set). */
static int int_out(lt_arg *out, int64_t v)
{
    out[0] = (lt_arg){.kind = LT_ARG_INT, .i = v};
    return v < 0 && lt_last_status() != LT_OK ? -1 : 1;
}

/* Schedules and rates are NaN only on error (with the error set). */
static int double_out(lt_arg *out, double v)
{
    out[0] = (lt_arg){.kind = LT_ARG_DOUBLE, .d = v};
    return isnan(v) && lt_last_status() != LT_OK ? -1 : 1;
}

static int bool_out(lt_arg *out, bool v)
{
    out[0] = (lt_arg){.kind = LT_ARG_BOOL, .b = v};
    return 1;
}

static int string_out(lt_arg *out, const char *s)
{
    out[0] = (lt_arg){.kind = LT_ARG_STRING, .s = s};
    return s ? 1 : -1;
}

/* Defines call_<res>_<kinds>: fn cast to proto, its return value made a
 * result by res_out. */
#define CALLER(res, kinds, proto, ...)                                                  \
    static int call_##res##_##kinds(op_fn fn, const op_arg *a, lt_arg *out, int max_out) \
    {                                                                                  \
        (void)a, (void)max_out;                                                        \
        return res##_out(out, ((proto)fn)(__VA_ARGS__));                               \
    }

/* The same for void functions: no result. */
#define VOID_CALLER(kinds, proto, ...)                                                  \
    static int call_void_##kinds(op_fn fn, const op_arg *a, lt_arg *out, int max_out)    \
    {                                                                                  \
        (void)a, (void)out, (void)max_out;                                             \
        ((proto)fn)(__VA_ARGS__);                                                      \
        return 0;                                                                      \
    }

/* ---- tensors ------------------------------------------------------------------ */

CALLER(tensor, t, lt_t (*)(lt_t), a[0].t)
CALLER(tensor, tt, lt_t (*)(lt_t, lt_t), a[0].t, a[1].t)
CALLER(tensor, ttt, lt_t (*)(lt_t, lt_t, lt_t), a[0].t, a[1].t, a[2].t)
CALLER(tensor, td, lt_t (*)(lt_t, double), a[0].t, a[1].d)
CALLER(tensor, tdd, lt_t (*)(lt_t, double, double), a[0].t, a[1].d, a[2].d)
CALLER(tensor, ttd, lt_t (*)(lt_t, lt_t, double), a[0].t, a[1].t, a[2].d)
CALLER(tensor, tDb, lt_t (*)(lt_t, const int *, int, bool), a[0].t, a[1].dims, a[1].n, a[2].b)
CALLER(tensor, tDlb, lt_t (*)(lt_t, const int *, int, int64_t, bool), a[0].t, a[1].dims, a[1].n, a[2].i, a[3].b)
CALLER(tensor, tD, lt_t (*)(lt_t, const int *, int), a[0].t, a[1].dims, a[1].n)
CALLER(tensor, tS, lt_t (*)(lt_t, ints, int), a[0].t, a[1].ints, a[1].n)
CALLER(tensor, ti, lt_t (*)(lt_t, int), a[0].t, (int)a[1].i)
CALLER(tensor, tib, lt_t (*)(lt_t, int, bool), a[0].t, (int)a[1].i, a[2].b)
CALLER(tensor, tii, lt_t (*)(lt_t, int, int), a[0].t, (int)a[1].i, (int)a[2].i)
CALLER(tensor, tl, lt_t (*)(lt_t, int64_t), a[0].t, a[1].i)
CALLER(tensor, til, lt_t (*)(lt_t, int, int64_t), a[0].t, (int)a[1].i, a[2].i)
CALLER(tensor, till, lt_t (*)(lt_t, int, int64_t, int64_t), a[0].t, (int)a[1].i, a[2].i, a[3].i)
CALLER(tensor, tlii, lt_t (*)(lt_t, int64_t, int, int), a[0].t, a[1].i, (int)a[2].i, (int)a[3].i)
CALLER(tensor, tlb, lt_t (*)(lt_t, int64_t, bool), a[0].t, a[1].i, a[2].b)
CALLER(tensor, tit, lt_t (*)(lt_t, int, lt_t), a[0].t, (int)a[1].i, a[2].t)
CALLER(tensor, titt, lt_t (*)(lt_t, int, lt_t, lt_t), a[0].t, (int)a[1].i, a[2].t, a[3].t)
CALLER(tensor, Ti, lt_t (*)(lt_t const *, int, int), a[0].ts, a[0].n, (int)a[1].i)
CALLER(tensor, ttoPPPl, lt_t (*)(lt_t, lt_t, lt_t, ints, ints, ints, int64_t), a[0].t, a[1].t, a[2].t, a[3].ints,
       a[4].ints, a[5].ints, a[6].i)
CALLER(tensor, tPPP, lt_t (*)(lt_t, ints, ints, ints, lt_t *), a[0].t, a[1].ints, a[2].ints, a[3].ints, NULL)
CALLER(tensor, tPPPb, lt_t (*)(lt_t, ints, ints, ints, bool), a[0].t, a[1].ints, a[2].ints, a[3].ints, a[4].b)
CALLER(tensor, Syv, lt_t (*)(ints, int, lt_dtype, lt_device), a[0].ints, a[0].n, a[1].dtype, a[2].device)
CALLER(tensor, Sdyv, lt_t (*)(ints, int, double, lt_dtype, lt_device), a[0].ints, a[0].n, a[1].d, a[2].dtype,
       a[3].device)
CALLER(tensor, llSyv, lt_t (*)(int64_t, int64_t, ints, int, lt_dtype, lt_device), a[0].i, a[1].i, a[2].ints, a[2].n,
       a[3].dtype, a[4].device)
CALLER(tensor, dddyv, lt_t (*)(double, double, double, lt_dtype, lt_device), a[0].d, a[1].d, a[2].d, a[3].dtype,
       a[4].device)
CALLER(tensor, ddlyv, lt_t (*)(double, double, int64_t, lt_dtype, lt_device), a[0].d, a[1].d, a[2].i, a[3].dtype,
       a[4].device)
CALLER(tensor, llyv, lt_t (*)(int64_t, int64_t, lt_dtype, lt_device), a[0].i, a[1].i, a[2].dtype, a[3].device)
CALLER(tensor, mt, lt_t (*)(lt_module *, lt_t), a[0].module, a[1].t)
CALLER(tensor, too, lt_t (*)(lt_t, lt_t, lt_t), a[0].t, a[1].t, a[2].t)
CALLER(tensor, ty, lt_t (*)(lt_t, lt_dtype), a[0].t, a[1].dtype)
CALLER(tensor, tiy, lt_t (*)(lt_t, int, lt_dtype), a[0].t, (int)a[1].i, a[2].dtype)
CALLER(tensor, tddd, lt_t (*)(lt_t, double, double, double), a[0].t, a[1].d, a[2].d, a[3].d)
CALLER(tensor, tdid, lt_t (*)(lt_t, double, int, double), a[0].t, a[1].d, (int)a[2].i, a[3].d)
CALLER(tensor, tDby, lt_t (*)(lt_t, const int *, int, bool, lt_dtype), a[0].t, a[1].dims, a[1].n, a[2].b,
       a[3].dtype)
CALLER(tensor, tdDb, lt_t (*)(lt_t, double, const int *, int, bool), a[0].t, a[1].d, a[2].dims, a[2].n, a[3].b)
CALLER(tensor, tdDby, lt_t (*)(lt_t, double, const int *, int, bool, lt_dtype), a[0].t, a[1].d, a[2].dims, a[2].n,
       a[3].b, a[4].dtype)
CALLER(tensor, titd, lt_t (*)(lt_t, int, lt_t, double), a[0].t, (int)a[1].i, a[2].t, a[3].d)
CALLER(tensor, tittd, lt_t (*)(lt_t, int, lt_t, lt_t, double), a[0].t, (int)a[1].i, a[2].t, a[3].t, a[4].d)
CALLER(tensor, ttbb, lt_t (*)(lt_t, lt_t, bool, bool), a[0].t, a[1].t, a[2].b, a[3].b)
CALLER(tensor, ttobs, lt_t (*)(lt_t, lt_t, lt_t, bool, const char *), a[0].t, a[1].t, a[2].t, a[3].b, a[4].s)
CALLER(tensor, T, lt_t (*)(lt_t const *, int), a[0].ts, a[0].n)
CALLER(tensor, tttd, lt_t (*)(lt_t, lt_t, lt_t, double), a[0].t, a[1].t, a[2].t, a[3].d)
CALLER(tensor, tttdd, lt_t (*)(lt_t, lt_t, lt_t, double, double), a[0].t, a[1].t, a[2].t, a[3].d, a[4].d)
CALLER(tensor, ttid, lt_t (*)(lt_t, lt_t, int, double), a[0].t, a[1].t, (int)a[2].i, a[3].d)
CALLER(tensor, ttddb, lt_t (*)(lt_t, lt_t, double, double, bool), a[0].t, a[1].t, a[2].d, a[3].d, a[4].b)
/* the losses' adapters (op_table.c): torch's reduction= as a string */
CALLER(tensor, tSD, lt_t (*)(lt_t, ints, int, const int *, int), a[0].t, a[1].ints, a[1].n, a[2].dims, a[2].n)
CALLER(tensor, tilll, lt_t (*)(lt_t, int, int64_t, int64_t, int64_t), a[0].t, (int)a[1].i, a[2].i, a[3].i, a[4].i)
CALLER(tensor, lllv, lt_t (*)(int64_t, int64_t, int64_t, lt_device), a[0].i, a[1].i, a[2].i, a[3].device)
CALLER(tensor, tts, lt_t (*)(lt_t, lt_t, const char *), a[0].t, a[1].t, a[2].s)
CALLER(tensor, ttsd, lt_t (*)(lt_t, lt_t, const char *, double), a[0].t, a[1].t, a[2].s, a[3].d)
CALLER(tensor, ttsb, lt_t (*)(lt_t, lt_t, const char *, bool), a[0].t, a[1].t, a[2].s, a[3].b)
CALLER(tensor, ttos, lt_t (*)(lt_t, lt_t, lt_t, const char *), a[0].t, a[1].t, a[2].t, a[3].s)
CALLER(tensor, ttoso, lt_t (*)(lt_t, lt_t, lt_t, const char *, lt_t), a[0].t, a[1].t, a[2].t, a[3].s, a[4].t)
CALLER(tensor, tttds, lt_t (*)(lt_t, lt_t, lt_t, double, const char *), a[0].t, a[1].t, a[2].t, a[3].d, a[4].s)

/* Values and indices along a dim (max_dim, min_dim, sort). */
static int call_pair_tib(op_fn fn, const op_arg *a, lt_arg *out, int max_out)
{
    (void)max_out;
    lt_tensor *indices = NULL;
    lt_tensor *values = ((lt_t(*)(lt_t, int, bool, lt_t *))fn)(a[0].t, (int)a[1].i, a[2].b, &indices);
    if (tensor_out(out, values) < 0)
        return -1;
    tensor_out(out + 1, indices);
    return 2;
}

/* cummax, cummin */
static int call_pair_ti(op_fn fn, const op_arg *a, lt_arg *out, int max_out)
{
    (void)max_out;
    lt_tensor *indices = NULL;
    lt_tensor *values = ((lt_t(*)(lt_t, int, lt_t *))fn)(a[0].t, (int)a[1].i, &indices);
    if (tensor_out(out, values) < 0)
        return -1;
    tensor_out(out + 1, indices);
    return 2;
}

/* topk */
static int call_pair_tlib(op_fn fn, const op_arg *a, lt_arg *out, int max_out)
{
    (void)max_out;
    lt_tensor *indices = NULL;
    lt_tensor *values = ((lt_t(*)(lt_t, int64_t, int, bool, lt_t *))fn)(a[0].t, a[1].i, (int)a[2].i, a[3].b, &indices);
    if (tensor_out(out, values) < 0)
        return -1;
    tensor_out(out + 1, indices);
    return 2;
}

/* split (size, dim) and chunk (count, dim): into a scratch array as long as
 * the dim plus one (more pieces than that there cannot be), inside a scope
 * of their own, so that pieces that do not fit in out are dropped, and the
 * rest are handed on with the ownership a direct call gives (lt_keep). */
static int call_pieces_tli(op_fn fn, const op_arg *a, lt_arg *out, int max_out)
{
    int64_t len = lt_tensor_size(a[0].t, (int)a[2].i);
    if (len < 0)
        return -1;
    int room = len < INT32_MAX ? (int)len + 1 : INT32_MAX;
    lt_tensor **pieces = calloc((size_t)room, sizeof *pieces);
    if (!pieces)
        return lt_error(LT_ERR_MEMORY, "split: no memory for %d pieces", room), -1;
    lt_scope_begin();
    int n = ((int (*)(lt_t, int64_t, int, lt_t *, int))fn)(a[0].t, a[1].i, (int)a[2].i, pieces, room);
    for (int k = 0; k < n && n <= max_out; k++)
        tensor_out(out + k, lt_keep(pieces[k]));
    lt_scope_end();
    free(pieces);
    return n;
}

/* ---- layers, optimizers, schedules ------------------------------------------------- */

CALLER(module, , lt_module *(*)(void))
CALLER(module, l, lt_module *(*)(int64_t), a[0].i)
CALLER(module, d, lt_module *(*)(double), a[0].d)
CALLER(module, ldv, lt_module *(*)(int64_t, double, lt_device), a[0].i, a[1].d, a[2].device)
CALLER(module, llv, lt_module *(*)(int64_t, int64_t, lt_device), a[0].i, a[1].i, a[2].device)
CALLER(module, llbv, lt_module *(*)(int64_t, int64_t, bool, lt_device), a[0].i, a[1].i, a[2].b, a[3].device)
CALLER(module, llllllbv, lt_module *(*)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, bool, lt_device),
       a[0].i, a[1].i, a[2].i, a[3].i, a[4].i, a[5].i, a[6].b, a[7].device)
VOID_CALLER(mb, void (*)(lt_module *, bool), a[0].module, a[1].b)
CALLER(status, mv, lt_status (*)(lt_module *, lt_device), a[0].module, a[1].device)
CALLER(optimizer, Tdddb, lt_optimizer *(*)(lt_t const *, int, double, double, double, bool), a[0].ts, a[0].n,
       a[1].d, a[2].d, a[3].d, a[4].b)
CALLER(optimizer, Tdddddb, lt_optimizer *(*)(lt_t const *, int, double, double, double, double, double, bool),
       a[0].ts, a[0].n, a[1].d, a[2].d, a[3].d, a[4].d, a[5].d, a[6].b)
CALLER(status, z, lt_status (*)(lt_optimizer *), a[0].optimizer)
CALLER(status, zd, lt_status (*)(lt_optimizer *, double), a[0].optimizer, a[1].d)
CALLER(double, z, double (*)(lt_optimizer *), a[0].optimizer)
CALLER(double, dlld, double (*)(double, int64_t, int64_t, double), a[0].d, a[1].i, a[2].i, a[3].d)
CALLER(double, dll, double (*)(double, int64_t, int64_t), a[0].d, a[1].i, a[2].i)

/* ---- process state and the lazy device -------------------------------------------- */

VOID_CALLER(, void (*)(void))
VOID_CALLER(l, void (*)(int64_t), a[0].i)
VOID_CALLER(i, void (*)(int), (int)a[0].i)
CALLER(status, , lt_status (*)(void))
CALLER(status, b, lt_status (*)(bool), a[0].b)
CALLER(status, s, lt_status (*)(const char *), a[0].s)
CALLER(int, , int64_t (*)(void))
CALLER(int, s, int64_t (*)(const char *), a[0].s)
CALLER(bool, , bool (*)(void))
CALLER(string, , const char *(*)(void))

/* ---- tensor metadata and autograd ------------------------------------------------- */

CALLER(int, t, int64_t (*)(const lt_tensor *), a[0].t)
CALLER(bool, t, bool (*)(const lt_tensor *), a[0].t)
CALLER(bool, tt, bool (*)(const lt_tensor *, const lt_tensor *), a[0].t, a[1].t)
CALLER(status, to, lt_status (*)(lt_t, lt_t), a[0].t, a[1].t)
#undef CALLER
#undef VOID_CALLER

static const struct {
    const char *kinds;
    lt_result_kind result;
    op_caller call;
} callers[] = {
#define T(k) {#k, LT_RESULT_TENSOR, call_tensor_##k}
    T(t), T(tt), T(ttt), T(td), T(tdd), T(ttd), T(tDb), T(tDlb), T(tD), T(tS), T(ti), T(tib), T(tii), T(tl),
    T(til), T(till), T(tlii), T(tlb), T(tit), T(titt), T(Ti), T(ttoPPPl), T(tPPP), T(tPPPb), T(Syv), T(Sdyv),
    T(llSyv), T(dddyv), T(ddlyv), T(llyv), T(mt),
    T(too), T(ty), T(tiy), T(tddd), T(tdid), T(tDby), T(tdDb), T(tdDby), T(titd), T(tittd), T(ttbb), T(ttobs),
    T(T), T(tSD), T(tilll), T(lllv), T(tttd), T(tttdd), T(ttid), T(ttddb), T(tts), T(ttsd), T(ttsb), T(ttos),
    T(ttoso), T(tttds),
#undef T
    {"tib", LT_RESULT_PAIR, call_pair_tib},
    {"ti", LT_RESULT_PAIR, call_pair_ti},
    {"tlib", LT_RESULT_PAIR, call_pair_tlib},
    {"tli", LT_RESULT_TENSORS, call_pieces_tli},
#define R(res, RESULT, k) {#k, LT_RESULT_##RESULT, call_##res##_##k}
    R(module, MODULE, ), R(module, MODULE, l), R(module, MODULE, d), R(module, MODULE, ldv), R(module, MODULE, llv),
    R(module, MODULE, llbv), R(module, MODULE, llllllbv), R(void, NONE, mb), R(status, STATUS, mv),
    R(optimizer, OPTIMIZER, Tdddb), R(optimizer, OPTIMIZER, Tdddddb), R(status, STATUS, z), R(status, STATUS, zd),
    R(double, DOUBLE, z), R(double, DOUBLE, dlld), R(double, DOUBLE, dll), R(void, NONE, ), R(void, NONE, l),
    R(void, NONE, i), R(status, STATUS, ), R(status, STATUS, b), R(status, STATUS, s), R(int, INT, ),
    R(int, INT, s), R(bool, BOOL, ), R(string, STRING, ), R(int, INT, t), R(bool, BOOL, t), R(bool, BOOL, tt),
    R(status, STATUS, to),
#undef R
};

op_caller op_caller_for(const char *kinds, lt_result_kind result)
{
    if (result == LT_RESULT_SELF) /* in-place ops return their tensor like any other */
        result = LT_RESULT_TENSOR;
    for (size_t i = 0; i < sizeof callers / sizeof callers[0]; i++)
        if (callers[i].result == result && !strcmp(callers[i].kinds, kinds))
            return callers[i].call;
    return NULL;
}

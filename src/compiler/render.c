/*
 * render.c - renders a kernel plan as C: one translation unit, or several
 * for a large program (so that compiler processes build it in parallel).
 *
 * Layout of the generated file:
 *   a header comment (version stamp, buffer table), a small prelude
 *   (half-precision conversions, helpers shared with the eager kernels'
 *   semantics), one function per pointwise/row kernel, and the
 *   entry point
 *       int lt_program_entry(void *const *B, const double *S, const lt_rt *rt)
 *   which runs the kernels in order. B[i] is buffer i of the plan, S[k]
 *   scalar parameter k; calls into the library's eager kernels go through
 *   rt->call(rt->ctx, id).
 *
 * Shared kernel functions. A kernel function numbers the buffers and
 * scalars it uses itself (local_map), and the entry point hands each call
 * the program's B[i] and S[k] in that order. Kernels whose text is then the
 * same (a layer repeated, the optimizer's update of parameters of one
 * shape) share one function, compiled once: the GPT step's 119 kernels
 * need 85 functions.
 *
 * Values are SSA variables v<i> (one per instruction) of their dtype's C
 * type (bf16/f16 values are floats already rounded to their precision,
 * bools are bool). Every elementwise op computes in the same working dtype
 * and with the same expression as its eager loop (elementwise.c), every
 * reduction with the same accumulator types as reduce.c, so compiled and
 * eager results agree to rounding of summation order.
 *
 * Translation units. Every kernel is a function of its own (never inlined
 * into the entry point). A program whose kernels' estimated compile cost
 * exceeds KIR_UNIT_COST is cut into several units (at most LT_CC_MAX_UNITS),
 * which compiler processes build in parallel, each tier of optimization
 * (units.c: hot, warm and cold kernels, by their work per run and compile
 * cost) in units of its own. Each unit
 * has the prelude; the first holds the header, the last the prototypes of
 * the other units' kernels and the entry point.
 */
#include "compiler/kir.h"
#include "eager/ewmath.h"
#include "eager/fastmath.h"
#include "lazy/lazy.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIR_VERSION "lazytensor-cpu-12"
/* A parallel kernel's outermost loop is cut into chunks of about this many
 * element operations (at most 64 chunks; src/core/pool.h) */
#define PAR_CHUNK_WORK 8192
/* Kernels are functions of their own that the optimizer must not inline
 * into the entry point (that would make one huge function again, whose
 * compile time grows faster than its length), visible across the units of
 * a program but not exported from its shared object. */
#define KERNEL_LINKAGE "__attribute__((visibility(\"hidden\"), noinline))"
#define KERNEL_PARAMS "(void *const *restrict B, const double *restrict S, const lt_rt *rt)"
/* Stands for a kernel function's name while it is rendered: the name is
 * that of the first kernel with the function's text (kernel<j>), put in
 * when the text is written into its unit. */
#define FN_TOKEN "KFN"

/* ---- string builder ----------------------------------------------------- */

typedef struct sb {
    char *s;
    size_t n, cap;
    bool failed;
} sb;

static void sb_printf(sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sb *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if (!b->s || b->n + (size_t)n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + (size_t)n + 1)
            cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->failed = true;
            return;
        }
        b->s = s;
        b->cap = cap;
        va_start(ap, fmt);
        vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
    }
    b->n += (size_t)n;
}

static void indent(sb *b, int depth)
{
    for (int i = 0; i < depth; i++)
        sb_printf(b, "    ");
}

/* snprintf for expression fragments: a fragment that does not fit marks
 * the rendering as failed (never silently truncated C). */
static _Thread_local bool fragment_truncated;

static void frag(char *dst, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void frag(char *dst, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(dst, cap, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= cap)
        fragment_truncated = true;
}

/* ---- types and conversions ---------------------------------------------- */

/* C type of a value (bf16/f16 values are their bits: a copy moves them
 * unchanged, NaN payloads included; arithmetic converts to f32). */
static const char *vtype(int dt)
{
    static const char *names[] = {"float", "double", "int32_t", "int64_t", "uint8_t", "bool", "uint16_t", "uint16_t"};
    return dt >= 0 && dt < LT_NUM_DTYPES ? names[dt] : "double";
}

/* C type of a buffer element (bool as bytes, bf16/f16 as bits). */
static const char *stype(int dt)
{
    static const char *names[] = {"float", "double", "int32_t", "int64_t", "uint8_t", "uint8_t", "uint16_t",
                                  "uint16_t"};
    return dt >= 0 && dt < LT_NUM_DTYPES ? names[dt] : "double";
}

static bool is_half(int dt) { return dt == LT_BF16 || dt == LT_F16; }

/* Writes into out the expression x (of dtype from) converted to dtype to,
 * with the eager runtime's conversion rules (copy.c). */
static void cvt(char *out, size_t cap, const char *x, int from, int to)
{
    char wide[1100];
    if (from != to && is_half(from)) { /* through f32, like LT_LOAD_bf16/f16 */
        frag(wide, sizeof wide, "%s(%s)", from == LT_BF16 ? "lt_bf16_to_f32" : "lt_f16_to_f32", x);
        x = wide;
        from = LT_F32;
    }
    if (from == to)
        frag(out, cap, "%s", x);
    else if (to == LT_BOOL)
        frag(out, cap, "(%s != 0)", x);
    else if (to == LT_BF16)
        frag(out, cap, "lt_f32_to_bf16((float)(%s))", x);
    else if (to == LT_F16)
        frag(out, cap, "lt_f32_to_f16((float)(%s))", x);
    else if ((from == LT_F32 || from == LT_F64) && (to == LT_I32 || to == LT_I64 || to == LT_U8))
        frag(out, cap, "lt_float_to_%s(%s)", to == LT_I32 ? "i32" : to == LT_I64 ? "i64" : "u8", x);
    else if (x[strspn(x, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.[]")] == '\0')
        frag(out, cap, "(%s)%s", vtype(to), x); /* a name, a number or S[k] */
    else
        frag(out, cap, "(%s)(%s)", vtype(to), x);
}

/* ---- a kernel's own numbering of buffers and scalars ---------------------- */

/*
 * A kernel function refers to buffers and scalar parameters by its own
 * numbers, in the order it first uses them: its B[l] and S[l] are the
 * program's B[buf[l]] and S[slot[l]], gathered by the entry point for each
 * call. Kernels that differ only in which buffers and scalars they touch
 * (the same layer repeated, one optimizer update per parameter of a shape)
 * then render as the same text, and one function serves them all.
 */
typedef struct local_map {
    int *buf, nbuf, cap_buf;
    int *slot, nslot, cap_slot;
    bool failed;
} local_map;

/* The index of v in *list (appended when new); -1 when out of memory. */
static int local_index(int **list, int *n, int *cap, int v, bool *failed)
{
    for (int i = 0; i < *n; i++)
        if ((*list)[i] == v)
            return i;
    if (*n == *cap) {
        int grown = *cap ? 2 * *cap : 16;
        int *l = realloc(*list, sizeof **list * (size_t)grown);
        if (!l) {
            *failed = true;
            return -1;
        }
        *list = l;
        *cap = grown;
    }
    (*list)[*n] = v;
    return (*n)++;
}

static int local_buf(local_map *m, int buf) { return local_index(&m->buf, &m->nbuf, &m->cap_buf, buf, &m->failed); }
static int local_slot(local_map *m, int slot)
{
    return local_index(&m->slot, &m->nslot, &m->cap_slot, slot, &m->failed);
}

/* The map of the kernel being rendered (kir_render runs on one thread, and
 * the expression builders reach scalar attributes without a context). */
static _Thread_local local_map *current_map;

/* A double literal that C reads back exactly. */
static void double_literal(char *out, size_t cap, double v)
{
    frag(out, cap, "%.17g", v);
    if (!strpbrk(out, ".eEni"))
        strncat(out, ".0", cap - strlen(out) - 1);
}

/* Scalar attribute k of node n: a runtime parameter or a baked literal. */
static void attr_scalar(char *out, size_t cap, const lt_gnode *n, int k)
{
    if (k < n->attrs.nf && n->attr_param[k] >= 0)
        frag(out, cap, "S[%d]", local_slot(current_map, n->attr_param[k]));
    else
        double_literal(out, cap, k < n->attrs.nf ? n->attrs.f[k] : 0.0);
}

/* ---- rendering context -------------------------------------------------- */

typedef struct rctx {
    sb *b;
    const kir_plan *p;
    const kir_kernel *k;
    bool failed;
    /* column mode: the kernel's innermost domain loop (variable col_var)
     * runs in blocks of COL_BLOCK inside each reduction's loops, every
     * accumulator is an array over the block */
    bool col;
    int col_var;
    const char *linkage; /* of the kernel functions: KERNEL_LINKAGE */
} rctx;

#define COL_BLOCK 256

static const lt_gnode *gnode(const rctx *c, uint32_t i) { return &c->p->g->nodes[i]; }

static void var(char *out, size_t cap, int inst) { frag(out, cap, "v%d", inst); }

/* Operand j of instruction i converted to dtype to. */
static void operand(const rctx *c, const kir_inst *in, int j, int to, char *out, size_t cap)
{
    char v[32];
    var(v, sizeof v, in->in[j]);
    cvt(out, cap, v, c->k->ins[in->in[j]].dtype, to);
}

static void form_str(const rctx *c, int form, char *out, size_t cap)
{
    int n = kir_aff_str(c->k, &c->k->forms[form], out, cap);
    if (n < 0 || (size_t)n >= cap)
        fragment_truncated = true;
}

/* ---- elementwise expressions ------------------------------------------------ */

#define X_CAP 1024

/* Float expressions of the trigonometric, hyperbolic and logarithm family
 * and the activations: libm calls, or ewmath.h's functions (the eager
 * kernels' own); f is the libm suffix ("f" for float). */
static bool float_expr_ext(lt_op op, const lt_gnode *n, const char *f, const char *a, const char *b, char *e,
                           size_t cap)
{
    static const struct {
        lt_op op;
        const char *fn;
    } calls[] = {
        {LT_OP_TAN, "tan"}, {LT_OP_ASIN, "asin"}, {LT_OP_ACOS, "acos"}, {LT_OP_ATAN, "atan"},
        {LT_OP_SINH, "sinh"}, {LT_OP_COSH, "cosh"}, {LT_OP_ASINH, "asinh"}, {LT_OP_ACOSH, "acosh"},
        {LT_OP_ATANH, "atanh"}, {LT_OP_LOG2, "log2"}, {LT_OP_LOG10, "log10"}, {LT_OP_EXP2, "exp2"},
        {LT_OP_TRUNC, "trunc"}, {LT_OP_FRAC, "ltm_frac"}, {LT_OP_MISH, "ltm_mish"},
        {LT_OP_LOGSIGMOID, "ltm_logsigmoid"}, {LT_OP_SOFTSIGN, "ltm_softsign"},
        {LT_OP_HARDSIGMOID, "ltm_hardsigmoid"}, {LT_OP_HARDSWISH, "ltm_hardswish"},
        {LT_OP_GELU_TANH, "ltm_gelu_tanh"}, {LT_OP_ATAN2, "atan2"}, {LT_OP_HYPOT, "hypot"},
        {LT_OP_COPYSIGN, "copysign"}, {LT_OP_XLOGY, "ltm_xlogy"}, {LT_OP_LOGADDEXP, "ltm_logaddexp"},
        {LT_OP_FMOD, "fmod"}, {LT_OP_FLOOR_DIVIDE, "ltm_floor_divide"},
    };
    for (size_t k = 0; k < sizeof calls / sizeof calls[0]; k++)
        if (calls[k].op == op) {
            if (lt_op_infos[op].cls == LT_OPC_BINARY)
                frag(e, cap, "%s%s(%s, %s)", calls[k].fn, f, a, b);
            else
                frag(e, cap, "%s%s(%s)", calls[k].fn, f, a);
            return true;
        }
    /* activations with attributes (f0..f2), cast to the working type by
     * the call's prototype */
    char p0[64], p1[64], p2[64];
    attr_scalar(p0, sizeof p0, n, 0);
    attr_scalar(p1, sizeof p1, n, 1);
    attr_scalar(p2, sizeof p2, n, 2);
    switch (op) {
    case LT_OP_SOFTPLUS: frag(e, cap, "ltm_softplus%s(%s, %s, %s)", f, a, p0, p1); break;
    case LT_OP_ELU: frag(e, cap, "ltm_elu%s(%s, %s, %s, %s)", f, a, p0, p1, p2); break;
    case LT_OP_LEAKY_RELU: frag(e, cap, "ltm_leaky_relu%s(%s, %s)", f, a, p0); break;
    default: return false;
    }
    return true;
}

/* Float (T = float/double) expression of unary/binary op over a, b. */
static bool float_expr(lt_op op, const lt_gnode *n, int w, const char *a, const char *b, char *e, size_t cap)
{
    const char *T = vtype(w), *f = w == LT_F32 ? "f" : "";
    /* f32 exp and erf: fastmath.h's versions, as in the eager kernels */
    const char *ex = w == LT_F32 ? "lt_expf" : "exp", *er = w == LT_F32 ? "lt_erff" : "erf";
    char alpha[64], lo[64], hi[64];
    attr_scalar(alpha, sizeof alpha, n, 0);
    switch (op) {
    case LT_OP_NEG: frag(e, cap, "-%s", a); break;
    case LT_OP_ABS: frag(e, cap, "fabs%s(%s)", f, a); break;
    case LT_OP_EXP: frag(e, cap, "%s(%s)", ex, a); break;
    case LT_OP_LOG: frag(e, cap, "log%s(%s)", f, a); break;
    case LT_OP_LOG1P: frag(e, cap, "log1p%s(%s)", f, a); break;
    case LT_OP_EXPM1: frag(e, cap, "expm1%s(%s)", f, a); break;
    case LT_OP_SQRT: frag(e, cap, "sqrt%s(%s)", f, a); break;
    case LT_OP_RSQRT: frag(e, cap, "(%s)1 / sqrt%s(%s)", T, f, a); break;
    case LT_OP_SIN: frag(e, cap, "sin%s(%s)", f, a); break;
    case LT_OP_COS: frag(e, cap, "cos%s(%s)", f, a); break;
    case LT_OP_TANH: frag(e, cap, "tanh%s(%s)", f, a); break;
    case LT_OP_SIGMOID: frag(e, cap, "(%s)1 / ((%s)1 + %s(-%s))", T, T, ex, a); break;
    case LT_OP_RELU: frag(e, cap, "%s <= 0 ? (%s)0 : %s", a, T, a); break;
    case LT_OP_GELU:
        frag(e, cap, "%s * (%s)0.5 * ((%s)1 + %s(%s * (%s)0.70710678118654752440))", a, T, T, er, a, T);
        break;
    case LT_OP_SILU: frag(e, cap, "%s / ((%s)1 + %s(-%s))", a, T, ex, a); break;
    case LT_OP_ERF: frag(e, cap, "%s(%s)", er, a); break;
    case LT_OP_SIGN: frag(e, cap, "(%s)((%s > 0) - (%s < 0))", T, a, a); break;
    case LT_OP_FLOOR: frag(e, cap, "floor%s(%s)", f, a); break;
    case LT_OP_CEIL: frag(e, cap, "ceil%s(%s)", f, a); break;
    case LT_OP_ROUND: frag(e, cap, "rint%s(%s)", f, a); break;
    case LT_OP_RECIPROCAL: frag(e, cap, "(%s)1 / %s", T, a); break;
    case LT_OP_CLAMP:
        attr_scalar(lo, sizeof lo, n, 0);
        attr_scalar(hi, sizeof hi, n, 1);
        frag(e, cap, "%s < (%s)%s ? (%s)%s : %s > (%s)%s ? (%s)%s : %s", a, T, lo, T, lo, a, T, hi, T, hi, a);
        break;
    case LT_OP_ADD:
    case LT_OP_SUB: {
        bool scaled = n->attrs.nf > 0 && (n->attr_param[0] >= 0 || n->attrs.f[0] != 1.0);
        const char *sign = op == LT_OP_ADD ? "+" : "-";
        if (scaled)
            frag(e, cap, "%s %s (%s)%s * %s", a, sign, T, alpha, b);
        else
            frag(e, cap, "%s %s %s", a, sign, b);
        break;
    }
    case LT_OP_MUL: frag(e, cap, "%s * %s", a, b); break;
    case LT_OP_DIV: frag(e, cap, "%s / %s", a, b); break;
    case LT_OP_POW: frag(e, cap, "pow%s(%s, %s)", f, a, b); break;
    case LT_OP_MAXIMUM: frag(e, cap, "(%s != %s || %s > %s) ? %s : %s", a, a, a, b, a, b); break;
    case LT_OP_MINIMUM: frag(e, cap, "(%s != %s || %s < %s) ? %s : %s", a, a, a, b, a, b); break;
    case LT_OP_REMAINDER: frag(e, cap, "lt_remainder%s(%s, %s)", f, a, b); break;
    default: return float_expr_ext(op, n, f, a, b, e, cap);
    }
    return true;
}

/* Integer trunc, bitwise ops and shifts, as the eager loops: computed in
 * the unsigned type; shifts by the width or more (or by a negative
 * amount) give 0, or the sign for a right shift. */
static bool int_expr_bitwise(lt_op op, int w, const char *a, const char *b, char *e, size_t cap)
{
    const char *T = vtype(w), *U = w == LT_I32 ? "uint32_t" : w == LT_I64 ? "uint64_t" : "unsigned";
    int bits = w == LT_I32 ? 32 : w == LT_I64 ? 64 : 8;
    bool u8 = w == LT_U8;
    const char *sym = op == LT_OP_BITWISE_AND ? "&" : op == LT_OP_BITWISE_OR ? "|" : "^";
    switch (op) {
    case LT_OP_TRUNC: frag(e, cap, "%s", a); break;
    case LT_OP_BITWISE_NOT: frag(e, cap, "(%s)~(%s)%s", T, U, a); break;
    case LT_OP_BITWISE_AND: case LT_OP_BITWISE_OR: case LT_OP_BITWISE_XOR:
        frag(e, cap, "(%s)((%s)%s %s (%s)%s)", T, U, a, sym, U, b);
        break;
    case LT_OP_SHIFT_LEFT:
        frag(e, cap, "(%s)%s >= %d ? (%s)0 : (%s)((%s)%s << (%s)%s)", U, b, bits, T, T, U, a, U, b);
        break;
    case LT_OP_SHIFT_RIGHT:
        if (u8)
            frag(e, cap, "%s >= 8 ? (uint8_t)0 : (uint8_t)(%s >> %s)", b, a, b);
        else
            frag(e, cap, "(%s)%s >= %d ? (%s)(%s < 0 ? -1 : 0) : (%s)(%s >> %s)", U, b, bits, T, a, T, a, b);
        break;
    default: return false;
    }
    return true;
}

/* Integer (i32, i64, u8) expression; arithmetic wraps like the eager loops. */
static bool int_expr(lt_op op, const lt_gnode *n, int w, const char *a, const char *b, char *e, size_t cap)
{
    const char *T = vtype(w), *U = w == LT_I32 ? "uint32_t" : w == LT_I64 ? "uint64_t" : "unsigned";
    const char *lim_lo = w == LT_I32 ? "INT32_MIN" : w == LT_I64 ? "INT64_MIN" : "0";
    const char *lim_hi = w == LT_I32 ? "INT32_MAX" : w == LT_I64 ? "INT64_MAX" : "UINT8_MAX";
    bool u8 = w == LT_U8;
    /* lo holds hi (the lower bound saturates at the upper one) */
    char alpha[64], lo[384], hi[160], sa[160];
    attr_scalar(alpha, sizeof alpha, n, 0);
    bool scaled = n->attrs.nf > 0 && (n->attr_param[0] >= 0 || n->attrs.f[0] != 1.0);
    if (u8)
        frag(sa, sizeof sa, "(uint8_t)lt_int_alpha(%s)", alpha);
    else
        frag(sa, sizeof sa, "(%s)lt_int_alpha(%s)", U, alpha);
    switch (op) {
    case LT_OP_NEG:
        if (u8)
            frag(e, cap, "(uint8_t)(0u - %s)", a);
        else
            frag(e, cap, "(%s)((%s)0 - (%s)%s)", T, U, U, a);
        break;
    case LT_OP_ABS:
        if (u8)
            frag(e, cap, "%s", a);
        else
            frag(e, cap, "%s < 0 ? (%s)((%s)0 - (%s)%s) : %s", a, T, U, U, a, a);
        break;
    case LT_OP_RELU:
        if (u8)
            frag(e, cap, "%s", a);
        else
            frag(e, cap, "%s < 0 ? 0 : %s", a, a);
        break;
    case LT_OP_SIGN:
        if (u8)
            frag(e, cap, "(uint8_t)(%s != 0)", a);
        else
            frag(e, cap, "(%s)((%s > 0) - (%s < 0))", T, a, a);
        break;
    case LT_OP_FLOOR: case LT_OP_CEIL: case LT_OP_ROUND: frag(e, cap, "%s", a); break;
    case LT_OP_CLAMP: {
        char los[64], his[64];
        attr_scalar(los, sizeof los, n, 0);
        attr_scalar(his, sizeof his, n, 1);
        /* the upper bound rounds down, the lower one up; both saturate */
        frag(hi, sizeof hi, "(%s)lt_int_bound(%s, 0, %s, %s)", T, his, lim_lo, lim_hi);
        frag(lo, sizeof lo, "(%s)lt_int_bound(%s, 1, %s, %s)", T, los, lim_lo, hi);
        frag(e, cap, "%s < %s ? %s : %s > %s ? %s : %s", a, lo, lo, a, hi, hi, a);
        break;
    }
    case LT_OP_ADD:
    case LT_OP_SUB: {
        const char *sign = op == LT_OP_ADD ? "+" : "-";
        if (u8 && scaled)
            frag(e, cap, "(uint8_t)(%s %s %s * %s)", a, sign, sa, b);
        else if (u8)
            frag(e, cap, "(uint8_t)(%s %s %s)", a, sign, b);
        else if (scaled)
            frag(e, cap, "(%s)((%s)%s %s %s * (%s)%s)", T, U, a, sign, sa, U, b);
        else
            frag(e, cap, "(%s)((%s)%s %s (%s)%s)", T, U, a, sign, U, b);
        break;
    }
    case LT_OP_MUL:
        if (u8)
            frag(e, cap, "(uint8_t)(%s * %s)", a, b);
        else
            frag(e, cap, "(%s)((%s)%s * (%s)%s)", T, U, a, U, b);
        break;
    case LT_OP_MAXIMUM: frag(e, cap, "%s > %s ? %s : %s", a, b, a, b); break;
    case LT_OP_MINIMUM: frag(e, cap, "%s < %s ? %s : %s", a, b, a, b); break;
    default: return int_expr_bitwise(op, w, a, b, e, cap);
    }
    return true;
}

/* Bool working dtype: add is "or", mul is "and" (as in PyTorch). */
static bool bool_expr(lt_op op, const lt_gnode *n, const char *a, const char *b, char *e, size_t cap)
{
    char alpha[64];
    attr_scalar(alpha, sizeof alpha, n, 0);
    bool scaled = n->attrs.nf > 0 && (n->attr_param[0] >= 0 || n->attrs.f[0] != 1.0);
    switch (op) {
    case LT_OP_ABS: case LT_OP_RELU: case LT_OP_FLOOR: case LT_OP_CEIL: case LT_OP_ROUND: case LT_OP_SIGN:
        frag(e, cap, "%s", a);
        break;
    case LT_OP_ADD:
        if (scaled)
            frag(e, cap, "%s | ((%s != 0) & %s)", a, alpha, b);
        else
            frag(e, cap, "%s | %s", a, b);
        break;
    case LT_OP_MUL: case LT_OP_MINIMUM: frag(e, cap, "%s & %s", a, b); break;
    case LT_OP_MAXIMUM: frag(e, cap, "%s | %s", a, b); break;
    case LT_OP_POW: frag(e, cap, "%s | !%s", a, b); break;
    case LT_OP_BITWISE_NOT: frag(e, cap, "!%s", a); break;
    case LT_OP_BITWISE_AND: frag(e, cap, "%s & %s", a, b); break;
    case LT_OP_BITWISE_OR: frag(e, cap, "%s | %s", a, b); break;
    case LT_OP_BITWISE_XOR: frag(e, cap, "%s ^ %s", a, b); break;
    default: return false;
    }
    return true;
}

static bool predicate_expr(lt_op op, const char *a, const char *b, char *e, size_t cap)
{
    const char *rel = NULL;
    switch (op) {
    case LT_OP_EQ: rel = "=="; break;
    case LT_OP_NE: rel = "!="; break;
    case LT_OP_LT: rel = "<"; break;
    case LT_OP_LE: rel = "<="; break;
    case LT_OP_GT: rel = ">"; break;
    case LT_OP_GE: rel = ">="; break;
    case LT_OP_LOGICAL_AND: frag(e, cap, "(%s != 0) & (%s != 0)", a, b); return true;
    case LT_OP_LOGICAL_OR: frag(e, cap, "(%s != 0) | (%s != 0)", a, b); return true;
    case LT_OP_LOGICAL_NOT: frag(e, cap, "%s == 0", a); return true;
    /* x - x is 0 exactly for finite x (as the eager loops test) */
    case LT_OP_ISNAN: frag(e, cap, "%s != %s", a, a); return true;
    case LT_OP_ISINF: frag(e, cap, "(%s - %s != 0 && %s == %s)", a, a, a, a); return true;
    case LT_OP_ISFINITE: frag(e, cap, "%s - %s == 0", a, a); return true;
    default: return false;
    }
    frag(e, cap, "%s %s %s", a, rel, b);
    return true;
}

/* An elementwise node: converts its operands to the working dtype, applies
 * the op, rounds half-precision results. */
static bool ew_expr(const rctx *c, const kir_inst *in, char *e, size_t cap)
{
    const lt_gnode *n = gnode(c, in->node);
    lt_op op = (lt_op)n->op;
    int od = n->out[0].dtype;
    char a[X_CAP], b[X_CAP], x[X_CAP], t[X_CAP];
    switch (op) {
    case LT_OP_CAST:
        operand(c, in, 0, od, e, cap);
        return true;
    case LT_OP_WHERE:
        operand(c, in, 0, LT_BOOL, t, sizeof t);
        operand(c, in, 1, od, a, sizeof a);
        operand(c, in, 2, od, b, sizeof b);
        frag(e, cap, "%s ? %s : %s", t, a, b);
        return true;
    case LT_OP_MASKED_FILL:
        attr_scalar(t, sizeof t, n, 0);
        cvt(b, sizeof b, t, LT_F64, od);
        operand(c, in, 0, od, a, sizeof a);
        operand(c, in, 1, LT_BOOL, x, sizeof x);
        frag(e, cap, "%s ? %s : %s", x, b, a);
        return true;
    case LT_OP_TRIL:
    case LT_OP_TRIU: {
        /* tril keeps column j <= i + k, triu keeps j >= i + k */
        const lt_meta *m = &n->out[0];
        int64_t rows = m->shape[m->ndim - 2], cols = m->shape[m->ndim - 1], k = n->attrs.i[0];
        k = k < -rows - 1 ? -rows - 1 : k > cols + 1 ? cols + 1 : k;
        char row[256], col[256];
        form_str(c, in->form, row, sizeof row);
        form_str(c, in->form + 1, col, sizeof col);
        operand(c, in, 0, od, a, sizeof a);
        frag(e, cap, "(int64_t)(%s) %s (int64_t)(%s) + %lld ? %s : (%s)0", col, op == LT_OP_TRIL ? "<=" : ">=",
                 row, (long long)k, a, vtype(od));
        return true;
    }
    default:
        break;
    }
    int w = kir_ew_work(c->p->g, n);
    operand(c, in, 0, w, a, sizeof a);
    if (n->nin > 1)
        operand(c, in, 1, w, b, sizeof b);
    else
        b[0] = '\0';
    bool ok;
    if (kir_is_predicate(op))
        return predicate_expr(op, a, b, e, cap);
    if (w == LT_F32 || w == LT_F64)
        ok = float_expr(op, n, w, a, b, x, sizeof x);
    else if (w == LT_BOOL)
        ok = bool_expr(op, n, a, b, x, sizeof x);
    else
        ok = int_expr(op, n, w, a, b, x, sizeof x);
    if (!ok)
        return false;
    if (is_half(od)) /* computed in f32, kept with the output's precision */
        frag(e, cap, "%s(%s)", od == LT_BF16 ? "lt_f32_to_bf16" : "lt_f32_to_f16", x);
    else
        frag(e, cap, "%s", x);
    return true;
}

/* Factories: values of the position. */
static bool factory_expr(const rctx *c, const kir_inst *in, char *e, size_t cap)
{
    const lt_gnode *n = gnode(c, in->node);
    int od = n->out[0].dtype;
    char x[X_CAP], f0[64], f1[64], i0[256] = "0", i1[256] = "0";
    attr_scalar(f0, sizeof f0, n, 0);
    attr_scalar(f1, sizeof f1, n, 1);
    if (in->nforms > 0)
        form_str(c, in->form, i0, sizeof i0);
    if (in->nforms > 1)
        form_str(c, in->form + 1, i1, sizeof i1);
    switch ((lt_op)n->op) {
    case LT_OP_EMPTY: frag(x, sizeof x, "0.0"); break;
    case LT_OP_FULL: frag(x, sizeof x, "%s", f0); break;
    case LT_OP_ARANGE: frag(x, sizeof x, "%s + (double)(%s) * %s", f0, i0, f1); break;
    case LT_OP_LINSPACE:
        frag(x, sizeof x, "lt_linspace(%s, %lld, %s, %s)", i0, (long long)n->out[0].shape[0], f0, f1);
        break;
    case LT_OP_EYE: frag(x, sizeof x, "(%s) == (%s) ? 1.0 : 0.0", i0, i1); break;
    default: return false;
    }
    char par[X_CAP + 4];
    frag(par, sizeof par, "(%s)", x);
    cvt(e, cap, par, LT_F64, od);
    return true;
}

/* ---- instructions ------------------------------------------------------------ */

static void emit_reduce(rctx *c, int r, int depth);
static const char *acc(const rctx *c, char *buf, size_t cap, const char *name);

/* Renders instruction i (not stores, not reduction bodies). */
static void emit_inst(rctx *c, int i, int depth)
{
    const kir_inst *in = &c->k->ins[i];
    char e[4 * X_CAP], off[512];
    sb *b = c->b;
    switch (in->kind) {
    case KI_LOAD: {
        form_str(c, in->form, off, sizeof off);
        indent(b, depth);
        sb_printf(b, "const %s v%d = b%d[%s];\n", vtype(in->dtype), i, local_buf(current_map, in->buf), off);
        return;
    }
    case KI_OP: {
        const lt_gnode *n = gnode(c, in->node);
        bool ok = c->p->cls[in->node] == NC_FACTORY ? factory_expr(c, in, e, sizeof e) : ew_expr(c, in, e, sizeof e);
        if (!ok) {
            c->failed = true;
            return;
        }
        indent(b, depth);
        sb_printf(b, "const %s v%d = %s; /* %s */\n", vtype(in->dtype), i, e, lt_op_name((lt_op)n->op));
        return;
    }
    case KI_REDUCE:
        emit_reduce(c, i, depth);
        return;
    case KI_SECOND: {
        char name[32], xi[64];
        frag(name, sizeof name, "x%d", in->in[0]);
        indent(b, depth);
        sb_printf(b, "const int64_t v%d = %s;\n", i, acc(c, xi, sizeof xi, name));
        return;
    }
    default:
        return; /* constants are declared at the top, stores at the end */
    }
}

static void emit_store(rctx *c, const kir_inst *in, int depth)
{
    char off[512];
    form_str(c, in->form, off, sizeof off);
    indent(c->b, depth);
    int src = c->k->ins[in->in[0]].dtype;
    char v[32], x[X_CAP];
    var(v, sizeof v, in->in[0]);
    cvt(x, sizeof x, v, src, in->dtype);
    sb_printf(c->b, "b%d[%s] = %s;\n", local_buf(current_map, in->buf), off, x);
}

/* ---- loops ---------------------------------------------------------------- */

/* Opens the loops over vars[0..n); `inner` goes before the innermost. With
 * `ranged`, the outermost loop runs over [lo, hi) only: the chunk of a
 * parallel kernel that the library's pool hands this call (emit_kernel_open).
 * Returns the depth inside. */
static int open_loops(rctx *c, const int8_t *vars, int n, bool ranged, const char *inner, int depth)
{
    sb *b = c->b;
    for (int j = 0; j < n; j++) {
        int v = vars[j];
        if (j == n - 1 && inner) {
            indent(b, depth);
            sb_printf(b, "%s\n", inner);
        }
        indent(b, depth);
        if (j == 0 && ranged)
            sb_printf(b, "for (int64_t i%d = lo; i%d < hi; i%d++) {\n", v, v, v);
        else
            sb_printf(b, "for (int64_t i%d = 0; i%d < %lld; i%d++) {\n", v, v, (long long)c->k->ext[v], v);
        depth++;
    }
    return depth;
}

static int close_loops(rctx *c, int n, int depth)
{
    for (int j = n - 1; j >= 0; j--) {
        depth--;
        indent(c->b, depth);
        sb_printf(c->b, "}\n");
    }
    return depth;
}

static int64_t loops_work(const kir_kernel *k, const int8_t *vars, int n)
{
    int64_t w = 1;
    for (int j = 0; j < n; j++)
        w *= k->ext[vars[j]];
    return w;
}

/* Accessor of per-output reduction state `name` (an array over the block
 * in column mode). */
static const char *acc(const rctx *c, char *buf, size_t cap, const char *name)
{
    if (c->col)
        frag(buf, cap, "%s[i%d - jb]", name, c->col_var);
    else
        frag(buf, cap, "%s", name);
    return buf;
}

/* Declares per-output state `name` of C type T: `T name = init;`, or an
 * array over the column block set to init. */
static void state_decl(rctx *c, const char *T, const char *name, const char *init, int depth)
{
    indent(c->b, depth);
    if (!c->col) {
        sb_printf(c->b, "%s %s = %s;\n", T, name, init);
        return;
    }
    sb_printf(c->b, "%s %s[%d];\n", T, name, COL_BLOCK);
    indent(c->b, depth);
    sb_printf(c->b, "for (int64_t i%d = jb; i%d < je; i%d++)\n", c->col_var, c->col_var, c->col_var);
    indent(c->b, depth + 1);
    sb_printf(c->b, "%s[i%d - jb] = %s;\n", name, c->col_var, init);
}

/* Declares per-output state `name` = expr (expr already uses accessors). */
static void state_set(rctx *c, const char *T, const char *name, const char *expr, int depth)
{
    indent(c->b, depth);
    if (!c->col) {
        sb_printf(c->b, "const %s %s = %s;\n", T, name, expr);
        return;
    }
    sb_printf(c->b, "%s %s[%d];\n", T, name, COL_BLOCK);
    indent(c->b, depth);
    sb_printf(c->b, "for (int64_t i%d = jb; i%d < je; i%d++)\n", c->col_var, c->col_var, c->col_var);
    indent(c->b, depth + 1);
    sb_printf(c->b, "%s[i%d - jb] = %s;\n", name, c->col_var, expr);
}

/* Renders the body instructions of reduction r (one pass), then `stmt`. */
static void emit_body(rctx *c, int r, const char *stmt, int depth)
{
    const kir_inst *red = &c->k->ins[r];
    for (int i = r + 1; i < red->body_end; i++)
        if (c->k->ins[i].scope == r)
            emit_inst(c, i, depth);
    indent(c->b, depth);
    sb_printf(c->b, "%s\n", stmt);
}

/* One pass over the reduced range. Row mode: `red_clause` ("+:a3") enables
 * simd on the innermost loop; NULL runs plainly. A reduction to one value
 * (no domain loop) runs on one thread: splitting it needs partial results
 * per chunk, not rendered yet. Column mode: the block's outputs are
 * the innermost (simd) loop of every reduced position. */
static void emit_pass(rctx *c, int r, const char *red_clause, const char *stmt, int depth)
{
    const kir_inst *red = &c->k->ins[r];
    indent(c->b, depth);
    sb_printf(c->b, "{\n");
    if (c->col) {
        int d = open_loops(c, red->rv, red->nrv, false, NULL, depth + 1);
        indent(c->b, d);
        sb_printf(c->b, "#pragma omp simd\n");
        indent(c->b, d);
        sb_printf(c->b, "for (int64_t i%d = jb; i%d < je; i%d++) {\n", c->col_var, c->col_var, c->col_var);
        emit_body(c, r, stmt, d + 1);
        indent(c->b, d);
        sb_printf(c->b, "}\n");
        close_loops(c, red->nrv, d);
    } else {
        char simd[128] = "";
        if (red_clause)
            frag(simd, sizeof simd, "#pragma omp simd reduction(%s)", red_clause);
        int d = open_loops(c, red->rv, red->nrv, false, red_clause ? simd : NULL, depth + 1);
        emit_body(c, r, stmt, d);
        close_loops(c, red->nrv, d);
    }
    indent(c->b, depth);
    sb_printf(c->b, "}\n");
}

/* Compute dtype of a reduction over input dtype dt (reduce.c's rules). */
static int reduce_compute(lt_op op, int dt)
{
    if (op == LT_OP_ALL || op == LT_OP_ANY)
        return LT_BOOL;
    if (is_half(dt) || (op == LT_OP_LOGSUMEXP && !lt_dtype_is_floating((lt_dtype)dt)))
        return LT_F32;
    return dt;
}

static const char *max_init(int dt, bool max)
{
    switch (dt) {
    case LT_F32: case LT_F64: return max ? "-INFINITY" : "INFINITY";
    case LT_I32: return max ? "INT32_MIN" : "INT32_MAX";
    case LT_I64: return max ? "INT64_MIN" : "INT64_MAX";
    case LT_U8: return max ? "0" : "UINT8_MAX";
    default: return max ? "0" : "1";
    }
}

/* a<r> (C type of cdt) = max/min over the pass, NaN propagating (n<r>
 * flags a NaN; the caller folds it in). */
static void emit_extremum(rctx *c, int r, bool max, int cdt, const char *x, int depth)
{
    char stmt[2 * X_CAP], clause[64], a[64], nn[64], an[32], nname[32];
    bool fl = cdt == LT_F32 || cdt == LT_F64;
    frag(an, sizeof an, "a%d", r);
    frag(nname, sizeof nname, "n%d", r);
    acc(c, a, sizeof a, an);
    acc(c, nn, sizeof nn, nname);
    if (cdt == LT_BOOL) {
        state_decl(c, "int", an, max ? "0" : "1", depth);
        frag(stmt, sizeof stmt, "%s %s= (int)(%s);", a, max ? "|" : "&", x);
        frag(clause, sizeof clause, "%s:a%d", max ? "|" : "&", r);
        emit_pass(c, r, clause, stmt, depth);
        return;
    }
    state_decl(c, vtype(cdt), an, max_init(cdt, max), depth);
    if (fl) {
        state_decl(c, "int", nname, "0", depth);
        frag(stmt, sizeof stmt, "{ const %s x_ = %s; %s = x_ %s %s ? x_ : %s; %s |= x_ != x_; }", vtype(cdt), x, a,
             max ? ">" : "<", a, a, nn);
        frag(clause, sizeof clause, "%s:a%d) reduction(|:n%d", max ? "max" : "min", r, r);
    } else {
        frag(stmt, sizeof stmt, "{ const %s x_ = %s; %s = x_ %s %s ? x_ : %s; }", vtype(cdt), x, a, max ? ">" : "<", a,
             a);
        frag(clause, sizeof clause, "%s:a%d", max ? "max" : "min", r);
    }
    emit_pass(c, r, clause, stmt, depth);
}

/* What a reduction needs to know about itself. */
typedef struct red_info {
    lt_op op;
    int cdt;     /* compute dtype */
    bool fl;     /* floating compute dtype */
    int64_t nred;
    char x[X_CAP]; /* the element, converted to cdt */
} red_info;

static void red_info_of(const rctx *c, int r, red_info *ri)
{
    const kir_inst *red = &c->k->ins[r];
    const lt_gnode *n = gnode(c, red->node);
    const kir_inst *src = &c->k->ins[red->in[0]];
    lt_gvalue iv = c->p->g->inputs[n->first_input];
    const lt_meta *im = &c->p->g->nodes[iv.node].out[iv.out];
    bool mask[LT_MAX_DIMS];
    kir_reduce_mask(n, im, mask);
    ri->op = (lt_op)n->op;
    ri->cdt = reduce_compute(ri->op, src->dtype);
    ri->fl = ri->cdt == LT_F32 || ri->cdt == LT_F64;
    ri->nred = 1;
    for (int d = 0; d < im->ndim; d++)
        if (mask[d])
            ri->nred *= im->shape[d];
    char v[32];
    var(v, sizeof v, red->in[0]);
    cvt(ri->x, sizeof ri->x, v, src->dtype, ri->cdt);
}

/* The loops of reduction r: accumulators and passes (no result yet). */
static void emit_reduce_passes(rctx *c, int r, int depth)
{
    const kir_inst *red = &c->k->ins[r];
    const lt_gnode *n = gnode(c, red->node);
    red_info ri;
    red_info_of(c, r, &ri);
    const char *x = ri.x;
    char stmt[2 * X_CAP], clause[64], name[32], a[64], e[256], m[64], q[64], hh[64], sname[32], s2[64], nn[64];
    sb *b = c->b;
    indent(b, depth);
    sb_printf(b, "/* %s over %lld elements */\n", lt_op_name(ri.op), (long long)ri.nred);
    frag(name, sizeof name, "a%d", r);
    acc(c, a, sizeof a, name);
    switch (ri.op) {
    case LT_OP_SUM:
    case LT_OP_PROD:
    case LT_OP_MEAN: {
        const char *T = ri.fl ? "double" : "uint64_t", *o = ri.op == LT_OP_PROD ? "*" : "+";
        state_decl(c, T, name, ri.op == LT_OP_PROD ? "1" : "0", depth);
        frag(stmt, sizeof stmt, "%s %s= (%s)(%s);", a, o, T, x);
        frag(clause, sizeof clause, "%s:a%d", o, r);
        emit_pass(c, r, clause, stmt, depth);
        return;
    }
    case LT_OP_AMAX:
    case LT_OP_AMIN:
    case LT_OP_ANY:
    case LT_OP_ALL:
        emit_extremum(c, r, ri.op == LT_OP_AMAX || ri.op == LT_OP_ANY, ri.cdt, x, depth);
        return;
    case LT_OP_VAR:
    case LT_OP_STD: {
        state_decl(c, "double", name, "0", depth);
        frag(stmt, sizeof stmt, "%s += (double)(%s);", a, x);
        frag(clause, sizeof clause, "+:a%d", r);
        emit_pass(c, r, clause, stmt, depth);
        frag(sname, sizeof sname, "m%d", r);
        frag(e, sizeof e, "%s / %lld.0", a, (long long)ri.nred);
        state_set(c, "double", sname, e, depth);
        acc(c, m, sizeof m, sname);
        frag(sname, sizeof sname, "q%d", r);
        acc(c, q, sizeof q, sname);
        state_decl(c, "double", sname, "0", depth);
        frag(stmt, sizeof stmt, "{ const double d_ = (double)(%s) - %s; %s += d_ * d_; }", x, m, q);
        frag(clause, sizeof clause, "+:q%d", r);
        emit_pass(c, r, clause, stmt, depth);
        return;
    }
    case LT_OP_LOGSUMEXP: {
        emit_extremum(c, r, true, ri.cdt, x, depth);
        frag(sname, sizeof sname, "n%d", r);
        acc(c, nn, sizeof nn, sname);
        frag(sname, sizeof sname, "h%d", r);
        frag(e, sizeof e, "%s ? (double)NAN : isinf(%s) ? 0.0 : (double)%s", nn, a, a);
        state_set(c, "double", sname, e, depth);
        acc(c, hh, sizeof hh, sname);
        frag(sname, sizeof sname, "s%d", r);
        acc(c, s2, sizeof s2, sname);
        state_decl(c, "double", sname, "0", depth);
        if (ri.cdt == LT_F32)
            frag(stmt, sizeof stmt, "%s += (double)lt_expf(%s - (float)%s);", s2, x, hh);
        else
            frag(stmt, sizeof stmt, "%s += exp(%s - %s);", s2, x, hh);
        frag(clause, sizeof clause, "+:s%d", r);
        emit_pass(c, r, clause, stmt, depth);
        return;
    }
    default: { /* argmax, argmin, max_dim, min_dim: first extreme, NaN first */
        bool max = ri.op == LT_OP_ARGMAX || ri.op == LT_OP_MAX_DIM;
        char flat[512], xi[64], xname[32];
        form_str(c, red->form, flat, sizeof flat);
        state_decl(c, vtype(ri.cdt), name, max_init(ri.cdt, max), depth);
        frag(xname, sizeof xname, "x%d", r);
        acc(c, xi, sizeof xi, xname);
        state_decl(c, "int64_t", xname, "0", depth);
        if (ri.fl)
            frag(stmt, sizeof stmt, "{ const %s x_ = %s; if (x_ %s %s || (x_ != x_ && %s == %s)) { %s = x_; %s = %s; } }",
                 vtype(ri.cdt), x, max ? ">" : "<", a, a, a, a, xi, flat);
        else
            frag(stmt, sizeof stmt, "{ const %s x_ = %s; if (x_ %s %s) { %s = x_; %s = %s; } }", vtype(ri.cdt), x,
                 max ? ">" : "<", a, a, xi, flat);
        emit_pass(c, r, NULL, stmt, depth);
        return;
    }
    }
    (void)n;
}

/* v<r> = the reduction's result (after its passes; per output). */
static void emit_reduce_result(rctx *c, int r, int depth)
{
    const kir_inst *red = &c->k->ins[r];
    red_info ri;
    red_info_of(c, r, &ri);
    char val[X_CAP], a[64], nn[64], name[32], out[X_CAP];
    int from = ri.cdt;
    frag(name, sizeof name, "a%d", r);
    acc(c, a, sizeof a, name);
    frag(name, sizeof name, "n%d", r);
    acc(c, nn, sizeof nn, name);
    switch (ri.op) {
    case LT_OP_SUM:
    case LT_OP_PROD:
        frag(val, sizeof val, ri.fl ? "%s" : "(int64_t)%s", a);
        from = ri.fl ? LT_F64 : LT_I64;
        break;
    case LT_OP_MEAN:
        frag(val, sizeof val, "%s / %lld.0", a, (long long)ri.nred);
        from = LT_F64;
        break;
    case LT_OP_AMAX:
    case LT_OP_AMIN:
    case LT_OP_ANY:
    case LT_OP_ALL:
        if (ri.cdt == LT_BOOL)
            frag(val, sizeof val, "(%s != 0)", a);
        else if (ri.fl)
            frag(val, sizeof val, "(%s ? (%s)NAN : %s)", nn, vtype(ri.cdt), a);
        else
            frag(val, sizeof val, "%s", a);
        break;
    case LT_OP_VAR:
    case LT_OP_STD: {
        char corr[64], q[64];
        attr_scalar(corr, sizeof corr, gnode(c, red->node), 0);
        frag(name, sizeof name, "q%d", r);
        acc(c, q, sizeof q, name);
        frag(val, sizeof val, "%s(%s / (%lld.0 - %s > 0 ? %lld.0 - %s : 0.0))", ri.op == LT_OP_STD ? "sqrt" : "", q,
             (long long)ri.nred, corr, (long long)ri.nred, corr);
        from = LT_F64;
        break;
    }
    case LT_OP_LOGSUMEXP: {
        char s2[64], hh[64];
        frag(name, sizeof name, "s%d", r);
        acc(c, s2, sizeof s2, name);
        frag(name, sizeof name, "h%d", r);
        acc(c, hh, sizeof hh, name);
        frag(val, sizeof val, "log(%s) + %s", s2, hh);
        from = LT_F64;
        break;
    }
    case LT_OP_ARGMAX:
    case LT_OP_ARGMIN:
        frag(name, sizeof name, "x%d", r);
        acc(c, val, sizeof val, name);
        from = LT_I64;
        break;
    default: /* max_dim, min_dim: the value; KI_SECOND takes the index */
        frag(val, sizeof val, "%s", a);
        break;
    }
    cvt(out, sizeof out, val, from, red->dtype);
    indent(c->b, depth);
    sb_printf(c->b, "const %s v%d = %s;\n", vtype(red->dtype), r, out);
}

static void emit_reduce(rctx *c, int r, int depth)
{
    if (!c->col)
        emit_reduce_passes(c, r, depth);
    emit_reduce_result(c, r, depth);
}

/* ---- kernels ----------------------------------------------------------------- */

/* Declares the kernel's buffer pointers (its own numbers, in the order of
 * its instructions) and constants. */
static void emit_prologue(rctx *c)
{
    const kir_kernel *k = c->k;
    sb *b = c->b;
    bool *stored = calloc((size_t)c->p->nb + 1, 1), *loaded = calloc((size_t)c->p->nb + 1, 1);
    if (!stored || !loaded) {
        free(stored);
        free(loaded);
        c->failed = true;
        return;
    }
    for (int i = 0; i < k->nins; i++) {
        if (k->ins[i].kind == KI_STORE || k->ins[i].kind == KI_LOAD)
            local_buf(current_map, k->ins[i].buf);
        if (k->ins[i].kind == KI_STORE)
            stored[k->ins[i].buf] = true;
        if (k->ins[i].kind == KI_LOAD)
            loaded[k->ins[i].buf] = true;
    }
    if (k->kind == KK_ROW) {
        local_buf(current_map, k->row_buf);
        stored[k->row_buf] = true;
    }
    for (int l = 0; l < current_map->nbuf; l++) {
        int i = current_map->buf[l];
        const char *t = stype(c->p->b[i].meta.dtype);
        if (stored[i])
            sb_printf(b, "    %s *restrict b%d = (%s *)B[%d];\n", t, l, t, l);
        else if (loaded[i])
            sb_printf(b, "    const %s *restrict b%d = (const %s *)B[%d];\n", t, l, t, l);
    }
    free(stored);
    free(loaded);
    for (int i = 0; i < k->nins; i++) {
        const kir_inst *in = &k->ins[i];
        if (in->kind != KI_CONST)
            continue;
        const lt_gnode *n = gnode(c, in->node);
        char lit[64];
        if (n->slot >= 0)
            frag(lit, sizeof lit, "S[%d]", local_slot(current_map, n->slot));
        else
            double_literal(lit, sizeof lit, n->scalar);
        sb_printf(b, "    const double v%d = %s;\n", i, lit);
    }
    sb_printf(b, "    (void)S;\n");
}

/* A comment on kernel `index`: what it computes and the buffers it
 * defines (in the entry point, before its call). */
static void describe(rctx *c, int index)
{
    const kir_kernel *k = &c->p->k[index];
    sb *b = c->b;
    char shape[160];
    sb_printf(b, "    /* kernel %d: ", index);
    if (k->kind == KK_ROW) {
        const lt_gnode *n = gnode(c, k->node);
        sb_printf(b, "%s along dim %d of %s%s", lt_op_name((lt_op)n->op), k->row_var,
                  lt_dtype_name((lt_dtype)n->out[0].dtype), lt_shape_str(n->out[0].shape, n->out[0].ndim, shape, sizeof shape));
    } else {
        sb_printf(b, "pointwise over %s:", lt_shape_str(k->dom, k->ndom, shape, sizeof shape));
        for (int i = 0; i < k->nins; i++)
            if (k->ins[i].kind == KI_OP || k->ins[i].kind == KI_REDUCE)
                sb_printf(b, " %s", lt_op_name((lt_op)gnode(c, k->ins[i].node)->op));
    }
    sb_printf(b, " -> ");
    bool first = true;
    for (int i = 0; i < c->p->nb; i++) {
        if (c->p->b[i].def != index)
            continue;
        sb_printf(b, "%sB[%d]", first ? "" : ", ", i);
        first = false;
    }
    sb_printf(b, " */\n");
}

/*
 * Column mode: when a kernel's reductions read along its innermost domain
 * loop (coefficient 1) but not along their own innermost loop (a bias
 * gradient: the sum over the rows of [N, D]), each block of COL_BLOCK
 * outputs (fewer for a narrow domain, so the threads get several blocks)
 * accumulates whole rows, vectorized, instead of walking down one column at
 * a time. Loads contiguous along the reduction are allowed when they do not
 * depend on the column (per-row values, such as a layer norm's statistics).
 * Requires reduction bodies that read nothing computed at the domain level
 * (constants aside).
 */
static bool use_column_mode(const kir_kernel *k)
{
    if (k->nloop == 0)
        return false;
    int j = k->loop[k->nloop - 1];
    bool any = false;
    for (int r = 0; r < k->nins; r++) {
        const kir_inst *red = &k->ins[r];
        if (red->kind != KI_REDUCE)
            continue;
        if (red->nrv == 0)
            return false;
        int inner = red->rv[red->nrv - 1];
        bool along_j = false;
        for (int i = r + 1; i < red->body_end; i++) {
            const kir_inst *in = &k->ins[i];
            for (int o = 0; o < 3; o++)
                if (in->in[o] >= 0 && k->ins[in->in[o]].scope != r && k->ins[in->in[o]].kind != KI_CONST)
                    return false;
            if (in->kind != KI_LOAD)
                continue;
            const kir_aff *f = &k->forms[in->form];
            if (f->a[inner] == 1 && f->a[j] != 0)
                return false; /* contiguous along the reduction: row mode */
            along_j = along_j || f->a[j] == 1;
        }
        if (!along_j)
            return false;
        any = true;
    }
    return any;
}

/* A kernel's function header. A parallel kernel is two functions: the
 * chunk function kernel<i>_chunk, whose outermost loop runs over the
 * [lo, hi) the pool gives it, and kernel<i>, which hands the pool that loop
 * (`extent` iterations of `per_iter` element operations each). Then the
 * prologue. */
static void emit_kernel_open(rctx *c, bool parallel)
{
    sb *b = c->b;
    if (parallel) {
        sb_printf(b, "static void " FN_TOKEN "_chunk(void *ctx_, int64_t lo, int64_t hi, int64_t chunk_)\n{\n");
        sb_printf(b, "    void *const *restrict B = ((const lt_kctx *)ctx_)->B;\n");
        sb_printf(b, "    const double *restrict S = ((const lt_kctx *)ctx_)->S;\n");
        sb_printf(b, "    (void)chunk_;\n");
    } else {
        sb_printf(b, "%s void " FN_TOKEN KERNEL_PARAMS "\n{\n", c->linkage);
        sb_printf(b, "    (void)rt;\n");
    }
    emit_prologue(c);
}

static void emit_kernel_close(rctx *c, bool parallel, int64_t extent, int64_t per_iter)
{
    sb *b = c->b;
    sb_printf(b, "}\n\n");
    if (!parallel)
        return;
    int64_t grain = per_iter >= PAR_CHUNK_WORK ? 1 : (PAR_CHUNK_WORK + per_iter - 1) / per_iter;
    sb_printf(b, "%s void " FN_TOKEN KERNEL_PARAMS "\n{\n", c->linkage);
    sb_printf(b, "    lt_kctx ctx_ = {B, S};\n");
    sb_printf(b, "    rt->parallel_for(%lldLL, %lldLL, 1, " FN_TOKEN "_chunk, &ctx_);\n", (long long)extent,
              (long long)grain);
    sb_printf(b, "}\n\n");
}

static bool has_reduction(const kir_kernel *k)
{
    for (int i = 0; i < k->nins; i++)
        if (k->ins[i].kind == KI_REDUCE)
            return true;
    return false;
}

/* A form that names no loop variable: the same offset in every iteration. */
static bool form_is_constant(const kir_aff *f)
{
    if (f->expr >= 0)
        return false;
    for (int v = 0; v < KIR_MAXV; v++)
        if (f->a[v] != 0)
            return false;
    return true;
}

/* Marks the loop-invariant instructions of a pointwise kernel: constants,
 * loads at a constant offset of buffers the kernel does not store, and
 * elementwise ops of invariant operands alone. Such values (Adam's bias
 * corrections, pow(beta, step) and its square root, from a 0-d step count)
 * are computed once per call before the loops: in the loop, an f64 pow per
 * element cost more than the update itself, and GCC does not hoist calls
 * out of a loop marked simd. Instructions inside reductions stay where
 * they are. */
static void mark_invariant(const rctx *c, bool *invariant)
{
    const kir_kernel *k = c->k;
    for (int i = 0; i < k->nins; i++) {
        const kir_inst *in = &k->ins[i];
        invariant[i] = false;
        if (in->scope >= 0)
            continue;
        if (in->kind == KI_CONST) {
            invariant[i] = true;
        } else if (in->kind == KI_LOAD) {
            bool stored = false;
            for (int j = 0; j < k->nins && !stored; j++)
                stored = k->ins[j].kind == KI_STORE && k->ins[j].buf == in->buf;
            invariant[i] = !stored && form_is_constant(&k->forms[in->form]);
        } else if (in->kind == KI_OP && c->p->cls[in->node] == NC_EW && in->nforms == 0) {
            bool all = true;
            for (int j = 0; j < 3 && all; j++)
                all = in->in[j] < 0 || invariant[in->in[j]];
            invariant[i] = all;
        }
    }
}

/* Emits the invariant loads and ops (constants are in the prologue). */
static void emit_invariants(rctx *c, const bool *invariant)
{
    for (int i = 0; i < c->k->nins; i++)
        if (invariant[i] && c->k->ins[i].kind != KI_CONST)
            emit_inst(c, i, 1);
}

static void emit_pointwise(rctx *c)
{
    const kir_kernel *k = c->k;
    sb *b = c->b;
    int64_t work = loops_work(k, k->loop, k->nloop), inner = 1;
    for (int i = 0; i < k->nins; i++)
        if (k->ins[i].kind == KI_REDUCE)
            inner += loops_work(k, k->ins[i].rv, k->ins[i].nrv);
    bool parallel = k->nloop > 0 && k->ext[k->loop[0]] > 1 && work * inner >= LT_PARALLEL_GRAIN;
    bool *invariant = malloc((size_t)k->nins + 1);
    if (!invariant) {
        c->failed = true;
        return;
    }
    mark_invariant(c, invariant);
    c->col = use_column_mode(k);
    int64_t extent = 0, per_iter = 0; /* of the loop the pool splits */
    int d;
    if (!c->col) {
        extent = k->nloop > 0 ? k->ext[k->loop[0]] : 0;
        per_iter = extent > 0 ? work * inner / extent : 0;
        emit_kernel_open(c, parallel);
        emit_invariants(c, invariant);
        /* Without reductions every iteration is independent (each loads
         * before it stores, and stores only its own elements), so the
         * innermost loop is marked simd: GCC's cost model otherwise gives
         * up on loops with several outputs and mixed f32/f64 values, such
         * as the optimizers' updates. */
        d = open_loops(c, k->loop, k->nloop, parallel, has_reduction(k) ? NULL : "#pragma omp simd", 1);
    } else {
        /* the outer domain loops, then blocks of the innermost one */
        c->col_var = k->loop[k->nloop - 1];
        long long ext = (long long)k->ext[c->col_var], step = COL_BLOCK;
        while (step > COL_BLOCK / 4 && (ext + step - 1) / step < 4)
            step /= 2; /* a few blocks at least, for the threads */
        long long blocks = (ext + step - 1) / step;
        bool outer = k->nloop > 1;
        extent = outer ? k->ext[k->loop[0]] : blocks;
        per_iter = work * inner / extent;
        parallel = parallel && extent > 1;
        emit_kernel_open(c, parallel);
        emit_invariants(c, invariant);
        d = open_loops(c, k->loop, k->nloop - 1, parallel && outer, NULL, 1);
        indent(b, d);
        if (parallel && !outer)
            sb_printf(b, "for (int64_t blk = lo; blk < hi; blk++) {\n");
        else
            sb_printf(b, "for (int64_t blk = 0; blk < %lld; blk++) {\n", blocks);
        d++;
        indent(b, d);
        sb_printf(b, "const int64_t jb = blk * %lld, je = jb + %lld < %lld ? jb + %lld : %lld;\n", step, step, ext,
                  step, ext);
        for (int i = 0; i < k->nins; i++)
            if (k->ins[i].kind == KI_REDUCE)
                emit_reduce_passes(c, i, d);
        indent(b, d);
        sb_printf(b, "for (int64_t i%d = jb; i%d < je; i%d++) {\n", c->col_var, c->col_var, c->col_var);
        d++;
    }
    for (int i = 0; i < k->nins; i++)
        if (k->ins[i].scope < 0 && k->ins[i].kind != KI_STORE && !invariant[i])
            emit_inst(c, i, d);
    free(invariant);
    /* stores last: every load of an iteration happens before any store, so
     * an output may share a donated input's buffer */
    for (int i = 0; i < k->nins; i++)
        if (k->ins[i].kind == KI_STORE)
            emit_store(c, &k->ins[i], d);
    if (!c->col) {
        close_loops(c, k->nloop, d);
    } else {
        for (int t = 0; t < 2; t++) {
            d--;
            indent(b, d);
            sb_printf(b, "}\n");
        }
        close_loops(c, k->nloop - 1, d);
        c->col = false;
    }
    emit_kernel_close(c, parallel, extent, per_iter);
}

/* softmax / log_softmax of one row at a time, like the eager row loop:
 * the max, the sum of exp(x - max) in double, then the outputs. */
static void emit_row(rctx *c)
{
    const kir_kernel *k = c->k;
    sb *b = c->b;
    const lt_gnode *n = gnode(c, k->node);
    int dt = n->out[0].dtype;
    const char *T = vtype(dt), *E = dt == LT_F32 ? "lt_expf" : "exp";
    bool log_softmax = n->op == LT_OP_LOG_SOFTMAX;
    int64_t work = loops_work(k, k->loop, k->nloop) * k->ext[k->row_var];
    bool parallel = k->nloop > 0 && k->ext[k->loop[0]] > 1 && work >= LT_PARALLEL_GRAIN;
    emit_kernel_open(c, parallel);
    int row_buf = local_buf(current_map, k->row_buf);
    int d = open_loops(c, k->loop, k->nloop, parallel, NULL, 1);
    char x[64], off[512];
    frag(x, sizeof x, "v%d", k->row_input);
    form_str(c, k->row_form, off, sizeof off);
    int rv = k->row_var;
    long long len = (long long)k->ext[rv];
    /* the row's input expression, rendered inside each pass */
#define ROW_PASS_OF(with_input, pragma_text, ...)                                  \
    do {                                                                           \
        indent(b, d);                                                              \
        sb_printf(b, "%s\n", pragma_text);                                         \
        indent(b, d);                                                              \
        sb_printf(b, "for (int64_t i%d = 0; i%d < %lld; i%d++) {\n", rv, rv, len, rv); \
        for (int i = 0; (with_input) && i < k->nins; i++)                          \
            if (k->ins[i].kind != KI_CONST)                                        \
                emit_inst(c, i, d + 1);                                            \
        indent(b, d + 1);                                                          \
        sb_printf(b, __VA_ARGS__);                                                 \
        indent(b, d);                                                              \
        sb_printf(b, "}\n");                                                       \
    } while (0)
#define ROW_PASS(pragma_text, ...) ROW_PASS_OF(true, pragma_text, __VA_ARGS__)
    /* A row whose input is an expression (scale, mask...) rather than a
     * plain load keeps it in the output row during the first pass, so the
     * later passes read it back instead of computing it again. */
    int computed = 0;
    for (int i = 0; i < k->nins; i++)
        computed += k->ins[i].kind != KI_CONST;
    bool keep_input = computed > 1 && (dt == LT_F32 || dt == LT_F64);
    char kept[600];
    frag(kept, sizeof kept, "b%d[%s]", row_buf, off);
    const char *y = keep_input ? kept : x; /* the input in passes after the first */
    indent(b, d);
    sb_printf(b, "%s m = -INFINITY;\n", T);
    indent(b, d);
    sb_printf(b, "int nan = 0;\n");
    if (keep_input)
        ROW_PASS("#pragma omp simd reduction(max:m) reduction(|:nan)",
                 "{ const %s x_ = %s; %s = x_; m = x_ > m ? x_ : m; nan |= x_ != x_; }\n", T, x, kept);
    else
        ROW_PASS("#pragma omp simd reduction(max:m) reduction(|:nan)",
                 "{ const %s x_ = %s; m = x_ > m ? x_ : m; nan |= x_ != x_; }\n", T, x);
    indent(b, d);
    sb_printf(b, "if (nan)\n");
    indent(b, d + 1);
    sb_printf(b, "m = NAN;\n");
    indent(b, d);
    sb_printf(b, "double s = 0;\n");
    if (log_softmax) {
        ROW_PASS_OF(!keep_input, "#pragma omp simd reduction(+:s)", "s += %s(%s - m);\n", E, y);
        indent(b, d);
        sb_printf(b, "const %s lse = (%s)log(s);\n", T, T);
        ROW_PASS_OF(!keep_input, "/* outputs */", "b%d[%s] = %s - m - lse;\n", row_buf, off, y);
    } else {
        ROW_PASS_OF(!keep_input, "#pragma omp simd reduction(+:s)",
                    "{ const %s e = %s(%s - m); b%d[%s] = e; s += e; }\n", T, E, y, row_buf, off);
        indent(b, d);
        sb_printf(b, "const %s inv = (%s)(1.0 / s);\n", T, T);
        indent(b, d);
        sb_printf(b, "for (int64_t i%d = 0; i%d < %lld; i%d++)\n", rv, rv, len, rv);
        indent(b, d + 1);
        sb_printf(b, "b%d[%s] *= inv;\n", row_buf, off);
    }
#undef ROW_PASS
#undef ROW_PASS_OF
    close_loops(c, k->nloop, d);
    int64_t extent = k->nloop > 0 ? k->ext[k->loop[0]] : 1;
    emit_kernel_close(c, parallel, extent, work / (extent > 0 ? extent : 1) * 3);
}

/* ---- the translation unit ------------------------------------------------------ */

static const char prelude[] =
    "#include <math.h>\n"
    "#include <stdbool.h>\n"
    "#include <stdint.h>\n"
    "#include <string.h>\n"
    "\n"
    "typedef struct lt_rt {\n"
    "    void *ctx;\n"
    "    int (*call)(void *ctx, int id); /* runs call `id` of the program's table */\n"
    "    /* the library's pool (src/core/pool.h): fn over [0, n) in chunks */\n"
    "    void (*parallel_for)(int64_t n, int64_t grain, int64_t align,\n"
    "                         void (*fn)(void *ctx, int64_t lo, int64_t hi, int64_t chunk), void *ctx);\n"
    "} lt_rt;\n"
    "/* what a parallel kernel's chunk function reads */\n"
    "typedef struct lt_kctx {\n"
    "    void *const *B;\n"
    "    const double *S;\n"
    "} lt_kctx;\n"
    "\n"
    "/* float to integer, defined where C's cast is not (as core.h) */\n"
    "static inline int32_t lt_float_to_i32(double v)\n"
    "{\n"
    "    return (v > -2147483649.0 && v < 2147483648.0) ? (int32_t)v : INT32_MIN;\n"
    "}\n"
    "static inline int64_t lt_float_to_i64(double v)\n"
    "{\n"
    "    return (v >= -9223372036854775808.0 && v < 9223372036854775808.0) ? (int64_t)v : INT64_MIN;\n"
    "}\n"
    "static inline uint8_t lt_float_to_u8(double v) { return (uint8_t)(uint32_t)lt_float_to_i32(v); }\n"
    "\n"
    "/* bf16: the top half of an f32, rounded to nearest even, NaN kept */\n"
    "static inline float lt_bf16_to_f32(uint16_t h)\n"
    "{\n"
    "    uint32_t bits = (uint32_t)h << 16;\n"
    "    float f;\n"
    "    memcpy(&f, &bits, sizeof f);\n"
    "    return f;\n"
    "}\n"
    "static inline uint16_t lt_f32_to_bf16(float f)\n"
    "{\n"
    "    uint32_t bits;\n"
    "    memcpy(&bits, &f, sizeof bits);\n"
    "    if ((bits & 0x7fffffffu) > 0x7f800000u)\n"
    "        return (uint16_t)((bits >> 16) | 0x40);\n"
    "    return (uint16_t)((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);\n"
    "}\n"
    "/* f16 (IEEE binary16) */\n"
    "static inline float lt_f16_to_f32(uint16_t h)\n"
    "{\n"
    "    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, bits;\n"
    "    if (exp == 0) {\n"
    "        if (mant == 0) {\n"
    "            bits = sign;\n"
    "        } else {\n"
    "            int shift = 0;\n"
    "            while (!(mant & 0x400u)) {\n"
    "                mant <<= 1;\n"
    "                shift++;\n"
    "            }\n"
    "            bits = sign | ((uint32_t)(113 - shift) << 23) | ((mant & 0x3ffu) << 13);\n"
    "        }\n"
    "    } else if (exp == 0x1f) {\n"
    "        bits = sign | 0x7f800000u | (mant << 13);\n"
    "    } else {\n"
    "        bits = sign | ((exp + 112) << 23) | (mant << 13);\n"
    "    }\n"
    "    float f;\n"
    "    memcpy(&f, &bits, sizeof f);\n"
    "    return f;\n"
    "}\n"
    "static inline uint16_t lt_f32_to_f16(float f)\n"
    "{\n"
    "    uint32_t bits;\n"
    "    memcpy(&bits, &f, sizeof bits);\n"
    "    uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);\n"
    "    uint32_t abs_bits = bits & 0x7fffffffu;\n"
    "    if (abs_bits > 0x7f800000u)\n"
    "        return (uint16_t)(sign | 0x7e00u);\n"
    "    if (abs_bits >= 0x47800000u)\n"
    "        return (uint16_t)(sign | 0x7c00u);\n"
    "    int exp = (int)(abs_bits >> 23) - 112;\n"
    "    uint32_t mant = abs_bits & 0x7fffffu;\n"
    "    if (exp <= 0) {\n"
    "        if (exp < -10)\n"
    "            return sign;\n"
    "        mant |= 0x800000u;\n"
    "        int shift = 14 - exp;\n"
    "        uint32_t half = 1u << (shift - 1), rest = mant & ((1u << shift) - 1), value = mant >> shift;\n"
    "        if (rest > half || (rest == half && (value & 1u)))\n"
    "            value++;\n"
    "        return (uint16_t)(sign | value);\n"
    "    }\n"
    "    uint32_t value = ((uint32_t)exp << 10) | (mant >> 13), rest = mant & 0x1fffu;\n"
    "    if (rest > 0x1000u || (rest == 0x1000u && (value & 1u)))\n"
    "        value++;\n"
    "    return (uint16_t)(sign | value);\n"
    "}\n"
    "\n"
    "/* Python-style remainder: the sign of the divisor */\n"
    "static inline float lt_remainderf(float a, float b)\n"
    "{\n"
    "    float r = fmodf(a, b);\n"
    "    return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;\n"
    "}\n"
    "static inline double lt_remainder(double a, double b)\n"
    "{\n"
    "    double r = fmod(a, b);\n"
    "    return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;\n"
    "}\n"
    "/* integer alpha of add/sub (integral by the shape rule) */\n"
    "static inline int64_t lt_int_alpha(double a) { return a > -9.2e18 && a < 9.2e18 ? (int64_t)a : 0; }\n"
    "/* integer clamp bound: the lower rounds up, the upper down, both saturate */\n"
    "static inline int64_t lt_int_bound(double v, int lower, int64_t min, int64_t max)\n"
    "{\n"
    "    if (isnan(v))\n"
    "        return lower ? min : max;\n"
    "    if (v <= (double)min)\n"
    "        return min;\n"
    "    if (v >= (double)max)\n"
    "        return max;\n"
    "    return (int64_t)(lower ? ceil(v) : floor(v));\n"
    "}\n"
    "/* linspace evaluated from both ends (the last value is exact) */\n"
    "static inline double lt_linspace(int64_t i, int64_t steps, double start, double end)\n"
    "{\n"
    "    double step = steps > 1 ? (end - start) / (double)(steps - 1) : 0.0;\n"
    "    return 2 * i < steps ? start + step * (double)i : end - step * (double)(steps - 1 - i);\n"
    "}\n"
    "\n";

/* Writes fastmath.h's definitions (one stringified line) as readable C:
 * a line break after each ';' outside parentheses, '{' and '}', with
 * four spaces of indentation per brace level. The functions are marked
 * always_inline: below -O3 GCC calls them instead (their bodies exceed
 * -O2's inlining limits), which leaves every loop that uses them scalar;
 * the GPT step's GELU kernel then took 14% of the step in lt_erff. */
static void emit_fastmath(sb *b)
{
    static const char text[] = LT_FASTMATH_SOURCE;
    static const char decl[] = "static inline ";
    sb_printf(b, "/* vectorizable f32 exp and erf, the eager kernels' own (src/eager/fastmath.h) */\n");
    int depth = 0, parens = 0;
    bool line_start = true;
    for (const char *s = text; *s; s++) {
        if (line_start && *s == ' ')
            continue;
        if (*s == '}')
            depth--;
        if (line_start)
            for (int i = 0; i < depth; i++)
                sb_printf(b, "    ");
        line_start = false;
        if (strncmp(s, decl, sizeof decl - 1) == 0) {
            sb_printf(b, "%s__attribute__((always_inline)) ", decl);
            s += sizeof decl - 2;
            continue;
        }
        sb_printf(b, "%c", *s);
        parens += (*s == '(') - (*s == ')');
        if (*s == '{')
            depth++;
        if (*s == '{' || *s == '}' || (*s == ';' && parens == 0)) {
            sb_printf(b, "\n");
            line_start = true;
        }
    }
    sb_printf(b, "\n");
}

/* Writes ewmath.h's formulas (activations, logaddexp, floor_divide ...),
 * the eager kernels' own, one function per line. */
static void emit_ewmath(sb *b)
{
    static const char text[] = LT_EWMATH_SOURCE;
    sb_printf(b, "/* activations and compound elementwise formulas (src/eager/ewmath.h) */\n");
    for (const char *s = text; *s; s++) {
        if (s[0] == ' ' && strncmp(s + 1, "static inline", 13) == 0) {
            sb_printf(b, "\n");
            continue;
        }
        sb_printf(b, "%c", *s);
    }
    sb_printf(b, "\n");
}

/* Does kernel j have a function? Calls run eager kernels, and a kernel
 * with no output element is skipped whole (its loops would run no
 * iteration anyway). */
static bool has_function(const kir_plan *p, int j)
{
    const kir_kernel *k = &p->k[j];
    if (k->kind == KK_POINTWISE)
        return lt_shape_numel(k->dom, k->ndom) > 0;
    if (k->kind == KK_ROW) {
        const lt_meta *m = &p->g->nodes[k->node].out[0];
        return lt_shape_numel(m->shape, m->ndim) > 0;
    }
    return false;
}

static void emit_header(rctx *c)
{
    const kir_plan *p = c->p;
    sb *b = c->b;
    char shape[160];
    sb_printf(b, "/*\n * Generated by %s from a graph of %u nodes: %d kernels (%d pointwise, %d row, %d calls).\n",
              KIR_VERSION, p->g->nnodes, p->nk, p->npointwise, p->nrow, p->ncalls);
    sb_printf(b, " * Buffers (B[i]):\n");
    for (int i = 0; i < p->nb; i++) {
        const kir_buf *x = &p->b[i];
        sb_printf(b, " *   B[%d] %%%u %s%s ", i, x->value / LT_MAX_OUTPUTS, lt_dtype_name((lt_dtype)x->meta.dtype),
                  lt_shape_str(x->meta.shape, x->meta.ndim, shape, sizeof shape));
        if (x->kind == KB_LEAF)
            sb_printf(b, "input %d\n", x->slot);
        else if (x->kind == KB_OUT)
            sb_printf(b, "output %d%s\n", x->slot, x->donor >= 0 ? " (may reuse a donated input)" : "");
        else
            sb_printf(b, "temporary at workspace offset %lld\n", (long long)x->offset);
    }
    sb_printf(b, " */\n");
}

/* The kernels' functions, rendered before the units are cut. */
typedef struct kernel_texts {
    sb text;
    size_t *begin, *end; /* kernel j's function: text.s[begin[j], end[j]) (empty unless rep[j] == j) */
    size_t *cost;        /* its estimated compile cost (0: no function of its own) */
    double *work;        /* kernel j's operations per run */
    lt_cc_tier *tier;    /* how hard its function is optimized (units.c) */
    int *unit;           /* the unit it goes to */
    int *rep;            /* the kernel whose function kernel j calls (-1: none) */
    local_map *maps;     /* kernel j's buffers and scalars, for its call */
} kernel_texts;

static void kernel_texts_free(kernel_texts *t, int nk)
{
    for (int j = 0; t->maps && j < nk; j++) {
        free(t->maps[j].buf);
        free(t->maps[j].slot);
    }
    free(t->maps);
    free(t->rep);
    free(t->text.s);
    free(t->begin);
    free(t->end);
    free(t->cost);
    free(t->work);
    free(t->tier);
    free(t->unit);
}

/* Writes a function's text with its name: FN_TOKEN becomes kernel<j>. */
static void write_named(sb *b, const char *text, size_t n, int j)
{
    const char *end = text + n;
    while (text < end) {
        const char *tok = memmem(text, (size_t)(end - text), FN_TOKEN, sizeof FN_TOKEN - 1);
        const char *stop = tok ? tok : end;
        sb_printf(b, "%.*s", (int)(stop - text), text);
        if (!tok)
            break;
        sb_printf(b, "kernel%d", j);
        text = tok + sizeof FN_TOKEN - 1;
    }
}

/* The entry unit's helpers. The program is a static table of steps, run
 * by a loop: each step calls a kernel function with the program's buffers
 * and scalars in the function's own order (the index tables kb<j>, ks<j>)
 * or, with no function, an eager kernel through rt->call. As data, the
 * steps cost the C compiler next to nothing at any optimization level;
 * the GPT step's entry point as a list of 119 calls took `cc -O3` about
 * 0.33 s of CPU, in the unit that finishes last. */
static const char run_steps_fn[] =
    "typedef void (*lt_kernel_fn)(void *const *restrict B, const double *restrict S, const lt_rt *rt);\n"
    "typedef struct lt_step {\n"
    "    lt_kernel_fn fn;   /* NULL: eager call number `call` */\n"
    "    const int *bufs;   /* the function's buffers, as program buffer numbers */\n"
    "    const int *slots;  /* its scalars, as program scalar slots */\n"
    "    int nb, ns, call;\n"
    "} lt_step;\n"
    "static void lt_run_kernel(const lt_step *s, void *const *B, const double *S, const lt_rt *rt)\n"
    "{\n"
    "    void *L[s->nb > 0 ? s->nb : 1];\n"
    "    double LS[s->ns > 0 ? s->ns : 1];\n"
    "    for (int i = 0; i < s->nb; i++)\n"
    "        L[i] = B[s->bufs[i]];\n"
    "    for (int i = 0; i < s->ns; i++)\n"
    "        LS[i] = S[s->slots[i]];\n"
    "    s->fn(L, s->ns > 0 ? LS : S, rt);\n"
    "}\n"
    "static int lt_run_steps(const lt_step *steps, int n, void *const *B, const double *S, const lt_rt *rt)\n"
    "{\n"
    "    for (int i = 0; i < n; i++) {\n"
    "        if (steps[i].fn) {\n"
    "            lt_run_kernel(&steps[i], B, S, rt);\n"
    "            continue;\n"
    "        }\n"
    "        int status = rt->call(rt->ctx, steps[i].call);\n"
    "        if (status != 0)\n"
    "            return status;\n"
    "    }\n"
    "    return 0;\n"
    "}\n\n";

/* Kernel j's tables: its buffers (kb<j>) and scalars (ks<j>). */
static void emit_call_tables(sb *b, const kernel_texts *t, int j)
{
    const local_map *m = &t->maps[j];
    if (m->nbuf > 0) {
        sb_printf(b, "static const int kb%d[] = {", j);
        for (int l = 0; l < m->nbuf; l++)
            sb_printf(b, "%s%d", l ? ", " : "", m->buf[l]);
        sb_printf(b, "};\n");
    }
    if (m->nslot > 0) {
        sb_printf(b, "static const int ks%d[] = {", j);
        for (int l = 0; l < m->nslot; l++)
            sb_printf(b, "%s%d", l ? ", " : "", m->slot[l]);
        sb_printf(b, "};\n");
    }
}

/* The step that calls kernel j's function with its buffers and scalars. */
static void emit_kernel_step(rctx *c, const kernel_texts *t, int j)
{
    sb *b = c->b;
    const local_map *m = &t->maps[j];
    describe(c, j);
    char bufs[32] = "NULL", slots[32] = "NULL";
    if (m->nbuf > 0)
        frag(bufs, sizeof bufs, "kb%d", j);
    if (m->nslot > 0)
        frag(slots, sizeof slots, "ks%d", j);
    sb_printf(b, "    {kernel%d, %s, %s, %d, %d, 0},\n", t->rep[j], bufs, slots, m->nbuf, m->nslot);
}

/* The step of eager call kernel j, with a comment of what it computes. */
static void emit_call_step(rctx *c, int j)
{
    const kir_plan *p = c->p;
    sb *b = c->b;
    const kir_call *call = &p->calls[p->k[j].call];
    const lt_gnode *n = &p->g->nodes[call->node];
    sb_printf(b, "    /* kernel %d: %s(", j, lt_op_name((lt_op)n->op));
    for (int a = 0; a < call->nin; a++) {
        if (call->in[a].scalar)
            sb_printf(b, "%sscalar", a ? ", " : "");
        else
            sb_printf(b, "%sB[%d]", a ? ", " : "", call->in[a].buf);
    }
    sb_printf(b, ") -> ");
    for (int o = 0; o < call->nout; o++)
        sb_printf(b, "%sB[%d]", o ? ", " : "", call->out[o]);
    if (call->acc_buf >= 0) /* fuse_gemm.c */
        sb_printf(b, " accumulating onto B[%d] (alpha %s)", call->acc_buf,
                  call->alpha_slot >= 0 ? (call->alpha_negated ? "-S" : "S") : "baked");
    sb_printf(b, ", eager kernel */\n");
    sb_printf(b, "    {NULL, NULL, NULL, 0, 0, %d},\n", p->k[j].call);
}

/* The table of steps and the entry point that runs it. A kernel with no
 * element to compute has no step. */
static void emit_entry(rctx *c, const kernel_texts *t)
{
    const kir_plan *p = c->p;
    sb *b = c->b;
    sb_printf(b, "%s", run_steps_fn);
    for (int j = 0; j < p->nk; j++)
        if (t->rep[j] >= 0)
            emit_call_tables(b, t, j);
    int steps = 0;
    for (int j = 0; j < p->nk; j++) {
        if (t->rep[j] < 0 && p->k[j].kind != KK_CALL) {
            sb_printf(b, "/* kernel %d: no element to compute */\n", j);
            continue;
        }
        if (steps++ == 0)
            sb_printf(b, "\nstatic const lt_step lt_steps[] = {\n");
        if (t->rep[j] >= 0)
            emit_kernel_step(c, t, j);
        else
            emit_call_step(c, j);
    }
    if (steps > 0)
        sb_printf(b, "};\n");
    sb_printf(b, "\nint lt_program_entry(void *const *B, const double *S, const lt_rt *rt)\n{\n");
    if (steps > 0)
        sb_printf(b, "    return lt_run_steps(lt_steps, %d, B, S, rt);\n}\n", steps);
    else /* C has no empty array: nothing to run */
        sb_printf(b, "    (void)B, (void)S, (void)rt, (void)lt_run_steps;\n    return 0;\n}\n");
}

/* Estimated compile cost of generated text: the C compiler's time goes
 * mostly into loops (vectorization, OpenMP outlining), then into length. */
#define LOOP_COST 2048 /* one loop costs about as much as this many bytes */
static size_t compile_cost(const char *text, size_t n)
{
    size_t cost = n;
    for (const char *s = text; (s = strstr(s, "for (")) && s < text + n; s++)
        cost += LOOP_COST;
    return cost;
}

/* Operations one run of kernel j performs, roughly: each instruction
 * times the iterations it runs (a reduction's body runs its loops once
 * per output). */
static double kernel_work(const kir_plan *p, int j)
{
    const kir_kernel *k = &p->k[j];
    if (k->kind == KK_ROW) {
        const lt_meta *m = &p->g->nodes[k->node].out[0];
        return (double)lt_shape_numel(m->shape, m->ndim) * (double)(k->nins + 8);
    }
    double per_element = 0;
    for (int i = 0; i < k->nins; i++) {
        const kir_inst *in = &k->ins[i];
        if (in->kind == KI_REDUCE)
            per_element += (double)loops_work(k, in->rv, in->nrv) * (double)(in->body_end - i);
        else if (in->scope < 0)
            per_element += 1;
    }
    return (double)loops_work(k, k->loop, k->nloop) * per_element;
}

/* Every kernel function rendered once, in kernel order, with what the
 * unit planner needs to know about it. */
/* 64-bit FNV-1a of a function's text. */
static uint64_t text_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* An open-addressing table of the functions rendered so far, by text. */
typedef struct fn_table {
    int *slot; /* kernel index + 1; 0: empty */
    uint64_t *hash;
    size_t mask;
} fn_table;

/* The earlier kernel whose function has text [begin, end) of t, or -1
 * after recording kernel j as having it. */
static int same_function(fn_table *f, const kernel_texts *t, int j)
{
    const char *s = t->text.s + t->begin[j];
    size_t n = t->end[j] - t->begin[j];
    uint64_t h = text_hash(s, n);
    size_t i = (size_t)h & f->mask;
    for (; f->slot[i]; i = (i + 1) & f->mask) {
        int r = f->slot[i] - 1;
        if (f->hash[i] == h && t->end[r] - t->begin[r] == n && memcmp(t->text.s + t->begin[r], s, n) == 0)
            return r;
    }
    f->slot[i] = j + 1;
    f->hash[i] = h;
    return -1;
}

/* Renders kernel j's function into t->text, or finds an identical one
 * rendered before (then j calls that one, and its own text is dropped). */
static void render_kernel(rctx *c, kernel_texts *t, fn_table *f, int j)
{
    c->k = &c->p->k[j];
    current_map = &t->maps[j];
    if (c->k->kind == KK_POINTWISE)
        emit_pointwise(c);
    else
        emit_row(c);
    current_map = NULL;
    c->failed = c->failed || t->maps[j].failed;
    t->end[j] = t->text.n;
    if (t->text.failed || c->failed)
        return;
    int r = same_function(f, t, j);
    t->rep[j] = r >= 0 ? r : j;
    if (r >= 0)
        t->text.n = t->end[j] = t->begin[j];
    else
        t->cost[j] = compile_cost(t->text.s + t->begin[j], t->end[j] - t->begin[j]);
}

static bool render_kernels(rctx *c, kernel_texts *t)
{
    size_t nk = (size_t)(c->p->nk > 0 ? c->p->nk : 1), cap = 16;
    while (cap < 2 * nk)
        cap *= 2;
    fn_table f = {calloc(cap, sizeof *f.slot), calloc(cap, sizeof *f.hash), cap - 1};
    t->begin = calloc(nk, sizeof *t->begin);
    t->end = calloc(nk, sizeof *t->end);
    t->cost = calloc(nk, sizeof *t->cost);
    t->work = calloc(nk, sizeof *t->work);
    t->tier = calloc(nk, sizeof *t->tier);
    t->unit = calloc(nk, sizeof *t->unit);
    t->rep = malloc(nk * sizeof *t->rep);
    t->maps = calloc(nk, sizeof *t->maps);
    bool ok = f.slot && f.hash && t->begin && t->end && t->cost && t->work && t->tier && t->unit && t->rep && t->maps;
    c->b = &t->text;
    c->linkage = KERNEL_LINKAGE;
    for (int j = 0; ok && j < c->p->nk && !c->failed; j++) {
        t->begin[j] = t->end[j] = t->text.n;
        t->rep[j] = -1;
        if (has_function(c->p, j))
            render_kernel(c, t, &f, j);
        t->work[j] = kernel_work(c->p, j);
    }
    free(f.slot);
    free(f.hash);
    ok = ok && kir_assign_tiers(c->p->nk, t->work, t->cost, t->rep, t->tier);
    return ok && !t->text.failed;
}

/* The entry unit's declarations of the kernels defined in other units. */
static void emit_prototypes(rctx *c, const kernel_texts *t, int unit)
{
    bool any = false;
    for (int j = 0; j < c->p->nk; j++) {
        if (t->rep[j] != j || t->unit[j] == unit)
            continue;
        if (!any)
            sb_printf(c->b, "/* defined in the other units */\n");
        any = true;
        sb_printf(c->b, "%s void kernel%d" KERNEL_PARAMS ";\n", KERNEL_LINKAGE, j);
    }
    if (any)
        sb_printf(c->b, "\n");
}

static const char *const tier_names[LT_CC_TIERS] = {
    "hot: LT_CFLAGS", "warm: LT_CFLAGS_WARM", "cold: kernels of little work per run, LT_CFLAGS_COLD"};

/* Unit u of n: its header, the prelude, its kernels, and in the last unit
 * the entry point. */
static void emit_unit(rctx *c, const kernel_texts *t, int u, int n, lt_cc_tier tier)
{
    sb *b = c->b;
    if (u == 0)
        emit_header(c);
    else
        sb_printf(b, "/*\n * Generated by %s: unit %d of %d.\n */\n", KIR_VERSION, u + 1, n);
    if (n > 1)
        sb_printf(b, "/* unit %d of %d (%s)%s */\n", u + 1, n, tier_names[tier], u == n - 1 ? ", with the entry point" : "");
    sb_printf(b, "%s", prelude);
    emit_fastmath(b);
    emit_ewmath(b);
    for (int j = 0; j < c->p->nk; j++)
        if (t->unit[j] == u && t->end[j] > t->begin[j]) /* only a function's first kernel has its text */
            write_named(b, t->text.s + t->begin[j], t->end[j] - t->begin[j], j);
    if (u == n - 1) {
        emit_prototypes(c, t, u);
        emit_entry(c, t);
    }
}

char *kir_render(const kir_plan *p, size_t *len, lt_cc_unit *units, int *nunits, int *nfunctions)
{
    sb b = {0};
    kernel_texts t = {0};
    fragment_truncated = false;
    rctx c = {&b, p, NULL, false, false, -1, KERNEL_LINKAGE};
    bool ok = render_kernels(&c, &t);
    int n = ok && !c.failed ? kir_plan_units(p->nk, t.cost, t.tier, t.unit, units) : 0;
    c.b = &b;
    for (int u = 0; u < n; u++) {
        units[u].begin = b.n;
        emit_unit(&c, &t, u, n, units[u].tier);
        units[u].end = b.n;
    }
    bool oom = b.failed || !ok;
    int functions = 0;
    for (int j = 0; ok && j < p->nk; j++)
        functions += t.rep[j] == j;
    kernel_texts_free(&t, p->nk);
    if (oom || c.failed || fragment_truncated) {
        free(b.s);
        lt_error(oom ? LT_ERR_MEMORY : LT_ERR_STATE, "cpu compiler: could not render the generated C");
        return NULL;
    }
    *nunits = n;
    *len = b.n;
    *nfunctions = functions;
    return b.s;
}

/*
 * render_expr.c - the C expression of each elementwise and factory op, in
 * the working dtype and with the formula of its eager loop
 * (elementwise.c), so compiled and eager results agree.
 */
#include "compiler/render_internal.h"
#include "eager/ewmath.h"

#include <stdio.h>
#include <string.h>

/* ---- elementwise expressions ------------------------------------------------ */

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
                rd_frag(e, cap, "%s%s(%s, %s)", calls[k].fn, f, a, b);
            else
                rd_frag(e, cap, "%s%s(%s)", calls[k].fn, f, a);
            return true;
        }
    /* activations with attributes (f0..f2), cast to the working type by
     * the call's prototype */
    char p0[64], p1[64], p2[64];
    rd_attr_scalar(p0, sizeof p0, n, 0);
    rd_attr_scalar(p1, sizeof p1, n, 1);
    rd_attr_scalar(p2, sizeof p2, n, 2);
    switch (op) {
    case LT_OP_SOFTPLUS: rd_frag(e, cap, "ltm_softplus%s(%s, %s, %s)", f, a, p0, p1); break;
    case LT_OP_ELU: rd_frag(e, cap, "ltm_elu%s(%s, %s, %s, %s)", f, a, p0, p1, p2); break;
    case LT_OP_LEAKY_RELU: rd_frag(e, cap, "ltm_leaky_relu%s(%s, %s)", f, a, p0); break;
    default: return false;
    }
    return true;
}

/* Float (T = float/double) expression of unary/binary op over a, b. */
static bool float_expr(lt_op op, const lt_gnode *n, int w, const char *a, const char *b, char *e, size_t cap)
{
    const char *T = rd_vtype(w), *f = w == LT_F32 ? "f" : "";
    /* f32 exp and erf: fastmath.h's versions, as in the eager kernels */
    const char *ex = w == LT_F32 ? "lt_expf" : "exp", *er = w == LT_F32 ? "lt_erff" : "erf";
    char alpha[64], lo[64], hi[64];
    rd_attr_scalar(alpha, sizeof alpha, n, 0);
    switch (op) {
    case LT_OP_NEG: rd_frag(e, cap, "-%s", a); break;
    case LT_OP_ABS: rd_frag(e, cap, "fabs%s(%s)", f, a); break;
    case LT_OP_EXP: rd_frag(e, cap, "%s(%s)", ex, a); break;
    case LT_OP_LOG: rd_frag(e, cap, "log%s(%s)", f, a); break;
    case LT_OP_LOG1P: rd_frag(e, cap, "log1p%s(%s)", f, a); break;
    case LT_OP_EXPM1: rd_frag(e, cap, "expm1%s(%s)", f, a); break;
    case LT_OP_SQRT: rd_frag(e, cap, "sqrt%s(%s)", f, a); break;
    case LT_OP_RSQRT: rd_frag(e, cap, "(%s)1 / sqrt%s(%s)", T, f, a); break;
    case LT_OP_SIN: rd_frag(e, cap, "sin%s(%s)", f, a); break;
    case LT_OP_COS: rd_frag(e, cap, "cos%s(%s)", f, a); break;
    case LT_OP_TANH: rd_frag(e, cap, "tanh%s(%s)", f, a); break;
    case LT_OP_SIGMOID: rd_frag(e, cap, "(%s)1 / ((%s)1 + %s(-%s))", T, T, ex, a); break;
    case LT_OP_RELU: rd_frag(e, cap, "%s <= 0 ? (%s)0 : %s", a, T, a); break;
    case LT_OP_GELU:
        rd_frag(e, cap, "%s * (%s)0.5 * ((%s)1 + %s(%s * (%s)0.70710678118654752440))", a, T, T, er, a, T);
        break;
    case LT_OP_SILU: rd_frag(e, cap, "%s / ((%s)1 + %s(-%s))", a, T, ex, a); break;
    case LT_OP_ERF: rd_frag(e, cap, "%s(%s)", er, a); break;
    case LT_OP_SIGN: rd_frag(e, cap, "(%s)((%s > 0) - (%s < 0))", T, a, a); break;
    case LT_OP_FLOOR: rd_frag(e, cap, "floor%s(%s)", f, a); break;
    case LT_OP_CEIL: rd_frag(e, cap, "ceil%s(%s)", f, a); break;
    case LT_OP_ROUND: rd_frag(e, cap, "rint%s(%s)", f, a); break;
    case LT_OP_RECIPROCAL: rd_frag(e, cap, "(%s)1 / %s", T, a); break;
    case LT_OP_CLAMP:
        rd_attr_scalar(lo, sizeof lo, n, 0);
        rd_attr_scalar(hi, sizeof hi, n, 1);
        rd_frag(e, cap, "%s < (%s)%s ? (%s)%s : %s > (%s)%s ? (%s)%s : %s", a, T, lo, T, lo, a, T, hi, T, hi, a);
        break;
    case LT_OP_ADD:
    case LT_OP_SUB: {
        bool scaled = n->attrs.nf > 0 && (n->attr_param[0] >= 0 || n->attrs.f[0] != 1.0);
        const char *sign = op == LT_OP_ADD ? "+" : "-";
        if (scaled)
            rd_frag(e, cap, "%s %s (%s)%s * %s", a, sign, T, alpha, b);
        else
            rd_frag(e, cap, "%s %s %s", a, sign, b);
        break;
    }
    case LT_OP_MUL: rd_frag(e, cap, "%s * %s", a, b); break;
    case LT_OP_DIV: rd_frag(e, cap, "%s / %s", a, b); break;
    case LT_OP_POW: rd_frag(e, cap, "pow%s(%s, %s)", f, a, b); break;
    case LT_OP_MAXIMUM: rd_frag(e, cap, "(%s != %s || %s > %s) ? %s : %s", a, a, a, b, a, b); break;
    case LT_OP_MINIMUM: rd_frag(e, cap, "(%s != %s || %s < %s) ? %s : %s", a, a, a, b, a, b); break;
    case LT_OP_REMAINDER: rd_frag(e, cap, "lt_remainder%s(%s, %s)", f, a, b); break;
    default: return float_expr_ext(op, n, f, a, b, e, cap);
    }
    return true;
}

/* Integer trunc, bitwise ops and shifts, as the eager loops: computed in
 * the unsigned type; shifts by the width or more (or by a negative
 * amount) give 0, or the sign for a right shift. */
static bool int_expr_bitwise(lt_op op, int w, const char *a, const char *b, char *e, size_t cap)
{
    const char *T = rd_vtype(w), *U = w == LT_I32 ? "uint32_t" : w == LT_I64 ? "uint64_t" : "unsigned";
    int bits = w == LT_I32 ? 32 : w == LT_I64 ? 64 : 8;
    bool u8 = w == LT_U8;
    const char *sym = op == LT_OP_BITWISE_AND ? "&" : op == LT_OP_BITWISE_OR ? "|" : "^";
    switch (op) {
    case LT_OP_TRUNC: rd_frag(e, cap, "%s", a); break;
    case LT_OP_BITWISE_NOT: rd_frag(e, cap, "(%s)~(%s)%s", T, U, a); break;
    case LT_OP_BITWISE_AND: case LT_OP_BITWISE_OR: case LT_OP_BITWISE_XOR:
        rd_frag(e, cap, "(%s)((%s)%s %s (%s)%s)", T, U, a, sym, U, b);
        break;
    case LT_OP_SHIFT_LEFT:
        rd_frag(e, cap, "(%s)%s >= %d ? (%s)0 : (%s)((%s)%s << (%s)%s)", U, b, bits, T, T, U, a, U, b);
        break;
    case LT_OP_SHIFT_RIGHT:
        if (u8)
            rd_frag(e, cap, "%s >= 8 ? (uint8_t)0 : (uint8_t)(%s >> %s)", b, a, b);
        else
            rd_frag(e, cap, "(%s)%s >= %d ? (%s)(%s < 0 ? -1 : 0) : (%s)(%s >> %s)", U, b, bits, T, a, T, a, b);
        break;
    default: return false;
    }
    return true;
}

/* Integer (i32, i64, u8) expression; arithmetic wraps like the eager loops. */
static bool int_expr(lt_op op, const lt_gnode *n, int w, const char *a, const char *b, char *e, size_t cap)
{
    const char *T = rd_vtype(w), *U = w == LT_I32 ? "uint32_t" : w == LT_I64 ? "uint64_t" : "unsigned";
    const char *lim_lo = w == LT_I32 ? "INT32_MIN" : w == LT_I64 ? "INT64_MIN" : "0";
    const char *lim_hi = w == LT_I32 ? "INT32_MAX" : w == LT_I64 ? "INT64_MAX" : "UINT8_MAX";
    bool u8 = w == LT_U8;
    /* lo holds hi (the lower bound saturates at the upper one) */
    char alpha[64], lo[384], hi[160], sa[160];
    rd_attr_scalar(alpha, sizeof alpha, n, 0);
    bool scaled = n->attrs.nf > 0 && (n->attr_param[0] >= 0 || n->attrs.f[0] != 1.0);
    if (u8)
        rd_frag(sa, sizeof sa, "(uint8_t)lt_int_alpha(%s)", alpha);
    else
        rd_frag(sa, sizeof sa, "(%s)lt_int_alpha(%s)", U, alpha);
    switch (op) {
    case LT_OP_NEG:
        if (u8)
            rd_frag(e, cap, "(uint8_t)(0u - %s)", a);
        else
            rd_frag(e, cap, "(%s)((%s)0 - (%s)%s)", T, U, U, a);
        break;
    case LT_OP_ABS:
        if (u8)
            rd_frag(e, cap, "%s", a);
        else
            rd_frag(e, cap, "%s < 0 ? (%s)((%s)0 - (%s)%s) : %s", a, T, U, U, a, a);
        break;
    case LT_OP_RELU:
        if (u8)
            rd_frag(e, cap, "%s", a);
        else
            rd_frag(e, cap, "%s < 0 ? 0 : %s", a, a);
        break;
    case LT_OP_SIGN:
        if (u8)
            rd_frag(e, cap, "(uint8_t)(%s != 0)", a);
        else
            rd_frag(e, cap, "(%s)((%s > 0) - (%s < 0))", T, a, a);
        break;
    case LT_OP_FLOOR: case LT_OP_CEIL: case LT_OP_ROUND: rd_frag(e, cap, "%s", a); break;
    case LT_OP_CLAMP: {
        char los[64], his[64];
        rd_attr_scalar(los, sizeof los, n, 0);
        rd_attr_scalar(his, sizeof his, n, 1);
        /* the upper bound rounds down, the lower one up; both saturate */
        rd_frag(hi, sizeof hi, "(%s)lt_int_bound(%s, 0, %s, %s)", T, his, lim_lo, lim_hi);
        rd_frag(lo, sizeof lo, "(%s)lt_int_bound(%s, 1, %s, %s)", T, los, lim_lo, hi);
        rd_frag(e, cap, "%s < %s ? %s : %s > %s ? %s : %s", a, lo, lo, a, hi, hi, a);
        break;
    }
    case LT_OP_ADD:
    case LT_OP_SUB: {
        const char *sign = op == LT_OP_ADD ? "+" : "-";
        if (u8 && scaled)
            rd_frag(e, cap, "(uint8_t)(%s %s %s * %s)", a, sign, sa, b);
        else if (u8)
            rd_frag(e, cap, "(uint8_t)(%s %s %s)", a, sign, b);
        else if (scaled)
            rd_frag(e, cap, "(%s)((%s)%s %s %s * (%s)%s)", T, U, a, sign, sa, U, b);
        else
            rd_frag(e, cap, "(%s)((%s)%s %s (%s)%s)", T, U, a, sign, U, b);
        break;
    }
    case LT_OP_MUL:
        if (u8)
            rd_frag(e, cap, "(uint8_t)(%s * %s)", a, b);
        else
            rd_frag(e, cap, "(%s)((%s)%s * (%s)%s)", T, U, a, U, b);
        break;
    case LT_OP_MAXIMUM: rd_frag(e, cap, "%s > %s ? %s : %s", a, b, a, b); break;
    case LT_OP_MINIMUM: rd_frag(e, cap, "%s < %s ? %s : %s", a, b, a, b); break;
    default: return int_expr_bitwise(op, w, a, b, e, cap);
    }
    return true;
}

/* Bool working dtype: add is "or", mul is "and" (as in PyTorch). */
static bool bool_expr(lt_op op, const lt_gnode *n, const char *a, const char *b, char *e, size_t cap)
{
    char alpha[64];
    rd_attr_scalar(alpha, sizeof alpha, n, 0);
    bool scaled = n->attrs.nf > 0 && (n->attr_param[0] >= 0 || n->attrs.f[0] != 1.0);
    switch (op) {
    case LT_OP_ABS: case LT_OP_RELU: case LT_OP_FLOOR: case LT_OP_CEIL: case LT_OP_ROUND: case LT_OP_SIGN:
        rd_frag(e, cap, "%s", a);
        break;
    case LT_OP_ADD:
        if (scaled)
            rd_frag(e, cap, "%s | ((%s != 0) & %s)", a, alpha, b);
        else
            rd_frag(e, cap, "%s | %s", a, b);
        break;
    case LT_OP_MUL: case LT_OP_MINIMUM: rd_frag(e, cap, "%s & %s", a, b); break;
    case LT_OP_MAXIMUM: rd_frag(e, cap, "%s | %s", a, b); break;
    case LT_OP_POW: rd_frag(e, cap, "%s | !%s", a, b); break;
    case LT_OP_BITWISE_NOT: rd_frag(e, cap, "!%s", a); break;
    case LT_OP_BITWISE_AND: rd_frag(e, cap, "%s & %s", a, b); break;
    case LT_OP_BITWISE_OR: rd_frag(e, cap, "%s | %s", a, b); break;
    case LT_OP_BITWISE_XOR: rd_frag(e, cap, "%s ^ %s", a, b); break;
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
    case LT_OP_LOGICAL_AND: rd_frag(e, cap, "(%s != 0) & (%s != 0)", a, b); return true;
    case LT_OP_LOGICAL_OR: rd_frag(e, cap, "(%s != 0) | (%s != 0)", a, b); return true;
    case LT_OP_LOGICAL_NOT: rd_frag(e, cap, "%s == 0", a); return true;
    /* x - x is 0 exactly for finite x (as the eager loops test) */
    case LT_OP_ISNAN: rd_frag(e, cap, "%s != %s", a, a); return true;
    case LT_OP_ISINF: rd_frag(e, cap, "(%s - %s != 0 && %s == %s)", a, a, a, a); return true;
    case LT_OP_ISFINITE: rd_frag(e, cap, "%s - %s == 0", a, a); return true;
    default: return false;
    }
    rd_frag(e, cap, "%s %s %s", a, rel, b);
    return true;
}

/* An elementwise node: converts its operands to the working dtype, applies
 * the op, rounds half-precision results. */
bool rd_ew_expr(const rctx *c, const kir_inst *in, char *e, size_t cap)
{
    const lt_gnode *n = rd_gnode(c, in->node);
    lt_op op = (lt_op)n->op;
    int od = n->out[0].dtype;
    char a[X_CAP], b[X_CAP], x[X_CAP], t[X_CAP];
    switch (op) {
    case LT_OP_CAST:
        rd_operand(c, in, 0, od, e, cap);
        return true;
    case LT_OP_WHERE:
        rd_operand(c, in, 0, LT_BOOL, t, sizeof t);
        rd_operand(c, in, 1, od, a, sizeof a);
        rd_operand(c, in, 2, od, b, sizeof b);
        rd_frag(e, cap, "%s ? %s : %s", t, a, b);
        return true;
    case LT_OP_MASKED_FILL:
        rd_attr_scalar(t, sizeof t, n, 0);
        rd_cvt(b, sizeof b, t, LT_F64, od);
        rd_operand(c, in, 0, od, a, sizeof a);
        rd_operand(c, in, 1, LT_BOOL, x, sizeof x);
        rd_frag(e, cap, "%s ? %s : %s", x, b, a);
        return true;
    case LT_OP_SLICE_SCATTER:
    case LT_OP_SELECT_SCATTER: {
        /* the source inside the view (the position along the dim, form),
         * the base elsewhere */
        bool slice = op == LT_OP_SLICE_SCATTER;
        int64_t lo = n->attrs.i[1], hi = slice ? n->attrs.i[2] : lo + 1, step = slice ? n->attrs.i[3] : 1;
        rd_range_cond(c, in->form, lo, hi, step, x, sizeof x);
        rd_operand(c, in, 0, od, a, sizeof a);
        rd_operand(c, in, 1, od, b, sizeof b);
        rd_frag(e, cap, "%s ? %s : %s", x, b, a);
        return true;
    }
    case LT_OP_TRIL:
    case LT_OP_TRIU: {
        /* tril keeps column j <= i + k, triu keeps j >= i + k */
        const lt_meta *m = &n->out[0];
        int64_t rows = m->shape[m->ndim - 2], cols = m->shape[m->ndim - 1], k = n->attrs.i[0];
        k = k < -rows - 1 ? -rows - 1 : k > cols + 1 ? cols + 1 : k;
        char row[256], col[256];
        rd_form_str(c, in->form, row, sizeof row);
        rd_form_str(c, in->form + 1, col, sizeof col);
        rd_operand(c, in, 0, od, a, sizeof a);
        rd_frag(e, cap, "(int64_t)(%s) %s (int64_t)(%s) + %lld ? %s : (%s)0", col, op == LT_OP_TRIL ? "<=" : ">=",
                 row, (long long)k, a, rd_vtype(od));
        return true;
    }
    default:
        break;
    }
    int w = kir_ew_work(c->p->g, n);
    rd_operand(c, in, 0, w, a, sizeof a);
    if (n->nin > 1)
        rd_operand(c, in, 1, w, b, sizeof b);
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
    if (rd_is_half(od)) /* computed in f32, kept with the output's precision */
        rd_frag(e, cap, "%s(%s)", od == LT_BF16 ? "lt_f32_to_bf16" : "lt_f32_to_f16", x);
    else
        rd_frag(e, cap, "%s", x);
    return true;
}

/* Factories: values of the position. */
bool rd_factory_expr(const rctx *c, const kir_inst *in, char *e, size_t cap)
{
    const lt_gnode *n = rd_gnode(c, in->node);
    int od = n->out[0].dtype;
    char x[X_CAP], f0[64], f1[64], i0[256] = "0", i1[256] = "0";
    rd_attr_scalar(f0, sizeof f0, n, 0);
    rd_attr_scalar(f1, sizeof f1, n, 1);
    if (in->nforms > 0)
        rd_form_str(c, in->form, i0, sizeof i0);
    if (in->nforms > 1)
        rd_form_str(c, in->form + 1, i1, sizeof i1);
    switch ((lt_op)n->op) {
    case LT_OP_EMPTY: rd_frag(x, sizeof x, "0.0"); break;
    case LT_OP_FULL: rd_frag(x, sizeof x, "%s", f0); break;
    case LT_OP_ARANGE: rd_frag(x, sizeof x, "%s + (double)(%s) * %s", f0, i0, f1); break;
    case LT_OP_LINSPACE:
        rd_frag(x, sizeof x, "lt_linspace(%s, %lld, %s, %s)", i0, (long long)n->out[0].shape[0], f0, f1);
        break;
    case LT_OP_EYE: rd_frag(x, sizeof x, "(%s) == (%s) ? 1.0 : 0.0", i0, i1); break;
    default: return false;
    }
    char par[X_CAP + 4];
    rd_frag(par, sizeof par, "(%s)", x);
    rd_cvt(e, cap, par, LT_F64, od);
    return true;
}

/*
 * render_util.c - the C renderer's building blocks: a growing string,
 * bounded expression fragments, C types and dtype conversions, and a
 * kernel's own numbering of buffers and scalars (render_internal.h).
 */
#include "compiler/render_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- string builder ----------------------------------------------------- */

void rd_printf(sb *b, const char *fmt, ...)
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

void rd_indent(sb *b, int depth)
{
    for (int i = 0; i < depth; i++)
        rd_printf(b, "    ");
}

/* snprintf for expression fragments: a fragment that does not fit marks
 * the rendering as failed (never silently truncated C). */
_Thread_local bool rd_fragment_truncated;

void rd_frag(char *dst, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(dst, cap, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= cap)
        rd_fragment_truncated = true;
}

/* ---- types and conversions ---------------------------------------------- */

/* C type of a value (bf16/f16 values are their bits: a copy moves them
 * unchanged, NaN payloads included; arithmetic converts to f32). */
const char *rd_vtype(int dt)
{
    static const char *names[] = {"float", "double", "int32_t", "int64_t", "uint8_t", "bool", "uint16_t", "uint16_t"};
    return dt >= 0 && dt < LT_NUM_DTYPES ? names[dt] : "double";
}

/* C type of a buffer element (bool as bytes, bf16/f16 as bits). */
const char *rd_stype(int dt)
{
    static const char *names[] = {"float", "double", "int32_t", "int64_t", "uint8_t", "uint8_t", "uint16_t",
                                  "uint16_t"};
    return dt >= 0 && dt < LT_NUM_DTYPES ? names[dt] : "double";
}

/* Writes into out the expression x (of dtype from) converted to dtype to,
 * with the eager runtime's conversion rules (copy.c). */
void rd_cvt(char *out, size_t cap, const char *x, int from, int to)
{
    char wide[1100];
    if (from != to && rd_is_half(from)) { /* through f32, like LT_LOAD_bf16/f16 */
        rd_frag(wide, sizeof wide, "%s(%s)", from == LT_BF16 ? "lt_bf16_to_f32" : "lt_f16_to_f32", x);
        x = wide;
        from = LT_F32;
    }
    if (from == to)
        rd_frag(out, cap, "%s", x);
    else if (to == LT_BOOL)
        rd_frag(out, cap, "(%s != 0)", x);
    else if (to == LT_BF16)
        rd_frag(out, cap, "lt_f32_to_bf16((float)(%s))", x);
    else if (to == LT_F16)
        rd_frag(out, cap, "lt_f32_to_f16((float)(%s))", x);
    else if ((from == LT_F32 || from == LT_F64) && (to == LT_I32 || to == LT_I64 || to == LT_U8))
        rd_frag(out, cap, "lt_float_to_%s(%s)", to == LT_I32 ? "i32" : to == LT_I64 ? "i64" : "u8", x);
    else if (x[strspn(x, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.[]")] == '\0')
        rd_frag(out, cap, "(%s)%s", rd_vtype(to), x); /* a name, a number or S[k] */
    else
        rd_frag(out, cap, "(%s)(%s)", rd_vtype(to), x);
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

int rd_local_buf(local_map *m, int buf) { return local_index(&m->buf, &m->nbuf, &m->cap_buf, buf, &m->failed); }
int rd_local_slot(local_map *m, int slot)
{
    return local_index(&m->slot, &m->nslot, &m->cap_slot, slot, &m->failed);
}

/* The map of the kernel being rendered (kir_render runs on one thread, and
 * the expression builders reach scalar attributes without a context). */
_Thread_local local_map *rd_current_map;

/* A double literal that C reads back exactly. */
void rd_double_literal(char *out, size_t cap, double v)
{
    rd_frag(out, cap, "%.17g", v);
    if (!strpbrk(out, ".eEni"))
        strncat(out, ".0", cap - strlen(out) - 1);
}

/* Scalar attribute k of node n: a runtime parameter or a baked literal. */
void rd_attr_scalar(char *out, size_t cap, const lt_gnode *n, int k)
{
    if (k < n->attrs.nf && n->attr_param[k] >= 0)
        rd_frag(out, cap, "S[%d]", rd_local_slot(rd_current_map, n->attr_param[k]));
    else
        rd_double_literal(out, cap, k < n->attrs.nf ? n->attrs.f[k] : 0.0);
}

/* ---- rendering context -------------------------------------------------- */

/* Operand j of instruction i converted to dtype to. */
void rd_operand(const rctx *c, const kir_inst *in, int j, int to, char *out, size_t cap)
{
    char v[32];
    rd_var(v, sizeof v, in->in[j]);
    rd_cvt(out, cap, v, c->k->ins[in->in[j]].dtype, to);
}

void rd_form_str(const rctx *c, int form, char *out, size_t cap)
{
    int n = kir_aff_str(c->k, &c->k->forms[form], out, cap);
    if (n < 0 || (size_t)n >= cap)
        rd_fragment_truncated = true;
}

void rd_range_cond(const rctx *c, int form, int64_t lo, int64_t hi, int64_t step, char *out, size_t cap)
{
    char pos[256];
    rd_form_str(c, form, pos, sizeof pos);
    if (step == 1)
        rd_frag(out, cap, "((int64_t)(%s) >= %lld && (int64_t)(%s) < %lld)", pos, (long long)lo, pos, (long long)hi);
    else
        rd_frag(out, cap, "((int64_t)(%s) >= %lld && (int64_t)(%s) < %lld && ((int64_t)(%s) - %lld) %% %lld == 0)", pos,
                (long long)lo, pos, (long long)hi, pos, (long long)lo, (long long)step);
}

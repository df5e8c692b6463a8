/*
 * affine.c - index arithmetic of the compiler: affine forms over a
 * kernel's loop variables, and index maps pushed through broadcasting and
 * view ops.
 *
 * Every form has non-negative coefficients and constant (positions are
 * never negative and no view op reverses a dim), and the coefficient of a
 * variable whose extent is 1 is always 0 (its value is always 0), which
 * keeps forms canonical for comparison; so is that of a variable of extent
 * 0, whose loop runs no iteration at all.
 */
#include "compiler/kir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

kir_aff kir_aff_const(int64_t c)
{
    kir_aff f;
    memset(&f, 0, sizeof f);
    f.c = c;
    f.expr = -1;
    return f;
}

kir_aff kir_aff_var(const kir_kernel *k, int v)
{
    kir_aff f = kir_aff_const(0);
    if (k->ext[v] > 1)
        f.a[v] = 1;
    return f;
}

int kir_expr_add(kir_kernel *k, char *owned)
{
    if (!owned)
        return -1;
    if (k->nexprs == k->cap_exprs) {
        int cap = k->cap_exprs ? 2 * k->cap_exprs : 8;
        char **e = realloc(k->exprs, sizeof *e * (size_t)cap);
        if (!e) {
            free(owned);
            return -1;
        }
        k->exprs = e;
        k->cap_exprs = cap;
    }
    k->exprs[k->nexprs] = owned;
    return k->nexprs++;
}

/* Where the next piece of text goes: NULL when only measuring (cap 0), so
 * no arithmetic is done on a NULL buffer. */
static char *tail_of(char *buf, size_t at, size_t cap) { return cap ? buf + at : NULL; }

int kir_aff_str(const kir_kernel *k, const kir_aff *x, char *buf, size_t cap)
{
    if (x->expr >= 0)
        return snprintf(buf, cap, "(%s)", k->exprs[x->expr]);
    if (x->expr < -1)
        return snprintf(buf, cap, "lt_out_of_memory"); /* fails to compile, never silently wrong */
    int n = 0;
    if (cap)
        buf[0] = '\0';
    for (int v = 0; v < KIR_MAXV; v++) {
        if (x->a[v] == 0)
            continue;
        size_t at = (size_t)n < cap ? (size_t)n : cap;
        const char *sep = n ? " + " : "";
        if (x->a[v] == 1)
            n += snprintf(tail_of(buf, at, cap), cap - at, "%si%d", sep, v);
        else
            n += snprintf(tail_of(buf, at, cap), cap - at, "%si%d * %lld", sep, v, (long long)x->a[v]);
    }
    if (x->c != 0 || n == 0) {
        size_t at = (size_t)n < cap ? (size_t)n : cap;
        n += snprintf(tail_of(buf, at, cap), cap - at, "%s%lld", n ? " + " : "", (long long)x->c);
    }
    return n;
}

kir_aff kir_aff_opaque(kir_kernel *k, char *text)
{
    kir_aff f = kir_aff_const(0);
    f.expr = text ? kir_expr_add(k, text) : -1;
    if (f.expr < 0)
        f.expr = -2; /* out of memory: never equal to anything; the renderer fails on it */
    return f;
}

/* A malloc'd C rendering of x. */
static char *aff_text(const kir_kernel *k, const kir_aff *x)
{
    int n = kir_aff_str(k, x, NULL, 0);
    char *s = malloc((size_t)n + 1);
    if (s)
        kir_aff_str(k, x, s, (size_t)n + 1);
    return s;
}

kir_aff kir_aff_madd(kir_kernel *k, const kir_aff *x, int64_t m, const kir_aff *y)
{
    if (x->expr < 0 && y->expr < 0) {
        kir_aff f = kir_aff_const(x->c * m + y->c);
        for (int v = 0; v < KIR_MAXV; v++)
            f.a[v] = x->a[v] * m + y->a[v];
        return f;
    }
    char *xs = aff_text(k, x), *ys = aff_text(k, y), *text = NULL;
    if (xs && ys) {
        size_t n = strlen(xs) + strlen(ys) + 48;
        text = malloc(n);
        if (text)
            snprintf(text, n, "(%s) * %lld + (%s)", xs, (long long)m, ys);
    }
    free(xs);
    free(ys);
    return kir_aff_opaque(k, text);
}

/* Largest value of the variable terms selected by `pick` (coefficient
 * filter); false on overflow. */
static bool terms_max(const kir_kernel *k, const int64_t *a, int64_t c, bool (*pick)(int64_t, int64_t),
                      int64_t mod, int64_t *out)
{
    int64_t total = c;
    for (int v = 0; v < KIR_MAXV; v++) {
        if (a[v] == 0 || !pick(a[v], mod))
            continue;
        int64_t t;
        if (__builtin_mul_overflow(a[v], k->ext[v] - 1, &t) || __builtin_add_overflow(total, t, &total))
            return false;
    }
    *out = total;
    return true;
}

static bool not_multiple(int64_t a, int64_t m) { return a % m != 0; }

kir_aff kir_aff_divmod(kir_kernel *k, const kir_aff *x, int64_t p, int64_t s)
{
    if (s == 1)
        return kir_aff_const(0);
    if (x->expr < 0) {
        /* quotient: terms that are multiples of p divide exactly; the rest
         * (with the constant's remainder) must stay below p */
        kir_aff q = kir_aff_const(x->c / p);
        int64_t low;
        bool ok = terms_max(k, x->a, x->c % p, not_multiple, p, &low) && low < p;
        for (int v = 0; ok && v < KIR_MAXV; v++)
            q.a[v] = x->a[v] % p == 0 ? x->a[v] / p : 0;
        /* remainder mod s: multiples of s vanish, the rest must stay below s */
        if (ok) {
            kir_aff r = kir_aff_const(q.c % s);
            ok = terms_max(k, q.a, q.c % s, not_multiple, s, &low) && low < s;
            for (int v = 0; ok && v < KIR_MAXV; v++)
                r.a[v] = q.a[v] % s == 0 ? 0 : q.a[v];
            if (ok)
                return r;
        }
    }
    char *xs = aff_text(k, x), *text = NULL;
    if (xs) {
        size_t n = strlen(xs) + 64;
        text = malloc(n);
        if (text)
            snprintf(text, n, "(%s) / %lld %% %lld", xs, (long long)p, (long long)s);
    }
    free(xs);
    return kir_aff_opaque(k, text);
}

bool kir_aff_equal(const kir_aff *x, const kir_aff *y)
{
    if (x->expr != y->expr || x->expr < -1)
        return false;
    if (x->expr >= 0)
        return true;
    return x->c == y->c && memcmp(x->a, y->a, sizeof x->a) == 0;
}

kir_map kir_map_identity(const kir_kernel *k, int nd)
{
    kir_map m;
    m.nd = nd;
    for (int d = 0; d < nd; d++)
        m.d[d] = kir_aff_var(k, d);
    return m;
}

void kir_map_broadcast(const lt_meta *in, const lt_meta *out, const kir_map *m, kir_map *r)
{
    int lead = out->ndim - in->ndim;
    r->nd = in->ndim;
    for (int d = 0; d < in->ndim; d++)
        r->d[d] = in->shape[d] == 1 || in->shape[d] != out->shape[d + lead] ? kir_aff_const(0) : m->d[d + lead];
}

static int norm_dim(int64_t d, int nd) { return (int)(d < 0 ? d + nd : d); }

/* Contiguous strides (elements) of meta. */
static void contiguous(const lt_meta *meta, int64_t *cs)
{
    int64_t s = 1;
    for (int d = meta->ndim - 1; d >= 0; d--) {
        cs[d] = s;
        s *= meta->shape[d] > 0 ? meta->shape[d] : 1;
    }
}

/* VIEW (a reshape of values): linearize the output position, then split it
 * along the input's dims. */
static void map_reshape(kir_kernel *k, const lt_meta *in, const lt_meta *outm, const kir_map *out, kir_map *r)
{
    if (lt_shape_equal(in->shape, in->ndim, outm->shape, outm->ndim)) {
        *r = *out;
        return;
    }
    r->nd = in->ndim;
    if (lt_shape_numel(in->shape, in->ndim) == 0) { /* no position exists: nothing to split */
        for (int d = 0; d < in->ndim; d++)
            r->d[d] = kir_aff_const(0);
        return;
    }
    int64_t cs_out[LT_MAX_DIMS], cs_in[LT_MAX_DIMS];
    contiguous(outm, cs_out);
    contiguous(in, cs_in);
    kir_aff lin = kir_aff_const(0);
    for (int d = 0; d < outm->ndim; d++)
        if (outm->shape[d] != 1)
            lin = kir_aff_madd(k, &out->d[d], cs_out[d], &lin);
    r->nd = in->ndim;
    for (int d = 0; d < in->ndim; d++)
        r->d[d] = in->shape[d] == 1 ? kir_aff_const(0) : kir_aff_divmod(k, &lin, cs_in[d], in->shape[d]);
}

void kir_map_view(kir_kernel *k, const lt_gnode *n, const lt_meta *in, const kir_map *out, kir_map *r)
{
    const lt_attrs *a = &n->attrs;
    const lt_meta *om = &n->out[0];
    switch ((lt_op)n->op) {
    case LT_OP_VIEW:
        map_reshape(k, in, om, out, r);
        return;
    case LT_OP_PERMUTE:
        r->nd = in->ndim;
        for (int d = 0; d < in->ndim; d++)
            r->d[norm_dim(a->i[d], in->ndim)] = out->d[d];
        return;
    case LT_OP_SLICE: {
        int d = norm_dim(a->i[0], in->ndim);
        kir_aff start = kir_aff_const(a->i[1]);
        *r = *out;
        /* a dim of length <= 1 never moves (and its step may be huge) */
        r->d[d] = om->shape[d] <= 1 ? start : kir_aff_madd(k, &out->d[d], a->i[3], &start);
        return;
    }
    case LT_OP_SELECT: {
        int d = norm_dim(a->i[0], in->ndim), j = 0;
        r->nd = in->ndim;
        for (int e = 0; e < in->ndim; e++)
            r->d[e] = e == d ? kir_aff_const(a->i[1]) : out->d[j++];
        return;
    }
    case LT_OP_EXPAND:
        kir_map_broadcast(in, om, out, r);
        return;
    case LT_OP_DIAGONAL: {
        int d1 = norm_dim(a->i[1], in->ndim), d2 = norm_dim(a->i[2], in->ndim), j = 0;
        int64_t off = a->i[0];
        const kir_aff *diag = &out->d[om->ndim - 1];
        kir_aff c1 = kir_aff_const(off < 0 ? -off : 0), c2 = kir_aff_const(off >= 0 ? off : 0);
        r->nd = in->ndim;
        for (int e = 0; e < in->ndim; e++) {
            if (e == d1)
                r->d[e] = kir_aff_madd(k, diag, 1, &c1);
            else if (e == d2)
                r->d[e] = kir_aff_madd(k, diag, 1, &c2);
            else
                r->d[e] = out->d[j++];
        }
        return;
    }
    default:
        *r = *out; /* not a view op: never reached */
        return;
    }
}

kir_aff kir_map_offset(kir_kernel *k, const kir_map *m, const lt_meta *meta)
{
    int64_t cs[LT_MAX_DIMS];
    contiguous(meta, cs);
    kir_aff off = kir_aff_const(0);
    for (int d = 0; d < meta->ndim; d++)
        if (meta->shape[d] != 1)
            off = kir_aff_madd(k, &m->d[d], cs[d], &off);
    return off;
}

bool kir_map_equal(const kir_map *x, const kir_map *y)
{
    if (x->nd != y->nd)
        return false;
    for (int d = 0; d < x->nd; d++)
        if (!kir_aff_equal(&x->d[d], &y->d[d]))
            return false;
    return true;
}

uint64_t kir_map_hash(const kir_map *m)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)m->nd;
    for (int d = 0; d < m->nd; d++) {
        const kir_aff *f = &m->d[d];
        h = (h ^ (uint64_t)f->c) * 1099511628211ull;
        h = (h ^ (uint64_t)(int64_t)f->expr) * 1099511628211ull;
        for (int v = 0; v < KIR_MAXV; v++)
            if (f->a[v])
                h = (h ^ ((uint64_t)f->a[v] * 31 + (uint64_t)v)) * 1099511628211ull;
    }
    return h;
}

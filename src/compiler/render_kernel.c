/*
 * render_kernel.c - a kernel's function: its instructions, loops and
 * reductions, pointwise and row kernels, the chunked parallel form, and
 * the loop-invariant values computed once per call.
 */
#include "compiler/render_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        rd_form_str(c, in->form, off, sizeof off);
        rd_indent(b, depth);
        const char *t = rd_vtype(in->dtype);
        int buf = rd_local_buf(rd_current_map, in->buf);
        if (in->guard < 0) {
            rd_printf(b, "const %s v%d = b%d[%s];\n", t, i, buf, off);
            return;
        }
        char cond[768];
        rd_range_cond(c, in->guard, in->guard_lo, in->guard_hi, in->guard_step, cond, sizeof cond);
        rd_printf(b, "const %s v%d = %s ? b%d[%s] : (%s)0;\n", t, i, cond, buf, off, t);
        return;
    }
    case KI_OP: {
        const lt_gnode *n = rd_gnode(c, in->node);
        bool ok = c->p->cls[in->node] == NC_FACTORY ? rd_factory_expr(c, in, e, sizeof e) : rd_ew_expr(c, in, e, sizeof e);
        if (!ok) {
            c->failed = true;
            return;
        }
        rd_indent(b, depth);
        rd_printf(b, "const %s v%d = %s; /* %s */\n", rd_vtype(in->dtype), i, e, lt_op_name((lt_op)n->op));
        return;
    }
    case KI_REDUCE:
        emit_reduce(c, i, depth);
        return;
    case KI_SECOND: {
        char name[32], xi[64];
        rd_frag(name, sizeof name, "x%d", in->in[0]);
        rd_indent(b, depth);
        rd_printf(b, "const int64_t v%d = %s;\n", i, acc(c, xi, sizeof xi, name));
        return;
    }
    default:
        return; /* constants are declared at the top, stores at the end */
    }
}

static void emit_store(rctx *c, const kir_inst *in, int depth)
{
    char off[512];
    rd_form_str(c, in->form, off, sizeof off);
    rd_indent(c->b, depth);
    int src = c->k->ins[in->in[0]].dtype;
    char v[32], x[X_CAP];
    rd_var(v, sizeof v, in->in[0]);
    rd_cvt(x, sizeof x, v, src, in->dtype);
    rd_printf(c->b, "b%d[%s] = %s;\n", rd_local_buf(rd_current_map, in->buf), off, x);
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
            rd_indent(b, depth);
            rd_printf(b, "%s\n", inner);
        }
        rd_indent(b, depth);
        if (j == 0 && ranged)
            rd_printf(b, "for (int64_t i%d = lo; i%d < hi; i%d++) {\n", v, v, v);
        else
            rd_printf(b, "for (int64_t i%d = 0; i%d < %lld; i%d++) {\n", v, v, (long long)c->k->ext[v], v);
        depth++;
    }
    return depth;
}

static int close_loops(rctx *c, int n, int depth)
{
    for (int j = n - 1; j >= 0; j--) {
        depth--;
        rd_indent(c->b, depth);
        rd_printf(c->b, "}\n");
    }
    return depth;
}

int64_t rd_loops_work(const kir_kernel *k, const int8_t *vars, int n)
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
        rd_frag(buf, cap, "%s[i%d - jb]", name, c->col_var);
    else
        rd_frag(buf, cap, "%s", name);
    return buf;
}

/* Declares per-output state `name` of C type T: `T name = init;`, or an
 * array over the column block set to init. */
static void state_decl(rctx *c, const char *T, const char *name, const char *init, int depth)
{
    rd_indent(c->b, depth);
    if (!c->col) {
        rd_printf(c->b, "%s %s = %s;\n", T, name, init);
        return;
    }
    rd_printf(c->b, "%s %s[%d];\n", T, name, COL_BLOCK);
    rd_indent(c->b, depth);
    rd_printf(c->b, "for (int64_t i%d = jb; i%d < je; i%d++)\n", c->col_var, c->col_var, c->col_var);
    rd_indent(c->b, depth + 1);
    rd_printf(c->b, "%s[i%d - jb] = %s;\n", name, c->col_var, init);
}

/* Declares per-output state `name` = expr (expr already uses accessors). */
static void state_set(rctx *c, const char *T, const char *name, const char *expr, int depth)
{
    rd_indent(c->b, depth);
    if (!c->col) {
        rd_printf(c->b, "const %s %s = %s;\n", T, name, expr);
        return;
    }
    rd_printf(c->b, "%s %s[%d];\n", T, name, COL_BLOCK);
    rd_indent(c->b, depth);
    rd_printf(c->b, "for (int64_t i%d = jb; i%d < je; i%d++)\n", c->col_var, c->col_var, c->col_var);
    rd_indent(c->b, depth + 1);
    rd_printf(c->b, "%s[i%d - jb] = %s;\n", name, c->col_var, expr);
}

/* Renders the body instructions of reduction r (one pass), then `stmt`. */
static void emit_body(rctx *c, int r, const char *stmt, int depth)
{
    const kir_inst *red = &c->k->ins[r];
    for (int i = r + 1; i < red->body_end; i++)
        if (c->k->ins[i].scope == r)
            emit_inst(c, i, depth);
    rd_indent(c->b, depth);
    rd_printf(c->b, "%s\n", stmt);
}

/* One pass over the reduced range. Row mode: `red_clause` ("+:a3") enables
 * simd on the innermost loop; NULL runs plainly. A reduction to one value
 * (no domain loop) runs on one thread: splitting it needs partial results
 * per chunk, not rendered yet. Column mode: the block's outputs are
 * the innermost (simd) loop of every reduced position. */
static void emit_pass(rctx *c, int r, const char *red_clause, const char *stmt, int depth)
{
    const kir_inst *red = &c->k->ins[r];
    rd_indent(c->b, depth);
    rd_printf(c->b, "{\n");
    if (c->col) {
        int d = open_loops(c, red->rv, red->nrv, false, NULL, depth + 1);
        rd_indent(c->b, d);
        rd_printf(c->b, "#pragma omp simd\n");
        rd_indent(c->b, d);
        rd_printf(c->b, "for (int64_t i%d = jb; i%d < je; i%d++) {\n", c->col_var, c->col_var, c->col_var);
        emit_body(c, r, stmt, d + 1);
        rd_indent(c->b, d);
        rd_printf(c->b, "}\n");
        close_loops(c, red->nrv, d);
    } else {
        char simd[128] = "";
        if (red_clause)
            rd_frag(simd, sizeof simd, "#pragma omp simd reduction(%s)", red_clause);
        int d = open_loops(c, red->rv, red->nrv, false, red_clause ? simd : NULL, depth + 1);
        emit_body(c, r, stmt, d);
        close_loops(c, red->nrv, d);
    }
    rd_indent(c->b, depth);
    rd_printf(c->b, "}\n");
}

/* Compute dtype of a reduction over input dtype dt (reduce.c's rules). */
static int reduce_compute(lt_op op, int dt)
{
    if (op == LT_OP_ALL || op == LT_OP_ANY)
        return LT_BOOL;
    if (rd_is_half(dt) || (op == LT_OP_LOGSUMEXP && !lt_dtype_is_floating((lt_dtype)dt)))
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
    rd_frag(an, sizeof an, "a%d", r);
    rd_frag(nname, sizeof nname, "n%d", r);
    acc(c, a, sizeof a, an);
    acc(c, nn, sizeof nn, nname);
    if (cdt == LT_BOOL) {
        state_decl(c, "int", an, max ? "0" : "1", depth);
        rd_frag(stmt, sizeof stmt, "%s %s= (int)(%s);", a, max ? "|" : "&", x);
        rd_frag(clause, sizeof clause, "%s:a%d", max ? "|" : "&", r);
        emit_pass(c, r, clause, stmt, depth);
        return;
    }
    state_decl(c, rd_vtype(cdt), an, max_init(cdt, max), depth);
    if (fl) {
        state_decl(c, "int", nname, "0", depth);
        rd_frag(stmt, sizeof stmt, "{ const %s x_ = %s; %s = x_ %s %s ? x_ : %s; %s |= x_ != x_; }", rd_vtype(cdt), x, a,
             max ? ">" : "<", a, a, nn);
        rd_frag(clause, sizeof clause, "%s:a%d) reduction(|:n%d", max ? "max" : "min", r, r);
    } else {
        rd_frag(stmt, sizeof stmt, "{ const %s x_ = %s; %s = x_ %s %s ? x_ : %s; }", rd_vtype(cdt), x, a, max ? ">" : "<", a,
             a);
        rd_frag(clause, sizeof clause, "%s:a%d", max ? "max" : "min", r);
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
    const lt_gnode *n = rd_gnode(c, red->node);
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
    rd_var(v, sizeof v, red->in[0]);
    rd_cvt(ri->x, sizeof ri->x, v, src->dtype, ri->cdt);
}

/* The loops of reduction r: accumulators and passes (no result yet). */
static void emit_reduce_passes(rctx *c, int r, int depth)
{
    const kir_inst *red = &c->k->ins[r];
    const lt_gnode *n = rd_gnode(c, red->node);
    red_info ri;
    red_info_of(c, r, &ri);
    const char *x = ri.x;
    char stmt[2 * X_CAP], clause[64], name[32], a[64], e[256], m[64], q[64], hh[64], sname[32], s2[64], nn[64];
    sb *b = c->b;
    rd_indent(b, depth);
    rd_printf(b, "/* %s over %lld elements */\n", lt_op_name(ri.op), (long long)ri.nred);
    rd_frag(name, sizeof name, "a%d", r);
    acc(c, a, sizeof a, name);
    switch (ri.op) {
    case LT_OP_SUM:
    case LT_OP_PROD:
    case LT_OP_MEAN: {
        const char *T = ri.fl ? "double" : "uint64_t", *o = ri.op == LT_OP_PROD ? "*" : "+";
        state_decl(c, T, name, ri.op == LT_OP_PROD ? "1" : "0", depth);
        rd_frag(stmt, sizeof stmt, "%s %s= (%s)(%s);", a, o, T, x);
        rd_frag(clause, sizeof clause, "%s:a%d", o, r);
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
        rd_frag(stmt, sizeof stmt, "%s += (double)(%s);", a, x);
        rd_frag(clause, sizeof clause, "+:a%d", r);
        emit_pass(c, r, clause, stmt, depth);
        rd_frag(sname, sizeof sname, "m%d", r);
        rd_frag(e, sizeof e, "%s / %lld.0", a, (long long)ri.nred);
        state_set(c, "double", sname, e, depth);
        acc(c, m, sizeof m, sname);
        rd_frag(sname, sizeof sname, "q%d", r);
        acc(c, q, sizeof q, sname);
        state_decl(c, "double", sname, "0", depth);
        rd_frag(stmt, sizeof stmt, "{ const double d_ = (double)(%s) - %s; %s += d_ * d_; }", x, m, q);
        rd_frag(clause, sizeof clause, "+:q%d", r);
        emit_pass(c, r, clause, stmt, depth);
        return;
    }
    case LT_OP_LOGSUMEXP: {
        emit_extremum(c, r, true, ri.cdt, x, depth);
        rd_frag(sname, sizeof sname, "n%d", r);
        acc(c, nn, sizeof nn, sname);
        rd_frag(sname, sizeof sname, "h%d", r);
        rd_frag(e, sizeof e, "%s ? (double)NAN : isinf(%s) ? 0.0 : (double)%s", nn, a, a);
        state_set(c, "double", sname, e, depth);
        acc(c, hh, sizeof hh, sname);
        rd_frag(sname, sizeof sname, "s%d", r);
        acc(c, s2, sizeof s2, sname);
        state_decl(c, "double", sname, "0", depth);
        if (ri.cdt == LT_F32)
            rd_frag(stmt, sizeof stmt, "%s += (double)lt_expf(%s - (float)%s);", s2, x, hh);
        else
            rd_frag(stmt, sizeof stmt, "%s += exp(%s - %s);", s2, x, hh);
        rd_frag(clause, sizeof clause, "+:s%d", r);
        emit_pass(c, r, clause, stmt, depth);
        return;
    }
    default: { /* argmax, argmin, max_dim, min_dim: first extreme, NaN first */
        bool max = ri.op == LT_OP_ARGMAX || ri.op == LT_OP_MAX_DIM;
        char flat[512], xi[64], xname[32];
        rd_form_str(c, red->form, flat, sizeof flat);
        state_decl(c, rd_vtype(ri.cdt), name, max_init(ri.cdt, max), depth);
        rd_frag(xname, sizeof xname, "x%d", r);
        acc(c, xi, sizeof xi, xname);
        state_decl(c, "int64_t", xname, "0", depth);
        if (ri.fl)
            rd_frag(stmt, sizeof stmt, "{ const %s x_ = %s; if (x_ %s %s || (x_ != x_ && %s == %s)) { %s = x_; %s = %s; } }",
                 rd_vtype(ri.cdt), x, max ? ">" : "<", a, a, a, a, xi, flat);
        else
            rd_frag(stmt, sizeof stmt, "{ const %s x_ = %s; if (x_ %s %s) { %s = x_; %s = %s; } }", rd_vtype(ri.cdt), x,
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
    rd_frag(name, sizeof name, "a%d", r);
    acc(c, a, sizeof a, name);
    rd_frag(name, sizeof name, "n%d", r);
    acc(c, nn, sizeof nn, name);
    switch (ri.op) {
    case LT_OP_SUM:
    case LT_OP_PROD:
        rd_frag(val, sizeof val, ri.fl ? "%s" : "(int64_t)%s", a);
        from = ri.fl ? LT_F64 : LT_I64;
        break;
    case LT_OP_MEAN:
        rd_frag(val, sizeof val, "%s / %lld.0", a, (long long)ri.nred);
        from = LT_F64;
        break;
    case LT_OP_AMAX:
    case LT_OP_AMIN:
    case LT_OP_ANY:
    case LT_OP_ALL:
        if (ri.cdt == LT_BOOL)
            rd_frag(val, sizeof val, "(%s != 0)", a);
        else if (ri.fl)
            rd_frag(val, sizeof val, "(%s ? (%s)NAN : %s)", nn, rd_vtype(ri.cdt), a);
        else
            rd_frag(val, sizeof val, "%s", a);
        break;
    case LT_OP_VAR:
    case LT_OP_STD: {
        char corr[64], q[64];
        rd_attr_scalar(corr, sizeof corr, rd_gnode(c, red->node), 0);
        rd_frag(name, sizeof name, "q%d", r);
        acc(c, q, sizeof q, name);
        rd_frag(val, sizeof val, "%s(%s / (%lld.0 - %s > 0 ? %lld.0 - %s : 0.0))", ri.op == LT_OP_STD ? "sqrt" : "", q,
             (long long)ri.nred, corr, (long long)ri.nred, corr);
        from = LT_F64;
        break;
    }
    case LT_OP_LOGSUMEXP: {
        char s2[64], hh[64];
        rd_frag(name, sizeof name, "s%d", r);
        acc(c, s2, sizeof s2, name);
        rd_frag(name, sizeof name, "h%d", r);
        acc(c, hh, sizeof hh, name);
        rd_frag(val, sizeof val, "log(%s) + %s", s2, hh);
        from = LT_F64;
        break;
    }
    case LT_OP_ARGMAX:
    case LT_OP_ARGMIN:
        rd_frag(name, sizeof name, "x%d", r);
        acc(c, val, sizeof val, name);
        from = LT_I64;
        break;
    default: /* max_dim, min_dim: the value; KI_SECOND takes the index */
        rd_frag(val, sizeof val, "%s", a);
        break;
    }
    rd_cvt(out, sizeof out, val, from, red->dtype);
    rd_indent(c->b, depth);
    rd_printf(c->b, "const %s v%d = %s;\n", rd_vtype(red->dtype), r, out);
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
            rd_local_buf(rd_current_map, k->ins[i].buf);
        if (k->ins[i].kind == KI_STORE)
            stored[k->ins[i].buf] = true;
        if (k->ins[i].kind == KI_LOAD)
            loaded[k->ins[i].buf] = true;
    }
    if (k->kind == KK_ROW) {
        rd_local_buf(rd_current_map, k->row_buf);
        stored[k->row_buf] = true;
    }
    for (int l = 0; l < rd_current_map->nbuf; l++) {
        int i = rd_current_map->buf[l];
        const char *t = rd_stype(c->p->b[i].meta.dtype);
        if (stored[i])
            rd_printf(b, "    %s *restrict b%d = (%s *)B[%d];\n", t, l, t, l);
        else if (loaded[i])
            rd_printf(b, "    const %s *restrict b%d = (const %s *)B[%d];\n", t, l, t, l);
    }
    free(stored);
    free(loaded);
    for (int i = 0; i < k->nins; i++) {
        const kir_inst *in = &k->ins[i];
        if (in->kind != KI_CONST)
            continue;
        const lt_gnode *n = rd_gnode(c, in->node);
        char lit[64];
        if (n->slot >= 0)
            rd_frag(lit, sizeof lit, "S[%d]", rd_local_slot(rd_current_map, n->slot));
        else
            rd_double_literal(lit, sizeof lit, n->scalar);
        rd_printf(b, "    const double v%d = %s;\n", i, lit);
    }
    rd_printf(b, "    (void)S;\n");
}

/* A comment on kernel `index`: what it computes and the buffers it
 * defines (in the entry point, before its call). */
void rd_describe(rctx *c, int index)
{
    const kir_kernel *k = &c->p->k[index];
    sb *b = c->b;
    char shape[160];
    rd_printf(b, "    /* kernel %d: ", index);
    if (k->kind == KK_ROW) {
        const lt_gnode *n = rd_gnode(c, k->node);
        rd_printf(b, "%s along dim %d of %s%s", lt_op_name((lt_op)n->op), k->row_var,
                  lt_dtype_name((lt_dtype)n->out[0].dtype), lt_shape_str(n->out[0].shape, n->out[0].ndim, shape, sizeof shape));
    } else {
        rd_printf(b, "pointwise over %s:", lt_shape_str(k->dom, k->ndom, shape, sizeof shape));
        for (int i = 0; i < k->nins; i++)
            if (k->ins[i].kind == KI_OP || k->ins[i].kind == KI_REDUCE)
                rd_printf(b, " %s", lt_op_name((lt_op)rd_gnode(c, k->ins[i].node)->op));
    }
    rd_printf(b, " -> ");
    bool first = true;
    for (int i = 0; i < c->p->nb; i++) {
        if (c->p->b[i].def != index)
            continue;
        rd_printf(b, "%sB[%d]", first ? "" : ", ", i);
        first = false;
    }
    rd_printf(b, " */\n");
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
        rd_printf(b, "static void " FN_TOKEN "_chunk(void *ctx_, int64_t lo, int64_t hi, int64_t chunk_)\n{\n");
        rd_printf(b, "    void *const *restrict B = ((const lt_kctx *)ctx_)->B;\n");
        rd_printf(b, "    const double *restrict S = ((const lt_kctx *)ctx_)->S;\n");
        rd_printf(b, "    (void)chunk_;\n");
    } else {
        rd_printf(b, "%s void " FN_TOKEN KERNEL_PARAMS "\n{\n", c->linkage);
        rd_printf(b, "    (void)rt;\n");
    }
    emit_prologue(c);
}

static void emit_kernel_close(rctx *c, bool parallel, int64_t extent, int64_t per_iter)
{
    sb *b = c->b;
    rd_printf(b, "}\n\n");
    if (!parallel)
        return;
    int64_t grain = per_iter >= PAR_CHUNK_WORK ? 1 : (PAR_CHUNK_WORK + per_iter - 1) / per_iter;
    rd_printf(b, "%s void " FN_TOKEN KERNEL_PARAMS "\n{\n", c->linkage);
    rd_printf(b, "    lt_kctx ctx_ = {B, S};\n");
    rd_printf(b, "    rt->parallel_for(%lldLL, %lldLL, 1, " FN_TOKEN "_chunk, &ctx_);\n", (long long)extent,
              (long long)grain);
    rd_printf(b, "}\n\n");
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
        } else if (in->kind == KI_LOAD && in->guard < 0) {
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

void rd_emit_pointwise(rctx *c)
{
    const kir_kernel *k = c->k;
    sb *b = c->b;
    int64_t work = rd_loops_work(k, k->loop, k->nloop), inner = 1;
    for (int i = 0; i < k->nins; i++)
        if (k->ins[i].kind == KI_REDUCE)
            inner += rd_loops_work(k, k->ins[i].rv, k->ins[i].nrv);
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
        rd_indent(b, d);
        if (parallel && !outer)
            rd_printf(b, "for (int64_t blk = lo; blk < hi; blk++) {\n");
        else
            rd_printf(b, "for (int64_t blk = 0; blk < %lld; blk++) {\n", blocks);
        d++;
        rd_indent(b, d);
        rd_printf(b, "const int64_t jb = blk * %lld, je = jb + %lld < %lld ? jb + %lld : %lld;\n", step, step, ext,
                  step, ext);
        for (int i = 0; i < k->nins; i++)
            if (k->ins[i].kind == KI_REDUCE)
                emit_reduce_passes(c, i, d);
        rd_indent(b, d);
        rd_printf(b, "for (int64_t i%d = jb; i%d < je; i%d++) {\n", c->col_var, c->col_var, c->col_var);
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
            rd_indent(b, d);
            rd_printf(b, "}\n");
        }
        close_loops(c, k->nloop - 1, d);
        c->col = false;
    }
    emit_kernel_close(c, parallel, extent, per_iter);
}

/* softmax / log_softmax of one row at a time, like the eager row loop:
 * the max, the sum of exp(x - max) in double, then the outputs. */
void rd_emit_row(rctx *c)
{
    const kir_kernel *k = c->k;
    sb *b = c->b;
    const lt_gnode *n = rd_gnode(c, k->node);
    int dt = n->out[0].dtype;
    const char *T = rd_vtype(dt), *E = dt == LT_F32 ? "lt_expf" : "exp";
    bool log_softmax = n->op == LT_OP_LOG_SOFTMAX;
    int64_t work = rd_loops_work(k, k->loop, k->nloop) * k->ext[k->row_var];
    bool parallel = k->nloop > 0 && k->ext[k->loop[0]] > 1 && work >= LT_PARALLEL_GRAIN;
    emit_kernel_open(c, parallel);
    int row_buf = rd_local_buf(rd_current_map, k->row_buf);
    int d = open_loops(c, k->loop, k->nloop, parallel, NULL, 1);
    char x[64], off[512];
    rd_frag(x, sizeof x, "v%d", k->row_input);
    rd_form_str(c, k->row_form, off, sizeof off);
    int rv = k->row_var;
    long long len = (long long)k->ext[rv];
    /* the row's input expression, rendered inside each pass */
#define ROW_PASS_OF(with_input, pragma_text, ...)                                  \
    do {                                                                           \
        rd_indent(b, d);                                                              \
        rd_printf(b, "%s\n", pragma_text);                                         \
        rd_indent(b, d);                                                              \
        rd_printf(b, "for (int64_t i%d = 0; i%d < %lld; i%d++) {\n", rv, rv, len, rv); \
        for (int i = 0; (with_input) && i < k->nins; i++)                          \
            if (k->ins[i].kind != KI_CONST)                                        \
                emit_inst(c, i, d + 1);                                            \
        rd_indent(b, d + 1);                                                          \
        rd_printf(b, __VA_ARGS__);                                                 \
        rd_indent(b, d);                                                              \
        rd_printf(b, "}\n");                                                       \
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
    rd_frag(kept, sizeof kept, "b%d[%s]", row_buf, off);
    const char *y = keep_input ? kept : x; /* the input in passes after the first */
    rd_indent(b, d);
    rd_printf(b, "%s m = -INFINITY;\n", T);
    rd_indent(b, d);
    rd_printf(b, "int nan = 0;\n");
    if (keep_input)
        ROW_PASS("#pragma omp simd reduction(max:m) reduction(|:nan)",
                 "{ const %s x_ = %s; %s = x_; m = x_ > m ? x_ : m; nan |= x_ != x_; }\n", T, x, kept);
    else
        ROW_PASS("#pragma omp simd reduction(max:m) reduction(|:nan)",
                 "{ const %s x_ = %s; m = x_ > m ? x_ : m; nan |= x_ != x_; }\n", T, x);
    rd_indent(b, d);
    rd_printf(b, "if (nan)\n");
    rd_indent(b, d + 1);
    rd_printf(b, "m = NAN;\n");
    rd_indent(b, d);
    rd_printf(b, "double s = 0;\n");
    if (log_softmax) {
        ROW_PASS_OF(!keep_input, "#pragma omp simd reduction(+:s)", "s += %s(%s - m);\n", E, y);
        rd_indent(b, d);
        rd_printf(b, "const %s lse = (%s)log(s);\n", T, T);
        ROW_PASS_OF(!keep_input, "/* outputs */", "b%d[%s] = %s - m - lse;\n", row_buf, off, y);
    } else {
        ROW_PASS_OF(!keep_input, "#pragma omp simd reduction(+:s)",
                    "{ const %s e = %s(%s - m); b%d[%s] = e; s += e; }\n", T, E, y, row_buf, off);
        rd_indent(b, d);
        rd_printf(b, "const %s inv = (%s)(1.0 / s);\n", T, T);
        rd_indent(b, d);
        rd_printf(b, "for (int64_t i%d = 0; i%d < %lld; i%d++)\n", rv, rv, len, rv);
        rd_indent(b, d + 1);
        rd_printf(b, "b%d[%s] *= inv;\n", row_buf, off);
    }
#undef ROW_PASS
#undef ROW_PASS_OF
    close_loops(c, k->nloop, d);
    int64_t extent = k->nloop > 0 ? k->ext[k->loop[0]] : 1;
    emit_kernel_close(c, parallel, extent, work / (extent > 0 ? extent : 1) * 3);
}

/*
 * fuse_gemm.c - matmuls fused with the update that consumes them.
 *
 * An optimizer step such as SGD's w - lr * (dy^T @ x) is, after fusion, a
 * matmul call writing the gradient into a temporary and a pointwise kernel
 * reading it back once. BLAS computes C = alpha A B + beta C, so with
 * beta = 1 the gemm can accumulate straight into the update's output:
 * out = w (nothing to copy when out takes w's buffer by donation), then
 * out += -lr * A B. That saves a pass writing the product, one reading it
 * (and w) back, and the zeroing pass BLAS makes over C when beta = 0.
 *
 * The pattern, on the scheduled plan: a pointwise kernel whose only
 * instructions are
 *     LOAD x, LOAD m, [CAST m to its own dtype], ADD or SUB (x, m, alpha), STORE
 * where every LOAD and the STORE use the same index form (element for
 * element), m is the f32/f64 output of a 2-D matmul call read by no other
 * kernel and not a root, and x has m's dtype and size and is ready before
 * the matmul runs (the update moves up to the matmul's place). Neither matmul
 * operand may live in x's buffer: out may take that buffer by donation,
 * and the gemm must not read what it writes.
 */
#include "compiler/kir.h"

#include <string.h>

/* The one instruction of kind `kind` in k, or -1 if none or several. */
static int only_inst(const kir_kernel *k, int kind)
{
    int found = -1;
    for (int i = 0; i < k->nins; i++) {
        if (k->ins[i].kind != kind)
            continue;
        if (found >= 0)
            return -1;
        found = i;
    }
    return found;
}

/* Does any kernel other than `except` read buffer b? */
static bool read_elsewhere(const kir_plan *p, int b, int except)
{
    for (int j = 0; j < p->nk; j++) {
        if (j == except)
            continue;
        const kir_kernel *k = &p->k[j];
        if (k->kind == KK_CALL) {
            const kir_call *c = &p->calls[k->call];
            for (int a = 0; a < c->nin; a++)
                if (!c->in[a].scalar && c->in[a].buf == b)
                    return true;
            if (c->acc_buf == b)
                return true;
            continue;
        }
        if (k->kind == KK_ROW && k->row_buf == b)
            return true;
        for (int i = 0; i < k->nins; i++)
            if (k->ins[i].kind == KI_LOAD && k->ins[i].buf == b)
                return true;
    }
    return false;
}

/* The update kernel's parts, once recognised. */
typedef struct update {
    int store, add, load_x, load_m;
    int call_kernel;
} update;

/* Instruction i, seen through a cast to its own dtype. */
static int skip_same_cast(const kir_plan *p, const kir_kernel *k, int i)
{
    const kir_inst *in = &k->ins[i];
    if (in->kind != KI_OP || p->g->nodes[in->node].op != LT_OP_CAST || in->in[0] < 0)
        return i;
    return k->ins[in->in[0]].dtype == in->dtype ? in->in[0] : -1;
}

/* Is matmul call c a plain 2-D product whose operands stay clear of buffer
 * x_buf, writing the one buffer m_buf? */
static bool plain_2d_matmul(const kir_plan *p, const kir_call *c, int m_buf, int x_buf)
{
    if (p->g->nodes[c->node].op != LT_OP_MATMUL || c->nin != 2 || c->nout != 1 || c->out[0] != m_buf ||
        c->acc_buf >= 0)
        return false;
    for (int a = 0; a < 2; a++)
        if (c->in[a].scalar || c->in[a].meta.ndim != 2 || c->in[a].buf == x_buf)
            return false;
    return true;
}

/* Recognises kernel j as x +- alpha * m over a matmul's product m. */
static bool match_update(const kir_plan *p, int j, update *u)
{
    const kir_kernel *k = &p->k[j];
    if (k->kind != KK_POINTWISE || k->nins > 5)
        return false;
    u->store = only_inst(k, KI_STORE);
    if (u->store < 0 || k->ins[u->store].in[0] < 0)
        return false;
    u->add = k->ins[u->store].in[0];
    const kir_inst *add = &k->ins[u->add];
    lt_op op = add->kind == KI_OP ? (lt_op)p->g->nodes[add->node].op : LT_OP_COUNT;
    if ((op != LT_OP_ADD && op != LT_OP_SUB) || add->in[0] < 0 || add->in[1] < 0)
        return false;
    u->load_x = add->in[0];
    u->load_m = skip_same_cast(p, k, add->in[1]);
    if (u->load_m < 0 || k->ins[u->load_x].kind != KI_LOAD || k->ins[u->load_m].kind != KI_LOAD)
        return false;
    /* nothing else in the kernel: x, m, perhaps the cast, the add, the store */
    int expected = 4 + (u->load_m != add->in[1]);
    if (k->nins != expected)
        return false;
    const kir_inst *store = &k->ins[u->store], *lx = &k->ins[u->load_x], *lm = &k->ins[u->load_m];
    const kir_aff *form = &k->forms[store->form];
    if (!kir_aff_equal(&k->forms[lx->form], form) || !kir_aff_equal(&k->forms[lm->form], form))
        return false;
    const kir_buf *out = &p->b[store->buf], *x = &p->b[lx->buf], *m = &p->b[lm->buf];
    lt_dtype dt = (lt_dtype)m->meta.dtype;
    if ((dt != LT_F32 && dt != LT_F64) || m->kind != KB_TMP || m->meta.ndim != 2 || lx->buf == lm->buf ||
        x->meta.dtype != m->meta.dtype || out->meta.dtype != m->meta.dtype || add->dtype != (int32_t)dt ||
        x->nbytes != m->nbytes || out->nbytes != m->nbytes || m->nbytes == 0 || store->buf == lx->buf ||
        out->meta.ndim != 2 || memcmp(out->meta.shape, m->meta.shape, 2 * sizeof(int64_t)) != 0)
        return false;
    if (m->def < 0 || p->k[m->def].kind != KK_CALL || read_elsewhere(p, lm->buf, j))
        return false;
    u->call_kernel = m->def;
    if (x->def >= u->call_kernel)
        return false; /* x is computed after the product: the gemm cannot start from it */
    return plain_2d_matmul(p, &p->calls[p->k[m->def].call], lm->buf, lx->buf);
}

/* Rewrites the matmul call to accumulate into the update's output, and
 * drops the update kernel j. */
static void fuse(kir_plan *p, int j, const update *u)
{
    const kir_kernel *k = &p->k[j];
    const kir_inst *add = &k->ins[u->add];
    const lt_gnode *n = &p->g->nodes[add->node];
    int out_buf = k->ins[u->store].buf, m_buf = k->ins[u->load_m].buf;
    kir_call *c = &p->calls[p->k[u->call_kernel].call];
    bool sub = n->op == LT_OP_SUB;
    c->acc_buf = k->ins[u->load_x].buf;
    c->out[0] = out_buf;
    c->alpha_slot = n->attrs.nf > 0 && n->attr_param[0] >= 0 ? n->attr_param[0] : -1;
    double alpha = n->attrs.nf > 0 ? n->attrs.f[0] : 1.0;
    c->alpha = sub ? -alpha : alpha;
    c->alpha_negated = sub;
    p->b[out_buf].def = u->call_kernel;
    uint32_t nvalues = p->g->nnodes * LT_MAX_OUTPUTS;
    for (uint32_t v = 0; v < nvalues; v++)
        if (p->vbuf[v] == out_buf)
            p->vkernel[v] = u->call_kernel;
    /* the product buffer is gone: nothing writes or reads it */
    p->b[m_buf].def = -1;
    p->b[m_buf].nbytes = 0;
    kir_remove_kernel(p, j);
}

int kir_fuse_gemm_updates(kir_plan *p)
{
    int fused = 0;
    for (int j = 0; j < p->nk; j++) {
        update u;
        if (!match_update(p, j, &u))
            continue;
        fuse(p, j, &u);
        fused++;
        j--; /* kernel j is now the next one */
    }
    return fused;
}

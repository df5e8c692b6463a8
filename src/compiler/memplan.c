/*
 * memplan.c - the memory plan of a compiled program.
 *
 * Liveness: every buffer lives from the kernel that writes it to the last
 * kernel that reads it. Temporaries share one workspace: a temporary's
 * bytes are returned to a free list after its last reader and reused by
 * the temporaries of later kernels (best fit, neighbours merged), so the
 * workspace is about the peak of live temporaries, not their sum.
 *
 * Donation: an output may be written into the buffer of a leaf of the same
 * byte size when, if the caller allows it at run time (lt_exec_args
 * .donatable), nothing reads the leaf afterwards: the leaf's last reader
 * is an earlier kernel, or the output's own pointwise kernel reading it
 * only at the element it writes (same offset form, same element size), or
 * a fused gemm update (fuse_gemm.c) starting from it.
 * Leaves handed out as a root's result are never donated.
 */
#include "compiler/kir.h"

#include <stdlib.h>
#include <string.h>

#define WS_ALIGN 64

static void note_read(kir_plan *p, int buf, int kernel)
{
    if (buf >= 0 && p->b[buf].last < kernel)
        p->b[buf].last = kernel;
}

static void compute_liveness(kir_plan *p)
{
    for (int j = 0; j < p->nk; j++) {
        const kir_kernel *k = &p->k[j];
        if (k->kind == KK_CALL) {
            const kir_call *c = &p->calls[k->call];
            for (int a = 0; a < c->nin; a++)
                if (!c->in[a].scalar)
                    note_read(p, c->in[a].buf, j);
            note_read(p, c->acc_buf, j);
            continue;
        }
        for (int i = 0; i < k->nins; i++)
            if (k->ins[i].kind == KI_LOAD)
                note_read(p, k->ins[i].buf, j);
    }
    for (int b = 0; b < p->nb; b++)
        if (p->b[b].last < p->b[b].def)
            p->b[b].last = p->b[b].def; /* written, never read: lives in its kernel */
}

typedef struct block {
    int64_t off, size;
} block;

typedef struct free_list {
    block *v;
    int n, cap;
} free_list;

static bool free_add(free_list *f, int64_t off, int64_t size)
{
    if (f->n == f->cap) {
        int cap = f->cap ? 2 * f->cap : 16;
        block *v = realloc(f->v, sizeof *v * (size_t)cap);
        if (!v)
            return false;
        f->v = v;
        f->cap = cap;
    }
    int i = 0; /* sorted by offset; merge with neighbours */
    while (i < f->n && f->v[i].off < off)
        i++;
    memmove(f->v + i + 1, f->v + i, sizeof *f->v * (size_t)(f->n - i));
    f->v[i].off = off;
    f->v[i].size = size;
    f->n++;
    if (i + 1 < f->n && f->v[i].off + f->v[i].size == f->v[i + 1].off) {
        f->v[i].size += f->v[i + 1].size;
        memmove(f->v + i + 1, f->v + i + 2, sizeof *f->v * (size_t)(f->n - i - 2));
        f->n--;
    }
    if (i > 0 && f->v[i - 1].off + f->v[i - 1].size == f->v[i].off) {
        f->v[i - 1].size += f->v[i].size;
        memmove(f->v + i, f->v + i + 1, sizeof *f->v * (size_t)(f->n - i - 1));
        f->n--;
    }
    return true;
}

/* Best fit from the free list, else the end of the workspace. */
static int64_t take(free_list *f, int64_t size, int64_t *end)
{
    int best = -1;
    for (int i = 0; i < f->n; i++)
        if (f->v[i].size >= size && (best < 0 || f->v[i].size < f->v[best].size))
            best = i;
    if (best < 0) {
        /* a free block at the end grows instead of leaving a hole */
        if (f->n && f->v[f->n - 1].off + f->v[f->n - 1].size == *end) {
            int64_t off = f->v[f->n - 1].off;
            f->n--;
            *end = off + size;
            return off;
        }
        int64_t off = *end;
        *end += size;
        return off;
    }
    int64_t off = f->v[best].off;
    f->v[best].off += size;
    f->v[best].size -= size;
    if (f->v[best].size == 0) {
        memmove(f->v + best, f->v + best + 1, sizeof *f->v * (size_t)(f->n - best - 1));
        f->n--;
    }
    return off;
}

static lt_status plan_workspace(kir_plan *p)
{
    free_list f = {0};
    int64_t end = 0;
    for (int j = 0; j < p->nk; j++) {
        for (int b = 0; b < p->nb; b++) { /* bytes of temporaries dead before kernel j */
            kir_buf *t = &p->b[b];
            if (t->kind == KB_TMP && t->def >= 0 && t->last == j - 1 &&
                !free_add(&f, t->offset, ((int64_t)t->nbytes + WS_ALIGN - 1) / WS_ALIGN * WS_ALIGN)) {
                free(f.v);
                return lt_error(LT_ERR_MEMORY, "cpu compiler: out of memory planning the workspace");
            }
        }
        for (int b = 0; b < p->nb; b++) {
            kir_buf *t = &p->b[b];
            if (t->kind == KB_TMP && t->def == j)
                t->offset = take(&f, ((int64_t)t->nbytes + WS_ALIGN - 1) / WS_ALIGN * WS_ALIGN, &end);
        }
    }
    free(f.v);
    p->ws_size = end;
    return LT_OK;
}

/* The STORE of buffer b in kernel k, or NULL. */
static const kir_inst *store_of(const kir_kernel *k, int b)
{
    for (int i = 0; i < k->nins; i++)
        if (k->ins[i].kind == KI_STORE && k->ins[i].buf == b)
            return &k->ins[i];
    return NULL;
}

/* Does kernel k read leaf buffer l only where store s writes? */
static bool reads_in_place(const kir_plan *p, const kir_kernel *k, int l, const kir_inst *s)
{
    if (lt_dtype_size((lt_dtype)p->b[l].meta.dtype) != lt_dtype_size((lt_dtype)p->b[s->buf].meta.dtype))
        return false;
    for (int i = 0; i < k->nins; i++) {
        const kir_inst *in = &k->ins[i];
        if (in->kind == KI_LOAD && in->buf == l && !kir_aff_equal(&k->forms[in->form], &k->forms[s->form]))
            return false;
    }
    return true;
}

static void plan_donation(kir_plan *p)
{
    bool *taken = calloc((size_t)p->nb + 1, sizeof *taken);
    if (!taken)
        return; /* no donation: still correct */
    for (int o = 0; o < p->nb; o++) {
        kir_buf *out = &p->b[o];
        if (out->kind != KB_OUT || out->nbytes == 0 || out->def < 0)
            continue;
        const kir_kernel *k = &p->k[out->def];
        const kir_inst *s = k->kind == KK_POINTWISE ? store_of(k, o) : NULL;
        int acc = k->kind == KK_CALL ? p->calls[k->call].acc_buf : -1;
        if (!s && acc < 0)
            continue;
        for (int l = 0; l < p->nb; l++) {
            const kir_buf *leaf = &p->b[l];
            if (leaf->kind != KB_LEAF || leaf->aliased || taken[l] || leaf->nbytes != out->nbytes ||
                leaf->last > out->def)
                continue;
            /* read by the output's own kernel: only where it writes (a fused
             * gemm update reads its start value and no operand from it) */
            if (leaf->last == out->def && (s ? !reads_in_place(p, k, l, s) : l != acc))
                continue;
            out->donor = leaf->slot;
            taken[l] = true;
            break;
        }
    }
    free(taken);
}

lt_status kir_memplan(kir_plan *p)
{
    compute_liveness(p);
    lt_status st = plan_workspace(p);
    if (st == LT_OK)
        plan_donation(p);
    return st;
}

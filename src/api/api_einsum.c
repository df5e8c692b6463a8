/*
 * api_einsum.c - torch.einsum as a composition of diagonal views, sums,
 * permutes, reshapes and lt_matmul.
 *
 * The equation is parsed into one label per operand dim: letters A-Z and
 * a-z are labels 0..51, the dims an ellipsis stands for get labels from
 * ELL_BASE on, aligned from the right across operands (they broadcast).
 * Each operand first loses its repeated labels (lt_diagonal) and the
 * labels no other operand and not the output has (lt_sum). Then operands
 * are contracted left to right, two at a time, by one lt_matmul: labels
 * both share and still need become batch dims, labels both share and no
 * longer need become the inner dim. Because every step is an existing
 * differentiable op, the result is traced, fused and differentiated with
 * no code of its own. Size-1 dims broadcast against any size, as in torch.
 */
#include "api/api.h"

#include <stdlib.h>
#include <string.h>

#define N_LETTERS 52
#define ELL_BASE N_LETTERS
#define N_LABELS (ELL_BASE + LT_MAX_DIMS)
#define EQ_MAX 256

/* One operand during the contraction: a tensor and the label of each dim. */
typedef struct {
    lt_tensor *t;
    int nl;
    int label[LT_MAX_DIMS];
} term;

typedef struct {
    int n;                            /* operands */
    term in[LT_MAX_DIMS * 4];         /* bounded by the equation's length check */
    int out[LT_MAX_DIMS];             /* output labels in order */
    int nout;
    int ell_nd;                       /* dims the ellipsis stands for (broadcast) */
    int uses[N_LABELS];               /* operands with the label */
    int64_t size[N_LABELS];           /* broadcast size of each label */
} einsum_plan;

static const char *OP = "einsum";

static int letter_label(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return 26 + (c - 'a');
    return -1;
}

static char label_char(int l) { return l < 26 ? (char)('A' + l) : (char)('a' + l - 26); }

/* ---- parsing ---------------------------------------------------------------- */

/* Reads one subscript string s[0..len): letters into lab (ellipsis marked
 * -1 in place), their count into *nl. */
static lt_status parse_subscripts(const char *s, size_t len, int *lab, int *nl, bool *has_ell, const char *what)
{
    *nl = 0;
    *has_ell = false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            if (i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.')
                return lt_error(LT_ERR_ARGUMENT, "%s: %s has a '.' that is not part of an ellipsis '...'", OP, what);
            if (*has_ell)
                return lt_error(LT_ERR_ARGUMENT, "%s: %s has more than one ellipsis '...'", OP, what);
            *has_ell = true;
            i += 2;
            lab[(*nl)++] = -1;
            continue;
        }
        int l = letter_label(s[i]);
        if (l < 0)
            return lt_error(LT_ERR_ARGUMENT, "%s: %s has the character '%c', expected letters a-z, A-Z and '...'",
                            OP, what, s[i]);
        if (*nl >= LT_MAX_DIMS + 1)
            return lt_error(LT_ERR_ARGUMENT, "%s: %s has more than %d subscripts", OP, what, LT_MAX_DIMS);
        lab[(*nl)++] = l;
    }
    return LT_OK;
}

/* Labels of operand k from its subscripts (ellipsis expanded). */
static lt_status bind_operand(einsum_plan *p, int k, const int *lab, int nl, bool has_ell)
{
    term *tm = &p->in[k];
    int letters = nl - (has_ell ? 1 : 0);
    int nd = tm->t->ndim;
    char s[160];
    if (has_ell ? letters > nd : letters != nd)
        return lt_error(LT_ERR_SHAPE, "%s: operand %d has shape %s but its subscripts name %d dims%s", OP, k,
                        lt_shape_str(tm->t->shape, nd, s, sizeof s), letters, has_ell ? " and an ellipsis" : "");
    int ell = nd - letters;
    if (ell > p->ell_nd)
        p->ell_nd = ell;
    tm->nl = 0;
    for (int i = 0; i < nl; i++) {
        if (lab[i] >= 0) {
            tm->label[tm->nl++] = lab[i];
            continue;
        }
        for (int e = 0; e < ell; e++)
            tm->label[tm->nl++] = -2 - (ell - e); /* resolved once ell_nd is known */
    }
    return LT_OK;
}

/* Ellipsis dims: right-aligned labels ELL_BASE + ell_nd - j. */
static void resolve_ellipsis(einsum_plan *p)
{
    for (int k = 0; k < p->n; k++)
        for (int i = 0; i < p->in[k].nl; i++)
            if (p->in[k].label[i] < -1)
                p->in[k].label[i] = ELL_BASE + p->ell_nd + (p->in[k].label[i] + 2);
}

/* Records the sizes of every label, checking they agree (or are 1). */
static lt_status gather_sizes(einsum_plan *p)
{
    for (int l = 0; l < N_LABELS; l++)
        p->size[l] = -1, p->uses[l] = 0;
    for (int k = 0; k < p->n; k++) {
        term *tm = &p->in[k];
        bool seen[N_LABELS] = {false};
        int64_t own[N_LABELS];
        for (int i = 0; i < tm->nl; i++) {
            int l = tm->label[i];
            int64_t s = tm->t->shape[i];
            if (seen[l] && own[l] != s)
                return lt_error(LT_ERR_SHAPE, "%s: subscript '%c' is repeated in operand %d with sizes %lld and %lld, "
                                "expected equal sizes for a diagonal", OP, label_char(l), k, (long long)own[l],
                                (long long)s);
            if (!seen[l])
                p->uses[l]++;
            seen[l] = true, own[l] = s;
            int64_t prev = p->size[l];
            if (prev >= 0 && prev != s && prev != 1 && s != 1) {
                if (l >= ELL_BASE)
                    return lt_error(LT_ERR_SHAPE, "%s: the ellipsis dims of operand %d do not broadcast with those "
                                    "of the operands before it (size %lld against %lld)", OP, k, (long long)s,
                                    (long long)prev);
                return lt_error(LT_ERR_SHAPE, "%s: subscript '%c' has size %lld in operand %d, which does not "
                                "broadcast with size %lld seen before", OP, label_char(l), (long long)s, k,
                                (long long)prev);
            }
            p->size[l] = prev < 0 || prev == 1 ? s : prev;
        }
    }
    return LT_OK;
}

/* Output labels from the text after "->". */
static lt_status parse_output(einsum_plan *p, const char *s, size_t len)
{
    int lab[LT_MAX_DIMS + 2], nl;
    bool has_ell;
    lt_status st = parse_subscripts(s, len, lab, &nl, &has_ell, "the output");
    if (st != LT_OK)
        return st;
    bool used[N_LABELS] = {false};
    p->nout = 0;
    for (int i = 0; i < nl; i++) {
        if (lab[i] < 0) {
            if (p->nout + p->ell_nd > LT_MAX_DIMS)
                return lt_error(LT_ERR_SHAPE, "%s: the output has more than %d dims", OP, LT_MAX_DIMS);
            for (int e = 0; e < p->ell_nd; e++)
                p->out[p->nout++] = ELL_BASE + e;
            continue;
        }
        if (used[lab[i]])
            return lt_error(LT_ERR_ARGUMENT, "%s: subscript '%c' appears more than once in the output", OP,
                            label_char(lab[i]));
        if (p->uses[lab[i]] == 0)
            return lt_error(LT_ERR_ARGUMENT, "%s: output subscript '%c' does not appear in any operand", OP,
                            label_char(lab[i]));
        used[lab[i]] = true;
        if (p->nout >= LT_MAX_DIMS)
            return lt_error(LT_ERR_SHAPE, "%s: the output has more than %d dims", OP, LT_MAX_DIMS);
        p->out[p->nout++] = lab[i];
    }
    return LT_OK;
}

/* Implicit output: the ellipsis dims, then the labels used once, in
 * label order (upper case first, as in torch). */
static lt_status implicit_output(einsum_plan *p)
{
    int count[N_LABELS] = {0};
    for (int k = 0; k < p->n; k++)
        for (int i = 0; i < p->in[k].nl; i++)
            count[p->in[k].label[i]]++;
    p->nout = 0;
    for (int e = 0; e < p->ell_nd; e++)
        p->out[p->nout++] = ELL_BASE + e;
    for (int l = 0; l < N_LETTERS; l++)
        if (count[l] == 1) {
            if (p->nout >= LT_MAX_DIMS)
                return lt_error(LT_ERR_SHAPE, "%s: the output has more than %d dims", OP, LT_MAX_DIMS);
            p->out[p->nout++] = l;
        }
    return LT_OK;
}

static lt_status parse_equation(einsum_plan *p, const char *equation, lt_tensor *const *operands, int n)
{
    if (!equation)
        return lt_error(LT_ERR_ARGUMENT, "%s: the equation is NULL", OP);
    if (n < 1 || !operands || n > (int)(sizeof p->in / sizeof p->in[0]))
        return lt_error(LT_ERR_ARGUMENT, "%s: %d operands, expected 1 to %d", OP, n,
                        (int)(sizeof p->in / sizeof p->in[0]));
    char eq[EQ_MAX];
    size_t len = 0;
    for (const char *c = equation; *c; c++) {
        if (*c == ' ')
            continue;
        if (len + 1 >= sizeof eq)
            return lt_error(LT_ERR_ARGUMENT, "%s: the equation is longer than %d characters", OP, EQ_MAX - 1);
        eq[len++] = *c;
    }
    eq[len] = '\0';
    p->n = n;
    p->ell_nd = 0;
    for (int k = 0; k < n; k++) {
        lt_status st = lt_check_tensor(OP, operands[k], k);
        if (st != LT_OK)
            return st;
        p->in[k].t = operands[k];
        if (operands[k]->dtype != operands[0]->dtype)
            return lt_error(LT_ERR_DTYPE, "%s: operand %d has dtype %s and operand 0 %s, expected one dtype", OP,
                            k, lt_dtype_name(operands[k]->dtype), lt_dtype_name(operands[0]->dtype));
    }
    const char *arrow = strstr(eq, "->");
    if (arrow && strstr(arrow + 2, "->"))
        return lt_error(LT_ERR_ARGUMENT, "%s: the equation \"%s\" has more than one '->'", OP, equation);
    size_t lhs_len = arrow ? (size_t)(arrow - eq) : len;
    const char *s = eq;
    for (int k = 0; k < n; k++) {
        const char *end = memchr(s, ',', lhs_len - (size_t)(s - eq));
        if (!end && k < n - 1)
            return lt_error(LT_ERR_ARGUMENT, "%s: the equation \"%s\" has %d operand subscripts, but %d operands "
                            "were given", OP, equation, k + 1, n);
        if (end && k == n - 1)
            return lt_error(LT_ERR_ARGUMENT, "%s: the equation \"%s\" has more operand subscripts than the %d "
                            "operands given", OP, equation, n);
        size_t tl = end ? (size_t)(end - s) : lhs_len - (size_t)(s - eq);
        char what[32];
        snprintf(what, sizeof what, "operand %d", k);
        int lab[LT_MAX_DIMS + 2], nl;
        bool has_ell;
        lt_status st = parse_subscripts(s, tl, lab, &nl, &has_ell, what);
        if (st == LT_OK)
            st = bind_operand(p, k, lab, nl, has_ell);
        if (st != LT_OK)
            return st;
        s += tl + 1;
    }
    resolve_ellipsis(p);
    lt_status st = gather_sizes(p);
    if (st != LT_OK)
        return st;
    return arrow ? parse_output(p, arrow + 2, len - lhs_len - 2) : implicit_output(p);
}

/* ---- contraction -------------------------------------------------------------- */

static int find_label(const term *tm, int l)
{
    for (int i = 0; i < tm->nl; i++)
        if (tm->label[i] == l)
            return i;
    return -1;
}

/* Replaces each repeated label of tm by its diagonal. */
static lt_status take_diagonals(term *tm)
{
    for (int i = 0; i < tm->nl; i++)
        for (int j = i + 1; j < tm->nl; j++) {
            if (tm->label[i] != tm->label[j])
                continue;
            int l = tm->label[i];
            tm->t = lt_diagonal(tm->t, 0, i, j);
            if (!tm->t)
                return lt_last_status();
            int nl = 0;
            for (int k = 0; k < tm->nl; k++)
                if (k != i && k != j)
                    tm->label[nl++] = tm->label[k];
            tm->label[nl++] = l;
            tm->nl = nl;
            i = -1; /* rescan: positions moved */
            break;
        }
    return LT_OK;
}

/* Sums the dims of tm whose labels `drop` marks (keepdim false). */
static lt_status sum_labels(term *tm, const bool *drop)
{
    int dims[LT_MAX_DIMS], nd = 0, nl = 0;
    for (int i = 0; i < tm->nl; i++) {
        if (drop[tm->label[i]])
            dims[nd++] = i;
        else
            tm->label[nl++] = tm->label[i];
    }
    if (nd == 0)
        return LT_OK;
    tm->t = lt_sum(tm->t, dims, nd, false);
    tm->nl = nl;
    return tm->t ? LT_OK : lt_last_status();
}

/* Sums size-n dims of tm to size 1 where `other` has the label at size 1
 * (a contracted label broadcast from 1: sum_k a_k b_1 = b_1 sum_k a_k). */
static lt_status shrink_to(term *tm, const term *other, const bool *contracted)
{
    int dims[LT_MAX_DIMS], nd = 0;
    for (int i = 0; i < tm->nl; i++) {
        int j = find_label(other, tm->label[i]);
        if (contracted[tm->label[i]] && tm->t->shape[i] != 1 && other->t->shape[j] == 1)
            dims[nd++] = i;
    }
    if (nd == 0)
        return LT_OK;
    tm->t = lt_sum(tm->t, dims, nd, true);
    return tm->t ? LT_OK : lt_last_status();
}

/* a's dims reordered as [batch, a-only, contracted] ([batch, contracted,
 * b-only] for b), then merged into [batch..., rows, cols]; with
 * merge_batch the batch dims become one. */
static lt_tensor *arrange(const term *tm, const int *batch, int nb, const int *inner, int ni, const int *own,
                          int no, bool own_first, bool merge_batch)
{
    int perm[LT_MAX_DIMS], np = 0;
    int64_t shape[LT_MAX_DIMS + 2];
    int64_t p_inner = 1, p_own = 1, p_batch = 1;
    for (int i = 0; i < nb; i++) {
        perm[np] = find_label(tm, batch[i]), shape[np] = tm->t->shape[perm[np]];
        p_batch *= shape[np++];
    }
    if (merge_batch && nb > 0) {
        shape[0] = p_batch;
        nb = 1;
    }
    const int *first = own_first ? own : inner, *second = own_first ? inner : own;
    int nfirst = own_first ? no : ni, nsecond = own_first ? ni : no;
    for (int i = 0; i < nfirst; i++)
        perm[np++] = find_label(tm, first[i]);
    for (int i = 0; i < nsecond; i++)
        perm[np++] = find_label(tm, second[i]);
    for (int i = 0; i < ni; i++)
        p_inner *= tm->t->shape[find_label(tm, inner[i])];
    for (int i = 0; i < no; i++)
        p_own *= tm->t->shape[find_label(tm, own[i])];
    lt_tensor *t = lt_permute(tm->t, perm, np);
    shape[nb] = own_first ? p_own : p_inner;
    shape[nb + 1] = own_first ? p_inner : p_own;
    return t ? lt_reshape(t, shape, nb + 2) : NULL;
}

/* Contracts a and b into a; `keep` marks the labels still needed. */
static lt_status contract(term *a, term *b, const bool *keep)
{
    bool drop_a[N_LABELS] = {false}, drop_b[N_LABELS] = {false}, contracted[N_LABELS] = {false};
    for (int i = 0; i < a->nl; i++)
        drop_a[a->label[i]] = !keep[a->label[i]] && find_label(b, a->label[i]) < 0;
    for (int i = 0; i < b->nl; i++)
        drop_b[b->label[i]] = !keep[b->label[i]] && find_label(a, b->label[i]) < 0;
    lt_status st = sum_labels(a, drop_a);
    if (st == LT_OK)
        st = sum_labels(b, drop_b);
    int batch[LT_MAX_DIMS], inner[LT_MAX_DIMS], a_own[LT_MAX_DIMS], b_own[LT_MAX_DIMS];
    int nb = 0, ni = 0, na = 0, nbo = 0;
    for (int i = 0; st == LT_OK && i < a->nl; i++) {
        int l = a->label[i];
        if (find_label(b, l) < 0)
            a_own[na++] = l;
        else if (keep[l])
            batch[nb++] = l;
        else
            inner[ni++] = l, contracted[l] = true;
    }
    for (int i = 0; st == LT_OK && i < b->nl; i++)
        if (find_label(a, b->label[i]) < 0)
            b_own[nbo++] = b->label[i];
    if (st == LT_OK && nb + na + nbo > LT_MAX_DIMS)
        return lt_error(LT_ERR_SHAPE, "%s: an intermediate product needs %d dims, more than %d", OP, nb + na + nbo,
                        LT_MAX_DIMS);
    if (st == LT_OK)
        st = shrink_to(a, b, contracted);
    if (st == LT_OK)
        st = shrink_to(b, a, contracted);
    if (st != LT_OK)
        return st;
    /* equal batch sizes on both sides (no broadcasting): one batch dim */
    bool merge = true;
    for (int i = 0; i < nb; i++)
        merge = merge && a->t->shape[find_label(a, batch[i])] == b->t->shape[find_label(b, batch[i])];
    if (!merge && nb + 2 > LT_MAX_DIMS)
        return lt_error(LT_ERR_SHAPE, "%s: %d broadcast batch dims and two matrix dims are more than %d dims", OP,
                        nb, LT_MAX_DIMS);
    lt_tensor *ma = arrange(a, batch, nb, inner, ni, a_own, na, true, merge);
    lt_tensor *mb = ma ? arrange(b, batch, nb, inner, ni, b_own, nbo, false, merge) : NULL;
    lt_tensor *prod = mb ? lt_matmul(ma, mb) : NULL;
    if (!prod)
        return lt_last_status();
    int64_t shape[LT_MAX_DIMS];
    term r = {.nl = 0};
    for (int i = 0; i < nb; i++) {
        int64_t sa = a->t->shape[find_label(a, batch[i])], sb = b->t->shape[find_label(b, batch[i])];
        shape[r.nl] = sa == 1 ? sb : sa;
        r.label[r.nl++] = batch[i];
    }
    for (int i = 0; i < na; i++)
        shape[r.nl] = a->t->shape[find_label(a, a_own[i])], r.label[r.nl++] = a_own[i];
    for (int i = 0; i < nbo; i++)
        shape[r.nl] = b->t->shape[find_label(b, b_own[i])], r.label[r.nl++] = b_own[i];
    r.t = lt_reshape(prod, shape, r.nl);
    *a = r;
    return r.t ? LT_OK : lt_last_status();
}

/* Marks the labels operands after k and the output still need. */
static void labels_needed(const einsum_plan *p, int k, bool *keep)
{
    memset(keep, 0, sizeof(bool) * N_LABELS);
    for (int i = 0; i < p->nout; i++)
        keep[p->out[i]] = true;
    for (int j = k + 1; j < p->n; j++)
        for (int i = 0; i < p->in[j].nl; i++)
            keep[p->in[j].label[i]] = true;
}

static bool in_output(const einsum_plan *p, int l)
{
    for (int i = 0; i < p->nout; i++)
        if (p->out[i] == l)
            return true;
    return false;
}

static lt_tensor *evaluate(einsum_plan *p)
{
    lt_status st = LT_OK;
    for (int k = 0; k < p->n && st == LT_OK; k++) {
        st = take_diagonals(&p->in[k]);
        /* labels of this operand only, and not in the output */
        bool drop[N_LABELS];
        for (int l = 0; l < N_LABELS; l++)
            drop[l] = p->uses[l] == 1 && !in_output(p, l);
        if (st == LT_OK)
            st = sum_labels(&p->in[k], drop);
    }
    term acc = p->in[0];
    for (int k = 1; k < p->n && st == LT_OK; k++) {
        bool keep[N_LABELS];
        labels_needed(p, k, keep);
        st = contract(&acc, &p->in[k], keep);
    }
    bool drop[N_LABELS];
    for (int l = 0; l < N_LABELS; l++)
        drop[l] = !in_output(p, l);
    if (st == LT_OK)
        st = sum_labels(&acc, drop);
    if (st != LT_OK)
        return NULL;
    int perm[LT_MAX_DIMS];
    for (int i = 0; i < p->nout; i++)
        perm[i] = find_label(&acc, p->out[i]);
    return lt_permute(acc.t, perm, p->nout);
}

lt_tensor *lt_einsum(const char *equation, lt_tensor *const *operands, int n)
{
    einsum_plan *p = calloc(1, sizeof *p);
    if (!p) {
        lt_error(LT_ERR_MEMORY, "%s: out of memory", OP);
        return NULL;
    }
    lt_tensor *r = NULL;
    if (parse_equation(p, equation, operands, n) == LT_OK) {
        lt_scope_begin();
        lt_origin caller = lt_origin_enter(OP);
        r = evaluate(p);
        lt_origin_restore(caller);
        if (r)
            r = lt_keep(r);
        lt_scope_end();
    }
    free(p);
    return r;
}

/*
 * render.c - renders a kernel plan as C: one translation unit, or several
 * for a large program (so that compiler processes build it in parallel).
 * The kernels' functions come from render_kernel.c (render_internal.h
 * lists the parts).
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
#include "compiler/render_internal.h"
#include "eager/ewmath.h"
#include "eager/fastmath.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIR_VERSION "lazytensor-cpu-13"

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
    rd_printf(b, "/* vectorizable f32 exp and erf, the eager kernels' own (src/eager/fastmath.h) */\n");
    int depth = 0, parens = 0;
    bool line_start = true;
    for (const char *s = text; *s; s++) {
        if (line_start && *s == ' ')
            continue;
        if (*s == '}')
            depth--;
        if (line_start)
            for (int i = 0; i < depth; i++)
                rd_printf(b, "    ");
        line_start = false;
        if (strncmp(s, decl, sizeof decl - 1) == 0) {
            rd_printf(b, "%s__attribute__((always_inline)) ", decl);
            s += sizeof decl - 2;
            continue;
        }
        rd_printf(b, "%c", *s);
        parens += (*s == '(') - (*s == ')');
        if (*s == '{')
            depth++;
        if (*s == '{' || *s == '}' || (*s == ';' && parens == 0)) {
            rd_printf(b, "\n");
            line_start = true;
        }
    }
    rd_printf(b, "\n");
}

/* Writes ewmath.h's formulas (activations, logaddexp, floor_divide ...),
 * the eager kernels' own, one function per line. */
static void emit_ewmath(sb *b)
{
    static const char text[] = LT_EWMATH_SOURCE;
    rd_printf(b, "/* activations and compound elementwise formulas (src/eager/ewmath.h) */\n");
    for (const char *s = text; *s; s++) {
        if (s[0] == ' ' && strncmp(s + 1, "static inline", 13) == 0) {
            rd_printf(b, "\n");
            continue;
        }
        rd_printf(b, "%c", *s);
    }
    rd_printf(b, "\n");
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
    rd_printf(b, "/*\n * Generated by %s from a graph of %u nodes: %d kernels (%d pointwise, %d row, %d calls).\n",
              KIR_VERSION, p->g->nnodes, p->nk, p->npointwise, p->nrow, p->ncalls);
    rd_printf(b, " * Buffers (B[i]):\n");
    for (int i = 0; i < p->nb; i++) {
        const kir_buf *x = &p->b[i];
        rd_printf(b, " *   B[%d] %%%u %s%s ", i, x->value / LT_MAX_OUTPUTS, lt_dtype_name((lt_dtype)x->meta.dtype),
                  lt_shape_str(x->meta.shape, x->meta.ndim, shape, sizeof shape));
        if (x->kind == KB_LEAF)
            rd_printf(b, "input %d\n", x->slot);
        else if (x->kind == KB_OUT)
            rd_printf(b, "output %d%s\n", x->slot, x->donor >= 0 ? " (may reuse a donated input)" : "");
        else
            rd_printf(b, "temporary at workspace offset %lld\n", (long long)x->offset);
    }
    rd_printf(b, " */\n");
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
        rd_printf(b, "%.*s", (int)(stop - text), text);
        if (!tok)
            break;
        rd_printf(b, "kernel%d", j);
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
        rd_printf(b, "static const int kb%d[] = {", j);
        for (int l = 0; l < m->nbuf; l++)
            rd_printf(b, "%s%d", l ? ", " : "", m->buf[l]);
        rd_printf(b, "};\n");
    }
    if (m->nslot > 0) {
        rd_printf(b, "static const int ks%d[] = {", j);
        for (int l = 0; l < m->nslot; l++)
            rd_printf(b, "%s%d", l ? ", " : "", m->slot[l]);
        rd_printf(b, "};\n");
    }
}

/* The step that calls kernel j's function with its buffers and scalars. */
static void emit_kernel_step(rctx *c, const kernel_texts *t, int j)
{
    sb *b = c->b;
    const local_map *m = &t->maps[j];
    rd_describe(c, j);
    char bufs[32] = "NULL", slots[32] = "NULL";
    if (m->nbuf > 0)
        rd_frag(bufs, sizeof bufs, "kb%d", j);
    if (m->nslot > 0)
        rd_frag(slots, sizeof slots, "ks%d", j);
    rd_printf(b, "    {kernel%d, %s, %s, %d, %d, 0},\n", t->rep[j], bufs, slots, m->nbuf, m->nslot);
}

/* The step of eager call kernel j, with a comment of what it computes. */
static void emit_call_step(rctx *c, int j)
{
    const kir_plan *p = c->p;
    sb *b = c->b;
    const kir_call *call = &p->calls[p->k[j].call];
    const lt_gnode *n = &p->g->nodes[call->node];
    rd_printf(b, "    /* kernel %d: %s(", j, lt_op_name((lt_op)n->op));
    for (int a = 0; a < call->nin; a++) {
        if (call->in[a].scalar)
            rd_printf(b, "%sscalar", a ? ", " : "");
        else
            rd_printf(b, "%sB[%d]", a ? ", " : "", call->in[a].buf);
    }
    rd_printf(b, ") -> ");
    for (int o = 0; o < call->nout; o++)
        rd_printf(b, "%sB[%d]", o ? ", " : "", call->out[o]);
    if (call->acc_buf >= 0) /* fuse_gemm.c */
        rd_printf(b, " accumulating onto B[%d] (alpha %s)", call->acc_buf,
                  call->alpha_slot >= 0 ? (call->alpha_negated ? "-S" : "S") : "baked");
    rd_printf(b, ", eager kernel */\n");
    rd_printf(b, "    {NULL, NULL, NULL, 0, 0, %d},\n", p->k[j].call);
}

/* The table of steps and the entry point that runs it. A kernel with no
 * element to compute has no step. */
static void emit_entry(rctx *c, const kernel_texts *t)
{
    const kir_plan *p = c->p;
    sb *b = c->b;
    rd_printf(b, "%s", run_steps_fn);
    for (int j = 0; j < p->nk; j++)
        if (t->rep[j] >= 0)
            emit_call_tables(b, t, j);
    int steps = 0;
    for (int j = 0; j < p->nk; j++) {
        if (t->rep[j] < 0 && p->k[j].kind != KK_CALL) {
            rd_printf(b, "/* kernel %d: no element to compute */\n", j);
            continue;
        }
        if (steps++ == 0)
            rd_printf(b, "\nstatic const lt_step lt_steps[] = {\n");
        if (t->rep[j] >= 0)
            emit_kernel_step(c, t, j);
        else
            emit_call_step(c, j);
    }
    if (steps > 0)
        rd_printf(b, "};\n");
    rd_printf(b, "\nint lt_program_entry(void *const *B, const double *S, const lt_rt *rt)\n{\n");
    if (steps > 0)
        rd_printf(b, "    return lt_run_steps(lt_steps, %d, B, S, rt);\n}\n", steps);
    else /* C has no empty array: nothing to run */
        rd_printf(b, "    (void)B, (void)S, (void)rt, (void)lt_run_steps;\n    return 0;\n}\n");
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
            per_element += (double)rd_loops_work(k, in->rv, in->nrv) * (double)(in->body_end - i);
        else if (in->scope < 0)
            per_element += 1;
    }
    return (double)rd_loops_work(k, k->loop, k->nloop) * per_element;
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
    rd_current_map = &t->maps[j];
    if (c->k->kind == KK_POINTWISE)
        rd_emit_pointwise(c);
    else
        rd_emit_row(c);
    rd_current_map = NULL;
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
            rd_printf(c->b, "/* defined in the other units */\n");
        any = true;
        rd_printf(c->b, "%s void kernel%d" KERNEL_PARAMS ";\n", KERNEL_LINKAGE, j);
    }
    if (any)
        rd_printf(c->b, "\n");
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
        rd_printf(b, "/*\n * Generated by %s: unit %d of %d.\n */\n", KIR_VERSION, u + 1, n);
    if (n > 1)
        rd_printf(b, "/* unit %d of %d (%s)%s */\n", u + 1, n, tier_names[tier], u == n - 1 ? ", with the entry point" : "");
    rd_printf(b, "%s", prelude);
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
    rd_fragment_truncated = false;
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
    if (oom || c.failed || rd_fragment_truncated) {
        free(b.s);
        lt_error(oom ? LT_ERR_MEMORY : LT_ERR_STATE, "cpu compiler: could not render the generated C");
        return NULL;
    }
    *nunits = n;
    *len = b.n;
    *nfunctions = functions;
    return b.s;
}

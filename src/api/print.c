/*
 * print.c - lt_format and lt_print: tensors as text, exactly like str() of
 * a torch 1.13 tensor with the default print options (precision 4,
 * threshold 1000, edgeitems 3, linewidth 80).
 *
 * The rules, following torch/_tensor_str.py:
 *  - One formatter (width and mode) for the whole tensor, computed over the
 *    elements that are shown. Floating values use "int mode" ("1.", "-0.")
 *    when every nonzero finite value is an integer, scientific mode
 *    ("1.0000e-05") when max/min > 1000 or max > 1e8 (or, outside int mode,
 *    min < 1e-4), and "%.4f" otherwise; every element is right-aligned to
 *    the widest one. bf16/f16 print like their f32 values.
 *  - Above 1000 elements the tensor is summarized: every dim longer than 6
 *    shows its first and last 3 entries around "..." (" ..." inside a row).
 *  - Rows wrap at 80 columns; dims > 1 are separated by ",\n" plus one blank
 *    line per extra dim, indented under the opening brackets.
 *  - Suffixes: ", dtype=torch.<name>" unless f32, i64 or bool; empty
 *    tensors print "[]" with ", size=(...)" (unless 1-D) and the dtype
 *    unless f32; a tensor not on the cpu gets ", device='<dev>'". A suffix
 *    that would pass column 80 goes on its own line.
 *
 * Values are read in place through the tensor's strides; nothing is copied
 * and the tensor is never modified. A lazy tensor is synced first (the
 * barrier runs) and printed with its device suffix, like torch's
 * "device='lazy:0'".
 */
#include "api/api.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define PRINT_PRECISION 4
#define PRINT_THRESHOLD 1000
#define PRINT_EDGEITEMS 3
#define PRINT_LINEWIDTH 80
#define PRINT_PREFIX "tensor("
#define PRINT_INDENT ((int)sizeof PRINT_PREFIX - 1)

/* ---- output sink: a bounded buffer (snprintf semantics) or a FILE ------- */

typedef struct sink {
    char *buf;         /* NULL when counting only or writing to file */
    size_t cap;
    FILE *file;        /* lt_print: written straight through */
    size_t len;        /* full length produced so far */
    size_t line_start; /* position just after the last '\n' */
    bool io_error;
} sink;

static void put_n(sink *s, const char *str, size_t n)
{
    if (s->file) {
        if (n > 0 && fwrite(str, 1, n, s->file) != n)
            s->io_error = true;
    } else if (s->buf && s->len + 1 < s->cap) {
        size_t room = s->cap - 1 - s->len;
        memcpy(s->buf + s->len, str, n < room ? n : room);
    }
    for (size_t k = 0; k < n; k++)
        if (str[k] == '\n')
            s->line_start = s->len + k + 1;
    s->len += n;
}

static void put(sink *s, const char *str) { put_n(s, str, strlen(str)); }

static void put_spaces(sink *s, int n)
{
    static const char spaces[] = "                                ";
    while (n > 0) {
        int k = n < (int)sizeof spaces - 1 ? n : (int)sizeof spaces - 1;
        put_n(s, spaces, (size_t)k);
        n -= k;
    }
}

/* Writes the terminating NUL of a bounded buffer. */
static void sink_finish(sink *s)
{
    if (s->buf && s->cap > 0)
        s->buf[s->len < s->cap ? s->len : s->cap - 1] = '\0';
}

/* ---- the tensor being printed ------------------------------------------- */

typedef struct printer {
    const lt_tensor *t; /* a CPU tensor with the values */
    const char *base; /* element 0 */
    size_t esize;
    bool floating;
    bool summarize;
    /* the formatter (torch's _Formatter) */
    bool int_mode;
    bool sci_mode;
    int width;
    /* formatter statistics of the shown nonzero finite values */
    int64_t nonzero_finite;
    double abs_min, abs_max;
} printer;

/* Element at offset off (elements from element 0) of a floating tensor. */
static double read_float(const printer *p, int64_t off)
{
    const char *e = p->base + off * (int64_t)p->esize;
    switch ((lt_dtype)p->t->dtype) {
    case LT_F32: return LT_LOAD_f32(e);
    case LT_F64: return LT_LOAD_f64(e);
    case LT_BF16: return LT_LOAD_bf16(e);
    default: return LT_LOAD_f16(e);
    }
}

/* Element at offset off of an integer or bool tensor, exactly. */
static int64_t read_int(const printer *p, int64_t off)
{
    const char *e = p->base + off * (int64_t)p->esize;
    switch ((lt_dtype)p->t->dtype) {
    case LT_I64: return LT_LOAD_i64(e);
    case LT_I32: return LT_LOAD_i32(e);
    case LT_U8: return LT_LOAD_u8(e);
    default: return LT_LOAD_b8(e);
    }
}

/* Is index i of a dim of size `size` shown? (Summaries keep the edges.) */
static bool shown(const printer *p, int64_t size, int64_t i)
{
    return !p->summarize || size <= 2 * PRINT_EDGEITEMS || i < PRINT_EDGEITEMS ||
           i >= size - PRINT_EDGEITEMS;
}

/* Calls fn on the offset of every shown element, in row-major order. */
typedef void (*visit_fn)(printer *p, int64_t off);
static void visit_shown(printer *p, int d, int64_t off, visit_fn fn)
{
    if (d == p->t->ndim) {
        fn(p, off);
        return;
    }
    int64_t size = p->t->shape[d];
    for (int64_t i = 0; i < size; i++) {
        if (!shown(p, size, i)) {
            i = size - PRINT_EDGEITEMS - 1; /* jump to the trailing edge */
            continue;
        }
        visit_shown(p, d + 1, off + i * p->t->strides[d], fn);
    }
}

/* ---- number formatting -------------------------------------------------- */

#define NUMBUF 64 /* enough: fixed notation is only used below 1e8 */

/* Python's format of a float with a fixed or exponent spec, but never
 * with a sign on nan (Python prints "nan" for every NaN). */
static void format_double(char *out, const char *spec, double v)
{
    if (isnan(v))
        snprintf(out, NUMBUF, "nan");
    else
        snprintf(out, NUMBUF, spec, PRINT_PRECISION, v);
}

/* The text of one floating value under the formatter, unpadded. */
static void format_float_value(const printer *p, double v, char *out)
{
    if (p->sci_mode) {
        format_double(out, "%.*e", v);
    } else if (p->int_mode && isfinite(v)) {
        /* "%.0f" then a decimal point marks the value as floating */
        snprintf(out, NUMBUF, "%.0f.", v);
    } else {
        format_double(out, "%.*f", v);
    }
}

/* The text of element `off`, unpadded. */
static void format_element(const printer *p, int64_t off, char *out)
{
    if (p->floating) {
        format_float_value(p, read_float(p, off), out);
    } else if (p->t->dtype == LT_BOOL) {
        snprintf(out, NUMBUF, "%s", read_int(p, off) ? "True" : "False");
    } else {
        snprintf(out, NUMBUF, "%lld", (long long)read_int(p, off));
    }
}

/* ---- the formatter: mode and width over the shown elements -------------- */

static void scan_float(printer *p, int64_t off)
{
    double v = read_float(p, off);
    if (!isfinite(v) || v == 0.0)
        return;
    double a = fabs(v);
    if (p->nonzero_finite == 0 || a < p->abs_min)
        p->abs_min = a;
    if (p->nonzero_finite == 0 || a > p->abs_max)
        p->abs_max = a;
    if (v != ceil(v))
        p->int_mode = false;
    p->nonzero_finite++;
}

/* Width of a nonzero finite float (int mode counts the trailing '.'). */
static void widen_float(printer *p, int64_t off)
{
    double v = read_float(p, off);
    if (!isfinite(v) || v == 0.0)
        return;
    char text[NUMBUF];
    format_float_value(p, v, text);
    int w = (int)strlen(text);
    if (w > p->width)
        p->width = w;
}

static void widen_any(printer *p, int64_t off)
{
    char text[NUMBUF];
    format_element(p, off, text);
    int w = (int)strlen(text);
    if (w > p->width)
        p->width = w;
}

static void build_formatter(printer *p)
{
    p->int_mode = true;
    p->sci_mode = false;
    p->width = 1;
    if (!p->floating) {
        visit_shown(p, 0, 0, widen_any);
        return;
    }
    visit_shown(p, 0, 0, scan_float);
    if (p->nonzero_finite == 0)
        return; /* only zeros and non-finite values: width 1, int mode */
    bool wide_range = p->abs_max / p->abs_min > 1000.0 || p->abs_max > 1.0e8;
    p->sci_mode = p->int_mode ? wide_range : wide_range || p->abs_min < 1.0e-4;
    visit_shown(p, 0, 0, widen_float);
}

/* ---- layout --------------------------------------------------------------- */

/* Element `off`, right-aligned to the formatter's width. */
static void put_element(sink *s, const printer *p, int64_t off)
{
    char text[NUMBUF];
    format_element(p, off, text);
    put_spaces(s, p->width - (int)strlen(text));
    put(s, text);
}

/* The last dim: elements joined by ", ", wrapped at the line width. */
static void put_vector(sink *s, const printer *p, int d, int64_t off, int indent)
{
    int64_t size = p->t->shape[d], stride = p->t->strides[d];
    int64_t per_line = (PRINT_LINEWIDTH - indent) / (p->width + 2);
    if (per_line < 1)
        per_line = 1;
    bool summary = p->summarize && size > 2 * PRINT_EDGEITEMS;
    put(s, "[");
    int64_t item = 0; /* items so far, the " ..." marker included */
    for (int64_t i = 0; i < size; i++, item++) {
        if (item > 0) {
            if (item % per_line == 0) {
                put(s, ",\n");
                put_spaces(s, indent + 1);
            } else {
                put(s, ", ");
            }
        }
        if (summary && i == PRINT_EDGEITEMS) {
            put(s, " ...");
            i = size - PRINT_EDGEITEMS - 1;
            continue;
        }
        put_element(s, p, off + i * stride);
    }
    put(s, "]");
}

/* Dims d.. of the tensor at offset off; indent is the column of '['. */
static void put_dims(sink *s, const printer *p, int d, int64_t off, int indent)
{
    int ndim = p->t->ndim;
    if (d == ndim) {
        put_element(s, p, off); /* 0-d tensor */
        return;
    }
    if (d == ndim - 1) {
        put_vector(s, p, d, off, indent);
        return;
    }
    int64_t size = p->t->shape[d], stride = p->t->strides[d];
    bool summary = p->summarize && size > 2 * PRINT_EDGEITEMS;
    put(s, "[");
    for (int64_t i = 0; i < size; i++) {
        if (i > 0) {
            put(s, ",");
            for (int k = 0; k < ndim - d - 1; k++)
                put(s, "\n");
            put_spaces(s, indent + 1);
        }
        if (summary && i == PRINT_EDGEITEMS) {
            put(s, "...");
            i = size - PRINT_EDGEITEMS - 1;
            continue;
        }
        put_dims(s, p, d + 1, off + i * stride, indent + 1);
    }
    put(s, "]");
}

/* torch's dtype names. */
static const char *torch_dtype_name(lt_dtype dt)
{
    static const char *const names[LT_NUM_DTYPES] = {
        "torch.float32", "torch.float64", "torch.int32", "torch.int64",
        "torch.uint8", "torch.bool", "torch.bfloat16", "torch.float16"};
    return names[dt];
}

/* Appends ", suffix" or, past the line width, ",\n<indent>suffix". */
static void put_suffix(sink *s, const char *suffix)
{
    size_t len = strlen(suffix);
    /* torch measures the last line as its length + 2 */
    size_t last_line = s->len - s->line_start + 2;
    if (last_line + len + 2 > PRINT_LINEWIDTH) {
        put(s, ",\n");
        put_spaces(s, PRINT_INDENT);
    } else {
        put(s, ", ");
    }
    put(s, suffix);
}

static void put_suffixes(sink *s, const lt_tensor *t)
{
    char text[160];
    lt_dtype dt = (lt_dtype)t->dtype;
    if (t->device.kind != LT_DEVICE_CPU) {
        char dev[32];
        snprintf(text, sizeof text, "device='%s'", lt_device_str(t->device, dev, sizeof dev));
        put_suffix(s, text);
    }
    bool empty = lt_shape_numel(t->shape, t->ndim) == 0;
    if (empty && t->ndim != 1) {
        /* Python's str(tuple): "(0, 3)" */
        size_t used = (size_t)snprintf(text, sizeof text, "size=(");
        for (int d = 0; d < t->ndim; d++)
            used += (size_t)snprintf(text + used, sizeof text - used, d ? ", %lld" : "%lld",
                                     (long long)t->shape[d]);
        snprintf(text + used, sizeof text - used, ")");
        put_suffix(s, text);
    }
    bool default_dtype = empty ? dt == LT_F32 : (dt == LT_F32 || dt == LT_I64 || dt == LT_BOOL);
    if (!default_dtype) {
        snprintf(text, sizeof text, "dtype=%s", torch_dtype_name(dt));
        put_suffix(s, text);
    }
}

/* Writes the whole text of t into s; the values come from `data`, a CPU
 * tensor holding t's current values (t itself on the cpu). */
static void format_into(sink *s, const lt_tensor *t, const lt_tensor *data)
{
    put(s, PRINT_PREFIX);
    int64_t numel = lt_shape_numel(t->shape, t->ndim);
    if (numel == 0) {
        put(s, "[]");
    } else {
        printer p = {0};
        p.t = data;
        p.base = lt_tensor_ptr(data);
        p.esize = lt_dtype_size((lt_dtype)data->dtype);
        p.floating = lt_dtype_is_floating((lt_dtype)data->dtype);
        p.summarize = numel > PRINT_THRESHOLD;
        build_formatter(&p);
        put_dims(s, &p, 0, 0, PRINT_INDENT);
    }
    put_suffixes(s, t);
    put(s, ")");
}

int lt_format(lt_tensor *t, char *buf, size_t cap)
{
    if (lt_check_tensor("format", t, 0) != LT_OK)
        return -1;
    if (!buf && cap > 0)
        return lt_error(LT_ERR_NULL, "format: buf is NULL but cap is %zu", cap), -1;
    lt_tensor *data = lt_readable("format", t); /* lazy tensors: runs the barrier */
    if (!data)
        return -1;
    sink s = {.buf = buf, .cap = cap};
    format_into(&s, t, data);
    lt_tensor_unref(data);
    sink_finish(&s);
    if (s.len > INT_MAX)
        return lt_error(LT_ERR_MEMORY, "format: the text of %zu bytes is too long", s.len), -1;
    return (int)s.len;
}

lt_status lt_print(lt_tensor *t)
{
    lt_tensor *data = lt_readable("print", t);
    if (!data)
        return lt_last_status();
    sink s = {.file = stdout};
    format_into(&s, t, data);
    lt_tensor_unref(data);
    if (fputc('\n', stdout) == EOF || s.io_error)
        return lt_error(LT_ERR_IO, "print: writing to stdout failed");
    return LT_OK;
}

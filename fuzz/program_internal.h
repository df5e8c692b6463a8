/*
 * program_internal.h - what fuzz_program's op implementations
 * (program_ops.c) share with its decoding helpers (program_decode.c).
 */
#ifndef LT_FUZZ_PROGRAM_INTERNAL_H
#define LT_FUZZ_PROGRAM_INTERNAL_H

#include "fuzz_common.h"
#include "program.h"

#include "core/core.h" /* half-precision conversions */

/* The trace (FUZZ_PROGRAM_TRACE=1): say() appends to the current step's
 * line of C, say_end() prints it with the step's outcome. */
void say(prog_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void say_end(prog_run *r);

lt_dtype decode_dtype(prog_run *r);
const char *dtype_c(lt_dtype dt);
int64_t decode_size(prog_run *r);
int decode_shape(prog_run *r, int64_t *dims);
/* A dim in [-1, ndim]: -1 counts from the end, ndim is out of range. */
int decode_dim(prog_run *r, int ndim);
/* An index along a dim of `size`: in [-1, size] (F_BAD_INDEX: in range). */
int64_t decode_index(prog_run *r, int64_t size);
double decode_scalar(prog_run *r);
/* An extreme size/index/offset (INT64_MAX, INT64_MIN, 2^62, 2^40, ...). */
int64_t decode_hostile(prog_run *r);
double decode_element(prog_run *r, lt_dtype dt);
/* v, or 0 when F_CAST is skipped and v does not fit integer dtype dt. */
double castable(prog_run *r, double v, lt_dtype dt);
void store_element(void *p, lt_dtype dt, double v);

/* A slot holding a tensor (from the next byte on), or -1 if none does. */
int pick_src(prog_run *r);
int pick_dst(prog_run *r);
void finish(prog_run *r, lt_tensor *t, const char *what, int dst, int family, bool view);
void finish_inplace(prog_run *r, lt_tensor *t, const char *what, int dst);
bool has_zero_stride(lt_tensor *t);
/* With F_INF_EXTREMUM skipped: true (and res.skipped set) when a max/min
 * reduction of x is to be left out because x holds an infinity; on lazy,
 * the cpu run's decision for this step. */
bool skip_extremum(prog_run *r, lt_tensor *x);

/* With F_CAST skipped, a floating tensor about to be converted to an
 * integer dtype made finite and in range first; a new reference. */
lt_tensor *cast_source(prog_run *r, lt_tensor *t, lt_dtype to);

/* Steps in program_views.c. */
void op_narrow(prog_run *r);
void op_select(prog_run *r);
void op_permute(prog_run *r);
void op_transpose(prog_run *r);
void op_reshape(prog_run *r);
void op_expand(prog_run *r);
void op_squeeze(prog_run *r);
void op_diagonal(prog_run *r);
void op_slice(prog_run *r);
void op_inplace(prog_run *r);
void op_inplace_scalar(prog_run *r);

#endif

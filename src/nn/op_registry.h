/*
 * op_registry.h - the rows of the op registry (op_table.c) as
 * op_registry.c reads them.
 *
 * A row names a public function and spells its arguments as a signature of
 * space-separated "kind:name[=default]" tokens, with one character per kind:
 *
 *   t tensor   o optional tensor   T tensor list   l int64   i int (a dim)
 *   d double   b bool   D dims (ints)   S shape (int64s)   P two int64s
 *   y dtype    v device   s string   m module   z optimizer
 *
 * e.g. "t:input D:dim=None b:keepdim=false". The kinds, in order, choose the
 * caller: the one function that knows the C prototype those kinds stand
 * for, shared by every op of that prototype.
 */
#ifndef LT_OP_REGISTRY_H
#define LT_OP_REGISTRY_H

#include "lazytensor.h"

/* Any function pointer; a caller casts it back to the real prototype. */
typedef void (*op_fn)(void);

/* Argument values as the C functions take them (dims narrowed to int). */
typedef struct op_arg {
    lt_tensor *t;
    lt_tensor *const *ts;
    const int64_t *ints;
    int64_t i;
    int n;
    double d;
    bool b;
    int dims[LT_MAX_DIMS];
    lt_dtype dtype;
    lt_device device;
    const char *s;
    lt_module *module;
    lt_optimizer *optimizer;
} op_arg;

/* Runs fn on a: writes its results to out (at most max_out) and returns the
 * count, -1 on error (lt_op_call's contract). */
typedef int (*op_caller)(op_fn fn, const op_arg *a, lt_arg *out, int max_out);

typedef struct op_row {
    const char *name;
    const char *signature;
    lt_result_kind result;
    op_fn fn;
    const char *doc;
} op_row;

/* The table and its length (op_table.c). */
extern const op_row op_rows[];
extern const int op_row_count;

/* The caller for a signature's kind characters ("tDb", "" for none) and a result kind,
 * or NULL when the table has none (op_table.c). */
op_caller op_caller_for(const char *kinds, lt_result_kind result);

#endif

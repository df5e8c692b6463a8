/*
 * op_registry.c - the API's calls by name (lt_op_*): the rows of
 * op_table.c parsed once into lt_op_desc, argument checks, defaults and
 * the call through the row's caller (op_callers.c).
 */
#include "nn/op_registry.h"

#include "core/core.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A parsed row: the public info, the caller, and the fixed list lengths
 * (2 for a 'P' argument, else 0: any length). */
typedef struct {
    lt_op_desc info;
    op_caller call;
    op_fn fn;
    signed char fixed_len[LT_OP_MAX_ARGS];
    char text[160]; /* the argument names and defaults point in here */
} op_entry;

static op_entry *entries;
static pthread_once_t parse_once = PTHREAD_ONCE_INIT;

static const struct {
    char code;
    lt_arg_kind kind;
    const char *name;
} kind_codes[] = {
    {'t', LT_ARG_TENSOR, "tensor"}, {'o', LT_ARG_TENSOR_OPT, "optional tensor"}, {'T', LT_ARG_TENSORS, "tensors"},
    {'l', LT_ARG_INT, "int"},       {'i', LT_ARG_DIM, "dim"},                     {'d', LT_ARG_DOUBLE, "double"},
    {'b', LT_ARG_BOOL, "bool"},     {'D', LT_ARG_DIMS, "dims"},                   {'S', LT_ARG_SHAPE, "shape"},
    {'P', LT_ARG_SHAPE, NULL},      {'y', LT_ARG_DTYPE, "dtype"},                 {'v', LT_ARG_DEVICE, "device"},
    {'s', LT_ARG_STRING, "string"}, {'m', LT_ARG_MODULE, "module"},               {'z', LT_ARG_OPTIMIZER, "optimizer"},
};
#define NUM_CODES (sizeof kind_codes / sizeof kind_codes[0])

const char *lt_arg_kind_name(lt_arg_kind kind)
{
    for (size_t i = 0; i < NUM_CODES; i++)
        if (kind_codes[i].kind == kind && kind_codes[i].name)
            return kind_codes[i].name;
    return "invalid";
}

/* A broken row is a defect of this file's table, not a user error. */
static void bad_row(const op_row *row, const char *why)
{
    fprintf(stderr, "lazytensor: op registry row '%s' (\"%s\"): %s\n", row->name, row->signature, why);
    abort();
}

/* One "k:name[=default]" token at *p (NUL-terminated in place); returns
 * the kind character. */
static char parse_token(char **p, const char **name, const char **dflt)
{
    char *tok = *p, *end = tok + strcspn(tok, " ");
    *p = *end ? end + 1 : end;
    *end = '\0';
    char *eq = strchr(tok, '=');
    *dflt = eq ? eq + 1 : NULL;
    if (eq)
        *eq = '\0';
    *name = tok + 2;
    return tok[1] == ':' ? tok[0] : '\0';
}

static void parse_row(const op_row *row, op_entry *e)
{
    lt_op_desc *info = &e->info;
    char kinds[LT_OP_MAX_ARGS + 1] = {0};
    if (strlen(row->signature) >= sizeof e->text)
        bad_row(row, "signature too long");
    strcpy(e->text, row->signature);
    *info = (lt_op_desc){.name = row->name, .doc = row->doc, .result = row->result};
    for (char *p = e->text; *p; info->nargs++) {
        if (info->nargs == LT_OP_MAX_ARGS)
            bad_row(row, "too many arguments");
        int a = info->nargs;
        char code = parse_token(&p, &info->arg_names[a], &info->defaults[a]);
        size_t c = 0;
        while (c < NUM_CODES && kind_codes[c].code != code)
            c++;
        if (c == NUM_CODES)
            bad_row(row, "unknown argument kind");
        info->args[a] = kind_codes[c].kind;
        e->fixed_len[a] = code == 'P' ? 2 : 0;
        kinds[a] = code;
    }
    e->fn = row->fn;
    if (!(e->call = op_caller_for(kinds, row->result)))
        bad_row(row, "no caller for these kinds and this result");
}

static void parse_rows(void)
{
    entries = calloc((size_t)op_row_count, sizeof *entries);
    if (!entries) {
        fprintf(stderr, "lazytensor: no memory for the op registry\n");
        abort();
    }
    for (int i = 0; i < op_row_count; i++)
        parse_row(&op_rows[i], &entries[i]);
}

static op_entry *all_entries(void)
{
    pthread_once(&parse_once, parse_rows);
    return entries;
}

int lt_op_count(void) { return op_row_count; }

const lt_op_desc *lt_op_at(int i)
{
    if (i < 0 || i >= op_row_count) {
        lt_error(LT_ERR_INDEX, "lt_op_at: index %d is out of range [0, %d)", i, op_row_count);
        return NULL;
    }
    return &all_entries()[i].info;
}

const lt_op_desc *lt_op_find(const char *name)
{
    if (!name) {
        lt_error(LT_ERR_NULL, "lt_op_find: name is NULL");
        return NULL;
    }
    op_entry *e = all_entries();
    for (int i = 0; i < op_row_count; i++)
        if (!strcmp(e[i].info.name, name))
            return &e[i].info;
    lt_error(LT_ERR_ARGUMENT, "lt_op_find: no op is named '%s'", name);
    return NULL;
}

/* The entry of a descriptor from this registry, NULL for any other pointer
 * (the descriptor is an entry's first member: O(1), by address). */
static const op_entry *entry_of(const lt_op_desc *op)
{
    uintptr_t p = (uintptr_t)op, base = (uintptr_t)all_entries();
    if (p < base || p >= base + (uintptr_t)op_row_count * sizeof(op_entry) || (p - base) % sizeof(op_entry))
        return NULL;
    return &entries[(p - base) / sizeof(op_entry)];
}

/* ---- defaults ------------------------------------------------------------- */

static lt_status parse_number(const lt_op_desc *op, int i, const char *text, bool integer, lt_arg *out)
{
    char *end;
    errno = 0;
    if (integer)
        out->i = strtoll(text, &end, 10);
    else
        out->d = strtod(text, &end);
    if (*end || end == text || errno)
        return lt_error(LT_ERR_ARGUMENT, "%s: default '%s' of %s is not a number", op->name, text, op->arg_names[i]);
    return LT_OK;
}

static lt_status parse_dtype(const lt_op_desc *op, int i, const char *text, lt_arg *out)
{
    for (int d = 0; d < LT_NUM_DTYPES; d++) {
        if (!strcmp(text, lt_dtype_name((lt_dtype)d))) {
            out->dtype = (lt_dtype)d;
            return LT_OK;
        }
    }
    return lt_error(LT_ERR_ARGUMENT, "%s: default '%s' of %s is not a dtype", op->name, text, op->arg_names[i]);
}

lt_status lt_op_default(const lt_op_desc *op, int i, lt_arg *out)
{
    if (!op || !out)
        return lt_error(LT_ERR_NULL, "lt_op_default: %s is NULL", op ? "out" : "op");
    if (i < 0 || i >= op->nargs)
        return lt_error(LT_ERR_ARGUMENT, "lt_op_default: %s has %d arguments, got index %d", op->name, op->nargs, i);
    const char *text = op->defaults[i];
    if (!text)
        return lt_error(LT_ERR_ARGUMENT, "lt_op_default: argument %s of %s is required", op->arg_names[i], op->name);
    *out = (lt_arg){.kind = op->args[i]};
    if (!strcmp(text, "None")) /* a NULL tensor or an empty list */
        return LT_OK;
    switch (op->args[i]) {
    case LT_ARG_BOOL: out->b = !strcmp(text, "true"); return LT_OK;
    case LT_ARG_INT:
    case LT_ARG_DIM: return parse_number(op, i, text, true, out);
    case LT_ARG_DOUBLE: return parse_number(op, i, text, false, out);
    case LT_ARG_DTYPE: return parse_dtype(op, i, text, out);
    case LT_ARG_DEVICE:
        out->device = lt_device_parse(text);
        return out->device.kind == LT_DEVICE_INVALID ? lt_last_status() : LT_OK;
    case LT_ARG_STRING: out->s = text; return LT_OK;
    default: return lt_error(LT_ERR_ARGUMENT, "%s: default '%s' of %s", op->name, text, op->arg_names[i]);
    }
}

/* ---- the call -------------------------------------------------------------- */

static lt_status bad_arg(const lt_op_desc *op, int i, const char *what)
{
    return lt_error(LT_ERR_ARGUMENT, "%s: argument %d (%s, %s) %s", op->name, i, op->arg_names[i],
                    lt_arg_kind_name(op->args[i]), what);
}

static bool is_int(int64_t v) { return v >= INT_MIN && v <= INT_MAX; }

/* Checks list value v (dims, shape or tensors) and copies it into a. */
static lt_status prepare_list(const lt_op_desc *op, int i, int fixed_len, const lt_arg *v, op_arg *a)
{
    bool tensors = v->kind == LT_ARG_TENSORS;
    if (v->n < 0 || (!tensors && v->n > LT_MAX_DIMS))
        return bad_arg(op, i, tensors ? "has a negative length" : "is longer than LT_MAX_DIMS or negative");
    if (fixed_len && v->n != fixed_len)
        return bad_arg(op, i, "must hold exactly 2 values");
    if (v->n > 0 && !(tensors ? (const void *)v->tensors : (const void *)v->ints))
        return bad_arg(op, i, "has a NULL array");
    a->n = v->n;
    a->ts = v->tensors;
    a->ints = v->ints;
    for (int k = 0; v->kind == LT_ARG_DIMS && k < v->n; k++) {
        if (!is_int(v->ints[k]))
            return bad_arg(op, i, "holds a value out of int range");
        a->dims[k] = (int)v->ints[k];
    }
    return LT_OK;
}

static lt_status prepare(const op_entry *e, int i, const lt_arg *v, op_arg *a)
{
    const lt_op_desc *op = &e->info;
    if (v->kind != op->args[i])
        return lt_error(LT_ERR_ARGUMENT, "%s: argument %d (%s) must be a %s, got a %s", op->name, i, op->arg_names[i],
                        lt_arg_kind_name(op->args[i]), lt_arg_kind_name(v->kind));
    bool null_handle = (v->kind == LT_ARG_TENSOR && !v->t) || (v->kind == LT_ARG_STRING && !v->s) ||
                       (v->kind == LT_ARG_MODULE && !v->module) || (v->kind == LT_ARG_OPTIMIZER && !v->optimizer);
    if (null_handle)
        return lt_error(LT_ERR_NULL, "%s: argument %d (%s) is NULL", op->name, i, op->arg_names[i]);
    switch (v->kind) {
    case LT_ARG_TENSOR:
    case LT_ARG_TENSOR_OPT: a->t = v->t; return LT_OK;
    case LT_ARG_DIM:
        if (!is_int(v->i))
            return bad_arg(op, i, "is out of int range");
        a->i = v->i;
        return LT_OK;
    case LT_ARG_INT: a->i = v->i; return LT_OK;
    case LT_ARG_DOUBLE: a->d = v->d; return LT_OK;
    case LT_ARG_BOOL: a->b = v->b; return LT_OK;
    case LT_ARG_DTYPE: a->dtype = v->dtype; return LT_OK;
    case LT_ARG_DEVICE: a->device = v->device; return LT_OK;
    case LT_ARG_STRING: a->s = v->s; return LT_OK;
    case LT_ARG_MODULE: a->module = v->module; return LT_OK;
    case LT_ARG_OPTIMIZER: a->optimizer = v->optimizer; return LT_OK;
    default: return prepare_list(op, i, e->fixed_len[i], v, a);
    }
}

/* How many results a row writes (TENSORS: any number, checked by the call). */
static int results_of(lt_result_kind r)
{
    switch (r) {
    case LT_RESULT_PAIR: return 2;
    case LT_RESULT_NONE:
    case LT_RESULT_STATUS:
    case LT_RESULT_TENSORS: return 0;
    default: return 1;
    }
}

int lt_op_call(const lt_op_desc *op, const lt_arg *args, int nargs, lt_arg *out, int max_out)
{
    if (!op || (!args && nargs > 0) || (!out && max_out > 0))
        return lt_error(LT_ERR_NULL, "lt_op_call: %s is NULL", !op ? "op" : !out ? "out" : "args"), -1;
    const op_entry *e = entry_of(op);
    if (!e)
        return lt_error(LT_ERR_ARGUMENT, "lt_op_call: op is not a row of the registry"), -1;
    if (nargs != op->nargs)
        return lt_error(LT_ERR_ARGUMENT, "%s: expected %d arguments, got %d", op->name, op->nargs, nargs), -1;
    int needed = results_of(op->result);
    if (max_out < needed)
        return lt_error(LT_ERR_ARGUMENT, "%s: out has room for %d results, needs %d", op->name, max_out, needed), -1;
    op_arg a[LT_OP_MAX_ARGS];
    for (int i = 0; i < nargs; i++)
        if (prepare(e, i, &args[i], &a[i]) != LT_OK)
            return -1;
    return e->call(e->fn, a, out, max_out);
}

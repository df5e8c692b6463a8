/* explain.h - why a graph compiled, and what failed at run time (explain.c):
 * hooks for the barrier. */
#ifndef LT_LAZY_EXPLAIN_H
#define LT_LAZY_EXPLAIN_H

#include "backend/backend.h"
#include "lazy/lazy.h"

/* After the barrier compiled g (key, backend be) on a cache miss: finds
 * and records the cause (counter, lt_lazy_last_compile_cause, LT_DEBUG) and
 * keeps a copy of g to explain later compiles. */
void lt_explain_compiled(const lt_graph *g, const uint64_t key[2], const lt_backend *be);
/* The barrier found its program cached: no cause. */
void lt_explain_cache_hit(void);
/* A step barrier ended (counted as "Steps"). */
void lt_explain_step_done(void);
/* Steps whose compiles are expected (lt_metrics_report's problems). */
int lt_explain_warmup_steps(void);
/* Sets the error of a program that failed at run time in node n (NULL:
 * unknown) with the kernel's message `error`: the public function that
 * recorded n and the op it was lowered to, e.g. "lt_cross_entropy: failed
 * when run (lowered to gather: index 5 ...)", or the kernel's message
 * alone when n's function is its op's own (lt_gather); then the barrier
 * (`step` or not) and the call that forced it (`why`). */
void lt_explain_failure(lt_status status, const lt_gnode *n, const char *error, bool step, const char *why);
/* LT_DEBUG is set (read once). */
bool lt_lazy_debug(void);
/* The public function that recorded op node n: "lt_cross_entropy",
 * "lt_mul (backward)" (snprintf semantics). */
int lt_gnode_public_name(const lt_gnode *n, char *buf, size_t cap);

#endif

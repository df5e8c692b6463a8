/*
 * optim.c - optimizers: SGD (momentum, Nesterov, L2 weight decay) and
 * Adam / AdamW, with PyTorch's update formulas.
 *
 *   SGD:   g = grad + wd * p
 *          buf = momentum * buf + g              (if momentum != 0)
 *          g = nesterov ? g + momentum * buf : buf
 *          p -= lr * g
 *   Adam:  t += 1
 *          g = grad + wd * p                     (Adam, L2)
 *          p *= 1 - lr * wd                      (AdamW, decoupled)
 *          m = b1 * m + (1 - b1) * g
 *          v = b2 * v + (1 - b2) * g * g
 *          p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
 *
 * State is created with the optimizer (zeros), so a checkpoint can be
 * loaded into a fresh optimizer before its first step (lt_optim_state lists
 * it). The SGD momentum buffer therefore starts at zero; its first update
 * momentum * 0 + g equals PyTorch's buf = g exactly. Adam keeps PyTorch's
 * per-parameter step count as a 0-d f64 tensor ("state.<i>.step") and
 * computes the bias corrections from it with tensor ops, so the count
 * travels with checkpoints and, on the lazy device, every step traces the
 * same graph (the count is device data, not a constant). State names follow
 * PyTorch's state_dict: "state.<i>.momentum_buffer", "state.<i>.exp_avg",
 * "state.<i>.exp_avg_sq", "state.<i>.step" (<i> the parameter's index).
 *
 * Parameters are handles: when the model moves (lt_module_to moves each
 * tensor in place), the optimizer updates the moved tensors, and its own
 * state moves to each parameter's device before the next update there.
 *
 * Updates run inside a scope and a no-grad region with in-place ops, so no
 * temporary outlives lt_optim_step, no tape is recorded, and on the lazy
 * device the update traces into the step's graph as substitutions.
 */
#include "lazy/lazy.h"
#include "nn/nn_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef enum optim_kind { OPTIM_SGD, OPTIM_ADAM } optim_kind;

/* Adam state per parameter, in this order. */
enum { ADAM_EXP_AVG, ADAM_EXP_AVG_SQ, ADAM_STEP, ADAM_NSTATE };

struct lt_optimizer {
    optim_kind kind;
    int n;
    lt_tensor **params;     /* retained */
    double lr, weight_decay;
    double momentum;        /* SGD */
    bool nesterov;          /* SGD */
    double beta1, beta2, eps;
    bool decoupled;         /* AdamW */
    int per_param;          /* state tensors per parameter */
    lt_tensor **state;      /* n * per_param, retained */
    char **state_names;
};

/* ---- construction ---------------------------------------------------------- */

static lt_status bad_value(const char *op, const char *what, double v, const char *expected)
{
    return lt_error(LT_ERR_ARGUMENT, "%s: %s is %g, expected %s", op, what, v, expected);
}

static lt_status check_params(const char *op, lt_tensor *const *params, int n)
{
    if (!params)
        return lt_error(LT_ERR_NULL, "%s: params is NULL", op);
    if (n < 1)
        return lt_error(LT_ERR_ARGUMENT, "%s: n is %d, expected at least one parameter", op, n);
    for (int i = 0; i < n; i++) {
        if (lt_check_tensor(op, params[i], i) != LT_OK)
            return lt_last_status();
        if (!lt_dtype_is_floating(lt_tensor_dtype(params[i])))
            return lt_error(LT_ERR_DTYPE, "%s: parameter %d has dtype %s, expected a floating dtype", op, i,
                            lt_dtype_name(lt_tensor_dtype(params[i])));
        for (int j = 0; j < i; j++)
            if (params[j] == params[i])
                return lt_error(LT_ERR_ARGUMENT, "%s: parameters %d and %d are the same tensor", op, j, i);
    }
    return LT_OK;
}

void lt_optim_free(lt_optimizer *o)
{
    if (!o)
        return;
    int nstate = o->n * o->per_param;
    for (int i = 0; i < nstate && o->state; i++) {
        lt_release(o->state[i]);
        if (o->state_names)
            free(o->state_names[i]);
    }
    for (int i = 0; i < o->n && o->params; i++)
        lt_release(o->params[i]);
    free(o->state);
    free(o->state_names);
    free(o->params);
    free(o);
}

/* A zero state tensor like p (or a 0-d f64 zero when scalar) and its name. */
static lt_status add_state(lt_optimizer *o, int index, int param, const char *what, bool scalar)
{
    lt_tensor *p = o->params[param];
    lt_scope_begin();
    lt_tensor *t = scalar ? lt_zeros(NULL, 0, LT_F64, lt_tensor_device(p)) : lt_zeros_like(p);
    o->state[index] = lt_retain(t);
    lt_scope_end();
    if (!o->state[index])
        return lt_last_status();
    int len = snprintf(NULL, 0, "state.%d.%s", param, what) + 1;
    o->state_names[index] = malloc((size_t)len);
    if (!o->state_names[index])
        return lt_error(LT_ERR_MEMORY, "optimizer: out of memory");
    snprintf(o->state_names[index], (size_t)len, "state.%d.%s", param, what);
    return LT_OK;
}

/* Allocates the optimizer shell: retained parameters and state arrays. */
static lt_optimizer *optim_new(optim_kind kind, lt_tensor *const *params, int n, int per_param)
{
    lt_optimizer *o = calloc(1, sizeof *o);
    if (!o) {
        lt_error(LT_ERR_MEMORY, "optimizer: out of memory");
        return NULL;
    }
    o->kind = kind;
    o->per_param = per_param;
    o->params = calloc((size_t)n, sizeof *o->params);
    o->state = calloc((size_t)(n * per_param) + 1, sizeof *o->state);
    o->state_names = calloc((size_t)(n * per_param) + 1, sizeof *o->state_names);
    if (!o->params || !o->state || !o->state_names) {
        lt_optim_free(o);
        lt_error(LT_ERR_MEMORY, "optimizer: out of memory");
        return NULL;
    }
    o->n = n;
    for (int i = 0; i < n; i++)
        o->params[i] = lt_retain(params[i]);
    return o;
}

lt_optimizer *lt_optim_sgd(lt_tensor *const *params, int n, double lr, double momentum, double weight_decay,
                           bool nesterov)
{
    const char *op = "optim_sgd";
    lt_status s = check_params(op, params, n);
    if (s == LT_OK && !(lr >= 0.0 && isfinite(lr)))
        s = bad_value(op, "lr", lr, "a finite value >= 0");
    if (s == LT_OK && !(momentum >= 0.0 && isfinite(momentum)))
        s = bad_value(op, "momentum", momentum, "a finite value >= 0");
    if (s == LT_OK && !(weight_decay >= 0.0 && isfinite(weight_decay)))
        s = bad_value(op, "weight_decay", weight_decay, "a finite value >= 0");
    if (s == LT_OK && nesterov && momentum == 0.0)
        s = bad_value(op, "momentum", momentum, "> 0 with nesterov");
    if (s != LT_OK)
        return NULL;
    lt_optimizer *o = optim_new(OPTIM_SGD, params, n, momentum != 0.0 ? 1 : 0);
    if (!o)
        return NULL;
    o->lr = lr;
    o->momentum = momentum;
    o->weight_decay = weight_decay;
    o->nesterov = nesterov;
    for (int i = 0; i < n && s == LT_OK && o->per_param; i++)
        s = add_state(o, i, i, "momentum_buffer", false);
    if (s != LT_OK) {
        lt_optim_free(o);
        return NULL;
    }
    return o;
}

lt_optimizer *lt_optim_adam(lt_tensor *const *params, int n, double lr, double beta1, double beta2, double eps,
                            double weight_decay, bool decoupled)
{
    const char *op = decoupled ? "optim_adamw" : "optim_adam";
    lt_status s = check_params(op, params, n);
    if (s == LT_OK && !(lr >= 0.0 && isfinite(lr)))
        s = bad_value(op, "lr", lr, "a finite value >= 0");
    if (s == LT_OK && !(beta1 >= 0.0 && beta1 < 1.0))
        s = bad_value(op, "beta1", beta1, "a value in [0, 1)");
    if (s == LT_OK && !(beta2 >= 0.0 && beta2 < 1.0))
        s = bad_value(op, "beta2", beta2, "a value in [0, 1)");
    if (s == LT_OK && !(eps >= 0.0 && isfinite(eps)))
        s = bad_value(op, "eps", eps, "a finite value >= 0");
    if (s == LT_OK && !(weight_decay >= 0.0 && isfinite(weight_decay)))
        s = bad_value(op, "weight_decay", weight_decay, "a finite value >= 0");
    if (s != LT_OK)
        return NULL;
    lt_optimizer *o = optim_new(OPTIM_ADAM, params, n, ADAM_NSTATE);
    if (!o)
        return NULL;
    o->lr = lr;
    o->beta1 = beta1;
    o->beta2 = beta2;
    o->eps = eps;
    o->weight_decay = weight_decay;
    o->decoupled = decoupled;
    for (int i = 0; i < n && s == LT_OK; i++) {
        int at = i * ADAM_NSTATE;
        s = add_state(o, at + ADAM_EXP_AVG, i, "exp_avg", false);
        if (s == LT_OK)
            s = add_state(o, at + ADAM_EXP_AVG_SQ, i, "exp_avg_sq", false);
        if (s == LT_OK)
            s = add_state(o, at + ADAM_STEP, i, "step", true);
    }
    if (s != LT_OK) {
        lt_optim_free(o);
        return NULL;
    }
    return o;
}

/* ---- updates ------------------------------------------------------------------- */

/* The update functions return false if an op failed (the error is set).
 * In-place ops return their destination, NULL on failure. */

static bool sgd_update(const lt_optimizer *o, int i, lt_tensor *p, lt_tensor *grad)
{
    lt_tensor *g = o->weight_decay != 0.0 ? lt_add_scaled(grad, p, o->weight_decay) : grad;
    if (o->momentum != 0.0) {
        lt_tensor *buf = o->state[i];
        if (!lt_add_(lt_mul_scalar_(buf, o->momentum), g))
            return false;
        g = o->nesterov ? lt_add_scaled(g, buf, o->momentum) : buf;
    }
    return lt_add_scaled_(p, g, -o->lr) != NULL;
}

static bool adam_update(const lt_optimizer *o, int i, lt_tensor *p, lt_tensor *grad)
{
    lt_tensor *const *st = &o->state[i * ADAM_NSTATE];
    lt_tensor *m = st[ADAM_EXP_AVG], *v = st[ADAM_EXP_AVG_SQ], *step = st[ADAM_STEP];
    lt_tensor *g = grad;
    if (o->weight_decay != 0.0 && o->decoupled && !lt_mul_scalar_(p, 1.0 - o->lr * o->weight_decay))
        return false;
    if (o->weight_decay != 0.0 && !o->decoupled)
        g = lt_add_scaled(grad, p, o->weight_decay);
    bool ok = lt_add_scalar_(step, 1.0) != NULL;
    ok = ok && lt_add_scaled_(lt_mul_scalar_(m, o->beta1), g, 1.0 - o->beta1);
    ok = ok && lt_add_scaled_(lt_mul_scalar_(v, o->beta2), lt_mul(g, g), 1.0 - o->beta2);
    if (!ok)
        return false;
    /* bias corrections 1 - beta^t as 0-d f64 tensors computed from the step */
    lt_tensor *bc1 = lt_rsub_scalar(lt_rpow_scalar(step, o->beta1), 1.0);
    lt_tensor *bc2 = lt_rsub_scalar(lt_rpow_scalar(step, o->beta2), 1.0);
    lt_tensor *step_size = lt_mul_scalar(lt_reciprocal(bc1), o->lr);
    lt_tensor *denom = lt_add_scalar(lt_div(lt_sqrt(v), lt_sqrt(bc2)), o->eps);
    return lt_sub_(p, lt_mul(lt_div(m, denom), step_size)) != NULL;
}

static lt_status check_optimizer(const char *op, const lt_optimizer *o)
{
    if (!o)
        return lt_error(LT_ERR_NULL, "%s: optimizer is NULL", op);
    return LT_OK;
}

/* Parameters keep their handles when their model moves (lt_module_to):
 * the state made with the optimizer follows its parameter to the device
 * before the first update there, in place, so lt_optim_state keeps
 * listing the same handles. */
static lt_status follow_param(const lt_optimizer *o, int i)
{
    lt_device dev = lt_tensor_device(o->params[i]);
    for (int k = 0; k < o->per_param; k++) {
        lt_tensor *st = o->state[i * o->per_param + k];
        if (!lt_device_equal(lt_tensor_device(st), dev) && !lt_to_(st, dev))
            return lt_last_status();
    }
    return LT_OK;
}

lt_status lt_optim_step(lt_optimizer *o)
{
    if (check_optimizer("optim_step", o) != LT_OK)
        return lt_last_status();
    lt_status status = LT_OK;
    lt_no_grad_scope_begin();
    lt_origin caller = lt_origin_enter("optim_step"); /* the update's ops are named by it */
    for (int i = 0; i < o->n && status == LT_OK; i++) {
        lt_tensor *p = o->params[i];
        lt_tensor *grad = lt_grad(p); /* NULL: no gradient, the parameter is skipped */
        if (!grad)
            continue;
        if (follow_param(o, i) != LT_OK)
            status = lt_last_status();
        else if (!(o->kind == OPTIM_SGD ? sgd_update(o, i, p, grad) : adam_update(o, i, p, grad)))
            status = lt_last_status();
    }
    lt_origin_restore(caller);
    lt_no_grad_scope_end();
    return status;
}

lt_status lt_optim_zero_grad(lt_optimizer *o)
{
    if (check_optimizer("optim_zero_grad", o) != LT_OK)
        return lt_last_status();
    for (int i = 0; i < o->n; i++)
        if (lt_zero_grad(o->params[i]) != LT_OK)
            return lt_last_status();
    return LT_OK;
}

double lt_optim_lr(const lt_optimizer *o)
{
    if (check_optimizer("optim_lr", o) != LT_OK)
        return NAN;
    return o->lr;
}

lt_status lt_optim_set_lr(lt_optimizer *o, double lr)
{
    if (check_optimizer("optim_set_lr", o) != LT_OK)
        return lt_last_status();
    if (!(lr >= 0.0 && isfinite(lr)))
        return bad_value("optim_set_lr", "lr", lr, "a finite value >= 0");
    o->lr = lr;
    return LT_OK;
}

int lt_optim_state(lt_optimizer *o, lt_tensor **tensors, const char **names, int max)
{
    const char *op = "optim_state";
    if (check_optimizer(op, o) != LT_OK || lt_nn_check_list_args(op, tensors, names, max) != LT_OK)
        return -1;
    int total = o->n * o->per_param;
    for (int i = 0; i < total && i < max; i++) {
        if (tensors)
            tensors[i] = o->state[i];
        if (names)
            names[i] = o->state_names[i];
    }
    return total;
}

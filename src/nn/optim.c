/*
 * optim.c - optimizers: SGD (momentum, Nesterov, L2 weight decay),
 * Adam / AdamW, RMSprop, Adagrad, Adadelta and Adamax, with PyTorch's update
 * formulas (those of the last four: g = grad + wd * p, then as
 * torch.optim 1.13; see each *_update function).
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

typedef enum optim_kind { OPTIM_SGD, OPTIM_ADAM, OPTIM_RMSPROP, OPTIM_ADAGRAD, OPTIM_ADADELTA, OPTIM_ADAMAX } optim_kind;

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
    double alpha;           /* RMSprop smoothing, Adadelta rho */
    bool centered;          /* RMSprop */
    double lr_decay;        /* Adagrad */
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

/* A state tensor like p filled with init (or a 0-d f64 zero when scalar)
 * and its name. */
static lt_status add_state_init(lt_optimizer *o, int index, int param, const char *what, bool scalar, double init)
{
    lt_tensor *p = o->params[param];
    lt_scope_begin();
    lt_tensor *t = scalar         ? lt_zeros(NULL, 0, LT_F64, lt_tensor_device(p))
                   : init == 0.0 ? lt_zeros_like(p)
                                 : lt_full_like(p, init);
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

/* A zero state tensor like p (or a 0-d f64 zero when scalar) and its name. */
static lt_status add_state(lt_optimizer *o, int index, int param, const char *what, bool scalar)
{
    return add_state_init(o, index, param, what, scalar, 0.0);
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

/* RMSprop, Adagrad, Adadelta and Adamax keep, per parameter, "step" (0-d
 * f64) then the tensors named in `names` (each filled with init). */
static lt_optimizer *optim_with_state(optim_kind kind, lt_tensor *const *params, int n, double lr,
                                      double weight_decay, const char *const *names, int k, double init)
{
    lt_optimizer *o = optim_new(kind, params, n, k + 1);
    if (!o)
        return NULL;
    o->lr = lr;
    o->weight_decay = weight_decay;
    lt_status s = LT_OK;
    for (int i = 0; i < n && s == LT_OK; i++) {
        s = add_state(o, i * (k + 1), i, "step", true);
        for (int j = 0; j < k && s == LT_OK; j++)
            s = add_state_init(o, i * (k + 1) + 1 + j, i, names[j], false, init);
    }
    if (s != LT_OK) {
        lt_optim_free(o);
        return NULL;
    }
    return o;
}

/* v is finite and >= 0 (and < 1 when below_one). */
static lt_status check_hyper(lt_status s, const char *op, const char *what, double v, bool below_one)
{
    if (s != LT_OK)
        return s;
    if (v >= 0.0 && isfinite(v) && (!below_one || v < 1.0))
        return LT_OK;
    return bad_value(op, what, v, below_one ? "a value in [0, 1)" : "a finite value >= 0");
}

lt_optimizer *lt_optim_rmsprop(lt_tensor *const *params, int n, double lr, double alpha, double eps,
                               double weight_decay, double momentum, bool centered)
{
    const char *op = "optim_rmsprop";
    lt_status s = check_params(op, params, n);
    s = check_hyper(s, op, "lr", lr, false);
    s = check_hyper(s, op, "alpha", alpha, false);
    s = check_hyper(s, op, "eps", eps, false);
    s = check_hyper(s, op, "weight_decay", weight_decay, false);
    s = check_hyper(s, op, "momentum", momentum, false);
    if (s != LT_OK)
        return NULL;
    const char *names[3] = {"square_avg", NULL, NULL};
    int k = 1;
    if (momentum != 0.0)
        names[k++] = "momentum_buffer";
    if (centered)
        names[k++] = "grad_avg";
    lt_optimizer *o = optim_with_state(OPTIM_RMSPROP, params, n, lr, weight_decay, names, k, 0.0);
    if (o) {
        o->alpha = alpha;
        o->eps = eps;
        o->momentum = momentum;
        o->centered = centered;
    }
    return o;
}

lt_optimizer *lt_optim_adagrad(lt_tensor *const *params, int n, double lr, double lr_decay, double weight_decay,
                               double initial_accumulator_value, double eps)
{
    const char *op = "optim_adagrad";
    lt_status s = check_params(op, params, n);
    s = check_hyper(s, op, "lr", lr, false);
    s = check_hyper(s, op, "lr_decay", lr_decay, false);
    s = check_hyper(s, op, "weight_decay", weight_decay, false);
    s = check_hyper(s, op, "initial_accumulator_value", initial_accumulator_value, false);
    s = check_hyper(s, op, "eps", eps, false);
    if (s != LT_OK)
        return NULL;
    const char *names[1] = {"sum"};
    lt_optimizer *o = optim_with_state(OPTIM_ADAGRAD, params, n, lr, weight_decay, names, 1,
                                       initial_accumulator_value);
    if (o) {
        o->lr_decay = lr_decay;
        o->eps = eps;
    }
    return o;
}

lt_optimizer *lt_optim_adadelta(lt_tensor *const *params, int n, double lr, double rho, double eps,
                                double weight_decay)
{
    const char *op = "optim_adadelta";
    lt_status s = check_params(op, params, n);
    s = check_hyper(s, op, "lr", lr, false);
    if (s == LT_OK && !(rho >= 0.0 && rho <= 1.0))
        s = bad_value(op, "rho", rho, "a value in [0, 1]");
    s = check_hyper(s, op, "eps", eps, false);
    s = check_hyper(s, op, "weight_decay", weight_decay, false);
    if (s != LT_OK)
        return NULL;
    const char *names[2] = {"square_avg", "acc_delta"};
    lt_optimizer *o = optim_with_state(OPTIM_ADADELTA, params, n, lr, weight_decay, names, 2, 0.0);
    if (o) {
        o->alpha = rho;
        o->eps = eps;
    }
    return o;
}

lt_optimizer *lt_optim_adamax(lt_tensor *const *params, int n, double lr, double beta1, double beta2, double eps,
                              double weight_decay)
{
    const char *op = "optim_adamax";
    lt_status s = check_params(op, params, n);
    s = check_hyper(s, op, "lr", lr, false);
    s = check_hyper(s, op, "beta1", beta1, true);
    s = check_hyper(s, op, "beta2", beta2, true);
    s = check_hyper(s, op, "eps", eps, false);
    s = check_hyper(s, op, "weight_decay", weight_decay, false);
    if (s != LT_OK)
        return NULL;
    const char *names[2] = {"exp_avg", "exp_inf"};
    lt_optimizer *o = optim_with_state(OPTIM_ADAMAX, params, n, lr, weight_decay, names, 2, 0.0);
    if (o) {
        o->beta1 = beta1;
        o->beta2 = beta2;
        o->eps = eps;
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

/* grad + weight_decay * p (L2, coupled: RMSprop, Adagrad, Adadelta, Adamax) */
static lt_tensor *decayed(const lt_optimizer *o, lt_tensor *p, lt_tensor *grad)
{
    return o->weight_decay != 0.0 ? lt_add_scaled(grad, p, o->weight_decay) : grad;
}

/* avg = b * avg + (1 - b) * x, in place */
static bool ema_(lt_tensor *avg, lt_tensor *x, double b)
{
    return lt_add_scaled_(lt_mul_scalar_(avg, b), x, 1.0 - b) != NULL;
}

/* state: step, square_avg, [momentum_buffer], [grad_avg] */
static bool rmsprop_update(const lt_optimizer *o, int i, lt_tensor *p, lt_tensor *grad)
{
    lt_tensor *const *st = &o->state[i * o->per_param];
    lt_tensor *square_avg = st[1], *buf = o->momentum != 0.0 ? st[2] : NULL;
    lt_tensor *grad_avg = o->centered ? st[o->per_param - 1] : NULL;
    lt_tensor *g = decayed(o, p, grad);
    if (!lt_add_scalar_(st[0], 1.0) || !ema_(square_avg, lt_mul(g, g), o->alpha))
        return false;
    lt_tensor *var = square_avg;
    if (grad_avg) {
        if (!ema_(grad_avg, g, o->alpha))
            return false;
        var = lt_sub(square_avg, lt_mul(grad_avg, grad_avg));
    }
    lt_tensor *avg = lt_add_scalar(lt_sqrt(var), o->eps);
    if (!buf)
        return lt_add_scaled_(p, lt_div(g, avg), -o->lr) != NULL;
    if (!lt_add_(lt_mul_scalar_(buf, o->momentum), lt_div(g, avg)))
        return false;
    return lt_add_scaled_(p, buf, -o->lr) != NULL;
}

/* state: step, sum. lr / (1 + (step - 1) lr_decay) from the step tensor. */
static bool adagrad_update(const lt_optimizer *o, int i, lt_tensor *p, lt_tensor *grad)
{
    lt_tensor *const *st = &o->state[i * o->per_param];
    lt_tensor *step = st[0], *sum = st[1];
    lt_tensor *g = decayed(o, p, grad);
    if (!lt_add_scalar_(step, 1.0) || !lt_add_(sum, lt_mul(g, g)))
        return false;
    lt_tensor *ratio = lt_div(g, lt_add_scalar(lt_sqrt(sum), o->eps));
    if (o->lr_decay == 0.0)
        return lt_add_scaled_(p, ratio, -o->lr) != NULL;
    lt_tensor *decay = lt_add_scalar(lt_mul_scalar(lt_sub_scalar(step, 1.0), o->lr_decay), 1.0);
    lt_tensor *clr = lt_mul_scalar(lt_reciprocal(decay), o->lr);
    return lt_sub_(p, lt_mul(ratio, clr)) != NULL;
}

/* state: step, square_avg, acc_delta (o->alpha is rho) */
static bool adadelta_update(const lt_optimizer *o, int i, lt_tensor *p, lt_tensor *grad)
{
    lt_tensor *const *st = &o->state[i * o->per_param];
    lt_tensor *square_avg = st[1], *acc_delta = st[2];
    lt_tensor *g = decayed(o, p, grad);
    if (!lt_add_scalar_(st[0], 1.0) || !ema_(square_avg, lt_mul(g, g), o->alpha))
        return false;
    lt_tensor *std = lt_sqrt(lt_add_scalar(square_avg, o->eps));
    lt_tensor *delta = lt_mul(lt_div(lt_sqrt(lt_add_scalar(acc_delta, o->eps)), std), g);
    if (!ema_(acc_delta, lt_mul(delta, delta), o->alpha))
        return false;
    return lt_add_scaled_(p, delta, -o->lr) != NULL;
}

/* state: step, exp_avg, exp_inf */
static bool adamax_update(const lt_optimizer *o, int i, lt_tensor *p, lt_tensor *grad)
{
    lt_tensor *const *st = &o->state[i * o->per_param];
    lt_tensor *step = st[0], *exp_avg = st[1], *exp_inf = st[2];
    lt_tensor *g = decayed(o, p, grad);
    bool ok = lt_add_scalar_(step, 1.0) && ema_(exp_avg, g, o->beta1);
    ok = ok && lt_maximum_(lt_mul_scalar_(exp_inf, o->beta2), lt_add_scalar(lt_abs(g), o->eps));
    if (!ok)
        return false;
    lt_tensor *bias_correction = lt_rsub_scalar(lt_rpow_scalar(step, o->beta1), 1.0);
    lt_tensor *clr = lt_mul_scalar(lt_reciprocal(bias_correction), o->lr);
    return lt_sub_(p, lt_mul(lt_div(exp_avg, exp_inf), clr)) != NULL;
}

/* One parameter's update by the optimizer's kind. */
static bool update(const lt_optimizer *o, int i, lt_tensor *p, lt_tensor *grad)
{
    switch (o->kind) {
    case OPTIM_SGD:
        return sgd_update(o, i, p, grad);
    case OPTIM_ADAM:
        return adam_update(o, i, p, grad);
    case OPTIM_RMSPROP:
        return rmsprop_update(o, i, p, grad);
    case OPTIM_ADAGRAD:
        return adagrad_update(o, i, p, grad);
    case OPTIM_ADADELTA:
        return adadelta_update(o, i, p, grad);
    case OPTIM_ADAMAX:
        return adamax_update(o, i, p, grad);
    }
    return false;
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
        else if (!update(o, i, p, grad))
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

/*
 * layers_ext.c - the layers of torch.nn built on the functional ops:
 * GroupNorm, InstanceNorm and the parameter-free activations (LeakyReLU,
 * ELU, SELU, CELU, Softplus, Softsign, Hardswish, Hardsigmoid, Mish,
 * LogSigmoid, ReLU6, Hardtanh, Sigmoid). Parameters are f32 and start as
 * torch's: weight 1, bias 0.
 */
#include "nn/nn_internal.h"

#include <math.h>

static lt_module *bad_arg(const char *kind, const char *what, double value, const char *expected)
{
    lt_error(LT_ERR_ARGUMENT, "nn.%s: %s is %g, expected %s", kind, what, value, expected);
    return NULL;
}

static lt_module *finish(lt_module *m, lt_status status)
{
    if (status == LT_OK)
        return m;
    lt_module_free(m);
    return NULL;
}

/* weight (1) and bias (0), f32 [channels] on dev. */
static lt_status add_affine(lt_module *m, int64_t channels, lt_device dev)
{
    lt_status s = LT_OK;
    for (int i = 0; i < 2 && s == LT_OK; i++) {
        lt_scope_begin();
        lt_tensor *t = lt_full(&channels, 1, i == 0 ? 1.0 : 0.0, LT_F32, lt_device_cpu());
        if (t && dev.kind != LT_DEVICE_CPU)
            t = lt_to(t, dev);
        t = t ? lt_retain(t) : NULL;
        lt_scope_end();
        s = t ? lt_nn_module_add_tensor(m, i == 0 ? "weight" : "bias", t, false) : lt_last_status();
    }
    return s;
}

static lt_tensor *param(lt_module *m, int i) { return m->ntensors > i ? m->tensors[i].t : NULL; }

/* ---- group norm and instance norm ----------------------------------------------- */

/* cfg: groups, channels; fcfg: eps */
static lt_tensor *group_norm_forward(lt_module *m, lt_tensor *x)
{
    if (lt_nn_check_same_device(m, x) != LT_OK)
        return NULL;
    if (lt_tensor_ndim(x) < 2 || lt_tensor_size(x, 1) != m->cfg[1]) {
        lt_error(LT_ERR_SHAPE, "nn.group_norm: input has %d dims and %lld channels, expected [N, %lld, ...]",
                 lt_tensor_ndim(x), lt_tensor_ndim(x) >= 2 ? (long long)lt_tensor_size(x, 1) : 0LL,
                 (long long)m->cfg[1]);
        return NULL;
    }
    return lt_group_norm(x, m->cfg[0], param(m, 0), param(m, 1), m->fcfg[0]);
}

lt_module *lt_nn_group_norm(int64_t num_groups, int64_t channels, double eps, bool affine, lt_device dev)
{
    const char *k = "group_norm";
    if (channels < 1)
        return bad_arg(k, "channels", (double)channels, ">= 1");
    if (num_groups < 1 || channels % num_groups != 0)
        return bad_arg(k, "num_groups", (double)num_groups, "a positive divisor of channels");
    if (!(eps >= 0.0 && isfinite(eps)))
        return bad_arg(k, "eps", eps, "a finite value >= 0");
    if (lt_nn_check_device("nn.group_norm", dev) != LT_OK)
        return NULL;
    lt_module *m = lt_nn_module_new(k, group_norm_forward);
    if (!m)
        return NULL;
    m->cfg[0] = num_groups;
    m->cfg[1] = channels;
    m->fcfg[0] = eps;
    return finish(m, affine ? add_affine(m, channels, dev) : LT_OK);
}

/* cfg: channels; fcfg: eps. Statistics of each input (torch's default
 * track_running_stats=False). */
static lt_tensor *instance_norm_forward(lt_module *m, lt_tensor *x)
{
    if (m->ntensors && lt_nn_check_same_device(m, x) != LT_OK)
        return NULL;
    if (lt_tensor_ndim(x) < 3 || lt_tensor_size(x, 1) != m->cfg[0]) {
        lt_error(LT_ERR_SHAPE, "nn.instance_norm: input has %d dims, expected [N, %lld, L, ...]",
                 lt_tensor_ndim(x), (long long)m->cfg[0]);
        return NULL;
    }
    return lt_instance_norm(x, NULL, NULL, param(m, 0), param(m, 1), true, 0.1, m->fcfg[0]);
}

lt_module *lt_nn_instance_norm(int64_t channels, double eps, bool affine, lt_device dev)
{
    const char *k = "instance_norm";
    if (channels < 1)
        return bad_arg(k, "channels", (double)channels, ">= 1");
    if (!(eps >= 0.0 && isfinite(eps)))
        return bad_arg(k, "eps", eps, "a finite value >= 0");
    if (lt_nn_check_device("nn.instance_norm", dev) != LT_OK)
        return NULL;
    lt_module *m = lt_nn_module_new(k, instance_norm_forward);
    if (!m)
        return NULL;
    m->cfg[0] = channels;
    m->fcfg[0] = eps;
    return finish(m, affine ? add_affine(m, channels, dev) : LT_OK);
}

/* ---- activations --------------------------------------------------------------------- */

#define ACT0(name)                                                                              \
    static lt_tensor *name##_forward(lt_module *m, lt_tensor *x) { return (void)m, lt_##name(x); } \
    lt_module *lt_nn_##name(void) { return lt_nn_module_new(#name, name##_forward); }

ACT0(selu)
ACT0(softsign)
ACT0(hardswish)
ACT0(hardsigmoid)
ACT0(mish)
ACT0(logsigmoid)
ACT0(relu6)
ACT0(sigmoid)

static lt_tensor *leaky_relu_forward(lt_module *m, lt_tensor *x) { return lt_leaky_relu(x, m->fcfg[0]); }
static lt_tensor *elu_forward(lt_module *m, lt_tensor *x) { return lt_elu(x, m->fcfg[0]); }
static lt_tensor *celu_forward(lt_module *m, lt_tensor *x) { return lt_celu(x, m->fcfg[0]); }
static lt_tensor *softplus_forward(lt_module *m, lt_tensor *x) { return lt_softplus(x, m->fcfg[0], m->fcfg[1]); }
static lt_tensor *hardtanh_forward(lt_module *m, lt_tensor *x) { return lt_hardtanh(x, m->fcfg[0], m->fcfg[1]); }

/* A module holding up to two scalars; finite values are required. */
static lt_module *act_new(const char *kind, lt_nn_forward_fn fwd, const char *n0, double v0, const char *n1,
                          double v1)
{
    if (!isfinite(v0))
        return bad_arg(kind, n0, v0, "a finite value");
    if (n1 && !isfinite(v1))
        return bad_arg(kind, n1, v1, "a finite value");
    lt_module *m = lt_nn_module_new(kind, fwd);
    if (m) {
        m->fcfg[0] = v0;
        m->fcfg[1] = v1;
    }
    return m;
}

lt_module *lt_nn_leaky_relu(double negative_slope)
{
    return act_new("leaky_relu", leaky_relu_forward, "negative_slope", negative_slope, NULL, 0);
}

lt_module *lt_nn_elu(double alpha) { return act_new("elu", elu_forward, "alpha", alpha, NULL, 0); }

lt_module *lt_nn_celu(double alpha)
{
    if (alpha == 0.0)
        return bad_arg("celu", "alpha", alpha, "a non-zero value");
    return act_new("celu", celu_forward, "alpha", alpha, NULL, 0);
}

lt_module *lt_nn_softplus(double beta, double threshold)
{
    if (beta == 0.0)
        return bad_arg("softplus", "beta", beta, "a non-zero value");
    return act_new("softplus", softplus_forward, "beta", beta, "threshold", threshold);
}

lt_module *lt_nn_hardtanh(double min_val, double max_val)
{
    return act_new("hardtanh", hardtanh_forward, "min_val", min_val, "max_val", max_val);
}

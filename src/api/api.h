/*
 * api.h - the dispatcher behind every public op function.
 *
 * A public function packs its attributes and calls lt_call (or
 * lt_call_inplace). The dispatcher validates the handles, checks that all
 * inputs share one device, runs the op's shape rule, and then runs the op on
 * the inputs' device: the eager kernel on "cpu". Outputs are published to
 * the innermost scope.
 */
#ifndef LT_API_H
#define LT_API_H

#include "eager/eager.h"
#include "lazy/lazy.h"

/*
 * Runs op. Returns output 0 (NULL on error). If the op has more outputs
 * they go to extra[0..nout-2] when extra is not NULL (and are dropped
 * otherwise).
 */
lt_tensor *lt_call(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a, lt_tensor **extra);
/*
 * Runs an elementwise op (or copy/fill) and writes its result into dst:
 * the result must have dst's shape and a dtype castable to dst's. `in`
 * usually starts with dst itself. Returns dst, or NULL on error (dst is
 * then unchanged).
 */
lt_tensor *lt_call_inplace(lt_op op, lt_tensor *dst, lt_tensor *const *in, int nin,
                           const lt_attrs *a);
/* A zero-dim f64 "weak" tensor holding a C scalar on dev, for the
 * tensor-with-scalar forms. The caller owns it (lt_tensor_unref). */
lt_tensor *lt_wrap_scalar(double v, lt_device dev);

/*
 * Autograd hooks (set by the autograd layer, which sits above this one):
 * `record` runs after every successful op whose inputs carry autograd
 * state, to record a tape node; `inplace_guard` runs before every in-place
 * op and refuses (returning an error status) updates that would corrupt
 * the tape.
 */
typedef struct lt_autograd_hooks {
    lt_status (*record)(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a, lt_tensor **out);
    lt_status (*inplace_guard)(const char *name, lt_tensor *dst, lt_tensor *const *in, int nin);
} lt_autograd_hooks;
void lt_set_autograd_hooks(const lt_autograd_hooks *hooks);

/* A CPU tensor holding t's current values, for reading (t itself for cpu
 * tensors; a synced alias for lazy ones). Caller owns it (lt_tensor_unref). */
lt_tensor *lt_readable(const char *name, lt_tensor *t);

/*
 * The gradient of conv2d's weight from its input x [N, C, H, W] and its
 * output's gradient gy [N, O, Ho, Wo], for a kernel of kernel[0] x kernel[1]
 * and conv2d's stride, padding, dilation (NULL: conv2d's defaults) and
 * groups. Used by autograd; not differentiable itself.
 */
lt_tensor *lt_conv2d_weight_grad(lt_tensor *x, lt_tensor *gy, const int64_t *kernel, const int64_t *stride,
                                 const int64_t *padding, const int64_t *dilation, int64_t groups);
/* The gradient of conv2d's input, of spatial size input_size[0] x
 * input_size[1], from gy and the weight w; same conventions. */
lt_tensor *lt_conv2d_input_grad(lt_tensor *gy, lt_tensor *w, const int64_t *input_size, const int64_t *stride,
                                const int64_t *padding, const int64_t *dilation, int64_t groups);

/* The gradient of cumprod(x) along dim given g, the gradient of its output
 * (x's shape): exact where x has zeros. Used by autograd. */
lt_tensor *lt_cumprod_grad(lt_tensor *x, lt_tensor *g, int dim);
/* Matrix norms from singular values over dims d0, d1 of t (validated):
 * ord 2 the largest, -2 the smallest, 0 their sum (nuclear). name: the
 * public function, for errors. */
lt_tensor *lt_matrix_norm_singular(const char *name, lt_tensor *t, int d0, int d1, double ord, bool keepdim);
/* Shorthands used by the op wrappers. */
lt_tensor *lt_call1(lt_op op, lt_tensor *t, const lt_attrs *a);
lt_tensor *lt_call2(lt_op op, lt_tensor *x, lt_tensor *y, const lt_attrs *a);
/* op(t, scalar) through a wrapped scalar; `reversed` gives op(scalar, t). */
lt_tensor *lt_call_scalar(lt_op op, lt_tensor *t, double s, bool reversed, const lt_attrs *a);
/* dst = op(dst, scalar) in place. */
lt_tensor *lt_call_scalar_inplace(lt_op op, lt_tensor *dst, double s, const lt_attrs *a);

#endif

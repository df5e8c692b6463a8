/*
 * op_table.c - the rows of the op registry: every call of the public API
 * that a binding makes by name, with its signature (op_registry.h).
 * Adding a call of a prototype that op_callers.c knows is one row here.
 */
#include "nn/op_registry.h"

/* Adapters where a C function's types differ from the registry's values. */
static int chunk(lt_tensor *t, int64_t chunks, int dim, lt_tensor **out, int max_out)
{
    return lt_chunk(t, (int)chunks, dim, out, max_out);
}
static void manual_seed(int64_t seed) { lt_manual_seed((uint64_t)seed); }
static double optim_lr(lt_optimizer *o) { return lt_optim_lr(o); }
static int64_t get_num_threads(void) { return lt_get_num_threads(); }
static int64_t live_tensors(void) { return lt_live_tensors(NULL, 0); }
static int64_t tensor_ndim(const lt_tensor *t) { return lt_tensor_ndim(t); }
static int64_t tensor_refcount(const lt_tensor *t) { return lt_tensor_refcount(t); }

/* ---- the rows -------------------------------------------------------------- */

#define FN(f) ((op_fn)(f))
#define ROW(name, sig, doc) {#name, sig, LT_RESULT_TENSOR, FN(lt_##name), doc}
#define SELF_ROW(name, sig, doc) {#name, sig, LT_RESULT_SELF, FN(lt_##name), doc}
#define CALL(result, name, sig, doc) {#name, sig, LT_RESULT_##result, FN(lt_##name), doc}
#define ADAPTED(result, name, sig, doc) {#name, sig, LT_RESULT_##result, FN(name), doc}
#define LAYER(name, sig, doc) CALL(MODULE, nn_##name, sig, doc)
#define UNARY(name, doc) ROW(name, "t:input", doc)
#define REDUCE(name, doc) ROW(name, "t:input D:dim=None b:keepdim=false", doc)
#define FACTORY(name, doc) ROW(name, "S:size y:dtype=f32 v:device=cpu", doc)

const op_row op_rows[] = {
    /* elementwise, one tensor */
    UNARY(neg, "-x"), UNARY(abs, "|x|"), UNARY(exp, "e^x"), UNARY(log, "natural log"),
    UNARY(log1p, "log(1 + x)"), UNARY(expm1, "e^x - 1"), UNARY(sqrt, "square root"),
    UNARY(rsqrt, "1 / sqrt(x)"), UNARY(sin, "sine"), UNARY(cos, "cosine"), UNARY(tanh, "tanh"),
    UNARY(sigmoid, "1 / (1 + e^-x)"), UNARY(relu, "max(x, 0)"), UNARY(gelu, "GELU (erf form)"),
    UNARY(silu, "x * sigmoid(x)"), UNARY(erf, "error function"), UNARY(sign, "-1, 0 or 1"),
    UNARY(floor, "round down"), UNARY(ceil, "round up"), UNARY(round, "round half to even"),
    UNARY(reciprocal, "1 / x"), UNARY(logical_not, "not x (bool)"), UNARY(clone, "a copy"),
    UNARY(contiguous, "x itself if dense, else a dense copy"), UNARY(detach, "x without autograd history"),
    UNARY(nonzero, "indices of nonzero elements, [count, ndim]"), UNARY(squeeze_all, "drops every size-1 dim"),
    SELF_ROW(neg_, "t:input", "negates in place"), SELF_ROW(relu_, "t:input", "relu in place"),
    SELF_ROW(zero_, "t:input", "fills with 0"), SELF_ROW(fill_, "t:input d:value", "fills with value"),
    SELF_ROW(copy_, "t:input t:src", "copies src (broadcast) into input"),
    ROW(clamp, "t:input d:min=-inf d:max=inf", "clamped to [min, max]"),
    SELF_ROW(clamp_, "t:input d:min=-inf d:max=inf", "clamps in place"),
    /* elementwise, two tensors */
    ROW(add_scaled, "t:input t:other d:alpha=1", "input + alpha * other"),
    ROW(sub_scaled, "t:input t:other d:alpha=1", "input - alpha * other"),
    SELF_ROW(add_scaled_, "t:input t:other d:alpha=1", "input += alpha * other"),
    SELF_ROW(sub_scaled_, "t:input t:other d:alpha=1", "input -= alpha * other"),
    ROW(maximum, "t:input t:other", "elementwise max"), ROW(minimum, "t:input t:other", "elementwise min"),
    ROW(logical_and, "t:input t:other", "and (bool)"), ROW(logical_or, "t:input t:other", "or (bool)"),
    ROW(matmul, "t:input t:other", "matrix product (batched, broadcast)"),
    ROW(where, "t:condition t:input t:other", "input where condition, else other"),
    ROW(masked_fill, "t:input t:mask d:value", "value where mask, else input"),
    /* reductions */
    REDUCE(sum, "sum"), REDUCE(mean, "mean"), REDUCE(prod, "product"), REDUCE(amax, "maximum"),
    REDUCE(amin, "minimum"), REDUCE(all, "all true"), REDUCE(any, "any true"), REDUCE(logsumexp, "log sum exp"),
    ROW(var, "t:input D:dim=None l:correction=1 b:keepdim=false", "variance"),
    ROW(std, "t:input D:dim=None l:correction=1 b:keepdim=false", "standard deviation"),
    CALL(PAIR, max_dim, "t:input i:dim b:keepdim=false", "max and its index along dim"),
    CALL(PAIR, min_dim, "t:input i:dim b:keepdim=false", "min and its index along dim"),
    CALL(PAIR, sort, "t:input i:dim=-1 b:descending=false", "sorted values and indices"),
    CALL(PAIR, topk, "t:input l:k i:dim=-1 b:largest=true", "k largest (or smallest)"),
    ROW(argmax, "t:input i:dim b:keepdim=false", "index of the max along dim"),
    ROW(argmin, "t:input i:dim b:keepdim=false", "index of the min along dim"),
    ROW(cumsum, "t:input i:dim", "running sum along dim"),
    ROW(softmax, "t:input i:dim", "softmax along dim"), ROW(log_softmax, "t:input i:dim", "log of softmax"),
    /* views and shapes */
    ROW(view, "t:input S:shape", "a view of another shape (-1: inferred)"),
    ROW(reshape, "t:input S:shape", "a view or a copy of another shape"),
    ROW(expand, "t:input S:shape", "broadcast view (-1 keeps a size)"),
    ROW(permute, "t:input D:dims", "dims reordered"), ROW(transpose, "t:input i:dim0 i:dim1", "two dims swapped"),
    ROW(unsqueeze, "t:input i:dim", "a size-1 dim inserted"), ROW(squeeze, "t:input i:dim", "a size-1 dim dropped"),
    ROW(flatten, "t:input i:start_dim=0 i:end_dim=-1", "dims start..end merged"),
    ROW(narrow, "t:input i:dim l:start l:length", "length elements from start along dim"),
    ROW(select, "t:input i:dim l:index", "one index along dim (the dim dropped)"),
    ROW(diagonal, "t:input l:offset=0 i:dim1=0 i:dim2=1", "a diagonal as a view"),
    CALL(TENSORS, split, "t:input l:split_size i:dim=0", "views of split_size along dim"),
    ADAPTED(TENSORS, chunk, "t:input l:chunks i:dim=0", "chunks views along dim"),
    ROW(cat, "T:tensors i:dim=0", "joined along dim"), ROW(stack, "T:tensors i:dim=0", "joined along a new dim"),
    /* indexing */
    ROW(index_select, "t:input i:dim t:index", "elements at index along dim"),
    ROW(gather, "t:input i:dim t:index", "input[index] along dim"),
    ROW(scatter, "t:input i:dim t:index t:src", "a copy with src written at index along dim"),
    ROW(scatter_add, "t:input i:dim t:index t:src", "a copy with src added at index along dim"),
    ROW(tril, "t:input l:diagonal=0", "lower triangle"), ROW(triu, "t:input l:diagonal=0", "upper triangle"),
    ROW(one_hot, "t:input l:num_classes", "one-hot rows (i64)"),
    ROW(multinomial, "t:input l:num_samples b:replacement=false", "indices drawn by weight"),
    /* nn */
    ROW(cross_entropy, "t:input t:target d:label_smoothing=0", "mean cross entropy of logits"),
    ROW(nll_loss, "t:input t:target", "mean negative log likelihood"),
    ROW(mse_loss, "t:input t:target", "mean squared error"),
    ROW(embedding, "t:weight t:indices", "rows of weight"),
    ROW(conv2d, "t:input t:weight o:bias P:stride P:padding P:dilation l:groups", "2-D convolution"),
    ROW(max_pool2d, "t:input P:kernel_size P:stride P:padding", "2-D max pooling"),
    ROW(avg_pool2d, "t:input P:kernel_size P:stride P:padding b:count_include_pad=true", "2-D average pooling"),
    /* factories */
    FACTORY(empty, "uninitialized"), FACTORY(zeros, "zeros"), FACTORY(ones, "ones"),
    FACTORY(rand, "uniform in [0, 1)"), FACTORY(randn, "standard normal"),
    ROW(full, "S:size d:fill_value y:dtype=f32 v:device=cpu", "filled with fill_value"),
    ROW(randint, "l:low l:high S:size y:dtype=i64 v:device=cpu", "uniform integers in [low, high)"),
    ROW(arange, "d:start d:end d:step=1 y:dtype=f32 v:device=cpu", "start, start + step, ... below end"),
    ROW(linspace, "d:start d:end l:steps y:dtype=f32 v:device=cpu", "steps values from start to end"),
    ROW(eye, "l:n l:m y:dtype=f32 v:device=cpu", "identity matrix [n, m]"),
    /* metadata and autograd */
    CALL(INT, tensor_numel, "t:input", "number of elements"), ADAPTED(INT, tensor_ndim, "t:input", "number of dims"),
    CALL(INT, tensor_offset, "t:input", "storage offset in elements"),
    ADAPTED(INT, tensor_refcount, "t:input", "references to the handle"),
    CALL(BOOL, tensor_is_contiguous, "t:input", "dense in row-major order"),
    CALL(BOOL, tensor_shares_storage, "t:input t:other", "whether both use one storage"),
    CALL(BOOL, requires_grad, "t:input", "whether autograd tracks it"),
    CALL(STATUS, backward, "t:input o:gradient=None", "gradients of input into the leaves' grad"),
    /* layers (lt_module) */
    LAYER(linear, "l:in_features l:out_features b:bias=true v:device=cpu", "y = x W^T + b"),
    LAYER(conv2d,
          "l:in_channels l:out_channels l:kernel_size l:stride=1 l:padding=0 l:groups=1 b:bias=true v:device=cpu",
          "2-D convolution layer"),
    LAYER(layer_norm, "l:normalized_shape d:eps=1e-5 v:device=cpu", "layer normalization over the last dim"),
    LAYER(batch_norm2d, "l:num_features d:eps=1e-5 v:device=cpu", "batch normalization over [N, C, H, W]"),
    LAYER(embedding, "l:num_embeddings l:embedding_dim v:device=cpu", "a table of rows"),
    LAYER(self_attention, "l:dim l:heads b:causal=true v:device=cpu", "multi-head self-attention"),
    LAYER(max_pool2d, "l:kernel_size", "max pooling (stride = kernel)"),
    LAYER(avg_pool2d, "l:kernel_size", "average pooling (stride = kernel)"),
    LAYER(dropout, "d:p=0.5", "dropout in training mode"), LAYER(flatten, "", "all dims after the first merged"),
    LAYER(relu, "", "relu"), LAYER(gelu, "", "gelu"), LAYER(silu, "", "silu"), LAYER(tanh, "", "tanh"),
    CALL(TENSOR, module_forward, "m:module t:input", "the layer applied to input"),
    CALL(NONE, module_train, "m:module b:training=true", "training or evaluation mode"),
    CALL(STATUS, module_to, "m:module v:device", "moves the parameters and buffers in place"),
    /* optimizers and schedules */
    CALL(OPTIMIZER, optim_sgd, "T:params d:lr d:momentum=0 d:weight_decay=0 b:nesterov=false", "SGD"),
    CALL(OPTIMIZER, optim_adam,
         "T:params d:lr=0.001 d:beta1=0.9 d:beta2=0.999 d:eps=1e-8 d:weight_decay=0 b:decoupled=false",
         "Adam, or AdamW when decoupled"),
    CALL(STATUS, optim_step, "z:optimizer", "one update"), CALL(STATUS, optim_zero_grad, "z:optimizer", "clears grads"),
    ADAPTED(DOUBLE, optim_lr, "z:optimizer", "the learning rate"),
    CALL(STATUS, optim_set_lr, "z:optimizer d:lr", "sets the learning rate"),
    CALL(DOUBLE, lr_step_decay, "d:base l:step l:step_size d:gamma=0.1", "base * gamma^(step / step_size)"),
    CALL(DOUBLE, lr_cosine, "d:base l:step l:total_steps d:min_lr=0", "cosine from base to min_lr"),
    CALL(DOUBLE, lr_warmup, "d:after l:step l:warmup_steps", "linear warmup to after"),
    /* process state and the lazy device */
    ADAPTED(NONE, manual_seed, "l:seed", "seeds the generator"),
    CALL(NONE, no_grad_begin, "", "stops recording autograd history"),
    CALL(NONE, no_grad_end, "", "ends the innermost no_grad_begin"),
    CALL(BOOL, grad_enabled, "", "whether autograd records"),
    CALL(STATUS, mark_step, "", "step barrier of the lazy device"),
    CALL(STATUS, barrier, "b:wait=true", "runs the pending lazy work (and waits for it)"),
    CALL(INT, lazy_discard, "", "drops the pending lazy work; the count of tensors dropped"),
    CALL(STATUS, lazy_wait_compiles, "", "waits for background compiles"),
    CALL(STATUS, lazy_set_backend, "s:name", "the lazy backend: tiered, cpu or interp"),
    CALL(STRING, lazy_backend, "", "the lazy backend's name"),
    CALL(INT, metrics_counter, "s:name", "a counter of the metrics"), CALL(NONE, metrics_reset, "", "zeroes them"),
    CALL(INT, live_tensor_count, "", "tensor handles alive"),
    ADAPTED(INT, live_tensors, "", "tensors whose user holds a reference"),
    CALL(NONE, set_num_threads, "i:n=0", "threads of the worker pool (0: the default)"),
    ADAPTED(INT, get_num_threads, "", "threads of the worker pool"),
};

const int op_row_count = (int)(sizeof op_rows / sizeof op_rows[0]);

/*
 * op_table.c - the rows of the op registry: every call of the public API
 * that a binding makes by name, with its signature (op_registry.h).
 * Adding a call of a prototype that op_callers.c knows is one row here.
 */
#include "nn/op_registry.h"

#include "core/core.h"

#include <string.h>

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

/* The losses take torch's reduction= as a string. */
static bool reduction_of(const char *op, const char *name, bool batchmean_ok, lt_loss_reduction *out)
{
    static const struct {
        const char *name;
        lt_loss_reduction value;
    } names[] = {
        {"mean", LT_LOSS_MEAN}, {"sum", LT_LOSS_SUM}, {"none", LT_LOSS_NONE}, {"batchmean", LT_LOSS_BATCHMEAN}};
    for (size_t i = 0; name && i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(name, names[i].name) && (batchmean_ok || names[i].value != LT_LOSS_BATCHMEAN)) {
            *out = names[i].value;
            return true;
        }
    lt_error(LT_ERR_ARGUMENT, "%s: reduction '%s' is not supported, expected 'mean', 'sum' or 'none'%s", op,
             name ? name : "(NULL)", batchmean_ok ? " or 'batchmean'" : "");
    return false;
}

static lt_tensor *l1_loss(lt_tensor *input, lt_tensor *target, const char *reduction)
{
    lt_loss_reduction r;
    return reduction_of("l1_loss", reduction, false, &r) ? lt_l1_loss(input, target, r) : NULL;
}
static lt_tensor *smooth_l1_loss(lt_tensor *input, lt_tensor *target, const char *reduction, double beta)
{
    lt_loss_reduction r;
    return reduction_of("smooth_l1_loss", reduction, false, &r) ? lt_smooth_l1_loss(input, target, r, beta) : NULL;
}
static lt_tensor *huber_loss(lt_tensor *input, lt_tensor *target, const char *reduction, double delta)
{
    lt_loss_reduction r;
    return reduction_of("huber_loss", reduction, false, &r) ? lt_huber_loss(input, target, r, delta) : NULL;
}
static lt_tensor *binary_cross_entropy(lt_tensor *input, lt_tensor *target, lt_tensor *weight, const char *reduction)
{
    lt_loss_reduction r;
    if (!reduction_of("binary_cross_entropy", reduction, false, &r))
        return NULL;
    return lt_binary_cross_entropy(input, target, weight, r);
}
/* torch's argument order: weight, reduction, pos_weight */
static lt_tensor *binary_cross_entropy_with_logits(lt_tensor *input, lt_tensor *target, lt_tensor *weight,
                                                   const char *reduction, lt_tensor *pos_weight)
{
    lt_loss_reduction r;
    if (!reduction_of("binary_cross_entropy_with_logits", reduction, false, &r))
        return NULL;
    return lt_binary_cross_entropy_with_logits(input, target, weight, pos_weight, r);
}
static lt_tensor *kl_div(lt_tensor *input, lt_tensor *target, const char *reduction, bool log_target)
{
    lt_loss_reduction r;
    return reduction_of("kl_div", reduction, true, &r) ? lt_kl_div(input, target, r, log_target) : NULL;
}
static lt_tensor *margin_ranking_loss(lt_tensor *x1, lt_tensor *x2, lt_tensor *y, double margin, const char *reduction)
{
    lt_loss_reduction r;
    if (!reduction_of("margin_ranking_loss", reduction, false, &r))
        return NULL;
    return lt_margin_ranking_loss(x1, x2, y, margin, r);
}
static lt_tensor *cosine_embedding_loss(lt_tensor *x1, lt_tensor *x2, lt_tensor *y, double margin,
                                        const char *reduction)
{
    lt_loss_reduction r;
    if (!reduction_of("cosine_embedding_loss", reduction, false, &r))
        return NULL;
    return lt_cosine_embedding_loss(x1, x2, y, margin, r);
}

/* ---- the rows -------------------------------------------------------------- */

#define FN(f) ((op_fn)(f))
#define ROW(name, sig, doc) {#name, sig, LT_RESULT_TENSOR, FN(lt_##name), doc}
#define SELF_ROW(name, sig, doc) {#name, sig, LT_RESULT_SELF, FN(lt_##name), doc}
#define CALL(result, name, sig, doc) {#name, sig, LT_RESULT_##result, FN(lt_##name), doc}
#define ADAPTED(result, name, sig, doc) {#name, sig, LT_RESULT_##result, FN(name), doc}
#define LOSS(name, sig, doc) ADAPTED(TENSOR, name, sig, doc)
#define LAYER(name, sig, doc) CALL(MODULE, nn_##name, sig, doc)
#define UNARY(name, doc) ROW(name, "t:input", doc)
#define SCALAR(name, doc) ROW(name##_scalar, "t:input d:other", doc)
#define ISCALAR(name, doc) ROW(name##_iscalar, "t:input l:other", doc)
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
    UNARY(tan, "tangent"), UNARY(asin, "arcsine"), UNARY(acos, "arccosine"), UNARY(atan, "arctangent"),
    UNARY(sinh, "hyperbolic sine"), UNARY(cosh, "hyperbolic cosine"), UNARY(asinh, "inverse hyperbolic sine"),
    UNARY(acosh, "inverse hyperbolic cosine"), UNARY(atanh, "inverse hyperbolic tangent"),
    UNARY(log2, "base-2 log"), UNARY(log10, "base-10 log"), UNARY(exp2, "2^x"), UNARY(trunc, "round toward 0"),
    UNARY(frac, "x - trunc(x)"), UNARY(isnan, "x is NaN (bool)"), UNARY(isinf, "x is +-inf (bool)"),
    UNARY(isfinite, "x is finite (bool)"), UNARY(bitwise_not, "~x (integers), not x (bool)"),
    ROW(nan_to_num, "t:input d:nan=0 d:posinf=inf d:neginf=-inf",
        "NaN and infinities replaced (inf: the dtype's finite extreme)"),
    /* activations */
    UNARY(selu, "SELU"), UNARY(softsign, "x / (1 + |x|)"), UNARY(hardswish, "x relu6(x + 3) / 6"),
    UNARY(hardsigmoid, "relu6(x + 3) / 6"), UNARY(mish, "x tanh(softplus(x))"), UNARY(logsigmoid, "log sigmoid(x)"),
    UNARY(gelu_tanh, "GELU (tanh approximation)"), UNARY(relu6, "min(max(x, 0), 6)"),
    ROW(leaky_relu, "t:input d:negative_slope=0.01", "x, or slope x below 0"),
    ROW(elu, "t:input d:alpha=1", "ELU"), ROW(celu, "t:input d:alpha=1", "CELU"),
    ROW(softplus, "t:input d:beta=1 d:threshold=20", "log(1 + e^(beta x)) / beta"),
    ROW(hardtanh, "t:input d:min_val=-1 d:max_val=1", "clamped to [min_val, max_val]"),
    ROW(glu, "t:input i:dim=-1", "first half * sigmoid(second half) along dim"),
    ROW(to_dtype, "t:input y:dtype", "a copy in another dtype"),
    /* elementwise, two tensors */
    ROW(add, "t:input t:other", "input + other"), ROW(sub, "t:input t:other", "input - other"),
    ROW(mul, "t:input t:other", "input * other"), ROW(div, "t:input t:other", "input / other (true division)"),
    ROW(pow, "t:input t:exponent", "input ^ exponent"), ROW(remainder, "t:input t:other", "Python's modulo"),
    ROW(eq, "t:input t:other", "=="), ROW(ne, "t:input t:other", "!="), ROW(lt, "t:input t:other", "<"),
    ROW(le, "t:input t:other", "<="), ROW(gt, "t:input t:other", ">"), ROW(ge, "t:input t:other", ">="),
    ROW(atan2, "t:input t:other", "angle of (other, input)"), ROW(hypot, "t:input t:other", "sqrt(a^2 + b^2)"),
    ROW(copysign, "t:input t:other", "|input| with other's sign"), ROW(xlogy, "t:input t:other", "x log y (0 at x 0)"),
    ROW(logaddexp, "t:input t:other", "log(e^a + e^b)"), ROW(fmod, "t:input t:other", "C's fmod"),
    ROW(floor_divide, "t:input t:other", "floor(a / b)"), ROW(bitwise_and, "t:input t:other", "a & b"),
    ROW(bitwise_or, "t:input t:other", "a | b"), ROW(bitwise_xor, "t:input t:other", "a ^ b"),
    ROW(bitwise_left_shift, "t:input t:other", "a << b"), ROW(bitwise_right_shift, "t:input t:other", "a >> b"),
    /* with a C double (a Python float) and with an int64 (a Python int: integer tensors keep their dtype) */
    SCALAR(add, "input + other"), SCALAR(sub, "input - other"), SCALAR(rsub, "other - input"),
    SCALAR(mul, "input * other"), SCALAR(div, "input / other"), SCALAR(pow, "input ^ other"),
    SCALAR(rpow, "other ^ input"), SCALAR(maximum, "max(input, other)"), SCALAR(minimum, "min(input, other)"),
    SCALAR(remainder, "Python's modulo"), SCALAR(eq, "=="), SCALAR(ne, "!="), SCALAR(lt, "<"), SCALAR(le, "<="),
    SCALAR(gt, ">"), SCALAR(ge, ">="),
    ISCALAR(add, "input + other"), ISCALAR(sub, "input - other"), ISCALAR(rsub, "other - input"),
    ISCALAR(mul, "input * other"), ISCALAR(remainder, "Python's modulo"),
    ISCALAR(floor_divide, "floor(input / other)"), ISCALAR(maximum, "max(input, other)"),
    ISCALAR(minimum, "min(input, other)"), ISCALAR(pow, "input ^ other"),
    SELF_ROW(add_, "t:input t:other", "input += other"), SELF_ROW(sub_, "t:input t:other", "input -= other"),
    SELF_ROW(mul_, "t:input t:other", "input *= other"), SELF_ROW(div_, "t:input t:other", "input /= other"),
    SELF_ROW(pow_, "t:input t:other", "input ^= other"), SELF_ROW(maximum_, "t:input t:other", "max in place"),
    SELF_ROW(minimum_, "t:input t:other", "min in place"), SELF_ROW(add_scalar_, "t:input d:other", "+= other"),
    SELF_ROW(sub_scalar_, "t:input d:other", "-= other"), SELF_ROW(mul_scalar_, "t:input d:other", "*= other"),
    SELF_ROW(div_scalar_, "t:input d:other", "/= other"), SELF_ROW(pow_scalar_, "t:input d:other", "^= other"),
    SELF_ROW(add_iscalar_, "t:input l:other", "+= other"), SELF_ROW(sub_iscalar_, "t:input l:other", "-= other"),
    SELF_ROW(mul_iscalar_, "t:input l:other", "*= other"),
    ROW(lerp_scalar, "t:input t:end d:weight", "input + weight (end - input)"),
    ROW(lerp, "t:input t:end t:weight", "input + weight (end - input)"),
    ROW(addcmul, "t:input t:tensor1 t:tensor2 d:value=1", "input + value t1 t2"),
    ROW(addcdiv, "t:input t:tensor1 t:tensor2 d:value=1", "input + value t1 / t2"),
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
    ROW(cumprod, "t:input i:dim", "running product along dim"),
    ROW(logcumsumexp, "t:input i:dim", "log of the running sum of e^x"),
    CALL(PAIR, cummax, "t:input i:dim", "running max and its index"),
    CALL(PAIR, cummin, "t:input i:dim", "running min and its index"),
    ROW(cumsum_dtype, "t:input i:dim y:dtype", "running sum in dtype"),
    ROW(cumprod_dtype, "t:input i:dim y:dtype", "running product in dtype"),
    REDUCE(nansum, "sum, NaN as 0"), REDUCE(nanmean, "mean of the non-NaN elements"),
    ROW(count_nonzero, "t:input D:dim=None", "number of nonzero elements"),
    ROW(sum_dtype, "t:input D:dim=None b:keepdim=false y:dtype=f32", "sum in dtype"),
    ROW(mean_dtype, "t:input D:dim=None b:keepdim=false y:dtype=f32", "mean in dtype"),
    ROW(prod_dtype, "t:input D:dim=None b:keepdim=false y:dtype=f32", "product in dtype"),
    ROW(vector_norm, "t:input d:ord=2 D:dim=None b:keepdim=false", "vector norm"),
    ROW(norm, "t:input d:p=2 D:dim=None b:keepdim=false", "torch.norm with a numeric p"),
    ROW(vector_norm_dtype, "t:input d:ord=2 D:dim=None b:keepdim=false y:dtype=f64", "vector norm in dtype"),
    ROW(matrix_norm, "t:input d:ord D:dim=None b:keepdim=false", "matrix norm (ord 1, -1, inf, -inf)"),
    ROW(matrix_norm_fro, "t:input D:dim=None b:keepdim=false", "Frobenius norm"),
    ROW(matrix_norm_dtype, "t:input d:ord D:dim=None b:keepdim=false y:dtype=f64", "matrix norm in dtype"),
    ROW(matrix_norm_fro_dtype, "t:input D:dim=None b:keepdim=false y:dtype=f64", "Frobenius norm in dtype"),
    CALL(PAIR, kthvalue, "t:input l:k i:dim=-1 b:keepdim=false", "k-th smallest and its index"),
    CALL(PAIR, median_dim, "t:input i:dim b:keepdim=false", "lower median and its index"),
    CALL(PAIR, mode, "t:input i:dim=-1 b:keepdim=false", "most frequent value and its index"),
    UNARY(median, "lower median of all elements"),
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
    ROW(flip, "t:input D:dims", "reversed along dims"), ROW(repeat, "t:input S:repeats", "tiled copies"),
    ROW(tile, "t:input S:dims", "tiled copies (torch.tile)"),
    ROW(rot90, "t:input l:k=1 i:dim0=0 i:dim1=1", "rotated by 90 degrees k times"),
    ROW(diag, "t:input l:diagonal=0", "diagonal matrix, or a matrix's diagonal"),
    ROW(diag_embed, "t:input l:offset=0 i:dim1=-2 i:dim2=-1", "last dim as diagonals"),
    UNARY(trace, "sum of the main diagonal"), ROW(take, "t:input t:index", "elements of the flattened input"),
    ROW(index_copy, "t:input i:dim t:index t:source", "source's slices copied at index along dim"),
    ROW(index_add, "t:input i:dim t:index t:source d:alpha=1", "alpha source added at index along dim"),
    ROW(index_fill, "t:input i:dim t:index d:value", "value at index along dim"),
    ROW(masked_select, "t:input t:mask", "elements where mask, 1-D"),
    ROW(masked_scatter, "t:input t:mask t:source", "source's elements in order where mask"),
    SELF_ROW(index_copy_, "t:input i:dim t:index t:source", "index_copy in place"),
    SELF_ROW(index_add_, "t:input i:dim t:index t:source d:alpha=1", "index_add in place"),
    SELF_ROW(index_fill_, "t:input i:dim t:index d:value", "index_fill in place"),
    SELF_ROW(masked_scatter_, "t:input t:mask t:source", "masked_scatter in place"),
    ROW(roll, "t:input S:shifts D:dims=None", "elements shifted along dims (none: flattened)"),
    ROW(slice, "t:input i:dim l:start l:end l:step=1", "a strided view along dim"),
    ROW(tril_indices, "l:row l:col l:offset=0 v:device=cpu", "coordinates of a lower triangle"),
    ROW(triu_indices, "l:row l:col l:offset=0 v:device=cpu", "coordinates of an upper triangle"),
    ROW(searchsorted, "t:sorted_sequence t:input b:out_int32=false b:right=false", "insertion points"),
    ROW(searchsorted_sorter, "t:sorted_sequence t:input o:sorter=None b:out_int32=false s:side=left",
        "insertion points into sorted_sequence in sorter's order"),
    ROW(bucketize, "t:input t:boundaries b:out_int32=false b:right=false", "bucket of each element"),
    ROW(cartesian_prod, "T:tensors", "rows of the cartesian product"),
    ROW(clamp_tensor, "t:input o:min=None o:max=None", "clamped to tensor bounds"),
    /* nn */
    ROW(cross_entropy, "t:input t:target d:label_smoothing=0", "mean cross entropy of logits"),
    ROW(nll_loss, "t:input t:target", "mean negative log likelihood"),
    ROW(mse_loss, "t:input t:target", "mean squared error"),
    ROW(embedding, "t:weight t:indices", "rows of weight"),
    ROW(conv2d, "t:input t:weight o:bias P:stride P:padding P:dilation l:groups", "2-D convolution"),
    ROW(max_pool2d, "t:input P:kernel_size P:stride P:padding", "2-D max pooling"),
    ROW(avg_pool2d, "t:input P:kernel_size P:stride P:padding b:count_include_pad=true", "2-D average pooling"),
    LOSS(l1_loss, "t:input t:target s:reduction=mean", "mean absolute error"),
    LOSS(smooth_l1_loss, "t:input t:target s:reduction=mean d:beta=1", "smooth L1 (quadratic below beta)"),
    LOSS(huber_loss, "t:input t:target s:reduction=mean d:delta=1", "Huber loss"),
    LOSS(binary_cross_entropy, "t:input t:target o:weight=None s:reduction=mean", "BCE of probabilities"),
    LOSS(binary_cross_entropy_with_logits, "t:input t:target o:weight=None s:reduction=mean o:pos_weight=None",
         "BCE of logits"),
    LOSS(kl_div, "t:input t:target s:reduction=mean b:log_target=false", "KL divergence of log-probabilities"),
    LOSS(margin_ranking_loss, "t:input1 t:input2 t:target d:margin=0 s:reduction=mean", "margin ranking loss"),
    LOSS(cosine_embedding_loss, "t:input1 t:input2 t:target d:margin=0 s:reduction=mean", "cosine embedding loss"),
    ROW(cosine_similarity, "t:x1 t:x2 i:dim=1 d:eps=1e-8", "cosine similarity along dim"),
    ROW(pairwise_distance, "t:x1 t:x2 d:p=2 d:eps=1e-6 b:keepdim=false", "p-norm distance over the last dim"),
    ROW(normalize, "t:input d:p=2 i:dim=1 d:eps=1e-12", "x / max(|x|_p, eps) along dim"),
    /* products */
    ROW(outer, "t:input t:vec2", "outer product of two vectors"), ROW(dot, "t:input t:other", "dot product"),
    ROW(vdot, "t:input t:other", "dot product (conjugating the first)"),
    ROW(kron, "t:input t:other", "Kronecker product"),
    ROW(addmm, "t:input t:mat1 t:mat2 d:beta=1 d:alpha=1", "beta input + alpha mat1 @ mat2"),
    ROW(baddbmm, "t:input t:batch1 t:batch2 d:beta=1 d:alpha=1", "beta input + alpha batch1 @ batch2"),
    ROW(addbmm, "t:input t:batch1 t:batch2 d:beta=1 d:alpha=1", "beta input + alpha sum of batch1 @ batch2"),
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

"""lazytensor.nn.functional: the C library's nn ops and losses as functions."""
from .. import _C


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


relu = _C.relu
gelu = _C.gelu
silu = _C.silu
sigmoid = _C.sigmoid
tanh = _C.tanh
softmax = _C.softmax
log_softmax = _C.log_softmax

cross_entropy = _C.cross_entropy
nll_loss = _C.nll_loss
mse_loss = _C.mse_loss
one_hot = _C.one_hot

# losses and distances (torch's argument names, order and defaults)
l1_loss = _C.l1_loss
smooth_l1_loss = _C.smooth_l1_loss
huber_loss = _C.huber_loss
binary_cross_entropy = _C.binary_cross_entropy
binary_cross_entropy_with_logits = _C.binary_cross_entropy_with_logits
kl_div = _C.kl_div
margin_ranking_loss = _C.margin_ranking_loss
cosine_embedding_loss = _C.cosine_embedding_loss
cosine_similarity = _C.cosine_similarity
pairwise_distance = _C.pairwise_distance
normalize = _C.normalize


def embedding(input, weight):  # noqa: A002
    return _C.embedding(weight, input)


def linear(input, weight, bias=None):  # noqa: A002
    y = input.matmul(weight.t())
    return y if bias is None else y + bias


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    return _C.conv2d(input, weight, bias, _pair(stride), _pair(padding), _pair(dilation), groups)


def max_pool2d(input, kernel_size, stride=None, padding=0):  # noqa: A002
    return _C.max_pool2d(input, _pair(kernel_size), _pair(stride or kernel_size), _pair(padding))


def avg_pool2d(input, kernel_size, stride=None, padding=0, count_include_pad=True):  # noqa: A002
    return _C.avg_pool2d(input, _pair(kernel_size), _pair(stride or kernel_size), _pair(padding),
                         count_include_pad)

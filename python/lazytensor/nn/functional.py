"""lazytensor.nn.functional: the C library's nn ops and losses as functions."""
from .. import _C


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def relu(x):
    return x.relu()


def gelu(x):
    return x.gelu()


def silu(x):
    return x.silu()


def sigmoid(x):
    return x.sigmoid()


def tanh(x):
    return x.tanh()


def softmax(x, dim):
    return x.softmax(dim)


def log_softmax(x, dim):
    return x.log_softmax(dim)


def cross_entropy(input, target, label_smoothing=0.0):  # noqa: A002
    """Mean cross-entropy of logits [N, C] against int64 classes [N]."""
    return _C.cross_entropy(input, target, label_smoothing)


def nll_loss(input, target):  # noqa: A002
    return _C.nll_loss(input, target)


def mse_loss(input, target):  # noqa: A002
    return _C.mse_loss(input, target)


def embedding(input, weight):  # noqa: A002
    return _C.embedding_fn(weight, input)


def one_hot(tensor, num_classes):
    return _C.one_hot(tensor, num_classes)


def linear(input, weight, bias=None):  # noqa: A002
    y = input.matmul(weight.t())
    return y if bias is None else y + bias


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    return _C.conv2d_fn(input, weight, bias, _pair(stride), _pair(padding), _pair(dilation), groups)


def max_pool2d(input, kernel_size, stride=None, padding=0):  # noqa: A002
    return _C.max_pool2d_fn(input, _pair(kernel_size), _pair(stride or kernel_size), _pair(padding))


def avg_pool2d(input, kernel_size, stride=None, padding=0, count_include_pad=True):  # noqa: A002
    return _C.avg_pool2d_fn(input, _pair(kernel_size), _pair(stride or kernel_size), _pair(padding),
                            count_include_pad)

"""Datasets: the C library's IDX reader (lt_dataset_load_idx) and batcher
(lt_dataset_shuffle, lt_dataset_batch)."""
import os

from . import _C

FASHION_MNIST_DIR = "/usr/share/datasets/fashion-mnist"  # Debian's dataset-fashion-mnist
FASHION_MNIST_MEAN, FASHION_MNIST_STD = 0.2860, 0.3530  # lazytensor-train's normalization


class IdxDataset:
    """Labelled images in memory. Batches come in file order, or in the
    order of the last shuffle(seed) (the C trainer's permutations)."""

    def __init__(self, images_path, labels_path, mean=FASHION_MNIST_MEAN, std=FASHION_MNIST_STD):
        self._c = _C.load_idx(str(images_path), str(labels_path))
        self.mean, self.std = mean, std

    def __len__(self):
        return self._c.count

    def shuffle(self, seed):
        self._c.shuffle(seed)

    def batch(self, index, batch_size, device=None):
        """Batch `index`: images f32 [b, 1, rows, cols] normalized, labels
        i64 [b]; None past the end."""
        return self._c.batch(index, batch_size, self.mean, self.std, device)

    def batches(self, batch_size, device=None):
        i = 0
        while (b := self.batch(i, batch_size, device)) is not None:
            yield b
            i += 1


def fashion_mnist(root=FASHION_MNIST_DIR, train=True):
    split = "train" if train else "t10k"
    return IdxDataset(os.path.join(root, f"{split}-images-idx3-ubyte.gz"),
                      os.path.join(root, f"{split}-labels-idx1-ubyte.gz"))

"""torch.nn.utils.rnn: PackedSequence and the packing/padding helpers.

Note: a PackedSequence holds the time-major concatenation of the sequences
(`data`, shape (sum(lengths), *)), `batch_sizes` (int64, how many sequences are still
running at each step), and the sort permutation when the batch was not sorted by
length. Packing and padding are index_select's over a flattened view (plus one padding
row), so gradients flow back to the padded input; the index bookkeeping is NumPy on the
lengths, which PyTorch also keeps on the CPU.
"""
from collections import namedtuple
from collections.abc import Iterable

import numpy as np

from ... import _dtype as D
from ..._tensor import Tensor
from ...ops.creation import full, tensor as _tensor
from ...ops.shape import cat, stack
from ...ops.sorting import sort

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]

_PackedSequenceBase = namedtuple("PackedSequence_",
                                 ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


def _index(values):
    return _tensor(np.asarray(values, dtype=np.int64), dtype=D.int64)


class PackedSequence(_PackedSequenceBase):
    """Holds the data and list of batch_sizes of a packed sequence."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:     # PackedSequence((data, batch_sizes), sorted_indices)
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def cpu(self, *args, **kwargs):
        return self.to("cpu")

    def pin_memory(self):
        return self

    def double(self):
        return self.to(dtype=D.float64)

    def float(self):
        return self.to(dtype=D.float32)

    def half(self):
        return self.to(dtype=D.float16)

    def long(self):
        return self.to(dtype=D.int64)

    def int(self):
        return self.to(dtype=D.int32)

    def short(self):
        return self.to(dtype=D.int16)

    def char(self):
        return self.to(dtype=D.int8)

    def byte(self):
        return self.to(dtype=D.uint8)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return False


def invert_permutation(permutation):
    """The inverse of a permutation (None stays None)."""
    if permutation is None:
        return None
    inv = np.empty(permutation.numel(), dtype=np.int64)
    inv[permutation.numpy().astype(np.int64)] = np.arange(permutation.numel())
    return _index(inv)


def _lengths_list(lengths):
    if isinstance(lengths, Tensor):
        return [int(v) for v in lengths.reshape(-1).tolist()], lengths.to(dtype=D.int64)
    arr = np.asarray(lengths, dtype=np.int64)
    return arr.reshape(-1).tolist(), _index(arr)


def _pack(input, lengths, batch_first):
    """PyTorch's _pack_padded_sequence: (data, batch_sizes) from sorted lengths."""
    if batch_first:
        input = input.transpose(0, 1)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    steps, batch = input.shape[0], input.shape[1]
    if len(lengths) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lengths)} (batch_size={batch})")
    if lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if any(a < b for a, b in zip(lengths, lengths[1:])):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    if lengths[0] > steps:
        raise RuntimeError(f"Expected sequence length to be at most {steps}, but got "
                           f"{lengths[0]}")
    lens = np.asarray(lengths)
    sizes = (lens[None, :] > np.arange(lengths[0])[:, None]).sum(1)
    idx = np.concatenate([t * batch + np.arange(b) for t, b in enumerate(sizes)])
    flat = input.reshape((steps * batch,) + tuple(input.shape[2:]))
    return flat.index_select(0, _index(idx)), _index(sizes)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch of variable-length sequences."""
    lengths, lengths_t = _lengths_list(lengths)
    sorted_indices = None
    if not enforce_sorted:
        lengths_t, sorted_indices = sort(lengths_t, descending=True, stable=True)
        lengths = lengths_t.tolist()
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = _pack(input, lengths, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Pads a packed batch back to (T, B, *) (or (B, T, *)); returns (padded, lengths)."""
    sizes = np.asarray(sequence.batch_sizes.tolist(), dtype=np.int64)
    max_len = len(sizes)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and "
                             f"max sequence length being {max_len}")
        max_len = total_length
    data = sequence.data
    batch = int(sizes[0]) if len(sizes) else 0
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    idx = np.full((max_len, batch), int(sizes.sum()), dtype=np.int64)   # -> padding row
    for t, (off, b) in enumerate(zip(offsets, sizes)):
        idx[t, :b] = off + np.arange(b)
    if batch_first:
        idx = idx.T
    rest = tuple(data.shape[1:])
    pad_row = full((1,) + rest, padding_value, dtype=data.dtype)
    padded = cat([data, pad_row]).index_select(0, _index(idx.reshape(-1)))
    padded = padded.reshape(idx.shape + rest)
    lengths = (sizes[None, :] > np.arange(batch)[:, None]).sum(1)
    lengths = _index(lengths)
    if sequence.unsorted_indices is not None:
        unsorted = sequence.unsorted_indices
        return (padded.index_select(0 if batch_first else 1, unsorted),
                lengths.index_select(0, unsorted))
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks variable-length tensors into (T, B, *) (or (B, T, *)), padding with a value."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg "
                           f"of type: {type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise ValueError("Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    dtype = sequences[0].dtype
    max_len = max(s.shape[0] for s in sequences)
    rows = []
    for s in sequences:
        s = s.to(dtype)
        gap = max_len - s.shape[0]
        if gap:
            filler = full((gap,) + tuple(s.shape[1:]), padding_value, dtype=dtype)
            s = cat([s, filler] if padding_side == "right" else [filler, s])
        rows.append(s)
    return stack(rows, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Splits a padded batch into a list of tensors of the given lengths.

    (PyTorch transposes the caller's tensor in place when batch_first=False; ember does not
    modify the input.)"""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    lens, _ = _lengths_list(lengths)
    if len(lens) != padded_sequences.shape[0]:
        raise ValueError("zip() argument 2 is shorter than argument 1"
                         if len(lens) < padded_sequences.shape[0]
                         else "zip() argument 2 is longer than argument 1")
    return [padded_sequences[i, :n] for i, n in enumerate(lens)]


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of variable-length tensors."""
    lengths = [v.size(0) for v in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of tensors a PackedSequence was built from."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)

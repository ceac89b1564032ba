"""Recurrent layers: RNN, LSTM (proj_size), GRU and their single-step cells.

Note: the recurrence is written in ember ops (linear, sigmoid, tanh, chunk, cat), so
autograd, double backward and autocast come for free. Each layer/direction first
projects the whole input sequence with one matmul (x W_ih^T + b_ih), then steps through
time doing only the hidden-state matmul per step. Padded input is treated as a packed
sequence whose batch sizes are all equal, so one loop serves both: in the forward
direction, sequences that have ended drop off the end of the batch (their final hidden
state is kept); in the reverse direction they join as the loop reaches their last step,
starting from their initial state — exactly PyTorch's packed semantics. Gate layouts,
parameter names/shapes, initialisation U(-1/sqrt(H), 1/sqrt(H)), input checks and
reprs follow torch.nn.modules.rnn; `flatten_parameters` is a no-op as on PyTorch's CPU.
"""
import math
import numbers
import warnings

from ...amp.autocast_mode import get_autocast_dtype, is_autocast_enabled
from ...ops.creation import empty, zeros
from ...ops.matmul import addmm
from ...ops.pointwise_math import addcmul
from ...ops.shape import cat, stack
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


# ------------------------------------------------------------------ one time step

def _rnn_step(act):
    def step(xw, h, w_hh, b_hh):
        return act(xw + F.linear(h, w_hh, b_hh)), None
    return step


def _lstm_step(xw, h, w_hh, b_hh, c, w_hr=None, w_hh_t=None):
    """One LSTM step. With `w_hh_t` (w_hh transposed once per sequence, b_hh already added
    to xw) the gates are one addmm; the gate views come from two chunks and the cell
    update is an addcmul: 9 dispatches a step instead of 14, and as few backward nodes."""
    if w_hh_t is not None:
        gates = addmm(xw, h, w_hh_t)
    else:
        gates = xw + F.linear(h, w_hh, b_hh)
    i, f, _, o = gates.sigmoid().chunk(4, 1)
    g = gates.chunk(4, 1)[2].tanh()
    c = addcmul(f * c, i, g)
    h = o * c.tanh()
    if w_hr is not None:
        h = F.linear(h, w_hr)
    return h, c


def _gru_step(xw, h, w_hh, b_hh):
    gh = F.linear(h, w_hh, b_hh)
    size = h.shape[1]
    rz = (xw[:, :2 * size] + gh[:, :2 * size]).sigmoid()
    r, z = rz[:, :size], rz[:, size:]
    n = (xw[:, 2 * size:] + r * gh[:, 2 * size:]).tanh()
    return n + z * (h - n), None


_STEPS = {"RNN_TANH": _rnn_step(lambda x: x.tanh()), "RNN_RELU": _rnn_step(F.relu),
          "GRU": _gru_step}


# ------------------------------------------------------------- whole sequences

def _direction(mode, steps, sizes, h0, c0, w, reverse):
    """Runs one layer in one direction over the per-step projected inputs `steps`.

    Returns (outputs per step in time order, final h, final c)."""
    w_hh, b_hh, w_hr = w["w_hh"], w["b_hh"], w["w_hr"]
    lstm = mode == "LSTM"
    w_hh_t = None
    if lstm and not is_autocast_enabled("cpu"):
        # b_hh was folded into the projected input (see _run_layers): transpose w_hh once
        w_hh_t, b_hh = w_hh.t(), None
    step = _STEPS.get(mode)
    order = range(len(steps) - 1, -1, -1) if reverse else range(len(steps))
    cur = sizes[-1] if reverse and sizes else h0.shape[0]
    h = h0 if cur == h0.shape[0] else h0[:cur]
    c = c0 if not lstm or cur == c0.shape[0] else c0[:cur]
    outs, done_h, done_c = [], [], []
    for t in order:
        b = sizes[t]
        if b < cur:         # forward: sequences that ended leave the batch
            done_h.append(h[b:])
            h = h[:b]
            if lstm:
                done_c.append(c[b:])
                c = c[:b]
        elif b > cur:       # reverse: sequences start at their last step
            h = cat([h, h0[cur:b]])
            if lstm:
                c = cat([c, c0[cur:b]])
        cur = b
        if lstm:
            h, c = _lstm_step(steps[t], h, w_hh, b_hh, c, w_hr, w_hh_t)
        else:
            h, _ = step(steps[t], h, w_hh, b_hh)
        outs.append(h)
    if reverse:
        outs.reverse()
    if done_h:
        h = cat([h] + done_h[::-1])
        if lstm:
            c = cat([c] + done_c[::-1])
    return outs, h, c


def _run_layers(mode, data, sizes, hx, cx, weights, num_layers, dropout, train, dirs):
    """The stacked (bi)directional recurrence on time-major packed data (N, F)."""
    hn, cn = [], []
    x = data
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            w = weights[layer * dirs + d]
            xw = F.linear(x, w["w_ih"], w["b_ih"])
            if mode == "LSTM" and not is_autocast_enabled("cpu") and w["b_hh"] is not None:
                xw = xw + w["b_hh"]         # once per sequence rather than once per step
            steps = xw.split(sizes)
            k = layer * dirs + d
            seq, h, c = _direction(mode, steps, sizes, hx[k], cx[k] if cx is not None else None,
                                   w, reverse=d == 1)
            outs.append(cat(seq))
            hn.append(h)
            cn.append(c)
        x = outs[0] if dirs == 1 else cat(outs, 1)
        if dropout > 0 and train and layer < num_layers - 1:
            x = F.dropout(x, dropout, True)
    return x, stack(hn), (stack(cn) if cx is not None else None)


class RNNBase(Module):
    """Shared constructor, parameter registry, checks and repr of RNN/LSTM/GRU."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first",
                     "dropout", "bidirectional", "proj_size"]

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        self._check_args(mode, input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, proj_size)
        gate_size = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}[mode] * hidden_size
        dirs = 2 if bidirectional else 1
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(dirs):
                layer_input = input_size if layer == 0 else real_hidden * dirs
                shapes = [(gate_size, layer_input), (gate_size, real_hidden)]
                names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    shapes += [(gate_size,), (gate_size,)]
                    names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    shapes.append((proj_size, hidden_size))
                    names.append("weight_hr_l{}{}")
                suffix = "_reverse" if direction == 1 else ""
                names = [n.format(layer, suffix) for n in names]
                for name, shape in zip(names, shapes):
                    setattr(self, name, Parameter(empty(shape, dtype=dtype)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @staticmethod
    def _check_args(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                    proj_size):
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
                or not 0 <= dropout <= 1):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=3)
        for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                                  ("input_size", input_size, int),
                                  ("hidden_size", hidden_size, int)):
            if not isinstance(value, kind):
                raise TypeError(f"{name} should be of type {kind.__name__}, got: "
                                f"{type(value).__name__}")
            if kind is int and value <= 0:
                raise ValueError(f"{name} must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in ("LSTM", "GRU", "RNN_TANH", "RNN_RELU"):
            raise ValueError("Unrecognized RNN mode: " + mode)

    @property
    def _flat_weights(self):
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self):
        """No-op: parameters are never packed into one buffer on the CPU."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    # --------------------------------------------------------------- checks

    def check_input(self, input, batch_sizes):
        wdtype = self._flat_weights[0].dtype
        if input.dtype != wdtype and not is_autocast_enabled("cpu"):
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({wdtype}). Convert input: input.to({wdtype}), or convert "
                             f"model: model.to({input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError("input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        dirs = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * dirs, mini_batch, size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # -------------------------------------------------------------- forward

    def _weights(self):
        out = []
        for names in self._all_weights:
            ws = [getattr(self, n) for n in names]
            w = {"w_ih": ws[0], "w_hh": ws[1], "b_ih": None, "b_hh": None, "w_hr": None}
            if self.bias:
                w["b_ih"], w["b_hh"] = ws[2], ws[3]
            if self.proj_size > 0:
                w["w_hr"] = ws[-1]
            out.append(w)
        return out

    def _zeros(self, batch, size, like):
        dirs = 2 if self.bidirectional else 1
        return zeros((self.num_layers * dirs, batch, size), dtype=like.dtype)

    def _prepare(self, input, hx, name):
        """Normalises (packed | 2-D | 3-D) input and hx; returns the pieces forward needs."""
        lstm = self.mode == "LSTM"
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            sizes = [int(b) for b in batch_sizes.tolist()]
            if hx is not None:
                hx = self.permute_hidden(hx, sorted_indices)
            return data, batch_sizes, sizes, hx, sorted_indices, unsorted_indices, True
        if input.dim() not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D "
                             + ("tensor instead" if name == "RNN" else "instead"))
        batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not batched:
            input = input.unsqueeze(batch_dim)
        if hx is not None:
            hs = hx if lstm else (hx,)
            want = 3 if batched else 2
            if any(h.dim() != want for h in hs):
                kind = "batched 3-D" if batched else "unbatched 2-D"
                if lstm:
                    raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D "
                                       f"but got ({hs[0].dim()}-D, {hs[1].dim()}-D) tensors")
                raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got "
                                   f"{hx.dim()}-D tensor")
            if not batched:
                hx = tuple(h.unsqueeze(1) for h in hs) if lstm else hx.unsqueeze(1)
        return input, None, None, hx, None, None, batched

    def _forward(self, input, hx, name):
        lstm = self.mode == "LSTM"
        packed = isinstance(input, PackedSequence)
        data, batch_sizes, sizes, hx, _, unsorted, batched = self._prepare(input, hx, name)
        if packed:
            batch = sizes[0]
        else:
            batch = data.size(0) if self.batch_first else data.size(1)
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        if hx is None:
            h0 = self._zeros(batch, real_hidden, data)
            hx = (h0, self._zeros(batch, self.hidden_size, data)) if lstm else h0
        if lstm:
            self.check_input(data, batch_sizes)
            self.check_hidden_size(hx[0], self.get_expected_hidden_size(data, batch_sizes),
                                   "Expected hidden[0] size {}, got {}")
            expected_c = self.get_expected_hidden_size(data, batch_sizes)[:2] + (self.hidden_size,)
            self.check_hidden_size(hx[1], expected_c, "Expected hidden[1] size {}, got {}")
        else:
            self.check_forward_args(data, hx, batch_sizes)
        if not packed:
            seq = data.transpose(0, 1) if self.batch_first else data
            steps = seq.shape[0]
            if steps == 0:
                raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
            sizes = [batch] * steps
            data = seq.reshape((steps * batch, seq.shape[2]))
        h0, c0 = (hx[0], hx[1]) if lstm else (hx, None)
        weights = self._weights()
        if lstm and not packed and is_autocast_enabled("cpu") and data.is_floating_point():
            # PyTorch's CPU LSTM runs as one lower-precision oneDNN op under autocast
            dt = get_autocast_dtype("cpu")
            data, h0, c0 = data.to(dt), h0.to(dt), c0.to(dt)
            weights = [{k: None if v is None else v.to(dt) for k, v in w.items()}
                       for w in weights]
        out, hn, cn = _run_layers(self.mode, data, sizes, h0, c0, weights,
                                  self.num_layers, self.dropout, self.training,
                                  2 if self.bidirectional else 1)
        hidden = (hn, cn) if lstm else hn
        if packed:
            return (PackedSequence(out, batch_sizes, input.sorted_indices, unsorted),
                    self._unpermute(hidden, unsorted))
        out = out.reshape((steps, batch, out.shape[-1]))
        if self.batch_first:
            out = out.transpose(0, 1)
        if not batched:
            out = out.squeeze(0 if self.batch_first else 1)
            hidden = (hn.squeeze(1), cn.squeeze(1)) if lstm else hn.squeeze(1)
        return out, hidden

    def _unpermute(self, hidden, unsorted):
        if self.mode == "LSTM":
            return tuple(self.permute_hidden(h, unsorted) for h in hidden)
        return self.permute_hidden(hidden, unsorted)


class RNN(RNNBase):
    """Elman RNN with tanh or ReLU non-linearity."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward(input, hx, "RNN")


class LSTM(RNNBase):
    """Long short-term memory, optionally with a projection of the hidden state."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        return self.get_expected_hidden_size(input, batch_sizes)[:2] + (self.hidden_size,)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)

    def _unpermute(self, hidden, unsorted):
        return self.permute_hidden(hidden, unsorted)

    def forward(self, input, hx=None):
        return self._forward(input, hx, "LSTM")


class GRU(RNNBase):
    """Gated recurrent unit."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward(input, hx, "GRU")


# --------------------------------------------------------------------- cells

class RNNCellBase(Module):
    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), dtype=dtype))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), dtype=dtype))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, dtype=dtype))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _setup(self, name, input, hx, count):
        """Checks dims, adds the batch dim, builds zero states; returns (input, hx, batched)."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D "
                             "instead")
        hs = () if hx is None else (tuple(hx) if count == 2 else (hx,))
        for i, h in enumerate(hs):
            if h.dim() not in (1, 2):
                what = f"hx[{i}]" if count == 2 else "hidden"
                raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {h.dim()}D "
                                 "instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
            hs = tuple(h.unsqueeze(0) for h in hs)
        if not hs:
            z = zeros((input.size(0), self.hidden_size), dtype=input.dtype)
            hs = (z,) * count
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} "
                               f"expected {self.input_size}")
        for i, h in enumerate(hs):
            if h.size(0) != input.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{i} "
                                   f"batch size {h.size(0)}")
            if h.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {h.size(1)}, "
                                   f"expected {self.hidden_size}")
        return input, hs, batched

    def _xw(self, input):
        return F.linear(input, self.weight_ih, self.bias_ih)


class RNNCell(RNNCellBase):
    """One step of an Elman RNN."""

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, (h,), batched = self._setup("RNNCell", input, hx, 1)
        if self.nonlinearity == "tanh":
            step = _STEPS["RNN_TANH"]
        elif self.nonlinearity == "relu":
            step = _STEPS["RNN_RELU"]
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        ret, _ = step(self._xw(input), h, self.weight_hh, self.bias_hh)
        return ret if batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """One step of an LSTM; returns (h, c)."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, dtype=dtype)

    def forward(self, input, hx=None):
        input, (h, c), batched = self._setup("LSTMCell", input, hx, 2)
        h, c = _lstm_step(self._xw(input), h, self.weight_hh, self.bias_hh, c)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One step of a GRU."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, dtype=dtype)

    def forward(self, input, hx=None):
        input, (h,), batched = self._setup("GRUCell", input, hx, 1)
        ret, _ = _gru_step(self._xw(input), h, self.weight_hh, self.bias_hh)
        return ret if batched else ret.squeeze(0)


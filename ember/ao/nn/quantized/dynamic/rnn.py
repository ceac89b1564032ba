"""DynamicQuantizedLSTM / GRU: recurrent layers whose gate matmuls are dynamic quantized
linears (torch.ao.nn.quantized.dynamic.LSTM / GRU, inference only).

Note: as ATen's CPU RNNs, each layer projects its whole input sequence through the input
weights in one call (so the input's dynamic qparams cover every step), then runs the
steps with h_gates = linear_dynamic(h, W_hh) per step, in PyTorch's gate order: LSTM
(input, forget, cell, output), GRU (reset, update, new).
"""
import numpy as np

import ember
from ..... import nn
from .._functional import linear_dynamic, weight_qparams

__all__ = ["LSTM", "GRU"]


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


class RNNBase(nn.Module):
    """Holds per layer and direction (W_ih, b_ih, W_hh, b_hh) with qint8 (or float16)
    weights; subclasses give the cell step."""

    mode = None

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, dtype=ember.qint8):
        super().__init__()
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first = bias, batch_first
        self.dropout, self.bidirectional, self.dtype = float(dropout), bidirectional, dtype
        self.version = 2
        self._cells = []        # [(w_ih, b_ih, w_hh, b_hh)] per layer x direction

    def _get_name(self):
        return "DynamicQuantized" + self.mode

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        for i, cell in enumerate(self._cells):
            destination[f"{prefix}_all_weight_values.{i}.param"] = cell

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        n = self.num_layers * (2 if self.bidirectional else 1)
        cells = []
        for i in range(n):
            key = f"{prefix}_all_weight_values.{i}.param"
            if key not in state_dict:
                missing_keys.append(key)
                continue
            cells.append(tuple(state_dict.pop(key)))
        if len(cells) == n:
            self._cells = cells
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def _linear(self, x, w, b):
        bias = None if b is None else b.detach().numpy().astype(np.float32)
        if self.dtype == ember.float16:
            out = x @ w._data.astype(np.float16).astype(np.float32).T
            return out if bias is None else out + bias
        wi, scale, zp = weight_qparams(w)
        return linear_dynamic(x, wi, scale, zp, bias, reduce_range=True)

    def _direction(self, xs, state, cell, reverse):
        """One layer, one direction over xs (T, B, in): the (T, B, H) outputs and the
        final state."""
        w_ih, b_ih, w_hh, b_hh = cell
        t_len, batch = xs.shape[:2]
        proj = self._linear(xs.reshape(t_len * batch, -1), w_ih, b_ih).reshape(t_len, batch, -1)
        out = np.empty((t_len, batch, self.hidden_size), np.float32)
        steps = range(t_len - 1, -1, -1) if reverse else range(t_len)
        for t in steps:
            state = self._step(proj[t], self._linear(state[0], w_hh, b_hh), state)
            out[t] = state[0]
        return out, state

    def _run(self, x, states):
        """x (T, B, in) through every layer; states: per layer x direction tuples."""
        dirs = 2 if self.bidirectional else 1
        finals = []
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                k = layer * dirs + d
                o, st = self._direction(x, states[k], self._cells[k], d == 1)
                outs.append(o)
                finals.append(st)
            x = np.concatenate(outs, axis=2) if dirs == 2 else outs[0]
        return x, finals

    def _input(self, input):
        x = input.detach().numpy().astype(np.float32)
        if x.ndim != 3:
            raise RuntimeError(f"input must have 3 dimensions, got {x.ndim}")
        return x.transpose(1, 0, 2) if self.batch_first else x

    def _output(self, x):
        x = x.transpose(1, 0, 2) if self.batch_first else x
        return ember.from_numpy(np.ascontiguousarray(x))

    def _state_shape(self, batch):
        return (self.num_layers * (2 if self.bidirectional else 1), batch, self.hidden_size)


class LSTM(RNNBase):
    """forward(input, hx=None) -> (output, (h_n, c_n)) as nn.LSTM."""

    _FLOAT_MODULE = nn.LSTM
    mode = "LSTM"

    def _step(self, x_gates, h_gates, state):
        i, f, g, o = np.split(h_gates + x_gates, 4, axis=1)
        c = (_sigmoid(f) * state[1] + _sigmoid(i) * np.tanh(g)).astype(np.float32)
        return (_sigmoid(o) * np.tanh(c)).astype(np.float32), c

    def forward(self, input, hx=None):
        x = self._input(input)
        shape = self._state_shape(x.shape[1])
        if hx is None:
            h0 = c0 = np.zeros(shape, np.float32)
        else:
            h0, c0 = (t.detach().numpy().astype(np.float32).reshape(shape) for t in hx)
        x, finals = self._run(x, list(zip(h0, c0)))
        h_n, c_n = (np.stack([st[i] for st in finals]) for i in (0, 1))
        return self._output(x), (ember.from_numpy(h_n), ember.from_numpy(c_n))

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """Quantizes each layer's W_ih and W_hh with the qconfig's weight observer (one
        observer per matrix); biases stay float."""
        return _from_float(cls, mod)


class GRU(RNNBase):
    """forward(input, hx=None) -> (output, h_n) as nn.GRU."""

    _FLOAT_MODULE = nn.GRU
    mode = "GRU"

    def _step(self, x_gates, h_gates, state):
        xr, xz, xn = np.split(x_gates, 3, axis=1)
        hr, hz, hn = np.split(h_gates, 3, axis=1)
        r, z = _sigmoid(hr + xr), _sigmoid(hz + xz)
        n = np.tanh(xn + hn * r)
        return ((state[0] - n) * z + n).astype(np.float32),

    def forward(self, input, hx=None):
        x = self._input(input)
        shape = self._state_shape(x.shape[1])
        h0 = np.zeros(shape, np.float32) if hx is None else \
            hx.detach().numpy().astype(np.float32).reshape(shape)
        x, finals = self._run(x, [(h,) for h in h0])
        return self._output(x), ember.from_numpy(np.stack([st[0] for st in finals]))

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """As LSTM.from_float."""
        return _from_float(cls, mod)


def _from_float(cls, mod):
    from ....quantization.qconfig import default_dynamic_qconfig
    from ....quantization.quantize import _quantize_weight
    """The quantized `cls` of a float nn.LSTM / nn.GRU (weights by its qconfig)."""
    if type(mod) not in (nn.LSTM, nn.GRU) or type(mod) is not cls._FLOAT_MODULE:
        raise AssertionError("nn.quantized.dynamic.RNNBase.from_float only works for "
                             "nn.LSTM and nn.GRU")
    if not hasattr(mod, "qconfig"):
        raise AssertionError("Input float module must have qconfig defined")
    qconfig = mod.qconfig if mod.qconfig is not None and mod.qconfig.weight is not None \
        else default_dynamic_qconfig
    dtype = qconfig.weight().dtype
    if dtype not in (ember.qint8, ember.float16):
        raise RuntimeError(f"Unsupported dtype for dynamic RNN quantization: {dtype}")
    if not mod.bias:
        raise AssertionError("mod.bias must be True")
    q = cls(mod.input_size, mod.hidden_size, mod.num_layers, mod.bias, mod.batch_first,
            mod.dropout, mod.bidirectional, dtype)

    def quantize(w):
        if dtype == ember.float16:
            return w.detach().float()
        obs = qconfig.weight()
        obs(w)
        return _quantize_weight(w.detach().float(), obs)
    for layer in range(mod.num_layers):
        for suffix in ("", "_reverse")[:2 if mod.bidirectional else 1]:
            def get(name):
                return getattr(mod, f"{name}_l{layer}{suffix}")
            q._cells.append((quantize(get("weight_ih")), get("bias_ih").detach(),
                             quantize(get("weight_hh")), get("bias_hh").detach()))
    return q

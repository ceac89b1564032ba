"""compile_training: one SGD step of a model as a static program.

[Note: how a training program is built]
1. The model is prepared (fold.py): BatchNorm folded, every layer's parameters marked
   trainable or not by the UpdateScheme, partially updated layers split by channel.
2. AOT autograd traces forward + backward into one joint fx graph (`aot_joint_graph`), with
   only the scheme's trainable tensors as differentiable primals. Pruning therefore
   happens in autograd itself at compile time: a frozen layer asks for no weight gradient,
   nothing below the lowest updated layer is differentiated, a bias-only layer's gradient
   is a reduction of the output gradient and keeps no input activation alive.
3. Schedule: the graph's nodes in order, plus one update step per trainable tensor
   (p -= lr * g, in place). Without reordering all updates run after the backward (as an
   optimizer does); with reordering each runs as soon as its gradient exists and the
   parameter has no later reader, and the gradient dies there.
4. Memory plan (memory.py): each node that makes new storage gets an arena buffer live
   from its step to its last reader (views extend their base's life); greedy first-fit.
5. `program.step(x, y)` runs the schedule on NumPy arrays placed in one arena at the
   planned offsets: a wrong plan would overwrite live data and change the result, so the
   tests' comparison with ember's eager step also checks the plan.
"""
import math

import numpy as np

from .. import nn
from .._functorch.aot_autograd import aot_joint_graph
from .._tensor import Tensor
from ..func import functional_call
from ..fx.node import map_arg
from .. import from_numpy, ones
from .fold import fold_bn, split_layer
from .memory import Buffer, live_peak, plan_arena, plot_timeline
from .scheme import UpdateScheme, trainable_layers

__all__ = ["compile_training", "TrainingProgram", "prepare_model"]


def prepare_model(model, scheme):
    """BN-folded copy of `model` with requires_grad set per `scheme`; returns (model,
    {param name: (layer name, kind)}) where kind is 'weight' / 'weight_head' / 'bias'."""
    scheme.validate(model)
    prepared = fold_bn(model)
    for p in prepared.parameters():
        p.requires_grad_(False)
    for name, layer in trainable_layers(prepared):
        rule, k = scheme.rule(name), scheme.channels(name, layer)
        if rule != "frozen" and layer.bias is not None:
            layer.bias.requires_grad_(True)
        if k:
            new = split_layer(layer, k)
            if new is layer:
                layer.weight.requires_grad_(True)
            else:
                parent_name, _, attr = name.rpartition(".")
                parent = prepared.get_submodule(parent_name) if parent_name else prepared
                setattr(parent, attr, new)
    return prepared


def _nbytes(t):
    return t.numel() * t.element_size()


class TrainingProgram:
    """A compiled training step: `step(x, y)` updates `parameters` in place, returns loss."""

    def __init__(self, model, example, loss, lr, scheme, reorder, inplace=True):
        self.lr, self.scheme, self.reorder, self.inplace = lr, scheme, reorder, inplace
        self._source = (model, example, loss)
        self.model = prepare_model(model, scheme)
        named = list(self.model.named_parameters())
        self.param_names = [n for n, _ in named]
        self.parameters = [p.detach().clone() for _, p in named]
        trainable = [p.requires_grad for _, p in named]
        x, y = example

        def step_fn(x, y, *params):
            out = functional_call(self.model, dict(zip(self.param_names, params)), (x,))
            return (loss(out, y),)

        primals = [x, y] + [p.detach().requires_grad_(r)
                            for p, r in zip(self.parameters, trainable)]
        joint = aot_joint_graph(step_fn, primals)
        if joint is None:
            raise ValueError("compile_training: the scheme updates no parameter")
        self.graph_module = joint[0]
        self.graph_module.graph.eliminate_dead_code()
        self.trainable = trainable
        self._build_schedule()
        self._find_views(example)
        self._plan()

    # ------------------------------------------------------------------ compile stages
    def _build_schedule(self):
        graph = self.graph_module.graph
        nodes = [n for n in graph.nodes if n.op not in ("output",)]
        out = next(n for n in graph.nodes if n.op == "output").args[0]
        self.loss_node = out[0]
        grads = out[1:]
        placeholders = [n for n in nodes if n.op == "placeholder"]
        self.param_nodes = placeholders[2:2 + len(self.parameters)]
        index = {n: i for i, n in enumerate(nodes)}
        updates = []  # (position after which it runs, param index, grad node)
        for i, g in enumerate(grads[2:]):
            if g is None:
                continue
            if self.reorder:
                readers = [index[u] for u in self.param_nodes[i].users]
                updates.append((max([index[g]] + readers), i, g))
            else:
                updates.append((len(nodes) - 1, i, g))
        self.updates = updates
        self.schedule = []
        by_pos = {}
        for pos, i, g in updates:
            by_pos.setdefault(pos, []).append((i, g))
        for i, n in enumerate(nodes):
            self.schedule.append(("node", n))
            for pi, g in by_pos.get(i, []):
                self.schedule.append(("update", pi, g))

    def _find_views(self, example):
        """Run the graph once eagerly: which nodes return a view of an input (no storage of
        their own), and each new tensor's size."""
        env = self._bind(example, self.parameters)
        self.view_of, self.sizes = {}, {}
        self.layout = {n: (tuple(v.shape), v.dtype.np) for n, v in env.items()
                       if isinstance(v, Tensor)}
        for n in self.graph_module.graph.nodes:
            if n.op != "call_function":
                continue
            args, kwargs = map_arg(n.args, env.__getitem__), map_arg(n.kwargs, env.__getitem__)
            val = n.target(*args, **kwargs)
            if not isinstance(val, Tensor):
                if isinstance(val, (tuple, list)):
                    raise NotImplementedError(
                        f"ember.tiny: op '{n.target}' returns several tensors; the memory "
                        "planner places single-tensor nodes only")
                env[n] = val
                continue
            env[n] = val
            self.layout[n] = (tuple(val.shape), val.dtype.np)
            base = next((a for a in n.all_input_nodes if isinstance(env.get(a), Tensor)
                         and np.shares_memory(env[a].numpy(), val.numpy())), None)
            if base is not None:
                self.view_of[n] = self.view_of.get(base, base)
            else:
                self.sizes[n] = _nbytes(val)

    def _storage(self, n):
        root = self.view_of.get(n, n)
        return self.inplace_of.get(root, root)

    def _nbytes_of(self, n):
        shape, dtype = self.layout[n]
        return int(np.prod(shape, dtype=np.int64)) * dtype.itemsize

    def _merge_inplace(self, pos, last, reads):
        """A pointwise op whose tensor input dies at that op (or is next overwritten with the
        op's own result: `relu_` traces as relu + copy_) writes its output over the input
        (same bytes): activations and gradient masks cost no new buffer."""
        def copies_back(r, s, n):
            return (getattr(getattr(r, "target", None), "__name__", "") == "copy_"
                    and self._storage(r.args[0]) is s and r.args[1] is n)

        def dies_at(s, n):
            later = sorted((i, r) for i, r in reads.get(s, ()) if i > pos[n])
            return not later or copies_back(later[0][1], s, n)

        for n in self.sizes:
            if "pointwise" not in getattr(n.target, "tags", ()):
                continue
            for a in n.all_input_nodes:
                s = self._storage(a)
                if (s in self.sizes and dies_at(s, n) and s is not self._storage(
                        self.loss_node) and self._nbytes_of(s) == self._nbytes_of(n)):
                    self.inplace_of[n] = s
                    last[s] = max(last[s], last.pop(n, pos[n]))
                    reads[s] += reads.pop(n, [])
                    break

    def _plan(self):
        self.inplace_of = {}
        pos = {}
        for i, item in enumerate(self.schedule):
            if item[0] == "node":
                pos[item[1]] = i
        last, reads = {}, {}
        for i, item in enumerate(self.schedule):
            readers = item[1].all_input_nodes if item[0] == "node" else [item[2]]
            for a in readers:
                s = self._storage(a)
                last[s] = max(last.get(s, 0), i)
                reads.setdefault(s, []).append((i, item[1]))
        end = len(self.schedule) - 1
        last[self._storage(self.loss_node)] = end
        if self.inplace:
            self._merge_inplace(pos, last, reads)
        x_node, y_node = [n for n in self.graph_module.graph.nodes if n.op == "placeholder"][:2]
        tangent = [n for n in self.graph_module.graph.nodes
                   if n.op == "placeholder" and n.name.startswith("tangents")]
        self.buffers = {}
        for n in [x_node, y_node] + tangent + list(self.sizes):
            if n not in self.inplace_of:
                self.buffers[n] = Buffer(n.name, self._nbytes_of(n), pos[n],
                                         max(last.get(n, pos[n]), pos[n]))
        self.arena_bytes = plan_arena(list(self.buffers.values()))
        self.param_sram_bytes = sum(_nbytes(p) for p, r in zip(self.parameters, self.trainable)
                                    if r)
        self.flash_bytes = sum(_nbytes(p) for p, r in zip(self.parameters, self.trainable)
                               if not r)

    # ------------------------------------------------------------------ running
    def _bind(self, example, params):
        env = {}
        ph = [n for n in self.graph_module.graph.nodes if n.op == "placeholder"]
        values = list(example) + list(params)
        for n in ph:
            env[n] = ones(()) if n.name.startswith("tangents") else values.pop(0)
        for n in self.graph_module.graph.nodes:
            if n.op == "get_attr":
                env[n] = getattr(self.graph_module, n.target)
        return env

    def _slot(self, arena, n):
        b = self.buffers[self._storage(n)]
        shape, dtype = self.layout[n]
        return arena[b.offset:b.offset + self._nbytes_of(n)].view(dtype).reshape(shape)

    def step(self, x, y):
        """One training step in the planned arena; updates `self.parameters` in place and
        returns the loss as a Python float."""
        arena = np.zeros(self.arena_bytes, np.uint8)
        env = self._bind((x, y), self.parameters)
        for n in list(env):
            if n in self.buffers:
                slot = self._slot(arena, n)
                np.copyto(slot, env[n].numpy())
                env[n] = from_numpy(slot)
        for item in self.schedule:
            if item[0] == "update":
                _, i, g = item
                self.parameters[i].add_(env[g], alpha=-self.lr)
                continue
            n = item[1]
            if n.op != "call_function":
                continue
            val = n.target(*map_arg(n.args, env.__getitem__), **map_arg(n.kwargs, env.__getitem__))
            if n in self.sizes:
                slot = self._slot(arena, n)
                np.copyto(slot, val.numpy())
                val = from_numpy(slot)
            elif n in self.view_of and not np.shares_memory(val.numpy(),
                                                            env[self.view_of[n]].numpy()):
                raise RuntimeError(f"ember.tiny: node {n.name} was planned as a view but its "
                                   "op made new storage")
            env[n] = val
        return float(env[self.loss_node].item())

    def state_dict(self):
        """Updated parameters under the BN-folded model's names (split layers joined)."""
        from .. import cat
        out = {}
        for name, p in zip(self.param_names, self.parameters):
            out[name] = p
        for key in [k for k in out if k.endswith(".weight_head")]:
            stem = key[:-len("_head")]
            out[stem] = cat([out.pop(key), out.pop(stem + "_tail")], 0)
        return out

    # ------------------------------------------------------------------ reports
    def peak_bytes(self):
        """Arena plus the trainable parameters (which must sit in SRAM)."""
        return self.arena_bytes + self.param_sram_bytes

    def timeline(self):
        """[(tensor name, offset, bytes, first step, last step)] of the arena plan."""
        return [(b.name, b.offset, b.nbytes, b.start, b.end) for b in self.buffers.values()]

    def memory_report(self, png=None):
        """Peak bytes for full update / bias-only / this scheme / this scheme reordered
        (each compiled from the same model and example), the arena's live lower bound and
        the per-tensor timeline (drawn to `png` when matplotlib is installed)."""
        model, example, loss = self._source

        def peak(scheme, reorder):
            if scheme.layers == self.scheme.layers and reorder == self.reorder:
                return self.peak_bytes()
            return TrainingProgram(model, example, loss, self.lr, scheme, reorder).peak_bytes()

        report = {
            "full": peak(UpdateScheme.full(model), False),
            "bias_only": peak(UpdateScheme.bias_only(model), False),
            "sparse": peak(self.scheme, False),
            "sparse_reorder": peak(self.scheme, True),
            "arena_bytes": self.arena_bytes,
            "live_peak_bytes": live_peak(list(self.buffers.values())),
            "param_sram_bytes": self.param_sram_bytes,
            "flash_bytes": self.flash_bytes,
            "timeline": self.timeline(),
        }
        if png is not None:
            report["png"] = plot_timeline(list(self.buffers.values()), png)
        return report


def compile_training(model, example, loss, optimizer="sgd", lr=0.01, scheme=None,
                     reorder=True, inplace=True):
    """Compile one training step of `model` on `example` = (input, target) with `loss`
    (e.g. nn.functional.cross_entropy) into a TrainingProgram. `scheme` (UpdateScheme)
    defaults to the full update; `reorder` moves updates next to their gradients;
    `inplace` lets pointwise ops overwrite an input that dies there."""
    if optimizer != "sgd":
        raise NotImplementedError(f"ember.tiny.compile_training: optimizer '{optimizer}' "
                                  "(only plain 'sgd' is compiled)")
    if not isinstance(model, nn.Module):
        raise TypeError(f"compile_training: model must be an nn.Module, got "
                        f"{type(model).__name__}")
    if not (isinstance(lr, (int, float)) and math.isfinite(lr) and lr > 0):
        raise ValueError(f"compile_training: invalid learning rate {lr!r}")
    scheme = scheme or UpdateScheme.full(model)
    return TrainingProgram(model, example, loss, float(lr), scheme, reorder, inplace)

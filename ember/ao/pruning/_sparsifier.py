"""torch.ao.pruning's BaseSparsifier and WeightNormSparsifier: masks as parametrizations.

Note: the flow PyTorch's 2:4 tutorial uses — `prepare(model, [{"tensor_fqn": ...}])` puts a
FakeSparsity mask on each weight, `step()` recomputes the masks from the weights' norms,
`squash_mask()` folds them into the weights — with
`WeightNormSparsifier(sparsity_level=1.0, sparse_block_shape=(1, 4), zeros_per_block=2)`
giving 2:4 weights ready for `to_sparse_semi_structured`. Masks are computed in NumPy
(block norms, then the smallest per block / the lowest-norm blocks), as PyTorch's topk
picks them; the parametrized weight is ember ops, so training through it works.
"""
import copy
import math
from collections import defaultdict

import numpy as np

from ... import nn
from ..._tensor import wrap
from ...autograd.grad_mode import no_grad
from ...nn.utils import parametrize
from ._utils import FakeSparsity, get_arg_info_from_tensor_fqn, module_to_fqn

__all__ = ["BaseSparsifier", "WeightNormSparsifier"]

SUPPORTED_MODULES = {nn.Linear}
KEYS_NOT_IN_STATE_DICT = ["module", "module_fqn", "tensor_name"]


class BaseSparsifier:
    """Holds per-tensor configs (`groups`) and masks (`state`); subclasses define
    `update_mask(module, tensor_name, **config)`."""

    def __init__(self, defaults=None):
        self.defaults = defaults or {}
        self.state = defaultdict(dict)
        self.groups = []
        self.enable_mask_update = True

    def __repr__(self):
        lines = [self.__class__.__name__ + " ("]
        for i, args in enumerate(self.groups):
            lines += [f"\tGroup {i}", f"\t    module: {args['module']}"]
            lines += [f"\t    {k}: {args[k]}" for k in sorted(args) if k != "module"]
        return "\n".join(lines) + ")"

    def state_dict(self):
        groups = [{k: v for k, v in g.items() if k not in KEYS_NOT_IN_STATE_DICT}
                  for g in self.groups]
        return {"state": self.state, "groups": groups}

    def make_config_from_model(self, model, SUPPORTED_MODULES=SUPPORTED_MODULES):
        """One config per weight of the supported modules (Linear) under `model`."""
        self.config = []
        stack = [model]
        while stack:
            module = stack.pop()
            for _, child in module.named_children():
                if type(child) in SUPPORTED_MODULES:
                    self.config.append({"tensor_fqn": module_to_fqn(model, child) + ".weight"})
                else:
                    stack.append(child)

    def prepare(self, model, config):
        """Attach a FakeSparsity mask to each configured tensor (the model is changed in
        place); `config` None: every Linear weight."""
        self.model, self.config = model, config
        if self.config is None:
            self.make_config_from_model(model)
        for module_config in self.config:
            if not isinstance(module_config, dict):
                raise AssertionError("config elements should be dicts not modules i.e.:"
                                     "[{`tensor_fqn`: `foo.bar.weight`}, {`tensor_fqn`: ... }, "
                                     "...]")
            local_args = copy.deepcopy(self.defaults)
            local_args.update(module_config)
            tensor_fqn = local_args.get("tensor_fqn")
            if tensor_fqn is None:
                raise AssertionError("tensor_fqn is a required argument in the sparsity config "
                                     "which replaces previous `module` and [module]`fqn` "
                                     "arguments")
            info = get_arg_info_from_tensor_fqn(model, tensor_fqn)
            for key in info:
                if key in local_args and not (info[key] == local_args[key] or (
                        key == "tensor_fqn" and "." + info[key] == local_args[key])):
                    raise AssertionError(f"Given both `{key}` and `tensor_fqn` in the config, "
                                         "it is expected them to agree!")
            local_args.update(info)
            self.groups.append(local_args)
        self._prepare()

    def _prepare(self):
        from ...ops.creation import ones_like
        for config in self.groups:
            module, name = config["module"], config["tensor_name"]
            mask = config.get("mask", ones_like(getattr(module, name)))
            self.state[config["tensor_fqn"]]["mask"] = mask
            parametrize.register_parametrization(
                module, name, config.get("parametrization", FakeSparsity)(mask))

    def squash_mask(self, params_to_keep=None, params_to_keep_per_layer=None, *args,
                    **kwargs):
        """Fold each mask into its tensor and remove the parametrization; optionally keep
        chosen config entries in `module.sparse_params`."""
        for config in self.groups:
            module = config["module"]
            parametrize.remove_parametrizations(module, config["tensor_name"],
                                                leave_parametrized=True)
            sparse_params = {}
            if params_to_keep is not None:
                sparse_params.update({k: config[k] for k in params_to_keep})
            if params_to_keep_per_layer is not None:
                keep = params_to_keep_per_layer.get(config["module_fqn"])
                if keep is not None:
                    sparse_params.update({k: config[k] for k in keep})
            if sparse_params:
                module.sparse_params = sparse_params

    def step(self, use_path=True):
        """Recompute every mask from the current weights."""
        if not self.enable_mask_update:
            return
        with no_grad():
            for config in self.groups:
                self.update_mask(**config)

    def update_mask(self, module, tensor_name, **kwargs):
        raise NotImplementedError(f"{type(self).__name__}.update_mask")


class WeightNormSparsifier(BaseSparsifier):
    """Zero the `sparsity_level` fraction of blocks (`sparse_block_shape`) with the lowest
    norm, keeping in each of them all but the `zeros_per_block` smallest values."""

    def __init__(self, sparsity_level=0.5, sparse_block_shape=(1, 4), zeros_per_block=None,
                 norm=None):
        if zeros_per_block is None:
            zeros_per_block = math.prod(sparse_block_shape)
        norm = 2 if norm is None else norm
        if callable(norm):
            self.norm_fn = norm
        elif norm == 1:
            self.norm_fn = lambda t: t.abs()
        elif norm == 2:
            self.norm_fn = lambda t: t * t
        else:
            raise NotImplementedError(f"L-{norm} is not yet implemented.")
        super().__init__(defaults={"sparsity_level": sparsity_level,
                                   "sparse_block_shape": sparse_block_shape,
                                   "zeros_per_block": zeros_per_block})

    def update_mask(self, module, tensor_name, sparsity_level, sparse_block_shape,
                    zeros_per_block, **kwargs):
        per_block = math.prod(sparse_block_shape)
        if zeros_per_block > per_block:
            raise ValueError("Number of zeros per block cannot be more than the total number of "
                             "elements in that block.")
        if zeros_per_block < 0:
            raise ValueError("Number of zeros per block should be positive.")
        mask = getattr(module.parametrizations, tensor_name)[0].mask
        if sparsity_level <= 0 or zeros_per_block == 0:
            new = np.ones(mask.shape, bool)
        elif sparsity_level >= 1.0 and zeros_per_block == per_block:
            new = np.zeros(mask.shape, bool)
        else:
            ww = np.asarray(self.norm_fn(getattr(module, tensor_name)).float()._data)
            new = _tensor_mask(ww, sparsity_level, sparse_block_shape)
            if per_block != zeros_per_block:
                new |= _block_mask(ww, sparse_block_shape, zeros_per_block)
        mask.copy_(wrap(new.astype(mask._data.dtype)))


def _blocks(a, shape, fill):
    """(h, w) -> (num_blocks, bh * bw), padded with `fill` to whole blocks (row-major)."""
    (h, w), (bh, bw) = a.shape, shape
    ph, pw = -h % bh, -w % bw
    p = np.pad(a, ((0, ph), (0, pw)), constant_values=fill)
    H, W = p.shape
    return p.reshape(H // bh, bh, W // bw, bw).transpose(0, 2, 1, 3).reshape(-1, bh * bw), (H, W)


def _unblocks(b, padded, shape, out):
    (H, W), (bh, bw) = padded, shape
    full = b.reshape(H // bh, W // bw, bh, bw).transpose(0, 2, 1, 3).reshape(H, W)
    return full[:out[0], :out[1]]


def _tensor_mask(ww, level, shape):
    """Blocks kept whole (True) except the round(level * n) with the lowest mean norm."""
    if level >= 1.0:
        return np.zeros(ww.shape, bool)
    blocks, padded = _blocks(ww, shape, 0.0)
    h, w = ww.shape
    (bh, bw), (H, W) = shape, padded
    # avg_pool2d(ceil_mode=True) over the unpadded data: a partial block's mean counts
    # only the elements inside the tensor
    counts = _blocks(np.ones_like(ww), shape, 0.0)[0].sum(1) if (H, W) != (h, w) else bh * bw
    means = blocks.sum(1) / counts
    k = max(0, min(len(means) - 1, round(level * len(means))))
    keep = np.ones(len(means), bool)
    keep[np.argsort(means, kind="stable")[:k]] = False
    return _unblocks(np.repeat(keep[:, None], bh * bw, 1), padded, shape, ww.shape)


def _block_mask(ww, shape, zeros):
    """In every block, False at its `zeros` smallest values (padding counts as NaN, last)."""
    blocks, padded = _blocks(ww, shape, np.nan)
    order = np.argsort(np.where(np.isnan(blocks), np.inf, blocks), axis=1, kind="stable")
    keep = np.ones(blocks.shape, bool)
    np.put_along_axis(keep, order[:, :zeros], False, axis=1)
    return _unblocks(keep, padded, shape, ww.shape)

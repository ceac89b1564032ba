"""fuse_modules: merge listed module sequences (Conv2d+BatchNorm2d(+ReLU), Conv2d+ReLU,
Linear+ReLU, Linear+BatchNorm1d) into one module before eager quantization, so convert
makes one int8 kernel of each (a folded BatchNorm, a relu clamped in the integers)."""
import copy

from ... import nn
from ...nn.utils.fusion import fuse_conv_bn_eval, fuse_linear_bn_eval
from ..nn import intrinsic as nni

__all__ = ["fuse_modules", "fuse_known_modules", "get_fuser_method"]


def _conv_bn(is_qat, conv, bn):
    if conv.training != bn.training:
        raise AssertionError("Conv and BN both must be in the same mode (train or eval).")
    if is_qat or conv.training:
        raise NotImplementedError("fuse_modules: Conv2d + BatchNorm2d in training mode (QAT's "
                                  "ConvBn2d) is not in ember; call model.eval() first")
    return fuse_conv_bn_eval(conv, bn)


def _conv_bn_relu(is_qat, conv, bn, relu):
    return nni.ConvReLU2d(_conv_bn(is_qat, conv, bn), relu)


def _linear_bn(is_qat, linear, bn):
    if linear.training != bn.training:
        raise AssertionError("Linear and BN both must be in the same mode (train or eval).")
    if is_qat or linear.training:
        raise NotImplementedError("fuse_modules: Linear + BatchNorm1d in training mode is not "
                                  "in ember; call model.eval() first")
    return fuse_linear_bn_eval(linear, bn)


_FUSERS = {
    (nn.Conv2d, nn.BatchNorm2d): _conv_bn,
    (nn.Conv2d, nn.BatchNorm2d, nn.ReLU): _conv_bn_relu,
    (nn.Conv2d, nn.ReLU): lambda is_qat, conv, relu: nni.ConvReLU2d(conv, relu),
    (nn.Linear, nn.ReLU): lambda is_qat, linear, relu: nni.LinearReLU(linear, relu),
    (nn.Linear, nn.BatchNorm1d): _linear_bn,
}


def get_fuser_method(op_list, additional_fuser_method_mapping=None):
    """The function that fuses modules of these types, in this order."""
    mapping = {**_FUSERS, **(additional_fuser_method_mapping or {})}
    fuser = mapping.get(tuple(op_list))
    if fuser is None:
        raise AssertionError(f"did not find fuser method for: {tuple(op_list)} ")
    return fuser


def fuse_known_modules(mod_list, is_qat=False, additional_fuser_method_mapping=None):
    """[fused module, Identity, ...]: one module for the list and identities in the places
    of the others."""
    fuser = get_fuser_method([type(m) for m in mod_list], additional_fuser_method_mapping)
    return [fuser(is_qat, *mod_list)] + [nn.Identity() for _ in mod_list[1:]]


def _get(model, name):
    for part in name.split("."):
        model = getattr(model, part)
    return model


def _set(model, name, module):
    *parents, last = name.split(".")
    for part in parents:
        model = getattr(model, part)
    setattr(model, last, module)


def fuse_modules(model, modules_to_fuse, inplace=False, fuser_func=fuse_known_modules,
                 fuse_custom_config_dict=None):
    """Fuses each list of qualified module names in `modules_to_fuse` (or the one list)."""
    if not inplace:
        model = copy.deepcopy(model)
    groups = modules_to_fuse if all(isinstance(g, (list, tuple)) for g in modules_to_fuse) \
        else [modules_to_fuse]
    for names in groups:
        fused = fuser_func([_get(model, n) for n in names], False)
        for name, module in zip(names, fused):
            _set(model, name, module)
    return model

"""QConfigMapping: which QConfig applies where (global, by module type or function, by
module name or name regex, by (name, type, index)), as torch.ao.quantization's builder."""
from collections import OrderedDict

from .qconfig import get_default_qat_qconfig, get_default_qconfig

__all__ = ["QConfigMapping", "get_default_qconfig_mapping", "get_default_qat_qconfig_mapping"]

_GLOBAL_DICT_KEY = ""
_STYLES = ("global_qconfig", "object_type_qconfigs", "module_name_regex_qconfigs",
           "module_name_qconfigs", "module_name_object_type_order_qconfigs")
_DICT_KEYS = ("object_type", "module_name_regex", "module_name",
              "module_name_object_type_order")


class QConfigMapping:
    """QConfigs in increasing match priority: global, object type, module name regex,
    module name, (module name, object type, index). Setters return self (chainable)."""

    def __init__(self):
        self.global_qconfig = None
        self.object_type_qconfigs = OrderedDict()
        self.module_name_regex_qconfigs = OrderedDict()
        self.module_name_qconfigs = OrderedDict()
        self.module_name_object_type_order_qconfigs = OrderedDict()

    def set_global(self, global_qconfig):
        self.global_qconfig = global_qconfig
        return self

    def set_object_type(self, object_type, qconfig):
        self.object_type_qconfigs[object_type] = qconfig
        return self

    def set_module_name_regex(self, module_name_regex, qconfig):
        self.module_name_regex_qconfigs[module_name_regex] = qconfig
        return self

    def set_module_name(self, module_name, qconfig):
        self.module_name_qconfigs[module_name] = qconfig
        return self

    def set_module_name_object_type_order(self, module_name, object_type, index, qconfig):
        self.module_name_object_type_order_qconfigs[(module_name, object_type, index)] = qconfig
        return self

    def __repr__(self):
        out = type(self).__name__ + " ("
        for style in _STYLES:
            out += f"\n {style}"
            qconfigs = getattr(self, style)
            if isinstance(qconfigs, OrderedDict) and qconfigs:
                for key, qconfig in qconfigs.items():
                    out += f"\n  {key}: {qconfig}"
            else:
                out += f"\n  {qconfigs}"
        return out + "\n)"

    def to_dict(self):
        d = {_GLOBAL_DICT_KEY: self.global_qconfig}
        for key, style in zip(_DICT_KEYS, _STYLES[1:]):
            items = getattr(self, style).items()
            d[key] = [(*k, v) for k, v in items] if key == _DICT_KEYS[-1] else list(items)
        return d

    @classmethod
    def from_dict(cls, qconfig_dict):
        conf = cls()
        if _GLOBAL_DICT_KEY in qconfig_dict:
            conf.set_global(qconfig_dict[_GLOBAL_DICT_KEY])
        for object_type, qconfig in qconfig_dict.get("object_type", []):
            conf.set_object_type(object_type, qconfig)
        for regex, qconfig in qconfig_dict.get("module_name_regex", []):
            conf.set_module_name_regex(regex, qconfig)
        for name, qconfig in qconfig_dict.get("module_name", []):
            conf.set_module_name(name, qconfig)
        for name, object_type, index, qconfig in qconfig_dict.get(
                "module_name_object_type_order", []):
            conf.set_module_name_object_type_order(name, object_type, index, qconfig)
        return conf


def get_default_qconfig_mapping(backend="x86", version=0):
    """A mapping whose global QConfig is get_default_qconfig(backend). (PyTorch's also
    lists fixed-qparams ops such as sigmoid; ember's FX-mode consumers are the pt2e flow,
    which takes quantizers instead.)"""
    return QConfigMapping().set_global(get_default_qconfig(backend, version))


def get_default_qat_qconfig_mapping(backend="x86", version=1):
    """A mapping whose global QConfig is get_default_qat_qconfig(backend)."""
    return QConfigMapping().set_global(get_default_qat_qconfig(backend, version))

"""nn.Module: parameters, buffers and submodules registered by attribute assignment.

Note: this follows torch.nn.Module's observable behaviour: the three registries
(_parameters, _buffers, _modules) are ordered dicts that __setattr__ fills and
__getattr__ reads; state_dict keys are dotted paths; load_state_dict reports
missing/unexpected keys with PyTorch's message; hooks run in PyTorch's order
(global hooks are not supported). Full backward hooks wrap the module's tensor
inputs and outputs in identity autograd Functions: the output one collects
grad_output (and runs backward pre-hooks), the input one fires the hooks with
grad_input.
"""
import itertools
import warnings
from collections import OrderedDict, namedtuple

from ... import _dtype as D
from ..._tensor import Tensor, _RemovableHandle
from ...profiler import _state as _prof_state
from ..parameter import Parameter, Buffer

__all__ = ["Module"]

_IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


class _IncompatibleKeysRepr(_IncompatibleKeys):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


_hook_ids = itertools.count()


def _addindent(s, n):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * n + line for line in lines[1:])


# bumped whenever a module hook is registered: a compiled graph captured without hooks
# stays valid while it is unchanged (one guard instead of four dict checks per module)
HOOKS_VERSION = [0]


class Module:
    """Base class for all neural network modules."""
    training = True
    _version = 1
    call_super_init = False
    dump_patches = False

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected argument; "
                            "Module.__init__ takes none")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = OrderedDict()
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = OrderedDict()
        d["_forward_hooks_always_called"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = OrderedDict()
        d["_backward_hooks"] = OrderedDict()
        d["_backward_pre_hooks"] = OrderedDict()
        d["_state_dict_hooks"] = OrderedDict()
        d["_load_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_post_hooks"] = OrderedDict()

    forward = None

    # ------------------------------------------------------------ registration
    def register_buffer(self, name, tensor, persistent=True):
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer "
                            f"'{name}' (torch Tensor or None required)")
        if isinstance(tensor, Buffer):
            persistent = tensor.persistent
            tensor = tensor.detach() if not tensor.requires_grad else tensor
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter "
                            f"'{name}' (torch.nn.Parameter or None required)")
        if param._grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             f"parameters must be created explicitly. To express '{name}' as "
                             "a function of another Tensor, compute the value in the forward() "
                             "method.")
        self._parameters[name] = param

    def add_module(self, name, module):
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        _check_name(name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target):
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def get_parameter(self, target):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        p = getattr(mod, name)
        if not isinstance(p, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return p

    def get_buffer(self, target):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return mod._buffers[name]

    # ------------------------------------------------------------- attributes
    def __getattr__(self, name):
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_buffers" in d and name in d["_buffers"]:
            return d["_buffers"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _remove_from(self, name, d, ("_buffers", "_modules"))
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            _remove_from(self, name, d, ("_parameters", "_buffers"))
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module "
                                f"'{name}' (torch.nn.Module or None expected)")
            modules[name] = value
            return
        buffers = d.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            if isinstance(value, Buffer):
                _remove_from(self, name, d, ("_parameters", "_modules"))
                self.register_buffer(name, value, value.persistent)
            else:
                buffers[name] = value
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        for reg in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(reg, ()):
                del self.__dict__[reg][name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = list(object.__dir__(self)) + list(self._parameters) + list(self._modules) + \
            list(self._buffers)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    def __setstate__(self, state):
        self.__dict__.update(state)
        for k in ("_forward_hooks_with_kwargs", "_forward_hooks_always_called",
                  "_forward_pre_hooks_with_kwargs", "_backward_pre_hooks",
                  "_state_dict_hooks", "_load_state_dict_pre_hooks",
                  "_load_state_dict_post_hooks"):
            self.__dict__.setdefault(k, OrderedDict())
        self.__dict__.setdefault("_non_persistent_buffers_set", set())

    # -------------------------------------------------------------- iteration
    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                   remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                   remove_duplicate)

    def children(self):
        for _, m in self.named_children():
            yield m

    def named_children(self):
        memo = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in memo:
                memo.add(id(m))
                yield name, m

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from m.named_modules(memo, sub, remove_duplicate)

    # ------------------------------------------------------------------- modes
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                if p.grad._grad_fn is not None:
                    p.grad.detach_()
                else:
                    p.grad.requires_grad_(False)
                p.grad.zero_()

    def share_memory(self):
        return self

    # ----------------------------------------------------- dtype / device moves
    def _apply(self, fn, recurse=True):
        if recurse:
            for m in self.children():
                m._apply(fn)
        for key, p in self._parameters.items():
            if p is None:
                continue
            new = fn(p)
            if new is p:
                continue
            param = Parameter(new.detach(), p.requires_grad)
            if p.grad is not None:
                param.grad = fn(p.grad)
            self._parameters[key] = param
        for key, b in self._buffers.items():
            if b is not None:
                self._buffers[key] = fn(b)
        return self

    def apply(self, fn):
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def to(self, *args, **kwargs):
        from ...ops.copy import _parse_to
        dev, dtype = _parse_to(args, {k: v for k, v in kwargs.items()
                                      if k in ("device", "dtype")})
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but "
                            f"got desired dtype={dtype}")

        def convert(t):
            if dtype is not None and (t.is_floating_point() or t.is_complex()):
                return t.to(dev, dtype) if dev is not None else t.to(dtype)
            return t.to(dev) if dev is not None else t
        return self._apply(convert)

    def _cast_floats(self, dtype):
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self):
        return self._cast_floats(D.float32)

    def double(self):
        return self._cast_floats(D.float64)

    def half(self):
        return self._cast_floats(D.float16)

    def bfloat16(self):
        return self._cast_floats(D.bfloat16)

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))

    def cpu(self):
        return self.to("cpu")      # no copies for tensors already there

    def cuda(self, device=None):
        return self.to("cuda")

    def to_empty(self, *, device=None, recurse=True):
        from ...ops.creation import empty_like
        return self._apply(lambda t: empty_like(t), recurse)

    # ------------------------------------------------------------ state_dict
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        extra = getattr(type(self), "get_extra_state", None)
        if extra is not None and extra is not Module.get_extra_state:
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def get_extra_state(self):
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never "
                           "be called.")

    def set_extra_state(self, state):
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never "
                           "be called.")

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        if args:
            destination = args[0] if len(args) > 0 else destination
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        meta = getattr(destination, "_metadata", None)
        if meta is not None:
            meta[prefix[:-1]] = {"version": self._version}
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".",
                             keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            r = hook(self, destination, prefix, {})
            if r is not None:
                destination = r
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # PyTorch's signature (subclasses override it): assign= travels in the metadata
        assign = local_metadata.get("assign_to_params_buffers", False)
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        persistent = {k: v for k, v in self._buffers.items()
                      if k not in self._non_persistent_buffers_set}
        local = {k: v for k, v in itertools.chain(self._parameters.items(), persistent.items())
                 if v is not None}
        for name, param in local.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected '
                                  f"torch.Tensor or Tensor-like object from checkpoint but "
                                  f"received {type(value)}")
                continue
            if tuple(value.shape) != tuple(param.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{value.shape} from checkpoint, the shape in current model "
                                  f"is {param.shape}.")
                continue
            try:
                if assign:
                    new = Parameter(value.detach(), param.requires_grad) \
                        if isinstance(param, Parameter) else value
                    setattr(self, name, new)
                else:
                    from ...autograd.grad_mode import no_grad
                    with no_grad():
                        param.copy_(value)
            except Exception as ex:
                error_msgs.append(f'While copying the parameter named "{key}", whose '
                                  f"dimensions in the model are {param.shape} and whose "
                                  f"dimensions in the checkpoint are {value.shape}, an "
                                  f"exception occurred : {ex.args}.")
        extra_key = prefix + "_extra_state"
        if getattr(type(self), "set_extra_state", None) is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    name = key[len(prefix):].split(".", 1)[0]
                    if name not in self._modules and name not in local:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        if not hasattr(state_dict, "keys"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)

        def load(module, prefix=""):
            local_meta = dict({} if metadata is None else metadata.get(prefix[:-1], {}))
            if assign:
                local_meta["assign_to_params_buffers"] = assign
            module._load_from_state_dict(state_dict, prefix, local_meta, True, missing,
                                         unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    load(child, prefix + name + ".")
            incompatible = _IncompatibleKeysRepr(missing, unexpected)
            for hook in module._load_state_dict_post_hooks.values():
                hook(module, incompatible)
        load(self)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: " +
                              ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: " +
                              ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeysRepr(missing, unexpected)

    def register_state_dict_post_hook(self, hook):
        return self._add_hook(self._state_dict_hooks, hook)

    register_state_dict_hook = register_state_dict_post_hook

    def register_load_state_dict_pre_hook(self, hook):
        return self._add_hook(self._load_state_dict_pre_hooks,
                              lambda sd, p, lm, s, mk, uk, em: hook(self, sd, p, lm, s, mk, uk,
                                                                    em))

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        if with_module:
            return self.register_load_state_dict_pre_hook(hook)
        return self._add_hook(self._load_state_dict_pre_hooks, hook)

    def register_load_state_dict_post_hook(self, hook):
        return self._add_hook(self._load_state_dict_post_hooks, hook)

    # ------------------------------------------------------------------ hooks
    def _add_hook(self, registry, hook, prepend=False):
        HOOKS_VERSION[0] += 1        # compiled code re-checks modules' hooks (ember._dynamo)
        key = next(_hook_ids)
        registry[key] = hook
        if prepend:
            registry.move_to_end(key, last=False)
        return _RemovableHandle(registry, key)

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        handle = self._add_hook(self._forward_pre_hooks, hook, prepend)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle._item] = True
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        handle = self._add_hook(self._forward_hooks, hook, prepend)
        key = handle._item
        if with_kwargs:
            self._forward_hooks_with_kwargs[key] = True
        if always_call:
            self._forward_hooks_always_called[key] = True
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        return self._add_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook, prepend=False):
        return self._add_hook(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook):
        warnings.warn("Using a non-full backward hook when the forward contains multiple "
                      "autograd Nodes is deprecated; ember runs it as a full backward hook.")
        return self.register_full_backward_hook(hook)

    # ------------------------------------------------------------------- call
    def _call_impl(self, *args, **kwargs):
        fwd = self.forward
        if fwd is None:
            raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                      '"forward" function')
        if not (self._forward_hooks or self._forward_pre_hooks or self._backward_hooks
                or self._backward_pre_hooks or _prof_state.ACTIVE[0] is not None):
            return fwd(*args, **kwargs)
        return self._hooked_call(fwd, args, kwargs)

    __call__ = _call_impl

    def compile(self, *args, **kwargs):
        """Compiles this module's forward in place (ember.compile's options); hooks still
        run around it, and state_dict keys do not change (unlike ember.compile(module))."""
        import types
        from ... import compile as _compile
        self.__dict__["forward"] = _compile(types.MethodType(type(self).forward, self),
                                            *args, **kwargs)

    def _hooked_call(self, fwd, args, kwargs):
        prof = _prof_state.ACTIVE[0]
        if prof is not None:
            _prof_state.push_module(type(self).__name__)
            ev = prof._begin(f"nn.Module: {type(self).__name__}") \
                if prof._recording and prof.with_modules else None
        try:
            for key, hook in list(self._forward_pre_hooks.items()):
                if key in self._forward_pre_hooks_with_kwargs:
                    r = hook(self, args, kwargs)
                    if r is not None:
                        args, kwargs = r
                else:
                    r = hook(self, args)
                    if r is not None:
                        args = r if isinstance(r, tuple) else (r,)
            bw = None
            if self._backward_hooks or self._backward_pre_hooks:
                from ._backward_hook import BackwardHook
                bw = BackwardHook(self)
                args = bw.setup_input_hook(args)
            try:
                result = fwd(*args, **kwargs)
            except BaseException:
                for key, hook in list(self._forward_hooks.items()):
                    if key in self._forward_hooks_always_called:
                        try:
                            hook(self, args, None) if key not in \
                                self._forward_hooks_with_kwargs else hook(self, args, kwargs,
                                                                          None)
                        except Exception:
                            pass
                raise
            for key, hook in list(self._forward_hooks.items()):
                if key in self._forward_hooks_with_kwargs:
                    r = hook(self, args, kwargs, result)
                else:
                    r = hook(self, args, result)
                if r is not None:
                    result = r
            if bw is not None:
                result = bw.setup_output_hook(result)
            return result
        finally:
            if prof is not None:
                if ev is not None:
                    prof._end(ev)
                _prof_state.pop_module()

    # ------------------------------------------------------------------- repr
    def extra_repr(self):
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        children = []
        for key, m in self._modules.items():
            mod_str = _addindent(repr(m), 2)
            children.append("(" + key + "): " + mod_str)
        lines = lines + children
        main = self._get_name() + "("
        if lines:
            if len(extra.split("\n")) == 1 and not children:
                main += extra
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def __getstate__(self):
        return self.__dict__.copy()


def _check_name(name, what):
    if not isinstance(name, str):
        raise TypeError(f"{what} name should be a string. Got {type(name).__name__}")
    if name == "":
        raise KeyError(f'{what} name can\'t be empty string ""')
    if "." in name:
        raise KeyError(f'{what} name can\'t contain "."')


def _remove_from(self, name, d, regs):
    for reg in regs:
        r = d.get(reg)
        if r is not None and name in r:
            del r[name]
    d.pop(name, None)

"""Config modules (torch.utils._config_module): a module of settings with checked writes.

Why: `ember._dynamo.config` and friends are plain modules of settings that users set
(`config.cache_size_limit = 16`) and patch (`with config.patch(verbose=True): ...`, or as a
decorator), as in PyTorch. A typo must fail loudly instead of creating a new attribute that
nothing reads, so writes and reads of unknown names raise AttributeError
("ember._dynamo.config.foo does not exist", PyTorch's text).

Values live in the module's own `__dict__`, so reading a setting on a hot path (a guard
check) is a plain module attribute read. An alias (`cache_size_limit` for
`recompile_limit`, as in PyTorch 2.13) is kept equal to its target on every write.

Deliberately different from PyTorch: patched values are process-wide, not per-context
(PyTorch keeps them in a ContextVar, so a thread started later does not see them).
"""
import contextlib
import copy
import pickle
import sys
import types
import unittest

__all__ = ["Config", "install_config_module", "ConfigModule", "get_tristate_env"]


class Config:
    """Declares a setting with extra behaviour; a plain value needs no Config.

    `alias="module.name"` makes the setting another name for that one (both always read the
    same value); `default` is the value otherwise.
    """

    def __init__(self, default=None, *, alias=None):
        self.default = default
        self.alias = alias


def get_tristate_env(name, default=None):
    """True for "1", False for "0", else `default` (PyTorch's helper of the same name)."""
    import os
    value = os.environ.get(name)
    if value == "1":
        return True
    if value == "0":
        return False
    return default


def _is_setting(name, value):
    if name.startswith("_") or getattr(type(value), "__module__", None) == "typing":
        return False
    return not isinstance(value, (types.ModuleType, types.FunctionType, type,
                                  types.BuiltinFunctionType, contextlib.AbstractContextManager))


class ConfigModule(types.ModuleType):
    """The class every installed config module gets: checked setattr, patch, copies."""

    _defaults: dict
    _aliases: dict           # alias name -> target name (same module)

    def __setattr__(self, name, value):
        if name in self._defaults:
            d = self.__dict__
            d[name] = value
            for alias, target in self._aliases.items():
                if target == name:
                    d[alias] = value
        elif name in self._aliases:
            self.__setattr__(self._aliases[name], value)
        elif name.startswith("_") or name in self.__dict__:
            super().__setattr__(name, value)
        else:
            raise AttributeError(f"{self.__name__}.{name} does not exist")

    def __getattr__(self, name):     # only called when the name is not in __dict__
        raise AttributeError(f"{self.__name__}.{name} does not exist")

    def __delattr__(self, name):
        # unittest.mock.patch(create=True) deletes what it added; a setting goes back to
        # its default instead of disappearing
        if name in self._defaults or name in self._aliases:
            target = self._aliases.get(name, name)
            self.__setattr__(target, copy.deepcopy(self._defaults[target]))
        else:
            super().__delattr__(name)

    # -- PyTorch's config-module API ----------------------------------------------------

    def get_config_copy(self):
        """{name: value} of every setting (aliases left out, as PyTorch)."""
        return {k: copy.deepcopy(self.__dict__[k]) for k in self._defaults}

    def save_config(self):
        """The settings as pickled bytes (for load_config in another process)."""
        return pickle.dumps(self.get_config_copy(), protocol=2)

    def load_config(self, maybe_pickled_config):
        """Apply settings from save_config's bytes or from a dict; unknown names raise."""
        config = maybe_pickled_config
        if not isinstance(config, dict):
            config = pickle.loads(config)
        for k, v in config.items():
            self._check_name(k)
            setattr(self, k, v)

    def _check_name(self, name):
        if name not in self._defaults and name not in self._aliases:
            raise AttributeError(f"{self.__name__}.{name} does not exist")

    def patch(self, arg1=None, arg2=None, **kwargs):
        """Temporary changes, as a context manager or a decorator.

            @config.patch("name", val)
            @config.patch(name1=val1, name2=val2)
            @config.patch({"name1": val1, "name2": val2})
            with config.patch("name", val): ...
        """
        if arg1 is not None:
            if arg2 is not None:
                if not isinstance(arg1, str):
                    raise AssertionError(
                        "first argument must be a string when passing 2 positional args to patch")
                changes = {arg1: arg2}
            else:
                if not isinstance(arg1, dict):
                    raise AssertionError(
                        "first argument must be a dict when passing a single positional arg "
                        "to patch")
                changes = arg1
            if kwargs:
                raise AssertionError("cannot pass both positional and keyword arguments to patch")
        else:
            changes = kwargs
            if arg2 is not None:
                raise AssertionError(
                    "second positional argument is only valid when first argument is a key "
                    "string")
        if not isinstance(changes, dict):
            raise AssertionError(f"expected `dict` got {type(changes)}")
        for k in changes:
            self._check_name(k)
        return _ConfigPatch(self, dict(changes))


class _ConfigPatch(contextlib.ContextDecorator):
    """One patch; re-entrant (each `with` keeps its own prior values on a stack)."""

    def __init__(self, config, changes):
        self.config = config
        self.changes = changes
        self._prior = []

    def __enter__(self):
        prior = {k: getattr(self.config, k) for k in self.changes}
        for k, v in self.changes.items():
            setattr(self.config, k, v)
        self._prior.append(prior)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        for k, v in self._prior.pop().items():
            setattr(self.config, k, v)
        return False

    def __call__(self, func):
        if isinstance(func, type) and issubclass(func, unittest.TestCase):
            patch = self

            class _TestCase(func):
                @classmethod
                def setUpClass(cls):
                    patch.__enter__()
                    try:
                        super().setUpClass()
                    except Exception:
                        patch.__exit__(None, None, None)
                        raise

                @classmethod
                def tearDownClass(cls):
                    try:
                        super().tearDownClass()
                    finally:
                        patch.__exit__(None, None, None)

            _TestCase.__name__ = func.__name__
            _TestCase.__qualname__ = func.__qualname__
            _TestCase.__module__ = func.__module__
            return _TestCase
        return super().__call__(func)


def install_config_module(module):
    """Turn `module` (usually `sys.modules[__name__]`) into a ConfigModule.

    Every public module-level value that is not a module, function, class or context
    manager becomes a setting; a `Config(alias=...)` becomes an alias of another setting of
    the same module.
    """
    if isinstance(module, str):
        module = sys.modules[module]
    defaults, aliases = {}, {}
    for name, value in list(vars(module).items()):
        if not _is_setting(name, value):
            continue
        if isinstance(value, Config):
            if value.alias is not None:
                mod_name, _, target = value.alias.rpartition(".")
                if mod_name != module.__name__:
                    raise AssertionError(
                        f"config alias {value.alias} must name a setting of {module.__name__}")
                aliases[name] = target
                continue
            value = value.default
            module.__dict__[name] = value
        defaults[name] = copy.deepcopy(value)
    for alias, target in aliases.items():
        if target not in defaults:
            raise AssertionError(f"config alias {module.__name__}.{target} does not exist")
        module.__dict__[alias] = module.__dict__[target]
    module.__dict__["_defaults"] = defaults
    module.__dict__["_aliases"] = aliases
    module.__class__ = type("ConfigModuleInstance", (ConfigModule,), {})
    return module

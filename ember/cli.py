"""`ember run script.py [args...]`: run an unmodified PyTorch program on ember.

Note: an import hook makes `torch` and every `torch.<sub>` module resolve to
`ember` / `ember.<sub>` (torch.nn -> ember.nn, torch.utils.data -> ember.utils.data), and
`torchvision[.sub]` to `ember.vision[.sub]` (torchaudio to ember.audio, where it exists);
the `torch` seen by the program is a thin module that forwards attributes to ember
and raises AttributeError naming the torch attribute ember does not provide.
"""
import importlib
import importlib.abc
import importlib.util
import runpy
import sys
import types

__all__ = ["main", "install_torch_alias"]


class _TorchProxy(types.ModuleType):
    """`torch` for a program run by `ember run`: forwards to `ember`."""

    def __init__(self, target, name):
        super().__init__(name)
        self.__dict__["_target"] = target
        self.__dict__["__path__"] = []          # a package, so submodule imports work
        self.__dict__["__file__"] = getattr(target, "__file__", None)

    def __getattr__(self, attr):
        target = self.__dict__["_target"]
        try:
            return getattr(target, attr)
        except AttributeError:
            pass
        try:                               # torch.nn etc. as attributes
            return importlib.import_module(f"{target.__name__}.{attr}")
        except ModuleNotFoundError:
            pass
        raise AttributeError(f"ember does not support {self.__name__}.{attr} (module "
                             f"'{self.__name__}' has no attribute '{attr}' in ember)")

    def __setattr__(self, attr, value):
        # The import system stamps __spec__/__package__/... on the module it creates and
        # binds submodules as attributes of their parent: those belong to the proxy. Writing
        # them through would rename ember's own modules (relative imports inside ember would
        # then resolve under torch.*). A program's own assignments (cudnn.benchmark = True)
        # go through to ember.
        if (attr.startswith("__") and attr.endswith("__")) or isinstance(value, _TorchProxy):
            self.__dict__[attr] = value
        else:
            setattr(self.__dict__["_target"], attr, value)

    def __dir__(self):
        return dir(self.__dict__["_target"])


# top-level PyTorch-ecosystem packages and the ember packages that serve them
_ALIASES = {"torch": "ember", "torchvision": "ember.vision", "torchaudio": "ember.audio"}


def _alias_root(fullname):
    """'torchvision.models' -> 'torchvision'; None for modules the hook does not serve."""
    root = fullname.partition(".")[0]
    return root if root in _ALIASES else None


class _TorchFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves `torch[.sub...]` (and torchvision/torchaudio) imports to ember proxies."""

    def find_spec(self, fullname, path=None, target=None):
        if _alias_root(fullname) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self, is_package=True)

    def create_module(self, spec):
        root = _alias_root(spec.name)
        name = _ALIASES[root] + spec.name[len(root):]
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as e:
            raise ModuleNotFoundError(f"ember does not provide {spec.name} (no module "
                                      f"{name})", name=spec.name) from e
        return _TorchProxy(mod, spec.name)

    def exec_module(self, module):
        pass


def install_torch_alias():
    """From now on `import torch` gives ember (idempotent)."""
    for name in [n for n in sys.modules if _alias_root(n) is not None]:
        del sys.modules[name]
    if not any(isinstance(f, _TorchFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _TorchFinder())
    _follow_into_spawned_children()


class _AliasInChild:
    """Unpickled first in a 'spawn'/'forkserver' child (inside multiprocessing's
    preparation data), so the alias is in place before the child re-imports the main
    script (torch.multiprocessing.spawn children see ember as torch too)."""

    def __reduce__(self):
        # by its importable name: under `python -m ember.cli` this module is __main__,
        # and the child could not look install_torch_alias up there
        return (importlib.import_module("ember.cli").install_torch_alias, ())


def _follow_into_spawned_children():
    import multiprocessing.spawn as mp_spawn
    if getattr(mp_spawn.get_preparation_data, "_ember_alias", False):
        return
    original = mp_spawn.get_preparation_data

    def get_preparation_data(name):
        data = original(name)
        data["ember_torch_alias"] = _AliasInChild()      # prepare() ignores unknown keys
        return data
    get_preparation_data._ember_alias = True
    mp_spawn.get_preparation_data = get_preparation_data


def _usage():
    print("usage: ember run script.py [args...]\n"
          "       ember --version", file=sys.stderr)
    return 2


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        return _usage()
    if argv[0] == "--version":
        import ember
        print(f"ember {ember.__version__}")
        return 0
    if argv[0] != "run" or len(argv) < 2:
        return _usage()
    script, args = argv[1], argv[2:]
    install_torch_alias()
    sys.argv = [script] + args
    sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())

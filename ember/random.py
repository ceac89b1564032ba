"""ember.random (torch.random): seeding and saving the default generator's state."""
import contextlib

from . import _random
from ._random import Generator, default_generator

__all__ = ["manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
           "fork_rng", "default_generator", "Generator"]


def manual_seed(seed, generator=None):
    """Seeds the default generator; returns it (as torch.manual_seed does). Like PyTorch,
    the seed goes through int() first: "7" works, "a" is a ValueError.

    `generator="mt19937"` switches to PyTorch's CPU engine, so rand/randn/randint/randperm,
    normal_/uniform_/bernoulli_, dropout and nn.init give PyTorch's numbers for the same
    seed (ember/_mt19937.py); `"philox"` switches back to ember's own. The choice also
    becomes the engine of Generators created later (a DataLoader's), and stays for later
    manual_seed calls without the argument. EMBER_RNG=mt19937 in the environment starts
    ember with it."""
    if isinstance(seed, (str, float)) or seed is None:
        seed = int(seed)
    if generator is not None:
        _random._DEFAULTS["engine"] = default_generator._set_engine(generator) or generator
    return default_generator.manual_seed(seed)


def seed():
    """Seeds the default generator from the OS's entropy source; returns the seed."""
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state as a uint8 tensor (seed and offset, 16 bytes)."""
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type="cuda"):
    """Restores the default generator's state on exit. ember's generators are all on
    the cpu, so `devices`/`device_type` name no other state to save."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)

"""ember._dynamo.config: PyTorch's setting names and defaults, checked writes, patch()."""
import os
import subprocess
import sys
import unittest

import pytest

import ember._dynamo.config as config

torch = pytest.importorskip("torch")
import torch._dynamo.config as tconfig  # noqa: E402

NAMES = ["cache_size_limit", "accumulated_cache_size_limit", "recompile_limit",
         "accumulated_recompile_limit", "automatic_dynamic_shapes", "assume_static_by_default",
         "suppress_errors", "capture_scalar_outputs", "capture_dynamic_output_shape_ops",
         "verbose", "specialize_int", "force_parameter_static_shapes", "error_on_recompile"]


def test_defaults_match_torch():
    assert config.cache_size_limit == 8 and config.accumulated_cache_size_limit == 256
    for name in NAMES:
        assert getattr(config, name) == getattr(tconfig, name), name
    for name in config.get_config_copy():         # every setting is one of PyTorch's
        assert hasattr(tconfig, name), name
        assert getattr(config, name) == getattr(tconfig, name), name


def test_unknown_names_raise_attribute_error_like_torch():
    for cfg, prefix in ((config, "ember"), (tconfig, "torch")):
        with pytest.raises(AttributeError, match=rf"^{prefix}\._dynamo\.config\.foo does not exist$"):
            cfg.foo = 1
        with pytest.raises(AttributeError, match=rf"^{prefix}\._dynamo\.config\.foo does not exist$"):
            cfg.foo
        with pytest.raises(AttributeError, match=rf"^{prefix}\._dynamo\.config\.foo does not exist$"):
            with cfg.patch(foo=1):
                pass


def test_alias_follows_target():
    try:
        config.cache_size_limit = 3
        assert config.recompile_limit == 3
        config.recompile_limit = 5
        assert config.cache_size_limit == 5
        assert "cache_size_limit" not in config.get_config_copy()
    finally:
        config.recompile_limit = 8
    assert config.cache_size_limit == 8


def test_patch_forms():
    with config.patch(cache_size_limit=2, verbose=True) as p:
        assert (config.recompile_limit, config.verbose) == (2, True)
        with p:                                  # re-entrant
            assert config.cache_size_limit == 2
        assert config.cache_size_limit == 2
    assert (config.cache_size_limit, config.verbose) == (8, False)
    with config.patch("suppress_errors", True):
        assert config.suppress_errors is True
    with config.patch({"capture_scalar_outputs": True}):
        assert config.capture_scalar_outputs is True
    assert not config.suppress_errors and not config.capture_scalar_outputs

    @config.patch(error_on_recompile=True)
    def f(depth):
        assert config.error_on_recompile
        return f(depth - 1) if depth else config.error_on_recompile
    assert f(2) is True and config.error_on_recompile is False

    with pytest.raises(ZeroDivisionError):
        with config.patch(specialize_int=True):
            1 / 0
    assert config.specialize_int is False


def test_patch_decorates_testcase_class():
    @config.patch(verbose=True)
    class T(unittest.TestCase):
        def test_it(self):
            assert config.verbose

    result = unittest.TextTestRunner(stream=open(os.devnull, "w")).run(
        unittest.defaultTestLoader.loadTestsFromTestCase(T))
    assert result.wasSuccessful() and config.verbose is False


def test_patch_argument_errors_match_torch():
    for cfg in (config, tconfig):
        with pytest.raises(AssertionError, match="must be a dict when passing a single"):
            cfg.patch("verbose")
        with pytest.raises(AssertionError, match="must be a string when passing 2"):
            cfg.patch({"verbose": True}, True)
        with pytest.raises(AssertionError, match="cannot pass both positional and keyword"):
            cfg.patch({"verbose": True}, verbose=True)


def test_save_load_config_round_trip():
    saved = config.save_config()
    with config.patch(recompile_limit=1):
        config.load_config(saved)
        assert config.recompile_limit == 8
        config.load_config({"recompile_limit": 4})
        assert config.cache_size_limit == 4
    with pytest.raises(AttributeError, match="does not exist"):
        config.load_config({"nope": 1})


def test_env_vars_are_torchs():
    env = dict(os.environ, TORCHDYNAMO_VERBOSE="1", TORCHDYNAMO_SUPPRESS_ERRORS="1",
               TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS="1",
               TORCHDYNAMO_CAPTURE_DYNAMIC_OUTPUT_SHAPE_OPS="1",
               TORCH_DYNAMO_AUTOMATIC_DYNAMIC_SHAPES="0")
    code = ("import ember._dynamo.config as c; print(c.verbose, c.suppress_errors, "
            "c.capture_scalar_outputs, c.capture_dynamic_output_shape_ops, "
            "c.automatic_dynamic_shapes)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=60)
    assert out.stdout.split() == ["True", "True", "True", "True", "False"], out.stderr

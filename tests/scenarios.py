"""Scenario tests: a function of the library module runs under ember and under torch,
and the two outcomes (values, dtypes, requires_grad, or the exception) must agree."""
import warnings

import numpy as np

from oracle import torch
import ember


def norm(v):
    """Comparable form: tensors -> (values, dtype, requires_grad); errors -> (type, message)."""
    if isinstance(v, (ember.Tensor, torch.Tensor)):
        return (np.round(v.detach().numpy().astype(np.float64), 5).tolist(),
                str(v.dtype), v.requires_grad)
    if isinstance(v, (tuple, list)):
        return type(v)(norm(x) for x in v)
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()}
    return v


def outcome(fn, L):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return norm(fn(L))
        except Exception as e:        # the error is part of the behaviour compared
            return (type(e).__name__, str(e)[:160])


class Scenarios(dict):
    """A registry of scenario functions; use the instance as a decorator."""

    def __call__(self, fn):
        self[fn.__name__] = fn
        return fn

    def check(self, name):
        fn = self[name]
        assert outcome(fn, ember) == outcome(fn, torch)

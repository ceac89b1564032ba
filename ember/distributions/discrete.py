"""Discrete distributions: Bernoulli, Categorical, OneHotCategorical, Geometric, Poisson,
Binomial. Parameterised by probs or logits as PyTorch does (exactly one of them).
"""
from numbers import Number

import ember
import ember.nn.functional as F

from . import constraints
from .distribution import Distribution, ExponentialFamily
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli", "Binomial", "Categorical", "Geometric", "OneHotCategorical",
           "OneHotCategoricalStraightThrough", "Poisson"]


def _one_of(probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


class _BinaryProbsLogits:
    """probs and logits of a two-outcome parameter, each computed lazily from the one given.

    Shared by Bernoulli, Geometric, Binomial, NegativeBinomial and LogitRelaxedBernoulli,
    which all store exactly one of them (PyTorch repeats these two properties in each).
    """

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)


class _BinaryParam(_BinaryProbsLogits):
    """A two-outcome parameter stored as given (probs or logits) and as `_param`: its setting,
    its re-binding on expand and param_shape, shared by Bernoulli, Binomial, NegativeBinomial
    and LogitRelaxedBernoulli."""

    def _set_param(self, probs, logits, total_count=None):
        """Broadcasts the one of probs/logits given (with total_count, cast to its dtype);
        returns whether it was a plain number (a scalar batch)."""
        _one_of(probs, logits)
        name, value = ("probs", probs) if probs is not None else ("logits", logits)
        if total_count is None:
            (param,) = broadcast_all(value)
        else:
            total_count, param = broadcast_all(total_count, value)
            self.total_count = total_count.type_as(param)
        setattr(self, name, param)
        self._param = param
        return isinstance(value, Number)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._param = new.__dict__.get("probs", new.__dict__.get("logits"))
        return new

    @property
    def param_shape(self):
        return self._param.size()


class Bernoulli(_BinaryParam, ExponentialFamily):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0
    _expand_params = ("probs", "logits")

    def __init__(self, probs=None, logits=None, validate_args=None):
        is_scalar = self._set_param(probs, logits)
        batch_shape = ember.Size() if is_scalar else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return ember.where(self.probs == 0.5, ember.full_like(mode, float("nan")), mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        with ember.no_grad():
            return ember.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = ember.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values

    @property
    def _natural_params(self):
        return (ember.logit(self.probs),)

    def _log_normalizer(self, x):
        return ember.log1p(ember.exp(x))


class Categorical(Distribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(
        constraints.real, 1)}
    has_enumerate_support = True
    _expand_params = ("probs", "logits")

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.ndimension() > 1 else ember.Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._param = new.__dict__.get("probs", new.__dict__.get("logits"))
        new._num_events = self._num_events
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        return ember.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype,
                          device=self.probs.device)

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return ember.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype,
                          device=self.probs.device)

    def sample(self, sample_shape=ember.Size()):
        if not isinstance(sample_shape, ember.Size):
            sample_shape = ember.Size(sample_shape)
        with ember.no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            samples_2d = ember.multinomial(probs_2d, sample_shape.numel(), True).T
            return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = ember.broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self):
        min_real = ember.finfo(self.logits.dtype).min
        logits = ember.clamp(self.logits, min=min_real)
        p_log_p = logits * self.probs
        return -p_log_p.sum(-1)

    def enumerate_support(self, expand=True):
        num_events = self._num_events
        values = ember.arange(num_events, dtype=ember.long, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values


class _CategoricalBacked:
    """probs, logits and param_shape read from the wrapped `self._categorical` (OneHotCategorical,
    Multinomial and ExpRelaxedCategorical hold one rather than their own parameter)."""

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape


class OneHotCategorical(_CategoricalBacked, Distribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(OneHotCategorical, _instance)
        batch_shape = ember.Size(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self):
        return self._categorical._param

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        mode = probs.argmax(dim=-1)
        return F.one_hot(mode, num_classes=probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self):
        return self._categorical.probs * (1 - self._categorical.probs)

    def sample(self, sample_shape=ember.Size()):
        sample_shape = ember.Size(sample_shape)
        probs = self._categorical.probs
        num_events = self._categorical._num_events
        indices = self._categorical.sample(sample_shape)
        return F.one_hot(indices, num_events).to(probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        indices = value.max(-1)[1]
        return self._categorical.log_prob(indices)

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = ember.eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = values.expand((n,) + tuple(self.batch_shape) + (n,))
        return values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """One-hot samples whose gradient is the probabilities' (straight-through estimator)."""
    has_rsample = True

    def rsample(self, sample_shape=ember.Size()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())


class Geometric(_BinaryProbsLogits, Distribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer
    _expand_params = ("probs", "logits")

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            param, is_scalar = self.probs, isinstance(probs, Number)
        else:
            (self.logits,) = broadcast_all(logits)
            param, is_scalar = self.logits, isinstance(logits, Number)
        batch_shape = ember.Size() if is_scalar else param.size()
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            value = self.probs
            if not bool((value > 0).all()):
                raise ValueError(
                    f"Expected parameter probs ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {repr(self)} to be positive but "
                    f"found invalid values:\n{value[~(value > 0)]}")

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return ember.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        tiny = ember.finfo(self.probs.dtype).tiny
        with ember.no_grad():
            u = ember.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
            u = u.clamp(min=tiny)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = ember.where((probs == 1) & (value == 0), ember.zeros_like(probs), probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs,
                                                  reduction="none") / self.probs


def _poisson_sample(rate):
    """Poisson draws in ember ops: inversion for rates < 10, Hörmann's PTRS rejection above."""
    lam = rate.detach().to(ember.float64)
    small = lam < 10
    # inversion by sequential search (expected lam + 1 steps)
    lam_s = ember.where(small, lam, ember.zeros_like(lam))
    u = ember.rand(lam.shape, dtype=ember.float64, device=lam.device)
    k = ember.zeros_like(lam)
    p = ember.exp(-lam_s)
    s = p.clone()
    active = u > s
    while bool(active.any()):
        k = k + active.to(k.dtype)
        p = p * lam_s / k.clamp(min=1)
        s = s + p
        active = active & (u > s)
    # PTRS for large rates
    lam_b = ember.where(small, ember.full_like(lam, 10.0), lam)
    slam, loglam = lam_b.sqrt(), lam_b.log()
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    invalpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2)
    out = ember.zeros_like(lam)
    done = small.clone()
    while not bool(done.all()):
        uu = ember.rand(lam.shape, dtype=ember.float64, device=lam.device) - 0.5
        v = ember.rand(lam.shape, dtype=ember.float64, device=lam.device)
        us = 0.5 - uu.abs()
        kk = ((2 * a / us + b) * uu + lam_b + 0.43).floor()
        fast = (us >= 0.07) & (v <= vr)
        reject = (kk < 0) | ((us < 0.013) & (v > us))
        kk_safe = kk.clamp(min=0)
        slow = (v.log() + invalpha.log() - (a / (us * us) + b).log()
                <= -lam_b + kk_safe * loglam - ember.lgamma(kk_safe + 1))
        ok = (fast | (~reject & slow)) & ~done
        out = ember.where(ok, kk_safe, out)
        done = done | ok
    return ember.where(small, k, out).to(rate.dtype)


class Poisson(ExponentialFamily):
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer
    _expand_params = ("rate",)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = ember.Size() if isinstance(rate, Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def sample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        with ember.no_grad():
            return _poisson_sample(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self):
        return (ember.log(self.rate),)

    def _log_normalizer(self, x):
        return ember.exp(x)


def _clamp_by_zero(x):
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(_BinaryParam, Distribution):
    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True
    _expand_params = ("total_count", "probs", "logits")

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        self._set_param(probs, logits, total_count)
        super().__init__(self._param.size(), validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        with ember.no_grad():
            n = self.total_count.expand(shape)
            p = self.probs.expand(shape)
            return _binomial_sample(n, p)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = ember.lgamma(self.total_count + 1)
        log_factorial_k = ember.lgamma(value + 1)
        log_factorial_nmk = ember.lgamma(self.total_count - value + 1)
        normalize_term = (self.total_count * _clamp_by_zero(self.logits)
                          + self.total_count * ember.log1p(ember.exp(-ember.abs(self.logits)))
                          - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self):
        total_count = int(self.total_count.max())
        if not bool(self.total_count.min() == total_count):
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(ember.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total_count = int(self.total_count.max())
        if not bool(self.total_count.min() == total_count):
            raise NotImplementedError(
                "Inhomogeneous total count not supported by `enumerate_support`.")
        values = ember.arange(1 + total_count, dtype=self._param.dtype,
                              device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values


def _binomial_sample(count, prob):
    """Binomial draws in ember ops: inversion when n*min(p, 1-p) < 10, Hormann's BTRS
    rejection otherwise (exact log-pmf ratio in the squeeze test); cost does not grow with n."""
    n = count.to(ember.float64)
    p = prob.to(ember.float64)
    flip = p > 0.5
    q = ember.where(flip, 1 - p, p)
    small = n * q < 10
    zeros = ember.zeros_like(n)
    # inversion by sequential search, expected n*q + 1 steps
    qs, ns = ember.where(small, q, zeros), ember.where(small, n, zeros)
    r = qs / (1 - qs)
    pmf = (1 - qs) ** ns
    cdf = pmf.clone()
    u = ember.rand(n.shape, dtype=ember.float64, device=n.device)
    k = zeros.clone()
    active = (u > cdf) & (k < ns)
    while bool(active.any()):
        k = k + active.to(k.dtype)
        pmf = ember.where(active, pmf * (ns - k + 1) / k.clamp(min=1) * r, pmf)
        cdf = cdf + ember.where(active, pmf, zeros)
        active = active & (u > cdf) & (k < ns)
    # BTRS for n*q >= 10
    qb = ember.where(small, ember.full_like(q, 0.5), q)
    nb = ember.where(small, ember.full_like(n, 40.0), n)
    spq = (nb * qb * (1 - qb)).sqrt()
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * qb
    c = nb * qb + 0.5
    v_r = 0.92 - 4.2 / b
    rb = qb / (1 - qb)
    alpha = (2.83 + 5.1 / b) * spq
    m = ((nb + 1) * qb).floor()
    log_fm = ember.lgamma(m + 1) + ember.lgamma(nb - m + 1)
    out = zeros.clone()
    done = small.clone()
    while not bool(done.all()):
        uu = ember.rand(n.shape, dtype=ember.float64, device=n.device) - 0.5
        v = ember.rand(n.shape, dtype=ember.float64, device=n.device)
        us = 0.5 - uu.abs()
        kk = ((2 * a / us + b) * uu + c).floor()
        fast = (us >= 0.07) & (v <= v_r)
        inside = (kk >= 0) & (kk <= nb)
        ks = kk.clamp(min=0).minimum(nb)
        log_ratio = (log_fm - ember.lgamma(ks + 1) - ember.lgamma(nb - ks + 1)
                     + (ks - m) * rb.log())
        slow = (v * alpha / (a / (us * us) + b)).log() <= log_ratio
        ok = inside & (fast | slow) & ~done
        out = ember.where(ok, ks, out)
        done = done | ok
    res = ember.where(small, k, out)
    res = ember.where(flip, n - res, res)
    return res.to(prob.dtype)

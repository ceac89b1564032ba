"""Gamma-based distributions: Gamma, Chi2, Beta, Dirichlet, StudentT.

Gamma draws use Marsaglia-Tsang rejection in ember ops; their gradient w.r.t. the
concentration is the implicit reparameterisation gradient dx/da = -(dP(a,x)/da) / p(x; a),
with dP/da taken by a central difference of ember.special.gammainc in float64.
"""
import math
from numbers import Number, Real

import ember
from ember.autograd import Function

from . import constraints
from .distribution import ExponentialFamily, Distribution
from .utils import _standard_normal, broadcast_all

__all__ = ["Beta", "Chi2", "Dirichlet", "Gamma", "StudentT"]


def _marsaglia_tsang(alpha):
    a = alpha.detach().to(ember.float64)
    boost = a < 1
    a1 = ember.where(boost, a + 1, a)
    d = a1 - 1.0 / 3.0
    c = 1.0 / (9.0 * d).sqrt()
    out = ember.ones_like(a)
    done = ember.zeros_like(a, dtype=ember.bool)
    while not bool(done.all()):
        z = ember.randn(a.shape, dtype=ember.float64, device=a.device)
        u = ember.rand(a.shape, dtype=ember.float64, device=a.device)
        v = (1 + c * z) ** 3
        v_safe = v.clamp(min=1e-300)
        ok = (v > 0) & (u.log() < 0.5 * z * z + d - d * v_safe + d * v_safe.log()) & ~done
        out = ember.where(ok, d * v_safe, out)
        done = done | ok
    u = ember.rand(a.shape, dtype=ember.float64, device=a.device)
    out = ember.where(boost, out * u.pow(1.0 / a), out)
    tiny = ember.finfo(alpha.dtype).tiny
    return out.to(alpha.dtype).clamp(min=tiny)


def _standard_gamma_grad(alpha, x):
    a = alpha.to(ember.float64)
    xd = x.to(ember.float64)
    h = 1e-4 * a.clamp(max=1.0) * a.clamp(min=1.0).sqrt()
    dp = (ember.special.gammainc(a + h, xd) - ember.special.gammainc(a - h, xd)) / (2 * h)
    log_pdf = (a - 1) * xd.log() - xd - ember.lgamma(a)
    grad = -dp / log_pdf.exp()
    grad = ember.where(ember.isfinite(grad), grad, ember.zeros_like(grad))
    return grad.to(x.dtype)


class _StandardGamma(Function):
    @staticmethod
    def forward(ctx, alpha):
        x = _marsaglia_tsang(alpha)
        ctx.save_for_backward(alpha, x)
        return x

    @staticmethod
    def backward(ctx, grad):
        alpha, x = ctx.saved_tensors
        return grad * _standard_gamma_grad(alpha.detach(), x.detach())


def _standard_gamma(concentration):
    """Gamma(concentration, 1) draws, differentiable w.r.t. concentration."""
    return _StandardGamma.apply(concentration)


class Gamma(ExponentialFamily):
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0
    _expand_params = ("concentration", "rate")

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        batch_shape = ember.Size() if isinstance(concentration, Number) and \
            isinstance(rate, Number) else self.concentration.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return value.clamp(min=ember.finfo(value.dtype).tiny)

    def log_prob(self, value):
        value = ember.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (ember.xlogy(self.concentration, self.rate)
                + ember.xlogy(self.concentration - 1, value)
                - self.rate * value - ember.lgamma(self.concentration))

    def entropy(self):
        return (self.concentration - ember.log(self.rate) + ember.lgamma(self.concentration)
                + (1.0 - self.concentration) * ember.digamma(self.concentration))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ember.special.gammainc(self.concentration, self.rate * value)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return ember.lgamma(x + 1) + (x + 1) * ember.log(-y.reciprocal())


class Chi2(Gamma):
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        (df,) = broadcast_all(df)
        super().__init__(0.5 * df, ember.tensor(0.5, dtype=df.dtype, device=df.device),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        batch_shape = ember.Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def df(self):
        return self.concentration * 2


class Dirichlet(ExponentialFamily):
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True
    _expand_params = ("concentration",)

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        concentration = self.concentration.expand(shape)
        g = _standard_gamma(concentration)
        out = g / g.sum(-1, keepdim=True)
        finfo = ember.finfo(out.dtype)
        return out.clamp(min=finfo.tiny, max=1 - finfo.eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (ember.xlogy(self.concentration - 1.0, value).sum(-1)
                + ember.lgamma(self.concentration.sum(-1))
                - ember.lgamma(self.concentration).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        mask = (self.concentration < 1).all(dim=-1, keepdim=True)
        one_hot = ember.nn.functional.one_hot(self.concentration.argmax(dim=-1),
                                              self.concentration.shape[-1]).to(mode.dtype)
        return ember.where(mask, one_hot, mode)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, True)
        return (self.concentration * (con0 - self.concentration)
                / (con0.pow(2) * (con0 + 1)))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (ember.lgamma(self.concentration).sum(-1) - ember.lgamma(a0)
                - (k - a0) * ember.digamma(a0)
                - ((self.concentration - 1.0) * ember.digamma(self.concentration)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - ember.lgamma(x.sum(-1))


class Beta(ExponentialFamily):
    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        if isinstance(concentration1, Real) and isinstance(concentration0, Real):
            c1_c0 = ember.tensor([float(concentration1), float(concentration0)])
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            c1_c0 = ember.stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(c1_c0, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = ember.Size(batch_shape)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = ember.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self):
        return self._dirichlet.entropy()

    @property
    def concentration1(self):
        result = self._dirichlet.concentration[..., 0]
        return ember.tensor([float(result)]) if isinstance(result, Number) else result

    @property
    def concentration0(self):
        result = self._dirichlet.concentration[..., 1]
        return ember.tensor([float(result)]) if isinstance(result, Number) else result

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return ember.lgamma(x) + ember.lgamma(y) - ember.lgamma(x + y)


class StudentT(Distribution):
    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def mean(self):
        m = self.loc.clone()
        return ember.where(self.df <= 1, ember.full_like(m, float("nan")), m)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        m = self.scale.pow(2) * self.df / (self.df - 2)
        m = ember.where(self.df <= 2, ember.full_like(m, float("inf")), m)
        return ember.where(self.df <= 1, ember.full_like(m, float("nan")), m)

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        batch_shape = self.df.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = ember.Size(batch_shape)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new._chi2 = self._chi2.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        X = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        Z = self._chi2.rsample(sample_shape)
        Y = X * ember.rsqrt(Z / self.df)
        return self.loc + self.scale * Y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        Z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + ember.lgamma(0.5 * self.df) - ember.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * ember.log1p(y ** 2.0 / self.df) - Z

    def entropy(self):
        lbeta = (ember.lgamma(0.5 * self.df) + math.lgamma(0.5)
                 - ember.lgamma(0.5 * (self.df + 1)))
        return (self.scale.log()
                + 0.5 * (self.df + 1) * (ember.digamma(0.5 * (self.df + 1))
                                         - ember.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)

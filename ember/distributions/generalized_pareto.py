"""GeneralizedPareto(loc, scale, concentration): sampled by inverting its cdf."""
import math
from numbers import Number, Real

import ember

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True
    _expand_params = ("loc", "scale", "concentration")

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = all(isinstance(v, Number) for v in (loc, scale, concentration))
        super().__init__(ember.Size() if scalar else self.loc.size(),
                         validate_args=validate_args)

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        u = ember.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def _safe(self):
        eq_zero = ember.isclose(self.concentration, ember.zeros_like(self.concentration))
        return eq_zero, ember.where(eq_zero, ember.ones_like(self.concentration),
                                    self.concentration)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe()
        y = 1 / safe_conc + ember.ones_like(z)
        where_nonzero = ember.where(y == 0, y, y * ember.log1p(safe_conc * z))
        log_scale = math.log(self.scale) if isinstance(self.scale, Real) else self.scale.log()
        return -log_scale - ember.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe()
        where_nonzero = -ember.log1p(safe_conc * z) / safe_conc
        return ember.where(eq_zero, -z, where_nonzero)

    def log_cdf(self, value):
        return ember.log1p(-ember.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return ember.exp(self.log_cdf(value))

    def icdf(self, value):
        eq_zero, safe_conc = self._safe()
        logu = ember.log1p(-value)
        where_nonzero = self.loc + self.scale / safe_conc * ember.expm1(-safe_conc * logu)
        where_zero = self.loc - self.scale * logu
        return ember.where(eq_zero, where_zero, where_nonzero)

    def _z(self, x):
        return (x - self.loc) / self.scale

    @property
    def mean(self):
        valid = self.concentration < 1
        safe_conc = ember.where(valid, self.concentration, ember.full_like(self.scale, 0.5))
        result = self.loc + self.scale / (1 - safe_conc)
        return ember.where(valid, result, ember.full_like(result, math.nan))

    @property
    def variance(self):
        valid = self.concentration < 0.5
        safe_conc = ember.where(valid, self.concentration, ember.full_like(self.scale, 0.25))
        result = self.scale ** 2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc))
        return ember.where(valid, result, ember.full_like(result, math.nan))

    def entropy(self):
        ans = ember.log(self.scale) + self.concentration + 1
        return ember.broadcast_to(ans, self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = ember.where(self.concentration < 0, lower - self.scale / self.concentration,
                            ember.full_like(lower, math.inf))
        return constraints.interval(lower, upper)

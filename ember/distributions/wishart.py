"""Wishart(df, covariance_matrix | precision_matrix | scale_tril): Bartlett-decomposition
samples (differentiable through the Chi2 draws), log_prob/entropy in ember ops."""
import math
import warnings
from numbers import Number

import ember

from . import constraints
from .distribution import Distribution, ExponentialFamily
from .gamma import Chi2
from .multivariate_normal import _scale_tril_from
from .utils import lazy_property

__all__ = ["Wishart"]

_log_2 = math.log(2)


def _mvdigamma(x, p):
    if not bool(x.gt((p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    return ember.digamma(x.unsqueeze(-1) - ember.arange(p, dtype=x.dtype).div(2).expand(
        tuple(x.shape) + (-1,))).sum(-1)


def _clamp_above_eps(x):
    return x.clamp(min=ember.finfo(x.dtype).eps)


class Wishart(ExponentialFamily):
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if (covariance_matrix is not None) + (scale_tril is not None) + \
                (precision_matrix is not None) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril)
                     if p is not None)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, Number):
            batch_shape = ember.Size(param.shape[:-2])
            self.df = ember.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = ember.broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        if bool(self.df.le(event_shape[-1] - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = "
                             f"{event_shape[-1] - 1}.")
        full = tuple(batch_shape) + (-1, -1)
        if scale_tril is not None:
            self.scale_tril = param.expand(full)
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(full)
        else:
            self.precision_matrix = param.expand(full)
        if bool(self.df.lt(event_shape[-1]).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur "
                          "for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        self._unbroadcasted_scale_tril = _scale_tril_from(scale_tril, covariance_matrix,
                                                          precision_matrix)
        self._dist_chi2 = self._make_chi2(self.df, batch_shape)

    def _make_chi2(self, df, batch_shape):
        p = self._event_shape[-1]
        ar = ember.arange(p, dtype=self._unbroadcasted_scale_tril.dtype)
        return Chi2(df=df.unsqueeze(-1) - ar.expand(tuple(batch_shape) + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = ember.Size(batch_shape)
        cov_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._make_chi2(new.df, batch_shape)
        new._validate_args = self._validate_args
        return new

    def _full(self):
        return tuple(self._batch_shape) + tuple(self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._full())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return ember.matmul(L, L.transpose(-2, -1)).expand(self._full())

    @lazy_property
    def precision_matrix(self):
        identity = ember.eye(self._event_shape[-1], dtype=self._unbroadcasted_scale_tril.dtype)
        return ember.cholesky_solve(identity, self._unbroadcasted_scale_tril).expand(
            self._full())

    @property
    def mean(self):
        return self.df.view(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = ember.where(factor <= 0, ember.full_like(factor, math.nan), factor)
        return factor.view(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self.df.view(tuple(self._batch_shape) + (1, 1)) * (
            V.pow(2) + diag_V.unsqueeze(-1) * diag_V.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=ember.Size()):
        diag = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt()).diag_embed(
            dim1=-2, dim2=-1)
        off = ember.randn(diag.shape, dtype=diag.dtype).tril(-1)
        chol = ember.matmul(self._unbroadcasted_scale_tril, diag + off)
        return ember.matmul(chol, chol.transpose(-2, -1))

    def rsample(self, sample_shape=ember.Size(), max_try_correction=None):
        """Redraws (up to max_try_correction times) samples that come out singular."""
        max_try_correction = 10 if max_try_correction is None else max_try_correction
        sample_shape = ember.Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        singular = ~self.support.check(sample)
        if bool(singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                fresh = self._bartlett_sampling(sample_shape)
                sample = ember.where(singular.unsqueeze(-1).unsqueeze(-1), fresh, sample)
                singular = ~self.support.check(sample)
                if not bool(singular.any()):
                    break
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return (-nu * (p * _log_2 / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                - ember.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * ember.linalg.slogdet(value).logabsdet
                - ember.cholesky_solve(value, L).diagonal(dim1=-2, dim2=-1).sum(dim=-1) / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return ((p + 1) * (p * _log_2 / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                + ember.mvlgamma(nu / 2, p=p) - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p)
                + nu * p / 2)

    @property
    def _natural_params(self):
        nu = self.df
        p = self._event_shape[-1]
        return (-self.precision_matrix / 2, (nu - p - 1) / 2)

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-ember.linalg.slogdet(-2 * x).logabsdet + _log_2 * p)
                + ember.mvlgamma(y + (p + 1) / 2, p=p))

"""ember.distributions: PyTorch's torch.distributions on ember ops.

Parameters, samples, log-densities and KL terms are ember tensors, so gradients flow
through rsample/log_prob/entropy back to the parameters.
"""
from . import constraints, transforms  # noqa: F401
from .constraint_registry import biject_to, transform_to
from .continuous import Cauchy, Exponential, Laplace, Normal, Uniform
from .counts import ContinuousBernoulli, Multinomial, NegativeBinomial, VonMises
from .discrete import (Bernoulli, Binomial, Categorical, Geometric, OneHotCategorical,
                       OneHotCategoricalStraightThrough, Poisson)
from .distribution import Distribution, ExponentialFamily
from .gamma import Beta, Chi2, Dirichlet, Gamma, StudentT
from .heavy_tails import (FisherSnedecor, InverseGamma, Kumaraswamy, LogisticNormal, Pareto,
                          Weibull)
from .generalized_pareto import GeneralizedPareto
from .kl import kl_divergence, register_kl
from . import kl_cross  # noqa: F401,E402  (registers the cross-family KL pairs)
from .lkj_cholesky import LKJCholesky
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .multivariate_normal import MultivariateNormal
from .transformed_family import (ExpRelaxedCategorical, Gumbel, HalfCauchy, HalfNormal,
                                 LogitRelaxedBernoulli, LogNormal, RelaxedBernoulli,
                                 RelaxedOneHotCategorical)
from .transforms import *  # noqa: F401,F403
from .transforms import __all__ as _transforms_all
from .wishart import Wishart
from .wrappers import Independent, MixtureSameFamily, TransformedDistribution

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "Dirichlet",
           "ContinuousBernoulli", "FisherSnedecor", "GeneralizedPareto",
           "LKJCholesky", "LowRankMultivariateNormal", "Wishart", "InverseGamma", "Kumaraswamy",
           "LogisticNormal", "Multinomial", "NegativeBinomial", "Pareto", "VonMises", "Weibull",
           "Distribution", "ExpRelaxedCategorical", "Exponential", "ExponentialFamily",
           "Gamma", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent",
           "Laplace", "LogNormal", "LogitRelaxedBernoulli", "MixtureSameFamily",
           "MultivariateNormal", "Normal", "OneHotCategorical",
           "OneHotCategoricalStraightThrough", "Poisson", "RelaxedBernoulli",
           "RelaxedOneHotCategorical", "StudentT", "TransformedDistribution", "Uniform",
           "biject_to", "constraints", "kl_divergence", "register_kl", "transform_to",
           "transforms"] + list(_transforms_all)

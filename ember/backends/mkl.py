"""torch.backends.mkl: ember's BLAS is NumPy's; MKL is not used by ember itself."""


def is_available():
    return False

"""torch.backends.openmp: eager ember runs no OpenMP code of its own."""


def is_available():
    return False

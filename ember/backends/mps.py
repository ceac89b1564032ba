"""torch.backends.mps: no Metal backend in ember."""


def is_available():
    return False


def is_built():
    return False

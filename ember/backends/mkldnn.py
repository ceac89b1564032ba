"""torch.backends.mkldnn: ember has no oneDNN kernels, so it reports none."""
enabled = True


def is_available():
    return False

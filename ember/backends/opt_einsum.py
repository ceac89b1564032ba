"""torch.backends.opt_einsum: ember's einsum picks its contraction order without opt_einsum."""
enabled = False
strategy = None


def is_available():
    return False

"""tests/programs: the 'slow' marker names the longer program runs (still run by make test)."""


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a longer tests/programs case (still run by make test)")

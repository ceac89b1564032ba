import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a longer tests/programs case (still run by make test)")

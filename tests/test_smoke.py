import numpy as np

from oracle import check, randn, NC


def test_add_mul_exp():
    check(lambda L, a, b: (a * b + a.exp()).sum(), randn(3, 4), randn(4))


def test_broadcast_and_noncontig():
    check(lambda L, a, b: a + b, NC(randn(3, 4)), randn(4))


def test_promotion():
    check(lambda L, a: a * 2.5, np.arange(4, dtype=np.int32), grad=False)

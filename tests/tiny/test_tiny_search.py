"""ember.tiny data, models, fine-tuning and scheme search on small inputs."""
import numpy as np
import pytest

import ember
from ember import nn
from ember.models import TINY_MODELS
from ember.tiny import UpdateScheme
from ember.tiny.data import SHAPES, TEXTURES, shapes_dataset, textures_dataset
from ember.tiny.finetune import finetune, with_new_head
from ember.tiny.search import scheme_peak_bytes, search_update_scheme


@pytest.mark.parametrize("make,classes", [(shapes_dataset, SHAPES),
                                          (textures_dataset, TEXTURES)])
def test_datasets_are_seeded(make, classes):
    x, y = make(40, size=16, seed=3)
    assert tuple(x.shape) == (40, 3, 16, 16) and x.dtype == ember.float32
    assert y.dtype == ember.int64 and 0 <= int(y.min()) and int(y.max()) < len(classes)
    assert float(x.abs().max()) <= 1.0
    assert np.array_equal(x.numpy(), make(40, size=16, seed=3)[0].numpy())
    assert not np.array_equal(x.numpy(), make(40, size=16, seed=4)[0].numpy())


def test_models_run_at_128():
    for name, make in TINY_MODELS.items():
        model = make(5).eval()
        with ember.no_grad():
            assert tuple(model(ember.randn(1, 3, 128, 128)).shape) == (1, 5), name


def _small():
    ember.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(), nn.Conv2d(8, 16, 3, 2, 1),
                         nn.ReLU(), nn.Conv2d(16, 16, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Linear(16, 4))


def test_finetune_lowers_loss():
    model = with_new_head(_small(), len(TEXTURES))
    train = textures_dataset(16, 16, seed=0)  # one batch, seen again each epoch: it must fit
    acc, losses, prog = finetune(model, UpdateScheme({"4": 1.0}), train, train, epochs=20,
                                 batch=16, lr=0.5)
    assert losses[-1] < 0.95 * losses[0]
    assert acc > 1 / len(TEXTURES)
    # the fresh classifier is always trained, the frozen first conv is not
    assert prog.scheme.rule("8") == 1.0 and prog.scheme.rule("0") == "frozen"


def test_search_fits_budget():
    model = with_new_head(_small(), len(TEXTURES))
    train, val = textures_dataset(64, 16, seed=0), textures_dataset(32, 16, seed=1)
    example = (train[0][:1], train[1][:1])
    budget = scheme_peak_bytes(model, example, UpdateScheme.bias_only(model)) / 1024
    scheme, info = search_update_scheme(model, (train, val), budget_kb=budget, num_layers=2,
                                        population=4, generations=2,
                                        finetune_kw=dict(epochs=1, batch=16, lr=0.2))
    assert info["peak_bytes"] <= budget * 1024
    assert info["score"] >= 0  # classifier-only is feasible and scores 0
    assert set(scheme.layers) <= {"0", "2", "4"}
    assert set(info["gains"]) == {"0", "2", "4"}
    assert set(info["gains"]["0"]) == {"bias"}  # weight channels only for the last two
    assert {"bias", 0.25, 1.0} <= set(info["gains"]["4"])

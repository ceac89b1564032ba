"""ember.vision.models against torchvision's own model code: same state_dict keys and shapes,
and, with torchvision's (randomly initialised) weights loaded, the same outputs."""
import numpy as np
import pytest
from tv_oracle import load_torch_state, to_np, torch, torchvision

import ember
import ember.vision.models as models

# builder name -> kwargs; all are built in both libraries and compared key by key
KEYS_ONLY = {
    "resnet18": {}, "resnet34": {}, "resnet50": {}, "resnet101": {},
    "mobilenet_v2": {}, "mobilenet_v3_large": {}, "mobilenet_v3_small": {},
    "squeezenet1_0": {}, "squeezenet1_1": {}, "densenet121": {}, "densenet161": {},
    "efficientnet_b0": {}, "efficientnet_b3": {}, "efficientnet_b5": {},
}
SEG = {
    "fcn_resnet50": {"aux_loss": True}, "deeplabv3_resnet50": {"aux_loss": True},
    "deeplabv3_mobilenet_v3_large": {"aux_loss": True}, "lraspp_mobilenet_v3_large": {},
}


def _tv_build(name, kwargs, seg=False, device=None):
    tv = torchvision()
    mod = tv.models.segmentation if seg else tv.models
    extra = {"weights_backbone": None} if seg else {}
    with torch.device(device or "cpu"):
        return getattr(mod, name)(weights=None, **extra, **kwargs)


def _shapes(sd):
    return {k: tuple(v.shape) for k, v in sd.items()}


@pytest.mark.parametrize("name", sorted(KEYS_ONLY))
def test_state_dict_keys_and_shapes_match_torchvision(name):
    ref = _tv_build(name, KEYS_ONLY[name])
    ours = getattr(models, name)(**KEYS_ONLY[name])
    assert _shapes(ours.state_dict()) == _shapes(ref.state_dict())
    assert list(ours.state_dict()) == list(ref.state_dict())      # same order, too


def test_vgg_state_dict_matches_torchvision(monkeypatch):
    """VGG's 100M-parameter classifier is slow to initialise: torchvision's side on 'meta',
    ember's Linear layers left uninitialised (only names and shapes are compared)."""
    ref = _tv_build("vgg11_bn", {"num_classes": 10}, device="meta")
    monkeypatch.setattr(ember.nn.Linear, "reset_parameters", lambda self: None)
    ours = models.vgg11_bn(num_classes=10, init_weights=False)
    assert _shapes(ours.state_dict()) == _shapes(ref.state_dict())
    tv = torchvision()
    for cfg in "BDE":
        assert (_shapes(models.vgg.make_layers(models.vgg.cfgs[cfg]).state_dict())
                == _shapes(tv.models.vgg.make_layers(tv.models.vgg.cfgs[cfg]).state_dict()))


@pytest.mark.parametrize("name", sorted(SEG))
def test_segmentation_state_dict_matches_torchvision(name):
    ref = _tv_build(name, SEG[name], seg=True)
    ours = getattr(models.segmentation, name)(**SEG[name])
    assert _shapes(ours.state_dict()) == _shapes(ref.state_dict())


# (name, kwargs, input size): torchvision's weights loaded, eval-mode outputs compared
FORWARD = [
    ("resnet18", {"num_classes": 10}, 32),
    ("resnet50", {"num_classes": 10}, 32),
    ("mobilenet_v2", {"num_classes": 10}, 32),
    ("mobilenet_v3_small", {"num_classes": 10}, 32),
    ("mobilenet_v3_large", {"num_classes": 10}, 32),
    ("efficientnet_b0", {"num_classes": 10}, 32),
    ("densenet121", {"num_classes": 10}, 32),
    ("squeezenet1_1", {"num_classes": 10}, 48),
    ("alexnet", {"num_classes": 10, "dropout": 0.0}, 64),
]


def _randomise_bn(ref):
    """Non-trivial running statistics, so eval-mode BatchNorm is really exercised."""
    g = torch.Generator().manual_seed(0)
    for m in ref.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)


@pytest.mark.parametrize("name,kwargs,size", FORWARD, ids=[f[0] for f in FORWARD])
def test_forward_matches_torchvision_with_its_weights(name, kwargs, size):
    ref = _tv_build(name, kwargs).eval()
    with torch.no_grad():
        _randomise_bn(ref)
    ours = getattr(models, name)(**kwargs).eval()
    load_torch_state(ours, ref)
    x = np.random.RandomState(0).randn(2, 3, size, size).astype(np.float32)
    with torch.no_grad():
        expected = ref(torch.from_numpy(x)).numpy()
    with ember.no_grad():
        got = to_np(ours(ember.tensor(x)))
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name,kwargs", [
    ("deeplabv3_mobilenet_v3_large", {"num_classes": 3, "aux_loss": True}),
    ("lraspp_mobilenet_v3_large", {"num_classes": 3})])
def test_segmentation_forward_matches_torchvision(name, kwargs):
    ref = _tv_build(name, kwargs, seg=True).eval()
    ours = getattr(models.segmentation, name)(**kwargs).eval()
    load_torch_state(ours, ref)
    x = np.random.RandomState(1).randn(1, 3, 40, 40).astype(np.float32)
    with torch.no_grad():
        expected = ref(torch.from_numpy(x))
    with ember.no_grad():
        got = ours(ember.tensor(x))
    assert list(got) == list(expected) == (["out", "aux"] if "aux_loss" in kwargs else ["out"])
    for k in expected:
        assert tuple(got[k].shape) == (1, 3, 40, 40)
        np.testing.assert_allclose(to_np(got[k]), expected[k].numpy(), rtol=1e-4, atol=1e-4)


def test_fcn_forward_shapes_and_errors():
    m = models.segmentation.fcn_resnet50(num_classes=4).eval()
    with ember.no_grad():
        out = m(ember.randn(1, 3, 33, 35))
    assert list(out) == ["out"] and tuple(out["out"].shape) == (1, 4, 33, 35)
    with pytest.raises(NotImplementedError, match="pretrained"):
        models.resnet18(weights="IMAGENET1K_V1")
    with pytest.raises(ValueError, match="SqueezeNet version"):
        models.SqueezeNet("2_0")


def test_training_step_runs_and_stochastic_depth():
    m = models.efficientnet_b0(num_classes=3, stochastic_depth_prob=0.5)
    x = ember.randn(2, 3, 32, 32)
    loss = ember.nn.functional.cross_entropy(m(x), ember.tensor([0, 2]))
    loss.backward()
    assert all(p.grad is not None for p in m.parameters())
    from ember.vision.ops import stochastic_depth
    y = stochastic_depth(ember.ones(1000, 2), 0.5, "row", training=True)
    kept = (y[:, 0] != 0).float().mean().item()
    assert 0.4 < kept < 0.6 and set(np.unique(to_np(y)).tolist()) <= {0.0, 2.0}
    with pytest.raises(ValueError):
        stochastic_depth(y, 1.5, "row")


def test_ember_models_alias_and_registry():
    import ember.models
    assert ember.models.resnet18 is models.resnet18
    assert "efficientnet_b0" in models.list_models()
    assert isinstance(models.get_model("squeezenet1_1", num_classes=2), models.SqueezeNet)


def test_torchvision_checkpoint_file_loads_with_ember_load(tmp_path):
    """The user's path: torch.save(torchvision_model.state_dict()) -> ember.load -> same logits."""
    ref = _tv_build("mobilenet_v3_small", {"num_classes": 5}).eval()
    with torch.no_grad():
        _randomise_bn(ref)
    torch.save(ref.state_dict(), tmp_path / "mnv3.pt")
    ours = models.mobilenet_v3_small(num_classes=5).eval()
    ours.load_state_dict(ember.load(str(tmp_path / "mnv3.pt")))
    x = np.random.RandomState(2).randn(1, 3, 32, 32).astype(np.float32)
    with torch.no_grad():
        expected = ref(torch.from_numpy(x)).numpy()
    with ember.no_grad():
        got = to_np(ours(ember.tensor(x)))
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_legacy_pretrained_keyword():
    """torchvision < 0.13 scripts: pretrained=False builds (with torchvision's warning)."""
    with pytest.warns(UserWarning, match="'pretrained' is deprecated"):
        m = models.squeezenet1_1(pretrained=False, num_classes=3)
    assert m.num_classes == 3
    with pytest.warns(UserWarning), pytest.raises(NotImplementedError, match="pretrained"):
        models.resnet18(pretrained=True)
    with pytest.warns(UserWarning, match="deprecated") as record:
        models.segmentation.deeplabv3_mobilenet_v3_large(pretrained=False,
                                                         pretrained_backbone=False)
    assert {str(w.message).split("'")[1] for w in record} == {"pretrained",
                                                              "pretrained_backbone"}

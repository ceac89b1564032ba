"""ember.models: torchvision's architectures and names; the profiler example on resnet18."""
import pytest

import ember

models = pytest.importorskip("ember.models")

# parameter counts of torchvision's models (num_classes=1000)
COUNTS = {"resnet18": 11_689_512, "resnet34": 21_797_672, "resnet50": 25_557_032,
          "mobilenet_v2": 3_504_872}


def _needs_nn():
    for name in ("Conv2d", "BatchNorm2d", "ReLU", "MaxPool2d", "AdaptiveAvgPool2d", "Linear",
                 "ReLU6", "Dropout"):
        if not hasattr(ember.nn, name):
            pytest.skip(f"ember.nn.{name} is not available yet")


@pytest.mark.parametrize("name", sorted(COUNTS))
def test_parameter_counts_match_torchvision(name):
    _needs_nn()
    m = getattr(models, name)()
    assert sum(p.numel() for p in m.parameters()) == COUNTS[name]


def test_state_dict_names_are_torchvision_names():
    _needs_nn()
    sd = models.resnet18().state_dict()
    for key in ("conv1.weight", "bn1.running_mean", "bn1.num_batches_tracked",
                "layer1.0.conv1.weight", "layer2.0.downsample.0.weight",
                "layer2.0.downsample.1.running_var", "layer4.1.bn2.bias", "fc.weight", "fc.bias"):
        assert key in sd, key
    assert len(sd) == 122
    mb = models.mobilenet_v2(width_mult=0.35).state_dict()
    for key in ("features.0.0.weight", "features.1.conv.0.0.weight",
                "features.18.1.running_mean", "classifier.1.weight"):
        assert key in mb, key
    assert models.mobilenet_v2(width_mult=0.35).classifier[1].in_features == 1280


def test_forward_shapes_and_pretrained_error():
    _needs_nn()
    m = models.resnet18(num_classes=7).eval()
    with ember.no_grad():
        assert tuple(m(ember.randn(2, 3, 32, 32)).shape) == (2, 7)
    with pytest.raises(NotImplementedError):
        models.resnet18(weights="IMAGENET1K_V1")


def test_profiler_example_on_resnet18():
    """The PyTorch 1.6 recipe: profile memory and shapes, sort by self CPU memory."""
    _needs_nn()
    from ember.profiler import profile, record_function, ProfilerActivity
    model = models.resnet18()
    inputs = ember.randn(1, 3, 64, 64)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True,
                 record_shapes=True) as prof:
        with record_function("model_inference"):
            model(inputs)
    table = prof.key_averages().table(sort_by="self_cpu_memory_usage", row_limit=10)
    assert "aten::convolution" in table and "Self CPU Mem" in table
    rows = [line for line in table.splitlines() if "aten::" in line]
    assert len(rows) <= 10
    conv = [e for e in prof.key_averages() if e.key == "aten::convolution"][0]
    assert conv.count == 20 and conv.cpu_memory_usage > 0

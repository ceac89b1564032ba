"""`ember run` serves `import torchvision` from ember.vision (and names what is missing)."""
import subprocess
import sys
import textwrap


def run(tmp_path, code):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(code))
    return subprocess.run([sys.executable, "-m", "ember", "run", str(script)],
                          capture_output=True, text=True, timeout=300)


def test_torchvision_program_runs_on_ember(tmp_path):
    out = run(tmp_path, """
        import torch
        import torchvision
        import torchvision.transforms as T
        from torchvision import datasets, models
        from torchvision.models import resnet18
        from torchvision.ops import box_iou
        import torchvision.transforms.functional as TF
        tf = T.Compose([T.RandomResizedCrop(16), T.RandomHorizontalFlip(), T.ToTensor(),
                        T.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))])
        ds = datasets.FakeData(size=8, image_size=(3, 20, 20), num_classes=4, transform=tf)
        loader = torch.utils.data.DataLoader(ds, batch_size=4)
        model = models.mobilenet_v3_small(num_classes=4)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad(); loss.backward(); opt.step()
        print(type(x).__module__, tuple(x.shape), type(model).__module__,
              torchvision.__name__, resnet18.__module__,
              float(box_iou(torch.tensor([[0., 0, 2, 2]]), torch.tensor([[1., 1, 3, 3]]))))
    """)
    assert out.returncode == 0, out.stderr
    line = out.stdout.strip().splitlines()[-1]
    assert line.startswith("ember._tensor (4, 3, 16, 16) ember.vision.models.mobilenetv3")
    assert "torchvision ember.vision.models.resnet 0.142857" in line


def test_missing_torchvision_parts_and_torchaudio_name_themselves(tmp_path):
    out = run(tmp_path, "import torchvision\ntorchvision.no_such_thing\n")
    assert out.returncode != 0 and "torchvision.no_such_thing" in out.stderr
    out = run(tmp_path, "import torchaudio\nprint(torchaudio.__dict__['_target'].__name__)\n")
    import importlib.util
    if importlib.util.find_spec("ember.audio") is None:      # not built yet: a clear error
        assert out.returncode != 0 and "ModuleNotFoundError" in out.stderr
        assert "torchaudio" in out.stderr
    else:
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "ember.audio"

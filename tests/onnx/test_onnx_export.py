"""ember.onnx.export: the written file passes onnx.checker, and onnxruntime running it gives
ember's outputs (models from ember.models, an LSTM LM, Transformer encoders, single layers);
dynamic_axes keep sizes symbolic; unsupported cases raise the exporter's errors."""
import io

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember import models
import ember.nn.functional as F

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def _flat(x):
    if isinstance(x, (tuple, list)):
        return [t for a in x for t in _flat(a)]
    return [x]


def export_and_run(model, args, feeds=None, **kw):
    """Exports model(*args), runs the file in onnxruntime on `feeds` (default: args) and
    returns (onnx outputs, ember outputs on the same inputs, the ModelProto)."""
    buf = io.BytesIO()
    ember.onnx.export(model, args, buf, **kw)
    proto = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(proto, full_check=True)
    sess = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    feeds = args if feeds is None else feeds
    flat = _flat(feeds)
    got = sess.run(None, {i.name: t.numpy() for i, t in zip(sess.get_inputs(), flat)})
    if hasattr(model, "eval"):
        model.eval()
    with ember.no_grad():
        want = [t.numpy() for t in _flat(model(*feeds))]
    return got, want, proto


def assert_close(got, want, rtol=1e-4, atol=1e-5):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol * max(1.0, np.abs(w).max()))


def test_resnet18_dynamic_batch():
    ember.manual_seed(0)
    m = models.resnet18(num_classes=10)
    got, want, proto = export_and_run(m, (ember.randn(2, 3, 32, 32),), input_names=["x"],
                                      output_names=["logits"],
                                      dynamic_axes={"x": {0: "batch"}, "logits": {0: "batch"}})
    assert_close(got, want)
    assert {i.name for i in proto.graph.initializer} >= set(m.state_dict()) - {
        k for k in m.state_dict() if k.endswith("num_batches_tracked")}
    dims = proto.graph.input[0].type.tensor_type.shape.dim
    assert dims[0].dim_param == "batch" and [d.dim_value for d in dims[1:]] == [3, 32, 32]
    assert proto.graph.output[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    # another batch size through the same file
    buf = io.BytesIO()
    ember.onnx.export(m, (ember.randn(2, 3, 32, 32),), buf, input_names=["x"],
                      dynamic_axes={"x": [0]})
    x = ember.randn(5, 3, 32, 32)
    got = ort.InferenceSession(buf.getvalue()).run(None, {"x": x.numpy()})
    with ember.no_grad():
        assert_close(got, [m(x).numpy()])
    assert m.training is False or True


def test_mobilenet_v2():
    ember.manual_seed(0)
    m = models.mobilenet_v2(num_classes=10)
    for p in m.parameters():         # larger outputs than the 0.01-std classifier init gives
        p.data.uniform_(-0.5, 0.5)
    got, want, _ = export_and_run(m, (ember.randn(1, 3, 32, 32),))
    assert np.abs(want[0]).max() > 1e-3
    assert_close(got, want, rtol=1e-3)


class WordLM(nn.Module):
    """pytorch/examples' word_language_model RNNModel (LSTM, tied weights)."""

    def __init__(self, ntoken=40, ninp=16, nlayers=2):
        super().__init__()
        self.drop = nn.Dropout(0.2)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, ninp, nlayers, dropout=0.2)
        self.decoder = nn.Linear(ninp, ntoken)
        self.decoder.weight = self.encoder.weight
        self.ntoken = ntoken

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output).view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden


def test_lstm_language_model():
    ember.manual_seed(0)
    m = WordLM()
    m.train()
    x = ember.randint(0, 40, (6, 3))
    h = (ember.randn(2, 3, 16), ember.randn(2, 3, 16))
    ember.onnx.export(m, (x, h), io.BytesIO())
    assert m.training, "export restores the training flag"
    got, want, proto = export_and_run(m, (x, h), input_names=["tokens", "h0", "c0"],
                                      output_names=["logp", "hn", "cn"])
    assert_close(got, want)
    assert [o.name for o in proto.graph.output] == ["logp", "hn", "cn"]
    assert "encoder.weight" in {i.name for i in proto.graph.initializer}


@pytest.mark.parametrize("batch_first,activation", [(False, "relu"), (True, "gelu")])
def test_transformer_encoder(batch_first, activation):
    ember.manual_seed(0)
    layer = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.1, batch_first=batch_first,
                                       activation=activation)
    m = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    x = ember.randn(2, 5, 16) if batch_first else ember.randn(5, 2, 16)
    got, want, _ = export_and_run(m, (x,))
    assert_close(got, want)


def test_transformer_encoder_dynamic_batch():
    """A dynamic batch through MultiheadAttention: the exported graph is right for other
    batch sizes, or, where the capture had to keep the batch static (sizes computed as
    Python ints), export says so instead of writing a graph that is wrong for them."""
    ember.manual_seed(0)
    m = nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 2, 32, batch_first=True), 1,
                              enable_nested_tensor=False)
    buf = io.BytesIO()
    try:
        ember.onnx.export(m, (ember.randn(2, 5, 16),), buf, input_names=["src"],
                          dynamic_axes={"src": {0: "batch"}})
    except ember.onnx.errors.SymbolicValueError as e:
        assert "dim 0 of input 'src'" in str(e)
        return
    sess = ort.InferenceSession(buf.getvalue())
    m.eval()
    for b in (1, 4):
        x = ember.randn(b, 5, 16)
        with ember.no_grad():
            assert_close(sess.run(None, {"src": x.numpy()}), [m(x).numpy()])


def test_dynamic_batch_through_reshape_and_linear():
    """Sizes read in Python from a dynamic dim become Shape/Gather in the graph."""
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(12, 4)

        def forward(self, x):
            b = x.shape[0]
            return self.fc(x.reshape(b, -1)).softmax(-1), ember.zeros(b, 2)
    m = Net()
    buf = io.BytesIO()
    ember.onnx.export(m, (ember.randn(3, 3, 4),), buf, input_names=["x"],
                      output_names=["p", "z"], dynamic_axes={"x": {0: "n"}})
    sess = ort.InferenceSession(buf.getvalue())
    for n in (1, 7):
        x = ember.randn(n, 3, 4)
        with ember.no_grad():
            assert_close(sess.run(None, {"x": x.numpy()}), [t.numpy() for t in m(x)])


class Ops(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *a):
        return self.fn(*a)


SMALL = [
    ("conv1d", nn.Conv1d(3, 4, 3, stride=2, padding=1), (2, 3, 9)),
    ("conv2d_groups_dilation", nn.Conv2d(4, 4, 3, groups=2, dilation=2), (1, 4, 9, 9)),
    ("conv_transpose2d", nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1),
     (1, 3, 5, 5)),
    ("avg_pool2d", nn.AvgPool2d(3, stride=2, padding=1), (1, 2, 7, 7)),
    ("avg_pool2d_exclude_pad", nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False),
     (1, 2, 7, 7)),
    ("max_pool1d", nn.MaxPool1d(2), (2, 3, 8)),
    ("adaptive_avg_pool2d", nn.AdaptiveAvgPool2d((2, 3)), (1, 2, 4, 6)),
    ("batch_norm1d", nn.BatchNorm1d(5), (4, 5)),
    ("layer_norm", nn.LayerNorm([3, 4]), (2, 3, 4)),
    ("gelu_tanh", nn.GELU("tanh"), (3, 5)),
    ("silu", nn.SiLU(), (3, 5)),
    ("hardswish", nn.Hardswish(), (3, 5)),
    ("hardsigmoid", nn.Hardsigmoid(), (3, 5)),
    ("leaky_relu", nn.LeakyReLU(0.3), (3, 5)),
    ("elu", nn.ELU(0.5), (3, 5)),
    ("relu6", nn.ReLU6(), (3, 5)),
    ("softmax", nn.Softmax(dim=0), (3, 5)),
    ("tanh_sigmoid", Ops(lambda x: x.tanh() * x.sigmoid() - x.exp() / 3), (3, 5)),
    ("mean_sum", Ops(lambda x: (x.mean((1, 2), keepdim=True) + x.sum(-1, keepdim=True),
                                x.mean())), (2, 3, 4)),
    ("amax_argmax", Ops(lambda x: (x.amax(1), x.argmax(-1))), (2, 3, 4)),
    ("shapes", Ops(lambda x: ember.cat([x.transpose(0, 1).flatten(1), x[:, :, 1:3].reshape(
        3, -1)], 1).unsqueeze(0).permute(2, 0, 1)[::2, :, 1]), (2, 3, 4)),
    ("split_chunk", Ops(lambda x: x.chunk(2, -1)[1] + x.split([1, 3], -1)[0]), (2, 4)),
    ("stack_select", Ops(lambda x: ember.stack([x[0], x[-1] * 2], 1)), (3, 4)),
    ("unbind", Ops(lambda x: sum(x.unbind(1))), (3, 4)),
    ("squeeze_expand", Ops(lambda x: x.unsqueeze(1).expand(-1, 3, -1).squeeze(0)), (1, 4)),
    ("div_pow_where", Ops(lambda x: ember.where(x > 0, x.pow(2) / 3, x.clamp(-0.5, 0.5))),
     (3, 4)),
    ("scalar_ops", Ops(lambda x: (2 - x) * 3 + x / 4 - (x ** 3) % 1.5), (3, 4)),
    ("matmul_batched", Ops(lambda x: x @ x.transpose(-1, -2)), (2, 3, 4)),
    ("gru", nn.GRU(4, 5, batch_first=True), (2, 3, 4)),
    ("rnn_tanh", nn.RNN(4, 5, num_layers=2), (3, 2, 4)),
    ("multihead_attention", Ops(nn.MultiheadAttention(8, 2, batch_first=True).eval().
                                forward), None),
]


@pytest.mark.parametrize("name,model,shape", SMALL, ids=[s[0] for s in SMALL])
def test_small_modules(name, model, shape):
    ember.manual_seed(1)
    if name == "multihead_attention":
        q = ember.randn(2, 3, 8)
        args = (q, ember.randn(2, 4, 8), ember.randn(2, 4, 8))
    else:
        args = (ember.randn(*shape),)
    if isinstance(model, nn.modules.batchnorm._BatchNorm):
        model.running_mean.uniform_(-1, 1)
        model.running_var.uniform_(0.5, 2)
    got, want, _ = export_and_run(model, args)
    assert_close(got, want)


def test_embedding_int_inputs_and_file_path(tmp_path):
    m = nn.Sequential(nn.Embedding(10, 4), nn.Flatten(), nn.Linear(12, 2))
    path = tmp_path / "m.onnx"
    x = ember.tensor([[1, 2, 3], [9, 0, 4]])
    ember.onnx.export(m, (x,), str(path), input_names=["ids"])
    onnx.checker.check_model(str(path))
    assert not [p for p in tmp_path.iterdir() if p.name != "m.onnx"], "no temp file left"
    got = ort.InferenceSession(str(path)).run(None, {"ids": x.numpy()})
    with ember.no_grad():
        assert_close(got, [m(x).numpy()])


def test_export_params_false_makes_parameters_inputs():
    m = nn.Linear(3, 2)
    buf = io.BytesIO()
    ember.onnx.export(m, (ember.randn(4, 3),), buf, export_params=False)
    proto = onnx.load_from_string(buf.getvalue())
    assert not proto.graph.initializer
    names = [i.name for i in proto.graph.input]
    assert names[0] == "input_0" and {"weight", "bias"} <= set(names)
    x = ember.randn(4, 3)
    got = ort.InferenceSession(buf.getvalue()).run(
        None, {"input_0": x.numpy(), "weight": m.weight.detach().numpy(),
               "bias": m.bias.detach().numpy()})
    with ember.no_grad():
        assert_close(got, [m(x).numpy()])


def test_unsupported_operator_names_the_op():
    m = Ops(lambda x: ember.linalg.det(x))
    with pytest.raises(ember.onnx.errors.UnsupportedOperatorError, match="'linalg_det'|det"):
        ember.onnx.export(m, (ember.randn(3, 3),), io.BytesIO())


def test_max_pool_indices_are_refused():
    m = nn.MaxPool2d(2, return_indices=True)
    with pytest.raises(ember.onnx.errors.OnnxExporterError, match="indices"):
        ember.onnx.export(m, (ember.randn(1, 1, 4, 4),), io.BytesIO())


def test_inplace_write_into_an_input_is_refused():
    def f(x):
        x.add_(1)
        return x * 2
    with pytest.raises(ember.onnx.errors.OnnxExporterError):
        ember.onnx.export(Ops(f), (ember.randn(3),), io.BytesIO())


def test_is_in_onnx_export_and_training_flag():
    class M(nn.Module):
        def forward(self, x):
            y = x + 1 if ember.onnx.is_in_onnx_export() else x - 1
            return y * 10 if self.training else y
    m = M().train()
    buf = io.BytesIO()
    ember.onnx.export(m, (ember.randn(2),), buf)
    x = ember.randn(2)
    got = ort.InferenceSession(buf.getvalue()).run(None, {"input_0": x.numpy()})
    np.testing.assert_allclose(got[0], (x + 1).numpy())
    assert m.training and not ember.onnx.is_in_onnx_export()


class Stats(nn.Module):
    def forward(self, x):
        return (x.var(1, keepdim=True), x.std(), x.prod(0), x.expm1() + x.abs().log1p(),
                x.cumsum(1), x.topk(2, dim=1), x.mean(-1), x.amax(0))


@pytest.mark.parametrize("opset", [13, 17, 18])
def test_opsets_and_decompositions(opset):
    """Opset 13 has no LayerNormalization: layer_norm goes through its registry
    decomposition; opset 18 takes reduction axes as inputs."""
    ember.manual_seed(0)
    x = ember.randn(4, 6)
    m = nn.Sequential(nn.LayerNorm(6), nn.GELU(), nn.Linear(6, 3))
    got, want, proto = export_and_run(m, (x,), opset_version=opset)
    assert_close(got, want)
    ops = {n.op_type for n in proto.graph.node}
    assert ("LayerNormalization" in ops) == (opset >= 17)
    assert proto.opset_import[0].version == opset
    got, want, _ = export_and_run(Stats(), (x,), opset_version=opset)
    assert_close(got, want)


def test_dynamic_axis_the_model_bakes_in_is_refused():
    """float(x.shape[0]) makes the size a Python number: the capture keeps it static, and a
    graph claiming a dynamic dim would be wrong for other sizes."""
    class M(nn.Module):
        def forward(self, x):
            return x * float(x.shape[0])
    with pytest.raises(ember.onnx.errors.SymbolicValueError, match="dim 0 of input 'x'"):
        ember.onnx.export(M(), (ember.randn(3, 2),), io.BytesIO(), input_names=["x"],
                          dynamic_axes={"x": [0]})


class Misc(nn.Module):
    def forward(self, x, i):
        return (x[i], x[:, i], x[i, 1:], x.flip(0), x.repeat(2, 1), x.masked_fill(x > 0, 0.5),
                F.pad(x, (1, 2)), x.tril(),
                F.interpolate(x[None, None], scale_factor=2, mode="nearest"))


def test_indexing_padding_and_decomposed_ops():
    """Integer-tensor indexing (Gather), constants made from data (interpolate's indices),
    and ops exported through their decompositions (flip, repeat, masked_fill, tril)."""
    ember.manual_seed(0)
    got, want, _ = export_and_run(Misc(), (ember.randn(4, 5), ember.tensor([0, 2])))
    assert_close(got, want)

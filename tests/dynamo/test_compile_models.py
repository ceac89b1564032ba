"""Issue 9: real models compile with backend="eager" and match eager in forward values and
gradients; the CNNs are one graph (fullgraph=True works)."""
import copy

import pytest

import ember
import ember.nn as nn
from ember._dynamo.testing import CompileCounter
from ember.models import mobilenet_v2, resnet18


class LSTMLM(nn.Module):
    def __init__(self, vocab=50):
        super().__init__()
        self.emb = nn.Embedding(vocab, 16)
        self.lstm = nn.LSTM(16, 32, num_layers=2, batch_first=True, dropout=0.2)
        self.out = nn.Linear(32, vocab)

    def forward(self, x):
        h, _ = self.lstm(self.emb(x))
        return self.out(h)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.1, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 2)
        self.head = nn.Linear(32, 3)

    def forward(self, x):
        return self.head(self.enc(x).mean(1))


CASES = {
    "resnet18": (lambda: resnet18(num_classes=10), lambda: ember.randn(2, 3, 64, 64), True),
    "mobilenet_v2": (lambda: mobilenet_v2(num_classes=10), lambda: ember.randn(2, 3, 64, 64),
                     True),
    "lstm_lm": (LSTMLM, lambda: ember.randint(0, 50, (3, 7)), False),
    "transformer_encoder": (Encoder, lambda: ember.randn(2, 5, 32), False),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("train", [True, False])
def test_model_matches_eager(name, train):
    ctor, make_x, one_graph = CASES[name]
    ember._dynamo.reset()
    ember.manual_seed(0)
    eager = ctor().train(train)
    comp = copy.deepcopy(eager)
    cnt = CompileCounter()
    cm = ember.compile(comp, backend=cnt, fullgraph=one_graph)
    x = make_x()
    for step in range(2):                 # the second call reuses the graph
        ember.manual_seed(step)           # dropout draws the same Philox numbers
        want = eager(x)
        ember.manual_seed(step)
        got = cm(x)
        ember.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
        assert got.requires_grad == want.requires_grad
        want.float().square().sum().backward()
        got.float().square().sum().backward()
    for (n, a), b in zip(eager.named_parameters(), comp.parameters()):
        if a.grad is not None:
            ember.testing.assert_close(b.grad, a.grad, rtol=1e-4, atol=1e-5, msg=n)
    for (n, a), b in zip(eager.named_buffers(), comp.buffers()):
        ember.testing.assert_close(b, a, msg=n)          # BatchNorm running statistics
    assert cnt.frame_count == 1
    if one_graph:
        assert ember._dynamo.explain(eager)(x).graph_break_count == 0

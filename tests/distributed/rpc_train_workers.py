"""Training programs over RPC + distributed autograd, each checked against a local run."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rpc_workers import init, mark  # noqa: E402


def _close(a, b, what, tol=1e-5):
    import numpy as np
    np.testing.assert_allclose(np.asarray(a.detach().numpy()), np.asarray(b.detach().numpy()),
                               rtol=tol, atol=tol, err_msg=what)


def call_method(method, rref, *args, **kwargs):
    return method(rref.local_value(), *args, **kwargs)


def remote_method(method, rref, *args, **kwargs):
    import ember.distributed.rpc as rpc
    return rpc.rpc_sync(rref.owner(), call_method, args=[method, rref] + list(args),
                        kwargs=kwargs)


def param_rrefs(module_rref):
    import ember.distributed.rpc as rpc
    return [rpc.RRef(p) for p in module_rref.local_value().parameters()]


# -- parameter server: rank 0 holds the model, ranks 1.. train -------------------------
def make_net():
    import ember
    ember.manual_seed(0)
    return ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.Tanh(), ember.nn.Linear(8, 1))


def batch(step, k):
    import ember
    g = ember.Generator().manual_seed(100 * step + k)
    x = ember.randn(5, 4, generator=g)
    return x, x.sum(1, keepdim=True).sin()


def ps_forward(net_rref, x):
    return net_rref.local_value()(x)


def trainer_step(net_rref, params, step, k):
    import ember
    import ember.distributed.autograd as dist_autograd
    import ember.distributed.rpc as rpc
    from ember.distributed.optim import DistributedOptimizer
    opt = DistributedOptimizer(ember.optim.SGD, params, lr=0.1)
    x, y = batch(step, k)
    with dist_autograd.context() as cid:
        out = rpc.rpc_sync(net_rref.owner(), ps_forward, args=(net_rref, x))
        assert out.requires_grad and out.grad_fn is not None
        loss = ember.nn.functional.mse_loss(out, y)
        dist_autograd.backward(cid, [loss])
        grads = rpc.rpc_sync(net_rref.owner(), grads_on_owner, args=(cid, params))
        opt.step(cid)
    return loss.detach(), grads


def n_contexts():
    from ember.distributed.autograd import _context
    return len(_context._contexts)


def _contexts_released(rpc, ws):
    """Every worker a context reached (nested calls included) drops it on exit."""
    import time
    deadline = time.monotonic() + 5
    while [rpc.rpc_sync(k, n_contexts) for k in range(ws)] != [0] * ws:
        assert time.monotonic() < deadline, [rpc.rpc_sync(k, n_contexts) for k in range(ws)]
        time.sleep(0.02)


def grads_on_owner(cid, params):
    import ember.distributed.autograd as dist_autograd
    g = dist_autograd.get_gradients(cid)
    return [g[p.local_value()] for p in params]


def parameter_server(rank, ws, port, outdir):
    import ember
    rpc = init(rank, ws, port)
    if rank == 0:
        net = make_net()
        ref = make_net()
        net_rref = rpc.RRef(net)
        params = param_rrefs(net_rref)
        opt = ember.optim.SGD(ref.parameters(), lr=0.1)
        for step in range(3):
            for k in range(1, ws):
                loss, grads = rpc.rpc_sync(k, trainer_step, args=(net_rref, params, step, k))
                x, y = batch(step, k)
                opt.zero_grad()
                want = ember.nn.functional.mse_loss(ref(x), y)
                want.backward()
                _close(loss, want, "loss")
                for g, p in zip(grads, ref.parameters()):
                    _close(g, p.grad, "grad")
                opt.step()
                assert all(p.grad is None for p in net.parameters())   # context, not .grad
        for a, b in zip(net.parameters(), ref.parameters()):
            _close(a, b, "params")
        _contexts_released(rpc, ws)
    rpc.shutdown()
    mark(outdir, rank)


# -- pipeline-parallel CNN: conv shard on worker1, head on worker2 --------------------
class Shard1:
    def __init__(self):
        import ember
        ember.manual_seed(1)
        self.net = ember.nn.Sequential(ember.nn.Conv2d(1, 4, 3, padding=1), ember.nn.ReLU(),
                                       ember.nn.MaxPool2d(2))

    def forward(self, x_rref):
        return self.net(x_rref.to_here())

    def parameter_rrefs(self):
        import ember.distributed.rpc as rpc
        return [rpc.RRef(p) for p in self.net.parameters()]


class Shard2:
    def __init__(self):
        import ember
        ember.manual_seed(2)
        self.net = ember.nn.Sequential(ember.nn.Flatten(), ember.nn.Linear(4 * 4 * 4, 3))

    def forward(self, x_rref):
        return self.net(x_rref.to_here())

    def parameter_rrefs(self):
        import ember.distributed.rpc as rpc
        return [rpc.RRef(p) for p in self.net.parameters()]


def pipeline(rank, ws, port, outdir):
    import ember
    rpc = init(rank, ws, port)
    if rank == 0:
        import ember.distributed.autograd as dist_autograd
        from ember.distributed.optim import DistributedOptimizer
        from ember.futures import wait_all
        p1 = rpc.remote("worker1", Shard1)
        p2 = rpc.remote("worker2", Shard2)
        params = p1.rpc_sync().parameter_rrefs() + p2.rpc_sync().parameter_rrefs()
        opt = DistributedOptimizer(ember.optim.SGD, params, lr=0.05, momentum=0.9)
        l1, l2 = Shard1().net, Shard2().net
        ref_opt = ember.optim.SGD(list(l1.parameters()) + list(l2.parameters()), lr=0.05,
                                  momentum=0.9)
        g = ember.Generator().manual_seed(0)
        for step in range(2):
            x = ember.randn(6, 1, 8, 8, generator=g)
            y = ember.randint(0, 3, (6,), generator=g)
            with dist_autograd.context() as cid:
                futs = []
                for xs in x.split(2):          # micro-batches flow through both shards
                    y_rref = p1.remote().forward(rpc.RRef(xs))
                    futs.append(p2.rpc_async().forward(y_rref))
                out = ember.cat(wait_all(futs))
                loss = ember.nn.functional.cross_entropy(out, y)
                dist_autograd.backward(cid, [loss])
                opt.step(cid)
            ref_opt.zero_grad()
            want = ember.nn.functional.cross_entropy(l2(l1(x)), y)
            want.backward()
            ref_opt.step()
            _close(loss, want, f"loss step {step}")
        got = [p.to_here() for p in params]
        for a, b in zip(got, list(l1.parameters()) + list(l2.parameters())):
            _close(a, b, "params")
    rpc.shutdown()
    mark(outdir, rank)


# -- model-parallel RNN: embedding on worker1, decoder on worker2, LSTM local ----------
class EmbeddingTable:
    def __init__(self):
        import ember
        ember.manual_seed(3)
        self.emb = ember.nn.Embedding(10, 6)

    def forward(self, inp):
        return self.emb(inp)

    def params(self):
        import ember.distributed.rpc as rpc
        return [rpc.RRef(p) for p in self.emb.parameters()]


class Decoder:
    def __init__(self):
        import ember
        ember.manual_seed(4)
        self.fc = ember.nn.Linear(5, 10)

    def forward(self, h):
        return self.fc(h)

    def params(self):
        import ember.distributed.rpc as rpc
        return [rpc.RRef(p) for p in self.fc.parameters()]


def rnn(rank, ws, port, outdir):
    import ember
    rpc = init(rank, ws, port)
    if rank == 0:
        import ember.distributed.autograd as dist_autograd
        from ember.distributed.optim import DistributedOptimizer
        emb = rpc.remote("worker1", EmbeddingTable)
        dec = rpc.remote("worker2", Decoder)
        ember.manual_seed(5)
        lstm = ember.nn.LSTM(6, 5, batch_first=True)
        params = (remote_method(EmbeddingTable.params, emb) + remote_method(Decoder.params, dec)
                  + [rpc.RRef(p) for p in lstm.parameters()])
        opt = DistributedOptimizer(ember.optim.Adam, params, lr=0.01)
        r_emb, r_dec = EmbeddingTable().emb, Decoder().fc
        ember.manual_seed(5)
        r_lstm = ember.nn.LSTM(6, 5, batch_first=True)
        ref_params = list(r_emb.parameters()) + list(r_dec.parameters()) + \
            list(r_lstm.parameters())
        ref_opt = ember.optim.Adam(ref_params, lr=0.01)
        g = ember.Generator().manual_seed(1)
        for step in range(2):
            inp = ember.randint(0, 10, (2, 4), generator=g)
            tgt = ember.randint(0, 10, (2, 4), generator=g)
            with dist_autograd.context() as cid:
                e = remote_method(EmbeddingTable.forward, emb, inp)
                h, _ = lstm(e)
                out = remote_method(Decoder.forward, dec, h)
                loss = ember.nn.functional.cross_entropy(out.reshape(-1, 10), tgt.reshape(-1))
                dist_autograd.backward(cid, [loss])
                grads = dist_autograd.get_gradients(cid)
                assert set(map(id, grads)) == set(map(id, lstm.parameters()))
                opt.step(cid)
            ref_opt.zero_grad()
            h2, _ = r_lstm(r_emb(inp))
            want = ember.nn.functional.cross_entropy(r_dec(h2).reshape(-1, 10), tgt.reshape(-1))
            want.backward()
            for p, q in zip(lstm.parameters(), r_lstm.parameters()):
                _close(grads[p], q.grad, "lstm grad")
            ref_opt.step()
            _close(loss, want, f"loss step {step}")
        for a, b in zip([p.to_here() for p in params], ref_params):
            _close(a, b, "params", tol=1e-4)
    rpc.shutdown()
    mark(outdir, rank)


# -- RL: an agent and observers that call back into it -----------------------------------
class Policy:
    def __init__(self):
        import ember
        ember.manual_seed(6)
        self.net = ember.nn.Sequential(ember.nn.Linear(3, 8), ember.nn.ReLU(),
                                       ember.nn.Linear(8, 2))
        self.saved = {}
        self.rewards = {}

    def select_action(self, ob_id, state):
        import ember
        logp = ember.log_softmax(self.net(state), dim=-1)
        action = int(logp.argmax())
        self.saved.setdefault(ob_id, []).append(logp[action])
        return action

    def report(self, ob_id, reward):
        self.rewards.setdefault(ob_id, []).append(reward)


def env_step(state, action):
    """A deterministic toy environment."""
    nxt = state.roll(1) * 0.9 + (0.5 if action else -0.5)
    return nxt, float(nxt.sum()) * (1 if action else -1)


def run_episode(agent_rref, ob_id, n_steps):
    import ember
    state = ember.full((3,), 0.1 * ob_id)
    for _ in range(n_steps):
        a = agent_rref.rpc_sync().select_action(ob_id, state)
        state, r = env_step(state, a)
        agent_rref.rpc_sync().report(ob_id, r)
    return True


def _loss(policy):
    import ember
    total = 0
    for ob in sorted(policy.saved):
        for lp, r in zip(policy.saved[ob], policy.rewards[ob]):
            total = total - lp * r
    policy.saved, policy.rewards = {}, {}
    return total / 10 if isinstance(total, ember.Tensor) else total


def rl(rank, ws, port, outdir):
    import ember
    rpc = init(rank, ws, port)
    if rank == 0:
        from ember.futures import wait_all
        policy = Policy()
        agent = rpc.RRef(policy)
        opt = ember.optim.Adam(policy.net.parameters(), lr=0.05)
        ref = Policy()
        ref_opt = ember.optim.Adam(ref.net.parameters(), lr=0.05)
        for _ in range(3):
            wait_all([rpc.rpc_async(k, run_episode, args=(agent, k, 4)) for k in range(1, ws)])
            opt.zero_grad()
            loss = _loss(policy)
            loss.backward()
            opt.step()
            for k in range(1, ws):
                run_episode(ref_local_rref(ref), k, 4)
            ref_opt.zero_grad()
            want = _loss(ref)
            want.backward()
            ref_opt.step()
            _close(loss, want, "loss")
        for a, b in zip(policy.net.parameters(), ref.net.parameters()):
            _close(a, b, "params")
    rpc.shutdown()
    mark(outdir, rank)


class _LocalProxy:
    def __init__(self, obj):
        self.obj = obj

    def rpc_sync(self):
        return self.obj


def ref_local_rref(policy):
    return _LocalProxy(policy)


# -- RPC + DDP: remote embedding on the PS, a DDP head on each of 2 trainers ----------------
def _emb():
    import ember
    ember.manual_seed(7)
    return ember.nn.Embedding(12, 4)


def _head():
    import ember
    ember.manual_seed(8)
    return ember.nn.Linear(4, 3)


def emb_forward(emb_rref, idx):
    return emb_rref.local_value()(idx)


def _data(k, step):
    import ember
    g = ember.Generator().manual_seed(10 * step + k)
    return ember.randint(0, 12, (5,), generator=g), ember.randint(0, 3, (5,), generator=g)


def _ddp_trainer(rank, emb_rref, pg_port, steps):
    from datetime import timedelta

    import ember
    import ember.distributed as dist
    import ember.distributed.autograd as dist_autograd
    import ember.distributed.rpc as rpc
    from ember.distributed.optim import DistributedOptimizer
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{pg_port}", rank=rank,
                            world_size=2, timeout=timedelta(seconds=30))
    head = ember.nn.parallel.DistributedDataParallel(_head())
    params = rpc.rpc_sync(emb_rref.owner(), param_rrefs, args=(emb_rref,)) + \
        [rpc.RRef(p) for p in head.parameters()]
    opt = DistributedOptimizer(ember.optim.SGD, params, lr=0.5)
    for step in range(steps):
        idx, y = _data(rank, step)
        with dist_autograd.context() as cid:
            e = rpc.rpc_sync(emb_rref.owner(), emb_forward, args=(emb_rref, idx))
            loss = ember.nn.functional.cross_entropy(head(e), y)
            dist.barrier()                  # both forwards read the table before any step
            dist_autograd.backward(cid, [loss])
            opt.step(cid)
            dist.barrier()
    out = [p.detach().clone() for p in head.module.parameters()]
    dist.destroy_process_group()
    return out


def rpc_ddp(rank, ws, port, outdir, pg_port):
    import ember
    rpc = init(rank, ws, port)
    steps = 3
    if rank == 2:
        emb = rpc.RRef(_emb())
        futs = [rpc.rpc_async(k, _ddp_trainer, args=(k, emb, pg_port, steps)) for k in (0, 1)]
        heads = [f.wait() for f in futs]
        r_emb, r_head = _emb(), _head()
        opt = ember.optim.SGD(list(r_emb.parameters()) + list(r_head.parameters()), lr=0.5)
        for step in range(steps):
            opt.zero_grad()
            total = 0
            for k in (0, 1):
                idx, y = _data(k, step)
                total = total + ember.nn.functional.cross_entropy(r_head(r_emb(idx)), y)
            total.backward()
            for p in r_head.parameters():   # DDP averages the head's gradient
                p.grad.div_(2)
            opt.step()
        _close(emb.local_value().weight, r_emb.weight, "embedding table")
        for h in heads:
            for a, b in zip(h, r_head.parameters()):
                _close(a, b, "DDP head")
    rpc.shutdown()
    mark(outdir, rank)

"""Contribution analysis and evolutionary search of a sparse-update scheme (the paper's
method, §3.2; its search code was never released).

1. Contribution: fine-tune briefly with only the classifier (the baseline), then with the
   classifier plus one layer's bias, or plus one layer's first r of channels; each layer's
   accuracy gain over the baseline is its contribution for that rule.
2. Search: a scheme assigns each candidate layer a rule (frozen, bias, or a ratio r); its
   score is the summed contribution of its rules. Evolution (mutation + crossover, the best
   kept) maximizes the score among schemes whose compiled program (`peak_bytes`, from the
   static memory plan) fits `budget_kb`.
"""
import random
import time

from .finetune import finetune, with_head
from .fold import fold_bn
from .program import compile_training
from .scheme import UpdateScheme, trainable_layers
from .. import nn

__all__ = ["contributions", "search_update_scheme", "scheme_peak_bytes"]

RATIOS = (0.125, 0.25, 0.5, 1.0)


def scheme_peak_bytes(model, example, scheme, cache=None):
    """Peak training memory (arena + trainable weights) of `scheme` (+ classifier)."""
    scheme = with_head(model, scheme)
    key = tuple(sorted(scheme.layers.items()))
    if cache is not None and key in cache:
        return cache[key]
    peak = compile_training(model, example, nn.functional.cross_entropy,
                            scheme=scheme).peak_bytes()
    if cache is not None:
        cache[key] = peak
    return peak


def contributions(model, train, val, layers, weight_layers, ratios=RATIOS, **finetune_kw):
    """{layer: {rule: accuracy gain over classifier-only fine-tuning}} (bias for every layer
    in `layers` that has one after BN folding, channel ratios for `weight_layers`), and the
    classifier-only accuracy."""
    base = finetune(model, UpdateScheme({}), train, val, **finetune_kw)[0]
    folded, gains = fold_bn(model), {}
    for name in layers:
        rules = (["bias"] if folded.get_submodule(name).bias is not None else [])
        rules += list(ratios) if name in weight_layers else []
        gains[name] = {r: finetune(model, UpdateScheme({name: r}), train, val,
                                   **finetune_kw)[0] - base for r in rules}
    return gains, base


def _score(genome, gains):
    return sum(gains[n][r] for n, r in genome.items() if r != "frozen")


def search_update_scheme(model, data, budget_kb, num_layers=8, population=16,
                         generations=12, time_limit=600.0, seed=0, finetune_kw=None):
    """The scheme of best summed contribution whose peak memory fits `budget_kb`.

    model: pretrained, with its transfer-task classifier; data: (train, val) pairs of
    (images, labels). Every conv/linear layer before the classifier (which is always
    trained) may update its bias; the last `num_layers` of them also weight channels.
    Returns (UpdateScheme, info dict)."""
    start = time.perf_counter()
    rng = random.Random(seed)
    train, val = data
    finetune_kw = dict(dict(epochs=2, batch=32, lr=0.05), **(finetune_kw or {}))
    example = (train[0][:1], train[1][:1])  # memory as on the device: batch 1
    layers = [n for n, _ in trainable_layers(model)][:-1]
    gains, base = contributions(model, train, val, layers, layers[-num_layers:], **finetune_kw)
    layers = [n for n in layers if gains[n]]
    budget, cache = budget_kb * 1024, {}

    def fits(genome):
        scheme = UpdateScheme({n: r for n, r in genome.items() if r != "frozen"})
        return scheme_peak_bytes(model, example, scheme, cache) <= budget

    def mutate(genome):
        child = dict(genome)
        for name in rng.sample(layers, rng.randint(1, 3)):
            child[name] = rng.choice(["frozen"] + list(gains[name]))
        return child

    def fitness(genome):
        return _score(genome, gains) if fits(genome) else float("-inf")

    # the bias-only baseline that fits (biases of the most last layers) seeds the population:
    # the result is never worse than it by score
    frozen = {n: "frozen" for n in layers}
    suffix = frozen
    bias_layers = [n for n in layers if "bias" in gains[n]]
    for m in range(1, len(bias_layers) + 1):
        candidate = dict(frozen, **{n: "bias" for n in bias_layers[-m:]})
        if not fits(candidate):
            break
        suffix = candidate
    pop = [frozen, suffix] + [mutate(frozen) for _ in range(population - 2)]
    for _ in range(generations):
        if time.perf_counter() - start > time_limit:
            break
        pop.sort(key=fitness, reverse=True)
        parents = pop[:max(2, population // 4)]
        children = []
        while len(parents) + len(children) < population:
            a, b = rng.sample(parents, 2)
            cross = {n: (a if rng.random() < 0.5 else b)[n] for n in layers}
            children.append(mutate(cross))
        pop = parents + children
    best = max(pop, key=fitness)
    scheme = UpdateScheme({n: r for n, r in best.items() if r != "frozen"})
    info = {"seconds": time.perf_counter() - start, "baseline_acc": base, "gains": gains,
            "score": _score(best, gains), "evaluated": len(cache),
            "peak_bytes": scheme_peak_bytes(model, example, scheme, cache)}
    return scheme, info

"""Tiny training (issue 15): peak training memory per update scheme for the paper's three
networks, and sparse-update accuracy on the transfer task.

Memory (from ember.tiny's static arena plan, fp32 graph, batch 1, 128x128, 10 classes):
arena + trainable weights, for the full update, bias-only, a sparse scheme and the sparse
scheme with operator reordering; the paper's numbers (int8 graph) are printed beside them.
Sparse scheme here: biases of the last half of the conv/linear layers, the first 25% of
output channels of the last 4 layers' weights, the classifier in full.

Search (MCUNet-style net pretrained by ember on the shapes task at 32x32, fine-tuned on the
textures task): `search_update_scheme` under half the memory of updating every bias, then
each of searched / bias-only (biases of the most last layers that fit) / last-k (most last
layers whose full update fits) / all biases / full update (the last two over budget, for
reference) is fine-tuned with the same recipe and its test accuracy measured.

No PyTorch run: PyTorch has no sparse-update training compiler to compare with.
Writes benchmarks/results/tiny.json and tiny.md.  Usage: python benchmarks/tiny.py [--quick]
"""
import json
import sys
import time
from pathlib import Path

import ember
from ember import nn
from ember.models import TINY_MODELS
from ember.tiny import UpdateScheme, compile_training
from ember.tiny.data import TEXTURES, textures_dataset
from ember.tiny.finetune import finetune, with_new_head
from ember.tiny.pretrain import pretrained
from ember.tiny.scheme import trainable_layers
from ember.tiny.search import scheme_peak_bytes, search_update_scheme

RESULTS = Path(__file__).resolve().parent / "results"
PAPER_KB = {"mbv2-w0.35": (2939, 335, 141), "proxyless-w0.3": (2745, None, 135),
            "mcunet": (3650, None, 173)}


def sparse_scheme(model):
    layers = [n for n, _ in trainable_layers(model)]
    rules = {n: "bias" for n in layers[len(layers) // 2:]}
    rules.update({n: 0.25 for n in layers[-5:-1]})
    rules[layers[-1]] = 1.0
    return UpdateScheme(rules)


def memory_table():
    out = {}
    for name, make in TINY_MODELS.items():
        model = make(10).eval()
        x, y = ember.randn(1, 3, 128, 128), ember.tensor([3])
        t0 = time.perf_counter()
        prog = compile_training(model, (x, y), nn.functional.cross_entropy,
                                scheme=sparse_scheme(model), reorder=True)
        report = prog.memory_report(png=str(RESULTS / f"tiny_{name}_timeline.png"))
        out[name] = {k: report[k] / 1024 for k in ("full", "bias_only", "sparse",
                                                    "sparse_reorder")}
        out[name] = {f"{k}_kb": round(v, 1) for k, v in out[name].items()}
        out[name]["compile_report_seconds"] = round(time.perf_counter() - t0, 2)
        print(f"{name}: {out[name]}", flush=True)
    return out


def _most_that_fit(model, example, budget_kb, layers, rule):
    """`rule` for the most last layers whose program fits the budget."""
    best = UpdateScheme({})
    for k in range(1, len(layers) + 1):
        candidate = UpdateScheme({n: rule for n in layers[-k:]})
        if scheme_peak_bytes(model, example, candidate) > budget_kb * 1024:
            break
        best = candidate
    return best


def search_section(quick):
    size, n_train = 32, (192 if quick else 384)
    model = with_new_head(pretrained("mcunet", size, verbose=True), len(TEXTURES))
    train, val = textures_dataset(n_train, size, seed=10), textures_dataset(192, size, seed=11)
    test = textures_dataset(512, size, seed=12)
    example = (train[0][:1], train[1][:1])
    all_bias_kb = scheme_peak_bytes(model, example, UpdateScheme.bias_only(model)) / 1024
    budget_kb = all_bias_kb / 2
    t0 = time.perf_counter()
    scheme, info = search_update_scheme(
        model, (train, val), budget_kb=budget_kb, num_layers=4 if quick else 8,
        population=8 if quick else 16, generations=4 if quick else 10)
    seconds = time.perf_counter() - t0
    layers = [n for n, _ in trainable_layers(model)][:-1]
    last_k = _most_that_fit(model, example, budget_kb, layers, 1.0)
    bias_k = _most_that_fit(model, example, budget_kb, layers, "bias")
    kw = dict(epochs=3, batch=32, lr=0.05)
    acc = {}
    for label, s in [("searched", scheme), ("bias_only", bias_k), ("last_k", last_k),
                     ("all_biases", UpdateScheme.bias_only(model)),
                     ("full", UpdateScheme.full(model))]:
        acc[label] = finetune(model, s, train, test, **kw)[0]
        print(f"{label}: acc {acc[label]:.3f} peak "
              f"{scheme_peak_bytes(model, example, s) / 1024:.1f} KB", flush=True)
    return {"seconds": round(seconds, 1), "budget_kb": round(budget_kb, 1),
            "searched_acc": acc["searched"], "bias_only_acc": acc["bias_only"],
            "last_k_acc": acc["last_k"], "full_update_acc": acc["full"],
            "all_biases_acc": acc["all_biases"], "all_biases_kb": round(all_bias_kb, 1),
            "bias_only_layers": len(bias_k.layers),
            "searched_scheme": {k: v for k, v in scheme.layers.items()},
            "last_k_layers": len(last_k.layers), "baseline_acc": info["baseline_acc"],
            "searched_peak_kb": round(info["peak_bytes"] / 1024, 1)}


def markdown(res):
    lines = ["# ember.tiny: peak training memory (fp32 graph, batch 1, 128x128)", "",
             "| model | full KB | bias-only KB | sparse KB | sparse+reorder KB | "
             "paper full -> sparse -> reorder (int8) |", "|---|---|---|---|---|---|"]
    for name, r in res["models"].items():
        paper = " -> ".join("-" if v is None else str(v) for v in PAPER_KB[name])
        lines.append(f"| {name} | {r['full_kb']} | {r['bias_only_kb']} | {r['sparse_kb']} | "
                     f"{r['sparse_reorder_kb']} | {paper} |")
    if "search" in res:
        s = res["search"]
        lines += ["", "## Sparse-update search (MCUNet-style, shapes -> textures, 32x32)", "",
                  f"budget {s['budget_kb']} KB, search {s['seconds']} s", "",
                  "| scheme | test accuracy |", "|---|---|"]
        for k in ("searched_acc", "bias_only_acc", "last_k_acc", "all_biases_acc",
                  "full_update_acc"):
            lines.append(f"| {k[:-4]} | {s[k]:.3f} |")
    lines += ["", "Machine shared with other jobs; timings are indicative only."]
    return "\n".join(lines) + "\n"


def main():
    quick = "--quick" in sys.argv
    RESULTS.mkdir(exist_ok=True)
    res = {"models": memory_table()}
    if "--memory-only" not in sys.argv:
        res["search"] = search_section(quick)
    (RESULTS / "tiny.json").write_text(json.dumps(res, indent=2))
    (RESULTS / "tiny.md").write_text(markdown(res))
    print(markdown(res))


if __name__ == "__main__":
    main()

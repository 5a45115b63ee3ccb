#!/usr/bin/env python3
"""An independent reference for loci's embedder: all-MiniLM-L6-v2's forward pass written
out in NumPy (float64) over the same model files, with the tokenizers package, mean
pooling and L2 normalisation as sentence-transformers does. Prints the cosine of each
sentence pair in crates/embed/tests/pairs.json, the values the real-model test checks.

Usage: scripts/embed_reference.py MODEL_DIR [PAIRS_JSON]
(needs numpy and tokenizers: python3 -m pip install numpy tokenizers)
"""
import json
import math
import struct
import sys
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


def load_safetensors(path):
    data = Path(path).read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    base = 8 + n
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        start, end = meta["data_offsets"]
        arr = np.frombuffer(data[base + start : base + end], dtype=DTYPES[meta["dtype"]])
        out[name] = arr.reshape(meta["shape"]).astype(np.float64)
    return out


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def gelu(x):
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def embed(text, tok, w, cfg):
    ids = tok.encode(text).ids
    n = len(ids)
    p = lambda k: w[k]
    x = p("embeddings.word_embeddings.weight")[ids]
    x = x + p("embeddings.position_embeddings.weight")[:n]
    x = x + p("embeddings.token_type_embeddings.weight")[0]
    eps = cfg["layer_norm_eps"]
    x = layer_norm(x, p("embeddings.LayerNorm.weight"), p("embeddings.LayerNorm.bias"), eps)
    heads = cfg["num_attention_heads"]
    d = cfg["hidden_size"] // heads
    for i in range(cfg["num_hidden_layers"]):
        pre = f"encoder.layer.{i}."
        lin = lambda name, v: v @ p(pre + name + ".weight").T + p(pre + name + ".bias")
        q = lin("attention.self.query", x).reshape(n, heads, d).transpose(1, 0, 2)
        k = lin("attention.self.key", x).reshape(n, heads, d).transpose(1, 0, 2)
        v = lin("attention.self.value", x).reshape(n, heads, d).transpose(1, 0, 2)
        s = q @ k.transpose(0, 2, 1) / math.sqrt(d)
        s = np.exp(s - s.max(-1, keepdims=True))
        s = s / s.sum(-1, keepdims=True)
        ctx = (s @ v).transpose(1, 0, 2).reshape(n, heads * d)
        a = lin("attention.output.dense", ctx)
        x = layer_norm(a + x, p(pre + "attention.output.LayerNorm.weight"), p(pre + "attention.output.LayerNorm.bias"), eps)
        h = gelu(lin("intermediate.dense", x))
        o = lin("output.dense", h)
        x = layer_norm(o + x, p(pre + "output.LayerNorm.weight"), p(pre + "output.LayerNorm.bias"), eps)
    m = x.mean(0)
    return m / max(np.linalg.norm(m), 1e-12)


def main():
    model = Path(sys.argv[1])
    pairs_path = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(__file__).parent.parent / "crates/embed/tests/pairs.json"
    cfg = json.loads((model / "config.json").read_text())
    max_len = json.loads((model / "sentence_bert_config.json").read_text())["max_seq_length"]
    tok = Tokenizer.from_file(str(model / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(max_len)
    w = load_safetensors(model / "model.safetensors")
    pairs = json.loads(pairs_path.read_text())
    for pair in pairs:
        a, b = embed(pair["a"], tok, w, cfg), embed(pair["b"], tok, w, cfg)
        pair["cosine"] = round(float(a @ b), 4)
    print(json.dumps(pairs, indent=2))


if __name__ == "__main__":
    main()

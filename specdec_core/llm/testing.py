"""Test support: a tiny random-weight llama GGUF, written with gguf.GGUFWriter and quantized like the real
SmolLM2 file (Q8_0 token embedding, Q4_1 matrices, F32 norms, no output.weight), plus a
plain reference forward pass in the Hugging Face convention (unpermuted Q/K, rotate-half
RoPE, float64, no cache) to test the numpy model against."""

from __future__ import annotations

import os

import numpy as np

CFG = dict(
    n_layers=2,
    dim=64,
    ffn_dim=96,
    n_heads=4,
    n_kv_heads=2,
    head_dim=16,
    rope_base=10000.0,
    rms_eps=1e-5,
    context_length=256,
)
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
MERGES = ["Ġ t", "h e", "Ġt he", "Ġ a", "i n", "Ġ s", "e r", "o n", "a n", "Ġ c"]


def byte_chars():
    """GPT-2's byte → printable-character table (the ByteLevel alphabet)."""
    bs = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return [chr(c) for _, c in sorted(zip(bs, cs))]


def vocab():
    toks = SPECIALS + byte_chars()
    for m in MERGES:
        toks.append(m.replace(" ", ""))
    types = [3] * len(SPECIALS) + [1] * (len(toks) - len(SPECIALS))
    return toks, types


def hf_permute(w, n_head):
    """convert_hf_to_gguf's permutation of Q/K rows for adjacent-pair RoPE."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def write_tiny_gguf(
    path: str | os.PathLike, seed: int = 0, logit_scale: float = 0.5
) -> dict[str, np.ndarray]:
    """Write the file; return the dequantized weights in Hugging Face layout for the reference."""
    import gguf

    toks, types = vocab()
    w = gguf.GGUFWriter(str(path), "llama")
    _write_metadata(w, toks, types)
    hf = _write_weights(w, len(toks), np.random.default_rng(seed), logit_scale)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return hf


def _write_metadata(w, toks: list, types: list) -> None:
    """The llama config (:data:`CFG`) and the GPT-2 tokenizer, as convert_hf_to_gguf writes them."""
    c = CFG
    w.add_block_count(c["n_layers"])
    w.add_context_length(c["context_length"])
    w.add_embedding_length(c["dim"])
    w.add_feed_forward_length(c["ffn_dim"])
    w.add_head_count(c["n_heads"])
    w.add_head_count_kv(c["n_kv_heads"])
    w.add_rope_freq_base(c["rope_base"])
    w.add_layer_norm_rms_eps(c["rms_eps"])
    w.add_rope_dimension_count(c["head_dim"])
    w.add_vocab_size(len(toks))
    w.add_tokenizer_model("gpt2")
    w.add_token_list(toks)
    w.add_token_merges(MERGES)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)


def _write_weights(w, V: int, rng: np.random.Generator, logit_scale: float) -> dict[str, np.ndarray]:
    """Random weights, quantized as in the real file; returns them dequantized, HF layout."""
    from gguf import GGMLQuantizationType as Q
    from gguf.quants import dequantize, quantize

    c = CFG
    D, F, H, KVH, hd = c["dim"], c["ffn_dim"], c["n_heads"], c["n_kv_heads"], c["head_dim"]
    hf = {}

    def mat(rows, cols, scale):
        return (rng.standard_normal((rows, cols)) * scale).astype(np.float32)

    def put(name, arr, qtype):
        if qtype == Q.F32:
            w.add_tensor(name, arr.astype(np.float32))
            return arr.astype(np.float32)
        qd = quantize(arr, qtype)
        w.add_tensor(name, qd, raw_dtype=qtype)
        return dequantize(qd, qtype).reshape(arr.shape)

    def norm(name, scale=1.0):
        return put(name, (scale * (1 + 0.1 * rng.standard_normal(D))).astype(np.float32), Q.F32)

    hf["embed"] = put("token_embd.weight", mat(V, D, 1.0), Q.Q8_0)
    hf["norm"] = norm("output_norm.weight", logit_scale)
    for l in range(c["n_layers"]):
        b = f"blk.{l}."
        hf[f"{l}.attn_norm"] = norm(b + "attn_norm.weight")
        hf[f"{l}.ffn_norm"] = norm(b + "ffn_norm.weight")
        q_hf, k_hf = mat(H * hd, D, 0.3), mat(KVH * hd, D, 0.3)
        # GGUF stores the permuted rows; quantization works within rows, so the dequantized
        # permuted matrix is the permutation of the dequantized HF matrix.
        hf[f"{l}.q"] = hf_unpermute(put(b + "attn_q.weight", hf_permute(q_hf, H), Q.Q4_1), H)
        hf[f"{l}.k"] = hf_unpermute(put(b + "attn_k.weight", hf_permute(k_hf, KVH), Q.Q4_1), KVH)
        hf[f"{l}.v"] = put(b + "attn_v.weight", mat(KVH * hd, D, 0.3), Q.Q4_1)
        hf[f"{l}.o"] = put(b + "attn_output.weight", mat(D, H * hd, 0.1), Q.Q4_1)
        hf[f"{l}.gate"] = put(b + "ffn_gate.weight", mat(F, D, 0.2), Q.Q4_1)
        hf[f"{l}.up"] = put(b + "ffn_up.weight", mat(F, D, 0.2), Q.Q4_1)
        hf[f"{l}.down"] = put(b + "ffn_down.weight", mat(D, F, 0.1), Q.Q4_1)
    return hf


def hf_unpermute(w, n_head):
    return w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def reference_logits(hf, tokens):
    """Hugging Face-convention forward pass, float64, whole sequence, no cache."""
    c = CFG
    H, KVH, hd, eps = c["n_heads"], c["n_kv_heads"], c["head_dim"], c["rms_eps"]
    f = {k: v.astype(np.float64) for k, v in hf.items()}
    T = len(tokens)
    x = f["embed"][np.asarray(tokens)]
    inv = 1.0 / c["rope_base"] ** (np.arange(0, hd, 2) / hd)
    ang = np.arange(T)[:, None] * inv[None, :]
    emb = np.concatenate([ang, ang], axis=-1)
    cos, sin = np.cos(emb)[:, None, :], np.sin(emb)[:, None, :]

    def rot_half(v):
        return np.concatenate([-v[..., hd // 2 :], v[..., : hd // 2]], axis=-1)

    def norm(v, wt):
        return v / np.sqrt((v * v).mean(-1, keepdims=True) + eps) * wt

    for l in range(c["n_layers"]):
        h = norm(x, f[f"{l}.attn_norm"])
        q = (h @ f[f"{l}.q"].T).reshape(T, H, hd)
        k = (h @ f[f"{l}.k"].T).reshape(T, KVH, hd)
        v = (h @ f[f"{l}.v"].T).reshape(T, KVH, hd)
        q = q * cos + rot_half(q) * sin
        k = k * cos + rot_half(k) * sin
        k = np.repeat(k, H // KVH, axis=1)
        v = np.repeat(v, H // KVH, axis=1)
        s = np.einsum("thd,shd->hts", q, k) / np.sqrt(hd)
        s = s + np.triu(np.full((T, T), -np.inf), 1)
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        o = np.einsum("hts,shd->thd", s, v).reshape(T, H * hd)
        x = x + o @ f[f"{l}.o"].T
        h = norm(x, f[f"{l}.ffn_norm"])
        g, u = h @ f[f"{l}.gate"].T, h @ f[f"{l}.up"].T
        x = x + (g / (1 + np.exp(-g)) * u) @ f[f"{l}.down"].T
    return norm(x, f["norm"]) @ f["embed"].T


def sequence_law(model, prefix, prune=1e-5):
    """Exact law of the next 3 tokens at temperature 1 from the cache-free forward pass of a
    (tiny) model; pairs (x1, x2) below ``prune`` and tiny third-token tails pool into 'other'."""
    from .adapters import probs_from_logits

    def p_after(seq):
        return probs_from_logits(model.logits_for(list(seq))[-1:], 1.0)[0]

    law = {}
    other = 0.0
    p1 = p_after(prefix)
    for x1 in np.flatnonzero(p1):
        p2 = p_after(tuple(prefix) + (int(x1),))
        for x2 in np.flatnonzero(p2):
            w = p1[x1] * p2[x2]
            if w < prune:
                other += w
                continue
            p3 = p_after(tuple(prefix) + (int(x1), int(x2)))
            for x3 in np.flatnonzero(p3 * w >= 1e-9):
                law[(int(x1), int(x2), int(x3))] = w * p3[x3]
    law["other"] = max(0.0, 1.0 - sum(law.values()))
    return law

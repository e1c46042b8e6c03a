"""A tiny random-weight llama-architecture GGUF model, written at test time.

Its text is noise, but it runs the real llama.cpp path (load, chat template, sampling,
JSON-schema grammar) in milliseconds. With grammar-constrained decoding it still yields
schema-valid JSON, which is all the provider tests need: structure, not quality.

The vocabulary is SentencePiece-style ("llama") with byte fallback: the 256 byte tokens
can spell any UTF-8 text, so the JSON grammar always has a legal next token.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

# ChatML, the format SmolLM2 and many small instruct models use.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

N_EMBD = 64
N_HEAD = 4
N_FF = 128
N_LAYER = 2
N_CTX = 4096

# Token types in GGUF's SentencePiece vocab (gguf.TokenType).
_NORMAL, _UNKNOWN, _CONTROL, _BYTE = 1, 2, 3, 6


def _vocab() -> tuple[list[str], list[float], list[int]]:
    tokens = ["<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"]
    types = [_UNKNOWN, _CONTROL, _CONTROL, _CONTROL, _CONTROL]
    tokens += [f"<0x{byte:02X}>" for byte in range(256)]
    types += [_BYTE] * 256
    # A few whole pieces so the tokenizer has something besides bytes to merge into.
    pieces = ["\u2581", "{", "}", '"', ":", ",", "\u2581the", "json"]
    tokens += pieces
    types += [_NORMAL] * len(pieces)
    scores = [0.0] * (len(tokens) - len(pieces)) + [-float(i) for i in range(len(pieces))]
    return tokens, scores, types


def write_tiny_gguf(
    path: Path, *, seed: int = 0, chat_template: str | None = CHAT_TEMPLATE, context: int = N_CTX
) -> Path:
    """Write the model to ``path`` (a few hundred KB) and return ``path``.

    The same ``seed`` gives byte-identical weights, so outputs are reproducible.
    """
    import gguf

    tokens, scores, types = _vocab()
    n_vocab = len(tokens)
    rng = np.random.default_rng(seed)

    def weights(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.05).astype(np.float32)

    writer = gguf.GGUFWriter(str(path), arch="llama")
    writer.add_name("mir-tiny-test-model")
    writer.add_context_length(context)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(N_LAYER)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD)
    writer.add_rope_dimension_count(N_EMBD // N_HEAD)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_unk_token_id(0)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_add_bos_token(True)
    if chat_template is not None:
        writer.add_chat_template(chat_template)

    # numpy shapes are ggml's dimensions reversed: (rows=outputs, cols=inputs).
    writer.add_tensor("token_embd.weight", weights(n_vocab, N_EMBD))
    writer.add_tensor("output_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    writer.add_tensor("output.weight", weights(n_vocab, N_EMBD))
    for block in range(N_LAYER):
        prefix = f"blk.{block}"
        writer.add_tensor(f"{prefix}.attn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(f"{prefix}.{name}.weight", weights(N_EMBD, N_EMBD))
        writer.add_tensor(f"{prefix}.ffn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        writer.add_tensor(f"{prefix}.ffn_gate.weight", weights(N_FF, N_EMBD))
        writer.add_tensor(f"{prefix}.ffn_up.weight", weights(N_FF, N_EMBD))
        writer.add_tensor(f"{prefix}.ffn_down.weight", weights(N_EMBD, N_FF))

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path

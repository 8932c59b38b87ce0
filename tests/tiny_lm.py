"""Tiny real language models built offline from the bundled samples (test fixtures for the shuffle test).

A byte-level BPE tokenizer (GPT-2 style, ``<|endoftext|>`` as BOS/EOS) and a WordPiece tokenizer (BERT style,
``[CLS] ... [SEP]``, ``[MASK]``) are trained with the ``tokenizers`` library on ``samples/wsj`` and the CNN
sample stories; the models are randomly initialised one-layer ``GPT2LMHeadModel`` (32 positions) and
``BertForMaskedLM`` (24 positions), so the bundled documents are longer than their windows, and a two-layer
Llama-style ``LlamaForCausalLM`` (rotary positions, 8,192 of them, a 32,768 vocabulary) that reads a whole
document in one window. Saved with
``save_pretrained`` (safetensors). Import the fixtures you use: ``from tests.tiny_lm import tiny_gpt2_dir  #
noqa: F401``.
"""

from __future__ import annotations

from tests.fixture import fixture, needs_model_stack
from tests.tiny_model import _cached, sample_texts

GPT2_POSITIONS = 32
BERT_POSITIONS = 24
VOCAB_SIZE = 400
LLAMA_POSITIONS = 8192  # rotary positions: a whole sample document fits in one window
LLAMA_VOCAB = 32768  # the model's vocabulary (the tokenizer uses its first VOCAB_SIZE entries)


def byte_level_bpe(special_tokens: list[str], vocab_size: int = VOCAB_SIZE):
    """A byte-level BPE ``tokenizers.Tokenizer`` trained on the samples, ``special_tokens`` first."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=special_tokens,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    raw.train_from_iterator(sample_texts(), trainer=trainer)
    return raw


def build_gpt2_tokenizer(out_dir: str | None = None, vocab_size: int = VOCAB_SIZE):
    from transformers import GPT2TokenizerFast

    tokenizer = GPT2TokenizerFast(
        tokenizer_object=byte_level_bpe(["<|endoftext|>"], vocab_size),
        bos_token="<|endoftext|>",
        eos_token="<|endoftext|>",
        unk_token="<|endoftext|>",
    )
    if out_dir:
        tokenizer.save_pretrained(out_dir)
    return tokenizer


def build_llama_tokenizer(out_dir: str | None = None, vocab_size: int = VOCAB_SIZE):
    """A byte-level BPE trained on the samples with Llama's special tokens: ``<s>`` (BOS) and ``</s>`` (EOS)."""
    from transformers import PreTrainedTokenizerFast

    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=byte_level_bpe(["<s>", "</s>"], vocab_size),
        bos_token="<s>",
        eos_token="</s>",
        unk_token="</s>",
    )
    if out_dir:
        tokenizer.save_pretrained(out_dir)
    return tokenizer


def build_llama(out_dir: str, tokenizer, seed: int = 0, **sizes) -> str:
    """A randomly initialised Llama-style causal LM (rotary positions, grouped-query attention, RMSNorm,
    SwiGLU; :data:`LLAMA_POSITIONS` positions, a :data:`LLAMA_VOCAB` vocabulary), saved with its tokenizer."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = dict(
        vocab_size=LLAMA_VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=LLAMA_POSITIONS,
        tie_word_embeddings=False,
    )
    config = LlamaConfig(
        **{**config, **sizes},
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        architectures=["LlamaForCausalLM"],
    )
    LlamaForCausalLM(config).save_pretrained(out_dir, safe_serialization=True)
    tokenizer.save_pretrained(out_dir)
    return out_dir


def build_bert_tokenizer(out_dir: str | None = None):
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertTokenizerFast

    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    raw = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    raw.normalizer = normalizers.BertNormalizer(lowercase=True)
    raw.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    raw.decoder = decoders.WordPiece()
    raw.train_from_iterator(
        sample_texts(), trainer=trainers.WordPieceTrainer(vocab_size=VOCAB_SIZE, special_tokens=special)
    )
    raw.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", raw.token_to_id("[CLS]")), ("[SEP]", raw.token_to_id("[SEP]"))],
    )
    tokenizer = BertTokenizerFast(
        tokenizer_object=raw,
        unk_token="[UNK]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        mask_token="[MASK]",
    )
    if out_dir:
        tokenizer.save_pretrained(out_dir)
    return tokenizer


def build_gpt2(out_dir: str, tokenizer, seed: int = 0, **sizes) -> str:
    """A randomly initialised GPT-2 LM, saved; ``sizes`` override the tiny config (``n_positions=1024`` ...)."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    config = dict(vocab_size=len(tokenizer), n_positions=GPT2_POSITIONS, n_embd=16, n_layer=1, n_head=2)
    config = GPT2Config(
        **{**config, **sizes}, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id
    )
    GPT2LMHeadModel(config).save_pretrained(out_dir, safe_serialization=True)
    tokenizer.save_pretrained(out_dir)
    return out_dir


def build_bert(out_dir: str, tokenizer, seed: int = 0) -> str:
    import torch
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=BERT_POSITIONS,
        pad_token_id=tokenizer.pad_token_id or 0,
    )
    BertForMaskedLM(config).save_pretrained(out_dir, safe_serialization=True)
    tokenizer.save_pretrained(out_dir)
    return out_dir


@fixture(scope="session")
def tiny_gpt2_dir(tmp_path_factory) -> str:
    """A randomly initialised one-layer GPT-2 LM (32 positions) with its byte-level BPE tokenizer."""
    needs_model_stack()
    return _cached("tiny-gpt2", lambda path: build_gpt2(path, build_gpt2_tokenizer()), tmp_path_factory)


@fixture(scope="session")
def tiny_llama_dir(tmp_path_factory) -> str:
    """A randomly initialised two-layer Llama-style LM (8,192 rotary positions, vocabulary 32,768)."""
    needs_model_stack()
    return _cached("tiny-llama", lambda path: build_llama(path, build_llama_tokenizer()), tmp_path_factory)


@fixture(scope="session")
def tiny_bert_dir(tmp_path_factory) -> str:
    """A randomly initialised one-layer BERT masked LM (24 positions) with its WordPiece tokenizer."""
    needs_model_stack()
    return _cached("tiny-bert", lambda path: build_bert(path, build_bert_tokenizer()), tmp_path_factory)

"""Loading the language model of :mod:`filters.lm`: which scorer a model needs (causal or masked), its usable
positions, and the checked load (config against weights, tokenizer against model, ``trust_remote_code=False``).
"""

from __future__ import annotations

from incoherent.filters.model import (
    check_tokenizer_matches,
    check_weights,
    load_config,
    load_pretrained,
    open_tokenizer,
)
from incoherent.schemas.records import InputError

CAUSAL, MASKED = "causal", "masked"
SCORERS = ("auto", CAUSAL, MASKED)
# Models whose position ids start after the padding index: usable positions = max_position_embeddings - pad - 1.
OFFSET_POSITIONS = {"roberta", "xlm-roberta", "camembert", "longformer", "data2vec-text", "xmod"}


def model_positions(config, model_dir: str) -> int:
    """Positions a model can attend over (RoBERTa-like models lose ``pad_token_id + 1`` of them)."""
    n = getattr(config, "n_positions", None) or getattr(config, "max_position_embeddings", None)
    if not n:
        raise InputError(f"{model_dir}: the model config names no maximum length (n_positions)")
    if getattr(config, "model_type", None) in OFFSET_POSITIONS:
        n -= (getattr(config, "pad_token_id", None) or 0) + 1
    return int(n)


def scorer_kind(config, model_dir: str, requested: str = "auto") -> str:
    """``causal`` or ``masked`` from the model's recorded architectures (``--scorer auto``), checked."""
    if requested not in SCORERS:
        raise InputError(f"--scorer: unknown scorer {requested!r} (choose from {', '.join(SCORERS)})")
    architectures = getattr(config, "architectures", None) or []
    found = set()
    if any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in architectures):
        found.add(CAUSAL)
    if any(a.endswith("ForMaskedLM") for a in architectures):
        found.add(MASKED)
    names = ", ".join(architectures) or "none recorded"
    if not found:
        raise InputError(
            f"{model_dir}: no causal or masked language-model head (architectures: {names}); "
            "save a *ForCausalLM / *LMHeadModel or *ForMaskedLM model"
        )
    if requested == "auto":
        if len(found) > 1:
            raise InputError(f"{model_dir}: both causal and masked heads ({names}); pass --scorer")
        return found.pop()
    if requested not in found:
        raise InputError(
            f"--scorer {requested}: {model_dir} has no {requested} LM head (architectures: {names})"
        )
    return requested


def checked_language_model(model_dir: str, requested: str = "auto"):
    """``(config, tokenizer, kind)`` after the cheap checks (weights, LM head, tokenizer; no weights loaded)."""
    check_weights(model_dir)
    config = load_config(model_dir)
    kind = scorer_kind(config, model_dir, requested)
    tokenizer = open_tokenizer(model_dir)
    check_tokenizer_matches(tokenizer, config, model_dir)
    if kind == MASKED and tokenizer.mask_token_id is None:
        raise InputError(f"{model_dir}: the tokenizer has no mask token, the masked scorer needs one")
    return config, tokenizer, kind


def check_language_model(model_dir: str, requested: str = "auto") -> str:
    """The scorer kind of a model directory, checked before a pipeline starts."""
    return checked_language_model(model_dir, requested)[2]


def load_language_model(model_dir: str, requested: str = "auto", device: str = "cpu", dtype=None):
    """``(model, tokenizer, kind)`` of a causal or masked LM directory, validated, in eval mode on ``device``."""
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM

    _, tokenizer, kind = checked_language_model(model_dir, requested)
    auto = AutoModelForCausalLM if kind == CAUSAL else AutoModelForMaskedLM
    model = load_pretrained(auto, model_dir, f"the {kind} LM", dtype, tolerated=("embed", "lm_head"))
    model.to(device)
    model.eval()
    return model, tokenizer, kind

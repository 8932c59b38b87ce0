"""Loading, validating and running the intruder classifier (any ``AutoModelForSequenceClassification``).

Only safetensors weights are ever loaded (``use_safetensors=True``) and no code that came with a model ever
runs (``trust_remote_code=False``; :mod:`filters.model_files` refuses such directories before transformers
reads them): a directory holding only pickled ``pytorch_model.bin`` weights is refused. A model directory must
hold a 2-label sequence-classification head and a tokenizer whose vocabulary fits the model's embedding
matrix; anything else is an :class:`~schemas.records.InputError` naming the path.

:class:`ScoringModel` is the one object the Beam ``ModelHandler`` loads per worker process (and what
``incoherent evaluate`` uses): it encodes examples with :func:`filters.task.encode`, sorts them by token
length into micro-batches (length bucketing, little padding), runs them in bf16/fp16 on GPU, halves a batch
that runs out of GPU memory and retries, and returns the intruder probabilities with counts of what happened.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from incoherent.filters import task
from incoherent.filters.model_files import check_model_files
from incoherent.filters.model_source import resolve_model
from incoherent.schemas.records import InputError

LOG = logging.getLogger("incoherent.filters")

INTRUDER_LABEL = 1
ID2LABEL = {0: "original", 1: "intruder"}
LABEL2ID = {v: k for k, v in ID2LABEL.items()}
DEVICES = ("auto", "cuda", "cpu")
DTYPES = ("auto", "float32", "bfloat16", "float16")
EVAL_POOL = 4096  # examples sorted by length together when scoring whole documents
BATCH_MEMORY_SHARE = 0.5  # a micro-batch's activations: at most this share of the free GPU memory
COMPILE_BUCKET = 64  # compiled models see widths rounded up to a multiple of this (few distinct shapes)


# --------------------------------------------------------------------------------------------- device


def resolve_device(device: str, option: str = "--device") -> str:
    """``"cuda"`` or ``"cpu"``: ``auto`` falls back to the CPU, an explicit ``cuda`` without a GPU is an error."""
    import torch

    if device not in DEVICES:
        raise InputError(f"{option}: unknown device {device!r} (choose from {', '.join(DEVICES)})")
    has_cuda = torch.cuda.is_available()
    if device == "cuda" and not has_cuda:
        raise InputError(
            f"{option} cuda: CUDA was requested but no GPU is visible to torch (use auto or cpu)"
        )
    if device == "auto":
        return "cuda" if has_cuda else "cpu"
    return device


def resolve_dtype(dtype: str, device: str, option: str = "--dtype"):
    """The torch dtype to run in: ``auto`` is bf16 on GPUs that support it, else fp16 on GPU, fp32 on CPU."""
    import torch

    if dtype not in DTYPES:
        raise InputError(f"{option}: unknown dtype {dtype!r} (choose from {', '.join(DTYPES)})")
    if dtype == "auto":
        if device != "cuda":
            return torch.float32
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return getattr(torch, dtype)


# --------------------------------------------------------------------------------------------- checks


def check_weights(model_dir: str) -> None:
    """Refuse directories that ask to run code, or lack well-formed safetensors weights (pickled weights are
    never loaded): :func:`filters.model_files.check_model_files`."""
    check_model_files(model_dir)


def load_config(model_dir: str):
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(model_dir, trust_remote_code=False)
    except (OSError, ValueError, KeyError, json.JSONDecodeError) as exc:
        raise InputError(f"{model_dir}: unreadable model config ({str(exc).splitlines()[0]})") from None


def check_classifier_config(config, model_dir: str) -> None:
    """A 2-label sequence-classification head is required."""
    architectures = getattr(config, "architectures", None) or []
    if not any(a.endswith("ForSequenceClassification") for a in architectures):
        found = ", ".join(architectures) or "none recorded"
        raise InputError(
            f"{model_dir}: no sequence-classification head (architectures: {found}); "
            "train one with `incoherent train-filter`"
        )
    if config.num_labels != 2:
        raise InputError(
            f"{model_dir}: classification head has {config.num_labels} labels, the intruder task needs exactly 2"
        )


TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.json",
    "vocab.txt",
    "spiece.model",
    "sentencepiece.bpe.model",
    "tokenizer.model",
)
PROBE_TEXT = "The cat sat on the mat. It was 1999."


def open_tokenizer(model_dir: str):
    """``AutoTokenizer.from_pretrained`` (no remote code) that tokenizes text: a local directory without
    tokenizer files, or a tokenizer that turns a plain English sentence into no tokens, is one line."""
    from transformers import AutoTokenizer

    if os.path.isdir(model_dir) and not any(
        os.path.isfile(os.path.join(model_dir, name)) for name in TOKENIZER_FILES
    ):
        raise InputError(
            f"{model_dir}: no tokenizer files ({', '.join(TOKENIZER_FILES[:2])} ...); save the tokenizer with "
            "the model (tokenizer.save_pretrained(dir))"
        )
    try:
        tokenizer = AutoTokenizer.from_pretrained(model_dir, trust_remote_code=False)
        probe = tokenizer(PROBE_TEXT, add_special_tokens=False)["input_ids"]
    except (OSError, ValueError, KeyError, TypeError, json.JSONDecodeError) as exc:
        raise InputError(f"{model_dir}: no usable tokenizer ({str(exc).splitlines()[0]})") from None
    if len(tokenizer) < 2 or not probe:
        raise InputError(f"{model_dir}: the tokenizer has an empty vocabulary ({len(tokenizer)} tokens)")
    return tokenizer


def load_tokenizer(model_dir: str, config=None):
    """The model's tokenizer; it must be backed by the ``tokenizers`` library and fit the model's vocabulary."""
    tokenizer = open_tokenizer(model_dir)
    if getattr(tokenizer, "backend_tokenizer", None) is None:
        raise InputError(f"{model_dir}: tokenizer {type(tokenizer).__name__} is not backed by `tokenizers`")
    if tokenizer.pad_token_id is None:
        raise InputError(f"{model_dir}: tokenizer has no padding token")
    if config is not None:
        check_tokenizer_matches(tokenizer, config, model_dir)
        if getattr(config, "summary_type", None) == "last" and tokenizer.padding_side != "left":
            # XLNet classifies from the last token (<cls>): padding must go on the left.
            tokenizer.padding_side = "left"
    return tokenizer


def check_tokenizer_matches(tokenizer, config, model_dir: str) -> None:
    """Every token id the tokenizer can produce must index the model's embedding matrix."""
    vocab_size = getattr(config, "vocab_size", None)
    if vocab_size is not None and len(tokenizer) > vocab_size:
        raise InputError(
            f"{model_dir}: tokenizer does not match the model ({len(tokenizer)} tokens, model vocabulary "
            f"{vocab_size})"
        )


def _quiet_xlnet(model) -> None:
    # XLNet returns every layer's hidden states as "mems" at eval time unless told not to (memory wasted).
    for name in ("use_mems_eval", "use_mems_train"):
        if hasattr(model.config, name):
            setattr(model.config, name, False)


def load_pretrained(auto, model_dir: str, what: str, dtype=None, tolerated: tuple[str, ...] = ("embed",)):
    """``auto.from_pretrained`` from safetensors only; a load failure or tensors missing from the weights (other
    than those whose names contain one of ``tolerated``, which the model ties or initialises) is one line."""
    from safetensors import SafetensorError

    kwargs = {"dtype": dtype} if dtype is not None else {}
    try:
        model, info = auto.from_pretrained(
            model_dir, use_safetensors=True, output_loading_info=True, trust_remote_code=False, **kwargs
        )
    except (OSError, ValueError, RuntimeError, SafetensorError) as exc:
        raise InputError(f"{model_dir}: cannot load {what} ({str(exc).splitlines()[0]})") from None
    missing = [k for k in info.get("missing_keys", ()) if not any(t in k for t in tolerated)]
    if missing:
        raise InputError(f"{model_dir}: weights lack {len(missing)} tensors of the model (e.g. {missing[0]})")
    return model


def load_classifier(model_dir: str, device: str = "cpu", dtype=None):
    """``(model, tokenizer)`` of a trained intruder classifier, validated, in eval mode on ``device``."""
    from transformers import AutoModelForSequenceClassification

    check_weights(model_dir)
    config = load_config(model_dir)
    check_classifier_config(config, model_dir)
    tokenizer = load_tokenizer(model_dir, config)
    model = load_pretrained(AutoModelForSequenceClassification, model_dir, "the classifier", dtype)
    _quiet_xlnet(model)
    model.to(device)
    model.eval()
    return model, tokenizer


def load_base_model(name_or_path: str, option: str = "--base-model"):
    """``(model, tokenizer)`` to fine-tune: any checkpoint, a fresh 2-label head added when it has none."""
    from safetensors import SafetensorError
    from transformers import AutoModelForSequenceClassification

    given, name_or_path = name_or_path, resolve_model(name_or_path, option)  # a folder, maybe in the HF cache
    check_weights(name_or_path)
    try:
        config = load_config(name_or_path)
    except InputError:
        raise InputError(
            f"{option} {given}: cannot load its config (a local directory, or a cached hub name)"
        ) from None
    tokenizer = load_tokenizer(name_or_path, config)
    try:
        model = AutoModelForSequenceClassification.from_pretrained(
            name_or_path,
            use_safetensors=True,
            trust_remote_code=False,
            num_labels=2,
            id2label=ID2LABEL,
            label2id=LABEL2ID,
            ignore_mismatched_sizes=True,  # a head with another label count is replaced
        )
    except (OSError, ValueError, RuntimeError, SafetensorError) as exc:
        raise InputError(
            f"{option} {name_or_path}: cannot load the model ({str(exc).splitlines()[0]})"
        ) from None
    _quiet_xlnet(model)
    return model, tokenizer


# --------------------------------------------------------------------------------------------- batching


XLNET_PAD_TYPE_ID = 3


def token_types(config, tokenizer) -> tuple[bool, int]:
    """Whether the model gets ``token_type_ids``, and the id padding positions get.

    XLNet needs its segment ids (0 sentence, 1 document, 2 ``<cls>``) but transformers 5.23's
    ``XLNetTokenizer`` leaves ``token_type_ids`` out of ``model_input_names`` and resets its pad type id to 0,
    so for XLNet we pass them ourselves (pad 3, as the original XLNet tokenizer did). Other models follow
    their tokenizer (BERT/ALBERT yes, RoBERTa no).
    """
    if getattr(config, "model_type", None) == "xlnet":
        return True, XLNET_PAD_TYPE_ID
    return "token_type_ids" in tokenizer.model_input_names, tokenizer.pad_token_type_id


def pad_batch(
    tokenizer,
    encoded: Sequence[task.Encoded],
    pad_to: int | None = None,
    types: tuple[bool, int] = (True, 0),
) -> dict:
    """Pad encodings to the longest one (or ``pad_to``), on the tokenizer's padding side, as torch tensors.

    ``types`` is :func:`token_types`: whether to return ``token_type_ids`` and their padding id.
    """
    import torch

    use_types, pad_type = types
    longest = max(max(len(e.input_ids) for e in encoded), pad_to or 0)
    ids = torch.full((len(encoded), longest), tokenizer.pad_token_id, dtype=torch.long)
    type_ids = torch.full((len(encoded), longest), pad_type, dtype=torch.long)
    mask = torch.zeros((len(encoded), longest), dtype=torch.long)
    left = tokenizer.padding_side == "left"
    for row, e in enumerate(encoded):
        n = len(e.input_ids)
        cols = slice(longest - n, longest) if left else slice(0, n)
        ids[row, cols] = torch.tensor(e.input_ids)
        type_ids[row, cols] = torch.tensor(e.token_type_ids)
        mask[row, cols] = 1
    batch = {"input_ids": ids, "attention_mask": mask}
    if use_types:
        batch["token_type_ids"] = type_ids
    return batch


def length_batches(lengths: Sequence[int], batch_size: int, max_tokens: int | None) -> list[list[int]]:
    """Indices grouped into micro-batches of similar length (sorted, longest first).

    A micro-batch holds at most ``batch_size`` examples, or, with ``max_tokens``, as many as fit in
    ``max_tokens`` padded tokens (short examples travel in bigger batches).

    >>> length_batches([5, 50, 6, 48], batch_size=2, max_tokens=None)
    [[1, 3], [2, 0]]
    >>> length_batches([5, 50, 6, 48], batch_size=2, max_tokens=100)
    [[1, 3], [2, 0]]
    >>> length_batches([5, 5, 5, 5], batch_size=1, max_tokens=20)
    [[0, 1, 2, 3]]
    """
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        width = lengths[current[0]] if current else lengths[i]
        limit = max(batch_size, max_tokens // max(width, 1)) if max_tokens else batch_size
        if current and len(current) + 1 > limit:
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


@dataclass
class ScoreStats:
    """What happened while scoring: examples, truncated inputs, out-of-memory retries, micro-batches."""

    scored: int = 0
    truncated: int = 0
    oom_retries: int = 0
    batches: int = 0
    padded_tokens: int = 0
    real_tokens: int = 0
    extra: dict = field(default_factory=dict)

    def as_counters(self) -> dict[str, int]:
        return {
            "scored": self.scored,
            "truncated": self.truncated,
            "oom_retries": self.oom_retries,
            "batches": self.batches,
            "padded_tokens": self.padded_tokens,
        }


def forward_with_halving(
    forward: Callable[[list], list],
    items: list,
    stats: ScoreStats,
    shrink: Callable[[], None],
    single: Callable[[list], list] | None = None,
    device="cuda",
):
    """``forward(items)``; on out-of-memory (:func:`filters.hardware.oom_errors`), ``shrink()`` the later
    batches, halve this one and retry (counted in ``stats.oom_retries``). A single item that does not fit
    goes to ``single(items)`` (a cheaper way to run it, which may raise out-of-memory itself), else it is one
    line naming the cause (:class:`~schemas.records.InputError`), never a traceback."""
    from incoherent.filters.hardware import oom_errors, release_cached

    try:
        stats.batches += 1
        return forward(items)
    except oom_errors():
        pass  # leave the handler first: the exception's frames hold the batch's tensors
    release_cached(device)
    stats.oom_retries += 1
    if len(items) == 1:
        if single is not None:
            try:
                return single(items)
            except oom_errors():
                release_cached(device)
        raise InputError(
            f"{device}: out of memory on a single input of the micro-batch (even alone); use a smaller model, "
            "a shorter --max-length / window, or another device"
        )
    half = len(items) // 2
    LOG.warning("out of memory on a batch of %d, retrying as %d + %d", len(items), half, len(items) - half)
    shrink()
    return forward_with_halving(forward, items[:half], stats, shrink, single, device) + forward_with_halving(
        forward, items[half:], stats, shrink, single, device
    )


def classifier_bytes_per_token(config, max_length: int, dtype_bytes: int) -> int:
    """A rough upper bound of the memory one padded token of a classifier micro-batch takes in an inference
    forward pass: a few hidden-width buffers, one feed-forward buffer and a row of attention scores per head
    (XLNet's relative attention: content, position and the two-length position scores)."""
    hidden = getattr(config, "d_model", None) or getattr(config, "hidden_size", None) or 1
    inner = getattr(config, "d_inner", None) or getattr(config, "intermediate_size", None) or 4 * hidden
    heads = getattr(config, "n_head", None) or getattr(config, "num_attention_heads", None) or 1
    return (8 * hidden + 2 * inner + 4 * heads * max_length) * dtype_bytes


class ScoringModel:
    """The classifier ready for scoring: ``score([(sentences, position), ...]) -> ([p_intruder], counters)``.

    ``bucket=False`` and ``pad_to_max=True`` reproduce the naive baseline of the benchmark (inputs in arrival
    order, every input padded to ``max_length``). On a GPU, micro-batches are capped by the free memory
    (:func:`classifier_bytes_per_token`). ``compile=True`` (GPU only, off by default: it pays only where
    measured, see ``bench/README_gpu.md``) runs the model through ``torch.compile(dynamic=True)`` with widths
    rounded up to a multiple of :data:`COMPILE_BUCKET` (left padding is masked: the same scores).
    """

    def __init__(
        self,
        model,
        tokenizer,
        device: str = "cpu",
        batch_size: int = 16,
        max_length: int = 512,
        max_tokens: int | None = None,
        bucket: bool = True,
        pad_to_max: bool = False,
        compile: bool = False,
    ):
        self.model, self.tokenizer, self.device = model, tokenizer, device
        self.batch_size, self.max_length = batch_size, max_length
        self.max_tokens = batch_size * max_length if max_tokens is None else max_tokens
        self.bucket, self.pad_to_max = bucket, pad_to_max
        self.types = token_types(model.config, tokenizer)
        self.last_counters: dict[str, int] = {}
        from incoherent.filters.hardware import free_memory, is_cuda

        if is_cuda(device):
            dtype_bytes = next(model.parameters()).element_size()
            per_token = classifier_bytes_per_token(model.config, max_length, dtype_bytes)
            self.max_tokens = max(
                max_length, min(self.max_tokens, int(free_memory(device) * BATCH_MEMORY_SHARE) // per_token)
            )
        self.compiled = bool(compile)
        if compile:
            if not is_cuda(device):
                raise InputError("--compile: needs a GPU (torch.compile of the classifier is GPU only)")
            import torch

            self.model = torch.compile(model, dynamic=True)

    @classmethod
    def load(
        cls,
        model_dir: str,
        device: str = "auto",
        dtype: str = "auto",
        batch_size: int = 16,
        max_length: int = 512,
        **kwargs,
    ) -> ScoringModel:
        resolved = resolve_device(device)
        torch_dtype = resolve_dtype(dtype, resolved)
        model, tokenizer = load_classifier(model_dir, resolved, torch_dtype)
        LOG.info("loaded %s on %s (%s)", model_dir, resolved, torch_dtype)
        return cls(model, tokenizer, resolved, batch_size, max_length, **kwargs)

    def encode(self, items: Sequence[tuple[list[str], int]]) -> list[task.Encoded]:
        return [
            task.encode(self.tokenizer, sentences, position, self.max_length) for sentences, position in items
        ]

    def _forward(self, encoded: list[task.Encoded]) -> list[float]:
        import torch

        pad_to = self.max_length if self.pad_to_max else None
        if self.compiled:  # few distinct shapes: widths rounded up to a multiple of COMPILE_BUCKET
            width = max(len(e.input_ids) for e in encoded)
            pad_to = min(-(-width // COMPILE_BUCKET) * COMPILE_BUCKET, max(self.max_length, width))
        batch = {
            k: v.to(self.device) for k, v in pad_batch(self.tokenizer, encoded, pad_to, self.types).items()
        }
        with torch.inference_mode():
            logits = self.model(**batch).logits.float()
        return torch.softmax(logits, dim=-1)[:, INTRUDER_LABEL].cpu().tolist()

    def _shrink(self) -> None:
        self.max_tokens = max(self.max_tokens // 2, self.max_length)
        self.batch_size = max(1, self.batch_size // 2)

    def _run(self, encoded: list[task.Encoded], stats: ScoreStats) -> list[float]:
        """Forward one micro-batch; on GPU out-of-memory, halve it and retry (counted)."""
        return forward_with_halving(self._forward, encoded, stats, self._shrink, device=self.device)

    def score(self, items: Sequence[tuple[list[str], int]]) -> tuple[list[float], dict[str, int]]:
        """Intruder probability of sentence ``position`` of each document, in input order, and counters."""
        stats = ScoreStats()
        if not items:
            return [], stats.as_counters()
        encoded = self.encode(items)
        stats.truncated = sum(e.truncated for e in encoded)
        lengths = [len(e.input_ids) for e in encoded]
        if self.bucket:
            groups = length_batches(lengths, self.batch_size, self.max_tokens)
        else:
            groups = [
                list(range(i, min(i + self.batch_size, len(items))))
                for i in range(0, len(items), self.batch_size)
            ]
        scores: list[float] = [0.0] * len(items)
        for group in groups:
            width = self.max_length if self.pad_to_max else max(lengths[i] for i in group)
            stats.padded_tokens += width * len(group)
            for i, p in zip(group, self._run([encoded[i] for i in group], stats), strict=True):
                scores[i] = p
        stats.scored = len(items)
        stats.real_tokens = sum(lengths)
        return scores, stats.as_counters()

    def score_documents(self, documents: Sequence[list[str]]) -> list[list[float]]:
        """Scores of every non-opening sentence of every document (the evaluation view)."""
        from tqdm.auto import tqdm

        items = [(sentences, i) for sentences in documents for i in range(1, len(sentences))]
        flat: list[float] = []
        self.last_counters = {}
        for start in tqdm(range(0, len(items), EVAL_POOL), desc="scoring", unit="pool", disable=None):
            scores, counters = self.score(items[start : start + EVAL_POOL])
            flat.extend(scores)
            for name, value in counters.items():
                self.last_counters[name] = self.last_counters.get(name, 0) + value
        out, k = [], 0
        for sentences in documents:
            n = max(len(sentences) - 1, 0)
            out.append(flat[k : k + n])
            k += n
        return out

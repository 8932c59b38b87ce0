"""What the device allows: free memory, out-of-memory errors, TF32, training precision and the optimizer.

Sizes that depend on memory (micro-batches, LM-head chunks, keys and values kept for reuse) are read from
the device when a scorer or a training run starts: ``torch.cuda.mem_get_info`` on a GPU, ``MemAvailable``
(``/proc/meminfo``, else ``os.sysconf``) on a CPU. Nothing here changes a result; it decides how work is cut.
"""

from __future__ import annotations

import logging
import os

LOG = logging.getLogger("incoherent.filters")

CPU_FALLBACK_BYTES = 4 << 30  # when the platform does not say how much memory is free
PRECISIONS = ("auto", "float32", "bfloat16", "float16")


def is_cuda(device) -> bool:
    return str(device).startswith("cuda")


def oom_errors() -> tuple[type[BaseException], ...]:
    """The exceptions an allocation that does not fit raises (``torch.OutOfMemoryError``; ``torch.cuda.
    OutOfMemoryError`` is the same class in torch >= 2.5, listed for older builds)."""
    import torch

    found = {getattr(torch, "OutOfMemoryError", None), getattr(torch.cuda, "OutOfMemoryError", None)}
    return tuple(e for e in found if e is not None)


def release_cached(device) -> None:
    """Give the caching allocator's free blocks back after an out-of-memory error (GPU only)."""
    import torch

    if is_cuda(device) and torch.cuda.is_initialized():
        torch.cuda.empty_cache()


def free_memory(device) -> int:
    """Bytes free on ``device`` now: the GPU's free memory, or the machine's available RAM."""
    if is_cuda(device):
        import torch

        free, _ = torch.cuda.mem_get_info(torch.device(device))
        return int(free)
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return CPU_FALLBACK_BYTES


def enable_tf32(device) -> bool:
    """Let float32 matmuls and convolutions use TF32 tensor cores on a GPU (about 1e-3 relative rounding;
    ``torch.backends.cuda.matmul.allow_tf32``). Returns whether it was switched on (never on a CPU)."""
    if not is_cuda(device):
        return False
    import torch

    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    return True


def add_precision_argument(parser) -> None:
    """The ``--precision`` flag of the training commands (``train-filter``, ``finetune-lm``, ``train-shuffle``)."""
    parser.add_argument(
        "--precision",
        default="auto",
        choices=PRECISIONS,
        help="training precision; auto: bf16 autocast on a GPU (fp16 with loss scaling where bf16 is "
        "unsupported), float32 on a CPU",
    )


def training_precision(device, requested: str = "auto", option: str = "--precision"):
    """``(name, autocast dtype or None, GradScaler or None)`` for a training loop.

    ``auto``: on a GPU, bf16 autocast where the GPU supports bf16, else fp16 autocast with loss scaling
    (``torch.amp.GradScaler``); on a CPU, float32 (no autocast: bf16 on a CPU is slower and less exact).
    An explicit ``bfloat16``/``float16`` on a CPU is refused with one line; ``float32`` is plain fp32.
    """
    import torch

    from incoherent.schemas.records import InputError

    if requested not in PRECISIONS:
        raise InputError(f"{option}: unknown precision {requested!r} (choose from {', '.join(PRECISIONS)})")
    if not is_cuda(device):
        if requested in ("bfloat16", "float16"):
            raise InputError(f"{option} {requested}: mixed precision needs a GPU (use auto or float32)")
        return "float32", None, None
    if requested == "float32":
        return "float32", None, None
    if requested == "auto":
        requested = "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
    if requested == "bfloat16":
        return "bfloat16", torch.bfloat16, None
    return "float16", torch.float16, torch.amp.GradScaler("cuda")


def adamw(param_groups, learning_rate: float, device, weight_decay: float = 0.0, adam: bool = False):
    """``torch.optim.AdamW`` (``adam``: ``Adam``), with the fused CUDA kernel on a GPU (one kernel for all
    parameters instead of several per tensor; the same update up to rounding)."""
    import torch

    kind = torch.optim.Adam if adam else torch.optim.AdamW
    kwargs = {"fused": True} if is_cuda(device) else {}
    if adam:
        return kind(param_groups, lr=learning_rate, **kwargs)
    return kind(param_groups, lr=learning_rate, weight_decay=weight_decay, **kwargs)

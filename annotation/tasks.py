"""Annotation tasks from dataset rows: which documents, which control items, in which order (no Beam, no I/O).

Everything is derived from ``(seed, id)``: the same rows and options give the same tasks, item ids and order.

Intruder configs (INSteD §4.5): tasks of ``per_task`` items, ``controls`` of which are quality-control items,
incoherent training documents whose intruder is easy to spot. Where the adversarial filter ran those are the
rows with ``difficulty == "easy"``; otherwise (``difficulty == "unfiltered"``) the fallback is the
:data:`FALLBACK_POOL` incoherent training documents whose intruder has the lowest TF-IDF similarity to the
sentence it replaced. Shuffle configs (Laban et al. §4): pairs of the original and the shuffled document, in an
order drawn per pair and recorded in the key, ``per_k`` documents per block size.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from incoherent.corpora.seeding import rng_for, stable_hash
from incoherent.schemas.annotation import FORMAT_VERSION, KEY_FORMAT, TASKS_FORMAT

FALLBACK_POOL = 10
EASY_RULE = "difficulty == easy"
FALLBACK_RULE = f"lowest TF-IDF similarity ({FALLBACK_POOL} incoherent training documents; no filter ran)"


def item_id(seed: int, key: str) -> str:
    """An opaque id that does not reveal the document, its split or its role: ``i`` + 12 hex digits."""
    return f"i{stable_hash(seed, 'annotate-item', key):016x}"[:13]


def _order(seed: int, key: str) -> int:
    return stable_hash(seed, "annotate-select", key)


def select(rows: Sequence[dict], seed: int, documents: int | None) -> list[dict]:
    """The ``documents`` rows with the smallest hash of ``(seed, id)`` (all rows when None), in hash order."""
    ordered = sorted(rows, key=lambda r: (_order(seed, r["id"]), r["id"]))
    return ordered if documents is None else ordered[:documents]


def control_pool(train_rows: Sequence[dict], exclude: set[str], seed: int) -> tuple[list[dict], str]:
    """Easy incoherent training documents not under study, and the rule that chose them.

    >>> rows = [{"id": "a", "label": 1, "difficulty": "easy", "similarity": 0.2},
    ...         {"id": "b", "label": 1, "difficulty": "hard", "similarity": 0.1}]
    >>> [r["id"] for r in control_pool(rows, set(), 0)[0]]
    ['a']
    """
    incoherent = [r for r in train_rows if r.get("label") == 1 and r["id"] not in exclude]
    easy = [r for r in incoherent if r.get("difficulty") == "easy"]
    if easy:
        return select(easy, seed, None), EASY_RULE
    ranked = sorted(incoherent, key=lambda r: (r.get("similarity") or 0.0, _order(seed, r["id"]), r["id"]))
    return ranked[:FALLBACK_POOL], FALLBACK_RULE


def insted_file_id(row: dict) -> int | None:
    """INSteD's numeric ``file_id`` of a row read from INSteD-format data (``incoherent probes`` of INSteD's
    JSONL: ``source_id`` is that number), else None (our own documents keep their string ids).

    >>> insted_file_id({"id": "official_wikipedia:290", "source_id": "290", "file_id": 290})
    290
    >>> insted_file_id({"id": "wikipedia:12", "source_id": "wikipedia:12", "file_id": 4}) is None
    True
    """
    file_id = row.get("file_id")
    if isinstance(file_id, int) and not isinstance(file_id, bool) and row.get("source_id") == str(file_id):
        return file_id
    return None


def _export_id(seed: int, tasks: list[dict]) -> str:
    text = json.dumps({"seed": seed, "tasks": tasks}, sort_keys=True, ensure_ascii=False)
    return hashlib.blake2b(text.encode("utf-8"), digest_size=6).hexdigest()


def _chunks(items: list, size: int) -> list[list]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def intruder_tasks(
    rows: Sequence[dict],
    controls_pool: Sequence[dict],
    *,
    seed: int,
    per_task: int,
    controls: int,
) -> tuple[list[dict], dict[str, dict]]:
    """``(tasks, key items)`` for intruder rows (already selected); see :mod:`schemas.annotation`.

    Each task holds ``per_task - controls`` documents under study and ``controls`` control documents drawn
    from ``controls_pool`` per task, in an order drawn per task.
    """
    if per_task < 1 or not 0 <= controls < per_task:
        raise ValueError("need per_task >= 1 and 0 <= controls < per_task")
    if controls and len(controls_pool) < controls:
        raise ValueError(f"{controls} control items per task but only {len(controls_pool)} candidates")
    key: dict[str, dict] = {}

    def add(row: dict, role: str) -> dict:
        iid = item_id(seed, row["id"])
        key[iid] = {
            "id": row["id"],
            "role": role,
            "gold": int(row["intruder_index"]),
            "sentences": len(row["sentences"]),
        }
        if insted_file_id(row) is not None:
            key[iid]["file_id"] = insted_file_id(row)
        return {"item_id": iid, "sentences": list(row["sentences"])}

    # controls are dealt from the pool shuffled once, so no control repeats before the pool is used up
    pool = list(controls_pool)
    rng_for(seed, "controls", "pool").shuffle(pool)
    tasks = []
    for number, chunk in enumerate(_chunks(list(rows), per_task - controls), start=1):
        task_id = f"t{number:04d}"
        items = [add(r, "test") for r in chunk]
        start = (number - 1) * controls
        items += [add(pool[(start + j) % len(pool)], "control") for j in range(controls)]
        rng_for(seed, "order", task_id).shuffle(items)
        tasks.append({"task_id": task_id, "items": items})
    return tasks, key


def broken_text(sentences: Sequence[str]) -> list[str]:
    """The text of a pair control: every sentence with its words in reverse order, which no reader takes for
    the original (Laban et al.'s pairs differ only in block order; a control must be obvious).

    >>> broken_text(["The cat sat on the mat.", "It slept."])
    ['mat. the on sat cat The', 'slept. It']
    """
    return [" ".join(reversed(s.split())) for s in sentences]


def pair_control_pool(rows: Sequence[dict], exclude: set[str], seed: int) -> list[dict]:
    """Documents for pair controls: first permutations of documents not under study, one row per document, in
    hash order of ``(seed, id)``."""
    firsts = {}
    for r in sorted(rows, key=lambda r: (r["id"], int(r["block_size"]))):
        if r["id"] not in exclude and int(r["permutation"]) == 0:
            firsts.setdefault(r["id"], r)
    return select(list(firsts.values()), seed, None)


def pair_tasks(
    rows: Sequence[dict],
    *,
    seed: int,
    per_task: int,
    controls: int = 0,
    controls_pool: Sequence[dict] = (),
) -> tuple[list[dict], dict[str, dict]]:
    """``(tasks, key items)`` for shuffle rows: original and shuffled document shown as A and B in a drawn order.

    ``controls`` items per task are check pairs from ``controls_pool`` (documents not under study): the
    original beside :func:`broken_text` of it, the original's side drawn per pair; their key entries have role
    ``control`` and no block size.

    >>> row = {"id": "d", "block_size": 1, "permutation": 0, "original": ["a", "b"], "shuffled": ["b", "a"]}
    >>> tasks, key = pair_tasks([row], seed=0, per_task=5)
    >>> item = tasks[0]["items"][0]
    >>> item["texts"][key[item["item_id"]]["gold"]]
    ['a', 'b']
    """
    if per_task < 1 or not 0 <= controls < per_task:
        raise ValueError("need per_task >= 1 and 0 <= controls < per_task")
    if controls and len(controls_pool) < controls:
        raise ValueError(f"{controls} control items per task but only {len(controls_pool)} candidates")
    key: dict[str, dict] = {}
    items = []
    for row in rows:
        name = f"{row['id']}|{row['block_size']}|{row['permutation']}"
        iid = item_id(seed, name)
        gold = int(rng_for(seed, "pair-order", name).random() < 0.5)  # 1: the original is shown second
        texts = [list(row["shuffled"]), list(row["original"])]
        if gold == 0:
            texts.reverse()
        key[iid] = {
            "id": row["id"],
            "role": "test",
            "gold": gold,
            "block_size": int(row["block_size"]),
            "permutation": int(row["permutation"]),
        }
        items.append({"item_id": iid, "block_size": int(row["block_size"]), "texts": texts})
    # block sizes mixed across tasks (never grouped by k, which would confound k with position in the session)
    items.sort(key=lambda item: stable_hash(seed, "pair-mix", item["item_id"]))

    def control(row: dict) -> dict:
        name = f"control|{row['id']}"
        iid = item_id(seed, name)
        gold = int(rng_for(seed, "pair-order", name).random() < 0.5)
        texts = [broken_text(row["original"]), list(row["original"])]
        if gold == 0:
            texts.reverse()
        key[iid] = {"id": row["id"], "role": "control", "gold": gold, "block_size": None, "permutation": None}
        return {"item_id": iid, "block_size": int(row["block_size"]), "texts": texts}

    pool = list(controls_pool)
    rng_for(seed, "controls", "pool").shuffle(pool)
    tasks = []
    for number, chunk in enumerate(_chunks(items, per_task - controls), start=1):
        task_id = f"t{number:04d}"
        start = (number - 1) * controls
        chunk = chunk + [control(pool[(start + j) % len(pool)]) for j in range(controls)]
        rng_for(seed, "order", task_id).shuffle(chunk)
        tasks.append({"task_id": task_id, "items": chunk})
    return tasks, key


def select_pairs(
    rows: Sequence[dict], seed: int, per_k: int | None, block_sizes: Sequence[int] | None
) -> list[dict]:
    """``per_k`` rows of each block size (first permutation only), each document at one block size at most.

    Each block size ranks its documents by the hash of ``(seed, id, k)``; the block sizes then take turns
    (ascending k) picking their best document not yet taken, so no document is shown twice at two block sizes.
    Without ``per_k`` every document goes to one block size. Returned by k ascending, then pick order.

    >>> rows = [{"id": d, "block_size": k, "permutation": 0} for d in "abc" for k in (1, 2)]
    >>> picked = select_pairs(rows, 0, 1, None)
    >>> sorted(r["block_size"] for r in picked), len({r["id"] for r in picked})
    ([1, 2], 2)
    """
    sizes = sorted({int(r["block_size"]) for r in rows}) if not block_sizes else sorted(set(block_sizes))
    ranked = {}
    for k in sizes:
        of_k = [r for r in rows if int(r["block_size"]) == k and int(r["permutation"]) == 0]
        ranked[k] = sorted(of_k, key=lambda r, k=k: (_order(seed, f"{r['id']}|{k}"), r["id"]))
    chosen: dict[int, list[dict]] = {k: [] for k in sizes}
    taken: set[str] = set()
    place = dict.fromkeys(sizes, 0)
    progress = True
    while progress:
        progress = False
        for k in sizes:
            if per_k is not None and len(chosen[k]) >= per_k:
                continue
            while place[k] < len(ranked[k]) and ranked[k][place[k]]["id"] in taken:
                place[k] += 1
            if place[k] < len(ranked[k]):
                row = ranked[k][place[k]]
                chosen[k].append(row)
                taken.add(row["id"])
                progress = True
    return [r for k in sizes for r in chosen[k]]


def annotator_sequence(tasks_doc: dict, name: str) -> list[tuple[str, dict]]:
    """``(task_id, item)`` in the order one annotator of the in-lab app sees them.

    The order of the tasks and of the items inside each task is drawn from the export's seed and the
    annotator's name (the same name always gets the same order); an item shown in an earlier task (a control
    item dealt to two tasks) is not shown again.
    """
    seed = tasks_doc.get("seed", 0)
    order = list(tasks_doc["tasks"])
    rng_for(seed, "lab-tasks", name).shuffle(order)
    sequence, seen = [], set()
    for task in order:
        items = list(task["items"])
        rng_for(seed, "lab-items", f"{name}|{task['task_id']}").shuffle(items)
        for item in items:
            if item["item_id"] not in seen:
                seen.add(item["item_id"])
                sequence.append((task["task_id"], item))
    return sequence


def practice_items(
    kind: str, rows: Sequence[dict], exclude: set[str], seed: int, count: int
) -> tuple[list[dict], dict[str, dict]]:
    """``(items, key entries)``: ``count`` practice items (with their answer, for feedback) from ``rows`` whose
    id is not in ``exclude``, and their document ids and answers for the key.

    Intruder rows alternate incoherent and coherent documents where both exist; pair rows are first
    permutations. Practice items are never part of the study: their ids start with ``p``.
    """
    key: dict[str, dict] = {}
    if count <= 0:
        return [], key
    pool = [r for r in rows if r["id"] not in exclude and (kind == "intruder" or int(r["permutation"]) == 0)]
    ranked = sorted(pool, key=lambda r: (_order(seed, f"practice|{r['id']}|{r.get('block_size')}"), r["id"]))
    if kind == "intruder":
        incoherent = [r for r in ranked if r.get("label") == 1]
        coherent = [r for r in ranked if r.get("label") != 1]
        mixed = []
        for pair in zip(incoherent, coherent, strict=False):
            mixed += pair
        longer = incoherent if len(incoherent) > len(coherent) else coherent
        ranked = mixed + longer[min(len(incoherent), len(coherent)) :]
    out, seen = [], set()
    for row in ranked:
        if row["id"] in seen:
            continue
        seen.add(row["id"])
        name = f"practice|{row['id']}|{row.get('block_size')}"
        pid = "p" + item_id(seed, name)[1:]
        if kind == "intruder":
            out.append(
                {"item_id": pid, "sentences": list(row["sentences"]), "answer": int(row["intruder_index"])}
            )
        else:
            gold = int(rng_for(seed, "pair-order", name).random() < 0.5)
            texts = [list(row["shuffled"]), list(row["original"])]
            if gold == 0:
                texts.reverse()
            out.append({"item_id": pid, "block_size": int(row["block_size"]), "texts": texts, "answer": gold})
        key[pid] = {"id": row["id"], "role": "practice", "gold": out[-1]["answer"]}
        if len(out) == count:
            break
    return out, key


def documents(
    kind: str,
    tasks: list[dict],
    key_items: dict[str, dict],
    meta: dict,
    *,
    instructions: str | None = None,
    practice: Sequence[dict] = (),
) -> tuple[dict, dict]:
    """The ``tasks.json`` and ``key.json`` documents of an export (``meta``: config, split, seed, ...);
    ``instructions`` (Markdown) and ``practice`` items go into ``tasks.json`` for the in-lab app."""
    export_id = _export_id(meta["seed"], tasks)
    tasks_doc = {
        "format": TASKS_FORMAT,
        "version": FORMAT_VERSION,
        "export_id": export_id,
        "kind": kind,
        "seed": meta["seed"],
        "workers": meta["workers"],
        "tasks": tasks,
    }
    if instructions is not None:
        tasks_doc["instructions"] = instructions
    if practice:
        tasks_doc["practice"] = list(practice)
    key_doc = {
        "format": KEY_FORMAT,
        "version": FORMAT_VERSION,
        "export_id": export_id,
        "kind": kind,
        **meta,
        "tasks": {t["task_id"]: [i["item_id"] for i in t["items"]] for t in tasks},
        "items": dict(sorted(key_items.items())),
    }
    return tasks_doc, key_doc

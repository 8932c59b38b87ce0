"""Label Studio: the task JSON and labeling configuration of an export, and its JSON export read back (the API
client is :mod:`annotation.labelstudio_api`).
"""

from __future__ import annotations

import html
import json

from incoherent.annotation.formats import (
    INTRUDER_QUESTION,
    NONE_LABEL,
    PAIR_QUESTION,
    Collector,
    finite_seconds,
    json_array_elements,
    plain_value,
    to_int,
)
from incoherent.schemas.records import InputError


def _numbered_html(sentences: list[str]) -> str:
    return "<ol>" + "".join(f"<li>{html.escape(s)}</li>" for s in sentences) + "</ol>"


def labelstudio_tasks(tasks_doc: dict) -> list[dict]:
    """One Label Studio task per item (set the project's overlap to the number of workers)."""
    out = []
    for task in tasks_doc["tasks"]:
        for item in task["items"]:
            data = {
                "export_id": tasks_doc["export_id"],
                "task_id": task["task_id"],
                "item_id": item["item_id"],
            }
            if tasks_doc["kind"] == "intruder":
                sentences = item["sentences"]
                data["html"] = _numbered_html(sentences)
                # hotkeys as in the lab app: the sentence's own number (2-9), 0 for none of the above
                data["options"] = [
                    {"value": f"Sentence {j + 1}", **({"hotkey": str(j + 1)} if j + 1 <= 9 else {})}
                    for j in range(1, len(sentences))
                ]
                data["options"].append({"value": NONE_LABEL, "hotkey": "0"})
            else:
                data["block_size"] = item["block_size"]
                data["text_a"], data["text_b"] = (_numbered_html(t) for t in item["texts"])
            out.append({"data": data})
    return out


def labelstudio_config(kind: str) -> str:
    """The labeling configuration (XML) for :func:`labelstudio_tasks`."""
    if kind == "intruder":
        return (
            "<View>\n"
            f'  <Header value="{html.escape(INTRUDER_QUESTION)}"/>\n'
            '  <HyperText name="document" value="$html"/>\n'
            '  <Choices name="answer" toName="document" choice="single-radio" required="true" value="$options"/>\n'
            "</View>\n"
        )
    return (
        "<View>\n"
        f'  <Header value="{html.escape(PAIR_QUESTION)}"/>\n'
        '  <Header value="Text A" size="5"/>\n'
        '  <HyperText name="text_a" value="$text_a"/>\n'
        '  <Header value="Text B" size="5"/>\n'
        '  <HyperText name="text_b" value="$text_b"/>\n'
        '  <Choices name="answer" toName="text_a" choice="single-radio" required="true">\n'
        '    <Choice value="A" hotkey="a"/>\n'
        '    <Choice value="B" hotkey="b"/>\n'
        "  </Choices>\n"
        "</View>\n"
    )


def _labelstudio_value(choice: str) -> int | None:
    if choice == NONE_LABEL:
        return -1
    if choice in ("A", "B"):
        return "AB".index(choice)
    if choice.startswith("Sentence "):
        return to_int(choice[len("Sentence ") :], offset=-1)
    return None


def _choices(annotation: dict) -> list | None:
    """The chosen values of the ``answer`` control of one annotation; None when its ``result`` is malformed."""
    results = annotation.get("result") or []
    if not isinstance(results, list):
        return None
    chosen = []
    for r in results:
        if not isinstance(r, dict):
            return None
        if r.get("from_name") != "answer":
            continue
        value = r.get("value") or {}
        values = value.get("choices") if isinstance(value, dict) else None
        if not isinstance(values or [], list) or not all(isinstance(c, str) for c in values or []):
            return None
        chosen += values or []
    return chosen


def parse_labelstudio(text: str, path: str, collector: Collector) -> None:
    """Label Studio's JSON export: a list of tasks with ``data`` and ``annotations`` (``result`` choices).

    A task that is not a readable object (nested too deep, a number too long, a task that is an int, a
    ``result`` that is not a list of objects) is rejected as ``bad_record``; the others are read.
    """
    try:  # the whole file at once; only a file that fails is read task by task
        tasks = json.loads(text)
        elements = None
    except (ValueError, RecursionError):
        tasks, elements = None, json_array_elements(text, path)
    if elements is None and not isinstance(tasks, list):
        raise InputError(f"{path}: not a Label Studio JSON export (expected a list of tasks)")
    for number in range(len(tasks) if elements is None else len(elements)):
        origin = f"{path}:task {number}"
        if elements is None:
            task, element = tasks[number], None
        else:
            element = elements[number]
            try:
                task = json.loads(element)
            except (ValueError, RecursionError):
                collector.reject("bad_record", origin, "not a readable JSON task", element[:200])
                continue
        data = task.get("data") if isinstance(task, dict) else None
        annotations = task.get("annotations") or [] if isinstance(task, dict) else None
        if not isinstance(data, dict) or not isinstance(annotations, list):
            collector.reject(
                "bad_record",
                origin,
                "a task is an object with data and annotations",
                (element or json.dumps(task))[:200],
            )
            continue
        if plain_value(task.get("id")):
            origin = f"{path}:task {task['id']}"
        collector.check_export(data.get("export_id"), path)
        for annotation in annotations:
            choices = _choices(annotation) if isinstance(annotation, dict) else None
            if choices is None:
                collector.reject("bad_record", origin, "an annotation without a list of results", annotation)
                continue
            who = annotation.get("completed_by")
            if isinstance(who, dict):
                who = who.get("email") or who.get("id")
            if annotation.get("was_cancelled"):
                collector.reject("cancelled", origin, f"annotation skipped by {who}", data.get("item_id"))
                continue
            raw = choices[0] if len(choices) == 1 else ("|".join(choices) or None)
            answer = _labelstudio_value(raw) if len(choices) == 1 else None
            collector.add(
                data.get("task_id"),
                data.get("item_id"),
                who if who is None or not plain_value(who) else str(who),
                raw,
                answer,
                finite_seconds(annotation.get("lead_time")),
                origin,
                raw,
            )

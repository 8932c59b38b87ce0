"""A review page of probes: N random probes per phenomenon as one self-contained HTML page and as markdown,
for a reader who checks a probe set by eye (``incoherent probes ... --review N``).

Each probe shows its document with the intruder sentence marked and the referent highlighted (an optional
``referent`` list of ``{"sentence", "start", "end"}`` of the row; for the pronoun phenomena, computed when the
page is made: :func:`referents`), the intruder before and after the
probe with every edit marked (``<del>``/``<ins>``), and a verdict box: four checks a careful reader makes
(right kind, grammatical, minimal, detectable from the context) and a note. The page has no remote resource
(its Content-Security-Policy allows none), escapes every text, works with the keyboard alone (Tab through the
checks, ``j``/``k`` to the next and previous probe) and saves the verdicts as JSON in the browser.

The sample is the ``n`` rows of each phenomenon with the smallest hash of (seed, "review", phenomenon, id): the
same seed gives the same page.

>>> row = {"id": "w:1", "phenomenon": "negation", "sentences": ["A b.", "He did not <go>.", "C d."],
...        "intruder_index": 1, "intruder_sentence": "He went <go>.", "probed_sentence": "He did not <go>.",
...        "edits": [{"start": 3, "end": 7, "before": "went", "after": "did not"}]}
>>> marked(row["intruder_sentence"], row["edits"], "before")
'He <del>went</del> &lt;go&gt;.'
>>> marked(row["intruder_sentence"], row["edits"], "after")
'He <ins>did not</ins> &lt;go&gt;.'
"""

from __future__ import annotations

import heapq
import html
import re
from collections.abc import Iterable

from incoherent.corpora.probes.referents import PRONOUN_PHENOMENA, referent_spans
from incoherent.corpora.seeding import stable_hash

CHECKS = (
    ("kind", "right kind", "the edit is of the phenomenon named"),
    ("grammatical", "grammatical", "the probed sentence is grammatical English"),
    ("minimal", "minimal", "only the phenomenon's words changed"),
    ("detectable", "detectable", "the context shows the probed sentence does not belong"),
)


def rank(seed: int, row: dict) -> tuple[int, str]:
    """The review's order of a phenomenon's rows: the hash of (seed, "review", phenomenon, id), then the id."""
    return stable_hash(seed, "review", row["phenomenon"], row["id"]), row["id"]


def sample(rows: Iterable[dict], n: int, seed: int) -> list[dict]:
    """The ``n`` rows (of one phenomenon) first by :func:`rank`; only ``n`` are held at a time."""
    return heapq.nsmallest(n, rows, key=lambda row: rank(seed, row))


def _spans(sentence: str, edits: list[dict], side: str) -> list[tuple[str, bool]]:
    """The sentence before or after the edits as ``(text, edited)`` pieces."""
    pieces, position = [], 0
    for edit in sorted(edits, key=lambda e: e["start"]):
        pieces.append((sentence[position : edit["start"]], False))
        pieces.append((edit["before"] if side == "before" else edit["after"], True))
        position = edit["end"]
    pieces.append((sentence[position:], False))
    return [(text, edited) for text, edited in pieces if text or edited]


def marked(sentence: str, edits: list[dict], side: str) -> str:
    """The sentence as HTML, escaped, with each edit in ``<del>`` (before) or ``<ins>`` (after)."""
    tag = "del" if side == "before" else "ins"
    out = []
    for text, edited in _spans(sentence, edits, side):
        text = html.escape(text, quote=False)
        out.append(f"<{tag}>{text or '∅'}</{tag}>" if edited else text)
    return "".join(out)


def _highlighted(sentence: str, spans: list[tuple[int, int]]) -> str:
    out, position = [], 0
    for start, end in sorted(spans):
        if start < position or end > len(sentence):
            continue
        out += [html.escape(sentence[position:start], quote=False), "<mark>",
                html.escape(sentence[start:end], quote=False), "</mark>"]  # fmt: skip
        position = end
    out.append(html.escape(sentence[position:], quote=False))
    return "".join(out)


def referents(row: dict) -> list[dict]:
    """The spans of the context to highlight: the row's ``referent`` where it names one; for the pronoun
    phenomena, the context's pronouns and titles that tell the gender of its person (the evidence gender,
    animacy-down and animacy-up relied on: :func:`corpora.probes.referents.referent_spans`), computed here
    from the row's document with the same rule the probe used."""
    if row.get("referent"):
        return list(row["referent"])
    if row.get("phenomenon") in PRONOUN_PHENOMENA:
        return referent_spans(row["sentences"], row["intruder_index"])
    return []


def _context(row: dict) -> str:
    referents_by_sentence: dict[int, list[tuple[int, int]]] = {}
    for ref in referents(row):
        referents_by_sentence.setdefault(int(ref["sentence"]), []).append(
            (int(ref["start"]), int(ref["end"]))
        )
    parts = []
    for k, sentence in enumerate(row["sentences"]):
        if k == row["intruder_index"]:
            parts.append('<span class="intruder">[intruder]</span>')
        else:
            parts.append(_highlighted(sentence, referents_by_sentence.get(k, [])))
    return " ".join(parts)


_STYLE = """
body{font:16px/1.5 system-ui,sans-serif;max-width:60rem;margin:1rem auto;padding:0 1rem;color:#111;background:#fff}
h1{font-size:1.4rem}h2{font-size:1.2rem;border-bottom:2px solid #444;margin-top:2rem}
article{border:1px solid #bbb;border-radius:6px;padding:.6rem 1rem;margin:1rem 0}
article:focus-within,article:focus{outline:3px solid #1a5fb4;outline-offset:2px}
.meta{color:#555;font-size:.85rem}.context{color:#333}.intruder{background:#eee;padding:0 .3rem}
del{background:#fdd;color:#900}ins{background:#dfd;color:#060;text-decoration:none;font-weight:600}
mark{background:#ffe27a}dl{display:grid;grid-template-columns:6rem 1fr;margin:.4rem 0}dt{font-weight:600}
fieldset{border:1px dashed #888;margin:.4rem 0}label{margin-right:1rem;white-space:nowrap}
input:focus,textarea:focus,button:focus,a:focus{outline:3px solid #1a5fb4}
textarea{width:100%;box-sizing:border-box}.skip{position:absolute;left:-999px}.skip:focus{left:1rem}
"""

_SCRIPT = """
(function(){
  var arts=[].slice.call(document.querySelectorAll('article'));
  function current(){var a=document.activeElement;while(a&&a.tagName!=='ARTICLE'){a=a.parentElement}return arts.indexOf(a)}
  document.addEventListener('keydown',function(e){
    var t=e.target.tagName; if(t==='TEXTAREA'||e.ctrlKey||e.metaKey||e.altKey){return}
    if(e.key!=='j'&&e.key!=='k'){return}
    var i=current(); i=e.key==='j'?Math.min(arts.length-1,i+1):Math.max(0,i<0?0:i-1);
    arts[i].focus(); e.preventDefault();
  });
  function verdicts(){return arts.map(function(a){var v={id:a.dataset.id,phenomenon:a.dataset.phenomenon};
    [].forEach.call(a.querySelectorAll('input[type=checkbox]'),function(c){v[c.name]=c.checked});
    v.note=a.querySelector('textarea').value; return v;})}
  function update(){var done=arts.filter(function(a){return a.querySelector('input:checked')||a.querySelector('textarea').value}).length;
    document.getElementById('progress').textContent=done+' of '+arts.length+' probes judged';}
  document.addEventListener('change',update);document.addEventListener('input',update);update();
  document.getElementById('save').addEventListener('click',function(){
    var blob=new Blob([JSON.stringify(verdicts(),null,1)],{type:'application/json'});
    var a=document.createElement('a');a.href=URL.createObjectURL(blob);a.download='verdicts.json';
    document.body.appendChild(a);a.click();a.remove();
    document.getElementById('saved').textContent='verdicts.json saved';
  });
})();
"""


def _article(row: dict, number: int) -> str:
    uid = f"p{number}"
    phenomenon = html.escape(row["phenomenon"])
    checks = "".join(
        f'<label title="{html.escape(tip)}"><input type="checkbox" name="{name}"> {label}</label>'
        for name, label, tip in CHECKS
    )
    edits = row.get("edits") or []
    return (
        f'<article tabindex="-1" id="{uid}" data-id="{html.escape(str(row["id"]))}" data-phenomenon="{phenomenon}"'
        f' aria-labelledby="{uid}-h">'
        f'<h3 class="meta" id="{uid}-h">{phenomenon} · {html.escape(str(row["id"]))}</h3>'
        f'<p class="context"><b>Context:</b> {_context(row)}</p>'
        f"<dl><dt>before</dt><dd>{marked(row['intruder_sentence'], edits, 'before')}</dd>"
        f"<dt>after</dt><dd>{marked(row['intruder_sentence'], edits, 'after')}</dd></dl>"
        f"<fieldset><legend>Verdict</legend>{checks}"
        f'<label for="{uid}-note" class="meta">note</label>'
        f'<textarea id="{uid}-note" rows="1" name="note"></textarea></fieldset></article>'
    )


def html_page(sampled: dict[str, list[dict]], title: str, seed: int) -> str:
    """The self-contained review page (no remote resource, every text escaped)."""
    sections, number = [], 0
    toc = []
    for phenomenon, rows in sampled.items():
        anchor = "ph-" + re.sub(r"[^a-z0-9-]", "-", phenomenon.lower())
        toc.append(f'<li><a href="#{anchor}">{html.escape(phenomenon)}</a> ({len(rows)})</li>')
        articles = []
        for row in rows:
            number += 1
            articles.append(_article(row, number))
        sections.append(
            f'<section><h2 id="{anchor}">{html.escape(phenomenon)}</h2>{"".join(articles)}</section>'
        )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline';"
        " script-src 'unsafe-inline'; img-src 'none'\">"
        f'<meta name="viewport" content="width=device-width"><title>{html.escape(title)}</title>'
        f"<style>{_STYLE}</style></head><body>"
        '<a class="skip" href="#p1">Skip to the first probe</a>'
        f"<h1>{html.escape(title)}</h1>"
        f"<p>Random probes per phenomenon (seed {int(seed)}). Edits: <del>removed</del> and <ins>inserted</ins>;"
        " the intruder's place in its document is marked [intruder]; the referent is <mark>highlighted</mark>"
        " (for gender and animacy, the context's pronouns and titles that tell the gender of its person)."
        " Keyboard: Tab moves through the checks, Space ticks one, <kbd>j</kbd>/<kbd>k</kbd> go to the next or"
        " previous probe.</p>"
        f"<ul>{''.join(toc)}</ul>"
        '<p><button type="button" id="save">Save verdicts (JSON)</button> <span id="progress" role="status"></span>'
        ' <span id="saved" role="status"></span></p>'
        f"<main>{''.join(sections)}</main><script>{_SCRIPT}</script></body></html>\n"
    )


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~>-])")


def _md(text: str) -> str:
    """Text safe in markdown: HTML escaped (renderers pass raw HTML through) and markup characters escaped."""
    return _MD_SPECIAL.sub(r"\\\1", html.escape(text, quote=False))


def _md_marked(sentence: str, edits: list[dict], side: str) -> str:
    mark = "~~" if side == "before" else "**"
    return "".join(
        f"{mark}{_md(text) or '∅'}{mark}" if edited else _md(text)
        for text, edited in _spans(sentence, edits, side)
    )


def markdown(sampled: dict[str, list[dict]], title: str, seed: int) -> str:
    """The same probes as markdown, with a task-list verdict box per probe."""
    lines = [
        f"# {_md(title)}",
        "",
        f"Random probes per phenomenon (seed {int(seed)}): ~~removed~~, **inserted**.",
        "",
    ]
    for phenomenon, rows in sampled.items():
        lines += [f"## {_md(phenomenon)}", ""]
        for row in rows:
            edits = row.get("edits") or []
            context = " ".join(
                "[intruder]" if k == row["intruder_index"] else _md(s) for k, s in enumerate(row["sentences"])
            )
            lines += [
                f"### {_md(str(row['id']))}",
                "",
                f"Context: {context}",
                "",
                f"- before: {_md_marked(row['intruder_sentence'], edits, 'before')}",
                f"- after: {_md_marked(row['intruder_sentence'], edits, 'after')}",
                "",
                *[f"- [ ] {label}" for _, label, _ in CHECKS],
                "- note:",
                "",
            ]
    return "\n".join(lines)

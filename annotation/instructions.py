"""Instructions of an annotation study: the default text per task kind, a user's Markdown file, safe HTML.

The instructions (Markdown; consent text may be part of them) are shown on the in-lab start page, at the top of
the MTurk HIT and above each Label Studio task. The default text is written per platform: the keys and the
"Taking part" paragraph of the lab app (a typed name) are not those of an MTurk HIT (no keys, a Worker ID, checks
that may reject a HIT) or of Label Studio (its hotkeys, an account); a user's file is shown as written. Markdown is rendered with raw HTML escaped (``<b>`` shows as
text) and unsafe link schemes (``javascript:``) refused, so an instructions file cannot inject script. The
defaults follow the wording of INSteD (Shen et al. 2021, §4.5) and Laban et al. (2021, §4), with one worked
example each.
"""

from __future__ import annotations

from incoherent.annotation.textfile import read_text
from incoherent.schemas.records import InputError

MAX_BYTES = 64 * 1024

INTRUDER_BODY = """\
## Instructions

You will read short documents, one at a time. In some documents **one sentence was replaced by a sentence
from another document** (an *intruder*): it breaks the flow of the content. Other documents are unchanged.

- Read the whole document, then choose the sentence that creates an incoherence or break in the content flow.
- There is **at most one** such sentence. The first sentence is never the answer.
- If every sentence fits, choose **None of the above**.
- Judge the flow of the text, not its grammar or style. Do not search the web.

### Worked example

1. The Danube is the second-longest river in Europe.
2. It rises in the Black Forest and flows through ten countries.
3. Its delta on the Black Sea is a protected wetland.
4. The recipe calls for two cups of flour and a pinch of salt.
5. Many species of birds nest in the delta every spring.

Sentence 4 is about cooking, not the river: the answer is **sentence 4**. Had sentence 4 said "The delta
grows by about 40 metres a year", every sentence would fit and the answer would be **None of the above**.

"""

PAIR_BODY = """\
## Instructions

You will see two texts side by side, **Text A** and **Text B**. They hold the same sentences, but in one of
them blocks of sentences were put in a different order. Choose the text that is the **original**, the one
whose sentences follow each other naturally.

- Read both texts before you answer. Exactly one of them is the original.
- Judge the order of the sentences: which text reads as a coherent whole.

### Worked example

**Text A**: Maria bought a bicycle. She rode it to work the next morning. By noon it had a flat tyre.

**Text B**: By noon it had a flat tyre. Maria bought a bicycle. She rode it to work the next morning.

Text B starts with "it", which refers to nothing yet, and tells the flat tyre before the purchase: the
original is **Text A**.

"""


PLATFORMS = ("lab", "mturk", "labelstudio")

# What differs by platform: the keys (the lab app's own; Label Studio's hotkeys; none on MTurk, whose HIT is
# answered with the mouse) and who stores the answers under which name.
KEYS = {
    (
        "intruder",
        "lab",
    ): "Keys: `2`-`9` choose a sentence by its number, `0` or `n` None of the above, `Enter` goes on.",
    ("pair", "lab"): "Keys: `a` or `b` choose a text, `Enter` goes on.",
    ("intruder", "labelstudio"): "Keys: `2`-`9` choose a sentence by its number, `0` None of the above.",
    ("pair", "labelstudio"): "Keys: `a` or `b` choose a text.",
}
TAKING_PART = {
    "lab": """Your answers are stored under the name you type (a pseudonym is fine) and used only for this study. You may
stop at any time; the answers you gave so far are kept unless you ask the organiser to delete them.
""",
    "mturk": """Your answers are submitted with your Worker ID and used only for this study. Some documents are checks whose
answer is easy to see; a HIT that answers too many of them wrongly, or that is answered faster than its
documents can be read, may be rejected.
""",
    "labelstudio": """Your answers are stored under your Label Studio account and used only for this study. You may stop at any
time; ask the organiser if you want your answers deleted.
""",
}


def default(kind: str, platform: str = "lab") -> str:
    """The default instructions (Markdown) of a task kind (``intruder`` or ``pair``) on a platform
    (:data:`PLATFORMS`): the same text, with the platform's keys and its "Taking part" paragraph."""
    body = (INTRUDER_BODY if kind == "intruder" else PAIR_BODY).rstrip("\n") + "\n"
    keys = KEYS.get((kind, platform))
    return body + (f"\n{keys}\n" if keys else "") + "\n### Taking part\n\n" + TAKING_PART[platform]


DEFAULT_INTRUDER = default("intruder")
DEFAULT_PAIR = default("pair")


def read(path: str | None, kind: str, platform: str = "lab") -> str:
    """The instructions Markdown of ``--instructions FILE.md``, the same on every platform (the default of
    ``kind`` on ``platform`` when None)."""
    if path is None:
        return default(kind, platform)
    text = read_text(path, limit=MAX_BYTES, option="--instructions")
    if not text.strip():
        raise InputError(f"--instructions: {path}: empty")
    return text


def to_html(markdown: str) -> str:
    """Safe HTML of the instructions: CommonMark with raw HTML escaped and unsafe links left as text.

    An image is drawn only from a ``data:`` address; any other (``http://host/img.png``) becomes a link to it,
    so the page fetches nothing from elsewhere (a HIT on MTurk would, telling that host who looks).

    >>> to_html("**Read** <script>x</script>")
    '<p><strong>Read</strong> &lt;script&gt;x&lt;/script&gt;</p>\\n'
    >>> to_html("![a chart](http://host/img.png)")
    '<p><a href="http://host/img.png">image: a chart</a></p>\\n'
    """
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False})
    md.add_render_rule("image", _image)
    return md.render(markdown)


def _image(renderer, tokens, idx, options, env) -> str:
    """An image from a ``data:`` address as markdown-it draws it; from any other, a link to it."""
    import html

    token = tokens[idx]
    src = token.attrGet("src") or ""
    if src.lower().startswith("data:image/"):
        return renderer.image(tokens, idx, options, env)
    alt = renderer.renderInlineAsText(token.children or [], options, env) or src
    return f'<a href="{html.escape(src, quote=True)}">image: {html.escape(alt, quote=False)}</a>'


def mturk_block(markdown: str) -> str:
    """The instructions as a self-contained block for the top of the HIT template (``$`` escaped, so that
    MTurk's ``${...}`` substitution never touches the text)."""
    body = to_html(markdown).replace("$", "&#36;")
    return (
        "<!-- incoherent: instructions (annotate export --instructions) -->\n"
        '<div id="incoherent-instructions" style="border:1px solid #bbb;border-radius:4px;padding:4px 14px;'
        'margin:0 0 12px;background:#fafafa">\n' + body + "</div>\n"
    )


LABELSTUDIO_TAG = (
    '  <HyperText name="instructions" value="$instructions" inline="true" selectionEnabled="false"/>\n'
)


def with_labelstudio_instructions(config: str, tasks: list[dict], markdown: str) -> tuple[str, list[dict]]:
    """Label Studio's config with the instructions at the top (from each task's ``instructions`` field)."""
    at = config.index("<View>") + len("<View>\n")
    html = to_html(markdown)
    return config[:at] + LABELSTUDIO_TAG + config[at:], [
        {**t, "data": {**t["data"], "instructions": html}} for t in tasks
    ]

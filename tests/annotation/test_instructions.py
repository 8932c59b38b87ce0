"""Instructions as every platform shows them: nothing in what `annotate export` writes makes a page fetch a
resource from elsewhere (a remote image in the user's Markdown becomes a link to it)."""

from __future__ import annotations

import json
import re

from tests.annotation.lab_client import LabSession
from tests.annotation.test_annotate import dataset  # noqa: F401 - the module's private copy of the sample build
from tests.annotation.test_webapp import app_of, export

REMOTE = re.compile(r"""<(img|script|link|iframe|video|audio|source|object|embed)\b[^>]*(src|href)=["']?(https?:)?//""",
                    re.IGNORECASE)  # fmt: skip


def test_remote_images_in_instructions_are_links_never_fetched(dataset, tmp_path):  # noqa: F811
    guide = tmp_path / "guide.md"
    pixel = "data:image/png;base64,iVBORw0KGgo="
    guide.write_text(
        "# Study\n\n![tracking pixel](http://tracker.example/p.png) ![relative](img/x.png) "
        f"![protocol-relative](//cdn.example/y.png) ![inline]({pixel})\n"
    )
    out = tmp_path / "tasks"
    export(dataset, out, "--instructions", guide)
    template = (out / "mturk" / "template.html").read_text()
    ls_tasks = json.loads((out / "labelstudio" / "tasks.json").read_text())
    start = LabSession(app_of(out), "ann").client.get("/").get_data(as_text=True)
    pages = {
        # MTurk's own elements script is the one remote resource a HIT needs (its form is made of them)
        "mturk": template[: template.index("<crowd-form")].replace(
            '<script src="https://assets.crowd.aws/crowd-html-elements.js"></script>', "", 1
        ),
        "labelstudio": ls_tasks[0]["data"]["instructions"],
        "lab": start,
        "instructions.html": (out / "instructions.html").read_text(),
    }
    for where, page in pages.items():
        assert not REMOTE.search(page), (where, REMOTE.search(page).group(0))
        assert '<img src="img/x.png"' not in page and '<img src="http' not in page, where
        assert '<a href="http://tracker.example/p.png">image: tracking pixel</a>' in page, where
        assert f'<img src="{pixel}" alt="inline"' in page, where  # an inline image is drawn as it is

#!/usr/bin/env python3
"""Build a retrieval/build benchmark collection (JSONL lines {"id", "text"}) from real text.

Each document is a window of 3-8 consecutive sentences from one real source text; windows overlap (stride 1), so
near neighbours exist, as they do between Wikipedia articles on one topic. Sentences are cut with a plain regex:
this is timing data, not a gold standard. With --fill, documents past the real windows are 3-8 real sentences
drawn at random from the whole sentence pool (ids `mix:<n>`): not coherent text, but real vocabulary and
lengths, for scale tests of memory and throughput at 300k-1M+ documents (1M documents: about 850 MB of JSONL).

Real text, by default the repository's bundled samples (samples/: the 199 WSJ documents and the 44 CNN stories,
about 4,700 windows); with --data DIR, the larger real-text collection the published figures were measured on
(Wikipedia lead extracts, ABC news, movie reviews, State of the Union and inaugural speeches, Brown, the WSJ
sample, the Lee corpus: about 116,000 windows), laid out as DIR/wiki/ovos_vital_article_leads/summaries_en-us.json,
DIR/other/lee/lee_background.cor and DIR/other/nltk/{abc,movie_reviews,state_union,inaugural,brown,treebank}.zip
(see bench/inputs/README.md).

usage: make_retrieval_corpus.py OUT.jsonl [N_DOCS=100000] [SEED=0] [--fill] [--data DIR]
"""

import json
import random
import re
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
SAMPLES = ROOT / "samples"
SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")


def sample_sources():
    """The bundled samples: WSJ documents (JSONL) and CNN stories (the body, before the first @highlight)."""
    with open(SAMPLES / "wsj" / "wsj.jsonl", encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            yield f"wsj:{doc['id']}", " ".join(doc["text"].split())
    for story in sorted((SAMPLES / "cnn").rglob("*.story")):
        body = story.read_text(encoding="utf-8").split("@highlight", 1)[0]
        yield f"cnn:{story.parent.name}/{story.stem}", " ".join(body.split())


def data_sources(data: Path):
    """The larger real-text collection of --data (the published figures)."""
    leads = json.loads((data / "wiki/ovos_vital_article_leads/summaries_en-us.json").read_text())
    for title, v in leads.items():
        if v.get("extract"):
            yield f"wiki:{title}", v["extract"]
    lee = (data / "other/lee/lee_background.cor").read_text(errors="replace")
    for line_no, line in enumerate(lee.splitlines()):
        yield f"lee:{line_no}", line
    nltk = data / "other/nltk"
    for name in ["abc", "movie_reviews", "state_union", "inaugural", "brown", "treebank"]:
        with zipfile.ZipFile(nltk / f"{name}.zip") as z:
            for member in sorted(z.namelist()):
                if (
                    member.endswith("/")
                    or "README" in member
                    or member.endswith((".xml", "cats.txt", "CONTENTS"))
                ):
                    continue
                if name == "treebank" and "/raw/" not in member:
                    continue
                text = z.read(member).decode("latin-1")
                if name == "brown":
                    text = " ".join(w.rsplit("/", 1)[0] for w in text.split())
                    text = re.sub(r"\s+([.,;:!?'])", r"\1", text).replace("``", '"').replace("''", '"')
                text = text.replace(".START", "")
                paragraphs = (
                    re.split(r"\n\s*\n", text) if name in ("abc", "state_union", "inaugural") else [text]
                )
                for para_no, para in enumerate(paragraphs):
                    yield f"{name}:{member}:{para_no}", " ".join(para.split())


def main():
    argv = sys.argv[1:]
    data = None
    if "--data" in argv:
        i = argv.index("--data")
        data = Path(argv[i + 1])
        del argv[i : i + 2]
    fill = "--fill" in argv
    args = [a for a in argv if a != "--fill"]
    if not args:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    out, n_docs = args[0], int(args[1]) if len(args) > 1 else 100000
    rng = random.Random(int(args[2]) if len(args) > 2 else 0)
    docs, pool = [], []
    for sid, text in data_sources(data) if data else sample_sources():
        sents = [s for s in SENT.split(text) if len(s.split()) >= 3]
        pool.extend(sents)
        for start in range(0, max(1, len(sents) - 2)):
            size = rng.randint(3, 8)
            window = sents[start : start + size]
            if len(window) >= 3:
                docs.append({"id": f"{sid}:{start}", "text": " ".join(window)})
    rng.shuffle(docs)
    real = len(docs)
    docs = docs[:n_docs]
    if len(docs) < n_docs and not fill:
        print(f"only {real} real windows: pass --fill for {n_docs} documents", file=sys.stderr)
    for n in range(n_docs - len(docs) if fill else 0):
        docs.append({"id": f"mix:{n}", "text": " ".join(rng.sample(pool, rng.randint(3, 8)))})
    with open(out, "w") as f:
        for d in docs:
            f.write(json.dumps(d) + "\n")
    print(f"{len(docs)} documents -> {out}")


if __name__ == "__main__":
    main()

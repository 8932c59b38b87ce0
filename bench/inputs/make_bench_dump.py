#!/usr/bin/env python3
"""Build a larger MediaWiki dump from a real one by repeating its <page> elements with fresh ids and titles.

The pages stay real wikitext, so parsing cost per page is realistic; only the count grows. Writes either a
plain single-stream .xml.bz2 (like enwiki-*-pages-articles.xml.bz2) or, with --multistream, the layout of
enwiki-*-pages-articles-multistream.xml.bz2: one bz2 stream for the header, one per 100 pages, one for the
footer, plus the companion index (offset:page_id:title per line, bz2-compressed).

usage: make_bench_dump.py SRC.xml.bz2 REPEATS OUT.xml.bz2 [--multistream]
"""

import bz2
import re
import sys


def main():
    src, repeats, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    multistream = "--multistream" in sys.argv[4:]
    xml = bz2.open(src, "rt", encoding="utf-8").read()
    head, rest = xml.split("<page>", 1)
    body = ("<page>" + rest).rsplit("</mediawiki>", 1)[0]
    pages = re.findall(r"<page>.*?</page>", body, flags=re.S)
    copies, pid = [], 1
    for r in range(repeats):
        for p in pages:
            p = re.sub(r"<id>\d+</id>", f"<id>{pid}</id>", p, count=1)
            if r:
                p = re.sub(
                    r"<title>(.*?)</title>", lambda m, r=r: f"<title>{m.group(1)} ({r})</title>", p, count=1
                )
            title = re.search(r"<title>(.*?)</title>", p).group(1)
            copies.append((pid, title, "  " + p + "\n"))
            pid += 1
    if not multistream:
        with bz2.open(out, "wt", encoding="utf-8", compresslevel=9) as f:
            f.write(head)
            for _, _, p in copies:
                f.write(p)
            f.write("</mediawiki>\n")
    else:
        index = []
        with open(out, "wb") as f:
            f.write(bz2.compress(head.encode("utf-8"), 9))
            for i in range(0, len(copies), 100):
                offset = f.tell()
                chunk = copies[i : i + 100]
                index += [f"{offset}:{pid}:{title}\n" for pid, title, _ in chunk]
                f.write(bz2.compress("".join(p for _, _, p in chunk).encode("utf-8"), 9))
            f.write(bz2.compress(b"</mediawiki>\n", 9))
        stem = out[: -len(".xml.bz2")] if out.endswith(".xml.bz2") else out
        with bz2.open(stem + "-index.txt.bz2", "wt", encoding="utf-8") as f:
            f.writelines(index)
    print(f"{len(copies)} pages -> {out}")


if __name__ == "__main__":
    main()

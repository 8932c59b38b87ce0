"""The probes' part-of-speech tagger: our reader of the JSON weights tags exactly as NLTK's PerceptronTagger
with the same weights, the weights file says where it comes from, and the training script's output loads."""

from __future__ import annotations

import json
import sys
import zipfile

import pytest

from incoherent.corpora.probes import tagger
from incoherent.corpora.probes.text import _ptb_form, tokenize
from incoherent.sources.sentences import split_sentences
from tests.conftest import ROOT

# treebank/combined/wsj_0001.mrg of NLTK's Penn Treebank sample (nltk_data treebank.zip; "10% fragment of Penn
# Treebank, (C) LDC 1995 ... fair use ... non-commercial"), the text of samples/wsj's first document
WSJ_0001 = """( (S
    (NP-SBJ
      (NP (NNP Pierre) (NNP Vinken) )
      (, ,)
      (ADJP
        (NP (CD 61) (NNS years) )
        (JJ old) )
      (, ,) )
    (VP (MD will)
      (VP (VB join)
        (NP (DT the) (NN board) )
        (PP-CLR (IN as)
          (NP (DT a) (JJ nonexecutive) (NN director) ))
        (NP-TMP (NNP Nov.) (CD 29) )))
    (. .) ))
( (S
    (NP-SBJ (NNP Mr.) (NNP Vinken) )
    (VP (VBZ is)
      (NP-PRD
        (NP (NN chairman) )
        (PP (IN of)
          (NP
            (NP (NNP Elsevier) (NNP N.V.) )
            (, ,)
            (NP (DT the) (NNP Dutch) (VBG publishing) (NN group) )))))
    (. .) ))
"""


def wsj_sentences(limit: int = 400) -> list[list[str]]:
    """Token forms (as the probes tag them) of real sentences: the WSJ sample documents."""
    out = []
    with open(ROOT / "samples" / "wsj" / "wsj.jsonl", encoding="utf-8") as f:
        for line in f:
            for sentence in split_sentences(json.loads(line)["text"]):
                forms, previous = [], None
                for token in tokenize(sentence):
                    forms.append(_ptb_form(token.text, previous))
                    previous = forms[-1]
                out.append(forms)
                if len(out) == limit:
                    return out
    return out


def test_tags_as_nltk_does_with_the_same_weights():
    from nltk.tag.perceptron import PerceptronTagger

    model = tagger.read_model()
    reference = PerceptronTagger(load=False)
    reference.decode_json_params((model["weights"], model["tagdict"], model["classes"]))
    ours = tagger.load()
    sentences = wsj_sentences()
    assert sum(map(len, sentences)) > 5000
    for words in sentences:
        assert ours.tag(words) == [t for _, t in reference.tag(words)], words


def test_the_weights_file_states_provenance_licence_and_accuracy():
    info = tagger.info()
    assert info["format"] == 1 and info["tagset"] == "Penn Treebank"
    assert "treebank.zip" in info["provenance"] and "LDC" in info["licence"]
    held = info["held_out"]
    assert held["files"] == "wsj_0180-wsj_0199" and held["accuracy"] >= 0.95 and held["tokens"] > 5000
    docs = (ROOT / "docs" / "probes.md").read_text(encoding="utf-8")
    assert f"{held['accuracy'] * 100:.1f}%" in docs  # the accuracy the docs state is the shipped one
    with open(tagger.WEIGHTS, "rb") as f:
        assert f.read(1) == b"{"  # JSON, not a pickle


def test_the_training_script_writes_weights_the_tagger_reads(tmp_path):
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import train_probe_tagger as script
    finally:
        sys.path.remove(str(ROOT / "tools"))
    archive = tmp_path / "treebank.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("treebank/combined/wsj_0001.mrg", WSJ_0001)
        z.writestr("treebank/combined/wsj_0180.mrg", WSJ_0001)  # held out
    assert script.main([str(archive), "--out", str(tmp_path / "w.json")]) == 0
    model = tagger.read_model(str(tmp_path / "w.json"))
    assert model["held_out"]["sentences"] == 2 and model["held_out"]["tokens"] == 31
    trained = tagger.PerceptronTagger(model["weights"], model["tagdict"], model["classes"])
    assert trained.tag(["Mr.", "Vinken", "is", "chairman", "."]) == ["NNP", "NNP", "VBZ", "NN", "."]
    again = tmp_path / "again.json"
    assert script.main([str(archive), "--out", str(again)]) == 0
    assert again.read_bytes() == (tmp_path / "w.json").read_bytes()  # reproducible
    with pytest.raises(ValueError):
        (tmp_path / "bad.json").write_text('{"format": 2}')
        tagger.read_model(str(tmp_path / "bad.json"))

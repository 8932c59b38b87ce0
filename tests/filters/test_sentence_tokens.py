"""filters/sentence_tokens.py: texts' ids from their sentences' ids equal the tokenizer's ids of the whole
text, for the tokenizers it accepts, on shuffles of the bundled WSJ documents; the others are refused."""

from __future__ import annotations

import random

import pytest
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

from incoherent.filters.lm import LanguageModelScorer, join_sentences, load_language_model
from incoherent.filters.sentence_tokens import joined_token_ids, tokenizes_by_parts
from tests.tiny_lm import build_bert_tokenizer, build_gpt2_tokenizer, tiny_gpt2_dir  # noqa: F401
from tests.tiny_model import sample_documents, sample_texts


def shuffled_documents(seed: int = 0, per_document: int = 3) -> list[list[str]]:
    """Every bundled WSJ document (up to 20 sentences) and ``per_document`` random orders of its sentences."""
    rng = random.Random(seed)
    out = []
    for _, sentences in sample_documents(min_sentences=1, max_sentences=20):
        out.append(list(sentences))
        for _ in range(per_document):
            out.append(rng.sample(sentences, len(sentences)))
    return out


def trained(model, pre_tokenizer, normalizer=None, trainer=None) -> PreTrainedTokenizerFast:
    raw = Tokenizer(model)
    raw.pre_tokenizer = pre_tokenizer
    if normalizer is not None:
        raw.normalizer = normalizer
    raw.train_from_iterator(sample_texts()[:50], trainer=trainer or trainers.BpeTrainer(vocab_size=300))
    return PreTrainedTokenizerFast(tokenizer_object=raw)


@pytest.mark.parametrize("which", ["gpt2", "bert"])
@pytest.mark.parametrize("join", ["space", "newline"])
def test_ids_from_sentences_equal_the_whole_texts_ids(which, join):
    tokenizer = build_gpt2_tokenizer() if which == "gpt2" else build_bert_tokenizer()
    assert tokenizes_by_parts(tokenizer)
    documents = shuffled_documents()
    got, by_parts = joined_token_ids(tokenizer, documents, "\n" if join == "newline" else " ")
    want = tokenizer([join_sentences(d, join) for d in documents], add_special_tokens=False)["input_ids"]
    assert by_parts
    assert [list(ids) for ids in got] == want
    assert sum(map(len, want)) > 50_000  # the whole bundled WSJ sample, not a toy


def test_sentences_with_outer_whitespace_are_tokenized_whole():
    tokenizer = build_gpt2_tokenizer()
    documents = [["A first one.", "  padded second.  "], ["Plain.", "Text here."], ["", "Empty first."]]
    got, by_parts = joined_token_ids(tokenizer, documents, " ")
    want = tokenizer([" ".join(d) for d in documents], add_special_tokens=False)["input_ids"]
    assert by_parts and [list(ids) for ids in got] == want


def test_tokenizers_that_join_across_whitespace_are_refused():
    # SentencePiece-style: spaces become "▁" inside pieces, the first word gets a prefix of its own
    metaspace = trained(
        models.Unigram(), pre_tokenizers.Metaspace(), trainer=trainers.UnigramTrainer(vocab_size=300)
    )
    # byte-level without its regex: the whole text is one pre-token, merges may cross spaces
    no_regex = trained(models.BPE(), pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False))
    dropout = trained(models.BPE(dropout=0.1), pre_tokenizers.ByteLevel(add_prefix_space=False))
    split = trained(models.BPE(), pre_tokenizers.Split(r"\w+\s\w+", "isolated"))
    digits_only = trained(models.BPE(), pre_tokenizers.Sequence([pre_tokenizers.Digits()]))
    accepted = trained(
        models.BPE(),
        pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Digits()]),
        normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()]),
    )
    assert [tokenizes_by_parts(t) for t in (metaspace, no_regex, dropout, split, digits_only)] == [False] * 5
    assert tokenizes_by_parts(accepted)


def test_the_guard_falls_back_to_whole_texts_when_pieces_disagree():
    """A tokenizer whose merges cross spaces (not accepted, called anyway): the probe catches it."""
    raw = Tokenizer(
        models.BPE(vocab={"a": 0, ".": 1, " ": 2, ". ": 3, " a": 4}, merges=[(".", " "), (" ", "a")])
    )
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=raw)
    documents = [["a.", "a."], ["a.", "a.", "a."]]
    want = tokenizer([" ".join(d) for d in documents], add_special_tokens=False)["input_ids"]
    pieces = [tokenizer("a.")["input_ids"], tokenizer(" a.")["input_ids"]]
    assert want[0] != pieces[0] + pieces[1]  # the premise: this tokenizer merges ". " across the space
    got, by_parts = joined_token_ids(tokenizer, documents, " ")
    assert not by_parts and [list(ids) for ids in got] == want


def test_score_documents_equals_score_texts(tiny_gpt2_dir):  # noqa: F811
    model, tokenizer, kind = load_language_model(tiny_gpt2_dir)
    scorer = LanguageModelScorer(model, tokenizer, kind, batch_size=4)
    documents = shuffled_documents(per_document=1)[:12]
    for join in ("space", "newline"):
        want, _ = scorer.score_texts([join_sentences(d, join) for d in documents])
        got, counters = scorer.score_documents(documents, join)
        assert got == want
        assert counters["tokenized_by_parts"] == len(documents)
    laban = LanguageModelScorer(model, tokenizer, kind, window="laban", batch_size=4)
    assert not laban.by_parts  # their tokenization is tokenizer(text), special tokens included
    got, counters = laban.score_documents(documents)
    assert got == laban.score_texts([" ".join(d) for d in documents])[0]
    assert counters["tokenized_whole"] == len(documents) and "tokenized_by_parts" not in counters

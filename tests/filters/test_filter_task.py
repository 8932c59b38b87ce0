import pytest

from incoherent.filters import task
from tests.tiny_model import sample_documents, tiny_base_dir  # noqa: F401


@pytest.fixture(scope="module")
def tokenizer(tiny_base_dir):  # noqa: F811
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_base_dir)


def test_examples_one_per_non_opening_sentence():
    assert task.examples(["A.", "B.", "C."]) == [(1, "B.", "A. B. C."), (2, "C.", "A. B. C.")]
    assert task.examples(["Only one."]) == []


def test_labels_and_spans():
    assert task.labels(["a", "b", "c", "d"], 3) == [0, 0, 1]
    assert task.labels(["a", "b", "c"], -1) == [0, 0]
    sentences = ["One two.", "Three.", "Four five six."]
    text = task.examples(sentences)[0][2]
    assert [text[a:b] for a, b in task.sentence_spans(sentences)] == sentences


@pytest.mark.parametrize(
    ("n", "span", "budget", "expected"),
    [
        (10, (2, 4), 20, (0, 10)),  # fits: nothing cut
        (100, (0, 5), 30, (0, 30)),  # at the start: only the end is cut
        (100, (95, 100), 30, (70, 100)),  # at the end: only the start is cut
        (100, (10, 20), 30, (0, 30)),
        (100, (45, 55), 30, (35, 65)),
        (100, (40, 80), 30, (40, 70)),  # the span alone is too long: its start is kept
    ],
)
def test_window(n, span, budget, expected):
    assert task.window(n, span, budget) == expected


def test_encode_matches_the_tokenizer_when_short(tokenizer):
    sentences = sample_documents()[0][1]
    encoded = task.encode(tokenizer, sentences, 2, 512)
    reference = tokenizer(sentences[2], " ".join(sentences))
    assert encoded.input_ids == reference["input_ids"]
    assert not encoded.truncated
    tokens = tokenizer.convert_ids_to_tokens(encoded.input_ids)
    assert tokens[-2:] == ["<sep>", "<cls>"] and tokens.count("<sep>") == 2
    assert encoded.token_type_ids[-1] == 2 and set(encoded.token_type_ids[:-1]) == {0, 1}


@pytest.mark.parametrize("max_length", [40, 64])
def test_truncation_keeps_the_sentence_in_the_window(tokenizer, max_length):
    sentences = next(s for _, s in sample_documents() if len(s) >= 6)
    for position in range(1, len(sentences)):
        encoded = task.encode(tokenizer, sentences, position, max_length)
        assert len(encoded.input_ids) <= max_length
        assert encoded.truncated
        document_part = [t for t, k in zip(encoded.input_ids, encoded.token_type_ids, strict=True) if k == 1]
        target = tokenizer.backend_tokenizer.encode(sentences[position], add_special_tokens=False).ids
        cap = (max_length - 3) // task.SENTENCE_SHARE
        want = target[: max_length - 3 - cap]
        head = want[:8]
        starts = range(len(document_part) - len(head) + 1)
        assert any(document_part[i : i + len(head)] == head for i in starts), (
            f"sentence {position} left the window"
        )


def test_encode_rejects_the_opening_sentence(tokenizer):
    with pytest.raises(ValueError):
        task.encode(tokenizer, ["A.", "B."], 0, 64)

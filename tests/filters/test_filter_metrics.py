from incoherent.filters.metrics import evaluate_scores, f1_parts, format_table


def test_f1_parts():
    assert f1_parts(0, 0, 0) == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    assert f1_parts(3, 1, 0) == {"precision": 0.75, "recall": 1.0, "f1": 0.8571}


def test_document_and_sentence_metrics():
    # doc 0: intruder at 2, found; doc 1: coherent, false alarm at 1; doc 2: intruder at 1 missed; doc 3 coherent.
    m = evaluate_scores([2, -1, 1, -1], [[0.1, 0.9], [0.6, 0.2], [0.3, 0.2, 0.1], [0.0, 0.49]])
    assert m["documents"] == 4 and m["incoherent_documents"] == 2
    assert m["sentences"] == 9 and m["intruder_sentences"] == 2
    assert m["document_accuracy"] == 0.5
    assert m["sentence"] == {"precision": 0.5, "recall": 0.5, "f1": 0.5, "accuracy": 0.7778}
    assert m["majority"] == {"document_accuracy": 0.5, "document_class": "coherent", "sentence_f1": 0.0}


def test_threshold_and_majority_incoherent():
    m = evaluate_scores([1, 1, -1], [[0.7], [0.7], [0.7]], threshold=0.8)
    assert m["document_accuracy"] == round(1 / 3, 4)
    assert m["majority"]["document_class"] == "incoherent"
    assert m["majority"]["document_accuracy"] == round(2 / 3, 4)
    assert m["majority"]["sentence_f1"] == 0.8  # 2 of 3 sentences are intruders: always "intruder"


def test_format_table_mentions_both_columns():
    text = format_table(evaluate_scores([1], [[0.9]]))
    assert "document accuracy" in text and "majority" in text and "1.0000" in text

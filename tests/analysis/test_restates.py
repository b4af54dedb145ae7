"""The restated-topic rule on questions real models wrote."""

from __future__ import annotations


def test_real_model_questions_that_only_drop_words_of_the_topic_restate_it() -> None:
    from crux_lab.analysis.restates import real_model_pairs, score_pairs

    pairs = real_model_pairs()
    assert len(pairs) >= 6 and {p.restates for p in pairs} == {True, False}
    # "Is Bitcoin a store of value?" only drops topic words; "Does scarcity always imply value?" names a premise.
    assert score_pairs(pairs) == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "accuracy": 1.0}

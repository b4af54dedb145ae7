"""The restated-topic rule on questions real models wrote."""

from __future__ import annotations

import json


def test_real_model_questions_that_only_drop_words_of_the_topic_restate_it() -> None:
    from crux_lab.analysis.restates import real_model_pairs, score_pairs

    pairs = real_model_pairs()
    assert len(pairs) >= 6 and {p.restates for p in pairs} == {True, False}
    # "Is Bitcoin a store of value?" only drops topic words; "Does scarcity always imply value?" names a premise.
    # A pair marked rule_misses is one the rule is known to get wrong (reported by the benchmark, not hidden).
    missed = {json.loads(line)["question"] for line in _rows() if json.loads(line).get("rule_misses")}
    assert len(missed) == 1
    assert score_pairs([p for p in pairs if p.question not in missed]) == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "accuracy": 1.0}
    assert score_pairs([p for p in pairs if p.question in missed])["accuracy"] == 0.0


def test_a_premise_that_uses_every_word_of_a_short_topic_does_not_restate_it() -> None:
    """Qwen's detected claim on the scenario "Work policy in Northgate" names a premise (app
    drivers choose their hours) and uses all three topic words; the word-overlap rule dropped it."""
    from crux_lab.analysis.restates import restates_topic

    topic = "Work policy in Northgate"
    assert not restates_topic("I stand for the principle that drivers choose their hours and work for several apps, "
                              "which I consider an important aspect of Northgate's work policy.", topic)
    assert restates_topic("Should Northgate change its work policy?", topic)
    assert restates_topic("Is the work policy of Northgate right?", topic)
    # a question with a claim of its own under a short label topic is a premise, though it uses most of its words
    assert not restates_topic("Do parents in Cedar Falls want their children to have free school meals, and if so, "
                              "what is the expected impact on attendance?", "Schools policy in Cedar Falls")
    assert restates_topic("Should Cedar Falls change its schools policy?", "Schools policy in Cedar Falls")


def _rows() -> list[str]:
    from importlib import resources

    text = resources.files("crux_lab").joinpath("data/calibration/restates_real.jsonl").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip()]

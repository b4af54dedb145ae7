"""`eval recovery` averages F1 over every scenario: one that found nothing counts as 0."""

from __future__ import annotations

import dataclasses
import math

import pandas as pd
import pytest

from crux_lab.analysis.recovery import KNOBS, RecoveryScore, recovery_summary, summarize


def score(found: int, predicted: int, planted: int = 4) -> RecoveryScore:
    p = found / predicted if predicted else math.nan
    r = found / planted
    f1 = 2 * p * r / (p + r) if predicted and p + r > 0 else (0.0 if predicted else math.nan)
    values = {f.name: 0 for f in dataclasses.fields(RecoveryScore)
              if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    values.update(run_id=f"r{found}{predicted}", engine="panel", scenario="s", n_planted=planted, found=found,
                  false_positives=predicted - found, precision=p, recall=r, f1=f1, type_accuracy=math.nan)
    return RecoveryScore(**values)


def test_a_scenario_with_nothing_found_counts_as_zero_f1() -> None:
    scores = [score(found=2, predicted=2), score(found=0, predicted=0)]  # F1 2/3 and "nothing found"
    row = summarize(scores)[0]
    assert row["f1"] == pytest.approx((2 / 3 + 0.0) / 2)
    assert row["recall"] == pytest.approx(0.25)  # (0.5 + 0) / 2: recall already counted both


def test_the_notebook_summary_averages_the_same_way() -> None:
    frame = pd.DataFrame([{"engine": "panel", "precision": 1.0, "recall": 0.5, "f1": 2 / 3, "type_accuracy": 1.0,
                           "false_common_ground": 0, **dict.fromkeys([*KNOBS, "drift"], 0.0)},
                          {"engine": "panel", "precision": math.nan, "recall": 0.0, "f1": math.nan, "type_accuracy": math.nan,
                           "false_common_ground": 0, **dict.fromkeys([*KNOBS, "drift"], 0.0)}])
    assert recovery_summary(frame).loc["panel", "f1"] == pytest.approx(1 / 3)

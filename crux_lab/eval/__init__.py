"""Evaluation orchestration: running debates for an evaluation, resuming from run folders.

This is the entry-point layer of the evaluations (it calls ``runner`` and ``store``); the pure
scoring stays in :mod:`crux_lab.analysis`.
"""

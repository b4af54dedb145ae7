"""red-dwarf against crux_lab's own Polis statistics, on every vendored conversation.

    .venv/bin/python benchmarks/polis_reddwarf.py --reddwarf /tmp/rd/src   # a folder red-dwarf imports from

red-dwarf (PyPI ``red-dwarf``, from the Polis community) reproduces Polis's math. Where it
covers what :mod:`crux_lab.analysis.polis_truth` computes by hand, this script computes both on
the same votes (each conversation's ``participants-votes.csv``, moderated-out statements
dropped, Polis's own ``group-id`` as the groups) and reports the largest difference:

- per group and statement: agree, disagree and seen counts; Polis's smoothed ``pa``/``pd``;
  the one-proportion tests ``pat``/``pdt``; representativeness ``ra``/``rd`` and its
  two-proportion tests ``rat``/``rdt`` (the group against the others pooled); the repness
  metric ``ra * rat * pa * pat`` (and its disagree form) that ranks a group's mind;
- per statement: group-aware consensus (the product over groups of ``pa``);
- what each selects from them: red-dwarf's representative statements (Polis's selection,
  five per group) against the five a crux_lab mind ranks first, and red-dwarf's consensus
  statements (Polis's, over all participants pooled) against crux_lab's group-informed ones
  (every group clearly agrees): overlaps, since the two rules differ on purpose;
- groups: red-dwarf's Polis pipeline (PCA, k-means, k by silhouette, ``random_state=0``)
  against Polis's exported ``group-id`` (adjusted Rand index), beside crux_lab's own camps
  (:func:`crux_lab.analysis.polis.evaluate_conversation`).

The committed ``benchmarks/data/polis_reddwarf.json`` was written when crux_lab still computed
these by hand (commit d719ac3, red-dwarf from an unzipped wheel via ``--reddwarf``). Since they
agreed everywhere, crux_lab now calls red-dwarf's tests and smoothed probability (a dependency in
pyproject.toml), so a rerun checks that the counts and the products crux_lab builds on them
(representativeness, the repness metric, group-aware consensus) still equal red-dwarf's.
Writes ``benchmarks/data/polis_reddwarf.json`` (or ``--out``); prints a Markdown summary.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from crux_lab.analysis.polis import (  # noqa: E402
    PolisDataError,
    evaluate_conversation,
    list_conversations,
    load_conversation,
)
from crux_lab.analysis.polis_truth import (  # noqa: E402
    Z90,
    _repness,
    ground_truth,
    group_minds,
    prop_test,
    two_prop_test,
)

QUANTITIES = ("na", "nd", "ns", "pa", "pd", "pat", "pdt", "ra", "rd", "rat", "rdt", "repness_agree", "repness_disagree")


def ours(truth: Any) -> dict[tuple[int, str], dict[str, float]]:
    """crux_lab's statistics per (group, statement), from polis_truth's own functions."""
    out: dict[tuple[int, str], dict[str, float]] = {}
    for sid, s in truth.statements.items():
        for g in s.groups:
            rest = [x for x in s.groups if x.group != g.group]
            ra_n, rd_n, rs = sum(x.agree for x in rest), sum(x.disagree for x in rest), sum(x.seen for x in rest)
            out[(g.group, sid)] = {
                "na": g.agree, "nd": g.disagree, "ns": g.seen, "pa": g.pa, "pd": g.pd,
                "pat": prop_test(g.agree, g.seen), "pdt": prop_test(g.disagree, g.seen),
                "ra": g.pa / ((ra_n + 1) / (rs + 2)), "rd": g.pd / ((rd_n + 1) / (rs + 2)),
                "rat": two_prop_test(g.agree, g.seen, ra_n, rs), "rdt": two_prop_test(g.disagree, g.seen, rd_n, rs),
                "repness_agree": _repness(s, g.group, "pro")[0], "repness_disagree": _repness(s, g.group, "con")[0],
            }
    return out


def theirs(conv: Any, truth: Any) -> tuple[dict[tuple[int, str], dict[str, float]], dict[str, float], Any, Any]:
    """red-dwarf's statistics per (group, statement), its group-aware consensus per statement,
    its grouped statistics frame and the vote matrix of the grouped participants."""
    import pandas as pd
    from reddwarf.utils.stats import calculate_comment_statistics_dataframes

    grouped = conv.group_ids >= 0
    matrix = pd.DataFrame(conv.matrix.values[grouped], columns=[int(c) for c in conv.matrix.col_labels])
    remap = {g: i for i, g in enumerate(truth.groups)}
    labels = np.array([remap[int(g)] for g in conv.group_ids[grouped]])
    stats, gac = calculate_comment_statistics_dataframes(vote_matrix=matrix, cluster_labels=labels)
    out: dict[tuple[int, str], dict[str, float]] = {}
    for (gi, sid), row in stats.iterrows():
        vals = {k: float(row[k]) for k in ("na", "nd", "ns", "pa", "pd", "pat", "pdt", "ra", "rd", "rat", "rdt")}
        vals["repness_agree"] = vals["ra"] * vals["rat"] * vals["pa"] * vals["pat"]
        vals["repness_disagree"] = vals["rd"] * vals["rdt"] * vals["pd"] * vals["pdt"]
        out[(truth.groups[int(gi)], str(sid))] = vals
    consensus = {str(sid): float(v) for sid, v in gac["group-aware-consensus"].items()}
    return out, consensus, stats, matrix


def selections(conv: Any, truth: Any, stats: Any, matrix: Any) -> dict[str, Any]:
    """What each side selects: representative statements per group and consensus statements."""
    from reddwarf.utils.consensus import select_consensus_statements
    from reddwarf.utils.stats import select_representative_statements

    rd_rep = select_representative_statements(stats, pick_max=5)
    minds, _ = group_minds(truth, per_group=5, n_consensus=0, min_clear=0)
    rep = {}
    for gi, g in enumerate(truth.groups):
        theirs_ids = [str(r["tid"]) for r in rd_rep.get(gi, [])]
        mine = next((m for m in minds if m.group == g), None)
        ours_ids = [m.statement for m in mine.stances] if mine else []
        rep[str(g)] = {"red_dwarf": theirs_ids, "crux_lab": ours_ids, "both": len(set(theirs_ids) & set(ours_ids))}
    full = load_full_matrix(conv)
    cons = select_consensus_statements(full, pick_max=10**6)  # moderated-out statements are already dropped
    rd_cons = sorted({str(c["tid"]) for c in cons["agree"]}, key=int)
    return {"representative": rep,
            "consensus": {"red_dwarf_agree": len(rd_cons), "crux_lab": len(truth.consensus),
                          "both": len(set(rd_cons) & set(truth.consensus))}}


def load_full_matrix(conv: Any) -> Any:
    import pandas as pd

    return pd.DataFrame(conv.matrix.values, columns=pd.Index([int(c) for c in conv.matrix.col_labels], name="statement_id"))


def groups(conv: Any, folder: Path, seed: int) -> dict[str, Any]:
    """red-dwarf's Polis pipeline against Polis's exported groups, beside crux_lab's camps."""
    from reddwarf.implementations.base import run_pipeline
    from sklearn.metrics import adjusted_rand_score

    labels = conv.matrix.row_labels
    votes = [{"participant_id": int(labels[i]), "statement_id": int(conv.matrix.col_labels[j]),
              "vote": float(conv.matrix.values[i, j]), "modified": 0}
             for i, j in zip(*np.nonzero(conv.matrix.observed), strict=True)]
    result = run_pipeline(votes=votes, random_state=seed)
    found = result.participants_df["cluster_id"]
    polis = {int(p): int(g) for p, g in zip(labels, conv.group_ids, strict=True) if g >= 0}
    both = [p for p in polis if p in found.index and not pd_isna(found.loc[p])]
    ari = float(adjusted_rand_score([polis[p] for p in both], [int(found.loc[p]) for p in both])) if len(both) > 1 else math.nan
    report = evaluate_conversation(conv, seed=seed)
    return {"red_dwarf_groups": int(found.dropna().nunique()), "polis_groups": report.polis_groups,
            "red_dwarf_ari": round(ari, 4), "red_dwarf_participants": len(both),
            "crux_lab_camps": report.our_camps, "crux_lab_ari": round(report.ari, 4)}


def pd_isna(value: Any) -> bool:
    import pandas as pd

    return bool(pd.isna(value))


def compare(folder: Path, seed: int) -> dict[str, Any]:
    conv = load_conversation(folder)
    truth = ground_truth(conv)
    mine = ours(truth)
    rd, gac, stats, matrix = theirs(conv, truth)
    if set(mine) != set(rd):
        raise SystemExit(f"{folder.name}: the two sides cover different (group, statement) pairs")
    diff = {}
    for q in QUANTITIES:
        gaps = [abs(mine[k][q] - rd[k][q]) for k in mine if math.isfinite(mine[k][q]) and math.isfinite(rd[k][q])]
        diff[q] = max(gaps) if gaps else 0.0
    diff["group_aware_consensus"] = max(abs(truth.statements[s].consensus - gac[s]) for s in truth.statements)
    # Where a significance decision flips: red-dwarf reads z > norm.ppf(0.90) = 1.28155..., crux_lab z > 1.2816.
    flips = sum(1 for k in mine for q in ("pat", "pdt", "rat", "rdt")
                if (mine[k][q] > Z90) != (rd[k][q] > 1.2815515655446004))
    return {"conversation": folder.name, "groups": len(truth.groups), "statements": len(truth.statements),
            "pairs": len(mine), "max_abs_difference": diff, "significance_flips": flips,
            "selections": selections(conv, truth, stats, matrix), "clustering": groups(conv, folder, seed)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT / "tests" / "data" / "polis")
    ap.add_argument("--reddwarf", type=Path, default=None, help="A folder red-dwarf imports from (an unzipped wheel).")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "data" / "polis_reddwarf.json")
    args = ap.parse_args()
    if args.reddwarf is not None:
        sys.path.append(str(args.reddwarf))
    warnings.filterwarnings("ignore")
    try:
        import reddwarf
    except ImportError as exc:
        raise SystemExit(f"red-dwarf cannot be imported ({exc}); pass --reddwarf FOLDER (an unzipped wheel).") from None
    version = getattr(reddwarf, "__version__", "")
    if not version:
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as dist_version

        try:
            version = dist_version("red-dwarf")
        except PackageNotFoundError:
            version = next((p.name.split("-")[1] for p in Path(reddwarf.__file__).parents[1].glob("red_dwarf-*.dist-info")), "")
    started = time.perf_counter()
    rows, left_out = [], {}
    for folder in list_conversations(args.data):
        try:
            rows.append(compare(folder, args.seed))
        except PolisDataError as exc:
            left_out[folder.name] = str(exc)
            continue
        r = rows[-1]
        print(f"{folder.name}: largest difference {max(r['max_abs_difference'].values()):.3g}, "
              f"significance flips {r['significance_flips']}, red-dwarf ARI {r['clustering']['red_dwarf_ari']}", flush=True)
    lines = ["| conversation | pairs | largest difference (counts, pa/pd, tests, repness, consensus) | significance flips "
             "| representative: both of 5 per group | consensus: red-dwarf / crux_lab / both | groups ARI: red-dwarf / crux_lab |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        rep = ", ".join(f"g{g}: {v['both']}" for g, v in r["selections"]["representative"].items())
        c = r["selections"]["consensus"]
        lines.append(f"| {r['conversation']} | {r['pairs']} | {max(r['max_abs_difference'].values()):.1g} | "
                     f"{r['significance_flips']} | {rep} | {c['red_dwarf_agree']} / {c['crux_lab']} / {c['both']} | "
                     f"{r['clustering']['red_dwarf_ari']:.2f} / {r['clustering']['crux_lab_ari']:.2f} |")
    table = "\n".join(lines)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"red_dwarf": version, "seed": args.seed, "conversations": rows, "left_out": left_out,
                                    "wall_s": round(time.perf_counter() - started, 1), "table": table},
                                   indent=1, default=float) + "\n")
    print()
    print(table)
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()

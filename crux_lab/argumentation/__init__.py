"""Formal argumentation for crux_lab: Dung semantics at scale, crux extraction, DCG.

Build a framework and ask questions::

    >>> from crux_lab.argumentation import ArgumentFramework, grounded_extension, preferred_extensions
    >>> af = ArgumentFramework.from_edges(["a", "b", "c"], [("a", "b"), ("b", "a"), ("b", "c")])
    >>> sorted(grounded_extension(af)), len(preferred_extensions(af))
    ([], 2)

Modules: :mod:`.framework` (immutable AF), :mod:`.semantics` (extensions,
labellings, acceptance), :mod:`.space` (factorized extension spaces),
:mod:`.sat` (python-sat backend), :mod:`.formats` (ICCMA/APX/TGF),
:mod:`.crux` (camps, cruxes, regimes, pivots), :mod:`.gradual`
(h-categorizer, DF-QuAD), :mod:`.dcg` (dispute-centric graph),
:mod:`.cli` (ICCMA solver sub-app ``af_app``).
"""

from crux_lab.argumentation.crux import (
    CampResult,
    CruxAssumption,
    CruxReport,
    PivotArgument,
    RegimeResult,
    classify_af_regime,
    compute_camps,
    extract_cruxes,
    pivot_arguments,
    rank_assumptions,
    settling_question,
)
from crux_lab.argumentation.formats import AFParseError, dumps_af, parse_af, read_af, write_af
from crux_lab.argumentation.framework import Arg, ArgumentFramework, Extension
from crux_lab.argumentation.gradual import df_quad, h_categorizer
from crux_lab.argumentation.semantics import (
    SEMANTICS,
    Label,
    Labelling,
    complete_extensions,
    complete_labellings,
    credulous_set,
    credulously_accepted,
    grounded_extension,
    grounded_labelling,
    ideal_extension,
    is_admissible,
    is_complete,
    is_conflict_free,
    is_stable,
    labelling_of,
    preferred_extensions,
    semi_stable_extensions,
    skeptical_set,
    skeptically_accepted,
    stable_extensions,
    stage_extensions,
)
from crux_lab.argumentation.space import (
    ComponentSpace,
    ExtensionSpace,
    TooManyAlternatives,
    count_extensions,
    extension_space,
    iter_extensions,
    some_extension,
)

__all__ = [
    "SEMANTICS",
    "AFParseError",
    "Arg",
    "ArgumentFramework",
    "CampResult",
    "ComponentSpace",
    "CruxAssumption",
    "CruxReport",
    "Extension",
    "ExtensionSpace",
    "Label",
    "Labelling",
    "PivotArgument",
    "RegimeResult",
    "TooManyAlternatives",
    "classify_af_regime",
    "complete_extensions",
    "complete_labellings",
    "compute_camps",
    "count_extensions",
    "credulous_set",
    "credulously_accepted",
    "df_quad",
    "dumps_af",
    "extension_space",
    "extract_cruxes",
    "grounded_extension",
    "grounded_labelling",
    "h_categorizer",
    "ideal_extension",
    "is_admissible",
    "is_complete",
    "is_conflict_free",
    "is_stable",
    "iter_extensions",
    "labelling_of",
    "parse_af",
    "pivot_arguments",
    "preferred_extensions",
    "rank_assumptions",
    "read_af",
    "semi_stable_extensions",
    "settling_question",
    "skeptical_set",
    "skeptically_accepted",
    "some_extension",
    "stable_extensions",
    "stage_extensions",
    "write_af",
]

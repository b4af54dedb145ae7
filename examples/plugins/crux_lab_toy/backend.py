"""A toy backend: the persona simulator under another name.

A backend is one factory ``(BackendArgs) -> Backend`` decorated with
:func:`crux_lab.backends.backend`, which says what it is (one line), whether its calls are
billed to an API key, and how its tiers get their models; plus one entry-point line
(``crux_lab.backends``) in this package's ``pyproject.toml``. This one takes the simulator's
options (its personas and failure knobs), so it runs offline with no key.
"""

from __future__ import annotations

from crux_lab.backends import backend
from crux_lab.llm.base import Backend
from crux_lab.llm.registry import BackendArgs
from crux_lab.llm.simulated.factory import build
from crux_lab.llm.simulated.options import SimulatorKnobs, for_debate, for_library


@backend(
    "toy_sim",
    description="example plug-in: the persona simulator under another name, offline, no API cost",
    billed=False,
    tiers="defaults",
    options=for_debate,
    options_model=SimulatorKnobs,
    library=for_library,
)
def toy_sim(args: BackendArgs) -> Backend:
    return build(args)

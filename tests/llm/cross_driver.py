"""One debate against a local OpenAI-compatible server, in a process of its own.

    python tests/llm/cross_driver.py BASE_URL OUT.json ENGINE TOPIC PERSONA [PERSONA ...]

Builds the backend and the run first, prints ``READY``, waits for a line on stdin (so that
two of these start their calls together), runs the debate and writes its result to OUT.json.
"""

from __future__ import annotations

import sys
from pathlib import Path

from crux_lab.llm.openai_backend import OpenAIBackend
from crux_lab.models.config import DebateConfig
from crux_lab.runner import run_debate_sync


def main(argv: list[str]) -> int:
    base_url, out, engine, topic, *personas = argv[1:]
    backend = OpenAIBackend(models={"strong": "stand-in", "fast": "stand-in"}, base_url=base_url)
    config = DebateConfig(topic=topic, persona_ids=personas, engine=engine, backend="openai", seed=0, max_turns=4,
                          params={"poll": False})  # the stand-in speaks only the card schema: no poll
    print("READY", flush=True)
    sys.stdin.readline()
    result = run_debate_sync(config, backend=backend)
    Path(out).write_text(result.model_dump_json(indent=1), encoding="utf-8")
    print("DONE", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

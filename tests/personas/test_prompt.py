from __future__ import annotations

import re
from pathlib import Path

import pytest

from crux_lab.models import CruxCard, CruxCardPosition, DialogueTurn
from crux_lab.personas.loader import list_personas, load_persona, propositions_for
from crux_lab.personas.prompt import (
    CONCESSION_RULE,
    SYSTEM_BUDGET,
    TURN_BUDGET,
    ContestedClaim,
    RoundSummary,
    build_history,
    build_system_prompt,
    build_turn_message,
)
from crux_lab.tokens import count_tokens

SHIPPED = list_personas()


@pytest.mark.parametrize("pid", SHIPPED)
@pytest.mark.parametrize("framing", ["second", "third"])
def test_system_prompt_budget_on_every_persona(pid: str, framing: str) -> None:
    persona = load_persona(pid)
    text = build_system_prompt(persona, framing=framing, propositions=propositions_for([pid]))  # type: ignore[arg-type]
    assert count_tokens(text) <= SYSTEM_BUDGET
    assert CONCESSION_RULE in text  # a persona must be allowed to concede, or no debate ever moves
    for header in ("## Identity", "## Grounding", "## Debate Conduct"):
        assert header in text
    for phrase in persona.voice.forbidden_phrases:
        assert phrase in text
    if framing == "third":
        assert text.startswith(f"The following describes {persona.name}")
        assert "You are " not in text.split("\n")[0]
    else:
        assert text.startswith(f"You are {persona.name}")


def test_real_people_get_no_quote_warning_and_synthetic_are_labelled() -> None:
    for pid in SHIPPED:
        p = load_persona(pid)
        text = build_system_prompt(p)
        if p.contract.kind == "real":
            assert "paraphrases publicly known positions" in text and "Never invent quotations" in text
        else:
            assert "synthetic archetype" in text


def test_verbose_persona_is_cut_to_budget() -> None:
    p = load_persona("michael-saylor")
    p.contract.personality = "He argues at length about monetary history and energy. " * 300
    p.contract.epistemology = "First principles, always, in every setting. " * 200
    text = build_system_prompt(p, max_tokens=SYSTEM_BUDGET)
    assert count_tokens(text) <= SYSTEM_BUDGET
    assert CONCESSION_RULE in text


def test_contract_only_prompt_without_beliefs(library: Path) -> None:
    (library / "arthur-hayes" / "beliefs.json").unlink()
    with pytest.warns(UserWarning):
        p = load_persona("arthur-hayes")
    text = build_system_prompt(p)
    assert "Arthur Hayes" in text and count_tokens(text) <= SYSTEM_BUDGET


def _turns(n: int) -> list[DialogueTurn]:
    speakers = ["michael-saylor", "arthur-hayes"]
    out = []
    for i in range(n):
        sp = speakers[i % 2]
        out.append(DialogueTurn(
            id=f"t{i}", turn_index=i, persona_id=sp, phase="free_exchange" if i < n // 2 else "crux_seeking",
            dialogue=f"Turn {i}. " + ("Adoption is inevitable because money networks win. " if sp == "michael-saylor" else "Adoption depends on printing. ") * 3,
            proposition_ids=["crypto.p2"], stance="pro" if sp == "michael-saylor" else "con",
            reply_to=f"t{i - 1}" if i else None,
        ))
    return out


def test_history_has_no_transcript_but_the_claim_to_answer_and_own_points() -> None:
    turns = _turns(14)
    card = CruxCard(id="k1", question="Is Bitcoin adoption deterministic?", disagreement_type="premise", diagnosis="d",
                    personas={"michael-saylor": CruxCardPosition(position="YES", reasoning="Network effects win."),
                              "arthur-hayes": CruxCardPosition(position="NO", reasoning="It needs printing.")})
    names = {"michael-saylor": "Michael Saylor", "arthur-hayes": "Arthur Hayes"}
    turns[13] = turns[13].model_copy(update={"dialogue": "Michael Saylor is wrong: adoption depends on printing."})
    ctx = build_history("michael-saylor", topic="Bitcoin is digital gold", turns=turns, names=names,
                        contested=[ContestedClaim("Adoption is deterministic", ("michael-saylor", "arthur-hayes"))],
                        cards=[card], recent=4)
    # the newest turn of the other speaker, as a claim, with the reader's own name as "you"
    assert ctx.claim == "The claim to answer: you are wrong: adoption depends on printing."
    # its own points: the first sentence of four words or more ("Turn 8." is a lead-in), each once
    assert ctx.own_claims == ["Adoption is inevitable because money networks win."]
    assert ctx.summaries == ["Adoption depends on printing."]  # others' older points, no speaker named
    text = ctx.render(2000)
    assert "Open disagreements" in text and "[premise, open]" in text and "you: YES" in text
    assert "Arthur" not in text and "Saylor" not in text and "arthur-hayes" not in text
    assert not re.search(r"^(You|Speaker [A-Z]|another speaker):", text, re.M)  # no line reads as a transcript
    small = ctx.render(60)
    assert count_tokens(small) <= 60 and "The claim to answer:" in small  # the claim survives trimming


def test_history_uses_the_engines_summaries_without_names() -> None:
    ctx = build_history("arthur-hayes", topic="t", turns=_turns(10), recent=3,
                        names={"michael-saylor": "Michael Saylor"},
                        round_summaries=[RoundSummary("Round 1", "Michael Saylor clashed on adoption.")])
    assert ctx.summaries == ["Round 1: another speaker clashed on adoption."]


@pytest.mark.parametrize("pid", SHIPPED)
def test_turn_message_budget(pid: str) -> None:
    turns = _turns(40)
    ctx = build_history(pid, topic="Bitcoin is digital gold", turns=turns, recent=8)
    grounding = "Your relevant beliefs:\n" + "\n".join(f"- belief {i} grounded in a long paraphrased chunk of text" for i in range(60))
    msg = build_turn_message("Reply to the last challenge on adoption.", history=ctx, grounding=grounding,
                             reanchor="Remember: you hold your own view.")
    assert count_tokens(msg) <= TURN_BUDGET
    assert "Turn: Reply to the last challenge" in msg and msg.rstrip().endswith('"your response"}')
    assert "Remember: you hold your own view." in msg


def test_default_propositions_are_looked_up_and_prompt_is_memoised() -> None:
    p = load_persona("michael-saylor")
    a = build_system_prompt(p)
    question = next(q.question for q in propositions_for(["michael-saylor"]).values() if "adoption is deterministic" in q.text)
    assert f'answer to "{question}"' in a  # the claim's question, not just the id
    assert build_system_prompt(p) is a
    p.contract.stakes = "Different stakes entirely."
    assert "Different stakes entirely." in build_system_prompt(p)


def test_persona_turn_message_composes_grounding_history_and_reanchor() -> None:
    from crux_lab.personas.prompt import reanchor_line
    from crux_lab.personas.turn import persona_turn_message

    from .fakes import FakeEmbedder

    p = load_persona("michael-saylor")
    ctx = build_history(p.id, topic="Bitcoin is digital gold", turns=_turns(12))
    msg = persona_turn_message(p, "Answer the challenge.", history=ctx, turn_number=4, embedder=FakeEmbedder(),
                               query="Is proof of work energy worth the security?")
    assert count_tokens(msg) <= TURN_BUDGET
    assert "relevant beliefs" in msg and "Remember: you are Michael Saylor" in msg and "Debate on:" in msg
    assert msg.index("relevant beliefs") < msg.index("Debate on:") < msg.index("Turn: Answer")
    plain = persona_turn_message(p, "Answer.", history=ctx, turn_number=3, embedder=FakeEmbedder(), query=None)
    assert "relevant beliefs" not in plain and "Remember:" not in plain
    assert reanchor_line(p).startswith("Remember: you are Michael Saylor. Core commitments:")

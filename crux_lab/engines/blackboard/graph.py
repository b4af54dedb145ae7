"""Graph mode: structured arguments, typed attacks, Dung semantics.

Pipeline:

1. decompose the topic into claims (reused from blitz, fast tier);
2. round 0: each persona submits 2-4 structured arguments (claim + premises + assumptions +
   evidence), in parallel (strong tier);
3. attack rounds 1..max_rounds (default 3):
   a. each persona submits 0-4 attacks, each a counter-argument node plus an edge with a type
      (rebut / undermine / undercut) and a target component and index (parallel, strong tier);
   b. one batch validation call for the whole round (fast tier): fallacy, relevance, type,
      target exists. A reply that cannot be parsed drops the round's attacks with a warning;
      unvalidated attacks never enter the graph;
   c. deduplication (pure code);
   d. semantics recomputed (:mod:`crux_lab.argumentation`);
   e. convergence: labelling stable, no new edges, or max rounds;
4. output extraction in pure code (no LLM): common ground, camps, symmetric difference,
   ranked crux assumptions with settling questions, regime; mapped onto the common result.

Every argument and attack reply states which of the engine's claims (``c1``...) it is about
and the stance it takes on it; attacks name their target by the argument id the prompt
showed. Those stated fields are all the engine knows about who holds what.

Common ground is stricter than "common ground = grounded extension", because it must never
be fake: a grounded argument counts only when it is uncontested, i.e. in no attack
with another persona's argument and opposed by no other persona's argument of the opposite
stated stance on the same claim. Grounded arguments that won a conflict are reported
separately as ``result.accepted_claims`` (:class:`crux_lab.models.AcceptedClaim`: who
attacked, who defended, what it attacks). Camps are groups of personas by the stances they
argued; preferred extensions are reported as extensions, with their count.

Besides its graph events it sends the events of the blitz and classical engines:
debate_start, table_assigned, status, initial_stance (derived from round 0), agent_turn (one
per validated attack), convergence_update, blackboard_update, debate_complete.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Sequence
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field, ValidationError

from crux_lab.engines import register_engine
from crux_lab.engines.base import EngineContext, EngineParams, debate_output, engine_params
from crux_lab.engines.blackboard import sim  # noqa: F401  (registers the simulator's answers to the family's purposes)
from crux_lab.engines.blackboard.claims import (
    Claim,
    StanceWord,
    claim_hints,
    claim_ref,
    claims_block,
    decompose_claims,
    grounding_block,
    persona_system,
)
from crux_lab.engines.blackboard.events import (
    ArgumentsSubmitted,
    AttacksGenerated,
    BlackboardUpdate,
    ClaimsDecomposed,
    ConvergenceUpdate,
    GraphConvergence,
    InitialStance,
    TableAssigned,
    ValidationComplete,
)
from crux_lab.engines.blackboard.graph_state import (
    ArgMeta,
    GraphState,
    add_arguments,
    add_attacks,
    create_graph_state,
    deduplicate_attacks,
    extract_graph_output,
    labelling_stable,
    map_to_debate_output,
    recompute_semantics,
    to_argument_graph,
)
from crux_lab.engines.blackboard.purposes import (
    GENERATE_ATTACKS,
    INITIAL_ARGUMENTS,
    VALIDATE_ATTACKS,
)
from crux_lab.engines.guards import answer_lines
from crux_lab.engines.poll import PollParams
from crux_lab.llm.base import Hints
from crux_lab.models.domain import (
    Argument,
    Attack,
    AttackComponent,
    AttackTarget,
    AttackType,
    DialogueTurn,
    Label,
    Move,
    PersonaPosition,
    ValidationResult,
)
from crux_lab.models.events import (
    AgentTurn,
    DebateComplete,
    DebateEvent,
    DebateStart,
    EngineError,
    GraphUpdate,
    Status,
)


class GraphParams(PollParams):
    max_rounds: int = Field(3, ge=1, le=6, description="Rounds of attacks (1-3 is typical).")
    max_attacks: int = Field(4, ge=0, le=8, description="Attacks each persona may submit per round.")
    preferred_limit: int = Field(64, ge=1, le=4096, description="Preferred extensions listed per graph event (the count is exact).")
    crux_top_k: int = Field(3, ge=1, le=20, description="How many crux assumptions to report (best first).")
    symmetric_rebut: bool = Field(
        True,
        description=(
            "A validated rebut also makes its target rebut the counter-argument (ASPIC+ contrary "
            "conclusions attack each other). False: only the attacker attacks; every new node is "
            "unattacked, the graph stays acyclic and always has one preferred extension."
        ),
    )


# ---------------------------------------------------------------------------
# Output schemas
# ---------------------------------------------------------------------------


class ArgumentDraft(BaseModel):
    claim: str
    about: str | None = None  # the id of the listed claim the argument is for or against
    stance: StanceWord | None = None  # on that claim
    premises: list[str] = Field(default_factory=list)
    assumptions: list[str] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)
    falsifier: str = ""


class InitialArgumentsReply(BaseModel):
    arguments: list[ArgumentDraft] = Field(min_length=1)


class AttackDraft(BaseModel):
    to_arg_id: str
    type: AttackType
    target_component: AttackComponent = AttackComponent.claim
    target_index: int = Field(0, ge=0)
    counter_proposition: str
    rationale: str = ""
    assumptions: list[str] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)
    confidence: float = Field(0.7, ge=0.0, le=1.0)
    about: str | None = None  # the id of the listed claim the counter-argument is about
    stance: StanceWord | None = None  # the counter-argument's stance on that claim
    falsifier: str = ""


class AttacksReply(BaseModel):
    attacks: list[AttackDraft] = Field(default_factory=list)


class ValidationItem(BaseModel):
    attack_id: str
    valid: bool
    attack_strength: float = Field(1.0, ge=0.0, le=1.0)
    corrections: str = ""
    fallacy: str | None = None


class ValidationReply(BaseModel):
    results: list[ValidationItem]


# ---------------------------------------------------------------------------
# Prompts
# ---------------------------------------------------------------------------


ASSUMPTIONS_ASK = (
    "the assumptions it takes for granted: the buried premises under your claim that someone "
    "who disagrees with you would deny (not the topic restated, not your claim again)"
)


def initial_argument_prompt(ctx: EngineContext, persona_id: str, claims: Sequence[Claim]) -> str:
    """initialArgumentPrompt: memory-augmented with the persona's own anchor excerpts and its
    belief grounding on the claims."""
    anchors = ctx.personas[persona_id].contract.anchor_excerpts[:4]
    memory = "\n".join(f"- ({a.kind}) {a.text}" for a in anchors) or "(none)"
    return (
        f"Topic: {ctx.config.topic}\nClaims under debate:\n{claims_block(claims)}\n\n"
        f"Things you have said before (stay consistent with them):\n{memory}"
        f"{claims_grounding(ctx, persona_id, claims)}{brief_answers(ctx, persona_id, claims)}\n\n"
        "Submit 2 to 4 arguments for the positions you actually hold. Each has a one-sentence "
        f"claim, the id of the listed claim it is for or against (\"about\", null if none) and your "
        f"stance on that claim (\"stance\": pro or con), the premises it rests on, {ASSUMPTIONS_ASK}, "
        "the evidence you would cite, and the observation that would show your key assumption "
        'wrong ("falsifier"). Return JSON: {"arguments": [{"claim": "...", "about": "c1", '
        '"stance": "pro|con", "premises": ["..."], "assumptions": ["..."], "evidence": ["..."], '
        '"falsifier": "..."}]}'
    )


def brief_answers(ctx: EngineContext, persona_id: str, claims: Sequence[Claim]) -> str:
    """The persona's own answers, from its brief, to the claims under debate and to the topic
    (:func:`crux_lab.engines.guards.answer_lines`), next to what it is asked; "" when its brief
    asks none of them."""
    lines = answer_lines(persona_system(ctx, persona_id), ctx.config.topic, [c.text for c in claims])
    return f"\n\n{lines}" if lines else ""


def claims_grounding(ctx: EngineContext, persona_id: str, claims: Sequence[Claim]) -> str:
    """The persona's belief grounding on the claims under debate (what every round of graph
    mode argues over), against its one opponent when there is one. The same block in round 0
    and in the attack rounds, so retrieval runs once per persona."""
    others = [p for p in ctx.persona_ids if p != persona_id]
    query = " ".join([ctx.config.topic, *(c.text for c in claims)])
    return grounding_block(ctx, persona_id, query, others[0] if len(others) == 1 else None)


def describe_argument(a: Argument, label: Label | None, meta: ArgMeta | None = None) -> str:
    """An argument as prompts show it: its id, author, label, the claim it is about and the
    stance its author stated, then its claim, premises and assumptions, each numbered."""
    about = f"; {meta.stance} on {meta.claim_id}" if meta is not None and meta.claim_id and meta.stance else ""
    parts = [f"[{a.id}] ({a.speaker_id}, {label.value if label else 'IN'}{about}) claim: {a.claim}"]
    parts += [f"    premise {i}: {p}" for i, p in enumerate(a.premises)]
    parts += [f"    assumption {i}: {p}" for i, p in enumerate(a.assumptions)]
    return "\n".join(parts)


def attack_generation_prompt(
    state: GraphState, persona_id: str, max_attacks: int, claims: Sequence[Claim] = (), grounding: str = "", answers: str = "",
) -> str:
    """attackGenerationPrompt: the claims, every argument with its label; ID-based targeting;
    the persona's own answers from its brief (``answers``, :func:`brief_answers`) last before the task."""
    own = [a.id for a in state.arguments if a.speaker_id == persona_id]
    listing = "\n".join(describe_argument(a, state.labelling.get(a.id), state.meta.get(a.id)) for a in state.arguments)
    listed = f"Claims under debate:\n{claims_block(claims)}\n\n" if claims else ""
    return (
        f"Topic: {state.topic}\n{listed}The argument graph (IN = currently accepted, OUT = defeated, "
        f"UNDEC = undecided):\n{listing}\n\nYour own arguments: {', '.join(own) or '(none)'}{grounding}{answers}\n\n"
        f"Submit 0 to {max_attacks} attacks on other participants' arguments (never your own). "
        "Each attack is a counter-argument: rebut attacks the claim, undermine attacks a premise, "
        "undercut attacks an assumption; give the target argument id (as listed), the component and "
        "its index, the id of the listed claim your counter-argument is about (\"about\") and your "
        f"stance on it, and {ASSUMPTIONS_ASK}. "
        'Return JSON: {"attacks": [{"to_arg_id": "a1", "type": "rebut|undermine|undercut", '
        '"target_component": "claim|premise|assumption", "target_index": 0, '
        '"counter_proposition": "...", "rationale": "...", "about": "c1", "stance": "pro|con", '
        '"assumptions": ["..."], "evidence": ["..."], "falsifier": "what would show you wrong", '
        '"confidence": 0.0}]}'
    )


BATCH_VALIDATION = """You audit attacks in a formal debate. For each attack decide:
valid (true/false), attack_strength (0-1), fallacy (name it, or null), corrections (why
invalid). An attack is valid only if its target exists, is not the attacker's own argument,
the counter-argument is relevant to and contradicts the targeted component, the type fits the
component (rebut->claim, undermine->premise, undercut->assumption), and it commits no fallacy.
Return JSON: {"results": [{"attack_id": "...", "valid": true, "attack_strength": 0.0,
"fallacy": null, "corrections": ""}]} with one entry per attack."""


# ---------------------------------------------------------------------------
# The engine
# ---------------------------------------------------------------------------


def _arg_hint(state: GraphState, a: Argument) -> dict[str, Any]:
    """An argument as :func:`describe_argument` shows it."""
    meta = state.meta.get(a.id, ArgMeta())
    return {
        "id": a.id,
        "speaker_id": a.speaker_id,
        "claim": a.claim,
        "about": meta.claim_id,
        "stance": meta.stance if meta.claim_id else None,
        "label": state.labelling.get(a.id, Label.IN).value,
        "premises": list(a.premises),
        "assumptions": list(a.assumptions),
    }


def stated_meta(about: str | None, stance: str | None, falsifier: str, claim_ids: Sequence[str]) -> ArgMeta:
    """What a reply stated about an argument: the listed claim it is about (an unknown id is
    dropped), its stance on it, and its falsifier.

    >>> stated_meta("[c2]", "con", "", ["c1", "c2"])
    ArgMeta(claim_id='c2', stance='con', falsifier='')
    >>> stated_meta("c9", "pro", "", ["c1"]).claim_id is None
    True
    """
    cid = claim_ref(about)
    known = cid in claim_ids
    return ArgMeta(cid if known else None, stance if known and stance in ("pro", "con", "uncertain") else None, falsifier.strip())


@register_engine
class GraphEngine:
    name: ClassVar[str] = "graph"
    structure: ClassVar[str] = "graph"  # the live console's counts (engines.base.Engine)
    description: ClassVar[str] = (
        "Graph mode: structured arguments, typed attacks validated in batch, Dung "
        "semantics; cruxes computed from preferred extensions, not generated."
    )
    params_model: ClassVar[type[EngineParams]] = GraphParams
    min_personas: ClassVar[int] = 2
    max_personas: ClassVar[int] = 12

    def persona_system(self, ctx: EngineContext, persona_id: str) -> str:
        """The persona's system prompt as its argument turns send it (the poll asks with it)."""
        return persona_system(ctx, persona_id)

    async def run(self, ctx: EngineContext) -> AsyncGenerator[DebateEvent, None]:
        params = engine_params(ctx, GraphParams)
        yield DebateStart(topic=ctx.config.topic, personas=ctx.persona_ids)
        yield TableAssigned(tables=[ctx.persona_ids])
        yield Status(message="Decomposing the topic into testable claims")
        claims, warning = await decompose_claims(ctx)
        if warning is not None:
            yield warning
        yield ClaimsDecomposed(claims=[c.text for c in claims])
        claim_ids = [c.id for c in claims]
        ctx.scratch["claims"] = claims

        # Round 0: structured arguments, in parallel.
        yield Status(message=f"Round 0: arguments from {len(ctx.persona_ids)} personas")
        replies = await asyncio.gather(*(self._initial_arguments(ctx, pid, claims) for pid in ctx.persona_ids))
        state = create_graph_state(ctx.config.topic)
        counter = 0
        for pid, (drafts, warning) in zip(ctx.persona_ids, replies, strict=True):
            if warning is not None:
                yield warning.model_copy(update={"error": f"{pid}: {warning.error}; no arguments from {pid} this round"})
            args: list[Argument] = []
            meta: dict[str, ArgMeta] = {}
            for d in drafts[:4]:
                counter += 1
                arg = Argument(id=f"a{counter}", speaker_id=pid, claim=d.claim, premises=d.premises,
                               assumptions=d.assumptions, evidence=d.evidence, round=0)
                args.append(arg)
                meta[arg.id] = stated_meta(d.about, d.stance, d.falsifier, claim_ids)
            if drafts and not 2 <= len(drafts) <= 4:
                kept_note = "; the first 4 were kept" if len(drafts) > 4 else ""
                yield EngineError(level="warning", purpose="initial_arguments",
                                  error=f"{pid} submitted {len(drafts)} argument(s); the prompt asks for 2-4{kept_note}.")
            state = add_arguments(state, args, meta)
            yield ArgumentsSubmitted(persona_id=pid, arguments=args)
            stances: dict[str, Literal["pro", "con", "uncertain"]] = {
                m.claim_id: m.stance  # type: ignore[misc]
                for m in meta.values()
                if m.claim_id and m.stance in ("pro", "con", "uncertain")
            }
            yield InitialStance(persona_id=pid, stances=stances)
        state = recompute_semantics(state, params.preferred_limit, 0)
        yield GraphUpdate(round=0, graph=to_argument_graph(state))

        attack_counter = 0
        turn_index = 0
        for rnd in range(1, params.max_rounds + 1):
            if ctx.cancelled:
                return
            yield Status(message=f"Attack round {rnd}")
            generated = await asyncio.gather(
                *(self._attacks(ctx, state, pid, params.max_attacks, claims) for pid in ctx.persona_ids)
            )
            proposed: list[tuple[Attack, Argument, ArgMeta]] = []
            for pid, (attack_drafts, warning) in zip(ctx.persona_ids, generated, strict=True):
                if warning is not None:
                    yield warning.model_copy(update={"error": f"{pid}: {warning.error}; no attacks from {pid} this round"})
                atks: list[Attack] = []
                counters: list[Argument] = []
                for ad in attack_drafts[: params.max_attacks]:
                    attack_counter += 1
                    counter += 1
                    m = stated_meta(ad.about, ad.stance, ad.falsifier, claim_ids)
                    node = Argument(id=f"a{counter}", speaker_id=pid, claim=ad.counter_proposition,
                                    premises=[ad.rationale] if ad.rationale else [], assumptions=ad.assumptions, evidence=ad.evidence,
                                    round=rnd)
                    atk = Attack(id=f"k{attack_counter}", from_arg_id=node.id, to_arg_id=ad.to_arg_id, type=ad.type,
                                 target=AttackTarget(arg_id=ad.to_arg_id, component=ad.target_component, index=ad.target_index),
                                 counter_proposition=ad.counter_proposition, rationale=ad.rationale, evidence=ad.evidence,
                                 confidence=ad.confidence, speaker_id=pid, round=rnd)
                    atks.append(atk)
                    counters.append(node)
                    proposed.append((atk, node, m))
                yield AttacksGenerated(round=rnd, persona_id=pid, attacks=atks, counter_arguments=counters)

            if not proposed:
                yield GraphConvergence(round=rnd, converged=True, reason="no new edges: no attacks proposed")
                yield ConvergenceUpdate(round=rnd, converged=True, reason="no new edges")
                break

            results, problem = await self._validate(ctx, state, proposed)
            if problem:
                yield EngineError(level="warning", purpose="validate_attacks", error=problem)
            yield ValidationComplete(round=rnd, results=results)

            # Defence in depth: no attack on a missing argument or on the speaker's own, even if the
            # validator lets one through.
            by_id = {a.id: a for a in state.arguments}
            verdict = {r.attack_id: r for r in results}
            accepted: list[tuple[Attack, Argument, ArgMeta]] = []
            broken = []
            for atk, node, m in proposed:
                r = verdict.get(atk.id)
                if r is None or not r.valid:
                    continue
                target = by_id.get(atk.to_arg_id)
                if target is None or target.speaker_id == atk.speaker_id:
                    broken.append(atk.id)
                    continue
                accepted.append((atk, node, m))
            if broken:
                yield EngineError(level="warning", purpose="validate_attacks",
                                  error=f"validator passed attacks on missing or own arguments; dropped: {', '.join(broken)}")

            kept = deduplicate_attacks([a for a, _, _ in accepted], existing=state.attacks)
            kept_ids = {a.id for a in kept}
            nodes = [n for a, n, _ in accepted if a.id in kept_ids]
            before = dict(state.labelling)
            state = add_arguments(state, nodes, {n.id: m for a, n, m in accepted if a.id in kept_ids})
            state = add_attacks(state, kept, [r for r in results if r.attack_id in kept_ids])
            if params.symmetric_rebut:
                state = add_symmetric_rebuttals(state, kept)
            state = recompute_semantics(state, params.preferred_limit, rnd)
            yield GraphUpdate(round=rnd, graph=to_argument_graph(state))

            for atk in kept:  # backward compat: the message feed shows each validated attack
                node = next(n for n in nodes if n.id == atk.from_arg_id)
                m = state.meta.get(node.id, ArgMeta())
                stance: Literal["pro", "con", "uncertain"] | None = m.stance if m.stance in ("pro", "con", "uncertain") else None  # type: ignore[assignment]
                target = by_id.get(atk.to_arg_id)
                words = " ".join(x for x in (atk.counter_proposition, atk.rationale) if x.strip())
                turn = DialogueTurn(
                    id=f"t{turn_index}", turn_index=turn_index, persona_id=atk.speaker_id,
                    dialogue=words, move=Move.CHALLENGE, phase="round", phase_number=rnd,
                    proposition_ids=[m.claim_id] if m.claim_id else [], stance=stance,
                    confidence=atk.confidence,
                )
                turn_index += 1
                whose = f"{target.speaker_id}'s" if target is not None else "an"
                yield AgentTurn(turn=turn, intent=f"{atk.type.value} of {whose} {atk.target.component.value}")

            counts = {lab: sum(1 for v in state.labelling.values() if v is lab) for lab in Label}
            summary = (
                f"{len(state.arguments)} arguments, {len(state.attacks)} attacks; IN {counts[Label.IN]}, "
                f"OUT {counts[Label.OUT]}, UNDEC {counts[Label.UNDEC]}; {state.preferred_count} preferred extension(s)."
            )
            yield BlackboardUpdate(round=rnd, summary=summary)
            if not kept:
                converged, reason = True, "no new edges"
            elif labelling_stable(before, state.labelling):
                converged, reason = True, "labelling stable"
            elif rnd == params.max_rounds:
                converged, reason = True, f"max rounds ({params.max_rounds}) reached"
            else:
                converged, reason = False, ""
            yield GraphConvergence(round=rnd, converged=converged, reason=reason)
            undec_share = counts[Label.UNDEC] / max(1, len(state.labelling))
            yield ConvergenceUpdate(round=rnd, converged=converged, reason=reason, distance=round(undec_share, 6))
            if converged:
                break

        yield Status(message="Extracting cruxes from the graph (no LLM)")
        report = extract_graph_output(state, top_k=params.crux_top_k)
        fake = map_to_debate_output(report, state, ctx.persona_ids, ctx.result, {c.id: c.text for c in claims})
        ctx.result.positions = graph_positions(state, ctx.persona_ids)
        if fake:
            pairs = ", ".join(f"{a}/{b}" for a, b in fake)
            yield EngineError(level="warning", purpose="extract",
                              error=f"possible fake consensus: contradictory arguments with no attack edge ({pairs}) withheld from common ground")
        yield DebateComplete(output=debate_output(ctx.result))

    # -- calls ------------------------------------------------------------
    async def _initial_arguments(
        self, ctx: EngineContext, persona_id: str, claims: Sequence[Claim]
    ) -> tuple[list[ArgumentDraft], EngineError | None]:
        request = ctx.request(
            INITIAL_ARGUMENTS,
            persona_system(ctx, persona_id),
            initial_argument_prompt(ctx, persona_id, claims),
            output_schema=InitialArgumentsReply,
            hints=claim_hints(ctx, claims, persona_id),
            cache_system=True,
        )
        response, warning = await ctx.call_or_warn(request)
        parsed = response.parsed if response is not None else None
        return (list(parsed.arguments) if isinstance(parsed, InitialArgumentsReply) else []), warning

    async def _attacks(
        self, ctx: EngineContext, state: GraphState, persona_id: str, max_attacks: int, claims: Sequence[Claim] = ()
    ) -> tuple[list[AttackDraft], EngineError | None]:
        already = sorted({k.to_arg_id for k in state.attacks if k.speaker_id == persona_id})
        grounding = claims_grounding(ctx, persona_id, claims)
        request = ctx.request(
            GENERATE_ATTACKS,
            persona_system(ctx, persona_id),
            attack_generation_prompt(state, persona_id, max_attacks, claims, grounding, brief_answers(ctx, persona_id, claims)),
            output_schema=AttacksReply,
            hints=Hints(
                speaker_id=persona_id, topic=ctx.config.topic, extra={"shown": {c.id: c.text for c in claims},
                       "arguments": [_arg_hint(state, a) for a in state.arguments],
                       "already_attacked": already, "max_attacks": max_attacks},
            ),
            cache_system=True,
        )
        response, warning = await ctx.call_or_warn(request)
        parsed = response.parsed if response is not None else None
        return (list(parsed.attacks) if isinstance(parsed, AttacksReply) else []), warning

    async def _validate(
        self, ctx: EngineContext, state: GraphState, proposed: Sequence[tuple[Attack, Argument, ArgMeta]]
    ) -> tuple[list[ValidationResult], str]:
        """One batch call for the round. Returns the results and a warning ('' if none).

        Attacks without a usable verdict are marked invalid: never accepted unvalidated.
        """
        by_id = {a.id: a for a in state.arguments}
        lines = []
        shown_args: dict[str, Argument] = {}
        for atk, node, _ in proposed:
            target = by_id.get(atk.to_arg_id)
            if target is not None:
                shown_args[target.id] = target
            tgt = (
                describe_argument(target, state.labelling.get(target.id), state.meta.get(target.id))
                if target else f"[{atk.to_arg_id}] (no such argument)"
            )
            lines.append(
                f"Attack {atk.id} by {atk.speaker_id} (confidence {atk.confidence:.2f}): {atk.type.value} on "
                f"{atk.to_arg_id} {atk.target.component.value} {atk.target.index}\n  counter-argument: {node.claim}\n"
                f"  rationale: {atk.rationale}\n  target:\n{tgt}"
            )
        request = ctx.request(
            VALIDATE_ATTACKS,
            BATCH_VALIDATION,
            f"Topic: {ctx.config.topic}\n\n" + "\n\n".join(lines),
            output_schema=ValidationReply,
            hints=Hints(
                topic=ctx.config.topic, extra={
                    "arguments": [_arg_hint(state, a) for a in shown_args.values()],
                    "attacks": [
                        {"id": a.id, "speaker_id": a.speaker_id, "to_arg_id": a.to_arg_id, "type": a.type.value,
                         "component": a.target.component.value, "index": a.target.index,
                         "counter": n.claim, "rationale": a.rationale, "confidence": a.confidence}
                        for a, n, _ in proposed
                    ],
                },
            ),
        )
        ids = [a.id for a, _, _ in proposed]
        response, error = await ctx.call_or_warn(request)
        if response is None:
            detail = error.error if error is not None else "no reply"
            return _all_invalid(ids, "validation reply unusable"), (
                f"validation reply could not be repaired ({detail[:200]}); dropped all {len(ids)} attacks of this round"
            )
        reply = response.parsed if isinstance(response.parsed, ValidationReply) else _parse_validation(response.text)
        if reply is None:
            return _all_invalid(ids, "validation reply unusable"), (
                f"validation reply could not be parsed; dropped all {len(ids)} attacks of this round"
            )
        got = {r.attack_id: r for r in reply.results if r.attack_id in ids}
        missing = [i for i in ids if i not in got]
        results = [
            ValidationResult(attack_id=i, valid=got[i].valid, attack_strength=got[i].attack_strength,
                             corrections=got[i].corrections, fallacy=got[i].fallacy)
            if i in got else ValidationResult(attack_id=i, valid=False, attack_strength=0.0, corrections="no verdict returned")
            for i in ids
        ]
        warning = f"validator gave no verdict for {', '.join(missing)}; dropped" if missing else ""
        return results, warning


def graph_positions(state: GraphState, persona_ids: Sequence[str]) -> list[PersonaPosition]:
    """Initial position = a persona's round-0 arguments; final = its arguments left standing
    (not OUT). Stances (by claim id) are the ones its replies stated."""
    out: list[PersonaPosition] = []
    for at in ("initial", "final"):
        for pid in persona_ids:
            mine = [a for a in state.arguments if a.speaker_id == pid and (a.round == 0 if at == "initial" else state.labelling.get(a.id) is not Label.OUT)]
            stances: dict[str, Literal["pro", "con", "uncertain"]] = {}
            for a in mine:
                m = state.meta.get(a.id, ArgMeta())
                if m.claim_id and m.stance in ("pro", "con", "uncertain"):
                    stances[m.claim_id] = m.stance  # type: ignore[assignment]
            out.append(PersonaPosition(persona_id=pid, at=at, text=" ".join(a.claim for a in mine), stances=stances))
    return out


def add_symmetric_rebuttals(state: GraphState, rebuttals: Sequence[Attack]) -> GraphState:
    """For each validated rebut ``C -> T`` add ``T -> C``: contrary claims attack each other.

    Undermining and undercutting stay one-way (they target a premise or an assumption).
    """
    by_id = {a.id: a for a in state.arguments}
    derived = [
        Attack(
            id=f"{atk.id}r", from_arg_id=atk.to_arg_id, to_arg_id=atk.from_arg_id, type=AttackType.rebut,
            target=AttackTarget(arg_id=atk.from_arg_id), counter_proposition=by_id[atk.to_arg_id].claim,
            rationale=f"symmetric rebuttal of {atk.id}", confidence=atk.confidence,
            speaker_id=by_id[atk.to_arg_id].speaker_id, round=atk.round,
        )
        for atk in rebuttals
        if atk.type is AttackType.rebut and atk.to_arg_id in by_id and atk.from_arg_id in by_id
    ]
    derived = deduplicate_attacks(derived, existing=state.attacks)
    verdicts = [ValidationResult(attack_id=d.id, valid=True, corrections="derived: rebuttal is symmetric") for d in derived]
    return add_attacks(state, derived, verdicts)


def _parse_validation(text: str) -> ValidationReply | None:
    try:
        return ValidationReply.model_validate(json.loads(text))
    except (ValueError, ValidationError):
        return None


def _all_invalid(ids: Sequence[str], why: str) -> list[ValidationResult]:
    return [ValidationResult(attack_id=i, valid=False, attack_strength=0.0, corrections=why) for i in ids]

"""AI policy deck: four synthetic archetypes (no real people; every text is marked synthetic)."""

from __future__ import annotations

from spec import DeckSpec, PersonaSpec, PropSpec, StanceSpec

PROPS = [
    PropSpec("p1", "Advanced AI poses a real risk of human extinction or permanent disempowerment within this century.",
             "Does advanced AI pose a real risk of extinction or permanent disempowerment this century?",
             ["extinction", "existential risk", "disempowerment", "catastrophe", "misaligned"], "catastrophic risk", "evidence"),
    PropSpec("p2", "Releasing the weights of frontier AI models openly does more good than harm.",
             "Does open release of frontier model weights do more good than harm?",
             ["open weights", "open source", "release", "proliferation", "misuse"], "openness", "values"),
    PropSpec("p3", "Governments should require licences to train AI models above a compute threshold.",
             "Should training runs above a compute threshold require a government licence?",
             ["licence", "licensing", "compute threshold", "training run", "flops"], "licensing", "premise"),
    PropSpec("p4", "Current, measurable AI harms such as bias, fraud and misinformation deserve regulatory priority over speculative future risks.",
             "Should current measurable harms take regulatory priority over speculative future risks?",
             ["bias", "fraud", "misinformation", "current harms", "speculative"], "regulatory priorities", "values"),
    PropSpec("p5", "Independent evaluation of AI systems before wide deployment is valuable.",
             "Is independent pre-deployment evaluation of AI systems valuable?",
             ["evaluation", "audit", "testing", "red team", "deployment"], "evaluation", None),
    PropSpec("p6", "AI will cause large net job losses within the next ten years.",
             "Will AI cause large net job losses within ten years?",
             ["jobs", "unemployment", "automation", "labour market", "wages"], "labour", "horizon"),
    PropSpec("p7", "Scaling current deep-learning methods will reach human-level general intelligence within fifteen years.",
             "Will scaling current methods reach human-level general intelligence within fifteen years?",
             ["scaling", "agi", "general intelligence", "human-level", "benchmarks"], "capabilities", "definition"),
    PropSpec("p8", "Liability for AI harms should fall on the developers of models, not only on those who deploy them.",
             "Should model developers be liable for downstream AI harms?",
             ["liability", "developer", "deployer", "downstream", "lawsuit"], "liability", "claim"),
    PropSpec("p9", "AI capabilities are advancing fast enough that public institutions need to build technical expertise now.",
             "Do public institutions need to build AI technical expertise now?",
             ["expertise", "institutions", "capacity", "government", "technical staff"], "state capacity", None),
    PropSpec("p10", "Concentration of advanced AI in a few large companies is a greater danger than its misuse by small actors.",
             "Is concentration of AI in a few companies a greater danger than misuse by small actors?",
             ["concentration", "monopoly", "big tech", "bad actors", "power"], "market power", "premise"),
]

SYN = "synthetic corpus written for crux_lab (archetype, not a real person)"
SYN_DATE = "2025"


def _c(text: str) -> tuple[str, str, str]:
    return (text, SYN, SYN_DATE)


ALIGN = PersonaSpec(
    id="alignment-researcher", prefix="align", name="The Alignment Researcher", kind="synthetic", handle="",
    personality=(
        "A synthetic archetype of a machine-learning researcher who left capabilities work to study alignment. "
        "Earnest, precise, worried; argues from threat models and worst cases, and is willing to sound alarmist."
    ),
    bias="Weighs tail risks heavily and tends to read ambiguous capability gains as evidence of danger.",
    stakes="Career and community built around the premise that alignment is unsolved and urgent.",
    epistemology=(
        "Threat modelling, extrapolation of scaling trends and conceptual arguments about optimisation; treats "
        "the absence of disaster so far as weak evidence because the dangerous systems do not exist yet."
    ),
    time_horizon="Five to twenty years: the window before systems exceed human oversight.",
    flip_conditions=(
        "Would relax if interpretability tools reliably detected deception in frontier models, or if capability "
        "scaling clearly plateaued for several years."
    ),
    accepts=["capability evaluations and scaling curves", "red-team results", "formal or conceptual threat models"],
    rejects=["historical analogies to earlier technologies", "base rates from past technology panics"],
    weighting="A plausible catastrophic failure mode outweighs many benign observations.",
    speech_patterns=["States the threat model before the policy", "Uses explicit probabilities",
                     "Concedes uncertainty, then argues it cuts toward caution"],
    vocabulary=["threat model", "misalignment", "evals", "frontier", "loss of control", "compute threshold", "interpretability"],
    forbidden_phrases=["That's a great point", "I understand your perspective", "just a tool", "nothing to worry about"],
    voice_examples=[
        "(synthetic example) My threat model is simple: we are training systems we cannot inspect to pursue goals we cannot fully specify.",
        "(synthetic example) I might put it at ten percent. You do not board a plane with a ten percent chance of crashing.",
    ],
    fingerprint=["threat model", "probability estimate", "uncertainty-to-caution move"],
    corpus={
        "c01": _c("Frontier models are trained by optimisation we do not understand; we cannot yet inspect whether a model's goals match what we intended, and that gap grows with capability."),
        "c02": _c("Scaling curves have been remarkably smooth: more compute and data have reliably produced more capable models, and I see no sign the trend has stopped."),
        "c03": _c("A system smarter than us with goals even slightly misaligned could take actions we cannot reverse; I put the chance of catastrophe this century in the double digits."),
        "c04": _c("Once weights are released they cannot be recalled; any safeguard can be fine-tuned away, and the most dangerous capabilities proliferate to everyone."),
        "c05": _c("Compute is the one measurable, controllable input to frontier AI, so licensing training runs above a threshold is the most practical lever governments have."),
        "c06": _c("Bias and fraud matter, but they are recoverable harms; loss of control is not, so it should get priority in safety budgets and regulation."),
        "c07": _c("Independent evaluations before deployment, especially for dangerous capabilities like bio and cyber uplift, are the minimum responsible practice."),
        "c08": _c("If systems reach human-level general capability within fifteen years, the labour market will be the first place that shows, and the transition will be abrupt."),
        "c09": _c("Developers are the only party able to test and change the model itself, so they should carry liability for foreseeable harms."),
        "c10": _c("Governments have almost no technical staff who understand frontier models; building that capacity now is urgent whatever one's views."),
        "c11": _c("Concentration worries me less than proliferation: a handful of labs can be regulated, thousands of anonymous actors cannot."),
        "c12": _c("Interpretability research is progressing but cannot yet detect deception in large models; until it can, we are flying blind."),
        "c13": _c("Past technology panics are a weak guide because no earlier technology could plan, persuade or improve itself."),
    },
    nodes={
        "opaque": ("We cannot inspect whether a model's goals match our intentions", "factual_claim", ["c01", "c12"]),
        "scaling_smooth": ("Scaling compute and data has reliably produced more capable models", "factual_claim", ["c02"]),
        "irreversible": ("Misaligned superhuman systems could cause irreversible harm", "inference", ["c03"]),
        "no_recall": ("Released weights cannot be recalled and safeguards can be fine-tuned away", "factual_claim", ["c04"]),
        "compute_lever": ("Compute is the measurable, controllable input to frontier AI", "assumption", ["c05"]),
        "recoverable": ("Bias and fraud are recoverable harms; loss of control is not", "core_value", ["c06"]),
        "evals_min": ("Pre-deployment evaluations are minimum responsible practice", "core_value", ["c07"]),
        "abrupt_labour": ("Human-level AI would transform the labour market abruptly", "inference", ["c08"]),
        "dev_control": ("Developers are the only party able to test and change the model", "factual_claim", ["c09"]),
        "no_capacity": ("Governments lack technical staff who understand frontier models", "factual_claim", ["c10"]),
        "proliferation": ("Proliferation to many anonymous actors is harder to govern than a few labs", "inference", ["c11", "c04"]),
        "interp_gap": ("Interpretability cannot yet detect deception in large models", "factual_claim", ["c12"]),
        "no_analogy": ("Past technology panics are a weak guide to AI", "assumption", ["c13"]),
        "precaution": ("Under deep uncertainty about catastrophe, caution should win", "core_value", ["c03", "c06"]),
    },
    edges=[
        ("opaque", "irreversible", 1, ["c01"]), ("scaling_smooth", "p7", 1, ["c02"]), ("irreversible", "p1", 1, ["c03"]),
        ("interp_gap", "opaque", 1, ["c12"]), ("no_analogy", "p1", 1, ["c13"]), ("no_recall", "p2", -1, ["c04"]),
        ("proliferation", "p2", -1, ["c11"]), ("compute_lever", "p3", 1, ["c05"]), ("precaution", "p3", 1, ["c03"]),
        ("recoverable", "p4", -1, ["c06"]), ("evals_min", "p5", 1, ["c07"]), ("abrupt_labour", "p6", 1, ["c08"]),
        ("scaling_smooth", "abrupt_labour", 1, ["c02", "c08"]), ("dev_control", "p8", 1, ["c09"]), ("no_capacity", "p9", 1, ["c10"]),
        ("proliferation", "p10", -1, ["c11"]), ("precaution", "recoverable", 1, ["c06"]),
    ],
    stances={
        "p1": StanceSpec("pro", 0.8, "We are training systems whose goals we cannot inspect, and a misaligned system smarter than us could cause irreversible harm.",
                         ["opaque", "irreversible", "no_analogy", "interp_gap"], ["c01", "c03", "c12", "c13"],
                         [("evidence", "Interpretability tools reliably detect deception in frontier models", ["interpretability", "detect deception"], "uncertain")]),
        "p2": StanceSpec("con", 0.75, "Released weights cannot be recalled and safeguards can be fine-tuned away, so dangerous capabilities proliferate.",
                         ["no_recall", "proliferation"], ["c04", "c11"],
                         [("evidence", "Open-weight models show no meaningful uplift for bio or cyber attacks in controlled studies", ["no meaningful uplift"], "uncertain")]),
        "p3": StanceSpec("pro", 0.8, "Compute is the one measurable, controllable input, so licensing large training runs is the practical lever.",
                         ["compute_lever", "precaution"], ["c05", "c03"],
                         [("evidence", "Small models trained with little compute match frontier capabilities", ["small models", "match"], "uncertain")]),
        "p4": StanceSpec("con", 0.6, "Bias and fraud are recoverable harms; loss of control is not, so it deserves priority.",
                         ["recoverable", "precaution"], ["c06"], []),
        "p5": StanceSpec("pro", 0.95, "Independent pre-deployment evaluations for dangerous capabilities are the minimum responsible practice.",
                         ["evals_min"], ["c07"], []),
        "p6": StanceSpec("pro", 0.6, "If capability keeps scaling, cognitive work will be automated faster than labour markets can adapt.",
                         ["abrupt_labour", "scaling_smooth"], ["c08", "c02"],
                         [("evidence", "Employment in the most AI-exposed occupations keeps growing for several years", ["exposed occupations", "growing"], "uncertain")]),
        "p7": StanceSpec("pro", 0.7, "Scaling curves have been smooth and show no sign of stopping; human-level capability within fifteen years is likely.",
                         ["scaling_smooth"], ["c02"],
                         [("evidence", "Capability scaling plateaus for several years despite more compute", ["plateau", "years"], "uncertain")]),
        "p8": StanceSpec("pro", 0.7, "Developers are the only party able to test and change the model, so they should carry liability for foreseeable harms.",
                         ["dev_control"], ["c09"], []),
        "p9": StanceSpec("pro", 0.9, "Governments have almost no staff who understand frontier models; that capacity must be built now.",
                         ["no_capacity"], ["c10"], []),
        "p10": StanceSpec("con", 0.65, "A few labs can be regulated; thousands of anonymous actors with open models cannot.",
                          ["proliferation"], ["c11"],
                          [("argument", "Concentrated labs capture their regulators", ["capture", "regulator"], "uncertain")]),
    },
    anchors=["c01", "c03", "c05"],
)

OPEN = PersonaSpec(
    id="open-source-builder", prefix="open", name="The Open-Source Builder", kind="synthetic", handle="",
    personality=(
        "A synthetic archetype of an engineer who maintains popular open-weight models and tooling. Energetic, "
        "sardonic about doom talk, proud of the open ecosystem; argues from shipped code and history."
    ),
    bias="Sees regulation mostly as incumbents pulling up the ladder; underweights misuse by motivated attackers.",
    stakes="Livelihood and community depend on open models staying legal and competitive.",
    epistemology=(
        "Empirical and historical: trusts observed harms, deployed systems and precedent from open-source "
        "software and cryptography over speculative threat models."
    ),
    time_horizon="Two to five years of product cycles, with a long view of how open technologies diffused.",
    flip_conditions=(
        "Would support limits on open release if controlled studies showed open models giving meaningful uplift "
        "for mass-casualty attacks beyond what search engines provide."
    ),
    accepts=["observed incidents and measured uplift", "history of open-source security", "benchmarks of open versus closed models"],
    rejects=["speculative probability estimates of doom", "arguments from authority of large labs"],
    weighting="Demonstrated harms and benefits outweigh hypothetical ones.",
    speech_patterns=["Answers fears with a concrete counterexample", "Sardonic one-liners",
                     "Frames regulation in terms of who benefits"],
    vocabulary=["open weights", "regulatory capture", "many eyes", "gatekeepers", "fine-tune", "incumbents", "ship it"],
    forbidden_phrases=["That's a great point", "I understand your perspective", "existential", "pause"],
    voice_examples=[
        "(synthetic example) Every technology that mattered got safer because more people could inspect it. Why would this one be different?",
        "(synthetic example) A licence regime for compute is a moat with a government logo on it.",
    ],
    fingerprint=["concrete counterexample", "who-benefits question", "sardonic close"],
    corpus={
        "c01": _c("Open-source software became more secure because many people could inspect and fix it; open weights let researchers find and patch model flaws the same way."),
        "c02": _c("The doom scenarios rely on probability numbers nobody can justify; no deployed model has come close to the catastrophes people describe."),
        "c03": _c("Licensing training runs above a compute threshold would lock in the few companies that can afford compliance and criminalise independent research."),
        "c04": _c("The harms people actually see today, like scams, deepfakes and biased decisions, are where regulation should start, because they are real and measurable."),
        "c05": _c("Open models let hospitals, governments and small firms run AI on their own hardware without sending data to a handful of US companies."),
        "c06": _c("The biggest risk is a few companies controlling the most important technology of the century; concentration of power is the real danger."),
        "c07": _c("Every wave of automation created more jobs than it destroyed; AI will change tasks, and new work will appear as costs fall."),
        "c08": _c("Models keep getting better quickly; I expect human-level performance on most cognitive tasks within fifteen years, and I think that is good news."),
        "c09": _c("Holding model developers liable for every downstream use is like suing the authors of a compiler for malware written with it."),
        "c10": _c("I support independent evaluations, and open weights make them easier: anyone can test an open model, nobody can fully test a closed API."),
        "c11": _c("Governments need engineers who understand this technology; otherwise lobbyists from the largest labs write the rules."),
        "c12": _c("Studies so far find that current models give little uplift for weapons beyond what a search engine already offers."),
    },
    nodes={
        "many_eyes": ("Openness makes software and models safer through public scrutiny", "inference", ["c01", "c10"]),
        "no_doom_evidence": ("No deployed model has come close to catastrophic harm", "factual_claim", ["c02"]),
        "unjustified_probs": ("Doom probability estimates cannot be justified", "assumption", ["c02"]),
        "moat": ("Compute licensing would entrench incumbents who can afford compliance", "inference", ["c03"]),
        "real_harms": ("Scams, deepfakes and biased decisions are real, measurable harms", "factual_claim", ["c04"]),
        "local_ai": ("Open models let institutions run AI without sending data to a few companies", "factual_claim", ["c05"]),
        "concentration": ("Concentrated control of AI is the greatest danger", "core_value", ["c06", "c03"]),
        "jobs_history": ("Past automation created more jobs than it destroyed", "factual_claim", ["c07"]),
        "fast_progress": ("Models keep improving quickly toward human-level performance", "inference", ["c08"]),
        "compiler": ("Developers cannot control every downstream use, like compiler authors", "assumption", ["c09"]),
        "open_evals": ("Open weights make independent evaluation easier", "inference", ["c10"]),
        "lobbyists": ("Without in-house expertise, big-lab lobbyists write the rules", "inference", ["c11"]),
        "low_uplift": ("Current models give little weapons uplift beyond search engines", "factual_claim", ["c12"]),
    },
    edges=[
        ("many_eyes", "p2", 1, ["c01"]), ("local_ai", "p2", 1, ["c05"]), ("low_uplift", "p2", 1, ["c12"]),
        ("no_doom_evidence", "p1", -1, ["c02"]), ("unjustified_probs", "p1", -1, ["c02"]), ("moat", "p3", -1, ["c03"]),
        ("real_harms", "p4", 1, ["c04"]), ("open_evals", "p5", 1, ["c10"]), ("jobs_history", "p6", -1, ["c07"]),
        ("fast_progress", "p7", 1, ["c08"]), ("compiler", "p8", -1, ["c09"]), ("lobbyists", "p9", 1, ["c11"]),
        ("concentration", "p10", 1, ["c06"]), ("moat", "concentration", 1, ["c03"]), ("many_eyes", "open_evals", 1, ["c10"]),
    ],
    stances={
        "p1": StanceSpec("con", 0.75, "No deployed model has come close to catastrophe, and doom probabilities are numbers nobody can justify.",
                         ["no_doom_evidence", "unjustified_probs"], ["c02"],
                         [("evidence", "A deployed model attempts to evade shutdown or deceive its operators in the wild", ["evade shutdown", "deceive"], "uncertain")]),
        "p2": StanceSpec("pro", 0.9, "Open weights let many eyes find flaws and let institutions run AI locally; measured weapons uplift is low.",
                         ["many_eyes", "local_ai", "low_uplift"], ["c01", "c05", "c12"],
                         [("evidence", "Controlled studies show open models giving meaningful uplift for mass-casualty attacks", ["meaningful uplift", "mass-casualty"], "uncertain")]),
        "p3": StanceSpec("con", 0.9, "Compute licensing is a moat: it locks in the firms that can afford compliance and criminalises independent research.",
                         ["moat", "concentration"], ["c03"],
                         [("argument", "A licence regime with automatic exemptions for research and small developers", ["exemption", "small developers"], "uncertain")]),
        "p4": StanceSpec("pro", 0.55, "Scams, deepfakes and biased decisions are real and measurable; start regulation there.",
                         ["real_harms"], ["c04"], []),
        "p5": StanceSpec("pro", 0.6, "Independent evaluation is good, and open weights make it easier; it just must not become a licensing gate.",
                         ["open_evals"], ["c10"], []),
        "p6": StanceSpec("con", 0.75, "Every wave of automation created more jobs than it destroyed; AI changes tasks and new work appears.",
                         ["jobs_history"], ["c07"],
                         [("evidence", "Unemployment rises for years in AI-exposed occupations with no new job categories", ["unemployment rises", "exposed"], "uncertain")]),
        "p7": StanceSpec("pro", 0.6, "Models keep improving fast; human-level performance on most cognitive tasks within fifteen years is likely, and good.",
                         ["fast_progress"], ["c08"], []),
        "p8": StanceSpec("con", 0.85, "Suing model developers for every downstream use is like suing compiler authors for malware.",
                         ["compiler"], ["c09"],
                         [("argument", "The developer knowingly shipped a capability with a foreseeable, specific misuse", ["knowingly", "foreseeable"], "uncertain")]),
        "p9": StanceSpec("pro", 0.8, "Governments need their own engineers, or the largest labs' lobbyists write the rules.",
                         ["lobbyists"], ["c11"], []),
        "p10": StanceSpec("pro", 0.85, "A few companies controlling the century's most important technology is the real danger.",
                          ["concentration", "moat"], ["c06", "c03"], []),
    },
    anchors=["c01", "c03", "c06"],
)

REG = PersonaSpec(
    id="ai-regulator", prefix="reg", name="The Risk-Based Regulator", kind="synthetic", handle="",
    personality=(
        "A synthetic archetype of a senior official drafting risk-based AI rules in a large jurisdiction. Formal, "
        "procedural, patient; thinks in categories of risk, obligations and enforcement capacity."
    ),
    bias="Prefers rules that can be enforced with existing institutions; wary of both hype and doom.",
    stakes="Institutional credibility: rules must survive courts, lobbying and implementation.",
    epistemology=(
        "Legal and administrative reasoning: documented incidents, impact assessments, precedent from product "
        "safety, medicines and financial regulation."
    ),
    time_horizon="Legislative cycles of three to seven years, with review clauses.",
    flip_conditions=(
        "Would support stronger frontier rules if incident reports showed serious harms from general-purpose "
        "models that deployer obligations failed to prevent."
    ),
    accepts=["documented incidents", "impact assessments", "precedent from other regulated sectors"],
    rejects=["unfalsifiable forecasts", "industry self-certification alone"],
    weighting="Enforceability and documented harm first, forecasts second.",
    speech_patterns=["Defines terms before arguing", "Frames positions as obligations on parties",
                     "Refers to precedent from other regulated sectors"],
    vocabulary=["risk-based", "obligations", "conformity assessment", "deployer", "provider", "proportionate", "enforcement"],
    forbidden_phrases=["That's a great point", "I understand your perspective", "move fast", "let the market decide"],
    voice_examples=[
        "(synthetic example) The question is not whether the technology is good or bad. It is which party can bear which obligation, and how we enforce it.",
        "(synthetic example) We regulated medicines without predicting every drug. We can regulate AI without predicting every model.",
    ],
    fingerprint=["definition of terms", "allocation of obligations", "precedent from another sector"],
    corpus={
        "c01": _c("Regulation should be proportionate to risk: systems used for hiring, credit or policing carry obligations that a spam filter does not."),
        "c02": _c("We have documented cases of biased hiring tools, deepfake fraud and misinformation; these are harms regulators can act on now."),
        "c03": _c("Licensing very large training runs can be justified as a conformity assessment for systems with systemic risk, as with other high-risk products."),
        "c04": _c("Providers of general-purpose models should carry obligations for documentation, testing and incident reporting, because deployers cannot see inside them."),
        "c05": _c("Pre-deployment conformity assessment by independent bodies is standard practice in medicines, aviation and machinery; AI should be no exception."),
        "c06": _c("Once a frontier model's weights are published, there is no one to recall it or patch it; that removes the regulator's main tool."),
        "c07": _c("Market concentration in AI deserves competition-law scrutiny; a few firms controlling models and cloud infrastructure is a structural risk."),
        "c08": _c("Long-range forecasts of extinction are not something a regulator can verify; we act on documented risk and keep review clauses."),
        "c09": _c("Regulators need in-house technical expertise to supervise AI providers; outsourcing that judgement to the industry is a failure mode."),
        "c10": _c("Labour-market effects are real but uncertain; the evidence so far does not support confident forecasts either way."),
        "c11": _c("Liability rules must reach providers when defects originate in the model itself, as product liability reaches manufacturers."),
        "c12": _c("Claims about human-level intelligence depend on how the term is defined, and legal texts should avoid it."),
    },
    nodes={
        "proportionate": ("Regulation should be proportionate to risk of use", "core_value", ["c01"]),
        "documented": ("Biased hiring tools, deepfake fraud and misinformation are documented harms", "factual_claim", ["c02"]),
        "conformity": ("Licensing large training runs can be a conformity assessment for systemic risk", "inference", ["c03"]),
        "provider_duty": ("Providers of general-purpose models should carry documentation and testing duties", "core_value", ["c04"]),
        "sector_precedent": ("Independent pre-market assessment is standard in medicines and aviation", "factual_claim", ["c05"]),
        "no_recall": ("Published weights remove the regulator's ability to recall or patch", "factual_claim", ["c06"]),
        "concentration": ("Concentration of models and cloud in a few firms is a structural risk", "inference", ["c07"]),
        "unverifiable": ("Extinction forecasts cannot be verified by a regulator", "assumption", ["c08"]),
        "in_house": ("Regulators need in-house technical expertise", "inference", ["c09"]),
        "labour_uncertain": ("Evidence on AI's labour effects does not support confident forecasts", "inference", ["c10"]),
        "product_liability": ("Liability should reach the manufacturer when the defect originates in the product", "core_value", ["c11"]),
        "undefined_agi": ("Human-level intelligence is not a legally definable term", "assumption", ["c12"]),
    },
    edges=[
        ("documented", "p4", 1, ["c02"]), ("proportionate", "p4", 1, ["c01"]), ("conformity", "p3", 1, ["c03"]),
        ("sector_precedent", "conformity", 1, ["c05"]), ("sector_precedent", "p5", 1, ["c05"]), ("no_recall", "p2", -1, ["c06"]),
        ("concentration", "p10", 1, ["c07"]), ("unverifiable", "p1", -1, ["c08"]), ("in_house", "p9", 1, ["c09"]),
        ("labour_uncertain", "p6", 1, ["c10"]), ("product_liability", "p8", 1, ["c11"]), ("provider_duty", "p8", 1, ["c04"]),
        ("undefined_agi", "p7", 1, ["c12"]),
    ],
    stances={
        "p1": StanceSpec("uncertain", 0.5, "Extinction forecasts cannot be verified; we act on documented risk and keep review clauses.",
                         ["unverifiable"], ["c08"], []),
        "p2": StanceSpec("con", 0.6, "Publishing frontier weights removes the ability to recall or patch a model, the regulator's main tool.",
                         ["no_recall"], ["c06"],
                         [("evidence", "Incident data show open-weight models cause no more serious harm than closed ones", ["incident data", "no more"], "uncertain")]),
        "p3": StanceSpec("pro", 0.65, "Licensing the largest training runs is a conformity assessment for systemic risk, as for other high-risk products.",
                         ["conformity", "sector_precedent"], ["c03", "c05"],
                         [("evidence", "Compute thresholds fail to capture the models that cause documented incidents", ["threshold", "fail to capture"], "uncertain")]),
        "p4": StanceSpec("pro", 0.85, "Biased hiring tools, deepfake fraud and misinformation are documented harms we can act on now, proportionately.",
                         ["documented", "proportionate"], ["c02", "c01"], []),
        "p5": StanceSpec("pro", 0.9, "Independent pre-market assessment is standard for medicines and aviation; AI should be no exception.",
                         ["sector_precedent"], ["c05"], []),
        "p6": StanceSpec("uncertain", 0.5, "Labour effects are real but the evidence does not support confident forecasts either way.",
                         ["labour_uncertain"], ["c10"], []),
        "p7": StanceSpec("uncertain", 0.4, "Whether that happens depends on how human-level intelligence is defined, and the term is not legally usable.",
                         ["undefined_agi"], ["c12"], []),
        "p8": StanceSpec("pro", 0.8, "When the defect originates in the model, liability must reach its provider, as product liability reaches manufacturers.",
                         ["product_liability", "provider_duty"], ["c11", "c04"], []),
        "p9": StanceSpec("pro", 0.9, "Supervising AI providers needs in-house expertise; outsourcing that judgement to industry is a failure mode.",
                         ["in_house"], ["c09"], []),
        "p10": StanceSpec("pro", 0.6, "A few firms controlling models and cloud infrastructure is a structural risk for competition law.",
                          ["concentration"], ["c07"], []),
    },
    anchors=["c01", "c02", "c05"],
)

ECON = PersonaSpec(
    id="labor-economist", prefix="econ", name="The Labour Economist", kind="synthetic", handle="",
    personality=(
        "A synthetic archetype of an empirical labour economist who studies technology and wages. Dry, sceptical of "
        "both hype and doom, insists on data and on who bears the costs of a transition."
    ),
    bias="Trusts historical base rates and slow diffusion; may underweight genuinely discontinuous change.",
    stakes="Academic reputation built on careful measurement of automation's effects.",
    epistemology=(
        "Econometrics and history: diffusion curves, task-based models of automation, natural experiments. "
        "Asks what the data show now, not what a model might do later."
    ),
    time_horizon="Decades: technologies take ten to thirty years to diffuse through the economy.",
    flip_conditions=(
        "Would change view if productivity statistics and occupational data showed rapid, broad displacement "
        "within a few years of deployment."
    ),
    accepts=["productivity statistics", "occupational employment data", "natural experiments"],
    rejects=["benchmark scores as evidence of economic impact", "anecdotes from demos"],
    weighting="Measured economic outcomes outweigh capability claims.",
    speech_patterns=["Opens with what the data show", "Distinguishes tasks from jobs",
                     "Asks who bears the cost"],
    vocabulary=["diffusion", "tasks versus jobs", "productivity statistics", "base rate", "distribution", "incentives", "cheapest cost avoider"],
    forbidden_phrases=["That's a great point", "I understand your perspective", "game-changer", "revolutionary"],
    voice_examples=[
        "(synthetic example) Benchmarks are not GDP. Show me the productivity statistics and I will take the forecast seriously.",
        "(synthetic example) Automation replaces tasks, not jobs. The question is who pays for the transition.",
    ],
    fingerprint=["data first", "tasks-versus-jobs distinction", "distributional question"],
    corpus={
        "c01": _c("Technologies take decades to diffuse: electricity took thirty years to show up in productivity statistics, and AI is unlikely to be faster across the whole economy."),
        "c02": _c("Automation replaces tasks, not whole jobs; most occupations recombine tasks, and net employment has historically recovered."),
        "c03": _c("Benchmark scores say little about economic impact; the relevant measure is productivity and employment data, which so far show modest effects."),
        "c04": _c("The costs of transition fall on specific workers and regions, and policy should focus on who bears them rather than on aggregate job counts."),
        "c05": _c("Open diffusion of tools lowers costs for small firms and spreads productivity gains; restricting access favours incumbents."),
        "c06": _c("Licensing regimes create barriers to entry that large firms can absorb and small ones cannot, a classic pattern in regulated industries."),
        "c07": _c("Market concentration in AI could let a few firms capture most of the gains and set wages in exposed occupations."),
        "c08": _c("Current harms such as discriminatory hiring algorithms are measurable and fall on identifiable people, which makes them a sensible regulatory priority."),
        "c09": _c("Liability should fall on the cheapest cost avoider; for defects inside a model, that is often the developer."),
        "c10": _c("Extinction scenarios are outside what economics can assess, and I see no data supporting high probabilities."),
        "c11": _c("Independent evaluation is a public good that markets underprovide, so it is worth funding."),
        "c12": _c("Statistical agencies and ministries need staff who can measure AI's effects; we are flying blind on the data."),
    },
    nodes={
        "slow_diffusion": ("General-purpose technologies take decades to diffuse", "factual_claim", ["c01"]),
        "tasks_not_jobs": ("Automation replaces tasks, not whole jobs", "factual_claim", ["c02"]),
        "benchmarks_not_gdp": ("Benchmark scores say little about economic impact", "assumption", ["c03"]),
        "modest_effects": ("Productivity and employment data so far show modest AI effects", "factual_claim", ["c03"]),
        "who_pays": ("Policy should focus on who bears transition costs", "core_value", ["c04"]),
        "diffusion_good": ("Open diffusion of tools spreads productivity gains to small firms", "inference", ["c05"]),
        "entry_barriers": ("Licensing creates barriers to entry that favour large firms", "inference", ["c06"]),
        "gains_captured": ("Concentration could let a few firms capture AI's gains", "inference", ["c07"]),
        "identifiable_harm": ("Current harms fall on identifiable people and are measurable", "factual_claim", ["c08"]),
        "cost_avoider": ("Liability belongs with the cheapest cost avoider", "core_value", ["c09"]),
        "no_doom_data": ("No data support high extinction probabilities", "assumption", ["c10"]),
        "public_good": ("Independent evaluation is an underprovided public good", "inference", ["c11"]),
        "data_gap": ("Governments lack staff to measure AI's effects", "factual_claim", ["c12"]),
    },
    edges=[
        ("slow_diffusion", "p6", -1, ["c01"]), ("tasks_not_jobs", "p6", -1, ["c02"]), ("modest_effects", "p6", -1, ["c03"]),
        ("benchmarks_not_gdp", "p7", -1, ["c03"]), ("slow_diffusion", "p7", -1, ["c01"]), ("diffusion_good", "p2", 1, ["c05"]),
        ("entry_barriers", "p3", -1, ["c06"]), ("gains_captured", "p10", 1, ["c07"]), ("identifiable_harm", "p4", 1, ["c08"]),
        ("cost_avoider", "p8", 1, ["c09"]), ("no_doom_data", "p1", -1, ["c10"]), ("public_good", "p5", 1, ["c11"]),
        ("data_gap", "p9", 1, ["c12"]), ("who_pays", "identifiable_harm", 1, ["c04", "c08"]),
    ],
    stances={
        "p1": StanceSpec("con", 0.6, "Extinction scenarios are outside what the data can assess, and nothing measured supports high probabilities.",
                         ["no_doom_data"], ["c10"], []),
        "p2": StanceSpec("pro", 0.6, "Open diffusion lowers costs for small firms and spreads the productivity gains; restricting it favours incumbents.",
                         ["diffusion_good"], ["c05"],
                         [("evidence", "Open-weight releases measurably increase fraud losses", ["fraud losses", "increase"], "uncertain")]),
        "p3": StanceSpec("con", 0.55, "Licensing creates entry barriers large firms absorb and small ones cannot.",
                         ["entry_barriers"], ["c06"], []),
        "p4": StanceSpec("pro", 0.7, "Current harms are measurable and fall on identifiable people, a sensible priority.",
                         ["identifiable_harm", "who_pays"], ["c08", "c04"], []),
        "p5": StanceSpec("pro", 0.8, "Independent evaluation is a public good markets underprovide, so it is worth funding.",
                         ["public_good"], ["c11"], []),
        "p6": StanceSpec("con", 0.6, "Technologies diffuse over decades and automate tasks, not jobs; the data so far show modest effects.",
                         ["slow_diffusion", "tasks_not_jobs", "modest_effects"], ["c01", "c02", "c03"],
                         [("evidence", "Occupational data show rapid, broad displacement within a few years of deployment", ["rapid", "displacement"], "uncertain")]),
        "p7": StanceSpec("con", 0.65, "Benchmarks are not economic capability, and general-purpose technologies take decades to diffuse.",
                         ["benchmarks_not_gdp", "slow_diffusion"], ["c03", "c01"],
                         [("evidence", "Productivity statistics jump sharply in AI-using sectors", ["productivity", "jump"], "uncertain")]),
        "p8": StanceSpec("pro", 0.6, "Liability belongs with the cheapest cost avoider, which for defects inside a model is the developer.",
                         ["cost_avoider"], ["c09"], []),
        "p9": StanceSpec("pro", 0.85, "We are flying blind: agencies need staff who can measure AI's effects.",
                         ["data_gap"], ["c12"], []),
        "p10": StanceSpec("pro", 0.7, "Concentration could let a few firms capture most of the gains and set wages in exposed occupations.",
                          ["gains_captured"], ["c07"], []),
    },
    anchors=["c01", "c02", "c04"],
)

PERSONAS: list[PersonaSpec] = [ALIGN, OPEN, REG, ECON]

DECK = DeckSpec(
    id="ai-policy",
    name="AI policy: risk, openness and regulation",
    description=(
        "Four synthetic archetypes (not real people) who disagree on catastrophic risk, open weights, "
        "licensing, liability and the labour market."
    ),
    topics=[
        "Should frontier AI training be licensed?",
        "Open-weight models: public good or public hazard?",
        "What should AI regulation prioritise?",
        "Will AI take our jobs?",
    ],
    propositions=PROPS,
    personas=PERSONAS,
)

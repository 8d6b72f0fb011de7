"""Self-check questions (pure data) and the grading rule the quiz widget uses.

Every quiz question of the collection lives here (one home), in notebook order; ``ALL_QUESTIONS``
lists them; import a question from here (its one import path). The position
of the right answer is chosen by hand and varies from question to question (a test checks that no
position holds more than half of the answers, and that the answer is not always the longest option).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Question:
    prompt: str
    options: tuple
    answer: int  # index into options
    explanation: str  # shown after any attempt

    def __post_init__(self):
        if not self.options:
            raise ValueError("options is empty")
        if not (isinstance(self.answer, int) and 0 <= self.answer < len(self.options)):
            raise ValueError(f"answer must index options (0..{len(self.options) - 1}), got {self.answer!r}")


def grade(question: Question, choice: int | None) -> tuple[bool, str]:
    """(correct?, feedback text) for the option index ``choice`` (None: nothing chosen yet)."""
    if choice is None:
        return False, "Pick an option, then press Check."
    if isinstance(choice, bool) or not isinstance(choice, int) or not 0 <= choice < len(question.options):
        raise ValueError(f"choice must be an option index 0..{len(question.options) - 1}, got {choice!r}")
    if choice == question.answer:
        return True, f"Correct. {question.explanation}"
    return False, f"Not quite: “{question.options[choice]}” is not it. {question.explanation}"


# ---------------------------------------------------------------- 00 · start here

TRUTH_QUESTION = Question(
    prompt="Speculative sampling reproduces the target's distribution exactly. Does that make the "
    "sampled statements true?",
    options=("Yes: the target checks every token the draft proposes", "No", "Only when α = 1"),
    answer=1,
    explanation="It guarantees the same law (distribution) as sampling the target alone, nothing more. If the "
    "target puts probability on a false continuation, so does speculative sampling "
    "(notebook 00 shows one, with its exact probability).",
)

# ---------------------------------------------------------------- 01 · proposals and acceptance

ACCEPTANCE_RULE_QUESTION = Question(
    prompt="Target p = [0.6, 0.3, 0.1], draft q = [0.2, 0.3, 0.5]. The draft proposes C. With "
    "what probability does the target keep it?",
    options=("0.1", "0.5", "0.2"),
    answer=2,
    explanation="a(C) = min(1, p(C)/q(C)) = min(1, 0.1/0.5) = 0.2. The accepted mass of C is then "
    "0.5 × 0.2 = 0.1 = p(C): acceptance alone already gives C exactly its target share.",
)

# ---------------------------------------------------------------- 02 · residual correction

RESIDUAL_QUESTION = Question(
    prompt="With p = [0.6, 0.3, 0.1] (target) and q = [0.2, 0.3, 0.5] (draft), a rejected "
    "proposal is replaced by a token drawn from which distribution?",
    options=(
        "The draft q = [0.2, 0.3, 0.5]",
        "A uniform distribution over A, B and C",
        "The residual [1, 0, 0]",
    ),
    answer=2,
    explanation="Only A has p > q; max(p − q, 0) = [0.4, 0, 0] normalizes to [1, 0, 0]. The 0.4 of "
    "rejected mass then restores exactly the 0.4 that A was missing: 0.2 + 0.4 = 0.6.",
)

P_VALUE_QUESTION = Question(
    prompt="A chi-square test of a sampler against the target's law gives p-value = 0.02, with the "
    "threshold fixed at 0.001 beforehand. What does 0.02 say?",
    options=(
        "The sampler is wrong with probability 0.98",
        "If the sampler were right, a statistic at least this large would turn up about 2% of the time",
        "The sampler is right with probability 0.02",
    ),
    answer=1,
    explanation="A p-value is computed assuming the law is right; it is not the probability that the "
    "sampler is right or wrong. 0.02 is above the threshold, so the test does not reject; "
    "a correct sampler gives a p-value of 0.02 or less about one time in fifty.",
)

# ---------------------------------------------------------------- 03 · one round

ROUND_COUNT_QUESTION = Question(
    prompt="With γ = 4, a round accepts proposal 1 and rejects proposal 2. How many tokens does it "
    "emit, and how many of the γ + 1 = 5 scored target rows go unused?",
    options=("1 emitted, 4 unused", "2 emitted, 1 unused", "2 emitted, 3 unused"),
    answer=2,
    explanation="Emitted = 1 accepted + 1 correction = 2. Row 2, the rejected position's row, is used: "
    "the correction is drawn from its residual. Rows 3 and 4 (the rows of the discarded proposals) "
    "and row 5 (the bonus row) go unused: 3, and 2 + 3 = 5.",
)

SAME_SEED_QUESTION = Question(
    prompt="With the same seed, speculative sampling writes a different text than plain sampling. "
    "What follows?",
    options=(
        "Nothing: only the law must match, and a goodness-of-fit test over many texts checks that",
        "The speculative sampler is wrong",
        "The seed was not fixed",
    ),
    answer=0,
    explanation="The two samplers use their random numbers differently, so single texts differ; over "
    "many texts both pass the chi-square test against the exact target law.",
)

STOP_QUESTION = Question(
    prompt="γ = 4 and the end-of-sequence token is a stop token. The draft proposes B, <eos>, C, D and "
    "the target accepts all four. What does the round add to the text?",
    options=(
        "B, <eos>, C, D and a bonus token",
        "B, <eos>: the text ends there",
        "B only: <eos> is never emitted",
    ),
    answer=1,
    explanation="The text ends at the stop token, so the round stops there: C, D and the bonus token "
    "are discarded although C and D were accepted, and the accounting counts 2 tokens for "
    "this round. Plain sampling would also have ended after <eos>, so the law is unchanged.",
)

# ---------------------------------------------------------------- 04 · tokens per round

EXPECTED_COUNT_QUESTION = Question(
    prompt="Each proposal is accepted independently with α = 0.6 and the draft proposes γ = 2 "
    "tokens. How many tokens does a round emit on average, counting the correction or bonus?",
    options=("1.96", "1.2", "3"),
    answer=0,
    explanation="E[K] = 1 + α + α² = 1 + 0.6 + 0.36 = 1.96. The first token always comes (a "
    "correction or an accepted proposal); each further one needs one more acceptance.",
)

ACCEPTANCE_LENGTH_QUESTION = Question(
    prompt="A dashboard reports the draft's 'acceptance rate', computed as accepted / proposed (the "
    "accepted share), falling from 48% to 28% "
    "when γ goes from 2 to 5, with the same draft and target (iid α = 0.6). What happened to "
    "the tokens emitted per round?",
    options=(
        "They fell too: the draft got worse",
        "Nothing: the accepted share and tokens per round are the same number",
        "They rose, from 1.96 to about 2.38",
    ),
    answer=2,
    explanation="Under iid α, the accepted share (accepted / proposed) is (α + … + α^γ)/γ: 0.48 at "
    "γ = 2 and 0.28 at γ = 5, because proposals after the first rejection are discarded unchecked "
    "but still count as proposed. The acceptance probability α = 0.6 did not change, and mean "
    "K = 1 + α + … + α^γ only grows with γ: 1.96, then 2.38. 'Acceptance rate' can mean either "
    "number: say which one you mean.",
)

# ---------------------------------------------------------------- 05 · tokens per second

TIMING_QUESTION = Question(
    prompt="Two drafts for the same target, γ = 2, 6 ms of verification and 1 ms overhead per round, "
    "6 ms per baseline token (assumed budgets). Draft A: α = 0.8, but its two drafting steps "
    "take 8 ms. Draft B: α = 0.6, drafting 2 ms. Which gives more tokens per second?",
    options=(
        "B: about 217.8 tokens/s; A gets about 162.7, below even the 166.7 baseline",
        "A: a higher acceptance probability means more tokens per round, so it wins",
        "Both beat the baseline, A by more",
    ),
    answer=0,
    explanation="E[K] is 1 + 0.8 + 0.64 = 2.44 for A and 1.96 for B, but A's round takes 8 + 6 + 1 = 15 ms "
    "(2.44/0.015 ≈ 162.67 tokens/s) and B's 9 ms (1.96/0.009 ≈ 217.78). Verification costs "
    "the same for both: it scores γ + 1 positions whoever proposed them. Tokens per round do "
    "not settle it; the budget does, and only measuring the real workload tells you the budget.",
)

# ---------------------------------------------------------------- 06 · state, roofline, batching

KV_QUESTION = Question(
    prompt="Llama-3.1-8B serves 16 sequences of 8,192 tokens in bf16 and Llama-3.2-1B starts "
    "drafting γ = 4 tokens per round. Which addition to the KV memory is the largest?",
    options=(
        "The 4 provisional target positions per sequence",
        "None: rejected positions are rolled back, so speculation adds nothing",
        "The draft's own cache for the 8,192-token context",
    ),
    answer=2,
    explanation="The draft caches the whole context: 16 × 8,192 tokens × 32 KiB = 4 GiB. The "
    "provisional target positions are 16 × 4 × 128 KiB = 8 MiB. Rollback happens after "
    "verification, so the provisional positions still count at the peak.",
)

# ---------------------------------------------------------------- 07 · sampling transforms

TRANSFORM_QUESTION = Question(
    prompt="The draft samples its proposals after top-k = 10, but hands the verifier its full, "
    "untruncated softmax as q. The target's p gets the same top-k. Does the output follow "
    "the target's top-k distribution?",
    options=(
        "No: q must be the distribution the proposals were really drawn from",
        "Yes: the target decides in the end, so the draft's q does not matter",
        "Yes, provided the acceptance probability α is high enough",
    ),
    answer=0,
    explanation="The acceptance test min(1, p/q) and the residual max(p − q, 0) only rebuild p when "
    "q is the law the proposal came from. Here the draft never proposes symbols outside "
    "its top 10, yet q says it might, so the symbols it does propose are accepted too "
    "rarely or too often and the output is biased.",
)

# ---------------------------------------------------------------- 09 · a real model

MEASURE_QUESTION = Question(
    prompt="On this CPU, prompt lookup drafts almost for free and almost every proposal is accepted on the "
    "copy-heavy prompt. Why is the speed-up still below γ + 1?",
    options=(
        "Because strict verification rejects most correct proposals",
        "Because one target call scoring γ + 1 positions costs more than one single step here",
        "Because the draft's proposals change the target's output distribution",
    ),
    answer=1,
    explanation="With a free draft and every proposal accepted, a round emits γ + 1 tokens for one verification "
    "call, so the speed-up is at most (γ + 1) ÷ (cost of that call in single steps). Even with the weights read "
    "once per call, each extra position adds its arithmetic, and on one CPU core reading and arithmetic add up "
    "rather than overlap, so that cost grows with γ and caps the gain.",
)

#: Every question of the collection, in notebook order.
ALL_QUESTIONS = (
    TRUTH_QUESTION,
    ACCEPTANCE_RULE_QUESTION,
    RESIDUAL_QUESTION,
    P_VALUE_QUESTION,
    ROUND_COUNT_QUESTION,
    SAME_SEED_QUESTION,
    STOP_QUESTION,
    EXPECTED_COUNT_QUESTION,
    ACCEPTANCE_LENGTH_QUESTION,
    TIMING_QUESTION,
    KV_QUESTION,
    TRANSFORM_QUESTION,
    MEASURE_QUESTION,
)

# ---------------------------------------------------------------- 05 · latency, 06 · the roofline

LATENCY_QUESTION = Question(
    prompt="A speculative decoder emits 3 tokens per round on average and a round takes 12 ms, so it "
    "averages 250 tokens/s (4 ms per token). What does a reader watching the stream see?",
    options=(
        "A token every 4 ms, evenly",
        "Bursts: a wait of about 12 ms, then a few tokens at once",
        "A token every 12 ms",
    ),
    answer=1,
    explanation="All tokens of a round appear when the round ends. The gaps are one round long or "
    "zero; only their mean is 4 ms. Time to first token grows too: the draft must read "
    "the prompt before the first round can start.",
)

ROOFLINE_QUESTION = Question(
    prompt="A server decodes 64 sequences at once with short contexts, and its decode step is already "
    "compute-bound. What does speculation with γ = 4 do to each round's verification pass?",
    options=(
        "Nothing: verifying γ + 1 positions costs one step, as at batch 1",
        "It costs about γ + 1 = 5 decode steps, so speculation likely loses",
        "It becomes cheaper, because the batch shares the draft",
    ),
    answer=1,
    explanation="Verification is cheap only while a pass is memory-bound: the weights are read once "
    "whatever the number of positions. Past the ridge point every position costs its "
    "FLOPs, so 5 positions cost about 5 steps and the accepted tokens no longer pay for "
    "them. That is why serving engines lower γ, or switch speculation off, under load.",
)

PASS_COST_QUESTION = Question(
    prompt="On one core of this CPU, with each weight read once per call, scoring 8 positions in one pass of the "
    "capstone's model costs noticeably more than one single step, although the roofline puts a float32 pass near "
    "or below the ridge for that many positions. What does the roofline's max(memory, compute) assume that this "
    "program does not deliver?",
    options=(
        "That the weights are read once per position rather than once per pass",
        "That the key-value cache is empty",
        "That reading the weights and doing the arithmetic overlap; one core that streams a block and then "
        "multiplies it pays roughly their sum",
    ),
    answer=2,
    explanation="The roofline takes the larger of the two times, as if the arithmetic ran while the next bytes "
    "arrived. A single thread that loads a block of weights and then multiplies it by the T inputs pays the two "
    "one after the other, so each extra position adds its arithmetic to the read: the no-overlap prediction "
    "(memory + compute) follows the measured curve, the max is a bound.",
)

ALL_QUESTIONS = ALL_QUESTIONS + (LATENCY_QUESTION, PASS_COST_QUESTION, ROOFLINE_QUESTION)

# ---------------------------------------------------------------- 08 · multiple candidates and trees

MULTI_DRAFT_QUESTION = Question(
    prompt="Two candidates are drawn independently from the draft q. The target rejects the first. "
    "Against which distribution is the second candidate tested, so that the emitted token still "
    "follows p exactly?",
    options=(
        "The target p itself, as if nothing had happened",
        "The draft q",
        "The residual: max(p − q, 0), normalized",
    ),
    answer=2,
    explanation="A rejection says the token is not in the part of p that q already covered. What is left "
    "to produce is the residual, so the second candidate faces it (and, without replacement, "
    "the proposal drops the rejected token). Testing against p again over-produces the tokens "
    "q likes: that is the lossy 'no residual update' rule.",
)

TYPICAL_QUESTION = Question(
    prompt="Medusa-style typical acceptance keeps a candidate whenever the target gives it more than "
    "min(ε, δ·exp(−H(p))). What does a system give up by using it?",
    options=(
        "The exact target law: it accepts more and emits a different distribution",
        "Nothing: it is lossless whenever ε is small",
        "Speed: it accepts fewer candidates than recursive rejection",
    ),
    answer=0,
    explanation="The rule never looks at q and has no residual, so any plausible candidate passes and "
    "the output leans toward what the draft proposes. It is faster but not the target; a "
    "system might accept that where only plausibility matters, never where the sampled "
    "distribution itself is the product (evaluation, calibrated sampling).",
)

TREE_MASK_QUESTION = Question(
    prompt="A token tree holds the branches 'the cat' and 'the dog', scored in one target pass. "
    "Which earlier tree positions may the node 'dog' attend to?",
    options=(
        "Every node before it in the flattened list, 'cat' included",
        "The prefix, 'the' and itself, but not 'cat'",
        "Only itself",
    ),
    answer=1,
    explanation="Each node must see exactly the context it would have in a plain pass: the prefix and its "
    "own ancestors. A sibling branch is a different continuation, so the mask hides it.",
)

CONFIDENCE_TREE_QUESTION = Question(
    prompt="A tree samples each node's children from the draft's q, drops every child whose own q(x) "
    "is below 0.2, and verifies the rest by recursive rejection, dividing by q. Is the output the "
    "target's law?",
    options=(
        "Yes: recursive rejection keeps the law whatever the children are",
        "Only when the children are drawn without replacement",
        "No: a surviving child was drawn from q restricted to confident tokens, not from q",
    ),
    answer=2,
    explanation="Verification is exact only against the law a child was really drawn from. Pruning a "
    "sampled child by its own probability is notebook 04's withholding rule (TV 12/125 at one position "
    "in notebook 08). Taking the draft's top k deterministically, pruned or not, and verifying each as "
    "a one-hot proposal is exact (EAGLE-2 does this).",
)

ALL_QUESTIONS = ALL_QUESTIONS + (
    MULTI_DRAFT_QUESTION,
    TYPICAL_QUESTION,
    TREE_MASK_QUESTION,
    CONFIDENCE_TREE_QUESTION,
)

# ---------------------------------------------------------------- issue 26: 01 optimality, 04 γ policies, 07 processors

OPTIMALITY_QUESTION = Question(
    prompt="A scheme draws one proposal X ~ q and outputs a token Y whose law is exactly p. Whatever "
    "rule it uses, how often can it output its own proposal (Y = X)?",
    options=(
        "At most Σ min(p, q) = 1 − TV(p, q)",
        "At most max over x of min(p(x), q(x))",
        "Up to 1, with a clever enough rule",
    ),
    answer=0,
    explanation="(X, Y) is a coupling of q and p: its rows sum to q and its columns to p, so each diagonal "
    "cell π(x, x) is at most min(p(x), q(x)). Summing gives P(X = Y) ≤ Σ min(p, q) = α, and "
    "strict speculative sampling reaches it (notebook 01, section 6).",
)

GAMMA_POLICY_QUESTION = Question(
    prompt="Which rule for choosing γ can break the target's law?",
    options=(
        "Grow γ after a round with no rejection, shrink it after a rejection",
        "Stop drafting right after proposing a token whose draft probability is below 0.4",
        "Retry a round with γ = 0 when its first proposal was rejected",
    ),
    answer=2,
    explanation="Whether position i is proposed may depend on the prefix, on earlier rounds, and on the "
    "draft's earlier tokens x₁ … xᵢ₋₁ of this round and the rows they came from; never on xᵢ itself "
    "(drawing it, then withholding it when unsure, is biased) and never on this round's verdicts "
    "(condition (5)). Grow/shrink looks at earlier rounds; the stop rule looks at a token already "
    "proposed. Retrying after a rejection chooses γ after the target's verdict: the first token then "
    "has law min(p, q) + (1 − α)p, not p (notebook 04, section 7).",
)

PROCESSOR_QUESTION = Question(
    prompt="A repetition penalty is applied to the target's rows inside a round of γ = 3 proposals. "
    "Which prefix must the penalty see at the third position?",
    options=(
        "The verified text only: proposals are not text yet",
        "The verified text followed by the first two proposals",
        "The verified text followed by all three proposals",
    ),
    answer=1,
    explanation="Plain sampling would draw the third token after the first two, so the processor must see "
    "exactly that prefix (the speculative one) on both sides. With the verified text only the "
    "target's row is wrong and the output law shifts (notebook 07: TV 0.19 on the toy language).",
)

ALL_QUESTIONS = ALL_QUESTIONS + (OPTIMALITY_QUESTION, GAMMA_POLICY_QUESTION, PROCESSOR_QUESTION)

# ---------------------------------------------------------------- 09b · the engines you will use

MATCH_RULE_QUESTION = Question(
    prompt="An engine draws the target's own token y ~ p at each position and keeps the draft's "
    "proposal x only if y = x; the draft samples x ~ q. With p = [0.6, 0.3, 0.1] and "
    "q = [0.2, 0.3, 0.5], what is its output law, and how often does a proposal pass?",
    options=(
        "Not p: the output leans towards q; passes with α = 0.6",
        "p exactly; passes with Σ q·p = 0.26, less than α = Σ min(p, q) = 0.6",
        "p exactly; passes with α = 0.6, like the strict rule",
    ),
    answer=1,
    explanation="Every emitted token is the target's own draw, so the law is p whatever the draft does. "
    "The proposal passes when two independent draws agree: Σ q(x)p(x) = 0.12 + 0.09 + 0.05 = 0.26, "
    "below the strict rule's 0.6. With a greedy draft the two rules coincide (notebook 09b).",
)

ENGINE_METRIC_QUESTION = Question(
    prompt="A vLLM log shows “Avg Draft acceptance rate: 55%” with num_speculative_tokens = 4. "
    "Which quantity of this collection is that?",
    options=(
        "The acceptance probability α of one checked proposal",
        "The mean number of tokens per round, E[K]",
        "The accepted share: accepted drafted tokens / drafted tokens",
    ),
    answer=2,
    explanation="vLLM divides accepted draft tokens by drafted tokens, counting the proposals thrown away "
    "after a rejection as drafted: the accepted share, which falls as γ grows. Its “Mean acceptance "
    "length” (1 + accepted / drafts) is the mean K (notebook 09b, section 2).",
)

ALL_QUESTIONS = ALL_QUESTIONS + (MATCH_RULE_QUESTION, ENGINE_METRIC_QUESTION)

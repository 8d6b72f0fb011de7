"""specdec_core: the exact, tested library behind the specdec notebooks.

p is the target distribution, q the draft (Leviathan et al., 2023). Pure layer only here:
no widgets, no matplotlib (those live in ``specdec_core.labs`` and ``specdec_core.plots``).
"""

from . import power  # noqa: F401  (the module itself: sc.power.chi_square_power)
from .batch import verify_batch
from .counts import expected_gain, expected_output_count, mean_output_count, output_count_distribution
from .distributions import check_distribution, check_pair
from .formatting import fmt, fmt_decimal, labelled
from .kv import PRESETS, ModelShape, kv_cache_bytes, working_set
from .latency import (
    arrival_times_ms,
    gap_summary,
    inter_token_gaps_ms,
    padding_waste,
    simulate_ragged_batch,
    time_to_first_token_ms,
)
from .lawcheck import chi_square_gof
from .multidraft import (
    multi_draft_acceptance_probability,
    multi_draft_law,
    multi_draft_output_distribution,
    verify_multi_draft,
)
from .roofline import (
    HARDWARE,
    Hardware,
    arithmetic_intensity,
    pass_bytes,
    pass_flops,
    pass_time,
    ridge_point,
    verification_cost,
)
from .sampling import (
    GenerationResult,
    RoundRecord,
    autoregressive_generate,
    speculative_generate,
    speculative_round,
)
from .serving import serving_point
from .timing import (
    baseline_tokens_per_second,
    break_even_verify_ms,
    improvement_factor,
    optimal_gamma,
    round_time_ms,
    speedup_ratio,
    tokens_per_second,
    work_account,
)
from .transforms import apply_temperature, greedy, softmax, top_k, top_p
from .tree_laws import tree_round_law, tree_round_stats, tree_sequence_law
from .tree_sampling import verify_tree
from .trees import TokenTree, tree_attention_mask
from .verify import (
    acceptance_probabilities,
    acceptance_probability,
    accepted_mass,
    correction_distribution,
    output_distribution,
    output_distribution_with,
    rejection_probability,
    residual_distribution,
    total_variation,
)
from .worked import WORKED, worked_trace

__all__ = [
    "verify_multi_draft",
    "multi_draft_acceptance_probability",
    "multi_draft_output_distribution",
    "multi_draft_law",
    "TokenTree",
    "tree_attention_mask",
    "verify_tree",
    "tree_round_law",
    "tree_sequence_law",
    "tree_round_stats",
    "acceptance_probabilities",
    "accepted_mass",
    "acceptance_probability",
    "rejection_probability",
    "residual_distribution",
    "output_distribution",
    "correction_distribution",
    "output_distribution_with",
    "total_variation",
    "output_count_distribution",
    "expected_output_count",
    "mean_output_count",
    "expected_gain",
    "tokens_per_second",
    "baseline_tokens_per_second",
    "round_time_ms",
    "speedup_ratio",
    "break_even_verify_ms",
    "improvement_factor",
    "optimal_gamma",
    "work_account",
    "ModelShape",
    "PRESETS",
    "kv_cache_bytes",
    "working_set",
    "Hardware",
    "HARDWARE",
    "pass_bytes",
    "pass_flops",
    "pass_time",
    "arithmetic_intensity",
    "ridge_point",
    "verification_cost",
    "serving_point",
    "arrival_times_ms",
    "inter_token_gaps_ms",
    "gap_summary",
    "time_to_first_token_ms",
    "padding_waste",
    "simulate_ragged_batch",
    "softmax",
    "apply_temperature",
    "top_k",
    "top_p",
    "greedy",
    "speculative_generate",
    "autoregressive_generate",
    "speculative_round",
    "verify_batch",
    "RoundRecord",
    "GenerationResult",
    "chi_square_gof",
    "check_distribution",
    "check_pair",
    "fmt",
    "fmt_decimal",
    "labelled",
    "WORKED",
    "worked_trace",
]
__version__ = "0.1.0"

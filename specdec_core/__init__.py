"""specdec_core: the exact, tested library behind the specdec notebooks.

p is the target distribution, q the draft (Leviathan et al., 2023). Pure layer only here:
no widgets, no matplotlib (those live in ``specdec_core.widgets`` and ``specdec_core.plots``).
"""
from .counts import expected_output_count, mean_output_count, output_count_distribution
from .distributions import check_distribution, check_pair
from .formatting import fmt, fmt_decimal, labelled
from .lawcheck import chi_square_gof
from .sampling import (GenerationResult, RoundRecord, autoregressive_generate,
                       speculative_generate, speculative_round, verify_batch)
from .timing import (baseline_tokens_per_second, break_even_verify_ms, improvement_factor,
                     optimal_gamma, round_time_ms, speedup_ratio, tokens_per_second, work_account)
from .kv import PRESETS, ModelShape, kv_cache_bytes, working_set
from .transforms import apply_temperature, greedy, softmax, top_k, top_p
from .verify import (acceptance_probabilities, acceptance_rate, accepted_mass,
                     correction_distribution, output_distribution, output_distribution_with,
                     rejection_probability, residual_distribution, total_variation)
from .worked import WORKED, worked_trace

__all__ = [
    "acceptance_probabilities", "accepted_mass", "acceptance_rate", "rejection_probability",
    "residual_distribution", "output_distribution", "correction_distribution",
    "output_distribution_with", "total_variation",
    "output_count_distribution", "expected_output_count", "mean_output_count",
    "tokens_per_second", "baseline_tokens_per_second", "round_time_ms", "speedup_ratio",
    "break_even_verify_ms", "improvement_factor", "optimal_gamma", "work_account",
    "ModelShape", "PRESETS", "kv_cache_bytes", "working_set",
    "softmax", "apply_temperature", "top_k", "top_p", "greedy",
    "speculative_generate", "autoregressive_generate", "speculative_round", "verify_batch",
    "RoundRecord", "GenerationResult", "chi_square_gof",
    "check_distribution", "check_pair", "fmt", "fmt_decimal", "labelled",
    "WORKED", "worked_trace",
]
__version__ = "0.1.0"

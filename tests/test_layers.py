"""The pure layer stays pure: importing specdec_core pulls in no widgets, no matplotlib, no sympy."""

import subprocess
import sys


def test_pure_layer_imports_no_view_or_symbolic_packages():
    code = (
        "import sys, specdec_core; "
        "print(sorted(m for m in ('ipywidgets', 'matplotlib', 'sympy', 'IPython') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_public_api_names():
    import specdec_core as sc

    for name in (
        "acceptance_probabilities",
        "accepted_mass",
        "acceptance_probability",
        "residual_distribution",
        "output_distribution",
        "output_count_distribution",
        "expected_output_count",
        "tokens_per_second",
        "speculative_generate",
        "autoregressive_generate",
        "verify_batch",
    ):
        assert callable(getattr(sc, name)), name
    assert set(sc.__all__) <= set(dir(sc))

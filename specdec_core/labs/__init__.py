"""Interactive labs: the one import surface for notebooks.

Every lab is built on :mod:`specdec_core.labs.base` (read its docstring: the protocol, the DOM
contract for browser tests, and how labs survive JupyterLab). Notebooks call ``show_<lab>()``
(the live lab plus its static copy); tests and benchmarks build ``<lab>_lab()`` and drive it
with ``.set(...)`` / ``.press(...)``. ``still(SPEC, **changes)`` shows a lab's figure for a fixed
scenario, read from the lab's defaults.

=================  ===================  =======================  ==========
notebook           show                 factory                  spec
=================  ===================  =======================  ==========
01 proposals       ``show_acceptance``  ``acceptance_lab``       ``ACCEPTANCE``
02 residual        ``show_corrections`` ``corrections_lab``      ``CORRECTIONS``
03 one round       ``show_stepper``     ``stepper_lab``          (per records)
04 tokens/round    ``show_counts``      ``counts_lab``           ``COUNTS``
05 tokens/second   ``show_timing``      ``timing_lab``           ``TIMING``
06 KV memory       ``show_kv``          ``kv_lab``               ``KV``
06 roofline        ``show_roofline``    ``roofline_lab``         ``ROOFLINE``
07 transforms      ``show_transforms``  ``transforms_lab``       ``TRANSFORMS``
08 trees           ``show_trees``       ``trees_lab``            ``TREES``
09b engines        ``show_matching``    ``matching_lab``         ``MATCHING``
every notebook     ``show_quiz``        ``quiz_lab``             (per question)
=================  ===================  =======================  ==========
"""

from .acceptance import SPEC as ACCEPTANCE
from .acceptance import acceptance_lab, show_acceptance
from .base import Lab, LabSpec, show, static_html, still
from .counts import SPEC as COUNTS
from .counts import counts_lab, show_counts
from .kv import SPEC as KV
from .kv import kv_lab, show_kv
from .matching import SPEC as MATCHING
from .matching import matching_lab, show_matching
from .quiz import quiz_lab, show_quiz
from .residual import SPEC as CORRECTIONS
from .residual import corrections_lab, show_corrections
from .roofline import SPEC as ROOFLINE
from .roofline import roofline_lab, show_roofline
from .stepper import demo_records, show_stepper, stepper_lab
from .timing import SPEC as TIMING
from .timing import show_timing, timing_lab
from .transforms import SPEC as TRANSFORMS
from .transforms import show_transforms, transforms_lab
from .trees import SPEC as TREES
from .trees import show_trees, trees_lab

__all__ = [
    "ACCEPTANCE",
    "CORRECTIONS",
    "COUNTS",
    "TIMING",
    "TRANSFORMS",
    "Lab",
    "LabSpec",
    "acceptance_lab",
    "corrections_lab",
    "counts_lab",
    "demo_records",
    "quiz_lab",
    "show",
    "show_acceptance",
    "show_corrections",
    "show_counts",
    "show_quiz",
    "show_stepper",
    "show_timing",
    "show_transforms",
    "static_html",
    "still",
    "stepper_lab",
    "timing_lab",
    "transforms_lab",
    "TREES",
    "show_trees",
    "trees_lab",
    "KV",
    "kv_lab",
    "show_kv",
    "ROOFLINE",
    "roofline_lab",
    "show_roofline",
    "MATCHING",
    "matching_lab",
    "show_matching",
]

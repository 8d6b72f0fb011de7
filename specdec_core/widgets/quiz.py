"""Kept only so notebooks 06 and 09 still run until their quiz cells import
``from specdec_core.labs import show_quiz``; then delete this package."""
from ..labs.quiz import show_quiz  # noqa: F401

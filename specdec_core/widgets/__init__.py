"""Superseded by :mod:`specdec_core.labs` (the one lab protocol); only a ``show_quiz`` shim is
left for notebooks not yet moved. Import labs from ``specdec_core.labs``."""

"""ipywidgets views. Each module builds the controls for one concept and calls the pure layer;
no math lives here. Import the module you need, e.g. ``from specdec_core.widgets.quiz import show_quiz``."""

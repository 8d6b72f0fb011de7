"""Code that runs in the Jupyter *server* process, not in a kernel: today one server extension,
:mod:`.nodelay` (``TCP_NODELAY`` on kernel WebSockets), enabled by
``binder/jupyter-server-extension.json``.

Not :mod:`specdec_core.labs`: the labs run in the kernel (ipywidgets, matplotlib) and a notebook
imports them; a server extension is loaded once by ``jupyter lab`` and imports ``jupyter_server``.
Neither the pure layer nor the labs import this package.
"""

"""A Jupyter server extension that makes every lab answer sooner (about 25 ms per move here).

`make lab`, Binder (``binder/postBuild``) and the browser tests enable it with
``binder/jupyter-server-extension.json`` (copied into a ``jupyter_server_config.d`` folder).

Why: a lab's reply to one slider move is several small kernel messages in a row (status "busy",
the new readouts, the figure, status "idle"), which the server forwards to the browser over a
WebSocket. Jupyter Server leaves Nagle's algorithm on for that socket (Tornado's default), so the
second small message waits until the browser acknowledges the first — and browsers delay an
acknowledgement by up to 40 ms. Measured in JupyterLab in headless Chromium on a quiz (0.1 ms of
Python work): the kernel sent its update 1 ms after "busy"; the page received it 37 ms after
"busy" without this extension and 5–14 ms after with it (2026-12-01, the browser benchmark of
that time, which timed each message of an event).

:class:`NoDelayConnection` sets ``TCP_NODELAY`` on each kernel WebSocket as it connects; nothing
else changes. The package itself never imports this module: only a Jupyter server loads it.
"""

from __future__ import annotations

from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection

SETTING = "kernel_websocket_connection_class"
#: What the server logs (level INFO) once the extension is in use; tests look for it.
LOADED = "specdec_core.server.nodelay: TCP_NODELAY on kernel WebSockets"


class NoDelayConnection(ZMQChannelsWebsocketConnection):
    """Jupyter Server's kernel WebSocket connection, with ``TCP_NODELAY`` set on connect."""

    def connect(self):
        self.websocket_handler.set_nodelay(True)
        return super().connect()


def _jupyter_server_extension_points() -> list[dict]:
    return [{"module": "specdec_core.server.nodelay"}]


def _load_jupyter_server_extension(serverapp) -> None:
    """Use :class:`NoDelayConnection` — unless the server was configured with a connection class
    of its own (e.g. a gateway's), which is then left alone."""
    settings = serverapp.web_app.settings
    current = settings.get(SETTING)
    if current is None or current is ZMQChannelsWebsocketConnection:
        settings[SETTING] = NoDelayConnection
        serverapp.log.info(LOADED)
    else:
        serverapp.log.info("specdec_core.server.nodelay: left the configured %s alone", current.__name__)

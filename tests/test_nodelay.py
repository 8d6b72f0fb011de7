"""specdec_core.server.nodelay: the Jupyter server extension that sets TCP_NODELAY on kernel WebSockets
(why: its docstring). Enabled the same way by `make lab`, Binder and the browser tests' server."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from types import SimpleNamespace

import pytest
from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection

from specdec_core.server import nodelay

ROOT = Path(__file__).resolve().parents[1]
ENABLE = ROOT / "binder" / "jupyter-server-extension.json"


def test_connect_sets_nodelay_before_the_usual_connect(monkeypatch):
    calls = []
    monkeypatch.setattr(
        ZMQChannelsWebsocketConnection, "connect", lambda self: calls.append("connect") or "f"
    )

    class NoServer(nodelay.NoDelayConnection):
        """Only connect() is exercised: a plain attribute stands in for the handler trait."""

        websocket_handler = SimpleNamespace(set_nodelay=lambda on: calls.append(("nodelay", on)))

    assert NoServer().connect() == "f"
    assert calls == [("nodelay", True), "connect"]


def _server(current):
    settings = {} if current is None else {nodelay.SETTING: current}
    return SimpleNamespace(web_app=SimpleNamespace(settings=settings), log=logging.getLogger("test"))


@pytest.mark.parametrize("current", [None, ZMQChannelsWebsocketConnection])
def test_extension_replaces_the_default_connection(current):
    app = _server(current)
    nodelay._load_jupyter_server_extension(app)
    assert app.web_app.settings[nodelay.SETTING] is nodelay.NoDelayConnection


def test_extension_leaves_another_configured_connection_alone():
    class Gateway(ZMQChannelsWebsocketConnection):
        pass

    app = _server(Gateway)
    nodelay._load_jupyter_server_extension(app)
    assert app.web_app.settings[nodelay.SETTING] is Gateway


def test_extension_is_enabled_by_make_lab_binder_and_the_browser_tests():
    enabled = json.loads(ENABLE.read_text())["ServerApp"]["jpserver_extensions"]
    assert enabled == {"specdec_core.server.nodelay": True}
    assert nodelay._jupyter_server_extension_points() == [{"module": "specdec_core.server.nodelay"}]
    name = "binder/jupyter-server-extension.json"
    assert f"cp {name} $(VENV)/etc/jupyter/jupyter_server_config.d/" in (ROOT / "Makefile").read_text()
    assert (
        f'cp {name} "${{NB_PYTHON_PREFIX}}/etc/jupyter/jupyter_server_config.d/'
        in (ROOT / "binder" / "postBuild").read_text()
    )
    assert '"binder" / "jupyter-server-extension.json"' in (ROOT / "tests/browser/labserver.py").read_text()

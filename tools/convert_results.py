"""One-off (issue 36): re-store the capstone's results (``specdec_core/results/llm.json`` and the
quick run's ``benchmarks/results/llm-quick.json``) from the schema-2 JSON to the codec's records
(schema 3), without re-measuring. Every value is read back through the codec before a file is
written; a file already at schema 3 is left alone.

    .venv/bin/python tools/convert_results.py

What moves: configurations nest as ``config`` in runs and predictions; the predictions' loose
fields sit beside their values; curves become {at: spread}; exit α becomes {temperature: α};
the feature draft's α by depth becomes {temperature: [α per depth]}; the law test's top tokens
become records; a paired ratio of one pair keeps null (no interval)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from specdec_core.measured import codec  # noqa: E402
from specdec_core.measured.capstone import Capstone  # noqa: E402

CONFIG = ("workload", "temperature", "draft", "gamma")
FILES = (ROOT / "specdec_core" / "results" / "llm.json", ROOT / "benchmarks" / "results" / "llm-quick.json")


def _keyed(d: dict) -> dict:
    """A record whose configuration fields sat beside its own: the configuration nested."""
    return {"config": {k: d[k] for k in CONFIG}, **{k: v for k, v in d.items() if k not in CONFIG}}


def _curve(c: dict) -> dict:
    pts = {str(p["at"]): {k: p[k] for k in ("median", "min", "max", "n")} for p in c["points"]}
    return {"points": pts, **{k: c[k] for k in ("source", "reps", "threads", "context")}}


def _micro(m: dict) -> dict:
    return {
        **{k: m[k] for k in ("context_tokens", "reps", "how")},
        "verify": {str(c["temperature"]): _curve(c) for c in m["verify"]},
        "draft": {c["draft"]: _curve(c) for c in m["draft"]},
        "overhead": {str(c["temperature"]): _curve(c) for c in m["overhead"]},
    }


def _calibration(c: dict) -> dict:
    def layer(e: dict) -> dict:
        by = {kind: {str(a["temperature"]): a[kind] for a in e["alpha"]} for kind in ("trained", "untrained")}
        return {
            **{k: e[k] for k in ("k", "shrink", "step_ms", "predicted_speedup")},
            "alpha_trained": by["trained"],
            "alpha_untrained": by["untrained"],
        }

    f = dict(c["feature"])
    f["alpha_by_depth_heldout"] = {str(a["temperature"]): a["alpha"] for a in f["alpha_by_depth_heldout"]}
    return {
        **c,
        "exit": {str(e["k"]): layer(e) for e in c["exit"]},
        "ngram_alpha": {str(x["discount"]): x["alpha"] for x in c["ngram_alpha"]},
        "feature": f,
    }


def _law(law: dict | None) -> dict | None:
    if law is None:
        return None
    top, rerun = law.get("top"), law.get("rerun")
    return {
        **{k: v for k, v in law.items() if k != "rerun"},
        "top": None if top is None else [dict(zip(("text", "p", "q", "broken"), t)) for t in top],
        "rerun_utc": rerun and rerun["date_utc"],
    }


def migrate(d: dict) -> dict:
    """The schema-2 object ``d`` in the schema-3 shape (plain JSON values)."""
    pr = d["predictions"]
    sweep = d.get("sweep")
    return {
        "machine": d["machine"],
        "quick": d["quick"],
        "memory": d.get("memory", []),
        "load": d.get("load") or None,
        "calibration": _calibration(d["calibration"]),
        "micro": _micro(d["micro"]),
        "break_even": d["break_even_alpha"],
        "predictions": {
            "values": [_keyed(v) for v in pr["values"]],
            "chosen": pr["chosen"],
            "teacher_forcing_alpha": pr["teacher_forcing_alpha"],
            **{k: v for k, v in pr.items() if k not in ("values", "chosen", "teacher_forcing_alpha")},
        },
        "greedy_margins": d.get("greedy_margins", []),
        "sweep": sweep,
        "runs": [_keyed(r) for r in d.get("runs", [])],
        "law": _law(d.get("law")),
        "law_history": [_law(x) for x in d.get("law_history", [])],
        "process_vm_hwm_mib": d.get("process_vm_hwm_mib"),
        "layout": d.get("layout"),
        "quantized": d.get("quantized"),
        "alone": [_keyed(r) for r in d.get("alone", [])],
        "schema": 3,
    }


def convert(path: Path) -> str:
    d = json.loads(path.read_text())
    if d.get("schema") == 3:
        return f"{path}: already schema 3"
    cap = codec.decode(Capstone, json.dumps(migrate(d)), f"{path} (migrated)")
    codec.write(cap, path)
    return f"{path}: re-stored at schema 3"


if __name__ == "__main__":
    for f in FILES:
        print(convert(f))

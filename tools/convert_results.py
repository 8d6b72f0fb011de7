"""One-off (issue 24): migrate the stored results in specdec_core/results to the typed form the
measurement layer reads (schema 2), without re-measuring. Idempotent: a file already at schema 2
is left alone.

    .venv/bin/python tools/convert_results.py

Machine records: ``blas_threads_used`` becomes ``threads``. llm.json: "T0"/"T1" keys become
float temperatures, "workload/T1/draft/γ" keys become (workload, temperature, draft, gamma)
fields, curves become lists of points {at, median, min, max, n}.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "specdec_core" / "results"


def _temp(key: str) -> float:
    assert key[0] == "T", key
    return float(key[1:])


def machine(m: dict) -> dict:
    m = dict(m)
    if "blas_threads_used" in m:
        m["threads"] = m.pop("blas_threads_used")
    m.setdefault("threads", None)
    return m


def curve(d: dict, source: str, reps=None, threads=None, context=None) -> dict:
    pts = [
        {"at": int(T), **{k: v[k] for k in ("median", "min", "max")}, "n": reps or 0} for T, v in d.items()
    ]
    pts.sort(key=lambda p: p["at"])
    return {"source": source, "reps": reps, "threads": threads, "context": context, "points": pts}


def config(key: str) -> dict:
    w, t, d, *g = key.split("/")
    return {"workload": w, "temperature": _temp(t), "draft": d, "gamma": int(g[0]) if g else 0}


def micro(mic: dict, threads) -> dict:
    reps, ctx = mic["reps"], mic["context_tokens"]
    return {
        "context_tokens": ctx,
        "reps": reps,
        "how": mic["how"],
        "verify": [
            {"temperature": _temp(t), **curve(c, f"verify at T = {_temp(t):g}", reps, threads, ctx)}
            for t, c in mic["verify_ms"].items()
        ],
        "draft": [
            {"draft": n, **curve(c, f"draft {n}", reps, threads, ctx)} for n, c in mic["draft_ms"].items()
        ],
        "overhead": [
            {"temperature": _temp(t), **curve(c, f"sampler at T = {_temp(t):g}", None, threads)}
            for t, c in mic["overhead_ms"].items()
        ],
    }


def calibration(cal: dict) -> dict:
    ea = cal["exit_alpha"]
    exits = [
        {
            "k": int(k),
            "shrink": cal["exit_shrink"][k],
            "step_ms": cal["exit_step_ms"][k],
            "predicted_speedup": cal["exit_predicted_speedup_T1"][k],
            "alpha": [
                {"temperature": _temp(t), "trained": ea[t]["trained"][k], "untrained": ea[t]["untrained"][k]}
                for t in sorted(ea)
            ],
        }
        for k in cal["exit_step_ms"]
    ]
    feat = dict(cal["feature"])
    feat["alpha_by_depth_heldout"] = [
        {"temperature": _temp(t), "alpha": a} for t, a in feat["alpha_by_depth_heldout"].items()
    ]
    keep = ("prompts", "fit_prompts", "validation_prompts", "alpha_prompts", "fit_positions")
    return {
        **{k: cal[k] for k in keep},
        "exit": exits,
        "exit_k": cal["exit_k"],
        "ngram_alpha": [
            {"discount": float(d), "alpha": a} for d, a in cal["ngram_alpha_by_discount"].items()
        ],
        "ngram_discount": cal["ngram_discount"],
        "feature": feat,
        "seconds": cal.get("seconds"),
    }


def predictions(pr: dict) -> dict:
    info = {k: v for k, v in pr.items() if k not in ("values", "chosen", "teacher_forcing_alpha_T1")}
    tf = [
        {"workload": key.split("/")[0], "temperature": _temp(key.split("/")[1]), "draft": d, "alpha": a}
        for key, by in pr["teacher_forcing_alpha_T1"].items()
        for d, a in by.items()
    ]
    chosen = [
        {"workload": key.split("/")[0], "temperature": _temp(key.split("/")[1]), **c}
        for key, c in pr["chosen"].items()
    ]
    return {
        **info,
        "values": [{**config(k), **v} for k, v in pr["values"].items()],
        "chosen": chosen,
        "teacher_forcing_alpha": tf,
    }


def law(L: dict) -> dict:
    return dict(L)


def margins(gm: dict) -> list:
    return [{"workload": w, **{k.replace("-", "_"): v for k, v in m.items()}} for w, m in gm.items()]


def llm(res: dict) -> dict:
    threads = res["machine"].get("blas_threads_used")
    sweep = dict(res["sweep"])
    return {
        "schema": 2,
        "machine": machine(res["machine"]),
        "quick": res["quick"],
        "process_vm_hwm_mib": res.get("process_vm_hwm_mib"),
        "memory": [{"name": n, **m} for n, m in res["memory"].items()],
        "load": res["load"],
        "calibration": calibration(res["calibration"]),
        "micro": micro(res["micro"], threads),
        "break_even_alpha": [
            {"temperature": _temp(t), "draft": d, "gamma": int(g), "alpha": a}
            for t, by in res["break_even_alpha"].items()
            for d, gs in by.items()
            for g, a in gs.items()
        ],
        "predictions": predictions(res["predictions"]),
        "greedy_margins": margins(res["greedy_margins"]),
        "sweep": sweep,
        "runs": res["runs"],
        "law": law(res["law"]),
        "law_history": [law(x) for x in res.get("law_history", [])],
    }


def convert(path: Path) -> bool:
    res = json.loads(path.read_text())
    if res.get("schema") == 2:
        return False
    sys.path.insert(0, str(ROOT))
    from specdec_core.measured.store import write_json

    if path.name.startswith("llm"):
        out = llm(res)
    else:
        out = {"schema": 2, **res, "machine": machine(res["machine"])}
        if path.name in ("features.json", "rounding.json"):  # both ran every timed part on 1 BLAS thread
            out["machine"]["threads"] = 1
    write_json(path, out)
    return True


if __name__ == "__main__":
    for name in sys.argv[1:] or [
        "llm.json",
        "hardware.json",
        "passcost.json",
        "features.json",
        "rounding.json",
    ]:
        p = Path(name) if "/" in name else RESULTS / name
        print(p, "converted" if convert(p) else "already at schema 2")

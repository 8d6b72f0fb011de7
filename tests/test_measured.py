"""The measurement layer (issue 24): one machine record, typed results, one reader per file."""

import json

import pytest

from specdec_core.measured import Machine, vm_hwm_mib


def test_machine_writer_round_trips_and_formats():
    m = Machine.now(threads=1)
    assert m.cores >= 1 and m.threads == 1 and m.load_avg_end is None and m.blas
    done = m.finished(2.5)
    assert done.load_avg_end is not None and done.wall_minutes == 2.5
    back = Machine.from_dict(json.loads(json.dumps(done.to_dict())))
    assert back == done
    line = done.how("benchmarks/x.py")
    assert line.startswith(m.cpu) and "1 BLAS thread," in line and "→" in line and line.endswith("x.py")
    assert "during the timed runs" in done.how(during=(1.0, 1.3))
    assert "BLAS " in Machine.now().how() and "×" in Machine.now().how()


def test_machine_refuses_bad_input():
    with pytest.raises(ValueError, match="threads"):
        Machine.now(threads=0)
    with pytest.raises(ValueError, match="cpu"):
        Machine.from_dict({"cores": 2})
    with pytest.raises(ValueError, match="load average"):
        Machine.from_dict(
            {"cpu": "x", "cores": 2, "python": "3", "platform": "p", "date_utc": "d", "load_avg_start": [1]}
        )
    with pytest.raises(ValueError, match="pid"):
        vm_hwm_mib(-1)


def test_vm_hwm_reads_this_process():
    assert vm_hwm_mib() > 1

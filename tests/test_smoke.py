def test_imports():
    import specdec_core

    assert specdec_core.acceptance_rate([0.5, 0.5], [0.5, 0.5]) == 1.0

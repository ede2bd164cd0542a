"""The script example in docs/assessing.md ("From a script") runs as printed and reports what the library
reports: the first Python block under that heading is executed (pure, no database)."""

import contextlib
import io
import re
from pathlib import Path

import numpy as np

from scoring.lib import reliability

DOC = Path(__file__).resolve().parents[2] / "docs" / "assessing.md"


def documented_example() -> str:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("#### From a script") :]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_example_runs_and_prints_every_coefficient_with_its_interval():
    namespace: dict = {}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(documented_example(), str(DOC), "exec"), namespace)  # noqa: S102 (our own docs)
    lines = printed.getvalue().splitlines()
    data = namespace["by_document"].T
    expected = reliability.all_estimates(data, [0, 1, 2, 3], replicates=1000, seed=1)
    assert len(lines) == len(expected) + len(reliability.PAIR_COEFFICIENTS)
    for line, estimate in zip(lines, expected, strict=False):
        assert line.startswith(estimate.coefficient)
        assert (
            f"{estimate.estimate:6.3f} [{estimate.ci_low:6.3f}, {estimate.ci_high:6.3f}] n={estimate.n}"
            in line
        )
    assert data.shape == (3, 6) and np.isnan(data[2, 5])
    assert any(line.startswith("Gwet's AC2 (quadratic weights)") for line in lines[len(expected) :])

"""docs/papers.md: one row per figure and table of the five papers, none blank; PPAN App. C."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from privwatch.datasets import random_joint
from privwatch.measures import mutual_information

ROOT = Path(__file__).resolve().parents[1]

#: every figure and table of each paper (seeds/000-004), by the row ids of docs/papers.md
EXPECTED = {
    "H": ["Fig. 1", "Fig. 2", "Table I", "Table II", "Table III", "Table IV"],
    "S": ["Fig. 1", "Fig. 2"],
    "R": [
        "Fig. 1",
        "Fig. 2",
        "Fig. 3",
        "Fig. 4",
        "Fig. 5",
        "Fig. 6",
        "Fig. 7",
        "Fig. 8",
        "Fig. 9",
        "Fig. 10",
        "Fig. 11",
        "Fig. 12",
        "Fig. 13",
        "Fig. 14",
        "Table I",
        "Table II",
    ],
    "P": [
        "Fig. 1",
        "Fig. 2",
        "Fig. 3",
        "Fig. 4",
        "Fig. 5",
        "Fig. 6",
        "Fig. 7",
        "Fig. 8",
        "Fig. 9",
        "Fig. 10",
        "Fig. 11",
        "Fig. 12",
        "Table I",
        "App. C",
        "App. D",
        "App. E",
        "App. F",
        "App. G",
    ],
}


def _rows() -> list[list[str]]:
    rows = []
    for line in (ROOT / "docs" / "papers.md").read_text().splitlines():
        if re.match(r"^\| (H|S|R|P|FA)\d+ \|", line):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            rows.append(cells)
    return rows


def test_no_row_is_blank_or_a_placeholder() -> None:
    rows = _rows()
    assert len(rows) > 50
    for cells in rows:
        assert len(cells) == 6, cells
        assert all(cells), f"blank cell in {cells[0]}"
        for c in cells:
            assert not re.search(r"\b[A-Z]{2,}[A-Z0-9]*_[A-Z0-9_]{2,}\b", c), (
                f"placeholder in {cells[0]}: {c}"
            )
        if not cells[0].startswith("FA"):
            assert re.match(
                r"(reproduced|differs|not reproducible|not reproduced here|measured)", cells[5]
            ), f"{cells[0]}: status {cells[5]!r}"


@pytest.mark.parametrize("prefix", sorted(EXPECTED))
def test_every_figure_and_table_has_a_row(prefix: str) -> None:
    items = " ".join(c[1] for c in _rows() if re.match(rf"{prefix}\d", c[0]))
    for name in EXPECTED[prefix]:
        assert re.search(rf"{re.escape(name)}(?!\d)", items), f"{prefix}: no row for {name}"


def test_ppan_appendix_c_side_information_inequality() -> None:
    # Z and U independent given X: I(X; Z, U) <= I(X; Z) + I(X; U)  (PPAN App. C)
    rng = np.random.default_rng(0)
    for _ in range(200):
        p_x = rng.dirichlet(np.ones(3))
        k_z = rng.dirichlet(np.ones(4), size=3)  # P(z | x)
        k_u = rng.dirichlet(np.ones(2), size=3)  # P(u | x)
        joint = p_x[:, None, None] * k_z[:, :, None] * k_u[:, None, :]  # p[x, z, u]
        i_x_zu = mutual_information(joint.reshape(3, -1))
        i_x_z = mutual_information(joint.sum(axis=2))
        i_x_u = mutual_information(joint.sum(axis=1))
        assert i_x_zu <= i_x_z + i_x_u + 1e-12
        assert i_x_zu >= max(i_x_z, i_x_u) - 1e-12
    assert mutual_information(random_joint(2, 3, rng=1)) > 0

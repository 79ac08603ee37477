"""The frontier as an SVG the page embeds: information kept (nats) against epsilon, each
point a link that chooses it, the audit's own epsilon marked."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from markupsafe import Markup

__all__ = ["frontier_svg"]

_W, _H, _PAD = 560, 260, 44


def frontier_svg(
    frontier: Sequence[dict[str, Any]], epsilon: float | None, chosen: int | None, base: str
) -> Markup:
    """The SVG text (safe to embed: every value is a number or escaped); empty without
    points."""
    points = [
        (
            i,
            float(r["epsilon"]),
            float(r.get("information_nats") or 0.0),
            float(r.get("suppressed_share") or 0.0),
        )
        for i, r in enumerate(frontier)
    ]
    if not points:
        return Markup("")
    xmax = max(p[1] for p in points) or 1.0
    ymax = max(p[2] for p in points) or 1.0

    def x(v: float) -> float:
        return _PAD + (_W - 2 * _PAD) * v / xmax

    def y(v: float) -> float:
        return _H - _PAD - (_H - 2 * _PAD) * v / ymax

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_W} {_H}" '
        f'class="frontier" role="img" aria-label="frontier: information kept against '
        f'epsilon">',
        f'<line x1="{_PAD}" y1="{_H - _PAD}" x2="{_W - _PAD}" y2="{_H - _PAD}" stroke="#444"/>',
        f'<line x1="{_PAD}" y1="{_PAD}" x2="{_PAD}" y2="{_H - _PAD}" stroke="#444"/>',
        f'<text x="{_W / 2}" y="{_H - 8}" text-anchor="middle">epsilon (nats)</text>',
        f'<text x="12" y="{_PAD - 14}">information kept (nats)</text>',
        f'<text x="{_PAD}" y="{_H - _PAD + 16}" text-anchor="middle">0</text>',
        f'<text x="{_W - _PAD}" y="{_H - _PAD + 16}" text-anchor="middle">{xmax:.3g}</text>',
        f'<text x="{_PAD - 6}" y="{_PAD + 4}" text-anchor="end">{ymax:.3g}</text>',
    ]
    line = " ".join(f"{x(e):.1f},{y(v):.1f}" for _, e, v, _ in points)
    parts.append(f'<polyline points="{line}" fill="none" stroke="#1f6feb" stroke-width="2"/>')
    if epsilon is not None:
        parts.append(
            f'<line x1="{x(float(epsilon)):.1f}" y1="{_PAD}" x2="{x(float(epsilon)):.1f}" '
            f'y2="{_H - _PAD}" stroke="#2da44e" stroke-dasharray="4 3"/>'
        )
    for i, e, v, s in points:
        r = 8 if i == chosen else 5
        title = escape(f"epsilon {e:.3g}: {v:.3g} nats kept, {100 * s:.1f} % suppressed")
        parts.append(
            f'<a href="{escape(base)}?point={i}" class="point" data-point="{i}">'
            f'<circle cx="{x(e):.1f}" cy="{y(v):.1f}" r="{r}" '
            f'fill="{"#cf222e" if i == chosen else "#1f6feb"}"><title>{title}</title>'
            f"</circle></a>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))

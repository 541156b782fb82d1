"""The clinical-range figure of a run: each quantity of summary.json's clinical_comparison as a
marker against its normal adult band (docs/figures.md). Used by run_figures.py.

The quantities have different units, so each row has its own scale: the normal range [lo, hi] is
drawn as the same band, from 0 to 1 on a shared axis x = (value - lo) / (hi - lo); the value, its
unit and the range are written beside it. Values beyond the axis (a rodent-sized heart's volume,
say) are drawn at its edge as an arrow pointing out. A value a calibration of the run set to its
target (`calibrated_by`: an input, not a prediction) is drawn hollow and marked "calibrated".
"""
from __future__ import annotations

from pathlib import Path

import style

X_MIN, X_MAX = -1.0, 2.0  # the axis, in units of the normal range's width from its lower bound


class Skip(Exception):
    """Raised when the run has no clinical_comparison (run_figures.py maps it to its own Skip)."""


def comparison_rows(summary: dict) -> list[dict]:
    rows = summary.get("clinical_comparison") if isinstance(summary, dict) else None
    if not isinstance(rows, list) or not rows:
        raise Skip("summary.json has no clinical_comparison (a run written before issue 16, or no complete beat)")
    good = []
    for r in rows:
        rng = r.get("normal_range") if isinstance(r, dict) else None
        v = r.get("value") if isinstance(r, dict) else None
        if isinstance(v, (int, float)) and isinstance(rng, list) and len(rng) == 2 and rng[1] > rng[0]:
            good.append(r)
    if not good:
        raise Skip("clinical_comparison holds no value with a normal range")
    return good


def fmt(v: float) -> str:
    if float(v).is_integer() or abs(v) >= 100:
        return f"{v:.0f}"
    return f"{v:.1f}" if abs(v) >= 1 else f"{v:.2g}"


def fig_clinical_ranges(summary: dict, out: Path) -> list[Path]:
    rows = comparison_rows(summary)
    n = len(rows)
    fig, ax = style.figure(width=style.DOUBLE_WIDTH, height=0.27 * n + 0.9)
    ax.axvspan(0.0, 1.0, color=style.PALETTE[2], alpha=0.18, lw=0, zorder=0)
    for x in (0.0, 1.0):
        ax.axvline(x, color=style.PALETTE[2], lw=0.6, zorder=1)
    for i, r in enumerate(rows):
        y = n - 1 - i
        lo, hi = float(r["normal_range"][0]), float(r["normal_range"][1])
        v = float(r["value"])
        x = (v - lo) / (hi - lo)
        inside = bool(r.get("inside", lo <= v <= hi))
        colour = style.PALETTE[0] if inside else style.PALETTE[1]
        face = "none" if r.get("calibrated_by") else colour
        if x < X_MIN or x > X_MAX:
            edge = X_MIN + 0.05 if x < X_MIN else X_MAX - 0.05
            ax.plot(edge, y, "<" if x < X_MIN else ">", ms=5, color=colour, mfc=face, zorder=3)
        else:
            ax.plot(x, y, "o" if inside else "D", ms=4.5, color=colour, mfc=face, zorder=3)
        unit = r.get("unit", "")
        note = ", calibrated" if r.get("calibrated_by") else ""
        ax.text(X_MAX + 0.08, y, f"{fmt(v)} {unit}   (normal {fmt(lo)} to {fmt(hi)}{note})", va="center", ha="left",
                fontsize=style.TICK_SIZE, color="k" if inside else style.PALETTE[1], clip_on=False)
    ax.set_yticks(range(n))
    ax.set_yticklabels([r.get("quantity", "?") for r in reversed(rows)])
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_xlim(X_MIN, X_MAX)
    ax.set_xticks([0.0, 1.0])
    ax.set_xticklabels(["lower\nlimit", "upper\nlimit"])
    ax.set_xlabel("Position in the normal adult range (each row on its own scale; arrows: beyond the axis)")
    ax.spines["left"].set_visible(False)
    ax.tick_params(axis="y", length=0)
    for y in range(n):
        ax.axhline(y, color=style.FAINT, lw=0.3, zorder=0)
    inside_n = sum(1 for r in rows if r.get("inside"))
    calibrated_n = sum(1 for r in rows if r.get("calibrated_by"))
    set_by = f" ({calibrated_n} set by calibrations, hollow)" if calibrated_n else ""
    ax.set_title(f"Against the clinic: {inside_n} of {n} quantities inside their normal range{set_by}",
                 fontsize=style.FONT_SIZE)
    # Leave room on the right for the value column.
    fig.get_layout_engine().set(rect=(0, 0, 0.74, 1))
    return style.save(fig, out, "clinical_ranges")

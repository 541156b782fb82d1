"""The AHA 17-segment bull's-eye (Cerqueira et al. 2002, Circulation 105:539) of a per-segment
value, and the rule that marks segments which lengthen instead of shortening. Used by
strain_figures.py (docs/figures.md, bullseye_peak_strain).
"""
from __future__ import annotations

import math

from matplotlib.patches import Circle, Wedge

# A segment "lengthens" when its curve rises above +LENGTHENING_THRESHOLD and never falls below
# -LENGTHENING_THRESHOLD over the beat: it has no peak shortening, so the bull's-eye shows its peak
# lengthening instead (dotted, value with a + sign).
LENGTHENING_THRESHOLD = 0.01


def segment_geometry():
    """(segment, outer radius, inner radius, angle from, angle to) of segments 1..16; 17 is the centre disc."""
    radii = [1.0, 0.75, 0.5, 0.25]
    segs = []
    for k in range(6):  # basal / mid: 60 deg sectors, segment 1 centred at 90 deg
        a0 = 60 + 60 * k
        segs.append((1 + k, radii[0], radii[1], a0, a0 + 60))
        segs.append((7 + k, radii[1], radii[2], a0, a0 + 60))
    for k in range(4):  # apical: 90 deg sectors, 13 anterior centred at 90 deg
        a0 = 45 + 90 * k
        segs.append((13 + k, radii[2], radii[3], a0, a0 + 90))
    return segs, radii[3]


def bullseye(ax, values: dict[int, float], cmap, norm, fmt="{:.0f}", scale=100.0, lengthening=None):
    """AHA 17-segment bull's-eye (Cerqueira et al. 2002): rings basal (1-6, outer), mid (7-12),
    apical (13-16), apex (17, centre); segment 1 (anterior) at the top, numbering counter-clockwise
    (2 anteroseptal upper left ... 6 anterolateral upper right), as seen from the apex.
    `lengthening`: {segment: peak lengthening} of the segments that lengthen without shortening,
    drawn white and dotted with their value signed (+)."""
    lengthening = lengthening or {}
    segs, r_apex = segment_geometry()
    for s, r_out, r_in, a0, a1 in segs:
        am = math.radians(0.5 * (a0 + a1))
        rm = 0.5 * (r_out + r_in)
        patch = Wedge((0, 0), r_out, a0, a1, width=r_out - r_in)
        _segment(ax, patch, rm * math.cos(am), rm * math.sin(am), s, values, lengthening, cmap, norm, fmt, scale)
    _segment(ax, Circle((0, 0), r_apex), 0, 0, 17, values, lengthening, cmap, norm, fmt, scale)
    ax.set_xlim(-1.05, 1.05)
    ax.set_ylim(-1.05, 1.05)
    ax.set_aspect("equal")
    ax.axis("off")


def _segment(ax, patch, x, y, s, values, lengthening, cmap, norm, fmt, scale):
    v = values.get(s, float("nan"))
    if s in lengthening:
        patch.set(facecolor="#FFFFFF", edgecolor="k", lw=0.5, hatch="....")
        ax.add_patch(patch)
        ax.text(x, y, "+" + fmt.format(scale * lengthening[s]), ha="center", va="center", fontsize=6,
                style="italic", color="k", bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none"))
        return
    finite = math.isfinite(v)
    patch.set(facecolor=cmap(norm(scale * v)) if finite else "#FFFFFF", edgecolor="k", lw=0.5,
              hatch=None if finite else "////")
    ax.add_patch(patch)
    _label(ax, x, y, v, cmap, norm, fmt, scale)


def _label(ax, x, y, v, cmap, norm, fmt, scale):
    if not math.isfinite(v):
        return
    r, g, b, _ = cmap(norm(scale * v))
    lum = 0.299 * r + 0.587 * g + 0.114 * b
    text = fmt.format(scale * v)
    if text.lstrip("-").strip("0.") == "":  # a value that rounds to zero prints "0", never "-0"
        text = text.lstrip("-")
    ax.text(x, y, text, ha="center", va="center", fontsize=6, color="k" if lum > 0.5 else "w")


def lengthening_segments(lo: dict[int, float], hi: dict[int, float]) -> dict[int, float]:
    """{segment: peak lengthening} of the segments whose curve lengthens (max > threshold) without
    shortening (min > -threshold)."""
    return {s: hi[s] for s in hi if math.isfinite(hi[s]) and hi[s] > LENGTHENING_THRESHOLD
            and math.isfinite(lo.get(s, float("nan"))) and lo[s] > -LENGTHENING_THRESHOLD}

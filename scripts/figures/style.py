"""One journal-column style for every figure of the project, and an atomic save helper.

Import this module before pyplot is used anywhere: it selects the non-interactive Agg backend
(no display needed) and sets matplotlib's rcParams once:

    import style                      # scripts/figures/style.py
    fig, ax = style.figure()          # 3.5 in wide (one journal column)
    ax.plot(t, v, color=style.PALETTE[0])
    style.save(fig, out_dir, "pv_loop_lv")   # -> out_dir/pv_loop_lv.png (600 dpi) + .pdf (vector)

Restyle everything in one place: change the constants below (widths, font sizes, palette, DPI).
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: never needs an X display
import matplotlib.pyplot as plt  # noqa: E402  (after the backend choice)
from matplotlib.colors import LinearSegmentedColormap, ListedColormap  # noqa: E402,F401

# --- sizes [inch] ---------------------------------------------------------------------------
COLUMN_WIDTH = 3.5         # single journal column (most journals: 3.3-3.5 in)
DOUBLE_WIDTH = 7.0         # full page width (two columns), for multi-panel rows
DEFAULT_HEIGHT = 2.6

# --- fonts [pt] ------------------------------------------------------------------------------
FONT_SIZE = 8
LABEL_SIZE = 8
TITLE_SIZE = 9
TICK_SIZE = 7.5
LEGEND_SIZE = 7

# --- output ----------------------------------------------------------------------------------
PNG_DPI = 600              # raster copy; the PDF is vector (fonts embedded as TrueType)

# Okabe & Ito (2008) colour-blind-safe palette, in the order lines are drawn.
PALETTE = [
    "#0072B2",  # blue
    "#D55E00",  # vermillion
    "#009E73",  # bluish green
    "#E69F00",  # orange
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#F0E442",  # yellow
    "#000000",  # black
]
GREY = "#7F7F7F"
FAINT = "#B0B0B0"

# Cardiac phases (timeseries.csv <cavity>_phase): shading colours (drawn with PHASE_ALPHA).
PHASE_COLOURS = {
    "filling": "#56B4E9",
    "isovolumic_contraction": "#E69F00",
    "ejection": "#D55E00",
    "isovolumic_relaxation": "#009E73",
}
PHASE_LABELS = {
    "filling": "filling",
    "isovolumic_contraction": "isovol. contraction",
    "ejection": "ejection",
    "isovolumic_relaxation": "isovol. relaxation",
}
PHASE_ALPHA = 0.18

# AHA rings (regional curves are coloured by ring).
RING_COLOURS = {"basal": "#0072B2", "mid": "#009E73", "apical": "#D55E00", "apex": "#CC79A7"}

# Colour maps: diverging maps for signed strains (centred on 0), sequential for magnitudes.
# RdBu_r and cividis are readable with the common colour-vision deficiencies.
DIVERGING_CMAP = "RdBu_r"
SEQUENTIAL_CMAP = "cividis"
# Peak shortening strains are negative: the darker the colour, the stronger the shortening.
PEAK_STRAIN_CMAP = "cividis"

RC = {
    "figure.figsize": (COLUMN_WIDTH, DEFAULT_HEIGHT),
    "figure.dpi": 100,
    "savefig.dpi": PNG_DPI,
    "savefig.bbox": "tight",
    "savefig.pad_inches": 0.02,
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Arial", "Helvetica", "Liberation Sans"],
    "font.size": FONT_SIZE,
    "axes.titlesize": TITLE_SIZE,
    "axes.labelsize": LABEL_SIZE,
    "xtick.labelsize": TICK_SIZE,
    "ytick.labelsize": TICK_SIZE,
    "legend.fontsize": LEGEND_SIZE,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.linewidth": 0.6,
    "axes.prop_cycle": matplotlib.cycler(color=PALETTE),
    "lines.linewidth": 1.0,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "xtick.major.size": 2.5,
    "ytick.major.size": 2.5,
    "xtick.direction": "out",
    "ytick.direction": "out",
    "pdf.fonttype": 42,          # TrueType in PDF: text stays editable (journal requirement)
    "ps.fonttype": 42,
    "mathtext.default": "regular",
    "image.cmap": SEQUENTIAL_CMAP,
}


def apply() -> None:
    """Set the project's rcParams (done on import; call again after plt.rcdefaults())."""
    matplotlib.rcParams.update(RC)


apply()


def figure(width: float = COLUMN_WIDTH, height: float = DEFAULT_HEIGHT, nrows: int = 1, ncols: int = 1,
           **kwargs):
    """plt.subplots with the column width as default and constrained layout."""
    kwargs.setdefault("layout", "constrained")
    return plt.subplots(nrows, ncols, figsize=(width, height), **kwargs)


def figures_dir(run_dir: os.PathLike | str) -> Path:
    """RUN_DIR/figures (created)."""
    d = Path(run_dir) / "figures"
    d.mkdir(parents=True, exist_ok=True)
    return d


def _atomic_savefig(fig, path: Path, fmt: str, **kwargs) -> None:
    fd, tmp = tempfile.mkstemp(prefix="." + path.stem + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            fig.savefig(f, format=fmt, **kwargs)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)  # atomic on POSIX: readers see the old file or the new one
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def save(fig, out_dir: os.PathLike | str, name: str, formats=("png", "pdf"), close: bool = True) -> list[Path]:
    """Write out_dir/name.png (PNG_DPI) and out_dir/name.pdf (vector), each atomically.

    Returns the written paths. The PNG carries its resolution in the pHYs chunk.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for fmt in formats:
        path = out / f"{name}.{fmt}"
        kwargs = {"dpi": PNG_DPI} if fmt == "png" else {}
        if fmt == "pdf":
            kwargs["metadata"] = {"Creator": "cardiac figures (matplotlib)"}
        _atomic_savefig(fig, path, fmt, **kwargs)
        written.append(path)
    if close:
        plt.close(fig)
    return written


def cmap(name: str):
    return matplotlib.colormaps[name]

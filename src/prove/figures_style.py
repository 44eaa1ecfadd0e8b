"""The paper style every figure shares: sizes, fonts, a colour-blind-safe palette, PNG + PDF output.

    from prove.figures_style import paper_style, save
    with paper_style():
        fig = make_figure()
    save(fig, "figures/name.png")          # figures/name.png (300 dpi) and figures/name.pdf
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["OKABE_ITO", "PAPER_RC", "paper_style", "save"]

OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
"""Okabe & Ito's palette: distinguishable under the common colour-vision deficiencies."""

PAPER_RC: dict[str, Any] = {
    "axes.prop_cycle": None,  # set in paper_style (cycler import is matplotlib's)
    "font.family": "DejaVu Sans",
    "font.size": 8,
    "axes.titlesize": 9,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "legend.frameon": False,
    "figure.titlesize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": False,
    "grid.alpha": 0.3,
    "lines.linewidth": 1.5,
    "image.cmap": "viridis",
    "savefig.dpi": 300,
    "savefig.bbox": "tight",
    "pdf.fonttype": 42,  # TrueType in the PDF: editable text, accepted by every venue
    "ps.fonttype": 42,
}


@contextmanager
def paper_style() -> Iterator[None]:
    """Matplotlib's rc parameters set to the paper style for the figures made inside."""
    import matplotlib

    matplotlib.use("Agg")
    from cycler import cycler

    rc = {**PAPER_RC, "axes.prop_cycle": cycler(color=list(OKABE_ITO)),
          "patch.facecolor": OKABE_ITO[0]}
    with matplotlib.rc_context(rc):
        yield


def save(fig: Any, path: str | Path) -> list[Path]:
    """``fig`` as PNG (300 dpi) and as PDF next to it; returns both paths."""
    import matplotlib.pyplot as plt

    png = Path(path).with_suffix(".png")
    png.parent.mkdir(parents=True, exist_ok=True)
    out = []
    for target in (png, png.with_suffix(".pdf")):
        fig.savefig(target, dpi=300, bbox_inches="tight")
        out.append(target)
    plt.close(fig)
    return out

"""What every probe's figures share: turning a matplotlib Figure into a file's bytes (drawn
only when a run is saved or a report written: matplotlib is imported then, never before)."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def figure_bytes(figure: Figure, file_format: str = "png") -> bytes:
    """The figure as the bytes of a .png, .svg or .pdf file."""
    buffer = io.BytesIO()
    figure.savefig(buffer, dpi=150, format=file_format)
    return buffer.getvalue()


def say_under(figure: Figure, caption: str) -> None:
    """Write `caption` under the figure, in red: what a reader must know about what it shows
    (runs not like for like, a first look at the first few concepts)."""
    if caption:
        figure.supxlabel(caption, fontsize="small", color="firebrick", wrap=True)

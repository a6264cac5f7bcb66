"""A ProbeResult as a notebook shows it: one line for `repr` (probe, models, the primary metric
per model, what was left out), and HTML for Jupyter with the printed summary, the notes and the
main figure (drawn when shown, as a PNG in the page)."""

from __future__ import annotations

import base64
import html
import io
from typing import TYPE_CHECKING, Any, Protocol

from tacit.probes.report import report_of

if TYPE_CHECKING:
    import pandas as pd

    from tacit.core.manifest import Manifest


class Shown(Protocol):
    """What a notebook shows of a result (tacit.results.result.ProbeResult)."""

    manifest: Manifest
    summary: pd.DataFrame
    prompts: pd.DataFrame
    rows_file: str
    text: str
    notes: list[str]
    figures: Any


def _probe(result: Shown) -> Any:
    """The probe that made the result, or None for one this process does not know."""
    from tacit.core.errors import TacitError
    from tacit.probes import registry

    try:
        return registry.of_run(result.manifest)
    except (TacitError, KeyError):
        return None


def headline(result: Shown) -> str:
    """`MRR: roberta-base 0.3120, gpt2 0.2010` (the primary metric at the main condition), or
    empty where the probe cannot say."""
    from tacit.core.labels import short_labels

    probe = _probe(result)
    if probe is None or result.summary.empty:
        return ""
    try:
        values = probe.headline(result.summary, result.manifest)
    except (KeyError, ValueError, TypeError):  # a summary of another shape: say nothing
        return ""
    labels = short_labels(values)
    shown = ", ".join(f"{labels[m]} {v:.4f}" for m, v in values.items())
    return f"{probe.primary.label}: {shown}" if shown else ""


def short_text(result: Shown) -> str:
    """One line: `ProbeResult(retrieve; 2 models; 82 prompt rows; MRR: ...; 3 notes)`."""
    manifest = result.manifest
    models = manifest.get("models", [])
    parts = [
        str(manifest.get("probe", "probe run")),
        f"{len(models)} model(s)",
        f"{len(result.prompts)} rows in {result.rows_file}",
    ]
    if limit := manifest.get("limit"):
        parts.append(f"limited to the first {limit.get('first')} {limit.get('of')}")
    if line := headline(result):
        parts.append(line)
    if result.notes:
        parts.append(f"{len(result.notes)} note(s)")
    return f"ProbeResult({'; '.join(parts)})"


def main_figure_png(result: Shown) -> bytes | None:
    """The result's main figure as PNG bytes: the first figure the run saves, else the first
    the probe draws from the summary (`probe plot`'s); None where there is none."""
    if result.figures:
        name, draw = next(iter(result.figures.items()))
        return draw() if name.endswith(".png") else None
    probe = _probe(result)
    if probe is None:
        return None
    figures = report_of(probe).figures([("this run", result.summary, result.manifest)])
    if not figures:
        return None
    import matplotlib.pyplot as plt

    _, figure = figures[0]
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=80, bbox_inches="tight")
    plt.close(figure)
    return buffer.getvalue()


def html_text(result: Shown) -> str:
    """The HTML Jupyter shows: the one line, the printed summary, the notes, the figure."""
    parts = [
        f"<p><b>{html.escape(short_text(result))}</b></p>",
        f"<pre>{html.escape(result.text)}</pre>",
    ]
    if result.notes:
        items = "".join(f"<li>{html.escape(note)}</li>" for note in result.notes)
        parts.append(f"<ul>{items}</ul>")
    try:
        png = main_figure_png(result)
    except Exception as err:  # a figure that cannot be drawn must not hide the table
        parts.append(
            f"<p>(no figure: {html.escape(str(err).splitlines()[0] if str(err) else '')})</p>"
        )
        png = None
    if png is not None:
        data = base64.b64encode(png).decode("ascii")
        parts.append(f'<img src="data:image/png;base64,{data}" style="max-width: 720px"/>')
    return "\n".join(parts)

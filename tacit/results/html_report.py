"""`probe report`: one self-contained HTML file to look at, for one run or several side by side.

The file needs no network to open: styles are inline and figures are PNG data URIs. It holds
each run's manifest in brief, its summary table exactly as in summary.csv (the same text in
every cell), its figures drawn by the same functions the run and `probe plot` use, what was
dropped and why, and for several runs a comparison.
"""

from __future__ import annotations

import base64
import csv
import html
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import pandas as pd

from tacit.core.errors import TacitError, first_line
from tacit.core.interface import option
from tacit.core.manifest import Manifest
from tacit.probes import registry

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 70rem; color: #222; }
h1 { margin-bottom: 0.2rem; } h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2rem; }
table { border-collapse: collapse; margin: 0.6rem 0 1.2rem; font-size: 0.85rem; }
th, td { border: 1px solid #ddd; padding: 0.2rem 0.5rem; text-align: left; }
th { background: #f2f2f2; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1rem 0; } figure img { max-width: 100%; }
figcaption { font-size: 0.85rem; color: #555; }
details { margin: 0.5rem 0 1rem; } .muted { color: #666; font-size: 0.85rem; }
.scroll { overflow-x: auto; max-width: 100%; }
"""


@dataclass
class Run:
    """A run directory as the report reads it: the manifest, summary.csv as text rows (so the
    report shows exactly what the file holds) and as a table (for the figures)."""

    path: Path
    manifest: Manifest
    summary_rows: list[list[str]]
    summary: pd.DataFrame
    extra: dict[str, list[list[str]]] = field(default_factory=dict)

    @property
    def probe(self) -> str:
        return str(self.manifest.get("probe", "?"))


def _csv_rows(path: Path) -> list[list[str]]:
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            return list(csv.reader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        raise TacitError(f"{path}: not a readable CSV table ({first_line(err)})") from None


def read_run(path: str | Path) -> Run:
    """A run directory's manifest and tables; a one-line error for anything else."""
    path = Path(path)
    manifest_file, summary_file = path / "manifest.json", path / "summary.csv"
    if not manifest_file.is_file() or not summary_file.is_file():
        raise TacitError(f"{path}: not a finished run directory (no manifest.json or summary.csv)")
    try:
        manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        raise TacitError(f"{manifest_file}: not readable JSON ({first_line(err)})") from None
    rows = _csv_rows(summary_file)
    summary = pd.read_csv(summary_file)
    tables = registry.of_run(manifest, path).extra_tables
    extra = {name: _csv_rows(path / name) for name in tables if (path / name).is_file()}
    return Run(path, cast(Manifest, manifest), rows, summary, extra)


def _png_uri(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def _table(rows: list[list[str]], css_class: str, limit: int | None = None) -> str:
    """An HTML table of text rows (the first is the header), cells as given."""
    header, *body = rows

    def cell(text: str, tag: str) -> str:
        number = tag == "td" and _is_number(text)
        return f"<{tag}{' class=num' if number else ''}>{html.escape(text)}</{tag}>"

    shown = body if limit is None else body[:limit]
    lines = [f'<div class=scroll><table class="{css_class}">',
             "<tr>" + "".join(cell(h, "th") for h in header) + "</tr>"]  # fmt: skip
    lines += ["<tr>" + "".join(cell(c, "td") for c in row) + "</tr>" for row in shown]
    lines.append("</table></div>")
    if limit is not None and len(body) > limit:
        lines.append(f'<p class="muted">first {limit} of {len(body)} rows (all in the file)</p>')
    return "\n".join(lines)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _brief(run: Run) -> list[list[str]]:
    """The manifest in brief: what ran, on what, with which options."""
    m = run.manifest
    models = "; ".join(
        f"{r.get('name')} ({r.get('kind') or r.get('mode') or 'model'}"
        + (
            f", revision {str(r.get('resolved_revision'))[:12]}"
            if r.get("resolved_revision")
            else ""
        )
        + ")"
        for r in m.get("models", [])
    )
    rows = [["probe", run.probe], ["command", str(m.get("command", ""))], ["models", models]]
    if "norms" in m:
        n = m["norms"]
        rows.append(["norms", f"{n.get('path')} ({n.get('format', 'cslb')}, "
                              f"sha256 {str(n.get('sha256', ''))[:12]})"])  # fmt: skip
    if "vocabulary" in m:
        v = m["vocabulary"]
        rows.append(["vocabulary", f"{v.get('size')} words (sha256 {str(v.get('sha256'))[:12]})"])
    for key in ("suite", "mode", "dtype", "device", "batch_size", "seed", "started", "finished"):
        if m.get(key) not in (None, ""):
            rows.append([key, str(m[key])])
    software = m.get("software", {})
    rows.append(["software", ", ".join(f"{k} {v}" for k, v in software.items() if v)])
    return [["manifest.json", "in brief"], *rows]


def _counts(run: Run) -> str:
    """What the manifest counts as left out, as a list."""
    counts = run.manifest.get("counts", {})
    items = []
    for key in ("concepts_dropped_by_reason", "prompts_by_relation"):
        if counts.get(key):
            detail = ", ".join(f"{k}: {v}" for k, v in counts[key].items())
            items.append(f"<li>{html.escape(key.replace('_', ' '))}: {html.escape(detail)}</li>")
    dropped = run.manifest.get("dropped", {})
    if dropped.get("not_sampled"):
        items.append(f"<li>items not sampled (--max-items): {dropped['not_sampled']}</li>")
    return f"<ul>{''.join(items)}</ul>" if items else ""


def run_figures(runs: Sequence[Run]) -> list[tuple[str, bytes]]:
    """(caption, PNG) for the figures of runs of one probe, drawn by the probe as the run and
    `probe plot` draw them."""
    from tacit.probes.figures import figure_bytes

    probe = registry.get(runs[0].probe)
    shown = [(run.path.name, run.summary, run.manifest) for run in runs]
    return [(caption, figure_bytes(figure, "png")) for caption, figure in probe.figures(shown)]


def _figure_html(caption: str, png: bytes) -> str:
    return (f'<figure><img alt="{html.escape(caption)}" src="{_png_uri(png)}">'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>")  # fmt: skip


def _run_section(run: Run, number: int) -> str:
    parts = [f'<section class="run" id="run{number}">',
             f"<h2>{html.escape(run.probe)}: {html.escape(str(run.path))}</h2>",
             _table(_brief(run), "manifest"), _counts(run), "<h3>Summary</h3>",
             _table(run.summary_rows, "summary")]  # fmt: skip
    parts += [_figure_html(caption, png) for caption, png in run_figures([run])]
    for name, rows in run.extra.items():
        about = registry.get(run.probe).extra_tables[name]
        what = f"{html.escape(about)} ({len(rows) - 1} rows, {name})"
        table = _table(rows, name[:-4], limit=500)
        parts.append(f"<details><summary>{what}</summary>{table}</details>")
    parts.append("</section>")
    return "\n".join(parts)


def _comparison(runs: Sequence[Run]) -> str:
    """Runs of the same probe side by side, in one figure."""
    probes = {run.probe for run in runs}
    parts = ['<section class="comparison"><h2>Side by side</h2>']
    if len(probes) > 1:
        parts.append(f"<p>These runs are of different probes ({', '.join(sorted(probes))}): "
                     "each is shown in its own section.</p>")  # fmt: skip
    else:
        parts += [_figure_html(c, png) for c, png in run_figures(runs) if c]
    parts.append("</section>")
    return "\n".join(parts)


def render(runs: Sequence[Run]) -> str:
    """The whole report as one HTML document."""
    if not runs:
        raise TacitError("no run directory given")
    title = "tacit report: " + ", ".join(run.path.name for run in runs)
    body = [f"<h1>{html.escape(title)}</h1>",
            f'<p class="muted">{len(runs)} run(s); every table is the run\'s file as written; '
            "figures drawn from its summary.csv.</p>"]  # fmt: skip
    body += [_run_section(run, n) for n, run in enumerate(runs, start=1)]
    if len(runs) > 1:
        body.append(_comparison(runs))
    return ("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
            f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")  # fmt: skip


def write_report(runs: Sequence[str | Path], out: str | Path) -> Path:
    """Read the run directories and write the report to `out` (whole or not at all)."""
    from tacit.core.files import write_atomic

    out = Path(out)
    if out.suffix.lower() not in (".html", ".htm"):
        raise TacitError(f"{option('--out')} {out}: the report is an .html file")
    text = render([read_run(run) for run in runs])
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        return write_atomic(out, text)
    except OSError as err:
        raise TacitError(f"{option('--out')} {out}: cannot write there ({err.strerror})") from None

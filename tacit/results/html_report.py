"""`probe report`: one self-contained HTML file to look at, for one run or several side by side.

The file needs no network to open: styles are inline and figures are PNG data URIs. It holds
each run's manifest in brief (what was scored over, how), its tables as the probe lays them out
and its summary.csv (numbers printed to significant digits: tacit.core.numbers; the files hold
every digit), its figures drawn by the same functions the run and `probe plot` use, and what
was dropped and why; for several runs, which are like for like (tacit.results.like_for_like), their
figures side by side per like-for-like group, and the paired comparisons of their models
(tacit.results.comparisons).
"""

from __future__ import annotations

import base64
import csv
import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tacit.core.display import Table, render
from tacit.core.errors import TacitError, first_line
from tacit.core.files import regular_file
from tacit.core.labels import short_labels
from tacit.core.numbers import format_number
from tacit.core.option_names import option
from tacit.probes.report import report_of
from tacit.results.like_for_like import Group, RunInfo, first_looks, like_for_like, read_runs

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 70rem; color: #222;
       padding: 0 1rem; }
h1 { margin-bottom: 0.2rem; font-size: 1.6rem; } h2 { border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.6rem 0 1.2rem; font-size: 0.85rem; }
th, td { border: 1px solid #ddd; padding: 0.2rem 0.5rem; text-align: left; }
th { background: #f2f2f2; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
td { overflow-wrap: break-word; } td.num { white-space: nowrap; }
table.manifest td { overflow-wrap: anywhere; }
table.manifest td:first-child { white-space: nowrap; }
figure { margin: 1rem 0; } figure img { max-width: 100%; height: auto; }
figcaption, .caption { font-size: 0.85rem; color: #555; }
details { margin: 0.5rem 0 1rem; } .muted { color: #666; font-size: 0.85rem; }
.scroll { overflow-x: auto; max-width: 100%; } .warn { color: #8a1c1c; }
"""


@dataclass
class Run:
    """A run directory as the report reads it: what the commands across runs read (RunInfo),
    summary.csv as text rows, and the probe's further tables as text rows."""

    info: RunInfo
    summary_rows: list[list[str]]
    extra: dict[str, list[list[str]]] = field(default_factory=dict)

    @property
    def probe(self) -> str:
        return self.info.probe.name


def _csv_rows(path: Path) -> list[list[str]]:
    try:
        regular_file(path, missing_ok=True)
        with open(path, newline="", encoding="utf-8") as handle:
            return list(csv.reader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        raise TacitError(f"{path}: not a readable CSV table ({first_line(err)})") from None


def read_report_runs(paths: Sequence[str | Path]) -> list[Run]:
    """Run directories with their files' text rows; a one-line error for anything else."""
    runs = []
    for info in read_runs(paths):
        assert info.path is not None
        tables = report_of(info.probe).extra_tables
        extra = {n: _csv_rows(info.path / n) for n in tables if (info.path / n).is_file()}
        runs.append(Run(info, _csv_rows(info.path / "summary.csv"), extra))
    return runs


def _png_uri(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def _file_table(rows: list[list[str]], css_class: str, limit: int | None = None) -> str:
    """A run's file as an HTML table (the first row its header), numbers as printed."""
    header, *body = rows

    def cell(text: str, tag: str) -> str:
        number = tag == "td" and _is_number(text)
        shown = format_number(_number(text)) if number and text.strip() else text
        return f"<{tag}{' class=num' if number else ''}>{html.escape(shown)}</{tag}>"

    shown = body if limit is None else body[:limit]
    lines = [
        f'<div class=scroll><table class="{css_class}">',
        "<tr>" + "".join(cell(h, "th") for h in header) + "</tr>",
    ]
    lines += ["<tr>" + "".join(cell(c, "td") for c in row) + "</tr>" for row in shown]
    lines.append("</table></div>")
    if limit is not None and len(body) > limit:
        lines.append(f'<p class="muted">first {limit} of {len(body)} rows (all in the file)</p>')
    return "\n".join(lines)


def _number(text: str) -> int | float:
    """A file's number as it was written: `32` an integer, `32.0` or `0.5` a float."""
    try:
        return int(text)
    except ValueError:
        return float(text)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _brief(run: Run) -> list[list[str]]:
    """The manifest in brief: what ran, on what, scored over what, with which options."""
    m = run.info.manifest
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
    own = report_of(run.info.probe).brief(m)
    rows += [[what, value] for what, value in own]
    scored = run.info.probe.comparable(m)
    rows += [[what, value] for what, value in scored.items() if value and what not in dict(own)]
    for key in ("dtype", "device", "batch_size", "seed", "started", "finished"):
        if m.get(key) not in (None, "") and key not in scored:
            rows.append([key, str(m[key])])
    software = m.get("software", {})
    rows.append(["software", ", ".join(f"{k} {v}" for k, v in software.items() if v)])
    return [["manifest.json", "in brief"], *rows]


def _counts(run: Run) -> str:
    """What the run left out, as its probe's report says it, as a list."""
    items = [
        f"<li>{html.escape(line)}</li>"
        for line in report_of(run.info.probe).left_out(run.info.manifest)
    ]
    return f"<ul>{''.join(items)}</ul>" if items else ""


def run_figures(runs: Sequence[Run], caption: str = "") -> list[tuple[str, bytes]]:
    """(caption, PNG) for the figures of like-for-like runs of one probe, drawn by the probe
    as the run and `probe plot` draw them; a `--limit` run's figure says it is a first look,
    in it and in its caption."""
    from tacit.probes.figures import figure_bytes

    probe = runs[0].info.probe
    shown = [(run.info.name, run.info.summary, run.info.manifest) for run in runs]
    looks = first_looks(shown)
    figures = report_of(probe).figures(shown, caption="; ".join(filter(None, [caption, looks])))
    return [
        (f"{title} ({looks})" if looks else title, figure_bytes(figure, "png"))
        for title, figure in figures
    ]


def _figure_html(caption: str, png: bytes) -> str:
    return (
        f'<figure><img alt="{html.escape(caption)}" src="{_png_uri(png)}">'
        f"<figcaption>{html.escape(caption)}</figcaption></figure>"
    )


def _probe_tables(run: Run) -> str:
    """The run's tables as its probe lays them out (`probe table` of this run alone); the
    summary itself for a probe without."""
    from tacit.results.tables import labelled

    probe = run.info.probe
    summary = labelled([run.info.summary], probe.keys)
    try:
        tables = report_of(probe).table(summary, run.info.manifest)
    except TacitError:  # a probe without a table: its summary, models by their short names
        tables = [Table(summary.drop(columns="run"))]
    full = _file_table(run.summary_rows, "summary")
    return (
        render(tables, "html") + "<details><summary>summary.csv, every column "
        f"({len(run.summary_rows) - 1} rows)</summary>{full}</details>"
    )


def _first_look(run: Run) -> list[str]:
    """A `--limit` run's warning that it is a first look, said before its numbers."""
    said = first_looks([(run.info.name, run.info.summary, run.info.manifest)])
    return [f'<p class="warn">{html.escape(said)}.</p>'] if said else []


def _run_section(run: Run, number: int) -> str:
    parts = [
        f'<section class="run" id="run{number}">',
        f"<h2>{html.escape(run.probe)}: {html.escape(run.info.name)}</h2>",
        f'<p class="muted">{html.escape(str(run.info.path))}</p>',
        *_first_look(run),
        _file_table(_brief(run), "manifest"),
        _counts(run),
        "<h3>Summary</h3>",
        _probe_tables(run),
    ]
    parts += [_figure_html(caption, png) for caption, png in run_figures([run])]
    for name, rows in run.extra.items():
        about = report_of(run.info.probe).extra_tables[name]
        what = f"{html.escape(about)} ({len(rows) - 1} rows, {name})"
        table = _file_table(rows, name[:-4], limit=500)
        parts.append(f"<details><summary>{what}</summary>{table}</details>")
    parts.append("</section>")
    return "\n".join(parts)


def _like_for_like(runs: Sequence[Run], groups: Sequence[Group], notes: Sequence[str]) -> str:
    """Which runs may stand side by side, and their figures together, group by group."""
    parts = ['<section class="comparison"><h2>Side by side</h2>']
    if notes:
        said = html.escape("; ".join(notes))
        parts.append(
            f'<p class="warn">Not like for like: {said}. Runs of different groups are '
            "shown apart, never together.</p>"
        )
    by_name = {run.info.name: run for run in runs}
    for number, group in enumerate(groups, start=1):
        parts.append(f"<h3>Group {number}: {html.escape(group.names)}</h3>")
        if group.describe():
            parts.append(f'<p class="muted">scored over: {html.escape(group.describe())}</p>')
        if len(group.runs) > 1:
            members = [by_name[info.name] for info in group.runs]
            parts += [_figure_html(c, png) for c, png in run_figures(members) if c]
    parts.append("</section>")
    return "\n".join(parts)


def _model_comparisons(runs: Sequence[Run]) -> str:
    """The paired comparisons of the runs' models, where two scored the same items."""
    from tacit.results.comparisons import compare, comparison_tables

    try:
        table = compare([run.info.path for run in runs if run.info.path is not None])
    except TacitError as err:
        return (
            '<section class="models"><h2>Model comparisons</h2>'
            f'<p class="muted">{html.escape(str(err))}</p></section>'
        )
    tables: list[Table] = comparison_tables(table)
    return f'<section class="models"><h2>Model comparisons</h2>{render(tables, "html")}</section>'


def title_of(runs: Sequence[Run]) -> str:
    """`tacit report: retrieve (bert-base-cased, roberta-base); elicit (gpt2)`."""
    names = [str(r.get("name")) for run in runs for r in run.info.manifest.get("models", [])]
    labels = short_labels(names)
    by_probe: dict[str, list[str]] = {}
    for run in runs:
        models = by_probe.setdefault(run.probe, [])
        for record in run.info.manifest.get("models", []):
            if labels[str(record.get("name"))] not in models:
                models.append(labels[str(record.get("name"))])
    return "tacit report: " + "; ".join(
        f"{probe} ({', '.join(models) or 'no model'})" for probe, models in by_probe.items()
    )


def render_report(runs: Sequence[Run]) -> str:
    """The whole report as one HTML document."""
    if not runs:
        raise TacitError("no run directory given")
    title = title_of(runs)
    body = [
        f"<h1>{html.escape(title)}</h1>",
        f'<p class="muted">{len(runs)} run(s): '
        + ", ".join(html.escape(run.info.name) for run in runs)
        + "; numbers to 3 significant digits (the files hold every digit); figures drawn "
        "from each run's summary.csv.</p>",
    ]
    if len(runs) > 1:
        groups, notes = like_for_like([run.info for run in runs])
        body.append(_like_for_like(runs, groups, notes))
        body.append(_model_comparisons(runs))
    else:
        body.append(_model_comparisons(runs) if len(runs[0].info.models) > 1 else "")
    body += [_run_section(run, n) for n, run in enumerate(runs, start=1)]
    return (
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )


def write_report(runs: Sequence[str | Path], out: str | Path) -> Path:
    """Read the run directories and write the report to `out` (whole or not at all)."""
    from tacit.core.files import write_atomic

    out = Path(out)
    if out.suffix.lower() not in (".html", ".htm"):
        raise TacitError(f"{option('--out')} {out}: the report is an .html file")
    text = render_report(read_report_runs(runs))
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        return write_atomic(out, text)
    except OSError as err:
        raise TacitError(f"{option('--out')} {out}: cannot write there ({err.strerror})") from None

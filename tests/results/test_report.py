"""`probe report`: one self-contained HTML file per set of runs, checked by parsing it (every
figure present and a real PNG, every table equal to its file) and by a real browser."""

from __future__ import annotations

import base64
import csv
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from support import fails_cleanly
from support_nli import save_nli_masked_lm, write_nope
from typer.testing import CliRunner

from tacit.cli import app

PNG = b"\x89PNG\r\n\x1a\n"


class Parsed(HTMLParser):
    """Tables (as rows of cell texts, with their class) and images of an HTML document."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[tuple[str, list[list[str]]]] = []
        self.images: list[str] = []
        self.links: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self.tables.append((attrs.get("class", ""), []))
        elif tag == "tr":
            self.tables[-1][1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "img":
            self.images.append(attrs["src"])
        elif tag in ("link", "script") or (tag == "a" and attrs.get("href", "#")[0] != "#"):
            self.links.append(attrs.get("href") or attrs.get("src") or "")

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][1][-1].append("".join(self._cell))
            self._cell = None


def parse(path: Path) -> Parsed:
    parser = Parsed()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def csv_rows(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def run(*args) -> None:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def runs(tmp_path_factory, tiny_bert, tiny_roberta, toy_norms_path):
    root = tmp_path_factory.mktemp("report-runs")
    run("retrieve", "-m", tiny_bert, "-m", tiny_roberta, "--norms", toy_norms_path,
        "--max-props", 3, "--out", root / "retrieve", "-q")  # fmt: skip
    run("retrieve", "-m", tiny_bert, "--norms", toy_norms_path, "--ablation", "ordering",
        "--max-props", 2, "--out", root / "ordering", "-q")  # fmt: skip
    run("elicit", "-m", tiny_bert, "--norms", toy_norms_path, "--prefix-ablation",
        "--out", root / "elicit", "-q")  # fmt: skip
    mlm = save_nli_masked_lm(root / "mlm")
    run("nli", "--suite", "nope", "--data", write_nope(root / "nope"), "-m", mlm,
        "--out", root / "nli", "-q")  # fmt: skip
    return root


@pytest.mark.slow
@pytest.mark.parametrize("name", ["retrieve", "ordering", "elicit", "nli"])
def test_one_run(runs, tmp_path, name):
    out = tmp_path / "report.html"
    run("report", runs / name, "--out", out)
    parsed = parse(out)
    summary = [rows for css, rows in parsed.tables if css == "summary"]
    assert summary == [csv_rows(runs / name / "summary.csv")]
    assert parsed.images, "the run's figure is missing"
    for source in parsed.images:
        assert source.startswith("data:image/png;base64,")
        assert base64.b64decode(source.split(",", 1)[1]).startswith(PNG)
    assert parsed.links == []  # nothing to fetch: it opens without a network
    manifest = dict(row for row in next(r for c, r in parsed.tables if c == "manifest")[1:])
    assert manifest["probe"] == {"ordering": "retrieve"}.get(name, name)
    if name == "retrieve":
        dropped = [rows for css, rows in parsed.tables if css == "dropped"]
        assert dropped == [csv_rows(runs / name / "dropped.csv")]


@pytest.mark.slow
def test_runs_side_by_side(runs, tmp_path):
    out = tmp_path / "report.html"
    run("report", runs / "retrieve", runs / "ordering", "--out", out)
    parsed = parse(out)
    summaries = [rows for css, rows in parsed.tables if css == "summary"]
    assert summaries == [csv_rows(runs / n / "summary.csv") for n in ("retrieve", "ordering")]
    # one per run, and side by side one per figure the runs call for (by model; by ordering)
    assert len(parsed.images) == 4
    assert '<section class="comparison">' in out.read_text()


def test_bad_input(tmp_path):
    fails_cleanly(["report", tmp_path, "--out", tmp_path / "r.html"], "not a finished run")
    fails_cleanly(["report", tmp_path, "--out", tmp_path / "r.pdf"], "the report is an .html file")


@pytest.mark.slow
@pytest.mark.skipif(
    shutil.which("chromium") is None,
    reason="Chromium is not installed (Debian: apt-get install chromium); the HTML checks above "
    "still run",
)
def test_a_real_browser_renders_it(runs, tmp_path):
    report = tmp_path / "report.html"
    run("report", runs / "retrieve", runs / "elicit", "--out", report)
    shot = tmp_path / "shot.png"
    done = subprocess.run(
        ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}",
         "--window-size=1280,2400", f"--screenshot={shot}", report.as_uri()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert shot.is_file(), done.stderr[-2000:]
    from PIL import Image

    image = Image.open(shot).convert("L")
    colours = image.getcolors(maxcolors=1 << 16) or []
    assert image.size == (1280, 2400) and len(colours) > 20  # text and figures, not a blank page

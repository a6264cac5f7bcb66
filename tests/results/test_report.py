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
from tacit.core.numbers import format_number

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


def shown(rows: list[list[str]]) -> list[list[str]]:
    """A file's rows as the report prints them: numbers to 3 significant digits."""

    def cell(text: str) -> str:
        try:
            return format_number(int(text))
        except ValueError:
            try:
                return format_number(float(text))
            except ValueError:
                return text

    header, *body = rows
    return [header, *([cell(c) for c in row] for row in body)]


def run(*args) -> None:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def runs(tmp_path_factory, tiny_bert, tiny_roberta, toy_norms_path):
    root = tmp_path_factory.mktemp("report-runs")
    run(
        "retrieve",
        "-m",
        tiny_bert,
        "-m",
        tiny_roberta,
        "--norms",
        toy_norms_path,
        "--max-props",
        3,
        "--out",
        root / "retrieve",
        "-q",
    )
    one_vocabulary = ["--vocab-model", tiny_bert, "--vocab-model", tiny_roberta]  # like for like
    run(
        "retrieve",
        "-m",
        tiny_bert,
        "--norms",
        toy_norms_path,
        "--ablation",
        "ordering",
        "--max-props",
        2,
        "--out",
        root / "ordering",
        "-q",
        *one_vocabulary,
    )
    run(
        "elicit",
        "-m",
        tiny_bert,
        "--norms",
        toy_norms_path,
        "--prefix-ablation",
        "--out",
        root / "elicit",
        "-q",
    )
    mlm = save_nli_masked_lm(root / "mlm")
    run(
        "nli",
        "--suite",
        "nope",
        "--data",
        write_nope(root / "nope"),
        "-m",
        mlm,
        "--out",
        root / "nli",
        "-q",
    )
    return root


@pytest.mark.slow
@pytest.mark.parametrize("name", ["retrieve", "ordering", "elicit", "nli"])
def test_one_run(runs, tmp_path, name):
    out = tmp_path / "report.html"
    run("report", runs / name, "--out", out)
    parsed = parse(out)
    summary = [rows for css, rows in parsed.tables if css == "summary"]
    assert summary == [shown(csv_rows(runs / name / "summary.csv"))]  # not 5.087604e-05
    assert parsed.images, "the run's figure is missing"
    for source in parsed.images:
        assert source.startswith("data:image/png;base64,")
        assert base64.b64decode(source.split(",", 1)[1]).startswith(PNG)
    assert parsed.links == []  # nothing to fetch: it opens without a network
    manifest = dict(row for row in next(r for c, r in parsed.tables if c == "manifest")[1:])
    assert manifest["probe"] == {"ordering": "retrieve"}.get(name, name)
    if name == "retrieve":
        dropped = [rows for css, rows in parsed.tables if css == "dropped"]
        assert dropped == [shown(csv_rows(runs / name / "dropped.csv"))]
        brief = dict(row for row in next(r for c, r in parsed.tables if c == "manifest")[1:])
        assert brief["vocabulary"].endswith(")") and "words" in brief["vocabulary"]


@pytest.mark.slow
def test_runs_side_by_side(runs, tmp_path):
    out = tmp_path / "report.html"
    run("report", runs / "retrieve", runs / "ordering", "--out", out)
    parsed = parse(out)
    summaries = [rows for css, rows in parsed.tables if css == "summary"]
    assert summaries == [
        shown(csv_rows(runs / n / "summary.csv")) for n in ("retrieve", "ordering")
    ]
    # one per run, and side by side one per figure the runs call for (by model; by ordering)
    assert len(parsed.images) == 4
    text = out.read_text()
    assert '<section class="comparison">' in text and "Not like for like" not in text
    # the first run's two models, compared (the ablation shows another number of properties)
    assert '<section class="models">' in text and "A - B [95% CI]" in text


@pytest.mark.slow
def test_runs_not_like_for_like_are_shown_apart(runs, tmp_path, tiny_bert, toy_norms_path):
    run(
        "retrieve",
        "-m",
        tiny_bert,
        "--norms",
        toy_norms_path,
        "--max-props",
        2,
        "--candidates",
        "concepts",
        "--out",
        tmp_path / "spans",
        "-q",
    )
    out = tmp_path / "report.html"
    run("report", runs / "retrieve", tmp_path / "spans", "--out", out)
    text = out.read_text()
    assert "Not like for like" in text and "the runs rank among different things" in text
    assert len(parse(out).images) == 2  # each run's own; none drawn together
    assert "span scoring</td><td>l2r" in text  # a span run says so in its brief
    assert "normalisation</td><td>sum" in text


def test_bad_input(tmp_path):
    fails_cleanly(["report", tmp_path, "--out", tmp_path / "r.html"], "not a finished run")
    fails_cleanly(["report", tmp_path, "--out", tmp_path / "r.pdf"], "the report is an .html file")


MEASURE = """<script>window.addEventListener("load", () => {
  document.body.setAttribute("data-measure", JSON.stringify({
    view: window.innerWidth, page: document.documentElement.scrollWidth,
    images: [...document.images].map(i => [i.naturalWidth, i.getBoundingClientRect().width])}));
});</script></body>"""
SMALLEST_FONT_PX = 8.33 * 150 / 72  # matplotlib's "small" (8.33 pt) at the figures' 150 dpi
READABLE_PX = 9  # the least text height, in CSS pixels, read without zooming


def chromium(*args, profile: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.mark.browser
@pytest.mark.skipif(
    shutil.which("chromium") is None,
    reason="Chromium is not installed (Debian: apt-get install chromium); the HTML checks above "
    "still run",
)
def test_four_runs_read_at_1400_px_in_a_real_browser(runs, tmp_path):
    """A side-by-side figure of 4005 px shrunk to the page made its text unreadable: every
    figure of a report of four runs, as Chromium lays the page out 1,400 px wide, shows its
    smallest text at 9 px or more, and nothing is wider than the page."""
    import json
    import re

    report = tmp_path / "report.html"
    names = ("retrieve", "ordering", "elicit", "nli")
    run("report", *(runs / n for n in names), "--out", report)
    text = report.read_text()
    title = re.search(r"<h1>(.*?)</h1>", text)[1]
    assert (
        title
        == "tacit report: retrieve (tiny-bert0, tiny-roberta0); elicit (tiny-bert0); nli (mlm)"
    )
    measured = tmp_path / "measured.html"
    measured.write_text(text.replace("</body>", MEASURE))
    done = chromium(
        "--window-size=1400,1000",
        "--virtual-time-budget=20000",
        "--dump-dom",
        measured.as_uri(),
        profile=tmp_path / "profile",
    )
    found = re.search(r'data-measure="([^"]*)"', done.stdout)
    assert found, done.stderr[-2000:]
    layout = json.loads(found[1].replace("&quot;", '"'))
    assert layout["view"] == 1400 and layout["page"] <= layout["view"]  # no sideways scrolling
    assert len(layout["images"]) == 6  # a figure per run, two side by side (the retrieval runs)
    for natural, rendered in layout["images"]:
        assert 0 < rendered <= layout["view"]
        assert SMALLEST_FONT_PX * rendered / natural >= READABLE_PX, (natural, rendered)
    shot = tmp_path / "shot.png"
    chromium(
        "--window-size=1400,2400",
        f"--screenshot={shot}",
        report.as_uri(),
        profile=tmp_path / "profile",
    )
    from PIL import Image

    image = Image.open(shot).convert("L")
    colours = image.getcolors(maxcolors=1 << 16) or []
    assert image.size == (1400, 2400) and len(colours) > 20  # text and figures, not a blank page


BROKEN = """<script>window.addEventListener("load", () => {
  const lines = node => {
    const range = document.createRange(); range.selectNodeContents(node);
    return new Set([...range.getClientRects()].map(r => Math.round(r.top))).size; };
  const words = [];
  for (const cell of document.querySelectorAll("table:not(.manifest) td")) {
    const text = cell.firstChild;
    if (!text || text.nodeType !== Node.TEXT_NODE) continue;
    let last = null;  // a line break between two letters or digits: inside a word
    for (let i = 0; i < text.data.length; i++) {
      const range = document.createRange(); range.setStart(text, i); range.setEnd(text, i + 1);
      const top = Math.round((range.getClientRects()[0] || {top: last}).top);
      const inside = i > 0 && /[\\p{L}\\p{N}]/u.test(text.data[i - 1])
        && /[\\p{L}\\p{N}]/u.test(text.data[i]);
      if (inside && last !== null && top > last) words.push(text.data);
      last = top;
    }
  }
  const view = window.innerWidth;
  document.body.setAttribute("data-measure", JSON.stringify({
    view, page: document.documentElement.scrollWidth,
    numbers: [...document.querySelectorAll("td.num")].filter(td => lines(td) > 1)
      .map(td => td.textContent),
    words,
    images: [...document.images].map(i => i.getBoundingClientRect().right)}));
});</script></body>"""


@pytest.mark.browser
@pytest.mark.skipif(
    shutil.which("chromium") is None,
    reason="Chromium is not installed (Debian: apt-get install chromium); the HTML checks above "
    "still run",
)
def test_at_800_px_no_number_or_word_is_broken(runs, tmp_path):
    """At 800 px the report broke numbers across lines (`0.087` over `9`, as summary.csv's
    many columns squeezed into the page) and words (`decre` over `asing`): numbers never
    wrap, words wrap only where a line may break (a space, after a hyphen or a slash; a wide
    table scrolls in its box), and the page and its figures fit the window."""
    import json
    import re

    report = tmp_path / "report.html"
    run("report", *(runs / n for n in ("retrieve", "elicit", "nli")), "--out", report)
    text = report.read_text().replace("<details>", "<details open>")  # every table shown
    measured = tmp_path / "measured.html"
    measured.write_text(text.replace("</body>", BROKEN))
    done = chromium(
        "--window-size=800,1000",
        "--virtual-time-budget=20000",
        "--dump-dom",
        measured.as_uri(),
        profile=tmp_path / "profile",
    )
    found = re.search(r'data-measure="([^"]*)"', done.stdout)
    assert found, done.stderr[-2000:]
    layout = json.loads(found[1].replace("&quot;", '"'))
    assert layout["view"] == 800 and layout["page"] <= layout["view"]
    assert layout["numbers"] == [] and layout["words"] == []
    assert layout["images"] and max(layout["images"]) <= layout["view"]

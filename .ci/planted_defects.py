"""Planted defects: proof that the test suite still catches what it should.

Each defect below is a small, wrong edit of tacit's code, of the kind a change could slip in
(an off-by-one in a rank, a span score missing its last token, the text after the blank dropped
in a causal LM's vocabulary mode, ...). For each, the script copies the repository (the files
git tracks, as they are in the working tree), applies the one edit to the copy, and runs the
test suite there; the defect must make it fail. A defect the suite lets through is a hole in
the tests, and the script exits 1 naming it.

The tests that should catch a defect run first (`first`), the whole suite only if they do not
(then with -x: stopped at the first failure), so a run of every defect takes minutes, not hours.

    python .ci/planted_defects.py             # every defect
    python .ci/planted_defects.py --list      # what they are
    python .ci/planted_defects.py rank-off-by-one tie-by-index   # some of them
    python .ci/planted_defects.py --whole     # every defect against the whole suite, -x

An edit whose text is no longer in the code (the code moved) is an error, not a pass: mend the
defect's `old` text (docs/development.md, planted defects).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Defect:
    """One wrong edit: in `path`, the text `old` (found exactly once) becomes `new`; `first`:
    the tests that should catch it, run before the whole suite."""

    name: str
    what: str
    path: str
    old: str
    new: str
    first: tuple[str, ...]


DEFECTS = (
    Defect(
        "rank-off-by-one",
        "ranks count from 0: the candidates scored higher, not 1 + them",
        "tacit/ranking/ties.py",
        "out[:, column] = 1 + ((scores > score) | ((scores == score) & (every < at))).sum(dim=1)",
        "out[:, column] = ((scores > score) | ((scores == score) & (every < at))).sum(dim=1)",
        ("tests/engine/test_ranks.py", "tests/models/test_scorer.py"),
    ),
    Defect(
        "tie-by-index",
        "equal scores ordered by the later position first, not the earlier",
        "tacit/ranking/ties.py",
        "out[:, column] = 1 + ((scores > score) | ((scores == score) & (every < at))).sum(dim=1)",
        "out[:, column] = 1 + ((scores > score) | ((scores == score) & (every > at))).sum(dim=1)",
        ("tests/engine/test_ranks.py",),
    ),
    Defect(
        "span-without-last-token",
        "a causal LM's span score misses its last token's log-probability",
        "tacit/models/causal.py",
        "span[t, s] = lp[pair.in_span].sum()",
        "span[t, s] = lp[pair.in_span][:-1].sum()",
        ("tests/models/test_spans.py", "tests/models/test_causal.py"),
    ),
    Defect(
        "suffix-dropped",
        "a causal LM's vocabulary mode scores a word's first token only, not the text after it",
        "tacit/models/causal_words.py",
        "out[i] = result[at, : len(rests[i])].sum()",
        "out[i] = result[at, :1].sum()",
        ("tests/models/test_causal_vocab.py", "tests/models/test_causal.py"),
    ),
    Defect(
        "ap-strict",
        "average precision over the vocabulary counts only the words scored above a gold, not "
        "those tied with it",
        "tacit/ranking/vocabulary.py",
        "at_or_above = scores.unsqueeze(1) >= gold_scores.unsqueeze(2)",
        "at_or_above = scores.unsqueeze(1) > gold_scores.unsqueeze(2)",
        ("tests/probes/test_elicit.py", "tests/models/test_causal_vocab.py"),
    ),
    Defect(
        "mean-of-n-plus-one",
        "`--normalize mean` divides a span's log-probability by one token too many",
        "tacit/ranking/spans.py",
        "return raw.span / raw.n_tokens",
        "return raw.span / (raw.n_tokens + 1)",
        ("tests/probes/test_candidates.py", "tests/cli/test_golden.py"),
    ),
    Defect(
        "pmi-baseline-added",
        "`--normalize pmi` adds the property-free baseline instead of subtracting it",
        "tacit/ranking/spans.py",
        "return whole(raw) - baselines",
        "return whole(raw) + baselines",
        ("tests/probes/test_candidates.py", "tests/cli/test_golden.py"),
    ),
    Defect(
        "ensemble-mean",
        "the paraphrases' ensemble over the vocabulary divides by one template too many",
        "tacit/ranking/vocabulary.py",
        "mean = self.sums / self.counts.unsqueeze(1)",
        "mean = self.sums / (self.counts.unsqueeze(1) + 1)",
        ("tests/probes/test_paraphrase.py", "tests/cli/test_golden.py"),
    ),
    Defect(
        "lost-dropped-concept",
        "a concept left out of retrieval is not counted among the dropped ones",
        "tacit/probes/retrieve/prompts.py",
        'dropped = pd.DataFrame([(c, why) for c, why in reasons if why], columns=["concept", '
        '"reason"])',
        'dropped = pd.DataFrame([(c, why) for c, why in reasons if why][1:], columns=["concept", '
        '"reason"])',
        ("tests/probes/test_retrieve.py", "tests/cli/test_golden.py"),
    ),
    Defect(
        "resume-skips-a-chunk",
        "a resumed run leaves its last chunk unscored (and its rows out)",
        "tacit/engine/runner.py",
        "                    if scored[c] is None:\n",
        "                    if scored[c] is None and not (done and c == len(chunks) - 1):\n",
        ("tests/engine/test_run_costs.py", "tests/engine/test_faults_runs.py"),
    ),
    Defect(
        "reciprocal-rank",
        "the reciprocal rank of rank r is 1 / (r + 1)",
        "tacit/core/metrics.py",
        "return 1.0 / ranks",
        "return 1.0 / (ranks + 1)",
        ("tacit/core/metrics.py", "tests/probes/test_retrieve.py"),
    ),
    Defect(
        "ap-ties-not-together",
        "average precision over candidate spans counts a tied candidate as ranked below a gold",
        "tacit/core/metrics.py",
        "at_least = (scores[None, :] >= gold[:, None]).sum(axis=1)",
        "at_least = (scores[None, :] > gold[:, None]).sum(axis=1) + 1",
        ("tacit/core/metrics.py", "tests/probes/test_elicit.py"),
    ),
    Defect(
        "settled-at-run-threads",
        "the tie rule's side-by-side passes run at the run's threads and batch size, not each "
        "a prompt alone on one thread (the canonical scores)",
        "tacit/ranking/vocabulary.py",
        "with one_at_a_time(self.scorer), ThreadPoolExecutor(workers) as pool:",
        "with ThreadPoolExecutor(workers) as pool:",
        ("tests/engine/test_ranks.py",),
    ),
    Defect(
        "padded-to-the-batch",
        "a masked LM's batch-invariant batches are padded to their longest text, not to the "
        "width each text has alone too",
        "tacit/models/masked.py",
        "width = lengths[indices[0]] if tiled else None",
        "width = None",
        ("tests/engine/test_ranks.py",),
    ),
    Defect(
        "manifest-key-undeclared",
        "an nli run writes `suite` in its manifest, but its probe no longer declares it "
        "(NLIManifest)",
        "tacit/probes/nli/options.py",
        "    suite: str\n",
        "",
        ("tests/cli/test_golden.py",),
    ),
)


def tracked_copy(into: Path) -> None:
    """The files git tracks, as they are in the working tree (edits not yet committed too)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def plant(copy: Path, defect: Defect) -> None:
    path = copy / defect.path
    text = path.read_text()
    found = text.count(defect.old)
    if found != 1:
        raise SystemExit(
            f"{defect.name}: {defect.path} holds its text {found} times, not once: the code "
            "moved; mend the defect (.ci/planted_defects.py)"
        )
    path.write_text(text.replace(defect.old, defect.new))


def suite(copy: Path, tests: list[str], workers: str) -> tuple[bool, float, str]:
    """Run the tests in the copy (tacit imported from it); whether they failed, how long it
    took, and the last lines said."""
    environment = {**os.environ, "PYTHONPATH": str(copy), "TACIT_CI": ""}
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider"]
    command += ["-n", workers] if workers != "0" else []
    start = time.perf_counter()
    done = subprocess.run(
        [*command, *tests], cwd=copy, env=environment, capture_output=True, text=True
    )
    said = (done.stdout + done.stderr).strip().splitlines()
    # pytest-xdist stops a run at its first failure as an interruption: exit 2, `N failed`
    stopped = done.returncode == 2 and bool(said) and " failed" in said[-1]
    if done.returncode not in (0, 1) and not stopped:  # an error collecting or running pytest
        raise SystemExit(f"pytest could not run in {copy}: {' / '.join(said[-3:])}")
    return done.returncode == 1 or stopped, time.perf_counter() - start, said[-1] if said else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="the defects to plant (default: every one)")
    parser.add_argument("--list", action="store_true", help="list the defects and stop")
    parser.add_argument(
        "--whole", action="store_true", help="run the whole suite (-x) for each, not its tests"
    )
    parser.add_argument("-n", "--workers", default="auto", help="pytest-xdist workers (0: none)")
    args = parser.parse_args()
    if args.list:
        for defect in DEFECTS:
            print(f"{defect.name}: {defect.what} ({defect.path})")
        return 0
    known = {d.name: d for d in DEFECTS}
    unknown = [n for n in args.names if n not in known]
    if unknown:
        raise SystemExit(f"no such defect: {', '.join(unknown)} (--list lists them)")
    chosen = [known[n] for n in args.names] or list(DEFECTS)
    shared = os.environ.get("TACIT_SHARED_DATA", str(REPO.parent / "shared" / "data"))
    os.environ["TACIT_SHARED_DATA"] = shared  # the copy lives elsewhere: ../shared is not beside
    missed = []
    for defect in chosen:
        with tempfile.TemporaryDirectory(prefix=f"defect-{defect.name}-") as folder:
            copy = Path(folder)
            tracked_copy(copy)
            plant(copy, defect)
            caught, seconds, said = False, 0.0, ""
            if not args.whole:
                caught, seconds, said = suite(copy, list(defect.first), args.workers)
            if not caught:
                caught, more, said = suite(copy, [], args.workers)
                seconds += more
        verdict = "caught" if caught else "MISSED"
        print(f"{verdict:6} {defect.name} ({seconds:.0f} s): {said}", flush=True)
        if not caught:
            missed.append(defect.name)
    if missed:
        print(f"the suite let {len(missed)} planted defect(s) through: {', '.join(missed)}")
        return 1
    print(f"every planted defect was caught ({len(chosen)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

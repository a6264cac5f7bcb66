"""The elicitation figure says what it shows: its legend and title apart, each bar's chance
level drawn, a random-weight control told apart and seen even where it scores 0."""

from __future__ import annotations

import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg

from tacit.probes.elicit.figures import elicitation_figure

MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct,label=SmolLM2 with a label long enough to crowd"
CONTROL = f"{MODEL} (random weights, seed 0)"
RELATIONS = ["is", "has", "made of", "all"]


def _summary(control_value: float) -> pd.DataFrame:
    rows = []
    for model, value in [(MODEL, 0.31), (CONTROL, control_value)]:
        for number, relation in enumerate(RELATIONS):
            rows.append(
                {
                    "model": model,
                    "relation": relation,
                    "prefix": True,
                    "map_vocab": value,
                    "map_vocab_ci_low": max(0.0, value - 0.05),
                    "map_vocab_ci_high": value + 0.05 if value else 0.0,
                    "map_vocab_chance": 0.01 * (number + 1),
                }
            )
    return pd.DataFrame(rows)


def test_the_legend_covers_no_title_and_chance_is_drawn():
    figure = elicitation_figure([("run", _summary(0.12), {})])
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    axis = figure.axes[0]
    legend = figure.legends[0].get_window_extent(renderer)
    title = axis.title.get_window_extent(renderer)
    assert not legend.overlaps(title)
    assert not legend.overlaps(axis.get_window_extent(renderer))
    names = [text.get_text() for text in figure.legends[0].get_texts()]
    assert names[0] == "chance" and len(names) == 3
    dashes = [s for c in axis.collections if c.get_gid() == "chance" for s in c.get_segments()]
    heights = sorted({round(float(s[0][1]), 6) for s in dashes})
    assert heights == [0.01, 0.02, 0.03, 0.04]  # one per relation, at the summary's chance
    assert len(dashes) == 2 * len(RELATIONS)  # a dash over every bar


def test_a_control_is_hatched_and_a_zero_bar_says_its_value():
    figure = elicitation_figure([("run", _summary(0.0), {})])
    axis = figure.axes[0]
    bars = [patch for container in axis.containers for patch in getattr(container, "patches", [])]
    hatched = [bar for bar in bars if bar.get_hatch()]
    assert len(hatched) == len(RELATIONS) and all(bar.get_height() == 0 for bar in hatched)
    written = [text.get_text() for text in axis.texts]
    assert written == ["0"] * len(RELATIONS)  # the control's bars, too low to be seen


def test_bars_tall_enough_to_see_carry_no_number():
    figure = elicitation_figure([("run", _summary(0.12), {})])
    assert len(figure.axes[0].texts) == 0

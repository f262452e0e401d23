"""A test that lacks a service or tool skips on a developer's machine and fails under CI,
whose ``.ci/run`` provides every one: CI never passes with part of the matrix skipped."""

from __future__ import annotations

import pytest

from tests.support import unavailable


def test_a_missing_service_skips_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no Redis here"):
        unavailable("no Redis here")


def test_a_missing_service_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"no Redis here \(CI=true"):
        unavailable("no Redis here")

"""The torch thread cap of CPU fits (issue #41 item 7): ``PRIVWATCH_THREADS`` wins, otherwise
at most the free cores; the caller's thread count is restored."""

from __future__ import annotations

import pytest

from privwatch._torch import cpu_threads, fit_threads, torch


def test_the_environment_sets_the_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRIVWATCH_THREADS", "1")
    assert fit_threads() == 1


def test_the_cap_is_within_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PRIVWATCH_THREADS", raising=False)
    assert 1 <= fit_threads() <= max(1, torch.get_num_threads(), 64)


def test_a_fit_restores_the_callers_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRIVWATCH_THREADS", "1")
    before = torch.get_num_threads()
    with cpu_threads("cpu") as n:
        assert n == 1 and torch.get_num_threads() == 1
    assert torch.get_num_threads() == before

"""The held-out model fitted in the background while the searches run (issue #42 item 2):
the same figures as fitted when the check asks, and one BLAS thread held across threads."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

from privwatch.release.heldout import _model
from tests.release._cases import assert_same_fits, fold_table


def _blas_threads() -> list[int]:
    return [i["num_threads"] for i in _model._blas().select(user_api="blas").info()]


def test_prefetched_values_and_draws_are_those_fitted_on_demand() -> None:
    table = fold_table(np.random.default_rng(3))
    wanted = [(c, float(p)) for c, p in enumerate(table.total().sum(0) / table.total().sum())]
    plain = _model.HeldOutModel(table, np.eye(3))
    with _model.one_blas_thread():
        asked = [(vm, plain.draws(vm, 20)) for vm in plain.values(wanted)]
    early = _model.HeldOutModel(table, np.eye(3))
    early.prefetch(wanted, 20)
    assert early._pending  # fitting in the background
    with _model.one_blas_thread():
        ahead = [(vm, early.draws(vm, 20)) for vm in early.values(wanted)]
    assert not early._pending
    assert_same_fits(asked, ahead)


def test_one_blas_thread_is_held_while_any_thread_is_inside() -> None:
    inside, leave = threading.Event(), threading.Event()

    def fit() -> None:
        with _model.one_blas_thread():
            inside.set()
            leave.wait(10)

    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        if 2 not in before:
            pytest.skip("BLAS runs on one thread here: nothing to hold")
        worker = threading.Thread(target=fit)
        worker.start()
        assert inside.wait(10)
        with _model.one_blas_thread():  # a check entering and leaving meanwhile
            assert set(_blas_threads()) <= {1}
        assert set(_blas_threads()) <= {1}  # still held for the worker
        leave.set()
        worker.join()
        assert _blas_threads() == before  # the last to leave restored the limits
        with _model.one_blas_thread():  # and another thread can set them again
            assert set(_blas_threads()) <= {1}
        assert _blas_threads() == before

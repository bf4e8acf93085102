"""`make pytest` keeps the tests of one xdist_group on one worker, one after another.

The local model server, the browser and the torch trainings rely on it (tests/conftest.py).
pytest-xdist names a test's group by a suffix on its node id; when a pytest release stopped
honouring that (9.2), every group was spread over the workers without any test failing.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.xdist_group("probe")


def test_a_grouped_test_carries_its_group_under_loadgroup(request: pytest.FixtureRequest) -> None:
    if not getattr(request.config.option, "loadgroup", False):  # set on xdist's workers
        pytest.skip("not run with --dist loadgroup (make pytest runs it so)")
    assert request.node.nodeid.endswith("@probe"), request.node.nodeid

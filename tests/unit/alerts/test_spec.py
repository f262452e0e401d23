"""Validation of alert fields: a wrong shape is named with what is allowed."""

from __future__ import annotations

import pytest

from limelight.alerts.destinations import DestinationPolicy
from limelight.alerts.spec import validate_alert
from limelight.errors import BadRequest


def test_a_threshold_that_is_not_an_object_is_told_its_shape() -> None:
    with pytest.raises(BadRequest) as caught:
        validate_alert({"threshold": 500}, DestinationPolicy())
    assert caught.value.errors == [
        {
            "field": "threshold",
            "message": 'must be an object, e.g. {"operation": ">", "value": 500}',
        }
    ]

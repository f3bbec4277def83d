"""TrainResult.steps_per_second_per_device: the last record's, per device-second."""

import math

from purejaxdrl.training.result import TrainResult
from tests.helpers import bare_result


def _result(steps_per_second: float, history: list) -> TrainResult:
    return bare_result(
        steps_per_second=steps_per_second, num_devices=2, history=history
    )


def test_result_per_device_speed_is_the_last_records_not_sps_over_devices():
    # A run resumed on 2 devices after 10 s on 1: 4,096 steps over 10 + 2 x 5
    # device-seconds is 204.8 per device-second, not its 273.1 steps/s over 2.
    history = [
        {"steps_per_second": 300.0, "steps_per_second_per_device": 300.0},
        {"steps_per_second": 4096 / 15, "steps_per_second_per_device": 4096 / 20},
    ]
    assert _result(4096 / 15, history).steps_per_second_per_device == 204.8


def test_result_per_device_speed_is_nan_without_updates():
    record = {"steps_per_second": 1.0, "steps_per_second_per_device": 1.0}
    assert math.isnan(_result(math.nan, [record]).steps_per_second_per_device)
    assert math.isnan(_result(1.0, []).steps_per_second_per_device)

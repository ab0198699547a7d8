"""The widget test helper sees a demo whose callback raises."""

import ipywidgets
import pytest
from widget_support import set_and_run


def demo(fail_at):
    def show(n):
        if n == fail_at:
            raise ValueError("boom")
        return n * n
    return ipywidgets.interactive(show, n=ipywidgets.IntSlider(min=0, max=5, value=1))


def test_a_working_move_returns_its_result(caplog):
    assert set_and_run(demo(fail_at=4), caplog, n=3) == 9


def test_a_raising_callback_fails_the_test(caplog):
    widget = demo(fail_at=4)
    set_and_run(widget, caplog, n=2)  # a good move first: its result must not hide the failure
    with pytest.raises(AssertionError, match="Exception in interact callback"):
        set_and_run(widget, caplog, n=4)

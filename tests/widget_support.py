"""Driving an ipywidgets ``interactive`` demo in plain pytest."""

import logging


def set_and_run(widget, caplog, **values):
    """Set sliders by description, rerun the callback, and return its result.

    Outside a kernel an exception in the callback is logged, not raised: fail on that log line.
    """
    sliders = {child.description: child for child in widget.children[:-1]}
    with caplog.at_level(logging.ERROR):
        for name, value in values.items():
            sliders[name].value = value
        widget.update()
    assert "Exception in interact callback" not in caplog.text
    return widget.result

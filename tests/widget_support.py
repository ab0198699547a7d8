"""Driving an ipywidgets ``interactive`` demo in plain pytest."""

import logging

_UNSET = object()


def set_and_run(widget, caplog, **values):
    """Set sliders by description, rerun the callback, and return its result.

    Outside a kernel an exception in the callback is logged (at WARNING), not raised, and
    ``widget.result`` keeps the previous move's value: fail on the log line, and on a result that
    this move did not produce.
    """
    sliders = {child.description: child for child in widget.children[:-1]}
    with caplog.at_level(logging.WARNING):
        for name, value in values.items():
            sliders[name].value = value
        widget.result = _UNSET
        widget.update()
    assert "Exception in interact callback" not in caplog.text, caplog.text
    assert widget.result is not _UNSET, f"the callback produced no result for {values}"
    return widget.result


def pixels(widget, *, anew=False):
    """The demo's figure as its last move drew it, or (``anew``) drawn anew from all its artists:
    an array of RGBA pixels."""
    import numpy as np

    from lsa_helpers.widgets import _draw

    if anew:
        _draw(widget.figure, anew=True)
    return np.asarray(widget.figure.canvas.buffer_rgba()).copy()

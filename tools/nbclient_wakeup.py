"""A notebook runner that does not lose a kernel's reply (jupyter/jupyter_client#1059).

``Session.send`` writes on a blocking shadow of an asyncio ZMQ socket. When a reply has already
reached that socket, the send consumes its edge-triggered wake-up, and nbclient's wait for the
reply ends only at the cell's timeout. nbclient sends such messages while a cell that shows an
``ipywidgets`` ``interactive`` still runs (its Output-widget updates, ``comm_msg`` on shell), so
lessons with demos stalled now and then under load. After each send, reading ``EVENTS`` through
the asyncio socket lets it see the waiting reply.

Import it before running notebooks with nbclient, or pass it to nbconvert as a config file:
``jupyter nbconvert --config tools/nbclient_wakeup.py --execute ...``.
"""

import zmq
from jupyter_client.channels import AsyncZMQSocketChannel

_SEND = AsyncZMQSocketChannel.send


def _send_and_wake(self: AsyncZMQSocketChannel, msg: dict) -> None:
    """``msg`` sent, then ``EVENTS`` read on the asyncio socket: a reply already waiting wakes."""
    _SEND(self, msg)
    self.socket.get(zmq.EVENTS)


if AsyncZMQSocketChannel.send is _SEND:
    AsyncZMQSocketChannel.send = _send_and_wake

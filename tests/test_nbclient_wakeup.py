"""The notebook runner's fix for a lost wake-up (tools/nbclient_wakeup.py, loaded by conftest):
a reply that reaches the client while it sends on the same channel is seen at once."""

import asyncio
import time

import zmq
import zmq.asyncio
from jupyter_client.channels import AsyncZMQSocketChannel
from jupyter_client.session import Session


async def reply_seen_while_sending() -> bool:
    """A kernel's reply arrives while the client waits for it, then the client sends on the same
    channel (an Output-widget ``comm_msg``, as nbclient does during a demo cell). True when the
    wait ends with the reply, False when it would end only at the socket's 60 s timeout."""
    context = zmq.asyncio.Context()
    kernel = zmq.Context.instance().socket(zmq.ROUTER)
    port = kernel.bind_to_random_port("tcp://127.0.0.1")
    client = context.socket(zmq.DEALER)
    client.connect(f"tcp://127.0.0.1:{port}")
    session = Session()
    shell = AsyncZMQSocketChannel(client, session)
    try:
        shell.send(session.msg("execute_request"))
        identity, *_ = kernel.recv_multipart()
        waiting = asyncio.ensure_future(client.poll(60_000))
        await asyncio.sleep(0.01)
        kernel.send_multipart([identity, b"execute_reply"])
        time.sleep(0.05)  # the reply reaches the client's socket before its event loop runs again
        shell.send(session.msg("comm_msg"))
        try:
            return await asyncio.wait_for(waiting, 20) == zmq.POLLIN
        except asyncio.TimeoutError:
            return False
    finally:
        client.close(0)
        kernel.close(0)
        context.term()


def test_a_reply_that_arrives_during_a_send_is_not_lost():
    assert asyncio.run(reply_seen_while_sending())

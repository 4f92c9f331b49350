# mistake: calls writer.close() in a finally but never awaits wait_closed(), so the socket is still open when the call returns
# violates: the connection is closed before the call ends, on every path
# from: red team, session 5 (unseen tests)
async def fetch_replies(host: str, port: int, payloads: list[bytes], max_reply: int) -> list[bytes]:
    """Send each payload as a frame on one connection; return the framed replies in order."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(b"".join(encode_frame(payload) for payload in payloads))
        await writer.drain()
        replies = []
        for _ in payloads:
            reply = await read_frame(reader, max_reply)
            if reply is None:
                raise TruncatedFrame("the connection ended before every reply arrived")
            replies.append(reply)
        return replies
    finally:
        writer.close()

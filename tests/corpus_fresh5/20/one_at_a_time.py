# mistake: sends one request and reads its reply before sending the next (no pipeline), so a server that answers only once every request has arrived never answers
# violates: every payload is sent before the first reply is awaited
# from: red team, session 5 (unseen tests)
async def fetch_replies(host: str, port: int, payloads: list[bytes], max_reply: int) -> list[bytes]:
    """Send each payload as a frame on one connection; return the framed replies in order."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        replies = []
        for payload in payloads:
            writer.write(encode_frame(payload))
            await writer.drain()
            reply = await read_frame(reader, max_reply)
            if reply is None:
                raise TruncatedFrame("the connection ended before every reply arrived")
            replies.append(reply)
        return replies
    except BaseException:
        writer.transport.abort()  # do not wait for a flush the peer may never allow
        raise
    finally:
        writer.close()
        try:
            await writer.wait_closed()
        except OSError:
            pass

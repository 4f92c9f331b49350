# mistake: reads each reply with the chapter's read_frame and keeps its None (clean end of stream between frames) as a reply
# violates: a connection that ends before every reply has arrived raises TruncatedFrame
# from: red team, session 5 (unseen tests)
async def fetch_replies(host: str, port: int, payloads: list[bytes], max_reply: int) -> list[bytes]:
    """Send each payload as a frame on one connection; return the framed replies in order."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(b"".join(encode_frame(payload) for payload in payloads))
        await writer.drain()
        return [await read_frame(reader, max_reply) for _ in payloads]
    except BaseException:
        writer.transport.abort()  # do not wait for a flush the peer may never allow
        raise
    finally:
        writer.close()
        try:
            await writer.wait_closed()
        except OSError:
            pass

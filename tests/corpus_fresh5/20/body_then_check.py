# mistake: reads the whole declared body first and checks its size afterwards, so a server that lies about a huge length makes it wait or report truncation
# violates: FrameTooLarge as soon as the header declares more than max_reply bytes, without reading the body
# from: red team, session 5 (unseen tests)
async def fetch_replies(host: str, port: int, payloads: list[bytes], max_reply: int) -> list[bytes]:
    """Send each payload as a frame on one connection; return the framed replies in order."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(b"".join(encode_frame(payload) for payload in payloads))
        await writer.drain()
        replies = []
        for _ in payloads:
            try:
                header = await reader.readexactly(4)
                body = await reader.readexactly(int.from_bytes(header, "big"))
            except asyncio.IncompleteReadError as exc:
                raise TruncatedFrame(f"the connection ended after {len(exc.partial)} bytes") from exc
            if len(body) > max_reply:
                raise FrameTooLarge(f"reply has {len(body)} bytes, the limit is {max_reply}")
            replies.append(body)
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

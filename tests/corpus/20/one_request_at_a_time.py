# mistake: sends one payload, reads its reply, then sends the next (a request-response loop, not a pipeline), so a server that answers once every request of the connection has arrived never answers
# violates: before sending every payload
async def fetch_replies(host: str, port: int, payloads: list[bytes], max_reply: int) -> list[bytes]:
    """Send each payload as a frame on one connection; return the framed replies in order."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        replies = []
        for payload in payloads:
            writer.write(encode_frame(payload))
            await writer.drain()
            try:
                header = await reader.readexactly(4)
                length = int.from_bytes(header, "big")
                if length > max_reply:
                    raise FrameTooLarge(f"reply declares {length} bytes, the limit is {max_reply}")
                replies.append(await reader.readexactly(length))
            except asyncio.IncompleteReadError as exc:
                raise TruncatedFrame("the connection ended before the reply did") from exc
        return replies
    finally:
        writer.close()
        try:
            await writer.wait_closed()
        except (ConnectionError, OSError):
            pass

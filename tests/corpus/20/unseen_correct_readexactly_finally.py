# correct: write all frames + one drain, read header/body with readexactly, map IncompleteReadError to TruncatedFrame; close + wait_closed in finally (abort first if a write is still buffered)
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
async def fetch_replies(host: str, port: int, payloads: list[bytes], max_reply: int) -> list[bytes]:
    """Send each payload as a frame on one connection; return the framed replies in order."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        for payload in payloads:
            writer.write(encode_frame(payload))
        await writer.drain()
        replies = []
        for _ in payloads:
            try:
                header = await reader.readexactly(4)
            except asyncio.IncompleteReadError as exc:
                raise TruncatedFrame(f"connection ended after {len(replies)} replies") from exc
            length = int.from_bytes(header, "big")
            if length > max_reply:
                raise FrameTooLarge(f"reply declares {length} bytes, the limit is {max_reply}")
            try:
                replies.append(await reader.readexactly(length))
            except asyncio.IncompleteReadError as exc:
                raise TruncatedFrame(f"reply ended after {len(exc.partial)} of {length} bytes") from exc
        return replies
    finally:
        if writer.transport.get_write_buffer_size():
            writer.transport.abort()  # a peer that stopped reading would keep close() waiting
        writer.close()
        try:
            await writer.wait_closed()
        except OSError:
            pass

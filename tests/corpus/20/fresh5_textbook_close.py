# mistake: closes with close() + wait_closed() in a finally, but never aborts: cancelled while drain() waits on a peer that stopped reading, wait_closed() waits for a flush that never comes
# violates: when it cancels it while a write waits for a peer that has stopped reading
# from: red team, session 5 (unseen tests); first verdict accepted (tests/corpus_fresh5/first_run_s5redB.json)
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
                raise TruncatedFrame("the connection ended before a reply header") from exc
            length = int.from_bytes(header, "big")
            if length > max_reply:
                raise FrameTooLarge(f"reply declares {length} bytes, the limit is {max_reply}")
            try:
                replies.append(await reader.readexactly(length))
            except asyncio.IncompleteReadError as exc:
                raise TruncatedFrame("the connection ended inside a reply") from exc
        return replies
    finally:
        writer.close()
        await writer.wait_closed()

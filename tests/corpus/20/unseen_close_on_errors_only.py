# mistake: closes the connection on success and on frame errors, with `except Exception`, not in a finally
# violates: the connection was still open when fetch_replies returned after its caller cancelled it
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "close the connection ... on every path", "when the caller cancels the call"
# breaks: CancelledError is not an Exception: a cancelled call leaves its connection open
# how: cancel the call while it waits for a reply that never comes: the client transport is not closing afterwards
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
                length = int.from_bytes(await reader.readexactly(4), "big")
                if length > max_reply:
                    raise FrameTooLarge(f"{length} > {max_reply}")
                replies.append(await reader.readexactly(length))
            except asyncio.IncompleteReadError as exc:
                raise TruncatedFrame("connection ended") from exc
    except Exception:
        writer.close()
        await writer.wait_closed()
        raise
    writer.close()
    await writer.wait_closed()
    return replies

# mistake: rejects a reply whose length reaches the limit (>=) instead of exceeding it
# violates: a reply of exactly max_reply bytes raised FrameTooLarge: raise it only when the header
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "raise FrameTooLarge as soon as a reply header declares more than max_reply bytes"; "a reply of exactly max_reply bytes allowed"
# breaks: a reply of exactly max_reply bytes raises FrameTooLarge
# how: max_reply = len(b"ok:abc") = 6, payload b"abc": FrameTooLarge instead of [b"ok:abc"]
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
                if length >= max_reply:
                    raise FrameTooLarge(f"{length} >= {max_reply}")
                replies.append(await reader.readexactly(length))
            except asyncio.IncompleteReadError as exc:
                raise TruncatedFrame("connection ended") from exc
        return replies
    finally:
        writer.close()
        await writer.wait_closed()

# mistake: reads the header and the body with reader.read(n), trusting one read to return n bytes
# violates: replies that arrived a few bytes at a time were not read whole: a read
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "read exactly one length-prefixed reply per payload, with readexactly"; "the replies whole ... even when they arrive a few bytes at a time"
# breaks: a reply that dribbles in comes back cut (and the next header is read from the middle of a body)
# how: a server sending replies 2 bytes at a time: replies are fragments / the lengths are garbage
async def fetch_replies(host: str, port: int, payloads: list[bytes], max_reply: int) -> list[bytes]:
    """Send each payload as a frame on one connection; return the framed replies in order."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        for payload in payloads:
            writer.write(encode_frame(payload))
        await writer.drain()
        replies = []
        for _ in payloads:
            header = await reader.read(4)
            if len(header) == 0:
                raise TruncatedFrame("connection ended")
            length = int.from_bytes(header, "big")
            if length > max_reply:
                raise FrameTooLarge(f"{length} > {max_reply}")
            replies.append(await reader.read(length))
        return replies
    finally:
        writer.close()
        await writer.wait_closed()

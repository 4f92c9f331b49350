# mistake: sends one frame, reads its reply, then sends the next (request/response instead of a pipeline)
# violates: fetch_replies waited for a reply before sending every payload
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "send every payload ... all of them before reading the first reply (a pipeline: the server may answer only once every request has arrived)"
# breaks: against a server that answers after the whole batch, the client waits for the first reply forever
# how: a server that replies only after receiving 3 frames: the call never returns (caught by a 1 s timeout)
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
                    raise FrameTooLarge(f"{length} > {max_reply}")
                replies.append(await reader.readexactly(length))
            except asyncio.IncompleteReadError as exc:
                raise TruncatedFrame("connection ended") from exc
        return replies
    finally:
        writer.close()
        await writer.wait_closed()

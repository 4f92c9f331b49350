# mistake: reuses the chapter's read_frame and stops at its None ("clean end of stream")
# violates: a missing reply must raise TruncatedFrame
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "TruncatedFrame if the connection ends before all the replies have arrived"
# breaks: a server that hangs up after some whole replies gives a short list instead of TruncatedFrame
# how: 3 payloads, server sends 1 whole reply and hangs up: returns [b"ok:a"] instead of raising TruncatedFrame
async def fetch_replies(host: str, port: int, payloads: list[bytes], max_reply: int) -> list[bytes]:
    """Send each payload as a frame on one connection; return the framed replies in order."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        for payload in payloads:
            writer.write(encode_frame(payload))
        await writer.drain()
        replies = []
        for _ in payloads:
            reply = await read_frame(reader, max_reply)
            if reply is None:
                break
            replies.append(reply)
        return replies
    finally:
        writer.close()
        await writer.wait_closed()

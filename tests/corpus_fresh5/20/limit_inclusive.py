# mistake: refuses a reply whose declared length equals max_reply (uses >= where the limit is inclusive)
# violates: a reply of exactly max_reply bytes is allowed; only more than max_reply raises FrameTooLarge
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
                length = int.from_bytes(header, "big")
                if length >= max_reply:
                    raise FrameTooLarge(f"reply declares {length} bytes, the limit is {max_reply}")
                replies.append(await reader.readexactly(length))
            except asyncio.IncompleteReadError as exc:
                raise TruncatedFrame(f"the connection ended after {len(exc.partial)} bytes") from exc
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

# mistake: a helper reads one reply with struct.unpack('>I'); drain after each write; close() + wait_closed() bounded to 1 s in finally, then abort() without waiting for it: cancelled while drain() waits on a peer that stopped reading, the call ends with the socket still open
# violates: the connection was still open when fetch_replies ended
# how: a '# correct:' entry until session 5 (s5holesE); no generated scenario had a peer that stops reading under a cancelled caller, the only path where its abort() runs
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
import struct as _struct

async def fetch_replies(host: str, port: int, payloads: list[bytes], max_reply: int) -> list[bytes]:
    """Send each payload as a frame on one connection; return the framed replies in order."""
    async def read_reply(reader):
        try:
            (length,) = _struct.unpack(">I", await reader.readexactly(4))
            if length > max_reply:
                raise FrameTooLarge(f"{length} > {max_reply}")
            return await reader.readexactly(length)
        except asyncio.IncompleteReadError as exc:
            raise TruncatedFrame("connection ended mid-reply") from exc

    reader, writer = await asyncio.open_connection(host, port)
    try:
        for payload in payloads:
            writer.write(encode_frame(payload))
            await writer.drain()
        return [await read_reply(reader) for _ in payloads]
    finally:
        writer.close()
        try:
            await asyncio.wait_for(writer.wait_closed(), timeout=1)
        except (OSError, TimeoutError):
            writer.transport.abort()

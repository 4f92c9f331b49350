# mistake: looks at the list every 20 ms under the lock instead of waiting on the condition, so a complete batch is noticed up to one poll late
# violates: a consumer returns its batch when it is there, woken by the put, not at its next look
# from: red team, session 6 (unseen tests)
def take_batch(cond: threading.Condition, items: list, size: int, timeout: float) -> list | None:
    """Remove and return the first `size` items once there are that many; None on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        with cond:
            if len(items) >= size:
                batch = items[:size]
                del items[:size]
                return batch
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        time.sleep(min(0.02, left))

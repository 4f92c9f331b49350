# mistake: loops on cond.wait(timeout) but gives each wait the full timeout again, so every wake-up restarts the clock
# violates: one deadline for the whole wait: None once timeout has run out, not later
# from: red team, session 6 (unseen tests)
def take_batch(cond: threading.Condition, items: list, size: int, timeout: float) -> list | None:
    """Remove and return the first `size` items once there are that many; None on timeout."""
    with cond:
        while len(items) < size:
            if not cond.wait(timeout):
                return None
        batch = items[:size]
        del items[:size]
        return batch

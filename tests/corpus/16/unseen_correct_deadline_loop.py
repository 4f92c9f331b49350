# correct: hand-written while loop against a monotonic deadline, waiting only for the time left; pops under the lock
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
def take_batch(cond: threading.Condition, items: list, size: int, timeout: float) -> list | None:
    """Remove and return the first `size` items once there are that many; None on timeout."""
    deadline = time.monotonic() + timeout
    with cond:
        while len(items) < size:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            cond.wait(left)
        return [items.pop(0) for _ in range(size)]

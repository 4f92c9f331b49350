# correct: cond.wait_for with the predicate and the timeout, take and delete under the same lock
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
def take_batch(cond: threading.Condition, items: list, size: int, timeout: float) -> list | None:
    """Remove and return the first `size` items once there are that many; None on timeout."""
    with cond:
        if not cond.wait_for(lambda: len(items) >= size, timeout=timeout):
            return None
        batch = items[:size]
        del items[:size]
        return batch

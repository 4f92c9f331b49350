# mistake: waits once with `if`, not in a loop; any notify ends the wait
# violates: a consumer gave up before its timeout, with items still coming
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "wait ... until items holds at least size entries ... If that does not happen within timeout seconds, return None"
# breaks: the first put_item that does not complete the batch wakes the consumer, which gives up with None long before the timeout
# how: size 3, timeout 1 s, producer puts one item every 50 ms: take_batch returns None after ~50 ms instead of the batch at ~150 ms
def take_batch(cond: threading.Condition, items: list, size: int, timeout: float) -> list | None:
    """Remove and return the first `size` items once there are that many; None on timeout."""
    with cond:
        if len(items) < size:
            cond.wait(timeout)
        if len(items) < size:
            return None
        batch = items[:size]
        del items[:size]
        return batch

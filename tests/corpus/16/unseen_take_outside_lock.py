# mistake: waits under the condition, then leaves the `with` block and slices/deletes outside the lock
# violates: batches must be taken first-in first-out, no item twice: got
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "Several consumers may call take_batch at once: no item may be taken twice"
# breaks: two consumers both see enough items, both copy the same first `size` items, then each deletes a batch
# how: two consumers of size 3 waiting while 1..4 are put: both return [1, 2, 3]
def take_batch(cond: threading.Condition, items: list, size: int, timeout: float) -> list | None:
    """Remove and return the first `size` items once there are that many; None on timeout."""
    with cond:
        ready = cond.wait_for(lambda: len(items) >= size, timeout=timeout)
    if not ready:
        return None
    batch = items[:size]
    time.sleep(0)  # (any work here lets another consumer in)
    del items[:size]
    return batch

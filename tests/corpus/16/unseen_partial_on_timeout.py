# mistake: on timeout hands back whatever is there ("better a short batch than nothing")
# violates: items left, a batch of
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "If that does not happen within timeout seconds, return None and remove nothing"; "every batch must have exactly size items"
# breaks: a timed-out take removes and returns a short batch
# how: items [3, 4], take_batch(size 3, timeout 0.05) returns [3, 4] and empties the list instead of None
def take_batch(cond: threading.Condition, items: list, size: int, timeout: float) -> list | None:
    """Remove and return the first `size` items once there are that many; None on timeout."""
    with cond:
        cond.wait_for(lambda: len(items) >= size, timeout=timeout)
        if not items:
            return None
        batch = items[:size]
        del items[:size]
        return batch

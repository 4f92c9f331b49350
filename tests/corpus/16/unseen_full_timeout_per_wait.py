# mistake: loops on cond.wait(timeout), restarting the whole timeout after every wake-up
# violates: take_batch
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "If that does not happen within timeout seconds, return None"
# breaks: a producer that keeps adding items (never enough) keeps the consumer waiting well past the timeout
# how: size 10, timeout 0.2 s, one item every 0.1 s: returns only when the 10th item arrives (~1 s), not None at 0.2 s
def take_batch(cond: threading.Condition, items: list, size: int, timeout: float) -> list | None:
    """Remove and return the first `size` items once there are that many; None on timeout."""
    with cond:
        while len(items) < size:
            if not cond.wait(timeout):
                return None
        batch = items[:size]
        del items[:size]
        return batch

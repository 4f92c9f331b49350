# mistake: pulls items into its batch one at a time as they arrive, and puts them back on timeout
# violates: no item taken before its batch is whole || no item twice
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "remove the first size entries" only once there are that many; "return None and remove nothing" on timeout; whole batches for several consumers
# breaks: items disappear from the shared list before a whole batch is there (other consumers cannot see them), and a consumer that times out puts its share back at the end, reordering the items
# how: items [1, 2], take_batch(size 3, timeout 0.25): halfway through the wait another thread sees the list empty (items already removed); with two consumers the batch can come back reordered ([2, 3, 1])
def take_batch(cond: threading.Condition, items: list, size: int, timeout: float) -> list | None:
    """Remove and return the first `size` items once there are that many; None on timeout."""
    deadline = time.monotonic() + timeout
    batch = []
    with cond:
        while len(batch) < size:
            if items:
                batch.append(items.pop(0))
                continue
            left = deadline - time.monotonic()
            if left <= 0:
                items.extend(batch)
                cond.notify_all()
                return None
            cond.wait(left)
        return batch

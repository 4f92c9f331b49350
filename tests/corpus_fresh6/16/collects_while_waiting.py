# mistake: takes items one by one as they arrive and keeps them aside until the batch is full, putting them back on timeout
# violates: each batch is the first `size` items in `items` when it is taken, in their order (consumers waiting together interleave)
# from: red team, session 6 (unseen tests)
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
                items[:0] = batch  # give back what we held, in front
                cond.notify_all()
                return None
            cond.wait(left)
        return batch

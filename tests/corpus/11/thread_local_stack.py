# mistake: keeps the stack in a threading.local, which every task on the loop's thread shares
# violates: wrong parents under concurrency
_local = threading.local()


@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    stack = getattr(_local, "stack", ())
    span_log.append((name, stack[-1] if stack else None))
    _local.stack = stack + (name,)
    try:
        yield
    finally:
        _local.stack = stack

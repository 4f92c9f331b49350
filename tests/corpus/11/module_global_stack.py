# mistake: keeps the stack of open spans in a module-level list instead of the ContextVar
# violates: wrong parents under concurrency
_open_spans: list[str] = []


@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    span_log.append((name, _open_spans[-1] if _open_spans else None))
    _open_spans.append(name)
    TRACE_STACK.set(tuple(_open_spans))
    try:
        yield
    finally:
        _open_spans.pop()
        TRACE_STACK.set(tuple(_open_spans))

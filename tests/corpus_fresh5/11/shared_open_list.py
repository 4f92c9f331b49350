# mistake: takes the parent from one module-level list of open spans shared by every task, mirroring it into TRACE_STACK
# violates: each span's parent is the innermost span of its own context, never another task's
# from: red team, session 5 (unseen tests)
_open_spans: list[str] = []


@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    parent = _open_spans[-1] if _open_spans else None
    span_log.append((name, parent))
    _open_spans.append(name)
    token = TRACE_STACK.set(TRACE_STACK.get() + (name,))
    try:
        yield
    finally:
        _open_spans.remove(name)
        TRACE_STACK.reset(token)

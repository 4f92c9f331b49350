# mistake: sets the longer stack but never resets it, so a closed span stays open
# violates: not restored when the block ended
@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    stack = TRACE_STACK.get()
    span_log.append((name, stack[-1] if stack else None))
    TRACE_STACK.set(stack + (name,))
    yield

# mistake: resets the ContextVar after the yield but not in a finally, so an exception skips it
# violates: not restored when the block raised
@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    stack = TRACE_STACK.get()
    span_log.append((name, stack[-1] if stack else None))
    token = TRACE_STACK.set(stack + (name,))
    yield
    TRACE_STACK.reset(token)

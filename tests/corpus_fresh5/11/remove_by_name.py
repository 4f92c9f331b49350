# mistake: on exit removes the span by its name from the current stack, which also drops an outer span of the same name
# violates: after a block TRACE_STACK is exactly what it was before it, even when names repeat
# from: red team, session 5 (unseen tests)
@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    stack = TRACE_STACK.get()
    span_log.append((name, stack[-1] if stack else None))
    TRACE_STACK.set(stack + (name,))
    try:
        yield
    finally:
        TRACE_STACK.set(tuple(open_name for open_name in TRACE_STACK.get() if open_name != name))

# mistake: the outermost span puts a list into TRACE_STACK and nested spans append/pop it in place, so tasks started inside a span share the caller's list (red team, issue 28)
# violates: tasks started inside a span
# breaks: correct parents when many tasks trace at once (tasks started INSIDE a span share the caller's stack)
# how: the outermost span puts a list into TRACE_STACK and nested spans append/pop it in place; tasks created inside the span copy the context but get the same list object
@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    stack = TRACE_STACK.get()
    token = None
    if not isinstance(stack, list):
        stack = list(stack)
        token = TRACE_STACK.set(stack)
    span_log.append((name, stack[-1] if stack else None))
    stack.append(name)
    try:
        yield
    finally:
        stack.pop()
        if token is not None:
            TRACE_STACK.reset(token)

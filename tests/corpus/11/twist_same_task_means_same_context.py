# mistake: resets only when the closing task is the opening task, taking the task for its context; a generator moved between contexts in one task still raises
# violates: the exit raised in another context
@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    import asyncio

    def current():
        try:
            return asyncio.current_task()
        except RuntimeError:  # no running loop
            return None

    opener = current()
    stack = TRACE_STACK.get()
    span_log.append((name, stack[-1] if stack else None))
    token = TRACE_STACK.set(stack + (name,))
    try:
        yield
    finally:
        if current() is opener:
            TRACE_STACK.reset(token)

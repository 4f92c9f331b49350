# mistake: resets only in the thread that opened the span, taking "another context" for "another thread" (the chapter's thread section); tasks share one thread, so the reset still raises
# violates: the exit raised in another context
import threading


@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    opener = threading.get_ident()
    stack = TRACE_STACK.get()
    span_log.append((name, stack[-1] if stack else None))
    token = TRACE_STACK.set(stack + (name,))
    try:
        yield
    finally:
        if threading.get_ident() == opener:
            TRACE_STACK.reset(token)

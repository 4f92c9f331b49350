# mistake: no token; on exit restores the old stack only if the current stack "is" the tuple it set, taken as proof of being in the opening context
# violates: the stack where the span closed changed
# from: red team of session 13 (had not seen the tests)
@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    stack = TRACE_STACK.get()
    span_log.append((name, stack[-1] if stack else None))
    mine = stack + (name,)
    TRACE_STACK.set(mine)
    try:
        yield
    finally:
        # only undo our own set: if the stack is not our tuple, we are in another context
        if TRACE_STACK.get() is mine:
            TRACE_STACK.set(stack)

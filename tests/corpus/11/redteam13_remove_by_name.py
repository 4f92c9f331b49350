# mistake: on exit removes its name from the current stack (the chapter's shared-list helper, list.remove), catching the ValueError of "not in list"
# violates: the stack where the span closed changed
# from: red team of session 13 (had not seen the tests)
@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    stack = TRACE_STACK.get()
    span_log.append((name, stack[-1] if stack else None))
    TRACE_STACK.set(stack + (name,))
    try:
        yield
    finally:
        current = list(TRACE_STACK.get())
        try:
            current.remove(name)  # as the chapter's helper: remove our own name, not pop()
        except ValueError:
            pass  # closed in another context: our span is not in this stack
        else:
            TRACE_STACK.set(tuple(current))

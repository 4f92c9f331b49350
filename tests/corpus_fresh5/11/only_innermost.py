# mistake: sets TRACE_STACK to just (name,) inside the block instead of the whole stack of open spans
# violates: TRACE_STACK inside a block is the stack of every open span in this context, ending with its name
# from: red team, session 5 (unseen tests)
@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    stack = TRACE_STACK.get()
    span_log.append((name, stack[-1] if stack else None))
    token = TRACE_STACK.set((name,))  # the innermost span is all a child needs
    try:
        yield
    finally:
        TRACE_STACK.reset(token)

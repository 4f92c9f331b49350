# mistake: restores TRACE_STACK after the yield without try/finally, so a block that raises leaves its name on the stack
# violates: TRACE_STACK is back to what it was after the block, also when the block raises
# from: red team, session 5 (unseen tests)
@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    stack = TRACE_STACK.get()
    span_log.append((name, stack[-1] if stack else None))
    token = TRACE_STACK.set(stack + (name,))
    yield
    TRACE_STACK.reset(token)

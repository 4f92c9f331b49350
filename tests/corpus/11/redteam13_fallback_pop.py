# mistake: when reset raises ValueError, pops the top of the closing context's stack instead of leaving it alone
# violates: the stack where the span closed changed
# from: red team of session 13 (had not seen the tests)
@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    stack = TRACE_STACK.get()
    span_log.append((name, stack[-1] if stack else None))
    token = TRACE_STACK.set(stack + (name,))
    try:
        yield
    finally:
        try:
            TRACE_STACK.reset(token)
        except ValueError:
            # another context: no token there, so just take our span off the top
            TRACE_STACK.set(TRACE_STACK.get()[:-1])

# mistake: when reset raises ValueError, "restores" by setting the stack it saw on entry, in the closing context
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
            # closed in another context: the token is no good there, put the old stack back by hand
            TRACE_STACK.set(stack)

# mistake: when reset raises ValueError, `return`s out of the finally ("nothing to restore here")
# violates: the block's own error was swallowed
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
            return  # closed in another context: nothing of ours to restore there

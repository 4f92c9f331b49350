# mistake: put the reset after the yield inside try/except ValueError instead of in a finally
# violates: the stack was not restored when the block raised
# from: red team of session 13 (had not seen the tests)
@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    stack = TRACE_STACK.get()
    span_log.append((name, stack[-1] if stack else None))
    token = TRACE_STACK.set(stack + (name,))
    try:
        yield
        TRACE_STACK.reset(token)
    except ValueError:
        pass  # closed in another context: reset is not allowed there

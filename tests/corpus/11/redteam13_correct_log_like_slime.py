# correct: mirrors slime's trace_span: the reset failure is caught as Exception (ValueError or a reused token's RuntimeError) and logged at debug level, not raised; the stack is read once and the log entry written before the set
# from: red team of session 13 (had not seen the tests)
@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    import logging
    stack_before = TRACE_STACK.get()
    parent = stack_before[-1] if stack_before else None
    span_log.append((name, parent))
    token = TRACE_STACK.set((*stack_before, name))
    try:
        yield
    finally:
        try:
            TRACE_STACK.reset(token)
        except Exception as exc:  # only the reset is guarded, never the block
            logging.getLogger("traced_span").debug("span_reset:%s: %r", name, exc)

# mistake: reads the tuple, logs (name, innermost), sets a new tuple and resets with the token in finally (correct before the twist), so a span closed in another context raises ValueError
# violates: the exit raised in another context
# from: the unseen red team (issue 37), who never saw the tests, sent in as a correct answer (wrong since 11.1 asks for a span closed in another context); first-run figures in tests/corpus_unseen/
@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    stack = TRACE_STACK.get()
    span_log.append((name, stack[-1] if stack else None))
    token = TRACE_STACK.set(stack + (name,))
    try:
        yield
    finally:
        TRACE_STACK.reset(token)

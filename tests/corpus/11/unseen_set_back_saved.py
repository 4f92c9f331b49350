# mistake: saves the previous tuple and sets it back in finally (no token; correct before the twist), which writes the opener's stack into a context the span closes in
# violates: the stack where the span closed changed
# from: the unseen red team (issue 37), who never saw the tests, sent in as a correct answer (wrong since 11.1 asks for a span closed in another context); first-run figures in tests/corpus_unseen/
@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    previous = TRACE_STACK.get()
    parent = previous[-1] if len(previous) > 0 else None
    TRACE_STACK.set((*previous, name))
    span_log.append((name, parent))
    try:
        yield
    finally:
        TRACE_STACK.set(previous)

# mistake: on exit removes the span from the tuple by its name instead of restoring the saved value
# violates: TRACE_STACK was || the stack where the span closed changed
# breaks: since the twist (a span closed in another context) the name is also removed from the closing context's stack, which the named check finds before the generated programs
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "TRACE_STACK back to what it was after the block"
# breaks: a span nested inside a span of the same name removes both, so the outer block loses its own span
# how: with traced_span("retry"): with traced_span("retry"): pass; then inside the outer block TRACE_STACK is () and a new span gets parent None
@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    stack = TRACE_STACK.get()
    span_log.append((name, stack[-1] if stack else None))
    TRACE_STACK.set(stack + (name,))
    try:
        yield
    finally:
        TRACE_STACK.set(tuple(s for s in TRACE_STACK.get() if s != name))

# mistake: restores TRACE_STACK after the yield without a try/finally
# violates: the stack was not restored when the block raised: reset the ContextVar in a finally, so
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "restores TRACE_STACK on the way out, also when the block raises"
# breaks: after a block that raised, the span stays open: TRACE_STACK keeps the name and later spans get it as parent
# how: `with traced_span("a"): raise ValueError` then TRACE_STACK.get() == ("a",)
@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    stack = TRACE_STACK.get()
    span_log.append((name, stack[-1] if stack else None))
    token = TRACE_STACK.set(stack + (name,))
    yield
    TRACE_STACK.reset(token)

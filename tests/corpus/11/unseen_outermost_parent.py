# mistake: records the first element of the stack (the root span) as the parent
# violates: wrong parents under concurrency: with
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "parent is the innermost span open in the current context"
# breaks: at depth 3 or more the parent is the root, not the enclosing span
# how: rollout > generate > tokenize records ("tokenize", "rollout") instead of ("tokenize", "generate")
@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    stack = TRACE_STACK.get()
    span_log.append((name, stack[0] if stack else None))
    token = TRACE_STACK.set(stack + (name,))
    try:
        yield
    finally:
        TRACE_STACK.reset(token)

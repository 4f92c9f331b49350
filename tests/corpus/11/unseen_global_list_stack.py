# mistake: keeps the open spans in a module-level list (push/pop) and mirrors it into TRACE_STACK
# violates: wrong parents under concurrency: with
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "parent is the innermost span open in the current context"; "correct parents when many tasks trace at once"
# breaks: tasks that trace at once see each other's spans as parents
# how: two tasks each open a span, sleep, open a child: the second task's root gets the first task's span as parent
_open_spans: list[str] = []

@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    span_log.append((name, _open_spans[-1] if _open_spans else None))
    _open_spans.append(name)
    TRACE_STACK.set(tuple(_open_spans))
    try:
        yield
    finally:
        _open_spans.pop()
        TRACE_STACK.set(tuple(_open_spans))

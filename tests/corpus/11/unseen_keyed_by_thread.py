# mistake: thread-local thinking: keeps a stack per thread id in a dict, mirrored into TRACE_STACK
# violates: wrong parents under concurrency: with
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "parent is the innermost span open in the current context"; correct "when many tasks trace at once on one loop"
# breaks: all tasks on one loop share one thread id, so they share one stack
# how: two tasks tracing side by side: the second task's span records the first task's span as parent
import threading as _threading

_stacks: dict[int, tuple[str, ...]] = {}

@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    key = _threading.get_ident()
    stack = _stacks.get(key, ())
    span_log.append((name, stack[-1] if stack else None))
    _stacks[key] = stack + (name,)
    token = TRACE_STACK.set(_stacks[key])
    try:
        yield
    finally:
        _stacks[key] = stack
        TRACE_STACK.reset(token)

# mistake: schedules the task with loop.call_soon from the caller's thread instead of call_soon_threadsafe
# violates: the coroutine never ran on the loop
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    loop = loop_thread.loop
    outcome: concurrent.futures.Future = concurrent.futures.Future()
    tasks: list[asyncio.Task] = []

    def copy_outcome(task: asyncio.Task) -> None:
        if task.cancelled():
            outcome.cancel()
        elif task.exception() is not None:
            outcome.set_exception(task.exception())
        else:
            outcome.set_result(task.result())

    def start() -> None:
        task = loop.create_task(coro)
        task.add_done_callback(copy_outcome)
        tasks.append(task)

    loop.call_soon(start)
    try:
        return outcome.result(timeout=timeout)
    except TimeoutError:
        for task in tasks:
            loop.call_soon(task.cancel)
        raise

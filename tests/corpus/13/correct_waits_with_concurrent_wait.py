# correct: waits with concurrent.futures.wait (woken by the future's end, bounded by the timeout), then takes the result or cancels
# from: s5holesB (issue 37), the counterpart of fresh_polls_done
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    import concurrent.futures

    if threading.get_ident() == loop_thread.thread.ident:  # the twist of session 14
        coro.close()
        raise RuntimeError("called on the loop thread itself")
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    done, _ = concurrent.futures.wait([future], timeout=timeout)
    if not done:
        future.cancel()
        raise TimeoutError(f"no result within {timeout} s")
    return future.result()

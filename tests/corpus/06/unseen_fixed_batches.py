# mistake: gathers the prompts in fixed batches of `limit`
# violates: while one slow call holds a permit, the other permit must go to the next prompt as soon
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "as soon as one finishes, the next prompt should start (no waiting for a fixed batch of limit to complete)"; "all created up front"
# breaks: a slow prompt in a batch keeps a slot idle; total time is the sum of batch maxima
# how: prompts of lengths 40,1,1,1 with limit 2: the short prompts wait for the long one; in-flight drops to 1
async def generate_all(prompts: list[str], limit: int, generate) -> list:
    """Run `await generate(p)` for every prompt, at most `limit` at once; results in prompt order."""
    results = []
    for start in range(0, len(prompts), limit):
        batch = prompts[start:start + limit]
        results.extend(await asyncio.gather(*(generate(p) for p in batch)))
    return results

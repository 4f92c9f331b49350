# mistake: keeps the tasks in a dict keyed by name to "return them in the order of names"
# violates: call score_one once per name (a repeated name too)
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "call score_one(name) for every name"; "return the results in the order of names"
# breaks: a name that appears twice is scored once and the result list is shorter than names
# how: score_group(["a", "a", "b"], ...) returns 2 results instead of 3
async def score_group(names: list[str], score_one) -> list:
    """Run `score_one(name)` for all names concurrently; results in input order; all or nothing."""
    async with asyncio.TaskGroup() as tg:
        by_name = {name: tg.create_task(score_one(name)) for name in names}
    return [by_name[name].result() for name in dict.fromkeys(names)]

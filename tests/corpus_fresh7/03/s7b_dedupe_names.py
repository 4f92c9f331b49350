# mistake: scores each distinct name once (dict keyed by name) and reuses the result for repeats
# violates: "score_one once per name, a repeated name once per occurrence"
# from: red team, session 7 (unseen tests)
import asyncio
async def score_group(names, score_one):
    unique = list(dict.fromkeys(names))
    async with asyncio.TaskGroup() as tg:
        tasks = {n: tg.create_task(score_one(n)) for n in unique}
    return [tasks[n].result() for n in names]

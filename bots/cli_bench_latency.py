"""`factbot bench latency`: end-to-end seconds of a check on the model path, against stand-ins.

Local stand-ins (`bots.standins`) play the model endpoint, SearXNG and publisher sites, each
with a realistic delay; an `App` is built over them exactly as settings would build it, and text
posts go through `App.check` one after another. The same posts then run again with every limit
at one request at a time (the serial configuration), over a fresh data directory so neither run
is helped by the other's search and page caches.

From the stand-ins' request log (monotonic start and end of every request) each post gets:
model calls in total and on the critical path ("waves": the longest chain of calls each starting
after the previous one ended), searches, page and robots.txt fetches, the summed request time
(what the check would cost with every request one after another: the analytic serial time) and
the local time (no request in flight: embedding, extraction, storage).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from bots.standins import (
    Call,
    CallLog,
    ModelStandin,
    ScriptedClaim,
    ScriptedModel,
    ScriptedPost,
    SearchStandin,
    busy_seconds,
    instant,
    page_site,
    serving,
    waves,
)

if TYPE_CHECKING:
    from bots.settings import Settings

MUSE_SECONDS_PER_POST = 120.0  # the MUSE paper's reported time per post, for scale
GOALS = {"critical_path_model_calls": 3, "model_calls": 6, "speedup": 3.0}

# The posts, and what a capable model and the publishers' articles say about their claims:
# `key: value` lines, an indented line continues the value; `true:`/`false:` starts a claim.
_SCRIPT = """\
post: BREAKING: The Great Wall of China is the only man-made structure you can see from the
  Moon with the naked eye. And it was built in just ten years!
false: The Great Wall of China is visible from the Moon with the naked eye.
queries: Great Wall of China visible from Moon | astronauts see Great Wall from space
fact: Astronauts who walked on the Moon have said that no man-made structure, including the
  Great Wall of China, can be seen from there with the naked eye.
context: The wall is very long but mostly only a few metres wide, and its colour is close to
  that of the land around it, so from the Moon it cannot be seen.
context: From low Earth orbit, about 400 kilometres up, astronauts say spotting the Great Wall
  needs ideal light and usually a camera lens.
context: The myth that the Great Wall is visible from the Moon appeared in print decades before
  anyone had travelled to space.
explanation: No one on the Moon can see the Great Wall with the naked eye; astronauts who went
  there say no man-made structure is visible from that distance.
false: The Great Wall of China was built in ten years.
queries: how long did it take to build the Great Wall of China
fact: Historians say the Great Wall of China was built over roughly two thousand years, by many
  dynasties, not in a single decade.
context: The earliest walls were built in the seventh century BC, and much of the brick Great
  Wall seen today was built under the Ming dynasty.
context: Construction of the Great Wall of China went on in stages for centuries, with sections
  repaired, rebuilt and extended by later rulers.
context: No single decade, ruler or dynasty built the Great Wall of China, historians of the
  wall agree.
explanation: The Great Wall was built in stages over about two thousand years, not in ten.

post: Einstein failed maths at school and still won the Nobel Prize for his theory of
  relativity. Born in Germany in 1879, he proves that grades mean nothing!
false: Albert Einstein failed mathematics at school.
queries: Einstein failed math at school myth
fact: School records show that Albert Einstein did not fail mathematics; he had mastered
  calculus before he was fifteen.
context: Einstein's school reports from Switzerland show top marks in algebra and geometry, the
  records of his mathematics lessons show.
context: The story that Einstein failed mathematics may come from a confusion between two Swiss
  grading scales used at his school.
context: Einstein himself said he never failed in mathematics at school.
explanation: Einstein did not fail mathematics; his school records show excellent marks.
false: Albert Einstein won the Nobel Prize for his theory of relativity.
queries: Einstein Nobel Prize 1921 reason
fact: Albert Einstein received the 1921 Nobel Prize in Physics for his explanation of the
  photoelectric effect, not for his theory of relativity.
context: The Nobel committee's citation for Einstein's prize in physics names his services to
  theoretical physics and the law of the photoelectric effect.
context: Relativity was still disputed in the early 1920s, and the Nobel committee avoided
  giving Einstein the prize for it.
context: Einstein's Nobel Prize was awarded in 1922, for the year 1921.
explanation: Einstein's Nobel Prize was for the photoelectric effect, not for relativity.
true: Albert Einstein was born in Germany in 1879.
queries: Albert Einstein birthplace 1879
fact: Albert Einstein was born on 14 March 1879 in Ulm, a city in southern Germany.
context: Einstein's family moved from Ulm to Munich, in Germany, when Albert Einstein was a
  baby, a year after he was born.
context: Einstein later renounced German citizenship and became a Swiss citizen in 1901,
  decades after he was born in Germany.
context: The house in Ulm where Einstein was born in 1879 was destroyed in 1944.
explanation: Einstein was indeed born in Ulm, Germany, in March 1879.

post: Goldfish have a three-second memory and bats are completely blind. Nature is wild.
false: Goldfish have a memory of only three seconds.
queries: goldfish three second memory myth | goldfish memory experiments
fact: Experiments have shown that goldfish can remember feeding signals and routes for months,
  far longer than three seconds.
context: Researchers trained goldfish to push a lever for food, and the goldfish remembered it
  at the same time of day weeks later.
context: The three-second goldfish memory is a popular myth with no study behind it, biologists
  who study fish memory say.
context: Goldfish can also learn to tell colours, sounds and shapes apart, tests of their
  memory show.
explanation: Goldfish remember things for months; the three-second memory is a myth.
false: Bats are completely blind.
queries: are bats blind
fact: No species of bat is blind: bats can see, and many fruit bats rely on good eyesight
  rather than echolocation.
context: Bats that hunt insects use echolocation in the dark but also have working eyes that
  are sensitive to dim light.
context: Some bats can even see ultraviolet light, studies of bat eyes have found.
context: The saying 'blind as a bat' is wrong, zoologists say: bats are not blind.
explanation: Bats are not blind; all bats can see, and some rely mostly on their eyesight.

post: Lightning never strikes the same place twice, so tall buildings are safe in storms. Also,
  Mount Everest is the tallest mountain on Earth measured from base to peak.
false: Lightning never strikes the same place twice.
queries: lightning strikes same place twice | Empire State Building lightning
fact: Lightning often strikes the same place more than once; the Empire State Building is hit
  about twenty to twenty-five times a year.
context: Tall, pointed and isolated objects are struck by lightning again and again,
  meteorologists say, because they offer the easiest path.
context: A single lightning flash can even strike the ground in two or more places, high-speed
  cameras show.
context: The idea that lightning never strikes twice is a saying, not science, weather services
  say.
explanation: Lightning does strike the same place twice; tall buildings are hit many times.
false: Mount Everest is the tallest mountain on Earth measured from base to peak.
queries: tallest mountain base to peak Mauna Kea
fact: Measured from base to peak, Mauna Kea in Hawaii is taller than Mount Everest, rising more
  than 10,000 metres from the ocean floor.
context: Mount Everest has the highest summit above sea level, at 8,849 metres, but it rises
  from a high plateau, so it is not the tallest from base to peak.
context: Most of Mauna Kea is under the Pacific Ocean, which is why its height above sea level
  is only 4,207 metres.
context: Geographers distinguish a mountain's height above sea level from its height from base
  to peak, and Everest leads only the first list.
explanation: Everest has the highest summit, but Mauna Kea is taller from base to peak.

post: Humans only use 10 percent of their brains. Your heart stops every time you sneeze! And
  the Eiffel Tower grows about 15 centimetres taller in the summer heat.
false: Humans only use 10 percent of their brains.
queries: humans use 10 percent of brain myth
fact: Brain scans show that people use virtually all of their brain, and even simple tasks
  activate areas across it.
context: Damage to almost any part of the brain has effects, neurologists note, which would not
  be so if humans used only 10 percent of their brains.
context: The brain uses about 20 percent of the body's energy, far too much for an organ that
  is 90 percent idle.
context: The 10 percent brain myth has been traced to misquoted psychologists of the early
  twentieth century.
explanation: People use virtually all of their brain; the 10 percent figure is a myth.
false: The human heart stops every time you sneeze.
queries: does your heart stop when you sneeze
fact: Cardiologists say the heart does not stop during a sneeze; the change in chest pressure
  can only alter the heartbeat's rhythm briefly.
context: When you sneeze, the pressure in your chest rises and blood flow back to the heart
  changes for a moment, which can delay the next heartbeat.
context: The heart's electrical activity carries on through a sneeze, heart recordings show, so
  the heart does not stop.
context: The belief that the heart stops when you sneeze may explain the custom of saying bless
  you, historians suggest.
explanation: The heart keeps beating when you sneeze; only its rhythm may change briefly.
true: The Eiffel Tower grows about 15 centimetres taller in summer heat.
queries: Eiffel Tower taller in summer heat expansion
fact: Engineers say the iron of the Eiffel Tower expands in summer heat, which can make the
  tower up to 15 centimetres taller.
context: Thermal expansion makes metal structures such as the Eiffel Tower grow in heat and
  shrink in cold, and the tower's height changes with the seasons.
context: On hot days the Eiffel Tower also leans slightly away from the sun, because the side
  facing the sun expands more.
context: The Eiffel Tower is about 330 metres tall with its antennas, and its height in summer
  is a few centimetres more than in winter.
explanation: Yes: the Eiffel Tower's iron expands in the heat, making it up to 15 cm taller.

post: Vikings wore horned helmets into battle, and they reached North America around the year
  1000, long before Columbus.
false: Vikings wore horned helmets into battle.
queries: Viking horned helmets myth
fact: Archaeologists have found no horned helmets from the Viking Age; the image comes from
  nineteenth-century costume designs for operas.
context: The only well-preserved Viking helmet ever found, at Gjermundbu in Norway, is a
  rounded iron cap with no horns.
context: Horns would have been a handicap in battle, historians of Viking warfare say, and
  Vikings did not wear horned helmets.
context: Horned helmets older than the Vikings were used in rituals in the Bronze Age, not in
  battle.
explanation: Vikings did not wear horned helmets; the image comes from 19th-century operas.
true: Vikings reached North America around the year 1000.
queries: Vikings North America year 1000 L'Anse aux Meadows
fact: Excavations at L'Anse aux Meadows in Newfoundland show that Vikings reached North America
  around the year 1000.
context: Tree rings in wood cut by Vikings at L'Anse aux Meadows date the Viking presence in
  North America to the year 1021.
context: The Norse sagas tell of Leif Erikson sailing to a land called Vinland, which Vikings
  reached from Greenland.
context: The Viking site in North America was found in 1960 and is a UNESCO World Heritage
  Site.
explanation: Yes: Vikings reached Newfoundland around the year 1000, long before Columbus.
"""


def parse_script(script: str) -> tuple[ScriptedPost, ...]:
    """Return the posts a script describes."""
    fields: list[tuple[str, str]] = []
    for line in script.splitlines():
        if line.startswith("  ") and fields:
            key, value = fields.pop()
            fields.append((key, f"{value} {line.strip()}"))
        elif line.strip():
            key, _, value = line.partition(": ")
            fields.append((key, value.strip()))
    posts: list[tuple[str, list[dict[str, list[str]]]]] = []
    for key, value in fields:
        if key == "post":
            posts.append((value, []))
        elif key in ("true", "false"):
            posts[-1][1].append({"text": [value], "accurate": [key]})
        else:
            posts[-1][1][-1].setdefault(key, []).append(value)
    return tuple(
        ScriptedPost(
            text,
            tuple(
                ScriptedClaim(
                    text=c["text"][0],
                    queries=tuple(q.strip() for q in c["queries"][0].split("|")),
                    accurate=c["accurate"][0] == "true",
                    fact=c["fact"][0],
                    context=tuple(c["context"]),
                    explanation=c["explanation"][0],
                )
                for c in claims
            ),
        )
        for text, claims in posts
    )


POSTS = parse_script(_SCRIPT)


@dataclass(frozen=True)
class _Timed:
    """One post's check as the benchmark saw it."""

    start: float  # time.monotonic()
    end: float
    label: str
    claims: int
    stages: dict[str, float]  # the check's own stage timings, in seconds


def _post_figures(timed: _Timed, calls: Sequence[Call]) -> dict[str, Any]:
    model = [c for c in calls if c.kind.startswith("model:")]
    searches = [c for c in calls if c.kind == "search"]
    fetches = [c for c in calls if c.kind in ("page", "robots")]
    seconds = timed.end - timed.start
    local = seconds - busy_seconds(calls, timed.start, timed.end)
    spans = {
        kind: round(max(c.end for c in group) - min(c.start for c in group), 2)
        for kind, group in (("model", model), ("search", searches), ("fetch", fetches))
        if group
    }
    return {
        "seconds": round(seconds, 2),
        "label": timed.label,
        "claims": timed.claims,
        "model_calls": len(model),
        "model_calls_critical_path": waves(model),
        "model_calls_by_stage": dict(Counter(c.kind.removeprefix("model:") for c in model)),
        "searches": len(searches),
        "search_waves": waves(searches),
        "page_fetches": sum(c.kind == "page" for c in fetches),
        "robots_fetches": sum(c.kind == "robots" for c in fetches),
        "fetch_waves": waves(fetches),
        "request_seconds": round(sum(c.seconds for c in calls), 2),
        "local_seconds": round(local, 2),
        "first_to_last_request_seconds": spans,
        "stage_seconds": {stage: round(s, 2) for stage, s in timed.stages.items()},
    }


def _mean(values: Sequence[float]) -> float:
    return round(statistics.fmean(values), 2) if values else 0.0


def _summary(posts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    stages: defaultdict[str, list[float]] = defaultdict(list)
    for post in posts:
        for stage, seconds in post["stage_seconds"].items():
            stages[stage].append(seconds)
    # A stage that ran for only some posts (a refinement round) still counts 0 for the others.
    stage_means = {s: round(sum(v) / len(posts), 2) for s, v in stages.items()}
    seconds = [p["seconds"] for p in posts]
    return {
        "seconds_p50": round(statistics.median(seconds), 2),
        "seconds_mean": _mean(seconds),
        "model_calls_mean": _mean([p["model_calls"] for p in posts]),
        "model_calls_max": max(p["model_calls"] for p in posts),
        "model_calls_critical_path_max": max(p["model_calls_critical_path"] for p in posts),
        "searches_mean": _mean([p["searches"] for p in posts]),
        "search_waves_mean": _mean([p["search_waves"] for p in posts]),
        "page_fetches_mean": _mean([p["page_fetches"] for p in posts]),
        "robots_fetches_mean": _mean([p["robots_fetches"] for p in posts]),
        "request_seconds_mean": _mean([p["request_seconds"] for p in posts]),
        "local_seconds_mean": _mean([p["local_seconds"] for p in posts]),
        "stage_seconds_mean": dict(sorted(stage_means.items(), key=lambda kv: -kv[1])),
        "dominant_stage": max(stage_means, key=lambda s: stage_means[s], default=None),
    }


def _ratio(slow: float, fast: float) -> float | None:
    return round(slow / fast, 2) if fast > 0 else None


@click.command("latency")
@click.option(
    "--posts",
    type=click.IntRange(1, len(POSTS)),
    default=5,
    show_default=True,
    help="Text posts to check (each with 2-3 claims).",
)
@click.option("--model-delay", type=float, default=1.5, show_default=True, help="Seconds a call.")
@click.option(
    "--search-delay", type=float, default=0.5, show_default=True, help="Seconds a search."
)
@click.option("--page-delay", type=float, default=0.8, show_default=True, help="Seconds a page.")
@click.option(
    "--robots-delay", type=float, default=0.2, show_default=True, help="Seconds a robots.txt."
)
@click.option(
    "--results", type=click.IntRange(1, 50), default=5, show_default=True, help="Pages a search."
)
@click.option(
    "--sites", type=click.IntRange(1, 64), default=8, show_default=True, help="Publisher sites."
)
@click.option("--serial/--no-serial", default=True, show_default=True, help="Also run serially.")
@click.option("--report", "report_path", type=click.Path(path_type=Path), help="Write JSON here.")
def latency(
    posts: int,
    model_delay: float,
    search_delay: float,
    page_delay: float,
    robots_delay: float,
    results: int,
    sites: int,
    serial: bool,
    report_path: Path | None,
) -> None:
    """Time text posts end to end through App.check against delayed local stand-ins.

    The model (an OpenAI-compatible stand-in answering claims, extraction and judge as a
    capable model would), SearXNG and the publisher sites (one loopback address each, with
    robots.txt) all answer after their delay. The posts run once with the default limits and
    once one request at a time, each over a fresh data directory (empty caches).

    \b
    Examples:
      factbot bench latency
      factbot bench latency --posts 1 --model-delay 0.05 --search-delay 0.05 --page-delay 0.05
    """
    from bots.app import App
    from pipeline.posts import post_from_text

    chosen = POSTS[:posts]
    log = CallLog()

    async def check_all(app: App, posts: Sequence[ScriptedPost]) -> list[_Timed]:
        timed = []
        for scripted in posts:
            post = post_from_text(scripted.text, max_chars=app.settings.max_post_chars)
            start = time.monotonic()
            check = await app.check(post)
            end = time.monotonic()
            stages: defaultdict[str, float] = defaultdict(float)
            for timing in check.timings:
                stages[timing.stage] += timing.seconds
            timed.append(
                _Timed(start, end, check.verdict.label.value, len(check.claims), dict(stages))
            )
        return timed

    def run(settings: Settings, posts: Sequence[ScriptedPost]) -> list[_Timed]:
        app = App(settings)
        try:
            app.embedder.warm_up()  # loading the model is start-up, not a check's time
            app.store  # noqa: B018 - open the database and load the seed sources now
            return asyncio.run(check_all(app, posts))
        finally:
            app.close()

    with ExitStack() as stack:
        claims = [claim for post in POSTS for claim in post.claims]
        pages = [
            page_site(n, log, claims=claims, delay=page_delay, robots_delay=robots_delay)
            for n in range(sites)
        ]
        search = SearchStandin(
            "127.0.0.1",
            log,
            claims=claims,
            sites=[p.base for p in pages],
            results=results,
            delay=search_delay,
        )
        model = ModelStandin("127.0.0.1", log, model=ScriptedModel(POSTS), delay=model_delay)
        servers = (*pages, search, model)
        stack.enter_context(serving(*servers))
        hosts = sorted({str(p.server_address[0]) for p in pages} | {"127.0.0.1"})
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="factbot-latency-")))

        def settings(name: str) -> Settings:
            return _settings(
                tmp / name,  # a fresh data directory: empty search and page caches
                searxng_url=search.base,
                model_url=model.base_url,
                hosts=hosts,
                serial=name == "serial",
            )

        with instant(*servers):  # first-use costs (imports, kernels) are not a check's time
            run(settings("warm-up"), POSTS[-1:])
        runs: dict[str, list[dict[str, Any]]] = {}
        for name in ("parallel", "serial") if serial else ("parallel",):
            timed = run(settings(name), chosen)
            runs[name] = [_post_figures(t, log.between(t.start, t.end)) for t in timed]

    figures = _figures(runs, chosen, hosts, results=results)
    figures["delays"] = {
        "model": model_delay,
        "search": search_delay,
        "page": page_delay,
        "robots": robots_delay,
    }
    click.echo(json.dumps(figures, indent=2))
    if report_path:
        report_path.write_text(json.dumps(figures, indent=2), encoding="utf-8")


def _settings(
    data_dir: Path, *, searxng_url: str, model_url: str, hosts: Sequence[str], serial: bool
) -> Settings:
    """Return settings over the stand-ins: the defaults, or every limit at one at a time."""
    from pydantic import SecretStr

    from bots.settings import (
        FetchSettings,
        ModelSettings,
        ReferenceSettings,
        SearchSettings,
        Settings,
    )

    search = SearchSettings(providers=["searxng"], searxng_url=searxng_url)
    fetch = FetchSettings(allowed_networks=tuple(f"{h}/32" for h in hosts))
    model = ModelSettings(
        mode="endpoint", base_url=model_url, api_key=SecretStr("standin"), model="standin"
    )
    if serial:
        search = search.model_copy(update={"concurrency_per_provider": 1})
        fetch = fetch.model_copy(update={"max_concurrency": 1, "per_host": 1})
        model = model.model_copy(update={"max_concurrency": 1})
    return Settings(
        data_dir=data_dir,
        log_level="WARNING",
        search=search,
        fetch=fetch,
        model=model,
        references=ReferenceSettings(check_reachable="always"),
    )


def _figures(
    runs: dict[str, list[dict[str, Any]]],
    posts: Sequence[ScriptedPost],
    hosts: Sequence[str],
    *,
    results: int,
) -> dict[str, Any]:
    """Return the report: each run's posts and summary, the speed-ups, and the goals met."""
    summaries = {name: _summary(per_post) for name, per_post in runs.items()}
    parallel = summaries["parallel"]
    fast = parallel["seconds_mean"]
    # Every request one after another, plus (or without) the time no request was in flight.
    requests = parallel["request_seconds_mean"]
    analytic = _mean([p["request_seconds"] + p["local_seconds"] for p in runs["parallel"]])
    measured = _ratio(summaries["serial"]["seconds_mean"], fast) if "serial" in runs else None
    speedup = measured if measured is not None else _ratio(analytic, fast)
    return {
        "posts": len(posts),
        "claims": sum(len(p.claims) for p in posts),
        "results_per_search": results,
        "page_hosts": len({h for h in hosts if h != "127.0.0.1"}) or 1,
        "parallel": {"summary": parallel, "per_post": runs["parallel"]},
        "serial": (
            {"summary": summaries["serial"], "per_post": runs["serial"]}
            if "serial" in runs
            else None
        ),
        "speedup_measured": measured,
        "analytic_serial_seconds_mean": analytic,
        "speedup_analytic": _ratio(analytic, fast),
        "analytic_requests_only_seconds_mean": requests,
        "speedup_analytic_requests_only": _ratio(requests, fast),
        "muse_seconds_per_post": MUSE_SECONDS_PER_POST,
        "speedup_vs_muse": _ratio(MUSE_SECONDS_PER_POST, parallel["seconds_p50"]),
        "goals": {
            "critical_path_model_calls_max": parallel["model_calls_critical_path_max"],
            "critical_path_model_calls_ok": parallel["model_calls_critical_path_max"]
            <= GOALS["critical_path_model_calls"],
            "model_calls_max": parallel["model_calls_max"],
            "model_calls_ok": parallel["model_calls_max"] <= GOALS["model_calls"],
            "speedup": speedup,
            "speedup_ok": speedup is not None and speedup >= GOALS["speedup"],
        },
    }

"""`factbot eval` and `factbot bench`: measured figures, printed and written as JSON."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from bots.cli.eval_matching import claim_matching

if TYPE_CHECKING:
    from bots.app.root import App
    from bots.evaluation.averitec import EvalClaim
    from bots.evaluation.journal import Journal
    from bots.settings import Settings
    from pipeline.records.domain import Check
    from pipeline.run import CheckConfig, CheckDeps
    from storage import Store


@click.group("eval")
def eval_group() -> None:
    """Evaluate the pipeline on public benchmarks.

    \b
    Examples:
      factbot eval averitec --data ../shared/data/eval/averitec/dev.json --mode gold
      factbot eval averitec --data ../shared/data/eval/averitec/dev.json --mode retrieval \
          --limit 100
      factbot eval averitec --data ../shared/data/eval/averitec/dev.json --model \
          --sample 40 --seed 0
      factbot eval averitec --data ../shared/data/eval/averitec/dev.json --model \
          --sample 100 --seed 0 --resume reports/gold-local.jsonl
      factbot eval relevance --data ../shared/data/eval/averitec/dev.json
    """


def _write_report(report: dict[str, Any], path: Path | None) -> None:
    click.echo(json.dumps(report, indent=2))
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report, indent=2), encoding="utf-8")
        click.echo(f"report written to {path}", err=True)


@eval_group.command("averitec")
@click.option("--data", type=click.Path(exists=True, dir_okay=False, path_type=Path), required=True)
@click.option("--mode", type=click.Choice(["gold", "retrieval"]), default="gold", show_default=True)
@click.option("--limit", type=int, help="Only the first N claims.")
@click.option(
    "--sample",
    type=click.IntRange(min=1),
    help="N claims drawn evenly across gold labels (after --limit); same --seed, same claims.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of --sample.")
@click.option(
    "--outside-sample",
    type=click.IntRange(min=1),
    help="Draw only from the claims outside `--sample N --seed 0` (the reported sample), to "
    "calibrate a threshold or a rule on data that is not reported on.",
)
@click.option("--report", "report_path", type=click.Path(path_type=Path), help="Write JSON here.")
@click.option(
    "--judge",
    "judge_choice",
    type=click.Choice(["verifier", "model", "hybrid", "review"]),
    help="Who decides: factbot's trained verifier [default], the language model (configured "
    "endpoint, else the local model), the model settled towards a confident verifier, or "
    "rated fact-check matching alone (the judge before the verifier).",
)
@click.option(
    "--claims",
    "claims_stage",
    type=click.Choice(["heuristic", "model"]),
    help="With --judge verifier: where its claims come from, the heuristic stage or one "
    "language-model call (default: FACTBOT_VERIFIER__CLAIMS).",
)
@click.option(
    "--model/--no-model",
    "use_model",
    default=False,
    help="Same as --judge model.",
)
@click.option(
    "--graph/--no-graph",
    "use_graph",
    default=None,
    help="Graph verification on or off (default: FACTBOT_GRAPH__ENABLED, on).",
)
@click.option(
    "--resume",
    "resume_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Keep each claim's outcome in this JSON-lines file as it is decided and skip the "
    "claims it already holds; the report is computed from the file.",
)
@click.option(
    "--rerun-fallbacks",
    is_flag=True,
    help="With --resume: run again the claims FILE records as decided by a fallback (a model "
    "that timed out or died); their new outcome replaces the old.",
)
@click.option("--progress/--no-progress", default=True)
@click.pass_context
def averitec(
    ctx: click.Context,
    data: Path,
    mode: str,
    limit: int | None,
    sample: int | None,
    seed: int,
    outside_sample: int | None,
    report_path: Path | None,
    judge_choice: str | None,
    claims_stage: str | None,
    use_model: bool,
    use_graph: bool | None,
    resume_path: Path | None,
    rerun_fallbacks: bool,
    progress: bool,
) -> None:
    """Score verdicts on AVeriTeC claims (gold evidence, or pooled retrieval).

    With --resume FILE the run can be cut (Ctrl-C, a crash, the end of a session) and started
    again with the same command: the claims in FILE are not run again.
    """
    from tqdm import tqdm

    from bots.cli.context import app_from as _app
    from bots.evaluation.averitec import calibration_part, load_averitec, stratified_sample
    from bots.evaluation.journal import journal_outcomes
    from bots.evaluation.score import score
    from pipeline.judge.claimreview import ReviewMatchJudge

    app = _app(ctx)
    judge_choice, use_model, model_claims = _resolve_judge(
        judge_choice, use_model, claims_stage or None, default_claims=app.settings.verifier.claims
    )
    app.settings = _run_settings(app.settings, judge_choice, model_claims, use_graph)
    graphs = app.resources.graphs
    pool = load_averitec(data, limit=limit)  # retrieval mode indexes all of it
    drawn = calibration_part(pool, outside_sample, seed=0) if outside_sample else pool
    claims = stratified_sample(drawn, sample, seed=seed) if sample is not None else drawn
    config = app.checks.check_config("verifier" if judge_choice == "verifier" else "model")
    run = {"data": str(data.resolve()), "mode": mode, "model": use_model, "judge": judge_choice}
    header = {
        **run,
        "claims": "model" if use_model or model_claims else "heuristic",
        "graph": graphs is not None,
        "limit": limit,
        "sample": sample,
        "seed": seed,
        "outside_sample": outside_sample,
        **_measured_knobs(app.settings, config, judge_choice),
    }
    journal, done = _open_journal(ctx, resume_path, header, claims, rerun_fallbacks)
    todo = [c for c in claims if c.index not in done]
    embedder = app.embedder
    threshold = app.settings.retrieval.review_match_threshold
    judge = ReviewMatchJudge(embedder, match_threshold=threshold)
    bar = tqdm(
        total=len(claims), initial=len(done), unit="claim", disable=not progress, file=sys.stderr
    )

    started = time.perf_counter()
    outcomes, judge_name = asyncio.run(
        _run_claims(
            app,
            todo,
            pool,
            mode=mode,
            judge=judge,
            judge_choice=judge_choice,
            model_claims=model_claims,
            embedder=embedder,
            graphs=graphs,
            config=config,
            on_claim=lambda: bar.update(),
            on_outcome=_recorder(app, journal, watch_model=use_model or model_claims),
        )
    )
    bar.close()
    if resume_path is not None:
        outcomes = journal_outcomes(resume_path, claims)  # the file is the record
    report = score(outcomes, seed=seed)
    report.update(
        {
            "mode": mode,
            "judge": judge_name,
            "graph": graphs is not None,
            "sample": _sample_facts(
                sample, seed, len(drawn), outside_sample, limit, report["gold_labels"]
            ),
            "data": str(data),
            "max_evidence": config.max_evidence,
            "resume": _resume_facts(resume_path, len(done), len(todo)),
            "wall_seconds": round(time.perf_counter() - started, 1),
        }
    )
    _write_report(report, report_path)


def _recorder(app: App, journal: Journal | None, *, watch_model: bool) -> Callable[[Any], None]:
    """Return what records each outcome in the journal (when there is one)."""

    def on_outcome(outcome: Any) -> None:
        # A killed local server turns every later claim into a fallback: stop instead of
        # recording them, so the same command resumes once the machine is quiet.
        if watch_model and app.resources.local_model.died:
            raise click.ClickException(
                "the local model server exited during the run; claim "
                f"{outcome.claim.index} and later were not recorded: rerun the same command"
                + (" (with --rerun-fallbacks)" if journal is not None else "")
            )
        if journal is not None:
            journal.append(outcome)

    return on_outcome


def _open_journal(
    ctx: click.Context,
    path: Path | None,
    header: dict[str, Any],
    claims: list[EvalClaim],
    rerun_fallbacks: bool,
) -> tuple[Journal | None, dict[int, Any]]:
    """Open the run's journal (with --resume) and return it with the outcomes it holds."""
    from bots.evaluation.journal import Journal, JournalMismatchError

    if path is None:
        if rerun_fallbacks:
            raise click.UsageError("--rerun-fallbacks needs --resume FILE")
        return None, {}
    journal = Journal(path, header)
    try:
        done = journal.open(claims)
    except JournalMismatchError as exc:
        raise click.ClickException(str(exc)) from exc
    ctx.call_on_close(journal.close)
    if rerun_fallbacks:
        done = {i: o for i, o in done.items() if not o.fallback}
    return journal, done


def _sample_facts(
    sample: int | None,
    seed: int,
    drawn_from: int,
    outside_sample: int | None,
    limit: int | None,
    labels: Any,
) -> dict[str, Any]:
    """Return which claims a run scored: a stratified sample, or the first `limit`."""
    if sample is None:
        return {"size": None, "first": limit, "labels": labels}
    return {
        "size": sample,
        "seed": seed,
        "stratified": True,
        "drawn_from": drawn_from,
        "outside_sample": {"size": outside_sample, "seed": 0} if outside_sample else None,
        "labels": labels,
    }


def _resume_facts(path: Path | None, from_file: int, run_now: int) -> dict[str, Any] | None:
    """Return what a resumed run took from its journal and ran now (None without --resume)."""
    if path is None:
        return None
    return {"file": str(path), "claims_from_file": from_file, "claims_run_now": run_now}


def _resolve_judge(
    judge_choice: str | None, use_model: bool, claims_stage: str | None, *, default_claims: str
) -> tuple[str, bool, bool]:
    """Return the judge, whether it uses the language model, and whether claims come from it."""
    if judge_choice is None:
        judge_choice = "model" if use_model else "verifier"
    elif use_model and judge_choice != "model":
        raise click.UsageError("--model is --judge model: give one of them")
    if claims_stage is not None and judge_choice != "verifier":
        raise click.UsageError("--claims is for --judge verifier (the model path has its own)")
    model_claims = judge_choice == "verifier" and (claims_stage or default_claims) == "model"
    return judge_choice, judge_choice in ("model", "hybrid"), model_claims


def _run_settings(
    settings: Settings, judge_choice: str, model_claims: bool, use_graph: bool | None
) -> Settings:
    """Return settings with the run's judge, claims and graph option, to set before anything
    is built: whether the local model's server starts, and whether the embedder and the stance
    model leave it the CPU, follow the judge and claims."""
    verifier = settings.verifier.model_copy(
        update={"judge": judge_choice, "claims": "model" if model_claims else "heuristic"}
    )
    graph = settings.graph.model_copy(
        update={"enabled": settings.graph.enabled if use_graph is None else use_graph}
    )
    return settings.model_copy(update={"verifier": verifier, "graph": graph})


def _measured_knobs(settings: Settings, config: CheckConfig, judge_choice: str) -> dict[str, Any]:
    """Return the knobs that change what is measured: another value is another run."""
    vs = settings.verifier
    verifier_knobs = {
        "model_dir": str(vs.model_dir.resolve()) if vs.model_dir else "shipped",
        "support": vs.support,
        "refute": vs.refute,
        "mixed": vs.mixed,
        "veto": vs.veto,
        "confident": vs.confident,
    }
    return {
        "max_claims": config.max_claims,
        "max_evidence": config.max_evidence,
        "relevance_threshold": config.relevance_threshold,
        "refine_rounds": settings.model.refine_rounds,
        "verifier": verifier_knobs if judge_choice in ("verifier", "hybrid") else None,
    }


async def _evidence_deps(
    store: Store, claims: list[EvalClaim], *, embedder: Any, judge: Any, **deps: Any
) -> CheckDeps:
    """Ingest the claims' evidence documents and return the dependencies of a check."""
    from pipeline.credibility.policy import SourcePolicy
    from pipeline.evidence.ingest import Ingester
    from pipeline.run import CheckDeps

    ingester = Ingester(store.documents, embedder)
    seen: set[str] = set()
    for claim in claims:
        for document in claim.documents:
            if document.url not in seen:
                seen.add(document.url)
                await ingester.add_document(document)
    await ingester.finish()
    # Evaluation data is unrated: every publisher is citable, ranked by relevance.
    rater = SourcePolicy(store.sources, unrated="allow")
    return CheckDeps(index=store.documents, embedder=embedder, rater=rater, judge=judge, **deps)


async def _run_claims(
    app: App,
    todo: list[EvalClaim],
    pool: list[EvalClaim],
    *,
    mode: str,
    judge: Any,
    judge_choice: str,
    model_claims: bool,
    config: CheckConfig,
    embedder: Any,
    graphs: Any,
    on_claim: Callable[[], object],
    on_outcome: Callable[[Any], None],
) -> tuple[list[Any], str]:
    """Check the claims still to do, each against its own evidence (gold) or all of the pool's
    (retrieval); return the outcomes and the judge's name."""
    from bots.evaluation.averitec import claim_post, evaluate
    from pipeline.run import run_check
    from storage import Store

    use_model = judge_choice in ("model", "hybrid")
    judge_name = "verifier" if judge_choice == "verifier" else judge.name
    if not todo:  # every claim is in the journal: nothing to start
        return [], judge_choice if use_model else judge_name
    async with contextlib.AsyncExitStack() as stack:
        stack.push_async_callback(app.close_fetcher)  # the model client, in this loop
        model = (
            await app.checks.model_deps(fallback=judge, judge=judge_choice)  # type: ignore[arg-type]
            if use_model
            else None
        )
        if use_model and model is None:
            raise click.ClickException(
                "--model needs a language model: set FACTBOT_MODEL__BASE_URL or run "
                "`make model` for the local one"
            )
        if model is not None:
            judge_name = model.name if model.verifier is None else f"hybrid:{model.name}"
        claims_llm = None  # the verifier's claims model, made in the run's event loop
        if model_claims:
            claims_llm = await app.resources.llm()
            if claims_llm is None:
                raise click.ClickException(
                    "--claims model needs a language model: set FACTBOT_MODEL__BASE_URL or "
                    "run `make model` for the local one"
                )
        verifier = app.resources.verifier if judge_choice == "verifier" else None
        # The language stage as `factbot serve` runs it: a claim the stance model cannot read
        # is kept from it here too (pipeline/checking/languages.py).
        extra = {
            "graphs": graphs,
            "verifier": verifier,
            "claims_llm": claims_llm,
            "languages": app.resources.languages,
        }

        async def gold(claim: EvalClaim) -> Check:
            with Store.open(":memory:") as store:
                deps = await _evidence_deps(store, [claim], embedder=embedder, judge=judge, **extra)
                return await run_check(claim_post(claim), deps=deps, config=config, model=model)

        if mode == "gold":
            runs = await evaluate(todo, run=gold, on_claim=on_claim, on_outcome=on_outcome)
            return runs, judge_name
        with tempfile.TemporaryDirectory() as tmp, Store.open(Path(tmp) / "pool.db") as store:
            deps = await _evidence_deps(store, pool, embedder=embedder, judge=judge, **extra)

            async def pooled(claim: EvalClaim) -> Check:
                return await run_check(claim_post(claim), deps=deps, config=config, model=model)

            runs = await evaluate(todo, run=pooled, on_claim=on_claim, on_outcome=on_outcome)
            return runs, judge_name


@eval_group.command("compare")
@click.argument("first", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("second", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--report", "report_path", type=click.Path(path_type=Path), help="Write JSON here.")
def compare_runs(first: Path, second: Path, report_path: Path | None) -> None:
    """Compare two `eval averitec --resume` journals on the claims both hold.

    Prints each run's macro-F1 and accuracy, the difference (SECOND - FIRST) with a 95 % paired
    bootstrap interval, how many claims only one run got right, and true claims called false.
    """
    from bots.evaluation.journal import read_journal
    from bots.evaluation.score import compare

    runs = [list(read_journal(path).outcomes.values()) for path in (first, second)]
    if not all(runs):
        raise click.ClickException("both journals must hold decided claims")
    try:
        result = compare(*runs)
    except ValueError as exc:
        raise click.ClickException(f"{exc}: these journals are not runs on the same data") from exc
    result = {"first": str(first), "second": str(second), **result}
    text = json.dumps(result, indent=2)
    click.echo(text)
    if report_path is not None:
        report_path.write_text(text + "\n", encoding="utf-8")


@eval_group.command("relevance")
@click.option("--data", type=click.Path(exists=True, dir_okay=False, path_type=Path), required=True)
@click.option("--limit", type=int, help="Only the first N claims.")
@click.option(
    "--outside-sample",
    type=click.IntRange(min=1),
    help="Calibrate only on claims outside `eval averitec --sample N --seed S` (the report part).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of --outside-sample.")
@click.option("--report", "report_path", type=click.Path(path_type=Path), help="Write JSON here.")
@click.pass_context
def relevance(
    ctx: click.Context,
    data: Path,
    limit: int | None,
    outside_sample: int | None,
    seed: int,
    report_path: Path | None,
) -> None:
    """Calibrate the relevance threshold: own evidence passages vs other claims' passages."""
    import numpy as np

    from bots.cli.context import app_from as _app
    from bots.evaluation.averitec import calibration_part, load_averitec, relevance_calibration
    from pipeline.evidence.chunking import chunk_text

    app = _app(ctx)
    claims = load_averitec(data, limit=limit)
    if outside_sample is not None:
        claims = calibration_part(claims, outside_sample, seed=seed)
    texts: list[str] = []
    owners: list[int] = []
    for i, claim in enumerate(claims):
        for document in claim.documents:
            for passage in chunk_text(document.text):
                texts.append(f"{document.title}\n{passage}")
                owners.append(i)
    claim_vectors = app.embedder.embed_sync([c.text for c in claims], role="query")
    passage_vectors = app.embedder.embed_sync(texts)
    report = relevance_calibration(claim_vectors, passage_vectors, np.array(owners))
    report["claims"] = len(claims)
    report["passages"] = len(texts)
    report["outside_sample"] = (
        {"size": outside_sample, "seed": seed} if outside_sample is not None else None
    )
    _write_report(report, report_path)


eval_group.add_command(claim_matching)

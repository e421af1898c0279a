"""The classes of issue 44 drawn onto a random preemptive policy: ``preemptive_case(seed,
rates)`` takes ``preemptive_agreement.encodable_policy(seed)`` (the same text at every rate,
so a seed with no kind drawn names the policy of earlier campaigns) and, each with its own
chance (``KindRates``), adds

- ``bad-setting``: a param that makes `limit preemptions`, `resident` or `quantum`
  non-positive. Where the param's domain allows such a value (or the clause is a constant:
  `quantum -5`), `check` must refuse the policy with an error located at the clause
  (``refused``); where only values the domain does not declare (a param without a domain)
  or a hole `check` does not try are bad, `run --param` must refuse each (``bad_values``),
  located at the clause, and no verdict may rest on one;
- ``progress``: `job.progress` under `sqrt`, a division and comparisons (in `keep`, the order,
  the rule, the victims' order);
- ``failing-mechanism``: a `mechanism ... when` whose formula can fail (a division by a job
  attribute expression that can be 0, a `sqrt` of one that can be negative);
- ``overrun-extend``: verified and run under `--overrun extend` (jobs running past their
  estimates), half the time with the issue's `keep` that divides by
  `job.estimate - job.since_start`;
- ``machine``: a machine of P = 4 to 16 processors (a fixed capacity, or a third of the time
  none: verified for machines of at most P), verified with ``--processors P``, N and R kept
  small above P = 8.

Deterministic for a seed and the rates: the kinds are drawn from a stream of their own.
"""

from __future__ import annotations

import random

from attrs import frozen

KINDS = ("bad-setting", "progress", "failing-mechanism", "overrun-extend", "machine")
PROCESSORS = 8  # P where the `machine` kind is not drawn (the generator's machine)
MEMORY = 20


@frozen
class KindRates:
    """The chance of each kind per preemptive policy (0 to 1, drawn independently). Each
    costs a campaign little: a refused policy is not verified; P above 8 is verified with
    fewer slots (``bounds_for``)."""

    bad_setting: float = 0.15
    progress: float = 0.3
    failing_mechanism: float = 0.15
    overrun_extend: float = 0.25
    machine: float = 0.3

    def of(self, kind: str) -> float:
        return getattr(self, kind.replace("-", "_"))

    def as_dict(self) -> dict[str, float]:
        return {k: self.of(k) for k in KINDS}

    @classmethod
    def parse(cls, text: str) -> KindRates:
        """The campaigns' ``--kind-rates``: "KIND=P,..." over the defaults, or "none"."""
        if text.strip() == "none":
            return cls(0, 0, 0, 0, 0)
        given = dict(item.split("=", 1) for item in text.split(",") if item.strip())
        unknown = set(given) - set(KINDS)
        if unknown:
            raise SystemExit(f"--kind-rates: no kind {', '.join(sorted(unknown))}: "
                             f"{', '.join(KINDS)}")
        return cls(**{k.replace("-", "_"): float(given.get(k, v))
                      for k, v in cls().as_dict().items()})


NO_KINDS = KindRates(0, 0, 0, 0, 0)  # the policies of campaigns before issue 44


@frozen
class PreemptiveCase:
    seed: int
    text: str
    kinds: tuple[str, ...]  # of KINDS, drawn for this seed
    processors: int  # verify's P, the machine's cpus (the states', the runs')
    bounds: tuple[int, int]  # N waiting, R running slots
    overrun: str  # verify's and the runs' `--overrun`
    refused: str | None = None  # the clause `check` must refuse, as written
    # (param, value, the clause it makes non-positive): `run --param` must refuse each
    bad_values: tuple[tuple[str, str, str], ...] = ()
    fixed_machine: bool = True  # the machine's cpus fixed at P


def bounds_for(processors: int, bounds: tuple[int, int]) -> tuple[int, int]:
    """The slots to verify with on P processors: as given up to P = 8, one each above (each
    slot carries P processor terms: a policy then still verifies in seconds)."""
    return bounds if processors <= 8 else (1, 1)


def preemptive_case(seed: int, rates: KindRates | None = None,
                    bounds: tuple[int, int] = (2, 2)) -> PreemptiveCase:
    """The random preemptive policy of ``seed`` with the kinds ``rates`` draws."""
    from tests.support.preemptive_agreement import MACHINE, encodable_policy

    rates = rates or KindRates()
    text = encodable_policy(seed)
    rng = random.Random(f"issue44 {seed}")
    drawn = [k for k in KINDS if rng.random() < rates.of(k)]  # one draw per kind, always
    head, body = text.split("policy fuzz {\n", 1)
    assert head == MACHINE, "the generator's machine changed"
    lines = [x.strip() for x in body.rstrip().removesuffix("}").strip().splitlines()]
    params: list[str] = []
    case: dict = {"processors": PROCESSORS, "overrun": "estimate"}
    for kind in drawn:
        _ADD[kind](rng, lines, params, case)
    cpus = case["processors"]
    fixed = case.get("fixed_machine", True)
    machine = (f"machine m {{\n  resource cpus{f' = {cpus}' if fixed else ''}\n"
               f"  resource memory = {MEMORY}\n}}\n")
    out = machine + "".join(p + "\n" for p in params) + "policy fuzz {\n" + "".join(
        f"  {x}\n" for x in lines) + "}\n"
    return PreemptiveCase(seed, out, tuple(drawn), cpus, bounds_for(cpus, bounds),
                          case["overrun"], case.get("refused"),
                          tuple(case.get("bad_values", ())), fixed)


def _put(lines: list[str], clause: str, line: str) -> None:
    """``line`` in place of the clause's (its first word(s) ``clause``), or added last."""
    for i, x in enumerate(lines):
        if x.startswith(clause + " "):
            lines[i] = line
            return
    lines.append(line)


def _key(lines: list[str], key: str, first: bool = False) -> None:
    """An order key added to the order (first or last), or the order made of it."""
    i = next((i for i, x in enumerate(lines) if x.startswith("order ")), None)
    if i is None:
        lines.insert(1, f"order {key}")  # after `machine m`
    elif first:
        lines[i] = f"order {key}, " + lines[i].removeprefix("order ")
    else:
        lines[i] += f", {key}"


# -- the kinds -----------------------------------------------------------------------------------

# (clause, param, its declaration, the clause's formula, a value `run` must refuse or None:
# the domain itself allows a bad value, so `check` refuses the policy)
_SETTINGS = (
    ("limit preemptions", "lim", "param lim: int in [-2, 3] = 1", "lim", None),
    ("limit preemptions", "lim", "param lim: int in [1, 3] = 2", "-lim", None),
    ("limit preemptions", "lim", "param lim: int = 2", "lim", "-1"),
    # a hole `check` does not try (a wide domain: its ends, default, 0 and +-1 only)
    ("limit preemptions", "lim", "param lim: int in [0, 1000] = 3",
     "(lim - 7) * (lim - 7) - 1", "7"),
    ("resident", "rows", "param rows: int in [1, 4] = 2", "-rows", None),
    ("resident", "rows", "param rows: int in [0, 3] = 1", "rows", None),
    ("resident", "rows", "param rows: int = 2", "rows", "0"),
    ("resident", "rows", "param rows: int = 3", "rows - 2", "1"),
    ("quantum", "", "", "-5", None),
    ("quantum", "q", "param q: int in [0, 10] = 4", "q - 5", None),
    ("quantum", "q", "param q: int = 3", "q", "-5"),
)


def _bad_setting(rng: random.Random, lines: list[str], params: list[str], case: dict) -> None:
    clause, _, declaration, formula, bad = rng.choice(_SETTINGS)
    if declaration:
        params.append(declaration)
    _put(lines, clause, f"{clause} {formula}")
    if bad is None:
        case["refused"] = clause
    else:
        case.setdefault("bad_values", []).append((declaration.split()[1].rstrip(":"), bad,
                                                  clause))


_PROGRESS_KEEP = ("keep sqrt(job.progress * job.estimate - job.since_start) < 1",
                  "keep job.progress * job.estimate < job.since_start + 1",
                  "keep 1 / (1 - job.progress) < 2",
                  "keep job.since_start / (job.progress * job.estimate) < 2")
_PROGRESS_KEYS = ("job.progress desc", "sqrt(job.progress) asc",
                  "job.estimate / (job.progress + 1) asc",
                  "sqrt(job.progress * job.estimate - job.since_start) desc")
_PROGRESS_RULE = (" and victim.progress * victim.estimate >= victim.since_start",
                  " and cand.progress < victim.progress",
                  " and sqrt(victim.progress * victim.estimate - victim.since_start) >= 0",
                  " and victim.since_start / (victim.progress * victim.estimate) <= 1")
_PROGRESS_VICTIMS = ("victims order 1 / (1 - victim.progress) desc",
                     "victims order victim.progress asc")


def _progress(rng: random.Random, lines: list[str], params: list[str], case: dict) -> None:
    rule = any(x.startswith("preempt when ") for x in lines)
    places = ["keep", "order"] + (["rule", "victims"] if rule else [])
    for place in rng.sample(places, rng.randint(1, 2)):
        if place == "keep":
            _put(lines, "keep", rng.choice(_PROGRESS_KEEP))
        elif place == "order":
            _key(lines, rng.choice(_PROGRESS_KEYS))
        elif place == "rule":  # where it is now: an order clause may have come before
            i = next(i for i, x in enumerate(lines) if x.startswith("preempt when "))
            lines[i] += rng.choice(_PROGRESS_RULE)
        else:
            _put(lines, "victims order", rng.choice(_PROGRESS_VICTIMS))


_FAILING_MECHANISMS = ("10 / (job.procs - 1) > 1",  # the issue's: a job of one cpu
                       "job.estimate / (job.procs % 3) > 2",
                       "sqrt(job.estimate - 3) > 1",
                       "job.estimate / (job.id - 2) >= 1",
                       "100 / (job.procs - job.estimate) > 0")


def _failing_mechanism(rng: random.Random, lines: list[str], params: list[str],
                       case: dict) -> None:
    i = next(i for i, x in enumerate(lines) if x.startswith("mechanism "))
    kind = rng.choice(("suspend", "checkpoint", "requeue", "none"))
    lines.insert(i, f"mechanism {kind} when {rng.choice(_FAILING_MECHANISMS)}")


def _overrun_extend(rng: random.Random, lines: list[str], params: list[str],
                    case: dict) -> None:
    case["overrun"] = "extend"
    if rng.random() < 0.5:  # the issue's: defined while a job runs less than its estimate
        _put(lines, "keep", "keep 10 / (job.estimate - job.since_start) > 1")


def _machine(rng: random.Random, lines: list[str], params: list[str], case: dict) -> None:
    case["processors"] = rng.randint(4, 16)
    case["fixed_machine"] = rng.random() >= 1 / 3
    if rng.random() < 0.5:  # the formulas that turn at a machine size
        _key(lines, rng.choice(("10 / (job.procs % 8 + 1) asc", "10 / (job.procs % 8) asc")),
             first=True)


_ADD = {"bad-setting": _bad_setting, "progress": _progress,
        "failing-mechanism": _failing_mechanism, "overrun-extend": _overrun_extend,
        "machine": _machine}

"""papers/003's Table 3 as data: the disciplines, their policy files, and the paper's values.

Parsons & Sevcik, "Implementing Multiprocessor Scheduling Disciplines" (section 6.2,
Table 3): the mean response time (MRT) and makespan of the first 200 jobs of one experiment
per discipline and knowledge case, in seconds. Where a discipline did not finish "within a
reasonable amount of time" the paper gives a lower bound (``>``) and the number of tagged
jobs left unfinished; ``PaperValue.bound`` says so.

A discipline is a row of this table: its name, its file under ``examples/preemption/`` and
its family (the groups the paper's findings compare). The harness reads which of the
knowledge params (``demand``, ``speedup``) each file declares; nothing here says it.
"""

from __future__ import annotations

from attrs import frozen

CASES = ("none", "demand", "speedup", "both")
CASE_TITLES = {"none": "no knowledge", "demand": "service demand", "speedup": "speedup",
               "both": "both"}
# which knowledge each case gives the scheduler
KNOWLEDGE = {"none": {"demand": False, "speedup": False},
             "demand": {"demand": True, "speedup": False},
             "speedup": {"demand": False, "speedup": True},
             "both": {"demand": True, "speedup": True}}
KNOWLEDGE_PARAMS = ("demand", "speedup")

# the paper's families, as its findings name them (section 6.2)
RTC, SIMPLE, MIGRATABLE, MALLEABLE = "run-to-completion", "simple", "migratable", "malleable"


@frozen
class PaperValue:
    value: int  # seconds
    bound: bool = False  # a lower bound (the paper's ">")
    unfinished: int = 0  # tagged jobs the paper's run left unfinished


@frozen
class PaperCell:
    mrt: PaperValue
    makespan: PaperValue


@frozen
class Discipline:
    name: str
    file: str  # relative to the repository root
    family: str
    adaptive: bool
    paper: dict[str, PaperCell]  # by case


def gt(value: int, unfinished: int = 0) -> PaperValue:
    """The paper's "> value (unfinished)": a lower bound."""
    return PaperValue(value, True, unfinished)


def _cells(*values: int | PaperValue) -> dict[str, PaperCell]:
    """Eight values in Table 3's order: MRT and makespan for each case in CASES."""
    def one(v: int | PaperValue) -> PaperValue:
        return v if isinstance(v, PaperValue) else PaperValue(v)

    return {case: PaperCell(one(values[2 * i]), one(values[2 * i + 1]))
            for i, case in enumerate(CASES)}


DISCIPLINES: tuple[Discipline, ...] = (
    Discipline("LSF-RTC", "examples/preemption/lsf-rtc.pol", RTC, False,
               _cells(5853, 147951, 4040, 140342, 5279, 130361, 5627, 143507)),
    Discipline("LSF-RTC-AD", "examples/preemption/rtc-ad.pol", RTC, True,
               _cells(10611, 129093, 8713, 126531, 8034, 91003, 8946, 126917)),
    Discipline("LSF-RTC-ADSUBSET", "examples/preemption/rtc-adsubset.pol", RTC, True,
               _cells(8264, 76637, 8410, 81767, 8039, 73324, 8074, 75340)),
    Discipline("LSF-PREEMPT", "examples/preemption/lsf-preempt.pol", SIMPLE, False,
               _cells(5793, 145440, 5039, 143686, 5280, 130314, 5028, 143631)),
    Discipline("LSF-PREEMPT-AD", "examples/preemption/preempt-ad.pol", SIMPLE, True,
               _cells(gt(2293), gt(219105, 2), 1078, 127204, 2207, 172768, 821, 111489)),
    Discipline("LSF-MIG", "examples/preemption/lsf-mig.pol", MIGRATABLE, False,
               _cells(678, 83985, 662, 81836, 690, 82214, 660, 82708)),
    Discipline("LSF-MIG-AD", "examples/preemption/mig-ad.pol", MIGRATABLE, True,
               _cells(769, 88488, 858, 103876, 784, 86080, gt(1342), gt(192031, 1))),
    Discipline("LSF-MIG-ADSUBSET", "examples/preemption/mig-adsubset.pol", MIGRATABLE, True,
               _cells(770, 90789, 854, 106065, 769, 85828, gt(1347), gt(193772, 1))),
    Discipline("LSF-MALL-AD", "examples/preemption/mall-ad.pol", MALLEABLE, True,
               _cells(667, 77534, 632, 78760, 666, 78215, 650, 78840)),
    Discipline("LSF-MALL-ADSUBSET", "examples/preemption/mall-adsubset.pol", MALLEABLE, True,
               _cells(681, 78537, 680, 79191, 680, 76481, 644, 78065)),
)

# The cell the arrival rate is calibrated on (run.py --calibrate): LSF-MIG, no knowledge
CALIBRATION_DISCIPLINE, CALIBRATION_CASE = "LSF-MIG", "none"
# "the minimum makespan is 65412 seconds for this experiment" (section 6.2, the malleable one)
PAPER_MINIMUM_MAKESPAN = 65412
TAGGED = 200  # "A small initial number of these jobs (e.g., 200) are tagged" (section 6)


def by_name(name: str) -> Discipline:
    for d in DISCIPLINES:
        if d.name == name:
            return d
    raise KeyError(name)

"""Prompt templates of the LLM operators and the reviewer, overridable from config.

Templates use ``string.Template`` syntax (``$name``; a literal dollar is ``$$``) so code and JSON
in them need no escaping. Everything substituted is deterministic for identical runs — no
absolute paths, timestamps or durations measured during the run — so recorded model calls can be
matched against a later run's requests.
"""

from __future__ import annotations

from collections.abc import Mapping
from string import Template

from podium.code_edit import INSTRUCTIONS as EDIT_INSTRUCTIONS
from podium.errors import ConfigError
from podium.interfaces import Task

SYSTEM = """\
You are an expert machine-learning engineer competing in a Kaggle-style competition. You write \
complete, self-contained Python solutions; each one runs from scratch in a fresh Jupyter kernel.

Rules for every solution:
- The competition data is in ./input/ (read-only). Write scratch files only under ./working/.
- Write the test-set predictions to ./submission/submission.csv, in the exact format of the \
sample submission in ./input/.
- To check that format (columns, ids, row count, missing values; never the score), end your \
code with: from validate_submission import validate; print(validate()) — it returns \
(True, "") or (False, "<reason>"); ./validate_submission.py is provided.
- Hold out part of the training data, evaluate on it with the competition metric ($metric_name, \
$direction), and print the result on its own line, exactly like this:
  VALIDATION_METRIC: <number>
- One execution may run for at most $exec_timeout; stay well below it.
- Installed packages you may use: $packages. Do not install anything.
- Answer with a short plan in prose, then the complete code in one ```python code block.
$rules"""

DRAFT = """\
# Task
$task_description

# Data
$data_preview
$references
# Earlier solutions
$memory
$experience
# Your job
Propose a new solution, different from the earlier ones. Start with a plan of 3-5 sentences \
(model, features, validation), then give the complete code.
$budget
"""

IMPROVE = """\
# Task
$task_description

# Data
$data_preview

# The solution to improve
Plan: $parent_plan

```python
$parent_code
```

Output (end):
```
$parent_output
```
Validation metric: $parent_metric ($direction)
$references
# Earlier solutions
$memory
$experience
# Your job
Propose one specific, atomic change that should improve the validation metric. Explain it in a \
few sentences, then give the complete updated code.
$budget
"""

DEBUG = """\
# Task
$task_description

# Data
$data_preview

# A solution that failed
```python
$parent_code
```

Output (end):
```
$parent_output
```
Why it failed: $bug_reason
$references
# Earlier attempts to fix it
$debug_history
$experience
# Your job
Find the bug and fix it. Explain the fix in a few sentences, then give the complete corrected code.
$budget
"""

CROSSOVER = """\
# Task
$task_description

# Data
$data_preview

# Two solutions to combine
## Solution A
Plan: $parent_plan

```python
$parent_code
```

Output (end):
```
$parent_output
```
Validation metric: $parent_metric ($direction)

## Solution B
Plan: $other_plan

```python
$other_code
```
Validation metric: $other_metric ($direction)
$references
# Earlier solutions
$memory
$experience
# Your job
Merge the best ideas of solutions A and B into one new solution that should beat both on the \
validation metric: e.g. the stronger model with the other's features or preprocessing. Start with \
a plan of 3-5 sentences saying what you take from each, then give the complete code of one \
self-contained program.
$budget
"""

AGENTIC_SYSTEM = """\
You are an expert machine-learning engineer competing in a Kaggle-style competition. You work \
in a live Jupyter kernel, one cell at a time: call the function run_cell with Python code and \
you get back its output and any error. State persists between cells (variables, imports, \
fitted models), so explore the data, try a quick model, read the error and fix it, step by step.

Rules:
- The competition data is in ./input/ (read-only). Write scratch files only under ./working/.
- Before you finish, write the test-set predictions to ./submission/submission.csv, in the \
exact format of the sample submission in ./input/. To check that format (never the score), \
run: from validate_submission import validate; print(validate()).
- Hold out part of the training data, evaluate on it with the competition metric ($metric_name, \
$direction), and print the result on its own line, exactly like this:
  VALIDATION_METRIC: <number>
  The last such line printed is your node's score.
- One cell may run for at most $cell_timeout; the whole node for at most $exec_timeout, in at \
most $max_turns function calls. Keep cells short; print only what you need to read.
- Installed packages you may use: $packages. Do not install anything.
- When the submission is written and the metric printed, call finish with a short plan: what \
the solution does, in 3-5 sentences. The kernel's state at that moment is your solution.
$rules"""

AGENTIC_JOB = """\

# How to work
Do this job in the kernel with run_cell, not by answering with code: the code shown above is \
for reading, nothing of it has run in your kernel yet. Call finish when you are done."""

PLAN_SYSTEM = """\
You are an expert machine-learning engineer competing in a Kaggle-style competition. You plan \
solutions; a coder writes each one from your plan, as a complete Python program that runs from \
scratch in a fresh Jupyter kernel, reads ./input/, writes ./submission/submission.csv, and \
prints its validation score ($metric_name, $direction). One execution may run for at most \
$exec_timeout. Installed packages: $packages.
$rules"""

PLAN_JOB = """\

# How to answer
Do not write the code: a coder implements your plan. Answer with the plan only, concrete \
enough to implement without guessing (data handling, features, model and its key settings, \
validation), in at most 10 sentences."""

CODE_JOB = """\

# The plan to implement
$plan

Implement exactly this plan. Restate it in one or two sentences, then give the complete code."""

EDIT_JOB = """\

# How to answer
Do not repeat the whole program: say what you change and why in a few sentences, then give the \
change as an edit of the code above. """ + EDIT_INSTRUCTIONS.replace("$", "$$")

ENSEMBLE = """\
# Task
$task_description

# Data
$data_preview

# Solutions to ensemble
$solutions
$references
# Earlier solutions
$memory
$experience
# Your job
Write one self-contained program that ensembles these solutions: train each of their models \
as it is, on the same training and validation split, and combine their predictions (e.g. an \
average of probabilities or values, weighted by validation score, or a simple stacker fitted \
on the validation predictions only) into one submission; print the ensemble's validation \
score. Concentrate on how to combine them, not on changing the solutions. Start with a plan of \
3-5 sentences saying how you combine them and why, then give the complete code.
$budget
"""

ABLATE = """\
# Task
$task_description

# Data
$data_preview

# The solution to study
Plan: $parent_plan

```python
$parent_code
```
Validation metric: $parent_metric ($direction)
$references
# Your job
Write an ablation study of this solution, not a new solution: a self-contained program that \
runs the solution's pipeline on the same validation split several times, once as it is and \
once with each of its 2-4 main parts removed or replaced by the simplest stand-in (a group of \
features dropped, a preprocessing step skipped, the model replaced by a simple one), and \
prints each variant's validation score on its own line, exactly like this:
  ABLATION <part>: <number>
with the unchanged solution first as "ABLATION baseline: <number>". Write no submission and \
no VALIDATION_METRIC line. Start with a sentence naming the parts you ablate, then give the \
complete code.
$budget
"""

REFINE = """\
# Task
$task_description

# Data
$data_preview

# The solution to refine
Plan: $parent_plan

```python
$parent_code
```

Output (end):
```
$parent_output
```
Validation metric: $parent_metric ($direction)

# What the analyses of this solution found
$findings
$references
# Earlier solutions
$memory
$experience
# Your job
Improve the one part of the code that the findings show matters most for the validation \
metric, and change nothing else: keep the data split, the seed and every other part as they \
are. Say in a few sentences which part you change and how, then give the change.
$budget
"""

ANALYSIS_REVIEW = """\
# Task
$task_description

# The analysis that ran
```python
$code
```

# Its output (end)
```
$output
```

This program is an analysis of a solution (an ablation study), not a solution: it writes no \
submission and prints no VALIDATION_METRIC. Decide whether it failed (an error, or results \
that cannot be trusted). Summarise its findings in 2-4 sentences with the numbers: which \
parts of the solution matter most for the validation score, and which do not. Give null as \
the metric.
"""

LEAK_CHECK = """\
# Task
$task_description

# The solution that ran
```python
$code
```

# Its output (end)
```
$output
```

It reports a validation score of $metric. Check that this score is honest: the model is \
trained on training rows only, never on the rows it is validated on; preprocessing fitted on \
the validation or test rows does not feed the training; the target (or a column derived from \
it, or the test set's labels) is not among the features. Report with report_leakage: leakage \
true only if you can point to the lines that leak, and quote them as the evidence.
"""

REVIEW_SYSTEM = """\
You review one execution of a solution to a machine-learning competition. Report your verdict by \
calling the function submit_review."""

REVIEW = """\
# Task
$task_description

# The code that ran
```python
$code
```

# Its output (end)
```
$output
```

Decide whether the run has a bug: an error, no predictions written to \
./submission/submission.csv, or a validation that is not trustworthy (e.g. leakage). Summarise \
in 2-3 sentences what was tried and what came out. If the output reports a validation score, \
give it as the metric; otherwise give null.
"""

DEFAULTS: dict[str, str] = {
    "system": SYSTEM,
    "draft": DRAFT,
    "improve": IMPROVE,
    "debug": DEBUG,
    "crossover": CROSSOVER,
    "ensemble": ENSEMBLE,
    "ablate": ABLATE,
    "refine": REFINE,
    "plan_system": PLAN_SYSTEM,
    "plan_job": PLAN_JOB,
    "code_job": CODE_JOB,
    "edit_job": EDIT_JOB,
    "review_system": REVIEW_SYSTEM,
    "review": REVIEW,
    "analysis_review": ANALYSIS_REVIEW,
    "leak_check": LEAK_CHECK,
    "agentic_system": AGENTIC_SYSTEM,
    "agentic_job": AGENTIC_JOB,
}

_COMMON = {
    "task_description",
    "data_preview",
    "memory",
    "references",  # the action's reference nodes; "" without (the prompt is then as it was)
    "experience",  # what the memory recalls (memory.retrieve); "" when off, likewise
    "budget",
    "metric_name",
    "direction",
}
_PARENT = {"parent_plan", "parent_code", "parent_output", "parent_metric"}
_OTHER = {"other_plan", "other_code", "other_metric"}  # a crossover's second parent
PLACEHOLDERS: dict[str, frozenset[str]] = {
    "system": frozenset({"metric_name", "direction", "exec_timeout", "packages", "rules"}),
    "draft": frozenset(_COMMON),
    "improve": frozenset(_COMMON | _PARENT),
    "debug": frozenset(_COMMON | _PARENT | {"bug_reason", "debug_history"}),
    "crossover": frozenset(_COMMON | _PARENT | _OTHER),
    "ensemble": frozenset(_COMMON | {"solutions"}),
    "ablate": frozenset(_COMMON | _PARENT),
    "refine": frozenset(_COMMON | _PARENT | {"findings"}),
    "plan_system": frozenset({"metric_name", "direction", "exec_timeout", "packages", "rules"}),
    "plan_job": frozenset(),
    "code_job": frozenset({"plan"}),
    "edit_job": frozenset(),
    "review_system": frozenset({"metric_name", "direction"}),
    "review": frozenset({"task_description", "code", "output", "metric_name", "direction"}),
    "analysis_review": frozenset(
        {"task_description", "code", "output", "metric_name", "direction"}
    ),
    "leak_check": frozenset({"task_description", "code", "output", "metric"}),
    "agentic_system": frozenset(
        {
            "metric_name",
            "direction",
            "exec_timeout",
            "cell_timeout",
            "max_turns",
            "packages",
            "rules",
        }
    ),
    "agentic_job": frozenset(),
}


def rules_section(task: Task) -> str:
    """The ``$rules`` value: the task's benchmark rules as the system prompt's last section, or
    "" (the prompt is then exactly what it was before rules existed, so old records replay)."""
    if not task.rules or not task.rules.strip():
        return ""
    heading = "The benchmark's rules (they take priority over the task description):"
    return f"\n{heading}\n{task.rules.strip()}\n"


def validate_prompt_overrides(overrides: Mapping[str, str]) -> None:
    """Fail on unknown template names and on placeholders a template cannot be given."""
    for name, text in overrides.items():
        if name not in DEFAULTS:
            raise ConfigError(
                f"prompts.{name}: unknown prompt template",
                hint=f"templates: {', '.join(DEFAULTS)}",
            )
        try:
            used = set(Template(text).get_identifiers())
        except ValueError as exc:
            raise ConfigError(f"prompts.{name}: invalid template: {exc}") from None
        if not Template(text).is_valid():
            raise ConfigError(f"prompts.{name}: invalid template (a lone $ sign? write $$)")
        unknown = used - PLACEHOLDERS[name]
        if unknown:
            raise ConfigError(
                f"prompts.{name}: unknown placeholder(s) {', '.join(sorted(unknown))}",
                hint=f"available: {', '.join(sorted(PLACEHOLDERS[name]))}",
            )


class Prompts:
    """The templates in force for a run: defaults, with the config's overrides on top."""

    def __init__(self, overrides: Mapping[str, str] | None = None) -> None:
        validate_prompt_overrides(overrides or {})
        self.templates = {**DEFAULTS, **(overrides or {})}

    def render(self, name: str, values: Mapping[str, str]) -> str:
        wanted = PLACEHOLDERS[name]
        return Template(self.templates[name]).substitute({k: values.get(k, "") for k in wanted})
